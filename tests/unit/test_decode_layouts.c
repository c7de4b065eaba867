/*
 * test_decode_layouts.c — what vendors put where (issue 18 part 3): MPLS
 * label stacks, sampler options under another observation domain, options
 * template sets holding several templates with variable-length fields, and
 * options with several scopes.  Each test is built from bytes shaped as
 * the vendor sends them and cites where that shape is described.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/field.h"
#include "test_decode_helpers.h"

#define EXPORT_S 1700000000u
#define EXPORT_MS 1700000000000ULL

/* Every decode error of the decoder's totals is 0. */
static void assert_no_errors(const ng_decoder *d)
{
	ng_exporter_stats st;
	ng_decoder_totals(d, &st);
	for (int e = 0; e < NG_DERR_COUNT; e++)
		assert_int_equal(st.errors[e], 0);
}

/*
 * Arista EOS exports its VRF and interface tables as IPFIX options, all
 * templates of them in one Options Template Set, with the names as
 * variable-length fields (pmacct issue 764, "[nfacctd] failed to parse
 * Option Templates from Arista EOS device",
 * https://github.com/pmacct/pmacct/issues/764).  Shaped so: one Set 3
 * with three options templates — 256 VRF (scope ingressVRFID 234, VRFname
 * 236 variable), 257 interfaces (scope ingressInterface 10, interfaceName
 * 82 and interfaceDescription 83 variable), 258 sampling (scope
 * observationDomainId 149, samplingInterval 34) — then their data, and a
 * data record that uses the rate.
 */
