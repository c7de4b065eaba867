/*
 * groupby.c — a batch's matching rows into a scan worker's groups.
 *
 * This is the executor's hot path: a group-by over a day of flows runs
 * the code below once a row, tens of millions of times, and little else.
 *
 * A batch (ng_column_batch) is one segment's slice of columns.  When the
 * query has a filter the scan's select ran it already (scan.c) and the
 * batch holds matching rows only; otherwise ng_eval_filter marks them.
 * ng_on_batch_agg compacts the matching rows into an index list without a
 * branch a row, adds their values to the totals (each flow once, even for
 * an either key), and hands the list to agg_rows, once for each side of an
 * either key ("ip": a flow counts under its source and its destination).
 *
 * Each row's group key is its key fields' bytes, concatenated in the
 * query's order and zero-padded to whole words (the generic table's
 * layout, agg.h); a prefix key (srcip4/24) or a time bucket is then
 * applied to the built key (key_xform), and a top-N series' "other" fold
 * last (fold_key).  agg_block does this for up to 32 rows at a time and
 * prefetches their slots and rows before the first probe, so the cache
 * misses of a large table overlap.
 *
 * Most queries never reach the generic table: ng_choose_fast picks one of
 * agg.h's specialised tables when the keys allow it:
 *
 *   NG_FAST_DIRECT  one key of ≤ 16 bits (a port, the protocol; an either
 *                   key whose sides are the same size): an array;
 *   NG_FAST_V4      one address key: its IPv4 rows as u32 numbers (masked
 *                   by an IPv4 prefix), a batch with an IPv6 row going to
 *                   the generic table instead (a mixed query uses both);
 *   NG_FAST_64      one-sided keys of ≤ 8 bytes in all, no prefix or
 *                   bucket: the key packed into one word as the generic
 *                   table lays it out.
 *
 * At the end (ng_fold_fast) the fast tables are re-keyed in the generic
 * layout and added to the generic table, so the top-N, the merge and the
 * output never see which path a group took: the answer is the same.
 * Folding (q->nfold) is done on the generic keys only, so it takes no
 * fast path.
 */
#include <stdlib.h>
#include <string.h>

#include "core/addr.h"
#include "core/hash.h"
#include "query/query_int.h"

enum { AGG_BLOCK = 32 };

/* Applies the keys' prefixes and time buckets to a built key kp (the
 * generic layout). */
static void key_xform(const ng_query *q, uint8_t *kp)
{
	for (size_t j = 0; j < q->nkeys; j++) {
		const ng_group_key *g = &q->keys[j];
		unsigned sz = ng_fields[g->field].size;
		if (g->bucket_ms && sz == 8) {
			uint64_t v;
			memcpy(&v, kp, 8);
			v -= v % g->bucket_ms;
			memcpy(kp, &v, 8);
		} else if ((g->plen4 || g->plen6) && sz == 16) {
			unsigned plen = ng_addr_is_v4(kp) ? (g->plen4 ? 96u + g->plen4 : 128u)
			                                  : (g->plen6 ? g->plen6 : 128u);
			for (unsigned i = 0; i < 16; i++) {
				unsigned bits = plen > i * 8 ? plen - i * 8 : 0;
				kp[i] &= bits >= 8 ? 0xff : (uint8_t)(0xff << (8 - bits));
			}
		}
		kp += sz;
	}
}

/* q->fold: a key part that is none of the kept values becomes "other". */
static void fold_part(uint8_t *part, const uint8_t *vals, size_t n, size_t len,
                      const uint8_t *other)
{
	for (size_t i = 0; i < n; i++)
		if (!memcmp(part, vals + i * len, len))
			return;
	memcpy(part, other, len);
}

static void fold_key(const ng_query *q, uint8_t *k)
{
	if (q->nfold)
		fold_part(k + q->fold_off, q->fold, q->nfold, q->fold_len, q->fold_other);
	for (size_t j = 0; j < q->nfolds; j++) {
		const ng_query_fold *f = &q->folds[j];
		fold_part(k + f->off, f->vals, f->n, f->len, f->other);
	}
}

/*
 * Adds the rows idx[0..n) (n ≤ AGG_BLOCK) to their groups, the either key
 * (if any) taking its `alt` side when `alt_side`.  Keys and hashes are made
 * for the whole block first and their slots prefetched, so the cache
 * misses of a large table overlap instead of coming one after another.
 * Returns 0, or -1 when out of memory.
 */
