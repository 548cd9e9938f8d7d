/*
 * flow.h - the flow table: TCP and UDP conversations keyed by both
 * directions of their 5-tuple, each with its idle time-out on a timer
 * wheel (textsearch_timer.h), bounded by a number of flows past which the
 * flow idle the longest is evicted.
 *
 * The table does not know what a flow carries: the owner keeps its
 * per-direction state in flow->dir[] and is told once, through
 * flow_ops.end, when a flow ends, whatever the reason.  Closing follows
 * the kernel's connection tracking: whoever removes the pending timer owns
 * the teardown; if try_to_del_timer_sync() says the expiry is running at
 * that moment (-1), the flow is only marked dying and the expiry, which
 * is already tearing it down, frees it.
 *
 * Single-threaded: the thread that owns the table runs its timer base.
 */
#ifndef TSPKT_FLOW_H
#define TSPKT_FLOW_H

#include <textsearch_timer.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The 5-tuple, the lower (address, port) end first; built and compared a
 * 64-bit word at a time (flow.c), so its padding is a member, always 0. */
struct flow_key {
	union {
		uint8_t addr[2][16]; /* IPv4 in the first 4 bytes */
		uint64_t w[4];
	};
	union {
		struct {
			uint16_t port[2];
			uint8_t family; /* 4 or 6 */
			uint8_t proto;	/* IPPROTO_TCP or IPPROTO_UDP */
			uint16_t pad;
		};
		uint64_t tail; /* the fields above as one word */
	};
};

enum flow_state {
	FLOW_NEW,	  /* one side seen (TCP: no handshake completed) */
	FLOW_ESTABLISHED, /* both sides seen (TCP: handshake or data) */
	FLOW_CLOSED,	  /* TCP: a FIN from each side, or a RST */
	FLOW_GONE,	  /* flow_packet(): its end closed it, it is freed */
};

enum flow_end {
	FLOW_END_FIN,
	FLOW_END_RST,
	FLOW_END_TIMEOUT,
	FLOW_END_EVICTED,
	FLOW_END_CAPTURE, /* the capture ended, or -n was reached */
};

/* Idle time-outs in seconds, as Suricata's defaults. */
struct flow_timeouts {
	unsigned int tcp_new, tcp_established, tcp_closed;
	unsigned int udp_new, udp_established;
};
#define FLOW_TIMEOUTS_DEFAULT                             \
	((struct flow_timeouts){ .tcp_new = 60,           \
				 .tcp_established = 3600, \
				 .tcp_closed = 120,       \
				 .udp_new = 30,           \
				 .udp_established = 300 })

/* Laid out by use: what a lookup reads first, then what a packet updates,
 * then the timer, which only its arming and expiry touch. */
struct flow {
	struct flow *hnext; /* hash chain */
	struct flow_key key;
	uint8_t state;	      /* enum flow_state */
	uint8_t seen;	      /* bit d: a packet went in direction d */
	uint8_t init_dir;     /* the direction of its first packet */
	uint8_t fin;	      /* bit d: direction d sent a FIN */
	bool dying;	      /* closed while its expiry runs */
	bool ended;	      /* flow_ops.end has been called */
	bool armed;	      /* its timer is pending */
	uint8_t owner_bits;   /* the owner's */
	unsigned long last_j; /* jiffies at its last packet */
	uint64_t packets;     /* both directions */
	uint64_t bytes;	      /* IP bytes, both directions */
	int64_t last_ts;      /* the owner's: time of its last packet */
	/* the owner's: the largest window each direction advertised, kept
	 * here so that a packet need not touch the other direction's state */
	uint32_t window[2];
	/* The owner's, per direction (0: from key.addr[0]); NULL until the
	 * owner needs it, so an idle flow costs only this structure. */
	void *dir[2];
	struct flow *older, *newer; /* by last move (at most one a second) */
	unsigned long moved_j;	    /* jiffies at that move */
	struct flow_table *table;
	struct timer_list timer; /* the idle time-out */
};

