/*
 * record.c — data records: walking a compiled template into an ng_flow.
 *
 * Shared by NetFlow v9 (RFC 3954 §5.3 Data FlowSet) and IPFIX (RFC 7011
 * §3.3.2 Data Records).  A data set is a run of records laid out by one
 * template; what is left after the last whole record is padding (RFC 7011
 * §3.3.1: "The Padding length MUST be shorter than any allowable record in
 * this Set"; RFC 3954 §5.3 likewise).  Each field's op stores its value
 * straight into the output record or into a small per-record context for
 * the values that need the whole record (times, sampling, fallbacks), which
 * finish_record() resolves.  No allocation per record.
 */
#include "decode/decode_int.h"
#include "decode/plausible.h"

#include <stddef.h>
#include <string.h>

#include "core/addr.h"

enum {
	H_BYTES = 1u << 0,
	H_PKTS = 1u << 1,
	H_BYTES_TOTAL = 1u << 2,
	H_PKTS_TOTAL = 1u << 3,
	H_OUT_BYTES = 1u << 4,
	H_OUT_PKTS = 1u << 5,
	H_START_UP = 1u << 6,
	H_END_UP = 1u << 7,
	H_START_ABS = 1u << 8,
	H_END_ABS = 1u << 9,
	H_START_DELTA = 1u << 10,
	H_END_DELTA = 1u << 11,
	H_SYSINIT = 1u << 12,
	H_INTERVAL = 1u << 13,
	H_SAMPLER = 1u << 14,
	H_PKT_INT = 1u << 15,
	H_PKT_SPACE = 1u << 16,
	H_SIZE = 1u << 17,
	H_POP = 1u << 18,
	H_IN_IF = 1u << 19,
	H_OUT_IF = 1u << 20,
	H_IN_PHYS = 1u << 21,
	H_OUT_PHYS = 1u << 22,
	H_NH = 1u << 23,
	H_BGPNH = 1u << 24,
	H_SRC_MAC = 1u << 25,
	H_DST_MAC = 1u << 26,
	H_POST_SRC_MAC = 1u << 27,
	H_POST_DST_MAC = 1u << 28,
	H_SRC_VLAN = 1u << 29,
	H_DST_VLAN = 1u << 30,
	H_IPVER = 1u << 31,
};

/* have2 bits */
enum {
	H2_DOT1Q = 1,
	H2_POST_DOT1Q = 2,
	H2_INIT_BYTES = 4,
	H2_INIT_PKTS = 8,
	H2_OBS = 16,
	H2_LIST_SKIP = 32, /* RFC 6313 structured data skipped */
	H2_LIST = 64,      /* a basicList, at c->list (finish_rare reads it) */
	H2_APP = 128,      /* applicationId (IE 95), at c->app */
};

/* Values of one record that are resolved after all its fields are read.
 * Only `have` is initialised per record; a value is read only when its
 * bit is set. */
struct rec_ctx {
	uint32_t have;
	uint8_t have2; /* H2_ bits */
	uint8_t ipver;
	uint8_t interval_len; /* bytes of IE 34/50, with H_INTERVAL */
	uint16_t dot1q, post_dot1q;
	uint64_t bytes, pkts, bytes_total, pkts_total, out_bytes, out_pkts, init_bytes, init_pkts;
	uint64_t start_up, end_up, start_abs, end_abs, start_delta, end_delta;
	uint64_t sysinit, interval, sampler, pkt_int, pkt_space, size, pop;
	uint64_t in_phys, out_phys, obs;
	/* fields read once the record is walked (finish_rare), so that the
	 * walk calls no function: a basicList and an applicationId */
	const uint8_t *list, *app;
	unsigned list_len, app_len;
	uint8_t bgpnh[16];
	uint8_t post_src_mac[6], post_dst_mac[6];
};

/* NTP timestamp (RFC 7011 §6.1.9/6.1.10: seconds since 1900 in the high
 * 32 bits, binary fraction in the low 32) to ms since 1970. */
static uint64_t ntp_to_ms(uint64_t v)
{
	uint64_t sec = v >> 32, frac = v & 0xffffffffu;
	if (sec < 2208988800u)
		return 0;
	return (sec - 2208988800u) * 1000 + ((frac * 1000) >> 32);
}

/* ::ffff:a.b.c.d without a call per field (RFC 4291 §2.5.5.2) */
static inline void v4_mapped(uint8_t out[16], const uint8_t *q)
{
	static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	memcpy(out, prefix, 12);
	memcpy(out + 12, q, 4);
}

static inline bool zero16(const uint8_t *q)
{
	uint64_t a, b;
	memcpy(&a, q, 8);
	memcpy(&b, q + 8, 8);
	return (a | b) == 0;
}

