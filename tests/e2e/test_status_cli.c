/*
 * test_status_cli.c — `nagare status` end to end on stores built here: the
 * hint of an empty store, the table (columns, errors and sFlow lines),
 * --format json (the state file as it is on disk, inside the store
 * totals), exit statuses and usage errors.
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

#include "e2e_util.h"

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

/* Runs `$NG_BIN status ARGS`; returns the exit status, output in out. */
static int run_status(const char *args, char *out, size_t len)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "%s status %s 2>&1", getenv("NG_BIN"), args);
	return eu_run(cmd, out, len);
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
	static char out[1 << 16];
	char args[512];

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
	assert_non_null(strstr(out, "EXPORTER                                    DOMAIN VERSION    "
	                            "     PACKETS      RECORDS      LOST  TPL_MISS   ERRORS  LAST "
	                            "SEEN\n"));
	assert_non_null(strstr(out, "192.0.2.9                                      256 IPFIX      "
	                            "          10          300         3         2        5  "
	                            "2023-11-14T22:14:20.123Z ("));
	assert_non_null(strstr(out, "\n    errors: set_overrun 4 held_dropped 1\n"));
	assert_non_null(
	    strstr(out, "\n    sFlow: counter samples 7, lost samples 6, discards 8\n"));
	assert_non_null(strstr(out, ": 1 segments, "));

	/* json: the store totals around the file, byte for byte */
	snprintf(args, sizeof args, "--store %s --format json", dir);
	assert_int_equal(run_status(args, out, sizeof out), 0);
	char head[512];
	snprintf(head, sizeof head, "{\"store\":{\"path\":\"%s\",\"segments\":1,", dir);
	assert_memory_equal(out, head, strlen(head));
	static char file[1 << 16];
	FILE *fp = fopen(path, "r");
	size_t n = fread(file, 1, sizeof file - 1, fp);
	fclose(fp);
	while (n && file[n - 1] == '\n')
		n--;
	file[n] = 0;
	char *st = strstr(out, "},\"state\":");
	assert_non_null(st);
	st += strlen("},\"state\":");
	assert_memory_equal(st, file, n);
	assert_string_equal(st + n, "}\n");
	assert_non_null(strstr(out, "\"exporter\":\"192.0.2.9\",\"domain\":256,\"version\":10"));

	/* a damaged state file: exit 1 with the byte offset */
	fp = fopen(path, "w");
	fputs("{\"exporters\":[{\"packets\":-1}]}", fp);
	fclose(fp);
	snprintf(args, sizeof args, "--store %s", dir);
	assert_int_equal(run_status(args, out, sizeof out), 1);
	assert_non_null(strstr(out, "not an exporter state file: expected an unsigned integer at "
	                            "byte 25"));

	assert_int_equal(run_status("--store /nonexistent/store", out, sizeof out), 1);
	assert_int_equal(run_status("--format xml --store /tmp", out, sizeof out), 2);
	assert_int_equal(run_status("--x", out, sizeof out), 2);
	assert_string_equal(out,
	                    "nagare status: unknown option '--x'; see 'nagare status --help'\n");
	eu_rm_rf(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_status_command),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
