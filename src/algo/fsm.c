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
#include "textsearch_stream.h"

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
	/*
	 * Bytes a search with no thread, at a byte where a match may start,
	 * can pass over without any effect: of the head class (so starts go
	 * on) and read by no token a start enters.  Empty when a match can
	 * be zero-width (then every start matches).
	 */
	uint64_t idle[4];
	int idle_only; /* the one byte not in idle, or -1 */
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
	uint64_t start;
};

struct vm {
	const struct fsm *f;
	struct thread *out; /* the list being built */
	unsigned int nout;
	unsigned int done_at;  /* index in out of the first completed thread */
	uint64_t gen;	       /* marks below equal to gen: done for `out` */
	uint64_t *seen_entry;  /* [ntok + 1]: closure of token i done */
	uint64_t *seen_thread; /* [ntok + 1]: thread at token i added */
	unsigned int *pending; /* [ntok]: ANY tokens whose byte comes later */
};

static void add_thread(struct vm *vm, unsigned int tok, uint64_t start)
{
	if (vm->seen_thread[tok] == vm->gen)
		return;
	vm->seen_thread[tok] = vm->gen;
	if (tok == vm->f->ntok && vm->done_at == UINT_MAX)
		vm->done_at = vm->nout;
	vm->out[vm->nout].tok = tok;
	vm->out[vm->nout].start = start;
	vm->nout++;
}

/*
 * Append the threads that enter token @i, in the order backtracking tries
 * them: PERHAPS reads its byte before skipping, ANY skips before reading.
 * Entries only move forwards, so a loop with a small stack does it.
 */
static void enter(struct vm *vm, unsigned int i, uint64_t start)
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

/*
 * One search from one offset, as the backtracking matcher would run it:
 * its live threads in priority order and the best match completed so far
 * (the candidate).  Every live thread has a higher priority than the
 * candidate, since the ones after a completed thread are dropped, so the
 * search is decided when none is left and no match may start any more, and
 * then the candidate (if any) is its result.  find() runs one; a stream
 * runs several at once (below).
 */
struct search {
	struct thread *cur, *next; /* ntok + 1 threads each */
	unsigned int ncur;
	bool can_start; /* may a match start at the next byte? */
	bool single;	/* one start only, at the first byte */
	bool has_cand;
	uint64_t cur_gen; /* vm->gen when cur was built */
	uint64_t cand_start, cand_end;
};

enum {
	STEP_CAND = 1,	  /* a new candidate ends after this byte */
	STEP_DECIDED = 2, /* the search is decided */
};

static void search_init(struct search *s, struct thread *lists, bool single)
{
	s->cur = lists;
	s->next = lists + 0; /* set by the caller when it has two lists */
	s->ncur = 0;
	s->can_start = true;
	s->single = single;
	s->has_cand = false;
	s->cur_gen = 0;
}

/*
 * Search @s reads byte @c at offset @pos: a match may start there (lowest
 * priority: after every earlier start), then every thread reads it.  A
 * thread that completes beats every thread after it, which are dropped,
 * and ends the starts; when it is the first, nothing can beat it.
 * Returns STEP_* bits.
 */
