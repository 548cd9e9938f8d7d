/*
 * fsm.c - the kernel's token machine, matched the way a regex engine would.
 *
 * A pattern is a list of quantified byte classes (SINGLE, greedy PERHAPS,
 * lazy ANY and MULTI), optionally preceded by a HEAD_IGNORE class that the
 * match may skip before it starts.  The result is defined by a backtracking
 * matcher: the first start that can match wins, and for it the first end
 * found when every token tries its preferred count first.
 *
 * Backtracking would need to re-read data, and the provider only goes
 * forwards, so the tokens run as a Pike VM instead: each live alternative is
 * a thread (token, start), and the thread list is kept in the order the
 * backtracking matcher would try them (earlier starts first).  When a thread
 * completes, every thread after it is dropped; the ones before it may still
 * complete later and then win.  Each byte is read once and each token holds
 * at most one thread per byte, so a search costs O(data * tokens).
 */
#include "internal.h"
#include "textsearch_fsm.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Class bits of the kernel's ISO-8859-1 table. */
enum {
	CL_CNTRL = 1u << 0,
	CL_SPACE = 1u << 1,
	CL_PUNCT = 1u << 2,
	CL_DIGIT = 1u << 3,
	CL_UPPER = 1u << 4,
	CL_LOWER = 1u << 5,
	CL_HEX = 1u << 6,    /* a-f, A-F */
	CL_HARDSP = 1u << 7, /* ' ' and 0xA0: the blanks isprint() accepts */
	CL_ASCII = 1u << 8,
	CL_ANY = 1u << 9,
};

static const u16 type_classes[TS_FSM_TYPE_MAX + 1] = {
	[TS_FSM_SPECIFIC] = 0,
	[TS_FSM_WILDCARD] = CL_ANY,
	[TS_FSM_DIGIT] = CL_DIGIT,
	[TS_FSM_XDIGIT] = CL_DIGIT | CL_HEX,
	[TS_FSM_PRINT] = CL_PUNCT | CL_UPPER | CL_LOWER | CL_DIGIT | CL_HARDSP,
	[TS_FSM_ALPHA] = CL_UPPER | CL_LOWER,
	[TS_FSM_ALNUM] = CL_UPPER | CL_LOWER | CL_DIGIT,
	[TS_FSM_ASCII] = CL_ASCII,
	[TS_FSM_CNTRL] = CL_CNTRL,
	[TS_FSM_GRAPH] = CL_PUNCT | CL_UPPER | CL_LOWER | CL_DIGIT,
	[TS_FSM_LOWER] = CL_LOWER,
	[TS_FSM_UPPER] = CL_UPPER,
	[TS_FSM_PUNCT] = CL_PUNCT,
	[TS_FSM_SPACE] = CL_SPACE,
};

/*
 * The classes of one byte, as lib/ctype.c has them.  Note 0x80-0x9F: the
 * kernel gives the C1 controls no class at all (only WILDCARD matches them).
 */
static unsigned int classify(u8 c)
{
	unsigned int cl = CL_ANY;

	if (c < 0x80)
		cl |= CL_ASCII;
	if (c < 0x20 || c == 0x7F) {
		cl |= CL_CNTRL;
		if (c >= 0x09 && c <= 0x0D)
			cl |= CL_SPACE;
	} else if (c == 0x20 || c == 0xA0) {
		cl |= CL_SPACE | CL_HARDSP;
	} else if (c >= '0' && c <= '9') {
		cl |= CL_DIGIT;
	} else if ((c >= 'A' && c <= 'Z') ||
		   (c >= 0xC0 && c <= 0xDE && c != 0xD7)) {
		cl |= CL_UPPER;
	} else if ((c >= 'a' && c <= 'z') || (c >= 0xDF && c != 0xF7)) {
		cl |= CL_LOWER;
	} else if (c < 0x80 || c >= 0xA1) {
		cl |= CL_PUNCT; /* the rest of ASCII, 0xA1-0xBF, 0xD7, 0xF7 */
	}
	if ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))
		cl |= CL_HEX;
	return cl;
}

int ts_fsm_class_match(unsigned int type, u8 c)
{
	if (type > TS_FSM_TYPE_MAX)
		return 0;
	return (classify(c) & type_classes[type]) != 0;
}

/* A token compiled to the set of bytes it accepts. */
struct fsm_tok {
	uint64_t set[4];
	u8 recur;
};

struct fsm {
	struct fsm_tok head; /* valid if has_head */
	bool has_head;
	unsigned int ntok; /* tokens after the head */
	unsigned int len;  /* pattern bytes */
	struct fsm_tok *tok;
	struct ts_fsm_token *pattern; /* as the caller gave it */
};

static inline bool tok_accepts(const struct fsm_tok *t, u8 c)
{
	return (t->set[c >> 6] >> (c & 63)) & 1;
}

