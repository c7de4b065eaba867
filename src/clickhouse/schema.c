/*
 * schema.c — the ClickHouse schema, its creation and upgrade (schema.h,
 * docs/clickhouse.md).
 *
 * Every statement is generated here from the field table; nothing a user
 * typed reaches them but the database name, which client.c accepts only
 * as [A-Za-z0-9_]+ and which is therefore written as is.
 *
 * Choices that hold on every version from 18.16 on:
 *   - the partition key is a Date computed from flow_start as a day
 *     number (toDate(toUInt16(intDiv(flow_start, 86400000)))): a number
 *     below 65536 is a day number in every version, so the day is UTC
 *     whatever the server's time zone;
 *   - times stay UInt64 ms as in the store, so a value compares equal
 *     to the embedded store's without conversion;
 *   - ORDER BY (flow_start, exporter): the query's time range prunes by
 *     the primary key, and the sink's check before a resend (flow_start
 *     between the batch's bounds and its batch_id) reads only that range.
 * Features chosen by version (ng_ch_server_parse): LowCardinality(String)
 * for strings (19.3: before it needs allow_experimental_low_cardinality_
 * type), IPv6 for addresses (19.3; same 16 bytes), Delta+ZSTD codecs for
 * the time columns (19.10), table TTL (19.6).
 */
#include "clickhouse/schema.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/log.h"

#define C(f) NG_F_##f

/* ---- the server's version ---------------------------------------------- */

static bool at_least(const ng_ch_server *s, unsigned maj, unsigned min)
{
	return s->major > maj || (s->major == maj && s->minor >= min);
}

/* Reads up to 9 digits at s[*i]; returns -1 when there is none. */
static long digits(const char *s, size_t len, size_t *i)
{
	long v = 0;
	size_t k = 0;
	while (*i < len && k < 9 && s[*i] >= '0' && s[*i] <= '9') {
		v = v * 10 + (s[*i] - '0');
		(*i)++;
		k++;
	}
	return k ? v : -1;
}

int ng_ch_server_parse(const char *s, size_t len, ng_ch_server *out)
{
	memset(out, 0, sizeof *out);
	size_t i = 0;
	while (i < len && (s[i] == ' ' || s[i] == '\t'))
		i++;
	size_t start = i;
	long maj = digits(s, len, &i);
	if (maj < 0 || i >= len || s[i] != '.')
		return -1;
	i++;
	long min = digits(s, len, &i);
	if (min < 0)
		return -1;
	long patch = 0;
	if (i < len && s[i] == '.') {
		i++;
		patch = digits(s, len, &i);
		if (patch < 0)
			patch = 0;
	}
	size_t vl = 0;
	for (size_t j = start; j < len && vl + 1 < sizeof out->version; j++) {
		char ch = s[j];
		if (!((ch >= '0' && ch <= '9') || ch == '.'))
			break;
		out->version[vl++] = ch;
	}
	out->version[vl] = 0;
	out->major = (unsigned)maj;
	out->minor = (unsigned)min;
	out->patch = (unsigned)patch;
	out->low_cardinality = at_least(out, 19, 3);
	out->ipv6 = at_least(out, 19, 3);
	out->ttl = at_least(out, 19, 6);
	out->codecs = at_least(out, 19, 10);
	out->query_params = at_least(out, 19, 11);
	return 0;
}

int ng_ch_detect(ng_ch_client *c, ng_ch_server *out, char *err, size_t errlen)
{
	char v[128];
	if (ng_ch_query(c, "SELECT version()", v, sizeof v, err, errlen) < 0)
		return -1;
	if (ng_ch_server_parse(v, strlen(v), out) < 0) {
		char t[80];
		snprintf(err, errlen, "ClickHouse at %s: version() answered '%s', not a version",
		         ng_ch_base_url(c), ng_ch_error_text(v, strlen(v), t, sizeof t));
		return -1;
	}
	return 0;
}

/* ---- columns ---------------------------------------------------------- */

