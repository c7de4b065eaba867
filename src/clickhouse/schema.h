/*
 * schema.h — the ClickHouse schema nagare owns: generated from the field
 * table (core/field.c), created and upgraded in place by
 * `nagare clickhouse init` and at every `collect` start (docs/clickhouse.md
 * has the tables, their columns and which server version each feature
 * needs).
 *
 * Tables of database DB (the URL's path):
 *
 *   DB.flows            every field of ng_fields, one column each, named
 *                       as the field (types: ng_ch_column_type), plus
 *                       `date` (UTC day of flow_start, the partition) and
 *                       `batch_id` (the sink's batch, for the check
 *                       before a resend); MergeTree PARTITION BY date
 *                       ORDER BY (flow_start, exporter)
 *   DB.flows_1m         SummingMergeTree per minute: `time` (the
 *   DB.flows_1h         minute's / hour's first ms), `date`, the rollup
 *                       dimensions (NG_CH_ROLLUP_*), sums of bytes,
 *                       packets and `flows` (rows); filled by the views
 *                       DB.flows_1m_mv and DB.flows_1h_mv
 *   DB.exporters        ReplacingMergeTree(last_seen) by exporter, from
 *                       DB.exporters_mv
 *   DB.interfaces       ReplacingMergeTree(last_seen) by (exporter,
 *                       if_index), from DB.interfaces_in_mv and _out_mv
 *   DB.schema_version   one row per schema version applied
 *
 * Upgrades: a column of the field table missing from a table made by an
 * older nagare is added (ALTER TABLE … ADD COLUMN); the views are dropped
 * and made again when the schema version rises; TTLs are set again at
 * each init.  A schema of a later version than this nagare's is refused.
 */
#ifndef NG_CH_SCHEMA_H
#define NG_CH_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "clickhouse/client.h"
#include "core/colset.h"
#include "core/field.h"

/* The version of the layout below; a row in DB.schema_version. */
#define NG_CH_SCHEMA_VERSION 1

/* What a server can do, from its version (SELECT version()). */
typedef struct ng_ch_server {
	unsigned major, minor, patch;
	char version[64];
	bool low_cardinality; /* LowCardinality(String) without a setting: 19.3 */
	bool ipv6;            /* the IPv6 type (same 16 bytes in RowBinary): 19.3 */
	bool codecs;          /* CODEC(Delta, ZSTD): 19.10 */
	bool ttl;             /* table TTL: 19.6 */
	bool query_params;    /* {name:Type} query parameters: 19.11 */
} ng_ch_server;

/*
 * Parses a version() answer ("18.16.1", "24.3.2.23", "19.17.4.11 (official
 * build)") from the len bytes at s into *out and sets the features.
 * Returns 0, or -1 when it does not start with MAJOR.MINOR (at most 9
 * digits each).  Bytes from a server: fuzzed (tests/fuzz/fuzz_ch_reply.c).
 */
int ng_ch_server_parse(const char *s, size_t len, ng_ch_server *out);

/* SELECT version() on `c` into *out.  Returns 0 or -1 with the cause. */
int ng_ch_detect(ng_ch_client *c, ng_ch_server *out, char *err, size_t errlen);

/* The ClickHouse type of field f's column on server sv into buf (at
 * least 64 bytes): UInt8/16/32/64, UInt64 for times (ms since the
 * epoch), FixedString(16) or IPv6 for addresses (IPv4-mapped),
 * FixedString(6) for MACs, String or LowCardinality(String). */
const char *ng_ch_column_type(const ng_field *f, const ng_ch_server *sv, char *buf, size_t len);

/* The rollup dimensions: the fields the embedded store's rollups group
 * on (store/rollup.c: geo, net, srcas, dstas, if and as sets), and for the
 * hourly table also dst_port and service (its "port" set).  Addresses,
 * ports (but the hourly dst_port) and times are left out: their groups
 * are as many as the flows. */
ng_colset ng_ch_rollup_dims(bool hourly);

