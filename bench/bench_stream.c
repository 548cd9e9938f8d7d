/*
 * bench_stream.c - push-mode streams (textsearch_stream.h) against
 * Hyperscan's stream mode (hs_open_stream, hs_scan_stream per write,
 * hs_close_stream) on the same patterns and the same data, cut into the
 * same writes.  bench.c calls bench_stream() when given --stream.
 *
 * Two tables.  Throughput at writes of 64, 1500 and 65536 bytes, for
 * single patterns of 4 to 64 bytes (auto, that is rarebyte, and kmp and
 * bm for reference) and sets of 2, 8 and 64 literals of 4 to 16 bytes
 * (auto, that is teddy, and ac), each present in the data and absent from
 * it.  Then the fixed cost of a write: ns per write at writes of 0, 1 and
 * 8 bytes, and the intercept (and slope) of a least-squares line through
 * ns per write at 16, 64, 256 and 1024 bytes.
 *
 * Like for like: a Hyperscan literal database compiled without flags
 * (no HS_FLAG_SINGLEMATCH, no SOM) reports every occurrence of every
 * pattern by its end offset, which is what TS_OVERLAP yields, so our
 * streams are opened on TS_OVERLAP configs.  A literal's start is its end
 * minus its length, so HS_FLAG_SOMLEFTMOST (dear in stream mode) adds
 * nothing to the check: both sides count their matches and sum
 * end + (id << 32), and a cell whose count or sum differs from
 * Hyperscan's fails the bench.
 *
 * A first row, "memchr", is memchr() of a byte the corpus never has over
 * the same writes: the cost of reading the bytes once, which bounds what
 * any search (ours or Hyperscan's) can reach at each write size.
 *
 * Times are the best of a few passes in CPU time of this thread
 * (bench_best()); a pass opens (or resets) one stream, writes all the
 * data and ends it, taking every match as it is yielded.  Auto's passes,
 * Hyperscan's and memchr's go in turn (bench_best_turns()): on a shared
 * machine the memory bandwidth changes from second to second, and a
 * ratio of figures taken seconds apart moved by a third from run to run.
 *
 * The targets are judged on the table in cache (throughput()).
 * The table from memory is printed for information, with how near the
 * rows short of 1.5x Hyperscan come to memchr's rate.
 */
#include "bench_stream.h"
#include "bench_util.h"

#include <textsearch.h>
#include <textsearch_stream.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_HS
#include <hs.h>
#endif

static const unsigned int single_lens[] = { 4, 8, 16, 32, 64 };
#define NSINGLE (sizeof(single_lens) / sizeof(single_lens[0]))
static const char *const single_algos[] = { "auto", "kmp", "bm" };
#define NSALGOS (sizeof(single_algos) / sizeof(single_algos[0]))
static const unsigned int set_counts[] = { 2, 8, 64 };
#define NSETS (sizeof(set_counts) / sizeof(set_counts[0]))
static const char *const set_algos[] = { "auto", "ac" };
#define NTALGOS (sizeof(set_algos) / sizeof(set_algos[0]))
static const unsigned int write_sizes[] = { 64, 1500, 65536 };
#define NWS (sizeof(write_sizes) / sizeof(write_sizes[0]))
static const char *const variant_name[] = { "present", "absent" };

/* The fixed cost: tiny writes, and the sizes the line is fitted through. */
static const unsigned int tiny_sizes[] = { 0, 1, 8 };
#define NTINY (sizeof(tiny_sizes) / sizeof(tiny_sizes[0]))
static const unsigned int fit_sizes[] = { 16, 64, 256, 1024 };
#define NFIT (sizeof(fit_sizes) / sizeof(fit_sizes[0]))

static uint64_t srng;

static unsigned int below(unsigned int n)
{
	return (unsigned int)((bench_splitmix64(&srng) >> 32) * n >> 32);
}

static int is_letter(u8 c)
{
	return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
}

struct pset {
	unsigned int count;
	u8 buf[64][64];
	const void *pats[64];
	unsigned int lens[64];
};

/* Pattern @i of @len bytes: "present" is a piece of the data starting at
 * a word (so it occurs at least once), "absent" lowercase letters with a
 * 'q', 'z' or 'j', which the corpus never has. */
