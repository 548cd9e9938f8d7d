/*
 * fuzz_packets.c - libFuzzer target for the packet path: captured frames
 * through tspkt's decoder (tools/tspkt/decode.c) and IP reassembly
 * (defrag.c), then every datagram, whole or reassembled, searched with
 * skb_find_text() and skb_find_text_state() + textsearch_next() (kmp, bm,
 * auto), each result checked against a naive search of the buffer's bytes
 * copied out with skb_copy_bits(), and skb_seq_read()'s blocks against the
 * same bytes.  Every fragment given to defrag_add() is kept aside, so a
 * reassembled datagram is checked to be its fragments put together (the
 * header of one at offset 0, each payload byte from one that carried it
 * there, the end where a last fragment ended).  Any difference, a search
 * that writes to a shared config, or reassembly holding more than its
 * max_bytes, calls abort().
 *
 * Input layout (the header reads as zeros past the input's end):
 *   byte 0   bits 0-2  link type: EN10MB, RAW, IPV4, IPV6, NULL, LOOP,
 *                      LINUX_SLL, LINUX_SLL2
 *            bit 3     TS_IGNORECASE
 *            bit 4     whole datagrams go through defrag_add() too (they
 *                      must come straight back)
 *            bits 5-6  reassembly limits, see limit_sets[]
 *   byte 1   pattern: bit 7 clear, fixed_patterns[byte % N] (prepared
 *            once); bit 7 set, the next 1 + (byte & 15) input bytes
 *            (prepared for this input)
 *   byte 2   window start, relative to the IP header: bits 0-1 base (0 the
 *            IP header, 1 the transport header, 2 the transport payload,
 *            3 the end, counted back), bits 2-7 added (or taken off)
 *   byte 3   window end: bits 0-1 (0 the datagram's length, 1 start + n,
 *            2 the length - n, 3 UINT_MAX), n = bits 2-7
 *   then     the pattern's bytes, if taken from the input
 *   then     frames, each: 2-byte length (big-endian), a signed byte of
 *            capture time since the previous frame (ms; the reassembly
 *            timeout is TIMEOUT_MS), then the frame's bytes (a short last
 *            frame takes what is left)
 *
 * TCP datagrams also go through tspkt's stream reassembly (reasm.c), up
 * to FUZZ_FLOWS conversations an input, with the overlap policy size % 6
 * and a small memcap for one input size in two: each direction's bytes
 * must come in order with no byte twice (data and gaps abutting, nothing
 * after the end), the memcap must hold, and a push-mode stream ("auto",
 * the input's pattern) over each run of bytes between gaps must find what
 * the naive search finds there.
 *
 * Seeds: fuzz/corpus-packets, written by fuzz/make-corpus-packets.c.
 */
#include "decode.h"
#include "defrag.h"
#include "reasm.h"
#include "testsupport.h"
#include "textsearch.h"
#include "textsearch_skb.h"
#include "textsearch_stream.h"

#include <pcap/dlt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MS 1000000LL
#define TIMEOUT_MS 50
#define NR_ALGOS 3u
#define PKT_PATTERN_MAX 16u

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *in, size_t size);

/* What the inputs so far reached, summed: the corpus replay checks that
 * its seeds still lead where they were made to. */
struct fuzz_pkt_totals {
	unsigned long inputs, frames, datagrams, reassembled_searched, matches;
	struct defrag_stats defrag;
	unsigned long tcp_segments, tcp_bytes, tcp_gaps, tcp_matches;
};
extern struct fuzz_pkt_totals fuzz_pkt_totals;
struct fuzz_pkt_totals fuzz_pkt_totals;

static const int link_types[8] = {
	DLT_EN10MB, DLT_RAW,  DLT_IPV4,	     DLT_IPV6,
	DLT_NULL,   DLT_LOOP, DLT_LINUX_SLL, DLT_LINUX_SLL2,
};

static const char *const pkt_algos[NR_ALGOS] = { "kmp", "bm", "auto" };

/* Short patterns the seeds carry: text split by fragment boundaries, and
 * header bytes, so matches in headers are common too. */
