/*
 * test_tspkt_stream.c - tspkt following TCP streams, run as a user runs
 * it on captures built here.
 *
 * A string is cut at every byte position across 2 to 8 segments, which
 * arrive in order, reversed, shuffled, each twice, or with partly
 * overlapping retransmissions, from an initial sequence number just before
 * the 32-bit wrap or not, over IPv4 and IPv6: each flow's occurrence must
 * be reported exactly once, at its stream offset, with the frame whose
 * arrival made its bytes contiguous (computed here by replaying the
 * arrivals).  Then: --no-stream gives back the per-packet search (which
 * misses the cut strings), layer stream rules with from/to windows, a gap
 * left by a segment that never comes (no match spans it, offsets after it
 * stay true, a "gap" record), flow records with their reasons, and the
 * stream counters.
 *
 * Environment: BUILD (set by tests/run-tests.sh) locates $BUILD/bin/tspkt;
 * TSPKT_TEST_KEEP=1 keeps the temporary folder.
 */
#define _DEFAULT_SOURCE /* pcap.h uses the BSD u_char/u_int types; realpath */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pcap/pcap.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "child.h"
#include "decode.h"
#include "pcapgen.h"
#include "reasm.h"
#include "testsupport.h"

#define TS0_US 1796306400000000LL /* 2026-12-03T14:00:00Z */
#define TH_FIN 0x01
#define TH_SYN 0x02
#define TH_RST 0x04
#define TH_PSH 0x08
#define TH_ACK 0x10

static char tspkt_path[4096];
static char dir[4096];

static const char needle[] = "CROSS-SEGMENT-NEEDLE";
#define NLEN ((unsigned int)sizeof(needle) - 1)
#define AT 23u	   /* the needle's stream offset */
#define DLEN 61u   /* bytes per direction */
#define MAXSEG 16u /* with retransmissions */

/* ---- running tspkt ------------------------------------------------------- */

static void run_tspkt(struct child_result *r, char *const *args)
{
	char *argv[32];
	int n = 0;

	argv[n++] = tspkt_path;
	while (*args)
		argv[n++] = *args++;
	argv[n] = NULL;
	const struct child_spec spec = { .argv = argv,
					 .cwd = dir,
					 .capdir = dir };

	if (child_run(&spec, r))
		fail_msg("run tspkt: %s", strerror(errno));
	if (child_sanitizer_report(r->err))
		fail_msg("sanitizer report:\n%s", r->err);
	if (!WIFEXITED(r->status) || WEXITSTATUS(r->status) > 1)
		fail_msg("tspkt: status %d; stderr:\n%s", r->status, r->err);
}

/* The number after "key": in @line, or -1. */
static long long json_num(const char *line, const char *key)
{
	char k[64];
	const char *p;

	snprintf(k, sizeof(k), "\"%s\":", key);
	p = strstr(line, k);
	return p ? strtoll(p + strlen(k), NULL, 10) : -1;
}

/* The value of "key=" in the stderr line starting with "tspkt: what". */
static long long counter(const char *err, const char *what, const char *key)
{
	char head[64], k[64];
	const char *line, *p, *eol;

	snprintf(head, sizeof(head), "tspkt: %s", what);
	snprintf(k, sizeof(k), " %s=", key);
	line = strstr(err, head);
	if (!line)
		fail_msg("no '%s' line in:\n%s", head, err);
	eol = strchr(line, '\n');
	p = strstr(line, k);
	if (!p || (eol && p > eol))
		fail_msg("no %s= in '%s' line", key, what);
	return strtoll(p + strlen(k), NULL, 10);
}

/* A copy of the line of @text that holds @what (the test fails without
 * one). */
static char *line_with(const char *text, const char *what)
{
	const char *p = strstr(text, what), *b, *e;
	char *line;

	if (!p)
		fail_msg("no line with %s in:\n%s", what, text);
	for (b = p; b > text && b[-1] != '\n'; b--)
		;
	e = strchr(p, '\n');
	if (!e)
		e = p + strlen(p);
	line = strndup(b, (size_t)(e - b));
	assert_non_null(line);
	return line;
}

/* ---- Wireshark's reassembly ------------------------------------------------ */

#define MAX_FLOWS 256

/* One TCP conversation, in order of first appearance (tshark's stream
 * index), node 0 the sender of its first packet. */
struct follow {
	int family;
	uint8_t addr[2][16];
	uint16_t port[2];
	struct reasm_dir dir[2];
	struct test_buf got[2];
	unsigned int gaps;
};

struct follow_sink {
	struct follow *f;
	int node;
};

static int follow_data(void *opaque, uint64_t off, const uint8_t *p, size_t len)
{
	struct follow_sink *k = opaque;

	(void)off;
	test_buf_add(&k->f->got[k->node], p, len);
	return 0;
}

static int follow_gap(void *opaque, uint64_t off, uint64_t len)
{
	struct follow_sink *k = opaque;

	(void)off;
	(void)len;
	k->f->gaps++;
	return 0;
}

static int follow_end(void *opaque, uint64_t off)
{
	(void)opaque;
	(void)off;
	return 0;
}

/* Our reassembly (reasm.c, the bsd policy) of every TCP conversation of
 * @path, read with libpcap and decoded by tspkt's decoder. */
