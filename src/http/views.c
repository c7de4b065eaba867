/*
 * views.c — saved dashboard views: the file (views.h), the POST body and
 * the handler of /api/v1/views (docs/api.md "Saved views").
 *
 * Writing requests reach this file only through server.c's checks: the
 * Host/Origin/Sec-Fetch-Site guard (guard.c: anything but GET and HEAD
 * must be same-origin), the token, and a POST's Content-Type
 * application/json, which no HTML form can send and a cross-origin fetch
 * can only send after a CORS preflight this server never grants.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/file.h"
#include "core/json.h"
#include "http/http_int.h"
#include "http/views.h"
#include "store/store.h"

bool ng_view_name_ok(const char *name, size_t len)
{
	if (!len || len > NG_VIEW_NAME_MAX || name[0] == ' ' || name[len - 1] == ' ')
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];
		bool alnum =
		    (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
		if (!alnum && !strchr(" _.:()-", c))
			return false;
		if (!c)
			return false;
	}
	return true;
}

bool ng_view_state_ok(const char *state, size_t len)
{
	if (!len || len > NG_VIEW_STATE_MAX || state[0] != '/')
		return false;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)state[i] <= 0x20 || (unsigned char)state[i] >= 0x7f)
			return false;
	return true;
}

void ng_views_free(ng_views *v)
{
	for (size_t i = 0; i < v->n; i++)
		free(v->v[i].state);
	v->n = 0;
}

/* The index of `name` in *v, or -1. */
static long find(const ng_views *v, const char *name)
{
	for (size_t i = 0; i < v->n; i++)
		if (!strcmp(v->v[i].name, name))
			return (long)i;
	return -1;
}

/* One line "NAME\tSTATE" (l[n], no newline) appended to *out. */
static int parse_line(const char *l, size_t n, ng_views *out, const char **why)
{
	const char *tab = memchr(l, '\t', n);
	if (!tab)
		return *why = "no tab between name and state", -1;
	size_t nl = (size_t)(tab - l), sl = n - nl - 1;
	if (!ng_view_name_ok(l, nl))
		return *why = "bad name", -1;
	if (!ng_view_state_ok(tab + 1, sl))
		return *why = "bad state", -1;
	if (out->n >= NG_VIEWS_MAX)
		return *why = "more than 256 views", -1;
	ng_view *v = &out->v[out->n];
	memcpy(v->name, l, nl);
	v->name[nl] = 0;
	if (find(out, v->name) >= 0)
		return *why = "duplicate name", -1;
	if (!(v->state = strndup(tab + 1, sl)))
		return *why = "out of memory", -1;
	out->n++;
	return 0;
}

int ng_views_parse(const char *buf, size_t len, ng_views *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	size_t pos = 0, line = 0;
	while (pos < len) {
		const char *l = buf + pos, *nl = memchr(l, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - l) : len - pos;
		pos += n + (nl ? 1 : 0);
		const char *why = NULL;
		if (++line == 1) {
			if (n != strlen(NG_VIEWS_MAGIC) || memcmp(l, NG_VIEWS_MAGIC, n))
				why = "not a nagare-views/1 file";
		} else if (n) {
			parse_line(l, n, out, &why);
		}
		if (why) {
			snprintf(err, errlen, "line %zu: %s", line, why);
			return -1;
		}
	}
	if (!line) {
		snprintf(err, errlen, "line 1: empty file");
		return -1;
	}
	return 0;
}

/* ---- the POST body: {"name": "...", "state": "..."} -------------------- */

typedef struct jcur {
	const char *p, *end;
} jcur;

static void ws(jcur *c)
{
	while (c->p < c->end && strchr(" \t\r\n", *c->p) && *c->p)
		c->p++;
}

static int hexval(char h)
{
	if (h >= '0' && h <= '9')
		return h - '0';
	h = (char)(h | 0x20);
	return h >= 'a' && h <= 'f' ? h - 'a' + 10 : -1;
}

/* A JSON string (RFC 8259 §7) at c into out[cap] (NUL-terminated), *len
 * its decoded length even past cap (then truncated).  A \u escape of a
 * code point past ASCII decodes to 0x80, which no name or state allows.
 * Returns false when malformed. */
static bool jstring(jcur *c, char *out, size_t cap, size_t *len)
{
	size_t n = 0;
	if (c->p >= c->end || *c->p != '"')
		return false;
	for (c->p++; c->p < c->end && *c->p != '"'; c->p++) {
		unsigned char ch = (unsigned char)*c->p;
		if (ch < 0x20)
			return false;
		if (ch == '\\') {
			if (++c->p >= c->end)
				return false;
			const char *e = strchr("\"\\/bfnrtu", *c->p);
			if (!e || !*c->p)
				return false;
			static const char dec[] = "\"\\/\b\f\n\r\t";
			if (*c->p != 'u') {
				ch = (unsigned char)dec[e - "\"\\/bfnrtu"];
			} else {
				if (c->end - c->p < 5)
					return false;
				int u = 0;
				for (int i = 1; i <= 4; i++) {
					int h = hexval(c->p[i]);
					if (h < 0)
						return false;
					u = u * 16 + h;
				}
				c->p += 4;
				ch = u < 0x80 ? (unsigned char)u : 0x80;
			}
		}
		if (n + 1 < cap)
			out[n] = (char)ch;
		n++;
	}
	if (c->p >= c->end)
		return false;
	c->p++;
	out[n + 1 < cap ? n : cap - 1] = 0;
	*len = n;
	return true;
}

