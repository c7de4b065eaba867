/*
 * test_decode_session.c — IPFIX templates scoped to their transport
 * session (RFC 7011 §8: "Templates ... are only valid within the
 * Transport Session" over TCP and SCTP): two connections from one
 * address and one observation domain may give one Template ID two
 * layouts; a session's end drops its templates; counters survive as one
 * row per exporter and domain; the state file keeps no session template.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_decode_helpers.h"

#define EXPORT_S 1700000000u

/* Template 256: source, destination, bytes, packets (4 bytes each). */
static const struct tb_fs four[] = {{8, 4, 0}, {12, 4, 0}, {1, 4, 0}, {2, 4, 0}};
/* Template 256 again, another layout: bytes first, 8 bytes wide. */
static const struct tb_fs other[] = {{1, 8, 0}, {8, 4, 0}, {12, 4, 0}, {2, 4, 0}};

/* The exporter of every message here: 192.0.2.1, IPv4-mapped. */
static void exporter_addr(uint8_t ex[16])
{
	static const uint8_t v4[4] = {192, 0, 2, 1};
	ng_addr_from_v4(ex, v4);
}

/* Decodes t as a message of `session` from 192.0.2.1. */
static size_t decode_in(ng_decoder *d, const struct tb *t, uint32_t session, ng_flow_batch *b)
{
	ng_datagram dg = {.data = t->b,
	                  .len = t->n,
	                  .exporter_port = 40000,
	                  .time_received = 1,
	                  .session = session};
	exporter_addr(dg.exporter);
	return ng_decode(d, &dg, b);
}

static void tpl_msg(struct tb *t, const struct tb_fs *f)
{
	tb_ipfix(t, EXPORT_S, 0, 7);
	tb_tpl(t, 256, 0, f, 4);
	tb_ipfix_end(t);
}

/* A data record of `four` (wide == false) or `other`, bytes = 1000. */
static void data_msg(struct tb *t, bool wide, uint32_t seq)
{
	tb_ipfix(t, EXPORT_S, seq, 7);
	size_t s = tb_set(t, 256);
	if (wide)
		tb_u64(t, 1000);
	tb_v4(t, 192, 0, 2, 10);
	tb_v4(t, 198, 51, 100, 1);
	if (!wide)
		tb_u32(t, 1000);
	tb_u32(t, 3);
	tb_set_end(t, s);
	tb_ipfix_end(t);
}

struct rows {
	size_t n;
	ng_exporter_stats last;
};

static void count_row(const ng_exporter_stats *s, void *arg)
{
	struct rows *r = arg;
	r->n++;
	r->last = *s;
}

static struct rows rows_of(const ng_decoder *d)
{
	struct rows r = {0};
	ng_decoder_foreach_stats(d, count_row, &r);
	return r;
}

/* Two sessions, one address and domain, one Template ID, two layouts:
 * each data record is decoded with its own session's template. */
static void test_layouts_per_session(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	struct tb t;
	tpl_msg(&t, four);
	decode_in(d, &t, 1, &b);
	tpl_msg(&t, other);
	decode_in(d, &t, 2, &b);
	data_msg(&t, false, 0);
	assert_int_equal(decode_in(d, &t, 1, &b), 1);
	data_msg(&t, true, 0);
	assert_int_equal(decode_in(d, &t, 2, &b), 1);
	assert_int_equal(b.n, 2);
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(b.flows[i].bytes, 1000);
		assert_int_equal(b.flows[i].packets, 3);
	}
	/* one row for 192.0.2.1 domain 7, both sessions summed */
	struct rows r = rows_of(d);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.last.domain, 7);
	assert_int_equal(r.last.packets, 4);
	assert_int_equal(r.last.records, 2);
	assert_int_equal(r.last.templates, 2);
	assert_int_equal(r.last.version, 10);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* A session's templates end with it: the next session (a new
 * connection of the same exporter) must announce them again, and its
 * data before that is held, not decoded with the old layout. */
static void test_templates_die_with_session(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	struct tb t;
	tpl_msg(&t, other);
	decode_in(d, &t, 1, &b);
	data_msg(&t, true, 0);
	assert_int_equal(decode_in(d, &t, 1, &b), 1);
	ng_limit_stats lim;
	ng_decoder_limit_stats(d, &lim);
	assert_int_equal(lim.templates, 1);
	uint8_t ex[16];
	exporter_addr(ex);
	ng_decoder_session_end(d, ex, 1);
	ng_decoder_limit_stats(d, &lim);
	assert_int_equal(lim.templates, 0);
	assert_int_equal(lim.domains_evicted, 0); /* an end, not an eviction */
	assert_int_equal(lim.templates_evicted, 0);
	/* session 2: data of template 256 before its template */
	data_msg(&t, false, 0);
	assert_int_equal(decode_in(d, &t, 2, &b), 0);
	tpl_msg(&t, four);
	assert_int_equal(decode_in(d, &t, 2, &b), 1); /* the held set, decoded now */
	assert_int_equal(b.n, 2);
	assert_int_equal(b.flows[1].bytes, 1000);
	ng_decoder_session_end(d, ex, 2);
	/* the counters of both sessions stay, in one row */
	struct rows r = rows_of(d);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.last.packets, 4);
	assert_int_equal(r.last.records, 2);
	assert_int_equal(r.last.template_misses, 1);
	assert_int_equal(r.last.held, 1);
	ng_decoder_limit_stats(d, &lim);
	assert_int_equal(lim.templates, 0);
	assert_int_equal(lim.held_bytes, 0);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* UDP (session 0) templates of the same exporter and domain are not a
 * session's: a session's end leaves them, and the state file keeps them
 * and only them. */
static void test_udp_untouched_and_state_file(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	struct tb t;
	tpl_msg(&t, four);
	decode_in(d, &t, 0, &b);
	tpl_msg(&t, other);
	decode_in(d, &t, 5, &b);
	char path[] = "/tmp/ng-session-state-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(ng_decoder_save(d, path), 0);
	uint8_t ex[16];
	exporter_addr(ex);
	ng_decoder_session_end(d, ex, 5);
	data_msg(&t, false, 0);
	assert_int_equal(decode_in(d, &t, 0, &b), 1);
	assert_int_equal(b.flows[0].bytes, 1000);
	ng_decoder *d2 = ng_decoder_new(NULL);
	assert_int_equal(ng_decoder_load(d2, path), 0);
	ng_limit_stats lim;
	ng_decoder_limit_stats(d2, &lim);
	assert_int_equal(lim.templates, 1); /* the UDP one */
	assert_int_equal(decode_in(d2, &t, 0, &b), 1);
	assert_int_equal(b.flows[1].bytes, 1000);
	unlink(path);
	ng_flow_batch_free(&b);
	ng_decoder_free(d2);
	ng_decoder_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_layouts_per_session),
	    cmocka_unit_test(test_templates_die_with_session),
	    cmocka_unit_test(test_udp_untouched_and_state_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
