/*
 * registry.c - the list of algorithms, and the life of a config.
 *
 * Like the kernel's lib/textsearch.c, the registry is a short list of ts_ops
 * under one lock.  Built-in algorithms are registered through the same path
 * as plugins, once, on first use.  Each ops counts the configs made with it,
 * so an algorithm cannot be unregistered from under a live config (the
 * kernel's module reference count plays that part).
 */
#include "internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ts_ops *registry_head; /* guarded by registry_lock */
static pthread_once_t builtins_once = PTHREAD_ONCE_INIT;
/* One autoload at a time, so two threads autoloading one name load it
 * once: the second finds what the first registered.  Taken before
 * registry_lock, never inside it. */
static pthread_mutex_t autoload_lock = PTHREAD_MUTEX_INITIALIZER;

/* Letters, digits, underscore; 1 to TS_NAME_MAX characters. */
static bool ts_name_is_valid(const char *name)
{
	size_t n;

	if (!name)
		return false;
	for (n = 0; name[n]; n++) {
		unsigned char c = (unsigned char)name[n];

		if (n >= TS_NAME_MAX)
			return false;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_'))
			return false;
	}
	return n > 0;
}

static struct ts_ops *find_locked(const char *name)
{
	struct ts_ops *o;

	for (o = registry_head; o; o = o->ts_next)
		if (strcmp(o->name, name) == 0)
			return o;
	return NULL;
}

/*
 * The name textsearch_prepare() resolves before any lookup, and which no
 * algorithm may take.
 */
#define TS_AUTO_NAME "auto"

/*
 * What "auto" means for @pattern and @flags: the fastest built-in literal
 * search.  Measured (docs/performance.md, "auto"), that is rarebyte for
 * every length from 1 to 256 bytes, exact and TS_IGNORECASE, absent and
 * rare patterns, periodic ones included: its vector filter wins by 8x or
 * more over bm, kmp and shiftor.  Only data dense with matches of a
 * periodic pattern ("abab" in "abababab...") lets bm or shiftor catch up,
 * and that depends on the data, which a prepare cannot see.
 */
static const char *auto_algorithm(const void *pattern, unsigned int len,
				  int flags)
{
	(void)pattern;
	(void)len;
	(void)flags;
	return "rarebyte";
}

/*
 * What "auto" means for a set: one pattern is searched by the single-
 * pattern choice (a set of one gives the same matches, with id 0).  Small
 * sets go to teddy, whose filter gets weaker as buckets fill and keys
 * shorten (it keys on the first 3 or 4 bytes, fewer if a pattern is
 * shorter); the thresholds are where it stopped beating Aho-Corasick on
 * English-like text (docs/performance.md, "What auto picks"): up to 8
 * patterns whatever their lengths, 32 from 2 bytes, 64 from 3 bytes, 128
 * (teddy's limit) from 4.  The rest go to "ac", which is linear whatever
 * the set and the data.
 */
static const char *auto_set_algorithm(const unsigned int *lens,
				      unsigned int count)
{
	unsigned int i, shortest = UINT_MAX;

	if (count == 1)
		return NULL;
	for (i = 0; i < count; i++)
		if (lens[i] < shortest)
			shortest = lens[i];
	if (count <= 8 || (count <= 32 && shortest >= 2) ||
	    (count <= 64 && shortest >= 3) || (count <= 128 && shortest >= 4))
		return "teddy";
	return "ac";
}

