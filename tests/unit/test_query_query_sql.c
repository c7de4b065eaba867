/*
 * test_query_query_sql.c — the query model compiled to ClickHouse
 * statements (query/query_sql.h), for every kind of key.
 *
 *   - the statements of an address prefix, an either key, a string key
 *     with a time bucket, each order, word for word (what the server
 *     answers for them is compared with the embedded engine's answers by
 *     tests/e2e/test_clickhouse_query.sh against a real server);
 *   - the prefix masks of IPv4 and IPv6 lengths at the word boundaries;
 *   - "Injection": hostile values in the filter of every statement kind
 *     and key kind give statements of one shape (every literal replaced
 *     by '?', ng_ch_sql_shape) as a harmless value, for both address
 *     types, and every word outside the literals is nagare's own
 *     (ch_sql_check.h);
 *   - key prefixes (completion): an integer's and a string's compared in
 *     SQL word for word, the other kinds left to the executor; hostile
 *     prefixes (quotes, backslashes, comments, keywords, UTF-8, control
 *     bytes, huge numbers, past the longest text) give the shape of a
 *     harmless one, nagare's words only;
 *   - the one statement (ng_query_sql_one: rows, totals and the number of
 *     groups) word for word for an address prefix and a port, an IPv6
 *     address, a string and a MAC (hex()), which queries it takes (a
 *     limit; no either key, key prefix, fold or rollup), and hostile
 *     filters in it as above;
 *   - what is refused: a bad database name.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ch_sql_check.h"
#include "clickhouse/sql.h"
#include "query/query_sql.h"

static const ng_ch_server v18 = {.major = 18, .minor = 16};
static const ng_ch_server v24 = {.major = 24, .minor = 3, .ipv6 = true};

enum kind { GROUPS, NGROUPS, TOTALS, LIST, ONE };

/* The statement of `kind` for keys `keys` ("" for none), order, limit,
 * filter text; NULL with err set when it does not compile. */
static char *compile(enum kind kind, const char *keys, enum ng_order order, size_t limit,
                     const char *filter, const ng_ch_server *sv, char *err, size_t errlen)
{
	ng_query q = {.to_ms = UINT64_MAX, .order = order, .limit = limit};
	ng_filter *f = ng_filter_parse(filter, err, errlen, NULL);
	if (!f)
		fail_msg("'%s' does not parse: %s", filter, err);
	q.filter = f;
	if (*keys && ng_query_parse_keys(&q, keys, err, errlen))
		fail_msg("keys '%s': %s", keys, err);
	ng_ch_sql s = {0};
	int rc = kind == GROUPS    ? ng_query_sql_groups("nagare", &q, sv, &s, err, errlen)
	         : kind == NGROUPS ? ng_query_sql_ngroups("nagare", &q, sv, &s, err, errlen)
	         : kind == TOTALS  ? ng_query_sql_totals("nagare", &q, sv, &s, err, errlen)
	         : kind == ONE     ? ng_query_sql_one("nagare", &q, sv, &s, err, errlen)
	                           : ng_query_sql_list("nagare", &q, sv, &s, err, errlen);
	ng_filter_free(f);
	if (rc) {
		ng_ch_sql_free(&s);
		return NULL;
	}
	return s.s;
}

static char *must(enum kind kind, const char *keys, enum ng_order order, size_t limit,
                  const char *filter, const ng_ch_server *sv)
{
	char err[512];
	char *s = compile(kind, keys, order, limit, filter, sv, err, sizeof err);
	if (!s)
		fail_msg("'%s' / '%s' does not compile: %s", keys, filter, err);
	return s;
}

#define H "reinterpretAsUInt64(reverse(substring(src_addr, 1, 8)))"
#define L "reinterpretAsUInt64(reverse(substring(src_addr, 9, 8)))"

