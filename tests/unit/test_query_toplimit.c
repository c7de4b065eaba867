/*
 * test_query_toplimit.c — a top-N with a limit over a high-cardinality
 * address key, where many groups tie on the order metric, against a
 * brute-force reference: exactly the first `limit` groups by (metric
 * descending, key bytes ascending), with their values.
 *
 * Two stores: IPv4 sources only (the executor picks the top straight from
 * its IPv4 tables, merged across workers) and IPv4 with some IPv6 sources
 * (every group folded into the generic table).  One and three scan
 * workers; order by bytes (ties on purpose) and by bps (a computed
 * metric).
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
#include "query/query.h"
#include "store/store.h"
#include "test_rng.h"

#define T0 UINT64_C(1764460800000)
enum { NADDR = 5000, N = 60000, NSEG = 6, LIMIT = 40 };

static uint64_t rng = 0xA55A5AA5C3C3ull;
static uint64_t rnd(void)
{
	return ts_xorshift64(&rng);
}

typedef struct group {
	uint8_t key[16];
	uint64_t flows, packets, bytes, first, last;
} group;

static ng_flow *rows;
static group groups[NADDR];
static char dir[64];

/* Address a of the pool: 10.x.y.z, or 2001:db8::a when v6 (every 7th). */
static void pool_addr(size_t a, bool mixed, uint8_t out[16])
{
	memset(out, 0, 16);
	if (mixed && a % 7 == 3) {
		out[0] = 0x20, out[1] = 0x01, out[2] = 0x0d, out[3] = 0xb8;
		out[14] = (uint8_t)(a >> 8), out[15] = (uint8_t)a;
		return;
	}
	out[10] = out[11] = 0xff;
	out[12] = 10, out[13] = (uint8_t)(a >> 16);
	out[14] = (uint8_t)(a >> 8), out[15] = (uint8_t)a;
}

/* Bytes of 100 or 200 a flow: groups of equal flow counts tie. */
static void make_store(bool mixed)
{
	strcpy(dir, "/tmp/ng_test_toplimit_XXXXXX");
	assert_non_null(mkdtemp(dir));
	rows = calloc(N, sizeof *rows);
	assert_non_null(rows);
	memset(groups, 0, sizeof groups);
	for (size_t a = 0; a < NADDR; a++) {
		pool_addr(a, mixed, groups[a].key);
		groups[a].first = UINT64_MAX;
	}
	for (size_t i = 0; i < N; i++) {
		ng_flow *r = &rows[i];
		size_t a = (size_t)(rnd() % 40 == 0 ? rnd() % 50 : rnd() % NADDR); /* some heavy */
		memcpy(r->src_addr, groups[a].key, 16);
		r->dst_addr[10] = r->dst_addr[11] = 0xff, r->dst_addr[12] = 192;
		r->flow_start = T0 + i * 50;
		r->flow_end = r->flow_start + rnd() % 3000;
		r->time_received = r->flow_end;
		r->bytes = rnd() % 4 ? 100 : 200;
		r->packets = 1 + rnd() % 3;
		r->protocol = 6;
		group *g = &groups[a];
		g->flows++, g->packets += r->packets, g->bytes += r->bytes;
		g->first = r->flow_start < g->first ? r->flow_start : g->first;
		g->last = r->flow_end > g->last ? r->flow_end : g->last;
	}
	char err[256];
	ng_store_writer *w = ng_store_writer_open(dir, err, sizeof err);
	assert_non_null(w);
	for (size_t s = 0; s < NSEG; s++) {
		assert_true(ng_store_writer_append(w, rows + s * (N / NSEG), N / NSEG) >= 0);
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

static enum ng_order order_g;

static double metric(const group *g)
{
	ng_agg_row r = {.flows = g->flows,
	                .packets = g->packets,
	                .bytes = g->bytes,
	                .first = g->first,
	                .last = g->last};
	return ng_agg_metric(&r, order_g);
}

static int cmp_rank(const void *a, const void *b)
{
	const group *x = a, *y = b;
	double mx = metric(x), my = metric(y);
	if (mx != my)
		return mx > my ? -1 : 1;
	return memcmp(x->key, y->key, 16);
}

static void check(enum ng_order order, unsigned threads)
{
	group ref[NADDR];
	size_t nref = 0;
	for (size_t a = 0; a < NADDR; a++)
		if (groups[a].flows)
			ref[nref++] = groups[a];
	order_g = order;
	qsort(ref, nref, sizeof *ref, cmp_rank);
	size_t ties = 0;
	for (size_t i = LIMIT - 5; i < LIMIT + 5; i++)
		ties += metric(&ref[i]) == metric(&ref[i + 1]);
	if (order == NG_ORDER_BYTES)
		assert_true(ties > 0); /* the cut falls among ties */
	ng_query q = {
	    .from_ms = 0, .to_ms = UINT64_MAX, .order = order, .limit = LIMIT, .threads = threads};
	char err[256];
	assert_int_equal(ng_query_parse_keys(&q, "srcip", err, sizeof err), 0);
	ng_query_result res;
	assert_int_equal(ng_query_run(dir, &q, &res, err, sizeof err), 0);
	assert_int_equal(res.groups, nref);
	assert_int_equal(res.nrows, LIMIT);
	assert_int_equal(res.flows_total, N);
	for (size_t i = 0; i < LIMIT; i++) {
		const ng_agg_row *g = &res.rows[i];
		if (memcmp(g->key, ref[i].key, 16) || g->flows != ref[i].flows ||
		    g->bytes != ref[i].bytes || g->packets != ref[i].packets ||
		    g->first != ref[i].first || g->last != ref[i].last)
			fail_msg("order %d threads %u: row %zu differs from the reference", order,
			         threads, i);
	}
	ng_query_result_free(&res);
}

static void run_checks(void)
{
	for (unsigned t = 1; t <= 3; t += 2) {
		check(NG_ORDER_BYTES, t);
		check(NG_ORDER_BPS, t);
		check(NG_ORDER_FLOWS, t);
	}
}

static void test_v4(void **state)
{
	(void)state;
	make_store(false);
	run_checks();
	drop_store();
}

static void test_mixed(void **state)
{
	(void)state;
	make_store(true);
	run_checks();
	drop_store();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_v4),
	    cmocka_unit_test(test_mixed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
