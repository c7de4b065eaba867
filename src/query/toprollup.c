/*
 * toprollup.c — a top-N of one address answered from the hourly top
 * rollups, and the proof that the answer is exact.
 *
 * THE SHORTCUT
 *
 * "The 10 sources that sent the most bytes today" over a day of 20 M
 * flows has millions of distinct addresses, and reading every row to
 * find ten of them is a scan of the whole day.  A top rollup (store.h
 * "Top rollups", docs/store-format.md) keeps, for each segment's hour,
 * only the groups (one address each) among the K = NG_ROLLUP_TOP_K (256)
 * largest by flows, by packets or by bytes, with their exact sums in that
 * hour, and two marker rows (ip_version NG_ROLLUP_MARK) about the groups
 * it left out:
 *
 *   - "bound" (address ::1): for flows, packets and bytes each, the
 *     largest value any ONE left-out group has in this hour (0 for
 *     flows: nothing was left out, the part is complete);
 *   - "rest" (address ::): their sums, for the totals (absent when none).
 *
 * The query reads the whole hours of its range through these and the
 * rest (the ends of the range, and any segment without a top rollup) as
 * rows.  Each segment's top rollup is one "part".  A part lists some of
 * its groups exactly and says of every other one only that it is at most
 * the bound.  The answer must be the one the rows would give, so it is
 * proved before it is given; when it cannot be, the query reads the rows
 * instead (ng_run_top returns 1, and ng_query_run runs the plain
 * group-by).  Nothing about the data is assumed: a proof either holds or
 * the rows are read.
 *
 * THE PROOF
 *
 * Let m be the order metric (flows, packets or bytes) and true(g) a
 * group's m over the range.  These metrics are sums, so true(g) is the
 * sum of g's m in the rows read and in each part.  For every group the
 * query has met (in the rows, or listed by some part) it knows:
 *
 *   lo(g) = m in the rows read + m in every part that lists g
 *           (the group's row in the merged table: met[] below)
 *   hi(g) = lo(g) + the bounds of the parts that do not list g
 *         = lo(g) + T - tin(g)
 *
 * where T is the sum of every part's bound and tin(g) the sum of the
 * bounds of the parts that list g.  In a part that does not list g, g has
 * at most that part's bound, so lo(g) ≤ true(g) ≤ hi(g).  A group met
 * nowhere has lo 0 and true value at most T.
 *
 * Take S, the N groups with the largest lo (ties to the smaller key, as
 * every top-N), and th the N-th largest lo, the smallest in S.  S is the
 * exact answer when
 *
 *   (1) every group of S is listed by every part that left a group out
 *       (nin(g) = ninc): a complete part lists all its groups, so then
 *       lo(g) = true(g) for each g in S, and S's order and figures are
 *       the true ones;
 *   (2) every other group met has hi(g) < th; and
 *   (3) T < th, for the groups met nowhere.
 *
 * For then any group g outside S has true(g) ≤ hi(g) < th ≤ true(s) for
 * every s in S: all of S beats all of the rest, so S is the true top N,
 * and by (1) it is given with the true sums in the true order.  The
 * inequalities are strict on purpose: a group that might tie with the
 * N-th would be ranked by its key, and for that its true value would
 * have to be known.  When fewer than N groups were met at all while some
 * part left groups out, the answer would need groups nobody listed: no
 * proof.  And when no part left anything out, every lo is true and no
 * proof is needed (ng_top_exact).
 *
 * On a day of real traffic, heavy-tailed, the top N are far above the
 * bound of any hour (the largest group an hour left out is smaller than
 * its K largest), so (1)-(3) hold by a wide margin; on uniform traffic (test_query_toprollup.c's
 * uniform destinations) they fail and the rows are read.
 *
 * WHEN IT APPLIES (ng_top_set_for)
 *
 * Only where the argument above holds: one address key, whole addresses
 * (a /24 group would sum many left-out addresses, each under the bound
 * but together not), one side (the rollups are per side; an "ip" key
 * counts a flow under both), ordered by flows, packets or bytes (sums;
 * a part's bound says nothing of a rate), no filter (the rollup's sums
 * cover every flow of its hour; a filter that passes every flow, such as
 * "any", is no filter), N < K (a part lists K groups per metric, so a
 * larger N could rarely be proved), no fold, and at least one whole hour
 * in the range (the top rollups are hourly).
 *
 * The totals are exact either way: a part's listed groups and its rest
 * row sum to its hour.  `groups`, though, counts the groups met (a lower
 * bound), and the result says so (groups_exact false) unless no part
 * left any out.  The figures are integers below 2^53 (9·10^15) and so
 * are their sums: the comparisons in doubles are exact.
 */
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "query/query_int.h"

/* One row of a top rollup, kept for the proof (the parts are only
 * complete once every worker is done). */
typedef struct ng_top_row {
	uint64_t segment; /* the batch's segment: one part */
	uint8_t addr[16];
	bool mark; /* a marker row (ip_version NG_ROLLUP_MARK) */
	uint64_t flows, packets, bytes, first, last;
} ng_top_row;

