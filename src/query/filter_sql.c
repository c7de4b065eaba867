/*
 * filter_sql.c — the filter's tree (filter_int.h) as a ClickHouse WHERE
 * expression (filter_sql.h).
 *
 * The SQL of each node, X being the column named as the node's field
 * (a name of the field table: [a-z0-9_], written as is) and every value
 * a literal of clickhouse/sql.h:
 *
 *   N_TRUE, N_FALSE   1, 0
 *   N_AND, N_OR       (A AND B AND …), (A OR B OR …): a chain of one kind
 *                     (the parser folds "a and b and c" to the left) is
 *                     written as one list, walked without recursion, so
 *                     the depth of recursion is that of the parentheses
 *                     (the parser allows 200)
 *   N_NOT             NOT (A)
 *   N_CMP             X op V; with a shift (dscp) bitShiftRight(X, 2) op
 *                     V; "all bits" (flags) bitAnd(X, V) = V, "no bits"
 *                     bitAnd(X, V) = 0
 *   N_SET             X IN (V, V, …)
 *   N_NET             X = A for a host; (X >= LO AND X <= HI) for a
 *                     network, LO and HI its first and last address: the
 *                     16 bytes compare as bytes (memcmp) in FixedString
 *                     and in IPv6 alike; 1 for ::/0
 *   N_ADDRSET         (X = A OR X = B OR (X >= LO AND X <= HI) …): no IN,
 *                     whose set would be String where the column is
 *                     FixedString(16) (18.16 refuses to mix them)
 *   N_MAC             X = '\xHH…' (6 bytes)
 *   N_STR             lower(X) = 'v', or position(lower(X), 'v') > 0 for
 *                     "contains": the embedded engine compares ASCII
 *                     case-insensitively (the value is lower-cased by the
 *                     parser) and lower() lower-cases ASCII only, as
 *                     tolower() does; the empty value is in every string
 *                     in both (position(s, '') is 1)
 *   N_CALC            duration: D = if(flow_end > flow_start, flow_end -
 *                     flow_start, 0); pps if(D = 0, 0, intDiv(packets *
 *                     1000, greatest(D, 1))), bps the same with bytes *
 *                     8000, bpp if(packets = 0, 0, intDiv(bytes,
 *                     greatest(packets, 1))): UInt64 arithmetic that wraps
 *                     as the engine's does, and greatest() because
 *                     ClickHouse computes both branches of if() and
 *                     intDiv by 0 throws
 *
 * A leaf on two fields (either side: "port 80") is (E(src) OR E(dst)).
 * Integers compare as the column's unsigned type; the value is checked
 * against that type's range (ng_ch_sql_uint).
 */
#include "query/filter_sql.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/filter_int.h"

typedef struct cctx {
	const ng_ch_server *sv;
	const ng_colset *table;
	const char *table_name;
	ng_ch_sql *q;
	char *err;
	size_t errlen;
	bool failed;
} cctx;

/* Records the first error; returns -1. */
__attribute__((format(printf, 2, 3))) static int fail(cctx *c, const char *fmt, ...)
{
	if (!c->failed && c->errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(c->err, c->errlen, fmt, ap);
		va_end(ap);
	}
	c->failed = true;
	return -1;
}

static void raw(cctx *c, const char *s)
{
	ng_ch_sql_raw(c->q, s);
}

static const char *op_sql(enum op op)
{
	switch (op) {
	case OP_EQ: return " = ";
	case OP_NE: return " != ";
	case OP_LT: return " < ";
	case OP_GT: return " > ";
	case OP_LE: return " <= ";
	default: return " >= ";
	}
}

/* V for field fi: the value within the column's range. */
static int value(cctx *c, int fi, uint64_t v)
{
	if (ng_ch_sql_uint(c->q, v, ng_ch_sql_uint_max(ng_fields[fi].size)) < 0)
		return fail(c, "the value %llu is out of the range of %s (%s)",
		            (unsigned long long)v, ng_fields[fi].name,
		            ng_fields[fi].size == 1   ? "UInt8"
		            : ng_fields[fi].size == 2 ? "UInt16"
		            : ng_fields[fi].size == 4 ? "UInt32"
		                                      : "UInt64");
	return 0;
}

