/*
 * guard.c — who may ask: the Host, Origin and Sec-Fetch-Site checks made
 * before any request is answered (docs/security.md "HTTP").
 *
 * DNS rebinding.  A web page at http://evil.example:8080/ can make its
 * name resolve to 127.0.0.1 a moment later; the browser then sends the
 * page's own requests to nagare on loopback, as "same origin", with
 * `Host: evil.example:8080`, and lets the page read the answers: the
 * flows of the user's network.  The one thing that tells such a request
 * from the dashboard's own is the Host header, so on a loopback address
 * the server answers only requests whose Host is a loopback name or
 * literal — `localhost`, `*.localhost` (RFC 6761 §6.3: never resolved
 * off the host), an address of 127.0.0.0/8, `[::1]`, with or without a
 * port — or one of the names configured as allowed (http_allowed_hosts,
 * --http-allowed-host: a name in /etc/hosts, a reverse proxy's).
 * Anything else is 421 Misdirected Request (RFC 9110 §15.5.20: "not
 * able to produce a response for this host").  An IP literal can never be
 * rebound, so off loopback, when names are configured, any literal is
 * accepted as well as the names; with none configured off loopback every
 * Host is (the token is the protection there, as before).  An HTTP/1.1
 * request without Host is 400 (RFC 9112 §3.2: libmicrohttpd 0.9.75 lets
 * it through); an HTTP/1.0 one, which never comes from a browser and so
 * cannot be a rebinding, is answered (`printf 'GET /healthz
 * HTTP/1.0\r\n\r\n' | nc` health checks).
 *
 * Cross-origin requests.  A page of another origin can make the browser
 * send requests it cannot read (forms, fetch with no-cors), with the
 * user's cookie when the site is the same.  Every request carrying an
 * `Origin` (RFC 6454 §7) whose host and port are not the request's Host
 * (nor an allowed name) is refused with 403, and so is "Origin: null"
 * (sandboxed pages, file:); so is a request whose `Sec-Fetch-Site`
 * (W3C Fetch Metadata) says cross-site or same-site, unless it is a
 * top-level navigation (a link to the dashboard, which the linking page
 * cannot read) of a GET or HEAD.  Anything but GET and HEAD must be
 * same-origin by both headers, whatever it asks: the API is read-only
 * today (405), and a writing endpoint added later starts protected.
 *
 * Refusals are counted (nagare_http_refused_total{reason}) and logged at
 * most once every 10 s with the offending value.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/log.h"
#include "http/http_int.h"

/* Splits a Host value into its host part (brackets kept off) in
 * h[hlen], lower-cased.  Returns false when malformed (empty, a bad port,
 * unbalanced brackets, too long). */
static bool host_part(const char *v, char *h, size_t hlen, bool *bracketed)
{
	const char *end;
	*bracketed = false;
	if (v[0] == '[') {
		const char *close = strchr(v, ']');
		if (!close)
			return false;
		v++;
		end = close;
		*bracketed = true;
		if (close[1] && close[1] != ':')
			return false;
	} else {
		end = strchr(v, ':');
		if (!end)
			end = v + strlen(v);
	}
	if (*end == ']')
		end++;
	if (*end == ':') { /* a port: digits only */
		const char *p = end + 1;
		if (!*p || strspn(p, "0123456789") != strlen(p) || strlen(p) > 5)
			return false;
	} else if (*end) {
		return false;
	}
	size_t n = (size_t)(end - v) - (*bracketed ? 1 : 0);
	if (!n || n >= hlen)
		return false;
	for (size_t i = 0; i < n; i++)
		h[i] = (char)tolower((unsigned char)v[i]);
	h[n] = 0;
	if (!*bracketed && n > 1 && h[n - 1] == '.') /* "localhost." is localhost */
		h[n - 1] = 0;
	return true;
}

/* True when h (a host part) is an IPv4 or (bracketed) IPv6 literal;
 * *loop tells whether it is a loopback one. */
static bool ip_literal(const char *h, bool bracketed, bool *loop)
{
	struct in_addr a4;
	struct in6_addr a6;
	if (!bracketed && inet_pton(AF_INET, h, &a4) == 1) {
		*loop = (ntohl(a4.s_addr) >> 24) == 127;
		return true;
	}
	if (bracketed && inet_pton(AF_INET6, h, &a6) == 1) {
		*loop = IN6_IS_ADDR_LOOPBACK(&a6);
		return true;
	}
	return false;
}

bool ng_http_host_is_loopback(const char *host)
{
	char h[256];
	bool br, loop = false;
	if (!host || !host_part(host, h, sizeof h, &br))
		return false;
	if (ip_literal(h, br, &loop))
		return loop;
	size_t n = strlen(h);
	return !br && (!strcmp(h, "localhost") || (n > 10 && !strcmp(h + n - 10, ".localhost")));
}

