/*
 * filter_int.h — what the files of the filter share (not a public API;
 * query/filter.h is that).
 *
 * A filter is compiled once and evaluated many times.  Its files, in the
 * order a filter goes through them:
 *
 *   filter_parse.c   the lexer and the grammar (not, and, or, parentheses)
 *                    and the errors that point at a column of the text
 *   filter_terms.c   the terms (proto tcp, src port 80, net 10.0.0.0/8 …):
 *                    a table of keywords, one handler each, building the
 *                    leaves of the tree
 *   filter_eval.c    the tree evaluated over a column batch, a 0/1 byte a
 *                    row (per dictionary code where a batch gives codes)
 *   filter_prune.c   the tree evaluated over a segment's zone map (min/max
 *                    per column): may any row pass?
 *
 * The tree.  Inner nodes are N_AND, N_OR (l, r) and N_NOT (l); leaves test
 * one field (f1), or either of two (f2 >= 0: "port 80" is src or dst port
 * 80), or a value computed from several (N_CALC).  A leaf is built by a
 * term's handler and never changes after ng_filter_parse returns, so any
 * number of threads may evaluate one tree (each with an ng_filter_ctx).
 *
 * Types keep short names (node, parser, tok): they are private to the
 * filter's files.  Functions one file gives another are ng_flt_*; the
 * small ones both sides call often are static inline here.
 */
#ifndef NG_FILTER_INT_H
#define NG_FILTER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "core/field.h"
#include "query/filter.h"

/* OP_ALL: every bit of the value is set (TCP flags); OP_NONE: none is
 * ("not flags AFRPU", nfdump's meaning); OP_LIKE: '~', a string contains
 * the value. */
enum op { OP_EQ, OP_NE, OP_LT, OP_GT, OP_LE, OP_GE, OP_ALL, OP_NONE, OP_LIKE };

/*
 * N_CMP     integer field (>> shift) op val
 * N_NET     address field within net/mask
 * N_SET     integer field in vals[0..nvals) (sorted)
 * N_ADDRSET address field equal to one of addrs[] (sorted) or within one
 *           of nets[]/masks[]
 * N_CALC    a value computed from several columns (duration, pps, ...)
 * N_MAC     MAC field equal to mac
 * N_STR     string field (interned ID) equal to str, or containing it
 */
enum node_kind {
	N_TRUE,
	N_FALSE,
	N_AND,
	N_OR,
	N_NOT,
	N_CMP,
	N_NET,
	N_SET,
	N_ADDRSET,
	N_CALC,
	N_MAC,
	N_STR
};

enum calc { C_DURATION, C_PPS, C_BPS, C_BPP };

typedef struct node {
	enum node_kind kind;
	struct node *l, *r;
	int f1, f2; /* fields; f2 = -1 unless "either side" */
	enum op op;
	uint8_t shift;   /* N_CMP: compare field >> shift (dscp) */
	enum calc calc;  /* N_CALC */
	uint64_t val;    /* N_CMP, N_CALC */
	uint8_t net[16]; /* N_NET, host bits clear */
	uint8_t mask[16];
	uint8_t mac[6];                    /* N_MAC */
	uint64_t *vals;                    /* N_SET */
	uint8_t (*addrs)[16], (*nets)[32]; /* N_ADDRSET: hosts; net then mask */
	size_t nvals, naddrs, nnets;
	char *str;     /* N_STR, lower case */
	bool substr;   /* N_STR: contains (else equals), case-insensitive */
	unsigned slot; /* N_STR: its string cache in an ng_filter_ctx */
} node;

struct ng_filter {
	node *root;
	ng_colset columns;
	unsigned depth;     /* of the tree: scratch vectors needed */
	unsigned nstr;      /* N_STR nodes */
	ng_filter_ctx *own; /* ng_filter_eval's state */
};

/* ---- the parser's state (filter_parse.c, filter_terms.c) ---------------- */