/* N_CMP on field fi. */
static int cmp_sql(cctx *c, const node *n, int fi)
{
	const char *x = ng_fields[fi].name;
	char col[96];
	if (n->shift)
		snprintf(col, sizeof col, "bitShiftRight(%s, %u)", x, (unsigned)n->shift);
	else
		snprintf(col, sizeof col, "%s", x);
	switch (n->op) {
	case OP_LIKE: raw(c, "0"); return 0; /* cmp() is false for it */
	case OP_ALL:
	case OP_NONE:
		raw(c, "bitAnd(");
		raw(c, col);
		raw(c, ", ");
		if (value(c, fi, n->val) < 0)
			return -1;
		raw(c, ") = ");
		if (n->op == OP_NONE) {
			raw(c, "0");
			return 0;
		}
		return value(c, fi, n->val);
	default:
		raw(c, col);
		raw(c, op_sql(n->op));
		return value(c, fi, n->val);
	}
}

/* The first and last address of net/mask. */
static void net_range(const uint8_t net[16], const uint8_t mask[16], uint8_t lo[16], uint8_t hi[16])
{
	for (int i = 0; i < 16; i++) {
		lo[i] = net[i] & mask[i];
		hi[i] = (uint8_t)(lo[i] | (uint8_t)~mask[i]);
	}
}

/* X within net/mask (a contiguous prefix, as the parser builds them). */
static void net_sql(cctx *c, const char *x, const uint8_t net[16], const uint8_t mask[16])
{
	static const uint8_t all[16] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	                                0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	static const uint8_t none[16];
	uint8_t lo[16], hi[16];
	net_range(net, mask, lo, hi);
	if (!memcmp(mask, none, 16)) {
		raw(c, "1");
	} else if (!memcmp(mask, all, 16)) {
		raw(c, x);
		raw(c, " = ");
		ng_ch_sql_addr(c->q, lo, c->sv);
	} else {
		raw(c, "(");
		raw(c, x);
		raw(c, " >= ");
		ng_ch_sql_addr(c->q, lo, c->sv);
		raw(c, " AND ");
		raw(c, x);
		raw(c, " <= ");
		ng_ch_sql_addr(c->q, hi, c->sv);
		raw(c, ")");
	}
}

static void addrset_sql(cctx *c, const node *n, const char *x)
{
	if (!n->naddrs && !n->nnets) {
		raw(c, "0");
		return;
	}
	raw(c, "(");
	for (size_t i = 0; i < n->naddrs && !c->q->failed; i++) {
		raw(c, i ? " OR " : "");
		raw(c, x);
		raw(c, " = ");
		ng_ch_sql_addr(c->q, n->addrs[i], c->sv);
	}
	for (size_t i = 0; i < n->nnets && !c->q->failed; i++) {
		raw(c, i || n->naddrs ? " OR " : "");
		net_sql(c, x, n->nets[i], n->nets[i] + 16);
	}
	raw(c, ")");
}

static void calc_sql(cctx *c, const node *n)
{
	static const char dur[] = "if(flow_end > flow_start, flow_end - flow_start, 0)";
	switch (n->calc) {
	case C_DURATION: raw(c, dur); break;
	case C_PPS:
	case C_BPS:
		raw(c, "if(");
		raw(c, dur);
		raw(c, n->calc == C_PPS ? " = 0, 0, intDiv(packets * 1000, greatest("
		                        : " = 0, 0, intDiv(bytes * 8000, greatest(");
		raw(c, dur);
		raw(c, ", 1)))");
		break;
	default: raw(c, "if(packets = 0, 0, intDiv(bytes, greatest(packets, 1)))"); break;
	}
	raw(c, op_sql(n->op));
	ng_ch_sql_uint(c->q, n->val, UINT64_MAX);
}

