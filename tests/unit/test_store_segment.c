/*
 * test_store_segment.c — the flow store: write/scan round trip of every
 * field, time-range skipping, column tolerance, corrupt segments.
 *
 * The reference is the records themselves: what goes in must come out,
 * field by field, and a range scan must return exactly the rows a
 * brute-force filter over the input selects.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

#include "core/field.h"
#include "core/strtab.h"
#include "store/segment.h"
#include "core/timefmt.h"
#include "store/store.h"
#include "test_store_helpers.h"

#define HOUR UINT64_C(3600000)
#define T0 UINT64_C(1764460800000) /* 2025-11-30T00:00:00Z */

static uint64_t rng_state = 88172645463325252ull;
static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* A record with every field random; `v4` forces IPv4-mapped addresses. */
static void random_flow(ng_flow *r, uint64_t start_lo, uint64_t span, bool v4)
{
	memset(r, 0, sizeof *r);
	for (size_t f = 0; f < NG_FIELD_COUNT; f++) {
		const ng_field *fd = &ng_fields[f];
		uint8_t *p = (uint8_t *)r + fd->offset;
		for (size_t k = 0; k < fd->size; k++)
			p[k] = (uint8_t)rnd();
		if (fd->type == NG_FT_STR) { /* an ID means a string: intern one */
			char txt[16];
			int len = snprintf(txt, sizeof txt, "s%u", (unsigned)(rnd() % 50));
			uint32_t id = rnd() % 4 ? ng_intern(txt, (size_t)len) : 0;
			memcpy(p, &id, 4);
		}
		if (fd->type == NG_FT_ADDR && (v4 || rnd() % 2)) {
			memset(p, 0, 10);
			p[10] = p[11] = 0xff;
		}
	}
	r->flow_start = start_lo + rnd() % span;
	r->flow_end = r->flow_start + rnd() % 60000;
	r->time_received = r->flow_end + rnd() % 1000;
	r->bytes = rnd() % 1000000;
	r->protocol = (uint8_t)(rnd() % 2 ? 6 : 17);
}

/* n random flows in flow_start order, flow i starting in [T0 + i * step,
 * T0 + i * step + span), and order[] = 0, 1, … n - 1. */
static void flows_in_order(ng_flow *in, uint32_t *order, size_t n, uint64_t step, uint64_t span,
                           bool v4)
{
	for (size_t i = 0; i < n; i++) {
		random_flow(&in[i], T0 + (uint64_t)i * step, span, v4);
		order[i] = (uint32_t)i;
	}
}

static char *make_store(void)
{
	return ts_make_store("store");
}

/* Collects every scanned row back into records. */
typedef struct collect {
	ng_flow *rows;
	size_t n, cap;
	ng_colset columns;
} collect;

static int collect_fn(const ng_column_batch *b, void *arg)
{
	collect *c = arg;
	if (c->n + b->n > c->cap) {
		c->cap = (c->n + b->n) * 2;
		c->rows = realloc(c->rows, c->cap * sizeof *c->rows);
		assert_non_null(c->rows);
	}
	for (size_t i = 0; i < b->n; i++) {
		ng_flow *r = &c->rows[c->n + i];
		memset(r, 0, sizeof *r);
		for (size_t f = 0; f < NG_FIELD_COUNT; f++) {
			if (!ng_colset_has(c->columns, f) && f != NG_F_FLOW_START) {
				assert_null(b->col[f]);
				continue;
			}
			assert_non_null(b->col[f]);
			memcpy((uint8_t *)r + ng_fields[f].offset,
			       (const uint8_t *)b->col[f] + i * ng_fields[f].size,
			       ng_fields[f].size);
		}
	}
	c->n += b->n;
	return 0;
}

static void assert_same_rows(ng_flow *want, size_t nw, ng_flow *got, size_t ng)
{
	assert_int_equal(ng, nw);
	qsort(want, nw, sizeof *want, ts_cmp_flow);
	qsort(got, ng, sizeof *got, ts_cmp_flow);
	for (size_t i = 0; i < nw; i++) {
		for (size_t f = 0; f < NG_FIELD_COUNT; f++) {
			const ng_field *fd = &ng_fields[f];
			if (memcmp((uint8_t *)&want[i] + fd->offset,
			           (uint8_t *)&got[i] + fd->offset, fd->size))
				fail_msg("row %zu field %s differs", i, fd->name);
		}
	}
}

/* The store at dir holds exactly the rows want[0..n) (want is sorted). */
static void assert_store_holds(const char *dir, ng_flow *want, size_t n)
{
	collect c = {.columns = ng_colset_all()};
	assert_int_equal(ng_store_scan(dir, 0, UINT64_MAX, ng_colset_all(), collect_fn, &c, NULL),
	                 0);
	assert_same_rows(want, n, c.rows, c.n);
	free(c.rows);
}

static void write_rows(const char *dir, ng_flow *rows, size_t n, size_t per_flush)
{
	char err[256];
	ng_store_writer *w = ng_store_writer_open(dir, err, sizeof err);
	assert_non_null(w);
	for (size_t i = 0; i < n; i += per_flush) {
		size_t k = n - i < per_flush ? n - i : per_flush;
		assert_int_equal(ng_store_writer_append(w, rows + i, k), 0);
		assert_int_equal(ng_store_writer_flush(w), 0);
	}
	ng_store_writer_stats st;
	ng_store_writer_get_stats(w, &st);
	assert_int_equal(st.rows, n);
	assert_int_equal(st.errors, 0);
	assert_int_equal(ng_store_writer_close(w), 0);
}