const char *ng_ch_column_type(const ng_field *f, const ng_ch_server *sv, char *buf, size_t len)
{
	const char *t = "UInt64";
	switch (f->type) {
	case NG_FT_U8: t = "UInt8"; break;
	case NG_FT_U16: t = "UInt16"; break;
	case NG_FT_U32: t = "UInt32"; break;
	case NG_FT_U64: t = "UInt64"; break;
	case NG_FT_TIME: t = sv->codecs ? "UInt64 CODEC(Delta, ZSTD(1))" : "UInt64"; break;
	case NG_FT_ADDR: t = sv->ipv6 ? "IPv6" : "FixedString(16)"; break;
	case NG_FT_MAC: t = "FixedString(6)"; break;
	case NG_FT_STR: t = sv->low_cardinality ? "LowCardinality(String)" : "String"; break;
	}
	snprintf(buf, len, "%s", t);
	return buf;
}

ng_colset ng_ch_rollup_dims(bool hourly)
{
	ng_colset d = NG_COLSET(
	    C(SRC_COUNTRY), C(DST_COUNTRY), C(SRC_CONTINENT), C(DST_CONTINENT), C(PROTOCOL),
	    C(IP_VERSION), C(SRC_NET), C(DST_NET), C(SRC_NET_ROLE), C(DST_NET_ROLE),
	    C(SRC_NET_SITE), C(DST_NET_SITE), C(SRC_AS), C(DST_AS), C(SRC_AS_NAME), C(DST_AS_NAME),
	    C(AS_SOURCE), C(EXPORTER), C(EXPORTER_NAME), C(OBSERVATION_DOMAIN), C(IN_IF), C(OUT_IF),
	    C(IN_IF_NAME), C(OUT_IF_NAME), C(DIRECTION), C(SAMPLING_RATE), C(SAMPLING_SOURCE),
	    C(FLOW_VERSION), C(SAMPLE_KIND), C(SERVICE));
	if (hourly)
		ng_colset_add(&d, NG_F_DST_PORT);
	return d;
}

/* ---- a statement buffer ------------------------------------------------- */

typedef struct sb {
	char *p;
	size_t len, cap;
	bool oom;
} sb;

static void sb_add(sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_add(sb *b, const char *fmt, ...)
{
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		size_t room = b->cap - b->len;
		int k = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? room : 0, fmt, ap);
		va_end(ap);
		if (k < 0) {
			b->oom = true;
			return;
		}
		if (b->p && (size_t)k < room) {
			b->len += (size_t)k;
			return;
		}
		size_t cap = b->cap ? b->cap * 2 : 4096;
		while (cap < b->len + (size_t)k + 1)
			cap *= 2;
		char *n = realloc(b->p, cap);
		if (!n) {
			b->oom = true;
			return;
		}
		b->p = n;
		b->cap = cap;
	}
}

static void sb_reset(sb *b)
{
	b->len = 0;
	if (b->p)
		b->p[0] = 0;
}

/* Runs b's statement; logs it at debug level.  Returns 0 or -1 with the
 * cause. */
static int run(ng_ch_client *c, sb *b, char *err, size_t errlen)
{
	if (b->oom) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	ng_debug("clickhouse: %s", b->p);
	return ng_ch_query(c, b->p, NULL, 0, err, errlen);
}

#define DAY_EXPR(col) "toDate(toUInt16(intDiv(" col ", 86400000)))"

/* ---- the tables ------------------------------------------------------- */

/* The suffix of the tables that hold rows: "_local" in the cluster
 * layout (DB.flows is then the Distributed table over them), else "". */
static const char *sfx(const ng_ch_schema_opts *o)
{
	return o->cluster ? "_local" : "";
}

/* ENGINE = KIND(...) of DB.table: plain, or Replicated with the usual
 * macros ({shard} and {replica} of each server's <macros>: ClickHouse
 * docs, "Data Replication"); args are the engine's own arguments or "". */
static void engine(sb *b, const char *db, const char *table, const ng_ch_schema_opts *o,
                   const char *kind, const char *args)
{
	if (o->cluster && o->replicated)
		sb_add(
		    b,
		    " ENGINE = Replicated%s('/clickhouse/tables/{shard}/%s/%s', '{replica}'%s%s)",
		    kind, db, table, *args ? ", " : "", args);
	else if (*args)
		sb_add(b, " ENGINE = %s(%s)", kind, args);
	else
		sb_add(b, " ENGINE = %s", kind);
}

