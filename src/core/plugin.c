/*
 * plugin.c - TS_AUTOLOAD: the userspace counterpart of
 * request_module("ts_%s").
 *
 * A plugin is ts_<name>.so exporting a struct ts_plugin descriptor.  Loading
 * it (dlopen) runs its ELF constructors and those of its dependencies, before
 * the descriptor can be read: a plugin file is code that runs.  So only
 * trusted places are accepted: absolute directories, and a directory and
 * file that nobody but root and the user running the program owns or can
 * write (checked right before dlopen).  The descriptor is then checked (ABI
 * version, size of ts_ops, name, methods) before any function of the
 * plugin is called through it; an object that fails is unloaded and refused
 * with a message for textsearch_last_error().  The checked ops go back to
 * the registry, which registers them: the loader never calls into it.
 */
#define _GNU_SOURCE /* secure_getenv */
#include "internal.h"
#include "plugin_dir.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#ifdef __GLIBC__
#include <link.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Where the symbol table can tell, refuse a descriptor symbol that is not
 * a data object as large as struct ts_plugin: reading it would read past
 * it.  0 or -ELIBBAD. */
static int check_descriptor_symbol(const void *desc, const char *path)
{
#ifdef __GLIBC__
	const ElfW(Sym) *sym = NULL;
	Dl_info info;

	if (!dladdr1(desc, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym ||
	    info.dli_saddr != desc)
		return 0; /* no symbol information: nothing to check */
	/* ST_TYPE is the same macro in both ELF classes */
	if (ELF64_ST_TYPE(sym->st_info) != STT_OBJECT)
		return ts_fail(-ELIBBAD,
			       "plugin %s: '%s' is not a data "
			       "object",
			       path, TEXTSEARCH_PLUGIN_SYMBOL);
	/* a size of 0 means "unknown" (hand-written assembly, say) */
	if (sym->st_size && sym->st_size < sizeof(struct ts_plugin))
		return ts_fail(-ELIBBAD,
			       "plugin %s: '%s' is %zu bytes, "
			       "struct ts_plugin is %zu",
			       path, TEXTSEARCH_PLUGIN_SYMBOL,
			       (size_t)sym->st_size, sizeof(struct ts_plugin));
#else
	(void)desc;
	(void)path;
#endif
	return 0;
}

/* Check the descriptor of an opened object: its ops in *@ops, or -ELIBBAD. */
static int check_descriptor(void *handle, const char *path, const char *name,
			    struct ts_ops **ops)
{
	const struct ts_plugin *desc;
	struct ts_ops *o;
	int err;

	desc = dlsym(handle, TEXTSEARCH_PLUGIN_SYMBOL);
	if (!desc)
		return ts_fail(-ELIBBAD,
			       "plugin %s: no '%s' descriptor "
			       "(not built with TEXTSEARCH_PLUGIN())",
			       path, TEXTSEARCH_PLUGIN_SYMBOL);
	err = check_descriptor_symbol(desc, path);
	if (err)
		return err;
	if (desc->abi_version != TEXTSEARCH_PLUGIN_ABI)
		return ts_fail(-ELIBBAD,
			       "plugin %s: built for plugin ABI %u, "
			       "this library speaks ABI %u",
			       path, desc->abi_version, TEXTSEARCH_PLUGIN_ABI);
	if (desc->ops_size != sizeof(struct ts_ops))
		return ts_fail(-ELIBBAD,
			       "plugin %s: struct ts_ops is %u bytes "
			       "in the plugin, %zu in this library",
			       path, desc->ops_size, sizeof(struct ts_ops));
	o = desc->ops;
	if (!o || !o->name || strcmp(o->name, name) != 0)
		return ts_fail(-ELIBBAD,
			       "plugin %s: provides algorithm '%s', "
			       "not '%s'",
			       path, o && o->name ? o->name : "(none)", name);
	if (!ts_ops_has_methods(o))
		return ts_fail(-ELIBBAD,
			       "plugin %s: '%s' lacks init, find, "
			       "get_pattern or get_pattern_len",
			       path, name);
	*ops = o;
	return 0;
}

/*
 * Refuse a plugin that someone other than root and the user running the
 * program could have written: @st describes @what (its file, or a
 * directory it is reached through), @plugin is the file as it was found.
 */
static int check_trusted(const struct stat *st, const char *plugin,
			 const char *what, const char *where)
{
	uid_t me = geteuid();

	if (st->st_uid != 0 && st->st_uid != me)
		return ts_fail(-ELIBBAD,
			       "plugin %s: refused: %s %s is owned "
			       "by uid %u, neither root nor the "
			       "user running the program (uid %u)",
			       plugin, what, where, (unsigned int)st->st_uid,
			       (unsigned int)me);
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return ts_fail(-ELIBBAD,
			       "plugin %s: refused: %s %s is %s-"
			       "writable",
			       plugin, what, where,
			       (st->st_mode & S_IWOTH) ? "world" : "group");
	return 0;
}

static int check_dir(const char *plugin, const char *dir, size_t dirlen)
{
	char buf[4096];
	struct stat st;

	if (dirlen == 0) /* the root directory */
		dirlen = 1;
	snprintf(buf, sizeof(buf), "%.*s", (int)dirlen, dir);
	if (stat(buf, &st) != 0)
		return ts_fail(-ELIBBAD,
			       "plugin %s: refused: cannot check "
			       "directory %s: %m",
			       plugin, buf);
	return check_trusted(&st, plugin, "directory", buf);
}

/*
 * Whether @path (in @dir) comes from a trusted place: the directory it was
 * found in, and if it is a symbolic link the directory of its target too
 * (whoever can write there can replace the file), and the file itself,
 * which must be a regular file.  The file is checked through a descriptor,
 * so its type, owner and mode are those of one and the same file.
 */
static int check_place(const char *path, const char *dir, size_t dirlen)
{
	char real[4096], *slash;
	struct stat st;
	int fd, err;

	err = check_dir(path, dir, dirlen);
	if (err)
		return err;
	if (!realpath(path, real))
		return ts_fail(-ELIBBAD, "plugin %s: cannot load: %m", path);
	slash = strrchr(real, '/');
	if (!slash)
		return ts_fail(-ELIBBAD,
			       "plugin %s: refused: resolves to a "
			       "relative path",
			       path);
	if ((size_t)(slash - real) != dirlen || strncmp(real, dir, dirlen)) {
		err = check_dir(path, real, (size_t)(slash - real));
		if (err)
			return err;
	}
	/* O_NONBLOCK: a FIFO put there must not hang the caller */
	fd = open(real, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return ts_fail(-ELIBBAD, "plugin %s: cannot load: %m", path);
	if (fstat(fd, &st) != 0)
		err = ts_fail(-ELIBBAD, "plugin %s: cannot load: %m", path);
	else if (!S_ISREG(st.st_mode))
		err = ts_fail(-ELIBBAD,
			      "plugin %s: refused: not a regular "
			      "file",
			      path);
	else
		err = check_trusted(&st, path, "file", real);
	close(fd);
	return err;
}

/* Try @dir/ts_@name.so: -ENOENT if there is no such file. */
static int try_dir(const char *dir, size_t dirlen, const char *name,
		   struct ts_plugin_loaded *out)
{
	char path[4096];
	struct stat st;
	void *handle;
	int n, err;

	n = snprintf(path, sizeof(path), "%.*s/ts_%s.so", (int)dirlen, dir,
		     name);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENOENT;
	if (stat(path, &st) != 0)
		return -ENOENT;
	/* dlopen runs the plugin's constructors: check first, right before.
	 * Between the check and dlopen only someone who may write those
	 * directories (or one above them) could swap the file. */
	err = check_place(path, dir, dirlen);
	if (err)
		return err;
	handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!handle) {
		const char *why = dlerror();

		return ts_fail(-ELIBBAD, "plugin %s: cannot load: %s", path,
			       why ? why : "unknown dlopen error");
	}
	err = check_descriptor(handle, path, name, &out->ops);
	if (err) {
		dlclose(handle);
		return err;
	}
	out->handle = handle;
	return 0;
}

/* What the search skipped, for the message when nothing is found. */
struct skipped {
	const char *first;
	size_t len;
	unsigned int count;
};

/* Try one directory of the search: relative and empty entries (empty
 * means the current directory to many programs) are never searched, as
 * what they name depends on where the program happens to run. */
static int try_entry(const char *dir, size_t len, const char *name,
		     struct ts_plugin_loaded *out, struct skipped *skipped)
{
	if (len && dir[0] == '/')
		return try_dir(dir, len, name, out);
	if (!skipped->count++) {
		skipped->first = dir;
		skipped->len = len;
	}
	return -ENOENT;
}

int ts_plugin_load(const char *name, struct ts_plugin_loaded *out)
{
	const char *path = secure_getenv("TEXTSEARCH_PLUGIN_PATH");
	struct skipped skipped = { NULL, 0, 0 };
	char more[64] = "";
	int err = -ENOENT;

	if (path && !*path)
		path = NULL; /* set but empty: no directories */
	while (path && err == -ENOENT) {
		size_t len = strcspn(path, ":");

		err = try_entry(path, len, name, out, &skipped);
		path = path[len] ? path + len + 1 : NULL;
	}
	if (err == -ENOENT)
		err = try_entry(TS_PLUGIN_DIR, strlen(TS_PLUGIN_DIR), name, out,
				&skipped);
	if (err != -ENOENT)
		return err;
	if (!skipped.count)
		return ts_fail(-ENOENT,
			       "no algorithm '%s' and no plugin "
			       "ts_%s.so in TEXTSEARCH_PLUGIN_PATH or "
			       "%s",
			       name, name, TS_PLUGIN_DIR);
	if (skipped.count > 1)
		snprintf(more, sizeof(more), " (and %u more)",
			 skipped.count - 1);
	return ts_fail(-ENOENT,
		       "no algorithm '%s' and no plugin ts_%s.so in "
		       "TEXTSEARCH_PLUGIN_PATH or %s; ignored %s "
		       "entry '%.*s'%s: not an absolute path",
		       name, name, TS_PLUGIN_DIR,
		       skipped.len ? "relative" : "empty", (int)skipped.len,
		       skipped.first, more);
}

void ts_plugin_unload(struct ts_plugin_loaded *plugin)
{
	dlclose(plugin->handle);
}
