/*
 * test_query_filter_sql.c — the filter compiled to ClickHouse SQL
 * (query/filter_sql.h) and the quoting functions under it
 * (clickhouse/sql.h).
 *
 *   - the literals of each type, byte for byte (what ClickHouse reads
 *     them as is checked against a real server by
 *     tests/e2e/test_clickhouse_filter.sh, SELECT hex(literal));
 *   - the SQL of a few filters, word for word;
 *   - "Injection": a table of hostile values (quotes, backslashes,
 *     comments, NUL-free control bytes, UTF-8 and invalid UTF-8, huge
 *     numbers, addresses whose bytes are quotes and backslashes, SQL
 *     keywords) in each kind of term: each compiles to a statement of the
 *     same shape (every literal replaced by '?', ng_ch_sql_shape) as a
 *     harmless value of that term, for both address types, and every
 *     word outside the literals is nagare's own (ch_sql_check.h);
 *   - the errors: a column a table lacks, a statement past NG_CH_SQL_MAX.
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
#include "core/addr.h"
#include "query/filter_sql.h"
#include "query/top_sql.h"

static const ng_ch_server v18 = {.major = 18, .minor = 16};
static const ng_ch_server v24 = {.major = 24, .minor = 3, .ipv6 = true};

static void test_string_literals(void **state)
{
	(void)state;
	ng_ch_sql q = {0};
	static const char bytes[] = "a'b\\c\0\x01\x1f\x7f\xff\xc3(";
	ng_ch_sql_str(&q, bytes, sizeof bytes - 1);
	assert_string_equal(q.s, "'a\\'b\\\\c\\x00\\x01\\x1f\\x7f\\xff\\xc3('");
	ng_ch_sql_free(&q);
	ng_ch_sql_str(&q, "", 0);
	assert_string_equal(q.s, "''");
	ng_ch_sql_free(&q);
	ng_ch_sql_str(&q, "東", strlen("東"));
	assert_string_equal(q.s, "'\\xe6\\x9d\\xb1'");
	ng_ch_sql_free(&q);
}

static void test_uint_literals(void **state)
{
	(void)state;
	ng_ch_sql q = {0};
	assert_int_equal(ng_ch_sql_uint(&q, 255, ng_ch_sql_uint_max(1)), 0);
	assert_int_equal(ng_ch_sql_uint(&q, 256, ng_ch_sql_uint_max(1)), -1);
	assert_int_equal(ng_ch_sql_uint(&q, 65536, ng_ch_sql_uint_max(2)), -1);
	assert_int_equal(ng_ch_sql_uint(&q, UINT32_MAX + 1ull, ng_ch_sql_uint_max(4)), -1);
	ng_ch_sql_raw(&q, " ");
	assert_int_equal(ng_ch_sql_uint(&q, UINT64_MAX, ng_ch_sql_uint_max(8)), 0);
	assert_string_equal(q.s, "255 18446744073709551615");
	ng_ch_sql_free(&q);
}

static void test_addr_mac_literals(void **state)
{
	(void)state;
	uint8_t a[16], m[6] = {0x27, 0x5c, 0, 0xff, 0x20, 0x41};
	assert_true(ng_addr_parse("39.92.0.1", a));
	ng_ch_sql q = {0};
	ng_ch_sql_addr(&q, a, &v18);
	assert_string_equal(q.s, "'\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\xff\\xff"
	                         "\\'\\\\\\x00\\x01'");
	ng_ch_sql_free(&q);
	ng_ch_sql_addr(&q, a, &v24);
	assert_string_equal(q.s, "toIPv6('::ffff:39.92.0.1')");
	ng_ch_sql_free(&q);
	assert_true(ng_addr_parse("2001:db8::1", a));
	ng_ch_sql_addr(&q, a, &v24);
	assert_string_equal(q.s, "toIPv6('2001:db8::1')");
	ng_ch_sql_free(&q);
	ng_ch_sql_mac(&q, m);
	assert_string_equal(q.s, "'\\'\\\\\\x00\\xff A'");
	ng_ch_sql_free(&q);
}

/* The SQL of `filter` for server sv; fails the test when it does not
 * compile. */
