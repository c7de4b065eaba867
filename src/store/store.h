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

#include "core/colset.h"
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
	uint64_t rows;         /* rows made durable */
	uint64_t segments;     /* segments written */
	uint64_t bytes;        /* segment bytes written */
	uint64_t errors;       /* failed segment writes (rows kept for retry) */
	uint64_t dropped;      /* rows refused by append: flushes fell behind
	                        * (2^22 rows waiting) or memory ran out */
	uint64_t deferred;     /* rows a flush left for the next one: their hour was
	                        * past NG_FLUSH_MAX_HOURS (the hours nearest the
	                        * wall clock are written first) */
	uint64_t chunks_freed; /* buffer chunks (NG_CHUNK_ROWS rows) given back to
	                        * the kernel: more than the last two minutes'
	                        * peak needed (writer.c, put_chunks) */
} ng_store_writer_stats;

/* Hours (so segments, but for an hour of over 2^20 rows) that one
 * ng_store_writer_flush call writes at most, whatever the rows' times:
 * at ~5.5 ms of fsyncs a segment (measured here) about 1.4 s.  The
 * collector's time window (collect.max_past + max_future, 169 hours by
 * default) keeps a flush of its records below it; rows of further hours
 * wait for the next flush (stats.deferred, logged). */
#define NG_FLUSH_MAX_HOURS 256

/* Opens (creating when absent) the store at `dir` for appending.
 * Returns NULL and writes a message naming the path and the cause into
 * err[errlen] when the directory cannot be created or written. */
ng_store_writer *ng_store_writer_open(const char *dir, char *err, size_t errlen);

/* How long the writer's chunk pool remembers its peak use, ms (default
 * 60 000): buffer chunks beyond the most in use at once over the last one
 * to two such windows are freed when a flush gives them back
 * (stats.chunks_freed).  For tests; the default suits collect. */
void ng_store_writer_set_pool_window(ng_store_writer *w, uint64_t ms);

/* Copies `n` records into the writer's buffer.  Cheap: no I/O happens
 * here.  Returns 0; 1 when this append made the buffer reach the size at
 * which a flush is due (2^18 rows: the caller should wake its flushing
 * thread now rather than at its next poll, so the buffer never has to
 * grow); or -1 when out of memory or when 2^22 rows are already buffered
 * because flushes keep failing (the records are not taken: the caller
 * counts them as dropped). */
int ng_store_writer_append(ng_store_writer *w, const ng_flow *flows, size_t n);

/* True when the buffer holds ≥ 2^18 rows, or its first row was appended
 * ≥ 5000 ms before `now_ms` (wall clock, ms since the epoch); after a
 * failed flush, not before 1000 ms have passed (no busy retry loop). */
bool ng_store_writer_due(const ng_store_writer *w, uint64_t now_ms);

/* Writes every buffered record as one or more segments (sorted by
 * flow_start, encoded, zstd compressed, written to a temporary name,
 * fsynced, renamed, directory fsynced): at most NG_FLUSH_MAX_HOURS hours
 * of them, those nearest the wall clock first; the rest stay buffered,
 * due again at once (stats.deferred).  Returns 0, or -1 (logged, counted
 * in stats.errors) with the rows not yet written kept in the buffer for a
 * later retry. */
int ng_store_writer_flush(ng_store_writer *w);

void ng_store_writer_get_stats(const ng_store_writer *w, ng_store_writer_stats *st);

/* The rows of one segment being written, for a derive function. */
typedef struct ng_store_cols ng_store_cols;

/* Rows in c. */
size_t ng_store_cols_rows(const ng_store_cols *c);

/* Column of field f of c's rows (ng_fields[f].size bytes a row), in the
 * order they are written and writable: what is left in it is stored.  A
 * field no row holds comes as zeros.  Owned by the writer, valid during
 * the derive call.  NULL when out of memory. */
uint8_t *ng_store_cols_get(ng_store_cols *c, enum ng_field_id f);

