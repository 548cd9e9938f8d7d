/*
 * textsearch.h - generic text search over non-contiguous data.
 *
 * The userspace counterpart of the Linux kernel's <linux/textsearch.h>
 * (introduced in 2.6.13).  Names, structures, flags, argument order and the
 * error-pointer convention follow the kernel, so code written against the
 * kernel's interface compiles unchanged; see textsearch(3) and
 * docs/differences-from-linux.md for the places where behaviour was repaired.
 *
 * Usage in brief:
 *
 *   struct ts_config *conf = textsearch_prepare("kmp", "chicken", 7,
 *                                               GFP_KERNEL, 0);
 *   if (IS_ERR(conf))
 *           return PTR_ERR(conf);              // negative errno
 *   struct ts_state state;
 *   unsigned int pos = textsearch_find_continuous(conf, &state, text, len);
 *   while (pos != UINT_MAX)
 *           pos = textsearch_next(conf, &state);  // next, non-overlapping
 *   textsearch_destroy(conf);
 *
 * Errors are negative errno values.  Functions returning a pointer return an
 * error pointer on failure (test with IS_ERR(), decode with PTR_ERR()) and
 * also set errno.  textsearch_strerror() turns a code into a message and
 * textsearch_last_error() describes the last failure in the calling thread.
 *
 * Thread safety: the registry may be used from any thread.  A prepared
 * ts_config holds no per-search state; any number of threads may search with
 * one config at once, each with its own struct ts_state.
 */
#ifndef TEXTSEARCH_H
#define TEXTSEARCH_H

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TEXTSEARCH_VERSION_MAJOR 3
#define TEXTSEARCH_VERSION_MINOR 1
#define TEXTSEARCH_VERSION_PATCH 0
#define TEXTSEARCH_VERSION_NUMBER                                            \
	(TEXTSEARCH_VERSION_MAJOR * 10000 + TEXTSEARCH_VERSION_MINOR * 100 + \
	 TEXTSEARCH_VERSION_PATCH)

#if defined(__GNUC__) && !defined(TS_API)
#define TS_API __attribute__((visibility("default")))
#elif !defined(TS_API)
#define TS_API
#endif

/*
 * Kernel types used in the interface.  Define TS_NO_KERNEL_TYPES before
 * including this header if your code already has its own u8/u16/gfp_t.
 */
#ifndef TS_NO_KERNEL_TYPES
typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef unsigned int gfp_t;
#endif

/* Allocation context, as in the kernel.  GFP_ATOMIC means "must not block":
 * textsearch_prepare() then never loads a plugin. */
#define GFP_ATOMIC ((gfp_t)0x20u)
#define GFP_KERNEL ((gfp_t)0xcc0u)

/* Kernel modules name their owner; plugins are tracked by the library. */
struct module;
#ifndef THIS_MODULE
#define THIS_MODULE ((struct module *)0)
#endif

/*
 * Error pointers, as in the kernel's <linux/err.h>: the top 4095 addresses
 * carry a negative errno.  Define MAX_ERRNO yourself to keep your own
 * definitions of these helpers.
 */
#ifndef MAX_ERRNO
#define MAX_ERRNO 4095
static inline void *ERR_PTR(long error)
{
	return (void *)error;
}
static inline long PTR_ERR(const void *ptr)
{
	return (long)ptr;
}
static inline int IS_ERR(const void *ptr)
{
	return (uintptr_t)ptr >= (uintptr_t)-MAX_ERRNO;
}
static inline int IS_ERR_OR_NULL(const void *ptr)
{
	return !ptr || IS_ERR(ptr);
}
#endif

/* Flags for textsearch_prepare(); any other bit is -EINVAL. */
#define TS_AUTOLOAD 1	/* load ts_<algo>.so if the algorithm is unknown */
#define TS_IGNORECASE 2 /* fold ASCII and ISO-8859-1 letters (but TS_UTF8) */
#define TS_OVERLAP 4	/* every occurrence, by start, end, then id */
/* Pattern and data are UTF-8: matches begin and end on character
 * boundaries, an invalid byte matches only itself, and with TS_IGNORECASE
 * characters fold by Unicode simple case folding instead of bytes by
 * ISO-8859-1.  For the literal algorithms and sets, not fsm. */