static int agg_block(ng_run_ctx *c, const ng_column_batch *b, const uint32_t *idx, size_t n,
                     bool alt_side)
{
	uint64_t keys[AGG_BLOCK][NG_QUERY_KEY_MAX / 8];
	uint64_t hs[AGG_BLOCK];
	const size_t kw = c->t.kwords, nk = c->q->nkeys;
	const uint8_t *kcol[NG_QUERY_MAX_KEYS];
	unsigned ksz[NG_QUERY_MAX_KEYS];
	for (size_t j = 0; j < nk; j++) {
		const ng_group_key *g = &c->q->keys[j];
		int f = alt_side && (int)j == c->either ? g->alt : (int)g->field;
		kcol[j] = b->col[f];
		ksz[j] = ng_fields[f].size;
	}
	for (size_t m = 0; m < n; m++) {
		size_t i = idx[m];
		for (size_t w = 0; w < kw; w++)
			keys[m][w] = 0;
		uint8_t *kp = (uint8_t *)keys[m];
		for (size_t j = 0; j < nk; j++) {
			/* constant sizes: the copies compile to single moves */
			switch (ksz[j]) {
			case 1: *kp = kcol[j][i]; break;
			case 2: memcpy(kp, kcol[j] + i * 2, 2); break;
			case 4: memcpy(kp, kcol[j] + i * 4, 4); break;
			case 8: memcpy(kp, kcol[j] + i * 8, 8); break;
			case 16: memcpy(kp, kcol[j] + i * 16, 16); break;
			default: memcpy(kp, kcol[j] + i * ksz[j], ksz[j]); break;
			}
			kp += ksz[j];
		}
		if (c->xform)
			key_xform(c->q, (uint8_t *)keys[m]);
		if (c->q->nfold || c->q->nfolds)
			fold_key(c->q, (uint8_t *)keys[m]);
		hs[m] = ng_hash_words(keys[m], kw);
		if (c->t.slots)
			__builtin_prefetch(&c->t.slots[hs[m] & c->t.mask]);
	}
	if (c->t.slots)
		for (size_t m = 0; m < n; m++) {
			ng_agg_slot sl = c->t.slots[hs[m] & c->t.mask];
			if (sl.idx)
				__builtin_prefetch(&c->t.rows[sl.idx - 1]);
		}
	const uint64_t *start = b->col[NG_F_FLOW_START], *end = b->col[NG_F_FLOW_END];
	const uint64_t *pk = b->col[NG_F_PACKETS], *by = b->col[NG_F_BYTES], *fl = b->flows;
	for (size_t m = 0; m < n; m++) {
		size_t i = idx[m];
		ng_agg_row *r = ng_agg_table_get(&c->t, keys[m], hs[m]);
		if (!r)
			return -1;
		r->flows += fl ? fl[i] : 1;
		r->packets += pk[i];
		r->bytes += by[i];
		if (start[i] < r->first)
			r->first = start[i];
		if (end[i] > r->last)
			r->last = end[i];
	}
	return 0;
}

/* True when rows idx[0..n) of address column `col` are all IPv4-mapped
 * (no branch a row: the differences from the prefix are or-ed). */
static bool rows_v4(const uint8_t *col, const uint32_t *idx, size_t n)
{
	uint64_t acc = 0;
	for (size_t m = 0; m < n; m++) {
		uint64_t lo;
		uint32_t mid;
		memcpy(&lo, col + (size_t)idx[m] * 16, 8);
		memcpy(&mid, col + (size_t)idx[m] * 16 + 8, 4);
		acc |= lo | (uint64_t)(mid ^ UINT32_C(0xffff0000));
	}
	return acc == 0;
}

/* c->k64[m] = the key of row idx[m], its fields' bytes packed into one
 * word as the generic table lays them out (NG_FAST_64: ≤ 8 bytes).  Field
 * after field, with constant-size copies. */
static void pack_keys(ng_run_ctx *c, const ng_column_batch *b, const uint32_t *idx, size_t n)
{
	uint64_t *k = c->k64;
	memset(k, 0, n * sizeof *k);
	size_t off = 0;
	for (size_t j = 0; j < c->q->nkeys; j++) {
		enum ng_field_id f = c->q->keys[j].field;
		const uint8_t *col = b->col[f];
		const size_t sz = ng_fields[f].size;
		switch (sz) {
		case 1:
			for (size_t m = 0; m < n; m++)
				((uint8_t *)&k[m])[off] = col[idx[m]];
			break;
		case 2:
			for (size_t m = 0; m < n; m++)
				memcpy((uint8_t *)&k[m] + off, col + (size_t)idx[m] * 2, 2);
			break;
		case 4:
			for (size_t m = 0; m < n; m++)
				memcpy((uint8_t *)&k[m] + off, col + (size_t)idx[m] * 4, 4);
			break;
		default:
			for (size_t m = 0; m < n; m++)
				memcpy((uint8_t *)&k[m] + off, col + (size_t)idx[m] * sz, sz);
		}
		off += sz;
	}
}

