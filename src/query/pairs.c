/* pairs.c — Sankey edges and bidirectional conversations (see pairs.h). */
#include "query/pairs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/backend.h"
#include "query/query_int.h"

/* ---- Sankey edges -------------------------------------------------------- */

int ng_pairs_parse(ng_query *q, const char *spec, char *err, size_t errlen)
{
	ng_query t = *q;
	t.nkeys = 0;
	if (ng_query_parse_keys(&t, spec, err, errlen))
		return -1;
	if (t.nkeys != 2) {
		snprintf(err, errlen,
		         "--pairs takes two fields, SOURCE,DESTINATION (e.g. srcip,dstip), "
		         "not '%s'",
		         spec);
		return -1;
	}
	for (size_t i = 0; i < 2; i++)
		if (t.keys[i].alt >= 0) {
			snprintf(
			    err, errlen,
			    "--pairs needs one-sided fields (srcip, dstas, inif, ...), not '%s'",
			    t.keys[i].label);
			return -1;
		}
	memcpy(q->keys, t.keys, sizeof t.keys);
	q->nkeys = 2;
	return 0;
}

int ng_pairs_run(const char *dir, const ng_query *q, ng_pairs *out, char *err, size_t errlen)
{
	ng_backend b = {.store = dir};
	return ng_pairs_run_on(&b, q, out, err, errlen);
}

int ng_pairs_run_on(const ng_backend *be, const ng_query *q, ng_pairs *out, char *err,
                    size_t errlen)
{
	memset(out, 0, sizeof *out);
	if (q->nkeys != 2 || q->keys[0].alt >= 0 || q->keys[1].alt >= 0) {
		snprintf(err, errlen, "pairs need two one-sided key fields");
		return -1;
	}
	if (ng_backend_run(be, q, &out->res, err, errlen))
		return -1;
	const ng_query_result *r = &out->res;
	uint64_t f = 0, p = 0, b = 0;
	for (size_t i = 0; i < r->nrows; i++) {
		f += r->rows[i].flows;
		p += r->rows[i].packets;
		b += r->rows[i].bytes;
	}
	out->other.flows = r->flows_total - f;
	out->other.packets = r->packets_total - p;
	out->other.bytes = r->bytes_total - b;
	out->other.first = r->first;
	out->other.last = r->last;
	out->has_other = out->other.flows > 0;
	return 0;
}

void ng_pairs_free(ng_pairs *p)
{
	ng_query_result_free(&p->res);
	memset(p, 0, sizeof *p);
}

/* ---- conversations --------------------------------------------------------- */

void ng_bidir_keys(const ng_query *q, ng_query *w)
{
	*w = *q;
	if (q->nkeys)
		return;
	static const struct {
		enum ng_field_id f;
		const char *label;
	} def[] = {
	    {NG_F_PROTOCOL, "proto"}, {NG_F_SRC_ADDR, "srcip"},   {NG_F_SRC_PORT, "srcport"},
	    {NG_F_DST_ADDR, "dstip"}, {NG_F_DST_PORT, "dstport"},
	};
	_Static_assert(NG_QUERY_MAX_KEYS >= 5, "the 5-tuple is a key");
	for (size_t i = 0; i < 5; i++)
		w->keys[i] = (ng_group_key){.field = def[i].f, .alt = -1, .label = def[i].label};
	w->nkeys = 5;
}

/* Writes the mirror image of key k (the query's key layout) into m. */
static void mirror_key(const ng_query *q, const uint8_t *k, uint8_t *m)
{
	size_t off[NG_QUERY_MAX_KEYS + 1];
	off[0] = 0;
	for (size_t j = 0; j < q->nkeys; j++)
		off[j + 1] = off[j] + ng_fields[q->keys[j].field].size;
	memcpy(m, k, off[q->nkeys]);
	for (size_t j = 0; j < q->nkeys; j++) {
		int p = ng_field_partner(q->keys[j].field);
		for (size_t i = 0; p >= 0 && i < q->nkeys; i++)
			if ((int)q->keys[i].field == p && q->keys[i].alt < 0) {
				memcpy(m + off[j], k + off[i], off[i + 1] - off[i]);
				break;
			}
	}
}

typedef struct half {
	uint8_t key[NG_QUERY_KEY_MAX]; /* canonical */
	bool reverse;                  /* the row ran B→A */
	const ng_agg_row *row;
} half;

static int cmp_half(const void *a, const void *b, void *arg)
{
	const half *x = a, *y = b;
	int c = memcmp(x->key, y->key, *(const size_t *)arg);
	return c ? c : (int)x->reverse - (int)y->reverse;
}

