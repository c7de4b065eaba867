/*
 * exporters_ch.c — GET /api/v1/exporters from ClickHouse (http_int.h
 * ng_api_exporters_ch): what `nagare serve --clickhouse URL` answers,
 * with no collector's counters on its host, from the tables nagare's
 * schema makes (clickhouse/schema.h):
 *
 *   DB.flows_1h    one row per (exporter, observation domain, export
 *                  protocol): the flows stored ("records"), their packets
 *                  and bytes ("flow_packets", "flow_bytes"), the last
 *                  sampling rate and its source, the last exporter name
 *   DB.exporters   the last time a flow of the exporter was received
 *   DB.interfaces  the exporter's interfaces with their names
 *
 * The JSON is the embedded answer's (docs/api.md), with "source":
 * "clickhouse"; what only a running collector counts (export datagrams
 * and their bytes, templates, sequence loss, decode errors, the
 * listener's and store's counters, first seen) is null.  Every answer
 * is read as RowBinary (ClickHouse docs, "Formats": RowBinary): UInt64
 * little-endian (the statements cast every number to it), FixedString(16)
 * or IPv6 as 16 bytes, String as a LEB128 length and its bytes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clickhouse/client.h"
#include "core/addr.h"
#include "core/field.h"
#include "core/json.h"
#include "core/timefmt.h"
#include "decode/decoder.h"
#include "http/http_int.h"
#include "store/exporters.h"

/* Rows read at most from each table: past them an answer is cut (and
 * says so in "note"). */
#define XROWS_MAX 100000
#define IFROWS_MAX 200000

typedef struct xrow {
	uint8_t exporter[16];
	uint64_t domain, version, records, packets, bytes, sampling_rate, sampling_source;
	uint64_t last_seen; /* ms; 0: not in DB.exporters */
	char *name;         /* malloc'd, NUL-terminated */
} xrow;

typedef struct ifrow {
	uint8_t exporter[16];
	uint64_t if_index;
	char *name; /* malloc'd */
} ifrow;

/* A RowBinary reader over [p, end). */
typedef struct rd {
	const uint8_t *p, *end;
	bool bad;
} rd;

static const uint8_t *take(rd *r, size_t n)
{
	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = true;
		return NULL;
	}
	const uint8_t *b = r->p;
	r->p += n;
	return b;
}

static uint64_t u64(rd *r)
{
	const uint8_t *b = take(r, 8);
	uint64_t v = 0;
	for (int i = 7; b && i >= 0; i--)
		v = v << 8 | b[i];
	return v;
}

static void addr16(rd *r, uint8_t out[16])
{
	const uint8_t *b = take(r, 16);
	if (b)
		memcpy(out, b, 16);
	else
		memset(out, 0, 16);
}

/* A String as a malloc'd C string (a NUL inside ends it), NULL when the
 * reader fails or memory is out. */
static char *str(rd *r)
{
	uint64_t len = 0;
	for (unsigned shift = 0;; shift += 7) {
		const uint8_t *b = take(r, 1);
		if (!b || shift > 56)
			return r->bad = true, NULL;
		len |= (uint64_t)(*b & 0x7f) << shift;
		if (!(*b & 0x80))
			break;
	}
	const uint8_t *b = take(r, (size_t)len);
	if (!b)
		return NULL;
	char *s = malloc((size_t)len + 1);
	if (!s)
		return r->bad = true, NULL;
	memcpy(s, b, (size_t)len);
	s[len] = 0;
	return s;
}

/* An exporter's last flow received (DB.exporters). */
typedef struct seen {
	uint8_t exporter[16];
	uint64_t last_seen;
} seen;

/* qsort and bsearch of seen and ifrow by their first member, the
 * exporter's 16 bytes (the server's order of an IPv6 column need not be
 * theirs). */
static int by_exporter(const void *a, const void *b)
{
	return memcmp(a, b, 16);
}

static int by_interface(const void *pa, const void *pb)
{
	const ifrow *a = pa, *b = pb;
	int c = memcmp(a->exporter, b->exporter, 16);
	return c ? c : a->if_index < b->if_index ? -1 : a->if_index > b->if_index;
}

