/*
 * filter.c — nfdump-syntax filters (see filter.h for the grammar).
 *
 * The text is split into tokens that remember their byte offset, parsed by
 * recursive descent into a small expression tree, and evaluated a whole
 * column batch at a time: each leaf is one tight loop over a column that
 * writes a 0/1 byte per row, and and/or/not combine those byte vectors.
 * That keeps the per-row cost to a few instructions per leaf, where a tree
 * walk per row would pay a branchy descent for every flow.
 */
#include "query/filter.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/addr.h"
#include "core/field.h"

enum op { OP_EQ, OP_NE, OP_LT, OP_GT, OP_LE, OP_GE };

enum node_kind { N_TRUE, N_AND, N_OR, N_NOT, N_CMP, N_NET };

typedef struct node {
	enum node_kind kind;
	struct node *l, *r;
	int f1, f2;      /* fields; f2 = -1 unless "either side" */
	enum op op;
	uint64_t val;    /* N_CMP */
	uint8_t net[16]; /* N_NET, host bits clear */
	uint8_t mask[16];
} node;

struct ng_filter {
	node *root;
	uint64_t columns;
	unsigned depth;   /* of the tree: scratch vectors needed */
	uint8_t **scratch;
	size_t scratch_cap;
};

/* ---- tokens ----------------------------------------------------------- */

enum tok_kind { T_END, T_WORD, T_LPAREN, T_RPAREN, T_NOT, T_AND, T_OR, T_OP };

typedef struct tok {
	enum tok_kind kind;
	size_t pos, len;
	enum op op;
} tok;

typedef struct parser {
	const char *text;
	tok t;       /* current token */
	char *err;
	size_t errlen;
	size_t err_col;
	bool failed;
	uint64_t columns;
} parser;

static bool word_char(char c)
{
	return isalnum((unsigned char)c) || c == '.' || c == ':' || c == '/' || c == '_' ||
	       c == '-' || c == '+';
}

static void next(parser *p)
{
	const char *s = p->text;
	size_t i = p->t.pos + p->t.len;
	while (s[i] && isspace((unsigned char)s[i]))
		i++;
	tok t = {.pos = i, .len = 1};
	char c = s[i], d = c ? s[i + 1] : 0;
	if (!c) {
		t.kind = T_END;
		t.len = 0;
	} else if (c == '(') {
		t.kind = T_LPAREN;
	} else if (c == ')') {
		t.kind = T_RPAREN;
	} else if (c == '&' && d == '&') {
		t.kind = T_AND;
		t.len = 2;
	} else if (c == '|' && d == '|') {
		t.kind = T_OR;
		t.len = 2;
	} else if (c == '!' && d == '=') {
		t.kind = T_OP, t.op = OP_NE, t.len = 2;
	} else if (c == '!') {
		t.kind = T_NOT;
	} else if (c == '=') {
		t.kind = T_OP, t.op = OP_EQ, t.len = d == '=' ? 2 : 1;
	} else if (c == '<') {
		t.kind = T_OP, t.op = d == '=' ? OP_LE : OP_LT, t.len = d == '=' ? 2 : 1;
	} else if (c == '>') {
		t.kind = T_OP, t.op = d == '=' ? OP_GE : OP_GT, t.len = d == '=' ? 2 : 1;
	} else if (word_char(c)) {
		t.kind = T_WORD;
		t.len = 0;
		while (word_char(s[i + t.len]))
			t.len++;
	} else {
		t.kind = T_WORD; /* an unexpected character: reported by the parser */
	}
	p->t = t;
}

static bool is_kw(const parser *p, const char *kw)
{
	return p->t.kind == T_WORD && strlen(kw) == p->t.len &&
	       !strncasecmp(p->text + p->t.pos, kw, p->t.len);
}

/* Copies the current token's text into buf[len]. */
static const char *tok_text(const parser *p, char *buf, size_t len)
{
	size_t n = p->t.len < len - 1 ? p->t.len : len - 1;
	memcpy(buf, p->text + p->t.pos, n);
	buf[n] = 0;
	return buf;
}

