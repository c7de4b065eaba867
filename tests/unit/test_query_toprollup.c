/*
 * test_query_toprollup.c — top rollups (store.h "Top rollups";
 * query/toprollup.c, "The proof"): a top-N of source or destination addresses read
 * through them is the top-N of the rows, or the query reads the rows.
 *
 * A store of 3 hours, 2 segments an hour, each of 20000 flows whose
 * source addresses are heavy-tailed (log-uniform over 20000 addresses:
 * a few sources carry much of the traffic, as on a real network) and
 * whose destinations are uniform over 20000 (no top stands out).  Each
 * segment-hour has thousands of distinct addresses, far more than a top
 * rollup keeps, so every part leaves groups out.
 *   - Source top-Ns by flows, packets and bytes, over aligned and
 *     unaligned ranges, are proved from the top rollups (they read
 *     them) and equal the top-N with no_rollup, row for row; the totals
 *     are equal; the group count is a lower bound, marked inexact.
 *   - The uniform destinations' top-N cannot be proved: the query reads
 *     the rows, with the same answer.
 *   - The top 5 sources by bytes equal sums over the records written.
 *   - A segment holding a flow with the markers' ip_version gets an
 *     unusable top rollup: queries read its rows, maintenance does not
 *     try again.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/filter.h"
#include "query/query.h"
#include "store/store.h"
#include "test_rng.h"
#include "test_store_helpers.h"

#define T0 UINT64_C(1764460800000) /* 2025-11-30T00:00:00Z, an hour boundary */
#define HOUR UINT64_C(3600000)
#define MIN UINT64_C(60000)
enum { HOURS = 3, PARTS = 2, PER = 20000, N = HOURS * PARTS * PER, NADDR = 20000 };

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static ng_flow *rows;
static uint32_t *src_idx; /* per row: its source address's number */
static char *dir;

static double unit(void)
{
	return (double)(ts_xorshift64(&rng) >> 11) / 9007199254740992.0;
}

/* 10.x.y.z (IPv4-mapped) for address number i. */
static void addr(uint8_t a[16], uint8_t net, uint32_t i)
{
	memset(a, 0, 16);
	a[10] = a[11] = 0xff;
	a[12] = net;
	a[13] = (uint8_t)(i >> 16);
	a[14] = (uint8_t)(i >> 8);
	a[15] = (uint8_t)i;
}

static void fill(ng_flow *r, uint32_t *si, uint64_t start)
{
	memset(r, 0, sizeof *r);
	r->flow_start = start;
	r->flow_end = start + ts_xorshift64(&rng) % 60000;
	r->time_received = r->flow_end + 5;
	r->bytes = 40 + ts_xorshift64(&rng) % 100000;
	r->packets = 1 + ts_xorshift64(&rng) % 60;
	r->protocol = 6;
	r->ip_version = 4;
	*si = (uint32_t)exp(unit() * log((double)NADDR)) - 1; /* log-uniform in [0, NADDR) */
	addr(r->src_addr, 10, *si);
	addr(r->dst_addr, 192, (uint32_t)(ts_xorshift64(&rng) % NADDR));
}

static int setup(void **state)
{
	(void)state;
	dir = ts_make_store("toprollup");
	rows = calloc(N, sizeof *rows);
	src_idx = calloc(N, sizeof *src_idx);
	assert_non_null(rows);
	assert_non_null(src_idx);
	char err[256];
	ng_store_writer *w = ng_store_writer_open(dir, err, sizeof err);
	assert_non_null(w);
	for (size_t n = 0, h = 0; h < HOURS; h++)
		for (unsigned p = 0; p < PARTS; p++, n += PER) {
			for (unsigned i = 0; i < PER; i++)
				fill(&rows[n + i], &src_idx[n + i],
				     T0 + h * HOUR + ts_xorshift64(&rng) % HOUR);
			assert_int_equal(ng_store_writer_append(w, rows + n, PER), 0);
			assert_int_equal(ng_store_writer_flush(w), 0);
		}
	assert_int_equal(ng_store_writer_close(w), 0);
	ng_store_maint_stats st = {0};
	assert_int_equal(ng_store_rollup(dir, T0 + 30 * HOUR, 0, 0, true, &st), 0);
	assert_int_equal(st.errors, 0);
	long segs = ts_count_files(dir, "*.seg");
	assert_int_equal(segs, HOURS * PARTS);
	assert_int_equal(ts_count_files(dir, "*.seg.r-srctop-1h"), segs);
	assert_int_equal(ts_count_files(dir, "*.seg.r-dsttop-1h"), segs);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	ts_rm_rf(dir);
	free(dir);
	free(rows);
	free(src_idx);
	return 0;
}

