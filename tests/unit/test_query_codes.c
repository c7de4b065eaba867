/*
 * test_query_codes.c — filters on dictionary codes: a query whose filter
 * reads a RANK column that nothing else reads tests each distinct value
 * once (store.h ng_scan_opts.select_codes, filter_eval.c code_answers).
 *
 * A store of 4 segments of 16384 rows with heavy-tailed IPv4 source
 * addresses and source AS numbers (the writer stores them RANK); random
 * filters over those columns, mixed with protocol and port terms.  Every
 * answer equals a row-by-row reference (ng_filter_match_flow over the
 * records written): the flows and bytes in all, and per protocol; the
 * same filter grouped by the source address and AS (read as values)
 * agrees;
 * and the scan does read codes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/field.h"
#include "query/filter.h"
#include "query/query.h"
#include "store/store.h"
#include "test_filter_gen.h"
#include "test_rng.h"

#define T0 UINT64_C(1764460800000)
enum { NSEG = 4, PER = 16384, N = NSEG * PER };

static uint64_t rng = 0x5DEECE66Dull;
static uint64_t rnd(void)
{
	return ts_xorshift64(&rng);
}

/* 0..n-1, 0 the most likely */
static unsigned skewed(unsigned n)
{
	double u = (double)(rnd() >> 11) / 9007199254740992.0;
	return (unsigned)(n * u * u * u);
}

static char dir[64];
static ng_flow *rows;

static void make_store(void)
{
	strcpy(dir, "/tmp/ng_test_codes_XXXXXX");
	assert_non_null(mkdtemp(dir));
	rows = calloc(N, sizeof *rows);
	char err[256];
	ng_store_writer *w = ng_store_writer_open(dir, err, sizeof err);
	assert_non_null(w);
	for (unsigned k = 0; k < NSEG; k++) {
		for (unsigned i = 0; i < PER; i++) {
			ng_flow *r = &rows[k * PER + i];
			r->flow_start = T0 + k * 600000 + i * 11;
			r->flow_end = r->flow_start + rnd() % 5000;
			r->time_received = r->flow_end;
			r->bytes = 40 + rnd() % 10000;
			r->packets = 1 + rnd() % 20;
			r->ip_version = 4;
			r->protocol = (uint8_t)(rnd() % 4 ? 6 : 17);
			r->dst_port = (uint16_t)(rnd() % 2000);
			unsigned a = skewed(3000); /* 10.0.0.0 - 10.0.11.183 */
			r->src_addr[10] = r->src_addr[11] = 0xff;
			r->src_addr[12] = 10, r->src_addr[14] = (uint8_t)(a >> 8),
			r->src_addr[15] = (uint8_t)a;
			r->src_as = 64512 + skewed(2000);
			r->dst_addr[10] = r->dst_addr[11] = 0xff;
			r->dst_addr[12] = 192, r->dst_addr[13] = 168, r->dst_addr[15] = (uint8_t)i;
		}
		assert_int_equal(ng_store_writer_append(w, rows + k * PER, PER), 0);
		assert_int_equal(ng_store_writer_flush(w), 0);
	}
	assert_int_equal(ng_store_writer_close(w), 0);
}

static ng_filter *parse(const char *text)
{
	char err[512];
	ng_filter *f = ng_filter_parse(text, err, sizeof err, NULL);
	if (!f)
		fail_msg("%s: %s", text, err);
	return f;
}

static void run(const char *filter, const char *keys, ng_query_result *res)
{
	ng_query q = {.from_ms = 0, .to_ms = UINT64_MAX, .order = NG_ORDER_BYTES, .threads = 2};
	char err[512];
	assert_int_equal(ng_query_parse_keys(&q, keys, err, sizeof err), 0);
	q.filter = parse(filter);
	assert_int_equal(ng_query_run(dir, &q, res, err, sizeof err), 0);
	assert_int_equal(res->scan.errors, 0);
	ng_filter_free(q.filter);
}

static const char *ops[] = {"", "=", "<", ">", "<=", ">=", "!="};

static void random_term(char *b, size_t len)
{
	unsigned a = skewed(3000), as = 64512 + skewed(2000);
	switch (rnd() % 8) {
	case 0: snprintf(b, len, "src ip 10.0.%u.%u", a >> 8, a & 255); break;
	case 1:
		snprintf(b, len, "src net 10.0.%u.0/%u", a >> 8, 20 + (unsigned)(rnd() % 12));
		break;
	case 2:
		snprintf(b, len, "src ip in [10.0.%u.%u 10.0.0.0/%u]", a >> 8, a & 255,
		         24 + (unsigned)(rnd() % 8));
		break;
	case 3: snprintf(b, len, "src as %s %u", ops[rnd() % 7], as); break;
	case 4: snprintf(b, len, "src as in [%u %u 1]", as, 64512 + skewed(2000)); break;
	case 5: snprintf(b, len, "as %u", as); break; /* either side: dst_as is 0 */
	case 6: snprintf(b, len, "proto %s", rnd() % 2 ? "tcp" : "udp"); break;
	default: snprintf(b, len, "dst port < %u", (unsigned)(rnd() % 2000)); break;
	}
}

/* The flows of the row with protocol p in a group-by on "proto". */
static const ng_agg_row *proto_row(const ng_query_result *res, uint8_t p)
{
	for (size_t i = 0; i < res->nrows; i++)
		if (res->rows[i].key[0] == p)
			return &res->rows[i];
	return NULL;
}

static void test_random_filters_on_codes(void **state)
{
	(void)state;
	make_store();
	uint64_t coded = 0, matched = 0;
	for (int it = 0; it < 120; it++) {
		char text[2048];
		ts_random_filter(text, sizeof text, 3, random_term, rnd);
		ng_filter *ref = parse(text);
		uint64_t nref = 0, bytes = 0, per[256] = {0}, bper[256] = {0};
		for (size_t i = 0; i < N; i++)
			if (ng_filter_match_flow(ref, &rows[i])) {
				nref++, bytes += rows[i].bytes;
				per[rows[i].protocol]++, bper[rows[i].protocol] += rows[i].bytes;
			}
		ng_filter_free(ref);
		matched += nref > 0;
		ng_query_result a, b;
		run(text, "proto", &a);
		if (a.flows_total != nref || a.bytes_total != bytes)
			fail_msg("%s: %" PRIu64 " flows, %" PRIu64 " bytes; reference %" PRIu64
			         ", %" PRIu64,
			         text, a.flows_total, a.bytes_total, nref, bytes);
		for (unsigned p = 0; p < 256; p++) {
			const ng_agg_row *r = proto_row(&a, (uint8_t)p);
			if ((r ? r->flows : 0) != per[p] || (r ? r->bytes : 0) != bper[p])
				fail_msg("%s: protocol %u differs from the reference", text, p);
		}
		coded += a.scan.blocks_coded;
		/* grouped by the address and AS themselves: read as values */
		run(text, "srcip,srcas", &b);
		assert_int_equal(b.flows_total, nref);
		assert_int_equal(b.bytes_total, bytes);
		assert_int_equal(b.scan.blocks_coded, 0);
		ng_query_result_free(&a);
		ng_query_result_free(&b);
	}
	print_message("filters on codes: %" PRIu64 " of 120 match rows; %" PRIu64
	              " blocks filtered on codes\n",
	              matched, coded);
	assert_true(matched > 60);
	assert_true(coded > 120);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	free(rows);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_random_filters_on_codes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
