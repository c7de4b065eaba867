/*
 * test_sink_json.c — one flow record as one NDJSON line (sink/json.h).
 *
 * What is checked, and against what:
 *   - the empty record, byte for byte, against a line written from
 *     docs/fields.md (its field table, in order, with each type's zero:
 *     "1970-01-01T00:00:00.000Z", "::", "00:00:00:00:00:00", "", 0, and
 *     sampling_source "none"), not from the code under test;
 *   - a record with every field set, byte for byte, against a value
 *     written by hand for each field (numbers at the limits of their
 *     types, IPv4 and IPv6 addresses, MACs, times, sampling_source by name,
 *     strings that need escaping and that are not valid UTF-8);
 *   - the bound NG_JSON_LINE_MAX, with every field at its longest text and
 *     every string field NG_STR_MAX bytes that each take six bytes to
 *     escape, in a buffer of exactly that size (ASan catches a write past
 *     it);
 *   - that each line is JSON, with jansson (a parser that shares no code
 *     with nagare's writer), and that its strings decode back to the bytes
 *     interned.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef NG_HAVE_JANSSON
#include <jansson.h>
#endif

#include "core/field.h"
#include "core/strtab.h"
#include "sink/json.h"

/* The NDJSON line of a record with every field zero: see the top. */
static const char EMPTY_LINE[] =
    "{\"time_received\":\"1970-01-01T00:00:00.000Z\","
    "\"flow_start\":\"1970-01-01T00:00:00.000Z\","
    "\"flow_end\":\"1970-01-01T00:00:00.000Z\",\"bytes\":0,\"packets\":0,\"bytes_raw\":0,"
    "\"packets_raw\":0,\"exporter\":\"::\",\"src_addr\":\"::\",\"dst_addr\":\"::\","
    "\"next_hop\":\"::\",\"observation_domain\":0,\"sampling_rate\":0,\"in_if\":0,"
    "\"out_if\":0,\"src_as\":0,\"dst_as\":0,\"mpls_label\":0,\"sampler_id\":0,"
    "\"src_port\":0,\"dst_port\":0,\"src_vlan\":0,\"dst_vlan\":0,"
    "\"src_mac\":\"00:00:00:00:00:00\",\"dst_mac\":\"00:00:00:00:00:00\",\"protocol\":0,"
    "\"tcp_flags\":0,\"tos\":0,\"icmp_type\":0,\"icmp_code\":0,\"ip_version\":0,"
    "\"direction\":0,\"src_mask\":0,\"dst_mask\":0,\"sampling_source\":\"none\","
    "\"flow_version\":0,\"l2_bytes\":0,\"agent_addr\":\"::\",\"inner_src_addr\":\"::\","
    "\"inner_dst_addr\":\"::\",\"inner_protocol\":0,\"inner_src_port\":0,"
    "\"inner_dst_port\":0,\"discard_reason\":0,\"sample_kind\":0,\"exporter_name\":\"\","
    "\"in_if_name\":\"\",\"out_if_name\":\"\",\"src_country\":\"\",\"dst_country\":\"\","
    "\"src_continent\":\"\",\"dst_continent\":\"\",\"src_city\":\"\",\"dst_city\":\"\","
    "\"src_as_name\":\"\",\"dst_as_name\":\"\",\"as_source\":0,\"service\":\"\","
    "\"src_net\":\"\",\"dst_net\":\"\",\"src_net_role\":\"\",\"dst_net_role\":\"\","
    "\"src_net_site\":\"\",\"dst_net_site\":\"\",\"anomalies\":0,"
    "\"orig_start\":\"1970-01-01T00:00:00.000Z\",\"orig_end\":\"1970-01-01T00:00:00.000Z\","
    "\"sampling_raw\":0,\"mpls_label2\":0,\"mpls_label3\":0,\"mpls_label4\":0,"
    "\"mpls_label5\":0,\"mpls_label6\":0,\"mpls_label7\":0,\"mpls_label8\":0,"
    "\"mpls_label9\":0,\"mpls_label10\":0,\"mpls_depth\":0,\"application\":\"\",\"in_if_desc\":"
    "\"\","
    "\"out_if_desc\":\"\",\"in_if_speed\":0,\"out_if_speed\":0,"
    "\"exporter_group\":\"\",\"exporter_role\":\"\",\"exporter_site\":\"\","
    "\"exporter_region\":\"\",\"exporter_tenant\":\"\",\"in_if_boundary\":\"\","
    "\"out_if_boundary\":\"\",\"in_if_connectivity\":\"\",\"out_if_connectivity\":\"\","
    "\"in_if_provider\":\"\",\"out_if_provider\":\"\"}\n";

