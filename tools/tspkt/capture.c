/*
 * capture.c - the receive path: libpcap (a file or an interface, with a
 * BPF filter) -> pkt_decode_headers() -> defrag_add() for fragments ->
 * a batch of datagrams in pool slots -> netif_rx_list() into the backlog
 * the workers read; or, with one worker reading a file, straight to
 * classify_one() on this thread, without a copy.  A frame of a file read
 * here is handed over where it lies too: its slot only wraps it, and the
 * chunk it lies in is read into again once every such frame is released.
 *
 * A classic pcap file is read here rather than through libpcap, a
 * megabyte per read(2), each frame used where it lies: libpcap reads it
 * with two fread(3) calls per frame into its own buffer, which costs more
 * than all the rest of the search (docs/performance.md).  At anything
 * unusual (a record longer than the snapshot length, a time stamp past
 * 2038, a truncated record, the end of the data) libpcap takes over at
 * that record, so such files read exactly as before, messages included.
 *
 * -j threads share reading such a file (capture_run_shared(), struct
 * read_turn), with no backlog between them.
 */
#define _DEFAULT_SOURCE /* pcap.h uses the BSD u_char/u_int types */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "capture.h"
#include "backlog.h"
#include "classify.h"
#include "decode.h"
#include "defrag.h"
#include "output.h"
#include "flow.h"
#include "pool.h"
#include "tcpstream.h"
#include "tspkt.h"

#define READ_CHUNK (1u << 20)
#define PCAP_MAX_CAPLEN 262144u /* libpcap's largest sane record */
#define PCAP_FILE_HDR 24u
#define PCAP_REC_HDR 16u
#define PCAP_MAGIC_US 0xa1b2c3d4u
#define PCAP_MAGIC_NS 0xa1b23c4du

/* Where the file reader reads to; datagrams handed to the workers point
 * into it, so it is reused only once they are all released. */
struct read_chunk {
	struct pkt_lender lender;
	struct read_chunk *next;
	uint64_t filled; /* when last read into (file_reader.fills) */
	uint8_t buf[];
};

/* Chunks taken in turn once datagrams are lent: a chunk read into again
 * right after a worker went through it has its lines in that worker's
 * cache, and read(2) then takes each back (a 1 MiB read took 200 us
 * instead of 80); with three, the worker has moved on by 2 MiB. */
#define READ_CHUNKS_IN_TURN 3u

#define READ_CHUNK_BYTES (READ_CHUNK + PCAP_MAX_CAPLEN + PCAP_REC_HDR)

/* A classic pcap file read with read(2) (see the top of the file). */
struct file_reader {
	bool on;
	bool swapped; /* written in the other byte order */
	bool nsec;    /* nanosecond time stamps */
	bool eof;
	int fd;
	uint32_t snapshot;	   /* libpcap's, which it holds records to */
	struct read_chunk *chunk;  /* the one read to now */
	struct read_chunk *chunks; /* all of them, linked through ->next */
	uint8_t *buf;		   /* chunk->buf */
	size_t have;		   /* bytes in buf */
	size_t pos;		   /* the next record's offset in buf */
	off_t at;		   /* buf[0]'s offset in the file */
	/* threads sharing the file read no further than its length then
	 * (libpcap reads what came since) */
	off_t size;
	int64_t read_ns; /* spent in read(2), for the costs in capture.c */
	uint64_t fills;
	unsigned int nchunks;
};

/*
 * One of the -j threads that share reading a file (capture_run_shared()).
 * Each takes the next megabyte of the file, reads it into its own chunk,
 * and once the thread before has found where its records end, finds where
 * its own end (reading the rest of the last one); it then decodes them in
 * its turn, in file order, as one reader would, and classifies them
 * after its turn, where its read left their bytes (in its core's cache).
 * Reads and classifying run side by side; finding the records and
 * decoding them go one thread after another.
 */
struct read_turn {
	struct capture *c;
	struct classifier *k;
	struct read_chunk *chunk; /* NULL until its first read */
	pthread_t thread;
	pthread_cond_t cv; /* woken when its megabyte's turn may have come */
	/* the chunk's bytes: its .at, .buf, .have, .pos and .eof are this
	 * thread's, the rest the file reader's */
	struct file_reader view;
	off_t start, end; /* its records: [start, end) of the file */
	bool last;	  /* libpcap reads on from end (or nothing is left) */
	unsigned int n;	  /* datagrams decoded to classify: list[0, n) */
	struct sk_buff *list[CLASSIFY_TURN];
	/* the frames' own buffers, which wrap the chunk's bytes */
	struct sk_buff skbs[CLASSIFY_TURN];
	struct pkt_info infos[CLASSIFY_TURN];
};

