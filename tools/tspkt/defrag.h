/*
 * defrag.h - IPv4 and IPv6 fragment reassembly into chained packet buffers.
 *
 * As the kernel does it: the first fragment's buffer becomes the head of the
 * datagram and every later fragment's buffer, pulled to its payload, is
 * chained on its frag_list, so the datagram is searched without copying.
 * Overlapping fragments drop the whole datagram (RFC 5722; the kernel does
 * the same for IPv4); exact duplicates are ignored.  Memory is bounded
 * (bytes held in all queues, fragments per datagram, datagram size) and
 * incomplete datagrams expire after a timeout measured on capture time,
 * on a timer wheel (pktclock.h).
 * Single-threaded: the capture thread owns it.
 */
#ifndef TSPKT_DEFRAG_H
#define TSPKT_DEFRAG_H

#include "decode.h"
#include "pktclock.h"

#include <stdint.h>

struct defrag_limits {
	size_t max_bytes;	/* all queues together; 4 MiB */
	unsigned int max_frags; /* per datagram; 64 */
	int64_t timeout_ns;	/* since a datagram's first fragment; 30 s */
};

#define DEFRAG_DEFAULT_MAX_BYTES (4u << 20)
#define DEFRAG_DEFAULT_MAX_FRAGS 64u
#define DEFRAG_DEFAULT_TIMEOUT_NS (30LL * 1000000000LL)

struct defrag_stats {
	uint64_t fragments;   /* fragments given to defrag_add() */
	uint64_t reassembled; /* datagrams made whole */
	uint64_t timeouts;    /* datagrams expired incomplete */
	uint64_t overlaps;    /* datagrams dropped for overlapping fragments */
	uint64_t oversize;    /* dropped: past 65535 bytes or max_frags */
	uint64_t evicted;     /* dropped to stay within max_bytes */
	uint64_t invalid;     /* fragments that contradict their datagram
				   (data past a known end, a second end, a
				   non-final fragment not a multiple of 8) */
	uint64_t frags_dropped; /* fragments freed with a dropped datagram */
};

enum defrag_result {
	DEFRAG_HELD,	/* kept, waiting for the rest */
	DEFRAG_DONE,	/* *out is the whole datagram */
	DEFRAG_DROPPED, /* the fragment (and maybe its datagram) was
				   dropped; stats say why */
};

struct defrag;

/* NULL limits: the defaults (so does a field left 0).  NULL on ENOMEM.
 * The time-outs are on a timer wheel of its own (HZ DEFRAG_OWN_HZ), driven
 * by the fragments' time stamps. */
struct defrag *defrag_new(const struct defrag_limits *limits);
#define DEFRAG_OWN_HZ 1000u

/* The same on @clock's wheel, which its owner drives (the capture's, with
 * the flows' and streams' time-outs); defrag_add() also moves it to each
 * fragment's time stamp. */
struct defrag *defrag_new_clocked(const struct defrag_limits *limits,
				  struct pkt_clock *clock);

/* Free every queued fragment. */
void defrag_free(struct defrag *d);

/*
 * Take a fragment (ownership passes: it is queued or freed).  @skb is as
 * pkt_decode_frame() made it, @meta and @frag describe it.  Datagrams are
 * told apart by family, addresses, protocol (IPv4) and id.  On DEFRAG_DONE,
 * *@out is the whole datagram: the first fragment's buffer with its IP
 * header's length/offset fields as received (an IPv6 datagram keeps its
 * Fragment header), len = header + whole payload, network_header set,
 * tstamp_ns that of its latest fragment (as the kernel); the caller owns
 * it.  A fragment that is not one (frag->is_fragment false: an IPv6 atomic
 * fragment) comes straight back as *@out.  Exact duplicates are freed and
 * the result is DEFRAG_HELD.  Expires old datagrams first, using
 * @skb->tstamp_ns as the clock.
 */
enum defrag_result defrag_add(struct defrag *d, struct sk_buff *skb,
			      const struct pkt_meta *meta,
			      const struct ip_frag_info *frag,
			      struct sk_buff **out);

/* The clock is at capture time @now_ns: datagrams whose first fragment
 * came more than timeout_ns before are dropped (their time-outs fire on
 * the wheel, never early, late by at most its level's granularity: an
 * eighth of the time-out or less). */
void defrag_expire(struct defrag *d, int64_t now_ns);

/* Counters so far, and bytes held right now. */
void defrag_get_stats(const struct defrag *d, struct defrag_stats *stats);
size_t defrag_bytes_held(const struct defrag *d);

#endif