static void round_trip(bool v4)
{
	enum { N = 20000 };
	char *dir = make_store();
	ng_flow *in = calloc(N, sizeof *in), *ref = calloc(N, sizeof *ref);
	for (size_t i = 0; i < N; i++)
		random_flow(&in[i], T0, 3 * HOUR, v4); /* three hours, random order */
	memcpy(ref, in, N * sizeof *in);

	char err[256];
	ng_store_writer *w = ng_store_writer_open(dir, err, sizeof err);
	assert_non_null(w);
	assert_int_equal(ng_store_writer_append(w, in, N), 0);
	assert_int_equal(ng_store_writer_close(w), 0);

	collect c = {.columns = ng_colset_all()};
	ng_scan_stats st;
	assert_int_equal(ng_store_scan(dir, 0, UINT64_MAX, ng_colset_all(), collect_fn, &c, &st),
	                 0);
	assert_int_equal(st.segments_total, 3); /* one per hour of flow_start */
	assert_int_equal(st.segments_read, 3);
	assert_int_equal(st.errors, 0);
	assert_int_equal(st.rows_scanned, N);
	assert_same_rows(ref, N, c.rows, c.n);

	/* rows arrive in flow_start order within a segment and across hours */
	free(c.rows);
	free(in);
	free(ref);
	ts_rm_rf(dir);
	free(dir);
}

/* Records as exporters send them: each run of 1-200 records (one
 * "template") sets its own subset of fields, the rest stay zero, so the
 * writer's column chunks see columns appear, vanish and come back inside
 * a chunk and across chunk boundaries. */
static ng_flow *sparse_rows(size_t n)
{
	ng_flow *rows = calloc(n, sizeof *rows);
	assert_non_null(rows);
	ng_colset keep = {{0}};
	size_t run = 0;
	for (size_t i = 0; i < n; i++) {
		if (run == 0) {
			run = 1 + rnd() % 200;
			for (size_t w = 0; w < NG_COLSET_WORDS; w++)
				keep.w[w] = rnd() & rnd(); /* about a quarter of the fields */
		}
		run--;
		random_flow(&rows[i], T0, 3 * HOUR, false);
		for (size_t f = 0; f < NG_FIELD_COUNT; f++)
			if (!ng_colset_has(keep, f) && f != NG_F_FLOW_START)
				memset((uint8_t *)&rows[i] + ng_fields[f].offset, 0,
				       ng_fields[f].size);
	}
	return rows;
}

static void test_round_trip_sparse(void **state)
{
	(void)state;
	enum { N = 50000 };
	ng_flow *in = sparse_rows(N);
	char *dir = make_store();
	char err[256];
	ng_store_writer *w = ng_store_writer_open(dir, err, sizeof err);
	assert_non_null(w);
	for (size_t i = 0; i < N;) { /* appends of 1-3000 rows, a flush now and then */
		size_t k = 1 + rnd() % 3000;
		k = k < N - i ? k : N - i;
		assert_true(ng_store_writer_append(w, in + i, k) >= 0);
		i += k;
		if (rnd() % 8 == 0)
			assert_int_equal(ng_store_writer_flush(w), 0);
	}
	assert_int_equal(ng_store_writer_close(w), 0);
	assert_store_holds(dir, in, N);
	free(in);
	ts_rm_rf(dir);
	free(dir);
}

static void test_round_trip_mixed(void **state)
{
	(void)state;
	round_trip(false);
}

static void test_round_trip_v4(void **state)
{
	(void)state;
	round_trip(true);
}

/* The encoding of the single segment in dir of column `name`. */
static int column_encoding(const char *dir, const char *name)
{
	char path[512];
	ts_find_segment(dir, path, sizeof path);
	ng_seg_reader rd;
	ng_seg_reader_init(&rd);
	char err[256];
	assert_int_equal(ng_seg_open(&rd, path, err, sizeof err), 0);
	int i = ng_seg_find_column(&rd, name), enc = i < 0 ? -1 : rd.h.cols[i].encoding;
	ng_seg_reader_free(&rd);
	return enc;
}

/* Receive times stored as differences from flow_end when those are the
 * smaller (an export delay of a few seconds), as deltas when the rows'
 * receive times run smoother than their ends (a replay, long flows
 * exported late); both read back exactly. */
static void test_time_received_encoding(void **state)
{
	(void)state;
	enum { N = 5000 };
	for (int late = 0; late < 2; late++) {
		char *dir = make_store();
		ng_flow *in = calloc(N, sizeof *in);
		for (size_t i = 0; i < N; i++) {
			random_flow(&in[i], T0, HOUR, true);
			in[i].flow_start = T0 + i * 500;
			in[i].flow_end = in[i].flow_start + rnd() % 60000; /* up to 1 min */
			in[i].time_received = late ? T0 + 86400000 + i * 3 /* received a day on */
			                           : in[i].flow_end + rnd() % 2000;
		}
		char err[256];
		ng_store_writer *w = ng_store_writer_open(dir, err, sizeof err);
		assert_non_null(w);
		assert_int_equal(ng_store_writer_append(w, in, N), 0);
		assert_int_equal(ng_store_writer_close(w), 0);
		assert_int_equal(column_encoding(dir, "time_received"),
		                 late ? NG_ENC_DELTA : NG_ENC_DIFF);
		assert_store_holds(dir, in, N);
		free(in);
		ts_rm_rf(dir);
		free(dir);
	}
}

