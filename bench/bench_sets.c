/*
 * bench_sets.c - pattern sets: every set algorithm the registry has by
 * name against Hyperscan's literal sets (hs_compile_lit_multi, block
 * mode).  bench.c calls bench_sets() when given --sets; tsgrep -F -f
 * against grep and rg as whole processes is bench/sets_bench.sh.
 *
 * Sets of 2 to 1,000,000 literals, 4 to 16 bytes, in two variants:
 * "present" are substrings of the corpus that start at a word, so many
 * of them match often; "absent" are lowercase strings with a 'q', 'z' or
 * 'j' in them, letters the corpus never has, so they share prefixes with
 * the text but never match.  Counts compare like for like: Hyperscan
 * reports every occurrence of every pattern (each copy of a duplicate
 * too), which is what TS_OVERLAP finds, so ours are TS_OVERLAP counts
 * and must equal Hyperscan's.  A count that differs fails the bench.
 *
 * Build times are CPU time of this thread (on a shared machine the wall
 * clock also counts the turns other processes take), memory what the
 * prepare left allocated (mallinfo2 before and after,
 * so huge blocks from mmap count too) and for Hyperscan hs_database_size().
 */
#define _GNU_SOURCE
#include "bench_sets.h"
#include "bench_util.h"

#include <textsearch.h>

#include <limits.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef HAVE_HS
#include <hs.h>
#endif

static const unsigned int set_sizes[] = { 2, 8, 64, 1000, 100000, 1000000 };
#define NSIZES (sizeof(set_sizes) / sizeof(set_sizes[0]))
static const char *const set_algos[] = { "ac", "teddy", "auto" };
#define NALGOS (sizeof(set_algos) / sizeof(set_algos[0]))
static const char *const variant_name[] = { "present", "absent" };

static uint64_t srng = 0x5e75e75e7ULL;

static uint64_t srnd(void)
{
	return bench_splitmix64(&srng);
}

static unsigned int below(unsigned int n)
{
	return (unsigned int)((srnd() >> 32) * n >> 32);
}

