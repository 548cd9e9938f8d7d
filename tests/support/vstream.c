/*
 * vstream.c - see vstream.h.
 */
#include "vstream.h"

#include <string.h>

static u8 as[VSTREAM_BLOCK], bs[VSTREAM_BLOCK];

static unsigned int vstream_next(unsigned int consumed, const u8 **dst,
				 struct ts_config *conf, struct ts_state *state)
{
	struct vstream *v;
	uint64_t avail;

	(void)conf;
	memcpy(&v, state->cb, sizeof(v));
	if (consumed < v->last)
		v->ok = false;
	v->last = consumed;
	if (consumed >= v->stream_end)
		return 0;
	if (v->head_b && consumed < VSTREAM_BLOCK) {
		*dst = bs + consumed;
		return VSTREAM_BLOCK - consumed;
	}
	if (consumed < v->b_from) {
		*dst = as;
		avail = v->b_from - consumed;
	} else {
		*dst = bs;
		avail = v->stream_end - consumed;
	}
	if (avail > VSTREAM_BLOCK || (v->overlong && consumed >= v->b_from))
		avail = VSTREAM_BLOCK;
	return (unsigned int)avail;
}

unsigned int vstream_find(struct ts_config *conf, struct ts_state *state,
			  struct vstream *v)
{
	/* filled on every call: cheap, and no global "initialised" flag */
	memset(as, 'a', sizeof(as));
	memset(bs, 'b', sizeof(bs));
	v->last = 0;
	v->ok = true;
	memcpy(state->cb, &v, sizeof(v));
	return textsearch_find_with(conf, state, vstream_next, NULL);
}
