/*
 * test_http_exporters.c — /api/v1/exporters and /metrics carry every
 * counter of NG_EXPORTER_COUNTERS, over loopback, from a provider that
 * hands the server two rows whose every counter is set; and with 250
 * rows, that /metrics gives series to the metrics_exporters with most
 * records and one "others" series for the rest (the sums exact), that
 * the API pages its rows most records first and carries "limits".
 *
 * The expected keys, metric names and values are derived from the list
 * (kinds as decoder.h describes them), so a counter added to the list is
 * checked here without a change.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/addr.h"
#include "core/field.h"
#include "http/http.h"

#define NROWS 2
static ng_exporter_stats rows[NROWS];

/* Row i with every counter set to a value of its own (errors: only some,
 * since the API lists those not zero). */
static void fill(ng_exporter_stats *s, const char *addr, uint32_t domain, uint64_t seed)
{
	memset(s, 0, sizeof *s);
	assert_true(ng_addr_parse(addr, s->exporter));
	s->domain = domain;
	s->version = 10;
	for (int id = 0; id < NG_XC_COUNT; id++) {
		switch (ng_exporter_counters[id].kind) {
		case NG_XK_COUNTER:
		case NG_XK_GAUGE: ng_exporter_counter_set(s, id, seed * 100 + (uint64_t)id); break;
		case NG_XK_TIME_MIN:
		case NG_XK_TIME_MAX:
			ng_exporter_counter_set(
			    s, id, UINT64_C(1700000000000) + seed * 1000 + (uint64_t)id);
			break;
		case NG_XK_SOURCE: ng_exporter_counter_set(s, id, NG_SAMPLING_OPTIONS); break;
		case NG_XK_ERRORS:
			s->errors[NG_DERR_SET_OVERRUN] = seed;
			s->errors[NG_DERR_TEMPLATE_LIMIT] = seed + 1;
			break;
		}
	}
}

/* ng_http_exporters_fn: a copy of rows[]. */
static int provider(void *arg, ng_http_exporters *out, char *err, size_t errlen)
{
	(void)arg, (void)err, (void)errlen;
	out->rows = malloc(sizeof rows);
	memcpy(out->rows, rows, sizeof rows);
	out->n = NROWS;
	out->listener.datagrams = 77;
	out->store.dropped = 3;
	out->limits.exporters_evicted = 5;
	out->store.deferred = 4;
	out->started_ms = 1;
	out->updated_ms = 2;
	return 0;
}

/* The body of GET `path` (malloc'd, NUL-terminated), after checking 200. */
static char *get(uint16_t port, const char *path)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
	char req[256];
	int n = snprintf(req, sizeof req, "GET %s HTTP/1.0\r\n\r\n", path);
	assert_int_equal(write(fd, req, (size_t)n), n);
	size_t cap = 1 << 20, len = 0;
	char *buf = malloc(cap);
	ssize_t k;
	while ((k = read(fd, buf + len, cap - len - 1)) > 0)
		len += (size_t)k;
	buf[len] = 0;
	close(fd);
	assert_non_null(strstr(buf, " 200 "));
	char *body = strstr(buf, "\r\n\r\n");
	assert_non_null(body);
	memmove(buf, body + 4, strlen(body + 4) + 1);
	return buf;
}

/* Asserts that `text` holds `want`, saying which when not. */
static void has(const char *text, const char *want)
{
	if (!strstr(text, want))
		fail_msg("missing: %s", want);
}

/* The part of `json` that is the object of exporter row i. */
static char *row_object(const char *json, size_t i)
{
	char a[NG_ADDR_STRLEN], key[128];
	snprintf(key, sizeof key, "{\"exporter\":\"%s\",\"domain\":%" PRIu32 ",",
	         ng_addr_format(rows[i].exporter, a), rows[i].domain);
	const char *p = strstr(json, key);
	assert_non_null(p);
	const char *e = strchr(strstr(p, "\"health\":"), '}');
	char *o = strndup(p, (size_t)(e - p + 1));
	assert_non_null(o);
	return o;
}