static void run(const char *store, const char *keys, const char *filter, uint64_t from, uint64_t to,
                enum ng_order order, size_t limit, bool no_rollup, ng_query_result *res)
{
	ng_query q = {.from_ms = from,
	              .to_ms = to,
	              .order = order,
	              .limit = limit,
	              .threads = 2,
	              .no_rollup = no_rollup};
	char err[512];
	assert_int_equal(ng_query_parse_keys(&q, keys, err, sizeof err), 0);
	if (filter && !(q.filter = ng_filter_parse(filter, err, sizeof err, NULL)))
		fail_msg("%s: %s", filter, err);
	assert_int_equal(ng_query_run(store, &q, res, err, sizeof err), 0);
	assert_int_equal(res->scan.errors, 0);
	ng_filter_free(q.filter);
}

/* a's answer (through top rollups, or not) equals b's (rows only). */
static void assert_same(const char *what, const ng_query_result *a, const ng_query_result *b)
{
	assert_true(b->flows_total > 0);
	assert_int_equal(a->flows_total, b->flows_total);
	assert_int_equal(a->packets_total, b->packets_total);
	assert_int_equal(a->bytes_total, b->bytes_total);
	assert_int_equal(a->first, b->first);
	assert_int_equal(a->last, b->last);
	assert_true(b->groups_exact);
	if (a->groups_exact)
		assert_int_equal(a->groups, b->groups);
	else
		assert_true(a->groups > 0 && a->groups <= b->groups);
	assert_int_equal(a->nrows, b->nrows);
	for (size_t i = 0; i < a->nrows; i++) {
		if (memcmp(a->rows[i].key, b->rows[i].key, NG_QUERY_KEY_MAX))
			fail_msg("%s: row %zu: keys differ", what, i);
		assert_int_equal(a->rows[i].flows, b->rows[i].flows);
		assert_int_equal(a->rows[i].packets, b->rows[i].packets);
		assert_int_equal(a->rows[i].bytes, b->rows[i].bytes);
		assert_int_equal(a->rows[i].first, b->rows[i].first);
		assert_int_equal(a->rows[i].last, b->rows[i].last);
	}
}

typedef struct tcase {
	const char *keys, *filter;
	uint64_t from, to;
	enum ng_order order;
	size_t limit;
	bool top; /* expected to be answered from the top rollups */
} tcase;

#define END (T0 + HOURS * HOUR)

static const tcase cases[] = {
    {"srcip", NULL, T0, END, NG_ORDER_BYTES, 10, true},
    {"srcip", NULL, T0, END, NG_ORDER_FLOWS, 10, true},
    {"srcip", NULL, T0, END, NG_ORDER_PACKETS, 5, true},
    {"srcip", NULL, 0, UINT64_MAX, NG_ORDER_BYTES, 5, true},
    /* one whole hour, the rest of the range as rows */
    {"srcip", NULL, T0 + 17 * MIN + 3, T0 + 2 * HOUR + 5 * MIN, NG_ORDER_BYTES, 10, true},
    /* uniform destinations: no top is proved, rows are read */
    {"dstip", NULL, T0, END, NG_ORDER_BYTES, 10, false},
    /* not for top rollups: a filter, a rate order, too long a limit, no
     * whole hour, no limit, a prefix */
    {"srcip", "proto tcp", T0, END, NG_ORDER_BYTES, 10, false},
    {"srcip", NULL, T0, END, NG_ORDER_BPS, 10, false},
    {"srcip", NULL, T0, END, NG_ORDER_BYTES, NG_ROLLUP_TOP_K, false},
    {"srcip", NULL, T0 + 10 * MIN, T0 + HOUR + 50 * MIN, NG_ORDER_BYTES, 10, false},
    {"srcip", NULL, T0, END, NG_ORDER_BYTES, 0, false},
    {"srcip4/24", NULL, T0, END, NG_ORDER_BYTES, 10, false},
};

