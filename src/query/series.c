/* series.c — time series over the store (see series.h). */
#include "query/series.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/backend.h"
#include "query/query_int.h"

bool ng_interval_parse(const char *s, uint64_t *ms)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (end == s || v == 0)
		return false;
	uint64_t mult = 1000;
	if (!strcmp(end, "s") || !*end)
		mult = 1000;
	else if (!strcmp(end, "m") || !strcmp(end, "min"))
		mult = 60000;
	else if (!strcmp(end, "h"))
		mult = 3600000;
	else if (!strcmp(end, "d"))
		mult = 86400000;
	else
		return false;
	if (v > UINT64_MAX / mult / 2)
		return false;
	*ms = v * mult;
	return true;
}

typedef struct sort_ctx {
	const ng_agg_row *rows;
	size_t klen; /* bytes of the value keys, after the 8-byte bucket */
} sort_ctx;

static int cmp_by_value_key(const void *a, const void *b, void *arg)
{
	const sort_ctx *c = arg;
	const ng_agg_row *x = &c->rows[*(const size_t *)a], *y = &c->rows[*(const size_t *)b];
	int r = memcmp(x->key + 8, y->key + 8, c->klen);
	if (r)
		return r;
	return memcmp(x->key, y->key, 8);
}

static double rank_metric(const ng_agg_row *r, enum ng_order o)
{
	switch (o) {
	case NG_ORDER_PACKETS:
	case NG_ORDER_PPS: return (double)r->packets;
	case NG_ORDER_BYTES:
	case NG_ORDER_BPS: return (double)r->bytes;
	case NG_ORDER_BPP: return r->packets ? (double)r->bytes / (double)r->packets : 0;
	default: return (double)r->flows;
	}
}

/* qsort_r comparison of series totals, best first (ng_rank_cmp). */
static int cmp_rank(const void *a, const void *b, void *arg)
{
	const ng_rank_ctx *c = arg;
	const ng_agg_row *x = a, *y = b;
	return ng_rank_cmp(rank_metric(x, c->order), rank_metric(y, c->order), x->key, y->key,
	                   c->klen);
}

static int cmp_point(const void *a, const void *b)
{
	const ng_series_point *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->series < y->series ? -1 : x->series > y->series;
}

/* Totals per distinct value key (rows sorted by value key in idx). */
static ng_agg_row *key_totals(const ng_agg_row *rows, const size_t *idx, size_t n, size_t klen,
                              size_t *nkeys)
{
	ng_agg_row *k = malloc((n ? n : 1) * sizeof *k);
	if (!k)
		return NULL;
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		const ng_agg_row *r = &rows[idx[i]];
		if (!m || memcmp(k[m - 1].key, r->key + 8, klen)) {
			memset(&k[m], 0, sizeof k[m]);
			memcpy(k[m].key, r->key + 8, klen);
			k[m].first = UINT64_MAX;
			m++;
		}
		ng_agg_row *t = &k[m - 1];
		t->flows += r->flows;
		t->packets += r->packets;
		t->bytes += r->bytes;
		if (r->first < t->first)
			t->first = r->first;
		if (r->last > t->last)
			t->last = r->last;
	}
	*nkeys = m;
	return k;
}

/* Which top series a value key is (binary search over the sorted keys
 * with their series index); nseries for "other". */
typedef struct key_index {
	uint8_t key[NG_QUERY_KEY_MAX];
	size_t series;
} key_index;

static int cmp_key_index(const void *a, const void *b, void *arg)
{
	return memcmp(((const key_index *)a)->key, ((const key_index *)b)->key, *(size_t *)arg);
}

/* The series of value key k among the sorted ki[0..n); n when none. */
static size_t find_series(const key_index *ki, size_t n, const uint8_t *k, size_t klen)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = memcmp(ki[mid].key, k, klen);
		if (!c)
			return ki[mid].series;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return SIZE_MAX;
}

