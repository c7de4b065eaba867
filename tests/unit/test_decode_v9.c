/*
 * test_decode_v9.c — NetFlow v9 (RFC 3954): held data sets, options
 * sampling, signed FIRST_SWITCHED, sequence accounting, malformed input.
 * Expected values of real captures come from tshark (command above each).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_decode_helpers.h"

static const ng_flow *by_src(const ng_flow_batch *b, const char *src, uint16_t sport)
{
	for (size_t i = 0; i < b->n; i++)
		if (!strcmp(th_addr(b->flows[i].src_addr), src) && b->flows[i].src_port == sport)
			return &b->flows[i];
	return NULL;
}

/* tshark -2 -r akvorado/data+templates.pcap -d udp.port==2055,cflow -V
 * One PDU: data set 257 first, then options template 256 (System scope;
 * SAMPLING_ALGORITHM, SAMPLING_INTERVAL), its data (interval 100), data
 * template 257, more data.  SysUptime 116860.520 s, CurrentSecs
 * 1684085372.  Flow 1 of the first set: 120.120.28.238:63308 →
 * 120.120.244.112:31424, Octets 48, Packets 1, StartTime = EndTime =
 * 116799.000 s → 1684085372000 - 61520 = 1684085310480 ms. */
static void test_v9_data_before_template_same_packet(void **state)
{
	(void)state;
	if (!th_testdata())
		skip();
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	assert_int_equal(th_decode_file(d, "akvorado/data+templates.pcap", &b), 21);
	const ng_flow *f = by_src(&b, "120.120.28.238", 63308);
	assert_non_null(f);
	assert_string_equal(th_addr(f->dst_addr), "120.120.244.112");
	assert_int_equal(f->dst_port, 31424);
	assert_int_equal(f->bytes_raw, 48);
	assert_int_equal(f->packets_raw, 1);
	assert_int_equal(f->flow_start, 1684085310480ULL);
	assert_int_equal(f->flow_end, 1684085310480ULL);
	/* the options data (interval 100, no sampler ID) is the default */
	assert_int_equal(f->sampling_rate, 100);
	assert_int_equal(f->sampling_source, NG_SAMPLING_OPTIONS);
	assert_int_equal(f->bytes, 4800);
	assert_int_equal(f->packets, 100);
	ng_exporter_stats s = th_totals(d);
	assert_int_equal(s.template_misses, 1);
	assert_int_equal(s.held, 1);
	assert_int_equal(s.errors[NG_DERR_HELD_DROPPED], 0);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* tshark -r akvorado/options-template.pcap ... options-data.pcap ...
 * template.pcap ... data.pcap merged (mergecap -a) -d udp.port==2055,cflow -V:
 * options data: SamplerID 1, SamplerRandomInterval 30000, Sampling
 * interval 30000; data Flow 1: Packets 1, Octets 1500, 198.38.121.178:443
 * → 91.170.143.87:19624, InputInt 335, OutputInt 450, BGPNextHop
 * 194.149.174.63, SamplerID 1, StartTime 944948.659 s with SysUptime
 * 944951.609 s and CurrentSecs 1647285928 → 1647285925050 ms.
 * Here data.pcap comes BEFORE template.pcap: it is held, then decoded. */
static void test_v9_options_sampler_and_held_across_packets(void **state)
{
	(void)state;
	if (!th_testdata())
		skip();
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	assert_int_equal(th_decode_file(d, "akvorado/options-template.pcap", &b), 0);
	assert_int_equal(th_decode_file(d, "akvorado/options-data.pcap", &b), 0);
	assert_int_equal(th_decode_file(d, "akvorado/data.pcap", &b), 0);
	assert_int_equal(th_totals(d).template_misses, 1);
	assert_int_equal(th_decode_file(d, "akvorado/template.pcap", &b), 4);
	assert_int_equal(th_totals(d).held, 1);
	assert_int_equal(th_totals(d).options_records, 4);
	const ng_flow *f = by_src(&b, "198.38.121.178", 443);
	assert_non_null(f);
	assert_string_equal(th_addr(f->dst_addr), "91.170.143.87");
	assert_int_equal(f->dst_port, 19624);
	assert_int_equal(f->in_if, 335);
	assert_int_equal(f->out_if, 450);
	assert_string_equal(th_addr(f->next_hop), "194.149.174.63");
	assert_int_equal(f->sampler_id, 1);
	assert_int_equal(f->sampling_rate, 30000);
	assert_int_equal(f->sampling_source, NG_SAMPLING_OPTIONS);
	assert_int_equal(f->bytes_raw, 1500);
	assert_int_equal(f->bytes, 45000000);
	assert_int_equal(f->packets, 30000);
	assert_int_equal(f->flow_start, 1647285925050ULL);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* tshark on the 4 akvorado/multiplesamplingrates-* files merged template,
 * options-template, options-data, data (-d udp.port==2055,cflow -V):
 * options: SamplerID 1 → interval 2000, SamplerID 2 → 4000.  Data Flow 1:
 * Packets 18, Octets 1348, ffff::68:443 → ffff::1a:52616, SamplerID 2;
 * Flow 2: Packets 4, Octets 579, ffff::5a:2121, SamplerID 1.
 * SysUptime 1098324.379 s, CurrentSecs 1701360975, Flow 1 StartTime
 * 1098319.359 s, EndTime 1098324.270 s. */
static void test_v9_multiple_sampling_rates(void **state)
{
	(void)state;
	if (!th_testdata())
		skip();
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	th_decode_file(d, "akvorado/multiplesamplingrates-template.pcap", &b);
	th_decode_file(d, "akvorado/multiplesamplingrates-options-template.pcap", &b);
	th_decode_file(d, "akvorado/multiplesamplingrates-options-data.pcap", &b);
	assert_int_equal(th_decode_file(d, "akvorado/multiplesamplingrates-data.pcap", &b), 12);
	const ng_flow *f = by_src(&b, "ffff::68", 443);
	assert_non_null(f);
	assert_int_equal(f->sampler_id, 2);
	assert_int_equal(f->sampling_rate, 4000);
	assert_int_equal(f->sampling_source, NG_SAMPLING_OPTIONS);
	assert_int_equal(f->bytes_raw, 1348);
	assert_int_equal(f->bytes, 1348ULL * 4000);
	assert_int_equal(f->packets, 18 * 4000);
	assert_int_equal(f->ip_version, 6);
	assert_int_equal(f->flow_start, 1701360975000ULL - 5020);
	assert_int_equal(f->flow_end, 1701360975000ULL - 109);
	f = by_src(&b, "ffff::5a", 2121);
	assert_non_null(f);
	assert_int_equal(f->sampler_id, 1);
	assert_int_equal(f->sampling_rate, 2000);
	assert_int_equal(f->bytes, 579ULL * 2000);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* Template 300: IPv4 src/dst, FIRST_SWITCHED, LAST_SWITCHED (4 or 8 bytes),
 * IN_BYTES, IN_PKTS. */
static void v9_template(struct tb *t, uint16_t tid, uint16_t time_len)
{
	size_t s = tb_set(t, 0);
	tb_u16(t, tid);
	tb_u16(t, 6);
	tb_u16(t, 8), tb_u16(t, 4);
	tb_u16(t, 12), tb_u16(t, 4);
	tb_u16(t, 22), tb_u16(t, time_len);
	tb_u16(t, 21), tb_u16(t, time_len);
	tb_u16(t, 1), tb_u16(t, 4);
	tb_u16(t, 2), tb_u16(t, 4);
	tb_set_end(t, s);
}

static void v9_record(struct tb *t, uint8_t host, uint16_t time_len, uint64_t first, uint64_t last)
{
	tb_v4(t, 10, 1, 1, host);
	tb_v4(t, 10, 2, 2, 2);
	if (time_len == 8) {
		tb_u64(t, first);
		tb_u64(t, last);
	} else {
		tb_u32(t, (uint32_t)first);
		tb_u32(t, (uint32_t)last);
	}
	tb_u32(t, 500);
	tb_u32(t, 5);
}

/* RFC 3954 §8 FIRST_SWITCHED is a sysUpTime value; softflowd stamps flows
 * a little after the header's sysUpTime: the difference is signed. */
static void test_v9_signed_first_switched(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	struct tb t;
	for (uint16_t len = 4; len <= 8; len += 4) {
		tb_v9(&t, 2, 100000, 1700000000, len, 1);
		v9_template(&t, (uint16_t)(300 + len), len);
		size_t s = tb_set(&t, (uint16_t)(300 + len));
		v9_record(&t, 1, len, 100250, 100400); /* after sysUpTime */
		v9_record(&t, 2, len, 40000, 99000);   /* 60 s and 1 s before */
		tb_set_end(&t, s);
		ng_flow_batch_clear(&b);
		assert_int_equal(tb_decode(d, &t, 7, &b), 2);
		assert_int_equal(b.flows[0].flow_start, 1700000000000ULL + 250);
		assert_int_equal(b.flows[0].flow_end, 1700000000000ULL + 400);
		assert_int_equal(b.flows[1].flow_start, 1700000000000ULL - 60000);
		assert_int_equal(b.flows[1].flow_end, 1700000000000ULL - 1000);
		assert_int_equal(b.flows[1].bytes_raw, 500);
		assert_int_equal(b.flows[1].observation_domain, 1);
		assert_int_equal(b.flows[1].flow_version, 9);
		assert_int_equal(b.flows[1].time_received, 7);
	}
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* RFC 3954 §5.1: the sequence number counts export packets. */
static void test_v9_sequence(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	struct tb t;
	/* 14: 12 and 13 lost; 12 arrives late (one found again); a jump of
	 * 2^31 is a restart; 0x8000000f: 14 lost; wrap at 2^32 is in order */
	static const uint32_t seqs[] = {10,          11,          14,          12, 15, 0x80000000u,
	                                0x8000000fu, 0xfffffffeu, 0xffffffffu, 0,  2};
	static const uint64_t lost[] = {0, 0, 2, 1, 1, 1, 15, 15, 15, 15, 16};
	for (size_t i = 0; i < sizeof seqs / sizeof seqs[0]; i++) {
		tb_v9(&t, 1, 1000, 1700000000, seqs[i], 3);
		v9_template(&t, 400, 4);
		tb_decode(d, &t, 1, &b);
		assert_int_equal(th_totals(d).lost, lost[i]);
	}
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* A bad FlowSet costs only itself: good sets around it are decoded. */
static void test_v9_bad_sets_keep_good_ones(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	struct tb t;
	tb_v9(&t, 3, 100000, 1700000000, 1, 0);
	v9_template(&t, 300, 4);
	size_t s = tb_set(&t, 300);
	v9_record(&t, 1, 4, 1, 2);
	tb_set_end(&t, s);
	s = tb_set(&t, 7); /* reserved FlowSet ID */
	tb_u32(&t, 0);
	tb_set_end(&t, s);
	s = tb_set(&t, 300);
	v9_record(&t, 2, 4, 1, 2);
	tb_u16(&t, 0); /* 2 bytes of padding */
	tb_set_end(&t, s);
	s = tb_set(&t, 300); /* overruns the packet */
	v9_record(&t, 3, 4, 1, 2);
	tb_set_end(&t, s);
	t.b[s + 2] = 0x7f;
	assert_int_equal(tb_decode(d, &t, 1, &b), 2);
	ng_exporter_stats st = th_totals(d);
	assert_int_equal(st.errors[NG_DERR_BAD_SET_ID], 1);
	assert_int_equal(st.errors[NG_DERR_SET_OVERRUN], 1);
	/* zero-length FlowSet: stop the packet (it could never advance) */
	tb_v9(&t, 3, 100000, 1700000000, 2, 0);
	s = tb_set(&t, 300);
	v9_record(&t, 4, 4, 1, 2);
	tb_set_end(&t, s);
	tb_u16(&t, 300);
	tb_u16(&t, 0);
	v9_record(&t, 5, 4, 1, 2);
	ng_flow_batch_clear(&b);
	assert_int_equal(tb_decode(d, &t, 1, &b), 1);
	assert_int_equal(th_totals(d).errors[NG_DERR_SET_TOO_SHORT], 1);
	/* templates: no fields; ID below 256; all-zero-length fields */
	tb_v9(&t, 3, 100000, 1700000000, 3, 0);
	s = tb_set(&t, 0);
	tb_u16(&t, 500), tb_u16(&t, 1), tb_u16(&t, 8), tb_u16(&t, 0);
	tb_u16(&t, 200), tb_u16(&t, 1), tb_u16(&t, 8), tb_u16(&t, 4);
	tb_u16(&t, 501), tb_u16(&t, 0);
	tb_set_end(&t, s);
	tb_decode(d, &t, 1, &b);
	st = th_totals(d);
	assert_int_equal(st.errors[NG_DERR_TEMPLATE_BAD], 2);
	assert_int_equal(st.errors[NG_DERR_TEMPLATE_ID_BAD], 1);
	/* a truncated header */
	t.n = 19;
	tb_decode(d, &t, 1, &b);
	assert_int_equal(th_totals(d).errors[NG_DERR_SHORT_HEADER], 1);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* Held data sets are bounded per exporter and by age. */
static void test_v9_held_bounds(void **state)
{
	(void)state;
	ng_decoder_config cfg = {.held_max_bytes = 100, .held_max_age = 1000};
	ng_decoder *d = ng_decoder_new(&cfg);
	ng_flow_batch b = {0};
	struct tb t;
	for (uint8_t i = 0; i < 4; i++) { /* 4 sets of 4 + 2 * 24 bytes: 52 each */
		tb_v9(&t, 1, 100000, 1700000000, i, 0);
		size_t s = tb_set(&t, 300);
		v9_record(&t, i, 4, 1, 2);
		v9_record(&t, i, 4, 1, 2);
		tb_set_end(&t, s);
		tb_decode(d, &t, 10, &b);
	}
	ng_exporter_stats st = th_totals(d);
	assert_int_equal(st.template_misses, 4);
	assert_int_equal(st.errors[NG_DERR_HELD_DROPPED],
	                 2); /* only one 48-byte body fits with another */
	ng_decoder_expire(d, 5000);
	assert_int_equal(th_totals(d).errors[NG_DERR_HELD_DROPPED], 4);
	tb_v9(&t, 1, 100000, 1700000000, 5, 0);
	v9_template(&t, 300, 4);
	assert_int_equal(tb_decode(d, &t, 6000, &b), 0);
	assert_int_equal(th_totals(d).held, 0);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* libnetflow9's fuzzer-found packets: counted errors, no crash. */
static void test_v9_libnetflow9_malformed(void **state)
{
	(void)state;
	if (!th_testdata())
		skip();
	static const char *bad[] = {
	    "libnetflow9/malformed-OT.pcap", "libnetflow9/malformed_1.pcap",
	    "libnetflow9/malformed_2.pcap",  "libnetflow9/malformed_3.pcap",
	    "libnetflow9/malformed_5.pcap",  "libnetflow9/malformed_6.pcap"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ng_decoder *d = ng_decoder_new(NULL);
		ng_flow_batch b = {0};
		assert_true(th_decode_file(d, bad[i], &b) >= 0);
		ng_exporter_stats s = th_totals(d);
		uint64_t errs = 0;
		for (int e = 0; e < NG_DERR_COUNT; e++)
			errs += s.errors[e];
		print_message("%s: %llu errors\n", bad[i], (unsigned long long)errs);
		assert_true(errs > 0);
		assert_int_equal(b.n, 0);
		ng_flow_batch_free(&b);
		ng_decoder_free(d);
	}
	/* malformed_4 is well formed for RFC 3954 (tshark objects to a field
	 * length it expects differently): templates and options only */
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	assert_int_equal(th_decode_file(d, "libnetflow9/malformed_4.pcap", &b), 0);
	assert_int_equal(th_totals(d).templates, 3);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_v9_data_before_template_same_packet),
	    cmocka_unit_test(test_v9_options_sampler_and_held_across_packets),
	    cmocka_unit_test(test_v9_multiple_sampling_rates),
	    cmocka_unit_test(test_v9_signed_first_switched),
	    cmocka_unit_test(test_v9_sequence),
	    cmocka_unit_test(test_v9_bad_sets_keep_good_ones),
	    cmocka_unit_test(test_v9_held_bounds),
	    cmocka_unit_test(test_v9_libnetflow9_malformed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