static void free_rows(xrow *x, size_t nx, ifrow *f, size_t nf)
{
	for (size_t i = 0; i < nx; i++)
		free(x[i].name);
	for (size_t i = 0; i < nf; i++)
		free(f[i].name);
	free(x);
	free(f);
}

/* Grows *v (of *cap elements of `size` bytes) to hold n + 1.  False when
 * out of memory. */
static bool grow(void **v, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return true;
	size_t c = *cap ? *cap * 2 : 64;
	void *g = realloc(*v, c * size);
	if (!g)
		return false;
	*v = g;
	*cap = c;
	return true;
}

/* The answer of the rows' statement into *x (nx rows, in its order);
 * *cut when more than XROWS_MAX came.  False when it does not parse. */
static bool read_rows(rd *r, xrow **x, size_t *nx, bool *cut)
{
	size_t cap = 0;
	while (!r->bad && r->p < r->end) {
		if (*nx == XROWS_MAX) {
			*cut = true;
			break;
		}
		if (!grow((void **)x, &cap, *nx, sizeof **x))
			return false;
		xrow *e = &(*x)[*nx];
		memset(e, 0, sizeof *e);
		addr16(r, e->exporter);
		e->domain = u64(r);
		e->version = u64(r);
		e->records = u64(r);
		e->packets = u64(r);
		e->bytes = u64(r);
		e->sampling_rate = u64(r);
		e->sampling_source = u64(r);
		e->name = str(r);
		if (r->bad)
			free(e->name);
		else
			(*nx)++;
	}
	return !r->bad;
}

/* The answer of the last-seen statement into the rows' last_seen.
 * False when it does not parse or memory is out. */
static bool read_seen(rd *r, xrow *x, size_t nx)
{
	seen *ls = NULL;
	size_t nls = 0, cap = 0;
	while (!r->bad && r->p < r->end && nls < XROWS_MAX) {
		if (!grow((void **)&ls, &cap, nls, sizeof *ls)) {
			r->bad = true;
			break;
		}
		addr16(r, ls[nls].exporter);
		ls[nls].last_seen = u64(r);
		nls += !r->bad;
	}
	if (nls)
		qsort(ls, nls, sizeof *ls, by_exporter);
	for (size_t i = 0; !r->bad && nls && i < nx; i++) {
		const seen *k = bsearch(x[i].exporter, ls, nls, sizeof *ls, by_exporter);
		if (k)
			x[i].last_seen = k->last_seen;
	}
	free(ls);
	return !r->bad;
}

/* The answer of the interfaces' statement into *ifs (nif rows, by
 * exporter then index); *cut when more than IFROWS_MAX came.  False when
 * it does not parse. */
static bool read_interfaces(rd *r, ifrow **ifs, size_t *nif, bool *cut)
{
	size_t cap = 0;
	while (!r->bad && r->p < r->end) {
		if (*nif == IFROWS_MAX) {
			*cut = true;
			break;
		}
		if (!grow((void **)ifs, &cap, *nif, sizeof **ifs))
			return false;
		ifrow *e = &(*ifs)[*nif];
		addr16(r, e->exporter);
		e->if_index = u64(r);
		e->name = str(r);
		if (r->bad)
			free(e->name);
		else
			(*nif)++;
	}
	if (*nif) /* by exporter, then index: bsearch finds an exporter's run */
		qsort(*ifs, *nif, sizeof **ifs, by_interface);
	return !r->bad;
}

/* "key":"RFC 3339","key_ms":ms, both null for 0 (not known). */
static void put_time(FILE *f, const char *key, uint64_t ms)
{
	char t[40];
	if (!ms) {
		fprintf(f, "\"%s\":null,\"%s_ms\":null", key, key);
		return;
	}
	fprintf(f, "\"%s\":", key);
	ng_json_put_str(f, ng_time_format(ms, t));
	fprintf(f, ",\"%s_ms\":%" PRIu64, key, ms);
}

/* One row: the embedded row's keys, in its order (store/exporters.c
 * ng_exporters_put_row), null where ClickHouse does not know them; then
 * exporter_name, flow_packets, flow_bytes, health and interfaces. */
