/*
 * exporters.c — the exporter state file STORE/state/exporters.json (format
 * in exporters.h).
 *
 * A row is written, read and merged by walking NG_EXPORTER_COUNTERS
 * (decode/decoder.h, the table ng_exporter_counters[]): each counter's kind
 * says how it is written (a number, a time twice, a name, the errors
 * object), read back, and added to the row of an earlier run.  Only the
 * key of a row (exporter, domain, version) and the listener and store
 * objects around the rows are spelt out here.
 *
 * Writing is fprintf of that layout, strings through ng_json_put_str.
 * Reading takes any JSON of the layout's shape (key order free, unknown
 * keys skipped) with a small recursive-descent reader that names the first
 * thing wrong and its byte offset: the file is ours and small, so a general
 * JSON library would buy nothing but a dependency.  A damaged file is
 * refused whole (the caller keeps its counters); it never half-loads.
 */
#include "store/exporters.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/addr.h"
#include "core/field.h"
#include "core/json.h"
#include "core/timefmt.h"

const char *ng_protocol_name(uint8_t version)
{
	switch (version) {
	case 1: return "NetFlow v1";
	case 5: return "NetFlow v5";
	case 7: return "NetFlow v7";
	case 9: return "NetFlow v9";
	case 10: return "IPFIX";
	case 0x50: return "sFlow v5";
	case NG_OTHERS_VERSION: return "others";
	case 0: return "unknown";
	}
	return "other";
}

uint64_t ng_exporter_errors_total(const ng_exporter_stats *s)
{
	return ng_exporter_counter_get(s, NG_XC_errors);
}

/* ---- writing ---------------------------------------------------------- */

/* "key":"2026-11-30T12:00:00.000Z","key_ms":ms ("" for 0: never). */
static void put_time(FILE *f, const char *key, uint64_t ms)
{
	char t[40];
	fprintf(f, "\"%s\":", key);
	ng_json_put_str(f, ms ? ng_time_format(ms, t) : "");
	fprintf(f, ",\"%s_ms\":%" PRIu64, key, ms);
}

/* "key":{"<error>":n,…},"key_total":n: every error, or those not zero. */
static void put_errors(FILE *f, const char *key, const ng_exporter_stats *s, unsigned flags)
{
	fprintf(f, "\"%s\":{", key);
	for (int i = 0, k = 0; i < NG_DERR_COUNT; i++)
		if (s->errors[i] || !(flags & NG_EXPORTERS_NONZERO_ERRORS))
			fprintf(f, "%s\"%s\":%" PRIu64, k++ ? "," : "", ng_decode_error_name(i),
			        s->errors[i]);
	fprintf(f, "},\"%s_total\":%" PRIu64, key, ng_exporter_errors_total(s));
}

/* One counter of a row, as its kind says (decoder.h), after a comma. */
static void put_counter(FILE *f, const ng_exporter_stats *s, enum ng_exporter_counter_id id,
                        unsigned flags)
{
	const ng_exporter_counter *c = &ng_exporter_counters[id];
	uint64_t v = ng_exporter_counter_get(s, id);
	fputc(',', f);
	switch (c->kind) {
	case NG_XK_COUNTER:
	case NG_XK_GAUGE: fprintf(f, "\"%s\":%" PRIu64, c->name, v); break;
	case NG_XK_TIME_MIN:
	case NG_XK_TIME_MAX: put_time(f, c->name, v); break;
	case NG_XK_SOURCE:
		fprintf(f, "\"%s\":", c->name);
		ng_json_put_str(f, ng_sampling_source_name((unsigned)v));
		break;
	case NG_XK_ERRORS: put_errors(f, c->name, s, flags); break;
	}
}

void ng_exporters_put_row(FILE *f, const ng_exporter_stats *s, unsigned flags)
{
	char a[NG_ADDR_STRLEN];
	fputs("\"exporter\":", f);
	ng_json_put_str(f, ng_addr_format(s->exporter, a));
	fprintf(f, ",\"domain\":%" PRIu32 ",\"version\":%u,\"protocol\":", s->domain, s->version);
	ng_json_put_str(f, ng_protocol_name(s->version));
	for (int id = 0; id < NG_XC_COUNT; id++)
		put_counter(f, s, id, flags);
}