/* Per group of the merged table (by row index): the bounds of the parts
 * that list it summed, and how many of those parts left groups out. */
struct ng_top_cover {
	uint64_t *tin;
	uint32_t *nin;
	size_t cap;
	uint64_t T;    /* every part's bound */
	uint32_t ninc; /* parts that left groups out */
};

/* ---- when, and what to read ---------------------------------------------- */

/* The whole hours [*a, *b) of q's range. */
static void top_hours(const ng_query *q, uint64_t *a, uint64_t *b)
{
	const uint64_t l = ng_rollup_levels_ms[0];
	*a = q->from_ms > UINT64_MAX - l ? UINT64_MAX : q->from_ms + (l - q->from_ms % l) % l;
	*b = q->to_ms - q->to_ms % l;
}

/* True when q's filter passes every flow: none, or one that reads no
 * column and passes one flow (nfdump's "any", as for an empty filter). */
static bool passes_all(const ng_query *q)
{
	ng_flow f = {0};
	return !q->filter || (ng_colset_empty(ng_filter_columns(q->filter)) &&
	                      ng_filter_match_flow(q->filter, &f));
}

/* One address key (no prefix, no either), no filter, no key_prefix,
 * ordered by flows, packets or bytes, a limit the rollups can hold, and
 * a whole hour in the range (see "When it applies"). */
int ng_top_set_for(const ng_query *q)
{
	if (q->no_rollup || !passes_all(q) || q->nfold || q->nfolds || q->nkeys != 1 ||
	    (q->key_prefix && *q->key_prefix) || q->order > NG_ORDER_BYTES || !q->limit ||
	    q->limit >= NG_ROLLUP_TOP_K)
		return -1;
	const ng_group_key *g = &q->keys[0];
	uint64_t a, b;
	top_hours(q, &a, &b);
	if (g->alt >= 0 || g->plen4 || g->plen6 || g->bucket_ms || a >= b)
		return -1;
	return ng_rollup_top_set(g->field);
}

/* A segment of the whole hours without the top rollup is read as rows. */
int ng_scan_top(const ng_part_scan *p, int set)
{
	const ng_query *q = p->ws->w[0].q;
	uint64_t a, b;
	top_hours(q, &a, &b);
	char suffix[32];
	if (ng_rollup_suffix((unsigned)set, 0, suffix, sizeof suffix))
		return -1;
	int rc = ng_scan_part(p, a, b, suffix);
	if (rc == 0 && q->from_ms < a)
		rc = ng_scan_part(p, q->from_ms, a, NULL);
	if (rc == 0 && b < q->to_ms)
		rc = ng_scan_part(p, b, q->to_ms, NULL);
	return rc;
}

/* ng_scan_opts.fn_par of a top-N scan: rows aggregate as always, a top
 * rollup's rows (b->flows set) are kept in the worker's c->top for
 * top_merge.  Returns 0, or 1 to stop the scan. */
static int on_batch_top(const ng_column_batch *b, unsigned worker, void *arg)
{
	ng_run_ctx *c = &((ng_run_ctx *)arg)[worker];
	if (!b->flows)
		return ng_on_batch_agg(b, c);
	if (c->ntop + b->n > c->top_cap) {
		size_t cap = (c->ntop + b->n) * 2;
		ng_top_row *t = realloc(c->top, cap * sizeof *t);
		if (!t) {
			c->oom = true;
			return 1;
		}
		c->top = t;
		c->top_cap = cap;
	}
	const uint8_t *addr = b->col[c->q->keys[0].field], *ver = b->col[NG_F_IP_VERSION];
	const uint64_t *start = b->col[NG_F_FLOW_START], *end = b->col[NG_F_FLOW_END];
	const uint64_t *pk = b->col[NG_F_PACKETS], *by = b->col[NG_F_BYTES];
	for (size_t i = 0; i < b->n; i++) {
		ng_top_row *t = &c->top[c->ntop++];
		t->segment = b->segment;
		memcpy(t->addr, addr + 16 * i, 16);
		t->mark = ver[i] == NG_ROLLUP_MARK;
		t->flows = b->flows[i];
		t->packets = pk[i];
		t->bytes = by[i];
		t->first = start[i];
		t->last = end[i];
	}
	return 0;
}

/* ---- the proof ------------------------------------------------------------ */

/* qsort comparison of top rollup rows by segment: a part's rows together. */
static int cmp_top_segment(const void *a, const void *b)
{
	const ng_top_row *x = a, *y = b;
	return x->segment < y->segment ? -1 : x->segment > y->segment;
}

bool ng_top_exact(const ng_top_cover *cv)
{
	return cv->ninc == 0;
}

/* Room for row j in cv's arrays (cap: the table's), new entries zero.
 * Returns 0 or -2 (out of memory). */
static int cover_room(ng_top_cover *cv, size_t j, size_t cap)
{
	if (j < cv->cap)
		return 0;
	uint64_t *t = realloc(cv->tin, cap * sizeof *t);
	if (t)
		cv->tin = t;
	uint32_t *v = realloc(cv->nin, cap * sizeof *v);
	if (v)
		cv->nin = v;
	if (!t || !v)
		return -2;
	memset(t + cv->cap, 0, (cap - cv->cap) * sizeof *t);
	memset(v + cv->cap, 0, (cap - cv->cap) * sizeof *v);
	cv->cap = cap;
	return 0;
}