static void put_row(FILE *f, const xrow *e, const ifrow *ifs, size_t nif, uint64_t now)
{
	char a[NG_ADDR_STRLEN];
	fputs("{\"exporter\":", f);
	ng_json_put_str(f, ng_addr_format(e->exporter, a));
	fprintf(f, ",\"domain\":%" PRIu64 ",\"version\":%" PRIu64 ",\"protocol\":", e->domain,
	        e->version);
	ng_json_put_str(f, ng_protocol_name((uint8_t)e->version));
	for (int id = 0; id < NG_XC_COUNT; id++) {
		const ng_exporter_counter *c = &ng_exporter_counters[id];
		fputc(',', f);
		if (id == NG_XC_records)
			fprintf(f, "\"records\":%" PRIu64, e->records);
		else if (id == NG_XC_sampling_rate)
			fprintf(f, "\"sampling_rate\":%" PRIu64, e->sampling_rate);
		else if (id == NG_XC_sampling_source)
			fputs("\"sampling_source\":", f),
			    ng_json_put_str(f,
			                    ng_sampling_source_name((unsigned)e->sampling_source));
		else if (id == NG_XC_last_seen)
			put_time(f, "last_seen", e->last_seen);
		else if (c->kind == NG_XK_TIME_MIN || c->kind == NG_XK_TIME_MAX)
			put_time(f, c->name, 0);
		else if (c->kind == NG_XK_ERRORS)
			fprintf(f, "\"%s\":null,\"%s_total\":null", c->name, c->name);
		else
			fprintf(f, "\"%s\":null", c->name);
	}
	fputs(",\"exporter_name\":", f);
	ng_json_put_str(f, e->name ? e->name : "");
	fprintf(f, ",\"flow_packets\":%" PRIu64 ",\"flow_bytes\":%" PRIu64 ",\"health\":\"%s\"",
	        e->packets, e->bytes, now > e->last_seen + 300000 ? "silent" : "ok");
	fputs(",\"interfaces\":[", f);
	const ifrow *i = nif ? bsearch(e->exporter, ifs, nif, sizeof *ifs, by_exporter) : NULL;
	while (i && i > ifs && !memcmp(i[-1].exporter, e->exporter, 16))
		i--;
	for (const ifrow *j = i; j && j < ifs + nif && !memcmp(j->exporter, e->exporter, 16); j++) {
		fprintf(f, "%s{\"if_index\":%" PRIu64 ",\"name\":", j == i ? "" : ",", j->if_index);
		ng_json_put_str(f, j->name ? j->name : "");
		fputc('}', f);
	}
	fputs("]}", f);
}

int ng_exporters_ch_write(FILE *f, const char *const body[3], const size_t len[3], size_t limit,
                          size_t offset, uint64_t now, char *err, size_t errlen)
{
	xrow *x = NULL;
	ifrow *ifs = NULL;
	size_t nx = 0, nif = 0;
	bool cut = false;
	rd r[3];
	for (int i = 0; i < 3; i++)
		r[i] =
		    (rd){(const uint8_t *)(body[i] ? body[i] : ""),
		         (const uint8_t *)(body[i] ? body[i] : "") + (body[i] ? len[i] : 0), false};
	if (!read_rows(&r[0], &x, &nx, &cut) || !read_seen(&r[1], x, nx) ||
	    !read_interfaces(&r[2], &ifs, &nif, &cut)) {
		free_rows(x, nx, ifs, nif);
		snprintf(err, errlen, "an exporters answer that does not parse as RowBinary");
		return -1;
	}
	fputs("{\"live\":false,\"source\":\"clickhouse\",", f);
	put_time(f, "updated", now);
	fputc(',', f);
	put_time(f, "started", 0);
	fputs(",\"listener\":null,\"store\":null,\"limits\":null", f);
	size_t from = offset < nx ? offset : nx;
	size_t to = nx - from > limit ? from + limit : nx;
	fprintf(f, ",\"total\":%zu,\"offset\":%zu,\"returned\":%zu,", nx, from, to - from);
	if (cut)
		fprintf(f,
		        "\"note\":\"cut: at most %d exporters and %d interfaces are read from "
		        "ClickHouse\",",
		        XROWS_MAX, IFROWS_MAX);
	fputs("\"exporters\":[", f);
	for (size_t i = from; i < to; i++) {
		if (i > from)
			fputc(',', f);
		put_row(f, &x[i], ifs, nif, now);
	}
	fputs("]}\n", f);
	free_rows(x, nx, ifs, nif);
	return 0;
}