static int register_ops(struct ts_ops *ops)
{
	int err = 0;

	if (!ops)
		return ts_fail(-EINVAL, "textsearch_register: ops is NULL");
	if (!ts_name_is_valid(ops->name))
		return ts_fail(-EINVAL,
			       "textsearch_register: invalid algorithm name "
			       "(letters, digits and '_', 1 to %d characters)",
			       TS_NAME_MAX);
	if (!ts_ops_has_methods(ops))
		return ts_fail(-EINVAL,
			       "textsearch_register: '%s' lacks init, find, "
			       "get_pattern or get_pattern_len",
			       ops->name);

	pthread_mutex_lock(&registry_lock);
	if (find_locked(ops->name) || strcmp(ops->name, TS_AUTO_NAME) == 0) {
		err = -EEXIST;
	} else {
		ops->ts_users = 0;
		ops->ts_next = registry_head;
		registry_head = ops;
	}
	pthread_mutex_unlock(&registry_lock);
	if (err)
		return ts_fail(err, "textsearch_register: '%s' is %s",
			       ops->name,
			       strcmp(ops->name, TS_AUTO_NAME) == 0 ?
				       "reserved for the automatic choice" :
				       "already registered");
	return 0;
}

static void register_builtins(void)
{
	struct ts_ops *const builtins[] = {
		&ts_kmp_ops,
		&ts_bm_ops,
		&ts_fsm_ops,
		&ts_rarebyte_ops,
		&ts_rarebyte_avx512_ops,
		&ts_rarebyte_avx2_ops,
		&ts_rarebyte_sse2_ops,
		&ts_rarebyte_scalar_ops,
		&ts_ac_ops,
		&ts_teddy_ops,
		&ts_teddy_vbmi_ops,
		&ts_teddy_avx512_ops,
		&ts_teddy_avx2_ops,
		&ts_teddy_ssse3_ops,
		&ts_teddy_scalar_ops,
	};
	size_t i;

	for (i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++)
		register_ops(builtins[i]);
}

static void ensure_builtins(void)
{
	pthread_once(&builtins_once, register_builtins);
}

int textsearch_register(struct ts_ops *ops)
{
	int err;

	ensure_builtins();
	err = register_ops(ops);
	if (!err)
		ts_clear_error();
	return err;
}

int textsearch_unregister(struct ts_ops *ops)
{
	struct ts_ops **link;
	int err = -ENOENT;

	ensure_builtins();
	if (!ops)
		return ts_fail(-EINVAL, "textsearch_unregister: ops is NULL");
	pthread_mutex_lock(&registry_lock);
	for (link = &registry_head; *link; link = &(*link)->ts_next) {
		if (*link != ops)
			continue;
		if (ops->ts_users) {
			err = -EBUSY;
		} else {
			*link = ops->ts_next;
			ops->ts_next = NULL;
			err = 0;
		}
		break;
	}
	pthread_mutex_unlock(&registry_lock);
	if (err == -ENOENT)
		return ts_fail(err,
			       "textsearch_unregister: '%s' is not "
			       "registered",
			       ops->name ? ops->name : "?");
	if (err == -EBUSY)
		return ts_fail(err,
			       "textsearch_unregister: '%s' is used by "
			       "%lu live config(s)",
			       ops->name, ops->ts_users);
	ts_clear_error();
	return 0;
}

/* Look up @name and take a reference on it. */
static struct ts_ops *get_ops(const char *name)
{
	struct ts_ops *ops;

	pthread_mutex_lock(&registry_lock);
	ops = find_locked(name);
	if (ops)
		ops->ts_users++;
	pthread_mutex_unlock(&registry_lock);
	return ops;
}

static void put_ops(struct ts_ops *ops)
{
	pthread_mutex_lock(&registry_lock);
	ops->ts_users--;
	pthread_mutex_unlock(&registry_lock);
}

/* Load the plugin for @name and register its ops; a reference on them in
 * *@ops.  0, or the error the loader or the registry gave. */
static int autoload(const char *name, struct ts_ops **ops)
{
	struct ts_plugin_loaded plugin;
	int err = 0;

	pthread_mutex_lock(&autoload_lock);
	*ops = get_ops(name);
	if (!*ops) {
		err = ts_plugin_load(name, &plugin);
		if (!err) {
			err = register_ops(plugin.ops);
			/* -EEXIST: registered meanwhile by textsearch_register(),
			 * and these ops are not in the registry (if they are
			 * the same object, this only drops a reference) */
			if (err)
				ts_plugin_unload(&plugin);
		}
		if (!err || err == -EEXIST) {
			err = 0;
			*ops = get_ops(name);
		}
	}
	pthread_mutex_unlock(&autoload_lock);
	return err;
}