struct capture {
	const struct tspkt_opts *o;
	pcap_t *p;
	const char *name; /* the file or interface, for messages */
	bool live;
	int linktype;
	int64_t ns_per_tick; /* what the handle's tv_usec counts */
	struct capture_stats st;
	uint64_t next_seq;
	struct bpf_program prog; /* the filter, for the file reader */
	bool have_prog;
	struct file_reader fr;
	/* where datagrams go (capture_run) */
	struct defrag *defrag;
	struct backlog *backlog;
	struct output *out;
	struct classifier *inline_k; /* may classify here, or NULL */
	struct tcpstream *tcp;	     /* TCP streams, or NULL */
	struct pkt_clock *clock;     /* the time-outs' wheel */
	unsigned int helpers;	     /* worker threads besides this one */
	struct pkt_cache cache;
	struct sk_buff *batch[CLASSIFY_BATCH];
	unsigned int nbatch, batch_max;
	unsigned int direct; /* classified here, not yet counted */
	/* with helpers: whether this batch is classified here, and what a
	 * datagram cost this thread each way, recently (ns, 0: not known) */
	bool here;
	unsigned int in_batch; /* datagrams of this batch so far */
	unsigned int samples_here, samples_handed; /* up to 8 */
	/* the other way is tried every trial_every batches (end_of_batch());
	 * trial: this batch is such a try */
	unsigned int trial_every, since_trial;
	bool trial;
	int64_t batch_t0;
	int64_t cost_here, cost_handed;
	/* the first batch handed after classifying here: its hand-over is
	 * not counted in cost_handed (uncounted_ns, see end_of_batch()) */
	bool first_handed;
	int64_t uncounted_ns;
	/* a frame classified where it lies */
	struct sk_buff borrowed;
	struct pkt_info borrowed_info;
	/* threads sharing a file: the one decoding (NULL: none, or one
	 * reader); megabytes taken, walked (the next one's records start at
	 * walk_at, or walk_end: none are left to them) and decoded */
	struct read_turn *turn;
	pthread_mutex_t turn_mu;
	struct read_turn **holder; /* megabyte k's thread: holder[k % nturns] */
	unsigned int nturns;
	uint64_t taken, walked, decoded;
	off_t walk_at;
	bool walk_end;
	bool turns_over; /* stop: the end, -n, -q or a signal */
	int turns_rc;
	char *err;
	size_t errlen;
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
	/* kept: the file reader filters with it */
	c->prog = prog;
	c->have_prog = true;
	if (!c->o->quiet)
		warn_port_filter(c->o->filter);
	return 0;
}

static uint32_t swap32(uint32_t v)
{
	return v >> 24 | (v >> 8 & 0xff00u) | (v << 8 & 0xff0000u) | v << 24;
}

static uint32_t rd32(const struct file_reader *fr, const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return fr->swapped ? swap32(v) : v;
}

/* A chunk more, or NULL when out of memory.  It is one huge page
 * (pkt_huge_alloc()): read(2) into a fresh chunk of small pages takes
 * 320 page faults, which on a VM cost more than reading it. */
static struct read_chunk *new_chunk(struct file_reader *fr)
{
	struct read_chunk *k =
		pkt_huge_alloc(sizeof(struct read_chunk) + READ_CHUNK_BYTES);

	if (!k)
		return NULL;
	atomic_init(&k->lender.returned, 0);
	k->lender.lent = 0;
	k->next = fr->chunks;
	k->filled = 0;
	fr->chunks = k;
	fr->nchunks++;
	return k;
}

static void free_chunks(struct file_reader *fr)
{
	struct read_chunk *k, *next;

	for (k = fr->chunks; k; k = next) {
		next = k->next;
		free(k);
	}
	fr->chunks = fr->chunk = NULL;
	fr->nchunks = 0;
	fr->buf = NULL;
}

/* Read the file here if it is a regular file in the classic pcap format
 * (version 2.4, either byte order); otherwise libpcap reads it all. */
static void file_reader_open(struct capture *c)
{
	struct file_reader *fr = &c->fr;
	FILE *f = pcap_file(c->p);
	uint8_t h[PCAP_FILE_HDR];
	uint32_t magic;
	uint16_t major, minor;
	struct stat st;

	memset(fr, 0, sizeof(*fr));
	if (!f || !strcmp(c->o->read_file, "-") || fstat(fileno(f), &st) ||
	    !S_ISREG(st.st_mode) ||
	    pread(fileno(f), h, sizeof(h), 0) != (ssize_t)sizeof(h))
		return;
	memcpy(&magic, h, 4);
	if (magic == swap32(PCAP_MAGIC_US) || magic == swap32(PCAP_MAGIC_NS)) {
		fr->swapped = true;
		magic = swap32(magic);
	}
	if (magic != PCAP_MAGIC_US && magic != PCAP_MAGIC_NS)
		return; /* pcapng, or a variant */
	memcpy(&major, h + 4, 2);
	memcpy(&minor, h + 6, 2);
	if (fr->swapped) {
		major = (uint16_t)(major >> 8 | major << 8);
		minor = (uint16_t)(minor >> 8 | minor << 8);
	}
	if (major != 2 || minor != 4 || pcap_snapshot(c->p) <= 0)
		return;
	fr->chunk = new_chunk(fr);
	if (!fr->chunk)
		return;
	fr->buf = fr->chunk->buf;
	fr->nsec = magic == PCAP_MAGIC_NS;
	fr->fd = fileno(f);
	fr->snapshot = (uint32_t)pcap_snapshot(c->p);
	fr->at = PCAP_FILE_HDR;
	fr->on = true;
}

/* libpcap goes on from the next record: its stream is moved there (it
 * reads records from where the stream stands, one after another). */
