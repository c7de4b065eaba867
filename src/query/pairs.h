/*
 * pairs.h — two-field aggregations: Sankey edges (source X → destination
 * Y, top N plus "other") and bidirectional conversations (A ↔ B as one
 * row with each direction's totals, like nfdump -B).
 */
#ifndef NG_PAIRS_H
#define NG_PAIRS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "query/query.h"

typedef struct ng_pairs {
	ng_query_result res; /* rows: the top edges, best first; totals, scan */
	ng_agg_row other;    /* every other edge together (key all zero) */
	bool has_other;      /* other.flows > 0 */
} ng_pairs;

/*
 * Sankey edges: q must have exactly two keys, neither an either-side key
 * (so each flow is one edge and the edges add up to the totals).  The top
 * q->limit edges by q->order, and "other" = totals − the top edges'
 * sums (first/last: the whole result's).  Returns 0, or -1 with a
 * message in err[errlen].
 */
int ng_pairs_run(const char *dir, const ng_query *q, ng_pairs *out, char *err, size_t errlen);

struct ng_backend;
/* ng_pairs_run on either backend (query/backend.h): the store at
 * be->store, or ClickHouse, where the one top-N and its totals are
 * statements of query_sql.h and "other" is computed here the same way.
 * Returns as ng_pairs_run. */
int ng_pairs_run_on(const struct ng_backend *be, const ng_query *q, ng_pairs *out, char *err,
                    size_t errlen);

void ng_pairs_free(ng_pairs *p);

/* Parses "SRC_FIELD,DST_FIELD" (any two keys of ng_query_parse_keys that
 * are single fields) into q->keys.  Returns 0, or -1 with a message. */
int ng_pairs_parse(ng_query *q, const char *spec, char *err, size_t errlen);

/* One conversation: key in the A→B orientation (A the client: the side
 * with the higher port when the key has both ports, else the side that
 * sent more flows), totals of each direction. */
typedef struct ng_bidir_row {
	uint8_t key[NG_QUERY_KEY_MAX];
	ng_agg_row ab, ba; /* key bytes unused; flows, packets, bytes, first, last */
} ng_bidir_row;

typedef struct ng_bidir {
	ng_bidir_row *rows; /* best first by q->order over both directions */
	size_t nrows;
	uint64_t conversations; /* distinct conversations */
	ng_query_result res;    /* totals and scan statistics (rows: none) */
} ng_bidir;

/*
 * Bidirectional conversations over q->keys (default when q->nkeys == 0:
 * proto, srcip, srcport, dstip, dstport, as nfdump -b/-B).  A key's src_X
 * and dst_X fields (in_if/out_if: the pairs of ng_field_partner,
 * core/field.h) are swapped to form the mirror key; fields without a
 * partner in the key stay.  q->limit keeps the best N (0: all).
 */
int ng_bidir_run(const char *dir, const ng_query *q, ng_bidir *out, char *err, size_t errlen);

/* ng_bidir_run on either backend (query/backend.h): every group of the
 * one-sided keys is fetched (from ClickHouse: the group-by statement
 * without a limit) and paired with its mirror here.  Returns as
 * ng_bidir_run. */
int ng_bidir_run_on(const struct ng_backend *be, const ng_query *q, ng_bidir *out, char *err,
                    size_t errlen);

void ng_bidir_free(ng_bidir *b);

/* The query with the default conversation keys when q has none (what
 * ng_bidir_run aggregates over; for printing its rows). */
void ng_bidir_keys(const ng_query *q, ng_query *with_keys);

/* The metric o over both directions of a conversation. */
double ng_bidir_metric(const ng_bidir_row *r, enum ng_order o);

#endif
