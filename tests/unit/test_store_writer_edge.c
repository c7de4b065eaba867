/*
 * test_store_writer_edge.c — edge cases of the store writer's column
 * chunks (src/store/chunk.c, writer.c): failures part way through a flush
 * and retries mixed with appends, the 2^22-row buffer limit and its
 * "dropped" counter, columns set in one row of a chunk, flow_start zero,
 * flushes of more than 2^20 rows over several hours, DIFF columns whose
 * reference is all zero, dictionaries of many strings, ng_chunk_copy_row,
 * and appends racing flushes that fail.
 *
 * The reference is always the input: every row appended must be scanned
 * back exactly once, field by field.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/field.h"
#include "core/strtab.h"
#include "core/timefmt.h"
#include "store/chunk.h"
#include "store/store.h"
#include "test_store_helpers.h"

#define HOUR UINT64_C(3600000)
#define T0 UINT64_C(1764460800000) /* 2025-11-30T00:00:00Z */

/* Out of memory on demand: the writer's big buffers (sort arrays,
 * permuted columns) come from aligned_alloc, its chunks from mmap; while
 * fail_left > 0, a call for fail_size bytes fails. */
static int fail_left;
static size_t fail_size;

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	static void *(*real)(void *, size_t, int, int, int, off_t);
	if (!real) {
		void *sym = dlsym(RTLD_NEXT, "mmap");
		memcpy(&real, &sym, sizeof sym);
	}
	if (fail_left > 0 && len == fail_size) {
		fail_left--;
		errno = ENOMEM;
		return MAP_FAILED;
	}
	return real(addr, len, prot, flags, fd, off);
}

void *aligned_alloc(size_t align, size_t size)
{
	static void *(*real)(size_t, size_t);
	if (!real) {
		void *sym = dlsym(RTLD_NEXT, "aligned_alloc");
		memcpy(&real, &sym, sizeof sym);
	}
	if (fail_left > 0 && size == fail_size) {
		fail_left--;
		return NULL;
	}
	return real(align, size);
}

/* What the writer asks aligned_alloc for an array of 2^19 sort keys. */
static size_t sort_keys_bytes(void)
{
	size_t huge = (size_t)2 << 20;
	return (((size_t)8 << 19) + huge - 1) / huge * huge;
}

/* What ng_chunk_new asks mmap for (chunk.c). */
static size_t chunk_bytes(void)
{
	size_t w = 0;
	for (size_t f = 0; f < NG_FIELD_COUNT; f++)
		w += ng_fields[f].size;
	return w * NG_CHUNK_ROWS;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Field f of r set to a random non-zero value (strings: an interned one). */
static void set_field(ng_flow *r, size_t f)
{
	const ng_field *fd = &ng_fields[f];
	uint8_t *p = (uint8_t *)r + fd->offset;
	if (fd->type == NG_FT_STR) {
		char txt[16];
		int len = snprintf(txt, sizeof txt, "e%u", (unsigned)(rnd() % 40));
		uint32_t id = ng_intern(txt, (size_t)len);
		memcpy(p, &id, 4);
		return;
	}
	do {
		for (size_t k = 0; k < fd->size; k++)
			p[k] = (uint8_t)rnd();
	} while (fd->size == 1 && !p[0]);
	if (fd->type == NG_FT_ADDR && rnd() % 2) {
		memset(p, 0, 10);
		p[10] = p[11] = 0xff;
		p[15] |= 1;
	}
}

/* A record with every field random. */
static void random_flow(ng_flow *r, uint64_t start_lo, uint64_t span)
{
	memset(r, 0, sizeof *r);
	for (size_t f = 0; f < NG_FIELD_COUNT; f++)
		if (rnd() % 4)
			set_field(r, f);
	r->flow_start = start_lo + rnd() % span;
	r->flow_end = r->flow_start + rnd() % 60000;
	r->time_received = r->flow_end + rnd() % 1000;
}

/* A cheap record: a handful of fields, `tag` in packets, now and then one
 * more random field. */
static void light_flow(ng_flow *r, uint64_t start_lo, uint64_t span, uint64_t tag)
{
	memset(r, 0, sizeof *r);
	r->flow_start = start_lo + rnd() % span;
	r->flow_end = r->flow_start + rnd() % 30000;
	r->packets = tag;
	r->bytes = rnd() % 100000;
	r->dst_port = (uint16_t)rnd();
	if (rnd() % 16 == 0)
		set_field(r, rnd() % NG_FIELD_COUNT);
	if (r->flow_start < start_lo || r->flow_start >= start_lo + span)
		r->flow_start = start_lo; /* the extra field was flow_start */
	r->packets = tag;                 /* or packets */
}

static char *make_store(void)
{
	return ts_make_store("wedge");
}

/* A regular file where hour `h` (from T0) of the store's directory tree
 * goes: every segment write of that hour fails (root ignores permissions). */
static void hour_path(const char *dir, unsigned h, char *path, size_t len)
{
	time_t secs = (time_t)((T0 + h * HOUR) / 1000);
	struct tm tm;
	gmtime_r(&secs, &tm);
	snprintf(path, len, "%s/flows/%04d/%02d/%02d/%02d", dir, tm.tm_year + 1900, tm.tm_mon + 1,
	         tm.tm_mday, tm.tm_hour);
}

static void block_hour(const char *dir, unsigned h)
{
	char path[512], cmd[1200];
	hour_path(dir, h, path, sizeof path);
	snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\" && touch '%s'", path, path);
	assert_int_equal(system(cmd), 0);
}

static void unblock_hour(const char *dir, unsigned h)
{
	char path[512];
	hour_path(dir, h, path, sizeof path);
	assert_int_equal(unlink(path), 0);
}

/* Collects every scanned row back into records. */
typedef struct collect {
	ng_flow *rows;
	size_t n, cap;
	ng_colset columns;
	bool check_order; /* rows of a segment in flow_start order, one hour */
	uint64_t last_seg, last_start;
	bool any;
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
			if (!ng_colset_has(c->columns, f) && f != NG_F_FLOW_START)
				continue;
			assert_non_null(b->col[f]);
			memcpy((uint8_t *)r + ng_fields[f].offset,
			       (const uint8_t *)b->col[f] + i * ng_fields[f].size,
			       ng_fields[f].size);
		}
		if (c->check_order) {
			if (c->any && b->segment == c->last_seg) {
				assert_true(r->flow_start >= c->last_start);
				assert_int_equal(r->flow_start / HOUR, c->last_start / HOUR);
			}
			c->any = true;
			c->last_seg = b->segment;
			c->last_start = r->flow_start;
		}
	}
	c->n += b->n;
	return 0;
}

