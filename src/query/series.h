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

void ng_series_free(ng_series *s);

/* Parses an interval: "30s", "1m", "5m", "1h", "1d", or seconds.  Returns
 * false when bad or under 1 s. */
bool ng_interval_parse(const char *s, uint64_t *ms);

#endif
