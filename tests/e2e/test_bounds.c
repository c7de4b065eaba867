/*
 * test_bounds.c — end to end: `$NG_BIN collect` with its default limits
 * (core/limits.h, docs/security.md "Bounded state") under the floods a
 * hostile sender can make, on 127.0.0.0/8 (every address of it is local
 * on Linux, so a spoofed source is a socket bound to 127.x.y.z):
 *
 *   1. 20 000 exporters (NetFlow v5 from 127.1.x.y, one datagram each);
 *   2. 20 000 observation domains from one source (IPFIX, 127.0.0.3);
 *   3. 600 held-data sources (IPFIX data sets of a template never sent,
 *      4 × 64 000 bytes from each of 127.2.x.y);
 *   4. a 4 096-template flood from one source (127.0.0.4), each template
 *      16 370 fields in a 65 504-byte message;
 *
 * while a good exporter (IPFIX, 127.0.0.2, domain 1, template 256) keeps
 * sending.  After each phase: VmRSS (/proc/PID/status) stays under the
 * documented figure (RSS_LIMIT_MB) and grew by no more than what the
 * phase's limits allow (docs/security.md), and the evictions the API reports
 * (/api/v1/exporters "limits") are exactly what the phase forces.  Then
 * SIGTERM and a restart: the good exporter's data decodes at once, from
 * the saved templates, without re-announcing its template.
 *
 * Every check prints its figures and the test goes on to the end, failing
 * then if any check failed, so a run on an older binary (NG_BIN) shows all
 * the figures.  Under AddressSanitizer (libasan mapped in the collector)
 * the RSS checks are skipped: its shadow memory and quarantine are not
 * the collector's.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
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

#include "e2e_util.h"

/* The documented bound of the collector's RSS with the default limits
 * (docs/security.md "Bounded state"). */
#define RSS_LIMIT_MB 300

#define SPOOFED 20000
#define DOMAINS 20000
#define HELD_SOURCES 600
#define HELD_SETS 4
#define HELD_SET_BYTES 64000
#define TEMPLATES 4096
#define TPL_FIELDS 16370
/* defaults of core/limits.h */
#define LIM_EXPORTERS 10000
#define LIM_DOMAINS_PER_EXPORTER 256
#define LIM_TEMPLATE_BYTES_PER_DOMAIN (4u << 20)
#define LIM_HELD_BYTES (64u << 20)

static int failures;

/* A check that reports and goes on; the test fails at its end when any
 * did. */
static void check(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check(bool ok, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("%s ", ok ? "ok:  " : "FAIL:");
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
	va_end(ap);
	failures += !ok;
}

static void sleep_us(long us)
{
	struct timespec ts = {0, us * 1000L};
	nanosleep(&ts, NULL);
}

/* ---- the collector ---- */

static struct {
	const char *bin;
	char store[128], log[160];
	uint16_t udp, http;
	pid_t pid;
	bool asan;
} C;

/* Starts run `run` of the collector (its log: C.store.RUN.log). */
static void start(int run)
{
	char listen[64], http[64];
	snprintf(C.log, sizeof C.log, "%s.%d.log", C.store, run);
	unlink(C.log);
	snprintf(listen, sizeof listen, "127.0.0.1:%u", C.udp);
	snprintf(http, sizeof http, "127.0.0.1:%u", C.http);
	C.pid = eu_spawn(C.log,
	                 (char *const[]){(char *)C.bin, "collect", "--store", C.store, "--listen",
	                                 listen, "--http", http, "--stats-interval", "1",
	                                 /* the exact evictions below are one decoder's */
	                                 "--workers", "1", NULL});
	assert_true(eu_wait_log(C.log, C.pid, "dashboards and API at", 10000));
	char maps[64], line[512];
	snprintf(maps, sizeof maps, "/proc/%d/maps", (int)C.pid);
	FILE *f = fopen(maps, "r");
	while (f && fgets(line, sizeof line, f))
		C.asan |= strstr(line, "libasan") != NULL;
	if (f)
		fclose(f);
}

static void stop(void)
{
	int status = eu_stop(C.pid);
	check(status == 0, "collector exit status %d", status);
}

static long rss_mb(void)
{
	char p[64], line[256];
	snprintf(p, sizeof p, "/proc/%d/status", (int)C.pid);
	FILE *f = fopen(p, "r");
	long kb = -1;
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, "VmRSS:", 6))
			kb = strtol(line + 6, NULL, 10);
	if (f)
		fclose(f);
	return kb / 1024;
}

