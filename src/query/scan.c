/*
 * scan.c — driving the store's scan for a query, and merging what its
 * workers found.
 *
 * ng_store_scan_opts (store.h) hands over one segment's matching time
 * slice at a time as column arrays, on a pool of workers (fn_par) or on
 * the calling thread (fn).  The query keeps one ng_run_ctx per worker:
 * its own tables, filter state, buffers and totals (into the caller's
 * result for worker 0, into part[i] for the others), so the workers share
 * nothing and take no lock.  After the scan the others are merged into
 * worker 0: totals added, fast tables folded into the generic table,
 * generic tables merged (ng_merge_workers); merging is per group, not
 * per row, so it costs little beside the scan.
 *
 * A filter runs inside the scan, as its select (select_rows): the scan
 * decodes the filter's own columns first, asks for the matching rows of
 * each block, and decodes the other columns only for blocks with a match
 * (late materialization); a batch then holds matching rows only (presel).
 * A filter column that nothing after it reads may come as the codes of a
 * RANK dictionary, each distinct value tested once (select_codes).  The
 * segments' zone maps skip whole segments the filter cannot match
 * (ng_may_match) unless q->no_prune.
 *
 * The HTTP API's run-time limit is checked once a batch (≤ 16384 rows):
 * a clock read is nothing beside it, and a run past it stops at the next
 * batch with timed_out set.
 *
 * Which pieces of the range are read, and through which rollup, is the
 * plan's (plan.c; toprollup.c for a top-N through top rollups);
 * ng_scan_part scans one piece with the workers' state.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "query/query_int.h"

bool ng_past_deadline(ng_run_ctx *c)
{
	if (!c->q->deadline_ms)
		return false;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t now = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	if (now >= c->q->deadline_ms)
		c->timed_out = true;
	return c->timed_out;
}

int ng_eval_filter(ng_run_ctx *c, const ng_column_batch *b, const uint8_t **match)
{
	*match = NULL;
	c->nmatch = b->n;
	if (!c->q->filter || c->presel)
		return 0;
	if (b->n > c->match_cap) {
		uint8_t *m = realloc(c->match, b->n);
		if (!m)
			return -1;
		c->match = m;
		c->match_cap = b->n;
	}
	if (!c->fctx && !(c->fctx = ng_filter_ctx_new(c->q->filter)))
		return -1;
	size_t k = ng_filter_eval_ctx(c->q->filter, c->fctx, b, c->match);
	*match = c->match;
	c->nmatch = k;
	return k == (size_t)-1 ? -1 : 0;
}

bool ng_may_match(const ng_zone_map *z, void *arg)
{
	const ng_run_ctx *c = arg;
	return ng_filter_may_match(c->q->filter, z);
}

/* ng_scan_opts.select: the filter on its own columns, before the scan
 * decodes the others (late materialization).  `arg` is the array of the
 * workers' contexts (one for a serial scan).  Returns 0 with the matching
 * rows in sel[0..*nsel), or 1 to stop the scan (oom or deadline). */
static int select_rows(const ng_column_batch *b, unsigned worker, void *arg, uint32_t *sel,
                       size_t *nsel)
{
	ng_run_ctx *c = (ng_run_ctx *)arg + worker;
	const uint8_t *match;
	if (ng_past_deadline(c))
		return 1;
	c->presel = false;
	int rc = ng_eval_filter(c, b, &match);
	c->presel = true;
	if (rc) {
		c->oom = true;
		return 1;
	}
	size_t n = 0;
	for (size_t i = 0; c->nmatch && i < b->n; i++) { /* branch-free compaction */
		sel[n] = (uint32_t)i;
		n += match[i];
	}
	*nsel = n;
	return 0;
}

void ng_use_select(ng_scan_opts *so, ng_run_ctx *ctx, unsigned nw)
{
	if (!ctx->q->filter)
		return;
	so->select = select_rows;
	so->select_columns = ng_filter_columns(ctx->q->filter);
	/* a filter's column that nothing after it reads may come as the
	 * codes of a RANK dictionary: each distinct value tested once */
	so->select_codes = ng_colset_minus(ng_filter_code_columns(ctx->q->filter), so->columns);
	for (unsigned i = 0; i < nw; i++)
		ctx[i].presel = true;
}

void ng_run_ctx_free(ng_run_ctx *c)
{
	free(c->match);
	ng_filter_ctx_free(c->fctx);
	free(c->list);
	free(c->seq);
	ng_agg_table_free(&c->t);
	free(c->idx);
	free(c->k32);
	free(c->k16);
	free(c->k64);
	ng_agg32_free(&c->t32);
	ng_aggdirect_free(&c->td);
	ng_agg64_free(&c->t64);
	free(c->top);
}

void ng_workers_free(ng_workers *ws)
{
	for (unsigned i = 0; ws->w && i < ws->n; i++)
		ng_run_ctx_free(&ws->w[i]);
	free(ws->w);
	free(ws->part);
}

