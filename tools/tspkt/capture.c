/*
 * capture.c - the receive path: libpcap (a file or an interface, with a
 * BPF filter) -> pkt_decode_frame() -> defrag_add() for fragments ->
 * netif_rx() into the backlog the workers read.
 */
#define _DEFAULT_SOURCE /* pcap.h uses the BSD u_char/u_int types */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture.h"
#include "backlog.h"
#include "decode.h"
#include "defrag.h"
#include "output.h"
#include "tspkt.h"

struct capture {
	const struct tspkt_opts *o;
	pcap_t *p;
	const char *name; /* the file or interface, for messages */
	bool live;
	int linktype;
	int64_t ns_per_tick; /* what the handle's tv_usec counts */
	struct capture_stats st;
	uint64_t next_seq;
};

/* Set by SIGINT/SIGTERM; the reading loop looks at it between packets
 * (a live read wakes at least every LIVE_TIMEOUT_MS to look). */
static volatile sig_atomic_t interrupted;
/* The handle a signal must wake: on Linux a live read can wait in poll()
 * with no timeout, and pcap_breakloop() (meant for signal handlers) ends
 * that wait.  Set once, before the handler is installed. */
static pcap_t *volatile wake_on_signal;

#define LIVE_TIMEOUT_MS 100

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
	if (wake_on_signal)
		pcap_breakloop(wake_on_signal);
}

static void catch_signals(pcap_t *p)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	wake_on_signal = p;
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static pcap_t *open_live(const struct tspkt_opts *o, char *err, size_t errlen)
{
	char ebuf[PCAP_ERRBUF_SIZE] = "";
	pcap_t *p = pcap_create(o->iface, ebuf);
	int rc;

	if (!p) {
		snprintf(err, errlen, "%s: %s", o->iface, ebuf);
		return NULL;
	}
	pcap_set_snaplen(p, (int)o->snaplen);
	pcap_set_promisc(p, o->promisc);
	/* not immediate mode: there a read may block until a packet comes,
	 * while the timeout wakes it to look at the signal flag */
	pcap_set_timeout(p, LIVE_TIMEOUT_MS);
	/* nanoseconds where the interface has them; microseconds otherwise */
	pcap_set_tstamp_precision(p, PCAP_TSTAMP_PRECISION_NANO);
	rc = pcap_activate(p);
	if (rc < 0) {
		if (rc == PCAP_ERROR_NO_SUCH_DEVICE ||
		    rc == PCAP_ERROR_PERM_DENIED || rc == PCAP_ERROR)
			snprintf(err, errlen, "%s: %s", o->iface,
				 pcap_geterr(p));
		else
			snprintf(err, errlen, "%s: %s (%s)", o->iface,
				 pcap_statustostr(rc), pcap_geterr(p));
		pcap_close(p);
		return NULL;
	}
	if (rc > 0 && !o->quiet)
		fprintf(stderr, TSPKT_PROG ": %s: warning: %s: %s\n", o->iface,
			pcap_statustostr(rc), pcap_geterr(p));
	return p;
}

/* A port filter drops the later fragments of a datagram (they carry no
 * port), so the datagram never becomes whole: say so, as ngrep's users
 * learn the hard way. */
static void warn_port_filter(const char *filter)
{
	const char *p = filter;

	while ((p = strstr(p, "port"))) {
		bool word_start = p == filter || p[-1] == ' ' || p[-1] == '(';

		if (word_start) {
			fprintf(stderr,
				TSPKT_PROG
				": warning: '%s' drops IP "
				"fragments after the first (they carry no "
				"port), so fragmented datagrams are never "
				"reassembled; add \"or (ip[6:2] & 0x1fff != 0) "
				"or (ip6[6] == 44)\" to keep them\n",
				filter);
			return;
		}
		p += 4;
	}
}

