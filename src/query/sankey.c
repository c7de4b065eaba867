/* sankey.c — a Sankey of two or three stages in one call (see sankey.h). */
#include "query/sankey.h"

#include "query/backend.h"
#include "query/query_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ng_sankey_parse(ng_query *q, const char *spec, char *err, size_t errlen)
{
	ng_query t = *q;
	t.nkeys = 0;
	if (ng_query_parse_keys(&t, spec, err, errlen))
		return -1;
	if (t.nkeys < 2 || t.nkeys > NG_SANKEY_MAX_STAGES) {
		snprintf(err, errlen,
		         "a Sankey takes two or three fields, e.g. srcas,exporter,dstas, not '%s'",
		         spec);
		return -1;
	}
	for (size_t i = 0; i < t.nkeys; i++) {
		const ng_group_key *g = &t.keys[i];
		if (g->alt >= 0 || g->bucket_ms ||
		    ng_fields[g->field].size > sizeof((ng_sankey_node *)0)->key) {
			snprintf(err, errlen,
			         "a Sankey stage is one one-sided field (srcip, dstas, inif, "
			         "exporter, ...), not '%s'",
			         g->label);
			return -1;
		}
	}
	memcpy(q->keys, t.keys, sizeof t.keys);
	q->nkeys = t.nkeys;
	return 0;
}

/* The count a rate ranks by (a top over the whole range). */
static enum ng_order rank_order(enum ng_order o)
{
	return o == NG_ORDER_PPS ? NG_ORDER_PACKETS : o == NG_ORDER_BPS ? NG_ORDER_BYTES : o;
}

static double count_metric(uint64_t f, uint64_t p, uint64_t b, enum ng_order o)
{
	switch (rank_order(o)) {
	case NG_ORDER_FLOWS: return (double)f;
	case NG_ORDER_PACKETS: return (double)p;
	case NG_ORDER_BPP: return p ? (double)b / (double)p : 0;
	default: return (double)b;
	}
}

typedef struct stage {
	ng_query_result top;
	uint8_t *vals; /* top.nrows values, len bytes each */
	uint8_t other[16];
	size_t off, len;
} stage;

/* Stage j's top values and its fold (a fill byte no kept value has). */
static int stage_top(const ng_backend *be, const ng_query *q, size_t j, size_t off, stage *st,
                     char *err, size_t errlen)
{
	ng_query tq = *q;
	tq.nkeys = 1;
	tq.keys[0] = q->keys[j];
	tq.order = rank_order(q->order);
	st->off = off;
	st->len = ng_fields[q->keys[j].field].size;
	if (ng_backend_run(be, &tq, &st->top, err, errlen))
		return -1;
	st->vals = malloc((st->top.nrows ? st->top.nrows : 1) * st->len);
	if (!st->vals) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < st->top.nrows; i++)
		memcpy(st->vals + i * st->len, st->top.rows[i].key, st->len);
	for (int fill = 0xff;; fill--) { /* at most NG_SANKEY_MAX_N fills taken */
		memset(st->other, fill, st->len);
		size_t i = 0;
		while (i < st->top.nrows && memcmp(st->vals + i * st->len, st->other, st->len))
			i++;
		if (i == st->top.nrows)
			return 0;
	}
}

/* Node index of the key part p in stage st (its top values, then other). */
static size_t node_of(const stage *st, const uint8_t *p)
{
	for (size_t i = 0; i < st->top.nrows; i++)
		if (!memcmp(p, st->vals + i * st->len, st->len))
			return i;
	return st->top.nrows;
}

static int cmp_link(const void *a, const void *b, void *arg)
{
	const ng_sankey_link *x = a, *y = b;
	enum ng_order link_order = *(const enum ng_order *)arg;
	if (x->stage != y->stage)
		return x->stage < y->stage ? -1 : 1;
	double mx = count_metric(x->flows, x->packets, x->bytes, link_order),
	       my = count_metric(y->flows, y->packets, y->bytes, link_order);
	if (mx != my)
		return mx > my ? -1 : 1;
	return x->source != y->source ? (x->source < y->source ? -1 : 1)
	                              : (x->target < y->target ? -1 : x->target > y->target);
}

static void add_counts(uint64_t *c, const ng_agg_row *r)
{
	c[0] += r->flows;
	c[1] += r->packets;
	c[2] += r->bytes;
}

