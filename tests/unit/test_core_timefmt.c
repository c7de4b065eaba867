/*
 * test_core_timefmt.c — durations as options give them (core/timefmt.h,
 * ng_parse_duration_ms: --retention, --maint-interval, compact --settle).
 *
 * Expected values are the units' definitions (1 s = 1000 ms, a week 7
 * days); the largest week count that fits is ⌊(2^64 − 1) / 604 800 000⌋
 * = 30 500 568 904.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/timefmt.h"

/* Parses `s` and returns the ms, failing the test when it is refused. */
static uint64_t duration(const char *s)
{
	uint64_t v = 1;
	assert_true(ng_parse_duration_ms(s, &v));
	return v;
}

static void test_duration_units(void **state)
{
	(void)state;
	assert_int_equal(duration("45s"), 45000);
	assert_int_equal(duration("90m"), UINT64_C(90) * 60000);
	assert_int_equal(duration("12h"), UINT64_C(12) * 3600000);
	assert_int_equal(duration("30d"), UINT64_C(30) * 86400000);
	assert_int_equal(duration("2w"), UINT64_C(14) * 86400000);
	assert_int_equal(duration("30D"), UINT64_C(30) * 86400000); /* either case */
	assert_int_equal(duration("0s"), 0);
	assert_int_equal(duration("30500568904w"), UINT64_C(30500568904) * 604800000);
}

static void test_duration_refused(void **state)
{
	(void)state;
	static const char *const bad[] = {
	    "30",  /* a unit is required */
	    "30x", /* not a unit */
	    "d",   /* no number */
	    "",
	    " 1h",
	    "-1h",
	    "+1h",
	    "1h ",
	    "1hh",
	    "1.5h",
	    "1 h",
	    "30500568905w",          /* more ms than 64 bits hold */
	    "99999999999999999999s", /* more than strtoull reads */
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		uint64_t v = 7;
		assert_false(ng_parse_duration_ms(bad[i], &v));
		assert_int_equal(v, 7); /* untouched */
	}
	uint64_t v = 7;
	assert_false(ng_parse_duration_ms(NULL, &v));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_duration_units),
	    cmocka_unit_test(test_duration_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
