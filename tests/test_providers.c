/*
 * test_providers.c - the block providers the library ships: iovec arrays
 * and readers over file descriptors and stdio streams.
 *
 * Two kinds of check.  Literal searches (kmp, and the shiftor plugin)
 * against the naive reference, whole find/next sequences, over random
 * iovec splits (empty iovecs included) and over regular files, pipes and
 * FILE * streams read in chunks of 1, 2, 7 bytes and the default.  And a
 * "probe" algorithm that checks the provider contract itself: it reads the
 * whole stream, stepping into the middle of blocks, compares every byte
 * served with what the stream holds, and reports fake matches that make
 * the next call resume before the last block served.
 *
 * TS_TEST_CASES scales the number of random cases; TS_TEST_SEED repeats.
 */
#define _GNU_SOURCE /* MAP_NORESERVE, pthread_kill */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "testsupport.h"

static unsigned long cases(unsigned long dflt)
{
	const char *env = getenv("TS_TEST_CASES");
	unsigned long n;

	if (!env)
		return dflt;
	/* TS_TEST_CASES is sized for the differential test (400000) */
	n = strtoul(env, NULL, 0) / (400000ul / dflt);
	return n ? n : 1;
}

/* ---- the probe algorithm ---- */

enum probe_mode {
	PROBE_ANY,     /* the next call may resume anywhere after the last */
	PROBE_HISTORY, /* ... at or after the second-to-last block asked */
	PROBE_JUMP,    /* ask for a few given offsets, nothing else */
};

static struct probe {
	const u8 *want;
	unsigned int len;
	enum probe_mode mode;
	struct rng rng;
	unsigned long calls, blocks;
	unsigned int errors;	 /* blocks served wrong */
	unsigned int short_ends; /* the data ended before len */
	unsigned int jump_at, jump_n[3];
	const u8 *jump_dst;
} probe;

static unsigned int probe_find(struct ts_config *conf, struct ts_state *state)
{
	unsigned int start = state->offset, pos = start, n, lo, e, p;
	unsigned int last = start, before_last = start;
	const u8 *blk;

	probe.calls++;
	if (probe.mode == PROBE_JUMP) {
		probe.jump_n[0] = conf->get_next_block(
			probe.jump_at, &probe.jump_dst, conf, state);
		probe.jump_n[1] =
			conf->get_next_block(UINT_MAX - 1, &blk, conf, state);
		probe.jump_n[2] =
			conf->get_next_block(UINT_MAX, &blk, conf, state);
		return UINT_MAX;
	}
	while ((n = conf->get_next_block(pos, &blk, conf, state))) {
		probe.blocks++;
		if (pos >= probe.len || n > probe.len - pos ||
		    memcmp(blk, probe.want + pos, n) != 0) {
			fprintf(stderr, "probe: bad block at %u (%u bytes)\n",
				pos, n);
			probe.errors++;
			return UINT_MAX;
		}
		before_last = last;
		last = pos;
		/* sometimes only part of the block: the next request then
		 * points into its middle */
		pos += rng_below(&probe.rng, 3) ? n :
						  1 + rng_below(&probe.rng, n);
	}
	if (pos != probe.len) {
		fprintf(stderr, "probe: data ended at %u of %u\n", pos,
			probe.len);
		probe.short_ends++;
		return UINT_MAX;
	}
	if (start >= probe.len || rng_below(&probe.rng, 5) == 0)
		return UINT_MAX;
	/* a fake match [p, e); the next call resumes at e */
	lo = start + 1;
	if (probe.mode == PROBE_HISTORY && before_last > lo)
		lo = before_last;
	/* often just past the lowest allowed: the edge of what must work */
	if (rng_below(&probe.rng, 2))
		e = lo + rng_below(&probe.rng, probe.len - lo + 1);
	else
		e = lo + rng_below(&probe.rng,
				   probe.len - lo < 8 ? probe.len - lo + 1 : 8);
	p = start + rng_below(&probe.rng, e - start);
	state->offset = e;
	return p;
}

static struct ts_config *probe_init(const void *pattern, unsigned int len,
				    gfp_t gfp_mask, int flags)
{
	(void)pattern;
	(void)len;
	(void)flags;
	return alloc_ts_config(0, gfp_mask);
}

static void *probe_get_pattern(struct ts_config *conf)
{
	(void)conf;
	return (void *)"probe";
}

static unsigned int probe_get_pattern_len(struct ts_config *conf)
{
	(void)conf;
	return 5;
}

