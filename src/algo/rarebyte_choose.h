/*
 * rarebyte_choose.h - which pattern bytes rarebyte.c filters on (see the
 * maths at the top of rarebyte.c).  Header-only and free of library
 * internals, so tests/test_simd.c checks the choice directly.
 */
#ifndef TS_RAREBYTE_CHOOSE_H
#define TS_RAREBYTE_CHOOSE_H

#include "textsearch.h"

#include <stdbool.h>

/*
 * How common each byte is, as a rank from 0 (rarest) to 255 (most common),
 * measured on an even mix of C headers, English documentation and x86-64
 * executables (about 8 MB of each): space, NUL and 'e' lead, control bytes
 * and most of 0x80-0xFF trail.  Only the order matters.
 */
static const u8 rb_rank[256] = {
	254, 209, 173, 166, 179, 172, 153, 154, 202, 192, 241, 134, 140, 133,
	168, 208, 181, 146, 132, 124, 136, 139, 107, 97,  167, 105, 95,	 103,
	114, 99,  98,  160, 255, 115, 184, 169, 232, 141, 137, 130, 216, 211,
	196, 113, 219, 218, 227, 236, 214, 228, 204, 195, 194, 164, 175, 150,
	180, 174, 198, 203, 186, 191, 178, 48,	199, 223, 197, 215, 213, 226,
	183, 188, 243, 229, 127, 156, 224, 185, 205, 190, 193, 63,  200, 220,
	217, 182, 159, 143, 189, 122, 152, 147, 161, 148, 64,  250, 126, 245,
	230, 242, 240, 253, 235, 225, 234, 251, 112, 170, 244, 233, 248, 247,
	238, 135, 246, 249, 252, 237, 221, 201, 207, 210, 142, 151, 157, 158,
	108, 65,  145, 88,  120, 187, 171, 177, 53,  39,  110, 231, 44,	 222,
	71,  206, 46,  45,  138, 0,   13,  37,	72,  54,  16,  11,  62,	 12,
	10,  5,	  25,  30,  1,	 24,  70,  17,	14,  9,	  61,  22,  7,	 4,
	66,  23,  6,   8,   32,	 19,  2,   18,	74,  15,  3,   21,  69,	 41,
	100, 43,  91,  56,  90,	 34,  83,  55,	104, 101, 176, 117, 93,	 162,
	96,  85,  121, 163, 84,	 77,  42,  20,	35,  26,  28,  40,  131, 58,
	94,  49,  33,  51,  36,	 50,  106, 38,	47,  87,  31,  29,  67,	 129,
	125, 57,  78,  27,  68,	 59,  79,  92,	212, 149, 82,  144, 86,	 73,
	75,  89,  118, 52,  80,	 76,  81,  60,	123, 111, 165, 102, 116, 128,
	109, 119, 155, 239,
};

/* what being next to the first filter byte adds to a second's rank */
#define RB_BIGRAM 16u

/* A folded byte that some other byte folds to: a lower-case letter
 * (ASCII a-z, ISO-8859-1 0xE0-0xFE but 0xF7).  Its other case is c - 0x20. */
static inline bool rb_is_folding_letter(u8 c)
{
	return (c >= 'a' && c <= 'z') || (c >= 0xE0 && c <= 0xFE && c != 0xF7);
}

/* What a data byte is ORed with before it is compared with folded pattern
 * byte @c: 0x20 where the other case matches too (TS_IGNORECASE). */
static inline u8 rb_fold_or(u8 c, bool icase)
{
	return icase && rb_is_folding_letter(c) ? 0x20 : 0;
}

/* How common a folded pattern byte is in the data, matching either case. */
static inline unsigned int rb_cost(u8 c, bool icase)
{
	unsigned int k = rb_rank[c];

	if (icase && rb_is_folding_letter(c) && rb_rank[c - 0x20] > k)
		k = rb_rank[c - 0x20];
	return k;
}

