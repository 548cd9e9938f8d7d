/*
 * seq_read.c - reading a packet buffer block by block (the kernel's
 * skb_seq_read), and skb_find_text() on top of it.
 *
 * A buffer's bytes are its pieces in stream order: the linear part, each
 * fragment, then each frag_list member's own pieces.  Members may have a
 * frag_list of their own; the reader follows nesting up to
 * SKB_MAX_NESTING levels (the kernel follows one) and treats anything
 * deeper as the end of the data, so a cycle cannot hang it.
 *
 * The reader caches the piece it served last.  Reading forward moves on
 * from it in amortised O(1) (to the next fragment, or the next member of
 * the same chain); anything else, reading backwards included, locates the
 * piece afresh from the root, in O(depth x members).
 *
 * skb_seq_state keeps the kernel's field names; here they mean:
 *   lower_offset, upper_offset  the range [from, to), clamped to skb->len
 *   root_skb                    the buffer being read
 *   cur_skb                     the buffer of the cached piece (NULL: none)
 *   frag_idx                    the piece: 0 the linear part, i + 1 frags[i]
 *   stepped_offset              where the piece starts (offset from data)
 *   frag_off                    where cur_skb's own bytes start
 *   frag_data                   the piece's first byte
 */
#include "internal.h"
#include "textsearch_skb.h"

#include <stddef.h>
#include <string.h>

#define SKB_MAX_NESTING 16u

/* Stream offsets stop short of UINT_MAX, which means "no match". */
#define STREAM_END (UINT_MAX - 1u)

static unsigned int piece_len(const struct sk_buff *skb, u32 idx)
{
	return idx == 0 ? skb_headlen(skb) : skb->shinfo.frags[idx - 1].size;
}

static const u8 *piece_data(const struct sk_buff *skb, u32 idx)
{
	return idx == 0 ? skb->data : skb->shinfo.frags[idx - 1].data;
}

static void cache_piece(struct skb_seq_state *st, struct sk_buff *skb, u32 idx,
			u32 start, u32 skb_start)
{
	st->cur_skb = skb;
	st->frag_idx = idx;
	st->stepped_offset = start;
	st->frag_off = skb_start;
	st->frag_data = piece_data(skb, idx);
}

/* Locate the piece holding byte @abs from the root down; false if none. */
static bool locate_from_root(struct skb_seq_state *st, u32 abs)
{
	struct sk_buff *skb = st->root_skb, *member;
	u32 start = 0, depth = 0, idx;

	for (;;) {
		u32 skb_start = start;

		for (idx = 0; idx <= skb->shinfo.nr_frags; idx++) {
			unsigned int len = piece_len(skb, idx);

			if (abs - start < len) {
				cache_piece(st, skb, idx, start, skb_start);
				return true;
			}
			start += len;
		}
		if (depth++ == SKB_MAX_NESTING)
			return false;
		for (member = skb->shinfo.frag_list; member;
		     member = member->next) {
			if (abs - start < member->len)
				break;
			start += member->len;
		}
		if (!member)
			return false;
		skb = member;
	}
}

/* Move forward from the cached piece (which ends at or before @abs) to the
 * piece holding @abs, within the cached buffer and its later siblings;
 * anything else is left to locate_from_root(). */
static bool locate_forward(struct skb_seq_state *st, u32 abs)
{
	struct sk_buff *skb = st->cur_skb;
	u32 idx = st->frag_idx, start = st->stepped_offset;
	u32 skb_start = st->frag_off;

	for (;;) {
		if (idx <= skb->shinfo.nr_frags) {
			unsigned int len = piece_len(skb, idx);

			if (abs - start < len) {
				cache_piece(st, skb, idx, start, skb_start);
				return true;
			}
			start += len;
			idx++;
			continue;
		}
		/* past skb's own pieces: its frag_list needs the depth
		 * count, and the end of a chain needs its parent */
		if (skb->shinfo.frag_list || skb == st->root_skb || !skb->next)
			return locate_from_root(st, abs);
		skb = skb->next;
		idx = 0;
		skb_start = start;
	}
}

void skb_prepare_seq_read(struct sk_buff *skb, unsigned int from,
			  unsigned int to, struct skb_seq_state *st)
{
	unsigned int len = skb ? skb->len : 0;

	if (!st)
		return;
	memset(st, 0, sizeof(*st));
	if (to > len)
		to = len;
	if (from > to)
		from = to;
	st->lower_offset = from;
	st->upper_offset = to;
	st->root_skb = skb;
}

static inline unsigned int seq_read(unsigned int consumed, const u8 **data,
				    struct skb_seq_state *st)
{
	unsigned int avail;
	u32 abs;

	if (!st->root_skb || consumed >= STREAM_END ||
	    consumed >= st->upper_offset - st->lower_offset)
		return 0;
	abs = st->lower_offset + consumed;

	if (st->cur_skb && abs >= st->stepped_offset) {
		if (abs - st->stepped_offset >=
			    piece_len(st->cur_skb, st->frag_idx) &&
		    !locate_forward(st, abs))
			return 0;
	} else if (!locate_from_root(st, abs)) {
		return 0;
	}