/* Constant columns (all rows equal) take the CONST encoding: still exact. */
static void test_round_trip_constant_columns(void **state)
{
	(void)state;
	enum { N = 1000 };
	char *dir = make_store();
	ng_flow *in = calloc(N, sizeof *in);
	for (size_t i = 0; i < N; i++) {
		random_flow(&in[i], T0, HOUR, false);
		memcpy(in[i].exporter, in[0].exporter, 16);
		memcpy(in[i].src_mac, in[0].src_mac, 6);
		in[i].in_if = 7;
		in[i].tos = 0;
	}
	in[0].src_as = 65000; /* a column with one odd row */
	for (size_t i = 1; i < N; i++)
		in[i].src_as = 1;
	ng_flow *ref = calloc(N, sizeof *ref);
	memcpy(ref, in, N * sizeof *in);
	write_rows(dir, in, N, N);
	assert_store_holds(dir, ref, N);
	free(in);
	free(ref);
	ts_rm_rf(dir);
	free(dir);
}

/*
 * Six hours of flows, written 10 minutes at a time: 36 segments, 6 an
 * hour.  A scan of [H2 + 30 min, H2 + 50 min) must visit only hour H2's
 * directory (6 segments), read the two that overlap, skip four, and return
 * exactly the rows a brute-force filter selects.
 */
static void test_time_range_skipping(void **state)
{
	(void)state;
	enum { PER = 500, SLICES = 36 };
	const uint64_t slice = 10 * 60000;
	char *dir = make_store();
	ng_flow *in = calloc(PER * SLICES, sizeof *in);
	for (size_t s = 0; s < SLICES; s++)
		for (size_t i = 0; i < PER; i++)
			random_flow(&in[s * PER + i], T0 + s * slice, slice, false);
	write_rows(dir, in, PER * SLICES, PER);

	uint64_t from = T0 + 2 * HOUR + 30 * 60000, to = from + 20 * 60000;
	size_t want = 0;
	for (size_t i = 0; i < PER * SLICES; i++)
		want += in[i].flow_start >= from && in[i].flow_start < to;
	collect c = {.columns = NG_COLSET(NG_F_BYTES)};
	ng_scan_stats st;
	assert_int_equal(ng_store_scan(dir, from, to, c.columns, collect_fn, &c, &st), 0);
	assert_int_equal(c.n, want);
	assert_int_equal(st.rows_scanned, want);
	assert_int_equal(st.segments_total, 6);
	assert_int_equal(st.segments_read, 2);
	assert_int_equal(st.segments_skipped, 4);
	for (size_t i = 0; i < c.n; i++) {
		assert_true(c.rows[i].flow_start >= from && c.rows[i].flow_start < to);
		if (i)
			assert_true(c.rows[i].flow_start >= c.rows[i - 1].flow_start);
	}

	/* a range that cuts inside segments: [H1 + 5 min, H3 + 7 min) */
	from = T0 + HOUR + 5 * 60000;
	to = T0 + 3 * HOUR + 7 * 60000;
	want = 0;
	for (size_t i = 0; i < PER * SLICES; i++)
		want += in[i].flow_start >= from && in[i].flow_start < to;
	c.n = 0;
	assert_int_equal(ng_store_scan(dir, from, to, c.columns, collect_fn, &c, &st), 0);
	assert_int_equal(c.n, want);
	assert_int_equal(st.segments_read, 6 + 6 + 1);
	assert_int_equal(st.segments_total, 18);
	free(c.rows);
	free(in);
	ts_rm_rf(dir);
	free(dir);
}

/*
 * One segment of 40 000 rows: three blocks of 16 384 rows and a short one.
 * Every field comes back; a range that cuts inside the second and third
 * blocks returns exactly the rows a brute-force filter selects.
 */
static void test_multi_block_segment(void **state)
{
	(void)state;
	enum { N = 40000 };
	assert_true(N > 2 * NG_SEG_BLOCK_ROWS);
	char *dir = make_store();
	ng_flow *in = calloc(N, sizeof *in), *ref = calloc(N, sizeof *ref);
	for (size_t i = 0; i < N; i++)
		random_flow(&in[i], T0, HOUR, i % 3 == 0);
	memcpy(ref, in, N * sizeof *in);
	write_rows(dir, in, N, N);
	collect c = {.columns = ng_colset_all()};
	ng_scan_stats st;
	assert_int_equal(ng_store_scan(dir, 0, UINT64_MAX, ng_colset_all(), collect_fn, &c, &st),
	                 0);
	assert_int_equal(st.segments_read, 1);
	assert_same_rows(ref, N, c.rows, c.n);

	/* sorted starts: the 20 000th and 35 000th give a range across blocks */
	uint64_t *starts = malloc(N * sizeof *starts);
	for (size_t i = 0; i < N; i++)
		starts[i] = ref[i].flow_start; /* ref is sorted by assert_same_rows */
	uint64_t from = starts[20000] + 1, to = starts[35000];
	size_t want = 0;
	for (size_t i = 0; i < N; i++)
		want += starts[i] >= from && starts[i] < to;
	c.n = 0;
	c.columns = (ng_colset)NG_COLSET(NG_F_FLOW_END, NG_F_SRC_ADDR);
	assert_int_equal(ng_store_scan(dir, from, to, c.columns, collect_fn, &c, &st), 0);
	assert_int_equal(c.n, want);
	for (size_t i = 0; i < c.n; i++)
		assert_true(c.rows[i].flow_start >= from && c.rows[i].flow_start < to);
	free(starts);
	free(c.rows);
	free(in);
	free(ref);
	ts_rm_rf(dir);
	free(dir);
}

/* ng_seg_read_block_rows(f, b, lo, sel, k) equals rows lo + sel[m] of
 * ng_seg_read_block(f, b), as a field of f's size and as an integer
 * field read narrower (a width change), for kept rows of every density. */
