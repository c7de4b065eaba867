/*
 * test_query_damage.c — damaged segments count for nothing, in every
 * query shape, and one snapshot gives every query of a command the same
 * segments.
 *
 * A store of five segments of 40 000 rows (three blocks each) in one
 * hour; one of them damaged in a way of its own per test: a byte flipped
 * in the second block of a column every shape reads (bytes), a byte
 * flipped in the first block of a column only a listing reads
 * (tcp_flags), the file cut short, its header zeroed, a frame table
 * entry changed.  Every shape (listing, listing of the first N, top-N,
 * group-by of every group, time series, and a group-by answered from
 * rollups when the store has them) must give the totals of the four
 * whole segments, computed here from the rows written, and count the
 * damaged segment once.  Before segment_check.c, the second-block flip
 * counted the damaged segment's first block (16 384 rows) in some
 * shapes and not in others; before verdict.c, the tcp_flags flip was
 * counted by every shape but the listing.  Verdicts (the hour's
 * `checked` file): the writer's "ok", the "damaged" the first shape
 * records, read by the next; a store where none can be kept.
 *
 * Maintenance leaves the damaged file alone (compaction merges the
 * others, counts it), fsck moves exactly it aside, and a snapshot taken
 * before more segments are written, or before compaction unlinks the
 * segments it merges, still reads exactly its own.
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
#include <unistd.h>

#include "core/bytes.h"
#include "query/query.h"
#include "query/series.h"
#include "store/segment.h"
#include "store/store.h"
#include "e2e_util.h"
#include "test_store_helpers.h"

#define HOUR UINT64_C(3600000)
#define T0 UINT64_C(1764460800000) /* 2025-11-30T00:00:00Z */
enum { NSEG = 5, PER = 40000, BAD = 2 };

typedef struct totals {
	uint64_t flows, packets, bytes;
} totals;

static ng_flow *rows;
static totals seg_tot[NSEG];

/* Row i of segment s: flow_start ascending through the hour (10 ms
 * apart), varied addresses, ports, flags and counters. */
static void make_row(ng_flow *r, size_t s, size_t i)
{
	eu_damage_row(r, s * PER + i);
}

static int setup_rows(void **state)
{
	(void)state;
	rows = calloc((size_t)NSEG * PER, sizeof *rows);
	assert_non_null(rows);
	for (size_t s = 0; s < NSEG; s++)
		for (size_t i = 0; i < PER; i++) {
			ng_flow *r = &rows[s * PER + i];
			make_row(r, s, i);
			seg_tot[s].flows++;
			seg_tot[s].packets += r->packets;
			seg_tot[s].bytes += r->bytes;
		}
	return 0;
}

static int teardown_rows(void **state)
{
	(void)state;
	free(rows);
	return 0;
}

/* Segments [0, n) of the rows, one flush each, into a new store. */
static char *build(size_t n)
{
	char *dir = ts_make_store("damage");
	char err[256];
	ng_store_writer *w = ng_store_writer_open(dir, err, sizeof err);
	assert_non_null(w);
	for (size_t s = 0; s < n; s++) {
		assert_int_equal(ng_store_writer_append(w, rows + s * PER, PER), 0);
		assert_int_equal(ng_store_writer_flush(w), 0);
	}
	assert_int_equal(ng_store_writer_close(w), 0);
	return dir;
}

/* The path of the s-th segment by name (they sort in write order). */
static void segment_path(const char *dir, size_t s, char *path, size_t len)
{
	char flows[4200];
	snprintf(flows, sizeof flows, "%s/flows", dir);
	eu_nth_file(flows, "*.seg", s, path, len);
}

/* File offset of the middle of frame b of column `col` of segment
 * `path` (its frame table read from the file), and the table entry's. */
