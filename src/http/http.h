/*
 * http.h — the HTTP API and dashboard server (docs/api.md).
 *
 * libmicrohttpd with its own polling thread and a small thread pool: the
 * collector's receive and flush threads never wait on it.  Every request
 * is a GET or HEAD (405 otherwise; bodies refused), answered from the
 * query model (src/query) over the store directory, from a snapshot of
 * the exporter counters the owner publishes (ng_http_exporters_fn), or
 * from the embedded dashboard assets (assets.h).
 *
 * Security (docs/security.md "HTTP", docs/api.md "Security"): bound to a
 * loopback address the API is open to requests whose Host is a loopback
 * name or one of the allowed hosts (guard.c: DNS rebinding); on any other
 * address a token is required (generated and printed when none is given),
 * given as "Authorization: Bearer TOKEN", HTTP basic auth with TOKEN as
 * the password, or "?token=TOKEN" once (answered with a redirect that
 * drops it and a cookie holding a session value derived from the token,
 * session.c); 401 with a JSON error otherwise.  A cross-origin request
 * (Origin, Sec-Fetch-Site) is refused.  Connections are bounded in total
 * and per client address, idle ones evicted first (conns.c).
 */
#ifndef NG_HTTP_H
#define NG_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "decode/decoder.h"
#include "net/listener.h"
#include "store/exporters.h"
#include "store/store.h"

/* The exporter counters at one moment, in the shape of
 * STORE/state/exporters.json (src/store/exporters.h, whose writer the API
 * uses for its rows). */
typedef struct ng_http_exporters {
	ng_exporter_stats *rows; /* malloc'd by the provider, freed by the server */
	size_t n;
	ng_listener_stats listener;
	ng_store_writer_stats store;
	bool has_clickhouse;             /* the collector writes to ClickHouse */
	ng_sink_stats clickhouse;        /* its counters (core/sinkstats.h) */
	ng_limit_stats limits;           /* the decoder's bounds (NG_LIMIT_COUNTERS) */
	uint64_t started_ms, updated_ms; /* 0 when unknown */
	bool live;                       /* from the running collector (else a file) */
	unsigned nworkers;               /* receive workers (store/exporters.h) */
	ng_worker_stats workers[NG_EXPORTERS_WORKERS_MAX];
} ng_http_exporters;

/* Fills *out (zeroed by the caller) with a copy of the counters.  Called
 * from server threads: must be thread-safe.  Returns 0, or -1 with a
 * message in err[errlen] (e.g. no exporters.json yet). */
typedef int (*ng_http_exporters_fn)(void *arg, ng_http_exporters *out, char *err, size_t errlen);

/* The limits of the server (docs/security.md "HTTP"); 0 or NULL: the
 * default. */
typedef struct ng_http_limits {
	const char *allowed_hosts; /* names also accepted as Host, "a.example,b.example";
	                            * NULL: loopback names only (on a loopback address) */
	unsigned max_connections;  /* open connections at most; 0: 256 */
	unsigned max_per_client;   /* of one client address; 0: 32 */
	unsigned idle_timeout_s;   /* a connection with no request in progress is
	                            * closed after this many seconds; 0: 10 */
	int cache_mib;             /* inflated column blocks kept between queries
	                            * (store/framecache.h), MiB; 0: none; -1: an
	                            * eighth of the memory, 64 MiB to 4 GiB */
	/* Host names of addresses (resolve=1; query/ptr.h): NULL or "off":
	 * none (the default: lookups tell a DNS server which addresses are
	 * looked at); "system", or an IPv4 DNS server "ADDR[:PORT]".  A
	 * setting of the server beside its limits, as it comes from the same
	 * flags of collect and serve (cli/http_opts.h). */
	const char *ptr;
} ng_http_limits;

#define NG_HTTP_MAX_CONNECTIONS 256
#define NG_HTTP_MAX_PER_CLIENT 32
#define NG_HTTP_IDLE_TIMEOUT_S 10
#define NG_HTTP_TOKEN_MIN 16 /* characters of a configured token at least */