static const struct {
	const char *bytes;
	unsigned int len;
} fixed_patterns[] = {
	{ "GET /", 5 },	   { "funky-chicken", 13 },
	{ "HTTP/1.", 7 },  { "aa", 2 },
	{ "\x45\x00", 2 }, { "\x00\x00", 2 },
	{ "abab", 4 },	   { "X", 1 },
};
#define NR_FIXED (sizeof(fixed_patterns) / sizeof(fixed_patterns[0]))

/* max_bytes small enough that a few fragments of a short input evict
 * (a buffer costs its struct, ~700 bytes, plus its data), max_frags small
 * enough that a datagram of a few fragments passes it. */
static const struct defrag_limits limit_sets[4] = {
	{ 64u << 10, 8, TIMEOUT_MS *MS },
	{ 4u << 10, 8, TIMEOUT_MS *MS },
	{ 2u << 10, 3, TIMEOUT_MS *MS },
	{ 64u << 10, 2, 5 * TIMEOUT_MS *MS },
};

/* [pattern][icase][algo], prepared in LLVMFuzzerInitialize, and a copy of
 * each as prepared: a search must never write a shared config. */
static struct ts_config *fixed_conf[NR_FIXED][2][NR_ALGOS];
static u8 *fixed_snap[NR_FIXED][2][NR_ALGOS];

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "fuzz_packets: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	abort();
}

static struct ts_config *prepare(unsigned int algo, const void *pat,
				 unsigned int len, bool icase)
{
	struct ts_config *conf = textsearch_prepare(pkt_algos[algo], pat, len,
						    GFP_KERNEL,
						    icase ? TS_IGNORECASE : 0);

	if (IS_ERR_OR_NULL(conf))
		die("%s: prepare failed: %s (%s)", pkt_algos[algo],
		    textsearch_strerror((int)PTR_ERR(conf)),
		    textsearch_last_error());
	return conf;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	unsigned int p, i, a;

	(void)argc;
	(void)argv;
	if (fixed_conf[0][0][0])
		return 0; /* a replay driver may call it again */
	for (p = 0; p < NR_FIXED; p++)
		for (i = 0; i < 2; i++)
			for (a = 0; a < NR_ALGOS; a++) {
				fixed_conf[p][i][a] =
					prepare(a, fixed_patterns[p].bytes,
						fixed_patterns[p].len, i);
				fixed_snap[p][i][a] =
					conf_snapshot(fixed_conf[p][i][a]);
			}
	return 0;
}

struct pkt_reader {
	const uint8_t *p;
	size_t n;
};

static uint8_t take8(struct pkt_reader *r)
{
	if (!r->n)
		return 0;
	r->n--;
	return *r->p++;
}

/* A fragment as received, kept to check the datagrams reassembled: the
 * datagram's identity as defrag.h tells datagrams apart, where its
 * payload lies, and a copy of it. */
struct shadow_frag {
	int family;
	uint8_t src[16], dst[16], proto;
	uint32_t id;
	unsigned int offset, len, hdrlen;
	bool more;
	u8 *data; /* header (hdrlen bytes), then payload */
};

#define FUZZ_FLOWS 8

/* One TCP direction through reasm.c, and what it delivered so far. */
struct tcp_side {
	struct reasm_dir dir;
	uint64_t next; /* the offset the next data or gap must start at */
	bool ended;
	struct ts_stream *s; /* over the run since the last gap */
	u8 *run;
	size_t runlen, runcap;
	unsigned int nfound;
	unsigned int found[1024];
};

struct tcp_conv {
	int family;
	uint8_t addr[2][16];
	uint16_t port[2];
	struct tcp_side side[2];
};

struct pkt_case;

struct side_ref {
	struct pkt_case *c;
	struct tcp_side *t;
};

struct pkt_case {
	int linktype;
	bool icase, all_through_defrag;
	const struct defrag_limits *limits;
	u8 pat[PKT_PATTERN_MAX];
	unsigned int plen;
	struct ts_config *conf[NR_ALGOS];
	const u8 *snap[NR_ALGOS]; /* fixed patterns only */
	bool own_conf;
	u8 from_ctl, to_ctl;
	struct shadow_frag *shadow; /* every fragment given to defrag */
	unsigned int nshadow, shadow_cap;
	struct reasm_ctx rctx;
	struct tcp_conv conv[FUZZ_FLOWS];
	unsigned int nconv;
};

