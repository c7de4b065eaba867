/*
 * test_collect.c — end to end: `$NG_BIN collect` as a child process
 * receives real NetFlow v5 export packets over UDP on 127.0.0.1, stops on
 * SIGTERM, and the store holds exactly the records they carried.
 *
 * Input: graylog2-server_raw/netflow-v5-1.dat, twelve v5 packets back to
 * back (30 records).  Expected values from tshark, on a copy wrapped with
 * text2pcap (one UDP packet per v5 packet) and dissected with
 * `-d udp.port==2055,cflow`:
 *   - 30 records; sum of cflow.packets 230, of cflow.octets 18684, of
 *     cflow.srcport 818075;
 *   - packet 1, pdu 1: 10.0.2.2:54435 → 10.0.2.15:22, TCP, flags 0x10,
 *     5 packets, 230 octets; Timestamp 2015-05-02 18:38:08.280328 UTC,
 *     SysUptime 3.381 s, EndTime 2.577 s, Duration 2.578 s, so
 *     flow_end = 1430591888280 − (3381 − 2577) = 1430591887476 ms and
 *     flow_start = flow_end − 2578 = 1430591884898 ms.
 *
 * Also: sFlow over UDP with counter samples, and an exporter restart
 * (test_collect_exporter_restart).
 */
#include <arpa/inet.h>
#include <errno.h>
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

#include "core/addr.h"
#include "core/field.h"
#include "net/capture.h"
#include "store/counters.h"
#include "store/store.h"
#include "test_restart_packets.h"

#include "e2e_util.h"

static pid_t start_collector_at(const char *bin, const char *store, const char *listen,
                                const char *json, const char *log)
{
	/* the capture is from 2015: replayed, its flows would be
	 * time-implausible (docs/security.md) without --max-past */
	if (json)
		return eu_spawn(log,
		                (char *const[]){(char *)bin, "collect", "--store", (char *)store,
		                                "--listen", (char *)listen, "--json", (char *)json,
		                                "--max-past", "36600d", NULL});
	return eu_spawn(log, (char *const[]){(char *)bin, "collect", "--store", (char *)store,
	                                     "--listen", (char *)listen, "--stats-interval", "1",
	                                     "--max-past", "36600d", NULL});
}

static pid_t start_collector(const char *bin, const char *store, uint16_t port, const char *log)
{
	char listen[64];
	snprintf(listen, sizeof listen, "127.0.0.1:%u", port);
	return start_collector_at(bin, store, listen, NULL, log);
}

/* Waits until the child's log says it listens (or it died). */
static bool wait_ready(const char *log, pid_t pid)
{
	return eu_wait_log(log, pid, "listening on", 5000);
}

/* Sends each v5 packet of the file as one datagram (size 24 + 48 × count). */
static int send_v5_file(const uint8_t *b, size_t len, uint16_t port)
{
	int n = 0;
	for (size_t off = 0; off + 24 <= len;) {
		size_t plen = 24 + (size_t)(b[off + 2] << 8 | b[off + 3]) * 48;
		assert_true(off + plen <= len);
		eu_send_udp(0, port, b + off, plen);
		off += plen;
		n++;
	}
	return n;
}

struct rows {
	size_t n;
	uint64_t packets, bytes, sport_sum;
	bool found_first;
	ng_flow first;
};

#define COL(b, f, T, i) (((const T *)(b)->col[f])[i])

static int on_rows(const ng_column_batch *b, void *arg)
{
	struct rows *r = arg;
	for (size_t i = 0; i < b->n; i++) {
		r->n++;
		r->packets += COL(b, NG_F_PACKETS, uint64_t, i);
		r->bytes += COL(b, NG_F_BYTES, uint64_t, i);
		r->sport_sum += COL(b, NG_F_SRC_PORT, uint16_t, i);
		if (COL(b, NG_F_FLOW_START, uint64_t, i) == UINT64_C(1430591884898) &&
		    COL(b, NG_F_BYTES, uint64_t, i) == 230) {
			ng_flow *f = &r->first;
			r->found_first = true;
			f->flow_end = COL(b, NG_F_FLOW_END, uint64_t, i);
			f->packets = COL(b, NG_F_PACKETS, uint64_t, i);
			f->src_port = COL(b, NG_F_SRC_PORT, uint16_t, i);
			f->dst_port = COL(b, NG_F_DST_PORT, uint16_t, i);
			f->protocol = COL(b, NG_F_PROTOCOL, uint8_t, i);
			f->tcp_flags = COL(b, NG_F_TCP_FLAGS, uint8_t, i);
			f->flow_version = COL(b, NG_F_FLOW_VERSION, uint8_t, i);
			memcpy(f->src_addr, (const uint8_t *)b->col[NG_F_SRC_ADDR] + 16 * i, 16);
			memcpy(f->dst_addr, (const uint8_t *)b->col[NG_F_DST_ADDR] + 16 * i, 16);
			memcpy(f->exporter, (const uint8_t *)b->col[NG_F_EXPORTER] + 16 * i, 16);
		}
	}
	return 0;
}

