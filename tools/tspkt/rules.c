/*
 * rules.c - parse, prepare and apply tspkt's string-match rules.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "patterns.h"
#include "rules.h"
#include "sets.h"

static void say(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void say(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

const char *rule_layer_name(enum rule_layer layer)
{
	switch (layer) {
	case LAYER_NETWORK:
		return "network";
	case LAYER_TRANSPORT:
		return "transport";
	case LAYER_PAYLOAD:
		return "payload";
	case LAYER_STREAM:
		return "stream";
	}
	return "?";
}

/* ---- tokens ---------------------------------------------------------------- */

struct token {
	char *text; /* NUL-terminated copy (may hold NULs if hex) */
	size_t len;
	bool quoted;
};

/*
 * The next token of @*s: a bare word up to white space, or a string in
 * double quotes (\" and \\ escaped) or single quotes (nothing escaped).
 * A bare word starting with # ends the rule (a comment).  Returns 1 with
 * a token, 0 at the end, -1 on an unterminated quote.
 */
static int next_token(const char **s, struct token *t, char *err, size_t errlen)
{
	const char *p = *s;
	size_t n = 0;
	char *out;

	while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
		p++;
	if (!*p || *p == '#')
		return 0;
	out = malloc(strlen(p) + 1);
	if (!out) {
		say(err, errlen, "out of memory");
		return -1;
	}
	t->quoted = *p == '"' || *p == '\'';
	if (t->quoted) {
		char q = *p++;

		for (; *p && *p != q; p++) {
			if (q == '"' && *p == '\\' &&
			    (p[1] == '"' || p[1] == '\\'))
				p++;
			out[n++] = *p;
		}
		if (*p != q) {
			free(out);
			say(err, errlen, "unterminated %c-quoted string", q);
			return -1;
		}
		p++;
	} else {
		while (*p && *p != ' ' && *p != '\t' && *p != '\r' &&
		       *p != '\n')
			out[n++] = *p++;
	}
	out[n] = '\0';
	t->text = out;
	t->len = n;
	*s = p;
	return 1;
}

/* iptables' --hex-string, parsed by the syntax tsgrep --hex shares
 * (tools/common/patterns.c); the bytes replace the token's text, which is
 * never shorter. */
static int parse_hex(struct token *t, char *err, size_t errlen)
{
	u8 *bytes;
	unsigned int n;
	char why[160];

	if (pattern_parse_hex(t->text, &bytes, &n, why, sizeof(why))) {
		say(err, errlen, "bad hex-string: %s", why);
		return -1;
	}
	memcpy(t->text, bytes, n);
	t->len = n;
	free(bytes);
	return 0;
}

/* Any 64-bit offset here; past 65535 only for layer stream, which
 * parse_rule() checks once it knows the layer. */
static int parse_offset(const char *key, const char *s, uint64_t *out,
			char *err, size_t errlen)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (!*s || *end || errno || *s == '-' || *s == '+') {
		say(err, errlen,
		    "bad offset '%s' after '%s' (0 to 65535, or to 2^64-1 "
		    "with layer stream)",
		    s, key);
		return -1;
	}
	*out = v;
	return 0;
}

/* ---- parsing ------------------------------------------------------------- */

/* fsm's pattern is a token program (struct ts_fsm_token), which a rule's
 * string never is: the library would only say "invalid argument". */
static int check_algo(const char *algo, char *err, size_t errlen)
{
	if (strcmp(algo, "fsm"))
		return 0;
	say(err, errlen,
	    "algorithm 'fsm' takes tokens (struct ts_fsm_token), "
	    "not a string; tspkt rules take strings: use kmp, bm, rarebyte or "
	    "auto");
	return -1;
}

static int add_class(struct ruleset *rs, struct rule *r)
{
	size_t i;
	char **v;

	for (i = 0; i < rs->nclasses; i++)
		if (!strcmp(rs->classes[i], r->class_name)) {
			r->class_idx = (unsigned int)i;
			return 0;
		}
	v = realloc(rs->classes, (rs->nclasses + 1) * sizeof(*v));
	if (!v)
		return -1;
	rs->classes = v;
	v[rs->nclasses] = r->class_name;
	r->class_idx = (unsigned int)rs->nclasses++;
	return 0;
}

