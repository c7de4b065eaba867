/*
 * test_restart_packets.h — export packets of an exporter that restarts and
 * redefines its template 256 (test_decode_restart.c, tests/e2e/
 * test_collect.c): template and data sets of two layouts, and the v9 and
 * IPFIX datagrams that carry them, built with test_decode_helpers.h's tb_*.
 *
 * Header-only (static functions) so each test program stays one file.
 */
#ifndef NG_TEST_RESTART_PACKETS_H
#define NG_TEST_RESTART_PACKETS_H

#include "test_decode_helpers.h"

/* Layout A: IPV4_SRC_ADDR, IPV4_DST_ADDR, IN_BYTES (4), IN_PKTS (4):
 * 16 bytes.  Layout B (the same template ID after the restart): IN_BYTES
 * (8), IN_PKTS (8), L4_SRC_PORT, L4_DST_PORT, IPV4_SRC_ADDR, IPV4_DST_ADDR:
 * 28 bytes.  Read with layout A, a B record is a flow from 0.0.0.28 … */
static __attribute__((unused)) const uint16_t LAYOUT_A[][2] = {{8, 4}, {12, 4}, {1, 4}, {2, 4}};
static __attribute__((unused))
const uint16_t LAYOUT_B[][2] = {{1, 8}, {2, 8}, {7, 2}, {11, 2}, {8, 4}, {12, 4}};

/* A template record (v9 §5.2 / IPFIX §3.4.1: same shape without the
 * enterprise bit) of template 256 in set `set_id`. */
static __attribute__((unused)) void put_template(struct tb *t, uint16_t set_id,
                                                 const uint16_t (*f)[2], uint16_t n)
{
	size_t s = tb_set(t, set_id);
	tb_u16(t, 256);
	tb_u16(t, n);
	for (uint16_t i = 0; i < n; i++) {
		tb_u16(t, f[i][0]);
		tb_u16(t, f[i][1]);
	}
	tb_set_end(t, s);
}

/* A data set of template 256, layout A: 10.0.0.1 → 10.0.0.2, 1000 bytes,
 * 10 packets. */
static __attribute__((unused)) void put_data_a(struct tb *t)
{
	size_t s = tb_set(t, 256);
	tb_v4(t, 10, 0, 0, 1);
	tb_v4(t, 10, 0, 0, 2);
	tb_u32(t, 1000);
	tb_u32(t, 10);
	tb_set_end(t, s);
}

/* A data set of template 256, layout B: 192.0.2.10:443 → 198.51.100.20:
 * 55555, 123456789012 bytes, 4242 packets. */
static __attribute__((unused)) void put_data_b(struct tb *t)
{
	size_t s = tb_set(t, 256);
	tb_u64(t, 123456789012ULL);
	tb_u64(t, 4242);
	tb_u16(t, 443);
	tb_u16(t, 55555);
	tb_v4(t, 192, 0, 2, 10);
	tb_v4(t, 198, 51, 100, 20);
	tb_set_end(t, s);
}

static __attribute__((unused)) void assert_flow_a(const ng_flow *f)
{
	assert_string_equal(th_addr(f->src_addr), "10.0.0.1");
	assert_string_equal(th_addr(f->dst_addr), "10.0.0.2");
	assert_int_equal(f->bytes_raw, 1000);
	assert_int_equal(f->packets_raw, 10);
}

static __attribute__((unused)) void assert_flow_b(const ng_flow *f)
{
	assert_string_equal(th_addr(f->src_addr), "192.0.2.10");
	assert_string_equal(th_addr(f->dst_addr), "198.51.100.20");
	assert_int_equal(f->src_port, 443);
	assert_int_equal(f->dst_port, 55555);
	assert_int_equal(f->bytes_raw, 123456789012ULL);
	assert_int_equal(f->packets_raw, 4242);
}

/* v9 datagram of source ID `source` (RFC 3954 §5.1 header: uptime, secs,
 * seq) into *t, then template A or B (0: none) and a data set of layout A
 * or B (0: none), template first. */
static __attribute__((unused)) void rp_v9(struct tb *t, uint32_t up, uint32_t secs, uint32_t seq,
                                          uint32_t source, char tpl, char data)
{
	tb_v9(t, 2, up, secs, seq, source);
	if (tpl == 'A')
		put_template(t, 0, LAYOUT_A, 4);
	else if (tpl == 'B')
		put_template(t, 0, LAYOUT_B, 6);
	if (data == 'A')
		put_data_a(t);
	else if (data == 'B')
		put_data_b(t);
}

/* The same for IPFIX (RFC 7011 §3.1 header: export time, sequence = data
 * records sent before), observation domain `domain`. */
static __attribute__((unused)) void rp_ipfix(struct tb *t, uint32_t secs, uint32_t seq,
                                             uint32_t domain, char tpl, char data)
{
	tb_ipfix(t, secs, seq, domain);
	if (tpl == 'A')
		put_template(t, 2, LAYOUT_A, 4);
	else if (tpl == 'B')
		put_template(t, 2, LAYOUT_B, 6);
	if (data == 'A')
		put_data_a(t);
	else if (data == 'B')
		put_data_b(t);
	tb_ipfix_end(t);
}

#endif
