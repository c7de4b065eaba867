/*
 * ch_sql_check.h — what the tests and the fuzz target of the ClickHouse
 * filter compiler (query/filter_sql.h) hold its output to, beyond
 * ng_ch_sql_shape's well-formedness (literals closed, parentheses
 * balanced, printable ASCII, no comment, no quoted identifier): every
 * word outside the literals is nagare's own, a column of the field table
 * or one of the keywords and functions filter_sql.c writes.  A user's
 * value that escaped its literal would show up as a word of its own.
 */
#ifndef NG_CH_SQL_CHECK_H
#define NG_CH_SQL_CHECK_H

#include <stdbool.h>
#include <string.h>

#include "core/field.h"

/* True when every word ([A-Za-z_][A-Za-z0-9_]*) of the shape s is a
 * field name, a word filter_sql.c writes or (when `statement`) one that
 * top_sql.c's statement around it writes; *bad gets the first other. */
static inline bool ch_sql_words_in(const char *s, bool statement, const char **bad)
{
	static const char *const stmt[] = {
	    "SELECT", "FROM", "WHERE", "GROUP", "BY", "ORDER", "DESC", "ASC",    "LIMIT", "AS",
	    "min",    "max",  "count", "sum",   "f_", "p_",    "b_",   "nagare", "flows"};
	static const char *const own[] = {"AND",   "OR",       "NOT",      "IN",
	                                  "lower", "position", "bitAnd",   "bitShiftRight",
	                                  "if",    "intDiv",   "greatest", "toIPv6"};
	while (*s) {
		bool start = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_';
		if (!start) {
			s++;
			continue;
		}
		size_t n = 0;
		while ((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z') ||
		       (s[n] >= '0' && s[n] <= '9') || s[n] == '_')
			n++;
		bool ok = false;
		for (size_t i = 0; !ok && i < sizeof own / sizeof own[0]; i++)
			ok = strlen(own[i]) == n && !strncmp(own[i], s, n);
		for (size_t i = 0; statement && !ok && i < sizeof stmt / sizeof stmt[0]; i++)
			ok = strlen(stmt[i]) == n && !strncmp(stmt[i], s, n);
		for (unsigned f = 0; !ok && f < NG_FIELD_COUNT; f++)
			ok = strlen(ng_fields[f].name) == n && !strncmp(ng_fields[f].name, s, n);
		if (!ok) {
			if (bad)
				*bad = s;
			return false;
		}
		s += n;
	}
	return true;
}

/* True when every word of the shape s is one that a statement of the
 * query model (query/query_sql.c) may hold: those of ch_sql_words_in,
 * the functions and words query_sql.c writes, and its aliases k<N>_,
 * k<N>h_, k<N>l_, k<N>x_; *bad gets the first other. */
static inline bool ch_sql_query_words_ok(const char *s, const char **bad)
{
	static const char *const qw[] = {"arrayJoin",
	                                 "reinterpretAsString",
	                                 "reinterpretAsUInt64",
	                                 "reverse",
	                                 "substring",
	                                 "toUInt64",
	                                 "toFloat64",
	                                 "IPv6StringToNum",
	                                 "IPv6NumToString",
	                                 "FORMAT",
	                                 "RowBinary",
	                                 "s_",
	                                 "e_",
	                                 "HAVING",
	                                 "lower",
	                                 "toString",
	                                 "WITH",
	                                 "TOTALS",
	                                 "JSONCompact",
	                                 "hex"};
	while (*s) {
		bool start = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_';
		if (!start) {
			s++;
			continue;
		}
		size_t n = 0;
		while ((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z') ||
		       (s[n] >= '0' && s[n] <= '9') || s[n] == '_')
			n++;
		bool ok = false;
		for (size_t i = 0; !ok && i < sizeof qw / sizeof qw[0]; i++)
			ok = strlen(qw[i]) == n && !strncmp(qw[i], s, n);
		if (!ok && s[0] == 'k' && n >= 3 && s[n - 1] == '_') {
			size_t d = 1;
			while (d < n && s[d] >= '0' && s[d] <= '9')
				d++;
			ok = d > 1 && (d == n - 1 ||
			               (d == n - 2 && (s[d] == 'h' || s[d] == 'l' || s[d] == 'x')));
		}
		if (!ok) {
			char w[64];
			size_t m = n < sizeof w - 1 ? n : sizeof w - 1;
			memcpy(w, s, m);
			w[m] = 0;
			ok = ch_sql_words_in(w, true, NULL);
		}
		if (!ok) {
			if (bad)
				*bad = s;
			return false;
		}
		s += n;
	}
	return true;
}

/* The words of a WHERE expression (filter_sql.c) only. */
static inline bool ch_sql_words_ok(const char *s, const char **bad)
{
	return ch_sql_words_in(s, false, bad);
}

#endif
