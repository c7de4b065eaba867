/*
 * counters.c — `nagare counters` (also reached as `nagare query --counters`):
 * the sFlow counter-sample time series of a store (store/counters.h).
 *
 * Rows are the counter samples in time order, filtered by agent, interface
 * index and time range.  Each row also carries the rates since the
 * previous sample of the same (agent, sub-agent, data source): in_bps and
 * out_bps from the 64-bit octet counters (a counter that went backwards —
 * an agent restart — gives no rate), and utilization in percent of
 * ifSpeed, so a UI can show interface use beside flows.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/store_path.h"
#include "cli/usage.h"
#include "core/addr.h"
#include "core/timefmt.h"
#include "store/counters.h"

static const char counters_help[] =
    "usage: nagare counters [--store DIR] [--from T] [--to T] [--agent ADDR] [--if N]\n"
    "                       [--format table|csv|ndjson]\n"
    "       nagare query --counters --store DIR ... (the same)\n"
    "\n"
    "Lists the sFlow counter samples (generic interface, Ethernet and host\n"
    "counters) stored by `nagare collect`, oldest first, with the bit rates\n"
    "since the previous sample of the same agent and interface.\n"
    "\n"
    "  -s, --store DIR       flow store (default: $NAGARE_STORE,\n"
    "                        else /var/lib/nagare (the service's), else\n"
    "                        ~/.local/share/nagare)\n"
    "  -F, --from T          start (RFC 3339, 'YYYY/MM/DD.HH:MM:SS', epoch s, -1h); default all\n"
    "  -T, --to T            end, exclusive; default now + 1 day\n"
    "  -a, --agent ADDR      only samples of this agent address\n"
    "  -i, --if N            only samples of this ifIndex\n"
    "  -f, --format FORMAT   table (default), csv or ndjson\n"
    "  -h, --help            this help\n";

enum fmt { FMT_TABLE, FMT_CSV, FMT_NDJSON };

struct rows {
	ng_counter_sample *s;
	size_t n, cap;
	uint8_t agent[16];
	bool by_agent;
	bool by_if;
	uint32_t ifindex;
};

static int keep(const ng_counter_sample *s, size_t n, void *arg)
{
	struct rows *r = arg;
	for (size_t i = 0; i < n; i++) {
		if (r->by_agent && memcmp(s[i].agent, r->agent, 16))
			continue;
		if (r->by_if && s[i].if_index != r->ifindex && s[i].source_index != r->ifindex)
			continue;
		if (r->n == r->cap) {
			size_t cap = r->cap ? r->cap * 2 : 256;
			ng_counter_sample *p = realloc(r->s, cap * sizeof *p);
			if (!p)
				return -2;
			r->s = p;
			r->cap = cap;
		}
		r->s[r->n++] = s[i];
	}
	return 0;
}

static int by_time(const void *a, const void *b)
{
	const ng_counter_sample *x = a, *y = b;
	return x->time_received < y->time_received ? -1 : x->time_received > y->time_received;
}

static bool same_series(const ng_counter_sample *a, const ng_counter_sample *b)
{
	return !memcmp(a->agent, b->agent, 16) && a->sub_agent == b->sub_agent &&
	       a->source_type == b->source_type && a->source_index == b->source_index;
}

/* Rates of `s` against the previous sample of its series (a backwards
 * scan: counter samples are few, so quadratic in the worst case is fine
 * for a CLI listing; it stops at the first match). */
static void rates(const struct rows *r, size_t i, double *in_bps, double *out_bps, double *util)
{
	*in_bps = *out_bps = *util = -1;
	const ng_counter_sample *s = &r->s[i];
	if (!(s->parts & NG_CTR_IF))
		return;
	for (size_t j = i; j-- > 0;) {
		const ng_counter_sample *p = &r->s[j];
		if (!same_series(s, p) || !(p->parts & NG_CTR_IF))
			continue;
		double dt = (double)(s->time_received - p->time_received) / 1000.0;
		if (dt <= 0 || s->in_octets < p->in_octets || s->out_octets < p->out_octets)
			return;
		*in_bps = (double)(s->in_octets - p->in_octets) * 8 / dt;
		*out_bps = (double)(s->out_octets - p->out_octets) * 8 / dt;
		if (s->if_speed)
			*util =
			    100.0 * (*in_bps > *out_bps ? *in_bps : *out_bps) / (double)s->if_speed;
		return;
	}
}

