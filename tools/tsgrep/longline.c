/*
 * longline.c - a line longer than LONG_LINE, searched as it streams by.
 *
 * Holding such a line whole would make memory grow with it.  When the
 * output does not need it whole (-c -l -L -q -o, or a seekable file, from
 * which a printed long line is re-read with pread), only the tail that a
 * match could still straddle is kept: matches must start before the
 * scan limit, so every candidate lies wholly in the buffer.  Whether the
 * line is selected, and what that prints, is the engine's policy
 * (select_start() and friends in search.c), the same as for short lines.
 *
 * This is where a push-mode stream (textsearch_stream.h) would fit, and it
 * is not used: -o prints a match's bytes from the buffer, so the tail a
 * match may straddle must be kept here anyway; several configs (--algo
 * without sets) would need their streams' matches merged into grep's
 * leftmost-longest choice, which a stream per config cannot give without
 * TS_OVERLAP and a merge; and a stream adds an allocation, and its failure,
 * to what the limit below does in a few lines.
 */
#include <errno.h>
#include <unistd.h>

#include "engine.h"

int long_line_ok(const struct engine *eng)
{
	const struct tsg_cfg *cfg = eng->cfg;
	int printing;
	size_t i;

	if (!cfg->max_pat_len || (!cfg->npats && !cfg->match_all))
		return 0;
	/* -w and -x look at the bytes around a match: keep the line */
	if (cfg->word || cfg->line_x)
		return 0;
	for (i = 0; i < cfg->npats; i++)
		if (cfg->pats[i].anchored)
			return 0;
	printing = !cfg->quiet && cfg->list == TSG_LIST_NONE && !cfg->count;
	/* -B may print a long line before a later match: keep it whole */
	if (printing && cfg->before > 0)
		return 0;
	/* a re-read long line is printed without match colors: keep it */
	if (printing && cfg->color && !cfg->only)
		return 0;
	if (printing && (cfg->json || ((!cfg->only || cfg->invert ||
					cfg->before > 0 || cfg->after > 0) &&
				       !eng->seekable)))
		return 0;
	return 1;
}

/* Search the long line from where its search stopped up to @limit:
 * matches must start before @limit, so that every candidate is wholly in
 * the buffer, which holds the line up to @data_end. */
static void long_scan(struct engine *eng, size_t limit, size_t data_end)
{
	const struct tsg_cfg *cfg = eng->cfg;
	struct long_line *line = &eng->long_line;
	int printing = !cfg->quiet && cfg->list == TSG_LIST_NONE && !cfg->count;
	int only = printing && cfg->only && !cfg->invert;
	/* every match is wanted, not just whether there is one */
	int all = only || cfg->count_matches || cfg->stats;
	size_t pos, start, end;

	if (cfg->match_all)
		line->matched = 1;
	if (line->matched && !all) {
		line->scan = limit > line->scan ? limit : line->scan;
		return;
	}
	set_window(eng, data_end);
	pos = line->scan;
	while (pos < limit && !eng->stop) {
		start = next_match(eng, pos, &end);
		if (start == NO_MATCH || start >= limit)
			break;
		if (end == start) {
			pos = start + 1;
			continue;
		}
		line->matched = 1;
		line->nmatch++;
		if (only && !eng->binary) {
			out_head(cfg, eng->out, eng->name, line->lineno,
				 eng->base + start, ':');
			print_match_text(eng, start, end, 1);
			out_putc(eng->out, '\n');
			out_eol(cfg, eng->out);
		}
		if (!all) {
			pos = limit;
			break;
		}
		pos = end;
	}
	line->scan = pos > limit ? pos : limit;
}

/* Search what the buffer holds of the line, but for the last bytes a
 * match could still run past. */
static void long_scan_buffered(struct engine *eng)
{
	size_t longest = eng->cfg->max_pat_len;
	size_t scan = eng->long_line.scan;
	size_t limit = eng->len - scan >= longest ? eng->len - (longest - 1) :
						    scan;

	long_scan(eng, limit, eng->len);
	eng->pos = eng->long_line.scan;
}

void long_line_begin(struct engine *eng)
{
	struct long_line *line = &eng->long_line;

	line->active = 1;
	line->matched = 0;
	line->nmatch = 0;
	line->start = eng->base + eng->pos;
	line->lineno = eng->cfg->line_num ? lineno_at(eng, eng->pos) : 0;
	line->scan = eng->pos;
	long_scan_buffered(eng);
}

void long_line_continue(struct engine *eng)
{
	long_scan_buffered(eng);
}

/* Print the long line [start, end) of the file again, read with pread. */
static void print_long(struct engine *eng, uint64_t start, uint64_t end,
		       char sep)
{
	const struct tsg_cfg *cfg = eng->cfg;
	unsigned char tmp[65536];
	size_t want;
	ssize_t got;

	out_head(cfg, eng->out, eng->name, eng->long_line.lineno, start, sep);
	while (start < end) {
		want = end - start > sizeof(tmp) ? sizeof(tmp) :
						   (size_t)(end - start);
		got = pread(eng->fd, tmp, want, (off_t)start);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		out_put(eng->out, tmp, (size_t)got);
		start += (uint64_t)got;
	}
	out_putc(eng->out, '\n');
	out_eol(cfg, eng->out);
}

void long_line_finish(struct engine *eng, size_t le, size_t next)
{
	const struct tsg_cfg *cfg = eng->cfg;
	struct long_line *line = &eng->long_line;
	uint64_t end = eng->base + le;
	uint64_t matches;
	bool in_run;

	long_scan(eng, le, le);
	line->active = 0;
	/* after -m, only after-context is left: every line is context */
	if ((line->matched ^ cfg->invert) && !eng->maxed) {
		matches = select_counts_matches(cfg) ? line->nmatch : 0;
		if (!select_start(eng, matches))
			return;
		in_run = select_in_run(eng, line->start, next > le);
		select_group_sep(eng, line->start, in_run);
		eng->last_sel_end = eng->base + next;
		if (!cfg->only)
			print_long(eng, line->start, end, ':');
		eng->have_out = 1;
		eng->last_out_end = eng->base + next;
		eng->pending = cfg->after > 0 ? cfg->after : 0;
		select_end(eng);
		return;
	}
	if (eng->pending > 0 && !eng->binary) {
		if (!cfg->only)
			print_long(eng, line->start, end, '-');
		eng->have_out = 1;
		eng->last_out_end = eng->base + next;
		eng->pending--;
	}
	if (eng->maxed && eng->pending <= 0)
		eng->stop = 1;
}
