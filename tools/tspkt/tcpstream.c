/*
 * tcpstream.c - TCP streams for tspkt (tcpstream.h says what it offers).
 *
 * The stream rules are grouped as sets.c groups a layer's rules (by case
 * mode and algorithm, distinct patterns once): each group is a matcher, a
 * TS_OVERLAP config whose push-mode stream reports every occurrence of
 * every pattern.  A direction that carries data gets a struct sdir: its
 * reassembly and one stream per matcher, allocated on its first byte, so
 * an idle flow costs only its struct flow.  The reassembly delivers bytes
 * in order; each run is written to every stream of the direction, and each
 * occurrence yielded is checked against the windows (from, to) of the
 * rules of its pattern.  A gap ends the streams (the occurrences waiting
 * on more bytes are decided then) and restarts them after it, so no
 * occurrence spans a gap while offsets keep counting its bytes.
 *
 * Occurrences go to the datagram being handled when they come from its
 * bytes, and into records of their own otherwise (a time-out's flush, an
 * eviction, the end); gaps and flow ends are records too.
 */
#include "tcpstream.h"

#include <textsearch.h>
#include <textsearch_stream.h>
#include <textsearch_timer.h>

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules.h"

#define TH_FIN 0x01
#define TH_SYN 0x02
#define TH_RST 0x04
#define TH_ACK 0x10

/* One search over a direction's bytes for a group of rules. */
struct matcher {
	struct ts_config *conf; /* TS_OVERLAP */
	bool own;		/* conf is ours to destroy */
	/* the rules of pattern id k: rules[first[k] .. first[k + 1]) */
	unsigned int *first, *rules;
	unsigned int npat;
};

/*
 * A direction whose reassembly is over for good (the depth, its FIN, or
 * not picked up) is marked in its flow's owner_bits, so that its later
 * segments are only counted, without a look at its state: past the depth,
 * most segments of a long capture are such.
 */
#define DIR_DONE(dir) (1u << (dir))
#define DIR_ON_ITS_OWN(dir) (4u << (dir)) /* and searched on its own */

/* A direction that has carried data. */
struct sdir {
	struct reasm_dir rd;
	struct timer_list hole_timer; /* armed while a hole waits */
	bool hole_armed;	      /* hole_timer is pending */
	struct flow *flow;
	struct tcpstream *ts;
	uint64_t base;	     /* stream offset of the searches' byte 0 */
	uint64_t last_frame; /* the last datagram that brought bytes */
	int64_t last_ts;
	uint8_t dir;
	bool counted_midstream;
	struct reasm_consumer consumer;
	struct ts_stream *s[];
};

struct tcpstream {
	const struct tspkt_opts *o;
	const struct ruleset *rs;
	struct tcpstream_opts so;
	struct matcher *m;
	unsigned int nm;
	struct pkt_clock *clock;
	struct flow_table *flows;
	struct reasm_ctx rctx; /* the memcap, across directions */
	/* the datagram being handled: its flow, direction and hits */
	struct flow *cur_flow;
	int cur_dir;
	uint64_t cur_frame;
	int64_t cur_ts;
	struct rule_hit **hits;
	size_t *nhits, *hcap;
	/* records waiting to be printed */
	struct pkt_result *rec;
	size_t nrec, caprec;
	uint8_t *scratch; /* a non-linear datagram's payload */
	struct tcpstream_stats st;
};

/* ---- setting up ------------------------------------------------------------ */

bool tcpstream_wanted(const struct ruleset *rs)
{
	for (size_t i = 0; i < rs->n; i++)
		if (rule_in_stream(&rs->v[i]))
			return true;
	return false;
}

static bool set_algo(const struct rule *r)
{
	return !strcmp(r->algo, "auto") || r->conf->ops->init_set != NULL;
}

/* A matcher for the rules @idx[0..n) of @rs (same case mode and
 * algorithm): their distinct patterns in one config, or with an
 * algorithm without sets, one rule's pattern alone. */
