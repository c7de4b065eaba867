/*
 * test_maint.c — `nagare collect` runs store maintenance: a child
 * collector (hidden --maint-interval 1s so the first run comes soon)
 * merges the small segments of an old hour into one (compaction) and,
 * with --retention 1h, deletes segments whose flows are older than an hour
 * while keeping recent ones.  Expected values are the rows this test
 * wrote itself (counted and summed independently of the collector).
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/field.h"
#include "core/timefmt.h"
#include "store/store.h"

#include "e2e_util.h"

static size_t count_segments(const char *store)
{
	char flows[4200];
	snprintf(flows, sizeof flows, "%s/flows", store);
	return eu_count_suffix(flows, ".seg");
}

/* Writes `nflush` segments of `per` rows each, flow_start from `t0`, one
 * ms apart; bytes = 1, 2, 3, … from `*next`. */
static void write_segments(const char *store, uint64_t t0, int nflush, int per, uint64_t *next)
{
	char err[256];
	ng_store_writer *w = ng_store_writer_open(store, err, sizeof err);
	assert_non_null(w);
	ng_flow f;
	for (int k = 0; k < nflush; k++) {
		for (int i = 0; i < per; i++) {
			memset(&f, 0, sizeof f);
			f.flow_start = t0++;
			f.flow_end = f.flow_start + 10;
			f.bytes = (*next)++;
			f.packets = 1;
			f.src_addr[10] = f.src_addr[11] = 0xff;
			f.src_addr[12] = 10;
			f.src_addr[15] = (uint8_t)i;
			f.dst_port = 443;
			assert_int_equal(ng_store_writer_append(w, &f, 1), 0);
		}
		assert_int_equal(ng_store_writer_flush(w), 0);
	}
	assert_int_equal(ng_store_writer_close(w), 0);
}

struct sums {
	uint64_t rows, bytes;
};

static int sum_rows(const ng_column_batch *b, void *arg)
{
	struct sums *s = arg;
	for (size_t i = 0; i < b->n; i++)
		s->bytes += ((const uint64_t *)b->col[NG_F_BYTES])[i];
	s->rows += b->n;
	return 0;
}

static struct sums scan_all(const char *store)
{
	struct sums s = {0};
	ng_scan_stats st = {0};
	assert_int_equal(
	    ng_store_scan(store, 0, UINT64_MAX, ng_colset_of(NG_F_BYTES), sum_rows, &s, &st), 0);
	assert_int_equal(st.errors, 0);
	return s;
}

static pid_t start_collector(const char *bin, const char *store, const char *log,
                             const char *retention)
{
	char listen[64];
	snprintf(listen, sizeof listen, "127.0.0.1:%u", eu_free_port(SOCK_DGRAM));
	if (retention)
		return eu_spawn(log,
		                (char *const[]){(char *)bin, "collect", "--store", (char *)store,
		                                "--listen", listen, "--no-http", "--maint-interval",
		                                "1s", "--retention", (char *)retention, NULL});
	return eu_spawn(log, (char *const[]){(char *)bin, "collect", "--store", (char *)store,
	                                     "--listen", listen, "--no-http", "--maint-interval",
	                                     "1s", NULL});
}

static void stop_collector(pid_t pid)
{
	assert_int_equal(eu_stop(pid), 0);
}

/* Old hour's 5 small segments: merged into one, every row kept. */
static void test_collect_compacts(void **state)
{
	(void)state;
	const char *bin = eu_bin_or_skip();
	char store[] = "/tmp/ng_cmaint_XXXXXX", log[64];
	assert_non_null(mkdtemp(store));
	snprintf(log, sizeof log, "%s.log", store);
	uint64_t hour = 3600000, now = ng_now_ms();
	uint64_t t0 = (now / hour - 3) * hour + 1000, next = 1;
	write_segments(store, t0, 5, 200, &next);
	assert_int_equal(count_segments(store), 5);
	pid_t pid = start_collector(bin, store, log, NULL);
	bool merged =
	    eu_wait_log(log, pid, "compaction: 5 segments merged into 1 (1000 rows)", 15000);
	/* then the merged segment's rollups: its 1000 rows lie in one 5-minute
	 * bucket with one value of every set's fields but the source address,
	 * so 1 row in each of the 12 files of the full sets; the top rollups
	 * keep all 200 source addresses and the one destination, each file
	 * with its bound row: 14 files, 12 + 201 + 2 rows */
	bool rolled = merged && eu_wait_log(log, pid,
	                                    "rollups: 1 segments rolled up into 14 files "
	                                    "(215 rows)",
	                                    15000);
	stop_collector(pid);
	if (!rolled)
		print_message("log:\n%s\n", eu_slurp(log, NULL));
	assert_true(merged);
	assert_true(rolled);
	assert_int_equal(count_segments(store), 1);
	struct sums s = scan_all(store);
	assert_int_equal(s.rows, 1000);
	assert_int_equal(s.bytes, 1000 * 1001 / 2);
	eu_rm_rf(store);
	unlink(log);
}

