/*
 * test_decode_sflow.c — sFlow v5 decoder and sampled-header parser on
 * datagrams and frames built here byte by byte from the layouts of
 * sflow.org "sFlow Version 5" and the RFCs cited beside each case:
 * sequence gaps (datagrams per sub-agent, samples per source_id),
 * malformed and truncated input counted by reason, headers cut short
 * decoded as far as they go, MPLS, GRE, IPv6 extension headers,
 * fragments.  (Real captures are checked against tshark in
 * test_net_sflow_corpus.c.)
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
#include "decode/pkt_header.h"

/* ---- a tiny XDR writer ---- */

struct buf {
	uint8_t b[2048];
	size_t n;
};

static void w32(struct buf *b, uint32_t v)
{
	b->b[b->n++] = (uint8_t)(v >> 24);
	b->b[b->n++] = (uint8_t)(v >> 16);
	b->b[b->n++] = (uint8_t)(v >> 8);
	b->b[b->n++] = (uint8_t)v;
}

static void wbytes(struct buf *b, const void *p, size_t n)
{
	memcpy(b->b + b->n, p, n);
	b->n += n;
	while (b->n % 4)
		b->b[b->n++] = 0;
}

/* Ethernet + IPv4 + TCP frame: 10.0.0.1:1234 → 10.0.0.2:80, total length
 * 1000, flags SYN|ACK. */
static size_t frame_v4_tcp(uint8_t *f)
{
	static const uint8_t fr[] = {
	    0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0x08, 0x00,
	    0x45, 0x00, 0x03, 0xe8, 0,    0,    0x40, 0,    64,   6,    0,    0,    10,   0,
	    0,    1,    10,   0,    0,    2,    0x04, 0xd2, 0x00, 0x50, 0,    0,    0,    0,
	    0,    0,    0,    0,    0x50, 0x12, 0,    0,    0,    0,    0,    0,
	};
	memcpy(f, fr, sizeof fr);
	return sizeof fr;
}

/* Datagram: IPv4 agent 192.0.2.1, sub-agent `sub`, sequence `seq`, one
 * compact flow sample (seq `sseq`, source 0:5, rate 100, input 5, output
 * 7) with a sampled header record holding the `hlen` bytes at fr, whose
 * header_length says `claimed` (frame length 1018). */
static size_t dgram_header(uint8_t *out, uint32_t sub, uint32_t seq, uint32_t sseq,
                           const uint8_t *fr, size_t hlen, uint32_t claimed)
{
	struct buf b = {.n = 0};
	w32(&b, 5);
	w32(&b, 1);
	const uint8_t agent[4] = {192, 0, 2, 1};
	wbytes(&b, agent, 4);
	w32(&b, sub);
	w32(&b, seq);
	w32(&b, 1000); /* uptime */
	w32(&b, 1);    /* samples */
	w32(&b, 1);    /* 0:1 flow_sample */
	size_t lenpos = b.n;
	w32(&b, 0);
	w32(&b, sseq);
	w32(&b, 5);   /* source_id 0:5 */
	w32(&b, 100); /* rate */
	w32(&b, 12345);
	w32(&b, 0);
	w32(&b, 5);
	w32(&b, 7);
	w32(&b, 1); /* records */
	w32(&b, 1); /* sampled_header */
	w32(&b, 16 + (uint32_t)((hlen + 3) & ~3u));
	w32(&b, 1); /* ethernet */
	w32(&b, 1018);
	w32(&b, 4);
	w32(&b, claimed);
	wbytes(&b, fr, hlen);
	uint32_t slen = (uint32_t)(b.n - lenpos - 4);
	b.b[lenpos] = (uint8_t)(slen >> 24);
	b.b[lenpos + 1] = (uint8_t)(slen >> 16);
	b.b[lenpos + 2] = (uint8_t)(slen >> 8);
	b.b[lenpos + 3] = (uint8_t)slen;
	memcpy(out, b.b, b.n);
	return b.n;
}

/* dgram_header() with the first `hlen` bytes of frame_v4_tcp. */
static size_t dgram_flow(uint8_t *out, uint32_t sub, uint32_t seq, uint32_t sseq, size_t hlen)
{
	uint8_t fr[128];
	size_t flen = frame_v4_tcp(fr);
	if (hlen > flen)
		hlen = flen;
	return dgram_header(out, sub, seq, sseq, fr, hlen, (uint32_t)hlen);
}

struct stats {
	ng_exporter_stats s[8];
	size_t n;
};

