/*
 * textsearch_fsm.h - tokens of the "fsm" algorithm, as in the kernel's
 * <linux/textsearch_fsm.h>.
 *
 * An fsm pattern is an array of struct ts_fsm_token; its length passed to
 * textsearch_prepare() is the array's size in bytes.  Each token accepts one
 * byte class a number of times:
 *
 *   type  TS_FSM_SPECIFIC matches the byte in @value; the others match a
 *         class of the ISO-8859-1 ctype table (WILDCARD matches any byte).
 *   recur TS_FSM_SINGLE 1, TS_FSM_PERHAPS 0-1 (preferring 1), TS_FSM_ANY
 *         0-n and TS_FSM_MULTI 1-n (both preferring as few as still let the
 *         rest match), TS_FSM_HEAD_IGNORE 0-n bytes of the class skipped
 *         before the match (first token only, never alone).
 *
 * Without HEAD_IGNORE a match must start exactly at the search offset.  With
 * it, the match starts at the first position (from the search offset, over
 * bytes of the head class only) where the rest of the tokens match; a
 * WILDCARD head therefore searches the whole data.  A match ends as soon as
 * its last token is satisfied.  TS_IGNORECASE is not supported (-EINVAL).
 */
#ifndef TEXTSEARCH_FSM_H
#define TEXTSEARCH_FSM_H

#include "textsearch.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
	TS_FSM_SPECIFIC, /* the byte in value */
	TS_FSM_WILDCARD, /* any byte */
	TS_FSM_DIGIT,	 /* isdigit() */
	TS_FSM_XDIGIT,	 /* isxdigit() */
	TS_FSM_PRINT,	 /* isprint() */
	TS_FSM_ALPHA,	 /* isalpha() */
	TS_FSM_ALNUM,	 /* isalnum() */
	TS_FSM_ASCII,	 /* isascii() */
	TS_FSM_CNTRL,	 /* iscntrl() */
	TS_FSM_GRAPH,	 /* isgraph() */
	TS_FSM_LOWER,	 /* islower() */
	TS_FSM_UPPER,	 /* isupper() */
	TS_FSM_PUNCT,	 /* ispunct() */
	TS_FSM_SPACE,	 /* isspace() */
	__TS_FSM_TYPE_MAX,
};
#define TS_FSM_TYPE_MAX (__TS_FSM_TYPE_MAX - 1)

enum {
	TS_FSM_SINGLE,	    /* 1 occurrence */
	TS_FSM_PERHAPS,	    /* 1 or 0 occurrences */
	TS_FSM_ANY,	    /* 0..n occurrences */
	TS_FSM_MULTI,	    /* 1..n occurrences */
	TS_FSM_HEAD_IGNORE, /* 0..n ignored occurrences at head */
	__TS_FSM_RECUR_MAX,
};
#define TS_FSM_RECUR_MAX (__TS_FSM_RECUR_MAX - 1)

struct ts_fsm_token {
	u16 type;
	u8 recur;
	u8 value;
};

/*
 * Does byte @c belong to the class of fsm token type @type (not
 * TS_FSM_SPECIFIC)?  The classes of the kernel's ISO-8859-1 ctype table;
 * false for an unknown type.
 */
TS_API int ts_fsm_class_match(unsigned int type, u8 c);

#ifdef __cplusplus
}
#endif

#endif /* TEXTSEARCH_FSM_H */