/* The rank of byte @i as the second of a pair with byte @first.  Next to
 * it, the pair is a bigram, and text's bigrams are far from independent
 * ("pl" is 13 times as common as "p..a" in the bench's text, "qu" nearly
 * as common as "q"): such a byte counts as a little more common. */
static inline unsigned int rb_pair_cost(const u8 *folded, unsigned int i,
					unsigned int first, bool icase)
{
	unsigned int k = rb_cost(folded[i], icase);

	return i + 1 == first || first + 1 == i ? k + RB_BIGRAM : k;
}

/*
 * The second filter position for a folded pattern of @m >= 1 bytes whose
 * first is @i1: the rarest byte of a different value by rb_pair_cost()
 * (the other end if the pattern is one byte repeated; @i1 itself only
 * when m == 1).  Ties go to the earlier position, which spreads the two
 * apart.
 */
static inline unsigned int rb_choose_second(const u8 *folded, unsigned int m,
					    bool icase, unsigned int i1)
{
	unsigned int i, best = m;

	for (i = 0; i < m; i++) {
		if (folded[i] == folded[i1])
			continue;
		if (best == m || rb_pair_cost(folded, i, i1, icase) <
					 rb_pair_cost(folded, best, i1, icase))
			best = i;
	}
	if (best == m) /* one value throughout: the two ends */
		best = i1 == 0 ? m - 1 : 0;
	return best;
}

/*
 * The filter positions for a folded pattern of @m >= 1 bytes: *i1 the
 * rarest byte (ties to the later position), *i2 rb_choose_second()'s.
 * For m == 2 the two positions are 0 and 1.
 */
static inline void rb_choose_positions(const u8 *folded, unsigned int m,
				       bool icase, unsigned int *i1,
				       unsigned int *i2)
{
	unsigned int i, best1 = 0;

	for (i = 0; i < m; i++)
		if (rb_cost(folded[i], icase) <= rb_cost(folded[best1], icase))
			best1 = i;
	*i1 = best1;
	*i2 = rb_choose_second(folded, m, icase, best1);
}

/*
 * Up to @max first filter positions for a stream to choose among where
 * the table's rarest byte turns out common in its data: one per distinct
 * value, rarest first by the table (ties to the later position), the
 * first rb_choose_positions()'s *i1.  Returns how many, at least 1.
 */
static inline unsigned int rb_choose_firsts(const u8 *folded, unsigned int m,
					    bool icase, unsigned int *first,
					    unsigned int max)
{
	unsigned int k, i, j, n = 0;

	for (k = 0; k < max; k++) {
		unsigned int best = m;

		for (i = 0; i < m; i++) {
			for (j = 0; j < n && folded[first[j]] != folded[i]; j++)
				;
			if (j < n)
				continue; /* a value taken already */
			if (best == m || rb_cost(folded[i], icase) <=
						 rb_cost(folded[best], icase))
				best = i;
		}
		if (best == m)
			break;
		first[n++] = best;
	}
	return n;
}

/*
 * A third filter position for m >= 3: the rarest byte at a position other
 * than @i1 and @i2, preferring a value different from theirs (equal bytes
 * are correlated, as above).  For m == 3 it is the remaining position, so
 * the three filters cover the whole pattern.
 */
static inline unsigned int rb_choose_third(const u8 *folded, unsigned int m,
					   bool icase, unsigned int i1,
					   unsigned int i2)
{
	unsigned int i, best = m, best_new = m;

	for (i = 0; i < m; i++) {
		if (i == i1 || i == i2)
			continue;
		if (best == m ||
		    rb_cost(folded[i], icase) < rb_cost(folded[best], icase))
			best = i;
		if (folded[i] != folded[i1] && folded[i] != folded[i2] &&
		    (best_new == m || rb_cost(folded[i], icase) <
					      rb_cost(folded[best_new], icase)))
			best_new = i;
	}
	return best_new != m ? best_new : best;
}

#endif