static void test_same_answers(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		const tcase *c = &cases[k];
		ng_query_result a, b;
		char what[64];
		snprintf(what, sizeof what, "case %zu (%s)", k, c->keys);
		run(dir, c->keys, c->filter, c->from, c->to, c->order, c->limit, false, &a);
		run(dir, c->keys, c->filter, c->from, c->to, c->order, c->limit, true, &b);
		if (c->top != (a.scan.segments_rollup > 0))
			fail_msg("%s: top rollups read in %llu segments", what,
			         (unsigned long long)a.scan.segments_rollup);
		if (c->top) {
			assert_false(a.groups_exact); /* every part left groups out */
			assert_true(a.scan.rows_scanned < b.scan.rows_scanned);
		}
		assert_same(what, &a, &b);
		ng_query_result_free(&a);
		ng_query_result_free(&b);
	}
}

static int cmp_desc(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? 1 : a > b ? -1 : 0;
}

/* The top 5 sources by bytes, through the top rollups, against sums over
 * the records. */
static void test_against_records(void **state)
{
	(void)state;
	uint64_t *bytes = calloc(NADDR, sizeof *bytes), *flows = calloc(NADDR, sizeof *flows);
	uint64_t *sorted = calloc(NADDR, sizeof *sorted);
	assert_non_null(bytes);
	assert_non_null(flows);
	assert_non_null(sorted);
	for (size_t i = 0; i < N; i++) {
		bytes[src_idx[i]] += rows[i].bytes;
		flows[src_idx[i]]++;
	}
	memcpy(sorted, bytes, NADDR * sizeof *bytes);
	qsort(sorted, NADDR, sizeof *sorted, cmp_desc);
	ng_query_result res;
	run(dir, "srcip", NULL, T0, END, NG_ORDER_BYTES, 5, false, &res);
	assert_true(res.scan.segments_rollup > 0);
	assert_int_equal(res.flows_total, N);
	assert_int_equal(res.nrows, 5);
	for (size_t i = 0; i < 5; i++) {
		const uint8_t *k = res.rows[i].key;
		assert_int_equal(k[12], 10);
		uint32_t a = (uint32_t)k[13] << 16 | (uint32_t)k[14] << 8 | k[15];
		assert_in_range(a, 0, NADDR - 1);
		assert_int_equal(res.rows[i].bytes, sorted[i]);
		assert_int_equal(res.rows[i].bytes, bytes[a]);
		assert_int_equal(res.rows[i].flows, flows[a]);
	}
	ng_query_result_free(&res);
	free(bytes);
	free(flows);
	free(sorted);
}

/* A flow with ip_version NG_ROLLUP_MARK could be taken for a marker: its
 * segment's top rollup is made unusable, and the query reads the rows. */
static void test_marker_version(void **state)
{
	(void)state;
	char *d = ts_make_store("topmark");
	char err[256];
	ng_flow f[300];
	uint32_t si;
	for (size_t i = 0; i < 300; i++) {
		fill(&f[i], &si, T0 + i * 1000);
		addr(f[i].src_addr, 10, (uint32_t)i); /* 300 sources: some left out */
	}
	f[7].ip_version = NG_ROLLUP_MARK;
	ng_store_writer *w = ng_store_writer_open(d, err, sizeof err);
	assert_non_null(w);
	assert_int_equal(ng_store_writer_append(w, f, 300), 0);
	assert_int_equal(ng_store_writer_close(w), 0);
	ng_store_maint_stats st = {0};
	assert_int_equal(ng_store_rollup(d, T0 + 30 * HOUR, 0, 0, true, &st), 0);
	assert_int_equal(st.errors, 0);
	assert_int_equal(ts_count_files(d, "*.seg.r-srctop-1h"), 1);
	ng_query_result a, b;
	run(d, "srcip", NULL, T0, T0 + HOUR, NG_ORDER_BYTES, 5, false, &a);
	run(d, "srcip", NULL, T0, T0 + HOUR, NG_ORDER_BYTES, 5, true, &b);
	assert_int_equal(a.scan.segments_rollup, 0);
	assert_same("marker", &a, &b);
	assert_int_equal(a.flows_total, 300);
	ng_query_result_free(&a);
	ng_query_result_free(&b);
	memset(&st, 0, sizeof st);
	assert_int_equal(ng_store_rollup(d, T0 + 30 * HOUR, 0, 0, true, &st), 0);
	assert_int_equal(st.rollups_written, 0);
	ts_rm_rf(d);
	free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_same_answers),
	    cmocka_unit_test(test_against_records),
	    cmocka_unit_test(test_marker_version),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
