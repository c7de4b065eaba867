/*
 * top.c — the top N groups of a group-by.
 *
 * After the merge, worker 0's generic table holds every group (or, for
 * one address key with no IPv6 row, its IPv4 table does).  The answer is
 * the best q->limit of them by the order metric, best first; without a
 * limit, all of them in that order.
 *
 * The metric of every group is computed once into an array, and a heap
 * of candidate indices keeps the best `keep` seen so far with the worst
 * of them at its root: most groups of a large table cost one comparison
 * with the root and are gone.  The kept ones are then sorted.  Ties are
 * broken by the key bytes, ascending (as ng_rank_cmp ranks), so the answer is one
 * whatever order the workers met the groups in, and the same for a
 * serial and a parallel scan.  An IPv4 number compares as its
 * v4-mapped key bytes do (big-endian in the key, so the numbers' order).
 *
 * ng_finish_top also serves the top-N from top rollups (toprollup.c):
 * there the groups seen are only those the rollups listed, and the chosen
 * N are handed to ng_top_proved before they become the answer.
 *
 * A key prefix (q->key_prefix: the completion of filter values) leaves
 * out the groups whose first key, as text, does not start with it: their
 * metric becomes -1, below every real one (metrics are never negative),
 * so the heap keeps only matching groups, and the answer holds at most
 * as many as match.  The text is the machine formats' (ng_format_key
 * with names off), the one the API answers and a filter takes back.
 */
#include <stdlib.h>
#include <string.h>

#include <strings.h>

#include "query/output.h"
#include "query/query_int.h"

/* Candidates for a top-N: each one's order metric, and its key for ties
 * (smaller first): generic rows (klen bytes) or IPv4 numbers (k32). */
typedef struct top_ctx {
	const double *met;
	const ng_agg_row *rows;
	size_t klen;
	const uint32_t *k32;
} top_ctx;

/* True when candidate a ranks before b: higher metric, then smaller key
 * (ng_rank_cmp's order).  An IPv4 number's order is its v4-mapped key
 * bytes' order. */
static bool ranks_before(const top_ctx *t, size_t a, size_t b)
{
	if (t->met[a] != t->met[b])
		return t->met[a] > t->met[b];
	if (t->k32)
		return t->k32[a] < t->k32[b];
	return memcmp(t->rows[a].key, t->rows[b].key, t->klen) < 0;
}

/* qsort_r comparison of candidate indices, best first. */
static int cmp_rank(const void *a, const void *b, void *arg)
{
	const top_ctx *t = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	if (ranks_before(t, x, y))
		return -1;
	return ranks_before(t, y, x) ? 1 : 0;
}

/* Min-heap (worst ranked at the root) of candidate indices: sifts h[i]
 * down among h[0..n). */
static void top_down(const top_ctx *t, size_t *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < n && ranks_before(t, h[m], h[l]))
			m = l;
		if (r < n && ranks_before(t, h[m], h[r]))
			m = r;
		if (m == i)
			return;
		size_t x = h[i];
		h[i] = h[m];
		h[m] = x;
		i = m;
	}
}

/* Sifts h[j] up the heap. */
static void top_up(const top_ctx *t, size_t *h, size_t j)
{
	while (j) {
		size_t p = (j - 1) / 2;
		if (!ranks_before(t, h[p], h[j]))
			return;
		size_t x = h[p];
		h[p] = h[j];
		h[j] = x;
		j = p;
	}
}

/* The best `keep` of n candidates into h[0..keep), best first.  Most
 * candidates cost one comparison with the heap's root. */
static void select_top(const top_ctx *t, size_t n, size_t keep, size_t *h)
{
	size_t hn = 0;
	for (size_t i = 0; i < n; i++) {
		if (hn < keep) {
			h[hn] = i;
			top_up(t, h, hn++);
		} else if (keep && ranks_before(t, i, h[0])) {
			h[0] = i;
			top_down(t, h, hn, 0);
		}
	}
	qsort_r(h, hn, sizeof *h, cmp_rank, (void *)t);
}

/* True when q has no key prefix, or key 0 of q at key bytes k, as text,
 * starts with it (ASCII case-insensitive). */
static bool prefix_ok(const ng_query *q, const uint8_t *k)
{
	const char *p = q->key_prefix;
	if (!p || !*p)
		return true;
	char buf[128];
	ng_format_key(q, 0, k, false, buf);
	return strncasecmp(buf, p, strlen(p)) == 0;
}

