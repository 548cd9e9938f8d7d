/*
 * classify.c - the workers: take a datagram from the backlog, find its
 * transport header, apply every rule, format the result and hand it to
 * the output stage, which prints results in capture order.
 */
#define _DEFAULT_SOURCE /* pcap.h uses the BSD u_char/u_int types */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tspkt.h"

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

struct hit {
	const struct rule *rule;
	size_t idx;
	unsigned int offset;
};

static void format_text(struct strbuf *b, const struct sk_buff *skb,
			const struct pkt_info *info, const struct hit *hits,
			size_t nhits)
{
	const struct pkt_meta *m = &info->meta;
	char t[64], src[80], dst[80], pb[16];
	size_t i;

	format_time(info->ts_ns, t, sizeof(t));
	endpoint(m, m->src, m->sport, src, sizeof(src));
	endpoint(m, m->dst, m->dport, dst, sizeof(dst));
	sb_printf(b, "%s %s -> %s %s", t, src, dst,
		  proto_name(m->l4proto, pb, sizeof(pb)));
	for (i = 0; i < nhits; i++) {
		if (hits[i].offset == UINT_MAX)
			sb_printf(b, " %s offset=-", hits[i].rule->class_name);
		else
			sb_printf(b, " %s offset=%u", hits[i].rule->class_name,
				  hits[i].offset);
	}
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

static void format_json(struct strbuf *b, const struct sk_buff *skb,
			const struct pkt_info *info, const struct hit *hits,
			size_t nhits)
{
	const struct pkt_meta *m = &info->meta;
	char t[64], src[64], dst[64], pb[16];
	size_t i;

	format_time(info->ts_ns, t, sizeof(t));
	format_addr(m->family, m->src, src, sizeof(src));
	format_addr(m->family, m->dst, dst, sizeof(dst));
	sb_printf(b, "{\"time\":\"%s\",\"ts_ns\":%lld,\"frame\":%llu,"
		  "\"family\":%d,\"proto\":\"%s\",\"src\":\"%s\",", t,
		  (long long)info->ts_ns, (unsigned long long)info->frame,
		  m->family, proto_name(m->l4proto, pb, sizeof(pb)), src);
	if (has_ports(m))
		sb_printf(b, "\"sport\":%u,", m->sport);
	sb_printf(b, "\"dst\":\"%s\",", dst);
	if (has_ports(m))
		sb_printf(b, "\"dport\":%u,", m->dport);
	sb_printf(b, "\"len\":%u,\"frags\":%u,\"matches\":[", skb->len,
		  info->nfrags);
	for (i = 0; i < nhits; i++) {
		const struct rule *r = hits[i].rule;

		sb_printf(b, "%s{\"rule\":%zu,\"class\":", i ? "," : "",
			  hits[i].idx + 1);
		json_string(b, r->class_name);
		sb_printf(b, ",\"layer\":\"%s\",\"invert\":%s,\"offset\":",
			  rule_layer_name(r->layer),
			  r->invert ? "true" : "false");
		if (hits[i].offset == UINT_MAX)
			sb_printf(b, "null}");
		else
			sb_printf(b, "%u}", hits[i].offset);
	}
	sb_printf(b, "]}\n");
}

static unsigned int count_frags(const struct sk_buff *skb)
{
	const struct sk_buff *c;
	unsigned int n = 1;

	for (c = skb_shinfo(skb)->frag_list; c; c = c->next)
		n++;
	return n;
}

static void classify_one(struct classify *cl, struct sk_buff *skb,
			 struct hit *hits)
{
	const struct tspkt_opts *o = cl->opts;
	const struct ruleset *rs = &o->rules;
	struct pkt_info *info = pkt_cb(skb)->info;
	struct pkt_result r;
	size_t i, nhits = 0;

	memset(&r, 0, sizeof(r));
	r.seq = info->seq;
	pkt_cb(skb)->info = NULL;
	if (hits && !output_should_stop(cl->out)) {
		pkt_decode_transport(skb, &info->meta);
		for (i = 0; i < rs->n; i++) {
			unsigned int off;

			if (rule_match(&rs->v[i], skb, &info->meta, &off)) {
				hits[nhits].rule = &rs->v[i];
				hits[nhits].idx = i;
				hits[nhits].offset = off;
				nhits++;
			}
		}
	}
	if (nhits) {
		struct strbuf b = { 0 };

		info->nfrags = count_frags(skb);
		r.matched = true;
		r.classes = calloc(rs->nclasses ? rs->nclasses : 1, 1);
		if (r.classes)
			for (i = 0; i < nhits; i++)
				r.classes[hits[i].rule->class_idx] = 1;
		if (!o->quiet && !o->counters_only) {
			if (o->json)
				format_json(&b, skb, info, hits, nhits);
			else
				format_text(&b, skb, info, hits, nhits);
		}
		if (b.failed || !r.classes) {
			fprintf(stderr, TSPKT_PROG ": out of memory: frame %llu "
				"not printed\n", (unsigned long long)info->frame);
			free(b.p);
			b.p = NULL;
			b.len = 0;
			free(r.classes);
			r.classes = NULL;
			r.matched = false;
		}
		r.text = b.p;
		r.text_len = b.len;
		if (o->write_file && r.matched) {
			r.skb = skb;
			skb = NULL;
		}
	}
	free(info);
	kfree_skb(skb);
	output_submit(cl->out, &r);
}

void *classify_worker(void *arg)
{
	struct classify *cl = arg;
	struct hit *hits = calloc(cl->opts->rules.n ? cl->opts->rules.n : 1,
				  sizeof(*hits));
	struct sk_buff *skb;

	/* without memory, this worker still drains the backlog (and the
	 * output stage its sequence numbers), matching nothing */
	if (!hits)
		fprintf(stderr, TSPKT_PROG ": out of memory: a worker "
			"classifies nothing\n");
	while ((skb = backlog_dequeue(cl->backlog)))
		classify_one(cl, skb, hits);
	free(hits);
	return NULL;
}