/* As ng_store_cols_get, for a caller that writes every row of the column:
 * a field no row holds comes unset rather than zeroed (the sanitizer
 * build fills it with 0xA5 bytes, so that a row left unwritten shows in
 * the tests).  A field some row holds comes as its rows, as from
 * ng_store_cols_get.  NULL when out of memory. */
uint8_t *ng_store_cols_get_whole(ng_store_cols *c, enum ng_field_id f);

/* Fills fields of the rows of a segment after they are sorted and before
 * they are encoded, column by column (the collector enriches there: see
 * docs/enrichment.md).  Called on the thread that flushes.  Returns 0, or
 * -1 when out of memory: the flush fails and its rows are kept for the
 * retry, which calls it again on the rows as appended. */
typedef int (*ng_store_derive_fn)(void *arg, ng_store_cols *c);

/* Sets the derive function of w's flushes (NULL: none, the default).
 * Call before the first flush; `arg` must outlive the writer's close. */
void ng_store_writer_set_derive(ng_store_writer *w, ng_store_derive_fn fn, void *arg);

/* Hands the columns of rows a flush has just made durable to another
 * output (the ClickHouse sink, sink/clickhouse.h): cols[f] is field f's
 * column, n values of ng_fields[f].size bytes in the segment's order,
 * NULL when no row holds the field; what the derive function filled is
 * in them.  The rows lie in one hour of flow_start.  Called on the
 * thread that flushes, after the segment is published (so a flush that
 * fails and is retried hands no row twice); the columns are valid during
 * the call only.  Must not fail: the output owns its own buffering. */
typedef void (*ng_store_tap_fn)(void *arg, const uint8_t *const *cols, size_t n);

/* Sets w's tap (NULL: none, the default).  With `segments` false the
 * flush writes no segment: it sorts, derives and hands the rows to the
 * tap only (collect with ClickHouse alone), and counts them in
 * stats.rows.  Call before the first flush; `arg` must outlive the
 * writer's close. */
void ng_store_writer_set_tap(ng_store_writer *w, ng_store_tap_fn fn, void *arg, bool segments);

/* Flushes every buffered row (as many flushes as their hours take) and
 * frees.  Returns the last flush's result. */
int ng_store_writer_close(ng_store_writer *w);

/* ---- reading ---------------------------------------------------------- */

/* Columns given to a scan's select callback as dictionary codes
 * (ng_scan_opts.select_codes): row i of field f is entry code[f][i] of
 * dict[f], k[f] entries stored as values of field f (its type and size);
 * stamp[f] changes whenever dict[f] does, so that a filter can keep its
 * answer per entry between the blocks of a segment. */
typedef struct ng_batch_codes {
	const uint32_t *code[NG_FIELD_COUNT]; /* NULL: the column is in col[] as values */
	const void *dict[NG_FIELD_COUNT];
	uint32_t k[NG_FIELD_COUNT];
	uint64_t stamp[NG_FIELD_COUNT];
} ng_batch_codes;

/* Columns of one segment's rows that match the scan's time range.
 * col[f] points at `n` values of field f's type (ADDR: n × 16 bytes,
 * MAC: n × 6 bytes, others their integer width), or is NULL when f was not
 * requested.  Borrowed for the duration of the callback. */
typedef struct ng_column_batch {
	size_t n;
	const void *col[NG_FIELD_COUNT];
	/* select only: columns given as codes instead (col[f] NULL), or NULL */
	const ng_batch_codes *codes;
	/* Where the rows sit in the scan's order (a parallel listing sorts
	 * by it to give the serial order): `segment` counts the segments in
	 * scan order from 0; row i is row pos[i] of that segment, or row0 + i
	 * when pos is NULL (consecutive rows). */
	uint64_t segment;
	uint64_t row0;
	const uint32_t *pos;
	/* Rows read from a rollup (ng_scan_opts.rollup): flows[i] is the
	 * number of flows row i sums; NULL: each row is one flow. */
	const uint64_t *flows;
} ng_column_batch;

/* Row i of b's index within its segment (see ng_column_batch). */
static inline uint64_t ng_batch_row(const ng_column_batch *b, size_t i)
{
	return b->pos ? b->pos[i] : b->row0 + i;
}