static long rss_before; /* MB at the end of the previous phase */

/* VmRSS after a phase (2 s after it, so that the collector's once-a-second
 * work has run: snapshots, malloc_trim after evictions): under the
 * documented bound, and grown by at most `growth_mb` (what the limits let
 * this phase add, docs/security.md) since the previous phase. */
static void check_rss(const char *phase, long growth_mb)
{
	eu_sleep_ms(2000);
	long mb = rss_mb();
	if (C.asan) {
		printf("note: %s: VmRSS %ld MB (sanitizer build: not checked)\n", phase, mb);
		return;
	}
	check(mb >= 0 && mb < RSS_LIMIT_MB, "%s: VmRSS %ld MB (documented bound %d MB)", phase, mb,
	      RSS_LIMIT_MB);
	check(mb - rss_before <= growth_mb, "%s: VmRSS grew %ld MB (at most %ld MB)", phase,
	      mb - rss_before, growth_mb);
	rss_before = mb;
}

/* Segments under the store (the first flush allocates the writer's
 * buffers and compression contexts once: the baseline is taken after). */
static bool wait_segment(void)
{
	char flows[160];
	snprintf(flows, sizeof flows, "%s/flows", C.store);
	for (int i = 0; i < 150; i++) {
		if (eu_count_suffix(flows, ".seg"))
			return true;
		eu_sleep_ms(100);
	}
	return false;
}

/* ---- the API ---- */

static char *api_body; /* the last answer, malloc'd */

/* GET `path` from the collector's API into api_body; false on failure. */
static bool api_get(const char *path)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET,
	                        .sin_port = htons(C.http),
	                        .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		close(fd);
		return false;
	}
	char req[256];
	int n = snprintf(req, sizeof req,
	                 "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", path);
	if (write(fd, req, (size_t)n) != n) {
		close(fd);
		return false;
	}
	size_t cap = 1 << 20, len = 0;
	char *b = malloc(cap);
	ssize_t k;
	while (b && (k = read(fd, b + len, cap - len - 1)) > 0) {
		len += (size_t)k;
		if (cap - len < 4096) {
			char *nb = realloc(b, cap *= 2);
			if (!nb) {
				free(b);
				b = NULL;
			}
			b = nb;
		}
	}
	close(fd);
	if (!b)
		return false;
	b[len] = 0;
	free(api_body);
	api_body = b;
	return strstr(b, " 200 ") != NULL;
}

/* The number after "key": in s (from `after`, when given), or -1. */
static int64_t num(const char *s, const char *after, const char *key)
{
	if (!s)
		return -1;
	if (after && !(s = strstr(s, after)))
		return -1;
	char k[96];
	snprintf(k, sizeof k, "\"%s\":", key);
	const char *p = strstr(s, k);
	return p ? strtoll(p + strlen(k), NULL, 10) : -1;
}

static int64_t limit_stat(const char *key)
{
	return num(api_body, "\"limits\":{", key);
}

/* The value of `key` in the row of exporter `ex`, domain `dom`. */
static int64_t row_stat(const char *ex, unsigned dom, const char *key)
{
	char anchor[96];
	snprintf(anchor, sizeof anchor, "\"exporter\":\"%s\",\"domain\":%u,", ex, dom);
	return num(api_body, anchor, key);
}

static int64_t run_base; /* the listener's count from earlier runs (merged in) */

/* Waits until the API's listener has counted `datagrams` this run (the
 * live snapshot is once a second, the decoding may lag the sender);
 * leaves the answer in api_body.  False after 30 s. */
static bool wait_datagrams(int64_t datagrams)
{
	datagrams += run_base;
	for (int i = 0; i < 300; i++) {
		if (api_get("/api/v1/exporters") &&
		    num(api_body, "\"listener\":{", "datagrams") +
		            num(api_body, "\"listener\":{", "drops") >=
		        datagrams)
			return true;
		eu_sleep_ms(100);
	}
	return false;
}

/* ---- senders ---- */

static int64_t sent; /* datagrams sent in this collector run */

/* Sends `len` bytes from 127.a.b.c (port chosen by the kernel). */
static void send_from(uint32_t src, const void *p, size_t len)
{
	eu_send_udp(src, C.udp, p, len);
	sent++;
}

#define ADDR(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))
#define GOOD ADDR(127, 0, 0, 2)

static uint8_t pkt[65536];
static size_t plen;

static void p16(uint16_t v)
{
	pkt[plen++] = (uint8_t)(v >> 8);
	pkt[plen++] = (uint8_t)v;
}