/* Formats `r` into a buffer of exactly NG_JSON_LINE_MAX bytes (so ASan
 * sees a write past the bound) and returns it NUL-terminated in a new
 * buffer; *len is what ng_json_format_flow returned. */
static char *format_line(const ng_flow *r, size_t *len)
{
	char *buf = malloc(NG_JSON_LINE_MAX);
	assert_non_null(buf);
	*len = ng_json_format_flow(r, buf);
	assert_true(*len >= 3 && *len <= NG_JSON_LINE_MAX);
	assert_int_equal(buf[0], '{');
	assert_int_equal(buf[*len - 2], '}');
	assert_int_equal(buf[*len - 1], '\n');
	assert_null(memchr(buf, '\n', *len - 1)); /* one line */
	char *s = malloc(*len + 1);
	assert_non_null(s);
	memcpy(s, buf, *len);
	s[*len] = 0;
	free(buf);
	return s;
}

#ifdef NG_HAVE_JANSSON
/* Parses the line as JSON (numbers as reals: jansson's integers are signed
 * 64-bit, ours go to UINT64_MAX).  Returns the object, which holds each
 * field's key once. */
static json_t *parse_line(const char *line)
{
	json_error_t err;
	json_t *o = json_loads(line, JSON_DECODE_INT_AS_REAL | JSON_REJECT_DUPLICATES, &err);
	if (!o)
		fail_msg("not JSON: %s at column %d", err.text, err.column);
	assert_true(json_is_object(o));
	assert_int_equal(json_object_size(o), NG_FIELD_COUNT);
	for (size_t i = 0; i < NG_FIELD_COUNT; i++)
		assert_non_null(json_object_get(o, ng_fields[i].name));
	return o;
}
#endif

static void test_empty_record(void **state)
{
	(void)state;
	ng_flow r;
	memset(&r, 0, sizeof r);
	size_t len;
	char *line = format_line(&r, &len);
	assert_string_equal(line, EMPTY_LINE);
	assert_int_equal(len, sizeof EMPTY_LINE - 1);
#ifdef NG_HAVE_JANSSON
	json_decref(parse_line(line));
#endif
	free(line);
}

static void set_addr(uint8_t a[16], const uint8_t *bytes)
{
	memcpy(a, bytes, 16);
}

/* 192.0.2.1 (IPv4-mapped), 2001:db8::1, ffff:…:ffff, 198.51.100.7,
 * 10.0.0.1 and fe80::1, byte by byte. */
static const uint8_t A_192_0_2_1[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 1};
static const uint8_t A_2001_DB8_1[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0,
                                         0,    0,    0,    0,    0, 0, 0, 1};
static const uint8_t A_ALL_ONES[16] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                       0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
static const uint8_t A_198_51_100_7[16] = {0, 0, 0,    0,    0,   0,  0,   0,
                                           0, 0, 0xff, 0xff, 198, 51, 100, 7};
static const uint8_t A_10_0_0_1[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1};
static const uint8_t A_FE80_1[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};

/* Every field of a record set, and the JSON value each must print as. */
struct expect {
	const char *name;
	const char *json;
};

