/*
 * fuzz_algorithms.c - libFuzzer target: every algorithm against the naive
 * references (ref_find, ref_fsm_find), contiguous and through blocks cut
 * where the input says, over whole find/next sequences.  Any difference
 * calls abort().
 *
 * Input layout (short inputs read as zeros past their end):
 *   byte 0   bits 0-1  algorithm: kmp, bm, shiftor (a plugin, TS_AUTOLOAD),
 *                      fsm; with bit 7, rarebyte at a dispatch level:
 *                      scalar, sse2, avx2, avx512 (the best the CPU has
 *                      at or below it)
 *            bit 2     TS_IGNORECASE
 *            bits 3-4  blocks: 0 sizes from the input, 1 one byte each,
 *                      2 a single block, 3 sizes from the input with the
 *                      provider installed the kernel's way
 *            bit 5     fsm: raw length, counting bytes (so it may split
 *                      a token)
 *                      (with bit 7: "auto" instead of the level, and
 *                      then bits 0-1 say: 0 "auto", 1 a set with "ac",
 *                      2 a set with "auto", 3 "auto" with TS_OVERLAP)
 *            bit 6     GFP_ATOMIC instead of GFP_KERNEL
 *            bit 7     rarebyte, see bits 0-1
 *   byte 1   pattern length: bytes (0 must be -EINVAL), or fsm tokens
 *            (modulo FSM_MAX_TOKENS + 1)
 *   byte 2   number of block sizes
 *   then     the pattern; an fsm token is 4 bytes: type, mode, recur,
 *            value.  Type and recur are taken modulo a little more than
 *            their ranges, so invalid tokens stay common without
 *            dominating; an odd mode byte keeps them raw (type up to
 *            0xffff).  With raw length the bytes are the tokens' memory.
 *   then     the block sizes, one byte each: 1 + byte % 64
 *   then     the data (fsm: at most FSM_MAX_DATA bytes, as its reference
 *            is quadratic)
 *
 * TS_UTF8, a single pattern: byte 0 with bit 7 clear, bits 0-1 not 3
 * (fsm) and bit 5 set (raw, which only fsm reads) says kmp, bm or (2)
 * "auto" with TS_UTF8, bit 2 TS_IGNORECASE, bits 3-4 the blocks, bit 6
 * GFP_ATOMIC; byte 3 (before the pattern) bit 0 TS_OVERLAP, bit 1
 * TS_FOLD_LIBC.  Checked, ids and lengths too, against the naive UTF-8
 * reference (tests/support/utf8_reference.c), which folds by
 * CaseFolding.txt or towupper() on its own.
 *
 * A set reads on differently after byte 0:
 *   byte 1   number of patterns (0 must be -EINVAL)
 *   byte 2   number of block sizes
 *   byte 3   bit 0: TS_OVERLAP; bits 1-2 and 6 (a set with "ac" only):
 *            0 "ac", 1 "teddy", 2 "teddy_scalar", 3 "teddy_ssse3", 4 "ac",
 *            5 "teddy_avx512", 6 "teddy_avx2", 7 "teddy_vbmi" (teddy
 *            refuses more than 128 patterns: -EINVAL); bit 3: lengths from 2
 *            (below), so that a set of 64 or more has ac's prefilter;
 *            bit 4: TS_UTF8, bit 5 (with bit 4): TS_FOLD_LIBC
 *   then     each pattern: a length byte (modulo 17; 0 must be -EINVAL),
 *            then its bytes
 *   then     the block sizes and the data, as above (at most
 *            SET_MAX_DATA bytes)
 * and is checked against ref_set_matches(), match ids and lengths too.
 *
 * Streams (every algorithm but fsm): the data is also written to a push-
 * mode stream (textsearch_stream.h), cut as the blocks are (the block
 * sizes, with what is left in one last write), and every match it yields
 * is compared with the pull search of the same config.  The two bits of a
 * block size byte that its size leaves (byte / 64) add: bit 6 a 0-byte
 * write before that block, bit 7 a write while matches wait after its
 * first match (which must be -EBUSY and change nothing).  Each write is a
 * copy of exactly its size, freed once next() has said 0, so reading data
 * the library was told it may drop is caught.
 * An fsm case is also written to streams (with and without TS_OVERLAP) in
 * the same cuts and checked against the pull search: fsm_stream_check().
 *
 * The shiftor plugin is found through TEXTSEARCH_PLUGIN_PATH; when that is
 * unset, the fuzz build compiles in FUZZ_PLUGIN_DIR.
 */
