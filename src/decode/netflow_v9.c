/*
 * netflow_v9.c — Cisco NetFlow version 9, RFC 3954.
 *
 *   Packet Header (§5.1), 20 bytes:
 *     version = 9 (2) | count (2) | sysUpTime ms (4) | UNIX secs (4) |
 *     sequence number (4) | source ID (4)
 *   then FlowSets (§5.2–5.3, §6.1): FlowSet ID (2) | length (2) | body,
 *     ID 0 = Template FlowSet, 1 = Options Template FlowSet,
 *     2..255 reserved, ≥ 256 = Data FlowSet of that template.
 *
 * The sequence number counts export packets (§5.1), so a gap is a number
 * of lost packets.  Variable-length fields (length 0xFFFF, the IPFIX
 * encoding of RFC 7011 §7) are accepted here too: some exporters (H3C
 * NetStream) send them in v9.
 *
 * Concatenated export packets.  The Packet Header has no length (§5.1:
 * Count is records, not bytes), so a packet ends where its datagram does;
 * but some exporters put several export packets in one UDP payload, and
 * parsers such as mikemiles-dev/netflow_parser read a buffer as a run of
 * them.  A FlowSet ID of 9 cannot start a FlowSet (§5.2: 2..255 are
 * reserved), so where one would begin with at least a header's 20 bytes
 * left, the rest is taken as the next export packet, decoded on its own
 * (its source ID, sequence number and times), and counted
 * (packets_concatenated).  Without this its records were lost as a "FlowSet"
 * of reserved ID or of impossible length.
 */
#include "decode/decode_int.h"

#include <string.h>

/* Largest believable forward gap, in packets; beyond it = restart. */
#define V9_MAX_GAP 100000u

/* Template FlowSet body (RFC 3954 §5.2): records of Template ID (2),
 * Field Count (2), Field Count × (type (2), length (2)). */
static void v9_templates(struct ng_msg *m, const uint8_t *p, size_t len)
{
	struct ng_tfield *fl = m->d->scratch;
	size_t o = 0;
	/* §5.2 Padding: fewer than 4 bytes left cannot hold a template */
	while (len - o >= 4) {
		uint16_t tid = ng_get_be16(p + o), cnt = ng_get_be16(p + o + 2);
		if (tid == 0 && cnt == 0 && ng_all_zero(p + o, len - o))
			return; /* zero padding */
		o += 4;
		/* §5.2: Field Count fields of 4 bytes each follow; a template
		 * without fields describes no record */
		if (ng_unlikely(cnt == 0 || (size_t)cnt * 4 > len - o)) {
			ng_count_error(m->dom, NG_DERR_TEMPLATE_BAD);
			return;
		}
		for (uint16_t i = 0; i < cnt; i++, o += 4) {
			fl[i].ie = ng_get_be16(p + o);
			fl[i].len = ng_get_be16(p + o + 2);
			fl[i].pen = 0;
		}
		m->dom->st.templates++;
		/* §5.2: Template IDs 0..255 are reserved for FlowSet IDs */
		if (ng_unlikely(tid < 256)) {
			ng_count_error(m->dom, NG_DERR_TEMPLATE_ID_BAD);
			continue;
		}
		int e = ng_tpl_add(m->d, m->dom, 9, tid, false, 0, fl, cnt);
		if (e)
			ng_count_error(m->dom, (enum ng_decode_error)e);
		else
			m->new_templates = true;
	}
}

/* Options Template FlowSet body (RFC 3954 §6.1): Template ID (2), Option
 * Scope Length (2, bytes), Option Length (2, bytes), scope fields, option
 * fields, padding to 4 bytes. */
static void v9_options(struct ng_msg *m, const uint8_t *p, size_t len)
{
	struct ng_tfield *fl = m->d->scratch;
	size_t o = 0;
	while (len - o >= 6) {
		uint16_t tid = ng_get_be16(p + o);
		size_t slen = ng_get_be16(p + o + 2), olen = ng_get_be16(p + o + 4);
		if (tid == 0 && ng_all_zero(p + o, len - o))
			return; /* zero padding */
		o += 6;
		/* §6.1: both lengths are multiples of the 4-byte field spec
		 * and lie inside the FlowSet; a template needs a field */
		if (ng_unlikely(slen % 4 || olen % 4 || slen + olen > len - o ||
		                slen + olen == 0)) {
			ng_count_error(m->dom, NG_DERR_TEMPLATE_BAD);
			return;
		}
		uint16_t n = (uint16_t)((slen + olen) / 4);
		for (uint16_t i = 0; i < n; i++, o += 4) {
			fl[i].ie = ng_get_be16(p + o);
			fl[i].len = ng_get_be16(p + o + 2);
			fl[i].pen = 0;
		}
		m->dom->st.templates++;
		if (ng_unlikely(tid < 256)) {
			ng_count_error(m->dom, NG_DERR_TEMPLATE_ID_BAD);
		} else {
			int e = ng_tpl_add(m->d, m->dom, 9, tid, true, (uint16_t)(slen / 4), fl, n);
			if (e)
				ng_count_error(m->dom, (enum ng_decode_error)e);
			else
				m->new_templates = true;
		}
		/* §6.1 Padding: to the next 4-byte boundary of the FlowSet */
		o = (o + 3) & ~(size_t)3;
		if (o > len)
			return;
	}
}

