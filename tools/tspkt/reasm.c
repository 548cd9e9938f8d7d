/*
 * reasm.c - TCP reassembly of one direction (see reasm.h).
 *
 * Held data is a list of disjoint runs sorted by stream offset, each a copy
 * of bytes from one segment, remembering that segment's range for the
 * overlap policy.  A new segment fills the holes between held runs with new
 * runs and, where it overlaps a run with different bytes and the policy
 * prefers it, overwrites them in place: held memory only grows by the bytes
 * that were missing.  Everything is computed in 64-bit stream offsets; a
 * sequence number is turned into one by its serial distance from the next
 * expected byte, so the 32-bit wrap never shows.
 *
 * Consumer callbacks may free the direction: state is updated before each
 * call, and after a call that returns non-zero nothing touches the
 * direction (a run being delivered is unlinked first and freed after).
 */
#include "reasm.h"

#include <stdlib.h>
#include <string.h>

#include "textsearch_stream.h"

struct reasm_seg {
	struct reasm_seg *next;
	uint64_t off;	 /* stream offset of data[0] */
	uint64_t ostart; /* stream offset and length of the segment */
	uint32_t olen;	 /* these bytes first came from */
	uint32_t len;
	uint8_t data[];
};

#define SEG_HDR sizeof(struct reasm_seg)

static const char *const policy_names[] = {
	[REASM_POLICY_BSD] = "bsd",	    [REASM_POLICY_FIRST] = "first",
	[REASM_POLICY_LAST] = "last",	    [REASM_POLICY_LINUX] = "linux",
	[REASM_POLICY_WINDOWS] = "windows", [REASM_POLICY_SOLARIS] = "solaris",
};

#define NPOLICIES (sizeof(policy_names) / sizeof(policy_names[0]))

int reasm_policy_parse(const char *name, enum reasm_policy *policy)
{
	for (size_t i = 0; i < NPOLICIES; i++) {
		if (strcmp(name, policy_names[i]) == 0) {
			*policy = (enum reasm_policy)i;
			return 0;
		}
	}
	return -1;
}

const char *reasm_policy_name(enum reasm_policy policy)
{
	return (size_t)policy < NPOLICIES ? policy_names[policy] : "?";
}

void reasm_ctx_init(struct reasm_ctx *ctx, const struct reasm_config *cfg)
{
	memset(ctx, 0, sizeof(*ctx));
	if (cfg) {
		ctx->cfg = *cfg;
	} else {
		ctx->cfg.depth = REASM_DEFAULT_DEPTH;
	}
	if (!ctx->cfg.memcap)
		ctx->cfg.memcap = REASM_DEFAULT_MEMCAP;
	if (!ctx->cfg.min_window)
		ctx->cfg.min_window = REASM_DEFAULT_MIN_WINDOW;
	if (!ctx->cfg.max_window)
		ctx->cfg.max_window = REASM_DEFAULT_MAX_WINDOW;
	if (ctx->cfg.max_window < ctx->cfg.min_window)
		ctx->cfg.max_window = ctx->cfg.min_window;
}

void reasm_dir_init(struct reasm_dir *d)
{
	memset(d, 0, sizeof(*d));
}

static void seg_free(struct reasm_ctx *ctx, struct reasm_seg *s)
{
	ctx->mem_used -= SEG_HDR + s->len;
	free(s);
}

static void drop_held(struct reasm_ctx *ctx, struct reasm_dir *d)
{
	struct reasm_seg *s = d->held;

	d->held = NULL;
	d->tail = NULL;
	d->finger = NULL;
	d->held_bytes = 0;
	d->nruns = 0;
	while (s) {
		struct reasm_seg *next = s->next;

		seg_free(ctx, s);
		s = next;
	}
}

void reasm_dir_free(struct reasm_ctx *ctx, struct reasm_dir *d)
{
	drop_held(ctx, d);
}

