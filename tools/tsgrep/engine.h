/*
 * engine.h - the line engine's state, shared by search.c (reads, windows
 * of whole lines, matches), select.c (what a selected line does) and
 * longline.c (a line too long to hold, searched as it streams by).  Not
 * for the rest of tsgrep: it calls search_fd().
 */
#ifndef TSGREP_ENGINE_H
#define TSGREP_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tsgrep.h"

#define NO_MATCH SIZE_MAX

/* A line past this is searched as it streams by, when it may be. */
#define LONG_LINE (1024 * 1024)

/* Per matcher: its next match at or after @from, for the window. */
struct match_cache {
	size_t start, end; /* start is NO_MATCH if there is none */
	size_t from;
	int valid;
};

/*
 * A line longer than LONG_LINE, searched as it streams by: only its
 * unsearched tail is kept, and it is re-read with pread() if printed.
 */
struct long_line {
	int active;
	int matched;
	uint64_t start; /* file offset of its first byte */
	uint64_t lineno;
	uint64_t nmatch;
	size_t scan; /* buffer position searched up to */
};

struct engine {
	const struct tsg_cfg *cfg;
	struct tsg_out *out;
	const char *name;  /* shown before lines, NULL if not */
	const char *label; /* for messages and --json */
	int fd;
	int seekable;
	int regular;		     /* a regular file: reads never wait */
	struct tsg_scratch *scratch; /* the worker's buffer, which buf is
				       when the file is read */
	unsigned char *buf;
	size_t cap, len;
	size_t pos;    /* where the unsearched lines start */
	size_t rend;   /* end of the window being searched */
	uint64_t base; /* file offset of buf[0] */
	size_t lnpos;  /* lnnum is the number of the line at lnpos */
	uint64_t lnnum;
	int have_out; /* a line of this file was printed */
	uint64_t last_out_end;
	uint64_t last_sel_end; /* end of the last selected line */
	long long pending;     /* after-context lines still to print */
	long long nsel;
	uint64_t nmatch;
	int stop, used, binary, binary_matched, enc_err;
	int maxed; /* -m reached: only after-context is left to print */
	struct match_cache *cache;
	struct long_line long_line;
	size_t *subs; /* --json submatch offsets */
	size_t nsubs, capsubs;
	/* a mapped file: buf points into it and moves on instead of
	 * memmove()ing, reads hand out the next slice of the mapping */
	struct tsg_map map;
	int mapped, shrunk;
	size_t map_off; /* bytes of the mapping given to the engine */
	/* file offsets [fold_lo, fold_hi) are folded in scratch->fold */
	uint64_t fold_lo, fold_hi;
	/* a range of the file (tsgrep.h), NULL for all of it */
	struct tsg_range *range;
	int skipping;	      /* in the line that crosses the range's start */
	uint64_t binary_from; /* file offset of the read that had a NUL */
};

/* Whether @ch ends a line: a newline, or a NUL in a binary file (as in
 * grep, which rewrites NULs to newlines in its own buffer; tsgrep's may
 * be the file's mapped pages, which are never written). */
static inline bool is_eol(const struct engine *eng, unsigned char ch)
{
	return ch == '\n' || (!ch && eng->binary);
}

/* ---- search.c ---- */

/* The window is [.., @rend): forget the cached matches of the last one. */
void set_window(struct engine *eng, size_t rend);
/* Leftmost match from @from (the longest of those starting there), or
 * NO_MATCH; *@end is its end.  With -w, the first whole-word match as
 * grep finds it; with -x, the first whole line that is a pattern. */
size_t next_match(struct engine *eng, size_t from, size_t *end);
size_t line_start(const struct engine *eng, size_t pos, size_t lo);
size_t line_end(const struct engine *eng, size_t from, size_t hi);
uint64_t lineno_at(struct engine *eng, size_t pos);

/* ---- select.c ---- */

void print_match_text(struct engine *eng, size_t start, size_t end,
		      int selected);
/* Lowest buffer position that -B may still print from. */
size_t context_floor(const struct engine *eng);
/* Lines of [from, to) that are not selected: after-context, if pending. */
void context_lines(struct engine *eng, size_t from, size_t to);
/* The line [ls, le) is selected; the next one starts at @next. */
void select_line(struct engine *eng, size_t ls, size_t le, size_t next);

/*
 * The policy for a selected line, the same for short and long lines
 * (grep's prtext): select_start() counts it and says whether it is to be
 * shown; the caller then calls select_group_sep(), prints it, and calls
 * select_end().
 */
bool select_counts_matches(const struct tsg_cfg *cfg);
bool select_start(struct engine *eng, uint64_t matches);
bool select_in_run(const struct engine *eng, uint64_t start, bool has_newline);
void select_group_sep(struct engine *eng, uint64_t start, bool in_run);
void select_end(struct engine *eng);

/* ---- longline.c ---- */

/* Whether the line starting at eng->pos may be searched as it streams by
 * (the output does not need it whole). */
int long_line_ok(const struct engine *eng);
/* Start searching the line at eng->pos as a long line. */
void long_line_begin(struct engine *eng);
/* Search what came of it since. */
void long_line_continue(struct engine *eng);
/* It ends at buffer position @le (its newline, or the end of the file);
 * the next line starts at @next. */
void long_line_finish(struct engine *eng, size_t le, size_t next);

#endif
