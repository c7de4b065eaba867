/*
 * test_query_late.c — a listing (and a group-by) with a rare filter, which
 * the scan answers by late materialization (ng_scan_opts.select: the
 * filter's columns first, the other columns only for blocks with a match),
 * against a brute-force reference over the rows written.
 *
 * The store: three segments of several 16384-row blocks in one hour whose
 * times overlap (flow_start ties between segments), and one segment in the
 * next hour.  Rare rows ("proto tcp and dst port 31337") sit in different
 * blocks and segments: first and last row of a block, the partial last
 * block, next to decoys (TCP to 31338, UDP to 31337).  Checked:
 *
 *   - every matching row, every field equal to what was written, in
 *     flow_start order, for the parallel listing, the serial one (limit)
 *     and one scan worker: the same order (ties by scan order);
 *   - only the blocks with a match have their other columns read (blocks_decoded);
 *   - a filter matching nothing lists nothing and decodes no block whole
 *     (and zone maps skip the segments they can);
 *   - a time range that cuts blocks keeps exactly the rows inside it;
 *   - a group-by with the rare filter gives the reference's totals.
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
#include "test_rng.h"

#define HOUR UINT64_C(3600000)
#define T0 UINT64_C(1764460800000)
#define BLOCK 16384 /* NG_SEG_BLOCK_ROWS */

/* rows per segment: 3 blocks and a bit, 2 blocks and a bit, exactly 2, 1 and a bit */
static const size_t seg_rows[] = {3 * BLOCK + 123, 2 * BLOCK + 5000, 2 * BLOCK, BLOCK + 77};
enum { NSEGS = 4 };

static uint64_t rng = 0x5EED0F1A7Eull;
static uint64_t rnd(void)
{
	return ts_xorshift64(&rng);
}

static ng_flow *rows; /* all rows written, segment after segment */
static size_t nrows;
static char dir[64];

/* A flow that is not TCP to 31337 (ports < 30000, protocols 6/17/1). */
static void plain_flow(ng_flow *r, uint64_t start, uint64_t id)
{
	memset(r, 0, sizeof *r);
	r->flow_start = start;
	r->flow_end = start + rnd() % 4000;
	r->time_received = r->flow_end + 1000;
	r->bytes = 40 + id; /* unique: tells rows apart */
	r->packets = 1 + rnd() % 30;
	r->protocol = (uint8_t)(rnd() % 10 < 7 ? 6 : rnd() % 2 ? 17 : 1);
	r->src_port = (uint16_t)(1024 + rnd() % 28000);
	r->dst_port = (uint16_t)(rnd() % 30000);
	r->src_as = (uint32_t)(rnd() % 7);
	r->dst_as = (uint32_t)(64500 + rnd() % 3);
	r->in_if = (uint32_t)(rnd() % 5);
	r->tcp_flags = (uint8_t)(rnd() % 64);
	r->src_addr[10] = r->src_addr[11] = 0xff;
	r->src_addr[12] = 10, r->src_addr[13] = (uint8_t)(rnd() % 4);
	r->src_addr[14] = (uint8_t)rnd(), r->src_addr[15] = (uint8_t)rnd();
	r->dst_addr[10] = r->dst_addr[11] = 0xff;
	r->dst_addr[12] = 192, r->dst_addr[13] = 0, r->dst_addr[14] = 2;
	r->dst_addr[15] = (uint8_t)(rnd() % 200);
}

/* Segment s's row i (in flow_start order: times rise with i).  Segments
 * 0-2 hold the same times in hour 0 at 10 ms steps: row i of each ties;
 * segment 3 lies in hour 1. */
static uint64_t row_time(size_t s, size_t i)
{
	return T0 + (s == 3 ? HOUR + 1000 : 0) + i * 10;
}

