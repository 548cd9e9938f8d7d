/*
 * test_tspkt_decode.c - tspkt's frame decoder: every supported link type,
 * VLAN tags, IPv4 options, IPv6 extension headers, fragments, transport
 * headers; and hostile input: every prefix of valid frames, bad lengths,
 * lying length fields, endless extension-header chains, random mutations.
 * Frames under test sit in allocations of exactly their size, so that
 * AddressSanitizer sees any read past the capture.
 */
#define _DEFAULT_SOURCE /* pcap.h uses the BSD u_char/u_int types */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <netinet/in.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decode.h"
#include "pcapgen.h"
#include "testsupport.h"

#define ETH_HLEN 14u
#define TS_NS 1234567890123456789LL

static const struct pg_flow tcp4 = {
	4, "192.0.2.1", "198.51.100.2", IPPROTO_TCP, 40000, 80, 1, 0
};
static const struct pg_flow udp4 = {
	4, "192.0.2.1", "198.51.100.2", IPPROTO_UDP, 5353, 53, 0, 0
};
static const struct pg_flow tcp6 = {
	6, "2001:db8::1", "2001:db8::2", IPPROTO_TCP, 40000, 443, 7, 0
};
static const struct pg_flow udp6 = {
	6, "2001:db8::1", "2001:db8::2", IPPROTO_UDP, 1111, 2222, 0, 0
};

static const char payload[] = "GET /index.html HTTP/1.1\r\nHost: x\r\n\r\n";
#define PAYLOAD_LEN ((unsigned int)sizeof(payload) - 1)

/* A frame being edited by hand. */
struct raw {
	uint8_t b[2048];
	unsigned int len;
};

static struct pg_frame *frame_buf(void)
{
	struct pg_frame *f = malloc(sizeof(*f));

	assert_non_null(f);
	return f;
}

static void from_pg(struct raw *r, const struct pg_flow *flow,
		    unsigned int payload_len)
{
	struct pg_frame *f = frame_buf();

	pg_build(f, flow, payload, payload_len);
	assert_true(f->len <= sizeof(r->b));
	memcpy(r->b, f->bytes, f->len);
	r->len = f->len;
	free(f);
}

