/*
 * test_enrich_interfaces.c — the table of interface names learnt from
 * options data (enrich/interfaces.h): names applied to records without
 * one, at most `max` interfaces, and at most `max_names` strings added to
 * the process's string table, so that a sender renaming an interface
 * without end cannot grow the table (interned strings are never freed);
 * SNMP's values (enrich/snmp.h) win over options data, the interfaces of a
 * polled exporter that records name are queued for the poller, and the
 * speed rule of RFC 2863 (ifSpeed, else ifHighSpeed).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "core/strtab.h"
#include "enrich/interfaces.h"
#include "enrich/snmp.h"

static const uint8_t EX[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 1};

/* The name a record of interface `index` gets. */
static const char *name_of(ng_iftab *t, uint32_t index)
{
	ng_flow f = {.in_if = index};
	memcpy(f.exporter, EX, 16);
	ng_iftab_apply(t, &f, 1);
	return ng_str(f.in_if_name);
}

static void test_names_and_renames_bounded(void **state)
{
	(void)state;
	ng_iftab *t = ng_iftab_new(2, 3);
	assert_non_null(t);
	assert_int_equal(ng_iftab_set(t, EX, 1, "ti-ge-0/0/1", "ti-uplink"), 1); /* 2 new */
	assert_string_equal(name_of(t, 1), "ti-ge-0/0/1");
	assert_int_equal(ng_iftab_set(t, EX, 1, "ti-ge-0/0/1", "ti-uplink"), 0); /* same */
	assert_int_equal(ng_iftab_set(t, EX, 1, "ti-xe-0/0/1", "ti-uplink"), 1); /* 3rd new */
	assert_string_equal(name_of(t, 1), "ti-xe-0/0/1");
	/* a 4th new string is refused: the interface keeps its name */
	assert_int_equal(ng_iftab_set(t, EX, 1, "ti-renamed-1", "ti-uplink"), -3);
	assert_string_equal(name_of(t, 1), "ti-xe-0/0/1");
	assert_int_equal(ng_str_lookup("ti-renamed-1", 12), UINT32_MAX); /* not interned */
	/* strings already interned cost nothing: a second interface may use them */
	assert_int_equal(ng_iftab_set(t, EX, 2, "ti-ge-0/0/1", ""), 1);
	assert_string_equal(name_of(t, 2), "ti-ge-0/0/1");
	/* and a third interface is past `max` */
	assert_int_equal(ng_iftab_set(t, EX, 3, "ti-uplink", ""), -2);
	assert_string_equal(name_of(t, 3), "");
	ng_iftab_free(t);
}

/* A flood of renames of one interface: 100 000 distinct names, at most
 * max_names of them interned. */
static void test_rename_flood(void **state)
{
	(void)state;
	ng_iftab *t = ng_iftab_new(16, 1000);
	const uint32_t before = ng_strtab_count();
	int refused = 0;
	for (int i = 0; i < 100000; i++) {
		char n[32];
		snprintf(n, sizeof n, "flood-%d", i);
		refused += ng_iftab_set(t, EX, 9, n, "") == -3;
	}
	assert_int_equal(refused, 99000);
	assert_int_equal(ng_strtab_count() - before, 1000);
	assert_string_equal(name_of(t, 9), "flood-999");
	ng_iftab_free(t);
}

static bool polled_ex(void *arg, const uint8_t ex[16])
{
	(void)arg;
	return !memcmp(ex, EX, 16);
}

/* A polled exporter's interfaces are queued once each, as records name
 * them; SNMP's name, alias and speed go on the records and win over
 * options data, which a configured name still beats (kept when set). */
static void test_snmp_wins_and_queue(void **state)
{
	(void)state;
	ng_iftab *t = ng_iftab_new(16, 100);
	ng_iftab_watch(t, polled_ex, NULL);
	assert_int_equal(ng_iftab_set(t, EX, 5, "ts-opt5", "ts-optdesc"), 1);
	ng_flow f[3] = {{.in_if = 5, .out_if = 7}, {.in_if = 7, .out_if = 8}, {.in_if = 9}};
	memcpy(f[0].exporter, EX, 16);
	memcpy(f[1].exporter, EX, 16);
	f[2].exporter[15] = 99; /* not polled */
	ng_iftab_apply(t, f, 3);
	assert_string_equal(ng_str(f[0].in_if_name), "ts-opt5"); /* options, for now */
	assert_string_equal(ng_str(f[0].in_if_desc), "ts-optdesc");
	uint8_t ex[8][16];
	uint32_t idx[8];
	assert_int_equal(ng_iftab_take_new(t, ex, idx, 8), 3); /* 5, 7, 8; not 9 */
	assert_int_equal(idx[0], 5);
	assert_int_equal(idx[1], 7);
	assert_int_equal(idx[2], 8);
	assert_int_equal(ng_iftab_take_new(t, ex, idx, 8), 0);
	assert_int_equal(
	    ng_iftab_set_snmp(t, EX, 5, "ts-xe-0/0/5", "ts-Transit: A", 10000000000ull), 1);
	assert_int_equal(ng_iftab_set_snmp(t, EX, 42, "ts-never-seen", "", 1), 0);
	assert_int_equal(ng_iftab_set(t, EX, 5, "ts-opt5-again", ""), 0); /* SNMP wins */
	ng_flow g = {.in_if = 5, .out_if = 5, .out_if_name = ng_intern_cstr("ts-configured")};
	memcpy(g.exporter, EX, 16);
	ng_iftab_apply(t, &g, 1);
	assert_string_equal(ng_str(g.in_if_name), "ts-xe-0/0/5");
	assert_string_equal(ng_str(g.in_if_desc), "ts-Transit: A");
	assert_true(g.in_if_speed == 10000000000ull);
	assert_string_equal(ng_str(g.out_if_name), "ts-configured");
	assert_true(g.out_if_speed == 10000000000ull);
	ng_iftab_free(t);
}

/* RFC 2863: ifSpeed in bits/s unless saturated (4294967295), then
 * ifHighSpeed in 10^6 bits/s; values snmpd gives for lo and a veth. */
static void test_speed(void **state)
{
	(void)state;
	assert_true(ng_snmp_speed(true, 10000000, true, 10) == 10000000ull);
	assert_true(ng_snmp_speed(true, 4294967295u, true, 10000) == 10000000000ull);
	assert_true(ng_snmp_speed(false, 0, true, 40000) == 40000000000ull);
	assert_true(ng_snmp_speed(true, 4294967295u, false, 0) == 4294967295ull);
	assert_true(ng_snmp_speed(false, 0, false, 0) == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_names_and_renames_bounded),
	    cmocka_unit_test(test_rename_flood),
	    cmocka_unit_test(test_snmp_wins_and_queue),
	    cmocka_unit_test(test_speed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