/*
 * ---- one field into the record ----
 *
 * apply() carries out the op of one field: its action (enum ng_action),
 * chosen by ie_registry.c when the template was compiled, which also
 * checked that the field's length suits it.  A value that stands alone goes
 * straight into the ng_flow; a value the rest of the record decides about
 * goes into the rec_ctx with its `have` bit, for finish_record(): which
 * counter gives the record's bytes, which time encoding its start and end,
 * what the sampling rate is, and the fields that are only a fallback for
 * another (a physical interface for the logical one, a BGP next hop for the
 * next hop, 802.1Q VLANs, post-NAT MACs, the IP version).
 *
 * apply() is one flat switch, one line per action, grouped by kind of
 * field; the helpers above it say what a kind does with its value.  Flat
 * because this runs for every field of every record: one switch is one
 * jump table, where a switch on the kind calling a switch per kind pays a
 * second indirect jump per field (tried: 23% more instructions in the
 * record walker on a NetFlow v9 capture).  All forced inline: one copy per
 * walker, so each arm sees a known context and no call is paid per field.
 */
#define FIELD_INLINE static inline __attribute__((always_inline))

/* The field as an unsigned integer of its own width, 1..8 bytes (RFC 7011
 * §6.2 reduced-size encoding). */
FIELD_INLINE uint64_t num(const uint8_t *q, unsigned len)
{
	return ng_get_be_uint(q, len);
}

/* Keeps a value for finish_record(): into `slot` of c, with `bit` set in
 * c->have to say the record sent it. */
FIELD_INLINE void keep(struct rec_ctx *c, uint32_t bit, uint64_t *slot, uint64_t v)
{
	*slot = v;
	c->have |= bit;
}

/* keep() for the rarer fields whose bits are in c->have2. */
FIELD_INLINE void keep2(struct rec_ctx *c, uint8_t bit, uint64_t *slot, uint64_t v)
{
	*slot = v;
	c->have2 |= bit;
}

/* keep() for an 802.1Q VLAN ID (IE 243/254, kept in 16 bits; its bit is
 * in c->have2). */
FIELD_INLINE void keep_vlan(struct rec_ctx *c, uint8_t bit, uint16_t *slot, uint64_t v)
{
	*slot = (uint16_t)v;
	c->have2 |= bit;
}

/* A source or destination IPv4 address, stored IPv4-mapped.  Templates
 * holding both IPv4 and IPv6 address fields send the unused family as
 * zeros (seen from Cisco IOS XR, nProbe): a zero address never overwrites
 * one already read. */
FIELD_INLINE void put_addr4(ng_flow *f, uint8_t addr[16], const uint8_t *q)
{
	if (ng_get_be32(q)) {
		v4_mapped(addr, q);
		f->ip_version = 4;
	}
}

/* put_addr4() for an IPv6 address (16 bytes at q). */
FIELD_INLINE void put_addr6(ng_flow *f, uint8_t addr[16], const uint8_t *q)
{
	if (!zero16(q)) {
		memcpy(addr, q, 16);
		f->ip_version = 6;
	}
}

/* A next hop or BGP next hop from IPv4 (4 bytes at q, stored IPv4-mapped),
 * zero or not; `bit` says it was sent. */
FIELD_INLINE void put_hop4(struct rec_ctx *c, uint32_t bit, uint8_t addr[16], const uint8_t *q)
{
	v4_mapped(addr, q);
	c->have |= bit;
}

/* put_hop4() from IPv6 (16 bytes at q). */
FIELD_INLINE void put_hop6(struct rec_ctx *c, uint32_t bit, uint8_t addr[16], const uint8_t *q)
{
	memcpy(addr, q, 16);
	c->have |= bit;
}

/* A MAC address (6 bytes at q); `bit` says it was sent. */
FIELD_INLINE void put_mac(struct rec_ctx *c, uint32_t bit, uint8_t mac[6], const uint8_t *q)
{
	memcpy(mac, q, 6);
	c->have |= bit;
}

/* samplingInterval (IE 34/50), with its length: plausible.h reverses
 * its bytes when it was sent little-endian. */
FIELD_INLINE void keep_interval(struct rec_ctx *c, const uint8_t *q, unsigned len)
{
	keep(c, H_INTERVAL, &c->interval, num(q, len));
	c->interval_len = (uint8_t)len;
}

/* An interface index straight into the flow; `bit` says it was sent, so
 * that finish_record() does not put the physical interface there. */
FIELD_INLINE void put_if(struct rec_ctx *c, uint32_t bit, uint32_t *ifindex, uint64_t v)
{
	*ifindex = (uint32_t)v;
	c->have |= bit;
}

