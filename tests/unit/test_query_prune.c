/*
 * test_query_prune.c — zone-map pruning (ng_filter_may_match, wired into
 * ng_query_run): it may skip a segment only when no row of it passes.
 *
 *   - hand-made zone maps with known answers (integer ranges, IPv4 ranges,
 *     not/and/or, terms it cannot judge);
 *   - a store of 24 segments whose port, address and AS ranges differ:
 *     a filter on a port found in one segment reads that one only;
 *   - 150 random filters: the listing and a group-by give the same flows
 *     with and without pruning, equal to a row-by-row reference
 *     (ng_filter_match_flow over the records written), and pruning does
 *     happen.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/field.h"
#include "query/filter.h"
#include "query/query.h"
#include "store/store.h"
#include "test_filter_gen.h"
#include "test_rng.h"

#define T0 UINT64_C(1764460800000)
enum { NSEG = 24, PER = 250, N = NSEG * PER };

static uint64_t rng = 0x1234567887654321ull;
static uint64_t rnd(void)
{
	return ts_xorshift64(&rng);
}

static ng_filter *parse(const char *text)
{
	char err[512];
	ng_filter *f = ng_filter_parse(text, err, sizeof err, NULL);
	if (!f)
		fail_msg("%s: %s", text, err);
	return f;
}

static bool may(const char *text, const ng_zone_map *z)
{
	ng_filter *f = parse(text);
	bool r = ng_filter_may_match(f, z);
	ng_filter_free(f);
	return r;
}

/* Every integer field known as [0, 0] (absent columns), nothing else. */
static void zone_zero(ng_zone_map *z)
{
	memset(z, 0, sizeof *z);
	z->rows = 100;
	for (size_t f = 0; f < NG_FIELD_COUNT; f++)
		z->known[f] = ng_fields[f].type <= NG_FT_TIME;
}

static uint64_t v4(unsigned a, unsigned b, unsigned c, unsigned d)
{
	return (uint64_t)a << 24 | b << 16 | c << 8 | d;
}

static void test_zone_answers(void **state)
{
	(void)state;
	ng_zone_map z;
	zone_zero(&z);
	z.min[NG_F_DST_PORT] = 80, z.max[NG_F_DST_PORT] = 80;
	z.min[NG_F_SRC_PORT] = 1024, z.max[NG_F_SRC_PORT] = 2047;
	z.min[NG_F_PROTOCOL] = z.max[NG_F_PROTOCOL] = 6;
	z.max[NG_F_TCP_FLAGS] = 63;
	z.v4[NG_F_SRC_ADDR] = true;
	z.min[NG_F_SRC_ADDR] = v4(10, 1, 0, 0), z.max[NG_F_SRC_ADDR] = v4(10, 1, 255, 255);
	/* integers */
	assert_true(may("dst port 80", &z));
	assert_false(may("dst port 81", &z));
	assert_false(may("not dst port 80", &z)); /* every row has 80 */
	assert_true(may("not dst port 81", &z));
	assert_false(may("src port < 1024", &z));
	assert_true(may("src port < 1025", &z));
	assert_false(may("src port > 2047", &z));
	assert_true(may("src port >= 2047", &z));
	assert_true(may("src port 1500", &z));
	assert_true(may("not src port 1500", &z));
	assert_false(may("src port in [1 2 3 4000]", &z));
	assert_true(may("src port in [1 2000]", &z));
	assert_false(may("dst port in [80 443] and not dst port 80", &z));
	assert_true(may("port 1024", &z)); /* either side: src may be 1024 */
	assert_false(may("port 3000", &z));
	assert_false(may("proto udp", &z));
	assert_true(may("proto tcp", &z));
	assert_false(may("not proto tcp", &z));
	assert_false(may("src as 5", &z)); /* absent column: all zero */
	assert_true(may("src as 0", &z));
	/* or / and */
	assert_true(may("proto udp or dst port 80", &z));
	assert_false(may("proto udp or dst port 81", &z));
	assert_false(may("proto tcp and dst port 81", &z));
	assert_false(may("!(proto tcp || dst port 81)", &z));
	/* addresses: the IPv4 range 10.1.0.0 - 10.1.255.255 */
	assert_true(may("src net 10.1.2.0/24", &z));
	assert_true(may("src net 10.0.0.0/8", &z));
	assert_false(may("src net 10.2.0.0/16", &z));
	assert_false(may("not src net 10.0.0.0/8", &z)); /* all inside */
	assert_true(may("not src net 10.1.0.0/17", &z));
	assert_false(may("src ip 10.2.0.1", &z));
	assert_true(may("src ip 10.1.3.4", &z));
	assert_false(may("src ip in [10.2.0.1 192.168.0.0/16]", &z));
	assert_true(may("src ip in [10.2.0.1 10.1.0.0/24]", &z));
	assert_false(may("src net 2001:db8::/32", &z)); /* IPv6 net, IPv4 rows */
	assert_true(may("dst net 10.2.0.0/16", &z));    /* dst range unknown */
	assert_true(may("net 10.2.0.0/16", &z));        /* either side */
	/* terms without a zone map: may be anything */
	assert_true(may("flags S", &z)); /* flags 0..63: bit tests */
	assert_true(may("not flags S", &z));
	z.max[NG_F_TCP_FLAGS] = 0;
	assert_false(may("flags S", &z)); /* every row 0: exact */
	assert_true(may("duration > 100000", &z));
	assert_true(may("any", &z));
	z.known[NG_F_DST_PORT] = false;
	assert_true(may("dst port 81", &z));
	assert_true(may("not dst port 80", &z));
}

