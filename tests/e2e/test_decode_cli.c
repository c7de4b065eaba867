/*
 * test_decode_cli.c — `$NG_BIN decode` on corpus files: one decoder across
 * files (template file, then data file, in either order), NDJSON records,
 * the counter summary, exit statuses.
 *
 * Expected records from tshark on the two akvorado files merged
 * (mergecap -a samplingrate-template.pcap samplingrate-data.pcap) with
 * `-d udp.port==8096,cflow -E occurrence=a -e cflow.srcaddr -e cflow.octets
 * -e cflow.sampling_interval`: six records, source addresses
 * 232.131.215.65, 79.155.191.171, 227.213.252.241, 193.133.148.63,
 * 53.238.225.56, 82.58.106.145 with 160, 420, 1163, 187, 1289, 521 octets,
 * sampling interval 2048 each.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

static const char *bin, *td;

static int setup(void **state)
{
	(void)state;
	bin = getenv("NG_BIN");
	td = getenv("NG_TESTDATA");
	return 0;
}

#define NEED()                                                                                     \
	do {                                                                                       \
		if (!bin || access(bin, X_OK) || !td) {                                            \
			print_message("skipped: needs NG_BIN and NG_TESTDATA\n");                  \
			skip();                                                                    \
		}                                                                                  \
	} while (0)

/* Runs `nagare decode ARGS` (paths relative to captures/ prefixed with @),
 * stdout into out, stderr into err; returns the exit status. */