/* With a key prefix: sets met[i] to -1 for the n groups whose key fails
 * it (key(i) gives group i's key bytes) and returns how many pass; n
 * without one. */
static size_t drop_unprefixed(const ng_query *q, double *met, size_t n,
                              const uint8_t *(*key)(const void *arg, size_t i, uint8_t *tmp),
                              const void *arg)
{
	if (!q->key_prefix || !*q->key_prefix)
		return n;
	size_t m = 0;
	uint8_t tmp[NG_QUERY_KEY_MAX];
	for (size_t i = 0; i < n; i++) {
		if (prefix_ok(q, key(arg, i, tmp)))
			m++;
		else
			met[i] = -1;
	}
	return m;
}

/* Group i's key bytes: a generic row's; an IPv4 number's, v4-mapped. */
static const uint8_t *row_key(const void *arg, size_t i, uint8_t *tmp)
{
	(void)tmp;
	return ((const ng_agg_row *)arg)[i].key;
}
static const uint8_t *k32_key(const void *arg, size_t i, uint8_t *tmp)
{
	uint32_t be = __builtin_bswap32(((const uint32_t *)arg)[i]);
	memset(tmp, 0, 16);
	tmp[10] = tmp[11] = 0xff;
	memcpy(tmp + 12, &be, 4);
	return tmp;
}

int ng_finish_top(ng_run_ctx *c, ng_top_cover *cv)
{
	const ng_query *q = c->q;
	size_t n = c->t.n;
	double *met = malloc((n ? n : 1) * sizeof *met);
	if (!met)
		return -1;
	for (size_t i = 0; i < n; i++)
		met[i] = ng_row_metric(&c->t.rows[i], q->order);
	size_t m = drop_unprefixed(q, met, n, row_key, c->t.rows);
	size_t keep = q->limit && q->limit < m ? q->limit : m;
	size_t *h = malloc((keep ? keep : 1) * sizeof *h);
	ng_agg_row *out = malloc((keep ? keep : 1) * sizeof *out);
	int rc = h && out ? 0 : -1;
	top_ctx t = {.met = met, .rows = c->t.rows, .klen = ng_query_key_len(q)};
	if (rc == 0)
		select_top(&t, n, keep, h);
	if (rc == 0 && cv)
		rc = ng_top_proved(q, cv, met, n, h);
	for (size_t i = 0; rc == 0 && i < keep; i++)
		out[i] = c->t.rows[h[i]];
	free(h);
	free(met);
	if (rc) {
		free(out);
		return rc;
	}
	c->res->rows = out;
	c->res->nrows = keep;
	c->res->groups = m;
	c->res->groups_exact = !cv || ng_top_exact(cv);
	return 0;
}

int ng_finish_top32(ng_run_ctx *c)
{
	const ng_query *q = c->q;
	const ng_agg32 *t32 = &c->t32;
	size_t n = t32->n;
	double *met = malloc((n ? n : 1) * sizeof *met);
	if (!met)
		return -1;
	for (size_t i = 0; i < n; i++)
		met[i] = ng_vals_metric(&t32->v[i], q->order);
	size_t m = drop_unprefixed(q, met, n, k32_key, t32->keys);
	size_t keep = q->limit && q->limit < m ? q->limit : m;
	size_t *h = malloc((keep ? keep : 1) * sizeof *h);
	ng_agg_row *out = calloc(keep ? keep : 1, sizeof *out);
	if (!h || !out) {
		free(h);
		free(met);
		free(out);
		return -1;
	}
	top_ctx t = {.met = met, .k32 = t32->keys};
	select_top(&t, n, keep, h);
	for (size_t i = 0; i < keep; i++) {
		const ng_agg_vals *v = &t32->v[h[i]];
		uint32_t be = __builtin_bswap32(t32->keys[h[i]]);
		out[i].key[10] = out[i].key[11] = 0xff;
		memcpy(out[i].key + 12, &be, 4);
		out[i].flows = v->flows;
		out[i].packets = v->packets;
		out[i].bytes = v->bytes;
		out[i].first = v->first;
		out[i].last = v->last;
	}
	free(h);
	free(met);
	c->res->rows = out;
	c->res->nrows = keep;
	c->res->groups = m;
	c->res->groups_exact = true;
	return 0;
}