/* Same rows (as multisets) over the fields of `columns`. */
static void assert_same_rows_cols(ng_flow *want, size_t nw, ng_flow *got, size_t ng,
                                  ng_colset columns)
{
	assert_int_equal(ng, nw);
	ng_colset_add(&columns, NG_F_FLOW_START);
	for (size_t i = 0; i < nw; i++) /* compare only the scanned fields */
		for (size_t f = 0; f < NG_FIELD_COUNT; f++)
			if (!ng_colset_has(columns, f))
				memset((uint8_t *)&want[i] + ng_fields[f].offset, 0,
				       ng_fields[f].size);
	qsort(want, nw, sizeof *want, ts_cmp_flow);
	qsort(got, ng, sizeof *got, ts_cmp_flow);
	for (size_t i = 0; i < nw; i++)
		for (size_t f = 0; f < NG_FIELD_COUNT; f++) {
			const ng_field *fd = &ng_fields[f];
			if (memcmp((uint8_t *)&want[i] + fd->offset,
			           (uint8_t *)&got[i] + fd->offset, fd->size))
				fail_msg("row %zu field %s differs", i, fd->name);
		}
}

static void scan_all(const char *dir, collect *c)
{
	ng_scan_stats st;
	assert_int_equal(ng_store_scan(dir, 0, UINT64_MAX, c->columns, collect_fn, c, &st), 0);
	assert_int_equal(st.errors, 0);
}

/* Scans the store and checks that it holds exactly want[0..n) (a copy is
 * sorted; want is left as is). */
static void assert_store_holds(const char *dir, const ng_flow *want, size_t n, ng_colset columns)
{
	collect c = {.columns = columns, .check_order = true};
	scan_all(dir, &c);
	ng_flow *copy = malloc((n ? n : 1) * sizeof *copy);
	assert_non_null(copy);
	memcpy(copy, want, n * sizeof *copy);
	assert_same_rows_cols(copy, n, c.rows, c.n, columns);
	free(copy);
	free(c.rows);
}

/* Tags (packets) on disk: each at most once, and how many. */
static size_t tags_on_disk(const char *dir, size_t ntags)
{
	collect c = {.columns = NG_COLSET(NG_F_PACKETS)};
	scan_all(dir, &c);
	uint8_t *seen = calloc(ntags, 1);
	assert_non_null(seen);
	for (size_t i = 0; i < c.n; i++) {
		assert_true(c.rows[i].packets < ntags);
		if (seen[c.rows[i].packets])
			fail_msg("tag %llu stored twice", (unsigned long long)c.rows[i].packets);
		seen[c.rows[i].packets] = 1;
	}
	size_t n = c.n;
	free(seen);
	free(c.rows);
	return n;
}

static ng_store_writer *open_writer(const char *dir)
{
	char err[256];
	ng_store_writer *w = ng_store_writer_open(dir, err, sizeof err);
	assert_non_null(w);
	return w;
}

static ng_store_writer_stats stats_of(ng_store_writer *w)
{
	ng_store_writer_stats st;
	ng_store_writer_get_stats(w, &st);
	return st;
}

/* ---- failures part way, retries and appends ---------------------------- */

/* A flush whose first hours are written and a later hour fails keeps only
 * the rows of the failed hour and after; appends then mix with the kept
 * rows (a part-full kept chunk in front of new ones); every row lands once. */
static void test_failure_after_some_hours(void **state)
{
	(void)state;
	enum { N1 = 20000, N2 = 12000, N = N1 + N2 };
	char *dir = make_store();
	ng_store_writer *w = open_writer(dir);
	ng_flow *in = malloc(N * sizeof *in);
	assert_non_null(in);
	for (size_t i = 0; i < N; i++) {
		random_flow(&in[i], T0, 3 * HOUR);
		in[i].packets = i;
	}
	size_t early1 = 0, early_all = 0;
	for (size_t i = 0; i < N; i++)
		if (in[i].flow_start < T0 + 2 * HOUR) {
			early_all++;
			early1 += i < N1;
		}
	block_hour(dir, 2);
	assert_true(ng_store_writer_append(w, in, N1) >= 0);
	assert_int_equal(ng_store_writer_flush(w), -1);
	ng_store_writer_stats st = stats_of(w);
	assert_int_equal(st.rows, early1); /* hours 0 and 1 are durable */
	assert_int_equal(st.errors, 1);
	assert_int_equal(tags_on_disk(dir, N), early1);
	/* appends of odd sizes on top of the kept, part-full chunk */
	for (size_t i = N1; i < N;) {
		size_t k = 1 + rnd() % 7000;
		k = k < N - i ? k : N - i;
		assert_true(ng_store_writer_append(w, in + i, k) >= 0);
		i += k;
	}
	assert_int_equal(ng_store_writer_flush(w), -1); /* hour 2 still fails */
	st = stats_of(w);
	assert_int_equal(st.rows, early_all);
	assert_int_equal(st.errors, 2);
	assert_int_equal(tags_on_disk(dir, N), early_all);
	unblock_hour(dir, 2);
	assert_int_equal(ng_store_writer_flush(w), 0);
	st = stats_of(w);
	assert_int_equal(st.rows, N);
	assert_int_equal(st.dropped, 0);
	assert_int_equal(ng_store_writer_close(w), 0);
	assert_store_holds(dir, in, N, ng_colset_all());
	free(in);
	ts_rm_rf(dir);
	free(dir);
}

/*
 * Random sequences of appends (1 row to several chunks, one hour or many),
 * flushes, and hours that fail and come back, over more than 16 chunks so
 * a flush's first group may succeed and a later one fail.  After every
 * flush the store holds each tag at most once and as many rows as
 * stats.rows says; at the end, every row exactly once.
 */
static void test_random_failures_and_appends(void **state)
{
	(void)state;
	enum { N = 80000, HOURS = 64 };
	rng_state = 0x5DEECE66Dull;
	char *dir = make_store();
	ng_store_writer *w = open_writer(dir);
	ng_flow *in = malloc(N * sizeof *in);
	assert_non_null(in);
	static const size_t sizes[] = {1, 2, 63, 64, 65, 1000, 3000, 5000, 16383, 16384, 16385};
	bool blocked[HOURS] = {0};
	unsigned seen_hours = 0; /* hours [0, seen_hours) have had rows */
	size_t i = 0, failures = 0;
	for (unsigned step = 0; i < N; step++) {
		/* the traffic's window of hours moves on; a new hour fails to
		 * write half the time until it is unblocked */
		unsigned lo = step / 2 < HOURS - 2 ? step / 2 : HOURS - 2;
		while (seen_hours < lo + 2) {
			if (rnd() % 2) {
				block_hour(dir, seen_hours);
				blocked[seen_hours] = true;
			}
			seen_hours++;
		}
		size_t k = sizes[rnd() % (sizeof sizes / sizeof *sizes)];
		k = k < N - i ? k : N - i;
		bool one_hour = rnd() % 2;
		unsigned h = lo + (unsigned)(rnd() % 2);
		for (size_t j = i; j < i + k; j++) {
			light_flow(&in[j], one_hour ? T0 + h * HOUR : T0 + lo * HOUR,
			           one_hour ? HOUR : 2 * HOUR, j);
			if (rnd() % 50 == 0) /* a late row of an earlier hour */
				in[j].flow_start = T0 + rnd() % (seen_hours * HOUR);
		}
		assert_true(ng_store_writer_append(w, in + i, k) >= 0);
		i += k;
		for (unsigned b = 0; b < seen_hours; b++)
			if (blocked[b] && rnd() % 4 == 0) {
				unblock_hour(dir, b);
				blocked[b] = false;
			}
		if (rnd() % 3) {
			int rc = ng_store_writer_flush(w);
			failures += rc != 0;
			if (rnd() % 3 == 0) {
				ng_store_writer_stats st = stats_of(w);
				assert_int_equal(tags_on_disk(dir, N), st.rows);
				assert_int_equal(st.dropped, 0);
			}
		}
	}
	for (unsigned b = 0; b < seen_hours; b++)
		if (blocked[b])
			unblock_hour(dir, b);
	assert_int_equal(ng_store_writer_flush(w), 0);
	ng_store_writer_stats st = stats_of(w);
	assert_int_equal(st.rows, N);
	assert_int_equal(st.dropped, 0);
	assert_int_equal(st.errors, failures);
	assert_true(failures >= 3);
	assert_int_equal(ng_store_writer_close(w), 0);
	assert_store_holds(dir, in, N, ng_colset_all());
	free(in);
	ts_rm_rf(dir);
	free(dir);
}

