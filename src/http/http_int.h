/*
 * http_int.h — internals shared by server.c and api.c.
 */
#ifndef NG_HTTP_INT_H
#define NG_HTTP_INT_H

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <sys/socket.h>

#include "clickhouse/client.h"
#include "clickhouse/schema.h"
#include "core/json.h"
#include "http/http.h"

/* Query latency histogram bounds, seconds (Prometheus "le"). */
#define NG_HTTP_NBUCKETS 12
extern const double ng_http_buckets[NG_HTTP_NBUCKETS];

/* Why a request was refused before any handler ran (guard.c). */
enum ng_http_refusal { NG_REFUSE_HOST, NG_REFUSE_ORIGIN, NG_REFUSE_COUNT };

typedef struct ng_http_metrics {
	atomic_uint_fast64_t requests, queries, query_errors, timeouts, unauthorized;
	atomic_uint_fast64_t refused[NG_REFUSE_COUNT]; /* by enum ng_http_refusal */
	atomic_uint_fast64_t conns_evicted;            /* idle connections closed for room */
	atomic_uint_fast64_t conns_refused;            /* new ones closed: no room */
	atomic_uint_fast64_t conns_expired;            /* closed past the idle time-out */
	atomic_uint_fast64_t lat_bucket[NG_HTTP_NBUCKETS + 1]; /* last: +Inf */
	atomic_uint_fast64_t lat_sum_us;
} ng_http_metrics;

typedef struct ng_http_conn ng_http_conn; /* one open connection (conns.c) */

/* The open connections, for the limits (conns.c).  Guarded by mu. */
typedef struct ng_http_conns {
	pthread_mutex_t mu;
	ng_http_conn *head;       /* most recently opened first */
	unsigned open;            /* not yet marked for closing */
	unsigned max, per_client; /* the limits */
	uint64_t idle_ms;         /* idle time-out */
} ng_http_conns;

/* The store's segment count and size for /metrics, refreshed by a thread
 * of its own at most every NG_HTTP_STORE_STATS_MS (api.c). */
#define NG_HTTP_STORE_STATS_MS 10000
typedef struct ng_http_store_stats {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t thread;
	bool started, stop, wanted, valid;
	uint64_t segments, bytes, walked_ms; /* walked_ms: monotonic, end of the last walk */
	uint64_t walk_us;                    /* what the last walk took */
	uint64_t quarantined;                /* files in DIR/quarantine (nagare fsck moved them) */
	uint64_t damaged; /* damaged segments this process found, still in place */
} ng_http_store_stats;

struct ng_http_server {
	struct MHD_Daemon *d;
	char *store_dir, *token, *listen;
	char *flow_listen; /* JSON array of ng_http_config.flow_listen; NULL: none */
	char session[65];  /* hex HMAC-SHA256 of the token under a start-time key:
	                    * the cookie's value (session.c); "" without token */
	bool token_generated;
	char **allowed; /* lower-case names also accepted as Host */
	size_t nallowed;
	bool loopback;
	ng_http_conns conns;
	ng_http_store_stats sstats;
	uint64_t max_range_ms;
	size_t max_rows;
	unsigned timeout_ms;
	ng_http_exporters_fn exporters;
	void *exporters_arg;
	void (*snmp_json)(void *arg, FILE *f); /* ng_http_config's */
	void *snmp_arg;
	struct ng_ptr *ptr; /* host names (query/ptr.h); NULL: off */
	size_t metrics_exporters;
	bool attribution_dbip; /* ng_http_config's */
	uint16_t port;
	ng_http_metrics m;
	sem_t qgate;          /* queries running at once at most (config threads) */
	const ng_ch_conn *ch; /* ng_http_config.clickhouse (borrowed); NULL: the store */
	/* ch's version and features, detected at the first request that
	 * needs them (ng_http_ch_server), not at start: a collector starts
	 * and spools while ClickHouse is down */
	pthread_mutex_t ch_mu;
	ng_ch_server ch_sv; /* under ch_mu, valid when ch_known */
	bool ch_known;      /* under ch_mu */
	bool qgate_init, conns_init, ch_mu_init;
};

/* One request, as api.c sees it. */
typedef struct ng_http_req {
	const char *path;
	const char *(*arg)(void *conn, const char *name); /* decoded query argument or NULL */
	void *conn;
	bool head;
} ng_http_req;

/* One answer: body malloc'd (freed by the server). */
typedef struct ng_http_resp {
	unsigned status;
	char *body;
	size_t len;
	const char *ctype;
	char disposition[128];            /* Content-Disposition, "" for none */
	const unsigned char *static_body; /* instead of body: borrowed (assets) */
	char *location;                   /* Location of a redirect, malloc'd, or NULL */
	const char *allow;                /* Allow of a 405 (static), NULL: "GET, HEAD" */
} ng_http_resp;

/* Routes and answers a GET. */
void ng_api_handle(ng_http_server *s, const ng_http_req *r, ng_http_resp *out);

/* Answers /api/v1/views[/NAME] (views.c): GET lists, POST saves the JSON
 * body[len] (may be NULL), DELETE removes NAME; 405 for anything else.
 * The caller has made the guard, token and Content-Type checks. */
void ng_api_views(ng_http_server *s, const char *method, const char *url, const char *body,
                  size_t len, ng_http_resp *out);

/* GET /api/v1/exporters from ClickHouse (exporters_ch.c; nagare serve
 * --clickhouse, where no collector's counters are at hand): the rows
 * `limit` from `offset`, most records first, from DB.flows_1h,
 * DB.exporters and DB.interfaces of client cl's server, into *out
 * (docs/api.md: the embedded answer's keys, "source":"clickhouse", null
 * for what only a collector counts).  Returns 0, or -1 with the cause in
 * err[errlen] and errno ETIMEDOUT (cl's time-out), ECONNREFUSED (no
 * connection) or EIO (a statement refused, an answer that does not
 * parse). */