static void assert_rows_match_block(ng_seg_reader *rd, const ng_field *f, size_t b, uint8_t *block,
                                    uint8_t *got, uint32_t *sel)
{
	char err[256];
	const size_t n = ng_seg_block_rows(rd, b);
	assert_int_equal(ng_seg_read_block(rd, f, b, block, err, sizeof err), 0);
	static const unsigned every[] = {1, 2, 7, 100, 5000};
	for (size_t e = 0; e < sizeof every / sizeof *every; e++) {
		const size_t lo = e % 2 ? n / 3 : 0;
		size_t k = 0;
		for (size_t i = 0; lo + i < n; i++)
			if (rnd() % every[e] == 0 || lo + i == n - 1) /* the last row too */
				sel[k++] = (uint32_t)i;
		assert_int_equal(ng_seg_read_block_rows(rd, f, b, lo, sel, k, got, err, sizeof err),
		                 0);
		for (size_t m = 0; m < k; m++)
			if (memcmp(got + m * f->size, block + (lo + sel[m]) * f->size, f->size))
				fail_msg("field %s block %zu row %zu differs", f->name, b,
				         lo + sel[m]);
	}
}

/*
 * A segment of three blocks with every encoding (PLAIN of each width,
 * V4, DELTA, DIFF, DICT, RANK, CONST): the kept rows decoded alone are the
 * block's rows, for every field, and for integer fields read 4 or 1
 * bytes wide.
 */
static void test_read_block_rows(void **state)
{
	(void)state;
	enum { N = 2 * NG_SEG_BLOCK_ROWS + 1000 };
	ng_flow *in = calloc(N, sizeof *in);
	uint32_t *order = malloc(N * sizeof *order);
	for (size_t i = 0; i < N; i++) {
		random_flow(&in[i], T0, HOUR, false);
		memset(in[i].next_hop, 0, 10); /* an IPv4-only column: V4 */
		in[i].next_hop[10] = in[i].next_hop[11] = 0xff;
		in[i].in_if = 7; /* CONST */
		/* 2000 values in 33768 rows: RANK */
		in[i].src_as = 100 + (uint32_t)(rnd() % 2000);
		memcpy(in[i].src_addr, in[i].next_hop, 12);
		memcpy(in[i].src_addr + 12, &in[i].src_as, 4);
		in[i].bytes_raw = in[i].bytes; /* DIFF against bytes */
		order[i] = (uint32_t)i;
	}
	ng_seg_order_by_start(in, order, N);
	ng_seg_encoder *e = ng_seg_encoder_new(1);
	const uint8_t *img;
	size_t len;
	char err[256], path[512];
	assert_int_equal(ng_seg_encode(e, in, order, N, &img, &len, err, sizeof err), 0);
	char *dir = make_store();
	snprintf(path, sizeof path, "%s/one.seg", dir);
	FILE *fp = fopen(path, "wb");
	assert_non_null(fp);
	assert_int_equal(fwrite(img, 1, len, fp), len);
	fclose(fp);

	ng_seg_reader rd;
	ng_seg_reader_init(&rd);
	assert_int_equal(ng_seg_open(&rd, path, err, sizeof err), 0);
	int seen[8] = {0};
	for (uint32_t i = 0; i < rd.h.ncols; i++)
		seen[rd.h.cols[i].encoding] = 1;
	for (int enc = NG_ENC_CONST; enc <= NG_ENC_RANK; enc++)
		if (!seen[enc])
			fail_msg("no column of encoding %d", enc);
	uint8_t *block = malloc(NG_SEG_BLOCK_ROWS * 16), *got = malloc(NG_SEG_BLOCK_ROWS * 16);
	uint32_t *sel = malloc(NG_SEG_BLOCK_ROWS * sizeof *sel);
	for (size_t b = 0; b < ng_seg_blocks(&rd); b++)
		for (size_t f = 0; f < NG_FIELD_COUNT; f++) {
			ng_field fd = ng_fields[f];
			assert_rows_match_block(&rd, &fd, b, block, got, sel);
			if (fd.type > NG_FT_U64 && fd.type != NG_FT_TIME)
				continue;
			static const unsigned widths[] = {4, 1}; /* narrower reads truncate */
			for (size_t j = 0; j < 2; j++) {
				fd.size = widths[j];
				fd.type = widths[j] == 4 ? NG_FT_U32 : NG_FT_U8;
				assert_rows_match_block(&rd, &fd, b, block, got, sel);
			}
		}
	free(block);
	free(got);
	free(sel);
	ng_seg_reader_free(&rd);
	ng_seg_encoder_free(e);
	free(order);
	free(in);
	ts_rm_rf(dir);
	free(dir);
}

/* Writes an image into the store's hour directory under `name`. */
static void put_file(const char *dir, const char *name, const void *p, size_t len)
{
	char path[512];
	snprintf(path, sizeof path, "%s/flows/2025/11/30/00", dir);
	char cmd[600];
	snprintf(cmd, sizeof cmd, "mkdir -p '%s'", path);
	assert_int_equal(system(cmd), 0);
	snprintf(path, sizeof path, "%s/flows/2025/11/30/00/%s", dir, name);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, len, f), len);
	fclose(f);
}

/* ng_scan_opts.select keeping every 10th row (few: decoded alone). */
static int every_tenth(const ng_column_batch *b, unsigned worker, void *arg, uint32_t *sel,
                       size_t *nsel)
{
	(void)worker, (void)arg;
	size_t k = 0;
	for (size_t i = 0; i < b->n; i += 10)
		sel[k++] = (uint32_t)i;
	*nsel = k;
	return 0;
}

static int count_rows(const ng_column_batch *b, void *arg)
{
	*(size_t *)arg += b->n;
	return 0;
}

/* A segment whose rows are not in flow_start order (two rows swapped)
 * is reported and skipped whether its blocks are decoded whole or only
 * the rows a filter keeps; a sorted one beside it reads. */