static void check_json(const char *json)
{
	has(json, "\"listener\":{\"datagrams\":77,");
	has(json, ",\"dropped\":3,\"deferred\":4},\"limits\":{\"exporters_evicted\":5,");
	has(json, "\"total\":2,\"offset\":0,\"returned\":2,\"exporters\":[{");
	for (size_t i = 0; i < NROWS; i++) {
		char *o = row_object(json, i), want[256];
		const ng_exporter_stats *s = &rows[i];
		for (int id = 0; id < NG_XC_COUNT; id++) {
			const ng_exporter_counter *c = &ng_exporter_counters[id];
			uint64_t v = ng_exporter_counter_get(s, id);
			switch (c->kind) {
			case NG_XK_COUNTER:
			case NG_XK_GAUGE:
				snprintf(want, sizeof want, "\"%s\":%" PRIu64 ",", c->name, v);
				break;
			case NG_XK_TIME_MIN:
			case NG_XK_TIME_MAX:
				snprintf(want, sizeof want, "\"%s_ms\":%" PRIu64 ",", c->name, v);
				break;
			case NG_XK_SOURCE:
				snprintf(want, sizeof want, "\"%s\":\"%s\",", c->name,
				         ng_sampling_source_name((unsigned)v));
				break;
			case NG_XK_ERRORS:
				snprintf(want, sizeof want,
				         "\"%s\":{\"set_overrun\":%" PRIu64
				         ",\"template_limit\":%" PRIu64 "},\"%s_total\":%" PRIu64
				         ",",
				         c->name, s->errors[NG_DERR_SET_OVERRUN],
				         s->errors[NG_DERR_TEMPLATE_LIMIT], c->name, v);
				break;
			}
			has(o, want);
		}
		has(o, "\"protocol\":\"IPFIX\"");
		has(o, "\"health\":\"");
		free(o);
	}
}

static void check_metrics(const char *m)
{
	for (int id = 0; id < NG_XC_COUNT; id++) {
		const ng_exporter_counter *c = &ng_exporter_counters[id];
		bool counter = c->kind == NG_XK_COUNTER || c->kind == NG_XK_ERRORS;
		const char *suffix = counter ? "_total"
		                     : c->kind == NG_XK_TIME_MIN || c->kind == NG_XK_TIME_MAX
		                         ? "_timestamp_seconds"
		                         : "";
		char name[128], want[512], a[NG_ADDR_STRLEN];
		snprintf(name, sizeof name, "nagare_exporter_%s%s", c->name, suffix);
		snprintf(want, sizeof want, "# HELP %s %s\n# TYPE %s %s\n", name, c->doc, name,
		         counter ? "counter" : "gauge");
		has(m, want);
		for (size_t i = 0; i < NROWS; i++) {
			const ng_exporter_stats *s = &rows[i];
			uint64_t v = ng_exporter_counter_get(s, id);
			int n = snprintf(want, sizeof want,
			                 "\n%s{exporter=\"%s\",domain=\"%" PRIu32 "\"", name,
			                 ng_addr_format(s->exporter, a), s->domain);
			size_t rest = sizeof want - (size_t)n;
			switch (c->kind) {
			case NG_XK_COUNTER:
			case NG_XK_GAUGE: snprintf(want + n, rest, "} %" PRIu64 "\n", v); break;
			case NG_XK_TIME_MIN:
			case NG_XK_TIME_MAX:
				snprintf(want + n, rest, "} %" PRIu64 ".%03u\n", v / 1000,
				         (unsigned)(v % 1000));
				break;
			case NG_XK_SOURCE:
				snprintf(want + n, rest, ",source=\"%s\"} 1\n",
				         ng_sampling_source_name((unsigned)v));
				break;
			case NG_XK_ERRORS:
				snprintf(want + n, rest, ",error=\"set_overrun\"} %" PRIu64 "\n",
				         s->errors[NG_DERR_SET_OVERRUN]);
				has(m, want);
				snprintf(want + n, rest, ",error=\"template_limit\"} %" PRIu64 "\n",
				         s->errors[NG_DERR_TEMPLATE_LIMIT]);
				break;
			}
			has(m, want);
		}
	}
	assert_null(strstr(m, "error=\"short_header\"")); /* errors that are 0 are left out */
}

static void test_every_counter(void **state)
{
	(void)state;
	fill(&rows[0], "192.0.2.9", 0, 1);
	fill(&rows[1], "2001:db8::1", 7, 2);
	char err[512];
	ng_http_config c = {
	    .store_dir = "/nonexistent", .listen = "127.0.0.1:0", .exporters = provider};
	ng_http_server *s = ng_http_start(&c, err, sizeof err);
	assert_non_null(s);
	char *json = get(ng_http_port(s), "/api/v1/exporters");
	check_json(json);
	free(json);
	char *m = get(ng_http_port(s), "/metrics");
	check_metrics(m);
	free(m);
	ng_http_stop(s);
}