#define TS_UTF8 8
/* With TS_UTF8 | TS_IGNORECASE: characters are equal when the C library's
 * towupper() in C.UTF-8 maps them to the same character, as GNU grep -i
 * compares them there, instead of by Unicode simple case folding (they
 * differ on a few: U+0131 is i, U+212A is not k).  The table is made from
 * the build machine's C library at build time.  Only with TS_UTF8. */
#define TS_FOLD_LIBC 16

/* Longest algorithm name, as the kernel's 16-byte xt_string field allows. */
#define TS_NAME_MAX 15

/* Size of the provider's scratch space in struct ts_state. */
#define TS_CB_SIZE 48

struct ts_config;
struct ts_state;
struct ts_stream_ops;

/* Provider callbacks (see struct ts_config). */
typedef unsigned int (*ts_get_next_block_fn)(unsigned int consumed,
					     const u8 **dst,
					     struct ts_config *conf,
					     struct ts_state *state);
typedef void (*ts_finish_fn)(struct ts_config *conf, struct ts_state *state);

/*
 * Library bookkeeping inside struct ts_state.  Private: do not touch.  It
 * records which provider the current search uses, so that one config can
 * serve searches with different providers at once, and the last match
 * (textsearch_match_id(), and where TS_OVERLAP resumes).  Its size is part
 * of the ABI: the match fields came with SONAME 2.
 */
struct ts_state_private {
	ts_get_next_block_fn get_next_block;
	ts_finish_fn finish;
	struct ts_config *conf;
	const void *data;
	unsigned int len;
	unsigned int status;
	unsigned int match_start;
	unsigned int match_len;
	unsigned int match_id;
};

/*
 * Per-search state, owned by the caller (usually on the stack).
 * @offset: where the next search resumes (stream offset).
 * @cb:     scratch space for the block provider, aligned for any type.
 */
struct ts_state {
	unsigned int offset;
#ifdef __cplusplus
	alignas(16) char cb[TS_CB_SIZE];
#else
	_Alignas(16) char cb[TS_CB_SIZE];
#endif
	struct ts_state_private ts_private;
};

/*
 * An algorithm, as a kernel module describes one.
 * @name:            letters, digits and underscore, at most TS_NAME_MAX
 * @init:            build a config for a pattern (use alloc_ts_config());
 *                   return an error pointer on failure
 * @find:            search from state->offset, reading data only through
 *                   conf->get_next_block(); on a match set state->offset to
 *                   the end of the match and return its start; else UINT_MAX
 * @destroy:         optional; release what init allocated besides the config
 * @get_pattern:     the pattern as the caller gave it
 * @get_pattern_len: its length in bytes
 * @init_set:        optional; build a config for a set of patterns (see
 *                   textsearch_prepare_set()).  An algorithm that has it is
 *                   a set algorithm: its find reports which pattern matched
 *                   with ts_set_match() and handles TS_OVERLAP itself
 *                   (ts_overlap_prev()); for the others the library does.
 * @stream:          optional; how the algorithm streams (struct
 *                   ts_stream_ops in textsearch_stream.h).  Without it
 *                   push-mode streams run through find.
 * @owner:           THIS_MODULE in kernel code; ignored
 * The remaining fields are the registry's bookkeeping; leave them zero.
 */
struct ts_ops {
	const char *name;
	struct ts_config *(*init)(const void *pattern, unsigned int len,
				  gfp_t gfp_mask, int flags);
	unsigned int (*find)(struct ts_config *conf, struct ts_state *state);
	void (*destroy)(struct ts_config *conf);
	void *(*get_pattern)(struct ts_config *conf);
	unsigned int (*get_pattern_len)(struct ts_config *conf);
	struct ts_config *(*init_set)(const void *const *patterns,
				      const unsigned int *lens,
				      unsigned int count, gfp_t gfp_mask,
				      int flags);
	const struct ts_stream_ops *stream;
	struct module *owner;
	/* registry bookkeeping, private */
	struct ts_ops *ts_next;
	unsigned long ts_users;
};