static struct ts_ops probe_ops = {
	.name = "probe",
	.init = probe_init,
	.find = probe_find,
	.get_pattern = probe_get_pattern,
	.get_pattern_len = probe_get_pattern_len,
};

static struct ts_config *probe_conf;

/* Start a search of some provider; @arg says which. */
typedef unsigned int (*start_fn)(struct ts_config *conf, struct ts_state *state,
				 void *arg);

static void probe_run(const u8 *data, unsigned int len, enum probe_mode mode,
		      start_fn start, void *arg)
{
	struct ts_state st;
	unsigned int pos, guard = 0;

	probe.want = data;
	probe.len = len;
	probe.mode = mode;
	probe.errors = probe.short_ends = 0;
	for (pos = start(probe_conf, &st, arg); pos != UINT_MAX;
	     pos = textsearch_next(probe_conf, &st))
		assert_true(++guard < 1000000);
	assert_int_equal(probe.errors, 0);
	assert_int_equal(probe.short_ends, 0);
}

/* ---- literal searches against the reference ---- */

struct lcase {
	u8 pat[16];
	unsigned int plen;
	bool icase;
	u8 *data;
	unsigned int dlen;
};

static void lcase_make(struct lcase *c, struct rng *r, unsigned int dlen)
{
	static const char letters[] = "abAB";
	unsigned int i, nalpha = 2 + rng_below(r, 2);

	c->icase = rng_below(r, 3) == 0;
	c->plen = 1 + rng_below(r, sizeof(c->pat));
	c->dlen = dlen;
	c->data = malloc(dlen ? dlen : 1);
	assert_non_null(c->data);
	for (i = 0; i < c->plen; i++)
		c->pat[i] = (u8)letters[rng_below(r, nalpha)];
	for (i = 0; i < dlen; i++)
		c->data[i] = (u8)letters[rng_below(r, nalpha)];
	while (c->plen <= dlen && rng_below(r, 4)) {
		unsigned int at = rng_below(r, dlen - c->plen + 1);

		memcpy(c->data + at, c->pat, c->plen);
	}
}

static void lcase_free(struct lcase *c)
{
	free(c->data);
}

static const char *const algos[] = { "kmp", "shiftor" };
#define N_ALGOS (sizeof(algos) / sizeof(algos[0]))

/* Every match of @c through @start, then UINT_MAX for good. */
static unsigned long check_all(const char *algo, const struct lcase *c,
			       const char *what, start_fn start, void *arg)
{
	struct ts_config *conf;
	struct ts_state st;
	unsigned int want, got;
	unsigned long n = 0;

	conf = textsearch_prepare(algo, c->pat, c->plen, GFP_KERNEL,
				  TS_AUTOLOAD | (c->icase ? TS_IGNORECASE : 0));
	if (IS_ERR(conf))
		fprintf(stderr, "%s: %s\n", algo, textsearch_last_error());
	assert_false(IS_ERR(conf));
	want = ref_find(c->pat, c->plen, c->data, c->dlen, 0, c->icase);
	got = start(conf, &st, arg);
	for (;;) {
		if (got != want)
			fprintf(stderr,
				"%s over %s: got %u, want %u (pattern "
				"%.*s, %u bytes of data, icase %d)\n",
				algo, what, got, want, (int)c->plen, c->pat,
				c->dlen, c->icase);
		assert_int_equal(got, want);
		n++;
		if (want == UINT_MAX)
			break;
		want = ref_find(c->pat, c->plen, c->data, c->dlen,
				want + c->plen, c->icase);
		got = textsearch_next(conf, &st);
	}
	assert_int_equal(textsearch_next(conf, &st), UINT_MAX);
	textsearch_destroy(conf);
	return n;
}

/* ---- iovec ---- */

struct iovset {
	struct iovec *iov;
	unsigned int cnt;
};

/* Split @data into separately allocated pieces (so ASan sees any read
 * past one), with empty iovecs here and there. */
static void iov_build(struct iovset *s, const u8 *data, unsigned int len,
		      struct rng *r)
{
	unsigned int pos = 0, avg = 1 + rng_below(r, 24);
	unsigned int style = rng_below(r, 4);

