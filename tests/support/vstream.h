/*
 * vstream.h - a virtual stream that reaches stream offsets near UINT_MAX
 * without 4 GB of memory: 'a's up to b_from, 'b's from there to stream_end,
 * served in blocks of VSTREAM_BLOCK bytes from two static buffers.
 */
#ifndef TS_VSTREAM_H
#define TS_VSTREAM_H

#include "textsearch.h"

#include <stdbool.h>
#include <stdint.h>

#define VSTREAM_BLOCK (1u << 20)

struct vstream {
	uint64_t b_from, stream_end;
	/* the provider also claims full blocks past stream_end - never to
	 * be trusted by an algorithm */
	bool overlong;
	/* the stream starts with one block of 'b's, so a find matches at
	 * once and the next search can be sent near UINT_MAX through
	 * state->offset without scanning 4 GB */
	bool head_b;
	/* set by the provider: false if consumed ever went backwards */
	bool ok;
	unsigned int last;
};

/* Search @v through textsearch_find_with(); resets ok and last. */
unsigned int vstream_find(struct ts_config *conf, struct ts_state *state,
			  struct vstream *v);

#endif
