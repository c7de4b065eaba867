/*
 * test_query_series.c — time series, Sankey pairs and stages, conversations (-B) and
 * prefix aggregation (-A srcip4/24) against brute force.
 *
 * Random flows (some in both directions between the same hosts) are
 * written to a temporary store; every result is compared with sums
 * computed here by looping over the records themselves: per bucket, per
 * key, per edge, per unordered address pair, per /24.
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
#include "query/pairs.h"
#include "query/sankey.h"
#include "query/query.h"
#include "query/series.h"
#include "store/store.h"
#include "test_rng.h"
#include "test_store_helpers.h"

#define T0 UINT64_C(1764460800000) /* 2025-11-30T00:00:00Z, a multiple of 1 h */
#define MIN UINT64_C(60000)
enum { N = 20000, SPAN_MIN = 90 };

static ng_flow rows[N];
static char store[64];

static uint64_t rng = 0x243f6a8885a308d3ull;
static uint64_t rnd(void)
{
	return ts_xorshift64(&rng);
}

static const uint16_t ports[] = {22, 53, 80, 443, 8080, 123};

static int setup(void **state)
{
	(void)state;
	strcpy(store, "/tmp/ng_test_series_XXXXXX");
	assert_non_null(mkdtemp(store));
	for (size_t i = 0; i < N; i++) {
		ng_flow *r = &rows[i];
		memset(r, 0, sizeof *r);
		/* 90 minutes from T0 + 7 s: buckets do not start at the first flow */
		r->flow_start = T0 + 7000 + rnd() % (SPAN_MIN * MIN);
		r->flow_end = r->flow_start + rnd() % 30000;
		uint8_t a[4] = {10, 0, (uint8_t)(rnd() % 3), (uint8_t)(rnd() % 6)};
		uint8_t b[4] = {192, 0, 2, (uint8_t)(rnd() % 5)};
		bool rev = rnd() % 3 == 0; /* replies: B -> A */
		ng_addr_from_v4(rev ? r->dst_addr : r->src_addr, a);
		ng_addr_from_v4(rev ? r->src_addr : r->dst_addr, b);
		r->dst_port = ports[rnd() % 6 < 3 ? rnd() % 2 : rnd() % 6];
		r->src_port = (uint16_t)(1024 + rnd() % 4);
		r->protocol = rnd() % 4 ? 6 : 17;
		r->packets = 1 + rnd() % 500;
		r->bytes = r->packets * (40 + rnd() % 1460);
		r->in_if = (uint32_t)(rnd() % 4);
	}
	ts_write_rows(store, rows, N, 5000);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	ts_rm_rf(store);
	return 0;
}

static void same(const ts_sums *want, uint64_t flows, uint64_t packets, uint64_t bytes)
{
	assert_int_equal(flows, want->flows);
	assert_int_equal(packets, want->packets);
	assert_int_equal(bytes, want->bytes);
}

static int port_index(uint16_t p)
{
	for (int i = 0; i < 6; i++)
		if (ports[i] == p)
			return i;
	return -1;
}

/* 5-minute buckets, no key: one "total" series, every bucket exact. */
static void test_series_total(void **state)
{
	(void)state;
	enum { B = SPAN_MIN / 5 + 1 };
	ts_sums want[B] = {{0}};
	for (size_t i = 0; i < N; i++)
		ts_sums_add(&want[(rows[i].flow_start - T0) / (5 * MIN)], &rows[i]);
	ng_query q = {.to_ms = UINT64_MAX, .order = NG_ORDER_BYTES, .limit = 5};
	ng_series s;
	char err[256];
	assert_int_equal(ng_series_run(store, &q, 5 * MIN, &s, err, sizeof err), 0);
	assert_int_equal(s.nseries, 1);
	assert_false(s.has_other);
	size_t nonempty = 0;
	for (size_t b = 0; b < B; b++)
		nonempty += want[b].flows > 0;
	assert_int_equal(s.npoints, nonempty);
	for (size_t i = 0; i < s.npoints; i++) {
		const ng_series_point *p = &s.points[i];
		assert_int_equal((p->t - T0) % (5 * MIN), 0); /* UTC-aligned */
		same(&want[(p->t - T0) / (5 * MIN)], p->flows, p->packets, p->bytes);
	}
	assert_int_equal(s.res.flows_total, N);
	ng_series_free(&s);
}

