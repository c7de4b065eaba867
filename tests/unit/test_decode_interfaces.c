/*
 * test_decode_interfaces.c — interface names from options data
 * (ng_decoder_take_interfaces).
 *
 * Cisco IOS XE's NetFlow v9 interface table (telegraf corpus
 * netflow_v9_options__message.bin): the expected ifIndex, IfName and
 * IfDescr of all 8 records are tshark's dissection of the file
 * (text2pcap -u 2055,2055; tshark -d udp.port==2055,cflow -V).  An IPFIX
 * options record with an ifIndex scope and variable-length names is built
 * by hand (RFC 7011 §3.4.2.2, §7).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/addr.h"
#include "decode/decoder.h"
#include "test_decode_helpers.h"

static void test_v9_interface_table(void **state)
{
	(void)state;
	if (!th_testdata())
		skip();
	static const struct {
		uint32_t index;
		const char *name, *desc;
	} want[] = {
	    {1, "Te0/0/0", "TenGigabitEthernet0/0/0"},
	    {2, "Te0/0/1", "TenGigabitEthernet0/0/1"},
	    {3, "Te0/0/2", "TenGigabitEthernet0/0/2"},
	    {4, "Te0/0/3", "TenGigabitEthernet0/0/3"},
	    {5, "Te0/0/4", "TenGigabitEthernet0/0/4"},
	    {6, "Te0/0/5", "TenGigabitEthernet0/0/5"},
	    {7, "Gi0", "GigabitEthernet0"},
	    {10, "Lo0", "Loopback0"},
	};
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch out = {0};
	assert_true(th_decode_file(d, "telegraf_bin/netflow_v9_options__message.bin", &out) >= 0);
	ng_if_info got[16];
	size_t n = ng_decoder_take_interfaces(d, got, 16);
	assert_int_equal(n, 8);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(got[i].index, want[i].index);
		assert_string_equal(got[i].name, want[i].name);
		assert_string_equal(got[i].description, want[i].desc);
		assert_int_equal(got[i].domain, 6); /* the header's source ID */
	}
	assert_int_equal(ng_decoder_take_interfaces(d, got, 16), 0); /* taken */
	assert_int_equal(out.n, 0); /* options records are not flows */
	ng_flow_batch_free(&out);
	ng_decoder_free(d);
}

static size_t put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
	return 2;
}

static size_t put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
	return 4;
}

static void test_ipfix_varlen_names(void **state)
{
	(void)state;
	uint8_t m[256];
	size_t o = 16;
	/* options template set (ID 3): template 300, 3 fields, 1 scope field */
	size_t ts = o;
	o += put16(m + o, 3);
	o += 2;
	o += put16(m + o, 300);
	o += put16(m + o, 3);
	o += put16(m + o, 1);
	o += put16(m + o, 10), o += put16(m + o, 4);     /* scope: ingressInterface */
	o += put16(m + o, 82), o += put16(m + o, 65535); /* interfaceName, varlen */
	o += put16(m + o, 83), o += put16(m + o, 65535); /* interfaceDescription */
	put16(m + ts + 2, (uint16_t)(o - ts));
	/* data set 300: two records */
	size_t ds = o;
	o += put16(m + o, 300);
	o += 2;
	static const struct {
		uint32_t index;
		const char *name, *desc;
	} recs[] = {{5, "xe-0/0/1", "core uplink"}, {77, "ae0", ""}};
	for (int r = 0; r < 2; r++) {
		o += put32(m + o, recs[r].index);
		m[o++] = (uint8_t)strlen(recs[r].name);
		memcpy(m + o, recs[r].name, strlen(recs[r].name));
		o += strlen(recs[r].name);
		m[o++] = (uint8_t)strlen(recs[r].desc);
		memcpy(m + o, recs[r].desc, strlen(recs[r].desc));
		o += strlen(recs[r].desc);
	}
	put16(m + ds + 2, (uint16_t)(o - ds));
	put16(m, 10);
	put16(m + 2, (uint16_t)o);
	put32(m + 4, 1764460800);
	put32(m + 8, 0);
	put32(m + 12, 42);
	ng_datagram dg = {.data = m, .len = o, .time_received = 1764460800000};
	assert_true(ng_addr_parse("192.0.2.9", dg.exporter));
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch out = {0};
	ng_decode(d, &dg, &out);
	ng_if_info got[4];
	assert_int_equal(ng_decoder_take_interfaces(d, got, 4), 2);
	char a[NG_ADDR_STRLEN];
	assert_string_equal(ng_addr_format(got[0].exporter, a), "192.0.2.9");
	assert_int_equal(got[0].domain, 42);
	assert_int_equal(got[0].index, 5);
	assert_string_equal(got[0].name, "xe-0/0/1");
	assert_string_equal(got[0].description, "core uplink");
	assert_int_equal(got[1].index, 77);
	assert_string_equal(got[1].name, "ae0");
	assert_string_equal(got[1].description, "");
	ng_flow_batch_free(&out);
	ng_decoder_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_v9_interface_table),
	    cmocka_unit_test(test_ipfix_varlen_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
