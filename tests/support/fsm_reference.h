/*
 * fsm_reference.h - an independent model of the "fsm" algorithm: a plain
 * recursive backtracking matcher over the tokens, with its own class table,
 * sharing no code with the library.  Plain C (no cmocka), so the fuzz target
 * can use it too.
 *
 * Semantics: after an optional HEAD_IGNORE token of class H, each token is a
 * quantified class tried in this order: SINGLE once; PERHAPS once, else not
 * at all; ANY 0, 1, 2, ... times; MULTI 1, 2, ... times; every byte a token
 * takes must be of its class.  Candidate starts are @from and, with a head,
 * each following position while the bytes skipped are of class H; a start
 * must be a byte of the data.  The first start where the tokens match wins,
 * with the end the first successful path reaches.
 */
#ifndef TS_FSM_REFERENCE_H
#define TS_FSM_REFERENCE_H

#include "textsearch_fsm.h"

/* Is byte @c accepted by a token of @type (and @value for SPECIFIC)?
 * Written from the ISO-8859-1 table of the kernel's lib/ctype.c. */
int ref_fsm_accepts(unsigned int type, u8 value, u8 c);

/* 0 if fsm accepts these @ntokens tokens and @flags, else -EINVAL. */
int ref_fsm_check(const struct ts_fsm_token *t, unsigned int ntokens,
		  int flags);

/*
 * The first match of the (valid) tokens in @data starting at or after
 * @from: returns its start and stores its end in *@end, or returns UINT_MAX.
 */
unsigned int ref_fsm_find(const struct ts_fsm_token *t, unsigned int ntokens,
			  const u8 *data, unsigned int dlen, unsigned int from,
			  unsigned int *end);

#endif
