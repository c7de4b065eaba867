/*
 * test_store_framecache.c — the query cache of inflated column blocks
 * (store/framecache.h): its bound and LRU order; frames taken by
 * reference outlive their eviction; scans through it give the rows
 * written (sums computed here from the rows), the second scan from the
 * cache, also with a bound that evicts while two workers read; a store
 * written again at the same path with other rows is read as the new
 * rows, never as the cached old ones; the checks (ng_seg_check_block)
 * never read from it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "core/addr.h"
#include "core/field.h"
#include "store/framecache.h"
#include "store/segment.h"
#include "store/store.h"
#include "test_rng.h"
#include "test_store_helpers.h"

#define T0 UINT64_C(1764460800000) /* 2025-11-30T00:00:00Z */
enum { N = 60000 };

static ng_flow rows[N];

static ng_frame_key key(uint32_t frame, uint64_t len)
{
	return (ng_frame_key){.dev = 1,
	                      .ino = 2,
	                      .size = 3,
	                      .mtime_ns = 4,
	                      .hsum = 5,
	                      .column = 6,
	                      .frame = frame,
	                      .len = len};
}

static void test_bound_and_lru(void **state)
{
	(void)state;
	uint8_t in[1000], out[1000];
	assert_int_equal(ng_frame_cache_configure(8000), 0); /* frames up to 1000 bytes */
	for (uint32_t f = 0; f < 8; f++) {
		memset(in, (int)f, sizeof in);
		ng_frame_key k = key(f, sizeof in);
		ng_frame_cache_put(&k, in);
	}
	ng_frame_key k0 = key(0, sizeof in);
	assert_true(ng_frame_cache_get(&k0, out)); /* 0 is now the most recent */
	assert_int_equal(out[999], 0);
	memset(in, 8, sizeof in);
	ng_frame_key k8 = key(8, sizeof in);
	ng_frame_cache_put(&k8, in); /* over the bound: the least recent (1) goes */
	ng_frame_key k1 = key(1, sizeof in);
	assert_false(ng_frame_cache_get(&k1, out));
	assert_true(ng_frame_cache_get(&k0, out));
	assert_true(ng_frame_cache_get(&k8, out));
	assert_int_equal(out[0], 8);
	ng_frame_key other = key(8, 999); /* another length: another frame */
	assert_false(ng_frame_cache_get(&other, out));
	ng_frame_key big = key(20, 1001); /* over an eighth of the bound: not kept */
	uint8_t bigbuf[1001] = {0};
	ng_frame_cache_put(&big, bigbuf);
	assert_false(ng_frame_cache_get(&big, bigbuf));
	ng_frame_cache_stats st;
	ng_frame_cache_get_stats(&st);
	assert_int_equal(st.entries, 8);
	assert_int_equal(st.bytes, 8000);
	assert_int_equal(st.evictions, 1);
	assert_int_equal(ng_frame_cache_configure(0), 0); /* off: emptied */
	ng_frame_cache_get_stats(&st);
	assert_int_equal(st.entries, 0);
	assert_int_equal(st.bytes, 0);
	assert_false(ng_frame_cache_on());
}

/* A frame taken by reference stays whole while it is evicted (by new
 * frames, by turning the cache off) and is freed by its last release:
 * ASan and LeakSanitizer check both in the sanitizer build. */