static void test_golden(void **state)
{
	(void)state;
	char *s = must(GROUPS, "srcip4/24", NG_ORDER_BPS, 5, "proto tcp", &v18);
	assert_string_equal(
	    s, "SELECT if(" H " = 0 AND bitShiftRight(" L ", 32) = 65535, bitAnd(" H
	       ", 18446744073709551615), bitAnd(" H ", 18446744073709551615)) AS k0h_, "
	       "if(" H " = 0 AND bitShiftRight(" L ", 32) = 65535, bitAnd(" L
	       ", 18446744073709551360), bitAnd(" L ", 18446744073709551615)) AS k0l_, "
	       "min(flow_start) AS s_, max(flow_end) AS e_, count() AS f_, sum(packets) AS p_, "
	       "sum(bytes) AS b_ FROM nagare.flows WHERE protocol = 6 GROUP BY k0h_, k0l_ "
	       "ORDER BY if(e_ > s_, 8.0 * toFloat64(b_) / (toFloat64(e_ - s_) / 1000.0), 0.0) "
	       "DESC, k0h_ ASC, k0l_ ASC LIMIT 5 FORMAT RowBinary");
	free(s);
	s = must(GROUPS, "port", NG_ORDER_FLOWS, 10, "", &v18);
	assert_string_equal(
	    s, "SELECT arrayJoin([src_port, dst_port]) AS k0_, min(flow_start) AS s_, "
	       "max(flow_end) AS e_, count() AS f_, sum(packets) AS p_, sum(bytes) AS b_ FROM "
	       "nagare.flows WHERE 1 GROUP BY k0_ ORDER BY f_ DESC, reinterpretAsString(k0_) ASC "
	       "LIMIT 10 FORMAT RowBinary");
	free(s);
	s = must(GROUPS, "exporter_name,dstip", NG_ORDER_PPS, 0, "", &v24);
	assert_string_equal(
	    s, "SELECT exporter_name AS k0_, dst_addr AS k1_, min(flow_start) AS s_, max(flow_end) "
	       "AS e_, count() AS f_, sum(packets) AS p_, sum(bytes) AS b_ FROM nagare.flows WHERE "
	       "1 GROUP BY k0_, k1_ ORDER BY if(e_ > s_, toFloat64(p_) / (toFloat64(e_ - s_) / "
	       "1000.0), 0.0) DESC, k0_ ASC, IPv6StringToNum(IPv6NumToString(k1_)) ASC FORMAT "
	       "RowBinary");
	free(s);
	s = must(NGROUPS, "ip", NG_ORDER_BPP, 3, "port 53", &v18);
	assert_string_equal(s, "SELECT count() FROM (SELECT arrayJoin([src_addr, dst_addr]) AS "
	                       "k0_, 1 FROM nagare.flows WHERE (src_port = 53 OR dst_port = 53) "
	                       "GROUP BY k0_) FORMAT RowBinary");
	free(s);
	s = must(TOTALS, "", NG_ORDER_FLOWS, 0, "not proto udp", &v18);
	assert_string_equal(s, "SELECT count(), sum(packets), sum(bytes), min(flow_start), "
	                       "max(flow_end) FROM nagare.flows WHERE NOT (protocol = 17) FORMAT "
	                       "RowBinary");
	free(s);
	s = must(LIST, "", NG_ORDER_FLOWS, 20, "", &v18);
	assert_true(!strncmp(s, "SELECT time_received, flow_start, flow_end, ", 44));
	assert_non_null(strstr(s, " FROM nagare.flows WHERE 1 ORDER BY flow_start, time_received, "
	                          "flow_end, "));
	assert_non_null(strstr(s, " LIMIT 20 FORMAT RowBinary"));
	free(s);
}

