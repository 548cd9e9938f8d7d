/*
 * sets.c - one pass per layer over a datagram for all the string rules
 * that can share it (sets.h), then each rule decided on its own.
 *
 * A rule selects a datagram when its pattern's first occurrence at or
 * after the rule's "from" ends by its "to" (skb_find_text()'s rule).  The
 * set search reports every occurrence of every distinct pattern in the
 * union of the windows, by start; for a given pattern, the occurrences
 * come by start and so by end.  So the first occurrence of a rule's
 * pattern that starts at or after its "from" decides the rule: a match if
 * it ends by "to", else none, as every later one ends later still.  Once
 * every rule of a set is decided, the search stops.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sets.h"

/* A rule's slot in a worker's scratch: its offset from the layer, or */
#define POS_OPEN UINT_MAX	/* no occurrence from its "from" seen yet */
#define POS_MISS (UINT_MAX - 1) /* the first one ends past its "to" */

struct rule_set {
	enum rule_layer layer;
	struct ts_config *conf;	       /* TS_OVERLAP, a pattern per id */
	unsigned int min_from, max_to; /* the union of the windows */
	unsigned int npat, nrules;
	/* the rules of pattern id k: rules[first[k] .. first[k + 1]) */
	unsigned int *first;
	unsigned int *rules;
};

struct rule_sets {
	struct rule_set *v;
	size_t n;
	/* what a datagram costs besides the sets' searches: the rules
	 * searched on their own, and the inverted rules of the sets (which
	 * select what their search did not find) */
	unsigned int *own, *inv;
	size_t nown, ninv;
};

/* Per worker: every slot POS_OPEN between datagrams; those a datagram
 * decided are listed, so it costs what it found, not every rule. */
struct rule_scratch {
	unsigned int *pos;
	unsigned int *touched;
	size_t ntouched;
};

/* What rules share a set: the layer, the case mode, the algorithm. */
struct group {
	enum rule_layer layer;
	bool icase;
	const char *algo;
	unsigned int n;
};

static bool set_eligible(const struct rule *r)
{
	return r->conf && r->layer != LAYER_STREAM &&
	       (!strcmp(r->algo, "auto") || r->conf->ops->init_set != NULL);
}

static int cmp_rule_pattern(const void *a, const void *b)
{
	const struct rule *x = *(const struct rule *const *)a;
	const struct rule *y = *(const struct rule *const *)b;
	int c;

	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	c = memcmp(x->pattern, y->pattern, x->len);
	if (c)
		return c;
	/* equal patterns: the rules in rule order */
	return x < y ? -1 : x > y;
}

/* Build set @s from the @n rules @members (sorted here). */
static int build_set(struct ruleset *rs, struct rule_set *s,
		     const struct group *g, struct rule **members,
		     unsigned int n, char *err, size_t errlen)
{
	const void **pats = NULL;
	unsigned int *lens = NULL, i, k = 0;
	int flags = TS_AUTOLOAD | TS_OVERLAP | (g->icase ? TS_IGNORECASE : 0);

	qsort(members, n, sizeof(*members), cmp_rule_pattern);
	s->layer = g->layer;
	s->nrules = n;
	s->min_from = UINT_MAX;
	s->max_to = 0;
	s->rules = calloc(n, sizeof(*s->rules));
	s->first = calloc((size_t)n + 1, sizeof(*s->first));
	pats = calloc(n, sizeof(*pats));
	lens = calloc(n, sizeof(*lens));
	if (!s->rules || !s->first || !pats || !lens) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	for (i = 0; i < n; i++) {
		struct rule *r = members[i];

		/* sorted: a distinct pattern starts where the bytes change */
		if (!i || members[i - 1]->len != r->len ||
		    memcmp(members[i - 1]->pattern, r->pattern, r->len)) {
			s->first[k] = i;
			pats[k] = r->pattern;
			lens[k] = r->len;
			k++;
		}
		s->rules[i] = (unsigned int)(r - rs->v);
		if (r->from < s->min_from)
			s->min_from = r->from;
		if (r->to > s->max_to)
			s->max_to = r->to;
	}
	s->npat = k;
	s->first[k] = n;
	s->conf = textsearch_prepare_set(g->algo, pats, lens, k, GFP_KERNEL,
					 flags);
	if (IS_ERR(s->conf)) {
		snprintf(err, errlen,
			 "the %u %s-layer rules of algorithm '%s': %s", n,
			 rule_layer_name(g->layer), g->algo,
			 textsearch_last_error());
		s->conf = NULL;
		goto fail;
	}
	free(pats);
	free(lens);
	for (i = 0; i < n; i++)
		members[i]->in_set = true;
	return 0;
fail:
	free(pats);
	free(lens);
	return -1;
}