static void make_pattern(struct pset *s, unsigned int i, unsigned int len,
			 int variant, const u8 *data, size_t n)
{
	u8 *p = s->buf[i];
	unsigned int j;

	if (variant == 0) {
		size_t at = below((unsigned int)(n - 2 * len));

		while (at > 0 &&
		       !(is_letter(data[at]) && !is_letter(data[at - 1])))
			at--;
		memcpy(p, data + at, len);
	} else {
		static const char odd[] = "qzj";

		for (j = 0; j < len; j++)
			p[j] = (u8)('a' + below(26));
		p[below(len)] = (u8)odd[below(3)];
	}
	s->pats[i] = p;
	s->lens[i] = len;
}

static int is_dup(const struct pset *s, unsigned int i)
{
	for (unsigned int j = 0; j < i; j++)
		if (s->lens[j] == s->lens[i] &&
		    !memcmp(s->buf[j], s->buf[i], s->lens[i]))
			return 1;
	return 0;
}

/* A set of @count distinct literals of 4 to 16 bytes (one of @len bytes
 * when @count is 0: a single pattern). */
static void make_pset(struct pset *s, unsigned int count, unsigned int len,
		      int variant, const u8 *data, size_t n)
{
	unsigned int i;

	s->count = count ? count : 1;
	for (i = 0; i < s->count; i++) {
		unsigned int tries = 0;

		do
			make_pattern(s, i, count ? 4 + below(13) : len, variant,
				     data, n);
		while (is_dup(s, i) && ++tries < 100);
	}
}

/* ---- one pass ------------------------------------------------------------ */

struct tally {
	unsigned long count;
	uint64_t sum;
};

/* The data cut into writes of @ws bytes; with @wrap, the writes go round
 * the first @wrap bytes (a multiple of @ws) for @len bytes in all. */
struct ts_pass {
	struct ts_stream *s;
	const u8 *data;
	size_t len;
	unsigned int ws;
	struct tally t;
	size_t wrap;
};

/*
 * A pass's writes: len / ws of ws bytes, then the rest.  Both sides' loops
 * keep their few live values (stream, cursor, wrap point, writes left) in
 * registers and add matches into p->t in memory, as matches are rare: a
 * loop with more live values than callee-saved registers kept its
 * position in memory across the calls, a store and a reload before each
 * write's length, and that cost a 16-byte write 1.5-2 ns of the figure.
 */
struct pass_cursor {
	const u8 *cur, *wrap_at;
	size_t left;
	unsigned int last;
};

static struct pass_cursor pass_cursor(const u8 *data, size_t len,
				      unsigned int ws, size_t wrap)
{
	struct pass_cursor c = { data, wrap ? data + wrap : NULL, len / ws,
				 (unsigned int)(len % ws) };

	return c;
}

/* Add the matches a stream has decided to @t. */
static void take_matches(struct ts_stream *s, struct tally *t)
{
	struct ts_match m;

	while (textsearch_stream_next(s, &m) > 0) {
		t->count++;
		t->sum += m.end + ((uint64_t)m.id << 32);
	}
}

static unsigned long ts_pass_fn(void *arg)
{
	struct ts_pass *p = arg;
	struct ts_stream *s = p->s;
	struct pass_cursor c = pass_cursor(p->data, p->len, p->ws, p->wrap);

	p->t.count = 0;
	p->t.sum = 0;
	textsearch_stream_reset(s);
	for (; c.left; c.left--) {
		if (textsearch_stream_write(s, c.cur, p->ws))
			return ULONG_MAX;
		take_matches(s, &p->t);
		c.cur += p->ws;
		if (c.cur == c.wrap_at)
			c.cur = p->data;
	}
	if (c.last) {
		if (textsearch_stream_write(s, c.cur, c.last))
			return ULONG_MAX;
		take_matches(s, &p->t);
	}
	textsearch_stream_end(s);
	take_matches(s, &p->t);
	return p->t.count;
}

/* ns per write of @ws bytes over @len bytes (0-byte writes: @len writes). */
static double ns_per_write(double seconds, size_t len, unsigned int ws)
{
	double writes = ws ? (double)((len + ws - 1) / ws) : (double)len;

	return seconds * 1e9 / writes;
}

struct ts_zero {
	struct ts_stream *s;
	size_t writes;
};