#define MANY 250
static ng_exporter_stats many[MANY];

/* ng_http_exporters_fn: a copy of many[]. */
static int many_provider(void *arg, ng_http_exporters *out, char *err, size_t errlen)
{
	(void)arg, (void)err, (void)errlen;
	out->rows = malloc(sizeof many);
	memcpy(out->rows, many, sizeof many);
	out->n = MANY;
	return 0;
}

/* 250 rows, row i with i + 1 records: /metrics lists the 10 with most
 * (metrics_exporters 10) and sums the 240 others; the API pages them most
 * records first. */
static void test_bounded_rows(void **state)
{
	(void)state;
	uint64_t sum_rest = 0;
	for (uint32_t i = 0; i < MANY; i++) {
		memset(&many[i], 0, sizeof many[i]);
		uint8_t a[4] = {10, 0, (uint8_t)(i >> 8), (uint8_t)i};
		ng_addr_from_v4(many[i].exporter, a);
		many[i].version = 9;
		many[i].records = i + 1;
		if (i < MANY - 10)
			sum_rest += i + 1;
	}
	char err[512];
	ng_http_config c = {.store_dir = "/nonexistent",
	                    .listen = "127.0.0.1:0",
	                    .exporters = many_provider,
	                    .metrics_exporters = 10};
	ng_http_server *s = ng_http_start(&c, err, sizeof err);
	assert_non_null(s);
	char *m = get(ng_http_port(s), "/metrics");
	size_t series = 0;
	for (const char *p = m; (p = strstr(p, "\nnagare_exporter_records_total{")); p++)
		series++;
	assert_int_equal(series, 11);
	has(m, "\nnagare_exporter_records_total{exporter=\"10.0.0.249\",domain=\"0\"} 250\n");
	assert_null(strstr(m, "exporter=\"10.0.0.239\""));
	char want[128];
	snprintf(want, sizeof want,
	         "\nnagare_exporter_records_total{exporter=\"others\",domain=\"all\"} %" PRIu64
	         "\n",
	         sum_rest);
	has(m, want);
	has(m, "\nnagare_limit_exporters_evicted_total 0\n");
	free(m);
	char *j = get(ng_http_port(s), "/api/v1/exporters?limit=2&offset=1");
	has(j, "\"total\":250,\"offset\":1,\"returned\":2,");
	const char *a = strstr(j, "\"exporter\":\"10.0.0.248\""),
	           *b = strstr(j, "\"exporter\":\"10.0.0.247\"");
	assert_true(a && b && a < b);
	assert_null(strstr(j, "\"exporter\":\"10.0.0.249\""));
	assert_null(strstr(j, "\"exporter\":\"10.0.0.246\""));
	free(j);
	ng_http_stop(s);
}

/* The collector's listen addresses, JSON-escaped, in "listen"; none
 * without them (nagare serve). */
static void test_listen(void **state)
{
	(void)state;
	char err[512];
	const char *const at[] = {"127.0.0.1:2055", "tcp://[::]:4739", "odd\"name"};
	ng_http_config c = {.store_dir = "/nonexistent",
	                    .listen = "127.0.0.1:0",
	                    .exporters = many_provider,
	                    .flow_listen = at,
	                    .nflow_listen = 3};
	ng_http_server *s = ng_http_start(&c, err, sizeof err);
	assert_non_null(s);
	char *j = get(ng_http_port(s), "/api/v1/exporters?limit=1");
	has(j,
	    ",\"listen\":[\"127.0.0.1:2055\",\"tcp://[::]:4739\",\"odd\\\"name\"],\"total\":250,");
	free(j);
	ng_http_stop(s);
	c.flow_listen = NULL;
	c.nflow_listen = 0;
	s = ng_http_start(&c, err, sizeof err);
	assert_non_null(s);
	j = get(ng_http_port(s), "/api/v1/exporters?limit=1");
	assert_null(strstr(j, "\"listen\""));
	free(j);
	ng_http_stop(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_every_counter),
	    cmocka_unit_test(test_bounded_rows),
	    cmocka_unit_test(test_listen),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
