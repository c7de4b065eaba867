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
 * held to the same checks with that statement's words, and into the
 * query model's statements (query/query_sql.h: a group-by, its count of
 * groups, its totals, a listing and the one statement of rows, totals and
 * groups where it is taken) with keys and order picked by the
 * input's length from a table of every key kind (prefixes, either keys,
 * strings, MACs, times, buckets), for both address types.  The input's
 * text (up to its first NUL) is also a key prefix (the completion of
 * filter values) of the group-by and its count of groups over integer,
 * string and address keys: their shape must be that of the prefix "a".
 * Any breach aborts.
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
#include "query/query_sql.h"
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

/* The query model's five statements of filter f, keys and order picked
 * by `pick`, on server sv: well-formed, nagare's words only, or an error
 * that says why. */
static void check_model(const ng_filter *f, size_t pick, const ng_ch_server *sv)
{
	static const char *const keys[] = {"srcip4/24,dstip6/64", "ip",     "port,proto",
	                                   "src_net,dst_as_name", "srcmac", "exporter,inif",
	                                   "flow_start",          "conv",   "mac"};
	ng_query qm = {.to_ms = UINT64_MAX - pick, .from_ms = pick, .filter = (ng_filter *)f};
	qm.order = (enum ng_order)(pick % 6);
	qm.limit = pick % 3 ? pick : 0;
	char err[512];
	if (ng_query_parse_keys(&qm, keys[pick % (sizeof keys / sizeof keys[0])], err, sizeof err))
		abort();
	if (pick % 5 == 0 && qm.keys[0].field == NG_F_FLOW_START)
		qm.keys[0].bucket_ms = 60000 + pick;
	int rc_groups = -1;
	for (int kind = 0; kind < 5; kind++) {
		ng_query qk = qm;
		if (kind == 3)
			qk.nkeys = 0;
		ng_ch_sql q = {0}, shape = {0};
		err[0] = 0;
		int rc = kind == 0   ? ng_query_sql_groups("nagare", &qk, sv, &q, err, sizeof err)
		         : kind == 1 ? ng_query_sql_ngroups("nagare", &qk, sv, &q, err, sizeof err)
		         : kind == 2 ? ng_query_sql_totals("nagare", &qk, sv, &q, err, sizeof err)
		         : kind == 3 ? ng_query_sql_list("nagare", &qk, sv, &q, err, sizeof err)
		                     : ng_query_sql_one("nagare", &qk, sv, &q, err, sizeof err);
		/* the one statement: where it is taken, as the group-by compiles */
		if (kind == 0)
			rc_groups = rc;
		if (kind == 4 &&
		    (rc == 0) != (ng_query_sql_one_statement(&qk, sv) && rc_groups == 0))
			abort();
		if (rc == 0) {
			if (ng_ch_sql_shape(q.s, q.len, &shape, err, sizeof err) < 0 ||
			    !ch_sql_query_words_ok(shape.s, NULL))
				abort();
		} else if (!err[0]) {
			abort();
		}
		ng_ch_sql_free(&shape);
		ng_ch_sql_free(&q);
	}
}

/* The group-by and group-count statements of the input's text (up to its
 * first NUL) as a key prefix (the completion of filter values), for an
 * integer, a string, a one-of-two and an address key: the shape of the
 * harmless prefix "a", nagare's words only. */
static void check_prefix(const char *prefix, const ng_ch_server *sv)
{
	static const char *const keys[] = {"srcas", "src_net", "exporter_name,proto", "srcip"};
	char err[512];
	for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
		for (int ng = 0; ng < 2; ng++) {
			ng_ch_sql out[2] = {{0}}, shape[2] = {{0}};
			for (int i = 0; i < 2; i++) {
				ng_query q = {.to_ms = UINT64_MAX, .limit = 10};
				if (ng_query_parse_keys(&q, keys[k], err, sizeof err))
					abort();
				q.key_prefix = i ? prefix : "a";
				int rc = ng ? ng_query_sql_ngroups("nagare", &q, sv, &out[i], err,
				                                   sizeof err)
				            : ng_query_sql_groups("nagare", &q, sv, &out[i], err,
				                                  sizeof err);
				if (rc ||
				    ng_ch_sql_shape(out[i].s, out[i].len, &shape[i], err,
				                    sizeof err) < 0 ||
				    !ch_sql_query_words_ok(shape[i].s, NULL))
					abort();
			}
			if (strcmp(shape[0].s, shape[1].s))
				abort();
			for (int i = 0; i < 2; i++) {
				ng_ch_sql_free(&out[i]);
				ng_ch_sql_free(&shape[i]);
			}
		}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_literal(data, size);
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	static const ng_ch_server pv18 = {.major = 18, .minor = 16};
	static const ng_ch_server pv24 = {.major = 24, .minor = 3, .ipv6 = true};
	if (*text) {
		check_prefix(text, &pv18);
		check_prefix(text, &pv24);
	}
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
	check_model(f, size, &v18);
	check_model(f, size, &v24);
	ng_filter_free(f);
	return 0;
}
