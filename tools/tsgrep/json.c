/*
 * json.c - --json: JSON Lines, one "match" object per selected line, in
 * ripgrep's shape:
 *
 *   {"type":"match","data":{"path":{"text":"f"},"lines":{"text":"a foo\n"},
 *    "line_number":1,"absolute_offset":0,
 *    "submatches":[{"match":{"text":"foo"},"start":2,"end":5}]}}
 *
 * A string that is not valid UTF-8 is written {"bytes":"<base64>"} instead
 * of {"text":"..."} (ripgrep's convention), so the output is always valid
 * JSON and the exact bytes can be recovered.  Offsets are in bytes.
 */
#include <stdio.h>
#include <string.h>

#include "tsgrep.h"

/* Strict UTF-8: no overlong forms, surrogates or code points past
 * U+10FFFF (what glibc's UTF-8 locales accept). */
int utf8_valid(const unsigned char *p, size_t n)
{
	size_t i = 0;
	while (i < n) {
		unsigned char b = p[i];
		if (b < 0x80) {
			i++;
			continue;
		}
		size_t need;
		unsigned int lo = 0x80, hi = 0xBF;
		if (b >= 0xC2 && b <= 0xDF) {
			need = 1;
		} else if (b >= 0xE0 && b <= 0xEF) {
			need = 2;
			if (b == 0xE0)
				lo = 0xA0;
			else if (b == 0xED)
				hi = 0x9F;
		} else if (b >= 0xF0 && b <= 0xF4) {
			need = 3;
			if (b == 0xF0)
				lo = 0x90;
			else if (b == 0xF4)
				hi = 0x8F;
		} else {
			return 0;
		}
		if (n - i - 1 < need)
			return 0;
		if (p[i + 1] < lo || p[i + 1] > hi)
			return 0;
		for (size_t k = 2; k <= need; k++)
			if (p[i + k] < 0x80 || p[i + k] > 0xBF)
				return 0;
		i += need + 1;
	}
	return 1;
}

static void json_escaped(struct tsg_out *o, const unsigned char *p, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	out_putc(o, '"');
	size_t run = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char b = p[i];
		const char *esc = NULL;
		char u[7];
		switch (b) {
		case '"': esc = "\\\""; break;
		case '\\': esc = "\\\\"; break;
		case '\n': esc = "\\n"; break;
		case '\r': esc = "\\r"; break;
		case '\t': esc = "\\t"; break;
		default:
			if (b < 0x20 || b == 0x7f) {
				memcpy(u, "\\u00", 4);
				u[4] = hex[b >> 4];
				u[5] = hex[b & 15];
				u[6] = '\0';
				esc = u;
			}
		}
		if (esc) {
			out_put(o, p + run, i - run);
			out_puts(o, esc);
			run = i + 1;
		}
	}
	out_put(o, p + run, n - run);
	out_putc(o, '"');
}

static void json_base64(struct tsg_out *o, const unsigned char *p, size_t n)
{
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	out_putc(o, '"');
	for (size_t i = 0; i < n; i += 3) {
		unsigned int v = (unsigned int)p[i] << 16;
		if (i + 1 < n)
			v |= (unsigned int)p[i + 1] << 8;
		if (i + 2 < n)
			v |= p[i + 2];
		char q[4] = {tab[(v >> 18) & 63], tab[(v >> 12) & 63],
			     i + 1 < n ? tab[(v >> 6) & 63] : '=',
			     i + 2 < n ? tab[v & 63] : '='};
		out_put(o, q, 4);
	}
	out_putc(o, '"');
}

/* {"text":...} or {"bytes":...} */
static void json_data(struct tsg_out *o, const unsigned char *p, size_t n)
{
	if (utf8_valid(p, n)) {
		out_puts(o, "{\"text\":");
		json_escaped(o, p, n);
	} else {
		out_puts(o, "{\"bytes\":");
		json_base64(o, p, n);
	}
	out_putc(o, '}');
}

void json_match(struct tsg_out *o, const char *path, uint64_t lineno,
		uint64_t off, const unsigned char *line, size_t len,
		const size_t *sub, size_t nsub)
{
	char num[64];
	out_puts(o, "{\"type\":\"match\",\"data\":{\"path\":");
	json_data(o, (const unsigned char *)path, strlen(path));
	out_puts(o, ",\"lines\":");
	json_data(o, line, len);
	snprintf(num, sizeof(num), ",\"line_number\":%llu",
		 (unsigned long long)lineno);
	out_puts(o, num);
	snprintf(num, sizeof(num), ",\"absolute_offset\":%llu",
		 (unsigned long long)off);
	out_puts(o, num);
	out_puts(o, ",\"submatches\":[");
	for (size_t i = 0; i < nsub; i++) {
		size_t s = sub[2 * i], e = sub[2 * i + 1];
		if (i)
			out_putc(o, ',');
		out_puts(o, "{\"match\":");
		json_data(o, line + s, e - s);
		snprintf(num, sizeof(num), ",\"start\":%zu,\"end\":%zu}", s,
			 e);
		out_puts(o, num);
	}
	out_puts(o, "]}}\n");
}
