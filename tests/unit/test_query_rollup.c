/*
 * test_query_rollup.c — rollups (store/rollup.c) give the same answers
 * as the rows they sum.
 *
 * A store of 4 hours of flows, several segments an hour, gets its
 * rollups from ng_store_rollup; then every query of a table runs twice,
 * through the rollups and with no_rollup, and the groups (flows, packets,
 * bytes, first, last), the totals and the group count must be equal.
 * The queries that a rollup can answer (keys and filter within one set,
 * time buckets that are multiples of a level) must have read rollups,
 * over aligned and unaligned ranges; the others (addresses, byte filters,
 * 1-minute buckets) must not.  One answer is also checked against a sum
 * over the records written.  Last, compaction and retention take a
 * segment's rollups with it, and a rollup without its segment is removed;
 * queries running while compaction merges segments and rollups are
 * written and deleted count every flow exactly once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/field.h"
#include "core/strtab.h"
#include "query/filter.h"
#include "query/query.h"
#include "store/store.h"
#include "test_store_helpers.h"
#include "test_rng.h"

#define T0 UINT64_C(1764460800000) /* 2025-11-30T00:00:00Z, an hour boundary */
#define HOUR UINT64_C(3600000)
#define MIN UINT64_C(60000)
enum { HOURS = 4, PARTS = 3, PER = 2000, N = HOURS * PARTS * PER };

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static uint64_t rnd(void)
{
	return ts_xorshift64(&rng);
}

static ng_flow *rows;
static char *dir;
static long per_seg; /* rollup files a segment has */

static const char *countries[] = {"JP", "DE", "US", "FR", "BR", ""};
static const char *continents[] = {"AS", "EU", "NA", "EU", "SA", ""};
static const char *services[] = {"https", "http", "dns", "ssh", ""};
static const char *nets[] = {"office", "lab", "dmz", ""};

static void fill(ng_flow *r, uint64_t start)
{
	memset(r, 0, sizeof *r);
	r->flow_start = start;
	r->flow_end = start + rnd() % 90000;
	r->time_received = r->flow_end + 5;
	r->bytes = 40 + rnd() % 100000;
	r->packets = 1 + rnd() % 60;
	r->protocol = (uint8_t)(rnd() % 3 == 0 ? 17 : 6);
	r->ip_version = 4;
	r->dst_port = (uint16_t)(rnd() % 3 ? 443 : 1 + rnd() % 50);
	r->src_port = (uint16_t)(1024 + rnd() % 60000);
	r->src_as = (uint32_t)(rnd() % 40);
	r->dst_as = (uint32_t)(64500 + rnd() % 10);
	r->src_addr[10] = r->src_addr[11] = r->dst_addr[10] = r->dst_addr[11] = 0xff;
	r->src_addr[12] = 10, r->src_addr[15] = (uint8_t)rnd();
	r->dst_addr[12] = 192, r->dst_addr[15] = (uint8_t)rnd();
	r->exporter[10] = r->exporter[11] = 0xff;
	r->exporter[12] = 127, r->exporter[15] = (uint8_t)(1 + rnd() % 3);
	r->in_if = (uint32_t)(1 + rnd() % 4);
	r->out_if = (uint32_t)(1 + rnd() % 4);
	unsigned sc = (unsigned)(rnd() % 6), dc = (unsigned)(rnd() % 6);
	r->src_country = ng_intern_cstr(countries[sc]);
	r->dst_country = ng_intern_cstr(countries[dc]);
	r->src_continent = ng_intern_cstr(continents[sc]);
	r->dst_continent = ng_intern_cstr(continents[dc]);
	r->service = ng_intern_cstr(r->dst_port == 443 ? "https" : services[rnd() % 5]);
	r->src_net = ng_intern_cstr(nets[rnd() % 4]);
	char name[32];
	snprintf(name, sizeof name, "AS-%u", (unsigned)r->dst_as);
	r->dst_as_name = ng_intern_cstr(name);
}

