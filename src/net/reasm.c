/*
 * reasm.c — IPFIX messages out of a byte stream (see reasm.h).
 *
 * Two phases per message: the 16 header bytes into r->hdr, then, once the
 * Length is known and checked, the rest into r->msg (grown to it, header
 * copied first).  Reads are cut at the message end, so the buffer never
 * holds bytes of the next message and nothing is ever moved.
 */
#include "net/reasm.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/bytes.h"

void ng_reasm_init(ng_reasm *r)
{
	memset(r, 0, sizeof *r);
	r->need = NG_REASM_HEADER;
}

void ng_reasm_free(ng_reasm *r)
{
	free(r->msg);
	ng_reasm_init(r);
}

uint8_t *ng_reasm_dst(ng_reasm *r, size_t *want)
{
	*want = r->need - r->have;
	if (r->need == NG_REASM_HEADER && r->have < NG_REASM_HEADER)
		return r->hdr + r->have;
	return r->msg + r->have;
}

/* The header is whole: check it (RFC 7011 §3.1: Version 10; Length counts
 * the header) and make room for the message. */
static int header_done(ng_reasm *r)
{
	uint16_t version = ng_get_be16(r->hdr), len = ng_get_be16(r->hdr + 2);
	if (version != 10 || len < NG_REASM_HEADER)
		return NG_REASM_BAD;
	if (r->cap < len) {
		uint8_t *m = realloc(r->msg, len);
		if (!m)
			return NG_REASM_NOMEM;
		r->msg = m;
		r->cap = len;
	}
	memcpy(r->msg, r->hdr, NG_REASM_HEADER);
	r->need = len;
	return NG_REASM_MORE;
}

int ng_reasm_got(ng_reasm *r, size_t n, const uint8_t **msg, size_t *len)
{
	bool in_header = r->need == NG_REASM_HEADER && r->have < NG_REASM_HEADER;
	r->have += n;
	if (r->have < r->need)
		return NG_REASM_MORE;
	if (in_header) {
		int rc = header_done(r);
		if (rc != NG_REASM_MORE || r->have < r->need)
			return rc;
	}
	/* whole: a 16-byte message (a header alone) also ends here */
	*msg = r->msg;
	*len = r->need;
	r->have = 0;
	r->need = NG_REASM_HEADER;
	return NG_REASM_MESSAGE;
}
