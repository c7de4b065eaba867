/*
 * exporters.h — STORE/state/exporters.json: per exporter and observation
 * domain counters, written by `nagare collect`, read by `nagare status`,
 * `nagare serve` and a restarted collector.  It sits in store/ (below http/
 * and cli/) so that the collector, the CLI and the HTTP API share one
 * reader and one writer.
 *
 * The file is one JSON object (written to PATH.tmp, fsynced, renamed over
 * PATH, so a reader sees a whole old or whole new file):
 *
 *   {"format":"nagare-exporters/1",
 *    "updated":"2026-11-30T12:00:00.000Z","updated_ms":…,
 *    "started":"…","started_ms":…,
 *    "listener":{"datagrams":…,"bytes":…,"drops":…,"truncated":…,"errors":…},
 *    "store":{"rows":…,"segments":…,"bytes":…,"errors":…,"dropped":…,"deferred":…},
 *    "clickhouse":{"rows_sent":…, …every NG_CH_SINK_COUNTERS name…},
 *                 (only when collect writes to ClickHouse)
 *    "limits":{"exporters_evicted":…, …every NG_LIMIT_COUNTERS name…},
 *    "exporters":[{ROW}, …]}
 *
 * The rows are bounded (limits.listed_exporters, core/limits.h): past
 * that many, the rows with the most records are listed and the others
 * summed into one row with the key "exporter":"::","domain":4294967295,
 * "protocol":"others" (NG_OTHERS_DOMAIN, decode/decoder.h), which also
 * holds the counters of domains the decoder evicted.  Every count
 * received is in some row: the sums over the rows are exact.
 *
 * and each ROW is the key of an exporter and observation domain, then its
 * counters in the order of NG_EXPORTER_COUNTERS (decode/decoder.h), each
 * written as its kind says there:
 *
 *   "exporter":"192.0.2.1","domain":0,"version":9,"protocol":"NetFlow v9",
 *   "packets":…,"bytes":…,"records":…,"options_records":…,"templates":…,
 *   "lost":…,"template_misses":…,"held":…,
 *   "errors":{"unknown_version":…, …every NG_DECODE_ERRORS name…},
 *   "errors_total":…,"first_seen":"…","first_seen_ms":…,
 *   "last_seen":"…","last_seen_ms":…,"sampling_rate":…,
 *   "sampling_source":"options","lost_samples":…,"counter_samples":…,
 *   "discards":…,"time_implausible":…
 *
 * "protocol", "errors_total" and the RFC 3339 forms of the times are for
 * people and are derived again on reading (from "version", "errors" and
 * the "_ms" keys).  The reader takes the keys in any order and skips those
 * it does not know: a file of a newer nagare loads, and so does one of an
 * older nagare without the keys of later counters (they read 0) or with
 * "unsupported":0 (a count of sFlow datagrams from before sFlow was
 * decoded, gone since).  The HTTP API's /api/v1/exporters writes its rows
 * with the same function (ng_exporters_put_row), listing only the errors
 * that are not zero.
 *
 * Counters are totals over the collector's life in this store: at start,
 * collect reads the previous file and adds its counters to the new ones
 * (ng_exporters_merge).
 */
#ifndef NG_STORE_EXPORTERS_H
#define NG_STORE_EXPORTERS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "decode/decoder.h"
#include "net/listener.h"
#include "store/store.h"
#include "core/sinkstats.h"

/* One receive worker's counters this run (collect --workers): records
 * it handed to the store, its sockets' datagrams and kernel drops
 * (SO_RXQ_OVFL).  In the file: "workers":[{"records":N,"datagrams":N,
 * "drops":N}, …], worker 0 first, present only with more than one
 * worker; not summed across runs (ng_exporters_merge leaves them). */
#define NG_EXPORTERS_WORKERS_MAX 64
typedef struct ng_worker_stats {
	uint64_t records, datagrams, drops;
} ng_worker_stats;

