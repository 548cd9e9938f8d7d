/*
 * flow.c - the flow table (flow.h says what it offers).
 *
 * A flow is in a hash chain (by its key, seeded per table so that chains
 * cannot be aimed at), on a list from the oldest last packet to the newest
 * (eviction takes the oldest), and, while it lives, its timer is pending on
 * the table's base.  A packet only notes its time: the timer, armed once,
 * fires at the time-out of the flow's first packets, finds the flow busy
 * since and moves itself to the time-out of the last one, so a busy flow
 * costs a re-arm per time-out rather than per packet, and an idle one
 * nothing until it ends.
 */
#include "flow.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FLOW_TH_FIN 0x01
#define FLOW_TH_RST 0x04

/* The table grows with the flows (a table sized for a million would make
 * every lookup among a few flows a cache miss). */
#define FLOW_MIN_BUCKETS 1024u
#define FLOW_MAX_BUCKETS (1u << 22)

struct flow_table {
	struct flow **bucket;
	size_t mask; /* buckets - 1 */
	uint64_t seed;
	size_t max_flows;
	struct flow *oldest, *newest;
	struct timer_base *base;
	struct flow_timeouts to;
	struct flow_ops ops;
	void *arg;
	unsigned long hz;	  /* the base's, read once */
	const unsigned long *now; /* the owner's jiffies, or NULL */
	bool ending_all;
	struct flow *busy; /* its end runs from flow_packet() */
	struct flow_stats stats;
};

_Static_assert(sizeof(struct flow) <= 224,
	       "an idle flow must cost at most 256 bytes with its allocation");

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* The key's last word as its fields lay it out (pad 0), put together in
 * a register: stored field by field, it would be read back whole before
 * the stores could be forwarded to the load, a stall on every lookup. */
static uint64_t key_tail(uint16_t port0, uint16_t port1, uint8_t family,
			 uint8_t proto)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return port0 | (uint64_t)port1 << 16 | (uint64_t)family << 32 |
	       (uint64_t)proto << 40;
#else
	return (uint64_t)port0 << 48 | (uint64_t)port1 << 32 |
	       (uint64_t)family << 24 | (uint64_t)proto << 16;
#endif
}

/* The halves of a 128-bit product, xored (a GNU C extension that earns
 * its place: one multiply mixes every bit of both words into the low bits
 * the mask keeps). */
static uint64_t fold_mul(uint64_t a, uint64_t b)
{
	unsigned __int128 p = (unsigned __int128)a * b;

	return (uint64_t)p ^ (uint64_t)(p >> 64);
}

/* Two independent products, then one to join them: three multiplies of
 * which two run side by side, as a lookup waits on the hash.  The seed
 * keeps chains from being chosen from outside. */
static inline __attribute__((always_inline)) uint64_t
flow_hash64(const struct flow_table *t, const struct flow_key *k)
{
	uint64_t a =
		fold_mul(k->w[0] ^ t->seed, k->w[2] ^ 0x9e3779b97f4a7c15ULL);
	uint64_t b = fold_mul(k->w[1] ^ k->tail ^ 0xbf58476d1ce4e5b9ULL,
			      k->w[3] ^ t->seed ^ 0x94d049bb133111ebULL);

	return fold_mul(a ^ t->seed, b ^ 0x2545f4914f6cdd1dULL);
}

static bool key_equal(const struct flow_key *a, const struct flow_key *b)
{
	return a->w[0] == b->w[0] && a->w[1] == b->w[1] && a->w[2] == b->w[2] &&
	       a->w[3] == b->w[3] && a->tail == b->tail;
}

static size_t flow_hash(const struct flow_table *t, const struct flow_key *k)
{
	return (size_t)flow_hash64(t, k) & t->mask;
}

/* Twice the buckets, once the flows outnumber them. */
static void grow(struct flow_table *t)
{
	size_t n = (t->mask + 1) * 2, i;
	struct flow **nb = calloc(n, sizeof(*nb));

	if (!nb)
		return; /* longer chains, still right */
	for (i = 0; i <= t->mask; i++) {
		struct flow *f = t->bucket[i], *next;

		for (; f; f = next) {
			size_t h = (size_t)flow_hash64(t, &f->key) & (n - 1);

			next = f->hnext;
			f->hnext = nb[h];
			nb[h] = f;
		}
	}
	free(t->bucket);
	t->bucket = nb;
	t->mask = n - 1;
}