static unsigned int search_byte(struct vm *vm, struct search *s, u8 c,
				uint64_t pos)
{
	const struct fsm *f = vm->f;
	struct thread *swap;
	unsigned int k, ret = 0;

	if (s->can_start) {
		if (s->cur_gen != vm->gen) {
			/* another search used the marks since cur was built:
			 * mark its threads again (closures done anew only add
			 * what they added before, so the list is the same) */
			vm->gen++;
			for (k = 0; k < s->ncur; k++)
				vm->seen_thread[s->cur[k].tok] = vm->gen;
		}
		vm->out = s->cur;
		vm->nout = s->ncur;
		enter(vm, 0, pos);
		s->ncur = vm->nout;
		s->can_start = !s->single && f->has_head &&
			       tok_accepts(&f->head, c);
	}

	vm->gen++;
	vm->out = s->next;
	vm->nout = 0;
	vm->done_at = UINT_MAX;
	for (k = 0; k < s->ncur; k++) {
		const struct thread *t = &s->cur[k];

		if (t->tok == f->ntok) {
			/* zero-width, entered at pos */
			s->has_cand = true;
			s->cand_start = t->start;
			s->cand_end = pos;
			s->can_start = false;
			ret = STEP_CAND;
			break;
		}
		if (tok_accepts(&f->tok[t->tok], c))
			advance(vm, t);
	}
	swap = s->cur;
	s->cur = s->next;
	s->next = swap;
	s->ncur = vm->nout;
	s->cur_gen = vm->gen;
	if (vm->done_at != UINT_MAX) {
		const struct thread *t = &s->cur[vm->done_at];

		s->has_cand = true;
		s->cand_start = t->start;
		s->cand_end = pos + 1;
		s->can_start = false;
		s->ncur = vm->done_at;
		ret = STEP_CAND;
	}
	if (!s->ncur && !s->can_start)
		ret |= STEP_DECIDED;
	return ret;
}

/* Bytes at the front of @p that a search with no thread at a possible
 * start passes over (see struct fsm). */
static size_t idle_run(const struct fsm *f, const u8 *p, size_t len)
{
	size_t i;

	if (f->idle_only >= 0) {
		const u8 *hit = memchr(p, f->idle_only, len);

		return hit ? (size_t)(hit - p) : len;
	}
	for (i = 0; i < len; i++)
		if (!((f->idle[p[i] >> 6] >> (p[i] & 63)) & 1))
			break;
	return i;
}

/* Lists and marks of up to this many tokens live on the stack. */
#define FSM_STACK_TOKENS 64

static unsigned int fsm_find(struct ts_config *conf, struct ts_state *state)
{
	const struct fsm *f = ts_config_priv(conf);
	struct thread stack_lists[2][FSM_STACK_TOKENS + 1];
	uint64_t stack_marks[2][FSM_STACK_TOKENS + 1];
	unsigned int stack_pending[FSM_STACK_TOKENS];
	unsigned int pos = state->offset, n, i, nslots = f->ntok + 1;
	struct thread *lists;
	struct search s;
	void *heap = NULL;
	struct vm vm;
	const u8 *block;

	if (f->ntok < FSM_STACK_TOKENS) {
		lists = stack_lists[0];
		vm.seen_entry = stack_marks[0];
		vm.seen_thread = stack_marks[1];
		vm.pending = stack_pending;
		memset(stack_marks, 0, sizeof(stack_marks));
	} else {
		size_t lsize, marks, total;

		/* ntok + 1 cannot wrap: ntok <= UINT_MAX / 4 */
		if (!ts_size_mul(nslots, 2 * sizeof(struct thread), &lsize) ||
		    !ts_size_mul(nslots, 2 * sizeof(uint64_t), &marks) ||
		    !ts_size_add(lsize, marks, &total) ||
		    !ts_size_add(total, (size_t)nslots * sizeof(unsigned int),
				 &total) ||
		    !(heap = calloc(1, total))) {
			errno = ENOMEM;
			return UINT_MAX;
		}
		/* marks first: they need the strictest alignment */
		vm.seen_entry = heap;
		vm.seen_thread = vm.seen_entry + nslots;
		lists = (struct thread *)(vm.seen_thread + nslots);
		vm.pending = (unsigned int *)(lists + 2 * nslots);
	}
	vm.f = f;
	vm.gen = 1;
	search_init(&s, lists, false);
	s.next = lists + nslots;
	s.cur_gen = vm.gen;

	for (;;) {
		n = conf->get_next_block(pos, &block, conf, state);
		if (n > UINT_MAX - pos)
			n = UINT_MAX - pos; /* stream offsets would wrap */
		if (!n)
			break; /* end of data: no match starts here */
		for (i = 0; i < n; i++) {
			if (!s.ncur && s.can_start) {
				size_t skip = idle_run(f, block + i, n - i);

				i += (unsigned int)skip;
				pos += (unsigned int)skip;
				if (i == n)
					break;
			}
			if (search_byte(&vm, &s, block[i], pos++) &
			    STEP_DECIDED)
				goto out;
		}
	}

out:
	free(heap);
	if (!s.has_cand)
		return UINT_MAX;
	state->offset = (unsigned int)s.cand_end;
	return (unsigned int)s.cand_start;
}

