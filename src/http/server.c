/*
 * server.c — libmicrohttpd glue: listening, method and size limits,
 * authentication, the response (see http.h).  A request passes, in
 * order: the connection limits (conns.c, at accept), the Host and Origin
 * checks (guard.c), the method and body limits, the token (session.c for
 * the cookie), then the API (api.c).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/json.h"
#include "core/log.h"
#include "query/ptr.h"
#include "http/http_int.h"
#include "http/views.h"
#include "store/framecache.h"

/* Bytes a connection may hold (request line, headers): a longer URL is
 * refused by libmicrohttpd with 414/431 before it reaches us. */
#define CONN_MEMORY (32 * 1024)
/* libmicrohttpd's own connection limit is this many times ours, for the
 * connections conns.c shut down whose threads have not yet closed them
 * (under a flood, dozens): its refusals are neither counted nor spare the
 * idle, ours are and do.  Its per-address limit
 * (MHD_OPTION_PER_IP_CONNECTION_LIMIT) is not used for the same reason:
 * it refuses the newcomer even when the address's other connections are
 * idle — on loopback, where the browser shares 127.0.0.1 with every local
 * program, that would let any of them lock the browser out (conns.c). */
#define LIMIT_SLACK 2
#define COOKIE "nagare_session"

static struct {
	pthread_mutex_t mu;
	uint64_t last_ms[NG_HTTP_LOG_SLOTS];
	unsigned held[NG_HTTP_LOG_SLOTS];
} log_limit = {.mu = PTHREAD_MUTEX_INITIALIZER};

void ng_http_log_limited(int slot, const char *fmt, ...)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t now = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000 + NG_HTTP_LOG_MS;
	pthread_mutex_lock(&log_limit.mu);
	bool say = now - log_limit.last_ms[slot] >= NG_HTTP_LOG_MS;
	unsigned held = log_limit.held[slot];
	if (say) {
		log_limit.last_ms[slot] = now;
		log_limit.held[slot] = 0;
	} else {
		log_limit.held[slot]++;
	}
	pthread_mutex_unlock(&log_limit.mu);
	if (!say)
		return;
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (held)
		ng_warn("%s (and %u more like it in the last %d s)", msg, held,
		        NG_HTTP_LOG_MS / 1000);
	else
		ng_warn("%s", msg);
}

/* MHD_OPTION_EXTERNAL_LOGGER: libmicrohttpd's messages, one a line, rate
 * limited like ours ("Connection was closed by remote side with incomplete
 * request" comes once per slow client a flood closes). */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	char msg[512];
	vsnprintf(msg, sizeof msg, fmt, ap);
	msg[strcspn(msg, "\n")] = 0;
	ng_http_log_limited(NG_HTTP_LOG_MHD, "HTTP (libmicrohttpd): %s", msg);
}

bool ng_http_token_equal(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned char diff = (unsigned char)(la != lb);
	/* walk the secret's length whatever the guess: no early exit */
	for (size_t i = 0; i < lb; i++)
		diff |= (unsigned char)(b[i] ^ (i < la ? a[i] : 0));
	return diff == 0;
}

/* Splits "ADDR:PORT", "[V6]:PORT" into a socket address. */
static bool parse_listen(const char *spec, struct sockaddr_storage *ss, socklen_t *sl)
{
	char host[128];
	const char *colon;
	if (spec[0] == '[') {
		const char *close = strchr(spec, ']');
		if (!close || close[1] != ':' || (size_t)(close - spec - 1) >= sizeof host)
			return false;
		memcpy(host, spec + 1, (size_t)(close - spec - 1));
		host[close - spec - 1] = 0;
		colon = close + 1;
	} else {
		colon = strrchr(spec, ':');
		if (!colon || (size_t)(colon - spec) >= sizeof host)
			return false;
		memcpy(host, spec, (size_t)(colon - spec));
		host[colon - spec] = 0;
		if (!strcmp(host, "localhost"))
			strcpy(host, "127.0.0.1");
	}
	char *end;
	long port = strtol(colon + 1, &end, 10);
	if (*end || end == colon + 1 || port < 0 || port > 65535)
		return false;
	memset(ss, 0, sizeof *ss);
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	if (inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		*sl = sizeof *s4;
		return true;
	}
	if (inet_pton(AF_INET6, host, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		*sl = sizeof *s6;
		return true;
	}
	return false;
}

bool ng_http_is_loopback(const char *listen)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	if (!parse_listen(listen, &ss, &sl))
		return false;
	if (ss.ss_family == AF_INET)
		return (ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr) >> 24) == 127;
	return IN6_IS_ADDR_LOOPBACK(&((struct sockaddr_in6 *)&ss)->sin6_addr);
}