void reasm_window(struct reasm_dir *d, uint32_t window)
{
	if (window > d->window)
		d->window = window;
}

static uint64_t dir_window(const struct reasm_ctx *ctx,
			   const struct reasm_dir *d)
{
	uint32_t w = d->window;

	if (w < ctx->cfg.min_window)
		w = ctx->cfg.min_window;
	if (w > ctx->cfg.max_window)
		w = ctx->cfg.max_window;
	return w;
}

/* Does new segment [ns, ne) replace the bytes it overlaps of held segment
 * [os, oe)?  The matrix of reasm.h. */
static bool new_wins(enum reasm_policy policy, uint64_t ns, uint64_t ne,
		     uint64_t os, uint64_t oe)
{
	switch (policy) {
	case REASM_POLICY_FIRST:
		return false;
	case REASM_POLICY_LAST:
		return true;
	case REASM_POLICY_SOLARIS:
		return ns <= os ? ne >= oe : ne > oe;
	case REASM_POLICY_LINUX:
		return ns < os || (ns == os && ne > oe);
	case REASM_POLICY_BSD:
	case REASM_POLICY_WINDOWS:
	default:
		return ns < os;
	}
}

static int close_now(struct reasm_ctx *ctx, struct reasm_dir *d,
		     const struct reasm_consumer *c)
{
	uint64_t off = d->next_off;

	d->flags |= REASM_F_CLOSED;
	drop_held(ctx, d);
	if (c->end && c->end(c->opaque, off))
		return REASM_STOPPED;
	return 0;
}

/* The FIN or the depth reached: end the stream. */
static int check_end(struct reasm_ctx *ctx, struct reasm_dir *d,
		     const struct reasm_consumer *c)
{
	bool depth, fin;

	if (d->flags & REASM_F_CLOSED)
		return 0;
	depth = ctx->cfg.depth && d->next_off >= ctx->cfg.depth;
	fin = (d->flags & REASM_F_FIN) && d->next_off >= d->fin_off;
	if (!depth && !fin)
		return 0;
	if (depth) {
		d->flags |= REASM_F_DEPTH;
		ctx->stats.depth_reached++;
	}
	return close_now(ctx, d, c);
}

/* Hand @len bytes at the next expected offset over, no further than the
 * depth or the FIN, then end the stream if either was reached. */
static int deliver(struct reasm_ctx *ctx, struct reasm_dir *d,
		   const struct reasm_consumer *c, const uint8_t *p, size_t len)
{
	uint64_t off = d->next_off;
	uint64_t limit = UINT64_MAX;

	if (ctx->cfg.depth)
		limit = ctx->cfg.depth;
	if ((d->flags & REASM_F_FIN) && d->fin_off < limit)
		limit = d->fin_off;
	if (off >= limit)
		return check_end(ctx, d, c);
	if (len > limit - off)
		len = (size_t)(limit - off);
	d->next_off = off + len;
	if (len && c->data(c->opaque, off, p, len))
		return REASM_STOPPED;
	return check_end(ctx, d, c);
}

/* Deliver the held runs that start at the next expected byte. */
static int drain(struct reasm_ctx *ctx, struct reasm_dir *d,
		 const struct reasm_consumer *c)
{
	while (d->held && d->held->off == d->next_off &&
	       !(d->flags & REASM_F_CLOSED)) {
		struct reasm_seg *s = d->held;
		int rc;

		d->held = s->next;
		if (!d->held)
			d->tail = NULL;
		if (d->finger == s)
			d->finger = NULL;
		d->held_bytes -= s->len;
		d->nruns--;
		rc = deliver(ctx, d, c, s->data, s->len);
		seg_free(ctx, s);
		if (rc)
			return rc;
	}
	return 0;
}

static int emit_gap(struct reasm_ctx *ctx, struct reasm_dir *d,
		    const struct reasm_consumer *c, uint64_t len)
{
	uint64_t off = d->next_off;

	d->next_off = off + len;
	ctx->stats.gaps++;
	ctx->stats.gap_bytes += len;
	if (c->gap && c->gap(c->opaque, off, len))
		return REASM_STOPPED;
	return check_end(ctx, d, c);
}

