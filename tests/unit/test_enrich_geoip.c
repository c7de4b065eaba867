/*
 * test_enrich_geoip.c — enrichment with MaxMind's test databases
 * (NG_TESTDATA/mmdb): expected values are those of the databases' source
 * JSON files (GeoIP2-City-Test.source.json, GeoLite2-Country-Test.source.json,
 * GeoLite2-ASN-Test.source.json), quoted next to each check; broken and
 * missing databases fail the build with the file named; the per-address
 * cache gives the same answers as uncached lookups.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/addr.h"
#include "core/config.h"
#include "core/strtab.h"
#include "enrich/enrich.h"
#include "enrich/enrich_int.h"

static char city[512], country[512], asn[512], broken[512], badnodes[512], decoder[512];

static bool have_data(void)
{
	const char *td = getenv("NG_TESTDATA");
	if (!td)
		return false;
	snprintf(city, sizeof city, "%s/mmdb/GeoIP2-City-Test.mmdb", td);
	snprintf(country, sizeof country, "%s/mmdb/GeoLite2-Country-Test.mmdb", td);
	snprintf(asn, sizeof asn, "%s/mmdb/GeoLite2-ASN-Test.mmdb", td);
	snprintf(broken, sizeof broken, "%s/mmdb/MaxMind-DB-test-broken-pointers-24.mmdb", td);
	snprintf(badnodes, sizeof badnodes, "%s/mmdb/GeoIP2-City-Test-Invalid-Node-Count.mmdb", td);
	snprintf(decoder, sizeof decoder, "%s/mmdb/MaxMind-DB-test-decoder.mmdb", td);
	return access(city, R_OK) == 0 && access(asn, R_OK) == 0;
}

#define NEED_DATA()                                                                                \
	do {                                                                                       \
		if (!have_data()) {                                                                \
			print_message("NG_TESTDATA/mmdb absent: skipped\n");                       \
			skip();                                                                    \
		}                                                                                  \
	} while (0)

static ng_flow flow(const char *src, const char *dst)
{
	ng_flow f = {0};
	assert_true(ng_addr_parse(src, f.src_addr));
	assert_true(ng_addr_parse(dst, f.dst_addr));
	return f;
}

static ng_enricher *build(const char *geo, const char *as, const char *lang)
{
	ng_config c = {0};
	c.geoip_db = (char *)geo;
	c.asn_db = (char *)as;
	c.language = (char *)lang;
	char err[512] = "";
	ng_enricher *e = ng_enricher_build(&c, err, sizeof err);
	if (!e)
		fail_msg("build failed: %s", err);
	return e;
}

#define assert_str(id, want) assert_string_equal(ng_str(id), want)

static void test_city_v4_v6(void **state)
{
	(void)state;
	NEED_DATA();
	ng_enricher *e = build(city, asn, NULL);
	ng_flow f[3] = {
	    /* ::81.2.69.142/127 GB EU London; 2001:480:10::/48 US NA San Diego */
	    flow("81.2.69.142", "2001:480:10::1"),
	    /* ::89.160.20.128/121 SE Linköping; ::175.16.199.0/120 CN AS Changchun */
	    flow("89.160.20.130", "175.16.199.7"),
	    /* ::214.0.1.0/120 AU OC Melbourne; 2001:218::/32 JP AS (no city) */
	    flow("214.0.1.200", "2001:218::5"),
	};
	ng_enricher_apply(e, f, 3);
	assert_str(f[0].src_country, "GB");
	assert_str(f[0].src_continent, "EU");
	assert_str(f[0].src_city, "London");
	assert_str(f[0].dst_country, "US");
	assert_str(f[0].dst_continent, "NA");
	assert_str(f[0].dst_city, "San Diego");
	assert_str(f[1].src_country, "SE");
	assert_str(f[1].src_city, "Linköping");
	assert_str(f[1].dst_country, "CN");
	assert_str(f[1].dst_city, "Changchun");
	assert_str(f[2].src_country, "AU");
	assert_str(f[2].src_continent, "OC");
	assert_str(f[2].src_city, "Melbourne");
	assert_str(f[2].dst_country, "JP");
	assert_str(f[2].dst_city, "");
	ng_enricher_free(e);
}