typedef struct ng_scan_stats {
	uint64_t segments_total;
	uint64_t segments_skipped; /* by time range, `want` or zone maps */
	uint64_t segments_read;
	uint64_t rows_scanned;
	uint64_t bytes_read;
	uint64_t errors;            /* unreadable or corrupt segments, skipped */
	uint64_t segments_pruned;   /* of segments_skipped: by may_match (zone maps) */
	uint64_t segments_replaced; /* superseded by a compacted segment: not counted in total */
	unsigned threads;           /* workers that scanned */
	uint64_t blocks_scanned;    /* blocks with rows in the time range */
	uint64_t blocks_decoded;    /* of these, blocks where ng_scan_opts.select kept a
	                             * row: their other columns were read (whole, or
	                             * only the kept rows when few) */
	uint64_t segments_rollup;   /* of segments_read, read through their rollup */
	uint64_t blocks_coded;      /* of blocks_scanned, blocks whose select got a column
	                             * as dictionary codes (ng_scan_opts.select_codes) */
	uint64_t segments_damaged;  /* of errors: segments found damaged (segment_check.c),
	                             * skipped whole; a query reports each once */
	uint64_t segments_vanished; /* kept by name in the snapshot (past its descriptor
	                             * budget) and unlinked before read: not read */
	uint64_t rollups_damaged;   /* rollups found damaged: their segment's rows read */
} ng_scan_stats;

/* Adds b's counts to a (threads: the larger). */
void ng_scan_stats_add(ng_scan_stats *a, const ng_scan_stats *b);

/* Per-column zone map of a segment: integer columns' smallest and largest
 * value (known[f]; a column the segment lacks reads as zeros: min = max =
 * 0, known).  Address columns whose rows are all IPv4-mapped: v4[f], and
 * min/max hold the IPv4 range as numbers (a.b.c.d = a << 24 | b << 16 |
 * c << 8 | d).  Otherwise (MAC, string, IPv6 rows) nothing is known. */
typedef struct ng_zone_map {
	uint64_t rows;
	bool known[NG_FIELD_COUNT];
	bool v4[NG_FIELD_COUNT];
	uint64_t min[NG_FIELD_COUNT], max[NG_FIELD_COUNT];
} ng_zone_map;

/*
 * Calls `fn` with the rows whose flow_start lies in [from_ms, to_ms),
 * decoding only the columns in `columns` (fields of the table; flow_start
 * is always decoded).  A call holds at most 16384 rows (one block of one
 * segment), in flow_start order within the call; segments come in the
 * order of their hour directories and first flow_start, so calls from
 * different segments of one hour may overlap in time.  Segments whose time
 * range misses the interval are skipped unopened.  Nothing of a segment
 * is passed on before its header, its frame tables and every block the
 * scan decodes have read whole, and every column when its hour's
 * `checked` file holds no verdict for it (or with NG_SEGMENT_CHECK=all;
 * verdict.c); a damaged one contributes no row, is counted in st->errors and
 * st->segments_damaged, reported once on stderr naming its path, and
 * skipped.
 * `fn` returns 0 to go on, non-zero to stop the scan (returned as is).
 * Returns 0, a callback's non-zero value, or -1 when `dir` is not a store.
 */
int ng_store_scan(const char *dir, uint64_t from_ms, uint64_t to_ms, ng_colset columns,
                  int (*fn)(const ng_column_batch *b, void *arg), void *arg, ng_scan_stats *st);

/* What a scan knows of a segment before opening it (from its file name:
 * the first and last row's flow_start). */
typedef struct ng_segment_info {
	const char *path;
	uint64_t start_min, start_max; /* ms */
} ng_segment_info;

/* ---- snapshots (snapshot.c) ---------------------------------------------
 *
 * The segments of a time range, listed once: every scan given the same
 * snapshot reads the same set, whatever the writer, compaction or
 * retention do meanwhile (segments are held open; see snapshot.c for the
 * bound on descriptors).  A command or an API request takes one and
 * passes it to all its scans (ng_scan_opts.snap, ng_query.snap).
 * Thread-safe for concurrent scans; take and free on one thread. */
