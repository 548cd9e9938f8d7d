/*
 * tspkt.h - what tspkt's parts share: options, the per-buffer bookkeeping
 * kept in skb->cb, and the stages of the receive path:
 *
 *   capture.c   libpcap -> pkt_decode_frame -> defrag -> netif_rx()
 *   classify.c  worker threads: backlog_dequeue -> rules -> a result
 *   output.c    results back in capture order: lines, --json, -w, counters
 */
#ifndef TSPKT_H
#define TSPKT_H

#include <pcap/pcap.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "backlog.h"
#include "decode.h"
#include "defrag.h"
#include "rules.h"

#define TSPKT_PROG "tspkt"

struct tspkt_opts {
	const char *read_file;	/* -r */
	const char *iface;	/* -i */
	char *filter;		/* BPF words joined, or NULL */
	struct ruleset rules;
	unsigned int workers;	/* -j */
	unsigned int backlog;	/* --backlog */
	bool drop_on_overrun;
	bool json;
	bool counters_only;	/* -c */
	bool quiet;		/* -q */
	bool line_buffered;	/* -l, and always for -i */
	bool promisc;		/* not with -p */
	int verbose;		/* -v: report malformed frames */
	const char *write_file;	/* -w */
	unsigned int snaplen;	/* -s, for -i */
	uint64_t max_matches;	/* -n; 0: no limit */
};

/* Kept in every decoded buffer's cb, so -w can write the frame again. */
struct pkt_cb {
	uint64_t frame;		/* 1-based frame number in the capture */
	uint32_t caplen;	/* as captured */
	uint32_t wirelen;	/* as on the wire */
	int64_t ts_ns;		/* capture time (defrag retimes a head) */
	struct pkt_info *info;	/* set on the datagram given to the backlog */
};
_Static_assert(sizeof(struct pkt_cb) <= sizeof(((struct sk_buff *)0)->cb),
	       "struct pkt_cb must fit in skb->cb");

static inline struct pkt_cb *pkt_cb(struct sk_buff *skb)
{
	return (struct pkt_cb *)(void *)skb->cb;
}

/* A datagram on its way through the backlog (heap, owned by the worker
 * once dequeued). */
struct pkt_info {
	uint64_t seq;		/* position in capture order, from 0 */
	uint64_t frame;		/* the frame that completed it */
	int64_t ts_ns;		/* and its time */
	unsigned int nfrags;	/* 1, or the fragments it was made of */
	struct pkt_meta meta;
};

/* ---- output.c ------------------------------------------------------------ */

struct output;

/* What a worker found in one datagram. */
struct pkt_result {
	uint64_t seq;
	char *text;		/* the line(s) to print, or NULL */
	size_t text_len;
	struct sk_buff *skb;	/* kept for -w when it matched, or NULL */
	uint8_t *classes;	/* per class: matched (when matched) */
	bool matched;
};

/* @linktype/@snaplen: the capture's, for -w.  NULL with a message in
 * @err on failure. */
struct output *output_new(const struct tspkt_opts *o, size_t nclasses,
			  int linktype, unsigned int snaplen, char *err,
			  size_t errlen);

/* Hand over a result (its contents are taken); printed once every earlier
 * sequence number is.  Waits while it is too far ahead of the oldest. */
void output_submit(struct output *out, struct pkt_result *r);

/* -n / -q reached: the capture loop stops reading. */
bool output_should_stop(struct output *out);

/* Flush stdout and the -w file; 0, or -1 with a message printed. */
int output_finish(struct output *out);

uint64_t output_classified(struct output *out);
uint64_t output_matched(struct output *out);
uint64_t output_class_count(struct output *out, size_t idx);

void output_free(struct output *out);

/* Format helpers shared with classify.c. */
void format_time(int64_t ts_ns, char *buf, size_t len);
const char *proto_name(uint8_t proto, char *buf, size_t len);
void format_addr(int family, const uint8_t *addr, char *buf, size_t len);

/* ---- classify.c ---------------------------------------------------------- */

struct classify {
	struct backlog *backlog;
	const struct tspkt_opts *opts;
	struct output *out;
};

/* A worker: classifies until the backlog is closed and empty. */
void *classify_worker(void *arg);

/* ---- capture.c ----------------------------------------------------------- */

struct capture_stats {
	uint64_t frames;	/* read from libpcap */
	uint64_t decoded;	/* IP packets */
	uint64_t not_ip;
	uint64_t malformed;
	uint64_t handed;	/* datagrams given to netif_rx() */
	bool have_pcap_stats;	/* live capture */
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
 * Read until the end, an error, a signal or output_should_stop().
 * 0; 1 interrupted by a signal; -1 on a read error (message in @err,
 * counters still valid).
 */
int capture_run(struct capture *c, struct defrag *d, struct backlog *b,
		struct output *out, char *err, size_t errlen);

void capture_get_stats(struct capture *c, struct capture_stats *st);
void capture_close(struct capture *c);

#endif
