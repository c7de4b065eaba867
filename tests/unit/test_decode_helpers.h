/*
 * test_decode_helpers.h — test-only helpers for the decoder tests: read
 * raw payload files and pull UDP payloads out of pcap/pcapng captures
 * (Ethernet, 802.1Q, IPv4/IPv6, UDP) without linking the net layer.
 *
 * Header-only (static functions) so each test program stays one file.
 */
#ifndef NG_TEST_DECODE_HELPERS_H
#define NG_TEST_DECODE_HELPERS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/addr.h"
#include "decode/decoder.h"

struct th_pkt {
	uint8_t *data;
	size_t len;
	uint8_t src[16];
	uint16_t sport;
	uint64_t ts_ms;
};

struct th_pkts {
	struct th_pkt *p;
	size_t n;
};

/* The decoder's counters summed over every exporter and domain
 * (ng_decoder_totals), by value. */
static __attribute__((unused)) ng_exporter_stats th_totals(const ng_decoder *d)
{
	ng_exporter_stats s;
	ng_decoder_totals(d, &s);
	return s;
}

static __attribute__((unused)) const char *th_testdata(void)
{
	return getenv("NG_TESTDATA");
}

/* NG_TESTDATA/captures/rel, or NULL when NG_TESTDATA is unset. */
static __attribute__((unused)) char *th_path(const char *rel)
{
	const char *root = th_testdata();
	if (!root)
		return NULL;
	size_t n = strlen(root) + strlen(rel) + 16;
	char *s = malloc(n);
	snprintf(s, n, "%s/captures/%s", root, rel);
	return s;
}

static __attribute__((unused)) uint8_t *th_read(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *p = malloc(n > 0 ? (size_t)n : 1);
	if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
		free(p);
		p = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return p;
}

