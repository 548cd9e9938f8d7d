/*
 * error.c - error messages, the per-thread error detail, and the version.
 */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>

/* Thread-local, so that threads preparing at once never see each other's
 * errors. */
static _Thread_local char last_error[512];

int ts_fail(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	return err;
}

void ts_clear_error(void)
{
	last_error[0] = '\0';
}

const char *textsearch_last_error(void)
{
	return last_error;
}

const char *textsearch_strerror(int err)
{
	/* negate as unsigned: -INT_MIN would overflow */
	unsigned int code = err < 0 ? 0u - (unsigned int)err :
				      (unsigned int)err;

	switch (code) {
	case 0:
		return "success";
	case EINVAL:
		return "invalid argument (pattern, length, flags, gfp mask or "
		       "algorithm name)";
	case ENOENT:
		return "no such algorithm";
	case EEXIST:
		return "algorithm name already registered";
	case EBUSY:
		return "algorithm still used by a config";
	case ELIBBAD:
		return "plugin refused (broken or incompatible)";
	case ENOMEM:
		return "out of memory";
	case EDEADLK:
		return "would deadlock (del_timer_sync() from the timer's own "
		       "function)";
	default:
		return "unknown textsearch error";
	}
}

unsigned int textsearch_version_number(void)
{
	return TEXTSEARCH_VERSION_NUMBER;
}

#define TS_STR_(x) #x
#define TS_STR(x) TS_STR_(x)

const char *textsearch_version_string(void)
{
	return TS_STR(TEXTSEARCH_VERSION_MAJOR) "." TS_STR(
		TEXTSEARCH_VERSION_MINOR) "." TS_STR(TEXTSEARCH_VERSION_PATCH);
}