/* A VLAN ID straight into the flow; `bit` says it was sent, so that
 * finish_record() does not put the 802.1Q VLAN there. */
FIELD_INLINE void put_vlan(struct rec_ctx *c, uint32_t bit, uint16_t *vlan, uint64_t v)
{
	*vlan = (uint16_t)v;
	c->have |= bit;
}

/* One MPLS label stack section (RFC 7012 IE 70-79, 3 bytes at q: label
 * 20 bits, TC 3, S 1, as RFC 3032 §2.1 without the TTL), entry `pos`
 * (1 the top) of the stack: its label into `label`; a section sent
 * non-zero extends mpls_depth to it (exporters send the positions past
 * the bottom of the stack as zeros). */
FIELD_INLINE void put_mpls(ng_flow *f, uint32_t *label, unsigned pos, const uint8_t *q)
{
	uint32_t e = (uint32_t)num(q, 3);
	*label = e >> 4;
	if (e && pos > f->mpls_depth)
		f->mpls_depth = (uint8_t)pos;
}

/* Where positions 1..10 of an MPLS label stack (1 the top) are in ng_flow. */
static const size_t mpls_slot[10] = {
    offsetof(ng_flow, mpls_label),  offsetof(ng_flow, mpls_label2), offsetof(ng_flow, mpls_label3),
    offsetof(ng_flow, mpls_label4), offsetof(ng_flow, mpls_label5), offsetof(ng_flow, mpls_label6),
    offsetof(ng_flow, mpls_label7), offsetof(ng_flow, mpls_label8), offsetof(ng_flow, mpls_label9),
    offsetof(ng_flow, mpls_label10)};

/* A basicList (RFC 6313 §4.5.1), `len` bytes at q: semantic (1 byte),
 * field ID (2, the top bit the enterprise bit), element length (2), the
 * enterprise number (4) when the bit is set, then the elements.  A list
 * of mplsTopLabelStackSection (IE 70, 3 bytes each: the way RFC 6313
 * §6.2 carries a label stack) fills the stack positions 1..10 top first,
 * as IE 70-79 would (entries past the tenth are not stored).  Any other
 * list is skipped; one shorter than its header, or with fixed-length
 * elements that do not fill it exactly, is malformed.  The record is kept
 * in every case.  Returns 0 decoded, 1 skipped, 2 malformed. */
static int put_basic_list(ng_flow *f, const uint8_t *q, unsigned len)
{
	unsigned hdr = len >= 5 && (q[1] & 0x80) ? 9 : 5;
	if (len < hdr)
		return 2;
	uint16_t id = ng_get_be16(q + 1), elen = ng_get_be16(q + 3);
	unsigned body = len - hdr;
	if ((elen == 0 && body) || (elen && elen != NG_VARLEN && body % elen))
		return 2;
	if (id != 70 || elen != 3)
		return 1;
	for (unsigned i = 0; i < body / 3 && i < 10; i++)
		put_mpls(f, (uint32_t *)((uint8_t *)f + mpls_slot[i]), i + 1, q + hdr + 3 * i);
	return 0;
}

/* A basicList kept for finish_rare; a record's second one is skipped. */
FIELD_INLINE void keep_list(struct rec_ctx *c, const uint8_t *q, unsigned len)
{
	if (c->have2 & H2_LIST)
		c->have2 |= H2_LIST_SKIP;
	c->have2 |= H2_LIST;
	c->list = q;
	c->list_len = len;
}

FIELD_INLINE void keep_app(struct rec_ctx *c, const uint8_t *q, unsigned len)
{
	c->have2 |= H2_APP;
	c->app = q;
	c->app_len = len;
}

/* icmpTypeCodeIPv4/IPv6: type * 256 + code (RFC 7012 IE 32/139). */
FIELD_INLINE void put_icmp_type_code(ng_flow *f, uint64_t v)
{
	f->icmp_type = (uint8_t)(v >> 8);
	f->icmp_code = (uint8_t)v;
}

/* Does the action `act` with the field of `len` bytes at q (a length the
 * action allows), into f or c. */