static void flows_ddl(sb *b, const char *db, const ng_ch_server *sv, const ng_ch_schema_opts *o)
{
	char t[64];
	sb_add(b,
	       "CREATE TABLE IF NOT EXISTS %s.flows%s (date Date DEFAULT " DAY_EXPR("flow_start"),
	       db, sfx(o));
	for (size_t i = 0; i < NG_FIELD_COUNT; i++)
		sb_add(b, ", %s %s", ng_fields[i].name,
		       ng_ch_column_type(&ng_fields[i], sv, t, sizeof t));
	sb_add(b, ", batch_id UInt64)");
	engine(b, db, o->cluster ? "flows_local" : "flows", o, "MergeTree", "");
	sb_add(b, " PARTITION BY date ORDER BY (flow_start, exporter)");
	if (sv->ttl && o->retention_days)
		sb_add(b, " TTL date + toIntervalDay(%" PRIu64 ")", o->retention_days);
	sb_add(b, " SETTINGS index_granularity = 8192");
}

static void rollup_ddl(sb *b, const char *db, const ng_ch_server *sv, bool hourly,
                       const ng_ch_schema_opts *o)
{
	char t[64];
	const char *name = hourly ? "flows_1h" : "flows_1m";
	sb_add(b, "CREATE TABLE IF NOT EXISTS %s.%s%s (date Date, time UInt64", db, name, sfx(o));
	ng_colset d = ng_ch_rollup_dims(hourly), left = d;
	for (int f; (f = ng_colset_pop(&left)) >= 0;)
		sb_add(b, ", %s %s", ng_fields[f].name,
		       ng_ch_column_type(&ng_fields[f], sv, t, sizeof t));
	sb_add(b, ", batch_id UInt64, bytes UInt64, packets UInt64, flows UInt64)");
	char local[32];
	snprintf(local, sizeof local, "%s%s", name, sfx(o));
	engine(b, db, local, o, "SummingMergeTree", "(bytes, packets, flows)");
	sb_add(b, " PARTITION BY date ORDER BY (time");
	left = d;
	for (int f; (f = ng_colset_pop(&left)) >= 0;)
		sb_add(b, ", %s", ng_fields[f].name);
	sb_add(b, ")");
	if (sv->ttl && o->rollup_retention_days)
		sb_add(b, " TTL date + toIntervalDay(%" PRIu64 ")", o->rollup_retention_days);
}

/* The SELECT of a rollup from DB.flows (the view's, and the repair's
 * with `where` a condition, else NULL): date, time, the dimensions, the
 * batch id, the sums. */
static void rollup_select(sb *b, const char *db, const char *sx, bool hourly, const char *where)
{
	const unsigned long long ms = hourly ? 3600000ull : 60000ull;
	sb_add(b,
	       "SELECT " DAY_EXPR("flow_start") " AS date, intDiv(flow_start, %llu) * %llu AS time",
	       ms, ms);
	ng_colset d = ng_ch_rollup_dims(hourly), left = d;
	for (int f; (f = ng_colset_pop(&left)) >= 0;)
		sb_add(b, ", %s", ng_fields[f].name);
	/* the repair's condition in a subquery: the select's aliases (batch_id
	 * is any(batch_id)) would stand for the columns in its own WHERE */
	sb_add(b,
	       ", any(batch_id) AS batch_id, sum(bytes) AS bytes, sum(packets) AS packets, "
	       "count() AS flows FROM %s%s.flows%s%s%s%s GROUP BY date, time",
	       where ? "(SELECT * FROM " : "", db, sx, where ? " WHERE " : "", where ? where : "",
	       where ? ")" : "");
	left = d;
	for (int f; (f = ng_colset_pop(&left)) >= 0;)
		sb_add(b, ", %s", ng_fields[f].name);
}

static void rollup_view(sb *b, const char *db, const char *sx, bool hourly)
{
	const char *name = hourly ? "flows_1h" : "flows_1m";
	sb_add(b, "CREATE MATERIALIZED VIEW IF NOT EXISTS %s.%s_mv TO %s.%s%s AS ", db, name, db,
	       name, sx);
	rollup_select(b, db, sx, hourly, NULL);
}

