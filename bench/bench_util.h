/*
 * bench_util.h - what every part of the bench (bench.c, bench_blocks.c,
 * bench_sets.c) measures and draws with: the clocks, best-of-N timing, and
 * a seeded generator that gives the same data on every machine.
 */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <stdint.h>
#include <time.h>

/* splitmix64: tiny, fast, the same sequence everywhere for one seed */
static inline uint64_t bench_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline double bench_clock(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Wall-clock seconds, for what the whole process or other processes do. */
static inline double bench_wall(void)
{
	return bench_clock(CLOCK_MONOTONIC);
}

/* CPU seconds of this thread: on a small shared machine other processes
 * take turns on our core, and the wall clock would charge their turns. */
static inline double bench_cpu(void)
{
	return bench_clock(CLOCK_THREAD_CPUTIME_ID);
}

typedef unsigned long (*bench_run_fn)(void *ctx);

/* One pass of @fn: its CPU time added to *@total, and kept in *@best
 * where lower; *@count is what it returned. */
static inline void bench_pass(bench_run_fn fn, void *ctx, unsigned long *count,
			      double *best, double *total)
{
	double t0 = bench_cpu(), t;

	*count = fn(ctx);
	t = bench_cpu() - t0;
	*total += t;
	if (t < *best)
		*best = t;
}

/* The best CPU time of up to @reps passes of @fn (at least one), stopping
 * once another pass would overrun @budget seconds, so that slow cells get
 * one or two passes.  *@count is what the last pass returned. */
static inline double bench_best(bench_run_fn fn, void *ctx,
				unsigned long *count, int reps, double budget)
{
	double best = 1e30, total = 0;
	int done = 0;

	do
		bench_pass(fn, ctx, count, &best, &total);
	while (++done < reps && total + best < budget);
	return best;
}

/* bench_best() of the @n passes fn[i] on ctx[i], taken in turn: a change
 * in what a shared machine gives (its memory bandwidth, above all) while
 * they run then reaches all of them, and a ratio of their figures keeps
 * to what they cost.  Up to @reps rounds of a pass of each; as in
 * bench_best(), one whose next pass would overrun @budget sits the rest
 * out.  Their best CPU times in best[i], what their last passes returned
 * in count[i]; total[i] is the caller's scratch. */
static inline void bench_best_turns(unsigned int n, const bench_run_fn fn[],
				    void *const ctx[], unsigned long count[],
				    double best[], double total[], int reps,
				    double budget)
{
	unsigned int i;
	int r, ran = 1;

	for (i = 0; i < n; i++) {
		best[i] = 1e30;
		total[i] = 0;
	}
	for (r = 0; r < reps && ran; r++) {
		ran = 0;
		for (i = 0; i < n; i++) {
			if (r && total[i] + best[i] >= budget)
				continue;
			bench_pass(fn[i], ctx[i], &count[i], &best[i],
				   &total[i]);
			ran = 1;
		}
	}
}

#endif