static void test_pinned_frames_outlive_eviction(void **state)
{
	(void)state;
	uint8_t in[1000];
	assert_int_equal(ng_frame_cache_configure(8000), 0);
	for (uint32_t f = 0; f < 8; f++) {
		memset(in, (int)f + 1, sizeof in);
		ng_frame_key k = key(f, sizeof in);
		ng_frame_cache_put(&k, in);
	}
	ng_frame_key k0 = key(0, sizeof in), k1 = key(1, sizeof in);
	ng_frame_pin a = {0}, b = {0}, c = {0};
	const uint8_t *pa = ng_frame_cache_acquire(&k0, &a);
	const uint8_t *pb = ng_frame_cache_acquire(&k0, &b); /* two readers, one entry */
	const uint8_t *pc = ng_frame_cache_acquire(&k1, &c);
	assert_non_null(pa);
	assert_ptr_equal(pa, pb);
	assert_non_null(pc);
	for (uint32_t f = 10; f < 18; f++) { /* evicts all eight, pinned or not */
		memset(in, 0x55, sizeof in);
		ng_frame_key k = key(f, sizeof in);
		ng_frame_cache_put(&k, in);
	}
	ng_frame_pin miss = {0};
	assert_null(ng_frame_cache_acquire(&k0, &miss)); /* out of the table ... */
	assert_null(miss.entry);
	ng_frame_cache_stats st;
	ng_frame_cache_get_stats(&st);
	assert_int_equal(st.entries, 8);
	assert_int_equal(st.bytes, 8000);      /* ... and of the bound */
	for (size_t i = 0; i < sizeof in; i++) /* ... but whole for its readers */
		assert_true(pa[i] == 1 && pc[i] == 2);
	ng_frame_cache_release(&a);
	assert_null(a.entry);
	for (size_t i = 0; i < sizeof in; i++) /* b still holds it */
		assert_int_equal(pb[i], 1);
	ng_frame_cache_release(&b); /* the last: freed */
	ng_frame_cache_release(&b); /* released already: nothing */

	/* pinned while the cache is turned off */
	ng_frame_key k10 = key(10, sizeof in);
	const uint8_t *p10 = ng_frame_cache_acquire(&k10, &a);
	assert_non_null(p10);
	assert_int_equal(ng_frame_cache_configure(0), 0);
	assert_int_equal(p10[999], 0x55);
	ng_frame_cache_release(&a);
	ng_frame_cache_release(&c);
	ng_frame_cache_get_stats(&st);
	assert_int_equal(st.entries, 0);
}

struct sums {
	uint64_t n, bytes, ports;
};

static int on_rows(const ng_column_batch *b, void *arg)
{
	struct sums *s = arg;
	for (size_t i = 0; i < b->n; i++) {
		s->n++;
		s->bytes += ((const uint64_t *)b->col[NG_F_BYTES])[i];
		s->ports += ((const uint16_t *)b->col[NG_F_DST_PORT])[i];
	}
	return 0;
}

/* N rows with seed-dependent bytes and ports; their sums into *want. */
static void make_rows(uint64_t seed, struct sums *want)
{
	uint64_t rng = seed;
	memset(want, 0, sizeof *want);
	for (size_t i = 0; i < N; i++) {
		ng_flow *r = &rows[i];
		memset(r, 0, sizeof *r);
		r->flow_start = T0 + ts_xorshift64(&rng) % 3600000;
		r->flow_end = r->flow_start + 1000;
		uint8_t a[4] = {10, 0, (uint8_t)(i >> 8), (uint8_t)i};
		ng_addr_from_v4(r->src_addr, a);
		r->dst_port = (uint16_t)ts_xorshift64(&rng);
		r->bytes = ts_xorshift64(&rng) % 100000;
		r->packets = 1;
		want->n++;
		want->bytes += r->bytes;
		want->ports += r->dst_port;
	}
}

static struct sums scan(const char *dir)
{
	struct sums s = {0};
	assert_int_equal(ng_store_scan(dir, 0, UINT64_MAX,
	                               (ng_colset)NG_COLSET(NG_F_BYTES, NG_F_DST_PORT), on_rows, &s,
	                               NULL),
	                 0);
	return s;
}

/* scan() reading more columns than it sums (flow_end, src_addr): more
 * frames than a small cache holds */
static struct sums scan_wide(const char *dir)
{
	struct sums s = {0};
	assert_int_equal(ng_store_scan(dir, 0, UINT64_MAX,
	                               (ng_colset)NG_COLSET(NG_F_BYTES, NG_F_DST_PORT,
	                                                    NG_F_FLOW_END, NG_F_SRC_ADDR),
	                               on_rows, &s, NULL),
	                 0);
	return s;
}

/* scan_wide on two workers at once (each pins its own frames while the
 * other's inserts evict them) */
static struct sums par_sums[2];

static int on_rows_par(const ng_column_batch *b, unsigned worker, void *arg)
{
	(void)arg;
	return on_rows(b, &par_sums[worker]);
}

static struct sums scan_par(const char *dir)
{
	memset(par_sums, 0, sizeof par_sums);
	ng_scan_opts o = {.from_ms = 0,
	                  .to_ms = UINT64_MAX,
	                  .columns = (ng_colset)NG_COLSET(NG_F_BYTES, NG_F_DST_PORT, NG_F_FLOW_END,
	                                                  NG_F_SRC_ADDR),
	                  .fn_par = on_rows_par,
	                  .threads = 2};
	assert_int_equal(ng_store_scan_opts(dir, &o, NULL), 0);
	struct sums s = par_sums[0];
	s.n += par_sums[1].n;
	s.bytes += par_sums[1].bytes;
	s.ports += par_sums[1].ports;
	return s;
}

