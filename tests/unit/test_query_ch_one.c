/*
 * test_query_ch_one.c — the answer of the ClickHouse backend's one
 * statement read back (query/backend.h ng_query_ch_parse_one).
 *
 *   - answers in the layout clickhouse-server 18.16.1 wrote for
 *     ng_query_sql_one's statements on a private server here (tabs and
 *     newlines, totals, rows_before_limit_at_least), values chosen:
 *     an address prefix and a port (UInt64 quoted, UInt16 a number), an
 *     address, a string and a MAC in hex, the totals row, the groups from
 *     rows_before_limit_at_least, an empty answer (totals of zeros);
 *   - refused, nothing kept: not JSON, a row of another width, a negative
 *     or fractional number, a UInt64 past 2^64 - 1, a port past 65535,
 *     hex that is odd, lower-case or not hex, an address that is not 16
 *     bytes, more rows than the limit, fewer groups than rows, no totals.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "core/bytes.h"
#include "core/strtab.h"
#include "query/backend.h"
#include "query/output.h"
#include "query/query.h"

static ng_query keyed(const char *keys, size_t limit)
{
	ng_query q = {.to_ms = UINT64_MAX, .limit = limit};
	char err[256];
	if (ng_query_parse_keys(&q, keys, err, sizeof err))
		fail_msg("keys '%s': %s", keys, err);
	return q;
}

static int parse(const ng_query *q, const char *body, ng_query_result *res)
{
	memset(res, 0, sizeof *res);
	return ng_query_ch_parse_one(q, body, strlen(body), res);
}

/* srcip4/24,dstport, limit 2, in 18.16's layout (tabs and newlines) */
static const char prefix_port[] =
    "{\n\t\"meta\":\n\t[\n\t\t{\n\t\t\t\"name\": \"k0h_\",\n\t\t\t\"type\": \"UInt64\"\n\t\t}"
    "\n\t],\n\n\t\"data\":\n\t[\n\t\t[\"0\", \"281470849515776\", 443, \"1700000000000\", "
    "\"1700000005000\", \"12\", \"340\", \"250000\"],\n\t\t[\"0\", \"281472812449792\", 53, "
    "\"1700000001000\", \"1700000002000\", \"3\", \"3\", \"300\"]\n\t],\n\n\t\"totals\": "
    "[\"0\",\"0\",0,\"1699999999000\",\"1700000009000\",\"40\",\"900\",\"700000\"],\n\n\t"
    "\"rows\": 2,\n\n\t\"rows_before_limit_at_least\": 17,\n\n\t\"statistics\":\n\t{\n\t\t"
    "\"elapsed\": 0.000749444,\n\t\t\"rows_read\": 40,\n\t\t\"bytes_read\": 56\n\t}\n}\n";

static void test_prefix_port(void **state)
{
	(void)state;
	ng_query q = keyed("srcip4/24,dstport", 2);
	ng_query_result res;
	assert_int_equal(parse(&q, prefix_port, &res), 0);
	assert_int_equal(res.nrows, 2);
	assert_int_equal(res.groups, 17);
	assert_true(res.groups_exact);
	assert_int_equal(res.flows_total, 40);
	assert_int_equal(res.packets_total, 900);
	assert_int_equal(res.bytes_total, 700000);
	assert_int_equal(res.first, 1699999999000ULL);
	assert_int_equal(res.last, 1700000009000ULL);
	/* 281470849515776 = 0x0000FFFF0A000100: ::ffff:10.0.1.0 */
	static const uint8_t a0[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 1, 0};
	assert_memory_equal(res.rows[0].key, a0, 16);
	uint16_t port;
	memcpy(&port, res.rows[0].key + 16, 2);
	assert_int_equal(port, 443);
	assert_int_equal(res.rows[0].flows, 12);
	assert_int_equal(res.rows[0].packets, 340);
	assert_int_equal(res.rows[0].bytes, 250000);
	assert_int_equal(res.rows[0].first, 1700000000000ULL);
	assert_int_equal(res.rows[0].last, 1700000005000ULL);
	memcpy(&port, res.rows[1].key + 16, 2);
	assert_int_equal(port, 53);
	ng_query_result_free(&res);
}

