/*
 * query_int.h — what the files of the query executor share (internal to
 * src/query; query.h is the interface).
 *
 * ng_query_run (query.c) takes one of four runs, and each file is one
 * piece of them:
 *
 *   keys.c       the model's words: group-by keys and orders parsed, a
 *                key's length, a group's metrics
 *   agg.c        the aggregation tables (agg.h): the generic one, and the
 *                fast ones for one IPv4 address, ≤ 8 or ≤ 16 bits of key
 *   groupby.c    a batch's matching rows into a worker's tables (the
 *                per-row hot path: key building, hashing, the fast paths)
 *   top.c        the top N groups of a table, ties broken by the key
 *   listing.c    a listing: the first N flows in flow_start order, or all
 *   scan.c       the scan: workers, the filter as the scan's select, the
 *                deadline, and the merge of the workers' results
 *   plan.c       which pieces of the range a group-by reads through which
 *                rollup level
 *   toprollup.c  a top-N of one address from the hourly top rollups,
 *                proved exact before it is given, or refused
 *
 * One ng_run_ctx per scan worker holds everything a run accumulates; a
 * parallel scan copies a prototype into each worker (ng_scan_workers)
 * and merges them into worker 0, whose result is the caller's.
 */
#ifndef NG_QUERY_INT_H
#define NG_QUERY_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "query/agg.h"
#include "query/query.h"

/* The columns every run reads besides its keys (and a filter's own,
 * which the scan's select reads): a group's or a total's values.  An
 * initializer (core/colset.h NG_COLSET). */
#define NG_QUERY_VALUE_COLS NG_COLSET(NG_F_FLOW_START, NG_F_FLOW_END, NG_F_PACKETS, NG_F_BYTES)

/* The columns group-by key g reads: its field, and the other side's for
 * an either key. */
static inline ng_colset ng_key_columns(const ng_group_key *g)
{
	ng_colset s = ng_colset_of(g->field);
	if (g->alt >= 0)
		ng_colset_add(&s, (unsigned)g->alt);
	return s;
}

/* The fast aggregation path of a worker (agg.h), chosen per query by
 * ng_choose_fast: one of the specialised tables, folded into the generic
 * one at the end. */
enum ng_fast_path {
	NG_FAST_NONE,   /* every row into the generic table */
	NG_FAST_V4,     /* one address key, its IPv4 rows: ng_agg32 */
	NG_FAST_DIRECT, /* one key of ≤ 16 bits: ng_aggdirect */
	NG_FAST_64      /* one-sided keys of ≤ 8 bytes in all: ng_agg64 */
};

struct ng_top_row; /* toprollup.c */

/* What one scan worker (or a serial scan) accumulates.  Owns every
 * pointer but q and res; freed with ng_run_ctx_free. */
typedef struct ng_run_ctx {
	const ng_query *q;
	ng_query_result *res; /* totals, scan statistics and the answer */
	uint8_t *match;       /* the filter's verdict per row of a batch */
	size_t match_cap;
	bool oom;
	bool timed_out; /* q->deadline_ms passed: the scan stopped */
	/* listing */
	ng_flow *list; /* heap (limit) or array */
	uint64_t *seq; /* arrival order, for a stable result */
	size_t nlist, list_cap;
	/* group-by */
	ng_agg_table t;
	int either; /* index of the either key, or -1 */
	bool xform; /* some key has a prefix or a time bucket */
	/* group-by fast paths (agg.h) for one key, folded into t at the end */
	enum ng_fast_path fast;
	uint32_t mask4; /* NG_FAST_V4: the key's IPv4 prefix mask */
	ng_agg32 t32;
	ng_aggdirect td;
	ng_agg64 t64;
	uint32_t *idx; /* the batch's matching rows */
	uint32_t *k32; /* their keys */
	uint16_t *k16;
	uint64_t *k64;
	size_t idx_cap;
	ng_filter_ctx *fctx; /* this worker's filter evaluation state */
	bool presel;         /* the scan's select ran the filter: batches hold matches only */
	size_t nmatch;       /* rows of the last batch that passed the filter */
	/* the rows read from top rollups (toprollup.c) */
	struct ng_top_row *top;
	size_t ntop, top_cap;
} ng_run_ctx;

/* The metric `o` of a group's values (see ng_agg_metric in query.h).
 * Inline: the top-N computes it once a group. */
