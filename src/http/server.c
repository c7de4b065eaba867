/*
 * server.c — libmicrohttpd glue: listening, method and size limits,
 * authentication, the response (see http.h).
 */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "http/http_int.h"

/* Bytes a connection may hold (request line, headers): a longer URL is
 * refused by libmicrohttpd with 414/431 before it reaches us. */
#define CONN_MEMORY (32 * 1024)
#define MAX_CONNECTIONS 64

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

/* The token of the request: bearer, basic password, ?token=, cookie. */
static bool authorized(ng_http_server *s, struct MHD_Connection *conn, bool *set_cookie)
{
	*set_cookie = false;
	if (s->loopback && !s->token)
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
		*set_cookie = ng_http_token_equal(t, s->token);
		return *set_cookie;
	}
	const char *c = MHD_lookup_connection_value(conn, MHD_COOKIE_KIND, "nagare_token");
	return c && ng_http_token_equal(c, s->token);
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
		MHD_add_response_header(mr, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	if (r->status == 401)
		MHD_add_response_header(mr, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
		                        "Bearer realm=\"nagare\"");
	if (cookie) {
		char c[512];
		snprintf(c, sizeof c, "nagare_token=%s; Path=/; HttpOnly; SameSite=Strict",
		         s->token);
		MHD_add_response_header(mr, MHD_HTTP_HEADER_SET_COOKIE, c);
	}
	enum MHD_Result rc = MHD_queue_response(conn, r->status, mr);
	MHD_destroy_response(mr);
	return rc;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
	(void)version;
	(void)upload_data;
	(void)con_cls;
	ng_http_server *s = cls;
	/* Answered on the first call, with the headers only: a request with a
	 * body is refused before the body is read (libmicrohttpd then closes
	 * the connection rather than read it). */
	atomic_fetch_add(&s->m.requests, 1);
	ng_http_resp r = {.status = 200};
	bool cookie = false;
	bool head = !strcmp(method, MHD_HTTP_METHOD_HEAD);
	const char *te =
	    MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
	const char *cl =
	    MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (strcmp(method, MHD_HTTP_METHOD_GET) && !head) {
		ng_api_error(&r, 405, "method not allowed: the API is read-only",
		             "use GET or HEAD");
	} else if (*upload_data_size || te || (cl && strcmp(cl, "0"))) {
		*upload_data_size = 0;
		ng_api_error(&r, 413, "request bodies are not accepted",
		             "give parameters in the URL's query string");
	} else if (strcmp(url, "/healthz") && !authorized(s, conn, &cookie)) {
		atomic_fetch_add(&s->m.unauthorized, 1);
		ng_api_error(&r, 401, "missing or wrong token",
		             "send 'Authorization: Bearer TOKEN', HTTP basic auth with the "
		             "token as password, or open the dashboard once with ?token=TOKEN");
	} else {
		ng_http_req req = {.path = url, .arg = get_arg, .conn = conn, .head = head};
		ng_api_handle(s, &req, &r);
	}
	return send_resp(conn, &r, cookie, s);
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
	bool loop = ng_http_is_loopback(listen);
	bool has_token = cfg->token && *cfg->token;
	if (!loop && !has_token) {
		snprintf(err, errlen,
		         "refusing to serve HTTP on %s without a token: a non-loopback address "
		         "needs one (--http-token TOKEN, NAGARE_HTTP_TOKEN, or http_token under "
		         "collect: in the configuration), or listen on 127.0.0.1",
		         listen);
		return NULL;
	}
	if (has_token && strpbrk(cfg->token, ";, \t\r\n\"\\")) {
		snprintf(err, errlen,
		         "the HTTP token may not contain spaces, quotes, ';', "
		         "',' or backslashes");
		return NULL;
	}
	ng_http_server *s = calloc(1, sizeof *s);
	if (!s || !(s->store_dir = strdup(cfg->store_dir)) || !(s->listen = strdup(listen)) ||
	    (has_token && !(s->token = strdup(cfg->token)))) {
		snprintf(err, errlen, "out of memory");
		ng_http_stop(s);
		return NULL;
	}
	s->loopback = loop;
	s->max_range_ms = cfg->max_range_ms ? cfg->max_range_ms : 31ull * 86400 * 1000;
	s->max_rows = cfg->max_rows ? cfg->max_rows : 10000;
	s->timeout_ms = cfg->timeout_ms ? cfg->timeout_ms : 10000;
	s->exporters = cfg->exporters;
	s->exporters_arg = cfg->exporters_arg;
	s->metrics_exporters = cfg->metrics_exporters ? cfg->metrics_exporters : 100;
	sem_init(&s->qgate, 0, cfg->threads ? cfg->threads : 4u);
	s->qgate_init = true;
	/* a thread per connection: a cheap request (exporters, metrics, a
	 * static file) never waits behind a long scan on a shared thread;
	 * MAX_CONNECTIONS bounds the threads, the query gate the scans */
	unsigned flags =
	    MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_ERROR_LOG;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	uint16_t port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
	                                              : ((struct sockaddr_in6 *)&ss)->sin6_port);
	s->d = MHD_start_daemon(
	    flags, port, NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONN_MEMORY, MHD_OPTION_CONNECTION_LIMIT,
	    (unsigned)MAX_CONNECTIONS, MHD_OPTION_CONNECTION_TIMEOUT, 60u, MHD_OPTION_END);
	if (!s->d) {
		snprintf(err, errlen,
		         "cannot listen for HTTP on %s (address in use, or not "
		         "an address of this host?)",
		         listen);
		ng_http_stop(s);
		return NULL;
	}
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
	s->port = di ? di->port : port;
	return s;
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
	if (s->qgate_init)
		sem_destroy(&s->qgate);
	free(s->store_dir);
	free(s->listen);
	free(s->token);
	free(s);
}