static void put16(uint8_t *p, unsigned int v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static unsigned int get16(const uint8_t *p)
{
	return (unsigned int)p[0] << 8 | p[1];
}

/* Insert @n bytes at @at. */
static void insert(struct raw *r, unsigned int at, const void *bytes,
		   unsigned int n)
{
	assert_true(r->len + n <= sizeof(r->b));
	memmove(r->b + at + n, r->b + at, r->len - at);
	memcpy(r->b + at, bytes, n);
	r->len += n;
}

/* Replace the 14-byte Ethernet header by @n bytes of @link. */
static void relink(struct raw *r, const void *link, unsigned int n)
{
	memmove(r->b + n, r->b + ETH_HLEN, r->len - ETH_HLEN);
	if (n)
		memcpy(r->b, link, n);
	r->len = r->len - ETH_HLEN + n;
}

/* Decode @len bytes of @bytes from an exact-size heap copy. */
static struct sk_buff *decode(int linktype, const uint8_t *bytes,
			      unsigned int len, struct pkt_meta *meta,
			      struct ip_frag_info *frag, const char **why)
{
	uint8_t *copy = malloc(len ? len : 1);
	struct sk_buff *skb;

	assert_non_null(copy);
	if (len)
		memcpy(copy, bytes, len);
	skb = pkt_decode_frame(linktype, copy, len, TS_NS, meta, frag, why);
	free(copy); /* the buffer must hold its own copy */
	return skb;
}

/* Decode @r, expecting IP at @l3off; check the buffer against the frame. */
static struct sk_buff *decode_ok(int linktype, const struct raw *r,
				 unsigned int l3off, struct pkt_meta *meta,
				 struct ip_frag_info *frag)
{
	const char *why = "unset";
	struct sk_buff *skb = decode(linktype, r->b, r->len, meta, frag, &why);
	uint8_t *copy;

	if (!skb)
		fail_msg("decode failed: %s", why ? why : "(not IP)");
	assert_null(why);
	assert_int_equal(meta->family, (r->b[l3off] >> 4));
	assert_int_equal(skb->len, meta->net_len);
	assert_true(l3off + meta->net_len <= r->len);
	assert_int_equal(skb_network_offset(skb), 0);
	assert_int_equal(skb->network_header, skb->mac_header + l3off);
	assert_int_equal(skb->protocol, meta->family == 4 ? 0x0800 : 0x86dd);
	assert_true(skb->tstamp_ns == TS_NS);
	copy = malloc(skb->len);
	assert_non_null(copy);
	assert_int_equal(skb_copy_bits(skb, 0, copy, (int)skb->len), 0);
	assert_memory_equal(copy, r->b + l3off, skb->len);
	assert_memory_equal(skb_mac_header(skb), r->b, l3off);
	free(copy);
	return skb;
}

static void expect_bad(int linktype, const struct raw *r, const char *reason)
{
	struct pkt_meta meta;
	struct ip_frag_info frag;
	const char *why = NULL;
	struct sk_buff *skb =
		decode(linktype, r->b, r->len, &meta, &frag, &why);

	if (skb)
		fail_msg("decoded a frame that should fail with \"%s\"",
			 reason);
	assert_non_null(why);
	if (!strstr(why, reason))
		fail_msg("reason \"%s\", expected \"%s\"", why, reason);
	assert_int_equal(meta.family, 0);
}

static void expect_transport(struct sk_buff *skb, struct pkt_meta *meta,
			     uint8_t proto, uint16_t sport, uint16_t dport,
			     unsigned int payload_off)
{
	uint8_t buf[4];
	const uint8_t *ports;

	pkt_decode_transport(skb, meta);
	assert_true(meta->has_transport);
	assert_int_equal(meta->l4proto, proto);
	assert_int_equal(meta->sport, sport);
	assert_int_equal(meta->dport, dport);
	assert_int_equal(meta->payload_off, payload_off);
	/* the transport header is where the ports are */
	ports = skb_header_pointer(skb, skb_transport_offset(skb), 4, buf);
	assert_non_null(ports);
	assert_int_equal(get16(ports), sport);
	assert_int_equal(get16(ports + 2), dport);
}

/* ---- link types ----------------------------------------------------------- */

static void test_ethernet(void **state)
{
	struct pkt_meta meta;
	struct ip_frag_info frag;
	struct sk_buff *skb;
	struct raw r;
	static const uint8_t src4[4] = { 192, 0, 2, 1 },
			     dst4[4] = { 198, 51, 100, 2 };

	(void)state;
	from_pg(&r, &tcp4, PAYLOAD_LEN);
	skb = decode_ok(DLT_EN10MB, &r, ETH_HLEN, &meta, &frag);
	assert_int_equal(meta.l4proto, IPPROTO_TCP);
	assert_memory_equal(meta.src, src4, 4);
	assert_memory_equal(meta.dst, dst4, 4);
	assert_int_equal(meta.net_len, 20 + 20 + PAYLOAD_LEN);
	assert_false(frag.is_fragment);
	assert_false(meta.has_transport);
	expect_transport(skb, &meta, IPPROTO_TCP, 40000, 80, 40);
	kfree_skb(skb);

	from_pg(&r, &udp6, PAYLOAD_LEN);
	skb = decode_ok(DLT_EN10MB, &r, ETH_HLEN, &meta, &frag);
	assert_int_equal(meta.net_len, 40 + 8 + PAYLOAD_LEN);
	assert_int_equal(meta.src[15], 1);
	assert_int_equal(meta.dst[15], 2);
	expect_transport(skb, &meta, IPPROTO_UDP, 1111, 2222, 48);
	kfree_skb(skb);
}

static void test_ethernet_padding_dropped(void **state)
{
	struct pkt_meta meta;
	struct ip_frag_info frag;
	struct sk_buff *skb;
	struct raw r;

	(void)state;
	from_pg(&r, &udp4, 4); /* 46 bytes, padded to Ethernet's 60 */
	memset(r.b + r.len, 0xee, 60 - r.len);
	r.len = 60;
	skb = decode_ok(DLT_EN10MB, &r, ETH_HLEN, &meta, &frag);
	assert_int_equal(skb->len, 32);
	kfree_skb(skb);
}

static void test_vlan(void **state)
{
	static const uint8_t dot1q[4] = { 0x81, 0x00, 0x00, 0x64 };
	static const uint8_t dot1ad[4] = { 0x88, 0xa8, 0x00, 0x0a };
	struct pkt_meta meta;
	struct ip_frag_info frag;
	struct sk_buff *skb;
	struct raw r;
	unsigned int i;

	(void)state;
	/* the tag goes between the source MAC and the EtherType */
	from_pg(&r, &tcp6, PAYLOAD_LEN);
	insert(&r, 12, dot1q, 4);
	skb = decode_ok(DLT_EN10MB, &r, ETH_HLEN + 4, &meta, &frag);
	expect_transport(skb, &meta, IPPROTO_TCP, 40000, 443, 60);
	kfree_skb(skb);

	from_pg(&r, &udp4, PAYLOAD_LEN);
	insert(&r, 12, dot1q, 4);
	insert(&r, 12, dot1ad, 4); /* QinQ: outer S-tag, inner C-tag */
	skb = decode_ok(DLT_EN10MB, &r, ETH_HLEN + 8, &meta, &frag);
	expect_transport(skb, &meta, IPPROTO_UDP, 5353, 53, 28);
	kfree_skb(skb);

	/* a tower of tags is refused, not walked forever */
	from_pg(&r, &udp4, PAYLOAD_LEN);
	for (i = 0; i < 20; i++)
		insert(&r, 12, dot1q, 4);
	expect_bad(DLT_EN10MB, &r, "VLAN");
}

static void test_not_ip_skipped_quietly(void **state)
{
	struct pkt_meta meta;
	struct ip_frag_info frag;
	const char *why = "unset";
	struct raw r;

	(void)state;
	from_pg(&r, &udp4, PAYLOAD_LEN);
	put16(r.b + 12, 0x0806); /* ARP */
	assert_null(decode(DLT_EN10MB, r.b, r.len, &meta, &frag, &why));
	assert_null(why);
	assert_int_equal(meta.family, 0);
	put16(r.b + 12, 100); /* an 802.3 length: LLC */
	why = "unset";
	assert_null(decode(DLT_EN10MB, r.b, r.len, &meta, &frag, &why));
	assert_null(why);

	assert_false(pkt_linktype_supported(105)); /* 802.11 */
	expect_bad(105, &r, "unsupported link type");
}

static void test_raw_ip_link_types(void **state)
{
	struct pkt_meta meta;
	struct ip_frag_info frag;
	struct sk_buff *skb;
	struct raw r4, r6;

	(void)state;
	from_pg(&r4, &tcp4, PAYLOAD_LEN);
	relink(&r4, NULL, 0);
	from_pg(&r6, &udp6, PAYLOAD_LEN);
	relink(&r6, NULL, 0);

	assert_true(pkt_linktype_supported(DLT_RAW));
	skb = decode_ok(DLT_RAW, &r4, 0, &meta, &frag);
	expect_transport(skb, &meta, IPPROTO_TCP, 40000, 80, 40);
	kfree_skb(skb);
	skb = decode_ok(DLT_RAW, &r6, 0, &meta, &frag);
	expect_transport(skb, &meta, IPPROTO_UDP, 1111, 2222, 48);
	kfree_skb(skb);
	skb = decode_ok(DLT_IPV4, &r4, 0, &meta, &frag);
	kfree_skb(skb);
	skb = decode_ok(DLT_IPV6, &r6, 0, &meta, &frag);
	kfree_skb(skb);

	/* the link type and the version nibble disagree */
	expect_bad(DLT_IPV4, &r6, "IP version");
	expect_bad(DLT_IPV6, &r4, "IP version");
	r4.b[0] = 0x55;
	expect_bad(DLT_RAW, &r4, "IP version");
}

static void test_loopback_link_types(void **state)
{
	static const uint8_t af_inet_le[4] = { 2, 0, 0, 0 };
	static const uint8_t af_inet_be[4] = { 0, 0, 0, 2 };
	static const uint8_t af_inet6_darwin_le[4] = { 30, 0, 0, 0 };
	static const uint8_t af_inet6_bsd_be[4] = { 0, 0, 0, 24 };
	static const uint8_t af_other[4] = { 0, 0, 0, 7 };
	struct pkt_meta meta;
	struct ip_frag_info frag;
	const char *why;
	struct sk_buff *skb;
	struct raw r;

	(void)state;
	/* DLT_NULL is in the writer's byte order, either may come */
	from_pg(&r, &tcp4, PAYLOAD_LEN);
	relink(&r, af_inet_le, 4);
	skb = decode_ok(DLT_NULL, &r, 4, &meta, &frag);
	expect_transport(skb, &meta, IPPROTO_TCP, 40000, 80, 40);
	kfree_skb(skb);
	memcpy(r.b, af_inet_be, 4);
	kfree_skb(decode_ok(DLT_NULL, &r, 4, &meta, &frag));
	kfree_skb(decode_ok(DLT_LOOP, &r, 4, &meta, &frag));
	memcpy(r.b, af_other, 4);
	why = "unset";
	assert_null(decode(DLT_LOOP, r.b, r.len, &meta, &frag, &why));
	assert_null(why);

	from_pg(&r, &udp6, PAYLOAD_LEN);
	relink(&r, af_inet6_darwin_le, 4);
	kfree_skb(decode_ok(DLT_NULL, &r, 4, &meta, &frag));
	memcpy(r.b, af_inet6_bsd_be, 4);
	kfree_skb(decode_ok(DLT_LOOP, &r, 4, &meta, &frag));
}

static void test_linux_cooked(void **state)
{
	/* packet type, ARPHRD_ETHER, address length 6, address, protocol */
	static const uint8_t sll_v4[16] = { 0, 0, 0, 1, 0, 6, 2,    0,
					    0, 0, 0, 1, 0, 0, 0x08, 0x00 };
	/* protocol, reserved, ifindex, ARPHRD_ETHER, type, addr len, addr */
	static const uint8_t sll2_v6[20] = {
		0x86, 0xdd, 0, 0, 0, 0, 0, 3, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0
	};
	struct pkt_meta meta;
	struct ip_frag_info frag;
	const char *why;
	struct sk_buff *skb;
	struct raw r;

	(void)state;
	from_pg(&r, &tcp4, PAYLOAD_LEN);
	relink(&r, sll_v4, sizeof(sll_v4));
	skb = decode_ok(DLT_LINUX_SLL, &r, 16, &meta, &frag);
	expect_transport(skb, &meta, IPPROTO_TCP, 40000, 80, 40);
	kfree_skb(skb);
	put16(r.b + 14, 0x0806);
	why = "unset";
	assert_null(decode(DLT_LINUX_SLL, r.b, r.len, &meta, &frag, &why));
	assert_null(why);

	from_pg(&r, &tcp6, PAYLOAD_LEN);
	relink(&r, sll2_v6, sizeof(sll2_v6));
	skb = decode_ok(DLT_LINUX_SLL2, &r, 20, &meta, &frag);
	expect_transport(skb, &meta, IPPROTO_TCP, 40000, 443, 60);
	kfree_skb(skb);
}

/* ---- IP headers ----------------------------------------------------------- */

static void test_ipv4_options(void **state)
{
	static const uint8_t nops[8] = { 1, 1, 1, 1, 1, 1, 1, 0 };
	struct pkt_meta meta;
	struct ip_frag_info frag;
	struct sk_buff *skb;
	struct raw r;

	(void)state;
	from_pg(&r, &udp4, PAYLOAD_LEN);
	insert(&r, ETH_HLEN + 20, nops, 8);
	r.b[ETH_HLEN] = 0x47;
	put16(r.b + ETH_HLEN + 2, get16(r.b + ETH_HLEN + 2) + 8);
	skb = decode_ok(DLT_EN10MB, &r, ETH_HLEN, &meta, &frag);
	expect_transport(skb, &meta, IPPROTO_UDP, 5353, 53, 36);
	kfree_skb(skb);
}

static void test_ipv4_bad_lengths(void **state)
{
	struct raw r, bad;
	unsigned int total;

	(void)state;
	from_pg(&r, &tcp4, PAYLOAD_LEN);
	total = get16(r.b + ETH_HLEN + 2);

	bad = r;
	bad.b[ETH_HLEN] = 0x44; /* IHL 16 bytes */
	expect_bad(DLT_EN10MB, &bad, "bad IPv4 header length");
	bad.b[ETH_HLEN] = 0x40;
	expect_bad(DLT_EN10MB, &bad, "bad IPv4 header length");

	bad = r; /* 60-byte header in a 20-byte one's place, cut short */
	bad.b[ETH_HLEN] = 0x4f;
	bad.len = ETH_HLEN + 40;
	expect_bad(DLT_EN10MB, &bad, "truncated IPv4 options");

	bad = r;
	put16(bad.b + ETH_HLEN + 2, 19);
	expect_bad(DLT_EN10MB, &bad, "bad IPv4 total length");

	bad = r; /* the header claims more than was captured */
	put16(bad.b + ETH_HLEN + 2, total + 1);
	expect_bad(DLT_EN10MB, &bad, "truncated IPv4 packet");
	put16(bad.b + ETH_HLEN + 2, 65535);
	expect_bad(DLT_EN10MB, &bad, "truncated IPv4 packet");

	bad = r;
	bad.b[ETH_HLEN] = 0x65;
	expect_bad(DLT_EN10MB, &bad, "IP version");
}

/* An IPv6 frame with extension headers @ext (types in @types, chained by
 * their first byte, which this sets) before a UDP header. */
static void build_ipv6_ext(struct raw *r, const uint8_t *types,
			   const unsigned int *lens, unsigned int n)
{
	unsigned int i, at = ETH_HLEN + 40, added = 0;
	uint8_t hdr[64];

	from_pg(r, &udp6, PAYLOAD_LEN);
	for (i = 0; i < n; i++) {
		memset(hdr, 0, sizeof(hdr));
		assert_true(lens[i] <= sizeof(hdr));
		hdr[0] = (uint8_t)(i + 1 < n ? types[i + 1] : IPPROTO_UDP);
		if (types[i] == 44) /* fragment: offset 0, M 0 (atomic) */
			hdr[7] = 0x42;
		else if (types[i] == 51) /* AH: length in 4-byte units - 2 */
			hdr[1] = (uint8_t)(lens[i] / 4 - 2);
		else
			hdr[1] = (uint8_t)(lens[i] / 8 - 1);
		if (types[i] == 60 || types[i] == 0) {
			hdr[2] = 1; /* PadN option covering the rest */
			hdr[3] = (uint8_t)(lens[i] - 4);
		}
		insert(r, at, hdr, lens[i]);
		at += lens[i];
		added += lens[i];
	}
	r->b[ETH_HLEN + 6] = n ? types[0] : IPPROTO_UDP;
	put16(r->b + ETH_HLEN + 4, get16(r->b + ETH_HLEN + 4) + added);
}

static void test_ipv6_extension_headers(void **state)
{
	static const uint8_t types[] = { 0, 43, 60, 51, 44, 60 };
	static const unsigned int lens[] = { 8, 24, 16, 16, 8, 8 };
	struct pkt_meta meta;
	struct ip_frag_info frag;
	struct sk_buff *skb;
	struct raw r;

	(void)state;
	build_ipv6_ext(&r, types, lens, 6);
	skb = decode_ok(DLT_EN10MB, &r, ETH_HLEN, &meta, &frag);
	/* an atomic fragment is a whole datagram */
	assert_false(frag.is_fragment);
	assert_int_equal(meta.l4proto, IPPROTO_UDP);
	expect_transport(skb, &meta, IPPROTO_UDP, 1111, 2222, 40 + 80 + 8);
	kfree_skb(skb);

	/* hop-by-hop anywhere but first is refused */
	{
		static const uint8_t late_hop[] = { 60, 0 };
		static const unsigned int late_lens[] = { 8, 8 };

		build_ipv6_ext(&r, late_hop, late_lens, 2);
		expect_bad(DLT_EN10MB, &r, "hop-by-hop");
	}
}

static void test_ipv6_bad_lengths(void **state)
{
	static const uint8_t types[] = { 0, 60 };
	static const unsigned int lens[] = { 8, 16 };
	struct raw r, bad;

	(void)state;
	build_ipv6_ext(&r, types, lens, 2);

	bad = r; /* payload length past the capture */
	put16(bad.b + ETH_HLEN + 4, get16(bad.b + ETH_HLEN + 4) + 1);
	expect_bad(DLT_EN10MB, &bad, "truncated IPv6 packet");
	put16(bad.b + ETH_HLEN + 4, 65535);
	expect_bad(DLT_EN10MB, &bad, "truncated IPv6 packet");

	bad = r; /* payload length too short for the extension headers */
	put16(bad.b + ETH_HLEN + 4, 12);
	expect_bad(DLT_EN10MB, &bad, "truncated IPv6 extension header");
	put16(bad.b + ETH_HLEN + 4, 4);
	expect_bad(DLT_EN10MB, &bad, "truncated IPv6 extension header");

	bad = r; /* an extension header claiming 2 KiB */
	bad.b[ETH_HLEN + 40 + 1] = 255;
	expect_bad(DLT_EN10MB, &bad, "truncated IPv6 extension header");
}

static void test_ipv6_endless_chain(void **state)
{
	struct pkt_meta meta;
	struct ip_frag_info frag;
	struct sk_buff *skb;
	uint8_t types[200];
	unsigned int lens[200], i;
	struct raw r;

	(void)state;
	for (i = 0; i < 200; i++) {
		types[i] = 60;
		lens[i] = 8;
	}
	build_ipv6_ext(&r, types, lens, 200);
	expect_bad(DLT_EN10MB, &r, "too many IPv6 extension headers");

	/* a chain that loops on itself by content still ends: 8 headers
	 * is fine, the bound is not too tight for real packets */
	build_ipv6_ext(&r, types, lens, 8);
	skb = decode_ok(DLT_EN10MB, &r, ETH_HLEN, &meta, &frag);
	expect_transport(skb, &meta, IPPROTO_UDP, 1111, 2222, 40 + 64 + 8);
	kfree_skb(skb);
}

static void test_fragments(void **state)
{
	static const unsigned int cuts[2] = { 24, 40 };
	struct pg_frame *f = malloc(3 * sizeof(*f));
	struct pkt_meta meta;
	struct ip_frag_info frag;
	const char *why;
	struct sk_buff *skb;
	unsigned int i, n;
	const struct pg_flow *flows[2] = { &udp4, &tcp6 };
	unsigned int fam;

	(void)state;
	assert_non_null(f);
	for (fam = 0; fam < 2; fam++) {
		n = pg_build_fragments(f, flows[fam], payload, PAYLOAD_LEN,
				       cuts, 2, 0x1234);
		assert_int_equal(n, 3);
		for (i = 0; i < n; i++) {
			skb = decode(DLT_EN10MB, f[i].bytes, f[i].len, &meta,
				     &frag, &why);
			assert_non_null(skb);
			assert_true(frag.is_fragment);
			assert_int_equal(frag.id, 0x1234);
			assert_int_equal(frag.offset, i ? cuts[i - 1] : 0);
			assert_int_equal(frag.more_fragments, i < 2);
			assert_int_equal(frag.payload_len,
					 i == 0 ? 24 :
					 i == 1 ? 16 :
						  (fam ? 20u : 8u) +
							  PAYLOAD_LEN - 40);
			assert_int_equal(meta.l4proto, flows[fam]->proto);
			/* the payload is the buffer's tail */
			assert_int_equal(skb->len,
					 (fam ? 48u : 20u) + frag.payload_len);
			pkt_decode_transport(skb, &meta);
			/* the first fragment carries the ports; later ones not */
			assert_int_equal(meta.has_transport, i == 0);
			kfree_skb(skb);
		}
	}
	free(f);
}

static void test_transport_headers(void **state)
{
	struct pkt_meta meta;
	struct ip_frag_info frag;
	struct sk_buff *skb;
	struct raw r, bad;

	(void)state;
	/* TCP with options: data offset 8 words */
	from_pg(&r, &tcp4, PAYLOAD_LEN);
	r.b[ETH_HLEN + 20 + 12] = 0x80;
	skb = decode_ok(DLT_EN10MB, &r, ETH_HLEN, &meta, &frag);
	expect_transport(skb, &meta, IPPROTO_TCP, 40000, 80, 20 + 32);
	kfree_skb(skb);

	bad = r; /* data offset below 5 words */
	bad.b[ETH_HLEN + 20 + 12] = 0x40;
	skb = decode_ok(DLT_EN10MB, &bad, ETH_HLEN, &meta, &frag);
	pkt_decode_transport(skb, &meta);
	assert_false(meta.has_transport);
	kfree_skb(skb);

	bad = r; /* data offset past the datagram */
	bad.len = ETH_HLEN + 20 + 24;
	put16(bad.b + ETH_HLEN + 2, 44);
	skb = decode_ok(DLT_EN10MB, &bad, ETH_HLEN, &meta, &frag);
	pkt_decode_transport(skb, &meta);
	assert_false(meta.has_transport);
	kfree_skb(skb);

	/* SCTP and ICMP: the same bytes, other protocol numbers */
	bad = r;
	bad.b[ETH_HLEN + 9] = IPPROTO_SCTP;
	skb = decode_ok(DLT_EN10MB, &bad, ETH_HLEN, &meta, &frag);
	pkt_decode_transport(skb, &meta);
	assert_true(meta.has_transport);
	assert_int_equal(meta.sport, 40000);
	assert_int_equal(meta.payload_off, 32);
	kfree_skb(skb);
	bad.b[ETH_HLEN + 9] = IPPROTO_ICMP;
	skb = decode_ok(DLT_EN10MB, &bad, ETH_HLEN, &meta, &frag);
	pkt_decode_transport(skb, &meta);
	assert_true(meta.has_transport);
	assert_int_equal(meta.sport, 0);
	assert_int_equal(meta.payload_off, 28);
	kfree_skb(skb);
	bad.b[ETH_HLEN + 9] = 47; /* GRE: not read */
	skb = decode_ok(DLT_EN10MB, &bad, ETH_HLEN, &meta, &frag);
	pkt_decode_transport(skb, &meta);
	assert_false(meta.has_transport);
	kfree_skb(skb);

	from_pg(&r, &udp6, PAYLOAD_LEN);
	r.b[ETH_HLEN + 6] = IPPROTO_ICMPV6;
	skb = decode_ok(DLT_EN10MB, &r, ETH_HLEN, &meta, &frag);
	pkt_decode_transport(skb, &meta);
	assert_true(meta.has_transport);
	assert_int_equal(meta.l4proto, IPPROTO_ICMPV6);
	assert_int_equal(meta.payload_off, 48);
	kfree_skb(skb);
}

/* The largest IPv6 packet behind Ethernet passes the 64 KiB a buffer's
 * linear part may hold: it is read whole all the same, and its Ethernet
 * header is kept (-w writes the frame from it). */
static void test_largest_ipv6_packet(void **state)
{
	struct pg_frame *f = frame_buf();
	uint8_t *big = malloc(65535), *copy;
	struct pkt_meta meta;
	struct ip_frag_info frag;
	struct sk_buff *skb;
	const char *why;

	(void)state;
	assert_non_null(big);
	memset(big, 'z', 65535);
	pg_build(f, &udp6, big, 65535 - 8);
	assert_int_equal(f->len, ETH_HLEN + 40 + 65535);
	skb = decode(DLT_EN10MB, f->bytes, f->len, &meta, &frag, &why);
	assert_non_null(skb);
	assert_int_equal(skb->len, 40 + 65535);
	assert_int_equal(meta.net_len, 40 + 65535);
	assert_int_equal(skb->network_header, skb->mac_header + ETH_HLEN);
	assert_memory_equal(skb_mac_header(skb), f->bytes, ETH_HLEN);
	copy = malloc(skb->len);
	assert_non_null(copy);
	assert_int_equal(skb_copy_bits(skb, 0, copy, (int)skb->len), 0);
	assert_memory_equal(copy, f->bytes + ETH_HLEN, skb->len);
	pkt_decode_transport(skb, &meta);
	assert_true(meta.has_transport);
	assert_int_equal(meta.sport, 1111);
	kfree_skb(skb);
	free(copy);
	free(big);
	free(f);
}

/* pcapgen's files read back through libpcap decode to what was written;
 * a frame stored cut short is refused as truncated. */
static void test_capture_round_trip(void **state)
{
	char path[] = "/tmp/test_tspkt_decode.XXXXXX";
	char errbuf[PCAP_ERRBUF_SIZE];
	struct pg_frame *f = frame_buf();
	struct pg_writer *w;
	struct pcap_pkthdr *h;
	const u_char *data;
	pcap_t *p;
	struct pkt_meta meta;
	struct ip_frag_info frag;
	struct sk_buff *skb;
	const char *why;
	int fd = mkstemp(path), n = 0;

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	w = pg_open(path, 0);
	assert_non_null(w);
	pg_build(f, &tcp4, payload, PAYLOAD_LEN);
	pg_write(w, f, 1700000000123456LL, 0);
	pg_write(w, f, 1700000001000000LL, 50); /* stored cut short */
	pg_build(f, &udp6, payload, PAYLOAD_LEN);
	pg_write(w, f, 1700000002000000LL, 0);
	pg_close(w);

	p = pcap_open_offline(path, errbuf);
	if (!p)
		fail_msg("%s", errbuf);
	assert_int_equal(pcap_datalink(p), DLT_EN10MB);
	while (pcap_next_ex(p, &h, &data) == 1) {
		skb = pkt_decode_frame(pcap_datalink(p), data, h->caplen,
				       (int64_t)h->ts.tv_sec * 1000000000 +
					       h->ts.tv_usec * 1000,
				       &meta, &frag, &why);
		if (n == 1) {
			assert_int_equal(h->caplen, 50);
			assert_int_equal(h->len, ETH_HLEN + 40 + PAYLOAD_LEN);
			assert_null(skb);
			assert_non_null(why);
			assert_non_null(strstr(why, "truncated"));
		} else {
			assert_non_null(skb);
			assert_int_equal(meta.family, n == 0 ? 4 : 6);
			if (n == 0)
				assert_true(skb->tstamp_ns ==
					    1700000000123456000LL);
			kfree_skb(skb);
		}
		n++;
	}
	assert_int_equal(n, 3);
	pcap_close(p);
	unlink(path);
	free(f);
}

/* ---- hostile input -------------------------------------------------------- */

/* Every prefix of a valid frame whose IP datagram ends at the frame's end
 * is refused with a reason (and read within its bounds). */
static void all_prefixes_fail(int linktype, const struct raw *r)
{
	struct pkt_meta meta;
	struct ip_frag_info frag;
	struct sk_buff *skb;
	const char *why;
	unsigned int len;

	skb = decode(linktype, r->b, r->len, &meta, &frag, &why);
	assert_non_null(skb);
	kfree_skb(skb);
	for (len = 0; len < r->len; len++) {
		why = NULL;
		skb = decode(linktype, r->b, len, &meta, &frag, &why);
		if (skb)
			fail_msg("a %u-byte prefix of %u decoded", len, r->len);
		if (!why)
			fail_msg("no reason for a %u-byte prefix", len);
	}
}

static void test_every_prefix(void **state)
{
	static const uint8_t dot1q[4] = { 0x81, 0x00, 0x00, 0x64 };
	static const uint8_t sll2[20] = { 0x08, 0x00 };
	static const uint8_t types[] = { 0, 43, 44, 60 };
	static const unsigned int lens[] = { 8, 24, 8, 16 };
	struct raw r;

	(void)state;
	from_pg(&r, &tcp4, PAYLOAD_LEN);
	all_prefixes_fail(DLT_EN10MB, &r);
	insert(&r, 12, dot1q, 4);
	all_prefixes_fail(DLT_EN10MB, &r);
	from_pg(&r, &tcp4, PAYLOAD_LEN);
	relink(&r, sll2, sizeof(sll2));
	all_prefixes_fail(DLT_LINUX_SLL2, &r);
	from_pg(&r, &udp6, PAYLOAD_LEN);
	all_prefixes_fail(DLT_EN10MB, &r);
	build_ipv6_ext(&r, types, lens, 4);
	all_prefixes_fail(DLT_EN10MB, &r);
	relink(&r, NULL, 0);
	all_prefixes_fail(DLT_RAW, &r);
}

/* Random bytes changed in valid frames of every link type: never a crash
 * or an out-of-bounds read; what decodes is self-consistent. */
static void test_random_mutations(void **state)
{
	static const uint8_t null_hdr[4] = { 2, 0, 0, 0 };
	static const uint8_t sll[16] = { [14] = 0x86, [15] = 0xdd };
	static const uint8_t types[] = { 0, 60, 44 };
	static const unsigned int lens[] = { 8, 16, 8 };
	static const int links[] = { DLT_EN10MB, DLT_RAW, DLT_NULL,
				     DLT_LINUX_SLL };
	struct pkt_meta meta;
	struct ip_frag_info frag;
	struct sk_buff *skb;
	struct raw base[4], r;
	const char *why;
	struct rng rng = { test_seed("tspkt decode mutations", 42) };
	unsigned int i, k, flips, which;

	(void)state;
	build_ipv6_ext(&base[0], types, lens, 3);
	from_pg(&base[1], &tcp4, PAYLOAD_LEN);
	relink(&base[1], NULL, 0);
	from_pg(&base[2], &udp4, PAYLOAD_LEN);
	relink(&base[2], null_hdr, 4);
	build_ipv6_ext(&base[3], types, lens, 2);
	relink(&base[3], sll, sizeof(sll));

	for (i = 0; i < 20000; i++) {
		which = rng_below(&rng, 4);
		r = base[which];
		flips = 1 + rng_below(&rng, 4);
		for (k = 0; k < flips; k++)
			r.b[rng_below(&rng, 80)] = (uint8_t)rng_next(&rng);
		if (rng_below(&rng, 4) == 0)
			r.len = rng_below(&rng, r.len + 1);
		skb = decode(links[which], r.b, r.len, &meta, &frag, &why);
		if (!skb)
			continue;
		assert_int_equal(skb->len, meta.net_len);
		assert_true(meta.family == 4 || meta.family == 6);
		if (frag.is_fragment)
			assert_true(frag.payload_len <= skb->len);
		pkt_decode_transport(skb, &meta);
		if (meta.has_transport)
			assert_true(meta.payload_off <= skb->len);
		kfree_skb(skb);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ethernet),
		cmocka_unit_test(test_ethernet_padding_dropped),
		cmocka_unit_test(test_vlan),
		cmocka_unit_test(test_not_ip_skipped_quietly),
		cmocka_unit_test(test_raw_ip_link_types),
		cmocka_unit_test(test_loopback_link_types),
		cmocka_unit_test(test_linux_cooked),
		cmocka_unit_test(test_ipv4_options),
		cmocka_unit_test(test_ipv4_bad_lengths),
		cmocka_unit_test(test_ipv6_extension_headers),
		cmocka_unit_test(test_ipv6_bad_lengths),
		cmocka_unit_test(test_ipv6_endless_chain),
		cmocka_unit_test(test_fragments),
		cmocka_unit_test(test_transport_headers),
		cmocka_unit_test(test_largest_ipv6_packet),
		cmocka_unit_test(test_capture_round_trip),
		cmocka_unit_test(test_every_prefix),
		cmocka_unit_test(test_random_mutations),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