typedef struct ng_store_snapshot ng_store_snapshot;

/* Lists (and opens) the segments of store `dir` whose flow_start range
 * meets [from_ms, to_ms).  Returns NULL with errno ENOENT when `dir` is
 * not a store, ENOMEM when out of memory. */
ng_store_snapshot *ng_store_snapshot_take(const char *dir, uint64_t from_ms, uint64_t to_ms);
void ng_store_snapshot_free(ng_store_snapshot *s);

/* Segments listed (held open or by name). */
size_t ng_store_snapshot_segments(const ng_store_snapshot *s);

/* The segments of s meeting [from_ms, to_ms) that scans found damaged so
 * far: calls fn (when not NULL) with each one's path and what was wrong,
 * and returns their count. */
uint64_t ng_store_snapshot_damaged(const ng_store_snapshot *s, uint64_t from_ms, uint64_t to_ms,
                                   void (*fn)(const char *path, const char *why, void *arg),
                                   void *arg);

/* ng_store_scan with more control.  Zero fields take the defaults. */
typedef struct ng_scan_opts {
	uint64_t from_ms, to_ms; /* flow_start in [from, to) */
	ng_colset columns;       /* of the table (ng_colset_all()); flow_start always */
	int (*fn)(const ng_column_batch *b, void *arg);
	/* Optional: called, in scan order, for each segment that overlaps
	 * the range, before it is opened.  Returns true to read it, false to
	 * skip it (counted in segments_skipped): e.g. a listing that already
	 * holds its first N flows skips later segments. */
	bool (*want)(const ng_segment_info *s, void *arg);
	void *arg;
	/* Optional: called after a segment's header is read, with its zone
	 * maps; false skips the segment (no row of it can match), counted in
	 * segments_skipped and segments_pruned.  Must be thread-safe. */
	bool (*may_match)(const ng_zone_map *z, void *arg);
	/* Parallel scan: when fn_par is set (and fn, want are NULL), segments
	 * are scanned by `threads` workers at once (0: ng_store_scan_threads(0)),
	 * each batch passed to fn_par with the worker's index in
	 * [0, threads): the caller keeps one state per worker and merges
	 * them after the scan.  Batches come in no particular order. */
	int (*fn_par)(const ng_column_batch *b, unsigned worker, void *arg);
	unsigned threads;
	/* Optional late materialization (a selective filter): when set, each
	 * block's `select_columns` are decoded first (flow_start only when
	 * among them, or when the block straddles the time range) and passed
	 * to select, which writes the indexes of the rows to keep, ascending,
	 * into sel[0..*nsel) (room for b->n) and returns 0, or non-zero to
	 * stop the scan (returned as fn's would be).  The block's other
	 * columns are decoded only when it keeps a row, and fn / fn_par then
	 * get the kept rows alone (b->n = *nsel; pos set).  Called by the
	 * worker that reads the block (`worker` as for fn_par; 0 serial). */
	int (*select)(const ng_column_batch *b, unsigned worker, void *arg, uint32_t *sel,
	              size_t *nsel);
	ng_colset select_columns; /* fn gets these and `columns` */
	/* Of select_columns, those select may get as dictionary codes
	 * (b->codes) in segments that store them RANK; fn does not get them
	 * (they must not be among `columns`). */
	ng_colset select_codes;
	/* Optional: the suffix of a rollup (ng_rollup_suffix): a segment that
	 * has this rollup is read through it (batches with `flows` set), one
	 * that has not is read as is.  Only for queries the rollup answers
	 * exactly: fields of its set, the range on its level's boundaries. */
	const char *rollup;
	/* Optional: read the segments of this snapshot (taken for a range
	 * that covers [from_ms, to_ms)) instead of listing the store; NULL:
	 * the scan takes its own.  Borrowed. */
	ng_store_snapshot *snap;
} ng_scan_opts;

int ng_store_scan_opts(const char *dir, const ng_scan_opts *o, ng_scan_stats *st);

