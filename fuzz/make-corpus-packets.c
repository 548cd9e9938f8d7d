/*
 * make-corpus-packets.c - write the seed corpus of fuzz_packets.c (its
 * header describes the input layout) into argv[1]:
 *
 *   make -f fuzz/fuzz.mk corpus-packets
 *
 * Frames are built by tests/pcap's builders (Ethernet, IPv4/IPv6, TCP/UDP,
 * fragments), then rewritten for the other link types and for what the
 * builders do not make (VLAN tags, IPv4 options, IPv6 extension headers).
 * Each seed is one path of decode and reassembly the fuzzer should start
 * from: whole datagrams on every link type, fragments in and out of order,
 * overlaps, duplicates, timeouts, eviction, too many fragments, datagrams
 * past 64 KiB, contradictions, and search windows of every kind.
 */
#include "pcapgen.h"

#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* byte 0 of an input: link type, flags, limits (fuzz_packets.c) */
enum { L_EN10MB, L_RAW, L_IPV4, L_IPV6, L_NULL, L_LOOP, L_SLL, L_SLL2 };
#define ICASE 8u
#define ALL_DEFRAG 16u
#define LIMITS(n) ((unsigned int)(n) << 5)
/* byte 1: fixed patterns, or one from the input */
enum { P_GET, P_CHICKEN, P_HTTP, P_AA, P_IPV4, P_ZEROS, P_ABAB, P_X };
#define P_INPUT(len) (0x80u | ((len)-1u))
/* byte 2: window start; byte 3: window end */
#define FROM_IP(n) ((unsigned int)(n) << 2)
#define FROM_L4(n) (1u | (unsigned int)(n) << 2)
#define FROM_PAYLOAD(n) (2u | (unsigned int)(n) << 2)
#define FROM_END(n) (3u | (unsigned int)(n) << 2)
#define TO_LEN 0u
#define TO_FROM_PLUS(n) (1u | (unsigned int)(n) << 2)
#define TO_LEN_MINUS(n) (2u | (unsigned int)(n) << 2)
#define TO_MAX 3u

#define ETH_HLEN 14u
#define SEED_MAX 16384u

struct seed {
	uint8_t b[SEED_MAX];
	size_t n;
	int link;
};

static struct seed seed;
static struct pg_frame frames[4], tmp;
static const char *outdir;
static unsigned int written;

static void fail(const char *what)
{
	fprintf(stderr, "make-corpus-packets: %s\n", what);
	exit(1);
}

static void put(const void *p, size_t len)
{
	if (seed.n + len > SEED_MAX)
		fail("seed too long");
	memcpy(seed.b + seed.n, p, len);
	seed.n += len;
}

static void put8(unsigned int v)
{
	uint8_t b = (uint8_t)v;

	put(&b, 1);
}

static void begin(int link, unsigned int flags, unsigned int pat,
		  unsigned int from, unsigned int to)
{
	seed.n = 0;
	seed.link = link;
	put8((unsigned int)link | flags);
	put8(pat);
	put8(from);
	put8(to);
}

static void finish(const char *name)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", outdir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(seed.b, 1, seed.n, f) != seed.n || fclose(f) != 0)
		fail(path);
	written++;
}

/* A frame as it is in the input: length, time delta, bytes. */
static void put_frame(int delta_ms, const uint8_t *bytes, unsigned int len)
{
	if (len > 0xffff)
		fail("frame too long");
	put8(len >> 8);
	put8(len);
	put8((unsigned int)(delta_ms & 0xff));
	put(bytes, len);
}

static unsigned int eth_family(const struct pg_frame *f)
{
	return (f->bytes[12] << 8 | f->bytes[13]) == 0x86dd ? 6 : 4;
}

