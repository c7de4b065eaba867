/*
 * json.h — flow records as NDJSON, one object a line.
 *
 * Keys are the field names of src/core/field.c (docs/fields.md).  Numbers
 * are exact integers; addresses in text form (dotted quad for IPv4, RFC
 * 5952 for IPv6); times RFC 3339 UTC with milliseconds; sampling_source
 * by name.  Used by `nagare decode`, `collect --json` and
 * `query --format ndjson`, so all three print the same record the same way.
 */
#ifndef NG_JSON_H
#define NG_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/field.h"
#include "core/json.h"
#include "core/strtab.h"
#include "core/flow.h"

/* Longest line ng_json_format_flow can write, newline included: the fixed
 * fields take under 3 KiB, each string field at most NG_JSON_STR_MAX. */
#define NG_JSON_STR_MAX NG_JSON_QUOTED_MAX(NG_STR_MAX)
#define NG_JSON_LINE_MAX (3072 + 32 * NG_JSON_STR_MAX)

/* Writes the record as one JSON object and a newline into buf (at least
 * NG_JSON_LINE_MAX bytes).  Returns the length written, without a NUL. */
size_t ng_json_format_flow(const ng_flow *r, char *buf);

/* Writes one field's value as JSON (a number, or a quoted string for
 * addresses, MACs, times, sampling_source and string fields, escaped by
 * core/json.h).  buf holds at least 64 bytes, NG_JSON_STR_MAX for a string
 * field; returns the length written (NUL-terminated). */
size_t ng_json_format_value(const ng_field *f, const ng_flow *r, char *buf);

/* Appends NDJSON lines for `n` records to `out`.  Returns 0, or -1 when
 * the stream reports a write error (errno set). */
int ng_json_write_flows(FILE *out, const ng_flow *flows, size_t n);

#endif
