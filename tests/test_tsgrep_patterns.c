/*
 * test_tsgrep_patterns.c - tsgrep's --hex and --fsm parsers
 * (tools/tsgrep/patterns.c, compiled in here so the test needs no tool
 * objects): the exact bytes and tokens each syntax produces, every error
 * with the position its message names, and fsm patterns run through the
 * library to check they find what tsgrep(1) says they find.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tools/common/patterns.c"

#define TOK(type, recur, value)                       \
	{                                             \
		(u16)(type), (u8)(recur), (u8)(value) \
	}
#define CH(c) TOK(TS_FSM_SPECIFIC, TS_FSM_SINGLE, c)
#define HEAD_ANY TOK(TS_FSM_WILDCARD, TS_FSM_HEAD_IGNORE, 0)
#define NTOK(a) ((unsigned int)(sizeof(a) / sizeof((a)[0])))

/* ---- --hex ---- */

static void hex_ok(const char *text, const void *want, unsigned int wlen)
{
	char err[256] = "";
	unsigned int len = 0;
	u8 *out = NULL;

	if (pattern_parse_hex(text, &out, &len, err, sizeof(err)) != 0)
		fail_msg("hex \"%s\" rejected: %s", text, err);
	assert_int_equal(len, wlen);
	assert_memory_equal(out, want, wlen);
	free(out);
}

/* Rejected with -EINVAL and a message containing @needle. */
static void hex_bad(const char *text, const char *needle)
{
	char err[256] = "";
	unsigned int len = 12345;
	u8 *out = (u8 *)"untouched";

	assert_int_equal(pattern_parse_hex(text, &out, &len, err, sizeof(err)),
			 -EINVAL);
	if (!strstr(err, needle))
		fail_msg("hex \"%s\": message \"%s\" lacks \"%s\"", text, err,
			 needle);
	/* the outputs are left alone on failure */
	assert_int_equal(len, 12345);
	assert_string_equal((const char *)out, "untouched");
}

static void test_hex_valid(void **st)
{
	(void)st;
	hex_ok("GET", "GET", 3);
	hex_ok("GET |20|/|0d 0a|", "GET  /\r\n", 8);
	hex_ok("|0D0A|", "\r\n", 2);
	hex_ok("|0d 0A  0a|", "\r\n\n", 3);
	hex_ok("|\t41 42\t|", "AB", 2);
	hex_ok("|00|", "\0", 1);
	hex_ok("a|00|b", "a\0b", 3);
	hex_ok("|ff FE|", "\xff\xfe", 2);
	hex_ok("||x", "x", 1); /* an empty section adds nothing */
	hex_ok("\\|", "|", 1); /* iptables' escape for the bar */
	hex_ok("a\\\\b", "a\\b", 3);
	hex_ok("\\x", "x", 1);
	hex_ok("  ", "  ", 2); /* spaces outside bars are bytes */
	hex_ok("|41||42|", "AB", 2);
	hex_ok("\xe9t\xe9", "\xe9t\xe9", 3);
}

static void test_hex_errors(void **st)
{
	(void)st;
	hex_bad("", "empty pattern");
	hex_bad("||", "empty pattern");
	hex_bad("| |", "empty pattern");
	hex_bad("|0|", "odd number of hex digits: '0' at position 2");
	hex_bad("|0d0|", "'0' at position 4 has no second digit");
	hex_bad("ab|0 d|", "'0' at position 4 has no second digit");
	hex_bad("|0g|", "'g' at position 3 is not a hex digit");
	hex_bad("xy|zz|", "'z' at position 4 is not a hex digit "
			  "(in the |...| opened at position 3)");
	hex_bad("|0d\n|", "\\x0A at position 4 is not a hex digit");
	hex_bad("|\\7c|", "'\\' at position 2 is not a hex digit");
	hex_bad("abc|0d", "unterminated |...|: the '|' at position 4");
	hex_bad("|", "the '|' at position 1 is never closed");
	hex_bad("|41||", "the '|' at position 5 is never closed");
	hex_bad("ab\\", "'\\' at position 3 escapes nothing");
}

static void test_hex_err_buffer(void **st)
{
	char small[8];
	unsigned int len;
	u8 *out;

	(void)st;
	/* a short buffer is truncated, never overrun; none at all is fine */
	memset(small, 'X', sizeof(small));
	assert_int_equal(pattern_parse_hex("|0|", &out, &len, small, 8),
			 -EINVAL);
	assert_int_equal(strlen(small), 7);
	assert_int_equal(pattern_parse_hex("|0|", &out, &len, NULL, 0),
			 -EINVAL);
	assert_int_equal(pattern_parse_fsm("a**", NULL, &len, NULL, 0),
			 -EINVAL);
}

