/*
 * test_core_addr.c — 16-byte addresses, prefixes and MACs (core/addr.h).
 *
 * IPv6 text is RFC 5952's: the expected strings are the examples of its
 * §4 (leading zeros suppressed §4.1, "::" as long as possible §4.2.1 and
 * never for one 16-bit field §4.2.2, the first of equal runs §4.2.3,
 * lowercase §4.3) and §5 (::ffff:192.0.2.1), with nagare's one rule on top:
 * an IPv4-mapped address (RFC 4291 §2.5.5.2) prints as its dotted quad.
 * Byte values are written out by hand from the RFC 4291 §2.2 text forms.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "core/addr.h"

/* 192.0.2.1 (RFC 5737 documentation block) as ::ffff:192.0.2.1 */
static const uint8_t MAPPED_192_0_2_1[16] = {0, 0, 0,    0,    0,   0, 0, 0,
                                             0, 0, 0xff, 0xff, 192, 0, 2, 1};
/* 2001:db8::1 */
static const uint8_t V6_DOC_1[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};

/* Parses `in` (which must be an address) and formats it back as `want`. */
static void check_text(const char *in, const char *want)
{
	uint8_t a[16];
	char buf[NG_ADDR_STRLEN];
	if (!ng_addr_parse(in, a))
		fail_msg("refused: \"%s\"", in);
	assert_ptr_equal(ng_addr_format(a, buf), buf);
	assert_string_equal(buf, want);
}

static void test_v4(void **state)
{
	(void)state;
	uint8_t a[16];
	memset(a, 0x55, sizeof a);
	assert_true(ng_addr_parse("192.0.2.1", a));
	assert_memory_equal(a, MAPPED_192_0_2_1, 16);
	assert_true(ng_addr_is_v4(a));

	uint8_t b[16];
	memset(b, 0x55, sizeof b);
	ng_addr_from_v4(b, (const uint8_t[4]){192, 0, 2, 1});
	assert_memory_equal(b, MAPPED_192_0_2_1, 16);

	check_text("192.0.2.1", "192.0.2.1");
	check_text("0.0.0.0", "0.0.0.0");
	check_text("255.255.255.255", "255.255.255.255");
	/* the mapped form in IPv6 text is the same address */
	check_text("::ffff:192.0.2.1", "192.0.2.1");
	check_text("::FFFF:c000:0201", "192.0.2.1");
}

