/*
 * filter_eval.c — a compiled filter evaluated over a column batch
 * (store.h ng_column_batch): a 0/1 byte a row.
 *
 * A whole batch at a time, not a row at a time: each leaf is one tight
 * loop over its column that writes a byte per row (for N_CMP, a loop per
 * value width and operator with every constant hoisted, which compiles to
 * vector code), and N_AND/N_OR/N_NOT combine those byte vectors, the
 * right operand of each level in a scratch vector of its own (the tree's
 * depth of them, in the thread's ng_filter_ctx).  That keeps the cost to a
 * few instructions per leaf and row, where a tree walk per row would pay
 * a branchy descent for every flow.
 *
 * Dictionary codes.  A scan may give a column that only the filter reads
 * as codes into a dictionary of its distinct values (ng_batch_codes; the
 * store's RANK columns).  A leaf on such a column then runs once over the
 * dictionary — the same loop, over the entries as a batch — and each row
 * looks its answer up by its code (code_answers, eval_side).  The answers
 * are kept per (leaf, field) until the dictionary's stamp changes, so a
 * segment's blocks, which share one dictionary, pay for it once.
 * ng_filter_code_columns says which columns may come so: those read only
 * by leaves that test one column's value.
 *
 * Strings are interned IDs: a string leaf compares each ID's string once
 * and keeps the answer by ID in the context (IDs of a store's strings are
 * only known as its segments are read).
 *
 * The per-row loops and the helpers they call are static in this file so
 * that they inline; cmp() is filter_int.h's static inline.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/strtab.h"
#include "query/filter_int.h"

/* Per-thread evaluation state: scratch vectors and, per string node, the
 * answer for each string ID seen (0 unknown, 1 no, 2 yes). */
struct ng_filter_ctx {
	unsigned depth, nstr;
	bool oom; /* set by an evaluation that ran out of memory */
	uint8_t **scratch;
	size_t scratch_cap;
	struct str_cache {
		uint8_t *c;
		size_t cap;
	} * str;
	/* per (leaf, side) given dictionary codes: the leaf's answer for
	 * each entry of the dictionary last seen (ng_batch_codes.stamp) */
	struct code_cache {
		const struct node *n;
		int fi;
		uint64_t stamp;
		uint8_t *ans;
		size_t cap;
	} * code;
	size_t ncode, codecap;
};

/* ---- dictionary-code columns -------------------------------------------- */

/* The columns of n's subtree read by leaves that test one column's value
 * row by row (*side) and by the others (*other: strings, computed
 * values, which need every row's value). */
static void leaf_columns(const node *n, ng_colset *side, ng_colset *other)
{
	if (!n)
		return;
	switch (n->kind) {
	case N_CMP:
	case N_SET:
	case N_ADDRSET:
	case N_NET:
	case N_MAC: *side = ng_colset_union(*side, node_columns(n)); return;
	case N_STR:
	case N_CALC: *other = ng_colset_union(*other, node_columns(n)); return;
	default: leaf_columns(n->l, side, other); leaf_columns(n->r, side, other);
	}
}

/* The columns a batch may give f as dictionary codes (filter.h). */
ng_colset ng_filter_code_columns(const ng_filter *f)
{
	ng_colset side = {{0}}, other = {{0}};
	leaf_columns(f->root, &side, &other);
	return ng_colset_minus(side, other);
}

/* ---- leaves ------------------------------------------------------------- */

/* One loop per value width, operator and or_in (all constants in the
 * loop, so each compiles to straight vector code): the filter's most
 * common term, run over every row of a block. */
#define CMP_ROWS(T, COND, OR)                                                                      \
	for (size_t i = 0; i < cnt; i++) {                                                         \
		T t_;                                                                              \
		memcpy(&t_, col + i * sizeof(T), sizeof(T));                                       \
		uint64_t v = (uint64_t)t_ >> shift;                                                \
		out[i] = (uint8_t)(((OR) ? out[i] : 0) | (COND));                                  \
	}
