/*
 * test_store_helpers.h — test-only helpers shared by the store tests: a
 * fresh store directory, its removal, and the row order used to compare
 * the multiset of rows written with the rows scanned back.
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

/* qsort order of records: flow_start, then all bytes. */
static __attribute__((unused)) int ts_cmp_flow(const void *a, const void *b)
{
	const ng_flow *x = a, *y = b;
	if (x->flow_start != y->flow_start)
		return x->flow_start < y->flow_start ? -1 : 1;
	return memcmp(x, y, sizeof *x);
}

#endif
