/*
 * backend.h — the two backends of the query model behind one call
 * (DESIGN.md "Query model"): the embedded flow store (query.h
 * ng_query_run) and ClickHouse (the model compiled by query_sql.h, run
 * over clickhouse/client.h, its RowBinary answer read back into the same
 * ng_query_result).  The front ends (`nagare query`, the HTTP API) build
 * one ng_query, run it here, and write the result with the same output
 * code (output.h) whichever backend answered.
 *
 * What ClickHouse answers differs from the store's only in what the store
 * alone knows: the scan's statistics (segments, rows scanned: 0), and a
 * listing with a limit, whose totals are those of every matching flow
 * (the store's cover the segments it read, as nfdump's -c).  Ties are
 * ordered as query_sql.h says.
 */
#ifndef NG_BACKEND_H
#define NG_BACKEND_H

#include <stddef.h>

#include "clickhouse/client.h"
#include "clickhouse/schema.h"
#include "query/query.h"

typedef struct ng_backend {
	const char *store; /* the embedded store's directory (ch NULL) */
	ng_ch_client *ch;  /* ClickHouse, borrowed: one thread at a time; NULL: the store */
	ng_ch_server sv;   /* ch's version and features (ng_ch_detect) */
} ng_backend;

/*
 * Runs q on b's backend into *res (free with ng_query_result_free).
 * Returns 0, or -1 with a sentence in err[errlen]: the store's errors
 * (ng_query_run), or ClickHouse's (the server's code and text, a
 * connection refused, an answer that does not parse) and what the
 * ClickHouse backend does not do yet (ng_query_sql_groups).  errno
 * after a failure on ClickHouse: ETIMEDOUT past the client's time-out,
 * ECONNREFUSED when no connection could be made (nothing ran), else EIO.
 */
int ng_backend_run(const ng_backend *b, const ng_query *q, ng_query_result *res, char *err,
                   size_t errlen);

/* As ng_backend_run for ClickHouse alone: client cl of server sv. */
int ng_query_run_ch(ng_ch_client *cl, const ng_ch_server *sv, const ng_query *q,
                    ng_query_result *res, char *err, size_t errlen);

/*
 * Reads the answer of q's one statement (query_sql.h ng_query_sql_one:
 * JSONCompact, len bytes at body, from a server) into *res, zeroed by the
 * caller: its rows in their order (at most q->limit; string keys
 * interned), the totals, the time window and the number of groups
 * (rows_before_limit_at_least, at least the rows; the rows when absent).
 * Returns 0, or -1 with nothing kept in *res when it does not parse: not
 * JSON (jansson), a row of another width, a value that is not its
 * column's, more rows than the limit or than the groups counted.
 */
int ng_query_ch_parse_one(const ng_query *q, const char *body, size_t len, ng_query_result *res);

#endif
