/*
 * skbuff.c - packet buffers: allocation, the linear part, fragments, the
 * frag_list chain, freeing and copying out.
 *
 * A buffer and its head buffer are one allocation (the head follows the
 * struct), so alloc_skb() fails or succeeds as a whole and kfree_skb() is one
 * free() per buffer.  Fragments are references: the buffer never copies or
 * frees their bytes, it only runs their release callback once.
 *
 * Chains are walked with loops, never recursion, so a long or nested
 * frag_list cannot exhaust the stack.
 */
#include "internal.h"
#include "textsearch_skb.h"

#include <stdlib.h>
#include <string.h>

/* header offsets are u16, so no offset into the head may exceed this */
#define SKB_HEAD_MAX 65535u

struct sk_buff *alloc_skb(unsigned int size, gfp_t gfp_mask)
{
	struct sk_buff *skb;

	if ((gfp_mask != GFP_KERNEL && gfp_mask != GFP_ATOMIC) ||
	    size > SKB_HEAD_MAX) {
		errno = EINVAL;
		return NULL;
	}
	skb = malloc(sizeof(*skb) + size);
	if (!skb) {
		errno = ENOMEM;
		return NULL;
	}
	memset(skb, 0, sizeof(*skb));
	skb->head = (unsigned char *)(skb + 1);
	skb->data = skb->head;
	skb->tail = skb->head;
	skb->end = skb->head + size;
	skb->mac_header = SKB_HEADER_UNSET;
	skb->network_header = SKB_HEADER_UNSET;
	skb->transport_header = SKB_HEADER_UNSET;
	return skb;
}

static void release_frags_from(struct sk_buff *skb, unsigned int first)
{
	struct skb_shared_info *sh = skb_shinfo(skb);
	unsigned int i;

	for (i = first; i < sh->nr_frags; i++) {
		if (sh->frags[i].release)
			sh->frags[i].release(sh->frags[i].cookie);
	}
	sh->nr_frags = first;
}

/* Free a chain linked through ->next (a frag_list), members' own frag_lists
 * included.  Each nested chain is spliced in front of what is left, so the
 * walk needs no stack and visits every buffer once. */
static void free_chain(struct sk_buff *todo)
{
	while (todo) {
		struct sk_buff *skb = todo,
			       *nested = skb_shinfo(skb)->frag_list;

		todo = skb->next;
		if (nested) {
			struct sk_buff *last = nested;

			while (last->next)
				last = last->next;
			last->next = todo;
			todo = nested;
		}
		release_frags_from(skb, 0);
		free(skb);
	}
}

void kfree_skb(struct sk_buff *skb)
{
	struct sk_buff *chain;

	if (!skb)
		return;
	/* skb->next belongs to whoever listed skb: not followed */
	chain = skb_shinfo(skb)->frag_list;
	release_frags_from(skb, 0);
	free(skb);
	free_chain(chain);
}

void skb_reserve(struct sk_buff *skb, unsigned int len)
{
	if (!skb || skb->len != 0 || len > skb_tailroom(skb)) {
		errno = EINVAL;
		return;
	}
	skb->data += len;
	skb->tail += len;
}

void *skb_put(struct sk_buff *skb, unsigned int len)
{
	unsigned char *old_tail;

	if (!skb || skb_is_nonlinear(skb) || len > skb_tailroom(skb)) {
		errno = EINVAL;
		return NULL;
	}
	old_tail = skb->tail;
	skb->tail += len;
	skb->len += len;
	return old_tail;
}

void *skb_put_data(struct sk_buff *skb, const void *from, unsigned int len)
{
	void *room;

	if (!from && len) {
		errno = EINVAL;
		return NULL;
	}
	room = skb_put(skb, len);
	if (room && len)
		memcpy(room, from, len);
	return room;
}

void *skb_pull(struct sk_buff *skb, unsigned int len)
{
	if (!skb || len > skb_headlen(skb))
		return NULL;
	skb->data += len;
	skb->len -= len;
	return skb->data;
}

/*
 * Cutting may fall inside a frag_list member, which is then cut the same
 * way: the loop moves down into it instead of recursing.  Every buffer on
 * the way down keeps exactly the bytes before the cut.
 */