	s->iov = malloc((2 * (size_t)len + 4) * sizeof(*s->iov));
	assert_non_null(s->iov);
	s->cnt = 0;
	for (;;) {
		unsigned int n;
		u8 *piece;

		while (style && rng_below(r, 4) == 0) {
			/* empty: base NULL or pointing anywhere */
			s->iov[s->cnt].iov_base =
				rng_below(r, 2) ? NULL : (void *)data;
			s->iov[s->cnt++].iov_len = 0;
		}
		if (pos == len)
			break;
		n = style == 0 ? len :
		    style == 1 ? 1 :
				 1 + rng_below(r, 2 * avg);
		if (n > len - pos)
			n = len - pos;
		piece = malloc(n);
		assert_non_null(piece);
		memcpy(piece, data + pos, n);
		s->iov[s->cnt].iov_base = piece;
		s->iov[s->cnt++].iov_len = n;
		pos += n;
	}
}

static void iov_free(struct iovset *s)
{
	unsigned int i;

	for (i = 0; i < s->cnt; i++)
		if (s->iov[i].iov_len)
			free(s->iov[i].iov_base);
	free(s->iov);
}

static unsigned int start_iovec(struct ts_config *conf, struct ts_state *state,
				void *arg)
{
	struct iovset *s = arg;

	return textsearch_find_iovec(conf, state, s->iov, s->cnt);
}

static void test_iovec_differential(void **unused)
{
	struct rng r = { test_seed("iovec", 4242) };
	unsigned long n = cases(4000), i, results = 0;
	size_t a;

	(void)unused;
	for (i = 0; i < n; i++) {
		struct lcase c;
		struct iovset s;

		lcase_make(&c, &r,
			   rng_below(&r, 4) ? rng_below(&r, 400) :
					      rng_below(&r, 6));
		iov_build(&s, c.data, c.dlen, &r);
		for (a = 0; a < N_ALGOS; a++)
			results += check_all(algos[a], &c, "iovec", start_iovec,
					     &s);
		/* and the contract itself, resuming anywhere */
		probe_run(c.data, c.dlen, PROBE_ANY, start_iovec, &s);
		iov_free(&s);
		lcase_free(&c);
	}
	printf("# iovec: %lu cases, %lu results compared, %lu probe calls\n", n,
	       results, probe.calls);
}

static void test_iovec_edges(void **unused)
{
	struct ts_config *conf;
	struct ts_state s1, s2;
	struct iovec empty[3] = { { NULL, 0 }, { NULL, 0 }, { NULL, 0 } };
	const char *t1 = "xxabxxab", *t2 = "ab";
	struct iovec v1[] = { { (void *)t1, 3 },
			      { NULL, 0 },
			      { (void *)(t1 + 3), 5 } };
	struct iovec v2[] = { { (void *)t2, 1 }, { (void *)(t2 + 1), 1 } };

	(void)unused;
	conf = textsearch_prepare("kmp", "ab", 2, GFP_KERNEL, 0);
	assert_false(IS_ERR(conf));
	assert_int_equal(textsearch_find_iovec(conf, &s1, NULL, 5), UINT_MAX);
	assert_int_equal(textsearch_find_iovec(conf, &s1, empty, 0), UINT_MAX);
	assert_int_equal(textsearch_find_iovec(conf, &s1, empty, 3), UINT_MAX);
	assert_int_equal(textsearch_next(conf, &s1), UINT_MAX);

	/* two searches with one config, interleaved: all state is in
	 * each ts_state */
	assert_int_equal(textsearch_find_iovec(conf, &s1, v1, 3), 2);
	assert_int_equal(textsearch_find_iovec(conf, &s2, v2, 2), 0);
	assert_int_equal(textsearch_next(conf, &s1), 6);
	assert_int_equal(textsearch_next(conf, &s2), UINT_MAX);
	assert_int_equal(textsearch_next(conf, &s1), UINT_MAX);
	textsearch_destroy(conf);
}

/* A buffer with a NULL base is empty, whatever its length says, as NULL
 * data is for textsearch_find_continuous(): the same result, and neither
 * touches textsearch_last_error() nor errno. */
