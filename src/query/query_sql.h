/*
 * query_sql.h — the query model (query/query.h) compiled to ClickHouse
 * statements over nagare's schema (clickhouse/schema.h, docs/clickhouse.md):
 * the statements of the ClickHouse backend (query/backend.h), issue 17
 * part 3.
 *
 * A group-by (any keys the model has: integers, times and time buckets,
 * addresses whole or cut to a prefix, MACs, strings, one either key) is
 *
 *   SELECT <key 0> AS k0_[, …], min(flow_start) AS s_, max(flow_end) AS e_,
 *          count() AS f_, sum(packets) AS p_, sum(bytes) AS b_
 *   FROM DB.flows WHERE <time range> AND <filter>
 *   GROUP BY k0_[, …]
 *   ORDER BY <the order's metric> DESC, <key 0's tie order> ASC[, …]
 *   [LIMIT N] FORMAT RowBinary
 *
 * and gives the embedded engine's rows in its order (query.h: the metric
 * descending, ties by the key bytes ascending):
 *
 *   - the rates (pps, bps, bpp) are computed in Float64 with the engine's
 *     operations in its order (query_int.h ng_vals_metric), so they are
 *     the same doubles and rank the same;
 *   - an integer or time key is held in the engine's key in host order
 *     (little-endian here), so its tie order is that of its bytes:
 *     reinterpretAsString(k) (the little-endian bytes, trailing zeros
 *     cut, which orders as the zero-padded bytes do);
 *   - an address key is its 16 bytes (FixedString order is memcmp's);
 *     with a prefix it is selected as two UInt64 halves, big-endian,
 *     masked by the IPv4 or the IPv6 length as the row is IPv4-mapped or
 *     not (groupby.c key_xform), ordered by the halves;
 *   - a string key's ties are ordered by its bytes; the engine orders
 *     them by its interned ids, which depend on the order it met the
 *     strings in (docs/clickhouse.md says so): equal metrics of string
 *     groups may be listed in another order.
 *
 * An either key ("ip", "port", "as" …) is arrayJoin([src, dst]): each flow
 * counted under both sides, as the engine does.  The totals (each flow
 * once) and the number of groups are statements of their own, or with a
 * limit and without an either key part of the same one
 * (ng_query_sql_one); without a limit the groups are the rows.  A listing
 * selects every field in the field table's order by flow_start (flows of
 * one millisecond: the engine keeps their arrival order, ClickHouse has
 * none; they are ordered by their other columns here).
 *
 * A key prefix (q->key_prefix, the completion of filter values) is, for
 * a first key that is an integer or a string, a HAVING clause on the
 * key's text (ng_query_sql_prefix_in_sql); for the other kinds (whose
 * text, an address's, a MAC's or a time's, is nagare's own format) the
 * group-by statement fetches every group, without its limit, and the
 * executor keeps those whose text (ng_format_key) starts with it, as the
 * engine does (top.c), counts them and cuts them to the limit.
 *
 * Every value a user gave (the filter's, the time range, prefix lengths,
 * buckets, the limit, a key prefix) is written by the quoting functions of
 * clickhouse/sql.h; column names come from the field table.
 */
#ifndef NG_QUERY_SQL_H
#define NG_QUERY_SQL_H

#include <stddef.h>

#include "clickhouse/sql.h"
#include "query/query.h"

/*
 * Appends the group-by statement of q (q->nkeys ≥ 1) over database.flows
 * to *out.  `database` must be [A-Za-z0-9_]+ (ng_ch_database).  The
 * statement does not fold (q->fold, q->folds): the executor folds the
 * rows (ch_exec.c), nor check a key prefix that
 * ng_query_sql_prefix_in_sql leaves to the executor.  Returns 0, or -1
 * with a sentence in err[errlen]: the filter's errors (ng_filter_sql), a statement past
 * NG_CH_SQL_MAX, out of memory.
 */
int ng_query_sql_groups(const char *database, const ng_query *q, const ng_ch_server *sv,
                        ng_ch_sql *out, char *err, size_t errlen);

/* True when q has a key prefix (q->key_prefix not NULL nor "") that the
 * group-by and group-count statements filter themselves: q's first key
 * is an integer field (not sampling_source, which is written as a name)
 * or a string field, without a time bucket.  False without a prefix or
 * when the executor must check it (the statements then fetch and count
 * every group). */
bool ng_query_sql_prefix_in_sql(const ng_query *q);

/* True when q's answer is one statement (ng_query_sql_one): a group-by
 * with a limit, without an either key (its arrayJoin counts a flow
 * twice: the totals would), a key prefix (the totals are of every
 * matching flow, not of the groups HAVING keeps), a fold, or a rollup
 * to read (its times are its buckets': the totals' first and last are
 * the flows'). */
bool ng_query_sql_one_statement(const ng_query *q, const ng_ch_server *sv);

/* Appends the group-by statement of ng_query_sql_groups, for a q that
 * ng_query_sql_one_statement takes, as one statement that also gives the
 * totals and the number of groups (the three statements' scans in one):
 *
 *   WITH <key 0> AS k0_[, …]
 *   SELECT <key 0's output>[, …], s_, e_, f_, p_, b_ FROM … WHERE …
 *   GROUP BY k0_[, …] WITH TOTALS ORDER BY … LIMIT N FORMAT JSONCompact
 *
 * Its answer (ClickHouse docs, "Formats", JSONCompact; the same in
 * 18.16): "data", an array of rows, each an array of the output columns;
 * "totals", one such row whose aggregates are those of every group (the
 * totals statement's: each flow once, no either key); and
 * "rows_before_limit_at_least", the rows the sort had before the LIMIT
 * (every group: the sort reads them all).  A key's output column is an
 * integer's or time's value (UInt64 a quoted decimal, narrower ones a JSON
 * number), a prefix's two halves as UInt64, an address's 16 bytes, a
 * MAC's 6 and a string's bytes as upper-case hex (raw bytes are not
 * always UTF-8, which JSON must be).  Returns as ng_query_sql_groups;
 * -1 too for a q that ng_query_sql_one_statement refuses. */
int ng_query_sql_one(const char *database, const ng_query *q, const ng_ch_server *sv,
                     ng_ch_sql *out, char *err, size_t errlen);

/* Appends the statement of the number of q's groups (one UInt64, in
 * RowBinary).  Returns as ng_query_sql_groups. */
int ng_query_sql_ngroups(const char *database, const ng_query *q, const ng_ch_server *sv,
                         ng_ch_sql *out, char *err, size_t errlen);

/* Appends the statement of q's totals: count(), sum(packets), sum(bytes),
 * min(flow_start), max(flow_end) of the matching flows, each once (five
 * UInt64, in RowBinary).  Returns as ng_query_sql_groups. */
int ng_query_sql_totals(const char *database, const ng_query *q, const ng_ch_server *sv,
                        ng_ch_sql *out, char *err, size_t errlen);

/* Appends the listing statement of q (q->nkeys == 0): every field of the
 * field table, in its order, of the first q->limit matching flows by
 * flow_start (0: all), in RowBinary.  Returns as ng_query_sql_groups. */
int ng_query_sql_list(const char *database, const ng_query *q, const ng_ch_server *sv,
                      ng_ch_sql *out, char *err, size_t errlen);

#endif