/* ---- --fsm ---- */

static void fsm_ok(const char *text, const struct ts_fsm_token *want,
		   unsigned int n)
{
	struct ts_fsm_token *out = NULL;
	char err[256] = "";
	unsigned int got = 0, i;

	if (pattern_parse_fsm(text, &out, &got, err, sizeof(err)) != 0)
		fail_msg("fsm \"%s\" rejected: %s", text, err);
	if (got != n)
		fail_msg("fsm \"%s\": %u tokens, want %u", text, got, n);
	for (i = 0; i < n; i++)
		if (out[i].type != want[i].type ||
		    out[i].recur != want[i].recur ||
		    out[i].value != want[i].value)
			fail_msg("fsm \"%s\" token %u: {%u,%u,%u}, want "
				 "{%u,%u,%u}",
				 text, i, out[i].type, out[i].recur,
				 out[i].value, want[i].type, want[i].recur,
				 want[i].value);
	free(out);
}

static void fsm_bad(const char *text, const char *needle)
{
	struct ts_fsm_token *out = NULL;
	unsigned int n = 777;
	char err[256] = "";

	assert_int_equal(pattern_parse_fsm(text, &out, &n, err, sizeof(err)),
			 -EINVAL);
	if (!strstr(err, needle))
		fail_msg("fsm \"%s\": message \"%s\" lacks \"%s\"", text, err,
			 needle);
	assert_null(out);
	assert_int_equal(n, 777);
}

static void test_fsm_literals(void **st)
{
	static const struct ts_fsm_token abc[] = { HEAD_ANY, CH('a'), CH('b'),
						   CH('c') };
	static const struct ts_fsm_token esc[] = {
		HEAD_ANY, CH('\n'), CH('\t'), CH('\r'), CH('\f'), CH('\v'),
		CH(0x1b), CH(0),    CH(0x7f), CH(0xAB), CH('\\'),
	};
	static const struct ts_fsm_token meta[] = {
		HEAD_ANY, CH('.'), CH('['), CH(']'), CH('?'), CH('*'),
		CH('+'),  CH('^'), CH('{'), CH('}'), CH('$'), CH('('),
		CH(')'),  CH('|'), CH('-'), CH(':'),
	};
	static const struct ts_fsm_token high[] = { HEAD_ANY, CH(0xe9), CH(' '),
						    CH('~') };

	(void)st;
	fsm_ok("abc", abc, NTOK(abc));
	fsm_ok("\\n\\t\\r\\f\\v\\e\\0\\x7f\\xAb\\\\", esc, NTOK(esc));
	fsm_ok("\\.\\[\\]\\?\\*\\+\\^\\{\\}\\$\\(\\)\\|\\-\\:", meta,
	       NTOK(meta));
	fsm_ok("\xe9 ~", high, NTOK(high));
}

static void test_fsm_classes(void **st)
{
	static const char *const names[] = {
		"digit", "xdigit", "print", "alpha", "alnum", "ascii",
		"cntrl", "graph",  "lower", "upper", "punct", "space",
	};
	static const u16 types[] = {
		TS_FSM_DIGIT, TS_FSM_XDIGIT, TS_FSM_PRINT, TS_FSM_ALPHA,
		TS_FSM_ALNUM, TS_FSM_ASCII,  TS_FSM_CNTRL, TS_FSM_GRAPH,
		TS_FSM_LOWER, TS_FSM_UPPER,  TS_FSM_PUNCT, TS_FSM_SPACE,
	};
	static const struct ts_fsm_token dot[] = {
		HEAD_ANY, TOK(TS_FSM_WILDCARD, TS_FSM_SINGLE, 0)
	};
	static const struct ts_fsm_token shorthand[] = {
		HEAD_ANY, TOK(TS_FSM_DIGIT, TS_FSM_MULTI, 0),
		TOK(TS_FSM_SPACE, TS_FSM_SINGLE, 0)
	};
	char text[64];
	unsigned int i;

	(void)st;
	for (i = 0; i < NTOK(names); i++) {
		struct ts_fsm_token want[] = {
			HEAD_ANY,
			CH('x'),
			TOK(types[i], TS_FSM_SINGLE, 0),
			CH('y'),
		};

		snprintf(text, sizeof(text), "x[:%s:]y", names[i]);
		fsm_ok(text, want, NTOK(want));
		/* the POSIX spelling grep users type works too */
		snprintf(text, sizeof(text), "x[[:%s:]]y", names[i]);
		fsm_ok(text, want, NTOK(want));
	}
	fsm_ok(".", dot, NTOK(dot));
	fsm_ok("\\d+\\s", shorthand, NTOK(shorthand));
}

