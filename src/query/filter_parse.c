/*
 * filter_parse.c — the filter language's lexer and grammar: a text in, an
 * expression tree out (filter_int.h), or an error that points at a byte of
 * the text.  The terms the grammar's leaves stand for are filter_terms.c's.
 *
 * Tokens.  ng_flt_next() reads the token after the current one and
 * remembers the byte offset where it starts (pos), its length and where
 * the next one may begin (end):
 *
 *   word     letters, digits and . : / _ - +, so that 10.0.0.0/8,
 *            2001:db8::/32, 00:11:22:33:44:55, icmp-type and 10k are one
 *            word each; or "a quoted word" ('single' quotes too): pos is
 *            after the opening quote, end after the closing one, so
 *            "Google LLC" is one word of 10 bytes.  Any other character
 *            is a word of one byte, which no term accepts.
 *   ( ) [ ] ,    && || !    = == != < > <= >= ~ (T_OP, its enum op)
 *   end      the end of the text (pos = its length)
 *   badquote a quote with no closing one: "unterminated quote"
 *
 * Blanks separate tokens; '#' starts a comment that runs to the end of
 * the line (filters read from files).  Keywords are words compared
 * without regard to ASCII case (is_kw); none is reserved, and each term
 * reads the words it expects after it.
 *
 * Grammar.  Recursive descent, one function a rule, loosest first:
 *
 *   expr  := and { ("or" | "||") and }                         expr()
 *   and   := unary { ("and" | "&&") unary }                    and_expr()
 *   unary := ("not" | "!") unary | "(" expr ")" | term         unary()
 *   term  := see filter_terms.c (and filter.h for the list)
 *
 * so "not" binds tightest, then "and", then "or", and both binary
 * operators associate to the left: "not a and b or c" is
 * ((not a) and b) or c.  A filter is an expr followed by the end of the
 * text; the empty filter (blanks and comments only) matches every flow.
 * "not" over "flags X" is nfdump's "none of X set" rather than "not all
 * of X set" (unary()).  Parentheses and "not" may nest 200 deep, which
 * bounds the parser's recursion.  A chain of and/or is read by a loop,
 * but the tree it builds is as deep as the chain is long, and evaluation
 * recurses down it with a scratch vector for each level.
 *
 * Errors.  The first fault wins: ng_flt_fail() records it, and each rule
 * returns NULL, freeing what it built, until ng_filter_parse returns
 * NULL.  The column of an error is the offset (pos) of the current token
 * when the fault is seen, which is the token that could not be taken: the
 * word that is not a port number, the ')' with no '(', the quote that is
 * not closed, or the end of the text (its length) for a filter that
 * stops early.  Terms that look ahead step back to point at the word at
 * fault (a network before a non-contiguous mask).  The message quotes the
 * text — for a text of several lines only the line of the fault, with its
 * number — and a caret under the column:
 *
 *   expected a port number after 'port'
 *     src port http
 *              ^
 *
 * The messages are part of nagare's output (the CLI's stderr, the API's
 * error), checked by tests: a change to one is a change for users.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/filter_int.h"

/* ---- tokens ------------------------------------------------------------- */

/* True for the bytes of an unquoted word. */
static bool word_char(char c)
{
	return isalnum((unsigned char)c) || c == '.' || c == ':' || c == '/' || c == '_' ||
	       c == '-' || c == '+';
}

/* Reads the token that starts at or after p->t.end into p->t (see the
 * essay for the kinds); at the end of the text, T_END again and again. */
void ng_flt_next(parser *p)
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

/* ---- errors ------------------------------------------------------------- */

/* Records the first error, pointing at the current token: its offset in
 * p->err_col and, when the caller gave a buffer, the message with the line
 * of the text that holds it and a caret under the column.  Later errors
 * (raised as the descent unwinds) are ignored.  Returns NULL. */
node *ng_flt_fail(parser *p, const char *fmt, ...)
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

/* ---- the tree ----------------------------------------------------------- */

/* Frees n, its subtree and the arrays and string its leaves own. */
void ng_flt_free(node *n)
{
	if (!n)
		return;
	ng_flt_free(n->l);
	ng_flt_free(n->r);
	free(n->vals);
	free(n->addrs);
	free(n->nets);
	free(n->str);
	free(n);
}

/* A zeroed node of kind k with no fields (-1); NULL and the parse failed
 * ("out of memory") when calloc fails.  The caller owns it. */
node *ng_flt_node(parser *p, enum node_kind k)
{
	node *n = calloc(1, sizeof *n);
	if (!n)
		return ng_flt_fail(p, "out of memory");
	n->kind = k;
	n->f1 = n->f2 = -1;
	return n;
}