static void print_row(FILE *out, enum fmt fmt, const struct rows *r, size_t i)
{
	const ng_counter_sample *s = &r->s[i];
	char t[40], ag[NG_ADDR_STRLEN], ex[NG_ADDR_STRLEN];
	ng_time_format(s->time_received, t);
	ng_addr_format(s->agent, ag);
	ng_addr_format(s->exporter, ex);
	double ib, ob, ut;
	rates(r, i, &ib, &ob, &ut);
	switch (fmt) {
	case FMT_NDJSON:
		fprintf(
		    out,
		    "{\"time_received\":\"%s\",\"exporter\":\"%s\",\"agent\":\"%s\",\"sub_agent\":"
		    "%" PRIu32 ",\"source_type\":%" PRIu32 ",\"source_index\":%" PRIu32
		    ",\"seq\":%" PRIu32 ",\"if_index\":%" PRIu32 ",\"if_type\":%" PRIu32
		    ",\"if_speed\":%" PRIu64 ",\"if_direction\":%" PRIu32 ",\"if_status\":%" PRIu32
		    ",\"in_octets\":%" PRIu64 ",\"in_ucast\":%" PRIu32 ",\"in_mcast\":%" PRIu32
		    ",\"in_bcast\":%" PRIu32 ",\"in_discards\":%" PRIu32 ",\"in_errors\":%" PRIu32
		    ",\"in_unknown\":%" PRIu32 ",\"out_octets\":%" PRIu64 ",\"out_ucast\":%" PRIu32
		    ",\"out_mcast\":%" PRIu32 ",\"out_bcast\":%" PRIu32 ",\"out_discards\":%" PRIu32
		    ",\"out_errors\":%" PRIu32,
		    t, ex, ag, s->sub_agent, s->source_type, s->source_index, s->seq, s->if_index,
		    s->if_type, s->if_speed, s->if_direction, s->if_status, s->in_octets,
		    s->in_ucast, s->in_mcast, s->in_bcast, s->in_discards, s->in_errors,
		    s->in_unknown, s->out_octets, s->out_ucast, s->out_mcast, s->out_bcast,
		    s->out_discards, s->out_errors);
		if (s->parts & NG_CTR_ETH)
			fprintf(out,
			        ",\"eth_fcs_errors\":%" PRIu32 ",\"eth_alignment_errors\":%" PRIu32,
			        s->eth[1], s->eth[0]);
		if (s->parts & NG_CTR_HOST_CPU)
			fprintf(out, ",\"load_one\":%.2f,\"cpu_num\":%" PRIu32, s->load_one,
			        s->cpu_num);
		if (s->parts & NG_CTR_HOST_MEM)
			fprintf(out, ",\"mem_total\":%" PRIu64 ",\"mem_free\":%" PRIu64,
			        s->mem_total, s->mem_free);
		if (s->parts & NG_CTR_HOST_NET)
			fprintf(out, ",\"net_bytes_in\":%" PRIu64 ",\"net_bytes_out\":%" PRIu64,
			        s->net_bytes_in, s->net_bytes_out);
		if (ib >= 0)
			fprintf(out, ",\"in_bps\":%.0f,\"out_bps\":%.0f", ib, ob);
		if (ut >= 0)
			fprintf(out, ",\"utilization\":%.3f", ut);
		fputs("}\n", out);
		break;
	case FMT_CSV:
		fprintf(out,
		        "%s,%s,%s,%" PRIu32 ",%" PRIu32 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
		        ",%" PRIu32 ",%" PRIu32 ",",
		        t, ex, ag, s->sub_agent, s->if_index, s->if_speed, s->in_octets,
		        s->out_octets, s->in_errors, s->out_errors);
		if (ib >= 0)
			fprintf(out, "%.0f,%.0f", ib, ob);
		else
			fputs(",", out);
		fputs("\n", out);
		break;
	case FMT_TABLE:
		fprintf(out,
		        "%-24s %-16s %5" PRIu32 " %10" PRIu32 " %14" PRIu64 " %16" PRIu64
		        " %16" PRIu64 " %8" PRIu32 " %8" PRIu32,
		        t, ag, s->sub_agent, s->if_index, s->if_speed, s->in_octets, s->out_octets,
		        s->in_errors, s->out_errors);
		if (ib >= 0)
			fprintf(out, " %14.0f %14.0f", ib, ob);
		fputs("\n", out);
		break;
	}
}