/* Runs `sql`; *rep holds the answer (free with ng_ch_reply_free).
 * Returns 0, or -1 with err set and errno ETIMEDOUT, ECONNREFUSED (no
 * connection) or EIO. */
static int run(ng_ch_client *cl, const char *sql, ng_ch_reply *rep, char *err, size_t errlen)
{
	if (ng_ch_exec(cl, sql, NULL, 0, NULL, rep) == 0)
		return 0;
	snprintf(err, errlen, "%s", rep->err);
	errno = rep->timed_out ? ETIMEDOUT : rep->outcome == NG_CH_NOT_SENT ? ECONNREFUSED : EIO;
	ng_ch_reply_free(rep);
	return -1;
}

int ng_api_exporters_ch(ng_http_server *s, ng_ch_client *cl, size_t limit, size_t offset,
                        ng_http_resp *out, char *err, size_t errlen)
{
	(void)s;
	const char *db = ng_ch_database(cl);
	char sql[3][1024];
	/* the rows: flows stored per exporter, domain and protocol */
	snprintf(sql[0], sizeof sql[0],
	         "SELECT exporter, toUInt64(observation_domain), toUInt64(flow_version), "
	         "toUInt64(sum(flows)) AS records, toUInt64(sum(packets)), toUInt64(sum(bytes)), "
	         "toUInt64(argMax(sampling_rate, time)), toUInt64(argMax(sampling_source, time)), "
	         "toString(argMax(exporter_name, time)) FROM %s.flows_1h GROUP BY exporter, "
	         "observation_domain, flow_version ORDER BY records DESC, exporter, "
	         "observation_domain, flow_version LIMIT %d FORMAT RowBinary",
	         db, XROWS_MAX + 1);
	/* the last flow received of each exporter */
	snprintf(sql[1], sizeof sql[1],
	         "SELECT exporter, toUInt64(max(last_seen)) FROM %s.exporters GROUP BY exporter "
	         "LIMIT %d FORMAT RowBinary",
	         db, XROWS_MAX);
	/* the interfaces named (index 0: no interface) */
	snprintf(sql[2], sizeof sql[2],
	         "SELECT exporter, toUInt64(if_index), toString(argMax(if_name, last_seen)) FROM "
	         "%s.interfaces WHERE if_index != 0 GROUP BY exporter, if_index LIMIT %d FORMAT "
	         "RowBinary",
	         db, IFROWS_MAX + 1);
	ng_ch_reply rep[3];
	int n = 0;
	while (n < 3 && run(cl, sql[n], &rep[n], err, errlen) == 0)
		n++;
	int rc = -1, e = errno;
	if (n == 3) {
		const char *body[3] = {rep[0].body, rep[1].body, rep[2].body};
		const size_t len[3] = {rep[0].len, rep[1].len, rep[2].len};
		out->ctype = "application/json";
		FILE *f = open_memstream(&out->body, &out->len);
		char perr[128];
		if (!f) {
			snprintf(err, errlen, "out of memory");
			e = ENOMEM;
		} else if ((rc = ng_exporters_ch_write(f, body, len, limit, offset, ng_now_ms(),
		                                       perr, sizeof perr)) < 0) {
			snprintf(err, errlen, "ClickHouse at %s: %s", ng_ch_base_url(cl), perr);
			e = EIO;
		}
		if (f)
			fclose(f);
		if (rc < 0) {
			free(out->body);
			out->body = NULL;
			out->len = 0;
		}
	}
	for (int i = 0; i < n; i++)
		ng_ch_reply_free(&rep[i]);
	errno = rc < 0 ? e : 0;
	return rc;
}