struct flow_ops {
	/* The flow ends (once per flow): the owner flushes and frees what
	 * it keeps in dir[].  It may close flows from here, this one too. */
	void (*end)(struct flow *f, enum flow_end why, void *arg);
};

struct flow_stats {
	uint64_t created, active, max_active;
	uint64_t ended[FLOW_END_CAPTURE + 1];
	uint64_t timers_armed;	  /* mod_timer calls that (re)armed one */
	uint64_t timers_fired;	  /* expiries run, busy flows' included */
	uint64_t del_removed;	  /* try_to_del_timer_sync() == 1 */
	uint64_t del_not_pending; /* == 0 */
	uint64_t del_running;	  /* == -1 */
};

struct flow_table;

/*
 * A table of at most @max_flows flows (at least 1), their time-outs on
 * @base (the caller binds it and runs it on its clock).  NULL on ENOMEM.
 */
struct flow_table *flow_table_new(size_t max_flows, struct timer_base *base,
				  const struct flow_timeouts *timeouts,
				  const struct flow_ops *ops, void *arg);

/* End every flow left (FLOW_END_CAPTURE), oldest first, and free. */
void flow_table_free(struct flow_table *t);

/* The same as flow_table_free() without freeing: at -n or the end of the
 * capture, so that their flow records are printed in order. */
void flow_table_end_all(struct flow_table *t, enum flow_end why);

/*
 * The flow of a packet from @src:@sport to @dst:@dport (@family 4 or 6,
 * @proto TCP or UDP), created if new (evicting the flow idle longest, to
 * the second, when the table is full); *@dir is 0 if the packet goes from key.addr[0] on,
 * else 1.  NULL only on ENOMEM.
 */
struct flow *flow_lookup(struct flow_table *t, int family, uint8_t proto,
			 const uint8_t *src, const uint8_t *dst, uint16_t sport,
			 uint16_t dport, int *dir);

/*
 * A packet of @bytes was seen on @f in direction @dir, with TCP @flags
 * (TH_* bits; 0 for UDP): count it, move @f to the newest end, update its
 * state and re-arm its time-out for that state.  A TCP flow closing here
 * (a RST, or a FIN from its second side) is ended at once (flow_ops.end,
 * FLOW_END_RST or FLOW_END_FIN) but stays in the table, ended and
 * FLOW_CLOSED, for tcp_closed seconds, so that its last segments do not
 * open a new flow; those are counted and nothing more.  Returns the state,
 * or FLOW_GONE if the owner's end closed the flow (at -n, say): @f is then
 * freed.
 */
enum flow_state flow_packet(struct flow_table *t, struct flow *f, int dir,
			    unsigned int bytes, uint8_t tcp_flags);

/* End @f now for @why (its owner's flow_ops.end runs, unless its expiry
 * is running, which then ends it). */
void flow_close(struct flow_table *t, struct flow *f, enum flow_end why);

/* Read the time of packets from *@now (the owner's copy of the base's
 * jiffies, kept up to date as it runs the base) instead of the base. */
void flow_table_set_now(struct flow_table *t, const unsigned long *now);

const struct flow_stats *flow_table_stats(const struct flow_table *t);

/* The key of a packet from @src:@sport to @dst:@dport, as the table makes
 * it (*@dir as flow_lookup() sets it). */
void flow_key_make(struct flow_key *k, int family, uint8_t proto,
		   const uint8_t *src, const uint8_t *dst, uint16_t sport,
		   uint16_t dport, int *dir);

/* A set of flow keys (the flows that matched, for --write-flows). */
struct flow_keyset;
struct flow_keyset *flow_keyset_new(void);
/* 0, or -1 when out of memory (the key is then not added). */
int flow_keyset_add(struct flow_keyset *s, const struct flow_key *k);
bool flow_keyset_has(const struct flow_keyset *s, const struct flow_key *k);
size_t flow_keyset_count(const struct flow_keyset *s);
void flow_keyset_free(struct flow_keyset *s);

#endif
