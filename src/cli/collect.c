/*
 * collect.c — `nagare collect`: the command line of the running collector.
 *
 * What is here is only what the user says: the flags, the NAGARE_*
 * environment and the YAML configuration (--config or NAGARE_CONFIG),
 * resolved in that order of precedence (flags win) into an
 * ng_collector_config, which ng_collector_run (src/collector/) then runs
 * until SIGTERM or SIGINT.  The configuration is read again the same way
 * on every reload of the enrichment tables (reload_config).
 *
 * Exit status: 0 (also for --help), 2 for a usage error, 1 when the
 * configuration cannot be read or the collector fails (collector.h).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/ch_conn.h"
#include "cli/cli.h"
#include "cli/http_opts.h"
#include "cli/store_path.h"
#include "cli/usage.h"
#include "collector/collector.h"
#include "core/config.h"
#include "core/log.h"
#include "core/timefmt.h"
#include "enrich/geodata.h"
#include "net/reuseport.h"
#include "store/store.h"

static const char collect_help[] =
    "usage: nagare collect [--store DIR] [--listen ADDR:PORT]... [--json FILE|-]\n"
    "                      [--stats-interval SECONDS] [--config FILE]\n"
    "                      [--geoip-db FILE] [--asn-db FILE] [--geoip-optional]\n"
    "                      [--retention AGE] [--max-size SIZE]\n"
    "                      [--max-past AGE] [--max-future AGE]\n"
    "                      [--implausible-time keep|reject]\n"
    "                      [--clickhouse URL]\n"
    "\n"
    "Receives NetFlow v1/v5/v7/v9, IPFIX and sFlow on UDP, decodes every record\n"
    "and appends it to the flow store DIR (created when absent).  Segments are\n"
    "flushed at least every 5 seconds; templates survive restarts\n"
    "(DIR/state/templates); per-exporter counters go to DIR/state/exporters.json\n"
    "(see 'nagare status').  SIGTERM or SIGINT stops it cleanly.\n"
    "\n"
    "  -s, --store DIR             flow store (default: $NAGARE_STORE,\n"
    "                              else /var/lib/nagare (the service's), else\n"
    "                              ~/.local/share/nagare)\n"
    "  -l, --listen ADDR:PORT      UDP address to listen on, repeatable:\n"
    "                              0.0.0.0:2055 (IPv4), [::]:2055 (IPv6 and IPv4),\n"
    "                              [::1]:2055, 127.0.0.1:2055, :2055 (every address)\n"
    "                              default: :2055 :4739 :6343 :9995\n"
    "                              tcp://ADDR:PORT, sctp://ADDR:PORT: IPFIX over\n"
    "                              TCP or SCTP (RFC 7011 §10), e.g. tcp://:4739\n"
    "  -j, --json FILE|-           also write every flow as NDJSON to FILE\n"
    "                              (appended) or stdout\n"
    "  -i, --stats-interval SECS   log counters and write exporters.json every\n"
    "                              SECS seconds (default 60)\n"
    "  -w, --workers N             receive and decode threads, each with its own\n"
    "                              socket on every UDP address; one exporter's\n"
    "                              datagrams all go to one of them (default: the\n"
    "                              online cores, at most 64; 1 with --json)\n"
    "  -c, --config FILE           YAML configuration (docs/configuration.md);\n"
    "                              flags and NAGARE_* variables override it\n"
    "      --geoip-db FILE[,FILE]  MaxMind-format country/city database (one\n"
    "                              file, or one per family: IPV4,IPV6); none:\n"
    "                              off.  Default: DB-IP Lite city from the data\n"
    "                              directory (NAGARE_DATA_DIR, else\n"
    "                              /usr/share/nagare/ip-location-db, else the\n"
    "                              source tree's data/; docs/enrichment.md)\n"
    "      --asn-db FILE[,FILE]    ASN database: MaxMind format (may be the same\n"
    "                              file, e.g. IPinfo lite) or ip-location-db\n"
    "                              CSV ranges (asn-ipv4.csv,asn-ipv6.csv, the\n"
    "                              default, from the same directory); none: off\n"
    "      --geoip-optional        run on without a database that cannot be\n"
    "                              opened (logged); default: refuse to start\n"
    "      --enrich / --no-enrich  enrichment on even with nothing configured\n"
    "                              (network classes, services) / off\n"
    "      --http ADDR:PORT        dashboards and JSON API (docs/api.md) on this\n"
    "                              TCP address (default 127.0.0.1:8080); any\n"
    "                              address but loopback needs a token\n"
    "      --http-token TOKEN      token for the HTTP API (or NAGARE_HTTP_TOKEN), 16\n"
    "                              characters at least, or 'auto' to have one made\n"
    "                              and printed (off loopback one is made when none\n"
    "                              is given)\n" NG_HTTP_HELP
    "      --no-http               no HTTP server\n"
    "      --retention AGE         delete segments older than AGE (30d, 12h, 2w;\n"
    "                              s m h d w), checked once a minute\n"
    "      --max-size SIZE         then delete the oldest segments while the store\n"
    "                              holds more than SIZE (50G, 500M; K M G T = 1024)\n"
    "                              Small segments of hours that ended 10 minutes\n"
    "                              ago are merged once a minute (compaction).\n"
    "      --max-past AGE          a flow that started or ended more than AGE\n"
    "                              before it was received (default 7d; 1m to\n"
    "                              36600d, no limit) or more than\n"
    "      --max-future AGE        after it (default 1h; 0s to 1d) has implausible\n"
    "                              times: counted per exporter (time_implausible)\n"
    "      --implausible-time keep|reject\n"
    "                              keep (default): store it at its receive time,\n"
    "                              flagged (anomaly time), its times in\n"
    "                              orig_start/orig_end; reject: drop it\n"
    "                              (docs/security.md, \"Time-hostile input\")\n"
    "      --clickhouse URL        write the flows to ClickHouse over HTTP, e.g.\n"
    "                              http://127.0.0.1:8123/nagare (the path is the\n"
    "                              database; created with its tables when\n"
    "                              absent). Alone: ClickHouse only (state and\n"
    "                              spool in the default store directory); with\n"
    "                              --store DIR: both (docs/clickhouse.md)\n"
    "  -h, --help                  this help\n"
    "\n"
    "SIGHUP, or a database or configuration file being replaced, reloads the\n"
    "enrichment tables without stopping ingest (docs/enrichment.md).\n";

/* The flags as given (NULL, 0 or -1: not given); once parse_opts has
 * loaded the configuration, store, json, listen and stats_interval hold
 * what every source resolved to. */