#define CMP_OPS(T, OR)                                                                             \
	switch (op) {                                                                              \
	case OP_EQ: CMP_ROWS(T, v == x, OR) break;                                                 \
	case OP_NE: CMP_ROWS(T, v != x, OR) break;                                                 \
	case OP_LT: CMP_ROWS(T, v < x, OR) break;                                                  \
	case OP_GT: CMP_ROWS(T, v > x, OR) break;                                                  \
	case OP_LE: CMP_ROWS(T, v <= x, OR) break;                                                 \
	case OP_GE: CMP_ROWS(T, v >= x, OR) break;                                                 \
	case OP_ALL: CMP_ROWS(T, (v & x) == x, OR) break;                                          \
	case OP_NONE: CMP_ROWS(T, (v & x) == 0, OR) break;                                         \
	default:                                                                                   \
		if (!(OR))                                                                         \
			memset(out, 0, cnt);                                                       \
		break;                                                                             \
	}
#define CMP_SIDE(T)                                                                                \
	do {                                                                                       \
		if (or_in)                                                                         \
			CMP_OPS(T, 1)                                                              \
		else                                                                               \
			CMP_OPS(T, 0)                                                              \
	} while (0)

/* out[i] (|)= field f of row i compares true; `or_in` keeps earlier bits. */
static void eval_cmp(const node *n, int fi, const ng_column_batch *b, uint8_t *out, bool or_in)
{
	const size_t cnt = b->n;
	const uint8_t *col = b->col[fi];
	const enum op op = n->op;
	const unsigned shift = n->shift;
	const uint64_t x = n->val;
	switch (ng_fields[fi].size) {
	case 1: CMP_SIDE(uint8_t); break;
	case 2: CMP_SIDE(uint16_t); break;
	case 4: CMP_SIDE(uint32_t); break;
	default: CMP_SIDE(uint64_t); break;
	}
}

/* Row i of an integer column of sz bytes a value, widened. */
static inline uint64_t col_uint(const uint8_t *col, unsigned sz, size_t i)
{
	switch (sz) {
	case 1: return col[i];
	case 2: {
		uint16_t x;
		memcpy(&x, col + i * 2, 2);
		return x;
	}
	case 4: {
		uint32_t x;
		memcpy(&x, col + i * 4, 4);
		return x;
	}
	default: {
		uint64_t x;
		memcpy(&x, col + i * 8, 8);
		return x;
	}
	}
}

/* out[i] (|)= field fi of row i is one of the N_SET values. */
static void eval_set(const node *n, int fi, const ng_column_batch *b, uint8_t *out, bool or_in)
{
	const uint8_t *col = b->col[fi];
	const unsigned sz = ng_fields[fi].size;
	for (size_t i = 0; i < b->n; i++) {
		uint64_t v = col_uint(col, sz, i);
		uint8_t m = bsearch(&v, n->vals, n->nvals, sizeof v, cmp_u64) != NULL;
		out[i] = or_in ? (out[i] | m) : m;
	}
}

/* out[i] (|)= address fi of row i is one of the N_ADDRSET hosts or
 * within one of its nets. */
static void eval_addrset(const node *n, int fi, const ng_column_batch *b, uint8_t *out, bool or_in)
{
	const uint8_t *col = b->col[fi];
	for (size_t i = 0; i < b->n; i++) {
		const uint8_t *a = col + i * 16;
		uint8_t m = n->naddrs && bsearch(a, n->addrs, n->naddrs, 16, cmp_addr) != NULL;
		for (size_t k = 0; !m && k < n->nnets; k++) {
			const uint8_t *e = n->nets[k];
			m = 1;
			for (unsigned j = 0; j < 16 && m; j++)
				m = (a[j] & e[16 + j]) == e[j];
		}
		out[i] = or_in ? (out[i] | m) : m;
	}
}