/* Flows in the last 40 minutes of HOURS hours from T0, PARTS segments an hour (one flush each). */
static void make_store(void)
{
	dir = ts_make_store("rollup");
	rows = calloc(N, sizeof *rows);
	assert_non_null(rows);
	char err[256];
	ng_store_writer *w = ng_store_writer_open(dir, err, sizeof err);
	assert_non_null(w);
	size_t n = 0;
	for (unsigned h = 0; h < HOURS; h++)
		for (unsigned p = 0; p < PARTS; p++) {
			for (unsigned i = 0; i < PER; i++) {
				uint64_t t0 = T0 + 20 * MIN + h * HOUR;
				fill(&rows[n + i], t0 + rnd() % (HOUR - 20 * MIN));
			}
			assert_int_equal(ng_store_writer_append(w, rows + n, PER), 0);
			assert_int_equal(ng_store_writer_flush(w), 0);
			n += PER;
		}
	assert_int_equal(ng_store_writer_close(w), 0);
}

static int setup(void **state)
{
	(void)state;
	make_store();
	long segs = ts_count_files(dir, "*.seg");
	ng_store_maint_stats st = {0};
	per_seg = 0;
	for (unsigned k = 0; k < NG_ROLLUP_NSETS; k++)
		per_seg += __builtin_popcount(ng_rollup_sets[k].levels);
	assert_int_equal(per_seg, 14);
	assert_int_equal(ng_store_rollup(dir, T0 + 30 * HOUR, 0, 0, true, &st), 0);
	assert_int_equal(st.errors, 0);
	assert_int_equal(st.segments_rolled, segs);
	assert_int_equal(st.rollups_written, segs * per_seg);
	assert_int_equal(ts_count_files(dir, "*.seg.r-*"), segs * per_seg);
	/* a second pass finds nothing to do */
	ng_store_maint_stats again = {0};
	assert_int_equal(ng_store_rollup(dir, T0 + 30 * HOUR, 0, 0, true, &again), 0);
	assert_int_equal(again.rollups_written, 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	ts_rm_rf(dir);
	free(dir);
	free(rows);
	return 0;
}

static int cmp_key(const void *a, const void *b)
{
	return memcmp(((const ng_agg_row *)a)->key, ((const ng_agg_row *)b)->key, NG_QUERY_KEY_MAX);
}

typedef struct qcase {
	const char *keys, *filter;
	uint64_t bucket_ms; /* a time key on flow_start too; 0: none */
	uint64_t from, to;
	enum ng_order order;
	bool rollup; /* expected to read rollups */
} qcase;

static void run(const qcase *c, bool no_rollup, ng_query_result *res)
{
	ng_query q = {.from_ms = c->from,
	              .to_ms = c->to,
	              .order = c->order,
	              .threads = 2,
	              .no_rollup = no_rollup};
	char err[512];
	assert_int_equal(ng_query_parse_keys(&q, c->keys, err, sizeof err), 0);
	if (c->bucket_ms)
		q.keys[q.nkeys++] = (ng_group_key){.field = NG_F_FLOW_START,
		                                   .alt = -1,
		                                   .label = "time",
		                                   .bucket_ms = c->bucket_ms};
	if (c->filter && !(q.filter = ng_filter_parse(c->filter, err, sizeof err, NULL)))
		fail_msg("%s: %s", c->filter, err);
	assert_int_equal(ng_query_run(dir, &q, res, err, sizeof err), 0);
	assert_int_equal(res->scan.errors, 0);
	ng_filter_free(q.filter);
	qsort(res->rows, res->nrows, sizeof *res->rows, cmp_key);
}

#define END (T0 + 6 * HOUR)

static const qcase cases[] = {
    {"proto", NULL, 0, T0, END, NG_ORDER_BYTES, true},
    {"proto", NULL, 0, 0, UINT64_MAX, NG_ORDER_FLOWS, true},
    {"dstas", "proto tcp", 0, T0 + 7 * MIN + 13, T0 + 3 * HOUR - 2 * MIN - 1, NG_ORDER_BPS, true},
    {"as", NULL, 0, T0 + 61 * MIN, T0 + 3 * HOUR + 5 * MIN, NG_ORDER_PPS, true},
    {"srcas,dstas", "dst asname as-64503 or src as < 10", 0, T0, END, NG_ORDER_BYTES, true},
    {"src_country,dst_country", NULL, 0, T0 + 33 * MIN, END, NG_ORDER_BPP, true},
    {"dst_country", "src country JP and not dst country ''", 0, T0, END, NG_ORDER_BYTES, true},
    {"dstport", "proto tcp and service https", 0, T0 + 50 * MIN, T0 + 4 * HOUR + 1,
     NG_ORDER_PACKETS, true},
    {"service", NULL, 0, T0, END, NG_ORDER_FLOWS, true},
    {"exporter,inif", "proto udp", 0, T0, END, NG_ORDER_BYTES, true},
    {"if", NULL, 0, T0 + 1, END - 1, NG_ORDER_BYTES, true},
    {"src_net", NULL, 0, T0, END, NG_ORDER_BYTES, true},
    {"proto", NULL, 5 * MIN, T0 + 17 * MIN + 500, END, NG_ORDER_BYTES, true},
    {"dstas", NULL, HOUR, T0, END, NG_ORDER_BYTES, true},
    {"dst_country", "proto tcp", 15 * MIN, T0 + 2 * MIN, END, NG_ORDER_BYTES, true},
    /* not answered by a rollup: read as rows (and still equal) */
    {"proto", NULL, MIN, T0, END, NG_ORDER_BYTES, false},
    {"dstport", NULL, HOUR, T0, END, NG_ORDER_BYTES, true},
    {"srcas,dstas", NULL, 2 * HOUR, T0, END, NG_ORDER_BYTES, true},
    {"srcas,dstas", NULL, 5 * MIN, T0, END, NG_ORDER_BYTES, false}, /* hourly only */
    {"dstport", NULL, 5 * MIN, T0, END, NG_ORDER_BYTES, false},
    {"srcip", NULL, 0, T0, END, NG_ORDER_BYTES, false},
    {"dstip", "proto udp", HOUR, T0, END, NG_ORDER_BYTES, false},
    {"proto", "bytes > 50000", 0, T0, END, NG_ORDER_BYTES, false},
    {"dstas", "duration > 30000", 0, T0, END, NG_ORDER_BYTES, false},
    {"srcas,dstport", NULL, 0, T0, END, NG_ORDER_BYTES, false},
    {"proto", "src port > 2000", 0, T0, END, NG_ORDER_BYTES, false},
    {"proto", NULL, 0, T0 + 20 * MIN + 1, T0 + 24 * MIN, NG_ORDER_BYTES, false},
};

static void test_same_answers(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		const qcase *c = &cases[k];
		ng_query_result a, b;
		run(c, false, &a);
		run(c, true, &b);
		if (c->rollup != (a.scan.segments_rollup > 0))
			fail_msg("case %zu (%s / %s): rollups read: %llu", k, c->keys,
			         c->filter ? c->filter : "",
			         (unsigned long long)a.scan.segments_rollup);
		assert_int_equal(b.scan.segments_rollup, 0);
		if (c->rollup)
			assert_true(a.scan.rows_scanned < b.scan.rows_scanned);
		assert_true(b.flows_total > 0);
		assert_int_equal(a.flows_total, b.flows_total);
		assert_int_equal(a.packets_total, b.packets_total);
		assert_int_equal(a.bytes_total, b.bytes_total);
		assert_int_equal(a.first, b.first);
		assert_int_equal(a.last, b.last);
		assert_int_equal(a.groups, b.groups);
		assert_int_equal(a.nrows, b.nrows);
		for (size_t i = 0; i < a.nrows; i++) {
			if (memcmp(a.rows[i].key, b.rows[i].key, NG_QUERY_KEY_MAX))
				fail_msg("case %zu: row %zu keys differ", k, i);
			assert_int_equal(a.rows[i].flows, b.rows[i].flows);
			assert_int_equal(a.rows[i].packets, b.rows[i].packets);
			assert_int_equal(a.rows[i].bytes, b.rows[i].bytes);
			assert_int_equal(a.rows[i].first, b.rows[i].first);
			assert_int_equal(a.rows[i].last, b.rows[i].last);
		}
		ng_query_result_free(&a);
		ng_query_result_free(&b);
	}
}