int ruleset_build_sets(struct ruleset *rs, char *err, size_t errlen)
{
	size_t cnt = rs->n ? rs->n : 1, ngroups = 0, i, j;
	struct group *groups = calloc(cnt, sizeof(*groups));
	unsigned int *gof = calloc(cnt, sizeof(*gof));
	struct rule **members = calloc(cnt, sizeof(*members));
	struct rule_sets *ss = calloc(1, sizeof(*ss));
	int ret = -1;

	rs->sets = ss;
	if (!groups || !gof || !members || !ss)
		goto nomem;
	ss->own = calloc(cnt, sizeof(*ss->own));
	ss->inv = calloc(cnt, sizeof(*ss->inv));
	if (!ss->own || !ss->inv)
		goto nomem;
	for (i = 0; i < rs->n; i++) {
		struct rule *r = &rs->v[i];

		gof[i] = UINT_MAX;
		if (!set_eligible(r))
			continue;
		for (j = 0; j < ngroups; j++)
			if (groups[j].layer == r->layer &&
			    groups[j].icase == r->icase &&
			    !strcmp(groups[j].algo, r->algo))
				break;
		if (j == ngroups) {
			groups[j].layer = r->layer;
			groups[j].icase = r->icase;
			groups[j].algo = r->algo;
			ngroups++;
		}
		groups[j].n++;
		gof[i] = (unsigned int)j;
	}
	ss->v = calloc(ngroups ? ngroups : 1, sizeof(*ss->v));
	if (!ss->v)
		goto nomem;
	for (j = 0; j < ngroups; j++) {
		unsigned int n = 0;

		/* one rule alone gains nothing: it keeps its own search */
		if (groups[j].n < 2)
			continue;
		for (i = 0; i < rs->n; i++)
			if (gof[i] == j)
				members[n++] = &rs->v[i];
		/* counted before: a half-built set is freed with the rest */
		ss->n++;
		if (build_set(rs, &ss->v[ss->n - 1], &groups[j], members, n,
			      err, errlen))
			goto out;
	}
	for (i = 0; i < rs->n; i++) {
		if (rs->v[i].layer == LAYER_STREAM)
			continue; /* never in a datagram: tcpstream.c */
		if (!rs->v[i].in_set)
			ss->own[ss->nown++] = (unsigned int)i;
		else if (rs->v[i].invert)
			ss->inv[ss->ninv++] = (unsigned int)i;
	}
	ret = 0;
	goto out;
nomem:
	snprintf(err, errlen, "out of memory");
out:
	free(groups);
	free(gof);
	free(members);
	return ret;
}

void ruleset_free_sets(struct ruleset *rs)
{
	struct rule_sets *ss = rs->sets;
	size_t i;

	if (!ss)
		return;
	for (i = 0; i < ss->n; i++) {
		textsearch_destroy(ss->v[i].conf);
		free(ss->v[i].first);
		free(ss->v[i].rules);
	}
	free(ss->v);
	free(ss->own);
	free(ss->inv);
	free(ss);
	rs->sets = NULL;
	for (i = 0; i < rs->n; i++)
		rs->v[i].in_set = false;
}

struct rule_scratch *ruleset_scratch_new(const struct ruleset *rs)
{
	size_t n = rs->n ? rs->n : 1, i;
	struct rule_scratch *sc = tspkt_line_calloc(1, sizeof(*sc));

	if (!sc)
		return NULL;
	/* written for each datagram: in lines of this thread's own */
	sc->pos = tspkt_line_calloc(n, sizeof(*sc->pos));
	sc->touched = tspkt_line_calloc(n, sizeof(*sc->touched));
	if (!sc->pos || !sc->touched) {
		ruleset_scratch_free(sc);
		return NULL;
	}
	for (i = 0; i < n; i++)
		sc->pos[i] = POS_OPEN;
	return sc;
}

void ruleset_scratch_free(struct rule_scratch *sc)
{
	if (!sc)
		return;
	free(sc->pos);
	free(sc->touched);
	free(sc);
}