/* Counts the tags (packets) scanned, without keeping rows. */
typedef struct tag_count {
	size_t *count, max, n;
	bool check_order; /* rows of a segment in flow_start order, one hour */
	bool any;
	uint64_t last_seg, last_start;
} tag_count;

static int count_fn(const ng_column_batch *b, void *arg)
{
	tag_count *t = arg;
	const uint64_t *p = b->col[NG_F_PACKETS], *fs = b->col[NG_F_FLOW_START];
	for (size_t i = 0; i < b->n; i++) {
		assert_true(p[i] <= t->max);
		t->count[p[i]]++;
		if (t->check_order) {
			if (t->any && b->segment == t->last_seg &&
			    (fs[i] < t->last_start || fs[i] / HOUR != t->last_start / HOUR))
				fail_msg("segment %llu: flow_start %llu after %llu",
				         (unsigned long long)b->segment, (unsigned long long)fs[i],
				         (unsigned long long)t->last_start);
			t->any = true;
			t->last_seg = b->segment;
			t->last_start = fs[i];
		}
	}
	t->n += b->n;
	return 0;
}

/*
 * A flush of more than 16 chunks writes them 16 at a time: the first group
 * (one hour) is written, the next (another hour, failing) kept; appends
 * follow; a second flush fails at its first group (so its later chunks are
 * not tried); then all is written, each row once.  And the kept rows come
 * first: the next flush writes them, not only the newer ones.
 */
static void test_failure_in_later_group(void **state)
{
	(void)state;
	enum { GROUP = 16 << 14, N1 = GROUP + 5000, N2 = GROUP + 3000, N = N1 + N2 };
	char *dir = make_store();
	ng_store_writer *w = open_writer(dir);
	ng_flow *in = calloc(N, sizeof *in);
	assert_non_null(in);
	for (size_t i = 0; i < N; i++) {
		/* first GROUP rows: hour 0; then hour 1 (blocked); the second
		 * append: hours 1 and 2 */
		unsigned h = i < GROUP ? 0 : i < N1 ? 1 : 1 + (unsigned)(rnd() % 2);
		in[i].flow_start = T0 + h * HOUR + rnd() % HOUR;
		in[i].packets = i;
		in[i].dst_port = (uint16_t)(i % 7 ? 0 : i);
	}
	block_hour(dir, 1);
	assert_true(ng_store_writer_append(w, in, N1) >= 0);
	assert_int_equal(ng_store_writer_flush(w), -1);
	ng_store_writer_stats st = stats_of(w);
	assert_int_equal(st.rows, GROUP); /* the first group: written */
	assert_int_equal(st.errors, 1);
	assert_true(ng_store_writer_append(w, in + N1, N2) >= 0);
	assert_int_equal(ng_store_writer_flush(w), -1);
	st = stats_of(w);
	assert_int_equal(st.rows, GROUP);
	assert_int_equal(st.errors, 2);
	unblock_hour(dir, 1);
	assert_int_equal(ng_store_writer_flush(w), 0);
	st = stats_of(w);
	assert_int_equal(st.rows, N);
	assert_int_equal(st.dropped, 0);
	assert_int_equal(ng_store_writer_close(w), 0);
	tag_count tc = {.max = N, .count = calloc(N + 1, sizeof(size_t)), .check_order = true};
	assert_non_null(tc.count);
	assert_int_equal(
	    ng_store_scan(dir, 0, UINT64_MAX, ng_colset_of(NG_F_PACKETS), count_fn, &tc, NULL), 0);
	assert_int_equal(tc.n, N);
	for (size_t t = 0; t < N; t++)
		if (tc.count[t] != 1)
			fail_msg("tag %zu stored %zu times", t, tc.count[t]);
	free(tc.count);
	free(in);
	ts_rm_rf(dir);
	free(dir);
}

/* ---- the buffer limit ---------------------------------------------------- */

/*
 * While flushes fail, the buffer takes 2^22 rows and no more: an append
 * that would pass the limit is refused whole and counted in dropped (an
 * append that fits exactly is taken); a failed flush keeps its rows, so
 * the buffer stays full; once writes work again everything is stored.
 */