static void test_unsorted_segment_skipped(void **state)
{
	(void)state;
	enum { N = 3000 };
	char *dir = make_store();
	ng_flow in[N];
	uint32_t order[N];
	flows_in_order(in, order, N, 100, 1, true);
	ng_seg_encoder *e = ng_seg_encoder_new(1);
	const uint8_t *img;
	size_t len;
	char err[256];
	assert_int_equal(ng_seg_encode(e, in, order, N, &img, &len, err, sizeof err), 0);
	put_file(dir, "1764460800000-1764461099999-1.seg", img, len);
	order[1000] = 2000, order[2000] = 1000; /* both among the kept rows */
	assert_int_equal(ng_seg_encode(e, in, order, N, &img, &len, err, sizeof err), 0);
	put_file(dir, "1764460800000-1764461099999-2.seg", img, len);
	for (int sel = 0; sel < 2; sel++) {
		size_t rows = 0;
		ng_scan_opts o = {.from_ms = 0,
		                  .to_ms = UINT64_MAX,
		                  .columns = NG_COLSET(NG_F_BYTES),
		                  .fn = count_rows,
		                  .arg = &rows,
		                  .select = sel ? every_tenth : NULL,
		                  .select_columns =
		                      sel ? ng_colset_of(NG_F_PROTOCOL) : (ng_colset){{0}}};
		ng_scan_stats st;
		assert_int_equal(ng_store_scan_opts(dir, &o, &st), 0);
		assert_int_equal(st.errors, 1);
		assert_int_equal(rows, sel ? N / 10 : N);
	}
	ng_seg_encoder_free(e);
	ts_rm_rf(dir);
	free(dir);
}

/* A segment whose src_port column is renamed to a name this build does
 * not know: src_port reads as zeros, the unknown column is ignored, every
 * other field is intact. */
static void test_missing_and_unknown_columns(void **state)
{
	(void)state;
	enum { N = 300 };
	char *dir = make_store();
	ng_flow in[N];
	uint32_t order[N];
	flows_in_order(in, order, N, 1000, 1000, false);
	ng_seg_encoder *e = ng_seg_encoder_new(1);
	const uint8_t *img;
	size_t len;
	char err[256];
	assert_int_equal(ng_seg_encode(e, in, order, N, &img, &len, err, sizeof err), 0);
	uint8_t *copy = malloc(len);
	memcpy(copy, img, len);
	uint8_t *ent = copy + NG_SEG_FIXED_SIZE + NG_F_SRC_PORT * NG_SEG_ENTRY_SIZE;
	assert_string_equal((char *)ent, "src_port");
	memset(ent, 0, 32);
	strcpy((char *)ent, "zz_future_field");
	ng_seg_reseal(copy);
	char name[128];
	snprintf(name, sizeof name, "%llu-%llu-0.seg", (unsigned long long)in[0].flow_start,
	         (unsigned long long)in[N - 1].flow_start);
	put_file(dir, name, copy, len);

	collect c = {.columns = ng_colset_all()};
	ng_scan_stats st;
	assert_int_equal(ng_store_scan(dir, 0, UINT64_MAX, ng_colset_all(), collect_fn, &c, &st),
	                 0);
	assert_int_equal(st.errors, 0);
	for (size_t i = 0; i < N; i++)
		in[i].src_port = 0;
	assert_same_rows(in, N, c.rows, c.n);
	free(c.rows);
	free(copy);
	ng_seg_encoder_free(e);
	ts_rm_rf(dir);
	free(dir);
}

/* A segment whose directory lists dst_port before src_port (entries
 * swapped, each with its own offset and size): columns are matched to
 * fields by name, whatever their order (segment_read.c's field_named
 * looks from the field after the last one found and wraps round), so
 * every row reads back as written. */
static void test_columns_out_of_field_order(void **state)
{
	(void)state;
	enum { N = 300 };
	char *dir = make_store();
	ng_flow in[N];
	uint32_t order[N];
	flows_in_order(in, order, N, 1000, 1000, false);
	ng_seg_encoder *e = ng_seg_encoder_new(1);
	const uint8_t *img;
	size_t len;
	char err[256];
	assert_int_equal(ng_seg_encode(e, in, order, N, &img, &len, err, sizeof err), 0);
	uint8_t *copy = malloc(len);
	memcpy(copy, img, len);
	uint8_t *src = copy + NG_SEG_FIXED_SIZE + NG_F_SRC_PORT * NG_SEG_ENTRY_SIZE;
	uint8_t *dst = copy + NG_SEG_FIXED_SIZE + NG_F_DST_PORT * NG_SEG_ENTRY_SIZE;
	assert_string_equal((char *)src, "src_port");
	assert_string_equal((char *)dst, "dst_port");
	uint8_t tmp[NG_SEG_ENTRY_SIZE];
	memcpy(tmp, src, sizeof tmp);
	memcpy(src, dst, sizeof tmp);
	memcpy(dst, tmp, sizeof tmp);
	ng_seg_reseal(copy);
	char name[128];
	snprintf(name, sizeof name, "%llu-%llu-0.seg", (unsigned long long)in[0].flow_start,
	         (unsigned long long)in[N - 1].flow_start);
	put_file(dir, name, copy, len);

	collect c = {.columns = ng_colset_all()};
	ng_scan_stats st;
	assert_int_equal(ng_store_scan(dir, 0, UINT64_MAX, ng_colset_all(), collect_fn, &c, &st),
	                 0);
	assert_int_equal(st.errors, 0);
	assert_int_equal(c.n, N);
	assert_int_not_equal(in[0].src_port, in[0].dst_port);
	assert_same_rows(in, N, c.rows, c.n);
	free(c.rows);
	free(copy);
	ng_seg_encoder_free(e);
	ts_rm_rf(dir);
	free(dir);
}