/* The Ethernet frame @f rewritten for the seed's link type, appended. */
static void add(int delta_ms, const struct pg_frame *f)
{
	static uint8_t out[PG_MAX_FRAME + 32];
	unsigned int ip_len = f->len - ETH_HLEN, fam = eth_family(f);
	const uint8_t *ip = f->bytes + ETH_HLEN;
	unsigned int hlen = 0;

	memset(out, 0, 32);
	switch (seed.link) {
	case L_EN10MB:
		put_frame(delta_ms, f->bytes, f->len);
		return;
	case L_RAW:
	case L_IPV4:
	case L_IPV6:
		break;
	case L_NULL:
		/* the writer's byte order: little-endian here */
		out[0] = fam == 6 ? 30 : 2;
		hlen = 4;
		break;
	case L_LOOP:
		out[3] = fam == 6 ? 24 : 2;
		hlen = 4;
		break;
	case L_SLL:
		out[1] = 0; /* to us */
		out[3] = 1; /* ARPHRD_ETHER */
		out[5] = 6; /* address length */
		memcpy(out + 6, f->bytes + 6, 6);
		memcpy(out + 14, f->bytes + 12, 2);
		hlen = 16;
		break;
	case L_SLL2:
		memcpy(out, f->bytes + 12, 2);
		out[7] = 2;  /* interface index */
		out[9] = 1;  /* ARPHRD_ETHER */
		out[10] = 4; /* outgoing */
		out[11] = 6;
		memcpy(out + 12, f->bytes + 6, 6);
		hlen = 20;
		break;
	}
	memcpy(out + hlen, ip, ip_len);
	put_frame(delta_ms, out, hlen + ip_len);
}

/* @f with @ntags VLAN tags (802.1ad outer, 802.1Q inner) after the MACs. */
static void add_vlan(int delta_ms, const struct pg_frame *f, unsigned int ntags)
{
	unsigned int i;

	memcpy(tmp.bytes, f->bytes, 12);
	for (i = 0; i < ntags; i++) {
		uint8_t *t = tmp.bytes + 12 + 4 * i;

		t[0] = i + 1 < ntags ? 0x88 : 0x81;
		t[1] = i + 1 < ntags ? 0xa8 : 0x00;
		t[2] = 0;
		t[3] = (uint8_t)(10 + i); /* VLAN id */
	}
	memcpy(tmp.bytes + 12 + 4 * ntags, f->bytes + 12, f->len - 12);
	tmp.len = f->len + 4 * ntags;
	put_frame(delta_ms, tmp.bytes, tmp.len);
}

/* Insert @len bytes at offset @at of @f. */
static void insert(struct pg_frame *f, unsigned int at, const uint8_t *p,
		   unsigned int len)
{
	memmove(f->bytes + at + len, f->bytes + at, f->len - at);
	memcpy(f->bytes + at, p, len);
	f->len += len;
}

static void add16(uint8_t *p, unsigned int v)
{
	unsigned int x = (unsigned int)(p[0] << 8 | p[1]) + v;

	p[0] = (uint8_t)(x >> 8);
	p[1] = (uint8_t)x;
}

/* IPv6 extension headers @ext (each starting with its next-header byte,
 * filled here) between the fixed header and what follows it. */
static void ipv6_insert_ext(struct pg_frame *f, const uint8_t *types,
			    const unsigned int *lens, unsigned int n)
{
	uint8_t *ip = f->bytes + ETH_HLEN, ext[64];
	unsigned int i, at = 0, total = 0;
	uint8_t next = ip[6];

	memset(ext, 0, sizeof(ext));
	for (i = 0; i < n; i++) {
		ext[at] = i + 1 < n ? types[i + 1] : next;
		/* hdr ext len: AH counts 4-byte words minus 2, others
		 * 8-byte words minus 1 */
		ext[at + 1] = (uint8_t)(types[i] == 51 ? lens[i] / 4 - 2 :
							 lens[i] / 8 - 1);
		if (types[i] == 0 || types[i] == 60) {
			ext[at + 2] = 1; /* PadN over the rest */
			ext[at + 3] = (uint8_t)(lens[i] - 4);
		}
		at += lens[i];
	}
	total = at;
	ip[6] = types[0];
	add16(ip + 4, total);
	insert(f, ETH_HLEN + 40, ext, total);
}