static void test_buffer_limit_and_dropped(void **state)
{
	(void)state;
	enum { LIMIT = 1 << 22, BATCH = 1 << 14, DUE = 1 << 18 };
	char *dir = make_store();
	ng_store_writer *w = open_writer(dir);
	ng_flow *in = calloc(2 * BATCH, sizeof *in);
	assert_non_null(in);
	for (size_t i = 0; i < 2 * BATCH; i++) {
		in[i].flow_start = T0 + rnd() % HOUR;
		in[i].packets = 1 + i;
	}
	char path[512];
	snprintf(path, sizeof path, "%s/flows/2025", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);

	size_t n = 0, signals = 0, nb = 0;
	while (n + BATCH < LIMIT) {
		int rc = ng_store_writer_append(w, in, BATCH);
		assert_true(rc == 0 || rc == 1);
		signals += rc == 1;
		n += BATCH;
		nb++;
	}
	assert_int_equal(signals, 1); /* crossing 2^18 once */
	size_t rest = LIMIT - n;      /* what fills the buffer up to exactly the limit */
	assert_true(rest >= 1 && rest < 2 * BATCH);
	assert_int_equal(ng_store_writer_append(w, in, rest + 1), -1); /* one too many */
	ng_store_writer_stats st = stats_of(w);
	assert_int_equal(st.dropped, rest + 1);
	assert_int_equal(ng_store_writer_append(w, in, rest), 0); /* exactly the limit */
	n += rest;
	assert_int_equal(ng_store_writer_append(w, in, 1), -1);
	assert_int_equal(ng_store_writer_append(w, in, 0), 0); /* nothing: not refused */
	st = stats_of(w);
	assert_int_equal(st.dropped, rest + 2);
	assert_true(ng_store_writer_due(w, ng_now_ms()));

	assert_int_equal(ng_store_writer_flush(w), -1);    /* keeps its rows: still full */
	assert_false(ng_store_writer_due(w, ng_now_ms())); /* not before the retry delay */
	assert_true(ng_store_writer_due(w, ng_now_ms() + 1000));
	assert_int_equal(ng_store_writer_append(w, in, 1), -1);
	st = stats_of(w);
	assert_int_equal(st.dropped, rest + 3);
	assert_int_equal(st.errors, 1);
	assert_int_equal(st.rows, 0);

	assert_int_equal(unlink(path), 0);
	assert_int_equal(ng_store_writer_flush(w), 0);
	st = stats_of(w);
	assert_int_equal(st.rows, LIMIT);
	assert_int_equal(st.dropped, rest + 3);
	assert_int_equal(ng_store_writer_append(w, in, 1), 0); /* room again */
	assert_int_equal(ng_store_writer_flush(w), 0);
	st = stats_of(w);
	assert_int_equal(st.rows, LIMIT + 1); /* the refused appends took no row */
	assert_int_equal(st.segments, 17);    /* 16 groups of 2^18, then 1 row */
	assert_int_equal(st.dropped, rest + 3);
	assert_int_equal(ng_store_writer_close(w), 0);
	free(in);
	ts_rm_rf(dir);
	free(dir);
}

/* ---- column chunks: values in a few rows only ---------------------------- */

/*
 * Every field is non-zero in a single row of the buffer, at a position on
 * an edge of the append's 64-row blocks or of a chunk (first, last, next);
 * the rows between stay zero.  Appended in pieces that cut chunks at odd
 * places, then in one piece; each way the store holds exactly the input.
 */
static void test_field_in_one_row(void **state)
{
	(void)state;
	enum { N = 2 * 16384 + 300 };
	static const size_t at[] = {0,     1,     63,    64,    65,    127,   128,   8191, 16320,
	                            16383, 16384, 16385, 16447, 16448, 32767, 32768, N - 1};
	ng_flow *in = calloc(N, sizeof *in);
	assert_non_null(in);
	for (size_t i = 0; i < N; i++)
		in[i].flow_start = T0 + HOUR / 2 + (rnd() % 1000) * (i % 3 == 0); /* mostly equal */
	size_t f = 0;
	for (size_t rep = 0; f < NG_FIELD_COUNT * 2; rep++)
		for (size_t a = 0; a < sizeof at / sizeof *at && f < NG_FIELD_COUNT * 2; a++, f++) {
			size_t fld = f % NG_FIELD_COUNT, row = (at[a] + rep * 7) % N;
			if (fld == NG_F_FLOW_START)
				continue;
			set_field(&in[row], fld);
		}
	for (int way = 0; way < 2; way++) {
		char *dir = make_store();
		ng_store_writer *w = open_writer(dir);
		if (way == 0) {
			static const size_t piece[] = {1, 62, 2, 16000, 400, 16384, 1, 63};
			size_t i = 0;
			for (size_t p = 0; i < N; p++) {
				size_t k = piece[p % (sizeof piece / sizeof *piece)];
				k = k < N - i ? k : N - i;
				assert_true(ng_store_writer_append(w, in + i, k) >= 0);
				i += k;
			}
		} else {
			assert_true(ng_store_writer_append(w, in, N) >= 0);
		}
		assert_int_equal(ng_store_writer_close(w), 0);
		assert_store_holds(dir, in, N, ng_colset_all());
		ts_rm_rf(dir);
		free(dir);
	}
	free(in);
}

/* A pooled chunk is reused after a flush: the values of its previous rows
 * must not show through in columns the next rows leave zero. */
static void test_reused_chunks_start_zero(void **state)
{
	(void)state;
	enum { N = 20000 };
	char *dir = make_store();
	ng_store_writer *w = open_writer(dir);
	ng_flow *a = calloc(N, sizeof *a), *b = calloc(N, sizeof *b),
	        *all = calloc(2 * N, sizeof *all);
	assert_true(a && b && all);
	for (size_t i = 0; i < N; i++) {
		random_flow(&a[i], T0, HOUR);          /* dense */
		light_flow(&b[i], T0 + HOUR, HOUR, i); /* sparse, another column order */
		b[i].src_city = 0;
		if (i == N - 1)
			b[i].src_city = ng_intern("last", 4);
	}
	assert_true(ng_store_writer_append(w, a, N) >= 0);
	assert_int_equal(ng_store_writer_flush(w), 0);
	assert_true(ng_store_writer_append(w, b, N) >= 0);
	assert_int_equal(ng_store_writer_close(w), 0);
	memcpy(all, a, N * sizeof *a);
	memcpy(all + N, b, N * sizeof *b);
	assert_store_holds(dir, all, 2 * N, ng_colset_all());
	free(a);
	free(b);
	free(all);
	ts_rm_rf(dir);
	free(dir);
}

/* ---- flow_start ---------------------------------------------------------- */

/* Rows without a start time (zero in every row: the column is never
 * written) and rows mixing zero with real times (a 41-bit range: four
 * radix passes), in descending order. */
static void test_flow_start_zero(void **state)
{
	(void)state;
	enum { N = 3000 };
	ng_flow *in = calloc(N, sizeof *in);
	assert_non_null(in);
	for (int mix = 0; mix < 3; mix++) {
		for (size_t i = 0; i < N; i++) {
			random_flow(&in[i], T0, 2 * HOUR);
			in[i].packets = i;
			if (mix == 0 || (mix == 1 && i % 3 == 0))
				in[i].flow_start = 0;
			if (mix == 2) /* descending: the sort must reverse it */
				in[i].flow_start = T0 + (N - i) * 997;
			if (mix == 0 && i % 2)
				in[i].flow_end = 0;
		}
		char *dir = make_store();
		ng_store_writer *w = open_writer(dir);
		assert_true(ng_store_writer_append(w, in, N / 2) >= 0);
		assert_int_equal(ng_store_writer_flush(w), 0);
		assert_true(ng_store_writer_append(w, in + N / 2, N - N / 2) >= 0);
		assert_int_equal(stats_of(w).rows, N / 2);
		assert_int_equal(ng_store_writer_close(w), 0);
		assert_store_holds(dir, in, N, ng_colset_all());
		ts_rm_rf(dir);
		free(dir);
	}
	free(in);
}

/* ---- big flushes --------------------------------------------------------- */

/* One flush of more than 2^20 rows (MAX_SEGMENT_ROWS; five groups of 16
 * chunks) over five hours in random order: every row once, each
 * segment's rows in flow_start order and inside one hour. */