static int build_matcher(const struct ruleset *rs, struct matcher *m,
			 const unsigned int *idx, unsigned int n, char *err,
			 size_t errlen)
{
	const struct rule *r0 = &rs->v[idx[0]];
	const void **pats = calloc(n, sizeof(*pats));
	unsigned int *lens = calloc(n, sizeof(*lens));
	unsigned int *pid = calloc(n, sizeof(*pid));
	int flags = TS_AUTOLOAD | TS_OVERLAP, ret = -1;
	unsigned int i, j;

	m->first = calloc(n + 1, sizeof(*m->first));
	m->rules = calloc(n, sizeof(*m->rules));
	if (!pats || !lens || !pid || !m->first || !m->rules) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (r0->icase)
		flags |= TS_IGNORECASE;
	/* distinct patterns, in rule order */
	for (i = 0; i < n; i++) {
		const struct rule *r = &rs->v[idx[i]];

		for (j = 0; j < m->npat; j++)
			if (lens[j] == r->len &&
			    !memcmp(pats[j], r->pattern, r->len))
				break;
		if (j == m->npat) {
			pats[j] = r->pattern;
			lens[j] = r->len;
			m->npat++;
		}
		pid[i] = j;
	}
	/* rules grouped by pattern id */
	for (i = 0; i < n; i++)
		m->first[pid[i] + 1]++;
	for (j = 0; j < m->npat; j++)
		m->first[j + 1] += m->first[j];
	{
		unsigned int *fill = calloc(m->npat + 1, sizeof(*fill));

		if (!fill) {
			snprintf(err, errlen, "out of memory");
			goto out;
		}
		memcpy(fill, m->first, (m->npat + 1) * sizeof(*fill));
		for (i = 0; i < n; i++)
			m->rules[fill[pid[i]]++] = idx[i];
		free(fill);
	}
	if (m->npat == 1)
		m->conf = textsearch_prepare(r0->algo, pats[0], lens[0],
					     GFP_KERNEL, flags);
	else
		m->conf = textsearch_prepare_set(r0->algo, pats, lens, m->npat,
						 GFP_KERNEL, flags);
	if (IS_ERR(m->conf)) {
		snprintf(err, errlen, "stream search for '%s': %s", r0->algo,
			 textsearch_last_error());
		m->conf = NULL;
		goto out;
	}
	m->own = true;
	ret = 0;
out:
	free(pats);
	free(lens);
	free(pid);
	return ret;
}

static int build_matchers(struct tcpstream *ts, char *err, size_t errlen)
{
	const struct ruleset *rs = ts->rs;
	unsigned int *idx = calloc(rs->n ? rs->n : 1, sizeof(*idx));
	bool *done = calloc(rs->n ? rs->n : 1, sizeof(*done));
	int ret = -1;

	ts->m = calloc(rs->n ? rs->n : 1, sizeof(*ts->m));
	if (!idx || !done || !ts->m) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < rs->n; i++) {
		const struct rule *r = &rs->v[i];
		unsigned int n = 0;

		if (done[i] || !rule_in_stream(r))
			continue;
		idx[n++] = (unsigned int)i;
		done[i] = true;
		/* its companions: same case mode and algorithm, if that
		 * algorithm takes sets */
		for (size_t j = i + 1; set_algo(r) && j < rs->n; j++) {
			const struct rule *q = &rs->v[j];

			if (!done[j] && rule_in_stream(q) &&
			    q->icase == r->icase && !strcmp(q->algo, r->algo)) {
				idx[n++] = (unsigned int)j;
				done[j] = true;
			}
		}
		if (build_matcher(rs, &ts->m[ts->nm++], idx, n, err, errlen))
			goto out;
	}
	ret = 0;
out:
	free(idx);
	free(done);
	return ret;
}

/* ---- records ------------------------------------------------------------------ */

static struct pkt_result *new_record(struct tcpstream *ts)
{
	struct pkt_result *r;

	if (ts->nrec == ts->caprec) {
		size_t cap = ts->caprec ? 2 * ts->caprec : 16;
		struct pkt_result *v = realloc(ts->rec, cap * sizeof(*v));

		if (!v)
			return NULL;
		ts->rec = v;
		ts->caprec = cap;
	}
	r = &ts->rec[ts->nrec++];
	memset(r, 0, sizeof(*r));
	r->record = true;
	return r;
}

static void nomem_record(void)
{
	fprintf(stderr, TSPKT_PROG ": out of memory: a stream record is "
				   "not printed\n");
}

