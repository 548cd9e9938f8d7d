/*
 * rules.h - tspkt's match rules: the kernel's string match (xt_string, and
 * em_text's layers) written in iptables' words, parsed once, prepared once
 * with textsearch_prepare() and then only read, by every worker at once.
 *
 *   class web algo bm string "GET /" from 0 to 1500 layer transport icase
 *   hex-string "|0d 0a 0d 0a|" layer network
 *   ! string "User-Agent" layer payload
 */
#ifndef TSPKT_RULES_H
#define TSPKT_RULES_H

#include <textsearch_skb.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decode.h"

/* Where a rule's from/to offsets start. */
enum rule_layer {
	LAYER_NETWORK,	 /* the IP header (xt_string) */
	LAYER_TRANSPORT, /* the TCP/UDP/... header (em_text) */
	LAYER_PAYLOAD,	 /* after the transport header (ngrep; for
				   ICMP after type, code and checksum) */
	LAYER_STREAM,	 /* a TCP direction's reassembled bytes, from
				   its first (64-bit offsets; tcpstream.c) */
};

#define RULE_TO_DEFAULT 65535u

struct rule {
	char *class_name;	/* label; "ruleN" when not given */
	unsigned int class_idx; /* into ruleset.classes */
	char algo[TS_NAME_MAX + 1];
	bool algo_given; /* else --algo may choose */
	u8 *pattern;
	unsigned int len;
	unsigned int from, to; /* relative to the layer's first byte */
	uint64_t sfrom, sto;   /* the same for LAYER_STREAM */
	enum rule_layer layer;
	bool icase, invert;
	bool skip_empty; /* an empty layer never matches (ngrep) */
	/* in the stream for TCP, in the payload for the rest (the lone
	 * PATTERN, unless --no-stream or inverted) */
	bool tcp_stream;
	struct ts_config *conf; /* read-only once prepared */
	bool in_set;		/* searched with others in a set (sets.c) */
};

struct rule_sets;

struct ruleset {
	struct rule *v;
	size_t n, cap;
	char **classes; /* distinct labels, in order of appearance */
	size_t nclasses;
	/* the string rules searched together, one pass per set (sets.c);
	 * NULL with --per-rule */
	struct rule_sets *sets;
};

/*
 * Parse one rule and append it.  @where names it in messages ("-e 2",
 * "rules.txt:4").  0, or -1 with a message naming the bad token in @err.
 */
int ruleset_add(struct ruleset *rs, const char *text, const char *where,
		char *err, size_t errlen);

/* ngrep's match expression: @pattern searched in the transport payload,
 * class "match", folding case and inverted as asked. */
int ruleset_add_plain(struct ruleset *rs, const char *pattern, bool icase,
		      bool invert, char *err, size_t errlen);

/* One rule per line, blank lines and # comments skipped. */
int ruleset_load_file(struct ruleset *rs, const char *path, char *err,
		      size_t errlen);

/* Prepare every rule (textsearch_prepare), with @algo for rules that name
 * none (NULL: "auto"); -1 with a message on failure (unknown algorithm). */
int ruleset_prepare(struct ruleset *rs, const char *algo, char *err,
		    size_t errlen);

void ruleset_free(struct ruleset *rs);

/* Whether @r is searched in TCP streams (LAYER_STREAM, or tcp_stream). */
static inline bool rule_in_stream(const struct rule *r)
{
	return r->layer == LAYER_STREAM || r->tcp_stream;
}

/* Whether @r is searched in the datagram itself: a stream rule never is,
 * the lone PATTERN unless its stream has it (TCP, within the depth). */
static inline bool rule_in_packet(const struct rule *r,
				  const struct pkt_meta *meta)
{
	return r->layer != LAYER_STREAM && !(r->tcp_stream && meta->in_stream);
}

/*
 * Whether @r selects the datagram @skb (skb->data at the IP header, the
 * transport header found by pkt_decode_transport()).  *@offset is the match
 * offset relative to the rule's layer, or UINT_MAX (inverted rules, and a
 * layer the packet lacks, which never matches).
 */
bool rule_match(const struct rule *r, struct sk_buff *skb,
		const struct pkt_meta *meta, unsigned int *offset);

/* Where @layer starts in @skb (offset from skb->data), as rule_match()
 * counts; false when the datagram has no such layer. */
bool rule_layer_base(enum rule_layer layer, const struct sk_buff *skb,
		     const struct pkt_meta *meta, unsigned long *base);

const char *rule_layer_name(enum rule_layer layer);

#endif
