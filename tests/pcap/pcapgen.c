/*
 * pcapgen.c - frames and capture files for tspkt's tests.
 *
 * Headers are written byte by byte at explicit offsets (network order), so
 * the layout is plain to read and independent of any platform struct.
 */
#define _DEFAULT_SOURCE /* pcap.h uses the BSD u_char/u_int types */
#include "pcapgen.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct pg_flow pg_flow_tcp4 = { 4,	   "10.0.0.1", "10.0.0.2",
				      IPPROTO_TCP, 43512,      80,
				      1000,	   0 };
const struct pg_flow pg_flow_udp4 = { 4,    "10.0.0.3", "10.0.0.4", IPPROTO_UDP,
				      5353, 53,		0,	    0 };
const struct pg_flow pg_flow_tcp6 = { 6,     "fd00::1", "fd00::2", IPPROTO_TCP,
				      40000, 8080,	7,	   0 };
const struct pg_flow pg_flow_udp6 = { 6,    "fd00::3", "fd00::4", IPPROTO_UDP,
				      1234, 4321,      0,	  0 };
const struct pg_flow pg_flow_icmp4 = {
	4, "10.0.0.5", "10.0.0.6", 1, 0, 0, 0, 0
};

#define ETH_HLEN 14u
#define IPV4_HLEN 20u
#define IPV6_HLEN 40u
#define IPV6_FRAG_HLEN 8u
#define TCP_HLEN 20u
#define UDP_HLEN 8u
#define NEXTHDR_FRAGMENT 44u