/* Number of scan workers for a request of `n` (0: the online CPUs, or
 * $NG_SCAN_THREADS when set), between 1 and NG_SCAN_MAX_THREADS. */
#define NG_SCAN_MAX_THREADS 64
unsigned ng_store_scan_threads(unsigned n);

/* ---- maintenance: compaction and retention ----------------------------- */

/*
 * Both run in the collector (e.g. its flush thread, one call at a time,
 * never two maintenance calls on one store at once) while it writes and
 * while readers scan.  Readers never see a row twice or miss one:
 *
 * Compaction merges the small segments of one hour directory into one:
 * the new segment is written under a temporary name and fsynced, then a
 * marker NEW.seg.replaces listing the old names is written (tmp + rename),
 * the new segment renamed in, the old ones unlinked, the marker unlinked.
 * A reader that lists both the new segment and its marker ignores the
 * segments the marker names; a marker whose segment is absent is ignored
 * (a crash before the rename).  A reader opens every segment of an hour
 * before reading any, and lists again when one vanished, so it reads
 * either the old set or the new segment.  A crash at any step leaves one
 * of the two sets counted; the next call finishes or undoes the step.
 *
 * Retention unlinks whole segments.  A reader that has a segment open
 * keeps reading it whole: on Linux an unlinked file's data stays until the
 * last descriptor closes.
 */
typedef struct ng_store_maint_stats {
	uint64_t segments_in, segments_out; /* compaction: merged, written */
	uint64_t rows;                      /* compaction: rows rewritten */
	uint64_t segments_deleted;          /* retention */
	uint64_t segments_future;           /* ... of which from the future */
	uint64_t bytes_deleted;
	uint64_t bytes_total;     /* retention: store size after */
	uint64_t errors;          /* logged */
	uint64_t segments_rolled; /* rollups: segments given their rollups */
	uint64_t rollups_written, rollup_rows;
	uint64_t temporaries_removed; /* compaction, retention: left by a crash */
	uint64_t damaged;             /* damaged segments left alone: run `nagare fsck` */
	uint64_t damaged_new;         /* ... of which logged: not found before in the process */
} ng_store_maint_stats;

/* Compaction, rollups and retention each hold an exclusive flock on
 * DIR/state/maint.lock while they run, so two processes (the collector's
 * maintenance thread and `nagare compact`) take turns.  Returns the
 * descriptor to pass to ng_store_maint_unlock, or -1 when the lock file
 * cannot be made (the call then runs unlocked: a read-only store has
 * nothing to change). */
int ng_store_maint_lock(const char *dir);
void ng_store_maint_unlock(int fd);

/* Merges small segments (< 2^18 rows each) of hour directories whose hour
 * ended ≥ `settle_ms` before now_ms (0: any), into segments of up to 2^20
 * rows (the merge holds them in memory: ≈ 330 bytes a row), doing at most `max_groups` merges (0:
 * no limit).  Adds to *st. Returns 0, or -1 when `dir` is not a store (other failures are logged,
 * counted in st->errors, and leave the old segments in place). */
int ng_store_compact(const char *dir, uint64_t now_ms, uint64_t settle_ms, unsigned max_groups,
                     ng_store_maint_stats *st);

/* A segment whose first flow_start is more than this after the clock is
 * "from the future": the collector's window (collect.max_future, at most
 * a day) files no row there, so it was written before the window existed
 * (a sender's junk times: 2106) or by a clock gone wrong.  No age limit
 * would ever reach it; retention removes it first. */
#define NG_STORE_FUTURE_MS (2 * UINT64_C(86400000))

/* With an age or a size limit (else nothing): deletes the segments from
 * the future (NG_STORE_FUTURE_MS, counted in st->segments_future too),
 * the segments whose last flow_start is older than now_ms - max_age_ms
 * (0: no age limit), then the oldest ones while the flow segments total
 * more than max_bytes (0: no size limit); removes the empty directories
 * of past hours and of future ones.  Adds to *st.  Returns 0, or -1 when
 * `dir` is not a store. */
