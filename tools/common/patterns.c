/*
 * patterns.c - the hex and fsm pattern syntaxes (see patterns.h, tsgrep(1)
 * and tspkt(1)).
 *
 * Positions in error messages are 1-based byte positions in the pattern
 * text, so a user can count along the string they typed.
 *
 * The fsm syntax is deliberately a thin spelling of the token array: one
 * atom is one struct ts_fsm_token, one quantifier sets its recur, and the
 * head decides whether a HEAD_IGNORE token comes first.  Anything a regex
 * user would expect that the tokens cannot express (alternation, groups,
 * bracket sets, an end anchor, a word class) is an error rather than a
 * silent literal, so nobody gets a search that differs from what they meant.
 */
#include "patterns.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The fsm costs O(data * tokens); a cap keeps a pasted megabyte of pattern
 * from turning into a search that never ends.  Documented in tsgrep(1).
 */
#define FSM_MAX_TOKENS 1024

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int
perr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static int hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A byte as a message shows it: 'c' when printable, else \xHH. */
static const char *show(unsigned char c, char buf[8])
{
	if (c >= 0x20 && c < 0x7f)
		snprintf(buf, 8, "'%c'", c);
	else
		snprintf(buf, 8, "\\x%02X", c);
	return buf;
}

/* ---- --hex ---------------------------------------------------------------- */

int pattern_parse_hex(const char *text, u8 **out, unsigned int *len, char *err,
		      size_t errlen)
{
	size_t n, i, o = 0, bar = 0;
	bool in_bar = false;
	char b[8];
	u8 *buf;

	if (!text || !out || !len)
		return perr(err, errlen, "no pattern");
	n = strlen(text);
	if (n > UINT_MAX)
		return perr(err, errlen, "pattern too long");
	/* every output byte takes at least one input byte */
	buf = malloc(n + 1);
	if (!buf)
		return perr(err, errlen, "out of memory");

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)text[i];

		if (!in_bar) {
			if (c == '|') {
				in_bar = true;
				bar = i;
			} else if (c == '\\') {
				/* iptables: a backslash makes the next byte
				 * literal, which is how '|' gets in */
				if (i + 1 == n) {
					free(buf);
					return perr(err, errlen,
						    "'\\' at position %zu "
						    "escapes nothing",
						    i + 1);
				}
				buf[o++] = (u8)text[++i];
			} else {
				buf[o++] = c;
			}
			continue;
		}
		if (c == '|') {
			in_bar = false;
		} else if (c == ' ' || c == '\t') {
			/* separators between byte pairs */
		} else if (hexval(c) < 0) {
			free(buf);
			return perr(err, errlen,
				    "%s at position %zu is not a hex digit "
				    "(in the |...| opened at position %zu)",
				    show(c, b), i + 1, bar + 1);
		} else if (hexval((unsigned char)text[i + 1]) < 0 &&
			   !strchr(" \t|", text[i + 1])) {
			/* includes the end of the text: strchr finds '\0' */
			free(buf);
			return perr(err, errlen,
				    "%s at position %zu is not a hex digit "
				    "(in the |...| opened at position %zu)",
				    show((unsigned char)text[i + 1], b), i + 2,
				    bar + 1);
		} else if (hexval((unsigned char)text[i + 1]) < 0) {
			/* a byte is two adjacent digits; a lone one before
			 * a separator makes the count odd */
			free(buf);
			return perr(err, errlen,
				    "odd number of hex digits: %s at position "
				    "%zu has no second digit",
				    show(c, b), i + 1);
		} else {
			buf[o++] = (u8)(hexval(c) << 4 |
					hexval((unsigned char)text[i + 1]));
			i++;
		}
	}
	if (in_bar) {
		free(buf);
		return perr(err, errlen,
			    "unterminated |...|: the '|' at position %zu "
			    "is never closed",
			    bar + 1);
	}
	if (o == 0) {
		free(buf);
		return perr(err, errlen, "empty pattern: it names no bytes");
	}
	*out = buf;
	*len = (unsigned int)o;
	return 0;
}

/* ---- --fsm ---------------------------------------------------------------- */

static const struct {
	const char *name;
	u16 type;
} fsm_classes[] = {
	{ "digit", TS_FSM_DIGIT }, { "xdigit", TS_FSM_XDIGIT },
	{ "print", TS_FSM_PRINT }, { "alpha", TS_FSM_ALPHA },
	{ "alnum", TS_FSM_ALNUM }, { "ascii", TS_FSM_ASCII },
	{ "cntrl", TS_FSM_CNTRL }, { "graph", TS_FSM_GRAPH },
	{ "lower", TS_FSM_LOWER }, { "upper", TS_FSM_UPPER },
	{ "punct", TS_FSM_PUNCT }, { "space", TS_FSM_SPACE },
};

