/*
 * iovec.c - scatter/gather: search the concatenation of an iovec array.
 *
 * Built on textsearch_find_with(), so the config is never written and any
 * number of threads may search their own arrays with one config.  The
 * provider's cursor (which iovec, and the stream offset where it starts)
 * lives in state->cb.  Within one call `consumed` only moves forward, so
 * the cursor walks forward in amortised O(1); textsearch_next() may resume
 * before the block last served (an algorithm may have read ahead of the
 * end of its match), so the cursor can also walk back.
 */
#include "internal.h"

#include <string.h>

/* Stream offsets stop short of UINT_MAX, which means "no match": one
 * search covers at most UINT_MAX - 1 bytes. */
#define STREAM_END (UINT_MAX - 1u)

struct iov_cursor {
	const struct iovec *iov;
	size_t start; /* stream offset of iov[idx]; <= a past consumed */
	unsigned int cnt;
	unsigned int idx; /* == cnt once past the last buffer */
};

_Static_assert(sizeof(struct iov_cursor) <= TS_CB_SIZE,
	       "iovec cursor must fit in ts_state.cb");

/* A NULL base holds no bytes, whatever its length says, as NULL data does
 * for textsearch_find_continuous(). */
static size_t iov_bytes(const struct iovec *v)
{
	return v->iov_base ? v->iov_len : 0;
}

static unsigned int iovec_next_block(unsigned int consumed, const u8 **dst,
				     struct ts_config *conf,
				     struct ts_state *state)
{
	struct iov_cursor c;
	size_t off, avail;

	(void)conf;
	if (consumed >= STREAM_END)
		return 0;
	/* cb is a char array: copy rather than alias it */
	memcpy(&c, state->cb, sizeof(c));

	/* back: never past iov[0], which starts at 0 <= consumed */
	while (consumed < c.start) {
		c.idx--;
		c.start -= iov_bytes(&c.iov[c.idx]);
	}
	/* forward, over empty buffers too; consumed - start never wraps */
	while (c.idx < c.cnt &&
	       consumed - c.start >= iov_bytes(&c.iov[c.idx])) {
		c.start += iov_bytes(&c.iov[c.idx]);
		c.idx++;
	}
	memcpy(state->cb, &c, sizeof(c));
	if (c.idx == c.cnt)
		return 0;

	off = consumed - c.start;
	avail = iov_bytes(&c.iov[c.idx]) - off;
	if (avail > STREAM_END - consumed)
		avail = STREAM_END - consumed;
	*dst = (const u8 *)c.iov[c.idx].iov_base + off;
	return (unsigned int)avail;
}

unsigned int textsearch_find_iovec(struct ts_config *conf,
				   struct ts_state *state,
				   const struct iovec *iov, unsigned int iovcnt)
{
	struct iov_cursor c = {
		.iov = iov,
		.start = 0,
		.cnt = iov ? iovcnt : 0,
		.idx = 0,
	};

	memcpy(state->cb, &c, sizeof(c));
	return textsearch_find_with(conf, state, iovec_next_block, NULL);
}