/* A time bucket (the series' key) and a time range. */
static void test_bucket_and_range(void **state)
{
	(void)state;
	ng_query q = {.from_ms = 1000, .to_ms = 7200000, .order = NG_ORDER_BYTES, .limit = 2};
	char err[256];
	assert_int_equal(ng_query_parse_keys(&q, "flow_start,src_country", err, sizeof err), 0);
	q.keys[0].bucket_ms = 300000;
	ng_ch_sql s = {0};
	assert_int_equal(ng_query_sql_groups("db_1", &q, &v18, &s, err, sizeof err), 0);
	assert_string_equal(
	    s.s, "SELECT toUInt64(intDiv(flow_start, 300000) * 300000) AS k0_, src_country AS k1_, "
	         "min(flow_start) AS s_, max(flow_end) AS e_, count() AS f_, sum(packets) AS p_, "
	         "sum(bytes) AS b_ FROM db_1.flows WHERE flow_start >= 1000 AND flow_start < "
	         "7200000 AND 1 GROUP BY k0_, k1_ ORDER BY b_ DESC, reinterpretAsString(k0_) ASC, "
	         "k1_ ASC LIMIT 2 FORMAT RowBinary");
	ng_ch_sql_free(&s);
}

/* A series' buckets (sums only) read the hourly rollup when the range,
 * the bucket, the keys and the filter allow, the minutely one when only
 * minutes fit, and flows otherwise. */
static void test_rollups(void **state)
{
	(void)state;
	static const struct {
		uint64_t from, to, bucket;
		const char *keys, *filter, *table;
		bool sums_only;
	} t[] = {
	    {0, UINT64_MAX, 3600000, "proto", "exporter_name lab", "flows_1h", true},
	    {7200000, 14400000, 7200000, "dstport,srcas", "", "flows_1h", true},
	    {60000, 14400000, 3600000, "proto", "", "flows_1m", true},
	    {0, UINT64_MAX, 300000, "srcas", "", "flows_1m", true},
	    {0, UINT64_MAX, 300000, "dstport", "", "flows", true}, /* no dst_port a minute */
	    {0, UINT64_MAX, 3600000, "proto", "", "flows", false},
	    {0, UINT64_MAX, 3600000, "proto", "src port 53", "flows", true},
	    {0, UINT64_MAX, 3600000, "proto", "duration > 10", "flows", true},
	    {0, UINT64_MAX, 1000, "proto", "", "flows", true},
	    {0, UINT64_MAX, 3600000, "srcip", "", "flows", true},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		ng_query q = {.from_ms = t[i].from, .to_ms = t[i].to, .sums_only = t[i].sums_only};
		char err[512];
		assert_int_equal(ng_query_parse_keys(&q, "flow_start", err, sizeof err), 0);
		assert_int_equal(ng_query_parse_keys(&q, t[i].keys, err, sizeof err), 0);
		q.keys[0].bucket_ms = t[i].bucket;
		q.filter = ng_filter_parse(t[i].filter, err, sizeof err, NULL);
		assert_non_null(q.filter);
		ng_ch_sql s = {0};
		assert_int_equal(ng_query_sql_groups("nagare", &q, &v18, &s, err, sizeof err), 0);
		char want[64];
		snprintf(want, sizeof want, " FROM nagare.%s WHERE ", t[i].table);
		if (!strstr(s.s, want))
			fail_msg("case %zu: not from %s: %s", i, t[i].table, s.s);
		bool rollup = strcmp(t[i].table, "flows") != 0;
		assert_int_equal(strstr(s.s, "sum(flows) AS f_") != NULL, rollup);
		assert_int_equal(strstr(s.s, "intDiv(time, ") != NULL, rollup);
		ng_ch_sql_free(&s);
		ng_filter_free(q.filter);
	}
	ng_query q = {.from_ms = 3600000, .to_ms = 7200000, .sums_only = true};
	char err[256];
	assert_int_equal(ng_query_parse_keys(&q, "flow_start,proto", err, sizeof err), 0);
	q.keys[0].bucket_ms = 3600000;
	q.filter = ng_filter_parse("exporter_name lab", err, sizeof err, NULL);
	ng_ch_sql s = {0};
	assert_int_equal(ng_query_sql_groups("nagare", &q, &v18, &s, err, sizeof err), 0);
	assert_string_equal(
	    s.s,
	    "SELECT toUInt64(intDiv(time, 3600000) * 3600000) AS k0_, protocol AS k1_, "
	    "min(time) AS s_, max(time) AS e_, sum(flows) AS f_, sum(packets) AS p_, sum(bytes) "
	    "AS b_ FROM nagare.flows_1h WHERE time >= 3600000 AND time < 7200000 AND "
	    "position(lower(exporter_name), 'lab') > 0 GROUP BY k0_, k1_ ORDER BY f_ DESC, "
	    "reinterpretAsString(k0_) ASC, reinterpretAsString(k1_) ASC FORMAT RowBinary");
	ng_ch_sql_free(&s);
	ng_filter_free(q.filter);
}