/*
 * Crash and corruption: next to three good segments, a truncated copy (as
 * if the process died mid-write without the rename protocol), garbage, a
 * flipped header byte, a flipped column data byte, an empty file and a
 * leftover .tmp file.  Each bad file is counted and skipped; the .tmp is
 * not a segment at all; every good row is read.
 */
static void test_corrupt_segments_skipped(void **state)
{
	(void)state;
	enum { N = 400 };
	char *dir = make_store();
	ng_flow in[3 * N];
	for (size_t i = 0; i < 3 * N; i++)
		random_flow(&in[i], T0 + (i / N) * 20 * 60000, 20 * 60000, false);
	write_rows(dir, in, 3 * N, N);

	uint32_t order[N];
	for (size_t i = 0; i < N; i++)
		order[i] = (uint32_t)i;
	ng_flow other[N];
	for (size_t i = 0; i < N; i++)
		random_flow(&other[i], T0 + (uint64_t)i, 1, false);
	ng_seg_encoder *e = ng_seg_encoder_new(1);
	const uint8_t *img;
	size_t len;
	char err[256];
	assert_int_equal(ng_seg_encode(e, other, order, N, &img, &len, err, sizeof err), 0);
	uint8_t *bad = malloc(len);

	put_file(dir, "1764460800000-1764460800999-100.seg", img, len / 2); /* truncated */
	for (size_t i = 0; i < len; i++)
		bad[i] = (uint8_t)rnd();
	put_file(dir, "1764460800000-1764460800999-101.seg", bad, len); /* garbage */
	memcpy(bad, img, len);
	bad[20] ^= 1; /* row count */
	put_file(dir, "1764460800000-1764460800999-102.seg", bad, len);
	memcpy(bad, img, len);
	bad[len - 10] ^= 0x40; /* inside the last column's zstd frame */
	put_file(dir, "1764460800000-1764460800999-103.seg", bad, len);
	put_file(dir, "1764460800000-1764460800999-104.seg", img, 0); /* empty */
	put_file(dir, "1764460800000-1764460800999-105.seg.123.tmp", img, len / 3);

	collect c = {.columns = ng_colset_all()};
	ng_scan_stats st;
	assert_int_equal(ng_store_scan(dir, 0, UINT64_MAX, ng_colset_all(), collect_fn, &c, &st),
	                 0);
	assert_int_equal(st.errors, 5);
	assert_int_equal(st.segments_total, 3 + 5);
	assert_int_equal(st.segments_read, 3);
	assert_same_rows(in, 3 * N, c.rows, c.n);
	free(c.rows);
	free(bad);
	ng_seg_encoder_free(e);
	ts_rm_rf(dir);
	free(dir);
}

/* The header parser on every prefix of a good header and with each
 * header byte flipped: rejects, never reads out of bounds (ASan build). */
static void test_header_fuzz(void **state)
{
	(void)state;
	ng_flow in[10];
	uint32_t order[10];
	flows_in_order(in, order, 10, 1, 1, false);
	ng_seg_encoder *e = ng_seg_encoder_new(1);
	const uint8_t *img;
	size_t len;
	char err[256];
	assert_int_equal(ng_seg_encode(e, in, order, 10, &img, &len, err, sizeof err), 0);
	ng_seg_header h;
	assert_int_equal(ng_seg_parse_header(img, len, len, &h, err, sizeof err), 0);
	assert_int_equal(h.rows, 10);
	assert_int_equal(h.start_min, in[0].flow_start);
	free(h.cols);
	size_t hsize = NG_SEG_FIXED_SIZE + NG_SEG_ENTRY_SIZE * NG_FIELD_COUNT;
	for (size_t cut = 0; cut < hsize; cut += 7) {
		uint8_t *p = malloc(cut ? cut : 1);
		memcpy(p, img, cut);
		assert_int_equal(ng_seg_parse_header(p, cut, cut, &h, err, sizeof err), -1);
		free(p);
	}
	uint8_t *p = malloc(len);
	for (size_t i = 0; i < hsize; i++) {
		memcpy(p, img, len);
		p[i] ^= 0x10;
		assert_int_equal(ng_seg_parse_header(p, len, len, &h, err, sizeof err), -1);
	}
	free(p);
	ng_seg_encoder_free(e);
}

static void test_writer_due(void **state)
{
	(void)state;
	char *dir = make_store();
	char err[256];
	ng_store_writer *w = ng_store_writer_open(dir, err, sizeof err);
	assert_non_null(w);
	uint64_t now = ng_now_ms(); /* the writer's clock; the append is later */
	assert_false(ng_store_writer_due(w, now + 60000)); /* empty: never due */
	ng_flow r;
	random_flow(&r, T0, 1, true);
	assert_int_equal(ng_store_writer_append(w, &r, 1), 0);
	assert_false(ng_store_writer_due(w, now));
	assert_true(ng_store_writer_due(w, ng_now_ms() + 5000)); /* 5 s after the first row */
	assert_int_equal(ng_store_writer_flush(w), 0);
	assert_false(ng_store_writer_due(w, now + 60000));
	ng_store_writer_stats st;
	ng_store_writer_get_stats(w, &st);
	assert_int_equal(st.rows, 1);
	assert_int_equal(st.segments, 1);
	assert_true(st.bytes > 64);
	assert_int_equal(ng_store_writer_close(w), 0);
	char state_dir[512];
	assert_non_null(ng_store_state_dir(dir, state_dir, sizeof state_dir));
	struct stat sb;
	assert_int_equal(stat(state_dir, &sb), 0);
	ts_rm_rf(dir);
	free(dir);
}

