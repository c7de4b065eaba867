/*
 * test_core_timefmt.c — times as nagare parses and prints them (core/timefmt.h).
 *
 * ng_time_parse takes what --from/--to, `nagare query -t` and the HTTP
 * API's from/to accept (docs/query.md, docs/api.md): RFC 3339 UTC,
 * "YYYY-MM-DD HH:MM[:SS[.mmm]]", nfdump's "YYYY/MM/DD.HH:MM:SS", epoch
 * seconds, "now" and "-90s" / "-15m" / "-1h" / "-2d" before now.
 * ng_time_format writes RFC 3339 UTC with milliseconds.
 * ng_parse_duration_ms takes the durations of options (--retention,
 * --maint-interval, compact --settle): expected values are the units'
 * definitions (1 s = 1000 ms, a week 7 days); the largest week count that
 * fits is floor((2^64 - 1) / 604 800 000) = 30 500 568 904.
 *
 * The expected epoch values were not computed by the code under test: each
 * is `date -u -d 'YYYY-MM-DD HH:MM:SS UTC' +%s` (GNU coreutils) times 1000,
 * and the expected text of ng_time_format is Python's
 * datetime.fromtimestamp(s, timezone.utc).strftime('%Y-%m-%dT%H:%M:%S')
 * plus '.%03dZ' % ms.  Leap years and month ends are checked as pairs one
 * second apart across the boundary (2024 and 2000 are leap years, 2100 is
 * not: RFC 3339 Appendix C).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>
#include <time.h>

#include "core/timefmt.h"

/* `now` for every relative form: date -u -d '2026-11-30 12:00:00 UTC' +%s */
#define NOW_MS UINT64_C(1796040000000)

/* Parses `s` (which must be accepted) and returns its ms. */
static uint64_t parse_ok(const char *s)
{
	uint64_t v = UINT64_C(0xdeadbeef);
	if (!ng_time_parse(s, NOW_MS, &v))
		fail_msg("refused: \"%s\"", s);
	return v;
}

#define ACCEPTS(s, want) assert_int_equal(parse_ok(s), (want))

static void refuses(const char *s)
{
	uint64_t v = 0;
	if (ng_time_parse(s, NOW_MS, &v))
		fail_msg("accepted: \"%s\" as %llu", s, (unsigned long long)v);
}

/* The forms docs/query.md lists, all for 2026-11-30 12:00:00 UTC. */
static void test_documented_forms(void **state)
{
	(void)state;
	ACCEPTS("2026-11-30T12:00:00Z", NOW_MS);
	ACCEPTS("2026-11-30 12:00", NOW_MS);
	ACCEPTS("2026/11/30.12:00:00", NOW_MS); /* nfdump */
	ACCEPTS("1796040000", NOW_MS);          /* epoch seconds */
	ACCEPTS("now", NOW_MS);
	/* the other spellings of the same instant */
	ACCEPTS("2026-11-30T12:00:00", NOW_MS);
	ACCEPTS("2026-11-30T12:00Z", NOW_MS);
	ACCEPTS("2026-11-30 12:00:00Z", NOW_MS);
	ACCEPTS("2026/11/30.12:00", NOW_MS);
	/* a date alone is midnight UTC: date -u -d '2026-11-30 00:00 UTC' */
	ACCEPTS("2026-11-30", UINT64_C(1795996800000));
	/* seconds: date -u -d '2026-11-30 12:00:05 UTC' */
	ACCEPTS("2026-11-30T12:00:05Z", UINT64_C(1796040005000));
	ACCEPTS("2026/11/30.12:00:05", UINT64_C(1796040005000));
	ACCEPTS("0", 0);
}

/* Fractions of a second: milliseconds, padded on the right, further
 * digits cut (not rounded). */
static void test_milliseconds(void **state)
{
	(void)state;
	ACCEPTS("2026-11-30T12:00:00.123Z", NOW_MS + 123);
	ACCEPTS("2026-11-30T12:00:00.5Z", NOW_MS + 500);
	ACCEPTS("2026-11-30T12:00:00.05", NOW_MS + 50);
	ACCEPTS("2026-11-30T12:00:00.999999Z", NOW_MS + 999);
	ACCEPTS("2026-11-30 12:00:00.001", NOW_MS + 1);
}