static uint64_t frame_middle(const char *path, const char *col, size_t b, uint64_t *entry)
{
	ng_seg_reader rd;
	char err[256];
	ng_seg_reader_init(&rd);
	assert_int_equal(ng_seg_open(&rd, path, err, sizeof err), 0);
	int idx = ng_seg_find_column(&rd, col);
	assert_true(idx >= 0);
	const ng_seg_column c = rd.h.cols[idx];
	assert_true(c.encoding == NG_ENC_PLAIN || c.encoding == NG_ENC_DIFF ||
	            c.encoding == NG_ENC_DELTA);
	const size_t nb = ng_seg_blocks(&rd);
	assert_true(b < nb);
	uint8_t tab[64 * 4];
	assert_true(nb <= 64);
	assert_int_equal(pread(rd.fd, tab, 4 * nb, (off_t)c.offset), (ssize_t)(4 * nb));
	uint64_t off = c.offset + 4 * nb;
	for (size_t k = 0; k < b; k++)
		off += ng_get_le32(tab + 4 * k);
	*entry = c.offset + 4 * b;
	off += ng_get_le32(tab + 4 * b) / 2;
	ng_seg_close(&rd);
	ng_seg_reader_free(&rd);
	return off;
}

static void xor_byte(const char *path, uint64_t off, uint8_t x)
{
	int fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	uint8_t v;
	assert_int_equal(pread(fd, &v, 1, (off_t)off), 1);
	v ^= x;
	assert_int_equal(pwrite(fd, &v, 1, (off_t)off), 1);
	close(fd);
}

enum damage { FLIP_BLOCK1, FLIP_OTHER_COLUMN, TRUNCATE, ZERO_HEADER, FRAME_TABLE };

/* Damages segment `path` `how`.  After 20 ms: the write sets the file's
 * mtime past the one its writer's "ok" verdict names (the kernel's
 * clock may tick only every 10 ms), as damage written later always does. */
static void damage(const char *path, enum damage how)
{
	uint64_t entry;
	struct stat sb;
	usleep(20000);
	switch (how) {
	case FLIP_BLOCK1: xor_byte(path, frame_middle(path, "bytes", 1, &entry), 0x5a); break;
	case FLIP_OTHER_COLUMN:
		xor_byte(path, frame_middle(path, "tcp_flags", 0, &entry), 0x5a);
		break;
	case TRUNCATE:
		assert_int_equal(stat(path, &sb), 0);
		assert_int_equal(truncate(path, sb.st_size * 3 / 5), 0);
		break;
	case ZERO_HEADER: {
		int fd = open(path, O_RDWR);
		static const uint8_t zero[64];
		assert_int_equal(pwrite(fd, zero, 64, 0), 64);
		close(fd);
		break;
	}
	case FRAME_TABLE:
		frame_middle(path, "tcp_flags", 1, &entry);
		xor_byte(path, entry, 0x01);
		break;
	}
}

/* The totals of the whole segments (all but BAD). */
static totals good_totals(void)
{
	totals t = {0};
	for (size_t s = 0; s < NSEG; s++)
		if (s != BAD) {
			t.flows += seg_tot[s].flows;
			t.packets += seg_tot[s].packets;
			t.bytes += seg_tot[s].bytes;
		}
	return t;
}

static void assert_result(const ng_query_result *r, totals want, uint64_t damaged,
                          const char *shape)
{
	if (r->flows_total != want.flows || r->packets_total != want.packets ||
	    r->bytes_total != want.bytes || r->scan.segments_damaged != damaged)
		fail_msg("%s: flows %llu packets %llu bytes %llu damaged %llu; want %llu %llu %llu "
		         "%llu",
		         shape, (unsigned long long)r->flows_total,
		         (unsigned long long)r->packets_total, (unsigned long long)r->bytes_total,
		         (unsigned long long)r->scan.segments_damaged,
		         (unsigned long long)want.flows, (unsigned long long)want.packets,
		         (unsigned long long)want.bytes, (unsigned long long)damaged);
}

/* Runs every query shape over [T0, T0 + HOUR) with snapshot snap (NULL:
 * each takes its own) and checks each against want.  `rollups`: the
 * rollup-answered shape must have read rollups. */