static void test_collect_v5_end_to_end(void **state)
{
	(void)state;
	const char *bin = getenv("NG_BIN"), *td = getenv("NG_TESTDATA");
	char input[4096];
	snprintf(input, sizeof input, "%s/captures/graylog2-server_raw/netflow-v5-1.dat",
	         td ? td : "");
	if (!bin || access(bin, X_OK) != 0 || !td || access(input, R_OK) != 0) {
		print_message("skipped: needs NG_BIN (the nagare binary) and NG_TESTDATA\n");
		skip();
	}
	static uint8_t v5[4096];
	FILE *f = fopen(input, "rb");
	assert_non_null(f);
	size_t v5len = fread(v5, 1, sizeof v5, f);
	fclose(f);
	assert_int_equal(v5len, 1728);

	char dir[] = "/tmp/ng_test_collect_XXXXXX";
	assert_non_null(mkdtemp(dir));
	char store[4200], log[4300], exp[4300];
	snprintf(store, sizeof store, "%s/store", dir);
	snprintf(log, sizeof log, "%s/collect.log", dir);
	snprintf(exp, sizeof exp, "%s/state/exporters.json", store);

	uint16_t port = eu_free_port(SOCK_DGRAM);
	pid_t pid = start_collector(bin, store, port, log);
	bool ready = wait_ready(log, pid);
	if (!ready) {
		size_t len;
		char *s = eu_slurp(log, &len);
		print_message("collector did not start: %s\n", s ? s : "(no log)");
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		fail();
	}
	assert_int_equal(send_v5_file(v5, v5len, port), 12);
	eu_sleep_ms(300);
	assert_int_equal(eu_stop(pid), 0);

	struct rows r = {0};
	ng_scan_stats st = {0};
	assert_int_equal(ng_store_scan(store, 0, UINT64_MAX, ng_colset_all(), on_rows, &r, &st), 0);
	assert_int_equal(st.errors, 0);
	assert_int_equal(r.n, 30);
	assert_int_equal(r.packets, 230);
	assert_int_equal(r.bytes, 18684);
	assert_int_equal(r.sport_sum, 818075);
	assert_true(r.found_first);
	char a[NG_ADDR_STRLEN];
	assert_string_equal(ng_addr_format(r.first.src_addr, a), "10.0.2.2");
	assert_string_equal(ng_addr_format(r.first.dst_addr, a), "10.0.2.15");
	assert_string_equal(ng_addr_format(r.first.exporter, a), "127.0.0.1");
	assert_int_equal(r.first.src_port, 54435);
	assert_int_equal(r.first.dst_port, 22);
	assert_int_equal(r.first.protocol, 6);
	assert_int_equal(r.first.tcp_flags, 0x10);
	assert_int_equal(r.first.packets, 5);
	assert_int_equal(r.first.flow_end, UINT64_C(1430591887476));
	assert_int_equal(r.first.flow_version, 5);

	/* The counters file names the exporter with its 12 packets, 30 records. */
	size_t len;
	char *js = eu_slurp(exp, &len);
	assert_non_null(js);
	assert_non_null(strstr(js, "\"exporter\":\"127.0.0.1\",\"domain\":0,\"version\":5"));
	assert_non_null(strstr(js, "\"packets\":12,\"bytes\":1728,\"records\":30,"));
	/* and the template state was saved */
	char tpl[4400];
	snprintf(tpl, sizeof tpl, "%s/state/templates", store);
	assert_int_equal(access(tpl, R_OK), 0);

	/* A restart on the same store carries the counters on: 12 more.  A
	 * fresh log, so readiness is not read from the first run's. */
	unlink(log);
	pid = start_collector(bin, store, port, log);
	assert_true(wait_ready(log, pid));
	assert_int_equal(send_v5_file(v5, v5len, port), 12);
	eu_sleep_ms(300);
	assert_int_equal(eu_stop(pid), 0);
	js = eu_slurp(exp, &len);
	assert_non_null(strstr(js, "\"packets\":24,\"bytes\":3456,\"records\":60,"));
	memset(&r, 0, sizeof r);
	assert_int_equal(ng_store_scan(store, 0, UINT64_MAX, ng_colset_all(), on_rows, &r, NULL),
	                 0);
	assert_int_equal(r.n, 60);
	eu_rm_rf(dir);
}