typedef struct ng_exporters_file {
	ng_exporter_stats *rows; /* malloc'd, n rows */
	size_t n;
	ng_listener_stats listener;
	ng_store_writer_stats store;
	bool has_clickhouse;      /* "clickhouse":{…}: the collector writes to ClickHouse */
	ng_sink_stats clickhouse; /* NG_CH_SINK_COUNTERS (core/sinkstats.h) */
	ng_limit_stats limits;    /* the decoder's bounds (NG_LIMIT_COUNTERS) */
	uint64_t started_ms, updated_ms;
	unsigned nworkers; /* 0 or 1: one receive thread, no "workers" */
	ng_worker_stats workers[NG_EXPORTERS_WORKERS_MAX];
	/* "attribution_dbip":1 — the collector enriched its flows from DB-IP
	 * data, whose CC BY 4.0 licence asks for an attribution where they are
	 * shown: `nagare serve` shows it too (enrich.h ng_enricher_dbip) */
	bool attribution_dbip;
} ng_exporters_file;

/* "NetFlow v5", "NetFlow v9", "IPFIX", "sFlow v5", … for a flow_version. */
const char *ng_protocol_name(uint8_t version);

/* Sum of a row's error counters. */
uint64_t ng_exporter_errors_total(const ng_exporter_stats *s);

/* ng_exporters_put_row flag: write only the errors that are not zero (the
 * API's answer; the file lists every error). */
#define NG_EXPORTERS_NONZERO_ERRORS 1u

/* Writes the members of one ROW (format above) to `f`, without the braces,
 * so a caller can add its own ("health" in the API).  Strings are quoted by
 * ng_json_put_str (core/json.h).  Stream errors are left to the caller
 * (ferror). */
void ng_exporters_put_row(FILE *f, const ng_exporter_stats *s, unsigned flags);

/* Write "listener":{…} and "store":{…} (format above): the collector's own
 * counters, beside the rows in the file and in the API. */
void ng_exporters_put_listener(FILE *f, const ng_listener_stats *l);
void ng_exporters_put_store(FILE *f, const ng_store_writer_stats *w);

/* Writes "clickhouse":{…} (format above). */
void ng_exporters_put_clickhouse(FILE *f, const ng_sink_stats *s);

/* Writes ,"workers":[…] (format above; nothing with fewer than two). */
void ng_exporters_put_workers(FILE *f, unsigned n, const ng_worker_stats *w);

/* Writes "limits":{…} (format above). */
void ng_exporters_put_limits(FILE *f, const ng_limit_stats *l);

/* Keeps at most `max` rows of `f` besides the others row: when there are
 * more, sorts them by records (then packets, then key), most first, and
 * adds the rows past `max` into the others row (created when absent),
 * which goes last.  Returns 0, -1 out of memory (f unchanged). */
int ng_exporters_cap(ng_exporters_file *f, size_t max);

/* Writes `f` to `path` atomically (path.tmp, fsync, rename).  Returns 0,
 * or -1 with errno set. */
int ng_exporters_save(const char *path, const ng_exporters_file *f);

/*
 * Reads `path` into `f` (zeroed first; free with ng_exporters_free).
 * Returns 0; -1 with errno ENOENT when the file does not exist; -1 with
 * errno EINVAL and a message naming the path and the byte offset (from 0) in
 * err[errlen] when it is not such a file.  Unknown keys are ignored.
 */
int ng_exporters_load(const char *path, ng_exporters_file *f, char *err, size_t errlen);

/* ng_exporters_load on the `len` bytes at `buf` (which need no NUL); `name`
 * stands for the path in the message.  Returns 0, or -1 with errno EINVAL
 * and the message in err[errlen] (also when out of memory: it says so). */
int ng_exporters_parse(const char *buf, size_t len, const char *name, ng_exporters_file *f,
                       char *err, size_t errlen);

void ng_exporters_free(ng_exporters_file *f);

/* Adds the counters of `base` (an earlier run) to those of `f` (this run):
 * a row of `base` is added to the row of `f` with the same exporter and
 * domain by ng_exporter_stats_add (counters summed, first_seen the earlier
 * time, last_seen the later), or appended when `f` has none.  A row of `f`
 * that has seen no sampling rate (every GAUGE counter 0) takes the GAUGE
 * and SOURCE counters of `base`, and a row without a version takes that of a `base` row
 * seen later.  The listener counters and the limits' COUNTER entries are
 * summed and started_ms is the earlier.  O((n + m) log n).  Returns 0, -1
 * out of memory. */
int ng_exporters_merge(ng_exporters_file *f, const ng_exporters_file *base);

#endif