static void test_language(void **state)
{
	(void)state;
	NEED_DATA();
	ng_enricher *e = build(city, NULL, "ja");
	/* city.names.ja: London ロンドン; Boxford has no "ja": falls back to "en" */
	ng_flow f = flow("81.2.69.142", "2.125.160.217");
	ng_enricher_apply(e, &f, 1);
	assert_str(f.src_city, "ロンドン");
	assert_str(f.dst_city, "Boxford");
	assert_str(f.dst_country, "GB");
	ng_enricher_free(e);
}

static void test_country_db(void **state)
{
	(void)state;
	NEED_DATA();
	ng_enricher *e = build(country, NULL, NULL);
	/* 67.43.156.0/24 BT AS; 50.114.0.0/22 US NA; 2a02:d180::/29 DE EU */
	ng_flow f[2] = {flow("67.43.156.9", "50.114.3.3"), flow("2a02:d180::1", "10.0.0.1")};
	ng_enricher_apply(e, f, 2);
	assert_str(f[0].src_country, "BT");
	assert_str(f[0].src_continent, "AS");
	assert_str(f[0].dst_country, "US");
	assert_str(f[0].dst_continent, "NA");
	assert_str(f[0].src_city, "");
	assert_str(f[1].src_country, "DE");
	assert_str(f[1].dst_country, "");
	assert_str(f[1].dst_net, "private");
	ng_enricher_free(e);
}

static void test_asn(void **state)
{
	(void)state;
	NEED_DATA();
	ng_enricher *e = build(NULL, asn, NULL);
	ng_flow f[3] = {
	    /* 1.0.0.0/24 15169 Google Inc.; 2001:1700::/27 6730 Sunrise Communications AG */
	    flow("1.0.0.1", "2001:1700::9"),
	    /* record AS kept: 18.0.0.0/8 is AS 3 (MIT) in the file, the record says 64500;
	     * 12.81.96.0/19 has AS 7018 without a name, 12.81.92.0/22 names it AT&T Services */
	    flow("18.1.2.3", "12.81.100.1"),
	    /* the record's AS 3 is named from the database */
	    flow("192.0.2.1", "198.51.100.1"),
	};
	f[1].src_as = 64500;
	f[2].src_as = 3;
	ng_enricher_apply(e, f, 3);
	assert_int_equal(f[0].src_as, 15169);
	assert_str(f[0].src_as_name, "Google Inc.");
	assert_int_equal(f[0].dst_as, 6730);
	assert_str(f[0].dst_as_name, "Sunrise Communications AG");
	assert_int_equal(f[0].as_source, NG_AS_SRC_DB | NG_AS_DST_DB);
	assert_int_equal(f[1].src_as, 64500);
	assert_str(f[1].src_as_name, "");
	assert_int_equal(f[1].dst_as, 7018);
	/* the JSON names AS 7018 "AT&T Services" (12.81.92.0/22) and "AT&T
	 * Services, Inc." (70.224.0.0/11 …): either is the database's word */
	const char *att = ng_str(f[1].dst_as_name);
	if (strcmp(att, "AT&T Services") && strcmp(att, "AT&T Services, Inc."))
		fail_msg("AS 7018 named '%s'", att);
	assert_int_equal(f[1].as_source, NG_AS_DST_DB);
	assert_int_equal(f[2].src_as, 3);
	assert_str(f[2].src_as_name, "Massachusetts Institute of Technology");
	assert_int_equal(f[2].as_source, 0);
	assert_int_equal(f[2].dst_as, 0);
	assert_str(f[2].src_net, "documentation");
	ng_enricher_free(e);
}