/* (segment, row) of the rare rows, and of decoys next to them. */
static const struct {
	size_t seg, row;
	uint8_t proto;
	uint16_t port;
} marks[] = {
    {0, 0, 6, 31337},               /* first row of the first block */
    {0, BLOCK - 1, 6, 31337},       /* last row of block 0 */
    {0, BLOCK, 17, 31337},          /* decoy: UDP, first row of block 1 */
    {0, 3 * BLOCK + 122, 6, 31337}, /* last row of the partial last block */
    {1, BLOCK + 4000, 6, 31337},    /* middle of block 1 */
    {1, BLOCK + 4001, 6, 31338},    /* decoy: next port */
    {2, 2 * BLOCK - 1, 6, 31337},   /* last row of a segment of whole blocks */
    {2, 700, 6, 31337},             /* same block twice: block 0 of seg 2 */
    {2, 701, 6, 31337},
    {3, 5, 6, 31337},           /* the other hour */
    {3, BLOCK + 76, 17, 31337}, /* decoy in the partial block */
};
enum { NMARKS = sizeof marks / sizeof marks[0] };

static void make_store(void)
{
	strcpy(dir, "/tmp/ng_test_late_XXXXXX");
	assert_non_null(mkdtemp(dir));
	nrows = 0;
	for (size_t s = 0; s < NSEGS; s++)
		nrows += seg_rows[s];
	rows = calloc(nrows, sizeof *rows);
	assert_non_null(rows);
	char err[256];
	ng_store_writer *w = ng_store_writer_open(dir, err, sizeof err);
	assert_non_null(w);
	ng_flow *r = rows;
	for (size_t s = 0; s < NSEGS; s++) {
		for (size_t i = 0; i < seg_rows[s]; i++)
			plain_flow(&r[i], row_time(s, i), (uint64_t)(r - rows) + i);
		for (size_t m = 0; m < NMARKS; m++)
			if (marks[m].seg == s) {
				r[marks[m].row].protocol = marks[m].proto;
				r[marks[m].row].dst_port = marks[m].port;
			}
		assert_true(ng_store_writer_append(w, r, seg_rows[s]) >= 0);
		assert_int_equal(ng_store_writer_flush(w), 0);
		r += seg_rows[s];
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

static int cmp_ptr_start(const void *a, const void *b)
{
	const ng_flow *x = *(const ng_flow *const *)a, *y = *(const ng_flow *const *)b;
	if (x->flow_start != y->flow_start)
		return x->flow_start < y->flow_start ? -1 : 1;
	return x->bytes < y->bytes ? -1 : x->bytes > y->bytes; /* unique */
}

/* The rows that pass `text` with flow_start in [from, to), sorted by
 * flow_start (then by the unique bytes: the order among ties is checked
 * apart).  *blocks: the distinct (segment, block) pairs holding them. */
static const ng_flow **reference(const char *text, uint64_t from, uint64_t to, size_t *n,
                                 size_t *blocks)
{
	char err[256];
	ng_filter *f = ng_filter_parse(text, err, sizeof err, NULL);
	assert_non_null(f);
	const ng_flow **out = malloc((nrows + 1) * sizeof *out);
	assert_non_null(out);
	*n = *blocks = 0;
	size_t base = 0, last = SIZE_MAX;
	for (size_t s = 0; s < NSEGS; base += seg_rows[s], s++)
		for (size_t i = 0; i < seg_rows[s]; i++) {
			const ng_flow *r = &rows[base + i];
			if (r->flow_start < from || r->flow_start >= to ||
			    !ng_filter_match_flow(f, r))
				continue;
			out[(*n)++] = r;
			size_t blk = s * 100 + i / BLOCK;
			*blocks += blk != last;
			last = blk;
		}
	ng_filter_free(f);
	qsort(out, *n, sizeof *out, cmp_ptr_start);
	return out;
}

static void run(const char *text, uint64_t from, uint64_t to, size_t limit, unsigned threads,
                const char *keys, ng_query_result *res)
{
	char err[512];
	ng_query q = {.from_ms = from,
	              .to_ms = to,
	              .limit = limit,
	              .threads = threads,
	              .order = NG_ORDER_BYTES};
	if (keys)
		assert_int_equal(ng_query_parse_keys(&q, keys, err, sizeof err), 0);
	q.filter = ng_filter_parse(text, err, sizeof err, NULL);
	assert_non_null(q.filter);
	assert_int_equal(ng_query_run(dir, &q, res, err, sizeof err), 0);
	assert_int_equal(res->scan.errors, 0);
	ng_filter_free(q.filter);
}

/* Every field of a listed flow equals the row written. */
static void assert_same_flow(const ng_flow *got, const ng_flow *want)
{
	for (size_t f = 0; f < NG_FIELD_COUNT; f++)
		if (memcmp(ng_field_ptr(&ng_fields[f], got), ng_field_ptr(&ng_fields[f], want),
		           ng_fields[f].size))
			fail_msg("flow with bytes %" PRIu64 ": field %s differs", want->bytes,
			         ng_fields[f].name);
}

/* The listing of res is the reference's rows: same multiset, every field
 * equal, in flow_start order. */
static void assert_listing(const ng_query_result *res, const ng_flow **ref, size_t nref)
{
	assert_int_equal(res->nflows, nref);
	assert_int_equal(res->flows_total, nref);
	const ng_flow **got = malloc((nref + 1) * sizeof *got);
	assert_non_null(got);
	for (size_t i = 0; i < nref; i++) {
		got[i] = &res->flows[i];
		if (i)
			assert_true(res->flows[i - 1].flow_start <= res->flows[i].flow_start);
	}
	qsort(got, nref, sizeof *got, cmp_ptr_start);
	uint64_t bytes = 0;
	for (size_t i = 0; i < nref; i++) {
		assert_same_flow(got[i], ref[i]);
		bytes += ref[i]->bytes;
	}
	assert_int_equal(res->bytes_total, bytes);
	free(got);
}

static void test_rare_listing(void **state)
{
	(void)state;
	const char *rare = "proto tcp and dst port 31337";
	size_t nref, blocks;
	const ng_flow **ref = reference(rare, 0, UINT64_MAX, &nref, &blocks);
	assert_int_equal(nref, 8); /* the marks less the decoys */
	assert_int_equal(blocks, 6);
	ng_query_result par, one, lim;
	run(rare, 0, UINT64_MAX, 0, 2, NULL, &par);
	assert_listing(&par, ref, nref);
	/* late materialization: every block scanned, only 6 with their other columns read */
	assert_int_equal(par.scan.blocks_scanned, 4 + 3 + 2 + 2);
	assert_int_equal(par.scan.blocks_decoded, blocks);
	assert_int_equal(par.scan.rows_scanned, nrows);
	/* one worker, and the serial listing with a limit: the same flows in
	 * the same order, ties included */
	run(rare, 0, UINT64_MAX, 0, 1, NULL, &one);
	run(rare, 0, UINT64_MAX, 1000, 2, NULL, &lim);
	assert_int_equal(one.nflows, nref);
	assert_int_equal(lim.nflows, nref);
	assert_memory_equal(par.flows, one.flows, nref * sizeof *par.flows);
	assert_memory_equal(par.flows, lim.flows, nref * sizeof *par.flows);
	assert_int_equal(lim.scan.blocks_decoded, blocks);
	ng_query_result_free(&par);
	ng_query_result_free(&one);
	ng_query_result_free(&lim);
	/* a limit below the matches: the first 3 by flow_start */
	run(rare, 0, UINT64_MAX, 3, 2, NULL, &lim);
	assert_int_equal(lim.nflows, 3);
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(lim.flows[i].flow_start, ref[i]->flow_start);
	ng_query_result_free(&lim);
	free(ref);
}

/* No row passes.  Zone maps prune the segments whose dst ports stay
 * below 31338 (all but segment 1, which holds the TCP decoy); segment 1
 * is scanned and none of its blocks decoded whole. */
static void test_nothing_matches(void **state)
{
	(void)state;
	const char *none = "proto udp and dst port 31338";
	ng_query_result res;
	run(none, 0, UINT64_MAX, 0, 2, NULL, &res);
	assert_int_equal(res.nflows, 0);
	assert_int_equal(res.flows_total, 0);
	assert_int_equal(res.scan.segments_pruned, NSEGS - 1);
	assert_int_equal(res.scan.rows_scanned, seg_rows[1]);
	assert_int_equal(res.scan.blocks_scanned, 3);
	assert_int_equal(res.scan.blocks_decoded, 0);
	ng_query_result_free(&res);
	run(none, 0, UINT64_MAX, 0, 2, "dstip", &res);
	assert_int_equal(res.flows_total, 0);
	assert_int_equal(res.nrows, 0);
	assert_int_equal(res.scan.blocks_decoded, 0);
	ng_query_result_free(&res);
}

/* A time range that starts and ends inside blocks: the rare row just
 * after `from` is in, the one at `to` out. */
static void test_time_range(void **state)
{
	(void)state;
	const char *rare = "proto tcp and dst port 31337";
	const ng_flow *first = &rows[BLOCK - 1]; /* segment 0, last row of block 0 */
	const ng_flow *second = &rows[seg_rows[0] + BLOCK + 4000];
	/* from: 50 rows before the end of block 0 (its kept row is gathered
	 * from a cut block); to: the rare row of segment 1 (left out) */
	uint64_t from = first->flow_start - 500, to = second->flow_start;
	size_t nref, blocks;
	const ng_flow **ref = reference(rare, from, to, &nref, &blocks);
	assert_int_equal(nref, 1);
	assert_ptr_equal(ref[0], first);
	ng_query_result res;
	for (unsigned threads = 1; threads <= 2; threads++) {
		run(rare, from, to, 0, threads, NULL, &res);
		assert_listing(&res, ref, nref);
		assert_int_equal(res.scan.blocks_decoded, blocks);
		ng_query_result_free(&res);
	}
	free(ref);
	/* a broad filter on the same cut range: most blocks decoded, still exact */
	ref = reference("proto udp", from, to, &nref, &blocks);
	run("proto udp", from, to, 0, 2, NULL, &res);
	assert_true(nref > 1000);
	assert_listing(&res, ref, nref);
	ng_query_result_free(&res);
	free(ref);
}

/* Flows with equal flow_start from different segments come in scan
 * order whether the listing runs on two workers, one, or serially (a
 * limit): a broad filter, whose matches tie between segments 0-2. */
static void test_tie_order(void **state)
{
	(void)state;
	size_t nref, blocks, ties = 0;
	const ng_flow **ref = reference("proto udp", 0, UINT64_MAX, &nref, &blocks);
	for (size_t i = 1; i < nref; i++)
		ties += ref[i]->flow_start == ref[i - 1]->flow_start;
	assert_true(ties > 100);
	ng_query_result par, one, lim;
	run("proto udp", 0, UINT64_MAX, 0, 2, NULL, &par);
	run("proto udp", 0, UINT64_MAX, 0, 1, NULL, &one);
	run("proto udp", 0, UINT64_MAX, nrows, 2, NULL, &lim);
	assert_listing(&par, ref, nref);
	assert_int_equal(one.nflows, nref);
	assert_int_equal(lim.nflows, nref);
	assert_memory_equal(par.flows, one.flows, nref * sizeof *par.flows);
	assert_memory_equal(par.flows, lim.flows, nref * sizeof *par.flows);
	ng_query_result_free(&par);
	ng_query_result_free(&one);
	ng_query_result_free(&lim);
	free(ref);
}

static void test_rare_groupby(void **state)
{
	(void)state;
	const char *rare = "proto tcp and dst port 31337";
	size_t nref, blocks;
	const ng_flow **ref = reference(rare, 0, UINT64_MAX, &nref, &blocks);
	uint64_t bytes = 0, packets = 0;
	for (size_t i = 0; i < nref; i++)
		bytes += ref[i]->bytes, packets += ref[i]->packets;
	ng_query_result res;
	run(rare, 0, UINT64_MAX, 0, 2, "srcip", &res);
	assert_int_equal(res.flows_total, nref);
	assert_int_equal(res.bytes_total, bytes);
	assert_int_equal(res.packets_total, packets);
	assert_int_equal(res.scan.blocks_decoded, blocks);
	uint64_t sum = 0;
	for (size_t i = 0; i < res.nrows; i++)
		sum += res.rows[i].bytes;
	assert_int_equal(sum, bytes);
	ng_query_result_free(&res);
	free(ref);
}

static int setup(void **state)
{
	(void)state;
	make_store();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	drop_store();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rare_listing), cmocka_unit_test(test_nothing_matches),
	    cmocka_unit_test(test_time_range),   cmocka_unit_test(test_tie_order),
	    cmocka_unit_test(test_rare_groupby),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
