/*
 * test_wide_fields.c — a field table past 64 fields, stored and queried.
 *
 * This program is linked against the "_wide" build of the layers from
 * records to a query's answer (core, net, decode, store, query:
 * CMakeLists.txt), compiled with NG_TEST_EXTRA_FIELDS=150.  That appends
 * 150 u32 fields, test_extra_0 .. test_extra_149, to the field table
 * (core/field.h, ids NG_F_TEST_EXTRA + k, 64 .. 213 with today's 64 real
 * fields) and to ng_flow (its test_extra[] array), so a set of them
 * (core/colset.h) uses all four of its words.  The test names extra
 * fields by k relative to the count (LAST, HIGH), so a real field added
 * to the table moves them up and changes nothing here.
 *
 * Rows whose extra fields hold distinct values (the last three digits of
 * a value are its k: a column read as another's shows) go through the
 * real store writer (column chunks, sort, encoder, segment files, two
 * flushes), come back through the scan (every column, and a few of words
 * 1 to 3 alone), and answer real queries: a top-N grouped by a field past
 * 64, a filter on one, the two together (the filter's column in word 1,
 * the key's in word 3), and a listing whose CSV prints them; then again
 * after compaction, which reads whole segments back.
 *
 * Before ng_colset, when a set of fields was a uint64_t (NG_COL(f) = 1 <<
 * f), this build did not compile: field.h's _Static_assert(NG_FIELD_COUNT
 * <= 64) stopped it.  Without that assertion the 64-bit masks alias field
 * 64 + j onto field j (x86 shifts by f mod 64): the chunk's written
 * columns, the scan's requested ones and the filter's would name the
 * wrong fields.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/colset.h"
#include "core/field.h"
#include "query/filter.h"
#include "query/output.h"
#include "query/query.h"
#include "store/store.h"
#include "test_store_helpers.h"

_Static_assert(NG_FIELD_COUNT == NG_F_TEST_EXTRA + NG_TEST_EXTRA_FIELDS && NG_F_TEST_EXTRA >= 64,
               "the wide build: the test fields after the table's own, past 64");

#define HOUR UINT64_C(3600000)
#define T0 UINT64_C(1764460800000)
/* LATE: extra fields from k = LATE on are only in the second flush's rows;
 * HIGH (one of them) and LAST (the table's last field) are in word 3. */
enum {
	N = 20000,
	EXTRA = NG_TEST_EXTRA_FIELDS,
	LATE = EXTRA - 40,
	HIGH = EXTRA - 10,
	LAST = EXTRA - 1
};
_Static_assert(NG_F_TEST_EXTRA + HIGH >= 192, "HIGH and LAST are in the set's last word");

static ng_flow *rows;
static char *dir;

/* Extra field k of row i: 0 for a third of the rows (sparse columns),
 * and for k ≥ LATE in the first flush's rows, the even ones (columns
 * that appear only in the second); otherwise a value ending in the three
 * digits of k, whose thousands repeat every k % 50 + 3 rows. */
static uint32_t extra(size_t i, unsigned k)
{
	if ((i + k) % 3 == 0 || (k >= LATE && i % 2 == 0))
		return 0;
	return (uint32_t)((i % (k % 50 + 3)) * 1000 + k);
}

/* Field id of extra field k. */
static unsigned xf(unsigned k)
{
	return NG_F_TEST_EXTRA + k;
}

/* Name of extra field k, from the table (test_extra_K). */
static const char *name(unsigned k)
{
	return ng_fields[xf(k)].name;
}