static void test_iovec_null_base(void **unused)
{
	struct ts_config *conf;
	struct ts_state s1, s2;
	const char *t = "xxab";
	struct iovec lone[] = { { NULL, 100 } };
	struct iovec mid[] = { { (void *)t, 4 },
			       { NULL, 100 },
			       { (void *)"ab", 2 } };
	char before[512];

	(void)unused;
	conf = textsearch_prepare("kmp", "ab", 2, GFP_KERNEL, 0);
	assert_false(IS_ERR(conf));
	/* leave a message behind, to see that the searches keep it */
	assert_true(IS_ERR(
		textsearch_prepare("nosuchalgo", "x", 1, GFP_KERNEL, 0)));
	snprintf(before, sizeof(before), "%s", textsearch_last_error());
	assert_true(before[0] != '\0');

	errno = 0;
	assert_int_equal(textsearch_find_continuous(conf, &s1, NULL, 100),
			 UINT_MAX);
	assert_int_equal(textsearch_next(conf, &s1), UINT_MAX);
	assert_int_equal(errno, 0);
	assert_string_equal(textsearch_last_error(), before);

	assert_int_equal(textsearch_find_iovec(conf, &s2, lone, 1), UINT_MAX);
	assert_int_equal(textsearch_next(conf, &s2), UINT_MAX);
	assert_int_equal(errno, 0);
	assert_string_equal(textsearch_last_error(), before);

	/* in the middle of an array it counts for no bytes at all */
	assert_int_equal(textsearch_find_iovec(conf, &s2, mid, 3), 2);
	assert_int_equal(textsearch_next(conf, &s2), 4);
	assert_int_equal(textsearch_next(conf, &s2), UINT_MAX);
	assert_int_equal(errno, 0);
	assert_string_equal(textsearch_last_error(), before);
	textsearch_destroy(conf);
}

/* Offsets stop at UINT_MAX - 1, whatever the iovecs hold: 5 GiB of
 * address space, never touched but for the few bytes asked. */