struct collect_opts {
	const char *store;
	const char **listen;
	size_t nlisten;
	const char *json;
	unsigned stats_interval;
	unsigned workers; /* --workers, else collect.workers, else the online cores */
	const char *config, *geoip_db, *asn_db;
	int geoip_optional;            /* -1 not given */
	int enrich;                    /* -1 not given, 0 --no-enrich, 1 --enrich */
	const char *http, *http_token; /* NULL: default / none */
	bool no_http;
	ng_cli_http http_opts;            /* the flags; the configuration fills what they leave */
	uint64_t retention_ms, max_bytes; /* 0: no limit */
	uint64_t maint_ms;                /* hidden --maint-interval (tests); 0: 60 s */
	uint64_t max_past_ms, max_future_ms; /* resolved by parse_opts */
	bool max_past_set, max_future_set;   /* given as flags */
	int implausible;                     /* 0 not given, NG_CFG_KEEP, NG_CFG_REJECT */
	const char *clickhouse;              /* --clickhouse URL */
	bool store_given;                    /* --store, collect.store or NAGARE_STORE */
	ng_ch_sink_config ch;                /* resolved when ClickHouse is on */
	char ch_spool[4096];
	ng_config cfg; /* file + environment + flags */
};

/* The configuration: the file (--config or NAGARE_CONFIG), then the
 * NAGARE_* environment, then the flags.  Run again on every reload. */