static const struct expect FULL[] = {
    /* date -u -d '2026-11-30 12:00:00 UTC' +%s = 1796040000 */
    {"time_received", "\"2026-11-30T12:00:00.123Z\""},
    {"flow_start", "\"2026-11-30T00:00:00.000Z\""}, /* 1795996800000 */
    {"flow_end", "\"2024-02-29T23:59:59.999Z\""},   /* 1709251199999 */
    {"bytes", "18446744073709551615"},              /* UINT64_MAX */
    {"packets", "9007199254740993"},                /* 2^53 + 1: not a double */
    {"bytes_raw", "1234567890123"},
    {"packets_raw", "42"},
    {"exporter", "\"192.0.2.1\""},
    {"src_addr", "\"2001:db8::1\""},
    {"dst_addr", "\"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff\""},
    {"next_hop", "\"::\""},
    {"observation_domain", "4294967295"}, /* UINT32_MAX */
    {"sampling_rate", "1000"},
    {"in_if", "1"},
    {"out_if", "65536"},
    {"src_as", "64496"},
    {"dst_as", "4200000000"},
    {"mpls_label", "1048575"}, /* 2^20 - 1 */
    {"sampler_id", "65535"},   /* UINT16_MAX */
    {"src_port", "443"},
    {"dst_port", "771"},
    {"src_vlan", "4094"},
    {"dst_vlan", "1"},
    {"src_mac", "\"00:1a:2b:3c:4d:5e\""},
    {"dst_mac", "\"ff:ff:ff:ff:ff:ff\""},
    {"protocol", "6"},
    {"tcp_flags", "27"},
    {"tos", "255"}, /* UINT8_MAX */
    {"icmp_type", "3"},
    {"icmp_code", "13"},
    {"ip_version", "6"},
    {"direction", "1"},
    {"src_mask", "48"},
    {"dst_mask", "128"},
    {"sampling_source", "\"options\""},
    {"flow_version", "10"},
    {"l2_bytes", "1500"},
    {"agent_addr", "\"198.51.100.7\""},
    {"inner_src_addr", "\"10.0.0.1\""},
    {"inner_dst_addr", "\"fe80::1\""},
    {"inner_protocol", "17"},
    {"inner_src_port", "53"},
    {"inner_dst_port", "5353"},
    {"discard_reason", "256"},
    {"sample_kind", "1"},
    {"exporter_name", "\"edge-1\""},
    {"in_if_name", "\"Gi0/0/1 \\\"uplink\\\"\""},
    {"out_if_name", "\"tab\\there\""},
    {"src_country", "\"CH\""},
    {"dst_country", "\"JP\""},
    {"src_continent", "\"EU\""},
    {"dst_continent", "\"AS\""},
    {"src_city", "\"Z\xc3\xbcrich\""},            /* UTF-8 as it is */
    {"dst_city", "\"\xe6\x9d\xb1\xe4\xba\xac\""}, /* 東京 */
    {"src_as_name", "\"bad \\ufffd byte\""},      /* 0xff is not UTF-8 */
    {"dst_as_name", "\"back\\\\slash\""},
    {"as_source", "3"},
    {"service", "\"https\""},
    {"src_net", "\"private\""},
    {"dst_net", "\"line\\nbreak\""},
    {"src_net_role", "\"ctl\\u0001\""},
    {"dst_net_role", "\"del\\u007f\""},
    {"src_net_site", "\"site\""},
    {"dst_net_site", "\"\""}, /* string ID 0 */
    {"anomalies", "65535"},
    {"orig_start", "\"1970-01-01T00:00:00.000Z\""},
    {"orig_end", "\"2106-02-07T06:28:15.000Z\""},
    {"sampling_raw", "3892510720"},
    {"mpls_label2", "16005"},
    {"mpls_label3", "0"},
    {"mpls_label4", "0"},
    {"mpls_label5", "0"},
    {"mpls_label6", "0"},
    {"mpls_label7", "0"},
    {"mpls_label8", "0"},
    {"mpls_label9", "0"},
    {"mpls_label10", "1048575"},
    {"mpls_depth", "10"},
    {"application", "\"ms-teams\""},
    {"in_if_desc", "\"Transit: Cogent [1234]\""},
    {"out_if_desc", "\"\""},
    {"in_if_speed", "10000000000"},
    {"out_if_speed", "18446744073709551615"},
    {"exporter_group", "\"edge\""},
    {"exporter_role", "\"\""},
    {"exporter_site", "\"fra\""},
    {"exporter_region", "\"\""},
    {"exporter_tenant", "\"\""},
    {"in_if_boundary", "\"external\""},
    {"out_if_boundary", "\"internal\""},
    {"in_if_connectivity", "\"transit\""},
    {"out_if_connectivity", "\"\""},
    {"in_if_provider", "\"Cogent\""},
    {"out_if_provider", "\"\""},
};