#include "fsm_reference.h"
#include "testsupport.h"
#include "textsearch.h"
#include "utf8_reference.h"
#include "textsearch_fsm.h"
#include "textsearch_stream.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FSM_MAX_TOKENS 16u
#define FSM_MAX_DATA 256u

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *in, size_t size);

static const char *const algo_names[] = {
	"kmp",
	"bm",
	"shiftor",
	"fsm",
	"rarebyte_scalar",
	"rarebyte_sse2",
	"rarebyte_avx2",
	"rarebyte_avx512",
	"auto",
	"ac",
	"auto",
	"auto",
};

enum { ALGO_SET_AC = 9, ALGO_SET_AUTO = 10, ALGO_AUTO_OVERLAP = 11 };
#define SET_MAX_LEN 16u
#define SET_MAX_DATA 1024u /* the reference tries every pattern everywhere */

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "fuzz_algorithms: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct ts_config *conf;

	(void)argc;
	(void)argv;
#ifdef FUZZ_PLUGIN_DIR
	setenv("TEXTSEARCH_PLUGIN_PATH", FUZZ_PLUGIN_DIR, 0);
#endif
	/* Load the plugin now, so that whether an input finds it does not
	 * depend on the inputs before it (GFP_ATOMIC never loads). */
	conf = textsearch_prepare("shiftor", "x", 1, GFP_KERNEL, TS_AUTOLOAD);
	if (IS_ERR(conf))
		die("cannot load the shiftor plugin: %s (%s); set "
		    "TEXTSEARCH_PLUGIN_PATH",
		    textsearch_strerror((int)PTR_ERR(conf)),
		    textsearch_last_error());
	textsearch_destroy(conf);
	if (!ref_utf8_init())
		die("the TS_UTF8 reference needs CaseFolding.txt and C.UTF-8");
	return 0;
}

struct reader {
	const uint8_t *p;
	size_t n;
};

static u8 take(struct reader *r)
{
	if (!r->n)
		return 0;
	r->n--;
	return *r->p++;
}

struct fuzz_case {
	int algo;
	bool icase, raw, atomic, overlap;
	bool set;
	bool single; /* a TS_UTF8 single pattern, run as a set of one */
	int utf8;    /* 0, or TS_UTF8 with TS_FOLD_LIBC or not */
	const char *set_algo;
	int split;
	u8 pat[256 * SET_MAX_LEN];
	const u8 *pats[256]; /* a set: its patterns in pat */
	unsigned int lens[256];
	unsigned int count;
	unsigned int plen; /* bytes given to prepare */
	unsigned int ntok; /* fsm: whole tokens in pat */
	unsigned int cuts[256];
	u8 cut_flags[256]; /* a size byte / 64: stream extras */
	unsigned int ncuts;
	u8 *data;
	unsigned int dlen;
};

