/*
 * ts_ctor.so - a good plugin with an ELF constructor, which runs when the
 * object is loaded, before the library can look at the descriptor.  It
 * appends a line to the file named by TS_TEST_CTOR_MARKER, so a test can
 * tell whether the object was ever loaded.
 */
#include "../testplugin.h"

#include <stdio.h>

__attribute__((constructor)) static void leave_marker(void)
{
	const char *path = getenv("TS_TEST_CTOR_MARKER");
	FILE *f;

	if (!path)
		return;
	f = fopen(path, "a");
	if (f) {
		fputs("constructor ran\n", f);
		fclose(f);
	}
}

TP_OPS(ctor_ops, "ctor");
TEXTSEARCH_PLUGIN(ctor_ops, "test algorithm with a constructor");