/* Records the first error, pointing at the current token. */
static node *fail(parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static node *fail(parser *p, const char *fmt, ...)
{
	if (p->failed)
		return NULL;
	p->failed = true;
	p->err_col = p->t.pos;
	char what[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	if (p->err && p->errlen) {
		int col = (int)p->t.pos;
		snprintf(p->err, p->errlen, "%s\n  %s\n  %*s^", what, p->text, col, "");
	}
	return NULL;
}

/* ---- tree --------------------------------------------------------------- */

static void free_node(node *n)
{
	if (!n)
		return;
	free_node(n->l);
	free_node(n->r);
	free(n);
}

static node *new_node(parser *p, enum node_kind k)
{
	node *n = calloc(1, sizeof *n);
	if (!n)
		return fail(p, "out of memory");
	n->kind = k;
	n->f1 = n->f2 = -1;
	return n;
}

static node *binary(parser *p, enum node_kind k, node *l, node *r)
{
	if (!l || !r) {
		free_node(l);
		free_node(r);
		return NULL;
	}
	node *n = new_node(p, k);
	if (!n) {
		free_node(l);
		free_node(r);
		return NULL;
	}
	n->l = l;
	n->r = r;
	return n;
}

static node *cmp_node(parser *p, int f1, int f2, enum op op, uint64_t v)
{
	node *n = new_node(p, N_CMP);
	if (!n)
		return NULL;
	n->f1 = f1;
	n->f2 = f2;
	n->op = op;
	n->val = v;
	p->columns |= NG_COL(f1) | (f2 >= 0 ? NG_COL(f2) : 0);
	return n;
}

static node *net_node(parser *p, int f1, int f2, const uint8_t net[16], unsigned plen)
{
	node *n = new_node(p, N_NET);
	if (!n)
		return NULL;
	n->f1 = f1;
	n->f2 = f2;
	for (unsigned i = 0; i < 16; i++) {
		unsigned bits = plen > i * 8 ? plen - i * 8 : 0;
		n->mask[i] = bits >= 8 ? 0xff : (uint8_t)(0xff << (8 - bits));
		n->net[i] = net[i] & n->mask[i];
	}
	p->columns |= NG_COL(f1) | (f2 >= 0 ? NG_COL(f2) : 0);
	return n;
}

/* ---- terms -------------------------------------------------------------- */

/* Parses a number with an optional k/M/G suffix (×1000).  False when the
 * current token is not one. */
static bool parse_number(const parser *p, uint64_t *out)
{
	if (p->t.kind != T_WORD)
		return false;
	char buf[64];
	tok_text(p, buf, sizeof buf);
	if (!isdigit((unsigned char)buf[0]))
		return false;
	char *end;
	unsigned long long v = strtoull(buf, &end, 10);
	uint64_t mult = 1;
	if (*end == 'k' || *end == 'K')
		mult = 1000, end++;
	else if (*end == 'm' || *end == 'M')
		mult = 1000000, end++;
	else if (*end == 'g' || *end == 'G')
		mult = 1000000000, end++;
	if (*end)
		return false;
	if (mult > 1 && v > UINT64_MAX / mult)
		return false;
	*out = v * mult;
	return true;
}

/* An optional comparison operator (default ==). */
static enum op parse_op(parser *p)
{
	static const struct { const char *w; enum op op; } words[] = {
		{"eq", OP_EQ}, {"ne", OP_NE}, {"lt", OP_LT},
		{"gt", OP_GT}, {"le", OP_LE}, {"ge", OP_GE},
	};
	if (p->t.kind == T_OP) {
		enum op op = p->t.op;
		next(p);
		return op;
	}
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
		if (is_kw(p, words[i].w)) {
			next(p);
			return words[i].op;
		}
	return OP_EQ;
}

/* [op] N[kMG] against field f1 (and f2: either side).  `what` names the
 * expected value in the error, `after` the keyword before it. */
static node *number_term(parser *p, int f1, int f2, const char *what, const char *after,
			 uint64_t max)
{
	enum op op = parse_op(p);
	uint64_t v;
	if (!parse_number(p, &v))
		return fail(p, "expected %s after '%s'", what, after);
	if (v > max)
		return fail(p, "%s %llu out of range (at most %llu)", what, (unsigned long long)v,
			    (unsigned long long)max);
	next(p);
	return cmp_node(p, f1, f2, op, v);
}

static int proto_number(const char *s)
{
	static const struct { const char *name; int num; } names[] = {
		{"icmp", 1}, {"igmp", 2}, {"tcp", 6}, {"udp", 17}, {"gre", 47}, {"esp", 50},
		{"ah", 51}, {"icmp6", 58}, {"ipv6-icmp", 58}, {"ospf", 89}, {"pim", 103},
		{"sctp", 132},
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!strcasecmp(s, names[i].name))
			return names[i].num;
	return -1;
}

static node *proto_term(parser *p)
{
	char buf[64];
	uint64_t v;
	if (parse_number(p, &v) && v <= 255) {
		next(p);
		return cmp_node(p, NG_F_PROTOCOL, -1, OP_EQ, v);
	}
	int num = p->t.kind == T_WORD ? proto_number(tok_text(p, buf, sizeof buf)) : -1;
	if (num < 0)
		return fail(p, "expected a protocol (tcp, udp, icmp, icmp6, gre, esp, sctp or "
			       "0..255) after 'proto'");
	next(p);
	return cmp_node(p, NG_F_PROTOCOL, -1, OP_EQ, (uint64_t)num);
}

/* ADDR (host) or ADDR/LEN (net) against f1 (and f2). */
static node *addr_term(parser *p, int f1, int f2, bool want_prefix, const char *after)
{
	char buf[128];
	uint8_t net[16];
	unsigned plen = 128;
	if (p->t.kind == T_WORD) {
		tok_text(p, buf, sizeof buf);
		bool ok = want_prefix ? ng_prefix_parse(buf, net, &plen)
				      : (!strchr(buf, '/') && ng_addr_parse(buf, net));
		if (ok) {
			next(p);
			return net_node(p, f1, f2, net, plen);
		}
	}
	return fail(p, want_prefix ? "expected a network A.B.C.D/LEN or X:X::/LEN after '%s'"
				   : "expected an IPv4 or IPv6 address after '%s'",
		    after);
}

/* [= | != ] ADDR[/LEN] against one address field (exporter, nexthop...). */
static node *addr_op_term(parser *p, int f, bool want_prefix, const char *after)
{
	enum op op = parse_op(p);
	if (op != OP_EQ && op != OP_NE)
		return fail(p, "addresses compare with = or != only");
	node *n = addr_term(p, f, -1, want_prefix, after);
	if (!n || op == OP_EQ)
		return n;
	node *x = new_node(p, N_NOT);
	if (!x) {
		free_node(n);
		return NULL;
	}
	x->l = n;
	return x;
}

/* A field of the table by name: FIELD [op] VALUE. */
static node *field_term(parser *p, const ng_field *f)
{
	char name[64];
	snprintf(name, sizeof name, "%s", f->short_name ? f->short_name : f->name);
	switch (f->type) {
	case NG_FT_ADDR:
		return addr_op_term(p, f->id, true, name);
	case NG_FT_MAC:
		return fail(p, "filtering on MAC addresses is not supported yet");
	default: {
		uint64_t max = f->size >= 8 ? UINT64_MAX : (UINT64_C(1) << (8 * f->size)) - 1;
		if (f->id == NG_F_PROTOCOL) {
			enum op op = parse_op(p);
			node *n = proto_term(p);
			if (n)
				n->op = op;
			return n;
		}
		return number_term(p, f->id, -1, "a number", name, max);
	}
	}
}

/* [src|dst] host|ip|net|port|as ... ; `dir` 0 either, 1 src, 2 dst. */
static node *directed_term(parser *p, int dir)
{
	const char *d = dir == 1 ? "src " : dir == 2 ? "dst " : "";
	char after[32];
	if (is_kw(p, "host") || is_kw(p, "ip")) {
		snprintf(after, sizeof after, "%s%s", d, is_kw(p, "ip") ? "ip" : "host");
		next(p);
		return addr_term(p, dir == 2 ? NG_F_DST_ADDR : NG_F_SRC_ADDR,
				 dir ? -1 : NG_F_DST_ADDR, false, after);
	}
	if (is_kw(p, "net")) {
		snprintf(after, sizeof after, "%snet", d);
		next(p);
		return addr_term(p, dir == 2 ? NG_F_DST_ADDR : NG_F_SRC_ADDR,
				 dir ? -1 : NG_F_DST_ADDR, true, after);
	}
	if (is_kw(p, "port")) {
		next(p);
		return number_term(p, dir == 2 ? NG_F_DST_PORT : NG_F_SRC_PORT,
				   dir ? -1 : NG_F_DST_PORT, "a port number", "port", 65535);
	}
	if (is_kw(p, "as")) {
		next(p);
		return number_term(p, dir == 2 ? NG_F_DST_AS : NG_F_SRC_AS,
				   dir ? -1 : NG_F_DST_AS, "an AS number", "as", UINT32_MAX);
	}
	if (is_kw(p, "mask")) {
		next(p);
		return number_term(p, dir == 2 ? NG_F_DST_MASK : NG_F_SRC_MASK,
				   dir ? -1 : NG_F_DST_MASK, "a prefix length", "mask", 128);
	}
	if (is_kw(p, "vlan")) {
		next(p);
		return number_term(p, dir == 2 ? NG_F_DST_VLAN : NG_F_SRC_VLAN,
				   dir ? -1 : NG_F_DST_VLAN, "a VLAN ID", "vlan", 4095);
	}
	return fail(p, "expected host, ip, net, port, as, mask or vlan after '%s'",
		    dir == 1 ? "src" : "dst");
}

static node *term(parser *p)
{
	char buf[64];
	if (p->t.kind == T_END)
		return fail(p, "expected a filter term (e.g. 'proto tcp', 'host 192.0.2.1') at the "
			       "end of the filter");
	if (p->t.kind != T_WORD || is_kw(p, "and") || is_kw(p, "or"))
		return fail(p, "expected a filter term, not '%s'", tok_text(p, buf, sizeof buf));
	if (is_kw(p, "any")) {
		next(p);
		return new_node(p, N_TRUE);
	}
	if (is_kw(p, "inet") || is_kw(p, "ipv4") || is_kw(p, "inet6") || is_kw(p, "ipv6")) {
		bool v6 = is_kw(p, "inet6") || is_kw(p, "ipv6");
		next(p);
		static const uint8_t mapped[16] = {[10] = 0xff, [11] = 0xff};
		node *n = net_node(p, NG_F_SRC_ADDR, -1, mapped, 96);
		if (!v6 || !n)
			return n;
		node *x = new_node(p, N_NOT);
		if (!x) {
			free_node(n);
			return NULL;
		}
		x->l = n;
		return x;
	}
	if (is_kw(p, "proto")) {
		next(p);
		return proto_term(p);
	}
	if (is_kw(p, "src") || is_kw(p, "dst")) {
		int dir = is_kw(p, "src") ? 1 : 2;
		next(p);
		return directed_term(p, dir);
	}
	if (is_kw(p, "host") || is_kw(p, "ip") || is_kw(p, "net") || is_kw(p, "port") ||
	    is_kw(p, "as") || is_kw(p, "mask") || is_kw(p, "vlan"))
		return directed_term(p, 0);
	if (is_kw(p, "in") || is_kw(p, "out")) {
		bool in = is_kw(p, "in");
		next(p);
		if (!is_kw(p, "if"))
			return fail(p, "expected 'if' after '%s'", in ? "in" : "out");
		next(p);
		return number_term(p, in ? NG_F_IN_IF : NG_F_OUT_IF, -1, "an interface index",
				   in ? "in if" : "out if", UINT32_MAX);
	}
	if (is_kw(p, "if")) {
		next(p);
		return number_term(p, NG_F_IN_IF, NG_F_OUT_IF, "an interface index", "if",
				   UINT32_MAX);
	}
	if (is_kw(p, "exporter")) {
		next(p);
		return addr_op_term(p, NG_F_EXPORTER, false, "exporter");
	}
	if (is_kw(p, "bytes") || is_kw(p, "packets")) {
		bool bytes = is_kw(p, "bytes");
		next(p);
		return number_term(p, bytes ? NG_F_BYTES : NG_F_PACKETS, -1,
				   "a number (optionally with k, M or G)", bytes ? "bytes" : "packets",
				   UINT64_MAX);
	}
	const ng_field *f = ng_field_by_name(tok_text(p, buf, sizeof buf));
	if (f) {
		next(p);
		return field_term(p, f);
	}
	return fail(p, "unknown filter keyword '%s'", buf);
}

static node *expr(parser *p, unsigned depth);

static node *unary(parser *p, unsigned depth)
{
	if (depth > 200)
		return fail(p, "filter nested too deeply");
	if (p->t.kind == T_NOT || is_kw(p, "not")) {
		next(p);
		node *c = unary(p, depth + 1);
		if (!c)
			return NULL;
		node *n = new_node(p, N_NOT);
		if (!n) {
			free_node(c);
			return NULL;
		}
		n->l = c;
		return n;
	}
	if (p->t.kind == T_LPAREN) {
		next(p);
		node *n = expr(p, depth + 1);
		if (!n)
			return NULL;
		if (p->t.kind != T_RPAREN) {
			free_node(n);
			return fail(p, "expected ')' to close the '('");
		}
		next(p);
		return n;
	}
	return term(p);
}

static node *and_expr(parser *p, unsigned depth)
{
	node *l = unary(p, depth);
	while (l && (p->t.kind == T_AND || is_kw(p, "and"))) {
		next(p);
		l = binary(p, N_AND, l, unary(p, depth));
	}
	return l;
}

static node *expr(parser *p, unsigned depth)
{
	node *l = and_expr(p, depth);
	while (l && (p->t.kind == T_OR || is_kw(p, "or"))) {
		next(p);
		l = binary(p, N_OR, l, and_expr(p, depth));
	}
	return l;
}

static unsigned tree_depth(const node *n)
{
	if (!n)
		return 0;
	unsigned a = tree_depth(n->l), b = tree_depth(n->r);
	return 1 + (a > b ? a : b);
}

ng_filter *ng_filter_parse(const char *text, char *err, size_t errlen, size_t *err_col)
{
	parser p = {.text = text, .err = err, .errlen = errlen};
	next(&p);
	node *root;
	if (p.t.kind == T_END) {
		root = new_node(&p, N_TRUE);
	} else {
		root = expr(&p, 0);
		if (root && p.t.kind != T_END) {
			char buf[64];
			if (p.t.kind == T_RPAREN)
				fail(&p, "unexpected ')' with no '(' before it");
			else
				fail(&p, "expected 'and', 'or' or the end of the filter, not '%s'",
				     tok_text(&p, buf, sizeof buf));
			free_node(root);
			root = NULL;
		}
	}
	if (!root) {
		if (err_col)
			*err_col = p.err_col;
		return NULL;
	}
	ng_filter *f = calloc(1, sizeof *f);
	if (!f) {
		free_node(root);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	f->root = root;
	f->columns = p.columns;
	f->depth = tree_depth(root);
	return f;
}

void ng_filter_free(ng_filter *f)
{
	if (!f)
		return;
	free_node(f->root);
	for (unsigned i = 0; i < f->depth && f->scratch; i++)
		free(f->scratch[i]);
	free(f->scratch);
	free(f);
}

uint64_t ng_filter_columns(const ng_filter *f) { return f->columns; }

/* ---- evaluation --------------------------------------------------------- */

static inline bool cmp(enum op op, uint64_t v, uint64_t x)
{
	switch (op) {
	case OP_EQ: return v == x;
	case OP_NE: return v != x;
	case OP_LT: return v < x;
	case OP_GT: return v > x;
	case OP_LE: return v <= x;
	default: return v >= x;
	}
}

/* out[i] (|)= field f of row i compares true; `or_in` keeps earlier bits. */
static void eval_cmp(const node *n, int fi, const ng_column_batch *b, uint8_t *out, bool or_in)
{
	const size_t cnt = b->n;
	const uint8_t *col = b->col[fi];
	const unsigned sz = ng_fields[fi].size;
	for (size_t i = 0; i < cnt; i++) {
		uint64_t v;
		switch (sz) {
		case 1: v = col[i]; break;
		case 2: { uint16_t x; memcpy(&x, col + i * 2, 2); v = x; break; }
		case 4: { uint32_t x; memcpy(&x, col + i * 4, 4); v = x; break; }
		default: memcpy(&v, col + i * 8, 8); break;
		}
		uint8_t m = cmp(n->op, v, n->val);
		out[i] = or_in ? (out[i] | m) : m;
	}
}

static void eval_net(const node *n, int fi, const ng_column_batch *b, uint8_t *out, bool or_in)
{
	uint64_t m0, m1, n0, n1;
	memcpy(&m0, n->mask, 8);
	memcpy(&m1, n->mask + 8, 8);
	memcpy(&n0, n->net, 8);
	memcpy(&n1, n->net + 8, 8);
	const uint8_t *col = b->col[fi];
	for (size_t i = 0; i < b->n; i++) {
		uint64_t a0, a1;
		memcpy(&a0, col + i * 16, 8);
		memcpy(&a1, col + i * 16 + 8, 8);
		uint8_t m = ((a0 & m0) == n0) & ((a1 & m1) == n1);
		out[i] = or_in ? (out[i] | m) : m;
	}
}

static void eval_node(ng_filter *f, const node *n, const ng_column_batch *b, uint8_t *out,
		      unsigned level)
{
	switch (n->kind) {
	case N_TRUE:
		memset(out, 1, b->n);
		return;
	case N_CMP:
		eval_cmp(n, n->f1, b, out, false);
		if (n->f2 >= 0)
			eval_cmp(n, n->f2, b, out, true);
		return;
	case N_NET:
		eval_net(n, n->f1, b, out, false);
		if (n->f2 >= 0)
			eval_net(n, n->f2, b, out, true);
		return;
	case N_NOT:
		eval_node(f, n->l, b, out, level + 1);
		for (size_t i = 0; i < b->n; i++)
			out[i] ^= 1;
		return;
	case N_AND:
	case N_OR: {
		uint8_t *tmp = f->scratch[level];
		eval_node(f, n->l, b, out, level + 1);
		eval_node(f, n->r, b, tmp, level + 1);
		if (n->kind == N_AND)
			for (size_t i = 0; i < b->n; i++)
				out[i] &= tmp[i];
		else
			for (size_t i = 0; i < b->n; i++)
				out[i] |= tmp[i];
		return;
	}
	}
}

size_t ng_filter_eval(ng_filter *f, const ng_column_batch *b, uint8_t *match)
{
	if (b->n > f->scratch_cap) {
		if (!f->scratch && !(f->scratch = calloc(f->depth, sizeof *f->scratch)))
			return (size_t)-1;
		for (unsigned i = 0; i < f->depth; i++) {
			uint8_t *s = realloc(f->scratch[i], b->n);
			if (!s)
				return (size_t)-1;
			f->scratch[i] = s;
		}
		f->scratch_cap = b->n;
	}
	eval_node(f, f->root, b, match, 0);
	size_t cnt = 0;
	for (size_t i = 0; i < b->n; i++)
		cnt += match[i];
	return cnt;
}

bool ng_filter_match_flow(ng_filter *f, const ng_flow *r)
{
	ng_column_batch b = {.n = 1};
	for (size_t i = 0; i < NG_FIELD_COUNT; i++)
		b.col[i] = (const uint8_t *)r + ng_fields[i].offset;
	uint8_t m = 0;
	return ng_filter_eval(f, &b, &m) == 1;
}