static inline double ng_vals_metric(const ng_agg_vals *v, enum ng_order o)
{
	double secs = v->last > v->first ? (double)(v->last - v->first) / 1000.0 : 0;
	switch (o) {
	case NG_ORDER_FLOWS: return (double)v->flows;
	case NG_ORDER_PACKETS: return (double)v->packets;
	case NG_ORDER_BYTES: return (double)v->bytes;
	case NG_ORDER_PPS: return secs > 0 ? (double)v->packets / secs : 0;
	case NG_ORDER_BPS: return secs > 0 ? 8.0 * (double)v->bytes / secs : 0;
	case NG_ORDER_BPP: return v->packets ? (double)v->bytes / (double)v->packets : 0;
	}
	return 0;
}

/* ng_vals_metric of a row: what ng_agg_metric returns. */
static inline double ng_row_metric(const ng_agg_row *r, enum ng_order o)
{
	ng_agg_vals v = {r->flows, r->packets, r->bytes, r->first, r->last};
	return ng_vals_metric(&v, o);
}

/* What a qsort_r comparison of rows by ng_rank_cmp needs: the order and
 * the key's length (pairs.c, series.c). */
typedef struct ng_rank_ctx {
	enum ng_order order;
	size_t klen;
} ng_rank_ctx;

/* The ranking of every top-N (top.c, pairs.c, series.c) as a qsort
 * comparison: the higher metric first, then the smaller key bytes, so
 * that an answer does not depend on the order groups were met in. */
static inline int ng_rank_cmp(double ma, double mb, const uint8_t *ka, const uint8_t *kb,
                              size_t klen)
{
	if (ma != mb)
		return ma > mb ? -1 : 1;
	return memcmp(ka, kb, klen);
}

/* ---- groupby.c: a batch's rows into a worker's tables -------------------- */

/* Sets c->fast (and c->mask4) for c's query: the fast path its keys allow,
 * NG_FAST_NONE when none does.  c->either and c->xform must be set. */
void ng_choose_fast(ng_run_ctx *c);

/* ng_scan_opts.fn_par of a group-by: adds batch b's matching rows to the
 * tables and totals of worker `worker` of the ng_run_ctx array `arg`.
 * Returns 0, or 1 to stop the scan (c->oom or c->timed_out set). */
int ng_on_batch_par(const ng_column_batch *b, unsigned worker, void *arg);

/* As ng_on_batch_par for one context c. */
int ng_on_batch_agg(const ng_column_batch *b, ng_run_ctx *c);

/* Folds c's fast-path tables into its generic table c->t (and frees
 * them).  Returns 0, or -1 when out of memory. */
int ng_fold_fast(ng_run_ctx *c);

/* ---- top.c: the top N of a group-by -------------------------------------- */

typedef struct ng_top_cover ng_top_cover; /* toprollup.c */

/* Keeps the best q->limit groups of c's generic table (all when 0) in
 * c->res->rows (malloc'd, the result's), best first, and sets groups.
 * With cv (a top-N through top rollups), only when cv proves them exact
 * (ng_top_proved).  Returns 0, 1 (not proved) or -1 (out of memory). */
int ng_finish_top(ng_run_ctx *c, ng_top_cover *cv);

/* ng_finish_top for a query whose every group sits in c's IPv4 table
 * (one address key, no IPv6 row): the top is chosen there, and only its
 * groups become rows.  Returns 0 or -1 (out of memory). */
int ng_finish_top32(ng_run_ctx *c);

/* ---- listing.c: flows in flow_start order -------------------------------- */

/* A listing of the first q->limit flows (serial).  Frees c's state.
 * Returns 0, -1 (not a store), -2 (out of memory) or -3 (deadline). */
int ng_run_listing_first(const char *dir, ng_run_ctx *c, ng_colset cols, ng_query_result *res);

/* A listing of every matching flow (parallel).  Returns as
 * ng_run_listing_first. */
int ng_run_listing_all(const char *dir, ng_run_ctx *proto, ng_colset cols, ng_query_result *res);

/* ---- scan.c: the scan, its workers and their merge ----------------------- */

/* The contexts of a parallel scan: worker 0 writes into the caller's
 * result, worker i > 0 into part[i]. */
typedef struct ng_workers {
	ng_run_ctx *w;
	ng_query_result *part;
	unsigned n;
} ng_workers;

/* What ng_scan_part needs besides the range. */
typedef struct ng_part_scan {
	const char *dir;
	ng_workers *ws;
	ng_colset cols;
	int (*fn_par)(const ng_column_batch *, unsigned, void *);
	ng_query_result *res;
} ng_part_scan;

/* True (and c->timed_out set) once q->deadline_ms has passed. */
bool ng_past_deadline(ng_run_ctx *c);

/* Sets *match for batch b (NULL: no filter, or the scan's select ran it
 * already; else c->match) and c->nmatch to the rows that pass.  Returns
 * 0, or -1 when out of memory. */