/* Record AS numbers are named from the ASN database, and the cache
 * remembers the last such name per prefix: records of one prefix
 * (18.0.0.0/8, AS 3 MIT in the file) carrying other AS numbers in turn,
 * in one batch and in the next, get each number's own name, never the
 * remembered one of another; the IPv6 side likewise. */
static void test_record_as_names(void **state)
{
	(void)state;
	NEED_DATA();
	ng_enricher *e = build(NULL, asn, NULL);
	/* GeoLite2-ASN-Test.source.json: 1.0.0.0/24 15169 "Google Inc.",
	 * 2001:1700::/27 6730 "Sunrise Communications AG", 18.0.0.0/8 3
	 * "Massachusetts Institute of Technology"; 64500 is not in it */
	static const struct {
		uint32_t as;
		const char *name;
	} seq[] = {{15169, "Google Inc."},
	           {64500, ""},
	           {15169, "Google Inc."},
	           {15169, "Google Inc."},
	           {3, "Massachusetts Institute of Technology"},
	           {6730, "Sunrise Communications AG"},
	           {64500, ""},
	           {6730, "Sunrise Communications AG"}};
	enum { K = sizeof seq / sizeof seq[0] };
	for (int batch = 0; batch < 2; batch++) {
		ng_flow f[K];
		for (int i = 0; i < K; i++) {
			char a[32];
			snprintf(a, sizeof a, "18.1.%d.%d", i % 3, 10 + i + batch);
			f[i] = flow(a, "2001:1700::9");
			f[i].src_as = seq[i].as;
			f[i].dst_as = seq[K - 1 - i].as;
		}
		ng_enricher_apply(e, f, K);
		for (int i = 0; i < K; i++) {
			assert_int_equal(f[i].src_as, seq[i].as);
			assert_str(f[i].src_as_name, seq[i].name);
			assert_int_equal(f[i].dst_as, seq[K - 1 - i].as);
			assert_str(f[i].dst_as_name, seq[K - 1 - i].name);
			assert_int_equal(f[i].as_source, 0);
		}
	}
	ng_enricher_free(e);
}

/* The cache must answer exactly as uncached lookups: many addresses near
 * each other (same /24 and /48 in different networks), looked up twice in
 * a shuffled order, against a fresh table set per address. */
static void test_cache_consistent(void **state)
{
	(void)state;
	NEED_DATA();
	static const char *bases[] = {"81.2.69.",    "2.125.160.", "89.160.20.", "214.0.1.",
	                              "175.16.199.", "12.81.96.",  "1.0.0."};
	enum { N = 7 * 64 };
	ng_flow *f = calloc(2 * N, sizeof *f);
	assert_non_null(f);
	size_t n = 0;
	unsigned seed = 12345;
	for (int rep = 0; rep < 2; rep++)
		for (int i = 0; i < N; i++) {
			char a[64], b[64];
			seed = seed * 1103515245 + 12345;
			snprintf(a, sizeof a, "%s%u", bases[(seed >> 8) % 7], (seed >> 16) % 256);
			snprintf(b, sizeof b, "2001:480:%x::%x", (seed >> 4) % 32, seed % 1000);
			f[n++] = flow(a, b);
		}
	ng_enricher *e = build(city, asn, NULL);
	ng_enricher_apply(e, f, n);
	ng_enrich_stats st;
	ng_enricher_get_stats(e, &st);
	assert_true(st.cache_hits > 0);
	for (size_t i = 0; i < n; i += 7) {
		ng_enricher *fresh = build(city, asn, NULL);
		ng_flow g = f[i];
		memset(&g.exporter_name, 0, sizeof g - offsetof(ng_flow, exporter_name));
		g.src_as = g.dst_as = 0;
		ng_enricher_apply(fresh, &g, 1);
		assert_int_equal(g.src_country, f[i].src_country);
		assert_int_equal(g.src_city, f[i].src_city);
		assert_int_equal(g.src_as, f[i].src_as);
		assert_int_equal(g.dst_city, f[i].dst_city);
		assert_int_equal(g.dst_as, f[i].dst_as);
		ng_enricher_free(fresh);
	}
	ng_enricher_free(e);
	free(f);
}