static void decode(struct fuzz_case *c, const uint8_t *in, size_t size)
{
	struct reader r = { in, size };
	u8 ctl = take(&r), len = take(&r), nsizes = take(&r);
	unsigned int i, at;

	c->algo = ctl & 3;
	if ((ctl & 0xa0) == 0xa0)
		c->algo = (ctl & 3) ? 8 + (ctl & 3) : 8;
	else if (ctl & 0x80)
		c->algo = 4 + (ctl & 3);
	c->icase = ctl & 4;
	c->split = (ctl >> 3) & 3;
	c->raw = ctl & 0x20;
	c->atomic = ctl & 0x40;
	c->set = c->algo == ALGO_SET_AC || c->algo == ALGO_SET_AUTO;
	c->overlap = c->algo == ALGO_AUTO_OVERLAP;
	if (!(ctl & 0x80) && (ctl & 3) != 3 && (ctl & 0x20)) {
		static const char *const utf8_algos[] = { "kmp", "bm", "auto" };
		u8 b3 = take(&r);

		c->set = c->single = true;
		c->set_algo = utf8_algos[ctl & 3];
		c->overlap = b3 & 1;
		c->utf8 = TS_UTF8 | (b3 & 2 ? TS_FOLD_LIBC : 0);
		c->count = 1;
		c->lens[0] = len;
		c->pats[0] = c->pat;
		for (i = 0; i < len; i++)
			c->pat[i] = take(&r);
	} else if (c->set) {
		unsigned int used = 0;

		static const char *const set_algos[] = {
			"ac", "teddy",	      "teddy_scalar", "teddy_ssse3",
			"ac", "teddy_avx512", "teddy_avx2",   "teddy_vbmi",
		};
		u8 b3 = take(&r);

		c->overlap = b3 & 1;
		c->utf8 = b3 & 0x10 ? TS_UTF8 | (b3 & 0x20 ? TS_FOLD_LIBC : 0) :
				      0;
		c->set_algo =
			c->algo == ALGO_SET_AC ?
				set_algos[((b3 >> 1) & 3) | ((b3 >> 4) & 4)] :
				"auto";
		c->count = len;
		for (i = 0; i < c->count; i++) {
			unsigned int j;

			c->lens[i] = b3 & 8 ? 2 + take(&r) % (SET_MAX_LEN - 1) :
					      take(&r) % (SET_MAX_LEN + 1);
			c->pats[i] = c->pat + used;
			for (j = 0; j < c->lens[i]; j++)
				c->pat[used++] = take(&r);
		}
	} else if (c->algo != 3) {
		c->plen = len;
		for (i = 0; i < c->plen; i++)
			c->pat[i] = take(&r);
	} else if (c->raw) {
		/* the bytes are the tokens' memory, whatever they say */
		c->plen = len;
		for (i = 0; i < c->plen; i++)
			c->pat[i] = take(&r);
		c->ntok = c->plen / sizeof(struct ts_fsm_token);
	} else {
		struct ts_fsm_token *t = (struct ts_fsm_token *)c->pat;

		c->ntok = len % (FSM_MAX_TOKENS + 1);
		for (i = 0; i < c->ntok; i++) {
			u8 type = take(&r), mode = take(&r), recur = take(&r);

			t[i].value = take(&r);
			if (mode & 1) {
				t[i].type = (u16)(type | mode << 8);
				t[i].recur = recur;
			} else {
				t[i].type = type % (TS_FSM_TYPE_MAX + 3);
				t[i].recur = recur % (TS_FSM_RECUR_MAX + 2);
			}
		}
		c->plen = c->ntok * (unsigned int)sizeof(*t);
	}
	for (i = 0, at = 0, c->ncuts = 0; i < nsizes; i++) {
		u8 size = take(&r);

		at += 1 + size % 64;
		c->cut_flags[c->ncuts] = size / 64;
		c->cuts[c->ncuts++] = at;
	}
	c->dlen = (unsigned int)r.n;
	if (c->algo == 3 && c->dlen > FSM_MAX_DATA)
		c->dlen = FSM_MAX_DATA;
	if (c->set && !c->single && c->dlen > SET_MAX_DATA)
		c->dlen = SET_MAX_DATA;
	/* a copy of exactly its size: reading past it is caught */
	c->data = malloc(c->dlen ? c->dlen : 1);
	if (!c->data)
		abort();
	memcpy(c->data, r.p, c->dlen);
}

/* The error textsearch_prepare() must give, or 0. */
static long expected_error(const struct fuzz_case *c)
{
	unsigned int i;

	if (c->set) {
		for (i = 0; i < c->count; i++)
			if (!c->lens[i])
				return -EINVAL;
		if (!c->count)
			return -EINVAL;
		return c->count > 128 && !strncmp(c->set_algo, "teddy", 5) ?
			       -EINVAL :
			       0;
	}
	if (c->plen == 0)
		return -EINVAL;
	if (c->algo != 3)
		return 0;
	if (c->plen % sizeof(struct ts_fsm_token))
		return -EINVAL;
	/* copied out: pat is only byte-aligned */
	{
		struct ts_fsm_token t[256];

		memcpy(t, c->pat, c->plen);
		return ref_fsm_check(t, c->ntok, c->icase ? TS_IGNORECASE : 0);
	}
}