static const char *get_arg(void *conn, const char *name)
{
	return MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, name);
}

/* The token of the request: bearer, basic password, ?token=, the session
 * cookie.  *via_url is set when it came as ?token= (the caller answers
 * with a redirect that sets the cookie). */
static bool authorized(ng_http_server *s, struct MHD_Connection *conn, bool *via_url)
{
	*via_url = false;
	if (!s->token)
		return true;
	const char *h =
	    MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
	if (h && !strncasecmp(h, "Bearer ", 7))
		return ng_http_token_equal(h + 7, s->token);
	if (h && !strncasecmp(h, "Basic ", 6)) {
		char *pass = NULL;
		char *user = MHD_basic_auth_get_username_password(conn, &pass);
		bool ok = pass && ng_http_token_equal(pass, s->token);
		MHD_free(user);
		MHD_free(pass);
		return ok;
	}
	const char *t = get_arg(conn, "token");
	if (t) {
		*via_url = ng_http_token_equal(t, s->token);
		return *via_url;
	}
	const char *c = MHD_lookup_connection_value(conn, MHD_COOKIE_KIND, COOKIE);
	return c && ng_http_token_equal(c, s->session);
}

/* The answer to a good ?token=: 303 to the same URL without it. */
static void token_redirect(struct MHD_Connection *conn, const char *url, ng_http_resp *r)
{
	char loc[CONN_MEMORY];
	if (!ng_http_url_without_token(conn, url, loc, sizeof loc) ||
	    !(r->location = strdup(loc))) {
		ng_api_error(r, 414, "URL too long", NULL);
		return;
	}
	r->status = 303;
	r->body = strdup("see other: the token is now a session cookie\n");
	r->len = r->body ? strlen(r->body) : 0;
	r->ctype = "text/plain";
}

