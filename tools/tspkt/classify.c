/*
 * classify.c - the workers: take a batch of datagrams from the backlog,
 * find each one's transport header, apply every rule, have the matches
 * formatted (format.c) and hand the batch's results to the output stage,
 * which prints them in capture order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "backlog.h"
#include "decode.h"
#include "format.h"
#include "output.h"
#include "pool.h"
#include "sets.h"
#include "tspkt.h"

static unsigned int count_frags(const struct sk_buff *skb)
{
	const struct sk_buff *c;
	unsigned int n = 1;

	for (c = skb_shinfo(skb)->frag_list; c; c = c->next)
		n++;
	return n;
}

void classifier_init(struct classifier *k, const struct classify *cl)
{
	size_t nrules = cl->opts->rules.n;

	memset(k, 0, sizeof(*k));
	k->cl = cl;
	k->cache.pool = cl->pool;
	k->hits = tspkt_line_calloc(nrules ? nrules : 1, sizeof(*k->hits));
	k->scratch = ruleset_scratch_new(&cl->opts->rules);
	/* without memory, this thread still hands every datagram on (and
	 * the output stage its sequence numbers), matching nothing */
	if (!k->hits || !k->scratch) {
		free(k->hits);
		k->hits = NULL;
		fprintf(stderr, TSPKT_PROG ": out of memory: a worker "
					   "classifies nothing\n");
	}
}

void classifier_flush(struct classifier *k)
{
	if (k->nres)
		output_submit_list(k->cl->out, k->res, k->nres);
	k->nres = 0;
}

void classifier_done(struct classifier *k)
{
	classifier_flush(k);
	pkt_cache_flush(&k->cache);
	free(k->hits);
	k->hits = NULL;
	ruleset_scratch_free(k->scratch);
	k->scratch = NULL;
}

/* -w keeps a matching datagram until it is written: one in the reader's
 * bytes or in a pool slot is copied to the heap first, so slots and the
 * reader's buffer are free again at once.  NULL when out of memory. */
static struct sk_buff *keep_for_write(struct sk_buff *skb)
{
	unsigned int len = (unsigned int)(skb->tail - skb->head);
	struct sk_buff *copy;

	if (pkt_cb(skb)->owner == PKT_HEAP)
		return skb;
	/* a wrapped frame past 64 KiB is copied in two parts, as read */
	copy = pkt_copy_to_skb(skb->head, len);
	if (!copy)
		return NULL;
	skb_pull(copy, (unsigned int)(skb->data - skb->head));
	copy->mac_header = skb->mac_header;
	copy->network_header = skb->network_header;
	copy->transport_header = skb->transport_header;
	copy->protocol = skb->protocol;
	copy->tstamp_ns = skb->tstamp_ns;
	memcpy(copy->cb, skb->cb, sizeof(copy->cb));
	pkt_cb(copy)->owner = PKT_HEAP;
	pkt_cb(copy)->info = NULL;
	return copy;
}

/* --write-flows: the flow a matching datagram belongs to (TCP and UDP;
 * a datagram without ports has none). */
static void flow_of(const struct pkt_info *info, struct pkt_result *r)
{
	const struct pkt_meta *m = &info->meta;
	int dir;

	if (!m->has_transport || (m->l4proto != 6 && m->l4proto != 17))
		return;
	flow_key_make(&r->key, m->family, m->l4proto, m->src, m->dst, m->sport,
		      m->dport, &dir);
	r->has_key = true;
}