/* Adds rows idx[0..n) through a fast path, the either key's `alt` side
 * when alt_side.  Returns 1 when the batch does not suit it (IPv6 rows
 * for NG_FAST_V4: the generic table takes them), 0 done, -1 out of memory. */
static int agg_fast(ng_run_ctx *c, const ng_column_batch *b, const uint32_t *idx, size_t n,
                    bool alt_side)
{
	const ng_group_key *g = &c->q->keys[0];
	int f = alt_side ? g->alt : (int)g->field;
	const uint8_t *col = b->col[f];
	ng_agg_in in = {b->col[NG_F_FLOW_START],
	                b->col[NG_F_FLOW_END],
	                b->col[NG_F_PACKETS],
	                b->col[NG_F_BYTES],
	                b->flows,
	                idx,
	                n};
	if (c->fast == NG_FAST_64) {
		pack_keys(c, b, idx, n);
		return ng_agg64_add(&c->t64, c->k64, &in);
	}
	if (c->fast == NG_FAST_DIRECT) {
		if (ng_fields[f].size == 1)
			for (size_t m = 0; m < n; m++)
				c->k16[m] = col[idx[m]];
		else
			for (size_t m = 0; m < n; m++) {
				uint16_t v;
				memcpy(&v, col + (size_t)idx[m] * 2, 2);
				c->k16[m] = v;
			}
		return ng_aggdirect_add(&c->td, c->k16, &in);
	}
	if (!rows_v4(col, idx, n))
		return 1;
	for (size_t m = 0; m < n; m++) {
		uint32_t v;
		memcpy(&v, col + (size_t)idx[m] * 16 + 12, 4);
		c->k32[m] = __builtin_bswap32(v) & c->mask4; /* network order: prefixes mask */
	}
	return ng_agg32_add(&c->t32, c->k32, &in);
}

/* Adds rows idx[0..n) of b to c's groups: each side of an either key,
 * through the fast path when it takes the batch, else in blocks into the
 * generic table.  Returns 0, or -1 when out of memory. */
static int agg_rows(ng_run_ctx *c, const ng_column_batch *b, const uint32_t *idx, size_t n)
{
	for (int side = 0; side < (c->either >= 0 ? 2 : 1); side++) {
		int rc = c->fast != NG_FAST_NONE ? agg_fast(c, b, idx, n, side) : 1;
		if (rc < 0)
			return -1;
		for (size_t m = 0; rc > 0 && m < n; m += AGG_BLOCK)
			if (agg_block(c, b, idx + m, n - m < AGG_BLOCK ? n - m : AGG_BLOCK, side))
				return -1;
	}
	return 0;
}

/* Makes c's per-batch arrays (the index list and the fast paths' keys)
 * hold n rows.  Returns 0, or -1 when out of memory (those grown kept). */
static int batch_room(ng_run_ctx *c, size_t n)
{
	if (n <= c->idx_cap)
		return 0;
	uint32_t *i = realloc(c->idx, n * sizeof *i), *k = NULL;
	uint16_t *h = NULL;
	if (i)
		c->idx = i;
	if (i && (k = realloc(c->k32, n * sizeof *k)))
		c->k32 = k;
	if (k && (h = realloc(c->k16, n * sizeof *h)))
		c->k16 = h;
	uint64_t *w = h ? realloc(c->k64, n * sizeof *w) : NULL;
	if (w)
		c->k64 = w;
	if (!w)
		return -1;
	c->idx_cap = n;
	return 0;
}