struct flow_table *flow_table_new(size_t max_flows, struct timer_base *base,
				  const struct flow_timeouts *timeouts,
				  const struct flow_ops *ops, void *arg)
{
	struct flow_table *t = calloc(1, sizeof(*t));
	size_t n = FLOW_MIN_BUCKETS;
	struct timespec now;

	if (!t)
		return NULL;
	t->bucket = calloc(n, sizeof(*t->bucket));
	if (!t->bucket) {
		free(t);
		return NULL;
	}
	t->mask = n - 1;
	clock_gettime(CLOCK_MONOTONIC, &now);
	t->seed = mix64((uint64_t)now.tv_nsec ^ (uint64_t)(uintptr_t)t ^
			((uint64_t)now.tv_sec << 32));
	t->max_flows = max_flows ? max_flows : 1;
	t->base = base;
	t->hz = HZ;
	t->to = *timeouts;
	t->ops = *ops;
	t->arg = arg;
	return t;
}

static void list_unlink(struct flow_table *t, struct flow *f)
{
	if (f->older)
		f->older->newer = f->newer;
	else
		t->oldest = f->newer;
	if (f->newer)
		f->newer->older = f->older;
	else
		t->newest = f->older;
	f->older = f->newer = NULL;
}

static void list_append(struct flow_table *t, struct flow *f)
{
	f->older = t->newest;
	f->newer = NULL;
	if (t->newest)
		t->newest->newer = f;
	else
		t->oldest = f;
	t->newest = f;
}

static void hash_unlink(struct flow_table *t, struct flow *f)
{
	struct flow **pp = &t->bucket[flow_hash(t, &f->key)];

	while (*pp && *pp != f)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = f->hnext;
}

/* Tell the owner, once. */
static void flow_end(struct flow_table *t, struct flow *f, enum flow_end why)
{
	if (f->ended)
		return;
	f->ended = true;
	t->stats.ended[why]++;
	t->ops.end(f, why, t->arg);
}

static void flow_free(struct flow_table *t, struct flow *f)
{
	hash_unlink(t, f);
	list_unlink(t, f);
	t->stats.active--;
	free(f);
}

static unsigned int flow_timeout(const struct flow_table *t,
				 const struct flow *f)
{
	if (f->key.proto == IPPROTO_TCP) {
		switch (f->state) {
		case FLOW_NEW:
			return t->to.tcp_new;
		case FLOW_ESTABLISHED:
			return t->to.tcp_established;
		default:
			return t->to.tcp_closed;
		}
	}
	return f->state == FLOW_NEW ? t->to.udp_new : t->to.udp_established;
}

/* Jiffies, from the owner's copy when it keeps one (a read of the
 * thread's base costs a call per packet). */
static unsigned long flow_now(const struct flow_table *t)
{
	return t->now ? *t->now : jiffies;
}

void flow_table_set_now(struct flow_table *t, const unsigned long *now)
{
	t->now = now;
}

/* When the flow's state says it times out, from its last packet. */
static unsigned long flow_deadline(const struct flow_table *t,
				   const struct flow *f)
{
	return f->last_j + flow_timeout(t, f) * t->hz;
}

static void flow_arm(struct flow_table *t, struct flow *f)
{
	mod_timer(&f->timer, flow_deadline(t, f));
	f->armed = true;
	t->stats.timers_armed++;
}

/* The time-out fired: a flow busy since waits for its new deadline; else
 * end it (unless a RST or FIN did) and free it.  The owner's end may close
 * this very flow (say its flush reaches -n): try_to_del_timer_sync() then
 * answers -1, and the flow is freed here. */
static void flow_expire(struct timer_list *timer)
{
	struct flow *f = from_timer(f, timer, timer);
	struct flow_table *t = f->table;

	t->stats.timers_fired++;
	f->armed = false;
	if (time_before(jiffies, flow_deadline(t, f))) {
		flow_arm(t, f);
		return;
	}
	flow_end(t, f, FLOW_END_TIMEOUT);
	flow_free(t, f);
}

