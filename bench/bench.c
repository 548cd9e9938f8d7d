/*
 * bench.c - throughput of every registered literal algorithm against
 * memchr, glibc memmem and (when built with it) Hyperscan, on a seeded
 * corpus that anyone can regenerate, then tsgrep against grep -F and rg -F
 * as whole processes.  `make bench` builds and runs it; docs/performance.md
 * holds a run and its reading.  Speed is never asserted: the program fails
 * only when an algorithm counts a different number of matches than memmem,
 * because a fast wrong answer must not show up as a good figure.
 *
 *   bench [--quick] [--corpus FILE] [--tsgrep PATH] [--algos "a b c"]
 *         [--blocks-only] [--sets | --sets-only] [--stream | --stream-only]
 *         [--timers | --timers-only] [--utf8-only]
 *
 * Single thread, best of N passes, each pass timed in CPU time of this
 * thread (CLOCK_THREAD_CPUTIME_ID): on a small shared machine other
 * processes take turns on our core, and wall-clock time would charge their
 * turns to whichever algorithm happened to be running; they still cost us
 * cache and memory bandwidth, which the best of N passes tames.  The
 * corpus is larger than the last-level cache, so every pass streams from
 * memory.  Whole processes are timed in wall-clock time (median), with
 * their CPU time beside it.
 */
#define _GNU_SOURCE /* memmem */
#include <textsearch.h>

#include "bench_blocks.h"
#include "bench_sets.h"
#include "bench_stream.h"
#include "bench_timer.h"
#include "bench_utf8.h"
#include "bench_util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef HAVE_HS
#include <hs.h>
#endif

/* ---- configuration -------------------------------------------------------- */

#define SEED 0x7e575ea4c4ULL
#define FULL_SIZE (128u << 20)
#define QUICK_SIZE (4u << 20)
#define PLANTS 8      /* copies of each rare-but-present pattern */
#define SLICE_DIV 4   /* slow cells search the first quarter only */
#define SLOW_GBPS 2.0 /* what "slow" means */

static const unsigned int lengths[] = { 1, 2, 3, 4, 8, 16, 32, 64, 256 };
#define NLEN (sizeof(lengths) / sizeof(lengths[0]))
/* one more row: the common-prefix case, among many pthread_mutex_* calls */
#define NROW (NLEN + 1)
#define PTHREAD_ROW NLEN

static const unsigned int block_sizes[] = { 0, 64, 1500, 65536 };
#define NMODE 4 /* 0 = contiguous, then blocks through textsearch_find_with */
#define MODE_1500 2

/* Names tried with textsearch_prepare(); the ones that do not exist are
 * skipped and listed.  "auto" and the SIMD algorithm may or may not have
 * landed; --algos or BENCH_ALGOS replaces the list. */
static const char default_algos[] =
	"kmp bm shiftor rarebyte rarebyte_avx512 rarebyte_avx2 rarebyte_sse2 "
	"rarebyte_scalar simd auto";
#define MAX_ALGOS 16

enum { ABSENT, RARE };
static const char *const kind_name[] = { "absent", "rare" };
static const char *const case_name[] = { "exact", "icase" };

static int quick;
/* --sets: the pattern-set table too (bench_sets.c); --sets-only: just it */
static int sets, sets_only;
/* --stream: the push-mode stream tables too (bench_stream.c);
 * --stream-only: just them */
static int streams, streams_only;
/* --timers: the timer table too (bench_timer.c); --timers-only: just it */
static int timers, timers_only;
static double budget; /* seconds of timing per cell, at most */
static int max_reps;

/* ---- deterministic corpus -------------------------------------------------- */

static uint64_t rng_state = SEED;

static uint64_t rnd(void)
{
	return bench_splitmix64(&rng_state);
}

static unsigned int rnd_below(unsigned int n)
{
	return (unsigned int)((rnd() >> 32) * n >> 32);
}

#define NWORDS 3000
static char words[NWORDS][16];

/* English-looking words from syllables; the generator never emits '@',
 * '~', '$' or '`', which keeps those bytes for the 1-byte patterns. */
static void make_vocabulary(void)
{
	static const char *const onset[] = {
		"",   "b",  "c",  "d",	"f",  "g",  "h",  "l",
		"m",  "n",  "p",  "r",	"s",  "t",  "v",  "w",
		"st", "th", "tr", "ch", "sh", "pl", "gr", "br"
	};
	static const char *const nucleus[] = { "a",  "e",  "i",	 "o",  "u",
					       "ea", "ou", "io", "ai", "y" };
	static const char *const coda[] = { "",	 "",  "",   "n",  "r",	"s",
					    "t", "l", "nd", "ng", "st", "ck" };
	unsigned int i, s, nsyl;

	for (i = 0; i < NWORDS; i++) {
		char *w = words[i];

		w[0] = '\0';
		nsyl = 1 + rnd_below(3);
		for (s = 0; s < nsyl; s++) {
			strcat(w,
			       onset[rnd_below(sizeof(onset) / sizeof(*onset))]);
			strcat(w, nucleus[rnd_below(sizeof(nucleus) /
						    sizeof(*nucleus))]);
			strcat(w,
			       coda[rnd_below(sizeof(coda) / sizeof(*coda))]);
		}
	}
}