/* l and r under a new N_AND or N_OR node, which owns them; frees both
 * and returns NULL when either is NULL (an error below) or out of
 * memory. */
node *ng_flt_binary(parser *p, enum node_kind k, node *l, node *r)
{
	if (!l || !r) {
		ng_flt_free(l);
		ng_flt_free(r);
		return NULL;
	}
	node *n = ng_flt_node(p, k);
	if (!n) {
		ng_flt_free(l);
		ng_flt_free(r);
		return NULL;
	}
	n->l = l;
	n->r = r;
	return n;
}

/* c under a new N_NOT node; frees c and returns NULL when out of memory,
 * NULL for a NULL c. */
node *ng_flt_not(parser *p, node *c)
{
	if (!c)
		return NULL;
	node *n = ng_flt_node(p, N_NOT);
	if (!n) {
		ng_flt_free(c);
		return NULL;
	}
	n->l = c;
	return n;
}

/* ---- the grammar -------------------------------------------------------- */

static node *expr(parser *p, unsigned depth);

/* unary := ("not" | "!") unary | "(" expr ")" | term.  `depth` counts the
 * nots and parentheses around it. */
static node *unary(parser *p, unsigned depth)
{
	if (depth > 200)
		return ng_flt_fail(p, "filter nested too deeply");
	if (p->t.kind == T_NOT || is_kw(p, "not")) {
		ng_flt_next(p);
		node *c = unary(p, depth + 1);
		if (!c)
			return NULL;
		if (c->kind == N_CMP && c->f1 == NG_F_TCP_FLAGS && c->op == OP_ALL) {
			/* nfdump: "not flags AFRPU" is "none of them set", so that
			 * "flags S and not flags AFRPU" is a bare SYN (nfdump(1)) */
			c->op = OP_NONE;
			return c;
		}
		return ng_flt_not(p, c);
	}
	if (p->t.kind == T_LPAREN) {
		ng_flt_next(p);
		node *n = expr(p, depth + 1);
		if (!n)
			return NULL;
		if (p->t.kind != T_RPAREN) {
			ng_flt_free(n);
			return ng_flt_fail(p, "expected ')' to close the '('");
		}
		ng_flt_next(p);
		return n;
	}
	return ng_flt_term(p);
}

/* and := unary { ("and" | "&&") unary } */
static node *and_expr(parser *p, unsigned depth)
{
	node *l = unary(p, depth);
	while (l && (p->t.kind == T_AND || is_kw(p, "and"))) {
		ng_flt_next(p);
		l = ng_flt_binary(p, N_AND, l, unary(p, depth));
	}
	return l;
}

/* expr := and { ("or" | "||") and } */
static node *expr(parser *p, unsigned depth)
{
	node *l = and_expr(p, depth);
	while (l && (p->t.kind == T_OR || is_kw(p, "or"))) {
		ng_flt_next(p);
		l = ng_flt_binary(p, N_OR, l, and_expr(p, depth));
	}
	return l;
}

/* Levels of n's subtree (0 for none): the scratch vectors evaluation
 * needs. */
static unsigned tree_depth(const node *n)
{
	if (!n)
		return 0;
	unsigned a = tree_depth(n->l), b = tree_depth(n->r);
	return 1 + (a > b ? a : b);
}

/* ---- the filter --------------------------------------------------------- */

/* Parses text into a filter the caller frees with ng_filter_free, or
 * returns NULL with the message in err[errlen] and its column in
 * *err_col (filter.h). */
ng_filter *ng_filter_parse(const char *text, char *err, size_t errlen, size_t *err_col)
{
	parser p = {.text = text, .err = err, .errlen = errlen};
	ng_flt_next(&p);
	node *root;
	if (p.t.kind == T_END) {
		root = ng_flt_node(&p, N_TRUE);
	} else {
		root = expr(&p, 0);
		if (root && p.t.kind != T_END) {
			char buf[64];
			if (p.t.kind == T_RPAREN)
				ng_flt_fail(&p, "unexpected ')' with no '(' before it");
			else
				ng_flt_fail(
				    &p, "expected 'and', 'or' or the end of the filter, not '%s'",
				    tok_text(&p, buf, sizeof buf));
			ng_flt_free(root);
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
		ng_flt_free(root);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	f->root = root;
	f->columns = p.columns;
	f->depth = tree_depth(root);
	f->nstr = p.nstr;
	return f;
}

/* Frees f, its tree and ng_filter_eval's context; NULL is a no-op. */
void ng_filter_free(ng_filter *f)
{
	if (!f)
		return;
	ng_flt_free(f->root);
	ng_filter_ctx_free(f->own);
	free(f);
}

/* The columns the parse saw the filter's terms name. */
ng_colset ng_filter_columns(const ng_filter *f)
{
	return f->columns;
}
