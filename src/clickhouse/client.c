/*
 * client.c — ClickHouse's HTTP interface over libcurl (see client.h).
 *
 * One easy handle per client, reused for every request, so libcurl keeps
 * the connection alive between them (libcurl docs, "curl_easy_perform":
 * "re-use the same handle … to make libcurl reuse connections").  The
 * statement travels in the URL's `query` parameter when the body is data
 * (ClickHouse docs, "HTTP Interface": "the query is in the URL, the data
 * for INSERT in the body"); otherwise the statement is the body.  The
 * user and password go as HTTP basic authentication, which every version
 * takes (18.16 refuses it together with the X-ClickHouse-User/-Key
 * headers: code 194, so those are not sent).
 */
#include "clickhouse/client.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

struct ng_ch_client {
	CURL *h;
	char *base; /* scheme://host:port, no slash at the end */
	char db[128];
	char *user, *password, *ca, *cert, *key, *settings;
	ng_ch_conn conn; /* its strings point into the copies above */
	struct curl_slist *hdrs;
	/* the reply being read */
	ng_ch_reply *r;
	size_t cap;
	uint8_t *gz; /* compressed body buffer */
	size_t gz_cap;
};

static pthread_mutex_t init_mu = PTHREAD_MUTEX_INITIALIZER;
static bool inited;