static void p32(uint32_t v)
{
	p16((uint16_t)(v >> 16));
	p16((uint16_t)v);
}

static void ipfix_begin(uint32_t domain)
{
	plen = 0;
	p16(10), p16(0), p32((uint32_t)time(NULL)), p32(0), p32(domain);
}

static void ipfix_end(void)
{
	pkt[2] = (uint8_t)(plen >> 8);
	pkt[3] = (uint8_t)plen;
}

static size_t set_begin(uint16_t id)
{
	size_t at = plen;
	p16(id), p16(0);
	return at;
}

static void set_end(size_t at)
{
	pkt[at + 2] = (uint8_t)((plen - at) >> 8);
	pkt[at + 3] = (uint8_t)(plen - at);
}

/* The good exporter's template 256: source, destination, bytes, packets. */
static void good_template(void)
{
	ipfix_begin(1);
	size_t s = set_begin(2);
	p16(256), p16(4);
	p16(8), p16(4), p16(12), p16(4), p16(1), p16(4), p16(2), p16(4);
	set_end(s);
	ipfix_end();
	send_from(GOOD, pkt, plen);
}

static int64_t good_records; /* records the good exporter sent */

/* One data set of template 256 with 10 records. */
static void good_data(void)
{
	ipfix_begin(1);
	size_t s = set_begin(256);
	for (uint32_t i = 0; i < 10; i++)
		p32(ADDR(192, 0, 2, 1)), p32(ADDR(198, 51, 100, i)), p32(1000), p32(10);
	set_end(s);
	ipfix_end();
	send_from(GOOD, pkt, plen);
	good_records += 10;
}

static void v5_one(uint32_t src)
{
	plen = 0;
	p16(5), p16(1), p32(1000), p32((uint32_t)time(NULL)), p32(0), p32(0), p32(0);
	p32(ADDR(192, 0, 2, 1)), p32(ADDR(198, 51, 100, 1)), p32(0);
	p16(1), p16(2), p32(3), p32(300), p32(900), p32(950), p16(1234), p16(80);
	pkt[plen++] = 0, pkt[plen++] = 0x10, pkt[plen++] = 6, pkt[plen++] = 0;
	p16(0), p16(0), pkt[plen++] = 24, pkt[plen++] = 24, p16(0);
	send_from(src, pkt, plen);
}

/* ---- the phases ---- */

static struct {
	int64_t exporters_evicted, domains_evicted, templates_evicted, held_evicted;
} was;

static void remember(void)
{
	was.exporters_evicted = limit_stat("exporters_evicted");
	was.domains_evicted = limit_stat("domains_evicted");
	was.templates_evicted = limit_stat("templates_evicted");
	was.held_evicted = limit_stat("held_evicted");
}

static void phase_exporters(void)
{
	for (uint32_t i = 0; i < SPOOFED; i++) {
		v5_one(ADDR(127, 1, 0, 0) + 1 + i);
		if (i % 500 == 0)
			good_data();
		if (i % 64 == 0)
			sleep_us(200);
	}
	good_data();
	check(wait_datagrams(sent), "exporters: %" PRId64 " datagrams counted", sent);
	check_rss("20000 spoofed exporters", LIM_EXPORTERS * 5 / 1024);
	/* 20 001 exporters (the good one never the least recently seen) */
	int64_t held = limit_stat("exporters");
	int64_t ev = limit_stat("exporters_evicted");
	check(held == LIM_EXPORTERS, "exporters held %" PRId64 " (limits.exporters %d)", held,
	      LIM_EXPORTERS);
	check(ev == SPOOFED + 1 - LIM_EXPORTERS, "exporters evicted %" PRId64 " (expected %d)", ev,
	      SPOOFED + 1 - LIM_EXPORTERS);
	check(ev > 0 && limit_stat("domains_evicted") == ev, "domains evicted with them %" PRId64,
	      limit_stat("domains_evicted"));
	int64_t got = row_stat("127.0.0.2", 1, "records");
	check(got == good_records, "good exporter records %" PRId64 " (sent %" PRId64 ")", got,
	      good_records);
	remember();
}