static char *compile(const char *filter, const ng_ch_server *sv)
{
	char err[512];
	ng_filter *f = ng_filter_parse(filter, err, sizeof err, NULL);
	if (!f)
		fail_msg("'%s' does not parse: %s", filter, err);
	ng_ch_sql q = {0};
	if (ng_filter_sql(f, sv, NULL, "flows", &q, err, sizeof err) < 0)
		fail_msg("'%s' does not compile: %s", filter, err);
	ng_filter_free(f);
	return q.s;
}

static void test_golden(void **state)
{
	(void)state;
	static const struct {
		const char *filter, *sql;
	} g[] = {
	    {"", "1"},
	    {"proto tcp and dst port 443", "(protocol = 6 AND dst_port = 443)"},
	    {"port 53 or not proto udp or bytes >= 1k",
	     "((src_port = 53 OR dst_port = 53) OR NOT (protocol = 17) OR bytes >= 1000)"},
	    {"src port in [443 80]", "src_port IN (80, 443)"},
	    {"dscp 46", "bitShiftRight(tos, 2) = 46"},
	    {"flags SA and not flags F",
	     "(bitAnd(tcp_flags, 18) = 18 AND bitAnd(tcp_flags, 1) = 0)"},
	    {"country JP", "(lower(src_country) = 'jp' OR lower(dst_country) = 'jp')"},
	    {"dst asname Google", "position(lower(dst_as_name), 'google') > 0"},
	    {"bpp > 100", "if(packets = 0, 0, intDiv(bytes, greatest(packets, 1))) > 100"},
	    {"src net ::/0", "1"},
	    {"flows 2", "0"},
	    {"exporter 192.0.2.1",
	     "exporter = "
	     "'\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\xff\\xff\\xc0\\x00\\x02\\x01'"},
	};
	for (size_t i = 0; i < sizeof g / sizeof g[0]; i++) {
		char *s = compile(g[i].filter, &v18);
		if (strcmp(s, g[i].sql))
			fail_msg("'%s':\n  got  %s\n  want %s", g[i].filter, s, g[i].sql);
		free(s);
	}
	char *s = compile("dst net 10.0.0.0/8", &v24);
	assert_string_equal(s, "(dst_addr >= toIPv6('::ffff:10.0.0.0') AND dst_addr <= "
	                       "toIPv6('::ffff:10.255.255.255'))");
	free(s);
}

/* The shape of filter's SQL (checked well-formed, its words nagare's). */
static char *shape_of(const char *filter, const ng_ch_server *sv)
{
	char *sql = compile(filter, sv);
	ng_ch_sql out = {0};
	char err[128];
	if (ng_ch_sql_shape(sql, strlen(sql), &out, err, sizeof err) < 0)
		fail_msg("'%s' compiles to SQL that is not well-formed (%s): %s", filter, err, sql);
	const char *bad = NULL;
	if (!ch_sql_words_ok(out.s, &bad))
		fail_msg("'%s': a word outside the literals at '%.20s': %s", filter, bad, sql);
	free(sql);
	return out.s;
}

/* Hostile values in each kind of term: "%s" in the term is replaced by
 * the harmless value, then by each hostile one. */
