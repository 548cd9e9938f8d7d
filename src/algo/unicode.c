/*
 * unicode.c - Unicode simple case folding for TS_UTF8.
 *
 * The tables come from the Unicode Character Database's CaseFolding.txt at
 * build time (scripts/gen-casefold.awk, Makefile), never typed by hand.
 */
#include "utf8.h"

#include "casefold_table.h"

unsigned int ts_utf8_encode(u32 cp, u8 *out)
{
	if (cp < 0x80) {
		out[0] = (u8)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (u8)(0xC0 | (cp >> 6));
		out[1] = (u8)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (u8)(0xE0 | (cp >> 12));
		out[1] = (u8)(0x80 | ((cp >> 6) & 0x3F));
		out[2] = (u8)(0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (u8)(0xF0 | (cp >> 18));
	out[1] = (u8)(0x80 | ((cp >> 12) & 0x3F));
	out[2] = (u8)(0x80 | ((cp >> 6) & 0x3F));
	out[3] = (u8)(0x80 | (cp & 0x3F));
	return 4;
}

u32 ts_ucs_fold(u32 cp)
{
	if (cp >= 0x110000)
		return cp;
	return (u32)((int32_t)cp +
		     ts_cf_stage2[ts_cf_stage1[cp >> 7]][cp & 127]);
}

unsigned int ts_ucs_fold_class(u32 cp, u32 out[TS_UCS_CLASS_MAX])
{
	u32 f = ts_ucs_fold(cp);
	unsigned int n = 1, i;

	out[0] = f;
	/* a folding target is its own folding, so it is not among the
	 * sources; the table is small and this runs at prepare time only */
	for (i = 0; i < TS_CF_PAIRS; i++)
		if (ts_cf_pairs[i][1] == f && n < TS_UCS_CLASS_MAX)
			out[n++] = ts_cf_pairs[i][0];
	return n;
}