static int set_filter(struct capture *c, char *err, size_t errlen)
{
	struct bpf_program prog;
	bpf_u_int32 net = 0, mask = PCAP_NETMASK_UNKNOWN;
	char ebuf[PCAP_ERRBUF_SIZE];

	if (!c->o->filter)
		return 0;
	/* the netmask only matters for "ip broadcast" */
	if (c->live && pcap_lookupnet(c->o->iface, &net, &mask, ebuf))
		mask = PCAP_NETMASK_UNKNOWN;
	if (pcap_compile(c->p, &prog, c->o->filter, 1, mask)) {
		snprintf(err, errlen, "bad filter '%s': %s", c->o->filter,
			 pcap_geterr(c->p));
		return -1;
	}
	if (pcap_setfilter(c->p, &prog)) {
		snprintf(err, errlen, "filter '%s': %s", c->o->filter,
			 pcap_geterr(c->p));
		pcap_freecode(&prog);
		return -1;
	}
	pcap_freecode(&prog);
	if (!c->o->quiet)
		warn_port_filter(c->o->filter);
	return 0;
}

struct capture *capture_open(const struct tspkt_opts *o, char *err,
			     size_t errlen)
{
	struct capture *c = calloc(1, sizeof(*c));
	char ebuf[PCAP_ERRBUF_SIZE] = "";

	if (!c) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	c->o = o;
	c->live = o->iface != NULL;
	c->name = c->live ? o->iface : o->read_file;
	if (c->live) {
		c->p = open_live(o, err, errlen);
	} else {
		c->p = pcap_open_offline_with_tstamp_precision(
			o->read_file, PCAP_TSTAMP_PRECISION_NANO, ebuf);
		/* libpcap names the file itself when it cannot open it */
		if (!c->p && !strncmp(ebuf, o->read_file, strlen(o->read_file)))
			snprintf(err, errlen, "%s", ebuf);
		else if (!c->p)
			snprintf(err, errlen, "%s: %s", o->read_file, ebuf);
	}
	if (!c->p)
		goto fail;
	/* files are opened in nanoseconds; an interface may only have
	 * microseconds */
	c->ns_per_tick = pcap_get_tstamp_precision(c->p) ==
					 PCAP_TSTAMP_PRECISION_NANO ?
				 1 :
				 1000;
	c->linktype = pcap_datalink(c->p);
	if (!pkt_linktype_supported(c->linktype)) {
		const char *name = pcap_datalink_val_to_name(c->linktype);

		snprintf(err, errlen,
			 "%s: link type %s (%d) is not supported "
			 "(Ethernet, Linux cooked, raw IP, BSD loopback are)",
			 c->name, name ? name : "unknown", c->linktype);
		goto fail;
	}
	if (set_filter(c, err, errlen))
		goto fail;
	catch_signals(c->live ? c->p : NULL);
	/* as tcpdump says it: from here on packets are being captured (a
	 * script, or a test, may wait for this line before sending) */
	if (c->live && !o->quiet) {
		const char *name = pcap_datalink_val_to_name(c->linktype);

		fprintf(stderr,
			TSPKT_PROG ": listening on %s, link-type %s, "
				   "snapshot length %d bytes\n",
			o->iface, name ? name : "?", pcap_snapshot(c->p));
	}
	return c;
fail:
	capture_close(c);
	return NULL;
}

bool capture_reads_file(const struct capture *c, const char *path)
{
	struct stat in, out;
	FILE *f;

	if (c->live || !(f = pcap_file(c->p)) || fstat(fileno(f), &in))
		return false;
	if (strcmp(path, "-") ? stat(path, &out) : fstat(STDOUT_FILENO, &out))
		return false; /* not there yet: not the input */
	return in.st_dev == out.st_dev && in.st_ino == out.st_ino;
}

int capture_linktype(const struct capture *c)
{
	return c->linktype;
}

unsigned int capture_snaplen(const struct capture *c)
{
	int s = pcap_snapshot(c->p);

	return s > 0 ? (unsigned int)s : 262144u;
}

#define NSEC_PER_SEC 1000000000LL

/*
 * A pcapng time stamp has 64 bits in any unit, so libpcap can hand over a
 * time past what int64_t nanoseconds hold (after 2262): false then, rather
 * than a wrapped time that would also upset the reassembly's time-outs.
 */