/* Relative times count back from `now` in s, m, h, d (and w, min, or bare
 * seconds), fractions allowed; one further back than the epoch is 0. */
static void test_relative(void **state)
{
	(void)state;
	ACCEPTS("-90s", NOW_MS - 90 * 1000);
	ACCEPTS("-15m", NOW_MS - 15 * 60 * 1000);
	ACCEPTS("-1h", NOW_MS - 3600 * 1000);
	ACCEPTS("-2d", NOW_MS - 2 * 86400 * 1000);
	ACCEPTS("-90", NOW_MS - 90 * 1000);
	ACCEPTS("-15min", NOW_MS - 15 * 60 * 1000);
	ACCEPTS("-1w", NOW_MS - 7 * 86400 * 1000);
	ACCEPTS("-1.5h", NOW_MS - 5400 * 1000);
	ACCEPTS("-0s", NOW_MS);
	ACCEPTS("-999999d", 0);
	/* relative to the `now` given, not to the clock */
	uint64_t v = 0;
	assert_true(ng_time_parse("-1h", 7200 * 1000, &v));
	assert_int_equal(v, 3600 * 1000);
	assert_true(ng_time_parse("now", 42, &v));
	assert_int_equal(v, 42);
}

/* Leap days and the ends of months and years, each checked against the
 * second after it. */
static void test_calendar(void **state)
{
	(void)state;
	/* 2024 is a leap year: date -u -d '2024-02-29 23:59:59 UTC' */
	ACCEPTS("2024-02-29T23:59:59Z", UINT64_C(1709251199000));
	ACCEPTS("2024-03-01T00:00:00Z", UINT64_C(1709251200000));
	/* 2000 is one too (divisible by 400): date -u -d '2000-02-29 12:00 UTC' */
	ACCEPTS("2000-02-29 12:00", UINT64_C(951825600000));
	/* 2100 is not (divisible by 100): Feb 28 is followed by Mar 1 */
	ACCEPTS("2100-02-28T23:59:59Z", UINT64_C(4107542399000));
	ACCEPTS("2100-03-01 00:00", UINT64_C(4107542400000));
	/* a year's end: date -u -d '2025-12-31 23:59:59 UTC' */
	ACCEPTS("2025-12-31T23:59:59Z", UINT64_C(1767225599000));
	ACCEPTS("2026-01-01", UINT64_C(1767225600000));
	/* 30-day months: date -u -d '2026-04-30 23:59:59 UTC', '2026-06-30 12:00 UTC' */
	ACCEPTS("2026-04-30T23:59:59Z", UINT64_C(1777593599000));
	ACCEPTS("2026-06-30 12:00", UINT64_C(1782820800000));
	/* the epoch, and past the 32-bit time_t limit (2^31 s) */
	ACCEPTS("1970-01-01T00:00:00Z", 0);
	ACCEPTS("2038-01-19T03:14:07Z", UINT64_C(2147483647000));
	ACCEPTS("2038-01-19T03:14:08Z", UINT64_C(2147483648000));
}