void ng_exporters_put_listener(FILE *f, const ng_listener_stats *l)
{
	const char *sep = "";
	fputs("\"listener\":{", f);
#define X(field, doc)                                                                              \
	fprintf(f, "%s\"" #field "\":%" PRIu64, sep, l->field);                                    \
	sep = ",";
	NG_LISTENER_COUNTERS(X)
#undef X
	fputc('}', f);
}

void ng_exporters_put_store(FILE *f, const ng_store_writer_stats *w)
{
	fprintf(f,
	        "\"store\":{\"rows\":%" PRIu64 ",\"segments\":%" PRIu64 ",\"bytes\":%" PRIu64
	        ",\"errors\":%" PRIu64 ",\"dropped\":%" PRIu64 ",\"deferred\":%" PRIu64 "}",
	        w->rows, w->segments, w->bytes, w->errors, w->dropped, w->deferred);
}

void ng_exporters_put_clickhouse(FILE *f, const ng_sink_stats *s)
{
	const char *sep = "";
	fputs("\"clickhouse\":{", f);
#define X(name, kind, doc)                                                                         \
	fprintf(f, "%s\"" #name "\":%" PRIu64, sep, s->name);                                      \
	sep = ",";
	NG_CH_SINK_COUNTERS(X)
#undef X
	fputc('}', f);
}

void ng_exporters_put_limits(FILE *f, const ng_limit_stats *l)
{
	fputs("\"limits\":{", f);
	for (int i = 0; i < NG_LC_COUNT; i++)
		fprintf(f, "%s\"%s\":%" PRIu64, i ? "," : "", ng_limit_counters[i].name,
		        ng_limit_stat(l, i));
	fputc('}', f);
}

void ng_exporters_put_workers(FILE *f, unsigned n, const ng_worker_stats *ws)
{
	if (n < 2)
		return;
	fputs(",\n\"workers\":[", f);
	for (unsigned w = 0; w < n && w < NG_EXPORTERS_WORKERS_MAX; w++)
		fprintf(f,
		        "%s{\"records\":%" PRIu64 ",\"datagrams\":%" PRIu64 ",\"drops\":%" PRIu64
		        "}",
		        w ? "," : "", ws[w].records, ws[w].datagrams, ws[w].drops);
	fputc(']', f);
}

/* The whole file: header, listener, store, limits, one row a line. */
static void put_file(FILE *f, const ng_exporters_file *x)
{
	fprintf(f, "{\"format\":\"nagare-exporters/1\",");
	put_time(f, "updated", x->updated_ms);
	fputc(',', f);
	put_time(f, "started", x->started_ms);
	if (x->attribution_dbip)
		fputs(",\"attribution_dbip\":1", f);
	fputs(",\n", f);
	ng_exporters_put_listener(f, &x->listener);
	fputs(",\n", f);
	ng_exporters_put_store(f, &x->store);
	fputs(",\n", f);
	if (x->has_clickhouse) {
		ng_exporters_put_clickhouse(f, &x->clickhouse);
		fputs(",\n", f);
	}
	ng_exporters_put_limits(f, &x->limits);
	ng_exporters_put_workers(f, x->nworkers, x->workers);
	fputs(",\n\"exporters\":[", f);
	for (size_t i = 0; i < x->n; i++) {
		fputs(i ? ",\n{" : "\n{", f);
		ng_exporters_put_row(f, &x->rows[i], 0);
		fputc('}', f);
	}
	fputs("\n]}\n", f);
}

int ng_exporters_save(const char *path, const ng_exporters_file *x)
{
	char tmp[4096];
	if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp) {
		errno = ENAMETOOLONG;
		return -1;
	}
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	FILE *f = fdopen(fd, "w");
	if (!f) {
		int e = errno;
		close(fd);
		unlink(tmp);
		errno = e;
		return -1;
	}
	put_file(f, x);
	int bad = fflush(f) != 0 || ferror(f) || fsync(fd) != 0;
	int e = errno;
	if (fclose(f) != 0 && !bad) {
		bad = 1;
		e = errno;
	}
	if (bad || rename(tmp, path) != 0) {
		if (!bad)
			e = errno;
		unlink(tmp);
		errno = e;
		return -1;
	}
	return 0;
}

/* ---- reading ---------------------------------------------------------- */

struct rd {
	const char *p, *start, *end;
	const char *why; /* first error */
};

static void ws(struct rd *r)
{
	while (r->p < r->end && isspace((unsigned char)*r->p))
		r->p++;
}

static bool fail(struct rd *r, const char *why)
{
	if (!r->why)
		r->why = why;
	return false;
}

static bool eat(struct rd *r, char c)
{
	ws(r);
	if (r->p < r->end && *r->p == c) {
		r->p++;
		return true;
	}
	return false;
}

/* A string into buf[len] (escapes: \" \\ \/ kept as the character, others
 * as '?': the writer never emits them). */
static bool str(struct rd *r, char *buf, size_t len)
{
	if (!eat(r, '"'))
		return fail(r, "expected a string");
	size_t n = 0;
	while (r->p < r->end && *r->p != '"') {
		char c = *r->p++;
		if (c == '\\') {
			if (r->p >= r->end)
				break;
			c = *r->p++;
			if (c != '"' && c != '\\' && c != '/')
				c = '?';
		}
		if (n + 1 < len)
			buf[n++] = c;
	}
	if (r->p >= r->end)
		return fail(r, "unterminated string");
	r->p++;
	if (len)
		buf[n] = 0;
	return true;
}

static bool u64(struct rd *r, uint64_t *v)
{
	ws(r);
	if (r->p >= r->end || !isdigit((unsigned char)*r->p))
		return fail(r, "expected an unsigned integer");
	uint64_t x = 0;
	while (r->p < r->end && isdigit((unsigned char)*r->p)) {
		unsigned d = (unsigned)(*r->p++ - '0');
		if (x > (UINT64_MAX - d) / 10)
			return fail(r, "integer out of range");
		x = x * 10 + d;
	}
	*v = x;
	return true;
}

static bool skip_value(struct rd *r, int depth);

/* Calls fn(r, key, arg) for each member of an object; fn reads the value. */
static bool members(struct rd *r, bool (*fn)(struct rd *, const char *, void *), void *arg)
{
	if (!eat(r, '{'))
		return fail(r, "expected an object");
	if (eat(r, '}'))
		return true;
	do {
		char key[64];
		if (!str(r, key, sizeof key) || !eat(r, ':'))
			return fail(r, "expected \"key\":");
		if (!fn(r, key, arg))
			return false;
	} while (eat(r, ','));
	return eat(r, '}') || fail(r, "expected ',' or '}'");
}

static bool skip_value(struct rd *r, int depth)
{
	ws(r);
	if (depth > 32)
		return fail(r, "nested too deeply");
	if (r->p >= r->end)
		return fail(r, "unexpected end");
	char c = *r->p;
	if (c == '"') {
		char dummy[1];
		return str(r, dummy, 0);
	}
	if (c == '{' || c == '[') {
		char close = c == '{' ? '}' : ']';
		r->p++;
		if (eat(r, close))
			return true;
		do {
			if (c == '{') {
				char key[1];
				if (!str(r, key, 0) || !eat(r, ':'))
					return fail(r, "expected \"key\":");
			}
			if (!skip_value(r, depth + 1))
				return false;
		} while (eat(r, ','));
		return eat(r, close) || fail(r, "expected ',' or a closing bracket");
	}
	/* number, true, false, null */
	const char *s = r->p;
	while (r->p < r->end && (isalnum((unsigned char)*r->p) || strchr("+-.", *r->p)))
		r->p++;
	return r->p > s || fail(r, "expected a value");
}

static bool listener_member(struct rd *r, const char *k, void *arg)
{
	ng_listener_stats *l = arg;
	uint64_t *v = NULL;
#define X(field, doc)                                                                              \
	if (!v && !strcmp(k, #field))                                                              \
		v = &l->field;
	NG_LISTENER_COUNTERS(X)
#undef X
	return v ? u64(r, v) : skip_value(r, 0);
}

static bool store_member(struct rd *r, const char *k, void *arg)
{
	ng_store_writer_stats *w = arg;
	uint64_t *v = !strcmp(k, "rows")       ? &w->rows
	              : !strcmp(k, "segments") ? &w->segments
	              : !strcmp(k, "bytes")    ? &w->bytes
	              : !strcmp(k, "errors")   ? &w->errors
	              : !strcmp(k, "dropped")  ? &w->dropped
	              : !strcmp(k, "deferred") ? &w->deferred
	                                       : NULL;
	return v ? u64(r, v) : skip_value(r, 0);
}

static bool clickhouse_member(struct rd *r, const char *k, void *arg)
{
	ng_sink_stats *s = arg;
	uint64_t *v = NULL;
#define X(name, kind, doc)                                                                         \
	if (!v && !strcmp(k, #name))                                                               \
		v = &s->name;
	NG_CH_SINK_COUNTERS(X)
#undef X
	return v ? u64(r, v) : skip_value(r, 0);
}

static bool limits_member(struct rd *r, const char *k, void *arg)
{
	ng_limit_stats *l = arg;
	for (int i = 0; i < NG_LC_COUNT; i++)
		if (!strcmp(k, ng_limit_counters[i].name))
			return u64(r,
			           (uint64_t *)(void *)((char *)l + ng_limit_counters[i].offset));
	return skip_value(r, 0); /* a counter this build does not know */
}

static bool error_member(struct rd *r, const char *k, void *arg)
{
	ng_exporter_stats *s = arg;
	for (int i = 0; i < NG_DERR_COUNT; i++)
		if (!strcmp(k, ng_decode_error_name(i)))
			return u64(r, &s->errors[i]);
	return skip_value(r, 0); /* an error this build does not know */
}

/* A sampling source by name; a name this build does not know reads as
 * "none" (0). */
static bool source_value(struct rd *r, ng_exporter_stats *s, enum ng_exporter_counter_id id)
{
	char name[32];
	if (!str(r, name, sizeof name))
		return false;
	for (unsigned i = 0; i < NG_SAMPLING_SOURCE_COUNT; i++)
		if (!strcmp(name, ng_sampling_source_name(i)))
			ng_exporter_counter_set(s, id, i);
	return true;
}

/* Reads an unsigned integer into counter `id` of `s`. */
static bool number_value(struct rd *r, ng_exporter_stats *s, enum ng_exporter_counter_id id)
{
	uint64_t v;
	if (!u64(r, &v))
		return false;
	ng_exporter_counter_set(s, id, v);
	return true;
}

/* True when key `k` is `name` followed by `suffix`. */
static bool key_is(const char *k, const char *name, const char *suffix)
{
	size_t n = strlen(name);
	return !strncmp(k, name, n) && !strcmp(k + n, suffix);
}

/* Reads the value of key `k` when it is a counter's (as its kind writes
 * it, put_counter) into *s; *known false when no counter has this key. */
static bool counter_member(struct rd *r, const char *k, ng_exporter_stats *s, bool *known)
{
	*known = true;
	for (int id = 0; id < NG_XC_COUNT; id++) {
		const ng_exporter_counter *c = &ng_exporter_counters[id];
		switch (c->kind) {
		case NG_XK_COUNTER:
		case NG_XK_GAUGE:
			if (key_is(k, c->name, ""))
				return number_value(r, s, id);
			break;
		case NG_XK_TIME_MIN:
		case NG_XK_TIME_MAX: /* "name" is the same time for people */
			if (key_is(k, c->name, "_ms"))
				return number_value(r, s, id);
			break;
		case NG_XK_SOURCE:
			if (key_is(k, c->name, ""))
				return source_value(r, s, id);
			break;
		case NG_XK_ERRORS: /* "name_total" is their sum, for people */
			if (key_is(k, c->name, ""))
				return members(r, error_member, s);
			break;
		}
	}
	*known = false;
	return true;
}

static bool row_member(struct rd *r, const char *k, void *arg)
{
	ng_exporter_stats *s = arg;
	uint64_t v;
	if (!strcmp(k, "exporter")) {
		char a[64];
		return str(r, a, sizeof a) &&
		       (ng_addr_parse(a, s->exporter) || fail(r, "exporter is not an address"));
	}
	if (!strcmp(k, "domain") || !strcmp(k, "version")) {
		if (!u64(r, &v))
			return false;
		if (k[0] == 'd')
			s->domain = (uint32_t)v;
		else
			s->version = (uint8_t)v;
		return true;
	}
	bool known;
	if (!counter_member(r, k, s, &known))
		return false;
	return known || skip_value(r, 0); /* "protocol", "errors_total", unknown keys */
}

static bool rows(struct rd *r, ng_exporters_file *f)
{
	if (!eat(r, '['))
		return fail(r, "expected an array");
	if (eat(r, ']'))
		return true;
	size_t cap = 0;
	do {
		if (f->n == cap) {
			cap = cap ? cap * 2 : 16;
			ng_exporter_stats *n = realloc(f->rows, cap * sizeof *n);
			if (!n)
				return fail(r, "out of memory");
			f->rows = n;
		}
		ng_exporter_stats *s = &f->rows[f->n];
		memset(s, 0, sizeof *s);
		if (!members(r, row_member, s))
			return false;
		f->n++;
	} while (eat(r, ','));
	return eat(r, ']') || fail(r, "expected ',' or ']'");
}

static bool worker_member(struct rd *r, const char *k, void *arg)
{
	ng_worker_stats *w = arg;
	if (!strcmp(k, "records"))
		return u64(r, &w->records);
	if (!strcmp(k, "datagrams"))
		return u64(r, &w->datagrams);
	if (!strcmp(k, "drops"))
		return u64(r, &w->drops);
	return skip_value(r, 0);
}

/* "workers":[{…}, …]: the first NG_EXPORTERS_WORKERS_MAX kept. */
static bool workers(struct rd *r, ng_exporters_file *f)
{
	if (!eat(r, '['))
		return fail(r, "expected an array");
	if (eat(r, ']'))
		return true;
	do {
		ng_worker_stats spare, *w = f->nworkers < NG_EXPORTERS_WORKERS_MAX
		                                ? &f->workers[f->nworkers++]
		                                : &spare;
		memset(w, 0, sizeof *w);
		if (!members(r, worker_member, w))
			return false;
	} while (eat(r, ','));
	return eat(r, ']') || fail(r, "expected ',' or ']'");
}

static bool top_member(struct rd *r, const char *k, void *arg)
{
	ng_exporters_file *f = arg;
	if (!strcmp(k, "workers"))
		return workers(r, f);
	if (!strcmp(k, "exporters"))
		return rows(r, f);
	if (!strcmp(k, "listener"))
		return members(r, listener_member, &f->listener);
	if (!strcmp(k, "store"))
		return members(r, store_member, &f->store);
	if (!strcmp(k, "limits"))
		return members(r, limits_member, &f->limits);
	if (!strcmp(k, "clickhouse")) {
		f->has_clickhouse = true;
		return members(r, clickhouse_member, &f->clickhouse);
	}
	if (!strcmp(k, "updated_ms"))
		return u64(r, &f->updated_ms);
	if (!strcmp(k, "started_ms"))
		return u64(r, &f->started_ms);
	if (!strcmp(k, "attribution_dbip")) {
		uint64_t v = 0;
		if (!u64(r, &v))
			return false;
		f->attribution_dbip = v != 0;
		return true;
	}
	return skip_value(r, 0);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	while (buf) {
		n += fread(buf + n, 1, cap - n, fp);
		if (n < cap)
			break;
		char *b = cap > (64u << 20) ? NULL : realloc(buf, cap * 2);
		if (!b) {
			free(buf);
			buf = NULL;
			errno = EFBIG;
			break;
		}
		buf = b;
		cap *= 2;
	}
	if (buf && ferror(fp)) {
		free(buf);
		buf = NULL;
		errno = EIO;
	}
	fclose(fp);
	*len = n;
	return buf;
}

int ng_exporters_parse(const char *buf, size_t len, const char *name, ng_exporters_file *f,
                       char *err, size_t errlen)
{
	memset(f, 0, sizeof *f);
	struct rd r = {.p = buf, .start = buf, .end = buf + len};
	bool ok = members(&r, top_member, f);
	ws(&r);
	if (ok && r.p != r.end)
		ok = fail(&r, "text after the object");
	if (!ok) {
		snprintf(err, errlen, "%s: not an exporter state file: %s at byte %zu", name,
		         r.why ? r.why : "syntax error", (size_t)(r.p - r.start));
		ng_exporters_free(f);
		errno = EINVAL;
		return -1;
	}
	return 0;
}

int ng_exporters_load(const char *path, ng_exporters_file *f, char *err, size_t errlen)
{
	memset(f, 0, sizeof *f);
	size_t len;
	char *buf = slurp(path, &len);
	if (!buf) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	int rc = ng_exporters_parse(buf, len, path, f, err, errlen);
	int e = errno;
	free(buf);
	errno = e;
	return rc;
}

void ng_exporters_free(ng_exporters_file *f)
{
	free(f->rows);
	f->rows = NULL;
	f->n = 0;
}

/* ---- merging ---------------------------------------------------------- */

/* Whether row `s` holds a reading: a GAUGE counter not 0 (a SOURCE only
 * says where a GAUGE's value came from). */
static bool has_last_values(const ng_exporter_stats *s)
{
	for (int id = 0; id < NG_XC_COUNT; id++)
		if (ng_exporter_counters[id].kind == NG_XK_GAUGE && ng_exporter_counter_get(s, id))
			return true;
	return false;
}

/* Adds row `s` of an earlier run to row `d` of this run (same key). */
static void add_row(ng_exporter_stats *d, const ng_exporter_stats *s)
{
	if (s->last_seen > d->last_seen && !d->version)
		d->version = s->version;
	bool take_last = !has_last_values(d);
	ng_exporter_stats_add(d, s);
	if (!take_last)
		return;
	for (int id = 0; id < NG_XC_COUNT; id++) {
		enum ng_exporter_kind k = ng_exporter_counters[id].kind;
		if (k == NG_XK_GAUGE || k == NG_XK_SOURCE)
			ng_exporter_counter_set(d, id, ng_exporter_counter_get(s, id));
	}
}

/* Orders rows by key (exporter, domain). */
static int key_cmp(const ng_exporter_stats *a, const ng_exporter_stats *b)
{
	int c = memcmp(a->exporter, b->exporter, 16);
	if (c)
		return c;
	return a->domain < b->domain ? -1 : a->domain > b->domain;
}

/* qsort_r comparison of two indexes into the rows `arg`, by key. */
static int index_cmp(const void *a, const void *b, void *arg)
{
	const ng_exporter_stats *rows = arg;
	return key_cmp(&rows[*(const size_t *)a], &rows[*(const size_t *)b]);
}

/* The index (into rows) of the row with key `k`, by binary search over
 * idx[n] (sorted by key_cmp); n when none. */
static size_t find_row(const ng_exporter_stats *rows, const size_t *idx, size_t n,
                       const ng_exporter_stats *k)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = key_cmp(&rows[idx[mid]], k);
		if (!c)
			return idx[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return SIZE_MAX;
}

int ng_exporters_merge(ng_exporters_file *f, const ng_exporters_file *base)
{
	size_t n = f->n;
	size_t *idx = malloc((n ? n : 1) * sizeof *idx);
	ng_exporter_stats *rows = realloc(f->rows, (n + base->n + 1) * sizeof *rows);
	if (!idx || !rows) {
		free(idx);
		if (rows)
			f->rows = rows;
		return -1;
	}
	f->rows = rows;
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	qsort_r(idx, n, sizeof *idx, index_cmp, rows);
	for (size_t i = 0; i < base->n; i++) {
		const ng_exporter_stats *b = &base->rows[i];
		size_t j = find_row(rows, idx, n, b);
		if (j == SIZE_MAX)
			rows[f->n++] = *b;
		else
			add_row(&rows[j], b);
	}
	free(idx);
#define X(field, doc) f->listener.field += base->listener.field;
	NG_LISTENER_COUNTERS(X)
#undef X
	ng_limit_stats_add(&f->limits, &base->limits);
	/* flows of an earlier run enriched from DB-IP are still in the store */
	f->attribution_dbip = f->attribution_dbip || base->attribution_dbip;
	if (base->started_ms && (!f->started_ms || base->started_ms < f->started_ms))
		f->started_ms = base->started_ms;
	return 0;
}

/* Most records first, then most packets, then by key. */
static int records_cmp(const void *pa, const void *pb)
{
	const ng_exporter_stats *a = pa, *b = pb;
	if (a->records != b->records)
		return a->records > b->records ? -1 : 1;
	if (a->packets != b->packets)
		return a->packets > b->packets ? -1 : 1;
	return key_cmp(a, b);
}

int ng_exporters_cap(ng_exporters_file *f, size_t max)
{
	size_t others = SIZE_MAX, listed = f->n;
	for (size_t i = 0; i < f->n; i++)
		if (ng_exporter_is_others(&f->rows[i])) {
			others = i;
			listed--;
			break;
		}
	if (listed <= max)
		return 0;
	ng_exporter_stats o;
	memset(&o, 0, sizeof o);
	o.domain = NG_OTHERS_DOMAIN;
	o.version = NG_OTHERS_VERSION;
	if (others != SIZE_MAX) {
		o = f->rows[others];
		f->rows[others] = f->rows[--f->n];
	}
	qsort(f->rows, f->n, sizeof *f->rows, records_cmp);
	for (size_t i = max; i < f->n; i++)
		ng_exporter_stats_add(&o, &f->rows[i]);
	f->n = max;
	f->rows[f->n++] = o; /* room: max < the rows there were */
	return 0;
}
