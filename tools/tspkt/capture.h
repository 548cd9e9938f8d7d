/*
 * capture.h - the receive path: libpcap (-r or -i, with a BPF filter) ->
 * pkt_decode_frame() -> defrag_add() -> netif_rx().
 */
#ifndef TSPKT_CAPTURE_H
#define TSPKT_CAPTURE_H

#include <pcap/pcap.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tspkt.h"

struct backlog;
struct classifier;
struct defrag;
struct output;
struct pkt_pool;

struct capture_stats {
	uint64_t frames;  /* read from libpcap */
	uint64_t decoded; /* IP packets */
	uint64_t not_ip;
	uint64_t malformed;
	uint64_t handed;      /* datagrams given to netif_rx() */
	bool have_pcap_stats; /* live capture */
	struct pcap_stat ps;
};

struct capture;

/* Open -r or -i and set the filter; NULL with a message in @err. */
struct capture *capture_open(const struct tspkt_opts *o, char *err,
			     size_t errlen);
int capture_linktype(const struct capture *c);
/* Whether @path ("-": standard output) is the capture file being read, by
 * device and inode, so also through another name. */
bool capture_reads_file(const struct capture *c, const char *path);
unsigned int capture_snaplen(const struct capture *c);

/*
 * Read until the end, an error, a signal or output_should_stop(), handing
 * datagrams to @b in batches (buffers from @pool).  With @inline_k, this
 * thread classifies too: every datagram, at once and without a copy, if
 * @helpers is 0; else each batch either here or by the @helpers worker
 * threads, whichever is cheaper (never waiting for room in @b, so @b must
 * not drop).  0; 1 interrupted by a signal; -1 on a read error (message
 * in @err, counters still valid).
 */
/* The wheel of the time-outs (IP fragments, flows, TCP holes), which the
 * reader advances before each frame: to its time stamp reading a file, to
 * the monotonic clock live (also while no packet comes). */
struct pkt_clock;
void capture_set_clock(struct capture *c, struct pkt_clock *clock);

/* --write-flows: read the capture file again and write to -w every frame
 * of the flows in @set (TCP and UDP, both directions, IP fragments too),
 * as captured; *@written counts them.  0, or -1 with a message. */
struct flow_keyset;
int capture_write_flows(const struct tspkt_opts *o,
			const struct flow_keyset *set, uint64_t *written,
			char *err, size_t errlen);

/* Follow TCP streams with @tcp (tcpstream.h): the reader hands it every
 * TCP datagram, and prints its records. */
struct tcpstream;
void capture_set_streams(struct capture *c, struct tcpstream *tcp);

int capture_run(struct capture *c, struct defrag *d, struct backlog *b,
		struct output *out, struct pkt_pool *pool,
		struct classifier *inline_k, unsigned int helpers, char *err,
		size_t errlen);

/* Whether -j threads can share reading this capture (a classic pcap
 * file): capture_run_shared(). */
bool capture_can_share(const struct capture *c);

/*
 * capture_run() by @n threads (this one and @n - 1 it starts), each with
 * its classifier of @ks: they take turns at reading the file, and each
 * classifies what it read, where its read left the bytes; results,
 * counters and messages are as one reader's.
 */
int capture_run_shared(struct capture *c, struct defrag *d, struct backlog *b,
		       struct output *out, struct pkt_pool *pool,
		       struct classifier *ks, unsigned int n, char *err,
		       size_t errlen);

void capture_get_stats(struct capture *c, struct capture_stats *st);
void capture_close(struct capture *c);

#endif
