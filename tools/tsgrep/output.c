/*
 * output.c - tsgrep's output: per-file buffers, line heads, GREP_COLORS.
 *
 * stdout is written with write(2), never stdio.  A file that may not
 * write yet buffers in its own output; the file that is "head" (the
 * oldest unfinished one, see order.c) appends to one stdout buffer shared
 * by the whole run, so that small results of many files go out in few
 * writes, as grep's stdio buffer does.  Only the head touches that buffer
 * (the head changes under the order's lock), so no lock is needed on the
 * hot path and output keeps argument order.  It is written when full, at
 * the end, before a message to stderr (whose order with stdout is kept),
 * after every line with --line-buffered or a terminal on stdout, and
 * before the search waits for more input from a pipe or terminal.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tsgrep.h"

#define OUT_DIRECT_FLUSH (64 * 1024)

static struct {
	char *buf;
	size_t len;
} stdout_buf;

/* A full disk, say (a closed pipe kills us with SIGPIPE first, as it does
 * grep): report, exit 2. */
static void write_error_exit(void)
{
	char msg[128];
	int len = snprintf(msg, sizeof(msg), TSG_PROG ": write error: %s\n",
			   strerror(errno));

	if (len > 0)
		(void)!write(2, msg, (size_t)len);
	_exit(2);
}

void out_write_fd(int fd, const void *data, size_t len)
{
	const char *pos = data;
	ssize_t written;

	while (len) {
		written = write(fd, pos, len);
		if (written < 0) {
			if (errno == EINTR)
				continue;
			if (fd == 1)
				write_error_exit();
			return;
		}
		pos += written;
		len -= (size_t)written;
	}
}

static void out_grow(struct tsg_out *out, size_t need)
{
	size_t cap;
	char *buf;

	if (out->cap - out->len >= need)
		return;
	cap = out->cap ? out->cap : 1024;
	while (cap - out->len < need)
		cap *= 2;
	buf = realloc(out->buf, cap);
	if (!buf) {
		out_write_fd(2, TSG_PROG ": out of memory\n", 23);
		_exit(2);
	}
	out->buf = buf;
	out->cap = cap;
}

void out_flush_stdout(void)
{
	if (stdout_buf.len) {
		out_write_fd(1, stdout_buf.buf, stdout_buf.len);
		stdout_buf.len = 0;
	}
}

static void stdout_put(const void *data, size_t len)
{
	if (stdout_buf.len + len > OUT_DIRECT_FLUSH) {
		out_flush_stdout();
		if (len > OUT_DIRECT_FLUSH) {
			out_write_fd(1, data, len);
			return;
		}
	}
	if (!stdout_buf.buf) {
		stdout_buf.buf = malloc(OUT_DIRECT_FLUSH);
		if (!stdout_buf.buf) {
			out_write_fd(2, TSG_PROG ": out of memory\n", 23);
			_exit(2);
		}
	}
	memcpy(stdout_buf.buf + stdout_buf.len, data, len);
	stdout_buf.len += len;
}

void out_put(struct tsg_out *out, const void *data, size_t len)
{
	if (!len)
		return; /* data may be NULL then, which memcpy does not allow */
	/* a file whose turn has come writes to stdout from its first byte,
	 * instead of buffering what it prints before its first line end */
	if (!out->direct && !out->len && out->order)
		order_output_point(out);
	if (out->direct) {
		stdout_put(data, len);
		return;
	}
	out_grow(out, len);
	memcpy(out->buf + out->len, data, len);
	out->len += len;
}

void out_putc(struct tsg_out *out, char ch)
{
	out_put(out, &ch, 1);
}

void out_puts(struct tsg_out *out, const char *str)
{
	out_put(out, str, strlen(str));
}

void out_eol(const struct tsg_cfg *cfg, struct tsg_out *out)
{
	if (!out->direct)
		order_output_point(out);
	if (out->direct && cfg->line_flush)
		out_flush_stdout();
}

void out_error(struct tsg_out *out, const char *fmt, ...)
{
	char buf[4096];
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (len < 0)
		return;
	if ((size_t)len >= sizeof(buf))
		len = sizeof(buf) - 1;
	out_msg(out, buf, (size_t)len);
}

