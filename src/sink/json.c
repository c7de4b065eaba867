/* json.c — flow records as NDJSON (see json.h). */
#include "sink/json.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/addr.h"
#include "core/json.h"
#include "core/strtab.h"
#include "core/timefmt.h"

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
	case NG_FT_STR: {
		const char *s = ng_str((uint32_t)ng_field_get_uint(f, r));
		return ng_json_quote(buf, s, strlen(s));
	}
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