/* IPv4 options (NOPs, then End): ihl grows by @words. */
static void ipv4_insert_options(struct pg_frame *f, unsigned int words)
{
	uint8_t *ip = f->bytes + ETH_HLEN, opt[40];

	memset(opt, 1, sizeof(opt));
	opt[4 * words - 1] = 0;
	ip[0] = (uint8_t)(0x45 + words);
	add16(ip + 2, 4 * words);
	insert(f, ETH_HLEN + 20, opt, 4 * words);
}

static const struct pg_flow udp4 = { 4,	   "10.0.0.1", "10.0.0.2", IPPROTO_UDP,
				     5353, 9999,       0,	   0 };
static const struct pg_flow tcp4 = {
	4, "192.168.1.10", "192.168.1.20", IPPROTO_TCP, 40000, 80, 1000, 0
};
static const struct pg_flow udp6 = { 6,	   "fd00::1", "fd00::2", IPPROTO_UDP,
				     1234, 9999,      0,	 0 };
static const struct pg_flow tcp6 = {
	6, "2001:db8::a", "2001:db8::b", IPPROTO_TCP, 50000, 8080, 77, 0
};

static const char http[] = "GET / HTTP/1.1\r\nHost: example\r\n"
			   "User-Agent: We dance the funky-chicken\r\n\r\n";
/* 120 bytes; behind an 8-byte UDP header, "funky-chicken" (IP payload
 * 43..56) straddles a cut at 48 and "abababab" (93..101) one at 96 */
static const char dance[] =
	"Do the dance, all of us! We dance, funky-chicken, we do it "
	"aaaaaaa, again and the X; abababab and GET / of HTTP/1.0 now!";

static unsigned int slen(const char *s)
{
	return (unsigned int)strlen(s);
}

/* The IP payload (transport header + @text) of @flow, for raw fragments. */
static unsigned int ip_payload(const struct pg_flow *flow, const char *text,
			       uint8_t *out)
{
	unsigned int ihl = flow->family == 4 ? 20u : 40u;

	pg_build(&tmp, flow, text, slen(text));
	memcpy(out, tmp.bytes + ETH_HLEN + ihl, tmp.len - ETH_HLEN - ihl);
	return tmp.len - ETH_HLEN - ihl;
}

/* A raw fragment [off, off + len) of @pl, appended. */
static void add_frag(int delta_ms, const struct pg_flow *flow, uint32_t id,
		     const uint8_t *pl, unsigned int off, unsigned int len,
		     int more)
{
	pg_build_raw_fragment(&frames[3], flow, id, off, more, pl + off, len);
	add(delta_ms, &frames[3]);
}

