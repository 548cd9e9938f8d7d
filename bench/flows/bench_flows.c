/*
 * bench_flows.c - tspkt's TCP streams without the capture around them:
 * reassembly (tools/tspkt/reasm.c) feeding a push-mode search, and the
 * flow table's memory (tools/tspkt/flow.c).  `make bench` runs it after
 * the library's tables.
 *
 *   bench_flows [--quick]
 *
 * 1. One in-order flow of 1460-byte segments, in cache: a 256 KiB stream
 *    (the bench corpus's alphabet, the pattern absent) cut into segments
 *    and given to reasm_add() one by one, each run written to a
 *    textsearch stream ("auto", an 8-byte pattern, TS_OVERLAP), in GB/s;
 *    beside it the same writes to the stream without reassembly, so the
 *    ratio is what reassembly costs.  Target (issue 13): 5 GB/s or more.
 * 2. A million idle flows (one SYN each, their time-outs pending on a timer
 *    wheel at HZ 250): heap bytes in use (mallinfo2), total and per flow.
 *    Target: within 256 MB.
 *
 * Times are the best of several passes in CPU time of this thread.
 */
#include <textsearch.h>
#include <textsearch_stream.h>
#include <textsearch_timer.h>

#include <malloc.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flow.h"
#include "reasm.h"

#define STREAM_BYTES (256u << 10)
#define SEG 1460u

static double cpu_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

struct sink {
	struct ts_stream *s;
	unsigned long matches;
};

static int on_data(void *opaque, uint64_t off, const uint8_t *p, size_t len)
{
	struct sink *k = opaque;
	struct ts_match m;

	(void)off;
	textsearch_stream_write(k->s, p, len);
	while (textsearch_stream_next(k->s, &m) > 0)
		k->matches++;
	return 0;
}

static int on_gap(void *opaque, uint64_t off, uint64_t len)
{
	(void)opaque;
	(void)off;
	(void)len;
	return 0;
}

static int on_end(void *opaque, uint64_t off)
{
	(void)opaque;
	(void)off;
	return 0;
}

/* One pass: the stream's segments through reassembly (or straight to the
 * search), @rounds times over. */
static double one_pass(struct ts_config *conf, const uint8_t *data,
		       unsigned int rounds, bool reassemble,
		       unsigned long *matches)
{
	struct reasm_ctx ctx;
	struct reasm_dir d;
	struct sink k = { .s = textsearch_stream_open(conf, GFP_KERNEL) };
	const struct reasm_consumer c = {
		.data = on_data, .gap = on_gap, .end = on_end, .opaque = &k
	};
	struct reasm_config cfg = { .depth = 0 };
	uint32_t seq = 1000;
	double t0;

	if (IS_ERR(k.s)) {
		fprintf(stderr, "bench_flows: stream: %s\n",
			textsearch_last_error());
		exit(2);
	}
	reasm_ctx_init(&ctx, &cfg);
	reasm_dir_init(&d);
	reasm_add(&ctx, &d, &c, seq, NULL, 0, REASM_SYN);
	seq++;
	t0 = cpu_ns();
	for (unsigned int r = 0; r < rounds; r++) {
		for (unsigned int off = 0; off < STREAM_BYTES; off += SEG) {
			unsigned int n = STREAM_BYTES - off < SEG ?
						 STREAM_BYTES - off :
						 SEG;

			if (reassemble)
				reasm_add(&ctx, &d, &c, seq, data + off, n, 0);
			else
				on_data(&k, 0, data + off, n);
			seq += n;
		}
	}
	t0 = cpu_ns() - t0;
	reasm_dir_free(&ctx, &d);
	textsearch_stream_free(k.s);
	*matches = k.matches;
	return t0;
}