struct fsm_parser {
	const char *s;
	size_t i; /* next byte to read */
	char *err;
	size_t errlen;
};

/* Characters with a meaning (or a reserved one) in the syntax. */
static bool is_meta(unsigned char c)
{
	return c && strchr("\\.[]?*+^{}$()|", c) != NULL;
}

static bool is_quant(unsigned char c)
{
	return c == '?' || c == '*' || c == '+';
}

/*
 * [:name:] or [[:name:]], the parser sitting on the first '['.  Only a
 * whole named class can be one token; a set like [abc] cannot.
 */
static int parse_class(struct fsm_parser *p, u16 *type)
{
	const char *s = p->s + p->i, *name, *end;
	size_t start = p->i, k, nlen;
	bool outer = s[1] == '[';

	name = s + (outer ? 3 : 2);
	if (s[outer ? 1 : 0] != '[' || s[outer ? 2 : 1] != ':')
		return perr(p->err, p->errlen,
			    "bracket expression at position %zu: only a "
			    "named class like [:digit:] is supported",
			    start + 1);
	end = strstr(name, ":]");
	if (!end)
		return perr(p->err, p->errlen,
			    "unterminated class at position %zu: expected "
			    "\":]\"",
			    start + 1);
	nlen = (size_t)(end - name);
	for (k = 0; k < sizeof(fsm_classes) / sizeof(fsm_classes[0]); k++)
		if (strlen(fsm_classes[k].name) == nlen &&
		    !memcmp(fsm_classes[k].name, name, nlen))
			break;
	if (k == sizeof(fsm_classes) / sizeof(fsm_classes[0]))
		return perr(p->err, p->errlen,
			    "unknown class \"%.*s\" at position %zu (known: "
			    "alnum alpha ascii cntrl digit graph lower print "
			    "punct space upper xdigit)",
			    (int)(nlen > 32 ? 32 : nlen), name, start + 1);
	end += 2;
	if (outer) {
		if (*end != ']')
			return perr(p->err, p->errlen,
				    "class at position %zu: \"[[:%.*s:]\" "
				    "lacks its closing ']'",
				    start + 1, (int)nlen, name);
		end++;
	}
	*type = fsm_classes[k].type;
	p->i = (size_t)(end - p->s);
	return 0;
}

/* A backslash escape, the parser sitting on the backslash. */
static int parse_escape(struct fsm_parser *p, u16 *type, u8 *value)
{
	size_t at = p->i;
	unsigned char c = (unsigned char)p->s[at + 1];
	int hi, lo;

	*type = TS_FSM_SPECIFIC;
	p->i = at + 2;
	switch (c) {
	case '\0':
		return perr(p->err, p->errlen,
			    "'\\' at position %zu escapes nothing", at + 1);
	case 'n':
		*value = '\n';
		return 0;
	case 't':
		*value = '\t';
		return 0;
	case 'r':
		*value = '\r';
		return 0;
	case 'f':
		*value = '\f';
		return 0;
	case 'v':
		*value = '\v';
		return 0;
	case 'e':
		*value = 0x1b;
		return 0;
	case '0':
		*value = 0;
		return 0;
	/* shorthands only where one token type is exactly the class */
	case 'd':
		*type = TS_FSM_DIGIT;
		*value = 0;
		return 0;
	case 's':
		*type = TS_FSM_SPACE;
		*value = 0;
		return 0;
	case 'x':
		hi = hexval((unsigned char)p->s[at + 2]);
		lo = hi < 0 ? -1 : hexval((unsigned char)p->s[at + 3]);
		if (lo < 0)
			return perr(p->err, p->errlen,
				    "bad escape at position %zu: \\x takes "
				    "exactly two hex digits",
				    at + 1);
		*value = (u8)(hi << 4 | lo);
		p->i = at + 4;
		return 0;
	case 'w':
		return perr(p->err, p->errlen,
			    "bad escape \\w at position %zu: no token class "
			    "is letters, digits and '_'; use [:alnum:]",
			    at + 1);
	default:
		break;
	}
	/* any other punctuation (metacharacters among it) is itself, as in
	 * regexes; letters and digits are reserved for future escapes */
	if ((c >= 0x21 && c <= 0x2f) || (c >= 0x3a && c <= 0x40) ||
	    (c >= 0x5b && c <= 0x60) || (c >= 0x7b && c <= 0x7e)) {
		*value = c;
		return 0;
	}
	{
		char b[8];

		return perr(p->err, p->errlen,
			    "bad escape \\%s at position %zu (known: \\n \\t "
			    "\\r \\f \\v \\e \\0 \\xHH \\d \\s and \\ before "
			    "punctuation)",
			    c >= 0x21 && c < 0x7f ?
				    (snprintf(b, sizeof(b), "%c", c), b) :
				    show(c, b),
			    at + 1);
	}
}