static void test_fsm_quantifiers_and_heads(void **st)
{
	static const struct ts_fsm_token q[] = {
		HEAD_ANY,
		TOK(TS_FSM_SPECIFIC, TS_FSM_PERHAPS, 'a'),
		TOK(TS_FSM_WILDCARD, TS_FSM_ANY, 0),
		TOK(TS_FSM_DIGIT, TS_FSM_MULTI, 0),
		TOK(TS_FSM_SPECIFIC, TS_FSM_ANY, '*'),
	};
	static const struct ts_fsm_token anchored[] = {
		CH('G'),
		CH('E'),
		CH('T'),
	};
	static const struct ts_fsm_token head_space[] = {
		TOK(TS_FSM_SPACE, TS_FSM_HEAD_IGNORE, 0),
		CH('#'),
	};
	static const struct ts_fsm_token head_byte[] = {
		TOK(TS_FSM_SPECIFIC, TS_FSM_HEAD_IGNORE, '0'),
		TOK(TS_FSM_DIGIT, TS_FSM_SINGLE, 0),
	};
	static const struct ts_fsm_token head_dot[] = {
		HEAD_ANY,
		CH('x'),
	};
	static const struct ts_fsm_token caret_lit[] = {
		CH('^'),
		CH('a'),
	};

	(void)st;
	fsm_ok("a?.*[:digit:]+\\**", q, NTOK(q));
	fsm_ok("^GET", anchored, NTOK(anchored));
	fsm_ok("{[:space:]}#", head_space, NTOK(head_space));
	fsm_ok("{\\s}#", head_space, NTOK(head_space));
	fsm_ok("{0}\\d", head_byte, NTOK(head_byte));
	fsm_ok("{.}x", head_dot, NTOK(head_dot)); /* = the default */
	fsm_ok("^\\^a", caret_lit, NTOK(caret_lit));
}

static void test_fsm_errors(void **st)
{
	(void)st;
	fsm_bad("", "empty pattern");
	fsm_bad("^", "empty pattern: nothing to match after the '^'");
	fsm_bad("{x}", "nothing to match after the {head}");
	fsm_bad("*a", "dangling quantifier '*' at position 1");
	fsm_bad("+", "dangling quantifier '+' at position 1");
	fsm_bad("^?a", "dangling quantifier '?' at position 2");
	fsm_bad("a**", "dangling quantifier '*' at position 3");
	fsm_bad("ab+?", "dangling quantifier '?' at position 4");
	fsm_bad("{x}*a", "dangling quantifier '*' at position 4");
	fsm_bad("[:word:]", "unknown class \"word\" at position 1");
	fsm_bad("ab[[:Digit:]]", "unknown class \"Digit\" at position 3");
	fsm_bad("[:digit", "unterminated class at position 1");
	fsm_bad("[[:digit:]x", "lacks its closing ']'");
	fsm_bad("x[abc]", "bracket expression at position 2");
	fsm_bad("]", "']' at position 1 is not supported");
	fsm_bad("a\\q", "bad escape \\q at position 2");
	fsm_bad("\\w+", "bad escape \\w at position 1");
	fsm_bad("\\x4", "bad escape at position 1: \\x takes exactly two");
	fsm_bad("\\xg0", "\\x takes exactly two hex digits");
	fsm_bad("ab\\", "'\\' at position 3 escapes nothing");
	fsm_bad("a|b", "'|' at position 2 is not supported");
	fsm_bad("(ab)", "'(' at position 1 is not supported");
	fsm_bad("ab$", "'$' at position 3 is not supported in fsm "
		       "patterns; write \\$");
	fsm_bad("a^", "'^' at position 2");
	fsm_bad("a{b}", "'{' at position 2");
	fsm_bad("{}a", "empty {head}");
	fsm_bad("{ab}c", "must hold exactly one byte or class");
	fsm_bad("{a", "must hold exactly one byte or class");
	fsm_bad("{*}a", "dangling quantifier '*' at position 2");
}

