/*
 * test_query_parallel.c — filters evaluated by several scan workers at
 * once, each with its own evaluation state (ng_filter_ctx: scratch
 * vectors, per-string-ID answer caches): group-by results on 1 and 4
 * workers are identical, and equal a row-by-row reference
 * (ng_filter_match_flow over the records written), for string filters
 * (countries, AS names with thousands of distinct values, services) alone
 * and combined with integer and address terms.  The store has 32 segments
 * so workers do run concurrently; a build with -DNG_SANITIZE=ON checks
 * the memory side.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/field.h"
#include "core/strtab.h"
#include "query/filter.h"
#include "query/query.h"
#include "store/store.h"
#include "test_rng.h"

#define T0 UINT64_C(1764460800000)
enum { NSEG = 32, PER = 1500, N = NSEG * PER };

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
	return ts_xorshift64(&rng);
}

static ng_flow *rows;
static char dir[64];

static const char *countries[] = {"JP", "DE", "US", "FR", "BR", "", "NL"};
static const char *services[] = {"https", "http", "dns", "ssh", "ntp", ""};

static void make_store(void)
{
	strcpy(dir, "/tmp/ng_test_qpar_XXXXXX");
	assert_non_null(mkdtemp(dir));
	rows = calloc(N, sizeof *rows);
	char err[256], name[64];
	ng_store_writer *w = ng_store_writer_open(dir, err, sizeof err);
	assert_non_null(w);
	for (unsigned k = 0; k < NSEG; k++) {
		for (unsigned i = 0; i < PER; i++) {
			ng_flow *r = &rows[k * PER + i];
			r->flow_start = T0 + k * 60000 + i * 11;
			r->flow_end = r->flow_start + rnd() % 3000;
			r->time_received = r->flow_end;
			r->bytes = 40 + rnd() % 50000;
			r->packets = 1 + rnd() % 40;
			r->protocol = (uint8_t)(rnd() % 2 ? 6 : 17);
			r->dst_port = (uint16_t)(rnd() % 3 ? 443 : rnd() % 2000);
			r->src_as = (uint32_t)(rnd() % 4000);
			r->src_addr[10] = r->src_addr[11] = 0xff;
			r->src_addr[12] = 10, r->src_addr[13] = (uint8_t)(rnd() % 8);
			r->src_addr[15] = (uint8_t)rnd();
			r->src_country = ng_intern_cstr(countries[rnd() % 7]);
			r->dst_country = ng_intern_cstr(countries[rnd() % 7]);
			/* thousands of names: the per-worker caches grow mid-scan */
			snprintf(name, sizeof name, "%s Network %u",
			         rnd() % 4 ? "Example" : "Google", (unsigned)(rnd() % 3000));
			r->dst_as_name = ng_intern_cstr(name);
			snprintf(name, sizeof name, "Carrier-%u", (unsigned)(rnd() % 2000));
			r->src_as_name = ng_intern_cstr(name);
			r->service = ng_intern_cstr(services[rnd() % 6]);
		}
		assert_int_equal(ng_store_writer_append(w, rows + k * PER, PER), 0);
		assert_int_equal(ng_store_writer_flush(w), 0);
	}
	assert_int_equal(ng_store_writer_close(w), 0);
}

static int cmp_rows(const void *a, const void *b)
{
	return memcmp(((const ng_agg_row *)a)->key, ((const ng_agg_row *)b)->key, NG_QUERY_KEY_MAX);
}

static void run(const char *filter, const char *keys, unsigned threads, ng_query_result *res)
{
	ng_query q = {
	    .from_ms = 0, .to_ms = UINT64_MAX, .order = NG_ORDER_BYTES, .threads = threads};
	char err[512];
	assert_int_equal(ng_query_parse_keys(&q, keys, err, sizeof err), 0);
	q.filter = ng_filter_parse(filter, err, sizeof err, NULL);
	if (!q.filter)
		fail_msg("%s: %s", filter, err);
	assert_int_equal(ng_query_run(dir, &q, res, err, sizeof err), 0);
	assert_int_equal(res->scan.errors, 0);
	assert_int_equal(res->scan.threads, threads);
	ng_filter_free(q.filter);
	qsort(res->rows, res->nrows, sizeof *res->rows, cmp_rows);
}