double ng_bidir_metric(const ng_bidir_row *r, enum ng_order o)
{
	ng_agg_row s = {.flows = r->ab.flows + r->ba.flows,
	                .packets = r->ab.packets + r->ba.packets,
	                .bytes = r->ab.bytes + r->ba.bytes};
	uint64_t f1 = r->ab.flows ? r->ab.first : UINT64_MAX,
	         f2 = r->ba.flows ? r->ba.first : UINT64_MAX;
	s.first = f1 < f2 ? f1 : f2;
	s.last = r->ab.last > r->ba.last ? r->ab.last : r->ba.last;
	return ng_agg_metric(&s, o);
}

/* qsort_r comparison of conversations, best first (ng_rank_cmp). */
static int cmp_conv(const void *a, const void *b, void *arg)
{
	const ng_rank_ctx *c = arg;
	const ng_bidir_row *x = a, *y = b;
	return ng_rank_cmp(ng_bidir_metric(x, c->order), ng_bidir_metric(y, c->order), x->key,
	                   y->key, c->klen);
}

/* Shows each conversation from its client's side, as nfdump -B guesses:
 * with ports in the key, A is the side with the higher port (the
 * ephemeral one) and B the service; without, A is the side that sent more
 * flows.  Grouping used the byte-wise canonical key; this only chooses
 * which of the two orientations is printed. */
static void orient(const ng_query *q, ng_bidir_row *rows, size_t n)
{
	int sp = -1, dp = -1;
	size_t off = 0, soff = 0, doff = 0;
	for (size_t j = 0; j < q->nkeys; j++) {
		if (q->keys[j].field == NG_F_SRC_PORT)
			sp = (int)j, soff = off;
		if (q->keys[j].field == NG_F_DST_PORT)
			dp = (int)j, doff = off;
		off += ng_fields[q->keys[j].field].size;
	}
	for (size_t i = 0; i < n; i++) {
		ng_bidir_row *r = &rows[i];
		bool swap;
		if (sp >= 0 && dp >= 0) {
			uint16_t a, b;
			memcpy(&a, r->key + soff, 2);
			memcpy(&b, r->key + doff, 2);
			swap = a < b || (a == b && r->ba.flows > r->ab.flows);
		} else {
			swap = r->ba.flows > r->ab.flows;
		}
		if (!swap)
			continue;
		uint8_t m[NG_QUERY_KEY_MAX] = {0};
		mirror_key(q, r->key, m);
		memcpy(r->key, m, sizeof m);
		ng_agg_row t = r->ab;
		r->ab = r->ba;
		r->ba = t;
	}
}

int ng_bidir_run(const char *dir, const ng_query *q0, ng_bidir *out, char *err, size_t errlen)
{
	ng_backend b = {.store = dir};
	return ng_bidir_run_on(&b, q0, out, err, errlen);
}

int ng_bidir_run_on(const ng_backend *be, const ng_query *q0, ng_bidir *out, char *err,
                    size_t errlen)
{
	memset(out, 0, sizeof *out);
	ng_query q;
	ng_bidir_keys(q0, &q);
	for (size_t j = 0; j < q.nkeys; j++)
		if (q.keys[j].alt >= 0) {
			snprintf(err, errlen, "-B needs one-sided fields, not '%s'",
			         q.keys[j].label);
			return -1;
		}
	q.limit = 0;
	if (ng_backend_run(be, &q, &out->res, err, errlen))
		return -1;
	size_t n = out->res.nrows, klen = ng_query_key_len(&q);
	half *h = malloc((n ? n : 1) * sizeof *h);
	ng_bidir_row *rows = calloc(n ? n : 1, sizeof *rows);
	if (!h || !rows) {
		free(h);
		free(rows);
		ng_bidir_free(out);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		const ng_agg_row *r = &out->res.rows[i];
		uint8_t m[NG_QUERY_KEY_MAX];
		mirror_key(&q, r->key, m);
		bool rev = memcmp(m, r->key, klen) < 0;
		memset(h[i].key, 0, sizeof h[i].key);
		memcpy(h[i].key, rev ? m : r->key, klen);
		h[i].reverse = rev;
		h[i].row = r;
	}
	qsort_r(h, n, sizeof *h, cmp_half, &klen);
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (!m || memcmp(rows[m - 1].key, h[i].key, klen)) {
			memcpy(rows[m].key, h[i].key, sizeof rows[m].key);
			m++;
		}
		ng_agg_row *d = h[i].reverse ? &rows[m - 1].ba : &rows[m - 1].ab;
		*d = *h[i].row;
	}
	free(h);
	orient(&q, rows, m);
	ng_rank_ctx rc = {q0->order, klen};
	qsort_r(rows, m, sizeof *rows, cmp_conv, &rc);
	out->conversations = m;
	out->rows = rows;
	out->nrows = q0->limit && q0->limit < m ? q0->limit : m;
	free(out->res.rows);
	out->res.rows = NULL;
	out->res.nrows = 0;
	return 0;
}

void ng_bidir_free(ng_bidir *b)
{
	free(b->rows);
	ng_query_result_free(&b->res);
	memset(b, 0, sizeof *b);
}