/* Waits (up to 60 s) until DB.table has no mutation left to do. */
static int wait_mutations(ng_ch_client *c, const char *table, char *err, size_t errlen)
{
	char q[256], out[32];
	snprintf(q, sizeof q,
	         "SELECT count() FROM system.mutations WHERE database = '%s' AND table = '%s' AND "
	         "is_done = 0",
	         ng_ch_database(c), table);
	for (int i = 0; i < 600; i++) {
		if (ng_ch_query(c, q, out, sizeof out, err, errlen) < 0)
			return -1;
		if (!strcmp(out, "0"))
			return 0;
		struct timespec ts = {0, 100000000};
		nanosleep(&ts, NULL);
	}
	snprintf(err, errlen, "ClickHouse: the deletion in %s.%s did not end within 60 s",
	         ng_ch_database(c), table);
	return -1;
}

int ng_ch_rollup_repair(ng_ch_client *c, const ng_ch_schema_opts *o, uint64_t tmin, uint64_t tmax,
                        char *err, size_t errlen)
{
	const char *db = ng_ch_database(c), *sx = sfx(o);
	sb b = {0};
	int rc = 0;
	for (int h = 0; h < 2 && !rc; h++) {
		char t[32];
		snprintf(t, sizeof t, "%s%s", h ? "flows_1h" : "flows_1m", sx);
		const uint64_t ms = h ? 3600000 : 60000, lo = tmin / ms * ms,
		               hi = tmax / ms * ms + ms;
		sb_reset(&b);
		sb_add(&b, "ALTER TABLE %s.%s DELETE WHERE time >= %" PRIu64 " AND time < %" PRIu64,
		       db, t, lo, hi);
		if ((rc = run(c, &b, err, errlen)) < 0 ||
		    (rc = wait_mutations(c, t, err, errlen)) < 0)
			break;
		char where[128];
		snprintf(where, sizeof where, "flow_start >= %" PRIu64 " AND flow_start < %" PRIu64,
		         lo, hi);
		sb_reset(&b);
		sb_add(&b, "INSERT INTO %s.%s (date, time", db, t);
		ng_colset left = ng_ch_rollup_dims(h);
		for (int f; (f = ng_colset_pop(&left)) >= 0;)
			sb_add(&b, ", %s", ng_fields[f].name);
		sb_add(&b, ", batch_id, bytes, packets, flows) ");
		rollup_select(&b, db, sx, h, where);
		rc = run(c, &b, err, errlen);
	}
	free(b.p);
	if (!rc)
		ng_info(
		    "clickhouse: %s.flows_1m%s and flows_1h%s at %s recomputed from flows%s over "
		    "the buckets of %" PRIu64 "..%" PRIu64 " (a batch found in flows after a "
		    "failed insert)",
		    db, sx, sx, ng_ch_base_url(c), sx, tmin, tmax);
	return rc;
}

int ng_ch_batch_delete(ng_ch_client *c, const ng_ch_schema_opts *o, uint64_t batch_id,
                       uint64_t tmin, uint64_t tmax, char *err, size_t errlen)
{
	char q[512], t[32];
	snprintf(t, sizeof t, "flows%s", sfx(o));
	snprintf(q, sizeof q,
	         "ALTER TABLE %s.%s DELETE WHERE flow_start >= %" PRIu64
	         " AND flow_start <= %" PRIu64 " AND batch_id = %" PRIu64,
	         ng_ch_database(c), t, tmin, tmax, batch_id);
	if (ng_ch_query(c, q, NULL, 0, err, errlen) < 0 || wait_mutations(c, t, err, errlen) < 0)
		return -1;
	return ng_ch_rollup_repair(c, o, tmin, tmax, err, errlen);
}

static void exporters_ddl(sb *b, const char *db, const ng_ch_server *sv, const ng_ch_schema_opts *o)
{
	char a[64], s[64], t[32];
	ng_ch_column_type(&ng_fields[NG_F_EXPORTER], sv, a, sizeof a);
	ng_ch_column_type(&ng_fields[NG_F_EXPORTER_NAME], sv, s, sizeof s);
	snprintf(t, sizeof t, "exporters%s", sfx(o));
	sb_add(b,
	       "CREATE TABLE IF NOT EXISTS %s.%s (exporter %s, exporter_name %s, "
	       "flow_version UInt8, sampling_rate UInt32, last_seen UInt64)",
	       db, t, a, s);
	engine(b, db, t, o, "ReplacingMergeTree", "last_seen");
	sb_add(b, " ORDER BY exporter");
}