/* IPv6 transport and --json: the v5 packets sent from ::1 to [::1]:PORT
 * come out as 30 NDJSON lines naming the exporter ::1. */
static void test_collect_ipv6_json(void **state)
{
	(void)state;
	const char *bin = getenv("NG_BIN"), *td = getenv("NG_TESTDATA");
	char input[4096];
	snprintf(input, sizeof input, "%s/captures/graylog2-server_raw/netflow-v5-1.dat",
	         td ? td : "");
	if (!bin || access(bin, X_OK) != 0 || !td || access(input, R_OK) != 0) {
		print_message("skipped: needs NG_BIN (the nagare binary) and NG_TESTDATA\n");
		skip();
	}
	static uint8_t v5[4096];
	FILE *f = fopen(input, "rb");
	assert_non_null(f);
	size_t v5len = fread(v5, 1, sizeof v5, f);
	fclose(f);
	char dir[] = "/tmp/ng_test_collect_XXXXXX";
	assert_non_null(mkdtemp(dir));
	char store[4200], log[4300], json[4300], listen[64];
	snprintf(store, sizeof store, "%s/store", dir);
	snprintf(log, sizeof log, "%s/collect.log", dir);
	snprintf(json, sizeof json, "%s/flows.ndjson", dir);
	/* a free port on ::1 */
	int fd = socket(AF_INET6, SOCK_DGRAM, 0);
	struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
	socklen_t al = sizeof a;
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
	getsockname(fd, (struct sockaddr *)&a, &al);
	close(fd);
	uint16_t port = ntohs(a.sin6_port);
	snprintf(listen, sizeof listen, "[::1]:%u", port);
	pid_t pid = start_collector_at(bin, store, listen, json, log);
	assert_true(wait_ready(log, pid));
	fd = socket(AF_INET6, SOCK_DGRAM, 0);
	for (size_t off = 0; off + 24 <= v5len;) {
		size_t plen = 24 + (size_t)(v5[off + 2] << 8 | v5[off + 3]) * 48;
		assert_int_equal(sendto(fd, v5 + off, plen, 0, (struct sockaddr *)&a, sizeof a),
		                 (ssize_t)plen);
		off += plen;
	}
	close(fd);
	eu_sleep_ms(300);
	assert_int_equal(eu_stop(pid), 0);
	size_t len;
	char *js = eu_slurp(json, &len);
	assert_non_null(js);
	size_t lines = 0;
	for (char *p = js; *p; p++)
		lines += *p == '\n';
	assert_int_equal(lines, 30);
	assert_non_null(strstr(js, "\"exporter\":\"::1\""));
	assert_non_null(strstr(js, "\"src_addr\":\"10.0.2.2\""));
	eu_rm_rf(dir);
}

struct sender {
	uint16_t port;
	int sent;
};

static int send_datagram(const ng_datagram *dg, void *arg)
{
	struct sender *s = arg;
	eu_send_udp(0, s->port, dg->data, dg->len);
	s->sent++;
	return 0;
}

static int count_rows(const ng_column_batch *b, void *arg)
{
	*(size_t *)arg += b->n;
	return 0;
}

static int count_samples(const ng_counter_sample *s, size_t n, void *arg)
{
	(void)s;
	*(size_t *)arg += n;
	return 0;
}

/*
 * sFlow: the 25 datagrams of tcpdump/sflow-print-v6.pcap, replayed to the
 * collector, leave 13 flow records in the flow store and 48 counter
 * samples in the counter store.  tshark counts the same:
 *   tshark -r F -T fields -E occurrence=a -e sflow_245.sampletype
 * gives sample type 1 (flow sample) 13 times and 2 (counters) 48 times.
 */
