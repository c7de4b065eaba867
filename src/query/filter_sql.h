/*
 * filter_sql.h — a parsed filter (query/filter.h) compiled to a
 * ClickHouse WHERE expression over nagare's schema (DB.flows,
 * clickhouse/schema.h, docs/clickhouse.md): the first piece of the
 * ClickHouse query backend (issue 17 part 3).
 *
 * Each leaf of the filter's tree becomes a comparison of the column named
 * as its field; every value in it is written by the quoting functions of
 * clickhouse/sql.h, so no filter can change the statement's shape (the
 * tests: tests/unit/test_query_filter_sql.c, tests/fuzz/fuzz_ch_filter.c,
 * and tests/e2e/test_clickhouse_filter.sh against a real server, which
 * checks the same rows match as in the embedded engine).  filter_sql.c's
 * opening comment gives the SQL of each kind of term.
 */
#ifndef NG_FILTER_SQL_H
#define NG_FILTER_SQL_H

#include <stddef.h>

#include "clickhouse/sql.h"
#include "core/colset.h"
#include "query/filter.h"

/*
 * Appends f's WHERE expression (without "WHERE"; "1" for a filter that
 * matches everything) to *q, for the column types of server sv (NULL:
 * 18.16's, FixedString(16) addresses).  `table` names the columns the
 * table has (NULL: DB.flows, every field) and `table_name` the table, for
 * the message.  Returns 0, or -1 with a sentence in err[errlen] (the
 * style of the filter's own errors): a term on a column the table lacks
 * ("src_port is not a column of flows_1h"), a value out of its column's
 * range, a filter whose SQL would pass NG_CH_SQL_MAX bytes, out of memory.
 * Reads only f's tree: any number of threads may compile one filter.
 */
int ng_filter_sql(const ng_filter *f, const ng_ch_server *sv, const ng_colset *table,
                  const char *table_name, ng_ch_sql *q, char *err, size_t errlen);

#endif
