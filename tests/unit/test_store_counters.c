/*
 * test_store_counters.c — the counter-sample store: samples written are
 * read back whole, by time range, split by UTC hour; a damaged file is
 * skipped and counted; an absent store is -1.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "store/counters.h"

struct got {
	ng_counter_sample s[64];
	size_t n;
};

static int take(const ng_counter_sample *s, size_t n, void *arg)
{
	struct got *g = arg;
	for (size_t i = 0; i < n && g->n < 64; i++)
		g->s[g->n++] = s[i];
	return 0;
}

static char *tmpstore(void)
{
	static char dir[64];
	snprintf(dir, sizeof dir, "/tmp/ng_ctr_test_XXXXXX");
	assert_non_null(mkdtemp(dir));
	return dir;
}

static void test_round_trip(void **state)
{
	(void)state;
	char *dir = tmpstore(), err[256];
	ng_counter_store *w = ng_counter_store_open(dir, err, sizeof err);
	assert_non_null(w);
	ng_counter_sample s[3];
	memset(s, 0, sizeof s);
	/* 2026-11-30T12:59:59.000Z, 13:00:01, 13:30:00 */
	uint64_t t0 = 1796043599000ULL;
	for (int i = 0; i < 3; i++) {
		s[i].time_received = t0 + (i == 0 ? 0 : i == 1 ? 2000 : 1801000);
		s[i].agent[10] = s[i].agent[11] = 0xff;
		s[i].agent[15] = 7;
		s[i].if_index = 10 + (uint32_t)i;
		s[i].parts = NG_CTR_IF;
		s[i].in_octets = 1000000ULL * (uint64_t)(i + 1);
		s[i].if_speed = 1000000000ULL;
	}
	/* appended out of order: the store sorts by time */
	assert_int_equal(ng_counter_store_append(w, &s[2], 1), 0);
	assert_int_equal(ng_counter_store_append(w, s, 2), 0);
	assert_int_equal(ng_counter_store_close(w), 0);

	char path[256];
	snprintf(path, sizeof path, "%s/counters/2026/11/30/12", dir);
	assert_int_equal(access(path, F_OK), 0);
	snprintf(path, sizeof path, "%s/counters/2026/11/30/13", dir);
	assert_int_equal(access(path, F_OK), 0);

	struct got g = {0};
	uint64_t errs = 0;
	assert_int_equal(ng_counter_scan(dir, 0, UINT64_MAX, take, &g, &errs), 0);
	assert_int_equal(g.n, 3);
	assert_int_equal(errs, 0);
	assert_int_equal(g.s[0].if_index, 10);
	assert_int_equal(g.s[1].if_index, 11);
	assert_int_equal(g.s[2].in_octets, 3000000);
	assert_memory_equal(&g.s[1], &s[1], sizeof s[1]);

	/* [13:00:00, 13:30:00): only the second sample */
	memset(&g, 0, sizeof g);
	assert_int_equal(ng_counter_scan(dir, t0 + 1000, t0 + 1801000, take, &g, &errs), 0);
	assert_int_equal(g.n, 1);
	assert_int_equal(g.s[0].if_index, 11);

	/* a damaged file is skipped and counted, the others still read */
	char bad[300];
	snprintf(bad, sizeof bad, "%s/counters/2026/11/30/13/1796043600000-1796043600000-99.ctr",
	         dir);
	FILE *f = fopen(bad, "wb");
	assert_non_null(f);
	fputs("garbage", f);
	fclose(f);
	memset(&g, 0, sizeof g);
	assert_int_equal(ng_counter_scan(dir, 0, UINT64_MAX, take, &g, &errs), 0);
	assert_int_equal(g.n, 3);
	assert_int_equal(errs, 1);

	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_absent(void **state)
{
	(void)state;
	struct got g = {0};
	assert_int_equal(ng_counter_scan("/nonexistent/ng", 0, UINT64_MAX, take, &g, NULL), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_absent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