/* 0-byte writes: only what the calls themselves cost. */
static unsigned long ts_zero_fn(void *arg)
{
	struct ts_zero *z = arg;
	struct ts_match m;
	unsigned long count = 0;
	static const u8 none[1];

	textsearch_stream_reset(z->s);
	for (size_t i = 0; i < z->writes; i++) {
		textsearch_stream_write(z->s, none, 0);
		while (textsearch_stream_next(z->s, &m) > 0)
			count++;
	}
	return count;
}

#ifdef HAVE_HS
struct hs_pass {
	hs_database_t *db;
	hs_scratch_t *scratch;
	const u8 *data;
	size_t len;
	unsigned int ws;
	struct tally t;
	size_t wrap; /* as in struct ts_pass */
};

static int hs_on_match(unsigned int id, unsigned long long from,
		       unsigned long long to, unsigned int flags, void *ctx)
{
	struct tally *t = ctx;

	(void)from;
	(void)flags;
	t->count++;
	t->sum += to + ((uint64_t)id << 32);
	return 0;
}

static unsigned long hs_pass_fn(void *arg)
{
	struct hs_pass *p = arg;
	hs_stream_t *s;
	size_t off;

	p->t.count = 0;
	p->t.sum = 0;
	if (hs_open_stream(p->db, 0, &s) != HS_SUCCESS)
		return ULONG_MAX;
	if (!p->ws) { /* 0-byte writes: p->len of them */
		for (off = 0; off < p->len; off++)
			hs_scan_stream(s, (const char *)p->data, 0, 0,
				       p->scratch, hs_on_match, &p->t);
	} else {
		struct pass_cursor c =
			pass_cursor(p->data, p->len, p->ws, p->wrap);

		for (; c.left; c.left--) {
			hs_scan_stream(s, (const char *)c.cur, p->ws, 0,
				       p->scratch, hs_on_match, &p->t);
			c.cur += p->ws;
			if (c.cur == c.wrap_at)
				c.cur = p->data;
		}
		if (c.last)
			hs_scan_stream(s, (const char *)c.cur, c.last, 0,
				       p->scratch, hs_on_match, &p->t);
	}
	hs_close_stream(s, p->scratch, hs_on_match, &p->t);
	return p->t.count;
}

/* A stream database of the literals of @s, flags 0: every occurrence,
 * reported by its end, ids = index in the set. */
static int hs_build(struct hs_pass *h, const struct pset *s)
{
	unsigned int flags[64], ids[64];
	size_t lens[64];
	hs_compile_error_t *err = NULL;
	unsigned int i;

	for (i = 0; i < s->count; i++) {
		flags[i] = 0;
		ids[i] = i;
		lens[i] = s->lens[i];
	}
	h->db = NULL;
	h->scratch = NULL;
	if (hs_compile_lit_multi((const char *const *)s->pats, flags, ids, lens,
				 s->count, HS_MODE_STREAM, NULL, &h->db,
				 &err) != HS_SUCCESS) {
		fprintf(stderr, "bench: hyperscan: %s\n",
			err ? err->message : "?");
		hs_free_compile_error(err);
		return -1;
	}
	if (hs_alloc_scratch(h->db, &h->scratch) != HS_SUCCESS) {
		hs_free_database(h->db);
		return -1;
	}
	return 0;
}

static void hs_drop(struct hs_pass *h)
{
	hs_free_scratch(h->scratch);
	hs_free_database(h->db);
}
#endif

static struct ts_config *ts_build(const char *algo, const struct pset *s,
				  int single)
{
	if (single)
		return textsearch_prepare(algo, s->pats[0], s->lens[0],
					  GFP_KERNEL, TS_OVERLAP);
	return textsearch_prepare_set(algo, s->pats, s->lens, s->count,
				      GFP_KERNEL, TS_OVERLAP);
}

static void ratio(char *out, size_t n, double a, double b)
{
	if (a > 0 && b > 0)
		snprintf(out, n, "%.2fx", a / b);
	else
		snprintf(out, n, "-");
}

