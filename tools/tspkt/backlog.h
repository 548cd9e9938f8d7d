/*
 * backlog.h - a netif_rx()-style receive queue between the capture thread
 * and the classifying workers: bounded, FIFO, plain tail drop.  Packets
 * come and go one at a time or in batches (as NAPI polls them): a batch
 * costs one lock and at most one wake-up, and is counted packet by packet.
 */
#ifndef TSPKT_BACKLOG_H
#define TSPKT_BACKLOG_H

#include <textsearch_skb.h>

#include <stdbool.h>
#include <stdint.h>

#define NETIF_RX_SUCCESS 0
#define NETIF_RX_DROP 1

#define BACKLOG_DEFAULT_MAX 1000u /* the kernel's netdev_max_backlog */

struct backlog_stats {
	uint64_t received;	/* netif_rx() calls */
	uint64_t queued;	/* accepted */
	uint64_t dropped;	/* refused: the backlog was full */
	uint64_t dequeued;	/* handed to a worker */
	unsigned int max_depth; /* most packets ever waiting */
};

struct backlog;

/*
 * A backlog of at most @max_len packets (> 0).  @wait_when_full: netif_rx()
 * waits for room instead of dropping (reading a file); otherwise a full
 * backlog drops (live capture, or --drop-on-overrun).  NULL on ENOMEM.
 */
struct backlog *backlog_new(unsigned int max_len, bool wait_when_full);

/* Frees packets still queued (with the release function, if set). */
void backlog_free(struct backlog *b);

/* How the backlog frees a packet it drops or still holds when freed:
 * kfree_skb() unless told otherwise (packets from a pool).  Set before
 * use. */
void backlog_set_release(struct backlog *b,
			 void (*release)(struct sk_buff *skb, void *arg),
			 void *arg);

/*
 * Hand @skb over.  NETIF_RX_SUCCESS: queued; NETIF_RX_DROP: the backlog
 * was full (or closed) and @skb was freed, as the kernel frees it.
 */
int netif_rx(struct backlog *b, struct sk_buff *skb);

/*
 * Hand @n packets over at once (none NULL; @n at most the backlog's length
 * in wait mode).  In wait mode, waits until all of them fit; otherwise
 * queues as many as there is room for, in order, and drops the rest (a
 * closed backlog drops all).  Returns how many were queued: the first
 * ones; the dropped @skbs[return..n) are counted but left to the caller.
 */
unsigned int netif_rx_list(struct backlog *b, struct sk_buff **skbs,
			   unsigned int n);

/* The oldest packet, waiting for one; NULL once closed and empty. */
struct sk_buff *backlog_dequeue(struct backlog *b);

/* Up to @max of the oldest packets, in order, waiting for one; 0 once
 * closed and empty. */
unsigned int backlog_dequeue_list(struct backlog *b, struct sk_buff **skbs,
				  unsigned int max);

/* Packets waiting right now. */
unsigned int backlog_depth(struct backlog *b);

/* @n packets that went straight to a worker without waiting (the reader
 * classifying them itself): counted as received, queued and dequeued. */
void backlog_count_direct(struct backlog *b, unsigned int n);

/* No more packets: wakes every waiting worker. */
void backlog_close(struct backlog *b);

void backlog_get_stats(struct backlog *b, struct backlog_stats *stats);

#endif
