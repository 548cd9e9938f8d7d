/*
 * teddy_group.h - which patterns of a teddy set share a bucket.
 * Header-only and free of library internals, so tests/test_simd.c checks
 * the grouping directly.
 *
 * A start passes bucket b's filter when each of its key bytes j is in
 * S_j(b), the bytes that the tables pass at position j.  With VBMI's
 * tables that is the bytes j of the bucket's keys; with the nibble tables,
 * every byte whose high nibble is one of theirs and whose low nibble is
 * one of theirs.  If byte c occurs with frequency f(c), about
 * prod_j sum_{c in S_j(b)} f(c) of the starts pass, and each is verified
 * against the bucket's keys: the bucket's cost is that fraction times the
 * verify's (TG_VERIFY).
 * Keys sorted and cut evenly share their first bytes but pair the others
 * at random: a bucket of "qzab" and "xvyw" passes "qvab", "xzyw" and 14
 * more that are no key.  Here each key starts as a group of its own
 * (equal keys as one: a start then passes one bucket at most per key, as
 * td_verify_lone() needs), and while there are more groups than buckets,
 * the two whose merge adds the least cost are merged.  f comes from
 * rb_rank, halved every 16 ranks (of the scales 8, 16 and 32 the best on
 * the bench's text: 64 random 4-byte keys let 304 starts of 256 KiB
 * through VBMI's tables sorted, 25 grouped).
 */
#ifndef TS_TEDDY_GROUP_H
#define TS_TEDDY_GROUP_H

#include "rarebyte_choose.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TG_MAXKEY 4u
/* A start that passes a bucket costs its verify, about 1 + keys / 4
 * times a lone key's: the loop over the bucket's patterns (64 present
 * literals, in cache: 2.9x hs without this, 3.2x with) */
#define TG_VERIFY 4.0

/* How a set of keys is filtered, and how common each byte is. */
struct tg_model {
	double f[256];
	unsigned int keyw;
	bool icase;   /* both cases of a letter pass */
	bool nibbles; /* S_j by nibbles, not bytes */
};

struct tg_group {
	uint64_t bytes[TG_MAXKEY][4];	       /* the keys' bytes j, as a set */
	uint16_t lo[TG_MAXKEY], hi[TG_MAXKEY]; /* and their nibbles */
	double weight[TG_MAXKEY];	       /* sum of f over S_j */
	double cost;	     /* the product of the weights, by the verify's */
	unsigned int keys;   /* how many distinct keys it holds */
	unsigned int parent; /* the group it went into, or itself */
	unsigned int id;     /* its number in the end */
};

/* @m for keys of @keyw bytes, folded by TS_IGNORECASE if @icase, filtered
 * by nibbles if @nibbles: f(c) = 2^-((255 - rank) / 16).  By bytes, a
 * letter's f stands for both its cases; by nibbles, both are in the sets. */
static inline void tg_model_init(struct tg_model *m, unsigned int keyw,
				 bool icase, bool nibbles)
{
	double scale[256];

	scale[255] = 1;
	for (unsigned int r = 255; r > 0; r--)
		scale[r - 1] = scale[r] * 0.95760328069857365;
	for (unsigned int c = 0; c < 256; c++)
		m->f[c] = scale[rb_cost((u8)c, icase && !nibbles)];
	m->keyw = keyw;
	m->icase = icase;
	m->nibbles = nibbles;
}

/* The sum of f over the bytes of high nibble in @hi, low in @lo. */
static inline double tg_nibble_weight(const struct tg_model *m, unsigned int lo,
				      unsigned int hi)
{
	double w = 0;

	for (; hi; hi &= hi - 1)
		for (unsigned int l = lo; l; l &= l - 1)
			w += m->f[16 * (unsigned int)__builtin_ctz(hi) +
				  (unsigned int)__builtin_ctz(l)];
	return w;
}

