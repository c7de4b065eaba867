/*
 * test_enrich_snmp.c — the SNMP poller's bounds and failure counting
 * (enrich/snmp.h) without an agent: enrich.snmp.default polls every
 * exporter (ng_snmp_polled), max_exporters caps the agents (the rest
 * counted as snmp_exporters_dropped), max_interfaces the interfaces of
 * one (counted as interfaces_dropped), and a port on loopback where
 * nothing answers gives a counted timeout, the state "failing" and the
 * error in the JSON the Exporters page reads.  The real agent is
 * tests/e2e/test_snmp.sh's.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/addr.h"
#include "enrich/snmp.h"

/* ng_snmp_put_json's members as a string (malloc'd). */
static char *status(ng_snmp *p)
{
	char *s = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&s, &n);
	assert_non_null(f);
	ng_snmp_put_json(p, f);
	fclose(f);
	return s;
}

static void test_bounds_and_timeout(void **state)
{
	(void)state;
	ng_cfg_snmp def = {.agent = "127.0.0.1", .port = 9, .version = 2, .community = "x"};
	ng_config cfg = {.snmp = {.timeout_ms = 100,
	                          .retries_set = true,
	                          .max_exporters = 1,
	                          .max_interfaces = 2,
	                          .fallback = &def}};
	char err[256];
	ng_snmp *p = ng_snmp_start(&cfg, err, sizeof err);
	assert_non_null(p);
	uint8_t ex[4][16];
	ng_addr_parse("192.0.2.1", ex[0]);
	ng_addr_parse("192.0.2.1", ex[1]);
	ng_addr_parse("192.0.2.1", ex[2]);
	ng_addr_parse("192.0.2.2", ex[3]);     /* a second exporter: past max_exporters */
	assert_true(ng_snmp_polled(p, ex[3])); /* the default polls any */
	uint32_t idx[4] = {1, 2, 3, 1};        /* a third interface: past max_interfaces */
	ng_snmp_want(p, (const uint8_t(*)[16])ex, idx, 4);
	char *s = NULL;
	for (int i = 0; i < 100; i++) { /* the timeout (100 ms), counted */
		free(s);
		s = status(p);
		if (strstr(s, "\"failures\":1"))
			break;
		struct timespec ts = {0, 20000000};
		nanosleep(&ts, NULL);
	}
	if (!strstr(s, "\"exporter\":\"192.0.2.1\",\"agent\":\"udp:127.0.0.1:9\"") ||
	    !strstr(s, "\"interfaces\":2,") || !strstr(s, "\"interfaces_dropped\":1,") ||
	    !strstr(s, "\"failures\":1,\"timeouts\":1,") || !strstr(s, "\"state\":\"failing\"") ||
	    !strstr(s, "\"last_error\":\"no reply (timeout)\"") ||
	    !strstr(s, "\"snmp_exporters_dropped\":1") || strstr(s, "192.0.2.2"))
		fail_msg("status: %s", s);
	free(s);
	ng_snmp_stop(p);
}

/* Nothing to poll: no poller, and no error. */
static void test_nothing(void **state)
{
	(void)state;
	ng_config cfg = {0};
	char err[256] = "x";
	assert_null(ng_snmp_start(&cfg, err, sizeof err));
	assert_string_equal(err, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bounds_and_timeout),
	    cmocka_unit_test(test_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