/* Loads configuration text `yml` into *c through a temporary file, as
 * `nagare collect --config` does. */
static void load_yaml(const char *yml, ng_config *c)
{
	char path[] = "/tmp/ng_enrich_cfg_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	const size_t len = strlen(yml);
	assert_int_equal(write(fd, yml, len), (ssize_t)len);
	close(fd);
	char err[512];
	if (ng_config_load(path, c, err, sizeof err) < 0)
		fail_msg("%s", err);
	unlink(path);
}

/* The same records enriched in place (rows) and as the store's flush does
 * it (columns of a view: enrich_columns in collector/enrichment.c) come out the
 * same in every field, with every kind of table: City and ASN databases,
 * networks with roles and sites, an exporter with interfaces; record AS
 * numbers on some rows; IPv4 and IPv6.  A view holds only the fields the
 * set names (ng_enricher_fields), so a missing one would crash ASan. */
static void test_view_columns(void **state)
{
	(void)state;
	NEED_DATA();
	static const char yml[] =
	    "enrich:\n"
	    "  networks:\n"
	    "    - {prefix: 81.2.69.0/24, name: london, role: peer, site: lon}\n"
	    "  exporters:\n"
	    "    - address: 192.0.2.7\n"
	    "      name: edge1\n"
	    "      interfaces:\n"
	    "        - {index: 3, name: Te0/0/0}\n";
	ng_config c;
	char err[512];
	load_yaml(yml, &c);
	c.geoip_db = strdup(city);
	c.asn_db = strdup(asn);
	static const char *bases[] = {"81.2.69.",    "2.125.160.", "89.160.20.", "214.0.1.",
	                              "175.16.199.", "10.1.2.",    "1.0.0."};
	enum { N = 700 };
	ng_flow *rows = calloc(N, sizeof *rows), *orig = calloc(N, sizeof *orig);
	assert_non_null(rows);
	assert_non_null(orig);
	unsigned seed = 777;
	for (size_t i = 0; i < N; i++) {
		char a[64], b[64];
		seed = seed * 1103515245 + 12345;
		snprintf(a, sizeof a, "%s%u", bases[(seed >> 8) % 7], (seed >> 16) % 256);
		if (i % 3)
			snprintf(b, sizeof b, "2001:480:%x::%x", (seed >> 4) % 32, seed % 1000);
		else
			snprintf(b, sizeof b, "89.160.20.%u", (seed >> 4) % 256);
		orig[i] = flow(a, b);
		assert_true(ng_addr_parse(i % 2 ? "192.0.2.7" : "192.0.2.8", orig[i].exporter));
		orig[i].src_as = i % 5 == 0 ? 64500 + (uint32_t)(i % 7) : 0;
		orig[i].in_if = (uint32_t)(i % 4), orig[i].out_if = 3;
		orig[i].in_if_name = i % 4 == 2 ? ng_intern_cstr("from-options") : 0;
		orig[i].protocol = i % 2 ? 6 : 17;
		orig[i].src_port = (uint16_t)(40000 + i), orig[i].dst_port = i % 3 ? 443 : 53;
	}
	memcpy(rows, orig, N * sizeof *rows);
	ng_enricher *e = ng_enricher_build(&c, err, sizeof err);
	assert_non_null(e);
	ng_enricher_apply(e, rows, N);
	ng_enricher_free(e);

	e = ng_enricher_build(&c, err, sizeof err);
	assert_non_null(e);
	const ng_colset fields = ng_enricher_fields(e);
	ng_enrich_view v = {.n = N};
	uint8_t *col[NG_FIELD_COUNT] = {0};
	for (size_t f = 0; f < NG_FIELD_COUNT; f++) {
		if (!ng_colset_has(fields, f))
			continue;
		const size_t sz = ng_fields[f].size;
		assert_non_null(col[f] = malloc(N * sz));
		for (size_t i = 0; i < N; i++)
			memcpy(col[f] + i * sz, (const uint8_t *)&orig[i] + ng_fields[f].offset,
			       sz);
		v.at[f] = col[f];
		v.step[f] = sz;
	}
	ng_enricher_apply_view(e, &v);
	size_t checked = 0;
	for (size_t f = 0; f < NG_FIELD_COUNT; f++) {
		const size_t sz = ng_fields[f].size, off = ng_fields[f].offset;
		for (size_t i = 0; i < N; i++) {
			/* a field outside the view stays as the record had it */
			const uint8_t *got =
			    col[f] ? col[f] + i * sz : (const uint8_t *)&orig[i] + off;
			if (memcmp(got, (const uint8_t *)&rows[i] + off, sz))
				fail_msg("record %zu field %s differs (rows vs columns)", i,
				         ng_fields[f].name);
		}
		checked += col[f] != NULL;
		free(col[f]);
	}
	/* what the view had to carry: the City database has cities, the
	 * network a role and a site, the exporter interface names */
	assert_true(ng_colset_has(fields, NG_F_SRC_CITY));
	assert_true(ng_colset_has(fields, NG_F_DST_NET_SITE));
	assert_true(ng_colset_has(fields, NG_F_IN_IF_NAME));
	assert_false(ng_colset_has(fields, NG_F_BYTES));
	print_message("  %zu columns the same as %d enriched records\n", checked, N);
	size_t london = 0, in_london = 0, named = 0, kept = 0;
	for (size_t i = 0; i < N; i++) {
		char a[64];
		ng_addr_format(orig[i].src_addr, a);
		in_london += !strncmp(a, "81.2.69.", 8);
		london += !strcmp(ng_str(rows[i].src_net), "london") &&
		          !strcmp(ng_str(rows[i].src_net_role), "peer");
		named += !strcmp(ng_str(rows[i].in_if_name), "Te0/0/0");
		kept += !strcmp(ng_str(rows[i].in_if_name), "from-options");
	}
	assert_true(in_london > 0);
	assert_int_equal(london, in_london);
	/* in_if 3 of exporter 192.0.2.7 (odd rows): configured, named; in_if 2
	 * (rows 2 mod 4) of 192.0.2.8: not configured, options data's name kept */
	assert_int_equal(named, N / 4);
	assert_int_equal(kept, N / 4);
	ng_enricher_free(e);
	free(rows);
	free(orig);
	ng_config_free(&c);
}

