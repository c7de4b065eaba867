/*
 * test_sink_clickhouse.c — the sink's RowBinary encoding (sink/clickhouse.c)
 * read back by ClickHouse itself.
 *
 * A private clickhouse-server (tests/clickhouse/server.sh: its own config,
 * data directory and loopback ports) takes three rows through the sink;
 * clickhouse-client then prints them, and each value is compared with
 * text written here by hand (not produced by nagare): integers at the
 * limits of their types, an IPv4-mapped and an IPv6 address as
 * IPv6NumToString prints them, a MAC in hex, strings of 0, 2 and 200
 * bytes (a LEB128 length of two bytes) with UTF-8 in them, a column no row
 * holds (its default, 0), the `date` column ClickHouse computes from
 * flow_start (the UTC day), and one batch_id for all three rows.  Skipped
 * without clickhouse-server (scripts/setup installs it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/field.h"
#include "clickhouse/client.h"
#include "core/strtab.h"
#include "sink/clickhouse.h"

static char dir[] = "/tmp/test_sink_ch.XXXXXX";
static char helper[4096];
static unsigned http_port, tcp_port;
static int server_pid;

/* Runs sh -c cmd and returns its stdout (static, NUL-terminated). */
static const char *sh(const char *cmd)
{
	static char out[65536];
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	size_t n = fread(out, 1, sizeof out - 1, p);
	out[n] = 0;
	pclose(p);
	return out;
}

/* A test that aborts (a sanitizer's report, a failed assertion's
 * longjmp past the teardown) takes the server with it. */
static void on_abort(int sig)
{
	if (server_pid > 0)
		kill(server_pid, SIGKILL);
	signal(sig, SIG_DFL);
	raise(sig);
}

static int start_server(void **state)
{
	(void)state;
	const char *src = getenv("NG_SRC");
	snprintf(helper, sizeof helper, "%s/tests/clickhouse/server.sh", src ? src : ".");
	if (access(helper, R_OK) || system("command -v clickhouse-server >/dev/null 2>&1") != 0)
		return 0; /* the tests skip */
	if (!mkdtemp(dir))
		return -1;
	char cmd[8192];
	snprintf(cmd, sizeof cmd,
	         ". '%s' && ch_start '%s/ch' >&2 && echo \"$CH_HTTP $CH_TCP $CH_PID\"", helper,
	         dir);
	const char *o = sh(cmd);
	if (sscanf(o, "%u %u %d", &http_port, &tcp_port, &server_pid) != 3)
		return -1;
	signal(SIGABRT, on_abort);
	return 0;
}

static int stop_server(void **state)
{
	(void)state;
	if (server_pid > 0) {
		kill(server_pid, SIGKILL);
		char cmd[4200];
		snprintf(cmd, sizeof cmd, "sleep 0.5; rm -rf '%s'", dir);
		if (system(cmd) != 0)
			return -1;
	}
	return 0;
}

/* clickhouse-client --query q against the private server. */
static const char *client(const char *q)
{
	char cmd[8192];
	snprintf(cmd, sizeof cmd, "clickhouse-client --host 127.0.0.1 --port %u --query \"%s\"",
	         tcp_port, q);
	return sh(cmd);
}

#define ROWS 3

