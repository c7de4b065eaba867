/*
 * listing.c — a query without group-by keys: the matching flows
 * themselves, in flow_start order.
 *
 * Every column is read (a listing prints whole records), each matching
 * row copied out as an ng_flow together with its place in the scan, seq
 * = segment << 32 | row.  Flows that start at the same millisecond keep
 * that order, so a listing is the same every time and for a serial and a
 * parallel scan.
 *
 * With a limit N (nfdump -c N) the listing wants the first N flows by
 * (flow_start, seq).  They are kept in a max-heap of N, the latest kept
 * flow at the root: a later row costs one comparison, an earlier one
 * replaces the root.  The scan is serial, one segment after another in
 * time order, so that once the heap is full a segment whose earliest
 * flow starts at or after the root's is not read at all (want_segment):
 * a `-c 10` over a day reads a segment or two, not the day.  The totals
 * then cover the segments read, as nfdump's do with -c.
 *
 * Without a limit every matching flow is wanted, so the segments are
 * scanned in parallel (scan.c), each worker keeping its flows in an
 * array; the arrays are appended and sorted by (flow_start, seq), which
 * is the order the serial scan would have given.
 */
#include <stdlib.h>
#include <string.h>

#include "query/query_int.h"

/* True when flow a (scan place sa) comes before b (sb) in a listing. */
static bool list_before(const ng_flow *a, uint64_t sa, const ng_flow *b, uint64_t sb)
{
	return a->flow_start != b->flow_start ? a->flow_start < b->flow_start : sa < sb;
}

/* Swaps kept flows i and j with their scan places. */
static void heap_swap(ng_run_ctx *c, size_t i, size_t j)
{
	ng_flow t = c->list[i];
	c->list[i] = c->list[j];
	c->list[j] = t;
	uint64_t s = c->seq[i];
	c->seq[i] = c->seq[j];
	c->seq[j] = s;
}

/* Max-heap by (flow_start, seq): the root is the latest kept flow.
 * Sifts entry i down. */
static void heap_down(ng_run_ctx *c, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < c->nlist && list_before(&c->list[m], c->seq[m], &c->list[l], c->seq[l]))
			m = l;
		if (r < c->nlist && list_before(&c->list[m], c->seq[m], &c->list[r], c->seq[r]))
			m = r;
		if (m == i)
			return;
		heap_swap(c, i, m);
		i = m;
	}
}

/* Sifts entry i up the heap. */
static void heap_up(ng_run_ctx *c, size_t i)
{
	while (i) {
		size_t p = (i - 1) / 2;
		if (!list_before(&c->list[p], c->seq[p], &c->list[i], c->seq[i]))
			return;
		heap_swap(c, i, p);
		i = p;
	}
}

/* Row i of batch b as a record; the columns the batch lacks are zero. */
static void row_to_flow(const ng_column_batch *b, size_t i, ng_flow *r)
{
	memset(r, 0, sizeof *r);
	for (size_t f = 0; f < NG_FIELD_COUNT; f++)
		if (b->col[f])
			memcpy((uint8_t *)r + ng_fields[f].offset,
			       (const uint8_t *)b->col[f] + i * ng_fields[f].size,
			       ng_fields[f].size);
}

/* Makes c's list and seq arrays hold cap entries (cap ≥ c->nlist).
 * Returns 0, or -1 when out of memory (both still valid, list_cap kept). */
static int list_room(ng_run_ctx *c, size_t cap)
{
	ng_flow *l = realloc(c->list, cap * sizeof *l);
	uint64_t *s = realloc(c->seq, cap * sizeof *s);
	if (l)
		c->list = l;
	if (s)
		c->seq = s;
	if (!l || !s)
		return -1;
	c->list_cap = cap;
	return 0;
}

/* Keeps row i of b: into the heap of the first q->limit, or appended
 * when there is no limit.  Returns 0, or -1 when out of memory. */
static int list_row(ng_run_ctx *c, const ng_column_batch *b, size_t i)
{
	size_t limit = c->q->limit;
	ng_flow r;
	row_to_flow(b, i, &r);
	/* the scan's order, the same for a serial and a parallel scan */
	uint64_t seq = b->segment << 32 | ng_batch_row(b, i);
	if (limit && c->nlist == limit) {
		if (!list_before(&r, seq, &c->list[0], c->seq[0]))
			return 0;
		c->list[0] = r;
		c->seq[0] = seq;
		heap_down(c, 0);
		return 0;
	}
	if (c->nlist == c->list_cap && list_room(c, c->list_cap ? c->list_cap * 2 : 256))
		return -1;
	c->list[c->nlist] = r;
	c->seq[c->nlist] = seq;
	c->nlist++;
	if (limit)
		heap_up(c, c->nlist - 1);
	return 0;
}

/* A listing that holds its first `limit` flows needs no segment whose
 * rows all start at or after the latest kept one: they would come after
 * it.  (Totals then cover the segments read, as nfdump's do with -c.) */