static int file_reader_hand_over(struct capture *c, char *err, size_t errlen)
{
	struct file_reader *fr = &c->fr;
	off_t at = fr->at + (off_t)fr->pos;

	/* the chunks stay until capture_close(): datagrams may point in */
	fr->on = false;
	if (fseeko(pcap_file(c->p), at, SEEK_SET)) {
		snprintf(err, errlen, "%s: %s", c->name, strerror(errno));
		return -1;
	}
	return 0;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A chunk no datagram points into, other than @busy: the one read into
 * longest ago once there are READ_CHUNKS_IN_TURN, else a new one, or (out
 * of memory) @busy once the workers are done with it. */
static struct read_chunk *free_chunk(struct file_reader *fr,
				     struct read_chunk *busy)
{
	struct read_chunk *k, *oldest;

	for (;;) {
		oldest = NULL;
		for (k = fr->chunks; k; k = k->next)
			if (k != busy && !pkt_lender_busy(&k->lender) &&
			    (!oldest || k->filled < oldest->filled))
				oldest = k;
		if (oldest && fr->nchunks >= READ_CHUNKS_IN_TURN)
			return oldest;
		k = new_chunk(fr);
		if (!k)
			k = oldest;
		if (k)
			return k;
		if (!pkt_lender_busy(&busy->lender))
			return busy;
		sched_yield();
	}
}

/* Keep the unread part, append the next chunk; eof when none came.  Read
 * to another chunk while datagrams point into this one. */
static void file_reader_fill(struct file_reader *fr)
{
	const uint8_t *unread = fr->buf + fr->pos;
	int64_t t0 = now_ns();
	ssize_t n;

	if (pkt_lender_busy(&fr->chunk->lender))
		fr->chunk = free_chunk(fr, fr->chunk);
	fr->at += (off_t)fr->pos;
	fr->have -= fr->pos;
	fr->pos = 0;
	memmove(fr->chunk->buf, unread, fr->have);
	fr->chunk->filled = ++fr->fills;
	fr->buf = fr->chunk->buf;
	do
		n = pread(fr->fd, fr->buf + fr->have, READ_CHUNK,
			  fr->at + (off_t)fr->have);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		fr->eof = true; /* libpcap reads the rest, or says why not */
	else
		fr->have += (size_t)n;
	fr->read_ns += now_ns() - t0;
}

/* The next record in the bytes read, as libpcap would deliver it: 1; 0 when
 * libpcap must take over at this record; -1 when it is not all read yet. */
static inline __attribute__((always_inline)) int
file_reader_record(struct file_reader *fr, struct pcap_pkthdr *h,
		   const u_char **data)
{
	const uint8_t *r = fr->buf + fr->pos;
	size_t left = fr->have - fr->pos;
	uint32_t sec, frac, caplen;

	if (left < PCAP_REC_HDR)
		return -1;
	sec = rd32(fr, r);
	frac = rd32(fr, r + 4);
	caplen = rd32(fr, r + 8);
	/* records libpcap cuts, refuses or reads its own way (signed 32-bit
	 * seconds) are left to it */
	if (caplen > fr->snapshot || caplen > PCAP_MAX_CAPLEN ||
	    sec > INT32_MAX || frac > INT32_MAX)
		return 0;
	if (left - PCAP_REC_HDR < caplen)
		return -1;
	h->ts.tv_sec = (time_t)sec;
	h->ts.tv_usec = (suseconds_t)frac * (fr->nsec ? 1 : 1000);
	h->caplen = caplen;
	h->len = rd32(fr, r + 12);
	*data = r + PCAP_REC_HDR;
	fr->pos += PCAP_REC_HDR + caplen;
	return 1;
}

/* The next record, reading on as needed: 1, or 0 when libpcap must take
 * over at this record. */
static int file_reader_next(struct file_reader *fr, struct pcap_pkthdr *h,
			    const u_char **data)
{
	int rc;

	while ((rc = file_reader_record(fr, h, data)) < 0) {
		if (fr->eof)
			return 0;
		file_reader_fill(fr);
	}
	return rc;
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
	if (!c->live)
		file_reader_open(c);
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

/* A datagram that will not be classified: its memory goes back. */
static void drop_datagram(struct capture *c, struct sk_buff *skb)
{
	if (pkt_cb(skb)->owner == PKT_HEAP)
		free(pkt_cb(skb)->info);
	pkt_cb(skb)->info = NULL;
	pkt_release(&c->cache, skb);
}

/* The reader's batch into the backlog: one lock, one wake-up.  What a
 * full backlog refuses is dropped, and its sequence numbers are given to
 * the next datagrams, so the output stage never waits for a gap. */
static void flush_batch(struct capture *c)
{
	unsigned int i, k, n = c->nbatch;
	int64_t t0;

	if (!n)
		return;
	for (i = 0; i < n; i++)
		pkt_cb(c->batch[i])->info->seq = c->next_seq + i;
	t0 = c->first_handed ? now_ns() : 0;
	k = netif_rx_list(c->backlog, c->batch, n);
	if (c->first_handed) {
		c->uncounted_ns += now_ns() - t0;
		c->first_handed = false;
	}
	c->next_seq += k;
	for (i = k; i < n; i++)
		drop_datagram(c, c->batch[i]);
	pkt_cache_settle(&c->cache);
	c->nbatch = 0;
}

/* Datagrams classified on this thread, counted by the backlog as if they
 * had passed through it. */
static void count_direct(struct capture *c)
{
	backlog_count_direct(c->backlog, c->direct);
	c->direct = 0;
}

/* Recent cost.  A batch cheaper than the figure moves it halfway there,
 * a dearer one an eighth of the way, counted as at most four times the
 * figure: a slow batch is more often a disturbance (preempted, page
 * faults, the pool and the threads starting) than a change in the
 * traffic.  Averaged alike, the first hand-overs' cost (16 times the
 * usual, while the pool and the worker start) kept the 100-rule bench
 * classifying on this thread for its first 1,200 batches. */
static void update_cost(int64_t *cost, int64_t sample)
{
	if (sample < 1)
		sample = 1;
	if (!*cost)
		*cost = sample;
	else if (sample < *cost)
		*cost -= (*cost - sample) / 2;
	else
		*cost +=
			((sample > 4 * *cost ? 4 * *cost : sample) - *cost) / 8;
}

/* Either figure rests on fewer than 8 batches: the first ones are dear
 * (the pool grows, the worker starts), and trying the other way only
 * one batch in 128 then kept the 100-rule bench on this thread for its
 * first 500 batches. */
static bool young_figures(const struct capture *c)
{
	return c->samples_here < 8 || c->samples_handed < 8;
}

/* How often the other way is tried: every TRIAL_FIRST batches while the
 * figures are young or after a try changed the choice, each try that
 * did not doubling that up to TRIAL_LAST.  A try of handing over wakes
 * the worker and holds this thread's later results behind the worker's:
 * with one string, where classifying here is a little cheaper, a try in
 * 16 (some 550 a run) cost -j 2 25 ms, 45 us a try, and made it 1.3
 * times as slow as -j 1. */
#define TRIAL_FIRST 16u
#define TRIAL_LAST 512u

static void schedule_trials(struct capture *c, bool was_here, bool hand)
{
	if (young_figures(c))
		c->trial_every = TRIAL_FIRST;
	else if (c->trial)
		c->trial_every = hand != was_here ? TRIAL_FIRST :
				 c->trial_every < TRIAL_LAST ?
						    2 * c->trial_every :
						    TRIAL_LAST;
}

/*
 * With worker threads reading a file, which this thread may also do: the
 * next batch is classified here, or put in pool slots and handed to
 * the workers, whichever cost this thread less per datagram lately (the
 * time in read(2) left out, as it falls on one batch in twenty; handing
 * over only when it saves a quarter, since the workers' share costs
 * too; a batch now and then tries the other way, to keep both figures
 * fresh: schedule_trials()).
 * The first hand-over after classifying here is left out too: it wakes
 * the worker that went idle meanwhile, which costs this thread ~10 us on
 * a VM (150 ns a datagram), while hand-overs in a run find the worker
 * awake.  Counted, it made each trial look dearer than classifying, so a
 * run that once started classifying here stayed there with the worker
 * idle (half the runs of the 100-rule bench, as slow as -j 1).
 * Handing over needs room, short of CLASSIFY_AHEAD batches per worker,
 * so this thread classifies itself rather than wait for a worker, and
 * its results are never far ahead of theirs.  Less room starved the
 * workers: with two batches each (eight when a read was near), the
 * worker of -j 2 with 100 rules waited 28-103 ms of a 200 ms run, mostly
 * while this thread was in read(2), which lasts longer than the batches
 * it had left.
 */
static void end_of_batch(struct capture *c)
{
	unsigned int depth, soft = c->helpers * CLASSIFY_AHEAD * c->batch_max;
	bool was_here = c->here, hand, preferred, try_other;
	int64_t t;

	c->in_batch = 0;
	if (c->here)
		count_direct(c);
	if (!c->helpers)
		return;
	t = now_ns();
	update_cost(was_here ? &c->cost_here : &c->cost_handed,
		    (t - c->batch_t0 - c->fr.read_ns - c->uncounted_ns) /
			    c->batch_max);
	if (was_here && c->samples_here < 8)
		c->samples_here++;
	else if (!was_here && c->samples_handed < 8)
		c->samples_handed++;
	c->fr.read_ns = 0;
	c->uncounted_ns = 0;
	c->batch_t0 = t;
	if (!c->cost_here || !c->cost_handed)
		hand = !was_here; /* try the other way first */
	else
		hand = 4 * c->cost_handed < 3 * c->cost_here;
	schedule_trials(c, was_here, hand);
	preferred = hand;
	try_other = ++c->since_trial >= c->trial_every;
	if (try_other) {
		c->since_trial = 0;
		hand = !hand;
	}
	depth = backlog_depth(c->backlog);
	if (depth >= soft || depth + c->batch_max > c->o->backlog)
		hand = false;
	/* a batch kept here for want of room is no try */
	c->trial = try_other && hand != preferred;
	c->here = !hand;
	c->first_handed = was_here && hand;
	/* results classified here go out before the workers' later ones
	 * can be held up behind them */
	if (was_here && !c->here)
		classifier_flush(c->inline_k);
}

/*
 * The buffer for a datagram of @len bytes (@l3off of them link header):
 * the frame itself when it is classified here and now, by a thread sharing
 * the file, or when it lies in the file reader's chunk (a slot lent the
 * chunk's bytes), whatever its length (a frame past 64 KiB, as loopback
 * and GRO captures hold, is not copied either); a pool slot when it fits
 * one, else the heap (fragments, which the reassembly keeps, and frames
 * too big for a slot).
 */
static struct sk_buff *
datagram_buffer(struct capture *c, const struct pcap_pkthdr *h,
		const u_char *data, int64_t ts_ns, struct pkt_meta *meta,
		struct ip_frag_info *frag, unsigned int l3off, const char **why)
{
	unsigned int len = l3off + meta->net_len;
	struct sk_buff *skb;

	if (!frag->is_fragment && (c->here || c->turn)) {
		struct read_turn *t = c->turn;

		skb = t ? &t->skbs[t->n] : &c->borrowed;
		/* only read, never written: the cast is for the buffer type */
		pkt_skb_wrap(skb, (uint8_t *)(uintptr_t)data, len, l3off,
			     meta->family, ts_ns);
		memset(skb->cb, 0, sizeof(skb->cb));
		pkt_cb(skb)->owner = PKT_BORROWED;
		pkt_cb(skb)->info = t ? &t->infos[t->n] : &c->borrowed_info;
		return skb;
	}
	if (!frag->is_fragment && c->fr.on) {
		/* the frame lies in the file reader's chunk: lent, not
		 * copied (only read, never written) */
		skb = pkt_pool_get_lent(&c->cache, &c->fr.chunk->lender);
		if (skb) {
			pkt_skb_wrap(skb, (uint8_t *)(uintptr_t)data, len,
				     l3off, meta->family, ts_ns);
			return skb;
		}
	}
	if (!frag->is_fragment && len <= POOL_SLOT_BYTES) {
		skb = pkt_pool_get(&c->cache);
		if (skb) {
			memcpy(skb->head, data, len);
			pkt_skb_wrap(skb, skb->head, len, l3off, meta->family,
				     ts_ns);
			return skb;
		}
	}
	return pkt_decode_frame(c->linktype, data, h->caplen, ts_ns, meta, frag,
				why);
}

/* The time-outs' clock: capture time reading a file, so that a file gives
 * the same output however fast it is read; the monotonic clock live. */
static void advance_clock(struct capture *c, int64_t ts_ns)
{
	if (!c->clock)
		return;
	if (c->live)
		ts_ns = now_ns();
	pkt_clock_advance(c->clock, ts_ns);
}

/* Classify what @t decoded, where its read left the bytes. */
static void classify_turn(struct read_turn *t)
{
	unsigned int i;

	for (i = 0; i < t->n; i++)
		classify_one(t->k, t->list[i]);
	t->n = 0;
	classifier_flush(t->k);
	pkt_cache_settle(&t->k->cache);
}

/* The TCP streams' records made while handling the last frame (or at
 * the end), printed right after it: the datagrams before them get their
 * sequence numbers first, and this thread's own results go out first, so
 * that the output stage never waits on this thread. */
static void submit_records(struct capture *c)
{
	size_t n, i;
	struct pkt_result *v = tcpstream_take_records(c->tcp, &n);

	if (!n) {
		free(v);
		return;
	}
	flush_batch(c);
	if (c->inline_k)
		classifier_flush(c->inline_k);
	/* a thread sharing the file classifies its datagrams first: the
	 * output stage may make it wait for them */
	if (c->turn) {
		count_direct(c);
		classify_turn(c->turn);
	}
	for (i = 0; i < n; i++)
		v[i].seq = c->next_seq++;
	output_submit_list(c->out, v, n);
	free(v);
}

/* One frame into a batch for the backlog (or the defrag queues). */
static void receive_frame(struct capture *c, const struct pcap_pkthdr *h,
			  const u_char *data)
{
	int64_t ts_ns;
	struct pkt_meta meta;
	struct ip_frag_info frag;
	struct pkt_info *info;
	struct pkt_cb *cb;
	struct sk_buff *skb = NULL;
	unsigned int l3off;
	const char *why;

	c->st.frames++;
	if (!time_to_ns(c, &h->ts, &ts_ns)) {
		why = "time stamp out of range (past the year 2262)";
	} else {
		/* the time-outs due by this frame's time go first */
		advance_clock(c, ts_ns);
		if (pkt_decode_headers(c->linktype, data, h->caplen, &meta,
				       &frag, &l3off, &why))
			skb = datagram_buffer(c, h, data, ts_ns, &meta, &frag,
					      l3off, &why);
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
	if (frag.is_fragment) {
		struct sk_buff *whole = NULL;

		if (defrag_add(c->defrag, skb, &meta, &frag, &whole) !=
		    DEFRAG_DONE)
			return;
		skb = whole;
		cb = pkt_cb(skb);
		meta.net_len = skb->len;
		meta.has_transport = false;
		meta.sport = meta.dport = 0;
	}
	info = cb->info;
	if (!info) {
		/* a heap buffer: its pkt_info too */
		info = calloc(1, sizeof(*info));
		if (!info) {
			fprintf(stderr,
				TSPKT_PROG ": out of memory: frame %llu "
					   "dropped\n",
				(unsigned long long)c->st.frames);
			kfree_skb(skb);
			return;
		}
		cb->info = info;
	}
	info->frame = c->st.frames;
	info->ts_ns = ts_ns;
	info->nfrags = 1;
	info->meta = meta;
	info->shits = NULL;
	info->nshits = 0;
	if (c->tcp &&
	    (meta.l4proto == IPPROTO_TCP || meta.l4proto == IPPROTO_UDP)) {
		size_t cap = 0;

		pkt_decode_transport(skb, &info->meta);
		tcpstream_packet(c->tcp, skb, &info->meta, info->frame, ts_ns,
				 &info->shits, &info->nshits, &cap);
	}
	c->st.handed++;
	if (c->here || c->turn) {
		info->seq = c->next_seq++;
		c->direct++;
		if (c->turn)
			c->turn->list[c->turn->n++] = skb;
		else
			classify_one(c->inline_k, skb);
	} else {
		c->batch[c->nbatch++] = skb;
		if (c->nbatch == c->batch_max)
			flush_batch(c);
	}
	if (++c->in_batch == c->batch_max)
		end_of_batch(c);
}

/* A frame, then what the TCP streams made of it. */
static void receive(struct capture *c, const struct pcap_pkthdr *h,
		    const u_char *data)
{
	receive_frame(c, h, data);
	if (c->tcp)
		submit_records(c);
}

static void on_packet(u_char *user, const struct pcap_pkthdr *h,
		      const u_char *data)
{
	struct capture *c = (struct capture *)(void *)user;

	receive(c, h, data);
	if (output_should_stop(c->out))
		pcap_breakloop(c->p);
}

/* A live capture as NAPI polls a device: whatever libpcap has (up to a
 * batch) goes to the backlog together. */
static int run_live(struct capture *c, char *err, size_t errlen)
{
	int rc;

	while (!interrupted && !output_should_stop(c->out)) {
		rc = pcap_dispatch(c->p, (int)c->batch_max, on_packet,
				   (u_char *)(void *)c);
		/* time-outs come due without packets too */
		advance_clock(c, 0);
		if (c->tcp)
			submit_records(c);
		flush_batch(c);
		if (rc >= 0)
			continue; /* 0: the timeout, to look at signals */
		if (rc == PCAP_ERROR_BREAK)
			break; /* pcap_breakloop(): a signal, or -n/-q */
		snprintf(err, errlen, "%s: %s", c->name, pcap_geterr(c->p));
		return -1;
	}
	return 0;
}

static int run_file(struct capture *c, char *err, size_t errlen)
{
	struct pcap_pkthdr fh, *h;
	const u_char *data;
	int rc;

	while (!interrupted && !output_should_stop(c->out)) {
		if (c->fr.on) {
			if (file_reader_next(&c->fr, &fh, &data)) {
				if (!c->have_prog ||
				    pcap_offline_filter(&c->prog, &fh, data))
					receive(c, &fh, data);
				continue;
			}
			if (file_reader_hand_over(c, err, errlen))
				return -1;
			continue;
		}
		rc = pcap_next_ex(c->p, &h, &data);
		if (rc == 1) {
			receive(c, h, data);
			continue;
		}
		if (rc == PCAP_ERROR_BREAK)
			break; /* the end of the file */
		snprintf(err, errlen,
			 "%s: %s capture after %llu "
			 "packets: %s",
			 c->name,
			 strstr(pcap_geterr(c->p), "truncated") ? "truncated" :
								  "bad",
			 (unsigned long long)c->st.frames, pcap_geterr(c->p));
		return -1;
	}
	return 0;
}

/* Where datagrams go, for capture_run() and capture_run_shared(). */
static void attach(struct capture *c, struct defrag *d, struct backlog *b,
		   struct output *out, struct pkt_pool *pool,
		   struct classifier *inline_k, unsigned int helpers)
{
	unsigned int max = c->o->backlog;

	c->defrag = d;
	c->backlog = b;
	c->out = out;
	c->inline_k = inline_k;
	c->helpers = inline_k ? helpers : 0;
	c->here = inline_k != NULL;
	c->cache.pool = pool;
	/* a batch never holds more than the backlog could */
	c->batch_max = max < CLASSIFY_BATCH ? max : CLASSIFY_BATCH;
	c->batch_t0 = now_ns();
	c->trial_every = TRIAL_FIRST;
}

/* What is left when reading ends: 0, 1 interrupted, -1 on @rc < 0. */
static int detach(struct capture *c, int rc)
{
	flush_batch(c);
	count_direct(c);
	if (c->inline_k)
		classifier_flush(c->inline_k);
	pkt_cache_flush(&c->cache);
	if (rc < 0)
		return -1;
	return interrupted ? 1 : 0;
}

int capture_run(struct capture *c, struct defrag *d, struct backlog *b,
		struct output *out, struct pkt_pool *pool,
		struct classifier *inline_k, unsigned int helpers, char *err,
		size_t errlen)
{
	int rc;

	attach(c, d, b, out, pool, inline_k, helpers);
	rc = c->live ? run_live(c, err, errlen) : run_file(c, err, errlen);
	if (c->tcp) {
		/* the flows left end with the capture (or at -n) */
		tcpstream_end_all(c->tcp);
		submit_records(c);
	}
	return detach(c, rc);
}

/* ---- -j threads sharing a file ------------------------------------------ */

bool capture_can_share(const struct capture *c)
{
	return c->fr.on;
}

/* Once libpcap reads the rest, the thread whose turn it is reads it all,
 * from @at, classifying each datagram at once, as -j 1 does. */
static void read_rest(struct capture *c, struct read_turn *t, off_t at)
{
	c->fr.at = at;
	c->fr.pos = 0;
	if (file_reader_hand_over(c, c->err, c->errlen)) {
		c->turns_rc = -1;
		return;
	}
	c->here = true;
	c->inline_k = t->k;
	c->turns_rc = run_file(c, c->err, c->errlen);
	count_direct(c);
	classifier_flush(t->k);
	c->inline_k = NULL;
	c->here = false;
}

/* The file offset of the @k-th megabyte. */
static off_t megabyte_at(uint64_t k)
{
	return PCAP_FILE_HDR + (off_t)k * READ_CHUNK;
}

/* Read @want more bytes to the chunk's end; false on a short read (the
 * file's end, for now). */
static bool read_on(struct file_reader *v, size_t want)
{
	off_t from = v->at + (off_t)v->have;
	size_t ask = from >= v->size		  ? 0 :
		     (off_t)want > v->size - from ? (size_t)(v->size - from) :
						    want;
	ssize_t n = 0;

	while (ask && (n = pread(v->fd, v->buf + v->have, ask, from)) < 0 &&
	       errno == EINTR)
		;
	if (n > 0)
		v->have += (size_t)n;
	if (n == (ssize_t)want)
		return true;
	v->eof = true;
	return false;
}

/*
 * Find the records that start in @t's megabyte, from @start (where the
 * last one of the megabyte before ended): @t->end is where the first one
 * past it starts, or @t->last where libpcap must read on (a record it
 * reads its own way, one cut short, or nothing more).  The last record
 * may run past the megabyte: the rest of it is read too.
 */
static void walk(struct read_turn *t, off_t start)
{
	struct file_reader *v = &t->view;
	struct pcap_pkthdr h;
	const u_char *data;
	size_t want;
	int rc;

	t->start = start;
	t->last = false;
	v->pos = (size_t)(start - v->at);
	while (v->pos < READ_CHUNK) {
		if (v->pos > v->have) {
			t->last = true; /* past the file's end */
			break;
		}
		rc = file_reader_record(v, &h, &data);
		if (rc > 0)
			continue;
		if (rc == 0 || v->eof) {
			t->last = true;
			break;
		}
		/* the header first, then the rest of the record */
		want = v->have - v->pos < PCAP_REC_HDR ?
			       v->pos + PCAP_REC_HDR - v->have :
			       v->pos + PCAP_REC_HDR +
				       rd32(v, v->buf + v->pos + 8) - v->have;
		if (!read_on(v, want)) {
			t->last = true;
			break;
		}
	}
	t->end = v->at + (off_t)v->pos;
	/* the file's end on a megabyte's: nothing is left to the threads */
	if (t->end >= v->size)
		t->last = true;
}

/*
 * @t's turn, all other threads' records before its own decoded: decode
 * its records as the one reader does (with c->turn set, each datagram
 * goes to @t's list), classifying them every CLASSIFY_TURN datagrams but
 * the last ones; then libpcap reads the rest if it must.  True when
 * reading is over.
 */
static bool decode_turn(struct capture *c, struct read_turn *t)
{
	struct file_reader *v = &t->view;
	struct pcap_pkthdr h;
	const u_char *data;
	bool over = false;

	v->pos = (size_t)(t->start - v->at);
	c->turn = t;
	while (v->at + (off_t)v->pos < t->end) {
		if (interrupted || output_should_stop(c->out)) {
			over = true;
			break;
		}
		if (t->n == CLASSIFY_TURN) {
			count_direct(c);
			classify_turn(t);
		}
		/* walk() found it whole and usual: never 0 or -1 */
		if (file_reader_record(v, &h, &data) <= 0)
			break;
		if (!c->have_prog || pcap_offline_filter(&c->prog, &h, data))
			receive(c, &h, data);
	}
	c->turn = NULL;
	count_direct(c);
	if (t->last && !over) {
		/* what libpcap reads is classified at once: the output stage
		 * may make it wait for what this thread decoded */
		classify_turn(t);
		read_rest(c, t, t->end);
		over = true;
	}
	return over;
}

/* The next megabyte into @t's chunk; false without memory for one. */
static bool read_megabyte(struct read_turn *t, uint64_t k)
{
	struct file_reader *v = &t->view;

	if (!t->chunk) {
		pthread_mutex_lock(&t->c->turn_mu);
		t->chunk = new_chunk(&t->c->fr);
		pthread_mutex_unlock(&t->c->turn_mu);
		if (!t->chunk)
			return false;
	}
	v->buf = t->chunk->buf;
	v->at = megabyte_at(k);
	v->have = 0;
	v->eof = false;
	read_on(v, READ_CHUNK);
	return true;
}

/* Under c->turn_mu: wake the thread of megabyte @k, whose walk or
 * decoding may start now (only it: with many threads, waking all of them
 * at every turn cost more than the turns). */
static void wake_turn(struct capture *c, uint64_t k)
{
	pthread_cond_signal(&c->holder[k % c->nturns]->cv);
}

/* Under c->turn_mu: reading is over, or what is left goes to libpcap. */
static void wake_all(struct capture *c)
{
	for (unsigned int i = 0; i < c->nturns; i++)
		pthread_cond_signal(&c->holder[i]->cv);
}

static void take_turns(struct read_turn *t)
{
	struct capture *c = t->c;
	uint64_t k;
	off_t start;
	bool read, over;

	pthread_mutex_lock(&c->turn_mu);
	while (!c->turns_over && !c->walk_end) {
		k = c->taken++;
		/* past the file's end: the thread before reads the rest */
		if (k && megabyte_at(k) >= t->view.size)
			break;
		c->holder[k % c->nturns] = t;
		pthread_mutex_unlock(&c->turn_mu);
		read = read_megabyte(t, k);
		pthread_mutex_lock(&c->turn_mu);
		while (c->walked < k && !c->walk_end && !c->turns_over)
			pthread_cond_wait(&t->cv, &c->turn_mu);
		if (c->walk_end || c->turns_over)
			break;
		start = c->walk_at;
		pthread_mutex_unlock(&c->turn_mu);
		if (read) {
			walk(t, start);
		} else {
			/* out of memory: libpcap reads on from here */
			t->start = t->end = start;
			t->last = true;
		}
		pthread_mutex_lock(&c->turn_mu);
		c->walked = k + 1;
		c->walk_at = t->end;
		c->walk_end = t->last;
		if (t->last)
			wake_all(c);
		else
			wake_turn(c, k + 1);
		while (c->decoded < k && !c->turns_over)
			pthread_cond_wait(&t->cv, &c->turn_mu);
		if (c->turns_over)
			break;
		pthread_mutex_unlock(&c->turn_mu);
		over = decode_turn(c, t);
		pthread_mutex_lock(&c->turn_mu);
		c->turns_over |= over;
		c->decoded = k + 1;
		if (over)
			wake_all(c);
		else
			wake_turn(c, k + 1);
		pthread_mutex_unlock(&c->turn_mu);
		classify_turn(t);
		pthread_mutex_lock(&c->turn_mu);
	}
	pthread_mutex_unlock(&c->turn_mu);
}

static void *turn_thread(void *arg)
{
	take_turns(arg);
	return NULL;
}

int capture_run_shared(struct capture *c, struct defrag *d, struct backlog *b,
		       struct output *out, struct pkt_pool *pool,
		       struct classifier *ks, unsigned int n, char *err,
		       size_t errlen)
{
	struct read_turn *turns = calloc(n, sizeof(*turns));
	unsigned int i, started = 1, ncv = 0;
	sigset_t sigs, old;
	struct stat st;
	int rc;

	c->holder = calloc(n, sizeof(*c->holder));
	while (turns && ncv < n && !pthread_cond_init(&turns[ncv].cv, NULL))
		ncv++;
	if (!turns || !c->holder || ncv < n || fstat(c->fr.fd, &st) ||
	    pthread_mutex_init(&c->turn_mu, NULL)) {
		/* one thread reads, as with -j 1 */
		rc = capture_run(c, d, b, out, pool, &ks[0], 0, err, errlen);
		goto out;
	}
	attach(c, d, b, out, pool, NULL, 0);
	c->err = err;
	c->errlen = errlen;
	c->walk_at = c->fr.at;
	c->nturns = n;
	for (i = 0; i < n; i++) {
		c->holder[i] = &turns[i];
		turns[i].c = c;
		turns[i].k = &ks[i];
		turns[i].view = c->fr;
		turns[i].view.size = st.st_size;
	}
	/* the chunk the file reader opened with is this thread's */
	turns[0].chunk = c->fr.chunk;
	/* SIGINT and SIGTERM interrupt this thread only, as with workers */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, &old);
	while (started < n && !pthread_create(&turns[started].thread, NULL,
					      turn_thread, &turns[started]))
		started++;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	take_turns(&turns[0]);
	for (i = 1; i < started; i++)
		pthread_join(turns[i].thread, NULL);
	pthread_mutex_destroy(&c->turn_mu);
	if (c->tcp) {
		/* the flows left end with the capture (or at -n) */
		tcpstream_end_all(c->tcp);
		submit_records(c);
	}
	rc = detach(c, c->turns_rc);
out:
	while (ncv)
		pthread_cond_destroy(&turns[--ncv].cv);
	free(turns);
	free(c->holder);
	c->holder = NULL;
	return rc;
}

/* ---- --write-flows: the second pass ------------------------------------- */

/* The first fragment of a matching flow's datagram: its later fragments
 * (without ports) are told by these. */
struct frag_id {
	int family;
	uint8_t src[16], dst[16];
	uint32_t id;
};

static bool frag_id_same(const struct frag_id *a, const struct pkt_meta *m,
			 uint32_t id)
{
	size_t al = m->family == 6 ? 16 : 4;

	return a->family == m->family && a->id == id &&
	       !memcmp(a->src, m->src, al) && !memcmp(a->dst, m->dst, al);
}

/* Whether the frame at @data belongs to a flow of @set; a first fragment
 * of one is remembered in @ids so that its other fragments follow. */
static bool frame_in_flows(int linktype, const struct pcap_pkthdr *h,
			   const u_char *data, const struct flow_keyset *set,
			   struct frag_id **ids, size_t *nids, size_t *capids)
{
	struct pkt_meta meta;
	struct ip_frag_info frag;
	struct sk_buff skb;
	unsigned int l3off, len;
	const char *why;
	struct flow_key k;
	int dir;
	size_t i;

	if (!pkt_decode_headers(linktype, data, h->caplen, &meta, &frag, &l3off,
				&why))
		return false;
	if (frag.is_fragment && frag.offset) {
		for (i = 0; i < *nids; i++)
			if (frag_id_same(&(*ids)[i], &meta, frag.id))
				return true;
		return false;
	}
	len = l3off + meta.net_len;
	if (len > h->caplen || len > 65535)
		return false;
	/* only read: the cast is for the buffer type */
	pkt_skb_wrap(&skb, (uint8_t *)(uintptr_t)data, len, l3off, meta.family,
		     0);
	pkt_decode_transport(&skb, &meta);
	if (!meta.has_transport || (meta.l4proto != 6 && meta.l4proto != 17))
		return false;
	flow_key_make(&k, meta.family, meta.l4proto, meta.src, meta.dst,
		      meta.sport, meta.dport, &dir);
	if (!flow_keyset_has(set, &k))
		return false;
	if (frag.is_fragment) {
		if (*nids == *capids) {
			size_t cap = *capids ? 2 * *capids : 16;
			struct frag_id *v = realloc(*ids, cap * sizeof(*v));

			if (!v)
				return true; /* its later fragments are lost */
			*ids = v;
			*capids = cap;
		}
		(*ids)[*nids] = (struct frag_id){ .family = meta.family,
						  .id = frag.id };
		memcpy((*ids)[*nids].src, meta.src, 16);
		memcpy((*ids)[*nids].dst, meta.dst, 16);
		(*nids)++;
	}
	return true;
}

int capture_write_flows(const struct tspkt_opts *o,
			const struct flow_keyset *set, uint64_t *written,
			char *err, size_t errlen)
{
	char ebuf[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline(o->read_file, ebuf);
	struct bpf_program prog;
	pcap_dumper_t *dumper;
	struct pcap_pkthdr *h;
	const u_char *data;
	struct frag_id *ids = NULL;
	size_t nids = 0, capids = 0;
	int rc;

	*written = 0;
	if (!p) {
		snprintf(err, errlen, "%s: %s", o->read_file, ebuf);
		return -1;
	}
	if (o->filter) {
		if (pcap_compile(p, &prog, o->filter, 1,
				 PCAP_NETMASK_UNKNOWN) ||
		    pcap_setfilter(p, &prog)) {
			snprintf(err, errlen, "%s: %s", o->filter,
				 pcap_geterr(p));
			pcap_close(p);
			return -1;
		}
		pcap_freecode(&prog);
	}
	dumper = pcap_dump_open(p, o->write_file);
	if (!dumper) {
		snprintf(err, errlen, "%s", pcap_geterr(p));
		pcap_close(p);
		return -1;
	}
	while ((rc = pcap_next_ex(p, &h, &data)) == 1) {
		if (frame_in_flows(pcap_datalink(p), h, data, set, &ids, &nids,
				   &capids)) {
			pcap_dump((u_char *)dumper, h, data);
			(*written)++;
		}
	}
	free(ids);
	rc = rc == PCAP_ERROR_BREAK ? 0 : -1;
	if (rc)
		snprintf(err, errlen, "%s: %s", o->read_file, pcap_geterr(p));
	if (pcap_dump_flush(dumper) || ferror(pcap_dump_file(dumper))) {
		snprintf(err, errlen, "%s: write error", o->write_file);
		rc = -1;
	}
	pcap_dump_close(dumper);
	pcap_close(p);
	return rc;
}

void capture_set_clock(struct capture *c, struct pkt_clock *clock)
{
	c->clock = clock;
}

void capture_set_streams(struct capture *c, struct tcpstream *tcp)
{
	c->tcp = tcp;
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
	if (c->have_prog)
		pcap_freecode(&c->prog);
	free_chunks(&c->fr);
	if (c->p)
		pcap_close(c->p);
	free(c);
}