static ng_flow full_record(void)
{
	ng_flow r;
	memset(&r, 0, sizeof r);
	r.time_received = UINT64_C(1796040000123);
	r.flow_start = UINT64_C(1795996800000);
	r.flow_end = UINT64_C(1709251199999);
	r.bytes = UINT64_MAX;
	r.packets = (UINT64_C(1) << 53) + 1;
	r.bytes_raw = UINT64_C(1234567890123);
	r.packets_raw = 42;
	set_addr(r.exporter, A_192_0_2_1);
	set_addr(r.src_addr, A_2001_DB8_1);
	set_addr(r.dst_addr, A_ALL_ONES);
	r.observation_domain = UINT32_MAX;
	r.sampling_rate = 1000;
	r.in_if = 1;
	r.out_if = 65536;
	r.src_as = 64496;
	r.dst_as = 4200000000u;
	r.mpls_label = (1u << 20) - 1;
	r.sampler_id = UINT16_MAX;
	r.src_port = 443;
	r.dst_port = 771;
	r.src_vlan = 4094;
	r.dst_vlan = 1;
	memcpy(r.src_mac, "\x00\x1a\x2b\x3c\x4d\x5e", 6);
	memset(r.dst_mac, 0xff, 6);
	r.protocol = 6;
	r.tcp_flags = 27;
	r.tos = UINT8_MAX;
	r.icmp_type = 3;
	r.icmp_code = 13;
	r.ip_version = 6;
	r.direction = 1;
	r.src_mask = 48;
	r.dst_mask = 128;
	r.sampling_source = NG_SAMPLING_OPTIONS;
	r.flow_version = 10;
	r.l2_bytes = 1500;
	set_addr(r.agent_addr, A_198_51_100_7);
	set_addr(r.inner_src_addr, A_10_0_0_1);
	set_addr(r.inner_dst_addr, A_FE80_1);
	r.inner_protocol = 17;
	r.inner_src_port = 53;
	r.inner_dst_port = 5353;
	r.discard_reason = 256;
	r.sample_kind = 1;
	r.exporter_name = ng_intern_cstr("edge-1");
	r.in_if_name = ng_intern_cstr("Gi0/0/1 \"uplink\"");
	r.out_if_name = ng_intern_cstr("tab\there");
	r.src_country = ng_intern_cstr("CH");
	r.dst_country = ng_intern_cstr("JP");
	r.src_continent = ng_intern_cstr("EU");
	r.dst_continent = ng_intern_cstr("AS");
	r.src_city = ng_intern_cstr("Z\xc3\xbcrich");
	r.dst_city = ng_intern_cstr("\xe6\x9d\xb1\xe4\xba\xac");
	r.src_as_name = ng_intern_cstr("bad \xff byte");
	r.dst_as_name = ng_intern_cstr("back\\slash");
	r.as_source = 3;
	r.service = ng_intern_cstr("https");
	r.src_net = ng_intern_cstr("private");
	r.dst_net = ng_intern_cstr("line\nbreak");
	r.src_net_role = ng_intern_cstr("ctl\x01");
	r.dst_net_role = ng_intern_cstr("del\x7f");
	r.src_net_site = ng_intern_cstr("site");
	r.dst_net_site = 0;
	r.anomalies = UINT16_MAX;
	r.orig_start = 0;
	r.orig_end = UINT64_C(4294967295000);
	r.sampling_raw = UINT32_C(3892510720);
	r.mpls_label2 = 16005;
	r.mpls_label10 = 1048575;
	r.mpls_depth = 10;
	r.application = ng_intern_cstr("ms-teams");
	r.in_if_desc = ng_intern_cstr("Transit: Cogent [1234]");
	r.in_if_speed = UINT64_C(10000000000);
	r.out_if_speed = UINT64_MAX;
	r.exporter_group = ng_intern_cstr("edge");
	r.exporter_site = ng_intern_cstr("fra");
	r.in_if_boundary = ng_intern_cstr("external");
	r.out_if_boundary = ng_intern_cstr("internal");
	r.in_if_connectivity = ng_intern_cstr("transit");
	r.in_if_provider = ng_intern_cstr("Cogent");
	return r;
}

/* The expected JSON value of field `name` in FULL. */
static const char *expected(const char *name)
{
	for (size_t i = 0; i < sizeof FULL / sizeof FULL[0]; i++)
		if (!strcmp(FULL[i].name, name))
			return FULL[i].json;
	fail_msg("no expected value for field %s", name);
	return NULL;
}

