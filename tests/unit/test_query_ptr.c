/*
 * test_query_ptr.c — the DNS answer parser of host names (query/ptr.c,
 * ng_ptr_parse) on the bytes of real answers: dnsmasq 2.89 (Debian 12)
 * serving --ptr-record=1.2.0.10.in-addr.arpa,host-a.test.lan and the
 * ip6.arpa name of 2001:db8::1 with --local-ttl=600, asked by a UDP query
 * (the name behind a compression pointer to the question, TTL 600), and
 * its REFUSED answer for a name it does not serve; then every truncation
 * of an answer, a compression loop, a reserved label type and a name
 * with characters a host name has not.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/ptr.h"

static size_t unhex(const char *h, uint8_t *out)
{
	size_t n = 0;
	for (; h[0] && h[1]; h += 2) {
		unsigned v;
		sscanf(h, "%2x", &v);
		out[n++] = (uint8_t)v;
	}
	return n;
}

static const char V4[] = "12348580000100010000000001310132013002313007696e2d6164647204617270"
                         "6100000c0001c00c000c000100000258001106686f73742d610474657374036c61"
                         "6e00";
static const char REFUSED[] = "12358185000100000000000001330132013002313007696e2d616464720461"
                              "7270610000"
                              "0c0001";
static const char V6[] = "12368580000100010000000001310130013001300130013001300130013001300130"
                         "01300130013001300130013001300130013001300130013001300138016201640130"
                         "013101300130013203697036046172706100000c0001c00c000c0001000002580012"
                         "0776362d686f73740474657374036c616e00";

static void test_real_answers(void **state)
{
	(void)state;
	uint8_t m[512];
	char name[NG_PTR_NAME_MAX];
	uint32_t ttl = 0;
	size_t n = unhex(V4, m);
	assert_int_equal(ng_ptr_parse(m, n, name, sizeof name, &ttl), 1);
	assert_string_equal(name, "host-a.test.lan");
	assert_int_equal(ttl, 600);
	n = unhex(V6, m);
	assert_int_equal(ng_ptr_parse(m, n, name, sizeof name, &ttl), 1);
	assert_string_equal(name, "v6-host.test.lan");
	assert_int_equal(ttl, 600);
	n = unhex(REFUSED, m);
	assert_int_equal(ng_ptr_parse(m, n, name, sizeof name, &ttl), 0);
}

/* Every prefix of a real answer is refused or has no name: never a name
 * read past the end. */
static void test_truncated(void **state)
{
	(void)state;
	uint8_t m[512];
	size_t n = unhex(V4, m);
	for (size_t len = 0; len < n; len++) {
		uint8_t *cut = malloc(len ? len : 1);
		memcpy(cut, m, len);
		char name[NG_PTR_NAME_MAX];
		uint32_t ttl;
		int rc = ng_ptr_parse(cut, len, name, sizeof name, &ttl);
		if (rc == 1)
			fail_msg("a %zu-byte prefix of %zu gave name '%s'", len, n, name);
		free(cut);
	}
}

static void test_malformed(void **state)
{
	(void)state;
	uint8_t m[512];
	char name[NG_PTR_NAME_MAX];
	uint32_t ttl;
	size_t n = unhex(V4, m);
	/* the answer's name pointing at itself: a loop */
	uint8_t loop[512];
	memcpy(loop, m, n);
	size_t rd = n - 17; /* the rdata: 17 bytes of host-a.test.lan */
	loop[rd] = 0xc0;
	loop[rd + 1] = (uint8_t)rd;
	assert_int_equal(ng_ptr_parse(loop, n, name, sizeof name, &ttl), -1);
	/* a reserved label type (0x40) in the rdata */
	memcpy(loop, m, n);
	loop[rd] = 0x46;
	assert_int_equal(ng_ptr_parse(loop, n, name, sizeof name, &ttl), -1);
	/* a query, not a response (QR clear) */
	memcpy(loop, m, n);
	loop[2] &= 0x7f;
	assert_int_equal(ng_ptr_parse(loop, n, name, sizeof name, &ttl), -1);
	/* characters a host name has not, and a TTL with the top bit set
	 * (RFC 2181 §8: 0) */
	memcpy(loop, m, n);
	loop[rd + 1] = '<';
	loop[rd - 6] = 0x80;
	assert_int_equal(ng_ptr_parse(loop, n, name, sizeof name, &ttl), 1);
	assert_string_equal(name, "?ost-a.test.lan");
	assert_int_equal(ttl, 0);
	/* a name that does not fit the buffer */
	assert_int_equal(ng_ptr_parse(m, n, name, 8, &ttl), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_real_answers),
	    cmocka_unit_test(test_truncated),
	    cmocka_unit_test(test_malformed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