/* The addresses of direction @dir of @f, as a datagram's would be. */
static void dir_meta(const struct flow *f, int dir, struct pkt_meta *m)
{
	memset(m, 0, sizeof(*m));
	m->family = f->key.family;
	m->l4proto = f->key.proto;
	memcpy(m->src, f->key.addr[dir], 16);
	memcpy(m->dst, f->key.addr[!dir], 16);
	m->sport = f->key.port[dir];
	m->dport = f->key.port[!dir];
	m->has_transport = true;
}

/* An occurrence decided away from a datagram (a flush): printed on its
 * own, with the last datagram that brought its direction's bytes. */
static void match_record(struct tcpstream *ts, struct sdir *d,
			 const struct rule_hit *hit)
{
	const bool print = !ts->o->quiet && !ts->o->counters_only;
	struct pkt_result *r = new_record(ts);
	struct pkt_info info;

	if (!r) {
		nomem_record();
		return;
	}
	memset(&info, 0, sizeof(info));
	info.frame = d->last_frame;
	info.ts_ns = d->last_ts;
	info.nfrags = 1;
	dir_meta(d->flow, d->dir, &info.meta);
	r->matched = true;
	r->classes = calloc(ts->rs->nclasses ? ts->rs->nclasses : 1, 1);
	if (print)
		r->text = format_stream_match(ts->o->json, &info, hit, 1,
					      &r->text_len);
	if (!r->classes || (print && !r->text)) {
		free(r->classes);
		free(r->text);
		ts->nrec--;
		nomem_record();
		return;
	}
	r->classes[hit->rule->class_idx] = 1;
	r->has_key = true;
	r->key = d->flow->key;
}

static void gap_record(struct tcpstream *ts, struct sdir *d, uint64_t offset,
		       uint64_t len)
{
	struct pkt_result *r;
	struct pkt_meta m;

	if (!ts->o->json || ts->o->quiet || ts->o->counters_only)
		return;
	r = new_record(ts);
	if (!r) {
		nomem_record();
		return;
	}
	dir_meta(d->flow, d->dir, &m);
	r->text = format_gap(&m, ts->cur_flow ? ts->cur_ts : d->last_ts,
			     ts->cur_flow ? ts->cur_frame : d->last_frame,
			     offset, len, &r->text_len);
	if (!r->text) {
		ts->nrec--;
		nomem_record();
	}
}

static const char *end_name(enum flow_end why)
{
	static const char *const names[] = {
		[FLOW_END_FIN] = "fin",
		[FLOW_END_RST] = "rst",
		[FLOW_END_TIMEOUT] = "timeout",
		[FLOW_END_EVICTED] = "evicted",
		[FLOW_END_CAPTURE] = "end-of-capture",
	};

	return names[why];
}

static const char *state_name(const struct flow *f)
{
	switch (f->state) {
	case FLOW_NEW:
		return "new";
	case FLOW_ESTABLISHED:
		return "established";
	default:
		return "closed";
	}
}

static void flow_record(struct tcpstream *ts, const struct flow *f,
			enum flow_end why)
{
	struct pkt_result *r;
	struct pkt_meta m;

	if (!ts->o->json || ts->o->quiet || ts->o->counters_only)
		return;
	r = new_record(ts);
	if (!r) {
		nomem_record();
		return;
	}
	dir_meta(f, f->init_dir, &m);
	r->text = format_flow(&m, f->last_ts, f->packets, f->bytes,
			      state_name(f), end_name(why), &r->text_len);
	if (!r->text) {
		ts->nrec--;
		nomem_record();
	}
}

/* ---- searching ------------------------------------------------------------------ */

/* A hit for the datagram being handled, or a record of its own. */
static void report(struct tcpstream *ts, struct sdir *d, const struct rule *r,
		   uint64_t offset)
{
	struct rule_hit hit = {
		.rule = r,
		.idx = (size_t)(r - ts->rs->v),
		.offset = offset,
		.stream = true,
	};

	ts->st.matches++;
	if (ts->cur_flow != d->flow || ts->cur_dir != d->dir) {
		match_record(ts, d, &hit);
		return;
	}
	if (*ts->nhits == *ts->hcap) {
		size_t cap = *ts->hcap ? 2 * *ts->hcap : 8;
		struct rule_hit *v = realloc(*ts->hits, cap * sizeof(*v));

		if (!v) {
			fprintf(stderr, TSPKT_PROG ": out of memory: a stream "
						   "match is not printed\n");
			return;
		}
		*ts->hits = v;
		*ts->hcap = cap;
	}
	(*ts->hits)[(*ts->nhits)++] = hit;
}