/* The weight of position @j of groups @a and @b as one. */
static inline double tg_merged_weight(const struct tg_model *m,
				      const struct tg_group *a,
				      const struct tg_group *b, unsigned int j)
{
	double w;

	if (m->nibbles)
		return tg_nibble_weight(m, a->lo[j] | b->lo[j],
					a->hi[j] | b->hi[j]);
	w = a->weight[j] + b->weight[j];
	for (unsigned int k = 0; k < 4; k++)
		for (uint64_t both = a->bytes[j][k] & b->bytes[j][k]; both;
		     both &= both - 1)
			w -= m->f[64 * k + (unsigned int)__builtin_ctzll(both)];
	return w;
}

/* What a group of @keys keys costs per start that passes its filter: the
 * verify of each key, against the filter's own cost of 1. */
static inline double tg_verify_factor(unsigned int keys)
{
	return 1 + keys / TG_VERIFY;
}

/* The cost of groups @a and @b as one; their weights as one into @w, if
 * not NULL. */
static inline double tg_merged_cost(const struct tg_model *m,
				    const struct tg_group *a,
				    const struct tg_group *b, double *w)
{
	double cost = tg_verify_factor(a->keys + b->keys);

	for (unsigned int j = 0; j < m->keyw; j++) {
		double wj = tg_merged_weight(m, a, b, j);

		if (w)
			w[j] = wj;
		cost *= wj;
	}
	return cost;
}

/* What merging groups @a and @b adds to the summed cost. */
static inline double tg_delta(const struct tg_model *m,
			      const struct tg_group *a,
			      const struct tg_group *b)
{
	return tg_merged_cost(m, a, b, NULL) - a->cost - b->cost;
}

/* The group whose merge with group @i adds least, by row @i of @d
 * (infinite for itself and for the groups merged away). */
static inline unsigned int tg_best(const double *d, unsigned int n,
				   unsigned int i)
{
	unsigned int best = 0;

	for (unsigned int k = 1; k < n; k++)
		if (d[i * n + k] < d[i * n + best])
			best = k;
	return best;
}

/*
 * @n groups, one per distinct key, merged greedily into @nbuckets: each
 * group's parent set to the group it ended in.  False without memory.
 * d holds what each merge adds; low[r] is at most row r's least entry
 * (its best partner's, once: a merge changes one entry of a row, and only
 * a lower one is noted at once), so the row of the least low[r] that
 * still holds is the cheapest merge, and only that row is scanned anew.
 */
static inline bool tg_merge(const struct tg_model *m, struct tg_group *g,
			    unsigned int n, unsigned int nbuckets)
{
	double *d = malloc((size_t)n * n * sizeof(*d));
	double *low = malloc(n * sizeof(*low));
	unsigned int *best = malloc(n * sizeof(*best));
	unsigned int i, k, r, left = n;

	if (!d || !low || !best) {
		free(d);
		free(low);
		free(best);
		return false;
	}
	for (i = 0; i < n; i++) {
		d[i * n + i] = INFINITY;
		for (k = i + 1; k < n; k++)
			d[i * n + k] = d[k * n + i] = tg_delta(m, &g[i], &g[k]);
	}
	for (i = 0; i < n; i++) {
		best[i] = tg_best(d, n, i);
		low[i] = d[i * n + best[i]];
	}
	for (; left > nbuckets; left--) {
		for (;;) {
			for (i = n, r = 0; r < n; r++)
				if (g[r].parent == r &&
				    (i == n || low[r] < low[i]))
					i = r;
			k = best[i];
			if (d[i * n + k] == low[i])
				break;
			best[i] = tg_best(d, n, i);
			low[i] = d[i * n + best[i]];
		}
		/* the lower group takes the other */
		if (k < i) {
			r = i;
			i = k;
			k = r;
		}
		g[i].cost = tg_merged_cost(m, &g[i], &g[k], g[i].weight);
		g[i].keys += g[k].keys;
		for (unsigned int j = 0; j < m->keyw; j++) {
			for (r = 0; r < 4; r++)
				g[i].bytes[j][r] |= g[k].bytes[j][r];
			g[i].lo[j] |= g[k].lo[j];
			g[i].hi[j] |= g[k].hi[j];
		}
		g[k].parent = i;
		for (r = 0; r < n; r++)
			d[k * n + r] = d[r * n + k] = INFINITY;
		for (r = 0; r < n; r++) {
			if (g[r].parent != r || r == i)
				continue;
			d[r * n + i] = d[i * n + r] = tg_delta(m, &g[i], &g[r]);
			if (d[r * n + i] < low[r]) {
				best[r] = i;
				low[r] = d[r * n + i];
			}
		}
		best[i] = tg_best(d, n, i);
		low[i] = d[i * n + best[i]];
	}
	free(d);
	free(low);
	free(best);
	return true;
}