FIELD_INLINE void apply(unsigned act, const uint8_t *q, unsigned len, ng_flow *f, struct rec_ctx *c)
{
	switch (act) {
	/* Traffic counters: finish_record() picks the record's bytes and packets. */
	case NG_A_BYTES: keep(c, H_BYTES, &c->bytes, num(q, len)); break;
	case NG_A_PKTS: keep(c, H_PKTS, &c->pkts, num(q, len)); break;
	case NG_A_BYTES_TOTAL: keep(c, H_BYTES_TOTAL, &c->bytes_total, num(q, len)); break;
	case NG_A_PKTS_TOTAL: keep(c, H_PKTS_TOTAL, &c->pkts_total, num(q, len)); break;
	case NG_A_OUT_BYTES: keep(c, H_OUT_BYTES, &c->out_bytes, num(q, len)); break;
	case NG_A_OUT_PKTS: keep(c, H_OUT_PKTS, &c->out_pkts, num(q, len)); break;
	case NG_A_INIT_BYTES: keep2(c, H2_INIT_BYTES, &c->init_bytes, num(q, len)); break;
	case NG_A_INIT_PKTS: keep2(c, H2_INIT_PKTS, &c->init_pkts, num(q, len)); break;
	/* Addresses; next hops are kept apart from BGP next hops, their fallback. */
	case NG_A_SRC4: put_addr4(f, f->src_addr, q); break;
	case NG_A_DST4: put_addr4(f, f->dst_addr, q); break;
	case NG_A_NH4: put_hop4(c, H_NH, f->next_hop, q); break;
	case NG_A_BGPNH4: put_hop4(c, H_BGPNH, c->bgpnh, q); break;
	case NG_A_SRC6: put_addr6(f, f->src_addr, q); break;
	case NG_A_DST6: put_addr6(f, f->dst_addr, q); break;
	case NG_A_NH6: put_hop6(c, H_NH, f->next_hop, q); break;
	case NG_A_BGPNH6: put_hop6(c, H_BGPNH, c->bgpnh, q); break;
	/* Ports, protocol, TCP flags (2 bytes in RFC 7012, flags in the low
	 * byte; 1 byte in v9), type of service, ICMP type and code. */
	case NG_A_SRC_PORT: f->src_port = (uint16_t)num(q, len); break;
	case NG_A_DST_PORT: f->dst_port = (uint16_t)num(q, len); break;
	case NG_A_PROTO: f->protocol = (uint8_t)num(q, len); break;
	case NG_A_TCP_FLAGS: f->tcp_flags = (uint8_t)num(q, len); break;
	case NG_A_TOS: f->tos = (uint8_t)num(q, len); break;
	case NG_A_ICMP_TC: put_icmp_type_code(f, num(q, len)); break;
	case NG_A_ICMP_TYPE: f->icmp_type = (uint8_t)num(q, len); break;
	case NG_A_ICMP_CODE: f->icmp_code = (uint8_t)num(q, len); break;
	/* Interfaces (physical ones are the fallback), direction, AS, masks. */
	case NG_A_IN_IF: put_if(c, H_IN_IF, &f->in_if, num(q, len)); break;
	case NG_A_OUT_IF: put_if(c, H_OUT_IF, &f->out_if, num(q, len)); break;
	case NG_A_IN_PHYS: keep(c, H_IN_PHYS, &c->in_phys, num(q, len)); break;
	case NG_A_OUT_PHYS: keep(c, H_OUT_PHYS, &c->out_phys, num(q, len)); break;
	case NG_A_DIRECTION: f->direction = (uint8_t)num(q, len); break;
	case NG_A_SRC_AS: f->src_as = (uint32_t)num(q, len); break;
	case NG_A_DST_AS: f->dst_as = (uint32_t)num(q, len); break;
	case NG_A_SRC_MASK: f->src_mask = (uint8_t)num(q, len); break;
	case NG_A_DST_MASK: f->dst_mask = (uint8_t)num(q, len); break;
	/* VLANs (802.1Q ones are the fallback), MPLS, MACs (post-NAT ones are
	 * the fallback), IP version (a fallback for the addresses' family). */
	case NG_A_SRC_VLAN: put_vlan(c, H_SRC_VLAN, &f->src_vlan, num(q, len)); break;
	case NG_A_DST_VLAN: put_vlan(c, H_DST_VLAN, &f->dst_vlan, num(q, len)); break;
	case NG_A_DOT1Q_VLAN: keep_vlan(c, H2_DOT1Q, &c->dot1q, num(q, len)); break;
	case NG_A_POST_DOT1Q_VLAN: keep_vlan(c, H2_POST_DOT1Q, &c->post_dot1q, num(q, len)); break;
	/* RFC 7012 IE 70-79: the MPLS label stack, top first */
	case NG_A_MPLS_LABEL: put_mpls(f, &f->mpls_label, 1, q); break;
	case NG_A_MPLS_LABEL2: put_mpls(f, &f->mpls_label2, 2, q); break;
	case NG_A_MPLS_LABEL3: put_mpls(f, &f->mpls_label3, 3, q); break;
	case NG_A_MPLS_LABEL4: put_mpls(f, &f->mpls_label4, 4, q); break;
	case NG_A_MPLS_LABEL5: put_mpls(f, &f->mpls_label5, 5, q); break;
	case NG_A_MPLS_LABEL6: put_mpls(f, &f->mpls_label6, 6, q); break;
	case NG_A_MPLS_LABEL7: put_mpls(f, &f->mpls_label7, 7, q); break;
	case NG_A_MPLS_LABEL8: put_mpls(f, &f->mpls_label8, 8, q); break;
	case NG_A_MPLS_LABEL9: put_mpls(f, &f->mpls_label9, 9, q); break;
	case NG_A_MPLS_LABEL10: put_mpls(f, &f->mpls_label10, 10, q); break;
	case NG_A_SRC_MAC: put_mac(c, H_SRC_MAC, f->src_mac, q); break;
	case NG_A_DST_MAC: put_mac(c, H_DST_MAC, f->dst_mac, q); break;
	case NG_A_POST_SRC_MAC: put_mac(c, H_POST_SRC_MAC, c->post_src_mac, q); break;
	case NG_A_POST_DST_MAC: put_mac(c, H_POST_DST_MAC, c->post_dst_mac, q); break;
	case NG_A_IP_VERSION:
		c->ipver = (uint8_t)num(q, len);
		c->have |= H_IPVER;
		break;
	/* Times in every encoding exporters use: finish_times() picks one. */
	case NG_A_START_UPTIME: keep(c, H_START_UP, &c->start_up, num(q, len)); break;
	case NG_A_END_UPTIME: keep(c, H_END_UP, &c->end_up, num(q, len)); break;
	case NG_A_START_SEC: keep(c, H_START_ABS, &c->start_abs, num(q, len) * 1000); break;
	case NG_A_END_SEC: keep(c, H_END_ABS, &c->end_abs, num(q, len) * 1000); break;
	case NG_A_START_MS: keep(c, H_START_ABS, &c->start_abs, num(q, len)); break;
	case NG_A_END_MS: keep(c, H_END_ABS, &c->end_abs, num(q, len)); break;
	case NG_A_START_NTP: keep(c, H_START_ABS, &c->start_abs, ntp_to_ms(ng_get_be64(q))); break;
	case NG_A_END_NTP: keep(c, H_END_ABS, &c->end_abs, ntp_to_ms(ng_get_be64(q))); break;
	case NG_A_START_DELTA_US: keep(c, H_START_DELTA, &c->start_delta, num(q, len)); break;
	case NG_A_END_DELTA_US: keep(c, H_END_DELTA, &c->end_delta, num(q, len)); break;
	case NG_A_SYSINIT_MS: keep(c, H_SYSINIT, &c->sysinit, num(q, len)); break;
	case NG_A_OBS_MS: keep2(c, H2_OBS, &c->obs, num(q, len)); break;
	/* Sampling: record_rate() and options_rate() make it a rate. */
	case NG_A_SAMPLING_INTERVAL: keep_interval(c, q, len); break;
	case NG_A_SAMPLER_ID: keep(c, H_SAMPLER, &c->sampler, num(q, len)); break;
	case NG_A_PKT_INTERVAL: keep(c, H_PKT_INT, &c->pkt_int, num(q, len)); break;
	case NG_A_PKT_SPACE: keep(c, H_PKT_SPACE, &c->pkt_space, num(q, len)); break;
	case NG_A_SAMPLING_SIZE: keep(c, H_SIZE, &c->size, num(q, len)); break;
	case NG_A_SAMPLING_POP: keep(c, H_POP, &c->pop, num(q, len)); break;
	/* RFC 6313 structured data */
	case NG_A_BASIC_LIST: keep_list(c, q, len); break;
	case NG_A_SUB_LIST: c->have2 |= H2_LIST_SKIP; break;
	case NG_A_APP_ID: keep_app(c, q, len); break;
	default: break;
	}
}