int ng_api_exporters_ch(ng_http_server *s, ng_ch_client *cl, size_t limit, size_t offset,
                        ng_http_resp *out, char *err, size_t errlen);

/* The JSON of ng_api_exporters_ch into f from its three statements'
 * RowBinary answers body[i] (len[i] bytes; NULL: empty): the rows of
 * flows_1h, the exporters' last seen, the interfaces; rows `limit` from
 * `offset`, health against `now` (ms).  Returns 0, or -1 with err set,
 * nothing written, when an answer does not parse or memory is out.
 * Bytes from a server: fuzzed (tests/fuzz/fuzz_ch_exporters.c). */
int ng_exporters_ch_write(FILE *f, const char *const body[3], const size_t len[3], size_t limit,
                          size_t offset, uint64_t now, char *err, size_t errlen);

/* Sets a JSON error {"error": msg, "hint": hint} (hint may be NULL). */
void ng_api_error(ng_http_resp *out, unsigned status, const char *msg, const char *hint);

/* Counts one query of `us` microseconds. */
void ng_http_observe(ng_http_server *s, uint64_t us);

/* ---- server.c: ClickHouse's version ------------------------------------ */

/* The version and features of s->ch's server into *sv: detected with
 * client cl (SELECT version(), clickhouse/schema.h ng_ch_detect) at the
 * first call, and again at the first call after ng_http_ch_forget; kept
 * in between.  Thread-safe (callers wait for one detection at a time).
 * Returns 0, or -1 with the cause in err[errlen], logged at most once a
 * NG_HTTP_LOG_MS, and errno ECONNREFUSED (ClickHouse unreachable: no
 * connection, or it was lost), ETIMEDOUT (cl's time-out passed) or EIO
 * (an HTTP error status, an answer that is not a version). */
int ng_http_ch_server(ng_http_server *s, ng_ch_client *cl, ng_ch_server *sv, char *err,
                      size_t errlen);

/* After a request found ClickHouse unreachable: its version is detected
 * again at the next request (it may come back as another release). */
void ng_http_ch_forget(ng_http_server *s);

/* Logs at most one message a NG_HTTP_LOG_MS per `slot` (an index below
 * NG_HTTP_LOG_SLOTS), saying how many were held back since.  Thread-safe. */
#define NG_HTTP_LOG_MS 10000
enum {
	NG_HTTP_LOG_HOST,
	NG_HTTP_LOG_ORIGIN,
	NG_HTTP_LOG_EVICT,
	NG_HTTP_LOG_REFUSE,
	NG_HTTP_LOG_MHD,
	NG_HTTP_LOG_CLICKHOUSE,
	NG_HTTP_LOG_SLOTS
};
void ng_http_log_limited(int slot, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- guard.c: who may ask ---------------------------------------------- */

/* Parses the comma (or space) list of allowed host names into s->allowed.
 * Returns 0, or -1 with a message in err[errlen] (a name with a port, a
 * scheme or a character no host name has). */
int ng_http_guard_init(ng_http_server *s, const char *list, char *err, size_t errlen);

/* Checks Host, Origin and Sec-Fetch-Site of a request (method `method`,
 * `version` "HTTP/1.1"...).  Returns true to go on; false with the
 * 400/403/421 answer set in *out (and the refusal counted and logged). */
bool ng_http_guard(ng_http_server *s, void *conn, const char *method, const char *version,
                   ng_http_resp *out);

/* True when the Host header value `host` ("name", "name:port", "[v6]:port")
 * names loopback: localhost, *.localhost, 127.0.0.0/8, ::1. */
bool ng_http_host_is_loopback(const char *host);

/* ---- session.c: tokens and the session cookie -------------------------- */

/* Fills buf[len] (len > 32) with a new token: 32 hex digits of getrandom.
 * Returns 0, -1 when the kernel gives no randomness. */
int ng_http_token_new(char *buf, size_t len);

/* Sets s->session from s->token and a new random key (hex HMAC-SHA256,
 * RFC 2104).  Returns 0, -1 without randomness. */
int ng_http_session_init(ng_http_server *s);

/* The path and query of the request without its token argument, encoded
 * for a Location header, into buf[len].  Returns false when it does not
 * fit. */
bool ng_http_url_without_token(void *conn, const char *path, char *buf, size_t len);

/* ---- conns.c: connection limits ---------------------------------------- */

/* Sets up s->conns with the limits.  Returns 0, -1 on failure. */
int ng_http_conns_init(ng_http_server *s, unsigned max, unsigned per_client, unsigned idle_s);
void ng_http_conns_destroy(ng_http_server *s);

/* libmicrohttpd callbacks (MHD_OPTION_ACCEPT_POLICY_CALLBACK,
 * MHD_OPTION_NOTIFY_CONNECTION, MHD_OPTION_NOTIFY_COMPLETED) and the
 * request start: the accounting of conns.c.  `cls` is the server. */
int ng_http_conns_accept(void *cls, const struct sockaddr *addr, unsigned addrlen);
void ng_http_conns_notify(void *cls, void *conn, void **socket_context, int toe);
void ng_http_conns_busy(ng_http_server *s, void *conn, bool busy);

/* Connections open now (not marked for closing). */
unsigned ng_http_conns_open(ng_http_server *s);

/* ---- api.c: the store statistics of /metrics --------------------------- */
int ng_http_store_stats_start(ng_http_server *s);
void ng_http_store_stats_stop(ng_http_server *s);

#endif