static void test_v6_rfc5952(void **state)
{
	(void)state;
	uint8_t a[16];
	assert_true(ng_addr_parse("2001:db8::1", a));
	assert_memory_equal(a, V6_DOC_1, 16);
	assert_false(ng_addr_is_v4(a));
	/* §4.1: leading zeros suppressed */
	check_text("2001:0db8::0001", "2001:db8::1");
	check_text("2001:db8:aaaa:bbbb:cccc:dddd:eeee:0001", "2001:db8:aaaa:bbbb:cccc:dddd:eeee:1");
	/* §4.2.1: "::" shortens as much as possible */
	check_text("2001:db8:0:0:0:0:2:1", "2001:db8::2:1");
	check_text("2001:db8::0:1", "2001:db8::1");
	/* §4.2.2: not for just one 16-bit 0 field */
	check_text("2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1");
	/* §4.2.3: the longest run; the first of equal runs */
	check_text("2001:0:0:1:0:0:0:1", "2001:0:0:1::1");
	check_text("2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1");
	/* §4.3: lowercase */
	check_text("2001:DB8::AAAA", "2001:db8::aaaa");
	/* the ends of the space; "::" is also the empty address of a record */
	check_text("::", "::");
	check_text("::1", "::1");
	check_text("1::", "1::");
	check_text("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
	           "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
	/* the longest text is within NG_ADDR_STRLEN, NUL included */
	assert_true(strlen("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff") < NG_ADDR_STRLEN);

	static const uint8_t zero[16] = {0};
	char buf[NG_ADDR_STRLEN];
	assert_string_equal(ng_addr_format(zero, buf), "::");
	assert_false(ng_addr_is_v4(zero));
	/* only ::ffff:0:0/96 is IPv4: ::192.0.2.1 (IPv4-compatible) is not */
	assert_true(ng_addr_parse("::192.0.2.1", a));
	assert_false(ng_addr_is_v4(a));
	assert_true(ng_addr_parse("::fffe:192.0.2.1", a));
	assert_false(ng_addr_is_v4(a));
}

static void test_refused(void **state)
{
	(void)state;
	static const char *const bad[] = {
	    "",
	    "256.0.0.1",
	    "1.2.3",
	    "1.2.3.4.5",
	    "01.2.3.4",
	    " 1.2.3.4",
	    "1.2.3.4 ",
	    "1.2.3.4/24",
	    "2001:db8::1::1",
	    "::g",
	    "1:2:3:4:5:6:7:8:9",
	    "12345::",
	    "fe80::1%eth0",
	    "2001:db8::1/64",
	    "localhost",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		uint8_t a[16];
		if (ng_addr_parse(bad[i], a))
			fail_msg("accepted: \"%s\"", bad[i]);
	}
}

/* ng_prefix_parse gives `want_net` (as text) and `want_len` (128-bit
 * space) for `in`. */
static void check_prefix(const char *in, const char *want_net, unsigned want_len)
{
	uint8_t net[16];
	unsigned len = 999;
	char buf[NG_ADDR_STRLEN];
	if (!ng_prefix_parse(in, net, &len))
		fail_msg("refused: \"%s\"", in);
	assert_string_equal(ng_addr_format(net, buf), want_net);
	assert_int_equal(len, want_len);
}

static void test_prefix(void **state)
{
	(void)state;
	/* IPv4 lengths are moved into the 128-bit space (+96) */
	check_prefix("10.1.2.3/8", "10.0.0.0", 104);
	check_prefix("192.0.2.0/24", "192.0.2.0", 120);
	check_prefix("10.255.255.255/9", "10.128.0.0", 105); /* host bits inside a byte */
	check_prefix("10.1.2.3/0", "0.0.0.0", 96);           /* all of IPv4, not all addresses */
	check_prefix("192.0.2.1", "192.0.2.1", 128);         /* bare: the host */
	check_prefix("192.0.2.1/32", "192.0.2.1", 128);
	/* IPv6 */
	check_prefix("2001:db8::1/32", "2001:db8::", 32);
	check_prefix("2001:db8:ffff::/33", "2001:db8:8000::", 33);
	check_prefix("2001:db8::1/128", "2001:db8::1", 128);
	check_prefix("2001:db8::1", "2001:db8::1", 128);
	check_prefix("::/0", "::", 0);
	/* a mapped address written as IPv6 takes an IPv6 length */
	check_prefix("::ffff:10.1.2.3/104", "10.0.0.0", 104);

	static const char *const bad[] = {
	    "10.1.2.3/33", "10.1.2.3/",       "/24",         "10.1.2.3/x", "10.1.2.3/24x",
	    "10.1.2.3/-1", "2001:db8::1/129", "300.1.2.3/8", "",           "10.1.2.3/8/8",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		uint8_t net[16];
		unsigned len;
		if (ng_prefix_parse(bad[i], net, &len))
			fail_msg("accepted: \"%s\"", bad[i]);
	}
}

/* `a` (text) lies in `pfx` (text, through ng_prefix_parse) or not. */
static bool in_prefix(const char *a, const char *pfx)
{
	uint8_t addr[16], net[16];
	unsigned len;
	assert_true(ng_addr_parse(a, addr));
	assert_true(ng_prefix_parse(pfx, net, &len));
	return ng_addr_in_prefix(addr, net, len);
}

static void test_in_prefix(void **state)
{
	(void)state;
	assert_true(in_prefix("10.0.0.0", "10.0.0.0/8"));
	assert_true(in_prefix("10.255.255.255", "10.0.0.0/8"));
	assert_false(in_prefix("11.0.0.0", "10.0.0.0/8"));
	assert_false(in_prefix("9.255.255.255", "10.0.0.0/8"));
	/* a length that is not a whole byte */
	assert_true(in_prefix("10.127.0.1", "10.0.0.0/9"));
	assert_false(in_prefix("10.128.0.1", "10.0.0.0/9"));
	assert_true(in_prefix("192.0.2.1", "192.0.2.1"));
	assert_false(in_prefix("192.0.2.2", "192.0.2.1"));
	/* IPv4/0 holds every IPv4 address and no IPv6 one; ::/0 holds all */
	assert_true(in_prefix("203.0.113.7", "0.0.0.0/0"));
	assert_false(in_prefix("2001:db8::1", "0.0.0.0/0"));
	assert_true(in_prefix("2001:db8::1", "::/0"));
	assert_true(in_prefix("203.0.113.7", "::/0"));
	/* IPv6 */
	assert_true(in_prefix("2001:db8:7fff::1", "2001:db8::/33"));
	assert_false(in_prefix("2001:db8:8000::1", "2001:db8::/33"));
	assert_false(in_prefix("2001:db9::", "2001:db8::/32"));
	assert_true(in_prefix("2001:db8::1", "2001:db8::1/128"));
	assert_false(in_prefix("2001:db8::2", "2001:db8::1/128"));
}

static void test_mac(void **state)
{
	(void)state;
	char buf[20];
	memset(buf, 'x', sizeof buf);
	static const uint8_t m[6] = {0x00, 0x1a, 0x2b, 0x3c, 0x4d, 0x5e};
	assert_ptr_equal(ng_mac_format(m, buf), buf);
	assert_string_equal(buf, "00:1a:2b:3c:4d:5e");
	assert_int_equal(buf[18], 'x'); /* 17 characters and a NUL: buf[18] */
	static const uint8_t ff[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	assert_string_equal(ng_mac_format(ff, buf), "ff:ff:ff:ff:ff:ff");
	static const uint8_t zero[6] = {0};
	assert_string_equal(ng_mac_format(zero, buf), "00:00:00:00:00:00");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_v4),        cmocka_unit_test(test_v6_rfc5952),
	    cmocka_unit_test(test_refused),   cmocka_unit_test(test_prefix),
	    cmocka_unit_test(test_in_prefix), cmocka_unit_test(test_mac),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