/* 10-minute buckets by dst port, top 3 by bytes + other. */
static void test_series_top_other(void **state)
{
	(void)state;
	enum { B = SPAN_MIN / 10 + 1 };
	ts_sums per[6] = {{0}}, cell[B][6] = {{{0}}};
	for (size_t i = 0; i < N; i++) {
		int k = port_index(rows[i].dst_port);
		ts_sums_add(&per[k], &rows[i]);
		ts_sums_add(&cell[(rows[i].flow_start - T0) / (10 * MIN)][k], &rows[i]);
	}
	/* reference top 3 by bytes (no ties in this data: checked) */
	int order[6] = {0, 1, 2, 3, 4, 5};
	for (int a = 0; a < 6; a++)
		for (int b = a + 1; b < 6; b++)
			if (per[order[b]].bytes > per[order[a]].bytes) {
				int t = order[a];
				order[a] = order[b];
				order[b] = t;
			}
	assert_true(per[order[2]].bytes != per[order[3]].bytes);

	ng_query q = {.to_ms = UINT64_MAX, .order = NG_ORDER_BYTES, .limit = 3};
	char err[256];
	assert_int_equal(ng_query_parse_keys(&q, "dstport", err, sizeof err), 0);
	ng_series s;
	assert_int_equal(ng_series_run(store, &q, 10 * MIN, &s, err, sizeof err), 0);
	assert_int_equal(s.nseries, 3);
	assert_true(s.has_other);
	for (int i = 0; i < 3; i++) {
		uint16_t port;
		memcpy(&port, s.top[i].key, 2);
		assert_int_equal(port, ports[order[i]]);
		same(&per[order[i]], s.top[i].flows, s.top[i].packets, s.top[i].bytes);
	}
	size_t points = 0;
	for (size_t b = 0; b < B; b++) {
		ts_sums other = {0};
		for (int k = 3; k < 6; k++) {
			other.flows += cell[b][order[k]].flows;
			other.packets += cell[b][order[k]].packets;
			other.bytes += cell[b][order[k]].bytes;
		}
		for (int k = 0; k < 4; k++) {
			const ts_sums *w = k < 3 ? &cell[b][order[k]] : &other;
			if (!w->flows)
				continue;
			const ng_series_point *p = NULL;
			for (size_t i = 0; i < s.npoints; i++)
				if (s.points[i].t == T0 + b * 10 * MIN &&
				    s.points[i].series == (size_t)k)
					p = &s.points[i];
			assert_non_null(p);
			same(w, p->flows, p->packets, p->bytes);
			points++;
		}
	}
	assert_int_equal(s.npoints, points);
	for (size_t i = 1; i < s.npoints; i++) /* by time, then series */
		assert_true(s.points[i - 1].t < s.points[i].t ||
		            (s.points[i - 1].t == s.points[i].t &&
		             s.points[i - 1].series < s.points[i].series));
	ng_series_free(&s);
}

