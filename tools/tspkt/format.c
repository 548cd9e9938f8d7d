/*
 * format.c - how tspkt reports a matching datagram: the text line or the
 * --json object (tspkt(1), OUTPUT).  The workers call it; the output stage
 * only prints what it made, in capture order.
 */
#include <arpa/inet.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "format.h"

struct strbuf {
	char *p;
	size_t len, cap;
	bool failed;
};

static void sb_printf(struct strbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void sb_printf(struct strbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		if (b->failed)
			return;
		va_start(ap, fmt);
		n = vsnprintf(b->p ? b->p + b->len : NULL,
			      b->p ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->failed = true;
			return;
		}
		if (b->p && (size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		size_t cap = (b->cap + (size_t)n + 1) * 2;
		char *p = realloc(b->p, cap);

		if (!p) {
			b->failed = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
}

static void format_time(int64_t ts_ns, char *buf, size_t len)
{
	time_t sec = (time_t)(ts_ns / 1000000000);
	long usec = (long)(ts_ns % 1000000000 / 1000);
	struct tm tm;

	if (usec < 0) {
		usec += 1000000;
		sec--;
	}
	if (!gmtime_r(&sec, &tm)) {
		snprintf(buf, len, "%lld.%06ld", (long long)sec, usec);
		return;
	}
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ",
		 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		 tm.tm_min, tm.tm_sec, usec);
}

static const char *proto_name(uint8_t proto, char *buf, size_t len)
{
	switch (proto) {
	case 6:
		return "TCP";
	case 17:
		return "UDP";
	case 1:
		return "ICMP";
	case 58:
		return "ICMPv6";
	case 132:
		return "SCTP";
	default:
		snprintf(buf, len, "proto-%u", proto);
		return buf;
	}
}

static void format_addr(int family, const uint8_t *addr, char *buf, size_t len)
{
	if (!inet_ntop(family == 6 ? AF_INET6 : AF_INET, addr, buf,
		       (socklen_t)len))
		snprintf(buf, len, "?");
}

static bool has_ports(const struct pkt_meta *m)
{
	return m->has_transport &&
	       (m->l4proto == 6 || m->l4proto == 17 || m->l4proto == 132);
}

/* "10.0.0.1:80", "[fd00::1]:80", or the bare address without ports. */
static void endpoint(const struct pkt_meta *m, const uint8_t *addr,
		     uint16_t port, char *buf, size_t len)
{
	char a[64];

	format_addr(m->family, addr, a, sizeof(a));
	if (!has_ports(m))
		snprintf(buf, len, "%s", a);
	else if (m->family == 6)
		snprintf(buf, len, "[%s]:%u", a, port);
	else
		snprintf(buf, len, "%s:%u", a, port);
}

/* The hits after the addresses: " class offset=N" each. */
static void text_hits(struct strbuf *b, const struct rule_hit *hits,
		      size_t nhits)
{
	for (size_t i = 0; i < nhits; i++) {
		if (hits[i].offset == RULE_HIT_NO_OFFSET)
			sb_printf(b, " %s offset=-", hits[i].rule->class_name);
		else
			sb_printf(b, " %s %s=%llu", hits[i].rule->class_name,
				  hits[i].stream ? "stream-offset" : "offset",
				  (unsigned long long)hits[i].offset);
	}
}

static void text_head(struct strbuf *b, const struct pkt_info *info)
{
	const struct pkt_meta *m = &info->meta;
	char t[64], src[80], dst[80], pb[16];

	format_time(info->ts_ns, t, sizeof(t));
	endpoint(m, m->src, m->sport, src, sizeof(src));
	endpoint(m, m->dst, m->dport, dst, sizeof(dst));
	sb_printf(b, "%s %s -> %s %s", t, src, dst,
		  proto_name(m->l4proto, pb, sizeof(pb)));
}

static void format_text(struct strbuf *b, const struct sk_buff *skb,
			const struct pkt_info *info,
			const struct rule_hit *hits, size_t nhits)
{
	text_head(b, info);
	text_hits(b, hits, nhits);
	sb_printf(b, " len=%u frame=%llu", skb->len,
		  (unsigned long long)info->frame);
	if (info->nfrags > 1)
		sb_printf(b, " frags=%u", info->nfrags);
	sb_printf(b, "\n");
}

/* Class names are checked when parsed (no quotes, backslashes or white
 * space), so only control bytes need escaping. */
static void json_string(struct strbuf *b, const char *s)
{
	sb_printf(b, "\"");
	for (; *s; s++) {
		if ((unsigned char)*s < 0x20 || *s == '"' || *s == '\\')
			sb_printf(b, "\\u%04x", (unsigned char)*s);
		else
			sb_printf(b, "%c", *s);
	}
	sb_printf(b, "\"");
}

/* {"type":..., the time, the frame (unless 0) and the addresses, up to
 * a comma. */
static void json_head(struct strbuf *b, const char *type, int64_t ts_ns,
		      uint64_t frame, const struct pkt_meta *m)
{
	char t[64], src[64], dst[64], pb[16];

	format_time(ts_ns, t, sizeof(t));
	format_addr(m->family, m->src, src, sizeof(src));
	format_addr(m->family, m->dst, dst, sizeof(dst));
	sb_printf(b, "{\"type\":\"%s\",\"time\":\"%s\",\"ts_ns\":%lld,", type,
		  t, (long long)ts_ns);
	if (frame)
		sb_printf(b, "\"frame\":%llu,", (unsigned long long)frame);
	sb_printf(b, "\"family\":%d,\"proto\":\"%s\",\"src\":\"%s\",",
		  m->family, proto_name(m->l4proto, pb, sizeof(pb)), src);
	if (has_ports(m))
		sb_printf(b, "\"sport\":%u,", m->sport);
	sb_printf(b, "\"dst\":\"%s\",", dst);
	if (has_ports(m))
		sb_printf(b, "\"dport\":%u,", m->dport);
}

static void json_hits(struct strbuf *b, const struct rule_hit *hits,
		      size_t nhits)
{
	sb_printf(b, "\"matches\":[");
	for (size_t i = 0; i < nhits; i++) {
		const struct rule *r = hits[i].rule;

		sb_printf(b, "%s{\"rule\":%zu,\"class\":", i ? "," : "",
			  hits[i].idx + 1);
		json_string(b, r->class_name);
		sb_printf(b, ",\"layer\":\"%s\",\"invert\":%s,\"offset\":",
			  rule_layer_name(hits[i].stream ? LAYER_STREAM :
							   r->layer),
			  r->invert ? "true" : "false");
		if (hits[i].offset == RULE_HIT_NO_OFFSET)
			sb_printf(b, "null}");
		else
			sb_printf(b, "%llu}",
				  (unsigned long long)hits[i].offset);
	}
	sb_printf(b, "]}\n");
}

static void format_json(struct strbuf *b, const struct sk_buff *skb,
			const struct pkt_info *info,
			const struct rule_hit *hits, size_t nhits)
{
	json_head(b, "match", info->ts_ns, info->frame, &info->meta);
	sb_printf(b, "\"len\":%u,\"frags\":%u,", skb->len, info->nfrags);
	json_hits(b, hits, nhits);
}

static char *sb_take(struct strbuf *b, size_t *len)
{
	if (b->failed) {
		free(b->p);
		return NULL;
	}
	*len = b->len;
	return b->p;
}

char *format_match(bool json, const struct sk_buff *skb,
		   const struct pkt_info *info, const struct rule_hit *hits,
		   size_t nhits, size_t *len)
{
	struct strbuf b = { 0 };

	if (json)
		format_json(&b, skb, info, hits, nhits);
	else
		format_text(&b, skb, info, hits, nhits);
	return sb_take(&b, len);
}

char *format_stream_match(bool json, const struct pkt_info *info,
			  const struct rule_hit *hits, size_t nhits,
			  size_t *len)
{
	struct strbuf b = { 0 };

	if (json) {
		json_head(&b, "match", info->ts_ns, info->frame, &info->meta);
		json_hits(&b, hits, nhits);
	} else {
		text_head(&b, info);
		text_hits(&b, hits, nhits);
		sb_printf(&b, " frame=%llu\n", (unsigned long long)info->frame);
	}
	return sb_take(&b, len);
}

char *format_gap(const struct pkt_meta *m, int64_t ts_ns, uint64_t frame,
		 uint64_t offset, uint64_t length, size_t *len)
{
	struct strbuf b = { 0 };

	json_head(&b, "gap", ts_ns, frame, m);
	sb_printf(&b, "\"offset\":%llu,\"length\":%llu}\n",
		  (unsigned long long)offset, (unsigned long long)length);
	return sb_take(&b, len);
}

char *format_flow(const struct pkt_meta *m, int64_t ts_ns, uint64_t packets,
		  uint64_t bytes, const char *state, const char *reason,
		  size_t *len)
{
	struct strbuf b = { 0 };

	json_head(&b, "flow", ts_ns, 0, m);
	sb_printf(&b,
		  "\"packets\":%llu,\"bytes\":%llu,\"state\":\"%s\","
		  "\"reason\":\"%s\"}\n",
		  (unsigned long long)packets, (unsigned long long)bytes, state,
		  reason);
	return sb_take(&b, len);
}
