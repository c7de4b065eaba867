/*
 * api.c — the JSON API over the query model (docs/api.md).
 *
 * Every query endpoint reads the same parameters (from, to, filter,
 * limit, order), checks them against the server's limits, runs one query
 * of src/query with a deadline, and writes the result with the query
 * layer's JSON writers (output.h): the same document `nagare query
 * --format json` prints for the same query.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/addr.h"
#include "core/field.h"
#include "core/timefmt.h"
#include "http/assets.h"
#include "http/http_int.h"
#include "query/backend.h"
#include "query/ptr.h"
#include "query/filter.h"
#include "query/output.h"
#include "query/pairs.h"
#include "query/sankey.h"
#include "query/query.h"
#include "query/series.h"
#include "sink/json.h"
#include "store/counters.h"
#include "store/exporters.h"
#include "store/framecache.h"

const double ng_http_buckets[NG_HTTP_NBUCKETS] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.2,
                                                  0.5,   1,    2.5,   5,    10,  30};

#define DEFAULT_RANGE_MS (24ull * 3600 * 1000)
#define MAX_SERIES_POINTS 100000 /* buckets × series in one answer */

void ng_api_error(ng_http_resp *out, unsigned status, const char *msg, const char *hint)
{
	FILE *f = open_memstream(&out->body, &out->len);
	out->status = status;
	out->ctype = "application/json";
	if (!f)
		return;
	fputs("{\"error\":", f);
	ng_json_put_str(f, msg);
	if (hint) {
		fputs(",\"hint\":", f);
		ng_json_put_str(f, hint);
	}
	fputs("}\n", f);
	fclose(f);
}

void ng_http_observe(ng_http_server *s, uint64_t us)
{
	atomic_fetch_add(&s->m.queries, 1);
	atomic_fetch_add(&s->m.lat_sum_us, us);
	size_t i = 0;
	while (i < NG_HTTP_NBUCKETS && (double)us / 1e6 > ng_http_buckets[i])
		i++;
	atomic_fetch_add(&s->m.lat_bucket[i], 1);
}

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- parameters -------------------------------------------------------- */

typedef struct params {
	ng_query q;
	const char *filter_text;
	size_t limit, offset;
	uint64_t t0; /* mono ms at the start */
} params;

/* A JSON error for the bad filter: message, column (1-based), hint. */
static void filter_error(ng_http_resp *out, const char *text, const char *err, size_t col)
{
	FILE *f = open_memstream(&out->body, &out->len);
	out->status = 400;
	if (!f)
		return;
	char msg[1200];
	snprintf(msg, sizeof msg, "bad filter at column %zu: %s", col + 1, err);
	fputs("{\"error\":", f);
	ng_json_put_str(f, msg);
	fprintf(f, ",\"column\":%zu,\"filter\":", col + 1);
	ng_json_put_str(f, text);
	fputs(",\"hint\":\"nfdump filter syntax, e.g. 'proto tcp and dst port 443' "
	      "(docs/query.md)\"}\n",
	      f);
	fclose(f);
}

static bool parse_count(const char *s, size_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || end == s || s[0] == '-')
		return false;
	*out = (size_t)v;
	return true;
}

/*
 * Reads from, to, filter, limit, offset, order into p.  Returns true, or
 * false with the 4xx answer set.  The filter is parsed here (the caller
 * frees p->q.filter).
 */
static bool read_params(ng_http_server *s, const ng_http_req *r, params *p, size_t def_limit,
                        ng_http_resp *out)
{
	memset(p, 0, sizeof *p);
	p->t0 = mono_ms();
	uint64_t now = ng_now_ms();
	const char *from = r->arg(r->conn, "from"), *to = r->arg(r->conn, "to");
	p->q.to_ms = now;
	if (to && !ng_time_parse(to, now, &p->q.to_ms)) {
		ng_api_error(out, 400, "bad 'to' time",
		             "2026-11-30T12:00:00Z, epoch seconds, now, -15m, -1h, -2d");
		return false;
	}
	p->q.from_ms = p->q.to_ms > DEFAULT_RANGE_MS ? p->q.to_ms - DEFAULT_RANGE_MS : 0;
	if (from && !ng_time_parse(from, now, &p->q.from_ms)) {
		ng_api_error(out, 400, "bad 'from' time",
		             "2026-11-30T12:00:00Z, epoch seconds, now, -15m, -1h, -2d");
		return false;
	}
	if (p->q.from_ms >= p->q.to_ms) {
		ng_api_error(out, 400, "'from' must be before 'to'",
		             "the range is [from, to): from is its first instant");
		return false;
	}
	if (p->q.to_ms - p->q.from_ms > s->max_range_ms) {
		char hint[128];
		snprintf(hint, sizeof hint, "ask for at most %" PRIu64 " days at once",
		         s->max_range_ms / 86400000);
		ng_api_error(out, 400, "time range too long", hint);
		return false;
	}
	const char *lim = r->arg(r->conn, "limit"), *off = r->arg(r->conn, "offset");
	p->limit = def_limit;
	if (lim && (!parse_count(lim, &p->limit) || p->limit == 0 || p->limit > s->max_rows)) {
		char hint[128];
		snprintf(hint, sizeof hint, "limit is a count from 1 to %zu", s->max_rows);
		ng_api_error(out, 400, "bad 'limit'", hint);
		return false;
	}
	/* a page is the tail of a listing of offset + limit flows, held in
	 * memory: 110000 flows at most (tens of MB) */
	if (off && (!parse_count(off, &p->offset) || p->offset > 100000)) {
		ng_api_error(out, 400, "bad 'offset'",
		             "a count from 0 to 100000: narrow the time range or the filter to "
		             "page further");
		return false;
	}
	const char *order = r->arg(r->conn, "order");
	p->q.order = NG_ORDER_FLOWS;
	if (order && !ng_query_parse_order(order, &p->q.order)) {
		ng_api_error(out, 400, "unknown order", "flows, packets, bytes, pps, bps or bpp");
		return false;
	}
	p->filter_text = r->arg(r->conn, "filter");
	if (!p->filter_text)
		p->filter_text = "";
	char err[1024];
	size_t col = 0;
	p->q.filter = ng_filter_parse(p->filter_text, err, sizeof err, &col);
	if (!p->q.filter) {
		filter_error(out, p->filter_text, err, col);
		return false;
	}
	p->q.limit = p->limit;
	p->q.deadline_ms = p->t0 + s->timeout_ms;
	return true;
}

/* The 400 for an unknown group-by field, listing the valid ones. */
static void field_error(ng_http_resp *out, const char *err)
{
	FILE *f = open_memstream(&out->body, &out->len);
	out->status = 400;
	if (!f)
		return;
	fputs("{\"error\":", f);
	ng_json_put_str(f, err);
	fputs(",\"hint\":\"see /api/v1/fields\",\"valid\":[\"ip\",\"port\",\"as\",\"if\","
	      "\"mask\",\"vlan\",\"conv\"",
	      f);
	for (int i = 0; i < NG_FIELD_COUNT; i++) {
		fputc(',', f);
		ng_json_put_str(f, ng_fields[i].name);
		if (ng_fields[i].short_name && strcmp(ng_fields[i].short_name, ng_fields[i].name)) {
			fputc(',', f);
			ng_json_put_str(f, ng_fields[i].short_name);
		}
	}
	fputs("]}\n", f);
	fclose(f);
}

/* After a failed run whose errno was e: 503 on the deadline (ETIMEDOUT)
 * and when ClickHouse is unreachable (ECONNREFUSED: no connection, or
 * its version not detected; ng_http_ch_server detects it again at the
 * next request), 500 otherwise. */