int ng_scan_part(const ng_part_scan *p, uint64_t from, uint64_t to, const char *rollup)
{
	const ng_query *q = p->ws->w[0].q;
	ng_scan_opts so = {.from_ms = from,
	                   .to_ms = to,
	                   .columns = p->cols,
	                   .fn_par = p->fn_par,
	                   .threads = p->ws->n,
	                   .arg = p->ws->w,
	                   .rollup = rollup,
	                   .snap = q->snap};
	if (q->filter && !q->no_prune)
		so.may_match = ng_may_match;
	ng_use_select(&so, p->ws->w, p->ws->n);
	ng_scan_stats st;
	int rc = ng_store_scan_opts(p->dir, &so, &st);
	ng_scan_stats_add(&p->res->scan, &st);
	return rc;
}

int ng_scan_workers(const char *dir, ng_run_ctx *proto, ng_colset cols,
                    int (*fn_par)(const ng_column_batch *, unsigned, void *), bool fast,
                    int top_set, ng_query_result *res, ng_workers *ws)
{
	const ng_query *q = proto->q;
	ws->n = ng_store_scan_threads(q->threads);
	ws->w = calloc(ws->n, sizeof *ws->w);
	ws->part = calloc(ws->n, sizeof *ws->part);
	if (!ws->w || !ws->part)
		return -2;
	for (unsigned i = 0; i < ws->n; i++) {
		ws->w[i] = *proto;
		ws->w[i].res = i == 0 ? res : &ws->part[i];
		ws->w[i].res->first = UINT64_MAX;
		if (fast)
			ng_choose_fast(&ws->w[i]);
	}
	ng_part_scan ps = {dir, ws, cols, fn_par, res};
	if ((top_set >= 0
	         ? ng_scan_top(&ps, top_set)
	         : ng_scan_levels(&ps, q->from_ms, q->to_ms, ng_rollup_set_for(q), 0)) == -1)
		return -1;
	for (unsigned i = 0; i < ws->n; i++)
		if (ws->w[i].timed_out)
			return -3;
	for (unsigned i = 0; i < ws->n; i++)
		if (ws->w[i].oom)
			return -2;
	return 0;
}

void ng_add_totals(ng_query_result *res, const ng_query_result *part)
{
	res->flows_total += part->flows_total;
	res->packets_total += part->packets_total;
	res->bytes_total += part->bytes_total;
	res->first = part->first < res->first ? part->first : res->first;
	res->last = part->last > res->last ? part->last : res->last;
}

/* True when every group of the workers sits in their IPv4 tables. */
static bool only_v4(const ng_run_ctx *w, unsigned nw)
{
	for (unsigned i = 0; i < nw; i++)
		if (w[i].fast != NG_FAST_V4 || w[i].t.n)
			return false;
	return true;
}

/* Merges the workers' IPv4 tables and totals into w[0] and picks the top
 * there.  Returns 0 or -2 (out of memory). */
static int merge_v4(ng_run_ctx *w, unsigned nw, const ng_query_result *part)
{
	for (unsigned i = 1; i < nw; i++) {
		if (ng_agg32_merge(&w[0].t32, &w[i].t32))
			return -2;
		ng_agg32_free(&w[i].t32);
		ng_add_totals(w[0].res, &part[i]);
	}
	return ng_finish_top32(&w[0]) ? -2 : 0;
}

int ng_merge_workers(ng_run_ctx *w, unsigned nw, const ng_query_result *part)
{
	/* direct tables (keys of 16 bits) add up element by element, without
	 * hashing each worker's groups into its generic table and then that
	 * table into worker 0's */
	for (unsigned i = 1; i < nw; i++)
		ng_aggdirect_merge(&w[0].td, &w[i].td);
	for (unsigned i = 0; i < nw; i++)
		if (ng_fold_fast(&w[i]))
			return -2;
	for (unsigned i = 1; i < nw; i++) {
		if (ng_agg_table_merge(&w[0].t, &w[i].t))
			return -2;
		ng_add_totals(w[0].res, &part[i]);
	}
	return 0;
}

/* ng_merge_workers, then the top.  Returns 0 or -2. */
static int merge_generic(ng_run_ctx *w, unsigned nw, const ng_query_result *part)
{
	return ng_merge_workers(w, nw, part) || ng_finish_top(&w[0], NULL) ? -2 : 0;
}

int ng_run_grouped(const char *dir, ng_run_ctx *proto, ng_colset cols, ng_query_result *res)
{
	ng_workers ws;
	int rc = ng_scan_workers(dir, proto, cols, ng_on_batch_par, true, -1, res, &ws);
	if (rc == 0)
		rc = only_v4(ws.w, ws.n) ? merge_v4(ws.w, ws.n, ws.part)
		                         : merge_generic(ws.w, ws.n, ws.part);
	ng_workers_free(&ws);
	return rc;
}
