/*
 * test_query_topn.c — the query executor against brute force.
 *
 * Random flows are written to a temporary store; each query's result must
 * equal a reference computed here directly from the records: groups found
 * by a linear search, ranked by sorting every group (metric descending,
 * key bytes ascending), and a listing by sorting all matching records.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/addr.h"
#include "query/filter.h"
#include "query/output.h"
#include "query/query.h"
#include "store/store.h"
#include "test_rng.h"
#include "test_store_helpers.h"

#define T0 UINT64_C(1764460800000) /* 2025-11-30T00:00:00Z */
#define HOUR UINT64_C(3600000)
enum { N = 30000 };

static ng_flow rows[N];
static char store[64];

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
	return ts_xorshift64(&rng);
}

static int setup(void **state)
{
	(void)state;
	strcpy(store, "/tmp/ng_test_query_XXXXXX");
	assert_non_null(mkdtemp(store));
	/* unique flow_start values, spread over 3 hours, in random order */
	for (size_t i = 0; i < N; i++) {
		ng_flow *r = &rows[i];
		memset(r, 0, sizeof *r);
		r->flow_start = T0 + i * (3 * HOUR / N);
		r->flow_end = r->flow_start + rnd() % 100000;
		uint8_t a[4] = {10, 0, (uint8_t)(rnd() % 4), (uint8_t)(rnd() % 50)};
		ng_addr_from_v4(r->src_addr, a);
		if (rnd() % 10 == 0) {
			ng_addr_parse("2001:db8::1", r->dst_addr);
			r->dst_addr[15] = (uint8_t)(rnd() % 8);
		} else {
			uint8_t d[4] = {192, 0, 2, (uint8_t)(rnd() % 40)};
			ng_addr_from_v4(r->dst_addr, d);
		}
		static const uint16_t ports[] = {22, 53, 80, 443, 8080};
		r->src_port = (uint16_t)(rnd() % 3 ? 1024 + rnd() % 100 : ports[rnd() % 5]);
		r->dst_port = ports[rnd() % 5];
		r->protocol = rnd() % 3 ? 6 : 17;
		r->packets = 1 + rnd() % 1000;
		r->bytes = r->packets * (40 + rnd() % 1460);
		r->in_if = (uint32_t)(rnd() % 6);
	}
	for (size_t i = N - 1; i > 0; i--) { /* shuffle: the writer must sort */
		size_t j = rnd() % (i + 1);
		ng_flow t = rows[i];
		rows[i] = rows[j];
		rows[j] = t;
	}
	ts_write_rows(store, rows, N, 7000);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	ts_rm_rf(store);
	return 0;
}

/* ---- the reference --------------------------------------------------- */

typedef struct ref_ctx {
	const ng_query *q;
	size_t klen;
} ref_ctx;

static ref_ctx g_ref;

static size_t make_key(const ng_query *q, const ng_flow *r, bool alt, uint8_t *k)
{
	size_t off = 0;
	for (size_t j = 0; j < q->nkeys; j++) {
		int f = alt && q->keys[j].alt >= 0 ? q->keys[j].alt : (int)q->keys[j].field;
		memcpy(k + off, ng_field_ptr(&ng_fields[f], r), ng_fields[f].size);
		off += ng_fields[f].size;
	}
	return off;
}

static int cmp_ref(const void *a, const void *b)
{
	const ng_agg_row *x = a, *y = b;
	double mx = ng_agg_metric(x, g_ref.q->order), my = ng_agg_metric(y, g_ref.q->order);
	if (mx != my)
		return mx > my ? -1 : 1;
	return memcmp(x->key, y->key, g_ref.klen);
}

static bool selected(const ng_query *q, const ng_flow *r)
{
	return r->flow_start >= q->from_ms && r->flow_start < q->to_ms &&
	       (!q->filter || ng_filter_match_flow(q->filter, r));
}

/* All groups of q over rows[], sorted best first.  Returns the count. */
static size_t reference(const ng_query *q, ng_agg_row **out)
{
	ng_agg_row *g = calloc(2 * N, sizeof *g);
	size_t ng = 0;
	bool either = false;
	for (size_t j = 0; j < q->nkeys; j++)
		either |= q->keys[j].alt >= 0;
	for (size_t i = 0; i < N; i++) {
		if (!selected(q, &rows[i]))
			continue;
		for (int side = 0; side < (either ? 2 : 1); side++) {
			uint8_t k[NG_QUERY_KEY_MAX] = {0};
			size_t klen = make_key(q, &rows[i], side == 1, k);
			size_t at = 0;
			while (at < ng && memcmp(g[at].key, k, klen))
				at++;
			if (at == ng) {
				memset(&g[ng], 0, sizeof g[ng]);
				memcpy(g[ng].key, k, klen);
				g[ng].first = UINT64_MAX;
				ng++;
			}
			g[at].flows++;
			g[at].packets += rows[i].packets;
			g[at].bytes += rows[i].bytes;
			if (rows[i].flow_start < g[at].first)
				g[at].first = rows[i].flow_start;
			if (rows[i].flow_end > g[at].last)
				g[at].last = rows[i].flow_end;
		}
	}
	g_ref.q = q;
	g_ref.klen = ng_query_key_len(q);
	qsort(g, ng, sizeof *g, cmp_ref);
	*out = g;
	return ng;
}