static void tcp_segment(struct pkt_case *c, struct sk_buff *skb,
			const struct pkt_meta *meta);

/* The window [from, to) of a datagram, as the input says; either may lie
 * past the data (the search clamps, the reference too). */
static void window(const struct pkt_case *c, const struct sk_buff *skb,
		   const struct pkt_meta *meta, unsigned int *from,
		   unsigned int *to)
{
	unsigned int n = c->from_ctl >> 2, m = c->to_ctl >> 2;
	unsigned int base = 0;

	switch (c->from_ctl & 3) {
	case 1:
		if (meta->has_transport)
			base = (unsigned int)skb_transport_offset(skb);
		break;
	case 2:
		if (meta->has_transport)
			base = meta->payload_off;
		break;
	case 3:
		base = skb->len > n ? skb->len - n : 0;
		n = 0;
		break;
	}
	*from = base + n;
	switch (c->to_ctl & 3) {
	case 0:
		*to = skb->len;
		break;
	case 1:
		*to = *from + m;
		break;
	case 2:
		*to = skb->len > m ? skb->len - m : 0;
		break;
	default:
		*to = UINT_MAX;
		break;
	}
}

/* Every match in @flat's [from, to), non-overlapping, relative to @from,
 * as find/next give them; returns how many. */
static unsigned int reference(const struct pkt_case *c, const u8 *flat,
			      unsigned int from, unsigned int to,
			      unsigned int *out)
{
	unsigned int n = 0, at = 0, pos;

	if (from >= to)
		return 0;
	while ((pos = ref_find(c->pat, c->plen, flat + from, to - from, at,
			       c->icase)) != UINT_MAX) {
		if (pos + c->plen > to - from)
			die("reference match at %u runs past the window", pos);
		out[n++] = pos;
		at = pos + c->plen;
	}
	return n;
}

/* The bytes skb_seq_read() serves for [from, to) must be @flat's
 * [cfrom, cto), the window clamped to the data. */
static void check_seq_read(struct sk_buff *skb, const u8 *flat,
			   unsigned int from, unsigned int to,
			   unsigned int cfrom, unsigned int cto)
{
	struct skb_seq_state st;
	unsigned int consumed = 0, n;
	const u8 *block;

	skb_prepare_seq_read(skb, from, to, &st);
	while ((n = skb_seq_read(consumed, &block, &st)) != 0) {
		if (n > cto - cfrom - consumed)
			die("seq_read served %u bytes at %u, past the window "
			    "[%u, %u)",
			    n, consumed, cfrom, cto);
		if (memcmp(block, flat + cfrom + consumed, n) != 0)
			die("seq_read's bytes at %u differ from skb_copy_bits'",
			    cfrom + consumed);
		consumed += n;
	}
	skb_abort_seq_read(&st);
	if (consumed != cto - cfrom)
		die("seq_read served %u bytes of the window [%u, %u)", consumed,
		    cfrom, cto);
}

static void search_one(struct pkt_case *c, struct sk_buff *skb,
		       unsigned int from, unsigned int to, unsigned int algo,
		       const unsigned int *want, unsigned int nwant)
{
	struct ts_config *conf = c->conf[algo];
	struct ts_state st;
	unsigned int pos, i, w;

	pos = skb_find_text(skb, from, to, conf);
	w = nwant ? want[0] : UINT_MAX;
	if (pos != w)
		die("%s: skb_find_text [%u, %u) of %u bytes (%u in the head, "
		    "%s) gave %u, reference %u (pattern %u bytes, icase %d)",
		    pkt_algos[algo], from, to, skb->len, skb_headlen(skb),
		    skb_shinfo(skb)->frag_list ? "chained" : "linear", pos, w,
		    c->plen, c->icase);

	pos = skb_find_text_state(skb, from, to, conf, &st);
	for (i = 0; i <= nwant; i++) {
		w = i < nwant ? want[i] : UINT_MAX;
		if (pos != w)
			die("%s: match %u in [%u, %u) of %u bytes at %u, "
			    "reference %u (pattern %u bytes, icase %d)",
			    pkt_algos[algo], i, from, to, skb->len, pos, w,
			    c->plen, c->icase);
		pos = textsearch_next(conf, &st);
	}
	if (pos != UINT_MAX)
		die("%s: next after the last match gave %u", pkt_algos[algo],
		    pos);
}