/* Every match the reference sees, in find/next order; returns how many. */
static unsigned int reference(const struct fuzz_case *c, unsigned int *out)
{
	struct ts_fsm_token t[256];
	unsigned int n = 0, from = 0, pos, end;

	if (c->algo == 3)
		memcpy(t, c->pat, c->plen);
	while (from <= c->dlen) {
		if (c->algo == 3) {
			pos = ref_fsm_find(t, c->ntok, c->data, c->dlen, from,
					   &end);
		} else {
			pos = ref_find(c->pat, c->plen, c->data, c->dlen, from,
				       c->icase);
			end = pos + c->plen;
		}
		if (pos == UINT_MAX)
			break;
		if (pos < from || end < pos || end > c->dlen)
			die("reference gave [%u, %u) from %u", pos, end, from);
		out[n++] = pos;
		from = end > pos && !c->overlap ? end : pos + 1;
	}
	return n;
}

/* Compare a find/next sequence that began with @pos; returns the number
 * of find/next calls made. */
static unsigned int compare(const struct fuzz_case *c, const char *how,
			    struct ts_config *conf, struct ts_state *st,
			    unsigned int pos, const unsigned int *want,
			    unsigned int nwant)
{
	unsigned int i, calls = 1;

	for (i = 0; i <= nwant; i++) {
		unsigned int w = i < nwant ? want[i] : UINT_MAX;

		if (pos != w)
			die("%s, %s: match %u at %u, reference says %u "
			    "(pattern %u bytes, data %u bytes, icase %d)",
			    algo_names[c->algo], how, i, pos, w, c->plen,
			    c->dlen, c->icase);
		if (i < nwant && st->offset < pos)
			die("%s, %s: state offset %u before match %u",
			    algo_names[c->algo], how, st->offset, pos);
		pos = textsearch_next(conf, st);
		calls++;
	}
	if (pos != UINT_MAX)
		die("%s, %s: next after the end gave %u", algo_names[c->algo],
		    how, pos);
	return calls;
}

/* Compare a find/next sequence of a set, ids and lengths too; returns the
 * number of find/next calls made. */
static unsigned int compare_set(const struct fuzz_case *c, const char *how,
				struct ts_config *conf, struct ts_state *st,
				unsigned int pos, const struct ref_match *want,
				unsigned int nwant)
{
	unsigned int i, calls = 1;

	for (i = 0; i < nwant; i++) {
		unsigned int id = textsearch_match_id(st);
		unsigned int len = textsearch_match_len(conf, st);

		if (pos != want[i].start || id != want[i].id ||
		    len != want[i].end - want[i].start)
			die("set of %u (%s), %s: match %u at %u id %u len %u, "
			    "reference says %u id %u len %u (data %u bytes, "
			    "icase %d, overlap %d, flags for UTF-8 0x%x)",
			    c->count, conf->ops->name, how, i, pos, id, len,
			    want[i].start, want[i].id,
			    want[i].end - want[i].start, c->dlen, c->icase,
			    c->overlap, (unsigned int)c->utf8);
		pos = textsearch_next(conf, st);
		calls++;
	}
	if (pos != UINT_MAX)
		die("set of %u, %s: a match at %u after the last", c->count,
		    how, pos);
	if (textsearch_next(conf, st) != UINT_MAX)
		die("set of %u, %s: next after the end found one", c->count,
		    how);
	return calls + 1;
}

static struct blocks *split(const struct fuzz_case *c)
{
	switch (c->split) {
	case 1:
		return blocks_random(c->data, c->dlen, &(struct rng){ 1 }, 1);
	case 2:
		return blocks_new(c->data, c->dlen, NULL, 0);
	default:
		return blocks_new(c->data, c->dlen, c->cuts, c->ncuts);
	}
}

/* ---- streams ---- */

#define CUT_EMPTY_WRITE 1 /* a 0-byte write before the block */
#define CUT_BUSY_WRITE 2  /* a refused write after its first match */

/* The matches of the pull search of @conf over the data, in order; their
 * number in *@n.  free() it. */
static struct ts_match *pull_matches(const struct fuzz_case *c,
				     struct ts_config *conf, unsigned int *n)
{
	struct ts_match *m = NULL, *grown;
	unsigned int cap = 0, pos;
	struct ts_state st;