/*
 * A prepared search.
 * @ops:            the algorithm
 * @flags:          flags given to textsearch_prepare()
 * @get_next_block: the block provider.  textsearch_prepare() sets it to a
 *                  library dispatcher that serves every kind of search
 *                  (contiguous, iovec, reader, per-call providers).  Code
 *                  written the kernel's way may set its own function here
 *                  and call textsearch_find(); such a config must then not
 *                  be changed while another thread searches with it.
 *   It is called with the stream offset of the first byte wanted; it stores
 *   a pointer to that byte in *dst and returns how many bytes follow it
 *   contiguously, or 0 at the end of the data.
 * @finish:         optional; called once after every find/next call.
 */
struct ts_config {
	struct ts_ops *ops;
	int flags;
	ts_get_next_block_fn get_next_block;
	ts_finish_fn finish;
	/* private: the algorithm's data, see ts_config_priv() */
	void *ts_priv;
	size_t ts_priv_size;
	/* private: the longest pattern in bytes (set by the library), which
	 * is how far back TS_OVERLAP and leftmost-longest may resume */
	unsigned int ts_longest;
};

/* ---- for algorithms ---------------------------------------------------- */

/* The alignment of an algorithm's private data in its config: a cache
 * line. */
#define TS_CONFIG_ALIGN 64

/*
 * Allocate a zeroed config with @payload bytes of private data for the
 * algorithm, which ts_config_priv() returns, aligned to TS_CONFIG_ALIGN.
 * Returns an error pointer: -ENOMEM, or -EINVAL if the size would
 * overflow.
 */
TS_API struct ts_config *alloc_ts_config(size_t payload, gfp_t gfp_mask);

static inline void *ts_config_priv(struct ts_config *conf)
{
	return conf->ts_priv;
}

/*
 * The case folding of TS_IGNORECASE, the same in every algorithm: ASCII
 * letters and ISO-8859-1 letters 0xC0-0xDE (but 0xD7) fold to 0xE0-0xFE;
 * every other byte, 0xDF and 0xFF among them, folds to itself.
 */
static inline u8 textsearch_fold(u8 c)
{
	if ((c >= 'A' && c <= 'Z') || (c >= 0xC0 && c <= 0xDE && c != 0xD7))
		return (u8)(c + 0x20);
	return c;
}

/*
 * For set algorithms (ts_ops.init_set), in find: record that the match
 * about to be returned is of pattern @id (its index in the set).
 */
TS_API void ts_set_match(struct ts_state *state, unsigned int id);

/*
 * For set algorithms, in find, with TS_OVERLAP: 1 if this call continues
 * after a match that began at state->offset, ended at *@end and was of
 * pattern *@id; find must then return the first occurrence ordered after
 * that one (by start, end, id).  0 on the first call of a search.
 */
TS_API int ts_overlap_prev(const struct ts_state *state, unsigned int *end,
			   unsigned int *id);

/*
 * Register an algorithm.  0; -EINVAL if the name is invalid or init, find,
 * get_pattern or get_pattern_len is missing; -EEXIST if the name is taken
 * (or is "auto").
 */
TS_API int textsearch_register(struct ts_ops *ops);

/* Unregister.  0; -ENOENT if not registered; -EBUSY while configs made with
 * it are alive. */
TS_API int textsearch_unregister(struct ts_ops *ops);

/* ---- for users ---------------------------------------------------------- */

