/*
 * textsearch_skb.h - packet buffers modelled on the kernel's struct sk_buff,
 * and skb_find_text(), which searches one without copying it together.
 *
 * A buffer holds its bytes in three places, in stream order:
 *   1. the linear part [data, data + skb_headlen()) inside the head buffer
 *      that alloc_skb() made (headroom before data, tailroom after tail);
 *   2. up to MAX_SKB_FRAGS fragments, references to memory the buffer does
 *      not own (each with an optional release callback run on free);
 *   3. a chain of further buffers, skb_shinfo(skb)->frag_list, linked
 *      through ->next, each contributing its own len bytes (as the kernel's
 *      IP reassembly builds a datagram from the fragments' buffers).
 * skb->len counts all of them; skb->data_len counts 2 and 3.
 *
 * Code written for the kernel's skb_find_text() / skb_seq_read() compiles
 * against this header unchanged.  Differences (docs/differences-from-linux.md):
 * skb_find_text() never writes the config (any number of threads may search
 * with one), and it stops reading at @to instead of filtering afterwards.
 *
 * A buffer is not locked: one thread builds or frees it; any number of
 * threads may read and search it once built.
 */
#ifndef TEXTSEARCH_SKB_H
#define TEXTSEARCH_SKB_H

#include <textsearch.h>

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MAX_SKB_FRAGS 17u

/* ->mac_header, ->network_header, ->transport_header when not set */
#define SKB_HEADER_UNSET 0xffffu

/* A reference to bytes the buffer does not own.  @release(@cookie), when
 * set, runs once when the buffer that holds the fragment is freed. */
typedef struct skb_frag {
	const u8 *data;
	unsigned int size;
	void (*release)(void *cookie);
	void *cookie;
} skb_frag_t;

struct skb_shared_info {
	unsigned int nr_frags;
	skb_frag_t frags[MAX_SKB_FRAGS];
	struct sk_buff *frag_list;
};

struct sk_buff {
	struct sk_buff *next;  /* in a frag_list chain (or a caller's list) */
	unsigned char *head;   /* the linear buffer alloc_skb() made */
	unsigned char *data;   /* first byte of the packet */
	unsigned char *tail;   /* end of the linear part */
	unsigned char *end;    /* end of the head buffer */
	unsigned int len;      /* bytes in all three places */
	unsigned int data_len; /* bytes in fragments and frag_list */
	/* offsets from head, SKB_HEADER_UNSET when not known */
	u16 mac_header;
	u16 network_header;
	u16 transport_header;
	u16 protocol;	   /* ETH_P_* in host order, 0 if unknown */
	int64_t tstamp_ns; /* capture time, ns since the epoch */
	/* the owner's private per-buffer data, as the kernel's control
	 * buffer: never read or written by the library */
#ifdef __cplusplus
	alignas(8) char cb[48];
#else
	_Alignas(8) char cb[48];
#endif
	struct skb_shared_info shinfo;
};

static inline struct skb_shared_info *skb_shinfo(const struct sk_buff *skb)
{
	return (struct skb_shared_info *)&skb->shinfo;
}

static inline unsigned int skb_headlen(const struct sk_buff *skb)
{
	return skb->len - skb->data_len;
}

static inline int skb_is_nonlinear(const struct sk_buff *skb)
{
	return skb->data_len != 0;
}

static inline unsigned int skb_headroom(const struct sk_buff *skb)
{
	return (unsigned int)(skb->data - skb->head);
}

static inline unsigned int skb_tailroom(const struct sk_buff *skb)
{
	return (unsigned int)(skb->end - skb->tail);
}

static inline unsigned char *skb_mac_header(const struct sk_buff *skb)
{
	return skb->head + skb->mac_header;
}

static inline unsigned char *skb_network_header(const struct sk_buff *skb)
{
	return skb->head + skb->network_header;
}

static inline unsigned char *skb_transport_header(const struct sk_buff *skb)
{
	return skb->head + skb->transport_header;
}

static inline void skb_reset_mac_header(struct sk_buff *skb)
{
	skb->mac_header = (u16)(skb->data - skb->head);
}

static inline void skb_reset_network_header(struct sk_buff *skb)
{
	skb->network_header = (u16)(skb->data - skb->head);
}

static inline void skb_reset_transport_header(struct sk_buff *skb)
{
	skb->transport_header = (u16)(skb->data - skb->head);
}

static inline void skb_set_network_header(struct sk_buff *skb, int offset)
{
	skb->network_header = (u16)(skb->data - skb->head + offset);
}

static inline void skb_set_transport_header(struct sk_buff *skb, int offset)
{
	skb->transport_header = (u16)(skb->data - skb->head + offset);
}

/* Offsets of the headers from data (negative when before it). */
static inline int skb_network_offset(const struct sk_buff *skb)
{
	return (int)skb->network_header - (int)(skb->data - skb->head);
}

static inline int skb_transport_offset(const struct sk_buff *skb)
{
	return (int)skb->transport_header - (int)(skb->data - skb->head);
}

