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
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/addr.h"
#include "core/field.h"
#include "core/strtab.h"

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
	uint64_t columns;
	unsigned depth;     /* of the tree: scratch vectors needed */
	unsigned nstr;      /* N_STR nodes */
	ng_filter_ctx *own; /* ng_filter_eval's state */
};

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

/* ---- tokens ----------------------------------------------------------- */

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
	uint64_t columns;
	unsigned nstr;
} parser;

static bool word_char(char c)
{
	return isalnum((unsigned char)c) || c == '.' || c == ':' || c == '/' || c == '_' ||
	       c == '-' || c == '+';
}

static void next(parser *p)
{
	const char *s = p->text;
	size_t i = p->t.end;
	/* blanks, and comments from '#' to the end of the line (filter files) */
	for (;;) {
		while (s[i] && isspace((unsigned char)s[i]))
			i++;
		if (s[i] != '#')
			break;
		while (s[i] && s[i] != '\n')
			i++;
	}
	tok t = {.pos = i, .len = 1};
	char c = s[i], d = c ? s[i + 1] : 0;
	if (!c) {
		t.kind = T_END;
		t.len = 0;
	} else if (c == '(') {
		t.kind = T_LPAREN;
	} else if (c == ')') {
		t.kind = T_RPAREN;
	} else if (c == '[') {
		t.kind = T_LBRACK;
	} else if (c == ']') {
		t.kind = T_RBRACK;
	} else if (c == ',') {
		t.kind = T_COMMA;
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
	} else if (c == '~') {
		t.kind = T_OP, t.op = OP_LIKE;
	} else if (c == '"' || c == '\'') {
		/* a quoted word: "Google LLC" */
		const char *close = strchr(s + i + 1, c);
		if (close) {
			t.kind = T_WORD;
			t.pos = i + 1;
			t.len = (size_t)(close - s) - i - 1;
			t.end = (size_t)(close - s) + 1;
			p->t = t;
			return;
		}
		t.kind = T_BADQUOTE;
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
	t.end = t.pos + t.len;
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
		/* quote the line holding the fault (filters from files have
		 * several) with the caret under it */
		size_t pos = p->t.pos, start = pos, line = 1;
		while (start > 0 && p->text[start - 1] != '\n')
			start--;
		for (size_t i = 0; i < start; i++)
			line += p->text[i] == '\n';
		size_t end = start;
		while (p->text[end] && p->text[end] != '\n')
			end++;
		int col = (int)(pos - start);
		if (strchr(p->text, '\n'))
			snprintf(p->err, p->errlen, "%s (line %zu)\n  %.*s\n  %*s^", what, line,
			         (int)(end - start), p->text + start, col, "");
		else
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
	free(n->vals);
	free(n->addrs);
	free(n->nets);
	free(n->str);
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

/* ---- terms -------------------------------------------------------------- */

static node *not_node(parser *p, node *c)
{
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

/* Parses a number with an optional k/M/G suffix (×1000, as nfdump's
 * scaling factors).  False when the current token is not one. */
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
	static const struct {
		const char *w;
		enum op op;
	} words[] = {
	    {"eq", OP_EQ}, {"ne", OP_NE}, {"lt", OP_LT},
	    {"gt", OP_GT}, {"le", OP_LE}, {"ge", OP_GE},
	};
	if (p->t.kind == T_OP && p->t.op != OP_LIKE) {
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

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* "[ N N, N ... ]" (space or comma separated, as nfdump's lists) into an
 * N_SET node on f1 (and f2).  The current token is the '['. */
static node *number_list(parser *p, int f1, int f2, const char *what, uint64_t max)
{
	if (p->t.kind != T_LBRACK)
		return fail(p, "expected '[' to start a list after 'in'");
	next(p);
	node *n = new_node(p, N_SET);
	if (!n)
		return NULL;
	n->f1 = f1;
	n->f2 = f2;
	size_t cap = 0;
	for (;;) {
		if (p->t.kind == T_COMMA) {
			next(p);
			continue;
		}
		if (p->t.kind == T_RBRACK && n->nvals)
			break;
		uint64_t v;
		if (!parse_number(p, &v)) {
			free_node(n);
			return fail(p,
			            p->t.kind == T_END ? "expected ']' to close the list"
			                               : "expected %s in the list",
			            what);
		}
		if (v > max) {
			free_node(n);
			return fail(p, "%s %llu out of range (at most %llu)", what,
			            (unsigned long long)v, (unsigned long long)max);
		}
		if (n->nvals == cap) {
			cap = cap ? cap * 2 : 16;
			uint64_t *nv = realloc(n->vals, cap * sizeof *nv);
			if (!nv) {
				free_node(n);
				return fail(p, "out of memory");
			}
			n->vals = nv;
		}
		n->vals[n->nvals++] = v;
		next(p);
	}
	next(p);
	qsort(n->vals, n->nvals, sizeof *n->vals, cmp_u64);
	p->columns |= NG_COL(f1) | (f2 >= 0 ? NG_COL(f2) : 0);
	return n;
}

/* [op] N[kMG] against field f1 (and f2: either side), or "in [list]".
 * `what` names the expected value in the error, `after` the keyword
 * before it. */
static node *number_term(parser *p, int f1, int f2, const char *what, const char *after,
                         uint64_t max)
{
	if (is_kw(p, "in")) {
		next(p);
		return number_list(p, f1, f2, what, max);
	}
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

/* A protocol by name: the common ones, then /etc/protocols. */
static int proto_number(const char *s)
{
	static const struct {
		const char *name;
		int num;
	} names[] = {
	    {"icmp", 1},       {"igmp", 2},  {"tcp", 6},   {"udp", 17},
	    {"gre", 47},       {"esp", 50},  {"ah", 51},   {"icmp6", 58},
	    {"ipv6-icmp", 58}, {"ospf", 89}, {"pim", 103}, {"sctp", 132},
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!strcasecmp(s, names[i].name))
			return names[i].num;
	char low[64];
	size_t i = 0;
	for (; s[i] && i < sizeof low - 1; i++)
		low[i] = (char)tolower((unsigned char)s[i]);
	low[i] = 0;
	const struct protoent *pe = getprotobyname(low);
	return pe && pe->p_proto >= 0 && pe->p_proto <= 255 ? pe->p_proto : -1;
}

static node *proto_term(parser *p)
{
	char buf[64];
	enum op op = parse_op(p);
	uint64_t v;
	if (parse_number(p, &v) && v <= 255) {
		next(p);
		return cmp_node(p, NG_F_PROTOCOL, -1, op, v);
	}
	int num = p->t.kind == T_WORD ? proto_number(tok_text(p, buf, sizeof buf)) : -1;
	if (num < 0)
		return fail(p, "expected a protocol (tcp, udp, icmp, icmp6, gre, esp, sctp, a "
		               "name of /etc/protocols or 0..255) after 'proto'");
	next(p);
	return cmp_node(p, NG_F_PROTOCOL, -1, op, (uint64_t)num);
}

/* A dotted IPv4 netmask (255.255.255.0) as a prefix length; -1 when the
 * token is not a contiguous mask. */
static int dotted_mask(const char *s)
{
	uint8_t a[16];
	if (strchr(s, '/') || !strchr(s, '.') || strchr(s, ':') || !ng_addr_parse(s, a))
		return -1;
	uint32_t m = (uint32_t)a[12] << 24 | (uint32_t)a[13] << 16 | (uint32_t)a[14] << 8 | a[15];
	int len = 0;
	while (len < 32 && (m & (UINT32_C(1) << (31 - len))))
		len++;
	if (len < 32 && (m << len))
		return -1;
	return len;
}

/* ADDR (host) or ADDR/LEN or ADDR MASK (net) against f1 (and f2). */
static node *addr_term(parser *p, int f1, int f2, bool want_prefix, const char *after)
{
	char buf[128];
	uint8_t net[16];
	unsigned plen = 128;
	if (p->t.kind == T_WORD) {
		tok_text(p, buf, sizeof buf);
		bool ok;
		if (want_prefix && !strchr(buf, '/') && strchr(buf, '.') && !strchr(buf, ':') &&
		    ng_addr_parse(buf, net)) {
			/* nfdump's "net 10.0.0.0 255.0.0.0"; a lone address is a host */
			tok at = p->t;
			next(p);
			int len =
			    p->t.kind == T_WORD ? dotted_mask(tok_text(p, buf, sizeof buf)) : -1;
			if (len >= 0) {
				next(p);
				return net_node(p, f1, f2, net, 96 + (unsigned)len);
			}
			uint8_t junk[16];
			size_t al = strlen(after);
			bool is_net = al >= 3 && !strcmp(after + al - 3, "net");
			if (is_net && p->t.kind == T_WORD && strchr(buf, '.') &&
			    ng_addr_parse(buf, junk)) {
				p->t = at; /* a bad mask: point at the network */
				return fail(p,
				            "expected a network A.B.C.D/LEN, A.B.C.D MASK or "
				            "X:X::/LEN after '%s' (the mask is not contiguous)",
				            after);
			}
			p->t = at;
			tok_text(p, buf, sizeof buf);
		}
		ok = want_prefix ? ng_prefix_parse(buf, net, &plen)
		                 : (!strchr(buf, '/') && ng_addr_parse(buf, net));
		if (ok) {
			next(p);
			return net_node(p, f1, f2, net, plen);
		}
	}
	return fail(p,
	            want_prefix ? "expected a network A.B.C.D/LEN, A.B.C.D MASK or X:X::/LEN "
	                          "after '%s'"
	                        : "expected an IPv4 or IPv6 address after '%s'",
	            after);
}

static int cmp_addr(const void *a, const void *b)
{
	return memcmp(a, b, 16);
}

/* "[ADDR ADDR/LEN, ...]" against f1 (and f2): nfdump's ip list.  The
 * current token is the '['. */
static node *addr_list(parser *p, int f1, int f2)
{
	if (p->t.kind != T_LBRACK)
		return fail(p, "expected '[' to start a list of addresses after 'in'");
	next(p);
	node *n = new_node(p, N_ADDRSET);
	if (!n)
		return NULL;
	n->f1 = f1;
	n->f2 = f2;
	size_t acap = 0, ncap = 0;
	for (;;) {
		if (p->t.kind == T_COMMA) {
			next(p);
			continue;
		}
		if (p->t.kind == T_RBRACK && n->naddrs + n->nnets)
			break;
		char buf[128];
		uint8_t a[16];
		unsigned plen = 128;
		if (p->t.kind != T_WORD ||
		    !ng_prefix_parse(tok_text(p, buf, sizeof buf), a, &plen)) {
			free_node(n);
			return fail(p, p->t.kind == T_END ? "expected ']' to close the list"
			                                  : "expected an address or a network "
			                                    "ADDR/LEN in the list");
		}
		bool host = plen == 128;
		size_t *cnt = host ? &n->naddrs : &n->nnets, *cap = host ? &acap : &ncap;
		if (*cnt == *cap) {
			*cap = *cap ? *cap * 2 : 16;
			void *x = host ? realloc(n->addrs, *cap * 16) : realloc(n->nets, *cap * 32);
			if (!x) {
				free_node(n);
				return fail(p, "out of memory");
			}
			if (host)
				n->addrs = x;
			else
				n->nets = x;
		}
		if (host) {
			memcpy(n->addrs[n->naddrs++], a, 16);
		} else {
			uint8_t *e = n->nets[n->nnets++];
			for (unsigned i = 0; i < 16; i++) {
				unsigned bits = plen > i * 8 ? plen - i * 8 : 0;
				e[16 + i] = bits >= 8 ? 0xff : (uint8_t)(0xff << (8 - bits));
				e[i] = a[i] & e[16 + i];
			}
		}
		next(p);
	}
	next(p);
	if (n->naddrs)
		qsort(n->addrs, n->naddrs, 16, cmp_addr);
	p->columns |= NG_COL(f1) | (f2 >= 0 ? NG_COL(f2) : 0);
	return n;
}

/* [= | != ] ADDR[/LEN] against one address field (exporter, nexthop...). */
static node *addr_op_term(parser *p, int f, bool want_prefix, const char *after)
{
	if (is_kw(p, "in")) {
		next(p);
		return addr_list(p, f, -1);
	}
	enum op op = parse_op(p);
	if (op != OP_EQ && op != OP_NE)
		return fail(p, "addresses compare with = or != only");
	node *n = addr_term(p, f, -1, want_prefix, after);
	return op == OP_EQ ? n : not_node(p, n);
}

/* [= | !=] XX:XX:XX:XX:XX:XX against f1 (and f2). */
static node *mac_term(parser *p, int f1, int f2, const char *after)
{
	enum op op = parse_op(p);
	if (op != OP_EQ && op != OP_NE)
		return fail(p, "MAC addresses compare with = or != only");
	char buf[64];
	unsigned m[6];
	char extra;
	if (p->t.kind != T_WORD ||
	    sscanf(tok_text(p, buf, sizeof buf),
	           "%2x%*[:-]%2x%*[:-]%2x%*[:-]%2x%*[:-]%2x%*[:-]%2x%c", &m[0], &m[1], &m[2], &m[3],
	           &m[4], &m[5], &extra) != 6 ||
	    strlen(buf) != 17)
		return fail(p, "expected a MAC address XX:XX:XX:XX:XX:XX after '%s'", after);
	next(p);
	node *n = new_node(p, N_MAC);
	if (!n)
		return NULL;
	n->f1 = f1;
	n->f2 = f2;
	for (int i = 0; i < 6; i++)
		n->mac[i] = (uint8_t)m[i];
	p->columns |= NG_COL(f1) | (f2 >= 0 ? NG_COL(f2) : 0);
	return op == OP_EQ ? n : not_node(p, n);
}

/* A string field (interned IDs) against a word or a quoted string.  `=`
 * or `==`: equal; `~`: contains; no operator: contains for names (fields
 * whose name ends in "name"), equal for the rest (codes: country JP).
 * Case-insensitive either way. */
static node *str_term(parser *p, int f1, int f2, const char *after)
{
	const ng_field *fd = &ng_fields[f1];
	bool substr =
	    strstr(fd->name, "name") || (fd->short_name && strstr(fd->short_name, "name"));
	bool neg = false;
	if (p->t.kind == T_OP) {
		if (p->t.op == OP_LIKE)
			substr = true;
		else if (p->t.op == OP_EQ || p->t.op == OP_NE)
			substr = false, neg = p->t.op == OP_NE;
		else
			return fail(p, "strings compare with =, != or ~ (contains) only");
		next(p);
	}
	if (p->t.kind != T_WORD)
		return fail(p,
		            p->t.kind == T_BADQUOTE ? "unterminated quote"
		                                    : "expected a name after '%s'",
		            after);
	node *n = new_node(p, N_STR);
	if (!n)
		return NULL;
	n->f1 = f1;
	n->f2 = f2;
	n->substr = substr;
	n->slot = p->nstr++;
	n->str = malloc(p->t.len + 1);
	if (!n->str) {
		free_node(n);
		return fail(p, "out of memory");
	}
	for (size_t i = 0; i < p->t.len; i++)
		n->str[i] = (char)tolower((unsigned char)p->text[p->t.pos + i]);
	n->str[p->t.len] = 0;
	next(p);
	p->columns |= NG_COL(f1) | (f2 >= 0 ? NG_COL(f2) : 0);
	return neg ? not_node(p, n) : n;
}

/* A field of the table by name: FIELD [op] VALUE (f2: the other side). */
static node *field_term(parser *p, const ng_field *f, int f2)
{
	char name[64];
	snprintf(name, sizeof name, "%s", f->short_name ? f->short_name : f->name);
	switch (f->type) {
	case NG_FT_ADDR:
		if (f2 >= 0)
			return fail(p, "expected 'src' or 'dst' before '%s'", name);
		return addr_op_term(p, f->id, true, name);
	case NG_FT_MAC: return mac_term(p, f->id, f2, name);
	case NG_FT_STR: return str_term(p, f->id, f2, name);
	default: {
		uint64_t max = f->size >= 8 ? UINT64_MAX : (UINT64_C(1) << (8 * f->size)) - 1;
		if (f->id == NG_F_PROTOCOL)
			return proto_term(p);
		return number_term(p, f->id, f2, "a number", name, max);
	}
	}
}

/* The field "src_W", "srcW" (dir 1) or "dst_W", "dstW" (dir 2) for the
 * word W of the current token ('-' read as '_'); NULL when none. */
static const ng_field *side_field(const parser *p, int dir)
{
	char w[64], name[80];
	if (p->t.kind != T_WORD || p->t.len >= sizeof w)
		return NULL;
	tok_text(p, w, sizeof w);
	for (char *c = w; *c; c++)
		if (*c == '-')
			*c = '_';
	const char *d = dir == 1 ? "src" : "dst";
	snprintf(name, sizeof name, "%s_%s", d, w);
	const ng_field *f = ng_field_by_name(name);
	if (!f) {
		snprintf(name, sizeof name, "%s%s", d, w);
		f = ng_field_by_name(name);
	}
	if (!f) { /* short names have no '_': "net-name" -> srcnetname */
		char *o = w;
		for (const char *c = w; *c; c++)
			if (*c != '_')
				*o++ = *c;
		*o = 0;
		snprintf(name, sizeof name, "%s%s", d, w);
		f = ng_field_by_name(name);
	}
	return f;
}

/* [src|dst] host|ip|net|port|as|mask|vlan|mac|FIELD ... ; `dir` 0
 * either, 1 src, 2 dst. */
static node *directed_term(parser *p, int dir)
{
	const char *d = dir == 1 ? "src " : dir == 2 ? "dst " : "";
	int f1s = dir == 2 ? 1 : 0; /* pick the dst field for dir 2 */
	int f2s = dir ? -1 : 0;     /* the other side, either-side terms only */
#define SIDE(S, D) (f1s ? (D) : (S)), (f2s < 0 ? -1 : (int)(D))
	char after[32];
	if (is_kw(p, "host") || is_kw(p, "ip")) {
		snprintf(after, sizeof after, "%s%s", d, is_kw(p, "ip") ? "ip" : "host");
		next(p);
		if (is_kw(p, "in")) {
			next(p);
			return addr_list(p, SIDE(NG_F_SRC_ADDR, NG_F_DST_ADDR));
		}
		return addr_term(p, SIDE(NG_F_SRC_ADDR, NG_F_DST_ADDR), false, after);
	}
	if (is_kw(p, "net")) {
		snprintf(after, sizeof after, "%snet", d);
		next(p);
		if (is_kw(p, "in")) {
			next(p);
			return addr_list(p, SIDE(NG_F_SRC_ADDR, NG_F_DST_ADDR));
		}
		return addr_term(p, SIDE(NG_F_SRC_ADDR, NG_F_DST_ADDR), true, after);
	}
	if (is_kw(p, "port")) {
		next(p);
		return number_term(p, SIDE(NG_F_SRC_PORT, NG_F_DST_PORT), "a port number", "port",
		                   65535);
	}
	if (is_kw(p, "as")) {
		next(p);
		return number_term(p, SIDE(NG_F_SRC_AS, NG_F_DST_AS), "an AS number", "as",
		                   UINT32_MAX);
	}
	if (is_kw(p, "mask")) {
		next(p);
		return number_term(p, SIDE(NG_F_SRC_MASK, NG_F_DST_MASK), "a prefix length", "mask",
		                   128);
	}
	if (is_kw(p, "vlan")) {
		next(p);
		return number_term(p, SIDE(NG_F_SRC_VLAN, NG_F_DST_VLAN), "a VLAN ID", "vlan",
		                   4095);
	}
	if (is_kw(p, "mac")) {
		snprintf(after, sizeof after, "%smac", d);
		next(p);
		return mac_term(p, SIDE(NG_F_SRC_MAC, NG_F_DST_MAC), after);
	}
#undef SIDE
	if (dir) {
		/* enrichment and other paired fields: src country JP */
		const ng_field *f = side_field(p, dir);
		if (f) {
			next(p);
			return field_term(p, f, -1);
		}
	}
	return fail(p,
	            "expected host, ip, net, port, as, mask, vlan, mac or a field name after '%s'",
	            dir == 1 ? "src" : "dst");
}

/* Counters and rates: bytes packets flows duration bps pps bpp. */
static node *counter_term(parser *p)
{
	static const struct {
		const char *kw;
		int field;
		int calc;
	} ks[] = {
	    {"bytes", NG_F_BYTES, -1},    {"packets", NG_F_PACKETS, -1},
	    {"duration", -1, C_DURATION}, {"pps", -1, C_PPS},
	    {"bps", -1, C_BPS},           {"bpp", -1, C_BPP},
	};
	if (is_kw(p, "flows") || is_kw(p, "flow")) {
		/* one stored record is one flow (nfdump: "set to 1 unless the
		 * exporter sends" a count, which nagare does not store) */
		next(p);
		node *c = number_term(p, NG_F_BYTES, -1, "a number (optionally with k, M or G)",
		                      "flows", UINT64_MAX);
		if (!c)
			return NULL;
		bool yes;
		if (c->kind == N_SET)
			yes = bsearch(&(uint64_t){1}, c->vals, c->nvals, sizeof *c->vals, cmp_u64);
		else
			yes = cmp(c->op, 1, c->val);
		free_node(c);
		return new_node(p, yes ? N_TRUE : N_FALSE);
	}
	for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
		if (!is_kw(p, ks[i].kw))
			continue;
		next(p);
		if (ks[i].field >= 0)
			return number_term(p, ks[i].field, -1,
			                   "a number (optionally with k, M or G)", ks[i].kw,
			                   UINT64_MAX);
		node *n =
		    number_term(p, NG_F_FLOW_START, -1,
		                ks[i].calc == C_DURATION ? "a duration in ms"
		                                         : "a number (optionally with k, M or G)",
		                ks[i].kw, UINT64_MAX);
		if (!n)
			return NULL;
		if (n->kind == N_SET) {
			free_node(n);
			return fail(p, "'%s in [...]' is not supported", ks[i].kw);
		}
		n->kind = N_CALC;
		n->calc = (enum calc)ks[i].calc;
		p->columns |= NG_COL(NG_F_FLOW_END) | NG_COL(NG_F_BYTES) | NG_COL(NG_F_PACKETS);
		return n;
	}
	return NULL;
}

/* flags FSRPAUEC: every given TCP flag set (nfdump); X: FSRPAU. */
static node *flags_term(parser *p)
{
	static const char letters[] = "FSRPAUEC";
	char buf[32];
	uint64_t v = 0;
	if (parse_number(p, &v) && v <= 255) {
		next(p);
		return cmp_node(p, NG_F_TCP_FLAGS, -1, OP_ALL, v);
	}
	if (p->t.kind != T_WORD || p->t.len > 8)
		return fail(p, "expected TCP flags (some of FSRPAUEC, or X for all) after 'flags'");
	tok_text(p, buf, sizeof buf);
	v = 0;
	for (const char *c = buf; *c; c++) {
		const char *at = strchr(letters, toupper((unsigned char)*c));
		if (toupper((unsigned char)*c) == 'X')
			v |= 0x3f;
		else if (at && *c)
			v |= UINT64_C(1) << (at - letters);
		else
			return fail(p,
			            "expected TCP flags (some of FSRPAUEC, or X for all) after "
			            "'flags', not '%c'",
			            *c);
	}
	next(p);
	return cmp_node(p, NG_F_TCP_FLAGS, -1, OP_ALL, v);
}

/* icmp-type / icmp-code N: implies proto icmp or icmp6 (nfdump). */
static node *icmp_term(parser *p, bool type)
{
	node *c = number_term(p, type ? NG_F_ICMP_TYPE : NG_F_ICMP_CODE, -1,
	                      type ? "an ICMP type" : "an ICMP code",
	                      type ? "icmp-type" : "icmp-code", 255);
	if (!c)
		return NULL;
	node *icmp = binary(p, N_OR, cmp_node(p, NG_F_PROTOCOL, -1, OP_EQ, 1),
	                    cmp_node(p, NG_F_PROTOCOL, -1, OP_EQ, 58));
	return binary(p, N_AND, icmp, c);
}

static node *term(parser *p)
{
	char buf[64];
	if (p->t.kind == T_END)
		return fail(p, "expected a filter term (e.g. 'proto tcp', 'host 192.0.2.1') at the "
		               "end of the filter");
	if (p->t.kind == T_BADQUOTE)
		return fail(p, "unterminated quote");
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
		return v6 ? not_node(p, n) : n;
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
	    is_kw(p, "as") || is_kw(p, "mask") || is_kw(p, "vlan") || is_kw(p, "mac"))
		return directed_term(p, 0);
	if (is_kw(p, "in") || is_kw(p, "out")) {
		bool in = is_kw(p, "in");
		next(p);
		if (is_kw(p, "src") || is_kw(p, "dst")) /* nfdump's "in src mac" */
			return term(p);
		if (is_kw(p, "mac"))
			return directed_term(p, 0);
		if (is_kw(p, "bytes") || is_kw(p, "packets")) {
			if (!in)
				return fail(p,
				            "reverse-direction counters ('out %s') are not stored",
				            tok_text(p, buf, sizeof buf));
			return counter_term(p);
		}
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
	if (is_kw(p, "prev") || is_kw(p, "next")) {
		bool nxt = is_kw(p, "next");
		next(p);
		if (nxt && (is_kw(p, "ip") || is_kw(p, "hop"))) {
			next(p);
			return addr_op_term(p, NG_F_NEXT_HOP, true, "next ip");
		}
		if (is_kw(p, "as"))
			return fail(p,
			            "the %s adjacent AS is not stored by nagare (use src as / dst "
			            "as)",
			            nxt ? "next" : "previous");
		return fail(p, nxt ? "expected 'ip' or 'as' after 'next'"
		                   : "expected 'as' after 'prev'");
	}
	if (is_kw(p, "router")) {
		next(p);
		if (!is_kw(p, "ip"))
			return fail(p, "expected 'ip' after 'router'");
		next(p);
		return addr_op_term(p, NG_F_EXPORTER, false, "router ip");
	}
	if (is_kw(p, "exporter")) {
		next(p);
		return addr_op_term(p, NG_F_EXPORTER, false, "exporter");
	}
	node *c = counter_term(p);
	if (c || p->failed)
		return c;
	if (is_kw(p, "flags")) {
		next(p);
		return flags_term(p);
	}
	if (is_kw(p, "dscp")) {
		next(p);
		node *n = number_term(p, NG_F_TOS, -1, "a DSCP value", "dscp", 63);
		if (n && n->kind == N_CMP)
			n->shift = 2;
		else if (n && n->kind == N_SET) {
			free_node(n);
			return fail(p, "'dscp in [...]' is not supported");
		}
		return n;
	}
	if (is_kw(p, "icmp-type") || is_kw(p, "icmp-code")) {
		bool type = is_kw(p, "icmp-type");
		next(p);
		return icmp_term(p, type);
	}
	if (is_kw(p, "mpls")) {
		next(p);
		if (!is_kw(p, "label") && !is_kw(p, "label1"))
			return fail(p, "expected 'label' after 'mpls' (the top label is stored)");
		next(p);
		return number_term(p, NG_F_MPLS_LABEL, -1, "an MPLS label", "mpls label", 0xfffff);
	}
	if (is_kw(p, "flowdir")) {
		next(p);
		int v = is_kw(p, "ingress") || is_kw(p, "0")  ? 0
		        : is_kw(p, "egress") || is_kw(p, "1") ? 1
		                                              : -1;
		if (v < 0)
			return fail(p, "expected ingress, egress, 0 or 1 after 'flowdir'");
		next(p);
		return cmp_node(p, NG_F_DIRECTION, -1, OP_EQ, (uint64_t)v);
	}
	tok_text(p, buf, sizeof buf);
	for (char *x = buf; *x; x++)
		if (*x == '-')
			*x = '_';
	const ng_field *f = ng_field_by_name(buf);
	if (f) {
		next(p);
		return field_term(p, f, -1);
	}
	/* a paired field without src/dst: either side (country JP) */
	const ng_field *fs = side_field(p, 1), *fd = side_field(p, 2);
	if (fs && fd && fs->type == fd->type && fs->type != NG_FT_ADDR) {
		next(p);
		return field_term(p, fs, fd->id);
	}
	return fail(p, "unknown filter keyword '%s'", tok_text(p, buf, sizeof buf));
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
		if (c->kind == N_CMP && c->f1 == NG_F_TCP_FLAGS && c->op == OP_ALL) {
			/* nfdump: "not flags AFRPU" is "none of them set", so that
			 * "flags S and not flags AFRPU" is a bare SYN (nfdump(1)) */
			c->op = OP_NONE;
			return c;
		}
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
	f->nstr = p.nstr;
	return f;
}

void ng_filter_free(ng_filter *f)
{
	if (!f)
		return;
	free_node(f->root);
	ng_filter_ctx_free(f->own);
	free(f);
}

uint64_t ng_filter_columns(const ng_filter *f)
{
	return f->columns;
}

/* The columns of n's subtree read by leaves that test one column's value
 * row by row (*side) and by the others (*other: strings, computed
 * values, which need every row's value). */
static void leaf_columns(const node *n, uint64_t *side, uint64_t *other)
{
	if (!n)
		return;
	uint64_t c = (n->f1 >= 0 ? NG_COL(n->f1) : 0) | (n->f2 >= 0 ? NG_COL(n->f2) : 0);
	switch (n->kind) {
	case N_CMP:
	case N_SET:
	case N_ADDRSET:
	case N_NET:
	case N_MAC: *side |= c; return;
	case N_STR: *other |= c; return;
	case N_CALC:
		*other |= NG_COL(NG_F_FLOW_START) | NG_COL(NG_F_FLOW_END) | NG_COL(NG_F_BYTES) |
		          NG_COL(NG_F_PACKETS);
		return;
	default: leaf_columns(n->l, side, other); leaf_columns(n->r, side, other);
	}
}

uint64_t ng_filter_code_columns(const ng_filter *f)
{
	uint64_t side = 0, other = 0;
	leaf_columns(f->root, &side, &other);
	return side & ~other;
}

/* ---- evaluation --------------------------------------------------------- */

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

static void eval_sides(ng_filter_ctx *c, side_eval fn, const node *n, const ng_column_batch *b,
                       uint8_t *out)
{
	eval_side(c, fn, n, n->f1, b, out, false);
	if (n->f2 >= 0)
		eval_side(c, fn, n, n->f2, b, out, true);
}

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

/* ---- zone-map pruning ---------------------------------------------------- */

/* What a leaf or subtree can evaluate to over a segment's rows. */
typedef struct maybe {
	bool t, f;
} maybe;

static const maybe ANY = {true, true};

static maybe either(maybe a, maybe b)
{
	return (maybe){a.t || b.t, a.f && b.f};
}

/* field >> shift op x over values in [lo, hi]. */
static maybe cmp_range(enum op op, uint64_t lo, uint64_t hi, uint64_t x)
{
	if (lo == hi) {
		bool v = cmp(op, lo, x);
		return (maybe){v, !v};
	}
	switch (op) {
	case OP_EQ: return (maybe){lo <= x && x <= hi, true};
	case OP_NE: return (maybe){true, lo <= x && x <= hi};
	case OP_LT: return (maybe){lo < x, hi >= x};
	case OP_GT: return (maybe){hi > x, lo <= x};
	case OP_LE: return (maybe){lo <= x, hi > x};
	case OP_GE: return (maybe){hi >= x, lo < x};
	default: return ANY; /* flags: bit tests say little about a range */
	}
}

static maybe zone_cmp(const node *n, int fi, const ng_zone_map *z)
{
	if (!z->known[fi])
		return ANY;
	return cmp_range(n->op, z->min[fi] >> n->shift, z->max[fi] >> n->shift, n->val);
}

static maybe zone_set(const node *n, int fi, const ng_zone_map *z)
{
	if (!z->known[fi])
		return ANY;
	uint64_t lo = z->min[fi], hi = z->max[fi];
	/* first value ≥ lo (vals sorted ascending) */
	size_t a = 0, b = n->nvals;
	while (a < b) {
		size_t m = a + (b - a) / 2;
		if (n->vals[m] < lo)
			a = m + 1;
		else
			b = m;
	}
	bool hit = a < n->nvals && n->vals[a] <= hi;
	return (maybe){hit, !(hit && lo == hi)};
}

/* A net (prefix) against a column whose rows are all IPv4-mapped, in
 * [lo, hi] as numbers. */
static maybe v4_net(const uint8_t net[16], const uint8_t mask[16], uint64_t lo, uint64_t hi)
{
	static const uint8_t pre[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	for (unsigned j = 0; j < 12; j++)
		if ((pre[j] & mask[j]) != net[j])
			return (maybe){false, true};
	uint32_t n4 =
	    (uint32_t)net[12] << 24 | (uint32_t)net[13] << 16 | (uint32_t)net[14] << 8 | net[15];
	uint32_t m4 = (uint32_t)mask[12] << 24 | (uint32_t)mask[13] << 16 |
	              (uint32_t)mask[14] << 8 | mask[15];
	uint64_t nlo = n4 & m4, nhi = nlo | (~m4 & 0xffffffffu);
	bool overlap = nlo <= hi && lo <= nhi;
	bool inside = nlo <= lo && hi <= nhi;
	return (maybe){overlap, !inside};
}

static maybe zone_net(const node *n, int fi, const ng_zone_map *z)
{
	if (!z->v4[fi])
		return ANY;
	return v4_net(n->net, n->mask, z->min[fi], z->max[fi]);
}

static maybe zone_addrset(const node *n, int fi, const ng_zone_map *z)
{
	if (!z->v4[fi])
		return ANY;
	static const uint8_t full[16] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	                                 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	maybe r = {false, true};
	for (size_t k = 0; k < n->naddrs && !r.t; k++)
		r.t = v4_net(n->addrs[k], full, z->min[fi], z->max[fi]).t;
	for (size_t k = 0; k < n->nnets && !r.t; k++)
		r.t = v4_net(n->nets[k], n->nets[k] + 16, z->min[fi], z->max[fi]).t;
	return r;
}

static maybe zone_leaf(const node *n, int fi, const ng_zone_map *z)
{
	switch (n->kind) {
	case N_CMP: return zone_cmp(n, fi, z);
	case N_SET: return zone_set(n, fi, z);
	case N_NET: return zone_net(n, fi, z);
	case N_ADDRSET: return zone_addrset(n, fi, z);
	default: return ANY;
	}
}

static maybe zone_node(const node *n, const ng_zone_map *z)
{
	switch (n->kind) {
	case N_TRUE: return (maybe){true, false};
	case N_FALSE: return (maybe){false, true};
	case N_NOT: {
		maybe c = zone_node(n->l, z);
		return (maybe){c.f, c.t};
	}
	case N_AND: {
		maybe a = zone_node(n->l, z), b = zone_node(n->r, z);
		return (maybe){a.t && b.t, a.f || b.f};
	}
	case N_OR: return either(zone_node(n->l, z), zone_node(n->r, z));
	case N_CMP:
	case N_SET:
	case N_NET:
	case N_ADDRSET: {
		maybe r = zone_leaf(n, n->f1, z);
		return n->f2 >= 0 ? either(r, zone_leaf(n, n->f2, z)) : r;
	}
	default: return ANY; /* MAC, string, computed */
	}
}

bool ng_filter_may_match(const ng_filter *f, const ng_zone_map *z)
{
	return zone_node(f->root, z).t;
}

size_t ng_filter_eval(ng_filter *f, const ng_column_batch *b, uint8_t *match)
{
	if (!f->own && !(f->own = ng_filter_ctx_new(f)))
		return (size_t)-1;
	return ng_filter_eval_ctx(f, f->own, b, match);
}

bool ng_filter_match_flow(ng_filter *f, const ng_flow *r)
{
	ng_column_batch b = {.n = 1};
	for (size_t i = 0; i < NG_FIELD_COUNT; i++)
		b.col[i] = (const uint8_t *)r + ng_fields[i].offset;
	uint8_t m = 0;
	return ng_filter_eval(f, &b, &m) == 1;
}