/* What is none of the forms. */
static void test_refused(void **state)
{
	(void)state;
	static const char *const bad[] = {
	    "",
	    "yesterday",
	    "NOW",
	    "now ",
	    " now",
	    " 1796040000",
	    "1796040000 ",
	    "1796040000s",
	    "+1h",
	    "-",
	    "--1h",
	    "-h",
	    "-1y",
	    "-1hour",
	    "2026-11-30T24:00",
	    "2026-11-30T12:60",
	    "2026-11-30T12:00:61",
	    "2026-13-01",
	    "2026-00-10",
	    "2026-11-00",
	    "2026-11-32",
	    "2026-11-30 12:00+01:00", /* only UTC */
	    "2026-11-30T12:00:00-05:00",
	    "2026-11-30Z",
	    "2026-11-30T12:00Zx",
	    "2026-11-30t12:00",
	    "2026-11-30 12",
	    "2026/11/30 12:00",
	    "2026.11.30",
	    "12:00",
	    "2026-11-30T12:00:00:00",
	    "2026-11-30T12:00:xx",
	    "1969-12-31T23:59:59Z", /* before the epoch */
	    /* impossible dates are refused, not moved to the next month */
	    "2026-02-29",
	    "2025-02-29T00:00:00Z",
	    "2100-02-29",
	    "2026-04-31",
	    "2026-11-31 12:00",
	    "2026/02/30.12:00:00",
	    /* negative times of day, not an hour or minute before */
	    "2026-11-30T12:-5",
	    "2026-11-30T-1:00",
	    "2026-11-30T12:00:-1",
	    /* relative spans strtod would take: blank, sign, inf, nan, hex */
	    "- 1h",
	    "--1h",
	    "-+1h",
	    "-inf",
	    "-nan",
	    "-infd",
	    "-0x10h",
	    "-1e3000d",
	    /* epoch seconds past 64-bit milliseconds */
	    "18446744073709552",
	    "99999999999999999999",
	    /* a fraction point without digits */
	    "2026-11-30T12:00:05.",
	    "2026-11-30T12:00:05.Z",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		refuses(bad[i]);
}

/* ng_time_format writes `want` for `ms`, 24 characters and a NUL. */
static void check_format(uint64_t ms, const char *want)
{
	char buf[40];
	memset(buf, 'x', sizeof buf);
	assert_ptr_equal(ng_time_format(ms, buf), buf);
	assert_string_equal(buf, want);
	assert_int_equal(strlen(buf), 24);
}

/* RFC 3339 §5.6 date-time, UTC ("Z"), three fraction digits. */
static void test_format(void **state)
{
	(void)state;
	check_format(0, "1970-01-01T00:00:00.000Z");
	check_format(NOW_MS, "2026-11-30T12:00:00.000Z");
	check_format(UINT64_C(1764504000123), "2025-11-30T12:00:00.123Z");
	check_format(UINT64_C(951825600999), "2000-02-29T12:00:00.999Z");
	check_format(UINT64_C(1709251199000), "2024-02-29T23:59:59.000Z");
	check_format(UINT64_C(1709251200001), "2024-03-01T00:00:00.001Z");
	check_format(UINT64_C(4107542399000), "2100-02-28T23:59:59.000Z");
	check_format(UINT64_C(4107542400000), "2100-03-01T00:00:00.000Z");
	check_format(UINT64_C(2147483648000), "2038-01-19T03:14:08.000Z");
	check_format(UINT64_C(253402300799999), "9999-12-31T23:59:59.999Z");
}

/* What ng_time_format prints, ng_time_parse reads back to the same ms. */
static void test_round_trip(void **state)
{
	(void)state;
	static const uint64_t ms[] = {
	    0,
	    1,
	    999,
	    1000,
	    UINT64_C(951825600999),
	    UINT64_C(1709251199000),
	    NOW_MS + 7,
	    UINT64_C(4107542400000),
	    UINT64_C(253402300799999),
	};
	for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) {
		char buf[32];
		ng_time_format(ms[i], buf);
		assert_int_equal(parse_ok(buf), ms[i]);
	}
}

/* ng_now_ms is the wall clock in milliseconds. */
static void test_now(void **state)
{
	(void)state;
	uint64_t before = (uint64_t)time(NULL) * 1000;
	uint64_t now = ng_now_ms();
	uint64_t after = ((uint64_t)time(NULL) + 1) * 1000;
	assert_true(now >= before);
	assert_true(now <= after);
}

/* ---- durations (ng_parse_duration_ms) ---- */

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
	    cmocka_unit_test(test_documented_forms), cmocka_unit_test(test_milliseconds),
	    cmocka_unit_test(test_relative),         cmocka_unit_test(test_calendar),
	    cmocka_unit_test(test_refused),          cmocka_unit_test(test_format),
	    cmocka_unit_test(test_round_trip),       cmocka_unit_test(test_now),
	    cmocka_unit_test(test_duration_units),   cmocka_unit_test(test_duration_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