static __attribute__((unused)) uint32_t th_u32(const uint8_t *p, int le)
{
	return le ? (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	                (uint32_t)p[3] << 24
	          : (uint32_t)p[3] | (uint32_t)p[2] << 8 | (uint32_t)p[1] << 16 |
	                (uint32_t)p[0] << 24;
}

/* Adds the UDP payload of one Ethernet frame (if it is one) to `out`. */
static __attribute__((unused)) void th_frame(struct th_pkts *out, const uint8_t *f, size_t n,
                                             uint64_t ts_ms)
{
	size_t o = 12;
	if (n < 14)
		return;
	uint16_t et = (uint16_t)(f[o] << 8 | f[o + 1]);
	while ((et == 0x8100 || et == 0x88a8) && n >= o + 6) {
		o += 4;
		et = (uint16_t)(f[o] << 8 | f[o + 1]);
	}
	o += 2;
	uint8_t src[16];
	size_t l4;
	if (et == 0x0800 && n >= o + 20 && f[o + 9] == 17) {
		ng_addr_from_v4(src, f + o + 12);
		l4 = o + (f[o] & 15) * 4;
	} else if (et == 0x86dd && n >= o + 40 && f[o + 6] == 17) {
		memcpy(src, f + o + 8, 16);
		l4 = o + 40;
	} else {
		return;
	}
	if (n < l4 + 8)
		return;
	size_t ulen = (size_t)(f[l4 + 4] << 8 | f[l4 + 5]);
	if (ulen < 8)
		return;
	size_t plen = ulen - 8;
	if (plen > n - l4 - 8)
		plen = n - l4 - 8;
	out->p = realloc(out->p, (out->n + 1) * sizeof *out->p);
	struct th_pkt *k = &out->p[out->n++];
	k->data = malloc(plen ? plen : 1);
	memcpy(k->data, f + l4 + 8, plen);
	k->len = plen;
	memcpy(k->src, src, 16);
	k->sport = (uint16_t)(f[l4] << 8 | f[l4 + 1]);
	k->ts_ms = ts_ms;
}

/* Reads the UDP payloads of a pcap or pcapng file (Ethernet link type). */
static __attribute__((unused)) int th_pcap(const char *path, struct th_pkts *out)
{
	size_t n;
	uint8_t *b = th_read(path, &n);
	memset(out, 0, sizeof *out);
	if (!b || n < 24) {
		free(b);
		return -1;
	}
	uint32_t magic = th_u32(b, 1);
	if (magic == 0xa1b2c3d4 || magic == 0xa1b23c4d || magic == 0xd4c3b2a1 ||
	    magic == 0x4d3cb2a1) {
		int le = magic == 0xa1b2c3d4 || magic == 0xa1b23c4d;
		int nano = magic == 0xa1b23c4d || magic == 0x4d3cb2a1;
		for (size_t o = 24; o + 16 <= n;) {
			uint32_t sec = th_u32(b + o, le), frac = th_u32(b + o + 4, le);
			uint32_t cap = th_u32(b + o + 8, le);
			if (cap > n - o - 16)
				break;
			uint64_t ms = (uint64_t)sec * 1000 + (nano ? frac / 1000000 : frac / 1000);
			th_frame(out, b + o + 16, cap, ms);
			o += 16 + cap;
		}
	} else if (magic == 0x0a0d0d0a) {
		int le = th_u32(b + 8, 1) == 0x1a2b3c4d;
		for (size_t o = 0; o + 12 <= n;) {
			uint32_t type = th_u32(b + o, le), blen = th_u32(b + o + 4, le);
			if (blen < 12 || blen > n - o)
				break;
			if (type == 6 && blen >= 32) {
				uint32_t cap = th_u32(b + o + 20, le);
				uint64_t ts =
				    (uint64_t)th_u32(b + o + 12, le) << 32 | th_u32(b + o + 16, le);
				if (cap <= blen - 32)
					th_frame(out, b + o + 28, cap, ts / 1000);
			}
			o += blen;
		}
	} else {
		free(b);
		return -1;
	}
	free(b);
	return 0;
}

static __attribute__((unused)) void th_pkts_free(struct th_pkts *k)
{
	for (size_t i = 0; i < k->n; i++)
		free(k->p[i].data);
	free(k->p);
	k->p = NULL;
	k->n = 0;
}

/* Decodes every packet of a capture (or one raw payload file, exporter
 * 0.0.0.0, time 0) into `out`.  Returns records appended, -1 when the file
 * cannot be read. */
static __attribute__((unused)) long th_decode_file(ng_decoder *d, const char *rel,
                                                   ng_flow_batch *out)
{
	char *path = th_path(rel);
	if (!path)
		return -1;
	long total = 0;
	struct th_pkts k;
	if (th_pcap(path, &k) == 0) {
		for (size_t i = 0; i < k.n; i++) {
			ng_datagram dg = {.data = k.p[i].data,
			                  .len = k.p[i].len,
			                  .exporter_port = k.p[i].sport,
			                  .time_received = k.p[i].ts_ms};
			memcpy(dg.exporter, k.p[i].src, 16);
			total += (long)ng_decode(d, &dg, out);
		}
		th_pkts_free(&k);
	} else {
		size_t n;
		uint8_t *b = th_read(path, &n);
		if (!b) {
			free(path);
			return -1;
		}
		ng_datagram dg = {.data = b, .len = n, .time_received = 1};
		static const uint8_t zero4[4];
		ng_addr_from_v4(dg.exporter, zero4);
		total = (long)ng_decode(d, &dg, out);
		free(b);
	}
	free(path);
	return total;
}

/* Sum of one error over all exporters. */
static __attribute__((unused)) uint64_t th_errors(const ng_decoder *d, enum ng_decode_error e)
{
	ng_exporter_stats s;
	ng_decoder_totals(d, &s);
	return s.errors[e];
}

/* noinline: gcc -O3 inlines it after assert_non_null(f) (not noreturn to gcc) and
 * warns about a NULL f that the assertion already ruled out. */
static __attribute__((unused, noinline)) const char *th_addr(const uint8_t a[16])
{
	static char buf[4][NG_ADDR_STRLEN];
	static int i;
	i = (i + 1) & 3;
	return ng_addr_format(a, buf[i]);
}

/* ---- packet builder for synthetic exports ---- */

struct tb {
	uint8_t b[8192];
	size_t n;
};

static __attribute__((unused)) void tb_u8(struct tb *t, uint8_t v)
{
	t->b[t->n++] = v;
}

static __attribute__((unused)) void tb_u16(struct tb *t, uint16_t v)
{
	tb_u8(t, (uint8_t)(v >> 8));
	tb_u8(t, (uint8_t)v);
}

static __attribute__((unused)) void tb_u32(struct tb *t, uint32_t v)
{
	tb_u16(t, (uint16_t)(v >> 16));
	tb_u16(t, (uint16_t)v);
}

static __attribute__((unused)) void tb_u64(struct tb *t, uint64_t v)
{
	tb_u32(t, (uint32_t)(v >> 32));
	tb_u32(t, (uint32_t)v);
}

static __attribute__((unused)) void tb_bytes(struct tb *t, const void *p, size_t n)
{
	memcpy(t->b + t->n, p, n);
	t->n += n;
}

static __attribute__((unused)) void tb_v4(struct tb *t, uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	tb_u8(t, a), tb_u8(t, b), tb_u8(t, c), tb_u8(t, d);
}

static __attribute__((unused)) void tb_patch16(struct tb *t, size_t at, uint16_t v)
{
	t->b[at] = (uint8_t)(v >> 8);
	t->b[at + 1] = (uint8_t)v;
}

/* A variable-length field (RFC 7011 §7) holding the string s, 1-byte
 * length (s shorter than 255 bytes). */
static __attribute__((unused)) void tb_varstr(struct tb *t, const char *s)
{
	size_t n = strlen(s);
	tb_u8(t, (uint8_t)n);
	tb_bytes(t, s, n);
}

/* An MPLS label stack section (RFC 7012 IE 70-79): label, TC, S in 3
 * bytes. */
static __attribute__((unused)) void tb_mpls(struct tb *t, uint32_t label, unsigned tc,
                                            unsigned bottom)
{
	uint32_t e = label << 4 | (tc & 7) << 1 | (bottom & 1);
	tb_u8(t, (uint8_t)(e >> 16)), tb_u8(t, (uint8_t)(e >> 8)), tb_u8(t, (uint8_t)e);
}

/* Starts a set/flowset with `id`; returns its offset for tb_set_end. */
static __attribute__((unused)) size_t tb_set(struct tb *t, uint16_t id)
{
	size_t at = t->n;
	tb_u16(t, id);
	tb_u16(t, 0);
	return at;
}

static __attribute__((unused)) void tb_set_end(struct tb *t, size_t at)
{
	tb_patch16(t, at + 2, (uint16_t)(t->n - at));
}

/* IPFIX message header (RFC 7011 §3.1); the length is patched by
 * tb_ipfix_end. */
static __attribute__((unused)) void tb_ipfix(struct tb *t, uint32_t export_s, uint32_t seq,
                                             uint32_t domain)
{
	t->n = 0;
	tb_u16(t, 10);
	tb_u16(t, 0);
	tb_u32(t, export_s);
	tb_u32(t, seq);
	tb_u32(t, domain);
}

static __attribute__((unused)) void tb_ipfix_end(struct tb *t)
{
	tb_patch16(t, 2, (uint16_t)t->n);
}

/* NetFlow v9 packet header (RFC 3954 §5.1). */
static __attribute__((unused)) void tb_v9(struct tb *t, uint16_t count, uint32_t uptime,
                                          uint32_t secs, uint32_t seq, uint32_t source)
{
	t->n = 0;
	tb_u16(t, 9);
	tb_u16(t, count);
	tb_u32(t, uptime);
	tb_u32(t, secs);
	tb_u32(t, seq);
	tb_u32(t, source);
}

/* One field specifier of a template: IE, length, enterprise number (0:
 * IANA). */
struct tb_fs {
	uint16_t ie, len;
	uint32_t pen;
};

/* An IPFIX Template Set (or Options Template Set when scope > 0) with one
 * template (RFC 7011 §3.4.1, §3.4.2.2). */
static __attribute__((unused)) void tb_tpl(struct tb *t, uint16_t tid, uint16_t scope,
                                           const struct tb_fs *f, uint16_t n)
{
	size_t s = tb_set(t, scope ? 3 : 2);
	tb_u16(t, tid);
	tb_u16(t, n);
	if (scope)
		tb_u16(t, scope);
	for (uint16_t i = 0; i < n; i++) {
		tb_u16(t, (uint16_t)(f[i].ie | (f[i].pen ? 0x8000 : 0)));
		tb_u16(t, f[i].len);
		if (f[i].pen)
			tb_u32(t, f[i].pen);
	}
	tb_set_end(t, s);
}

/* A NetFlow v9 Template FlowSet with one template (RFC 3954 §5.2; IANA
 * fields only). */
static __attribute__((unused)) void tb_v9_tpl(struct tb *t, uint16_t tid, const struct tb_fs *f,
                                              uint16_t n)
{
	size_t s = tb_set(t, 0);
	tb_u16(t, tid);
	tb_u16(t, n);
	for (uint16_t i = 0; i < n; i++) {
		tb_u16(t, f[i].ie);
		tb_u16(t, f[i].len);
	}
	tb_set_end(t, s);
}

/* Decodes t's bytes as a datagram from 192.0.2.1 received at `now` ms. */
static __attribute__((unused)) size_t tb_decode(ng_decoder *d, const struct tb *t, uint64_t now,
                                                ng_flow_batch *out)
{
	ng_datagram dg = {.data = t->b, .len = t->n, .exporter_port = 2055, .time_received = now};
	static const uint8_t ex[4] = {192, 0, 2, 1};
	ng_addr_from_v4(dg.exporter, ex);
	return ng_decode(d, &dg, out);
}

#endif