	avail = piece_len(st->cur_skb, st->frag_idx) -
		(abs - st->stepped_offset);
	if (avail > st->upper_offset - abs)
		avail = st->upper_offset - abs;
	if (avail > STREAM_END - consumed)
		avail = STREAM_END - consumed;
	*data = st->frag_data + (abs - st->stepped_offset);
	return avail;
}

unsigned int skb_seq_read(unsigned int consumed, const u8 **data,
			  struct skb_seq_state *st)
{
	if (!st || !data)
		return 0;
	return seq_read(consumed, data, st);
}

void skb_abort_seq_read(struct skb_seq_state *st)
{
	/* nothing is mapped; forget the cached piece so a stale state is
	 * never trusted */
	if (st)
		st->cur_skb = NULL;
}

_Static_assert(sizeof(struct skb_seq_state) <= TS_CB_SIZE,
	       "skb_seq_state must fit in ts_state.cb");

/* One field of the reader's state in ts_state.cb, in or out. */
#define CB_GET(st, cb, f)                                         \
	memcpy(&(st).f, (cb) + offsetof(struct skb_seq_state, f), \
	       sizeof((st).f))
#define CB_PUT(st, cb, f)                                         \
	memcpy((cb) + offsetof(struct skb_seq_state, f), &(st).f, \
	       sizeof((st).f))

/*
 * The provider: the reader's state lives in state->cb, so the config is
 * never written.  cb is a char array: copy rather than alias it, field by
 * field, and write back only the cached piece, which is all a read
 * changes.  (A copy of the whole struct after the reader wrote single
 * fields would be loaded, in the next call, from stores of other sizes,
 * and wait for them: in blocks of 64 bytes that wait was most of what a
 * block cost.)
 */
static unsigned int skb_next_block(unsigned int consumed, const u8 **dst,
				   struct ts_config *conf,
				   struct ts_state *state)
{
	struct skb_seq_state st;
	unsigned int n;

	(void)conf;
	/* the usual step, in registers: within the cached piece, or on to
	 * the next fragment of the same buffer */
	CB_GET(st, state->cb, root_skb);
	CB_GET(st, state->cb, cur_skb);
	CB_GET(st, state->cb, lower_offset);
	CB_GET(st, state->cb, upper_offset);
	CB_GET(st, state->cb, stepped_offset);
	CB_GET(st, state->cb, frag_idx);
	if (st.root_skb && st.cur_skb && consumed < STREAM_END &&
	    consumed < st.upper_offset - st.lower_offset) {
		const struct sk_buff *skb = st.cur_skb;
		u32 abs = st.lower_offset + consumed, off, len;

		if (abs >= st.stepped_offset) {
			off = abs - st.stepped_offset;
			len = piece_len(skb, st.frag_idx);
			if (off >= len && st.frag_idx < skb->shinfo.nr_frags &&
			    off - len < skb->shinfo.frags[st.frag_idx].size) {
				off -= len;
				st.stepped_offset += len;
				len = skb->shinfo.frags[st.frag_idx].size;
				st.frag_data =
					skb->shinfo.frags[st.frag_idx].data;
				st.frag_idx++;
				CB_PUT(st, state->cb, stepped_offset);
				CB_PUT(st, state->cb, frag_idx);
				CB_PUT(st, state->cb, frag_data);
			} else if (off < len) {
				CB_GET(st, state->cb, frag_data);
			}
			if (off < len) {
				n = len - off;
				if (n > st.upper_offset - abs)
					n = st.upper_offset - abs;
				if (n > STREAM_END - consumed)
					n = STREAM_END - consumed;
				*dst = st.frag_data + off;
				return n;
			}
		}
	}
	/* anything else: the reader, and its whole state back */
	CB_GET(st, state->cb, lower_offset);
	CB_GET(st, state->cb, upper_offset);
	CB_GET(st, state->cb, frag_idx);
	CB_GET(st, state->cb, stepped_offset);
	CB_GET(st, state->cb, root_skb);
	CB_GET(st, state->cb, cur_skb);
	CB_GET(st, state->cb, frag_data);
	CB_GET(st, state->cb, frag_off);
	n = seq_read(consumed, dst, &st);
	CB_PUT(st, state->cb, frag_idx);
	CB_PUT(st, state->cb, stepped_offset);
	CB_PUT(st, state->cb, cur_skb);
	CB_PUT(st, state->cb, frag_data);
	CB_PUT(st, state->cb, frag_off);
	return n;
}

unsigned int skb_find_text_state(struct sk_buff *skb, unsigned int from,
				 unsigned int to, struct ts_config *config,
				 struct ts_state *state)
{
	struct skb_seq_state st;

	if (!config || !state)
		return UINT_MAX;
	/* an empty or out-of-range window reads as no data: no match, and
	 * textsearch_next() on the state finds none either */
	skb_prepare_seq_read(skb, from, to, &st);
	memcpy(state->cb, &st, sizeof(st));
	return textsearch_find_with(config, state, skb_next_block, NULL);
}

unsigned int skb_find_text(struct sk_buff *skb, unsigned int from,
			   unsigned int to, struct ts_config *config)
{
	struct ts_state state;

	return skb_find_text_state(skb, from, to, config, &state);
}