static void bench_reassembly(bool quick)
{
	static const char alphabet[] =
		"abcdefghijklmnopqrstuvwxyz      ETAOINSHRDLU.,\n";
	uint8_t *data = malloc(STREAM_BYTES);
	const unsigned int rounds = quick ? 8 : 64, passes = quick ? 2 : 5;
	uint64_t x = 0x9e3779b97f4a7c15ull;
	struct ts_config *conf;
	double best[2] = { 1e30, 1e30 };
	unsigned long m[2] = { 0, 0 };

	if (!data)
		exit(2);
	for (unsigned int i = 0; i < STREAM_BYTES; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		data[i] = (uint8_t)alphabet[x % (sizeof(alphabet) - 1)];
	}
	conf = textsearch_prepare("auto", "QZXJQZXJ", 8, GFP_KERNEL,
				  TS_AUTOLOAD | TS_OVERLAP);
	if (IS_ERR(conf)) {
		fprintf(stderr, "bench_flows: %s\n", textsearch_last_error());
		exit(2);
	}
	for (unsigned int p = 0; p < passes; p++)
		for (int w = 0; w < 2; w++) {
			double t = one_pass(conf, data, rounds, w == 0, &m[w]);

			if (t < best[w])
				best[w] = t;
		}
	{
		double bytes = (double)STREAM_BYTES * rounds;
		double gr = bytes / best[0], gs = bytes / best[1];

		printf("tcp stream, in cache: one in-order flow of %u-byte "
		       "segments (%u KiB, %u times), an absent 8-byte pattern "
		       "(auto, TS_OVERLAP); GB/s, best of %u\n",
		       SEG, STREAM_BYTES >> 10, rounds, passes);
		printf("  reassembly + search   %7.2f\n", gr);
		printf("  search alone          %7.2f   (reassembly costs "
		       "%.2fx)\n",
		       gs, gs / gr);
		printf("  target: >= 5 GB/s: %s\n",
		       gr >= 5.0 ? "met" : "NOT MET");
		if (m[0] || m[1])
			printf("  (matches %lu %lu: the pattern was meant to be "
			       "absent)\n",
			       m[0], m[1]);
	}
	textsearch_destroy(conf);
	free(data);
}

static void no_end(struct flow *f, enum flow_end why, void *arg)
{
	(void)f;
	(void)why;
	(void)arg;
}

static void bench_idle_flows(bool quick)
{
	const uint32_t n = quick ? 100000 : 1000000;
	const struct flow_ops ops = { .end = no_end };
	struct flow_timeouts to = FLOW_TIMEOUTS_DEFAULT;
	struct timer_base *base = timer_base_create(250);
	struct mallinfo2 a, b;
	struct flow_table *t;
	size_t used;

	if (IS_ERR(base))
		exit(2);
	timer_base_bind(base);
	a = mallinfo2();
	t = flow_table_new(n, base, &to, &ops, NULL);
	if (!t)
		exit(2);
	for (uint32_t i = 0; i < n; i++) {
		uint8_t s[16] = { 10, 0, 0, 1 }, d[16] = { 11 };
		struct flow *f;
		int dir;

		d[1] = (uint8_t)(i >> 16);
		d[2] = (uint8_t)(i >> 8);
		d[3] = (uint8_t)i;
		f = flow_lookup(t, 4, IPPROTO_TCP, s, d, 40000, 80, &dir);
		if (!f)
			exit(2);
		flow_packet(t, f, dir, 40, 0x02 /* SYN */);
	}
	b = mallinfo2();
	used = b.uordblks + b.hblkhd - a.uordblks - a.hblkhd;
	printf("idle flows: %u flows, one SYN each, time-outs pending: %.1f "
	       "MB of heap, %zu bytes per flow (struct flow %zu)\n",
	       n, (double)used / 1e6, used / n, sizeof(struct flow));
	printf("  target: a million within 256 MB: %s\n",
	       (double)used * (1000000.0 / n) <= 256.0 * 1048576 ? "met" :
								   "NOT MET");
	flow_table_free(t);
	timer_base_destroy(base);
}

int main(int argc, char **argv)
{
	bool quick = argc > 1 && !strcmp(argv[1], "--quick");

	bench_reassembly(quick);
	bench_idle_flows(quick);
	return 0;
}
