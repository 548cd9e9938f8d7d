/*
 * decode.c - link layer, IP header and transport header decoding.
 *
 * Headers are read from bytes at explicit offsets (network order), every
 * read checked against what was captured first: a capture file is input
 * from anywhere.
 */
#include "decode.h"

#include <netinet/in.h>
#include <pcap/dlt.h>
#include <stdlib.h>
#include <string.h>

#define ETH_HLEN 14u
#define VLAN_HLEN 4u
#define MAX_VLAN_TAGS 8u /* QinQ is 2; more is garbage */
#define NULL_HLEN 4u
#define SLL_HLEN 16u
#define SLL2_HLEN 20u
#define IPV4_HLEN 20u
#define IPV6_HLEN 40u
#define MAX_IPV6_EXT_HEADERS 16u /* bounds the walk over a hostile chain */
#define SKB_MAX_HEAD 65535u	 /* alloc_skb()'s limit */

#define ETH_P_IP 0x0800u
#define ETH_P_IPV6 0x86ddu
#define ETH_P_8021Q 0x8100u
#define ETH_P_8021AD 0x88a8u
#define ETH_P_QINQ1 0x9100u /* pre-standard QinQ, still seen */

/* IPv6 next-header values that are extension headers we walk */
#define NEXTHDR_HOP 0u
#define NEXTHDR_ROUTING 43u
#define NEXTHDR_FRAGMENT 44u
#define NEXTHDR_AUTH 51u
#define NEXTHDR_DEST 60u

/* BSD address families in DLT_NULL/DLT_LOOP headers (writer's values) */
#define BSD_AF_INET 2u
#define BSD_AF_INET6_BSD 24u
#define BSD_AF_INET6_FREEBSD 28u
#define BSD_AF_INET6_DARWIN 30u
#define LINUX_AF_INET6 10u

