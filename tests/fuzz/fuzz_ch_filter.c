/*
 * fuzz_ch_filter.c — libFuzzer target for the ClickHouse filter compiler
 * (query/filter_sql.h) and the quoting under it (clickhouse/sql.h): a
 * user's filter must never change the shape of the SQL it becomes.
 *
 * The whole input (NUL bytes and all) is first quoted as a string
 * literal (ng_ch_sql_str): its shape must be "?" alone, and reading the
 * literal back by ClickHouse's escape rules (\' \\ \xHH; the bytes
 * between) must give the input's bytes.
 *
 * Then the input up to its first NUL is parsed as a filter (as
 * fuzz_filter does); a filter that parses is compiled for 18.16's
 * column types (FixedString(16) addresses) and for a server with the
 * IPv6 type, over DB.flows and over the hourly rollup's columns (where a
 * term on another column is refused with a message).  Every statement
 * must be well-formed (ng_ch_sql_shape: literals closed, parentheses
 * balanced, printable ASCII, no comment or quoted identifier) and every
 * word outside its literals nagare's own (tests/unit/ch_sql_check.h): a
 * user's value outside a literal would be a word of its own.  A compile
 * that fails says why.  The filter is also compiled inside a top-N
 * statement (query/top_sql.h: by src_as and dst_port, ranked by bytes),
 * held to the same checks with that statement's words.  Any breach
 * aborts.
 *
 * run.sh passes fuzz_filter.dict and seeds of hostile filters.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/ch_sql_check.h"
#include "clickhouse/sql.h"
#include "query/filter_sql.h"
#include "query/top_sql.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The literal of the input reads back as the input. */
static void check_literal(const uint8_t *data, size_t size)
{
	ng_ch_sql q = {0};
	ng_ch_sql_str(&q, data, size);
	if (q.failed) {
		if (!q.too_long || size * 4 + 2 <= NG_CH_SQL_MAX)
			abort();
		ng_ch_sql_free(&q);
		return;
	}
	ng_ch_sql shape = {0};
	char err[128];
	if (ng_ch_sql_shape(q.s, q.len, &shape, err, sizeof err) < 0 || strcmp(shape.s, "?"))
		abort();
	size_t o = 0;
	for (size_t i = 1; i + 1 < q.len; o++) {
		uint8_t c = (uint8_t)q.s[i];
		if (c == '\\' && q.s[i + 1] == 'x') {
			int h = hexval(q.s[i + 2]), l = hexval(q.s[i + 3]);
			if (h < 0 || l < 0)
				abort();
			c = (uint8_t)(h << 4 | l);
			i += 4;
		} else if (c == '\\') {
			c = (uint8_t)q.s[i + 1];
			if (c != '\\' && c != '\'')
				abort();
			i += 2;
		} else {
			i++;
		}
		if (o >= size || data[o] != c)
			abort();
	}
	if (o != size)
		abort();
	ng_ch_sql_free(&shape);
	ng_ch_sql_free(&q);
}

static void check_compiled(const ng_filter *f, const ng_ch_server *sv, const ng_colset *table)
{
	ng_ch_sql q = {0}, shape = {0};
	char err[512];
	if (ng_filter_sql(f, sv, table, table ? "flows_1h" : "flows", &q, err, sizeof err) < 0) {
		if (!err[0])
			abort(); /* a failure says why */
		ng_ch_sql_free(&q);
		return;
	}
	if (q.failed || !q.s)
		abort();
	if (ng_ch_sql_shape(q.s, q.len, &shape, err, sizeof err) < 0)
		abort();
	if (!ch_sql_words_ok(shape.s, NULL))
		abort();
	ng_ch_sql_free(&shape);
	ng_ch_sql_free(&q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_literal(data, size);
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	char err[512];
	ng_filter *f = ng_filter_parse(text, err, sizeof err, NULL);
	free(text);
	if (!f)
		return 0;
	static const ng_ch_server v18 = {.major = 18, .minor = 16};
	static const ng_ch_server v24 = {.major = 24, .minor = 3, .ipv6 = true};
	ng_colset hourly = ng_ch_rollup_dims(true);
	check_compiled(f, &v18, NULL);
	check_compiled(f, &v24, NULL);
	check_compiled(f, &v18, &hourly);
	enum ng_field_id keys[] = {NG_F_SRC_AS, NG_F_DST_PORT};
	ng_ch_sql q = {0}, shape = {0};
	if (ng_top_sql("nagare", keys, 2, "bytes", 10, f, &v24, &q, err, sizeof err) == 0) {
		if (ng_ch_sql_shape(q.s, q.len, &shape, err, sizeof err) < 0 ||
		    !ch_sql_words_in(shape.s, true, NULL))
			abort();
	} else if (!err[0]) {
		abort();
	}
	ng_ch_sql_free(&shape);
	ng_ch_sql_free(&q);
	ng_filter_free(f);
	return 0;
}