int skb_trim_len(struct sk_buff *skb, unsigned int len)
{
	if (!skb || len > skb->len)
		return -EINVAL;

	for (;;) {
		struct skb_shared_info *sh = skb_shinfo(skb);
		unsigned int headlen = skb_headlen(skb), rest, i;
		struct sk_buff *member, *after;

		if (len <= headlen) {
			skb->tail = skb->data + len;
			release_frags_from(skb, 0);
			free_chain(sh->frag_list);
			sh->frag_list = NULL;
			skb->len = len;
			skb->data_len = 0;
			return 0;
		}
		skb->len = len;
		skb->data_len = len - headlen;
		rest = len - headlen;
		for (i = 0; i < sh->nr_frags && rest; i++) {
			if (sh->frags[i].size >= rest) {
				sh->frags[i].size = rest;
				rest = 0;
			} else {
				rest -= sh->frags[i].size;
			}
		}
		release_frags_from(skb, i);
		if (!rest) {
			free_chain(sh->frag_list);
			sh->frag_list = NULL;
			return 0;
		}
		for (member = sh->frag_list; member; member = member->next) {
			if (member->len >= rest)
				break;
			rest -= member->len;
		}
		if (!member)
			return -EINVAL; /* lengths were inconsistent */
		after = member->next;
		member->next = NULL;
		free_chain(after);
		if (member->len == rest)
			return 0;
		skb = member;
		len = rest;
	}
}

int skb_add_frag(struct sk_buff *skb, const void *data, unsigned int size,
		 void (*release)(void *cookie), void *cookie)
{
	struct skb_shared_info *sh;
	skb_frag_t *frag;

	if (!skb || (!data && size))
		return -EINVAL;
	sh = skb_shinfo(skb);
	/* frags come before frag_list bytes in the stream */
	if (sh->frag_list)
		return -EINVAL;
	if (sh->nr_frags >= MAX_SKB_FRAGS)
		return -ENOSPC;
	if (size > UINT_MAX - skb->len)
		return -EINVAL;
	frag = &sh->frags[sh->nr_frags++];
	frag->data = data;
	frag->size = size;
	frag->release = release;
	frag->cookie = cookie;
	skb->len += size;
	skb->data_len += size;
	return 0;
}

int skb_append_frag_list(struct sk_buff *skb, struct sk_buff *child)
{
	struct sk_buff **link;

	if (!skb || !child || child == skb || child->next)
		return -EINVAL;
	if (child->len > UINT_MAX - skb->len)
		return -EINVAL;
	link = &skb_shinfo(skb)->frag_list;
	while (*link) {
		if (*link == child)
			return -EINVAL; /* already the last member */
		link = &(*link)->next;
	}
	*link = child;
	skb->len += child->len;
	skb->data_len += child->len;
	return 0;
}

int skb_copy_bits(const struct sk_buff *skb, int offset, void *to, int len)
{
	struct skb_seq_state st;
	unsigned int done = 0, n;
	const u8 *block;

	if (!skb || offset < 0 || len < 0 || (unsigned int)offset > skb->len ||
	    (unsigned int)len > skb->len - (unsigned int)offset)
		return -EFAULT;
	if (!len)
		return 0;
	if (!to)
		return -EFAULT;
	/* the reader only reads: dropping const is safe here */
	skb_prepare_seq_read((struct sk_buff *)skb, (unsigned int)offset,
			     (unsigned int)offset + (unsigned int)len, &st);
	while ((n = skb_seq_read(done, &block, &st)) != 0) {
		memcpy((u8 *)to + done, block, n);
		done += n;
	}
	skb_abort_seq_read(&st);
	return done == (unsigned int)len ? 0 : -EFAULT;
}

void *skb_header_pointer(const struct sk_buff *skb, int offset, int len,
			 void *buffer)
{
	if (!skb || offset < 0 || len < 0)
		return NULL;
	if ((unsigned int)offset <= skb_headlen(skb) &&
	    (unsigned int)len <= skb_headlen(skb) - (unsigned int)offset)
		return skb->data + offset;
	if (!buffer || skb_copy_bits(skb, offset, buffer, len) != 0)
		return NULL;
	return buffer;
}