/* A fixed-length record: the set holds at least t->min_len bytes. */
static size_t walk_fixed(const struct ng_tpl *t, const uint8_t *p, ng_flow *f, struct rec_ctx *c)
{
	const uint8_t *q = p;
	for (const struct ng_op *o = t->ops, *e = t->ops + t->nops; o < e; o++) {
		/* read once: for all the compiler knows, a uint16_t store in
		 * apply() could change o->len */
		unsigned len = o->len;
		if (o->act)
			apply(o->act, q, len, f, c);
		q += len;
	}
	return (size_t)(q - p);
}

/* A record with variable-length fields (RFC 7011 §7: a 1-byte length, or
 * 255 followed by a 2-byte length).  Returns the bytes used, or 0 when a
 * length runs past `avail`. */
static size_t walk_var(const struct ng_tpl *t, const uint8_t *p, size_t avail, ng_flow *f,
                       struct rec_ctx *c)
{
	size_t off = 0;
	for (const struct ng_op *o = t->ops, *e = t->ops + t->nops; o < e; o++) {
		size_t len = o->len;
		if (len == NG_VARLEN) {
			/* RFC 7011 §7: length prefix must fit in the record */
			if (off + 1 > avail)
				return 0;
			len = p[off++];
			if (len == 255) {
				if (off + 2 > avail)
					return 0;
				len = ng_get_be16(p + off);
				off += 2;
			}
		}
		/* RFC 7011 §3.3.2: a field never extends past its set */
		if (len > avail - off)
			return 0;
		if (o->act)
			apply(o->act, p + off, (unsigned)len, f, c);
		off += len;
	}
	return off;
}