static bool want_segment(const ng_segment_info *s, void *arg)
{
	const ng_run_ctx *c = arg;
	return !(c->q->limit && c->nlist == c->q->limit && s->start_min >= c->list[0].flow_start);
}

/* ng_scan_opts.fn of a listing: adds b's matching rows to the totals and
 * keeps them.  Returns 0, or 1 to stop the scan (oom or deadline). */
static int on_batch_list(const ng_column_batch *b, void *arg)
{
	ng_run_ctx *c = arg;
	ng_query_result *res = c->res;
	const uint8_t *match;
	if (ng_past_deadline(c))
		return 1;
	if (ng_eval_filter(c, b, &match))
		goto oom;
	const uint64_t *start = b->col[NG_F_FLOW_START], *end = b->col[NG_F_FLOW_END];
	const uint64_t *pk = b->col[NG_F_PACKETS], *by = b->col[NG_F_BYTES];
	for (size_t i = 0; i < b->n; i++) {
		if (match && !match[i])
			continue;
		res->flows_total++;
		res->packets_total += pk[i];
		res->bytes_total += by[i];
		if (start[i] < res->first)
			res->first = start[i];
		if (end[i] > res->last)
			res->last = end[i];
		if (list_row(c, b, i))
			goto oom;
	}
	return 0;
oom:
	c->oom = true;
	return 1;
}

/* ng_scan_opts.fn_par of a listing: on_batch_list on worker `worker` of
 * the ng_run_ctx array `arg`. */
static int on_batch_list_par(const ng_column_batch *b, unsigned worker, void *arg)
{
	ng_run_ctx *w = arg;
	return on_batch_list(b, &w[worker]);
}

/* qsort_r comparison of indices of c's kept flows, in listing order. */
static int cmp_listed(const void *a, const void *b, void *arg)
{
	const ng_run_ctx *c = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	if (list_before(&c->list[i], c->seq[i], &c->list[j], c->seq[j]))
		return -1;
	return list_before(&c->list[j], c->seq[j], &c->list[i], c->seq[i]) ? 1 : 0;
}

/* Moves the kept flows into c->res (a new array, the result's), in
 * flow_start order.  Returns 0, or -1 when out of memory. */
static int finish_listing(ng_run_ctx *c)
{
	size_t n = c->nlist;
	size_t *idx = malloc((n ? n : 1) * sizeof *idx);
	ng_flow *out = malloc((n ? n : 1) * sizeof *out);
	if (!idx || !out) {
		free(idx);
		free(out);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	qsort_r(idx, n, sizeof *idx, cmp_listed, c);
	for (size_t i = 0; i < n; i++)
		out[i] = c->list[idx[i]];
	free(idx);
	c->res->flows = out;
	c->res->nflows = n;
	return 0;
}

int ng_run_listing_first(const char *dir, ng_run_ctx *c, ng_colset cols, ng_query_result *res)
{
	const ng_query *q = c->q;
	ng_scan_opts so = {.from_ms = q->from_ms,
	                   .to_ms = q->to_ms,
	                   .columns = cols,
	                   .fn = on_batch_list,
	                   .want = want_segment,
	                   .arg = c,
	                   .snap = q->snap};
	if (q->filter && !q->no_prune)
		so.may_match = ng_may_match;
	ng_use_select(&so, c, 1);
	int rc = ng_store_scan_opts(dir, &so, &res->scan);
	if (rc != -1)
		rc = c->timed_out ? -3 : c->oom || finish_listing(c) ? -2 : 0;
	ng_run_ctx_free(c);
	return rc;
}

/* Moves worker w's kept flows to the end of dst's list (w's freed).
 * Returns 0, or -1 when out of memory. */
static int append_list(ng_run_ctx *dst, ng_run_ctx *w)
{
	size_t n = dst->nlist + w->nlist;
	if (n > dst->list_cap && list_room(dst, n))
		return -1;
	if (w->nlist) {
		memcpy(dst->list + dst->nlist, w->list, w->nlist * sizeof *w->list);
		memcpy(dst->seq + dst->nlist, w->seq, w->nlist * sizeof *w->seq);
	}
	dst->nlist = n;
	free(w->list); /* a long listing is held once, not twice */
	free(w->seq);
	w->list = NULL;
	w->seq = NULL;
	w->nlist = w->list_cap = 0;
	return 0;
}

int ng_run_listing_all(const char *dir, ng_run_ctx *proto, ng_colset cols, ng_query_result *res)
{
	ng_workers ws;
	int rc = ng_scan_workers(dir, proto, cols, on_batch_list_par, false, -1, res, &ws);
	for (unsigned i = 1; i < ws.n && rc == 0; i++) {
		if (append_list(&ws.w[0], &ws.w[i]))
			rc = -2;
		ng_add_totals(res, &ws.part[i]);
	}
	if (rc == 0 && finish_listing(&ws.w[0]))
		rc = -2;
	ng_workers_free(&ws);
	return rc;
}
