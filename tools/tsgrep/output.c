/*
 * output.c - tsgrep's output: per-file buffers, line heads, GREP_COLORS.
 *
 * stdout is written with write(2) through each file's own buffer, never
 * stdio: a worker thread owns its buffer, and only the file that is "head"
 * (the oldest unfinished one, see order.c) may write to the descriptor, so
 * no lock is needed on the hot path and output keeps argument order.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tsgrep.h"

#define OUT_DIRECT_FLUSH (64 * 1024)

void out_write_fd(int fd, const void *p, size_t n)
{
	const char *s = p;
	while (n) {
		ssize_t w = write(fd, s, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			/* A full disk, say (a closed pipe kills us with
			 * SIGPIPE first, as it does grep): report, exit 2. */
			if (fd == 1) {
				char m[128];
				int k = snprintf(m, sizeof(m),
						 TSG_PROG ": write error: %s\n",
						 strerror(errno));
				if (k > 0)
					(void)!write(2, m, (size_t)k);
				_exit(2);
			}
			return;
		}
		s += w;
		n -= (size_t)w;
	}
}

static void out_grow(struct tsg_out *o, size_t need)
{
	if (o->cap - o->len >= need)
		return;
	size_t cap = o->cap ? o->cap : 4096;
	while (cap - o->len < need)
		cap *= 2;
	char *b = realloc(o->buf, cap);
	if (!b) {
		out_write_fd(2, TSG_PROG ": out of memory\n", 23);
		_exit(2);
	}
	o->buf = b;
	o->cap = cap;
}

static void out_flush_direct(struct tsg_out *o)
{
	if (o->len) {
		out_write_fd(1, o->buf, o->len);
		o->len = 0;
	}
}

void out_put(struct tsg_out *o, const void *p, size_t n)
{
	if (!n)
		return; /* p may be NULL then, which memcpy does not allow */
	if (o->direct && o->len + n > OUT_DIRECT_FLUSH) {
		out_flush_direct(o);
		if (n > OUT_DIRECT_FLUSH) {
			out_write_fd(1, p, n);
			return;
		}
	}
	out_grow(o, n);
	memcpy(o->buf + o->len, p, n);
	o->len += n;
}

void out_putc(struct tsg_out *o, char c)
{
	out_put(o, &c, 1);
}

void out_puts(struct tsg_out *o, const char *s)
{
	out_put(o, s, strlen(s));
}

void out_eol(const struct tsg_cfg *c, struct tsg_out *o)
{
	if (!o->direct)
		order_output_point(o);
	if (o->direct && c->line_flush)
		out_flush_direct(o);
}

void out_error(struct tsg_out *o, const char *fmt, ...)
{
	char buf[4096];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(buf))
		n = sizeof(buf) - 1;
	if (o->direct) {
		/* keep stdout and stderr in the order they were produced */
		out_flush_direct(o);
		out_write_fd(2, buf, (size_t)n);
		return;
	}
	if (o->nmsgs == o->capmsgs) {
		size_t cap = o->capmsgs ? o->capmsgs * 2 : 4;
		struct tsg_msg *m = realloc(o->msgs, cap * sizeof(*m));
		if (!m)
			return;
		o->msgs = m;
		o->capmsgs = cap;
	}
	char *t = strdup(buf);
	if (!t)
		return;
	o->msgs[o->nmsgs].at = o->len;
	o->msgs[o->nmsgs].text = t;
	o->nmsgs++;
}

void out_drain(struct tsg_out *o)
{
	size_t done = 0;
	for (size_t i = 0; i < o->nmsgs; i++) {
		if (o->msgs[i].at > done) {
			out_write_fd(1, o->buf + done, o->msgs[i].at - done);
			done = o->msgs[i].at;
		}
		out_write_fd(2, o->msgs[i].text, strlen(o->msgs[i].text));
		free(o->msgs[i].text);
	}
	o->nmsgs = 0;
	if (o->len > done)
		out_write_fd(1, o->buf + done, o->len - done);
	o->len = 0;
}

void out_free(struct tsg_out *o)
{
	for (size_t i = 0; i < o->nmsgs; i++)
		free(o->msgs[i].text);
	free(o->msgs);
	free(o->buf);
	memset(o, 0, sizeof(*o));
}

/* ---- color and heads ---- */

void out_sgr_start(const struct tsg_cfg *c, struct tsg_out *o,
		   const char *sgr)
{
	out_puts(o, "\33[");
	out_puts(o, sgr);
	out_puts(o, c->colors.ne ? "m" : "m\33[K");
}

