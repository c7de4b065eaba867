/*
 * sankey.h — a Sankey of two or three stages (e.g. srcas → exporter →
 * dstas): the top N values of each stage's field, every other value of
 * that field folded into the stage's "other" node, and the links between
 * consecutive stages, in one call.
 */
#ifndef NG_SANKEY_H
#define NG_SANKEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "query/query.h"

#define NG_SANKEY_MAX_STAGES 3
#define NG_SANKEY_MAX_N 50 /* top values a stage: (N + 1)^3 groups at most */

/* One node: a stage's value (key: that field's bytes), or its "other". */
typedef struct ng_sankey_node {
	uint8_t key[NG_QUERY_KEY_MAX / 4]; /* one field's value (≤ 16 bytes) */
	bool other;                        /* every value outside the top N */
	uint64_t flows, packets, bytes;
} ng_sankey_node;

/* One link between node `source` of stage `stage` and node `target` of
 * stage + 1 (indices into nodes[stage] and nodes[stage + 1]). */
typedef struct ng_sankey_link {
	size_t stage, source, target;
	uint64_t flows, packets, bytes;
} ng_sankey_link;

typedef struct ng_sankey {
	size_t nstages;
	ng_sankey_node *nodes[NG_SANKEY_MAX_STAGES]; /* best first, other last */
	size_t nnodes[NG_SANKEY_MAX_STAGES];
	ng_sankey_link *links; /* by stage, then best first by q->order */
	size_t nlinks;
	ng_query_result res; /* totals and scan statistics (rows: the folded groups) */
} ng_sankey;

/*
 * Parses "F1,F2[,F3]" (one-sided fields of ng_query_parse_keys, none of
 * more than 16 bytes, no time bucket; address prefixes as srcip4/24 allowed)
 * into q->keys.  Returns 0,
 * or -1 with a message in err[errlen].
 */
int ng_sankey_parse(ng_query *q, const char *spec, char *err, size_t errlen);

/*
 * The Sankey of q's 2 or 3 keys: per stage the top q->limit values (1 to
 * NG_SANKEY_MAX_N) by q->order (rates rank by their count: bps by bytes,
 * pps by packets) over the whole range, then one scan grouping the flows
 * by every stage's value with the others folded, so that each node's
 * in- and outflow are its flows' totals and every stage adds up to the
 * range's totals.  One snapshot for all runs.  Fills *out (free with
 * ng_sankey_free).  Returns 0, or -1 with a message (errno ETIMEDOUT
 * when q->deadline_ms passed).
 */
int ng_sankey_run(const char *dir, const ng_query *q, ng_sankey *out, char *err, size_t errlen);

struct ng_backend;
/* ng_sankey_run on either backend (query/backend.h): on ClickHouse the
 * stages' tops and the folded groups are statements of query_sql.h, the
 * folds applied by its executor (ch_exec.c: every group of the stages'
 * keys is fetched).  ClickHouse has no snapshot: rows inserted between
 * the runs may make a stage's sums differ from the totals.  Returns as
 * ng_sankey_run. */
int ng_sankey_run_on(const struct ng_backend *be, const ng_query *q, ng_sankey *out, char *err,
                     size_t errlen);

void ng_sankey_free(ng_sankey *s);

#endif