static void whole_datagrams(void)
{
	static const int links[] = { L_RAW,  L_IPV4, L_IPV6, L_NULL,
				     L_LOOP, L_SLL,  L_SLL2 };
	static const char *const names[] = {
		"raw-ipv4-ipv6",  "ipv4-udp",	    "ipv6-udp",
		"null-ipv4-ipv6", "loop-ipv4-ipv6", "sll-ipv4-ipv6",
		"sll2-ipv4-ipv6",
	};
	unsigned int i;

	begin(L_EN10MB, 0, P_GET, FROM_PAYLOAD(0), TO_LEN);
	pg_build(&frames[0], &tcp4, http, slen(http));
	add(0, &frames[0]);
	finish("en10mb-ipv4-tcp-get");

	begin(L_EN10MB, ICASE, P_HTTP, FROM_L4(0), TO_MAX);
	pg_build(&frames[0], &tcp6, "get / http/1.1\r\nHTTP/1.0", 24);
	add(0, &frames[0]);
	finish("en10mb-ipv6-tcp-icase");

	/* hop-by-hop, destination options, routing, AH, then UDP */
	begin(L_EN10MB, 0, P_CHICKEN, FROM_L4(8), TO_LEN);
	pg_build(&frames[0], &udp6, dance, slen(dance));
	ipv6_insert_ext(&frames[0], (const uint8_t[]){ 0, 60, 43, 51 },
			(const unsigned int[]){ 8, 16, 8, 12 }, 4);
	add(0, &frames[0]);
	finish("en10mb-ipv6-udp-ext-headers");

	begin(L_EN10MB, 0, P_ZEROS, FROM_IP(0), TO_FROM_PLUS(40));
	pg_build(&frames[0], &udp4, dance, slen(dance));
	ipv4_insert_options(&frames[0], 3);
	add(0, &frames[0]);
	finish("en10mb-ipv4-options");

	begin(L_EN10MB, 0, P_CHICKEN, FROM_PAYLOAD(2), TO_LEN_MINUS(3));
	pg_build(&frames[0], &udp4, dance, slen(dance));
	add_vlan(0, &frames[0], 1);
	finish("en10mb-vlan-ipv4-udp");

	begin(L_EN10MB, 0, P_GET, FROM_PAYLOAD(0), TO_LEN);
	pg_build(&frames[0], &tcp6, http, slen(http));
	add_vlan(0, &frames[0], 2);
	finish("en10mb-qinq-ipv6-tcp");

	for (i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		begin(links[i], 0, P_CHICKEN, FROM_PAYLOAD(0), TO_LEN);
		pg_build(&frames[0], links[i] == L_IPV4 ? &udp4 : &tcp4, dance,
			 slen(dance));
		if (links[i] != L_IPV6)
			add(0, &frames[0]);
		if (links[i] != L_IPV4) {
			pg_build(&frames[1], &udp6, http, slen(http));
			add(1, &frames[1]);
		}
		finish(names[i]);
	}

	/* ICMP and SCTP (raw fragments at offset 0 without MF are whole
	 * datagrams), an ICMPv6 atomic fragment, through defrag_add too */
	begin(L_EN10MB, ALL_DEFRAG, P_X, FROM_L4(0), TO_MAX);
	{
		struct pg_flow icmp = udp4, sctp = udp4, icmp6 = udp6;
		uint8_t body[64];

		memset(body, 'X', sizeof(body));
		body[0] = 8; /* echo request */
		icmp.proto = IPPROTO_ICMP;
		sctp.proto = IPPROTO_SCTP;
		icmp6.proto = IPPROTO_ICMPV6;
		pg_build_raw_fragment(&frames[0], &icmp, 1, 0, 0, body, 40);
		add(0, &frames[0]);
		pg_build_raw_fragment(&frames[0], &sctp, 2, 0, 0, body, 48);
		add(0, &frames[0]);
		pg_build_raw_fragment(&frames[0], &icmp6, 3, 0, 0, body, 32);
		add(0, &frames[0]);
		pg_build(&frames[0], &udp4, dance, slen(dance));
		add(0, &frames[0]);
	}
	finish("en10mb-icmp-sctp-atomic-all-defrag");
}