/* Sampling rate carried by the record itself (RFC 7012 IE 34/50; RFC 5477
 * §8.2 IE 305/306 and 309/310) as sent, 0 when none; *len is the length
 * of the IE 34/50 field it is, 0 for a rate computed from two fields (for
 * ng_rate_check, plausible.h). */
static uint64_t record_rate(const struct rec_ctx *c, unsigned *len)
{
	*len = 0;
	if ((c->have & (H_PKT_INT | H_PKT_SPACE)) == (H_PKT_INT | H_PKT_SPACE) && c->pkt_int)
		return (c->pkt_int + c->pkt_space) / c->pkt_int;
	if ((c->have & (H_SIZE | H_POP)) == (H_SIZE | H_POP) && c->size)
		return c->pop / c->size;
	if ((c->have & H_INTERVAL) && c->interval) {
		*len = c->interval_len;
		return c->interval;
	}
	return 0;
}

/* The rate options data gives a record without its own: its sampler ID's
 * in its domain, else in the exporter's other domains (samplers.c), else
 * the domain's default; 0 when none (a sampler ID left unmatched is
 * counted). */
static uint32_t options_rate(struct ng_domain *dom, const struct rec_ctx *c)
{
	uint32_t r;
	if (c->have & H_SAMPLER) {
		if ((r = ng_sampler_own_rate(dom, c->sampler)))
			return r;
		if ((r = ng_sampler_rate_elsewhere(dom, c->sampler)))
			return r;
	}
	if (dom->default_rate)
		return dom->default_rate;
	/* a record without sampler ID from a domain with one sampler */
	if (!(c->have & H_SAMPLER) && dom->nsamplers == 1)
		return dom->samplers[0].rate;
	if (c->have & H_SAMPLER)
		dom->st.sampler_unmatched++;
	return 0;
}

static uint64_t scale(uint64_t v, uint32_t rate)
{
	uint64_t r;
	if (__builtin_mul_overflow(v, (uint64_t)rate, &r))
		return UINT64_MAX;
	return r;
}

/* Time of an uptime-relative value (IE 21/22, ms of sysUpTime). */
/* Uptime-relative times more than this after the export time are taken
 * as wrapped (see uptime_time). */
#define UPTIME_FUTURE_MS UINT64_C(86400000)

static uint64_t uptime_time(const struct ng_msg *m, const struct rec_ctx *c, uint64_t up)
{
	uint64_t sysinit = (c->have & H_SYSINIT) ? c->sysinit : m->dom->sysinit_ms;
	if (sysinit) {
		/* RFC 7012 IE 21/22 are unsigned32 ms since systemInitTime
		 * (IE 160), so they wrap every 2^32 ms (49.7 days).  A time
		 * far after the export time is a wrapped "negative" offset:
		 * softflowd reading a capture sets IE 160 to its own start and
		 * sends (packet time - start) mod 2^32 for older packets. */
		uint64_t t = sysinit + up;
		if (t > m->export_ms + UPTIME_FUTURE_MS && t >= (UINT64_C(1) << 32))
			t -= UINT64_C(1) << 32;
		return t;
	}
	if (m->has_uptime) {
		/* RFC 3954 §8: FIRST/LAST_SWITCHED are sysUpTime values.  The
		 * difference is taken signed (32-bit modular) because some
		 * exporters (softflowd) stamp flows slightly after the header's
		 * sysUpTime; also handles uptime wrap at 2^32 ms. */
		int32_t ago = (int32_t)(m->uptime_ms - (uint32_t)up);
		return (uint64_t)((int64_t)m->export_ms - ago);
	}
	return m->export_ms;
}