static int run(const char *args, char *out, size_t outlen, char *err, size_t errlen)
{
	char cmd[8192], ef[] = "/tmp/ng_test_decode_err_XXXXXX";
	int fd = mkstemp(ef);
	assert_true(fd >= 0);
	close(fd);
	/* expand @rel into the captures directory */
	char expanded[4096] = "";
	size_t off = 0;
	for (const char *p = args; *p && off < sizeof expanded - 1; p++) {
		if (*p == '@')
			off += (size_t)snprintf(expanded + off, sizeof expanded - off,
			                        "%s/captures/", td);
		else
			expanded[off++] = *p;
	}
	expanded[off] = 0;
	snprintf(cmd, sizeof cmd, "%s decode %s 2>%s", bin, expanded, ef);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	size_t n = fread(out, 1, outlen - 1, p);
	out[n] = 0;
	int st = pclose(p);
	FILE *e = fopen(ef, "r");
	n = e ? fread(err, 1, errlen - 1, e) : 0;
	err[n] = 0;
	if (e)
		fclose(e);
	unlink(ef);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static size_t lines(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void check_sampling_records(const char *out)
{
	static const struct {
		const char *src;
		unsigned octets;
	} want[] = {
	    {"232.131.215.65", 160}, {"79.155.191.171", 420}, {"227.213.252.241", 1163},
	    {"193.133.148.63", 187}, {"53.238.225.56", 1289}, {"82.58.106.145", 521},
	};
	assert_int_equal(lines(out), 6);
	const char *line = out;
	for (size_t i = 0; i < 6; i++) {
		const char *end = strchr(line, '\n');
		char buf[2048];
		snprintf(buf, sizeof buf, "%.*s", (int)(end - line), line);
		char k[128];
		snprintf(k, sizeof k, "\"src_addr\":\"%s\"", want[i].src);
		assert_non_null(strstr(buf, k));
		snprintf(k, sizeof k, "\"bytes_raw\":%u,", want[i].octets);
		assert_non_null(strstr(buf, k));
		assert_non_null(strstr(buf, "\"sampling_rate\":2048,"));
		snprintf(k, sizeof k, "\"bytes\":%u,", want[i].octets * 2048);
		assert_non_null(strstr(buf, k));
		line = end + 1;
	}
}

static char out[1 << 20], err[1 << 16];

static void test_template_then_data(void **state)
{
	(void)state;
	NEED();
	int rc = run("@akvorado/samplingrate-template.pcap @akvorado/samplingrate-data.pcap", out,
	             sizeof out, err, sizeof err);
	assert_int_equal(rc, 0);
	check_sampling_records(out);
	assert_non_null(strstr(err, "2 of 2 file(s) read"));
	assert_non_null(strstr(err, "exporter 192.168.0.1 domain 369099009 (NetFlow v9)"));
	assert_non_null(strstr(err, "records 6"));
	assert_null(strstr(err, "still held"));
}

/* Data first: the set is held, then decoded when the template file comes. */
static void test_data_then_template(void **state)
{
	(void)state;
	NEED();
	int rc = run("@akvorado/samplingrate-data.pcap @akvorado/samplingrate-template.pcap", out,
	             sizeof out, err, sizeof err);
	assert_int_equal(rc, 0);
	check_sampling_records(out);
	assert_non_null(strstr(err, "template misses 1, held 1"));
}

/* Data alone: nothing decoded, and the summary says why. */
static void test_data_alone(void **state)
{
	(void)state;
	NEED();
	int rc = run("@akvorado/samplingrate-data.pcap", out, sizeof out, err, sizeof err);
	assert_int_equal(rc, 0);
	assert_int_equal(lines(out), 0);
	assert_non_null(strstr(err, "1 data set(s) still held at end of input"));
}

/* A raw v5 file of twelve packets: 30 records (tshark on a text2pcap copy). */
static void test_raw_v5_and_missing_file(void **state)
{
	(void)state;
	NEED();
	int rc = run("@graylog2-server_raw/netflow-v5-1.dat /nonexistent.pcap", out, sizeof out,
	             err, sizeof err);
	assert_int_equal(rc, 1);
	assert_int_equal(lines(out), 30);
	assert_non_null(strstr(out, "\"exporter\":\"0.0.0.0\""));
	assert_non_null(strstr(err, "/nonexistent.pcap: No such file or directory"));
	assert_non_null(strstr(err, "1 of 2 file(s) read"));
}

/* A malformed file is counted, not fatal. */
static void test_malformed_counted(void **state)
{
	(void)state;
	NEED();
	int rc = run("@logstash-codec-netflow_dat/netflow5_test_invalid01.dat", out, sizeof out,
	             err, sizeof err);
	assert_int_equal(rc, 0);
	/* header count 55582 cannot fit 1464 bytes (RFC-less v5 rule: 24 + 48 × count) */
	assert_non_null(strstr(err, "errors: bad_length 1\n"));
}

static void test_json_out_and_usage(void **state)
{
	(void)state;
	NEED();
	char path[] = "/tmp/ng_test_decode_out_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	char args[256];
	snprintf(args, sizeof args, "-q --json-out %s @graylog2-server_raw/netflow-v5-1.dat", path);
	assert_int_equal(run(args, out, sizeof out, err, sizeof err), 0);
	assert_int_equal(strlen(out), 0);
	assert_int_equal(strlen(err), 0);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	size_t n = fread(out, 1, sizeof out - 1, f);
	out[n] = 0;
	fclose(f);
	unlink(path);
	assert_int_equal(lines(out), 30);

	assert_int_equal(run("--bogus x", out, sizeof out, err, sizeof err), 2);
	assert_string_equal(
	    err, "nagare decode: unknown option '--bogus'; see 'nagare decode --help'\n");
	assert_int_equal(run("", out, sizeof out, err, sizeof err), 2);
	assert_int_equal(run("--help", out, sizeof out, err, sizeof err), 0);
	assert_non_null(strstr(out, "usage: nagare decode"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_template_then_data),
	    cmocka_unit_test(test_data_then_template),
	    cmocka_unit_test(test_data_alone),
	    cmocka_unit_test(test_raw_v5_and_missing_file),
	    cmocka_unit_test(test_malformed_counted),
	    cmocka_unit_test(test_json_out_and_usage),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