/* out[i] (|)= MAC fi of row i is the N_MAC address. */
static void eval_mac(const node *n, int fi, const ng_column_batch *b, uint8_t *out, bool or_in)
{
	const uint8_t *col = b->col[fi];
	for (size_t i = 0; i < b->n; i++) {
		uint8_t m = !memcmp(col + i * 6, n->mac, 6);
		out[i] = or_in ? (out[i] | m) : m;
	}
}

/* nfdump's computed values, integer arithmetic: duration ms, packets and
 * bits per second over the duration (0 when it is 0), bytes per packet. */
static void eval_calc(const node *n, const ng_column_batch *b, uint8_t *out)
{
	const uint64_t *st = b->col[NG_F_FLOW_START], *en = b->col[NG_F_FLOW_END];
	const uint64_t *by = b->col[NG_F_BYTES], *pk = b->col[NG_F_PACKETS];
	for (size_t i = 0; i < b->n; i++) {
		uint64_t d = en[i] > st[i] ? en[i] - st[i] : 0, v;
		switch (n->calc) {
		case C_DURATION: v = d; break;
		case C_PPS: v = d ? pk[i] * 1000 / d : 0; break;
		case C_BPS: v = d ? by[i] * 8000 / d : 0; break;
		default: v = pk[i] ? by[i] / pk[i] : 0; break;
		}
		out[i] = cmp(n->op, v, n->val);
	}
}

/* True when hay contains needle, ASCII case-insensitive (the empty
 * needle is in every string). */
static bool contains_ci(const char *hay, const char *needle)
{
	size_t nl = strlen(needle);
	for (; *hay; hay++)
		if (!strncasecmp(hay, needle, nl))
			return true;
	return nl == 0;
}

/* String IDs are compared once each and the answer cached by ID: the IDs
 * of a store's strings are only known as its segments are read. */
static int eval_str(const node *n, struct str_cache *sc, int fi, const ng_column_batch *b,
                    uint8_t *out, bool or_in)
{
	const uint32_t *col = b->col[fi];
	for (size_t i = 0; i < b->n; i++) {
		uint32_t id = col[i];
		if (id >= sc->cap) {
			size_t cap = ng_strtab_count() + 1024;
			if (cap <= id)
				cap = (size_t)id + 1024;
			uint8_t *c = realloc(sc->c, cap);
			if (!c)
				return -1;
			memset(c + sc->cap, 0, cap - sc->cap);
			sc->c = c;
			sc->cap = cap;
		}
		if (!sc->c[id]) {
			const char *s = ng_str(id);
			sc->c[id] =
			    1 + (n->substr ? contains_ci(s, n->str) : !strcasecmp(s, n->str));
		}
		uint8_t m = sc->c[id] - 1;
		out[i] = or_in ? (out[i] | m) : m;
	}
	return 0;
}

/* out[i] (|)= address fi of row i is within the N_NET net: two 64-bit
 * masked compares a row. */
static void eval_net(const node *n, int fi, const ng_column_batch *b, uint8_t *out, bool or_in)
{
	uint64_t m0, m1, n0, n1;
	memcpy(&m0, n->mask, 8);
	memcpy(&m1, n->mask + 8, 8);
	memcpy(&n0, n->net, 8);
	memcpy(&n1, n->net + 8, 8);
	const uint8_t *col = b->col[fi];
	const size_t cnt = b->n; /* out may alias *b: read once, the loop vectorizes */
	for (size_t i = 0; i < cnt; i++) {
		uint64_t a0, a1;
		memcpy(&a0, col + i * 16, 8);
		memcpy(&a1, col + i * 16 + 8, 8);
		uint8_t m = ((a0 & m0) == n0) & ((a1 & m1) == n1);
		out[i] = or_in ? (out[i] | m) : m;
	}
}

/* ---- leaves by dictionary code, and the tree ---------------------------- */