/* Top 3 destination ASes by bytes over an unaligned range, through the
 * rollups, against sums over the records written. */
static void test_against_records(void **state)
{
	(void)state;
	const uint64_t from = T0 + 41 * MIN + 7, to = T0 + 3 * HOUR + 11 * MIN;
	uint64_t flows[10] = {0}, bytes[10] = {0}, packets[10] = {0}, all = 0;
	for (size_t i = 0; i < N; i++) {
		const ng_flow *r = &rows[i];
		if (r->flow_start < from || r->flow_start >= to || r->protocol != 6)
			continue;
		flows[r->dst_as - 64500]++;
		bytes[r->dst_as - 64500] += r->bytes;
		packets[r->dst_as - 64500] += r->packets;
		all++;
	}
	qcase c = {"dstas", "proto tcp", 0, from, to, NG_ORDER_BYTES, true};
	ng_query_result res;
	run(&c, false, &res);
	assert_true(res.scan.segments_rollup > 0);
	assert_int_equal(res.flows_total, all);
	assert_int_equal(res.nrows, 10);
	for (size_t i = 0; i < res.nrows; i++) {
		uint32_t as;
		memcpy(&as, res.rows[i].key, 4);
		assert_in_range(as, 64500, 64509);
		assert_int_equal(res.rows[i].flows, flows[as - 64500]);
		assert_int_equal(res.rows[i].bytes, bytes[as - 64500]);
		assert_int_equal(res.rows[i].packets, packets[as - 64500]);
	}
	ng_query_result_free(&res);
}

