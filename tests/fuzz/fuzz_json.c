/*
 * fuzz_json.c — libFuzzer target for the JSON string escaper (core/json.c).
 *
 * Whatever the input bytes, the output must be one valid JSON string
 * (RFC 8259 §7: quotes around it, no raw control character, only the
 * defined escapes, well-formed UTF-8 inside) that decodes back to the input
 * where the input was well-formed, and the stream form must write the same
 * bytes as the buffer form.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Decodes the JSON string at j (length n) into out; false when invalid.
 * Sets *replaced when it held a U+FFFD escape. */
static bool decode(const char *j, size_t n, char *out, size_t *olen, bool *replaced)
{
	if (n < 2 || j[0] != '"' || j[n - 1] != '"')
		return false;
	size_t o = 0;
	for (size_t i = 1; i < n - 1; i++) {
		unsigned char c = (unsigned char)j[i];
		if (c < 0x20 || c == '"' || c == 0x7f)
			return false;
		if (c != '\\') {
			out[o++] = (char)c;
			continue;
		}
		if (++i >= n - 1)
			return false;
		switch (j[i]) {
		case '"': out[o++] = '"'; break;
		case '\\': out[o++] = '\\'; break;
		case 'b': out[o++] = '\b'; break;
		case 'f': out[o++] = '\f'; break;
		case 'n': out[o++] = '\n'; break;
		case 'r': out[o++] = '\r'; break;
		case 't': out[o++] = '\t'; break;
		case 'u': {
			if (i + 4 >= n - 1)
				return false;
			unsigned v;
			char hex[5] = {j[i + 1], j[i + 2], j[i + 3], j[i + 4], 0};
			if (sscanf(hex, "%4x", &v) != 1)
				return false;
			i += 4;
			if (v == 0xfffd)
				*replaced = true;
			else if (v < 0x20 || v == 0x7f)
				out[o++] = (char)v;
			else
				return false; /* nothing else is escaped */
			break;
		}
		default: return false;
		}
	}
	*olen = o;
	return true;
}

/* True when the n bytes at p are well-formed UTF-8, checked by decoding
 * each code point and testing its value (RFC 3629 §3), not by json.c's
 * table of byte ranges. */
static bool utf8_ok(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned c = p[i], len = c < 0x80       ? 1
		                         : c >> 5 == 6  ? 2
		                         : c >> 4 == 14 ? 3
		                         : c >> 3 == 30 ? 4
		                                        : 0;
		if (!len || i + len > n)
			return false;
		unsigned long v = len == 1 ? c : c & (0x7f >> len);
		for (unsigned k = 1; k < len; k++) {
			if (p[i + k] >> 6 != 2)
				return false;
			v = v << 6 | (p[i + k] & 0x3f);
		}
		static const unsigned long min[5] = {0, 0, 0x80, 0x800, 0x10000};
		if (v < min[len] || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
			return false;
		i += len;
	}
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *q = malloc(NG_JSON_QUOTED_MAX(size)), *back = malloc(size + 1);
	if (!q || !back)
		abort();
	size_t n = ng_json_quote(q, (const char *)data, size);
	if (n + 1 > NG_JSON_QUOTED_MAX(size) || q[n] != 0 || strlen(q) != n)
		abort();
	size_t blen = 0;
	bool replaced = false;
	if (!decode(q, n, back, &blen, &replaced))
		abort();
	if (!utf8_ok((const unsigned char *)back, blen))
		abort();
	if (replaced != !utf8_ok(data, size))
		abort();
	if (!replaced && (blen != size || memcmp(back, data, size)))
		abort();
	/* the stream form, on the input up to its first NUL */
	size_t clen = strnlen((const char *)data, size);
	char *c = malloc(clen + 1);
	if (!c)
		abort();
	memcpy(c, data, clen);
	c[clen] = 0;
	char *mem = NULL;
	size_t mlen = 0;
	FILE *f = open_memstream(&mem, &mlen);
	if (!f || ng_json_put_str(f, c) != 0)
		abort();
	fclose(f);
	size_t n2 = ng_json_quote(q, c, clen);
	if (mlen != n2 || memcmp(mem, q, n2))
		abort();
	free(mem);
	free(c);
	free(q);
	free(back);
	return 0;
}