/* Folds the (bucket, key) rows into points of the top series and other. */
static int make_points(ng_series *s, const ng_agg_row *rows, size_t n, size_t klen)
{
	key_index *ki = malloc((s->nseries ? s->nseries : 1) * sizeof *ki);
	ng_series_point *pts = malloc((n ? n : 1) * sizeof *pts);
	if (!ki || !pts) {
		free(ki);
		free(pts);
		return -1;
	}
	for (size_t i = 0; i < s->nseries; i++) {
		memcpy(ki[i].key, s->top[i].key, klen);
		ki[i].series = i;
	}
	qsort_r(ki, s->nseries, sizeof *ki, cmp_key_index, &klen);
	size_t np = 0;
	for (size_t i = 0; i < n; i++) {
		const ng_agg_row *r = &rows[i];
		size_t series = klen ? find_series(ki, s->nseries, r->key + 8, klen) : 0;
		if (series == SIZE_MAX) {
			series = s->nseries;
			s->has_other = true;
		}
		uint64_t t;
		memcpy(&t, r->key, 8);
		pts[np++] = (ng_series_point){t, series, r->flows, r->packets, r->bytes};
	}
	free(ki);
	if (np)
		qsort(pts, np, sizeof *pts, cmp_point);
	/* merge the "other" points of one bucket */
	size_t m = 0;
	for (size_t i = 0; i < np; i++) {
		if (m && pts[m - 1].t == pts[i].t && pts[m - 1].series == pts[i].series) {
			pts[m - 1].flows += pts[i].flows;
			pts[m - 1].packets += pts[i].packets;
			pts[m - 1].bytes += pts[i].bytes;
			continue;
		}
		pts[m++] = pts[i];
	}
	s->points = pts;
	s->npoints = m;
	return 0;
}

/* Turns the (bucket, key) rows of out->res into out's points and drops
 * the rows.  Returns 0, or -1 (out freed, err set) when out of memory. */
static int finish_points(ng_series *out, size_t klen, char *err, size_t errlen)
{
	if (make_points(out, out->res.rows, out->res.nrows, klen)) {
		snprintf(err, errlen, "out of memory");
		ng_series_free(out);
		return -1;
	}
	free(out->res.rows);
	out->res.rows = NULL;
	out->res.nrows = 0;
	return 0;
}

/* The series order as a query order: pps and bps rank as packets and
 * bytes (over one common range the order is the same). */
static enum ng_order series_order(enum ng_order o)
{
	return o == NG_ORDER_PPS ? NG_ORDER_PACKETS : o == NG_ORDER_BPS ? NG_ORDER_BYTES : o;
}

/*
 * The top q->limit series and "other" in two scans: the top keys by their
 * totals over the range (a plain top-N: the same ranking, ties to the
 * smaller key, as key_totals and cmp_rank give), then the buckets with
 * every other key folded into one (q->fold), so the table holds limit + 1
 * groups a bucket instead of every key's.  bq is the bucketed query.
 */
static int top_series(const ng_backend *b, const ng_query *q, const ng_query *bq, ng_series *out,
                      char *err, size_t errlen)
{
	const size_t klen = ng_query_key_len(q);
	ng_query tq = *q;
	tq.order = series_order(q->order);
	ng_query_result top;
	if (ng_backend_run(b, &tq, &top, err, errlen))
		return -1;
	uint8_t *fold = malloc((top.nrows ? top.nrows : 1) * klen), other[NG_QUERY_KEY_MAX];
	if (!fold) {
		ng_query_result_free(&top);
		goto oom;
	}
	for (size_t i = 0; i < top.nrows; i++)
		memcpy(fold + i * klen, top.rows[i].key, klen);
	/* "other": a value no kept key has (at most limit of 256 fills taken) */
	for (int fill = 0xff;; fill--) {
		memset(other, fill, klen);
		size_t i = 0;
		while (i < top.nrows && memcmp(fold + i * klen, other, klen))
			i++;
		if (i == top.nrows)
			break;
	}
	ng_query fq = *bq;
	fq.fold = fold;
	fq.fold_other = other;
	fq.nfold = top.nrows;
	fq.fold_off = 8;
	fq.fold_len = klen;
	int rc = ng_backend_run(b, &fq, &out->res, err, errlen);
	free(fold);
	out->top = top.rows; /* the totals of each kept key: the series' */
	out->nseries = top.nrows;
	top.rows = NULL;
	if (rc == 0) {
		/* one snapshot: the second run's damaged set holds the first's */
		top.scan.errors -= top.scan.segments_damaged;
		top.scan.segments_damaged = 0;
		ng_scan_stats_add(&out->res.scan, &top.scan);
		out->res.elapsed_s += top.elapsed_s;
		out->res.groups = top.groups; /* distinct keys, as without folding */
		out->res.groups_exact = top.groups_exact;
	}
	ng_query_result_free(&top);
	if (rc) {
		ng_series_free(out);
		return -1;
	}
	return finish_points(out, klen, err, errlen);
oom:
	snprintf(err, errlen, "out of memory");
	ng_series_free(out);
	return -1;
}