static void all_shapes(const char *dir, ng_store_snapshot *snap, totals want, uint64_t damaged,
                       bool rollups)
{
	char err[512];
	ng_query_result r;
	ng_query q = {.from_ms = T0, .to_ms = T0 + HOUR, .snap = snap};

	assert_int_equal(ng_query_run(dir, &q, &r, err, sizeof err), 0); /* listing */
	assert_result(&r, want, damaged, "listing");
	assert_int_equal(r.nflows, want.flows);
	ng_query_result_free(&r);

	q.limit = 1000000; /* the first N: serial, in order */
	assert_int_equal(ng_query_run(dir, &q, &r, err, sizeof err), 0);
	assert_result(&r, want, damaged, "listing first N");
	ng_query_result_free(&r);

	static const char *const keys[] = {"srcip", "dstport", "proto,dstport", "conv"};
	for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
		ng_query g = {
		    .from_ms = T0, .to_ms = T0 + HOUR, .snap = snap, .limit = k % 2 ? 0 : 10};
		assert_int_equal(ng_query_parse_keys(&g, keys[k], err, sizeof err), 0);
		assert_int_equal(ng_query_run(dir, &g, &r, err, sizeof err), 0);
		assert_result(&r, want, damaged, keys[k]);
		ng_query_result_free(&r);
		g.no_rollup = true;
		assert_int_equal(ng_query_run(dir, &g, &r, err, sizeof err), 0);
		assert_result(&r, want, damaged, keys[k]);
		ng_query_result_free(&r);
	}

	ng_query p = {.from_ms = T0, .to_ms = T0 + HOUR, .snap = snap, .limit = 5};
	assert_int_equal(ng_query_parse_keys(&p, "proto", err, sizeof err), 0);
	assert_int_equal(ng_query_run(dir, &p, &r, err, sizeof err), 0);
	assert_result(&r, want, damaged, "proto (rollups)");
	if (rollups)
		assert_true(r.scan.segments_rollup > 0);
	ng_query_result_free(&r);

	ng_series se;
	ng_query sq = {.from_ms = T0, .to_ms = T0 + HOUR, .snap = snap};
	assert_int_equal(ng_series_run(dir, &sq, 5 * 60000, &se, err, sizeof err), 0);
	assert_result(&se.res, want, damaged, "series");
	ng_series_free(&se);
	assert_int_equal(ng_query_parse_keys(&sq, "dstport", err, sizeof err), 0);
	sq.limit = 3;
	assert_int_equal(ng_series_run(dir, &sq, 5 * 60000, &se, err, sizeof err), 0);
	assert_result(&se.res, want, damaged, "series top 3");
	ng_series_free(&se);
}

/* A store, segment BAD damaged `how` (after rollups were written when
 * `rollups`): every shape, with and without one snapshot for all. */
static void check_damage(enum damage how, bool rollups)
{
	char *dir = build(NSEG), path[4200];
	ng_store_maint_stats st = {0};
	if (rollups)
		assert_int_equal(ng_store_rollup(dir, T0 + 10 * HOUR, 0, 0, true, &st), 0);
	segment_path(dir, BAD, path, sizeof path);
	damage(path, how);
	all_shapes(dir, NULL, good_totals(), 1, rollups);
	ng_store_snapshot *snap = ng_store_snapshot_take(dir, T0, T0 + HOUR);
	assert_non_null(snap);
	assert_int_equal(ng_store_snapshot_segments(snap), NSEG);
	all_shapes(dir, snap, good_totals(), 1, rollups);
	assert_int_equal(ng_store_snapshot_damaged(snap, T0, T0 + HOUR, NULL, NULL), 1);
	ng_store_snapshot_free(snap);
	ts_rm_rf(dir);
	free(dir);
}

static void test_flip_second_block(void **state)
{
	(void)state;
	check_damage(FLIP_BLOCK1, false);
}

/* A byte flipped in a column only a listing reads: the flip changed the
 * file's mtime, so its writer's "ok" verdict is not of it any more, and
 * whatever shape reads it first checks it whole, records it damaged,
 * and every shape skips it; also with NG_SEGMENT_CHECK=all.  (Main
 * before verdict.c: a top-N of srcip counted all of it, 40 000 flows
 * more than the listing.) */
static void test_flip_unread_column(void **state)
{
	(void)state;
	check_damage(FLIP_OTHER_COLUMN, false);
	check_damage(FLIP_OTHER_COLUMN, true);
	setenv("NG_SEGMENT_CHECK", "all", 1);
	check_damage(FLIP_OTHER_COLUMN, false);
	unsetenv("NG_SEGMENT_CHECK");
}

