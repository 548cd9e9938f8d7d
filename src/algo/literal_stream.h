/*
 * literal_stream.h - what rarebyte's config keeps for its native stream
 * engine (literal_stream.c): the pattern's tables, built once when the
 * config is prepared, so that each stream holds only its own state.
 */
#ifndef TS_LITERAL_STREAM_H
#define TS_LITERAL_STREAM_H

#include "internal.h"

#include <stdalign.h>
#include <stdbool.h>
#include <stdint.h>

/* the longest pattern the native engine takes: its state is 64 bits */
#define LIT_MAX 64u

/* the most pairs of filter bytes a stream chooses among (lit_repick()) */
#define LIT_PICKS 4u

/* A pair of filter bytes: their positions in the pattern, their folded
 * values and what a data byte is ORed with before it is compared with
 * them (0x20 for a letter under TS_IGNORECASE) */
struct lit_pick {
	unsigned int i1, i2; /* i1 compared first, in every block */
	u8 c1, c2, or1, or2;
};

/* The bytes that short writes are compared with: pick[0]'s c1 and c2,
 * then the pattern's first three */
enum { LIT_VEC_C1, LIT_VEC_C2, LIT_VEC_P0, LIT_VEC_P1, LIT_VEC_P2, LIT_VECS };

struct lit_tab {
	/* each in every byte of a vector, compared with (vec_eq) after
	 * an OR (vec_or, 0x20 for a letter under TS_IGNORECASE): loaded
	 * whole, which costs less than a broadcast */
	alignas(64) u8 vec_eq[LIT_VECS][64];
	u8 vec_or[LIT_VECS][64];
	uint64_t mask[256]; /* bit i: the byte matches pattern byte i */
	uint64_t kill[256]; /* ~mask within the pattern's m bits */
	uint64_t hit;	    /* bits m - 1 up: a match ended (lit_quick()) */
	size_t quick_max;   /* the longest write lit_quick() takes */
	bool quick_tail;    /* and it takes the last m - 1 bytes */
	u8 fold[256];
	u8 folded[LIT_MAX]; /* zero past m: loaded whole */
	/* pick[0] by the table's rarest bytes; the others each with
	 * another first byte, for data where that one is common */
	struct lit_pick pick[LIT_PICKS];
	unsigned int picks;
	unsigned int m, i3; /* i3 narrows the candidates of pick[0] */
	u8 c3, or3;
	u8 p0, p1, p2, o0, o1, o2; /* the first three, for lit_tail() */
	bool icase, overlap;
	bool permute; /* the dense bulk by byte permutes: lit_scan_permute() */
};

/* Fill @t for @pattern (@m bytes, at most LIT_MAX) and the config's
 * @flags (TS_IGNORECASE, TS_OVERLAP). */
void lit_tab_fill(struct lit_tab *t, const u8 *pattern, unsigned int m,
		  int flags) TS_HIDDEN;

/* 0, 1, ..., 63: a vector's byte positions, for the permutes and the
 * masks that both rarebyte engines build from them (x86 builds). */
extern const u8 lit_iota[64] TS_HIDDEN;

/* The table of a "rarebyte" config, or NULL when its pattern is longer
 * than LIT_MAX (rarebyte.c). */
const struct lit_tab *rb_stream_table(struct ts_config *conf) TS_HIDDEN;

#endif