int ng_on_batch_agg(const ng_column_batch *b, ng_run_ctx *c)
{
	ng_query_result *res = c->res;
	const uint8_t *match;
	if (ng_past_deadline(c))
		return 1;
	if (ng_eval_filter(c, b, &match) || batch_room(c, b->n))
		goto oom;
	size_t n = 0;
	for (size_t i = 0; i < b->n; i++) { /* branch-free compaction */
		c->idx[n] = (uint32_t)i;
		n += match ? match[i] : 1;
	}
	const uint64_t *start = b->col[NG_F_FLOW_START], *end = b->col[NG_F_FLOW_END];
	const uint64_t *pk = b->col[NG_F_PACKETS], *by = b->col[NG_F_BYTES];
	uint64_t p = 0, y = 0, first = res->first, last = res->last;
	for (size_t m = 0; m < n; m++) {
		size_t i = c->idx[m];
		p += pk[i];
		y += by[i];
		first = start[i] < first ? start[i] : first;
		last = end[i] > last ? end[i] : last;
	}
	uint64_t flows = n;
	if (b->flows) /* a rollup's rows: each sums flows[i] */
		for (size_t m = flows = 0; m < n; m++)
			flows += b->flows[c->idx[m]];
	res->flows_total += flows;
	res->packets_total += p;
	res->bytes_total += y;
	res->first = first;
	res->last = last;
	if (agg_rows(c, b, c->idx, n))
		goto oom;
	return 0;
oom:
	c->oom = true;
	return 1;
}

int ng_on_batch_par(const ng_column_batch *b, unsigned worker, void *arg)
{
	ng_run_ctx *w = arg;
	return ng_on_batch_agg(b, &w[worker]);
}

int ng_fold_fast(ng_run_ctx *c)
{
	uint64_t k[NG_QUERY_KEY_MAX / 8];
	for (size_t i = 0; i < c->t32.n; i++) {
		memset(k, 0, c->t.kwords * 8);
		uint8_t *kp = (uint8_t *)k;
		uint32_t be = __builtin_bswap32(c->t32.keys[i]);
		kp[10] = kp[11] = 0xff;
		memcpy(kp + 12, &be, 4);
		ng_agg_row *r = ng_agg_table_get(&c->t, k, ng_hash_words(k, c->t.kwords));
		if (!r)
			return -1;
		const ng_agg_vals *v = &c->t32.v[i];
		ng_agg_row_add(r, v->flows, v->packets, v->bytes, v->first, v->last);
	}
	for (size_t key = 0; c->td.v && key < 65536; key++) {
		const ng_agg_vals *v = &c->td.v[key];
		if (!v->flows)
			continue;
		memset(k, 0, c->t.kwords * 8);
		uint16_t kv = (uint16_t)key; /* little-endian: a u8 key is its low byte */
		memcpy(k, &kv, 2);
		ng_agg_row *r = ng_agg_table_get(&c->t, k, ng_hash_words(k, c->t.kwords));
		if (!r)
			return -1;
		ng_agg_row_add(r, v->flows, v->packets, v->bytes, v->first, v->last);
	}
	for (size_t i = 0; i < c->t64.n; i++) {
		memset(k, 0, c->t.kwords * 8);
		memcpy(k, &c->t64.keys[i], 8); /* NG_FAST_64: kwords is 1 */
		ng_agg_row *r = ng_agg_table_get(&c->t, k, ng_hash_words(k, c->t.kwords));
		if (!r)
			return -1;
		const ng_agg_vals *v = &c->t64.v[i];
		ng_agg_row_add(r, v->flows, v->packets, v->bytes, v->first, v->last);
	}
	ng_agg32_free(&c->t32);
	ng_aggdirect_free(&c->td);
	ng_agg64_free(&c->t64);
	return 0;
}

/* One key (or one either key) of ≤ 16 bits, one address key (IPv4 rows;
 * an IPv4 prefix allowed), or one-sided keys of ≤ 8 bytes in all, without
 * prefix or time bucket; the later test wins where several hold. */
void ng_choose_fast(ng_run_ctx *c)
{
	const ng_query *q = c->q;
	c->fast = NG_FAST_NONE;
	if (q->nfold || q->nfolds)
		return; /* folding is done on the generic table's keys */
	if (!c->xform && c->either < 0 && ng_query_key_len(q) <= 8)
		c->fast = NG_FAST_64;
	if (q->nkeys != 1 || q->keys[0].bucket_ms)
		return;
	const ng_group_key *g = &q->keys[0];
	const ng_field *f = &ng_fields[g->field];
	if (f->type <= NG_FT_U16 && !g->plen4 && !g->plen6 &&
	    (g->alt < 0 || ng_fields[g->alt].size == f->size))
		c->fast = NG_FAST_DIRECT;
	if (f->type == NG_FT_ADDR && (g->alt < 0 || ng_fields[g->alt].type == NG_FT_ADDR)) {
		c->fast = NG_FAST_V4;
		c->mask4 = g->plen4 ? ~UINT32_C(0) << (32 - g->plen4) : ~UINT32_C(0);
	}
}