/* How init goes, and the layout (docs/clickhouse.md, "Cluster"). */
typedef struct ng_ch_schema_opts {
	uint64_t retention_days;        /* flows TTL / partitions dropped; 0: keep */
	uint64_t rollup_retention_days; /* flows_1m/1h; 0: keep */
	/* NULL: one server, the tables above.  Else a cluster of the servers'
	 * <remote_servers> ([A-Za-z0-9_]+): the tables that hold rows are
	 * DB.flows_local, flows_1m_local, flows_1h_local, exporters_local,
	 * interfaces_local (the views on and into them), and DB.flows,
	 * flows_1m, flows_1h, exporters, interfaces are Distributed tables
	 * over them (sharding key cityHash64(exporter)), so that reads are
	 * the same in both layouts.  Made on each server by its own init
	 * (clickhouse/cluster.h runs it on every one). */
	const char *cluster;
	bool replicated; /* cluster: Replicated*MergeTree local tables (path
	                  * /clickhouse/tables/{shard}/DB/TABLE, replica
	                  * {replica}: the servers' <macros>); untested here */
} ng_ch_schema_opts;

/* Creates or upgrades the schema on the server of `c` (idempotent), in
 * the layout of o (one server, or this server's part of a cluster).
 * Returns the schema version now in place (NG_CH_SCHEMA_VERSION), or -1
 * with the cause in err[errlen] (no server, a statement refused, a newer
 * schema, a database holding the other layout, a cluster name not
 * [A-Za-z0-9_]).  Logs each change it makes (ng_info). */
int ng_ch_schema_init(ng_ch_client *c, const ng_ch_server *sv, const ng_ch_schema_opts *o,
                      char *err, size_t errlen);

/* What `nagare doctor` reports: the version in DB.schema_version (0: no
 * schema) and the columns of the field table missing from DB.flows, and
 * in the cluster layout from DB.flows_local too (named "flows_local.X")
 * (their count; the first names in missing[mlen]).  Returns 0 or -1 with the
 * cause. */
int ng_ch_schema_check(ng_ch_client *c, unsigned *version, unsigned *nmissing, char *missing,
                       size_t mlen, char *err, size_t errlen);

/* After a failed insert of a batch (flow_start in [tmin, tmax]) that is
 * found whole in DB.flows, when the rollups may or may not hold it (the
 * server stopped between the flows' part and a view's): the rollup rows
 * of the minutes and hours that range touches are deleted (ALTER TABLE
 * … DELETE, waited for) and computed again from DB.flows.  Idempotent:
 * an interrupted repair is run again whole.  Exact while no other
 * collector inserts into those buckets meanwhile (docs/clickhouse.md:
 * with several collectors on one cluster a concurrent batch in the same
 * minute may be summed twice in the rollups, never in flows).  The
 * tables of o's layout (the _local ones of a cluster, on this server).
 * Returns 0, or -1 with the cause (the caller tries again later). */
int ng_ch_rollup_repair(ng_ch_client *c, const ng_ch_schema_opts *o, uint64_t tmin, uint64_t tmax,
                        char *err, size_t errlen);

/* A batch (batch_id, flow_start in [tmin, tmax]) found in part in the
 * cluster's flows after a failed insert through the Distributed table
 * (one shard took its rows, another did not): its rows are deleted from
 * DB.flows_local on the server of `c` (ALTER TABLE … DELETE, waited for)
 * and that server's rollups recomputed over the batch's buckets
 * (ng_ch_rollup_repair), so the batch can be sent again whole.  Run on
 * one server of each shard.  Returns 0, or -1 with the cause. */
int ng_ch_batch_delete(ng_ch_client *c, const ng_ch_schema_opts *o, uint64_t batch_id,
                       uint64_t tmin, uint64_t tmax, char *err, size_t errlen);

/* Where TTL is not supported: drops the partitions (days) of DB.flows
 * (flows_local in a cluster, on this server) older than retention_days,
 * and of the rollups older than rollup_retention_days (0: none).  Returns the partitions dropped,
 * or -1 with the cause. */
int ng_ch_drop_old(ng_ch_client *c, const ng_ch_schema_opts *o, uint64_t now_ms, char *err,
                   size_t errlen);

/* One line "TABLE\tPARTITION_ID" of system.parts (len bytes at s, no
 * newline) into table[tlen] (at least 16) and part[plen] (at least 9):
 * only flows, flows_1m, flows_1h (or their _local tables) and an 8-digit day id (YYYYMMDD, a Date
 * partition's) are taken.  Returns 0, or -1 for anything else.  Bytes
 * from a server: fuzzed (tests/fuzz/fuzz_ch_reply.c). */
int ng_ch_partition_line(const char *s, size_t len, char *table, size_t tlen, char *part,
                         size_t plen);

#endif
