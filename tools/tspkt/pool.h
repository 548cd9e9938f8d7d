/*
 * pool.h - packet memory for the receive path: fixed-size slots (a buffer,
 * its bytes and its pkt_info) recycled instead of allocated per packet.
 *
 * Each thread takes and returns slots through its own cache, which trades
 * slots with the shared pool a batch at a time, so a packet costs no
 * malloc, no free and no lock.  The pool grows by a slab of 64 slots
 * (carved from huge pages) when every slot is in flight; how many can be
 * in flight is bounded by the backlog, the workers' batches and the
 * caches, so it stops growing.
 *
 * Caches and pool hold arrays of slot pointers, not lists linked through
 * the slots: a slot comes back from the thread that released it with its
 * lines in that thread's cache, and a list would make taking slots a chain
 * of misses, each on a line of the slot before.  With arrays, taking a
 * batch touches no slot, and the slots about to be taken are fetched ahead.
 */
#ifndef TSPKT_POOL_H
#define TSPKT_POOL_H

#include <textsearch_skb.h>

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "tspkt.h"

/* Bytes a slot holds: a full Ethernet frame with VLAN tags; longer frames
 * take a heap buffer (pkt_decode_frame()). */
#define POOL_SLOT_BYTES 2048u

/* Slots a cache takes from or gives back to the pool at once. */
#define POOL_BATCH 64u

struct pkt_pool;

/*
 * @bytes (rounded up to whole huge pages) in huge pages where the kernel
 * grants them, for packet memory written soon after it is taken: taken a
 * 4 KiB page at a time, it costs a page fault each, some 9 us on a VM,
 * against 90 us for a whole 2 MiB page.  NULL without memory; free().
 */
#define PKT_HUGE_PAGE ((size_t)2 << 20)
void *pkt_huge_alloc(size_t bytes);

/*
 * Memory that datagrams handed to other threads point into rather than
 * being copied (the file reader's chunks, capture.c): its owner counts
 * what it lends, and the threads that release those datagrams count them
 * back, a batch at a time.  The owner may reuse the memory once the two
 * counts agree.
 */
struct pkt_lender {
	_Atomic uint64_t returned;
	/* the owner's count on another cache line: nothing shared per
	 * datagram */
	char apart[64 - sizeof(uint64_t)];
	uint64_t lent;
};

/* Whether datagrams lent from @l are still held somewhere. */
static inline bool pkt_lender_busy(struct pkt_lender *l)
{
	return l->lent !=
	       atomic_load_explicit(&l->returned, memory_order_acquire);
}

/* One thread's slots at hand: zero it and set .pool before use. */
struct pkt_cache {
	struct pkt_pool *pool;
	struct pkt_slot *slot[2 * POOL_BATCH]; /* [0, n) free, the last next */
	unsigned int n;
	/* datagrams released here and not yet counted back to their lender */
	struct pkt_lender *back_to;
	uint64_t back_n;
};

struct pkt_pool *pkt_pool_new(void);
/* Every slot must have come back (caches flushed). */
void pkt_pool_free(struct pkt_pool *pool);

/*
 * A slot's buffer: skb->head has POOL_SLOT_BYTES of room, cb's info points
 * at the slot's own pkt_info and cb's owner is PKT_POOL; the rest is the
 * caller's to fill (pkt_skb_wrap()).  NULL when out of memory.
 */
struct sk_buff *pkt_pool_get(struct pkt_cache *c);

/*
 * A slot whose buffer will wrap bytes lent by @l (pkt_skb_wrap()) instead
 * of holding a copy: counted as lent, and counted back when released.
 */
struct sk_buff *pkt_pool_get_lent(struct pkt_cache *c, struct pkt_lender *l);

/* Give a buffer back as its cb's owner says: to the pool, to kfree_skb(),
 * or nowhere (borrowed). */
void pkt_release(struct pkt_cache *c, struct sk_buff *skb);

/* Count the lent datagrams released through @c back to their lender: after
 * each batch, so that a thread about to wait holds no memory back. */
void pkt_cache_settle(struct pkt_cache *c);

/* Hand a thread's cached slots back to the pool (before it ends). */
void pkt_cache_flush(struct pkt_cache *c);

#endif