/* Compaction merges an hour's segments: their rollups go with them, the
 * merged segment gets its own on the next pass; retention deletes the
 * rollups with the segments; a rollup left without its segment goes. */
static void test_maintenance(void **state)
{
	(void)state;
	ng_store_maint_stats st = {0};
	assert_int_equal(ng_store_compact(dir, T0 + 30 * HOUR, 0, 0, &st), 0);
	assert_true(st.segments_out > 0);
	long segs = ts_count_files(dir, "*.seg");
	assert_int_equal(ts_count_files(dir, "*.seg.r-*"),
	                 (segs - (long)st.segments_out) * per_seg);
	qcase c = {"proto", NULL, 0, T0, END, NG_ORDER_BYTES, true};
	ng_query_result a, b;
	run(&c, false, &a); /* merged segments read as rows */
	memset(&st, 0, sizeof st);
	assert_int_equal(ng_store_rollup(dir, T0 + 30 * HOUR, 0, 0, true, &st), 0);
	assert_int_equal(ts_count_files(dir, "*.seg.r-*"), segs * per_seg);
	run(&c, false, &b);
	assert_int_equal(b.scan.segments_rollup, segs);
	assert_int_equal(a.flows_total, N);
	assert_int_equal(b.flows_total, N);
	assert_int_equal(a.bytes_total, b.bytes_total);
	ng_query_result_free(&a);
	ng_query_result_free(&b);

	/* an orphan: the rollup of a segment that is not there */
	char cmd[600];
	snprintf(
	    cmd, sizeof cmd,
	    "f=$(find '%s' -name '*.seg.r-as-1h' | head -1); cp \"$f\" \"${f%%%%.seg.r-as-1h}9."
	    "seg.r-as-1h\"",
	    dir);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(ts_count_files(dir, "*.seg.r-*"), segs * per_seg + 1);
	assert_int_equal(ng_store_rollup(dir, T0 + 30 * HOUR, 0, 0, true, NULL), 0);
	assert_int_equal(ts_count_files(dir, "*.seg.r-*"), segs * per_seg);

	memset(&st, 0, sizeof st);
	assert_int_equal(ng_store_retention(dir, HOUR, 0, T0 + 30 * HOUR, &st), 0);
	assert_int_equal(st.segments_deleted, segs);
	assert_int_equal(ts_count_files(dir, "*.seg.r-*"), 0);
}

/* Without merging_too, small segments side by side wait for compaction;
 * the merged one then gets its rollups. */
