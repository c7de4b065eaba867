/*
 * test_decode_quirks.c — vendors' habits (issue 18 part 3) that the
 * decoder already handles, each pinned by a test built from bytes shaped
 * as the vendor sends them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_decode_helpers.h"

#define EXPORT_S 1700000000u
#define EXPORT_MS 1700000000000ULL

/* Decodes t's bytes as a datagram from 192.0.2.1, UDP source port `port`. */
static size_t decode_from_port(ng_decoder *d, const struct tb *t, uint16_t port, ng_flow_batch *out)
{
	ng_datagram dg = {
	    .data = t->b, .len = t->n, .exporter_port = port, .time_received = EXPORT_MS};
	static const uint8_t ex[4] = {192, 0, 2, 1};
	ng_addr_from_v4(dg.exporter, ex);
	return ng_decode(d, &dg, out);
}

/*
 * Juniper MX (Junos 18.4R2.7, IPFIX) exports samplingInterval (IE 34,
 * 1000) in options data, with no samplingAlgorithm (IE 35) beside it and
 * no sampler ID in the data records (nfdump issue 231, "Sampling rate is
 * not detected in IPFIX", https://github.com/phaag/nfdump/issues/231).
 * The rate applies to the domain's records without a selector: IE 35 is
 * not needed.
 */