static void fragments(void)
{
	static const unsigned int cuts[] = { 48, 96 };
	static uint8_t pl[4096];
	static char big[3000];
	unsigned int n, len, i;

	begin(L_EN10MB, 0, P_CHICKEN, FROM_PAYLOAD(0), TO_LEN);
	n = pg_build_fragments(frames, &udp4, dance, slen(dance), cuts, 2, 11);
	for (i = 0; i < n; i++)
		add(1, &frames[i]);
	finish("en10mb-ipv4-frags-in-order");

	begin(L_EN10MB, 0, P_ABAB, FROM_IP(0), TO_MAX);
	n = pg_build_fragments(frames, &udp4, dance, slen(dance), cuts, 2, 12);
	for (i = n; i-- > 0;)
		add(1, &frames[i]);
	finish("en10mb-ipv4-frags-reversed");

	begin(L_EN10MB, 0, P_CHICKEN, FROM_L4(0), TO_LEN);
	n = pg_build_fragments(frames, &udp6, dance, slen(dance), cuts, 2,
			       0x12345678);
	add(0, &frames[2]);
	add(0, &frames[0]);
	add(0, &frames[1]);
	finish("en10mb-ipv6-frags-shuffled");

	/* a hop-by-hop header before the Fragment header */
	begin(L_EN10MB, 0, P_AA, FROM_PAYLOAD(0), TO_LEN);
	n = pg_build_fragments(frames, &tcp6, dance, slen(dance), cuts, 1, 5);
	for (i = 0; i < n; i++) {
		ipv6_insert_ext(&frames[i], (const uint8_t[]){ 0 },
				(const unsigned int[]){ 8 }, 1);
		add(0, &frames[i]);
	}
	finish("en10mb-ipv6-hop-frags");

	begin(L_SLL2, 0, P_CHICKEN, FROM_PAYLOAD(0), TO_LEN);
	n = pg_build_fragments(frames, &tcp4, dance, slen(dance), cuts + 1, 1,
			       99);
	add(0, &frames[1]);
	add(0, &frames[0]);
	finish("sll2-ipv4-tcp-frags");

	begin(L_NULL, 0, P_CHICKEN, FROM_PAYLOAD(0), TO_LEN);
	n = pg_build_fragments(frames, &udp6, dance, slen(dance), cuts, 1, 7);
	for (i = 0; i < n; i++)
		add(0, &frames[i]);
	finish("null-ipv6-frags");

	/* two 1500-byte-MTU fragments, the pattern across the cut */
	memset(big, 'a', sizeof(big) - 1);
	memcpy(big + 1480 - 8 - 6, "funky-chicken", 13);
	begin(L_EN10MB, 0, P_CHICKEN, FROM_PAYLOAD(0), TO_LEN);
	n = pg_build_fragments(frames, &udp4, big, 2000,
			       (const unsigned int[]){ 1480 }, 1, 1500);
	for (i = 0; i < n; i++)
		add(0, &frames[i]);
	finish("en10mb-ipv4-mtu-frags");

	/* 2 KiB: a fragment dearer than max_bytes with nothing held */
	begin(L_EN10MB, LIMITS(2), P_CHICKEN, FROM_PAYLOAD(0), TO_LEN);
	n = pg_build_fragments(frames, &udp4, big, 2000,
			       (const unsigned int[]){ 1480 }, 1, 1501);
	for (i = 0; i < n; i++)
		add(0, &frames[i]);
	finish("en10mb-ipv4-fragment-past-max-bytes");

	/* overlap: the datagram is dropped; the same id then completes */
	begin(L_EN10MB, 0, P_CHICKEN, FROM_PAYLOAD(0), TO_LEN);
	len = ip_payload(&udp4, dance, pl);
	add_frag(0, &udp4, 21, pl, 0, 48, 1);
	add_frag(0, &udp4, 21, pl, 40, 32, 1);
	add_frag(0, &udp4, 21, pl, 48, len - 48, 0);
	add_frag(0, &udp4, 21, pl, 0, 48, 1);
	finish("en10mb-ipv4-overlap");

	begin(L_LOOP, 0, P_CHICKEN, FROM_PAYLOAD(0), TO_LEN);
	len = ip_payload(&udp6, dance, pl);
	add_frag(0, &udp6, 22, pl, 48, len - 48, 0);
	add_frag(0, &udp6, 22, pl, 0, 56, 1);
	add_frag(0, &udp6, 22, pl, 0, 48, 1);
	add_frag(0, &udp6, 22, pl, 48, len - 48, 0);
	finish("loop-ipv6-overlap");

	/* an overlap as long as a gap: counting bytes alone, the datagram
	 * would look whole; it is dropped, and the rest completes anew */
	begin(L_EN10MB, 0, P_CHICKEN, FROM_PAYLOAD(0), TO_LEN);
	len = ip_payload(&udp4, dance, pl);
	add_frag(0, &udp4, 24, pl, 0, 16, 1);
	add_frag(0, &udp4, 24, pl, 8, 16, 1);
	add_frag(0, &udp4, 24, pl, 32, len - 32, 0);
	add_frag(0, &udp4, 24, pl, 0, 32, 1);
	finish("en10mb-ipv4-overlap-gap");

	/* an exact duplicate is ignored */
	begin(L_EN10MB, 0, P_ABAB, FROM_IP(0), TO_LEN);
	len = ip_payload(&udp4, dance, pl);
	add_frag(0, &udp4, 23, pl, 0, 48, 1);
	add_frag(0, &udp4, 23, pl, 0, 48, 1);
	add_frag(0, &udp4, 23, pl, 96, len - 96, 0);
	add_frag(0, &udp4, 23, pl, 48, 48, 1);
	finish("en10mb-ipv4-duplicate");

	/* the first datagram times out (100 ms > 50), the second completes;
	 * capture time also steps back */
	begin(L_EN10MB, 0, P_CHICKEN, FROM_PAYLOAD(0), TO_LEN);
	len = ip_payload(&udp4, dance, pl);
	add_frag(0, &udp4, 31, pl, 0, 48, 1);
	add_frag(100, &udp4, 31, pl, 48, len - 48, 0);
	add_frag(-20, &udp4, 32, pl, 48, len - 48, 0);
	add_frag(10, &udp4, 32, pl, 0, 48, 1);
	finish("en10mb-ipv4-timeout");

	/* 4 KiB (a fragment costs ~800 bytes, a datagram's queue ~300):
	 * five datagrams started, the two oldest evicted to make room, the
	 * rest completed youngest first (oldest first, each completion
	 * would evict the next) */
	begin(L_EN10MB, LIMITS(1), P_CHICKEN, FROM_PAYLOAD(0), TO_LEN);
	len = ip_payload(&udp6, dance, pl);
	for (i = 0; i < 5; i++)
		add_frag(1, &udp6, 40 + i, pl, 0, 48, 1);
	for (i = 5; i-- > 0;)
		add_frag(1, &udp6, 40 + i, pl, 48, len - 48, 0);
	finish("en10mb-ipv6-evict");

	/* 2 fragments a datagram: the third is one too many; a datagram
	 * of two completes */
	begin(L_SLL, LIMITS(3), P_AA, FROM_PAYLOAD(0), TO_LEN);
	len = ip_payload(&udp4, dance, pl);
	add_frag(0, &udp4, 50, pl, 0, 16, 1);
	add_frag(0, &udp4, 50, pl, 16, 16, 1);
	add_frag(0, &udp4, 50, pl, 32, len - 32, 0);
	add_frag(0, &udp4, 51, pl, 48, len - 48, 0);
	add_frag(0, &udp4, 51, pl, 0, 48, 1);
	finish("sll-ipv4-max-frags");

	/* 9 fragments of 8 bytes (limit 8), then past 65535 bytes */
	begin(L_RAW, 0, P_AA, FROM_IP(0), TO_LEN);
	len = ip_payload(&udp4, dance, pl);
	for (i = 0; i < 9; i++)
		add_frag(0, &udp4, 60, pl, 8 * i, 8, 1);
	add_frag(0, &udp4, 60, pl, 72, len - 72, 0);
	add_frag(0, &udp4, 61, pl, 0, 48, 1);
	pg_build_raw_fragment(&frames[3], &udp4, 61, 65528, 0, pl, 16);
	add(0, &frames[3]);
	pg_build_raw_fragment(&frames[3], &udp6, 62, 65528, 0, pl, 16);
	add(0, &frames[3]);
	finish("raw-ipv4-too-many-oversize");

	/* contradictions: a non-final fragment not a multiple of 8, data
	 * past the known end, a second end, an empty fragment */
	begin(L_EN10MB, 0, P_CHICKEN, FROM_PAYLOAD(0), TO_LEN);
	len = ip_payload(&udp4, dance, pl);
	add_frag(0, &udp4, 70, pl, 0, 12, 1);
	add_frag(0, &udp4, 70, pl, 48, len - 48, 0);
	add_frag(0, &udp4, 70, pl, 48, len - 40, 1);
	add_frag(0, &udp4, 71, pl, 48, len - 48, 0);
	add_frag(0, &udp4, 71, pl, 40, 8, 0);
	add_frag(0, &udp4, 72, pl, 8, 0, 1);
	finish("en10mb-ipv4-invalid");

	/* a pattern from the input, ignoring case, across a cut */
	begin(L_EN10MB, ICASE, P_INPUT(7), FROM_PAYLOAD(0), TO_LEN);
	put("ChIcKeN", 7);
	n = pg_build_fragments(frames, &udp4, dance, slen(dance), cuts, 1, 80);
	for (i = 0; i < n; i++)
		add(0, &frames[i]);
	finish("en10mb-input-pattern-icase");
}