/* One shape over the hour (0 a top-10 of srcip, 1 a group-by of proto
 * from the rollups, 2 a time series), checked against want. */
static void one_shape(const char *dir, int shape, totals want, uint64_t damaged)
{
	static const char *const name[] = {"srcip", "proto (rollups)", "series"};
	char err[512];
	ng_query q = {.from_ms = T0, .to_ms = T0 + HOUR, .limit = 10};
	ng_query_result r;
	if (shape == 2) {
		ng_series se;
		q.limit = 0;
		assert_int_equal(ng_series_run(dir, &q, 5 * 60000, &se, err, sizeof err), 0);
		assert_result(&se.res, want, damaged, name[shape]);
		ng_series_free(&se);
		return;
	}
	assert_int_equal(ng_query_parse_keys(&q, shape ? "proto" : "srcip", err, sizeof err), 0);
	assert_int_equal(ng_query_run(dir, &q, &r, err, sizeof err), 0);
	assert_result(&r, want, damaged, name[shape]);
	if (shape == 1)
		assert_int_equal(r.scan.segments_rollup, NSEG - 1);
	ng_query_result_free(&r);
}

/* Each shape that does not read tcp_flags, run first on a store whose
 * segment BAD had a tcp_flags byte flipped after its writer recorded it
 * "ok": it checks BAD whole (its verdict is not of this version of the
 * file), skips it, and records "damaged", which the next command reads;
 * the whole segments keep the writer's "ok".  With the `checked` file
 * gone, a first query records every verdict again. */
static void test_verdicts(void **state)
{
	(void)state;
	for (int shape = 0; shape < 3; shape++) {
		char *dir = build(NSEG), path[4200];
		ng_store_maint_stats st = {0};
		assert_int_equal(ng_store_rollup(dir, T0 + 10 * HOUR, 0, 0, true, &st), 0);
		for (size_t s = 0; s < NSEG; s++) {
			segment_path(dir, s, path, sizeof path);
			assert_string_equal(eu_verdict(path, NULL), "ok"); /* the writer's */
		}
		segment_path(dir, BAD, path, sizeof path);
		damage(path, FLIP_OTHER_COLUMN);
		assert_string_equal(eu_verdict(path, NULL), "");
		one_shape(dir, shape, good_totals(), 1);
		assert_string_equal(eu_verdict(path, NULL), "damaged");
		for (int other = 0; other < 3; other++)
			one_shape(dir, other, good_totals(), 1);
		all_shapes(dir, NULL, good_totals(), 1, true);
		char vp[4300];
		snprintf(vp, sizeof vp, "%.*s/checked", (int)(strrchr(path, '/') - path), path);
		assert_int_equal(unlink(vp), 0);
		one_shape(dir, shape, good_totals(), 1);
		for (size_t s = 0; s < NSEG; s++) {
			segment_path(dir, s, path, sizeof path);
			assert_string_equal(eu_verdict(path, NULL), s == BAD ? "damaged" : "ok");
		}
		ts_rm_rf(dir);
		free(dir);
	}
}

/* A store whose verdicts cannot be read or written (its `checked` file a
 * directory: as a read-only store, which root's permissions do not
 * give): every command checks every segment whole, and every shape gives
 * the whole segments' totals. */
static void test_verdicts_unwritable(void **state)
{
	(void)state;
	char *dir = build(NSEG), path[4200], vp[4300];
	ng_store_maint_stats st = {0};
	assert_int_equal(ng_store_rollup(dir, T0 + 10 * HOUR, 0, 0, true, &st), 0);
	segment_path(dir, BAD, path, sizeof path);
	snprintf(vp, sizeof vp, "%.*s/checked", (int)(strrchr(path, '/') - path), path);
	unlink(vp); /* the writer's verdicts */
	assert_int_equal(mkdir(vp, 0755), 0);
	damage(path, FLIP_OTHER_COLUMN);
	for (int shape = 0; shape < 3; shape++)
		one_shape(dir, shape, good_totals(), 1);
	all_shapes(dir, NULL, good_totals(), 1, true);
	struct stat sb;
	assert_int_equal(stat(vp, &sb), 0);
	assert_true(S_ISDIR(sb.st_mode));
	ts_rm_rf(dir);
	free(dir);
}