/*
 * Prepare a search for @pattern of @len bytes with @algo: "kmp", "bm",
 * "fsm", "rarebyte" (SIMD, at the best level the CPU has; "rarebyte_avx512",
 * "rarebyte_avx2", "rarebyte_sse2" and "rarebyte_scalar" pin a level, or
 * the best below it), a plugin, or "auto": the fastest built-in algorithm
 * for this literal pattern and these flags, chosen here (conf->ops->name
 * says which; "auto" is reserved, never registered).  @gfp_mask is
 * GFP_KERNEL or GFP_ATOMIC; @flags is a mask of TS_AUTOLOAD,
 * TS_IGNORECASE, TS_OVERLAP, TS_UTF8 and TS_FOLD_LIBC.  Returns the config or an error
 * pointer (errno is set too):
 *   -EINVAL  zero length, NULL argument, bad flags or gfp_mask, invalid
 *            name, a pattern the algorithm rejects, or TS_UTF8 with fsm,
 *            a plugin or a match that may span more than 4096 bytes
 *   -ENOENT  no such algorithm (after trying a plugin with TS_AUTOLOAD)
 *   -ELIBBAD a plugin was found but refused (textsearch_last_error() says why)
 *   -ENOMEM  out of memory
 */
TS_API struct ts_config *textsearch_prepare(const char *algo,
					    const void *pattern,
					    unsigned int len, gfp_t gfp_mask,
					    int flags);

/*
 * Prepare a search for any of @count patterns (@patterns[i] of @lens[i]
 * bytes, 1 or more; duplicates allowed) with a set algorithm ("ac") or
 * "auto" (chosen by the set's size and lengths).  @flags: TS_AUTOLOAD,
 * TS_IGNORECASE, TS_OVERLAP, TS_UTF8, TS_FOLD_LIBC.  Without TS_OVERLAP the matches are leftmost-
 * longest and do not overlap; with it, every occurrence of every pattern,
 * ordered by start, end and id.  Returns the config or an error pointer:
 *   -EINVAL  zero count, NULL array or pattern, zero length, bad flags or
 *            gfp_mask, invalid name, or an algorithm without sets
 *   -ENOENT  no such algorithm;  -ELIBBAD  plugin refused;  -ENOMEM
 */
TS_API struct ts_config *textsearch_prepare_set(const char *algo,
						const void *const *patterns,
						const unsigned int *lens,
						unsigned int count,
						gfp_t gfp_mask, int flags);

/* After a match: the index of the pattern that matched (0 for a single-
 * pattern config) and the match's length.  0 when there is none. */
TS_API unsigned int textsearch_match_id(const struct ts_state *state);
TS_API unsigned int textsearch_match_len(const struct ts_config *conf,
					 const struct ts_state *state);

/* Release a config.  NULL and error pointers are ignored. */
TS_API void textsearch_destroy(struct ts_config *conf);

/*
 * Search from the start of the data served by conf->get_next_block (and run
 * conf->finish once).  Returns the stream offset of the match or UINT_MAX.
 */
TS_API unsigned int textsearch_find(struct ts_config *conf,
				    struct ts_state *state);

/*
 * Continue the search begun by any textsearch_find*() call on @state, from
 * the end of the previous match (never overlapping it; a zero-width match
 * moves on by one byte).  After UINT_MAX it keeps returning UINT_MAX.
 */
TS_API unsigned int textsearch_next(struct ts_config *conf,
				    struct ts_state *state);

/* Search @datalen bytes at @data (none if @data is NULL).  Never writes to
 * @conf. */
TS_API unsigned int textsearch_find_continuous(struct ts_config *conf,
					       struct ts_state *state,
					       const void *data,
					       unsigned int datalen);

/*
 * Search with a provider given for this search only: @get_next_block and
 * the optional @finish are used by this call and by textsearch_next() on
 * the same @state, and receive @conf as their config.  Keep the provider's
 * own state in state->cb (fill it before the call).  Never writes to @conf,
 * so threads with different providers can share a config.
 */
TS_API unsigned int textsearch_find_with(struct ts_config *conf,
					 struct ts_state *state,
					 ts_get_next_block_fn get_next_block,
					 ts_finish_fn finish);

