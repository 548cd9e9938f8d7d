/*
 * fold.c - the TS_IGNORECASE folding table that kmp, bm and rarebyte index
 * with every byte they compare.
 */
#include "internal.h"

void ts_fill_fold_table(u8 table[256], bool ignorecase)
{
	unsigned int c;

	for (c = 0; c < 256; c++)
		table[c] = ignorecase ? textsearch_fold((u8)c) : (u8)c;
}