static void run_error(ng_http_server *s, ng_http_resp *out, const char *err, int e)
{
	atomic_fetch_add(&s->m.query_errors, 1);
	if (e == ETIMEDOUT) {
		atomic_fetch_add(&s->m.timeouts, 1);
		char hint[160];
		snprintf(hint, sizeof hint,
		         "the limit is %u ms: narrow the time range or the filter", s->timeout_ms);
		ng_api_error(out, 503, "query time limit reached", hint);
	} else if (e == ECONNREFUSED && s->ch) {
		ng_http_ch_forget(s);
		char hint[768];
		snprintf(hint, sizeof hint,
		         "%s; the flows are read from ClickHouse, asked again at the next "
		         "request",
		         err);
		ng_api_error(out, 503, "ClickHouse unreachable", hint);
	} else {
		ng_api_error(out, 500, err, NULL);
	}
}

/* The backend of one request (backend.h) into *b: the store, or
 * ClickHouse through a client of the request's own (close it with
 * ng_ch_close(b->ch)) whose time-out is the API's run-time limit, and
 * the server's version (detected at the first request: ng_http_ch_server);
 * conn is its connection's copy.  False with err set and errno as
 * ng_http_ch_server's when ClickHouse's version cannot be had
 * (ECONNREFUSED: unreachable; ETIMEDOUT: past the time limit), ENOMEM
 * when the client cannot be made. */
static bool open_backend(ng_http_server *s, ng_ch_conn *conn, ng_backend *b, char *err,
                         size_t errlen)
{
	*b = (ng_backend){.store = s->store_dir};
	if (!s->ch)
		return true;
	*conn = *s->ch;
	conn->timeout_ms = s->timeout_ms;
	conn->reply_max = (size_t)1 << 28; /* a page of max_rows flows is far less */
	if (!(b->ch = ng_ch_open(conn, err, errlen))) {
		errno = ENOMEM;
		return false;
	}
	if (ng_http_ch_server(s, b->ch, &b->sv, err, errlen) < 0) {
		int e = errno;
		ng_ch_close(b->ch);
		b->ch = NULL;
		errno = e;
		return false;
	}
	return true;
}

/* Runs q on the server's backend.  Returns as ng_query_run (errno
 * ETIMEDOUT on the time limit: the store's deadline, or ClickHouse's
 * request time-out, which open_backend sets to the same limit). */
static int run_query(ng_http_server *s, const ng_query *q, ng_query_result *res, char *err,
                     size_t errlen)
{
	ng_ch_conn conn;
	ng_backend b;
	if (!open_backend(s, &conn, &b, err, errlen))
		return -1;
	if (!b.ch)
		return ng_query_run(s->store_dir, q, res, err, errlen);
	int rc = ng_backend_run(&b, q, res, err, errlen);
	int e = errno; /* ETIMEDOUT: the ClickHouse request's time-out (ch_exec.c) */
	ng_ch_close(b.ch);
	errno = rc ? e : 0;
	return rc;
}

/* Opens the response body as a memory stream. */
static FILE *body(ng_http_resp *out, const char *ctype)
{
	out->ctype = ctype;
	return open_memstream(&out->body, &out->len);
}

static ng_output_opts json_opts(const params *p)
{
	return (ng_output_opts){
	    .fmt = NG_FMT_JSON, .header = true, .summary = true, .filter = p->filter_text};
}

/* ---- host names (resolve=1) ------------------------------------------- */

/* At most this many addresses of an answer are named. */
#define RESOLVE_MAX 1000

typedef int (*json_writer)(FILE *out, const ng_query *q, const ng_query_result *res,
                           const ng_output_opts *o);

/* The JSON answer `write` makes (the top N, or a page of flows) with
 * "names": {ADDR: NAME} of its address keys or its flows' addresses
 * (query/ptr.h), looked up within resolve_ms (default 500, at most 5000)
 * and "resolve": "on" or "off"; when off (the server's default), no name
 * and a note saying how to turn it on. */
static void write_with_names(ng_http_server *s, const ng_http_req *r, FILE *f, const ng_query *q,
                             const ng_query_result *res, const ng_output_opts *o, json_writer write)
{
	char *doc = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&doc, &len);
	if (!m) {
		write(f, q, res, o);
		return;
	}
	write(m, q, res, o);
	fclose(m);
	while (len && (doc[len - 1] == '\n' || doc[len - 1] == ' '))
		len--;
	if (len && doc[len - 1] == '}')
		len--;
	fwrite(doc, 1, len, f);
	free(doc);
	if (!s->ptr) {
		fputs(",\"resolve\":\"off\",\"names\":{},\"resolve_note\":\"host names are off: "
		      "start nagare with --ptr system (or --ptr ADDR:PORT, NAGARE_PTR)\"}\n",
		      f);
		return;
	}
	const char *ms = r->arg(r->conn, "resolve_ms");
	size_t budget = NG_PTR_BUDGET_MS;
	if (ms && (!parse_count(ms, &budget) || budget > NG_PTR_BUDGET_MAX_MS))
		budget = NG_PTR_BUDGET_MS;
	uint8_t(*addrs)[16] = malloc(RESOLVE_MAX * sizeof *addrs);
	char(*names)[NG_PTR_NAME_MAX] = malloc(RESOLVE_MAX * sizeof *names);
	size_t n = addrs && names ? ng_ptr_addresses(q, res, addrs, RESOLVE_MAX) : 0;
	size_t named =
	    ng_ptr_resolve(s->ptr, (const uint8_t(*)[16])addrs, n, (unsigned)budget, names);
	uint64_t sent, ok, failed, refused;
	ng_ptr_counts(s->ptr, &sent, &ok, &failed, &refused);
	fprintf(f,
	        ",\"resolve\":\"on\",\"resolver\":{\"addresses\":%zu,\"named\":%zu,"
	        "\"lookups\":%" PRIu64 ",\"answered\":%" PRIu64 ",\"failed\":%" PRIu64
	        ",\"refused\":%" PRIu64 "},",
	        n, named, sent, ok, failed, refused);
	ng_ptr_put_json(f, (const uint8_t(*)[16])addrs, names, n);
	fputs("}\n", f);
	free(addrs);
	free(names);
}

/* ---- endpoints -------------------------------------------------------- */

static void api_top(ng_http_server *s, const ng_http_req *r, ng_http_resp *out)
{
	params p;
	if (!read_params(s, r, &p, 10, out))
		return;
	const char *field = r->arg(r->conn, "field");
	char err[512];
	if (ng_query_parse_keys(&p.q, field ? field : "srcip", err, sizeof err)) {
		field_error(out, err);
		goto done;
	}
	ng_query_result res;
	if (run_query(s, &p.q, &res, err, sizeof err)) {
		run_error(s, out, err, errno);
		goto done;
	}
	FILE *f = body(out, "application/json");
	ng_output_opts o = json_opts(&p);
	if (f) {
		const char *rv = r->arg(r->conn, "resolve");
		if (rv && !strcmp(rv, "1"))
			write_with_names(s, r, f, &p.q, &res, &o, ng_write_top);
		else
			ng_write_top(f, &p.q, &res, &o);
		fclose(f);
	}
	ng_query_result_free(&res);
	ng_http_observe(s, (mono_ms() - p.t0) * 1000);
done:
	ng_filter_free(p.q.filter);
}

/* The completion of filter values (docs/api.md "Completion"): the top
 * `limit` values of one group-by `field` (or a few: "srcas,srcasname",
 * the first completed, the others its labels) over the range and filter
 * whose text starts with `prefix`, ASCII case-insensitive: a top-N of
 * the query model with q.key_prefix (top.c).  Bounded: a prefix of at
 * most COMPLETE_PREFIX_MAX bytes, at most COMPLETE_LIMIT_MAX values. */