/*
 * Scatter/gather: search the concatenation of @iovcnt buffers (one whose
 * iov_base is NULL counts as empty).  The array must stay valid while
 * textsearch_next() is used on @state.
 */
TS_API unsigned int textsearch_find_iovec(struct ts_config *conf,
					  struct ts_state *state,
					  const struct iovec *iov,
					  unsigned int iovcnt);

/*
 * A reader serves a file descriptor or a stdio stream to a search in chunks
 * of a fixed size, so memory stays bounded whatever the size of the input.
 * Stream offset 0 is the position of the descriptor or stream when the reader
 * was made; one search covers at most UINT_MAX - 1 bytes of it.  A reader
 * serves one search at a time.
 */
struct ts_reader;

/* @chunk_size: 0 for the default (64 KiB).  NULL and errno on failure. */
TS_API struct ts_reader *ts_reader_from_fd(int fd, size_t chunk_size);
TS_API struct ts_reader *ts_reader_from_file(FILE *fp, size_t chunk_size);
/* Frees the reader; never closes the descriptor or stream. */
TS_API void ts_reader_free(struct ts_reader *reader);
/* 0, or the negative errno of the first read that failed (the search then
 * ended as if the data had ended). */
TS_API int ts_reader_error(const struct ts_reader *reader);

TS_API unsigned int textsearch_find_reader(struct ts_config *conf,
					   struct ts_state *state,
					   struct ts_reader *reader);

/* The pattern as given to textsearch_prepare(), and its length. */
TS_API void *textsearch_get_pattern(struct ts_config *conf);
TS_API unsigned int textsearch_get_pattern_len(struct ts_config *conf);

/* ---- errors and version -------------------------------------------------- */

/* A message for a (negative or positive) error code. */
TS_API const char *textsearch_strerror(int err);

/* What went wrong in this thread's last failed textsearch_prepare(),
 * textsearch_register() or textsearch_unregister(), in words; "" if none. */
TS_API const char *textsearch_last_error(void);

/* TEXTSEARCH_VERSION_NUMBER and "1.0.0" of the library actually loaded. */
TS_API unsigned int textsearch_version_number(void);
TS_API const char *textsearch_version_string(void);

/* ---- plugins --------------------------------------------------------------- */

/*
 * A plugin is a shared object ts_<name>.so exporting one descriptor through
 * TEXTSEARCH_PLUGIN(); with TS_AUTOLOAD, textsearch_prepare() looks for it
 * in the absolute directories of TEXTSEARCH_PLUGIN_PATH (colon-separated;
 * ignored in setuid programs) and then in the installed plugin directory,
 * loads it, checks the descriptor before calling any of its methods, and
 * registers its ops.  Loading runs the plugin's constructors, so a plugin
 * file or directory that others than root and the running user own or can
 * write is refused without being loaded (textsearch(3), PLUGINS).  Plugins
 * stay loaded until the process ends.
 */
/* 2: struct ts_ops gained init_set (and ts_state grew, SONAME 2).
 * 3: struct ts_ops gained stream (SONAME 3). */
#define TEXTSEARCH_PLUGIN_ABI 3

struct ts_plugin {
	unsigned int abi_version; /* TEXTSEARCH_PLUGIN_ABI when built */
	unsigned int ops_size;	  /* sizeof(struct ts_ops) when built */
	struct ts_ops *ops;	  /* ops->name must be <name> */
	const char *description;
};

#define TEXTSEARCH_PLUGIN_SYMBOL "textsearch_plugin"

#define TEXTSEARCH_PLUGIN(ops_var, description_text)                        \
	TS_API extern const struct ts_plugin textsearch_plugin;             \
	const struct ts_plugin textsearch_plugin = {                        \
		TEXTSEARCH_PLUGIN_ABI, (unsigned int)sizeof(struct ts_ops), \
		&(ops_var), (description_text)                              \
	}

#ifdef __cplusplus
}
#endif

#endif /* TEXTSEARCH_H */
