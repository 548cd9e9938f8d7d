/*
 * ts_shiftor.c - Shift-Or (bitap) as a textsearch plugin.
 *
 * Bit j of the state vector D is 0 while the last j + 1 bytes read equal
 * the first j + 1 pattern bytes; each byte shifts D left by one and ORs in
 * the mask of that byte (0 bits where the pattern has it).  A match ends
 * where bit len - 1 becomes 0.  D is the whole state carried from one block
 * to the next, so matches across block boundaries cost no copying at all.
 * Patterns longer than 64 bytes use a vector of 64-bit words.
 *
 * Written as any third party writes a plugin: only the installed
 * <textsearch.h>, built with `pkg-config --cflags --libs textsearch`.
 */
#include <textsearch.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define WORD_BITS 64u
/* Longest state vector kept on the stack (2048-byte patterns); a longer
 * one is allocated per search, as the config is shared and read-only. */
#define STACK_WORDS 32u

struct shiftor {
	unsigned int len;
	unsigned int words; /* 64-bit words per vector */
	uint64_t *masks;    /* masks[c * words ...]: 0 where pattern has c */
	u8 *pattern;	    /* as the caller gave it */
};

/* The usual case, one word: patterns up to 64 bytes. */
static unsigned int find_short(const struct shiftor *so, struct ts_config *conf,
			       struct ts_state *state)
{
	const uint64_t *masks = so->masks;
	const uint64_t hit = (uint64_t)1 << (so->len - 1);
	uint64_t d = ~(uint64_t)0;
	unsigned int consumed = state->offset, n, i;
	const u8 *block;

	while ((n = conf->get_next_block(consumed, &block, conf, state))) {
		if (n > UINT_MAX - consumed)
			n = UINT_MAX - consumed; /* offsets must not wrap */
		for (i = 0; i < n; i++) {
			d = (d << 1) | masks[block[i]];
			if (!(d & hit)) {
				state->offset = consumed + i + 1;
				return state->offset - so->len;
			}
		}
		consumed += n;
		if (consumed == UINT_MAX)
			break;
	}
	return UINT_MAX;
}

static unsigned int find_long(const struct shiftor *so, struct ts_config *conf,
			      struct ts_state *state)
{
	const unsigned int words = so->words, top = words - 1;
	const uint64_t hit = (uint64_t)1 << ((so->len - 1) % WORD_BITS);
	uint64_t on_stack[STACK_WORDS], *d = on_stack;
	unsigned int consumed = state->offset, n, i, w;
	unsigned int pos = UINT_MAX;
	const u8 *block;

	if (words > STACK_WORDS) {
		/* words * 8 was checked in init, as part of the masks */
		d = malloc((size_t)words * sizeof(*d));
		if (!d) {
			errno = ENOMEM;
			return UINT_MAX;
		}
	}
	memset(d, 0xff, (size_t)words * sizeof(*d));

	while (pos == UINT_MAX &&
	       (n = conf->get_next_block(consumed, &block, conf, state))) {
		if (n > UINT_MAX - consumed)
			n = UINT_MAX - consumed;
		for (i = 0; i < n; i++) {
			const uint64_t *m =
				so->masks + (size_t)block[i] * words;
			uint64_t carry = 0;

			for (w = 0; w < words; w++) {
				uint64_t x = d[w];

				d[w] = (x << 1) | carry | m[w];
				carry = x >> (WORD_BITS - 1);
			}
			if (!(d[top] & hit)) {
				state->offset = consumed + i + 1;
				pos = state->offset - so->len;
				break;
			}
		}
		consumed += n;
		if (consumed == UINT_MAX)
			break;
	}
	if (d != on_stack)
		free(d);
	return pos;
}

static unsigned int shiftor_find(struct ts_config *conf, struct ts_state *state)
{
	const struct shiftor *so = ts_config_priv(conf);

	if (so->words == 1)
		return find_short(so, conf, state);
	return find_long(so, conf, state);
}

static struct ts_config *shiftor_init(const void *pattern, unsigned int len,
				      gfp_t gfp_mask, int flags)
{
	const u8 *pat = pattern;
	struct ts_config *conf;
	struct shiftor *so;
	size_t words, table, payload;
	unsigned int j, c;

	if (len == 0)
		return ERR_PTR(-EINVAL);
	words = len / WORD_BITS + (len % WORD_BITS != 0);
	/* payload = struct + 256 masks of `words` words + the pattern */
	if (__builtin_mul_overflow(words, 256 * sizeof(uint64_t), &table) ||
	    __builtin_add_overflow(sizeof(*so), table, &payload) ||
	    __builtin_add_overflow(payload, (size_t)len, &payload))
		return ERR_PTR(-EINVAL);
	conf = alloc_ts_config(payload, gfp_mask);
	if (IS_ERR(conf))
		return conf;
	so = ts_config_priv(conf);
	so->len = len;
	so->words = (unsigned int)words;
	so->masks = (uint64_t *)(so + 1); /* sizeof(*so) keeps 8-alignment */
	so->pattern = (u8 *)(so->masks + 256 * words);
	memcpy(so->pattern, pat, len);

	memset(so->masks, 0xff, table);
	for (j = 0; j < len; j++) {
		u8 b = (flags & TS_IGNORECASE) ? textsearch_fold(pat[j]) :
						 pat[j];

		so->masks[b * words + j / WORD_BITS] &=
			~((uint64_t)1 << (j % WORD_BITS));
	}
	/* every byte gets the mask of its folded form */
	if (flags & TS_IGNORECASE)
		for (c = 0; c < 256; c++)
			if (textsearch_fold((u8)c) != c)
				memcpy(so->masks + c * words,
				       so->masks +
					       textsearch_fold((u8)c) * words,
				       words * sizeof(uint64_t));
	return conf;
}

static void *shiftor_get_pattern(struct ts_config *conf)
{
	return ((struct shiftor *)ts_config_priv(conf))->pattern;
}

static unsigned int shiftor_get_pattern_len(struct ts_config *conf)
{
	return ((struct shiftor *)ts_config_priv(conf))->len;
}

static struct ts_ops shiftor_ops = {
	.name = "shiftor",
	.init = shiftor_init,
	.find = shiftor_find,
	.get_pattern = shiftor_get_pattern,
	.get_pattern_len = shiftor_get_pattern_len,
	.owner = THIS_MODULE,
};

TEXTSEARCH_PLUGIN(shiftor_ops, "Shift-Or (bitap): streaming, any pattern "
			       "length");
