/*
 * filter_terms.c — the terms of the filter language, the leaves of the
 * grammar in filter_parse.c: "proto tcp", "src port 80", "net
 * 10.0.0.0/8", "bytes > 1M", "country JP" … (filter.h lists them all;
 * docs/query.md explains them to users).  Each parses the words after
 * its keyword and builds a leaf of the tree (filter_int.h), or a small
 * subtree ("icmp-type 8" is (proto 1 or proto 58) and icmp_type 8).
 *
 * How a term is found.  ng_flt_term(), at the end of this file, looks at
 * the word that starts the term:
 *
 *   1. a keyword of the table `terms`: its handler parses what follows;
 *   2. a word of the table `side_terms` (host, ip, net, port, as, mask,
 *      vlan, mac): the term on either side, "port 80" being src port 80
 *      or dst port 80; after src or dst (two rows of `terms`) the same
 *      words test that side only;
 *   3. the name or short name of a field of core/field.c ('-' read as
 *      '_'): FIELD [op] VALUE, the value read as the field's type wants
 *      (field_term);
 *   4. a paired field named without its side ("country JP", src_country
 *      or dst_country; not an address field): either side;
 *   5. else "unknown filter keyword".
 *
 * So a keyword hides a field of the same name ("flags" is the flags
 * term, not the short name of tcp_flags), and every word is matched
 * without regard to ASCII case.
 *
 * A row of a table holds the keyword's spellings, its handler, an
 * argument for the handler (a field, a side, a computed value …) and a
 * line saying what the term is, there for the reader only.  Adding a term
 * is adding a row and a handler.  The value forms that handlers share
 * come first in the file: numbers ([op] N[kMG], or "in [LIST]"), the
 * protocol, addresses and networks, MAC addresses, strings, any field by
 * its type.
 *
 * The leaves note the columns they read in the parser (p->columns, which
 * becomes ng_filter_columns).
 *
 * Errors.  A term that fails says what it expected after what ("expected
 * a port number after 'port'") and points at the token it could not take
 * (filter_parse.c's essay: errors and their columns).  The messages are
 * output: the unit tests and bench/answers check them word for word.
 */
#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/addr.h"
#include "query/filter_int.h"

/* ---- leaves and lists --------------------------------------------------- */

/* A leaf of kind k on field f1 (and f2 >= 0, either side), its columns
 * noted in p (ng_filter_columns); NULL when out of memory.  The caller
 * fills in the value. */
static node *leaf(parser *p, enum node_kind k, int f1, int f2)
{
	node *n = ng_flt_node(p, k);
	if (!n)
		return NULL;
	n->f1 = f1;
	n->f2 = f2;
	p->columns = ng_colset_union(p->columns, node_columns(n));
	return n;
}

/* An N_CMP leaf: field f1 (or f2) op v. */
static node *cmp_node(parser *p, int f1, int f2, enum op op, uint64_t v)
{
	node *n = leaf(p, N_CMP, f1, f2);
	if (!n)
		return NULL;
	n->op = op;
	n->val = v;
	return n;
}

/* The network of a[16]/plen (plen of 128 bits: IPv4 prefixes count from
 * 96) as net[16] (host bits clear) and mask[16]. */
static void prefix_mask(const uint8_t a[16], unsigned plen, uint8_t net[16], uint8_t mask[16])
{
	for (unsigned i = 0; i < 16; i++) {
		unsigned bits = plen > i * 8 ? plen - i * 8 : 0;
		mask[i] = bits >= 8 ? 0xff : (uint8_t)(0xff << (8 - bits));
		net[i] = a[i] & mask[i];
	}
}

/* An N_NET leaf: field f1 (or f2) within net/plen. */
static node *net_node(parser *p, int f1, int f2, const uint8_t net[16], unsigned plen)
{
	node *n = leaf(p, N_NET, f1, f2);
	if (!n)
		return NULL;
	prefix_mask(net, plen, n->net, n->mask);
	return n;
}

/* The '[' that opens a list (else the error `no_bracket`), read, and the
 * leaf of kind k on f1 (and f2) that the list's items go into; NULL on an
 * error. */
static node *list_start(parser *p, enum node_kind k, int f1, int f2, const char *no_bracket)
{
	if (p->t.kind != T_LBRACK)
		return ng_flt_fail(p, "%s", no_bracket);
	ng_flt_next(p);
	return leaf(p, k, f1, f2);
}

/* In a list, after its '[': skips commas, and at the closing ']' of a
 * list that holds `have` > 0 items reads it and returns true; false at
 * the next item, or whatever stands in its place. */
static bool list_end(parser *p, size_t have)
{
	while (p->t.kind == T_COMMA)
		ng_flt_next(p);
	if (p->t.kind != T_RBRACK || !have)
		return false;
	ng_flt_next(p);
	return true;
}

