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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tsgrep.h"

static char *xstrdup(const char *s)
{
	char *d = strdup(s);
	if (!d) {
		out_write_fd(2, TSG_PROG ": out of memory\n", 23);
		exit(2);
	}
	return d;
}

void filelist_add(struct tsg_filelist *l, const char *path,
		  const char *display, int show_name, int error)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		struct tsg_file *v = realloc(l->v, cap * sizeof(*v));
		if (!v) {
			out_write_fd(2, TSG_PROG ": out of memory\n", 23);
			exit(2);
		}
		l->v = v;
		l->cap = cap;
	}
	struct tsg_file *f = &l->v[l->n++];
	memset(f, 0, sizeof(*f));
	f->path = xstrdup(path);
	f->display = xstrdup(display);
	f->show_name = show_name;
	f->error = error;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* dir + "/" + name, without doubling a trailing slash (as fts does) */
static char *join(const char *dir, const char *name)
{
	size_t dl = strlen(dir), nl = strlen(name);
	int slash = dl && dir[dl - 1] == '/';
	char *p = malloc(dl + nl + 2);
	if (!p) {
		out_write_fd(2, TSG_PROG ": out of memory\n", 23);
		exit(2);
	}
	memcpy(p, dir, dl);
	if (!slash)
		p[dl++] = '/';
	memcpy(p + dl, name, nl + 1);
	return p;
}

/* The directories being walked, to stop at a symbolic link loop (-R). */
struct ancestor {
	dev_t dev;
	ino_t ino;
	const struct ancestor *up;
};

static void walk_dir(const struct tsg_cfg *c, struct tsg_filelist *l,
		     const char *path, const char *display, int depth,
		     const struct ancestor *up)
{
	struct stat self;
	struct ancestor me = {0, 0, up};
	if (!stat(path, &self)) {
		for (const struct ancestor *a = up; a; a = a->up) {
			if (a->dev == self.st_dev && a->ino == self.st_ino) {
				if (!c->no_messages) {
					/* grep's wording, on stderr now:
					 * it is a warning, not an error */
					fprintf(stderr, TSG_PROG ": %s: "
						"warning: recursive directory "
						"loop\n", *display ? display
								   : path);
				}
				return;
			}
		}
		me.dev = self.st_dev;
		me.ino = self.st_ino;
	}
	DIR *d = opendir(path);
	if (!d) {
		filelist_add(l, path, display, 1, errno);
		return;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 32;
			char **v = realloc(names, cap * sizeof(*v));
			if (!v) {
				out_write_fd(2, TSG_PROG ": out of memory\n",
					     23);
				exit(2);
			}
			names = v;
		}
		names[n++] = xstrdup(de->d_name);
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), by_name);
	for (size_t i = 0; i < n; i++) {
		char *p = join(path, names[i]);
		/* "tsgrep -r x" with no operand shows names without "./" */
		char *disp = *display ? join(display, names[i])
				      : xstrdup(names[i]);
		struct stat st;
		int r = c->deref ? stat(p, &st) : lstat(p, &st);
		if (r) {
			filelist_add(l, p, disp, 1, errno);
		} else if (S_ISDIR(st.st_mode)) {
			if (depth < 4096)
				walk_dir(c, l, p, disp, depth + 1, &me);
		} else if (S_ISREG(st.st_mode)) {
			filelist_add(l, p, disp, c->with_fname != 0, 0);
		}
		free(p);
		free(disp);
		free(names[i]);
	}
	free(names);
}

void walk_operand(const struct tsg_cfg *c, struct tsg_filelist *l,
		  const char *operand, int implicit_dot)
{
	int show = c->with_fname == 1;
	if (!strcmp(operand, "-") && !implicit_dot) {
		filelist_add(l, "-", "(standard input)", show, 0);
		return;
	}
	struct stat st;
	if (stat(operand, &st)) {
		filelist_add(l, operand, operand, show, errno);
		return;
	}
	if (S_ISDIR(st.st_mode)) {
		if (!c->recursive) {
			filelist_add(l, operand, operand, show, 0);
			l->v[l->n - 1].is_dir_error = 1;
			return;
		}
		walk_dir(c, l, operand, implicit_dot ? "" : operand, 0, NULL);
		return;
	}
	filelist_add(l, operand, operand, show, 0);
}