bool ng_ch_name_ok(const char *s)
{
	if (!*s || strlen(s) >= 128)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* Splits url into base (scheme://authority) and the path's first segment
 * (the database).  Returns 0 or -1 with the cause. */
static int split_url(ng_ch_client *c, const char *url, const char *dbover, char *err, size_t el)
{
	const char *p = strstr(url, "://");
	if (!p || (strncmp(url, "http://", 7) && strncmp(url, "https://", 8))) {
		snprintf(err, el,
		         "ClickHouse URL '%s': give http://HOST:PORT/DATABASE or https://…", url);
		return -1;
	}
	const char *auth = p + 3, *slash = strchr(auth, '/');
	size_t blen = slash ? (size_t)(slash - url) : strlen(url);
	if (slash == auth || blen == (size_t)(auth - url)) {
		snprintf(err, el, "ClickHouse URL '%s': no host", url);
		return -1;
	}
	if (strchr(auth, '?') || strchr(auth, '#') || strchr(auth, '@')) {
		snprintf(err, el,
		         "ClickHouse URL '%s': no user, query or fragment in the URL (give "
		         "clickhouse.user and password in the configuration)",
		         url);
		return -1;
	}
	/* a port given or the HTTP interface's default (8123) */
	const char *host_end = auth + (blen - (size_t)(auth - url));
	bool has_port = false;
	for (const char *q = host_end; q > auth; q--)
		if (q[-1] == ':') {
			has_port = true;
			break;
		} else if (q[-1] == ']' || q[-1] < '0' || q[-1] > '9')
			break;
	if (!(c->base = malloc(blen + 8)))
		goto oom;
	memcpy(c->base, url, blen);
	snprintf(c->base + blen, 8, "%s", has_port ? "" : ":8123");
	const char *db = dbover;
	char path[128] = "";
	if (!db && slash && slash[1]) {
		size_t l = strcspn(slash + 1, "/");
		if (l >= sizeof path || slash[1 + l + (slash[1 + l] == '/')]) {
			snprintf(err, el, "ClickHouse URL '%s': the path is one database name",
			         url);
			return -1;
		}
		memcpy(path, slash + 1, l);
		path[l] = 0;
		db = path;
	}
	if (!db || !*db)
		db = "nagare";
	if (!ng_ch_name_ok(db)) {
		snprintf(err, el, "ClickHouse database '%s': use letters, digits and '_' only", db);
		return -1;
	}
	snprintf(c->db, sizeof c->db, "%s", db);
	return 0;
oom:
	snprintf(err, el, "out of memory");
	return -1;
}

ng_ch_client *ng_ch_open(const ng_ch_conn *conn, char *err, size_t errlen)
{
	pthread_mutex_lock(&init_mu);
	if (!inited && curl_global_init(CURL_GLOBAL_DEFAULT) == 0)
		inited = true;
	pthread_mutex_unlock(&init_mu);
	ng_ch_client *c = calloc(1, sizeof *c);
	if (!c || !inited) {
		snprintf(err, errlen, "%s",
		         c ? "libcurl could not be initialised" : "out of memory");
		free(c);
		return NULL;
	}
	if (!conn->url) {
		snprintf(err, errlen, "no ClickHouse URL");
		goto fail;
	}
	if (split_url(c, conn->url, conn->database, err, errlen) < 0)
		goto fail;
	c->conn = *conn;
	c->user = dup_or_null(conn->user ? conn->user : "default");
	c->password = dup_or_null(conn->password ? conn->password : "");
	c->ca = dup_or_null(conn->ca_file);
	c->cert = dup_or_null(conn->cert_file);
	c->key = dup_or_null(conn->key_file);
	c->settings = dup_or_null(conn->settings);
	if (conn->settings && (!c->settings || strlen(conn->settings) > 512 ||
	                       strspn(conn->settings, "abcdefghijklmnopqrstuvwxyz0123456789_=&") !=
	                           strlen(conn->settings))) {
		snprintf(err, errlen, "ClickHouse settings '%.40s': name=value&… in [a-z0-9_]",
		         conn->settings);
		goto fail;
	}
	if (!(c->h = curl_easy_init()) || !c->user || !c->password) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (!c->conn.timeout_ms)
		c->conn.timeout_ms = 30000;
	if (!c->conn.connect_timeout_ms)
		c->conn.connect_timeout_ms = 3000;
	c->hdrs = curl_slist_append(c->hdrs, "Expect:"); /* no 100-continue round trip */
	return c;
fail:
	ng_ch_close(c);
	return NULL;
}

void ng_ch_close(ng_ch_client *c)
{
	if (!c)
		return;
	if (c->h)
		curl_easy_cleanup(c->h);
	curl_slist_free_all(c->hdrs);
	free(c->base);
	free(c->user);
	free(c->password);
	free(c->ca);
	free(c->cert);
	free(c->key);
	free(c->settings);
	free(c->gz);
	free(c);
}

const char *ng_ch_database(const ng_ch_client *c)
{
	return c->db;
}

const char *ng_ch_base_url(const ng_ch_client *c)
{
	return c->base;
}

void ng_ch_reply_free(ng_ch_reply *r)
{
	free(r->body);
	r->body = NULL;
	r->len = 0;
}

static size_t on_body(char *p, size_t sz, size_t nm, void *arg)
{
	ng_ch_client *c = arg;
	ng_ch_reply *r = c->r;
	size_t n = sz * nm, take = n, max = c->conn.reply_max ? c->conn.reply_max : NG_CH_REPLY_MAX;
	if (r->len + take > max) {
		take = max - r->len;
		r->truncated = true;
	}
	if (r->len + take + 1 > c->cap) {
		size_t cap = c->cap ? c->cap : 256;
		while (cap < r->len + take + 1)
			cap *= 2;
		char *b = realloc(r->body, cap);
		if (!b) {
			r->truncated = true;
			return n;
		}
		r->body = b;
		c->cap = cap;
	}
	memcpy(r->body + r->len, p, take);
	r->len += take;
	r->body[r->len] = 0;
	return n; /* what is past the bound is read and dropped, not an error */
}

static size_t on_header(char *p, size_t sz, size_t nm, void *arg)
{
	ng_ch_client *c = arg;
	size_t n = sz * nm;
	static const char k[] = "x-clickhouse-exception-code:";
	if (n > sizeof k - 1 && !strncasecmp(p, k, sizeof k - 1)) {
		long v = 0;
		for (size_t i = sizeof k - 1; i < n && v < 100000000; i++)
			if (p[i] >= '0' && p[i] <= '9')
				v = v * 10 + (p[i] - '0');
			else if (p[i] != ' ')
				break;
		c->r->exception = (int)v;
	}
	return n;
}

char *ng_ch_error_text(const char *body, size_t len, char *out, size_t outlen)
{
	size_t o = 0;
	bool gap = false; /* line ends since the last byte written */
	for (size_t i = 0; body && i < len && body[i] && o + 1 < outlen; i++) {
		unsigned char ch = (unsigned char)body[i];
		if (ch == '\n' || ch == '\r') {
			gap = o > 0; /* the lines joined: a distributed query's "Log:" says
			              * which shard failed on the lines after its first */
			continue;
		}
		if (gap) {
			if (out[o - 1] != ' ')
				out[o++] = ' ';
			gap = false;
			if (o + 1 >= outlen)
				break;
		}
		out[o++] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
	}
	while (o && out[o - 1] == ' ')
		o--;
	out[o] = 0;
	return out;
}

/* gzip of len bytes into c->gz; returns its length or 0 when it failed. */
static size_t gzip_body(ng_ch_client *c, const void *body, size_t len)
{
	z_stream z = {0};
	if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return 0;
	size_t need = deflateBound(&z, (uLong)len);
	if (need > c->gz_cap) {
		free(c->gz);
		c->gz_cap = 0;
		if (!(c->gz = malloc(need))) {
			deflateEnd(&z);
			return 0;
		}
		c->gz_cap = need;
	}
	z.next_in = (Bytef *)body;
	z.avail_in = (uInt)len;
	z.next_out = c->gz;
	z.avail_out = (uInt)need;
	int rc = deflate(&z, Z_FINISH);
	size_t out = rc == Z_STREAM_END ? need - z.avail_out : 0;
	deflateEnd(&z);
	return out;
}

int ng_ch_exec(ng_ch_client *c, const char *sql, const void *body, size_t len, const char *query_id,
               ng_ch_reply *r)
{
	memset(r, 0, sizeof *r);
	c->r = r;
	c->cap = 0;
	CURL *h = c->h;
	curl_easy_reset(h);
	char *url = NULL;
	char *q = NULL;
	const char *params = "wait_end_of_query=1&enable_http_compression=1";
	size_t ulen =
	    strlen(c->base) + strlen(c->db) + 200 + (c->settings ? strlen(c->settings) : 0);
	if (body) {
		q = curl_easy_escape(h, sql, 0);
		if (!q) {
			snprintf(r->err, sizeof r->err, "out of memory");
			r->outcome = NG_CH_NOT_SENT;
			return -1;
		}
		ulen += strlen(q);
	}
	if (!(url = malloc(ulen))) {
		curl_free(q);
		snprintf(r->err, sizeof r->err, "out of memory");
		r->outcome = NG_CH_NOT_SENT;
		return -1;
	}
	char qid[80] = "";
	if (query_id && strlen(query_id) < 64 &&
	    strspn(query_id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") ==
	        strlen(query_id))
		snprintf(qid, sizeof qid, "&query_id=%s", query_id);
	/* no database= parameter: the statements name their tables whole, and
	 * the database may not exist yet (CREATE DATABASE) */
	snprintf(url, ulen, "%s/?%s%s%s%s%s%s", c->base, params, c->settings ? "&" : "",
	         c->settings ? c->settings : "", qid, q ? "&query=" : "", q ? q : "");
	curl_free(q);
	const void *data = body ? body : sql;
	size_t dlen = body ? len : strlen(sql);
	struct curl_slist *hdrs = c->hdrs, *extra = NULL;
	if (body && c->conn.gzip && len > 512) {
		size_t gl = gzip_body(c, body, len);
		if (gl) {
			data = c->gz;
			dlen = gl;
			extra = curl_slist_append(NULL, "Content-Encoding: gzip");
			if (extra) {
				extra->next = c->hdrs;
				hdrs = extra;
			}
		}
	}
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_POST, 1L);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, data);
	curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)dlen);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(h, CURLOPT_USERNAME, c->user);
	curl_easy_setopt(h, CURLOPT_PASSWORD, c->password);
	curl_easy_setopt(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
	curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)c->conn.timeout_ms);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)c->conn.connect_timeout_ms);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, c);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, c);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	if (c->ca)
		curl_easy_setopt(h, CURLOPT_CAINFO, c->ca);
	if (c->cert)
		curl_easy_setopt(h, CURLOPT_SSLCERT, c->cert);
	if (c->key)
		curl_easy_setopt(h, CURLOPT_SSLKEY, c->key);
	CURLcode cc = curl_easy_perform(h);
	free(url);
	if (extra) {
		extra->next = NULL;
		curl_slist_free_all(extra);
	}
	if (cc != CURLE_OK) {
		r->timed_out = cc == CURLE_OPERATION_TIMEDOUT;
		r->outcome = cc == CURLE_COULDNT_CONNECT || cc == CURLE_COULDNT_RESOLVE_HOST ||
		                     cc == CURLE_COULDNT_RESOLVE_PROXY
		                 ? NG_CH_NOT_SENT
		                 : NG_CH_UNKNOWN;
		snprintf(r->err, sizeof r->err, "ClickHouse at %s: %s", c->base,
		         curl_easy_strerror(cc));
		return -1;
	}
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
	if (r->status != 200) {
		char t[400];
		/* 18.16 sends the code in the body only: "Code: N, e.displayText() …" */
		if (!r->exception && r->body && !strncmp(r->body, "Code: ", 6))
			r->exception = atoi(r->body + 6);
		r->timed_out = r->exception == 159; /* TIMEOUT_EXCEEDED */
		r->outcome = NG_CH_REFUSED;
		snprintf(r->err, sizeof r->err, "ClickHouse at %s: HTTP %ld, code %d: %s", c->base,
		         r->status, r->exception, ng_ch_error_text(r->body, r->len, t, sizeof t));
		return -1;
	}
	if (r->truncated) {
		r->outcome = NG_CH_REFUSED;
		snprintf(r->err, sizeof r->err, "ClickHouse at %s: reply longer than %zu bytes",
		         c->base, c->conn.reply_max ? c->conn.reply_max : (size_t)NG_CH_REPLY_MAX);
		return -1;
	}
	r->outcome = NG_CH_OK;
	return 0;
}

int ng_ch_query(ng_ch_client *c, const char *sql, char *out, size_t outlen, char *err,
                size_t errlen)
{
	ng_ch_reply r;
	if (ng_ch_exec(c, sql, NULL, 0, NULL, &r) < 0) {
		snprintf(err, errlen, "%s", r.err);
		ng_ch_reply_free(&r);
		return -1;
	}
	if (out && outlen) {
		size_t l = r.len;
		while (l && (r.body[l - 1] == '\n' || r.body[l - 1] == '\r'))
			l--;
		if (l >= outlen) {
			snprintf(err, errlen, "ClickHouse at %s: reply of %zu bytes, more than %zu",
			         c->base, l, outlen - 1);
			ng_ch_reply_free(&r);
			return -1;
		}
		if (l)
			memcpy(out, r.body, l);
		out[l] = 0;
	}
	ng_ch_reply_free(&r);
	return 0;
}