/* A set without cities, roles, sites, exporters or services names none of
 * their fields: the store carries no columns of zeros for them. */
static void test_view_fields(void **state)
{
	(void)state;
	NEED_DATA();
	ng_config c = {0};
	c.geoip_db = country;
	c.no_services = true;
	char err[512];
	ng_enricher *e = ng_enricher_build(&c, err, sizeof err);
	assert_non_null(e);
	const ng_colset m = ng_enricher_fields(e);
	assert_true(ng_colset_has(m, NG_F_SRC_COUNTRY));
	assert_true(ng_colset_has(m, NG_F_SRC_CONTINENT)); /* GeoLite2-Country has continents */
	assert_false(ng_colset_has(m, NG_F_SRC_CITY));
	assert_false(ng_colset_has(m, NG_F_SRC_AS_NAME)); /* no ASN database */
	assert_false(ng_colset_has(m, NG_F_SERVICE));
	assert_false(ng_colset_has(m, NG_F_SRC_NET_ROLE));
	assert_false(ng_colset_has(m, NG_F_EXPORTER_NAME));
	ng_enricher_free(e);
}

static void expect_error(const char *path, const char *what)
{
	ng_config c = {0};
	c.geoip_db = (char *)path;
	char err[512] = "";
	ng_enricher *e = ng_enricher_build(&c, err, sizeof err);
	assert_null(e);
	print_message("  %s\n", err);
	if (!strstr(err, path))
		fail_msg("error '%s' does not name %s", err, path);
	if (!strstr(err, what))
		fail_msg("error '%s' does not say '%s'", err, what);
	c.geoip_optional = true; /* told to: runs on without it */
	e = ng_enricher_build(&c, err, sizeof err);
	assert_non_null(e);
	ng_flow f = flow("81.2.69.142", "1.0.0.1");
	ng_enricher_apply(e, &f, 1);
	assert_int_equal(f.src_country, 0);
	ng_enricher_free(e);
}

