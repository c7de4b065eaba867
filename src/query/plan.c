/*
 * plan.c — which pieces of a group-by's range are read through which
 * rollup.
 *
 * A rollup (store.h, docs/store-format.md "Rollups") sums a segment's
 * flows per time bucket (1 hour or 5 minutes, epoch-aligned) and per
 * distinct value of a small set of fields.  A row of it has the bucket's
 * earliest flow_start, latest flow_end, the sums of packets and bytes and
 * the number of flows it stands for; every aggregate a group-by computes
 * (flows, packets, bytes, first, last, and the rates from them) is the
 * same over those rows as over the flows.  So a group-by may read a
 * rollup instead of the rows whenever:
 *
 *   - every field its keys and its filter read is one of the set's
 *     (ng_rollup_pick finds the first such set, the one with the fewest
 *     groups); a key that is a time bucket of flow_start is fine, but
 *     a filter on flow_start is not (a rollup row's flow_start is its
 *     bucket's earliest, not each flow's), nor a key with an address
 *     prefix or a bucket of another field;
 *   - the rollup's buckets nest in the query's time buckets: each of
 *     these is a whole number of the level's (level_fits), so all the
 *     flows of a rollup row fall in one of the query's buckets;
 *   - and the range is cut on the level's bucket boundaries.
 *
 * The range [from, to) is therefore cut (ng_scan_levels): the whole 1-hour
 * buckets inside it are read through the hourly rollup, the pieces at
 * either end go down to the 5-minute level the same way, and what no level
 * covers (the minutes at the very ends) is read as rows.  A rollup row's
 * flow_start lies in its bucket, and every piece starts and ends on its
 * level's boundaries, so the scan's time slicing is as exact over the
 * rollups as over the rows.  A segment without the rollup (not written
 * yet: maintenance writes it once the hour has settled) is read as rows
 * within the same piece, so the answer never depends on which rollups
 * exist; the summary's segments_rollup counts those read through one.
 *
 * q->no_rollup reads rows only (tests compare both ways).  A top-N of one
 * address uses the top rollups instead, with its own plan (toprollup.c).
 */
#include "query/query_int.h"

bool ng_query_rollup_columns(const ng_query *q, ng_colset *need)
{
	if (q->no_rollup || !q->nkeys)
		return false;
	*need = q->filter ? ng_filter_columns(q->filter) : (ng_colset){{0}};
	if (ng_colset_has(*need, NG_F_FLOW_START))
		return false; /* a filter on a flow's own times */
	for (size_t j = 0; j < q->nkeys; j++) {
		const ng_group_key *g = &q->keys[j];
		if (g->field == NG_F_FLOW_START && g->bucket_ms)
			continue;
		if (g->plen4 || g->plen6 || g->bucket_ms)
			return false;
		*need = ng_colset_union(*need, ng_key_columns(g));
	}
	return true;
}

int ng_rollup_set_for(const ng_query *q)
{
	ng_colset need;
	return ng_query_rollup_columns(q, &need) ? ng_rollup_pick(need) : -1;
}

/* True when every time bucket of q is a whole number of `level_ms`
 * buckets (both are aligned on the epoch), so a rollup row's flows all
 * fall in one of q's buckets. */
static bool level_fits(const ng_query *q, uint64_t level_ms)
{
	for (size_t j = 0; j < q->nkeys; j++)
		if (q->keys[j].bucket_ms && q->keys[j].bucket_ms % level_ms)
			return false;
	return true;
}

/*
 * The whole buckets [a, b) of the level inside [from, to) from its
 * rollups, the pieces at either end from the next level, and from the
 * rows after the finest level (or with no set: set < 0).  A level the
 * query's buckets do not fit, or the set does not have, is passed over.
 */
int ng_scan_levels(const ng_part_scan *p, uint64_t from, uint64_t to, int set, unsigned level)
{
	if (from >= to)
		return 0;
	if (set < 0 || level >= NG_ROLLUP_NLEVELS)
		return ng_scan_part(p, from, to, NULL);
	const uint64_t l = ng_rollup_levels_ms[level];
	if (from > UINT64_MAX - l) /* no whole bucket fits, and a would overflow */
		return ng_scan_levels(p, from, to, set, level + 1);
	uint64_t a = from + (l - from % l) % l, b = to - to % l;
	char suffix[32];
	if (!level_fits(p->ws->w[0].q, l) || a >= b ||
	    ng_rollup_suffix((unsigned)set, level, suffix, sizeof suffix))
		return ng_scan_levels(p, from, to, set, level + 1);
	int rc = ng_scan_part(p, a, b, suffix);
	if (rc == 0)
		rc = ng_scan_levels(p, from, a, set, level + 1);
	if (rc == 0)
		rc = ng_scan_levels(p, b, to, set, level + 1);
	return rc;
}