static void interfaces_ddl(sb *b, const char *db, const ng_ch_server *sv,
                           const ng_ch_schema_opts *o)
{
	char a[64], s[64], t[32];
	ng_ch_column_type(&ng_fields[NG_F_EXPORTER], sv, a, sizeof a);
	ng_ch_column_type(&ng_fields[NG_F_EXPORTER_NAME], sv, s, sizeof s);
	snprintf(t, sizeof t, "interfaces%s", sfx(o));
	sb_add(b,
	       "CREATE TABLE IF NOT EXISTS %s.%s (exporter %s, if_index UInt32, "
	       "exporter_name %s, if_name %s, last_seen UInt64)",
	       db, t, a, s, s);
	engine(b, db, t, o, "ReplacingMergeTree", "last_seen");
	sb_add(b, " ORDER BY (exporter, if_index)");
}

/* The views of the exporters and interfaces tables (i: 0 exporters, 1
 * input interfaces, 2 output interfaces), on the table suffix sx. */
static void meta_view(sb *b, const char *db, const char *sx, int i)
{
	if (i == 0) {
		sb_add(
		    b,
		    "CREATE MATERIALIZED VIEW IF NOT EXISTS %s.exporters_mv TO %s.exporters%s AS "
		    "SELECT exporter, any(exporter_name) AS exporter_name, max(flow_version) AS "
		    "flow_version, max(sampling_rate) AS sampling_rate, max(time_received) AS "
		    "last_seen FROM %s.flows%s GROUP BY exporter",
		    db, db, sx, db, sx);
		return;
	}
	const char *side = i == 1 ? "in" : "out";
	sb_add(b,
	       "CREATE MATERIALIZED VIEW IF NOT EXISTS %s.interfaces_%s_mv TO %s.interfaces%s AS "
	       "SELECT exporter, %s_if AS if_index, any(exporter_name) AS exporter_name, "
	       "any(%s_if_name) AS if_name, max(time_received) AS last_seen FROM %s.flows%s "
	       "GROUP BY exporter, if_index",
	       db, side, db, sx, side, side, db, sx);
}

static const char *const views[] = {"flows_1m_mv", "flows_1h_mv", "exporters_mv",
                                    "interfaces_in_mv", "interfaces_out_mv"};

/* The version in DB.schema_version, 0 when none; -1 on error. */
static int schema_version(ng_ch_client *c, char *err, size_t errlen)
{
	char q[256], v[32];
	snprintf(q, sizeof q, "SELECT max(version) FROM %s.schema_version", ng_ch_database(c));
	if (ng_ch_query(c, q, v, sizeof v, err, errlen) < 0)
		return -1;
	char *end;
	unsigned long n = strtoul(v, &end, 10);
	if (end == v || *end || n > 1000000) {
		snprintf(err, errlen, "ClickHouse: %s.schema_version holds '%.20s'",
		         ng_ch_database(c), v);
		return -1;
	}
	return (int)n;
}

/* The names of DB.table's columns, one a line, into *out (malloc'd).
 * Returns 0 or -1. */
static int column_names(ng_ch_client *c, const char *table, char **out, char *err, size_t errlen)
{
	char q[512];
	snprintf(q, sizeof q,
	         "SELECT name FROM system.columns WHERE database = '%s' AND table = '%s' "
	         "FORMAT TabSeparated",
	         ng_ch_database(c), table);
	ng_ch_reply r;
	if (ng_ch_exec(c, q, NULL, 0, NULL, &r) < 0) {
		snprintf(err, errlen, "%s", r.err);
		ng_ch_reply_free(&r);
		return -1;
	}
	*out = r.body ? r.body : strdup("");
	return *out ? 0 : -1;
}

/* Whether `name` is a line of the list `lines`. */
static bool has_line(const char *lines, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = lines; p && *p;) {
		const char *e = strchr(p, '\n');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		if (l == n && !memcmp(p, name, n))
			return true;
		p = e ? e + 1 : NULL;
	}
	return false;
}

