/*
 * test_decode_ipfix.c — IPFIX (RFC 7011/7012) decoding on synthetic
 * messages built field by field from the RFC layouts, plus real captures
 * for enterprise elements.  Each test names the RFC section it exercises.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_decode_helpers.h"

#define EXPORT_S 1700000000u
#define EXPORT_MS 1700000000000ULL

static const struct tb_fs basic[] = {{8, 4, 0}, {12, 4, 0}, {1, 4, 0}, {2, 4, 0}};

static void basic_rec(struct tb *t, uint8_t host, uint32_t bytes)
{
	tb_v4(t, 192, 0, 2, host);
	tb_v4(t, 198, 51, 100, 1);
	tb_u32(t, bytes);
	tb_u32(t, 1);
}

static size_t send_basic_data(ng_decoder *d, uint16_t tid, uint32_t seq, ng_flow_batch *b)
{
	struct tb t;
	tb_ipfix(&t, EXPORT_S, seq, 1);
	size_t s = tb_set(&t, tid);
	basic_rec(&t, 1, 100);
	tb_set_end(&t, s);
	tb_ipfix_end(&t);
	return tb_decode(d, &t, 1, b);
}

/* RFC 7011 §8.1: withdrawal (field count 0) of one template, and of all
 * templates with ID 2; options withdrawal with ID 3 spares data templates. */
