/*
 * tcpstream.h - TCP streams for tspkt: each direction of each flow
 * reassembled (reasm.c) and searched as one byte stream (push-mode
 * streams, textsearch_stream.h) for the rules of layer "stream" and the
 * lone PATTERN, so that a string cut between segments is found.
 *
 * Runs on the reader, in capture order.  An occurrence is reported with
 * the datagram whose bytes completed it (tcpstream_packet() adds it to that
 * datagram's hits); what happens away from a datagram (a flow's time-out,
 * its eviction, the end of the capture: the occurrences a flow's end
 * decides, gaps and flow records) is queued as records of its own, which
 * the reader prints right after the datagram it was handling.
 */
#ifndef TSPKT_TCPSTREAM_H
#define TSPKT_TCPSTREAM_H

#include <textsearch_skb.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decode.h"
#include "flow.h"
#include "format.h"
#include "output.h"
#include "pktclock.h"
#include "reasm.h"
#include "tspkt.h"

struct tcpstream_opts {
	size_t max_flows; /* --max-flows, 1,000,000 */
	unsigned int hz;  /* --hz: 100, 250, 300 or 1000 */
	struct flow_timeouts timeouts;
	unsigned int hole_timeout; /* seconds a hole may wait; 10 */
	uint64_t memcap;	   /* --stream-memcap, 64 MiB */
	uint64_t depth;		   /* --stream-depth per direction, 1 MiB;
				      0: no limit */
	enum reasm_policy policy;  /* --overlap-policy, bsd */
	bool midstream;		   /* not --no-midstream */
};

#define TCPSTREAM_DEFAULT_MAX_FLOWS 1000000u
#define TCPSTREAM_DEFAULT_HZ 250u
#define TCPSTREAM_DEFAULT_HOLE_TIMEOUT 10u
#define TCPSTREAM_DEFAULT_MEMCAP (64ull << 20)
#define TCPSTREAM_DEFAULT_DEPTH (1ull << 20)

struct tcpstream_stats {
	uint64_t segments;  /* TCP datagrams seen */
	uint64_t midstream; /* flows picked up without a handshake */
	uint64_t ignored;   /* segments of flows not followed
				(--no-midstream) or closed */
	uint64_t matches;   /* occurrences reported */
	struct reasm_stats reasm;
	struct flow_stats flows;
	struct ts_timer_stats timers; /* the reader's wheel, all timers */
};

struct tcpstream;

/* Whether @rs has rules searched in streams (rule_in_stream()). */
bool tcpstream_wanted(const struct ruleset *rs);

/* The stream searches for @o's rules, their time-outs on @clock (whose
 * thread calls the rest).  NULL with a message in @err. */
struct tcpstream *tcpstream_new(const struct tspkt_opts *o,
				const struct tcpstream_opts *so,
				struct pkt_clock *clock, char *err,
				size_t errlen);

/*
 * A datagram in capture order (after IP reassembly; its transport header
 * found by pkt_decode_transport()); TCP and UDP have flows, TCP streams
 * too.  The stream
 * occurrences its bytes complete are appended to *@hits (a heap array of
 * *@cap, grown as needed) and *@nhits; meta->in_stream says whether its
 * payload went to its stream (else, past --stream-depth or in a flow not
 * followed, the lone PATTERN searches it on its own).
 */
void tcpstream_packet(struct tcpstream *ts, struct sk_buff *skb,
		      struct pkt_meta *meta, uint64_t frame, int64_t ts_ns,
		      struct rule_hit **hits, size_t *nhits, size_t *cap);

/* The records queued since the last call, to print in this order (each
 * result's seq is the caller's to set).  *@n of them; the array is the
 * caller's to free, its contents are output_submit()'s to take. */
struct pkt_result *tcpstream_take_records(struct tcpstream *ts, size_t *n);

/* -n reached or the capture ended: end every flow (their records are
 * queued). */
void tcpstream_end_all(struct tcpstream *ts);

void tcpstream_get_stats(const struct tcpstream *ts,
			 struct tcpstream_stats *st);

void tcpstream_free(struct tcpstream *ts);

#endif
