/*
 * output.c - results back in capture order, whatever the number of workers.
 *
 * Every datagram handed to the backlog has a sequence number.  A worker
 * puts its result in a ring slot for that number; whoever fills the slot
 * of the oldest number not yet printed prints it and every ready slot after
 * it, under the lock (so stdout and the -w file see one writer).  A result
 * more than the ring's size ahead waits, which bounds memory.
 */
#define _DEFAULT_SOURCE /* pcap.h uses the BSD u_char/u_int types */
#include <errno.h>
#include <pcap/pcap.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "classify.h"
#include "defrag.h"
#include "tspkt.h"

/* pcap's largest snapshot length: no frame is longer */
#define FRAME_MAX (256u * 1024)

struct output {
	const struct tspkt_opts *o;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct pkt_result *ring;
	bool *ready;
	size_t window;
	uint64_t next; /* oldest sequence number not printed */
	size_t nclasses;
	uint64_t *class_counts;
	uint64_t classified, matched;
	atomic_bool stop;
	pcap_t *dead; /* -w */
	pcap_dumper_t *dumper;
	uint8_t *frame_buf;	   /* a frame rebuilt for -w */
	struct flow_keyset *flows; /* --write-flows: the matches' flows */
	bool locks_ready;
};

/* ---- setup ------------------------------------------------------------------- */

struct output *output_new(const struct tspkt_opts *o, size_t nclasses,
			  int linktype, unsigned int snaplen, char *err,
			  size_t errlen)
{
	struct output *out = calloc(1, sizeof(*out));

	if (!out)
		goto nomem;
	out->o = o;
	/* room for every packet in flight and then some: a slow worker
	 * holds up printing, never the others' work (a reader that
	 * classifies too runs up to CLASSIFY_AHEAD batches a worker ahead
	 * of it; threads taking turns at a file hold a turn each) */
	out->window = (size_t)o->workers *
			      (CLASSIFY_AHEAD * CLASSIFY_BATCH > CLASSIFY_TURN ?
				       CLASSIFY_AHEAD * CLASSIFY_BATCH :
				       CLASSIFY_TURN) +
		      256;
	out->ring = calloc(out->window, sizeof(*out->ring));
	out->ready = calloc(out->window, sizeof(*out->ready));
	out->nclasses = nclasses;
	out->class_counts =
		calloc(nclasses ? nclasses : 1, sizeof(*out->class_counts));
	if (!out->ring || !out->ready || !out->class_counts)
		goto nomem;
	atomic_init(&out->stop, false);
	if (o->write_flows) {
		/* -w is written by a second pass over the capture */
		out->flows = flow_keyset_new();
		if (!out->flows)
			goto nomem;
	} else if (o->write_file) {
		out->frame_buf = malloc(FRAME_MAX);
		if (!out->frame_buf)
			goto nomem;
		out->dead = pcap_open_dead(linktype, (int)snaplen);
		if (!out->dead)
			goto nomem;
		out->dumper = pcap_dump_open(out->dead, o->write_file);
		if (!out->dumper) {
			snprintf(err, errlen, "%s", pcap_geterr(out->dead));
			output_free(out);
			return NULL;
		}
	}
	pthread_mutex_init(&out->mu, NULL);
	pthread_cond_init(&out->cv, NULL);
	out->locks_ready = true;
	return out;
nomem:
	snprintf(err, errlen, "out of memory");
	output_free(out);
	return NULL;
}

/* ---- -w ------------------------------------------------------------------------ */

/* The frame one buffer was decoded from: its link and IP headers (still in
 * the head buffer before data) and its own bytes, not the chain's. */
static size_t rebuild_frame(struct sk_buff *skb, uint8_t *buf)
{
	const struct skb_shared_info *si = skb_shinfo(skb);
	const unsigned char *start;
	size_t n, i;

	if (skb->mac_header != SKB_HEADER_UNSET)
		start = skb_mac_header(skb);
	else if (skb->network_header != SKB_HEADER_UNSET)
		start = skb_network_header(skb);
	else
		start = skb->data;
	if (start > skb->data)
		start = skb->data;
	n = (size_t)(skb->tail - start);
	memcpy(buf, start, n);
	for (i = 0; i < si->nr_frags; i++) {
		if (n + si->frags[i].size > FRAME_MAX)
			break;
		memcpy(buf + n, si->frags[i].data, si->frags[i].size);
		n += si->frags[i].size;
	}
	return n;
}

static void dump_one(struct output *out, struct sk_buff *skb)
{
	struct pcap_pkthdr h;
	struct pkt_cb *cb = pkt_cb(skb);
	size_t n = rebuild_frame(skb, out->frame_buf);

	memset(&h, 0, sizeof(h));
	h.ts.tv_sec = (time_t)(cb->ts_ns / 1000000000);
	h.ts.tv_usec = (suseconds_t)(cb->ts_ns % 1000000000 / 1000);
	h.caplen = (bpf_u_int32)n;
	/* link padding is not kept: fewer bytes than captured, same length
	 * on the wire */
	h.len = cb->wirelen > n ? cb->wirelen : (bpf_u_int32)n;
	pcap_dump((u_char *)out->dumper, &h, out->frame_buf);
}

static int by_frame(const void *a, const void *b)
{
	uint64_t fa = pkt_cb(*(struct sk_buff *const *)a)->frame;
	uint64_t fb = pkt_cb(*(struct sk_buff *const *)b)->frame;

	return fa < fb ? -1 : fa > fb;
}

