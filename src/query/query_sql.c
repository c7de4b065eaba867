/*
 * query_sql.c — the query model as ClickHouse statements (query_sql.h has
 * the statements and why their order is the engine's).
 *
 * Nothing a user typed is written here but through the filter compiler
 * (filter_sql.c), ng_ch_sql_uint and ng_ch_sql_str (a key prefix): keys are names of the field
 * table, the database is checked to be [A-Za-z0-9_]+, aliases are nagare's (k0_, k0x_, s_, e_, f_,
 * p_, b_: never a column's name, since ClickHouse's aliases are visible in WHERE too).
 */
#include "query/query_sql.h"

#include <stdio.h>
#include <string.h>

#include "query/filter_sql.h"

/* The compilation of one statement. */
typedef struct qs {
	const char *db;
	const ng_query *q;
	const ng_ch_server *sv;
	ng_ch_sql *out;
	char *err;
	size_t errlen;
	/* the table read: flows, or a rollup (pick_table) */
	const char *table;
	bool rollup;
	ng_colset dims; /* a rollup's columns */
} qs;

static void raw(qs *s, const char *t)
{
	ng_ch_sql_raw(s->out, t);
}

static void uint_lit(qs *s, uint64_t v)
{
	ng_ch_sql_uint(s->out, v, UINT64_MAX);
}

/* "k<j>" + suffix + "_" into a[32]: the alias of key j's column(s). */
static const char *alias_name(size_t j, const char *suffix, char a[32])
{
	snprintf(a, 32, "k%zu%s_", j, suffix);
	return a;
}

static void alias(qs *s, size_t j, const char *suffix)
{
	char a[32];
	raw(s, alias_name(j, suffix, a));
}

