/*
 * tsgrep.h - shared definitions of tsgrep, a grep -F work-alike built on
 * libtextsearch.
 *
 * The pieces: main.c (options, patterns, exit status), walk.c (-r file
 * lists), jobs.c (worker threads), order.c (which file's output may be
 * written: argument order), search.c (the chunked line engine, with
 * select.c and longline.c behind engine.h), mapped.c (regular files
 * mapped, not read), output.c (output buffers, line heads, color, context
 * separators), json.c (--json).
 *
 * Everything in struct tsg_cfg is written once by main() before any worker
 * starts and is read-only afterwards, so workers share it without locks.
 */
#ifndef TSGREP_H
#define TSGREP_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include <textsearch.h>

#define TSG_PROG "tsgrep"

/* --binary-files */
enum tsg_binary {
	TSG_BIN_BINARY,
	TSG_BIN_TEXT,
	TSG_BIN_WITHOUT_MATCH,
};

/* -l and -L */
enum tsg_list {
	TSG_LIST_NONE,
	TSG_LIST_MATCHING,
	TSG_LIST_NONMATCHING,
};

struct tsg_pattern {
	struct ts_config *conf;
	/* -i in the C locale folds ASCII only, but TS_IGNORECASE also
	 * folds ISO-8859-1 letters: when a pattern has such bytes, conf
	 * finds every candidate (TS_OVERLAP) and these, the patterns by id,
	 * decide (search.c) */
	unsigned char **ascii_pats;
	unsigned int *ascii_lens;
	unsigned int ascii_n;
	/* an fsm pattern whose head does not skip any byte: it can only
	 * match from the start of a line (tsgrep's search offset) */
	int anchored;
};

/* SGR parameters of GREP_COLORS (defaults as GNU grep's). */
struct tsg_colors {
	char ms[32], mc[32], sl[32], cx[32], fn[32], ln[32], bn[32], se[32];
	int ne; /* omit the \33[K (erase to end of line) */
};

struct tsg_cfg {
	/* the matchers: one set config for all literal patterns, or one
	 * config per pattern (--fsm, or an --algo without sets) */
	struct tsg_pattern *pats;
	size_t npats;
	int match_all;	    /* an empty pattern was given: every line matches */
	int empty_pat;	    /* the same with -w or -x: an empty match, whose
			       place matters */
	size_t max_pat_len; /* longest match possible; 0 if unbounded (fsm) */
	int eol_in_pats;    /* a match may hold a newline or NUL (a line end
			       in a binary file): check that it stays in its
			       line */

	int word;   /* -w */
	int line_x; /* -x */

	int invert;	 /* -v */
	int count;	 /* -c */
	int only;	 /* -o */
	int byte_off;	 /* -b */
	int line_num;	 /* -n */
	int quiet;	 /* -q */
	int no_messages; /* -s */
	enum tsg_list list;
	/* 1 print names, 0 don't, -1 only once -r enters a directory */
	int with_fname;
	int null_after_name; /* -Z */
	int recursive;	     /* -r */
	int deref;	     /* -R */
	enum tsg_binary binary;
	long long before, after; /* -1: no context option given */
	long long max_count;	 /* -1: unlimited */
	int color;
	struct tsg_colors colors;
	int count_matches; /* --count-matches */
	int json;
	int stats;
	size_t block_size; /* 0: contiguous search of each window */
	size_t chunk;	   /* bytes read at a time */
	int jobs;
	int utf8; /* locale is UTF-8: lines with encoding errors are
			    binary, as GNU grep does */
	/* A single-byte locale other than C/POSIX (ISO-8859-x, KOI8-R,
	 * CP1251, ...): grep takes each byte for a character, and so do
	 * these tables of the locale, built once by main() (sbcs_init()). */
	int sbcs;
	unsigned char sb_fold[256]; /* toupper(): -i's folding */
	unsigned char sb_word[256]; /* -w: '_' or iswalnum() */
	unsigned char sb_bad[256];  /* no character here: an encoding error */
	int sb_has_bad;		    /* some byte is one */
	int sb_ascii_plain;	    /* sb_fold of ASCII is a-z to A-Z alone
				       (not in Turkish: i to İ) */
	/* -i in such a locale: sb_fold, which the patterns went through;
	 * the text is folded window by window into the worker's scratch
	 * and searched case-sensitively (search.c).  NULL otherwise. */
	const unsigned char *fold;
	int line_flush; /* flush after every output line */
	/* big files may be mapped: only in a run of one file, as ripgrep
	 * does; with many, the mappings' setup and teardown (and, with -j,
	 * the TLB shootdowns between workers) cost more than reads */
	int map_files;
};