/* ---- numbers ------------------------------------------------------------ */

/* Parses a number with an optional k/M/G suffix (×1000, as nfdump's
 * scaling factors).  False when the current token is not one. */
static bool parse_number(const parser *p, uint64_t *out)
{
	if (p->t.kind != T_WORD)
		return false;
	char buf[64];
	/* a longer word would be cut by tok_text and read as another number
	 * ("0000…080" as 0): it is no number a term takes */
	if (p->t.len >= sizeof buf)
		return false;
	tok_text(p, buf, sizeof buf);
	if (!isdigit((unsigned char)buf[0]))
		return false;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(buf, &end, 10);
	if (errno == ERANGE) /* past 2^64 - 1: strtoull gives UINT64_MAX */
		return false;
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
		ng_flt_next(p);
		return op;
	}
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
		if (is_kw(p, words[i].w)) {
			ng_flt_next(p);
			return words[i].op;
		}
	return OP_EQ;
}

/* "[ N N, N ... ]" (space or comma separated, as nfdump's lists) into an
 * N_SET node on f1 (and f2).  The current token is the '['. */
static node *number_list(parser *p, int f1, int f2, const char *what, uint64_t max)
{
	node *n = list_start(p, N_SET, f1, f2, "expected '[' to start a list after 'in'");
	if (!n)
		return NULL;
	size_t cap = 0;
	while (!list_end(p, n->nvals)) {
		uint64_t v;
		if (!parse_number(p, &v)) {
			ng_flt_free(n);
			return ng_flt_fail(p,
			                   p->t.kind == T_END ? "expected ']' to close the list"
			                                      : "expected %s in the list",
			                   what);
		}
		if (v > max) {
			ng_flt_free(n);
			return ng_flt_fail(p, "%s %llu out of range (at most %llu)", what,
			                   (unsigned long long)v, (unsigned long long)max);
		}
		if (n->nvals == cap) {
			cap = cap ? cap * 2 : 16;
			uint64_t *nv = realloc(n->vals, cap * sizeof *nv);
			if (!nv) {
				ng_flt_free(n);
				return ng_flt_fail(p, "out of memory");
			}
			n->vals = nv;
		}
		n->vals[n->nvals++] = v;
		ng_flt_next(p);
	}
	qsort(n->vals, n->nvals, sizeof *n->vals, cmp_u64);
	return n;
}

/* [op] N[kMG] against field f1 (and f2: either side), or "in [list]".
 * `what` names the expected value in the error, `after` the keyword
 * before it. */
static node *number_term(parser *p, int f1, int f2, const char *what, const char *after,
                         uint64_t max)
{
	if (is_kw(p, "in")) {
		ng_flt_next(p);
		return number_list(p, f1, f2, what, max);
	}
	enum op op = parse_op(p);
	uint64_t v;
	if (!parse_number(p, &v))
		return ng_flt_fail(p, "expected %s after '%s'", what, after);
	if (v > max)
		return ng_flt_fail(p, "%s %llu out of range (at most %llu)", what,
		                   (unsigned long long)v, (unsigned long long)max);
	ng_flt_next(p);
	return cmp_node(p, f1, f2, op, v);
}

/* ---- protocols ---------------------------------------------------------- */

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

/* proto [op] NAME|N: the protocol by number (0..255) or name. */
static node *proto_term(parser *p)
{
	char buf[64];
	enum op op = parse_op(p);
	uint64_t v;
	if (parse_number(p, &v) && v <= 255) {
		ng_flt_next(p);
		return cmp_node(p, NG_F_PROTOCOL, -1, op, v);
	}
	int num = p->t.kind == T_WORD ? proto_number(tok_text(p, buf, sizeof buf)) : -1;
	if (num < 0)
		return ng_flt_fail(p,
		                   "expected a protocol (tcp, udp, icmp, icmp6, gre, esp, sctp, a "
		                   "name of /etc/protocols or 0..255) after 'proto'");
	ng_flt_next(p);
	return cmp_node(p, NG_F_PROTOCOL, -1, op, (uint64_t)num);
}

