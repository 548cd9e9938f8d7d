/*
 * search.c - running a search: find, next, and who provides the blocks.
 *
 * The kernel's textsearch_find_continuous() stores its provider in the
 * shared config, which races when two CPUs search with one config.  Here a
 * search's provider lives in its ts_state instead, and conf->get_next_block
 * is set once, at prepare time, to ts_dispatch_next_block(), which forwards
 * to the provider recorded in the state.  Algorithms keep calling
 * conf->get_next_block() exactly as kernel modules do.
 *
 * If the caller replaced conf->get_next_block the kernel's way, a per-call
 * search hands the algorithm a copy of the config that still points at the
 * dispatcher, so even then the shared config is only ever read.
 */
#include "internal.h"

#include <string.h>

enum {
	STATUS_DONE = 1u,     /* the search returned UINT_MAX */
	STATUS_PER_CALL = 2u, /* provider recorded in the state */
	STATUS_MATCHED = 4u,  /* match_start, _len and _id are the last match */
};

unsigned int ts_dispatch_next_block(unsigned int consumed, const u8 **dst,
				    struct ts_config *conf,
				    struct ts_state *state)
{
	struct ts_state_private *p = &state->ts_private;

	(void)conf;
	if (!(p->status & STATUS_PER_CALL) || !p->get_next_block)
		return 0; /* no provider: no data */
	return p->get_next_block(consumed, dst, p->conf, state);
}

static unsigned int no_blocks(unsigned int consumed, const u8 **dst,
			      struct ts_config *conf, struct ts_state *state)
{
	(void)consumed;
	(void)dst;
	(void)conf;
	(void)state;
	return 0;
}

void ts_provider_resolve(struct ts_config *conf, struct ts_state *state,
			 struct ts_provider *pv)
{
	const struct ts_state_private *p = &state->ts_private;

	pv->fn = conf->get_next_block;
	pv->conf = conf;
	if (pv->fn != ts_dispatch_next_block)
		return;
	if (!(p->status & STATUS_PER_CALL) || !p->get_next_block) {
		pv->fn = no_blocks;
	} else {
		pv->fn = p->get_next_block;
		pv->conf = p->conf;
	}
}

/* Run the algorithm once from state->offset and apply the rules every
 * algorithm shares: progress past the last match, finish once, UINT_MAX
 * sticks.  With TS_OVERLAP a search goes back to the last match's start:
 * a single-pattern algorithm then finds the next occurrence one byte on
 * (its occurrences all have one length, or one per start for fsm), while
 * a set algorithm skips what sorts before the last match itself
 * (ts_overlap_prev()), since several may start at one byte. */
static unsigned int run(struct ts_config *conf, struct ts_state *state)
{
	struct ts_state_private *p = &state->ts_private;
	struct ts_config shadow, *algo_conf = conf;
	ts_finish_fn finish = conf->finish;
	unsigned int pos = UINT_MAX;

	if (p->status & STATUS_PER_CALL) {
		finish = p->finish;
		if (conf->get_next_block != ts_dispatch_next_block) {
			shadow = *conf;
			shadow.get_next_block = ts_dispatch_next_block;
			shadow.finish = NULL;
			algo_conf = &shadow;
		}
	}

	if (!(p->status & STATUS_DONE)) {
		bool set = conf->ops->init_set != NULL;

		if ((conf->flags & TS_OVERLAP) && (p->status & STATUS_MATCHED))
			state->offset = p->match_start + (set ? 0 : 1);
		pos = conf->ops->find(algo_conf, state);
		p->status &= ~STATUS_MATCHED;
		if (pos != UINT_MAX) {
			p->status |= STATUS_MATCHED;
			p->match_start = pos;
			p->match_len =
				state->offset > pos ? state->offset - pos : 0;
			if (!set)
				p->match_id = 0;
		}
		if (pos == UINT_MAX) {
			p->status |= STATUS_DONE;
		} else if (state->offset <= pos) {
			/* zero-width (or an algorithm that forgot to move):
			 * the next search must start past this match */
			if (pos == UINT_MAX - 1)
				p->status |= STATUS_DONE;
			state->offset = pos + 1;
		}
	}
	if (finish)
		finish(conf, state);
	return pos;
}