static const struct {
	const char *term, *harmless;
	const char *hostile[24];
} injection[] = {
    {"src net-name \"%s\"",
     "office",
     {"'; DROP TABLE flows; --",
      "\\",
      "\\'",
      "\\\\'",
      "' OR 1=1 OR '",
      "/* c */",
      "-- c",
      "#x",
      "東京",
      "\xff\xfe\xc3(",
      "\x01\x1b[31m\x7f",
      "a\tb\nc",
      "SELECT * FROM system.users",
      "1) OR (1=1",
      "'",
      "''",
      "`x`",
      "%",
      "\\x27",
      "?",
      "\\0",
      "') UNION ALL SELECT 1 --",
      ""}},
    {"exporter_name = '%s'",
     "lab",
     {"\"; DROP TABLE flows; --", "\\", "\" OR 1=1 --", "*/", "\\\\", "\xf0\x9f\x92\xa9", "}{",
      "{name:String}", "$1", "\r\n"}},
    {"service ~ \"%s\"", "https", {"'", "\\", "-- ", "a' AND 0 = 0 AND 'a"}},
    {"dst country != '%s'", "JP", {"\\", "J\"P", "; --"}},
    {"bytes > %s", "1", {"18446744073709551615", "18446744073G"}},
    {"as %s", "1", {"4294967295", "4294967k"}},
    {"port in [%s 1]", "2", {"65535", "0"}},
    {"host %s",
     "192.0.2.1",
     {"39.39.39.39", "92.92.92.92", "::ffff:39.92.39.92", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
      "::", "2001:db8:27:5c::27"}},
    {"src net %s", "10.0.0.0/8", {"39.0.0.0/8", "92.92.0.0/16", "2700::/8", "5c5c::/16"}},
    {"exporter in [%s 10.0.0.0/8]", "192.0.2.1", {"39.39.39.39", "::5c27"}},
    {"in src mac %s", "00:11:22:33:44:55", {"27:5c:27:5c:00:ff", "2d:2d:2f:2a:23:3b"}},
};

static void test_injection(void **state)
{
	(void)state;
	const ng_ch_server *svs[] = {&v18, &v24};
	char text[256];
	for (size_t i = 0; i < sizeof injection / sizeof injection[0]; i++)
		for (size_t s = 0; s < 2; s++) {
			snprintf(text, sizeof text, injection[i].term, injection[i].harmless);
			char *want = shape_of(text, svs[s]);
			for (size_t k = 0; injection[i].hostile[k]; k++) {
				snprintf(text, sizeof text, injection[i].term,
				         injection[i].hostile[k]);
				char *got = shape_of(text, svs[s]);
				if (strcmp(got, want))
					fail_msg("'%s' changed the shape:\n  %s\n  harmless: %s",
					         text, got, want);
				free(got);
			}
			free(want);
		}
}

/* Values the parser refuses never reach the compiler: too large for the
 * term, or past 2^64 - 1. */
static void test_huge_numbers_refused(void **state)
{
	(void)state;
	static const char *const refused[] = {
	    "bytes > 18446744073709551616", "bytes > 18446744073709552k", "port 65536",
	    "as 4294967296", "bytes > 99999999999999999999999999999999999999999"};
	char err[256];
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
		ng_filter *f = ng_filter_parse(refused[i], err, sizeof err, NULL);
		if (f)
			fail_msg("'%s' parsed", refused[i]);
		assert_true(err[0] != 0);
	}
}

static void test_errors(void **state)
{
	(void)state;
	char err[512];
	ng_filter *f = ng_filter_parse("proto tcp and src port 80", err, sizeof err, NULL);
	assert_non_null(f);
	ng_colset dims = ng_ch_rollup_dims(true);
	ng_ch_sql q = {0};
	assert_int_equal(ng_filter_sql(f, NULL, &dims, "flows_1h", &q, err, sizeof err), -1);
	assert_string_equal(
	    err, "cannot compile the filter for flows_1h: src_port is not a column of it");
	ng_ch_sql_free(&q);
	ng_filter_free(f);
	f = ng_filter_parse("proto tcp and dst port 80", err, sizeof err, NULL);
	assert_int_equal(ng_filter_sql(f, NULL, &dims, "flows_1h", &q, err, sizeof err), 0);
	assert_string_equal(q.s, "(protocol = 6 AND dst_port = 80)");
	ng_ch_sql_free(&q);
	ng_filter_free(f);

	/* 6000 addresses on both sides: about 800 kB of SQL, past the bound */
	size_t cap = 6000 * 20 + 64;
	char *text = malloc(cap);
	assert_non_null(text);
	size_t n = (size_t)snprintf(text, cap, "host in [");
	for (unsigned i = 0; i < 6000; i++)
		n += (size_t)snprintf(text + n, cap - n, "10.%u.%u.1 ", i / 256, i % 256);
	snprintf(text + n, cap - n, "]");
	f = ng_filter_parse(text, err, sizeof err, NULL);
	assert_non_null(f);
	assert_int_equal(ng_filter_sql(f, NULL, NULL, "flows", &q, err, sizeof err), -1);
	assert_string_equal(err,
	                    "the filter compiles to more than 200000 bytes of SQL (the server's "
	                    "max_query_size): make it shorter");
	ng_ch_sql_free(&q);
	ng_filter_free(f);
	free(text);
}