/* ---- addresses and networks --------------------------------------------- */

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
			ng_flt_next(p);
			int len =
			    p->t.kind == T_WORD ? dotted_mask(tok_text(p, buf, sizeof buf)) : -1;
			if (len >= 0) {
				ng_flt_next(p);
				return net_node(p, f1, f2, net, 96 + (unsigned)len);
			}
			uint8_t junk[16];
			size_t al = strlen(after);
			bool is_net = al >= 3 && !strcmp(after + al - 3, "net");
			if (is_net && p->t.kind == T_WORD && strchr(buf, '.') &&
			    ng_addr_parse(buf, junk)) {
				p->t = at; /* a bad mask: point at the network */
				return ng_flt_fail(
				    p,
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
			ng_flt_next(p);
			return net_node(p, f1, f2, net, plen);
		}
	}
	return ng_flt_fail(p,
	                   want_prefix
	                       ? "expected a network A.B.C.D/LEN, A.B.C.D MASK or X:X::/LEN "
	                         "after '%s'"
	                       : "expected an IPv4 or IPv6 address after '%s'",
	                   after);
}

/* "[ADDR ADDR/LEN, ...]" against f1 (and f2): nfdump's ip list.  The
 * current token is the '['. */
static node *addr_list(parser *p, int f1, int f2)
{
	node *n = list_start(p, N_ADDRSET, f1, f2,
	                     "expected '[' to start a list of addresses after 'in'");
	if (!n)
		return NULL;
	size_t acap = 0, ncap = 0;
	while (!list_end(p, n->naddrs + n->nnets)) {
		char buf[128];
		uint8_t a[16];
		unsigned plen = 128;
		if (p->t.kind != T_WORD ||
		    !ng_prefix_parse(tok_text(p, buf, sizeof buf), a, &plen)) {
			ng_flt_free(n);
			return ng_flt_fail(p, p->t.kind == T_END
			                          ? "expected ']' to close the list"
			                          : "expected an address or a network "
			                            "ADDR/LEN in the list");
		}
		bool host = plen == 128;
		size_t *cnt = host ? &n->naddrs : &n->nnets, *cap = host ? &acap : &ncap;
		if (*cnt == *cap) {
			*cap = *cap ? *cap * 2 : 16;
			void *x = host ? realloc(n->addrs, *cap * 16) : realloc(n->nets, *cap * 32);
			if (!x) {
				ng_flt_free(n);
				return ng_flt_fail(p, "out of memory");
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
			prefix_mask(a, plen, e, e + 16);
		}
		ng_flt_next(p);
	}
	if (n->naddrs)
		qsort(n->addrs, n->naddrs, 16, cmp_addr);
	return n;
}

/* [= | != ] ADDR[/LEN] against one address field (exporter, nexthop...). */
static node *addr_op_term(parser *p, int f, bool want_prefix, const char *after)
{
	if (is_kw(p, "in")) {
		ng_flt_next(p);
		return addr_list(p, f, -1);
	}
	enum op op = parse_op(p);
	if (op != OP_EQ && op != OP_NE)
		return ng_flt_fail(p, "addresses compare with = or != only");
	node *n = addr_term(p, f, -1, want_prefix, after);
	return op == OP_EQ ? n : ng_flt_not(p, n);
}

/* ---- MAC addresses, strings, any field ---------------------------------- */

/* [= | !=] XX:XX:XX:XX:XX:XX against f1 (and f2). */
static node *mac_term(parser *p, int f1, int f2, const char *after)
{
	enum op op = parse_op(p);
	if (op != OP_EQ && op != OP_NE)
		return ng_flt_fail(p, "MAC addresses compare with = or != only");
	char buf[64];
	unsigned m[6];
	char extra;
	if (p->t.kind != T_WORD ||
	    sscanf(tok_text(p, buf, sizeof buf),
	           "%2x%*[:-]%2x%*[:-]%2x%*[:-]%2x%*[:-]%2x%*[:-]%2x%c", &m[0], &m[1], &m[2], &m[3],
	           &m[4], &m[5], &extra) != 6 ||
	    strlen(buf) != 17)
		return ng_flt_fail(p, "expected a MAC address XX:XX:XX:XX:XX:XX after '%s'", after);
	ng_flt_next(p);
	node *n = leaf(p, N_MAC, f1, f2);
	if (!n)
		return NULL;
	for (int i = 0; i < 6; i++)
		n->mac[i] = (uint8_t)m[i];
	return op == OP_EQ ? n : ng_flt_not(p, n);
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
			return ng_flt_fail(p, "strings compare with =, != or ~ (contains) only");
		ng_flt_next(p);
	}
	if (p->t.kind != T_WORD)
		return ng_flt_fail(p,
		                   p->t.kind == T_BADQUOTE ? "unterminated quote"
		                                           : "expected a name after '%s'",
		                   after);
	node *n = leaf(p, N_STR, f1, f2);
	if (!n)
		return NULL;
	n->substr = substr;
	n->slot = p->nstr++;
	n->str = malloc(p->t.len + 1);
	if (!n->str) {
		ng_flt_free(n);
		return ng_flt_fail(p, "out of memory");
	}
	for (size_t i = 0; i < p->t.len; i++)
		n->str[i] = (char)tolower((unsigned char)p->text[p->t.pos + i]);
	n->str[p->t.len] = 0;
	ng_flt_next(p);
	return neg ? ng_flt_not(p, n) : n;
}

