/*
 * filter.h — nfdump-syntax flow filters: parse once, evaluate per batch.
 *
 * Grammar (keywords case-insensitive; see docs/query.md):
 *
 *   expr    := and { ("or" | "||") and }
 *   and     := unary { ("and" | "&&") unary }
 *   unary   := ("not" | "!") unary | "(" expr ")" | term
 *   term    := "any" | "inet" | "ipv4" | "inet6" | "ipv6"
 *            | "proto" [op] (NAME of /etc/protocols | N)
 *            | [src|dst] ("host" | "ip") (ADDR | "in" LIST)
 *            | [src|dst] "net" (ADDR/LEN | A.B.C.D MASK | "in" LIST)
 *            | [src|dst] ("port" | "as" | "mask" | "vlan") ([op] N | "in" LIST)
 *            | [in|out] [src|dst] "mac" [=|!=] XX:XX:XX:XX:XX:XX
 *            | ["in" | "out"] "if" N | "flags" FSRPAUECX | "tos" N | "dscp" N
 *            | ("bytes" | "packets" | "flows" | "duration" | "pps" | "bps"
 *               | "bpp") [op] N[k|M|G]
 *            | "exporter" | "router ip" | "next ip" [= | !=] ADDR
 *            | "mpls label" N | "icmp-type" N | "icmp-code" N
 *            | "flowdir" (ingress | egress | 0 | 1)
 *            | "anomaly" (NAME | "any" | N)     the collector's flags: time,
 *                                               sampling, counters, export_time
 *            | [src|dst] FIELD [op] VALUE   any field of src/core/field.c by
 *                                  name or short name ("src X": field src_X):
 *                                  integers compare, addresses take ADDR or
 *                                  ADDR/LEN, strings =, != or ~ WORD
 *   LIST    := "[" value { [","] value } "]"
 *   op      := "=" | "==" | "<" | ">" | "<=" | ">=" | "!=" | eq | lt | gt | le | ge | ne
 *
 * "#" to the end of a line is a comment; "quoted words" are one word.
 * "not flags X" means none of X set (nfdump); "flags X" all of X set.
 * Without src/dst, host/net/port/as match either side.  k/M/G multiply by
 * 1000 (nfdump's convention).
 *
 * Inside: filter_parse.c (the lexer, this grammar's not/and/or, errors),
 * filter_terms.c (the terms, a table of keywords), filter_eval.c (over a
 * column batch), filter_prune.c (over a zone map); filter_int.h holds
 * what they share.
 */
#ifndef NG_FILTER_H
#define NG_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/colset.h"
#include "core/flow.h"
#include "store/store.h"

typedef struct ng_filter ng_filter;

/*
 * Parses `text` (NUL-terminated).  An empty or blank text matches every
 * flow.  Returns NULL on a syntax error, with a message in err[errlen] of
 * the form
 *
 *   expected a port number after 'port'
 *     src port http
 *              ^
 *
 * and the 0-based byte offset of the fault in *err_col (when non-NULL).
 */
ng_filter *ng_filter_parse(const char *text, char *err, size_t errlen, size_t *err_col);

void ng_filter_free(ng_filter *f);

/*
 * Turns f to the other direction, in place: every term on a src_X field
 * tests dst_X instead and the reverse (in_if and out_if likewise; the
 * pairs of ng_field_partner, core/field.h), so "src as 15169 and in if
 * 3" becomes "dst as 15169 and out if 3"; either-side terms ("port 80")
 * and fields without a side stay.  For the reverse direction of a
 * bidirectional view (GET /api/v1/series?bidirectional=1).  Call it
 * before the filter is evaluated (not while a scan uses it).
 */
void ng_filter_reverse(ng_filter *f);

/* Columns the filter reads. */
ng_colset ng_filter_columns(const ng_filter *f);

/*
 * The words that start a filter term, for completion (the dashboards'
 * filter box, through GET /api/v1/fields): the i-th (0-based) of the
 * keyword table's spellings ("any", "proto", "src", …) then the words
 * that take a side ("host", "ip", "net", "port", "as", "mask", "vlan",
 * "mac"), straight from filter_terms.c's tables, so the list is the
 * parser's.  *doc (when non-NULL) gets the term's one-line syntax
 * ("proto [op] tcp|udp|…|N: the IP protocol"), *sided whether the word
 * is one of those taking src/dst before it.  Static strings; NULL past
 * the last word.
 */
const char *ng_filter_keyword(size_t i, const char **doc, bool *sided);

/* Of those, the columns a batch may give as dictionary codes
 * (ng_column_batch.codes): read only by terms on one column's value
 * (comparisons, sets, nets, hosts), which are then evaluated once per
 * distinct value and looked up per row. */
ng_colset ng_filter_code_columns(const ng_filter *f);

/*
 * Sets match[i] to 1 when row i of `b` passes, else 0, for i < b->n.  The
 * batch must hold every column of ng_filter_columns().  Uses scratch space
 * inside `f`: one filter must not be evaluated by two threads at once
 * (threads use ng_filter_eval_ctx).  Returns the number of matching rows,
 * or (size_t)-1 when out of memory.
 */
size_t ng_filter_eval(ng_filter *f, const ng_column_batch *b, uint8_t *match);

/*
 * Evaluation state of one thread: scratch vectors (a byte a row per tree
 * level) and the answers of string terms per string ID.  Any number of
 * threads may evaluate one filter at once, each with its own context,
 * made for that filter.  NULL when out of memory.
 */
typedef struct ng_filter_ctx ng_filter_ctx;
ng_filter_ctx *ng_filter_ctx_new(const ng_filter *f);
void ng_filter_ctx_free(ng_filter_ctx *c);

/* ng_filter_eval with the state in `c` (from ng_filter_ctx_new(f)). */
size_t ng_filter_eval_ctx(const ng_filter *f, ng_filter_ctx *c, const ng_column_batch *b,
                          uint8_t *match);

/*
 * False only when no row of a segment with zone map `z` can pass `f`
 * (the scan then skips it unread): integer comparisons and sets against
 * the columns' min/max where known, nets and address lists against the
 * IPv4 range of all-IPv4 address columns.  and/or/not are combined in
 * three values (may be true, may be false), so "not" is as exact as its
 * operand; MAC, string and computed terms (duration, pps, bps, bpp) may
 * be anything.  Reads only `f`'s tree: thread-safe.
 */
bool ng_filter_may_match(const ng_filter *f, const ng_zone_map *z);

/* Evaluates one record (tests, small inputs). */
bool ng_filter_match_flow(ng_filter *f, const ng_flow *r);

#endif
