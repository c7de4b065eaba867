/*
 * test_enrich_interfaces.c — the table of interface names learnt from
 * options data (enrich/interfaces.h): names applied to records without
 * one, at most `max` interfaces, and at most `max_names` strings added to
 * the process's string table, so that a sender renaming an interface
 * without end cannot grow the table (interned strings are never freed).
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

static const uint8_t EX[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 1};

/* The name a record of interface `index` gets. */
static const char *name_of(const ng_iftab *t, uint32_t index)
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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_names_and_renames_bounded),
	    cmocka_unit_test(test_rename_flood),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