int ng_store_retention(const char *dir, uint64_t max_age_ms, uint64_t max_bytes, uint64_t now_ms,
                       ng_store_maint_stats *st);

/* The same, stopping early (what is left waits for the next call) when
 * stop(stop_arg), asked every 256 hours listed or segments deleted,
 * returns true: a store of 141 507 scattered hours takes minutes to
 * clear (0.5 to 8 ms a segment here, as the disk allows), and the
 * collector's stop must not wait for that. */
int ng_store_retention_until(const char *dir, uint64_t max_age_ms, uint64_t max_bytes,
                             uint64_t now_ms, ng_store_maint_stats *st, bool (*stop)(void *),
                             void *stop_arg);

/* ---- rollups (rollup.c) -------------------------------------------------
 *
 * A rollup of a segment sums its flows per time bucket (level: 1 h or
 * 5 min, UTC-aligned) over the few fields of one set: flows, packets,
 * bytes, earliest flow_start and latest flow_end per group.  Every
 * group-by query whose keys and filter use only a set's fields (and
 * whose time keys are multiples of the level) gets the same answer from
 * the rollups of the buckets wholly inside its range as from the rows.
 * They are written beside settled segments by the collector's
 * maintenance (ng_store_rollup) and removed with their segment. */
#define NG_ROLLUP_NSETS 9
#define NG_ROLLUP_NLEVELS 2
/* In a rollup, this column holds the number of flows a row sums (a
 * plain integer column there: time_received would be stored as a
 * difference from flow_end, which suits times, not counts). */
#define NG_ROLLUP_FLOWS NG_F_BYTES_RAW

typedef struct ng_rollup_set {
	const char *name; /* "geo", "net", "srcas", …: see rollup.c */
	ng_colset dims;   /* its fields */
	unsigned levels;  /* bit l: it has rollups of ng_rollup_levels_ms[l] */
	bool top;         /* a top rollup (below): never picked by ng_rollup_pick */
} ng_rollup_set;

/*
 * Top rollups ("srctop", "dsttop"; hourly) keep, of a segment's groups
 * of one address per bucket, only those among the NG_ROLLUP_TOP_K
 * largest by flows, by packets or by bytes: an hour's distinct addresses
 * are too many to keep all.  Two marker rows per bucket, whose
 * ip_version is NG_ROLLUP_MARK (not an IP version), say what was left out:
 *   - address ::0, "rest": the sums of the groups left out (flows,
 *     packets, bytes; earliest flow_start, latest flow_end); absent
 *     when none was;
 *   - address ::1, "bound": flows, packets and bytes each hold the
 *     largest value of any one group left out (0: none was); flow_start
 *     and flow_end hold the bucket's start.
 * A top-N query can then prove its answer exact from them (query/toprollup.c,
 * its essay and "the proof") or fall back to the rows.
 */
#define NG_ROLLUP_TOP_K 256
#define NG_ROLLUP_MARK 255

/* The top rollup set keyed on address field f (NG_F_SRC_ADDR or
 * NG_F_DST_ADDR), or -1. */
int ng_rollup_top_set(enum ng_field_id f);

extern const ng_rollup_set ng_rollup_sets[NG_ROLLUP_NSETS];
/* Bucket of each level in ms, coarsest first: 1 h, 5 min. */
extern const uint64_t ng_rollup_levels_ms[NG_ROLLUP_NLEVELS];

/* The first set (smallest groups first) holding every field of
 * `columns`, or -1 when none does. */
int ng_rollup_pick(ng_colset columns);

/* File suffix of rollup (set, level), e.g. ".r-as-1h", into buf[len].
 * Returns 0, or -1 when out of range, the set has no such level, or buf
 * is too short. */
int ng_rollup_suffix(unsigned set, unsigned level, char *buf, size_t len);

/* Unlinks every rollup of segment path `seg` (absent ones are fine), and
 * the bytes they hold. */
void ng_rollup_unlink(const char *seg);
uint64_t ng_rollup_bytes(const char *seg);

