/*
 * classify.h - classifying datagrams: every rule on each, the report of
 * those that match handed to the output stage a batch at a time.  Worker
 * threads take batches from the backlog; with one worker reading a file,
 * the reader classifies each datagram itself, and threads sharing a file
 * each classify what they read (capture.c).
 */
#ifndef TSPKT_CLASSIFY_H
#define TSPKT_CLASSIFY_H

#include <textsearch_skb.h>

#include <stdalign.h>

#include "output.h"
#include "pool.h"
#include "tspkt.h"

struct backlog;
struct rule_scratch;

/* Datagrams a worker takes from the backlog at once, and results it hands
 * the output stage at once. */
#define CLASSIFY_BATCH 64u

/* Batches a worker may have waiting in the backlog before a reader that
 * classifies too does the next batch itself (capture.c); the output
 * stage keeps results that far ahead of the oldest (output.c). */
#define CLASSIFY_AHEAD 8u

/* Datagrams a thread decodes in its turn at a file that the -j threads
 * take turns reading (capture.c), and classifies after it: the output
 * stage keeps results a turn a thread ahead of the oldest (output.c). */
#define CLASSIFY_TURN 2048u

struct classify {
	struct backlog *backlog;
	const struct tspkt_opts *opts;
	struct output *out;
	struct pkt_pool *pool;
};

/* One classifying thread's state. */
struct classifier {
	/* a thread's own: in lines of their own (tspkt_line_calloc()) */
	alignas(TSPKT_LINE) const struct classify *cl;
	struct rule_hit *hits;	      /* NULL: out of memory, matches nothing */
	struct rule_scratch *scratch; /* ruleset_match()'s, this thread's */
	struct pkt_cache cache;
	struct pkt_result res[CLASSIFY_BATCH];
	unsigned int nres;
};

void classifier_init(struct classifier *k, const struct classify *cl);
/* Hands over what is pending and gives back what is held. */
void classifier_done(struct classifier *k);

/* Classify @skb (its cb's info set) and release it; its result waits in
 * @k until classifier_flush() or a full batch, but a match is handed over
 * at once, so -n and -q stop the reader in time. */
void classify_one(struct classifier *k, struct sk_buff *skb);
void classifier_flush(struct classifier *k);

/* A worker thread (@arg a struct classifier): classifies until the
 * backlog is closed and empty. */
void *classify_worker(void *arg);

#endif