static void test_bad_files(void **state)
{
	(void)state;
	NEED_DATA();
	expect_error("/nonexistent/GeoLite2-City.mmdb", "No such file");
	expect_error(broken, "points outside the file");
	expect_error(badnodes, "MaxMind DB");
	char dir[] = "/tmp/ng_enrich_XXXXXX";
	assert_non_null(mkdtemp(dir));
	expect_error(dir, "is a directory");
	char empty[600], notdb[600];
	snprintf(empty, sizeof empty, "%s/empty.mmdb", dir);
	snprintf(notdb, sizeof notdb, "%s/text.mmdb", dir);
	FILE *fp = fopen(empty, "w");
	fclose(fp);
	fp = fopen(notdb, "w");
	fputs("this is not a database\n", fp);
	fclose(fp);
	expect_error(empty, "MaxMind DB");
	expect_error(notdb, "MaxMind DB");
	if (geteuid() != 0) { /* root reads a mode-000 file anyway */
		chmod(notdb, 0);
		expect_error(notdb, "Permission denied");
	}
	unlink(empty);
	unlink(notdb);
	rmdir(dir);
}

static void test_config_networks_exporters(void **state)
{
	(void)state;
	static const char yml[] =
	    "enrich:\n"
	    "  networks:\n"
	    "    - {prefix: 10.1.0.0/16, name: office, role: internal, site: tokyo}\n"
	    "    - prefix: 10.1.2.0/24\n"
	    "      name: lab\n"
	    "    - prefix: 2001:db8:1::/48\n"
	    "      name: v6office\n"
	    "      site: osaka\n"
	    "  exporters:\n"
	    "    - address: 192.0.2.7\n"
	    "      name: edge1\n"
	    "      interfaces:\n"
	    "        - {index: 3, name: TenGigabitEthernet0/0/0, description: uplink}\n"
	    "        - {index: 1, name: Gi0/1}\n";
	ng_config c;
	char err[512];
	load_yaml(yml, &c);
	assert_int_equal(c.nnets, 3);
	assert_int_equal(c.nexps, 1);
	ng_enricher *e = ng_enricher_build(&c, err, sizeof err);
	assert_non_null(e);
	ng_flow f[4] = {flow("10.1.9.9", "10.1.2.3"), flow("10.2.0.1", "2001:db8:1::1"),
	                flow("127.0.0.1", "fd12::1"), flow("100.64.1.1", "8.8.8.8")};
	for (int i = 0; i < 4; i++)
		assert_true(ng_addr_parse(i < 2 ? "192.0.2.7" : "192.0.2.8", f[i].exporter));
	f[0].in_if = 3, f[0].out_if = 1;
	f[1].in_if = 2;
	f[2].in_if = 3;
	f[0].protocol = 6, f[0].src_port = 51234, f[0].dst_port = 443;
	f[1].protocol = 17, f[1].src_port = 53, f[1].dst_port = 40000;
	f[2].protocol = 6, f[2].src_port = 22, f[2].dst_port = 443; /* both named: lower */
	f[3].protocol = 1;
	ng_enricher_apply(e, f, 4);
	assert_str(f[0].src_net, "office");
	assert_str(f[0].src_net_role, "internal");
	assert_str(f[0].src_net_site, "tokyo");
	assert_str(f[0].dst_net, "lab"); /* longest prefix wins */
	assert_str(f[0].dst_net_role, "");
	assert_str(f[1].src_net, "private"); /* RFC 1918 */
	assert_str(f[1].dst_net, "v6office");
	assert_str(f[1].dst_net_site, "osaka");
	assert_str(f[2].src_net, "loopback");
	assert_str(f[2].dst_net, "ula");    /* RFC 4193 */
	assert_str(f[3].src_net, "shared"); /* RFC 6598 */
	assert_str(f[3].dst_net, "");
	assert_str(f[0].exporter_name, "edge1");
	assert_str(f[0].in_if_name, "TenGigabitEthernet0/0/0");
	assert_str(f[0].out_if_name, "Gi0/1");
	assert_str(f[1].in_if_name, ""); /* index 2 not configured */
	assert_str(f[2].exporter_name, "");
	assert_str(f[2].in_if_name, "");
	/* services database (netdb): the independent answer is getservbyport */
	assert_str(f[0].service, "https");
	assert_str(f[1].service, "domain");
	assert_str(f[2].service, "ssh");
	assert_str(f[3].service, "");
	ng_enricher_free(e);
	ng_config_free(&c);
}