/* What matcher @k's stream of @d yields now. */
static void drain(struct tcpstream *ts, struct sdir *d, unsigned int k)
{
	const struct matcher *m = &ts->m[k];
	struct ts_match mt;

	while (textsearch_stream_next(d->s[k], &mt) > 0) {
		uint64_t start = d->base + mt.start, end = d->base + mt.end;

		if (mt.id >= m->npat)
			continue;
		for (unsigned int i = m->first[mt.id]; i < m->first[mt.id + 1];
		     i++) {
			const struct rule *r = &ts->rs->v[m->rules[i]];

			if (start >= r->sfrom && end <= r->sto)
				report(ts, d, r, start);
		}
	}
}

/* The reassembly's bytes in order: to every search of the direction
 * (whose offsets count from d->base, so @off is theirs already). */
static int on_data(void *opaque, uint64_t off, const uint8_t *p, size_t len)
{
	struct sdir *d = opaque;
	struct tcpstream *ts = d->ts;

	(void)off;
	for (unsigned int k = 0; k < ts->nm; k++)
		if (textsearch_stream_write(d->s[k], p, len) == 0)
			drain(ts, d, k);
	return 0;
}

/* End the searches: what waited on more bytes is decided now. */
static void end_searches(struct tcpstream *ts, struct sdir *d)
{
	for (unsigned int k = 0; k < ts->nm; k++)
		if (textsearch_stream_end(d->s[k]) == 0)
			drain(ts, d, k);
}

/* A gap: no occurrence spans it, and offsets count its bytes. */
static int on_gap(void *opaque, uint64_t off, uint64_t len)
{
	struct sdir *d = opaque;
	struct tcpstream *ts = d->ts;

	end_searches(ts, d);
	for (unsigned int k = 0; k < ts->nm; k++)
		textsearch_stream_reset(d->s[k]);
	d->base = off + len;
	gap_record(ts, d, off, len);
	return 0;
}

/* The direction's stream is over (its FIN, a RST, the depth). */
static int on_end(void *opaque, uint64_t off)
{
	struct sdir *d = opaque;

	(void)off;
	end_searches(d->ts, d);
	return 0;
}

/* ---- directions ------------------------------------------------------------------ */

static void hole_expired(struct timer_list *t);

static struct sdir *sdir_new(struct tcpstream *ts, struct flow *f, int dir)
{
	size_t sz = sizeof(struct sdir) + ts->nm * sizeof(struct ts_stream *);
	struct sdir *d = calloc(1, sz);

	if (!d)
		return NULL;
	d->ts = ts;
	d->flow = f;
	d->dir = (uint8_t)dir;
	for (unsigned int k = 0; k < ts->nm; k++) {
		d->s[k] = textsearch_stream_open(ts->m[k].conf, GFP_KERNEL);
		if (IS_ERR(d->s[k])) {
			d->s[k] = NULL;
			for (unsigned int j = 0; j < k; j++)
				textsearch_stream_free(d->s[j]);
			free(d);
			return NULL;
		}
	}
	reasm_dir_init(&d->rd);
	d->consumer = (struct reasm_consumer){
		.data = on_data, .gap = on_gap, .end = on_end, .opaque = d
	};
	timer_setup(&d->hole_timer, hole_expired, 0);
	return d;
}

/* Flush what the reassembly holds (holes become gaps), end the searches
 * and free. */
static void sdir_end(struct tcpstream *ts, struct sdir *d)
{
	del_timer(&d->hole_timer);
	reasm_close(&ts->rctx, &d->rd, &d->consumer);
	end_searches(ts, d); /* if the reassembly had ended it already */
	reasm_dir_free(&ts->rctx, &d->rd);
	for (unsigned int k = 0; k < ts->nm; k++)
		textsearch_stream_free(d->s[k]);
	free(d);
}