void flow_close(struct flow_table *t, struct flow *f, enum flow_end why)
{
	int r;

	if (f->dying)
		return;
	r = try_to_del_timer_sync(&f->timer);
	f->armed = false;
	if (r < 0) {
		/* its expiry is running (this is called from inside it):
		 * the expiry ends and frees it */
		t->stats.del_running++;
		f->dying = true;
		return;
	}
	if (r)
		t->stats.del_removed++;
	else
		t->stats.del_not_pending++;
	/* we removed the pending timer (or none was): the teardown is ours;
	 * dying keeps the owner's end from closing it a second time */
	f->dying = true;
	if (f == t->busy)
		return; /* flow_packet() frees it once its end returns */
	flow_end(t, f, why);
	flow_free(t, f);
}

static uint64_t load64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t load32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Whole words only: the hash and the compare then read what was written
 * whole, without a stall on bytes stored apart. */
/* flow_key_make(), inlined where a lookup waits on it */
static inline __attribute__((always_inline)) void
key_make(struct flow_key *k, int family, uint8_t proto, const uint8_t *src,
	 const uint8_t *dst, uint16_t sport, uint16_t dport, int *dir)
{
	uint64_t s0, s1, d0, d1;
	bool swap;

	if (family == 6) {
		s0 = load64(src), s1 = load64(src + 8);
		d0 = load64(dst), d1 = load64(dst + 8);
	} else {
		s0 = load32(src), s1 = 0;
		d0 = load32(dst), d1 = 0;
	}
	/* any order that is the same both ways round will do */
	swap = s0 != d0 ? s0 > d0 : s1 != d1 ? s1 > d1 : sport > dport;
	*dir = swap;
	k->w[0] = swap ? d0 : s0;
	k->w[1] = swap ? d1 : s1;
	k->w[2] = swap ? s0 : d0;
	k->w[3] = swap ? s1 : d1;
	k->tail = key_tail(swap ? dport : sport, swap ? sport : dport,
			   (uint8_t)family, proto);
}

void flow_key_make(struct flow_key *k, int family, uint8_t proto,
		   const uint8_t *src, const uint8_t *dst, uint16_t sport,
		   uint16_t dport, int *dir)
{
	key_make(k, family, proto, src, dst, sport, dport, dir);
}

struct flow *flow_lookup(struct flow_table *t, int family, uint8_t proto,
			 const uint8_t *src, const uint8_t *dst, uint16_t sport,
			 uint16_t dport, int *dir)
{
	struct flow_key k;
	struct flow *f;
	size_t h;

	key_make(&k, family, proto, src, dst, sport, dport, dir);
	h = flow_hash(t, &k);
	for (f = t->bucket[h]; f; f = f->hnext)
		if (key_equal(&f->key, &k))
			return f;
	if (t->stats.active >= t->max_flows && t->oldest)
		flow_close(t, t->oldest, FLOW_END_EVICTED);
	f = calloc(1, sizeof(*f));
	if (!f) {
		errno = ENOMEM;
		return NULL;
	}
	if (t->stats.active > t->mask && t->mask + 1 < FLOW_MAX_BUCKETS) {
		grow(t);
		h = flow_hash(t, &k);
	}
	f->key = k;
	f->table = t;
	f->moved_j = flow_now(t);
	timer_setup(&f->timer, flow_expire, 0);
	f->hnext = t->bucket[h];
	t->bucket[h] = f;
	list_append(t, f);
	t->stats.created++;
	if (++t->stats.active > t->stats.max_active)
		t->stats.max_active = t->stats.active;
	return f;
}