static unsigned int our_follow(const char *path, struct follow *fl)
{
	char ebuf[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline(path, ebuf);
	struct pcap_pkthdr *h;
	const u_char *data;
	struct reasm_ctx ctx;
	unsigned int n = 0;

	if (!p)
		fail_msg("%s: %s", path, ebuf);
	reasm_ctx_init(&ctx, NULL);
	while (pcap_next_ex(p, &h, &data) == 1) {
		struct pkt_meta meta;
		struct ip_frag_info frag;
		struct sk_buff skb;
		unsigned int l3off, i;
		const char *why;
		uint8_t th[20];
		const uint8_t *t;
		int node = -1;

		if (!pkt_decode_headers(pcap_datalink(p), data, h->caplen,
					&meta, &frag, &l3off, &why) ||
		    frag.is_fragment || meta.l4proto != IPPROTO_TCP)
			continue;
		pkt_skb_wrap(&skb, (uint8_t *)(uintptr_t)data,
			     l3off + meta.net_len, l3off, meta.family, 0);
		pkt_decode_transport(&skb, &meta);
		if (!meta.has_transport)
			continue;
		t = skb_header_pointer(&skb, skb_transport_offset(&skb),
				       sizeof(th), th);
		assert_non_null(t);
		for (i = 0; i < n && node < 0; i++) {
			struct follow *f = &fl[i];
			size_t al = f->family == 6 ? 16 : 4;

			if (f->family != meta.family)
				continue;
			for (int d = 0; d < 2; d++)
				if (!memcmp(f->addr[d], meta.src, al) &&
				    !memcmp(f->addr[!d], meta.dst, al) &&
				    f->port[d] == meta.sport &&
				    f->port[!d] == meta.dport)
					node = d;
			if (node >= 0)
				break;
		}
		if (node < 0) {
			assert_true(n < MAX_FLOWS);
			i = n++;
			memset(&fl[i], 0, sizeof(fl[i]));
			fl[i].family = meta.family;
			memcpy(fl[i].addr[0], meta.src, 16);
			memcpy(fl[i].addr[1], meta.dst, 16);
			fl[i].port[0] = meta.sport;
			fl[i].port[1] = meta.dport;
			reasm_dir_init(&fl[i].dir[0]);
			reasm_dir_init(&fl[i].dir[1]);
			node = 0;
		}
		{
			struct follow_sink k = { &fl[i], node };
			const struct reasm_consumer c = { follow_data,
							  follow_gap,
							  follow_end, &k };
			uint32_t seq = (uint32_t)t[4] << 24 |
				       (uint32_t)t[5] << 16 |
				       (uint32_t)t[6] << 8 | t[7];
			unsigned int plen = meta.net_len - meta.payload_off;

			reasm_add(&ctx, &fl[i].dir[node], &c, seq,
				  skb.data + meta.payload_off, plen, t[13]);
		}
	}
	pcap_close(p);
	for (unsigned int i = 0; i < n; i++)
		for (int d = 0; d < 2; d++) {
			struct follow_sink k = { &fl[i], d };
			const struct reasm_consumer c = { follow_data,
							  follow_gap,
							  follow_end, &k };

			reasm_close(&ctx, &fl[i].dir[d], &c);
			reasm_dir_free(&ctx, &fl[i].dir[d]);
		}
	return n;
}

static int hexval(int c)
{
	return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

/* tshark -z follow,tcp,raw for streams 0..@n-1 of @path, compared with
 * our reassembly of each direction, byte for byte. */
static void same_as_tshark(const char *path)
{
	static struct follow fl[MAX_FLOWS];
	unsigned int n = our_follow(path, fl), i, compared = 0;
	size_t bytes = 0;
	char *argv[2 * MAX_FLOWS + 8], (*z)[40] = calloc(MAX_FLOWS, 40);
	struct child_result r;
	const char *blk;
	int a = 0;

	assert_non_null(z);
	argv[a++] = "tshark";
	argv[a++] = "-r";
	argv[a++] = (char *)path;
	argv[a++] = "-q";
	for (i = 0; i < n; i++) {
		snprintf(z[i], sizeof(z[i]), "follow,tcp,raw,%u", i);
		argv[a++] = "-z";
		argv[a++] = z[i];
	}
	argv[a] = NULL;
	{
		const struct child_spec spec = { .argv = argv,
						 .cwd = dir,
						 .capdir = dir };

		if (child_run(&spec, &r))
			fail_msg("run tshark: %s", strerror(errno));
	}
	if (!WIFEXITED(r.status) || WEXITSTATUS(r.status))
		fail_msg("tshark (Debian's tshark is needed): status %d\n%s",
			 r.status, r.err);
	for (blk = strstr(r.out, "Filter: tcp.stream eq "); blk;
	     blk = strstr(blk + 1, "Filter: tcp.stream eq ")) {
		unsigned int idx = (unsigned int)strtoul(blk + 22, NULL, 10);
		const char *end = strstr(blk, "\n====");
		const char *line = strstr(blk, "Node 1:");
		struct test_buf want[2] = { { 0 }, { 0 } };

		assert_non_null(end);
		assert_non_null(line);
		assert_true(idx < n);
		line = strchr(line, '\n') + 1;
		while (line < end) {
			int node = *line == '\t';
			const char *q = line + node;

			for (; q + 1 < end && q[0] != '\n'; q += 2) {
				uint8_t b = (uint8_t)(hexval(q[0]) << 4 |
						      hexval(q[1]));

				test_buf_add(&want[node], &b, 1);
			}
			line = q + 1;
		}
		for (int d = 0; d < 2; d++) {
			if (want[d].len != fl[idx].got[d].len ||
			    memcmp(want[d].p ? want[d].p : "",
				   fl[idx].got[d].p ? fl[idx].got[d].p : "",
				   want[d].len))
				fail_msg("%s: stream %u node %d: tshark %zu "
					 "bytes, ours %zu",
					 path, idx, d, want[d].len,
					 fl[idx].got[d].len);
			bytes += want[d].len;
			free(want[d].p);
		}
		assert_int_equal(fl[idx].gaps, 0);
		compared++;
	}
	assert_int_equal(compared, n);
	assert_true(n > 0 && bytes > 0);
	print_message("# %s: %u TCP streams, %zu bytes as tshark's\n",
		      strrchr(path, '/') + 1, n, bytes);
	for (i = 0; i < n; i++) {
		free(fl[i].got[0].p);
		free(fl[i].got[1].p);
	}
	free(z);
	child_result_free(&r);
}

/* ---- building flows -------------------------------------------------------- */

struct seg {
	unsigned int from, to; /* stream bytes [from, to) */
};

struct capture {
	struct pg_writer *w;
	int64_t t_us;
	uint64_t frame;
};

static void put(struct capture *c, const struct pg_flow *f, const void *data,
		unsigned int len)
{
	struct pg_frame *fr = malloc(sizeof(*fr));

	assert_non_null(fr);
	pg_build(fr, f, data, len);
	pg_write(c->w, fr, c->t_us, 0);
	c->t_us += 10;
	c->frame++;
	free(fr);
}

/* A capture @name in the test's folder (its path in @cap), opened with
 * the SYN of client @cli from port @sport to 80, ISN @isn; the data
 * segments that follow have PSH|ACK. */
static void open_with_syn(struct capture *c, const char *name, char *cap,
			  size_t capsz, struct pg_flow *cli, uint16_t sport,
			  uint32_t isn)
{
	snprintf(cap, capsz, "%s/%s", dir, name);
	*c = (struct capture){ .t_us = TS0_US };
	c->w = pg_open(cap, 0);
	assert_non_null(c->w);
	cli->sport = sport;
	cli->dport = 80;
	cli->tcp_seq = isn;
	cli->tcp_flags = TH_SYN;
	put(c, cli, NULL, 0);
	cli->tcp_flags = TH_PSH | TH_ACK;
}

/* The absolute path of samples/@name (TSPKT_SAMPLES overrides the
 * folder), as tshark runs elsewhere. */
static void sample_path(const char *name, char *abs)
{
	const char *src = getenv("TSPKT_SAMPLES");
	char rel[4096];

	snprintf(rel, sizeof(rel), "%s/%s", src ? src : "samples", name);
	if (!realpath(rel, abs))
		fail_msg("%s: %s", rel, strerror(errno));
}

static uint64_t rng = 0x5eed;

static unsigned int below(unsigned int n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned int)(rng % n);
}

enum order { IN_ORDER, REVERSED, SHUFFLED, TWICE, OVERLAPPING, NORDERS };
static const char *const order_name[] = { "in order", "reversed", "shuffled",
					  "each twice", "overlapping" };

/*
 * One flow (ports @sport -> 80) carrying @data with the needle cut at
 * needle byte @cut, in @nseg segments sent in @ord, from ISN @isn; returns
 * the frame that completes the needle's bytes.
 */
static uint64_t one_flow(struct capture *c, int family, uint16_t sport,
			 uint32_t isn, const uint8_t *data, unsigned int cut,
			 unsigned int nseg, enum order ord)
{
	struct pg_flow cli = family == 4 ? pg_flow_tcp4 : pg_flow_tcp6;
	struct pg_flow srv = cli;
	struct seg segs[MAXSEG], sent[2 * MAXSEG];
	unsigned int bounds[MAXSEG + 1], nb = 0, nsent = 0, i, j;
	bool have[DLEN] = { false };
	uint64_t done_frame = 0;

	cli.sport = sport;
	cli.dport = 80;
	srv.src = cli.dst;
	srv.dst = cli.src;
	srv.sport = 80;
	srv.dport = sport;
	/* cuts: the needle's, the rest random and distinct */
	bounds[nb++] = AT + cut;
	while (nb < nseg - 1) {
		unsigned int b = 1 + below(DLEN - 1);

		for (j = 0; j < nb && bounds[j] != b; j++)
			;
		if (j == nb)
			bounds[nb++] = b;
	}
	bounds[nb++] = 0;
	bounds[nb++] = DLEN;
	for (i = 0; i < nb; i++)
		for (j = i + 1; j < nb; j++)
			if (bounds[j] < bounds[i]) {
				unsigned int t = bounds[i];

				bounds[i] = bounds[j];
				bounds[j] = t;
			}
	for (i = 0; i + 1 < nb; i++)
		segs[i] = (struct seg){ bounds[i], bounds[i + 1] };
	nseg = nb - 1;
	switch (ord) {
	case IN_ORDER:
		for (i = 0; i < nseg; i++)
			sent[nsent++] = segs[i];
		break;
	case REVERSED:
		for (i = nseg; i-- > 0;)
			sent[nsent++] = segs[i];
		break;
	case SHUFFLED:
		for (i = 0; i < nseg; i++)
			sent[nsent++] = segs[i];
		for (i = nsent; i > 1; i--) {
			struct seg t;

			j = below(i);
			t = sent[i - 1];
			sent[i - 1] = sent[j];
			sent[j] = t;
		}
		break;
	case TWICE:
		for (i = 0; i < nseg; i++) {
			sent[nsent++] = segs[i];
			sent[nsent++] = segs[i];
		}
		break;
	default: /* OVERLAPPING: each retransmitted wider, the same bytes */
		for (i = 0; i < nseg; i++) {
			struct seg wide = segs[i];

			sent[nsent++] = segs[i];
			wide.from = wide.from > 3 ? wide.from - 3 : 0;
			wide.to = wide.to + 2 < DLEN ? wide.to + 2 : DLEN;
			sent[nsent++] = wide;
		}
		break;
	}
	cli.tcp_seq = isn;
	cli.tcp_flags = TH_SYN;
	put(c, &cli, NULL, 0);
	srv.tcp_seq = 5000;
	srv.tcp_flags = TH_SYN | TH_ACK;
	put(c, &srv, NULL, 0);
	for (i = 0; i < nsent; i++) {
		unsigned int k, contiguous = 0;

		cli.tcp_seq = isn + 1 + sent[i].from;
		cli.tcp_flags = TH_PSH | TH_ACK;
		put(c, &cli, data + sent[i].from, sent[i].to - sent[i].from);
		for (k = sent[i].from; k < sent[i].to; k++)
			have[k] = true;
		while (contiguous < DLEN && have[contiguous])
			contiguous++;
		if (!done_frame && contiguous >= AT + NLEN)
			done_frame = c->frame;
	}
	cli.tcp_seq = isn + 1 + DLEN;
	cli.tcp_flags = TH_FIN | TH_ACK;
	put(c, &cli, NULL, 0);
	srv.tcp_seq = 5001;
	srv.tcp_flags = TH_FIN | TH_ACK;
	put(c, &srv, NULL, 0);
	return done_frame;
}

static void make_data(uint8_t *data)
{
	for (unsigned int i = 0; i < DLEN; i++)
		data[i] = (uint8_t)('a' + i % 26);
	memcpy(data + AT, needle, NLEN);
}

/*
 * Every cut of the needle across 2 to 8 segments in @ord over @family,
 * from an ISN just before the wrap or not: one flow each, one tspkt run.
 */
static void cuts_in(int family, enum order ord, bool wrap)
{
	char cap[4200];
	struct capture c = { .t_us = TS0_US };
	uint8_t data[DLEN];
	uint64_t want[NLEN * 8];
	unsigned int nflows = 0, cut, nseg;
	struct child_result r;
	const char *line;
	unsigned int found = 0;
	bool *seen;

	make_data(data);
	snprintf(cap, sizeof(cap), "%s/cuts.pcap", dir);
	c.w = pg_open(cap, 0);
	assert_non_null(c.w);
	for (cut = 1; cut < NLEN; cut++)
		for (nseg = 2; nseg <= 8; nseg++) {
			/* the wrap falls inside the needle's bytes */
			uint32_t isn = wrap ? (uint32_t)(0 - (AT + cut)) - 1 :
					      1000u * (nflows + 1);

			want[nflows] = one_flow(&c, family,
						(uint16_t)(20000 + nflows), isn,
						data, cut, nseg, ord);
			nflows++;
		}
	pg_close(c.w);
	char *args[] = { "--json", "-r", "cuts.pcap", (char *)needle, NULL };
	run_tspkt(&r, args);
	seen = calloc(nflows, sizeof(*seen));
	assert_non_null(seen);
	for (line = r.out; *line; line = strchr(line, '\n') + 1) {
		long long sport, off, frame;
		unsigned int k;

		if (strncmp(line, "{\"type\":\"match\"", 15))
			continue;
		sport = json_num(line, "sport");
		off = json_num(line, "offset");
		frame = json_num(line, "frame");
		if (!strstr(line, "\"layer\":\"stream\""))
			fail_msg("%s, %s: not a stream match: %.200s",
				 order_name[ord], wrap ? "wrap" : "no wrap",
				 line);
		k = (unsigned int)(sport - 20000);
		if (sport < 20000 || k >= nflows)
			fail_msg("match on an unknown flow: %.200s", line);
		if (seen[k])
			fail_msg("%s: flow %u reported twice", order_name[ord],
				 k);
		seen[k] = true;
		found++;
		if (off != AT)
			fail_msg("%s, %s, flow %u (cut %u, %u segments): "
				 "offset %lld, expected %u",
				 order_name[ord], wrap ? "wrap" : "no wrap", k,
				 1 + k / 7, 2 + k % 7, off, AT);
		if ((uint64_t)frame != want[k])
			fail_msg("%s, %s, flow %u (cut %u, %u segments): "
				 "frame %lld, expected %llu",
				 order_name[ord], wrap ? "wrap" : "no wrap", k,
				 1 + k / 7, 2 + k % 7, frame,
				 (unsigned long long)want[k]);
	}
	if (found != nflows)
		fail_msg("IPv%d %s %s: %u of %u flows reported; stderr:\n%s",
			 family, order_name[ord], wrap ? "wrap" : "no wrap",
			 found, nflows, r.err);
	assert_int_equal(counter(r.err, "streams:", "matches"), nflows);
	assert_int_equal(counter(r.err, "flows:", "fin"), nflows);
	if (ord == TWICE)
		assert_true(counter(r.err, "streams:", "duplicates") > 0);
	if (ord == OVERLAPPING)
		assert_true(counter(r.err, "streams:", "overlaps") > 0);
	assert_int_equal(counter(r.err, "streams:", "overlaps-different"), 0);
	assert_int_equal(counter(r.err, "streams:", "gaps"), 0);
	free(seen);
	child_result_free(&r);
	/* the same bytes as Wireshark's reassembly */
	same_as_tshark(cap);
}

static void every_cut(void **unused)
{
	(void)unused;
	for (int family = 4; family <= 6; family += 2)
		for (int ord = 0; ord < NORDERS; ord++)
			for (int wrap = 0; wrap < 2; wrap++)
				cuts_in(family, (enum order)ord, wrap);
}

/*
 * -j 2 and more share reading a file: each thread reads its own megabytes
 * and classifies what it read, while the streams see every frame in file
 * order.  On a capture of 3.5 MB (needles cut across segments in every
 * order, bulk flows left open to the end, one needle across two of their
 * segments now and then), every -j prints exactly what -j 1 prints, on
 * stdout and stderr.
 */
static void shared_reading(void **unused)
{
	static char *const jobs[] = { "1", "2", "3", "4" };
	char cap[4200];
	struct capture c;
	struct child_result ref, r;
	uint8_t data[DLEN], big[1400];
	unsigned int i, k, bulk_hits = 0;
	size_t j;

	(void)unused;
	make_data(data);
	snprintf(cap, sizeof(cap), "%s/shared.pcap", dir);
	c = (struct capture){ .t_us = TS0_US };
	c.w = pg_open(cap, 0);
	assert_non_null(c.w);
	for (i = 0; i < 60; i++) {
		struct pg_flow bulk = i % 2 ? pg_flow_tcp4 : pg_flow_tcp6;
		const bool hit = i % 7 == 0;

		one_flow(&c, i % 2 ? 4 : 6, (uint16_t)(20000 + i),
			 1000u * (i + 1), data, 1 + i % (NLEN - 1), 2 + i % 7,
			 (enum order)(i % NORDERS));
		bulk.sport = (uint16_t)(30000 + i);
		bulk.dport = 80;
		bulk.tcp_seq = 77;
		bulk.tcp_flags = TH_SYN;
		put(&c, &bulk, NULL, 0);
		bulk.tcp_flags = TH_PSH | TH_ACK;
		for (k = 0; k < 40; k++) {
			memset(big, 'x', sizeof(big));
			if (hit && k == 20)
				memcpy(big + sizeof(big) - 5, needle, 5);
			if (hit && k == 21)
				memcpy(big, needle + 5, NLEN - 5);
			bulk.tcp_seq = 78 + k * (uint32_t)sizeof(big);
			put(&c, &bulk, big, sizeof(big));
		}
		bulk_hits += hit;
	}
	pg_close(c.w);
	for (j = 0; j < sizeof(jobs) / sizeof(*jobs); j++) {
		char *args[] = { "--json",	"-j",		jobs[j], "-r",
				 "shared.pcap", (char *)needle, NULL };

		run_tspkt(j ? &r : &ref, args);
		if (!j) {
			assert_int_equal(counter(ref.err,
						 "streams:", "matches"),
					 60 + bulk_hits);
			assert_int_equal(counter(ref.err,
						 "flows:", "end-of-capture"),
					 60);
			continue;
		}
		assert_int_equal(r.status, ref.status);
		assert_string_equal(r.out, ref.out);
		assert_string_equal(r.err, ref.err);
		child_result_free(&r);
	}
	child_result_free(&ref);
}

/* --no-stream: today's per-packet search, which cannot see a string cut
 * between segments; a string inside one segment is still found. */
static void no_stream_is_per_packet(void **unused)
{
	struct capture c = { .t_us = TS0_US };
	uint8_t data[DLEN];
	struct child_result r;
	char cap[4200];

	(void)unused;
	make_data(data);
	snprintf(cap, sizeof(cap), "%s/one.pcap", dir);
	c.w = pg_open(cap, 0);
	assert_non_null(c.w);
	one_flow(&c, 4, 30000, 77, data, 5, 2, IN_ORDER);
	pg_close(c.w);
	char *a1[] = { "--no-stream", "-r", "one.pcap", (char *)needle, NULL };
	run_tspkt(&r, a1);
	assert_int_equal(WEXITSTATUS(r.status), 1);
	assert_string_equal(r.out, "");
	assert_null(strstr(r.err, "streams:"));
	child_result_free(&r);
	char *a2[] = { "--no-stream", "-r", "one.pcap", "NEEDLE", NULL };
	run_tspkt(&r, a2);
	assert_int_equal(WEXITSTATUS(r.status), 0);
	assert_non_null(strstr(r.out, " match offset="));
	child_result_free(&r);
	char *a3[] = { "-r", "one.pcap", (char *)needle, NULL };
	run_tspkt(&r, a3);
	assert_int_equal(WEXITSTATUS(r.status), 0);
	assert_non_null(strstr(r.out, " match stream-offset=23 "));
	child_result_free(&r);
}

/* Rules of layer stream: a window of stream offsets; several rules over
 * one pattern; each occurrence of a repeated string once. */
static void stream_rules(void **unused)
{
	struct capture c;
	struct pg_flow cli = pg_flow_tcp4;
	static const char text[] = "abcABCabcABCabc";
	struct child_result r;
	char cap[4200];

	(void)unused;
	open_with_syn(&c, "rules.pcap", cap, sizeof(cap), &cli, 40000, 100);
	/* "abcABCa" + "bcABCabc": every "abc" at 0, 6, 12 */
	cli.tcp_seq = 101;
	put(&c, &cli, text, 7);
	cli.tcp_seq = 108;
	put(&c, &cli, text + 7, 8);
	pg_close(c.w);
	char *args[] = { "--json",
			 "-r",
			 "rules.pcap",
			 "-e",
			 "class all string abc layer stream",
			 "-e",
			 "class late string abc layer stream from 5",
			 "-e",
			 "class early string abc layer stream to 9",
			 "-e",
			 "class ci string ABC layer stream icase from 1 to 7",
			 NULL };
	run_tspkt(&r, args);
	/* frame 2 completes abc@0 (all, early) and ABC@3 (ci: in [1,7));
	 * frame 3 completes abc@6 (all, late, early? 6+3=9 <= 9 yes),
	 * abc@12 (all, late), and ABC@9 (ci: past 7, no) */
	{
		char *l2 = line_with(r.out, "\"frame\":2,");
		char *l3 = line_with(r.out, "\"frame\":3,");

		assert_non_null(strstr(l2, "\"class\":\"all\",\"layer\":"
					   "\"stream\",\"invert\":false,"
					   "\"offset\":0}"));
		assert_non_null(strstr(l2, "\"class\":\"early\",\"layer\":"
					   "\"stream\",\"invert\":false,"
					   "\"offset\":0}"));
		assert_non_null(strstr(l2, "\"class\":\"ci\",\"layer\":"
					   "\"stream\",\"invert\":false,"
					   "\"offset\":3}"));
		assert_null(strstr(l2, "\"late\""));
		assert_non_null(strstr(l3,
				       "\"class\":\"all\",\"layer\":"
				       "\"stream\",\"invert\":false,"
				       "\"offset\":6},{\"rule\":1,\"class\":"
				       "\"all\",\"layer\":\"stream\","
				       "\"invert\":false,\"offset\":12}"));
		assert_non_null(strstr(l3, "\"class\":\"late\",\"layer\":"
					   "\"stream\",\"invert\":false,"
					   "\"offset\":6}"));
		assert_non_null(strstr(l3, "\"class\":\"early\",\"layer\":"
					   "\"stream\",\"invert\":false,"
					   "\"offset\":6}"));
		assert_null(strstr(l3, "\"ci\""));
		free(l2);
		free(l3);
	}
	assert_int_equal(counter(r.err, "streams:", "matches"), 8);
	assert_non_null(strstr(r.err, "tspkt: class all: 2\n"));
	assert_non_null(strstr(r.err, "tspkt: class ci: 1\n"));
	child_result_free(&r);
	/* an inverted stream rule is refused with a reason */
	char *bad[] = { "-r", "rules.pcap", "-e", "! string abc layer stream",
			NULL };
	struct child_spec spec = { .argv = NULL, .cwd = dir, .capdir = dir };
	char *argv[8] = { tspkt_path };

	for (int i = 0; bad[i]; i++)
		argv[i + 1] = bad[i];
	spec.argv = argv;
	assert_int_equal(child_run(&spec, &r), 0);
	assert_int_equal(WEXITSTATUS(r.status), 2);
	assert_non_null(strstr(r.err, "layer stream"));
	child_result_free(&r);
}

/* A segment that never comes: once the capture ends (or the hole times
 * out) its bytes are a gap; the needle around it is never reported, the
 * one after it is, at its true offset, and --json prints the gap and the
 * flow's end. */
static void gaps(void **unused)
{
	struct capture c;
	struct pg_flow cli = pg_flow_tcp6, srv = pg_flow_tcp6;
	uint8_t data[200];
	struct child_result r;
	char cap[4200];

	(void)unused;
	memset(data, '.', sizeof(data));
	memcpy(data + 10, needle, NLEN);  /* spans the gap [15, 40) */
	memcpy(data + 100, needle, NLEN); /* after it */
	open_with_syn(&c, "gap.pcap", cap, sizeof(cap), &cli, 41000, 999);
	srv.src = cli.dst;
	srv.dst = cli.src;
	srv.sport = 80;
	srv.dport = 41000;
	cli.tcp_seq = 1000;
	put(&c, &cli, data, 15);
	cli.tcp_seq = 1000 + 40;
	put(&c, &cli, data + 40, 160);
	/* an hour later: the hole has timed out long before */
	c.t_us += 3600LL * 1000000;
	srv.tcp_seq = 1;
	srv.tcp_flags = TH_RST;
	put(&c, &srv, NULL, 0);
	pg_close(c.w);
	char *args[] = { "--json", "-r", "gap.pcap", (char *)needle, NULL };
	run_tspkt(&r, args);
	assert_non_null(strstr(r.out, "{\"type\":\"gap\""));
	assert_int_equal(json_num(strstr(r.out, "{\"type\":\"gap\""), "offset"),
			 15);
	assert_int_equal(json_num(strstr(r.out, "{\"type\":\"gap\""), "length"),
			 25);
	{
		const char *m = strstr(r.out, "{\"type\":\"match\"");

		assert_non_null(m);
		assert_int_equal(json_num(m, "offset"), 100);
		assert_null(strstr(m + 1, "{\"type\":\"match\""));
	}
	assert_non_null(strstr(r.out, "{\"type\":\"flow\""));
	assert_int_equal(counter(r.err, "streams:", "gaps"), 1);
	assert_int_equal(counter(r.err, "streams:", "gap-bytes"), 25);
	assert_int_equal(counter(r.err, "streams:", "matches"), 1);
	child_result_free(&r);
}

/* samples/: real captures on lo (HTTP over IPv4 and IPv6, and a request
 * whose header the client wrote in three pieces). */
static void samples_as_tshark(void **unused)
{
	static const char *const names[] = { "http.pcap", "http-split.pcap" };

	(void)unused;
	for (unsigned int i = 0; i < 2; i++) {
		char abs[PATH_MAX];

		sample_path(names[i], abs);
		same_as_tshark(abs);
	}
}

/* --stream-depth: past it a direction is not searched as a stream, and
 * the lone PATTERN searches its datagrams on their own again, so a string
 * there is still found (per datagram); --stream-memcap: out-of-order data
 * past it is dropped and counted (the string it held is then lost). */
static void depth_and_memcap(void **unused)
{
	struct capture c;
	struct pg_flow cli = pg_flow_tcp4;
	static uint8_t data[3000];
	struct child_result r;
	char cap[4200];

	(void)unused;
	memset(data, '-', sizeof(data));
	memcpy(data + 100, needle, NLEN);  /* within 1 KiB */
	memcpy(data + 2500, needle, NLEN); /* past it, inside a segment */
	open_with_syn(&c, "depth.pcap", cap, sizeof(cap), &cli, 42000, 0);
	for (unsigned int off = 0; off < sizeof(data); off += 1000) {
		cli.tcp_seq = 1 + off;
		put(&c, &cli, data + off, 1000);
	}
	pg_close(c.w);
	char *a1[] = { "--stream-depth", "1K",		 "-r",
		       "depth.pcap",	 (char *)needle, NULL };
	run_tspkt(&r, a1);
	assert_non_null(strstr(r.out, " match stream-offset=100 "));
	assert_non_null(strstr(r.out, " match offset=500 ")); /* 2500-2000 */
	assert_int_equal(counter(r.err, "streams:", "depth-reached"), 1);
	assert_int_equal(counter(r.err, "streams:", "matches"), 1);
	child_result_free(&r);

	/* out of order past a 1 KiB memcap: the last segments are dropped */
	open_with_syn(&c, "depth.pcap", cap, sizeof(cap), &cli, 42000, 0);
	for (int off = 2000; off >= 0; off -= 1000) {
		cli.tcp_seq = 1 + (uint32_t)off;
		put(&c, &cli, data + off, 1000);
	}
	pg_close(c.w);
	char *a2[] = { "--stream-memcap", "1K",		  "-r",
		       "depth.pcap",	  (char *)needle, NULL };
	run_tspkt(&r, a2);
	/* the first two came early and did not fit; the third is in order */
	assert_int_equal(counter(r.err, "streams:", "memcap-drops"), 2);
	assert_non_null(strstr(r.out, " match stream-offset=100 "));
	assert_null(strstr(r.out, "2500"));
	child_result_free(&r);
	/* a bad size is refused with a reason */
	char *a3[] = {
		"--stream-memcap", "lots", "-r", "depth.pcap", "x", NULL
	};
	{
		char *argv[8] = { tspkt_path };
		struct child_spec spec = { .argv = argv,
					   .cwd = dir,
					   .capdir = dir };

		for (int i = 0; a3[i]; i++)
			argv[i + 1] = a3[i];
		assert_int_equal(child_run(&spec, &r), 0);
		assert_int_equal(WEXITSTATUS(r.status), 2);
		assert_non_null(strstr(r.err, "bad --stream-memcap 'lots'"));
		child_result_free(&r);
	}
}

/* Ports of every frame of @path, in order, into @ports (IPv4 TCP/UDP
 * over Ethernet, as pcapgen writes them); returns how many. */
static unsigned int frame_ports(const char *path, uint16_t *ports,
				unsigned int max)
{
	char ebuf[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline(path, ebuf);
	struct pcap_pkthdr *h;
	const u_char *d;
	unsigned int n = 0;

	if (!p)
		fail_msg("%s: %s", path, ebuf);
	while (pcap_next_ex(p, &h, &d) == 1 && n < max) {
		unsigned int ihl = (d[14] & 15u) * 4;
		bool later = ((d[14 + 6] & 0x1f) << 8 | d[14 + 7]) != 0;

		/* a later fragment has no ports: 0 */
		ports[n++] =
			later ? 0 :
				(uint16_t)(d[14 + ihl] << 8 | d[14 + ihl + 1]);
	}
	pcap_close(p);
	return n;
}

/* -w --write-flows: every frame of each flow that matched, both ways,
 * before the match too, IP fragments included, none of the others. */
static void write_flows(void **unused)
{
	struct capture c = { .t_us = TS0_US };
	struct pg_flow a = pg_flow_tcp4, b = pg_flow_tcp4, u = pg_flow_udp4;
	struct pg_frame *fr = malloc(4 * sizeof(*fr));
	static uint8_t big[2000];
	const unsigned int cuts[] = { 1000 };
	uint16_t ports[64];
	struct child_result r;
	char cap[4200], out[4200];
	unsigned int n, i, na = 0, nu = 0, nfrag = 0;

	(void)unused;
	assert_non_null(fr);
	snprintf(cap, sizeof(cap), "%s/flows.pcap", dir);
	snprintf(out, sizeof(out), "%s/flows-out.pcap", dir);
	c.w = pg_open(cap, 0);
	assert_non_null(c.w);
	a.sport = 50001, b.sport = 50002, u.sport = 50003;
	/* a: handshake, two data segments, the needle cut across them */
	a.tcp_flags = TH_SYN;
	a.tcp_seq = 10;
	put(&c, &a, NULL, 0);
	b.tcp_flags = TH_SYN;
	b.tcp_seq = 20;
	put(&c, &b, NULL, 0);
	a.tcp_flags = TH_PSH | TH_ACK;
	a.tcp_seq = 11;
	put(&c, &a, "hello CROSS-SEG", 15);
	b.tcp_flags = TH_PSH | TH_ACK;
	b.tcp_seq = 21;
	put(&c, &b, "nothing here", 12);
	a.tcp_seq = 26;
	put(&c, &a, "MENT-NEEDLE bye", 15);
	/* u: a datagram in two fragments, the needle in the second */
	memset(big, 'u', sizeof(big));
	memcpy(big + 1500, needle, NLEN);
	n = pg_build_fragments(fr, &u, big, sizeof(big), cuts, 1, 77);
	for (i = 0; i < n; i++) {
		pg_write(c.w, &fr[i], c.t_us, 0);
		c.t_us += 10;
		c.frame++;
	}
	u.sport = 50003;
	put(&c, &u, "after", 5); /* the same flow, later */
	put(&c, &b, "still nothing", 13);
	pg_close(c.w);
	char *args[] = { "-w", out,	     "--write-flows",
			 "-r", "flows.pcap", (char *)needle,
			 NULL };
	run_tspkt(&r, args);
	assert_int_equal(WEXITSTATUS(r.status), 0);
	assert_non_null(
		strstr(r.err, "tspkt: write-flows: flows=2 frames=6\n"));
	child_result_free(&r);
	n = frame_ports(out, ports, 64);
	assert_int_equal(n, 6);
	for (i = 0; i < n; i++) {
		if (ports[i] == 50001)
			na++;
		else if (ports[i] == 50003)
			nu++;
		else if (ports[i] == 0)
			nfrag++;
		else
			fail_msg("frame %u of another flow (port %u)", i,
				 ports[i]);
	}
	assert_int_equal(na, 3);
	assert_int_equal(nu, 2);
	assert_int_equal(nfrag, 1);
	free(fr);
}

/* UDP conversations are flows too: a record each at the end (samples/:
 * DNS, and two datagrams sent in fragments), the TCP ones ended by FIN. */
static void udp_flows(void **unused)
{
	char abs[PATH_MAX];
	struct child_result r;
	const char *p;
	unsigned int udp = 0, tcp_fin = 0;

	(void)unused;
	sample_path("http.pcap", abs);
	char *args[] = { "--json", "-r", abs, "funky-chicken", NULL };
	run_tspkt(&r, args);
	for (p = r.out; (p = strstr(p, "{\"type\":\"flow\"")); p++) {
		const char *eol = strchr(p, '\n');
		char *line = strndup(p, (size_t)(eol - p));

		assert_non_null(line);
		if (strstr(line, "\"proto\":\"UDP\"")) {
			assert_non_null(strstr(line, "\"reason\":\"end-of-"
						     "capture\""));
			udp++;
		} else if (strstr(line, "\"reason\":\"fin\"")) {
			tcp_fin++;
		}
		free(line);
	}
	assert_int_equal(udp, 3);
	assert_int_equal(tcp_fin, 3);
	assert_int_equal(counter(r.err, "flows:", "created"), 6);
	child_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_cut),
		cmocka_unit_test(samples_as_tshark),
		cmocka_unit_test(no_stream_is_per_packet),
		cmocka_unit_test(stream_rules),
		cmocka_unit_test(gaps),
		cmocka_unit_test(depth_and_memcap),
		cmocka_unit_test(write_flows),
		cmocka_unit_test(udp_flows),
		cmocka_unit_test(shared_reading),
	};
	const char *build = getenv("BUILD");
	int ret;

	if (!test_program_path("tspkt", tspkt_path, sizeof(tspkt_path))) {
		printf("not ok: tspkt not found in %s/bin: %s\n",
		       build ? build : "build/default", strerror(errno));
		return 1;
	}
	if (!test_make_tmpdir("tspkt-stream", dir, sizeof(dir))) {
		printf("not ok: temporary folder: %s\n", strerror(errno));
		return 1;
	}
	setenv("LC_ALL", "C", 1);
	signal(SIGPIPE, SIG_IGN);
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	if (getenv("TSPKT_TEST_KEEP"))
		printf("# kept %s\n", dir);
	else if (test_remove_tree(dir))
		printf("# could not remove %s\n", dir);
	return ret;
}
