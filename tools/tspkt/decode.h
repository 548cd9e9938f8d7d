/*
 * decode.h - from a captured frame to a packet buffer: link layer, IPv4 or
 * IPv6 header (with IPv6 extension headers), fragment facts, and, once a
 * datagram is whole, the transport header.
 */
#ifndef TSPKT_DECODE_H
#define TSPKT_DECODE_H

#include <textsearch_skb.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the IP header says about fragmentation. */
struct ip_frag_info {
	bool is_fragment;	  /* MF set or offset != 0 */
	bool more_fragments;	  /* MF */
	unsigned int offset;	  /* payload offset in the datagram, bytes */
	unsigned int payload_len; /* bytes of this fragment's payload */
	uint32_t id;		  /* IPv4 id (16 bits) or IPv6 identification */
};

/* A decoded packet's addresses and protocol.  Addresses are in network
 * order; IPv4 uses the first 4 bytes. */
struct pkt_meta {
	int family;	 /* 4 or 6; 0: not IP (the frame is skipped) */
	uint8_t l4proto; /* IPPROTO_* of the (last) next header */
	uint8_t src[16], dst[16];
	uint16_t sport, dport;	  /* host order; 0 if no ports */
	unsigned int net_len;	  /* bytes from the network header on, as the
				   IP header's length field says */
	bool has_transport;	  /* transport header found and whole */
	unsigned int payload_off; /* offset of the transport payload from the
				     network header (has_transport only) */
	bool in_stream; /* TCP: its payload is searched in its stream, not
			   on its own (tspkt's tcpstream.c sets it) */
};

/*
 * Copy a captured frame of @caplen bytes (link type @linktype, a DLT_*
 * value) into a new buffer: the link header before skb->data, skb->data
 * at the IP header, mac_header and network_header set, the buffer cut to
 * the IP datagram's own length (link padding dropped), tstamp_ns set from
 * @ts_ns, protocol ETH_P_IP or ETH_P_IPV6.  What passes the 64 KiB of a
 * linear part (link header and datagram together) is in one fragment.
 * Fills @meta (family, l4proto of the IP header, addresses, net_len) and
 * @frag.
 *
 * Returns the buffer, or NULL with a reason in @why (a static string such
 * as "truncated IPv4 header", "bad IPv4 header length", "unsupported link
 * type") when the frame is not an IP packet that can be searched: not IP,
 * truncated, or inconsistent.  @why is set to NULL for a frame that is just
 * not IP (ARP, say), which is skipped without complaint.
 */
struct sk_buff *pkt_decode_frame(int linktype, const uint8_t *frame,
				 unsigned int caplen, int64_t ts_ns,
				 struct pkt_meta *meta,
				 struct ip_frag_info *frag, const char **why);

/*
 * pkt_decode_frame() without the copy: fills @meta and @frag and sets
 * *@l3off to the IP header's offset in @frame; the datagram is then the
 * first *@l3off + meta->net_len bytes of @frame.  false, with @why as
 * pkt_decode_frame() sets it, when the frame is not a searchable IP packet.
 */
bool pkt_decode_headers(int linktype, const uint8_t *frame, unsigned int caplen,
			struct pkt_meta *meta, struct ip_frag_info *frag,
			unsigned int *l3off, const char **why);

/* Copy @len bytes at @src into a new buffer: linear as far as alloc_skb()
 * allows, the rest (only for a datagram near 64 KiB behind a link header)
 * in one heap fragment the buffer releases.  NULL without memory. */
struct sk_buff *pkt_copy_to_skb(const uint8_t *src, unsigned int len);

/*
 * Make @skb (the caller's, not from alloc_skb(): never kfree_skb() it)
 * describe the @len bytes at @buf (linear, however long), a frame whose
 * IP header (@family 4 or 6) is at @l3off, as pkt_decode_frame() makes a
 * buffer: linear, mac_header at @buf, data and network_header at the IP
 * header.
 * The bytes are not copied; skb->cb is left alone.
 */
void pkt_skb_wrap(struct sk_buff *skb, uint8_t *buf, unsigned int len,
		  unsigned int l3off, int family, int64_t ts_ns);

/* Whether libpcap link type @linktype is one pkt_decode_frame() reads. */
bool pkt_linktype_supported(int linktype);

/*
 * Find the transport header of a whole (or reassembled) datagram: sets
 * skb->transport_header, meta->sport/dport, meta->has_transport and
 * meta->payload_off for TCP, UDP, SCTP and ICMP/ICMPv6 (read through
 * skb_header_pointer, so a header that spans buffers is read too).
 * Leaves has_transport false for other protocols, a short header or a
 * later fragment.  IPv6 extension headers are walked again up to skb->len
 * (past a Fragment header too, which a reassembled datagram keeps), so
 * meta->l4proto becomes the upper-layer protocol.
 */
void pkt_decode_transport(struct sk_buff *skb, struct pkt_meta *meta);

#endif