/* Every frame of the datagram, in capture order. */
static void dump_datagram(struct output *out, struct sk_buff *skb)
{
	struct sk_buff *v[DEFRAG_DEFAULT_MAX_FRAGS * 4], *c;
	size_t n = 0, i;

	v[n++] = skb;
	for (c = skb_shinfo(skb)->frag_list; c && n < sizeof(v) / sizeof(*v);
	     c = c->next)
		v[n++] = c;
	qsort(v, n, sizeof(*v), by_frame);
	for (i = 0; i < n; i++)
		dump_one(out, v[i]);
}

/* ---- in order ----------------------------------------------------------------- */

/* Under the lock. */
static void emit(struct output *out, struct pkt_result *r)
{
	const struct tspkt_opts *o = out->o;
	bool stopped = atomic_load(&out->stop);
	size_t i;

	if (!r->record)
		out->classified += pkt_result_span(r);
	else if (!r->matched && r->text && !stopped && !o->quiet &&
		 !o->counters_only) {
		fwrite(r->text, 1, r->text_len, stdout);
		if (o->line_buffered)
			fflush(stdout);
	}
	if (r->matched && !stopped) {
		out->matched++;
		for (i = 0; i < out->nclasses; i++)
			out->class_counts[i] += r->classes[i];
		if (r->text && !o->quiet && !o->counters_only) {
			fwrite(r->text, 1, r->text_len, stdout);
			if (o->line_buffered)
				fflush(stdout);
		}
		if (out->flows && r->has_key &&
		    flow_keyset_add(out->flows, &r->key))
			fprintf(stderr, TSPKT_PROG ": out of memory: a "
						   "matching flow is not "
						   "written\n");
		if (out->dumper && r->skb) {
			dump_datagram(out, r->skb);
			if (o->line_buffered)
				pcap_dump_flush(out->dumper);
		}
		if ((o->max_matches && out->matched >= o->max_matches) ||
		    o->quiet)
			atomic_store(&out->stop, true);
	}
	free(r->text);
	free(r->classes);
	kfree_skb(r->skb);
}

/* Under the lock: file @r; print what is ready if it was the oldest.
 * True if printing moved on. */
static bool submit_locked(struct output *out, struct pkt_result *r)
{
	size_t slot;

	while (r->seq >= out->next + out->window)
		pthread_cond_wait(&out->cv, &out->mu);
	if (r->seq == out->next) {
		/* the common case: nothing waits before it */
		emit(out, r);
		out->next += pkt_result_span(r);
	} else {
		slot = (size_t)(r->seq % out->window);
		out->ring[slot] = *r;
		out->ready[slot] = true;
		return false;
	}
	while (out->ready[slot = (size_t)(out->next % out->window)]) {
		out->ready[slot] = false;
		emit(out, &out->ring[slot]);
		out->next += pkt_result_span(&out->ring[slot]);
	}
	return true;
}

void output_submit_list(struct output *out, struct pkt_result *r, size_t n)
{
	bool moved = false;
	size_t i;

	pthread_mutex_lock(&out->mu);
	for (i = 0; i < n; i++)
		moved |= submit_locked(out, &r[i]);
	if (moved)
		pthread_cond_broadcast(&out->cv);
	pthread_mutex_unlock(&out->mu);
}

void output_submit(struct output *out, struct pkt_result *r)
{
	output_submit_list(out, r, 1);
}

const struct flow_keyset *output_matched_flows(struct output *out)
{
	return out->flows;
}

bool output_should_stop(struct output *out)
{
	return atomic_load(&out->stop);
}

int output_finish(struct output *out)
{
	int ret = 0;

	if (fflush(stdout) == EOF || ferror(stdout)) {
		fprintf(stderr,
			TSPKT_PROG ": write error on standard output: "
				   "%s\n",
			strerror(errno));
		ret = -1;
	}
	if (out->dumper) {
		if (pcap_dump_flush(out->dumper) ||
		    ferror(pcap_dump_file(out->dumper))) {
			fprintf(stderr, TSPKT_PROG ": %s: write error\n",
				out->o->write_file);
			ret = -1;
		}
		pcap_dump_close(out->dumper);
		out->dumper = NULL;
	}
	return ret;
}

uint64_t output_classified(struct output *out)
{
	uint64_t v;

	pthread_mutex_lock(&out->mu);
	v = out->classified;
	pthread_mutex_unlock(&out->mu);
	return v;
}

uint64_t output_matched(struct output *out)
{
	uint64_t v;

	pthread_mutex_lock(&out->mu);
	v = out->matched;
	pthread_mutex_unlock(&out->mu);
	return v;
}

uint64_t output_class_count(struct output *out, size_t idx)
{
	uint64_t v;

	pthread_mutex_lock(&out->mu);
	v = idx < out->nclasses ? out->class_counts[idx] : 0;
	pthread_mutex_unlock(&out->mu);
	return v;
}

void output_free(struct output *out)
{
	size_t i;

	if (!out)
		return;
	if (out->ring && out->ready)
		for (i = 0; i < out->window; i++)
			if (out->ready[i]) {
				free(out->ring[i].text);
				free(out->ring[i].classes);
				kfree_skb(out->ring[i].skb);
			}
	if (out->dumper)
		pcap_dump_close(out->dumper);
	if (out->dead)
		pcap_close(out->dead);
	flow_keyset_free(out->flows);
	if (out->locks_ready) {
		pthread_mutex_destroy(&out->mu);
		pthread_cond_destroy(&out->cv);
	}
	free(out->frame_buf);
	free(out->ring);
	free(out->ready);
	free(out->class_counts);
	free(out);
}