/*
 * The buckets of @count keys of m->keyw bytes, keys[i] folded and sorted
 * (equal keys next to each other): group[i], from 0 in the order of the
 * groups' first keys, for at most @nbuckets groups.  Returns their
 * number, or 0 without memory.
 */
static inline unsigned int
tg_group_keys(const struct tg_model *m, const u8 *const *keys,
	      unsigned int count, unsigned int nbuckets, unsigned int *group)
{
	struct tg_group *g;
	unsigned int i, n = 0, c;

	for (i = 0; i < count; i++) {
		if (i == 0 || memcmp(keys[i], keys[i - 1], m->keyw))
			n++;
		group[i] = n - 1;
	}
	if (n <= nbuckets)
		return n;
	g = calloc(n, sizeof(*g));
	if (!g)
		return 0;
	for (i = 0; i < count; i++) {
		struct tg_group *x = &g[group[i]];

		if (x->keys)
			continue; /* an equal key's */
		x->keys = 1;
		x->cost = tg_verify_factor(x->keys);
		x->parent = group[i];
		for (unsigned int j = 0; j < m->keyw; j++) {
			c = keys[i][j];
			x->bytes[j][c / 64] |= 1ull << (c % 64);
			x->lo[j] = (uint16_t)(1u << (c & 15));
			x->hi[j] = (uint16_t)(1u << (c >> 4));
			if (m->icase && rb_is_folding_letter((u8)c))
				x->hi[j] |= (uint16_t)(1u << ((c - 0x20) >> 4));
			x->weight[j] = m->nibbles ?
					       tg_nibble_weight(m, x->lo[j],
								x->hi[j]) :
					       m->f[c];
			x->cost *= x->weight[j];
		}
	}
	if (!tg_merge(m, g, n, nbuckets)) {
		free(g);
		return 0;
	}
	/* numbered anew, in the order of their first keys */
	for (i = 0; i < n; i++)
		g[i].id = UINT_MAX;
	for (i = 0, c = 0; i < count; i++) {
		unsigned int root = group[i];

		while (g[root].parent != root)
			root = g[root].parent;
		if (g[root].id == UINT_MAX)
			g[root].id = c++;
		group[i] = g[root].id;
	}
	free(g);
	return c;
}

/* An offset's modelled cost must be under this share of offset 0's for
 * the keys to move there */
#define TG_OFFSET_GAIN 0.75

/*
 * Where in @count folded patterns (all of at least m->keyw + @maxoff
 * bytes) their keys should lie, for sets small enough that each key may
 * have a bucket to itself: the offset o from 0 to @maxoff whose keys
 * pats[i][o, o + keyw) pass least of the text, by the sum over the
 * patterns of prod_j f(pats[i][o + j]).  Text cut into patterns often
 * begins them with common bytes ("unlock(", "the ") whose later bytes
 * are rarer.  Offset 0 unless another is clearly better.
 */
static inline unsigned int tg_key_offset(const struct tg_model *m,
					 const u8 *const *pats,
					 unsigned int count,
					 unsigned int maxoff)
{
	double first = 0, best = 0;
	unsigned int at = 0;

	for (unsigned int o = 0; o <= maxoff; o++) {
		double sum = 0;

		for (unsigned int i = 0; i < count; i++) {
			double w = 1;

			for (unsigned int j = 0; j < m->keyw; j++)
				w *= m->f[pats[i][o + j]];
			sum += w;
		}
		if (o == 0)
			first = sum;
		if (o == 0 || sum < best)
			best = sum, at = o;
	}
	return best < first * TG_OFFSET_GAIN ? at : 0;
}

#endif
