/*
 * http_int.h — internals shared by server.c and api.c.
 */
#ifndef NG_HTTP_INT_H
#define NG_HTTP_INT_H

#include <semaphore.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/json.h"
#include "http/http.h"

/* Query latency histogram bounds, seconds (Prometheus "le"). */
#define NG_HTTP_NBUCKETS 12
extern const double ng_http_buckets[NG_HTTP_NBUCKETS];

typedef struct ng_http_metrics {
	atomic_uint_fast64_t requests, queries, query_errors, timeouts, unauthorized;
	atomic_uint_fast64_t lat_bucket[NG_HTTP_NBUCKETS + 1]; /* last: +Inf */
	atomic_uint_fast64_t lat_sum_us;
} ng_http_metrics;

struct ng_http_server {
	struct MHD_Daemon *d;
	char *store_dir, *token, *listen;
	bool loopback;
	uint64_t max_range_ms;
	size_t max_rows;
	unsigned timeout_ms;
	ng_http_exporters_fn exporters;
	void *exporters_arg;
	size_t metrics_exporters;
	uint16_t port;
	ng_http_metrics m;
	sem_t qgate; /* queries running at once at most (config threads) */
	bool qgate_init;
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
} ng_http_resp;

/* Routes and answers a GET. */
void ng_api_handle(ng_http_server *s, const ng_http_req *r, ng_http_resp *out);

/* Sets a JSON error {"error": msg, "hint": hint} (hint may be NULL). */
void ng_api_error(ng_http_resp *out, unsigned status, const char *msg, const char *hint);

/* Counts one query of `us` microseconds. */
void ng_http_observe(ng_http_server *s, uint64_t us);

#endif