int ng_eval_filter(ng_run_ctx *c, const ng_column_batch *b, const uint8_t **match);

/* ng_scan_opts.may_match: zone-map pruning by the query's filter; `arg`
 * is a ng_run_ctx (or the first of the workers' array). */
bool ng_may_match(const ng_zone_map *z, void *arg);

/* Sets so's select to run q's filter inside the scan (late
 * materialization); ctx are the nw contexts it gets.  so->columns must be
 * set.  Nothing without a filter. */
void ng_use_select(ng_scan_opts *so, ng_run_ctx *ctx, unsigned nw);

/* Frees what c owns (not q, not res). */
void ng_run_ctx_free(ng_run_ctx *c);

/* Scans [from, to) into the workers' state (rollup: the suffix of the
 * rollup to read segments through, or NULL), adding to p->res->scan.
 * Returns ng_store_scan_opts's value. */
int ng_scan_part(const ng_part_scan *p, uint64_t from, uint64_t to, const char *rollup);

/* Scans q's range in parallel with a copy of `proto` per worker (`fast`:
 * each picks its fast path), batches going to fn_par: through top rollup
 * set `top_set` when ≥ 0 (ng_scan_top), else by the rollup plan
 * (ng_scan_levels).  Returns 0, -1 (the scan failed), -2 (out of memory
 * in a worker) or -3 (a worker ran out of time); *ws is set in every
 * case, for the caller to merge and then free with ng_workers_free. */
int ng_scan_workers(const char *dir, ng_run_ctx *proto, ng_colset cols,
                    int (*fn_par)(const ng_column_batch *, unsigned, void *), bool fast,
                    int top_set, ng_query_result *res, ng_workers *ws);

/* Frees the workers' contexts and parts (not the caller's result). */
void ng_workers_free(ng_workers *ws);

/* Adds a worker's totals (flows, packets, bytes, first, last) to res. */
void ng_add_totals(ng_query_result *res, const ng_query_result *part);

/* Folds every worker's fast tables into its generic table and merges
 * those and the totals into w[0].  Returns 0 or -2 (out of memory). */
int ng_merge_workers(ng_run_ctx *w, unsigned nw, const ng_query_result *part);

/* A group-by on the scan workers: scan, merge, top.  Returns as
 * ng_scan_workers. */
int ng_run_grouped(const char *dir, ng_run_ctx *proto, ng_colset cols, ng_query_result *res);

/* ---- plan.c: group-bys through rollups ----------------------------------- */

/* The rollup set (ng_rollup_pick) that answers q exactly, or -1. */
int ng_rollup_set_for(const ng_query *q);

/* Scans [from, to) through rollup `set` of level `level` and finer (no
 * set: set < 0, rows only).  Returns ng_store_scan_opts's value. */
int ng_scan_levels(const ng_part_scan *p, uint64_t from, uint64_t to, int set, unsigned level);

/* ---- toprollup.c: a top-N from the top rollups, proved ------------------- */

/* The top rollup set that may answer q, or -1. */
int ng_top_set_for(const ng_query *q);

/* Scans q's range for a top-N through top rollup `set`: the whole hours
 * through it, the ends as rows.  Returns ng_store_scan_opts's value. */
int ng_scan_top(const ng_part_scan *p, int set);

/* Whether the top N (h[0..N) of the n groups whose order metrics are
 * met[]; met is overwritten) is proved exact by cv: 0 yes, 1 no, -1 out
 * of memory. */
int ng_top_proved(const ng_query *q, ng_top_cover *cv, double *met, size_t n, const size_t *h);

/* True when no part of cv left a group out: every group is known. */
bool ng_top_exact(const ng_top_cover *cv);

/* A top-N through top rollup `set` (ng_top_set_for).  Returns 0, 1 when
 * its answer is not proved exact (res then cleared for the caller to run
 * on the rows), or what ng_scan_workers returns. */
int ng_run_top(const char *dir, ng_run_ctx *proto, ng_colset cols, int set, ng_query_result *res);

/* ---- query.c: one snapshot per query ----------------------------------- */

/* A snapshot for q when it has none (into *own, which the caller frees
 * with ng_store_snapshot_free; NULL when q had one): the pieces of one
 * query (rollup levels, top rollups then rows; a series' top and its
 * buckets; a Sankey's stages) read one set of segments.  Returns the
 * query to run (q, or *copy holding the snapshot), or NULL when `dir` is
 * not a store or out of memory (message in err). */
const ng_query *ng_query_with_snapshot(const char *dir, const ng_query *q, ng_query *copy,
                                       ng_store_snapshot **own, char *err, size_t errlen);

#endif