static void check_top(const char *keys, enum ng_order order, size_t limit, const char *filter,
                      uint64_t from, uint64_t to)
{
	ng_query q = {.from_ms = from, .to_ms = to, .order = order, .limit = limit};
	char err[512];
	assert_int_equal(ng_query_parse_keys(&q, keys, err, sizeof err), 0);
	if (filter) {
		q.filter = ng_filter_parse(filter, err, sizeof err, NULL);
		assert_non_null(q.filter);
	}
	ng_query_result res;
	assert_int_equal(ng_query_run(store, &q, &res, err, sizeof err), 0);
	ng_agg_row *want;
	size_t nw = reference(&q, &want);
	assert_true(nw > limit); /* the limit really cuts */
	assert_int_equal(res.groups, nw);
	assert_int_equal(res.nrows, limit);
	size_t klen = ng_query_key_len(&q);
	for (size_t i = 0; i < limit; i++) {
		const ng_agg_row *a = &res.rows[i], *b = &want[i];
		if (memcmp(a->key, b->key, klen))
			fail_msg("-s %s/%s: row %zu has another key", keys, ng_order_name(order),
			         i);
		assert_int_equal(a->flows, b->flows);
		assert_int_equal(a->packets, b->packets);
		assert_int_equal(a->bytes, b->bytes);
		assert_int_equal(a->first, b->first);
		assert_int_equal(a->last, b->last);
	}
	/* totals count each selected flow once */
	uint64_t flows = 0, bytes = 0;
	for (size_t i = 0; i < N; i++)
		if (selected(&q, &rows[i])) {
			flows++;
			bytes += rows[i].bytes;
		}
	assert_int_equal(res.flows_total, flows);
	assert_int_equal(res.bytes_total, bytes);
	free(want);
	ng_query_result_free(&res);
	ng_filter_free(q.filter);
}

static void test_top_srcip_bytes(void **s)
{
	(void)s;
	check_top("srcip", NG_ORDER_BYTES, 10, NULL, 0, UINT64_MAX);
}

static void test_top_dstip_packets(void **s)
{
	(void)s;
	check_top("dstip", NG_ORDER_PACKETS, 15, NULL, 0, UINT64_MAX);
}

static void test_top_dstport_flows(void **s)
{
	(void)s;
	check_top("dstport", NG_ORDER_FLOWS, 3, NULL, 0, UINT64_MAX);
}

static void test_top_ip_either(void **s)
{
	(void)s;
	check_top("ip", NG_ORDER_FLOWS, 20, NULL, 0, UINT64_MAX);
}

static void test_top_port_either_filtered(void **s)
{
	(void)s;
	check_top("port", NG_ORDER_BYTES, 10, "proto tcp and not dst port 80", T0 + HOUR / 2,
	          T0 + 2 * HOUR);
}

static void test_top_conv_bps(void **s)
{
	(void)s;
	check_top("conv", NG_ORDER_BPS, 25, "src net 10.0.1.0/24", 0, UINT64_MAX);
}

static void test_top_composite_bpp(void **s)
{
	(void)s;
	check_top("proto,dstport", NG_ORDER_BPP, 5, NULL, 0, T0 + HOUR);
}

static void test_top_inif_pps(void **s)
{
	(void)s;
	check_top("inif", NG_ORDER_PPS, 4, "dst net 2001:db8::/32", 0, UINT64_MAX);
}

/* A key prefix (the completion of filter values, GET /api/v1/complete):
 * the answer is the reference's groups whose first key's text starts
 * with `prefix` (ASCII case-insensitive), in the same order, at most
 * `limit`; groups counts those. */
static void check_prefix(const char *keys, const char *prefix, size_t limit)
{
	ng_query q = {.to_ms = UINT64_MAX, .order = NG_ORDER_BYTES, .limit = limit};
	char err[512], buf[128];
	assert_int_equal(ng_query_parse_keys(&q, keys, err, sizeof err), 0);
	ng_agg_row *all;
	size_t na = reference(&q, &all), nw = 0;
	for (size_t i = 0; i < na; i++)
		if (!strncasecmp(ng_format_key(&q, 0, all[i].key, false, buf), prefix,
		                 strlen(prefix)))
			all[nw++] = all[i];
	q.key_prefix = prefix;
	ng_query_result res;
	assert_int_equal(ng_query_run(store, &q, &res, err, sizeof err), 0);
	assert_true(nw > 0);
	assert_int_equal(res.groups, nw);
	assert_int_equal(res.nrows, limit && limit < nw ? limit : nw);
	size_t klen = ng_query_key_len(&q);
	for (size_t i = 0; i < res.nrows; i++) {
		if (memcmp(res.rows[i].key, all[i].key, klen))
			fail_msg("-s %s prefix '%s': row %zu has another key", keys, prefix, i);
		assert_int_equal(res.rows[i].bytes, all[i].bytes);
	}
	free(all);
	ng_query_result_free(&res);
}

