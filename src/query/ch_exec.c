/*
 * ch_exec.c — a query (query.h) run on ClickHouse: the statements of
 * query_sql.h sent over the client (clickhouse/client.h), their RowBinary
 * answers read back into an ng_query_result as the store's executor fills
 * it, so that the output code (output.h) cannot tell the two apart.
 *
 * RowBinary (ClickHouse docs, "Formats", RowBinary; the same in 18.16):
 * each row's columns one after another, UIntN as N/8 bytes little-endian,
 * FixedString(N) (and IPv6) as its N bytes, String (and
 * LowCardinality(String)) as a LEB128 length and its bytes.  The answer
 * is read with every length checked against what is left; an answer that
 * does not parse is an error, never a partial result.
 *
 * A group-by's keys are written into each row's key in the engine's
 * layout (groupby.c): integers and times in host order at their field's
 * size, addresses' 16 bytes (a prefix's two big-endian halves), MACs' 6
 * bytes, a string as its interned id (core/strtab.h).  A listing's rows
 * become ng_flow records field by field (the field table's offsets and
 * sizes), strings interned the same way.
 *
 * A limited top-N without an either key, key prefix or rollup is one
 * statement (query_sql.h ng_query_sql_one) answered in JSONCompact: its
 * rows, the totals row and rows_before_limit_at_least (the number of
 * groups), read with jansson, keys of bytes as hex, every value checked
 * against its column (ng_query_ch_parse_one).  Else the totals, the rows
 * and, when the rows' statement has a LIMIT, the number of groups are
 * statements of their own.
 *
 * Folds (a series' "other", a Sankey's stages: ng_query.fold, .folds)
 * are applied here to the rows of every group, as the engine applies them
 * to each flow's key, and the rows that meet are merged: the statement
 * itself fetches every group (folding in SQL would fetch fewer; not yet).
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/bytes.h"
#include "core/strtab.h"
#include "query/backend.h"
#include "query/output.h"
#include "query/query_int.h"
#include "query/query_sql.h"

/* A RowBinary answer being read. */
typedef struct rb {
	const uint8_t *p, *end;
	bool bad; /* ran past the end or a length that cannot be */
} rb;

static const uint8_t *rb_take(rb *r, size_t n)
{
	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = true;
		return NULL;
	}
	const uint8_t *p = r->p;
	r->p += n;
	return p;
}

