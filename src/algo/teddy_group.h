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

/* The cost of groups @a and @b as one. */
static inline double tg_merged_cost(const struct tg_group *a,
				    const struct tg_group *b, unsigned int keyw,
				    const double *f)
{
	double cost = 1;

	for (unsigned int j = 0; j < keyw; j++) {
		double w = a->weight[j] + b->weight[j];

		for (unsigned int k = 0; k < 4; k++)
			for (uint64_t both = a->bytes[j][k] & b->bytes[j][k];
			     both; both &= both - 1)
				w -= f[64 * k +
				       (unsigned int)__builtin_ctzll(both)];
		cost *= w;
	}
	return cost;
}

/* What merging groups @a and @b adds to the summed cost. */
static inline double tg_delta(const struct tg_group *a,
			      const struct tg_group *b, unsigned int keyw,
			      const double *f)
{
	return tg_merged_cost(a, b, keyw, f) - a->cost - b->cost;
}

/* The live group other than @i whose merge with it adds least (@n if
 * none). */
static inline unsigned int tg_best(const double *d, const bool *live,
				   unsigned int n, unsigned int i)
{
	unsigned int best = n;

	for (unsigned int k = 0; k < n; k++)
		if (k != i && live[k] &&
		    (best == n || d[i * n + k] < d[i * n + best]))
			best = k;
	return best;
}

/* @n groups, one per distinct key, merged greedily into @nbuckets: each
 * group's parent set to the group it ended in.  False without memory. */
static inline bool tg_merge(struct tg_group *g, unsigned int n,
			    unsigned int nbuckets, unsigned int keyw,
			    const double *f)
{
	double *d = malloc((size_t)n * n * sizeof(*d));
	unsigned int *best = malloc(n * sizeof(*best));
	bool *live = malloc(n * sizeof(*live));
	unsigned int i, k, r, left = n;

	if (!d || !best || !live) {
		free(d);
		free(best);
		free(live);
		return false;
	}
	for (i = 0; i < n; i++) {
		live[i] = true;
		for (k = i + 1; k < n; k++)
			d[i * n + k] = d[k * n + i] =
				tg_delta(&g[i], &g[k], keyw, f);
	}
	for (i = 0; i < n; i++)
		best[i] = tg_best(d, live, n, i);
	while (left > nbuckets) {
		/* the cheapest merge; the lower group takes the other */
		for (i = n, r = 0; r < n; r++)
			if (live[r] &&
			    (i == n || d[r * n + best[r]] < d[i * n + best[i]]))
				i = r;
		k = best[i];
		if (k < i) {
			r = i;
			i = k;
			k = r;
		}
		for (unsigned int j = 0; j < keyw; j++) {
			for (r = 0; r < 4; r++)
				g[i].bytes[j][r] |= g[k].bytes[j][r];
		}
		g[i].cost = 1;
		for (unsigned int j = 0; j < keyw; j++) {
			g[i].weight[j] = 0;
			for (r = 0; r < 256; r++)
				if (g[i].bytes[j][r / 64] >> (r % 64) & 1)
					g[i].weight[j] += f[r];
			g[i].cost *= g[i].weight[j];
		}
		g[k].parent = i;
		live[k] = false;
		left--;
		for (r = 0; r < n; r++)
			if (live[r] && r != i)
				d[i * n + r] = d[r * n + i] =
					tg_delta(&g[i], &g[r], keyw, f);
		best[i] = tg_best(d, live, n, i);
		for (r = 0; r < n; r++) {
			if (!live[r] || r == i)
				continue;
			if (best[r] == i || best[r] == k)
				best[r] = tg_best(d, live, n, r);
			else if (d[r * n + i] < d[r * n + best[r]])
				best[r] = i;
		}
	}
	free(d);
	free(best);
	free(live);
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