struct bs_opts {
	const u8 *data;
	size_t len;
	int reps;
	double budget;
	int wrong;
	/* the auto rows against the targets */
	unsigned int met1500, rows1500, met64, rows64;
	double worst1500, worst64;
	/* memchr's best GB/s over the write sizes, the fastest the data is
	 * read at all (at 1500 bytes its calls' own cost shows, and a
	 * search may read faster); the 1500-byte rows short of the target
	 * that would need more */
	double read_best;
	unsigned int past_read1500;
	/* the least and most of memchr's rate, timed in turn with them,
	 * that the 1500-byte rows short of the target read at */
	double short_read_lo, short_read_hi;
};

/* Hyperscan's side of the rows of a pattern or set: its database, and
 * its figures and tallies at each write size, measured in turn with
 * auto's passes (row()), which the other algorithms' rows then compare
 * with (0 when Hyperscan is not built in). */
struct hs_side {
#ifdef HAVE_HS
	struct hs_pass h;
#endif
	int ok;
	double gbps[NWS];
	struct tally t[NWS];
};

struct mc_pass {
	const u8 *data;
	size_t len;
	unsigned int ws;
};

/* memchr of a byte the corpus never has, write by write: reading the
 * bytes once, about the least any search of them can cost. */
static unsigned long mc_pass_fn(void *arg)
{
	const struct mc_pass *p = arg;
	unsigned long count = 0;

	for (size_t off = 0; off < p->len; off += p->ws) {
		size_t n = p->len - off < p->ws ? p->len - off : p->ws;

		count += memchr(p->data + off, 0x01, n) != NULL;
	}
	return count;
}

/* Auto's pass @p, Hyperscan's and memchr's at write size @w, in turn:
 * auto's best time; Hyperscan's figures into @hs, and into *@read the
 * GB/s memchr read the same writes at meanwhile. */
static double paired(struct bs_opts *o, struct ts_pass *p, struct hs_side *hs,
		     unsigned int w, double *read)
{
	double best[3] = { 0, 0, 0 }, total[3];
#ifdef HAVE_HS
	struct mc_pass mp = { o->data, o->len, write_sizes[w] };
	const bench_run_fn fn[3] = { ts_pass_fn, hs_pass_fn, mc_pass_fn };
	void *const ctx[3] = { p, &hs->h, &mp };
	unsigned long count[3];

	hs->h.data = o->data;
	hs->h.len = o->len;
	hs->h.ws = write_sizes[w];
	hs->h.wrap = 0;
	bench_best_turns(3, fn, ctx, count, best, total, o->reps, o->budget);
	hs->gbps[w] = (double)o->len / best[1] / 1e9;
	hs->t[w] = hs->h.t;
	*read = (double)o->len / best[2] / 1e9;
#else
	(void)o, (void)p, (void)hs, (void)w, (void)total;
	*read = 0;
#endif
	return best[0];
}

/* One row: @algo on @s at every write size, beside Hyperscan's figures;
 * auto's passes measured in turn with Hyperscan's. */
static void row(struct bs_opts *o, const char *kind, unsigned int size,
		int variant, const char *algo, const struct pset *s, int single,
		struct hs_side *hs)
{
	const double *hs_gbps = hs->gbps;
	const struct tally *hs_t = hs->t;
	struct ts_config *conf = ts_build(algo, s, single);
	struct ts_stream *st;
	unsigned int w;
	unsigned long count = 0;
	int bad = 0, is_auto = !strcmp(algo, "auto");