/* Adds to DB.table (flows, or flows_local and the Distributed flows) the
 * columns of the field table it lacks. */
static int add_missing(ng_ch_client *c, const char *table, const ng_ch_server *sv, sb *b, char *err,
                       size_t errlen)
{
	char *have;
	if (column_names(c, table, &have, err, errlen) < 0)
		return -1;
	const char *db = ng_ch_database(c);
	int rc = 0;
	char t[64];
	for (size_t i = 0; i <= NG_FIELD_COUNT && !rc; i++) {
		const char *name = i < NG_FIELD_COUNT ? ng_fields[i].name : "batch_id";
		if (has_line(have, name))
			continue;
		sb_reset(b);
		sb_add(b, "ALTER TABLE %s.%s ADD COLUMN %s %s", db, table, name,
		       i < NG_FIELD_COUNT ? ng_ch_column_type(&ng_fields[i], sv, t, sizeof t)
		                          : "UInt64");
		ng_info("clickhouse: %s.%s lacks column %s (an older nagare's schema): adding it",
		        db, table, name);
		rc = run(c, b, err, errlen);
	}
	free(have);
	return rc;
}

/* The engine of DB.flows into eng[elen] ("" when there is no such
 * table).  Returns 0 or -1. */
static int flows_engine(ng_ch_client *c, char *eng, size_t elen, char *err, size_t errlen)
{
	char q[256];
	snprintf(q, sizeof q,
	         "SELECT engine FROM system.tables WHERE database = '%s' AND name = 'flows'",
	         ng_ch_database(c));
	return ng_ch_query(c, q, eng, elen, err, errlen);
}

/* The Distributed tables of the cluster layout: DB.T over DB.T_local on
 * every shard of the cluster, rows sharded by exporter (cityHash64 of its
 * 16 bytes: one exporter's rows on one shard).  The cluster name is
 * [A-Za-z0-9_] (ng_ch_name_ok), written as a string literal. */
static const char *const dist_tables[] = {"flows", "flows_1m", "flows_1h", "exporters",
                                          "interfaces"};