static void rowbinary_read_by_clickhouse(void **state)
{
	(void)state;
	if (!http_port) {
		fprintf(stderr, "test_sink_clickhouse: skipped: no clickhouse-server\n");
		skip();
	}
	/* the columns of three rows, as the store's flush hands them */
	uint64_t time_received[ROWS] = {1796293230123, 1796293231000, 1796293232000};
	uint64_t flow_start[ROWS] = {1796293230000, 1796293230001, 1796293231999};
	uint64_t bytes[ROWS] = {UINT64_MAX, 0, 1500};
	uint32_t in_if[ROWS] = {UINT32_MAX, 1, 0};
	uint16_t dst_port[ROWS] = {65535, 443, 0};
	uint8_t protocol[ROWS] = {6, 17, 255};
	uint8_t src_addr[ROWS][16] = {
	    {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 1},
	    {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1},
	    {0},
	};
	uint8_t src_mac[ROWS][6] = {
	    {0x00, 0x11, 0x22, 0x33, 0x44, 0x55}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, {0}};
	char city[201];
	memset(city, 'a', 200);
	city[200] = 0;
	memcpy(city, "\xc3\xa9", 2); /* é */
	uint32_t src_city[ROWS] = {ng_intern_cstr(city), ng_intern_cstr("JP"), 0};
	uint32_t service[ROWS] = {ng_intern_cstr("https"), 0, ng_intern_cstr("\xe6\xb5\x81")};
	const uint8_t *cols[NG_FIELD_COUNT] = {0};
	cols[NG_F_TIME_RECEIVED] = (const uint8_t *)time_received;
	cols[NG_F_FLOW_START] = (const uint8_t *)flow_start;
	cols[NG_F_BYTES] = (const uint8_t *)bytes;
	cols[NG_F_IN_IF] = (const uint8_t *)in_if;
	cols[NG_F_DST_PORT] = (const uint8_t *)dst_port;
	cols[NG_F_PROTOCOL] = protocol;
	cols[NG_F_SRC_ADDR] = &src_addr[0][0];
	cols[NG_F_SRC_MAC] = &src_mac[0][0];
	cols[NG_F_SRC_CITY] = (const uint8_t *)src_city;
	cols[NG_F_SERVICE] = (const uint8_t *)service;

	char url[128], spool[4200], err[1024];
	snprintf(url, sizeof url, "http://127.0.0.1:%u/unit", http_port);
	snprintf(spool, sizeof spool, "%s/spool", dir);
	ng_ch_sink_config cfg = {.conn = {.url = url}, .spool_dir = spool};
	ng_ch_sink *s = ng_ch_sink_open(&cfg, err, sizeof err);
	if (!s)
		fail_msg("sink: %s", err);
	ng_ch_sink_put(s, cols, ROWS);
	ng_sink_stats st;
	assert_int_equal(ng_ch_sink_close(s, 20000, &st), 0);
	assert_int_equal(st.rows_sent, ROWS);
	assert_int_equal(st.batches_sent, 1);

	const char *got =
	    client("SELECT time_received, flow_start, bytes, in_if, dst_port, protocol, "
	           "IPv6NumToString(src_addr), hex(src_mac), length(src_city), "
	           "substring(src_city, 1, 2), service, out_if, toString(date) "
	           "FROM unit.flows ORDER BY flow_start FORMAT TSV");
	const char *want =
	    "1796293230123\t1796293230000\t18446744073709551615\t4294967295\t65535\t6\t"
	    "::ffff:192.0.2.1\t001122334455\t200\t\xc3\xa9\thttps\t0\t2026-12-03\n"
	    "1796293231000\t1796293230001\t0\t1\t443\t17\t2001:db8::1\tFFFFFFFFFFFF\t2\tJP\t\t0\t"
	    "2026-12-03\n"
	    "1796293232000\t1796293231999\t1500\t0\t0\t255\t::"
	    "\t000000000000\t0\t\t\xe6\xb5\x81\t0\t"
	    "2026-12-03\n";
	assert_string_equal(got, want);
	assert_string_equal(client("SELECT uniqExact(batch_id), min(batch_id) != 0 FROM unit.flows "
	                           "FORMAT TSV"),
	                    "1\t1\n");
}

/* An error body of 18.16's Distributed table with a shard down (as its
 * HTTP interface sends it): the log line's lines joined, so that the
 * message names the shard; cut to the buffer; control bytes as '?'. */
static void error_text_joins_lines(void **state)
{
	(void)state;
	static const char body[] =
	    "Code: 279, e.displayText() = DB::NetException: All connection tries failed. Log: \n"
	    "\n"
	    "Code: 210, e.displayText() = DB::NetException: Connection refused "
	    "(127.0.0.1:37843)\r\n"
	    "\n";
	char out[400];
	assert_string_equal(
	    ng_ch_error_text(body, sizeof body - 1, out, sizeof out),
	    "Code: 279, e.displayText() = DB::NetException: All connection tries "
	    "failed. Log: Code: 210, e.displayText() = DB::NetException: Connection "
	    "refused (127.0.0.1:37843)");
	assert_string_equal(ng_ch_error_text("\n\nCode: 1\x01", 11, out, sizeof out), "Code: 1?");
	assert_string_equal(ng_ch_error_text(body, sizeof body - 1, out, 11), "Code: 279,");
	assert_string_equal(ng_ch_error_text("ab\ncd", 5, out, 4), "ab");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(error_text_joins_lines),
	    cmocka_unit_test(rowbinary_read_by_clickhouse),
	};
	return cmocka_run_group_tests(tests, start_server, stop_server);
}