static void test_truncated(void **state)
{
	(void)state;
	check_damage(TRUNCATE, true);
}

static void test_zeroed_header(void **state)
{
	(void)state;
	check_damage(ZERO_HEADER, true);
}

static void test_frame_table(void **state)
{
	(void)state;
	check_damage(FRAME_TABLE, true);
}

/* A damaged rollup is passed over for its segment's rows: same totals,
 * nothing skipped. */
static void test_damaged_rollup(void **state)
{
	(void)state;
	char *dir = build(NSEG), cmd[4400], path[4200];
	ng_store_maint_stats st = {0};
	assert_int_equal(ng_store_rollup(dir, T0 + 10 * HOUR, 0, 0, true, &st), 0);
	snprintf(cmd, sizeof cmd, "find '%s/flows' -name '*.seg.r-geo-1h' | sort | head -1", dir);
	FILE *p = popen(cmd, "r");
	assert_non_null(fgets(path, sizeof path, p));
	pclose(p);
	path[strcspn(path, "\n")] = 0;
	struct stat sb;
	assert_int_equal(stat(path, &sb), 0);
	xor_byte(path, (uint64_t)sb.st_size - 3, 0x5a); /* inside the last frame */
	totals all = good_totals();
	all.flows += seg_tot[BAD].flows;
	all.packets += seg_tot[BAD].packets;
	all.bytes += seg_tot[BAD].bytes;
	all_shapes(dir, NULL, all, 0, true);
	ts_rm_rf(dir);
	free(dir);
}

/* Compaction merges the whole segments and leaves the damaged one where
 * it is, counted; rollups skip it; fsck then moves exactly it aside. */
static void test_maintenance_and_fsck(void **state)
{
	(void)state;
	char *dir = build(NSEG), path[4200], moved[4400];
	segment_path(dir, BAD, path, sizeof path);
	damage(path, FLIP_BLOCK1);
	ng_store_maint_stats st = {0};
	assert_int_equal(ng_store_compact(dir, T0 + 10 * HOUR, 0, 0, &st), 0);
	assert_int_equal(st.damaged, 1);
	assert_int_equal(st.segments_in, NSEG - 1);
	assert_int_equal(st.segments_out, 1);
	assert_int_equal(st.rows, (uint64_t)(NSEG - 1) * PER);
	assert_int_equal(st.damaged_new, 1); /* logged: the first find in the process */
	assert_int_equal(ng_store_damaged_present(), 1);
	struct stat sb;
	assert_int_equal(stat(path, &sb), 0); /* left in place */
	ng_store_maint_stats again = {0};     /* the next run counts it, logs nothing */
	assert_int_equal(ng_store_compact(dir, T0 + 10 * HOUR, 0, 0, &again), 0);
	assert_int_equal(again.damaged, 1);
	assert_int_equal(again.damaged_new, 0);
	ng_store_maint_stats rs = {0};
	assert_int_equal(ng_store_rollup(dir, T0 + 10 * HOUR, 0, 0, true, &rs), 0);
	assert_int_equal(rs.damaged, 1);
	assert_int_equal(rs.damaged_new, 0);
	assert_int_equal(rs.segments_rolled, 1);
	all_shapes(dir, NULL, good_totals(), 1, true);

	ng_fsck_stats fs;
	ng_fsck_opts o = {.dry_run = true};
	assert_int_equal(ng_store_fsck(dir, &o, &fs), 0);
	assert_int_equal(fs.damaged_segments, 1);
	assert_int_equal(fs.moved, 0);
	assert_int_equal(stat(path, &sb), 0);
	o.dry_run = false;
	assert_int_equal(ng_store_fsck(dir, &o, &fs), 0);
	assert_int_equal(fs.segments, 2);
	assert_int_equal(fs.damaged_segments, 1);
	assert_int_equal(fs.damaged_rollups, 0);
	assert_int_equal(fs.moved, 1);
	assert_int_not_equal(stat(path, &sb), 0);
	snprintf(moved, sizeof moved, "%s/quarantine/%s", dir, path + strlen(dir) + 1);
	assert_int_equal(stat(moved, &sb), 0);
	assert_int_equal(ng_store_quarantined(dir, NULL), 1);
	assert_int_equal(ng_store_damaged_present(), 0); /* moved aside: forgotten */
	assert_int_equal(ng_store_fsck(dir, &o, &fs), 0);
	assert_int_equal(fs.damaged_segments + fs.damaged_rollups, 0);
	all_shapes(dir, NULL, good_totals(), 0, true);
	ts_rm_rf(dir);
	free(dir);
}