/* An unsigned little-endian integer of n bytes (1, 2, 4, 8). */
static uint64_t rb_uint(rb *r, unsigned n)
{
	const uint8_t *p = rb_take(r, n);
	uint64_t v = 0;
	for (unsigned i = 0; p && i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* A String: its LEB128 length, then the bytes; *len set. */
static const uint8_t *rb_str(rb *r, size_t *len)
{
	uint64_t n = 0;
	for (unsigned shift = 0;; shift += 7) {
		const uint8_t *b = rb_take(r, 1);
		if (!b || shift > 56) {
			r->bad = true;
			return NULL;
		}
		n |= (uint64_t)(*b & 0x7f) << shift;
		if (!(*b & 0x80))
			break;
	}
	*len = (size_t)n;
	return rb_take(r, (size_t)n);
}

/* Writes v into p as the host's unsigned integer of n bytes. */
static void put_host(uint8_t *p, unsigned n, uint64_t v)
{
	switch (n) {
	case 1: *p = (uint8_t)v; break;
	case 2: {
		uint16_t x = (uint16_t)v;
		memcpy(p, &x, 2);
		break;
	}
	case 4: {
		uint32_t x = (uint32_t)v;
		memcpy(p, &x, 4);
		break;
	}
	default: memcpy(p, &v, 8); break;
	}
}

/* One value of field f (its column's RowBinary) into p (f->size bytes,
 * the engine's layout). */
static void rb_value(rb *r, const ng_field *f, uint8_t *p)
{
	const uint8_t *b;
	size_t len;
	switch (f->type) {
	case NG_FT_ADDR:
	case NG_FT_MAC:
		if ((b = rb_take(r, f->size)))
			memcpy(p, b, f->size);
		break;
	case NG_FT_STR:
		b = rb_str(r, &len);
		put_host(p, f->size, b && len ? ng_intern((const char *)b, len) : 0);
		break;
	default: put_host(p, f->size, rb_uint(r, f->size)); break;
	}
}

/* Runs `sql` and hands its whole answer to *r (the body in *body, free
 * it with ng_ch_reply_free).  Returns 0 or -1 (err set). */
static int run(ng_ch_client *cl, ng_ch_sql *sql, ng_ch_reply *rep, rb *r, char *err, size_t errlen)
{
	int rc = ng_ch_exec(cl, sql->s, NULL, 0, NULL, rep);
	ng_ch_sql_free(sql);
	if (rc < 0) {
		bool timed_out = rep->timed_out;
		if (timed_out)
			snprintf(err, errlen, "ClickHouse at %s: query time limit reached",
			         ng_ch_base_url(cl));
		else
			snprintf(err, errlen, "%s", rep->err);
		bool unreachable = rep->outcome == NG_CH_NOT_SENT;
		ng_ch_reply_free(rep);
		errno = timed_out ? ETIMEDOUT : unreachable ? ECONNREFUSED : EIO;
		return -1;
	}
	*r = (rb){(const uint8_t *)rep->body, (const uint8_t *)rep->body + rep->len, false};
	return 0;
}

static int bad_answer(ng_ch_client *cl, char *err, size_t errlen)
{
	snprintf(err, errlen, "ClickHouse at %s: an answer that does not parse as RowBinary",
	         ng_ch_base_url(cl));
	return -1;
}

/* The totals (and, count_groups, the number of groups) into res. */
static int totals(ng_ch_client *cl, const ng_ch_server *sv, const ng_query *q, ng_query_result *res,
                  bool count_groups, char *err, size_t errlen)
{
	const char *db = ng_ch_database(cl);
	ng_ch_sql sql = {0};
	ng_ch_reply rep;
	rb r;
	if (ng_query_sql_totals(db, q, sv, &sql, err, errlen)) {
		ng_ch_sql_free(&sql);
		return -1;
	}
	if (run(cl, &sql, &rep, &r, err, errlen))
		return -1;
	res->flows_total = rb_uint(&r, 8);
	res->packets_total = rb_uint(&r, 8);
	res->bytes_total = rb_uint(&r, 8);
	res->first = rb_uint(&r, 8);
	res->last = rb_uint(&r, 8);
	bool bad = r.bad || r.p != r.end;
	ng_ch_reply_free(&rep);
	if (bad)
		return bad_answer(cl, err, errlen);
	if (!res->flows_total)
		res->first = res->last = 0;
	if (!count_groups)
		return 0;
	if (ng_query_sql_ngroups(db, q, sv, &sql, err, errlen)) {
		ng_ch_sql_free(&sql);
		return -1;
	}
	if (run(cl, &sql, &rep, &r, err, errlen))
		return -1;
	res->groups = rb_uint(&r, 8);
	res->groups_exact = true;
	bad = r.bad || r.p != r.end;
	ng_ch_reply_free(&rep);
	return bad ? bad_answer(cl, err, errlen) : 0;
}

/* Grows *a (n used of *cap elements of size sz) by one.  NULL when out
 * of memory. */
static void *grow(void **a, size_t *cap, size_t n, size_t sz)
{
	if (n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		void *p = realloc(*a, c * sz);
		if (!p)
			return NULL;
		*a = p;
		*cap = c;
	}
	return (char *)*a + n * sz;
}

/* Whether key g is selected as a prefix's two halves (query_sql.c
 * has_prefix). */
static bool has_prefix_key(const ng_group_key *g)
{
	return ng_fields[g->field].type == NG_FT_ADDR && (g->plen4 || g->plen6) && g->alt < 0;
}

/* A JSON value that is an unsigned integer (a number, or a quoted
 * decimal as JSONCompact writes UInt64) into *v; false when it is not
 * one or is past 2^64 - 1. */
static bool json_u64(const json_t *j, uint64_t *v)
{
	if (json_is_integer(j)) {
		json_int_t i = json_integer_value(j);
		*v = (uint64_t)i;
		return i >= 0;
	}
	const char *t = json_string_value(j);
	size_t n = t ? json_string_length(j) : 0;
	if (!n || n > 20 || strspn(t, "0123456789") != n)
		return false;
	uint64_t x = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned)(t[i] - '0');
		if (x > (UINT64_MAX - d) / 10)
			return false;
		x = x * 10 + d;
	}
	*v = x;
	return true;
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* A JSON string of upper-case hex (ClickHouse's hex()) into out[*n]
 * (its bytes, at most cap); false when it is not one or longer. */
static bool json_hex(const json_t *j, uint8_t *out, size_t cap, size_t *n)
{
	const char *t = json_string_value(j);
	size_t len = t ? json_string_length(j) : 1;
	if (len % 2 || len / 2 > cap)
		return false;
	for (size_t i = 0; i < len / 2; i++) {
		int hi = hexval(t[2 * i]), lo = hexval(t[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return false;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	*n = len / 2;
	return true;
}

/* One row of the one statement's answer (its output columns, query_sql.h
 * ng_query_sql_one) into *row: the keys in the engine's layout, then the
 * five aggregates; `keys` false for the totals' row (its key columns are
 * defaults: only their count is checked).  False when it does not parse. */
static bool one_row(const ng_query *q, const json_t *a, bool keys, ng_agg_row *row)
{
	size_t ncol = 5;
	for (size_t j = 0; j < q->nkeys; j++)
		ncol += has_prefix_key(&q->keys[j]) ? 2 : 1;
	if (!json_is_array(a) || json_array_size(a) != ncol)
		return false;
	memset(row, 0, sizeof *row);
	uint8_t *k = row->key;
	size_t c = 0;
	for (size_t j = 0; j < q->nkeys; j++) {
		const ng_group_key *g = &q->keys[j];
		const ng_field *f = &ng_fields[g->field];
		uint64_t v, w;
		if (has_prefix_key(g)) {
			if (!json_u64(json_array_get(a, c), &v) ||
			    !json_u64(json_array_get(a, c + 1), &w))
				return false;
			ng_put_be64(k, v);
			ng_put_be64(k + 8, w);
			c += 2;
		} else if (f->type == NG_FT_ADDR || f->type == NG_FT_MAC || f->type == NG_FT_STR) {
			uint8_t b[4096];
			size_t n;
			if (!json_hex(json_array_get(a, c++), b, sizeof b, &n))
				return false;
			if (f->type == NG_FT_STR)
				put_host(k, f->size, n ? ng_intern((const char *)b, n) : 0);
			else if (n == f->size)
				memcpy(k, b, n);
			else if (keys || n)
				return false;
		} else {
			if (!json_u64(json_array_get(a, c++), &v))
				return false;
			if (f->size < 8 && v >> (8 * f->size))
				return false;
			put_host(k, f->size, v);
		}
		k += f->size;
	}
	uint64_t m[5];
	for (size_t i = 0; i < 5; i++)
		if (!json_u64(json_array_get(a, c + i), &m[i]))
			return false;
	row->first = m[0];
	row->last = m[1];
	row->flows = m[2];
	row->packets = m[3];
	row->bytes = m[4];
	if (!keys)
		memset(row->key, 0, sizeof row->key);
	return true;
}

int ng_query_ch_parse_one(const ng_query *q, const char *body, size_t len, ng_query_result *res)
{
	json_error_t je;
	json_t *doc = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
	json_t *data = json_object_get(doc, "data"), *tot = json_object_get(doc, "totals");
	json_t *rbl = json_object_get(doc, "rows_before_limit_at_least");
	size_t n = json_array_size(data), cap = 0;
	uint64_t before = n;
	ng_agg_row t;
	bool ok = json_is_array(data) && n <= q->limit && one_row(q, tot, false, &t) &&
	          (!rbl || json_u64(rbl, &before)) && before >= n;
	for (size_t i = 0; ok && i < n; i++) {
		ng_agg_row *row = grow((void **)&res->rows, &cap, res->nrows, sizeof *row);
		ok = row && one_row(q, json_array_get(data, i), true, row);
		res->nrows += ok;
	}
	json_decref(doc);
	if (!ok) {
		free(res->rows);
		res->rows = NULL;
		res->nrows = 0;
		return -1;
	}
	res->flows_total = t.flows;
	res->packets_total = t.packets;
	res->bytes_total = t.bytes;
	res->first = t.flows ? t.first : 0;
	res->last = t.flows ? t.last : 0;
	res->groups = before;
	res->groups_exact = true;
	return 0;
}

/* The one statement (ng_query_sql_one): rows, totals and groups. */
static int one(ng_ch_client *cl, const ng_ch_server *sv, const ng_query *q, ng_query_result *res,
               char *err, size_t errlen)
{
	ng_ch_sql sql = {0};
	ng_ch_reply rep;
	rb r;
	if (ng_query_sql_one(ng_ch_database(cl), q, sv, &sql, err, errlen)) {
		ng_ch_sql_free(&sql);
		return -1;
	}
	if (run(cl, &sql, &rep, &r, err, errlen))
		return -1;
	int rc = ng_query_ch_parse_one(q, (const char *)r.p, (size_t)(r.end - r.p), res);
	ng_ch_reply_free(&rep);
	if (rc)
		snprintf(err, errlen,
		         "ClickHouse at %s: an answer that does not parse as JSONCompact",
		         ng_ch_base_url(cl));
	return rc;
}

static int groups(ng_ch_client *cl, const ng_ch_server *sv, const ng_query *q, ng_query_result *res,
                  char *err, size_t errlen)
{
	ng_ch_sql sql = {0};
	ng_ch_reply rep;
	rb r;
	if (ng_query_sql_groups(ng_ch_database(cl), q, sv, &sql, err, errlen)) {
		ng_ch_sql_free(&sql);
		return -1;
	}
	if (run(cl, &sql, &rep, &r, err, errlen))
		return -1;
	size_t cap = 0;
	int rc = 0;
	while (r.p < r.end && !r.bad) {
		ng_agg_row *row = grow((void **)&res->rows, &cap, res->nrows, sizeof *row);
		if (!row) {
			snprintf(err, errlen, "out of memory");
			rc = -1;
			break;
		}
		memset(row, 0, sizeof *row);
		uint8_t *k = row->key;
		for (size_t j = 0; j < q->nkeys; j++) {
			const ng_group_key *g = &q->keys[j];
			const ng_field *f = &ng_fields[g->field];
			if (has_prefix_key(g)) {
				ng_put_be64(k, rb_uint(&r, 8));
				ng_put_be64(k + 8, rb_uint(&r, 8));
			} else {
				rb_value(&r, f, k);
			}
			k += f->size;
		}
		row->first = rb_uint(&r, 8);
		row->last = rb_uint(&r, 8);
		row->flows = rb_uint(&r, 8);
		row->packets = rb_uint(&r, 8);
		row->bytes = rb_uint(&r, 8);
		res->nrows++;
	}
	bool bad = r.bad;
	ng_ch_reply_free(&rep);
	if (!rc && bad) {
		res->nrows = 0;
		return bad_answer(cl, err, errlen);
	}
	return rc;
}

static int listing(ng_ch_client *cl, const ng_ch_server *sv, const ng_query *q,
                   ng_query_result *res, char *err, size_t errlen)
{
	ng_ch_sql sql = {0};
	ng_ch_reply rep;
	rb r;
	if (ng_query_sql_list(ng_ch_database(cl), q, sv, &sql, err, errlen)) {
		ng_ch_sql_free(&sql);
		return -1;
	}
	if (run(cl, &sql, &rep, &r, err, errlen))
		return -1;
	size_t cap = 0;
	int rc = 0;
	while (r.p < r.end && !r.bad) {
		ng_flow *fl = grow((void **)&res->flows, &cap, res->nflows, sizeof *fl);
		if (!fl) {
			snprintf(err, errlen, "out of memory");
			rc = -1;
			break;
		}
		memset(fl, 0, sizeof *fl);
		for (size_t i = 0; i < NG_FIELD_COUNT; i++)
			rb_value(&r, &ng_fields[i], (uint8_t *)fl + ng_fields[i].offset);
		res->nflows++;
	}
	bool bad = r.bad;
	ng_ch_reply_free(&rep);
	if (!rc && bad) {
		res->nflows = 0;
		return bad_answer(cl, err, errlen);
	}
	return rc;
}

/* Key part [off, off + len) of k becomes `other` when it is none of the n
 * values at vals (groupby.c fold_part). */
static void fold_part(uint8_t *k, const uint8_t *vals, size_t n, size_t off, size_t len,
                      const uint8_t *other)
{
	for (size_t i = 0; i < n; i++)
		if (!memcmp(k + off, vals + i * len, len))
			return;
	memcpy(k + off, other, len);
}

static int cmp_key(const void *a, const void *b, void *arg)
{
	return memcmp(((const ng_agg_row *)a)->key, ((const ng_agg_row *)b)->key, *(size_t *)arg);
}

static int cmp_rank_rows(const void *a, const void *b, void *arg)
{
	const ng_rank_ctx *c = arg;
	const ng_agg_row *x = a, *y = b;
	return ng_rank_cmp(ng_row_metric(x, c->order), ng_row_metric(y, c->order), x->key, y->key,
	                   c->klen);
}

/* q's folds (q->fold, q->folds: a series' "other", a Sankey's stages)
 * applied to every row of res, as the engine applies them to each flow's
 * key (groupby.c fold_key); the rows whose keys then meet are merged, and
 * ranked again as the engine ranks (ng_rank_cmp).  The statement fetched
 * every group (a folded query has no limit: checked by the caller). */
static void fold_rows(const ng_query *q, ng_query_result *res)
{
	size_t klen = ng_query_key_len(q);
	for (size_t i = 0; i < res->nrows; i++) {
		uint8_t *k = res->rows[i].key;
		if (q->nfold)
			fold_part(k, q->fold, q->nfold, q->fold_off, q->fold_len, q->fold_other);
		for (size_t j = 0; j < q->nfolds; j++) {
			const ng_query_fold *f = &q->folds[j];
			fold_part(k, f->vals, f->n, f->off, f->len, f->other);
		}
	}
	if (res->nrows)
		qsort_r(res->rows, res->nrows, sizeof *res->rows, cmp_key, &klen);
	size_t m = 0;
	for (size_t i = 0; i < res->nrows; i++) {
		ng_agg_row *r = &res->rows[i];
		if (m && !memcmp(res->rows[m - 1].key, r->key, klen)) {
			ng_agg_row *w = &res->rows[m - 1];
			w->flows += r->flows;
			w->packets += r->packets;
			w->bytes += r->bytes;
			w->first = r->first < w->first ? r->first : w->first;
			w->last = r->last > w->last ? r->last : w->last;
			continue;
		}
		res->rows[m++] = *r;
	}
	res->nrows = m;
	res->groups = m;
	ng_rank_ctx rc = {q->order, klen};
	if (m)
		qsort_r(res->rows, m, sizeof *res->rows, cmp_rank_rows, &rc);
}

/* A key prefix the statements left to the executor
 * (ng_query_sql_prefix_in_sql false): keeps the groups whose first key,
 * as the machine formats write it, starts with it (ASCII
 * case-insensitive: top.c prefix_ok), counts them, and cuts them to
 * q->limit; res->rows came in rank order, every group. */
static void prefix_rows(const ng_query *q, ng_query_result *res)
{
	size_t plen = strlen(q->key_prefix), m = 0;
	for (size_t i = 0; i < res->nrows; i++) {
		char buf[128];
		ng_format_key(q, 0, res->rows[i].key, false, buf);
		if (strncasecmp(buf, q->key_prefix, plen) == 0)
			res->rows[m++] = res->rows[i];
	}
	res->groups = m;
	res->nrows = q->limit && q->limit < m ? q->limit : m;
}

int ng_query_run_ch(ng_ch_client *cl, const ng_ch_server *sv, const ng_query *q,
                    ng_query_result *res, char *err, size_t errlen)
{
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(res, 0, sizeof *res);
	errno = 0;
	if (q->nkeys && ng_query_key_len(q) > NG_QUERY_KEY_MAX) {
		snprintf(err, errlen, "group-by key too long");
		return -1;
	}
	bool folded = q->nkeys && (q->nfold || q->nfolds);
	if (folded && q->limit) {
		snprintf(err, errlen, "the ClickHouse backend folds keys only without a limit");
		return -1;
	}
	/* one statement where it can (ng_query_sql_one_statement); else the
	 * totals, then the rows, the groups counted by a statement of their
	 * own only when the rows' statement has a LIMIT (without one its rows
	 * are every group HAVING kept) */
	bool limited = q->nkeys && q->limit &&
	               (!q->key_prefix || !*q->key_prefix || ng_query_sql_prefix_in_sql(q));
	int rc;
	if (ng_query_sql_one_statement(q, sv)) {
		rc = one(cl, sv, q, res, err, errlen);
	} else {
		rc = totals(cl, sv, q, res, limited, err, errlen);
		if (!rc)
			rc = q->nkeys ? groups(cl, sv, q, res, err, errlen)
			              : listing(cl, sv, q, res, err, errlen);
		if (!rc && q->nkeys && !limited) {
			res->groups = res->nrows;
			res->groups_exact = true;
		}
	}
	if (!rc && folded)
		fold_rows(q, res);
	if (!rc && q->nkeys && q->key_prefix && *q->key_prefix && !ng_query_sql_prefix_in_sql(q))
		prefix_rows(q, res);
	if (rc) {
		int e = errno; /* ETIMEDOUT: the request's time-out; ECONNREFUSED: no connection
		                  (run) */
		ng_query_result_free(res);
		errno = e == ETIMEDOUT && strstr(err, "query time limit reached") ? ETIMEDOUT
		        : e == ECONNREFUSED                                       ? ECONNREFUSED
		                                                                  : EIO;
		return -1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	res->elapsed_s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	return 0;
}