/* Sankey edges in_if -> dst_port: top 5 by flows, other = the rest. */
static void test_pairs(void **state)
{
	(void)state;
	ts_sums edge[4][6] = {{{0}}};
	for (size_t i = 0; i < N; i++)
		ts_sums_add(&edge[rows[i].in_if][port_index(rows[i].dst_port)], &rows[i]);
	ng_query q = {.to_ms = UINT64_MAX, .order = NG_ORDER_FLOWS, .limit = 5};
	char err[256];
	assert_int_equal(ng_pairs_parse(&q, "inif,dstport", err, sizeof err), 0);
	assert_int_not_equal(ng_pairs_parse(&q, "ip,dstport", err, sizeof err), 0);
	assert_int_not_equal(ng_pairs_parse(&q, "srcip", err, sizeof err), 0);
	ng_pairs p;
	assert_int_equal(ng_pairs_run(store, &q, &p, err, sizeof err), 0);
	assert_int_equal(p.res.nrows, 5);
	ts_sums top = {0}, all = {0};
	uint64_t prev = UINT64_MAX;
	for (size_t i = 0; i < 5; i++) {
		const ng_agg_row *r = &p.res.rows[i];
		uint32_t inif;
		uint16_t port;
		memcpy(&inif, r->key, 4);
		memcpy(&port, r->key + 4, 2);
		const ts_sums *w = &edge[inif][port_index(port)];
		same(w, r->flows, r->packets, r->bytes);
		assert_true(r->flows <= prev);
		prev = r->flows;
		top.flows += w->flows;
		top.packets += w->packets;
		top.bytes += w->bytes;
	}
	/* no edge outside the top 5 has more flows than the 5th */
	for (int a = 0; a < 4; a++)
		for (int b = 0; b < 6; b++) {
			all.flows += edge[a][b].flows;
			all.packets += edge[a][b].packets;
			all.bytes += edge[a][b].bytes;
			bool in_top = false;
			for (size_t i = 0; i < 5; i++) {
				uint32_t inif;
				uint16_t port;
				memcpy(&inif, p.res.rows[i].key, 4);
				memcpy(&port, p.res.rows[i].key + 4, 2);
				in_top |= inif == (uint32_t)a && port == ports[b];
			}
			if (!in_top)
				assert_true(edge[a][b].flows <= prev);
		}
	ts_sums other = {all.flows - top.flows, all.packets - top.packets, all.bytes - top.bytes};
	assert_true(p.has_other);
	same(&other, p.other.flows, p.other.packets, p.other.bytes);
	assert_int_equal(all.flows, N);
	ng_pairs_free(&p);
}

/* The node of value v in stage nodes nd[0..n): its index, or -1. */
static int sk_node(const ng_sankey_node *nd, size_t n, const void *v, size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (!nd[i].other && !memcmp(nd[i].key, v, len))
			return (int)i;
	return -1;
}

/* A 3-stage Sankey inif → dstport → proto, top 2 a stage by bytes:
 * each stage's kept values are a top 2 and their sums, "other" the rest,
 * every link the sum of its flows (brute force over the records). */