static enum MHD_Result send_resp(struct MHD_Connection *conn, ng_http_resp *r, bool cookie,
                                 ng_http_server *s)
{
	struct MHD_Response *mr;
	if (r->static_body)
		mr = MHD_create_response_from_buffer(r->len, (void *)r->static_body,
		                                     MHD_RESPMEM_PERSISTENT);
	else
		mr = MHD_create_response_from_buffer(r->len, r->body ? r->body : "",
		                                     r->body ? MHD_RESPMEM_MUST_FREE
		                                             : MHD_RESPMEM_PERSISTENT);
	if (!mr) {
		free(r->body);
		free(r->location);
		return MHD_NO;
	}
	MHD_add_response_header(mr, MHD_HTTP_HEADER_CONTENT_TYPE,
	                        r->ctype ? r->ctype : "application/json");
	MHD_add_response_header(mr, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(mr, "Cache-Control", "no-store");
	MHD_add_response_header(mr, "Content-Security-Policy",
	                        "default-src 'self'; style-src 'self' 'unsafe-inline'; "
	                        "img-src 'self' data:");
	if (r->disposition[0])
		MHD_add_response_header(mr, "Content-Disposition", r->disposition);
	if (r->status == 405)
		MHD_add_response_header(mr, MHD_HTTP_HEADER_ALLOW,
		                        r->allow ? r->allow : "GET, HEAD");
	if (r->status == 401)
		MHD_add_response_header(mr, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
		                        "Bearer realm=\"nagare\"");
	if (r->location) {
		MHD_add_response_header(mr, MHD_HTTP_HEADER_LOCATION, r->location);
		free(r->location);
	}
	if (cookie) {
		char c[128];
		snprintf(c, sizeof c, COOKIE "=%s; Path=/; HttpOnly; SameSite=Strict", s->session);
		MHD_add_response_header(mr, MHD_HTTP_HEADER_SET_COOKIE, c);
	}
	enum MHD_Result rc = MHD_queue_response(conn, r->status, mr);
	MHD_destroy_response(mr);
	return rc;
}

/* A writing request's body being read (POST /api/v1/views), in *con_cls
 * between libmicrohttpd's calls; freed by on_completed. */
typedef struct upload {
	size_t len;
	bool over; /* more than NG_VIEWS_BODY_MAX came: answered 413 */
	char buf[NG_VIEWS_BODY_MAX];
} upload;

static bool is_views(const char *url)
{
	return !strncmp(url, "/api/v1/views", 13) && (!url[13] || url[13] == '/');
}

/* The checks of a request's first call (headers only), in the order of
 * docs/security.md "HTTP": guard, method, body, token.  Returns true to go
 * on; false with the answer in *r.  *body: the request is a POST of the
 * views, whose body is to be read. */
static bool first_checks(ng_http_server *s, struct MHD_Connection *conn, const char *url,
                         const char *method, const char *version, size_t *upload_data_size,
                         ng_http_resp *r, bool *cookie, bool *body)
{
	bool head = !strcmp(method, MHD_HTTP_METHOD_HEAD);
	bool post = !strcmp(method, MHD_HTTP_METHOD_POST);
	bool write = (post || !strcmp(method, MHD_HTTP_METHOD_DELETE)) && is_views(url);
	const char *te =
	    MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
	const char *cl =
	    MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	const char *ct =
	    MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
	*body = false;
	if (!ng_http_guard(s, conn, method, version, r))
		return false; /* refused: Host or Origin (guard.c) */
	if (strcmp(method, MHD_HTTP_METHOD_GET) && !head && !write) {
		ng_api_error(r, 405, "method not allowed",
		             "use GET or HEAD (POST and DELETE only under /api/v1/views)");
		if (is_views(url))
			r->allow = url[13] == '/' ? "DELETE" : "GET, HEAD, POST";
	} else if (post && (!ct || strncasecmp(ct, "application/json", 16))) {
		ng_api_error(r, 415, "a POST must be Content-Type: application/json", NULL);
	} else if (post && cl && strtoull(cl, NULL, 10) > NG_VIEWS_BODY_MAX) {
		ng_api_error(r, 413, "the body is over 16384 bytes",
		             "a view's state is 4 KiB at most");
	} else if (!post && (*upload_data_size || te || (cl && strcmp(cl, "0")))) {
		*upload_data_size = 0;
		ng_api_error(r, 413, "request bodies are not accepted",
		             "give parameters in the URL's query string");
	} else if (strcmp(url, "/healthz") && !authorized(s, conn, cookie)) {
		atomic_fetch_add(&s->m.unauthorized, 1);
		ng_api_error(r, 401, "missing or wrong token",
		             "send 'Authorization: Bearer TOKEN', HTTP basic auth with the "
		             "token as password, or open the dashboard once with ?token=TOKEN");
	} else if (*cookie && !write) {
		token_redirect(conn, url, r);
	} else {
		*cookie = false; /* a writing request with ?token=: no redirect */
		*body = post;
		return true;
	}
	return false;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
	ng_http_server *s = cls;
	ng_http_resp r = {.status = 200};
	bool cookie = false, body = false;
	upload *u = *con_cls;
	if (u) { /* a POST's body, piece by piece, then its end */
		size_t n = *upload_data_size;
		if (n) {
			if (n > sizeof u->buf - u->len)
				u->over = true;
			else if (!u->over)
				memcpy(u->buf + u->len, upload_data, n), u->len += n;
			*upload_data_size = 0;
			return MHD_YES;
		}
		if (u->over)
			ng_api_error(&r, 413, "the body is over 16384 bytes",
			             "a view's state is 4 KiB at most");
		else
			ng_api_views(s, method, url, u->buf, u->len, &r);
		return send_resp(conn, &r, false, s);
	}
	/* The first call, with the headers only: a request with a body is
	 * refused before the body is read (libmicrohttpd then closes the
	 * connection rather than read it), but for a POST of the views. */
	atomic_fetch_add(&s->m.requests, 1);
	ng_http_conns_busy(s, conn, true); /* until on_completed */
	if (first_checks(s, conn, url, method, version, upload_data_size, &r, &cookie, &body)) {
		if (body) {
			if (!(*con_cls = calloc(1, sizeof(upload))))
				return MHD_NO;
			return MHD_YES;
		}
		if (is_views(url)) {
			ng_api_views(s, method, url, NULL, 0, &r);
		} else {
			bool head = !strcmp(method, MHD_HTTP_METHOD_HEAD);
			ng_http_req req = {.path = url, .arg = get_arg, .conn = conn, .head = head};
			ng_api_handle(s, &req, &r);
		}
	}
	return send_resp(conn, &r, cookie, s);
}

/* MHD_OPTION_NOTIFY_COMPLETED: the answer is sent (or the connection
 * died): the connection is idle again for conns.c. */
static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
	(void)toe;
	free(*con_cls); /* a POST's upload, if any */
	*con_cls = NULL;
	ng_http_conns_busy(cls, conn, false);
}