static void test_flush_over_2_20_rows(void **state)
{
	(void)state;
	enum { N = (1 << 20) + 40000, HOURS = 5, BATCH = 50000 };
	char *dir = make_store();
	ng_store_writer *w = open_writer(dir);
	ng_flow *in = malloc(BATCH * sizeof *in);
	assert_non_null(in);
	for (size_t i = 0; i < N; i += BATCH) {
		size_t k = N - i < BATCH ? N - i : BATCH;
		for (size_t j = 0; j < k; j++) {
			memset(&in[j], 0, sizeof in[j]);
			in[j].flow_start = T0 + rnd() % (HOURS * HOUR);
			in[j].packets = i + j;
		}
		assert_true(ng_store_writer_append(w, in, k) >= 0);
	}
	assert_int_equal(ng_store_writer_flush(w), 0);
	ng_store_writer_stats st = stats_of(w);
	assert_int_equal(st.rows, N);
	assert_true(st.segments >= HOURS);
	assert_int_equal(ng_store_writer_close(w), 0);

	tag_count tc = {.max = N, .count = calloc(N + 1, sizeof(size_t)), .check_order = true};
	assert_non_null(tc.count);
	ng_scan_stats sst;
	assert_int_equal(
	    ng_store_scan(dir, 0, UINT64_MAX, ng_colset_of(NG_F_PACKETS), count_fn, &tc, &sst), 0);
	assert_int_equal(sst.errors, 0);
	assert_int_equal(tc.n, N);
	for (size_t t = 0; t < N; t++)
		if (tc.count[t] != 1)
			fail_msg("tag %zu stored %zu times", t, tc.count[t]);
	free(tc.count);
	free(in);
	ts_rm_rf(dir);
	free(dir);
}

/* ---- DIFF columns whose reference is zero -------------------------------- */

/*
 * flow_end is stored as a difference from flow_start, time_received from
 * flow_end, bytes_raw from bytes, packets_raw from packets.  Each segment
 * below has a reference column that is all zero (never written: NULL to
 * the encoder; or written for another hour's rows only: a zero column),
 * constant, or equal to the dependent column, with the dependent column
 * varied, zero or constant.
 */
static void test_diff_with_zero_references(void **state)
{
	(void)state;
	enum { N = 3000, CASES = 9 };
	ng_flow *in = calloc(N * CASES, sizeof *in);
	assert_non_null(in);
	char *dir = make_store();
	ng_store_writer *w = open_writer(dir);
	for (size_t cs = 0; cs < CASES; cs++) {
		ng_flow *r = in + cs * N;
		for (size_t i = 0; i < N; i++) {
			memset(&r[i], 0, sizeof r[i]);
			r[i].flow_start = T0 + rnd() % HOUR;
			r[i].packets = cs * N + i;
			switch (cs) {
			case 0: /* no flow_start; end and receive times */
				r[i].flow_start = 0;
				r[i].flow_end = T0 + rnd() % HOUR;
				r[i].time_received = r[i].flow_end + rnd() % 500;
				break;
			case 1: /* no flow_end; receive times */
				r[i].time_received = r[i].flow_start + rnd() % 5000;
				break;
			case 2: /* constant flow_end; varied receive times */
				r[i].flow_end = T0 + 5;
				r[i].time_received = T0 + rnd() % HOUR;
				break;
			case 3: /* raw counters without scaled ones */
				r[i].packets = 0;
				r[i].bytes_raw = rnd() % 100000;
				r[i].packets_raw = cs * N + i;
				break;
			case 4: /* raw = scaled (unsampled), except one row */
				r[i].bytes = 1 + rnd() % 100000;
				r[i].bytes_raw = i == N / 2 ? r[i].bytes + 1 : r[i].bytes;
				r[i].packets_raw = r[i].packets;
				break;
			case 5: /* scaled without raw */ r[i].bytes = rnd(); break;
			case 6: /* flow_end before flow_start, far apart (negative differences) */
				r[i].flow_end = r[i].flow_start - rnd() % T0;
				r[i].time_received = rnd() % 2 ? 0 : UINT64_MAX - rnd() % 1000;
				break;
			case 7: /* flow_end zero in this hour, set in the next: a zero column */
				r[i].flow_start = T0 + 7 * HOUR + rnd() % (2 * HOUR);
				if (r[i].flow_start >= T0 + 8 * HOUR)
					r[i].flow_end = r[i].flow_start + 10;
				r[i].time_received = r[i].flow_start + rnd() % 100;
				r[i].bytes_raw = r[i].flow_start < T0 + 8 * HOUR ? 0 : 7;
				r[i].bytes = r[i].flow_start < T0 + 8 * HOUR ? 0 : rnd() % 9;
				break;
			default: /* one row set in each column */
				if (i == N - 1) {
					r[i].flow_end = 1;
					r[i].time_received = 2;
					r[i].bytes_raw = 3;
					r[i].packets_raw = 4;
				}
				break;
			}
		}
		assert_true(ng_store_writer_append(w, r, N) >= 0);
		assert_int_equal(ng_store_writer_flush(w), 0);
	}
	assert_int_equal(ng_store_writer_close(w), 0);
	assert_store_holds(dir, in, N * CASES, ng_colset_all());
	free(in);
	ts_rm_rf(dir);
	free(dir);
}

/* ---- dictionaries -------------------------------------------------------- */

/* String columns of more distinct strings than the dictionary table's
 * first sizes (512 and 1024 entries: it is rebuilt twice as big), strings
 * coming back in any order after their first use, next to columns of a
 * few strings, over two segments from one encoder. */
static void test_dict_many_strings(void **state)
{
	(void)state;
	enum { N = 12000, K1 = 3000, K2 = 600 };
	uint32_t *ids1 = malloc(K1 * sizeof *ids1), *ids2 = malloc(K2 * sizeof *ids2);
	assert_true(ids1 && ids2);
	for (size_t k = 0; k < K1; k++) {
		char txt[64];
		int len = snprintf(txt, sizeof txt, "city-%zu-%llx", k, (unsigned long long)rnd());
		ids1[k] = ng_intern(txt, (size_t)len);
	}
	for (size_t k = 0; k < K2; k++) {
		char txt[300];
		size_t len = (size_t)snprintf(txt, sizeof txt, "svc%zu:", k);
		while (len < 255 && rnd() % 8) /* up to the longest string */
			txt[len++] = (char)('a' + rnd() % 26);
		ids2[k] = ng_intern(txt, len);
	}
	ng_flow *in = calloc(N, sizeof *in);
	assert_non_null(in);
	for (size_t i = 0; i < N; i++) {
		in[i].flow_start = T0 + (i < N / 2 ? 0 : HOUR) + rnd() % HOUR;
		in[i].packets = i;
		/* first half: new strings in order, later ones random; second
		 * half (another segment): a few of them */
		in[i].src_city = i < K1 ? ids1[i] : ids1[rnd() % K1];
		if (i >= N / 2)
			in[i].src_city = ids1[rnd() % 700];
		in[i].service = ids2[rnd() % K2];
		in[i].dst_city = ids1[rnd() % 3];
		in[i].src_as_name = rnd() % 5 ? 0 : ids2[rnd() % 1100 % K2];
	}
	char *dir = make_store();
	ng_store_writer *w = open_writer(dir);
	assert_true(ng_store_writer_append(w, in, N) >= 0);
	assert_int_equal(ng_store_writer_close(w), 0);
	assert_store_holds(dir, in, N, ng_colset_all());
	free(in);
	free(ids1);
	free(ids2);
	ts_rm_rf(dir);
	free(dir);
}