/* One atom: a byte, an escape, '.', or a class. */
static int parse_atom(struct fsm_parser *p, u16 *type, u8 *value)
{
	unsigned char c = (unsigned char)p->s[p->i];
	size_t at = p->i;
	char b[8];

	*value = 0;
	switch (c) {
	case '\\':
		return parse_escape(p, type, value);
	case '.':
		*type = TS_FSM_WILDCARD;
		p->i++;
		return 0;
	case '[':
		return parse_class(p, type);
	case '?':
	case '*':
	case '+':
		return perr(p->err, p->errlen,
			    "dangling quantifier '%c' at position %zu: it "
			    "follows nothing it could repeat",
			    c, at + 1);
	case '^':
		return perr(p->err, p->errlen,
			    "'^' at position %zu: it anchors only as the "
			    "first character; write \\^ for the byte",
			    at + 1);
	case '{':
		return perr(p->err, p->errlen,
			    "'{' at position %zu: a {head} is allowed only at "
			    "the start; write \\{ for the byte",
			    at + 1);
	default:
		break;
	}
	if (is_meta(c))
		return perr(p->err, p->errlen,
			    "%s at position %zu is not supported in fsm "
			    "patterns; write \\%c for the byte",
			    show(c, b), at + 1, c);
	*type = TS_FSM_SPECIFIC;
	*value = c;
	p->i++;
	return 0;
}

int pattern_parse_fsm(const char *text, struct ts_fsm_token **out,
		      unsigned int *ntokens, char *err, size_t errlen)
{
	struct fsm_parser p = { text, 0, err, errlen };
	struct ts_fsm_token *tok;
	unsigned int n = 0, body;
	int ret;

	if (!text || !out || !ntokens)
		return perr(err, errlen, "no pattern");
	if (!*text)
		return perr(err, errlen, "empty pattern");
	tok = calloc(FSM_MAX_TOKENS + 1, sizeof(*tok));
	if (!tok)
		return perr(err, errlen, "out of memory");

	/* the head: unanchored (skip anything), '^' (skip nothing), or
	 * {ATOM} (skip bytes of that class only) */
	if (text[0] == '^') {
		p.i = 1;
	} else if (text[0] == '{') {
		u16 type;
		u8 value;

		p.i = 1;
		if (text[1] == '}')
			ret = perr(err, errlen,
				   "empty {head} at position 1: put one "
				   "byte or class between the braces");
		else
			ret = parse_atom(&p, &type, &value);
		if (ret == 0 && text[p.i] != '}')
			ret = perr(err, errlen,
				   "{head} opened at position 1 must hold "
				   "exactly one byte or class and close with "
				   "'}' (position %zu)",
				   p.i + 1);
		if (ret) {
			free(tok);
			return ret;
		}
		p.i++;
		if (is_quant((unsigned char)text[p.i])) {
			free(tok);
			return perr(err, errlen,
				    "dangling quantifier '%c' at position %zu:"
				    " a {head} cannot be repeated",
				    text[p.i], p.i + 1);
		}
		tok[n++] = (struct ts_fsm_token){ type, TS_FSM_HEAD_IGNORE,
						  value };
	} else {
		tok[n++] = (struct ts_fsm_token){ TS_FSM_WILDCARD,
						  TS_FSM_HEAD_IGNORE, 0 };
	}
	body = n;

	while (text[p.i]) {
		u16 type;
		u8 value, recur = TS_FSM_SINGLE;
		unsigned char q;

		if (n - body == FSM_MAX_TOKENS) {
			free(tok);
			return perr(err, errlen,
				    "too many tokens: more than %d at position"
				    " %zu",
				    FSM_MAX_TOKENS, p.i + 1);
		}
		ret = parse_atom(&p, &type, &value);
		if (ret) {
			free(tok);
			return ret;
		}
		q = (unsigned char)text[p.i];
		if (is_quant(q)) {
			recur = q == '?' ? TS_FSM_PERHAPS :
				q == '*' ? TS_FSM_ANY :
					   TS_FSM_MULTI;
			p.i++;
			if (is_quant((unsigned char)text[p.i])) {
				free(tok);
				return perr(err, errlen,
					    "dangling quantifier '%c' at "
					    "position %zu: quantifiers do not "
					    "stack",
					    text[p.i], p.i + 1);
			}
		}
		tok[n++] = (struct ts_fsm_token){ type, recur, value };
	}
	if (n == body) {
		free(tok);
		return perr(err, errlen,
			    "empty pattern: nothing to match after the %s",
			    text[0] == '^' ? "'^'" : "{head}");
	}
	*out = tok;
	*ntokens = n;
	return 0;
}