	*n = 0;
	for (pos = textsearch_find_continuous(conf, &st, c->data, c->dlen);
	     pos != UINT_MAX; pos = textsearch_next(conf, &st)) {
		if (*n == cap) {
			cap = cap ? 2 * cap : 64;
			grown = realloc(m, cap * sizeof(*m));
			if (!grown)
				abort();
			m = grown;
		}
		m[*n].start = pos;
		m[*n].end = pos + textsearch_match_len(conf, &st);
		m[*n].id = textsearch_match_id(&st);
		++*n;
	}
	return m;
}

/* Write @len bytes at @p as a copy of exactly that size (or, with @end,
 * end the stream), check what the stream yields against @want from *@k,
 * then free the copy. */
static void stream_write(const struct fuzz_case *c, struct ts_stream *s,
			 const u8 *p, unsigned int len, bool end, bool busy,
			 const struct ts_match *want, unsigned int nwant,
			 unsigned int *k, const char *name)
{
	u8 *copy = len ? malloc(len) : NULL;
	uint64_t offset = textsearch_stream_offset(s);
	struct ts_match m;
	int ret;

	if (len && !copy)
		abort();
	if (len)
		memcpy(copy, p, len);
	ret = end ? textsearch_stream_end(s) :
		    textsearch_stream_write(s, copy, len);
	if (ret)
		die("%s stream: write of %u bytes at %llu gave %d", name, len,
		    (unsigned long long)offset, ret);
	while ((ret = textsearch_stream_next(s, &m)) == 1) {
		if (*k >= nwant || m.start != want[*k].start ||
		    m.end != want[*k].end || m.id != want[*k].id)
			die("%s stream: match %u is [%llu, %llu) id %u, the "
			    "pull search says %s[%u, %u) id %u (data %u bytes, "
			    "icase %d, overlap %d)",
			    name, *k, (unsigned long long)m.start,
			    (unsigned long long)m.end, m.id,
			    *k < nwant ? "" : "none: ",
			    *k < nwant ? (unsigned int)want[*k].start : 0,
			    *k < nwant ? (unsigned int)want[*k].end : 0,
			    *k < nwant ? want[*k].id : 0, c->dlen, c->icase,
			    c->overlap);
		++*k;
		if (busy) {
			offset = textsearch_stream_offset(s);
			ret = textsearch_stream_write(s, c->data, 1);
			if (ret != -EBUSY ||
			    textsearch_stream_offset(s) != offset)
				die("%s stream: a write while matches wait "
				    "gave %d",
				    name, ret);
			busy = false;
		}
	}
	if (ret)
		die("%s stream: next gave %d", name, ret);
	free(copy);
}

/* Stream the data through @conf, cut as the blocks are. */
static void run_stream(const struct fuzz_case *c, struct ts_config *conf,
		       const char *name)
{
	struct ts_stream *s = textsearch_stream_open(
		conf, c->atomic ? GFP_ATOMIC : GFP_KERNEL);
	struct ts_match *want, m;
	unsigned int nwant, k = 0, at = 0, i;

	if (IS_ERR_OR_NULL(s))
		die("%s stream: open failed", name);
	want = pull_matches(c, conf, &nwant);
	for (i = 0; at < c->dlen; i++) {
		unsigned int end = c->dlen;
		u8 flags = 0;

		if (c->split == 1) {
			end = at + 1;
		} else if (c->split != 2 && i < c->ncuts) {
			end = c->cuts[i] < c->dlen ? c->cuts[i] : c->dlen;
			flags = c->cut_flags[i];
		}
		if (flags & CUT_EMPTY_WRITE)
			stream_write(c, s, NULL, 0, false, false, want, nwant,
				     &k, name);
		stream_write(c, s, c->data + at, end - at, false,
			     flags & CUT_BUSY_WRITE, want, nwant, &k, name);
		at = end;
	}
	stream_write(c, s, NULL, 0, true, false, want, nwant, &k, name);
	if (k != nwant)
		die("%s stream: %u matches, the pull search %u", name, k,
		    nwant);
	if (textsearch_stream_next(s, &m) != 0 ||
	    textsearch_stream_write(s, c->data, 1) != -EINVAL)
		die("%s stream: not over after the end", name);
	textsearch_stream_free(s);
	free(want);
}

