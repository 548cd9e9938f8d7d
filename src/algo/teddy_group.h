/*
 * teddy_group.h - which patterns of a teddy set share a bucket.
 * Header-only and free of library internals, so tests/test_simd.c checks
 * the grouping directly.
 *
 * A start passes bucket b's filter when each of its key bytes j is in
 * S_j(b), the bytes j of the bucket's keys.  If byte c occurs with
 * frequency f(c), about prod_j sum_{c in S_j(b)} f(c) of the starts pass:
 * the bucket's cost.  Keys sorted and cut evenly share their first bytes
 * but pair the others at random: a bucket of "qzab" and "xvyw" passes
 * "qvab", "xzyw" and 14 more that are no key.  Here each key starts as a
 * group of its own (equal keys as one: a start then passes one bucket at
 * most per key, as td_verify_lone() needs), and while there are more
 * groups than buckets, the two whose merge adds the least cost are merged.
 * f comes from rb_rank, halved every 16 ranks (of the scales 8, 16 and 32
 * the best on the bench's text: 64 random 4-byte keys let 304 starts of
 * 256 KiB through sorted, 25 grouped).
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

struct tg_group {
	uint64_t bytes[TG_MAXKEY][4]; /* S_j, as a set of bytes */
	double weight[TG_MAXKEY];     /* sum of f over S_j */
	double cost;		      /* the product of the weights */
	unsigned int parent;	      /* the group it went into, or itself */
	unsigned int id;	      /* its number in the end */
};

/* f(c) for each byte c: 2^-((255 - rank) / 16). */
static inline void tg_freqs(double *f, bool icase)
{
	double scale[256];

	scale[255] = 1;
	for (unsigned int r = 255; r > 0; r--)
		scale[r - 1] = scale[r] * 0.95760328069857365;
	for (unsigned int c = 0; c < 256; c++)
		f[c] = scale[rb_cost((u8)c, icase)];
}

/* The cost of groups @a and @b as one; their weights as one into @w, if
 * not NULL. */
static inline double tg_merged_cost(const struct tg_group *a,
				    const struct tg_group *b, unsigned int keyw,
				    const double *f, double *w)
{
	double cost = 1;

	for (unsigned int j = 0; j < keyw; j++) {
		double wj = a->weight[j] + b->weight[j];

		for (unsigned int k = 0; k < 4; k++)
			for (uint64_t both = a->bytes[j][k] & b->bytes[j][k];
			     both; both &= both - 1)
				wj -= f[64 * k +
					(unsigned int)__builtin_ctzll(both)];
		if (w)
			w[j] = wj;
		cost *= wj;
	}
	return cost;
}

/* What merging groups @a and @b adds to the summed cost. */
static inline double tg_delta(const struct tg_group *a,
			      const struct tg_group *b, unsigned int keyw,
			      const double *f)
{
	return tg_merged_cost(a, b, keyw, f, NULL) - a->cost - b->cost;
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
static inline bool tg_merge(struct tg_group *g, unsigned int n,
			    unsigned int nbuckets, unsigned int keyw,
			    const double *f)
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
			d[i * n + k] = d[k * n + i] =
				tg_delta(&g[i], &g[k], keyw, f);
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
		g[i].cost = tg_merged_cost(&g[i], &g[k], keyw, f, g[i].weight);
		for (unsigned int j = 0; j < keyw; j++)
			for (r = 0; r < 4; r++)
				g[i].bytes[j][r] |= g[k].bytes[j][r];
		g[k].parent = i;
		for (r = 0; r < n; r++)
			d[k * n + r] = d[r * n + k] = INFINITY;
		for (r = 0; r < n; r++) {
			if (g[r].parent != r || r == i)
				continue;
			d[r * n + i] = d[i * n + r] =
				tg_delta(&g[i], &g[r], keyw, f);
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
 * The buckets of @count keys of @keyw (at most TG_MAXKEY) bytes, keys[i]
 * folded and sorted (equal keys next to each other): group[i], from 0 in
 * the order of the groups' first keys, for at most @nbuckets groups.
 * Returns their number, or 0 without memory.
 */
static inline unsigned int tg_group_keys(const u8 *const *keys,
					 unsigned int count, unsigned int keyw,
					 unsigned int nbuckets, bool icase,
					 unsigned int *group)
{
	struct tg_group *g;
	double f[256];
	unsigned int i, n = 0, c;

	for (i = 0; i < count; i++) {
		if (i == 0 || memcmp(keys[i], keys[i - 1], keyw))
			n++;
		group[i] = n - 1;
	}
	if (n <= nbuckets)
		return n;
	tg_freqs(f, icase);
	g = calloc(n, sizeof(*g));
	if (!g)
		return 0;
	for (i = 0; i < count; i++) {
		struct tg_group *x = &g[group[i]];

		if (x->cost)
			continue; /* an equal key's */
		x->cost = 1;
		x->parent = group[i];
		for (unsigned int j = 0; j < keyw; j++) {
			c = keys[i][j];
			x->bytes[j][c / 64] |= 1ull << (c % 64);
			x->weight[j] = f[c];
			x->cost *= f[c];
		}
	}
	if (!tg_merge(g, n, nbuckets, keyw, f)) {
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

#endif