/* Search set @s over its layer at @base and decide its rules' slots. */
static void search_set(const struct ruleset *rs, const struct rule_set *s,
		       struct sk_buff *skb, unsigned long base,
		       struct rule_scratch *sc)
{
	unsigned long lo = base + s->min_from, hi = base + s->max_to;
	unsigned int p, left = s->nrules, *pos = sc->pos;
	struct ts_state st;

	if (hi > skb->len)
		hi = skb->len;
	if (lo >= hi)
		return;
	if (!skb_is_nonlinear(skb))
		p = textsearch_find_continuous(s->conf, &st, skb->data + lo,
					       (unsigned int)(hi - lo));
	else
		p = skb_find_text_state(skb, (unsigned int)lo, (unsigned int)hi,
					s->conf, &st);
	for (; p != UINT_MAX; p = textsearch_next(s->conf, &st)) {
		unsigned int id = textsearch_match_id(&st);
		unsigned long start = lo + p;
		unsigned long end = start + textsearch_match_len(s->conf, &st);
		unsigned int j;

		for (j = s->first[id]; j < s->first[id + 1]; j++) {
			unsigned int i = s->rules[j];
			const struct rule *r = &rs->v[i];
			unsigned long to = base + r->to;

			if (pos[i] != POS_OPEN || start < base + r->from)
				continue;
			if (to > skb->len)
				to = skb->len;
			pos[i] = end <= to ? (unsigned int)(start - base) :
					     POS_MISS;
			sc->touched[sc->ntouched++] = i;
			if (--left == 0)
				return;
		}
	}
}

static int cmp_hit(const void *a, const void *b)
{
	const struct rule_hit *x = a, *y = b;

	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static void add_hit(struct rule_hit *hits, size_t *n, const struct rule *r,
		    size_t idx, unsigned int off)
{
	hits[*n].rule = r;
	hits[*n].idx = idx;
	hits[*n].offset = off == UINT_MAX ? RULE_HIT_NO_OFFSET : off;
	hits[*n].stream = false;
	(*n)++;
}

size_t ruleset_match(const struct ruleset *rs, struct sk_buff *skb,
		     const struct pkt_meta *meta, struct rule_scratch *sc,
		     struct rule_hit *hits)
{
	const struct rule_sets *ss = rs->sets;
	unsigned long base[LAYER_PAYLOAD + 1];
	bool has[LAYER_PAYLOAD + 1];
	size_t i, n = 0;
	int l;

	if (!ss) {
		/* --per-rule */
		for (i = 0; i < rs->n; i++) {
			unsigned int off;

			if (rule_match(&rs->v[i], skb, meta, &off))
				add_hit(hits, &n, &rs->v[i], i, off);
		}
		return n;
	}
	for (l = 0; l <= LAYER_PAYLOAD; l++)
		has[l] = rule_layer_base((enum rule_layer)l, skb, meta,
					 &base[l]);
	sc->ntouched = 0;
	for (i = 0; i < ss->n; i++)
		if (has[ss->v[i].layer])
			search_set(rs, &ss->v[i], skb, base[ss->v[i].layer],
				   sc);
	/* rule_match()'s order: no layer, or an empty one where that never
	 * matches, selects nothing, inverted or not */
	for (i = 0; i < sc->ntouched; i++) {
		unsigned int k = sc->touched[i];
		const struct rule *r = &rs->v[k];

		if (sc->pos[k] < POS_MISS && !r->invert &&
		    rule_in_packet(r, meta) &&
		    !(r->skip_empty && base[r->layer] >= skb->len))
			add_hit(hits, &n, r, k, sc->pos[k]);
	}
	for (i = 0; i < ss->ninv; i++) {
		unsigned int k = ss->inv[i];
		const struct rule *r = &rs->v[k];

		if (has[r->layer] && sc->pos[k] >= POS_MISS &&
		    rule_in_packet(r, meta) &&
		    !(r->skip_empty && base[r->layer] >= skb->len))
			add_hit(hits, &n, r, k, UINT_MAX);
	}
	for (i = 0; i < sc->ntouched; i++)
		sc->pos[sc->touched[i]] = POS_OPEN;
	for (i = 0; i < ss->nown; i++) {
		unsigned int k = ss->own[i], off;

		if (rule_match(&rs->v[k], skb, meta, &off))
			add_hit(hits, &n, &rs->v[k], k, off);
	}
	/* the report lists the rules in rule order */
	if (n > 1)
		qsort(hits, n, sizeof(*hits), cmp_hit);
	return n;
}