#define COMPLETE_PREFIX_MAX 64
#define COMPLETE_LIMIT_MAX 100
static void api_complete(ng_http_server *s, const ng_http_req *r, ng_http_resp *out)
{
	params p;
	if (!read_params(s, r, &p, 10, out))
		return;
	const char *field = r->arg(r->conn, "field"), *prefix = r->arg(r->conn, "prefix");
	char err[512];
	if (!field || !*field) {
		ng_api_error(out, 400, "missing 'field'",
		             "the field whose values to complete, e.g. field=src_country "
		             "(/api/v1/fields)");
		goto done;
	}
	if (prefix && strlen(prefix) > COMPLETE_PREFIX_MAX) {
		ng_api_error(out, 400, "'prefix' too long",
		             "at most 64 bytes: the start of the value being typed");
		goto done;
	}
	if (p.limit > COMPLETE_LIMIT_MAX) {
		ng_api_error(out, 400, "bad 'limit'", "at most 100 values to complete");
		goto done;
	}
	if (ng_query_parse_keys(&p.q, field, err, sizeof err)) {
		field_error(out, err);
		goto done;
	}
	p.q.key_prefix = prefix;
	ng_query_result res;
	if (run_query(s, &p.q, &res, err, sizeof err)) {
		run_error(s, out, err, errno);
		goto done;
	}
	FILE *f = body(out, "application/json");
	ng_output_opts o = json_opts(&p);
	if (f) {
		ng_write_top(f, &p.q, &res, &o);
		fclose(f);
	}
	ng_query_result_free(&res);
	ng_http_observe(s, (mono_ms() - p.t0) * 1000);
done:
	ng_filter_free(p.q.filter);
}

/* previous=1d|1w (or none) as ms into *ms; false when bad. */
static bool parse_previous(const char *v, uint64_t *ms)
{
	*ms = 0;
	if (!v || !*v || !strcmp(v, "0") || !strcmp(v, "none"))
		return true;
	if (!strcmp(v, "1d"))
		*ms = 86400000;
	else if (!strcmp(v, "1w"))
		*ms = 7 * 86400000ull;
	return *ms != 0;
}

/* bidirectional=0|1 into *on; false when bad. */
static bool parse_flag(const char *v, bool *on)
{
	*on = v && !strcmp(v, "1");
	return !v || !*v || !strcmp(v, "0") || !strcmp(v, "1");
}

/* interval, previous and bidirectional of a series request, and the
 * bound on its points; false with the 400 set. */
static bool series_params(const ng_http_req *r, const params *p, uint64_t *interval, uint64_t *prev,
                          bool *bidir, ng_http_resp *out)
{
	const char *iv = r->arg(r->conn, "interval");
	if (!ng_interval_parse(iv ? iv : "5m", interval)) {
		ng_api_error(out, 400, "bad 'interval'", "30s, 1m, 5m, 1h, 1d, or seconds (≥ 1)");
		return false;
	}
	if (!parse_previous(r->arg(r->conn, "previous"), prev)) {
		ng_api_error(out, 400, "bad 'previous'",
		             "1d (the same range a day earlier), 1w (a week earlier) or none");
		return false;
	}
	if (*prev && (*prev % *interval || *prev > p->q.from_ms)) {
		ng_api_error(out, 400, "'previous' is not a whole number of intervals",
		             "choose an interval that divides a day (30s, 1m, 5m, 1h, 1d)");
		return false;
	}
	if (!parse_flag(r->arg(r->conn, "bidirectional"), bidir)) {
		ng_api_error(out, 400, "bad 'bidirectional'", "0 or 1");
		return false;
	}
	/* the series (and their reverse) and the previous period's total */
	uint64_t buckets = (p->q.to_ms - p->q.from_ms) / *interval;
	uint64_t points = buckets * (p->limit + 1) * (*bidir ? 2 : 1) + (*prev ? buckets : 0);
	if (points > MAX_SERIES_POINTS) {
		char hint[160];
		snprintf(hint, sizeof hint,
		         "at most %d points (intervals × (limit + 1), twice with bidirectional): "
		         "choose a longer interval, a shorter range or a smaller limit",
		         MAX_SERIES_POINTS);
		ng_api_error(out, 400, "too many points: the range holds too many intervals", hint);
		return false;
	}
	return true;
}

static void api_series(ng_http_server *s, const ng_http_req *r, ng_http_resp *out)
{
	params p;
	if (!read_params(s, r, &p, 5, out))
		return;
	const char *field = r->arg(r->conn, "field");
	uint64_t interval = 0, prev = 0;
	bool bidir = false;
	char err[512];
	if (!series_params(r, &p, &interval, &prev, &bidir, out))
		goto done;
	if (field && *field && ng_query_parse_keys(&p.q, field, err, sizeof err)) {
		field_error(out, err);
		goto done;
	}
	ng_series_set se;
	ng_ch_conn conn;
	ng_backend b;
	if (!open_backend(s, &conn, &b, err, sizeof err)) {
		run_error(s, out, err, errno);
		goto done;
	}
	int src = ng_series_run_set_on(&b, &p.q, p.filter_text, interval, bidir, prev, &se, err,
	                               sizeof err);
	ng_ch_close(b.ch);
	if (src) {
		ng_series_set_free(&se);
		run_error(s, out, err, strstr(err, "time limit") ? ETIMEDOUT : errno);
		goto done;
	}
	FILE *f = body(out, "application/json");
	ng_output_opts o = json_opts(&p);
	ng_series_extra x = {.rq = &se.rq,
	                     .rev = se.has_rev ? &se.rev : NULL,
	                     .pq = &se.pq,
	                     .prev = se.has_prev ? &se.prev : NULL,
	                     .prev_ms = se.prev_ms};
	if (f) {
		ng_write_series_ext(f, &p.q, &se.main, &x, &o);
		fclose(f);
	}
	ng_series_set_free(&se);
	ng_http_observe(s, (mono_ms() - p.t0) * 1000);
done:
	ng_filter_free(p.q.filter);
}

/* GET /api/v1/pairs?fields=F1,F2[,F3]: a Sankey of 2 or 3 stages, limit
 * nodes a stage (default 10, at most NG_SANKEY_MAX_N). */
static void api_sankey(ng_http_server *s, params *p, const char *fields, ng_http_resp *out)
{
	char err[512];
	if (p->q.limit > NG_SANKEY_MAX_N) {
		snprintf(err, sizeof err, "with fields=, limit is the nodes a stage: 1 to %d",
		         NG_SANKEY_MAX_N);
		ng_api_error(out, 400, "bad 'limit'", err);
		return;
	}
	if (ng_sankey_parse(&p->q, fields, err, sizeof err)) {
		field_error(out, err);
		return;
	}
	ng_sankey sk;
	ng_ch_conn conn;
	ng_backend b;
	if (!open_backend(s, &conn, &b, err, sizeof err)) {
		run_error(s, out, err, errno);
		return;
	}
	int rc = ng_sankey_run_on(&b, &p->q, &sk, err, sizeof err);
	int e = errno;
	ng_ch_close(b.ch);
	if (rc) {
		run_error(s, out, err, strstr(err, "time limit") ? ETIMEDOUT : e);
		return;
	}
	FILE *f = body(out, "application/json");
	ng_output_opts o = json_opts(p);
	if (f) {
		ng_write_sankey(f, &p->q, &sk, &o);
		fclose(f);
	}
	ng_sankey_free(&sk);
	ng_http_observe(s, (mono_ms() - p->t0) * 1000);
}

static void api_pairs(ng_http_server *s, const ng_http_req *r, ng_http_resp *out)
{
	params p;
	const char *fields = r->arg(r->conn, "fields");
	if (!read_params(s, r, &p, fields ? 10 : 20, out))
		return;
	if (fields) {
		api_sankey(s, &p, fields, out);
		goto done;
	}
	const char *src = r->arg(r->conn, "src"), *dst = r->arg(r->conn, "dst");
	char spec[256], err[512];
	snprintf(spec, sizeof spec, "%s,%s", src ? src : "srcip", dst ? dst : "dstip");
	if (ng_pairs_parse(&p.q, spec, err, sizeof err)) {
		field_error(out, err);
		goto done;
	}
	ng_pairs pr;
	ng_ch_conn conn;
	ng_backend b;
	if (!open_backend(s, &conn, &b, err, sizeof err)) {
		run_error(s, out, err, errno);
		goto done;
	}
	int rc = ng_pairs_run_on(&b, &p.q, &pr, err, sizeof err);
	int e = errno;
	ng_ch_close(b.ch);
	if (rc) {
		run_error(s, out, err, strstr(err, "time limit") ? ETIMEDOUT : e);
		goto done;
	}
	FILE *f = body(out, "application/json");
	ng_output_opts o = json_opts(&p);
	if (f) {
		ng_write_pairs(f, &p.q, &pr, &o);
		fclose(f);
	}
	ng_pairs_free(&pr);
	ng_http_observe(s, (mono_ms() - p.t0) * 1000);
done:
	ng_filter_free(p.q.filter);
}