/* Move the next expected byte to @target at least: holes before it become
 * gaps, held runs are delivered; then deliver what is contiguous. */
static int skip_to(struct reasm_ctx *ctx, struct reasm_dir *d,
		   const struct reasm_consumer *c, uint64_t target)
{
	int rc;

	while (d->next_off < target && !(d->flags & REASM_F_CLOSED)) {
		uint64_t end = target;

		if (d->held && d->held->off == d->next_off) {
			rc = drain(ctx, d, c);
			if (rc)
				return rc;
			continue;
		}
		if (d->held && d->held->off < end)
			end = d->held->off;
		rc = emit_gap(ctx, d, c, end - d->next_off);
		if (rc)
			return rc;
	}
	return drain(ctx, d, c);
}

int reasm_skip_hole(struct reasm_ctx *ctx, struct reasm_dir *d,
		    const struct reasm_consumer *c)
{
	if (!d->held || (d->flags & REASM_F_CLOSED))
		return 0;
	return skip_to(ctx, d, c, d->held->off);
}

int reasm_close(struct reasm_ctx *ctx, struct reasm_dir *d,
		const struct reasm_consumer *c)
{
	int rc;

	if (!(d->flags & REASM_F_STARTED) || (d->flags & REASM_F_CLOSED))
		return 0;
	if (d->tail) {
		rc = skip_to(ctx, d, c, d->tail->off + d->tail->len);
		if (rc)
			return rc;
	}
	if (d->flags & REASM_F_CLOSED)
		return 0;
	return close_now(ctx, d, c);
}

struct insert_result {
	uint64_t new_bytes; /* holes filled */
	bool overlapped;    /* met held data */
	bool differ;	    /* with different bytes */
	bool dropped;	    /* not held: memcap */
};

static struct reasm_seg *seg_new(struct reasm_ctx *ctx, uint64_t off,
				 const uint8_t *p, uint64_t len,
				 uint64_t ostart, uint32_t olen)
{
	struct reasm_seg *s = malloc(SEG_HDR + len);

	if (!s)
		return NULL;
	s->next = NULL;
	s->off = off;
	s->ostart = ostart;
	s->olen = olen;
	s->len = (uint32_t)len;
	memcpy(s->data, p, len);
	ctx->mem_used += SEG_HDR + len;
	return s;
}

/*
 * Hold [s, e) (bytes @p; s past the next expected byte) as the segment
 * [ostart, ostart + olen) brings it: holes filled, overlaps resolved.
 * Either nothing changes (memcap) or the whole segment is applied, except
 * that a failed malloc loses its hole (counted as a memcap drop).
 */
static void insert(struct reasm_ctx *ctx, struct reasm_dir *d, uint64_t s,
		   uint64_t e, const uint8_t *p, uint64_t ostart, uint32_t olen,
		   struct insert_result *r)
{
	struct reasm_seg **pp = &d->held, *q;
	uint64_t pos = s, need = 0;
	uint32_t runs = 0;

	/* past the last run, as while a hole waits, or past the run inserted
	 * last, as while holes are filled in order: no walk from the head */
	if (d->tail && d->tail->off + d->tail->len <= s)
		pp = &d->tail->next;
	else if (d->finger && d->finger->off + d->finger->len <= s)
		pp = &d->finger->next;
	while (*pp && (*pp)->off + (*pp)->len <= s)
		pp = &(*pp)->next;
	/* what filling the holes costs, before changing anything */
	for (q = *pp; q && q->off < e; q = q->next) {
		if (q->off > pos) {
			need += SEG_HDR + (q->off - pos);
			runs++;
		}
		pos = q->off + q->len;
	}
	if (pos < e) {
		need += SEG_HDR + (e - pos);
		runs++;
	}
	if ((need && ctx->mem_used + need > ctx->cfg.memcap) ||
	    d->nruns + runs > REASM_MAX_RUNS) {
		r->dropped = true;
		return;
	}