/* A hole waited its time: skip it. */
static void hole_expired(struct timer_list *t)
{
	struct sdir *d = from_timer(d, t, hole_timer);

	d->hole_armed = false;
	reasm_skip_hole(&d->ts->rctx, &d->rd, &d->consumer);
	if (d->rd.held) {
		mod_timer(&d->hole_timer,
			  jiffies + d->ts->so.hole_timeout * (unsigned long)HZ);
		d->hole_armed = true;
	}
}

/* The flow table's word that a flow ends. */
static void on_flow_end(struct flow *f, enum flow_end why, void *arg)
{
	struct tcpstream *ts = arg;

	for (int dir = 0; dir < 2; dir++) {
		if (f->dir[dir]) {
			sdir_end(ts, f->dir[dir]);
			f->dir[dir] = NULL;
		}
	}
	flow_record(ts, f, why);
}

static const struct flow_ops flow_ops = { .end = on_flow_end };

struct tcpstream *tcpstream_new(const struct tspkt_opts *o,
				const struct tcpstream_opts *so,
				struct pkt_clock *clock, char *err,
				size_t errlen)
{
	struct tcpstream *ts = calloc(1, sizeof(*ts));

	if (!ts) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	ts->o = o;
	ts->rs = &o->rules;
	ts->so = *so;
	ts->cur_dir = -1;
	{
		const struct reasm_config rc = {
			.policy = so->policy,
			.depth = so->depth,
			.memcap = (size_t)so->memcap,
			.no_midstream = !so->midstream,
		};

		reasm_ctx_init(&ts->rctx, &rc);
	}
	if (build_matchers(ts, err, errlen))
		goto fail;
	ts->clock = clock;
	ts->scratch = malloc(65536);
	if (!ts->scratch) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	pkt_clock_bind(clock);
	ts->flows = flow_table_new(so->max_flows, clock->base, &so->timeouts,
				   &flow_ops, ts);
	if (!ts->flows) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	flow_table_set_now(ts->flows, &clock->last);
	return ts;
fail:
	tcpstream_free(ts);
	return NULL;
}

/* ---- datagrams ------------------------------------------------------------------- */

void tcpstream_packet(struct tcpstream *ts, struct sk_buff *skb,
		      struct pkt_meta *meta, uint64_t frame, int64_t ts_ns,
		      struct rule_hit **hits, size_t *nhits, size_t *cap)
{
	uint8_t hb[20];
	const uint8_t *th, *payload;
	unsigned int toff, plen;
	uint32_t seq, window;
	uint8_t flags;
	struct flow *f;
	struct sdir *d;
	enum flow_state state;
	int dir;

