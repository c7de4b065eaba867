/*
 * test_store_timeflood.c — the store under rows whose times are anywhere
 * (docs/security.md, "Time-hostile input"):
 *
 *   - one flush writes at most NG_FLUSH_MAX_HOURS hours, the hours nearest
 *     the clock first (the rows of now are durable after the first flush,
 *     whatever else is buffered), and defers the rest, counted, to the
 *     next flushes, which write them all: nothing is lost;
 *   - retention and compaction cope with a store written before the
 *     collector's time window: hours of 1970 and of 2106 cause no error;
 *     retention with an age limit removes the 1970 rows by age and the
 *     2106 rows as "from the future", and their directories; asked to
 *     stop, it stops (and deletes nothing from a partial listing).
 *
 * Before the bound, the first flush below wrote all 521 hours (521
 * segments) and the test's first assertion failed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/field.h"
#include "core/timefmt.h"
#include "store/store.h"
#include "test_store_helpers.h"

#define HOUR UINT64_C(3600000)
#define FAR_HOURS 520 /* far from now: 2 × 256 + 8 */
#define PER_HOUR 3
#define NOW_ROWS 100

static int count_fn(const ng_column_batch *b, void *arg)
{
	*(uint64_t *)arg += b->n;
	return 0;
}

/* Rows stored in [from, to). */
static uint64_t rows_in(const char *dir, uint64_t from, uint64_t to)
{
	uint64_t n = 0;
	ng_scan_stats st;
	assert_int_equal(
	    ng_store_scan(dir, from, to, ng_colset_of(NG_F_FLOW_START), count_fn, &n, &st), 0);
	assert_int_equal(st.errors, 0);
	return n;
}

/* A stop callback that asks to stop at once, counting its calls. */
static bool stop_now(void *arg)
{
	++*(unsigned *)arg;
	return true;
}

static void put(ng_flow *r, uint64_t start)
{
	memset(r, 0, sizeof *r);
	r->flow_start = r->flow_end = start;
	r->time_received = ng_now_ms();
	r->bytes = 100;
	r->packets = 1;
}

static void test_flush_bounded(void **state)
{
	(void)state;
	char *dir = ts_make_store("timeflood");
	char err[256];
	ng_store_writer *w = ng_store_writer_open(dir, err, sizeof err);
	assert_non_null(w);
	const uint64_t now = ng_now_ms(), this_hour = now / HOUR * HOUR;
	enum { N = FAR_HOURS * PER_HOUR + NOW_ROWS };
	ng_flow *in = calloc(N, sizeof *in);
	size_t k = 0;
	/* far hours first in the buffer, both sides of now: 1970.. and 2100.. */
	for (size_t h = 0; h < FAR_HOURS; h++)
		for (size_t i = 0; i < PER_HOUR; i++) {
			uint64_t base = h % 2 ? UINT64_C(4102444800000) : 0; /* 2100-01-01 */
			put(&in[k++], base + (h / 2) * 24 * HOUR + i * 1000);
		}
	for (size_t i = 0; i < NOW_ROWS; i++)
		put(&in[k++], now - i * 10);
	assert_int_equal(ng_store_writer_append(w, in, N), 0);

	assert_int_equal(ng_store_writer_flush(w), 0);
	ng_store_writer_stats st;
	ng_store_writer_get_stats(w, &st);
	assert_int_equal(st.segments, NG_FLUSH_MAX_HOURS);
	/* the hour of now came first: all its rows are durable */
	assert_int_equal(rows_in(dir, this_hour, this_hour + HOUR), NOW_ROWS);
	assert_int_equal(st.deferred, (FAR_HOURS + 1 - NG_FLUSH_MAX_HOURS) * PER_HOUR);
	assert_true(ng_store_writer_due(w, ng_now_ms())); /* the rest: due at once */

	/* the next flushes write the rest, at most 256 hours each */
	int calls = 1;
	for (; calls < 10 && st.rows < N; calls++) {
		uint64_t before = st.segments;
		assert_int_equal(ng_store_writer_flush(w), 0);
		ng_store_writer_get_stats(w, &st);
		assert_true(st.segments - before <= NG_FLUSH_MAX_HOURS);
	}
	assert_int_equal(calls, 3);
	assert_int_equal(st.rows, N);
	assert_int_equal(st.segments, FAR_HOURS + 1);
	assert_int_equal(st.dropped, 0);
	assert_int_equal(rows_in(dir, 0, UINT64_MAX), N);
	assert_int_equal(ts_count_files(dir, "*.seg"), FAR_HOURS + 1);
	assert_int_equal(ng_store_writer_close(w), 0);

	/* retention asked to stop (the collector stopping) stops while
	 * listing the 521 hours and deletes nothing; the next call deletes
	 * every far hour: 1970's by age, 2100's as from the future */
	ng_store_maint_stats ms = {0};
	unsigned asked = 0;
	assert_int_equal(
	    ng_store_retention_until(dir, 30 * 24 * HOUR, 0, now, &ms, stop_now, &asked), 0);
	assert_true(asked >= 1);
	assert_int_equal(ms.segments_deleted, 0);
	assert_int_equal(ts_count_files(dir, "*.seg"), FAR_HOURS + 1);
	assert_int_equal(ng_store_retention(dir, 30 * 24 * HOUR, 0, now, &ms), 0);
	assert_int_equal(ms.segments_deleted, FAR_HOURS);
	assert_int_equal(ms.segments_future, FAR_HOURS / 2);
	assert_int_equal(rows_in(dir, 0, UINT64_MAX), NOW_ROWS);
	free(in);
	ts_rm_rf(dir);
	free(dir);
}