static int load_config(const struct collect_opts *o, ng_config *cfg, char *err, size_t errlen)
{
	const char *path = o->config ? o->config : getenv("NAGARE_CONFIG");
	memset(cfg, 0, sizeof *cfg);
	if (path && *path && ng_config_load(path, cfg, err, errlen) < 0)
		return -1;
	if (ng_config_env(cfg, err, errlen) < 0)
		goto fail;
	if ((o->store && ng_config_set(&cfg->store, o->store) < 0) ||
	    (o->json && ng_config_set(&cfg->json, o->json) < 0) ||
	    (o->geoip_db && ng_config_set(&cfg->geoip_db, o->geoip_db) < 0) ||
	    (o->asn_db && ng_config_set(&cfg->asn_db, o->asn_db) < 0)) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (o->stats_interval)
		cfg->stats_interval = o->stats_interval;
	if (o->geoip_optional >= 0)
		cfg->geoip_optional = o->geoip_optional;
	/* what no source named: the default databases (enrich/geodata.h) */
	ng_geodata gd;
	if (o->enrich != 0 && ng_geodata_apply(cfg, &gd) < 0) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (o->enrich != 0) {
		char d[PATH_MAX + 160];
		ng_info("enrichment: %s", ng_geodata_describe(&gd, d, sizeof d));
	}
	return 0;
fail:
	ng_config_free(cfg);
	return -1;
}

/* Enrichment runs when something is configured for it, or --enrich. */
static bool enrich_wanted(const struct collect_opts *o)
{
	if (o->enrich >= 0)
		return o->enrich;
	const ng_config *c = &o->cfg;
	return c->path || c->geoip_db || c->asn_db;
}

/* The time window: the flags, else the configuration, else the defaults. */
static void resolve_window(struct collect_opts *o)
{
	if (!o->max_past_set)
		o->max_past_ms = o->cfg.max_past_ms ? o->cfg.max_past_ms : NG_COLL_MAX_PAST_MS;
	if (!o->max_future_set)
		o->max_future_ms =
		    o->cfg.max_future_set ? o->cfg.max_future_ms : NG_COLL_MAX_FUTURE_MS;
	if (!o->implausible)
		o->implausible = o->cfg.implausible_time ? o->cfg.implausible_time : NG_CFG_KEEP;
}

/* The workers: the flag's, else the configuration's, else one per online
 * core (at most NG_REUSEPORT_MAX).  NDJSON output is written by one
 * thread: with --json one worker, and asking for more is refused.
 * Returns 0, or -1 after the usage message. */
static int resolve_workers(struct collect_opts *o)
{
	unsigned asked = o->workers ? o->workers : o->cfg.workers;
	if (asked > 1 && o->json) {
		ng_usage_fail("collect",
		              "--workers %u: NDJSON output (--json) is written by one "
		              "receive thread; give --workers 1 or leave --json out",
		              asked);
		return -1;
	}
	if (!asked) {
		long cores = sysconf(_SC_NPROCESSORS_ONLN);
		asked = o->json || cores < 1       ? 1
		        : cores > NG_REUSEPORT_MAX ? NG_REUSEPORT_MAX
		                                   : (unsigned)cores;
	}
	o->workers = asked;
	return 0;
}

/* --workers N into o->workers.  Returns 0, or -1 after the usage
 * message. */
static int parse_workers(const char *arg, struct collect_opts *o)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(arg, &end, 10);
	if (errno || *end || v < 1 || v > NG_REUSEPORT_MAX || arg[0] == '-') {
		ng_usage_fail("collect",
		              "--workers '%s': give a number of receive threads, 1 to %u", arg,
		              NG_REUSEPORT_MAX);
		return -1;
	}
	o->workers = (unsigned)v;
	return 0;
}

/* --max-past, --max-future (c 'P', 'F') or --implausible-time ('K') into
 * *o.  Returns -1, or the exit status of a usage error (printed). */