static void finish_times(const struct ng_msg *m, ng_flow *f, const struct rec_ctx *c)
{
	uint32_t h = c->have;
	bool s = true, e = true;
	if (h & H_START_ABS)
		f->flow_start = c->start_abs;
	else if (h & H_START_DELTA) /* RFC 7012 IE 158: µs before export time */
		f->flow_start = m->export_ms - c->start_delta / 1000;
	else if (h & H_START_UP)
		f->flow_start = uptime_time(m, c, c->start_up);
	else
		s = false;
	if (h & H_END_ABS)
		f->flow_end = c->end_abs;
	else if (h & H_END_DELTA)
		f->flow_end = m->export_ms - c->end_delta / 1000;
	else if (h & H_END_UP)
		f->flow_end = uptime_time(m, c, c->end_up);
	else
		e = false;
	if (!s && !e) /* an event's own time (NSEL), else the export time */
		f->flow_start = f->flow_end = (c->have2 & H2_OBS) ? c->obs : m->export_ms;
	else if (!s)
		f->flow_start = f->flow_end;
	else if (!e)
		f->flow_end = f->flow_start;
}

/* What few records carry, out of the common path: the application name
 * of the applicationId (apps.c) and the RFC 6313 lists, counted. */
static __attribute__((noinline)) void finish_rare(struct ng_domain *dom, ng_flow *f,
                                                  const struct rec_ctx *c)
{
	if (c->have2 & H2_APP) {
		f->application = ng_app_name(dom, ng_app_key(c->app, c->app_len));
		dom->st.apps_unnamed += !f->application;
	}
	int list = c->have2 & H2_LIST ? put_basic_list(f, c->list, c->list_len) : 0;
	if (list || (c->have2 & H2_LIST_SKIP))
		dom->st.lists_skipped++;
	if (list == 2)
		ng_count_error(dom, NG_DERR_LIST_BAD);
}

static void finish_record(struct ng_msg *m, ng_flow *f, const struct rec_ctx *c)
{
	uint32_t h = c->have;
	struct ng_domain *dom = m->dom;
	memcpy(f->exporter, dom->st.exporter, 16);
	f->time_received = m->time_received;
	f->observation_domain = dom->st.domain;
	f->flow_version = m->version;
	/* octetDeltaCount, else octetTotalCount (85), postOctetDeltaCount
	 * (23, v9 OUT_BYTES), initiatorOctets (231, NSEL); packets alike */
	f->bytes_raw = (h & H_BYTES)                ? c->bytes
	               : (h & H_BYTES_TOTAL)        ? c->bytes_total
	               : (h & H_OUT_BYTES)          ? c->out_bytes
	               : (c->have2 & H2_INIT_BYTES) ? c->init_bytes
	                                            : 0;
	f->packets_raw = (h & H_PKTS)                ? c->pkts
	                 : (h & H_PKTS_TOTAL)        ? c->pkts_total
	                 : (h & H_OUT_PKTS)          ? c->out_pkts
	                 : (c->have2 & H2_INIT_PKTS) ? c->init_pkts
	                                             : 0;
	finish_times(m, f, c);
	ng_plaus_times(dom, f, m->export_ms, m->boot_lo);
	if (!(h & H_IN_IF) && (h & H_IN_PHYS))
		f->in_if = (uint32_t)c->in_phys;
	if (!(h & H_OUT_IF) && (h & H_OUT_PHYS))
		f->out_if = (uint32_t)c->out_phys;
	if (!(h & H_NH) && (h & H_BGPNH))
		memcpy(f->next_hop, c->bgpnh, 16);
	if (!(h & H_SRC_MAC) && (h & H_POST_SRC_MAC))
		memcpy(f->src_mac, c->post_src_mac, 6);
	if (!(h & H_DST_MAC) && (h & H_POST_DST_MAC))
		memcpy(f->dst_mac, c->post_dst_mac, 6);
	if (!(h & H_SRC_VLAN) && (c->have2 & H2_DOT1Q))
		f->src_vlan = c->dot1q;
	if (!(h & H_DST_VLAN) && (c->have2 & H2_POST_DOT1Q))
		f->dst_vlan = c->post_dot1q;
	if ((h & H_IPVER) && (c->ipver == 4 || c->ipver == 6))
		f->ip_version = c->ipver;
	if (h & H_SAMPLER)
		f->sampler_id = (uint16_t)c->sampler;
	if (ng_unlikely(c->have2 & (H2_APP | H2_LIST | H2_LIST_SKIP)))
		finish_rare(dom, f, c);
	if (ng_plaus_counters_odd(f))
		ng_plaus_counters_slow(dom, f,
		                       (h & (H_PKTS | H_PKTS_TOTAL | H_OUT_PKTS)) ||
		                           (c->have2 & H2_INIT_PKTS));
	unsigned ilen;
	uint64_t raw = record_rate(c, &ilen);
	uint32_t rate = 0;
	if (raw) {
		enum ng_rate_verdict v = ng_rate_check(raw, ilen, dom->rate_swapped, &rate);
		if (ng_unlikely(v != NG_RATE_OK))
			rate = ng_plaus_rate(dom, f, raw, v, rate);
	}
	uint8_t src = NG_SAMPLING_RECORD;
	if (!rate) {
		rate = options_rate(dom, c);
		src = NG_SAMPLING_OPTIONS;
	}
	if (!rate) {
		rate = 1;
		src = NG_SAMPLING_NONE;
	}
	ng_icmp_from_port(f);
	f->sampling_rate = rate;
	f->sampling_source = src;
	f->bytes = scale(f->bytes_raw, rate);
	f->packets = scale(f->packets_raw, rate);
	dom->st.sampling_rate = rate;
	dom->st.sampling_source = src;
}

