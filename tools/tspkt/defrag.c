/*
 * defrag.c - IPv4 and IPv6 reassembly.
 *
 * One queue per datagram, found through a hash table keyed by (family,
 * addresses, protocol for IPv4, id) and kept on an age list ordered by
 * the capture time of its first fragment: the oldest is evicted first and
 * expiry stops at the first queue that is young enough.  A queue holds its
 * fragments sorted by offset; they never overlap (an overlap drops the
 * datagram), so the datagram is whole when the bytes held equal its end.
 */
#include "defrag.h"

#include <stdlib.h>
#include <string.h>

#define DEFRAG_BUCKETS 1024u	 /* a power of two */
#define IPV4_MAX_DATAGRAM 65535u /* header + payload */
#define IPV6_HLEN 40u
#define IPV6_FRAG_HLEN 8u
#define IPV6_MAX_PAYLOAD 65535u /* all after the fixed header */

struct frag_key {
	uint8_t src[16], dst[16];
	uint32_t id;
	uint8_t family;
	uint8_t proto; /* IPv4 only; 0 for IPv6 */
};

struct frag_entry {
	struct sk_buff *skb;
	unsigned int offset, end; /* payload bytes [offset, end) */
	unsigned int hdrlen;	  /* bytes before the payload in skb */
	size_t truesize;	  /* what the buffer costs */
};

struct frag_queue {
	struct frag_queue *hnext; /* hash chain */
	struct timer_list timer;  /* its time-out */
	struct defrag *d;
	struct frag_queue *older, *newer; /* age list */
	struct frag_key key;
	int64_t first_ns;	    /* capture time of the first fragment */
	int64_t last_ns;	    /* ... of the latest one */
	struct frag_entry *entries; /* sorted by offset */
	unsigned int nr, cap;
	unsigned int meat;  /* payload bytes held */
	unsigned int total; /* payload length, once the end is known */
	bool have_last;
	size_t bytes; /* accounted memory of this queue */
};

struct defrag {
	struct defrag_limits limits;
	struct pkt_clock *clock;
	struct pkt_clock own_clock; /* when not given one */
	struct defrag_stats stats;
	size_t bytes_held;
	uint32_t seed;
	struct frag_queue *oldest, *newest;
	struct frag_queue *buckets[DEFRAG_BUCKETS];
};

static size_t skb_truesize(const struct sk_buff *skb)
{
	return sizeof(*skb) + (size_t)(skb->end - skb->head) + skb->data_len;
}

static size_t queue_cost(unsigned int cap)
{
	return sizeof(struct frag_queue) + cap * sizeof(struct frag_entry);
}

struct defrag *defrag_new(const struct defrag_limits *limits)
{
	return defrag_new_clocked(limits, NULL);
}

struct defrag *defrag_new_clocked(const struct defrag_limits *limits,
				  struct pkt_clock *clock)
{
	struct defrag *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	if (!clock) {
		if (pkt_clock_init(&d->own_clock, DEFRAG_OWN_HZ)) {
			free(d);
			return NULL;
		}
		clock = &d->own_clock;
	}
	d->clock = clock;
	d->limits.max_bytes = DEFRAG_DEFAULT_MAX_BYTES;
	d->limits.max_frags = DEFRAG_DEFAULT_MAX_FRAGS;
	d->limits.timeout_ns = DEFRAG_DEFAULT_TIMEOUT_NS;
	if (limits) {
		if (limits->max_bytes)
			d->limits.max_bytes = limits->max_bytes;
		if (limits->max_frags)
			d->limits.max_frags = limits->max_frags;
		if (limits->timeout_ns > 0)
			d->limits.timeout_ns = limits->timeout_ns;
	}
	/* varies the bucket of a key between instances, without global state */
	d->seed = (uint32_t)((uintptr_t)d >> 4) * 2654435761u;
	return d;
}

static uint32_t fnv1a(uint32_t h, const uint8_t *p, size_t len)
{
	while (len--)
		h = (h ^ *p++) * 16777619u;
	return h;
}

