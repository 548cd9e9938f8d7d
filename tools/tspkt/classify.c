/*
 * classify.c - the workers: take a datagram from the backlog, find its
 * transport header, apply every rule, have the result formatted
 * (format.c) and hand it to the output stage, which prints results in
 * capture order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "backlog.h"
#include "format.h"
#include "output.h"
#include "tspkt.h"

static unsigned int count_frags(const struct sk_buff *skb)
{
	const struct sk_buff *c;
	unsigned int n = 1;

	for (c = skb_shinfo(skb)->frag_list; c; c = c->next)
		n++;
	return n;
}

static void classify_one(struct classify *cl, struct sk_buff *skb,
			 struct rule_hit *hits)
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
		bool print = !o->quiet && !o->counters_only;

		info->nfrags = count_frags(skb);
		r.matched = true;
		r.classes = calloc(rs->nclasses ? rs->nclasses : 1, 1);
		if (r.classes)
			for (i = 0; i < nhits; i++)
				r.classes[hits[i].rule->class_idx] = 1;
		if (print)
			r.text = format_match(o->json, skb, info, hits, nhits,
					      &r.text_len);
		if ((print && !r.text) || !r.classes) {
			fprintf(stderr,
				TSPKT_PROG ": out of memory: frame %llu "
					   "not printed\n",
				(unsigned long long)info->frame);
			free(r.text);
			r.text = NULL;
			r.text_len = 0;
			free(r.classes);
			r.classes = NULL;
			r.matched = false;
		}
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
	size_t nrules = cl->opts->rules.n;
	struct rule_hit *hits = calloc(nrules ? nrules : 1, sizeof(*hits));
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