int ng_cmd_counters(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"store", required_argument, 0, 's'},
	    {"from", required_argument, 0, 'F'},
	    {"to", required_argument, 0, 'T'},
	    {"agent", required_argument, 0, 'a'},
	    {"if", required_argument, 0, 'i'},
	    {"format", required_argument, 0, 'f'},
	    {"counters", no_argument, 0, 'C'},
	    {"help", no_argument, 0, 'h'},
	    {0, 0, 0, 0},
	};
	const char *store = NULL;
	uint64_t now = ng_now_ms(), from = 0, to = now + 86400000ULL;
	enum fmt fmt = FMT_TABLE;
	struct rows r = {0};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "s:F:T:a:i:f:h", opts, NULL)) != -1) {
		switch (c) {
		case 's': store = optarg; break;
		case 'F':
			if (!ng_time_parse(optarg, now, &from))
				return ng_usage_fail("counters", "bad --from time '%s'", optarg);
			break;
		case 'T':
			if (!ng_time_parse(optarg, now, &to))
				return ng_usage_fail("counters", "bad --to time '%s'", optarg);
			break;
		case 'a':
			if (!ng_addr_parse(optarg, r.agent))
				return ng_usage_fail("counters", "bad --agent address '%s'",
				                     optarg);
			r.by_agent = true;
			break;
		case 'i': {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);
			if (*end || v > UINT32_MAX)
				return ng_usage_fail("counters", "bad --if index '%s'", optarg);
			r.by_if = true;
			r.ifindex = (uint32_t)v;
			break;
		}
		case 'f':
			if (!strcmp(optarg, "table"))
				fmt = FMT_TABLE;
			else if (!strcmp(optarg, "csv"))
				fmt = FMT_CSV;
			else if (!strcmp(optarg, "ndjson") || !strcmp(optarg, "json"))
				fmt = FMT_NDJSON;
			else
				return ng_usage_fail(
				    "counters", "bad --format '%s' (table, csv, ndjson)", optarg);
			break;
		case 'C': break; /* `nagare query --counters` hands its argv over whole */
		case 'h': fputs(counters_help, stdout); return 0;
		default: return ng_usage_error("counters", c, argv);
		}
	}
	char dbuf[4096];
	if (!(store = ng_cli_store("counters", store, false, dbuf, sizeof dbuf)))
		return 2;
	if (optind < argc)
		return ng_usage_fail("counters", "unexpected argument '%s'", argv[optind]);
	uint64_t errors = 0;
	int rc = ng_counter_scan(store, from, to, keep, &r, &errors);
	if (rc == -2) {
		fprintf(stderr, "nagare counters: out of memory\n");
		free(r.s);
		return 1;
	}
	/* no counters directory: a store with no counter samples yet */
	if (r.n)
		qsort(r.s, r.n, sizeof *r.s, by_time);
	if (fmt == FMT_CSV)
		puts(
		    "time_received,exporter,agent,sub_agent,if_index,if_speed,in_octets,out_octets,"
		    "in_errors,out_errors,in_bps,out_bps");
	else if (fmt == FMT_TABLE)
		printf("%-24s %-16s %5s %10s %14s %16s %16s %8s %8s %14s %14s\n", "time", "agent",
		       "sub", "ifindex", "speed", "in_octets", "out_octets", "in_err", "out_err",
		       "in_bps", "out_bps");
	for (size_t i = 0; i < r.n; i++)
		print_row(stdout, fmt, &r, i);
	free(r.s);
	return errors ? 1 : 0;
}