/* The bytes a start passes over without effect (struct fsm.idle). */
static void fsm_compute_idle(struct fsm *f)
{
	uint64_t first[4] = { 0, 0, 0, 0 };
	unsigned int i, k, n = 0;

	memset(f->idle, 0, sizeof(f->idle));
	f->idle_only = -1;
	for (i = 0; i < f->ntok; i++) {
		for (k = 0; k < 4; k++)
			first[k] |= f->tok[i].set[k];
		if (f->tok[i].recur != TS_FSM_PERHAPS &&
		    f->tok[i].recur != TS_FSM_ANY)
			break;
	}
	if (!f->has_head || i == f->ntok)
		return; /* no head, or every start matches at once */
	for (k = 0; k < 4; k++) {
		f->idle[k] = f->head.set[k] & ~first[k];
		n += (unsigned int)__builtin_popcountll(f->idle[k]);
	}
	if (n == 255)
		for (k = 0; k < 256; k++)
			if (!((f->idle[k >> 6] >> (k & 63)) & 1))
				f->idle_only = (int)k;
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
	fsm_compute_idle(f);
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

/* ---- push-mode streams ------------------------------------------------------
 *
 * A stream runs the searches find() and next() would run, at once, as the
 * bytes come, and never reads a byte twice, so it keeps no data at all.
 *
 * Without TS_OVERLAP the searches form a chain: when a search has a
 * candidate (s, e) but is not decided yet (an earlier-start or preferred
 * thread is still alive), the search that next() would run from e (s + 1
 * for a zero-width match) starts at once, on the same bytes; if the
 * candidate is beaten later, the chain after it is dropped and restarts
 * where the new candidate ends.  A search decided while one before it is
 * not keeps its result until then.
 *
 * With TS_OVERLAP next() restarts one byte after the last match's start,
 * which the stream cannot go back to, so it runs one search per start
 * instead (each with that start only: the result of the search from o is
 * the first start >= o with a match, and that start's own match), and
 * yields them in order.  Start p is searched at all if p is 0, or start
 * p - 1 matched, or p - 1 was searched and its byte is of the head class.
 *
 * Either way the searches in flight live in a ring of slots, each with room
 * for ntok + 1 threads twice, allocated with the stream: 2 * ntok + 8 for
 * a chain, as many as fit in 128 KiB (8 to 256) with TS_OVERLAP.  The ring
 * is bounded, and undecided starts are not: with TS_OVERLAP, a wildcard
 * head and "a", ALPHA*, DIGIT, each 'a' of a word starts a match that is
 * decided only by the word's end, and all must be remembered.  A stream
 * that needs more slots than it has fails with -ENOBUFS from next() (after
 * yielding the matches before) until reset.
 */

#define FSM_STREAM_BUDGET (128u * 1024) /* bytes of slots to aim at */
#define FSM_STREAM_MIN_SLOTS 8u
#define FSM_STREAM_MAX_SLOTS 256u

struct fsm_slot {
	struct search s;
	bool decided;
	bool head_byte; /* TS_OVERLAP: this start's byte is of the head class */
	bool via_head;	/* TS_OVERLAP: searched if the start before was */
};

struct fsm_stream {
	const struct fsm *f;
	struct vm vm;
	struct fsm_slot *slot;
	unsigned int cap, first, count;
	bool overlap;
	bool done;  /* the last search found nothing: no match ever again */
	bool ended; /* end() seen: every slot decided */
	int err;
	uint64_t pos; /* stream offset of the next byte */
	size_t used;  /* bytes of the current input read */
};

static size_t fsm_slot_bytes(const struct fsm *f)
{
	return sizeof(struct fsm_slot) +
	       2 * ((size_t)f->ntok + 1) * sizeof(struct thread);
}

static unsigned int fsm_stream_cap(const struct fsm *f, bool overlap)
{
	size_t n = FSM_STREAM_BUDGET / fsm_slot_bytes(f);

	/* a chain seldom holds more than 3 searches (the most seen in the
	 * random tests, long data included): an undecided one, one decided
	 * after it, and the next one */
	if (!overlap)
		return f->ntok < 124 ? 2 * f->ntok + 8 : FSM_STREAM_MAX_SLOTS;
	if (n < FSM_STREAM_MIN_SLOTS)
		return FSM_STREAM_MIN_SLOTS;
	return n > FSM_STREAM_MAX_SLOTS ? FSM_STREAM_MAX_SLOTS :
					  (unsigned int)n;
}

static size_t fsm_stream_size(struct ts_config *conf)
{
	const struct fsm *f = ts_config_priv(conf);
	size_t nslots = (size_t)f->ntok + 1, size, part;

	/* header, marks, slots with their threads, then pending */
	if (!ts_size_mul(nslots, 2 * sizeof(uint64_t), &size) ||
	    !ts_size_add(size, sizeof(struct fsm_stream), &size) ||
	    !ts_size_mul(fsm_slot_bytes(f),
			 fsm_stream_cap(f, conf->flags & TS_OVERLAP), &part) ||
	    !ts_size_add(size, part, &size) ||
	    !ts_size_add(size, nslots * sizeof(unsigned int), &size))
		return SIZE_MAX;
	return size;
}

static void fsm_stream_reset(struct ts_config *conf, void *state)
{
	const struct fsm *f = ts_config_priv(conf);
	struct fsm_stream *st = state;
	unsigned int nslots = f->ntok + 1, i;
	struct thread *lists;

	memset(st, 0, sizeof(*st));
	st->f = f;
	st->overlap = conf->flags & TS_OVERLAP;
	st->cap = fsm_stream_cap(f, st->overlap);
	st->vm.f = f;
	st->vm.gen = 1;
	st->vm.seen_entry = (uint64_t *)(st + 1);
	st->vm.seen_thread = st->vm.seen_entry + nslots;
	memset(st->vm.seen_entry, 0, 2 * (size_t)nslots * sizeof(uint64_t));
	st->slot = (struct fsm_slot *)(st->vm.seen_thread + nslots);
	lists = (struct thread *)(st->slot + st->cap);
	for (i = 0; i < st->cap; i++) {
		search_init(&st->slot[i].s, lists, st->overlap);
		st->slot[i].s.next = lists + nslots;
		lists += 2 * (size_t)nslots;
	}
	st->vm.pending = (unsigned int *)lists;
}

static struct fsm_slot *slot_at(struct fsm_stream *st, unsigned int i)
{
	unsigned int k = st->first + i;

	return &st->slot[k < st->cap ? k : k - st->cap];
}

/* A new search at the end of the ring, from the next byte on. */
static struct fsm_slot *slot_push(struct fsm_stream *st)
{
	struct fsm_slot *sl;
	struct thread *a, *b;

	if (st->count == st->cap) {
		st->err = -ENOBUFS;
		return NULL;
	}
	sl = slot_at(st, st->count++);
	a = sl->s.cur;
	b = sl->s.next;
	search_init(&sl->s, a < b ? a : b, st->overlap);
	sl->s.next = a < b ? b : a;
	sl->decided = false;
	sl->head_byte = false;
	sl->via_head = false;
	return sl;
}

/* Whether no search in flight has a thread and the next byte may start a
 * match in the first one: then idle_run() bytes change nothing. */
static bool stream_idle(struct fsm_stream *st)
{
	const struct fsm_slot *sl;

	if (st->overlap)
		return !st->count;
	sl = slot_at(st, 0);
	return st->count == 1 && !sl->s.ncur && sl->s.can_start;
}

static void stream_byte(struct fsm_stream *st, u8 c)
{
	const struct fsm *f = st->f;
	unsigned int k, r;

	if (st->overlap) {
		bool via_head = st->count &&
				slot_at(st, st->count - 1)->head_byte;
		struct fsm_slot *sl = slot_push(st);

		if (!sl)
			return;
		sl->via_head = via_head;
		sl->head_byte = f->has_head && tok_accepts(&f->head, c);
		for (k = 0; k < st->count; k++) {
			sl = slot_at(st, k);
			if (!sl->decided &&
			    (search_byte(&st->vm, &sl->s, c, st->pos) &
			     STEP_DECIDED))
				sl->decided = true;
		}
	} else {
		for (k = 0; k < st->count; k++) {
			struct fsm_slot *sl = slot_at(st, k);

			if (sl->decided)
				continue;
			r = search_byte(&st->vm, &sl->s, c, st->pos);
			if (r & STEP_DECIDED)
				sl->decided = true;
			if (r & STEP_CAND) {
				/* what next() would search after it */
				st->count = k + 1;
				slot_push(st);
				break;
			}
		}
	}
	st->pos++;
}

/* The next match of the first searches that are decided, if any. */
static bool stream_pop(struct fsm_stream *st, struct ts_match *m)
{
	while (st->count) {
		struct fsm_slot *sl = slot_at(st, 0);
		bool matched = sl->s.has_cand, go_on = matched;

		if (!sl->decided)
			return false;
		st->first = st->first + 1 < st->cap ? st->first + 1 : 0;
		st->count--;
		if (st->overlap && !matched)
			go_on = st->count ? slot_at(st, 0)->via_head :
					    sl->head_byte;
		if (!go_on) {
			st->done = true;
			st->count = 0;
		}
		if (matched) {
			m->start = sl->s.cand_start;
			m->end = sl->s.cand_end;
			m->id = 0;
			return true;
		}
	}
	return false;
}

static int fsm_stream_next(struct ts_config *conf, void *state,
			   const struct ts_stream_input *in, struct ts_match *m)
{
	struct fsm_stream *st = state;
	unsigned int k;

	(void)conf;
	for (;;) {
		if (st->err)
			return st->err;
		if (stream_pop(st, m))
			return 1;
		if (st->used == in->len) {
			if (in->end && !st->ended) {
				/* no byte will come: only candidates count */
				st->ended = true;
				for (k = 0; k < st->count; k++)
					slot_at(st, k)->decided = true;
				continue;
			}
			st->used = 0;
			return 0;
		}
		if (st->done) {
			st->pos += in->len - st->used;
			st->used = in->len;
			continue;
		}
		if (!st->overlap && !st->count && !slot_push(st))
			continue; /* the first search */
		if (stream_idle(st)) {
			size_t n = idle_run(st->f, in->data + st->used,
					    in->len - st->used);

			st->pos += n;
			st->used += n;
			if (st->used == in->len)
				continue;
		}
		stream_byte(st, in->data[st->used++]);
	}
}

static const struct ts_stream_ops fsm_stream_ops = {
	.state_size = fsm_stream_size,
	.reset = fsm_stream_reset,
	.next = fsm_stream_next,
};

struct ts_ops ts_fsm_ops = {
	.name = "fsm",
	.init = fsm_init,
	.find = fsm_find,
	.get_pattern = fsm_get_pattern,
	.get_pattern_len = fsm_get_pattern_len,
	.stream = &fsm_stream_ops,
};