static void api_flows(ng_http_server *s, const ng_http_req *r, ng_http_resp *out)
{
	params p;
	if (!read_params(s, r, &p, 100, out))
		return;
	const char *fmt = r->arg(r->conn, "format");
	enum ng_format ff = NG_FMT_JSON;
	char err[512];
	if (fmt && (!ng_format_parse(fmt, &ff) || ff == NG_FMT_TABLE)) {
		ng_api_error(out, 400, "bad 'format'", "json, csv or ndjson");
		goto done;
	}
	p.q.limit = p.offset + p.limit;
	ng_query_result res;
	if (run_query(s, &p.q, &res, err, sizeof err)) {
		run_error(s, out, err, errno);
		goto done;
	}
	/* the page: flows [offset, offset + limit) of the listing */
	ng_flow *all = res.flows;
	size_t n = res.nflows;
	size_t skip = p.offset < n ? p.offset : n;
	res.flows = all + skip;
	res.nflows = n - skip;
	p.q.limit = p.limit; /* the page size, as echoed in the JSON */
	FILE *f = body(out, ff == NG_FMT_CSV      ? "text/csv; charset=utf-8"
	                    : ff == NG_FMT_NDJSON ? "application/x-ndjson"
	                                          : "application/json");
	if (f) {
		ng_output_opts o = json_opts(&p);
		o.fmt = ff;
		const char *rv = r->arg(r->conn, "resolve");
		if (ff == NG_FMT_NDJSON)
			ng_json_write_flows(f, res.flows, res.nflows);
		else if (ff == NG_FMT_JSON && rv && !strcmp(rv, "1"))
			write_with_names(s, r, f, &p.q, &res, &o, ng_write_list);
		else
			ng_write_list(f, &p.q, &res, &o);
		fclose(f);
	}
	if (ff != NG_FMT_JSON)
		snprintf(out->disposition, sizeof out->disposition,
		         "attachment; filename=\"flows.%s\"", ff == NG_FMT_CSV ? "csv" : "ndjson");
	res.flows = all;
	res.nflows = n;
	ng_query_result_free(&res);
	ng_http_observe(s, (mono_ms() - p.t0) * 1000);
done:
	ng_filter_free(p.q.filter);
}

/* "key":"2026-11-30T12:00:00.000Z","key_ms":ms ("" for 0). */
static void put_time_kv(FILE *f, const char *key, uint64_t ms)
{
	char t[40];
	fprintf(f, "\"%s\":", key);
	ng_json_put_str(f, ms ? ng_time_format(ms, t) : "");
	fprintf(f, ",\"%s_ms\":%" PRIu64, key, ms);
}

static void api_summary(ng_http_server *s, const ng_http_req *r, ng_http_resp *out)
{
	params p;
	if (!read_params(s, r, &p, 1, out))
		return;
	char err[512];
	/* a group-by counts every matching flow once in its totals; the
	 * groups themselves are not wanted */
	ng_query_parse_keys(&p.q, "proto", err, sizeof err);
	p.q.limit = 1;
	ng_query_result res;
	if (run_query(s, &p.q, &res, err, sizeof err)) {
		run_error(s, out, err, errno);
		goto done;
	}
	FILE *f = body(out, "application/json");
	if (f) {
		double secs = (double)(p.q.to_ms - p.q.from_ms) / 1000.0;
		fputs("{\"filter\":", f);
		ng_json_put_str(f, p.filter_text);
		fputc(',', f);
		put_time_kv(f, "from", p.q.from_ms);
		fputc(',', f);
		put_time_kv(f, "to", p.q.to_ms);
		fprintf(f, ",\"flows\":%" PRIu64 ",\"packets\":%" PRIu64 ",\"bytes\":%" PRIu64 ",",
		        res.flows_total, res.packets_total, res.bytes_total);
		put_time_kv(f, "first", res.first);
		fputc(',', f);
		put_time_kv(f, "last", res.last);
		fprintf(
		    f,
		    ",\"bps\":%.3f,\"pps\":%.3f,\"fps\":%.3f,\"scan\":{\"segments_read\":%" PRIu64
		    ",\"segments_skipped\":%" PRIu64 ",\"segments_rollup\":%" PRIu64
		    ",\"rows_scanned\":%" PRIu64 ",\"errors\":%" PRIu64
		    ",\"segments_damaged\":%" PRIu64 "},\"quarantined\":%" PRIu64
		    ",\"elapsed_s\":%.6f}\n",
		    res.bytes_total * 8.0 / secs, res.packets_total / secs, res.flows_total / secs,
		    res.scan.segments_read, res.scan.segments_skipped, res.scan.segments_rollup,
		    res.scan.rows_scanned, res.scan.errors, res.scan.segments_damaged,
		    ng_store_quarantined(s->store_dir, NULL), res.elapsed_s);
		fclose(f);
	}
	ng_query_result_free(&res);
	ng_http_observe(s, (mono_ms() - p.t0) * 1000);
done:
	ng_filter_free(p.q.filter);
}

/* ---- counters (sFlow counter samples) ---------------------------------- */

typedef struct ctr_ctx {
	FILE *f;
	size_t n, limit;
	uint64_t total;
} ctr_ctx;

static int on_counters(const ng_counter_sample *cs, size_t n, void *arg)
{
	ctr_ctx *c = arg;
	for (size_t i = 0; i < n; i++) {
		c->total++;
		if (c->n >= c->limit)
			continue;
		const ng_counter_sample *x = &cs[i];
		char a[NG_ADDR_STRLEN], g[NG_ADDR_STRLEN], t[40];
		fprintf(c->f,
		        "%s{\"time\":\"%s\",\"time_ms\":%" PRIu64 ",\"exporter\":\"%s\","
		        "\"agent\":\"%s\",\"sub_agent\":%" PRIu32 ",\"source_type\":%" PRIu32
		        ",\"source_index\":%" PRIu32 ",\"parts\":%" PRIu32 ",\"if_index\":%" PRIu32
		        ",\"if_speed\":%" PRIu64 ",\"if_status\":%" PRIu32 ",\"in_octets\":%" PRIu64
		        ",\"out_octets\":%" PRIu64 ",\"in_errors\":%" PRIu32
		        ",\"out_errors\":%" PRIu32 ",\"in_discards\":%" PRIu32
		        ",\"out_discards\":%" PRIu32 "}",
		        c->n ? "," : "", ng_time_format(x->time_received, t), x->time_received,
		        ng_addr_format(x->exporter, a), ng_addr_format(x->agent, g), x->sub_agent,
		        x->source_type, x->source_index, x->parts, x->if_index, x->if_speed,
		        x->if_status, x->in_octets, x->out_octets, x->in_errors, x->out_errors,
		        x->in_discards, x->out_discards);
		c->n++;
	}
	return 0;
}

static void api_counters(ng_http_server *s, const ng_http_req *r, ng_http_resp *out)
{
	params p;
	if (!read_params(s, r, &p, 1000, out))
		return;
	FILE *f = body(out, "application/json");
	if (!f)
		goto done;
	ctr_ctx c = {.f = f, .limit = p.limit};
	uint64_t errors = 0;
	fputs("{\"samples\":[", f);
	ng_counter_scan(s->store_dir, p.q.from_ms, p.q.to_ms, on_counters, &c, &errors);
	fprintf(f, "],\"total\":%" PRIu64 ",\"returned\":%zu,\"errors\":%" PRIu64 "}\n", c.total,
	        c.n, errors);
	fclose(f);
	ng_http_observe(s, (mono_ms() - p.t0) * 1000);
done:
	ng_filter_free(p.q.filter);
}

/* ---- exporters ---------------------------------------------------------- */