/* Writes the missing rollups of every segment of the hours that ended ≥
 * settle_ms before now_ms (0: all), at most `max_segments` segments (0:
 * no limit); removes rollups whose segment is gone.  Unless
 * `merging_too`, a small segment next to another small one is left for
 * later: compaction is about to merge the two (its rollups would go with
 * it).  Loads a segment's rows whole (≈ 330 bytes a row).  Adds to *st.
 * Returns 0, or -1 when `dir` is not a store (other failures are logged
 * and counted). */
int ng_store_rollup(const char *dir, uint64_t now_ms, uint64_t settle_ms, unsigned max_segments,
                    bool merging_too, ng_store_maint_stats *st);

/* ---- checking a store (fsck.c) -------------------------------------------
 *
 * ng_store_fsck checks every segment and rollup of store `dir` whole
 * (ng_seg_check) and moves each damaged one, never deleting it, to
 * DIR/quarantine/ under its own relative path; a damaged segment's
 * rollups go with it.  Holds the maintenance lock while it runs. */
typedef struct ng_fsck_opts {
	bool dry_run; /* report only: move nothing */
	/* Optional: called for each damaged file: its path, what is wrong,
	 * where it was moved (NULL on a dry run or when the move failed) and
	 * why the move failed (NULL unless it did). */
	void (*fn)(const char *path, const char *why, const char *moved_to, const char *move_err,
	           void *arg);
	void *arg;
} ng_fsck_opts;

typedef struct ng_fsck_stats {
	uint64_t segments, rollups;    /* files checked */
	uint64_t damaged_segments;     /* found damaged */
	uint64_t damaged_rollups;      /* found damaged, their segment whole */
	uint64_t rollups_with_segment; /* of a damaged segment: moved with it */
	uint64_t moved, move_errors;   /* quarantined; could not be moved */
	uint64_t unreadable;           /* hour directories that could not be listed */
} ng_fsck_stats;

/* Returns 0 (damaged or not: see *st), or -1 when `dir` is not a store. */
int ng_store_fsck(const char *dir, const ng_fsck_opts *o, ng_fsck_stats *st);

/* Files in DIR/quarantine (moved there by ng_store_fsck), and their size
 * in bytes into *bytes when not NULL.  A walk of that folder only. */
uint64_t ng_store_quarantined(const char *dir, uint64_t *bytes);

/* Damaged segments a process remembers (damaged.c): past this many, a
 * find is logged every time. */
#define NG_DAMAGED_SEEN 4096

/* Notes that the segment at `path` was found damaged (by a scan, by
 * compaction, rollups or retention).  Returns true the first time this
 * process notes that path: the caller logs it; false when it was noted
 * before (the caller only counts it).  Thread-safe; copies the path. */
bool ng_store_damaged_note(const char *path);

/* Damaged segments this process has noted that are still where they
 * were found (stat() each: at most NG_DAMAGED_SEEN); those gone — moved
 * to the quarantine by `nagare fsck`, or removed — are forgotten.  For
 * /metrics (nagare_store_damaged_segments).  Thread-safe. */
uint64_t ng_store_damaged_present(void);

/* A damaged segment that compaction, rollups or retention (`what`) leave
 * alone: counted in st->damaged, and logged with `err` (what the check
 * found) the first time this process finds it (then also counted in
 * st->damaged_new), since the collector's maintenance meets it every run
 * until `nagare fsck` moves it aside. */
void ng_store_leave_damaged(ng_store_maint_stats *st, const char *what, const char *path,
                            const char *err);

/* Parses a size "50G", "500M", "1T", "4096" (bytes; K/M/G/T powers of
 * 1024) into bytes.  Returns false on bad input.  (Durations:
 * ng_parse_duration_ms, core/timefmt.h.) */
bool ng_parse_size_bytes(const char *s, uint64_t *bytes);

/* Path of the store's state directory ("DIR/state"), created when absent.
 * Writes into buf[len]; returns buf or NULL when it cannot be created. */
char *ng_store_state_dir(const char *dir, char *buf, size_t len);

#endif