static void test_full_record(void **state)
{
	(void)state;
	assert_int_equal(sizeof FULL / sizeof FULL[0], NG_FIELD_COUNT);
	ng_flow r = full_record();
	/* the line: every field in table order, key and value */
	size_t cap = 8192, n = 0;
	char *want = malloc(cap);
	assert_non_null(want);
	want[n++] = '{';
	for (size_t i = 0; i < NG_FIELD_COUNT; i++) {
		n += (size_t)snprintf(want + n, cap - n, "%s\"%s\":%s", i ? "," : "",
		                      ng_fields[i].name, expected(ng_fields[i].name));
		assert_true(n < cap - 2);
	}
	want[n++] = '}';
	want[n++] = '\n';
	want[n] = 0;
	size_t len;
	char *line = format_line(&r, &len);
	assert_string_equal(line, want);
	assert_int_equal(len, n);
	/* each value alone, through ng_json_format_value */
	for (size_t i = 0; i < NG_FIELD_COUNT; i++) {
		char buf[NG_JSON_STR_MAX];
		size_t vlen = ng_json_format_value(&ng_fields[i], &r, buf);
		assert_string_equal(buf, expected(ng_fields[i].name));
		assert_int_equal(vlen, strlen(buf));
	}
#ifdef NG_HAVE_JANSSON
	json_t *o = parse_line(line);
	assert_string_equal(json_string_value(json_object_get(o, "in_if_name")),
	                    "Gi0/0/1 \"uplink\"");
	assert_string_equal(json_string_value(json_object_get(o, "dst_net")), "line\nbreak");
	assert_string_equal(json_string_value(json_object_get(o, "src_city")), "Z\xc3\xbcrich");
	assert_string_equal(json_string_value(json_object_get(o, "src_as_name")),
	                    "bad \xef\xbf\xbd byte"); /* U+FFFD */
	assert_string_equal(json_string_value(json_object_get(o, "dst_net_role")), "del\x7f");
	assert_true(json_is_number(json_object_get(o, "bytes")));
	assert_true(json_real_value(json_object_get(o, "packets_raw")) == 42.0);
	json_decref(o);
#endif
	free(line);
	free(want);
}

/* sampling_source prints the name of enum ng_sampling_source, and
 * "unknown" past its end. */
static void test_sampling_source(void **state)
{
	(void)state;
	static const char *const names[] = {
	    "\"none\"", "\"record\"", "\"options\"", "\"header\"", "\"sflow\"", "\"config\"",
	};
	assert_int_equal(sizeof names / sizeof names[0], NG_SAMPLING_SOURCE_COUNT);
	const ng_field *f = &ng_fields[NG_F_SAMPLING_SOURCE];
	assert_string_equal(f->name, "sampling_source");
	ng_flow r;
	memset(&r, 0, sizeof r);
	char buf[64];
	for (unsigned s = 0; s < NG_SAMPLING_SOURCE_COUNT; s++) {
		r.sampling_source = (uint8_t)s;
		ng_json_format_value(f, &r, buf);
		assert_string_equal(buf, names[s]);
	}
	r.sampling_source = NG_SAMPLING_SOURCE_COUNT;
	ng_json_format_value(f, &r, buf);
	assert_string_equal(buf, "\"unknown\"");
	r.sampling_source = 255;
	ng_json_format_value(f, &r, buf);
	assert_string_equal(buf, "\"unknown\"");
}

/* Interns `n` bytes of `c` (NG_STR_MAX of them must be kept). */
static uint32_t long_string(char c, size_t n)
{
	char s[NG_STR_MAX + 1];
	assert_true(n <= sizeof s);
	memset(s, c, n);
	uint32_t id = ng_intern(s, n);
	assert_true(id != 0);
	assert_int_equal(ng_str_len(id), NG_STR_MAX);
	return id;
}

/*
 * The longest line: every number at its type's maximum, every address
 * ffff:…:ffff (the longest RFC 5952 text), times with an eight-digit year
 * (the longest ng_time_format writes), sampling_source "unknown", and every
 * string field NG_STR_MAX bytes that escape to six bytes each (\u0001 for a
 * control character, \ufffd for a byte that is not UTF-8).
 */