/* Retention leaves a damaged segment it would delete by age. */
static void test_retention_keeps_damaged(void **state)
{
	(void)state;
	char *dir = build(NSEG), path[4200];
	segment_path(dir, BAD, path, sizeof path);
	damage(path, ZERO_HEADER);
	ng_store_maint_stats st = {0};
	assert_int_equal(ng_store_retention(dir, HOUR, 0, T0 + 10 * HOUR, &st), 0);
	assert_int_equal(st.segments_deleted, NSEG - 1);
	assert_int_equal(st.damaged, 1);
	struct stat sb;
	assert_int_equal(stat(path, &sb), 0);
	ts_rm_rf(dir);
	free(dir);
}

/* One snapshot: segments written after it are not read, and segments
 * compaction unlinks after it still are, by every query given it. */
static void test_snapshot(void **state)
{
	(void)state;
	char *dir = build(2), err[512];
	ng_store_snapshot *snap = ng_store_snapshot_take(dir, 0, UINT64_MAX);
	assert_non_null(snap);
	totals two = {0};
	for (size_t s = 0; s < 2; s++) {
		two.flows += seg_tot[s].flows;
		two.packets += seg_tot[s].packets;
		two.bytes += seg_tot[s].bytes;
	}
	ng_store_writer *w = ng_store_writer_open(dir, err, sizeof err);
	assert_non_null(w);
	assert_int_equal(ng_store_writer_append(w, rows + 2 * PER, PER), 0);
	assert_int_equal(ng_store_writer_close(w), 0);
	ng_query_result r;
	ng_query q = {.from_ms = T0, .to_ms = T0 + HOUR, .snap = snap, .limit = 10};
	assert_int_equal(ng_query_parse_keys(&q, "srcip", err, sizeof err), 0);
	assert_int_equal(ng_query_run(dir, &q, &r, err, sizeof err), 0);
	assert_result(&r, two, 0, "snapshot, after a write");
	ng_query_result_free(&r);
	/* compaction merges all three and unlinks them */
	ng_store_maint_stats st = {0};
	assert_int_equal(ng_store_compact(dir, T0 + 10 * HOUR, 0, 0, &st), 0);
	assert_int_equal(st.segments_in, 3);
	assert_int_equal(ts_count_files(dir, "*.seg"), 1);
	q.no_rollup = true;
	assert_int_equal(ng_query_run(dir, &q, &r, err, sizeof err), 0);
	assert_result(&r, two, 0, "snapshot, after compaction");
	ng_query_result_free(&r);
	ng_store_snapshot_free(snap);
	q.snap = NULL; /* a new one sees the merged segment: all three */
	assert_int_equal(ng_query_run(dir, &q, &r, err, sizeof err), 0);
	assert_int_equal(r.flows_total, 3 * PER);
	ng_query_result_free(&r);
	ts_rm_rf(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_flip_second_block),
	    cmocka_unit_test(test_flip_unread_column),
	    cmocka_unit_test(test_verdicts),
	    cmocka_unit_test(test_verdicts_unwritable),
	    cmocka_unit_test(test_truncated),
	    cmocka_unit_test(test_zeroed_header),
	    cmocka_unit_test(test_frame_table),
	    cmocka_unit_test(test_damaged_rollup),
	    cmocka_unit_test(test_maintenance_and_fsck),
	    cmocka_unit_test(test_retention_keeps_damaged),
	    cmocka_unit_test(test_snapshot),
	};
	return cmocka_run_group_tests(tests, setup_rows, teardown_rows);
}