/* The masks of the two halves at the boundaries of the lengths (an IPv4
 * /32 and an IPv6 /64 keep their half whole, /1 keeps its first bit). */
static void test_prefix_masks(void **state)
{
	(void)state;
	static const struct {
		const char *keys, *m4lo, *m6hi, *m6lo;
	} t[] = {
	    {"srcip4/32", "18446744073709551615", "18446744073709551615", "18446744073709551615"},
	    {"srcip4/1", "18446744071562067968", "18446744073709551615", "18446744073709551615"},
	    {"srcip6/64", "18446744073709551615", "18446744073709551615", "0"},
	    {"srcip6/1", "18446744073709551615", "9223372036854775808", "0"},
	    {"srcip6/65,srcip4/8", "18446744073692774400", "18446744073709551615",
	     "9223372036854775808"},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		char *s = must(GROUPS, t[i].keys, NG_ORDER_FLOWS, 1, "", &v18);
		char want[256];
		/* hi: v4 keeps it whole; lo: the v4 mask; then the v6 masks */
		snprintf(want, sizeof want, "bitAnd(" L ", %s), bitAnd(" L ", %s)) AS k0l_",
		         t[i].m4lo, t[i].m6lo);
		assert_non_null(strstr(s, want));
		snprintf(want, sizeof want,
		         "bitAnd(" H ", 18446744073709551615), bitAnd(" H ", %s)) AS k0h_",
		         t[i].m6hi);
		if (!strstr(s, want))
			fail_msg("%s: no '%s' in %s", t[i].keys, want, s);
		free(s);
	}
}

/* Hostile values in every statement and key kind: one shape, nagare's
 * words only. */
static void test_injection(void **state)
{
	(void)state;
	static const char *const keys[] = {
	    "srcip4/24,dstip6/48", "ip",       "srcport,proto", "src_net", "dstmac",
	    "exporter_name,srcas", "flow_end", "conv"};
	/* a harmless value and a hostile one of the same term */
	static const char *const pairs[][2] = {
	    {"src net-name \"a\"", "src net-name \"'; DROP TABLE flows; --\""},
	    {"exporter_name x", "exporter_name '\\'"},
	    {"dst net-name ~ \"abc\"", "dst net-name ~ \"/* x */ ) OR 1 = 1 FORMAT TSV \\\\ \""},
	    {"src net-name \"a\"", "src net-name \"\\x27\""},
	    {"src net-name \"a\"", "src net-name \"東京 \\\\' x\""},
	};
	const ng_ch_server *svs[] = {&v18, &v24};
	for (size_t v = 0; v < 2; v++)
		for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
			for (int kind = GROUPS; kind <= LIST; kind++) {
				for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
					const char *kk =
					    kind == LIST || kind == TOTALS ? "" : keys[k];
					ng_ch_sql ref = {0}, sh = {0};
					char err[512];
					char *h =
					    must(kind, kk, NG_ORDER_BPP, 7, pairs[i][0], svs[v]);
					assert_int_equal(
					    ng_ch_sql_shape(h, strlen(h), &ref, err, sizeof err),
					    0);
					char *x =
					    must(kind, kk, NG_ORDER_BPP, 7, pairs[i][1], svs[v]);
					if (ng_ch_sql_shape(x, strlen(x), &sh, err, sizeof err))
						fail_msg("'%s': %s in %s", pairs[i][1], err, x);
					if (strcmp(sh.s, ref.s))
						fail_msg("'%s': shape\n%s\nnot\n%s", pairs[i][1],
						         sh.s, ref.s);
					const char *bad = NULL;
					if (!ch_sql_query_words_ok(sh.s, &bad))
						fail_msg("'%s': word '%.20s' in %s", pairs[i][1],
						         bad, sh.s);
					ng_ch_sql_free(&sh);
					ng_ch_sql_free(&ref);
					free(h);
					free(x);
				}
			}
}