/* A chain of 20 000 terms compiles without deep recursion (chain_sql). */
static void test_long_chain(void **state)
{
	(void)state;
	size_t cap = 20000 * 16;
	char *text = malloc(cap);
	assert_non_null(text);
	size_t n = 0;
	for (unsigned i = 0; i < 20000; i++)
		n += (size_t)snprintf(text + n, cap - n, "%sport %u", i ? " or " : "", i % 60000);
	char err[256];
	ng_filter *f = ng_filter_parse(text, err, sizeof err, NULL);
	assert_non_null(f);
	ng_ch_sql q = {0};
	/* about 36 bytes a term: past the bound, refused with the message */
	assert_int_equal(ng_filter_sql(f, NULL, NULL, "flows", &q, err, sizeof err), -1);
	assert_non_null(strstr(err, "more than 200000 bytes"));
	ng_ch_sql_free(&q);
	ng_filter_free(f);
	free(text);
}

/* A top-N statement, word for word, and what it refuses. */
static void test_top(void **state)
{
	(void)state;
	char err[256];
	ng_filter *f = ng_filter_parse("proto tcp", err, sizeof err, NULL);
	assert_non_null(f);
	enum ng_field_id keys[] = {NG_F_SRC_AS, NG_F_DST_PORT};
	ng_ch_sql q = {0};
	assert_int_equal(ng_top_sql("nagare", keys, 2, "bytes", 10, f, &v18, &q, err, sizeof err),
	                 0);
	assert_string_equal(q.s,
	                    "SELECT src_as, dst_port, min(flow_start), max(flow_end), count() AS "
	                    "f_, sum(packets) AS p_, sum(bytes) AS b_ FROM nagare.flows WHERE "
	                    "protocol = 6 GROUP BY src_as, dst_port ORDER BY b_ DESC, src_as ASC, "
	                    "dst_port ASC LIMIT 10");
	ng_ch_sql_free(&q);
	enum ng_field_id addr = NG_F_SRC_ADDR;
	assert_int_equal(ng_top_sql("nagare", &addr, 1, "flows", 10, f, &v18, &q, err, sizeof err),
	                 -1);
	assert_string_equal(
	    err, "top-N in ClickHouse groups by integer fields only so far, not src_addr");
	ng_ch_sql_free(&q);
	assert_int_equal(ng_top_sql("nagare", keys, 1, "bps", 10, f, &v18, &q, err, sizeof err),
	                 -1);
	assert_string_equal(err,
	                    "top-N in ClickHouse is ranked by flows, packets or bytes, not 'bps'");
	ng_ch_sql_free(&q);
	assert_int_equal(ng_top_sql("x; DROP", keys, 1, "flows", 10, f, &v18, &q, err, sizeof err),
	                 -1);
	ng_ch_sql_free(&q);
	ng_filter_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_string_literals),
	    cmocka_unit_test(test_uint_literals),
	    cmocka_unit_test(test_addr_mac_literals),
	    cmocka_unit_test(test_golden),
	    cmocka_unit_test(test_injection),
	    cmocka_unit_test(test_huge_numbers_refused),
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_long_chain),
	    cmocka_unit_test(test_top),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