/* ---- ng_chunk_copy_row --------------------------------------------------- */

/* Row r of chunk c as a record: columns of c->mask up to filled[f], zero
 * beyond (chunk.h). */
static void chunk_row(const ng_chunk *c, size_t r, ng_flow *out)
{
	memset(out, 0, sizeof *out);
	for (size_t f = 0; f < NG_FIELD_COUNT; f++) {
		if (!ng_colset_has(c->mask, f) || r >= c->filled[f])
			continue;
		assert_non_null(c->col[f]);
		memcpy((uint8_t *)out + ng_fields[f].offset, c->col[f] + r * ng_fields[f].size,
		       ng_fields[f].size);
	}
}

static void assert_flow_equal(const ng_flow *a, const ng_flow *b, size_t row)
{
	for (size_t f = 0; f < NG_FIELD_COUNT; f++)
		if (memcmp((const uint8_t *)a + ng_fields[f].offset,
		           (const uint8_t *)b + ng_fields[f].offset, ng_fields[f].size))
			fail_msg("row %zu field %s differs", row, ng_fields[f].name);
}

/*
 * ng_chunk_put of sparse rows, then ng_chunk_copy_row of a shuffled
 * selection into a chunk that already holds other rows (with columns of
 * its own): both chunks read back as the input, rows copied with every
 * column of the mask; a full chunk refuses a row.
 */
static void test_chunk_copy_row(void **state)
{
	(void)state;
	enum { NS = 5000, ND = 700 };
	ng_flow *src_rows = calloc(NS, sizeof *src_rows), *dst_rows = calloc(ND, sizeof *dst_rows);
	assert_true(src_rows && dst_rows);
	for (size_t i = 0; i < NS; i++) {
		memset(&src_rows[i], 0, sizeof src_rows[i]);
		src_rows[i].flow_start = T0 + i;
		if (i % 97 == 0)
			random_flow(&src_rows[i], T0, HOUR);
		else if (i % 5 == 0)
			set_field(&src_rows[i], rnd() % NG_FIELD_COUNT);
	}
	for (size_t i = 0; i < ND; i++) {
		memset(&dst_rows[i], 0, sizeof dst_rows[i]);
		dst_rows[i].flow_start = 5;
		if (i == ND - 1)
			dst_rows[i].src_mac[0] = 9;
		dst_rows[i].dst_port = (uint16_t)(i * 3);
	}
	ng_chunk *src = ng_chunk_new(), *dst = ng_chunk_new();
	assert_true(src && dst);
	for (int round = 0; round < 2; round++) { /* the second on reset chunks */
		ng_chunk_reset(src);
		ng_chunk_reset(dst);
		for (size_t i = 0; i < NS;) {
			size_t k = 1 + rnd() % 300;
			k = k < NS - i ? k : NS - i;
			assert_int_equal(ng_chunk_put(src, src_rows + i, k), k);
			i += k;
		}
		assert_int_equal(src->n, NS);
		assert_int_equal(ng_chunk_put(dst, dst_rows, ND), ND);
		for (size_t i = 0; i < NS; i++) { /* lazily zero: still the input */
			ng_flow got;
			chunk_row(src, i, &got);
			assert_flow_equal(&got, &src_rows[i], i);
		}
		ng_colset mask = ng_colset_union(src->mask, dst->mask);
		ng_colset_add(&mask, NG_F_FLOW_START);
		ng_chunk_pad(src, mask);
		size_t pick[NS / 2];
		for (size_t j = 0; j < NS / 2; j++)
			pick[j] = rnd() % NS;
		for (size_t j = 0; j < NS / 2; j++)
			assert_int_equal(ng_chunk_copy_row(dst, src, pick[j], mask), 0);
		assert_int_equal(dst->n, ND + NS / 2);
		for (size_t i = 0; i < dst->n; i++) {
			ng_flow got;
			chunk_row(dst, i, &got);
			assert_flow_equal(&got, i < ND ? &dst_rows[i] : &src_rows[pick[i - ND]], i);
		}
		ng_chunk_pad(dst, dst->mask);
		for (size_t f = 0; f < NG_FIELD_COUNT; f++)
			if (ng_colset_has(dst->mask, f))
				assert_int_equal(dst->filled[f], dst->n);
	}
	/* a full chunk: copy_row refuses, put takes nothing */
	ng_chunk_reset(dst);
	const ng_colset start = ng_colset_of(NG_F_FLOW_START);
	ng_chunk_pad(src, start);
	for (size_t i = 0; i < NG_CHUNK_ROWS; i++)
		assert_int_equal(ng_chunk_copy_row(dst, src, i % NS, start), 0);
	assert_int_equal(ng_chunk_copy_row(dst, src, 0, start), -1);
	assert_int_equal(ng_chunk_put(dst, src_rows, 1), 0);
	assert_int_equal(dst->n, NG_CHUNK_ROWS);
	ng_chunk_free(src);
	ng_chunk_free(dst);
	ng_chunk_free(NULL);
	free(src_rows);
	free(dst_rows);
}

/* ---- appends racing flushes that fail ------------------------------------ */

typedef struct race {
	ng_store_writer *w;
	const ng_flow *in;
	size_t n;
	size_t appended; /* published progress of the appender (atomic) */
	int stop;        /* atomic */
	int flushes, failures;
} race;

static void *race_appender(void *p)
{
	race *r = p;
	uint64_t s = 12345;
	for (size_t i = 0; i < r->n;) {
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		size_t k = s % 5 == 0 ? 1 + s % 20000 : 1 + s % 700;
		k = k < r->n - i ? k : r->n - i;
		int rc = ng_store_writer_append(r->w, r->in + i, k);
		assert_true(rc >= 0);
		i += k;
		__atomic_store_n(&r->appended, i, __ATOMIC_RELEASE);
		if (s % 16 == 0)
			usleep(200);
	}
	return NULL;
}

static void *race_flusher(void *p)
{
	race *r = p;
	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		int rc = ng_store_writer_flush(r->w);
		r->flushes++;
		r->failures += rc != 0;
		usleep(500);
	}
	return NULL;
}

