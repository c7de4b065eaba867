/*
 * sql.c — the builder of ClickHouse SQL text and its quoting functions,
 * one per type of value (sql.h has the literals and why they are safe).
 *
 * The rule the quoting keeps: what a string literal holds is printable
 * ASCII with every ' and \ behind a backslash, so the only unescaped
 * quote is the closing one, whatever the bytes given; ng_ch_sql_shape
 * reads literals by the same rule, which is ClickHouse's (a backslash
 * takes the byte after it, \xHH two hex digits more), and is what the
 * tests use to show a value did not change a statement.
 */
#include "clickhouse/sql.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ng_ch_sql_free(ng_ch_sql *q)
{
	free(q->s);
	memset(q, 0, sizeof *q);
}

/* Room for n more bytes and the NUL; false (failed set) when past the
 * bound or out of memory. */
static bool room(ng_ch_sql *q, size_t n)
{
	if (q->failed)
		return false;
	if (q->len + n > NG_CH_SQL_MAX) {
		q->failed = q->too_long = true;
		return false;
	}
	if (q->len + n + 1 > q->cap) {
		size_t cap = q->cap ? q->cap : 256;
		while (cap < q->len + n + 1)
			cap *= 2;
		char *s = realloc(q->s, cap);
		if (!s) {
			q->failed = true;
			return false;
		}
		q->s = s;
		q->cap = cap;
	}
	return true;
}

static void put(ng_ch_sql *q, const char *b, size_t n)
{
	if (!room(q, n))
		return;
	memcpy(q->s + q->len, b, n);
	q->len += n;
	q->s[q->len] = 0;
}

void ng_ch_sql_raw(ng_ch_sql *q, const char *text)
{
	put(q, text, strlen(text));
}

void ng_ch_sql_str(ng_ch_sql *q, const void *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const uint8_t *b = s;
	/* at most 4 bytes per byte, and the quotes: one check for all */
	if (len > NG_CH_SQL_MAX) {
		q->failed = q->too_long = true;
		return;
	}
	if (!room(q, len * 4 + 2))
		return;
	char *o = q->s + q->len;
	*o++ = '\'';
	for (size_t i = 0; i < len; i++) {
		uint8_t c = b[i];
		if (c == '\'' || c == '\\') {
			*o++ = '\\';
			*o++ = (char)c;
		} else if (c >= 0x20 && c <= 0x7e) {
			*o++ = (char)c;
		} else {
			*o++ = '\\';
			*o++ = 'x';
			*o++ = hex[c >> 4];
			*o++ = hex[c & 15];
		}
	}
	*o++ = '\'';
	*o = 0;
	q->len = (size_t)(o - q->s);
}

uint64_t ng_ch_sql_uint_max(unsigned size)
{
	return size >= 8 ? UINT64_MAX : (UINT64_C(1) << (8 * size)) - 1;
}

int ng_ch_sql_uint(ng_ch_sql *q, uint64_t v, uint64_t max)
{
	if (v > max)
		return -1;
	char b[24];
	int n = snprintf(b, sizeof b, "%llu", (unsigned long long)v);
	put(q, b, (size_t)n);
	return 0;
}

void ng_ch_sql_addr(ng_ch_sql *q, const uint8_t a[16], const ng_ch_server *sv)
{
	if (sv && sv->ipv6) {
		char t[INET6_ADDRSTRLEN];
		if (!inet_ntop(AF_INET6, a, t, sizeof t)) { /* cannot fail for 16 bytes */
			q->failed = true;
			return;
		}
		ng_ch_sql_raw(q, "toIPv6(");
		ng_ch_sql_str(q, t, strlen(t));
		ng_ch_sql_raw(q, ")");
		return;
	}
	ng_ch_sql_str(q, a, 16);
}

void ng_ch_sql_mac(ng_ch_sql *q, const uint8_t m[6])
{
	ng_ch_sql_str(q, m, 6);
}

static bool ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int shape_fail(char *err, size_t errlen, size_t at, const char *why)
{
	snprintf(err, errlen, "%s at byte %zu", why, at);
	return -1;
}

int ng_ch_sql_shape(const char *sql, size_t len, ng_ch_sql *out, char *err, size_t errlen)
{
	long depth = 0;
	for (size_t i = 0; i < len;) {
		char c = sql[i];
		if ((unsigned char)c < 0x20 || (unsigned char)c > 0x7e)
			return shape_fail(err, errlen, i, "a byte outside printable ASCII");
		if (c == '\'') {
			size_t at = i++;
			for (;;) {
				if (i >= len)
					return shape_fail(err, errlen, at,
					                  "a string literal not closed");
				char d = sql[i];
				if ((unsigned char)d < 0x20 || (unsigned char)d > 0x7e)
					return shape_fail(
					    err, errlen, i,
					    "a byte outside printable ASCII in a literal");
				if (d == '\'') {
					i++;
					break;
				}
				if (d == '\\') {
					if (i + 1 >= len)
						return shape_fail(err, errlen, at,
						                  "a string literal not closed");
					if (sql[i + 1] == 'x') {
						if (i + 3 >= len || !is_hex(sql[i + 2]) ||
						    !is_hex(sql[i + 3]))
							return shape_fail(
							    err, errlen, i,
							    "a \\x escape without two hex "
							    "digits");
						i += 4;
					} else {
						i += 2;
					}
					continue;
				}
				i++;
			}
			ng_ch_sql_raw(out, "?");
			continue;
		}
		if (c == '"' || c == '`')
			return shape_fail(err, errlen, i, "a quoted identifier");
		if ((c == '-' && i + 1 < len && sql[i + 1] == '-') ||
		    (c == '/' && i + 1 < len && sql[i + 1] == '*') || c == '#')
			return shape_fail(err, errlen, i, "a comment");
		if (c == '(')
			depth++;
		if (c == ')' && --depth < 0)
			return shape_fail(err, errlen, i, "a ')' without '('");
		if (c >= '0' && c <= '9' && !(i && ident_char(sql[i - 1]))) {
			while (i < len && ident_char(sql[i]))
				i++;
			ng_ch_sql_raw(out, "?");
			continue;
		}
		put(out, &c, 1);
		i++;
	}
	if (depth)
		return shape_fail(err, errlen, len, "a '(' not closed");
	return out->failed ? shape_fail(err, errlen, len, "out of memory") : 0;
}
