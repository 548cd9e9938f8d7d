/*
 * tspkt.h - what several of tspkt's modules share: the program's name, the
 * options, and the bookkeeping a packet buffer carries through the stages
 * (skb->cb, and the pkt_info of a datagram in the backlog).  Each module
 * declares its own interface in its own header (README.md says why).
 */
#ifndef TSPKT_H
#define TSPKT_H

#include <textsearch_skb.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "rules.h"

#define TSPKT_PROG "tspkt"

/* A cache line: what the threads write is kept in lines of its own. */
#define TSPKT_LINE 64

/* @count zeroed items of @size bytes that one thread writes, in whole
 * cache lines of their own: two threads' per-datagram counters in one
 * line would make each write wait for the other core (with 100 rules,
 * -j 2 did the work of -j 1 at half the speed on each thread).  NULL
 * without memory or when the bytes overflow; free(). */
static inline void *tspkt_line_calloc(size_t count, size_t size)
{
	size_t n, lines;
	void *p;

	if (size && count > SIZE_MAX / size)
		return NULL;
	n = count * size;
	lines = (n + TSPKT_LINE - 1) & ~(size_t)(TSPKT_LINE - 1);
	if (lines < n)
		return NULL;
	if (!lines)
		lines = TSPKT_LINE;
	p = aligned_alloc(TSPKT_LINE, lines);
	if (p)
		memset(p, 0, lines);
	return p;
}

struct rule_hit;

struct tspkt_opts {
	const char *read_file; /* -r */
	const char *iface;     /* -i */
	char *filter;	       /* BPF words joined, or NULL */
	struct ruleset rules;
	unsigned int workers; /* -j */
	unsigned int backlog; /* --backlog */
	bool drop_on_overrun;
	bool json;
	bool counters_only;	/* -c */
	bool quiet;		/* -q */
	bool line_buffered;	/* -l, and always for -i */
	bool promisc;		/* not with -p */
	int verbose;		/* -v: report malformed frames */
	const char *write_file; /* -w */
	bool write_flows;	/* --write-flows: -w gets whole flows */
	unsigned int snaplen;	/* -s, for -i */
	uint64_t max_matches;	/* -n; 0: no limit */
};

/* Kept in every decoded buffer's cb, so -w can write the frame again. */
struct pkt_cb {
	uint64_t frame;	       /* 1-based frame number in the capture */
	uint32_t caplen;       /* as captured */
	uint32_t wirelen;      /* as on the wire */
	int64_t ts_ns;	       /* capture time (defrag retimes a head) */
	struct pkt_info *info; /* set on the datagram given to the backlog */
	uint8_t owner;	       /* enum pkt_owner: who frees the buffer */
};

/* Where a buffer's memory comes from, so pkt_release() (pool.h) frees it
 * the right way. */
enum pkt_owner {
	PKT_HEAP,     /* alloc_skb(): kfree_skb() */
	PKT_POOL,     /* a pool slot: back to the pool */
	PKT_BORROWED, /* wraps the reader's bytes for one moment: nothing */
};
_Static_assert(sizeof(struct pkt_cb) <= sizeof(((struct sk_buff *)0)->cb),
	       "struct pkt_cb must fit in skb->cb");

static inline struct pkt_cb *pkt_cb(struct sk_buff *skb)
{
	return (struct pkt_cb *)(void *)skb->cb;
}

/* A datagram on its way through the backlog (heap, owned by the worker
 * once dequeued). */
struct pkt_info {
	uint64_t seq;	     /* position in capture order, from 0 */
	uint64_t frame;	     /* the frame that completed it */
	int64_t ts_ns;	     /* and its time */
	unsigned int nfrags; /* 1, or the fragments it was made of */
	struct pkt_meta meta;
	/* TCP stream occurrences its bytes completed (tcpstream.c): a heap
	 * array the classifier reports and frees, or NULL */
	struct rule_hit *shits;
	size_t nshits;
};

#endif
