/*
 * top_sql.h — a top-N statistic (`nagare query -s KEYS/ORDER -n N
 * FILTER`) as one ClickHouse statement over DB.flows: the second piece
 * of the ClickHouse backend (issue 17 part 3), for integer keys and the
 * orders flows, packets, bytes.
 *
 *   SELECT K1[, K2 …], min(flow_start), max(flow_end), count(),
 *          sum(packets), sum(bytes)
 *   FROM DB.flows WHERE <the filter, query/filter_sql.h>
 *   GROUP BY K1[, K2 …]
 *   ORDER BY <the order's column> DESC, K1 ASC[, K2 ASC …]
 *   LIMIT N
 *
 * The order is the embedded engine's (docs/query.md "Statistics"): the
 * metric descending, ties by the key bytes ascending, which for integer
 * keys (big-endian in the engine's key) is their numbers' order.  The
 * aliases of the sums are f_, p_, b_, never a column's name (ClickHouse's
 * aliases are visible in WHERE).  tests/e2e/test_clickhouse_filter.sh
 * compares the rows with `nagare query`'s.
 */
#ifndef NG_TOP_SQL_H
#define NG_TOP_SQL_H

#include <stddef.h>

#include "clickhouse/sql.h"
#include "query/filter.h"

/*
 * Appends the statement for the nkeys (1 to 4) fields keys[], ranked by
 * `order` ("flows", "packets" or "bytes"), the first `limit` groups (0:
 * all), of the rows of database.flows that pass f (NULL: all), to *q.
 * `database` must be [A-Za-z0-9_]+ (ng_ch_database).  Returns 0, or -1
 * with a sentence in err[errlen]: a key that is not an integer field
 * (addresses, MACs, strings and times are the next step), another order
 * (pps, bps, bpp: the next step), a bad database name, the filter's own
 * errors (ng_filter_sql).
 */
int ng_top_sql(const char *database, const enum ng_field_id *keys, size_t nkeys, const char *order,
               size_t limit, const ng_filter *f, const ng_ch_server *sv, ng_ch_sql *q, char *err,
               size_t errlen);

#endif