static void test_sankey(void **state)
{
	(void)state;
	ng_query q = {.to_ms = UINT64_MAX, .order = NG_ORDER_BYTES, .limit = 2};
	char err[256];
	assert_int_equal(ng_sankey_parse(&q, "inif,dstport,proto", err, sizeof err), 0);
	assert_int_not_equal(ng_sankey_parse(&q, "inif", err, sizeof err), 0);
	assert_int_not_equal(ng_sankey_parse(&q, "port,proto", err, sizeof err), 0);
	ng_sankey sk;
	assert_int_equal(ng_sankey_run(store, &q, &sk, err, sizeof err), 0);
	assert_int_equal(sk.nstages, 3);
	/* the stage values of each record, as node indices (other: the last) */
	ts_sums node[3][3] = {{{0}}}, link[2][3][3] = {{{{0}}}}, vals[3][256] = {{{0}}};
	for (size_t i = 0; i < N; i++) {
		const ng_flow *r = &rows[i];
		uint32_t inif = r->in_if;
		uint16_t port = r->dst_port;
		uint8_t proto = r->protocol;
		int ix[3] = {sk_node(sk.nodes[0], sk.nnodes[0], &inif, 4),
		             sk_node(sk.nodes[1], sk.nnodes[1], &port, 2),
		             sk_node(sk.nodes[2], sk.nnodes[2], &proto, 1)};
		for (int j = 0; j < 3; j++)
			ix[j] = ix[j] < 0 ? 2 : ix[j];
		ts_sums_add(&vals[0][inif], r), ts_sums_add(&vals[1][port_index(port)], r),
		    ts_sums_add(&vals[2][proto], r);
		for (int j = 0; j < 3; j++)
			ts_sums_add(&node[j][ix[j]], r);
		ts_sums_add(&link[0][ix[0]][ix[1]], r), ts_sums_add(&link[1][ix[1]][ix[2]], r);
	}
	/* 4 interfaces, 6 ports: 2 kept and other; 2 protocols: both kept */
	assert_int_equal(sk.nnodes[0], 3);
	assert_int_equal(sk.nnodes[1], 3);
	assert_int_equal(sk.nnodes[2], 2);
	for (int j = 0; j < 3; j++)
		for (size_t i = 0; i < sk.nnodes[j]; i++) {
			const ng_sankey_node *nd = &sk.nodes[j][i];
			assert_int_equal(nd->other, i == 2);
			same(&node[j][i], nd->flows, nd->packets, nd->bytes);
		}
	/* kept: no other value has more bytes than the 2nd */
	for (int v = 0; v < 256; v++) {
		if (v < 4 && sk_node(sk.nodes[0], 2, &(uint32_t){(uint32_t)v}, 4) < 0)
			assert_true(vals[0][v].bytes <= sk.nodes[0][1].bytes);
		if (v < 6 && sk_node(sk.nodes[1], 2, &ports[v], 2) < 0)
			assert_true(vals[1][v].bytes <= sk.nodes[1][1].bytes);
	}
	size_t nl = 0;
	for (int j = 0; j < 2; j++)
		for (int a = 0; a < 3; a++)
			for (int b = 0; b < 3; b++)
				nl += link[j][a][b].flows > 0;
	assert_int_equal(sk.nlinks, nl);
	for (size_t i = 0; i < sk.nlinks; i++) {
		const ng_sankey_link *l = &sk.links[i];
		same(&link[l->stage][l->source][l->target], l->flows, l->packets, l->bytes);
		if (i && sk.links[i - 1].stage == l->stage)
			assert_true(sk.links[i - 1].bytes >= l->bytes); /* best first */
	}
	assert_int_equal(sk.res.flows_total, N);
	ng_sankey_free(&sk);
}

/* -B over srcip,dstip: (A,B) and (B,A) in one row, each direction's sums. */
static void test_bidir(void **state)
{
	(void)state;
	/* A = 10.0.x.y (18 hosts), B = 192.0.2.z (5 hosts) */
	ts_sums ab[3][6][5] = {{{{0}}}}, ba[3][6][5] = {{{{0}}}};
	for (size_t i = 0; i < N; i++) {
		const ng_flow *r = &rows[i];
		bool fwd = r->src_addr[12] == 10;
		const uint8_t *a = fwd ? r->src_addr : r->dst_addr,
		              *b = fwd ? r->dst_addr : r->src_addr;
		ts_sums_add(fwd ? &ab[a[14]][a[15]][b[15]] : &ba[a[14]][a[15]][b[15]], r);
	}
	ng_query q = {.to_ms = UINT64_MAX, .order = NG_ORDER_BYTES, .limit = 0};
	char err[256];
	assert_int_equal(ng_query_parse_keys(&q, "srcip,dstip", err, sizeof err), 0);
	ng_bidir b;
	assert_int_equal(ng_bidir_run(store, &q, &b, err, sizeof err), 0);
	assert_int_equal(b.nrows, 3 * 6 * 5);
	assert_int_equal(b.conversations, 3 * 6 * 5);
	double prev = 1e300;
	for (size_t i = 0; i < b.nrows; i++) {
		const ng_bidir_row *r = &b.rows[i];
		/* no ports in the key: A is the side that sent more flows */
		const uint8_t *a = r->key, *c = r->key + 16;
		bool fwd = a[12] == 10;
		const uint8_t *h10 = fwd ? a : c, *h192 = fwd ? c : a;
		assert_int_equal(h10[12], 10);
		assert_int_equal(h192[12], 192);
		const ts_sums *s1 = &ab[h10[14]][h10[15]][h192[15]],
		              *s2 = &ba[h10[14]][h10[15]][h192[15]];
		same(fwd ? s1 : s2, r->ab.flows, r->ab.packets, r->ab.bytes);
		same(fwd ? s2 : s1, r->ba.flows, r->ba.packets, r->ba.bytes);
		assert_true(r->ab.flows >= r->ba.flows);
		double m = ng_bidir_metric(r, NG_ORDER_BYTES);
		assert_true(m <= prev);
		prev = m;
	}
	ng_bidir_free(&b);
	/* the default key (5-tuple) and a limit */
	ng_query q5 = {.to_ms = UINT64_MAX, .order = NG_ORDER_FLOWS, .limit = 7};
	assert_int_equal(ng_bidir_run(store, &q5, &b, err, sizeof err), 0);
	assert_int_equal(b.nrows, 7);
	assert_true(b.conversations > 7);
	for (size_t i = 0; i < b.nrows; i++) { /* A: the higher (client) port */
		uint16_t sp, dp;
		memcpy(&sp, b.rows[i].key + 17, 2);
		memcpy(&dp, b.rows[i].key + 35, 2);
		assert_true(sp >= dp);
	}
	ng_bidir_free(&b);
}

