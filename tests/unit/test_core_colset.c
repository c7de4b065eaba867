/*
 * test_core_colset.c — sets of fields (core/colset.h) over all four
 * words, whatever the size of this build's table: constant sets against
 * sets built one field at a time, the set operations against a bool
 * array, and ng_colset_pop taking exactly the members, in order.
 * (tests/wide/ stores and queries fields past 64.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <string.h>

#include "core/colset.h"
#include "test_rng.h"

static uint64_t rng = 0xC015E7ull;

/* A random set and the same members in in[]. */
static ng_colset random_set(bool in[NG_COLSET_BITS])
{
	ng_colset s = {{0}};
	unsigned density = 1 + (unsigned)(ts_xorshift64(&rng) % 8); /* of 8 */
	for (unsigned f = 0; f < NG_COLSET_BITS; f++) {
		in[f] = ts_xorshift64(&rng) % 8 < density && ts_xorshift64(&rng) % 3;
		if (in[f])
			ng_colset_add(&s, f);
	}
	return s;
}

/* s holds exactly the members of in[]: by has, and by next in order. */
static void assert_members(ng_colset s, const bool in[NG_COLSET_BITS])
{
	size_t count = 0;
	for (unsigned f = 0; f < NG_COLSET_BITS; f++) {
		assert_int_equal(ng_colset_has(s, f), in[f]);
		count += in[f];
	}
	int last = -1;
	size_t seen = 0;
	ng_colset left = s;
	for (int f; (f = ng_colset_pop(&left)) >= 0;) {
		assert_true(f > last && f < NG_COLSET_BITS);
		assert_true(in[f]);
		last = f;
		seen++;
	}
	assert_int_equal(seen, count);
	assert_int_equal(ng_colset_empty(s), count == 0);
}

static void test_constants(void **state)
{
	(void)state;
	static const ng_colset c = NG_COLSET(0, 1, 63, 64, 100, 127, 128, 191, 192, 255);
	const unsigned ids[] = {0, 1, 63, 64, 100, 127, 128, 191, 192, 255};
	ng_colset b = {{0}};
	bool in[NG_COLSET_BITS] = {0};
	for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
		ng_colset_add(&b, ids[i]);
		in[ids[i]] = true;
	}
	assert_true(ng_colset_equal(c, b));
	assert_members(c, in);
	/* 32 fields, the most NG_COLSET takes */
	static const ng_colset m =
	    NG_COLSET(3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 33, 36, 39, 42, 45, 48, 51, 54, 57, 60,
	              63, 66, 69, 72, 75, 78, 81, 84, 87, 90, 93, 96);
	memset(in, 0, sizeof in);
	for (unsigned f = 3; f <= 96; f += 3)
		in[f] = true;
	assert_members(m, in);
	assert_true(ng_colset_equal((ng_colset)NG_COLSET(NG_F_BYTES), ng_colset_of(NG_F_BYTES)));
	memset(in, 0, sizeof in);
	in[200] = true;
	assert_members(ng_colset_of(200), in);
}

static void test_all(void **state)
{
	(void)state;
	bool in[NG_COLSET_BITS] = {0};
	for (unsigned f = 0; f < NG_FIELD_COUNT; f++)
		in[f] = true;
	assert_members(ng_colset_all(), in);
}

static void test_operations(void **state)
{
	(void)state;
	for (int round = 0; round < 2000; round++) {
		bool a[NG_COLSET_BITS], b[NG_COLSET_BITS], r[NG_COLSET_BITS];
		ng_colset x = random_set(a), y = random_set(b);
		bool sub = true, eq = true;
		for (unsigned f = 0; f < NG_COLSET_BITS; f++) {
			sub &= !a[f] || b[f];
			eq &= a[f] == b[f];
		}
		assert_int_equal(ng_colset_subset(x, y), sub);
		assert_int_equal(ng_colset_equal(x, y), eq);
		assert_true(ng_colset_equal(x, x) && ng_colset_subset(x, x));
		for (unsigned f = 0; f < NG_COLSET_BITS; f++)
			r[f] = a[f] || b[f];
		assert_members(ng_colset_union(x, y), r);
		for (unsigned f = 0; f < NG_COLSET_BITS; f++)
			r[f] = a[f] && b[f];
		assert_members(ng_colset_intersect(x, y), r);
		for (unsigned f = 0; f < NG_COLSET_BITS; f++)
			r[f] = a[f] && !b[f];
		assert_members(ng_colset_minus(x, y), r);
		assert_true(ng_colset_subset(ng_colset_minus(x, y), x));
		/* pop takes the smallest member and leaves the rest */
		int want = -1;
		for (unsigned f = 0; f < NG_COLSET_BITS && want < 0; f++)
			if (a[f])
				want = (int)f;
		ng_colset rest = x;
		assert_int_equal(ng_colset_pop(&rest), want);
		if (want >= 0)
			a[want] = false;
		assert_members(rest, a);
	}
	ng_colset none = {{0}}, last = ng_colset_of(255);
	assert_int_equal(ng_colset_pop(&none), -1);
	assert_int_equal(ng_colset_pop(&last), 255);
	assert_true(ng_colset_empty(last));
	assert_int_equal(ng_colset_pop(&last), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_constants),
	    cmocka_unit_test(test_all),
	    cmocka_unit_test(test_operations),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
