/*
 * bench_blocks.c - what one block costs: the corpus served in 64-, 256-
 * and 1500-byte blocks through textsearch_find_with(), and through
 * skb_find_text() over a nonlinear buffer whose fragments have those
 * sizes, for absent patterns (so the figure is the scan and the block
 * handling, not the matches).  Printed as ns per block and GB/s, with the
 * contiguous search beside it; bench/blocks_compare.sh runs this section
 * against another build of the library to give "before / after" ratios.
 *
 * The provider is as cheap as a provider can be (no division, one branch
 * in the usual forward step), so what is measured is the library's cost.
 */
#define _GNU_SOURCE /* memmem */
#include "bench_blocks.h"
#include "bench_util.h"

#include <textsearch_skb.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BLK_FULL_SIZE (32u << 20)
#define BLK_QUICK_SIZE (1u << 20)

static const unsigned int blk_sizes[] = { 64, 256, 1500 };
#define NBLK (sizeof(blk_sizes) / sizeof(blk_sizes[0]))
static const unsigned int blk_lens[] = { 1, 2, 4, 8, 16 };
#define NLENS (sizeof(blk_lens) / sizeof(blk_lens[0]))
/* "skb" is skb_find_text() with auto */
static const char *const blk_algos[] = { "auto", "bm", "kmp", "skb" };
#define NALGOS (sizeof(blk_algos) / sizeof(blk_algos[0]))

/* The provider's state, in ts_state.cb: the block last served starts at
 * @cur. */
struct blk_src {
	const u8 *base;
	unsigned int len, bs, cur;
};

static unsigned int blk_next(unsigned int consumed, const u8 **dst,
			     struct ts_config *conf, struct ts_state *state)
{
	struct blk_src b;
	unsigned int end;

	(void)conf;
	/* field by field: a whole-struct copy back and forth makes the
	 * compiler mix store sizes, and the next call's load then waits */
	memcpy(&b.len, state->cb + offsetof(struct blk_src, len), 4);
	memcpy(&b.bs, state->cb + offsetof(struct blk_src, bs), 4);
	memcpy(&b.cur, state->cb + offsetof(struct blk_src, cur), 4);
	if (consumed >= b.len)
		return 0;
	if (consumed - b.cur >= b.bs) {
		/* forward by one block is the usual step; anything else
		 * (a search going back) divides */
		if (consumed >= b.cur + b.bs && consumed < b.cur + 2 * b.bs)
			b.cur += b.bs;
		else
			b.cur = consumed - consumed % b.bs;
		memcpy(state->cb + offsetof(struct blk_src, cur), &b.cur, 4);
	}
	memcpy(&b.base, state->cb, sizeof(b.base));
	end = b.cur + b.bs < b.len ? b.cur + b.bs : b.len;
	*dst = b.base + consumed;
	return end - consumed;
}

struct blk_cell {
	struct ts_config *conf;
	const u8 *data;
	unsigned int len, bs; /* bs 0: contiguous */
	struct sk_buff *skb;  /* set: search it with skb_find_text */
};

static unsigned long blk_run(const struct blk_cell *c)
{
	struct ts_state state;
	unsigned long count = 0;
	unsigned int pos;

	if (c->skb) {
		pos = skb_find_text_state(c->skb, 0, c->len, c->conf, &state);
	} else if (!c->bs) {
		pos = textsearch_find_continuous(c->conf, &state, c->data,
						 c->len);
	} else {
		struct blk_src b = { c->data, c->len, c->bs, 0 };

		memcpy(state.cb, &b, sizeof(b));
		pos = textsearch_find_with(c->conf, &state, blk_next, NULL);
	}
	for (; pos != UINT_MAX; pos = textsearch_next(c->conf, &state))
		count++;
	return count;
}

static unsigned long blk_run_fn(void *c)
{
	return blk_run(c);
}

/* Best of up to @reps passes within @budget seconds. */
static double blk_time(const struct blk_cell *c, unsigned long *count, int reps,
		       double budget)
{
	return bench_best(blk_run_fn, (void *)c, count, reps, budget);
}

/* A buffer of @len bytes of @data in fragments of @bs bytes (not copied):
 * MAX_SKB_FRAGS per member of a frag_list chain, as reassembly builds.
 * The chain is linked by hand: skb_append_frag_list() walks it, which
 * would make building a long one quadratic. */
