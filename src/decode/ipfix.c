/*
 * ipfix.c — IPFIX messages, RFC 7011 (information elements: RFC 7012).
 *
 *   Message Header (§3.1), 16 bytes:
 *     version = 10 (2) | length (2, whole message) | export time (4, s) |
 *     sequence number (4) | observation domain ID (4)
 *   then Sets (§3.3.2): Set ID (2) | length (2) | records | padding,
 *     ID 2 = Template Set, 3 = Options Template Set, 0–1 and 4–255
 *     reserved, ≥ 256 = Data Set of that template.
 *
 * The sequence number counts data records sent before this message in
 * the observation domain (§3.1), so a gap is a number of lost records.
 * Several messages may sit back to back in one buffer (files, some
 * exporters); bytes after the last whole message are ignored.
 */
#include "decode/decode_int.h"

#include <string.h>

/* Largest believable forward gap, in records; beyond it = restart. */
#define IPFIX_MAX_GAP 10000000u

/*
 * Field specifiers (§3.2): IE (2, bit 15 = enterprise bit) | length (2)
 * [| enterprise number (4) when the bit is set].  Parses `cnt` of them at
 * p[*o], bounded by len.  Returns false when they do not fit the set.
 */
static bool parse_fields(const uint8_t *p, size_t len, size_t *o, uint16_t cnt,
                         struct ng_tfield *fl)
{
	size_t off = *o;
	for (uint16_t i = 0; i < cnt; i++) {
		if (len - off < 4)
			return false;
		uint16_t ie = ng_get_be16(p + off);
		fl[i].len = ng_get_be16(p + off + 2);
		fl[i].pen = 0;
		off += 4;
		if (ie & 0x8000) {
			/* §3.2: the Enterprise Number follows the length */
			if (len - off < 4)
				return false;
			fl[i].pen = ng_get_be32(p + off);
			off += 4;
			ie &= 0x7fff;
		}
		fl[i].ie = ie;
	}
	*o = off;
	return true;
}

/* Template Set (§3.4.1) or Options Template Set (§3.4.2.2) body. */
static void ipfix_templates(struct ng_msg *m, const uint8_t *p, size_t len, bool options)
{
	struct ng_tfield *fl = m->d->scratch;
	size_t o = 0;
	/* §3.3.1: fewer bytes than a template record header is padding */
	while (len - o >= 4) {
		uint16_t tid = ng_get_be16(p + o), cnt = ng_get_be16(p + o + 2);
		if (tid == 0 && ng_all_zero(p + o, len - o))
			return; /* zero padding (§3.3.1) */
		o += 4;
		if (cnt == 0) {
			/* §8.1 Template Withdrawal: field count 0; ID 2 (3 in
			 * an Options Template Set) withdraws all of that kind */
			if (tid == (options ? 3 : 2))
				ng_tpl_withdraw_all(m->d, m->dom, 10, options);
			else if (tid >= 256)
				ng_tpl_withdraw(m->d, m->dom, 10, tid);
			else
				ng_count_error(m->dom, NG_DERR_TEMPLATE_ID_BAD);
			continue;
		}
		uint16_t scope = 0;
		if (options) {
			/* §3.4.2.2: Scope Field Count follows the field count */
			if (len - o < 2) {
				ng_count_error(m->dom, NG_DERR_TEMPLATE_BAD);
				return;
			}
			scope = ng_get_be16(p + o);
			o += 2;
		}
		if (ng_unlikely(!parse_fields(p, len, &o, cnt, fl))) {
			ng_count_error(m->dom, NG_DERR_TEMPLATE_BAD);
			return; /* record cut by the set end: nothing after it is sane */
		}
		m->dom->st.templates++;
		/* §3.4.1: Template IDs 0–255 are reserved */
		if (ng_unlikely(tid < 256)) {
			ng_count_error(m->dom, NG_DERR_TEMPLATE_ID_BAD);
			continue;
		}
		/* §3.4.2.2: "The Scope Field Count MUST NOT be zero" and counts
		 * fields of this record */
		if (options && ng_unlikely(scope == 0 || scope > cnt)) {
			ng_count_error(m->dom, NG_DERR_TEMPLATE_BAD);
			continue;
		}
		int e = ng_tpl_add(m->d, m->dom, 10, tid, options, scope, fl, cnt);
		if (e)
			ng_count_error(m->dom, (enum ng_decode_error)e);
		else
			m->new_templates = true;
	}
}

