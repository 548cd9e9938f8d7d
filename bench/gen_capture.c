/*
 * gen_capture.c - the capture tspkt's benchmark searches: Ethernet, IPv4
 * (IPv6 for one flow in ten), TCP, with the size mix of a busy link (bare
 * acknowledgements, full 1448-byte segments, requests in between), and
 * a few hundred segments carrying one of the rule strings.
 *
 *   gen_capture OUT.pcap PACKETS RULES.txt [RULES1000.txt]
 *
 * Writes the capture (pcap, microseconds), and RULES.txt: 100 rules, one
 * per line, the first being the string searched alone ("needle" below);
 * RULES1000.txt, if named: those 100 and 900 more of the same kinds,
 * which occur nowhere (the generator checks), as most of an IDS's rules
 * match nothing.
 * Prints what it planted, "planted: needle=N any=M", so the benchmark can
 * check that tools find that many.  The same bytes on every run: the
 * generator is seeded.  TCP checksums are left 0 (nobody here checks them).
 */
#define _GNU_SOURCE /* memmem */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

#define NRULES 100
#define NRULES_MAX 1000
#define NFLOWS 256
#define POOL_SIZE (1u << 20)
#define MSS 1448u
#define ETH_HLEN 14u
#define MIN_FRAME 60u /* Ethernet's minimum, padded */

static const char needle[] = "X-Exfil-Token: 7c1e";

static uint64_t rng_state = 0x7e575ea4c4ULL;

static uint64_t rnd(void)
{
	return bench_splitmix64(&rng_state);
}

static unsigned int rnd_below(unsigned int n)
{
	return (unsigned int)(rnd() % n);
}

/* The text payloads are cut from: HTTP-ish headers and prose. */
static const char *const words[] = {
	"GET",	       "POST",	      "HTTP/1.1",
	"Host:",       "Accept:",     "text/html",
	"the",	       "of",	      "and",
	"request",     "response",    "Content-Type:",
	"cache",       "session",     "value",
	"Cookie:",     "id=",	      "application/json",
	"server",      "client",      "token",
	"User-Agent:", "Mozilla/5.0", "gzip",
	"deflate",     "keep-alive",  "200",
	"OK",	       "404",	      "index",
	"data",	       "{\"key\":",   "\"name\":",
	"1024",	       "</div>",      "<div",
	"class=\"",    "width",	      "height",
	"https://",    "www",	      "example",
	".com/",       "static",      "img",
	"src=",	       "json",
};

struct flow {
	int family;
	uint8_t src[16], dst[16];
	uint16_t sport, dport;
	uint32_t seq;
};

static unsigned int put16(uint8_t *p, unsigned int v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
	return 2;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v & 0xffff);
}