static void grab(const ng_exporter_stats *s, void *arg)
{
	struct stats *st = arg;
	if (st->n < 8)
		st->s[st->n++] = *s;
}

static const ng_exporter_stats *dom_stats(ng_decoder *d, uint32_t domain, struct stats *st)
{
	st->n = 0;
	ng_decoder_foreach_stats(d, grab, st);
	for (size_t i = 0; i < st->n; i++)
		if (st->s[i].domain == domain)
			return &st->s[i];
	return NULL;
}

static size_t decode(ng_decoder *d, const uint8_t *p, size_t n, ng_flow_batch *out)
{
	ng_datagram dg = {.data = p, .len = n, .time_received = 1764504000000ULL};
	const uint8_t src[4] = {198, 51, 100, 9};
	ng_addr_from_v4(dg.exporter, src);
	return ng_decode(d, &dg, out);
}

static void test_flow_sample_fields(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch out = {0};
	uint8_t p[2048];
	size_t n = dgram_flow(p, 3, 10, 20, 128);
	assert_int_equal(decode(d, p, n, &out), 1);
	const ng_flow *f = &out.flows[0];
	char a[NG_ADDR_STRLEN];
	assert_string_equal(ng_addr_format(f->agent_addr, a), "192.0.2.1");
	assert_string_equal(ng_addr_format(f->exporter, a), "198.51.100.9");
	assert_string_equal(ng_addr_format(f->src_addr, a), "10.0.0.1");
	assert_int_equal(f->observation_domain, 3);
	assert_int_equal(f->src_port, 1234);
	assert_int_equal(f->dst_port, 80);
	assert_int_equal(f->tcp_flags, 0x12);
	assert_int_equal(f->bytes_raw, 1000);
	assert_int_equal(f->bytes, 100000);
	assert_int_equal(f->packets, 100);
	assert_int_equal(f->packets_raw, 1);
	assert_int_equal(f->l2_bytes, 101800);
	assert_int_equal(f->in_if, 5);
	assert_int_equal(f->out_if, 7);
	assert_int_equal(f->direction, NG_DIR_INGRESS); /* source 5 = input */
	assert_int_equal(f->flow_version, 0x50);
	assert_int_equal(f->flow_start, 1764504000000ULL);
	ng_flow_batch_free(&out);
	ng_decoder_free(d);
}

/* Datagram sequence per sub-agent → lost datagrams; sample sequence per
 * source_id → lost samples.  Sub-agents count separately. */
static void test_sequences(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch out = {0};
	uint8_t p[2048];
	struct stats st;
	decode(d, p, dgram_flow(p, 1, 100, 500, 128), &out);
	decode(d, p, dgram_flow(p, 1, 101, 501, 128), &out);
	decode(d, p, dgram_flow(p, 1, 104, 510, 128), &out); /* 2 datagrams, 8 samples lost */
	decode(d, p, dgram_flow(p, 2, 7, 1, 128), &out);     /* another sub-agent: its own */
	decode(d, p, dgram_flow(p, 2, 8, 2, 128), &out);
	const ng_exporter_stats *s = dom_stats(d, 1, &st);
	assert_non_null(s);
	assert_int_equal(s->packets, 3);
	assert_int_equal(s->records, 3);
	assert_int_equal(s->lost, 2);
	assert_int_equal(s->lost_samples, 8);
	assert_int_equal(s->version, 0x50);
	s = dom_stats(d, 2, &st);
	assert_int_equal(s->lost, 0);
	assert_int_equal(s->lost_samples, 0);
	ng_flow_batch_free(&out);
	ng_decoder_free(d);
}

/* A header cut by the agent inside the IP header and inside TCP: the
 * record is still produced with what was there, the cut counted. */
static void test_header_cut(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch out = {0};
	uint8_t p[2048];
	struct stats st;
	decode(d, p, dgram_flow(p, 0, 1, 1, 30), &out); /* 14 + 16 bytes of IPv4 */
	decode(d, p, dgram_flow(p, 0, 2, 2, 40), &out); /* IPv4 whole, 6 bytes of TCP */
	assert_int_equal(out.n, 2);
	assert_int_equal(out.flows[0].bytes_raw, 1000); /* total length is in the first 4 */
	assert_int_equal(out.flows[0].ip_version, 4);
	assert_int_equal(out.flows[0].src_port, 0);
	assert_int_equal(out.flows[1].protocol, 6);
	char a[NG_ADDR_STRLEN];
	assert_string_equal(ng_addr_format(out.flows[1].dst_addr, a), "10.0.0.2");
	/* the ports are the first 4 of the 6 TCP bytes: kept (issue 18) */
	assert_int_equal(out.flows[1].src_port, 1234);
	assert_int_equal(out.flows[1].dst_port, 80);
	assert_int_equal(out.flows[1].tcp_flags, 0);
	const ng_exporter_stats *s = dom_stats(d, 0, &st);
	assert_int_equal(s->errors[NG_DERR_PKT_HEADER_CUT_IP], 1);
	assert_int_equal(s->errors[NG_DERR_PKT_HEADER_CUT_L4], 1);
	ng_flow_batch_free(&out);
	ng_decoder_free(d);
}

