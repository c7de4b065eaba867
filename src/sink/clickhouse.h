/*
 * clickhouse.h — the ClickHouse sink: flow rows into DB.flows over HTTP
 * in RowBinary batches, with a bounded on-disk spool while ClickHouse is
 * away and no batch inserted twice (docs/clickhouse.md, "Guarantees").
 *
 * The collector hands it the columns the store's flush has just made
 * durable (enriched: the writer's derive function ran on them), so the
 * rows ClickHouse gets are the rows the store got (collector/flush.c,
 * store/store.h ng_store_writer_set_tap).  With ClickHouse alone the
 * writer runs the same flush without writing segments.
 *
 * Threads: ng_ch_sink_put on the store's flush thread (it encodes);
 * one sender thread of the sink's own (the HTTP requests, the spool's
 * files, the schema, retention where the server has no TTL);
 * ng_ch_sink_get_stats from any thread.
 */
#ifndef NG_SINK_CLICKHOUSE_H
#define NG_SINK_CLICKHOUSE_H

#include <stddef.h>
#include <stdint.h>

#include "clickhouse/client.h"
#include "clickhouse/schema.h"
#include "core/field.h"
#include "core/sinkstats.h"

typedef struct ng_ch_sink_config {
	ng_ch_conn conn;
	const char *spool_dir;     /* created when absent (STORE/spool/clickhouse) */
	uint64_t spool_max_bytes;  /* 0: 1 GiB */
	uint64_t memory_max_bytes; /* batches kept in memory before the spool; 0: 64 MiB */
	size_t batch_rows;         /* 0: 50 000 */
	unsigned batch_ms;         /* a partial batch is sent this old; 0: 3 000 */
	unsigned max_backoff_ms;   /* between retries, doubling from 250 ms; 0: 10 000 */
	ng_ch_schema_opts schema;  /* retention; the cluster layout when schema.cluster */
	/* a cluster (schema.cluster): false: INSERT INTO DB.flows, the
	 * Distributed table, which shards the rows by exporter (synchronously:
	 * insert_distributed_sync=1, so a 200 means every shard has them);
	 * true (clickhouse.insert: local): INSERT INTO DB.flows_local of the
	 * URL's own server, the collector's nearest shard */
	bool insert_local;
	const char *const *nodes; /* the cluster's HTTP URLs (clickhouse.nodes); NULL: found */
	size_t nnodes;
} ng_ch_sink_config;

typedef struct ng_ch_sink ng_ch_sink;

/*
 * Opens the sink: the spool directory (the batches a previous run left
 * there are queued first, in order), the connection, and tries once to
 * create or upgrade the schema (a server that is down is only warned
 * about: the sender keeps trying and batches wait in the spool).  Starts
 * the sender thread.  Returns NULL with the cause in err[errlen]: a bad
 * URL, a spool directory that cannot be made, a schema ClickHouse
 * refused (a newer one, a statement refused).
 */
ng_ch_sink *ng_ch_sink_open(const ng_ch_sink_config *cfg, char *err, size_t errlen);

/*
 * Appends n rows given as columns: cols[f] is field f's column (n values
 * of ng_fields[f].size bytes, host order as in ng_flow), NULL when every
 * row holds 0 there.  cols[NG_F_FLOW_START] must be set, and the rows must
 * lie in one UTC day of flow_start (a store flush hands one hour at a
 * time).  Encodes them into the current batch, closing it at batch_rows;
 * a closed batch is queued in memory, or in the spool when memory holds
 * memory_max_bytes, or dropped and counted when the spool is full.
 * Never waits on the network.  One caller thread at a time.
 */
void ng_ch_sink_put(ng_ch_sink *s, const uint8_t *const *cols, size_t n);

/* The counters now (core/sinkstats.h).  Any thread. */
void ng_ch_sink_get_stats(ng_ch_sink *s, ng_sink_stats *st);

/*
 * Closes the current batch, lets the sender go on for up to drain_ms to
 * send what is queued (not when its last attempt failed), then writes what is left in memory to the
 * spool (the next start sends it) and frees the sink; the final counters go to *final when it is
 * not NULL.  Returns 0, or -1 when rows were lost this run (spool full or failing: logged).
 */
int ng_ch_sink_close(ng_ch_sink *s, unsigned drain_ms, ng_sink_stats *final);

#endif