/* The services table (a bit per named port, then the name) against the
 * independent answer, getservbyport, for every 7th port and the ports at
 * the edges of the bitmap's words, on either side of the flow, with an
 * unnamed peer port; both named: the lower port's name. */
static void test_services_bitmap(void **state)
{
	(void)state;
	ng_services *s = ng_services_new();
	assert_non_null(s);
	static const struct {
		const char *name;
		uint8_t proto;
	} protos[] = {{"tcp", 6}, {"udp", 17}};
	for (size_t k = 0; k < 2; k++) {
		uint16_t unnamed = 0; /* a port without a name, for the other side */
		for (unsigned p = 65535; p > 1024 && !unnamed; p--)
			if (!getservbyport(htons((uint16_t)p), protos[k].name))
				unnamed = (uint16_t)p;
		assert_int_not_equal(unnamed, 0);
		unsigned checked = 0, named = 0;
		for (unsigned p = 0; p < 65536; p++) {
			if (p % 7 && p % 64 != 0 && p % 64 != 63)
				continue;
			struct servent *se = getservbyport(htons((uint16_t)p), protos[k].name);
			const char *want = se ? se->s_name : "";
			uint16_t port = (uint16_t)p;
			assert_string_equal(
			    ng_str(ng_services_lookup(s, protos[k].proto, port, unnamed)), want);
			assert_string_equal(
			    ng_str(ng_services_lookup(s, protos[k].proto, unnamed, port)), want);
			checked++;
			named += se != NULL;
		}
		assert_true(checked > 9000);
		assert_true(named >= 10); /* netbase names hundreds of ports; 1 in 7 here */
	}
	/* both named: the lower port; ICMP and unknown protocols: none */
	assert_string_equal(ng_str(ng_services_lookup(s, 6, 443, 22)), "ssh");
	assert_string_equal(ng_str(ng_services_lookup(s, 6, 22, 443)), "ssh");
	assert_string_equal(ng_str(ng_services_lookup(s, 17, 53, 123)), "domain");
	assert_string_equal(ng_str(ng_services_lookup(s, 1, 22, 443)), "");
	assert_string_equal(ng_str(ng_services_lookup(s, 47, 22, 443)), "");
	ng_services_free(s);
}

/* collect's time window keys (docs/security.md): absent, nothing is set
 * (the collector's defaults apply); 0s is a window of its own. */
