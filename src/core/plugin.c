/*
 * plugin.c - TS_AUTOLOAD: the userspace counterpart of
 * request_module("ts_%s").
 *
 * A plugin is ts_<name>.so exporting a struct ts_plugin descriptor.  The
 * descriptor is read and checked (ABI version, size of ts_ops, name, methods)
 * before any function of the plugin is called; an object that fails is
 * unloaded and refused with a message for textsearch_last_error().
 */
#define _GNU_SOURCE /* secure_getenv */
#include "internal.h"
#include "plugin_dir.h"

#include <dlfcn.h>
#ifdef __GLIBC__
#include <link.h>
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* One load at a time, so two threads autoloading one name load it once. */
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

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
		return ts_fail(-ELIBBAD, "plugin %s: '%s' is not a data "
					 "object", path,
			       TEXTSEARCH_PLUGIN_SYMBOL);
	/* a size of 0 means "unknown" (hand-written assembly, say) */
	if (sym->st_size && sym->st_size < sizeof(struct ts_plugin))
		return ts_fail(-ELIBBAD, "plugin %s: '%s' is %zu bytes, "
					 "struct ts_plugin is %zu",
			       path, TEXTSEARCH_PLUGIN_SYMBOL,
			       (size_t)sym->st_size,
			       sizeof(struct ts_plugin));
#else
	(void)desc;
	(void)path;
#endif
	return 0;
}

/* Check the descriptor of an opened object and register its ops. */
static int adopt(void *handle, const char *path, const char *name)
{
	const struct ts_plugin *desc;
	struct ts_ops *ops;
	char why[256];
	int err;

	desc = dlsym(handle, TEXTSEARCH_PLUGIN_SYMBOL);
	if (!desc)
		return ts_fail(-ELIBBAD, "plugin %s: no '%s' descriptor "
					 "(not built with TEXTSEARCH_PLUGIN())",
			       path, TEXTSEARCH_PLUGIN_SYMBOL);
	err = check_descriptor_symbol(desc, path);
	if (err)
		return err;
	if (desc->abi_version != TEXTSEARCH_PLUGIN_ABI)
		return ts_fail(-ELIBBAD, "plugin %s: built for plugin ABI %u, "
					 "this library speaks ABI %u",
			       path, desc->abi_version, TEXTSEARCH_PLUGIN_ABI);
	if (desc->ops_size != sizeof(struct ts_ops))
		return ts_fail(-ELIBBAD, "plugin %s: struct ts_ops is %u bytes "
					 "in the plugin, %zu in this library",
			       path, desc->ops_size, sizeof(struct ts_ops));
	ops = desc->ops;
	if (!ops || !ops->name || strcmp(ops->name, name) != 0)
		return ts_fail(-ELIBBAD, "plugin %s: provides algorithm '%s', "
					 "not '%s'",
			       path, ops && ops->name ? ops->name : "(none)",
			       name);
	err = textsearch_register(ops);
	if (err == -EINVAL) {
		/* the message is rewritten into the buffer it is read from:
		 * copy it first */
		snprintf(why, sizeof(why), "%s", textsearch_last_error());
		return ts_fail(-ELIBBAD, "plugin %s: %s", path, why);
	}
	if (err)
		return err;
	ops->ts_plugin = handle;
	return 0;
}

/* Try @dir/ts_@name.so: -ENOENT if there is no such file. */
static int try_dir(const char *dir, size_t dirlen, const char *name)
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
	handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!handle) {
		const char *why = dlerror();

		return ts_fail(-ELIBBAD, "plugin %s: cannot load: %s", path,
			       why ? why : "unknown dlopen error");
	}
	err = adopt(handle, path, name);
	/* -EEXIST too: another thread registered the name meanwhile, and
	 * these ops are not in the registry (if they are the same object,
	 * dlclose only drops the extra reference) */
	if (err)
		dlclose(handle);
	return err;
}

int ts_plugin_load(const char *name)
{
	const char *path = secure_getenv("TEXTSEARCH_PLUGIN_PATH");
	int err = -ENOENT;

	pthread_mutex_lock(&load_lock);
	while (path && *path && err == -ENOENT) {
		size_t len = strcspn(path, ":");

		if (len)
			err = try_dir(path, len, name);
		path += len;
		if (*path == ':')
			path++;
	}
	if (err == -ENOENT)
		err = try_dir(TS_PLUGIN_DIR, strlen(TS_PLUGIN_DIR), name);
	pthread_mutex_unlock(&load_lock);
	if (err == -ENOENT)
		return ts_fail(-ENOENT, "no algorithm '%s' and no plugin "
					"ts_%s.so in TEXTSEARCH_PLUGIN_PATH or "
					"%s", name, name, TS_PLUGIN_DIR);
	return err;
}