static void wait_appended(race *r, size_t n)
{
	while (__atomic_load_n(&r->appended, __ATOMIC_ACQUIRE) < n)
		usleep(500);
}

/*
 * One thread appends while another flushes in a loop, and hours of the
 * rows fail to write until they are unblocked one by one: flushes fail
 * part way (some hours written, the rest kept) while appends go on.  Every
 * row is stored exactly once.
 */
static void test_race_with_failures(void **state)
{
	(void)state;
	enum { N = 80000, HOURS = 8 };
	char *dir = make_store();
	ng_store_writer *w = open_writer(dir);
	ng_flow *in = malloc(N * sizeof *in);
	assert_non_null(in);
	for (size_t i = 0; i < N; i++)
		light_flow(&in[i], T0, HOURS * HOUR, i);
	for (unsigned h = 1; h < HOURS; h += 2)
		block_hour(dir, h);
	race r = {.w = w, .in = in, .n = N};
	pthread_t ta, tf;
	assert_int_equal(pthread_create(&tf, NULL, race_flusher, &r), 0);
	assert_int_equal(pthread_create(&ta, NULL, race_appender, &r), 0);
	for (unsigned h = 1; h < HOURS; h += 2) {
		wait_appended(&r, N / 4 * (h / 2 + 1));
		usleep(3000);
		unblock_hour(dir, h);
	}
	pthread_join(ta, NULL);
	usleep(5000);
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
	pthread_join(tf, NULL);
	assert_int_equal(ng_store_writer_flush(w), 0);
	ng_store_writer_stats st = stats_of(w);
	assert_int_equal(st.rows, N);
	assert_int_equal(st.dropped, 0);
	assert_int_equal(st.errors, (uint64_t)r.failures);
	assert_int_equal(ng_store_writer_close(w), 0);
	assert_int_equal(tags_on_disk(dir, N), N);
	assert_store_holds(dir, in, N, ng_colset_all());
	free(in);
	ts_rm_rf(dir);
	free(dir);
}

/* ---- out of memory and close ------------------------------------------- */

/*
 * No memory for a new chunk: the append is refused whole and counted in
 * dropped, the rows before it stay; a failed flush that cannot get chunks
 * to keep its rows in counts them as dropped (and they are not written
 * later); close with a flush that fails frees everything (ASan: no leak).
 */
/* A flush whose sort arrays cannot be had fails before sorting: its rows
 * stay buffered as they were, and the next flush stores each exactly once
 * (it used to copy them through an order array that was never filled). */
static void test_sort_arrays_out_of_memory(void **state)
{
	(void)state;
	enum { N = 20000 };
	char *dir = make_store();
	ng_store_writer *w = open_writer(dir);
	ng_flow *in = calloc(N, sizeof *in);
	assert_non_null(in);
	for (size_t i = 0; i < N; i++)
		light_flow(&in[i], T0, 3 * HOUR, i);
	assert_int_equal(ng_store_writer_append(w, in, N), 0);
	fail_size = sort_keys_bytes();
	fail_left = 1;
	assert_int_equal(ng_store_writer_flush(w), -1);
	assert_int_equal(fail_left, 0); /* the failure was the sort arrays' */
	ng_store_writer_stats st = stats_of(w);
	assert_int_equal(st.errors, 1);
	assert_int_equal(st.dropped, 0);
	assert_int_equal(st.rows, 0);
	assert_int_equal(ng_store_writer_flush(w), 0);
	assert_int_equal(stats_of(w).rows, N);
	assert_int_equal(ng_store_writer_close(w), 0);
	assert_int_equal(tags_on_disk(dir, N), N);
	free(in);
	ts_rm_rf(dir);
	free(dir);
}

/* RSS of this process, bytes (/proc/self/statm). */
static size_t rss_bytes(void)
{
	unsigned long pages = 0, res = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%lu %lu", &pages, &res), 2);
	fclose(f);
	return (size_t)res * (size_t)sysconf(_SC_PAGESIZE);
}

/*
 * A burst (a flush that fell behind: 40 chunks buffered) leaves the pool
 * with 40 chunks; once two pool windows have passed with one chunk in use,
 * a flush frees all but what that use needs, and the memory goes back to
 * the kernel (RSS falls by at least 30 chunks' touched pages).  Before
 * the pool was trimmed, nothing was ever freed (bench/soak's restarted
 * collector kept a load spike's 140 MiB).
 */
static void test_pool_gives_back(void **state)
{
	(void)state;
	enum { BURST = 40 * NG_CHUNK_ROWS };
	char *dir = make_store();
	ng_store_writer *w = open_writer(dir);
	ng_flow *in = calloc(BURST, sizeof *in);
	assert_non_null(in);
	for (size_t i = 0; i < BURST; i++)
		light_flow(&in[i], T0, HOUR, i);
	assert_int_equal(ng_store_writer_append(w, in, BURST), 1); /* due */
	while (stats_of(w).rows < BURST)
		assert_int_equal(ng_store_writer_flush(w), 0);
	assert_int_equal(stats_of(w).chunks_freed, 0); /* the peak is recent */
	ng_store_writer_set_pool_window(w, 100);       /* from now on: 100 ms windows */
	size_t before = rss_bytes();
	for (int round = 0; round < 3; round++) { /* two windows and more */
		usleep(120 * 1000);
		assert_true(ng_store_writer_append(w, in, 1000) >= 0);
		assert_int_equal(ng_store_writer_flush(w), 0);
	}
	ng_store_writer_stats st = stats_of(w);
	assert_true(st.chunks_freed >= 38);
	assert_true(st.chunks_freed <= 40);
	/* each chunk touched 16384 rows of flow_start, flow_end, packets,
	 * bytes, dst_port: 30 chunks x 16384 x 34 bytes at least */
	size_t after = rss_bytes();
	assert_true(before > after);
	assert_true(before - after >= (size_t)30 * NG_CHUNK_ROWS * 34);
	assert_int_equal(ng_store_writer_close(w), 0);
	assert_int_equal(st.rows, BURST + 3000);
	free(in);
	ts_rm_rf(dir);
	free(dir);
}