/* The one statement (ng_query_sql_one): word for word, the queries it
 * takes and those it leaves to three, hostile filters in it. */
static void test_one(void **state)
{
	(void)state;
	char *s = must(ONE, "srcip4/24,dstport", NG_ORDER_BYTES, 5, "proto tcp", &v18);
	assert_string_equal(
	    s, "WITH if(" H " = 0 AND bitShiftRight(" L ", 32) = 65535, bitAnd(" H
	       ", 18446744073709551615), bitAnd(" H ", 18446744073709551615)) AS k0h_, "
	       "if(" H " = 0 AND bitShiftRight(" L ", 32) = 65535, bitAnd(" L
	       ", 18446744073709551360), bitAnd(" L ", 18446744073709551615)) AS k0l_, "
	       "dst_port AS k1_ SELECT k0h_, k0l_, k1_, "
	       "min(flow_start) AS s_, max(flow_end) AS e_, count() AS f_, sum(packets) AS p_, "
	       "sum(bytes) AS b_ FROM nagare.flows WHERE protocol = 6 GROUP BY k0h_, k0l_, k1_ "
	       "WITH TOTALS ORDER BY b_ DESC, k0h_ ASC, k0l_ ASC, reinterpretAsString(k1_) ASC "
	       "LIMIT 5 FORMAT JSONCompact");
	free(s);
	s = must(ONE, "dstip,exporter_name,srcmac", NG_ORDER_FLOWS, 3, "", &v24);
	assert_string_equal(
	    s, "WITH dst_addr AS k0_, exporter_name AS k1_, src_mac AS k2_ SELECT "
	       "hex(IPv6StringToNum(IPv6NumToString(k0_))) AS k0x_, hex(k1_) AS k1x_, hex(k2_) AS "
	       "k2x_, min(flow_start) AS s_, max(flow_end) AS e_, count() AS f_, sum(packets) AS "
	       "p_, sum(bytes) AS b_ FROM nagare.flows WHERE 1 GROUP BY k0_, k1_, k2_ WITH TOTALS "
	       "ORDER BY f_ DESC, IPv6StringToNum(IPv6NumToString(k0_)) ASC, k1_ ASC, k2_ ASC "
	       "LIMIT 3 FORMAT JSONCompact");
	free(s);
	/* taken: a limit, keys of one side; refused: no limit, an either
	 * key, a key prefix, a rollup */
	static const struct {
		const char *keys;
		size_t limit;
		const char *prefix;
		bool sums_only, taken;
	} cases[] = {
	    {"srcip", 10, NULL, false, true},   {"srcip", 0, NULL, false, false},
	    {"ip", 10, NULL, false, false},     {"proto,port", 10, NULL, false, false},
	    {"srcport", 10, "4", false, false}, {"srcport", 10, "", false, true},
	    {"proto", 10, NULL, true, false},   {"srcip6/64,dstas", 1, NULL, false, true},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char err[512] = "";
		ng_query q = {.to_ms = UINT64_MAX, .limit = cases[i].limit};
		if (ng_query_parse_keys(&q, cases[i].keys, err, sizeof err))
			fail_msg("keys '%s': %s", cases[i].keys, err);
		q.key_prefix = cases[i].prefix;
		q.sums_only = cases[i].sums_only;
		ng_ch_sql o = {0};
		int rc = ng_query_sql_one("nagare", &q, &v18, &o, err, sizeof err);
		if (ng_query_sql_one_statement(&q, &v18) != cases[i].taken ||
		    (rc == 0) != cases[i].taken || (rc && !err[0]))
			fail_msg("case %zu '%s': taken %d, rc %d (%s)", i, cases[i].keys,
			         ng_query_sql_one_statement(&q, &v18), rc, err);
		ng_ch_sql_free(&o);
	}
	static const char *const pairs[][2] = {
	    {"src net-name \"a\"", "src net-name \"'; DROP TABLE flows; --\""},
	    {"exporter_name x", "exporter_name '\\'"},
	    {"dst net-name ~ \"abc\"", "dst net-name ~ \"/* x */ ) OR 1 = 1 FORMAT TSV \\\\ \""},
	};
	static const char *const keys[] = {"srcip4/24,dstip6/48", "src_net", "dstmac", "flow_end"};
	const ng_ch_server *svs[] = {&v18, &v24};
	for (size_t v = 0; v < 2; v++)
		for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
			for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
				ng_ch_sql ref = {0}, sh = {0};
				char err[512];
				char *h = must(ONE, keys[k], NG_ORDER_BPS, 7, pairs[i][0], svs[v]);
				char *x = must(ONE, keys[k], NG_ORDER_BPS, 7, pairs[i][1], svs[v]);
				assert_int_equal(
				    ng_ch_sql_shape(h, strlen(h), &ref, err, sizeof err), 0);
				if (ng_ch_sql_shape(x, strlen(x), &sh, err, sizeof err))
					fail_msg("'%s': %s in %s", pairs[i][1], err, x);
				if (strcmp(sh.s, ref.s))
					fail_msg("'%s': shape\n%s\nnot\n%s", pairs[i][1], sh.s,
					         ref.s);
				const char *bad = NULL;
				if (!ch_sql_query_words_ok(sh.s, &bad))
					fail_msg("'%s': word '%.20s' in %s", pairs[i][1], bad,
					         sh.s);
				ng_ch_sql_free(&sh);
				ng_ch_sql_free(&ref);
				free(h);
				free(x);
			}
}