static void test_juniper_ie34_without_ie35(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	struct tb t;
	static const struct tb_fs opt[] = {{149, 4, 0}, {34, 4, 0}};
	static const struct tb_fs f[] = {{8, 4, 0}, {12, 4, 0}, {1, 8, 0}, {2, 8, 0}};
	tb_ipfix(&t, EXPORT_S, 0, 524288);
	tb_tpl(&t, 256, 1, opt, 2);
	tb_tpl(&t, 257, 0, f, 4);
	size_t s = tb_set(&t, 256);
	tb_u32(&t, 524288), tb_u32(&t, 1000);
	tb_set_end(&t, s);
	s = tb_set(&t, 257);
	tb_v4(&t, 10, 0, 0, 1), tb_v4(&t, 192, 168, 3, 254), tb_u64(&t, 1486), tb_u64(&t, 1);
	tb_set_end(&t, s);
	tb_ipfix_end(&t);
	assert_int_equal(tb_decode(d, &t, EXPORT_MS, &b), 1);
	assert_int_equal(b.flows[0].sampling_rate, 1000);
	assert_int_equal(b.flows[0].sampling_source, NG_SAMPLING_OPTIONS);
	assert_int_equal(b.flows[0].bytes, 1486000);
	assert_int_equal(b.flows[0].packets, 1000);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

static void count_row(const ng_exporter_stats *s, void *arg)
{
	(void)s;
	++*(int *)arg;
}

/* An exporter is its address (and observation domain), never its UDP
 * source port: routers that send each export packet from a new port (or
 * the template from one process and the data from another) keep their
 * templates and sequence numbers.  RFC 7011 §8.4 / RFC 3954 §5.1 key
 * templates by the exporter and the observation domain / source ID. */
static void test_identity_ignores_source_port(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	struct tb t;
	static const struct tb_fs f[] = {{8, 4, 0}, {12, 4, 0}, {1, 4, 0}, {2, 4, 0}};
	tb_v9(&t, 1, 1000, EXPORT_S, 1, 3);
	tb_v9_tpl(&t, 300, f, 4);
	assert_int_equal(decode_from_port(d, &t, 50000, &b), 0);
	tb_v9(&t, 1, 2000, EXPORT_S, 2, 3);
	size_t s = tb_set(&t, 300);
	tb_v4(&t, 10, 0, 0, 1), tb_v4(&t, 10, 0, 0, 2), tb_u32(&t, 100), tb_u32(&t, 1);
	tb_set_end(&t, s);
	assert_int_equal(decode_from_port(d, &t, 50001, &b), 1);
	assert_int_equal(b.flows[0].bytes, 100);
	ng_exporter_stats st;
	ng_decoder_totals(d, &st);
	assert_int_equal(st.template_misses, 0);
	assert_int_equal(st.lost, 0); /* one sequence across both ports */
	assert_int_equal(st.packets, 2);
	int rows = 0;
	ng_decoder_foreach_stats(d, count_row, &rows);
	assert_int_equal(rows, 1); /* one exporter and domain */
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* Three NetFlow v9 export packets in one UDP payload: source ID 3
 * (template and a record), source ID 3 again (a record, the next
 * sequence number), source ID 4 (its own template and a record).  Each is
 * decoded on its own; on main the second and third were lost as a
 * "FlowSet" of reserved ID 9 or of length below 4.  netflow_parser reads
 * a buffer as such a run of packets (mikemiles-dev/netflow_parser, pull
 * 302 discusses the frame boundary). */
static void test_v9_concatenated(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	struct tb t, u;
	static const struct tb_fs f[] = {{8, 4, 0}, {12, 4, 0}, {1, 4, 0}, {2, 4, 0}};
	tb_v9(&t, 2, 1000, EXPORT_S, 1, 3);
	tb_v9_tpl(&t, 300, f, 4);
	size_t s = tb_set(&t, 300);
	tb_v4(&t, 10, 0, 0, 1), tb_v4(&t, 10, 0, 0, 2), tb_u32(&t, 100), tb_u32(&t, 1);
	tb_set_end(&t, s);
	tb_v9(&u, 1, 1001, EXPORT_S, 2, 3);
	s = tb_set(&u, 300);
	tb_v4(&u, 10, 0, 0, 3), tb_v4(&u, 10, 0, 0, 4), tb_u32(&u, 200), tb_u32(&u, 2);
	tb_set_end(&u, s);
	tb_bytes(&t, u.b, u.n);
	tb_v9(&u, 2, 5000, EXPORT_S, 77, 4);
	tb_v9_tpl(&u, 300, f, 4);
	s = tb_set(&u, 300);
	tb_v4(&u, 10, 0, 0, 5), tb_v4(&u, 10, 0, 0, 6), tb_u32(&u, 300), tb_u32(&u, 3);
	tb_set_end(&u, s);
	tb_bytes(&t, u.b, u.n);
	assert_int_equal(decode_from_port(d, &t, 2055, &b), 3);
	assert_int_equal(b.flows[0].bytes, 100);
	assert_int_equal(b.flows[1].bytes, 200);
	assert_int_equal(b.flows[1].observation_domain, 3);
	assert_int_equal(b.flows[2].bytes, 300);
	assert_int_equal(b.flows[2].observation_domain, 4);
	ng_exporter_stats st;
	ng_decoder_totals(d, &st);
	assert_int_equal(st.packets_concatenated, 2);
	assert_int_equal(st.packets, 3); /* export packets */
	assert_int_equal(st.bytes, t.n);
	assert_int_equal(st.lost, 0);
	for (int e = 0; e < NG_DERR_COUNT; e++)
		assert_int_equal(st.errors[e], 0);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* The shared corpus holds such a payload: graylog2-server's test file
 * netflow-v9-1.dat, two export packets back to back (templates and 2
 * records, then 4 records of template 1024).  tshark reads only the
 * first; main decoded 2 records and counted 2 errors. */
static void test_v9_concatenated_corpus(void **state)
{
	(void)state;
	if (!th_testdata())
		skip();
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	assert_int_equal(th_decode_file(d, "graylog2-server_raw/netflow-v9-1.dat", &b), 6);
	ng_exporter_stats st;
	ng_decoder_totals(d, &st);
	assert_int_equal(st.packets_concatenated, 1);
	for (int e = 0; e < NG_DERR_COUNT; e++)
		assert_int_equal(st.errors[e], 0);
	assert_string_equal(th_addr(b.flows[2].src_addr), "10.0.2.2");
	assert_int_equal(b.flows[2].bytes_raw, 0x880);
	assert_int_equal(b.flows[2].packets_raw, 0x11);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_juniper_ie34_without_ie35),
	    cmocka_unit_test(test_identity_ignores_source_port),
	    cmocka_unit_test(test_v9_concatenated),
	    cmocka_unit_test(test_v9_concatenated_corpus),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