/* Windows of every kind, and frames that are not searchable. */
static void windows_and_junk(void)
{
	/* "funky-chicken" of a UDP datagram at 63..76 from the IP header:
	 * a window of exactly it, one a byte short, then the other bases */
	static const unsigned int froms[] = { FROM_IP(63),  FROM_IP(63),
					      FROM_L4(2),   FROM_PAYLOAD(41),
					      FROM_END(20), FROM_PAYLOAD(63) };
	static const unsigned int tos[] = { TO_FROM_PLUS(13), TO_FROM_PLUS(12),
					    TO_LEN_MINUS(5),  TO_MAX,
					    TO_FROM_PLUS(0),  TO_MAX };
	static const unsigned int pats[] = { P_CHICKEN, P_CHICKEN, P_ZEROS,
					     P_X,	P_HTTP,	   P_X };
	static const uint8_t arp[42] = { 0xff, 0xff, 0xff, 0xff, 0xff,
					 0xff, 2,    0,	   0,	 0,
					 0,    1,    0x08, 0x06 };
	char name[64];
	unsigned int i;

	for (i = 0; i < 6; i++) {
		begin(L_EN10MB, 0, pats[i], froms[i], tos[i]);
		if (i == 5) /* the window starts past the end */
			pg_build(&frames[0], &udp4, "X", 1);
		else
			pg_build(&frames[0], i == 2 || i == 4 ? &tcp6 : &udp4,
				 dance, slen(dance));
		add(0, &frames[0]);
		snprintf(name, sizeof(name), "en10mb-window-%u", i);
		finish(name);
	}

	begin(L_EN10MB, 0, P_CHICKEN, FROM_PAYLOAD(0), TO_LEN);
	put_frame(0, arp, sizeof(arp));
	pg_build(&frames[0], &udp4, dance, slen(dance));
	put_frame(0, frames[0].bytes, 40); /* cut short */
	frames[0].bytes[ETH_HLEN] = 0x55;  /* IP version 5 */
	put_frame(0, frames[0].bytes, frames[0].len);
	put_frame(0, frames[0].bytes, 10); /* shorter than Ethernet */
	pg_build(&frames[0], &udp4, dance, slen(dance));
	add(0, &frames[0]);
	finish("en10mb-junk");
}

