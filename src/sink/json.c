/* json.c — flow records as NDJSON (see json.h). */
#include "sink/json.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/addr.h"
#include "core/strtab.h"
#include "core/timefmt.h"

/* Writes `s` as a JSON string (RFC 8259 §7): quote, backslash and control
 * characters escaped; other bytes (UTF-8) as they are.  At most
 * 2 + 6 × strlen(s) bytes plus a NUL. */
static size_t json_string(const char *s, char *buf)
{
	static const char hex[] = "0123456789abcdef";
	char *p = buf;
	*p++ = '"';
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\') {
			*p++ = '\\';
			*p++ = (char)ch;
		} else if (ch < 0x20 || ch == 0x7f) {
			memcpy(p, "\\u00", 4);
			p[4] = hex[ch >> 4];
			p[5] = hex[ch & 15];
			p += 6;
		} else {
			*p++ = (char)ch;
		}
	}
	*p++ = '"';
	*p = 0;
	return (size_t)(p - buf);
}

size_t ng_json_format_value(const ng_field *f, const ng_flow *r, char *buf)
{
	char tmp[NG_ADDR_STRLEN];
	switch (f->type) {
	case NG_FT_ADDR:
		return (size_t)sprintf(buf, "\"%s\"", ng_addr_format(ng_field_ptr(f, r), tmp));
	case NG_FT_MAC:
		return (size_t)sprintf(buf, "\"%s\"", ng_mac_format(ng_field_ptr(f, r), tmp));
	case NG_FT_TIME:
		return (size_t)sprintf(buf, "\"%s\"", ng_time_format(ng_field_get_uint(f, r), tmp));
	case NG_FT_STR: return json_string(ng_str((uint32_t)ng_field_get_uint(f, r)), buf);
	default:
		if (f->id == NG_F_SAMPLING_SOURCE)
			return (size_t)sprintf(buf, "\"%s\"",
			                       ng_sampling_source_name(r->sampling_source));
		return (size_t)sprintf(buf, "%" PRIu64, ng_field_get_uint(f, r));
	}
}

size_t ng_json_format_flow(const ng_flow *r, char *buf)
{
	char *p = buf;
	*p++ = '{';
	for (size_t i = 0; i < NG_FIELD_COUNT; i++) {
		const ng_field *f = &ng_fields[i];
		if (i)
			*p++ = ',';
		*p++ = '"';
		size_t klen = strlen(f->name);
		memcpy(p, f->name, klen);
		p += klen;
		*p++ = '"';
		*p++ = ':';
		p += ng_json_format_value(f, r, p);
	}
	*p++ = '}';
	*p++ = '\n';
	return (size_t)(p - buf);
}

int ng_json_write_flows(FILE *out, const ng_flow *flows, size_t n)
{
	char line[NG_JSON_LINE_MAX];
	for (size_t i = 0; i < n; i++) {
		size_t len = ng_json_format_flow(&flows[i], line);
		if (fwrite(line, 1, len, out) != len)
			return -1;
	}
	return 0;
}