/* Finish a prepare that failed: set errno and make the error pointer. */
static struct ts_config *prepare_error(int err)
{
	errno = -err;
	return ERR_PTR(err);
}

/* The checks textsearch_prepare() and textsearch_prepare_set() share,
 * after their pattern checks: 0 or an error recorded with ts_fail(). */
static int check_request(const char *fn, const char *algo, gfp_t gfp_mask,
			 int flags)
{
	if (!algo)
		return ts_fail(-EINVAL, "%s: algorithm is NULL", fn);
	if (flags & ~(TS_AUTOLOAD | TS_IGNORECASE | TS_OVERLAP | TS_UTF8 |
		      TS_FOLD_LIBC))
		return ts_fail(-EINVAL, "%s: unknown flags 0x%x", fn,
			       (unsigned int)flags);
	if ((flags & TS_FOLD_LIBC) && !(flags & TS_UTF8))
		return ts_fail(-EINVAL, "%s: TS_FOLD_LIBC without TS_UTF8", fn);
	if (gfp_mask != GFP_KERNEL && gfp_mask != GFP_ATOMIC)
		return ts_fail(-EINVAL,
			       "%s: gfp_mask must be GFP_KERNEL or "
			       "GFP_ATOMIC",
			       fn);
	if (!ts_name_is_valid(algo))
		return ts_fail(-EINVAL,
			       "%s: invalid algorithm name (letters, digits "
			       "and '_', 1 to %d characters)",
			       fn, TS_NAME_MAX);
	return 0;
}

/* Find @algo, loading its plugin if allowed; a reference in *@ops. */
static int lookup(const char *fn, const char *algo, gfp_t gfp_mask, int flags,
		  struct ts_ops **ops)
{
	int err;

	*ops = get_ops(algo);
	if (!*ops && (flags & TS_AUTOLOAD) && gfp_mask != GFP_ATOMIC) {
		err = autoload(algo, ops);
		if (err)
			return err;
	}
	if (*ops)
		return 0;
	if (!(flags & TS_AUTOLOAD))
		return ts_fail(-ENOENT,
			       "%s: no algorithm '%s' (TS_AUTOLOAD would look "
			       "for a plugin)",
			       fn, algo);
	return ts_fail(-ENOENT, "%s: no algorithm '%s'%s", fn, algo,
		       gfp_mask == GFP_ATOMIC ?
			       " (GFP_ATOMIC never loads a plugin)" :
			       "");
}

/* Finish a config that @ops->init or init_set returned. */
static struct ts_config *prepared(const char *fn, const char *algo,
				  struct ts_ops *ops, struct ts_config *conf,
				  int flags, unsigned int longest)
{
	int err;

	if (IS_ERR_OR_NULL(conf)) {
		char why[256];

		put_ops(ops);
		err = conf ? (int)PTR_ERR(conf) : -ENOMEM;
		/* the algorithm's own reason, when it gave one (the caller
		 * cleared the message before init) */
		snprintf(why, sizeof(why), "%s", textsearch_last_error());
		return prepare_error(
			ts_fail(err, "%s: %s rejected the pattern: %s", fn,
				algo, why[0] ? why : textsearch_strerror(err)));
	}
	conf->ops = ops;
	conf->flags = flags;
	conf->get_next_block = ts_dispatch_next_block;
	conf->finish = NULL;
	conf->ts_longest = longest;
	ts_clear_error();
	return conf;
}

/* The built-in algorithms whose patterns are literals: those TS_UTF8
 * works with. */