static void begin(struct ts_config *conf, struct ts_state *state,
		  unsigned int status, ts_get_next_block_fn get_next_block,
		  ts_finish_fn finish)
{
	struct ts_state_private *p = &state->ts_private;

	state->offset = 0;
	p->status = status;
	p->match_start = 0;
	p->match_len = 0;
	p->match_id = 0;
	p->get_next_block = get_next_block;
	p->finish = finish;
	p->conf = conf;
}

unsigned int textsearch_find(struct ts_config *conf, struct ts_state *state)
{
	begin(conf, state, 0, NULL, NULL);
	return run(conf, state);
}

unsigned int ts_find_after(struct ts_config *conf, struct ts_state *state,
			   ts_get_next_block_fn get_next_block,
			   unsigned int start, unsigned int len,
			   unsigned int id)
{
	struct ts_state_private *p = &state->ts_private;

	begin(conf, state, STATUS_PER_CALL | STATUS_MATCHED, get_next_block,
	      NULL);
	p->match_start = start;
	p->match_len = len;
	p->match_id = id;
	state->offset = start + (len ? len : 1);
	return run(conf, state);
}

unsigned int textsearch_next(struct ts_config *conf, struct ts_state *state)
{
	return run(conf, state);
}

unsigned int textsearch_find_with(struct ts_config *conf,
				  struct ts_state *state,
				  ts_get_next_block_fn get_next_block,
				  ts_finish_fn finish)
{
	begin(conf, state, STATUS_PER_CALL, get_next_block, finish);
	return run(conf, state);
}

static unsigned int linear_next_block(unsigned int consumed, const u8 **dst,
				      struct ts_config *conf,
				      struct ts_state *state)
{
	const struct ts_state_private *p = &state->ts_private;

	(void)conf;
	if (consumed >= p->len)
		return 0;
	*dst = (const u8 *)p->data + consumed;
	return p->len - consumed;
}

unsigned int textsearch_find_continuous(struct ts_config *conf,
					struct ts_state *state,
					const void *data, unsigned int datalen)
{
	struct ts_state_private *p = &state->ts_private;

	begin(conf, state, STATUS_PER_CALL, linear_next_block, NULL);
	p->data = data;
	p->len = data ? datalen : 0;
	return run(conf, state);
}

unsigned int textsearch_match_id(const struct ts_state *state)
{
	const struct ts_state_private *p = &state->ts_private;

	return (p->status & STATUS_MATCHED) ? p->match_id : 0;
}

unsigned int textsearch_match_len(const struct ts_config *conf,
				  const struct ts_state *state)
{
	const struct ts_state_private *p = &state->ts_private;

	(void)conf; /* the length is the match's, kept in the state */
	return (p->status & STATUS_MATCHED) ? p->match_len : 0;
}

void ts_set_match(struct ts_state *state, unsigned int id)
{
	state->ts_private.match_id = id;
}

bool ts_last_match(const struct ts_state *state, unsigned int *end,
		   unsigned int *id)
{
	const struct ts_state_private *p = &state->ts_private;

	if (!(p->status & STATUS_MATCHED))
		return false;
	*end = p->match_start + p->match_len;
	*id = p->match_id;
	return true;
}

int ts_overlap_prev(const struct ts_state *state, unsigned int *end,
		    unsigned int *id)
{
	const struct ts_state_private *p = &state->ts_private;

	if (!(p->status & STATUS_MATCHED) || !p->conf ||
	    !(p->conf->flags & TS_OVERLAP))
		return 0;
	*end = p->match_start + p->match_len;
	*id = p->match_id;
	return 1;
}