/* The leaf n on field fi alone. */
static int leaf_side(cctx *c, const node *n, int fi)
{
	const char *x = ng_fields[fi].name;
	switch (n->kind) {
	case N_CMP: return cmp_sql(c, n, fi);
	case N_SET:
		raw(c, x);
		raw(c, " IN (");
		for (size_t i = 0; i < n->nvals; i++) {
			raw(c, i ? ", " : "");
			if (value(c, fi, n->vals[i]) < 0)
				return -1;
		}
		raw(c, ")");
		return 0;
	case N_NET: net_sql(c, x, n->net, n->mask); return 0;
	case N_ADDRSET: addrset_sql(c, n, x); return 0;
	case N_MAC:
		raw(c, x);
		raw(c, " = ");
		ng_ch_sql_mac(c->q, n->mac);
		return 0;
	case N_STR:
		if (n->substr) {
			raw(c, "position(lower(");
			raw(c, x);
			raw(c, "), ");
			ng_ch_sql_str(c->q, n->str, strlen(n->str));
			raw(c, ") > 0");
		} else {
			raw(c, "lower(");
			raw(c, x);
			raw(c, ") = ");
			ng_ch_sql_str(c->q, n->str, strlen(n->str));
		}
		return 0;
	default: return fail(c, "cannot compile a term of kind %d for ClickHouse", (int)n->kind);
	}
}

static int node_sql(cctx *c, const node *n);

/* A chain of n's kind (N_AND or N_OR) down its left spine, as one list. */
static int chain_sql(cctx *c, const node *n)
{
	enum node_kind k = n->kind;
	size_t cnt = 0, cap = 16;
	const node **rs = malloc(cap * sizeof *rs);
	if (!rs)
		return fail(c, "out of memory");
	const node *at = n;
	for (; at->kind == k; at = at->l) {
		if (cnt == cap) {
			cap *= 2;
			const node **x = realloc(rs, cap * sizeof *rs);
			if (!x) {
				free(rs);
				return fail(c, "out of memory");
			}
			rs = x;
		}
		rs[cnt++] = at->r;
	}
	raw(c, "(");
	int rc = node_sql(c, at);
	for (size_t i = cnt; rc == 0 && i-- > 0 && !c->q->failed;) {
		raw(c, k == N_AND ? " AND " : " OR ");
		rc = node_sql(c, rs[i]);
	}
	raw(c, ")");
	free(rs);
	return rc;
}

static int node_sql(cctx *c, const node *n)
{
	if (c->q->failed)
		return -1;
	switch (n->kind) {
	case N_TRUE: raw(c, "1"); return 0;
	case N_FALSE: raw(c, "0"); return 0;
	case N_AND:
	case N_OR: return chain_sql(c, n);
	case N_NOT: {
		raw(c, "NOT (");
		int rc = node_sql(c, n->l);
		raw(c, ")");
		return rc;
	}
	default: break;
	}
	ng_colset need = node_columns(n);
	if (c->table && !ng_colset_subset(need, *c->table)) {
		for (unsigned f = 0; f < NG_FIELD_COUNT; f++)
			if (ng_colset_has(need, f) && !ng_colset_has(*c->table, f))
				return fail(
				    c, "cannot compile the filter for %s: %s is not a column of it",
				    c->table_name, ng_fields[f].name);
	}
	if (n->kind == N_CALC) {
		calc_sql(c, n);
		return 0;
	}
	if (n->f2 < 0)
		return leaf_side(c, n, n->f1);
	raw(c, "(");
	if (leaf_side(c, n, n->f1) < 0)
		return -1;
	raw(c, " OR ");
	if (leaf_side(c, n, n->f2) < 0)
		return -1;
	raw(c, ")");
	return 0;
}

int ng_filter_sql(const ng_filter *f, const ng_ch_server *sv, const ng_colset *table,
                  const char *table_name, ng_ch_sql *q, char *err, size_t errlen)
{
	cctx c = {.sv = sv,
	          .table = table,
	          .table_name = table_name ? table_name : "the table",
	          .q = q,
	          .err = err,
	          .errlen = errlen};
	if (errlen)
		err[0] = 0;
	int rc = f && f->root ? node_sql(&c, f->root) : (raw(&c, "1"), 0);
	if (q->failed && !c.failed) {
		if (q->too_long)
			return fail(&c,
			            "the filter compiles to more than %d bytes of SQL (the "
			            "server's max_query_size): make it shorter",
			            NG_CH_SQL_MAX);
		return fail(&c, "out of memory");
	}
	return rc;
}
