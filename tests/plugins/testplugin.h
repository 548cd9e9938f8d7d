/*
 * testplugin.h - a small, correct algorithm shared by the test plugins, so
 * that each of them differs from a good plugin in one way only.
 *
 * A sliding window of the last len bytes (a ring), compared with the
 * pattern after every byte: slow, obviously right, and streaming.  The
 * functions are static inline so a plugin may leave some unused.
 */
#ifndef TS_TESTPLUGIN_H
#define TS_TESTPLUGIN_H

#include <textsearch.h>

#include <stdlib.h>
#include <string.h>

struct tp_priv {
	unsigned int len;
	u8 pattern[];
};

static inline struct ts_config *tp_init(const void *pattern, unsigned int len,
					gfp_t gfp_mask, int flags)
{
	struct ts_config *conf;
	struct tp_priv *p;
	size_t size;

	if (flags & TS_IGNORECASE)
		return ERR_PTR(-EINVAL); /* keep it simple */
	if (__builtin_add_overflow(sizeof(*p), (size_t)len, &size))
		return ERR_PTR(-EINVAL);
	conf = alloc_ts_config(size, gfp_mask);
	if (IS_ERR(conf))
		return conf;
	p = ts_config_priv(conf);
	p->len = len;
	memcpy(p->pattern, pattern, len);
	return conf;
}

static inline unsigned int tp_find(struct ts_config *conf,
				   struct ts_state *state)
{
	const struct tp_priv *p = ts_config_priv(conf);
	unsigned int consumed = state->offset, n, i, have = 0, head = 0;
	unsigned int pos = UINT_MAX;
	const u8 *block;
	u8 *win = malloc(p->len);

	if (!win)
		return UINT_MAX;
	while (pos == UINT_MAX &&
	       (n = conf->get_next_block(consumed, &block, conf, state))) {
		if (n > UINT_MAX - consumed)
			n = UINT_MAX - consumed;
		for (i = 0; i < n; i++) {
			if (have < p->len) {
				win[have++] = block[i];
			} else {
				win[head] = block[i];
				head = (head + 1) % p->len;
			}
			if (have == p->len &&
			    !memcmp(win + head, p->pattern, p->len - head) &&
			    !memcmp(win, p->pattern + p->len - head, head)) {
				state->offset = consumed + i + 1;
				pos = state->offset - p->len;
				break;
			}
		}
		consumed += n;
		if (consumed == UINT_MAX)
			break;
	}
	free(win);
	return pos;
}

static inline void *tp_get_pattern(struct ts_config *conf)
{
	return ((struct tp_priv *)ts_config_priv(conf))->pattern;
}

static inline unsigned int tp_get_pattern_len(struct ts_config *conf)
{
	return ((struct tp_priv *)ts_config_priv(conf))->len;
}

/* A complete ts_ops named @algo. */
#define TP_OPS(var, algo)                              \
	static struct ts_ops var = {                   \
		.name = (algo),                        \
		.init = tp_init,                       \
		.find = tp_find,                       \
		.get_pattern = tp_get_pattern,         \
		.get_pattern_len = tp_get_pattern_len, \
	}

#endif