int ng_ch_schema_init(ng_ch_client *c, const ng_ch_server *sv, const ng_ch_schema_opts *o,
                      char *err, size_t errlen)
{
	const char *db = ng_ch_database(c), *sx = sfx(o);
	if (o->cluster && !ng_ch_name_ok(o->cluster)) {
		snprintf(err, errlen, "ClickHouse cluster '%s': use letters, digits and '_' only",
		         o->cluster);
		return -1;
	}
	sb b = {0};
	int rc = -1;
	sb_add(&b, "CREATE DATABASE IF NOT EXISTS %s", db);
	if (run(c, &b, err, errlen) < 0)
		goto out;
	/* one layout per database: a single server's MergeTree flows and a
	 * cluster's Distributed flows are not turned into each other */
	char eng[64];
	if (flows_engine(c, eng, sizeof eng, err, errlen) < 0)
		goto out;
	if (*eng && (!strcmp(eng, "Distributed") != !!o->cluster)) {
		snprintf(
		    err, errlen,
		    o->cluster
		        ? "ClickHouse database %s at %s holds a one-server schema (flows is %s): "
		          "give another database for the cluster layout"
		        : "ClickHouse database %s at %s holds a cluster schema (flows is %s): set "
		          "clickhouse.cluster, or give another database",
		    db, ng_ch_base_url(c), eng);
		goto out;
	}
	sb_reset(&b);
	sb_add(&b,
	       "CREATE TABLE IF NOT EXISTS %s.schema_version (version UInt32, nagare String, "
	       "applied_ms UInt64) ENGINE = MergeTree ORDER BY version",
	       db);
	if (run(c, &b, err, errlen) < 0)
		goto out;
	int have = schema_version(c, err, errlen);
	if (have < 0)
		goto out;
	if (have > NG_CH_SCHEMA_VERSION) {
		snprintf(err, errlen,
		         "ClickHouse database %s has schema version %d, newer than this nagare's "
		         "(%d): upgrade nagare, or give another database",
		         db, have, NG_CH_SCHEMA_VERSION);
		goto out;
	}
	char flows[32];
	snprintf(flows, sizeof flows, "flows%s", sx);
	sb_reset(&b);
	flows_ddl(&b, db, sv, o);
	if (run(c, &b, err, errlen) < 0 || add_missing(c, flows, sv, &b, err, errlen) < 0)
		goto out;
	for (int h = 0; h < 2; h++) {
		sb_reset(&b);
		rollup_ddl(&b, db, sv, h, o);
		if (run(c, &b, err, errlen) < 0)
			goto out;
	}
	sb_reset(&b);
	exporters_ddl(&b, db, sv, o);
	if (run(c, &b, err, errlen) < 0)
		goto out;
	sb_reset(&b);
	interfaces_ddl(&b, db, sv, o);
	if (run(c, &b, err, errlen) < 0)
		goto out;
	for (size_t i = 0; o->cluster && i < sizeof dist_tables / sizeof dist_tables[0]; i++) {
		sb_reset(&b);
		sb_add(&b,
		       "CREATE TABLE IF NOT EXISTS %s.%s AS %s.%s_local ENGINE = Distributed('%s', "
		       "'%s', '%s_local', cityHash64(exporter))",
		       db, dist_tables[i], db, dist_tables[i], o->cluster, db, dist_tables[i]);
		if (run(c, &b, err, errlen) < 0)
			goto out;
	}
	if (o->cluster && add_missing(c, "flows", sv, &b, err, errlen) < 0)
		goto out;
	if (have && have < NG_CH_SCHEMA_VERSION)
		for (size_t i = 0; i < sizeof views / sizeof views[0]; i++) {
			/* an older layout's view: made again below */
			sb_reset(&b);
			sb_add(&b, "DROP TABLE IF EXISTS %s.%s", db, views[i]);
			if (run(c, &b, err, errlen) < 0)
				goto out;
		}
	for (int h = 0; h < 2; h++) {
		sb_reset(&b);
		rollup_view(&b, db, sx, h);
		if (run(c, &b, err, errlen) < 0)
			goto out;
	}
	for (int i = 0; i < 3; i++) {
		sb_reset(&b);
		meta_view(&b, db, sx, i);
		if (run(c, &b, err, errlen) < 0)
			goto out;
	}
	if (sv->ttl && o->retention_days) {
		sb_reset(&b);
		sb_add(&b, "ALTER TABLE %s.%s MODIFY TTL date + toIntervalDay(%" PRIu64 ")", db,
		       flows, o->retention_days);
		if (run(c, &b, err, errlen) < 0)
			goto out;
	}
	if (sv->ttl && o->rollup_retention_days)
		for (int h = 0; h < 2; h++) {
			sb_reset(&b);
			sb_add(&b,
			       "ALTER TABLE %s.%s%s MODIFY TTL date + toIntervalDay(%" PRIu64 ")",
			       db, h ? "flows_1h" : "flows_1m", sx, o->rollup_retention_days);
			if (run(c, &b, err, errlen) < 0)
				goto out;
		}
	if (have < NG_CH_SCHEMA_VERSION) {
		sb_reset(&b);
		sb_add(&b,
		       "INSERT INTO %s.schema_version (version, nagare, applied_ms) SELECT %d, "
		       "'nagare', toUInt64(now()) * 1000",
		       db, NG_CH_SCHEMA_VERSION);
		if (run(c, &b, err, errlen) < 0)
			goto out;
		ng_info("clickhouse: %s at %s: schema version %d %s (server %s%s%s)", db,
		        ng_ch_base_url(c), NG_CH_SCHEMA_VERSION, have ? "upgraded" : "created",
		        sv->version, o->cluster ? ", cluster " : "", o->cluster ? o->cluster : "");
	}
	rc = NG_CH_SCHEMA_VERSION;
out:
	free(b.p);
	return rc;
}