	if (IS_ERR(conf))
		return; /* not registered */
	st = textsearch_stream_open(conf, GFP_KERNEL);
	if (IS_ERR(st)) {
		textsearch_destroy(conf);
		return;
	}
	printf("  %-6s %4u %-7s %-5s", kind, size, variant_name[variant], algo);
	for (w = 0; w < NWS; w++) {
		struct ts_pass p = { st,    o->data, o->len, write_sizes[w],
				     { 0 }, 0 };
		unsigned long c;
		double read = 0;
		double t = is_auto && hs->ok ? paired(o, &p, hs, w, &read) :
					       bench_best(ts_pass_fn, &p, &c,
							  o->reps, o->budget);
		double g = (double)o->len / t / 1e9;
		char rt[16];

		ratio(rt, sizeof(rt), g, hs_gbps[w]);
		printf(" %7.3f %7s", g, rt);
		count = p.t.count;
		if (hs_gbps[w] > 0 &&
		    (hs_t[w].count != p.t.count || hs_t[w].sum != p.t.sum))
			bad = 1;
		if (is_auto && hs_gbps[w] > 0 && write_sizes[w] == 1500) {
			o->rows1500++;
			o->met1500 += g >= 1.5 * hs_gbps[w];
			o->past_read1500 += g < 1.5 * hs_gbps[w] &&
					    1.5 * hs_gbps[w] > o->read_best;
			if (g < 1.5 * hs_gbps[w] && read > 0) {
				double f = g / read;

				if (f < o->short_read_lo)
					o->short_read_lo = f;
				if (f > o->short_read_hi)
					o->short_read_hi = f;
			}
			if (g / hs_gbps[w] < o->worst1500)
				o->worst1500 = g / hs_gbps[w];
		}
		if (is_auto && hs_gbps[w] > 0 && write_sizes[w] == 64) {
			o->rows64++;
			o->met64 += g >= hs_gbps[w];
			if (g / hs_gbps[w] < o->worst64)
				o->worst64 = g / hs_gbps[w];
		}
	}
	printf(" %9lu%s\n", count, bad ? "  WRONG: differs from hs" : "");
	if (bad) {
		printf("    hs count %lu\n", hs_t[0].count);
		o->wrong = 1;
	}
	textsearch_stream_free(st);
	textsearch_destroy(conf);
}

/* Hyperscan's database for @s into @hs (hs->ok 0 where it is not built
 * in or does not compile), its figures 0 until auto's row measures them. */
static void hs_start(struct hs_side *hs, const struct pset *s)
{
	memset(hs, 0, sizeof(*hs));
#ifdef HAVE_HS
	hs->ok = !hs_build(&hs->h, s);
#else
	(void)s;
#endif
}

static void hs_stop(struct hs_side *hs)
{
#ifdef HAVE_HS
	if (hs->ok)
		hs_drop(&hs->h);
#endif
	hs->ok = 0;
}

static void hs_print(const char *kind, unsigned int size, int variant,
		     const double *gbps, const struct tally *t)
{
	if (!(gbps[0] > 0))
		return;
	printf("  %-6s %4u %-7s %-5s", kind, size, variant_name[variant], "hs");
	for (unsigned int w = 0; w < NWS; w++)
		printf(" %7.3f %7s", gbps[w], "");
	printf(" %9lu\n", t[0].count);
}

/* ---- fixed cost per write ------------------------------------------------ */

/* ns per write of each tiny size, then of each fit size. */
struct cost {
	double tiny[NTINY], fit[NFIT];
	double intercept, slope;
	int ok;
};

static void fit_line(struct cost *c)
{
	double mx = 0, my = 0, sxy = 0, sxx = 0;
	unsigned int i;

	for (i = 0; i < NFIT; i++) {
		mx += fit_sizes[i];
		my += c->fit[i];
	}
	mx /= NFIT;
	my /= NFIT;
	for (i = 0; i < NFIT; i++) {
		sxy += (fit_sizes[i] - mx) * (c->fit[i] - my);
		sxx += (fit_sizes[i] - mx) * (fit_sizes[i] - mx);
	}
	c->slope = sxy / sxx;
	c->intercept = my - c->slope * mx;
}

/* The fixed cost is a CPU cost: its writes go round the first 256 KiB
 * of the corpus, which the caches hold (a write just received), so that
 * misses to memory, a cost per byte, stay out of it. */
#define COST_WRAP (256u << 10)

/* How many writes each cost figure makes: enough that a pass takes a few
 * milliseconds at a few ns per write. */
static size_t cost_writes(int quick, unsigned int ws)
{
	size_t n = quick ? (64u << 10) : (1u << 20);

	if (ws >= 64)
		n = (quick ? (256u << 10) : (4u << 20)) / ws;
	return n;
}

/* Write size @i of a cost row: a tiny one, then the fitted ones. */
static unsigned int cost_size(unsigned int i)
{
	return i < NTINY ? tiny_sizes[i] : fit_sizes[i - NTINY];
}