/*
 * A buffer with @size bytes of linear room, len 0, data == tail == head.
 * The head buffer is at most 65535 bytes (header offsets are 16-bit).
 * NULL on failure (errno: ENOMEM, or EINVAL for a bad size or gfp_mask).
 */
TS_API struct sk_buff *alloc_skb(unsigned int size, gfp_t gfp_mask);

/* Free a buffer, its frag_list chain, and release its fragments.  NULL is
 * ignored.  Does not follow ->next of @skb itself. */
TS_API void kfree_skb(struct sk_buff *skb);

/* Reserve headroom in an empty buffer: data and tail move on by @len. */
TS_API void skb_reserve(struct sk_buff *skb, unsigned int len);

/* Extend the linear part by @len bytes at the tail; returns the first new
 * byte.  Only for a linear buffer with the tailroom (NULL otherwise). */
TS_API void *skb_put(struct sk_buff *skb, unsigned int len);

/* skb_put() and copy @len bytes from @from into the new room; returns the
 * first new byte or NULL. */
TS_API void *skb_put_data(struct sk_buff *skb, const void *from,
			  unsigned int len);

/* Drop @len bytes from the start of the linear part; returns the new data
 * pointer, or NULL (and changes nothing) if the linear part is shorter. */
TS_API void *skb_pull(struct sk_buff *skb, unsigned int len);

/* Cut the buffer to @len bytes, releasing fragments and chained buffers
 * past it.  0, or -EINVAL if @len > skb->len. */
TS_API int skb_trim_len(struct sk_buff *skb, unsigned int len);

/* Append a fragment of @size bytes at @data (not copied; NULL only if
 * @size is 0).  It must come before any frag_list bytes.  0; -ENOSPC when
 * MAX_SKB_FRAGS are used; -EINVAL once frag_list is set, for NULL data, or
 * if len would overflow.  On failure the fragment is not taken: @release
 * is not called. */
TS_API int skb_add_frag(struct sk_buff *skb, const void *data,
			unsigned int size, void (*release)(void *cookie),
			void *cookie);

/* Chain @child (and nothing after it: @child->next must be NULL) at the end
 * of @skb's frag_list; @skb now owns it.  @child may have a frag_list of
 * its own (searches follow nesting 16 levels deep).  0, or -EINVAL if the
 * total length would overflow, @child->next is set, or @child is @skb or
 * already the last member. */
TS_API int skb_append_frag_list(struct sk_buff *skb, struct sk_buff *child);

/* Copy @len bytes from @offset (relative to data) into @to.  0, or -EFAULT
 * if the range is not inside the buffer. */
TS_API int skb_copy_bits(const struct sk_buff *skb, int offset, void *to,
			 int len);

/* A pointer to @len bytes at @offset: into the linear part when they lie
 * there, else into @buffer after copying them; NULL if out of range. */
TS_API void *skb_header_pointer(const struct sk_buff *skb, int offset, int len,
				void *buffer);

/* ---- sequential reading (the kernel's skb_seq_read) ---------------------- */

struct skb_seq_state {
	u32 lower_offset;
	u32 upper_offset;
	u32 frag_idx;
	u32 stepped_offset;
	struct sk_buff *root_skb;
	struct sk_buff *cur_skb;
	const u8 *frag_data;
	u32 frag_off;
};

/* Prepare to read bytes [@from, @to) of @skb (offsets relative to data);
 * @to is clamped to skb->len and @from to @to. */
TS_API void skb_prepare_seq_read(struct sk_buff *skb, unsigned int from,
				 unsigned int to, struct skb_seq_state *st);

/*
 * The block holding byte @consumed of the range (relative to @from): stores
 * a pointer to it in *@data and returns how many bytes follow contiguously,
 * never past @to; 0 at the end.  Reading forward (in any steps) is
 * amortised O(1) per block; @consumed may also move back, which costs a
 * walk from the root.
 */
TS_API unsigned int skb_seq_read(unsigned int consumed, const u8 **data,
				 struct skb_seq_state *st);

/* End a read before its end (kept for the kernel's callers; frees nothing
 * here, as nothing is mapped). */
TS_API void skb_abort_seq_read(struct skb_seq_state *st);

/*
 * Search bytes [@from, @to) of @skb, relative to data, with @config.
 * Returns the offset of the first match relative to @from, or UINT_MAX; a
 * match counts only if it ends by @to (the current kernel's rule).  @to is
 * clamped to skb->len; @from >= @to (after that) finds nothing.  The
 * config is never written.  To find later matches, use
 * skb_find_text_state() and textsearch_next().
 */
TS_API unsigned int skb_find_text(struct sk_buff *skb, unsigned int from,
				  unsigned int to, struct ts_config *config);

/* The same, with the caller's state, so textsearch_next(@config, @state)
 * continues the search (the buffer must stay alive meanwhile). */
TS_API unsigned int skb_find_text_state(struct sk_buff *skb, unsigned int from,
					unsigned int to,
					struct ts_config *config,
					struct ts_state *state);

#ifdef __cplusplus
}
#endif

#endif
