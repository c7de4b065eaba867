/*
 * test_decode_v5.c — NetFlow v1/v5/v7 decoding, dispatch and counters.
 *
 * Real exports are checked against tshark; synthetic packets (built with
 * the Cisco "NetFlow Export Datagram Format" layouts) check the sampling
 * header, sequence accounting, signed uptime differences and malformed
 * input.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_decode_helpers.h"

/* tshark -r akvorado/nfv5.pcap -d udp.port==9990,cflow -V  (pdu 1/29):
 * SysUptime 2874339 s, unix_secs 1680626679, nsecs 0; SrcAddr
 * 161.202.212.212, DstAddr 202.152.70.24, NextHop 61.6.255.150, InputInt
 * 117, OutputInt 86, Packets 1, Octets 133, StartTime = EndTime = 2874324 s
 * (→ 1680626679000 - 15000 ms), SrcPort 30104, DstPort 11963, TCP flags
 * 0x18, Protocol 6, ToS 0, SrcAS 36351, DstAS 10101, masks 19/24,
 * SampleRate 0. */
static void test_v5_akvorado(void **state)
{
	(void)state;
	if (!th_testdata())
		skip();
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	assert_int_equal(th_decode_file(d, "akvorado/nfv5.pcap", &b), 29);
	const ng_flow *f = &b.flows[0];
	assert_string_equal(th_addr(f->src_addr), "161.202.212.212");
	assert_string_equal(th_addr(f->dst_addr), "202.152.70.24");
	assert_string_equal(th_addr(f->next_hop), "61.6.255.150");
	assert_string_equal(th_addr(f->exporter), "10.19.144.41");
	assert_int_equal(f->in_if, 117);
	assert_int_equal(f->out_if, 86);
	assert_int_equal(f->packets_raw, 1);
	assert_int_equal(f->bytes_raw, 133);
	assert_int_equal(f->flow_start, 1680626664000ULL);
	assert_int_equal(f->flow_end, 1680626664000ULL);
	assert_int_equal(f->src_port, 30104);
	assert_int_equal(f->dst_port, 11963);
	assert_int_equal(f->tcp_flags, 0x18);
	assert_int_equal(f->protocol, 6);
	assert_int_equal(f->src_as, 36351);
	assert_int_equal(f->dst_as, 10101);
	assert_int_equal(f->src_mask, 19);
	assert_int_equal(f->dst_mask, 24);
	assert_int_equal(f->ip_version, 4);
	assert_int_equal(f->flow_version, 5);
	assert_int_equal(f->sampling_rate, 1);
	assert_int_equal(f->sampling_source, NG_SAMPLING_NONE);
	/* pdu 2/29: StartTime 2874315 s, EndTime 2874324 s, 7 packets, 10262 octets */
	assert_int_equal(b.flows[1].flow_start, 1680626679000ULL - 24000);
	assert_int_equal(b.flows[1].flow_end, 1680626679000ULL - 15000);
	assert_int_equal(b.flows[1].bytes_raw, 10262);
	ng_exporter_stats s = th_totals(d);
	assert_int_equal(s.records, 29);
	assert_int_equal(s.packets, 1);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* tshark on netflow5_test_juniper_mx80.dat wrapped as UDP to port 2055:
 * "..00 0011 1110 1000 = SampleRate: 1000", SamplingMode 0; pdu 1: 10.0.0.1
 * → 192.168.0.2, 443 → 61608, Octets 1500, Packets 1. */
static void test_v5_header_sampling_juniper(void **state)
{
	(void)state;
	if (!th_testdata())
		skip();
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	assert_int_equal(
	    th_decode_file(d, "logstash-codec-netflow_dat/netflow5_test_juniper_mx80.dat", &b), 29);
	const ng_flow *f = &b.flows[0];
	assert_string_equal(th_addr(f->src_addr), "10.0.0.1");
	assert_int_equal(f->bytes_raw, 1500);
	assert_int_equal(f->sampling_rate, 1000);
	assert_int_equal(f->sampling_source, NG_SAMPLING_HEADER);
	assert_int_equal(f->bytes, 1500000);
	assert_int_equal(f->packets, 1000);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* A v5 packet: header (24 bytes) then `n` 48-byte records. */
static void v5_packet(struct tb *t, uint16_t count, uint32_t uptime, uint32_t secs, uint32_t nsecs,
                      uint32_t seq, uint16_t sampling, unsigned n, uint32_t first, uint32_t last)
{
	t->n = 0;
	tb_u16(t, 5);
	tb_u16(t, count);
	tb_u32(t, uptime);
	tb_u32(t, secs);
	tb_u32(t, nsecs);
	tb_u32(t, seq);
	tb_u8(t, 0);
	tb_u8(t, 0);
	tb_u16(t, sampling);
	for (unsigned i = 0; i < n; i++) {
		tb_v4(t, 10, 0, 0, (uint8_t)(i + 1)); /* srcaddr */
		tb_v4(t, 10, 0, 1, 1);                /* dstaddr */
		tb_v4(t, 0, 0, 0, 0);                 /* nexthop */
		tb_u16(t, 3);                         /* input */
		tb_u16(t, 4);                         /* output */
		tb_u32(t, 10);                        /* dPkts */
		tb_u32(t, 1000);                      /* dOctets */
		tb_u32(t, first);
		tb_u32(t, last);
		tb_u16(t, 1234);
		tb_u16(t, 80);
		tb_u8(t, 0);
		tb_u8(t, 0x12); /* tcp_flags */
		tb_u8(t, 6);
		tb_u8(t, 0x10);
		tb_u16(t, 64500);
		tb_u16(t, 64501);
		tb_u8(t, 24);
		tb_u8(t, 16);
		tb_u16(t, 0);
	}
}

static void test_v5_sampling_and_signed_uptime(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	struct tb t;
	/* mode 01 (deterministic), interval 100; First = uptime - 2000 ms,
	 * Last = uptime + 300 ms (stamped after the header: signed) */
	v5_packet(&t, 1, 100000, 1700000000, 250000000, 0, 0x4064, 1, 98000, 100300);
	assert_int_equal(tb_decode(d, &t, 5, &b), 1);
	const ng_flow *f = &b.flows[0];
	assert_int_equal(f->sampling_rate, 100);
	assert_int_equal(f->sampling_source, NG_SAMPLING_HEADER);
	assert_int_equal(f->bytes_raw, 1000);
	assert_int_equal(f->bytes, 100000);
	assert_int_equal(f->packets, 1000);
	assert_int_equal(f->flow_start, 1700000000250ULL - 2000);
	assert_int_equal(f->flow_end, 1700000000250ULL + 300);
	assert_int_equal(f->time_received, 5);
	assert_int_equal(f->tcp_flags, 0x12);
	assert_int_equal(f->tos, 0x10);
	assert_int_equal(f->src_as, 64500);
	assert_int_equal(f->dst_mask, 16);
	/* uptime wrapped past 2^32 ms since First: still 1000 ms ago */
	ng_flow_batch_clear(&b);
	v5_packet(&t, 1, 500, 1700000000, 0, 1, 0, 1, 0xfffffe0cu /* -500 */, 500);
	assert_int_equal(tb_decode(d, &t, 5, &b), 1);
	assert_int_equal(b.flows[0].flow_start, 1700000000000ULL - 1000);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* v5 has no ICMP type/code field: exporters put type × 256 + code in the
 * destination port (Cisco's convention, read so by nfdump and by tshark's
 * "dstport"); the decoder fills icmp_type/icmp_code from it and keeps the
 * port.  Destination unreachable/port (3/3), echo request (8/0); a UDP
 * record's port stays a port. */
static void test_v5_icmp_from_port(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	struct tb t;
	v5_packet(&t, 3, 100000, 1700000000, 0, 0, 0, 3, 99000, 99500);
	const size_t rec0 = 24, proto = 38, sport = 32, dport = 34;
	const uint8_t protos[3] = {1, 1, 17};
	const uint16_t ports[3] = {0x0303, 0x0800, 0x0303};
	for (size_t i = 0; i < 3; i++) {
		uint8_t *r = t.b + rec0 + 48 * i;
		r[proto] = protos[i];
		r[sport] = r[sport + 1] = 0;
		r[dport] = (uint8_t)(ports[i] >> 8);
		r[dport + 1] = (uint8_t)ports[i];
	}
	assert_int_equal(tb_decode(d, &t, 5, &b), 3);
	assert_int_equal(b.flows[0].icmp_type, 3);
	assert_int_equal(b.flows[0].icmp_code, 3);
	assert_int_equal(b.flows[0].dst_port, 0x0303);
	assert_int_equal(b.flows[1].icmp_type, 8);
	assert_int_equal(b.flows[1].icmp_code, 0);
	assert_int_equal(b.flows[2].icmp_type, 0);
	assert_int_equal(b.flows[2].icmp_code, 0);
	assert_int_equal(b.flows[2].dst_port, 0x0303);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* flow_sequence counts records: expected = previous seq + previous count. */
static void test_v5_sequence(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	struct tb t;
	v5_packet(&t, 2, 1000, 1700000000, 0, 100, 0, 2, 0, 0);
	tb_decode(d, &t, 1, &b);
	assert_int_equal(th_totals(d).lost, 0);
	v5_packet(&t, 2, 1000, 1700000000, 0, 102, 0, 2, 0, 0); /* in order */
	tb_decode(d, &t, 1, &b);
	assert_int_equal(th_totals(d).lost, 0);
	v5_packet(&t, 1, 1000, 1700000000, 0, 110, 0, 1, 0, 0); /* 104..109 lost */
	tb_decode(d, &t, 1, &b);
	assert_int_equal(th_totals(d).lost, 6);
	v5_packet(&t, 2, 1000, 1700000000, 0, 104, 0, 2, 0, 0); /* late: 2 found */
	tb_decode(d, &t, 1, &b);
	assert_int_equal(th_totals(d).lost, 4);
	v5_packet(&t, 1, 1000, 1700000000, 0, 111, 0, 1, 0, 0); /* in order again */
	tb_decode(d, &t, 1, &b);
	assert_int_equal(th_totals(d).lost, 4);
	v5_packet(&t, 1, 1000, 1700000000, 0, 3000000000u, 0, 1, 0, 0); /* restart */
	tb_decode(d, &t, 1, &b);
	assert_int_equal(th_totals(d).lost, 4);
	v5_packet(&t, 1, 1000, 1700000000, 0, 0xffffffffu, 0, 1, 0, 0); /* restart */
	tb_decode(d, &t, 1, &b);
	v5_packet(&t, 1, 1000, 1700000000, 0, 0, 0, 1, 0, 0); /* wrap 2^32: in order */
	tb_decode(d, &t, 1, &b);
	assert_int_equal(th_totals(d).lost, 4);
	assert_int_equal(th_totals(d).records, 11);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

static void test_v5_malformed(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	struct tb t;
	/* count 3 but only 2 records present: the 2 are decoded, counted */
	v5_packet(&t, 3, 1000, 1700000000, 0, 0, 0, 2, 0, 0);
	assert_int_equal(tb_decode(d, &t, 1, &b), 2);
	assert_int_equal(th_totals(d).errors[NG_DERR_BAD_LENGTH], 1);
	/* truncated header */
	t.n = 20;
	assert_int_equal(tb_decode(d, &t, 1, &b), 0);
	assert_int_equal(th_totals(d).errors[NG_DERR_SHORT_HEADER], 1);
	/* count 0 */
	v5_packet(&t, 0, 1000, 1700000000, 0, 0, 0, 0, 0, 0);
	assert_int_equal(tb_decode(d, &t, 1, &b), 0);
	assert_int_equal(th_totals(d).errors[NG_DERR_BAD_LENGTH], 2);
	/* one byte, unknown version, empty */
	t.n = 1;
	tb_decode(d, &t, 1, &b);
	assert_int_equal(th_totals(d).errors[NG_DERR_SHORT_HEADER], 2);
	t.n = 0;
	tb_u16(&t, 8);
	tb_u16(&t, 0);
	tb_decode(d, &t, 1, &b);
	assert_int_equal(th_totals(d).errors[NG_DERR_UNKNOWN_VERSION], 1);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* v1 (16-byte header, flags at 40) and v7 (52-byte records). */
static void test_v1_v7(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	struct tb t;
	t.n = 0;
	tb_u16(&t, 1);
	tb_u16(&t, 1);
	tb_u32(&t, 5000);
	tb_u32(&t, 1600000000);
	tb_u32(&t, 0);
	size_t rec = t.n;
	for (int i = 0; i < 48; i++)
		tb_u8(&t, 0);
	t.b[rec + 0] = 192, t.b[rec + 1] = 0, t.b[rec + 2] = 2, t.b[rec + 3] = 7;
	t.b[rec + 23] = 77;   /* dOctets */
	t.b[rec + 38] = 17;   /* prot */
	t.b[rec + 40] = 0x1b; /* v1 tcp_flags */
	assert_int_equal(tb_decode(d, &t, 1, &b), 1);
	assert_string_equal(th_addr(b.flows[0].src_addr), "192.0.2.7");
	assert_int_equal(b.flows[0].bytes_raw, 77);
	assert_int_equal(b.flows[0].protocol, 17);
	assert_int_equal(b.flows[0].tcp_flags, 0x1b);
	assert_int_equal(b.flows[0].flow_version, 1);
	assert_int_equal(b.flows[0].flow_start, 1600000000000ULL - 5000);
	t.n = 0;
	tb_u16(&t, 7);
	tb_u16(&t, 2);
	tb_u32(&t, 5000);
	tb_u32(&t, 1600000000);
	tb_u32(&t, 0);
	tb_u32(&t, 0);
	tb_u32(&t, 0);
	for (int i = 0; i < 2 * 52; i++)
		tb_u8(&t, 0);
	t.b[24 + 52 + 37] = 0x02; /* second record's tcp_flags */
	ng_flow_batch_clear(&b);
	assert_int_equal(tb_decode(d, &t, 1, &b), 2);
	assert_int_equal(b.flows[1].tcp_flags, 0x02);
	assert_int_equal(b.flows[1].flow_version, 7);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_v5_akvorado),
	    cmocka_unit_test(test_v5_header_sampling_juniper),
	    cmocka_unit_test(test_v5_sampling_and_signed_uptime),
	    cmocka_unit_test(test_v5_sequence),
	    cmocka_unit_test(test_v5_icmp_from_port),
	    cmocka_unit_test(test_v5_malformed),
	    cmocka_unit_test(test_v1_v7),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