/* MHD_OPTION_NOTIFY_CONNECTION, typed for libmicrohttpd. */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
	ng_http_conns_notify(cls, conn, socket_context, (int)toe);
}

/* MHD_OPTION_ACCEPT_POLICY_CALLBACK, typed for libmicrohttpd. */
static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr, socklen_t addrlen)
{
	return ng_http_conns_accept(cls, addr, (unsigned)addrlen) ? MHD_YES : MHD_NO;
}

/* The token the server will require into tok[len] ("" for none): the
 * configured one, checked, or a new one when wanted and not given (off
 * loopback, or "auto").  Returns 0, or -1 with a message in err. */
static int pick_token(const char *cfg_token, bool loop, char *tok, size_t len, bool *generated,
                      char *err, size_t errlen)
{
	bool given = cfg_token && *cfg_token && strcmp(cfg_token, "auto");
	*generated = false;
	tok[0] = 0;
	if (!given && (!loop || (cfg_token && !strcmp(cfg_token, "auto")))) {
		if (ng_http_token_new(tok, len) < 0) {
			snprintf(err, errlen, "cannot make an HTTP token: getrandom failed");
			return -1;
		}
		*generated = true;
		return 0;
	}
	if (!given)
		return 0;
	if (strlen(cfg_token) < NG_HTTP_TOKEN_MIN) {
		snprintf(err, errlen,
		         "the HTTP token is %zu characters long: give at least %d (e.g. the "
		         "output of 'head -c 16 /dev/urandom | xxd -p'), or 'auto' to have one "
		         "made and printed",
		         strlen(cfg_token), NG_HTTP_TOKEN_MIN);
		return -1;
	}
	if (strpbrk(cfg_token, ";, \t\r\n\"\\") || strlen(cfg_token) >= len) {
		snprintf(err, errlen,
		         "the HTTP token may not contain spaces, quotes, ';', "
		         "',' or backslashes, nor be longer than %zu characters",
		         len - 1);
		return -1;
	}
	snprintf(tok, len, "%s", cfg_token);
	return 0;
}

/* Checks the limits of cfg (0: the default) into *out.  Returns 0, or
 * -1 with a message in err. */