static void test_fsm_too_many(void **st)
{
	struct ts_fsm_token *out;
	char *text, err[256];
	unsigned int n;

	(void)st;
	text = malloc(2 * FSM_MAX_TOKENS + 8);
	assert_non_null(text);
	/* exactly the limit, with quantifiers and escapes: accepted */
	memset(text, 'a', FSM_MAX_TOKENS);
	text[FSM_MAX_TOKENS] = '\0';
	assert_int_equal(pattern_parse_fsm(text, &out, &n, err, sizeof(err)),
			 0);
	assert_int_equal(n, FSM_MAX_TOKENS + 1);
	free(out);
	text[0] = '^';
	memcpy(text + 1, "\\x00*", 5);
	memset(text + 6, 'b', FSM_MAX_TOKENS - 1);
	text[FSM_MAX_TOKENS + 5] = '\0';
	assert_int_equal(pattern_parse_fsm(text, &out, &n, err, sizeof(err)),
			 0);
	assert_int_equal(n, FSM_MAX_TOKENS);
	free(out);
	/* one more: refused, naming where */
	memset(text, 'a', FSM_MAX_TOKENS + 1);
	text[FSM_MAX_TOKENS + 1] = '\0';
	assert_int_equal(pattern_parse_fsm(text, &out, &n, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "too many tokens: more than 1024 at "
				    "position 1025"));
	free(text);
}

/* First match of fsm @pattern in @data: start, and end in *end. */
static unsigned int fsm_find(const char *pattern, const char *data,
			     unsigned int dlen, unsigned int *end)
{
	struct ts_fsm_token *tok;
	struct ts_config *conf;
	struct ts_state state;
	unsigned int n, pos;
	char err[256];

	if (pattern_parse_fsm(pattern, &tok, &n, err, sizeof(err)))
		fail_msg("%s: %s", pattern, err);
	conf = textsearch_prepare("fsm", tok, n * (unsigned int)sizeof(*tok),
				  GFP_KERNEL, 0);
	if (IS_ERR(conf))
		fail_msg("%s: prepare: %s", pattern, textsearch_last_error());
	pos = textsearch_find_continuous(conf, &state, data, dlen);
	*end = state.offset;
	textsearch_destroy(conf);
	free(tok);
	return pos;
}

#define FIND(pat, data, wstart, wend)                                       \
	do {                                                                \
		unsigned int e_,                                            \
			p_ = fsm_find(pat, data,                            \
				      (unsigned int)sizeof(data) - 1, &e_); \
		assert_int_equal(p_, wstart);                               \
		if ((wstart) != UINT_MAX)                                   \
			assert_int_equal(e_, wend);                         \
	} while (0)

static void test_fsm_searches(void **st)
{
	(void)st;
	/* unanchored by default, anchored with ^ */
	FIND("chicken", "the funky chicken", 10, 17);
	FIND("^chicken", "the funky chicken", UINT_MAX, 0);
	FIND("^the", "the funky chicken", 0, 3);
	/* lazy * and +, greedy ?: the match ends as soon as it can */
	FIND("a[:digit:]+", "xa123y", 1, 3);
	FIND("a\\d*", "xa123y", 1, 2);
	FIND("ab?", "xaby", 1, 3);
	FIND("<.*>", "1<b>2<i>", 1, 4);
	/* {head}: skips only its class, and the skipped bytes are not part
	 * of the match */
	FIND("{\\s}#", "  \t# comment", 3, 4);
	FIND("{\\s}#", "  x# comment", UINT_MAX, 0);
	/* bytes a C string cannot hold */
	FIND("a\\x00b", "xa\0b", 1, 4);
	FIND("\\r\\n\\r\\n", "HTTP/1.1 200\r\n\r\nbody", 12, 16);
	/* ISO-8859-1 classes of the kernel table */
	FIND("[:upper:]+[:lower:]", "ab\xc9\xe9", 2, 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hex_valid),
		cmocka_unit_test(test_hex_errors),
		cmocka_unit_test(test_hex_err_buffer),
		cmocka_unit_test(test_fsm_literals),
		cmocka_unit_test(test_fsm_classes),
		cmocka_unit_test(test_fsm_quantifiers_and_heads),
		cmocka_unit_test(test_fsm_errors),
		cmocka_unit_test(test_fsm_too_many),
		cmocka_unit_test(test_fsm_searches),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