/* True when host part h is one of the configured names. */
static bool allowed_name(const ng_http_server *s, const char *h)
{
	for (size_t i = 0; i < s->nallowed; i++)
		if (!strcmp(s->allowed[i], h))
			return true;
	return false;
}

/* The Host rule of the top of the file for the value `v`. */
static bool host_ok(const ng_http_server *s, const char *v)
{
	char h[256];
	bool br, loop = false;
	if (!v || (!s->loopback && !s->nallowed)) /* no Host: HTTP/1.0 (the caller checks) */
		return true;
	if (!host_part(v, h, sizeof h, &br))
		return false;
	if (ng_http_host_is_loopback(v) || allowed_name(s, h))
		return true;
	return !s->loopback && ip_literal(h, br, &loop);
}

/* The Origin rule: "scheme://host[:port]" naming the request's Host (the
 * same authority, case aside) or an allowed name. */
static bool origin_ok(const ng_http_server *s, const char *origin, const char *host)
{
	const char *auth = strstr(origin, "://");
	if (!auth || !strcmp(origin, "null"))
		return false;
	auth += 3;
	if (host && !strcasecmp(auth, host))
		return true;
	char h[256];
	bool br;
	return host_part(auth, h, sizeof h, &br) && allowed_name(s, h);
}

int ng_http_guard_init(ng_http_server *s, const char *list, char *err, size_t errlen)
{
	if (!list)
		return 0;
	const char *p = list;
	while (*p) {
		size_t n = strcspn(p, ", ");
		if (n) {
			char **a = realloc(s->allowed, (s->nallowed + 1) * sizeof *a);
			if (!a || !(a[s->nallowed] = strndup(p, n))) {
				if (a)
					s->allowed = a;
				snprintf(err, errlen, "out of memory");
				return -1;
			}
			s->allowed = a;
			char *name = a[s->nallowed++];
			for (char *c = name; *c; c++) {
				*c = (char)tolower((unsigned char)*c);
				if (!isalnum((unsigned char)*c) && *c != '-' && *c != '.' &&
				    *c != '_') {
					snprintf(
					    err, errlen,
					    "allowed HTTP host '%s': give a host name only "
					    "(letters, digits, '-', '.'; no scheme, port or path)",
					    name);
					return -1;
				}
			}
		}
		p += n;
		p += strspn(p, ", ");
	}
	return 0;
}

/* Counts and logs a refusal, and sets the answer. */
static bool refuse(ng_http_server *s, enum ng_http_refusal why, ng_http_resp *out, const char *what,
                   const char *value)
{
	atomic_fetch_add(&s->m.refused[why], 1);
	char v[128];
	snprintf(v, sizeof v, "%s", value ? value : "(none)");
	for (char *c = v; *c; c++) /* a header is the sender's: keep the log line one line */
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	if (why == NG_REFUSE_HOST && !value) {
		ng_api_error(out, 400, "an HTTP/1.1 request needs a Host header (RFC 9112 3.2)",
		             NULL);
	} else if (why == NG_REFUSE_HOST) {
		ng_http_log_limited(NG_HTTP_LOG_HOST,
		                    "HTTP: refused a request for Host '%s': not a loopback name "
		                    "nor an allowed host (DNS rebinding? --http-allowed-host NAME "
		                    "allows a name)",
		                    v);
		ng_api_error(out, 421, "this server does not answer for that Host",
		             "open it as http://127.0.0.1:PORT/ or http://localhost:PORT/, or "
		             "allow the name (http_allowed_hosts, --http-allowed-host NAME)");
	} else {
		ng_http_log_limited(NG_HTTP_LOG_ORIGIN,
		                    "HTTP: refused a cross-origin request (%s '%s')", what, v);
		ng_api_error(out, 403, "cross-origin request refused",
		             "the API answers pages of its own origin only");
	}
	return false;
}

bool ng_http_guard(ng_http_server *s, void *conn, const char *method, const char *version,
                   ng_http_resp *out)
{
	const char *host = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
	if (!host && strcmp(version, MHD_HTTP_VERSION_1_0))
		return refuse(s, NG_REFUSE_HOST, out, "Host", NULL);
	if (!host_ok(s, host))
		return refuse(s, NG_REFUSE_HOST, out, "Host", host);
	const char *origin = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Origin");
	if (origin && !origin_ok(s, origin, host))
		return refuse(s, NG_REFUSE_ORIGIN, out, "Origin", origin);
	bool safe = !strcmp(method, MHD_HTTP_METHOD_GET) || !strcmp(method, MHD_HTTP_METHOD_HEAD);
	const char *site = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Sec-Fetch-Site");
	if (site && strcasecmp(site, "same-origin") && strcasecmp(site, "none")) {
		const char *mode =
		    MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Sec-Fetch-Mode");
		if (!safe || !mode || strcasecmp(mode, "navigate"))
			return refuse(s, NG_REFUSE_ORIGIN, out, "Sec-Fetch-Site", site);
	}
	return true;
}
