/*
 * query.c — running a query (see query.h) over ng_store_scan.
 *
 * The scan hands over one segment's matching time slice at a time as
 * column arrays.  A filter runs inside the scan (select_rows) on its own
 * columns, so the other columns are decoded only for blocks with a match
 * and the batches hold matching rows only.  A listing copies the rows
 * out as records (the first `limit` by flow_start in a max-heap, read
 * serially; without a limit, in parallel, sorted by flow_start and scan
 * order), an aggregation folds them into hash tables (agg.c: for one IPv4
 * address, a ≤ 16-bit or a ≤ 8-byte key; else the generic table keyed by
 * the concatenated key bytes).  Ties in a top-N are broken by the key
 * bytes, ascending, so results are deterministic.
 */
#include "query/query.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/addr.h"
#include "core/hash.h"
#include "query/agg.h"

/* ---- the model ---------------------------------------------------------- */

static const struct {
	const char *name;
	enum ng_field_id a, b;
} either_keys[] = {
    {"ip", NG_F_SRC_ADDR, NG_F_DST_ADDR},   {"port", NG_F_SRC_PORT, NG_F_DST_PORT},
    {"as", NG_F_SRC_AS, NG_F_DST_AS},       {"if", NG_F_IN_IF, NG_F_OUT_IF},
    {"mask", NG_F_SRC_MASK, NG_F_DST_MASK}, {"vlan", NG_F_SRC_VLAN, NG_F_DST_VLAN},
    {"mac", NG_F_SRC_MAC, NG_F_DST_MAC},
};

static int add_key(ng_query *q, enum ng_field_id f, int alt, const char *label, char *err,
                   size_t errlen)
{
	if (q->nkeys >= NG_QUERY_MAX_KEYS) {
		snprintf(err, errlen, "at most %d group-by fields", NG_QUERY_MAX_KEYS);
		return -1;
	}
	q->keys[q->nkeys++] = (ng_group_key){.field = f, .alt = alt, .label = label};
	if (ng_query_key_len(q) > NG_QUERY_KEY_MAX) {
		snprintf(err, errlen, "group-by key longer than %d bytes", NG_QUERY_KEY_MAX);
		return -1;
	}
	return 0;
}

/* nfdump's "srcip4/24" / "dstip6/64": an address key cut to a prefix.
 * Returns 1 when `t` is one (added, or merged into the same field's key),
 * 0 when it is not, -1 on a bad length. */
static int parse_prefix_key(ng_query *q, const char *t, char *err, size_t errlen)
{
	unsigned fam, len;
	char side[4], rest;
	if (sscanf(t, "%3[srcdstSRCDST]ip%u/%u%c", side, &fam, &len, &rest) != 3 ||
	    (fam != 4 && fam != 6))
		return 0;
	bool src = !strcasecmp(side, "src");
	if (!src && strcasecmp(side, "dst"))
		return 0;
	if (len == 0 || len > (fam == 4 ? 32u : 128u)) {
		snprintf(err, errlen, "bad prefix length in '%s' (1..%u)", t, fam == 4 ? 32 : 128);
		return -1;
	}
	enum ng_field_id f = src ? NG_F_SRC_ADDR : NG_F_DST_ADDR;
	ng_group_key *k = NULL;
	for (size_t i = 0; i < q->nkeys; i++)
		if (q->keys[i].field == f && q->keys[i].alt < 0)
			k = &q->keys[i];
	if (!k) {
		if (add_key(q, f, -1, src ? "srcip" : "dstip", err, errlen))
			return -1;
		k = &q->keys[q->nkeys - 1];
	}
	if (fam == 4)
		k->plen4 = (uint8_t)len;
	else
		k->plen6 = (uint8_t)len;
	return 1;
}

int ng_query_parse_keys(ng_query *q, const char *spec, char *err, size_t errlen)
{
	char buf[256];
	if (strlen(spec) >= sizeof buf || !*spec) {
		snprintf(err, errlen, "bad group-by list '%s'", spec);
		return -1;
	}
	strcpy(buf, spec);
	bool have_either = false;
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int pr = parse_prefix_key(q, t, err, errlen);
		if (pr < 0)
			return -1;
		if (pr > 0)
			continue;
		if (!strcasecmp(t, "conv") || !strcasecmp(t, "record")) {
			if (add_key(q, NG_F_SRC_ADDR, -1, "srcip", err, errlen) ||
			    add_key(q, NG_F_DST_ADDR, -1, "dstip", err, errlen))
				return -1;
			continue;
		}
		bool found = false;
		for (size_t i = 0; i < sizeof either_keys / sizeof either_keys[0]; i++) {
			if (strcasecmp(t, either_keys[i].name))
				continue;
			if (have_either) {
				snprintf(err, errlen,
				         "only one either-side key (ip, port, as, if, ...) per "
				         "group-by");
				return -1;
			}
			have_either = found = true;
			if (add_key(q, either_keys[i].a, (int)either_keys[i].b, either_keys[i].name,
			            err, errlen))
				return -1;
		}
		if (found)
			continue;
		const ng_field *f = ng_field_by_name(t);
		if (!f) {
			snprintf(
			    err, errlen,
			    "unknown group-by field '%s' (try srcip, dstip, ip, srcport, dstport, "
			    "port, proto, exporter, srcas, dstas, inif, outif, conv or a field "
			    "name from docs/fields.md)",
			    t);
			return -1;
		}
		if (add_key(q, f->id, -1, f->short_name ? f->short_name : f->name, err, errlen))
			return -1;
	}
	return 0;
}

static const char *order_names[] = {"flows", "packets", "bytes", "pps", "bps", "bpp"};