/* -A srcip4/24: groups per /24 of the source address. */
static void test_prefix_agg(void **state)
{
	(void)state;
	ts_sums want[256] = {{0}}; /* by the 3rd byte of the /24: 10.0.X.0 or 192.0.2.0 */
	ts_sums v192 = {0};
	for (size_t i = 0; i < N; i++) {
		const uint8_t *a = rows[i].src_addr;
		if (a[12] == 10)
			ts_sums_add(&want[a[14]], &rows[i]);
		else
			ts_sums_add(&v192, &rows[i]);
	}
	ng_query q = {.to_ms = UINT64_MAX, .order = NG_ORDER_FLOWS, .limit = 0};
	char err[256];
	assert_int_equal(ng_query_parse_keys(&q, "srcip4/24", err, sizeof err), 0);
	assert_int_equal(q.nkeys, 1);
	assert_int_equal(q.keys[0].plen4, 24);
	ng_query_result res;
	assert_int_equal(ng_query_run(store, &q, &res, err, sizeof err), 0);
	assert_int_equal(res.nrows, 4); /* 10.0.0-2.0/24 and 192.0.2.0/24 */
	for (size_t i = 0; i < res.nrows; i++) {
		const uint8_t *k = res.rows[i].key;
		assert_int_equal(k[15], 0); /* host bits cleared */
		const ts_sums *w = k[12] == 10 ? &want[k[14]] : &v192;
		same(w, res.rows[i].flows, res.rows[i].packets, res.rows[i].bytes);
	}
	ng_query_result_free(&res);
	ng_query bad = {0};
	assert_int_not_equal(ng_query_parse_keys(&bad, "srcip4/33", err, sizeof err), 0);
	assert_non_null(strstr(err, "bad prefix length"));
}

static void test_interval_parse(void **state)
{
	(void)state;
	uint64_t ms;
	assert_true(ng_interval_parse("5m", &ms));
	assert_int_equal(ms, 300000);
	assert_true(ng_interval_parse("1h", &ms));
	assert_int_equal(ms, 3600000);
	assert_true(ng_interval_parse("30s", &ms));
	assert_int_equal(ms, 30000);
	assert_true(ng_interval_parse("90", &ms));
	assert_int_equal(ms, 90000);
	assert_false(ng_interval_parse("0m", &ms));
	assert_false(ng_interval_parse("5x", &ms));
	assert_false(ng_interval_parse("m", &ms));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_series_total), cmocka_unit_test(test_series_top_other),
	    cmocka_unit_test(test_pairs),        cmocka_unit_test(test_bidir),
	    cmocka_unit_test(test_prefix_agg),   cmocka_unit_test(test_interval_parse),
	    cmocka_unit_test(test_sankey),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