static void test_iovec_limit(void **unused)
{
	const size_t big = (size_t)5 << 30;
	struct ts_state st;
	struct iovec v[3];
	void *map;

	(void)unused;
	if (sizeof(size_t) < 8)
		skip();
	map = mmap(NULL, big, PROT_READ,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (map == MAP_FAILED)
		skip();
	v[0].iov_base = (void *)"abc";
	v[0].iov_len = 3;
	v[1].iov_base = NULL;
	v[1].iov_len = 0;
	v[2].iov_base = map;
	v[2].iov_len = big;
	probe.mode = PROBE_JUMP;
	probe.jump_at = UINT_MAX - 10;
	assert_int_equal(textsearch_find_iovec(probe_conf, &st, v, 3),
			 UINT_MAX);
	assert_int_equal(probe.jump_n[0], 9);
	assert_ptr_equal(probe.jump_dst, (u8 *)map + (UINT_MAX - 10 - 3));
	assert_int_equal(probe.jump_n[1], 0);
	assert_int_equal(probe.jump_n[2], 0);
	/* and back to the start from there, on the next call */
	probe.jump_at = 1;
	assert_int_equal(textsearch_find_iovec(probe_conf, &st, v, 3),
			 UINT_MAX);
	assert_int_equal(probe.jump_n[0], 2);
	assert_memory_equal(probe.jump_dst, "bc", 2);
	munmap(map, big);
}

/* ---- readers ---- */

static const size_t chunks[] = { 1, 2, 7, 0, 4096 };
#define N_CHUNKS (sizeof(chunks) / sizeof(chunks[0]))

/* A deleted temporary file holding @lead junk bytes then @data, positioned
 * at the data. */
static int temp_file(const u8 *data, size_t len, size_t lead)
{
	char name[] = "/tmp/ts-providers.XXXXXX";
	int fd = mkstemp(name);
	size_t i;

	assert_true(fd >= 0);
	unlink(name);
	for (i = 0; i < lead; i++)
		assert_int_equal(write(fd, "#", 1), 1);
	if (len)
		assert_int_equal(write(fd, data, len), (ssize_t)len);
	assert_int_equal(lseek(fd, (off_t)lead, SEEK_SET), (off_t)lead);
	return fd;
}

static unsigned int start_reader(struct ts_config *conf, struct ts_state *state,
				 void *arg)
{
	return textsearch_find_reader(conf, state, arg);
}

static void test_reader_file(void **unused)
{
	struct rng r = { test_seed("reader file", 99) };
	unsigned long n = cases(40), i, results = 0;
	size_t ci, a;

	(void)unused;
	for (i = 0; i < n; i++) {
		for (ci = 0; ci < N_CHUNKS; ci++) {
			unsigned int max =
				chunks[ci] && chunks[ci] < 8 ? 6000 : 150000;
			struct lcase c;
			size_t lead = rng_below(&r, 3) ? 0 : rng_below(&r, 50);
			struct ts_reader *rd;
			int fd;

			lcase_make(&c, &r,
				   rng_below(&r, 5) ? rng_below(&r, max) :
						      rng_below(&r, 4));
			fd = temp_file(c.data, c.dlen, lead);
			rd = ts_reader_from_fd(fd, chunks[ci]);
			assert_non_null(rd);
			for (a = 0; a < N_ALGOS; a++)
				results += check_all(algos[a], &c, "a file",
						     start_reader, rd);
			assert_int_equal(ts_reader_error(rd), 0);
			probe_run(c.data, c.dlen, PROBE_ANY, start_reader, rd);
			assert_int_equal(ts_reader_error(rd), 0);
			/* pread(): the descriptor has not moved */
			assert_int_equal(lseek(fd, 0, SEEK_CUR), (off_t)lead);
			ts_reader_free(rd);
			close(fd);
			lcase_free(&c);
		}
	}
	printf("# reader, regular files: %lu results compared\n", results);
}

/* A thread feeding a pipe in random pieces, maybe interrupting a thread
 * with signals first. */
struct feeder {
	pthread_t thread;
	int fd;
	const u8 *data;
	size_t len;
	uint64_t seed;
	unsigned int max_piece;
	int signals;
	pthread_t target;
};

static void pause_ms(long ms)
{
	struct timespec ts = { 0, ms * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static void *feeder_main(void *arg)
{
	struct feeder *f = arg;
	struct rng r = { f->seed };
	size_t off = 0;
	int i;

	for (i = 0; i < f->signals; i++) {
		pause_ms(20);
		pthread_kill(f->target, SIGUSR1);
	}
	while (off < f->len) {
		size_t n = 1 + rng_below(&r, f->max_piece);
		ssize_t k;

		if (n > f->len - off)
			n = f->len - off;
		k = write(f->fd, f->data + off, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			break; /* the reader has gone (EPIPE) */
		off += (size_t)k;
	}
	close(f->fd);
	return NULL;
}

/* Start feeding @data into a pipe in pieces of 1 to @max_piece bytes,
 * after sending @signals SIGUSR1 to this thread; returns the read end. */
static int feed(struct feeder *f, const u8 *data, size_t len,
		unsigned int max_piece, uint64_t seed, int signals)
{
	int p[2];

	assert_int_equal(pipe(p), 0);
	f->fd = p[1];
	f->data = data;
	f->len = len;
	f->seed = seed;
	f->max_piece = max_piece ? max_piece : 1;
	f->signals = signals;
	f->target = pthread_self();
	assert_int_equal(pthread_create(&f->thread, NULL, feeder_main, f), 0);
	return p[0];
}

/* Read what is left so the feeder can finish, close, and join it. */
static void feed_end(struct feeder *f, int fd, FILE *fp)
{
	char sink[4096];

	if (fp) {
		while (fread(sink, 1, sizeof(sink), fp) > 0)
			;
		fclose(fp);
	} else {
		while (read(fd, sink, sizeof(sink)) > 0)
			;
		close(fd);
	}
	pthread_join(f->thread, NULL);
}

static void test_reader_pipe(void **unused)
{
	struct rng r = { test_seed("reader pipe", 7) };
	unsigned long n = cases(20), i, results = 0;
	size_t ci, a;

	(void)unused;
	for (i = 0; i < n; i++) {
		for (ci = 0; ci < N_CHUNKS; ci++) {
			unsigned int max =
				chunks[ci] && chunks[ci] < 8 ? 12000 : 100000;
			struct lcase c;
			struct ts_reader *rd;
			struct feeder f;
			int fd;

			lcase_make(&c, &r, rng_below(&r, max));
			/* one pipe per search: a pipe is read once */
			for (a = 0; a <= N_ALGOS; a++) {
				fd = feed(&f, c.data, c.dlen,
					  1 + rng_below(&r, 3000), rng_next(&r),
					  0);
				rd = ts_reader_from_fd(fd, chunks[ci]);
				assert_non_null(rd);
				if (a < N_ALGOS)
					results += check_all(algos[a], &c,
							     "a pipe",
							     start_reader, rd);
				else
					probe_run(c.data, c.dlen, PROBE_HISTORY,
						  start_reader, rd);
				assert_int_equal(ts_reader_error(rd), 0);
				ts_reader_free(rd);
				feed_end(&f, fd, NULL);
			}
			lcase_free(&c);
		}
	}
	printf("# reader, pipes: %lu results compared\n", results);
}

/* A pipe cannot go back further than the history the reader keeps: the
 * data then ends and -ESPIPE is recorded. */
static void test_reader_pipe_espipe(void **unused)
{
	const unsigned int len = 100000;
	u8 *data = malloc(len);
	struct ts_config *conf;
	struct ts_reader *rd;
	struct ts_state st;
	struct feeder f;
	int fd;

	(void)unused;
	assert_non_null(data);
	memset(data, 'a', len);
	memcpy(data + len - 3, "end", 3);
	conf = textsearch_prepare("kmp", "end", 3, GFP_KERNEL, 0);
	assert_false(IS_ERR(conf));
	fd = feed(&f, data, len, 1000, 1, 0);
	rd = ts_reader_from_fd(fd, 1);
	assert_non_null(rd);
	assert_int_equal(textsearch_find_reader(conf, &st, rd), len - 3);
	assert_int_equal(textsearch_next(conf, &st), UINT_MAX);
	assert_int_equal(ts_reader_error(rd), 0);
	/* a new search wants offset 0 again, long gone */
	assert_int_equal(textsearch_find_reader(conf, &st, rd), UINT_MAX);
	assert_int_equal(ts_reader_error(rd), -ESPIPE);
	ts_reader_free(rd);
	feed_end(&f, fd, NULL);
	textsearch_destroy(conf);
	free(data);
}

static void test_reader_stdio(void **unused)
{
	struct rng r = { test_seed("reader stdio", 5) };
	unsigned long n = cases(20), i, results = 0;
	size_t ci, a;

	(void)unused;
	for (i = 0; i < n; i++) {
		for (ci = 0; ci < N_CHUNKS; ci++) {
			unsigned int max =
				chunks[ci] && chunks[ci] < 8 ? 6000 : 100000;
			size_t lead = rng_below(&r, 2) ? 0 :
							 1 + rng_below(&r, 9);
			struct ts_reader *rd;
			struct lcase c, tail;
			struct feeder f;
			FILE *fp;
			int fd;

			lcase_make(&c, &r, rng_below(&r, max));

			/* a seekable stream, maybe positioned a few bytes
			 * in: the stream is what follows */
			fd = temp_file(c.data, c.dlen, 0);
			fp = fdopen(fd, "r");
			assert_non_null(fp);
			if (lead)
				assert_int_equal(
					fseeko(fp, (off_t)lead, SEEK_SET), 0);
			rd = ts_reader_from_file(fp, chunks[ci]);
			assert_non_null(rd);
			tail = c;
			if (lead > tail.dlen)
				lead = tail.dlen;
			tail.data += lead;
			tail.dlen -= (unsigned int)lead;
			for (a = 0; a < N_ALGOS; a++)
				results += check_all(algos[a], &tail, "a FILE",
						     start_reader, rd);
			probe_run(tail.data, tail.dlen, PROBE_ANY, start_reader,
				  rd);
			assert_int_equal(ts_reader_error(rd), 0);
			ts_reader_free(rd);
			fclose(fp);

			/* an unseekable stream */
			for (a = 0; a < N_ALGOS; a++) {
				fd = feed(&f, c.data, c.dlen,
					  1 + rng_below(&r, 3000), rng_next(&r),
					  0);
				fp = fdopen(fd, "r");
				assert_non_null(fp);
				rd = ts_reader_from_file(fp, chunks[ci]);
				assert_non_null(rd);
				results += check_all(algos[a], &c,
						     "a FILE on a pipe",
						     start_reader, rd);
				assert_int_equal(ts_reader_error(rd), 0);
				ts_reader_free(rd);
				feed_end(&f, -1, fp);
			}
			lcase_free(&c);
		}
	}
	printf("# reader, stdio streams: %lu results compared\n", results);
}

static void read_exactly(int fd, char *buf, size_t n)
{
	while (n) {
		ssize_t k = read(fd, buf, n);

		assert_true(k > 0);
		buf += k;
		n -= (size_t)k;
	}
}

/* Stream offset 0 is wherever the input was when the reader was made. */
static void test_reader_start_position(void **unused)
{
	static const char text[] = "0123456789 chicken, chicken";
	struct ts_config *conf;
	struct ts_reader *rd;
	struct ts_state st;
	struct feeder f;
	char skip[5];
	FILE *fp;
	int fd;

	(void)unused;
	conf = textsearch_prepare("kmp", "chicken", 7, GFP_KERNEL, 0);
	assert_false(IS_ERR(conf));

	fd = temp_file((const u8 *)text, sizeof(text) - 1, 0);
	assert_int_equal(lseek(fd, 5, SEEK_SET), 5);
	rd = ts_reader_from_fd(fd, 3);
	assert_int_equal(textsearch_find_reader(conf, &st, rd), 6);
	assert_int_equal(textsearch_next(conf, &st), 15);
	assert_int_equal(textsearch_next(conf, &st), UINT_MAX);
	/* and again, from the same place */
	assert_int_equal(textsearch_find_reader(conf, &st, rd), 6);
	assert_int_equal(lseek(fd, 0, SEEK_CUR), 5);
	ts_reader_free(rd);
	close(fd);

	/* a pipe with 5 bytes already read */
	fd = feed(&f, (const u8 *)text, sizeof(text) - 1, 2, 3, 0);
	read_exactly(fd, skip, 5);
	rd = ts_reader_from_fd(fd, 2);
	assert_int_equal(textsearch_find_reader(conf, &st, rd), 6);
	assert_int_equal(textsearch_next(conf, &st), 15);
	assert_int_equal(textsearch_next(conf, &st), UINT_MAX);
	ts_reader_free(rd);
	feed_end(&f, fd, NULL);

	/* a FILE * with 5 bytes read through stdio */
	fd = feed(&f, (const u8 *)text, sizeof(text) - 1, 4, 4, 0);
	fp = fdopen(fd, "r");
	assert_non_null(fp);
	assert_int_equal(fread(skip, 1, 5, fp), 5);
	rd = ts_reader_from_file(fp, 1);
	assert_int_equal(textsearch_find_reader(conf, &st, rd), 6);
	assert_int_equal(textsearch_next(conf, &st), 15);
	ts_reader_free(rd);
	feed_end(&f, -1, fp);
	textsearch_destroy(conf);
}

static void test_reader_errors(void **unused)
{
	char dir[] = "/tmp/ts-providers-dir.XXXXXX";
	struct ts_config *conf;
	struct ts_reader *rd;
	struct ts_state st;
	FILE *fp;
	int fd, closed;

	(void)unused;
	conf = textsearch_prepare("kmp", "x", 1, GFP_KERNEL, 0);
	assert_false(IS_ERR(conf));
	assert_non_null(mkdtemp(dir));

	/* reading a directory fails with EISDIR: the data ends there */
	fd = open(dir, O_RDONLY);
	assert_true(fd >= 0);
	rd = ts_reader_from_fd(fd, 0);
	assert_non_null(rd);
	assert_int_equal(ts_reader_error(rd), 0);
	assert_int_equal(textsearch_find_reader(conf, &st, rd), UINT_MAX);
	assert_int_equal(ts_reader_error(rd), -EISDIR);
	assert_int_equal(textsearch_next(conf, &st), UINT_MAX);
	ts_reader_free(rd);
	close(fd);

	fp = fopen(dir, "r");
	if (fp) {
		rd = ts_reader_from_file(fp, 7);
		assert_non_null(rd);
		assert_int_equal(textsearch_find_reader(conf, &st, rd),
				 UINT_MAX);
		assert_int_equal(ts_reader_error(rd), -EISDIR);
		ts_reader_free(rd);
		fclose(fp);
	}
	rmdir(dir);

	/* a descriptor that is not open */
	closed = dup(0);
	assert_true(closed >= 0);
	close(closed);
	rd = ts_reader_from_fd(closed, 0);
	assert_non_null(rd);
	assert_int_equal(textsearch_find_reader(conf, &st, rd), UINT_MAX);
	assert_int_equal(ts_reader_error(rd), -EBADF);
	ts_reader_free(rd);

	/* bad arguments */
	errno = 0;
	assert_null(ts_reader_from_fd(-1, 0));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(ts_reader_from_file(NULL, 0));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(ts_reader_from_fd(0, SIZE_MAX));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(ts_reader_error(NULL), -EINVAL);
	ts_reader_free(NULL);
	assert_int_equal(textsearch_find_reader(conf, &st, NULL), UINT_MAX);
	assert_int_equal(textsearch_next(conf, &st), UINT_MAX);
	textsearch_destroy(conf);
}

/* Offsets stop at UINT_MAX - 1: a sparse file larger than 4 GiB, read
 * past a non-zero start position. */
static void test_reader_limit(void **unused)
{
	const off_t lead = 100, at = lead + (off_t)UINT_MAX - 10;
	struct ts_reader *rd;
	struct ts_state st;
	FILE *fp;
	int fd;

	(void)unused;
	fd = temp_file(NULL, 0, 0);
	if (ftruncate(fd, lead + (off_t)UINT_MAX + 100) != 0) {
		close(fd);
		skip();
	}
	assert_int_equal(pwrite(fd, "XYZ", 3, at), 3);
	assert_int_equal(lseek(fd, lead, SEEK_SET), lead);
	rd = ts_reader_from_fd(fd, 0);
	probe.mode = PROBE_JUMP;
	probe.jump_at = UINT_MAX - 10;
	assert_int_equal(textsearch_find_reader(probe_conf, &st, rd), UINT_MAX);
	assert_int_equal(probe.jump_n[0], 9);
	assert_memory_equal(probe.jump_dst, "XYZ", 3);
	assert_int_equal(probe.jump_n[1], 0);
	assert_int_equal(probe.jump_n[2], 0);
	assert_int_equal(ts_reader_error(rd), 0);
	ts_reader_free(rd);

	fp = fdopen(fd, "r");
	assert_non_null(fp);
	assert_int_equal(fseeko(fp, lead, SEEK_SET), 0);
	rd = ts_reader_from_file(fp, 5);
	probe.jump_at = UINT_MAX - 9;
	assert_int_equal(textsearch_find_reader(probe_conf, &st, rd), UINT_MAX);
	assert_int_equal(probe.jump_n[0], 5); /* one chunk */
	assert_memory_equal(probe.jump_dst, "YZ", 2);
	assert_int_equal(probe.jump_n[1], 0);
	assert_int_equal(ts_reader_error(rd), 0);
	ts_reader_free(rd);
	fclose(fp);
}

static volatile sig_atomic_t interrupts;

static void on_signal(int sig)
{
	(void)sig;
	interrupts++;
}

/* Reads interrupted by a signal (no SA_RESTART) are retried. */
static void test_reader_eintr(void **unused)
{
	static const char text[] = "an interrupted chicken";
	struct sigaction sa, old;
	struct ts_config *conf;
	struct ts_reader *rd;
	struct ts_state st;
	struct feeder f;
	FILE *fp;
	int fd;

	(void)unused;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;
	assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
	conf = textsearch_prepare("kmp", "chicken", 7, GFP_KERNEL, 0);
	assert_false(IS_ERR(conf));

	interrupts = 0;
	fd = feed(&f, (const u8 *)text, sizeof(text) - 1, 5, 1, 3);
	rd = ts_reader_from_fd(fd, 0);
	assert_int_equal(textsearch_find_reader(conf, &st, rd), 15);
	assert_int_equal(ts_reader_error(rd), 0);
	ts_reader_free(rd);
	feed_end(&f, fd, NULL);
	assert_true(interrupts >= 1);

	interrupts = 0;
	fd = feed(&f, (const u8 *)text, sizeof(text) - 1, 5, 1, 3);
	fp = fdopen(fd, "r");
	assert_non_null(fp);
	rd = ts_reader_from_file(fp, 0);
	assert_int_equal(textsearch_find_reader(conf, &st, rd), 15);
	assert_int_equal(ts_reader_error(rd), 0);
	ts_reader_free(rd);
	feed_end(&f, -1, fp);
	assert_true(interrupts >= 1);

	textsearch_destroy(conf);
	sigaction(SIGUSR1, &old, NULL);
}

static int setup(void **unused)
{
	(void)unused;
	probe.rng.s = test_seed("probe", 31337);
	if (textsearch_register(&probe_ops) != 0)
		return -1;
	probe_conf = textsearch_prepare("probe", "x", 1, GFP_KERNEL, 0);
	return IS_ERR(probe_conf) ? -1 : 0;
}

static int teardown(void **unused)
{
	(void)unused;
	textsearch_destroy(probe_conf);
	return textsearch_unregister(&probe_ops);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_iovec_differential),
		cmocka_unit_test(test_iovec_edges),
		cmocka_unit_test(test_iovec_null_base),
		cmocka_unit_test(test_iovec_limit),
		cmocka_unit_test(test_reader_file),
		cmocka_unit_test(test_reader_pipe),
		cmocka_unit_test(test_reader_pipe_espipe),
		cmocka_unit_test(test_reader_stdio),
		cmocka_unit_test(test_reader_start_position),
		cmocka_unit_test(test_reader_errors),
		cmocka_unit_test(test_reader_limit),
		cmocka_unit_test(test_reader_eintr),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, setup, teardown);
}
