/*
 * clickhouse.c — `nagare clickhouse init`: creates or upgrades nagare's
 * schema in a ClickHouse database (clickhouse/schema.h,
 * docs/clickhouse.md), as `collect --clickhouse` also does at start.
 * Idempotent: a second run changes nothing and says so.
 *
 * Exit status: 0 the schema is in place, 1 ClickHouse refused or did not
 * answer, 2 usage error.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/ch_conn.h"
#include "cli/cli.h"
#include "cli/usage.h"
#include "clickhouse/cluster.h"
#include "clickhouse/schema.h"
#include "core/config.h"
#include "core/timefmt.h"

static const char clickhouse_help[] =
    "usage: nagare clickhouse init [URL] [--config FILE] [--retention AGE]\n"
    "                              [--rollup-retention AGE]\n"
    "\n"
    "Creates the database and nagare's tables in ClickHouse, or upgrades an older\n"
    "nagare's schema in place (columns added, views made again), and prints the\n"
    "server version and the schema version.  URL is the HTTP interface with the\n"
    "database as its path (default: clickhouse.url of the configuration), e.g.\n"
    "http://127.0.0.1:8123/nagare.  `nagare collect --clickhouse URL` does the\n"
    "same at start.  With clickhouse.cluster in the configuration, on every server\n"
    "of that cluster: the local tables and the Distributed tables over them\n"
    "(docs/clickhouse.md, \"Cluster\").\n"
    "\n"
    "  -c, --config FILE        YAML configuration (or NAGARE_CONFIG): clickhouse:\n"
    "                           user, password, TLS files, retention\n"
    "      --retention AGE      flows older than AGE go (TTL, else the collector\n"
    "                           drops whole days): 30d, 2w\n"
    "      --rollup-retention AGE  the same for the per-minute and per-hour tables\n"
    "  -h, --help               this help\n";

static uint64_t days_of(uint64_t ms)
{
	return ms ? (ms + 86399999) / 86400000 : 0;
}

int ng_cmd_clickhouse(int argc, char **argv)
{
	static const struct option opts[] = {{"config", required_argument, NULL, 'c'},
	                                     {"retention", required_argument, NULL, 'R'},
	                                     {"rollup-retention", required_argument, NULL, 'r'},
	                                     {"help", no_argument, NULL, 'h'},
	                                     {0, 0, 0, 0}};
	const char *config = NULL;
	uint64_t ret = 0, rret = 0;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c': config = optarg; break;
		case 'R':
		case 'r':
			if (!ng_parse_duration_ms(optarg, c == 'R' ? &ret : &rret))
				return ng_usage_fail(
				    "clickhouse", "--%s '%s': give an age such as 30d",
				    c == 'R' ? "retention" : "rollup-retention", optarg);
			break;
		case 'h': fputs(clickhouse_help, stdout); return 0;
		default: return ng_usage_error("clickhouse", c, argv);
		}
	}
	if (optind >= argc || strcmp(argv[optind], "init"))
		return ng_usage_fail("clickhouse", "give the action: nagare clickhouse init [URL]");
	const char *url = optind + 1 < argc ? argv[optind + 1] : NULL;
	if (optind + 2 < argc)
		return ng_usage_fail("clickhouse", "unexpected argument '%s'", argv[optind + 2]);
	ng_config cfg = {0};
	char err[NG_CH_ERR_MAX + 512];
	const char *path = config ? config : getenv("NAGARE_CONFIG");
	if (path && *path && ng_config_load(path, &cfg, err, sizeof err) < 0) {
		fprintf(stderr, "nagare clickhouse: %s\n", err);
		return 1;
	}
	const ng_cfg_clickhouse *h = &cfg.clickhouse;
	ng_ch_conn conn;
	int given = ng_cli_ch_conn("clickhouse", url, h, &conn);
	if (given <= 0) {
		ng_config_free(&cfg);
		if (given < 0)
			return 2;
		return ng_usage_fail("clickhouse",
		                     "give the URL, e.g. http://127.0.0.1:8123/nagare (or "
		                     "clickhouse.url in the configuration)");
	}
	ng_ch_schema_opts so = {.retention_days = days_of(ret ? ret : h->retention_ms),
	                        .rollup_retention_days =
	                            days_of(rret ? rret : h->rollup_retention_ms),
	                        .cluster = h->cluster,
	                        .replicated = h->replicated};
	int rc = 1;
	ng_ch_client *cl = NULL;
	if (h->cluster) {
		ng_ch_cluster *cc = ng_ch_cluster_open(
		    &conn, h->cluster, (const char *const *)h->nodes, h->nnodes, err, sizeof err);
		int v = cc ? ng_ch_cluster_init(cc, &so, err, sizeof err) : -1;
		if (v < 0)
			fprintf(stderr, "nagare clickhouse: %s\n", err);
		for (size_t i = 0; v >= 0 && i < cc->n; i++) {
			const ng_ch_node *nd = &cc->node[i];
			printf("clickhouse %s (server %s): cluster %s shard %u replica %u: "
			       "database %s, "
			       "schema version %d%s\n",
			       ng_ch_base_url(nd->c), nd->sv.version, cc->name, nd->shard,
			       nd->replica, ng_ch_database(nd->c), v,
			       so.replicated ? ", replicated" : "");
		}
		rc = v < 0;
		ng_ch_cluster_free(cc);
		goto out;
	}
	cl = ng_ch_open(&conn, err, sizeof err);
	ng_ch_server sv;
	if (!cl || ng_ch_detect(cl, &sv, err, sizeof err) < 0) {
		fprintf(stderr, "nagare clickhouse: %s\n", err);
		goto out;
	}
	int v = ng_ch_schema_init(cl, &sv, &so, err, sizeof err);
	if (v < 0) {
		fprintf(stderr, "nagare clickhouse: %s\n", err);
		goto out;
	}
	printf("clickhouse %s (server %s): database %s, schema version %d%s%s\n",
	       ng_ch_base_url(cl), sv.version, ng_ch_database(cl), v,
	       sv.ttl ? ", retention by TTL" : ", retention by dropping days",
	       sv.low_cardinality ? ", LowCardinality strings" : "");
	rc = 0;
out:
	ng_ch_close(cl);
	ng_config_free(&cfg);
	return rc;
}