/* ---- output (output.c) ---- */

struct tsg_order;

/* Output of one file: written straight to stdout while it is the oldest
 * unfinished one, buffered otherwise (see order.c). */
struct tsg_out {
	struct tsg_order *order; /* NULL: not ordered, written as it comes */
	size_t idx;		 /* the file's place in argument order */
	char *buf;
	size_t len, cap;
	int direct;
	/* stderr messages kept in order with the buffered stdout bytes */
	struct tsg_msg *msgs;
	size_t nmsgs, capmsgs;
	int lead_sep; /* first group of this file wants "--" if anything
			  was output before it (decided in order) */
	int used;     /* this file selected a line in printing mode */
	int done;     /* the file is searched (set under the order's lock) */
	/* A range of a file (tsgrep-mpi) cannot know its first line's
	 * number: with line_slots, line numbers are not written but kept
	 * here, relative to the range, for the whole file's output to be
	 * put together with them (out_lineno()). */
	int line_slots;
	struct tsg_slot *slots;
	size_t nslots, capslots;
};

struct tsg_msg {
	size_t at;
	char *text;
};

struct tsg_slot {
	size_t at;
	uint64_t lineno;
};

void out_put(struct tsg_out *out, const void *data, size_t len);
void out_putc(struct tsg_out *out, char ch);
void out_puts(struct tsg_out *out, const char *str);
void out_eol(const struct tsg_cfg *cfg, struct tsg_out *out);
void out_error(struct tsg_out *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A message of @len bytes to stderr, in order with the output. */
void out_msg(struct tsg_out *out, const char *text, size_t len);
void out_binary_matches(struct tsg_out *out, const char *name);
/* -c's line: the name if shown, then @count. */
void out_count(const struct tsg_cfg *cfg, struct tsg_out *out, const char *name,
	       uint64_t count);
/* A line number (written, or kept in a slot: see line_slots). */
void out_lineno(struct tsg_out *out, uint64_t lineno);
/* Write everything buffered to the real streams (caller owns stdout). */
void out_drain(struct tsg_out *out);
/* Write what the shared stdout buffer holds (by the file that may write,
 * or once every worker is done). */
void out_flush_stdout(void);
void out_free(struct tsg_out *out);
void out_write_fd(int fd, const void *data, size_t len);

void out_sgr_start(const struct tsg_cfg *cfg, struct tsg_out *out,
		   const char *sgr);
void out_sgr_end(const struct tsg_cfg *cfg, struct tsg_out *out,
		 const char *sgr);
void out_filename(const struct tsg_cfg *cfg, struct tsg_out *out,
		  const char *name);
void out_sep(const struct tsg_cfg *cfg, struct tsg_out *out, char sep);
void out_head(const struct tsg_cfg *cfg, struct tsg_out *out, const char *name,
	      uint64_t lineno, uint64_t off, char sep);
void out_group_sep(const struct tsg_cfg *cfg, struct tsg_out *out);
void colors_init(struct tsg_colors *colors, const char *env);

/* ---- output order (order.c) ---- */

struct tsg_filelist;

/* The files' outputs of one run, and which of them may write now.  The
 * list grows while the run goes on (the walk feeds it); an output is the
 * one of its file in the list. */
struct tsg_order {
	const struct tsg_cfg *cfg;
	struct tsg_filelist *list;
	atomic_size_t head; /* the oldest unfinished file */
	pthread_mutex_t lock;
	pthread_cond_t head_moved;
	int used; /* some file selected a line in printing mode (grep's
		      "used": the next group gets a "--" before it) */
	/* -q: index of the first file that matched (SIZE_MAX if none);
	 * files after it stop and print nothing, as grep exits there */
	_Atomic size_t quit_at;
};

void order_init(struct tsg_order *order, const struct tsg_cfg *cfg,
		struct tsg_filelist *list);
void order_destroy(struct tsg_order *order);
/* May this file write yet: called at the end of each output line, it
 * lets a buffering file write directly as soon as the files before it
 * are done, and waits while its buffer is full, which bounds memory. */
void order_output_point(struct tsg_out *out);
/* Wait until every earlier file is done (stdin named twice is read by
 * one worker after the other, as grep reads it). */
void order_wait_turn(struct tsg_out *out);
/* The group separator before a file's first group: written if anything
 * was printed before it in argument order (decided when known). */
void order_lead_sep(struct tsg_out *out, const struct tsg_cfg *cfg);
/* The file is searched: write what is due, in order. */
void order_finish(struct tsg_out *out);
/* -q: whether an earlier file matched, ending the run before this one. */
int order_quit_before(const struct tsg_out *out);
/* -q: this file matched. */
void order_quit_at(struct tsg_out *out);

/* ---- search (search.c) ---- */

struct tsg_file_stats {
	uint64_t bytes, lines, matches;
};

/* A worker's buffer, kept from file to file: a fresh one per file cost a
 * heap trim and page faults every time. */
struct tsg_scratch {
	unsigned char *buf;
	size_t cap;
	struct match_cache *cache; /* one per pattern (engine.h) */
	unsigned char *fold;	   /* cfg->fold: the window, folded */
	size_t fold_cap;
};

/* A worker's scratch before its first file, and what frees it after its
 * last (search.c). */
#define TSG_SCRATCH_INIT ((struct tsg_scratch){ .buf = NULL })
void tsg_scratch_free(struct tsg_scratch *s);

/*
 * A range of a regular file, searched on its own (tsgrep-mpi): the lines
 * that start in [start, limit).  start is a multiple of cfg->chunk, so
 * reads fall where they fall for the whole file, and a NUL makes the rest
 * binary from the same read.  The line that crosses start belongs to the
 * range before; the last line may end past limit.  Its output has no -c
 * line or "binary file matches" message (the whole file's), and its line
 * numbers are in slots, counted from 1 at its first line.
 */
struct tsg_range {
	uint64_t start, limit;
	int binary; /* the file turned binary before start */
	/* what the search found */
	int binary_after; /* ... or before limit, so it is for the next */
	int binary_matched;
	int stopped; /* at a match in binary data: the file ends here */
	uint64_t nmatch;
	uint64_t newlines; /* in its lines (only with -n or --json) */
};

/* What search_fd() is told about its input. */
struct tsg_input {
	int fd;
	const struct stat *st; /* fstat() of fd, NULL if it failed */
	int at_start;	       /* tsgrep opened it: its offset is 0 */
	const char *name;      /* what output shows */
	int show_name;
	struct tsg_range *range; /* NULL: the whole file */
};

/* Search one open descriptor.  Returns the number of selected lines, or
 * -1 after a read error (reported). */
long long search_fd(const struct tsg_cfg *cfg, struct tsg_out *out,
		    const struct tsg_input *in, struct tsg_scratch *scratch,
		    struct tsg_file_stats *st);

/* ---- mapped files (mapped.c) ---- */

struct tsg_map {
	unsigned char *base;
	size_t size;
	size_t dropped; /* pages before base + dropped are gone */
	int fd;
	unsigned long faults_seen;
};

/* Map @fd (whose fstat() is @st, and whose offset is 0 if @at_start) if
 * it is a regular file worth mapping, read from its start: 1 if mapped
 * (then @map->base holds the whole file as it is now; what is appended
 * later is read), 0 to read it instead. */
int tsg_map_open(struct tsg_map *map, int fd, const struct stat *st,
		 int at_start);
/* The engine no longer needs the bytes before @pos: let their pages go. */
void tsg_map_drop_before(struct tsg_map *map, const unsigned char *pos);
/* Whether the file shrank under the mapping (its lost pages read as
 * zeros): then its contents cannot be trusted. */
int tsg_map_shrunk(struct tsg_map *map);
/* Unmap (@map->size stays set, so tsg_map_shrunk() still answers). */
void tsg_map_close(struct tsg_map *map);

/* ---- json (json.c) ---- */

void json_match(struct tsg_out *out, const char *path, uint64_t lineno,
		uint64_t off, const unsigned char *line, size_t len,
		const size_t *sub, size_t nsub);
int utf8_valid(const unsigned char *text, size_t len);

/* ---- files (walk.c) and jobs (jobs.c) ---- */

struct tsg_file {
	char *path;    /* what to open; "-" is stdin */
	char *display; /* what to print */
	int show_name;
	int error;	  /* errno found while walking (reported in order) */
	int is_dir_error; /* a directory given without -r */
	int is_loop;	  /* a directory loop met by -R: a warning */
	struct tsg_range *range; /* tsgrep-mpi: only this range of it */
	/* the search of it (jobs.c) */
	struct tsg_out out;
	long long nsel;
	int err;
	struct tsg_file_stats stats;
};

/* Files in blocks that never move, so that workers read the entries
 * published so far while the walk adds more. */
#define TSG_BLOCK_BITS 12
#define TSG_BLOCKS 65536

struct tsg_filelist {
	struct tsg_file **blocks; /* TSG_BLOCKS of them, allocated as used */
	atomic_size_t n;	  /* entries published */
};

static inline struct tsg_file *filelist_at(const struct tsg_filelist *list,
					   size_t idx)
{
	return &list->blocks[idx >> TSG_BLOCK_BITS]
			    [idx & ((1u << TSG_BLOCK_BITS) - 1)];
}

void filelist_init(struct tsg_filelist *list);
void filelist_free(struct tsg_filelist *list);

/*
 * The walk: operands turned into files, directories (-r) read depth first
 * with entries sorted by name, a step at a time, by whichever worker runs
 * out of files, so that reading directories overlaps with searching.
 */
struct tsg_walk;

struct tsg_walk *walk_start(const struct tsg_cfg *cfg,
			    struct tsg_filelist *list, char **operands,
			    int count, int implicit_dot);
/* Add the next entries to the list (published as they come): false once
 * the walk is over. */
bool walk_more(struct tsg_walk *walk);
void walk_free(struct tsg_walk *walk);

struct tsg_result {
	int any_selected;
	int any_error;
	uint64_t bytes, files, matches, lines;
};

void run_jobs(const struct tsg_cfg *cfg, struct tsg_filelist *list,
	      struct tsg_walk *walk, struct tsg_result *res);

/*
 * One file of the list into file->out, as grep treats it: a loop's
 * warning, the walk's or open's error, the search, -l/-L's name; sets
 * file->err and file->nsel and returns the lines selected.  With an order
 * (file->out.order), standard input waits for its turn.
 */
long long tsg_search_file(const struct tsg_cfg *cfg, struct tsg_file *file,
			  struct tsg_scratch *scratch);

/* Add up the files' results into @res, once they are all done; an error
 * counts only in the files before @quit_at (where -q stopped). */
void tsg_sum_results(struct tsg_filelist *list, size_t quit_at,
		     struct tsg_result *res);

#endif
