/*
 * test_store_helpers.h — test-only helpers shared by the store tests: a
 * fresh store directory, its removal, counting and finding its files,
 * and the row order used to compare the multiset of rows written with the
 * rows scanned back.
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

#endif