static bool db_ok(const char *d)
{
	return d && *d &&
	       strspn(d, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") ==
	           strlen(d);
}

/* Checks what every statement of q needs.  Returns 0 or -1 (err set). */
static int check(qs *s)
{
	if (!db_ok(s->db)) {
		snprintf(s->err, s->errlen, "a ClickHouse database name is [A-Za-z0-9_]+");
		return -1;
	}
	for (size_t j = 0; j < s->q->nkeys; j++)
		if ((unsigned)s->q->keys[j].field >= NG_FIELD_COUNT ||
		    (s->q->keys[j].alt >= NG_FIELD_COUNT)) {
			snprintf(s->err, s->errlen, "no such field");
			return -1;
		}
	return 0;
}

/* For a group-by whose rows' times are not wanted (q->sums_only): the
 * hourly rollup, else the minutely one, when the embedded engine's rule
 * lets a rollup answer (ng_query_rollup_columns: the columns it needs,
 * no filter on flow_start, no prefix), the rollup has those columns, the
 * range and every time bucket are whole hours (minutes), and no limit
 * ranks by a rate (the rollups keep no flow times to take a rate from).
 * Else DB.flows. */
static void pick_table(qs *s)
{
	static const uint64_t levels[] = {3600000, 60000};
	const ng_query *q = s->q;
	ng_colset need;
	s->table = "flows";
	if (!q->sums_only || !ng_query_rollup_columns(q, &need) ||
	    (q->limit && (q->order == NG_ORDER_PPS || q->order == NG_ORDER_BPS)))
		return;
	for (size_t l = 0; l < 2; l++) {
		uint64_t ms = levels[l];
		bool fits = q->from_ms % ms == 0 && (q->to_ms == UINT64_MAX || q->to_ms % ms == 0);
		for (size_t j = 0; j < q->nkeys; j++)
			fits = fits && q->keys[j].bucket_ms % ms == 0;
		ng_colset dims = ng_ch_rollup_dims(l == 0);
		if (fits && ng_colset_subset(need, dims)) {
			s->table = l == 0 ? "flows_1h" : "flows_1m";
			s->rollup = true;
			s->dims = dims;
			return;
		}
	}
}

/* The bytes of address column `col` as FixedString(16): the column
 * itself, or for the IPv6 type its 16 bytes through the text (the
 * functions that read FixedString(16) differ between releases for IPv6;
 * these two read and write the same 16 bytes in every one). */
static void addr_bytes(qs *s, const char *col)
{
	if (s->sv && s->sv->ipv6) {
		raw(s, "IPv6StringToNum(IPv6NumToString(");
		raw(s, col);
		raw(s, "))");
	} else {
		raw(s, col);
	}
}

/* Half `lo` (bytes 9-16) or the first (1-8) of address column col, as a
 * UInt64 of its bytes big-endian. */
static void addr_half(qs *s, const char *col, bool lo)
{
	raw(s, "reinterpretAsUInt64(reverse(substring(");
	addr_bytes(s, col);
	raw(s, lo ? ", 9, 8)))" : ", 1, 8)))");
}

/* The mask of half `lo` of a prefix of plen bits (0: the whole address). */
static uint64_t half_mask(unsigned plen, bool lo)
{
	if (!plen || plen >= 128)
		return UINT64_MAX;
	unsigned bits = lo ? (plen > 64 ? plen - 64 : 0) : (plen >= 64 ? 64 : plen);
	return bits == 0 ? 0 : bits >= 64 ? UINT64_MAX : ~(UINT64_MAX >> bits);
}

/* Half `lo` of address key g cut to its prefix (groupby.c key_xform):
 * if(<IPv4-mapped>, <half & v4 mask>, <half & v6 mask>). */
static void prefix_half(qs *s, const ng_group_key *g, bool lo)
{
	const char *col = ng_fields[g->field].name;
	unsigned p4 = g->plen4 ? 96u + g->plen4 : 128u, p6 = g->plen6 ? g->plen6 : 128u;
	raw(s, "if(");
	addr_half(s, col, false);
	raw(s, " = 0 AND bitShiftRight(");
	addr_half(s, col, true);
	raw(s, ", 32) = 65535, bitAnd(");
	addr_half(s, col, lo);
	raw(s, ", ");
	uint_lit(s, half_mask(p4, lo));
	raw(s, "), bitAnd(");
	addr_half(s, col, lo);
	raw(s, ", ");
	uint_lit(s, half_mask(p6, lo));
	raw(s, "))");
}

/* The value of key g on field f (one side) as the engine keys it. */
static void key_value(qs *s, const ng_group_key *g, enum ng_field_id f)
{
	const ng_field *fd = &ng_fields[f];
	if (g->bucket_ms && fd->size == 8) {
		raw(s, "toUInt64(intDiv(");
		/* a rollup row's flows start in its bucket `time` */
		raw(s, s->rollup && f == NG_F_FLOW_START ? "time" : fd->name);
		raw(s, ", ");
		uint_lit(s, g->bucket_ms);
		raw(s, ") * ");
		uint_lit(s, g->bucket_ms);
		raw(s, ")");
	} else {
		raw(s, fd->name);
	}
}

static bool has_prefix(const ng_group_key *g)
{
	return ng_fields[g->field].type == NG_FT_ADDR && (g->plen4 || g->plen6) && g->alt < 0;
}

/* SELECT's key columns: "<expr> AS k<j>_, " for each key (two halves
 * k<j>h_, k<j>l_ for a prefix). */
static void select_keys(qs *s)
{
	for (size_t j = 0; j < s->q->nkeys; j++) {
		const ng_group_key *g = &s->q->keys[j];
		if (has_prefix(g)) {
			prefix_half(s, g, false);
			raw(s, " AS ");
			alias(s, j, "h");
			raw(s, ", ");
			prefix_half(s, g, true);
			raw(s, " AS ");
			alias(s, j, "l");
		} else if (g->alt >= 0) {
			raw(s, "arrayJoin([");
			key_value(s, g, g->field);
			raw(s, ", ");
			key_value(s, g, (enum ng_field_id)g->alt);
			raw(s, "]) AS ");
			alias(s, j, "");
		} else {
			key_value(s, g, g->field);
			raw(s, " AS ");
			alias(s, j, "");
		}
		raw(s, ", ");
	}
}

/* "k0_, k1h_, k1l_, …" (GROUP BY). */
static void group_keys(qs *s)
{
	for (size_t j = 0; j < s->q->nkeys; j++) {
		raw(s, j ? ", " : "");
		if (has_prefix(&s->q->keys[j])) {
			alias(s, j, "h");
			raw(s, ", ");
			alias(s, j, "l");
		} else {
			alias(s, j, "");
		}
	}
}

/* ", <tie order of key j> ASC" for each key: the order of the engine's
 * key bytes (query_sql.h). */
static void tie_keys(qs *s)
{
	for (size_t j = 0; j < s->q->nkeys; j++) {
		const ng_group_key *g = &s->q->keys[j];
		enum ng_field_type t = ng_fields[g->field].type;
		raw(s, ", ");
		if (has_prefix(g)) {
			alias(s, j, "h");
			raw(s, " ASC, ");
			alias(s, j, "l");
		} else if (t == NG_FT_ADDR) {
			char a[32];
			addr_bytes(s, alias_name(j, "", a));
		} else if (t == NG_FT_MAC || t == NG_FT_STR) {
			alias(s, j, "");
		} else {
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
			alias(s, j, ""); /* host order is the numbers' order */
#else
			raw(s, "reinterpretAsString(");
			alias(s, j, "");
			raw(s, ")");
#endif
		}
		raw(s, " ASC");
	}
}

/* FROM DB.<table> WHERE <range> AND <filter> (a rollup's range on its
 * `time`: the same cut, on its buckets' boundaries) */
static int from_where(qs *s)
{
	const char *t = s->rollup ? "time" : "flow_start";
	raw(s, " FROM ");
	raw(s, s->db);
	raw(s, ".");
	raw(s, s->table ? s->table : "flows");
	raw(s, " WHERE ");
	if (s->q->from_ms) {
		raw(s, t);
		raw(s, " >= ");
		uint_lit(s, s->q->from_ms);
		raw(s, " AND ");
	}
	if (s->q->to_ms != UINT64_MAX) {
		raw(s, t);
		raw(s, " < ");
		uint_lit(s, s->q->to_ms);
		raw(s, " AND ");
	}
	return ng_filter_sql(s->q->filter, s->sv, s->rollup ? &s->dims : NULL,
	                     s->table ? s->table : "flows", s->out, s->err, s->errlen);
}

/* The metric the order ranks by, over the aliases (query_int.h
 * ng_vals_metric, operation for operation). */
static void metric(qs *s)
{
	switch (s->q->order) {
	case NG_ORDER_FLOWS: raw(s, "f_"); break;
	case NG_ORDER_PACKETS: raw(s, "p_"); break;
	case NG_ORDER_BYTES: raw(s, "b_"); break;
	case NG_ORDER_PPS:
		raw(s, "if(e_ > s_, toFloat64(p_) / (toFloat64(e_ - s_) / 1000.0), 0.0)");
		break;
	case NG_ORDER_BPS:
		raw(s, "if(e_ > s_, 8.0 * toFloat64(b_) / (toFloat64(e_ - s_) / 1000.0), 0.0)");
		break;
	case NG_ORDER_BPP: raw(s, "if(p_ > 0, toFloat64(b_) / toFloat64(p_), 0.0)"); break;
	}
}

bool ng_query_sql_prefix_in_sql(const ng_query *q)
{
	if (!q->key_prefix || !*q->key_prefix || !q->nkeys || q->keys[0].bucket_ms)
		return false;
	const ng_field *f = &ng_fields[q->keys[0].field];
	switch (f->type) {
	case NG_FT_U8:
	case NG_FT_U16:
	case NG_FT_U32:
	case NG_FT_U64: return f->id != NG_F_SAMPLING_SOURCE;
	case NG_FT_STR: return true;
	default: return false;
	}
}

/* " HAVING <key 0 as text starts with the key prefix>" when the
 * statement filters it (ng_query_sql_prefix_in_sql): the text the
 * engine compares (ng_format_value: an integer's decimal digits, a
 * string's first 63 bytes), its first N bytes lowered (ClickHouse's
 * lower() is ASCII's, as strncasecmp's "C" locale), equal to the prefix
 * lowered, N its length: both through the quoting functions. */
static void key_prefix(qs *s)
{
	if (!ng_query_sql_prefix_in_sql(s->q))
		return;
	const char *p = s->q->key_prefix;
	size_t n = strlen(p);
	char low[256];
	if (n > sizeof low)
		n = sizeof low; /* longer than any text compared: none matches */
	for (size_t i = 0; i < n; i++)
		low[i] = p[i] >= 'A' && p[i] <= 'Z' ? (char)(p[i] - 'A' + 'a') : p[i];
	raw(s, " HAVING lower(substring(");
	if (ng_fields[s->q->keys[0].field].type == NG_FT_STR)
		raw(s, "substring(k0_, 1, 63)");
	else
		raw(s, "toString(k0_)");
	raw(s, ", 1, ");
	uint_lit(s, strlen(p));
	raw(s, ")) = ");
	ng_ch_sql_str(s->out, low, n);
}

/* The end of every statement: the builder's own failures. */
static int done(qs *s)
{
	if (s->out->failed) {
		if (s->out->too_long)
			snprintf(s->err, s->errlen,
			         "the query compiles to more than %d bytes of SQL (the server's "
			         "max_query_size): make the filter shorter",
			         NG_CH_SQL_MAX);
		else
			snprintf(s->err, s->errlen, "out of memory");
		return -1;
	}
	return 0;
}

/* The one statement's keys: "WITH <expr> AS k0_[, …] SELECT <key 0's
 * output>[, …], " (an integer's k<j>_ and a prefix's halves k<j>h_,
 * k<j>l_ as themselves; an address's bytes, a MAC's and a string's
 * through hex(), as k<j>x_:
 * JSON strings of raw bytes need not be UTF-8).  The keys are WITH
 * aliases (ClickHouse docs, "WITH Clause"; in 18.16 too), so that the
 * answer holds only their output columns, computed once per group. */
static void with_keys(qs *s)
{
	raw(s, "WITH ");
	for (size_t j = 0; j < s->q->nkeys; j++) {
		const ng_group_key *g = &s->q->keys[j];
		raw(s, j ? ", " : "");
		if (has_prefix(g)) {
			prefix_half(s, g, false);
			raw(s, " AS ");
			alias(s, j, "h");
			raw(s, ", ");
			prefix_half(s, g, true);
			raw(s, " AS ");
			alias(s, j, "l");
		} else {
			key_value(s, g, g->field);
			raw(s, " AS ");
			alias(s, j, "");
		}
	}
	raw(s, " SELECT ");
	for (size_t j = 0; j < s->q->nkeys; j++) {
		const ng_group_key *g = &s->q->keys[j];
		enum ng_field_type t = ng_fields[g->field].type;
		char a[32];
		/* a WITH alias selected as itself, not renamed: 18.16 takes
		 * "k0_ AS x" for a column outside the GROUP BY (code 215) */
		if (has_prefix(g)) {
			alias(s, j, "h");
			raw(s, ", ");
			alias(s, j, "l");
		} else if (t == NG_FT_ADDR || t == NG_FT_MAC || t == NG_FT_STR) {
			raw(s, "hex(");
			if (t == NG_FT_ADDR)
				addr_bytes(s, alias_name(j, "", a));
			else
				alias(s, j, "");
			raw(s, ") AS ");
			alias(s, j, "x");
		} else {
			alias(s, j, "");
		}
		raw(s, ", ");
	}
}

bool ng_query_sql_one_statement(const ng_query *q, const ng_ch_server *sv)
{
	if (!q->nkeys || !q->limit || q->nfold || q->nfolds || (q->key_prefix && *q->key_prefix))
		return false;
	for (size_t j = 0; j < q->nkeys; j++)
		if (q->keys[j].alt >= 0)
			return false;
	qs s = {.q = q, .sv = sv};
	pick_table(&s);
	return !s.rollup;
}

/* The group-by statement; `one`: ng_query_sql_one (WITH TOTALS,
 * JSONCompact). */
static int groups_stmt(qs *s, bool one)
{
	const ng_query *q = s->q;
	if (check(s))
		return -1;
	if (!q->nkeys) {
		snprintf(s->err, s->errlen, "a group-by needs a key");
		return -1;
	}
	if (one && !ng_query_sql_one_statement(q, s->sv)) {
		snprintf(s->err, s->errlen, "not a query of one statement");
		return -1;
	}
	pick_table(s);
	if (one) {
		with_keys(s);
	} else {
		raw(s, "SELECT ");
		select_keys(s);
	}
	raw(s, s->rollup
	           ? "min(time) AS s_, max(time) AS e_, sum(flows) AS f_, sum(packets) AS p_, "
	             "sum(bytes) AS b_"
	           : "min(flow_start) AS s_, max(flow_end) AS e_, count() AS f_, sum(packets) "
	             "AS p_, sum(bytes) AS b_");
	if (from_where(s))
		return -1;
	raw(s, " GROUP BY ");
	group_keys(s);
	if (one)
		raw(s, " WITH TOTALS");
	key_prefix(s);
	raw(s, " ORDER BY ");
	metric(s);
	raw(s, " DESC");
	tie_keys(s);
	/* a key prefix the executor checks: every group, then its top */
	if (q->limit && (!q->key_prefix || !*q->key_prefix || ng_query_sql_prefix_in_sql(q))) {
		raw(s, " LIMIT ");
		uint_lit(s, q->limit);
	}
	raw(s, one ? " FORMAT JSONCompact" : " FORMAT RowBinary");
	return done(s);
}

int ng_query_sql_groups(const char *database, const ng_query *q, const ng_ch_server *sv,
                        ng_ch_sql *out, char *err, size_t errlen)
{
	qs s = {.db = database, .q = q, .sv = sv, .out = out, .err = err, .errlen = errlen};
	return groups_stmt(&s, false);
}

int ng_query_sql_one(const char *database, const ng_query *q, const ng_ch_server *sv,
                     ng_ch_sql *out, char *err, size_t errlen)
{
	qs s = {.db = database, .q = q, .sv = sv, .out = out, .err = err, .errlen = errlen};
	return groups_stmt(&s, true);
}

int ng_query_sql_ngroups(const char *database, const ng_query *q, const ng_ch_server *sv,
                         ng_ch_sql *out, char *err, size_t errlen)
{
	qs s = {.db = database, .q = q, .sv = sv, .out = out, .err = err, .errlen = errlen};
	if (check(&s))
		return -1;
	pick_table(&s);
	raw(&s, "SELECT count() FROM (SELECT ");
	select_keys(&s);
	raw(&s, "1");
	if (from_where(&s))
		return -1;
	raw(&s, " GROUP BY ");
	group_keys(&s);
	key_prefix(&s);
	raw(&s, ") FORMAT RowBinary");
	return done(&s);
}

int ng_query_sql_totals(const char *database, const ng_query *q, const ng_ch_server *sv,
                        ng_ch_sql *out, char *err, size_t errlen)
{
	qs s = {.db = database, .q = q, .sv = sv, .out = out, .err = err, .errlen = errlen};
	if (check(&s))
		return -1;
	raw(&s, "SELECT count(), sum(packets), sum(bytes), min(flow_start), max(flow_end)");
	if (from_where(&s))
		return -1;
	raw(&s, " FORMAT RowBinary");
	return done(&s);
}

int ng_query_sql_list(const char *database, const ng_query *q, const ng_ch_server *sv,
                      ng_ch_sql *out, char *err, size_t errlen)
{
	qs s = {.db = database, .q = q, .sv = sv, .out = out, .err = err, .errlen = errlen};
	if (check(&s))
		return -1;
	raw(&s, "SELECT ");
	for (size_t i = 0; i < NG_FIELD_COUNT; i++) {
		raw(&s, i ? ", " : "");
		raw(&s, ng_fields[i].name);
	}
	if (from_where(&s))
		return -1;
	/* the order of one millisecond's flows: their columns (query_sql.h) */
	raw(&s, " ORDER BY flow_start");
	for (size_t i = 0; i < NG_FIELD_COUNT; i++)
		if (i != NG_F_FLOW_START) {
			raw(&s, ", ");
			raw(&s, ng_fields[i].name);
		}
	if (q->limit) {
		raw(&s, " LIMIT ");
		uint_lit(&s, q->limit);
	}
	raw(&s, " FORMAT RowBinary");
	return done(&s);
}