/* One exporter: its row as in STORE/state/exporters.json (store/exporters.h;
 * only the errors that are not zero) and its health: silent when not heard
 * from in 5 minutes, degraded with sequence loss, decode errors or template
 * misses not recovered, else ok. */
static void put_exporter(FILE *f, const ng_exporter_stats *e, uint64_t now)
{
	const char *health =
	    now > e->last_seen + 300000                                                ? "silent"
	    : (e->lost || ng_exporter_errors_total(e) || e->template_misses > e->held) ? "degraded"
	                                                                               : "ok";
	fputc('{', f);
	ng_exporters_put_row(f, e, NG_EXPORTERS_NONZERO_ERRORS);
	fputs(",\"health\":", f);
	ng_json_put_str(f, health);
	fputc('}', f);
}

/* Takes a snapshot; false with the answer set when none can be had. */
static bool snapshot(ng_http_server *s, ng_http_exporters *x, ng_http_resp *out)
{
	memset(x, 0, sizeof *x);
	char err[512] = "no exporter counters";
	if (!s->exporters || s->exporters(s->exporters_arg, x, err, sizeof err) < 0) {
		ng_api_error(out, 503, err,
		             "exporter counters come from the running collector, or from "
		             "STORE/state/exporters.json once it has written it");
		return false;
	}
	return true;
}

/* Most records first, the others row last (qsort). */
static int rows_by_records(const void *pa, const void *pb)
{
	const ng_exporter_stats *a = pa, *b = pb;
	bool oa = ng_exporter_is_others(a), ob = ng_exporter_is_others(b);
	if (oa != ob)
		return oa ? 1 : -1;
	if (a->records != b->records)
		return a->records > b->records ? -1 : 1;
	return a->packets == b->packets ? 0 : a->packets > b->packets ? -1 : 1;
}

/* ?limit= and ?offset= of /api/v1/exporters into *limit, *offset (all
 * rows from 0 when absent).  False with the 400 set. */
static bool exporter_page(const ng_http_req *r, size_t *limit, size_t *offset, ng_http_resp *out)
{
	const char *lim = r->arg(r->conn, "limit"), *off = r->arg(r->conn, "offset");
	*limit = SIZE_MAX;
	*offset = 0;
	if ((lim && (!parse_count(lim, limit) || !*limit)) || (off && !parse_count(off, offset))) {
		ng_api_error(out, 400, "bad 'limit' or 'offset'",
		             "limit is a count from 1, offset a count from 0");
		return false;
	}
	return true;
}

/* The rows, most records first: `limit` from `offset`, with the total
 * and, when some exporters are summed in the others row, a note. */
static void put_exporter_rows(FILE *f, ng_http_exporters *x, size_t limit, size_t offset,
                              uint64_t now)
{
	qsort(x->rows, x->n, sizeof *x->rows, rows_by_records);
	bool others = x->n && ng_exporter_is_others(&x->rows[x->n - 1]);
	size_t from = offset < x->n ? offset : x->n;
	size_t to = x->n - from > limit ? from + limit : x->n;
	fprintf(f, ",\"total\":%zu,\"offset\":%zu,\"returned\":%zu,", x->n, from, to - from);
	if (others)
		fputs("\"note\":\"the row with protocol others sums the exporters past "
		      "limits.listed_exporters (by records) and those whose state was evicted "
		      "(docs/security.md)\",",
		      f);
	fputs("\"exporters\":[", f);
	for (size_t i = from; i < to; i++) {
		if (i > from)
			fputc(',', f);
		put_exporter(f, &x->rows[i], now);
	}
	fputs("]}\n", f);
}

static void api_exporters(ng_http_server *s, const ng_http_req *r, ng_http_resp *out)
{
	size_t limit, offset;
	if (!exporter_page(r, &limit, &offset, out))
		return;
	if (s->ch && !s->exporters) { /* serve --clickhouse: the exporters ClickHouse holds */
		char err[512];
		ng_ch_conn conn;
		ng_backend b;
		int rc = open_backend(s, &conn, &b, err, sizeof err)
		             ? ng_api_exporters_ch(s, b.ch, limit, offset, out, err, sizeof err)
		             : -1;
		int e = errno;
		ng_ch_close(b.ch);
		if (rc < 0)
			run_error(s, out, err, e);
		return;
	}
	ng_http_exporters x;
	if (!snapshot(s, &x, out))
		return;
	FILE *f = body(out, "application/json");
	uint64_t now = ng_now_ms();
	if (f) {
		fprintf(f, "{\"live\":%s,", x.live ? "true" : "false");
		put_time_kv(f, "updated", x.updated_ms ? x.updated_ms : now);
		fputc(',', f);
		put_time_kv(f, "started", x.started_ms);
		fputc(',', f);
		ng_exporters_put_listener(f, &x.listener);
		fputc(',', f);
		ng_exporters_put_store(f, &x.store);
		fputc(',', f);
		if (x.has_clickhouse) {
			ng_exporters_put_clickhouse(f, &x.clickhouse);
			fputc(',', f);
		}
		ng_exporters_put_limits(f, &x.limits);
		if (s->flow_listen)
			fprintf(f, ",\"listen\":%s", s->flow_listen);
		ng_exporters_put_workers(f, x.nworkers, x.workers);
		if (s->snmp_json) { /* the SNMP poller's agents (docs/api.md) */
			fputc(',', f);
			s->snmp_json(s->snmp_arg, f);
		}
		put_exporter_rows(f, &x, limit, offset, now);
		fclose(f);
	}
	free(x.rows);
}

/* ---- fields ------------------------------------------------------------ */

static const char *type_name(enum ng_field_type t)
{
	static const char *names[] = {"u8", "u16", "u32", "u64", "time", "addr", "mac", "string"};
	return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "?";
}

static void api_fields(ng_http_server *s, ng_http_resp *out)
{
	FILE *f = body(out, "application/json");
	if (!f)
		return;
	fputs("{\"fields\":[", f);
	for (int i = 0; i < NG_FIELD_COUNT; i++) {
		const ng_field *x = &ng_fields[i];
		fprintf(f, "%s{\"name\":", i ? "," : "");
		ng_json_put_str(f, x->name);
		fputs(",\"short\":", f);
		if (x->short_name)
			ng_json_put_str(f, x->short_name);
		else
			fputs("null", f);
		fprintf(f, ",\"type\":\"%s\",\"doc\":", type_name(x->type));
		ng_json_put_str(f, x->doc ? x->doc : "");
		fputc('}', f);
	}
	/* the words that start a filter term, for the filter box's completion */
	fputs("],\"filter\":[", f);
	const char *doc, *w;
	bool sided;
	for (size_t i = 0; (w = ng_filter_keyword(i, &doc, &sided)); i++) {
		fprintf(f, "%s{\"word\":", i ? "," : "");
		ng_json_put_str(f, w);
		fputs(",\"doc\":", f);
		ng_json_put_str(f, doc ? doc : "");
		fprintf(f, ",\"sided\":%s}", sided ? "true" : "false");
	}
	fputs("],\"either\":[\"ip\",\"port\",\"as\",\"if\",\"mask\",\"vlan\",\"provider\","
	      "\"boundary\",\"connectivity\"],"
	      "\"composite\":[\"conv\"],"
	      "\"orders\":[\"flows\",\"packets\",\"bytes\",\"pps\",\"bps\",\"bpp\"],",
	      f);
	/* what the enrichment data's licences ask to be shown with it (DB-IP
	 * Lite and ASN Lite: CC BY 4.0, "IP Geolocation by DB-IP" linking to
	 * db-ip.com, their download pages) */
	fputs(s->attribution_dbip
	          ? "\"attribution\":[{\"text\":\"IP Geolocation by DB-IP\","
	            "\"url\":\"https://db-ip.com\",\"licence\":\"CC BY 4.0\"},"
	            "{\"text\":\"ASN data: RouteViews, NRO, DB-IP (ip-location-db)\","
	            "\"url\":\"https://github.com/sapics/ip-location-db\",\"licence\":\"CC BY "
	            "4.0\"}]}\n"
	          : "\"attribution\":[]}\n",
	      f);
	fclose(f);
}