static void put16(uint8_t *p, unsigned int v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void die(const char *what)
{
	fprintf(stderr, "pcapgen: %s\n", what);
	abort();
}

/* One's-complement sum (RFC 1071), not yet folded or inverted. */
static uint32_t csum_add(uint32_t sum, const uint8_t *p, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	return sum;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static void parse_addrs(const struct pg_flow *flow, uint8_t *src, uint8_t *dst)
{
	int af = flow->family == 6 ? AF_INET6 : AF_INET;

	if (flow->family != 4 && flow->family != 6)
		die("family must be 4 or 6");
	if (inet_pton(af, flow->src, src) != 1 ||
	    inet_pton(af, flow->dst, dst) != 1)
		die("bad address");
}

/* Ethernet II header with fixed locally administered MACs; returns its end. */
static uint8_t *put_eth(uint8_t *p, int family)
{
	static const uint8_t macs[12] = { 0x02, 0, 0, 0, 0, 0x02,
					  0x02, 0, 0, 0, 0, 0x01 };

	memcpy(p, macs, sizeof(macs));
	put16(p + 12, family == 6 ? 0x86dd : 0x0800);
	return p + ETH_HLEN;
}

static uint8_t *put_ipv4(uint8_t *p, const struct pg_flow *flow,
			 const uint8_t *src, const uint8_t *dst,
			 unsigned int payload_len, uint16_t id,
			 unsigned int offset, int more)
{
	unsigned int total = IPV4_HLEN + payload_len;

	if (total > 0xffff)
		die("IPv4 datagram longer than 65535 bytes");
	if (offset % 8 || offset / 8 > 0x1fff)
		die("bad IPv4 fragment offset");
	p[0] = 0x45;
	p[1] = 0;
	put16(p + 2, total);
	put16(p + 4, id);
	put16(p + 6, (more ? 0x2000u : 0) | offset / 8);
	p[8] = 64;
	p[9] = flow->proto;
	put16(p + 10, 0);
	memcpy(p + 12, src, 4);
	memcpy(p + 16, dst, 4);
	put16(p + 10, csum_fold(csum_add(0, p, IPV4_HLEN)));
	return p + IPV4_HLEN;
}

static uint8_t *put_ipv6(uint8_t *p, uint8_t next, const uint8_t *src,
			 const uint8_t *dst, unsigned int payload_len)
{
	if (payload_len > 0xffff)
		die("IPv6 payload longer than 65535 bytes");
	put32(p, 0x60000000u);
	put16(p + 4, payload_len);
	p[6] = next;
	p[7] = 64;
	memcpy(p + 8, src, 16);
	memcpy(p + 24, dst, 16);
	return p + IPV6_HLEN;
}

static uint8_t *put_ipv6_frag(uint8_t *p, uint8_t next, uint32_t id,
			      unsigned int offset, int more)
{
	if (offset % 8 || offset / 8 > 0x1fff)
		die("bad IPv6 fragment offset");
	p[0] = next;
	p[1] = 0;
	put16(p + 2, (offset / 8) << 3 | (more ? 1u : 0));
	put32(p + 4, id);
	return p + IPV6_FRAG_HLEN;
}

static unsigned int transport_hlen(const struct pg_flow *flow)
{
	if (flow->proto == IPPROTO_TCP)
		return TCP_HLEN;
	if (flow->proto == IPPROTO_UDP)
		return UDP_HLEN;
	die("proto must be TCP or UDP");
	return 0;
}

/*
 * The IP payload (transport header + @payload) into @out, checksummed over
 * the pseudo-header of @flow; returns its length.
 */
static unsigned int put_transport(uint8_t *out, const struct pg_flow *flow,
				  const uint8_t *src, const uint8_t *dst,
				  const void *payload, unsigned int payload_len)
{
	unsigned int hlen = transport_hlen(flow);
	unsigned int len = hlen + payload_len;
	uint8_t pseudo[40];
	unsigned int plen;
	uint32_t sum;
	uint16_t csum;

	put16(out, flow->sport);
	put16(out + 2, flow->dport);
	if (flow->proto == IPPROTO_TCP) {
		put32(out + 4, flow->tcp_seq);
		put32(out + 8, 0);
		out[12] = (TCP_HLEN / 4) << 4;
		out[13] = flow->tcp_flags ? flow->tcp_flags : 0x18;
		put16(out + 14, 65535);
		put16(out + 16, 0);
		put16(out + 18, 0);
	} else {
		put16(out + 4, len > 0xffff ? 0 : len);
		put16(out + 6, 0);
	}
	if (payload_len)
		memcpy(out + hlen, payload, payload_len);

	/* the pseudo-header of RFC 793 / RFC 8200 section 8.1 */
	if (flow->family == 6) {
		memcpy(pseudo, src, 16);
		memcpy(pseudo + 16, dst, 16);
		put32(pseudo + 32, len);
		put32(pseudo + 36, flow->proto);
		plen = 40;
	} else {
		memcpy(pseudo, src, 4);
		memcpy(pseudo + 4, dst, 4);
		pseudo[8] = 0;
		pseudo[9] = flow->proto;
		put16(pseudo + 10, len & 0xffff);
		plen = 12;
	}
	sum = csum_add(0, pseudo, plen);
	sum = csum_add(sum, out, len);
	csum = csum_fold(sum);
	if (flow->proto == IPPROTO_UDP && csum == 0)
		csum = 0xffff; /* 0 means "no checksum" for UDP */
	put16(out + (flow->proto == IPPROTO_TCP ? 16 : 6), csum);
	return len;
}

/* A frame of IP payload @ip_payload, whole or as one fragment. */
static void build_ip_frame(struct pg_frame *out, const struct pg_flow *flow,
			   const uint8_t *src, const uint8_t *dst,
			   const uint8_t *ip_payload, unsigned int len,
			   int fragment, uint32_t id, unsigned int offset,
			   int more)
{
	uint8_t *p = put_eth(out->bytes, flow->family);
	unsigned int room =
		PG_MAX_FRAME - ETH_HLEN - IPV6_HLEN - IPV6_FRAG_HLEN;

	if (len > room)
		die("frame larger than PG_MAX_FRAME");
	if (flow->family == 4) {
		p = put_ipv4(p, flow, src, dst, len, (uint16_t)id,
			     fragment ? offset : 0, fragment && more);
	} else if (fragment) {
		p = put_ipv6(p, NEXTHDR_FRAGMENT, src, dst,
			     IPV6_FRAG_HLEN + len);
		p = put_ipv6_frag(p, flow->proto, id, offset, more);
	} else {
		p = put_ipv6(p, flow->proto, src, dst, len);
	}
	memcpy(p, ip_payload, len);
	out->len = (unsigned int)(p - out->bytes) + len;
}

void pg_build(struct pg_frame *out, const struct pg_flow *flow,
	      const void *payload, unsigned int payload_len)
{
	uint8_t src[16], dst[16];
	uint8_t *ip_payload;
	unsigned int len;

	parse_addrs(flow, src, dst);
	if (payload_len > PG_MAX_FRAME)
		die("payload larger than PG_MAX_FRAME");
	ip_payload = malloc(TCP_HLEN + payload_len);
	if (!ip_payload)
		die("out of memory");
	len = put_transport(ip_payload, flow, src, dst, payload, payload_len);
	build_ip_frame(out, flow, src, dst, ip_payload, len, 0, 0, 0, 0);
	free(ip_payload);
}

unsigned int pg_build_fragments(struct pg_frame *out,
				const struct pg_flow *flow, const void *payload,
				unsigned int payload_len,
				const unsigned int *cuts, unsigned int ncuts,
				uint32_t id)
{
	uint8_t src[16], dst[16];
	uint8_t *ip_payload;
	unsigned int len, i, start = 0, stop;

	parse_addrs(flow, src, dst);
	if (payload_len > PG_MAX_FRAME)
		die("payload larger than PG_MAX_FRAME");
	ip_payload = malloc(TCP_HLEN + payload_len);
	if (!ip_payload)
		die("out of memory");
	len = put_transport(ip_payload, flow, src, dst, payload, payload_len);
	for (i = 0; i <= ncuts; i++) {
		stop = i < ncuts ? cuts[i] : len;
		if (stop % 8 && i < ncuts)
			die("fragment cuts must be multiples of 8");
		if (stop <= start || stop > len)
			die("fragment cuts must increase within the datagram");
		build_ip_frame(&out[i], flow, src, dst, ip_payload + start,
			       stop - start, 1, id, start, i < ncuts);
		start = stop;
	}
	free(ip_payload);
	return ncuts + 1;
}

void pg_build_raw_fragment(struct pg_frame *out, const struct pg_flow *flow,
			   uint32_t id, unsigned int offset, int more,
			   const void *ip_payload, unsigned int len)
{
	uint8_t src[16], dst[16];

	parse_addrs(flow, src, dst);
	build_ip_frame(out, flow, src, dst, ip_payload, len, 1, id, offset,
		       more);
}

struct pg_writer {
	pcap_t *pcap;
	pcap_dumper_t *dumper;
	unsigned int snaplen;
};

struct pg_writer *pg_open(const char *path, unsigned int snaplen)
{
	struct pg_writer *w = calloc(1, sizeof(*w));

	if (!w) {
		fprintf(stderr, "pcapgen: out of memory\n");
		return NULL;
	}
	w->snaplen = snaplen ? snaplen : 262144u;
	w->pcap = pcap_open_dead(DLT_EN10MB, (int)w->snaplen);
	if (!w->pcap) {
		fprintf(stderr, "pcapgen: pcap_open_dead failed\n");
		free(w);
		return NULL;
	}
	w->dumper = pcap_dump_open(w->pcap, path);
	if (!w->dumper) {
		fprintf(stderr, "pcapgen: %s: %s\n", path,
			pcap_geterr(w->pcap));
		pcap_close(w->pcap);
		free(w);
		return NULL;
	}
	return w;
}

void pg_write(struct pg_writer *w, const struct pg_frame *frame, int64_t ts_us,
	      unsigned int caplen)
{
	struct pcap_pkthdr hdr;

	if (caplen == 0 || caplen > frame->len)
		caplen = frame->len;
	if (caplen > w->snaplen)
		caplen = w->snaplen;
	memset(&hdr, 0, sizeof(hdr));
	hdr.ts.tv_sec = (time_t)(ts_us / 1000000);
	hdr.ts.tv_usec = (suseconds_t)(ts_us % 1000000);
	hdr.caplen = caplen;
	hdr.len = frame->len;
	pcap_dump((u_char *)w->dumper, &hdr, frame->bytes);
}

void pg_close(struct pg_writer *w)
{
	if (!w)
		return;
	pcap_dump_close(w->dumper);
	pcap_close(w->pcap);
	free(w);
}