/* One message of `len` bytes (already checked to be ≥ 16 and inside the
 * datagram). */
static size_t ipfix_message(ng_decoder *d, const ng_datagram *dg, const uint8_t *p, size_t len,
                            ng_flow_batch *out)
{
	struct ng_domain *dom = ng_domain_get(d, dg->exporter, ng_get_be32(p + 12));
	if (!dom)
		return 0;
	ng_domain_seen(dom, dg, len, 10);
	/* §3.1 Sequence Number and Export Time: a restart makes the templates
	 * learnt before it stale (restart.c; §8: templates do not outlive
	 * the Exporting Process), before any Set is read */
	struct ng_rhdr h = {.received_ms = dg->time_received,
	                    .export_ms = (uint64_t)ng_get_be32(p + 4) * 1000,
	                    .seq = ng_get_be32(p + 8),
	                    .port = dg->exporter_port,
	                    .version = 10};
	enum ng_restart_verdict rv = ng_restart_check(d, dom, &h);
	struct ng_msg m = {
	    .d = d,
	    .dom = dom,
	    .out = out,
	    .time_received = dg->time_received,
	    .export_ms = h.export_ms,
	    .version = 10,
	    .new_templates = rv == NG_RS_TWO, /* held sets may decode now */
	};
	size_t o = 16, blen;
	uint16_t id;
	const uint8_t *b;
	/* §3.3.2: each Set's length counts its header and stays inside the
	 * message (ng_next_set counts the violations) */
	while (ng_next_set(dom, p, len, &o, &id, &b, &blen)) {
		if (id == 2 || id == 3) {
			ipfix_templates(&m, b, blen, id == 3);
		} else if (id < 256) {
			ng_count_error(dom, NG_DERR_BAD_SET_ID); /* §3.3.2: 0, 1, 4..255 reserved */
		} else {
			struct ng_tpl *t = ng_tpl_current(d, dom, 10, id);
			if (t)
				ng_data_set(&m, t, b, blen);
			else
				ng_held_add(&m, id, b, blen);
		}
	}
	if (m.new_templates && dom->ex->held)
		ng_held_replay(&m);
	/* §3.1 sequence: records of this message move it on; a message
	 * with undecodable sets leaves the count unknown: resynchronise */
	ng_seq_check(&dom->seq, h.seq, (uint32_t)m.records, IPFIX_MAX_GAP, &dom->st.lost);
	if (m.missed)
		dom->seq.valid = false;
	return m.appended;
}

size_t ng_decode_ipfix(ng_decoder *d, const ng_datagram *dg, ng_flow_batch *out)
{
	const uint8_t *p = dg->data;
	size_t len = dg->len, o = 0, n = 0;
	/* §3.1: the Message Header is 16 bytes */
	if (ng_unlikely(len < 16)) {
		struct ng_domain *dom = ng_domain_get(d, dg->exporter, 0);
		if (dom) {
			ng_domain_seen(dom, dg, len, 10);
			ng_count_error(dom, NG_DERR_SHORT_HEADER);
		}
		return 0;
	}
	while (len - o >= 16 && ng_get_be16(p + o) == 10) {
		size_t mlen = ng_get_be16(p + o + 2);
		/* §3.1: Length is the whole message, header included; a
		 * message longer than the datagram is decoded as far as it
		 * goes (each set is still bounds-checked) and counted */
		if (ng_unlikely(mlen < 16)) {
			struct ng_domain *dom =
			    ng_domain_get(d, dg->exporter, ng_get_be32(p + o + 12));
			if (dom) {
				ng_domain_seen(dom, dg, len - o, 10);
				ng_count_error(dom, NG_DERR_BAD_LENGTH);
			}
			break;
		}
		if (ng_unlikely(mlen > len - o)) {
			struct ng_domain *dom =
			    ng_domain_get(d, dg->exporter, ng_get_be32(p + o + 12));
			ng_count_error(dom, NG_DERR_BAD_LENGTH);
			mlen = len - o;
		}
		n += ipfix_message(d, dg, p + o, mlen, out);
		o += mlen;
	}
	return n;
}