static void test_refused(void **state)
{
	(void)state;
	char err[256];
	ng_query q = {.to_ms = UINT64_MAX};
	assert_int_equal(ng_query_parse_keys(&q, "srcip", err, sizeof err), 0);
	ng_ch_sql s = {0};
	assert_int_equal(ng_query_sql_groups("x; DROP", &q, &v18, &s, err, sizeof err), -1);
	assert_string_equal(err, "a ClickHouse database name is [A-Za-z0-9_]+");
	ng_ch_sql_free(&s);
}

/* The group-by (or its count, ngroups) of keys with key prefix `prefix`,
 * limit 10, order bytes. */
static char *with_prefix(bool ngroups, const char *keys, const char *prefix, const ng_ch_server *sv)
{
	char err[512];
	ng_query q = {.to_ms = UINT64_MAX, .order = NG_ORDER_BYTES, .limit = 10};
	if (ng_query_parse_keys(&q, keys, err, sizeof err))
		fail_msg("keys '%s': %s", keys, err);
	if (!strcmp(keys, "flow_start"))
		q.keys[0].bucket_ms = 60000;
	q.key_prefix = prefix;
	ng_ch_sql s = {0};
	int rc = ngroups ? ng_query_sql_ngroups("nagare", &q, sv, &s, err, sizeof err)
	                 : ng_query_sql_groups("nagare", &q, sv, &s, err, sizeof err);
	if (rc)
		fail_msg("'%s' prefix '%s': %s", keys, prefix, err);
	return s.s;
}

/* Key prefixes (the completion of filter values): an integer's and a
 * string's text compared in SQL, word for word; the other kinds left to
 * the executor (every group: no LIMIT, no HAVING). */
