/*
 * query.c — running a query (see query.h) over the store: which of four
 * runs answers it.
 *
 *   - a top-N of one address that the hourly top rollups may answer
 *     (toprollup.c): read them, prove the answer exact, or fall through
 *     to the plain group-by when it cannot be proved;
 *   - a group-by (scan.c ng_run_grouped): the store scanned in parallel,
 *     through the rollups where the plan allows (plan.c), each worker
 *     folding its batches into its own tables (groupby.c, agg.c), the
 *     workers merged, the top N chosen (top.c);
 *   - a listing of the first N flows (listing.c): a serial scan in time
 *     order that stops reading once the N are known;
 *   - a listing of every flow (listing.c): a parallel scan, sorted after.
 *
 * Whatever the run, a filter runs inside the scan on its own columns
 * first (scan.c), so the other columns are decoded only for blocks with
 * a match; the run reads its keys and the values (NG_QUERY_VALUE_COLS)
 * besides, a listing every column.  Ties in a top-N are broken by the key
 * bytes, ascending, so results are deterministic.  query_int.h has the
 * map of the files.
 */
#include "query/query.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "query/query_int.h"

/* The columns a group-by reads after the filter (a filter's own columns
 * are read by the scan's select, ng_use_select, on every path): the
 * values and every key's; sets c's key layout (kwords, either, xform). */
static ng_colset group_columns(const ng_query *q, ng_run_ctx *c)
{
	ng_colset cols = NG_QUERY_VALUE_COLS;
	c->t.kwords = (ng_query_key_len(q) + 7) / 8;
	for (size_t j = 0; j < q->nkeys; j++) {
		cols = ng_colset_union(cols, ng_key_columns(&q->keys[j]));
		if (q->keys[j].alt >= 0)
			c->either = (int)j;
		if (q->keys[j].plen4 || q->keys[j].plen6 || q->keys[j].bucket_ms)
			c->xform = true;
	}
	return cols;
}

/* query_int.h */
const ng_query *ng_query_with_snapshot(const char *dir, const ng_query *q, ng_query *copy,
                                       ng_store_snapshot **own, char *err, size_t errlen)
{
	*own = NULL;
	if (q->snap)
		return q;
	if (!(*own = ng_store_snapshot_take(dir, q->from_ms, q->to_ms))) {
		if (errno == ENOENT)
			snprintf(err, errlen, "%s is not a flow store (no %s/flows directory)", dir,
			         dir);
		else
			snprintf(err, errlen, "out of memory");
		return NULL;
	}
	*copy = *q;
	copy->snap = *own;
	return copy;
}

int ng_query_run(const char *dir, const ng_query *q0, ng_query_result *res, char *err,
                 size_t errlen)
{
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(res, 0, sizeof *res);
	ng_query copy;
	ng_store_snapshot *own;
	const ng_query *q = ng_query_with_snapshot(dir, q0, &copy, &own, err, errlen);
	if (!q)
		return -1;
	ng_run_ctx c = {.q = q, .res = res, .either = -1};
	ng_colset cols;
	if (q->nkeys == 0) {
		cols = ng_colset_all();
	} else {
		if (ng_query_key_len(q) > NG_QUERY_KEY_MAX) {
			snprintf(err, errlen, "group-by key too long");
			ng_store_snapshot_free(own);
			return -1;
		}
		cols = group_columns(q, &c);
	}
	res->first = UINT64_MAX;
	int rc = 1, top = q->nkeys ? ng_top_set_for(q) : -1;
	if (top >= 0)
		rc = ng_run_top(dir, &c, cols, top, res); /* 1: not proved exact */
	if (rc == 1)
		rc = q->nkeys   ? ng_run_grouped(dir, &c, cols, res)
		     : q->limit ? ng_run_listing_first(dir, &c, cols, res)
		                : ng_run_listing_all(dir, &c, cols, res);
	if (rc == -1)
		snprintf(err, errlen, "%s is not a flow store (no %s/flows directory)", dir, dir);
	else if (rc == -3)
		snprintf(err, errlen, "the query ran past its time limit and was stopped");
	else if (rc)
		snprintf(err, errlen, "out of memory");
	if (!res->flows_total)
		res->first = 0;
	/* each damaged segment once, whichever pieces or tables met it */
	uint64_t dmg = ng_store_snapshot_damaged(q->snap, q->from_ms, q->to_ms, NULL, NULL);
	res->scan.errors = res->scan.errors - res->scan.segments_damaged + dmg;
	res->scan.segments_damaged = dmg;
	ng_store_snapshot_free(own);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	res->elapsed_s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	if (rc == -3)
		errno = ETIMEDOUT;
	return rc ? -1 : 0;
}

void ng_query_result_free(ng_query_result *res)
{
	free(res->flows);
	free(res->rows);
	memset(res, 0, sizeof *res);
}
