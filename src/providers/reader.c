/*
 * reader.c - search a file descriptor or a stdio stream read in chunks.
 *
 * Memory stays bounded whatever the input: the reader owns two buffers
 * ("halves") of max(chunk, READER_MIN_HISTORY) bytes.  Reads of at most
 * chunk bytes are appended to the current half; when it is full, the next
 * read goes to the other half and the full one becomes the history.  So the
 * data from the request before the latest one onwards is always still
 * there, which is what textsearch_next() needs: it resumes at the end of
 * the last match, inside (or just before) the last block served.
 *
 * A search may also go back to the start of its last match (TS_OVERLAP)
 * or past a match to its end after looking ahead for a longer one (sets):
 * up to the config's longest pattern, so a search grows the halves to at
 * least that (conf->ts_longest).
 *
 * An offset before the history is read again with pread() (or fseeko())
 * when the input is seekable; otherwise the data ends there and the reader
 * records -ESPIPE.  A failed read ends the data too and is recorded for
 * ts_reader_error().
 *
 * Built on textsearch_find_with(): state->cb holds only a pointer to the
 * reader, and the config is never written.
 */
#define _FILE_OFFSET_BITS 64
#include "internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#define READER_DEFAULT_CHUNK ((size_t)64 * 1024)
/* Keep at least this much history even with tiny chunks, so that
 * algorithms that look ahead a little still work on pipes. */
#define READER_MIN_HISTORY ((size_t)4096)
/* Largest chunk accepted: two halves must fit, and a read must fit ssize_t. */
#define READER_MAX_CHUNK ((size_t)1 << 30)
/* One search covers stream offsets 0 to UINT_MAX - 2. */
#define STREAM_END ((uint64_t)UINT_MAX - 1u)

struct half {
	u8 *data;
	uint64_t start; /* stream offset of data[0] */
	size_t len;
};

struct ts_reader {
	int fd; /* -1 for a FILE * */
	FILE *fp;
	bool seekable;
	off_t base;    /* file position of stream offset 0, if seekable */
	uint64_t fpos; /* stream offset fp is at (FILE *, seekable) */
	size_t chunk;  /* bytes per read */
	size_t cap;    /* bytes per half */
	struct half cur, prev; /* prev.len == 0: no history */
	bool eof;
	bool failed;
	int error; /* first failure, negative errno */
	u8 *mem;   /* both halves */
};

static struct ts_reader *reader_new(int fd, FILE *fp, size_t chunk_size)
{
	struct ts_reader *r;
	size_t cap, total;
	int saved = errno;

