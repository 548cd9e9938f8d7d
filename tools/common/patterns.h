/*
 * patterns.h - the pattern syntaxes the tools share, turned into what
 * textsearch_prepare() takes (tools/common/ is built into every program).
 *
 *   hex:   iptables string-match style (tsgrep --hex, tspkt hex-string):
 *          text with |..| sections of hex byte pairs, spaces allowed inside
 *          the bars, a backslash making the next byte literal:
 *          "GET |20|/|0d 0a|".
 *   fsm:   a small textual syntax compiled to struct ts_fsm_token (see
 *          tsgrep(1), FSM PATTERNS).
 *
 * Both return 0, or -EINVAL with a message naming what was wrong (and
 * where) in @err.  The caller frees *out with free().
 */
#ifndef TOOLS_PATTERNS_H
#define TOOLS_PATTERNS_H

#include <stddef.h>

#include <textsearch.h>
#include <textsearch_fsm.h>

int pattern_parse_hex(const char *text, u8 **out, unsigned int *len, char *err,
		      size_t errlen);

int pattern_parse_fsm(const char *text, struct ts_fsm_token **out,
		      unsigned int *ntokens, char *err, size_t errlen);

#endif
