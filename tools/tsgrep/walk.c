/*
 * walk.c - turn file operands into the list of files to search.
 *
 * -r visits a directory's entries sorted by name (strcmp, i.e. byte order)
 * and depth first, so the output order is the same on every file system
 * and every run (GNU grep uses the directory's own order).  Symbolic links
 * met while recursing are skipped (followed with -R), as are devices,
 * FIFOs and sockets; operands are always followed.  The whole list is made
 * before searching starts; its memory is the file names only.
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tsgrep.h"

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

void filelist_add(struct tsg_filelist *list, const char *path,
		  const char *display, int show_name, int error)
{
	struct tsg_file *files, *file;
	size_t cap;

	if (list->n == list->cap) {
		cap = list->cap ? list->cap * 2 : 16;
		files = realloc(list->v, cap * sizeof(*files));
		if (!files)
			out_of_memory();
		list->v = files;
		list->cap = cap;
	}
	file = &list->v[list->n++];
	memset(file, 0, sizeof(*file));
	file->path = xstrdup(path);
	file->display = xstrdup(display);
	file->show_name = show_name;
	file->error = error;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
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

/* The directories being walked, to stop at a symbolic link loop (-R). */
struct ancestor {
	dev_t dev;
	ino_t ino;
	const struct ancestor *up;
};

/* Whether @self is one of the directories being walked: a loop. */
static bool in_loop(const struct ancestor *up, const struct stat *self)
{
	for (; up; up = up->up)
		if (up->dev == self->st_dev && up->ino == self->st_ino)
			return true;
	return false;
}

/* The entries of @dir but "." and "..", sorted by name; *@count of them. */
static char **read_names(DIR *dir, size_t *count)
{
	char **names = NULL, **grown;
	size_t len = 0, cap = 0;
	struct dirent *entry;

	while ((entry = readdir(dir))) {
		if (!strcmp(entry->d_name, ".") || !strcmp(entry->d_name, ".."))
			continue;
		if (len == cap) {
			cap = cap ? cap * 2 : 32;
			grown = realloc(names, cap * sizeof(*grown));
			if (!grown)
				out_of_memory();
			names = grown;
		}
		names[len++] = xstrdup(entry->d_name);
	}
	if (len)
		qsort(names, len, sizeof(*names), by_name);
	*count = len;
	return names;
}

static void walk_dir(const struct tsg_cfg *cfg, struct tsg_filelist *list,
		     const char *path, const char *display, int depth,
		     const struct ancestor *up)
{
	struct ancestor me = { 0, 0, up };
	struct stat self, st;
	char **names, *child, *child_display;
	size_t count, i;
	DIR *dir;
	int err;

	if (!stat(path, &self)) {
		if (in_loop(up, &self)) {
			/* grep's wording, on stderr now: it is a warning,
			 * not an error */
			if (!cfg->no_messages)
				fprintf(stderr,
					TSG_PROG ": %s: warning: "
						 "recursive directory loop\n",
					*display ? display : path);
			return;
		}
		me.dev = self.st_dev;
		me.ino = self.st_ino;
	}
	dir = opendir(path);
	if (!dir) {
		filelist_add(list, path, display, 1, errno);
		return;
	}
	names = read_names(dir, &count);
	closedir(dir);
	for (i = 0; i < count; i++) {
		child = join(path, names[i]);
		/* "tsgrep -r x" with no operand shows names without "./" */
		child_display = *display ? join(display, names[i]) :
					   xstrdup(names[i]);
		err = cfg->deref ? stat(child, &st) : lstat(child, &st);
		if (err)
			filelist_add(list, child, child_display, 1, errno);
		else if (S_ISDIR(st.st_mode) && depth < 4096)
			walk_dir(cfg, list, child, child_display, depth + 1,
				 &me);
		else if (S_ISREG(st.st_mode))
			filelist_add(list, child, child_display,
				     cfg->with_fname != 0, 0);
		free(child);
		free(child_display);
		free(names[i]);
	}
	free(names);
}

void walk_operand(const struct tsg_cfg *cfg, struct tsg_filelist *list,
		  const char *operand, int implicit_dot)
{
	int show = cfg->with_fname == 1;
	struct stat st;

	if (!strcmp(operand, "-") && !implicit_dot) {
		filelist_add(list, "-", "(standard input)", show, 0);
		return;
	}
	if (stat(operand, &st)) {
		filelist_add(list, operand, operand, show, errno);
		return;
	}
	if (!S_ISDIR(st.st_mode)) {
		filelist_add(list, operand, operand, show, 0);
		return;
	}
	if (!cfg->recursive) {
		filelist_add(list, operand, operand, show, 0);
		list->v[list->n - 1].is_dir_error = 1;
		return;
	}
	walk_dir(cfg, list, operand, implicit_dot ? "" : operand, 0, NULL);
}