static bool builtin_literal(const struct ts_ops *ops)
{
	const struct ts_ops *const literal[] = {
		&ts_kmp_ops,
		&ts_bm_ops,
		&ts_rarebyte_ops,
		&ts_rarebyte_avx512_ops,
		&ts_rarebyte_avx2_ops,
		&ts_rarebyte_sse2_ops,
		&ts_rarebyte_scalar_ops,
		&ts_ac_ops,
		&ts_teddy_ops,
		&ts_teddy_vbmi_ops,
		&ts_teddy_avx512_ops,
		&ts_teddy_avx2_ops,
		&ts_teddy_ssse3_ops,
		&ts_teddy_scalar_ops,
	};

	for (size_t i = 0; i < sizeof(literal) / sizeof(literal[0]); i++)
		if (ops == literal[i])
			return true;
	return false;
}

/*
 * TS_UTF8: the UTF-8 engine (utf8.c) with a prefilter of @algo, or, when
 * the patterns need none, the plain algorithm with the flags under which
 * it finds exactly the same matches (ts_utf8_prepare()).  The config keeps
 * the caller's flags either way.
 */
static struct ts_config *prepare_utf8(const char *fn, const char *algo,
				      const void *const *patterns,
				      const unsigned int *lens,
				      unsigned int count, gfp_t gfp_mask,
				      int flags, bool set)
{
	int plain = 0;
	struct ts_config *conf;
	struct ts_ops *ops;
	bool set_algo = true;
	unsigned int longest = 0;

	if (strcmp(algo, TS_AUTO_NAME) != 0) {
		ops = get_ops(algo);
		if (!ops || !builtin_literal(ops)) {
			if (ops)
				put_ops(ops);
			return prepare_error(ts_fail(
				-EINVAL,
				"%s: TS_UTF8 works with the built-in literal "
				"algorithms (kmp, bm, rarebyte, ac, teddy and "
				"auto), not '%s'",
				fn, algo));
		}
		set_algo = ops->init_set != NULL;
		put_ops(ops);
	}
	ts_clear_error();
	conf = ts_utf8_prepare(algo, set_algo, patterns, lens, count, gfp_mask,
			       flags, false, &longest, &plain);
	if (!conf) {
		conf = set ? textsearch_prepare_set(algo, patterns, lens, count,
						    gfp_mask, plain) :
			     textsearch_prepare(algo, patterns[0], lens[0],
						gfp_mask, plain);
		if (!IS_ERR(conf))
			conf->flags = flags;
		return conf;
	}
	pthread_mutex_lock(&registry_lock);
	ts_utf8_ops.ts_users++;
	pthread_mutex_unlock(&registry_lock);
	return prepared(fn, algo, &ts_utf8_ops, conf, flags, longest);
}

struct ts_config *textsearch_prepare(const char *algo, const void *pattern,
				     unsigned int len, gfp_t gfp_mask,
				     int flags)
{
	static const char fn[] = "textsearch_prepare";
	struct ts_ops *ops;
	int err;

	ensure_builtins();
	if (len == 0)
		return prepare_error(ts_fail(-EINVAL, "%s: empty pattern", fn));
	if (algo && !pattern)
		return prepare_error(
			ts_fail(-EINVAL, "%s: pattern is NULL", fn));
	err = check_request(fn, algo, gfp_mask, flags);
	if (err)
		return prepare_error(err);

	if (flags & TS_UTF8)
		return prepare_utf8(fn, algo, &pattern, &len, 1, gfp_mask,
				    flags, false);
	if (strcmp(algo, TS_AUTO_NAME) == 0)
		algo = auto_algorithm(pattern, len, flags);
	err = lookup(fn, algo, gfp_mask, flags, &ops);
	if (err)
		return prepare_error(err);
	ts_clear_error();
	return prepared(fn, algo, ops, ops->init(pattern, len, gfp_mask, flags),
			flags, len);
}

