/*
 * kmp.c - Knuth-Morris-Pratt.
 *
 * Linear in the data whatever the pattern, and naturally streaming: the only
 * state carried from one block to the next is how many pattern bytes are
 * currently matched, so matches across block boundaries cost nothing extra.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

struct kmp {
	unsigned int len;
	u8 fold[256];	    /* identity unless TS_IGNORECASE */
	unsigned int *fail; /* fail[i]: longest proper border of pat[0..i] */
	u8 *folded;	    /* the pattern through fold[] */
	u8 *pattern;	    /* as the caller gave it */
};

static unsigned int kmp_find(struct ts_config *conf, struct ts_state *state)
{
	const struct kmp *k = ts_config_priv(conf);
	unsigned int consumed = state->offset, matched = 0;
	const u8 *block;
	unsigned int n, i;
	struct ts_provider pv;

	ts_provider_resolve(conf, state, &pv);
	while ((n = ts_provider_next(&pv, consumed, &block, state))) {
		for (i = 0; i < n; i++) {
			u8 c = k->fold[block[i]];

			while (matched && k->folded[matched] != c)
				matched = k->fail[matched - 1];
			if (k->folded[matched] == c && ++matched == k->len) {
				/* i + 1 <= n, so this never wraps */
				state->offset = consumed + i + 1;
				return state->offset - k->len;
			}
		}
		if (n > UINT_MAX - consumed)
			break; /* stream offsets would wrap */
		consumed += n;
	}
	return UINT_MAX;
}

static struct ts_config *kmp_init(const void *pattern, unsigned int len,
				  gfp_t gfp_mask, int flags)
{
	struct ts_config *conf;
	struct kmp *k;
	size_t table, payload;
	unsigned int i, border;

	/* payload = struct + fail table + two copies of the pattern */
	if (!ts_size_mul(len, sizeof(unsigned int), &table) ||
	    !ts_size_add(sizeof(*k), table, &payload) ||
	    !ts_size_add(payload, len, &payload) ||
	    !ts_size_add(payload, len, &payload))
		return ERR_PTR(-EINVAL);
	conf = alloc_ts_config(payload, gfp_mask);
	if (IS_ERR(conf))
		return conf;
	k = ts_config_priv(conf);
	k->len = len;
	k->fail = (unsigned int *)(k + 1);
	k->folded = (u8 *)(k->fail + len);
	k->pattern = k->folded + len;
	ts_fill_fold_table(k->fold, flags & TS_IGNORECASE);
	memcpy(k->pattern, pattern, len);
	for (i = 0; i < len; i++)
		k->folded[i] = k->fold[k->pattern[i]];

	k->fail[0] = 0;
	for (i = 1, border = 0; i < len; i++) {
		while (border && k->folded[border] != k->folded[i])
			border = k->fail[border - 1];
		if (k->folded[border] == k->folded[i])
			border++;
		k->fail[i] = border;
	}
	return conf;
}

static void *kmp_get_pattern(struct ts_config *conf)
{
	return ((struct kmp *)ts_config_priv(conf))->pattern;
}

static unsigned int kmp_get_pattern_len(struct ts_config *conf)
{
	return ((struct kmp *)ts_config_priv(conf))->len;
}

struct ts_ops ts_kmp_ops = {
	.name = "kmp",
	.init = kmp_init,
	.find = kmp_find,
	.get_pattern = kmp_get_pattern,
	.get_pattern_len = kmp_get_pattern_len,
	.stream = &ts_literal_stream_ops,
};
