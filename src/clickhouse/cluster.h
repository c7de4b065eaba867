/*
 * cluster.h — the servers of a ClickHouse cluster, as nagare reaches
 * them: one HTTP client per server of the cluster's shards, found from
 * the server nagare is given (docs/clickhouse.md, "Cluster").
 *
 * A cluster is what the servers' <remote_servers> names; its shards and
 * replicas are the rows of system.clusters (shard_num, replica_num,
 * host_name, port: the native TCP port).  nagare speaks HTTP, whose port
 * system.clusters does not hold (18.16 has no getServerPort()), so each
 * server's HTTP URL is either one of the configured `clickhouse.nodes`
 * or, when none are configured, the host name of its row with the port
 * of nagare's own URL (every server on the same HTTP port: the usual
 * deployment).  Which server a URL reaches is asked of the server itself:
 * its own row of system.clusters is the one with is_local = 1 (the host
 * one of its addresses and the port its tcp_port), so two servers on one
 * host with different ports are told apart.
 *
 * Why not ON CLUSTER: distributed DDL needs ZooKeeper (or, from 21.8,
 * ClickHouse Keeper) and <distributed_ddl> on every server; statements
 * sent to each server over HTTP work on every release from 18.16 on
 * without either, and are idempotent (IF NOT EXISTS) like the one-server
 * schema.
 *
 * Used by one thread at a time (the sink's sender, `nagare clickhouse
 * init`, `nagare doctor`).
 */
#ifndef NG_CH_CLUSTER_H
#define NG_CH_CLUSTER_H

#include <stddef.h>

#include "clickhouse/client.h"
#include "clickhouse/schema.h"

#define NG_CH_CLUSTER_MAX 64 /* servers (replicas of all shards) */

typedef struct ng_ch_node {
	unsigned shard, replica; /* system.clusters' shard_num, replica_num (from 1) */
	char host[128];          /* host_name of its row */
	unsigned tcp_port;       /* port of its row (native protocol) */
	ng_ch_client *c;         /* its HTTP interface (owned) */
	ng_ch_server sv;         /* its version (ng_ch_cluster_init) */
} ng_ch_node;

typedef struct ng_ch_cluster {
	char name[128];
	size_t n;                           /* servers */
	ng_ch_node node[NG_CH_CLUSTER_MAX]; /* by shard, then replica */
	size_t self;                        /* the server of nagare's own URL */
	unsigned shards;                    /* distinct shard numbers */
} ng_ch_cluster;

/*
 * Finds the servers of cluster `name` from the server of `conn` (its
 * system.clusters), with `conn`'s user, password, TLS and time-out for
 * each; urls[nurls] are the configured HTTP URLs of the servers (NULL, 0:
 * each row's host with conn's port).  Every server of the cluster must
 * answer and say which one it is: a row that no URL reaches is an error
 * naming it.  Returns a cluster (free with ng_ch_cluster_free), or NULL
 * with the cause in err[errlen].
 */
ng_ch_cluster *ng_ch_cluster_open(const ng_ch_conn *conn, const char *name, const char *const *urls,
                                  size_t nurls, char *err, size_t errlen);
void ng_ch_cluster_free(ng_ch_cluster *cl);

/* Whether node i is the first replica of its shard: the one nagare runs
 * a shard's own statements on (a batch's deletion, the rollups'
 * repair, retention), which replication carries to the others. */
bool ng_ch_cluster_first_replica(const ng_ch_cluster *cl, size_t i);

/*
 * Creates or upgrades the cluster layout (o->cluster set) on every
 * server, each by its own ng_ch_schema_init with its own version's
 * features.  Returns the schema version, or -1 with the cause (the
 * server named): a server down leaves the others as they were made,
 * and a second run completes it.
 */
int ng_ch_cluster_init(ng_ch_cluster *cl, const ng_ch_schema_opts *o, char *err, size_t errlen);

#endif