typedef struct ng_http_config {
	const char *store_dir;          /* the flow store queried */
	const char *listen;             /* "127.0.0.1:8080", "[::1]:8080", "0.0.0.0:8080" */
	const char *token;              /* NULL/"": none (loopback only; off loopback one is
	                                 * generated); "auto": generate one */
	uint64_t max_range_ms;          /* longest query time range; 0: 31 days */
	size_t max_rows;                /* rows per page at most; 0: 10000 */
	unsigned timeout_ms;            /* a query's run time at most; 0: 10000 */
	unsigned threads;               /* queries run at once (each scans on every
	                                 * core); 0: 4.  Others wait, up to the
	                                 * time limit (then 503) */
	ng_http_exporters_fn exporters; /* may be NULL */
	void *exporters_arg;
	/* Writes the SNMP poller's members "snmp":[agents...] and
	 * "snmp_exporters_dropped" into the FILE (the collector's
	 * enrich/snmp.h ng_snmp_put_json), for /api/v1/exporters.  Called
	 * from server threads: thread-safe.  NULL: no "snmp". */
	void (*snmp_json)(void *arg, FILE *f);
	void *snmp_arg;
	/* Where the collector receives flows ("127.0.0.1:2055", ":6343",
	 * "tcp://[::]:4739", as given to --listen), nflow_listen of them, for
	 * /api/v1/exporters' "listen" (the dashboards' empty states); copied.
	 * NULL: no "listen" (nagare serve: no collector). */
	const char *const *flow_listen;
	size_t nflow_listen;
	ng_http_limits limits;
	size_t metrics_exporters; /* exporters with their own /metrics series, by
	                           * records; the rest as one "others" series;
	                           * 0: 100 (limits.metrics_exporters) */
	bool attribution_dbip;    /* DB-IP data enriches the flows: /api/v1/fields'
	                           * "attribution" names it, the dashboards show it
	                           * (CC BY 4.0; docs/enrichment.md) */
	/* Answer the flow queries (/api/v1/top, /flows, /summary, /series,
	 * /pairs, /complete) from this ClickHouse (query/backend.h) instead
	 * of the store: a client of its own per request, the server's version
	 * detected at the first request and again after one found it
	 * unreachable (the server starts while ClickHouse is down; until it
	 * answers those requests answer 503 "ClickHouse unreachable").  With
	 * `exporters` NULL, /api/v1/exporters answers from ClickHouse's
	 * tables too (exporters_ch.c).  Borrowed: it and its strings must
	 * outlive the server.  NULL: the store. */
	const struct ng_ch_conn *clickhouse;
} ng_http_config;

typedef struct ng_http_server ng_http_server;

/*
 * Starts serving.  The strings of `cfg` are copied.  Returns NULL with a
 * message in err[errlen] when the address is malformed or cannot be bound,
 * when the token is shorter than NG_HTTP_TOKEN_MIN or holds characters a
 * cookie or header cannot carry, or when a limit is out of range.
 */
ng_http_server *ng_http_start(const ng_http_config *cfg, char *err, size_t errlen);

/* The URL of the dashboards, e.g. "http://127.0.0.1:8080/" (the bound
 * port when 0 was asked), into buf[len].  Returns buf. */
char *ng_http_url(const ng_http_server *s, char *buf, size_t len);

/* The token the server requires, NULL when none; *generated (may be
 * NULL) tells whether the server made it (to be printed for the user).
 * Owned by the server. */
const char *ng_http_token(const ng_http_server *s, bool *generated);

/* Logs where the dashboards are ("dashboards and API at URL", then
 * `what`), and, when the server made its token, the token and the URL
 * that lets a browser in (?token=), on stderr. */
void ng_http_announce(const ng_http_server *s, const char *what);

/* The bound TCP port. */
uint16_t ng_http_port(const ng_http_server *s);

/* Stops the threads (waiting for requests in progress) and frees.  NULL
 * is a no-op. */
void ng_http_stop(ng_http_server *s);

/* True when `listen` names only loopback (127.0.0.0/8, ::1, "localhost"). */
bool ng_http_is_loopback(const char *listen);

/* Constant-time equality of two NUL-terminated strings (time depends on
 * the lengths only). */
bool ng_http_token_equal(const char *a, const char *b);

#endif