bool ng_query_parse_order(const char *s, enum ng_order *out)
{
	for (size_t i = 0; i < sizeof order_names / sizeof order_names[0]; i++)
		if (!strcasecmp(s, order_names[i])) {
			*out = (enum ng_order)i;
			return true;
		}
	return false;
}

const char *ng_order_name(enum ng_order o)
{
	return (unsigned)o < sizeof order_names / sizeof order_names[0] ? order_names[o] : "?";
}

/* The metric `o` of a group's values (see ng_agg_metric). */
static double vals_metric(const ng_agg_vals *v, enum ng_order o)
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

double ng_agg_metric(const ng_agg_row *r, enum ng_order o)
{
	ng_agg_vals v = {r->flows, r->packets, r->bytes, r->first, r->last};
	return vals_metric(&v, o);
}

size_t ng_query_key_len(const ng_query *q)
{
	size_t n = 0;
	for (size_t i = 0; i < q->nkeys; i++)
		n += ng_fields[q->keys[i].field].size;
	return n;
}

/* ---- running -------------------------------------------------------------- */

typedef struct run_ctx {
	const ng_query *q;
	ng_query_result *res;
	uint8_t *match;
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
	/* group-by fast paths (agg.c) for one key, folded into t at the end */
	enum { FAST_NONE, FAST_V4, FAST_DIRECT, FAST_64 } fast;
	uint32_t mask4; /* FAST_V4: the key's IPv4 prefix mask */
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
	/* the rows read from top rollups ("Top rollups" below) */
	struct top_row *top;
	size_t ntop, top_cap;
} run_ctx;

/* Applies the keys' prefixes and time buckets to a built key. */
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

static bool list_before(const ng_flow *a, uint64_t sa, const ng_flow *b, uint64_t sb)
{
	return a->flow_start != b->flow_start ? a->flow_start < b->flow_start : sa < sb;
}

static void heap_swap(run_ctx *c, size_t i, size_t j)
{
	ng_flow t = c->list[i];
	c->list[i] = c->list[j];
	c->list[j] = t;
	uint64_t s = c->seq[i];
	c->seq[i] = c->seq[j];
	c->seq[j] = s;
}

/* Max-heap by (flow_start, seq): the root is the latest kept flow. */
static void heap_down(run_ctx *c, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < c->nlist && list_before(&c->list[m], c->seq[m], &c->list[l], c->seq[l]))
			m = l;
		if (r < c->nlist && list_before(&c->list[m], c->seq[m], &c->list[r], c->seq[r]))
			m = r;
		if (m == i)
			return;
		heap_swap(c, i, m);
		i = m;
	}
}

static void heap_up(run_ctx *c, size_t i)
{
	while (i) {
		size_t p = (i - 1) / 2;
		if (!list_before(&c->list[p], c->seq[p], &c->list[i], c->seq[i]))
			return;
		heap_swap(c, i, p);
		i = p;
	}
}

static void row_to_flow(const ng_column_batch *b, size_t i, ng_flow *r)
{
	memset(r, 0, sizeof *r);
	for (size_t f = 0; f < NG_FIELD_COUNT; f++)
		if (b->col[f])
			memcpy((uint8_t *)r + ng_fields[f].offset,
			       (const uint8_t *)b->col[f] + i * ng_fields[f].size,
			       ng_fields[f].size);
}

static int list_row(run_ctx *c, const ng_column_batch *b, size_t i)
{
	size_t limit = c->q->limit;
	ng_flow r;
	row_to_flow(b, i, &r);
	/* the scan's order, the same for a serial and a parallel scan */
	uint64_t seq = b->segment << 32 | ng_batch_row(b, i);
	if (limit && c->nlist == limit) {
		if (!list_before(&r, seq, &c->list[0], c->seq[0]))
			return 0;
		c->list[0] = r;
		c->seq[0] = seq;
		heap_down(c, 0);
		return 0;
	}
	if (c->nlist == c->list_cap) {
		size_t cap = c->list_cap ? c->list_cap * 2 : 256;
		ng_flow *l = realloc(c->list, cap * sizeof *l);
		uint64_t *s = realloc(c->seq, cap * sizeof *s);
		if (l)
			c->list = l;
		if (s)
			c->seq = s;
		if (!l || !s)
			return -1;
		c->list_cap = cap;
	}
	c->list[c->nlist] = r;
	c->seq[c->nlist] = seq;
	c->nlist++;
	if (limit)
		heap_up(c, c->nlist - 1);
	return 0;
}

enum { AGG_BLOCK = 32 };

/* q->fold: a key part that is none of the kept values becomes "other". */
static void fold_key(const ng_query *q, uint8_t *k)
{
	uint8_t *part = k + q->fold_off;
	for (size_t i = 0; i < q->nfold; i++)
		if (!memcmp(part, q->fold + i * q->fold_len, q->fold_len))
			return;
	memcpy(part, q->fold_other, q->fold_len);
}

/*
 * Adds the rows idx[0..n) (n ≤ AGG_BLOCK) to their groups, the either key
 * (if any) taking its `alt` side when `alt_side`.  Keys and hashes are made
 * for the whole block first and their slots prefetched, so the cache
 * misses of a large table overlap instead of coming one after another.
 */