enum flow_state flow_packet(struct flow_table *t, struct flow *f, int dir,
			    unsigned int bytes, uint8_t tcp_flags)
{
	enum flow_state was = (enum flow_state)f->state;

	if (!f->packets)
		f->init_dir = (uint8_t)dir;
	f->packets++;
	f->bytes += bytes;
	f->last_j = flow_now(t);
	/* the eviction order, to the second: moving a flow touches its
	 * neighbours, so a busy flow moves once a second, not per packet */
	if (t->newest != f && f->last_j - f->moved_j >= t->hz) {
		list_unlink(t, f);
		list_append(t, f);
		f->moved_j = f->last_j;
	}
	if (f->state != FLOW_CLOSED) {
		f->seen |= (uint8_t)(1u << dir);
		if (f->seen == 3)
			f->state = FLOW_ESTABLISHED;
		if (f->key.proto == IPPROTO_TCP) {
			if (tcp_flags & FLOW_TH_FIN)
				f->fin |= (uint8_t)(1u << dir);
			if (tcp_flags & FLOW_TH_RST || f->fin == 3) {
				f->state = FLOW_CLOSED;
				t->busy = f;
				flow_end(t, f,
					 tcp_flags & FLOW_TH_RST ?
						 FLOW_END_RST :
						 FLOW_END_FIN);
				t->busy = NULL;
			}
		}
		/* the owner's end may have closed it (say at -n) */
		if (f->dying) {
			flow_free(t, f);
			return FLOW_GONE;
		}
	}
	/* armed once; moved now only if it must fire sooner (closed) */
	if (!f->armed || (f->state == FLOW_CLOSED && was != FLOW_CLOSED))
		flow_arm(t, f);
	return (enum flow_state)f->state;
}

void flow_table_end_all(struct flow_table *t, enum flow_end why)
{
	struct flow *f, *next;

	if (t->ending_all)
		return;
	t->ending_all = true;
	for (f = t->oldest; f; f = next) {
		next = f->newer;
		flow_close(t, f, why);
	}
	t->ending_all = false;
}

void flow_table_free(struct flow_table *t)
{
	if (!t)
		return;
	flow_table_end_all(t, FLOW_END_CAPTURE);
	free(t->bucket);
	free(t);
}

const struct flow_stats *flow_table_stats(const struct flow_table *t)
{
	return &t->stats;
}

/* ---- a set of keys ---------------------------------------------------------- */

/* Open addressing, grown at half full; keys are never removed. */
struct flow_keyset {
	struct flow_key *v;
	bool *used;
	size_t mask, n;
};

static size_t keyset_slot(const struct flow_keyset *s, const struct flow_key *k)
{
	uint64_t h = 0;

	for (int i = 0; i < 4; i++)
		h = (h ^ k->w[i]) * 0x9e3779b97f4a7c15ULL;
	h = (h ^ k->tail) * 0x9e3779b97f4a7c15ULL;
	return (size_t)mix64(h) & s->mask;
}

struct flow_keyset *flow_keyset_new(void)
{
	struct flow_keyset *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->mask = 63;
	s->v = calloc(s->mask + 1, sizeof(*s->v));
	s->used = calloc(s->mask + 1, sizeof(*s->used));
	if (!s->v || !s->used) {
		flow_keyset_free(s);
		return NULL;
	}
	return s;
}

bool flow_keyset_has(const struct flow_keyset *s, const struct flow_key *k)
{
	for (size_t i = keyset_slot(s, k);; i = (i + 1) & s->mask) {
		if (!s->used[i])
			return false;
		if (key_equal(&s->v[i], k))
			return true;
	}
}

static void keyset_put(struct flow_keyset *s, const struct flow_key *k)
{
	size_t i = keyset_slot(s, k);

	while (s->used[i])
		i = (i + 1) & s->mask;
	s->v[i] = *k;
	s->used[i] = true;
	s->n++;
}

int flow_keyset_add(struct flow_keyset *s, const struct flow_key *k)
{
	if (flow_keyset_has(s, k))
		return 0;
	if (2 * (s->n + 1) > s->mask + 1) {
		struct flow_keyset big = { .mask = 2 * s->mask + 1 };

		big.v = calloc(big.mask + 1, sizeof(*big.v));
		big.used = calloc(big.mask + 1, sizeof(*big.used));
		if (!big.v || !big.used) {
			free(big.v);
			free(big.used);
			return -1;
		}
		for (size_t i = 0; i <= s->mask; i++)
			if (s->used[i])
				keyset_put(&big, &s->v[i]);
		free(s->v);
		free(s->used);
		*s = big;
	}
	keyset_put(s, k);
	return 0;
}

size_t flow_keyset_count(const struct flow_keyset *s)
{
	return s->n;
}

void flow_keyset_free(struct flow_keyset *s)
{
	if (!s)
		return;
	free(s->v);
	free(s->used);
	free(s);
}