/* ---- /metrics ---------------------------------------------------------- */

/* The labels of one exporter and domain: exporter="…",domain="…" (an
 * address needs no escaping). */
static void put_labels(FILE *f, const ng_exporter_stats *s)
{
	if (ng_exporter_is_others(s)) {
		fputs("exporter=\"others\",domain=\"all\"", f);
		return;
	}
	char a[NG_ADDR_STRLEN];
	fprintf(f, "exporter=\"%s\",domain=\"%" PRIu32 "\"", ng_addr_format(s->exporter, a),
	        s->domain);
}

/* One counter of NG_EXPORTER_COUNTERS for every exporter, named and typed
 * as its kind says (decode/decoder.h): HELP, TYPE, a sample per exporter
 * (per error not zero for ERRORS). */
static void metric_counter(FILE *f, const ng_http_exporters *x, enum ng_exporter_counter_id id)
{
	const ng_exporter_counter *c = &ng_exporter_counters[id];
	static const char *const suffix[] = {
	    [NG_XK_COUNTER] = "_total",
	    [NG_XK_ERRORS] = "_total",
	    [NG_XK_TIME_MIN] = "_timestamp_seconds",
	    [NG_XK_TIME_MAX] = "_timestamp_seconds",
	    [NG_XK_GAUGE] = "",
	    [NG_XK_SOURCE] = "",
	};
	bool counter = c->kind == NG_XK_COUNTER || c->kind == NG_XK_ERRORS;
	fprintf(f, "# HELP nagare_exporter_%s%s %s\n# TYPE nagare_exporter_%s%s %s\n", c->name,
	        suffix[c->kind], c->doc, c->name, suffix[c->kind], counter ? "counter" : "gauge");
	for (size_t i = 0; i < x->n; i++) {
		const ng_exporter_stats *s = &x->rows[i];
		if (c->kind == NG_XK_ERRORS) {
			for (int e = 0; e < NG_DERR_COUNT; e++) {
				if (!s->errors[e])
					continue;
				fprintf(f, "nagare_exporter_%s_total{", c->name);
				put_labels(f, s);
				fprintf(f, ",error=\"%s\"} %" PRIu64 "\n", ng_decode_error_name(e),
				        s->errors[e]);
			}
			continue;
		}
		uint64_t v = ng_exporter_counter_get(s, id);
		fprintf(f, "nagare_exporter_%s%s{", c->name, suffix[c->kind]);
		put_labels(f, s);
		if (c->kind == NG_XK_SOURCE)
			fprintf(f, ",source=\"%s\"} 1\n", ng_sampling_source_name((unsigned)v));
		else if (c->kind == NG_XK_TIME_MIN || c->kind == NG_XK_TIME_MAX)
			fprintf(f, "} %" PRIu64 ".%03u\n", v / 1000, (unsigned)(v % 1000));
		else
			fprintf(f, "} %" PRIu64 "\n", v);
	}
}

/* The receive workers' counters (collect --workers), labelled by worker;
 * nothing with one receive thread. */
static void metric_workers(FILE *f, const ng_http_exporters *x)
{
	static const struct {
		const char *name, *help;
		size_t off;
	} m[] = {
	    {"records", "records a receive worker handed to the store this run",
	     offsetof(ng_worker_stats, records)},
	    {"datagrams", "datagrams a receive worker read this run",
	     offsetof(ng_worker_stats, datagrams)},
	    {"drops", "datagrams the kernel dropped at a receive worker's sockets this run",
	     offsetof(ng_worker_stats, drops)},
	};
	if (x->nworkers < 2)
		return;
	for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
		fprintf(f,
		        "# HELP nagare_worker_%s_total %s\n# TYPE nagare_worker_%s_total counter\n",
		        m[i].name, m[i].help, m[i].name);
		for (unsigned w = 0; w < x->nworkers && w < NG_EXPORTERS_WORKERS_MAX; w++) {
			uint64_t v;
			memcpy(&v, (const char *)&x->workers[w] + m[i].off, sizeof v);
			fprintf(f, "nagare_worker_%s_total{worker=\"%u\"} %" PRIu64 "\n", m[i].name,
			        w, v);
		}
	}
}
/* The bound counters (NG_LIMIT_COUNTERS): nagare_limit_<name>_total for
 * evictions, nagare_limit_<name> for what is held. */
static void metric_limits(FILE *f, const ng_limit_stats *l)
{
	for (int i = 0; i < NG_LC_COUNT; i++) {
		const ng_limit_counter *c = &ng_limit_counters[i];
		const char *sfx = c->gauge ? "" : "_total";
		fprintf(f, "# HELP nagare_limit_%s%s %s\n# TYPE nagare_limit_%s%s %s\n", c->name,
		        sfx, c->doc, c->name, sfx, c->gauge ? "gauge" : "counter");
		fprintf(f, "nagare_limit_%s%s %" PRIu64 "\n", c->name, sfx, ng_limit_stat(l, i));
	}
}

/* Per exporter every counter of the list — the s->metrics_exporters with
 * the most records, then one "others" series for the rest (so the series
 * are bounded whatever the number of exporters) — then the bounds', the
 * listener's and the store writer's own. */
