/*
 * walk.c - turn file operands into the list of files to search.
 *
 * -r visits a directory's entries sorted by name (strcmp, i.e. byte order)
 * and depth first, so the output order is the same on every file system
 * and every run (GNU grep uses the directory's own order).  Symbolic links
 * met while recursing are skipped (followed with -R), as are devices,
 * FIFOs and sockets; operands are always followed.
 *
 * The walk runs a step at a time (walk_more()), called by whichever worker
 * has no file left to search (jobs.c), so directories are read while other
 * workers search: the list is published as it grows, in output order.
 * An entry's type comes from readdir's d_type: a file costs no stat() here
 * (the search's one fstat() says the rest), a directory one fstat() for
 * the loop check; only a file system without d_type, or a symbolic link
 * under -R, costs a stat().
 */
#define _DEFAULT_SOURCE /* d_type, DT_* */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tsgrep.h"

/* Files added by one walk_more() before it lets the caller search. */
#define WALK_BATCH 64

static void out_of_memory(void)
{
	out_write_fd(2, TSG_PROG ": out of memory\n", 23);
	exit(2);
}

static char *xstrdup(const char *str)
{
	char *copy = strdup(str);

	if (!copy)
		out_of_memory();
	return copy;
}

void filelist_init(struct tsg_filelist *list)
{
	list->blocks = calloc(TSG_BLOCKS, sizeof(*list->blocks));
	if (!list->blocks)
		out_of_memory();
	atomic_init(&list->n, 0);
}

void filelist_free(struct tsg_filelist *list)
{
	size_t count = atomic_load(&list->n), i;
	struct tsg_file *file;

	for (i = 0; i < count; i++) {
		file = filelist_at(list, i);
		free(file->path);
		free(file->display);
	}
	for (i = 0; i < TSG_BLOCKS && list->blocks[i]; i++)
		free(list->blocks[i]);
	free(list->blocks);
}

/* Only the walk adds (under its lock); workers read what is published. */
static struct tsg_file *filelist_add(struct tsg_filelist *list,
				     const char *path, const char *display,
				     int show_name, int error)
{
	size_t idx = atomic_load_explicit(&list->n, memory_order_relaxed);
	size_t block = idx >> TSG_BLOCK_BITS;
	struct tsg_file *file;

	if (block >= TSG_BLOCKS)
		out_of_memory();
	if (!list->blocks[block]) {
		list->blocks[block] = calloc((size_t)1 << TSG_BLOCK_BITS,
					     sizeof(struct tsg_file));
		if (!list->blocks[block])
			out_of_memory();
	}
	file = filelist_at(list, idx);
	file->path = xstrdup(path);
	file->display = xstrdup(display);
	file->show_name = show_name;
	file->error = error;
	file->out.idx = idx;
	return file;
}

static void publish(struct tsg_filelist *list)
{
	atomic_fetch_add_explicit(&list->n, 1, memory_order_release);
}

/* dir + "/" + name, without doubling a trailing slash (as fts does) */
static char *join(const char *dir, const char *name)
{
	size_t dir_len = strlen(dir), name_len = strlen(name);
	char *path = malloc(dir_len + name_len + 2);

	if (!path)
		out_of_memory();
	memcpy(path, dir, dir_len);
	if (!dir_len || dir[dir_len - 1] != '/')
		path[dir_len++] = '/';
	memcpy(path + dir_len, name, name_len + 1);
	return path;
}

struct entry {
	char *name;
	unsigned char type; /* d_type */
};

/* A directory being walked: its sorted entries and the next one. */
struct frame {
	char *path, *display;
	struct entry *entries;
	size_t count, next;
	dev_t dev;
	ino_t ino;
	int depth;
};

struct tsg_walk {
	const struct tsg_cfg *cfg;
	struct tsg_filelist *list;
	char **operands;
	int noperands, next_operand, implicit_dot;
	struct frame *stack;
	size_t depth, cap;
	size_t added; /* files added by this walk_more() */
};

static void add(struct tsg_walk *walk, const char *path, const char *display,
		int show_name, int error)
{
	filelist_add(walk->list, path, display, show_name, error);
	publish(walk->list);
	walk->added++;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->name,
		      ((const struct entry *)b)->name);
}

/* The entries of @dir but "." and "..", sorted by name; *@count of them. */
static struct entry *read_entries(DIR *dir, size_t *count)
{
	struct entry *entries = NULL, *grown;
	size_t len = 0, cap = 0;
	struct dirent *ent;

	while ((ent = readdir(dir))) {
		if (ent->d_name[0] == '.' &&
		    (!ent->d_name[1] ||
		     (ent->d_name[1] == '.' && !ent->d_name[2])))
			continue;
		if (len == cap) {
			cap = cap ? cap * 2 : 32;
			grown = realloc(entries, cap * sizeof(*grown));
			if (!grown)
				out_of_memory();
			entries = grown;
		}
		entries[len].name = xstrdup(ent->d_name);
		entries[len++].type = ent->d_type;
	}
	if (len)
		qsort(entries, len, sizeof(*entries), by_name);
	*count = len;
	return entries;
}