void out_sgr_end(const struct tsg_cfg *c, struct tsg_out *o, const char *sgr)
{
	(void)sgr;
	out_puts(o, c->colors.ne ? "\33[m" : "\33[m\33[K");
}

void out_filename(const struct tsg_cfg *c, struct tsg_out *o,
		  const char *name)
{
	if (c->color && *c->colors.fn) {
		out_sgr_start(c, o, c->colors.fn);
		out_puts(o, name);
		out_sgr_end(c, o, c->colors.fn);
	} else {
		out_puts(o, name);
	}
}

void out_sep(const struct tsg_cfg *c, struct tsg_out *o, char sep)
{
	if (c->color && *c->colors.se) {
		out_sgr_start(c, o, c->colors.se);
		out_putc(o, sep);
		out_sgr_end(c, o, c->colors.se);
	} else {
		out_putc(o, sep);
	}
}

static void out_num(const struct tsg_cfg *c, struct tsg_out *o,
		    const char *sgr, uint64_t v)
{
	char b[24];
	int n = snprintf(b, sizeof(b), "%llu", (unsigned long long)v);
	if (c->color && *sgr) {
		out_sgr_start(c, o, sgr);
		out_put(o, b, (size_t)n);
		out_sgr_end(c, o, sgr);
	} else {
		out_put(o, b, (size_t)n);
	}
}

/* File name, line number, byte offset: grep's order, each followed by the
 * separator (':' selected, '-' context), or a NUL after the name with -Z. */
void out_head(const struct tsg_cfg *c, struct tsg_out *o, const char *name,
	      uint64_t lineno, uint64_t off, char sep)
{
	if (name) {
		out_filename(c, o, name);
		if (c->null_after_name)
			out_putc(o, '\0');
		else
			out_sep(c, o, sep);
	}
	if (c->line_num) {
		out_num(c, o, c->colors.ln, lineno);
		out_sep(c, o, sep);
	}
	if (c->byte_off) {
		out_num(c, o, c->colors.bn, off);
		out_sep(c, o, sep);
	}
}

void out_group_sep(const struct tsg_cfg *c, struct tsg_out *o)
{
	if (c->color && *c->colors.se) {
		out_sgr_start(c, o, c->colors.se);
		out_puts(o, "--");
		out_sgr_end(c, o, c->colors.se);
	} else {
		out_puts(o, "--");
	}
	out_putc(o, '\n');
}

static void set_cap(char *dst, const char *src, size_t n)
{
	if (n >= 32)
		n = 31;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* GREP_COLORS: colon-separated name=SGR pairs and boolean names; unknown
 * names are ignored, as grep does.  rv is not supported. */
void colors_init(struct tsg_colors *col, const char *env)
{
	memset(col, 0, sizeof(*col));
	strcpy(col->ms, "01;31");
	strcpy(col->mc, "01;31");
	strcpy(col->fn, "35");
	strcpy(col->ln, "32");
	strcpy(col->bn, "32");
	strcpy(col->se, "36");
	if (!env)
		return;
	const char *p = env;
	while (*p) {
		const char *end = strchr(p, ':');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		const char *eq = memchr(p, '=', len);
		size_t nlen = eq ? (size_t)(eq - p) : len;
		const char *val = eq ? eq + 1 : NULL;
		size_t vlen = eq ? len - nlen - 1 : 0;
#define KEY(k) (nlen == 2 && memcmp(p, k, 2) == 0)
		if (val) {
			if (KEY("mt")) {
				set_cap(col->ms, val, vlen);
				set_cap(col->mc, val, vlen);
			} else if (KEY("ms")) {
				set_cap(col->ms, val, vlen);
			} else if (KEY("mc")) {
				set_cap(col->mc, val, vlen);
			} else if (KEY("sl")) {
				set_cap(col->sl, val, vlen);
			} else if (KEY("cx")) {
				set_cap(col->cx, val, vlen);
			} else if (KEY("fn")) {
				set_cap(col->fn, val, vlen);
			} else if (KEY("ln")) {
				set_cap(col->ln, val, vlen);
			} else if (KEY("bn")) {
				set_cap(col->bn, val, vlen);
			} else if (KEY("se")) {
				set_cap(col->se, val, vlen);
			}
		} else if (KEY("ne")) {
			col->ne = 1;
		}
#undef KEY
		if (!end)
			break;
		p = end + 1;
	}
}