static void test_bytes_keys(void **state)
{
	(void)state;
	ng_query q = keyed("dstip,exporter_name,srcmac", 5);
	ng_query_result res;
	const char *body =
	    "{\"data\":[[\"20010DB8000000000000000000000001\", \"6C61622D61\", \"00163E0A0B0C\", "
	    "\"5\", \"9\", \"2\", \"3\", \"4\"]],\"totals\": "
	    "[\"00000000000000000000000000000000\",\"\",\"000000000000\",\"5\",\"9\",\"2\",\"3\","
	    "\"4\"],\"rows\": 1,\"rows_before_limit_at_least\": 1}";
	assert_int_equal(parse(&q, body, &res), 0);
	assert_int_equal(res.nrows, 1);
	static const uint8_t a[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
	assert_memory_equal(res.rows[0].key, a, 16);
	uint32_t id;
	memcpy(&id, res.rows[0].key + 16, 4);
	assert_int_equal(id, ng_intern("lab-a", 5));
	static const uint8_t mac[6] = {0x00, 0x16, 0x3e, 0x0a, 0x0b, 0x0c};
	assert_memory_equal(res.rows[0].key + 20, mac, 6);
	assert_int_equal(res.groups, 1);
	ng_query_result_free(&res);
	/* empty: the totals of no flow (as 18.16 wrote them), no time window */
	body =
	    "{\"meta\":[],\"data\":[],\"totals\": "
	    "[\"00000000000000000000000000000000\",\"\",\"000000000000\",\"0\",\"0\",\"0\",\"0\","
	    "\"0\"],\"rows\": 0,\"rows_before_limit_at_least\": 0}";
	assert_int_equal(parse(&q, body, &res), 0);
	assert_int_equal(res.nrows, 0);
	assert_int_equal(res.groups, 0);
	assert_int_equal(res.flows_total, 0);
	ng_query_result_free(&res);
}

static void test_refused(void **state)
{
	(void)state;
	ng_query q = keyed("dstip,dstport", 1);
	static const char *const bad[] = {
	    "",
	    "{\"data\":[[\"20010DB8000000000000000000000001\", 80, \"5\", \"9\", \"2\", \"3\", "
	    "\"4\"]],\"totals\":[\"00000000000000000000000000000000\",0,\"5\",\"9\",\"2\",\"3\","
	    "\"4\"]", /* not closed */
	    /* a row of six columns */
	    "{\"data\":[[\"20010DB8000000000000000000000001\", 80, \"5\", \"9\", \"2\", \"3\"]],"
	    "\"totals\":[\"00000000000000000000000000000000\",0,\"5\",\"9\",\"2\",\"3\",\"4\"]}",
	    /* negative, fractional, past 2^64 - 1, a port past 65535 */
	    "{\"data\":[[\"20010DB8000000000000000000000001\", -80, \"5\", \"9\", \"2\", \"3\", "
	    "\"4\"]],\"totals\":[\"00000000000000000000000000000000\",0,\"5\",\"9\",\"2\",\"3\","
	    "\"4\"]}",
	    "{\"data\":[[\"20010DB8000000000000000000000001\", 80.5, \"5\", \"9\", \"2\", \"3\", "
	    "\"4\"]],\"totals\":[\"00000000000000000000000000000000\",0,\"5\",\"9\",\"2\",\"3\","
	    "\"4\"]}",
	    "{\"data\":[[\"20010DB8000000000000000000000001\", 80, \"5\", \"9\", "
	    "\"18446744073709551616\", \"3\", "
	    "\"4\"]],\"totals\":[\"00000000000000000000000000000000\""
	    ",0,\"5\",\"9\",\"2\",\"3\",\"4\"]}",
	    "{\"data\":[[\"20010DB8000000000000000000000001\", 65536, \"5\", \"9\", \"2\", \"3\", "
	    "\"4\"]],\"totals\":[\"00000000000000000000000000000000\",0,\"5\",\"9\",\"2\",\"3\","
	    "\"4\"]}",
	    /* hex odd, lower-case, not hex, 15 bytes */
	    "{\"data\":[[\"20010DB800000000000000000000001\", 80, \"5\", \"9\", \"2\", \"3\", "
	    "\"4\"]],\"totals\":[\"00000000000000000000000000000000\",0,\"5\",\"9\",\"2\",\"3\","
	    "\"4\"]}",
	    "{\"data\":[[\"20010db8000000000000000000000001\", 80, \"5\", \"9\", \"2\", \"3\", "
	    "\"4\"]],\"totals\":[\"00000000000000000000000000000000\",0,\"5\",\"9\",\"2\",\"3\","
	    "\"4\"]}",
	    "{\"data\":[[\"20010DB8000000000000000000000G01\", 80, \"5\", \"9\", \"2\", \"3\", "
	    "\"4\"]],\"totals\":[\"00000000000000000000000000000000\",0,\"5\",\"9\",\"2\",\"3\","
	    "\"4\"]}",
	    "{\"data\":[[\"20010DB80000000000000000000001\", 80, \"5\", \"9\", \"2\", \"3\", "
	    "\"4\"]],\"totals\":[\"00000000000000000000000000000000\",0,\"5\",\"9\",\"2\",\"3\","
	    "\"4\"]}",
	    /* two rows for a limit of one */
	    "{\"data\":[[\"20010DB8000000000000000000000001\", 80, \"5\", \"9\", \"2\", \"3\", "
	    "\"4\"],[\"20010DB8000000000000000000000002\", 80, \"5\", \"9\", \"2\", \"3\", "
	    "\"4\"]],\"totals\":[\"00000000000000000000000000000000\",0,\"5\",\"9\",\"2\",\"3\","
	    "\"4\"]}",
	    /* fewer groups than rows */
	    "{\"data\":[[\"20010DB8000000000000000000000001\", 80, \"5\", \"9\", \"2\", \"3\", "
	    "\"4\"]],\"totals\":[\"00000000000000000000000000000000\",0,\"5\",\"9\",\"2\",\"3\","
	    "\"4\"],\"rows_before_limit_at_least\":0}",
	    /* no totals */
	    "{\"data\":[[\"20010DB8000000000000000000000001\", 80, \"5\", \"9\", \"2\", \"3\", "
	    "\"4\"]]}",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ng_query_result res;
		if (parse(&q, bad[i], &res) != -1 || res.nrows || res.rows)
			fail_msg("answer %zu taken: %s", i, bad[i]);
	}
	/* the same answer, well formed, is taken (the cases above differ from
	 * it in one thing each) */
	ng_query_result res;
	assert_int_equal(
	    parse(&q,
	          "{\"data\":[[\"20010DB8000000000000000000000001\", 80, \"5\", \"9\", "
	          "\"2\", \"3\", \"4\"]],\"totals\":[\"00000000000000000000000000000000\""
	          ",0,\"5\",\"9\",\"2\",\"3\",\"4\"]}",
	          &res),
	    0);
	assert_int_equal(res.groups, 1);
	ng_query_result_free(&res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_prefix_port),
	    cmocka_unit_test(test_bytes_keys),
	    cmocka_unit_test(test_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