/* A term on one field (f1), or on either of two (f2 >= 0: `host`, `port`,
 * `as` … match the source or the destination side): the second side is
 * OR-ed into the first's result. */
typedef void (*side_eval)(const node *n, int fi, const ng_column_batch *b, uint8_t *out,
                          bool or_in);

/* The answers of leaf n on field fi for each entry of the batch's
 * dictionary: computed by the leaf itself over the entries as a batch,
 * once per dictionary.  NULL when out of memory. */
static const uint8_t *code_answers(ng_filter_ctx *c, side_eval fn, const node *n, int fi,
                                   const ng_batch_codes *bc)
{
	struct code_cache *cc = NULL;
	for (size_t j = 0; j < c->ncode && !cc; j++)
		if (c->code[j].n == n && c->code[j].fi == fi)
			cc = &c->code[j];
	if (!cc) {
		if (c->ncode == c->codecap) {
			size_t cap = c->codecap ? 2 * c->codecap : 4;
			struct code_cache *g = realloc(c->code, cap * sizeof *g);
			if (!g)
				return NULL;
			c->code = g;
			c->codecap = cap;
		}
		cc = &c->code[c->ncode++];
		*cc = (struct code_cache){.n = n, .fi = fi};
	}
	if (cc->ans && cc->stamp == bc->stamp[fi])
		return cc->ans;
	if (bc->k[fi] > cc->cap) {
		uint8_t *a = realloc(cc->ans, bc->k[fi]);
		if (!a)
			return NULL;
		cc->ans = a;
		cc->cap = bc->k[fi];
	}
	ng_column_batch entries = {.n = bc->k[fi]};
	entries.col[fi] = bc->dict[fi];
	fn(n, fi, &entries, cc->ans, false);
	cc->stamp = bc->stamp[fi];
	return cc->ans;
}

/* fn on field fi of b: on its values, or, given as dictionary codes, on
 * each distinct value once (code_answers) and then by a row's code. */
static void eval_side(ng_filter_ctx *c, side_eval fn, const node *n, int fi,
                      const ng_column_batch *b, uint8_t *out, bool or_in)
{
	const uint32_t *code = b->codes ? b->codes->code[fi] : NULL;
	if (!code) {
		fn(n, fi, b, out, or_in);
		return;
	}
	const uint8_t *ans = code_answers(c, fn, n, fi, b->codes);
	if (!ans) {
		c->oom = true;
		return;
	}
	const size_t cnt = b->n;
	if (or_in)
		for (size_t i = 0; i < cnt; i++)
			out[i] |= ans[code[i]];
	else
		for (size_t i = 0; i < cnt; i++)
			out[i] = ans[code[i]];
}

/* out = the leaf n on its field, or-ed with its other side's (f2). */
static void eval_sides(ng_filter_ctx *c, side_eval fn, const node *n, const ng_column_batch *b,
                       uint8_t *out)
{
	eval_side(c, fn, n, n->f1, b, out, false);
	if (n->f2 >= 0)
		eval_side(c, fn, n, n->f2, b, out, true);
}

/* out[0..b->n) = n's subtree over b; `level` is n's depth, whose
 * scratch vector holds the right operand of an and/or.  Out of memory
 * sets f->oom. */
