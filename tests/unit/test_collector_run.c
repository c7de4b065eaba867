/*
 * test_collector_run.c — ng_collector_run's contract (collector.h), in
 * this process: started on a thread with a configuration struct (no
 * argv), it stores the NetFlow v5 records sent to it, calls the reload
 * function on SIGHUP, writes the state files, and on SIGTERM returns 0
 * with every record flushed; a store it cannot create or an address it
 * cannot bind makes it return 1 at once.
 *
 * Input: one v5 datagram built here (Cisco's NetFlow v5 export format:
 * a 24-byte header, then 48 bytes a record), two records of a TCP
 * exchange on port 22: 10.0.0.1:40000 → 10.0.0.2:22, 10 packets, 1500
 * bytes, and the answer 7 packets, 900 bytes.  Expected: 2 rows, 17
 * packets, 2400 bytes, both of service "ssh" (the built-in services
 * table, port 22: enrichment ran).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "collector/collector.h"
#include "decode/decoder.h"
#include "net/reuseport.h"
#include "core/addr.h"
#include "core/bytes.h"
#include "core/field.h"
#include "core/strtab.h"
#include "store/store.h"
#include "e2e_util.h"
#include "test_store_helpers.h"

/* One v5 record at p (48 bytes): addresses, packets, bytes, ports, TCP. */
static void v5_record(uint8_t *p, uint32_t src, uint32_t dst, uint32_t pkts, uint32_t bytes,
                      uint16_t sport, uint16_t dport)
{
	memset(p, 0, 48);
	ng_put_be32(p, src);
	ng_put_be32(p + 4, dst);
	ng_put_be32(p + 16, pkts);
	ng_put_be32(p + 20, bytes);
	ng_put_be32(p + 24, 90000); /* First, ms of sysUptime */
	ng_put_be32(p + 28, 95000); /* Last */
	ng_put_be16(p + 32, sport);
	ng_put_be16(p + 34, dport);
	p[37] = 0x18; /* tcp_flags: PSH ACK */
	p[38] = 6;    /* protocol: TCP */
}

static void send_v5(uint16_t port)
{
	uint8_t d[24 + 2 * 48] = {0};
	ng_put_be16(d, 5);
	ng_put_be16(d + 2, 2);
	ng_put_be32(d + 4, 100000); /* sysUptime, ms */
	ng_put_be32(d + 8, (uint32_t)time(NULL));
	v5_record(d + 24, 0x0a000001, 0x0a000002, 10, 1500, 40000, 22);
	v5_record(d + 72, 0x0a000002, 0x0a000001, 7, 900, 22, 40000);
	eu_send_udp(0, port, d, sizeof d);
}

static atomic_int reloads;

/* ng_collector_reload_fn: an empty configuration (built-in classes and
 * services only), counted. */
static int reload(void *arg, ng_config *cfg, char *err, size_t errlen)
{
	(void)arg, (void)err, (void)errlen;
	memset(cfg, 0, sizeof *cfg);
	atomic_fetch_add(&reloads, 1);
	return 0;
}

struct run {
	const ng_collector_config *cfg;
	int rc;
};

static void *run_main(void *arg)
{
	struct run *r = arg;
	r->rc = ng_collector_run(r->cfg);
	return NULL;
}

/* Waits up to `ms` for `path` to exist. */
static bool wait_file(const char *path, long ms)
{
	for (long t = 0; t < ms; t += 20) {
		if (access(path, F_OK) == 0)
			return true;
		eu_sleep_ms(20);
	}
	return false;
}

/* A collector's configuration on a fresh store (STORE = DIR/store) and a
 * free loopback UDP port, stats every second, an empty configuration:
 * each test sets what it needs in cfg, then runs it (run_main).  Keep it
 * in place: cfg points into it. */
struct fixture {
	char *dir;
	char store[300], listen[64];
	const char *listens[1];
	uint16_t port;
	ng_config conf;
	ng_collector_config cfg;
};

static void fixture_init(struct fixture *x, const char *tag)
{
	memset(x, 0, sizeof *x);
	x->dir = ts_make_store(tag);
	snprintf(x->store, sizeof x->store, "%s/store", x->dir);
	x->port = eu_free_port(SOCK_DGRAM);
	snprintf(x->listen, sizeof x->listen, "127.0.0.1:%u", x->port);
	x->listens[0] = x->listen;
	x->cfg = (ng_collector_config){.store = x->store,
	                               .listen = x->listens,
	                               .nlisten = 1,
	                               .stats_interval = 1,
	                               .config = &x->conf};
}

static void fixture_free(struct fixture *x)
{
	ts_rm_rf(x->dir);
	free(x->dir);
}

struct sums {
	size_t n, ssh; /* rows, and rows whose service is "ssh" */
	uint64_t packets, bytes;
};

