/*
 * serve.c — `nagare serve`: the HTTP API and dashboards over a store,
 * without collecting (docs/api.md).
 *
 *   nagare serve --store DIR [--http ADDR:PORT] [--http-token TOKEN|auto]
 *                [--http-allowed-host NAME]... [--http-max-connections N]
 *                [--http-max-per-client N] [--http-idle-timeout SECS]
 *
 * Exporter counters come from STORE/state/exporters.json (written by a
 * collector, running or not), read again on each request; with
 * --clickhouse, from ClickHouse's exporters tables (docs/api.md).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/ch_conn.h"
#include "cli/cli.h"
#include "cli/http_opts.h"
#include "cli/store_path.h"
#include "cli/usage.h"
#include "core/config.h"
#include "core/log.h"
#include "http/http.h"
#include "store/exporters.h"

static const char serve_help[] =
    "usage: nagare serve [--store DIR] [--http ADDR:PORT] [--http-token TOKEN]\n"
    "\n"
    "Serves the dashboards and the JSON API (docs/api.md) over the flow store DIR.\n"
    "\n"
    "  -s, --store DIR         flow store (default: $NAGARE_STORE,\n"
    "                          else /var/lib/nagare (the service's), else\n"
    "                          ~/.local/share/nagare)\n"
    "      --clickhouse URL    answer the flow queries and the exporters from\n"
    "                          ClickHouse (http://HOST:8123/DATABASE;\n"
    "                          default: clickhouse.url of the configuration when\n"
    "                          no --store is given; docs/clickhouse.md)\n"
    "      --config FILE       YAML configuration (or NAGARE_CONFIG): its clickhouse:\n"
    "                          section\n"
    "      --http ADDR:PORT    where to listen (default 127.0.0.1:8080); any address\n"
    "                          but loopback needs a token (one is made and printed\n"
    "                          when none is given)\n"
    "      --http-token TOKEN  the token clients must give, 16 characters at least, or\n"
    "                          'auto' to have one made (default: $NAGARE_HTTP_TOKEN)\n" NG_HTTP_HELP
    "      --max-range DAYS    longest query time range (default 31)\n"
    "      --timeout SECS      longest query run time (default 10)\n"
    "  -h, --help              this help\n"
    "\n"
    "SIGTERM or SIGINT stops it.\n";

/* The exporter counters as the collector last saved them. */
static int file_exporters(void *arg, ng_http_exporters *out, char *err, size_t errlen)
{
	const char *path = arg;
	ng_exporters_file f;
	if (ng_exporters_load(path, &f, err, errlen) < 0) {
		if (errno == ENOENT)
			snprintf(err, errlen, "no exporter counters yet (%s is absent)", path);
		return -1;
	}
	out->rows = f.rows; /* handed over: the server frees it */
	out->n = f.n;
	out->listener = f.listener;
	out->store = f.store;
	out->has_clickhouse = f.has_clickhouse;
	out->clickhouse = f.clickhouse;
	out->limits = f.limits;
	out->nworkers = f.nworkers;
	memcpy(out->workers, f.workers, sizeof out->workers);
	out->started_ms = f.started_ms;
	out->updated_ms = f.updated_ms;
	out->live = false;
	return 0;
}

