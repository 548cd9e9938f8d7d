/*
 * backlog.h - a netif_rx()-style receive queue between the capture thread
 * and the classifying workers: bounded, FIFO, plain tail drop.
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

/* Frees packets still queued. */
void backlog_free(struct backlog *b);

/*
 * Hand @skb over.  NETIF_RX_SUCCESS: queued; NETIF_RX_DROP: the backlog
 * was full (or closed) and @skb was freed, as the kernel frees it.
 */
int netif_rx(struct backlog *b, struct sk_buff *skb);

/* The oldest packet, waiting for one; NULL once closed and empty. */
struct sk_buff *backlog_dequeue(struct backlog *b);

/* No more packets: wakes every waiting worker. */
void backlog_close(struct backlog *b);

void backlog_get_stats(struct backlog *b, struct backlog_stats *stats);

#endif
