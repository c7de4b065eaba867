/*
 * store.h — the embedded flow store: a directory of immutable columnar
 * segments (format: docs/store-format.md and src/store/segment.c).
 *
 *   STORE/flows/YYYY/MM/DD/HH/<start>-<end>-<seq>.seg   immutable segments
 *   STORE/state/                                       templates, exporters
 *
 * Writers append flow records and flush segments; readers scan segments
 * that overlap a time range, decoding only the columns they ask for.
 * Readers take no lock: a segment appears by an atomic rename, whole.
 */
#ifndef NG_STORE_H
#define NG_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/field.h"
#include "core/flow.h"

/* ---- writing ---------------------------------------------------------- */

/*
 * Thread safety: append, due, flush and get_stats may be called from
 * different threads at once (e.g. append from the receive loop, flush from
 * a writer thread).  append holds a mutex only for a memcpy; flush takes
 * the whole buffer under that mutex and encodes and writes without it, so
 * appends go on meanwhile; two flushes run one after the other.  open and
 * close must not race with any other call on the same writer.
 *
 * Segments go to STORE/flows/YYYY/MM/DD/HH for the UTC hour of their rows'
 * flow_start (a flush is cut at hour boundaries), so every row of a
 * segment lies in its directory's hour.
 */
typedef struct ng_store_writer ng_store_writer;

typedef struct ng_store_writer_stats {
	uint64_t rows;        /* rows made durable */
	uint64_t segments;    /* segments written */
	uint64_t bytes;       /* segment bytes written */
	uint64_t errors;      /* failed segment writes (rows kept for retry) */
} ng_store_writer_stats;

/* Opens (creating when absent) the store at `dir` for appending.
 * Returns NULL and writes a message naming the path and the cause into
 * err[errlen] when the directory cannot be created or written. */
ng_store_writer *ng_store_writer_open(const char *dir, char *err, size_t errlen);

/* Copies `n` records into the writer's buffer.  Cheap: no I/O happens
 * here.  Returns 0, or -1 when out of memory or when 2^22 rows are already
 * buffered because flushes keep failing (the records are not taken: the
 * caller counts them as dropped). */
int ng_store_writer_append(ng_store_writer *w, const ng_flow *flows, size_t n);

/* True when the buffer holds ≥ 2^20 rows, or its first row was appended
 * ≥ 5000 ms before `now_ms` (wall clock, ms since the epoch); after a
 * failed flush, not before 1000 ms have passed (no busy retry loop). */
bool ng_store_writer_due(const ng_store_writer *w, uint64_t now_ms);

/* Writes every buffered record as one or more segments (sorted by
 * flow_start, encoded, zstd compressed, written to a temporary name,
 * fsynced, renamed, directory fsynced).  Returns 0, or -1 (logged, counted
 * in stats.errors) with the rows not yet written kept in the buffer for a
 * later retry. */
int ng_store_writer_flush(ng_store_writer *w);

void ng_store_writer_get_stats(const ng_store_writer *w, ng_store_writer_stats *st);

/* Flushes and frees.  Returns the flush's result. */
int ng_store_writer_close(ng_store_writer *w);

/* ---- reading ---------------------------------------------------------- */

/* Columns of one segment's rows that match the scan's time range.
 * col[f] points at `n` values of field f's type (ADDR: n × 16 bytes,
 * MAC: n × 6 bytes, others their integer width), or is NULL when f was not
 * requested.  Borrowed for the duration of the callback. */
typedef struct ng_column_batch {
	size_t n;
	const void *col[NG_FIELD_COUNT];
} ng_column_batch;

typedef struct ng_scan_stats {
	uint64_t segments_total;
	uint64_t segments_skipped;  /* by time range (zone maps) */
	uint64_t segments_read;
	uint64_t rows_scanned;
	uint64_t bytes_read;
	uint64_t errors;            /* unreadable or corrupt segments, skipped */
} ng_scan_stats;

/* Bit of field `f` in a column mask. */
#define NG_COL(f) (UINT64_C(1) << (f))

/*
 * Calls `fn` with the rows whose flow_start lies in [from_ms, to_ms),
 * decoding only the columns in `columns` (NG_COL bits; flow_start is always
 * decoded).  A call holds at most 16384 rows (one block of one segment),
 * in flow_start order within the call; segments come in the order of their
 * hour directories and first flow_start, so calls from different segments
 * of one hour may overlap in time.  Segments whose time range misses the
 * interval are skipped unopened.  A corrupt segment is counted in
 * st->errors, reported once on stderr naming its path, and skipped.
 * `fn` returns 0 to go on, non-zero to stop the scan (returned as is).
 * Returns 0, a callback's non-zero value, or -1 when `dir` is not a store.
 */
int ng_store_scan(const char *dir, uint64_t from_ms, uint64_t to_ms, uint64_t columns,
		  int (*fn)(const ng_column_batch *b, void *arg), void *arg, ng_scan_stats *st);

/* What a scan knows of a segment before opening it (from its file name:
 * the first and last row's flow_start). */
typedef struct ng_segment_info {
	const char *path;
	uint64_t start_min, start_max; /* ms */
} ng_segment_info;

/* ng_store_scan with more control.  Zero fields take the defaults. */
typedef struct ng_scan_opts {
	uint64_t from_ms, to_ms; /* flow_start in [from, to) */
	uint64_t columns;        /* NG_COL bits; flow_start always */
	int (*fn)(const ng_column_batch *b, void *arg);
	/* Optional: called, in scan order, for each segment that overlaps
	 * the range, before it is opened.  Returns true to read it, false to
	 * skip it (counted in segments_skipped): e.g. a listing that already
	 * holds its first N flows skips later segments. */
	bool (*want)(const ng_segment_info *s, void *arg);
	void *arg;
} ng_scan_opts;

int ng_store_scan_opts(const char *dir, const ng_scan_opts *o, ng_scan_stats *st);

/* Path of the store's state directory ("DIR/state"), created when absent.
 * Writes into buf[len]; returns buf or NULL when it cannot be created. */
char *ng_store_state_dir(const char *dir, char *buf, size_t len);

#endif
