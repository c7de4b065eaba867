/*
 * fuzz_geocsv.c — libFuzzer target for the ip-location-db ASN CSV parser
 * (src/enrich/geocsv.c), which reads a downloaded file.
 *
 * Whatever the bytes: no read outside the input, every row given has a
 * range of one family whose end is not before its start and a name no
 * longer than NG_GEOCSV_FIELD_MAX, rows + refused lines never exceed the
 * lines, and the first refused line is one of them with a cause.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "enrich/enrich_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int row(void *arg, const ng_geocsv_row *r)
{
	size_t *n = arg;
	static const uint8_t v4pre[12];
	if (memcmp(r->lo, r->hi, 16) > 0 || r->name_len > NG_GEOCSV_FIELD_MAX)
		abort();
	if (!r->v6 && (memcmp(r->lo, v4pre, 12) || memcmp(r->hi, v4pre, 12)))
		abort();
	if (r->name_len && !r->name)
		abort();
	volatile char sink = 0;
	for (size_t i = 0; i < r->name_len; i++)
		sink ^= r->name[i]; /* ASan: the name is readable */
	(void)sink;
	(*n)++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a copy of exactly `size` bytes: a read past the end is caught */
	char *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	size_t n = 0;
	ng_geocsv_stats st;
	size_t rows = ng_geocsv_parse(buf, size, row, &n, &st);
	if (rows != n || st.rows != n || st.rows + st.bad > st.lines)
		abort();
	if (st.bad && (!st.first_bad_line || st.first_bad_line > st.lines || !st.first_bad_why))
		abort();
	free(buf);
	return 0;
}