static int window_opt(int c, const char *arg, struct collect_opts *o)
{
	if (c == 'P') {
		if (!ng_parse_duration_ms(arg, &o->max_past_ms) || o->max_past_ms < 60000 ||
		    o->max_past_ms > NG_COLL_MAX_PAST_LIMIT_MS)
			return ng_usage_fail("collect",
			                     "--max-past '%s': give an age from 1m to 36600d, such "
			                     "as 7d or 12h",
			                     arg);
		o->max_past_set = true;
	} else if (c == 'F') {
		if (!ng_parse_duration_ms(arg, &o->max_future_ms) ||
		    o->max_future_ms > NG_COLL_MAX_FUTURE_LIMIT_MS)
			return ng_usage_fail(
			    "collect",
			    "--max-future '%s': give an age from 0s to 1d, such as "
			    "1h or 10m",
			    arg);
		o->max_future_set = true;
	} else {
		if (strcmp(arg, "keep") && strcmp(arg, "reject"))
			return ng_usage_fail("collect",
			                     "--implausible-time '%s': give keep or reject", arg);
		o->implausible = !strcmp(arg, "reject") ? NG_CFG_REJECT : NG_CFG_KEEP;
	}
	return -1;
}

/* ClickHouse: --clickhouse, else clickhouse.url, into o->ch (strings
 * borrowed from o->cfg and argv).  Returns 0, or -1 after the usage
 * message. */
static int resolve_clickhouse(struct collect_opts *o)
{
	const ng_cfg_clickhouse *h = &o->cfg.clickhouse;
	ng_ch_conn conn;
	int r = ng_cli_ch_conn("collect", o->clickhouse, h, &conn);
	if (r <= 0)
		return r;
	if (h->cluster && !ng_ch_name_ok(h->cluster)) {
		ng_usage_fail("collect",
		              "clickhouse.cluster '%s': use letters, digits and '_' only",
		              h->cluster);
		return -1;
	}
	snprintf(o->ch_spool, sizeof o->ch_spool, "%s/spool/clickhouse", o->store);
	uint64_t days = h->retention_ms ? h->retention_ms : o->retention_ms;
	o->ch = (ng_ch_sink_config){
	    .conn = conn,
	    .spool_dir = o->ch_spool,
	    .spool_max_bytes = h->spool_max,
	    .batch_rows = h->batch_rows,
	    .schema = {.retention_days = days ? (days + 86399999) / 86400000 : 0,
	               .rollup_retention_days = (h->rollup_retention_ms + 86399999) / 86400000,
	               .cluster = h->cluster,
	               .replicated = h->replicated},
	    .insert_local = h->insert_local,
	    .nodes = (const char *const *)h->nodes,
	    .nnodes = h->nnodes,
	};
	/* hidden knobs of the tests (tests/e2e/test_clickhouse.sh): a small
	 * spool, a short batch age */
	const char *e = getenv("NAGARE_CH_SPOOL_MAX");
	if (e && *e)
		o->ch.spool_max_bytes = strtoull(e, NULL, 10);
	e = getenv("NAGARE_CH_BATCH_MS");
	if (e && *e)
		o->ch.batch_ms = (unsigned)strtoul(e, NULL, 10);
	e = getenv("NAGARE_CH_MEMORY_MAX");
	if (e && *e)
		o->ch.memory_max_bytes = strtoull(e, NULL, 10);
	return 0;
}

/* Parses argv into *o (o->listen has room for argc + 64 addresses) and
 * loads the configuration into o->cfg, which the caller frees whatever
 * this returns.  Returns the exit status when the command ends here (0
 * after --help, 2 for a usage error, 1 when the configuration cannot be
 * read), or -1 to go on. */
/* --stats-interval: whole seconds, 1 to 86400, into o->stats_interval;
 * -1 after the usage message otherwise. */
static int parse_stats_interval(const char *arg, struct collect_opts *o)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(arg, &end, 10);
	if (errno || *end || v < 1 || v > 86400 || arg[0] == '-') {
		ng_usage_fail("collect", "--stats-interval '%s': give whole seconds, 1 to 86400",
		              arg);
		return -1;
	}
	o->stats_interval = (unsigned)v;
	return 0;
}

