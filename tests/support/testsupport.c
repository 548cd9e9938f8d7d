/*
 * testsupport.c - see testsupport.h.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "testsupport.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

u8 *test_guard_end(size_t span)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	u8 *map;

	span = (span + page - 1) / page * page;
	map = mmap(NULL, span + page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		return NULL;
	if (mprotect(map + span, page, PROT_NONE)) {
		munmap(map, span + page);
		return NULL;
	}
	return map + span;
}

u8 *conf_snapshot(struct ts_config *conf)
{
	u8 *buf = malloc(sizeof(*conf) + conf->ts_priv_size);

	if (!buf)
		abort();
	memcpy(buf, conf, sizeof(*conf));
	memcpy(buf + sizeof(*conf), ts_config_priv(conf), conf->ts_priv_size);
	return buf;
}

bool conf_unchanged(struct ts_config *conf, const u8 *snap)
{
	/* the header first: it holds the size of the rest */
	return memcmp(snap, conf, sizeof(*conf)) == 0 &&
	       memcmp(snap + sizeof(*conf), ts_config_priv(conf),
		      conf->ts_priv_size) == 0;
}

uint64_t rng_next(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint32_t rng_below(struct rng *r, uint32_t n)
{
	return (uint32_t)(((rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

char *test_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL, *grown;
	size_t cap = 0, n = 0, r;

	if (!f)
		return NULL;
	do {
		if (cap - n < 65536) {
			cap = cap ? cap * 2 : 65536;
			grown = realloc(buf, cap + 1);
			if (!grown) {
				free(buf);
				fclose(f);
				errno = ENOMEM;
				return NULL;
			}
			buf = grown;
		}
		r = fread(buf + n, 1, cap - n, f);
		n += r;
	} while (r > 0);
	if (ferror(f)) {
		free(buf);
		fclose(f);
		errno = EIO;
		return NULL;
	}
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

int test_system(const char *who, const char *cmd)
{
	int status = system(cmd);

	if (status)
		fprintf(stderr, "%s: '%s' failed (%d)\n", who, cmd, status);
	return status;
}

bool test_binary_is_sanitized(const char *path)
{
	static const char *const marks[] = { "__asan_init", "__tsan_init",
					     "__ubsan_handle" };
	size_t len, k;
	bool found = false;
	char *bin = test_read_file(path, &len);

	if (!bin)
		return false;
	for (k = 0; k < sizeof(marks) / sizeof(*marks) && !found; k++)
		found = len < UINT_MAX &&
			ref_find((const u8 *)marks[k],
				 (unsigned int)strlen(marks[k]),
				 (const u8 *)bin, (unsigned int)len, 0,
				 false) != UINT_MAX;
	free(bin);
	return found;
}

uint64_t test_seed(const char *what, uint64_t fallback)
{
	const char *env = getenv("TS_TEST_SEED");
	uint64_t seed = env ? strtoull(env, NULL, 0) : fallback;

	printf("# %s: seed %llu (set TS_TEST_SEED to repeat)\n", what,
	       (unsigned long long)seed);
	return seed;
}

u8 ref_fold(u8 c)
{
	/* A-Z -> a-z; Latin-1 capitals 0xC0-0xDE, except the multiplication
	 * sign 0xD7, -> 0xE0-0xFE. */
	if (c >= 0x41 && c <= 0x5A)
		return c | 0x20;
	if (c >= 0xC0 && c <= 0xDE && c != 0xD7)
		return c | 0x20;
	return c;
}

unsigned int ref_find(const u8 *pat, unsigned int plen, const u8 *data,
		      unsigned int dlen, unsigned int from, bool ignorecase)
{
	unsigned int i, j;

	if (plen == 0 || plen > dlen)
		return UINT_MAX;
	for (i = from; i <= dlen - plen; i++) {
		for (j = 0; j < plen; j++) {
			u8 a = data[i + j], b = pat[j];

			if (ignorecase ? ref_fold(a) != ref_fold(b) : a != b)
				break;
		}
		if (j == plen)
			return i;
	}
	return UINT_MAX;
}

static bool occurs_at(const u8 *pat, unsigned int plen, const u8 *data,
		      unsigned int dlen, unsigned int at, bool ignorecase)
{
	unsigned int j;

	if (plen > dlen - at)
		return false;
	for (j = 0; j < plen; j++) {
		u8 a = data[at + j], b = pat[j];

		if (ignorecase ? ref_fold(a) != ref_fold(b) : a != b)
			return false;
	}
	return true;
}

static int by_start_end_id(const void *x, const void *y)
{
	const struct ref_match *a = x, *b = y;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->end != b->end)
		return a->end < b->end ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

static int by_start_longest_id(const void *x, const void *y)
{
	const struct ref_match *a = x, *b = y;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->end != b->end)
		return a->end > b->end ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

struct ref_match *ref_set_matches(const u8 *const *pats,
				  const unsigned int *lens, unsigned int count,
				  bool ignorecase, const u8 *data,
				  unsigned int dlen, bool overlap,
				  unsigned int *n)
{
	unsigned int cap = 64, all = 0, at, id, k, out, from;
	struct ref_match *v = malloc(cap * sizeof(*v));

	if (!v)
		abort();
	/* every occurrence of every pattern, then sorted */
	for (at = 0; at < dlen; at++)
		for (id = 0; id < count; id++) {
			if (!occurs_at(pats[id], lens[id], data, dlen, at,
				       ignorecase))
				continue;
			if (all == cap) {
				cap *= 2;
				v = realloc(v, cap * sizeof(*v));
				if (!v)
					abort();
			}
			v[all++] = (struct ref_match){ at, at + lens[id], id };
		}
	qsort(v, all, sizeof(*v),
	      overlap ? by_start_end_id : by_start_longest_id);
	if (overlap) {
		*n = all;
		return v;
	}
	/* leftmost-longest: the first from where the last one ended */
	for (k = 0, out = 0, from = 0; k < all; k++)
		if (v[k].start >= from) {
			v[out++] = v[k];
			from = v[k].end;
		}
	*n = out;
	return v;
}

struct block {
	unsigned int start, len;
	u8 *bytes;
};

struct blocks {
	struct block *v;
	unsigned int n;
	unsigned int last_consumed; /* within the current call */
	bool in_call;
	bool ok;
	unsigned int calls, finishes;
};

struct blocks *blocks_new(const u8 *data, unsigned int len,
			  const unsigned int *cuts, unsigned int ncuts)
{
	struct blocks *b = calloc(1, sizeof(*b));
	unsigned int i, start = 0;

	if (!b)
		abort();
	b->v = calloc(ncuts + 1, sizeof(*b->v));
	if (!b->v)
		abort();
	b->ok = true;
	for (i = 0; i <= ncuts; i++) {
		unsigned int end = i < ncuts ? cuts[i] : len;
		struct block *blk;

		if (end <= start || end > len)
			continue;
		blk = &b->v[b->n++];
		blk->start = start;
		blk->len = end - start;
		blk->bytes = malloc(blk->len);
		if (!blk->bytes)
			abort();
		memcpy(blk->bytes, data + start, blk->len);
		start = end;
	}
	return b;
}

struct blocks *blocks_random(const u8 *data, unsigned int len, struct rng *r,
			     int mode)
{
	unsigned int *cuts, n = 0, pos = 0, avg;
	struct blocks *b;

	cuts = malloc((len + 1) * sizeof(*cuts));
	if (!cuts)
		abort();
	avg = 1 + rng_below(r, 16);
	while (mode && pos < len) {
		pos += mode == 1 ? 1 : 1 + rng_below(r, 2 * avg);
		if (pos < len)
			cuts[n++] = pos;
	}
	b = blocks_new(data, len, cuts, n);
	free(cuts);
	return b;
}

void blocks_free(struct blocks *b)
{
	unsigned int i;

	if (!b)
		return;
	for (i = 0; i < b->n; i++)
		free(b->v[i].bytes);
	free(b->v);
	free(b);
}

static struct blocks *from_state(struct ts_state *state)
{
	struct blocks *b;

	memcpy(&b, state->cb, sizeof(b));
	return b;
}

static unsigned int blocks_next(unsigned int consumed, const u8 **dst,
				struct ts_config *conf, struct ts_state *state)
{
	struct blocks *b = from_state(state);
	unsigned int lo = 0, hi = b->n;

	(void)conf;
	b->calls++;
	if (b->in_call && consumed < b->last_consumed)
		b->ok = false; /* went backwards within one call */
	b->in_call = true;
	b->last_consumed = consumed;
	/* binary search for the block holding @consumed */
	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (b->v[mid].start + b->v[mid].len <= consumed)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == b->n)
		return 0;
	*dst = b->v[lo].bytes + (consumed - b->v[lo].start);
	return b->v[lo].len - (consumed - b->v[lo].start);
}

static void blocks_finish(struct ts_config *conf, struct ts_state *state)
{
	struct blocks *b = from_state(state);

	(void)conf;
	b->finishes++;
	b->in_call = false;
}

static void attach(struct ts_state *state, struct blocks *b)
{
	memcpy(state->cb, &b, sizeof(b));
	b->in_call = false;
}

unsigned int blocks_find(struct ts_config *conf, struct ts_state *state,
			 struct blocks *b)
{
	attach(state, b);
	return textsearch_find_with(conf, state, blocks_next, blocks_finish);
}

unsigned int blocks_find_kernel_style(struct ts_config *conf,
				      struct ts_state *state, struct blocks *b)
{
	attach(state, b);
	conf->get_next_block = blocks_next;
	conf->finish = blocks_finish;
	return textsearch_find(conf, state);
}

bool blocks_ok(const struct blocks *b)
{
	return b->ok;
}

unsigned int blocks_calls(const struct blocks *b)
{
	return b->calls;
}

unsigned int blocks_finishes(const struct blocks *b)
{
	return b->finishes;
}