static void test_collect_sflow_counters(void **state)
{
	(void)state;
	const char *bin = getenv("NG_BIN"), *td = getenv("NG_TESTDATA");
	char input[4096];
	snprintf(input, sizeof input, "%s/captures/tcpdump/sflow-print-v6.pcap", td ? td : "");
	if (!bin || access(bin, X_OK) != 0 || !td || access(input, R_OK) != 0) {
		print_message("skipped: needs NG_BIN (the nagare binary) and NG_TESTDATA\n");
		skip();
	}
	char dir[] = "/tmp/ng_test_collect_XXXXXX";
	assert_non_null(mkdtemp(dir));
	char store[4200], log[4300];
	snprintf(store, sizeof store, "%s/store", dir);
	snprintf(log, sizeof log, "%s/collect.log", dir);
	uint16_t port = eu_free_port(SOCK_DGRAM);
	pid_t pid = start_collector(bin, store, port, log);
	assert_true(wait_ready(log, pid));
	struct sender s = {.port = port};
	char err[512];
	assert_int_equal(ng_capture_read(input, send_datagram, &s, NULL, err, sizeof err), 0);
	assert_int_equal(s.sent, 25);
	eu_sleep_ms(300);
	assert_int_equal(eu_stop(pid), 0);
	size_t rows = 0, samples = 0;
	assert_int_equal(ng_store_scan(store, 0, UINT64_MAX, ng_colset_of(NG_F_FLOW_START),
	                               count_rows, &rows, NULL),
	                 0);
	assert_int_equal(rows, 13);
	uint64_t errors = 0;
	assert_int_equal(ng_counter_scan(store, 0, UINT64_MAX, count_samples, &samples, &errors),
	                 0);
	assert_int_equal(errors, 0);
	assert_int_equal(samples, 48);
	eu_rm_rf(dir);
}

/* Sends the `n` bytes at p as one datagram to 127.0.0.1:port, and lets
 * it arrive. */
static void send_bytes(const uint8_t *p, size_t n, uint16_t port)
{
	eu_send_udp(0, port, p, n);
	eu_sleep_ms(100);
}

struct raw_bytes {
	size_t n;
	uint64_t v[8];
};

static int on_bytes_raw(const ng_column_batch *b, void *arg)
{
	struct raw_bytes *r = arg;
	for (size_t i = 0; i < b->n; i++)
		if (r->n < 8)
			r->v[r->n++] = COL(b, NG_F_BYTES_RAW, uint64_t, i);
	return 0;
}

/* The bytes_raw of the stored rows, sorted. */
static struct raw_bytes stored_bytes(const char *store)
{
	struct raw_bytes r = {0};
	assert_int_equal(ng_store_scan(store, 0, UINT64_MAX, ng_colset_of(NG_F_BYTES_RAW),
	                               on_bytes_raw, &r, NULL),
	                 0);
	for (size_t i = 1; i < r.n; i++)
		for (size_t j = i; j && r.v[j - 1] > r.v[j]; j--) {
			uint64_t x = r.v[j];
			r.v[j] = r.v[j - 1];
			r.v[j - 1] = x;
		}
	return r;
}

static void stop_collector(pid_t pid)
{
	assert_int_equal(eu_stop(pid), 0);
}

/*
 * Exporter restart (decode/restart.c, docs/exporters.md): a v9 exporter
 * redefines template 256 after a restart and sends data before the new
 * template (test_restart_packets.h: layout A 1000 bytes, layout B
 * 123456789012 bytes).  The collector stores both flows with their own
 * layouts, logs the restart, counts it in exporters.json; started again,
 * it decodes the exporter's next data at once with the saved template.
 */