static int parse_opts(int argc, char **argv, struct collect_opts *o)
{
	static const struct option opts[] = {
	    {"store", required_argument, NULL, 's'},
	    {"listen", required_argument, NULL, 'l'},
	    {"json", required_argument, NULL, 'j'},
	    {"stats-interval", required_argument, NULL, 'i'},
	    {"workers", required_argument, NULL, 'w'},
	    {"config", required_argument, NULL, 'c'},
	    {"geoip-db", required_argument, NULL, 'G'},
	    {"asn-db", required_argument, NULL, 'A'},
	    {"geoip-optional", no_argument, NULL, 'O'},
	    {"enrich", no_argument, NULL, 'E'},
	    {"no-enrich", no_argument, NULL, 'N'},
	    {"http", required_argument, NULL, 'H'},
	    {"http-token", required_argument, NULL, 'T'},
	    {"no-http", no_argument, NULL, 'X'},
	    {"retention", required_argument, NULL, 'R'},
	    {"max-size", required_argument, NULL, 'M'},
	    {"maint-interval", required_argument, NULL, 'I'},
	    {"max-past", required_argument, NULL, 'P'},
	    {"max-future", required_argument, NULL, 'F'},
	    {"implausible-time", required_argument, NULL, 'K'},
	    {"clickhouse", required_argument, NULL, 'C'},
	    {"help", no_argument, NULL, 'h'},
	    NG_HTTP_LONG_OPTS,
	    {0, 0, 0, 0},
	};
	int c;
	optind = 0;
	opterr = 0;
	o->stats_interval = 0;
	o->geoip_optional = o->enrich = -1;
	while ((c = getopt_long(argc, argv, ":s:l:j:i:w:c:h", opts, NULL)) != -1) {
		switch (c) {
		case 's': o->store = optarg; break;
		case 'l': o->listen[o->nlisten++] = optarg; break;
		case 'j': o->json = optarg; break;
		case 'i':
			if (parse_stats_interval(optarg, o) < 0)
				return 2;
			break;
		case 'w':
			if (parse_workers(optarg, o) < 0)
				return 2;
			break;
		case 'c': o->config = optarg; break;
		case 'G': o->geoip_db = optarg; break;
		case 'A': o->asn_db = optarg; break;
		case 'O': o->geoip_optional = 1; break;
		case 'E': o->enrich = 1; break;
		case 'N': o->enrich = 0; break;
		case 'H': o->http = optarg; break;
		case 'T': o->http_token = optarg; break;
		case 'X': o->no_http = true; break;
		case 'R':
			if (!ng_parse_duration_ms(optarg, &o->retention_ms) || !o->retention_ms)
				return ng_usage_fail("collect",
				                     "--retention '%s': give an age such as 30d, "
				                     "12h, 90m or 2w",
				                     optarg);
			break;
		case 'M':
			if (!ng_parse_size_bytes(optarg, &o->max_bytes) || !o->max_bytes)
				return ng_usage_fail(
				    "collect", "--max-size '%s': give a size such as 50G or 500M",
				    optarg);
			break;
		case 'I':
			if (!ng_parse_duration_ms(optarg, &o->maint_ms) || !o->maint_ms)
				return ng_usage_fail("collect",
				                     "--maint-interval '%s': bad duration", optarg);
			break;
		case 'P':
		case 'F':
		case 'K': {
			int rc = window_opt(c, optarg, o);
			if (rc >= 0)
				return rc;
			break;
		}
		case 'C': o->clickhouse = optarg; break;
		case 'h': fputs(collect_help, stdout); return 0;
		default: {
			int r = ng_cli_http_opt("collect", c, optarg, &o->http_opts);
			if (r != 1)
				return r ? r : ng_usage_error("collect", c, argv);
		}
		}
	}
	if (optind < argc)
		return ng_usage_fail("collect", "unexpected argument '%s'", argv[optind]);
	char err[1024]; /* room for the longest key list (limits:) */
	if (load_config(o, &o->cfg, err, sizeof err) < 0) {
		fprintf(stderr, "nagare collect: %s\n", err);
		return 1;
	}
	/* the flag, collect.store or NAGARE_STORE (both in o->cfg), else the
	 * service's or the per-user store; kept in the configuration so that a
	 * reload (which reads it again without the default) keeps it */
	char dbuf[4096];
	/* a store named: --store or collect.store; NAGARE_STORE only moves
	 * the default store, which --clickhouse alone keeps its state in */
	const char *env_store = getenv("NAGARE_STORE");
	o->store_given =
	    o->store ||
	    (o->cfg.store && !(env_store && *env_store && !strcmp(env_store, o->cfg.store)));
	const char *dir = ng_cli_store("collect", o->cfg.store, true, dbuf, sizeof dbuf);
	if (!dir)
		return 2;
	if (dir == dbuf && ng_config_set(&o->cfg.store, dbuf) < 0) {
		fprintf(stderr, "nagare collect: out of memory\n");
		return 1;
	}
	o->store = o->cfg.store;
	o->json = o->cfg.json;
	if (!o->nlisten)
		for (size_t i = 0; i < o->cfg.nlisten && i < 64; i++)
			o->listen[o->nlisten++] = o->cfg.listen[i];
	o->stats_interval = o->cfg.stats_interval ? o->cfg.stats_interval : 60;
	if (resolve_workers(o) < 0)
		return 2;
	resolve_window(o);
	if (resolve_clickhouse(o) < 0)
		return 2;
	return -1; /* go on */
}