static void test_arista_options_set_several_varlen(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	struct tb t;
	tb_ipfix(&t, EXPORT_S, 0, 7);
	size_t s = tb_set(&t, 3);
	static const struct tb_fs vrf[] = {{234, 4, 0}, {236, 65535, 0}};
	static const struct tb_fs ifs[] = {{10, 4, 0}, {82, 65535, 0}, {83, 65535, 0}};
	static const struct tb_fs smp[] = {{149, 4, 0}, {34, 4, 0}};
	const struct {
		uint16_t tid, n;
		const struct tb_fs *f;
	} tpl[] = {{256, 2, vrf}, {257, 3, ifs}, {258, 2, smp}};
	for (size_t i = 0; i < 3; i++) {
		tb_u16(&t, tpl[i].tid), tb_u16(&t, tpl[i].n), tb_u16(&t, 1);
		for (uint16_t k = 0; k < tpl[i].n; k++)
			tb_u16(&t, tpl[i].f[k].ie), tb_u16(&t, tpl[i].f[k].len);
	}
	tb_set_end(&t, s);
	s = tb_set(&t, 256);
	tb_u32(&t, 1), tb_varstr(&t, "default");
	tb_u32(&t, 2), tb_varstr(&t, "MGMT");
	tb_set_end(&t, s);
	s = tb_set(&t, 257);
	tb_u32(&t, 1000001), tb_varstr(&t, "Ethernet1"), tb_varstr(&t, "uplink to core");
	tb_u32(&t, 1000002), tb_varstr(&t, "Ethernet2"), tb_varstr(&t, "");
	tb_u8(&t, 0), tb_u8(&t, 0); /* padding */
	tb_set_end(&t, s);
	s = tb_set(&t, 258);
	tb_u32(&t, 7), tb_u32(&t, 1000);
	tb_set_end(&t, s);
	tb_ipfix_end(&t);
	assert_int_equal(tb_decode(d, &t, EXPORT_MS, &b), 0);

	static const struct tb_fs f[] = {{8, 4, 0}, {12, 4, 0}, {10, 4, 0}, {1, 8, 0}, {2, 8, 0}};
	tb_ipfix(&t, EXPORT_S, 0, 7);
	tb_tpl(&t, 300, 0, f, 5);
	s = tb_set(&t, 300);
	tb_v4(&t, 10, 1, 0, 1), tb_v4(&t, 10, 2, 0, 1), tb_u32(&t, 1000002);
	tb_u64(&t, 1500), tb_u64(&t, 1);
	tb_set_end(&t, s);
	tb_ipfix_end(&t);
	assert_int_equal(tb_decode(d, &t, EXPORT_MS, &b), 1);
	assert_int_equal(b.flows[0].sampling_rate, 1000);
	assert_int_equal(b.flows[0].sampling_source, NG_SAMPLING_OPTIONS);
	assert_int_equal(b.flows[0].bytes, 1500000);
	assert_int_equal(b.flows[0].in_if, 1000002);

	ng_exporter_stats st;
	ng_decoder_totals(d, &st);
	assert_int_equal(st.templates, 4);
	assert_int_equal(st.options_records, 5);
	assert_int_equal(st.template_misses, 0);
	assert_no_errors(d);
	ng_if_info ifi[4];
	assert_int_equal(ng_decoder_take_interfaces(d, ifi, 4), 2);
	assert_int_equal(ifi[0].index, 1000001);
	assert_string_equal(ifi[0].name, "Ethernet1");
	assert_string_equal(ifi[0].description, "uplink to core");
	assert_int_equal(ifi[1].index, 1000002);
	assert_string_equal(ifi[1].name, "Ethernet2");
	assert_int_equal(ifi[1].domain, 7);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/*
 * Juniper MX (inline J-Flow, IPFIX) sends options with more than one
 * scope field, the scopes first as RFC 7011 §3.4.2.2 requires: here the
 * observation domain (149) and the selector (302) are the scope, then the
 * system init time (160) and the interval (34) of that selector.  The
 * exporter's data records carry selectorId and flowStart/EndSysUpTime
 * (22/21), which are relative to the init time (RFC 7012 IE 22).  nfdump
 * issue 231 (https://github.com/phaag/nfdump/issues/231) shows Junos
 * 18.4 putting its rate in options data; netflow_parser pull 312
 * (https://github.com/mikemiles-dev/netflow_parser/pull/312) an options
 * template whose fields are all scopes, also valid (§3.4.2.2: "MUST NOT
 * be zero" and at most the field count), here as template 258.
 */
static void test_juniper_options_two_scopes(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	struct tb t;
	static const struct tb_fs opt[] = {{149, 4, 0}, {302, 8, 0}, {160, 8, 0}, {34, 4, 0}};
	static const struct tb_fs all_scopes[] = {{149, 4, 0}, {302, 8, 0}};
	static const struct tb_fs f[] = {{8, 4, 0},  {12, 4, 0}, {302, 8, 0}, {22, 4, 0},
	                                 {21, 4, 0}, {1, 8, 0},  {2, 8, 0}};
	tb_ipfix(&t, EXPORT_S, 0, 524288);
	tb_tpl(&t, 256, 2, opt, 4);
	tb_tpl(&t, 258, 2, all_scopes, 2);
	tb_tpl(&t, 257, 0, f, 7);
	size_t s = tb_set(&t, 256);
	/* two selectors: 1 in 1000 and 1 in 100, the system booted a day ago */
	uint64_t boot = EXPORT_MS - 86400000;
	tb_u32(&t, 524288), tb_u64(&t, 5), tb_u64(&t, boot), tb_u32(&t, 1000);
	tb_u32(&t, 524288), tb_u64(&t, 6), tb_u64(&t, boot), tb_u32(&t, 100);
	tb_set_end(&t, s);
	s = tb_set(&t, 258);
	tb_u32(&t, 524288), tb_u64(&t, 5);
	tb_set_end(&t, s);
	s = tb_set(&t, 257);
	tb_v4(&t, 10, 0, 0, 1), tb_v4(&t, 10, 0, 0, 2), tb_u64(&t, 6);
	tb_u32(&t, 86390000), tb_u32(&t, 86395000), tb_u64(&t, 3000), tb_u64(&t, 2);
	tb_v4(&t, 10, 0, 0, 3), tb_v4(&t, 10, 0, 0, 4), tb_u64(&t, 5);
	tb_u32(&t, 86399000), tb_u32(&t, 86400000), tb_u64(&t, 1500), tb_u64(&t, 1);
	tb_set_end(&t, s);
	tb_ipfix_end(&t);
	assert_int_equal(tb_decode(d, &t, EXPORT_MS, &b), 2);
	assert_int_equal(b.flows[0].sampler_id, 6);
	assert_int_equal(b.flows[0].sampling_rate, 100);
	assert_int_equal(b.flows[0].bytes, 300000);
	assert_int_equal(b.flows[0].flow_start, EXPORT_MS - 10000);
	assert_int_equal(b.flows[0].flow_end, EXPORT_MS - 5000);
	assert_int_equal(b.flows[1].sampler_id, 5);
	assert_int_equal(b.flows[1].sampling_rate, 1000);
	assert_int_equal(b.flows[1].packets, 1000);
	assert_int_equal(b.flows[1].flow_end, EXPORT_MS);
	ng_exporter_stats st;
	ng_decoder_totals(d, &st);
	assert_int_equal(st.templates, 3);
	assert_int_equal(st.options_records, 3);
	assert_no_errors(d);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/*
 * Cisco Catalyst 9300 (IOS XE, NetFlow v9, "option sampler-table")
 * sends its sampler options — FLOW_SAMPLER_ID (48), the sampler's name
 * (84), FLOW_SAMPLER_MODE (49) and FLOW_SAMPLER_RANDOM_INTERVAL (50),
 * scope System — under one source ID, and the data records that carry
 * the sampler ID under another: "When filtering with cflow.source_id ==
 * 6, we see the option templates and option data (including the sampling
 * rate), but no data at all" (akvorado issue 89, "Sampling rate not read
 * from Cisco netflow", https://github.com/akvorado/akvorado/issues/89).
 */
static void v9_options_tpl(struct tb *t, uint16_t tid)
{
	size_t s = tb_set(t, 1);
	tb_u16(t, tid), tb_u16(t, 4), tb_u16(t, 4 * 4);
	tb_u16(t, 1), tb_u16(t, 4);   /* scope System, 4 bytes */
	tb_u16(t, 48), tb_u16(t, 4);  /* FLOW_SAMPLER_ID */
	tb_u16(t, 84), tb_u16(t, 16); /* samplerName */
	tb_u16(t, 49), tb_u16(t, 1);  /* FLOW_SAMPLER_MODE */
	tb_u16(t, 50), tb_u16(t, 4);  /* FLOW_SAMPLER_RANDOM_INTERVAL */
	tb_set_end(t, s);
}

static void v9_sampler(struct tb *t, uint16_t tid, uint32_t id, const char *name, uint32_t rate)
{
	size_t s = tb_set(t, tid);
	char n[16] = {0};
	memcpy(n, name, strlen(name));
	tb_u32(t, 0x0a0a1706), tb_u32(t, id), tb_bytes(t, n, 16), tb_u8(t, 2), tb_u32(t, rate);
	tb_u8(t, 0), tb_u8(t, 0), tb_u8(t, 0); /* padding to 4 */
	tb_set_end(t, s);
}

static const struct tb_fs c9300_data[] = {{8, 4, 0}, {12, 4, 0}, {48, 4, 0}, {1, 8, 0}, {2, 8, 0}};

static void v9_c9300_record(struct tb *t, uint16_t tid, uint32_t sampler, uint64_t bytes)
{
	size_t s = tb_set(t, tid);
	tb_v4(t, 10, 0, 0, 1), tb_v4(t, 10, 0, 0, 2), tb_u32(t, sampler), tb_u64(t, bytes);
	tb_u64(t, 1);
	tb_set_end(t, s);
}

static void test_c9300_sampler_other_source_id(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	struct tb t;
	/* source ID 6: the sampler table, two samplers */
	tb_v9(&t, 3, 1000, EXPORT_S, 1, 6);
	v9_options_tpl(&t, 256);
	v9_sampler(&t, 256, 1, "NAGARE-SAMPLER", 100);
	v9_sampler(&t, 256, 2, "SLOW", 4000);
	assert_int_equal(tb_decode(d, &t, EXPORT_MS, &b), 0);
	/* source IDs 256 and 257: the monitors' data */
	tb_v9(&t, 2, 1001, EXPORT_S, 1, 256);
	tb_v9_tpl(&t, 300, c9300_data, 5);
	v9_c9300_record(&t, 300, 1, 1000);
	assert_int_equal(tb_decode(d, &t, EXPORT_MS, &b), 1);
	tb_v9(&t, 3, 1002, EXPORT_S, 1, 257);
	tb_v9_tpl(&t, 300, c9300_data, 5);
	v9_c9300_record(&t, 300, 2, 1000);
	v9_c9300_record(&t, 300, 9, 1000); /* a sampler ID no domain announced */
	assert_int_equal(tb_decode(d, &t, EXPORT_MS, &b), 2);
	assert_int_equal(b.flows[0].observation_domain, 256);
	assert_int_equal(b.flows[0].sampling_rate, 100);
	assert_int_equal(b.flows[0].sampling_source, NG_SAMPLING_OPTIONS);
	assert_int_equal(b.flows[0].bytes, 100000);
	assert_int_equal(b.flows[1].sampling_rate, 4000);
	assert_int_equal(b.flows[1].packets, 4000);
	assert_int_equal(b.flows[2].sampling_rate, 1);
	assert_int_equal(b.flows[2].sampling_source, NG_SAMPLING_NONE);
	assert_no_errors(d);
	ng_exporter_stats st;
	ng_decoder_totals(d, &st);
	assert_int_equal(st.options_records, 2);
	assert_int_equal(st.sampler_other_domain, 2);
	assert_int_equal(st.sampler_unmatched, 1);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* The other domains' answer only when it is unambiguous: two domains
 * that give sampler 1 different rates say the IDs are per domain, so a
 * third domain's record with sampler 1 is not scaled; a record of one of
 * them keeps its own domain's rate. */
static void test_sampler_other_domains_disagree(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	struct tb t;
	for (uint32_t dom = 10; dom <= 11; dom++) {
		tb_v9(&t, 2, 1000, EXPORT_S, 1, dom);
		v9_options_tpl(&t, 256);
		v9_sampler(&t, 256, 1, "S", dom == 10 ? 100 : 200);
		assert_int_equal(tb_decode(d, &t, EXPORT_MS, &b), 0);
	}
	tb_v9(&t, 2, 1001, EXPORT_S, 1, 12);
	tb_v9_tpl(&t, 300, c9300_data, 5);
	v9_c9300_record(&t, 300, 1, 1000);
	assert_int_equal(tb_decode(d, &t, EXPORT_MS, &b), 1);
	tb_v9(&t, 2, 1001, EXPORT_S, 2, 11);
	tb_v9_tpl(&t, 300, c9300_data, 5);
	v9_c9300_record(&t, 300, 1, 1000);
	assert_int_equal(tb_decode(d, &t, EXPORT_MS, &b), 1);
	assert_int_equal(b.flows[0].sampling_rate, 1);
	assert_int_equal(b.flows[0].bytes, 1000);
	assert_int_equal(b.flows[1].sampling_rate, 200);
	ng_exporter_stats st;
	ng_decoder_totals(d, &st);
	assert_int_equal(st.sampler_other_domain, 0);
	assert_int_equal(st.sampler_unmatched, 1);
	assert_no_errors(d);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/*
 * The whole MPLS label stack, not only the top label.  Cisco IOS XR and
 * IOS XE (NetFlow v9) send all ten positions, MPLS_LABEL_1..10 (70-79),
 * three bytes each, the positions past the bottom of the stack as zeros;
 * nfdump shows them as "MPLS lbl 1 16005-0-0  MPLS lbl 2 130931-0-1"
 * (label-exp-S, nfdump issue 15, https://github.com/phaag/nfdump/issues/15;
 * akvorado pull 960/973 store the stack as an array for the same
 * exporters).  Here a stack of three whose bottom is the IPv4 explicit
 * null label 0 (RFC 3032 §2.1), told from "no label" by mpls_depth.
 */
static void test_mpls_stack_v9_ten_positions(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	struct tb t;
	struct tb_fs f[14] = {{8, 4, 0}, {12, 4, 0}, {1, 4, 0}, {2, 4, 0}};
	for (int i = 0; i < 10; i++)
		f[4 + i] = (struct tb_fs){(uint16_t)(70 + i), 3, 0};
	tb_v9(&t, 2, 1000, EXPORT_S, 1, 0);
	tb_v9_tpl(&t, 300, f, 14);
	size_t s = tb_set(&t, 300);
	tb_v4(&t, 10, 0, 0, 1), tb_v4(&t, 10, 0, 0, 2), tb_u32(&t, 1500), tb_u32(&t, 1);
	tb_mpls(&t, 16005, 0, 0), tb_mpls(&t, 130931, 5, 0), tb_mpls(&t, 0, 0, 1);
	for (int i = 3; i < 10; i++)
		tb_mpls(&t, 0, 0, 0);
	tb_v4(&t, 10, 0, 0, 3), tb_v4(&t, 10, 0, 0, 4), tb_u32(&t, 1500), tb_u32(&t, 1);
	for (int i = 0; i < 10; i++) /* every position used: the deepest stack */
		tb_mpls(&t, 1048575 - (uint32_t)i, 0, i == 9);
	tb_v4(&t, 10, 0, 0, 5), tb_v4(&t, 10, 0, 0, 6), tb_u32(&t, 1500), tb_u32(&t, 1);
	for (int i = 0; i < 10; i++) /* not labelled */
		tb_mpls(&t, 0, 0, 0);
	tb_set_end(&t, s);
	assert_int_equal(tb_decode(d, &t, EXPORT_MS, &b), 3);
	const ng_flow *r = &b.flows[0];
	assert_int_equal(r->mpls_label, 16005);
	assert_int_equal(r->mpls_label2, 130931);
	assert_int_equal(r->mpls_label3, 0);
	assert_int_equal(r->mpls_label4, 0);
	assert_int_equal(r->mpls_depth, 3);
	r = &b.flows[1];
	assert_int_equal(r->mpls_label, 1048575);
	assert_int_equal(r->mpls_label2, 1048574);
	assert_int_equal(r->mpls_label5, 1048571);
	assert_int_equal(r->mpls_label9, 1048567);
	assert_int_equal(r->mpls_label10, 1048566);
	assert_int_equal(r->mpls_depth, 10);
	r = &b.flows[2];
	assert_int_equal(r->mpls_label, 0);
	assert_int_equal(r->mpls_depth, 0);
	assert_no_errors(d);
	/* filterable and groupable by name, as nfdump's %mpls1 .. %mpls10 */
	const ng_field *fl = ng_field_by_name("mpls2");
	assert_non_null(fl);
	assert_int_equal(fl->id, NG_F_MPLS_LABEL2);
	assert_non_null(ng_field_by_name("mpls_label10"));
	assert_non_null(ng_field_by_name("mplsdepth"));
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* Juniper MX (IPFIX, the mpls-ipv4 template) sends three labels, 70-72,
 * beside mplsTopLabelIPv4Address (47, not stored). */
static void test_mpls_stack_ipfix_three(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	struct tb t;
	static const struct tb_fs f[] = {{8, 4, 0},  {12, 4, 0}, {1, 8, 0},  {2, 8, 0},
	                                 {70, 3, 0}, {71, 3, 0}, {72, 3, 0}, {47, 4, 0}};
	tb_ipfix(&t, EXPORT_S, 0, 1);
	tb_tpl(&t, 256, 0, f, 8);
	size_t s = tb_set(&t, 256);
	tb_v4(&t, 10, 0, 0, 1), tb_v4(&t, 10, 0, 0, 2), tb_u64(&t, 1500), tb_u64(&t, 1);
	tb_mpls(&t, 299776, 0, 0), tb_mpls(&t, 16, 0, 1), tb_mpls(&t, 0, 0, 0);
	tb_v4(&t, 192, 0, 2, 9);
	tb_set_end(&t, s);
	tb_ipfix_end(&t);
	assert_int_equal(tb_decode(d, &t, EXPORT_MS, &b), 1);
	assert_int_equal(b.flows[0].mpls_label, 299776);
	assert_int_equal(b.flows[0].mpls_label2, 16);
	assert_int_equal(b.flows[0].mpls_label3, 0);
	assert_int_equal(b.flows[0].mpls_depth, 2);
	assert_no_errors(d);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mpls_stack_v9_ten_positions),
	    cmocka_unit_test(test_mpls_stack_ipfix_three),
	    cmocka_unit_test(test_arista_options_set_several_varlen),
	    cmocka_unit_test(test_juniper_options_two_scopes),
	    cmocka_unit_test(test_c9300_sampler_other_source_id),
	    cmocka_unit_test(test_sampler_other_domains_disagree),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