static void test_collect_exporter_restart(void **state)
{
	(void)state;
	const char *bin = eu_bin_or_skip();
	char dir[] = "/tmp/ng_test_collect_XXXXXX";
	assert_non_null(mkdtemp(dir));
	char store[4200], log[4300], xj[4300];
	snprintf(store, sizeof store, "%s/store", dir);
	snprintf(log, sizeof log, "%s/collect.log", dir);
	snprintf(xj, sizeof xj, "%s/state/exporters.json", store);
	uint16_t port = eu_free_port(SOCK_DGRAM);
	pid_t pid = start_collector(bin, store, port, log);
	assert_true(wait_ready(log, pid));
	uint32_t now = (uint32_t)time(NULL);
	struct tb t;
	rp_v9(&t, 864000000, now, 5000, 7, 'A', 'A');
	send_bytes(t.b, t.n, port);
	rp_v9(&t, 1000, now + 1, 0, 7, 0, 'B'); /* restarted: data first */
	send_bytes(t.b, t.n, port);
	rp_v9(&t, 1500, now + 1, 1, 7, 'B', 0);
	send_bytes(t.b, t.n, port);
	eu_sleep_ms(1500); /* the once-a-second log line */
	stop_collector(pid);
	size_t len;
	char *s = eu_slurp(log, &len);
	assert_non_null(s);
	assert_non_null(strstr(s, "1 exporter restart seen"));
	assert_non_null(strstr(s, "exporter 127.0.0.1 domain 7 NetFlow v9"));
	struct raw_bytes r = stored_bytes(store);
	assert_int_equal(r.n, 2);
	assert_int_equal(r.v[0], 1000);
	assert_int_equal(r.v[1], 123456789012ULL);
	s = eu_slurp(xj, &len);
	assert_non_null(s);
	/* the exporter's counters go on after "restarts" (sampler_*) */
	assert_true(strstr(s, "\"restarts\":1,") || strstr(s, "\"restarts\":1}"));
	assert_non_null(strstr(s, "\"held\":1,"));
	/* a collector restart alone: the exporter goes on (sequence 2,
	 * uptime 2.5 s), its data decodes at once with the saved layout B */
	unlink(log); /* wait_ready must see the new run's line */
	pid = start_collector(bin, store, port, log);
	assert_true(wait_ready(log, pid));
	rp_v9(&t, 2500, now + 2, 2, 7, 0, 'B');
	send_bytes(t.b, t.n, port);
	/* two export packets in one datagram (docs/exporters.md): both
	 * decoded, counted, and said by `nagare status` */
	struct tb two;
	rp_v9(&two, 2600, now + 3, 3, 7, 0, 'B');
	rp_v9(&t, 2700, now + 3, 4, 7, 0, 'B');
	memcpy(two.b + two.n, t.b, t.n);
	two.n += t.n;
	send_bytes(two.b, two.n, port);
	eu_sleep_ms(1200); /* the state file is written once a second */
	stop_collector(pid);
	r = stored_bytes(store);
	assert_int_equal(r.n, 5);
	char cmd[4400], out[8192];
	snprintf(cmd, sizeof cmd, "%s status --store %s", bin, store);
	assert_int_equal(eu_run(cmd, out, sizeof out), 0);
	assert_non_null(
	    strstr(out, "exporter quirks (docs/exporters.md): packets_concatenated 1\n"));
	assert_int_equal(r.v[2], 123456789012ULL);
	s = eu_slurp(xj, &len);
	/* the exporter's counters go on after "restarts" (sampler_*) */
	assert_true(strstr(s, "\"restarts\":1,") || strstr(s, "\"restarts\":1}"));
	assert_non_null(strstr(s, "\"template_misses\":1,"));
	eu_rm_rf(dir);
}

/* Usage errors exit 2 with the documented wording. */
static void test_collect_usage(void **state)
{
	(void)state;
	const char *bin = eu_bin_or_skip();
	char cmd[4300], out[512] = "";
	snprintf(cmd, sizeof cmd, "%s collect --x 2>&1", bin);
	assert_int_equal(eu_run(cmd, out, sizeof out), 2);
	assert_string_equal(out,
	                    "nagare collect: unknown option '--x'; see 'nagare collect --help'\n");
	/* no --store: NAGARE_STORE (else a default, cli/store_path.h) */
	snprintf(cmd, sizeof cmd,
	         "NAGARE_STORE=/proc/ng-no-store %s collect --listen 127.0.0.1:0 --no-http 2>&1",
	         bin);
	assert_int_equal(eu_run(cmd, out, sizeof out), 1);
	assert_non_null(strstr(out, "cannot create store directory /proc/ng-no-store/flows"));
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_collect_v5_end_to_end),
	    cmocka_unit_test(test_collect_ipv6_json),
	    cmocka_unit_test(test_collect_sflow_counters),
	    cmocka_unit_test(test_collect_exporter_restart),
	    cmocka_unit_test(test_collect_usage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
