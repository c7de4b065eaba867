/*
 * test_query_filter.c — the nfdump-syntax filter.
 *
 * Valid filters are evaluated over random records (as a column batch, the
 * way a scan hands them over) and compared with a predicate written in C
 * in this file for every record; each filter must select some records and
 * reject others, so no case passes vacuously.  Bad filters must fail with
 * the expected message and the caret at the expected column.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/addr.h"
#include "core/field.h"
#include "core/strtab.h"
#include "query/filter.h"
#include "test_rng.h"

enum { N = 4000 };
static ng_flow rows[N];

static uint64_t rng = 0x1234567887654321ull;
static uint64_t rnd(void)
{
	return ts_xorshift64(&rng);
}

static const char *addr_pool[] = {
    "10.0.0.1",     "10.0.0.2",    "10.1.2.3",    "192.0.2.1",     "192.0.2.200",
    "198.51.100.7", "2001:db8::1", "2001:db8::2", "2001:db8:1::5", "fe80::1",
};
#define POOL (sizeof addr_pool / sizeof addr_pool[0])
static const uint16_t port_pool[] = {22, 53, 80, 443, 1024, 8080, 50000, 65535};
static const uint8_t proto_pool[] = {6, 17, 1, 58, 47};

static void set_addr(uint8_t *a, const char *s)
{
	assert_true(ng_addr_parse(s, a));
}

static void make_rows(void)
{
	for (size_t i = 0; i < N; i++) {
		ng_flow *r = &rows[i];
		memset(r, 0, sizeof *r);
		r->flow_start = 1764460800000ull + i;
		r->flow_end = r->flow_start + rnd() % 5000;
		set_addr(r->src_addr, addr_pool[rnd() % POOL]);
		set_addr(r->dst_addr, addr_pool[rnd() % POOL]);
		set_addr(r->exporter, rnd() % 2 ? "192.0.2.9" : "192.0.2.10");
		r->src_port = port_pool[rnd() % 8];
		r->dst_port = port_pool[rnd() % 8];
		r->protocol = proto_pool[rnd() % 5];
		r->src_as = (uint32_t)(rnd() % 4 ? 0 : 15169 + rnd() % 3);
		r->dst_as = (uint32_t)(rnd() % 4 ? 64512 : 13335);
		r->in_if = (uint32_t)(rnd() % 5);
		r->out_if = (uint32_t)(rnd() % 5);
		r->packets = 1 + rnd() % 2000;
		r->bytes = r->packets * (40 + rnd() % 1460);
		r->tos = (uint8_t)(rnd() % 4 * 8);
		r->dst_vlan = (uint16_t)(rnd() % 3);
		r->tcp_flags = (uint8_t)(rnd() % 64);
		r->src_mask = (uint8_t)(rnd() % 3 * 8 + 16);
		r->mpls_label = (uint32_t)(rnd() % 3 * 1000);
		r->mpls_label3 = (uint32_t)(rnd() % 3 * 16);
		r->direction = (uint8_t)(rnd() % 2);
		set_addr(r->next_hop, rnd() % 2 ? "192.0.2.254" : "10.255.0.1");
		static const uint8_t macs[3][6] = {{0, 0x11, 0x22, 0x33, 0x44, 0x55},
		                                   {2, 0, 0, 0, 0, 1},
		                                   {0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff}};
		memcpy(r->src_mac, macs[rnd() % 3], 6);
		memcpy(r->dst_mac, macs[rnd() % 3], 6);
		static const char *cc[] = {"JP", "US", "DE", ""};
		static const char *asn[] = {"GOOGLE", "Google Fiber Inc.", "Cloudflare, Inc.", ""};
		static const char *svc[] = {"https", "http", "domain", "ssh"};
		static const char *nets[] = {"office-tokyo", "dc", "private", "Office-Osaka"};
		r->src_country = ng_intern_cstr(cc[rnd() % 4]);
		r->dst_country = ng_intern_cstr(cc[rnd() % 4]);
		r->dst_as_name = ng_intern_cstr(asn[rnd() % 4]);
		r->service = ng_intern_cstr(svc[rnd() % 4]);
		r->src_net = ng_intern_cstr(nets[rnd() % 4]);
		r->application = ng_intern_cstr(i % 3 ? "ms-teams" : "");
		if (r->protocol == 1 || r->protocol == 58) {
			r->icmp_type = (uint8_t)(rnd() % 2 ? 8 : 0);
			r->icmp_code = (uint8_t)(rnd() % 2);
		} else if (rnd() % 4 == 0) {
			r->icmp_type = 8; /* garbage outside ICMP: icmp-type must ignore it */
		}
		/* the collector's flags: bit 0 (time) on every 7th, bit 1 (sampling)
		 * on every 11th, bit 2 (counters) on every 13th, bit 3 (export_time)
		 * on every 17th */
		r->anomalies = (uint16_t)((i % 7 == 0) | (i % 11 == 0) << 1 | (i % 13 == 0) << 2 |
		                          (i % 17 == 0) << 3);
	}
}

