/*
 * output.h — query results as text: an aligned table in the style of
 * nfdump's -s output, CSV with exact numbers, or NDJSON.
 *
 * NDJSON of a flow listing is the sink's record format (src/sink/json.h);
 * the query layer sits below the sink, so the CLI prints listings as NDJSON
 * itself, and this file only writes NDJSON for aggregated rows.
 */
#ifndef NG_OUTPUT_H
#define NG_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

#include "query/query.h"

enum ng_format { NG_FMT_TABLE, NG_FMT_CSV, NG_FMT_NDJSON };

/* "table", "csv", "ndjson" (also "json").  False when unknown. */
bool ng_format_parse(const char *s, enum ng_format *out);

/* Writes field f's value at p (f->size bytes) as text into buf (≥ 64
 * bytes): integers in decimal, addresses dotted quad / RFC 5952, MACs
 * aa:bb:..., times RFC 3339 UTC with ms, sampling_source by name.
 * Returns the length (NUL-terminated). */
size_t ng_format_value(const ng_field *f, const uint8_t *p, char *buf);

/* nfdump-style scaled number: "123", "12.3 k", "1.2 M", "3.4 G" (×1000),
 * into buf (≥ 32 bytes).  Returns buf. */
char *ng_format_scaled(double v, char *buf);

/* Writes the top-N groups of res.  `header`: the title and column header
 * lines (table), the header line (CSV).  Returns 0, -1 on a write error. */
int ng_output_top(FILE *out, const ng_query *q, const ng_query_result *res, enum ng_format fmt,
		  bool header);

/* Writes the listed flows of res as a table or CSV (not NDJSON: see
 * above).  Returns 0, -1 on a write error. */
int ng_output_list(FILE *out, const ng_query_result *res, enum ng_format fmt, bool header);

/* The summary: flows, bytes, packets, averages, time window, segments
 * read/skipped/corrupt, rows scanned, elapsed.  Several lines. */
void ng_output_summary(FILE *out, const ng_query_result *res);

#endif