/* Zipf-like: a few words are very common, most are rare. */
static const char *word(void)
{
	uint64_t r = rnd() >> 40;

	return words[(unsigned int)((r * r >> 24) * NWORDS >> 24)];
}

struct out {
	char *p, *end;
};

static void put(struct out *o, const char *s)
{
	while (*s && o->p < o->end)
		*o->p++ = *s++;
}

static void putf(struct out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void putf(struct out *o, const char *fmt, ...)
{
	char line[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	put(o, line);
}

/* Prose and C-like lines; the C lines call many pthread_* functions (so a
 * search for pthread_mutex_lock meets its prefix everywhere) but never
 * pthread_mutex_lock itself, which is only planted. */
static void make_corpus(char *buf, size_t size)
{
	struct out o = { buf, buf + size };
	unsigned int n, i;

	make_vocabulary();
	while (o.p < o.end) {
		switch (rnd_below(16)) {
		case 0:
		case 1:
		case 2:
		case 3:
		case 4:
		case 5:
		case 6:
			n = 6 + rnd_below(12);
			for (i = 0; i < n; i++) {
				const char *w = word();
				char cap[16];

				if (i == 0) {
					strcpy(cap, w);
					cap[0] = (char)(cap[0] -
							32 * (cap[0] >= 'a'));
					w = cap;
					put(&o, w);
				} else {
					put(&o, " ");
					put(&o, w);
				}
				if (i + 1 < n && rnd_below(8) == 0)
					put(&o, ",");
			}
			put(&o, ".\n");
			break;
		case 7:
			putf(&o, "\tpthread_mutex_unlock(&%s->%s);\n", word(),
			     word());
			break;
		case 8:
			putf(&o, "\tpthread_mutex_init(&%s->lock, NULL);\n",
			     word());
			break;
		case 9:
			putf(&o,
			     "\tpthread_cond_wait(&%s->cond, &%s->mutex);\n",
			     word(), word());
			break;
		case 10:
			putf(&o,
			     "\tif (pthread_mutex_trylock(&%s) != 0)\n"
			     "\t\treturn -EBUSY;\n",
			     word());
			break;
		case 11:
			putf(&o, "\tpthread_create(&%s, NULL, %s_main, %s);\n",
			     word(), word(), word());
			break;
		case 12:
			putf(&o, "static int %s_%s(struct %s *%s)\n{\n", word(),
			     word(), word(), word());
			break;
		case 13:
			putf(&o, "\t%s = %s[%u] + %u;\n", word(), word(),
			     rnd_below(64), rnd_below(4096));
			break;
		case 14:
			putf(&o, "#include <%s/%s.h>\n", word(), word());
			break;
		default:
			putf(&o, "\t/* %s %s %s */\n}\n", word(), word(),
			     word());
			break;
		}
	}
}

static void fold_copy(u8 *dst, const u8 *src, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		dst[i] = textsearch_fold(src[i]);
}

/* Non-overlapping occurrences, the way textsearch_next() counts them. */
static unsigned long memmem_count(const u8 *hay, size_t n, const u8 *pat,
				  size_t len)
{
	const u8 *p = hay, *end = hay + n;
	unsigned long count = 0;

	while ((p = memmem(p, (size_t)(end - p), pat, len)) != NULL) {
		count++;
		p += len;
	}
	return count;
}

/* ---- patterns --------------------------------------------------------------- */

struct pattern {
	char text[260];
	unsigned int len;
	unsigned long expect[2];       /* matches, exact and icase */
	unsigned long expect_slice[2]; /* the same in the first quarter */
};

static struct pattern pats[NROW][2]; /* [row][ABSENT/RARE] */

/* A lowercase pattern of @len bytes that does not occur in the folded
 * corpus, so it is absent whatever the case.  Short ones are random letters
 * (the syllables leave many letter pairs unused), long ones are runs of
 * vocabulary words, the way a real search looks. */
static void pick_absent(char *dst, unsigned int len, const u8 *folded, size_t n,
			const char *avoid)
{
	unsigned int tries, i;

	for (tries = 0; tries < 1000; tries++) {
		if (len <= 4) {
			for (i = 0; i < len; i++)
				dst[i] = (char)('a' + rnd_below(26));
		} else {
			char buf[600] = "";

			while (strlen(buf) < len) {
				strcat(buf, word());
				strcat(buf, " ");
			}
			memcpy(dst, buf, len);
		}
		dst[len] = '\0';
		if (avoid && !strcmp(dst, avoid))
			continue;
		if (!memmem(folded, n, dst, len))
			return;
	}
	fprintf(stderr, "bench: no absent pattern of length %u\n", len);
	exit(2);
}

static void choose_patterns(u8 *corpus, u8 *folded, size_t n)
{
	unsigned int r, k, p = 0;

	for (r = 0; r < NROW; r++) {
		struct pattern *a = &pats[r][ABSENT], *q = &pats[r][RARE];

		if (r == PTHREAD_ROW) {
			strcpy(q->text, "pthread_mutex_lock");
			strcpy(a->text, "pthread_mutex_lick");
		} else if (lengths[r] == 1) {
			strcpy(q->text, "@");
			strcpy(a->text, "~");
		} else {
			pick_absent(q->text, lengths[r], folded, n, NULL);
			pick_absent(a->text, lengths[r], folded, n, q->text);
		}
		q->len = (unsigned int)strlen(q->text);
		a->len = (unsigned int)strlen(a->text);
	}
	/* Plant the rare ones, spread over the whole corpus; every other copy
	 * starts with a capital so that case-insensitive searches find more. */
	for (r = 0; r < NROW; r++) {
		struct pattern *q = &pats[r][RARE];

		for (k = 0; k < PLANTS; k++, p++) {
			size_t at = (size_t)((k + (r + 0.5) / NROW) *
					     ((double)n / PLANTS));
			if (at + q->len > n)
				at = n - q->len - 1;
			memcpy(corpus + at, q->text, q->len);
			if (k & 1)
				corpus[at] = (u8)(corpus[at] -
						  32 * (corpus[at] >= 'a' &&
							corpus[at] <= 'z'));
			fold_copy(folded + at, corpus + at, q->len);
		}
	}
	(void)p;
	for (r = 0; r < NROW; r++)
		for (k = 0; k < 2; k++) {
			struct pattern *x = &pats[r][k];
			u8 low[260];

			fold_copy(low, (const u8 *)x->text, x->len);
			x->expect[0] = memmem_count(
				corpus, n, (const u8 *)x->text, x->len);
			x->expect[1] = memmem_count(folded, n, low, x->len);
			x->expect_slice[0] = memmem_count(corpus, n / SLICE_DIV,
							  (const u8 *)x->text,
							  x->len);
			x->expect_slice[1] = memmem_count(folded, n / SLICE_DIV,
							  low, x->len);
		}
}

/* ---- timing ------------------------------------------------------------------ */

typedef bench_run_fn run_fn;

static double best_time_reps(run_fn fn, void *ctx, unsigned long *count,
			     int reps_max)
{
	return bench_best(fn, ctx, count, reps_max, budget);
}

static double best_time(run_fn fn, void *ctx, unsigned long *count)
{
	return best_time_reps(fn, ctx, count, max_reps);
}

static const u8 *corpus;
static const u8 *folded;
static size_t corpus_len;
/* What one timed pass searches: the whole corpus, or its first quarter for
 * the slow cells (see measure_algos()). */
static size_t search_len;

/* ---- our searches ------------------------------------------------------------ */

struct blocks {
	const u8 *base;
	unsigned int len, bs;
};

/* Serves the corpus in fixed-size blocks: what a packet or page provider
 * does, with the cost of one call per block. */
static unsigned int block_next(unsigned int consumed, const u8 **dst,
			       struct ts_config *conf, struct ts_state *state)
{
	struct blocks b;
	unsigned int room, left;

	(void)conf;
	memcpy(&b, state->cb, sizeof(b));
	if (consumed >= b.len)
		return 0;
	room = b.bs - consumed % b.bs;
	left = b.len - consumed;
	*dst = b.base + consumed;
	return room < left ? room : left;
}

struct ts_run {
	struct ts_config *conf;
	unsigned int bs;
};

static unsigned long run_ts(void *arg)
{
	struct ts_run *r = arg;
	struct ts_state state;
	unsigned long count = 0;
	unsigned int pos;

	if (!r->bs) {
		pos = textsearch_find_continuous(r->conf, &state, corpus,
						 (unsigned int)search_len);
	} else {
		struct blocks b = { corpus, (unsigned int)search_len, r->bs };

		memcpy(state.cb, &b, sizeof(b));
		pos = textsearch_find_with(r->conf, &state, block_next, NULL);
	}
	for (; pos != UINT_MAX; pos = textsearch_next(r->conf, &state))
		count++;
	return count;
}

/* ---- baselines ---------------------------------------------------------------- */

struct mm_run {
	const u8 *hay;
	const char *pat;
	unsigned int len;
};

static unsigned long run_memmem(void *arg)
{
	struct mm_run *m = arg;

	return memmem_count(m->hay, search_len, (const u8 *)m->pat, m->len);
}

static unsigned long run_memchr(void *arg)
{
	const u8 *p = corpus, *end = corpus + search_len;
	unsigned long count = 0;

	(void)arg;
	while ((p = memchr(p, '~', (size_t)(end - p))) != NULL) {
		count++;
		p++;
	}
	return count;
}

#ifdef HAVE_HS
struct hs_run {
	hs_database_t *block, *stream;
	hs_scratch_t *scratch;
};

static int on_match(unsigned int id, unsigned long long from,
		    unsigned long long to, unsigned int flags, void *ctx)
{
	(void)id;
	(void)from;
	(void)to;
	(void)flags;
	++*(unsigned long *)ctx;
	return 0;
}

static unsigned long run_hs_block(void *arg)
{
	struct hs_run *h = arg;
	unsigned long count = 0;

	hs_scan(h->block, (const char *)corpus, (unsigned int)search_len, 0,
		h->scratch, on_match, &count);
	return count;
}

static unsigned long run_hs_stream(void *arg)
{
	struct hs_run *h = arg;
	unsigned long count = 0;
	hs_stream_t *s;
	size_t off;

	if (hs_open_stream(h->stream, 0, &s) != HS_SUCCESS)
		return ULONG_MAX;
	for (off = 0; off < search_len; off += 1500) {
		size_t n = search_len - off < 1500 ? search_len - off : 1500;

		hs_scan_stream(s, (const char *)corpus + off, (unsigned int)n,
			       0, h->scratch, on_match, &count);
	}
	hs_close_stream(s, h->scratch, on_match, &count);
	return count;
}

/* The literal API: no escaping, every byte of the pattern is literal. */
static int hs_prepare(struct hs_run *h, const struct pattern *p, int icase)
{
	hs_compile_error_t *err = NULL;
	unsigned int flags = icase ? HS_FLAG_CASELESS : 0;

	if (hs_compile_lit(p->text, flags, p->len, HS_MODE_BLOCK, NULL,
			   &h->block, &err) != HS_SUCCESS ||
	    hs_compile_lit(p->text, flags, p->len, HS_MODE_STREAM, NULL,
			   &h->stream, &err) != HS_SUCCESS) {
		fprintf(stderr, "bench: hyperscan: %s\n",
			err ? err->message : "?");
		hs_free_compile_error(err);
		return -1;
	}
	h->scratch = NULL;
	if (hs_alloc_scratch(h->block, &h->scratch) != HS_SUCCESS ||
	    hs_alloc_scratch(h->stream, &h->scratch) != HS_SUCCESS)
		return -1;
	return 0;
}

static void hs_release(struct hs_run *h)
{
	hs_free_scratch(h->scratch);
	hs_free_database(h->block);
	hs_free_database(h->stream);
}
#endif

/* ---- results ------------------------------------------------------------------- */

static const char *algos[MAX_ALGOS];
static unsigned int nalgos;
static int kmp_index = -1;

/* GB/s; 0 = not measured */
static double res[MAX_ALGOS][NMODE][2][2][NROW]; /* algo mode case kind row */
static unsigned char sliced[MAX_ALGOS][NMODE][2][2][NROW];
static double mm_gbps[2][2][NROW]; /* case kind row */
static double hsb_gbps[2][2][NROW], hss_gbps[2][2][NROW];
static double memchr_gbps;
static int wrong;

static double gbps(double seconds)
{
	return (double)search_len / seconds / 1e9;
}

static void ratio(char *out, size_t n, double a, double b)
{
	if (a > 0 && b > 0)
		snprintf(out, n, "%.2f", a / b);
	else
		snprintf(out, n, "n/a");
}

static void row_label(char *out, size_t n, unsigned int r)
{
	if (r == PTHREAD_ROW)
		snprintf(out, n, "18*");
	else
		snprintf(out, n, "%u", lengths[r]);
}

static void mode_label(char *out, size_t n, unsigned int m)
{
	if (m)
		snprintf(out, n, "blk%u", block_sizes[m]);
	else
		snprintf(out, n, "contig");
}

/* One row: our figure (or a baseline's) and its ratios, in mode @m. */
static void print_line(unsigned int m, int c, int k, unsigned int r,
		       const char *name, double v, int slice)
{
	const struct pattern *p = &pats[r][k];
	size_t bytes = slice ? corpus_len / SLICE_DIV : corpus_len;
	char mode[16], len[8], x[5][16];

	mode_label(mode, sizeof(mode), m);
	row_label(len, sizeof(len), r);
	ratio(x[0], sizeof(x[0]), v, memchr_gbps);
	ratio(x[1], sizeof(x[1]), v, mm_gbps[c][k][r]);
	ratio(x[2], sizeof(x[2]), v, hsb_gbps[c][k][r]);
	ratio(x[3], sizeof(x[3]), v, hss_gbps[c][k][r]);
	ratio(x[4], sizeof(x[4]), v,
	      kmp_index >= 0 ? res[kmp_index][m][c][k][r] : 0);
	printf("%-7s %-5s %-6s %4s %-15s %6.2f %7s %7s %7s %7s %7s %4zuM %lu\n",
	       mode, case_name[c], kind_name[k], len, name, v, x[0], x[1], x[2],
	       x[3], x[4], bytes >> 20,
	       slice ? p->expect_slice[c] : p->expect[c]);
}

/* ---- the throughput table --------------------------------------------------------- */

static void discover(const char *list)
{
	char buf[512], *save = NULL, *name;
	char skipped[512] = "";

	snprintf(buf, sizeof(buf), "%s", list);
	for (name = strtok_r(buf, " ,", &save); name;
	     name = strtok_r(NULL, " ,", &save)) {
		struct ts_config *conf = textsearch_prepare(
			name, "abcd", 4, GFP_KERNEL, TS_AUTOLOAD);

		if (IS_ERR(conf)) {
			strcat(skipped, " ");
			strncat(skipped, name, 32);
			continue;
		}
		textsearch_destroy(conf);
		if (nalgos < MAX_ALGOS) {
			if (!strcmp(name, "kmp"))
				kmp_index = (int)nalgos;
			algos[nalgos++] = strdup(name);
		}
	}
	printf("algorithms: ");
	for (unsigned int i = 0; i < nalgos; i++)
		printf("%s%s", i ? " " : "", algos[i]);
	printf("\nnot registered, skipped:%s\n", *skipped ? skipped : " none");
}

static void measure_baselines(void)
{
	unsigned long count;
	int c, k;
	unsigned int r;

	memchr_gbps = gbps(best_time(run_memchr, NULL, &count));
	for (c = 0; c < 2; c++)
		for (k = 0; k < 2; k++)
			for (r = 0; r < NROW; r++) {
				const struct pattern *p = &pats[r][k];
				char low[260];
				struct mm_run m = { c ? folded : corpus,
						    p->text, p->len };

				/* icase: memmem over a copy folded
				 * beforehand, folding not timed */
				if (c) {
					fold_copy((u8 *)low,
						  (const u8 *)p->text, p->len);
					m.pat = low;
				}
				mm_gbps[c][k][r] =
					gbps(best_time(run_memmem, &m, &count));
#ifdef HAVE_HS
				struct hs_run h;

				if (hs_prepare(&h, p, c) == 0) {
					hsb_gbps[c][k][r] = gbps(best_time(
						run_hs_block, &h, &count));
					if (count != p->expect[c])
						printf("note: hs-block counts %lu, memmem %lu (%s)\n",
						       count, p->expect[c],
						       p->text);
					hss_gbps[c][k][r] = gbps(best_time(
						run_hs_stream, &h, &count));
					hs_release(&h);
				}
#endif
			}
}

static void check_count(unsigned int a, unsigned int m, int c, int k,
			const struct pattern *p, unsigned long count,
			unsigned long expect)
{
	if (count == expect)
		return;
	printf("WRONG: %s %s %s '%s' block %u: %lu matches, memmem %lu\n",
	       algos[a], case_name[c], kind_name[k], p->text, block_sizes[m],
	       count, expect);
	wrong = 1;
}

/* A cell is first timed once on the first quarter of the corpus; if that
 * runs slower than SLOW_GBPS, the whole cell stays on the quarter (the
 * algorithm is compute-bound there, so the figure hardly changes, and a
 * full run keeps within minutes); otherwise it is timed on everything. */
static void measure_cell(unsigned int a, unsigned int m, int c, int k,
			 unsigned int r, struct ts_run *run)
{
	const struct pattern *p = &pats[r][k];
	unsigned long count;
	double t;

	run->bs = block_sizes[m];
	search_len = corpus_len / SLICE_DIV;
	t = gbps(best_time_reps(run_ts, run, &count, 1));
	check_count(a, m, c, k, p, count, p->expect_slice[c]);
	if (t < SLOW_GBPS) {
		/* half the budget: far from every target, and the rest of the
		 * run is waiting */
		double t2;

		budget /= 2;
		t2 = gbps(best_time(run_ts, run, &count));
		budget *= 2;

		res[a][m][c][k][r] = t2 > t ? t2 : t;
		sliced[a][m][c][k][r] = 1;
		check_count(a, m, c, k, p, count, p->expect_slice[c]);
	} else {
		search_len = corpus_len;
		res[a][m][c][k][r] = gbps(best_time(run_ts, run, &count));
		check_count(a, m, c, k, p, count, p->expect[c]);
	}
	search_len = corpus_len;
}

static void measure_algos(void)
{
	unsigned int a, m, r;
	int c, k;

	for (a = 0; a < nalgos; a++) {
		double t0 = bench_wall();
		/* auto's cells are the ones held against the targets: they
		 * get the baselines' passes, so one disturbed stretch of
		 * the run cannot decide a target */
		bool checked = !strcmp(algos[a], "auto");

		if (checked) {
			budget *= 3;
			max_reps += 2;
		}
		for (c = 0; c < 2; c++)
			for (k = 0; k < 2; k++)
				for (r = 0; r < NROW; r++) {
					struct ts_run run;

					run.conf = textsearch_prepare(
						algos[a], pats[r][k].text,
						pats[r][k].len, GFP_KERNEL,
						TS_AUTOLOAD |
							(c ? TS_IGNORECASE :
							     0));
					if (IS_ERR(run.conf))
						continue; /* e.g. a length limit */
					for (m = 0; m < NMODE; m++)
						measure_cell(a, m, c, k, r,
							     &run);
					textsearch_destroy(run.conf);
				}
		if (checked) {
			budget /= 3;
			max_reps -= 2;
		}
		fprintf(stderr, "bench: %s timed in %.0f s\n", algos[a],
			bench_wall() - t0);
	}
}

static void print_table(void)
{
	unsigned int a, m, r;
	int c, k;

	printf("\nGB/s = corpus bytes / best pass; x NAME = this GB/s over NAME's GB/s\n"
	       "for the same pattern, case and kind (memmem and hs-block are contiguous,\n"
	       "hs-s15 is Hyperscan stream mode fed 1500-byte blocks); x kmp is in the\n"
	       "same mode; 18* = pthread_mutex_lock / pthread_mutex_lick (common prefix).\n"
	       "icase memmem searches a copy of the corpus folded beforehand (folding not timed).\n"
	       "data = bytes one pass searched: cells slower than %.0f GB/s are timed on the\n"
	       "first quarter of the corpus (they are compute-bound, and it keeps a run short).\n\n",
	       SLOW_GBPS);
	printf("%-7s %-5s %-6s %4s %-15s %6s %7s %7s %7s %7s %7s %5s %s\n",
	       "mode", "case", "kind", "len", "algorithm", "GB/s", "xmemchr",
	       "xmemmem", "xhs-blk", "xhs-s15", "xkmp", "data", "matches");
	printf("%-7s %-5s %-6s %4s %-15s %6.2f %7s %7s %7s %7s %7s %4zuM\n",
	       "contig", "-", "absent", "1", "memchr", memchr_gbps, "1.00", "",
	       "", "", "", corpus_len >> 20);
	for (m = 0; m < NMODE; m++)
		for (c = 0; c < 2; c++)
			for (k = 0; k < 2; k++)
				for (r = 0; r < NROW; r++) {
					if (m == 0) {
						print_line(
							m, c, k, r,
							c ? "memmem(folded)" :
							    "memmem",
							mm_gbps[c][k][r], 0);
						if (hsb_gbps[c][k][r] > 0)
							print_line(
								m, c, k, r,
								"hs-block",
								hsb_gbps[c][k]
									[r],
								0);
					}
					if (m == MODE_1500 &&
					    hss_gbps[c][k][r] > 0)
						print_line(m, c, k, r,
							   "hs-stream1500",
							   hss_gbps[c][k][r],
							   0);
					for (a = 0; a < nalgos; a++)
						if (res[a][m][c][k][r] > 0)
							print_line(
								m, c, k, r,
								algos[a],
								res[a][m][c][k]
								   [r],
								sliced[a][m][c]
								      [k][r]);
				}
}

/* ---- targets ---------------------------------------------------------------------- */

/* The algorithm the targets are about: "auto" when it exists, else the
 * first one that is not one of the scalar three, else the fastest of
 * those per cell. */
static int champion(void)
{
	unsigned int a;

	for (a = 0; a < nalgos; a++)
		if (!strcmp(algos[a], "auto"))
			return (int)a;
	for (a = 0; a < nalgos; a++)
		if (strcmp(algos[a], "kmp") && strcmp(algos[a], "bm") &&
		    strcmp(algos[a], "shiftor"))
			return (int)a;
	return -1;
}

static double champ_value(int ch, unsigned int m, int c, int k, unsigned int r)
{
	double best = 0;
	unsigned int a;

	if (ch >= 0)
		return res[ch][m][c][k][r];
	for (a = 0; a < nalgos; a++)
		if (res[a][m][c][k][r] > best)
			best = res[a][m][c][k][r];
	return best;
}

struct target {
	const char *what;
	double need, worst;
	char where[96];
	int cells, failed, unknown;
};

static void check(struct target *t, double ours, double theirs, const char *fmt,
		  ...) __attribute__((format(printf, 4, 5)));
static void check(struct target *t, double ours, double theirs, const char *fmt,
		  ...)
{
	double x;
	va_list ap;

	if (ours <= 0 || theirs <= 0) {
		t->unknown++;
		return;
	}
	x = ours / theirs;
	t->cells++;
	if (x < t->need)
		t->failed++;
	if (t->cells == 1 || x < t->worst) {
		t->worst = x;
		va_start(ap, fmt);
		vsnprintf(t->where, sizeof(t->where), fmt, ap);
		va_end(ap);
	}
}

static void report(const struct target *t)
{
	if (!t->cells) {
		printf("  %-48s not measurable (a baseline is missing)\n",
		       t->what);
		return;
	}
	printf("  %-48s %s: %d of %d cells below %.1fx; worst %.2fx (%s)%s\n",
	       t->what, t->failed ? "NOT MET" : "met", t->failed, t->cells,
	       t->need, t->worst, t->where,
	       t->unknown ? " [some cells unmeasured]" : "");
}

static void print_targets(void)
{
	struct target t_hsb = {
		"len>=4: >=1.0x hs-block (contig)", 1.0, 0, "", 0, 0, 0
	};
	struct target t_hss = { "len>=4: >=1.2x hs-stream (1500-byte blocks)",
				1.2,
				0,
				"",
				0,
				0,
				0 };
	struct target t_mc = {
		"len>=8: >=1.0x memchr (contig)", 1.0, 0, "", 0, 0, 0
	};
	struct target t_mm = {
		"all: >=3x memmem (contig)", 3.0, 0, "", 0, 0, 0
	};
	struct target t_kmp = {
		"all: >=30x kmp (every mode)", 30.0, 0, "", 0, 0, 0
	};
	struct target t_ic = {
		"icase >=0.7x exact (every mode)", 0.7, 0, "", 0, 0, 0
	};
	int ch = champion(), c, k;
	unsigned int r, m, len;
	char mode[16], lab[8];

	printf("\ntargets, for %s:\n",
	       ch >= 0 ?
		       algos[ch] :
		       "the fastest of the available algorithms, cell by cell");
	for (c = 0; c < 2; c++)
		for (k = 0; k < 2; k++)
			for (r = 0; r < NROW; r++) {
				len = pats[r][k].len;
				row_label(lab, sizeof(lab), r);
				if (len >= 4) {
					check(&t_hsb,
					      champ_value(ch, 0, c, k, r),
					      hsb_gbps[c][k][r], "%s %s len %s",
					      case_name[c], kind_name[k], lab);
					check(&t_hss,
					      champ_value(ch, MODE_1500, c, k,
							  r),
					      hss_gbps[c][k][r], "%s %s len %s",
					      case_name[c], kind_name[k], lab);
				}
				if (len >= 8)
					check(&t_mc,
					      champ_value(ch, 0, c, k, r),
					      memchr_gbps, "%s %s len %s",
					      case_name[c], kind_name[k], lab);
				check(&t_mm, champ_value(ch, 0, c, k, r),
				      mm_gbps[c][k][r], "%s %s len %s",
				      case_name[c], kind_name[k], lab);
				for (m = 0; m < NMODE; m++) {
					mode_label(mode, sizeof(mode), m);
					if (kmp_index >= 0 && kmp_index != ch)
						check(&t_kmp,
						      champ_value(ch, m, c, k,
								  r),
						      res[kmp_index][m][c][k][r],
						      "%s %s %s len %s", mode,
						      case_name[c],
						      kind_name[k], lab);
					if (c)
						check(&t_ic,
						      champ_value(ch, m, 1, k,
								  r),
						      champ_value(ch, m, 0, k,
								  r),
						      "%s %s len %s", mode,
						      kind_name[k], lab);
				}
			}
	report(&t_hsb);
	report(&t_hss);
	report(&t_mc);
	report(&t_mm);
	report(&t_kmp);
	report(&t_ic);
}

/* ---- whole processes ------------------------------------------------------------ */

/* Runs argv with stdout read back; returns wall seconds, or -1, and
 * stores the child's CPU seconds (user + system) in *cpu. */
double bench_run_process(char *const argv[], char *out, size_t outsz,
			 double *cpu)
{
	struct rusage ru;
	int fds[2], status;
	double t0;
	pid_t pid;
	ssize_t got;
	size_t have = 0;

	if (pipe(fds))
		return -1;
	t0 = bench_wall();
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(fds[1]);
	while ((got = read(fds[0], out + have, outsz - 1 - have)) > 0)
		have += (size_t)got;
	close(fds[0]);
	out[have] = '\0';
	if (wait4(pid, &status, 0, &ru) < 0)
		return -1;
	*cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
	if (!WIFEXITED(status) || WEXITSTATUS(status) > 1)
		return -1; /* grep's 2 = error */
	return bench_wall() - t0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int on_path(const char *prog)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", prog);
	return system(cmd) == 0;
}

static void processes(const char *file, const char *tsgrep)
{
	const char *tools[3] = { tsgrep, "grep", "rg" };
	int have[3];
	const int runs = quick ? 3 : 7;
	unsigned int pi, t;
	int ic, i;
	/* the common prefix, a short and a long absent pattern */
	static const unsigned int which[][2] = { { PTHREAD_ROW, RARE },
						 { 3, ABSENT },	  /* 4 bytes */
						 { 6, ABSENT } }; /* 32 bytes */

	have[0] = tsgrep && access(tsgrep, X_OK) == 0;
	have[1] = on_path("grep");
	have[2] = on_path("rg");
	printf("\nwhole process, median of %d runs, LC_ALL=C, file %s (%zu bytes),\n"
	       "seconds wall (CPU):\n",
	       runs, file, corpus_len);
	if (!have[0])
		printf("  tsgrep: skipped, %s does not exist yet\n",
		       tsgrep ? tsgrep : "(no --tsgrep)");
	if (!have[2])
		printf("  rg: skipped, not installed (scripts/install-deps.sh --bench)\n");
	setenv("LC_ALL", "C", 1);
	printf("  %-32s %-8s %13s %13s %13s %s\n", "pattern", "options",
	       "tsgrep", "grep -F", "rg -F", "counts");
	for (pi = 0; pi < sizeof(which) / sizeof(which[0]); pi++)
		for (ic = 0; ic < 2; ic++) {
			const struct pattern *p =
				&pats[which[pi][0]][which[pi][1]];
			double med[3] = { 0, 0, 0 }, medcpu[3] = { 0, 0, 0 };
			char counts[3][64] = { "-", "-", "-" };

			for (t = 0; t < 3; t++) {
				double times[16], cpus[16];
				char *argv[8], out[64];
				int n = 0, ok = 1;

				if (!have[t])
					continue;
				argv[n++] = (char *)tools[t];
				argv[n++] = "-F";
				if (ic)
					argv[n++] = "-i";
				argv[n++] = "-c";
				argv[n++] = "--";
				argv[n++] = (char *)p->text;
				argv[n++] = (char *)file;
				argv[n] = NULL;
				for (i = 0; i < runs && ok; i++) {
					times[i] = bench_run_process(
						argv, out, sizeof(out),
						&cpus[i]);
					ok = times[i] >= 0;
				}
				if (!ok) {
					snprintf(counts[t], sizeof(counts[t]),
						 "error");
					continue;
				}
				qsort(times, (size_t)runs, sizeof(double),
				      cmp_double);
				med[t] = times[runs / 2];
				qsort(cpus, (size_t)runs, sizeof(double),
				      cmp_double);
				medcpu[t] = cpus[runs / 2];
				/* rg -c prints nothing when nothing matches */
				out[strcspn(out, "\n")] = '\0';
				snprintf(counts[t], sizeof(counts[t]), "%s",
					 *out ? out : "0");
			}
			char cell[3][32];

			for (t = 0; t < 3; t++)
				if (med[t] > 0)
					snprintf(cell[t], 32, "%.3f (%.3f)",
						 med[t], medcpu[t]);
				else
					snprintf(cell[t], 32, "-");
			printf("  %-32.32s %-8s %13s %13s %13s %s/%s/%s",
			       p->text, ic ? "-F -i -c" : "-F -c", cell[0],
			       cell[1], cell[2], counts[0], counts[1],
			       counts[2]);
			if (med[0] > 0 && med[2] > 0)
				printf("  tsgrep/rg %.2fx (%s)",
				       med[0] / med[2],
				       med[0] <= med[2] ? "met" : "NOT MET");
			printf("\n");
		}
}

/* Other work on the machine shows up as noise; say how busy it was. */
static void print_load(const char *when)
{
	char line[128] = "?";
	FILE *f = fopen("/proc/loadavg", "r");

	if (f) {
		if (!fgets(line, sizeof(line), f))
			strcpy(line, "?");
		fclose(f);
	}
	line[strcspn(line, "\n")] = '\0';
	printf("load average %s: %s\n", when, line);
}

static void write_corpus(const char *file)
{
	FILE *f = fopen(file, "wb");

	if (!f || fwrite(corpus, 1, corpus_len, f) != corpus_len || fclose(f)) {
		fprintf(stderr, "bench: cannot write %s: %s\n", file,
			strerror(errno));
		exit(2);
	}
}

int main(int argc, char **argv)
{
	const char *file = NULL, *tsgrep = NULL;
	const char *list = getenv("BENCH_ALGOS");
	int blocks_only = 0, utf8_only = 0;
	u8 *buf, *fbuf;
	double t0 = bench_wall();
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick"))
			quick = 1;
		else if (!strcmp(argv[i], "--sets"))
			sets = 1;
		else if (!strcmp(argv[i], "--sets-only"))
			sets = sets_only = 1;
		else if (!strcmp(argv[i], "--corpus") && i + 1 < argc)
			file = argv[++i];
		else if (!strcmp(argv[i], "--tsgrep") && i + 1 < argc)
			tsgrep = argv[++i];
		else if (!strcmp(argv[i], "--algos") && i + 1 < argc)
			list = argv[++i];
		else if (!strcmp(argv[i], "--blocks-only"))
			blocks_only = 1;
		else if (!strcmp(argv[i], "--utf8-only"))
			utf8_only = 1;
		else if (!strcmp(argv[i], "--stream"))
			streams = 1;
		else if (!strcmp(argv[i], "--stream-only"))
			streams = streams_only = 1;
		else if (!strcmp(argv[i], "--timers"))
			timers = 1;
		else if (!strcmp(argv[i], "--timers-only"))
			timers = timers_only = 1;
		else {
			fprintf(stderr,
				"usage: %s [--quick] [--corpus FILE] "
				"[--tsgrep PATH] [--algos \"a b\"] "
				"[--blocks-only] [--sets | --sets-only] "
				"[--stream | --stream-only] "
				"[--timers | --timers-only] [--utf8-only]\n",
				argv[0]);
			return 2;
		}
	}
	if (!list || !*list)
		list = default_algos;
	/* the table appears as it is measured, in order with the progress
	 * lines on stderr */
	setvbuf(stdout, NULL, _IOLBF, 0);
	corpus_len = quick ? QUICK_SIZE : FULL_SIZE;
	search_len = corpus_len;
	budget = quick ? 0.02 : 0.12;
	max_reps = quick ? 2 : 5;

	buf = malloc(corpus_len);
	fbuf = malloc(corpus_len);
	if (!buf || !fbuf)
		return 2;
	make_corpus((char *)buf, corpus_len);
	fold_copy(fbuf, buf, corpus_len);
	choose_patterns(buf, fbuf, corpus_len);
	corpus = buf;
	folded = fbuf;

	printf("textsearch bench%s: %zu-byte corpus, seed %#llx, single thread, "
	       "best of up to %d passes\n",
	       quick ? " (quick)" : "", corpus_len, (unsigned long long)SEED,
	       max_reps);
	if (quick)
		printf("quick run: the corpus fits in the caches, so the figures "
		       "only show that everything runs and counts right\n");
#ifdef HAVE_HS
	printf("hyperscan %s\n", hs_version());
#else
	printf("hyperscan: not built in (no pkg-config libhs; "
	       "scripts/install-deps.sh --bench), its columns say n/a\n");
#endif
	print_load("at start");
	if (blocks_only)
		return bench_blocks(corpus, corpus_len, quick) ? 1 : 0;
	if (utf8_only) {
		if (file)
			write_corpus(file);
		return bench_utf8(buf, corpus_len, file, quick);
	}
	if (sets_only) {
		wrong = bench_sets(buf, corpus_len, quick);
		print_load("at end");
		return wrong;
	}
	if (timers_only)
		return bench_timer(quick);
	if (streams_only) {
		wrong = bench_stream(buf, corpus_len, quick);
		print_load("at end");
		return wrong;
	}
	discover(list);
	/* The baselines are the denominators of every ratio: time them with
	 * more passes, so one disturbed pass does not move a whole column. */
	budget *= 3;
	max_reps += 2;
	measure_baselines();
	budget /= 3;
	max_reps -= 2;
	measure_algos();
	print_table();
	print_targets();
	wrong += bench_blocks(corpus, corpus_len, quick);
	if (file) {
		write_corpus(file);
		processes(file, tsgrep);
	}
	wrong |= bench_utf8(buf, corpus_len, file, quick);
	if (sets)
		wrong |= bench_sets(buf, corpus_len, quick);
	if (streams)
		wrong |= bench_stream(buf, corpus_len, quick);
	if (timers)
		wrong |= bench_timer(quick);
	printf("\n");
	print_load("at end");
	printf("bench: %.0f s%s\n", bench_wall() - t0,
	       wrong ? "; WRONG match counts above" : "");
	return wrong;
}