	pos = s;
	for (q = *pp; q && q->off < e; q = q->next) {
		uint64_t a, b;

		if (q->off > pos) {
			struct reasm_seg *n = seg_new(ctx, pos, p + (pos - s),
						      q->off - pos, ostart,
						      olen);
			if (n) {
				n->next = q;
				*pp = n;
				pp = &n->next;
				d->finger = n;
				d->nruns++;
				d->held_bytes += n->len;
				r->new_bytes += n->len;
			} else {
				r->dropped = true;
			}
		}
		a = q->off > s ? q->off : s;
		b = q->off + q->len < e ? q->off + q->len : e;
		r->overlapped = true;
		if (memcmp(q->data + (a - q->off), p + (a - s), b - a) != 0) {
			r->differ = true;
			if (new_wins(ctx->cfg.policy, ostart, ostart + olen,
				     q->ostart, q->ostart + q->olen))
				memcpy(q->data + (a - q->off), p + (a - s),
				       b - a);
		}
		pos = b;
		pp = &q->next;
	}
	if (pos < e) {
		struct reasm_seg *n =
			seg_new(ctx, pos, p + (pos - s), e - pos, ostart, olen);
		if (n) {
			n->next = *pp;
			*pp = n;
			if (!n->next)
				d->tail = n;
			d->finger = n;
			d->nruns++;
			d->held_bytes += n->len;
			r->new_bytes += n->len;
		} else {
			r->dropped = true;
		}
	}
}

/* Data [s, e) of a started, open direction; s may lie before the next
 * expected byte (even before offset 0). */
static int add_data(struct reasm_ctx *ctx, struct reasm_dir *d,
		    const struct reasm_consumer *c, int64_t s, int64_t e,
		    const uint8_t *p)
{
	uint64_t ostart = s < 0 ? 0 : (uint64_t)s;
	uint64_t olen64 = (uint64_t)e - ostart;
	uint32_t olen = olen64 > UINT32_MAX ? UINT32_MAX : (uint32_t)olen64;
	struct insert_result r = { 0 };
	bool trimmed = false;
	uint64_t next = d->next_off, w, direct = 0, ue;
	int rc;

	if (e <= (int64_t)next) {
		ctx->stats.duplicates++;
		return 0;
	}
	w = dir_window(ctx, d);
	ue = (uint64_t)e;
	if (ue > next + w) {
		/* the window is exceeded: what is missing before it is lost */
		uint64_t target = ue - w;
		uint64_t have = s > (int64_t)next ? (uint64_t)s : next;

		if (target > have) /* never skip bytes this segment brings */
			target = have;
		rc = skip_to(ctx, d, c, target);
		if (rc || (d->flags & REASM_F_CLOSED))
			return rc;
		next = d->next_off;
		if (ue <= next) {
			ctx->stats.duplicates++;
			return 0;
		}
	}
	if (s < (int64_t)next) {
		p += (uint64_t)((int64_t)next - s);
		s = (int64_t)next;
		trimmed = true;
	}

	if ((uint64_t)s == next)
		direct = d->held && d->held->off < ue ? d->held->off - next :
							ue - next;
	if ((uint64_t)s + direct < ue)
		insert(ctx, d, (uint64_t)s + direct, ue, p + direct, ostart,
		       olen, &r);
	if (r.dropped)
		ctx->stats.memcap_drops++;
	if (direct || r.new_bytes) {
		if ((uint64_t)s == next)
			ctx->stats.in_order++;
		else
			ctx->stats.out_of_order++;
	} else if (!r.differ && !r.dropped) {
		ctx->stats.duplicates++;
	}
	if ((direct || r.new_bytes || r.differ) && (trimmed || r.overlapped))
		ctx->stats.overlaps++;
	if (r.differ)
		ctx->stats.overlaps_diff++;

	if (direct) {
		rc = deliver(ctx, d, c, p, (size_t)direct);
		if (rc)
			return rc;
	}
	return drain(ctx, d, c);
}

