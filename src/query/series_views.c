/* series_views.c — a series with its reverse direction and previous
 * period, in one call (series.h). */
#include <stdio.h>
#include <string.h>

#include "query/backend.h"
#include "query/filter.h"
#include "query/query_int.h"
#include "query/series.h"
#include "store/store.h"

/* The series of q and, when asked, its reverse, over q->snap. */
static int run_now(const ng_backend *b, const ng_query *q, const char *filter_text,
                   uint64_t interval_ms, bool reverse, ng_series_set *out, char *err, size_t errlen)
{
	if (ng_series_run_on(b, q, interval_ms, &out->main, err, errlen))
		return -1;
	if (!reverse)
		return 0;
	out->rq = *q;
	out->rq.filter = NULL;
	ng_query_reverse_keys(&out->rq);
	if (filter_text && *filter_text) {
		size_t col = 0;
		char ferr[512];
		if (!(out->rq.filter = ng_filter_parse(filter_text, ferr, sizeof ferr, &col))) {
			snprintf(err, errlen, "reverse filter: %s", ferr);
			return -1;
		}
		ng_filter_reverse(out->rq.filter);
	}
	if (ng_series_run_on(b, &out->rq, interval_ms, &out->rev, err, errlen))
		return -1;
	out->has_rev = true;
	return 0;
}

int ng_series_run_set_on(const ng_backend *b, const ng_query *q, const char *filter_text,
                         uint64_t interval_ms, bool reverse, uint64_t prev_ms, ng_series_set *out,
                         char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	if (prev_ms && (interval_ms == 0 || prev_ms % interval_ms || prev_ms > q->from_ms)) {
		snprintf(err, errlen,
		         "the previous period must be a multiple of the interval and "
		         "start after the epoch");
		return -1;
	}
	ng_query copy;
	ng_store_snapshot *own = NULL;
	const ng_query *sq = q;
	if (!b->ch && !(sq = ng_query_with_snapshot(b->store, q, &copy, &own, err, errlen)))
		return -1;
	int rc = run_now(b, sq, filter_text, interval_ms, reverse, out, err, errlen);
	ng_store_snapshot_free(own);
	out->rq.snap = NULL;
	if (rc || !prev_ms)
		return rc;
	out->pq = *q;
	out->pq.snap = NULL;
	out->pq.nkeys = 0;
	out->pq.from_ms = q->from_ms - prev_ms;
	out->pq.to_ms = q->to_ms - prev_ms;
	if (ng_series_run_on(b, &out->pq, interval_ms, &out->prev, err, errlen))
		return -1;
	out->prev_ms = prev_ms;
	out->has_prev = true;
	return 0;
}

int ng_series_run_set(const char *dir, const ng_query *q, const char *filter_text,
                      uint64_t interval_ms, bool reverse, uint64_t prev_ms, ng_series_set *out,
                      char *err, size_t errlen)
{
	ng_backend b = {.store = dir};
	return ng_series_run_set_on(&b, q, filter_text, interval_ms, reverse, prev_ms, out, err,
	                            errlen);
}

void ng_series_set_free(ng_series_set *s)
{
	ng_series_free(&s->main);
	ng_series_free(&s->rev);
	ng_series_free(&s->prev);
	ng_filter_free(s->rq.filter);
	memset(s, 0, sizeof *s);
}