static int append_rule(struct ruleset *rs, struct rule *r, char *err,
		       size_t errlen)
{
	char name[32];

	if (!r->class_name) {
		snprintf(name, sizeof(name), "rule%zu", rs->n + 1);
		r->class_name = strdup(name);
	}
	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? rs->cap * 2 : 8;
		struct rule *v = realloc(rs->v, cap * sizeof(*v));

		if (!v)
			goto nomem;
		rs->v = v;
		rs->cap = cap;
	}
	if (!r->class_name || add_class(rs, r))
		goto nomem;
	rs->v[rs->n++] = *r;
	return 0;
nomem:
	say(err, errlen, "out of memory");
	return -1;
}

static void rule_clear(struct rule *r)
{
	free(r->class_name);
	free(r->pattern);
	if (r->conf)
		textsearch_destroy(r->conf);
	memset(r, 0, sizeof(*r));
}

static void rule_defaults(struct rule *r)
{
	memset(r, 0, sizeof(*r));
	strcpy(r->algo, "auto");
	r->to = RULE_TO_DEFAULT;
	r->sto = UINT64_MAX; /* the lone PATTERN's window in a stream */
	r->layer = LAYER_NETWORK;
}

/* A keyword, with iptables' leading "--" accepted. */
static const char *keyword(const struct token *t)
{
	if (t->quoted)
		return "";
	return strncmp(t->text, "--", 2) ? t->text : t->text + 2;
}

static int parse_rule(const char *text, struct rule *r, char *err,
		      size_t errlen)
{
	struct token t, v;
	const char *s = text;
	bool negate_next = false, to_given = false;
	uint64_t from = 0, to = RULE_TO_DEFAULT;
	int got;

	while ((got = next_token(&s, &t, err, errlen)) == 1) {
		const char *k = keyword(&t);

		if (negate_next && strcmp(k, "string") &&
		    strcmp(k, "hex-string")) {
			say(err, errlen,
			    "'!' must come right before string or "
			    "hex-string, not '%s'",
			    t.text);
			goto bad_t;
		}
		/* words without a value */
		if (!strcmp(k, "icase"))
			r->icase = true;
		else if (!strcmp(k, "invert"))
			r->invert = !r->invert;
		else if (!strcmp(k, "!"))
			negate_next = true;
		if (!strcmp(k, "icase") || !strcmp(k, "invert") ||
		    !strcmp(k, "!")) {
			free(t.text);
			continue;
		}
		if (strcmp(k, "class") && strcmp(k, "algo") &&
		    strcmp(k, "string") && strcmp(k, "hex-string") &&
		    strcmp(k, "from") && strcmp(k, "to") &&
		    strcmp(k, "layer")) {
			say(err, errlen,
			    "unknown word '%s' (expected class, algo, string, "
			    "hex-string, from, to, layer, icase, invert or !)",
			    t.text);
			goto bad_t;
		}
		got = next_token(&s, &v, err, errlen);
		if (got < 0)
			goto bad_t;
		if (got == 0) {
			say(err, errlen, "'%s' needs a value", t.text);
			goto bad_t;
		}
		if (!strcmp(k, "class")) {
			if (!v.len || memchr(v.text, '\0', v.len) ||
			    strpbrk(v.text, " \t\r\n\"\\")) {
				say(err, errlen,
				    "bad class name '%s' (one word "
				    "without quotes or backslashes)",
				    v.text);
				goto bad_tv;
			}
			free(r->class_name);
			r->class_name = v.text;
		} else if (!strcmp(k, "algo")) {
			if (!v.len || v.len > TS_NAME_MAX) {
				say(err, errlen, "bad algorithm name '%s'",
				    v.text);
				goto bad_tv;
			}
			if (check_algo(v.text, err, errlen))
				goto bad_tv;
			memcpy(r->algo, v.text, v.len + 1);
			r->algo_given = true;
			free(v.text);
		} else if (!strcmp(k, "string") || !strcmp(k, "hex-string")) {
			if (r->pattern) {
				say(err, errlen,
				    "a second '%s': one string per "
				    "rule",
				    t.text);
				goto bad_tv;
			}
			if (!strcmp(k, "hex-string") &&
			    parse_hex(&v, err, errlen))
				goto bad_tv;
			if (v.len == 0) {
				say(err, errlen, "empty %s", k);
				goto bad_tv;
			}
			if (negate_next)
				r->invert = !r->invert;
			negate_next = false;
			r->pattern = (u8 *)v.text;
			r->len = (unsigned int)v.len;
		} else if (!strcmp(k, "from") || !strcmp(k, "to")) {
			if (parse_offset(t.text, v.text,
					 !strcmp(k, "from") ? &from : &to, err,
					 errlen))
				goto bad_tv;
			if (!strcmp(k, "to"))
				to_given = true;
			free(v.text);
		} else {
			if (!strcmp(v.text, "network"))
				r->layer = LAYER_NETWORK;
			else if (!strcmp(v.text, "transport"))
				r->layer = LAYER_TRANSPORT;
			else if (!strcmp(v.text, "payload"))
				r->layer = LAYER_PAYLOAD;
			else if (!strcmp(v.text, "stream"))
				r->layer = LAYER_STREAM;
			else {
				say(err, errlen,
				    "unknown layer '%s' (network, "
				    "transport, payload or stream)",
				    v.text);
				goto bad_tv;
			}
			free(v.text);
		}
		free(t.text);
	}
	if (got < 0)
		return -1;
	if (negate_next) {
		say(err, errlen,
		    "'!' at the end: it goes before string or "
		    "hex-string");
		return -1;
	}
	if (!r->pattern) {
		say(err, errlen, "no string or hex-string in the rule");
		return -1;
	}
	if (r->layer == LAYER_STREAM && !to_given)
		to = UINT64_MAX;
	if (r->layer == LAYER_STREAM) {
		if (r->invert) {
			say(err, errlen,
			    "an inverted rule cannot have layer stream (a "
			    "stream lacks a string only once it ends)");
			return -1;
		}
		r->sfrom = from;
		r->sto = to;
	} else if (from > 65535 || to > 65535) {
		say(err, errlen,
		    "offset %llu past 65535 (the kernel's 16-bit from and "
		    "to; only layer stream takes 64-bit offsets)",
		    (unsigned long long)(from > 65535 ? from : to));
		return -1;
	} else {
		r->from = (unsigned int)from;
		r->to = (unsigned int)to;
	}
	if (from > to) {
		say(err, errlen, "from %llu is past to %llu",
		    (unsigned long long)from, (unsigned long long)to);
		return -1;
	}
	return 0;
bad_tv:
	free(v.text);
bad_t:
	free(t.text);
	return -1;
}