static void run_set(struct fuzz_case *c)
{
	int flags = (c->icase ? TS_IGNORECASE : 0) |
		    (c->overlap ? TS_OVERLAP : 0) | c->utf8;
	struct ts_config *conf;
	struct ts_state st;
	struct ref_match *want;
	struct blocks *b;
	unsigned int nwant, pos, calls;
	long err = expected_error(c);
	u8 *before;

	conf = c->single ?
		       textsearch_prepare(c->set_algo, c->pats[0], c->lens[0],
					  c->atomic ? GFP_ATOMIC : GFP_KERNEL,
					  flags) :
		       textsearch_prepare_set(
			       c->set_algo, (const void *const *)c->pats,
			       c->lens, c->count,
			       c->atomic ? GFP_ATOMIC : GFP_KERNEL, flags);
	if (err) {
		if (!IS_ERR(conf) || PTR_ERR(conf) != err)
			die("set of %u (%s): prepare of a bad set gave %ld, "
			    "want %ld",
			    c->count, c->set_algo,
			    IS_ERR(conf) ? PTR_ERR(conf) : 0L, err);
		return;
	}
	if (IS_ERR_OR_NULL(conf))
		die("set of %u: prepare failed: %s (%s)", c->count,
		    textsearch_strerror((int)PTR_ERR(conf)),
		    textsearch_last_error());
	if (c->utf8)
		want = ref_utf8_matches(c->pats, c->lens, c->count,
					!c->icase ? REF_FOLD_NONE :
					(c->utf8 & TS_FOLD_LIBC) ?
						    REF_FOLD_LIBC :
						    REF_FOLD_UCS,
					c->utf8 & TS_FOLD_LIBC, c->data,
					c->dlen, c->overlap, &nwant);
	else
		want = ref_set_matches(c->pats, c->lens, c->count, c->icase,
				       c->data, c->dlen, c->overlap, &nwant);

	before = conf_snapshot(conf);
	pos = textsearch_find_continuous(conf, &st, c->data, c->dlen);
	compare_set(c, "contiguous", conf, &st, pos, want, nwant);
	if (!conf_unchanged(conf, before))
		die("set: find_continuous wrote to the config");
	free(before);

	b = split(c);
	pos = c->split == 3 ? blocks_find_kernel_style(conf, &st, b) :
			      blocks_find(conf, &st, b);
	calls = compare_set(c, "blocks", conf, &st, pos, want, nwant);
	if (!blocks_ok(b))
		die("set: consumed went backwards within a call");
	if (blocks_finishes(b) != calls)
		die("set: finish ran %u times in %u calls", blocks_finishes(b),
		    calls);
	blocks_free(b);
	run_stream(c, conf, c->set_algo);
	free(want);
	textsearch_destroy(conf);
}

/*
 * fsm streams: the data written in the input's cuts must yield the matches
 * of the pull search over it, with and without TS_OVERLAP.  A stream with
 * TS_OVERLAP may run out of room for undecided starts (-ENOBUFS) after
 * yielding a prefix of them.
 */

/* Drain @s, checking each match against the pull search in @st. */
static int fsm_stream_drain(struct ts_stream *s, struct ts_config *conf,
			    struct ts_state *st, unsigned int *pos,
			    unsigned int *i)
{
	struct ts_match m;
	int ret;

	while ((ret = textsearch_stream_next(s, &m)) > 0) {
		if (*pos == UINT_MAX || m.start != *pos ||
		    m.end != *pos + textsearch_match_len(conf, st))
			die("fsm stream%s: match %u is [%llu, %llu), the pull "
			    "search says %u",
			    conf->flags & TS_OVERLAP ? " (TS_OVERLAP)" : "", *i,
			    (unsigned long long)m.start,
			    (unsigned long long)m.end, *pos);
		*pos = textsearch_next(conf, st);
		++*i;
	}
	if (ret < 0 && (ret != -ENOBUFS || !(conf->flags & TS_OVERLAP)))
		die("fsm stream: next gave %d", ret);
	return ret;
}