enum tok_kind {
	T_END,
	T_WORD,
	T_LPAREN,
	T_RPAREN,
	T_LBRACK,
	T_RBRACK,
	T_COMMA,
	T_NOT,
	T_AND,
	T_OR,
	T_OP,
	T_BADQUOTE
};

typedef struct tok {
	enum tok_kind kind;
	size_t pos, len;
	size_t end; /* offset after the token (a closing quote included) */
	enum op op;
} tok;

typedef struct parser {
	const char *text;
	tok t; /* current token */
	char *err;
	size_t errlen;
	size_t err_col;
	bool failed;
	ng_colset columns;
	unsigned nstr;
} parser;

/* Reads the token after p->t into p->t (filter_parse.c). */
void ng_flt_next(parser *p);

/* Records the first error, pointing at the current token; returns NULL
 * (filter_parse.c). */
node *ng_flt_fail(parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* True when the current token is the word kw (ASCII case-insensitive). */
static inline bool is_kw(const parser *p, const char *kw)
{
	return p->t.kind == T_WORD && strlen(kw) == p->t.len &&
	       !strncasecmp(p->text + p->t.pos, kw, p->t.len);
}

/* Copies the current token's text into buf[len]. */
static inline const char *tok_text(const parser *p, char *buf, size_t len)
{
	size_t n = p->t.len < len - 1 ? p->t.len : len - 1;
	memcpy(buf, p->text + p->t.pos, n);
	buf[n] = 0;
	return buf;
}

/* ---- the tree (filter_parse.c) ------------------------------------------ */

/* A node of kind k, fields unset (-1); NULL (and the parse failed) when
 * out of memory. */
node *ng_flt_node(parser *p, enum node_kind k);

/* Frees n's subtree and what its leaves own. */
void ng_flt_free(node *n);

/* l k r (N_AND, N_OR); frees both and returns NULL when either is NULL or
 * out of memory. */
node *ng_flt_binary(parser *p, enum node_kind k, node *l, node *r);

/* not c; frees c and returns NULL when out of memory (NULL for NULL). */
node *ng_flt_not(parser *p, node *c);

/* A term (filter_terms.c): the current token starts one. */
node *ng_flt_term(parser *p);

/* ---- what the terms, evaluation and pruning share ----------------------- */

/* The columns leaf n reads: its field and, for either side, the other;
 * for a computed value the four it is computed from.  The one place a
 * filter's column sets are built from its leaves (the parser's
 * ng_filter_columns, the evaluator's code columns). */
static inline ng_colset node_columns(const node *n)
{
	if (n->kind == N_CALC)
		return (ng_colset)NG_COLSET(NG_F_FLOW_START, NG_F_FLOW_END, NG_F_BYTES,
		                            NG_F_PACKETS);
	ng_colset s = {{0}};
	if (n->f1 >= 0)
		ng_colset_add(&s, (unsigned)n->f1);
	if (n->f2 >= 0)
		ng_colset_add(&s, (unsigned)n->f2);
	return s;
}

/* v op x for the integer operators (false for OP_LIKE). */
static inline bool cmp(enum op op, uint64_t v, uint64_t x)
{
	switch (op) {
	case OP_EQ: return v == x;
	case OP_NE: return v != x;
	case OP_LT: return v < x;
	case OP_GT: return v > x;
	case OP_LE: return v <= x;
	case OP_GE: return v >= x;
	case OP_ALL: return (v & x) == x;
	case OP_NONE: return (v & x) == 0;
	default: return false;
	}
}

/* qsort/bsearch order of N_SET values; static inline so that glibc's
 * inline bsearch inlines it in the per-row set test. */
static inline int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* qsort/bsearch order of N_ADDRSET hosts (16 bytes each). */
static inline int cmp_addr(const void *a, const void *b)
{
	return memcmp(a, b, 16);
}

#endif