/*
 * A cost row's cells by their passes (fn[i] on ctx[i], len[i] bytes or
 * 0-byte writes), taken in rounds (bench_best_turns()), each cell's best
 * kept.  A slow phase of the machine outlasts a cell's passes taken one
 * after another, and spoiled them all (stop 46: a set's 8-byte writes
 * read 10.8 and 12.5 ns in two runs, 9.2 by themselves); in rounds it
 * spoils some rounds of every cell.
 */
static void cost_rounds(struct cost *c, struct bs_opts *o,
			const bench_run_fn fn[], void *const ctx[],
			const size_t len[])
{
	double best[NTINY + NFIT], total[NTINY + NFIT];
	unsigned long cnt[NTINY + NFIT];
	unsigned int i;

	bench_best_turns(NTINY + NFIT, fn, ctx, cnt, best, total, o->reps,
			 o->budget);
	for (i = 0; i < NTINY + NFIT; i++) {
		double t = ns_per_write(best[i], len[i], cost_size(i));

		if (i < NTINY)
			c->tiny[i] = t;
		else
			c->fit[i - NTINY] = t;
	}
	fit_line(c);
	c->ok = 1;
}

static void ts_cost(struct cost *c, struct bs_opts *o, int quick,
		    const char *algo, const struct pset *s, int single)
{
	struct ts_config *conf = ts_build(algo, s, single);
	struct ts_pass p[NTINY + NFIT];
	struct ts_zero z;
	bench_run_fn fn[NTINY + NFIT];
	void *ctx[NTINY + NFIT];
	size_t len[NTINY + NFIT];
	struct ts_stream *st;
	unsigned int i;

	c->ok = 0;
	if (IS_ERR(conf))
		return;
	st = textsearch_stream_open(conf, GFP_KERNEL);
	if (IS_ERR(st)) {
		textsearch_destroy(conf);
		return;
	}
	for (i = 0; i < NTINY + NFIT; i++) {
		const unsigned int ws = cost_size(i);
		const size_t writes = cost_writes(quick, ws);

		len[i] = ws ? writes * ws : writes;
		p[i] = (struct ts_pass){ st, o->data, len[i],
					 ws, { 0 },   COST_WRAP };
		fn[i] = ts_pass_fn;
		ctx[i] = &p[i];
		if (!ws) {
			z = (struct ts_zero){ st, writes };
			fn[i] = ts_zero_fn;
			ctx[i] = &z;
		}
	}
	cost_rounds(c, o, fn, ctx, len);
	textsearch_stream_free(st);
	textsearch_destroy(conf);
}

static void hs_cost(struct cost *c, struct bs_opts *o, int quick,
		    const struct pset *s)
{
	c->ok = 0;
#ifdef HAVE_HS
	struct hs_pass h, p[NTINY + NFIT];
	bench_run_fn fn[NTINY + NFIT];
	void *ctx[NTINY + NFIT];
	size_t len[NTINY + NFIT];
	unsigned int i;

	if (hs_build(&h, s))
		return;
	for (i = 0; i < NTINY + NFIT; i++) {
		const unsigned int ws = cost_size(i);
		const size_t writes = cost_writes(quick, ws);

		len[i] = ws ? writes * ws : writes;
		p[i] = h;
		p[i].data = o->data;
		p[i].len = len[i];
		p[i].ws = ws;
		p[i].wrap = COST_WRAP;
		fn[i] = hs_pass_fn;
		ctx[i] = &p[i];
	}
	cost_rounds(c, o, fn, ctx, len);
	hs_drop(&h);
#else
	(void)o;
	(void)quick;
	(void)s;
#endif
}

static void cost_print(const char *what, const struct cost *c, double *worst)
{
	unsigned int i;

	if (!c->ok)
		return;
	printf("  %-22s", what);
	for (i = 0; i < NTINY; i++)
		printf(" %8.1f", c->tiny[i]);
	for (i = 0; i < NFIT; i++)
		printf(" %8.1f", c->fit[i]);
	printf(" %10.1f %8.4f\n", c->intercept, c->slope);
	if (worst) {
		for (i = 0; i < NTINY; i++)
			if (c->tiny[i] > *worst)
				*worst = c->tiny[i];
		if (c->intercept > *worst)
			*worst = c->intercept;
	}
}

/*
 * The throughput table over o->data[0, o->len), and how it stands against
 * the targets.  They are @judged in cache only: a stream's write
 * is data just received, and from memory 1.5 times Hyperscan is past the
 * read bound wherever Hyperscan reads at 2/3 of it (docs/performance.md,
 * "Which table the targets are judged on").
 */
