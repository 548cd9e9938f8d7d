/*
 * textsearch_stream.h - push-mode streams: search data as it arrives.
 *
 * The kernel's interface pulls data through get_next_block(), so a search
 * must have all of it at hand, and its offsets are 32-bit.  A stream takes
 * the data in writes instead, as they come, and yields each match as soon
 * as no later byte can change it, with 64-bit offsets, in state whose size
 * is known before it is opened:
 *
 *   struct ts_stream *s = textsearch_stream_open(conf, GFP_KERNEL);
 *   if (IS_ERR(s))
 *           return PTR_ERR(s);
 *   while ((n = read(fd, buf, sizeof(buf))) > 0) {
 *           textsearch_stream_write(s, buf, n);
 *           while (textsearch_stream_next(s, &m) > 0)
 *                   report(m.start, m.end, m.id);
 *   }                            // buf may be reused once next() says 0
 *   textsearch_stream_end(s);
 *   while (textsearch_stream_next(s, &m) > 0)
 *           report(m.start, m.end, m.id);
 *   textsearch_stream_free(s);
 *
 * The matches of a stream are exactly those of one find/next search over
 * everything written, in the same order, however the data was cut into
 * writes, for every algorithm and set, with or without TS_OVERLAP and
 * TS_IGNORECASE.  See textsearch_stream(3).
 */
#ifndef TEXTSEARCH_STREAM_H
#define TEXTSEARCH_STREAM_H

#include "textsearch.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ts_match {
	uint64_t start;	 /* stream offset of the first byte of the match */
	uint64_t end;	 /* stream offset one past its last byte */
	unsigned int id; /* textsearch_match_id() of the match */
};

struct ts_stream;

/* Bytes textsearch_stream_open() allocates for a stream of @conf: all the
 * memory the stream will ever use. */
TS_API size_t textsearch_stream_size(const struct ts_config *conf);

/*
 * Open a stream at offset 0.  It refers to @conf, which must outlive it;
 * any number of streams may share one config, each used by one thread at a
 * time.  Returns an error pointer: -EINVAL (NULL or error-pointer config,
 * bad gfp_mask), -ENOMEM.
 */
TS_API struct ts_stream *textsearch_stream_open(struct ts_config *conf,
						gfp_t gfp_mask);

/*
 * Hand over the next @len bytes.  They are not copied beyond what a match
 * that began earlier still needs: @data must stay valid until next() has
 * returned 0.  0, or -EBUSY while matches are waiting (call next() until
 * it returns 0 first), -EINVAL for NULL data with a non-zero length or
 * after end(); a refused write changes nothing.
 */
TS_API int textsearch_stream_write(struct ts_stream *s, const void *data,
				   size_t len);

/* 1 and *@m filled with the next decided match; 0 when no further match
 * is decided yet (or ever, after end()); a negative errno on misuse. */
TS_API int textsearch_stream_next(struct ts_stream *s, struct ts_match *m);

/* No more data will come: the matches waiting on it become decided.  0, or
 * -EBUSY while matches are waiting, as for write(). */
TS_API int textsearch_stream_end(struct ts_stream *s);

/* Bytes written so far. */
TS_API uint64_t textsearch_stream_offset(const struct ts_stream *s);

/* Start a new stream at offset 0 on the same memory. */
TS_API void textsearch_stream_reset(struct ts_stream *s);

/* NULL and error pointers are ignored. */
TS_API void textsearch_stream_free(struct ts_stream *s);

/* ---- for algorithms ---------------------------------------------------- */

/*
 * What a stream engine searches in one call: the current write (or, after
 * end(), nothing and @end set).  The same input is passed to every next()
 * call until one returns 0; after that @data may be gone.
 */
struct ts_stream_input {
	const u8 *data;
	size_t len;
	uint64_t offset; /* stream offset of data[0] */
	int end;	 /* no byte will follow this input */
};

/* The alignment of a stream's state: a cache line, so that a vector kept
 * there from one write to the next need never straddle two. */
#define TS_STREAM_ALIGN 64

/*
 * How an algorithm streams (struct ts_ops.stream); every member optional.
 *
 * An algorithm with @next is its own engine: the library allocates
 * @state_size(conf) bytes per stream (aligned to TS_STREAM_ALIGN; a size
 * of 0 declines this config, which then streams through find), calls
 * @reset on them at open and reset, and calls @next for the current input
 * until it returns 0.  @next returns 1 with the next decided match in
 * *@m, 0 once every match this input decides has been returned (it must
 * then keep what it needs of the input, since the input may be gone), or
 * a negative errno.  @next never allocates.
 *
 * Without @next, the library streams through the algorithm's find(): it
 * keeps the last bytes of the stream that may begin a match still to come
 * and searches them with the next write.  @keep tells how many: of the
 * @len last bytes of the stream at @tail (fewer than the longest pattern),
 * how many, counted from the end, may still begin a match when more bytes
 * come (for literals: the longest suffix that is a proper prefix of a
 * pattern).  Without @keep the library assumes every match is at most the
 * longest pattern's length and keeps all @len bytes, which is correct for
 * such algorithms but yields a match up to that many bytes later than it
 * could.
 */
struct ts_stream_ops {
	size_t (*state_size)(struct ts_config *conf);
	void (*reset)(struct ts_config *conf, void *state);
	int (*next)(struct ts_config *conf, void *state,
		    const struct ts_stream_input *in, struct ts_match *m);
	unsigned int (*keep)(struct ts_config *conf, const u8 *tail,
			     unsigned int len);
};

#ifdef __cplusplus
}
#endif

#endif /* TEXTSEARCH_STREAM_H */