/* One TCP segment of @f carrying text[a, b), sequence numbers from @isn
 * (the SYN's), flags PSH|ACK unless given. */
static void tcp_seg(struct pg_flow *f, uint32_t isn, const char *text,
		    unsigned int a, unsigned int b, uint8_t flags)
{
	f->tcp_seq = isn + 1 + a;
	f->tcp_flags = flags ? flags : 0x18;
	pg_build(&tmp, f, text + a, b - a);
	add(1, &tmp);
}

static void tcp_syn(struct pg_flow *f, uint32_t isn)
{
	f->tcp_seq = isn;
	f->tcp_flags = 0x02;
	pg_build(&tmp, f, NULL, 0);
	add(1, &tmp);
}

/* TCP conversations for the stream reassembly: "GET /" cut between
 * segments, in order, reversed, overlapping with other bytes, a hole that
 * is a gap at the end, the sequence numbers wrapping, picked up midstream,
 * data after a RST. */
static void tcp_streams(void)
{
	struct pg_flow f = tcp4;
	unsigned int n = slen(http);
	char other[sizeof(http)];

	begin(L_EN10MB, 0, P_GET, FROM_PAYLOAD(0), TO_LEN);
	tcp_syn(&f, 100);
	tcp_seg(&f, 100, http, 0, 2, 0);
	tcp_seg(&f, 100, http, 2, 4, 0);
	tcp_seg(&f, 100, http, 4, n, 0);
	tcp_seg(&f, 100, http, n, n, 0x11);
	finish("tcp-get-cut-in-order");

	begin(L_EN10MB, 0, P_GET, FROM_PAYLOAD(0), TO_LEN);
	tcp_syn(&f, 5000);
	tcp_seg(&f, 5000, http, 30, n, 0);
	tcp_seg(&f, 5000, http, 3, 30, 0);
	tcp_seg(&f, 5000, http, 0, 3, 0);
	finish("tcp-get-cut-reversed");

	memcpy(other, http, sizeof(http));
	memcpy(other + 2, "XXXXXX", 6);
	begin(L_EN10MB, 0, P_GET, FROM_PAYLOAD(0), TO_LEN);
	tcp_syn(&f, 7);
	tcp_seg(&f, 7, http, 10, 20, 0);
	tcp_seg(&f, 7, other, 4, 14, 0);
	tcp_seg(&f, 7, other, 12, 24, 0);
	tcp_seg(&f, 7, http, 0, 6, 0);
	tcp_seg(&f, 7, http, 20, n, 0);
	finish("tcp-overlaps-other-bytes");

	begin(L_EN10MB, 0, P_GET, FROM_PAYLOAD(0), TO_LEN);
	tcp_syn(&f, 1);
	tcp_seg(&f, 1, http, 0, 3, 0);
	tcp_seg(&f, 1, http, 9, n, 0);
	finish("tcp-hole-then-end");

	f = tcp6;
	begin(L_EN10MB, ICASE, P_HTTP, FROM_PAYLOAD(0), TO_LEN);
	tcp_syn(&f, 0xfffffff0u);
	tcp_seg(&f, 0xfffffff0u, http, 0, 10, 0);
	tcp_seg(&f, 0xfffffff0u, http, 10, 17, 0);
	tcp_seg(&f, 0xfffffff0u, http, 17, n, 0);
	finish("tcp6-seq-wrap");

	f = tcp4;
	f.sport = 40001;
	begin(L_EN10MB, 0, P_CHICKEN, FROM_PAYLOAD(0), TO_LEN);
	tcp_seg(&f, 900, http, 0, 60, 0);
	tcp_seg(&f, 900, http, 60, n, 0);
	tcp_seg(&f, 900, http, 40, 50, 0x04);
	tcp_seg(&f, 900, http, 50, 70, 0);
	finish("tcp-midstream-rst");
}

int main(int argc, char **argv)
{
	outdir = argc > 1 ? argv[1] : "fuzz/corpus-packets";
	whole_datagrams();
	fragments();
	windows_and_junk();
	tcp_streams();
	printf("make-corpus-packets: %u seeds in %s\n", written, outdir);
	return 0;
}