static void test_config_time_window(void **state)
{
	(void)state;
	ng_config c;
	load_yaml("collect:\n  max_past: 2d\n  max_future: 0s\n  implausible_time: reject\n", &c);
	assert_int_equal(c.max_past_ms, 2 * 86400000ull);
	assert_true(c.max_future_set);
	assert_int_equal(c.max_future_ms, 0);
	assert_int_equal(c.implausible_time, NG_CFG_REJECT);
	ng_config_free(&c);
	load_yaml("collect:\n  implausible_time: keep\n", &c);
	assert_int_equal(c.max_past_ms, 0);
	assert_false(c.max_future_set);
	assert_int_equal(c.implausible_time, NG_CFG_KEEP);
	ng_config_free(&c);
}

static void test_config_errors(void **state)
{
	(void)state;
	static const struct {
		const char *yml, *want;
	} cases[] = {
	    {"enrich:\n  geoip: x\n", ":2: enrich: unknown key 'geoip'"},
	    {"enrich:\n  networks:\n    - {prefix: 10.0.0.0/33, name: x}\n", "not ADDRESS/LENGTH"},
	    {"enrich:\n  networks:\n    - {name: x}\n", "needs a prefix"},
	    {"collect:\n  stats_interval: 0\n", "1 to 86400"},
	    {"collect:\n  max_past: 30s\n",
	     ":2: max_past: give a duration such as 7d (1m to 36600d)"},
	    {"collect:\n  max_future: 2d\n", "max_future: give a duration such as 1h (0s to 1d)"},
	    {"collect:\n  max_future: soon\n", "max_future: give a duration"},
	    {"collect:\n  implausible_time: drop\n", "implausible_time: give keep or reject"},
	    {"enrich: [\n", "YAML"},
	    {"enrich:\n  exporters:\n    - {address: nope}\n", "not an IP address"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char path[] = "/tmp/ng_enrich_cfg_XXXXXX";
		int fd = mkstemp(path);
		assert_int_equal(write(fd, cases[i].yml, strlen(cases[i].yml)),
		                 (ssize_t)strlen(cases[i].yml));
		close(fd);
		ng_config c;
		char err[512] = "";
		assert_int_equal(ng_config_load(path, &c, err, sizeof err), -1);
		if (!strstr(err, cases[i].want) || !strstr(err, path))
			fail_msg("case %zu: '%s' lacks '%s'", i, err, cases[i].want);
		unlink(path);
	}
}

static void test_env_overrides(void **state)
{
	(void)state;
	ng_config c = {0};
	ng_config_set(&c.geoip_db, "/from/file.mmdb");
	setenv("NAGARE_GEOIP_DB", "/from/env.mmdb", 1);
	setenv("NAGARE_GEOIP_OPTIONAL", "yes", 1);
	char err[256];
	assert_int_equal(ng_config_env(&c, err, sizeof err), 0);
	assert_string_equal(c.geoip_db, "/from/env.mmdb");
	assert_true(c.geoip_optional);
	setenv("NAGARE_GEOIP_OPTIONAL", "maybe", 1);
	assert_int_equal(ng_config_env(&c, err, sizeof err), -1);
	unsetenv("NAGARE_GEOIP_DB");
	unsetenv("NAGARE_GEOIP_OPTIONAL");
	ng_config_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_city_v4_v6),
	    cmocka_unit_test(test_language),
	    cmocka_unit_test(test_country_db),
	    cmocka_unit_test(test_asn),
	    cmocka_unit_test(test_record_as_names),
	    cmocka_unit_test(test_cache_consistent),
	    cmocka_unit_test(test_view_columns),
	    cmocka_unit_test(test_view_fields),
	    cmocka_unit_test(test_bad_files),
	    cmocka_unit_test(test_config_networks_exporters),
	    cmocka_unit_test(test_services_bitmap),
	    cmocka_unit_test(test_config_time_window),
	    cmocka_unit_test(test_config_errors),
	    cmocka_unit_test(test_env_overrides),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