/* ng_series_run on backend b (for the store, with q->snap set). */
static int series_run(const ng_backend *b, const ng_query *q, uint64_t interval_ms, ng_series *out,
                      char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	if (interval_ms < 1000) {
		snprintf(err, errlen, "interval under 1 s");
		return -1;
	}
	if (q->nkeys >= NG_QUERY_MAX_KEYS) {
		snprintf(err, errlen, "a time series takes at most %d key fields",
		         NG_QUERY_MAX_KEYS - 1);
		return -1;
	}
	ng_query bq = *q;
	bq.keys[0] = (ng_group_key){
	    .field = NG_F_FLOW_START, .alt = -1, .label = "time", .bucket_ms = interval_ms};
	memcpy(&bq.keys[1], q->keys, q->nkeys * sizeof q->keys[0]);
	bq.nkeys = q->nkeys + 1;
	bq.limit = 0;
	if (ng_query_key_len(&bq) > NG_QUERY_KEY_MAX) {
		snprintf(err, errlen, "key fields too long for a time series");
		return -1;
	}
	out->interval_ms = interval_ms;
	size_t klen = ng_query_key_len(q);
	/* the points want the buckets' sums only; with keys and no limit the
	 * series' totals come from the buckets' rows, times and all */
	bq.sums_only = !klen || q->limit;
	if (klen && q->limit)
		return top_series(b, q, &bq, out, err, errlen);
	if (ng_backend_run(b, &bq, &out->res, err, errlen))
		return -1;
	const ng_agg_row *rows = out->res.rows;
	size_t n = out->res.nrows;
	if (klen) {
		size_t *idx = malloc((n ? n : 1) * sizeof *idx);
		if (!idx)
			goto oom;
		for (size_t i = 0; i < n; i++)
			idx[i] = i;
		sort_ctx sc = {rows, klen};
		qsort_r(idx, n, sizeof *idx, cmp_by_value_key, &sc);
		size_t nk;
		ng_agg_row *tot = key_totals(rows, idx, n, klen, &nk);
		free(idx);
		if (!tot)
			goto oom;
		ng_rank_ctx rc = {q->order, klen};
		qsort_r(tot, nk, sizeof *tot, cmp_rank, &rc);
		out->top = tot;
		out->nseries = q->limit && q->limit < nk ? q->limit : nk;
	} else {
		/* one series: the total */
		out->top = calloc(1, sizeof *out->top);
		if (!out->top)
			goto oom;
		out->top->flows = out->res.flows_total;
		out->top->packets = out->res.packets_total;
		out->top->bytes = out->res.bytes_total;
		out->top->first = out->res.first;
		out->top->last = out->res.last;
		out->nseries = 1;
	}
	return finish_points(out, klen, err, errlen);
oom:
	snprintf(err, errlen, "out of memory");
	ng_series_free(out);
	return -1;
}

/* query.h: the top query and the bucketed one read one snapshot (q's, or
 * one taken here), so that the series add up to the top's totals. */
int ng_series_run(const char *dir, const ng_query *q, uint64_t interval_ms, ng_series *out,
                  char *err, size_t errlen)
{
	ng_query copy;
	ng_store_snapshot *own;
	const ng_query *sq = ng_query_with_snapshot(dir, q, &copy, &own, err, errlen);
	if (!sq) {
		memset(out, 0, sizeof *out);
		return -1;
	}
	ng_backend b = {.store = dir};
	int rc = series_run(&b, sq, interval_ms, out, err, errlen);
	ng_store_snapshot_free(own);
	return rc;
}

int ng_series_run_on(const ng_backend *b, const ng_query *q, uint64_t interval_ms, ng_series *out,
                     char *err, size_t errlen)
{
	if (!b->ch)
		return ng_series_run(b->store, q, interval_ms, out, err, errlen);
	return series_run(b, q, interval_ms, out, err, errlen);
}

void ng_series_free(ng_series *s)
{
	free(s->top);
	free(s->points);
	ng_query_result_free(&s->res);
	memset(s, 0, sizeof *s);
}
