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
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* One load at a time, so two threads autoloading one name load it once. */
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

/* Check the descriptor of an opened object and register its ops. */
static int adopt(void *handle, const char *path, const char *name)
{
	const struct ts_plugin *desc;
	struct ts_ops *ops;
	int err;

	desc = dlsym(handle, TEXTSEARCH_PLUGIN_SYMBOL);
	if (!desc)
		return ts_fail(-ELIBBAD, "plugin %s: no '%s' descriptor "
					 "(not built with TEXTSEARCH_PLUGIN())",
			       path, TEXTSEARCH_PLUGIN_SYMBOL);
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
	if (err == -EINVAL)
		return ts_fail(-ELIBBAD, "plugin %s: %s", path,
			       textsearch_last_error());
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
	if (!handle)
		return ts_fail(-ELIBBAD, "plugin %s: cannot load: %s", path,
			       dlerror());
	err = adopt(handle, path, name);
	if (err && err != -EEXIST)
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