static void test_line_max(void **state)
{
	(void)state;
	ng_flow r;
	memset(&r, 0xff, sizeof r);
	/* 3e18 ms is 95068185-07-09T05:20:00.000Z: 28 characters */
	r.time_received = r.flow_start = r.flow_end = UINT64_C(3000000000000000000);
	uint32_t ctl = long_string('\x01', NG_STR_MAX);
	uint32_t bad = long_string('\xff', NG_STR_MAX + 1); /* cut to NG_STR_MAX */
	size_t nstr = 0;
	for (size_t i = 0; i < NG_FIELD_COUNT; i++) {
		const ng_field *f = &ng_fields[i];
		if (f->type != NG_FT_STR)
			continue;
		uint32_t id = nstr++ % 2 ? bad : ctl;
		assert_int_equal(f->size, sizeof id);
		memcpy((char *)&r + f->offset, &id, sizeof id);
	}
	/* what NG_JSON_LINE_MAX counts on: at most 32 string fields */
	assert_true(nstr > 0 && nstr <= 32);

	size_t len;
	char *line = format_line(&r, &len); /* in exactly NG_JSON_LINE_MAX bytes */
	/* and the rest under 3 KiB */
	size_t quoted = 2 + 6 * (size_t)NG_STR_MAX;
	assert_true(len - nstr * quoted < 3072);
	assert_non_null(strstr(line, "\"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff\""));
	assert_non_null(strstr(line, "\"bytes\":18446744073709551615,"));
	assert_non_null(strstr(line, "\"flow_start\":\"95068185-07-09T05:20:00.000Z\""));
	assert_non_null(strstr(line, "\"sampling_source\":\"unknown\""));

	/* each value alone fits the buffer json.h promises */
	for (size_t i = 0; i < NG_FIELD_COUNT; i++) {
		const ng_field *f = &ng_fields[i];
		size_t cap = f->type == NG_FT_STR ? NG_JSON_STR_MAX : 64;
		char *buf = malloc(cap);
		assert_non_null(buf);
		size_t vlen = ng_json_format_value(f, &r, buf);
		assert_true(vlen < cap);
		assert_int_equal(vlen, strlen(buf));
		if (f->type == NG_FT_STR)
			assert_int_equal(vlen, quoted);
		free(buf);
	}

	/* ng_json_write_flows writes the same line (from its own buffer) */
	char *mem = NULL;
	size_t mlen = 0;
	FILE *out = open_memstream(&mem, &mlen);
	assert_non_null(out);
	assert_int_equal(ng_json_write_flows(out, &r, 1), 0);
	fclose(out);
	assert_int_equal(mlen, len);
	assert_memory_equal(mem, line, len);
	free(mem);

#ifdef NG_HAVE_JANSSON
	json_t *o = parse_line(line);
	char want_ctl[NG_STR_MAX + 1], want_bad[3 * NG_STR_MAX + 1];
	memset(want_ctl, '\x01', NG_STR_MAX);
	want_ctl[NG_STR_MAX] = 0;
	for (size_t i = 0; i < NG_STR_MAX; i++)
		memcpy(want_bad + 3 * i, "\xef\xbf\xbd", 3);
	want_bad[3 * NG_STR_MAX] = 0;
	nstr = 0;
	for (size_t i = 0; i < NG_FIELD_COUNT; i++) {
		const ng_field *f = &ng_fields[i];
		if (f->type != NG_FT_STR)
			continue;
		const char *s = json_string_value(json_object_get(o, f->name));
		assert_non_null(s);
		assert_string_equal(s, nstr++ % 2 ? want_bad : want_ctl);
	}
	json_decref(o);
#endif
	free(line);
}

/* ng_json_write_flows: one line per record, in order; a stream that
 * refuses the write is reported. */
static void test_write_flows(void **state)
{
	(void)state;
	ng_flow r[2];
	memset(&r[0], 0, sizeof r[0]);
	r[1] = full_record();
	size_t l0, l1;
	char *a = format_line(&r[0], &l0), *b = format_line(&r[1], &l1);
	char *mem = NULL;
	size_t mlen = 0;
	FILE *out = open_memstream(&mem, &mlen);
	assert_non_null(out);
	assert_int_equal(ng_json_write_flows(out, r, 2), 0);
	assert_int_equal(ng_json_write_flows(out, r, 0), 0); /* nothing */
	fclose(out);
	assert_int_equal(mlen, l0 + l1);
	assert_memory_equal(mem, a, l0);
	assert_memory_equal(mem + l0, b, l1);
	free(mem);
	free(a);
	free(b);

	FILE *ro = fopen("/dev/null", "r"); /* open for reading: fwrite fails */
	assert_non_null(ro);
	assert_int_equal(ng_json_write_flows(ro, r, 2), -1);
	fclose(ro);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_empty_record),    cmocka_unit_test(test_full_record),
	    cmocka_unit_test(test_sampling_source), cmocka_unit_test(test_line_max),
	    cmocka_unit_test(test_write_flows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