static int on_rows(const ng_column_batch *b, void *arg)
{
	struct sums *s = arg;
	for (size_t i = 0; i < b->n; i++) {
		s->n++;
		s->packets += ((const uint64_t *)b->col[NG_F_PACKETS])[i];
		s->bytes += ((const uint64_t *)b->col[NG_F_BYTES])[i];
		s->ssh += !strcmp(ng_str(((const uint32_t *)b->col[NG_F_SERVICE])[i]), "ssh");
	}
	return 0;
}

static void test_run_store_reload_stop(void **state)
{
	(void)state;
	struct fixture x;
	fixture_init(&x, "collector_run");
	const char *store = x.store;
	const uint16_t port = x.port;
	char path[400];
	x.cfg.enrich = true;
	x.cfg.options_names = true;
	x.cfg.reload = reload;
	struct run r = {.cfg = &x.cfg, .rc = -1};
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, run_main, &r), 0);
	/* interfaces.tsv: the first report, so the loop runs */
	snprintf(path, sizeof path, "%s/state/interfaces.tsv", store);
	assert_true(wait_file(path, 10000));
	send_v5(port);
	assert_int_equal(kill(getpid(), SIGHUP), 0);
	for (int i = 0; i < 250 && !atomic_load(&reloads); i++)
		eu_sleep_ms(20);
	assert_int_equal(atomic_load(&reloads), 1);
	snprintf(path, sizeof path, "%s/state/exporters.json", store);
	assert_true(wait_file(path, 5000)); /* the flush thread wrote a report */
	assert_int_equal(kill(getpid(), SIGTERM), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(r.rc, 0);

	struct sums s = {0};
	assert_int_equal(ng_store_scan(store, 0, UINT64_MAX,
	                               (ng_colset)NG_COLSET(NG_F_PACKETS, NG_F_BYTES, NG_F_SERVICE),
	                               on_rows, &s, NULL),
	                 0);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.packets, 17);
	assert_int_equal(s.bytes, 2400);
	assert_int_equal(s.ssh, 2); /* enriched (at the flush: no NDJSON) */
	snprintf(path, sizeof path, "%s/state/templates", store);
	assert_int_equal(access(path, F_OK), 0);
	fixture_free(&x);
}

/* An IPFIX message (RFC 7011 §3) of one template set: template 256 of
 * domain 7, sourceIPv4Address (IE 8), destinationIPv4Address (12),
 * octetDeltaCount (1, 8 bytes), packetDeltaCount (2, 8 bytes). */
static void send_ipfix_template(uint16_t port)
{
	static const uint16_t fields[4][2] = {{8, 4}, {12, 4}, {1, 8}, {2, 8}};
	uint8_t d[16 + 4 + 4 + 16] = {0};
	ng_put_be16(d, 10);
	ng_put_be16(d + 2, sizeof d);
	ng_put_be32(d + 4, (uint32_t)time(NULL));
	ng_put_be32(d + 12, 7); /* observation domain */
	ng_put_be16(d + 16, 2); /* template set */
	ng_put_be16(d + 18, 4 + 4 + 16);
	ng_put_be16(d + 20, 256); /* template ID */
	ng_put_be16(d + 22, 4);   /* field count */
	for (int i = 0; i < 4; i++) {
		ng_put_be16(d + 24 + 4 * i, fields[i][0]);
		ng_put_be16(d + 26 + 4 * i, fields[i][1]);
	}
	eu_send_udp(0, port, d, sizeof d);
}

/* Templates in STORE/state/templates that load into a fresh decoder. */
static uint64_t saved_templates(const char *path)
{
	ng_decoder *d = ng_decoder_new(NULL);
	assert_non_null(d);
	ng_limit_stats l = {0};
	if (ng_decoder_load(d, path) == 0)
		ng_decoder_limit_stats(d, &l);
	ng_decoder_free(d);
	return l.templates;
}

/* A template the collector learnt is in the state file while it runs
 * (within NG_TEMPLATE_SAVE_MS and a second), not only after a clean stop:
 * a kill -9 does not take every template learnt since the start with it.
 * (Before, the file was written at the stop only.) */
static void test_run_templates_saved_while_running(void **state)
{
	(void)state;
	struct fixture x;
	fixture_init(&x, "collector_tpl");
	const char *store = x.store;
	const uint16_t port = x.port;
	char path[400];
	struct run r = {.cfg = &x.cfg, .rc = -1};
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, run_main, &r), 0);
	snprintf(path, sizeof path, "%s/state/interfaces.tsv", store);
	assert_true(wait_file(path, 10000)); /* the first report: the loop runs */
	send_ipfix_template(port);
	snprintf(path, sizeof path, "%s/state/templates", store);
	uint64_t n = 0;
	for (long t = 0; t < NG_TEMPLATE_SAVE_MS + 3000 && !(n = saved_templates(path)); t += 100)
		eu_sleep_ms(100);
	assert_int_equal(n, 1);
	assert_int_equal(kill(getpid(), SIGTERM), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(r.rc, 0);
	assert_int_equal(saved_templates(path), 1);
	fixture_free(&x);
}