int ng_cmd_serve(int argc, char **argv)
{
	enum { OPT_HTTP = 256, OPT_TOKEN, OPT_RANGE, OPT_TIMEOUT, OPT_CLICKHOUSE, OPT_CONFIG };
	static const struct option opts[] = {
	    {"store", required_argument, NULL, 's'},
	    {"http", required_argument, NULL, OPT_HTTP},
	    {"http-token", required_argument, NULL, OPT_TOKEN},
	    {"max-range", required_argument, NULL, OPT_RANGE},
	    {"timeout", required_argument, NULL, OPT_TIMEOUT},
	    {"clickhouse", required_argument, NULL, OPT_CLICKHOUSE},
	    {"config", required_argument, NULL, OPT_CONFIG},
	    {"help", no_argument, NULL, 'h'},
	    NG_HTTP_LONG_OPTS,
	    {0, 0, 0, 0},
	};
	ng_cli_http hopt = {0};
	const char *ch_url = NULL, *config = NULL;
	ng_http_config cfg = {.listen = "127.0.0.1:8080", .token = getenv("NAGARE_HTTP_TOKEN")};
	optind = 0;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, ":s:h", opts, NULL)) != -1) {
		char *end;
		long v;
		switch (c) {
		case 's': cfg.store_dir = optarg; break;
		case OPT_CLICKHOUSE: ch_url = optarg; break;
		case OPT_CONFIG: config = optarg; break;
		case OPT_HTTP: cfg.listen = optarg; break;
		case OPT_TOKEN: cfg.token = optarg; break;
		case OPT_RANGE:
		case OPT_TIMEOUT:
			v = strtol(optarg, &end, 10);
			if (*end || end == optarg || v < 1 || v > 3650)
				return ng_usage_fail("serve", "bad --%s '%s'",
				                     c == OPT_RANGE ? "max-range" : "timeout",
				                     optarg);
			if (c == OPT_RANGE)
				cfg.max_range_ms = (uint64_t)v * 86400000;
			else
				cfg.timeout_ms = (unsigned)v * 1000;
			break;
		case 'h': fputs(serve_help, stdout); return 0;
		default: {
			int r = ng_cli_http_opt("serve", c, optarg, &hopt);
			if (r != 1)
				return r ? r : ng_usage_error("serve", c, argv);
		}
		}
	}
	if (optind < argc)
		return ng_usage_fail("serve", "unexpected argument '%s'", argv[optind]);
	if (ch_url && cfg.store_dir)
		return ng_usage_fail("serve", "--store and --clickhouse: give one");
	/* ClickHouse: --clickhouse, or clickhouse.url without a --store */
	ng_config conf = {0};
	char cerr[1024];
	const char *cpath = config ? config : getenv("NAGARE_CONFIG");
	if (cpath && *cpath && ng_config_load(cpath, &conf, cerr, sizeof cerr) < 0) {
		fprintf(stderr, "nagare serve: %s\n", cerr);
		ng_config_free(&conf);
		return 1;
	}
	ng_ch_conn conn;
	int chr = cfg.store_dir ? 0 : ng_cli_ch_conn("serve", ch_url, &conf.clickhouse, &conn);
	if (chr < 0) {
		ng_config_free(&conf);
		return 2;
	}
	if (chr > 0)
		cfg.clickhouse = &conn;
	char dbuf[4096];
	if (!(cfg.store_dir = ng_cli_store("serve", cfg.store_dir, false, dbuf, sizeof dbuf))) {
		ng_config_free(&conf);
		return 2;
	}
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/state/exporters.json", cfg.store_dir);
	/* the exporters: the collector's counters, saved in the store; over
	 * ClickHouse, the exporters its tables hold (docs/api.md) */
	if (!cfg.clickhouse) {
		cfg.exporters = file_exporters;
		cfg.exporters_arg = path;
	}
	ng_cli_http_env(&hopt);
	/* the store's flows enriched from DB-IP data: its attribution, as the
	 * collector's dashboards show it (the collector says so in the file) */
	ng_exporters_file ef;
	char eerr[256];
	if (ng_exporters_load(path, &ef, eerr, sizeof eerr) == 0) {
		cfg.attribution_dbip = ef.attribution_dbip;
		ng_exporters_free(&ef);
	}
	cfg.limits = hopt.limits;
	if (!hopt.cache_given)
		cfg.limits.cache_mib = -1; /* the default */

	/* SIGTERM and SIGINT are blocked before the server's threads start
	 * (they inherit the mask) and taken here with sigwait: with a handler
	 * and pause(), a signal delivered to one of those threads left this
	 * one paused for ever (seen: serve not stopping on SIGTERM) */
	sigset_t stop_set;
	sigemptyset(&stop_set);
	sigaddset(&stop_set, SIGTERM);
	sigaddset(&stop_set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &stop_set, NULL);
	signal(SIGPIPE, SIG_IGN);
	char err[512], what[PATH_MAX + 16];
	ng_http_server *s = ng_http_start(&cfg, err, sizeof err);
	if (!s) {
		fprintf(stderr, "nagare serve: %s\n", err);
		ng_config_free(&conf);
		return 1;
	}
	if (cfg.clickhouse)
		snprintf(what, sizeof what, "(ClickHouse %s)", conn.url);
	else
		snprintf(what, sizeof what, "(store %s)", cfg.store_dir);
	ng_http_announce(s, what);
	int sig = 0;
	while (sigwait(&stop_set, &sig) != 0)
		;
	ng_info("stopping");
	ng_http_stop(s);
	ng_config_free(&conf);
	return 0;
}