/* ng_collector_reload_fn: the configuration read again as at start. */
static int reload_config(void *arg, ng_config *cfg, char *err, size_t errlen)
{
	return load_config(arg, cfg, err, errlen);
}

/* The HTTP limits: each flag, else the configuration's (0: default). */
static ng_http_limits http_limits(const struct collect_opts *o)
{
	ng_http_limits l = o->http_opts.limits;
	const ng_config *c = &o->cfg;
	if (!l.allowed_hosts)
		l.allowed_hosts = c->http_allowed_hosts;
	if (!l.max_connections)
		l.max_connections = c->http_max_connections;
	if (!l.max_per_client)
		l.max_per_client = c->http_max_per_client;
	if (!l.idle_timeout_s)
		l.idle_timeout_s = c->http_idle_timeout;
	if (!o->http_opts.cache_given)
		l.cache_mib = c->http_cache_set ? (int)c->http_cache_mib : -1; /* -1: the default */
	const char *ptr = getenv("NAGARE_PTR"); /* --ptr wins (query/ptr.h) */
	if (!l.ptr && ptr && *ptr)
		l.ptr = ptr;
	return l;
}

/* What the options resolved to, for the collector (borrowing from `o`). */
static ng_collector_config collector_config(const struct collect_opts *o)
{
	return (ng_collector_config){
	    .store = o->store,
	    .listen = o->listen,
	    .nlisten = o->nlisten,
	    .json = o->json,
	    .stats_interval = o->stats_interval,
	    .workers = o->workers,
	    .config = &o->cfg,
	    .enrich = enrich_wanted(o),
	    .options_names = o->enrich != 0,
	    .http = !o->no_http,
	    /* flags, else the configuration (file, then NAGARE_HTTP[_TOKEN]) */
	    .http_listen = o->http ? o->http : o->cfg.http,
	    .http_token = o->http_token ? o->http_token : o->cfg.http_token,
	    .http_limits = http_limits(o),
	    .retention_ms = o->retention_ms,
	    .max_bytes = o->max_bytes,
	    .maint_interval_ms = o->maint_ms,
	    .max_past_ms = o->max_past_ms,
	    .max_future_ms = o->max_future_ms,
	    .reject_implausible = o->implausible == NG_CFG_REJECT,
	    .clickhouse = o->ch.spool_dir ? &o->ch : NULL,
	    /* --clickhouse alone: ClickHouse only; with a store named (or
	     * clickhouse.store: true) both */
	    .no_segments =
	        o->ch.spool_dir &&
	        !(o->cfg.clickhouse.store_set ? o->cfg.clickhouse.store_too : o->store_given),
	    .reload = reload_config,
	    .reload_arg = (void *)o,
	};
}

int ng_cmd_collect(int argc, char **argv)
{
	const char *listen[(argc > 0 ? argc : 1) + 64]; /* flags, or up to 64 from the file */
	struct collect_opts o = {.listen = listen};
	int rc = parse_opts(argc, argv, &o);
	if (rc < 0) {
		ng_collector_config cc = collector_config(&o);
		rc = ng_collector_run(&cc);
	}
	ng_config_free(&o.cfg);
	return rc;
}