/*
 * Huawei switches cut the sampled header of a frame with an 802.1Q tag
 * after the TCP ports: "Wireshark can decode only part of TCP header and
 * it can retrieve only source and destination port" (fastnetmon issue
 * 990, "sFlow agent on Huawei sends too short packets when traffic
 * includes vlans", https://github.com/pavel-odintsov/fastnetmon/issues/990).
 * Shaped so: Ethernet, one tag (VLAN 100), IPv4, the first 8 bytes of
 * TCP; then the same frame cut inside the tag, and one whose
 * header_length claims 128 bytes in a record holding 48.  What is there
 * is decoded, each cut counted by where it fell, nothing read past the
 * record.
 */
static void test_huawei_vlan_header_cut(void **state)
{
	(void)state;
	static const uint8_t fr[] = {
	    0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0x81, 0x00,
	    0x20, 0x64, 0x08, 0x00, /* 802.1Q: PCP 1, VLAN 100, then IPv4 */
	    0x45, 0x00, 0x05, 0xdc, 0,    0,    0x40, 0,    64,   6,    0,    0,    10,   1,
	    2,    3,    10,   4,    5,    6,    0xc3, 0x50, 0x01, 0xbb, 0x12, 0x34, 0x56, 0x78};
	_Static_assert(sizeof fr == 46, "14 + 4 + 20 + 8 bytes");
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch out = {0};
	uint8_t p[2048];
	struct stats st;
	decode(d, p, dgram_header(p, 0, 1, 1, fr, sizeof fr, sizeof fr), &out);
	decode(d, p, dgram_header(p, 0, 2, 2, fr, 16, 16), &out); /* cut inside the tag */
	/* header_length 128, the record holds 48: decoded up to 48, no further */
	uint8_t big[48] = {0};
	memcpy(big, fr, sizeof fr);
	decode(d, p, dgram_header(p, 0, 3, 3, big, sizeof big, 128), &out);
	assert_int_equal(out.n, 3);
	const ng_flow *f = &out.flows[0];
	assert_int_equal(f->src_vlan, 100);
	assert_int_equal(f->ip_version, 4);
	char a[NG_ADDR_STRLEN];
	assert_string_equal(ng_addr_format(f->src_addr, a), "10.1.2.3");
	assert_string_equal(ng_addr_format(f->dst_addr, a), "10.4.5.6");
	assert_int_equal(f->protocol, 6);
	assert_int_equal(f->src_port, 50000);
	assert_int_equal(f->dst_port, 443);
	assert_int_equal(f->tcp_flags, 0); /* not in the 8 bytes */
	assert_int_equal(f->bytes_raw, 1500);
	assert_int_equal(f->sampling_rate, 100);
	f = &out.flows[1];
	assert_int_equal(f->src_mac[5], 0xbb);
	assert_int_equal(f->dst_mac[0], 0x00);
	assert_int_equal(f->src_vlan, 0); /* the tag's TCI was cut */
	assert_int_equal(f->ip_version, 0);
	assert_int_equal(f->bytes_raw, 1018); /* no IP length: the frame length */
	f = &out.flows[2];
	assert_int_equal(f->src_port, 50000);
	assert_int_equal(f->src_vlan, 100);
	const ng_exporter_stats *s = dom_stats(d, 0, &st);
	assert_int_equal(s->errors[NG_DERR_PKT_HEADER_CUT_L4], 2);
	assert_int_equal(s->errors[NG_DERR_PKT_HEADER_CUT_L2], 1);
	assert_int_equal(s->errors[NG_DERR_PKT_HEADER_CUT_IP], 0);
	assert_int_equal(s->errors[NG_DERR_SFLOW_RECORD_BAD], 1);
	assert_int_equal(s->records, 3);
	ng_flow_batch_free(&out);
	ng_decoder_free(d);
}

