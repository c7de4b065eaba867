/*
 * sinkstats.h — the counters of the ClickHouse sink (src/sink/clickhouse.c,
 * docs/clickhouse.md), listed once.
 *
 * The sink fills an ng_sink_stats; the collector copies it into its
 * counter snapshot (store/exporters.h: "clickhouse":{…} in
 * STORE/state/exporters.json), which `nagare status`, the API
 * (/api/v1/status) and /metrics (nagare_clickhouse_NAME) print.  It is in
 * core/ because those three layers and the sink all need it and none of
 * them may use the others.
 *
 * X(name, kind, doc): kind is counter (a total this run) or gauge (a
 * value now).
 */
#ifndef NG_SINKSTATS_H
#define NG_SINKSTATS_H

#include <stdint.h>

#define NG_CH_SINK_COUNTERS(X)                                                                     \
	X(rows_sent, counter, "rows inserted into ClickHouse")                                     \
	X(batches_sent, counter, "batches inserted into ClickHouse")                               \
	X(bytes_sent, counter, "RowBinary bytes of the batches inserted")                          \
	X(retries, counter, "inserts attempted again after a failure")                             \
	X(failures, counter, "failed attempts: no connection, HTTP error, time-out")               \
	X(ambiguous, counter, "failed attempts that ClickHouse may have committed: checked")       \
	X(deduplicated, counter, "batches that check found inserted: not sent again")              \
	X(spooled_batches, counter, "batches written to the spool while ClickHouse lagged")        \
	X(replayed_batches, counter, "spooled batches inserted")                                   \
	X(dropped_rows, counter, "rows dropped: the spool was full (spool_max)")                   \
	X(dropped_batches, counter, "batches dropped: the spool was full")                         \
	X(spool_errors, counter, "spool files that could not be written or read")                  \
	X(queued_rows, gauge, "rows waiting in memory and in the spool")                           \
	X(spool_bytes, gauge, "bytes of the spool files")                                          \
	X(spool_files, gauge, "batches in the spool")                                              \
	X(lag_ms, gauge, "age of the oldest batch not yet in ClickHouse, ms (0: none)")            \
	X(schema_version, gauge, "schema version found in ClickHouse (0: not yet)")                \
	X(connected, gauge, "1 when the last request to ClickHouse succeeded")

typedef struct ng_sink_stats {
#define X(name, kind, doc) uint64_t name;
	NG_CH_SINK_COUNTERS(X)
#undef X
} ng_sink_stats;

#endif