static const char *filters[] = {
    "src country JP",
    "country DE",
    "not dst country US",
    "dst asname google",
    "dst asname ~ 'network 12'",
    "src asname = carrier-7 or src asname = carrier-1999",
    "service https and dst port 443",
    "(src country JP or dst country FR) and not dst asname google",
    "src country '' and proto udp",
    "src net 10.3.0.0/16 and dst asname ~ example and src as < 2000",
    "not (service dns or service ssh) and src asname ~ carrier-1",
};

static void test_parallel_equals_serial(void **state)
{
	(void)state;
	make_store();
	const char *keys[] = {"srcas", "dstport", "proto"};
	for (size_t i = 0; i < sizeof filters / sizeof filters[0]; i++) {
		ng_filter *ref = ng_filter_parse(filters[i], NULL, 0, NULL);
		assert_non_null(ref);
		uint64_t nref = 0, bytes = 0;
		for (size_t r = 0; r < N; r++)
			if (ng_filter_match_flow(ref, &rows[r]))
				nref++, bytes += rows[r].bytes;
		ng_filter_free(ref);
		if (nref == 0 || nref == N)
			fail_msg("%s: the data should make this filter selective (%llu of %d)",
			         filters[i], (unsigned long long)nref, N);
		for (size_t k = 0; k < 3; k++) {
			ng_query_result a, b;
			run(filters[i], keys[k], 1, &a);
			run(filters[i], keys[k], 4, &b);
			if (a.flows_total != nref || b.flows_total != nref)
				fail_msg(
				    "%s -s %s: %llu flows serial, %llu parallel, reference %llu",
				    filters[i], keys[k], (unsigned long long)a.flows_total,
				    (unsigned long long)b.flows_total, (unsigned long long)nref);
			assert_int_equal(a.bytes_total, bytes);
			assert_int_equal(b.bytes_total, bytes);
			assert_int_equal(a.nrows, b.nrows);
			assert_memory_equal(a.rows, b.rows, a.nrows * sizeof *a.rows);
			ng_query_result_free(&a);
			ng_query_result_free(&b);
		}
	}
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	free(rows);
}

/* Two contexts of one filter evaluated alternately keep separate caches
 * and agree with ng_filter_eval. */
static void test_contexts(void **state)
{
	(void)state;
	ng_filter *f = ng_filter_parse("dst asname ~ goo or src country jp", NULL, 0, NULL);
	assert_non_null(f);
	ng_filter_ctx *c1 = ng_filter_ctx_new(f), *c2 = ng_filter_ctx_new(f);
	assert_non_null(c1);
	assert_non_null(c2);
	uint32_t as[4] = {ng_intern_cstr("Google LLC"), ng_intern_cstr("Example"),
	                  ng_intern_cstr("Example"), ng_intern_cstr("goofy")};
	uint32_t co[4] = {ng_intern_cstr("DE"), ng_intern_cstr("JP"), ng_intern_cstr("US"),
	                  ng_intern_cstr("")};
	ng_column_batch b = {.n = 4};
	b.col[NG_F_DST_AS_NAME] = as;
	b.col[NG_F_SRC_COUNTRY] = co;
	uint8_t m1[4], m2[4], m3[4];
	assert_int_equal(ng_filter_eval_ctx(f, c1, &b, m1), 3);
	assert_int_equal(ng_filter_eval_ctx(f, c2, &b, m2), 3);
	assert_int_equal(ng_filter_eval(f, &b, m3), 3);
	const uint8_t want[4] = {1, 1, 0, 1};
	assert_memory_equal(m1, want, 4);
	assert_memory_equal(m2, want, 4);
	assert_memory_equal(m3, want, 4);
	ng_filter_ctx_free(c1);
	ng_filter_ctx_free(c2);
	ng_filter_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_contexts),
	    cmocka_unit_test(test_parallel_equals_serial),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