/* The members of the body object at c: name and state into their
 * buffers, their lengths into *nl and *sl (SIZE_MAX when absent). */
static bool jobject(jcur *c, char *name, size_t *nl, char *state, size_t *sl)
{
	char key[16], skip[8];
	ws(c);
	if (c->p >= c->end || *c->p++ != '{')
		return false;
	ws(c);
	if (c->p < c->end && *c->p == '}')
		return c->p++, true;
	for (;;) {
		size_t kl, dummy;
		ws(c);
		if (!jstring(c, key, sizeof key, &kl))
			return false;
		ws(c);
		if (c->p >= c->end || *c->p++ != ':')
			return false;
		ws(c);
		bool isn = kl == 4 && !strcmp(key, "name"), iss = kl == 5 && !strcmp(key, "state");
		if (!jstring(c,
		             isn   ? name
		             : iss ? state
		                   : skip,
		             isn   ? NG_VIEW_NAME_MAX + 2
		             : iss ? NG_VIEW_STATE_MAX + 2
		                   : sizeof skip,
		             isn   ? nl
		             : iss ? sl
		                   : &dummy))
			return false;
		ws(c);
		if (c->p >= c->end)
			return false;
		if (*c->p == '}')
			return c->p++, true;
		if (*c->p++ != ',')
			return false;
	}
}

unsigned ng_views_body(const char *buf, size_t len, char *name, char **state, char *err,
                       size_t errlen)
{
	*state = NULL;
	if (len > NG_VIEWS_BODY_MAX) {
		snprintf(err, errlen, "the body is over %d bytes", NG_VIEWS_BODY_MAX);
		return 413;
	}
	char nbuf[NG_VIEW_NAME_MAX + 2], *sbuf = malloc(NG_VIEW_STATE_MAX + 2);
	size_t nl = SIZE_MAX, sl = SIZE_MAX;
	jcur c = {buf, buf + len};
	unsigned rc = 400;
	if (!sbuf) {
		snprintf(err, errlen, "out of memory");
		return 500;
	}
	bool ok = jobject(&c, nbuf, &nl, sbuf, &sl);
	ws(&c);
	if (!ok || c.p != c.end)
		snprintf(err, errlen,
		         "the body is not a JSON object of strings "
		         "{\"name\": \"...\", \"state\": \"...\"}");
	else if (nl == SIZE_MAX || sl == SIZE_MAX)
		snprintf(err, errlen, "the body needs both \"name\" and \"state\"");
	else if (!ng_view_name_ok(nbuf, nl))
		snprintf(err, errlen,
		         "bad view name: 1 to %d characters of letters, digits, space, "
		         "'_', '.', ':', '(', ')', '-', no space first or last",
		         NG_VIEW_NAME_MAX);
	else if (sl > NG_VIEW_STATE_MAX)
		snprintf(err, errlen, "the state is %zu bytes, over %d", sl, NG_VIEW_STATE_MAX),
		    rc = 413;
	else if (!ng_view_state_ok(sbuf, sl))
		snprintf(err, errlen,
		         "bad state: a dashboard URL path and query, starting "
		         "with '/', printable ASCII without spaces");
	else
		rc = 0;
	if (rc) {
		free(sbuf);
		return rc;
	}
	memcpy(name, nbuf, nl + 1);
	*state = sbuf;
	return 0;
}

void ng_views_json(FILE *f, const ng_views *v)
{
	fprintf(f, "{\"format\":\"%s\",\"max\":%d,\"views\":[", NG_VIEWS_MAGIC, NG_VIEWS_MAX);
	for (size_t i = 0; i < v->n; i++) {
		fputs(i ? ",{\"name\":" : "{\"name\":", f);
		ng_json_put_str(f, v->v[i].name);
		fputs(",\"state\":", f);
		ng_json_put_str(f, v->v[i].state);
		fputc('}', f);
	}
	fputs("]}\n", f);
}

/* ---- the file ---------------------------------------------------------- */

/* The largest file: every view at its bounds, with tab and newline. */
#define FILE_MAX (32 + NG_VIEWS_MAX * (NG_VIEW_NAME_MAX + NG_VIEW_STATE_MAX + 2))