/* A whole datagram: its transport header, its bytes, and the searches. */
static void search_datagram(struct pkt_case *c, struct sk_buff *skb,
			    struct pkt_meta *meta)
{
	unsigned int from, to, cfrom, cto, nwant, algo, *want;
	u8 *flat, probe;

	pkt_decode_transport(skb, meta);
	if (skb_headlen(skb) > skb->len)
		die("head of %u bytes in a buffer of %u", skb_headlen(skb),
		    skb->len);
	if (skb_network_offset(skb) != 0)
		die("network header at %d from data", skb_network_offset(skb));
	if (meta->has_transport &&
	    (skb->transport_header == SKB_HEADER_UNSET ||
	     skb_transport_offset(skb) < 0 ||
	     (unsigned int)skb_transport_offset(skb) >= meta->payload_off ||
	     meta->payload_off > skb->len))
		die("transport header at %d, payload at %u, of %u bytes",
		    skb_transport_offset(skb), meta->payload_off, skb->len);

	/* exactly the buffer's size, so a search is checked against bytes
	 * ASan guards on both sides */
	flat = malloc(skb->len ? skb->len : 1);
	want = malloc((skb->len + 1) * sizeof(*want));
	if (!flat || !want)
		abort();
	if (skb_copy_bits(skb, 0, flat, (int)skb->len) != 0)
		die("skb_copy_bits of the whole %u bytes failed", skb->len);
	if (skb_copy_bits(skb, 0, &probe, 0) != 0 ||
	    skb_copy_bits(skb, (int)skb->len, &probe, 1) != -EFAULT)
		die("skb_copy_bits at the edge of %u bytes", skb->len);

	window(c, skb, meta, &from, &to);
	cto = to < skb->len ? to : skb->len;
	cfrom = from < cto ? from : cto;
	check_seq_read(skb, flat, from, to, cfrom, cto);
	/* a start past the data finds nothing; else cfrom == from */
	nwant = from <= cto ? reference(c, flat, from, cto, want) : 0;
	for (algo = 0; algo < NR_ALGOS; algo++)
		search_one(c, skb, from, to, algo, want, nwant);
	free(want);
	free(flat);
	tcp_segment(c, skb, meta);
	fuzz_pkt_totals.datagrams++;
	fuzz_pkt_totals.matches += nwant;
}

/* ---- TCP streams ---------------------------------------------------------- */

/* The run since the last gap is over: the stream must have found what the
 * naive search finds in it. */
static void finish_run(struct pkt_case *c, struct tcp_side *t)
{
	unsigned int *want, n, i;
	struct ts_match m;

	if (!t->s)
		return;
	if (textsearch_stream_end(t->s))
		die("textsearch_stream_end failed");
	while (textsearch_stream_next(t->s, &m) > 0)
		if (t->nfound < 1024)
			t->found[t->nfound++] = (unsigned int)m.start;
	want = malloc((t->runlen + 1) * sizeof(*want));
	if (!want)
		abort();
	n = t->runlen <= UINT_MAX ?
		    reference(c, t->run, 0, (unsigned int)t->runlen, want) :
		    0;
	if (n < 1024 && n != t->nfound)
		die("TCP stream: %u matches in a run of %zu bytes, the naive "
		    "search %u",
		    t->nfound, t->runlen, n);
	for (i = 0; i < n && i < t->nfound; i++)
		if (want[i] != t->found[i])
			die("TCP stream: match %u at %u, the naive search %u",
			    i, t->found[i], want[i]);
	fuzz_pkt_totals.tcp_matches += n;
	free(want);
	textsearch_stream_reset(t->s);
	t->runlen = 0;
	t->nfound = 0;
}