static void throughput(struct bs_opts *o, struct pset *s, const char *where,
		       int judged)
{
	const char *verdict = judged ? "target" : "for information";
	const char *yes = judged ? "met" : "reached",
		   *no = judged ? "NOT MET" : "short";
	struct hs_side hs;
	unsigned int i, a, w;
	int v;

	o->met1500 = o->rows1500 = o->met64 = o->rows64 = 0;
	o->past_read1500 = 0;
	o->read_best = 0;
	o->worst1500 = o->worst64 = o->short_read_lo = 1e30;
	o->short_read_hi = 0;
	printf("\nstreams, %s: %zu bytes of the corpus written in writes of "
	       "64, 1500 and 65536 bytes, each followed by next() until 0, "
	       "TS_OVERLAP configs against Hyperscan %s stream mode "
	       "(hs_scan_stream per write, literal databases, flags 0: every "
	       "occurrence by its end); GB/s and x hs, best of %d (auto's "
	       "passes and hs's in turn)\n",
	       where, o->len,
#ifdef HAVE_HS
	       hs_version(),
#else
	       "(not built in)",
#endif
	       o->reps);
	printf("  %-6s %4s %-7s %-5s", "kind", "size", "variant", "algo");
	for (w = 0; w < NWS; w++)
		printf(" %7u %7s", write_sizes[w], "x hs");
	printf(" %9s\n", "matches");
	printf("  %-6s %4s %-7s %-5s", "read", "", "", "memchr");
	for (w = 0; w < NWS; w++) {
		struct mc_pass mp = { o->data, o->len, write_sizes[w] };
		unsigned long c;
		double t = bench_best(mc_pass_fn, &mp, &c, o->reps, o->budget);
		double gbps = (double)o->len / t / 1e9;

		if (gbps > o->read_best)
			o->read_best = gbps;
		printf(" %7.3f %7s", gbps, "");
		/* use the count: memchr is pure, and a count nobody reads
		 * would let the compiler drop the calls */
		if (c)
			printf("?");
	}
	printf("\n");
	for (i = 0; i < NSINGLE; i++) {
		for (v = 0; v < 2; v++) {
			srng = 0x57ea3ULL + i * 2 + (uint64_t)v;
			make_pset(s, 0, single_lens[i], v, o->data, o->len);
			hs_start(&hs, s);
			for (a = 0; a < NSALGOS; a++)
				row(o, "single", single_lens[i], v,
				    single_algos[a], s, 1, &hs);
			hs_print("single", single_lens[i], v, hs.gbps, hs.t);
			hs_stop(&hs);
		}
	}
	for (i = 0; i < NSETS; i++) {
		for (v = 0; v < 2; v++) {
			srng = 0x5e7ea3ULL + i * 2 + (uint64_t)v;
			make_pset(s, set_counts[i], 0, v, o->data, o->len);
			hs_start(&hs, s);
			for (a = 0; a < NTALGOS; a++)
				row(o, "set", set_counts[i], v, set_algos[a], s,
				    0, &hs);
			hs_print("set", set_counts[i], v, hs.gbps, hs.t);
			hs_stop(&hs);
		}
	}
	if (o->rows1500) {
		printf("  %s, %s: 1500-byte writes >= 1.5x hs: %u of %u "
		       "auto rows, worst %.2fx: %s\n",
		       verdict, where, o->met1500, o->rows1500, o->worst1500,
		       o->met1500 == o->rows1500 ? yes : no);
		if (o->met1500 < o->rows1500 && o->short_read_hi > 0)
			printf("    rows short of it: %u, reading at %.0f-%.0f%% "
			       "of memchr's rate over the same writes, timed "
			       "in turn\n",
			       o->rows1500 - o->met1500, 100 * o->short_read_lo,
			       100 * o->short_read_hi);
		/* where Hyperscan reads at 2/3 of memchr's best rate, 1.5
		 * times its rate is past what reading the data allows */
		if (o->past_read1500)
			printf("    rows short of it that would need more than "
			       "memchr's best, %.1f GB/s: %u of %u\n",
			       o->read_best, o->past_read1500,
			       o->rows1500 - o->met1500);
	}
	if (o->rows64)
		printf("  %s, %s: 64-byte writes >= 1.0x hs: %u of %u "
		       "auto rows, worst %.2fx: %s\n",
		       verdict, where, o->met64, o->rows64, o->worst64,
		       o->met64 == o->rows64 ? yes : no);
}