/* Nodes and links from the folded groups of out->res. */
static int build(const ng_query *q, stage *st, ng_sankey *out)
{
	size_t ns = q->nkeys, cells = 0, moff[NG_SANKEY_MAX_STAGES];
	for (size_t j = 0; j + 1 < ns; j++) {
		moff[j] = cells;
		cells += (st[j].top.nrows + 1) * (st[j + 1].top.nrows + 1);
	}
	uint64_t(*m)[3] = calloc(cells ? cells : 1, sizeof *m);
	out->links = calloc(cells ? cells : 1, sizeof *out->links);
	for (size_t j = 0; j < ns; j++)
		out->nodes[j] = calloc(st[j].top.nrows + 1, sizeof *out->nodes[j]);
	bool ok = m && out->links;
	for (size_t j = 0; j < ns; j++)
		ok = ok && out->nodes[j];
	if (!ok) {
		free(m);
		return -1;
	}
	out->nstages = ns;
	for (size_t i = 0; i < out->res.nrows; i++) {
		const ng_agg_row *r = &out->res.rows[i];
		size_t idx[NG_SANKEY_MAX_STAGES];
		for (size_t j = 0; j < ns; j++) {
			idx[j] = node_of(&st[j], r->key + st[j].off);
			ng_sankey_node *nd = &out->nodes[j][idx[j]];
			nd->flows += r->flows, nd->packets += r->packets, nd->bytes += r->bytes;
		}
		for (size_t j = 0; j + 1 < ns; j++)
			add_counts(m[moff[j] + idx[j] * (st[j + 1].top.nrows + 1) + idx[j + 1]], r);
	}
	for (size_t j = 0; j < ns; j++) {
		size_t n = st[j].top.nrows;
		for (size_t i = 0; i < n; i++)
			memcpy(out->nodes[j][i].key, st[j].vals + i * st[j].len, st[j].len);
		out->nodes[j][n].other = true;
		out->nnodes[j] = n + (out->nodes[j][n].flows > 0);
	}
	for (size_t j = 0; j + 1 < ns; j++)
		for (size_t a = 0; a <= st[j].top.nrows; a++)
			for (size_t b = 0; b <= st[j + 1].top.nrows; b++) {
				const uint64_t *c = m[moff[j] + a * (st[j + 1].top.nrows + 1) + b];
				if (c[0])
					out->links[out->nlinks++] =
					    (ng_sankey_link){.stage = j,
					                     .source = a,
					                     .target = b,
					                     .flows = c[0],
					                     .packets = c[1],
					                     .bytes = c[2]};
			}
	free(m);
	enum ng_order o = q->order;
	qsort_r(out->links, out->nlinks, sizeof *out->links, cmp_link, &o);
	return 0;
}

/* The runs of a Sankey (ng_sankey_run) on backend be: the stages' tops,
 * then the folded groups. */
static int sankey_run(const ng_backend *be, const ng_query *qs, ng_sankey *out, char *err,
                      size_t errlen)
{
	ng_query q = *qs;
	stage st[NG_SANKEY_MAX_STAGES] = {0};
	ng_query_fold folds[NG_SANKEY_MAX_STAGES];
	int rc = 0;
	size_t off = 0;
	for (size_t j = 0; j < q.nkeys && !rc; j++) {
		rc = stage_top(be, &q, j, off, &st[j], err, errlen);
		folds[j] = (ng_query_fold){.vals = st[j].vals,
		                           .other = st[j].other,
		                           .n = st[j].top.nrows,
		                           .off = off,
		                           .len = st[j].len};
		off += st[j].len;
	}
	if (!rc) {
		ng_query fq = q;
		fq.limit = 0;
		fq.folds = folds;
		fq.nfolds = q.nkeys;
		rc = ng_backend_run(be, &fq, &out->res, err, errlen);
	}
	if (!rc && build(&q, st, out)) {
		snprintf(err, errlen, "out of memory");
		rc = -1;
	}
	for (size_t j = 0; j < q.nkeys; j++) {
		if (!rc) /* one snapshot: the damaged segments are the full run's */
			out->res.elapsed_s += st[j].top.elapsed_s;
		ng_query_result_free(&st[j].top);
		free(st[j].vals);
	}
	if (rc)
		ng_sankey_free(out);
	return rc;
}

static bool sankey_ok(const ng_query *q, ng_sankey *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	if (q->nkeys < 2 || q->nkeys > NG_SANKEY_MAX_STAGES || q->limit < 1 ||
	    q->limit > NG_SANKEY_MAX_N) {
		snprintf(err, errlen, "a Sankey has 2 or 3 stages of 1 to %d nodes",
		         NG_SANKEY_MAX_N);
		return false;
	}
	return true;
}

int ng_sankey_run(const char *dir, const ng_query *q0, ng_sankey *out, char *err, size_t errlen)
{
	if (!sankey_ok(q0, out, err, errlen))
		return -1;
	ng_query copy;
	ng_store_snapshot *own;
	const ng_query *qs = ng_query_with_snapshot(dir, q0, &copy, &own, err, errlen);
	if (!qs)
		return -1;
	ng_backend b = {.store = dir};
	int rc = sankey_run(&b, qs, out, err, errlen);
	ng_store_snapshot_free(own);
	return rc;
}

int ng_sankey_run_on(const ng_backend *be, const ng_query *q, ng_sankey *out, char *err,
                     size_t errlen)
{
	if (!be->ch)
		return ng_sankey_run(be->store, q, out, err, errlen);
	if (!sankey_ok(q, out, err, errlen))
		return -1;
	return sankey_run(be, q, out, err, errlen);
}

void ng_sankey_free(ng_sankey *s)
{
	for (size_t j = 0; j < NG_SANKEY_MAX_STAGES; j++)
		free(s->nodes[j]);
	free(s->links);
	ng_query_result_free(&s->res);
	memset(s, 0, sizeof *s);
}