/* ---- reference predicates ---------------------------------------------- */

static bool is(const uint8_t *a, const char *s)
{
	uint8_t b[16];
	set_addr(b, s);
	return !memcmp(a, b, 16);
}

static bool in_net(const uint8_t *a, const char *cidr)
{
	uint8_t n[16];
	unsigned len;
	assert_true(ng_prefix_parse(cidr, n, &len));
	/* independent of ng_addr_in_prefix: compare bit by bit */
	for (unsigned b = 0; b < len; b++) {
		unsigned byte = b / 8, bit = 7 - b % 8;
		if (((a[byte] >> bit) & 1) != ((n[byte] >> bit) & 1))
			return false;
	}
	return true;
}

static bool v4(const uint8_t *a)
{
	static const uint8_t p[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	return !memcmp(a, p, 12);
}

typedef bool (*pred)(const ng_flow *r);
#define P(name, expr)                                                                              \
	static bool name(const ng_flow *r)                                                         \
	{                                                                                          \
		return (expr);                                                                     \
	}

P(p_tcp, r->protocol == 6)
P(p_udp_or_icmp, r->protocol == 17 || r->protocol == 1)
P(p_icmp6, r->protocol == 58)
P(p_proto47, r->protocol == 47)
P(p_host, is(r->src_addr, "10.0.0.1") || is(r->dst_addr, "10.0.0.1"))
P(p_src_host, is(r->src_addr, "192.0.2.1"))
P(p_dst_ip6, is(r->dst_addr, "2001:db8::2"))
P(p_net8, in_net(r->src_addr, "10.0.0.0/8") || in_net(r->dst_addr, "10.0.0.0/8"))
P(p_src_net24, in_net(r->src_addr, "192.0.2.0/24"))
P(p_dst_net6, in_net(r->dst_addr, "2001:db8::/48"))
P(p_port443, r->src_port == 443 || r->dst_port == 443)
P(p_dst_port_gt, r->dst_port > 1024)
P(p_src_port_le, r->src_port <= 80)
P(p_dst_port_ne, r->dst_port != 53)
P(p_inet, v4(r->src_addr))
P(p_inet6, !v4(r->src_addr))
P(p_as, r->src_as == 15169 || r->dst_as == 15169)
P(p_dst_as, r->dst_as == 13335)
P(p_in_if, r->in_if == 3)
P(p_out_if, r->out_if == 2)
P(p_exporter, is(r->exporter, "192.0.2.9"))
P(p_bytes_gt, r->bytes > 1000000)
P(p_bytes_k, r->bytes >= 500000)
P(p_packets_lt, r->packets < 100)
P(p_and, r->protocol == 6 && r->dst_port == 443)
P(p_or_not, !(r->protocol == 6) || r->dst_port == 53)
P(p_paren, (r->protocol == 17 || r->protocol == 6) &&
               !(in_net(r->src_addr, "10.0.0.0/8") || in_net(r->dst_addr, "10.0.0.0/8")))
P(p_prec, r->protocol == 1 || (r->protocol == 6 && r->src_port == 22))
P(p_notnot, !!(r->protocol == 6))
P(p_field_tos, r->tos == 16)
P(p_field_vlan, r->dst_vlan >= 1)
P(p_complex,
  (is(r->exporter, "192.0.2.9") && r->in_if == 3) || (r->packets > 1000 && !v4(r->dst_addr)))
P(p_any, r != NULL)
P(p_exp_ne, !is(r->exporter, "192.0.2.9"))
static uint64_t dur(const ng_flow *r)
{
	return r->flow_end - r->flow_start;
}
static bool mac_is(const uint8_t *m, unsigned a, unsigned f)
{
	return m[0] == a && m[5] == f;
}
P(p_proto_name, r->protocol == 47)
P(p_ip_in, is(r->src_addr, "10.0.0.1") || is(r->dst_addr, "10.0.0.1") ||
               is(r->src_addr, "2001:db8::2") || is(r->dst_addr, "2001:db8::2") ||
               in_net(r->src_addr, "198.51.100.0/24") || in_net(r->dst_addr, "198.51.100.0/24"))
P(p_src_ip_in, is(r->src_addr, "192.0.2.1") || is(r->src_addr, "fe80::1"))
P(p_net_mask, in_net(r->dst_addr, "192.0.2.0/24"))
P(p_port_in, r->src_port == 22 || r->dst_port == 22 || r->src_port == 8080 || r->dst_port == 8080)
P(p_dst_port_in, r->dst_port == 53 || r->dst_port == 443)
P(p_as_in, r->src_as == 15170 || r->dst_as == 15170 || r->src_as == 13335 || r->dst_as == 13335)
P(p_if, r->in_if == 4 || r->out_if == 4)
P(p_flags_sa, (r->tcp_flags & 0x12) == 0x12)
/* nfdump(1): "flags S and not flags AFRPU" is a bare SYN; nfdump 1.7.1
 * agrees (tests/e2e/test_query_nfdump.sh) */
P(p_flags_only_s, (r->tcp_flags & 2) && !(r->tcp_flags & 0x3d))
P(p_not_paren_flags, !(r->tcp_flags & 0x12))
P(p_dscp, (r->tos >> 2) == 4)
P(p_duration, dur(r) > 2500)
P(p_pps, (dur(r) ? r->packets * 1000 / dur(r) : 0) > 500)
P(p_bps, (dur(r) ? r->bytes * 8000 / dur(r) : 0) >= 1000000)
P(p_bpp, r->bytes / r->packets < 500)
P(p_flows_and, r->protocol == 6)
P(p_src_mask, r->src_mask == 24)
P(p_next_ip, is(r->next_hop, "192.0.2.254"))
P(p_mpls, r->mpls_label == 1000)
P(p_mpls3, r->mpls_label3 >= 16)
P(p_src_mac, mac_is(r->src_mac, 0xaa, 0xff))
P(p_mac, mac_is(r->src_mac, 2, 1) || mac_is(r->dst_mac, 2, 1))
P(p_icmp_type, (r->protocol == 1 || r->protocol == 58) && r->icmp_type == 8)
P(p_icmp_code, (r->protocol == 1 || r->protocol == 58) && r->icmp_code == 1)
P(p_flowdir, r->direction == 1)
P(p_anomaly_time, (r->anomalies & NG_ANOMALY_TIME) != 0)
P(p_anomaly_any, r->anomalies != 0)
P(p_anomaly_none, !(r->anomalies & NG_ANOMALY_TIME))
P(p_anomaly_both, (r->anomalies & 3) == 3)
P(p_anomaly_sampling, (r->anomalies & NG_ANOMALY_SAMPLING) != 0)
P(p_anomaly_counters, (r->anomalies & NG_ANOMALY_COUNTERS) != 0)
P(p_anomaly_export, (r->anomalies & NG_ANOMALY_EXPORT_TIME) != 0)
P(p_comment, r->protocol == 6 && r->dst_port == 443)
P(p_router, is(r->exporter, "192.0.2.10"))
P(p_proto_ne, r->protocol != 6)
static bool str_is(uint32_t id, const char *s)
{
	return !strcmp(ng_str(id), s);
}
P(p_src_country, str_is(r->src_country, "JP"))
P(p_country, str_is(r->src_country, "DE") || str_is(r->dst_country, "DE"))
P(p_asname, str_is(r->dst_as_name, "GOOGLE") || str_is(r->dst_as_name, "Google Fiber Inc."))
P(p_asname_eq, str_is(r->dst_as_name, "GOOGLE"))
P(p_service, str_is(r->service, "https"))
P(p_app, str_is(r->application, "ms-teams"))
P(p_netname, str_is(r->src_net, "office-tokyo") || str_is(r->src_net, "Office-Osaka"))
P(p_country_ne, !str_is(r->dst_country, "US"))
P(p_asname_quoted, str_is(r->dst_as_name, "Cloudflare, Inc."))
P(p_country_empty, str_is(r->src_country, ""))

static const struct {
	const char *text;
	pred fn;
	ng_colset columns; /* empty: not checked */
} valid[] = {
    {"proto tcp", p_tcp, NG_COLSET(NG_F_PROTOCOL)},
    {"PROTO UDP or proto ICMP", p_udp_or_icmp, NG_COLSET(NG_F_PROTOCOL)},
    {"proto icmp6", p_icmp6, {{0}}},
    {"proto 47", p_proto47, {{0}}},
    {"host 10.0.0.1", p_host, NG_COLSET(NG_F_SRC_ADDR, NG_F_DST_ADDR)},
    {"src host 192.0.2.1", p_src_host, NG_COLSET(NG_F_SRC_ADDR)},
    {"dst ip 2001:db8::2", p_dst_ip6, NG_COLSET(NG_F_DST_ADDR)},
    {"net 10.0.0.0/8", p_net8, {{0}}},
    {"src net 192.0.2.0/24", p_src_net24, {{0}}},
    {"dst net 2001:db8::/48", p_dst_net6, {{0}}},
    {"port 443", p_port443, NG_COLSET(NG_F_SRC_PORT, NG_F_DST_PORT)},
    {"dst port > 1024", p_dst_port_gt, NG_COLSET(NG_F_DST_PORT)},
    {"src port <= 80", p_src_port_le, {{0}}},
    {"dst port != 53", p_dst_port_ne, {{0}}},
    {"inet", p_inet, {{0}}},
    {"inet6", p_inet6, {{0}}},
    {"as 15169", p_as, NG_COLSET(NG_F_SRC_AS, NG_F_DST_AS)},
    {"dst as 13335", p_dst_as, {{0}}},
    {"in if 3", p_in_if, NG_COLSET(NG_F_IN_IF)},
    {"out if 2", p_out_if, NG_COLSET(NG_F_OUT_IF)},
    {"exporter 192.0.2.9", p_exporter, NG_COLSET(NG_F_EXPORTER)},
    {"bytes > 1M", p_bytes_gt, NG_COLSET(NG_F_BYTES)},
    {"bytes >= 500k", p_bytes_k, {{0}}},
    {"packets < 100", p_packets_lt, NG_COLSET(NG_F_PACKETS)},
    {"proto tcp and dst port 443", p_and, NG_COLSET(NG_F_PROTOCOL, NG_F_DST_PORT)},
    {"not proto tcp || dst port 53", p_or_not, {{0}}},
    {"(proto udp or proto tcp) && !net 10.0.0.0/8", p_paren, {{0}}},
    {"proto icmp or proto tcp and src port 22", p_prec, {{0}}},
    {"not not proto tcp", p_notnot, {{0}}},
    {"tos 16", p_field_tos, NG_COLSET(NG_F_TOS)},
    {"dst_vlan >= 1", p_field_vlan, NG_COLSET(NG_F_DST_VLAN)},
    {"(exporter 192.0.2.9 and in if 3) or (packets > 1k and not dst net ::ffff:0:0/96)",
     p_complex,
     {{0}}},
    {"exporter != 192.0.2.9", p_exp_ne, NG_COLSET(NG_F_EXPORTER)},
    {"", p_any, {{0}}},
    {"proto GRE", p_proto47, {{0}}},
    {"proto 47", p_proto_name, {{0}}},
    {"ip in [10.0.0.1 2001:db8::2, 198.51.100.0/24]", p_ip_in,
     NG_COLSET(NG_F_SRC_ADDR, NG_F_DST_ADDR)},
    {"src host in [ 192.0.2.1 , fe80::1 ]", p_src_ip_in, NG_COLSET(NG_F_SRC_ADDR)},
    {"dst net 192.0.2.0 255.255.255.0", p_net_mask, NG_COLSET(NG_F_DST_ADDR)},
    {"port in [22 8080]", p_port_in, {{0}}},
    {"dst port in [443,53]", p_dst_port_in, NG_COLSET(NG_F_DST_PORT)},
    {"as in [15170 13335]", p_as_in, {{0}}},
    {"if 4", p_if, NG_COLSET(NG_F_IN_IF, NG_F_OUT_IF)},
    {"flags SA", p_flags_sa, NG_COLSET(NG_F_TCP_FLAGS)},
    {"flags as", p_flags_sa, {{0}}},
    {"flags S and not flags AFRPU", p_flags_only_s, {{0}}},
    {"not (flags SA)", p_not_paren_flags, {{0}}},
    {"dscp 4", p_dscp, NG_COLSET(NG_F_TOS)},
    {"duration > 2500", p_duration, {{0}}},
    {"pps > 500", p_pps, {{0}}},
    {"bps >= 1M", p_bps, {{0}}},
    {"bpp < 500", p_bpp, {{0}}},
    {"flows 1 and proto tcp", p_flows_and, {{0}}},
    {"src mask 24", p_src_mask, NG_COLSET(NG_F_SRC_MASK)},
    {"next ip 192.0.2.254", p_next_ip, NG_COLSET(NG_F_NEXT_HOP)},
    {"mpls label 1000", p_mpls, NG_COLSET(NG_F_MPLS_LABEL)},
    {"mpls label3 >= 16", p_mpls3, NG_COLSET(NG_F_MPLS_LABEL3)},
    {"src mac aa:bb:cc:dd:ee:ff", p_src_mac, NG_COLSET(NG_F_SRC_MAC)},
    {"mac 02:00:00:00:00:01", p_mac, {{0}}},
    {"in src mac AA:BB:CC:DD:EE:FF", p_src_mac, {{0}}},
    {"icmp-type 8", p_icmp_type, {{0}}},
    {"icmp-code 1", p_icmp_code, {{0}}},
    {"flowdir egress", p_flowdir, {{0}}},
    {"anomaly time", p_anomaly_time, NG_COLSET(NG_F_ANOMALIES)},
    {"anomaly any", p_anomaly_any, NG_COLSET(NG_F_ANOMALIES)},
    {"not anomaly time", p_anomaly_none, {{0}}},
    {"anomaly 3", p_anomaly_both, {{0}}},
    {"anomaly sampling", p_anomaly_sampling, NG_COLSET(NG_F_ANOMALIES)},
    {"anomaly counters", p_anomaly_counters, NG_COLSET(NG_F_ANOMALIES)},
    {"anomaly export_time", p_anomaly_export, NG_COLSET(NG_F_ANOMALIES)},
    {"anomalies > 0", p_anomaly_any, {{0}}},
    {"# web traffic\nproto tcp # the protocol\n and dst port 443", p_comment, {{0}}},
    {"router ip 192.0.2.10", p_router, {{0}}},
    {"proto != tcp", p_proto_ne, {{0}}},
    {"PROTO TCP AND DST PORT 443", p_comment, {{0}}},
    {"src country JP", p_src_country, NG_COLSET(NG_F_SRC_COUNTRY)},
    {"src country jp", p_src_country, {{0}}},
    {"country DE", p_country, NG_COLSET(NG_F_SRC_COUNTRY, NG_F_DST_COUNTRY)},
    {"dst asname google", p_asname, NG_COLSET(NG_F_DST_AS_NAME)},
    {"dst asname = google", p_asname_eq, {{0}}},
    {"service https", p_service, NG_COLSET(NG_F_SERVICE)},
    {"app ms-teams", p_app, NG_COLSET(NG_F_APPLICATION)},
    {"application = \"ms-teams\"", p_app, NG_COLSET(NG_F_APPLICATION)},
    {"src net-name office", p_netname, NG_COLSET(NG_F_SRC_NET)},
    {"dst_country != US", p_country_ne, {{0}}},
    {"dst asname ~ \"cloudflare, inc\"", p_asname_quoted, {{0}}},
    {"src country \"\"", p_country_empty, {{0}}},
};

static void fill_batch(ng_column_batch *b, uint8_t *cols[NG_FIELD_COUNT])
{
	b->n = N;
	for (size_t f = 0; f < NG_FIELD_COUNT; f++) {
		cols[f] = malloc(N * ng_fields[f].size);
		for (size_t i = 0; i < N; i++)
			memcpy(cols[f] + i * ng_fields[f].size,
			       ng_field_ptr(&ng_fields[f], &rows[i]), ng_fields[f].size);
		b->col[f] = cols[f];
	}
}

static void test_valid_filters(void **state)
{
	(void)state;
	make_rows();
	ng_column_batch b = {0};
	uint8_t *cols[NG_FIELD_COUNT];
	fill_batch(&b, cols);
	uint8_t *match = malloc(N);
	for (size_t k = 0; k < sizeof valid / sizeof valid[0]; k++) {
		char err[512];
		size_t col = 999;
		ng_filter *f = ng_filter_parse(valid[k].text, err, sizeof err, &col);
		if (!f)
			fail_msg("'%s' did not parse: %s", valid[k].text, err);
		if (!ng_colset_empty(valid[k].columns) &&
		    !ng_colset_equal(ng_filter_columns(f), valid[k].columns))
			fail_msg("'%s' reads other columns than the table says", valid[k].text);
		size_t cnt = ng_filter_eval(f, &b, match);
		size_t want = 0;
		for (size_t i = 0; i < N; i++) {
			bool exp = valid[k].fn(&rows[i]);
			want += exp;
			if (match[i] != exp)
				fail_msg("'%s': row %zu gives %d, reference %d", valid[k].text, i,
				         match[i], exp);
			/* the single-record path agrees with the batch path */
			if (i % 97 == 0 && ng_filter_match_flow(f, &rows[i]) != exp)
				fail_msg("'%s': match_flow disagrees on row %zu", valid[k].text, i);
		}
		assert_int_equal(cnt, want);
		if (valid[k].fn != p_any && (want == 0 || want == N))
			fail_msg("'%s' selects %zu of %d rows: a vacuous case", valid[k].text, want,
			         N);
		ng_filter_free(f);
	}
	free(match);
	for (size_t f = 0; f < NG_FIELD_COUNT; f++)
		free(cols[f]);
}

static const struct {
	const char *text;
	const char *msg;
	size_t col;
} invalid[] = {
    {"port", "expected a port number after 'port'", 4},
    {"src port http", "expected a port number after 'port'", 9},
    {"dst port > x", "expected a port number after 'port'", 11},
    {"port 70000", "a port number 70000 out of range", 5},
    {"proto", "expected a protocol", 5},
    {"proto tcpx", "expected a protocol", 6},
    {"host 10.0.0.256", "expected an IPv4 or IPv6 address after 'host'", 5},
    {"src host", "expected an IPv4 or IPv6 address after 'src host'", 8},
    {"host 10.0.0.0/8", "expected an IPv4 or IPv6 address after 'host'", 5},
    {"net 10.0.0.0/33", "expected a network A.B.C.D/LEN", 4},
    {"dst net 2001:db8::/129", "expected a network", 8},
    {"src foo 1", "expected host, ip, net, port, as, mask, vlan, mac or a field name after 'src'",
     4},
    {"frobnicate 1", "unknown filter keyword 'frobnicate'", 0},
    {"proto tcp and", "expected a filter term", 13},
    {"proto tcp or or proto udp", "expected a filter term, not 'or'", 13},
    {"(proto tcp", "expected ')' to close the '('", 10},
    {"proto tcp)", "unexpected ')'", 9},
    {"proto tcp port 80", "expected 'and', 'or' or the end of the filter, not 'port'", 10},
    {"in 3", "expected 'if' after 'in'", 3},
    {"out if", "expected an interface index after 'out if'", 6},
    {"bytes > 1T", "expected a number (optionally with k, M or G) after 'bytes'", 8},
    {"packets >", "expected a number", 9},
    {"exporter x", "expected an IPv4 or IPv6 address after 'exporter'", 9},
    {"as -5", "expected an AS number after 'as'", 3},
    {"not", "expected a filter term", 3},
    {"proto tcp & port 80", "expected", 10},
    {"srcmac 1", "expected a MAC address XX:XX:XX:XX:XX:XX after 'srcmac'", 7},
    {"nexthop > 10.0.0.1", "addresses compare with = or != only", 10},
    {"ip in [10.0.0.1", "expected ']' to close the list", 15},
    {"ip in 10.0.0.1", "expected '[' to start a list of addresses after 'in'", 6},
    {"ip in [10.0.0.1 foo]", "expected an address or a network ADDR/LEN in the list", 16},
    {"ip in []", "expected an address or a network", 7},
    {"port in [80 70000]", "a port number 70000 out of range", 12},
    /* past 2^64 - 1, and longer than any number: refused, not read as
     * UINT64_MAX or as the digits that fit a buffer ("…080" as 0) */
    {"port 99999999999999999999", "expected a port number after 'port'", 5},
    {"port 000000000000000000000000000000000000000000000000000000000000000000080",
     "expected a port number after 'port'", 5},
    {"bytes > 18446744073709551616", "expected a number", 8},
    {"port in [80 http]", "expected a port number in the list", 12},
    {"net 10.0.0.0 255.0.255.0", "expected a network A.B.C.D/LEN, A.B.C.D MASK", 4},
    {"flags SAQ", "expected TCP flags (some of FSRPAUEC, or X for all) after 'flags', not 'Q'", 6},
    {"flags", "expected TCP flags", 5},
    {"dscp 64", "a DSCP value 64 out of range (at most 63)", 5},
    {"next as 3", "the next adjacent AS is not stored by nagare", 5},
    {"prev as 3", "the previous adjacent AS is not stored", 5},
    {"next 10.0.0.1", "expected 'ip' or 'as' after 'next'", 5},
    {"src mac 00:11:22:33:44", "expected a MAC address XX:XX:XX:XX:XX:XX after 'src mac'", 8},
    {"mac > 00:11:22:33:44:55", "MAC addresses compare with = or != only", 6},
    {"duration > 1.5", "expected a duration in ms after 'duration'", 11},
    {"bpp >", "expected a number", 5},
    {"icmp-type 300", "an ICMP type 300 out of range", 10},
    {"mpls 5", "expected 'label' or 'label1' .. 'label10' after 'mpls'", 5},
    {"mpls label11 5", "expected 'label' or 'label1' .. 'label10' after 'mpls'", 5},
    {"flowdir up", "expected ingress, egress, 0 or 1 after 'flowdir'", 8},
    {"anomaly bytes",
     "expected time, sampling, counters, export_time, any or flag bits 1 to 65535 after "
     "'anomaly'",
     8},
    {"router 10.0.0.1", "expected 'ip' after 'router'", 7},
    {"out bytes > 5", "reverse-direction counters ('out bytes') are not stored", 4},
    {"proto tcp and # nothing after the comment\n", "expected a filter term", 42},
    {"proto tcp and 'x", "unterminated quote", 14},
    {"proto nosuchproto", "a name of /etc/protocols", 6},
    {"src exporter 10.0.0.1", "expected host, ip, net, port, as, mask, vlan, mac", 4},
    {"host 10.0.0.1 and (port 80 or", "expected a filter term", 29},
    {"tos ~ 3", "expected a number after 'tos'", 4},
    {"src country", "expected a name after 'srccountry'", 11},
    {"src country > JP", "strings compare with =, != or ~ (contains) only", 12},
    {"dst asname 'google", "unterminated quote", 11},
    {"proto tcp\n  and prot udp",
     "unknown filter keyword 'prot' (line 2)\n  "
     "  and prot udp\n        ^",
     16},
};

/* Sorted distinct values of column f over rows (sz bytes each). */
static size_t cmp_sz;
static int cmp_val(const void *a, const void *b)
{
	return memcmp(a, b, cmp_sz);
}

/* Field f of every row as codes into a dictionary of its distinct values
 * (ascending: any order of entries serves), as a scan gives a RANK column
 * to a filter.  dict and code are allocated; free them. */
static uint32_t make_codes(size_t f, uint8_t **dict, uint32_t **code)
{
	const size_t sz = ng_fields[f].size;
	uint8_t *d = malloc(N * sz);
	for (size_t i = 0; i < N; i++)
		memcpy(d + i * sz, ng_field_ptr(&ng_fields[f], &rows[i]), sz);
	cmp_sz = sz;
	qsort(d, N, sz, cmp_val);
	size_t k = 0;
	for (size_t i = 0; i < N; i++)
		if (k == 0 || memcmp(d + (k - 1) * sz, d + i * sz, sz))
			memmove(d + k++ * sz, d + i * sz, sz);
	uint32_t *c = malloc(N * sizeof *c);
	for (size_t i = 0; i < N; i++) {
		const uint8_t *e =
		    bsearch(ng_field_ptr(&ng_fields[f], &rows[i]), d, k, sz, cmp_val);
		assert_non_null(e);
		c[i] = (uint32_t)((size_t)(e - d) / sz);
	}
	*dict = d;
	*code = c;
	return (uint32_t)k;
}

/*
 * The valid filters again, with every column the filter allows given as
 * dictionary codes (ng_filter_code_columns): the same rows pass as by the
 * reference; a second batch with new stamps (another segment's
 * dictionary) and a third with the stamps unchanged (answers kept) agree.
 * Strings and computed terms keep their columns as values.
 */
static void test_valid_filters_on_codes(void **state)
{
	(void)state;
	make_rows();
	ng_column_batch b = {0};
	uint8_t *cols[NG_FIELD_COUNT];
	fill_batch(&b, cols);
	static ng_batch_codes bc;
	uint8_t *dict[NG_FIELD_COUNT] = {0};
	uint32_t *code[NG_FIELD_COUNT] = {0};
	for (size_t f = 0; f < NG_FIELD_COUNT; f++) {
		bc.k[f] = make_codes(f, &dict[f], &code[f]);
		bc.dict[f] = dict[f];
	}
	uint8_t *match = malloc(N);
	size_t coded_filters = 0;
	for (size_t k = 0; k < sizeof valid / sizeof valid[0]; k++) {
		ng_filter *f = ng_filter_parse(valid[k].text, NULL, 0, NULL);
		assert_non_null(f);
		const ng_colset cc = ng_filter_code_columns(f);
		assert_true(ng_colset_subset(cc, ng_filter_columns(f)));
		coded_filters += !ng_colset_empty(cc);
		ng_column_batch cb = b;
		for (size_t c = 0; c < NG_FIELD_COUNT; c++) {
			bc.code[c] = ng_colset_has(cc, c) ? code[c] : NULL;
			if (ng_colset_has(cc, c))
				cb.col[c] = NULL;
		}
		cb.codes = &bc;
		ng_filter_ctx *ctx = ng_filter_ctx_new(f);
		for (int round = 0; round < 3; round++) {
			for (size_t c = 0; c < NG_FIELD_COUNT; c++)
				bc.stamp[c] = round == 0 ? c + 1 : 1000 + c;
			size_t cnt = ng_filter_eval_ctx(f, ctx, &cb, match), want = 0;
			for (size_t i = 0; i < N; i++) {
				bool exp = valid[k].fn(&rows[i]);
				want += exp;
				if (match[i] != exp)
					fail_msg("'%s' on codes (round %d): row %zu gives %d, "
					         "reference %d",
					         valid[k].text, round, i, match[i], exp);
			}
			assert_int_equal(cnt, want);
		}
		ng_filter_ctx_free(ctx);
		ng_filter_free(f);
	}
	/* most of the table tests one column's values */
	assert_true(coded_filters > sizeof valid / sizeof valid[0] / 2);
	free(match);
	for (size_t f = 0; f < NG_FIELD_COUNT; f++) {
		free(cols[f]);
		free(dict[f]);
		free(code[f]);
	}
}

static void test_invalid_filters(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof invalid / sizeof invalid[0]; k++) {
		char err[512] = "";
		size_t col = 999;
		ng_filter *f = ng_filter_parse(invalid[k].text, err, sizeof err, &col);
		if (f)
			fail_msg("'%s' parsed but should not", invalid[k].text);
		if (!strstr(err, invalid[k].msg))
			fail_msg("'%s': message '%s' lacks '%s'", invalid[k].text, err,
			         invalid[k].msg);
		if (col != invalid[k].col)
			fail_msg("'%s': column %zu, expected %zu", invalid[k].text, col,
			         invalid[k].col);
		if (strchr(invalid[k].text, '\n')) {
			/* several lines: the line of the fault is quoted */
			if (!strstr(err, "(line "))
				fail_msg("'%s': no line number in:\n%s", invalid[k].text, err);
			continue;
		}
		/* the message quotes the filter and puts the caret under the column */
		char want[600];
		snprintf(want, sizeof want, "\n  %s\n  %*s^", invalid[k].text, (int)invalid[k].col,
		         "");
		if (!strstr(err, want))
			fail_msg("'%s': no quoted filter with a caret at %zu in:\n%s",
			         invalid[k].text, invalid[k].col, err);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_valid_filters),
	    cmocka_unit_test(test_valid_filters_on_codes),
	    cmocka_unit_test(test_invalid_filters),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