static void metric_exporters(ng_http_server *s, FILE *f, ng_http_exporters *x)
{
	ng_exporters_file capped = {.rows = x->rows, .n = x->n};
	ng_exporters_cap(&capped, s->metrics_exporters);
	x->rows = capped.rows;
	x->n = capped.n;
	for (int id = 0; id < NG_XC_COUNT; id++)
		metric_counter(f, x, id);
	metric_limits(f, &x->limits);
	metric_workers(f, x);
	/* ClickHouse (core/sinkstats.h): counters end in _total */
#define X(name, kind, doc)                                                                         \
	if (x->has_clickhouse)                                                                     \
		fprintf(f,                                                                         \
		        "# HELP nagare_clickhouse_%s%s " doc                                       \
		        "\n# TYPE nagare_clickhouse_%s%s " #kind                                   \
		        "\nnagare_clickhouse_%s%s %" PRIu64 "\n",                                  \
		        #name, !strcmp(#kind, "counter") ? "_total" : "", #name,                   \
		        !strcmp(#kind, "counter") ? "_total" : "", #name,                          \
		        !strcmp(#kind, "counter") ? "_total" : "", x->clickhouse.name);
	NG_CH_SINK_COUNTERS(X)
#undef X
	/* TCP/SCTP connections (the other listener counters keep their names
	 * below) */
#define X(field, doc)                                                                              \
	if (!strncmp(#field, "conns_", 6))                                                         \
		fprintf(f,                                                                         \
		        "# HELP nagare_listener_" #field "_total " doc "\n"                        \
		        "# TYPE nagare_listener_" #field "_total counter\n"                        \
		        "nagare_listener_" #field "_total %" PRIu64 "\n",                          \
		        x->listener.field);
	NG_LISTENER_COUNTERS(X)
#undef X
	fprintf(f,
	        "# HELP nagare_socket_drops_total datagrams dropped by the kernel\n"
	        "# TYPE nagare_socket_drops_total counter\nnagare_socket_drops_total %" PRIu64 "\n"
	        "# HELP nagare_datagrams_total datagrams received\n"
	        "# TYPE nagare_datagrams_total counter\nnagare_datagrams_total %" PRIu64 "\n"
	        "# HELP nagare_store_rows_total rows stored (this run)\n"
	        "# TYPE nagare_store_rows_total counter\nnagare_store_rows_total %" PRIu64 "\n"
	        "# HELP nagare_store_segments_written_total segments written (this run)\n"
	        "# TYPE nagare_store_segments_written_total counter\n"
	        "nagare_store_segments_written_total %" PRIu64 "\n"
	        "# HELP nagare_store_rows_dropped_total rows the store could not take (this run)\n"
	        "# TYPE nagare_store_rows_dropped_total counter\n"
	        "nagare_store_rows_dropped_total %" PRIu64 "\n"
	        "# HELP nagare_store_rows_deferred_total rows a flush left for the next: more "
	        "than 256 hours of flow times (this run)\n"
	        "# TYPE nagare_store_rows_deferred_total counter\n"
	        "nagare_store_rows_deferred_total %" PRIu64 "\n",
	        x->listener.drops, x->listener.datagrams, x->store.rows, x->store.segments,
	        x->store.dropped, x->store.deferred);
}

/* ---- the store's size, for /metrics ------------------------------------
 *
 * Segments and bytes under STORE/flows take a directory walk: 0.1 s for a
 * few thousand segments, 13 s for a store a flood scattered into 141 507
 * files.  /metrics never walks: it reads the figures the server's own
 * thread last found, and wakes that thread when they are older than
 * NG_HTTP_STORE_STATS_MS (so at most one walk runs at a time, at most one
 * every NG_HTTP_STORE_STATS_MS, and none while nobody asks).  The first
 * request after start waits for the first walk; the age of the figures is
 * itself a gauge (nagare_store_stats_age_seconds). */
#include <ftw.h>
static _Thread_local uint64_t walk_segs, walk_bytes;
static int on_file(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)ftw;
	size_t l = strlen(path);
	if (type == FTW_F && l > 4 && !strcmp(path + l - 4, ".seg")) {
		walk_segs++;
		walk_bytes += (uint64_t)st->st_size;
	}
	return 0;
}

/* The walker thread: waits to be wanted, walks, publishes. */
static void *stats_thread(void *arg)
{
	ng_http_server *s = arg;
	ng_http_store_stats *t = &s->sstats;
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/flows", s->store_dir);
	pthread_mutex_lock(&t->mu);
	for (;;) {
		while (!t->stop && !t->wanted)
			pthread_cond_wait(&t->cv, &t->mu);
		if (t->stop)
			break;
		pthread_mutex_unlock(&t->mu);
		uint64_t t0 = mono_ms();
		walk_segs = walk_bytes = 0;
		nftw(dir, on_file, 16, FTW_PHYS);
		const uint64_t quarantined = ng_store_quarantined(s->store_dir, NULL);
		const uint64_t damaged = ng_store_damaged_present();
		uint64_t t1 = mono_ms();
		pthread_mutex_lock(&t->mu);
		t->quarantined = quarantined;
		t->damaged = damaged;
		t->segments = walk_segs;
		t->bytes = walk_bytes;
		t->walked_ms = t1;
		t->walk_us = (t1 - t0) * 1000;
		t->valid = true;
		t->wanted = false;
		pthread_cond_broadcast(&t->cv);
	}
	pthread_mutex_unlock(&t->mu);
	return NULL;
}

int ng_http_store_stats_start(ng_http_server *s)
{
	ng_http_store_stats *t = &s->sstats;
	pthread_mutex_init(&t->mu, NULL);
	pthread_cond_init(&t->cv, NULL);
	if (pthread_create(&t->thread, NULL, stats_thread, s)) {
		pthread_cond_destroy(&t->cv);
		pthread_mutex_destroy(&t->mu);
		return -1;
	}
	t->started = true;
	return 0;
}

void ng_http_store_stats_stop(ng_http_server *s)
{
	ng_http_store_stats *t = &s->sstats;
	if (!t->started)
		return;
	pthread_mutex_lock(&t->mu);
	t->stop = true;
	pthread_cond_broadcast(&t->cv);
	pthread_mutex_unlock(&t->mu);
	pthread_join(t->thread, NULL);
	pthread_cond_destroy(&t->cv);
	pthread_mutex_destroy(&t->mu);
	t->started = false;
}

/* The last figures (waiting for the first walk), waking the walker when
 * they are stale.  *age_ms is their age. */
static void store_stats(ng_http_server *s, uint64_t *segs, uint64_t *bytes, uint64_t *age_ms,
                        uint64_t *quarantined, uint64_t *damaged)
{
	ng_http_store_stats *t = &s->sstats;
	pthread_mutex_lock(&t->mu);
	uint64_t now = mono_ms();
	if (!t->valid || now - t->walked_ms >= NG_HTTP_STORE_STATS_MS) {
		t->wanted = true;
		pthread_cond_broadcast(&t->cv);
	}
	while (!t->valid && !t->stop)
		pthread_cond_wait(&t->cv, &t->mu);
	*segs = t->segments;
	*bytes = t->bytes;
	*quarantined = t->quarantined;
	*damaged = t->damaged;
	*age_ms = mono_ms() - t->walked_ms;
	pthread_mutex_unlock(&t->mu);
}

/* The server's own counters: requests, refusals, connections. */
static void metric_server(ng_http_server *s, FILE *f)
{
	static const char *const why[NG_REFUSE_COUNT] = {"host", "origin"};
	fputs("# HELP nagare_http_refused_total requests refused before any handler: a Host "
	      "not served (DNS rebinding) or a cross-origin request\n"
	      "# TYPE nagare_http_refused_total counter\n",
	      f);
	for (int i = 0; i < NG_REFUSE_COUNT; i++)
		fprintf(f, "nagare_http_refused_total{reason=\"%s\"} %" PRIu64 "\n", why[i],
		        (uint64_t)s->m.refused[i]);
	fprintf(f,
	        "# HELP nagare_http_connections connections open\n"
	        "# TYPE nagare_http_connections gauge\nnagare_http_connections %u\n"
	        "# HELP nagare_http_connections_evicted_total idle connections closed to make "
	        "room for a new one\n# TYPE nagare_http_connections_evicted_total counter\n"
	        "nagare_http_connections_evicted_total %" PRIu64 "\n"
	        "# HELP nagare_http_connections_expired_total connections closed idle past the "
	        "idle time-out\n# TYPE nagare_http_connections_expired_total counter\n"
	        "nagare_http_connections_expired_total %" PRIu64 "\n"
	        "# HELP nagare_http_connections_refused_total new connections refused: every "
	        "connection busy at a limit\n# TYPE nagare_http_connections_refused_total "
	        "counter\nnagare_http_connections_refused_total %" PRIu64 "\n",
	        ng_http_conns_open(s), (uint64_t)s->m.conns_evicted, (uint64_t)s->m.conns_expired,
	        (uint64_t)s->m.conns_refused);
}

static void api_metrics(ng_http_server *s, ng_http_resp *out)
{
	FILE *f = body(out, "text/plain; version=0.0.4; charset=utf-8");
	if (!f)
		return;
	ng_http_exporters x;
	char err[256];
	memset(&x, 0, sizeof x);
	if (s->exporters && s->exporters(s->exporters_arg, &x, err, sizeof err) == 0) {
		metric_exporters(s, f, &x);
		free(x.rows);
	}
	uint64_t segs, bytes, age, quarantined, damaged;
	store_stats(s, &segs, &bytes, &age, &quarantined, &damaged);
	fprintf(f,
	        "# HELP nagare_store_segments segments in the store\n# TYPE nagare_store_segments "
	        "gauge\nnagare_store_segments %" PRIu64 "\n"
	        "# HELP nagare_store_bytes bytes of segments in the store\n"
	        "# TYPE nagare_store_bytes gauge\nnagare_store_bytes %" PRIu64 "\n"
	        "# HELP nagare_store_damaged_segments damaged segments this process found "
	        "(queries, maintenance) still in the store: every query skips them; "
	        "`nagare fsck` moves them aside\n# TYPE nagare_store_damaged_segments gauge\n"
	        "nagare_store_damaged_segments %" PRIu64 "\n"
	        "# HELP nagare_store_quarantined_files files `nagare fsck` moved to "
	        "DIR/quarantine\n# TYPE nagare_store_quarantined_files gauge\n"
	        "nagare_store_quarantined_files %" PRIu64 "\n"
	        "# HELP nagare_store_stats_age_seconds age of the four figures above (counted "
	        "at most every %d s)\n# TYPE nagare_store_stats_age_seconds gauge\n"
	        "nagare_store_stats_age_seconds %.3f\n",
	        segs, bytes, damaged, quarantined, NG_HTTP_STORE_STATS_MS / 1000,
	        (double)age / 1000);
	ng_frame_cache_stats fc;
	ng_frame_cache_get_stats(&fc);
	fprintf(f,
	        "# HELP nagare_query_cache_hits_total column blocks the query cache held "
	        "(store/framecache.h)\n# TYPE nagare_query_cache_hits_total counter\n"
	        "nagare_query_cache_hits_total %" PRIu64 "\n"
	        "# HELP nagare_query_cache_misses_total column blocks inflated from the segment\n"
	        "# TYPE nagare_query_cache_misses_total counter\n"
	        "nagare_query_cache_misses_total %" PRIu64 "\n"
	        "# HELP nagare_query_cache_evictions_total blocks evicted for newer ones\n"
	        "# TYPE nagare_query_cache_evictions_total counter\n"
	        "nagare_query_cache_evictions_total %" PRIu64 "\n"
	        "# HELP nagare_query_cache_bytes inflated bytes held (of "
	        "nagare_query_cache_max_bytes)\n# TYPE nagare_query_cache_bytes gauge\n"
	        "nagare_query_cache_bytes %" PRIu64 "\n"
	        "# HELP nagare_query_cache_max_bytes the bound (--http-cache; 0: off)\n"
	        "# TYPE nagare_query_cache_max_bytes gauge\n"
	        "nagare_query_cache_max_bytes %" PRIu64 "\n",
	        fc.hits, fc.misses, fc.evictions, fc.bytes, fc.max_bytes);
	metric_server(s, f);
	fprintf(
	    f,
	    "# HELP nagare_http_requests_total HTTP requests\n# TYPE nagare_http_requests_total "
	    "counter\nnagare_http_requests_total %" PRIu64 "\n"
	    "# HELP nagare_http_unauthorized_total requests refused for a missing or wrong "
	    "token\n# TYPE nagare_http_unauthorized_total counter\n"
	    "nagare_http_unauthorized_total %" PRIu64 "\n"
	    "# HELP nagare_query_errors_total queries that failed\n"
	    "# TYPE nagare_query_errors_total counter\nnagare_query_errors_total %" PRIu64 "\n"
	    "# HELP nagare_query_timeouts_total queries stopped at the time limit\n"
	    "# TYPE nagare_query_timeouts_total counter\nnagare_query_timeouts_total %" PRIu64
	    "\n# HELP nagare_query_duration_seconds API query latency\n"
	    "# TYPE nagare_query_duration_seconds histogram\n",
	    (uint64_t)s->m.requests, (uint64_t)s->m.unauthorized, (uint64_t)s->m.query_errors,
	    (uint64_t)s->m.timeouts);
	uint64_t cum = 0;
	for (int i = 0; i <= NG_HTTP_NBUCKETS; i++) {
		cum += s->m.lat_bucket[i];
		if (i < NG_HTTP_NBUCKETS)
			fprintf(f, "nagare_query_duration_seconds_bucket{le=\"%g\"} %" PRIu64 "\n",
			        ng_http_buckets[i], cum);
		else
			fprintf(f,
			        "nagare_query_duration_seconds_bucket{le=\"+Inf\"} %" PRIu64 "\n",
			        cum);
	}
	fprintf(f,
	        "nagare_query_duration_seconds_sum %.6f\nnagare_query_duration_seconds_count "
	        "%" PRIu64 "\n",
	        (double)s->m.lat_sum_us / 1e6, (uint64_t)s->m.queries);
	fclose(f);
}

/* ---- static pages ------------------------------------------------------ */

static const char no_dashboards[] =
    "<!doctype html><html><head><meta charset=\"utf-8\"><title>nagare</title></head>"
    "<body style=\"font-family:sans-serif;max-width:40em;margin:2em auto\">"
    "<h1>nagare</h1><p>The dashboards were not built into this binary.</p>"
    "<p>Build them with <code>cd web &amp;&amp; npm ci &amp;&amp; npm run build</code>, "
    "then rebuild nagare (cmake --build build): the assets are embedded at build "
    "time.</p><p>The JSON API works without them: <a href=\"/api/v1/summary\">/api/v1/"
    "summary</a>, <a href=\"/api/v1/fields\">/api/v1/fields</a>, <a href=\"/metrics\">"
    "/metrics</a> (docs/api.md).</p></body></html>\n";

static void serve_static(const ng_http_req *r, ng_http_resp *out)
{
	const ng_asset *a = ng_http_find_asset(r->path);
	if (a) {
		out->static_body = a->data;
		out->len = a->len;
		out->ctype = a->content_type;
		return;
	}
	if (!strcmp(r->path, "/") || !strcmp(r->path, "/index.html")) {
		out->static_body = (const unsigned char *)no_dashboards;
		out->len = sizeof no_dashboards - 1;
		out->ctype = "text/html; charset=utf-8";
		return;
	}
	/* a client-side route of the dashboards: their index page */
	if (ng_http_asset_count() && !strchr(r->path + 1, '.') &&
	    (a = ng_http_find_asset("/index.html"))) {
		out->static_body = a->data;
		out->len = a->len;
		out->ctype = a->content_type;
		return;
	}
	ng_api_error(out, 404, "not found", "the API is under /api/v1/ (docs/api.md)");
}

/* Waits for a query slot until the time limit.  False (503 set) when none
 * came free. */
static bool enter_gate(ng_http_server *s, ng_http_resp *out)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += s->timeout_ms / 1000;
	ts.tv_nsec += (long)(s->timeout_ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	while (sem_timedwait(&s->qgate, &ts) < 0)
		if (errno != EINTR) {
			atomic_fetch_add(&s->m.timeouts, 1);
			ng_api_error(out, 503, "busy: every query slot stayed taken",
			             "other queries are running; try again");
			return false;
		}
	return true;
}

static bool is_query(const char *p)
{
	static const char *q[] = {"/api/v1/top",     "/api/v1/series",  "/api/v1/pairs",
	                          "/api/v1/flows",   "/api/v1/summary", "/api/v1/counters",
	                          "/api/v1/complete"};
	for (size_t i = 0; i < sizeof q / sizeof q[0]; i++)
		if (!strcmp(p, q[i]))
			return true;
	return false;
}

static void dispatch(ng_http_server *s, const ng_http_req *r, ng_http_resp *out);

void ng_api_handle(ng_http_server *s, const ng_http_req *r, ng_http_resp *out)
{
	out->status = 200;
	if (!is_query(r->path)) {
		dispatch(s, r, out);
		return;
	}
	if (!enter_gate(s, out))
		return;
	dispatch(s, r, out);
	sem_post(&s->qgate);
}

static void dispatch(ng_http_server *s, const ng_http_req *r, ng_http_resp *out)
{
	const char *p = r->path;
	if (!strcmp(p, "/healthz")) {
		out->body = strdup("ok\n");
		out->len = out->body ? 3 : 0;
		out->ctype = "text/plain";
	} else if (!strcmp(p, "/metrics")) {
		api_metrics(s, out);
	} else if (!strcmp(p, "/api/v1/top")) {
		api_top(s, r, out);
	} else if (!strcmp(p, "/api/v1/complete")) {
		api_complete(s, r, out);
	} else if (!strcmp(p, "/api/v1/series")) {
		api_series(s, r, out);
	} else if (!strcmp(p, "/api/v1/pairs")) {
		api_pairs(s, r, out);
	} else if (!strcmp(p, "/api/v1/flows")) {
		api_flows(s, r, out);
	} else if (!strcmp(p, "/api/v1/summary")) {
		api_summary(s, r, out);
	} else if (!strcmp(p, "/api/v1/counters")) {
		api_counters(s, r, out);
	} else if (!strcmp(p, "/api/v1/exporters")) {
		api_exporters(s, r, out);
	} else if (!strcmp(p, "/api/v1/fields")) {
		api_fields(s, out);
	} else if (!strncmp(p, "/api/", 5)) {
		ng_api_error(
		    out, 404, "unknown endpoint",
		    "top, complete, series, pairs, flows, summary, counters, exporters, fields, "
		    "views under /api/v1/ (docs/api.md)");
	} else {
		serve_static(r, out);
	}
}
