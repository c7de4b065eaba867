/* output.c — query results as table, CSV or NDJSON (see output.h). */
#include "query/output.h"

#include <inttypes.h>
#include <string.h>
#include <strings.h>

#include "core/addr.h"
#include "core/timefmt.h"

bool ng_format_parse(const char *s, enum ng_format *out)
{
	if (!strcasecmp(s, "table"))
		*out = NG_FMT_TABLE;
	else if (!strcasecmp(s, "csv"))
		*out = NG_FMT_CSV;
	else if (!strcasecmp(s, "ndjson") || !strcasecmp(s, "json"))
		*out = NG_FMT_NDJSON;
	else
		return false;
	return true;
}

static uint64_t get_uint(const uint8_t *p, unsigned sz)
{
	switch (sz) {
	case 1: return *p;
	case 2: { uint16_t v; memcpy(&v, p, 2); return v; }
	case 4: { uint32_t v; memcpy(&v, p, 4); return v; }
	default: { uint64_t v; memcpy(&v, p, 8); return v; }
	}
}

size_t ng_format_value(const ng_field *f, const uint8_t *p, char *buf)
{
	switch (f->type) {
	case NG_FT_ADDR: ng_addr_format(p, buf); break;
	case NG_FT_MAC: ng_mac_format(p, buf); break;
	case NG_FT_TIME: ng_time_format(get_uint(p, 8), buf); break;
	default:
		if (f->id == NG_F_SAMPLING_SOURCE)
			snprintf(buf, 64, "%s", ng_sampling_source_name(*p));
		else
			snprintf(buf, 64, "%" PRIu64, get_uint(p, f->size));
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
	static const struct { const char *label, *title; } titles[] = {
		{"srcip", "Src IP Addr"}, {"dstip", "Dst IP Addr"}, {"ip", "IP Addr"},
		{"srcport", "Src Port"},  {"dstport", "Dst Port"},  {"port", "Port"},
		{"proto", "Proto"},       {"exporter", "Exporter"}, {"srcas", "Src AS"},
		{"dstas", "Dst AS"},      {"as", "AS"},             {"inif", "Input If"},
		{"outif", "Output If"},   {"if", "Interface"},      {"nexthop", "Next Hop"},
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

static int top_table(FILE *out, const ng_query *q, const ng_query_result *res, bool header)
{
	char buf[64], t[40];
	int width[NG_QUERY_MAX_KEYS];
	for (size_t j = 0; j < q->nkeys; j++)
		width[j] = (int)strlen(key_title(&q->keys[j]));
	for (size_t i = 0; i < res->nrows; i++) {
		size_t off = 0;
		for (size_t j = 0; j < q->nkeys; j++) {
			const uint8_t *p;
			const ng_field *f = key_field(q, j, &off, &p, &res->rows[i]);
			table_value(f, p, buf);
			if ((int)strlen(buf) > width[j])
				width[j] = (int)strlen(buf);
		}
	}
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
			const ng_field *f = key_field(q, j, &off, &p, r);
			table_value(f, p, buf);
			fprintf(out, " %*s", width[j], buf);
		}
		char c1[32], c2[32], c3[32], c4[32], c5[32], c6[32];
		snprintf(c1, sizeof c1, "%s(%4.1f)", ng_format_scaled((double)r->flows, c4),
			 pct(r->flows, res->flows_total));
		snprintf(c2, sizeof c2, "%s(%4.1f)", ng_format_scaled((double)r->packets, c5),
			 pct(r->packets, res->packets_total));
		snprintf(c3, sizeof c3, "%s(%4.1f)", ng_format_scaled((double)r->bytes, c6),
			 pct(r->bytes, res->bytes_total));
		fprintf(out, " %14s %16s %16s", c1, c2, c3);
		fprintf(out, " %10s", ng_format_scaled(ng_agg_metric(r, NG_ORDER_PPS), c4));
		fprintf(out, " %10s", ng_format_scaled(ng_agg_metric(r, NG_ORDER_BPS), c5));
		fprintf(out, " %6s\n", ng_format_scaled(ng_agg_metric(r, NG_ORDER_BPP), c6));
	}
	return ferror(out) ? -1 : 0;
}

static int top_csv_json(FILE *out, const ng_query *q, const ng_query_result *res, bool json,
			bool header)
{
	char buf[64], t1[40], t2[40];
	if (!json && header) {
		fprintf(out, "first_seen,last_seen");
		for (size_t j = 0; j < q->nkeys; j++)
			fprintf(out, ",%s", q->keys[j].label);
		fprintf(out, ",flows,packets,bytes,pps,bps,bpp\n");
	}
	for (size_t i = 0; i < res->nrows; i++) {
		const ng_agg_row *r = &res->rows[i];
		ng_time_format(r->first, t1);
		ng_time_format(r->last, t2);
		if (json)
			fprintf(out, "{\"first_seen\":\"%s\",\"last_seen\":\"%s\"", t1, t2);
		else
			fprintf(out, "%s,%s", t1, t2);
		size_t off = 0;
		for (size_t j = 0; j < q->nkeys; j++) {
			const uint8_t *p;
			const ng_field *f = key_field(q, j, &off, &p, r);
			ng_format_value(f, p, buf);
			bool quoted = f->type == NG_FT_ADDR || f->type == NG_FT_MAC ||
				      f->type == NG_FT_TIME || f->id == NG_F_SAMPLING_SOURCE;
			if (json)
				fprintf(out, quoted ? ",\"%s\":\"%s\"" : ",\"%s\":%s",
					q->keys[j].label, buf);
			else
				fprintf(out, ",%s", buf);
		}
		uint64_t pps = (uint64_t)ng_agg_metric(r, NG_ORDER_PPS);
		uint64_t bps = (uint64_t)ng_agg_metric(r, NG_ORDER_BPS);
		uint64_t bpp = (uint64_t)ng_agg_metric(r, NG_ORDER_BPP);
		if (json)
			fprintf(out,
				",\"flows\":%" PRIu64 ",\"packets\":%" PRIu64 ",\"bytes\":%" PRIu64
				",\"pps\":%" PRIu64 ",\"bps\":%" PRIu64 ",\"bpp\":%" PRIu64 "}\n",
				r->flows, r->packets, r->bytes, pps, bps, bpp);
		else
			fprintf(out,
				",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
				",%" PRIu64 "\n",
				r->flows, r->packets, r->bytes, pps, bps, bpp);
	}
	return ferror(out) ? -1 : 0;
}

int ng_output_top(FILE *out, const ng_query *q, const ng_query_result *res, enum ng_format fmt,
		  bool header)
{
	if (fmt == NG_FMT_TABLE)
		return top_table(out, q, res, header);
	return top_csv_json(out, q, res, fmt == NG_FMT_NDJSON, header);
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
		double dur = r->flow_end > r->flow_start ? (double)(r->flow_end - r->flow_start) / 1e3
							 : 0;
		fprintf(out, "%-23s %10.3f %-5s %24s -> %-24s %8s %8s %5u\n",
			table_time(r->flow_start, t), dur, pn, addr_port(r->src_addr, r->src_port, s),
			addr_port(r->dst_addr, r->dst_port, d), ng_format_scaled((double)r->packets, p1),
			ng_format_scaled((double)r->bytes, p2), 1u);
	}
	return ferror(out) ? -1 : 0;
}

static int list_csv(FILE *out, const ng_query_result *res, bool header)
{
	char buf[64];
	if (header)
		for (size_t f = 0; f < NG_FIELD_COUNT; f++)
			fprintf(out, "%s%c", ng_fields[f].name, f + 1 < NG_FIELD_COUNT ? ',' : '\n');
	for (size_t i = 0; i < res->nflows; i++) {
		for (size_t f = 0; f < NG_FIELD_COUNT; f++) {
			ng_format_value(&ng_fields[f], ng_field_ptr(&ng_fields[f], &res->flows[i]), buf);
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
		res->flows_total, ng_format_scaled((double)res->bytes_total, b), res->packets_total);
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
		", corrupt: %" PRIu64 ", bytes read: %" PRIu64 "\n",
		res->scan.rows_scanned, res->scan.segments_read, res->scan.segments_skipped,
		res->scan.errors, res->scan.bytes_read);
	fprintf(out, "Elapsed: %.3f s", res->elapsed_s);
	if (res->elapsed_s > 0)
		fprintf(out, " (%.1f M rows/s)", (double)res->scan.rows_scanned / res->elapsed_s / 1e6);
	fprintf(out, "\n");
}