/* A sampled header's MPLS label stack goes into the record whole: three
 * labels (16005, 130931, explicit null 0 with S), then IPv4 UDP. */
static void test_sflow_mpls_stack(void **state)
{
	(void)state;
	static const uint8_t fr[] = {
	    0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0x88, 0x47,
	    0x03, 0xe8, 0x50, 0x40, /* 16005 << 12, TTL 64 */
	    0x1f, 0xf7, 0x30, 0x40, /* 130931 << 12 */
	    0x00, 0x00, 0x01, 0x40, /* 0, S */
	    0x45, 0x00, 0x00, 0x40, 0,    0,    0,    0,    64,   17,   0,    0,    10,   0,
	    0,    1,    10,   0,    0,    2,    0x13, 0x88, 0x00, 0x35, 0,    0,    0,    0};
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch out = {0};
	uint8_t p[2048];
	assert_int_equal(decode(d, p, dgram_header(p, 0, 1, 1, fr, sizeof fr, sizeof fr), &out), 1);
	assert_int_equal(out.flows[0].mpls_label, 16005);
	assert_int_equal(out.flows[0].mpls_label2, 130931);
	assert_int_equal(out.flows[0].mpls_label3, 0);
	assert_int_equal(out.flows[0].mpls_depth, 3);
	assert_int_equal(out.flows[0].dst_port, 53);
	ng_flow_batch_free(&out);
	ng_decoder_free(d);
}

/* Every prefix of a good datagram: never a crash, always a counted error
 * or a record, never a record from a datagram cut inside its sample. */
static void test_truncated_datagrams(void **state)
{
	(void)state;
	uint8_t p[2048];
	size_t n = dgram_flow(p, 0, 1, 1, 128);
	for (size_t cut = 0; cut < n; cut++) {
		ng_decoder *d = ng_decoder_new(NULL);
		ng_flow_batch out = {0};
		uint8_t *q = malloc(cut ? cut : 1);
		memcpy(q, p, cut);
		size_t got = decode(d, q, cut, &out);
		struct stats st;
		st.n = 0;
		ng_decoder_foreach_stats(d, grab, &st);
		uint64_t errs = 0;
		for (size_t i = 0; i < st.n; i++)
			for (int e = 0; e < NG_DERR_COUNT; e++)
				errs += st.s[i].errors[e];
		assert_int_equal(got, 0);
		assert_true(errs >= 1);
		free(q);
		ng_flow_batch_free(&out);
		ng_decoder_free(d);
	}
}

/* Bad agent address type: SFLOW_HEADER_SHORT. */
static void test_bad_agent_type(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	ng_flow_batch out = {0};
	uint8_t p[2048];
	size_t n = dgram_flow(p, 0, 1, 1, 128);
	p[7] = 3;
	assert_int_equal(decode(d, p, n, &out), 0);
	struct stats st;
	const ng_exporter_stats *s = dom_stats(d, 0, &st);
	assert_int_equal(s->errors[NG_DERR_SFLOW_HEADER_SHORT], 1);
	ng_flow_batch_free(&out);
	ng_decoder_free(d);
}

/* ---- header parser ---- */

/* RFC 3032 MPLS: two labels (100, then 200 with S=1), then IPv4 UDP. */
static void test_pkt_mpls(void **state)
{
	(void)state;
	uint8_t f[128] = {0};
	memset(f, 0xaa, 12);
	f[12] = 0x88, f[13] = 0x47;
	f[14] = 0x00, f[15] = 0x06, f[16] = 0x40, f[17] = 0x40; /* 100 << 12, TTL 64 */
	f[18] = 0x00, f[19] = 0x0c, f[20] = 0x81, f[21] = 0x40; /* 200 << 12 | S */
	uint8_t *ip = f + 22;
	ip[0] = 0x45, ip[2] = 0, ip[3] = 60, ip[9] = 17;
	ip[12] = 10, ip[15] = 1, ip[16] = 10, ip[19] = 2;
	ip[20] = 0x13, ip[21] = 0x88, ip[22] = 0x00, ip[23] = 0x35; /* 5000 → 53 */
	ng_pkt_info pi;
	assert_int_equal(ng_pkt_parse(f, 22 + 28, NG_PKT_ETHERNET, &pi), NG_PKT_OK);
	assert_int_equal(pi.mpls_label, 100);
	assert_int_equal(pi.mpls_depth, 2); /* the whole stack (issue 18) */
	assert_int_equal(pi.mpls[0], 100);
	assert_int_equal(pi.mpls[1], 200);
	assert_int_equal(pi.ip.version, 4);
	assert_int_equal(pi.ip.ip_length, 60);
	assert_int_equal(pi.ip.src_port, 5000);
	assert_int_equal(pi.ip.dst_port, 53);
}