/* A store as the collector wrote it before the time window: rows of
 * 1970, of 2106 and of now, one segment each. */
static void test_retention_far_hours(void **state)
{
	(void)state;
	char *dir = ts_make_store("timeflood_ret");
	char err[256], path[4200];
	ng_store_writer *w = ng_store_writer_open(dir, err, sizeof err);
	assert_non_null(w);
	const uint64_t now = ng_now_ms();
	ng_flow r[3];
	put(&r[0], 1000);                    /* 1970-01-01T00:00:01Z */
	put(&r[1], UINT64_C(4294967295000)); /* 2106-02-07T06:28:15Z */
	put(&r[2], now - 1000);
	assert_int_equal(ng_store_writer_append(w, r, 3), 0);
	assert_int_equal(ng_store_writer_close(w), 0);
	assert_int_equal(ts_count_files(dir, "*.seg"), 3);

	/* compaction passes over them without an error */
	ng_store_maint_stats ms = {0};
	assert_int_equal(ng_store_compact(dir, now, 0, 0, &ms), 0);
	assert_int_equal(ms.errors, 0);

	/* retention without a limit removes nothing */
	ms = (ng_store_maint_stats){0};
	assert_int_equal(ng_store_retention(dir, 0, 0, now, &ms), 0);
	assert_int_equal(ms.segments_deleted, 0);

	/* 30 days: 1970 by age, 2106 as from the future; now stays */
	ms = (ng_store_maint_stats){0};
	assert_int_equal(ng_store_retention(dir, 30 * 24 * HOUR, 0, now, &ms), 0);
	assert_int_equal(ms.errors, 0);
	assert_int_equal(ms.segments_deleted, 2);
	assert_int_equal(ms.segments_future, 1);
	assert_int_equal(rows_in(dir, 0, UINT64_MAX), 1);
	assert_int_equal(rows_in(dir, now - HOUR, now + HOUR), 1);
	snprintf(path, sizeof path, "%s/flows/1970", dir);
	assert_int_equal(access(path, F_OK), -1);
	snprintf(path, sizeof path, "%s/flows/2106", dir);
	assert_int_equal(access(path, F_OK), -1);

	/* a size limit alone also removes what is from the future first */
	w = ng_store_writer_open(dir, err, sizeof err);
	assert_int_equal(ng_store_writer_append(w, &r[1], 1), 0);
	assert_int_equal(ng_store_writer_close(w), 0);
	ms = (ng_store_maint_stats){0};
	assert_int_equal(ng_store_retention(dir, 0, UINT64_C(1) << 40, now, &ms), 0);
	assert_int_equal(ms.segments_future, 1);
	assert_int_equal(rows_in(dir, 0, UINT64_MAX), 1);
	ts_rm_rf(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_flush_bounded),
	    cmocka_unit_test(test_retention_far_hours),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
