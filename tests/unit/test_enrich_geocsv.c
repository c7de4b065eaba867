/*
 * test_enrich_geocsv.c — the ip-location-db ASN CSV as a database
 * (enrich/geocsv.c, geoip.c): rows in the file's own format (RFC 4180
 * quotes, doubled quotes, CRLF, IPv4 and IPv6 ranges not on prefix
 * boundaries), what each address in and around them answers, the later of
 * two overlapping rows winning from its start (a search by start address),
 * malformed lines skipped, and the lists refused (mixed kinds, three
 * files, a file with no rows).  tests/e2e/test_geo_default.sh checks the
 * real files against the CSV rows themselves.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/addr.h"
#include "core/strtab.h"
#include "enrich/enrich_int.h"

static const char csv4[] =
    "1.0.0.0,1.0.0.255,13335,\"Cloudflare, Inc.\"\r\n"
    "1.0.4.0,1.0.7.255,38803,Gtelecom Pty Ltd\n"
    "2.26.200.0,2.26.215.255,201907,\"LLC \"\"SPUTNIK\"\"\"\n"
    "not,a,row\n"
    "\n"
    "10.0.0.5,10.0.1.6,64500,odd range\n" /* not on a prefix boundary */
    "214.95.0.0,215.0.255.255,749,United States Department of Defense (DoD)\n"
    "215.0.0.0,215.1.3.255,721,DoD Network Information Center\n" /* overlaps */
    "9.9.9.0,9.9.9.255,0,AS zero\n";
static const char csv6[] = "2001:200::,2001:200:1b9:ffff:ffff:ffff:ffff:ffff,2500,WIDE Project\n"
                           "2001:200:1ba::,2001:200:1ba:ffff:ffff:ffff:ffff:ffff,24047,\"Internet "
                           "Systems Consortium, Inc.\"\n";

static char p4[64], p6[64], list[160];

static void put(char *path, const char *text)
{
	snprintf(path, 64, "/tmp/test_geocsv.XXXXXX.csv");
	int fd = mkstemps(path, 4);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static int setup(void **state)
{
	(void)state;
	put(p4, csv4);
	put(p6, csv6);
	snprintf(list, sizeof list, "%s,%s", p4, p6);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(p4);
	unlink(p6);
	return 0;
}

/* The AS number and name `addr` answers. */
static uint32_t as_of(ng_geodb *db, const char *addr, const char **name)
{
	uint8_t a[16];
	assert_true(ng_addr_parse(addr, a));
	unsigned plen;
	const ng_geo_rec *r = ng_geodb_rec(db, ng_geodb_lookup(db, a, &plen));
	*name = ng_str(r->as_name);
	return r->asn;
}

static void test_ranges(void **state)
{
	(void)state;
	char err[512] = "";
	ng_geodb *db = ng_geodb_open(list, NULL, err, sizeof err);
	if (!db)
		fail_msg("%s", err);
	static const struct {
		const char *addr;
		uint32_t asn;
		const char *name;
	} want[] = {
	    {"1.0.0.0", 13335, "Cloudflare, Inc."},
	    {"1.0.0.255", 13335, "Cloudflare, Inc."},
	    {"1.0.1.0", 0, ""},
	    {"1.0.3.255", 0, ""},
	    {"1.0.4.0", 38803, "Gtelecom Pty Ltd"},
	    {"1.0.7.255", 38803, "Gtelecom Pty Ltd"},
	    {"2.26.207.1", 201907, "LLC \"SPUTNIK\""},
	    {"10.0.0.4", 0, ""},
	    {"10.0.0.5", 64500, "odd range"},
	    {"10.0.0.255", 64500, "odd range"},
	    {"10.0.1.6", 64500, "odd range"},
	    {"10.0.1.7", 0, ""},
	    {"214.255.255.255", 749, "United States Department of Defense (DoD)"},
	    {"215.0.0.0", 721, "DoD Network Information Center"}, /* the later row */
	    {"215.0.255.255", 721, "DoD Network Information Center"},
	    {"215.1.3.255", 721, "DoD Network Information Center"},
	    {"215.1.4.0", 0, ""},
	    {"9.9.9.9", 0, ""}, /* AS 0: no answer */
	    {"2001:200::1", 2500, "WIDE Project"},
	    {"2001:200:1b9:ffff:ffff:ffff:ffff:ffff", 2500, "WIDE Project"},
	    {"2001:200:1ba::53", 24047, "Internet Systems Consortium, Inc."},
	    {"2001:200:1bb::", 0, ""},
	    {"2001:db8::1", 0, ""},
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		const char *name;
		uint32_t asn = as_of(db, want[i].addr, &name);
		print_message("%s -> AS%u %s\n", want[i].addr, asn, name);
		assert_int_equal(asn, want[i].asn);
		assert_string_equal(name, want[i].name);
	}
	assert_int_equal(ng_geodb_as_name(db, 13335), ng_intern_cstr("Cloudflare, Inc."));
	assert_true(ng_geodb_is_dbip(db) == false); /* /tmp names: not DB-IP's */
	ng_geodb_free(db);
}

static void test_refused(void **state)
{
	(void)state;
	char err[512], bad[64], three[256], mixed[256];
	put(bad, "start,end,as,org\nnot a csv\n");
	snprintf(three, sizeof three, "%s,%s,%s", p4, p6, p4);
	snprintf(mixed, sizeof mixed, "%s,/tmp/x.mmdb", p4);
	const struct {
		const char *path, *msg;
	} cases[] = {
	    {bad, "not an ASN CSV (start,end,as,organisation): line 1"},
	    {three, "at most 2 files"},
	    {mixed, "not both"},
	    {",", "an empty file name"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		err[0] = 0;
		assert_null(ng_geodb_open(cases[i].path, NULL, err, sizeof err));
		print_message("%s\n", err);
		assert_non_null(strstr(err, cases[i].msg));
	}
	unlink(bad);
}

static int count(void *arg, const ng_geocsv_row *r)
{
	(void)r;
	(*(size_t *)arg)++;
	return 0;
}

/* The parser alone: counts, and the first refused line. */
static void test_parse_counts(void **state)
{
	(void)state;
	ng_geocsv_stats st;
	size_t n = 0;
	ng_geocsv_parse(csv4, strlen(csv4), count, &n, &st);
	assert_int_equal(st.rows, 7); /* 9 lines: an empty one, a refused one */
	assert_int_equal(st.bad, 1);
	assert_int_equal(st.first_bad_line, 4);
	assert_int_equal(n, 7);
	static const char q[] = "1.0.0.0,1.0.0.255,1,\"unterminated\n";
	ng_geocsv_parse(q, strlen(q), count, &n, &st);
	assert_int_equal(st.bad, 1);
	assert_string_equal(st.first_bad_why, "unterminated quote");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ranges),
	    cmocka_unit_test(test_refused),
	    cmocka_unit_test(test_parse_counts),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