static void test_key_prefix(void **state)
{
	(void)state;
	char *s = with_prefix(false, "srcas", "64A", &v18);
	assert_non_null(strstr(
	    s, " GROUP BY k0_ HAVING lower(substring(toString(k0_), 1, 3)) = '64a' ORDER BY "));
	assert_non_null(strstr(s, " LIMIT 10 FORMAT RowBinary"));
	free(s);
	s = with_prefix(true, "srcas", "64A", &v18);
	assert_non_null(strstr(
	    s, " GROUP BY k0_ HAVING lower(substring(toString(k0_), 1, 3)) = '64a') FORMAT "));
	free(s);
	s = with_prefix(false, "src_net,proto", "O'B", &v24);
	assert_non_null(strstr(s, " HAVING lower(substring(substring(k0_, 1, 63), 1, 3)) = "
	                          "'o\\'b' ORDER BY "));
	free(s);
	static const char *const executor[] = {
	    "srcip", "srcip4/24", "dstmac", "flow_start", "flow_end", "ip", "sampling_source"};
	for (size_t i = 0; i < sizeof executor / sizeof executor[0]; i++) {
		ng_query q = {.to_ms = UINT64_MAX, .key_prefix = "1"};
		char err[256];
		assert_int_equal(ng_query_parse_keys(&q, executor[i], err, sizeof err), 0);
		if (!strcmp(executor[i], "flow_start"))
			q.keys[0].bucket_ms = 60000;
		assert_false(ng_query_sql_prefix_in_sql(&q));
		s = with_prefix(false, executor[i], "1", &v24);
		if (strstr(s, "HAVING") || strstr(s, "LIMIT"))
			fail_msg("%s: %s", executor[i], s);
		free(s);
	}
	ng_query q = {.to_ms = UINT64_MAX};
	char err[256];
	assert_int_equal(ng_query_parse_keys(&q, "exporter_name", err, sizeof err), 0);
	assert_false(ng_query_sql_prefix_in_sql(&q));
	q.key_prefix = "";
	assert_false(ng_query_sql_prefix_in_sql(&q));
	q.key_prefix = "x";
	assert_true(ng_query_sql_prefix_in_sql(&q));
}

/* Hostile key prefixes: one shape as a harmless one, nagare's words only
 * (a prefix's length is a number: '?' in the shape too). */
static void test_key_prefix_injection(void **state)
{
	(void)state;
	static const char *const keys[] = {"srcas",   "src_net", "exporter_name,srcas",
	                                   "dstport", "srcip",   "flow_start"};
	static const char *const hostile[] = {
	    "'",
	    "\\",
	    "\\'",
	    "') OR 1 = 1 --",
	    "1' OR '1",
	    "x'; DROP TABLE nagare.flows; --",
	    "/* x */ ) FORMAT TSV",
	    "東京 \\' x",
	    "\x27",
	    "\"quoted\" `back`",
	    "\t\n\r",
	    "18446744073709551616999",
	    "SELECT FROM WHERE HAVING UNION",
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'",
	};
	const ng_ch_server *svs[] = {&v18, &v24};
	for (size_t v = 0; v < 2; v++)
		for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
			for (int ng = 0; ng < 2; ng++) {
				char err[512];
				ng_ch_sql ref = {0};
				char *h = with_prefix(ng, keys[k], "a", svs[v]);
				assert_int_equal(
				    ng_ch_sql_shape(h, strlen(h), &ref, err, sizeof err), 0);
				for (size_t i = 0; i < sizeof hostile / sizeof hostile[0]; i++) {
					ng_ch_sql sh = {0};
					char *x = with_prefix(ng, keys[k], hostile[i], svs[v]);
					if (ng_ch_sql_shape(x, strlen(x), &sh, err, sizeof err))
						fail_msg("'%s': %s in %s", hostile[i], err, x);
					if (strcmp(sh.s, ref.s))
						fail_msg("'%s': shape\n%s\nnot\n%s", hostile[i],
						         sh.s, ref.s);
					const char *bad = NULL;
					if (!ch_sql_query_words_ok(sh.s, &bad))
						fail_msg("'%s': word '%.20s' in %s", hostile[i],
						         bad, sh.s);
					ng_ch_sql_free(&sh);
					free(x);
				}
				ng_ch_sql_free(&ref);
				free(h);
			}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_golden),
	    cmocka_unit_test(test_bucket_and_range),
	    cmocka_unit_test(test_prefix_masks),
	    cmocka_unit_test(test_injection),
	    cmocka_unit_test(test_refused),
	    cmocka_unit_test(test_rollups),
	    cmocka_unit_test(test_one),
	    cmocka_unit_test(test_key_prefix),
	    cmocka_unit_test(test_key_prefix_injection),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