static int tcp_data(void *opaque, uint64_t off, const uint8_t *p, size_t len)
{
	struct side_ref *k = opaque;
	struct tcp_side *t = k->t;
	struct ts_match m;

	if (t->ended || off != t->next || !len)
		die("TCP data of %zu bytes at %llu, expected at %llu%s", len,
		    (unsigned long long)off, (unsigned long long)t->next,
		    t->ended ? " (after the end)" : "");
	t->next += len;
	fuzz_pkt_totals.tcp_bytes += len;
	if (t->runlen + len > t->runcap) {
		size_t cap = (t->runlen + len) * 2;
		u8 *v = realloc(t->run, cap);

		if (!v)
			abort();
		t->run = v;
		t->runcap = cap;
	}
	memcpy(t->run + t->runlen, p, len);
	t->runlen += len;
	if (t->s) {
		if (textsearch_stream_write(t->s, p, len))
			die("textsearch_stream_write failed");
		while (textsearch_stream_next(t->s, &m) > 0)
			if (t->nfound < 1024)
				t->found[t->nfound++] = (unsigned int)m.start;
	}
	return 0;
}

static int tcp_gap(void *opaque, uint64_t off, uint64_t len)
{
	struct side_ref *k = opaque;

	if (k->t->ended || off != k->t->next || !len)
		die("TCP gap of %llu bytes at %llu, expected at %llu",
		    (unsigned long long)len, (unsigned long long)off,
		    (unsigned long long)k->t->next);
	k->t->next += len;
	fuzz_pkt_totals.tcp_gaps++;
	finish_run(k->c, k->t);
	return 0;
}

static int tcp_end(void *opaque, uint64_t off)
{
	struct side_ref *k = opaque;

	if (k->t->ended || off != k->t->next)
		die("TCP end at %llu, expected at %llu%s",
		    (unsigned long long)off, (unsigned long long)k->t->next,
		    k->t->ended ? " (twice)" : "");
	k->t->ended = true;
	finish_run(k->c, k->t);
	return 0;
}

static void tcp_segment(struct pkt_case *c, struct sk_buff *skb,
			const struct pkt_meta *meta)
{
	size_t al = meta->family == 6 ? 16 : 4;
	struct tcp_conv *v = NULL;
	struct side_ref k = { c, NULL };
	const struct reasm_consumer cons = { tcp_data, tcp_gap, tcp_end, &k };
	uint8_t th[20], *payload;
	const uint8_t *t;
	unsigned int i, plen;
	int d = 0;

	if (meta->l4proto != 6 || !meta->has_transport ||
	    meta->payload_off > skb->len)
		return;
	t = skb_header_pointer(skb, skb_transport_offset(skb), sizeof(th), th);
	if (!t)
		return;
	for (i = 0; i < c->nconv && !v; i++)
		for (d = 0; d < 2; d++)
			if (c->conv[i].family == meta->family &&
			    !memcmp(c->conv[i].addr[d], meta->src, al) &&
			    !memcmp(c->conv[i].addr[!d], meta->dst, al) &&
			    c->conv[i].port[d] == meta->sport &&
			    c->conv[i].port[!d] == meta->dport) {
				v = &c->conv[i];
				break;
			}
	if (!v) {
		if (c->nconv == FUZZ_FLOWS)
			return;
		v = &c->conv[c->nconv++];
		memset(v, 0, sizeof(*v));
		v->family = meta->family;
		memcpy(v->addr[0], meta->src, al);
		memcpy(v->addr[1], meta->dst, al);
		v->port[0] = meta->sport;
		v->port[1] = meta->dport;
		for (int s2 = 0; s2 < 2; s2++) {
			reasm_dir_init(&v->side[s2].dir);
			v->side[s2].s = textsearch_stream_open(
				c->conf[NR_ALGOS - 1], GFP_KERNEL);
			if (IS_ERR(v->side[s2].s))
				die("textsearch_stream_open failed");
		}
		d = 0;
	}
	k.t = &v->side[d];
	plen = skb->len - meta->payload_off;
	payload = malloc(plen ? plen : 1);
	if (!payload)
		abort();
	if (skb_copy_bits(skb, (int)meta->payload_off, payload, (int)plen))
		die("skb_copy_bits of a TCP payload");
	reasm_window(&v->side[!d].dir, (uint32_t)t[14] << 8 | t[15]);
	reasm_add(&c->rctx, &k.t->dir, &cons,
		  (uint32_t)t[4] << 24 | (uint32_t)t[5] << 16 |
			  (uint32_t)t[6] << 8 | t[7],
		  payload, plen, t[13]);
	free(payload);
	if (c->rctx.cfg.memcap && c->rctx.mem_used > c->rctx.cfg.memcap)
		die("TCP reassembly holds %zu bytes, memcap %zu",
		    c->rctx.mem_used, c->rctx.cfg.memcap);
	fuzz_pkt_totals.tcp_segments++;
}

