/*
 * test_query_views.c — the views of a time series (series.h,
 * ng_series_run_set): the reverse direction (keys and filter turned to
 * the other side: ng_query_reverse_keys, ng_filter_reverse) and the
 * previous period, against sums computed here by looping over the
 * records themselves.
 *
 * Flows over two days: day 0 from T0, day 1 from T0 + 1 d; each has a
 * source and destination port, AS and interface.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/addr.h"
#include "core/field.h"
#include "query/filter.h"
#include "query/query.h"
#include "query/series.h"
#include "store/store.h"
#include "test_rng.h"
#include "test_store_helpers.h"

#define T0 UINT64_C(1764460800000) /* 2025-11-30T00:00:00Z */
#define MIN UINT64_C(60000)
#define DAY (1440 * MIN)
enum { N = 8000, SPAN_MIN = 60, B = SPAN_MIN / 5 };

static ng_flow rows[N];
static char store[64];
static uint64_t rng = 0x13198a2e03707344ull;

static const uint16_t ports[] = {443, 80, 1024, 1025, 1026};

static int setup(void **state)
{
	(void)state;
	strcpy(store, "/tmp/ng_test_views_XXXXXX");
	assert_non_null(mkdtemp(store));
	for (size_t i = 0; i < N; i++) {
		ng_flow *r = &rows[i];
		memset(r, 0, sizeof *r);
		r->flow_start = T0 + (i % 2) * DAY + ts_xorshift64(&rng) % (SPAN_MIN * MIN);
		r->flow_end = r->flow_start + 1000;
		uint8_t a[4] = {10, 0, 0, (uint8_t)(1 + i % 7)}, b[4] = {192, 0, 2, 9};
		ng_addr_from_v4(r->src_addr, a);
		ng_addr_from_v4(r->dst_addr, b);
		r->src_port = ports[ts_xorshift64(&rng) % 5];
		r->dst_port = ports[ts_xorshift64(&rng) % 5];
		r->src_as = 100 + (uint32_t)(ts_xorshift64(&rng) % 3);
		r->dst_as = 100 + (uint32_t)(ts_xorshift64(&rng) % 3);
		r->in_if = (uint32_t)(ts_xorshift64(&rng) % 3);
		r->out_if = (uint32_t)(ts_xorshift64(&rng) % 3);
		r->protocol = 6;
		r->packets = 1 + ts_xorshift64(&rng) % 100;
		r->bytes = r->packets * (40 + ts_xorshift64(&rng) % 1400);
	}
	ts_write_rows(store, rows, N, 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	ts_rm_rf(store);
	return 0;
}

static int port_index(uint16_t p)
{
	for (int i = 0; i < 5; i++)
		if (ports[i] == p)
			return i;
	return -1;
}

/* The point of series k at time t in s, or NULL. */
static const ng_series_point *point(const ng_series *s, uint64_t t, size_t k)
{
	for (size_t i = 0; i < s->npoints; i++)
		if (s->points[i].t == t && s->points[i].series == k)
			return &s->points[i];
	return NULL;
}

/* Every cell of want[bucket][port] is the point of that port's series at
 * t0 + bucket × 5 min (none when empty), and there are no others. */
static void same_cells(const ng_series *s, ts_sums want[B][5], uint64_t t0)
{
	size_t cells = 0;
	for (size_t k = 0; k < s->nseries; k++) {
		uint16_t port;
		memcpy(&port, s->top[k].key, 2);
		int pi = port_index(port);
		assert_true(pi >= 0);
		for (size_t b = 0; b < B; b++) {
			const ng_series_point *p = point(s, t0 + b * 5 * MIN, k);
			if (!want[b][pi].flows) {
				assert_null(p);
				continue;
			}
			assert_non_null(p);
			assert_int_equal(p->flows, want[b][pi].flows);
			assert_int_equal(p->packets, want[b][pi].packets);
			assert_int_equal(p->bytes, want[b][pi].bytes);
			cells++;
		}
	}
	assert_int_equal(s->npoints, cells);
}

/* dstport under "src as 100 and in if 1": the reverse is srcport under
 * "dst as 100 and out if 1", both of day 1, from one call. */
static void test_reverse(void **state)
{
	(void)state;
	ts_sums fwd[B][5] = {{{0}}}, rev[B][5] = {{{0}}};
	for (size_t i = 0; i < N; i++) {
		const ng_flow *r = &rows[i];
		if (r->flow_start < T0 + DAY)
			continue;
		size_t b = (r->flow_start - T0 - DAY) / (5 * MIN);
		if (r->src_as == 100 && r->in_if == 1)
			ts_sums_add(&fwd[b][port_index(r->dst_port)], r);
		if (r->dst_as == 100 && r->out_if == 1)
			ts_sums_add(&rev[b][port_index(r->src_port)], r);
	}
	const char *text = "src as 100 and in if 1";
	char err[256];
	size_t col;
	ng_query q = {
	    .from_ms = T0 + DAY, .to_ms = T0 + DAY + SPAN_MIN * MIN, .order = NG_ORDER_BYTES};
	q.filter = ng_filter_parse(text, err, sizeof err, &col);
	assert_non_null(q.filter);
	assert_int_equal(ng_query_parse_keys(&q, "dstport", err, sizeof err), 0);
	ng_series_set set;
	assert_int_equal(
	    ng_series_run_set(store, &q, text, 5 * MIN, true, 0, &set, err, sizeof err), 0);
	assert_true(set.has_rev);
	assert_false(set.has_prev);
	assert_int_equal(set.rq.keys[0].field, NG_F_SRC_PORT);
	assert_string_equal(set.rq.keys[0].label, "srcport");
	assert_int_equal(set.main.nseries, 5);
	assert_int_equal(set.rev.nseries, 5);
	same_cells(&set.main, fwd, T0 + DAY);
	same_cells(&set.rev, rev, T0 + DAY);
	ng_series_set_free(&set);
	ng_filter_free(q.filter);
}

/* The filter turned around: columns and every side's field. */
static void test_filter_reverse(void **state)
{
	(void)state;
	char err[256];
	size_t col;
	ng_filter *f =
	    ng_filter_parse("src port 443 and not out if 2 and proto tcp", err, sizeof err, &col);
	assert_non_null(f);
	ng_filter_reverse(f);
	ng_colset c = ng_filter_columns(f);
	assert_true(ng_colset_has(c, NG_F_DST_PORT));
	assert_true(ng_colset_has(c, NG_F_IN_IF));
	assert_true(ng_colset_has(c, NG_F_PROTOCOL));
	assert_false(ng_colset_has(c, NG_F_SRC_PORT));
	assert_false(ng_colset_has(c, NG_F_OUT_IF));
	ng_filter_free(f);
	assert_int_equal(ng_field_partner(NG_F_SRC_COUNTRY), NG_F_DST_COUNTRY);
	assert_int_equal(ng_field_partner(NG_F_OUT_IF_NAME), NG_F_IN_IF_NAME);
	assert_int_equal(ng_field_partner(NG_F_PROTOCOL), -1);
	/* either keys stay; prefixes are kept */
	ng_query q = {0};
	assert_int_equal(ng_query_parse_keys(&q, "port,srcip4/24,proto", err, sizeof err), 0);
	ng_query_reverse_keys(&q);
	assert_int_equal(q.keys[0].field, NG_F_SRC_PORT);
	assert_int_equal(q.keys[0].alt, NG_F_DST_PORT);
	assert_int_equal(q.keys[1].field, NG_F_DST_ADDR);
	assert_int_equal(q.keys[1].plen4, 24);
	assert_int_equal(q.keys[2].field, NG_F_PROTOCOL);
}

/* Day 1 with previous = 1 d: the previous period's total is day 0's,
 * its times those of day 0 (the writer shifts them by prev_ms). */
static void test_previous(void **state)
{
	(void)state;
	ts_sums day0[B] = {{0}};
	for (size_t i = 0; i < N; i++)
		if (rows[i].flow_start < T0 + DAY)
			ts_sums_add(&day0[(rows[i].flow_start - T0) / (5 * MIN)], &rows[i]);
	ng_query q = {.from_ms = T0 + DAY,
	              .to_ms = T0 + DAY + SPAN_MIN * MIN,
	              .order = NG_ORDER_BYTES,
	              .limit = 2};
	char err[256];
	assert_int_equal(ng_query_parse_keys(&q, "dstport", err, sizeof err), 0);
	ng_series_set set;
	assert_int_equal(
	    ng_series_run_set(store, &q, NULL, 5 * MIN, false, DAY, &set, err, sizeof err), 0);
	assert_true(set.has_prev);
	assert_int_equal(set.prev_ms, DAY);
	assert_int_equal(set.pq.from_ms, T0);
	assert_int_equal(set.prev.nseries, 1);
	assert_int_equal(set.prev.npoints, B);
	for (size_t b = 0; b < B; b++) {
		const ng_series_point *p = point(&set.prev, T0 + b * 5 * MIN, 0);
		assert_non_null(p);
		assert_int_equal(p->flows, day0[b].flows);
		assert_int_equal(p->bytes, day0[b].bytes);
		assert_int_equal(p->packets, day0[b].packets);
	}
	assert_int_equal(set.prev.res.flows_total, N / 2);
	assert_int_equal(set.main.nseries, 2);
	ng_series_set_free(&set);
	/* a period that is not a whole number of intervals */
	assert_int_equal(
	    ng_series_run_set(store, &q, NULL, 7 * MIN, false, DAY, &set, err, sizeof err), -1);
	assert_non_null(strstr(err, "multiple of the interval"));
	ng_series_set_free(&set);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_filter_reverse),
	    cmocka_unit_test(test_reverse),
	    cmocka_unit_test(test_previous),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
