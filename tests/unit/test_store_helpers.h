/*
 * test_store_helpers.h — test-only helpers shared by the store tests: a
 * fresh store directory, its removal, counting and finding its files,
 * the row order used to compare the multiset of rows written with the
 * rows scanned back, a store written from rows in one call, and the
 * flows/packets/bytes sums the query tests compare answers with.
 *
 * Header-only (static functions) so each test program stays one file.
 * Include after <cmocka.h>.
 */
#ifndef NG_TEST_STORE_HELPERS_H
#define NG_TEST_STORE_HELPERS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/flow.h"
#include "store/store.h"

/* A new empty directory /tmp/ng_test_<tag>_XXXXXX; free() the name. */
static __attribute__((unused)) char *ts_make_store(const char *tag)
{
	char tmpl[256];
	snprintf(tmpl, sizeof tmpl, "/tmp/ng_test_%s_XXXXXX", tag);
	char *dir = strdup(tmpl);
	assert_non_null(dir);
	assert_non_null(mkdtemp(dir));
	return dir;
}

static __attribute__((unused)) void ts_rm_rf(const char *dir)
{
	char cmd[512];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* Files under dir whose name matches the shell pattern (find -name). */
static __attribute__((unused)) long ts_count_files(const char *dir, const char *pattern)
{
	char cmd[4200];
	snprintf(cmd, sizeof cmd, "find '%s' -name '%s' | wc -l", dir, pattern);
	FILE *f = popen(cmd, "r");
	assert_non_null(f);
	long n = -1;
	assert_int_equal(fscanf(f, "%ld", &n), 1);
	pclose(f);
	return n;
}

/* The path of the first segment file (by name) under dir into path[len];
 * fails the test when there is none. */
static __attribute__((unused)) void ts_find_segment(const char *dir, char *path, size_t len)
{
	char cmd[4200];
	snprintf(cmd, sizeof cmd, "find '%s' -name '*.seg' | sort | head -1", dir);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	assert_non_null(fgets(path, (int)len, p));
	pclose(p);
	path[strcspn(path, "\n")] = 0;
}

/* qsort order of records: flow_start, then all bytes. */
static __attribute__((unused)) int ts_cmp_flow(const void *a, const void *b)
{
	const ng_flow *x = a, *y = b;
	if (x->flow_start != y->flow_start)
		return x->flow_start < y->flow_start ? -1 : 1;
	return memcmp(x, y, sizeof *x);
}

/* Writes rows[0, n) to the store `dir` (created when missing) through the
 * store writer, with a flush after every `per_flush` rows (0: one at the
 * close), so the store holds the segments of ceil(n / per_flush) flushes
 * (more where rows span hours).  Fails the test on any error. */
static __attribute__((unused)) void ts_write_rows(const char *dir, const ng_flow *rows, size_t n,
                                                  size_t per_flush)
{
	char err[256];
	ng_store_writer *w = ng_store_writer_open(dir, err, sizeof err);
	if (!w)
		fail_msg("store writer %s: %s", dir, err);
	size_t step = per_flush ? per_flush : n;
	for (size_t i = 0; i < n; i += step) {
		assert_int_equal(ng_store_writer_append(w, rows + i, n - i < step ? n - i : step),
		                 0);
		if (per_flush)
			assert_int_equal(ng_store_writer_flush(w), 0);
	}
	assert_int_equal(ng_store_writer_close(w), 0);
}

/* Flows, packets and bytes of a set of records: what a query's answer is
 * checked against, summed from the rows written. */
typedef struct ts_sums {
	uint64_t flows, packets, bytes;
} ts_sums;

static __attribute__((unused)) void ts_sums_add(ts_sums *s, const ng_flow *r)
{
	s->flows++;
	s->packets += r->packets;
	s->bytes += r->bytes;
}

#endif