static ng_flow *rows;
static char dir[64];

/* Segment k: dst ports k*100 .. k*100+49 (and 9999 once, in segment 5),
 * sources 10.k.0.0/16 (segments 3, 7, …: some IPv6 too), src_as
 * k*10 .. k*10+9, TCP only in every third segment. */
static void make_store(void)
{
	strcpy(dir, "/tmp/ng_test_prune_XXXXXX");
	assert_non_null(mkdtemp(dir));
	rows = calloc(N, sizeof *rows);
	char err[256];
	ng_store_writer *w = ng_store_writer_open(dir, err, sizeof err);
	assert_non_null(w);
	for (unsigned k = 0; k < NSEG; k++) {
		for (unsigned i = 0; i < PER; i++) {
			ng_flow *r = &rows[k * PER + i];
			r->flow_start = T0 + k * 60000 + i * 7;
			r->flow_end = r->flow_start + rnd() % 5000;
			r->time_received = r->flow_end;
			r->bytes = 40 + rnd() % 10000;
			r->packets = 1 + rnd() % 20;
			r->dst_port = (uint16_t)(k * 100 + rnd() % 50);
			if (k == 5 && i == 100)
				r->dst_port = 9999;
			r->src_port = (uint16_t)(1024 + rnd() % 30000);
			r->protocol = (uint8_t)(k % 3 == 0 || rnd() % 2 ? 6 : 17);
			r->src_as = k * 10 + (uint32_t)(rnd() % 10);
			r->dst_as = (uint32_t)(rnd() % 5);
			r->in_if = (uint32_t)(rnd() % 4);
			r->tcp_flags = (uint8_t)(rnd() % 64);
			if (k % 4 == 3 && rnd() % 5 == 0) {
				r->src_addr[0] = 0x20, r->src_addr[1] = 0x01;
				r->src_addr[15] = (uint8_t)k;
			} else {
				r->src_addr[10] = r->src_addr[11] = 0xff;
				r->src_addr[12] = 10, r->src_addr[13] = (uint8_t)k;
				r->src_addr[14] = (uint8_t)(rnd() % 4),
				r->src_addr[15] = (uint8_t)rnd();
			}
			r->dst_addr[10] = r->dst_addr[11] = 0xff;
			r->dst_addr[12] = 192, r->dst_addr[13] = 168;
			r->dst_addr[14] = (uint8_t)(rnd() % 3), r->dst_addr[15] = (uint8_t)(k + 1);
		}
		assert_int_equal(ng_store_writer_append(w, rows + k * PER, PER), 0);
		assert_int_equal(ng_store_writer_flush(w), 0);
	}
	assert_int_equal(ng_store_writer_close(w), 0);
}

static void drop_store(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	free(rows);
}

static void run(const char *filter, const char *keys, bool prune, ng_query_result *res)
{
	ng_query q = {.from_ms = 0,
	              .to_ms = UINT64_MAX,
	              .order = NG_ORDER_BYTES,
	              .threads = 2,
	              .no_prune = !prune};
	char err[512];
	if (keys)
		assert_int_equal(ng_query_parse_keys(&q, keys, err, sizeof err), 0);
	q.filter = parse(filter);
	assert_int_equal(ng_query_run(dir, &q, res, err, sizeof err), 0);
	assert_int_equal(res->scan.errors, 0);
	ng_filter_free(q.filter);
}

static void test_rare_port(void **state)
{
	(void)state;
	make_store();
	ng_query_result res;
	run("dst port 9999", NULL, true, &res);
	assert_int_equal(res.nflows, 1);
	assert_int_equal(res.flows[0].flow_start, rows[5 * PER + 100].flow_start);
	assert_int_equal(res.scan.segments_read, 1);
	assert_int_equal(res.scan.segments_pruned, NSEG - 1);
	ng_query_result_free(&res);
	run("dst port 9999", NULL, false, &res);
	assert_int_equal(res.nflows, 1);
	assert_int_equal(res.scan.segments_read, NSEG);
	assert_int_equal(res.scan.segments_pruned, 0);
	ng_query_result_free(&res);
	/* a net: segment 7's sources are in 10.7/16; segments 3, 11, 15, 19,
	 * 23 hold IPv6 sources too (no IPv4 range), and of those 3 and 15
	 * are TCP only: 7, 11, 19, 23 are read */
	run("src net 10.7.0.0/16 and proto udp", "dstport", true, &res);
	assert_int_equal(res.scan.segments_read, 4);
	assert_int_equal(res.scan.segments_pruned, NSEG - 4);
	ng_query_result_free(&res);
	drop_store();
}