/*
 * A thread waits to read one byte with token @tok, or, when @tok == ntok,
 * has completed a match.  Lists hold at most one thread per token: when two
 * reach the same token at the same byte their futures are identical, so the
 * one added first (higher priority) is kept.
 */
struct thread {
	unsigned int tok;
	unsigned int start;
};

struct vm {
	const struct fsm *f;
	struct thread *out; /* the list being built */
	unsigned int nout;
	uint64_t gen;	       /* marks below equal to gen: done for `out` */
	uint64_t *seen_entry;  /* [ntok + 1]: closure of token i done */
	uint64_t *seen_thread; /* [ntok + 1]: thread at token i added */
	unsigned int *pending; /* [ntok]: ANY tokens whose byte comes later */
};

static void add_thread(struct vm *vm, unsigned int tok, unsigned int start)
{
	if (vm->seen_thread[tok] == vm->gen)
		return;
	vm->seen_thread[tok] = vm->gen;
	vm->out[vm->nout].tok = tok;
	vm->out[vm->nout].start = start;
	vm->nout++;
}

/*
 * Append the threads that enter token @i, in the order backtracking tries
 * them: PERHAPS reads its byte before skipping, ANY skips before reading.
 * Entries only move forwards, so a loop with a small stack does it.
 */
static void enter(struct vm *vm, unsigned int i, unsigned int start)
{
	const struct fsm *f = vm->f;
	unsigned int npending = 0;

	for (;;) {
		if (vm->seen_entry[i] == vm->gen)
			break; /* already added, with higher priority */
		vm->seen_entry[i] = vm->gen;
		if (i == f->ntok) {
			add_thread(vm, i, start);
			break;
		}
		if (f->tok[i].recur == TS_FSM_ANY) {
			vm->pending[npending++] = i;
		} else {
			add_thread(vm, i, start);
			if (f->tok[i].recur != TS_FSM_PERHAPS)
				break; /* SINGLE and MULTI must read a byte */
		}
		i++;
	}
	while (npending)
		add_thread(vm, vm->pending[--npending], start);
}

/* Thread @t has read a byte of its class: what it may do next. */
static void advance(struct vm *vm, const struct thread *t)
{
	switch (vm->f->tok[t->tok].recur) {
	case TS_FSM_ANY:
		enter(vm, t->tok, t->start); /* stop here, else read more */
		break;
	case TS_FSM_MULTI:
		enter(vm, t->tok + 1, t->start);
		add_thread(vm, t->tok, t->start);
		break;
	default: /* SINGLE, PERHAPS */
		enter(vm, t->tok + 1, t->start);
		break;
	}
}

/* Lists and marks of up to this many tokens live on the stack. */
#define FSM_STACK_TOKENS 64

static unsigned int fsm_find(struct ts_config *conf, struct ts_state *state)
{
	const struct fsm *f = ts_config_priv(conf);
	struct thread stack_lists[2][FSM_STACK_TOKENS + 1];
	uint64_t stack_marks[2][FSM_STACK_TOKENS + 1];
	unsigned int stack_pending[FSM_STACK_TOKENS];
	struct thread *cur, *next, *swap;
	unsigned int ncur = 0, pos = state->offset, mstart = UINT_MAX, mend = 0;
	unsigned int n, i, k, nslots = f->ntok + 1;
	bool can_start = true; /* may a match still start at pos? */
	void *heap = NULL;
	struct vm vm;
	const u8 *block;

	if (f->ntok < FSM_STACK_TOKENS) {
		cur = stack_lists[0];
		next = stack_lists[1];
		vm.seen_entry = stack_marks[0];
		vm.seen_thread = stack_marks[1];
		vm.pending = stack_pending;
		memset(stack_marks, 0, sizeof(stack_marks));
	} else {
		size_t lists, marks, total;

		/* ntok + 1 cannot wrap: ntok <= UINT_MAX / 4 */
		if (!ts_size_mul(nslots, 2 * sizeof(struct thread), &lists) ||
		    !ts_size_mul(nslots, 2 * sizeof(uint64_t), &marks) ||
		    !ts_size_add(lists, marks, &total) ||
		    !ts_size_add(total, (size_t)nslots * sizeof(unsigned int),
				 &total) ||
		    !(heap = calloc(1, total))) {
			errno = ENOMEM;
			return UINT_MAX;
		}
		/* marks first: they need the strictest alignment */
		vm.seen_entry = heap;
		vm.seen_thread = vm.seen_entry + nslots;
		cur = (struct thread *)(vm.seen_thread + nslots);
		next = cur + nslots;
		vm.pending = (unsigned int *)(next + nslots);
	}
	vm.f = f;
	vm.gen = 1;

	for (;;) {
		/* A completed thread with nothing ahead of it cannot lose. */
		if (ncur && cur[0].tok == f->ntok) {
			mstart = cur[0].start;
			mend = pos;
			goto out;
		}
		if (!ncur && !can_start)
			goto out;

		n = conf->get_next_block(pos, &block, conf, state);
		if (n > UINT_MAX - pos)
			n = UINT_MAX - pos; /* stream offsets would wrap */
		if (!n) {
			/* End of data: only completed threads count, and no
			 * match starts here. */
			for (k = 0; k < ncur; k++) {
				if (cur[k].tok == f->ntok) {
					mstart = cur[k].start;
					mend = pos;
					break;
				}
			}
			goto out;
		}

		for (i = 0; i < n; i++) {
			u8 c = block[i];

			if (can_start) {
				/* lowest priority: after every earlier start;
				 * marks are still those of the build of cur */
				vm.out = cur;
				vm.nout = ncur;
				enter(&vm, 0, pos);
				ncur = vm.nout;
				can_start = f->has_head &&
					    tok_accepts(&f->head, c);
			}

			vm.gen++;
			vm.out = next;
			vm.nout = 0;
			for (k = 0; k < ncur; k++) {
				const struct thread *t = &cur[k];

				if (t->tok == f->ntok) {
					/* beats every thread after it */
					mstart = t->start;
					mend = pos;
					can_start = false;
					break;
				}
				if (tok_accepts(&f->tok[t->tok], c))
					advance(&vm, t);
			}
			swap = cur;
			cur = next;
			next = swap;
			ncur = vm.nout;
			pos++;

			if (ncur ? cur[0].tok == f->ntok : !can_start)
				break; /* decided: see the top of the loop */
		}
	}

out:
	free(heap);
	if (mstart == UINT_MAX)
		return UINT_MAX;
	state->offset = mend;
	return mstart;
}

