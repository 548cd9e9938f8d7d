/*
 * select.c - what the engine does with a line: the selection policy that
 * short and long lines share (grep's prtext: counts, -q -l -L -c -m,
 * binary files, group separators), and the printing of short lines with
 * their context (grep's prline), --color and --json included.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

static int in_line(size_t ms, size_t me, size_t le)
{
	return ms != NO_MATCH && (ms < le || (ms == le && me == ms));
}

/* The next non-empty match [*ms, *me) of the line ending at @le, searching
 * from *pos (which then moves past the match); 0 when there is none.
 * Empty matches (an empty pattern) select a line but print and count
 * nothing. */
static int next_line_match(struct engine *eng, size_t *pos, size_t le,
			   size_t *ms, size_t *me)
{
	while (*pos <= le) {
		*ms = next_match(eng, *pos, me);
		if (!in_line(*ms, *me, le))
			return 0;
		if (*me != *ms) {
			*pos = *me;
			return 1;
		}
		*pos = *ms + 1;
	}
	return 0;
}

void print_match_text(struct engine *eng, size_t start, size_t end,
		      int selected)
{
	const struct tsg_cfg *cfg = eng->cfg;
	const char *sgr = selected ? cfg->colors.ms : cfg->colors.mc;

	if (cfg->color && *sgr) {
		out_sgr_start(cfg, eng->out, sgr);
		out_put(eng->out, eng->buf + start, end - start);
		out_sgr_end(cfg, eng->out, sgr);
	} else {
		out_put(eng->out, eng->buf + start, end - start);
	}
}

/* Whether @len bytes at @p are characters of the locale (a line with
 * an encoding error is withheld, as grep does): UTF-8, or in a
 * single-byte locale no byte that is no character there. */
static bool text_valid(const struct tsg_cfg *cfg, const unsigned char *p,
		       size_t len)
{
	if (cfg->utf8)
		return utf8_valid(p, len);
	for (size_t i = 0; i < len; i++)
		if (cfg->sb_bad[p[i]])
			return false;
	return true;
}

/* grep's prline: a selected (':') or context ('-') line.  Returns 0 when
 * it was withheld because of an encoding error (GNU grep then reports the
 * file as binary at its end), without counting it as output. */
static int print_line(struct engine *eng, size_t ls, size_t le, size_t next,
		      char sep)
{
	const struct tsg_cfg *cfg = eng->cfg;
	int selected = sep == ':';
	int matching = selected ^ cfg->invert;
	int check = (cfg->utf8 || cfg->sb_has_bad) &&
		    cfg->binary != TSG_BIN_TEXT;
	uint64_t lineno = cfg->line_num ? lineno_at(eng, ls) : 0;
	const char *sgr = selected ? cfg->colors.ms : cfg->colors.mc;
	size_t pos = ls, ms, me;

	if (cfg->only) {
		/* -o prints each match with its own head; lines that do not
		 * match print nothing. */
		while (matching && next_line_match(eng, &pos, le, &ms, &me)) {
			if (check && !text_valid(cfg, eng->buf + ms, me - ms)) {
				eng->enc_err = 1;
				return 0;
			}
			out_head(cfg, eng->out, eng->name, lineno,
				 eng->base + ms, sep);
			print_match_text(eng, ms, me, selected);
			out_putc(eng->out, '\n');
			out_eol(cfg, eng->out);
		}
		eng->have_out = 1;
		eng->last_out_end = eng->base + next;
		return 1;
	}

	if (check && !text_valid(cfg, eng->buf + ls, le - ls)) {
		eng->enc_err = 1;
		return 0;
	}
	out_head(cfg, eng->out, eng->name, lineno, eng->base + ls, sep);
	if (cfg->color && matching && *sgr && cfg->npats) {
		while (pos <= le) {
			ms = next_match(eng, pos, &me);
			if (!in_line(ms, me, le))
				break;
			if (me == ms) {
				/* empty matches color nothing */
				if (ms == le)
					break;
				out_put(eng->out, eng->buf + pos, ms + 1 - pos);
				pos = ms + 1;
				continue;
			}
			out_put(eng->out, eng->buf + pos, ms - pos);
			print_match_text(eng, ms, me, selected);
			pos = me;
		}
		out_put(eng->out, eng->buf + pos, le - pos);
	} else {
		out_put(eng->out, eng->buf + ls, le - ls);
	}
	/* grep ends every output line with a newline, even the last line of
	 * a file that has none */
	out_putc(eng->out, '\n');
	out_eol(cfg, eng->out);
	eng->have_out = 1;
	eng->last_out_end = eng->base + next;
	return 1;
}

