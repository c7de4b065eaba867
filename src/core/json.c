/*
 * json.c — the JSON string escaper (json.h).
 *
 * One walk over the input serves both outputs: it appends to a buffer, and
 * the stream form hands the buffer to fwrite whenever it fills.  Runs of
 * bytes that need no escape are copied whole.
 */
#include "core/json.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

struct out {
	char *p;   /* next byte */
	char *end; /* NULL: the buffer is big enough (ng_json_quote) */
	char *buf;
	FILE *f; /* stream to drain the buffer into, or NULL */
	bool failed;
};

static void drain(struct out *o)
{
	size_t n = (size_t)(o->p - o->buf);
	if (n && fwrite(o->buf, 1, n, o->f) != n)
		o->failed = true;
	o->p = o->buf;
}

static void put(struct out *o, const void *src, size_t n)
{
	while (o->end && (size_t)(o->end - o->p) < n) {
		size_t room = (size_t)(o->end - o->p);
		memcpy(o->p, src, room);
		o->p += room;
		src = (const char *)src + room;
		n -= room;
		drain(o);
	}
	memcpy(o->p, src, n);
	o->p += n;
}

/* Length of the well-formed UTF-8 sequence at s (RFC 3629 §4's table) of at
 * most `left` bytes, or 0 when it is not one. */
static size_t utf8_len(const unsigned char *s, size_t left)
{
	unsigned char c = s[0];
	size_t n;
	unsigned char lo = 0x80, hi = 0xbf; /* range of the second byte */
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		if (c == 0xe0)
			lo = 0xa0; /* no overlong forms */
		else if (c == 0xed)
			hi = 0x9f; /* no surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f; /* nothing above U+10FFFF */
	} else {
		return 0;
	}
	if (left < n || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

static void escape(struct out *o, const unsigned char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	put(o, "\"", 1);
	size_t run = 0; /* bytes before s[i] that need no escape, not yet put */
	for (size_t i = 0; i < len;) {
		unsigned char c = s[i];
		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
			run++;
			i++;
			continue;
		}
		if (c >= 0x80) {
			size_t n = utf8_len(s + i, len - i);
			if (n) {
				run += n;
				i += n;
				continue;
			}
		}
		put(o, s + i - run, run);
		run = 0;
		char e[6] = {'\\', 0};
		size_t elen = 2;
		switch (c) {
		case '"': e[1] = '"'; break;
		case '\\': e[1] = '\\'; break;
		case '\b': e[1] = 'b'; break;
		case '\f': e[1] = 'f'; break;
		case '\n': e[1] = 'n'; break;
		case '\r': e[1] = 'r'; break;
		case '\t': e[1] = 't'; break;
		default:
			if (c >= 0x80) {
				memcpy(e, "\\ufffd", 6);
			} else {
				memcpy(e, "\\u00", 4);
				e[4] = hex[c >> 4];
				e[5] = hex[c & 15];
			}
			elen = 6;
		}
		put(o, e, elen);
		i++;
	}
	put(o, s + len - run, run);
	put(o, "\"", 1);
}

size_t ng_json_quote(char *out, const char *s, size_t len)
{
	struct out o = {.p = out, .buf = out};
	escape(&o, (const unsigned char *)s, len);
	*o.p = 0;
	return (size_t)(o.p - out);
}

int ng_json_put_str(FILE *f, const char *s)
{
	char buf[512];
	struct out o = {.p = buf, .end = buf + sizeof buf, .buf = buf, .f = f};
	escape(&o, (const unsigned char *)s, strlen(s));
	drain(&o);
	return o.failed ? -1 : 0;
}