	if (chunk_size == 0)
		chunk_size = READER_DEFAULT_CHUNK;
	if ((fd < 0 && !fp) || chunk_size > READER_MAX_CHUNK) {
		errno = EINVAL;
		return NULL;
	}
	cap = chunk_size > READER_MIN_HISTORY ? chunk_size : READER_MIN_HISTORY;
	if (!ts_size_mul(cap, 2, &total)) {
		errno = EINVAL;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->mem = malloc(total);
	if (!r->mem) {
		free(r);
		errno = ENOMEM;
		return NULL;
	}
	r->fd = fd;
	r->fp = fp;
	r->chunk = chunk_size;
	r->cap = cap;
	r->cur.data = r->mem;
	r->prev.data = r->mem + cap;

	/* Offset 0 is where the input is now; pipes and terminals have no
	 * position and are read sequentially. */
	r->base = fp ? ftello(fp) : lseek(fd, 0, SEEK_CUR);
	r->seekable = r->base >= 0;
	if (!r->seekable)
		r->base = 0;
	errno = saved;
	return r;
}

struct ts_reader *ts_reader_from_fd(int fd, size_t chunk_size)
{
	return reader_new(fd, NULL, chunk_size);
}

struct ts_reader *ts_reader_from_file(FILE *fp, size_t chunk_size)
{
	if (!fp) {
		errno = EINVAL;
		return NULL;
	}
	return reader_new(-1, fp, chunk_size);
}

void ts_reader_free(struct ts_reader *reader)
{
	if (!reader)
		return;
	free(reader->mem);
	free(reader);
}

int ts_reader_error(const struct ts_reader *reader)
{
	return reader ? reader->error : -EINVAL;
}

static void fail(struct ts_reader *r, int err)
{
	r->failed = true;
	if (!r->error)
		r->error = err;
}

/* Forget what is buffered and continue reading at stream offset @at. */
static void reposition(struct ts_reader *r, uint64_t at)
{
	r->prev.len = 0;
	r->cur.start = at;
	r->cur.len = 0;
	r->eof = false;
}

/* Read up to @n bytes of stream offset @at into @buf: bytes read, 0 at the
 * end, or a negative errno.  @at is the next unread offset unless the input
 * is seekable. */
static long read_at(struct ts_reader *r, u8 *buf, size_t n, uint64_t at)
{
	uint64_t pos = (uint64_t)r->base + at;

	if (r->seekable && pos > (uint64_t)INT64_MAX)
		return 0; /* beyond any file */
	if (r->fp) {
		size_t got;

		if (r->seekable && r->fpos != at) {
			if (fseeko(r->fp, (off_t)pos, SEEK_SET) != 0)
				return -errno;
			r->fpos = at;
		}
		for (;;) {
			int err;

			errno = 0;
			got = fread(buf, 1, n, r->fp);
			r->fpos += got;
			if (!ferror(r->fp))
				return (long)got;
			/* clear the indicator so a stale error is never
			 * reported for a later read */
			err = errno ? errno : EIO;
			clearerr(r->fp);
			if (got)
				return (long)got; /* a real error comes back */
			if (err != EINTR)
				return -err;
		}
	}
	for (;;) {
		ssize_t got = r->seekable ? pread(r->fd, buf, n, (off_t)pos) :
					    read(r->fd, buf, n);

		if (got >= 0)
			return (long)got;
		if (errno != EINTR)
			return -errno;
	}
}

/* Read the next chunk after the current half.  false at the end. */
static bool fill(struct ts_reader *r)
{
	uint64_t end = r->cur.start + r->cur.len;
	bool flip = r->cur.len == r->cap;
	u8 *dst = flip ? r->prev.data : r->cur.data + r->cur.len;
	size_t n = flip ? r->cap : r->cap - r->cur.len;
	long got;

	if (r->eof || r->failed)
		return false;
	if (n > r->chunk)
		n = r->chunk;
	if (n > STREAM_END - end)
		n = (size_t)(STREAM_END - end);
	if (n == 0) {
		r->eof = true; /* at the end of what one search covers */
		return false;
	}
	got = read_at(r, dst, n, end);
	if (got < 0) {
		fail(r, (int)got);
		return false;
	}
	if (got == 0) {
		r->eof = true;
		return false;
	}
	if (flip) {
		/* only now: a read that brings nothing keeps the history */
		struct half full = r->cur;

		r->cur = r->prev;
		r->prev = full;
		r->cur.start = end;
		r->cur.len = 0;
	}
	r->cur.len += (size_t)got;
	return true;
}

static const struct half *holding(const struct ts_reader *r, uint64_t at)
{
	if (at >= r->cur.start && at - r->cur.start < r->cur.len)
		return &r->cur;
	if (at >= r->prev.start && at - r->prev.start < r->prev.len)
		return &r->prev;
	return NULL;
}

static unsigned int reader_next_block(unsigned int consumed, const u8 **dst,
				      struct ts_config *conf,
				      struct ts_state *state)
{
	struct ts_reader *r;
	uint64_t at = consumed;

	(void)conf;
	memcpy(&r, state->cb, sizeof(r));
	if (!r || at >= STREAM_END)
		return 0;
	for (;;) {
		const struct half *h = holding(r, at);
		uint64_t oldest = r->prev.len ? r->prev.start : r->cur.start;

		if (h) {
			uint64_t n = h->start + h->len - at;

			if (n > STREAM_END - at)
				n = STREAM_END - at;
			*dst = h->data + (at - h->start);
			return (unsigned int)n;
		}
		if (at < oldest) {
			if (!r->seekable) {
				fail(r, -ESPIPE); /* gone, cannot read back */
				return 0;
			}
			reposition(r, at);
		} else if (at > r->cur.start + r->cur.len && r->seekable) {
			reposition(r, at); /* skip ahead without reading */
		}
		/* else read on (and, unseekable, drop what is skipped) */
		if (!fill(r))
			return 0;
	}
}

/* Make each half hold at least @need bytes, keeping what they hold. */
static void reserve(struct ts_reader *r, size_t need)
{
	u8 *mem;

	if (need <= r->cap || r->failed)
		return;
	if (need > READER_MAX_CHUNK || !(mem = malloc(2 * need))) {
		fail(r, -ENOMEM);
		return;
	}
	memcpy(mem, r->cur.data, r->cur.len);
	memcpy(mem + need, r->prev.data, r->prev.len);
	free(r->mem);
	r->mem = mem;
	r->cur.data = mem;
	r->prev.data = mem + need;
	r->cap = need;
}

unsigned int textsearch_find_reader(struct ts_config *conf,
				    struct ts_state *state,
				    struct ts_reader *reader)
{
	if (reader && reader->seekable) {
		/* a new search reads the input afresh; a pipe cannot */
		reader->error = 0;
		reader->failed = false;
		reposition(reader, 0);
	}
	if (reader)
		reserve(reader, conf->ts_longest);
	memcpy(state->cb, &reader, sizeof(reader));
	return textsearch_find_with(conf, state, reader_next_block, NULL);
}