int reasm_add(struct reasm_ctx *ctx, struct reasm_dir *d,
	      const struct reasm_consumer *c, uint32_t seq, const uint8_t *p,
	      size_t len, unsigned int flags)
{
	int64_t s, e;
	int rc;

	if (d->flags & (REASM_F_CLOSED | REASM_F_IGNORED))
		return 0;
	if (flags & REASM_SYN)
		seq++; /* the SYN takes one sequence number */
	if (!(d->flags & REASM_F_STARTED)) {
		if (!(flags & REASM_SYN)) {
			if (ctx->cfg.no_midstream) {
				d->flags |= REASM_F_IGNORED;
				if (len)
					ctx->stats.not_picked_up++;
				return 0;
			}
			d->flags |= REASM_F_MIDSTREAM;
		}
		d->base_seq = seq;
		d->flags |= REASM_F_STARTED;
	}
	/* serial distance from the next expected byte: within +-2^31 */
	s = (int64_t)d->next_off +
	    (int32_t)(seq - (d->base_seq + (uint32_t)d->next_off));
	e = s + (int64_t)len;
	if ((flags & REASM_FIN) && !(d->flags & REASM_F_FIN) &&
	    e >= (int64_t)d->next_off) {
		d->fin_off = (uint64_t)e;
		d->flags |= REASM_F_FIN;
	}
	if ((d->flags & REASM_F_FIN) && e > (int64_t)d->fin_off) {
		ctx->stats.beyond_fin++;
		e = (int64_t)d->fin_off;
	}
	if (e > s) {
		rc = add_data(ctx, d, c, s, e, p);
		if (rc || (d->flags & REASM_F_CLOSED))
			return rc;
	}
	if (flags & REASM_RST)
		return reasm_close(ctx, d, c);
	return check_end(ctx, d, c);
}

/* ---- feeding a push-mode stream ---------------------------------------- */

void reasm_feed_init(struct reasm_feed *f, struct reasm_consumer *c,
		     struct ts_stream *s,
		     int (*match)(void *opaque, const struct ts_match *m),
		     void *opaque)
{
	f->s = s;
	f->base = 0;
	f->match = match;
	f->opaque = opaque;
	c->data = reasm_feed_data;
	c->gap = reasm_feed_gap;
	c->end = reasm_feed_end;
	c->opaque = f;
}

/* Report every decided match; a misused stream stops the feed. */
static int feed_matches(struct reasm_feed *f)
{
	struct ts_match m;
	int rc;

	while ((rc = textsearch_stream_next(f->s, &m)) > 0) {
		m.start += f->base;
		m.end += f->base;
		if (f->match && f->match(f->opaque, &m))
			return REASM_STOPPED;
	}
	return rc < 0 ? REASM_STOPPED : 0;
}

int reasm_feed_data(void *feed, uint64_t off, const uint8_t *p, size_t len)
{
	struct reasm_feed *f = feed;

	(void)off; /* == base + the ts_stream's offset: runs are contiguous */
	if (textsearch_stream_write(f->s, p, len) != 0)
		return REASM_STOPPED;
	return feed_matches(f);
}

int reasm_feed_end(void *feed, uint64_t off)
{
	struct reasm_feed *f = feed;

	(void)off;
	if (textsearch_stream_end(f->s) != 0)
		return REASM_STOPPED;
	return feed_matches(f);
}

int reasm_feed_gap(void *feed, uint64_t off, uint64_t len)
{
	struct reasm_feed *f = feed;
	int rc = reasm_feed_end(feed, off);

	if (rc)
		return rc;
	/* a new search stream after the gap, its offset 0 at the gap's end */
	textsearch_stream_reset(f->s);
	f->base = off + len;
	return 0;
}