static uint32_t key_hash(const struct defrag *d, const struct frag_key *k)
{
	uint8_t rest[6] = { (uint8_t)(k->id >> 24),
			    (uint8_t)(k->id >> 16),
			    (uint8_t)(k->id >> 8),
			    (uint8_t)k->id,
			    k->family,
			    k->proto };
	uint32_t h = 2166136261u ^ d->seed;

	/* field by field: padding bytes are not part of the key */
	h = fnv1a(h, k->src, sizeof(k->src));
	h = fnv1a(h, k->dst, sizeof(k->dst));
	h = fnv1a(h, rest, sizeof(rest));
	return (h ^ h >> 15) & (DEFRAG_BUCKETS - 1);
}

static void make_key(struct frag_key *k, const struct pkt_meta *meta,
		     const struct ip_frag_info *frag)
{
	unsigned int alen = meta->family == 6 ? 16 : 4;

	memset(k, 0, sizeof(*k));
	k->family = (uint8_t)meta->family;
	memcpy(k->src, meta->src, alen);
	memcpy(k->dst, meta->dst, alen);
	k->id = frag->id;
	if (meta->family == 4)
		k->proto = meta->l4proto;
}

static bool key_equal(const struct frag_key *a, const struct frag_key *b)
{
	return a->family == b->family && a->proto == b->proto &&
	       a->id == b->id && !memcmp(a->src, b->src, sizeof(a->src)) &&
	       !memcmp(a->dst, b->dst, sizeof(a->dst));
}

static struct frag_queue *queue_find(struct defrag *d, const struct frag_key *k)
{
	struct frag_queue *q;

	for (q = d->buckets[key_hash(d, k)]; q; q = q->hnext)
		if (key_equal(&q->key, k))
			return q;
	return NULL;
}

/* Take @q out of the table and the age list; its fragments stay. */
static void queue_unlink(struct defrag *d, struct frag_queue *q)
{
	struct frag_queue **pp = &d->buckets[key_hash(d, &q->key)];

	del_timer(&q->timer); /* 0 from its own expiry: not pending then */
	while (*pp != q)
		pp = &(*pp)->hnext;
	*pp = q->hnext;
	if (q->older)
		q->older->newer = q->newer;
	else
		d->oldest = q->newer;
	if (q->newer)
		q->newer->older = q->older;
	else
		d->newest = q->older;
	d->bytes_held -= q->bytes;
}

/* Drop a datagram: unlink it and free its fragments. */
static void queue_drop(struct defrag *d, struct frag_queue *q)
{
	unsigned int i;

	queue_unlink(d, q);
	for (i = 0; i < q->nr; i++)
		kfree_skb(q->entries[i].skb);
	d->stats.frags_dropped += q->nr;
	free(q->entries);
	free(q);
}

/* Insert into the age list by first_ns, from the newest end: capture time
 * almost always grows, so this is one step. */
static void age_insert(struct defrag *d, struct frag_queue *q)
{
	struct frag_queue *after = d->newest;

	while (after && after->first_ns > q->first_ns)
		after = after->older;
	q->older = after;
	q->newer = after ? after->newer : d->oldest;
	if (q->older)
		q->older->newer = q;
	else
		d->oldest = q;
	if (q->newer)
		q->newer->older = q;
	else
		d->newest = q;
}

/* A datagram still incomplete at its time-out is dropped. */
static void queue_expired(struct timer_list *t)
{
	struct frag_queue *q = from_timer(q, t, timer);

	q->d->stats.timeouts++;
	queue_drop(q->d, q);
}

static struct frag_queue *queue_new(struct defrag *d, const struct frag_key *k,
				    int64_t now_ns)
{
	struct frag_queue *q = calloc(1, sizeof(*q));
	uint32_t h;

	if (!q)
		return NULL;
	q->cap = d->limits.max_frags < 4 ? d->limits.max_frags : 4;
	q->entries = calloc(q->cap, sizeof(*q->entries));
	if (!q->entries) {
		free(q);
		return NULL;
	}
	q->key = *k;
	q->d = d;
	q->first_ns = q->last_ns = now_ns;
	timer_setup(&q->timer, queue_expired, 0);
	mod_timer(&q->timer,
		  pkt_clock_deadline(d->clock, (uint64_t)(d->limits.timeout_ns /
							  1000000)));
	q->bytes = queue_cost(q->cap);
	h = key_hash(d, k);
	q->hnext = d->buckets[h];
	d->buckets[h] = q;
	age_insert(d, q);
	d->bytes_held += q->bytes;
	return q;
}

