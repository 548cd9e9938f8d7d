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

/* What rules share a set: the layer, the case mode, the algorithm. */
struct group {
	enum rule_layer layer;
	bool icase;
	const char *algo;
	unsigned int n;
};

static bool set_eligible(const struct rule *r)
{
	return r->conf &&
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
	for (i = 0; i < n; i++) {
		members[i]->in_set = true;
		members[i]->set = (unsigned int)(s - rs->sets);
	}
	return 0;
fail:
	free(pats);
	free(lens);
	return -1;
}

int ruleset_build_sets(struct ruleset *rs, char *err, size_t errlen)
{
	struct group *groups = calloc(rs->n ? rs->n : 1, sizeof(*groups));
	unsigned int *gof = calloc(rs->n ? rs->n : 1, sizeof(*gof));
	struct rule **members = calloc(rs->n ? rs->n : 1, sizeof(*members));
	size_t ngroups = 0, i, j;
	int ret = -1;

	if (!groups || !gof || !members) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
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
	rs->sets = calloc(ngroups ? ngroups : 1, sizeof(*rs->sets));
	if (!rs->sets) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (j = 0; j < ngroups; j++) {
		unsigned int n = 0;

		/* one rule alone gains nothing: it keeps its own search */
		if (groups[j].n < 2)
			continue;
		for (i = 0; i < rs->n; i++)
			if (gof[i] == j)
				members[n++] = &rs->v[i];
		if (build_set(rs, &rs->sets[rs->nsets], &groups[j], members, n,
			      err, errlen)) {
			/* freed by ruleset_free_sets() with the others */
			rs->nsets++;
			goto out;
		}
		rs->nsets++;
	}
	ret = 0;
out:
	free(groups);
	free(gof);
	free(members);
	return ret;
}

void ruleset_free_sets(struct ruleset *rs)
{
	size_t i;

	for (i = 0; i < rs->nsets; i++) {
		textsearch_destroy(rs->sets[i].conf);
		free(rs->sets[i].first);
		free(rs->sets[i].rules);
	}
	free(rs->sets);
	rs->sets = NULL;
	rs->nsets = 0;
	for (i = 0; i < rs->n; i++)
		rs->v[i].in_set = false;
}

unsigned int *ruleset_scratch_new(const struct ruleset *rs)
{
	return calloc(rs->n ? rs->n : 1, sizeof(unsigned int));
}

/* Search set @s over its layer at @base and decide its rules' slots. */
static void search_set(const struct ruleset *rs, const struct rule_set *s,
		       struct sk_buff *skb, unsigned long base,
		       unsigned int *pos)
{
	unsigned long lo = base + s->min_from, hi = base + s->max_to;
	unsigned int p, left = s->nrules;
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
			if (--left == 0)
				return;
		}
	}
}

size_t ruleset_match(const struct ruleset *rs, struct sk_buff *skb,
		     const struct pkt_meta *meta, unsigned int *pos,
		     struct rule_hit *hits)
{
	unsigned long base[LAYER_PAYLOAD + 1];
	bool has[LAYER_PAYLOAD + 1];
	size_t i, n = 0;
	int l;

	for (l = 0; l <= LAYER_PAYLOAD; l++)
		has[l] = rule_layer_base((enum rule_layer)l, skb, meta,
					 &base[l]);
	for (i = 0; i < rs->nsets; i++) {
		const struct rule_set *s = &rs->sets[i];
		unsigned int j;

		for (j = 0; j < s->nrules; j++)
			pos[s->rules[j]] = POS_OPEN;
		if (has[s->layer])
			search_set(rs, s, skb, base[s->layer], pos);
	}
	for (i = 0; i < rs->n; i++) {
		const struct rule *r = &rs->v[i];
		unsigned int off = UINT_MAX;
		bool found;

		if (!r->in_set) {
			if (!rule_match(r, skb, meta, &off))
				continue;
		} else {
			/* rule_match()'s order: no layer, or an empty one
			 * where that never matches, selects nothing */
			if (!has[r->layer] ||
			    (r->skip_empty && base[r->layer] >= skb->len))
				continue;
			found = pos[i] < POS_MISS;
			if (found == r->invert)
				continue;
			if (found)
				off = pos[i];
		}
		hits[n].rule = r;
		hits[n].idx = i;
		hits[n].offset = off;
		n++;
	}
	return n;
}
