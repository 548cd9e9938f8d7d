/*
 * fsm_reference.c - see fsm_reference.h.
 *
 * The matcher is the textbook recursion: match(token i, position p) tries
 * the counts of token i in preference order and returns the end of the first
 * that lets tokens i+1.. match.  Its answer depends on (i, p) only, so it is
 * cached; that changes no result, it only keeps nested ANY/MULTI tokens from
 * taking exponential time on long data.
 */
#include "fsm_reference.h"

#include <stdbool.h>
#include <stdlib.h>

static bool ref_digit(u8 c)
{
	return c >= '0' && c <= '9';
}

static bool ref_upper(u8 c)
{
	if (c >= 'A' && c <= 'Z')
		return true;
	/* 0xC0-0xDE except the multiplication sign */
	return c >= 0xC0 && c <= 0xDE && c != 0xD7;
}

static bool ref_lower(u8 c)
{
	if (c >= 'a' && c <= 'z')
		return true;
	/* 0xDF-0xFF except the division sign */
	return c >= 0xDF && c != 0xF7;
}

static bool ref_cntrl(u8 c)
{
	return c <= 0x1F || c == 0x7F; /* 0x80-0x9F: no class in the kernel */
}

static bool ref_space(u8 c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' ||
	       c == '\r' || c == 0xA0;
}

static bool ref_punct(u8 c)
{
	if (c > ' ' && c < 0x7F)
		return !ref_digit(c) && !ref_upper(c) && !ref_lower(c);
	return (c >= 0xA1 && c <= 0xBF) || c == 0xD7 || c == 0xF7;
}

int ref_fsm_accepts(unsigned int type, u8 value, u8 c)
{
	switch (type) {
	case TS_FSM_SPECIFIC:
		return c == value;
	case TS_FSM_WILDCARD:
		return 1;
	case TS_FSM_DIGIT:
		return ref_digit(c);
	case TS_FSM_XDIGIT:
		return ref_digit(c) || (c >= 'a' && c <= 'f') ||
		       (c >= 'A' && c <= 'F');
	case TS_FSM_PRINT:
		return ref_punct(c) || ref_upper(c) || ref_lower(c) ||
		       ref_digit(c) || c == ' ' || c == 0xA0;
	case TS_FSM_ALPHA:
		return ref_upper(c) || ref_lower(c);
	case TS_FSM_ALNUM:
		return ref_upper(c) || ref_lower(c) || ref_digit(c);
	case TS_FSM_ASCII:
		return c <= 0x7F;
	case TS_FSM_CNTRL:
		return ref_cntrl(c);
	case TS_FSM_GRAPH:
		return ref_punct(c) || ref_upper(c) || ref_lower(c) ||
		       ref_digit(c);
	case TS_FSM_LOWER:
		return ref_lower(c);
	case TS_FSM_UPPER:
		return ref_upper(c);
	case TS_FSM_PUNCT:
		return ref_punct(c);
	case TS_FSM_SPACE:
		return ref_space(c);
	default:
		return 0;
	}
}

int ref_fsm_check(const struct ts_fsm_token *t, unsigned int ntokens, int flags)
{
	unsigned int i;

	if (ntokens == 0 || (flags & TS_IGNORECASE))
		return -EINVAL;
	for (i = 0; i < ntokens; i++) {
		if (t[i].type > TS_FSM_TYPE_MAX ||
		    t[i].recur > TS_FSM_RECUR_MAX)
			return -EINVAL;
		if (t[i].recur == TS_FSM_HEAD_IGNORE && i > 0)
			return -EINVAL;
	}
	if (t[0].recur == TS_FSM_HEAD_IGNORE && ntokens == 1)
		return -EINVAL;
	return 0;
}

enum { UNKNOWN = -2, FAILS = -1 };

struct matcher {
	const struct ts_fsm_token *t; /* the tokens after the head */
	unsigned int n;
	const u8 *data;
	unsigned int dlen;
	long *memo; /* [(n + 1) * (dlen + 1)]: end, FAILS or UNKNOWN */
};

static bool takes(const struct matcher *m, unsigned int i, unsigned int p)
{
	return p < m->dlen &&
	       ref_fsm_accepts(m->t[i].type, m->t[i].value, m->data[p]);
}

static long match(struct matcher *m, unsigned int i, unsigned int p)
{
	long *slot = &m->memo[(size_t)i * (m->dlen + 1u) + p];
	long r = FAILS;
	unsigned int q;

	if (*slot != UNKNOWN)
		return *slot;
	if (i == m->n) {
		r = p;
	} else {
		switch (m->t[i].recur) {
		case TS_FSM_SINGLE:
			if (takes(m, i, p))
				r = match(m, i + 1, p + 1);
			break;
		case TS_FSM_PERHAPS:
			if (takes(m, i, p))
				r = match(m, i + 1, p + 1);
			if (r == FAILS)
				r = match(m, i + 1, p);
			break;
		case TS_FSM_ANY:
			/* as few as possible: 0, 1, 2, ... */
			for (q = p;; q++) {
				r = match(m, i + 1, q);
				if (r != FAILS || !takes(m, i, q))
					break;
			}
			break;
		case TS_FSM_MULTI:
			if (!takes(m, i, p))
				break;
			for (q = p + 1;; q++) {
				r = match(m, i + 1, q);
				if (r != FAILS || !takes(m, i, q))
					break;
			}
			break;
		}
	}
	*slot = r;
	return r;
}

unsigned int ref_fsm_find(const struct ts_fsm_token *t, unsigned int ntokens,
			  const u8 *data, unsigned int dlen, unsigned int from,
			  unsigned int *end)
{
	bool head = ntokens > 0 && t[0].recur == TS_FSM_HEAD_IGNORE;
	struct matcher m;
	unsigned int s, result = UINT_MAX;
	size_t cells, i;

	if (from >= dlen || ntokens == 0)
		return UINT_MAX;
	m.t = head ? t + 1 : t;
	m.n = head ? ntokens - 1 : ntokens;
	m.data = data;
	m.dlen = dlen;
	cells = ((size_t)m.n + 1) * ((size_t)dlen + 1);
	m.memo = malloc(cells * sizeof(*m.memo));
	if (!m.memo)
		abort();
	for (i = 0; i < cells; i++)
		m.memo[i] = UNKNOWN;

	for (s = from; s < dlen; s++) {
		long e = match(&m, 0, s);

		if (e != FAILS) {
			*end = (unsigned int)e;
			result = s;
			break;
		}
		/* without a head only @from may start; with one, only over
		 * bytes of its class */
		if (!head || !ref_fsm_accepts(t[0].type, t[0].value, data[s]))
			break;
	}
	free(m.memo);
	return result;
}