void defrag_free(struct defrag *d)
{
	if (!d)
		return;
	while (d->oldest)
		queue_drop(d, d->oldest);
	if (d->clock == &d->own_clock)
		pkt_clock_destroy(&d->own_clock);
	free(d);
}

void defrag_expire(struct defrag *d, int64_t now_ns)
{
	pkt_clock_advance(d->clock, now_ns);
}

/* Evict the oldest datagrams other than @keep until @need more bytes fit. */
static bool make_room(struct defrag *d, size_t need, struct frag_queue *keep)
{
	struct frag_queue *victim;

	while (d->bytes_held + need > d->limits.max_bytes) {
		victim = d->oldest;
		/* nothing held (a buffer dearer than max_bytes alone): both
		 * are NULL */
		if (victim && victim == keep)
			victim = victim->newer;
		if (!victim)
			return false;
		d->stats.evicted++;
		queue_drop(d, victim);
	}
	return true;
}

/* Room for one more entry in @q, within the byte budget. */
static bool queue_reserve(struct defrag *d, struct frag_queue *q,
			  size_t skb_cost)
{
	unsigned int cap = q->cap;
	struct frag_entry *grown;
	size_t extra = 0;

	if (q->nr == cap) {
		cap = cap * 2 < d->limits.max_frags ? cap * 2 :
						      d->limits.max_frags;
		extra = (cap - q->cap) * sizeof(*q->entries);
	}
	if (!make_room(d, skb_cost + extra, q))
		return false;
	if (cap != q->cap) {
		grown = realloc(q->entries, cap * sizeof(*grown));
		if (!grown)
			return false;
		q->entries = grown;
		q->cap = cap;
		q->bytes += extra;
		d->bytes_held += extra;
	}
	return true;
}

/*
 * Chain every fragment after the first onto it, pulled to its payload; the
 * caller has checked that they cover [0, total) without gap or overlap.
 */
static struct sk_buff *reassemble(struct defrag *d, struct frag_queue *q)
{
	struct sk_buff *head = q->entries[0].skb;
	struct sk_buff *skb;
	unsigned int i;

	queue_unlink(d, q);
	for (i = 1; i < q->nr; i++) {
		skb = q->entries[i].skb;
		q->entries[i].skb = NULL;
		skb->next = NULL;
		if (!skb_pull(skb, q->entries[i].hdrlen) ||
		    skb_append_frag_list(head, skb)) {
			/* cannot happen for checked sizes; fail safe */
			kfree_skb(skb);
			kfree_skb(head);
			for (i++; i < q->nr; i++)
				kfree_skb(q->entries[i].skb);
			d->stats.frags_dropped += q->nr;
			d->stats.invalid++;
			head = NULL;
			break;
		}
	}
	if (head) {
		/* as the kernel: the datagram is as recent as its last piece */
		head->tstamp_ns = q->last_ns;
		head->next = NULL;
		d->stats.reassembled++;
	}
	free(q->entries);
	free(q);
	return head;
}

/* Drop @q (if any) along with the fragment that condemned it. */
static enum defrag_result drop_datagram(struct defrag *d, struct frag_queue *q,
					struct sk_buff *skb, uint64_t *reason)
{
	(*reason)++;
	if (q)
		queue_drop(d, q);
	kfree_skb(skb);
	d->stats.frags_dropped++;
	return DEFRAG_DROPPED;
}

enum defrag_result defrag_add(struct defrag *d, struct sk_buff *skb,
			      const struct pkt_meta *meta,
			      const struct ip_frag_info *frag,
			      struct sk_buff **out)
{
	unsigned int offset = frag->offset, end, hdrlen, i, pos;
	struct frag_entry *e;
	struct frag_queue *q;
	struct frag_key key;
	size_t cost;