static void test_waits_for_compaction(void **state)
{
	(void)state;
	char *d = ts_make_store("rollup_wait");
	char err[256];
	ng_store_writer *w = ng_store_writer_open(d, err, sizeof err);
	assert_non_null(w);
	ng_flow r[100];
	for (unsigned k = 0; k < 3; k++) { /* three small segments in one hour */
		for (unsigned i = 0; i < 100; i++)
			fill(&r[i], T0 + 20 * MIN + k * MIN + i);
		assert_int_equal(ng_store_writer_append(w, r, 100), 0);
		assert_int_equal(ng_store_writer_flush(w), 0);
	}
	assert_int_equal(ng_store_writer_close(w), 0);
	ng_store_maint_stats st = {0};
	assert_int_equal(ng_store_rollup(d, T0 + 30 * HOUR, 0, 0, false, &st), 0);
	assert_int_equal(st.segments_rolled, 0);
	assert_int_equal(ng_store_compact(d, T0 + 30 * HOUR, 0, 0, &st), 0);
	assert_int_equal(st.segments_in, 3);
	assert_int_equal(st.segments_out, 1);
	assert_int_equal(ng_store_rollup(d, T0 + 30 * HOUR, 0, 0, false, &st), 0);
	assert_int_equal(st.segments_rolled, 1);
	assert_int_equal(st.rollups_written, per_seg);
	ts_rm_rf(d);
	free(d);
}

/* ---- answers while maintenance runs ------------------------------------ */

typedef struct churn {
	const char *dir;
	volatile bool done;
	int rounds;
} churn;

/* Compaction once, then rollups written and deleted again and again: a
 * segment's rollup appears (by rename) and vanishes under the readers. */
static void *maintain(void *arg)
{
	churn *c = arg;
	ng_store_maint_stats st = {0};
	assert_int_equal(ng_store_compact(c->dir, T0 + 30 * HOUR, 0, 0, &st), 0);
	for (int r = 0; r < c->rounds; r++) {
		assert_int_equal(ng_store_rollup(c->dir, T0 + 30 * HOUR, 0, 0, true, NULL), 0);
		char cmd[300];
		snprintf(cmd, sizeof cmd, "find '%s' -name '*.seg.r-*' -delete", c->dir);
		assert_int_equal(system(cmd), 0);
	}
	c->done = true;
	return NULL;
}

/* Every answer during compaction and rollup churn counts each flow once. */
static void test_live_maintenance(void **state)
{
	(void)state;
	char *live = ts_make_store("rollup_live");
	char err[256];
	ng_store_writer *w = ng_store_writer_open(live, err, sizeof err);
	assert_non_null(w);
	uint64_t bytes = 0;
	enum { SEGS = 24, ROWS = 500 };
	ng_flow *r = calloc(ROWS, sizeof *r);
	for (unsigned k = 0; k < SEGS; k++) {
		for (unsigned i = 0; i < ROWS; i++) {
			fill(&r[i], T0 + (k % 4) * HOUR + 20 * MIN + rnd() % (30 * MIN));
			bytes += r[i].bytes;
		}
		assert_int_equal(ng_store_writer_append(w, r, ROWS), 0);
		assert_int_equal(ng_store_writer_flush(w), 0);
	}
	assert_int_equal(ng_store_writer_close(w), 0);
	free(r);
	churn c = {live, false, 20};
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, maintain, &c), 0);
	unsigned runs = 0, through = 0;
	while (!c.done || runs < 10) {
		ng_query q = {.from_ms = T0, .to_ms = END, .order = NG_ORDER_BYTES, .threads = 2};
		assert_int_equal(ng_query_parse_keys(&q, "dstas", err, sizeof err), 0);
		ng_query_result res;
		assert_int_equal(ng_query_run(live, &q, &res, err, sizeof err), 0);
		assert_int_equal(res.scan.errors, 0);
		assert_int_equal(res.flows_total, SEGS * ROWS);
		assert_int_equal(res.bytes_total, bytes);
		through += res.scan.segments_rollup > 0;
		ng_query_result_free(&res);
		runs++;
	}
	pthread_join(th, NULL);
	print_message("%u answers during maintenance, %u through rollups\n", runs, through);
	ts_rm_rf(live);
	free(live);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_same_answers),         cmocka_unit_test(test_against_records),
	    cmocka_unit_test(test_maintenance),          cmocka_unit_test(test_live_maintenance),
	    cmocka_unit_test(test_waits_for_compaction),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