static void test_ipfix_template_withdrawal(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	struct tb t;
	tb_ipfix(&t, EXPORT_S, 0, 1);
	tb_tpl(&t, 256, 0, basic, 4);
	tb_tpl(&t, 257, 0, basic, 4);
	tb_ipfix_end(&t);
	tb_decode(d, &t, 1, &b);
	assert_int_equal(send_basic_data(d, 256, 0, &b), 1);
	assert_int_equal(send_basic_data(d, 257, 0, &b), 1);
	/* withdraw 256 only */
	tb_ipfix(&t, EXPORT_S, 0, 1);
	size_t s = tb_set(&t, 2);
	tb_u16(&t, 256);
	tb_u16(&t, 0);
	tb_set_end(&t, s);
	tb_ipfix_end(&t);
	tb_decode(d, &t, 1, &b);
	assert_int_equal(send_basic_data(d, 256, 0, &b), 0);
	assert_int_equal(th_totals(d).template_misses, 1);
	assert_int_equal(send_basic_data(d, 257, 0, &b), 1);
	/* options withdraw-all (ID 3) leaves 257 */
	tb_ipfix(&t, EXPORT_S, 0, 1);
	s = tb_set(&t, 3);
	tb_u16(&t, 3);
	tb_u16(&t, 0);
	tb_set_end(&t, s);
	tb_ipfix_end(&t);
	tb_decode(d, &t, 1, &b);
	assert_int_equal(send_basic_data(d, 257, 0, &b), 1);
	/* withdraw all data templates (ID 2) */
	tb_ipfix(&t, EXPORT_S, 0, 1);
	s = tb_set(&t, 2);
	tb_u16(&t, 2);
	tb_u16(&t, 0);
	tb_set_end(&t, s);
	tb_ipfix_end(&t);
	tb_decode(d, &t, 1, &b);
	assert_int_equal(send_basic_data(d, 257, 0, &b), 0);
	assert_int_equal(th_totals(d).template_misses, 2);
	/* withdrawal in another observation domain touches nothing here */
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* A domain holds at most limits.templates_per_domain templates (1024 by
 * default): the next new ID evicts the least recently used one (counted
 * as templates_evicted, nothing refused); a template that data used
 * recently survives, and re-sending a held template evicts nothing. */
static void test_ipfix_template_limit(void **state)
{
	(void)state;
	enum { LIMIT = 1024, PER_MSG = 100 };
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	struct tb t;
	for (unsigned lo = 0; lo < LIMIT; lo += PER_MSG) {
		tb_ipfix(&t, EXPORT_S, 0, 1);
		for (unsigned i = lo; i < lo + PER_MSG && i < LIMIT; i++)
			tb_tpl(&t, (uint16_t)(256 + i), 0, basic, 4);
		tb_ipfix_end(&t);
		tb_decode(d, &t, 1, &b);
	}
	assert_int_equal(th_totals(d).templates_evicted, 0);
	assert_int_equal(send_basic_data(d, 256, 0, &b), 1); /* 256: the newest used */
	const uint16_t extra = 256 + LIMIT;
	tb_ipfix(&t, EXPORT_S, 0, 1);
	tb_tpl(&t, extra, 0, basic, 4);
	tb_tpl(&t, 300, 0, basic, 4); /* held already: a refresh, evicts nothing */
	tb_ipfix_end(&t);
	tb_decode(d, &t, 1, &b);
	assert_int_equal(th_errors(d, NG_DERR_TEMPLATE_LIMIT), 0);
	assert_int_equal(th_totals(d).templates_evicted, 1);
	ng_limit_stats l;
	ng_decoder_limit_stats(d, &l);
	assert_int_equal(l.templates_evicted, 1);
	assert_int_equal(l.templates, LIMIT);
	assert_int_equal(send_basic_data(d, extra, 0, &b), 1);
	assert_int_equal(send_basic_data(d, 256, 0, &b), 1);
	assert_int_equal(send_basic_data(d, 257, 0, &b), 0); /* the least recently used: gone */
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

static void test_ipfix_template_replacement_and_keying(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	struct tb t;
	tb_ipfix(&t, EXPORT_S, 0, 1);
	tb_tpl(&t, 256, 0, basic, 4);
	tb_ipfix_end(&t);
	tb_decode(d, &t, 1, &b);
	static const struct tb_fs other[] = {{1, 8, 0}, {8, 4, 0}};
	tb_ipfix(&t, EXPORT_S, 0, 1);
	tb_tpl(&t, 256, 0, other, 2);
	size_t s = tb_set(&t, 256);
	tb_u64(&t, 123456789012ULL);
	tb_v4(&t, 203, 0, 113, 5);
	tb_set_end(&t, s);
	tb_ipfix_end(&t);
	assert_int_equal(tb_decode(d, &t, 1, &b), 1);
	assert_int_equal(b.flows[0].bytes_raw, 123456789012ULL);
	assert_string_equal(th_addr(b.flows[0].src_addr), "203.0.113.5");
	/* domain 2 has no template 256 */
	tb_ipfix(&t, EXPORT_S, 0, 2);
	s = tb_set(&t, 256);
	tb_u64(&t, 1);
	tb_v4(&t, 203, 0, 113, 5);
	tb_set_end(&t, s);
	tb_ipfix_end(&t);
	assert_int_equal(tb_decode(d, &t, 1, &b), 0);
	/* another exporter, same domain: no template either */
	ng_datagram dg = {.data = t.b, .len = t.n, .time_received = 1};
	t.b[15] = 1;
	ng_addr_parse("2001:db8::1", dg.exporter);
	assert_int_equal(ng_decode(d, &dg, &b), 0);
	assert_int_equal(th_totals(d).template_misses, 2);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* RFC 7011 §7: variable-length fields with 1- and 3-byte length prefixes;
 * a length past the set end is RECORD_TRUNCATED and keeps earlier records. */
static void test_ipfix_varlen(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	struct tb t;
	static const struct tb_fs f[] = {{8, 4, 0}, {82, 0xffff, 0}, {1, 4, 0}, {96, 0xffff, 0}};
	tb_ipfix(&t, EXPORT_S, 0, 1);
	tb_tpl(&t, 300, 0, f, 4);
	size_t s = tb_set(&t, 300);
	tb_v4(&t, 10, 0, 0, 1);
	tb_u8(&t, 5);
	tb_bytes(&t, "eth0:", 5);
	tb_u32(&t, 1111);
	tb_u8(&t, 0); /* empty applicationName */
	tb_v4(&t, 10, 0, 0, 2);
	tb_u8(&t, 255);
	tb_u16(&t, 300);
	for (int i = 0; i < 300; i++)
		tb_u8(&t, 'x');
	tb_u32(&t, 2222);
	tb_u8(&t, 1);
	tb_u8(&t, 'y');
	tb_v4(&t, 10, 0, 0, 3); /* third record: length runs past the set */
	tb_u8(&t, 200);
	tb_u32(&t, 0);
	tb_u32(&t, 0);
	tb_set_end(&t, s);
	tb_ipfix_end(&t);
	assert_int_equal(tb_decode(d, &t, 1, &b), 2);
	assert_int_equal(b.flows[0].bytes_raw, 1111);
	assert_int_equal(b.flows[1].bytes_raw, 2222);
	assert_string_equal(th_addr(b.flows[1].src_addr), "10.0.0.2");
	assert_int_equal(th_totals(d).errors[NG_DERR_RECORD_TRUNCATED], 1);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

static void count_ent(uint32_t pen, uint16_t ie, uint64_t count, void *arg)
{
	uint64_t *out = arg;
	if (pen == 9999 && ie == 100)
		out[0] += count;
	if (pen == 29305)
		out[1] += count;
}

/* RFC 7011 §3.2: enterprise bit and number; skipped by length, counted;
 * set padding (§3.3.1) of 3 bytes after the records. */
static void test_ipfix_enterprise_and_padding(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	struct tb t;
	static const struct tb_fs f[] = {{100, 4, 9999}, {8, 4, 0}, {101, 0xffff, 9999}, {2, 4, 0}};
	tb_ipfix(&t, EXPORT_S, 0, 1);
	tb_tpl(&t, 260, 0, f, 4);
	size_t s = tb_set(&t, 260);
	for (uint8_t i = 0; i < 3; i++) {
		tb_u32(&t, 0xdeadbeef);
		tb_v4(&t, 10, 9, 9, i);
		tb_u8(&t, 2);
		tb_u16(&t, 0xabcd);
		tb_u32(&t, 7);
	}
	tb_u8(&t, 0), tb_u8(&t, 0), tb_u8(&t, 0);
	tb_set_end(&t, s);
	/* and a set padded with more zero bytes than a record holds */
	s = tb_set(&t, 260);
	tb_u32(&t, 1);
	tb_v4(&t, 10, 9, 9, 3);
	tb_u8(&t, 0);
	tb_u32(&t, 8);
	for (int i = 0; i < 40; i++)
		tb_u8(&t, 0);
	tb_set_end(&t, s);
	tb_ipfix_end(&t);
	assert_int_equal(tb_decode(d, &t, 1, &b), 4);
	assert_int_equal(b.flows[2].packets_raw, 7);
	assert_string_equal(th_addr(b.flows[2].src_addr), "10.9.9.2");
	uint64_t c[2] = {0, 0};
	ng_decoder_foreach_enterprise(d, count_ent, c);
	assert_int_equal(c[0], 4);
	assert_int_equal(b.flows[3].packets_raw, 8);
	ng_exporter_stats st = th_totals(d);
	for (int e = 0; e < NG_DERR_COUNT; e++)
		assert_int_equal(st.errors[e], 0);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* akvorado/ipfixprobe-*: CESNET ipfixprobe biflow, reverse elements under
 * PEN 29305 (RFC 5103).  tshark -r (mergecap -a ipfixprobe-templates.pcap
 * ipfixprobe-data.pcap) -d udp.port==4739,cflow -V: 4 flows; Flow 1
 * Octets 62 and "Octets: 128 (Reverse Type 1 BYTES)", Packets 1,
 * 10.10.1.4:56166 → 10.10.1.1:53, InputInt 10. */
static void test_ipfix_ipfixprobe_reverse(void **state)
{
	(void)state;
	if (!th_testdata())
		skip();
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	th_decode_file(d, "akvorado/ipfixprobe-templates.pcap", &b);
	assert_int_equal(th_decode_file(d, "akvorado/ipfixprobe-data.pcap", &b), 4);
	const ng_flow *f = &b.flows[0];
	assert_string_equal(th_addr(f->src_addr), "10.10.1.4");
	assert_string_equal(th_addr(f->dst_addr), "10.10.1.1");
	assert_int_equal(f->src_port, 56166);
	assert_int_equal(f->dst_port, 53);
	assert_int_equal(f->bytes_raw, 62); /* forward, not the reverse 128 */
	assert_int_equal(f->in_if, 10);
	uint64_t c[2] = {0, 0};
	ng_decoder_foreach_enterprise(d, count_ent, c);
	assert_true(c[1] >= 4);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* IE 21/22 are unsigned32 ms since systemInitTime (IE 160) and wrap:
 * softflowd reading a capture older than its own start sends
 * (packet time - start) mod 2^32 (seen in tests/e2e with softflowd 1.1.0
 * -v 10 -r PCAP).  2^32 - 2500 ms after an init time equal to the export
 * time is 2.5 s before it, not 49.7 days after. */
static void test_ipfix_uptime_wrap(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	struct tb t;
	static const struct tb_fs upi[] = {{8, 4, 0}, {22, 4, 0}, {21, 4, 0}, {160, 8, 0}};
	tb_ipfix(&t, EXPORT_S, 0, 1);
	tb_tpl(&t, 306, 0, upi, 4);
	size_t s = tb_set(&t, 306);
	tb_v4(&t, 10, 0, 0, 6);
	tb_u32(&t, 0xffffffffu - 2499); /* 2^32 - 2500 */
	tb_u32(&t, 0xffffffffu - 999);  /* 2^32 - 1000 */
	tb_u64(&t, EXPORT_MS);
	tb_set_end(&t, s);
	tb_ipfix_end(&t);
	assert_int_equal(tb_decode(d, &t, 1, &b), 1);
	assert_int_equal(b.flows[0].flow_start, EXPORT_MS - 2500);
	assert_int_equal(b.flows[0].flow_end, EXPORT_MS - 1000);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* Flow times: RFC 7012 IE 150–153 absolute, 154–157 NTP (RFC 7011
 * §6.1.9/6.1.10), 158/159 µs before export, 21/22 with 160 from options
 * or from the record, none at all = export time. */
static void test_ipfix_times(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	struct tb t;
	static const struct tb_fs ms[] = {{8, 4, 0}, {152, 8, 0}, {153, 8, 0}};
	static const struct tb_fs sec[] = {{8, 4, 0}, {150, 4, 0}, {151, 4, 0}};
	static const struct tb_fs ntp[] = {{8, 4, 0}, {154, 8, 0}, {157, 8, 0}};
	static const struct tb_fs dlt[] = {{8, 4, 0}, {158, 4, 0}, {159, 4, 0}};
	static const struct tb_fs up[] = {{8, 4, 0}, {22, 4, 0}, {21, 4, 0}};
	static const struct tb_fs upi[] = {{8, 4, 0}, {22, 4, 0}, {21, 4, 0}, {160, 8, 0}};
	static const struct tb_fs none[] = {{8, 4, 0}};
	static const struct tb_fs opt[] = {{149, 4, 0}, {160, 8, 0}};
	tb_ipfix(&t, EXPORT_S, 0, 1);
	tb_tpl(&t, 301, 0, ms, 3);
	tb_tpl(&t, 302, 0, sec, 3);
	tb_tpl(&t, 303, 0, ntp, 3);
	tb_tpl(&t, 304, 0, dlt, 3);
	tb_tpl(&t, 305, 0, up, 3);
	tb_tpl(&t, 306, 0, upi, 4);
	tb_tpl(&t, 307, 0, none, 1);
	size_t s = tb_set(&t, 301);
	tb_v4(&t, 10, 0, 0, 1);
	tb_u64(&t, 1699999999123ULL);
	tb_u64(&t, 1699999999456ULL);
	tb_set_end(&t, s);
	s = tb_set(&t, 302);
	tb_v4(&t, 10, 0, 0, 2);
	tb_u32(&t, 1699999990);
	tb_u32(&t, 1699999995);
	tb_set_end(&t, s);
	s = tb_set(&t, 303);
	tb_v4(&t, 10, 0, 0, 3);
	/* 1699999999 s + 0.5 s in NTP: seconds since 1900, fraction 2^31 */
	tb_u32(&t, 1699999999u + 2208988800u);
	tb_u32(&t, 0x80000000u);
	tb_u32(&t, 1700000000u + 2208988800u);
	tb_u32(&t, 0x40000000u); /* .25 s */
	tb_set_end(&t, s);
	s = tb_set(&t, 304);
	tb_v4(&t, 10, 0, 0, 4);
	tb_u32(&t, 2500000); /* 2.5 s before export */
	tb_u32(&t, 1000);    /* 1 ms before export */
	tb_set_end(&t, s);
	s = tb_set(&t, 306);
	tb_v4(&t, 10, 0, 0, 6);
	tb_u32(&t, 1000);
	tb_u32(&t, 3000);
	tb_u64(&t, 1690000000000ULL);
	tb_set_end(&t, s);
	s = tb_set(&t, 307);
	tb_v4(&t, 10, 0, 0, 7);
	tb_set_end(&t, s);
	tb_ipfix_end(&t);
	assert_int_equal(tb_decode(d, &t, 1, &b), 6);
	assert_int_equal(b.flows[0].flow_start, 1699999999123ULL);
	assert_int_equal(b.flows[0].flow_end, 1699999999456ULL);
	assert_int_equal(b.flows[1].flow_start, 1699999990000ULL);
	assert_int_equal(b.flows[1].flow_end, 1699999995000ULL);
	assert_int_equal(b.flows[2].flow_start, 1699999999500ULL);
	assert_int_equal(b.flows[2].flow_end, 1700000000250ULL);
	assert_int_equal(b.flows[3].flow_start, EXPORT_MS - 2500);
	assert_int_equal(b.flows[3].flow_end, EXPORT_MS - 1);
	assert_int_equal(b.flows[4].flow_start, 1690000000000ULL + 1000);
	assert_int_equal(b.flows[4].flow_end, 1690000000000ULL + 3000);
	assert_int_equal(b.flows[5].flow_start, EXPORT_MS);
	assert_int_equal(b.flows[5].flow_end, EXPORT_MS);
	/* uptime-relative without any init time: export time */
	tb_ipfix(&t, EXPORT_S, 6, 1);
	s = tb_set(&t, 305);
	tb_v4(&t, 10, 0, 0, 5);
	tb_u32(&t, 1000);
	tb_u32(&t, 2000);
	tb_set_end(&t, s);
	tb_ipfix_end(&t);
	ng_flow_batch_clear(&b);
	assert_int_equal(tb_decode(d, &t, 1, &b), 1);
	assert_int_equal(b.flows[0].flow_start, EXPORT_MS);
	/* systemInitTimeMilliseconds from options data applies from then on */
	tb_ipfix(&t, EXPORT_S, 7, 1);
	tb_tpl(&t, 400, 1, opt, 2);
	s = tb_set(&t, 400);
	tb_u32(&t, 1);
	tb_u64(&t, 1695000000000ULL);
	tb_set_end(&t, s);
	s = tb_set(&t, 305);
	tb_v4(&t, 10, 0, 0, 5);
	tb_u32(&t, 1000);
	tb_u32(&t, 2000);
	tb_set_end(&t, s);
	tb_ipfix_end(&t);
	ng_flow_batch_clear(&b);
	assert_int_equal(tb_decode(d, &t, 1, &b), 1);
	assert_int_equal(b.flows[0].flow_start, 1695000001000ULL);
	assert_int_equal(b.flows[0].flow_end, 1695000002000ULL);
	assert_int_equal(th_totals(d).options_records, 1);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* Sampling (RFC 7012 IE 34; RFC 5477 §8.2 IE 305/306, 309/310) in the
 * record; by selector ID (IE 302) from options data; reduced-size counters
 * (RFC 7011 §6.2). */
static void test_ipfix_sampling(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	struct tb t;
	static const struct tb_fs r34[] = {{8, 4, 0}, {1, 3, 0}, {2, 1, 0}, {34, 4, 0}};
	static const struct tb_fs r305[] = {
	    {8, 4, 0}, {1, 2, 0}, {2, 2, 0}, {305, 4, 0}, {306, 4, 0}};
	static const struct tb_fs r309[] = {
	    {8, 4, 0}, {1, 4, 0}, {2, 4, 0}, {309, 4, 0}, {310, 4, 0}};
	static const struct tb_fs rsel[] = {{8, 4, 0}, {1, 4, 0}, {2, 4, 0}, {302, 8, 0}};
	static const struct tb_fs osel[] = {{302, 8, 0}, {305, 4, 0}, {306, 4, 0}};
	tb_ipfix(&t, EXPORT_S, 0, 1);
	tb_tpl(&t, 310, 0, r34, 4);
	tb_tpl(&t, 311, 0, r305, 5);
	tb_tpl(&t, 312, 0, r309, 5);
	tb_tpl(&t, 313, 0, rsel, 4);
	tb_tpl(&t, 314, 1, osel, 3);
	size_t s = tb_set(&t, 314);
	tb_u64(&t, 77);
	tb_u32(&t, 1);
	tb_u32(&t, 9); /* 1 in 10 */
	tb_set_end(&t, s);
	s = tb_set(&t, 310);
	tb_v4(&t, 10, 0, 0, 1);
	tb_u8(&t, 0x01), tb_u16(&t, 0x0000); /* 65536 bytes in 3 bytes */
	tb_u8(&t, 3);
	tb_u32(&t, 1000);
	tb_set_end(&t, s);
	s = tb_set(&t, 311);
	tb_v4(&t, 10, 0, 0, 2);
	tb_u16(&t, 100);
	tb_u16(&t, 2);
	tb_u32(&t, 1);
	tb_u32(&t, 99);
	tb_set_end(&t, s);
	s = tb_set(&t, 312);
	tb_v4(&t, 10, 0, 0, 3);
	tb_u32(&t, 100);
	tb_u32(&t, 2);
	tb_u32(&t, 1);
	tb_u32(&t, 512);
	tb_set_end(&t, s);
	s = tb_set(&t, 313);
	tb_v4(&t, 10, 0, 0, 4);
	tb_u32(&t, 100);
	tb_u32(&t, 2);
	tb_u64(&t, 77);
	tb_v4(&t, 10, 0, 0, 5); /* unknown selector, no default: unsampled */
	tb_u32(&t, 100);
	tb_u32(&t, 2);
	tb_u64(&t, 78);
	tb_set_end(&t, s);
	tb_ipfix_end(&t);
	assert_int_equal(tb_decode(d, &t, 1, &b), 5);
	assert_int_equal(b.flows[0].bytes_raw, 65536);
	assert_int_equal(b.flows[0].packets_raw, 3);
	assert_int_equal(b.flows[0].sampling_rate, 1000);
	assert_int_equal(b.flows[0].sampling_source, NG_SAMPLING_RECORD);
	assert_int_equal(b.flows[0].bytes, 65536000);
	assert_int_equal(b.flows[1].sampling_rate, 100);
	assert_int_equal(b.flows[1].packets, 200);
	assert_int_equal(b.flows[2].sampling_rate, 512);
	assert_int_equal(b.flows[3].sampling_rate, 10);
	assert_int_equal(b.flows[3].sampling_source, NG_SAMPLING_OPTIONS);
	assert_int_equal(b.flows[3].sampler_id, 77);
	assert_int_equal(b.flows[3].bytes, 1000);
	assert_int_equal(b.flows[4].sampling_rate, 1);
	assert_int_equal(b.flows[4].sampling_source, NG_SAMPLING_NONE);
	assert_int_equal(b.flows[4].bytes, 100);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* Field mapping: IPv6, masks, next hop, ICMP, MPLS, MACs, VLANs (with
 * dot1q fallback), physical interfaces as fallback, direction, TCP flags
 * in 2 bytes, ToS, AS. */
static void test_ipfix_fields(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	struct tb t;
	static const struct tb_fs f[] = {
	    {27, 16, 0}, {28, 16, 0}, {29, 1, 0},  {30, 1, 0}, {62, 16, 0}, {139, 2, 0}, {70, 3, 0},
	    {56, 6, 0},  {80, 6, 0},  {243, 2, 0}, {59, 2, 0}, {252, 4, 0}, {14, 4, 0},  {61, 1, 0},
	    {6, 2, 0},   {5, 1, 0},   {16, 4, 0},  {17, 2, 0}, {4, 1, 0},   {7, 2, 0},   {11, 2, 0},
	};
	tb_ipfix(&t, EXPORT_S, 0, 9);
	tb_tpl(&t, 500, 0, f, sizeof f / sizeof f[0]);
	size_t s = tb_set(&t, 500);
	uint8_t a6[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 1};
	tb_bytes(&t, a6, 16);
	a6[15] = 2;
	tb_bytes(&t, a6, 16);
	tb_u8(&t, 48);
	tb_u8(&t, 64);
	a6[15] = 0xfe;
	tb_bytes(&t, a6, 16);
	tb_u16(&t, 0x8100);                                /* echo request, code 0 */
	tb_u8(&t, 0x01), tb_u8(&t, 0xe2), tb_u8(&t, 0x41); /* label 7716, S=1 */
	static const uint8_t m1[6] = {0, 1, 2, 3, 4, 5}, m2[6] = {6, 7, 8, 9, 10, 11};
	tb_bytes(&t, m1, 6);
	tb_bytes(&t, m2, 6);
	tb_u16(&t, 42);
	tb_u16(&t, 43);
	tb_u32(&t, 17);
	tb_u32(&t, 18);
	tb_u8(&t, 1);
	tb_u16(&t, 0x0112);
	tb_u8(&t, 0xb8);
	tb_u32(&t, 4200000000u);
	tb_u16(&t, 65001);
	tb_u8(&t, 58);
	tb_u16(&t, 0);
	tb_u16(&t, 0x8100);
	tb_set_end(&t, s);
	tb_ipfix_end(&t);
	assert_int_equal(tb_decode(d, &t, 1, &b), 1);
	const ng_flow *r = &b.flows[0];
	assert_string_equal(th_addr(r->src_addr), "2001:db8::1");
	assert_string_equal(th_addr(r->dst_addr), "2001:db8::2");
	assert_string_equal(th_addr(r->next_hop), "2001:db8::fe");
	assert_int_equal(r->ip_version, 6);
	assert_int_equal(r->src_mask, 48);
	assert_int_equal(r->dst_mask, 64);
	assert_int_equal(r->icmp_type, 0x81);
	assert_int_equal(r->icmp_code, 0);
	assert_int_equal(r->mpls_label, 7716);
	assert_memory_equal(r->src_mac, m1, 6);
	assert_memory_equal(r->dst_mac, m2, 6);
	assert_int_equal(r->src_vlan, 42);
	assert_int_equal(r->dst_vlan, 43);
	assert_int_equal(r->in_if, 17);
	assert_int_equal(r->out_if, 18);
	assert_int_equal(r->direction, NG_DIR_EGRESS);
	assert_int_equal(r->tcp_flags, 0x12);
	assert_int_equal(r->tos, 0xb8);
	assert_int_equal(r->src_as, 4200000000u);
	assert_int_equal(r->dst_as, 65001);
	assert_int_equal(r->protocol, 58);
	assert_int_equal(r->observation_domain, 9);
	assert_int_equal(r->flow_version, 10);
	assert_string_equal(th_addr(r->exporter), "192.0.2.1");
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* RFC 7011 §3.1: the sequence number counts data records; several
 * messages in one buffer, trailing bytes ignored. */
static void test_ipfix_sequence_and_multi_message(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	struct tb t, all = {.n = 0};
	tb_ipfix(&t, EXPORT_S, 0, 1);
	tb_tpl(&t, 256, 0, basic, 4);
	size_t s = tb_set(&t, 256);
	basic_rec(&t, 1, 10);
	basic_rec(&t, 2, 10);
	tb_set_end(&t, s);
	tb_ipfix_end(&t);
	tb_bytes(&all, t.b, t.n);
	/* next message: seq 2 (in order), 1 record */
	tb_ipfix(&t, EXPORT_S, 2, 1);
	s = tb_set(&t, 256);
	basic_rec(&t, 3, 10);
	tb_set_end(&t, s);
	tb_ipfix_end(&t);
	tb_bytes(&all, t.b, t.n);
	/* then seq 8: records 3..7 lost */
	tb_ipfix(&t, EXPORT_S, 8, 1);
	s = tb_set(&t, 256);
	basic_rec(&t, 4, 10);
	tb_set_end(&t, s);
	tb_ipfix_end(&t);
	tb_bytes(&all, t.b, t.n);
	tb_u8(&all, 0xaa), tb_u8(&all, 0xbb); /* trailing bytes */
	assert_int_equal(tb_decode(d, &all, 1, &b), 4);
	ng_exporter_stats st = th_totals(d);
	assert_int_equal(st.lost, 5);
	assert_int_equal(st.packets, 3);
	assert_int_equal(st.records, 4);
	/* a reordered message (seq 3) gives back what it carries */
	tb_ipfix(&t, EXPORT_S, 3, 1);
	s = tb_set(&t, 256);
	basic_rec(&t, 5, 10);
	basic_rec(&t, 6, 10);
	tb_set_end(&t, s);
	tb_ipfix_end(&t);
	tb_decode(d, &t, 1, &b);
	assert_int_equal(th_totals(d).lost, 3);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

/* Malformed messages and sets (RFC 7011 §3.1, §3.3.2, §3.4). */
static void test_ipfix_malformed(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch b = {0};
	struct tb t;
	/* header says 200 bytes, datagram has fewer: counted, sets decoded */
	tb_ipfix(&t, EXPORT_S, 0, 1);
	tb_tpl(&t, 256, 0, basic, 4);
	size_t s = tb_set(&t, 256);
	basic_rec(&t, 1, 10);
	tb_set_end(&t, s);
	tb_patch16(&t, 2, 200);
	assert_int_equal(tb_decode(d, &t, 1, &b), 1);
	assert_int_equal(th_totals(d).errors[NG_DERR_BAD_LENGTH], 1);
	/* reserved set ID 5, then a good set, then a zero-length set */
	tb_ipfix(&t, EXPORT_S, 1, 1);
	s = tb_set(&t, 5);
	tb_u32(&t, 0);
	tb_set_end(&t, s);
	s = tb_set(&t, 256);
	basic_rec(&t, 2, 10);
	tb_set_end(&t, s);
	tb_u16(&t, 256), tb_u16(&t, 0), tb_u32(&t, 1);
	tb_ipfix_end(&t);
	assert_int_equal(tb_decode(d, &t, 1, &b), 1);
	ng_exporter_stats st = th_totals(d);
	assert_int_equal(st.errors[NG_DERR_BAD_SET_ID], 1);
	assert_int_equal(st.errors[NG_DERR_SET_TOO_SHORT], 1);
	/* options template with scope count 0; template cut by its set;
	 * template ID 255 */
	tb_ipfix(&t, EXPORT_S, 2, 1);
	s = tb_set(&t, 3);
	tb_u16(&t, 600), tb_u16(&t, 1), tb_u16(&t, 0), tb_u16(&t, 8), tb_u16(&t, 4);
	tb_set_end(&t, s);
	s = tb_set(&t, 2);
	tb_u16(&t, 255), tb_u16(&t, 1), tb_u16(&t, 8), tb_u16(&t, 4);
	tb_u16(&t, 601), tb_u16(&t, 3), tb_u16(&t, 8), tb_u16(&t, 4);
	tb_set_end(&t, s);
	tb_ipfix_end(&t);
	tb_decode(d, &t, 1, &b);
	st = th_totals(d);
	assert_int_equal(st.errors[NG_DERR_TEMPLATE_BAD], 2);
	assert_int_equal(st.errors[NG_DERR_TEMPLATE_ID_BAD], 1);
	/* address field of the wrong size: counted, skipped, record kept */
	static const struct tb_fs badlen[] = {{8, 2, 0}, {1, 4, 0}};
	tb_ipfix(&t, EXPORT_S, 3, 1);
	tb_tpl(&t, 602, 0, badlen, 2);
	s = tb_set(&t, 602);
	tb_u16(&t, 0x0a00);
	tb_u32(&t, 99);
	tb_set_end(&t, s);
	tb_ipfix_end(&t);
	ng_flow_batch_clear(&b);
	assert_int_equal(tb_decode(d, &t, 1, &b), 1);
	assert_int_equal(b.flows[0].bytes_raw, 99);
	assert_int_equal(th_totals(d).errors[NG_DERR_FIELD_LENGTH], 1);
	/* short header */
	t.n = 15;
	tb_decode(d, &t, 1, &b);
	assert_int_equal(th_totals(d).errors[NG_DERR_SHORT_HEADER], 1);
	ng_flow_batch_free(&b);
	ng_decoder_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ipfix_template_withdrawal),
	    cmocka_unit_test(test_ipfix_template_limit),
	    cmocka_unit_test(test_ipfix_template_replacement_and_keying),
	    cmocka_unit_test(test_ipfix_varlen),
	    cmocka_unit_test(test_ipfix_enterprise_and_padding),
	    cmocka_unit_test(test_ipfix_ipfixprobe_reverse),
	    cmocka_unit_test(test_ipfix_times),
	    cmocka_unit_test(test_ipfix_uptime_wrap),
	    cmocka_unit_test(test_ipfix_sampling),
	    cmocka_unit_test(test_ipfix_fields),
	    cmocka_unit_test(test_ipfix_sequence_and_multi_message),
	    cmocka_unit_test(test_ipfix_malformed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