static int setup(void **state)
{
	(void)state;
	rows = calloc(N, sizeof *rows);
	assert_non_null(rows);
	for (size_t i = 0; i < N; i++) {
		ng_flow *r = &rows[i];
		r->flow_start = T0 + i * (2 * HOUR / N); /* two hours: a segment each a flush */
		r->flow_end = r->flow_start + 1000;
		r->time_received = r->flow_end + 500;
		r->bytes = 100 + i % 7;
		r->packets = 1 + i % 3;
		r->protocol = 6;
		r->ip_version = 4;
		r->dst_port = (uint16_t)(i % 5);
		for (unsigned k = 0; k < EXTRA; k++)
			r->test_extra[k] = extra(i, k);
	}
	dir = ts_make_store("wide");
	char err[256];
	ng_store_writer *w = ng_store_writer_open(dir, err, sizeof err);
	assert_non_null(w);
	for (size_t h = 0; h < 2; h++) { /* two flushes: the even rows, the odd */
		for (size_t i = h; i < N; i += 2)
			assert_int_equal(ng_store_writer_append(w, &rows[i], 1), 0);
		assert_int_equal(ng_store_writer_flush(w), 0);
	}
	assert_int_equal(ng_store_writer_close(w), 0);
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

/* ---- the scan --------------------------------------------------------- */

/* Scanned rows as records; the columns of `columns` (and flow_start)
 * must come, no other. */
typedef struct collect {
	ng_colset columns;
	ng_flow *got;
	size_t n;
} collect;

static int collect_fn(const ng_column_batch *b, void *arg)
{
	collect *c = arg;
	assert_true(c->n + b->n <= N);
	for (size_t f = 0; f < NG_FIELD_COUNT; f++) {
		const bool want = ng_colset_has(c->columns, f) || f == NG_F_FLOW_START;
		if (!want) {
			if (b->col[f])
				fail_msg("column %s came unasked", ng_fields[f].name);
			continue;
		}
		if (!b->col[f])
			fail_msg("column %s did not come", ng_fields[f].name);
		const size_t sz = ng_fields[f].size;
		for (size_t i = 0; i < b->n; i++)
			memcpy((uint8_t *)&c->got[c->n + i] + ng_fields[f].offset,
			       (const uint8_t *)b->col[f] + i * sz, sz);
	}
	c->n += b->n;
	return 0;
}

/* Scans every row with `columns` and checks them against rows[] over
 * those columns (flow_start is unique: it orders both). */
static void scan_and_check(ng_colset columns)
{
	collect c = {.columns = columns, .got = calloc(N, sizeof(ng_flow))};
	assert_non_null(c.got);
	ng_scan_stats st;
	assert_int_equal(ng_store_scan(dir, 0, UINT64_MAX, columns, collect_fn, &c, &st), 0);
	assert_int_equal(st.errors, 0);
	assert_int_equal(c.n, N);
	qsort(c.got, N, sizeof *c.got, ts_cmp_flow);
	ng_colset_add(&columns, NG_F_FLOW_START);
	for (size_t i = 0; i < N; i++) {
		ng_colset left = columns;
		for (int f; (f = ng_colset_pop(&left)) >= 0;)
			if (memcmp((uint8_t *)&c.got[i] + ng_fields[f].offset,
			           (uint8_t *)&rows[i] + ng_fields[f].offset, ng_fields[f].size))
				fail_msg("row %zu: %s differs", i, ng_fields[f].name);
	}
	free(c.got);
}

/* Every column back, the extra ones among them. */
static void test_scan_every_column(void **state)
{
	(void)state;
	scan_and_check(ng_colset_all());
	assert_int_equal(ts_count_files(dir, "*.seg"), 4);
}

/* A few columns, one in each word past the first (k = 5, the one at field
 * 140 whatever the real table's size, LAST) and one of the table's own:
 * only they come. */
static void test_scan_some_columns(void **state)
{
	(void)state;
	ng_colset s = ng_colset_of(NG_F_BYTES);
	ng_colset_add(&s, xf(5));
	ng_colset_add(&s, xf(140 - NG_F_TEST_EXTRA));
	ng_colset_add(&s, xf(LAST));
	assert_true(s.w[1] && s.w[2] && s.w[3]);
	scan_and_check(s);
}

/* ---- queries ---------------------------------------------------------- */

/* Runs a query: `keys` (NULL: a listing), `filter` (NULL: none). */
static void run(const char *keys, const char *filter, size_t limit, ng_query_result *res)
{
	char err[256];
	ng_query q = {.to_ms = UINT64_MAX, .limit = limit};
	if (filter && !(q.filter = ng_filter_parse(filter, err, sizeof err, NULL)))
		fail_msg("'%s': %s", filter, err);
	if (keys && ng_query_parse_keys(&q, keys, err, sizeof err))
		fail_msg("'%s': %s", keys, err);
	if (ng_query_run(dir, &q, res, err, sizeof err))
		fail_msg("query: %s", err);
	ng_filter_free(q.filter);
}

/* True when row i passes "test_extra_26 = 7026". */
static bool passes(size_t i)
{
	return rows[i].test_extra[26] == 7026;
}

/* The groups of a top-N by extra field k (over the rows that pass the
 * filter when `filtered`) against a count over rows[]: each group's
 * flows and bytes, flows descending, and as many groups as there are. */
static void check_top(const ng_query_result *res, unsigned k, bool filtered)
{
	enum { VALUES = 52 * 1000 }; /* above every value of extra() */
	uint64_t *flows = calloc(VALUES, sizeof *flows), *bytes = calloc(VALUES, sizeof *bytes);
	assert_true(flows && bytes);
	uint64_t total = 0;
	size_t groups = 0;
	for (size_t i = 0; i < N; i++) {
		if (filtered && !passes(i))
			continue;
		uint32_t v = rows[i].test_extra[k];
		groups += flows[v]++ == 0;
		bytes[v] += rows[i].bytes;
		total++;
	}
	assert_true(total > 0);
	assert_int_equal(res->flows_total, total);
	assert_int_equal(res->groups, groups);
	assert_true(res->nrows > 1);
	for (size_t j = 0; j < res->nrows; j++) {
		uint32_t v;
		memcpy(&v, res->rows[j].key, 4);
		assert_int_equal(res->rows[j].flows, flows[v]);
		assert_int_equal(res->rows[j].bytes, bytes[v]);
		assert_true(v == 0 || v % 1000 == k); /* field k's own values */
		if (j)
			assert_true(res->rows[j].flows <= res->rows[j - 1].flows);
	}
	free(flows);
	free(bytes);
}

/* Top-N grouped by a field past 64: test_extra_70 (id 134 today, word
 * 2), and test_extra_HIGH (word 3, only in the second flush's rows). */
static void test_top_by_extra_field(void **state)
{
	(void)state;
	ng_query_result res;
	run("test_extra_70", NULL, 10, &res);
	assert_int_equal(res.nrows, 10);
	check_top(&res, 70, false);
	ng_query_result_free(&res);
	run(name(HIGH), NULL, 0, &res);
	check_top(&res, HIGH, false);
	ng_query_result_free(&res);
}

/* A filter on a field past 64 (test_extra_26, id 90) as a listing, then
 * under a top-N by test_extra_LAST (word 3): the filter's column is read
 * by the scan's select, the key's only for the blocks it keeps rows of. */
static void test_filter_on_extra_field(void **state)
{
	(void)state;
	size_t want = 0;
	for (size_t i = 0; i < N; i++)
		want += passes(i);
	assert_true(want > 100 && want < N / 10);
	ng_query_result res;
	run(NULL, "test_extra_26 = 7026", 0, &res);
	assert_int_equal(res.nflows, want);
	for (size_t i = 0; i < res.nflows; i++)
		assert_int_equal(res.flows[i].test_extra[26], 7026);
	ng_query_result_free(&res);
	run(name(LAST), "test_extra_26 = 7026", 0, &res);
	check_top(&res, LAST, true);
	ng_query_result_free(&res);
}

/* Column `col` (0-based) of CSV line `line` into buf[len]. */
static void csv_column(const char *line, size_t col, char *buf, size_t len)
{
	for (; col && line; col--)
		if ((line = strchr(line, ',')))
			line++;
	assert_non_null(line);
	size_t n = strcspn(line, ",\n");
	assert_true(n < len);
	memcpy(buf, line, n);
	buf[n] = 0;
}

/* A listing of flows that pass the filter, as CSV: the header names the
 * extra fields and each line holds their values in their columns. */
static void test_listing_prints_extra_fields(void **state)
{
	(void)state;
	ng_query_result res;
	char filter[64];
	snprintf(filter, sizeof filter, "test_extra_26 = 7026 and %s > 0", name(LAST));
	run(NULL, filter, 3, &res);
	assert_int_equal(res.nflows, 3);
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	assert_non_null(out);
	assert_int_equal(ng_output_list(out, &res, NG_FMT_CSV, true), 0);
	fclose(out);
	char cell[64];
	csv_column(text, xf(26), cell, sizeof cell);
	assert_string_equal(cell, "test_extra_26");
	csv_column(text, xf(LAST), cell, sizeof cell);
	assert_string_equal(cell, name(LAST));
	const char *line = text;
	for (size_t i = 0; i < 3; i++) {
		line = strchr(line, '\n') + 1;
		csv_column(line, xf(26), cell, sizeof cell);
		assert_string_equal(cell, "7026");
		char want[16];
		snprintf(want, sizeof want, "%u", (unsigned)res.flows[i].test_extra[LAST]);
		assert_true(res.flows[i].test_extra[LAST] % 1000 == LAST);
		csv_column(line, xf(LAST), cell, sizeof cell);
		assert_string_equal(cell, want);
	}
	free(text);
	ng_query_result_free(&res);
}

/* Compaction reads the small segments whole (ng_seg_read_rows) and
 * writes them as one an hour: every column the same after. */
static void test_compacted(void **state)
{
	(void)state;
	ng_store_maint_stats st = {0};
	assert_int_equal(ng_store_compact(dir, T0 + 100 * HOUR, 0, 0, &st), 0);
	assert_int_equal(st.errors, 0);
	assert_int_equal(st.segments_in, 4);
	assert_int_equal(st.segments_out, 2);
	scan_and_check(ng_colset_all());
	ng_query_result res;
	run(name(LAST), "test_extra_26 = 7026", 0, &res);
	check_top(&res, LAST, true);
	ng_query_result_free(&res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_scan_every_column),
	    cmocka_unit_test(test_scan_some_columns),
	    cmocka_unit_test(test_top_by_extra_field),
	    cmocka_unit_test(test_filter_on_extra_field),
	    cmocka_unit_test(test_listing_prints_extra_fields),
	    cmocka_unit_test(test_compacted),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
