/* output.c — query results as table, CSV or NDJSON (see output.h). */
#include "query/output.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/addr.h"
#include "core/bytes.h"
#include "core/json.h"
#include "core/strtab.h"
#include "core/timefmt.h"

bool ng_format_parse(const char *s, enum ng_format *out)
{
	if (!strcasecmp(s, "table"))
		*out = NG_FMT_TABLE;
	else if (!strcasecmp(s, "csv"))
		*out = NG_FMT_CSV;
	else if (!strcasecmp(s, "ndjson"))
		*out = NG_FMT_NDJSON;
	else if (!strcasecmp(s, "json"))
		*out = NG_FMT_JSON;
	else
		return false;
	return true;
}

size_t ng_format_value(const ng_field *f, const uint8_t *p, char *buf)
{
	switch (f->type) {
	case NG_FT_ADDR: ng_addr_format(p, buf); break;
	case NG_FT_MAC: ng_mac_format(p, buf); break;
	case NG_FT_TIME: ng_time_format(ng_get_host_uint(p, 8), buf); break;
	case NG_FT_STR: snprintf(buf, 64, "%s", ng_str((uint32_t)ng_get_host_uint(p, 4))); break;
	default:
		if (f->id == NG_F_SAMPLING_SOURCE)
			snprintf(buf, 64, "%s", ng_sampling_source_name(*p));
		else
			snprintf(buf, 64, "%" PRIu64, ng_get_host_uint(p, f->size));
	}
	return strlen(buf);
}

char *ng_format_scaled(double v, char *buf)
{
	if (v >= 1e9)
		snprintf(buf, 32, "%.1f G", v / 1e9);
	else if (v >= 1e6)
		snprintf(buf, 32, "%.1f M", v / 1e6);
	else if (v >= 1e5)
		snprintf(buf, 32, "%.1f k", v / 1e3);
	else
		snprintf(buf, 32, "%.0f", v);
	return buf;
}

/* "2025-11-30 00:00:00.123", nfdump's form of a time. */
static char *table_time(uint64_t ms, char *buf)
{
	ng_time_format(ms, buf);
	buf[10] = ' ';
	buf[strlen(buf) - 1] = 0; /* the Z */
	return buf;
}

static const char *proto_name(unsigned p)
{
	switch (p) {
	case 1: return "ICMP";
	case 6: return "TCP";
	case 17: return "UDP";
	case 47: return "GRE";
	case 50: return "ESP";
	case 51: return "AH";
	case 58: return "ICMP6";
	case 132: return "SCTP";
	default: return NULL;
	}
}

/* A key value for the table: protocols by name, the rest as ng_format_value. */
static void table_value(const ng_field *f, const uint8_t *p, char *buf)
{
	const char *name = f->id == NG_F_PROTOCOL ? proto_name(*p) : NULL;
	if (name)
		snprintf(buf, 64, "%s", name);
	else
		ng_format_value(f, p, buf);
}

static const char *key_title(const ng_group_key *g)
{
	static const struct {
		const char *label, *title;
	} titles[] = {
	    {"srcip", "Src IP Addr"},
	    {"dstip", "Dst IP Addr"},
	    {"ip", "IP Addr"},
	    {"srcport", "Src Port"},
	    {"dstport", "Dst Port"},
	    {"port", "Port"},
	    {"proto", "Proto"},
	    {"exporter", "Exporter"},
	    {"srcas", "Src AS"},
	    {"dstas", "Dst AS"},
	    {"as", "AS"},
	    {"inif", "Input If"},
	    {"outif", "Output If"},
	    {"if", "Interface"},
	    {"nexthop", "Next Hop"},
	};
	for (size_t i = 0; i < sizeof titles / sizeof titles[0]; i++)
		if (!strcmp(g->label, titles[i].label))
			return titles[i].title;
	return g->label;
}

/* The field of key j whose bytes are at key offset *off. */
static const ng_field *key_field(const ng_query *q, size_t j, size_t *off, const uint8_t **p,
                                 const ng_agg_row *r)
{
	const ng_field *f = &ng_fields[q->keys[j].field];
	*p = r->key + *off;
	*off += f->size;
	return f;
}

static double pct(uint64_t part, uint64_t total)
{
	return total ? 100.0 * (double)part / (double)total : 0;
}

/* "12.3 M(45.6)": a scaled number and its share in percent, as nfdump's -s
 * prints them.  The share is clamped to 0..100 so the cell always fits. */
static void pct_cell(char *out, size_t len, const char *num, double share)
{
	if (!(share >= 0))
		share = 0;
	if (share > 100)
		share = 100;
	if (snprintf(out, len, "%s(%4.1f)", num, share) >= (int)len)
		out[len - 1] = 0;
}

/* The width of each key column of a table into width[0..q->nkeys): its
 * title's, or its widest value's among the n keys at keys, keys + stride,
 * ... (the key arrays of n rows; keys may be NULL when n is 0). */
