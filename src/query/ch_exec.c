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
 * Folds (a series' "other", a Sankey's stages: ng_query.fold, .folds)
 * are applied here to the rows of every group, as the engine applies them
 * to each flow's key, and the rows that meet are merged: the statement
 * itself fetches every group (folding in SQL would fetch fewer; not yet).
 */
#include <errno.h>
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

/* The totals (and for a group-by the number of groups) into res. */
static int totals(ng_ch_client *cl, const ng_ch_server *sv, const ng_query *q, ng_query_result *res,
                  char *err, size_t errlen)
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
	if (!q->nkeys)
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
			if (f->type == NG_FT_ADDR && (g->plen4 || g->plen6) && g->alt < 0) {
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
	int rc = totals(cl, sv, q, res, err, errlen);
	if (!rc)
		rc = q->nkeys ? groups(cl, sv, q, res, err, errlen)
		              : listing(cl, sv, q, res, err, errlen);
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