int ng_views_load(const char *path, ng_views *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	FILE *f = fopen(path, "rb");
	if (!f) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	char *buf = malloc(FILE_MAX + 1);
	size_t n = buf ? fread(buf, 1, FILE_MAX + 1, f) : 0;
	bool bad = !buf || ferror(f);
	fclose(f);
	char why[128];
	int rc = 0;
	if (bad)
		snprintf(err, errlen, "cannot read %s", path), rc = -1;
	else if (n > FILE_MAX)
		snprintf(err, errlen, "%s is over %d bytes", path, FILE_MAX), rc = -1;
	else if (ng_views_parse(buf, n, out, why, sizeof why))
		snprintf(err, errlen, "%s is damaged (%s)", path, why), rc = -1;
	free(buf);
	return rc;
}

int ng_views_save(const char *path, const ng_views *v, char *err, size_t errlen)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	if (!m) {
		free(text);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	fprintf(m, "%s\n", NG_VIEWS_MAGIC);
	for (size_t i = 0; i < v->n; i++)
		fprintf(m, "%s\t%s\n", v->v[i].name, v->v[i].state);
	fclose(m);
	int rc = 0;
	if (ng_replace_file(path, text, len)) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		rc = -1;
	}
	free(text);
	return rc;
}

/* ---- the handler ------------------------------------------------------- */

/* One writer at a time: load, change, save. */
static pthread_mutex_t views_mu = PTHREAD_MUTEX_INITIALIZER;

static void answer_list(ng_http_resp *out, const ng_views *v, unsigned status)
{
	FILE *f = open_memstream(&out->body, &out->len);
	if (!f) {
		ng_api_error(out, 500, "out of memory", NULL);
		return;
	}
	ng_views_json(f, v);
	fclose(f);
	out->status = status;
	out->ctype = "application/json";
}

/* POST: save (replace a view of the same name: 200; a new one: 201). */
static void do_save(const char *path, ng_views *v, const char *body, size_t blen, ng_http_resp *out)
{
	char name[NG_VIEW_NAME_MAX + 1], *state, err[256];
	unsigned rc = ng_views_body(body, blen, name, &state, err, sizeof err);
	if (rc) {
		ng_api_error(out, rc, err,
		             "POST {\"name\": NAME, \"state\": \"/PATH?QUERY\"} (docs/api.md)");
		return;
	}
	long i = find(v, name);
	if (i < 0 && v->n >= NG_VIEWS_MAX) {
		free(state);
		ng_api_error(out, 409, "there are 256 saved views already", "delete one first");
		return;
	}
	bool added = i < 0;
	if (added) {
		i = (long)v->n++;
		memcpy(v->v[i].name, name, sizeof name);
	} else {
		free(v->v[i].state);
	}
	v->v[i].state = state;
	if (ng_views_save(path, v, err, sizeof err))
		ng_api_error(out, 500, err, NULL);
	else
		answer_list(out, v, added ? 201 : 200);
}

/* DELETE /api/v1/views/NAME. */
static void do_delete(const char *path, ng_views *v, const char *name, ng_http_resp *out)
{
	char err[256];
	long i = find(v, name);
	if (i < 0) {
		ng_api_error(out, 404, "no saved view of that name",
		             "GET /api/v1/views lists them");
		return;
	}
	free(v->v[i].state);
	memmove(&v->v[i], &v->v[i + 1], (v->n - (size_t)i - 1) * sizeof v->v[0]);
	v->n--;
	if (ng_views_save(path, v, err, sizeof err))
		ng_api_error(out, 500, err, NULL);
	else
		answer_list(out, v, 200);
}

void ng_api_views(ng_http_server *s, const char *method, const char *url, const char *body,
                  size_t blen, ng_http_resp *out)
{
	char dir[4096], path[4200], err[4400];
	const char *name = url[13] == '/' ? url + 14 : NULL;
	bool get = !strcmp(method, "GET") || !strcmp(method, "HEAD");
	bool post = !strcmp(method, "POST"), del = !strcmp(method, "DELETE");
	if ((name && !del) || (!name && del) || (!get && !post && !del)) {
		ng_api_error(out, 405, "method not allowed here",
		             "GET or POST /api/v1/views, DELETE /api/v1/views/NAME");
		out->allow = name ? "DELETE" : "GET, HEAD, POST";
		return;
	}
	if (!ng_store_state_dir(s->store_dir, dir, sizeof dir) ||
	    (size_t)snprintf(path, sizeof path, "%s/views.txt", dir) >= sizeof path) {
		ng_api_error(out, 500, "cannot make the store's state directory", NULL);
		return;
	}
	ng_views *v = malloc(sizeof *v);
	if (!v) {
		ng_api_error(out, 500, "out of memory", NULL);
		return;
	}
	pthread_mutex_lock(&views_mu);
	if (ng_views_load(path, v, err, sizeof err))
		ng_api_error(out, 500, err, "move the file away to start a new list");
	else if (get)
		answer_list(out, v, 200);
	else if (post)
		do_save(path, v, body ? body : "", blen, out);
	else
		do_delete(path, v, name, out);
	pthread_mutex_unlock(&views_mu);
	ng_views_free(v);
	free(v);
}