static void key_widths(const ng_query *q, const uint8_t *keys, size_t stride, size_t n, int *width)
{
	char buf[96];
	for (size_t j = 0; j < q->nkeys; j++)
		width[j] = (int)strlen(key_title(&q->keys[j]));
	for (size_t i = 0; i < n; i++) {
		size_t off = 0;
		for (size_t j = 0; j < q->nkeys; j++) {
			int l =
			    (int)strlen(ng_format_key(q, j, keys + i * stride + off, true, buf));
			off += ng_fields[q->keys[j].field].size;
			width[j] = l > width[j] ? l : width[j];
		}
	}
}

static int top_table(FILE *out, const ng_query *q, const ng_query_result *res, bool header)
{
	char buf[96], t[40];
	int width[NG_QUERY_MAX_KEYS];
	key_widths(q, res->nrows ? res->rows[0].key : NULL, sizeof *res->rows, res->nrows, width);
	if (header) {
		fprintf(out, "Top %zu ", res->nrows);
		for (size_t j = 0; j < q->nkeys; j++)
			fprintf(out, "%s%s", j ? ", " : "", key_title(&q->keys[j]));
		fprintf(out, " ordered by %s:\n", ng_order_name(q->order));
		fprintf(out, "%-23s %12s", "Date first seen", "Duration");
		for (size_t j = 0; j < q->nkeys; j++)
			fprintf(out, " %*s", width[j], key_title(&q->keys[j]));
		fprintf(out, " %14s %16s %16s %10s %10s %6s\n", "Flows(%)", "Packets(%)",
		        "Bytes(%)", "pps", "bps", "bpp");
	}
	for (size_t i = 0; i < res->nrows; i++) {
		const ng_agg_row *r = &res->rows[i];
		double dur = r->last > r->first ? (double)(r->last - r->first) / 1000.0 : 0;
		fprintf(out, "%-23s %12.3f", table_time(r->first, t), dur);
		size_t off = 0;
		for (size_t j = 0; j < q->nkeys; j++) {
			const uint8_t *p;
			key_field(q, j, &off, &p, r);
			fprintf(out, " %*s", width[j], ng_format_key(q, j, p, true, buf));
		}
		char c1[32], c2[32], c3[32], c4[32], c5[32], c6[32];
		pct_cell(c1, sizeof c1, ng_format_scaled((double)r->flows, c4),
		         pct(r->flows, res->flows_total));
		pct_cell(c2, sizeof c2, ng_format_scaled((double)r->packets, c5),
		         pct(r->packets, res->packets_total));
		pct_cell(c3, sizeof c3, ng_format_scaled((double)r->bytes, c6),
		         pct(r->bytes, res->bytes_total));
		fprintf(out, " %14s %16s %16s", c1, c2, c3);
		fprintf(out, " %10s", ng_format_scaled(ng_agg_metric(r, NG_ORDER_PPS), c4));
		fprintf(out, " %10s", ng_format_scaled(ng_agg_metric(r, NG_ORDER_BPS), c5));
		fprintf(out, " %6s\n", ng_format_scaled(ng_agg_metric(r, NG_ORDER_BPP), c6));
	}
	return ferror(out) ? -1 : 0;
}

int ng_output_top(FILE *out, const ng_query *q, const ng_query_result *res, enum ng_format fmt,
                  bool header)
{
	ng_output_opts o = {.fmt = fmt, .header = header};
	return ng_write_top(out, q, res, &o);
}

/* "10.0.0.1:443" or "2001:db8::1.443" (nfdump writes IPv6 ports after a dot). */
static char *addr_port(const uint8_t a[16], uint16_t port, char *buf)
{
	char s[NG_ADDR_STRLEN];
	ng_addr_format(a, s);
	snprintf(buf, 64, "%s%c%u", s, ng_addr_is_v4(a) ? ':' : '.', port);
	return buf;
}

static int list_table(FILE *out, const ng_query_result *res, bool header)
{
	if (header)
		fprintf(out, "%-23s %10s %-5s %24s    %-24s %8s %8s %5s\n", "Date first seen",
		        "Duration", "Proto", "Src IP Addr:Port", "Dst IP Addr:Port", "Packets",
		        "Bytes", "Flows");
	for (size_t i = 0; i < res->nflows; i++) {
		const ng_flow *r = &res->flows[i];
		char t[40], s[64], d[64], pb[16], p1[32], p2[32];
		const char *pn = proto_name(r->protocol);
		if (!pn) {
			snprintf(pb, sizeof pb, "%u", r->protocol);
			pn = pb;
		}
		double dur =
		    r->flow_end > r->flow_start ? (double)(r->flow_end - r->flow_start) / 1e3 : 0;
		fprintf(out, "%-23s %10.3f %-5s %24s -> %-24s %8s %8s %5u\n",
		        table_time(r->flow_start, t), dur, pn,
		        addr_port(r->src_addr, r->src_port, s),
		        addr_port(r->dst_addr, r->dst_port, d),
		        ng_format_scaled((double)r->packets, p1),
		        ng_format_scaled((double)r->bytes, p2), 1u);
	}
	return ferror(out) ? -1 : 0;
}