/* The input is over: every direction flushed (holes become gaps) and
 * freed, and nothing may stay accounted. */
static void tcp_close_all(struct pkt_case *c)
{
	for (unsigned int i = 0; i < c->nconv; i++)
		for (int d = 0; d < 2; d++) {
			struct tcp_side *t = &c->conv[i].side[d];
			struct side_ref k = { c, t };
			const struct reasm_consumer cons = { tcp_data, tcp_gap,
							     tcp_end, &k };

			reasm_close(&c->rctx, &t->dir, &cons);
			finish_run(c, t);
			reasm_dir_free(&c->rctx, &t->dir);
			textsearch_stream_free(t->s);
			free(t->run);
		}
	if (c->rctx.mem_used)
		die("TCP reassembly still accounts %zu bytes",
		    c->rctx.mem_used);
}

static void decode_header(struct pkt_case *c, struct pkt_reader *r)
{
	u8 ctl = take8(r), pat = take8(r);
	unsigned int i, a;

	c->linktype = link_types[ctl & 7];
	c->icase = ctl & 8;
	c->all_through_defrag = ctl & 16;
	c->limits = &limit_sets[(ctl >> 5) & 3];
	c->from_ctl = take8(r);
	c->to_ctl = take8(r);
	if (pat & 0x80) {
		c->plen = 1 + (pat & 15u);
		for (i = 0; i < c->plen; i++)
			c->pat[i] = take8(r);
		for (a = 0; a < NR_ALGOS; a++)
			c->conf[a] = prepare(a, c->pat, c->plen, c->icase);
		c->own_conf = true;
	} else {
		i = pat % NR_FIXED;
		c->plen = fixed_patterns[i].len;
		memcpy(c->pat, fixed_patterns[i].bytes, c->plen);
		for (a = 0; a < NR_ALGOS; a++) {
			c->conf[a] = fixed_conf[i][c->icase][a];
			c->snap[a] = fixed_snap[i][c->icase][a];
		}
	}
}

static bool same_datagram(const struct shadow_frag *f,
			  const struct shadow_frag *g)
{
	return f->family == g->family && f->id == g->id &&
	       f->proto == g->proto && !memcmp(f->src, g->src, 16) &&
	       !memcmp(f->dst, g->dst, 16);
}

static void shadow_key(struct shadow_frag *f, const struct pkt_meta *meta,
		       const struct ip_frag_info *frag)
{
	memset(f, 0, sizeof(*f));
	f->family = meta->family;
	memcpy(f->src, meta->src, 16);
	memcpy(f->dst, meta->dst, 16);
	f->proto = meta->family == 4 ? meta->l4proto : 0;
	f->id = frag->id;
}

/* Keep a copy of fragment @skb before defrag_add() takes it. */
static void shadow_add(struct pkt_case *c, const struct sk_buff *skb,
		       const struct pkt_meta *meta,
		       const struct ip_frag_info *frag)
{
	struct shadow_frag *f;

	if (frag->payload_len > skb->len)
		return; /* defrag drops it as invalid */
	if (c->nshadow == c->shadow_cap) {
		c->shadow_cap = c->shadow_cap ? 2 * c->shadow_cap : 16;
		c->shadow =
			realloc(c->shadow, c->shadow_cap * sizeof(*c->shadow));
		if (!c->shadow)
			abort();
	}
	f = &c->shadow[c->nshadow];
	shadow_key(f, meta, frag);
	f->offset = frag->offset;
	f->len = frag->payload_len;
	f->hdrlen = skb->len - frag->payload_len;
	f->more = frag->more_fragments;
	f->data = malloc(skb->len ? skb->len : 1);
	if (!f->data || skb_copy_bits(skb, 0, f->data, (int)skb->len) != 0)
		abort();
	c->nshadow++;
}

/* Whether @flat, @len bytes, reads as the header of a first fragment
 * (@first) followed by a payload whose every byte some fragment of the
 * datagram carried at that offset, ending where a last fragment ended. */