void out_msg(struct tsg_out *out, const char *text, size_t len)
{
	struct tsg_msg *msgs;
	size_t cap;
	char *copy;

	if (out->direct) {
		/* keep stdout and stderr in the order they were produced */
		out_flush_stdout();
		out_write_fd(2, text, len);
		return;
	}
	if (out->nmsgs == out->capmsgs) {
		cap = out->capmsgs ? out->capmsgs * 2 : 4;
		msgs = realloc(out->msgs, cap * sizeof(*msgs));
		if (!msgs)
			return;
		out->msgs = msgs;
		out->capmsgs = cap;
	}
	copy = strndup(text, len);
	if (!copy)
		return;
	out->msgs[out->nmsgs].at = out->len;
	out->msgs[out->nmsgs].text = copy;
	out->nmsgs++;
}

void out_binary_matches(struct tsg_out *out, const char *name)
{
	out_error(out, TSG_PROG ": %s: binary file matches\n", name);
}

void out_drain(struct tsg_out *out)
{
	struct tsg_msg *msg;
	size_t done = 0, i;

	for (i = 0; i < out->nmsgs; i++) {
		msg = &out->msgs[i];
		if (msg->at > done) {
			stdout_put(out->buf + done, msg->at - done);
			done = msg->at;
		}
		out_flush_stdout();
		out_write_fd(2, msg->text, strlen(msg->text));
		free(msg->text);
	}
	out->nmsgs = 0;
	if (out->len > done)
		stdout_put(out->buf + done, out->len - done);
	out->len = 0;
}

void out_free(struct tsg_out *out)
{
	size_t i;

	for (i = 0; i < out->nmsgs; i++)
		free(out->msgs[i].text);
	free(out->msgs);
	free(out->slots);
	free(out->buf);
	memset(out, 0, sizeof(*out));
}

/* ---- color and heads ---- */

void out_sgr_start(const struct tsg_cfg *cfg, struct tsg_out *out,
		   const char *sgr)
{
	out_puts(out, "\33[");
	out_puts(out, sgr);
	out_puts(out, cfg->colors.ne ? "m" : "m\33[K");
}

void out_sgr_end(const struct tsg_cfg *cfg, struct tsg_out *out,
		 const char *sgr)
{
	(void)sgr;
	out_puts(out, cfg->colors.ne ? "\33[m" : "\33[m\33[K");
}

void out_filename(const struct tsg_cfg *cfg, struct tsg_out *out,
		  const char *name)
{
	if (cfg->color && *cfg->colors.fn) {
		out_sgr_start(cfg, out, cfg->colors.fn);
		out_puts(out, name);
		out_sgr_end(cfg, out, cfg->colors.fn);
	} else {
		out_puts(out, name);
	}
}

void out_sep(const struct tsg_cfg *cfg, struct tsg_out *out, char sep)
{
	if (cfg->color && *cfg->colors.se) {
		out_sgr_start(cfg, out, cfg->colors.se);
		out_putc(out, sep);
		out_sgr_end(cfg, out, cfg->colors.se);
	} else {
		out_putc(out, sep);
	}
}

static void out_num(const struct tsg_cfg *cfg, struct tsg_out *out,
		    const char *sgr, uint64_t value, int is_line)
{
	char num[24];
	int len, sgr_on = cfg->color && *sgr;

	if (sgr_on)
		out_sgr_start(cfg, out, sgr);
	if (is_line) {
		out_lineno(out, value);
	} else {
		len = snprintf(num, sizeof(num), "%llu",
			       (unsigned long long)value);
		out_put(out, num, (size_t)len);
	}
	if (sgr_on)
		out_sgr_end(cfg, out, sgr);
}

void out_lineno(struct tsg_out *out, uint64_t lineno)
{
	struct tsg_slot *slots;
	char num[24];
	size_t cap;
	int len;

	if (!out->line_slots) {
		len = snprintf(num, sizeof(num), "%llu",
			       (unsigned long long)lineno);
		out_put(out, num, (size_t)len);
		return;
	}
	if (out->nslots == out->capslots) {
		cap = out->capslots ? out->capslots * 2 : 64;
		slots = realloc(out->slots, cap * sizeof(*slots));
		if (!slots) {
			out_write_fd(2, TSG_PROG ": out of memory\n", 23);
			_exit(2);
		}
		out->slots = slots;
		out->capslots = cap;
	}
	out->slots[out->nslots].at = out->len;
	out->slots[out->nslots].lineno = lineno;
	out->nslots++;
}

