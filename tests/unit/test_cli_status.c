/*
 * test_cli_status.c — the exporter state file (save, load, merge, corrupt
 * input) and `$NG_BIN status` on stores built here.
 */
#include <errno.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/addr.h"
#include "store/exporters.h"
#include "store/store.h"

static int rm_one(const char *p, const struct stat *sb, int type, struct FTW *ftw)
{
	(void)sb, (void)type, (void)ftw;
	return remove(p);
}

static void rm_rf(const char *dir)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static ng_exporter_stats row(const char *addr, uint32_t domain, uint8_t version, uint64_t packets)
{
	ng_exporter_stats s = {0};
	assert_true(ng_addr_parse(addr, s.exporter));
	s.domain = domain;
	s.version = version;
	s.packets = packets;
	s.bytes = packets * 100;
	s.records = packets * 30;
	s.lost = 3;
	s.template_misses = 2;
	s.held = 1;
	s.errors[NG_DERR_SET_OVERRUN] = 4;
	s.errors[NG_DERR_HELD_DROPPED] = 1;
	s.first_seen = UINT64_C(1700000000000);
	s.last_seen = UINT64_C(1700000060123);
	s.sampling_rate = 512;
	s.sampling_source = NG_SAMPLING_OPTIONS;
	s.lost_samples = 6;
	s.counter_samples = 7;
	s.discards = 8;
	return s;
}

static void test_save_load_roundtrip(void **state)
{
	(void)state;
	char dir[] = "/tmp/ng_test_status_XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[256];
	snprintf(path, sizeof path, "%s/exporters.json", dir);
	ng_exporter_stats rows[2] = {row("192.0.2.9", 0, 9, 10), row("2001:db8::1", 7, 10, 20)};
	ng_exporters_file f = {.rows = rows, .n = 2, .started_ms = 1, .updated_ms = 2};
	f.listener.datagrams = 30;
	f.listener.drops = 5;
	f.store.rows = 900;
	assert_int_equal(ng_exporters_save(path, &f), 0);
	ng_exporters_file g;
	char err[256] = "";
	assert_int_equal(ng_exporters_load(path, &g, err, sizeof err), 0);
	assert_int_equal(g.n, 2);
	assert_memory_equal(&g.rows[0], &rows[0], sizeof rows[0]);
	assert_memory_equal(&g.rows[1], &rows[1], sizeof rows[1]);
	assert_int_equal(g.listener.drops, 5);
	assert_int_equal(g.store.rows, 900);
	assert_int_equal(g.updated_ms, 2);

	/* merging a second run: same key adds up, new key is appended */
	ng_exporter_stats now[1] = {row("192.0.2.9", 0, 9, 1)};
	ng_exporters_file h = {.rows = malloc(sizeof now), .n = 1};
	memcpy(h.rows, now, sizeof now);
	assert_int_equal(ng_exporters_merge(&h, &g), 0);
	assert_int_equal(h.n, 2);
	assert_int_equal(h.rows[0].packets, 11);
	assert_int_equal(h.rows[0].errors[NG_DERR_SET_OVERRUN], 8);
	assert_int_equal(h.rows[1].domain, 7);
	assert_int_equal(h.listener.datagrams, 30);
	ng_exporters_free(&h);
	ng_exporters_free(&g);

	/* no .tmp left behind */
	char tmp[300];
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	assert_int_not_equal(access(tmp, F_OK), 0);
	rm_rf(dir);
}

static void test_load_errors(void **state)
{
	(void)state;
	ng_exporters_file g;
	char err[256];
	assert_int_equal(ng_exporters_load("/nonexistent/exporters.json", &g, err, sizeof err), -1);
	assert_int_equal(errno, ENOENT);

	char path[] = "/tmp/ng_test_status_bad_XXXXXX";
	int fd = mkstemp(path);
	static const char bad[] = "{\"exporters\":[{\"exporter\":\"192.0.2.1\",\"packets\":-4}]}";
	assert_int_equal(write(fd, bad, sizeof bad - 1), (ssize_t)(sizeof bad - 1));
	close(fd);
	assert_int_equal(ng_exporters_load(path, &g, err, sizeof err), -1);
	assert_int_equal(errno, EINVAL);
	/* the '-' is at offset 48, counted from 0 */
	assert_non_null(strstr(err, "expected an unsigned integer at byte 48"));
	unlink(path);
}

/* Runs `$NG_BIN status ARGS`; returns the exit status, output in out. */
static int run_status(const char *args, char *out, size_t len)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "%s status %s 2>&1", getenv("NG_BIN"), args);
	FILE *p = popen(cmd, "r");
	size_t n = fread(out, 1, len - 1, p);
	out[n] = 0;
	int st = pclose(p);
	return WEXITSTATUS(st);
}

static void test_status_command(void **state)
{
	(void)state;
	const char *bin = getenv("NG_BIN");
	if (!bin || access(bin, X_OK)) {
		print_message("skipped: NG_BIN not set\n");
		skip();
	}
	char dir[] = "/tmp/ng_test_status_XXXXXX";
	assert_non_null(mkdtemp(dir));
	char out[8192], args[512];

	/* empty store: the hint */
	snprintf(args, sizeof args, "--store %s", dir);
	assert_int_equal(run_status(args, out, sizeof out), 0);
	assert_non_null(strstr(out, "no exporter has sent anything to this store yet: point an "
	                            "exporter at udp/2055"));

	/* a segment of 3 rows and a counters file */
	char err[256];
	ng_store_writer *w = ng_store_writer_open(dir, err, sizeof err);
	assert_non_null(w);
	ng_flow fl[3] = {0};
	for (int i = 0; i < 3; i++)
		fl[i].flow_start = fl[i].flow_end = UINT64_C(1700000000000) + (uint64_t)i;
	assert_int_equal(ng_store_writer_append(w, fl, 3), 0);
	assert_int_equal(ng_store_writer_close(w), 0);
	char state_dir[300], path[400];
	assert_non_null(ng_store_state_dir(dir, state_dir, sizeof state_dir));
	snprintf(path, sizeof path, "%s/exporters.json", state_dir);
	ng_exporter_stats rows[1] = {row("192.0.2.9", 256, 10, 10)};
	ng_exporters_file f = {.rows = rows, .n = 1, .started_ms = 1, .updated_ms = 2};
	assert_int_equal(ng_exporters_save(path, &f), 0);

	assert_int_equal(run_status(args, out, sizeof out), 0);
	assert_non_null(strstr(out, "192.0.2.9"));
	assert_non_null(strstr(out, "IPFIX"));
	assert_non_null(strstr(out, "errors: set_overrun 4 held_dropped 1"));
	assert_non_null(strstr(out, "sFlow: counter samples 7, lost samples 6, discards 8"));
	assert_non_null(strstr(out, ": 1 segments, "));

	snprintf(args, sizeof args, "--store %s --format json", dir);
	assert_int_equal(run_status(args, out, sizeof out), 0);
	assert_non_null(strstr(out, "\"segments\":1,"));
	assert_non_null(strstr(out, "\"exporter\":\"192.0.2.9\",\"domain\":256,\"version\":10"));

	assert_int_equal(run_status("--store /nonexistent/store", out, sizeof out), 1);
	assert_int_equal(run_status("--format xml --store /tmp", out, sizeof out), 2);
	assert_int_equal(run_status("--x", out, sizeof out), 2);
	assert_string_equal(out,
	                    "nagare status: unknown option '--x'; see 'nagare status --help'\n");
	rm_rf(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_save_load_roundtrip),
	    cmocka_unit_test(test_load_errors),
	    cmocka_unit_test(test_status_command),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