static unsigned int get16(const uint8_t *p)
{
	return (unsigned int)p[0] << 8 | p[1];
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

bool pkt_linktype_supported(int linktype)
{
	switch (linktype) {
	case DLT_EN10MB:
	case DLT_RAW:
	case DLT_IPV4:
	case DLT_IPV6:
	case DLT_NULL:
	case DLT_LOOP:
	case DLT_LINUX_SLL:
	case DLT_LINUX_SLL2:
		return true;
	default:
		return false;
	}
}

/* 4 or 6 for an EtherType, 0 for anything else */
static int family_of_ethertype(unsigned int type)
{
	if (type == ETH_P_IP)
		return 4;
	if (type == ETH_P_IPV6)
		return 6;
	return 0;
}

static int family_of_bsd_af(uint32_t af)
{
	switch (af) {
	case BSD_AF_INET:
		return 4;
	case BSD_AF_INET6_BSD:
	case BSD_AF_INET6_FREEBSD:
	case BSD_AF_INET6_DARWIN:
	case LINUX_AF_INET6:
		return 6;
	default:
		return 0;
	}
}

/*
 * Where the IP header starts (*@l3off) and which family the link layer
 * says it is (*@family, 0: not IP; -1: take the IP version nibble).
 * Returns a reason on malformed input, else NULL.
 */
static const char *decode_link(int linktype, const uint8_t *frame,
			       unsigned int caplen, unsigned int *l3off,
			       int *family)
{
	unsigned int off, type, tags;
	uint32_t af;

	switch (linktype) {
	case DLT_EN10MB:
		if (caplen < ETH_HLEN)
			return "truncated Ethernet header";
		off = ETH_HLEN;
		type = get16(frame + 12);
		for (tags = 0; type == ETH_P_8021Q || type == ETH_P_8021AD ||
			       type == ETH_P_QINQ1;
		     tags++) {
			if (tags == MAX_VLAN_TAGS)
				return "too many VLAN tags";
			if (caplen < off + VLAN_HLEN)
				return "truncated VLAN tag";
			type = get16(frame + off + 2);
			off += VLAN_HLEN;
		}
		/* values up to 1500 are 802.3 lengths: LLC frames, not IP */
		*family = family_of_ethertype(type);
		*l3off = off;
		return NULL;
	case DLT_RAW:
		*family = -1;
		*l3off = 0;
		return NULL;
	case DLT_IPV4:
		*family = 4;
		*l3off = 0;
		return NULL;
	case DLT_IPV6:
		*family = 6;
		*l3off = 0;
		return NULL;
	case DLT_NULL:
	case DLT_LOOP:
		if (caplen < NULL_HLEN)
			return "truncated loopback header";
		af = get32(frame);
		/* DLT_LOOP is network order; DLT_NULL the writer's own
		 * order: the small value is the right reading */
		if (linktype == DLT_NULL && af > 0xffff)
			af = (uint32_t)frame[3] << 24 |
			     (uint32_t)frame[2] << 16 |
			     (uint32_t)frame[1] << 8 | frame[0];
		*family = family_of_bsd_af(af);
		*l3off = NULL_HLEN;
		return NULL;
	case DLT_LINUX_SLL:
		if (caplen < SLL_HLEN)
			return "truncated Linux cooked header";
		*family = family_of_ethertype(get16(frame + 14));
		*l3off = SLL_HLEN;
		return NULL;
	case DLT_LINUX_SLL2:
		if (caplen < SLL2_HLEN)
			return "truncated Linux cooked v2 header";
		*family = family_of_ethertype(get16(frame));
		*l3off = SLL2_HLEN;
		return NULL;
	default:
		return "unsupported link type";
	}
}

static bool is_ipv6_ext_header(unsigned int nexthdr)
{
	return nexthdr == NEXTHDR_HOP || nexthdr == NEXTHDR_ROUTING ||
	       nexthdr == NEXTHDR_DEST || nexthdr == NEXTHDR_AUTH ||
	       nexthdr == NEXTHDR_FRAGMENT;
}

/* Length of the extension header at @p (2 bytes readable) of type @nexthdr */
static unsigned int ipv6_ext_len(unsigned int nexthdr, const uint8_t *p)
{
	if (nexthdr == NEXTHDR_FRAGMENT)
		return 8;
	if (nexthdr == NEXTHDR_AUTH)
		return ((unsigned int)p[1] + 2) * 4;
	return ((unsigned int)p[1] + 1) * 8;
}

static const char *decode_ipv4(const uint8_t *ip, unsigned int avail,
			       struct pkt_meta *meta, struct ip_frag_info *frag)
{
	unsigned int ihl, total, frag_field;

	if (avail < IPV4_HLEN)
		return "truncated IPv4 header";
	if (ip[0] >> 4 != 4)
		return "bad IP version";
	ihl = (ip[0] & 0x0fu) * 4;
	if (ihl < IPV4_HLEN)
		return "bad IPv4 header length";
	if (avail < ihl)
		return "truncated IPv4 options";
	total = get16(ip + 2);
	if (total < ihl)
		return "bad IPv4 total length";
	if (total > avail)
		return "truncated IPv4 packet (total length past the capture)";

	frag_field = get16(ip + 6);
	frag->more_fragments = frag_field & 0x2000u;
	frag->offset = (frag_field & 0x1fffu) * 8;
	frag->is_fragment = frag->more_fragments || frag->offset;
	frag->payload_len = total - ihl;
	frag->id = get16(ip + 4);

	meta->family = 4;
	meta->l4proto = ip[9];
	memcpy(meta->src, ip + 12, 4);
	memcpy(meta->dst, ip + 16, 4);
	meta->net_len = total;
	return NULL;
}

static const char *decode_ipv6(const uint8_t *ip, unsigned int avail,
			       struct pkt_meta *meta, struct ip_frag_info *frag)
{
	unsigned int total, off, nexthdr, len, n, frag_field;

	if (avail < IPV6_HLEN)
		return "truncated IPv6 header";
	if (ip[0] >> 4 != 6)
		return "bad IP version";
	total = IPV6_HLEN + get16(ip + 4);
	if (total > avail)
		return "truncated IPv6 packet (payload length past the capture)";

	meta->family = 6;
	memcpy(meta->src, ip + 8, 16);
	memcpy(meta->dst, ip + 24, 16);
	meta->net_len = total;

	/* The unfragmentable part, up to a fragment header; an atomic
	 * fragment (offset 0, no MF) is a whole datagram, walked on. */
	nexthdr = ip[6];
	off = IPV6_HLEN;
	for (n = 0; is_ipv6_ext_header(nexthdr); n++) {
		if (n == MAX_IPV6_EXT_HEADERS)
			return "too many IPv6 extension headers";
		if (nexthdr == NEXTHDR_HOP && n != 0)
			return "IPv6 hop-by-hop header not first";
		if (total - off < 8)
			return "truncated IPv6 extension header";
		len = ipv6_ext_len(nexthdr, ip + off);
		if (total - off < len)
			return "truncated IPv6 extension header";
		if (nexthdr == NEXTHDR_FRAGMENT) {
			frag_field = get16(ip + off + 2);
			frag->more_fragments = frag_field & 1u;
			frag->offset = frag_field & 0xfff8u;
			frag->id = get32(ip + off + 4);
			if (frag->more_fragments || frag->offset) {
				frag->is_fragment = true;
				frag->payload_len = total - (off + len);
				meta->l4proto = ip[off];
				return NULL;
			}
		}
		nexthdr = ip[off];
		off += len;
	}
	meta->l4proto = (uint8_t)nexthdr;
	return NULL;
}

struct sk_buff *pkt_copy_to_skb(const uint8_t *src, unsigned int len)
{
	unsigned int linear = len < SKB_MAX_HEAD ? len : SKB_MAX_HEAD;
	struct sk_buff *skb = alloc_skb(linear ? linear : 1, GFP_KERNEL);
	void *rest;

	if (!skb)
		return NULL;
	if (linear && !skb_put_data(skb, src, linear))
		goto fail;
	if (len > linear) {
		rest = malloc(len - linear);
		if (!rest)
			goto fail;
		memcpy(rest, src + linear, len - linear);
		if (skb_add_frag(skb, rest, len - linear, free, rest)) {
			free(rest);
			goto fail;
		}
	}
	return skb;
fail:
	kfree_skb(skb);
	return NULL;
}

bool pkt_decode_headers(int linktype, const uint8_t *frame, unsigned int caplen,
			struct pkt_meta *meta, struct ip_frag_info *frag,
			unsigned int *l3off_out, const char **why)
{
	unsigned int l3off;
	const char *reason;
	int family;

	memset(meta, 0, sizeof(*meta));
	memset(frag, 0, sizeof(*frag));
	*why = NULL;
	*l3off_out = 0;
	if (!frame && caplen) {
		*why = "no frame data";
		return false;
	}
	reason = decode_link(linktype, frame, caplen, &l3off, &family);
	if (reason) {
		*why = reason;
		return false;
	}
	if (family == 0)
		return false; /* not IP: skipped quietly */
	if (family < 0) {
		if (caplen <= l3off) {
			*why = "truncated IP header";
			return false;
		}
		family = frame[l3off] >> 4;
		if (family != 4 && family != 6) {
			*why = "bad IP version";
			return false;
		}
	}
	if (family == 4)
		reason = decode_ipv4(frame + l3off, caplen - l3off, meta, frag);
	else
		reason = decode_ipv6(frame + l3off, caplen - l3off, meta, frag);
	if (reason) {
		memset(meta, 0, sizeof(*meta));
		memset(frag, 0, sizeof(*frag));
		*why = reason;
		return false;
	}
	*l3off_out = l3off;
	return true;
}

/* What pkt_decode_frame() and pkt_skb_wrap() both set once the bytes are
 * in place. */
static void set_layers(struct sk_buff *skb, unsigned int l3off, int family,
		       int64_t ts_ns)
{
	skb_reset_mac_header(skb);
	skb_pull(skb, l3off);
	skb_reset_network_header(skb);
	skb->transport_header = SKB_HEADER_UNSET;
	skb->protocol = (u16)(family == 4 ? ETH_P_IP : ETH_P_IPV6);
	skb->tstamp_ns = ts_ns;
}

void pkt_skb_wrap(struct sk_buff *skb, uint8_t *buf, unsigned int len,
		  unsigned int l3off, int family, int64_t ts_ns)
{
	/* the fields alloc_skb() sets, as it sets them; cb is the caller's,
	 * and frags[] is never read while nr_frags is 0 */
	skb->next = NULL;
	skb->head = buf;
	skb->data = buf;
	skb->tail = buf + len;
	skb->end = buf + len;
	skb->len = len;
	skb->data_len = 0;
	skb->shinfo.nr_frags = 0;
	skb->shinfo.frag_list = NULL;
	set_layers(skb, l3off, family, ts_ns);
}

struct sk_buff *pkt_decode_frame(int linktype, const uint8_t *frame,
				 unsigned int caplen, int64_t ts_ns,
				 struct pkt_meta *meta,
				 struct ip_frag_info *frag, const char **why)
{
	unsigned int l3off;
	struct sk_buff *skb;

	if (!pkt_decode_headers(linktype, frame, caplen, meta, frag, &l3off,
				why))
		return NULL;
	/* The link header stays, whatever the datagram's size, for -w to
	 * write the frame again; the datagram's own length drops any link
	 * padding. */
	skb = pkt_copy_to_skb(frame, l3off + meta->net_len);
	if (!skb) {
		memset(meta, 0, sizeof(*meta));
		memset(frag, 0, sizeof(*frag));
		*why = "out of memory";
		return NULL;
	}
	set_layers(skb, l3off, meta->family, ts_ns);
	return skb;
}

/* ---- transport ----------------------------------------------------------- */

/*
 * Offset (from the network header) of the upper-layer header of a whole
 * datagram in @skb, and its protocol in *@proto; -1 when there is none to
 * read (a later fragment, a cut or endless chain).  The IPv6 walk goes past
 * a fragment header too: a reassembled datagram keeps it, as received.
 */
static int upper_layer_offset(const struct sk_buff *skb, int family,
			      unsigned int limit, uint8_t *proto)
{
	int base = skb_network_offset(skb);
	uint8_t buf[8];
	const uint8_t *p;
	unsigned int off, nexthdr, len, n;

	if (family == 4) {
		p = skb_header_pointer(skb, base, IPV4_HLEN, buf);
		if (!p)
			return -1;
		off = (p[0] & 0x0fu) * 4;
		if (off < IPV4_HLEN || off > limit || get16(p + 6) & 0x1fffu)
			return -1;
		*proto = p[9];
		return (int)off;
	}
	p = skb_header_pointer(skb, base + 6, 1, buf);
	if (!p || limit < IPV6_HLEN)
		return -1;
	nexthdr = p[0];
	off = IPV6_HLEN;
	for (n = 0; is_ipv6_ext_header(nexthdr); n++) {
		if (n == MAX_IPV6_EXT_HEADERS || limit - off < 8)
			return -1;
		p = skb_header_pointer(skb, base + (int)off, 8, buf);
		if (!p)
			return -1;
		len = ipv6_ext_len(nexthdr, p);
		if (limit - off < len)
			return -1;
		if (nexthdr == NEXTHDR_FRAGMENT && get16(p + 2) & 0xfff8u)
			return -1; /* not the first fragment */
		nexthdr = p[0];
		off += len;
	}
	*proto = (uint8_t)nexthdr;
	return (int)off;
}

void pkt_decode_transport(struct sk_buff *skb, struct pkt_meta *meta)
{
	int base = skb_network_offset(skb);
	unsigned int limit, off, hlen;
	uint8_t buf[20];
	const uint8_t *p;
	uint8_t proto;
	int upper;

	meta->has_transport = false;
	meta->sport = meta->dport = 0;
	meta->payload_off = 0;
	if ((meta->family != 4 && meta->family != 6) || base < 0 ||
	    (unsigned int)base > skb->len)
		return;
	limit = skb->len - (unsigned int)base;
	upper = upper_layer_offset(skb, meta->family, limit, &proto);
	if (upper < 0)
		return;
	off = (unsigned int)upper;
	meta->l4proto = proto;

	switch (proto) {
	case IPPROTO_TCP:
		p = skb_header_pointer(skb, base + (int)off, 20, buf);
		if (!p)
			return;
		hlen = (p[12] >> 4) * 4u;
		if (hlen < 20)
			return;
		break;
	case IPPROTO_UDP:
		hlen = 8;
		break;
	case IPPROTO_SCTP:
		hlen = 12; /* the common header; chunks follow */
		break;
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		hlen = 8;
		break;
	default:
		return;
	}
	if (limit - off < hlen)
		return;
	p = skb_header_pointer(skb, base + (int)off,
			       (int)hlen < 20 ? (int)hlen : 20, buf);
	if (!p)
		return;
	if (proto != IPPROTO_ICMP && proto != IPPROTO_ICMPV6) {
		meta->sport = (uint16_t)get16(p);
		meta->dport = (uint16_t)get16(p + 2);
	}
	skb->transport_header = (u16)(skb->network_header + off);
	meta->payload_off = off + hlen;
	meta->has_transport = true;
}