	if (!meta->has_transport || skb->transport_header == SKB_HEADER_UNSET)
		return;
	if (meta->l4proto == IPPROTO_UDP) {
		/* a flow too (its time-outs, its record), without a stream */
		f = flow_lookup(ts->flows, meta->family, IPPROTO_UDP, meta->src,
				meta->dst, meta->sport, meta->dport, &dir);
		if (f) {
			f->last_ts = ts_ns;
			flow_packet(ts->flows, f, dir, meta->net_len, 0);
		}
		return;
	}
	if (meta->l4proto != IPPROTO_TCP)
		return;
	ts->st.segments++;
	toff = (unsigned int)skb_transport_offset(skb);
	th = skb_header_pointer(skb, (int)toff, sizeof(hb), hb);
	if (!th)
		return;
	seq = (uint32_t)th[4] << 24 | (uint32_t)th[5] << 16 |
	      (uint32_t)th[6] << 8 | th[7];
	flags = th[13];
	window = (uint32_t)th[14] << 8 | th[15];
	plen = meta->net_len > meta->payload_off ?
		       meta->net_len - meta->payload_off :
		       0;
	if (plen > skb->len - meta->payload_off)
		plen = skb->len - meta->payload_off;
	payload = plen ? skb_header_pointer(skb, (int)meta->payload_off,
					    (int)plen, ts->scratch) :
			 NULL;
	f = flow_lookup(ts->flows, meta->family, IPPROTO_TCP, meta->src,
			meta->dst, meta->sport, meta->dport, &dir);
	if (!f)
		return;
	/* a new connection on the tuple of one that ended */
	if (f->ended && (flags & (TH_SYN | TH_ACK)) == TH_SYN) {
		flow_close(ts->flows, f, FLOW_END_FIN);
		f = flow_lookup(ts->flows, meta->family, IPPROTO_TCP, meta->src,
				meta->dst, meta->sport, meta->dport, &dir);
		if (!f)
			return;
	}
	ts->cur_flow = f;
	ts->cur_dir = dir;
	ts->cur_frame = frame;
	ts->cur_ts = ts_ns;
	ts->hits = hits;
	ts->nhits = nhits;
	ts->hcap = cap;
	f->last_ts = ts_ns;
	if (window > f->window[dir])
		f->window[dir] = window;
	d = f->dir[dir];
	if (!f->ended && !d && (plen || (flags & TH_SYN))) {
		if (!(flags & TH_SYN) && !ts->so.midstream) {
			ts->st.ignored++;
			goto count;
		}
		d = f->dir[dir] = sdir_new(ts, f, dir);
		if (!d) {
			fprintf(stderr, TSPKT_PROG ": out of memory: a TCP "
						   "stream is not followed\n");
			goto count;
		}
	}
	if (f->ended || !d) {
		if (f->ended) {
			/* its last segments: searched already, or never to
			 * be (a RST's) */
			meta->in_stream = true;
			ts->st.ignored++;
		}
		goto count;
	}
	if (f->owner_bits & DIR_DONE(dir)) {
		meta->in_stream = !(f->owner_bits & DIR_ON_ITS_OWN(dir));
		goto count;
	}
	/* past the depth, or not followed: searched on its own again */
	meta->in_stream = !(d->rd.flags & (REASM_F_DEPTH | REASM_F_IGNORED));
	if (plen) {
		d->last_frame = frame;
		d->last_ts = ts_ns;
	}
	reasm_window(&d->rd, f->window[!dir]);
	reasm_add(&ts->rctx, &d->rd, &d->consumer, seq, payload, plen, flags);
	if (!(d->counted_midstream) && (d->rd.flags & REASM_F_MIDSTREAM)) {
		d->counted_midstream = true;
		ts->st.midstream++;
	}
	/* hole_armed spares most segments the timer base's lock */
	if (d->rd.held) {
		if (!d->hole_armed) {
			mod_timer(&d->hole_timer,
				  jiffies + ts->so.hole_timeout *
						    (unsigned long)HZ);
			d->hole_armed = true;
		}
	} else if (d->hole_armed) {
		del_timer(&d->hole_timer);
		d->hole_armed = false;
	}
	if (d->rd.flags & (REASM_F_CLOSED | REASM_F_IGNORED)) {
		f->owner_bits |= DIR_DONE(dir);
		if (d->rd.flags & (REASM_F_DEPTH | REASM_F_IGNORED))
			f->owner_bits |= DIR_ON_ITS_OWN(dir);
	}
count:
	state = flow_packet(ts->flows, f, dir, meta->net_len, flags);
	(void)state;
	ts->cur_flow = NULL;
	ts->cur_dir = -1;
}

struct pkt_result *tcpstream_take_records(struct tcpstream *ts, size_t *n)
{
	struct pkt_result *v = ts->rec;

	*n = ts->nrec;
	ts->rec = NULL;
	ts->nrec = ts->caprec = 0;
	return v;
}

void tcpstream_end_all(struct tcpstream *ts)
{
	flow_table_end_all(ts->flows, FLOW_END_CAPTURE);
}

void tcpstream_get_stats(const struct tcpstream *ts, struct tcpstream_stats *st)
{
	*st = ts->st;
	st->reasm = ts->rctx.stats;
	st->flows = *flow_table_stats(ts->flows);
	ts_timer_base_stats(ts->clock->base, &st->timers);
}

void tcpstream_free(struct tcpstream *ts)
{
	size_t n;

	if (!ts)
		return;
	flow_table_free(ts->flows);
	for (unsigned int k = 0; k < ts->nm; k++) {
		textsearch_destroy(ts->m[k].conf);
		free(ts->m[k].first);
		free(ts->m[k].rules);
	}
	free(ts->m);
	free(ts->scratch);
	for (n = 0; n < ts->nrec; n++) {
		free(ts->rec[n].text);
		free(ts->rec[n].classes);
	}
	free(ts->rec);
	free(ts);
}