/* File name, line number, byte offset: grep's order, each followed by the
 * separator (':' selected, '-' context), or a NUL after the name with -Z. */
void out_head(const struct tsg_cfg *cfg, struct tsg_out *out, const char *name,
	      uint64_t lineno, uint64_t off, char sep)
{
	if (name) {
		out_filename(cfg, out, name);
		if (cfg->null_after_name)
			out_putc(out, '\0');
		else
			out_sep(cfg, out, sep);
	}
	if (cfg->line_num) {
		out_num(cfg, out, cfg->colors.ln, lineno, 1);
		out_sep(cfg, out, sep);
	}
	if (cfg->byte_off) {
		out_num(cfg, out, cfg->colors.bn, off, 0);
		out_sep(cfg, out, sep);
	}
}

void out_count(const struct tsg_cfg *cfg, struct tsg_out *out, const char *name,
	       uint64_t count)
{
	char num[24];
	int len;

	if (name) {
		out_filename(cfg, out, name);
		if (cfg->null_after_name)
			out_putc(out, '\0');
		else
			out_sep(cfg, out, ':');
	}
	len = snprintf(num, sizeof(num), "%llu\n", (unsigned long long)count);
	out_put(out, num, (size_t)len);
	out_eol(cfg, out);
}

void out_group_sep(const struct tsg_cfg *cfg, struct tsg_out *out)
{
	if (cfg->color && *cfg->colors.se) {
		out_sgr_start(cfg, out, cfg->colors.se);
		out_puts(out, "--");
		out_sgr_end(cfg, out, cfg->colors.se);
	} else {
		out_puts(out, "--");
	}
	out_putc(out, '\n');
}

/* An SGR value of GREP_COLORS, cut to what the field holds. */
static void set_sgr(char *dst, const char *src, size_t len)
{
	if (len >= 32)
		len = 31;
	memcpy(dst, src, len);
	dst[len] = '\0';
}

/* The field of a two-letter GREP_COLORS name, NULL if none ("mt" is
 * both ms and mc: the caller sets mc too). */
static char *sgr_field(struct tsg_colors *colors, const char *name, size_t len)
{
	static const char names[][3] = {
		"mt", "ms", "mc", "sl", "cx", "fn", "ln", "bn", "se",
	};
	char *fields[] = {
		colors->ms, colors->ms, colors->mc, colors->sl, colors->cx,
		colors->fn, colors->ln, colors->bn, colors->se,
	};
	size_t i;

	if (len != 2)
		return NULL;
	for (i = 0; i < sizeof(names) / sizeof(*names); i++)
		if (!memcmp(name, names[i], 2))
			return fields[i];
	return NULL;
}

/* GREP_COLORS: colon-separated name=SGR pairs and boolean names; unknown
 * names are ignored, as grep does.  rv is not supported. */
void colors_init(struct tsg_colors *colors, const char *env)
{
	const char *pos = env, *end, *eq, *value;
	size_t len, name_len, value_len;
	char *field;

	memset(colors, 0, sizeof(*colors));
	strcpy(colors->ms, "01;31");
	strcpy(colors->mc, "01;31");
	strcpy(colors->fn, "35");
	strcpy(colors->ln, "32");
	strcpy(colors->bn, "32");
	strcpy(colors->se, "36");
	while (pos && *pos) {
		end = strchr(pos, ':');
		len = end ? (size_t)(end - pos) : strlen(pos);
		eq = memchr(pos, '=', len);
		name_len = eq ? (size_t)(eq - pos) : len;
		if (eq) {
			value = eq + 1;
			value_len = len - name_len - 1;
			field = sgr_field(colors, pos, name_len);
			if (field)
				set_sgr(field, value, value_len);
			if (field && !memcmp(pos, "mt", 2))
				set_sgr(colors->mc, value, value_len);
		} else if (name_len == 2 && !memcmp(pos, "ne", 2)) {
			colors->ne = 1;
		}
		pos = end ? end + 1 : NULL;
	}
}