static int agg_block(run_ctx *c, const ng_column_batch *b, const uint32_t *idx, size_t n,
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
		if (c->q->nfold)
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

/* A listing that holds its first `limit` flows needs no segment whose
 * rows all start at or after the latest kept one: they would come after
 * it.  (Totals then cover the segments read, as nfdump's do with -c.) */
static bool want_segment(const ng_segment_info *s, void *arg)
{
	const run_ctx *c = arg;
	return !(c->q->limit && c->nlist == c->q->limit && s->start_min >= c->list[0].flow_start);
}

/* True (and c->timed_out set) once q->deadline_ms has passed: checked
 * once a batch (≤ 16384 rows), a clock read is nothing beside it. */
static bool past_deadline(run_ctx *c)
{
	if (!c->q->deadline_ms)
		return false;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t now = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	if (now >= c->q->deadline_ms)
		c->timed_out = true;
	return c->timed_out;
}

/* Sets c->match for batch b (NULL: no filter, or the scan's select ran
 * it already) and c->nmatch to the rows that pass.  Returns -1 when out
 * of memory. */
static int eval_filter(run_ctx *c, const ng_column_batch *b, const uint8_t **match)
{
	*match = NULL;
	c->nmatch = b->n;
	if (!c->q->filter || c->presel)
		return 0;
	if (b->n > c->match_cap) {
		uint8_t *m = realloc(c->match, b->n);
		if (!m)
			return -1;
		c->match = m;
		c->match_cap = b->n;
	}
	if (!c->fctx && !(c->fctx = ng_filter_ctx_new(c->q->filter)))
		return -1;
	size_t k = ng_filter_eval_ctx(c->q->filter, c->fctx, b, c->match);
	*match = c->match;
	c->nmatch = k;
	return k == (size_t)-1 ? -1 : 0;
}

/* Zone-map pruning (ng_filter_may_match): `arg` is a run_ctx (or the
 * first of the workers' array), all with the same filter. */
static bool may_match(const ng_zone_map *z, void *arg)
{
	const run_ctx *c = arg;
	return ng_filter_may_match(c->q->filter, z);
}

/* ng_scan_opts.select: the filter on its own columns, before the scan
 * decodes the others (late materialization).  `arg` is the array of the
 * workers' contexts (one for a serial scan). */
static int select_rows(const ng_column_batch *b, unsigned worker, void *arg, uint32_t *sel,
                       size_t *nsel)
{
	run_ctx *c = (run_ctx *)arg + worker;
	const uint8_t *match;
	if (past_deadline(c))
		return 1;
	c->presel = false;
	int rc = eval_filter(c, b, &match);
	c->presel = true;
	if (rc) {
		c->oom = true;
		return 1;
	}
	size_t n = 0;
	for (size_t i = 0; c->nmatch && i < b->n; i++) { /* branch-free compaction */
		sel[n] = (uint32_t)i;
		n += match[i];
	}
	*nsel = n;
	return 0;
}

/* Late materialization for a query with a filter: the scan evaluates it
 * on its columns first and decodes the rest only for blocks with a match.
 * `ctx` are the nw contexts select_rows gets; so->columns must be set. */
static void use_select(ng_scan_opts *so, run_ctx *ctx, unsigned nw)
{
	if (!ctx->q->filter)
		return;
	so->select = select_rows;
	so->select_columns = ng_filter_columns(ctx->q->filter);
	/* a filter's column that nothing after it reads may come as the
	 * codes of a RANK dictionary: each distinct value tested once */
	so->select_codes = ng_filter_code_columns(ctx->q->filter) & ~so->columns;
	for (unsigned i = 0; i < nw; i++)
		ctx[i].presel = true;
}

static int on_batch_list(const ng_column_batch *b, void *arg)
{
	run_ctx *c = arg;
	ng_query_result *res = c->res;
	const uint8_t *match;
	if (past_deadline(c))
		return 1;
	if (eval_filter(c, b, &match))
		goto oom;
	const uint64_t *start = b->col[NG_F_FLOW_START], *end = b->col[NG_F_FLOW_END];
	const uint64_t *pk = b->col[NG_F_PACKETS], *by = b->col[NG_F_BYTES];
	for (size_t i = 0; i < b->n; i++) {
		if (match && !match[i])
			continue;
		res->flows_total++;
		res->packets_total += pk[i];
		res->bytes_total += by[i];
		if (start[i] < res->first)
			res->first = start[i];
		if (end[i] > res->last)
			res->last = end[i];
		if (list_row(c, b, i))
			goto oom;
	}
	return 0;
oom:
	c->oom = true;
	return 1;
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
 * word as the generic table lays them out (FAST_64: ≤ 8 bytes).  Field
 * after field, with constant-size copies. */
static void pack_keys(run_ctx *c, const ng_column_batch *b, const uint32_t *idx, size_t n)
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
 * for FAST_V4: the generic table takes them), 0 done, -1 out of memory. */
static int agg_fast(run_ctx *c, const ng_column_batch *b, const uint32_t *idx, size_t n,
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
	if (c->fast == FAST_64) {
		pack_keys(c, b, idx, n);
		return ng_agg64_add(&c->t64, c->k64, &in);
	}
	if (c->fast == FAST_DIRECT) {
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

static int agg_rows(run_ctx *c, const ng_column_batch *b, const uint32_t *idx, size_t n)
{
	for (int side = 0; side < (c->either >= 0 ? 2 : 1); side++) {
		int rc = c->fast != FAST_NONE ? agg_fast(c, b, idx, n, side) : 1;
		if (rc < 0)
			return -1;
		for (size_t m = 0; rc > 0 && m < n; m += AGG_BLOCK)
			if (agg_block(c, b, idx + m, n - m < AGG_BLOCK ? n - m : AGG_BLOCK, side))
				return -1;
	}
	return 0;
}

static int on_batch_agg(const ng_column_batch *b, void *arg)
{
	run_ctx *c = arg;
	ng_query_result *res = c->res;
	const uint8_t *match;
	if (past_deadline(c))
		return 1;
	if (eval_filter(c, b, &match))
		goto oom;
	if (b->n > c->idx_cap) {
		uint32_t *i = realloc(c->idx, b->n * sizeof *i), *k = NULL;
		uint16_t *h = NULL;
		if (i)
			c->idx = i;
		if (i && (k = realloc(c->k32, b->n * sizeof *k)))
			c->k32 = k;
		if (k && (h = realloc(c->k16, b->n * sizeof *h)))
			c->k16 = h;
		uint64_t *w = h ? realloc(c->k64, b->n * sizeof *w) : NULL;
		if (w)
			c->k64 = w;
		if (!w)
			goto oom;
		c->idx_cap = b->n;
	}
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

static int on_batch_par(const ng_column_batch *b, unsigned worker, void *arg)
{
	run_ctx *w = arg;
	return on_batch_agg(b, &w[worker]);
}

static int on_batch_list_par(const ng_column_batch *b, unsigned worker, void *arg)
{
	run_ctx *w = arg;
	return on_batch_list(b, &w[worker]);
}

/* Adds a worker's totals (flows, packets, bytes, first, last) to res. */
static void add_totals(ng_query_result *res, const ng_query_result *part)
{
	res->flows_total += part->flows_total;
	res->packets_total += part->packets_total;
	res->bytes_total += part->bytes_total;
	res->first = part->first < res->first ? part->first : res->first;
	res->last = part->last > res->last ? part->last : res->last;
}

/* Folds the fast-path tables of c into its generic table. */
static int fold_fast(run_ctx *c)
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
		memcpy(k, &c->t64.keys[i], 8); /* FAST_64: kwords is 1 */
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

static int cmp_listed(const void *a, const void *b, void *arg)
{
	const run_ctx *c = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	if (list_before(&c->list[i], c->seq[i], &c->list[j], c->seq[j]))
		return -1;
	return list_before(&c->list[j], c->seq[j], &c->list[i], c->seq[i]) ? 1 : 0;
}

/* Moves the kept flows into res, in flow_start order. */
static int finish_listing(run_ctx *c)
{
	size_t n = c->nlist;
	size_t *idx = malloc((n ? n : 1) * sizeof *idx);
	ng_flow *out = malloc((n ? n : 1) * sizeof *out);
	if (!idx || !out) {
		free(idx);
		free(out);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	qsort_r(idx, n, sizeof *idx, cmp_listed, c);
	for (size_t i = 0; i < n; i++)
		out[i] = c->list[idx[i]];
	free(idx);
	c->res->flows = out;
	c->res->nflows = n;
	return 0;
}

/* Candidates for a top-N: each one's order metric, and its key for ties
 * (smaller first): generic rows (klen bytes) or IPv4 numbers (k32). */
typedef struct top_ctx {
	const double *met;
	const ng_agg_row *rows;
	size_t klen;
	const uint32_t *k32;
} top_ctx;

/* True when candidate a ranks before b: higher metric, then smaller key.
 * An IPv4 number's order is its v4-mapped key bytes' order. */
static bool ranks_before(const top_ctx *t, size_t a, size_t b)
{
	if (t->met[a] != t->met[b])
		return t->met[a] > t->met[b];
	if (t->k32)
		return t->k32[a] < t->k32[b];
	return memcmp(t->rows[a].key, t->rows[b].key, t->klen) < 0;
}

static int cmp_rank(const void *a, const void *b, void *arg)
{
	const top_ctx *t = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	if (ranks_before(t, x, y))
		return -1;
	return ranks_before(t, y, x) ? 1 : 0;
}

/* Min-heap (worst ranked at the root) of candidate indices. */
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

/* "Top rollups" below */
typedef struct top_cover top_cover;
static int top_proved(const ng_query *q, top_cover *cv, double *met, size_t n, const size_t *h);
static bool top_exact(const top_cover *cv);

/* Keeps the best `limit` groups of c's generic table (all when 0) into
 * res->rows, best first.  With cv (a top-N through top rollups), only
 * when cv proves them exact (top_proved).  Returns 0, 1 (not proved) or
 * -1 (out of memory). */
static int finish_top(run_ctx *c, top_cover *cv)
{
	const ng_query *q = c->q;
	size_t n = c->t.n, keep = q->limit && q->limit < n ? q->limit : n;
	size_t *h = malloc((keep ? keep : 1) * sizeof *h);
	double *met = malloc((n ? n : 1) * sizeof *met);
	ng_agg_row *out = malloc((keep ? keep : 1) * sizeof *out);
	int rc = h && met && out ? 0 : -1;
	for (size_t i = 0; rc == 0 && i < n; i++)
		met[i] = ng_agg_metric(&c->t.rows[i], q->order);
	top_ctx t = {.met = met, .rows = c->t.rows, .klen = ng_query_key_len(q)};
	if (rc == 0)
		select_top(&t, n, keep, h);
	if (rc == 0 && cv)
		rc = top_proved(q, cv, met, n, h);
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
	c->res->groups = n;
	c->res->groups_exact = !cv || top_exact(cv);
	return 0;
}

/* finish_top for a query whose every group sits in c's IPv4 table (one
 * address key, no IPv6 row): the top is chosen there, and only its
 * groups become rows (no generic table of every group). */
static int finish_top32(run_ctx *c)
{
	const ng_query *q = c->q;
	const ng_agg32 *t32 = &c->t32;
	size_t n = t32->n, keep = q->limit && q->limit < n ? q->limit : n;
	size_t *h = malloc((keep ? keep : 1) * sizeof *h);
	double *met = malloc((n ? n : 1) * sizeof *met);
	ng_agg_row *out = calloc(keep ? keep : 1, sizeof *out);
	if (!h || !met || !out) {
		free(h);
		free(met);
		free(out);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		met[i] = vals_metric(&t32->v[i], q->order);
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
	c->res->groups = n;
	c->res->groups_exact = true;
	return 0;
}

static void free_ctx(run_ctx *c)
{
	free(c->match);
	ng_filter_ctx_free(c->fctx);
	free(c->list);
	free(c->seq);
	ng_agg_table_free(&c->t);
	free(c->idx);
	free(c->k32);
	free(c->k16);
	free(c->k64);
	ng_agg32_free(&c->t32);
	ng_aggdirect_free(&c->td);
	ng_agg64_free(&c->t64);
	free(c->top);
}

/* The fast path for q's keys, if any: one key (or one either key) of
 * ≤ 16 bits, one address key (IPv4 rows; an IPv4 prefix allowed), or
 * one-sided keys of ≤ 8 bytes in all, without prefix or time bucket. */
static void choose_fast(run_ctx *c)
{
	const ng_query *q = c->q;
	c->fast = FAST_NONE;
	if (q->nfold)
		return; /* folding is done on the generic table's keys */
	if (!c->xform && c->either < 0 && ng_query_key_len(q) <= 8)
		c->fast = FAST_64;
	if (q->nkeys != 1 || q->keys[0].bucket_ms)
		return;
	const ng_group_key *g = &q->keys[0];
	const ng_field *f = &ng_fields[g->field];
	if (f->type <= NG_FT_U16 && !g->plen4 && !g->plen6 &&
	    (g->alt < 0 || ng_fields[g->alt].size == f->size))
		c->fast = FAST_DIRECT;
	if (f->type == NG_FT_ADDR && (g->alt < 0 || ng_fields[g->alt].type == NG_FT_ADDR)) {
		c->fast = FAST_V4;
		c->mask4 = g->plen4 ? ~UINT32_C(0) << (32 - g->plen4) : ~UINT32_C(0);
	}
}

/* True when every group of the workers sits in their IPv4 tables. */
static bool only_v4(const run_ctx *w, unsigned nw)
{
	for (unsigned i = 0; i < nw; i++)
		if (w[i].fast != FAST_V4 || w[i].t.n)
			return false;
	return true;
}

/* Merges the workers' IPv4 tables and totals into w[0] and picks the top
 * there.  Returns 0 or -2 (out of memory). */
static int merge_v4(run_ctx *w, unsigned nw, const ng_query_result *part)
{
	for (unsigned i = 1; i < nw; i++) {
		if (ng_agg32_merge(&w[0].t32, &w[i].t32))
			return -2;
		ng_agg32_free(&w[i].t32);
		add_totals(w[0].res, &part[i]);
	}
	return finish_top32(&w[0]) ? -2 : 0;
}

/* Folds every worker's fast tables into its generic table and merges
 * those and the totals into w[0].  Returns 0 or -2. */
static int merge_workers(run_ctx *w, unsigned nw, const ng_query_result *part)
{
	/* direct tables (keys of 16 bits) add up element by element, without
	 * hashing each worker's groups into its generic table and then that
	 * table into worker 0's */
	for (unsigned i = 1; i < nw; i++)
		ng_aggdirect_merge(&w[0].td, &w[i].td);
	for (unsigned i = 0; i < nw; i++)
		if (fold_fast(&w[i]))
			return -2;
	for (unsigned i = 1; i < nw; i++) {
		if (ng_agg_table_merge(&w[0].t, &w[i].t))
			return -2;
		add_totals(w[0].res, &part[i]);
	}
	return 0;
}

/* merge_workers, then the top.  Returns 0 or -2. */
static int merge_generic(run_ctx *w, unsigned nw, const ng_query_result *part)
{
	return merge_workers(w, nw, part) || finish_top(&w[0], NULL) ? -2 : 0;
}

/*
 * Group-by on `nw` scan workers, each with its own tables and totals,
 * merged into workers[0] (whose res is the caller's) at the end.
 */
/* The contexts of a parallel scan: worker 0 writes into the caller's
 * result, worker i > 0 into part[i]. */
typedef struct workers {
	run_ctx *w;
	ng_query_result *part;
	unsigned n;
} workers;

static void free_workers(workers *ws)
{
	for (unsigned i = 0; ws->w && i < ws->n; i++)
		free_ctx(&ws->w[i]);
	free(ws->w);
	free(ws->part);
}

/* What scan_part needs besides the range. */
typedef struct part_scan {
	const char *dir;
	workers *ws;
	uint64_t cols;
	int (*fn_par)(const ng_column_batch *, unsigned, void *);
	ng_query_result *res;
} part_scan;

/* Scans [from, to) into the workers' state (rollup: the suffix of the
 * rollup to read segments through, or NULL), adding to res->scan.
 * Returns ng_store_scan_opts's value. */
static int scan_part(const part_scan *p, uint64_t from, uint64_t to, const char *rollup)
{
	const ng_query *q = p->ws->w[0].q;
	ng_scan_opts so = {.from_ms = from,
	                   .to_ms = to,
	                   .columns = p->cols,
	                   .fn_par = p->fn_par,
	                   .threads = p->ws->n,
	                   .arg = p->ws->w,
	                   .rollup = rollup};
	if (q->filter && !q->no_prune)
		so.may_match = may_match;
	use_select(&so, p->ws->w, p->ws->n);
	ng_scan_stats st;
	int rc = ng_store_scan_opts(p->dir, &so, &st);
	ng_scan_stats_add(&p->res->scan, &st);
	return rc;
}

/* The rollup set (ng_rollup_pick) that answers q exactly, or -1: a
 * group-by whose keys and filter use only the set's fields, time keys
 * being buckets of flow_start (their size is checked per level). */
static int rollup_set(const ng_query *q)
{
	if (q->no_rollup || !q->nkeys)
		return -1;
	uint64_t need = q->filter ? ng_filter_columns(q->filter) : 0;
	if (need & NG_COL(NG_F_FLOW_START))
		return -1; /* a filter on a flow's own times */
	for (size_t j = 0; j < q->nkeys; j++) {
		const ng_group_key *g = &q->keys[j];
		if (g->field == NG_F_FLOW_START && g->bucket_ms)
			continue;
		if (g->plen4 || g->plen6 || g->bucket_ms)
			return -1;
		need |= NG_COL(g->field) | (g->alt >= 0 ? NG_COL(g->alt) : 0);
	}
	return ng_rollup_pick(need);
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
 * Scans [from, to) through rollup `set` of level `level` and finer: the
 * whole buckets of the level inside the range from its rollups, the
 * pieces at either end from the next level, and from the rows after the
 * finest level (or with no set: set < 0).  A rollup row's flow_start is
 * its earliest flow's, in its bucket, so the scan's range slices the
 * rollups as exactly as the rows.  Returns ng_store_scan_opts's value.
 */
static int scan_levels(const part_scan *p, uint64_t from, uint64_t to, int set, unsigned level)
{
	if (from >= to)
		return 0;
	if (set < 0 || level >= NG_ROLLUP_NLEVELS)
		return scan_part(p, from, to, NULL);
	const uint64_t l = ng_rollup_levels_ms[level];
	if (from > UINT64_MAX - l) /* no whole bucket fits, and a would overflow */
		return scan_levels(p, from, to, set, level + 1);
	uint64_t a = from + (l - from % l) % l, b = to - to % l;
	char suffix[32];
	if (!level_fits(p->ws->w[0].q, l) || a >= b ||
	    ng_rollup_suffix((unsigned)set, level, suffix, sizeof suffix))
		return scan_levels(p, from, to, set, level + 1);
	int rc = scan_part(p, a, b, suffix);
	if (rc == 0)
		rc = scan_levels(p, from, a, set, level + 1);
	if (rc == 0)
		rc = scan_levels(p, b, to, set, level + 1);
	return rc;
}

/* ---- top rollups -----------------------------------------------------------
 *
 * A top-N of one address field (srcip, dstip) by flows, packets or bytes
 * reads the top rollups (store.h) of the whole hours of its range, the
 * rows elsewhere.  A top rollup lists only a part's (a segment's hour's)
 * largest groups, so the answer is proved exact before it is given, or
 * the query runs on the rows alone:
 *   - a group's sum over the parts that list it and the rows is a lower
 *     bound lo; in a part that does not list it a group has at most that
 *     part's bound, so it has at most lo + T (T: every part's bound
 *     summed), and a group seen nowhere at most T;
 *   - the top N by lo is the answer when no other group can reach the
 *     N-th lo (by its own upper bound, or T for one seen nowhere), and
 *     each of the N is listed by every part that left groups out (its
 *     lo is its sum).
 * On a day of real (heavy-tailed) traffic this holds by far.  `groups`
 * then counts the groups seen (groups_exact false).
 */

typedef struct top_row {
	uint64_t segment; /* the batch's segment: one part */
	uint8_t addr[16];
	bool mark; /* a marker row (ip_version NG_ROLLUP_MARK) */
	uint64_t flows, packets, bytes, first, last;
} top_row;

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
	return !q->filter || (!ng_filter_columns(q->filter) && ng_filter_match_flow(q->filter, &f));
}

/* The top rollup set that may answer q, or -1: one address key (no
 * prefix, no either), no filter, ordered by flows, packets or bytes, a
 * limit the rollups can hold, and a whole hour in the range. */
static int top_set_for(const ng_query *q)
{
	if (q->no_rollup || !passes_all(q) || q->nfold || q->nkeys != 1 ||
	    q->order > NG_ORDER_BYTES || !q->limit || q->limit >= NG_ROLLUP_TOP_K)
		return -1;
	const ng_group_key *g = &q->keys[0];
	uint64_t a, b;
	top_hours(q, &a, &b);
	if (g->alt >= 0 || g->plen4 || g->plen6 || g->bucket_ms || a >= b)
		return -1;
	return ng_rollup_top_set(g->field);
}

/* Scans q's range for a top-N through top rollup `set`: the whole hours
 * through it (a segment without it as rows), the ends as rows. */
static int scan_top(const part_scan *p, int set)
{
	const ng_query *q = p->ws->w[0].q;
	uint64_t a, b;
	top_hours(q, &a, &b);
	char suffix[32];
	if (ng_rollup_suffix((unsigned)set, 0, suffix, sizeof suffix))
		return -1;
	int rc = scan_part(p, a, b, suffix);
	if (rc == 0 && q->from_ms < a)
		rc = scan_part(p, q->from_ms, a, NULL);
	if (rc == 0 && b < q->to_ms)
		rc = scan_part(p, b, q->to_ms, NULL);
	return rc;
}

/* A batch of a top-N scan: rows aggregate as always, a top rollup's rows
 * are kept for top_merge. */
static int on_batch_top(const ng_column_batch *b, unsigned worker, void *arg)
{
	run_ctx *c = &((run_ctx *)arg)[worker];
	if (!b->flows)
		return on_batch_agg(b, c);
	if (c->ntop + b->n > c->top_cap) {
		size_t cap = (c->ntop + b->n) * 2;
		top_row *t = realloc(c->top, cap * sizeof *t);
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
		top_row *t = &c->top[c->ntop++];
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

/* Scans in parallel with a copy of `proto` per worker (`fast`: each picks
 * its fast aggregation path), batches going to fn_par.  Returns 0, -1 (the
 * scan failed), -2 (out of memory in a worker) or -3 (a worker ran out of
 * time); *ws is set in every case, for the caller to merge and then free
 * with free_workers. */
static int scan_workers(const char *dir, run_ctx *proto, uint64_t cols,
                        int (*fn_par)(const ng_column_batch *, unsigned, void *), bool fast,
                        int top_set, ng_query_result *res, workers *ws)
{
	const ng_query *q = proto->q;
	ws->n = ng_store_scan_threads(q->threads);
	ws->w = calloc(ws->n, sizeof *ws->w);
	ws->part = calloc(ws->n, sizeof *ws->part);
	if (!ws->w || !ws->part)
		return -2;
	for (unsigned i = 0; i < ws->n; i++) {
		ws->w[i] = *proto;
		ws->w[i].res = i == 0 ? res : &ws->part[i];
		ws->w[i].res->first = UINT64_MAX;
		if (fast)
			choose_fast(&ws->w[i]);
	}
	part_scan ps = {dir, ws, cols, fn_par, res};
	if ((top_set >= 0 ? scan_top(&ps, top_set)
	                  : scan_levels(&ps, q->from_ms, q->to_ms, rollup_set(q), 0)) == -1)
		return -1;
	for (unsigned i = 0; i < ws->n; i++)
		if (ws->w[i].timed_out)
			return -3;
	for (unsigned i = 0; i < ws->n; i++)
		if (ws->w[i].oom)
			return -2;
	return 0;
}

static int run_grouped(const char *dir, run_ctx *proto, uint64_t cols, ng_query_result *res)
{
	workers ws;
	int rc = scan_workers(dir, proto, cols, on_batch_par, true, -1, res, &ws);
	if (rc == 0)
		rc = only_v4(ws.w, ws.n) ? merge_v4(ws.w, ws.n, ws.part)
		                         : merge_generic(ws.w, ws.n, ws.part);
	free_workers(&ws);
	return rc;
}

static int cmp_top_segment(const void *a, const void *b)
{
	const top_row *x = a, *y = b;
	return x->segment < y->segment ? -1 : x->segment > y->segment;
}

/* Per group of a top-N's table (by row): the parts that list it, their
 * bounds summed and how many of them left groups out. */
struct top_cover {
	uint64_t *tin;
	uint32_t *nin;
	size_t cap;
	uint64_t T;    /* every part's bound */
	uint32_t ninc; /* parts that left groups out */
};

/* True when no part left a group out: the groups are all known. */
static bool top_exact(const top_cover *cv)
{
	return cv->ninc == 0;
}

/* Room for row j in cv's arrays (cap: the table's).  Returns 0 or -2. */
static int cover_room(top_cover *cv, size_t j, size_t cap)
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

/* Adds one part's rows p[0..n) (a segment's top rollup) to c's table and
 * totals and to *cv.  Returns 0, 1 (not one bound row: not a top
 * rollup's rows) or -2 (out of memory). */
static int top_part(run_ctx *c, const top_row *p, size_t n, top_cover *cv)
{
	const top_row *bound = NULL;
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
		const top_row *t = &p[i];
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

/* Whether the top N (h[0..N), of the n groups whose order metrics are
 * met[]) is proved exact by cv (see "Top rollups"): 0 yes, 1 no, -1 out
 * of memory.  The metrics and T are sums of integers below 2^53: exact
 * as doubles. */
static int top_proved(const ng_query *q, top_cover *cv, double *met, size_t n, const size_t *h)
{
	if (top_exact(cv))
		return 0;
	if (cover_room(cv, n, n + 1))
		return -1; /* rows only seen in the rows get their (zero) entries */
	if (n < q->limit)
		return 1; /* a group seen nowhere might be in it */
	double th = met[h[q->limit - 1]];
	if (!((double)cv->T < th))
		return 1;
	for (size_t i = 0; i < q->limit; i++)
		if (cv->nin[h[i]] != cv->ninc)
			return 1;
	for (size_t i = 0; i < q->limit; i++)
		met[h[i]] = -1; /* out of the way of the check below */
	for (size_t i = 0; i < n; i++)
		if (met[i] >= 0 && !(met[i] + (double)(cv->T - cv->tin[i]) < th))
			return 1;
	return 0;
}

/* Merges the workers' tables and top rollup rows into w[0] and proves
 * its top N.  Returns 0, 1 (not proved) or -2. */
static int top_merge(run_ctx *w, unsigned nw, const ng_query_result *part)
{
	size_t total = 0;
	for (unsigned i = 0; i < nw; i++)
		total += w[i].ntop;
	top_row *all = malloc((total ? total : 1) * sizeof *all);
	if (!all)
		return -2;
	for (unsigned i = 0, k = 0; i < nw; k += w[i].ntop, i++)
		if (w[i].ntop)
			memcpy(all + k, w[i].top, w[i].ntop * sizeof *all);
	qsort(all, total, sizeof *all, cmp_top_segment);
	int rc = merge_workers(w, nw, part);
	top_cover cv = {0};
	for (size_t i = 0, j; rc == 0 && i < total; i = j) {
		for (j = i; j < total && all[j].segment == all[i].segment; j++)
			;
		rc = top_part(&w[0], all + i, j - i, &cv);
	}
	if (rc == 0 && (rc = finish_top(&w[0], &cv)) < 0)
		rc = -2;
	free(all);
	free(cv.tin);
	free(cv.nin);
	return rc;
}

/* A top-N through top rollup `set` (top_set_for).  Returns 0, 1 when its
 * answer is not proved exact (res is then cleared for the caller to run
 * on the rows), or what scan_workers returns. */
static int run_top(const char *dir, run_ctx *proto, uint64_t cols, int set, ng_query_result *res)
{
	workers ws;
	int rc = scan_workers(dir, proto, cols | NG_COL(NG_F_IP_VERSION), on_batch_top, true, set,
	                      res, &ws);
	if (rc == 0)
		rc = top_merge(ws.w, ws.n, ws.part);
	free_workers(&ws);
	if (rc == 1) {
		ng_query_result_free(res);
		res->first = UINT64_MAX;
	}
	return rc;
}

/* A listing of the first q->limit flows: one segment after another in
 * time order, so that the segments after the kept flows go unread
 * (want_segment). */
static int run_listing_first(const char *dir, run_ctx *c, uint64_t cols, ng_query_result *res)
{
	const ng_query *q = c->q;
	ng_scan_opts so = {.from_ms = q->from_ms,
	                   .to_ms = q->to_ms,
	                   .columns = cols,
	                   .fn = on_batch_list,
	                   .want = want_segment,
	                   .arg = c};
	if (q->filter && !q->no_prune)
		so.may_match = may_match;
	use_select(&so, c, 1);
	int rc = ng_store_scan_opts(dir, &so, &res->scan);
	if (rc != -1)
		rc = c->timed_out ? -3 : c->oom || finish_listing(c) ? -2 : 0;
	free_ctx(c);
	return rc;
}

/* Moves worker w's kept flows to the end of dst's list (w's freed). */
static int append_list(run_ctx *dst, run_ctx *w)
{
	size_t n = dst->nlist + w->nlist;
	if (n > dst->list_cap) {
		ng_flow *l = realloc(dst->list, n * sizeof *l);
		uint64_t *s = realloc(dst->seq, n * sizeof *s);
		if (l)
			dst->list = l;
		if (s)
			dst->seq = s;
		if (!l || !s)
			return -1;
		dst->list_cap = n;
	}
	if (w->nlist) {
		memcpy(dst->list + dst->nlist, w->list, w->nlist * sizeof *w->list);
		memcpy(dst->seq + dst->nlist, w->seq, w->nlist * sizeof *w->seq);
	}
	dst->nlist = n;
	free(w->list); /* a long listing is held once, not twice */
	free(w->seq);
	w->list = NULL;
	w->seq = NULL;
	w->nlist = w->list_cap = 0;
	return 0;
}

/* A listing of every matching flow: segments scanned in parallel, each
 * worker keeping its flows with their place in the scan order, then all
 * sorted by (flow_start, scan order): the serial scan's order. */
static int run_listing_all(const char *dir, run_ctx *proto, uint64_t cols, ng_query_result *res)
{
	workers ws;
	int rc = scan_workers(dir, proto, cols, on_batch_list_par, false, -1, res, &ws);
	for (unsigned i = 1; i < ws.n && rc == 0; i++) {
		if (append_list(&ws.w[0], &ws.w[i]))
			rc = -2;
		add_totals(res, &ws.part[i]);
	}
	if (rc == 0 && finish_listing(&ws.w[0]))
		rc = -2;
	free_workers(&ws);
	return rc;
}

int ng_query_run(const char *dir, const ng_query *q, ng_query_result *res, char *err, size_t errlen)
{
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(res, 0, sizeof *res);
	run_ctx c = {.q = q, .res = res, .either = -1};
	/* the columns read after the filter: a filter's own columns are read
	 * by the scan's select (use_select), which runs it on every path */
	uint64_t cols = NG_COL(NG_F_FLOW_START) | NG_COL(NG_F_FLOW_END) | NG_COL(NG_F_PACKETS) |
	                NG_COL(NG_F_BYTES);
	if (q->nkeys == 0) {
		cols = NG_FIELD_COUNT >= 64 ? UINT64_MAX : (UINT64_C(1) << NG_FIELD_COUNT) - 1;
	} else {
		size_t klen = ng_query_key_len(q);
		if (klen > NG_QUERY_KEY_MAX) {
			snprintf(err, errlen, "group-by key too long");
			return -1;
		}
		c.t.kwords = (klen + 7) / 8;
		for (size_t j = 0; j < q->nkeys; j++) {
			cols |= NG_COL(q->keys[j].field);
			if (q->keys[j].alt >= 0) {
				cols |= NG_COL(q->keys[j].alt);
				c.either = (int)j;
			}
			if (q->keys[j].plen4 || q->keys[j].plen6 || q->keys[j].bucket_ms)
				c.xform = true;
		}
	}
	res->first = UINT64_MAX;
	int rc = 1, top = q->nkeys ? top_set_for(q) : -1;
	if (top >= 0)
		rc = run_top(dir, &c, cols, top, res); /* 1: not proved exact */
	if (rc == 1)
		rc = q->nkeys   ? run_grouped(dir, &c, cols, res)
		     : q->limit ? run_listing_first(dir, &c, cols, res)
		                : run_listing_all(dir, &c, cols, res);
	if (rc == -1)
		snprintf(err, errlen, "%s is not a flow store (no %s/flows directory)", dir, dir);
	else if (rc == -3)
		snprintf(err, errlen, "the query ran past its time limit and was stopped");
	else if (rc)
		snprintf(err, errlen, "out of memory");
	if (!res->flows_total)
		res->first = 0;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	res->elapsed_s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	if (rc == -3)
		errno = ETIMEDOUT;
	return rc ? -1 : 0;
}

void ng_query_result_free(ng_query_result *res)
{
	free(res->flows);
	free(res->rows);
	memset(res, 0, sizeof *res);
}