static int pick_limits(const ng_http_limits *in, ng_http_limits *out, char *err, size_t errlen)
{
	out->max_connections = in->max_connections ? in->max_connections : NG_HTTP_MAX_CONNECTIONS;
	out->max_per_client = in->max_per_client ? in->max_per_client : NG_HTTP_MAX_PER_CLIENT;
	out->idle_timeout_s = in->idle_timeout_s ? in->idle_timeout_s : NG_HTTP_IDLE_TIMEOUT_S;
	if (out->max_connections > 10000) {
		snprintf(err, errlen,
		         "HTTP max connections %u: give 1 to 10000 (each holds a thread)",
		         out->max_connections);
		return -1;
	}
	if (out->max_per_client > out->max_connections)
		out->max_per_client = out->max_connections;
	if (out->idle_timeout_s > 3600) {
		snprintf(err, errlen, "HTTP idle time-out %u s: give 1 to 3600 seconds",
		         out->idle_timeout_s);
		return -1;
	}
	return 0;
}

/* Starts libmicrohttpd on the parsed address.  Returns 0, or -1. */
static int start_daemon(ng_http_server *s, struct sockaddr_storage *ss, const ng_http_limits *l)
{
	/* a thread per connection: a cheap request (exporters, metrics, a
	 * static file) never waits behind a long scan on a shared thread;
	 * the connection limits (conns.c) bound the threads, the query gate
	 * the scans */
	unsigned flags =
	    MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_ERROR_LOG;
	if (ss->ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	uint16_t port = ntohs(ss->ss_family == AF_INET ? ((struct sockaddr_in *)ss)->sin_port
	                                               : ((struct sockaddr_in6 *)ss)->sin6_port);
	s->d = MHD_start_daemon(
	    flags, port, on_accept, s, on_request, s, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
	    MHD_OPTION_SOCK_ADDR, (struct sockaddr *)ss, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
	    (size_t)CONN_MEMORY, MHD_OPTION_CONNECTION_LIMIT, l->max_connections * LIMIT_SLACK,
	    MHD_OPTION_CONNECTION_TIMEOUT, l->idle_timeout_s, MHD_OPTION_NOTIFY_CONNECTION,
	    on_connection, s, MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_END);
	if (!s->d)
		return -1;
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
	s->port = di ? di->port : port;
	return 0;
}

/* The JSON array of the n strings v (malloc'd), NULL when out of memory. */
static char *json_strings(const char *const *v, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	fputc('[', f);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(',', f);
		ng_json_put_str(f, v[i]);
	}
	fputc(']', f);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

ng_http_server *ng_http_start(const ng_http_config *cfg, char *err, size_t errlen)
{
	const char *listen = cfg->listen && *cfg->listen ? cfg->listen : "127.0.0.1:8080";
	struct sockaddr_storage ss;
	socklen_t sl;
	if (!parse_listen(listen, &ss, &sl)) {
		snprintf(err, errlen,
		         "bad HTTP address '%s': give ADDR:PORT, e.g. 127.0.0.1:8080 or "
		         "[::1]:8080",
		         listen);
		return NULL;
	}
	bool loop = ng_http_is_loopback(listen), generated;
	char tok[256];
	ng_http_limits lim;
	if (pick_token(cfg->token, loop, tok, sizeof tok, &generated, err, errlen) < 0 ||
	    pick_limits(&cfg->limits, &lim, err, errlen) < 0)
		return NULL;
	ng_http_server *s = calloc(1, sizeof *s);
	if (s)
		s->ch_mu_init = pthread_mutex_init(&s->ch_mu, NULL) == 0;
	if (!s || !s->ch_mu_init || !(s->store_dir = strdup(cfg->store_dir)) ||
	    !(s->listen = strdup(listen)) || (tok[0] && !(s->token = strdup(tok))) ||
	    (cfg->flow_listen &&
	     !(s->flow_listen = json_strings(cfg->flow_listen, cfg->nflow_listen)))) {
		snprintf(err, errlen, "out of memory");
		ng_http_stop(s);
		return NULL;
	}
	s->attribution_dbip = cfg->attribution_dbip;
	if (cfg->clickhouse) {
		/* the URL and database checked now; the server's version at the
		 * first query (ng_http_ch_server): it may be down at start */
		ng_ch_client *cl = ng_ch_open(cfg->clickhouse, err, errlen);
		if (!cl) {
			ng_http_stop(s);
			return NULL;
		}
		ng_ch_close(cl);
		s->ch = cfg->clickhouse;
	}
	s->token_generated = generated;
	s->loopback = loop;
	s->max_range_ms = cfg->max_range_ms ? cfg->max_range_ms : 31ull * 86400 * 1000;
	s->max_rows = cfg->max_rows ? cfg->max_rows : 10000;
	s->timeout_ms = cfg->timeout_ms ? cfg->timeout_ms : 10000;
	s->exporters = cfg->exporters;
	s->exporters_arg = cfg->exporters_arg;
	s->snmp_json = cfg->snmp_json;
	s->snmp_arg = cfg->snmp_arg;
	s->metrics_exporters = cfg->metrics_exporters ? cfg->metrics_exporters : 100;
	sem_init(&s->qgate, 0, cfg->threads ? cfg->threads : 4u);
	s->qgate_init = true;
	if (ng_http_guard_init(s, cfg->limits.allowed_hosts, err, errlen) < 0) {
		ng_http_stop(s);
		return NULL;
	}
	if (cfg->limits.ptr && strcmp(cfg->limits.ptr, "off") &&
	    !(s->ptr = ng_ptr_new(cfg->limits.ptr, err, errlen))) {
		ng_http_stop(s);
		return NULL;
	}
	bool ok = ng_http_session_init(s) == 0 &&
	          (s->conns_init = ng_http_conns_init(s, lim.max_connections, lim.max_per_client,
	                                              lim.idle_timeout_s) == 0) &&
	          ng_http_store_stats_start(s) == 0;
	if (!ok) {
		snprintf(err, errlen, "cannot start the HTTP server (randomness or threads)");
		ng_http_stop(s);
		return NULL;
	}
	/* the dashboards' queries reread the same segments: keep what they
	 * inflated (store/framecache.h); the bound is the process's */
	uint64_t cache = (uint64_t)cfg->limits.cache_mib << 20;
	if (cfg->limits.cache_mib < 0) { /* an eighth of the memory, 64 MiB to 4 GiB */
		long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
		cache = pages > 0 && psize > 0 ? (uint64_t)pages * (uint64_t)psize / 8 : 256u << 20;
		cache = cache < (64u << 20) ? 64u << 20 : cache > (4ull << 30) ? 4ull << 30 : cache;
	}
	if (ng_frame_cache_configure(cache) < 0)
		ng_warn("out of memory for the query cache: queries inflate every block");
	if (start_daemon(s, &ss, &lim) < 0) {
		snprintf(err, errlen,
		         "cannot listen for HTTP on %s (address in use, or not "
		         "an address of this host?)",
		         listen);
		ng_http_stop(s);
		return NULL;
	}
	return s;
}

/* SELECT version() on cl into *sv (ng_ch_detect, with the reply's
 * outcome kept).  Returns 0, or -1 with err set and errno ETIMEDOUT (the
 * client's time-out), EIO (an HTTP error the server answered, an answer
 * that is not a version) or ECONNREFUSED (no connection, or none kept). */
static int detect(ng_ch_client *cl, ng_ch_server *sv, char *err, size_t errlen)
{
	ng_ch_reply rep;
	if (ng_ch_exec(cl, "SELECT version()", NULL, 0, NULL, &rep) < 0) {
		snprintf(err, errlen, "%s", rep.err);
		int e = rep.timed_out                  ? ETIMEDOUT
		        : rep.outcome == NG_CH_REFUSED ? EIO
		                                       : ECONNREFUSED;
		ng_ch_reply_free(&rep);
		errno = e;
		return -1;
	}
	size_t len = rep.len;
	while (len && (rep.body[len - 1] == '\n' || rep.body[len - 1] == '\r'))
		len--;
	int rc = ng_ch_server_parse(rep.body ? rep.body : "", len, sv);
	if (rc < 0) {
		char t[80];
		snprintf(err, errlen, "ClickHouse at %s: version() answered '%s', not a version",
		         ng_ch_base_url(cl),
		         ng_ch_error_text(rep.body ? rep.body : "", len, t, sizeof t));
	}
	ng_ch_reply_free(&rep);
	errno = rc < 0 ? EIO : 0;
	return rc;
}

int ng_http_ch_server(ng_http_server *s, ng_ch_client *cl, ng_ch_server *sv, char *err,
                      size_t errlen)
{
	pthread_mutex_lock(&s->ch_mu);
	int rc = 0, e = 0;
	if (!s->ch_known) {
		rc = detect(cl, &s->ch_sv, err, errlen);
		e = errno;
		s->ch_known = rc == 0;
		if (rc == 0)
			ng_info("ClickHouse at %s answers: version %s", ng_ch_base_url(cl),
			        s->ch_sv.version);
	}
	if (rc == 0)
		*sv = s->ch_sv;
	pthread_mutex_unlock(&s->ch_mu);
	if (rc < 0) {
		ng_http_log_limited(NG_HTTP_LOG_CLICKHOUSE, "%s: the flow queries answer %s", err,
		                    e == ECONNREFUSED ? "503 until it answers" : "an error");
		errno = e;
	}
	return rc;
}

void ng_http_ch_forget(ng_http_server *s)
{
	pthread_mutex_lock(&s->ch_mu);
	s->ch_known = false;
	pthread_mutex_unlock(&s->ch_mu);
}

void ng_http_announce(const ng_http_server *s, const char *what)
{
	char url[128];
	ng_http_url(s, url, sizeof url);
	ng_info("dashboards and API at %s%s%s", url, what ? " " : "", what ? what : "");
	if (s->token && s->token_generated)
		ng_info("HTTP token (made at start, as none was given; --http-token or "
		        "NAGARE_HTTP_TOKEN sets one): %s -- open %s?token=%s once, or send "
		        "'Authorization: Bearer %s'",
		        s->token, url, s->token, s->token);
	else if (s->token)
		ng_info("a token is required: open %s?token=TOKEN once, or send "
		        "'Authorization: Bearer TOKEN'",
		        url);
}

const char *ng_http_token(const ng_http_server *s, bool *generated)
{
	if (generated)
		*generated = s->token_generated;
	return s->token;
}

uint16_t ng_http_port(const ng_http_server *s)
{
	return s->port;
}

char *ng_http_url(const ng_http_server *s, char *buf, size_t len)
{
	struct sockaddr_storage ss = {0}; /* AF_UNSPEC when the address does not parse */
	socklen_t sl;
	char host[INET6_ADDRSTRLEN] = "127.0.0.1";
	parse_listen(s->listen, &ss, &sl);
	if (ss.ss_family == AF_INET &&
	    ((struct sockaddr_in *)&ss)->sin_addr.s_addr != htonl(INADDR_ANY))
		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, host, sizeof host);
	bool v6 = ss.ss_family == AF_INET6 &&
	          !IN6_IS_ADDR_UNSPECIFIED(&((struct sockaddr_in6 *)&ss)->sin6_addr);
	if (v6)
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, host, sizeof host);
	snprintf(buf, len, "http://%s%s%s:%u/", v6 ? "[" : "", host, v6 ? "]" : "", s->port);
	return buf;
}

void ng_http_stop(ng_http_server *s)
{
	if (!s)
		return;
	if (s->d)
		MHD_stop_daemon(s->d);
	ng_http_store_stats_stop(s);
	ng_ptr_free(s->ptr);
	if (s->conns_init)
		ng_http_conns_destroy(s);
	if (s->qgate_init)
		sem_destroy(&s->qgate);
	if (s->ch_mu_init)
		pthread_mutex_destroy(&s->ch_mu);
	for (size_t i = 0; i < s->nallowed; i++)
		free(s->allowed[i]);
	free(s->allowed);
	free(s->store_dir);
	free(s->listen);
	free(s->flow_listen);
	free(s->token);
	free(s);
}