/* Lowest buffer position that -B may still print from. */
size_t context_floor(const struct engine *eng)
{
	if (eng->have_out && eng->last_out_end >= eng->base)
		return (size_t)(eng->last_out_end - eng->base);
	return 0;
}

/* Lines of [from, to) that are not selected: after-context, if pending. */
void context_lines(struct engine *eng, size_t from, size_t to)
{
	size_t le, next;

	while (from < to && eng->pending > 0 && !eng->binary && !eng->stop) {
		le = line_end(eng, from, to);
		next = le < to ? le + 1 : to;
		/* grep retries a withheld line for every pending context
		 * line: the rest of the context is lost with it */
		if (!print_line(eng, from, le, next, '-'))
			eng->pending = 1;
		eng->pending--;
		from = next;
	}
}

static uint64_t matches_in_line(struct engine *eng, size_t ls, size_t le)
{
	uint64_t count = 0;
	size_t pos = ls, ms, me;

	if (!eng->cfg->npats && !eng->cfg->empty_pat)
		return eng->cfg->match_all ? 1 : 0;
	while (next_line_match(eng, &pos, le, &ms, &me))
		count++;
	/* a line selected by an empty match counts one */
	if (!count && !eng->cfg->invert &&
	    (eng->cfg->match_all || eng->cfg->empty_pat))
		count = 1;
	return count;
}

static void json_line(struct engine *eng, size_t ls, size_t le, size_t next)
{
	const struct tsg_cfg *cfg = eng->cfg;
	size_t pos = ls, ms, me, cap;
	size_t *subs;

	eng->nsubs = 0;
	while (!cfg->invert && cfg->npats &&
	       next_line_match(eng, &pos, le, &ms, &me)) {
		if (eng->nsubs + 2 > eng->capsubs) {
			cap = eng->capsubs ? eng->capsubs * 2 : 16;
			subs = realloc(eng->subs, cap * sizeof(*subs));
			if (!subs)
				break;
			eng->subs = subs;
			eng->capsubs = cap;
		}
		eng->subs[eng->nsubs++] = ms - ls;
		eng->subs[eng->nsubs++] = me - ls;
	}
	/* "lines" keeps the newline, as ripgrep's does */
	json_match(eng->out, eng->label, lineno_at(eng, ls), eng->base + ls,
		   eng->buf + ls, next - ls, eng->subs, eng->nsubs / 2);
	out_eol(cfg, eng->out);
}

/* -v: whether the line at @next is selected too (grep prints such runs of
 * lines with one call). */
static int run_goes_on(struct engine *eng, size_t next)
{
	const struct tsg_cfg *cfg = eng->cfg;
	size_t le, ms, me;

	if (next >= eng->rend || cfg->match_all)
		return 0;
	if (cfg->max_count >= 0 && eng->nsel >= cfg->max_count)
		return 0;
	le = line_end(eng, next, eng->rend);
	ms = next_match(eng, next, &me);
	return !in_line(ms, me, le);
}

/* See the quirk in select_line(). */
static void rewind_context(struct engine *eng, size_t ls)
{
	long long left;
	size_t pos, le;

	if (eng->have_out) {
		if (eng->last_out_end < eng->base)
			return;
		pos = (size_t)(eng->last_out_end - eng->base);
	} else {
		if (eng->base)
			return;
		pos = 0;
		eng->have_out = 1; /* grep's lastout = bufbeg */
		eng->last_out_end = 0;
	}
	for (left = eng->cfg->after; left > 0 && pos < ls; left--) {
		le = line_end(eng, pos, ls);
		if (!print_line(eng, pos, le, le + 1, '-'))
			break;
		pos = le + 1;
	}
}

/* ---- the selection policy, shared with longline.c ---- */