/* Adds one part's rows p[0..n) (a segment's top rollup) to c's table
 * (lo), to its totals and to *cv (T, tin, nin, ninc).  Returns 0, 1 (not
 * exactly one bound row: not a usable top rollup, the proof is off) or
 * -2 (out of memory). */
static int top_part(ng_run_ctx *c, const ng_top_row *p, size_t n, ng_top_cover *cv)
{
	const ng_top_row *bound = NULL;
	for (size_t i = 0; i < n; i++)
		if (p[i].mark && p[i].addr[15] == 1) {
			if (bound)
				return 1;
			bound = &p[i];
		}
	if (!bound)
		return 1;
	const uint64_t m[3] = {bound->flows, bound->packets, bound->bytes};
	bool left_out = bound->flows != 0;
	cv->T += m[c->q->order];
	cv->ninc += left_out;
	ng_query_result *res = c->res;
	for (size_t i = 0; i < n; i++) {
		const ng_top_row *t = &p[i];
		if (t == bound)
			continue;
		res->flows_total += t->flows;
		res->packets_total += t->packets;
		res->bytes_total += t->bytes;
		res->first = t->first < res->first ? t->first : res->first;
		res->last = t->last > res->last ? t->last : res->last;
		if (t->mark)
			continue; /* the rest: totals only */
		uint64_t k[2];
		memcpy(k, t->addr, 16);
		ng_agg_row *r = ng_agg_table_get(&c->t, k, ng_hash_words(k, 2));
		if (!r)
			return -2;
		ng_agg_row_add(r, t->flows, t->packets, t->bytes, t->first, t->last);
		size_t j = (size_t)(r - c->t.rows);
		if (cover_room(cv, j, c->t.rows_cap))
			return -2;
		cv->tin[j] += m[c->q->order];
		cv->nin[j] += left_out;
	}
	return 0;
}

/* Checks conditions (1) to (3) of the proof above on the chosen h[0..N):
 * th is the N-th lo, T - tin[i] the most group i may still have in the
 * parts that do not list it.  met[] (lo per group) is overwritten. */
int ng_top_proved(const ng_query *q, ng_top_cover *cv, double *met, size_t n, const size_t *h)
{
	if (ng_top_exact(cv))
		return 0;
	if (cover_room(cv, n, n + 1))
		return -1; /* rows only seen in the rows get their (zero) entries */
	if (n < q->limit)
		return 1; /* a group seen nowhere might be in it */
	double th = met[h[q->limit - 1]];
	if (!((double)cv->T < th))
		return 1; /* (3) */
	for (size_t i = 0; i < q->limit; i++)
		if (cv->nin[h[i]] != cv->ninc)
			return 1; /* (1) */
	for (size_t i = 0; i < q->limit; i++)
		met[h[i]] = -1; /* out of the way of the check below */
	for (size_t i = 0; i < n; i++)
		if (met[i] >= 0 && !(met[i] + (double)(cv->T - cv->tin[i]) < th))
			return 1; /* (2) */
	return 0;
}

/* Merges the workers' tables and top rollup rows into w[0] and proves
 * its top N.  Returns 0, 1 (not proved) or -2 (out of memory). */
static int top_merge(ng_run_ctx *w, unsigned nw, const ng_query_result *part)
{
	size_t total = 0;
	for (unsigned i = 0; i < nw; i++)
		total += w[i].ntop;
	ng_top_row *all = malloc((total ? total : 1) * sizeof *all);
	if (!all)
		return -2;
	for (unsigned i = 0, k = 0; i < nw; k += w[i].ntop, i++)
		if (w[i].ntop)
			memcpy(all + k, w[i].top, w[i].ntop * sizeof *all);
	qsort(all, total, sizeof *all, cmp_top_segment);
	int rc = ng_merge_workers(w, nw, part);
	ng_top_cover cv = {0};
	for (size_t i = 0, j; rc == 0 && i < total; i = j) {
		for (j = i; j < total && all[j].segment == all[i].segment; j++)
			;
		rc = top_part(&w[0], all + i, j - i, &cv);
	}
	if (rc == 0 && (rc = ng_finish_top(&w[0], &cv)) < 0)
		rc = -2;
	free(all);
	free(cv.tin);
	free(cv.nin);
	return rc;
}

int ng_run_top(const char *dir, ng_run_ctx *proto, ng_colset cols, int set, ng_query_result *res)
{
	ng_workers ws;
	ng_colset_add(&cols, NG_F_IP_VERSION);
	int rc = ng_scan_workers(dir, proto, cols, on_batch_top, true, set, res, &ws);
	if (rc == 0)
		rc = top_merge(ws.w, ws.n, ws.part);
	ng_workers_free(&ws);
	if (rc == 1) {
		ng_query_result_free(res);
		res->first = UINT64_MAX;
	}
	return rc;
}