static void test_scans_through_the_cache(void **state)
{
	(void)state;
	char *dir = ts_make_store("framecache");
	struct sums want, got;
	make_rows(0x9e3779b97f4a7c15ull, &want);
	ts_write_rows(dir, rows, N, 20000);
	assert_int_equal(ng_frame_cache_configure(64u << 20), 0);
	ng_frame_cache_stats a, b;
	ng_frame_cache_get_stats(&a);
	got = scan(dir);
	assert_memory_equal(&got, &want, sizeof got);
	ng_frame_cache_get_stats(&b);
	assert_true(b.inserts > a.inserts); /* the first scan filled it ... */
	got = scan(dir);
	assert_memory_equal(&got, &want, sizeof got);
	ng_frame_cache_stats c;
	ng_frame_cache_get_stats(&c);
	assert_true(c.hits >= b.hits + (b.inserts - a.inserts)); /* ... the second read it */
	assert_int_equal(c.inserts, b.inserts);

	/* a bound of a few frames: scans evict frames other readers of
	 * the scan may hold, and still read the rows written */
	assert_int_equal(ng_frame_cache_configure(1u << 20), 0);
	for (int i = 0; i < 3; i++) {
		got = scan_wide(dir);
		assert_memory_equal(&got, &want, sizeof got);
		got = scan_par(dir);
		assert_memory_equal(&got, &want, sizeof got);
	}
	ng_frame_cache_get_stats(&c);
	assert_true(c.evictions > 0);
	assert_int_equal(ng_frame_cache_configure(64u << 20), 0);

	/* the same path, other rows: never the old frames */
	ts_rm_rf(dir);
	char cmd[512];
	snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
	assert_int_equal(system(cmd), 0);
	struct sums want2;
	make_rows(0x243f6a8885a308d3ull, &want2);
	assert_true(want2.bytes != want.bytes);
	ts_write_rows(dir, rows, N, 20000);
	got = scan(dir);
	assert_memory_equal(&got, &want2, sizeof got);

	/* a check reads the file: a segment damaged after it was cached
	 * fails its check although the cache holds its frames under the same
	 * key (its times put back: size, inode and times as before) */
	char seg[4096];
	ts_find_segment(dir, seg, sizeof seg);
	ng_seg_reader r;
	ng_seg_reader_init(&r);
	char err[256];
	assert_int_equal(ng_seg_open(&r, seg, err, sizeof err), 0);
	int col = r.col_of_field[NG_F_BYTES];
	assert_true(col >= 0);
	static uint8_t out[NG_SEG_BLOCK_ROWS * 16];
	assert_int_equal(
	    ng_seg_check_block(&r, (uint32_t)col, &ng_fields[NG_F_BYTES], 0, out, err, sizeof err),
	    0);
	uint64_t off = r.h.cols[col].offset + r.h.cols[col].stored - 8; /* in its last frame */
	ng_seg_reader_free(&r);
	struct stat st;
	assert_int_equal(stat(seg, &st), 0);
	FILE *f = fopen(seg, "r+b");
	assert_non_null(f);
	assert_int_equal(fseek(f, (long)off, SEEK_SET), 0);
	int ch = fgetc(f);
	assert_int_equal(fseek(f, (long)off, SEEK_SET), 0);
	fputc(ch ^ 0x5a, f);
	fclose(f);
	const struct timespec times[2] = {st.st_atim, st.st_mtim};
	assert_int_equal(utimensat(AT_FDCWD, seg, times, 0), 0);
	ng_seg_reader_init(&r);
	assert_int_equal(ng_seg_open(&r, seg, err, sizeof err), 0); /* the header is intact */
	size_t last = ng_seg_blocks(&r) - 1;
	assert_int_not_equal(ng_seg_check_block(&r, (uint32_t)col, &ng_fields[NG_F_BYTES], last,
	                                        out, err, sizeof err),
	                     0);
	ng_seg_reader_free(&r);
	assert_int_equal(ng_frame_cache_configure(0), 0);
	ts_rm_rf(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bound_and_lru),
	    cmocka_unit_test(test_pinned_frames_outlive_eviction),
	    cmocka_unit_test(test_scans_through_the_cache),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
