/*
 * test_query_engine.c — the group-by executor against a brute-force
 * reference: random flows are written to a store, then every group-by
 * shape that has its own code path (one IPv4 or mixed address key, a
 * prefix key, a ≤ 16-bit key, either-side keys, composite keys; with and
 * without a filter; one and four scan workers) must give exactly the
 * groups and totals that a plain loop over the input computes.
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
#include "query/filter.h"
#include "query/query.h"
#include "store/store.h"
#include "test_rng.h"

#define HOUR UINT64_C(3600000)
#define T0 UINT64_C(1764460800000)
enum { N = 30000 };

static uint64_t rng = 0xDEADBEEFCAFEull;
static uint64_t rnd(void)
{
	return ts_xorshift64(&rng);
}

static void random_addr(uint8_t a[16], bool v4_only)
{
	memset(a, 0, 16);
	if (v4_only || rnd() % 4) {
		a[10] = a[11] = 0xff;
		a[12] = 10;
		a[13] = (uint8_t)(rnd() % 3);
		a[14] = (uint8_t)(rnd() % 4);
		a[15] = (uint8_t)(rnd() % 40);
	} else {
		a[0] = 0x20;
		a[1] = 0x01;
		a[2] = 0x0d;
		a[3] = 0xb8;
		a[7] = (uint8_t)(rnd() % 3);
		a[15] = (uint8_t)(rnd() % 30);
	}
}

static ng_flow *rows;
static char dir_v4[64], dir_mixed[64];

static void make_store(char *dir, bool v4_only)
{
	strcpy(dir, "/tmp/ng_test_qeng_XXXXXX");
	assert_non_null(mkdtemp(dir));
	for (size_t i = 0; i < N; i++) {
		ng_flow *r = &rows[i];
		memset(r, 0, sizeof *r);
		r->flow_start = T0 + rnd() % (3 * HOUR);
		r->flow_end = r->flow_start + rnd() % 100000;
		r->time_received = r->flow_end;
		r->bytes = 40 + rnd() % 100000;
		r->packets = 1 + rnd() % 100;
		random_addr(r->src_addr, v4_only);
		random_addr(r->dst_addr, v4_only);
		r->src_port = (uint16_t)(rnd() % 3 ? rnd() % 70 : rnd() % 65536);
		r->dst_port = (uint16_t)(rnd() % 2 ? 443 : rnd() % 1000);
		r->protocol = (uint8_t)(rnd() % 3 ? 6 : 17);
		r->src_as = (uint32_t)(rnd() % 50);
	}
	char err[256];
	ng_store_writer *w = ng_store_writer_open(dir, err, sizeof err);
	assert_non_null(w);
	for (size_t i = 0; i < N; i += N / 10) { /* ten flushes: many segments */
		assert_int_equal(ng_store_writer_append(w, rows + i, N / 10), 0);
		assert_int_equal(ng_store_writer_flush(w), 0);
	}
	assert_int_equal(ng_store_writer_close(w), 0);
}

/* ---- the reference ---------------------------------------------------------- */

typedef struct ref_row {
	uint8_t key[NG_QUERY_KEY_MAX];
	uint64_t flows, packets, bytes, first, last;
} ref_row;

static size_t klen_g;
static int cmp_key(const void *a, const void *b)
{
	return memcmp(a, b, klen_g);
}

static void mask_addr(uint8_t *a, const ng_group_key *g)
{
	bool v4 = !memcmp(a, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12);
	unsigned plen = v4 ? (g->plen4 ? 96u + g->plen4 : 128u) : (g->plen6 ? g->plen6 : 128u);
	for (unsigned i = 0; i < 16; i++) {
		unsigned bits = plen > i * 8 ? plen - i * 8 : 0;
		a[i] &= bits >= 8 ? 0xff : (uint8_t)(0xff << (8 - bits));
	}
}