/* Whether select_start() wants the line's matches counted. */
bool select_counts_matches(const struct tsg_cfg *cfg)
{
	return !cfg->quiet && cfg->list == TSG_LIST_NONE &&
	       (cfg->count_matches || cfg->stats);
}

/* -m reached: as grep, the after-context of the last line still comes,
 * every line of it as context. */
static void select_check_max(struct engine *eng)
{
	const struct tsg_cfg *cfg = eng->cfg;

	if (cfg->max_count < 0 || eng->nsel < cfg->max_count)
		return;
	if (eng->pending > 0)
		eng->maxed = 1;
	else
		eng->stop = 1;
}

/*
 * Count a selected line; stop where -q, -l or -L say so, and at the first
 * match of a binary file (grep reports it at the end instead of printing
 * it).  True when the line is to be shown (printed, or --json).
 * @matches: its matches, 0 unless select_counts_matches().
 */
bool select_start(struct engine *eng, uint64_t matches)
{
	const struct tsg_cfg *cfg = eng->cfg;

	eng->nsel++;
	if (cfg->quiet || cfg->list != TSG_LIST_NONE) {
		eng->stop = 1;
		return false;
	}
	eng->nmatch += matches;
	if (cfg->count) {
		select_check_max(eng);
		return false;
	}
	if (eng->binary) {
		eng->used = 1;
		eng->binary_matched = 1;
		eng->stop = 1;
		return false;
	}
	return true;
}

/* With -v, grep prints a run of selected lines as one group: no
 * separator inside it, even after a withheld line.  grep reads a last
 * line without newline apart: it starts a new group. */
bool select_in_run(const struct engine *eng, uint64_t start, bool has_newline)
{
	return eng->cfg->invert && eng->used && start == eng->last_sel_end &&
	       has_newline;
}

/* The "--" before a group starting at file offset @start, unless the
 * group goes on from the last line printed. */
void select_group_sep(struct engine *eng, uint64_t start, bool in_run)
{
	const struct tsg_cfg *cfg = eng->cfg;

	if ((cfg->before < 0 && cfg->after < 0) || in_run)
		return;
	if (!eng->used)
		order_lead_sep(eng->out, cfg);
	else if (!eng->have_out || start != eng->last_out_end)
		out_group_sep(cfg, eng->out);
}

/* The selected line is printed (or withheld), and eng->pending set. */
void select_end(struct engine *eng)
{
	eng->used = 1;
	select_check_max(eng);
}

/* A selected line: grep's prtext for one line, with -B context before it
 * and the group separator. */
void select_line(struct engine *eng, size_t ls, size_t le, size_t next)
{
	const struct tsg_cfg *cfg = eng->cfg;
	uint64_t matches = 0;
	size_t group, lo, gle;
	long long count;
	bool in_run;

	if (select_counts_matches(cfg))
		matches = matches_in_line(eng, ls, le);
	if (!select_start(eng, matches))
		return;
	if (cfg->json) {
		json_line(eng, ls, le, next);
		select_check_max(eng);
		return;
	}
	group = ls;
	lo = context_floor(eng);
	for (count = 0; count < cfg->before && group > lo; count++)
		group = line_start(eng, group - 1, lo);
	in_run = select_in_run(eng, eng->base + ls, next > le);
	select_group_sep(eng, eng->base + group, in_run);
	while (group < ls) {
		gle = line_end(eng, group, ls);
		print_line(eng, group, gle, gle + 1, '-');
		group = gle + 1;
	}
	/* a withheld line (encoding error) takes its after-context with
	 * it, as in grep */
	eng->last_sel_end = eng->base + next;
	if (print_line(eng, ls, le, next, ':')) {
		eng->pending = cfg->after > 0 ? cfg->after : 0;
	} else {
		/* GNU grep 3.8 quirk, reproduced for byte-identical output:
		 * the after-context of a withheld line restarts where the
		 * last printed line ended (the start of the file if none),
		 * up to the withheld line, unless a -v run goes on */
		if (cfg->after > 0 && !(cfg->invert && run_goes_on(eng, next)))
			rewind_context(eng, ls);
		eng->pending = 0;
	}
	select_end(eng);
}