static int list_csv(FILE *out, const ng_query_result *res, bool header)
{
	char buf[64];
	if (header)
		for (size_t f = 0; f < NG_FIELD_COUNT; f++)
			fprintf(out, "%s%c", ng_fields[f].name,
			        f + 1 < NG_FIELD_COUNT ? ',' : '\n');
	for (size_t i = 0; i < res->nflows; i++) {
		for (size_t f = 0; f < NG_FIELD_COUNT; f++) {
			ng_format_value(&ng_fields[f], ng_field_ptr(&ng_fields[f], &res->flows[i]),
			                buf);
			fprintf(out, "%s%c", buf, f + 1 < NG_FIELD_COUNT ? ',' : '\n');
		}
	}
	return ferror(out) ? -1 : 0;
}

int ng_output_list(FILE *out, const ng_query_result *res, enum ng_format fmt, bool header)
{
	return fmt == NG_FMT_CSV ? list_csv(out, res, header) : list_table(out, res, header);
}

void ng_output_summary(FILE *out, const ng_query_result *res)
{
	char b[32], t1[40], t2[40];
	double secs = res->last > res->first ? (double)(res->last - res->first) / 1e3 : 0;
	fprintf(out, "Summary: total flows: %" PRIu64 ", total bytes: %s, total packets: %" PRIu64,
	        res->flows_total, ng_format_scaled((double)res->bytes_total, b),
	        res->packets_total);
	fprintf(out, ", avg bps: %.0f, avg pps: %.0f, avg bpp: %.0f\n",
	        secs > 0 ? 8.0 * (double)res->bytes_total / secs : 0,
	        secs > 0 ? (double)res->packets_total / secs : 0,
	        res->packets_total ? (double)res->bytes_total / (double)res->packets_total : 0);
	if (res->flows_total)
		fprintf(out, "Time window: %s - %s\n", table_time(res->first, t1),
		        table_time(res->last, t2));
	else
		fprintf(out, "Time window: no flows\n");
	fprintf(out,
	        "Rows scanned: %" PRIu64 ", segments read: %" PRIu64 ", skipped: %" PRIu64
	        " (by the filter's zone maps: %" PRIu64 "), corrupt: %" PRIu64
	        ", bytes read: %" PRIu64 "\n",
	        res->scan.rows_scanned, res->scan.segments_read, res->scan.segments_skipped,
	        res->scan.segments_pruned, res->scan.errors, res->scan.bytes_read);
	if (res->scan.segments_rollup)
		fprintf(out, "Rollups: %" PRIu64 " segments read through their rollups\n",
		        res->scan.segments_rollup);
	if (res->scan.blocks_decoded < res->scan.blocks_scanned || res->scan.blocks_coded) {
		/* late materialization; filters on dictionary codes */
		fprintf(out, "Blocks: %" PRIu64 " scanned, %" PRIu64 " with a matching row",
		        res->scan.blocks_scanned, res->scan.blocks_decoded);
		if (res->scan.blocks_coded)
			fprintf(out, ", %" PRIu64 " filtered on dictionary codes",
			        res->scan.blocks_coded);
		fprintf(out, "\n");
	}
	fprintf(out, "Elapsed: %.3f s", res->elapsed_s);
	if (res->elapsed_s > 0)
		fprintf(out, " (%.1f M rows/s)",
		        (double)res->scan.rows_scanned / res->elapsed_s / 1e6);
	fprintf(out, "\n");
}

/* ---- every result kind (see output.h) ------------------------------------ */

char *ng_format_key(const ng_query *q, size_t j, const uint8_t *k, bool names, char *buf)
{
	const ng_group_key *g = &q->keys[j];
	const ng_field *f = &ng_fields[g->field];
	if (g->bucket_ms) {
		ng_time_format(ng_get_host_uint(k, 8), buf);
		return buf;
	}
	if (names)
		table_value(f, k, buf);
	else
		ng_format_value(f, k, buf);
	if (f->type == NG_FT_ADDR && (g->plen4 || g->plen6)) {
		unsigned plen = ng_addr_is_v4(k) ? g->plen4 : g->plen6;
		if (plen)
			snprintf(buf + strlen(buf), 16, "/%u", plen);
	}
	return buf;
}

/* One row of a machine format: named values, quoted (strings) or not. */
enum { MR_COLS = NG_FIELD_COUNT + 16, MR_VAL = 280 };
typedef struct mrow {
	size_t n;
	const char *name[MR_COLS];
	bool quoted[MR_COLS];
	char val[MR_COLS][MR_VAL];
} mrow;

static void mr_add(mrow *m, const char *name, bool quoted, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void mr_add(mrow *m, const char *name, bool quoted, const char *fmt, ...)
{
	if (m->n == MR_COLS)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m->val[m->n], MR_VAL, fmt, ap);
	va_end(ap);
	m->name[m->n] = name;
	m->quoted[m->n++] = quoted;
}

static void mr_u64(mrow *m, const char *name, uint64_t v)
{
	mr_add(m, name, false, "%" PRIu64, v);
}