/* Groups of `q` over rows[] passing `pass`, sorted by key; *n groups. */
static ref_row *reference(const ng_query *q, bool (*pass)(const ng_flow *), size_t *n,
                          ng_query_result *tot)
{
	size_t klen = ng_query_key_len(q);
	ref_row *v = calloc(2 * N, sizeof *v);
	size_t m = 0;
	memset(tot, 0, sizeof *tot);
	tot->first = UINT64_MAX;
	for (size_t i = 0; i < N; i++) {
		const ng_flow *r = &rows[i];
		if (pass && !pass(r))
			continue;
		tot->flows_total++;
		tot->packets_total += r->packets;
		tot->bytes_total += r->bytes;
		tot->first = r->flow_start < tot->first ? r->flow_start : tot->first;
		tot->last = r->flow_end > tot->last ? r->flow_end : tot->last;
		bool either = false;
		for (size_t j = 0; j < q->nkeys; j++)
			either |= q->keys[j].alt >= 0;
		for (int side = 0; side < (either ? 2 : 1); side++) {
			ref_row *x = &v[m++];
			uint8_t *kp = x->key;
			for (size_t j = 0; j < q->nkeys; j++) {
				const ng_group_key *g = &q->keys[j];
				const ng_field *f =
				    &ng_fields[side && g->alt >= 0 ? g->alt : (int)g->field];
				memcpy(kp, ng_field_ptr(f, r), f->size);
				if (f->type == NG_FT_ADDR)
					mask_addr(kp, g);
				kp += f->size;
			}
			x->flows = 1;
			x->packets = r->packets;
			x->bytes = r->bytes;
			x->first = r->flow_start;
			x->last = r->flow_end;
		}
	}
	klen_g = klen;
	qsort(v, m, sizeof *v, cmp_key);
	size_t out = 0;
	for (size_t i = 0; i < m; i++) {
		if (out && !memcmp(v[out - 1].key, v[i].key, klen)) {
			ref_row *o = &v[out - 1];
			o->flows += v[i].flows;
			o->packets += v[i].packets;
			o->bytes += v[i].bytes;
			o->first = v[i].first < o->first ? v[i].first : o->first;
			o->last = v[i].last > o->last ? v[i].last : o->last;
		} else {
			v[out++] = v[i];
		}
	}
	*n = out;
	return v;
}

static bool is_tcp(const ng_flow *r)
{
	return r->protocol == 6;
}

static void check(const char *dir, const char *keys, const char *filter,
                  bool (*pass)(const ng_flow *), unsigned threads)
{
	ng_query q = {
	    .from_ms = 0, .to_ms = UINT64_MAX, .order = NG_ORDER_BYTES, .threads = threads};
	char err[512];
	assert_int_equal(ng_query_parse_keys(&q, keys, err, sizeof err), 0);
	if (filter) {
		q.filter = ng_filter_parse(filter, err, sizeof err, NULL);
		assert_non_null(q.filter);
	}
	ng_query_result res;
	assert_int_equal(ng_query_run(dir, &q, &res, err, sizeof err), 0);
	assert_int_equal(res.scan.errors, 0);
	assert_int_equal(res.scan.threads, threads);
	size_t nref;
	ng_query_result tot;
	ref_row *ref = reference(&q, pass, &nref, &tot);
	if (res.nrows != nref)
		fail_msg("%s %s threads %u: %zu groups, reference %zu", keys, filter ? filter : "",
		         threads, res.nrows, nref);
	assert_int_equal(res.groups, nref);
	assert_int_equal(res.flows_total, tot.flows_total);
	assert_int_equal(res.bytes_total, tot.bytes_total);
	assert_int_equal(res.packets_total, tot.packets_total);
	assert_int_equal(res.first, tot.first);
	assert_int_equal(res.last, tot.last);
	/* ranked by bytes, then key: check the order, then the values */
	for (size_t i = 1; i < res.nrows; i++)
		assert_true(res.rows[i - 1].bytes >= res.rows[i].bytes);
	size_t klen = ng_query_key_len(&q);
	klen_g = klen;
	for (size_t i = 0; i < res.nrows; i++) {
		const ng_agg_row *g = &res.rows[i];
		ref_row *r = bsearch(g->key, ref, nref, sizeof *ref, cmp_key);
		if (!r)
			fail_msg("%s: group %zu not in the reference", keys, i);
		if (r->flows != g->flows || r->packets != g->packets || r->bytes != g->bytes ||
		    r->first != g->first || r->last != g->last)
			fail_msg(
			    "%s %s threads %u: group %zu differs (flows %llu/%llu bytes %llu/%llu)",
			    keys, filter ? filter : "", threads, i, (unsigned long long)g->flows,
			    (unsigned long long)r->flows, (unsigned long long)g->bytes,
			    (unsigned long long)r->bytes);
	}
	free(ref);
	ng_query_result_free(&res);
	if (q.filter)
		ng_filter_free(q.filter);
}

static const char *shapes[] = {
    "srcip",   "dstip",        "ip",    "srcip4/24", "srcip4/16,srcip6/48",
    "dstport", "port",         "proto", "srcport",   "srcip,dstport",
    "srcas",   "proto,dstport"};

static void run_all(const char *dir)
{
	for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
		for (unsigned t = 1; t <= 4; t += 3) {
			check(dir, shapes[s], NULL, NULL, t);
			check(dir, shapes[s], "proto tcp", is_tcp, t);
		}
}

static void test_v4_store(void **state)
{
	(void)state;
	rows = calloc(N, sizeof *rows);
	make_store(dir_v4, true);
	run_all(dir_v4);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir_v4);
	assert_int_equal(system(cmd), 0);
	free(rows);
}

static void test_mixed_store(void **state)
{
	(void)state;
	rows = calloc(N, sizeof *rows);
	make_store(dir_mixed, false);
	run_all(dir_mixed);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir_mixed);
	assert_int_equal(system(cmd), 0);
	free(rows);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_v4_store),
	    cmocka_unit_test(test_mixed_store),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
