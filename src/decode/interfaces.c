/*
 * interfaces.c — interface names from options data (see decoder.h,
 * ng_decoder_take_interfaces).
 *
 * IPFIX (RFC 7011 §3.4.2.2) and NetFlow v9 (RFC 3954 §6.1) options records
 * may describe interfaces: the ifIndex as IE 10 ingressInterface (a scope
 * field in IPFIX, an option field in Cisco's v9 interface table) or a v9
 * scope of type 2 (Interface), with IE 82 interfaceName and IE 83
 * interfaceDescription (RFC 5102 §5.4.x / IANA registry; fixed-length and
 * NUL-padded in v9, usually variable-length in IPFIX).  Records that carry
 * neither name are ignored; the template is scanned only for options
 * templates, which are rare, so the data path is not touched.
 *
 * The same walk finds application names (Cisco NBAR / AVC, FortiGate):
 * IE 95 applicationId with IE 96 applicationName, else IE 94
 * applicationDescription, handed to apps.c.
 */
#include <stdlib.h>
#include <string.h>

#include "decode/decode_int.h"

#define IFQ_MAX 4096

struct ng_ifq {
	ng_if_info q[IFQ_MAX];
	size_t n;
	uint64_t dropped;
};

/* Copies a name field: stops at the first NUL (v9 pads with NULs), drops
 * trailing blanks, always terminates. */
static void copy_name(char *dst, size_t cap, const uint8_t *p, size_t len)
{
	size_t n = 0;
	while (n < len && n < cap - 1 && p[n])
		n++;
	while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
		n--;
	memcpy(dst, p, n);
	dst[n] = 0;
}

static uint32_t rd_uint(const uint8_t *p, size_t len)
{
	uint32_t v = 0;
	for (size_t i = len > 4 ? len - 4 : 0; i < len; i++)
		v = v << 8 | p[i];
	return v;
}

void ng_options_interfaces(struct ng_msg *m, const struct ng_tpl *t, const uint8_t *p, size_t len)
{
	ng_if_info in = {0};
	bool have_index = false, have_name = false;
	const uint8_t *app = NULL, *app_name = NULL, *app_desc = NULL;
	size_t app_len = 0, app_name_len = 0, app_desc_len = 0;
	size_t off = 0;
	for (uint16_t i = 0; i < t->nfields; i++) {
		const struct ng_tfield *f = &t->fields[i];
		size_t flen = f->len;
		if (flen == NG_VARLEN) { /* RFC 7011 §7 */
			if (off + 1 > len)
				return;
			flen = p[off++];
			if (flen == 255) {
				if (off + 2 > len)
					return;
				flen = (size_t)p[off] << 8 | p[off + 1];
				off += 2;
			}
		}
		if (flen > len - off)
			return;
		const uint8_t *v = p + off;
		off += flen;
		if (f->pen)
			continue;
		bool v9_scope = t->version == 9 && i < t->scope_count;
		if ((v9_scope && f->ie == 2) || (!v9_scope && f->ie == 10)) {
			if (flen >= 1 && flen <= 8) {
				in.index = rd_uint(v, flen);
				have_index = true;
			}
		} else if (!v9_scope && f->ie == 82) {
			copy_name(in.name, sizeof in.name, v, flen);
			have_name |= in.name[0] != 0;
		} else if (!v9_scope && f->ie == 83) {
			copy_name(in.description, sizeof in.description, v, flen);
			have_name |= in.description[0] != 0;
		} else if (!v9_scope && f->ie == 95 && flen) {
			app = v, app_len = flen;
		} else if (!v9_scope && f->ie == 96) {
			app_name = v, app_name_len = flen;
		} else if (!v9_scope && f->ie == 94) {
			app_desc = v, app_desc_len = flen;
		}
	}
	if (app && (app_name_len || app_desc_len)) {
		bool named = app_name_len && app_name[0];
		ng_app_learn(m, ng_app_key(app, app_len), named ? app_name : app_desc,
		             named ? app_name_len : app_desc_len);
	}
	if (!have_index || !have_name)
		return;
	ng_decoder *d = m->d;
	if (!d->ifq && !(d->ifq = calloc(1, sizeof *d->ifq)))
		return;
	if (d->ifq->n == IFQ_MAX) {
		d->ifq->dropped++;
		return;
	}
	memcpy(in.exporter, m->dom->ex->addr, 16);
	in.domain = m->dom->st.domain;
	d->ifq->q[d->ifq->n++] = in;
}

size_t ng_decoder_take_interfaces(ng_decoder *d, ng_if_info *out, size_t max)
{
	if (!d->ifq)
		return 0;
	size_t n = d->ifq->n < max ? d->ifq->n : max;
	memcpy(out, d->ifq->q, n * sizeof *out);
	memmove(d->ifq->q, d->ifq->q + n, (d->ifq->n - n) * sizeof *out);
	d->ifq->n -= n;
	return n;
}

uint64_t ng_decoder_interfaces_dropped(const ng_decoder *d)
{
	return d->ifq ? d->ifq->dropped : 0;
}

void ng_ifq_free(ng_decoder *d)
{
	free(d->ifq);
	d->ifq = NULL;
}