static bool made_of_fragments(const struct pkt_case *c, const u8 *flat,
			      unsigned int len, const struct shadow_frag *first,
			      u8 *covered)
{
	const u8 *payload = flat + first->hdrlen;
	unsigned int plen = len - first->hdrlen, i, j;
	const struct shadow_frag *f;
	bool has_end = false;

	if (first->hdrlen > len)
		return false;
	memset(covered, 0, plen);
	for (i = 0; i < c->nshadow; i++) {
		f = &c->shadow[i];
		if (!same_datagram(f, first))
			continue;
		if (!f->more && f->offset + f->len == plen)
			has_end = true;
		for (j = 0; j < f->len && f->offset + j < plen; j++)
			if (f->data[f->hdrlen + j] == payload[f->offset + j])
				covered[f->offset + j] = 1;
	}
	for (i = 0; i < plen; i++)
		if (!covered[i])
			return false;
	return has_end;
}

/* A reassembled datagram must be its fragments put together: some
 * fragment at offset 0 gives the header, then every payload byte. */
static void check_reassembled(const struct pkt_case *c, struct sk_buff *skb,
			      const struct pkt_meta *meta,
			      const struct ip_frag_info *frag)
{
	struct shadow_frag key;
	u8 *flat, *covered;
	unsigned int i;
	bool ok = false;

	shadow_key(&key, meta, frag);
	flat = malloc(skb->len ? skb->len : 1);
	covered = malloc(skb->len ? skb->len : 1);
	if (!flat || !covered ||
	    skb_copy_bits(skb, 0, flat, (int)skb->len) != 0)
		abort();
	for (i = 0; i < c->nshadow && !ok; i++)
		if (c->shadow[i].offset == 0 &&
		    same_datagram(&c->shadow[i], &key) &&
		    c->shadow[i].hdrlen <= skb->len &&
		    !memcmp(flat, c->shadow[i].data, c->shadow[i].hdrlen))
			ok = made_of_fragments(c, flat, skb->len, &c->shadow[i],
					       covered);
	if (!ok)
		die("a reassembled datagram of %u bytes (id %#x) is not its "
		    "fragments put together",
		    skb->len, (unsigned int)frag->id);
	free(covered);
	free(flat);
}

/*
 * tspkt classifies a frame where it lies (pkt_decode_headers() and
 * pkt_skb_wrap(), no copy): the same verdict, the same facts and the same
 * bytes and layers as pkt_decode_frame()'s copy in @skb.
 */
static void check_borrowed(struct pkt_case *c, const u8 *frame,
			   unsigned int caplen, int64_t ts,
			   const struct sk_buff *skb,
			   const struct pkt_meta *meta,
			   const struct ip_frag_info *frag)
{
	struct pkt_meta m, m2;
	struct ip_frag_info f;
	struct sk_buff b, t;
	unsigned int l3off;
	const char *why;
	bool ok;

	ok = pkt_decode_headers(c->linktype, frame, caplen, &m, &f, &l3off,
				&why);
	if (ok != (skb != NULL))
		die("pkt_decode_headers says %d, pkt_decode_frame %d", ok,
		    skb != NULL);
	if (!ok)
		return;
	if (memcmp(&m, meta, sizeof(m)) || memcmp(&f, frag, sizeof(f)))
		die("pkt_decode_headers and pkt_decode_frame disagree");
	if (l3off + m.net_len > 65535u || f.is_fragment)
		return;
	memset(&b, 0, sizeof(b));
	pkt_skb_wrap(&b, (u8 *)(uintptr_t)frame, l3off + m.net_len, l3off,
		     m.family, ts);
	if (b.len != skb->len || skb_is_nonlinear(skb) ||
	    memcmp(b.data, skb->data, b.len) || skb_mac_header(&b) != frame ||
	    skb_network_offset(&b) != skb_network_offset(skb) ||
	    b.data - b.head != skb->data - skb->head ||
	    b.protocol != skb->protocol || b.tstamp_ns != skb->tstamp_ns)
		die("a frame wrapped in place differs from its copy");
	/* on a copy of the struct: the real buffer goes on untouched */
	t = *skb;
	memcpy(&m2, &m, sizeof(m));
	pkt_decode_transport(&b, &m);
	pkt_decode_transport(&t, &m2);
	if (m.has_transport != m2.has_transport || m.sport != m2.sport ||
	    m.dport != m2.dport || m.payload_off != m2.payload_off ||
	    m.l4proto != m2.l4proto || b.transport_header != t.transport_header)
		die("transport headers differ in place and in the copy");
}