static uint16_t ip_checksum(const uint8_t *p, unsigned int len)
{
	uint32_t sum = 0;
	unsigned int i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* One frame: Ethernet + IP + 20-byte TCP header + @payload; its length. */
static unsigned int build(uint8_t *f, struct flow *fl, const char *payload,
			  unsigned int plen)
{
	unsigned int ip_hlen = fl->family == 4 ? 20 : 40, tcp_off, len;
	uint8_t *ip = f + ETH_HLEN;

	memcpy(f, "\x02\x00\x00\x00\x00\x01\x02\x00\x00\x00\x00\x02", 12);
	put16(f + 12, fl->family == 4 ? 0x0800 : 0x86dd);
	if (fl->family == 4) {
		memset(ip, 0, 20);
		ip[0] = 0x45;
		put16(ip + 2, 20 + 20 + plen);
		put16(ip + 4, rnd_below(65536));
		ip[6] = 0x40; /* DF */
		ip[8] = 64;
		ip[9] = 6;
		memcpy(ip + 12, fl->src, 4);
		memcpy(ip + 16, fl->dst, 4);
		put16(ip + 10, ip_checksum(ip, 20));
	} else {
		memset(ip, 0, 40);
		ip[0] = 0x60;
		put16(ip + 4, 20 + plen);
		ip[6] = 6;
		ip[7] = 64;
		memcpy(ip + 8, fl->src, 16);
		memcpy(ip + 24, fl->dst, 16);
	}
	tcp_off = ETH_HLEN + ip_hlen;
	memset(f + tcp_off, 0, 20);
	put16(f + tcp_off, fl->sport);
	put16(f + tcp_off + 2, fl->dport);
	put32(f + tcp_off + 4, fl->seq);
	put32(f + tcp_off + 8, 0x10000000u + fl->seq / 3);
	f[tcp_off + 12] = 5 << 4;
	f[tcp_off + 13] = plen ? 0x18 : 0x10; /* PSH|ACK, or ACK */
	put16(f + tcp_off + 14, 502);
	memcpy(f + tcp_off + 20, payload, plen);
	fl->seq += plen;
	len = tcp_off + 20 + plen;
	if (len < MIN_FRAME) {
		memset(f + len, 0, MIN_FRAME - len);
		len = MIN_FRAME;
	}
	return len;
}

/* In the host's order: the magic number tells readers which it is. */
static void put_host32(FILE *out, uint32_t v)
{
	fwrite(&v, 4, 1, out);
}

static void put_host16(FILE *out, uint16_t v)
{
	fwrite(&v, 2, 1, out);
}

/* Rule @i's string: IDS-like signatures, the needle first. */
static void rule_string(char *buf, size_t len, unsigned int i)
{
	if (i == 0)
		snprintf(buf, len, "%s", needle);
	else if (i % 5 == 0)
		snprintf(buf, len, "/cgi-bin/probe%02u.cgi?cmd=", i);
	else if (i % 5 == 1)
		snprintf(buf, len, "User-Agent: scanbot/%u.0", i);
	else if (i % 5 == 2)
		snprintf(buf, len, "SELECT%%20*%%20FROM%%20t%02u", i);
	else if (i % 5 == 3)
		snprintf(buf, len, "cmd.exe /c ping -n %u", i);
	else
		snprintf(buf, len, "../../etc/shadow%02u", i);
}

int main(int argc, char **argv)
{
	static uint8_t frame[ETH_HLEN + 40 + 20 + MSS];
	static char payload[MSS];
	static char rules[NRULES_MAX][64];
	struct flow flows[NFLOWS];
	unsigned long npackets, i, planted_needle = 0, planted_any = 0;
	char *pool;
	size_t plen = 0;
	uint64_t ts_us = 1796306400000000ULL; /* 2026-12-03T14:00:00Z */
	FILE *out, *rf, *rf1000 = NULL;
	unsigned int k;

	if ((argc != 4 && argc != 5) ||
	    !(npackets = strtoul(argv[2], NULL, 10))) {
		fprintf(stderr, "usage: gen_capture OUT.pcap PACKETS "
				"RULES.txt [RULES1000.txt]\n");
		return 2;
	}
	pool = malloc(POOL_SIZE + MSS);
	if (!pool)
		return 2;
	while (plen < POOL_SIZE + MSS) {
		const char *w =
			words[rnd_below(sizeof(words) / sizeof(*words))];
		size_t wl = strlen(w);

		if (plen + wl + 2 > POOL_SIZE + MSS)
			break;
		memcpy(pool + plen, w, wl);
		plen += wl;
		pool[plen++] = rnd_below(8) ? ' ' : '\n';
	}
	memset(pool + plen, ' ', POOL_SIZE + MSS - plen);
	for (k = 0; k < NRULES_MAX; k++) {
		rule_string(rules[k], sizeof(rules[k]), k);
		/* found only where planted */
		if (memmem(pool, POOL_SIZE + MSS, rules[k], strlen(rules[k]))) {
			fprintf(stderr, "gen_capture: '%s' is in the pool\n",
				rules[k]);
			return 2;
		}
	}
	for (k = 0; k < NFLOWS; k++) {
		struct flow *fl = &flows[k];

		memset(fl, 0, sizeof(*fl));
		fl->family = k % 10 == 9 ? 6 : 4;
		if (fl->family == 4) {
			put32(fl->src,
			      0x0a000000u | (uint32_t)rnd_below(1u << 16));
			put32(fl->dst, 0xc0a80000u | (uint32_t)rnd_below(256));
		} else {
			memcpy(fl->src, "\xfd\x00\x00\x00\x00\x00\x00\x01", 8);
			memcpy(fl->dst, "\xfd\x00\x00\x00\x00\x00\x00\x02", 8);
			put32(fl->src + 12, (uint32_t)rnd());
			put32(fl->dst + 12, (uint32_t)rnd());
		}
		fl->sport = (uint16_t)(32768 + rnd_below(28000));
		fl->dport = k % 3 ? 443 : 80;
		fl->seq = (uint32_t)rnd();
	}

	out = fopen(argv[1], "wb");
	rf = fopen(argv[3], "w");
	if (argc == 5)
		rf1000 = fopen(argv[4], "w");
	if (!out || !rf || (argc == 5 && !rf1000)) {
		perror("gen_capture");
		return 2;
	}
	setvbuf(out, NULL, _IOFBF, 1u << 20);
	put_host32(out, 0xa1b2c3d4); /* microseconds */
	put_host16(out, 2);	     /* version 2.4 */
	put_host16(out, 4);
	put_host32(out, 0);
	put_host32(out, 0);
	put_host32(out, 262144);
	put_host32(out, 1); /* Ethernet */
	for (k = 0; k < NRULES; k++)
		fprintf(rf, "class r%02u string \"%s\"\n", k, rules[k]);
	for (k = 0; rf1000 && k < NRULES_MAX; k++)
		fprintf(rf1000, "class r%02u string \"%s\"\n", k, rules[k]);

	for (i = 0; i < npackets; i++) {
		struct flow *fl = &flows[rnd_below(NFLOWS)];
		unsigned int kind = rnd_below(100), n, flen, at;

		/* a third bare ACKs, half full segments, the rest between */
		if (kind < 33)
			n = 0;
		else if (kind < 83)
			n = MSS;
		else
			n = 1 + rnd_below(1000);
		memcpy(payload, pool + rnd_below(POOL_SIZE), n);
		/* 1 in 1300 segments carries the needle, 1 in 2000 one of the
		 * other rules' strings */
		if (n >= 64 && rnd_below(1300) == 0) {
			k = 0;
		} else if (n >= 64 && rnd_below(2000) == 0) {
			k = 1 + rnd_below(NRULES - 1);
		} else {
			k = NRULES;
		}
		if (k < NRULES) {
			size_t sl = strlen(rules[k]);

			at = rnd_below(n - (unsigned int)sl);
			memcpy(payload + at, rules[k], sl);
			planted_needle += k == 0;
			planted_any++;
		}
		flen = build(frame, fl, payload, n);
		ts_us += 1 + rnd_below(60);
		put_host32(out, (uint32_t)(ts_us / 1000000));
		put_host32(out, (uint32_t)(ts_us % 1000000));
		put_host32(out, flen);
		put_host32(out, flen);
		fwrite(frame, 1, flen, out);
	}
	if (fclose(out) || fclose(rf) || (rf1000 && fclose(rf1000))) {
		perror("gen_capture");
		return 2;
	}
	free(pool);
	printf("planted: needle=%lu any=%lu\n", planted_needle, planted_any);
	return 0;
}