static struct ts_config *fsm_init(const void *pattern, unsigned int len,
				  gfp_t gfp_mask, int flags)
{
	const size_t tsize = sizeof(struct ts_fsm_token);
	struct fsm_tok by_type[TS_FSM_TYPE_MAX + 1];
	struct ts_config *conf;
	struct fsm *f;
	size_t ntokens = len / tsize, payload, toks;
	unsigned int i, c, first;

	if (flags & TS_IGNORECASE)
		return ERR_PTR(-EINVAL); /* classes have no case folding */
	if (ntokens == 0 || len % tsize)
		return ERR_PTR(-EINVAL);
	for (i = 0; i < ntokens; i++) {
		struct ts_fsm_token t;

		/* the caller's array need not be aligned */
		memcpy(&t, (const u8 *)pattern + i * tsize, tsize);
		if (t.type > TS_FSM_TYPE_MAX || t.recur > TS_FSM_RECUR_MAX)
			return ERR_PTR(-EINVAL);
		if (t.recur == TS_FSM_HEAD_IGNORE && (i != 0 || ntokens == 1))
			return ERR_PTR(-EINVAL);
	}

	/* payload = struct + compiled tokens + the pattern as given */
	if (!ts_size_mul(ntokens, sizeof(struct fsm_tok), &toks) ||
	    !ts_size_add(sizeof(*f), toks, &payload) ||
	    !ts_size_add(payload, len, &payload))
		return ERR_PTR(-EINVAL);
	conf = alloc_ts_config(payload, gfp_mask);
	if (IS_ERR(conf))
		return conf;
	f = ts_config_priv(conf);
	f->tok = (struct fsm_tok *)(f + 1);
	f->pattern = (struct ts_fsm_token *)(f->tok + ntokens);
	f->len = len;
	memcpy(f->pattern, pattern, len);

	memset(by_type, 0, sizeof(by_type));
	for (i = 1; i <= TS_FSM_TYPE_MAX; i++)
		for (c = 0; c < 256; c++)
			if (ts_fsm_class_match(i, (u8)c))
				by_type[i].set[c >> 6] |= (uint64_t)1
							  << (c & 63);

	first = f->pattern[0].recur == TS_FSM_HEAD_IGNORE;
	f->has_head = first;
	f->ntok = (unsigned int)ntokens - first;
	for (i = 0; i < ntokens; i++) {
		const struct ts_fsm_token *t = &f->pattern[i];
		struct fsm_tok *ft = i < first ? &f->head : &f->tok[i - first];

		*ft = by_type[t->type];
		if (t->type == TS_FSM_SPECIFIC)
			ft->set[t->value >> 6] = (uint64_t)1 << (t->value & 63);
		ft->recur = t->recur;
	}
	return conf;
}

static void *fsm_get_pattern(struct ts_config *conf)
{
	return ((struct fsm *)ts_config_priv(conf))->pattern;
}

static unsigned int fsm_get_pattern_len(struct ts_config *conf)
{
	return ((struct fsm *)ts_config_priv(conf))->len;
}

struct ts_ops ts_fsm_ops = {
	.name = "fsm",
	.init = fsm_init,
	.find = fsm_find,
	.get_pattern = fsm_get_pattern,
	.get_pattern_len = fsm_get_pattern_len,
};