static struct sk_buff *blk_skb(const u8 *data, unsigned int len,
			       unsigned int bs)
{
	struct sk_buff *root = alloc_skb(64, GFP_KERNEL), *member = root;
	struct sk_buff *prev = NULL;
	unsigned int off = 0;

	if (!root)
		return NULL;
	while (off < len) {
		unsigned int n = len - off < bs ? len - off : bs;

		if (member->shinfo.nr_frags == MAX_SKB_FRAGS) {
			member = alloc_skb(64, GFP_KERNEL);
			if (!member) {
				kfree_skb(root);
				return NULL;
			}
			if (prev)
				prev->next = member;
			else
				root->shinfo.frag_list = member;
			prev = member;
		}
		if (skb_add_frag(member, data + off, n, NULL, NULL)) {
			kfree_skb(root);
			return NULL;
		}
		if (member != root) {
			root->len += n;
			root->data_len += n;
		}
		off += n;
	}
	return root;
}

/* An absent pattern of @len bytes: text from the corpus with its last
 * byte changed (so it looks like a real search), or for one or two bytes
 * bytes the corpus lacks. */
static int blk_pick(char *dst, unsigned int len, const u8 *data, size_t n)
{
	static const char odd[] = "~^`|{}#";
	size_t off = n / 3;
	unsigned int tries;

	for (tries = 0; tries < 4096; tries++) {
		if (len <= 2) {
			dst[0] = odd[tries % (sizeof(odd) - 1)];
			if (len == 2)
				dst[1] = odd[(tries / (sizeof(odd) - 1)) %
					     (sizeof(odd) - 1)];
		} else {
			memcpy(dst, data + off, len);
			dst[len - 1] = (char)('a' + tries % 26);
			off += 4099;
			if (off + len > n)
				off = 0;
		}
		dst[len] = '\0';
		if (strlen(dst) == len && !memmem(data, n, dst, len))
			return 0;
	}
	return -1;
}

int bench_blocks(const u8 *corpus, size_t len, int quick)
{
	const unsigned int n =
		(unsigned int)(len < (quick ? BLK_QUICK_SIZE : BLK_FULL_SIZE) ?
				       len :
				       (quick ? BLK_QUICK_SIZE :
						BLK_FULL_SIZE));
	const double budget = quick ? 0.02 : 0.25;
	const int reps = quick ? 2 : 7;
	struct sk_buff *skbs[NBLK];
	char pats[NLENS][32];
	unsigned int a, l, b;
	int wrong = 0;

	for (l = 0; l < NLENS; l++)
		if (blk_pick(pats[l], blk_lens[l], corpus, n)) {
			fprintf(stderr, "bench: no absent %u-byte pattern\n",
				blk_lens[l]);
			return 1;
		}
	for (b = 0; b < NBLK; b++) {
		skbs[b] = blk_skb(corpus, n, blk_sizes[b]);
		if (!skbs[b] || skbs[b]->len != n) {
			fprintf(stderr, "bench: cannot build the skb\n");
			return 1;
		}
	}
	printf("\nPer-block cost: a %u-byte slice of the corpus in fixed-size "
	       "blocks\n(textsearch_find_with; skb = skb_find_text, auto, over "
	       "fragments of that size),\nabsent patterns, best of up to %d "
	       "passes; ns per block and GB/s\n",
	       n, reps);
	printf("%-5s %3s  %8s %6s  %8s %6s  %8s %6s  %6s  pattern\n", "algo",
	       "len", "ns/64", "GB/s", "ns/256", "GB/s", "ns/1500", "GB/s",
	       "contig");
	for (a = 0; a < NALGOS; a++) {
		int skb = !strcmp(blk_algos[a], "skb");

		for (l = 0; l < NLENS; l++) {
			struct blk_cell c = { 0 };
			unsigned long count;
			double t;

			c.conf = textsearch_prepare(skb ? "auto" : blk_algos[a],
						    pats[l], blk_lens[l],
						    GFP_KERNEL, 0);
			if (IS_ERR(c.conf)) {
				printf("%-5s %3u  (not available)\n",
				       blk_algos[a], blk_lens[l]);
				continue;
			}
			c.data = corpus;
			c.len = n;
			printf("%-5s %3u ", blk_algos[a], blk_lens[l]);
			for (b = 0; b < NBLK; b++) {
				c.bs = blk_sizes[b];
				c.skb = skb ? skbs[b] : NULL;
				t = blk_time(&c, &count, reps, budget);
				if (count) {
					printf("WRONG: %lu matches ", count);
					wrong++;
				}
				printf(" %8.2f %6.2f",
				       t * 1e9 / ((double)n / c.bs),
				       n / t * 1e-9);
			}
			c.bs = 0;
			c.skb = NULL;
			t = blk_time(&c, &count, reps, budget);
			if (count) {
				printf("WRONG: %lu matches ", count);
				wrong++;
			}
			printf("  %6.2f  '%s'\n", n / t * 1e-9, pats[l]);
			textsearch_destroy(c.conf);
		}
	}
	for (b = 0; b < NBLK; b++)
		kfree_skb(skbs[b]);
	return wrong;
}