	*out = NULL;
	d->stats.fragments++;
	defrag_expire(d, skb->tstamp_ns);

	if (!frag->is_fragment) {
		*out = skb; /* whole already: an IPv6 atomic fragment */
		return DEFRAG_DONE;
	}
	if ((meta->family != 4 && meta->family != 6) ||
	    frag->payload_len > skb->len) {
		d->stats.invalid++;
		kfree_skb(skb);
		return DEFRAG_DROPPED;
	}
	hdrlen = skb->len - frag->payload_len;
	end = offset + frag->payload_len;
	make_key(&key, meta, frag);
	q = queue_find(d, &key);

	/* IPv6 as the kernel: the payload without the Fragment header */
	if ((meta->family == 4 && hdrlen + end > IPV4_MAX_DATAGRAM) ||
	    (meta->family == 6 &&
	     (hdrlen < IPV6_HLEN + IPV6_FRAG_HLEN ||
	      hdrlen - IPV6_HLEN - IPV6_FRAG_HLEN + end > IPV6_MAX_PAYLOAD)))
		return drop_datagram(d, q, skb, &d->stats.oversize);
	if ((frag->more_fragments && frag->payload_len % 8) || end == offset) {
		/* meaningless on its own; the datagram may still complete */
		d->stats.invalid++;
		kfree_skb(skb);
		return DEFRAG_DROPPED;
	}
	if (q) {
		if (q->have_last && (end > q->total || (!frag->more_fragments &&
							end != q->total)))
			return drop_datagram(d, q, skb, &d->stats.invalid);
		if (!frag->more_fragments && q->nr &&
		    q->entries[q->nr - 1].end > end)
			return drop_datagram(d, q, skb, &d->stats.invalid);

		/* first entry ending after our offset: the only overlap
		 * candidate, since entries never overlap each other */
		for (pos = 0; pos < q->nr && q->entries[pos].end <= offset;
		     pos++)
			;
		if (pos < q->nr && q->entries[pos].offset < end) {
			e = &q->entries[pos];
			if (e->offset == offset && e->end == end) {
				/* an exact duplicate: the first copy stays */
				q->last_ns = skb->tstamp_ns;
				kfree_skb(skb);
				return DEFRAG_HELD;
			}
			return drop_datagram(d, q, skb, &d->stats.overlaps);
		}
		if (q->nr == d->limits.max_frags)
			return drop_datagram(d, q, skb, &d->stats.oversize);
	} else {
		pos = 0;
	}

	cost = skb_truesize(skb);
	if (!q) {
		if (!make_room(d,
			       cost + queue_cost(d->limits.max_frags < 4 ?
							 d->limits.max_frags :
							 4),
			       NULL) ||
		    !(q = queue_new(d, &key, skb->tstamp_ns)))
			return drop_datagram(d, NULL, skb, &d->stats.evicted);
	} else if (!queue_reserve(d, q, cost)) {
		return drop_datagram(d, q, skb, &d->stats.evicted);
	}

	for (i = q->nr; i > pos; i--)
		q->entries[i] = q->entries[i - 1];
	q->entries[pos] = (struct frag_entry){ .skb = skb,
					       .offset = offset,
					       .end = end,
					       .hdrlen = hdrlen,
					       .truesize = cost };
	q->nr++;
	q->meat += frag->payload_len;
	q->bytes += cost;
	d->bytes_held += cost;
	if (skb->tstamp_ns > q->last_ns)
		q->last_ns = skb->tstamp_ns;
	if (!frag->more_fragments) {
		q->have_last = true;
		q->total = end;
	}
	if (q->have_last && q->meat == q->total) {
		*out = reassemble(d, q);
		return *out ? DEFRAG_DONE : DEFRAG_DROPPED;
	}
	return DEFRAG_HELD;
}

void defrag_get_stats(const struct defrag *d, struct defrag_stats *stats)
{
	*stats = d->stats;
}

size_t defrag_bytes_held(const struct defrag *d)
{
	return d->bytes_held;
}