/* store.h: the append that makes the buffer reach 2^18 rows returns 1
 * (wake the flusher), once; the appends before and after it return 0. */
static void test_writer_due_signal(void **state)
{
	(void)state;
	enum { DUE = 1 << 18, CHUNK = 1000 };
	char *dir = make_store();
	char err[256];
	ng_store_writer *w = ng_store_writer_open(dir, err, sizeof err);
	assert_non_null(w);
	ng_flow *rows = calloc(CHUNK, sizeof *rows);
	assert_non_null(rows);
	for (size_t i = 0; i < CHUNK; i++)
		random_flow(&rows[i], T0, 3600000, true);
	size_t n = 0, signals = 0, at = 0;
	while (n < DUE + 3 * CHUNK) {
		int rc = ng_store_writer_append(w, rows, CHUNK);
		assert_true(rc == 0 || rc == 1);
		n += CHUNK;
		if (rc == 1)
			signals++, at = n;
	}
	assert_int_equal(signals, 1);
	assert_int_equal(at, (DUE + CHUNK - 1) / CHUNK * CHUNK); /* the first n ≥ 2^18 */
	assert_true(ng_store_writer_due(w, ng_now_ms()));
	assert_int_equal(ng_store_writer_close(w), 0);
	free(rows);
	ts_rm_rf(dir);
	free(dir);
}

/* The thread-safety contract of store.h: one thread appends while another
 * flushes whenever due; every row is stored exactly once. */
typedef struct flusher_arg {
	ng_store_writer *w;
	volatile int stop;
	int flushes;
} flusher_arg;

static void *flusher(void *p)
{
	flusher_arg *a = p;
	while (!a->stop) {
		if (ng_store_writer_flush(a->w) == 0)
			__atomic_add_fetch(&a->flushes, 1, __ATOMIC_RELEASE);
		usleep(2000);
	}
	return NULL;
}

/* Waits up to 30 s for the flusher to have flushed `n` times. */
static void wait_flushes(flusher_arg *a, int n)
{
	for (int ms = 0; ms < 30000 && __atomic_load_n(&a->flushes, __ATOMIC_ACQUIRE) < n; ms++)
		usleep(1000);
}

static void test_concurrent_append_flush(void **state)
{
	(void)state;
	enum { N = 60000, CHUNK = 150 };
	char *dir = make_store();
	char err[256];
	ng_store_writer *w = ng_store_writer_open(dir, err, sizeof err);
	assert_non_null(w);
	ng_flow *in = calloc(N, sizeof *in);
	for (size_t i = 0; i < N; i++) {
		random_flow(&in[i], T0, 2 * HOUR, true);
		in[i].packets = i; /* a unique tag per row */
	}
	flusher_arg a = {.w = w};
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, flusher, &a), 0);
	for (size_t i = 0; i < N; i += CHUNK) {
		assert_int_equal(ng_store_writer_append(w, in + i, CHUNK), 0);
		if (i % (CHUNK * 20) == 0)
			usleep(500);
		/* halfway, and at the end, let a flush happen (a loaded
		 * machine may not schedule the flusher otherwise): flushes
		 * then interleave with appends for certain */
		if (i == N / 2 || i + CHUNK >= N)
			wait_flushes(&a, i == N / 2 ? 1 : 2);
	}
	a.stop = 1;
	pthread_join(t, NULL);
	assert_int_equal(ng_store_writer_close(w), 0);
	assert_true(a.flushes > 1);

	collect c = {.columns = NG_COLSET(NG_F_PACKETS)};
	ng_scan_stats st;
	assert_int_equal(ng_store_scan(dir, 0, UINT64_MAX, c.columns, collect_fn, &c, &st), 0);
	assert_int_equal(c.n, N);
	uint8_t *seen = calloc(N, 1);
	for (size_t i = 0; i < c.n; i++) {
		assert_true(c.rows[i].packets < N);
		assert_int_equal(seen[c.rows[i].packets], 0);
		seen[c.rows[i].packets] = 1;
	}
	assert_true(st.segments_read > 2);
	free(seen);
	free(c.rows);
	free(in);
	ts_rm_rf(dir);
	free(dir);
}

/*
 * Crash safety: a child process writes segments of 3000 rows (one hour,
 * so one segment a flush) as fast as it can and is killed with SIGKILL at
 * an arbitrary moment, several times over.  Whatever it left — a partial
 * .tmp file at most — the store must read without a single error, and
 * hold whole flushes only: a multiple of 3000 rows, each flush's tag
 * complete.
 */
static void test_killed_writer(void **state)
{
	(void)state;
	enum { PER = 3000 };
	char *dir = make_store();
	static ng_flow in[PER];
	for (int round = 0; round < 4; round++) {
		int ready[2];
		assert_int_equal(pipe(ready), 0);
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			char err[256];
			close(ready[0]);
			ng_store_writer *w = ng_store_writer_open(dir, err, sizeof err);
			if (!w)
				_exit(3);
			for (uint64_t tag = (uint64_t)round << 32;; tag++) {
				for (size_t i = 0; i < PER; i++) {
					random_flow(&in[i], T0, HOUR, true);
					in[i].packets = tag;
				}
				if (ng_store_writer_append(w, in, PER) || ng_store_writer_flush(w))
					_exit(4);
				if (ready[1] >=
				    0) { /* one segment is whole: kill me any time now */
					(void)!write(ready[1], "x", 1);
					close(ready[1]);
					ready[1] = -1;
				}
			}
		}
		/* killed at some moment after its first flush, whatever the load
		 * (a sanitizer build on a busy machine may take long to start) */
		close(ready[1]);
		char x;
		assert_int_equal(read(ready[0], &x, 1), 1);
		close(ready[0]);
		usleep(20000 + 70000 * (useconds_t)round);
		kill(pid, SIGKILL);
		int st;
		waitpid(pid, &st, 0);
		assert_true(WIFSIGNALED(st));
	}
	collect c = {.columns = NG_COLSET(NG_F_PACKETS)};
	ng_scan_stats st;
	assert_int_equal(ng_store_scan(dir, 0, UINT64_MAX, c.columns, collect_fn, &c, &st), 0);
	assert_int_equal(st.errors, 0);
	assert_true(c.n > 0);
	assert_int_equal(c.n % PER, 0);
	assert_int_equal(c.n / PER, st.segments_read);
	/* every tag present appears exactly PER times */
	for (size_t i = 0; i < c.n; i++) {
		size_t same = 0;
		for (size_t j = 0; j < c.n; j += 1)
			same += c.rows[j].packets == c.rows[i].packets;
		if (same != PER)
			fail_msg("tag %llx appears %zu times",
			         (unsigned long long)c.rows[i].packets, same);
		i += PER - 1; /* rows of one segment are contiguous: check one per segment */
	}
	free(c.rows);
	ts_rm_rf(dir);
	free(dir);
}