/* A field of the table by name: FIELD [op] VALUE (f2: the other side). */
static node *field_term(parser *p, const ng_field *f, int f2)
{
	char name[64];
	snprintf(name, sizeof name, "%s", f->short_name ? f->short_name : f->name);
	switch (f->type) {
	case NG_FT_ADDR:
		if (f2 >= 0)
			return ng_flt_fail(p, "expected 'src' or 'dst' before '%s'", name);
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

/* ---- the terms after src / dst ------------------------------------------ */

/*
 * A term on one side of the flow: "src port 80", "dst net 10.0.0.0/8".
 * Without src or dst (a word of this table standing alone) the term is
 * on either side: "port 80" is src port 80 or dst port 80.  A row: the
 * keyword, its handler, the source and the destination field, and for
 * numbers what the value is called in errors and its largest value.
 * The handler gets the fields to test (f1, and f2 >= 0 for either side)
 * and the words the errors say the value comes after ("src net").
 */
typedef struct side_kw side_kw;
struct side_kw {
	const char *word;
	node *(*parse)(parser *p, const side_kw *k, int f1, int f2, const char *after);
	int src, dst;
	const char *what; /* numbers: "a port number" */
	uint64_t max;     /* numbers: the largest */
	const char *doc;  /* for the reader */
};

/* An address (a network when `prefix`) or "in [LIST]" of addresses and
 * networks, on f1 (and f2). */
static node *addr_or_list(parser *p, int f1, int f2, bool prefix, const char *after)
{
	if (is_kw(p, "in")) {
		ng_flt_next(p);
		return addr_list(p, f1, f2);
	}
	return addr_term(p, f1, f2, prefix, after);
}

/* host|ip ADDR | in [LIST] */
static node *side_host(parser *p, const side_kw *k, int f1, int f2, const char *after)
{
	(void)k;
	return addr_or_list(p, f1, f2, false, after);
}

/* net ADDR/LEN | A.B.C.D MASK | in [LIST] */
static node *side_net(parser *p, const side_kw *k, int f1, int f2, const char *after)
{
	(void)k;
	return addr_or_list(p, f1, f2, true, after);
}

/* [op] N or in [LIST]; the errors name the keyword alone ("after
 * 'port'", whichever side). */
static node *side_number(parser *p, const side_kw *k, int f1, int f2, const char *after)
{
	(void)after;
	return number_term(p, f1, f2, k->what, k->word, k->max);
}

/* [=|!=] XX:XX:XX:XX:XX:XX. */
static node *side_mac(parser *p, const side_kw *k, int f1, int f2, const char *after)
{
	(void)k;
	return mac_term(p, f1, f2, after);
}

/* The words of one side's terms (after src or dst, or alone for either
 * side); to add one, add a row and, for a new kind of value, a handler. */
static const side_kw side_terms[] = {
    {"host", side_host, NG_F_SRC_ADDR, NG_F_DST_ADDR, NULL, 0, "host ADDR | host in [LIST]"},
    {"ip", side_host, NG_F_SRC_ADDR, NG_F_DST_ADDR, NULL, 0, "ip: as host"},
    {"net", side_net, NG_F_SRC_ADDR, NG_F_DST_ADDR, NULL, 0,
     "net ADDR/LEN | A.B.C.D MASK | in [LIST]"},
    {"port", side_number, NG_F_SRC_PORT, NG_F_DST_PORT, "a port number", 65535,
     "port [op] N | port in [LIST]"},
    {"as", side_number, NG_F_SRC_AS, NG_F_DST_AS, "an AS number", UINT32_MAX,
     "as [op] N | as in [LIST]: the BGP AS"},
    {"mask", side_number, NG_F_SRC_MASK, NG_F_DST_MASK, "a prefix length", 128,
     "mask [op] N: the routing prefix length"},
    {"vlan", side_number, NG_F_SRC_VLAN, NG_F_DST_VLAN, "a VLAN ID", 4095, "vlan [op] N"},
    {"mac", side_mac, NG_F_SRC_MAC, NG_F_DST_MAC, NULL, 0, "mac [=|!=] XX:XX:XX:XX:XX:XX"},
};

/* The row of side_terms for the current token, or NULL. */
static const side_kw *side_kw_at(const parser *p)
{
	for (size_t i = 0; i < sizeof side_terms / sizeof side_terms[0]; i++)
		if (is_kw(p, side_terms[i].word))
			return &side_terms[i];
	return NULL;
}

/* A side_terms term or, after src/dst, a paired field ("src country
 * JP"): `dir` 1 src, 2 dst, 0 either side (called only at a word of
 * side_terms). */
static node *side_term(parser *p, int dir)
{
	const side_kw *k = side_kw_at(p);
	if (k) {
		char after[32];
		snprintf(after, sizeof after, "%s%s",
		         dir == 1   ? "src "
		         : dir == 2 ? "dst "
		                    : "",
		         k->word);
		ng_flt_next(p);
		return k->parse(p, k, dir == 2 ? k->dst : k->src, dir ? -1 : k->dst, after);
	}
	if (dir) {
		/* enrichment and other paired fields: src country JP */
		const ng_field *f = side_field(p, dir);
		if (f) {
			ng_flt_next(p);
			return field_term(p, f, -1);
		}
	}
	char words[128] = "";
	for (size_t i = 0; i < sizeof side_terms / sizeof side_terms[0]; i++)
		snprintf(words + strlen(words), sizeof words - strlen(words), "%s%s", i ? ", " : "",
		         side_terms[i].word);
	return ng_flt_fail(p, "expected %s or a field name after '%s'", words,
	                   dir == 1 ? "src" : "dst");
}

/* ---- the terms by keyword ----------------------------------------------- */

/*
 * A row of the keyword table: the spellings of the keyword (ASCII
 * case-insensitive; the first is the one errors name), the handler that
 * parses what follows it (the keyword already read), an argument the
 * handler reads in k->arg, and what the term is, for the reader.
 */
typedef struct term_kw term_kw;
struct term_kw {
	const char *words[3]; /* NULL-terminated */
	node *(*parse)(parser *p, const term_kw *k);
	int arg;
	const char *doc;
};

/* any */
static node *kw_any(parser *p, const term_kw *k)
{
	(void)k;
	return ng_flt_node(p, N_TRUE);
}

/* inet / inet6: whether the source address is IPv4-mapped (arg 4, else
 * not: 6). */
static node *kw_family(parser *p, const term_kw *k)
{
	static const uint8_t mapped[16] = {[10] = 0xff, [11] = 0xff};
	node *n = net_node(p, NG_F_SRC_ADDR, -1, mapped, 96);
	return k->arg == 6 ? ng_flt_not(p, n) : n;
}

/* proto [op] NAME|N */
static node *kw_proto(parser *p, const term_kw *k)
{
	(void)k;
	return proto_term(p);
}

/* src TERM (arg 1), dst TERM (arg 2) */
static node *kw_side(parser *p, const term_kw *k)
{
	return side_term(p, k->arg);
}

/* in|out (arg 1|0) if N; "in src mac" and "in mac" (nfdump's words for
 * the MAC of either direction) are the MAC terms; "in bytes" / "in
 * packets" the counters, "out bytes" an error (not stored). */
static node *kw_in_out(parser *p, const term_kw *k)
{
	bool in = k->arg;
	char buf[64];
	if (is_kw(p, "src") || is_kw(p, "dst")) /* nfdump's "in src mac" */
		return ng_flt_term(p);
	if (is_kw(p, "mac"))
		return side_term(p, 0);
	if (is_kw(p, "bytes") || is_kw(p, "packets")) {
		if (!in)
			return ng_flt_fail(p,
			                   "reverse-direction counters ('out %s') are not stored",
			                   tok_text(p, buf, sizeof buf));
		return ng_flt_term(p); /* the counter's own row */
	}
	if (!is_kw(p, "if"))
		return ng_flt_fail(p, "expected 'if' after '%s'", in ? "in" : "out");
	ng_flt_next(p);
	return number_term(p, in ? NG_F_IN_IF : NG_F_OUT_IF, -1, "an interface index",
	                   in ? "in if" : "out if", UINT32_MAX);
}

/* if N: the input or the output interface */
static node *kw_if(parser *p, const term_kw *k)
{
	(void)k;
	return number_term(p, NG_F_IN_IF, NG_F_OUT_IF, "an interface index", "if", UINT32_MAX);
}

/* next ip|hop [=|!=] ADDR[/LEN] (arg 1); prev as / next as: the adjacent
 * ASes nagare does not store, an error that says so. */
static node *kw_hop(parser *p, const term_kw *k)
{
	bool nxt = k->arg;
	if (nxt && (is_kw(p, "ip") || is_kw(p, "hop"))) {
		ng_flt_next(p);
		return addr_op_term(p, NG_F_NEXT_HOP, true, "next ip");
	}
	if (is_kw(p, "as"))
		return ng_flt_fail(p,
		                   "the %s adjacent AS is not stored by nagare (use src as / dst "
		                   "as)",
		                   nxt ? "next" : "previous");
	return ng_flt_fail(p, nxt ? "expected 'ip' or 'as' after 'next'"
	                          : "expected 'as' after 'prev'");
}

/* router ip [=|!=] ADDR: the exporter */
static node *kw_router(parser *p, const term_kw *k)
{
	(void)k;
	if (!is_kw(p, "ip"))
		return ng_flt_fail(p, "expected 'ip' after 'router'");
	ng_flt_next(p);
	return addr_op_term(p, NG_F_EXPORTER, false, "router ip");
}

/* exporter [=|!=] ADDR | exporter in [LIST] */
static node *kw_exporter(parser *p, const term_kw *k)
{
	(void)k;
	return addr_op_term(p, NG_F_EXPORTER, false, "exporter");
}

/* flows [op] N: one stored record is one flow (nfdump: "set to 1 unless
 * the exporter sends" a count, which nagare does not store), so the term
 * is true or false for every row.  It is parsed as a number term on
 * bytes, which is then dropped (bytes stays among the columns the parse
 * noted, read for nothing). */
static node *kw_flows(parser *p, const term_kw *k)
{
	(void)k;
	node *c = number_term(p, NG_F_BYTES, -1, "a number (optionally with k, M or G)", "flows",
	                      UINT64_MAX);
	if (!c)
		return NULL;
	bool yes;
	if (c->kind == N_SET)
		yes = bsearch(&(uint64_t){1}, c->vals, c->nvals, sizeof *c->vals, cmp_u64);
	else
		yes = cmp(c->op, 1, c->val);
	ng_flt_free(c);
	return ng_flt_node(p, yes ? N_TRUE : N_FALSE);
}

/* bytes|packets [op] N[kMG] | in [LIST]: the counter field k->arg */
static node *kw_counter(parser *p, const term_kw *k)
{
	return number_term(p, k->arg, -1, "a number (optionally with k, M or G)", k->words[0],
	                   UINT64_MAX);
}

/* duration|pps|bps|bpp [op] N: the value k->arg (enum calc) computed from
 * flow_start, flow_end, bytes and packets; no lists. */
static node *kw_calc(parser *p, const term_kw *k)
{
	const char *w = k->words[0];
	node *n = number_term(p, NG_F_FLOW_START, -1,
	                      k->arg == C_DURATION ? "a duration in ms"
	                                           : "a number (optionally with k, M or G)",
	                      w, UINT64_MAX);
	if (!n)
		return NULL;
	if (n->kind == N_SET) {
		ng_flt_free(n);
		return ng_flt_fail(p, "'%s in [...]' is not supported", w);
	}
	n->kind = N_CALC;
	n->calc = (enum calc)k->arg;
	p->columns = ng_colset_union(p->columns, node_columns(n));
	return n;
}

/* flags FSRPAUEC: every given TCP flag set (nfdump); X: FSRPAU; or the
 * flag bits as a number. */
static node *kw_flags(parser *p, const term_kw *k)
{
	(void)k;
	static const char letters[] = "FSRPAUEC";
	char buf[32];
	uint64_t v = 0;
	if (parse_number(p, &v) && v <= 255) {
		ng_flt_next(p);
		return cmp_node(p, NG_F_TCP_FLAGS, -1, OP_ALL, v);
	}
	if (p->t.kind != T_WORD || p->t.len > 8)
		return ng_flt_fail(
		    p, "expected TCP flags (some of FSRPAUEC, or X for all) after 'flags'");
	tok_text(p, buf, sizeof buf);
	v = 0;
	for (const char *c = buf; *c; c++) {
		const char *at = strchr(letters, toupper((unsigned char)*c));
		if (toupper((unsigned char)*c) == 'X')
			v |= 0x3f;
		else if (at && *c)
			v |= UINT64_C(1) << (at - letters);
		else
			return ng_flt_fail(
			    p,
			    "expected TCP flags (some of FSRPAUEC, or X for all) after "
			    "'flags', not '%c'",
			    *c);
	}
	ng_flt_next(p);
	return cmp_node(p, NG_F_TCP_FLAGS, -1, OP_ALL, v);
}

/* dscp [op] N: the upper 6 bits of tos; no lists. */
static node *kw_dscp(parser *p, const term_kw *k)
{
	(void)k;
	node *n = number_term(p, NG_F_TOS, -1, "a DSCP value", "dscp", 63);
	if (n && n->kind == N_CMP)
		n->shift = 2;
	else if (n && n->kind == N_SET) {
		ng_flt_free(n);
		return ng_flt_fail(p, "'dscp in [...]' is not supported");
	}
	return n;
}

/* icmp-type|icmp-code [op] N (the field k->arg): implies proto icmp or
 * icmp6 (nfdump). */
static node *kw_icmp(parser *p, const term_kw *k)
{
	node *c =
	    number_term(p, k->arg, -1, k->arg == NG_F_ICMP_TYPE ? "an ICMP type" : "an ICMP code",
	                k->words[0], 255);
	if (!c)
		return NULL;
	node *icmp = ng_flt_binary(p, N_OR, cmp_node(p, NG_F_PROTOCOL, -1, OP_EQ, 1),
	                           cmp_node(p, NG_F_PROTOCOL, -1, OP_EQ, 58));
	return ng_flt_binary(p, N_AND, icmp, c);
}

/* mpls label [op] N: the top label (label1 is nfdump's name for it);
 * mpls labelK [op] N, K 2..10: label K of the stack from the top
 * (mpls_label2 .. mpls_label10, consecutive field ids) */
static node *kw_mpls(parser *p, const term_kw *k)
{
	(void)k;
	static const char *const below[] = {"label2", "label3", "label4", "label5", "label6",
	                                    "label7", "label8", "label9", "label10"};
	int id = is_kw(p, "label") || is_kw(p, "label1") ? NG_F_MPLS_LABEL : -1;
	for (int i = 0; id < 0 && i < 9; i++)
		if (is_kw(p, below[i]))
			id = NG_F_MPLS_LABEL2 + i;
	if (id < 0)
		return ng_flt_fail(p, "expected 'label' or 'label1' .. 'label10' after 'mpls'");
	ng_flt_next(p);
	return number_term(p, id, -1, "an MPLS label", "mpls label", 0xfffff);
}

/* flowdir ingress|egress|0|1 */
static node *kw_flowdir(parser *p, const term_kw *k)
{
	(void)k;
	int v = is_kw(p, "ingress") || is_kw(p, "0")  ? 0
	        : is_kw(p, "egress") || is_kw(p, "1") ? 1
	                                              : -1;
	if (v < 0)
		return ng_flt_fail(p, "expected ingress, egress, 0 or 1 after 'flowdir'");
	ng_flt_next(p);
	return cmp_node(p, NG_F_DIRECTION, -1, OP_EQ, (uint64_t)v);
}

/* The names of the anomalies bits (NG_ANOMALY_*, core/flow.h;
 * docs/fields.md "anomalies"), as `anomaly NAME` takes them. */
static const struct {
	const char *name;
	uint16_t bit;
} anomaly_names[] = {
    {"time", NG_ANOMALY_TIME},
    {"sampling", NG_ANOMALY_SAMPLING},
    {"counters", NG_ANOMALY_COUNTERS},
    {"export_time", NG_ANOMALY_EXPORT_TIME},
};

/* anomaly NAME|any|N: what the collector flagged in the record's
 * anomalies field: NAME, that bit (anomaly_names); any, some flag; N,
 * every bit of N set. */
static node *kw_anomaly(parser *p, const term_kw *k)
{
	(void)k;
	uint64_t v = 0;
	for (size_t i = 0; i < sizeof anomaly_names / sizeof anomaly_names[0] && !v; i++)
		if (is_kw(p, anomaly_names[i].name))
			v = anomaly_names[i].bit;
	if (!v && is_kw(p, "any")) {
		ng_flt_next(p);
		return cmp_node(p, NG_F_ANOMALIES, -1, OP_NE, 0);
	}
	if (!v && (!parse_number(p, &v) || v < 1 || v > 0xffff))
		return ng_flt_fail(p, "expected time, sampling, counters, export_time, any or flag "
		                      "bits 1 to 65535 after 'anomaly'");
	ng_flt_next(p);
	return cmp_node(p, NG_F_ANOMALIES, -1, OP_ALL, v);
}

/* Every term that starts with a keyword; to add one, add a row and its
 * handler (and the term to filter.h's grammar and docs/query.md).  The
 * words of side_terms and the field names are looked up after these. */
static const term_kw terms[] = {
    {{"any"}, kw_any, 0, "every flow"},
    {{"inet", "ipv4"}, kw_family, 4, "IPv4 flows"},
    {{"inet6", "ipv6"}, kw_family, 6, "IPv6 flows"},
    {{"proto"}, kw_proto, 0, "proto [op] tcp|udp|…|N: the IP protocol"},
    {{"src"}, kw_side, 1, "src TERM: a side_terms term or a field on the source side"},
    {{"dst"}, kw_side, 2, "dst TERM: the same on the destination side"},
    {{"in"}, kw_in_out, 1, "in if N, in [src|dst] mac …, in bytes|packets …"},
    {{"out"}, kw_in_out, 0, "out if N"},
    {{"if"}, kw_if, 0, "if N: the input or the output interface"},
    {{"prev"}, kw_hop, 0, "prev as: not stored (an error)"},
    {{"next"}, kw_hop, 1, "next ip|hop ADDR: the next hop; next as: not stored"},
    {{"router"}, kw_router, 0, "router ip ADDR: the exporter"},
    {{"exporter"}, kw_exporter, 0, "exporter ADDR: the exporter"},
    {{"flows", "flow"}, kw_flows, 0, "flows [op] N: a record is one flow"},
    {{"bytes"}, kw_counter, NG_F_BYTES, "bytes [op] N[kMG]"},
    {{"packets"}, kw_counter, NG_F_PACKETS, "packets [op] N[kMG]"},
    {{"duration"}, kw_calc, C_DURATION, "duration [op] MS"},
    {{"pps"}, kw_calc, C_PPS, "pps [op] N: packets per second"},
    {{"bps"}, kw_calc, C_BPS, "bps [op] N: bits per second"},
    {{"bpp"}, kw_calc, C_BPP, "bpp [op] N: bytes per packet"},
    {{"flags"}, kw_flags, 0, "flags FSRPAUECX | N: all these TCP flags set"},
    {{"dscp"}, kw_dscp, 0, "dscp [op] N: tos >> 2"},
    {{"icmp-type"}, kw_icmp, NG_F_ICMP_TYPE, "icmp-type [op] N, ICMP or ICMPv6"},
    {{"icmp-code"}, kw_icmp, NG_F_ICMP_CODE, "icmp-code [op] N, ICMP or ICMPv6"},
    {{"mpls"}, kw_mpls, 0, "mpls label N: the top MPLS label; mpls label2 N .. label10 N below it"},
    {{"flowdir"}, kw_flowdir, 0, "flowdir ingress|egress|0|1"},
    {{"anomaly"},
     kw_anomaly,
     0,
     "anomaly time|sampling|counters|export_time|any|N: flagged by the collector"},
};

/* The row of terms whose keyword is the current token, or NULL. */
static const term_kw *term_kw_at(const parser *p)
{
	for (size_t i = 0; i < sizeof terms / sizeof terms[0]; i++)
		for (const char *const *w = terms[i].words; *w; w++)
			if (is_kw(p, *w))
				return &terms[i];
	return NULL;
}

const char *ng_filter_keyword(size_t i, const char **doc, bool *sided)
{
	for (size_t r = 0; r < sizeof terms / sizeof terms[0]; r++)
		for (const char *const *w = terms[r].words; *w; w++)
			if (i-- == 0) {
				if (doc)
					*doc = terms[r].doc;
				if (sided)
					*sided = false;
				return *w;
			}
	if (i < sizeof side_terms / sizeof side_terms[0]) {
		if (doc)
			*doc = side_terms[i].doc;
		if (sided)
			*sided = true;
		return side_terms[i].word;
	}
	return NULL;
}

/* FIELD [op] VALUE for a field of core/field.c by name or short name
 * ('-' read as '_'), or a paired field named without src/dst, on either
 * side ("country JP"); else the keyword is unknown. */
static node *named_field_term(parser *p)
{
	char buf[64];
	tok_text(p, buf, sizeof buf);
	for (char *x = buf; *x; x++)
		if (*x == '-')
			*x = '_';
	const ng_field *f = ng_field_by_name(buf);
	if (f) {
		ng_flt_next(p);
		return field_term(p, f, -1);
	}
	/* a paired field without src/dst: either side (country JP) */
	const ng_field *fs = side_field(p, 1), *fd = side_field(p, 2);
	if (fs && fd && fs->type == fd->type && fs->type != NG_FT_ADDR) {
		ng_flt_next(p);
		return field_term(p, fs, fd->id);
	}
	return ng_flt_fail(p, "unknown filter keyword '%s'", tok_text(p, buf, sizeof buf));
}

/* A term at the current token: a keyword of terms, a word of side_terms
 * (either side), or a field's name (see the essay). */
node *ng_flt_term(parser *p)
{
	char buf[64];
	if (p->t.kind == T_END)
		return ng_flt_fail(
		    p, "expected a filter term (e.g. 'proto tcp', 'host 192.0.2.1') at the "
		       "end of the filter");
	if (p->t.kind == T_BADQUOTE)
		return ng_flt_fail(p, "unterminated quote");
	if (p->t.kind != T_WORD || is_kw(p, "and") || is_kw(p, "or"))
		return ng_flt_fail(p, "expected a filter term, not '%s'",
		                   tok_text(p, buf, sizeof buf));
	const term_kw *k = term_kw_at(p);
	if (k) {
		ng_flt_next(p);
		return k->parse(p, k);
	}
	if (side_kw_at(p)) /* host, port, … without src/dst */
		return side_term(p, 0);
	return named_field_term(p);
}