/* --retention 1h: segments of 3 and 5 hours ago go, the last minute's
 * stay (rows and byte sum of the recent ones only). */
static void test_collect_retention(void **state)
{
	(void)state;
	const char *bin = eu_bin_or_skip();
	char store[] = "/tmp/ng_cmaint_XXXXXX", log[64];
	assert_non_null(mkdtemp(store));
	snprintf(log, sizeof log, "%s.log", store);
	uint64_t hour = 3600000, now = ng_now_ms(), next = 1;
	write_segments(store, now - 5 * hour, 2, 100, &next);
	write_segments(store, now - 3 * hour, 3, 100, &next);
	uint64_t first_recent = next;
	write_segments(store, now - 60000, 2, 50, &next);
	uint64_t recent_sum = 0;
	for (uint64_t v = first_recent; v < next; v++)
		recent_sum += v;
	assert_int_equal(count_segments(store), 7);
	pid_t pid = start_collector(bin, store, log, "1h");
	bool deleted = eu_wait_log(log, pid, "retention: deleted", 15000);
	stop_collector(pid);
	if (!deleted)
		print_message("log:\n%s\n", eu_slurp(log, NULL));
	assert_true(deleted);
	/* the old hours may have been merged first: 1 or 2 segments deleted
	 * each, but none of their rows remain */
	struct sums s = scan_all(store);
	assert_int_equal(s.rows, 100);
	assert_int_equal(s.bytes, recent_sum);
	assert_true(count_segments(store) >= 1 && count_segments(store) <= 2);
	eu_rm_rf(store);
	unlink(log);
}

/* `nagare compact`: the same merge and rollups now, then nothing left to
 * do; the rows are all there; bad options are usage errors. */
static void test_compact_command(void **state)
{
	(void)state;
	const char *bin = eu_bin_or_skip();
	char store[] = "/tmp/ng_cmaint_XXXXXX", cmd[4300], out[1024];
	assert_non_null(mkdtemp(store));
	uint64_t hour = 3600000, now = ng_now_ms();
	uint64_t t0 = (now / hour - 3) * hour + 1000, next = 1;
	write_segments(store, t0, 5, 200, &next);
	snprintf(cmd, sizeof cmd, "%s compact --store %s 2>&1", bin, store);
	assert_int_equal(eu_run(cmd, out, sizeof out), 0);
	assert_string_equal(out, "compaction: 5 segments merged into 1 (1000 rows)\n"
	                         "rollups: 1 segments rolled up into 14 files (215 rows)\n");
	assert_int_equal(eu_run(cmd, out, sizeof out), 0);
	assert_string_equal(out, "compaction: 0 segments merged into 0 (0 rows)\n"
	                         "rollups: 0 segments rolled up into 0 files (0 rows)\n");
	assert_int_equal(count_segments(store), 1);
	struct sums s = scan_all(store);
	assert_int_equal(s.rows, 1000);
	assert_int_equal(s.bytes, 1000 * 1001 / 2);
	snprintf(cmd, sizeof cmd, "%s compact --store %s --settle soon 2>&1", bin, store);
	assert_int_equal(eu_run(cmd, out, sizeof out), 2);
	assert_non_null(strstr(out, "--settle 'soon'"));
	snprintf(cmd, sizeof cmd, "%s compact --store %s/nothing 2>&1", bin, store);
	assert_int_equal(eu_run(cmd, out, sizeof out), 1);
	assert_non_null(strstr(out, "is not a flow store"));
	eu_rm_rf(store);
}

/* Bad values are usage errors (exit 2) naming the option. */
static void test_collect_maint_usage(void **state)
{
	(void)state;
	const char *bin = eu_bin_or_skip();
	const char *args[][2] = {{"--retention", "30x"},
	                         {"--retention", "0d"},
	                         {"--max-size", "lots"},
	                         {"--max-size", "0"}};
	for (size_t i = 0; i < sizeof args / sizeof args[0]; i++) {
		char cmd[4300], out[512] = "";
		snprintf(cmd, sizeof cmd, "%s collect --store /tmp/x %s %s 2>&1", bin, args[i][0],
		         args[i][1]);
		assert_int_equal(eu_run(cmd, out, sizeof out), 2);
		char want[64];
		snprintf(want, sizeof want, "%s '%s'", args[i][0], args[i][1]);
		assert_non_null(strstr(out, want));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_collect_compacts),
	    cmocka_unit_test(test_collect_retention),
	    cmocka_unit_test(test_collect_maint_usage),
	    cmocka_unit_test(test_compact_command),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