static size_t heap_used(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

struct set {
	unsigned int count;
	u8 *buf;
	const void **pats;
	unsigned int *lens;
};

static int is_letter(u8 c)
{
	return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
}

/* Distinct patterns, as a real rule set has: a copy of a common word
 * drawn ten thousand times would only count its matches over and over. */
static uint64_t pat_hash(const u8 *p, unsigned int len)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	unsigned int i;

	for (i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h | 1;
}

static int seen(uint64_t *table, size_t mask, const u8 *p, unsigned int len)
{
	uint64_t h = pat_hash(p, len);
	size_t i;

	for (i = h & mask; table[i]; i = (i + 1) & mask)
		if (table[i] == h)
			return 1; /* a 64-bit hash clash drops a pattern: harmless */
	table[i] = h;
	return 0;
}

/* @count patterns of @minlen to @maxlen bytes; variant 0 from the corpus,
 * 1 absent from it, 2 random bytes (for the prepare timings only). */
static void make_set(struct set *s, unsigned int count, int variant,
		     const u8 *corpus, size_t n, unsigned int minlen,
		     unsigned int maxlen)
{
	size_t mask = 1;
	uint64_t *table;
	unsigned int i, j, tries = 0;
	u8 *p;

	while (mask < (size_t)count * 2)
		mask <<= 1;
	table = calloc(mask, sizeof(*table));
	mask--;
	s->count = count;
	s->buf = malloc((size_t)count * maxlen);
	s->pats = malloc(count * sizeof(*s->pats));
	s->lens = malloc(count * sizeof(*s->lens));
	if (!table || !s->buf || !s->pats || !s->lens) {
		fprintf(stderr, "bench: out of memory\n");
		exit(2);
	}
	for (i = 0, p = s->buf; i < count; i++, p += maxlen) {
		unsigned int len = minlen + below(maxlen - minlen + 1);

		if (variant == 0) {
			size_t at;

			do { /* one line: grep -f reads a pattern a line */
				at = below((unsigned int)(n - 64));
				while (at > 0 && !(is_letter(corpus[at]) &&
						   !is_letter(corpus[at - 1])))
					at--;
			} while (memchr(corpus + at, '\n', len));
			memcpy(p, corpus + at, len);
		} else if (variant == 1) {
			static const char odd[] = "qzj";

			for (j = 0; j < len; j++)
				p[j] = (u8)('a' + below(26));
			p[below(len)] = (u8)odd[below(3)];
		} else {
			for (j = 0; j < len; j++)
				p[j] = (u8)srnd();
		}
		if (seen(table, mask, p, len) && ++tries < 100u * count) {
			i--;
			p -= maxlen;
			continue;
		}
		s->pats[i] = p;
		s->lens[i] = len;
	}
	free(table);
}

static void free_set(struct set *s)
{
	free(s->buf);
	free(s->pats);
	free(s->lens);
}

struct cell {
	double build_s, gbps;
	size_t bytes;
	unsigned long count;
	int ok;
};

static unsigned long count_ts(struct ts_config *conf, const u8 *text,
			      size_t len)
{
	struct ts_state st;
	unsigned long count = 0;
	unsigned int pos;

	for (pos = textsearch_find_continuous(conf, &st, text,
					      (unsigned int)len);
	     pos != UINT_MAX; pos = textsearch_next(conf, &st))
		count++;
	return count;
}

struct ts_run {
	struct ts_config *conf;
	const u8 *text;
	size_t len;
};

static unsigned long ts_run_fn(void *arg)
{
	const struct ts_run *r = arg;

	return count_ts(r->conf, r->text, r->len);
}

/* Best of @reps passes (CPU time of this thread) within about @budget s. */
static double time_ts(struct ts_config *conf, const u8 *text, size_t len,
		      int reps, double budget, unsigned long *count)
{
	struct ts_run r = { conf, text, len };

	return bench_best(ts_run_fn, &r, count, reps, budget);
}

static void run_ts_cell(struct cell *c, const char *algo, const struct set *s,
			const u8 *text, size_t len, int reps, double budget)
{
	struct ts_config *conf;
	size_t before = heap_used();
	double t0 = bench_cpu(), t;

	conf = textsearch_prepare_set(algo, s->pats, s->lens, s->count,
				      GFP_KERNEL, TS_OVERLAP);
	c->build_s = bench_cpu() - t0;
	c->ok = !IS_ERR(conf);
	if (!c->ok)
		return;
	c->bytes = heap_used() - before;
	t = time_ts(conf, text, len, reps, budget, &c->count);
	c->gbps = (double)len / t / 1e9;
	textsearch_destroy(conf);
}

#ifdef HAVE_HS
static int hs_count(unsigned int id, unsigned long long from,
		    unsigned long long to, unsigned int flags, void *ctx)
{
	(void)id;
	(void)from;
	(void)to;
	(void)flags;
	++*(unsigned long *)ctx;
	return 0;
}

static void run_hs_cell(struct cell *c, const struct set *s, const u8 *text,
			size_t len, int reps, double budget)
{
	unsigned int *flags = malloc(s->count * sizeof(*flags));
	unsigned int *ids = malloc(s->count * sizeof(*ids));
	size_t *lens = malloc(s->count * sizeof(*lens));
	hs_compile_error_t *err = NULL;
	hs_database_t *db = NULL;
	hs_scratch_t *scratch = NULL;
	double t0, best = 1e30, spent = 0;
	unsigned int i;
	int r;

	c->ok = 0;
	if (!flags || !ids || !lens)
		goto out;
	for (i = 0; i < s->count; i++) {
		flags[i] = 0;
		ids[i] = i;
		lens[i] = s->lens[i];
	}
	t0 = bench_cpu();
	if (hs_compile_lit_multi((const char *const *)s->pats, flags, ids, lens,
				 s->count, HS_MODE_BLOCK, NULL, &db,
				 &err) != HS_SUCCESS) {
		fprintf(stderr, "bench: hyperscan: %s\n",
			err ? err->message : "?");
		hs_free_compile_error(err);
		goto out;
	}
	c->build_s = bench_cpu() - t0;
	if (hs_database_size(db, &c->bytes) != HS_SUCCESS ||
	    hs_alloc_scratch(db, &scratch) != HS_SUCCESS)
		goto out;
	for (r = 0; r < reps && spent < budget; r++) {
		double t1 = bench_cpu(), t;

		c->count = 0;
		hs_scan(db, (const char *)text, (unsigned int)len, 0, scratch,
			hs_count, &c->count);
		t = bench_cpu() - t1;
		spent += t;
		if (t < best)
			best = t;
	}
	c->gbps = (double)len / best / 1e9;
	c->ok = 1;
out:
	hs_free_scratch(scratch);
	hs_free_database(db);
	free(flags);
	free(ids);
	free(lens);
}
#endif

static void ratio(char *out, size_t n, double a, double b)
{
	if (a > 0 && b > 0)
		snprintf(out, n, "%.2fx", a / b);
	else
		snprintf(out, n, "-");
}

int bench_sets(const u8 *corpus, size_t corpus_len, int quick)
{
	/* 32 MiB, more than the last-level cache; quick runs 2 MiB and stop
	 * at 100,000 patterns */
	size_t len = quick ? (2u << 20) : (32u << 20);
	unsigned int nsizes = quick ? NSIZES - 1 : NSIZES;
	int reps = quick ? 1 : 3, wrong = 0;
	double budget = quick ? 0.05 : 1.5;
#ifdef HAVE_HS
	/* BENCH_SETS_HS_MAX: the largest set Hyperscan compiles (a million
	 * literals take it minutes) */
	const char *env = getenv("BENCH_SETS_HS_MAX");
	unsigned long hs_max = env ? strtoul(env, NULL, 10) : ULONG_MAX;
#endif
	unsigned int z, a;
	int v;

	if (len > corpus_len)
		len = corpus_len;
	printf("\npattern sets: %zu bytes of the corpus, TS_OVERLAP counts "
	       "(every occurrence, as Hyperscan reports them), block mode, "
	       "best of %d; memory = heap the prepare kept / "
	       "hs_database_size\n",
	       len, reps);
	printf("  %-8s %-8s %9s %8s %9s %10s %12s %10s %10s %s\n", "variant",
	       "algo", "patterns", "GB/s", "vs hs", "build s", "bytes/pat",
	       "matches", "hs GB/s", "hs build s, bytes/pat");
	for (v = 0; v < 2; v++) {
		for (z = 0; z < nsizes; z++) {
			struct set s;
			struct cell hs = { 0 };

			srng = 0x5e75e75e7ULL + z * 2 + (uint64_t)v;
			make_set(&s, set_sizes[z], v, corpus, corpus_len, 4,
				 16);
#ifdef HAVE_HS
			if (s.count <= hs_max)
				run_hs_cell(&hs, &s, corpus, len, reps, budget);
#endif
			for (a = 0; a < NALGOS; a++) {
				struct cell c = { 0 };
				char rt[16], hsb[48];

				run_ts_cell(&c, set_algos[a], &s, corpus, len,
					    reps, budget);
				if (!c.ok)
					continue; /* not registered, or
						   * refuses this size */
				ratio(rt, sizeof(rt), c.gbps, hs.gbps);
				if (hs.ok)
					snprintf(hsb, sizeof(hsb), "%.3f, %.1f",
						 hs.build_s,
						 (double)hs.bytes / s.count);
				else
					snprintf(hsb, sizeof(hsb), "n/a");
				printf("  %-8s %-8s %9u %8.3f %9s %10.3f "
				       "%12.1f %10lu %10.3f %s%s\n",
				       variant_name[v], set_algos[a], s.count,
				       c.gbps, rt, c.build_s,
				       (double)c.bytes / s.count, c.count,
				       hs.ok ? hs.gbps : 0, hsb,
				       hs.ok && hs.count != c.count ?
					       "  WRONG: hs counts differ" :
					       "");
				if (hs.ok && hs.count != c.count) {
					printf("    hs count %lu\n", hs.count);
					wrong = 1;
				}
			}
			free_set(&s);
		}
	}

	/* preparing a million patterns of random bytes, as a packet rule
	 * set might look: the build alone */
	printf("\nprepare %s random-byte patterns (CPU s of this "
	       "thread, best of %d):\n",
	       quick ? "100,000" : "1,000,000", quick ? 1 : 3);
	for (v = 0; v < 2; v++) {
		unsigned int lo = v ? 8 : 4, hi = v ? 32 : 16;
		struct set s;

		srng = 0xb17d ^ (uint64_t)v;
		make_set(&s, quick ? 100000 : 1000000, 2, corpus, corpus_len,
			 lo, hi);
		for (a = 0; a < NALGOS; a++) {
			double best = 1e30, best_wall = 0;
			int r;

			for (r = 0; r < (quick ? 1 : 3); r++) {
				double t0 = bench_cpu(), w0 = bench_wall(), t;
				struct ts_config *conf = textsearch_prepare_set(
					set_algos[a], s.pats, s.lens, s.count,
					GFP_KERNEL, 0);

				t = bench_cpu() - t0;
				if (IS_ERR(conf))
					break;
				if (t < best) {
					best = t;
					best_wall = bench_wall() - w0;
				}
				textsearch_destroy(conf);
			}
			if (best < 1e30)
				printf("  %-8s %u patterns of %u-%u bytes: "
				       "%.3f s CPU (%.3f s wall)\n",
				       set_algos[a], s.count, lo, hi, best,
				       best_wall);
		}
		free_set(&s);
	}

	return wrong;
}
