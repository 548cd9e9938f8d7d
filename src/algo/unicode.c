/*
 * unicode.c - Unicode simple case folding for TS_UTF8.
 *
 * The tables come from the Unicode Character Database's CaseFolding.txt at
 * build time (scripts/gen-casefold.awk, Makefile), never typed by hand;
 * TS_FOLD_LIBC's from the build machine's towupper() in C.UTF-8
 * (scripts/gen-libcfold.c), in the same form.
 */
#include "utf8.h"

#include "casefold_table.h"
#include "libcfold_table.h"

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

/* A generated table: pairs sorted by code point, and two stages of
 * deltas (scripts/gen-casefold.awk). */
struct fold_table {
	const uint32_t (*pairs)[2];
	unsigned int npairs;
	const uint8_t *stage1;
	const int32_t (*stage2)[128];
};

static const struct fold_table ucs_table = { ts_cf_pairs, TS_CF_PAIRS,
					     ts_cf_stage1, ts_cf_stage2 };
static const struct fold_table libc_table = { ts_lf_pairs, TS_LF_PAIRS,
					      ts_lf_stage1, ts_lf_stage2 };

static inline u32 table_fold(const struct fold_table *t, u32 cp)
{
	if (cp >= 0x110000)
		return cp;
	return (u32)((int32_t)cp + t->stage2[t->stage1[cp >> 7]][cp & 127]);
}

static unsigned int table_class(const struct fold_table *t, u32 cp,
				u32 out[TS_UCS_CLASS_MAX])
{
	u32 f = table_fold(t, cp);
	unsigned int n = 1, i;

	out[0] = f;
	/* a folding target is its own folding, so it is not among the
	 * sources; the table is small and this runs at prepare time only */
	for (i = 0; i < t->npairs; i++)
		if (t->pairs[i][1] == f && n < TS_UCS_CLASS_MAX)
			out[n++] = t->pairs[i][0];
	return n;
}

u32 ts_ucs_fold(u32 cp)
{
	return table_fold(&ucs_table, cp);
}

unsigned int ts_ucs_fold_class(u32 cp, u32 out[TS_UCS_CLASS_MAX])
{
	return table_class(&ucs_table, cp, out);
}

u32 ts_libc_fold(u32 cp)
{
	return table_fold(&libc_table, cp);
}

unsigned int ts_libc_fold_class(u32 cp, u32 out[TS_UCS_CLASS_MAX])
{
	return table_class(&libc_table, cp, out);
}