static void fsm_stream_check(const struct fuzz_case *c, int flags)
{
	struct ts_config *conf =
		textsearch_prepare("fsm", c->pat, c->plen, GFP_KERNEL, flags);
	unsigned int off = 0, i = 0, k, pos;
	struct ts_stream *s;
	struct ts_state st;
	int ret = 0;

	if (IS_ERR(conf))
		die("fsm stream: prepare failed");
	s = textsearch_stream_open(conf, GFP_KERNEL);
	if (IS_ERR(s))
		die("fsm stream: open failed");
	pos = textsearch_find_continuous(conf, &st, c->data, c->dlen);
	for (k = 0; k <= c->ncuts && ret >= 0; k++) {
		unsigned int to = k < c->ncuts && c->cuts[k] < c->dlen ?
					  c->cuts[k] :
					  c->dlen;

		if (textsearch_stream_write(s, c->data + off, to - off))
			die("fsm stream: write refused");
		off = to;
		ret = fsm_stream_drain(s, conf, &st, &pos, &i);
	}
	if (ret >= 0) {
		if (textsearch_stream_end(s))
			die("fsm stream: end refused");
		ret = fsm_stream_drain(s, conf, &st, &pos, &i);
	}
	if (ret == 0 && pos != UINT_MAX)
		die("fsm stream: match %u at %u never yielded", i, pos);
	textsearch_stream_free(s);
	textsearch_destroy(conf);
}

static void run(struct fuzz_case *c)
{
	int flags = (c->icase ? TS_IGNORECASE : 0) | TS_AUTOLOAD |
		    (c->overlap ? TS_OVERLAP : 0);
	struct ts_config *conf;
	struct ts_state st;
	struct blocks *b;
	unsigned int *want, nwant, pos, calls;
	long err = expected_error(c);
	u8 *before;

	conf = textsearch_prepare(algo_names[c->algo], c->pat, c->plen,
				  c->atomic ? GFP_ATOMIC : GFP_KERNEL, flags);
	if (err) {
		if (!IS_ERR(conf) || PTR_ERR(conf) != err)
			die("%s: prepare of a bad pattern (%u bytes) gave %ld, "
			    "want %ld",
			    algo_names[c->algo], c->plen,
			    IS_ERR(conf) ? PTR_ERR(conf) : 0L, err);
		return;
	}
	if (IS_ERR_OR_NULL(conf))
		die("%s: prepare failed: %s (%s)", algo_names[c->algo],
		    textsearch_strerror((int)PTR_ERR(conf)),
		    textsearch_last_error());
	if (textsearch_get_pattern_len(conf) != c->plen ||
	    memcmp(textsearch_get_pattern(conf), c->pat, c->plen) != 0)
		die("%s: get_pattern differs from the pattern given",
		    algo_names[c->algo]);

	want = malloc((c->dlen + 2) * sizeof(*want));
	if (!want)
		abort();
	nwant = reference(c, want);

	/* contiguous, which must leave the config as it was */
	before = conf_snapshot(conf);
	pos = textsearch_find_continuous(conf, &st, c->data, c->dlen);
	compare(c, "contiguous", conf, &st, pos, want, nwant);
	if (!conf_unchanged(conf, before))
		die("%s: find_continuous wrote to the config",
		    algo_names[c->algo]);
	free(before);

	/* through blocks */
	b = split(c);
	pos = c->split == 3 ? blocks_find_kernel_style(conf, &st, b) :
			      blocks_find(conf, &st, b);
	calls = compare(c, c->split == 3 ? "kernel-style blocks" : "blocks",
			conf, &st, pos, want, nwant);
	if (!blocks_ok(b))
		die("%s: consumed went backwards within a call",
		    algo_names[c->algo]);
	if (blocks_finishes(b) != calls)
		die("%s: finish ran %u times in %u calls", algo_names[c->algo],
		    blocks_finishes(b), calls);
	blocks_free(b);
	if (c->algo != 3) /* fsm streams are tested apart */
		run_stream(c, conf, algo_names[c->algo]);
	free(want);
	textsearch_destroy(conf);
	if (c->algo == 3) {
		fsm_stream_check(c, 0);
		fsm_stream_check(c, TS_OVERLAP);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t size)
{
	struct fuzz_case *c = calloc(1, sizeof(*c));

	if (!c)
		abort();
	decode(c, in, size);
	if (c->set)
		run_set(c);
	else
		run(c);
	free(c->data);
	free(c);
	return 0;
}