/* An IPFIX message (RFC 7011 §3) from exporter 127.0.0.`k` naming its
 * interface 5 "if-k" (description "desc k") in options data: an options
 * template set (3) of template 300 scoped by ingressInterface (IE 10),
 * interfaceName (82) and interfaceDescription (83) of 16 bytes each, and
 * its data record. */
static void send_ipfix_ifname(uint16_t port, unsigned k)
{
	uint8_t d[16 + 4 + 6 + 12 + 4 + 4 + 32] = {0};
	ng_put_be16(d, 10);
	ng_put_be16(d + 2, sizeof d);
	ng_put_be32(d + 4, (uint32_t)time(NULL));
	ng_put_be32(d + 12, 1); /* observation domain */
	uint8_t *t = d + 16;
	ng_put_be16(t, 3);
	ng_put_be16(t + 2, 4 + 6 + 12);
	ng_put_be16(t + 4, 300); /* template ID */
	ng_put_be16(t + 6, 3);   /* field count */
	ng_put_be16(t + 8, 1);   /* scope field count */
	ng_put_be16(t + 10, 10), ng_put_be16(t + 12, 4);
	ng_put_be16(t + 14, 82), ng_put_be16(t + 16, 16);
	ng_put_be16(t + 18, 83), ng_put_be16(t + 20, 16);
	uint8_t *s = t + 22;
	ng_put_be16(s, 300);
	ng_put_be16(s + 2, 4 + 4 + 32);
	ng_put_be32(s + 4, 5);
	snprintf((char *)s + 8, 16, "if-%u", k);
	snprintf((char *)s + 24, 16, "desc %u", k);
	eu_send_udp(0x7f000000u | k, port, d, sizeof d);
}

/* With two receive workers, STORE/state/interfaces.tsv lists the names
 * options data gave on either worker (before, worker 0 wrote its own
 * exporters' names only): 8 exporters, which the reuseport program
 * shares between the two. */
static void test_run_workers_interfaces(void **state)
{
	(void)state;
	struct fixture x;
	fixture_init(&x, "collector_ifs");
	const char *store = x.store;
	const uint16_t port = x.port;
	char path[400];
	x.cfg.workers = 2;
	x.cfg.options_names = true;
	unsigned on[2] = {0, 0};
	for (unsigned k = 10; k < 18; k++) {
		uint8_t a[16];
		char s[32];
		snprintf(s, sizeof s, "127.0.0.%u", k);
		assert_true(ng_addr_parse(s, a));
		on[ng_reuseport_worker(a, 2)]++;
	}
	assert_true(on[0] && on[1]); /* both workers have exporters */
	struct run r = {.cfg = &x.cfg, .rc = -1};
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, run_main, &r), 0);
	snprintf(path, sizeof path, "%s/state/interfaces.tsv", store);
	assert_true(wait_file(path, 10000)); /* the first report: the loop runs */
	for (unsigned k = 10; k < 18; k++)
		send_ipfix_ifname(port, k);
	/* worker 1's templates reach its file while it runs: through the
	 * flush thread (the receive workers never write files) */
	snprintf(path, sizeof path, "%s/state/templates.1", store);
	uint64_t n = 0;
	for (long t = 0; t < NG_TEMPLATE_SAVE_MS + 3000 && !(n = saved_templates(path)); t += 100)
		eu_sleep_ms(100);
	assert_int_equal(n, on[1]); /* one options template per exporter */
	eu_sleep_ms(1100);          /* a second: each worker takes its names */
	assert_int_equal(kill(getpid(), SIGTERM), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(r.rc, 0);
	snprintf(path, sizeof path, "%s/state/interfaces.tsv", store);
	const char *tsv = eu_slurp(path, NULL);
	assert_non_null(tsv);
	for (unsigned k = 10; k < 18; k++) {
		char line[96];
		snprintf(line, sizeof line, "127.0.0.%u\t5\tif-%u\tdesc %u\toptions\n", k, k, k);
		if (!strstr(tsv, line))
			fail_msg("interfaces.tsv lacks \"%s\":\n%s", line, tsv);
	}
	fixture_free(&x);
}

static void test_run_start_errors(void **state)
{
	(void)state;
	ng_config conf = {0};
	const char *bad[] = {"300.0.0.1:2055"};
	ng_collector_config cfg = {
	    .store = "/proc/ng_no_store", .stats_interval = 60, .config = &conf};
	assert_int_equal(ng_collector_run(&cfg), 1); /* cannot create the store */
	char *dir = ts_make_store("collector_err");
	cfg.store = dir;
	cfg.listen = bad;
	cfg.nlisten = 1;
	assert_int_equal(ng_collector_run(&cfg), 1); /* not an address */
	ts_rm_rf(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_run_store_reload_stop),
	    cmocka_unit_test(test_run_templates_saved_while_running),
	    cmocka_unit_test(test_run_workers_interfaces),
	    cmocka_unit_test(test_run_start_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
