/*
 * utf8_reference.h - TS_UTF8's naive reference (utf8_reference.c), for
 * test_differential_utf8 and the fuzz target.
 */
#ifndef TS_UTF8_REFERENCE_H
#define TS_UTF8_REFERENCE_H

#include "testsupport.h"

#include <stdbool.h>

/* How characters compare: exactly, by Unicode simple case folding
 * (TS_IGNORECASE), or by the C library's towupper() (with TS_FOLD_LIBC). */
enum { REF_FOLD_NONE, REF_FOLD_UCS, REF_FOLD_LIBC };

/* Read CaseFolding.txt (once) and set the C.UTF-8 locale; false, with a
 * message, when either is missing. */
bool ref_utf8_init(void);

/*
 * Every match of the @count patterns in @data by characters, in find/next
 * order: all of them by (start, end, id) with @overlap, else leftmost-
 * longest then lowest id, not overlapping.  With @partial (TS_FOLD_LIBC)
 * an incomplete character ending a pattern matches its bytes, inside a
 * character too.  *@nout holds how many; free() the array.  Patterns of
 * at most 400 characters.
 */
struct ref_match *ref_utf8_matches(const u8 *const *pats,
				   const unsigned int *lens, unsigned int count,
				   int fold, bool partial, const u8 *data,
				   unsigned int dlen, bool overlap,
				   unsigned int *nout);

#endif