static void test_top_key_prefix(void **s)
{
	(void)s;
	check_prefix("srcip", "10.0.1.", 5);    /* IPv4 only: the IPv4 table */
	check_prefix("dstip", "2001:DB8::", 3); /* mixed: the generic table; case */
	check_prefix("dstip", "192.0.2.3", 0);  /* no limit: all that match */
	check_prefix("dstport", "8", 10);       /* fewer match than the limit */
	check_prefix("srcport,dstport", "10", 7);
	/* a prefix nothing has: no rows, no groups */
	ng_query q = {.to_ms = UINT64_MAX, .limit = 10, .key_prefix = "zz"};
	char err[512];
	assert_int_equal(ng_query_parse_keys(&q, "srcip", err, sizeof err), 0);
	ng_query_result res;
	assert_int_equal(ng_query_run(store, &q, &res, err, sizeof err), 0);
	assert_int_equal(res.nrows, 0);
	assert_int_equal(res.groups, 0);
	assert_int_equal(res.flows_total, N);
	ng_query_result_free(&res);
}

static int cmp_start(const void *a, const void *b)
{
	const ng_flow *x = a, *y = b;
	return x->flow_start < y->flow_start ? -1 : x->flow_start > y->flow_start;
}

static void check_listing(const char *filter, uint64_t from, uint64_t to, size_t limit)
{
	char err[512];
	ng_query q = {.from_ms = from, .to_ms = to, .limit = limit};
	if (filter)
		assert_non_null(q.filter = ng_filter_parse(filter, err, sizeof err, NULL));
	ng_query_result res;
	assert_int_equal(ng_query_run(store, &q, &res, err, sizeof err), 0);
	ng_flow *want = malloc(N * sizeof *want);
	size_t nw = 0;
	for (size_t i = 0; i < N; i++)
		if (selected(&q, &rows[i]))
			want[nw++] = rows[i];
	qsort(want, nw, sizeof *want, cmp_start);
	size_t expect = limit && limit < nw ? limit : nw;
	assert_int_equal(res.nflows, expect);
	if (!limit)
		assert_int_equal(res.flows_total, nw);
	for (size_t i = 0; i < expect; i++)
		if (memcmp(&res.flows[i], &want[i], sizeof want[i]))
			fail_msg("listing row %zu differs (start %llu vs %llu)", i,
			         (unsigned long long)res.flows[i].flow_start,
			         (unsigned long long)want[i].flow_start);
	free(want);
	ng_query_result_free(&res);
	ng_filter_free(q.filter);
}

static void test_listing_order_limit(void **s)
{
	(void)s;
	check_listing(NULL, 0, UINT64_MAX, 50);
	check_listing(NULL, T0 + HOUR + 5, UINT64_MAX, 9000); /* spans segments */
	check_listing("proto udp and dst port 53", T0 + HOUR + 123456, T0 + 2 * HOUR, 40);
	check_listing("host 192.0.2.7", 0, UINT64_MAX, 0); /* no limit: all */
}

static void test_bad_keys_and_store(void **s)
{
	(void)s;
	ng_query q = {0};
	char err[512];
	assert_int_equal(ng_query_parse_keys(&q, "srcip,bogus", err, sizeof err), -1);
	assert_non_null(strstr(err, "'bogus'"));
	q.nkeys = 0;
	assert_int_equal(ng_query_parse_keys(&q, "ip,port", err, sizeof err), -1);
	q.nkeys = 0;
	assert_int_equal(ng_query_parse_keys(&q, "conv", err, sizeof err), 0);
	assert_int_equal(q.nkeys, 2);
	assert_int_equal(ng_query_key_len(&q), 32);
	ng_query_result res;
	q.to_ms = UINT64_MAX;
	assert_int_equal(ng_query_run("/nonexistent/store", &q, &res, err, sizeof err), -1);
	assert_non_null(strstr(err, "not a flow store"));
	enum ng_order o;
	assert_true(ng_query_parse_order("BPS", &o));
	assert_int_equal(o, NG_ORDER_BPS);
	assert_false(ng_query_parse_order("speed", &o));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_top_srcip_bytes),
	    cmocka_unit_test(test_top_key_prefix),
	    cmocka_unit_test(test_top_dstip_packets),
	    cmocka_unit_test(test_top_dstport_flows),
	    cmocka_unit_test(test_top_ip_either),
	    cmocka_unit_test(test_top_port_either_filtered),
	    cmocka_unit_test(test_top_conv_bps),
	    cmocka_unit_test(test_top_composite_bpp),
	    cmocka_unit_test(test_top_inif_pps),
	    cmocka_unit_test(test_listing_order_limit),
	    cmocka_unit_test(test_bad_keys_and_store),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
