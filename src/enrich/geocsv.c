/*
 * geocsv.c — the ASN ranges of ip-location-db as CSV (npm package
 * @ip-location-db/asn: asn-ipv4.csv, asn-ipv6.csv; RouteViews, the five
 * RIRs' delegations (NRO) and DB-IP IP-to-ASN Lite, CC BY 4.0).
 *
 * One row a range, RFC 4180 CSV (package README, "CSV Format"):
 *
 *   ip_range_start,ip_range_end,autonomous_system_number,autonomous_system_organization
 *   1.0.0.0,1.0.0.255,13335,"Cloudflare, Inc."
 *   2.26.200.0,2.26.215.255,201907,"LLC ""SPUTNIK"""
 *   2001:200::,2001:200:1b9:ffff:ffff:ffff:ffff:ffff,2500,WIDE Project
 *
 * Both ends are inclusive addresses of one family (inet_pton); the
 * organisation may be quoted (a doubled quote inside is one quote) or
 * bare, and may be missing.  A line that is not such a row (a header, a
 * range whose end is before its start or of two families, an AS number
 * that is not one, an unterminated quote, a field longer than
 * NG_GEOCSV_FIELD_MAX) is counted and skipped, the first one's line and
 * cause kept for the message: the file is a download, and a broken one
 * must say so rather than enrich half silently.
 *
 * This file only parses (bytes in, rows out through a callback: the
 * fuzz target tests/fuzz/fuzz_geocsv.c runs it alone); geoip.c turns the
 * rows into records and the lookup tries (geoflat.c).
 */
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "enrich/enrich_int.h"

/* One field of line `p` (up to `end`, the line's end), unquoted into
 * out[NG_GEOCSV_FIELD_MAX + 1] (NUL-terminated, *olen bytes).  *p moves
 * past the field and its comma.  Returns 0, or -1 with *why. */
static int field(const char **p, const char *end, char *out, size_t *olen, const char **why)
{
	const char *s = *p;
	size_t n = 0;
	if (s < end && *s == '"') { /* RFC 4180 §2.5-2.7 */
		s++;
		for (;;) {
			if (s >= end) {
				*why = "unterminated quote";
				return -1;
			}
			if (*s == '"') {
				if (s + 1 < end && s[1] == '"') {
					s++;
				} else {
					s++;
					break;
				}
			}
			if (n >= NG_GEOCSV_FIELD_MAX) {
				*why = "field too long";
				return -1;
			}
			out[n++] = *s++;
		}
		if (s < end && *s != ',') {
			*why = "text after a closing quote";
			return -1;
		}
	} else {
		while (s < end && *s != ',') {
			if (*s == '"') {
				*why = "quote inside a bare field";
				return -1;
			}
			if (n >= NG_GEOCSV_FIELD_MAX) {
				*why = "field too long";
				return -1;
			}
			out[n++] = *s++;
		}
	}
	if (s < end)
		s++; /* the comma */
	out[n] = 0;
	*olen = n;
	*p = s;
	return 0;
}

/* An address field: family (4, 6) and the 16 bytes (IPv4: the last 4). */
static int addr_field(const char *s, uint8_t a[16])
{
	memset(a, 0, 16);
	if (inet_pton(AF_INET, s, a + 12) == 1)
		return 4;
	if (inet_pton(AF_INET6, s, a) == 1)
		return 6;
	return 0;
}

/* One row; 0, or -1 with *why. */
static int row(const char *p, const char *end, ng_geocsv_row *r, char *name, const char **why)
{
	char f[NG_GEOCSV_FIELD_MAX + 1];
	size_t n;
	if (field(&p, end, f, &n, why) < 0)
		return -1;
	int fa = addr_field(f, r->lo);
	if (field(&p, end, f, &n, why) < 0)
		return -1;
	int fb = addr_field(f, r->hi);
	if (!fa || !fb) {
		*why = "not an address range (start,end,as,organisation)";
		return -1;
	}
	if (fa != fb) {
		*why = "the range's ends are of two families";
		return -1;
	}
	if (memcmp(r->lo, r->hi, 16) > 0) {
		*why = "the range ends before it starts";
		return -1;
	}
	r->v6 = fa == 6;
	if (field(&p, end, f, &n, why) < 0)
		return -1;
	char *e;
	unsigned long long as = strtoull(f, &e, 10);
	if (!n || *e || f[0] == '-' || as > UINT32_MAX) {
		*why = "the AS number is not a number up to 4294967295";
		return -1;
	}
	r->asn = (uint32_t)as;
	r->name_len = 0;
	if (p < end) {
		if (field(&p, end, name, &r->name_len, why) < 0)
			return -1;
		if (p < end) {
			*why = "more than 4 fields";
			return -1;
		}
	}
	r->name = name;
	return 0;
}

size_t ng_geocsv_parse(const char *buf, size_t len, ng_geocsv_fn fn, void *arg, ng_geocsv_stats *st)
{
	memset(st, 0, sizeof *st);
	char name[NG_GEOCSV_FIELD_MAX + 1];
	size_t line = 0;
	for (const char *p = buf, *stop = buf + len; p < stop;) {
		const char *nl = memchr(p, '\n', (size_t)(stop - p));
		const char *end = nl ? nl : stop;
		line++;
		const char *e = end > p && end[-1] == '\r' ? end - 1 : end;
		if (e > p) {
			ng_geocsv_row r;
			const char *why = NULL;
			if (row(p, e, &r, name, &why) == 0) {
				st->rows++;
				if (fn(arg, &r) < 0) {
					st->stopped = true;
					return st->rows;
				}
			} else if (!st->bad++) {
				st->first_bad_line = line;
				st->first_bad_why = why;
			}
		}
		p = nl ? nl + 1 : stop;
	}
	st->lines = line;
	return st->rows;
}
