/*
 * test_query_cli.c — `nagare query` end to end on a small hand-made store.
 *
 * Four flows whose top-N tables, rates and listing order are worked out by
 * hand in the comments below; the binary ($NG_BIN) must print exactly
 * those numbers, and fail with the documented exit status and message on
 * bad input.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/addr.h"
#include "core/strtab.h"
#include "store/store.h"

#define T0 UINT64_C(1764460800000) /* 2025-11-30T00:00:00Z */

static char store[64], out_path[96], err_path[96];
static const char *bin;

static void flow(ng_flow *r, const char *src, const char *dst, uint16_t dport, uint8_t proto,
                 uint64_t start, uint64_t end, uint64_t packets, uint64_t bytes)
{
	memset(r, 0, sizeof *r);
	assert_true(ng_addr_parse(src, r->src_addr));
	assert_true(ng_addr_parse(dst, r->dst_addr));
	r->src_port = 40000;
	r->dst_port = dport;
	r->protocol = proto;
	r->flow_start = T0 + start;
	r->flow_end = T0 + end;
	r->packets = r->packets_raw = packets;
	r->bytes = r->bytes_raw = bytes;
	r->sampling_rate = 1;
	r->ip_version = 4;
}

static int setup(void **state)
{
	(void)state;
	bin = getenv("NG_BIN");
	strcpy(store, "/tmp/ng_test_cli_XXXXXX");
	assert_non_null(mkdtemp(store));
	snprintf(out_path, sizeof out_path, "%s.out", store);
	snprintf(err_path, sizeof err_path, "%s.err", store);
	ng_flow f[4];
	flow(&f[0], "10.0.0.1", "192.0.2.1", 443, 6, 1000, 3000, 10, 2000);
	flow(&f[1], "10.0.0.1", "192.0.2.2", 80, 6, 2000, 6000, 5, 1000);
	flow(&f[2], "10.0.0.2", "192.0.2.1", 53, 17, 1500, 2500, 50, 5000);
	flow(&f[3], "10.0.0.3", "192.0.2.1", 443, 6, 4000, 4000, 1, 100);
	/* enrichment strings: sources JP, JP, US, "" (unknown); all to DE */
	f[0].src_country = f[1].src_country = ng_intern_cstr("JP");
	f[2].src_country = ng_intern_cstr("US");
	for (int i = 0; i < 4; i++) {
		f[i].dst_country = ng_intern_cstr("DE");
		f[i].dst_as_name = ng_intern_cstr(i == 2 ? "Example, \"DNS\" Ltd" : "Example Web");
	}
	char err[256];
	ng_store_writer *w = ng_store_writer_open(store, err, sizeof err);
	assert_non_null(w);
	assert_int_equal(ng_store_writer_append(w, f, 4), 0);
	assert_int_equal(ng_store_writer_close(w), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[512];
	snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s' '%s'", store, out_path, err_path);
	return system(cmd);
}

static char out[65536], errtext[65536];

static void slurp(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	size_t n = fread(buf, 1, len - 1, f);
	buf[n] = 0;
	fclose(f);
}

/* Runs `nagare query ARGS` (ARGS already shell-quoted); returns the exit
 * status, stdout in out[], stderr in errtext[]. */
static int run(const char *args)
{
	char cmd[2048];
	snprintf(cmd, sizeof cmd, "'%s' query %s >'%s' 2>'%s'", bin, args, out_path, err_path);
	int st = system(cmd);
	slurp(out_path, out, sizeof out);
	slurp(err_path, errtext, sizeof errtext);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static bool have_bin(void)
{
	return bin && access(bin, X_OK) == 0;
}

/*
 * -s srcip/bytes, by hand:
 *   10.0.0.2  1 flow,  50 pkts, 5000 B, 1.5 s .. 2.5 s: 1 s  -> 50 pps, 40000 bps, bpp 100
 *   10.0.0.1  2 flows, 15 pkts, 3000 B, 1.0 s .. 6.0 s: 5 s  -> 3 pps, 4800 bps, bpp 200
 *   10.0.0.3  1 flow,   1 pkt,   100 B, 4.0 s .. 4.0 s: 0 s  -> 0, 0, bpp 100
 */
static void test_top_csv(void **state)
{
	(void)state;
	if (!have_bin())
		skip();
	char args[256];
	snprintf(args, sizeof args, "--store '%s' -s srcip/bytes --format csv -q", store);
	assert_int_equal(run(args), 0);
	assert_string_equal(
	    out,
	    "first_seen,last_seen,srcip,flows,packets,bytes,pps,bps,bpp\n"
	    "2025-11-30T00:00:01.500Z,2025-11-30T00:00:02.500Z,10.0.0.2,1,50,5000,50,40000,100\n"
	    "2025-11-30T00:00:01.000Z,2025-11-30T00:00:06.000Z,10.0.0.1,2,15,3000,3,4800,200\n"
	    "2025-11-30T00:00:04.000Z,2025-11-30T00:00:04.000Z,10.0.0.3,1,1,100,0,0,100\n");
	assert_string_equal(errtext, "");
}

/* -s ip: each flow under both addresses.  192.0.2.1 is in 3 flows,
 * 10.0.0.1 in 2, the other four in 1 (ties by address bytes).
 * -n 2 keeps the first two. */
static void test_top_either_ndjson(void **state)
{
	(void)state;
	if (!have_bin())
		skip();
	char args[256];
	snprintf(args, sizeof args, "--store '%s' -s ip -n 2 --format ndjson -q", store);
	assert_int_equal(run(args), 0);
	assert_string_equal(out, "{\"first_seen\":\"2025-11-30T00:00:01.000Z\",\"last_seen\":"
	                         "\"2025-11-30T00:00:04.000Z\","
	                         "\"ip\":\"192.0.2.1\",\"flows\":3,\"packets\":61,\"bytes\":7100,"
	                         "\"pps\":20,\"bps\":18933,\"bpp\":116}\n"
	                         "{\"first_seen\":\"2025-11-30T00:00:01.000Z\",\"last_seen\":"
	                         "\"2025-11-30T00:00:06.000Z\","
	                         "\"ip\":\"10.0.0.1\",\"flows\":2,\"packets\":15,\"bytes\":3000,"
	                         "\"pps\":3,\"bps\":4800,\"bpp\":200}\n");
}

/* A filter as separate words; the listing is in flow_start order. */
static void test_listing_filter_ndjson(void **state)
{
	(void)state;
	if (!have_bin())
		skip();
	char args[256];
	snprintf(args, sizeof args, "--store '%s' proto tcp and dst port 443 --format ndjson -q",
	         store);
	assert_int_equal(run(args), 0);
	char *l1 = out, *l2 = strchr(out, '\n');
	assert_non_null(l2);
	*l2++ = 0;
	assert_non_null(strstr(l1, "\"flow_start\":\"2025-11-30T00:00:01.000Z\""));
	assert_non_null(strstr(l1, "\"src_addr\":\"10.0.0.1\""));
	assert_non_null(strstr(l2, "\"flow_start\":\"2025-11-30T00:00:04.000Z\""));
	assert_non_null(strstr(l2, "\"src_addr\":\"10.0.0.3\""));
	assert_string_equal(strchr(l2, '\n'), "\n");
}

static void test_table_and_summary(void **state)
{
	(void)state;
	if (!have_bin())
		skip();
	char args[256];
	snprintf(args, sizeof args,
	         "--store '%s' -s dstport/packets --from 2025-11-30T00:00:01.200Z", store);
	assert_int_equal(run(args), 0);
	/* the flow at 1.0 s is outside: port 53 (50 pkts), 80 (5), 443 (1) */
	assert_non_null(strstr(out, "Top 3 Dst Port ordered by packets:"));
	char *p53 = strstr(out, " 53 "), *p80 = strstr(out, " 80 "), *p443 = strstr(out, " 443 ");
	assert_non_null(p53);
	assert_non_null(p80);
	assert_non_null(p443);
	assert_true(p53 < p80 && p80 < p443);
	assert_non_null(
	    strstr(out, "Summary: total flows: 3, total bytes: 6100, total packets: 56"));
	assert_non_null(strstr(out, "segments read: 1"));
}

static void test_usage_errors(void **state)
{
	(void)state;
	if (!have_bin())
		skip();
	char args[256];
	snprintf(args, sizeof args, "--store '%s' src port http", store);
	assert_int_equal(run(args), 2);
	assert_non_null(strstr(errtext, "expected a port number after 'port'\n"
	                                "  src port http\n"
	                                "           ^"));
	snprintf(args, sizeof args, "--store '%s' -s nosuchfield", store);
	assert_int_equal(run(args), 2);
	assert_non_null(strstr(errtext, "unknown group-by field 'nosuchfield'"));
	snprintf(args, sizeof args, "--store '%s' -s srcip/loudness", store);
	assert_int_equal(run(args), 2);
	snprintf(args, sizeof args, "--store '%s' --from tomorrowish", store);
	assert_int_equal(run(args), 2);
	/* no --store: the default store (cli/store_path.h), said on stderr */
	setenv("NAGARE_STORE", "/nonexistent/nagare-default", 1);
	assert_int_equal(run("-s srcip"), 1);
	unsetenv("NAGARE_STORE");
	assert_non_null(strstr(errtext, "nagare query: store /nonexistent/nagare-default "
	                                "(default: $NAGARE_STORE)\n"));
	assert_non_null(strstr(errtext, "not a flow store"));
	assert_int_equal(run("--store /nonexistent/nagare-store"), 1);
	assert_non_null(strstr(errtext, "not a flow store"));
	assert_int_equal(run("--help"), 0);
	assert_non_null(strstr(out, "Examples:"));
}

/* --format json: one document; read back by python3's json module. */
static void test_json_document(void **state)
{
	(void)state;
	if (!have_bin() || system("python3 -c 1 >/dev/null 2>&1"))
		skip();
	char args[512];
	snprintf(args, sizeof args,
	         "--store '%s' -s srcip/bytes --format json 'proto tcp or proto udp'", store);
	assert_int_equal(run(args), 0);
	char cmd[1024];
	snprintf(cmd, sizeof cmd,
	         "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); "
	         "q=d[\"query\"]; r=d[\"rows\"]; s=d[\"summary\"]; "
	         "assert q[\"kind\"]==\"top\" and q[\"keys\"]==[\"srcip\"] and "
	         "q[\"order\"]==\"bytes\", q; "
	         "assert q[\"filter\"]==\"proto tcp or proto udp\", q; "
	         "assert [(x[\"srcip\"],x[\"flows\"],x[\"packets\"],x[\"bytes\"]) for x in r]=="
	         "[(\"10.0.0.2\",1,50,5000),(\"10.0.0.1\",2,15,3000),(\"10.0.0.3\",1,1,100)], r; "
	         "assert r[0][\"bps\"]==40000 and r[1][\"pps\"]==3, r; "
	         "assert (s[\"flows\"],s[\"packets\"],s[\"bytes\"])==(4,66,8100), s' '%s'",
	         out_path);
	assert_int_equal(system(cmd), 0);
}

/*
 * -A srcip,dstport: one record a flow here, in first-seen order:
 *   1.0 s 10.0.0.1 443, 1.5 s 10.0.0.2 53, 2.0 s 10.0.0.1 80, 4.0 s 10.0.0.3 443
 */
static void test_aggregate_csv(void **state)
{
	(void)state;
	if (!have_bin())
		skip();
	char args[256];
	snprintf(args, sizeof args, "--store '%s' -A srcip,dstport --format csv -q", store);
	assert_int_equal(run(args), 0);
	assert_string_equal(
	    out,
	    "first_seen,last_seen,srcip,dstport,flows,packets,bytes,pps,bps,bpp\n"
	    "2025-11-30T00:00:01.000Z,2025-11-30T00:00:03.000Z,10.0.0.1,443,1,10,2000,5,8000,200\n"
	    "2025-11-30T00:00:01.500Z,2025-11-30T00:00:02.500Z,10.0.0.2,53,1,50,5000,50,40000,100\n"
	    "2025-11-30T00:00:02.000Z,2025-11-30T00:00:06.000Z,10.0.0.1,80,1,5,1000,1,2000,200\n"
	    "2025-11-30T00:00:04.000Z,2025-11-30T00:00:04.000Z,10.0.0.3,443,1,1,100,0,0,100\n");
	/* /24 prefixes: all four flows in 10.0.0.0/24, two to 443 */
	snprintf(args, sizeof args,
	         "--store '%s' -A srcip4/24,dstport -O flows --format csv -q --no-header", store);
	assert_int_equal(run(args), 0);
	assert_non_null(strstr(out, ",10.0.0.0/24,443,2,11,2100,"));
	assert_non_null(strstr(out, ",10.0.0.0/24,53,1,50,5000,"));
}

/*
 * --interval 1s -s proto/flows -n 1: TCP (3 flows) is the one series, UDP
 * is "other".  Buckets by flow_start: 1 s: TCP 443 flow + UDP; 2 s: TCP
 * port 80; 4 s: TCP 443.  Rates over 1 s: bytes x 8, packets.
 */
static void test_series_csv(void **state)
{
	(void)state;
	if (!have_bin())
		skip();
	char args[256];
	snprintf(args, sizeof args,
	         "--store '%s' --interval 1s -s proto/flows -n 1 --format csv -q", store);
	assert_int_equal(run(args), 0);
	assert_string_equal(out, "time,key,flows,packets,bytes,bps,pps\n"
	                         "2025-11-30T00:00:01.000Z,6,1,10,2000,16000,10\n"
	                         "2025-11-30T00:00:01.000Z,other,1,50,5000,40000,50\n"
	                         "2025-11-30T00:00:02.000Z,6,1,5,1000,8000,5\n"
	                         "2025-11-30T00:00:04.000Z,6,1,1,100,800,1\n");
}

/* --pairs srcip,dstip -n 1 -O bytes: 10.0.0.2 -> 192.0.2.1 (5000 B); the
 * other three flows: 16 packets, 3100 bytes. */
static void test_pairs_ndjson(void **state)
{
	(void)state;
	if (!have_bin())
		skip();
	char args[256];
	snprintf(args, sizeof args,
	         "--store '%s' --pairs srcip,dstip -n 1 -O bytes --format ndjson -q", store);
	assert_int_equal(run(args), 0);
	assert_string_equal(out,
	                    "{\"source\":\"10.0.0.2\",\"target\":\"192.0.2.1\",\"flows\":1,"
	                    "\"packets\":50,\"bytes\":5000}\n"
	                    "{\"source\":\"other\",\"target\":\"other\",\"flows\":3,\"packets\":16,"
	                    "\"bytes\":3100}\n");
}

static void test_new_usage_errors(void **state)
{
	(void)state;
	if (!have_bin())
		skip();
	char args[256];
	snprintf(args, sizeof args, "--store '%s' --pairs srcip", store);
	assert_int_equal(run(args), 2);
	assert_non_null(strstr(errtext, "--pairs takes two fields"));
	snprintf(args, sizeof args, "--store '%s' --pairs ip,dstport", store);
	assert_int_equal(run(args), 2);
	assert_non_null(strstr(errtext, "one-sided fields"));
	snprintf(args, sizeof args, "--store '%s' --interval 0", store);
	assert_int_equal(run(args), 2);
	assert_non_null(strstr(errtext, "bad --interval '0'"));
	snprintf(args, sizeof args, "--store '%s' --interval 1m --pairs srcip,dstip", store);
	assert_int_equal(run(args), 2);
	assert_non_null(strstr(errtext, "do not combine"));
	snprintf(args, sizeof args, "--store '%s' -A srcip4/40", store);
	assert_int_equal(run(args), 2);
	assert_non_null(strstr(errtext, "bad prefix length"));
	snprintf(args, sizeof args, "--store '%s' --format xml", store);
	assert_int_equal(run(args), 2);
	/* a filter file: comments, several lines, the faulty line quoted */
	char path[128];
	snprintf(path, sizeof path, "%s.filter", store);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("# web traffic\nproto tcp\n  and dst port 443 # https\n", f);
	fclose(f);
	snprintf(args, sizeof args, "--store '%s' --filter-file '%s' -s dstport -q --format csv",
	         store, path);
	assert_int_equal(run(args), 0);
	assert_non_null(strstr(out, ",443,2,11,2100,"));
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("proto tcp\n  and prot 443\n", f);
	fclose(f);
	snprintf(args, sizeof args, "--store '%s' --filter-file '%s'", store, path);
	assert_int_equal(run(args), 2);
	assert_non_null(strstr(errtext, "bad filter: unknown filter keyword 'prot' (line 2)\n"
	                                "    and prot 443\n"
	                                "        ^"));
	snprintf(args, sizeof args, "--store '%s' --filter-file '%s' proto udp", store, path);
	assert_int_equal(run(args), 2);
	unlink(path);
}

/* String fields from the store: -s, --pairs and filters; CSV quoting and
 * JSON escaping of names with commas and quotes. */
static void test_string_fields(void **state)
{
	(void)state;
	if (!have_bin())
		skip();
	char args[256];
	snprintf(args, sizeof args, "--store '%s' -s src_country/bytes --format csv -q --no-header",
	         store);
	assert_int_equal(run(args), 0);
	/* US: 5000 B; JP: 3000 B; "": 100 B */
	const char *us = strstr(out, ",US,1,50,5000,"), *jp = strstr(out, ",JP,2,15,3000,");
	const char *none = strstr(out, ",,1,1,100,");
	assert_non_null(us);
	assert_non_null(jp);
	assert_non_null(none);
	assert_true(us < jp && jp < none);
	snprintf(args, sizeof args,
	         "--store '%s' --pairs srccountry,dstcountry -n 1 --format ndjson -q", store);
	assert_int_equal(run(args), 0);
	assert_string_equal(out,
	                    "{\"source\":\"JP\",\"target\":\"DE\",\"flows\":2,\"packets\":15,"
	                    "\"bytes\":3000}\n"
	                    "{\"source\":\"other\",\"target\":\"other\",\"flows\":2,\"packets\":51,"
	                    "\"bytes\":5100}\n");
	snprintf(args, sizeof args,
	         "--store '%s' -q --format csv -s dstasname 'src country jp or dst asname dns'",
	         store);
	assert_int_equal(run(args), 0);
	assert_non_null(strstr(out, ",\"Example, \"\"DNS\"\" Ltd\",1,50,5000,"));
	assert_non_null(strstr(out, ",Example Web,2,15,3000,"));
	snprintf(args, sizeof args, "--store '%s' -q --format ndjson -s dstasname 'dst asname dns'",
	         store);
	assert_int_equal(run(args), 0);
	assert_non_null(strstr(out, "\"dstasname\":\"Example, \\\"DNS\\\" Ltd\""));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_top_csv),
	    cmocka_unit_test(test_top_either_ndjson),
	    cmocka_unit_test(test_listing_filter_ndjson),
	    cmocka_unit_test(test_table_and_summary),
	    cmocka_unit_test(test_usage_errors),
	    cmocka_unit_test(test_json_document),
	    cmocka_unit_test(test_aggregate_csv),
	    cmocka_unit_test(test_series_csv),
	    cmocka_unit_test(test_pairs_ndjson),
	    cmocka_unit_test(test_new_usage_errors),
	    cmocka_unit_test(test_string_fields),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