/* ---- random filters ------------------------------------------------------ */

static const char *ops[] = {"", "=", "<", ">", "<=", ">=", "!="};

static void random_term(char *b, size_t len)
{
	unsigned k = (unsigned)(rnd() % NSEG);
	switch (rnd() % 12) {
	case 0:
		snprintf(b, len, "dst port %s %u", ops[rnd() % 7],
		         k * 100 + (unsigned)(rnd() % 60));
		break;
	case 1:
		snprintf(b, len, "dst port in [%u %u 9999]", k * 100 + (unsigned)(rnd() % 60),
		         (unsigned)(rnd() % 2500));
		break;
	case 2: snprintf(b, len, "port %u", k * 100 + (unsigned)(rnd() % 50)); break;
	case 3: snprintf(b, len, "src net 10.%u.0.0/%u", k, 12 + (unsigned)(rnd() % 12)); break;
	case 4:
		snprintf(b, len, "src ip in [10.%u.%u.%u 10.%u.0.0/17]", k, (unsigned)(rnd() % 4),
		         (unsigned)(rnd() % 256), (unsigned)(rnd() % NSEG));
		break;
	case 5: snprintf(b, len, "proto %s", rnd() % 2 ? "tcp" : "udp"); break;
	case 6:
		snprintf(b, len, "src as %s %u", ops[rnd() % 7], k * 10 + (unsigned)(rnd() % 12));
		break;
	case 7: snprintf(b, len, "bytes > %u", (unsigned)(rnd() % 12000)); break;
	case 8: snprintf(b, len, "in if %u", (unsigned)(rnd() % 5)); break;
	case 9: snprintf(b, len, "%s", rnd() % 2 ? "inet6" : "inet"); break;
	case 10: snprintf(b, len, "dst net 192.168.%u.0/24", (unsigned)(rnd() % 4)); break;
	default: snprintf(b, len, "flags %s", rnd() % 2 ? "S" : "AF"); break;
	}
}

static int cmp_rows(const void *a, const void *b)
{
	return memcmp(((const ng_agg_row *)a)->key, ((const ng_agg_row *)b)->key, NG_QUERY_KEY_MAX);
}

static void test_random_filters(void **state)
{
	(void)state;
	make_store();
	uint64_t pruned = 0, matched_filters = 0;
	for (int it = 0; it < 150; it++) {
		char text[2048];
		ts_random_filter(text, sizeof text, 3, random_term, rnd);
		ng_filter *ref = parse(text);
		size_t nref = 0;
		uint64_t bytes_ref = 0;
		for (size_t i = 0; i < N; i++)
			if (ng_filter_match_flow(ref, &rows[i]))
				nref++, bytes_ref += rows[i].bytes;
		ng_filter_free(ref);
		matched_filters += nref > 0;
		/* listing: the same flows, in the same order */
		ng_query_result a, b;
		run(text, NULL, true, &a);
		run(text, NULL, false, &b);
		if (a.nflows != nref || b.nflows != nref)
			fail_msg("%s: %zu flows pruned, %zu unpruned, reference %zu", text,
			         a.nflows, b.nflows, nref);
		assert_memory_equal(a.flows, b.flows, nref * sizeof *a.flows);
		assert_int_equal(a.bytes_total, bytes_ref);
		pruned += a.scan.segments_pruned;
		ng_query_result_free(&a);
		ng_query_result_free(&b);
		/* group-by on two workers */
		run(text, "srcas", true, &a);
		run(text, "srcas", false, &b);
		assert_int_equal(a.flows_total, nref);
		assert_int_equal(a.bytes_total, bytes_ref);
		assert_int_equal(a.nrows, b.nrows);
		qsort(a.rows, a.nrows, sizeof *a.rows, cmp_rows);
		qsort(b.rows, b.nrows, sizeof *b.rows, cmp_rows);
		assert_memory_equal(a.rows, b.rows, a.nrows * sizeof *a.rows);
		ng_query_result_free(&a);
		ng_query_result_free(&b);
	}
	print_message("random filters: %" PRIu64 " of 150 match rows; %" PRIu64
	              " segments pruned in all\n",
	              matched_filters, pruned);
	assert_true(pruned > 150);
	assert_true(matched_filters > 40);
	drop_store();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_zone_answers),
	    cmocka_unit_test(test_rare_port),
	    cmocka_unit_test(test_random_filters),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
