/*
 * sets.h - the string rules of a layer searched in one pass: Snort's
 * order, every pattern found first, then each rule's own window, case and
 * inversion decided from what was found.
 *
 * ruleset_build_sets() groups the rules that may be searched together:
 * those whose algorithm is "auto" or a set algorithm (an algorithm with
 * sets, such as "ac"), by layer, case mode and algorithm; a group of two
 * or more rules becomes one set config (TS_OVERLAP: every occurrence of
 * every distinct pattern), built once and then only read by every worker.
 * Other rules (kmp, bm, a plugin without sets, a group of one) keep a
 * search of their own, as with --per-rule.
 */
#ifndef TSPKT_SETS_H
#define TSPKT_SETS_H

#include <textsearch_skb.h>

#include <stddef.h>

#include "decode.h"
#include "format.h"
#include "rules.h"

/* Group the prepared rules of @rs into sets; 0, or -1 with a message
 * (out of memory, or the library refused a set). */
int ruleset_build_sets(struct ruleset *rs, char *err, size_t errlen);

/* Release the sets (ruleset_free() does). */
void ruleset_free_sets(struct ruleset *rs);

/* A worker's memory for ruleset_match() (two slots per rule), or NULL
 * when out of memory. */
struct rule_scratch;
struct rule_scratch *ruleset_scratch_new(const struct ruleset *rs);
void ruleset_scratch_free(struct rule_scratch *sc);

/*
 * The rules of @rs that select @skb, in rule order, written to @hits (room
 * for every rule): the same answers and offsets as rule_match() on each
 * rule in turn.  Returns how many.  @scratch: from ruleset_scratch_new(),
 * the calling thread's own.
 */
size_t ruleset_match(const struct ruleset *rs, struct sk_buff *skb,
		     const struct pkt_meta *meta, struct rule_scratch *scratch,
		     struct rule_hit *hits);

#endif
