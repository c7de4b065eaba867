/*
 * fuzz_ch_one.c — the JSONCompact answer of the ClickHouse backend's one
 * statement (query/backend.h ng_query_ch_parse_one; the statement:
 * query/query_sql.h ng_query_sql_one), bytes from a server.  The first
 * byte picks the keys (an address prefix and a port, an address, a
 * string, a MAC, a time bucket) and the limit (1 to 8); the rest is the
 * answer.  Invariants, abort on a break: an answer that parses gives at
 * most `limit` rows, groups at least the rows and exact, the first and
 * last times 0 when no flow was counted; one that does not keeps no row.
 * Nothing leaks (ng_query_result_free).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "query/backend.h"
#include "query/output.h"
#include "query/query.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const keys[] = {"srcip4/24,dstport", "dstip", "exporter_name",
	                                   "srcmac,proto", "flow_start"};
	if (size < 1)
		return 0;
	ng_query q = {.to_ms = UINT64_MAX, .limit = 1 + (data[0] >> 4) % 8};
	char err[256];
	if (ng_query_parse_keys(&q, keys[data[0] % (sizeof keys / sizeof keys[0])], err,
	                        sizeof err))
		abort();
	if (q.keys[0].field == NG_F_FLOW_START)
		q.keys[0].bucket_ms = 60000;
	ng_query_result res;
	memset(&res, 0, sizeof res);
	int rc = ng_query_ch_parse_one(&q, (const char *)data + 1, size - 1, &res);
	if (rc == 0) {
		if (res.nrows > q.limit || res.groups < res.nrows || !res.groups_exact)
			abort();
		if (!res.flows_total && (res.first || res.last))
			abort();
	} else if (rc != -1 || res.nrows || res.rows) {
		abort();
	}
	ng_query_result_free(&res);
	return 0;
}