static void phase_domains(void)
{
	for (uint32_t dom = 1000; dom < 1000 + DOMAINS; dom++) {
		ipfix_begin(dom);
		size_t s = set_begin(2);
		p16(300), p16(1), p16(8), p16(4);
		set_end(s);
		ipfix_end();
		send_from(ADDR(127, 0, 0, 3), pkt, plen);
		if (dom % 500 == 0)
			good_data();
		if (dom % 64 == 0)
			sleep_us(200);
	}
	good_data();
	check(wait_datagrams(sent), "domains: %" PRId64 " datagrams counted", sent);
	check_rss("20000 domains from one source", 32);
	/* its own oldest domains go (limits.domains_per_exporter), and one
	 * spoofed exporter made room for the new source */
	int64_t dev = limit_stat("domains_evicted") - was.domains_evicted;
	int64_t eev = limit_stat("exporters_evicted") - was.exporters_evicted;
	check(dev == DOMAINS - LIM_DOMAINS_PER_EXPORTER + 1,
	      "domains evicted %" PRId64 " (expected %d)", dev,
	      DOMAINS - LIM_DOMAINS_PER_EXPORTER + 1);
	check(eev == 1, "exporters evicted %" PRId64 " (expected 1)", eev);
	int64_t tev = limit_stat("templates_evicted") - was.templates_evicted;
	check(tev == DOMAINS - LIM_DOMAINS_PER_EXPORTER,
	      "templates evicted with their domains %" PRId64 " (expected %d)", tev,
	      DOMAINS - LIM_DOMAINS_PER_EXPORTER);
	int64_t got = row_stat("127.0.0.2", 1, "records");
	check(got == good_records, "good exporter records %" PRId64 " (sent %" PRId64 ")", got,
	      good_records);
	remember();
}

static void phase_held(void)
{
	for (uint32_t src = 0; src < HELD_SOURCES; src++) {
		for (int k = 0; k < HELD_SETS; k++) {
			ipfix_begin(1);
			size_t s = set_begin(999);
			memset(pkt + plen, 0xab, HELD_SET_BYTES);
			plen += HELD_SET_BYTES;
			set_end(s);
			ipfix_end();
			send_from(ADDR(127, 2, 0, 0) + 1 + src, pkt, plen);
			sleep_us(100);
		}
		if (src % 50 == 0)
			good_data();
	}
	good_data();
	check(wait_datagrams(sent), "held: %" PRId64 " datagrams counted", sent);
	check_rss("600 held-data sources", (LIM_HELD_BYTES >> 20) * 5 / 4 + 8);
	int64_t hb = limit_stat("held_bytes"), hev = limit_stat("held_evicted") - was.held_evicted;
	check(hb >= 0 && hb <= LIM_HELD_BYTES, "held bytes %" PRId64 " (limits.held_bytes %u)", hb,
	      LIM_HELD_BYTES);
	/* every set is held or was dropped: the totals over every row */
	int64_t sets = (int64_t)HELD_SOURCES * HELD_SETS;
	int64_t expect_ev = sets - LIM_HELD_BYTES / HELD_SET_BYTES;
	check(hev == expect_ev, "held sets evicted %" PRId64 " (expected %" PRId64 ")", hev,
	      expect_ev);
	check(hb == (sets - hev) * HELD_SET_BYTES, "held bytes %" PRId64 " = %" PRId64 " sets", hb,
	      sets - hev);
	remember();
}

static void phase_templates(void)
{
	for (uint32_t i = 0; i < TEMPLATES; i++) {
		ipfix_begin(1);
		size_t s = set_begin(2);
		p16((uint16_t)(400 + i)), p16(TPL_FIELDS);
		for (int f = 0; f < TPL_FIELDS; f++)
			p16(999), p16(1);
		set_end(s);
		ipfix_end();
		send_from(ADDR(127, 0, 0, 4), pkt, plen);
		if (i % 100 == 0)
			good_data();
		sleep_us(300);
		/* a sanitizer build decodes them several times slower: let it
		 * catch up rather than overflow the socket buffer */
		if (C.asan && i % 256 == 255)
			wait_datagrams(sent);
	}
	good_data();
	check(wait_datagrams(sent), "templates: %" PRId64 " datagrams counted", sent);
	check_rss("4096-template flood", 24);
	int64_t ev = limit_stat("templates_evicted") - was.templates_evicted;
	/* a template costs more than 20 bytes a field: at most this many fit */
	int64_t fit = LIM_TEMPLATE_BYTES_PER_DOMAIN / (20 * TPL_FIELDS);
	check(ev >= TEMPLATES - fit && ev < TEMPLATES,
	      "flood templates evicted %" PRId64 " (at most %" PRId64 " of %d held)", ev, fit,
	      TEMPLATES);
	/* only the flooding domain's own: the good one and the 256 of the
	 * domain flood are all still held */
	int64_t held = limit_stat("templates");
	check(held == 1 + LIM_DOMAINS_PER_EXPORTER + (TEMPLATES - ev),
	      "templates held %" PRId64 " = 1 good + %d + %" PRId64 " of the flood", held,
	      LIM_DOMAINS_PER_EXPORTER, TEMPLATES - ev);
	int64_t tb = limit_stat("template_bytes");
	check(tb > 0 && tb < LIM_TEMPLATE_BYTES_PER_DOMAIN + (1 << 20),
	      "template bytes %" PRId64
	      " (the flood's domain: limits.template_bytes_per_domain %u)",
	      tb, LIM_TEMPLATE_BYTES_PER_DOMAIN);
	int64_t got = row_stat("127.0.0.2", 1, "records");
	check(got == good_records, "good exporter records %" PRId64 " (sent %" PRId64 ")", got,
	      good_records);
	check(num(api_body, "\"listener\":{", "drops") == 0, "no datagram dropped by the kernel");
}

