/*
 * top_sql.c — a top-N statistic as one ClickHouse statement (top_sql.h
 * has the statement and the order it keeps).
 *
 * Nothing a user typed is written here but through the filter compiler
 * (filter_sql.c) and ng_ch_sql_uint: keys are names of the field table,
 * the order one of three words, the database checked to be
 * [A-Za-z0-9_]+.
 */
#include "query/top_sql.h"

#include <stdio.h>
#include <string.h>

#include "query/filter_sql.h"

int ng_top_sql(const char *database, const enum ng_field_id *keys, size_t nkeys, const char *order,
               size_t limit, const ng_filter *f, const ng_ch_server *sv, ng_ch_sql *q, char *err,
               size_t errlen)
{
	static const struct {
		const char *name, *alias;
	} orders[] = {{"flows", "f_"}, {"packets", "p_"}, {"bytes", "b_"}};
	const char *alias = NULL;
	for (size_t i = 0; i < sizeof orders / sizeof orders[0]; i++)
		if (order && !strcmp(order, orders[i].name))
			alias = orders[i].alias;
	if (!alias) {
		snprintf(err, errlen,
		         "top-N in ClickHouse is ranked by flows, packets or bytes, not '%s'",
		         order ? order : "");
		return -1;
	}
	if (!database || !*database ||
	    strspn(database, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") !=
	        strlen(database)) {
		snprintf(err, errlen, "a ClickHouse database name is [A-Za-z0-9_]+");
		return -1;
	}
	if (nkeys < 1 || nkeys > 4) {
		snprintf(err, errlen, "top-N in ClickHouse takes 1 to 4 keys, not %zu", nkeys);
		return -1;
	}
	for (size_t i = 0; i < nkeys; i++) {
		if ((unsigned)keys[i] >= NG_FIELD_COUNT) {
			snprintf(err, errlen, "no such field");
			return -1;
		}
		enum ng_field_type t = ng_fields[keys[i]].type;
		if (t != NG_FT_U8 && t != NG_FT_U16 && t != NG_FT_U32 && t != NG_FT_U64) {
			snprintf(err, errlen,
			         "top-N in ClickHouse groups by integer fields only so far, not %s",
			         ng_fields[keys[i]].name);
			return -1;
		}
	}
	ng_ch_sql_raw(q, "SELECT ");
	for (size_t i = 0; i < nkeys; i++) {
		ng_ch_sql_raw(q, ng_fields[keys[i]].name);
		ng_ch_sql_raw(q, ", ");
	}
	ng_ch_sql_raw(q, "min(flow_start), max(flow_end), count() AS f_, sum(packets) AS p_, "
	                 "sum(bytes) AS b_ FROM ");
	ng_ch_sql_raw(q, database);
	ng_ch_sql_raw(q, ".flows WHERE ");
	if (ng_filter_sql(f, sv, NULL, "flows", q, err, errlen) < 0)
		return -1;
	ng_ch_sql_raw(q, " GROUP BY ");
	for (size_t i = 0; i < nkeys; i++) {
		ng_ch_sql_raw(q, i ? ", " : "");
		ng_ch_sql_raw(q, ng_fields[keys[i]].name);
	}
	ng_ch_sql_raw(q, " ORDER BY ");
	ng_ch_sql_raw(q, alias);
	ng_ch_sql_raw(q, " DESC");
	for (size_t i = 0; i < nkeys; i++) {
		ng_ch_sql_raw(q, ", ");
		ng_ch_sql_raw(q, ng_fields[keys[i]].name);
		ng_ch_sql_raw(q, " ASC");
	}
	if (limit) {
		ng_ch_sql_raw(q, " LIMIT ");
		ng_ch_sql_uint(q, limit, UINT64_MAX);
	}
	if (q->failed) {
		if (q->too_long)
			snprintf(err, errlen, "the statement would pass %d bytes", NG_CH_SQL_MAX);
		else
			snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}
