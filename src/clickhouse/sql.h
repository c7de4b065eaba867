/*
 * sql.h — ClickHouse SQL text built by nagare, with user values written
 * only as literals by one quoting function per type.
 *
 * Debian's clickhouse-server 18.16 has no query parameters ({name:Type}
 * came in 19.11), so a value a user typed (a filter's address, port,
 * country …) reaches the server as a literal.  Every such value goes
 * through one of the ng_ch_sql_* quoting functions below; nagare's own
 * SQL (column names from the field table, keywords, functions) through
 * ng_ch_sql_raw.  The literals they write are:
 *
 *   strings   '…' in printable ASCII only: ' and \ escaped with a
 *             backslash, every other byte outside 0x20..0x7e (NUL,
 *             control bytes, bytes of UTF-8 or of invalid UTF-8) as
 *             \xHH.  ClickHouse reads string literals as bytes, with
 *             these escapes (docs "Syntax", "String": "\'", "\\", and
 *             "\xHH"; the same in 18.16's readEscapedString), so any
 *             byte string round-trips and no byte can end the literal.
 *   integers  decimal digits, after a check against the column's
 *             largest value.
 *   addresses 16 bytes IPv4-mapped: for a FixedString(16) column a
 *             string literal of the 16 bytes (\xHH each); for an IPv6
 *             column (19.3 on, schema.h) toIPv6('X:X::X') of the text
 *             inet_ntop writes (hex digits, ':' and '.').
 *   MACs      a string literal of the 6 bytes, for FixedString(6).
 *
 * ng_ch_sql_shape turns a statement back into its shape (every literal
 * replaced by '?') and checks it is well-formed: the tests and the fuzz
 * target (tests/fuzz/fuzz_ch_filter.c) hold the filter compiler
 * (query/filter_sql.h) to "a value never changes the statement's shape".
 *
 * A statement is bounded by NG_CH_SQL_MAX bytes (below the server's
 * default max_query_size, 262 144): past it the builder fails, and the
 * caller says so.
 */
#ifndef NG_CH_SQL_H
#define NG_CH_SQL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "clickhouse/schema.h"

#define NG_CH_SQL_MAX 200000

/* A statement being built: s[len] (NUL-terminated while not failed),
 * malloc'd, grown as needed.  `failed` is set, and sticks, when out of
 * memory or past NG_CH_SQL_MAX (`too_long`). */
typedef struct ng_ch_sql {
	char *s;
	size_t len, cap;
	bool failed, too_long;
} ng_ch_sql;

/* Frees q's text and clears it (a zeroed ng_ch_sql is empty). */
void ng_ch_sql_free(ng_ch_sql *q);

/* Appends nagare's own SQL text (never a user's value). */
void ng_ch_sql_raw(ng_ch_sql *q, const char *text);

/* Appends the string literal of the len bytes at s (any bytes; see the
 * essay for the escapes). */
void ng_ch_sql_str(ng_ch_sql *q, const void *s, size_t len);

/* Appends v in decimal when v <= max (the column type's largest value:
 * UINT8_MAX for UInt8 …); returns 0, or -1 and appends nothing. */
int ng_ch_sql_uint(ng_ch_sql *q, uint64_t v, uint64_t max);

/* The largest value of the integer column of a field of size bytes (1,
 * 2, 4, 8). */
uint64_t ng_ch_sql_uint_max(unsigned size);

/* Appends the literal of the address a[16] (IPv4-mapped for IPv4) for a
 * column of the type server sv gives addresses (ng_ch_column_type). */
void ng_ch_sql_addr(ng_ch_sql *q, const uint8_t a[16], const ng_ch_server *sv);

/* Appends the literal of the MAC m[6] for a FixedString(6) column. */
void ng_ch_sql_mac(ng_ch_sql *q, const uint8_t m[6]);

/*
 * The shape of the len bytes of SQL at sql into *out (appended): the text
 * with every string literal and every number replaced by '?'.  Returns 0,
 * or -1 with the reason in err[errlen] when the text is not well-formed:
 * a string literal not closed, a byte outside printable ASCII (in or out
 * of a literal), a ')' without '(' or a '(' not closed, a quote of
 * another kind (" or `) outside a literal, a comment (-- or / *).
 */
int ng_ch_sql_shape(const char *sql, size_t len, ng_ch_sql *out, char *err, size_t errlen);

#endif
