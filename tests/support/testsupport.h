/*
 * testsupport.h - what the tests and the fuzz target share: a seeded random
 * generator, a naive reference search, and a provider that serves data in
 * blocks cut where the test says, each block in its own heap allocation so
 * that AddressSanitizer catches any read past a block.
 */
#ifndef TS_TESTSUPPORT_H
#define TS_TESTSUPPORT_H

#include "textsearch.h"

#include <stdbool.h>
#include <stdint.h>

/* ---- random numbers (splitmix64; reproducible from the seed) ---- */
struct rng {
	uint64_t s;
};
uint64_t rng_next(struct rng *r);
/* Uniform in [0, n); n > 0. */
uint32_t rng_below(struct rng *r, uint32_t n);
/* Seed from TS_TEST_SEED if set, else @fallback; prints the seed used. */
uint64_t test_seed(const char *what, uint64_t fallback);

/* ---- files ---- */
/* The whole file, NUL-terminated (its length in *@len if not NULL); free()
 * it.  NULL with errno set if it cannot be read. */
char *test_read_file(const char *path, size_t *len);
/* system(@cmd)'s status; a failure is told on stderr with @who. */
int test_system(const char *who, const char *cmd);
/* Whether the program at @path was built with a sanitizer (its runtime's
 * symbols are in it), whatever its build folder is called. */
bool test_binary_is_sanitized(const char *path);

/* ---- memory ---- */
/* One past the last of @span readable bytes (rounded up to pages) that an
 * unreadable page follows, so that a read past a buffer ending there
 * faults at once; NULL if it cannot be mapped.  Never unmapped. */
u8 *test_guard_end(size_t span);

/* ---- config snapshots ---- */
/*
 * A copy of @conf's header and private data, to tell afterwards whether
 * a search wrote to the config (searches must only read it); free() it.
 * Aborts if out of memory (no cmocka here: the fuzz targets use it too).
 */
u8 *conf_snapshot(struct ts_config *conf);
/* Whether @conf is still byte for byte what @snap holds. */
bool conf_unchanged(struct ts_config *conf, const u8 *snap);

/* ---- naive reference ---- */
/* TS_IGNORECASE folding written independently of the library. */
u8 ref_fold(u8 c);
/* First match of @pat in @data starting at or after @from, or UINT_MAX. */
unsigned int ref_find(const u8 *pat, unsigned int plen, const u8 *data,
		      unsigned int dlen, unsigned int from, bool ignorecase);

/*
 * Every match a search for the set @pats (@lens, @count patterns) must
 * give in @data, in find/next order: with @overlap every occurrence, by
 * start, end and id; without, leftmost-longest and not overlapping.  The
 * number in *@n; free() the array.  Aborts if out of memory.
 */
struct ref_match {
	unsigned int start, end, id;
};
struct ref_match *ref_set_matches(const u8 *const *pats,
				  const unsigned int *lens, unsigned int count,
				  bool ignorecase, const u8 *data,
				  unsigned int dlen, bool overlap,
				  unsigned int *n);

/* ---- block-splitting provider ---- */
struct blocks;
/*
 * Serve @len bytes of @data in blocks ending at the @ncuts ascending
 * offsets in @cuts (offsets 0 or >= len are ignored).  Each block is copied
 * into an allocation of exactly its size.
 */
struct blocks *blocks_new(const u8 *data, unsigned int len,
			  const unsigned int *cuts, unsigned int ncuts);
void blocks_free(struct blocks *b);
/* Random cuts: mode 0 none, 1 every byte, 2 random sizes (1 to 2*avg). */
struct blocks *blocks_random(const u8 *data, unsigned int len, struct rng *r,
			     int mode);
/* Search through textsearch_find_with() with this provider; check with
 * blocks_ok() that the provider contract held (consumed never went
 * backwards within a call, finish ran once per call). */
unsigned int blocks_find(struct ts_config *conf, struct ts_state *state,
			 struct blocks *b);
/* The same provider installed the kernel's way, in conf->get_next_block
 * and conf->finish, then textsearch_find(). */
unsigned int blocks_find_kernel_style(struct ts_config *conf,
				      struct ts_state *state, struct blocks *b);
bool blocks_ok(const struct blocks *b);
unsigned int blocks_calls(const struct blocks *b);    /* get_next_block */
unsigned int blocks_finishes(const struct blocks *b); /* finish */

#endif