/* One frame through decode, maybe reassembly, and the searches. */
static void one_frame(struct pkt_case *c, struct defrag *d, const u8 *bytes,
		      unsigned int caplen, int64_t ts)
{
	struct pkt_meta meta;
	struct ip_frag_info frag;
	struct sk_buff *skb, *out;
	enum defrag_result res;
	const char *why;
	u8 *frame;

	fuzz_pkt_totals.frames++;
	/* its own allocation: a read past the captured bytes is caught */
	frame = malloc(caplen ? caplen : 1);
	if (!frame)
		abort();
	memcpy(frame, bytes, caplen);
	skb = pkt_decode_frame(c->linktype, frame, caplen, ts, &meta, &frag,
			       &why);
	check_borrowed(c, frame, caplen, ts, skb, &meta, &frag);
	free(frame);
	if (!skb)
		return;
	if (!frag.is_fragment && skb->len != meta.net_len)
		die("datagram of %u bytes, its header says %u", skb->len,
		    meta.net_len);
	if (!frag.is_fragment && !c->all_through_defrag) {
		search_datagram(c, skb, &meta);
		kfree_skb(skb);
		return;
	}
	if (frag.is_fragment)
		shadow_add(c, skb, &meta, &frag);
	res = defrag_add(d, skb, &meta, &frag, &out);
	if (defrag_bytes_held(d) > c->limits->max_bytes)
		die("reassembly holds %zu bytes, limit %zu",
		    defrag_bytes_held(d), c->limits->max_bytes);
	if (!frag.is_fragment && (res != DEFRAG_DONE || out != skb))
		die("a whole datagram did not come straight back (%d)",
		    (int)res);
	if (res == DEFRAG_DONE) {
		if (!out)
			die("reassembly done without a datagram");
		if (frag.is_fragment) {
			check_reassembled(c, out, &meta, &frag);
			fuzz_pkt_totals.reassembled_searched++;
		}
		search_datagram(c, out, &meta);
		kfree_skb(out);
	} else if (out) {
		die("reassembly result %d with a datagram", (int)res);
	}
}

static void add_stats(const struct defrag *d)
{
	struct defrag_stats s;
	struct defrag_stats *t = &fuzz_pkt_totals.defrag;

	defrag_get_stats(d, &s);
	t->fragments += s.fragments;
	t->reassembled += s.reassembled;
	t->timeouts += s.timeouts;
	t->overlaps += s.overlaps;
	t->oversize += s.oversize;
	t->evicted += s.evicted;
	t->invalid += s.invalid;
	t->frags_dropped += s.frags_dropped;
	fuzz_pkt_totals.inputs++;
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t size)
{
	struct pkt_reader r = { in, size };
	struct pkt_case c;
	struct defrag *d;
	unsigned int a, len;
	int64_t ts = 1000 * 1000 * MS; /* any capture time */

	memset(&c, 0, sizeof(c));
	decode_header(&c, &r);
	{
		const struct reasm_config rc = {
			.policy = (enum reasm_policy)(size % 6),
			.memcap = size & 64 ? 3000 : 0, /* 0: the default */
		};

		reasm_ctx_init(&c.rctx, &rc);
	}
	d = defrag_new(c.limits);
	if (!d)
		abort();
	while (r.n >= 3) {
		len = (unsigned int)take8(&r) << 8;
		len |= take8(&r);
		ts += (int8_t)take8(&r) * MS;
		if (len > r.n)
			len = (unsigned int)r.n;
		one_frame(&c, d, r.p, len, ts);
		r.p += len;
		r.n -= len;
	}
	tcp_close_all(&c);
	add_stats(d);
	defrag_free(d);
	for (a = 0; a < c.nshadow; a++)
		free(c.shadow[a].data);
	free(c.shadow);
	for (a = 0; a < NR_ALGOS; a++) {
		if (c.own_conf)
			textsearch_destroy(c.conf[a]);
		else if (!conf_unchanged(c.conf[a], c.snap[a]))
			die("%s: a search wrote to the shared config",
			    pkt_algos[a]);
	}
	return 0;
}