static void phase_restart(void)
{
	check(api_get("/metrics"), "/metrics answers");
	size_t series = 0;
	for (const char *p = api_body; (p = strstr(p, "\nnagare_exporter_records_total{")); p++)
		series++;
	check(series <= 101, "/metrics: %zu records series (100 exporters + others)", series);
	check(api_body && strstr(api_body, "nagare_limit_exporters_evicted_total"),
	      "/metrics has nagare_limit_exporters_evicted_total");
	stop();
	char path[256];
	struct stat sb;
	snprintf(path, sizeof path, "%s/state/templates", C.store);
	long long size = stat(path, &sb) == 0 ? (long long)sb.st_size : -1;
	check(size > 0 && size < (256 << 20),
	      "saved template state %lld bytes (load limit 256 MiB)", size);
	snprintf(path, sizeof path, "%s/state/exporters.json", C.store);
	size = stat(path, &sb) == 0 ? (long long)sb.st_size : -1;
	check(size > 0 && size < (4 << 20), "exporters.json %lld bytes (limits.listed_exporters)",
	      size);
	sent = 0;
	run_base = 0;
	start(2);
	int64_t before = -1;
	if (wait_datagrams(0)) {
		run_base = num(api_body, "\"listener\":{", "datagrams") +
		           num(api_body, "\"listener\":{", "drops");
		before = row_stat("127.0.0.2", 1, "records");
	}
	int64_t misses = row_stat("127.0.0.2", 1, "template_misses");
	for (int i = 0; i < 5; i++)
		good_data();
	check(wait_datagrams(sent), "after restart: %" PRId64 " datagrams counted", sent);
	int64_t after = row_stat("127.0.0.2", 1, "records");
	check(after - before == 50,
	      "after restart, no template re-sent: the good exporter's data decoded (%" PRId64
	      " records of 50)",
	      after - before);
	int64_t misses2 = row_stat("127.0.0.2", 1, "template_misses");
	check(misses >= 0 && misses2 == misses,
	      "no template miss after restart (%" PRId64 " before, %" PRId64 " after)", misses,
	      misses2);
	stop();
}

static void test_bounds_floods(void **state)
{
	(void)state;
	C.bin = eu_bin_or_skip();
	snprintf(C.store, sizeof C.store, "/tmp/ng-bounds-%d", (int)getpid());
	eu_rm_rf(C.store);
	C.udp = eu_free_port(SOCK_DGRAM);
	C.http = eu_free_port(SOCK_STREAM);
	start(1);
	printf("collector %s: VmRSS at start %ld MB\n", C.bin, rss_mb());
	good_template();
	good_data();
	check(wait_datagrams(sent), "start: %" PRId64 " datagrams counted", sent);
	check(wait_segment(), "start: the good exporter's first segment written");
	eu_sleep_ms(1000);
	rss_before = rss_mb();
	printf("collector: VmRSS %ld MB after its first flush (the baseline)\n", rss_before);
	remember();
	phase_exporters();
	phase_domains();
	phase_held();
	phase_templates();
	phase_restart();
	if (!failures) {
		eu_rm_rf(C.store);
		for (int run = 1; run <= 2; run++) {
			snprintf(C.log, sizeof C.log, "%s.%d.log", C.store, run);
			unlink(C.log);
		}
	} else {
		printf("kept %s and its logs %s.1.log, %s.2.log\n", C.store, C.store, C.store);
	}
	free(api_body);
	assert_int_equal(failures, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_bounds_floods)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
