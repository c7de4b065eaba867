/*
 * collector.h — the running collector, what `nagare collect` starts.
 *
 * ng_collector_run receives NetFlow v1/v5/v7/v9, IPFIX and sFlow on UDP,
 * decodes every datagram, enriches the records, appends them to a flow
 * store (and NDJSON when asked), keeps per-exporter counters and interface
 * names in the store's state directory, serves the dashboards and API, and
 * maintains the store (compaction, rollups, retention) until SIGTERM or
 * SIGINT.  Its threads and what each may touch: collector.c.
 *
 * The configuration here is what the command's flags, the NAGARE_*
 * environment and the YAML file resolve to (cli/collect.c does that);
 * nothing in src/collector/ reads argv or the environment.
 */
#ifndef NG_COLLECTOR_H
#define NG_COLLECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "http/http.h"
#include "sink/clickhouse.h"

/* Reads the configuration again for a reload (SIGHUP, or a database or
 * configuration file replaced), into *cfg (the callee fills it; the
 * collector frees it with ng_config_free).  Called on the reloader's
 * thread.  Returns 0, or -1 with a message in err[errlen] (the tables in
 * use are kept). */
typedef int (*ng_collector_reload_fn)(void *arg, ng_config *cfg, char *err, size_t errlen);

/* The time window's defaults and bounds (collect.max_past, max_future):
 * 7 days back (softflowd's longest flow lifetime; a flow's start is
 * before its export by up to the active timeout), 1 hour ahead (clock
 * drift).  The window's hours bound the segments a flush of hostile times
 * writes (169 by default, below the writer's NG_FLUSH_MAX_HOURS). */
#define NG_COLL_MAX_PAST_MS (7 * UINT64_C(86400000))
#define NG_COLL_MAX_FUTURE_MS UINT64_C(3600000)
#define NG_COLL_MAX_PAST_LIMIT_MS (36600 * UINT64_C(86400000)) /* 100 years: none */
#define NG_COLL_MAX_FUTURE_LIMIT_MS UINT64_C(86400000)

typedef struct ng_collector_config {
	const char *store;         /* flow store directory, created when absent */
	const char *const *listen; /* UDP addresses "ADDR:PORT" (net/listener.h) */
	size_t nlisten;            /* 0: the default ports on every address */
	const char *json;          /* every flow as NDJSON to this file (appended),
	                            * "-": stdout; NULL: none */
	unsigned workers;          /* receive threads (collector/workers.c), 1 to
	                            * NG_REUSEPORT_MAX; 0: 1.  More than one needs
	                            * json NULL */
	unsigned stats_interval;   /* seconds between counter reports (log lines,
	                            * STORE/state/exporters.json and interfaces.tsv);
	                            * at least 1 */
	/* The configuration file's settings: the enrichment tables are built
	 * from it at start (from the reload function's after a reload); its
	 * exporters and their interfaces are written to interfaces.tsv all
	 * run long; geoip_optional only words the error when tables fail. */
	const ng_config *config;
	bool enrich;                /* build the enrichment tables from `config` */
	bool options_names;         /* learn interface names from options data and put
	                             * them on the records (off with --no-enrich) */
	bool http;                  /* serve the dashboards and the API (docs/api.md) */
	const char *http_listen;    /* TCP "ADDR:PORT"; NULL: 127.0.0.1:8080, where
	                             * a failure to bind only warns */
	const char *http_token;     /* NULL or "": none (loopback addresses only;
	                             * elsewhere one is made); "auto": make one */
	ng_http_limits http_limits; /* connections, time-outs, allowed hosts */
	uint64_t retention_ms;      /* delete segments older than this; 0: keep */
	uint64_t max_bytes;         /* then the oldest above this size; 0: no limit */
	uint64_t maint_interval_ms; /* between maintenance runs; 0: 60 s */
	/* the time window (timecheck.c, docs/security.md): a record whose
	 * flow_start or flow_end is more than max_past_ms before or
	 * max_future_ms after its receive time is time-implausible; kept,
	 * flagged and filed at its receive time, or with reject_implausible
	 * dropped; counted either way.  max_past_ms from 1 minute to
	 * NG_COLL_MAX_PAST_LIMIT_MS, max_future_ms up to
	 * NG_COLL_MAX_FUTURE_LIMIT_MS; max_past_ms 0: both defaults */
	uint64_t max_past_ms, max_future_ms;
	bool reject_implausible;
	/* ClickHouse (sink/clickhouse.h, docs/clickhouse.md): the rows each
	 * store flush makes durable also go there; NULL: no ClickHouse.  With
	 * no_segments the store writes no segment (ClickHouse alone: the
	 * store directory keeps the state and the spool) */
	const ng_ch_sink_config *clickhouse;
	bool no_segments;
	ng_collector_reload_fn reload; /* NULL: `config` again, as it is */
	void *reload_arg;
} ng_collector_config;

/*
 * Runs the collector in the calling thread (the receive thread) until
 * SIGTERM or SIGINT; installs the handlers for those and SIGHUP (reload
 * the enrichment tables) and ignores SIGPIPE.  A second stop signal ends
 * the process at once.  `cfg` and what it points to are borrowed for the
 * whole run.
 *
 * While it runs, the template state is written to STORE/state/templates
 * every NG_TEMPLATE_SAVE_MS when it changed (by the flush thread: the
 * receive thread only copies it), so a kill -9 loses at most that much of
 * what exporters announced.  On stop: what the sockets hold is read and
 * decoded, every record appended is flushed, templates are saved to
 * STORE/state/templates and counters to STORE/state/exporters.json.
 *
 * Returns the exit status: 0; 1 when it cannot start (the cause on stderr,
 * "nagare collect: …": the store, the state directory, the enrichment
 * tables, a listen address, the NDJSON file, an HTTP address given in
 * `http_listen`, a thread), when waiting for datagrams fails, or when
 * records, counter samples or templates were lost (the log says how
 * many).
 */
int ng_collector_run(const ng_collector_config *cfg);

/* How often a running collector looks at its template state, ms. */
#define NG_TEMPLATE_SAVE_MS 10000

#endif