int bench_stream(const u8 *corpus, size_t corpus_len, int quick)
{
	struct bs_opts o = { 0 };
	struct pset *s = malloc(sizeof(*s));
	double worst_cost[2] = { 0, 0 }; /* auto: single, set */
	unsigned int i;

	if (!s) {
		fprintf(stderr, "bench: out of memory\n");
		return 1;
	}
	o.data = corpus;
	o.reps = quick ? 1 : 3;
	o.budget = quick ? 0.02 : 0.4;
	/* 32 MiB, more than the last-level cache, so every write comes from
	 * memory; quick 1 MiB */
	o.len = quick ? (1u << 20) : (32u << 20);
	if (o.len > corpus_len)
		o.len = corpus_len;
	throughput(&o, s, "from memory", 0);
	/* 256 KiB, which the caches hold: a write just received.  The
	 * passes go over the same bytes, whose candidates the branch
	 * predictors learn over the first few (a set's scan needs about 10,
	 * Hyperscan about 3: docs/performance.md): 15 of them, so that the
	 * best is both sides' steady state. */
	o.len = 256u << 10;
	if (o.len > corpus_len)
		o.len = corpus_len;
	o.reps = quick ? 1 : 15;
	throughput(&o, s, "in cache", 1);
	o.len = quick ? (1u << 20) : (32u << 20);
	if (o.len > corpus_len)
		o.len = corpus_len;
	/* The fixed cost's passes take 0.1 to 10 ms: best of 15 too (each
	 * cell within the budget), a row's cells in rounds (cost_rounds()),
	 * so that a cell is what the writes cost rather than what the
	 * machine did meanwhile */
	o.reps = quick ? 1 : 15;

	printf("\nstream fixed cost: ns per write at writes of 0, 1 and 8 "
	       "bytes, then at 16-1024 bytes and the line through those "
	       "(intercept ns, slope ns/byte); absent patterns, the writes going "
	       "round 256 KiB of the corpus (in cache), best of %d, a row's "
	       "cells in rounds\n",
	       o.reps);
	printf("  %-22s", "");
	for (i = 0; i < NTINY; i++)
		printf(" %7uB", tiny_sizes[i]);
	for (i = 0; i < NFIT; i++)
		printf(" %7uB", fit_sizes[i]);
	printf(" %10s %8s\n", "intercept", "slope");
	{
		static const struct {
			const char *label, *algo;
			unsigned int count, len;
		} cells[] = {
			{ "single 8 auto", "auto", 0, 8 },
			{ "single 8 kmp", "kmp", 0, 8 },
			{ "single 8 bm", "bm", 0, 8 },
			{ "single 8 hs", NULL, 0, 8 },
			{ "set 8 auto", "auto", 8, 0 },
			{ "set 8 ac", "ac", 8, 0 },
			{ "set 8 hs", NULL, 8, 0 },
		};

		for (i = 0; i < sizeof(cells) / sizeof(cells[0]); i++) {
			struct cost c;

			srng = 0xc057ULL + cells[i].count;
			make_pset(s, cells[i].count, cells[i].len, 1, o.data,
				  o.len);
			if (cells[i].algo)
				ts_cost(&c, &o, quick, cells[i].algo, s,
					!cells[i].count);
			else
				hs_cost(&c, &o, quick, s);
			cost_print(cells[i].label, &c,
				   cells[i].algo && !strcmp(cells[i].algo,
							    "auto") ?
					   &worst_cost[cells[i].count != 0] :
					   NULL);
		}
	}
	printf("  target: fixed cost per write <= 10 ns (worst of auto's "
	       "0/1/8-byte writes and intercept): single %.1f ns: %s; "
	       "set %.1f ns: %s\n",
	       worst_cost[0], worst_cost[0] <= 10 ? "met" : "NOT MET",
	       worst_cost[1], worst_cost[1] <= 10 ? "met" : "NOT MET");
	free(s);
	return o.wrong;
}