/* RFC 8200: IPv6 with Hop-by-Hop (8 bytes) and Fragment (first fragment)
 * headers, then TCP; and a non-first fragment (no ports). */
static void test_pkt_ipv6_ext(void **state)
{
	(void)state;
	uint8_t p[128] = {0};
	p[0] = 0x60;
	p[4] = 0, p[5] = 100; /* payload length */
	p[6] = 0;             /* Hop-by-Hop */
	p[8] = 0x20, p[9] = 0x01, p[23] = 1;
	p[24] = 0x20, p[25] = 0x01, p[39] = 2;
	p[40] = 44, p[41] = 0; /* → Fragment, 8 bytes */
	p[48] = 6;             /* → TCP */
	p[56] = 0x01, p[57] = 0xbb, p[58] = 0xc0, p[59] = 0x00;
	p[69] = 0x02; /* SYN */
	ng_pkt_info pi;
	assert_int_equal(ng_pkt_parse(p, 76, NG_PKT_IPV6, &pi), NG_PKT_OK);
	assert_int_equal(pi.ip.version, 6);
	assert_int_equal(pi.ip.ip_length, 140);
	assert_int_equal(pi.ip.protocol, 6);
	assert_int_equal(pi.ip.src_port, 443);
	assert_int_equal(pi.ip.dst_port, 49152);
	assert_int_equal(pi.ip.tcp_flags, 0x02);
	p[50] = 0x05; /* fragment offset 160 */
	assert_int_equal(ng_pkt_parse(p, 76, NG_PKT_IPV6, &pi), NG_PKT_OK);
	assert_int_equal(pi.ip.fragment, 1);
	assert_int_equal(pi.ip.protocol, 6);
	assert_int_equal(pi.ip.src_port, 0);
	/* cut inside the Fragment header */
	assert_int_equal(ng_pkt_parse(p, 52, NG_PKT_IPV6, &pi), NG_PKT_CUT_IP);
	assert_int_equal(pi.ip.version, 6);
}

/* RFC 2784/2890 GRE with a key, carrying IPv4 ICMP echo (type 8). */
static void test_pkt_gre(void **state)
{
	(void)state;
	uint8_t p[128] = {0};
	p[0] = 0x45, p[3] = 60, p[9] = 47;
	p[12] = 192, p[13] = 0, p[14] = 2, p[15] = 1;
	p[16] = 192, p[17] = 0, p[18] = 2, p[19] = 2;
	uint8_t *g = p + 20;
	g[0] = 0x20, g[2] = 0x08, g[3] = 0x00; /* K bit, IPv4 */
	uint8_t *in = g + 8;
	in[0] = 0x45, in[3] = 32, in[9] = 1;
	in[12] = 10, in[15] = 5, in[16] = 10, in[19] = 6;
	in[20] = 8;
	ng_pkt_info pi;
	assert_int_equal(ng_pkt_parse(p, 20 + 8 + 24, NG_PKT_IPV4, &pi), NG_PKT_OK);
	assert_int_equal(pi.tunnel, 2);
	assert_int_equal(pi.ip.protocol, 47);
	assert_int_equal(pi.inner.version, 4);
	assert_int_equal(pi.inner.protocol, 1);
	assert_int_equal(pi.inner.icmp_type, 8);
	char a[NG_ADDR_STRLEN];
	assert_string_equal(ng_addr_format(pi.inner.src, a), "10.0.0.5");
	/* IHL 4: malformed */
	p[0] = 0x44;
	assert_int_equal(ng_pkt_parse(p, 52, NG_PKT_IPV4, &pi), NG_PKT_BAD);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_flow_sample_fields),
	    cmocka_unit_test(test_sequences),
	    cmocka_unit_test(test_header_cut),
	    cmocka_unit_test(test_truncated_datagrams),
	    cmocka_unit_test(test_bad_agent_type),
	    cmocka_unit_test(test_pkt_mpls),
	    cmocka_unit_test(test_pkt_ipv6_ext),
	    cmocka_unit_test(test_pkt_gre),
	    cmocka_unit_test(test_huawei_vlan_header_cut),
	    cmocka_unit_test(test_sflow_mpls_stack),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