struct ts_config *textsearch_prepare_set(const char *algo,
					 const void *const *patterns,
					 const unsigned int *lens,
					 unsigned int count, gfp_t gfp_mask,
					 int flags)
{
	static const char fn[] = "textsearch_prepare_set";
	struct ts_ops *ops;
	unsigned int i, longest = 0;
	int err;

	ensure_builtins();
	if (count == 0)
		return prepare_error(ts_fail(-EINVAL, "%s: no patterns", fn));
	if (!patterns || !lens)
		return prepare_error(ts_fail(-EINVAL, "%s: %s is NULL", fn,
					     patterns ? "lens" : "patterns"));
	for (i = 0; i < count; i++) {
		if (!patterns[i] || !lens[i])
			return prepare_error(
				ts_fail(-EINVAL, "%s: pattern %u is %s", fn, i,
					patterns[i] ? "empty" : "NULL"));
		if (lens[i] > longest)
			longest = lens[i];
	}
	err = check_request(fn, algo, gfp_mask, flags);
	if (err)
		return prepare_error(err);

	if (flags & TS_UTF8) {
		if (count == 1 && strcmp(algo, TS_AUTO_NAME) == 0)
			return textsearch_prepare(algo, patterns[0], lens[0],
						  gfp_mask, flags);
		if (strcmp(algo, TS_AUTO_NAME) != 0) {
			/* a set needs a set algorithm, with TS_UTF8 too */
			err = lookup(fn, algo, gfp_mask, flags, &ops);
			if (err)
				return prepare_error(err);
			err = ops->init_set ? 0 : -EINVAL;
			put_ops(ops);
			if (err)
				return prepare_error(ts_fail(
					-EINVAL,
					"%s: '%s' searches for one pattern, "
					"not a set",
					fn, algo));
		}
		return prepare_utf8(fn, algo, patterns, lens, count, gfp_mask,
				    flags, true);
	}
	if (strcmp(algo, TS_AUTO_NAME) == 0) {
		algo = auto_set_algorithm(lens, count);
		if (!algo)
			return textsearch_prepare(TS_AUTO_NAME, patterns[0],
						  lens[0], gfp_mask, flags);
	}
	err = lookup(fn, algo, gfp_mask, flags, &ops);
	if (err)
		return prepare_error(err);
	if (!ops->init_set) {
		put_ops(ops);
		return prepare_error(
			ts_fail(-EINVAL,
				"%s: '%s' searches for one pattern, "
				"not a set",
				fn, algo));
	}
	ts_clear_error();
	return prepared(fn, algo, ops,
			ops->init_set(patterns, lens, count, gfp_mask, flags),
			flags, longest);
}

void textsearch_destroy(struct ts_config *conf)
{
	if (IS_ERR_OR_NULL(conf))
		return;
	if (conf->ops) {
		if (conf->ops->destroy)
			conf->ops->destroy(conf);
		put_ops(conf->ops);
	}
	free(conf);
}

struct ts_config *alloc_ts_config(size_t payload, gfp_t gfp_mask)
{
	/* The payload follows the config, on a cache line of its own: an
	 * algorithm's tables are then loaded as whole vectors, none split
	 * across two lines (and where the heap puts the config does not
	 * change what a search costs). */
	const size_t head = sizeof(struct ts_config) + TS_CONFIG_ALIGN - 1;
	struct ts_config *conf;
	size_t total;

	(void)gfp_mask;
	if (!ts_size_add(head, payload, &total))
		return ERR_PTR(-EINVAL);
	conf = calloc(1, total);
	if (!conf)
		return ERR_PTR(-ENOMEM);
	conf->ts_priv = (void *)(((uintptr_t)(conf + 1) + TS_CONFIG_ALIGN - 1) &
				 ~(uintptr_t)(TS_CONFIG_ALIGN - 1));
	conf->ts_priv_size = payload;
	return conf;
}

void *textsearch_get_pattern(struct ts_config *conf)
{
	return conf->ops->get_pattern(conf);
}

unsigned int textsearch_get_pattern_len(struct ts_config *conf)
{
	return conf->ops->get_pattern_len(conf);
}