static void csv_field(FILE *out, const char *s)
{
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

/* Writes row m; `index` is its 0-based position (CSV header before the
 * first, JSON commas between). */
static void mr_write(FILE *out, const ng_output_opts *o, const mrow *m, size_t index)
{
	if (o->fmt == NG_FMT_CSV) {
		if (index == 0 && o->header)
			for (size_t i = 0; i < m->n; i++)
				fprintf(out, "%s%s", m->name[i], i + 1 < m->n ? "," : "\n");
		for (size_t i = 0; i < m->n; i++) {
			csv_field(out, m->val[i]);
			fputc(i + 1 < m->n ? ',' : '\n', out);
		}
		return;
	}
	if (o->fmt == NG_FMT_JSON)
		fputs(index ? ",\n" : "\n", out);
	fputc('{', out);
	for (size_t i = 0; i < m->n; i++) {
		fprintf(out, "%s\"%s\":", i ? "," : "", m->name[i]);
		if (m->quoted[i])
			ng_json_put_str(out, m->val[i]);
		else
			fputs(m->val[i], out);
	}
	fputs(o->fmt == NG_FMT_JSON ? "}" : "}\n", out);
}

static bool key_quoted(const ng_query *q, size_t j)
{
	const ng_group_key *g = &q->keys[j];
	const ng_field *f = &ng_fields[g->field];
	return g->bucket_ms || f->type == NG_FT_ADDR || f->type == NG_FT_MAC ||
	       f->type == NG_FT_TIME || f->type == NG_FT_STR || f->id == NG_F_SAMPLING_SOURCE;
}

/* The key columns of row key k. */
static void mr_keys(mrow *m, const ng_query *q, const uint8_t *k)
{
	size_t off = 0;
	for (size_t j = 0; j < q->nkeys; j++) {
		char buf[96];
		ng_format_key(q, j, k + off, false, buf);
		mr_add(m, q->keys[j].label, key_quoted(q, j), "%s", buf);
		off += ng_fields[q->keys[j].field].size;
	}
}

static void mr_time(mrow *m, const char *name, uint64_t ms)
{
	char t[40];
	ng_time_format(ms, t);
	mr_add(m, name, true, "%s", t);
}

/* flows, packets, bytes and integer rates of an aggregate. */
static void mr_counts(mrow *m, const ng_agg_row *r)
{
	mr_u64(m, "flows", r->flows);
	mr_u64(m, "packets", r->packets);
	mr_u64(m, "bytes", r->bytes);
	uint64_t d = r->last > r->first ? r->last - r->first : 0;
	mr_u64(m, "pps", d ? r->packets * 1000 / d : 0);
	mr_u64(m, "bps", d ? r->bytes * 8000 / d : 0);
	mr_u64(m, "bpp", r->packets ? r->bytes / r->packets : 0);
}

static void json_summary(FILE *out, const ng_query_result *res)
{
	char t1[40], t2[40];
	ng_time_format(res->first, t1);
	ng_time_format(res->last, t2);
	fprintf(out,
	        "{\"flows\":%" PRIu64 ",\"packets\":%" PRIu64 ",\"bytes\":%" PRIu64
	        ",\"first\":\"%s\",\"last\":\"%s\",\"groups\":%" PRIu64
	        ",\"groups_exact\":%s,\"rows_scanned\":%" PRIu64 ",\"segments_read\":%" PRIu64
	        ",\"segments_skipped\":%" PRIu64 ",\"segments_pruned\":%" PRIu64
	        ",\"segments_corrupt\":%" PRIu64 ",\"segments_damaged\":%" PRIu64
	        ",\"segments_rollup\":%" PRIu64 ",\"bytes_read\":%" PRIu64 ",\"elapsed_s\":%.6f}",
	        res->flows_total, res->packets_total, res->bytes_total, t1, t2, res->groups,
	        res->groups_exact || !res->groups ? "true" : "false", res->scan.rows_scanned,
	        res->scan.segments_read, res->scan.segments_skipped, res->scan.segments_pruned,
	        res->scan.errors, res->scan.segments_damaged, res->scan.segments_rollup,
	        res->scan.bytes_read, res->elapsed_s);
}

/* {"query":{...},"rows":[ */
static void json_begin(FILE *out, const char *kind, const ng_query *q, const ng_output_opts *o,
                       uint64_t interval_ms)
{
	char t[40];
	fprintf(out, "{\"query\":{\"kind\":\"%s\",\"filter\":", kind);
	ng_json_put_str(out, o->filter ? o->filter : "");
	ng_time_format(q->from_ms, t);
	fprintf(out, ",\"from\":\"%s\"", t);
	if (q->to_ms != UINT64_MAX) {
		ng_time_format(q->to_ms, t);
		fprintf(out, ",\"to\":\"%s\"", t);
	} else {
		fprintf(out, ",\"to\":null");
	}
	fprintf(out, ",\"keys\":[");
	for (size_t j = 0; j < q->nkeys; j++) {
		fputs(j ? "," : "", out);
		ng_json_put_str(out, q->keys[j].label);
	}
	fprintf(out, "],\"order\":\"%s\",\"limit\":%zu", ng_order_name(q->order), q->limit);
	if (q->key_prefix && *q->key_prefix) {
		fputs(",\"prefix\":", out);
		ng_json_put_str(out, q->key_prefix);
	}
	if (interval_ms)
		fprintf(out, ",\"interval_s\":%" PRIu64, interval_ms / 1000);
	fprintf(out, "},\"rows\":[");
}

static void json_end(FILE *out, const ng_output_opts *o, const ng_query_result *res)
{
	fputs("\n]", out);
	if (o->summary) {
		fputs(",\"summary\":", out);
		json_summary(out, res);
	}
	fputs("}\n", out);
}

static int finish(FILE *out, const ng_output_opts *o, const ng_query_result *res)
{
	if (o->fmt == NG_FMT_TABLE && o->summary) {
		fputc('\n', out);
		ng_output_summary(out, res);
	}
	return ferror(out) ? -1 : 0;
}

/* The groups of res in a machine-readable format (CSV, NDJSON, or JSON
 * whose query is of `kind`): times, keys, counts and rates per row.
 * Returns 0, or -1 on a write error. */
static int write_groups(FILE *out, const char *kind, const ng_query *q, const ng_query_result *res,
                        const ng_output_opts *o)
{
	if (o->fmt == NG_FMT_JSON)
		json_begin(out, kind, q, o, 0);
	for (size_t i = 0; i < res->nrows; i++) {
		const ng_agg_row *r = &res->rows[i];
		mrow m = {0};
		mr_time(&m, "first_seen", r->first);
		mr_time(&m, "last_seen", r->last);
		mr_keys(&m, q, r->key);
		mr_counts(&m, r);
		mr_write(out, o, &m, i);
	}
	if (o->fmt == NG_FMT_JSON)
		json_end(out, o, res);
	return ferror(out) ? -1 : 0;
}

int ng_write_top(FILE *out, const ng_query *q, const ng_query_result *res, const ng_output_opts *o)
{
	if (o->fmt == NG_FMT_TABLE) {
		top_table(out, q, res, o->header);
		return finish(out, o, res);
	}
	return write_groups(out, "top", q, res, o);
}

int ng_write_agg(FILE *out, const ng_query *q, const ng_query_result *res, const ng_output_opts *o)
{
	if (o->fmt != NG_FMT_TABLE)
		return write_groups(out, "aggregate", q, res, o);
	/* nfdump -A: Date first seen, Duration, the keys, Packets, Bytes, bps, Bpp, Flows */
	int width[NG_QUERY_MAX_KEYS];
	char buf[96], t[40], a[32], b[32], c[32], d[32];
	key_widths(q, res->nrows ? res->rows[0].key : NULL, sizeof *res->rows, res->nrows, width);
	if (o->header) {
		fprintf(out, "%-23s %10s", "Date first seen", "Duration");
		for (size_t j = 0; j < q->nkeys; j++)
			fprintf(out, " %*s", width[j], key_title(&q->keys[j]));
		fprintf(out, " %9s %9s %9s %6s %7s\n", "Packets", "Bytes", "bps", "Bpp", "Flows");
	}
	for (size_t i = 0; i < res->nrows; i++) {
		const ng_agg_row *r = &res->rows[i];
		double dur = r->last > r->first ? (double)(r->last - r->first) / 1e3 : 0;
		fprintf(out, "%-23s %10.3f", table_time(r->first, t), dur);
		size_t off = 0;
		for (size_t j = 0; j < q->nkeys; j++) {
			fprintf(out, " %*s", width[j],
			        ng_format_key(q, j, r->key + off, true, buf));
			off += ng_fields[q->keys[j].field].size;
		}
		fprintf(out, " %9s %9s %9s %6s %7s\n", ng_format_scaled((double)r->packets, a),
		        ng_format_scaled((double)r->bytes, b),
		        ng_format_scaled(ng_agg_metric(r, NG_ORDER_BPS), c),
		        ng_format_scaled(ng_agg_metric(r, NG_ORDER_BPP), d),
		        ng_format_scaled((double)r->flows, t));
	}
	return finish(out, o, res);
}

int ng_write_list(FILE *out, const ng_query *q, const ng_query_result *res, const ng_output_opts *o)
{
	if (o->fmt == NG_FMT_TABLE) {
		list_table(out, res, o->header);
		return finish(out, o, res);
	}
	if (o->fmt == NG_FMT_JSON)
		json_begin(out, "list", q, o, 0);
	for (size_t i = 0; i < res->nflows; i++) {
		mrow m = {0};
		for (size_t f = 0; f < NG_FIELD_COUNT; f++) {
			const ng_field *fd = &ng_fields[f];
			char buf[96];
			ng_format_value(fd, ng_field_ptr(fd, &res->flows[i]), buf);
			bool quoted = fd->type == NG_FT_ADDR || fd->type == NG_FT_MAC ||
			              fd->type == NG_FT_TIME || fd->type == NG_FT_STR ||
			              fd->id == NG_F_SAMPLING_SOURCE;
			mr_add(&m, fd->name, quoted, "%s", buf);
		}
		mr_write(out, o, &m, i);
	}
	if (o->fmt == NG_FMT_JSON)
		json_end(out, o, res);
	return ferror(out) ? -1 : 0;
}

/* The label of series i ("other" for s->nseries) into buf. */
static const char *series_label(const ng_query *q, const ng_series *s, size_t i, char *buf,
                                size_t len)
{
	if (i >= s->nseries)
		return "other";
	if (!q->nkeys)
		return "total";
	size_t off = 0, n = 0;
	buf[0] = 0;
	for (size_t j = 0; j < q->nkeys; j++) {
		char k[96];
		ng_format_key(q, j, s->top[i].key + off, false, k);
		off += ng_fields[q->keys[j].field].size;
		n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s", j ? "," : "", k);
	}
	return buf;
}

int ng_write_series(FILE *out, const ng_query *q, const ng_series *s, const ng_output_opts *o)
{
	double secs = (double)s->interval_ms / 1000.0;
	uint64_t isecs = s->interval_ms / 1000;
	char label[512], t[40], a[32], b[32], c[32], d[32], e[32];
	if (o->fmt == NG_FMT_TABLE) {
		int w = 6;
		for (size_t i = 0; i <= s->nseries; i++) {
			int l = (int)strlen(series_label(q, s, i, label, sizeof label));
			if (l > w)
				w = l;
		}
		if (o->header) {
			fprintf(out, "Time series, %" PRIu64 " s buckets", isecs);
			if (q->nkeys) {
				fprintf(out, ", top %zu ", s->nseries);
				for (size_t j = 0; j < q->nkeys; j++)
					fprintf(out, "%s%s", j ? "," : "", q->keys[j].label);
				fprintf(out, " by %s%s", ng_order_name(q->order),
				        s->has_other ? " and other" : "");
			}
			fprintf(out, ":\n%-19s %-*s %9s %9s %9s %9s %9s\n", "Time (UTC)", w,
			        q->nkeys ? "Key" : "Series", "Flows", "Packets", "Bytes", "bps",
			        "pps");
		}
		for (size_t i = 0; i < s->npoints; i++) {
			const ng_series_point *p = &s->points[i];
			table_time(p->t, t);
			t[19] = 0; /* whole seconds */
			fprintf(out, "%-19s %-*s %9s %9s %9s %9s %9s\n", t, w,
			        series_label(q, s, p->series, label, sizeof label),
			        ng_format_scaled((double)p->flows, a),
			        ng_format_scaled((double)p->packets, b),
			        ng_format_scaled((double)p->bytes, c),
			        ng_format_scaled(8.0 * (double)p->bytes / secs, d),
			        ng_format_scaled((double)p->packets / secs, e));
		}
		return finish(out, o, &s->res);
	}
	return ng_write_series_ext(out, q, s, NULL, o);
}

/* The points of s as rows (time + shift, key unless `nokey`, counts,
 * rates over the bucket). */
static void series_rows(FILE *out, const ng_query *q, const ng_series *s, uint64_t shift,
                        bool nokey, const ng_output_opts *o)
{
	uint64_t isecs = s->interval_ms / 1000;
	char label[512];
	for (size_t i = 0; i < s->npoints; i++) {
		const ng_series_point *p = &s->points[i];
		mrow m = {0};
		mr_time(&m, "time", p->t + shift);
		if (!nokey)
			mr_add(&m, "key", true, "%s",
			       series_label(q, s, p->series, label, sizeof label));
		mr_u64(&m, "flows", p->flows);
		mr_u64(&m, "packets", p->packets);
		mr_u64(&m, "bytes", p->bytes);
		mr_u64(&m, "bps", p->bytes * 8 / isecs);
		mr_u64(&m, "pps", p->packets / isecs);
		mr_write(out, o, &m, i);
	}
}

/* ,"name":{…,"flows":…,"packets":…,"bytes":…,"rows":[ — a part's head. */
static void part_begin(FILE *out, const char *name, const ng_query_result *r)
{
	fprintf(out, ",\n\"%s\":{\"flows\":%" PRIu64 ",\"packets\":%" PRIu64 ",\"bytes\":%" PRIu64,
	        name, r->flows_total, r->packets_total, r->bytes_total);
}

/* The JSON parts of x after a series answer's rows. */
static void series_extra(FILE *out, const ng_series_extra *x, const ng_output_opts *o)
{
	if (x->rev) {
		part_begin(out, "reverse", &x->rev->res);
		fputs(",\"keys\":[", out);
		for (size_t j = 0; j < x->rq->nkeys; j++) {
			fputs(j ? "," : "", out);
			ng_json_put_str(out, x->rq->keys[j].label);
		}
		fputs("],\"rows\":[", out);
		series_rows(out, x->rq, x->rev, 0, false, o);
		fputs("\n]}", out);
	}
	if (x->prev) {
		char t[40];
		part_begin(out, "previous", &x->prev->res);
		fprintf(out, ",\"offset_s\":%" PRIu64, x->prev_ms / 1000);
		ng_time_format(x->pq->from_ms, t);
		fprintf(out, ",\"from\":\"%s\"", t);
		ng_time_format(x->pq->to_ms, t);
		fprintf(out, ",\"to\":\"%s\",\"rows\":[", t);
		series_rows(out, NULL, x->prev, x->prev_ms, true, o);
		fputs("\n]}", out);
	}
}

int ng_write_series_ext(FILE *out, const ng_query *q, const ng_series *s, const ng_series_extra *x,
                        const ng_output_opts *o)
{
	if (o->fmt == NG_FMT_TABLE)
		return ng_write_series(out, q, s, o);
	if (o->fmt == NG_FMT_JSON)
		json_begin(out, "series", q, o, s->interval_ms);
	series_rows(out, q, s, 0, false, o);
	if (o->fmt == NG_FMT_JSON) {
		fputs("\n]", out);
		if (x)
			series_extra(out, x, o);
		if (o->summary) {
			fputs(",\"summary\":", out);
			json_summary(out, &s->res);
		}
		fputs("}\n", out);
	}
	return ferror(out) ? -1 : 0;
}

int ng_write_pairs(FILE *out, const ng_query *q, const ng_pairs *p, const ng_output_opts *o)
{
	const ng_query_result *res = &p->res;
	if (o->fmt == NG_FMT_TABLE) {
		ng_query_result r2 = *res;
		ng_agg_row *rows = NULL;
		if (p->has_other) {
			/* the table prints "other" as a row whose keys read "other" */
			rows = malloc((res->nrows + 1) * sizeof *rows);
			if (!rows)
				return -1;
			memcpy(rows, res->rows, res->nrows * sizeof *rows);
			rows[res->nrows] = p->other;
			r2.rows = rows;
		}
		int w0 = (int)strlen(key_title(&q->keys[0])),
		    w1 = (int)strlen(key_title(&q->keys[1]));
		char k0[96], k1[96], a[32], b[32], c[32];
		size_t o1 = ng_fields[q->keys[0].field].size;
		for (size_t i = 0; i < res->nrows; i++) {
			int l0 = (int)strlen(ng_format_key(q, 0, res->rows[i].key, true, k0));
			int l1 = (int)strlen(ng_format_key(q, 1, res->rows[i].key + o1, true, k1));
			w0 = l0 > w0 ? l0 : w0;
			w1 = l1 > w1 ? l1 : w1;
		}
		if (o->header) {
			fprintf(out, "Top %zu pairs %s -> %s by %s%s:\n", res->nrows,
			        q->keys[0].label, q->keys[1].label, ng_order_name(q->order),
			        p->has_other ? ", and the rest as other" : "");
			fprintf(out, "%*s    %-*s %14s %16s %16s\n", w0, key_title(&q->keys[0]), w1,
			        key_title(&q->keys[1]), "Flows(%)", "Packets(%)", "Bytes(%)");
		}
		size_t n = res->nrows + (p->has_other ? 1 : 0);
		for (size_t i = 0; i < n; i++) {
			const ng_agg_row *r = &r2.rows[i];
			bool other = i == res->nrows;
			char c1[48], c2[48], c3[48];
			snprintf(c1, sizeof c1, "%s(%4.1f)", ng_format_scaled((double)r->flows, a),
			         pct(r->flows, res->flows_total));
			snprintf(c2, sizeof c2, "%s(%4.1f)",
			         ng_format_scaled((double)r->packets, b),
			         pct(r->packets, res->packets_total));
			snprintf(c3, sizeof c3, "%s(%4.1f)", ng_format_scaled((double)r->bytes, c),
			         pct(r->bytes, res->bytes_total));
			fprintf(out, "%*s -> %-*s %14s %16s %16s\n", w0,
			        other ? "other" : ng_format_key(q, 0, r->key, true, k0), w1,
			        other ? "other" : ng_format_key(q, 1, r->key + o1, true, k1), c1,
			        c2, c3);
		}
		free(rows);
		return finish(out, o, res);
	}
	if (o->fmt == NG_FMT_JSON)
		json_begin(out, "pairs", q, o, 0);
	size_t n = res->nrows + (p->has_other ? 1 : 0);
	for (size_t i = 0; i < n; i++) {
		bool other = i == res->nrows;
		const ng_agg_row *r = other ? &p->other : &res->rows[i];
		mrow m = {0};
		if (other) {
			mr_add(&m, "source", true, "other");
			mr_add(&m, "target", true, "other");
		} else {
			char k[96];
			mr_add(&m, "source", key_quoted(q, 0), "%s",
			       ng_format_key(q, 0, r->key, false, k));
			mr_add(&m, "target", key_quoted(q, 1), "%s",
			       ng_format_key(q, 1, r->key + ng_fields[q->keys[0].field].size, false,
			                     k));
		}
		mr_u64(&m, "flows", r->flows);
		mr_u64(&m, "packets", r->packets);
		mr_u64(&m, "bytes", r->bytes);
		mr_write(out, o, &m, i);
	}
	if (o->fmt == NG_FMT_JSON)
		json_end(out, o, res);
	return ferror(out) ? -1 : 0;
}

/* A Sankey's side of a link or a node: its key, or "other". */
static void mr_node(mrow *m, const char *name, const ng_query *q, const ng_sankey *s, size_t j,
                    size_t i)
{
	const ng_sankey_node *n = &s->nodes[j][i];
	char k[96];
	if (n->other)
		mr_add(m, name, true, "other");
	else
		mr_add(m, name, key_quoted(q, j), "%s", ng_format_key(q, j, n->key, false, k));
}

int ng_write_sankey(FILE *out, const ng_query *q, const ng_sankey *s, const ng_output_opts *o)
{
	json_begin(out, "sankey", q, o, 0);
	for (size_t i = 0; i < s->nlinks; i++) {
		const ng_sankey_link *l = &s->links[i];
		mrow m = {0};
		mr_u64(&m, "stage", l->stage);
		mr_node(&m, "source", q, s, l->stage, l->source);
		mr_node(&m, "target", q, s, l->stage + 1, l->target);
		mr_add(&m, "source_other", false, "%s",
		       s->nodes[l->stage][l->source].other ? "true" : "false");
		mr_add(&m, "target_other", false, "%s",
		       s->nodes[l->stage + 1][l->target].other ? "true" : "false");
		mr_u64(&m, "flows", l->flows);
		mr_u64(&m, "packets", l->packets);
		mr_u64(&m, "bytes", l->bytes);
		mr_write(out, o, &m, i);
	}
	fputs("\n],\"stages\":[", out);
	for (size_t j = 0; j < s->nstages; j++) {
		fprintf(out, "%s{\"field\":", j ? "," : "");
		ng_json_put_str(out, q->keys[j].label);
		fputs(",\"nodes\":[", out);
		for (size_t i = 0; i < s->nnodes[j]; i++) {
			const ng_sankey_node *n = &s->nodes[j][i];
			mrow m = {0};
			mr_node(&m, "key", q, s, j, i);
			mr_add(&m, "other", false, "%s", n->other ? "true" : "false");
			mr_u64(&m, "flows", n->flows);
			mr_u64(&m, "packets", n->packets);
			mr_u64(&m, "bytes", n->bytes);
			mr_write(out, o, &m, i);
		}
		fputs("\n]}", out);
	}
	fputc(']', out);
	if (o->summary) {
		fputs(",\"summary\":", out);
		json_summary(out, &s->res);
	}
	fputs("}\n", out);
	return ferror(out) ? -1 : 0;
}

int ng_write_bidir(FILE *out, const ng_query *q0, const ng_bidir *b, const ng_output_opts *o)
{
	ng_query qk;
	ng_bidir_keys(q0, &qk);
	const ng_query *q = &qk;
	char buf[96], t[40], x[6][32];
	if (o->fmt == NG_FMT_TABLE) {
		int width[NG_QUERY_MAX_KEYS];
		key_widths(q, b->nrows ? b->rows[0].key : NULL, sizeof *b->rows, b->nrows, width);
		if (o->header) {
			fprintf(out, "Top %zu of %" PRIu64 " conversations (A <-> B) by %s:\n",
			        b->nrows, b->conversations, ng_order_name(q0->order));
			fprintf(out, "%-23s %10s", "Date first seen", "Duration");
			for (size_t j = 0; j < q->nkeys; j++)
				fprintf(out, " %*s", width[j], key_title(&q->keys[j]));
			fprintf(out, " %7s %9s %9s %7s %9s %9s\n", "Fl A>B", "Pkt A>B", "Byt A>B",
			        "Fl B>A", "Pkt B>A", "Byt B>A");
		}
		for (size_t i = 0; i < b->nrows; i++) {
			const ng_bidir_row *r = &b->rows[i];
			uint64_t f1 = r->ab.flows ? r->ab.first : UINT64_MAX;
			uint64_t f2 = r->ba.flows ? r->ba.first : UINT64_MAX;
			uint64_t first = f1 < f2 ? f1 : f2;
			uint64_t last = r->ab.last > r->ba.last ? r->ab.last : r->ba.last;
			fprintf(out, "%-23s %10.3f", table_time(first, t),
			        last > first ? (double)(last - first) / 1e3 : 0);
			size_t off = 0;
			for (size_t j = 0; j < q->nkeys; j++) {
				fprintf(out, " %*s", width[j],
				        ng_format_key(q, j, r->key + off, true, buf));
				off += ng_fields[q->keys[j].field].size;
			}
			fprintf(out, " %7s %9s %9s %7s %9s %9s\n",
			        ng_format_scaled((double)r->ab.flows, x[0]),
			        ng_format_scaled((double)r->ab.packets, x[1]),
			        ng_format_scaled((double)r->ab.bytes, x[2]),
			        ng_format_scaled((double)r->ba.flows, x[3]),
			        ng_format_scaled((double)r->ba.packets, x[4]),
			        ng_format_scaled((double)r->ba.bytes, x[5]));
		}
		return finish(out, o, &b->res);
	}
	if (o->fmt == NG_FMT_JSON)
		json_begin(out, "conversations", q, o, 0);
	for (size_t i = 0; i < b->nrows; i++) {
		const ng_bidir_row *r = &b->rows[i];
		mrow m = {0};
		mr_keys(&m, q, r->key);
		mr_u64(&m, "flows_ab", r->ab.flows);
		mr_u64(&m, "packets_ab", r->ab.packets);
		mr_u64(&m, "bytes_ab", r->ab.bytes);
		mr_u64(&m, "flows_ba", r->ba.flows);
		mr_u64(&m, "packets_ba", r->ba.packets);
		mr_u64(&m, "bytes_ba", r->ba.bytes);
		mr_write(out, o, &m, i);
	}
	if (o->fmt == NG_FMT_JSON)
		json_end(out, o, &b->res);
	return ferror(out) ? -1 : 0;
}
