/*
 * pcapgen.h - build frames and write captures for tspkt's tests, through
 * libpcap's own writer (pcap_open_dead + pcap_dump).
 *
 * Frames are Ethernet II (DLT_EN10MB) carrying IPv4 or IPv6, with TCP or UDP
 * and a payload; IP datagrams can be cut into fragments at given payload
 * offsets.  Checksums are computed (tspkt does not check them, tcpdump and
 * ngrep print them).
 */
#ifndef TESTS_PCAPGEN_H
#define TESTS_PCAPGEN_H

#include <stddef.h>
#include <stdint.h>

#define PG_MAX_FRAME 70000u

struct pg_frame {
	uint8_t bytes[PG_MAX_FRAME];
	unsigned int len;
};

/* What a datagram carries.  Addresses as text ("10.0.0.1", "fd00::1"). */
struct pg_flow {
	int family; /* 4 or 6 */
	const char *src, *dst;
	uint8_t proto; /* IPPROTO_TCP or IPPROTO_UDP */
	uint16_t sport, dport;
	uint32_t tcp_seq;  /* TCP only */
	uint8_t tcp_flags; /* TCP only; 0 means PSH|ACK */
};

/* The flows the tests' captures use: TCP and UDP over IPv4 and IPv6, and
 * ICMP over IPv4 (protocol 1: an IP payload without ports). */
extern const struct pg_flow pg_flow_tcp4, pg_flow_udp4, pg_flow_tcp6,
	pg_flow_udp6, pg_flow_icmp4;

/* One whole frame: Ethernet + IP + TCP/UDP header + @payload. */
void pg_build(struct pg_frame *out, const struct pg_flow *flow,
	      const void *payload, unsigned int payload_len);

/*
 * The same datagram cut into fragments: fragment i carries IP payload bytes
 * [cuts[i-1], cuts[i]) (cuts[-1] = 0, the last runs to the end; the IP
 * payload starts with the TCP/UDP header).  Cuts must be multiples of 8 and
 * increasing.  IPv4 uses MF/offset, IPv6 a Fragment extension header, both
 * with identification @id.  Writes @ncuts + 1 frames into @out; returns
 * how many.
 */
unsigned int pg_build_fragments(struct pg_frame *out,
				const struct pg_flow *flow, const void *payload,
				unsigned int payload_len,
				const unsigned int *cuts, unsigned int ncuts,
				uint32_t id);

/*
 * A raw IPv4/IPv6 fragment with an explicit offset (bytes, multiple of 8),
 * MF flag and IP payload, for overlapping, duplicate and endless fragment
 * tests.  @ip_payload is the payload as given (no transport header added).
 */
void pg_build_raw_fragment(struct pg_frame *out, const struct pg_flow *flow,
			   uint32_t id, unsigned int offset, int more,
			   const void *ip_payload, unsigned int len);

/* A capture file being written (pcap format, DLT_EN10MB, microseconds). */
struct pg_writer;

/* NULL on failure (message on stderr). @snaplen 0 means 262144. */
struct pg_writer *pg_open(const char *path, unsigned int snaplen);

/* Append a frame captured at @ts_us (microseconds since the epoch); @caplen
 * bytes of it are stored (0: the whole frame; less: a truncated capture). */
void pg_write(struct pg_writer *w, const struct pg_frame *frame, int64_t ts_us,
	      unsigned int caplen);

void pg_close(struct pg_writer *w);

#endif