static int by_rule_then_offset(const void *a, const void *b)
{
	const struct rule_hit *x = a, *y = b;

	if (x->idx != y->idx)
		return x->idx < y->idx ? -1 : 1;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* The datagram's own hits and the stream occurrences it completed, in
 * rule order: a new heap array (the old one is the classifier's), or
 * @hits alone when out of memory. */
static struct rule_hit *with_stream_hits(struct rule_hit *hits, size_t *n,
					 const struct pkt_info *info)
{
	struct rule_hit *v = malloc((*n + info->nshits) * sizeof(*v));

	if (!v) {
		fprintf(stderr,
			TSPKT_PROG ": out of memory: frame %llu: stream "
				   "matches not printed\n",
			(unsigned long long)info->frame);
		return hits;
	}
	if (*n)
		memcpy(v, hits, *n * sizeof(*v));
	memcpy(v + *n, info->shits, info->nshits * sizeof(*v));
	*n += info->nshits;
	qsort(v, *n, sizeof(*v), by_rule_then_offset);
	return v;
}

/* A result that only counts a datagram: nothing to print or write. */
static bool plain(const struct pkt_result *r)
{
	return !r->matched && !r->record && !r->text && !r->skb &&
	       !r->classes && !r->has_key;
}

void classify_one(struct classifier *k, struct sk_buff *skb)
{
	const struct tspkt_opts *o = k->cl->opts;
	const struct ruleset *rs = &o->rules;
	struct pkt_info *info = pkt_cb(skb)->info;
	struct rule_hit *hits = k->hits;
	struct pkt_result *r = &k->res[k->nres++];
	size_t i, nhits = 0;

	memset(r, 0, sizeof(*r));
	r->seq = info->seq;
	pkt_cb(skb)->info = NULL;
	if (hits && !output_should_stop(k->cl->out)) {
		/* the reader found TCP's already, for its stream */
		if (!info->meta.has_transport ||
		    skb->transport_header == SKB_HEADER_UNSET)
			pkt_decode_transport(skb, &info->meta);
		nhits = ruleset_match(rs, skb, &info->meta, k->scratch, hits);
	}
	if (info->nshits && !output_should_stop(k->cl->out))
		hits = with_stream_hits(hits, &nhits, info);
	if (nhits) {
		bool print = !o->quiet && !o->counters_only;

		info->nfrags = count_frags(skb);
		r->matched = true;
		r->classes = calloc(rs->nclasses ? rs->nclasses : 1, 1);
		if (r->classes)
			for (i = 0; i < nhits; i++)
				r->classes[hits[i].rule->class_idx] = 1;
		if (print)
			r->text = format_match(o->json, skb, info, hits, nhits,
					       &r->text_len);
		if (o->write_flows)
			flow_of(info, r);
		else if (o->write_file && r->classes && (!print || r->text))
			r->skb = keep_for_write(skb);
		if ((print && !r->text) || !r->classes ||
		    (o->write_file && !o->write_flows && !r->skb)) {
			fprintf(stderr,
				TSPKT_PROG ": out of memory: frame %llu "
					   "not printed\n",
				(unsigned long long)info->frame);
			free(r->text);
			r->text = NULL;
			r->text_len = 0;
			free(r->classes);
			r->classes = NULL;
			r->matched = false;
		}
		if (r->skb == skb)
			skb = NULL; /* the output stage frees it */
	}
	if (hits != k->hits)
		free(hits);
	free(info->shits);
	info->shits = NULL;
	info->nshits = 0;
	if (skb && pkt_cb(skb)->owner == PKT_HEAP)
		free(info);
	else if (!skb && r->skb)
		free(info); /* a heap datagram kept for -w */
	pkt_release(&k->cache, skb);
	/* a run of datagrams that matched nothing is one result */
	if (plain(r) && k->nres > 1 && plain(r - 1) &&
	    r[-1].seq + pkt_result_span(r - 1) == r->seq &&
	    r[-1].more < UINT32_MAX) {
		r[-1].more++;
		k->nres--;
	}
	/* a match goes out at once: the reader looks at -n and -q */
	if (nhits || k->nres == CLASSIFY_BATCH)
		classifier_flush(k);
}

void *classify_worker(void *arg)
{
	struct classifier *k = arg;
	struct sk_buff *skbs[CLASSIFY_BATCH];
	unsigned int n, i;

	while ((n = backlog_dequeue_list(k->cl->backlog, skbs,
					 CLASSIFY_BATCH))) {
		for (i = 0; i < n; i++)
			classify_one(k, skbs[i]);
		pkt_cache_settle(&k->cache);
		/* every result handed over before waiting again: a result
		 * held back would hold up printing everyone else's */
		classifier_flush(k);
	}
	classifier_done(k);
	return NULL;
}
