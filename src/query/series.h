/*
 * series.h — time series: flows, packets and bytes per UTC-aligned time
 * bucket, optionally split by a key into the top N series plus "other".
 *
 * A flow counts in the bucket of its flow_start (like nfdump's and
 * most collectors' per-interval statistics); rates are the bucket's
 * totals over the bucket's length.  The top N keys are those with the
 * largest total (by the query's order) over the whole range; every other
 * key's flows go to an "other" series, so each bucket's series add up to
 * the bucket's total (for keys that are not "either" keys, which count a
 * flow under both sides).
 */
#ifndef NG_SERIES_H
#define NG_SERIES_H

#include <stddef.h>
#include <stdint.h>

#include "query/query.h"

/* One series point: bucket start, series index (0..nseries-1, or
 * nseries for "other"), totals. */
typedef struct ng_series_point {
	uint64_t t; /* bucket start, ms since the epoch, a multiple of interval */
	size_t series;
	uint64_t flows, packets, bytes;
} ng_series_point;

typedef struct ng_series {
	uint64_t interval_ms;
	/* the top series, best first: key (the query's keys, concatenated)
	 * and totals over the range; none when the query has no keys */
	ng_agg_row *top;
	size_t nseries;
	bool has_other;          /* some point belongs to "other" */
	ng_series_point *points; /* by time, then series */
	size_t npoints;
	ng_query_result res; /* totals, scan statistics (rows: none) */
} ng_series;

/*
 * Runs q over the store at `dir` in buckets of interval_ms (≥ 1000):
 * q->keys (0..NG_QUERY_MAX_KEYS-1 of them) split the series, q->limit (0:
 * all) is the number of series kept before "other", q->order ranks them
 * (pps and bps rank as packets and bytes: over one common range the order
 * is the same).  Fills *out (free with ng_series_free).  Returns 0, or -1
 * with a message in err[errlen] (not a store, out of memory, too many
 * keys).
 */
int ng_series_run(const char *dir, const ng_query *q, uint64_t interval_ms, ng_series *out,
                  char *err, size_t errlen);

struct ng_backend;
/* ng_series_run on either backend (query/backend.h): the store's
 * directory, or ClickHouse, where the series' two queries are run there
 * and their "other" folded by the executor (ch_exec.c).  Returns as
 * ng_series_run. */
int ng_series_run_on(const struct ng_backend *b, const ng_query *q, uint64_t interval_ms,
                     ng_series *out, char *err, size_t errlen);

void ng_series_free(ng_series *s);

/*
 * A series with its views (GET /api/v1/series): the series of q, and
 *  - the reverse direction (`reverse`): q with its keys and its filter
 *    turned to the other side (ng_query_reverse_keys, ng_filter_reverse:
 *    for keys dstas and filter "src as 15169", the reverse is keys srcas
 *    and filter "dst as 15169": the traffic coming back), same range,
 *    limit and order, read from the same snapshot as the series;
 *  - the previous period (`prev_ms` > 0, e.g. 1 d or 1 w): the total (no
 *    keys) of q over [from - prev_ms, to - prev_ms), its own snapshot.
 * The reverse's filter is parsed again from filter_text (NULL or "": no
 * filter) and owned by the set.
 */
typedef struct ng_series_set {
	ng_series main, rev, prev;
	ng_query rq, pq; /* the reverse's and the previous period's queries */
	bool has_rev, has_prev;
	uint64_t prev_ms;
} ng_series_set;

/* Runs the series of q and the views asked for into *out (free with
 * ng_series_set_free, also after a failure).  Returns 0, or -1 with a
 * message in err[errlen] (ng_series_run's errors; prev_ms not a multiple
 * of interval_ms or past from_ms). */
int ng_series_run_set(const char *dir, const ng_query *q, const char *filter_text,
                      uint64_t interval_ms, bool reverse, uint64_t prev_ms, ng_series_set *out,
                      char *err, size_t errlen);

/* ng_series_run_set on either backend (query/backend.h). */
int ng_series_run_set_on(const struct ng_backend *b, const ng_query *q, const char *filter_text,
                         uint64_t interval_ms, bool reverse, uint64_t prev_ms, ng_series_set *out,
                         char *err, size_t errlen);

void ng_series_set_free(ng_series_set *s);

/* Parses an interval: "30s", "1m", "5m", "1h", "1d", or seconds.  Returns
 * false when bad or under 1 s. */
bool ng_interval_parse(const char *s, uint64_t *ms);

#endif