int ruleset_add(struct ruleset *rs, const char *text, const char *where,
		char *err, size_t errlen)
{
	struct rule r;
	char why[512];

	rule_defaults(&r);
	if (parse_rule(text, &r, why, sizeof(why)) ||
	    append_rule(rs, &r, why, sizeof(why))) {
		say(err, errlen, "%s: %s", where, why);
		rule_clear(&r);
		return -1;
	}
	return 0;
}

int ruleset_add_plain(struct ruleset *rs, const char *pattern, bool icase,
		      bool invert, char *err, size_t errlen)
{
	struct rule r;

	rule_defaults(&r);
	if (!*pattern) {
		say(err, errlen, "empty PATTERN");
		return -1;
	}
	r.layer = LAYER_PAYLOAD;
	/* ngrep discards packets without payload, even with -v */
	r.skip_empty = true;
	r.icase = icase;
	r.invert = invert;
	r.class_name = strdup("match");
	r.pattern = (u8 *)strdup(pattern);
	r.len = (unsigned int)strlen(pattern);
	if (!r.class_name || !r.pattern || append_rule(rs, &r, err, errlen)) {
		say(err, errlen, "out of memory");
		rule_clear(&r);
		return -1;
	}
	return 0;
}

int ruleset_load_file(struct ruleset *rs, const char *path, char *err,
		      size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *line = NULL, where[4200];
	size_t cap = 0, lineno = 0, before = rs->n;
	ssize_t len;
	int ret = 0;

	if (!f) {
		say(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	while ((len = getline(&line, &cap, f)) >= 0) {
		const char *p = line;
		struct token t;
		int got;

		lineno++;
		if (memchr(line, '\0', (size_t)len)) {
			say(err, errlen, "%s:%zu: NUL byte in a rules file",
			    path, lineno);
			ret = -1;
			break;
		}
		got = next_token(&p, &t, err, errlen);
		if (got == 1)
			free(t.text);
		if (got == 0)
			continue; /* blank or comment */
		snprintf(where, sizeof(where), "%s:%zu", path, lineno);
		if (ruleset_add(rs, line, where, err, errlen)) {
			ret = -1;
			break;
		}
	}
	if (!ret && ferror(f)) {
		say(err, errlen, "%s: %s", path, strerror(errno));
		ret = -1;
	}
	if (!ret && rs->n == before) {
		say(err, errlen, "%s: no rule in the file", path);
		ret = -1;
	}
	free(line);
	fclose(f);
	return ret;
}

int ruleset_prepare(struct ruleset *rs, const char *algo, char *err,
		    size_t errlen)
{
	char why[256];
	size_t i;

	for (i = 0; i < rs->n; i++) {
		struct rule *r = &rs->v[i];
		struct ts_config *c;
		int flags = TS_AUTOLOAD | (r->icase ? TS_IGNORECASE : 0);

		if (algo && !r->algo_given) {
			if (strlen(algo) > TS_NAME_MAX) {
				say(err, errlen, "bad algorithm name '%s'",
				    algo);
				return -1;
			}
			if (check_algo(algo, why, sizeof(why))) {
				say(err, errlen, "--algo %s: %s", algo, why);
				return -1;
			}
			strcpy(r->algo, algo);
		}

		c = textsearch_prepare(r->algo, r->pattern, r->len, GFP_KERNEL,
				       flags);
		if (IS_ERR(c)) {
			int e = (int)PTR_ERR(c);

			if (e == -ENOENT)
				say(err, errlen,
				    "rule %zu (%s): unknown "
				    "algorithm '%s'",
				    i + 1, r->class_name, r->algo);
			else
				say(err, errlen,
				    "rule %zu (%s): algorithm "
				    "'%s': %s",
				    i + 1, r->class_name, r->algo,
				    textsearch_last_error());
			return -1;
		}
		r->conf = c;
	}
	return 0;
}

void ruleset_free(struct ruleset *rs)
{
	size_t i;

	ruleset_free_sets(rs);
	for (i = 0; i < rs->n; i++)
		rule_clear(&rs->v[i]);
	free(rs->v);
	free(rs->classes);
	memset(rs, 0, sizeof(*rs));
}

/* ---- matching ------------------------------------------------------------ */

bool rule_layer_base(enum rule_layer layer, const struct sk_buff *skb,
		     const struct pkt_meta *meta, unsigned long *base)
{
	switch (layer) {
	case LAYER_NETWORK:
		*base = 0;
		break;
	case LAYER_TRANSPORT:
		if (!meta->has_transport ||
		    skb->transport_header == SKB_HEADER_UNSET)
			return false;
		*base = (unsigned long)skb_transport_offset(skb);
		break;
	case LAYER_STREAM:
		return false; /* not a datagram's: tcpstream.c */
	default:
		if (!meta->has_transport)
			return false;
		*base = meta->payload_off;
		/* ngrep's ICMP data starts after type, code and checksum:
		 * the echo id and sequence are payload to it, and to us */
		if ((meta->l4proto == 1 || meta->l4proto == 58) &&
		    skb->transport_header != SKB_HEADER_UNSET)
			*base = (unsigned long)skb_transport_offset(skb) + 4;
		break;
	}
	return true;
}

bool rule_match(const struct rule *r, struct sk_buff *skb,
		const struct pkt_meta *meta, unsigned int *offset)
{
	unsigned long base, from, to;
	unsigned int pos = UINT_MAX;

	*offset = UINT_MAX;
	if (!rule_in_packet(r, meta) ||
	    !rule_layer_base(r->layer, skb, meta, &base))
		return false;
	if (r->skip_empty && base >= skb->len)
		return false;
	/* the window [from, to) of the datagram, cut at its end */
	from = base + r->from;
	to = base + r->to;
	if (to > skb->len)
		to = skb->len;
	if (from < to && !skb_is_nonlinear(skb)) {
		struct ts_state st;

		/* one contiguous block: the same search without the block
		 * reader's bookkeeping, which costs as much as the search
		 * in a small packet */
		pos = textsearch_find_continuous(r->conf, &st, skb->data + from,
						 (unsigned int)(to - from));
	} else if (from < to) {
		pos = skb_find_text(skb, (unsigned int)from, (unsigned int)to,
				    r->conf);
	}
	if (pos != UINT_MAX && !r->invert)
		*offset = r->from + pos;
	return (pos != UINT_MAX) != r->invert;
}
