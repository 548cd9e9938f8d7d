/*
 * format.h - the report of a matching datagram: the text line or the
 * --json object of tspkt(1), OUTPUT.
 */
#ifndef TSPKT_FORMAT_H
#define TSPKT_FORMAT_H

#include <textsearch_skb.h>

#include <stdbool.h>
#include <stddef.h>

#include "rules.h"
#include "tspkt.h"

/* One rule that selected the datagram. */
struct rule_hit {
	const struct rule *rule;
	size_t idx;	     /* in the ruleset, from 0 */
	unsigned int offset; /* from its layer; UINT_MAX for an inverted
				   rule */
};

/*
 * The report of the datagram @skb (described by @info) that @hits, in rule
 * order, selected: a text line, or a JSON object with @json, ending in a
 * newline.  A heap string of *@len bytes, or NULL when out of memory.
 */
char *format_match(bool json, const struct sk_buff *skb,
		   const struct pkt_info *info, const struct rule_hit *hits,
		   size_t nhits, size_t *len);

#endif