int ng_ch_schema_check(ng_ch_client *c, unsigned *version, unsigned *nmissing, char *missing,
                       size_t mlen, char *err, size_t errlen)
{
	*version = 0;
	*nmissing = 0;
	if (mlen)
		missing[0] = 0;
	char *have;
	if (column_names(c, "schema_version", &have, err, errlen) < 0)
		return -1;
	bool exists = have[0] != 0;
	free(have);
	if (!exists)
		return 0;
	int v = schema_version(c, err, errlen);
	if (v < 0)
		return -1;
	*version = (unsigned)v;
	/* in the cluster layout the local table too (named in the list) */
	char eng[64];
	if (flows_engine(c, eng, sizeof eng, err, errlen) < 0)
		return -1;
	size_t off = 0;
	for (int t = 0; t < (strcmp(eng, "Distributed") ? 1 : 2); t++) {
		if (column_names(c, t ? "flows_local" : "flows", &have, err, errlen) < 0)
			return -1;
		for (size_t i = 0; i <= NG_FIELD_COUNT; i++) {
			const char *name = i < NG_FIELD_COUNT ? ng_fields[i].name : "batch_id";
			if (has_line(have, name))
				continue;
			if (off < mlen)
				off += (size_t)snprintf(missing + off, mlen - off, "%s%s%s",
				                        *nmissing ? " " : "",
				                        t ? "flows_local." : "", name);
			(*nmissing)++;
		}
		free(have);
	}
	return 0;
}

int ng_ch_drop_old(ng_ch_client *c, const ng_ch_schema_opts *o, uint64_t now_ms, char *err,
                   size_t errlen)
{
	const char *db = ng_ch_database(c), *sx = sfx(o);
	const uint64_t today = now_ms / 86400000;
	uint64_t fcut =
	    o->retention_days && o->retention_days < today ? today - o->retention_days : 0;
	uint64_t rcut = o->rollup_retention_days && o->rollup_retention_days < today
	                    ? today - o->rollup_retention_days
	                    : 0;
	if (!fcut && !rcut)
		return 0;
	char q[1024];
	snprintf(q, sizeof q,
	         "SELECT DISTINCT table, partition_id FROM system.parts WHERE database = '%s' AND "
	         "active AND ((table = 'flows%s' AND max_date < toDate(toUInt16(%" PRIu64 "))) OR "
	         "(table IN ('flows_1m%s', 'flows_1h%s') AND max_date < "
	         "toDate(toUInt16(%" PRIu64 ")))) FORMAT TabSeparated",
	         db, sx, fcut ? fcut : 0, sx, sx, rcut ? rcut : 0);
	ng_ch_reply r;
	if (ng_ch_exec(c, q, NULL, 0, NULL, &r) < 0) {
		snprintf(err, errlen, "%s", r.err);
		ng_ch_reply_free(&r);
		return -1;
	}
	int dropped = 0, rc = 0;
	for (const char *p = r.body; p && *p && !rc;) {
		const char *e = strchr(p, '\n');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		char table[32], part[32];
		if (ng_ch_partition_line(p, l, table, sizeof table, part, sizeof part) == 0) {
			char s[256];
			/* a Date partition's id is its day as YYYYMMDD: the value is that day */
			snprintf(s, sizeof s, "ALTER TABLE %s.%s DROP PARTITION '%.4s-%.2s-%.2s'",
			         db, table, part, part + 4, part + 6);
			ng_info("clickhouse: retention: dropping partition %s of %s.%s", part, db,
			        table);
			rc = ng_ch_query(c, s, NULL, 0, err, errlen);
			dropped += !rc;
		}
		p = e ? e + 1 : NULL;
	}
	ng_ch_reply_free(&r);
	return rc ? -1 : dropped;
}

int ng_ch_partition_line(const char *s, size_t len, char *table, size_t tlen, char *part,
                         size_t plen)
{
	const char *tab = memchr(s, '\t', len);
	if (!tab || tlen < 16 || plen < 9)
		return -1;
	size_t tl = (size_t)(tab - s), pl = len - tl - 1;
	static const char *const known[] = {"flows",       "flows_1m",       "flows_1h",
	                                    "flows_local", "flows_1m_local", "flows_1h_local"};
	int k = -1;
	for (int i = 0; i < 6; i++)
		if (tl == strlen(known[i]) && !memcmp(s, known[i], tl))
			k = i;
	if (k < 0 || pl != 8)
		return -1;
	for (size_t i = 0; i < 8; i++)
		if (tab[1 + i] < '0' || tab[1 + i] > '9')
			return -1;
	snprintf(table, tlen, "%s", known[k]);
	memcpy(part, tab + 1, 8);
	part[8] = 0;
	return 0;
}
