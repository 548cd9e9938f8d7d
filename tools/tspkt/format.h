/*
 * format.h - the report of a matching datagram: the text line or the
 * --json object of tspkt(1), OUTPUT.
 */
#ifndef TSPKT_FORMAT_H
#define TSPKT_FORMAT_H

#include <textsearch_skb.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rules.h"
#include "tspkt.h"

/* One rule that selected the datagram, or one occurrence of a stream
 * rule's string that it completed. */
struct rule_hit {
	const struct rule *rule;
	size_t idx;	 /* in the ruleset, from 0 */
	uint64_t offset; /* from its layer; RULE_HIT_NO_OFFSET for an
			    inverted rule */
	bool stream;	 /* found in the TCP stream (layer "stream") */
};
#define RULE_HIT_NO_OFFSET UINT64_MAX

/*
 * The report of the datagram @skb (described by @info) that @hits, in rule
 * order, selected: a text line, or a JSON object with @json, ending in a
 * newline.  A heap string of *@len bytes, or NULL when out of memory.
 */
char *format_match(bool json, const struct sk_buff *skb,
		   const struct pkt_info *info, const struct rule_hit *hits,
		   size_t nhits, size_t *len);

/* A line for stream occurrences decided away from a datagram (a flow's
 * end): as format_match() without the datagram's length, @info giving the
 * direction's addresses and its last datagram's frame and time. */
char *format_stream_match(bool json, const struct pkt_info *info,
			  const struct rule_hit *hits, size_t nhits,
			  size_t *len);

/* --json records: a gap in a TCP direction (@m its addresses), a flow
 * that ended (@m from its first packet's sender). */
char *format_gap(const struct pkt_meta *m, int64_t ts_ns, uint64_t frame,
		 uint64_t offset, uint64_t length, size_t *len);
char *format_flow(const struct pkt_meta *m, int64_t ts_ns, uint64_t packets,
		  uint64_t bytes, const char *state, const char *reason,
		  size_t *len);

#endif
