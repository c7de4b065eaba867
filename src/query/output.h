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

#include "query/pairs.h"
#include "query/sankey.h"
#include "query/query.h"
#include "query/series.h"

/* NG_FMT_JSON: one document {"query":{...},"rows":[...],"summary":{...}}
 * (what the HTTP API serves); the others as their names say. */
enum ng_format { NG_FMT_TABLE, NG_FMT_CSV, NG_FMT_NDJSON, NG_FMT_JSON };

/* "table", "csv", "ndjson", "json".  False when unknown. */
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

/* ---- every result kind, every format ------------------------------------
 *
 * The functions below write one result in o->fmt.  Table: a title and
 * column header (o->header), rows, and the summary lines after a blank
 * line (o->summary).  CSV and NDJSON: a header line (CSV, o->header) and
 * one line a row; no summary (the CLI prints it to stderr).  JSON: one
 * document {"query": {kind, filter, from, to, keys, order, limit, ...},
 * "rows": [...], "summary": {...}} with exact integers, the summary
 * included when o->summary.  Numbers in machine formats are exact
 * integers (rates: integer division, as nfdump).  Each returns 0, or -1
 * on a write error.
 */
typedef struct ng_output_opts {
	enum ng_format fmt;
	bool header;
	bool summary;
	const char *filter; /* the filter text, echoed in JSON; may be NULL */
} ng_output_opts;

/* Key j of q at key bytes k (the key's offset in the row) as text into
 * buf (≥ 80 bytes): prefixes as ADDR/LEN, buckets as times, protocols by
 * name when `names`.  Returns buf. */
char *ng_format_key(const ng_query *q, size_t j, const uint8_t *k, bool names, char *buf);

/* -s: the top-N table, percentages of the totals (nfdump -s). */
int ng_write_top(FILE *out, const ng_query *q, const ng_query_result *res, const ng_output_opts *o);

/* -A: aggregated records (nfdump -A), in the order of res->rows. */
int ng_write_agg(FILE *out, const ng_query *q, const ng_query_result *res, const ng_output_opts *o);

/* A listing of flows (every field in CSV, NDJSON and JSON). */
int ng_write_list(FILE *out, const ng_query *q, const ng_query_result *res,
                  const ng_output_opts *o);

/* --interval: one row a (bucket, series): time, key, flows, packets,
 * bytes, bps, pps (over the bucket). */
int ng_write_series(FILE *out, const ng_query *q, const ng_series *s, const ng_output_opts *o);

/* A Sankey (JSON only): "rows" its links, stage by stage, best first;
 * "stages" each stage's field and nodes (best first, "other" last). */
int ng_write_sankey(FILE *out, const ng_query *q, const ng_sankey *s, const ng_output_opts *o);

/* What a JSON series answer may carry besides its rows (GET
 * /api/v1/series, docs/api.md): the reverse direction (its query, whose
 * keys are q's reversed, and its series) and the previous period's total
 * (a series without keys over the range prev_ms earlier; its times are
 * written shifted by prev_ms, onto the current range).  NULL: none. */
typedef struct ng_series_extra {
	const ng_query *rq;
	const ng_series *rev;
	const ng_query *pq; /* the previous period's query (its range) */
	const ng_series *prev;
	uint64_t prev_ms;
} ng_series_extra;

/* ng_write_series with x's parts added ("reverse", "previous") when the
 * format is JSON; x may be NULL.  Returns 0, or -1 on a write error. */
int ng_write_series_ext(FILE *out, const ng_query *q, const ng_series *s, const ng_series_extra *x,
                        const ng_output_opts *o);

/* --pairs: one row an edge, "other" last. */
int ng_write_pairs(FILE *out, const ng_query *q, const ng_pairs *p, const ng_output_opts *o);

/* -B: one row a conversation, both directions' flows, packets, bytes.
 * q: as given to ng_bidir_run (keys defaulted the same way). */
int ng_write_bidir(FILE *out, const ng_query *q, const ng_bidir *b, const ng_output_opts *o);

#endif