static bool time_to_ns(const struct capture *c, const struct timeval *tv,
		       int64_t *ns)
{
	const int64_t sec = (int64_t)tv->tv_sec;
	const int64_t frac = (int64_t)tv->tv_usec * c->ns_per_tick;

	if (frac < 0 || frac >= NSEC_PER_SEC ||
	    sec > (INT64_MAX - frac) / NSEC_PER_SEC ||
	    sec < INT64_MIN / NSEC_PER_SEC)
		return false;
	*ns = sec * NSEC_PER_SEC + frac;
	return true;
}

/* One frame from libpcap into the backlog (or the defrag queues). */
static void receive(struct capture *c, struct defrag *d, struct backlog *b,
		    const struct pcap_pkthdr *h, const u_char *data)
{
	int64_t ts_ns;
	struct pkt_meta meta;
	struct ip_frag_info frag;
	struct pkt_info *info;
	struct pkt_cb *cb;
	struct sk_buff *skb;
	const char *why;

	c->st.frames++;
	if (!time_to_ns(c, &h->ts, &ts_ns)) {
		skb = NULL;
		why = "time stamp out of range (past the year 2262)";
	} else {
		skb = pkt_decode_frame(c->linktype, data, h->caplen, ts_ns,
				       &meta, &frag, &why);
	}
	if (!skb) {
		if (!why) {
			c->st.not_ip++;
			return;
		}
		c->st.malformed++;
		if (c->o->verbose)
			fprintf(stderr, TSPKT_PROG ": %s: frame %llu: %s\n",
				c->name, (unsigned long long)c->st.frames, why);
		return;
	}
	c->st.decoded++;
	cb = pkt_cb(skb);
	cb->frame = c->st.frames;
	cb->caplen = h->caplen;
	cb->wirelen = h->len;
	cb->ts_ns = ts_ns;
	cb->info = NULL;
	if (frag.is_fragment) {
		struct sk_buff *whole = NULL;

		if (defrag_add(d, skb, &meta, &frag, &whole) != DEFRAG_DONE)
			return;
		skb = whole;
		meta.net_len = skb->len;
		meta.has_transport = false;
		meta.sport = meta.dport = 0;
	}
	info = calloc(1, sizeof(*info));
	if (!info) {
		fprintf(stderr,
			TSPKT_PROG ": out of memory: frame %llu "
				   "dropped\n",
			(unsigned long long)c->st.frames);
		kfree_skb(skb);
		return;
	}
	info->seq = c->next_seq;
	info->frame = c->st.frames;
	info->ts_ns = ts_ns;
	info->nfrags = 1;
	info->meta = meta;
	pkt_cb(skb)->info = info;
	c->st.handed++;
	/* on a drop the backlog has freed the buffer; the number is used
	 * again, so the output stage sees no gap */
	if (netif_rx(b, skb) == NETIF_RX_SUCCESS)
		c->next_seq++;
	else
		free(info);
}

int capture_run(struct capture *c, struct defrag *d, struct backlog *b,
		struct output *out, char *err, size_t errlen)
{
	struct pcap_pkthdr *h;
	const u_char *data;
	int rc;

	while (!interrupted && !output_should_stop(out)) {
		rc = pcap_next_ex(c->p, &h, &data);
		if (rc == 1) {
			receive(c, d, b, h, data);
			continue;
		}
		if (rc == 0)
			continue; /* live: the timeout, to look at signals */
		if (rc == PCAP_ERROR_BREAK)
			break; /* end of the file, or pcap_breakloop() */
		if (c->live)
			snprintf(err, errlen, "%s: %s", c->name,
				 pcap_geterr(c->p));
		else
			snprintf(err, errlen,
				 "%s: %s capture after %llu "
				 "packets: %s",
				 c->name,
				 strstr(pcap_geterr(c->p), "truncated") ?
					 "truncated" :
					 "bad",
				 (unsigned long long)c->st.frames,
				 pcap_geterr(c->p));
		return -1;
	}
	return interrupted ? 1 : 0;
}

void capture_get_stats(struct capture *c, struct capture_stats *st)
{
	*st = c->st;
	if (c->live && pcap_stats(c->p, &st->ps) == 0)
		st->have_pcap_stats = true;
}

void capture_close(struct capture *c)
{
	if (!c)
		return;
	if (c->live && wake_on_signal == c->p) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		wake_on_signal = NULL;
	}
	if (c->p)
		pcap_close(c->p);
	free(c);
}