/* A flush that cannot write (the year directory's path is taken by a
 * file; root ignores permissions, so this is how to fail) keeps every row,
 * counts the error, and a later flush stores the rows once. */
static void test_failed_flush_keeps_rows(void **state)
{
	(void)state;
	enum { N = 500 };
	char *dir = make_store();
	char err[256], path[512];
	ng_store_writer *w = ng_store_writer_open(dir, err, sizeof err);
	assert_non_null(w);
	snprintf(path, sizeof path, "%s/flows/2025", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
	ng_flow in[N];
	for (size_t i = 0; i < N; i++) {
		random_flow(&in[i], T0, HOUR, false);
		in[i].packets = i;
	}
	assert_int_equal(ng_store_writer_append(w, in, N / 2), 0);
	assert_int_equal(ng_store_writer_flush(w), -1);
	ng_store_writer_stats st;
	ng_store_writer_get_stats(w, &st);
	assert_int_equal(st.errors, 1);
	assert_int_equal(st.rows, 0);
	uint64_t now = (uint64_t)time(NULL) * 1000;
	assert_true(ng_store_writer_due(w, now + 60000)); /* the rows are still there */
	assert_int_equal(ng_store_writer_append(w, in + N / 2, N - N / 2), 0);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(ng_store_writer_flush(w), 0);
	ng_store_writer_get_stats(w, &st);
	assert_int_equal(st.rows, N);
	assert_int_equal(ng_store_writer_close(w), 0);
	assert_store_holds(dir, in, N);
	ts_rm_rf(dir);
	free(dir);
}

/* A failed flush of sparse rows spanning several chunks and hours keeps
 * every row: the retry stores exactly the input, once. */
static void test_failed_flush_sparse(void **state)
{
	(void)state;
	enum { N = 40000 };
	char *dir = make_store();
	char err[256], path[512];
	ng_store_writer *w = ng_store_writer_open(dir, err, sizeof err);
	assert_non_null(w);
	ng_flow *in = sparse_rows(N);
	/* the rows' hours are in 2025: a file where that directory goes makes
	 * every segment write fail */
	snprintf(path, sizeof path, "%s/flows/2025", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(ng_store_writer_append(w, in, N / 2), 0);
	assert_int_equal(ng_store_writer_flush(w), -1);
	assert_int_equal(ng_store_writer_append(w, in + N / 2, N - N / 2), 0);
	assert_int_equal(ng_store_writer_flush(w), -1); /* kept and new rows, failing again */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(ng_store_writer_flush(w), 0);
	ng_store_writer_stats st;
	ng_store_writer_get_stats(w, &st);
	assert_int_equal(st.rows, N);
	assert_int_equal(st.errors, 2);
	assert_int_equal(st.dropped, 0);
	assert_int_equal(ng_store_writer_close(w), 0);
	assert_store_holds(dir, in, N);
	free(in);
	ts_rm_rf(dir);
	free(dir);
}

/* A store that is not one, and an unwritable location. */
static void test_not_a_store(void **state)
{
	(void)state;
	collect c = {0};
	assert_int_equal(
	    ng_store_scan("/nonexistent/ng", 0, UINT64_MAX, (ng_colset){{0}}, collect_fn, &c, NULL),
	    -1);
	char err[256] = "";
	assert_null(ng_store_writer_open("/proc/ng_no_store", err, sizeof err));
	assert_non_null(strstr(err, "/proc/ng_no_store"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_time_received_encoding),
	    cmocka_unit_test(test_round_trip_mixed),
	    cmocka_unit_test(test_round_trip_v4),
	    cmocka_unit_test(test_round_trip_constant_columns),
	    cmocka_unit_test(test_time_range_skipping),
	    cmocka_unit_test(test_multi_block_segment),
	    cmocka_unit_test(test_read_block_rows),
	    cmocka_unit_test(test_unsorted_segment_skipped),
	    cmocka_unit_test(test_missing_and_unknown_columns),
	    cmocka_unit_test(test_columns_out_of_field_order),
	    cmocka_unit_test(test_corrupt_segments_skipped),
	    cmocka_unit_test(test_header_fuzz),
	    cmocka_unit_test(test_writer_due),
	    cmocka_unit_test(test_concurrent_append_flush),
	    cmocka_unit_test(test_writer_due_signal),
	    cmocka_unit_test(test_round_trip_sparse),
	    cmocka_unit_test(test_killed_writer),
	    cmocka_unit_test(test_failed_flush_keeps_rows),
	    cmocka_unit_test(test_failed_flush_sparse),
	    cmocka_unit_test(test_not_a_store),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