static void test_out_of_memory_and_close(void **state)
{
	(void)state;
	enum { N = 20000 };
	/* a chunk's size is not one of the sort arrays' or permuted
	 * columns' (2^19 rows × 1, 2, 4, 8 or 16 bytes, 2 MiB rounded) */
	for (size_t sz = 1; sz <= 16; sz *= 2)
		assert_true(chunk_bytes() != ((((size_t)sz << 19) + ((size_t)2 << 20) - 1) &
		                              ~(((size_t)2 << 20) - 1)));
	char *dir = make_store();
	ng_store_writer *w = open_writer(dir);
	ng_flow *in = calloc(N, sizeof *in);
	assert_non_null(in);
	for (size_t i = 0; i < N; i++)
		light_flow(&in[i], T0, HOUR, i);
	assert_int_equal(ng_store_writer_append(w, in, 16000), 0); /* one chunk */
	fail_size = chunk_bytes();
	fail_left = 1;
	assert_int_equal(ng_store_writer_append(w, in + 16000, 1000), -1); /* needs a 2nd chunk */
	fail_left = 0;
	ng_store_writer_stats st = stats_of(w);
	assert_int_equal(st.dropped, 1000);
	assert_int_equal(ng_store_writer_append(w, in + 17000, 300), 0); /* fits the first */
	assert_int_equal(ng_store_writer_flush(w), 0);
	st = stats_of(w);
	assert_int_equal(st.rows, 16300);
	assert_int_equal(tags_on_disk(dir, N), 16300);

	/* a flush that fails before writing anything keeps its own chunks:
	 * no new chunk is needed, so even with none to be had nothing is lost */
	char *dir2 = make_store();
	ng_store_writer *w2 = open_writer(dir2);
	assert_int_equal(ng_store_writer_append(w2, in, 500), 0);
	char path[512];
	snprintf(path, sizeof path, "%s/flows/2025", dir2);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
	fail_size = chunk_bytes();
	fail_left = 1;
	assert_int_equal(ng_store_writer_flush(w2), -1);
	fail_left = 0;
	st = stats_of(w2);
	assert_int_equal(st.errors, 1);
	assert_int_equal(st.dropped, 0);
	assert_true(ng_store_writer_due(w2, ng_now_ms() + 60000)); /* kept */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(ng_store_writer_flush(w2), 0);
	assert_int_equal(stats_of(w2).rows, 500);
	assert_int_equal(tags_on_disk(dir2, N), 500);

	assert_int_equal(ng_store_writer_close(w2), 0);

	/* close while the flush fails: -1, rows freed with the writer */
	char *dir3 = make_store();
	w2 = open_writer(dir3);
	snprintf(path, sizeof path, "%s/flows/2025", dir3);
	assert_int_equal(ng_store_writer_append(w2, in, 3000), 0);
	f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(ng_store_writer_flush(w2), -1);
	assert_int_equal(ng_store_writer_append(w2, in + 3000, 100), 0);
	assert_int_equal(ng_store_writer_close(w2), -1);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(tags_on_disk(dir3, N), 0);
	ts_rm_rf(dir3);
	free(dir3);

	assert_int_equal(ng_store_writer_close(w), 0);
	free(in);
	ts_rm_rf(dir);
	ts_rm_rf(dir2);
	free(dir);
	free(dir2);
}

/* ---- derive functions ---------------------------------------------- */

/* A derive function that sets out_if = dst_port + 7 and src_as = packets
 * (columns no row holds: materialised as zeros first), checks that it
 * sees the rows in flow_start order, and fails its first `fail` calls. */
struct derive_arg {
	int fail, calls;
	size_t rows;
};

static int derive_fn(void *arg, ng_store_cols *c)
{
	struct derive_arg *d = arg;
	d->calls++;
	const size_t n = ng_store_cols_rows(c);
	const uint8_t *start = ng_store_cols_get(c, NG_F_FLOW_START);
	const uint8_t *port = ng_store_cols_get(c, NG_F_DST_PORT);
	const uint8_t *pk = ng_store_cols_get(c, NG_F_PACKETS);
	uint8_t *out_if = ng_store_cols_get(c, NG_F_OUT_IF),
	        *as = ng_store_cols_get(c, NG_F_SRC_AS);
	assert_true(start && port && pk && out_if && as);
	for (size_t i = 0; i < n; i++) {
		uint64_t s0, s1, p;
		uint16_t dp;
		uint32_t v, zero = 0;
		memcpy(&s1, start + i * 8, 8);
		if (i) {
			memcpy(&s0, start + (i - 1) * 8, 8);
			assert_true(s0 <= s1);
		}
		assert_memory_equal(out_if + i * 4, &zero, 4); /* zeros, not stale */
		memcpy(&dp, port + i * 2, 2);
		memcpy(&p, pk + i * 8, 8);
		v = dp + 7u;
		memcpy(out_if + i * 4, &v, 4);
		v = (uint32_t)p;
		memcpy(as + i * 4, &v, 4);
	}
	if (d->fail > 0) {
		d->fail--;
		return -1;
	}
	d->rows += n;
	return 0;
}

/* Derived columns are stored as the function left them, over two hours
 * and two flushes; a failing derive fails the flush, keeps every row, and
 * the retry derives them again from the rows as appended (src_as was
 * written by the failed call: the retry must not see it). */
static void test_derive(void **state)
{
	(void)state;
	enum { N = 40000 };
	ng_flow *in = calloc(N, sizeof *in), *want = calloc(N, sizeof *want);
	assert_non_null(in);
	assert_non_null(want);
	for (size_t i = 0; i < N; i++) {
		light_flow(&in[i], T0 + HOUR - 60000, 120000, i);
		in[i].out_if = in[i].src_as = 0;
		want[i] = in[i];
		want[i].out_if = in[i].dst_port + 7u;
		want[i].src_as = (uint32_t)i;
	}
	char *dir = make_store();
	ng_store_writer *w = open_writer(dir);
	struct derive_arg d = {.fail = 1};
	ng_store_writer_set_derive(w, derive_fn, &d);
	assert_true(ng_store_writer_append(w, in, N / 2) >= 0);
	assert_int_equal(ng_store_writer_flush(w), -1); /* the derive failed */
	assert_int_equal(stats_of(w).rows, 0);
	assert_true(ng_store_writer_append(w, in + N / 2, N - N / 2) >= 0);
	assert_int_equal(ng_store_writer_close(w), 0);
	assert_int_equal(d.rows, N);
	assert_true(d.calls >= 3); /* failed, then one segment per hour */
	assert_store_holds(dir, want, N, ng_colset_all());
	ts_rm_rf(dir);
	free(dir);
	free(in);
	free(want);
}

int main(int argc, char **argv)
{
	if (argc > 1) /* a test name (glob): run that one alone */
		cmocka_set_test_filter(argv[1]);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_failure_after_some_hours),
	    cmocka_unit_test(test_random_failures_and_appends),
	    cmocka_unit_test(test_failure_in_later_group),
	    cmocka_unit_test(test_buffer_limit_and_dropped),
	    cmocka_unit_test(test_field_in_one_row),
	    cmocka_unit_test(test_derive),
	    cmocka_unit_test(test_reused_chunks_start_zero),
	    cmocka_unit_test(test_flow_start_zero),
	    cmocka_unit_test(test_flush_over_2_20_rows),
	    cmocka_unit_test(test_diff_with_zero_references),
	    cmocka_unit_test(test_dict_many_strings),
	    cmocka_unit_test(test_chunk_copy_row),
	    cmocka_unit_test(test_race_with_failures),
	    cmocka_unit_test(test_sort_arrays_out_of_memory),
	    cmocka_unit_test(test_out_of_memory_and_close),
	    cmocka_unit_test(test_pool_gives_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