/* Options data (RFC 3954 §6.2, RFC 7011 §4): remembers the system init
 * time and sampling rates.  A rate with a sampler/selector ID applies to
 * records carrying that ID; one without is the domain's default. */
static void apply_options(struct ng_msg *m, const struct rec_ctx *c)
{
	struct ng_domain *dom = m->dom;
	dom->st.options_records++;
	if (c->have & H_SYSINIT)
		dom->sysinit_ms = c->sysinit;
	unsigned ilen;
	uint64_t raw = record_rate(c, &ilen);
	uint32_t rate = 0;
	if (!raw)
		return;
	enum ng_rate_verdict v = ng_rate_check(raw, ilen, dom->rate_swapped, &rate);
	if (ng_unlikely(v != NG_RATE_OK)) {
		/* plausible.h: stored corrected, or not at all; counted here */
		if (!(rate = ng_plaus_rate(dom, NULL, raw, v, rate)))
			return;
	}
	if (!(c->have & H_SAMPLER)) {
		dom->default_rate = rate;
		return;
	}
	for (unsigned i = 0; i < dom->nsamplers; i++) {
		if (dom->samplers[i].id == c->sampler) {
			dom->samplers[i].rate = rate;
			return;
		}
	}
	if (dom->nsamplers >= NG_MAX_SAMPLERS)
		m->d->lim.samplers_replaced++; /* bounded: a slot is taken over, counted */
	unsigned i = dom->nsamplers < NG_MAX_SAMPLERS ? dom->nsamplers++
	                                              : (unsigned)(c->sampler % NG_MAX_SAMPLERS);
	dom->samplers[i].id = c->sampler;
	dom->samplers[i].rate = rate;
}

void ng_data_set(struct ng_msg *m, struct ng_tpl *t, const uint8_t *p, size_t len)
{
	size_t off = 0, n = 0;
	struct rec_ctx c;
	ng_flow tmp;
	/* plausible.h: a v9 time before this is before the exporter's boot */
	m->boot_lo = m->has_uptime && m->export_ms > (uint64_t)m->uptime_ms + NG_PLAUS_DAY_MS
	                 ? m->export_ms - m->uptime_ms - NG_PLAUS_DAY_MS
	                 : 0;
	/* RFC 7011 §3.3.1: bytes after the last record shorter than the
	 * minimum record length are padding.  Longer zero padding is seen
	 * too (the RFC's "SHOULD be shorter" is not always kept): an all-zero
	 * rest of the set is taken as padding, not as empty records. */
	while (len - off >= t->min_len) {
		if (p[off] == 0 && ng_all_zero(p + off, len - off))
			break;
		ng_flow *f;
		if (t->options) {
			memset(&tmp, 0, sizeof tmp);
			f = &tmp;
		} else if (!(f = ng_flow_batch_push(m->out))) {
			break;
		}
		c.have = 0;
		c.have2 = 0;
		size_t used = t->varlen ? walk_var(t, p + off, len - off, f, &c)
		                        : walk_fixed(t, p + off, f, &c);
		if (ng_unlikely(!used)) {
			ng_count_error(m->dom, NG_DERR_RECORD_TRUNCATED);
			if (!t->options)
				m->out->n--;
			break;
		}
		off += used;
		n++;
		if (t->options) {
			apply_options(m, &c);
			ng_options_interfaces(m, t, p + off - used, used);
		} else {
			finish_record(m, f, &c);
			m->appended++;
		}
	}
	for (uint16_t i = 0; i < t->nent; i++)
		*t->ent[i] += n;
	if (!t->options)
		m->dom->st.records += n;
	m->records += n;
}
