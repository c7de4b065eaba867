/*
 * fuzz_ch_exporters.c — the RowBinary answers `nagare serve --clickhouse`
 * reads for /api/v1/exporters (http/exporters_ch.c,
 * ng_exporters_ch_write): the input is the three answers (flows_1h's
 * rows, the exporters' last seen, the interfaces) separated by "NGCH",
 * then paged with limit and offset from its first two bytes.  Invariants,
 * abort on a break: an answer that parses gives one JSON object whose
 * brackets balance outside its strings, with no control byte inside a
 * string (names are quoted by core/json.c), "returned" at most "total";
 * one that does not writes nothing.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/http_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Brackets balanced outside strings, no raw control byte in a string,
 * the document ends with "}\n". */
static void check_json(const char *j, size_t n)
{
	int depth = 0;
	bool in = false, esc = false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)j[i];
		if (in) {
			if (c < 0x20)
				abort();
			if (esc)
				esc = false;
			else if (c == '\\')
				esc = true;
			else if (c == '"')
				in = false;
			continue;
		}
		if (c == '"')
			in = true;
		else if (c == '{' || c == '[')
			depth++;
		else if (c == '}' || c == ']')
			if (--depth < 0)
				abort();
	}
	if (in || depth || n < 2 || j[n - 2] != '}' || j[n - 1] != '\n')
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	size_t limit = data[0] ? data[0] : SIZE_MAX, offset = data[1];
	const char *p = (const char *)data + 2, *end = (const char *)data + size;
	const char *body[3] = {NULL, NULL, NULL};
	size_t len[3] = {0, 0, 0};
	for (int i = 0; i < 3 && p <= end; i++) {
		const char *sep = NULL;
		for (const char *q = p; i < 2 && q + 4 <= end; q++)
			if (!memcmp(q, "NGCH", 4)) {
				sep = q;
				break;
			}
		body[i] = p;
		len[i] = (size_t)((sep ? sep : end) - p);
		if (!sep)
			break;
		p = sep + 4;
	}
	char *out = NULL;
	size_t olen = 0;
	FILE *f = open_memstream(&out, &olen);
	if (!f)
		return 0;
	char err[128];
	int rc =
	    ng_exporters_ch_write(f, body, len, limit, offset, 1796162254111ull, err, sizeof err);
	fclose(f);
	if (rc == 0) {
		check_json(out, olen);
		const char *t = strstr(out, "\"total\":"), *r = strstr(out, "\"returned\":");
		if (!t || !r || strtoull(r + 11, NULL, 10) > strtoull(t + 8, NULL, 10))
			abort();
	} else if (olen) {
		abort();
	}
	free(out);
	return 0;
}
