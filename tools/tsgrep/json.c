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
int utf8_valid(const unsigned char *text, size_t len)
{
	unsigned int lo, hi;
	size_t i = 0, need, k;
	unsigned char lead;

	while (i < len) {
		lead = text[i];
		if (lead < 0x80) {
			i++;
			continue;
		}
		lo = 0x80;
		hi = 0xBF;
		if (lead >= 0xC2 && lead <= 0xDF) {
			need = 1;
		} else if (lead >= 0xE0 && lead <= 0xEF) {
			need = 2;
			if (lead == 0xE0)
				lo = 0xA0;
			else if (lead == 0xED)
				hi = 0x9F;
		} else if (lead >= 0xF0 && lead <= 0xF4) {
			need = 3;
			if (lead == 0xF0)
				lo = 0x90;
			else if (lead == 0xF4)
				hi = 0x8F;
		} else {
			return 0;
		}
		if (len - i - 1 < need)
			return 0;
		if (text[i + 1] < lo || text[i + 1] > hi)
			return 0;
		for (k = 2; k <= need; k++)
			if (text[i + k] < 0x80 || text[i + k] > 0xBF)
				return 0;
		i += need + 1;
	}
	return 1;
}

/* The JSON escape of @byte, NULL if it stands for itself. */
static const char *json_escape(unsigned char byte, char *buf)
{
	static const char hex[] = "0123456789abcdef";

	switch (byte) {
	case '"':
		return "\\\"";
	case '\\':
		return "\\\\";
	case '\n':
		return "\\n";
	case '\r':
		return "\\r";
	case '\t':
		return "\\t";
	}
	if (byte >= 0x20 && byte != 0x7f)
		return NULL;
	memcpy(buf, "\\u00", 4);
	buf[4] = hex[byte >> 4];
	buf[5] = hex[byte & 15];
	buf[6] = '\0';
	return buf;
}

static void json_escaped(struct tsg_out *out, const unsigned char *text,
			 size_t len)
{
	size_t run = 0, i;
	const char *esc;
	char buf[7];

	out_putc(out, '"');
	for (i = 0; i < len; i++) {
		esc = json_escape(text[i], buf);
		if (esc) {
			out_put(out, text + run, i - run);
			out_puts(out, esc);
			run = i + 1;
		}
	}
	out_put(out, text + run, len - run);
	out_putc(out, '"');
}

static void json_base64(struct tsg_out *out, const unsigned char *data,
			size_t len)
{
	static const char digits[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		"0123456789+/";
	unsigned int bits;
	char quad[4];
	size_t i;

	out_putc(out, '"');
	for (i = 0; i < len; i += 3) {
		bits = (unsigned int)data[i] << 16;
		if (i + 1 < len)
			bits |= (unsigned int)data[i + 1] << 8;
		if (i + 2 < len)
			bits |= data[i + 2];
		quad[0] = digits[(bits >> 18) & 63];
		quad[1] = digits[(bits >> 12) & 63];
		quad[2] = i + 1 < len ? digits[(bits >> 6) & 63] : '=';
		quad[3] = i + 2 < len ? digits[bits & 63] : '=';
		out_put(out, quad, 4);
	}
	out_putc(out, '"');
}

/* {"text":...} or {"bytes":...} */
static void json_data(struct tsg_out *out, const unsigned char *data,
		      size_t len)
{
	if (utf8_valid(data, len)) {
		out_puts(out, "{\"text\":");
		json_escaped(out, data, len);
	} else {
		out_puts(out, "{\"bytes\":");
		json_base64(out, data, len);
	}
	out_putc(out, '}');
}

void json_match(struct tsg_out *out, const char *path, uint64_t lineno,
		uint64_t off, const unsigned char *line, size_t len,
		const size_t *sub, size_t nsub)
{
	size_t start, end, i;
	char num[64];

	out_puts(out, "{\"type\":\"match\",\"data\":{\"path\":");
	json_data(out, (const unsigned char *)path, strlen(path));
	out_puts(out, ",\"lines\":");
	json_data(out, line, len);
	out_puts(out, ",\"line_number\":");
	out_lineno(out, lineno);
	snprintf(num, sizeof(num), ",\"absolute_offset\":%llu",
		 (unsigned long long)off);
	out_puts(out, num);
	out_puts(out, ",\"submatches\":[");
	for (i = 0; i < nsub; i++) {
		start = sub[2 * i];
		end = sub[2 * i + 1];
		if (i)
			out_putc(out, ',');
		out_puts(out, "{\"match\":");
		json_data(out, line + start, end - start);
		snprintf(num, sizeof(num), ",\"start\":%zu,\"end\":%zu}", start,
			 end);
		out_puts(out, num);
	}
	out_puts(out, "]}}\n");
}
