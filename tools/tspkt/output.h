/*
 * output.h - the output stage: results back in capture order, whatever the
 * number of workers; stdout, the -w capture and the per-class counters.
 */
#ifndef TSPKT_OUTPUT_H
#define TSPKT_OUTPUT_H

#include <textsearch_skb.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flow.h"
#include "tspkt.h"

struct output;

/* What a worker found in one datagram. */
struct pkt_result {
	uint64_t seq;
	char *text; /* the line(s) to print, or NULL */
	size_t text_len;
	struct sk_buff *skb; /* kept for -w when it matched, or NULL */
	uint8_t *classes;    /* per class: matched (when matched) */
	bool matched;
	/* not a datagram: a TCP stream's record (tcpstream.h), a match
	 * decided at a flow's end or a --json gap or flow line */
	bool record;
	/* --write-flows: the flow of a match (TCP and UDP) */
	bool has_key;
	struct flow_key key;
	/* the next @more sequence numbers too: datagrams that matched
	 * nothing either, one result for the run (classify_one()) */
	uint32_t more;
};

/* The sequence numbers @r stands for: its own and the run's. */
static inline uint64_t pkt_result_span(const struct pkt_result *r)
{
	return 1 + (uint64_t)r->more;
}

/* @linktype/@snaplen: the capture's, for -w.  NULL with a message in
 * @err on failure. */
struct output *output_new(const struct tspkt_opts *o, size_t nclasses,
			  int linktype, unsigned int snaplen, char *err,
			  size_t errlen);

/* Hand over a result (its contents are taken); printed once every earlier
 * sequence number is.  Waits while it is too far ahead of the oldest. */
void output_submit(struct output *out, struct pkt_result *r);

/* output_submit() for @n results under one lock (a worker's batch). */
void output_submit_list(struct output *out, struct pkt_result *r, size_t n);

/* --write-flows: the flows of the matches so far (capture order, up to
 * -n), which capture_write_flows() writes once the capture is read. */
const struct flow_keyset *output_matched_flows(struct output *out);

/* -n / -q reached: the capture loop stops reading. */
bool output_should_stop(struct output *out);

/* Flush stdout and the -w file; 0, or -1 with a message printed. */
int output_finish(struct output *out);

uint64_t output_classified(struct output *out);
uint64_t output_matched(struct output *out);
uint64_t output_class_count(struct output *out, size_t idx);

void output_free(struct output *out);

#endif
