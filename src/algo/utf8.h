/*
 * utf8.h - UTF-8 decoding and Unicode simple case folding for TS_UTF8
 * (unicode.c, utf8.c); never installed.
 */
#ifndef TS_UTF8_H
#define TS_UTF8_H

#include "internal.h"

/* The most characters one simple case folding class holds (4 in Unicode
 * 15: U+03B9 and its three); unicode.c refuses a table with more. */
#define TS_UCS_CLASS_MAX 8

/*
 * The well-formed UTF-8 sequence at @p (@n bytes available, n >= 1), as
 * Unicode's table 3-7 defines it (no overlong forms, surrogates or values
 * past U+10FFFF): its length and its code point in *@cp, or 0 when the
 * byte at @p begins none (an invalid byte, which stands for itself).
 */
static inline unsigned int ts_utf8_decode(const u8 *p, size_t n, u32 *cp)
{
	u8 c = p[0], lo = 0x80, hi = 0xBF;
	unsigned int len, i;
	u32 v;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c < 0xC2 || c > 0xF4)
		return 0;
	if (c < 0xE0) {
		len = 2;
		v = c & 0x1F;
	} else if (c < 0xF0) {
		len = 3;
		v = c & 0x0F;
		if (c == 0xE0)
			lo = 0xA0;
		else if (c == 0xED)
			hi = 0x9F;
	} else {
		len = 4;
		v = c & 0x07;
		if (c == 0xF0)
			lo = 0x90;
		else if (c == 0xF4)
			hi = 0x8F;
	}
	if (n < len || p[1] < lo || p[1] > hi)
		return 0;
	for (i = 1; i < len; i++) {
		if (i > 1 && (p[i] & 0xC0) != 0x80)
			return 0;
		v = (v << 6) | (p[i] & 0x3F);
	}
	*cp = v;
	return len;
}

/* @cp in UTF-8 at @out (4 bytes of room); its length. */
unsigned int ts_utf8_encode(u32 cp, u8 *out) TS_HIDDEN;

/* The simple case folding of @cp (CaseFolding.txt, C and S entries). */
u32 ts_ucs_fold(u32 cp) TS_HIDDEN;

/* The characters whose simple folding is ts_ucs_fold(@cp), @cp's folding
 * first: how many (1 to TS_UCS_CLASS_MAX), stored at @out. */
unsigned int ts_ucs_fold_class(u32 cp, u32 out[TS_UCS_CLASS_MAX]) TS_HIDDEN;

/* The same for TS_FOLD_LIBC: the key of @cp under the build machine's
 * towupper() in C.UTF-8 (ASCII keys in lower case), and its class. */
u32 ts_libc_fold(u32 cp) TS_HIDDEN;
unsigned int ts_libc_fold_class(u32 cp, u32 out[TS_UCS_CLASS_MAX]) TS_HIDDEN;

#endif