/* Whether the directory @st is one of those being walked: a loop. */
static bool in_loop(const struct tsg_walk *walk, const struct stat *st)
{
	size_t i;

	for (i = 0; i < walk->depth; i++)
		if (walk->stack[i].dev == st->st_dev &&
		    walk->stack[i].ino == st->st_ino)
			return true;
	return false;
}

/* Open the directory @path and push it: the walk goes on inside it. */
static void enter_dir(struct tsg_walk *walk, const char *path,
		      const char *display, int depth)
{
	struct frame *frame, *grown;
	struct stat st;
	size_t cap;
	DIR *dir;
	int fd;

	dir = opendir(path);
	if (!dir) {
		add(walk, path, display, 1, errno);
		return;
	}
	fd = dirfd(dir);
	if (fd < 0 || fstat(fd, &st))
		memset(&st, 0, sizeof(st)); /* no loop check then */
	else if (in_loop(walk, &st)) {
		/* grep's warning, on stderr in its place in the output */
		filelist_add(walk->list, path, *display ? display : path, 1, 0)
			->is_loop = 1;
		publish(walk->list);
		closedir(dir);
		return;
	}
	if (walk->depth == walk->cap) {
		cap = walk->cap ? walk->cap * 2 : 16;
		grown = realloc(walk->stack, cap * sizeof(*grown));
		if (!grown)
			out_of_memory();
		walk->stack = grown;
		walk->cap = cap;
	}
	frame = &walk->stack[walk->depth++];
	memset(frame, 0, sizeof(*frame));
	frame->path = xstrdup(path);
	frame->display = xstrdup(display);
	frame->dev = st.st_dev;
	frame->ino = st.st_ino;
	frame->depth = depth;
	frame->entries = read_entries(dir, &frame->count);
	closedir(dir);
}

static void leave_dir(struct tsg_walk *walk)
{
	struct frame *frame = &walk->stack[--walk->depth];

	free(frame->path);
	free(frame->display);
	free(frame->entries);
}

/* The next entry of the innermost directory. */
static void walk_entry(struct tsg_walk *walk)
{
	const struct tsg_cfg *cfg = walk->cfg;
	struct frame *frame = &walk->stack[walk->depth - 1];
	struct entry *entry = &frame->entries[frame->next++];
	unsigned char type = entry->type;
	char *child, *child_display;
	int depth = frame->depth;
	struct stat st;

	child = join(frame->path, entry->name);
	/* "tsgrep -r x" with no operand shows names without "./" */
	child_display = *frame->display ? join(frame->display, entry->name) :
					  xstrdup(entry->name);
	free(entry->name);
	if (type == DT_UNKNOWN || (type == DT_LNK && cfg->deref)) {
		if (cfg->deref ? stat(child, &st) : lstat(child, &st)) {
			add(walk, child, child_display, 1, errno);
			goto out;
		}
		type = S_ISDIR(st.st_mode) ? DT_DIR :
		       S_ISREG(st.st_mode) ? DT_REG :
					     DT_UNKNOWN;
	}
	/* frame is not to be used past here: enter_dir() may move it */
	if (type == DT_DIR && depth < 4096)
		enter_dir(walk, child, child_display, depth + 1);
	else if (type == DT_REG)
		add(walk, child, child_display, cfg->with_fname != 0, 0);
out:
	free(child);
	free(child_display);
}

static void walk_operand(struct tsg_walk *walk, const char *operand)
{
	const struct tsg_cfg *cfg = walk->cfg;
	int show = cfg->with_fname == 1;
	struct stat st;

	if (!strcmp(operand, "-") && !walk->implicit_dot) {
		add(walk, "-", "(standard input)", show, 0);
		return;
	}
	if (stat(operand, &st)) {
		add(walk, operand, operand, show, errno);
		return;
	}
	if (!S_ISDIR(st.st_mode)) {
		add(walk, operand, operand, show, 0);
		return;
	}
	if (!cfg->recursive) {
		filelist_add(walk->list, operand, operand, show, 0)
			->is_dir_error = 1;
		publish(walk->list);
		walk->added++;
		return;
	}
	enter_dir(walk, operand, walk->implicit_dot ? "" : operand, 0);
}

struct tsg_walk *walk_start(const struct tsg_cfg *cfg,
			    struct tsg_filelist *list, char **operands,
			    int count, int implicit_dot)
{
	struct tsg_walk *walk = calloc(1, sizeof(*walk));

	if (!walk)
		out_of_memory();
	walk->cfg = cfg;
	walk->list = list;
	walk->operands = operands;
	walk->noperands = count;
	walk->implicit_dot = implicit_dot;
	return walk;
}

bool walk_more(struct tsg_walk *walk)
{
	struct frame *frame;

	walk->added = 0;
	while (walk->added < WALK_BATCH) {
		if (!walk->depth) {
			if (walk->next_operand == walk->noperands)
				return false;
			walk_operand(walk,
				     walk->operands[walk->next_operand++]);
			continue;
		}
		frame = &walk->stack[walk->depth - 1];
		if (frame->next == frame->count)
			leave_dir(walk);
		else
			walk_entry(walk);
	}
	return true;
}

void walk_free(struct tsg_walk *walk)
{
	while (walk->depth)
		leave_dir(walk);
	free(walk->stack);
	free(walk);
}