static void eval_node(ng_filter_ctx *f, const node *n, const ng_column_batch *b, uint8_t *out,
                      unsigned level)
{
	const size_t cnt = b->n; /* out may alias *b: read once, the loops vectorize */
	switch (n->kind) {
	case N_TRUE:
	case N_FALSE: memset(out, n->kind == N_TRUE, b->n); return;
	case N_SET: eval_sides(f, eval_set, n, b, out); return;
	case N_ADDRSET: eval_sides(f, eval_addrset, n, b, out); return;
	case N_MAC: eval_sides(f, eval_mac, n, b, out); return;
	case N_CALC: eval_calc(n, b, out); return;
	case N_STR:
		if (eval_str(n, &f->str[n->slot], n->f1, b, out, false) ||
		    (n->f2 >= 0 && eval_str(n, &f->str[n->slot], n->f2, b, out, true)))
			f->oom = true;
		return;
	case N_CMP: eval_sides(f, eval_cmp, n, b, out); return;
	case N_NET: eval_sides(f, eval_net, n, b, out); return;
	case N_NOT:
		eval_node(f, n->l, b, out, level + 1);
		for (size_t i = 0; i < cnt; i++)
			out[i] ^= 1;
		return;
	case N_AND:
	case N_OR: {
		uint8_t *tmp = f->scratch[level];
		eval_node(f, n->l, b, out, level + 1);
		eval_node(f, n->r, b, tmp, level + 1);
		if (n->kind == N_AND)
			for (size_t i = 0; i < cnt; i++)
				out[i] &= tmp[i];
		else
			for (size_t i = 0; i < cnt; i++)
				out[i] |= tmp[i];
		return;
	}
	}
}

/* ---- contexts and batches ----------------------------------------------- */

/* A context for evaluating f (filter.h); NULL when out of memory.  Its
 * scratch vectors are sized at the first batch. */
ng_filter_ctx *ng_filter_ctx_new(const ng_filter *f)
{
	ng_filter_ctx *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->depth = f->depth;
	c->nstr = f->nstr;
	c->scratch = calloc(f->depth ? f->depth : 1, sizeof *c->scratch);
	c->str = calloc(f->nstr ? f->nstr : 1, sizeof *c->str);
	if (!c->scratch || !c->str) {
		ng_filter_ctx_free(c);
		return NULL;
	}
	return c;
}

/* Frees c and its caches; NULL is a no-op. */
void ng_filter_ctx_free(ng_filter_ctx *c)
{
	if (!c)
		return;
	for (unsigned i = 0; i < c->depth && c->scratch; i++)
		free(c->scratch[i]);
	for (unsigned i = 0; i < c->nstr && c->str; i++)
		free(c->str[i].c);
	for (size_t i = 0; i < c->ncode; i++)
		free(c->code[i].ans);
	free(c->scratch);
	free(c->str);
	free(c->code);
	free(c);
}

/* Matches of f over b into match[0..b->n), with c's state: the number
 * of matches, or (size_t)-1 when out of memory (filter.h). */
size_t ng_filter_eval_ctx(const ng_filter *f, ng_filter_ctx *c, const ng_column_batch *b,
                          uint8_t *match)
{
	if (b->n > c->scratch_cap) {
		for (unsigned i = 0; i < c->depth; i++) {
			uint8_t *s = realloc(c->scratch[i], b->n);
			if (!s)
				return (size_t)-1;
			c->scratch[i] = s;
		}
		c->scratch_cap = b->n;
	}
	eval_node(c, f->root, b, match, 0);
	if (c->oom)
		return (size_t)-1;
	size_t cnt = 0;
	for (size_t i = 0, n = b->n; i < n; i++)
		cnt += match[i];
	return cnt;
}

/* ng_filter_eval_ctx with f's own context, made at the first call. */
size_t ng_filter_eval(ng_filter *f, const ng_column_batch *b, uint8_t *match)
{
	if (!f->own && !(f->own = ng_filter_ctx_new(f)))
		return (size_t)-1;
	return ng_filter_eval_ctx(f, f->own, b, match);
}

/* f over one record, as a batch of one row whose columns point into it. */
bool ng_filter_match_flow(ng_filter *f, const ng_flow *r)
{
	ng_column_batch b = {.n = 1};
	for (size_t i = 0; i < NG_FIELD_COUNT; i++)
		b.col[i] = (const uint8_t *)r + ng_fields[i].offset;
	uint8_t m = 0;
	return ng_filter_eval(f, &b, &m) == 1;
}
