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
 *    "store":{"rows":…,"segments":…,"bytes":…,"errors":…},
 *    "exporters":[{"exporter":"192.0.2.1","domain":0,"version":9,
 *       "protocol":"NetFlow v9","packets":…,"bytes":…,"records":…,
 *       "options_records":…,"templates":…,"lost":…,"template_misses":…,
 *       "held":…,"errors":{"<name>":…, …every error…},
 *       "errors_total":…,"first_seen":"…","first_seen_ms":…,
 *       "last_seen":"…","last_seen_ms":…,"sampling_rate":…,
 *       "sampling_source":"…","lost_samples":…,"counter_samples":…,
 *       "discards":…}, …]}
 * (lost_samples, counter_samples, discards: sFlow only, see decoder.h).
 * Files of earlier versions carry "unsupported":0 (a count of sFlow
 * datagrams from before sFlow was decoded); like any unknown key, it is
 * skipped.
 *
 * Counters are totals over the collector's life in this store: at start,
 * collect reads the previous file and adds its counters to the new ones.
 */
#ifndef NG_STORE_EXPORTERS_H
#define NG_STORE_EXPORTERS_H

#include <stddef.h>
#include <stdint.h>

#include "decode/decoder.h"
#include "net/listener.h"
#include "store/store.h"

typedef struct ng_exporters_file {
	ng_exporter_stats *rows; /* malloc'd, n rows */
	size_t n;
	ng_listener_stats listener;
	ng_store_writer_stats store;
	uint64_t started_ms, updated_ms;
} ng_exporters_file;

/* "NetFlow v5", "NetFlow v9", "IPFIX", "sFlow v5", … for a flow_version. */
const char *ng_protocol_name(uint8_t version);

/* Sum of a row's error counters. */
uint64_t ng_exporter_errors_total(const ng_exporter_stats *s);

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

void ng_exporters_free(ng_exporters_file *f);

/* Adds the counters of `base` rows to the rows of `f` with the same
 * exporter and domain and appends base rows `f` lacks (first_seen keeps
 * the earlier time, last_seen the later).  Returns 0, -1 out of memory. */
int ng_exporters_merge(ng_exporters_file *f, const ng_exporters_file *base);

#endif