/* True when another export packet starts at p + o (see the file's top). */
static inline bool v9_next_packet(const uint8_t *p, size_t len, size_t o)
{
	return len - o >= 20 && ng_get_be16(p + o) == 9;
}

/* Decodes the export packet at the start of dg; *next is the offset of a
 * concatenated one after it, or 0. */
static size_t v9_packet(ng_decoder *d, const ng_datagram *dg, ng_flow_batch *out, size_t *next)
{
	const uint8_t *p = dg->data;
	size_t len = dg->len;
	*next = 0;
	/* §5.1: the Packet Header is 20 bytes */
	if (ng_unlikely(len < 20)) {
		struct ng_domain *dom = ng_domain_get(d, dg->exporter, 0);
		if (dom) {
			ng_domain_seen(dom, dg, len, 9);
			ng_count_error(dom, NG_DERR_SHORT_HEADER);
		}
		return 0;
	}
	struct ng_domain *dom = ng_domain_get(d, dg->exporter, ng_get_be32(p + 16));
	if (!dom)
		return 0;
	ng_domain_seen(dom, dg, len, 9);
	/* §5.1 sysUpTime and Sequence Number: a restart makes the templates
	 * learnt before it stale (restart.c), before any FlowSet is read */
	struct ng_rhdr h = {.received_ms = dg->time_received,
	                    .export_ms = (uint64_t)ng_get_be32(p + 8) * 1000,
	                    .seq = ng_get_be32(p + 12),
	                    .uptime_ms = ng_get_be32(p + 4),
	                    .port = dg->exporter_port,
	                    .version = 9,
	                    .has_uptime = true};
	enum ng_restart_verdict rv = ng_restart_check(d, dom, &h);
	ng_seq_check(&dom->seq, h.seq, 1, V9_MAX_GAP, &dom->st.lost);
	struct ng_msg m = {
	    .d = d,
	    .dom = dom,
	    .out = out,
	    .time_received = dg->time_received,
	    .export_ms = h.export_ms,
	    .uptime_ms = h.uptime_ms,
	    .version = 9,
	    .new_templates = rv == NG_RS_TWO, /* held sets may decode now */
	    .has_uptime = true,
	};
	size_t o = 20, blen;
	uint16_t id;
	const uint8_t *b;
	/* §5.2–5.3: each FlowSet's length counts its header and stays inside
	 * the packet (ng_next_set counts the violations) */
	while (!v9_next_packet(p, len, o) && ng_next_set(dom, p, len, &o, &id, &b, &blen)) {
		if (id == 0) {
			v9_templates(&m, b, blen);
		} else if (id == 1) {
			v9_options(&m, b, blen);
		} else if (id < 256) {
			ng_count_error(dom, NG_DERR_BAD_SET_ID); /* §5.2: 2..255 reserved */
		} else {
			struct ng_tpl *t = ng_tpl_current(d, dom, 9, id);
			if (t)
				ng_data_set(&m, t, b, blen);
			else
				ng_held_add(&m, id, b, blen);
		}
	}
	if (m.new_templates && dom->ex->held)
		ng_held_replay(&m);
	if (v9_next_packet(p, len, o)) {
		dom->st.packets_concatenated++;
		dom->st.bytes -= len - o; /* counted again as the next packet's */
		*next = o;
	}
	return m.appended;
}

size_t ng_decode_v9(ng_decoder *d, const ng_datagram *dg, ng_flow_batch *out)
{
	ng_datagram one = *dg;
	size_t n = 0, next;
	for (;;) {
		n += v9_packet(d, &one, out, &next);
		if (!next)
			return n;
		one.data += next;
		one.len -= next;
	}
}
