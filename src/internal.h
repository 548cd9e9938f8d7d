/*
 * internal.h - declarations shared inside libtextsearch; never installed.
 */
#ifndef TS_INTERNAL_H
#define TS_INTERNAL_H

#include "textsearch.h"

#include <stdbool.h>
#include <stddef.h>

#define TS_HIDDEN __attribute__((visibility("hidden")))

/* Built-in algorithms, registered on first use of the registry. */
extern struct ts_ops ts_kmp_ops TS_HIDDEN;
extern struct ts_ops ts_bm_ops TS_HIDDEN;
extern struct ts_ops ts_fsm_ops TS_HIDDEN;
/* rarebyte (SIMD) at the best level the CPU has, and pinned to a level */
extern struct ts_ops ts_rarebyte_ops TS_HIDDEN;
extern struct ts_ops ts_rarebyte_avx512_ops TS_HIDDEN;
extern struct ts_ops ts_rarebyte_avx2_ops TS_HIDDEN;
extern struct ts_ops ts_rarebyte_sse2_ops TS_HIDDEN;
extern struct ts_ops ts_rarebyte_scalar_ops TS_HIDDEN;

/* The provider textsearch_prepare() installs in every config: it forwards
 * to the provider recorded in the search's state (search.c). */
unsigned int ts_dispatch_next_block(unsigned int consumed, const u8 **dst,
				    struct ts_config *conf,
				    struct ts_state *state) TS_HIDDEN;

/* Record a description of the error about to be returned, for
 * textsearch_last_error(); returns @err so callers can `return ts_fail(...)`. */
int ts_fail(int err, const char *fmt, ...) TS_HIDDEN
	__attribute__((format(printf, 2, 3)));
void ts_clear_error(void) TS_HIDDEN;

/* The methods every algorithm must have: textsearch_register() and the
 * plugin loader both insist on them. */
static inline bool ts_ops_has_methods(const struct ts_ops *ops)
{
	return ops->init && ops->find && ops->get_pattern &&
	       ops->get_pattern_len;
}

/* A plugin loaded and checked: its ops, ready to be registered, and the
 * object to unload if they are not. */
struct ts_plugin_loaded {
	struct ts_ops *ops;
	void *handle;
};

/* Find ts_<name>.so (@name already validated) in a trusted place, load it
 * and check its descriptor and ops.  0 and *@out filled, -ENOENT if no
 * plugin file exists, -ELIBBAD if one was refused. */
int ts_plugin_load(const char *name, struct ts_plugin_loaded *out) TS_HIDDEN;
/* Drop a loaded plugin whose ops were not registered. */
void ts_plugin_unload(struct ts_plugin_loaded *plugin) TS_HIDDEN;

/* Overflow-checked size arithmetic: false if the result does not fit. */
static inline bool ts_size_add(size_t a, size_t b, size_t *sum)
{
	return !__builtin_add_overflow(a, b, sum);
}

static inline bool ts_size_mul(size_t a, size_t b, size_t *product)
{
	return !__builtin_mul_overflow(a, b, product);
}

/* 256-entry TS_IGNORECASE folding table (identity when !ignorecase);
 * src/algo/fold.c. */
void ts_fill_fold_table(u8 table[256], bool ignorecase) TS_HIDDEN;

#endif
