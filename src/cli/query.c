/*
 * query.c — `nagare query`: list flows or top-N statistics from a store.
 *
 *   nagare query --store DIR [--from T] [--to T] [-s KEY[/ORDER]]... [-n N]
 *                [--format table|csv|ndjson] [--no-header] [-q] [FILTER...]
 *
 * Like nfdump, the words left after the options are joined by spaces into
 * the filter, and each -s prints its own top-N table.  The query itself is
 * the model of src/query/query.h; this file only reads options and prints.
 * NDJSON listings use the sink's record format (src/sink/json.h), the same
 * lines `nagare decode` and `collect --json` write.
 *
 * Every table of one command reads one snapshot of the store (store.h):
 * the same segments, whatever the collector writes or compacts meanwhile.
 *
 * Exit status: 0 success, 1 runtime failure (no store, out of memory,
 * output error), 2 usage error (options, filter syntax, unknown field).
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/ch_conn.h"
#include "cli/cli.h"
#include "cli/store_path.h"
#include "cli/usage.h"
#include "clickhouse/client.h"
#include "core/addr.h"
#include "core/config.h"
#include "core/timefmt.h"
#include "query/backend.h"
#include "query/filter.h"
#include "query/output.h"
#include "query/pairs.h"
#include "query/ptr.h"
#include "query/query.h"
#include "query/series.h"
#include "sink/json.h"

static const char query_help[] =
    "usage: nagare query [--store DIR] [OPTIONS] [FILTER...]\n"
    "\n"
    "Lists the flows of a store, or the top N of a statistic (like nfdump -s).\n"
    "Words after the options form an nfdump-style filter (docs/query.md).\n"
    "\n"
    "  -R, --store DIR        flow store (default: $NAGARE_STORE,\n"
    "                         else /var/lib/nagare (the service's), else\n"
    "                         ~/.local/share/nagare)\n"
    "      --clickhouse URL   query ClickHouse instead (http://HOST:8123/DATABASE;\n"
    "                         default: clickhouse.url of the configuration when no\n"
    "                         --store is given): the same answers (-s, -A,\n"
    "                         --interval, --pairs, -B, listings;\n"
    "                         docs/clickhouse.md)\n"
    "      --config FILE      YAML configuration (or NAGARE_CONFIG): its clickhouse:\n"
    "                         section\n"
    "  -f, --from T           first flow_start to include (default: the beginning)\n"
    "  -t, --to T             flow_start before which to stop (default: the end)\n"
    "                         T: 2026-11-30T12:00:00Z, '2026-11-30 12:00',\n"
    "                         2026/11/30.12:00:00, epoch seconds, now, -90s, -15m, -1h, -2d\n"
    "  -s, --stat KEY[/ORDER] top N groups by KEY: srcip dstip ip srcport dstport port\n"
    "                         proto exporter srcas dstas as inif outif conv, any field\n"
    "                         name, or a comma list (srcip,dstport).  ORDER: flows\n"
    "                         (default), packets, bytes, pps, bps, bpp.  Repeatable.\n"
    "  -A, --aggregate KEYS   aggregate into records like nfdump -A: srcip,dstport;\n"
    "                         prefixes srcip4/24, dstip6/64.  All records in time\n"
    "                         order, or the top -n by -O ORDER\n"
    "  -B, --bidir            conversations A <-> B, both directions in one row\n"
    "                         (keys: -A KEYS, default proto,srcip,srcport,dstip,dstport)\n"
    "  -I, --interval T       time series in T buckets (30s, 1m, 5m, 1h, 1d; UTC-aligned);\n"
    "                         with -s KEY: the top -n series by KEY plus 'other'\n"
    "  -P, --pairs SRC,DST    Sankey edges SRC -> DST (srcip,dstip; srcas,dstas;\n"
    "                         inif,outif; ...): top -n edges plus 'other'\n"
    "  -O, --order ORDER      default ORDER for -s, -A, -B, --pairs\n"
    "  -n, --limit N          top N groups (default 10) or first N flows (default all)\n"
    "  -o, --format FMT       table (default), csv, ndjson, or json (one document:\n"
    "                         query, rows, summary)\n"
    "      --filter-file FILE the filter from FILE (nfdump -f; '#' comments)\n"
    "      --no-header        no title or column header lines\n"
    "      --no-rollups       read every segment's rows, never its rollups (same\n"
    "                         answer, slower: to measure or check the row scan)\n"
    "      --resolve          host names (PTR) of the addresses shown, looked up\n"
    "                         within 2 s through $NAGARE_PTR (ADDR[:PORT] of an\n"
    "                         IPv4 DNS server) or the system's resolvers: JSON\n"
    "                         gains \"names\", the table a list after it (stderr\n"
    "                         for csv and ndjson)\n"
    "  -q, --quiet            no summary\n"
    "  -h, --help             this help\n"
    "\n"
    "Examples:\n"
    "  nagare query --store /var/lib/nagare -s srcip/bytes -n 20\n"
    "  nagare query --store st --from -1h -s dstport proto tcp and not port 22\n"
    "  nagare query --store st -s conv/packets 'src net 10.0.0.0/8 and bytes > 1M'\n"
    "  nagare query --store st host 192.0.2.1 -n 100 --format ndjson\n"
    "  nagare query --store st -A srcip4/24,dstport 'proto tcp'\n"
    "  nagare query --store st --interval 5m -s proto/bytes -n 5 --format csv\n"
    "  nagare query --store st --pairs srcas,dstas -n 20 --format json\n"
    "\n"
    "The summary (flows, bytes, packets, time window, segments read and skipped,\n"
    "elapsed) follows a table on stdout, and goes to stderr for csv and ndjson.\n"
    "Exit status: 0 success, 1 runtime error, 2 usage error.\n";

#define MAX_STATS 16

typedef struct query_opts {
	const char *store;
	bool store_given;
	const char *clickhouse, *config; /* --clickhouse URL, --config FILE */
	ng_config cfg;                   /* the configuration (its clickhouse: section) */
	ng_backend be;                   /* where the queries run */
	char store_buf[4096];            /* the default store (store_path.h) */
	ng_query base;
	const char *stats[MAX_STATS];
	size_t nstats;
	long limit; /* -1: default */
	enum ng_format fmt;
	bool header, quiet;
	bool order_given, bidir;
	bool resolve; /* --resolve: host names (query/ptr.h) */
	const char *aggregate, *pairs, *filter_file;
	uint64_t interval_ms;
	char *filter_text;
} query_opts;

/* Joins argv[from..argc) with spaces (the nfdump way of giving a filter). */
static char *join_args(int argc, char **argv, int from)
{
	size_t len = 1;
	for (int i = from; i < argc; i++)
		len += strlen(argv[i]) + 1;
	char *s = malloc(len);
	if (!s)
		return NULL;
	s[0] = 0;
	for (int i = from; i < argc; i++) {
		if (i > from)
			strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

/* Reads --filter-file into o->filter_text (at most 1 MiB).  Returns 0, or
 * 2 (usage error) when it cannot be read. */
static int read_filter_file(query_opts *o)
{
	FILE *f = fopen(o->filter_file, "r");
	if (!f)
		return ng_usage_fail("query", "cannot read --filter-file %s: %s", o->filter_file,
		                     strerror(errno));
	size_t cap = 1 << 20;
	char *s = malloc(cap + 1);
	size_t n = s ? fread(s, 1, cap + 1, f) : 0;
	bool bad = ferror(f) || n > cap;
	fclose(f);
	if (!s || bad) {
		free(s);
		return ng_usage_fail("query", "--filter-file %s: unreadable or over 1 MiB",
		                     o->filter_file);
	}
	s[n] = 0;
	o->filter_text = s;
	return 0;
}

static int parse_args(int argc, char **argv, query_opts *o)
{
	enum {
		OPT_NO_HEADER = 256,
		OPT_FILTER_FILE,
		OPT_NO_ROLLUPS,
		OPT_RESOLVE,
		OPT_CLICKHOUSE,
		OPT_CONFIG
	};
	/* short options follow nfdump where it has them (-A, -B, -O, -n, -o) */
	static const struct option longopts[] = {
	    {"store", required_argument, NULL, 'R'},
	    {"from", required_argument, NULL, 'f'},
	    {"to", required_argument, NULL, 't'},
	    {"stat", required_argument, NULL, 's'},
	    {"order", required_argument, NULL, 'O'},
	    {"limit", required_argument, NULL, 'n'},
	    {"format", required_argument, NULL, 'o'},
	    {"no-header", no_argument, NULL, OPT_NO_HEADER},
	    {"quiet", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},
	    {"aggregate", required_argument, NULL, 'A'},
	    {"bidir", no_argument, NULL, 'B'},
	    {"interval", required_argument, NULL, 'I'},
	    {"pairs", required_argument, NULL, 'P'},
	    {"filter-file", required_argument, NULL, OPT_FILTER_FILE},
	    {"no-rollups", no_argument, NULL, OPT_NO_ROLLUPS},
	    {"resolve", no_argument, NULL, OPT_RESOLVE},
	    {"clickhouse", required_argument, NULL, OPT_CLICKHOUSE},
	    {"config", required_argument, NULL, OPT_CONFIG},
	    {NULL, 0, NULL, 0},
	};
	uint64_t now = ng_now_ms();
	o->base.to_ms = UINT64_MAX;
	o->base.order = NG_ORDER_FLOWS;
	o->limit = -1;
	o->header = true;
	opterr = 0;
	optind = 1;
	int c;
	/* options may come before or after the filter words (getopt moves
	 * the words to the end); a filter never starts a word with '-' */
	while ((c = getopt_long(argc, argv, ":R:f:t:s:O:n:o:qhA:BI:P:", longopts, NULL)) != -1) {
		switch (c) {
		case 'R':
			o->store = optarg;
			o->store_given = true;
			break;
		case OPT_CLICKHOUSE: o->clickhouse = optarg; break;
		case OPT_CONFIG: o->config = optarg; break;
		case 'f':
			if (!ng_time_parse(optarg, now, &o->base.from_ms))
				return ng_usage_fail("query", "bad --from time '%s'", optarg);
			break;
		case 't':
			if (!ng_time_parse(optarg, now, &o->base.to_ms))
				return ng_usage_fail("query", "bad --to time '%s'", optarg);
			break;
		case 's':
			if (o->nstats == MAX_STATS)
				return ng_usage_fail("query", "at most %d -s options", MAX_STATS);
			o->stats[o->nstats++] = optarg;
			break;
		case 'A': o->aggregate = optarg; break;
		case 'B': o->bidir = true; break;
		case 'P': o->pairs = optarg; break;
		case 'I':
			if (!ng_interval_parse(optarg, &o->interval_ms))
				return ng_usage_fail("query",
				                     "bad --interval '%s' (30s, 1m, 5m, 1h, 1d, or "
				                     "seconds; at least 1 s)",
				                     optarg);
			break;
		case 'O':
			o->order_given = true;
			if (!ng_query_parse_order(optarg, &o->base.order))
				return ng_usage_fail(
				    "query",
				    "unknown order '%s' (flows, packets, bytes, pps, "
				    "bps or bpp)",
				    optarg);
			break;
		case 'n': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*end || end == optarg || v < 0)
				return ng_usage_fail("query", "bad -n '%s': a count, 0 for all",
				                     optarg);
			o->limit = v;
			break;
		}
		case 'o':
			if (!ng_format_parse(optarg, &o->fmt))
				return ng_usage_fail(
				    "query", "unknown format '%s' (table, csv, ndjson or json)",
				    optarg);
			break;
		case OPT_NO_HEADER: o->header = false; break;
		case OPT_FILTER_FILE: o->filter_file = optarg; break;
		case OPT_NO_ROLLUPS: o->base.no_rollup = true; break;
		case OPT_RESOLVE: o->resolve = true; break;
		case 'q': o->quiet = true; break;
		case 'h': fputs(query_help, stdout); return -1;
		default: return ng_usage_error("query", c, argv);
		}
	}
	if (o->clickhouse && o->store_given)
		return ng_usage_fail("query", "--store and --clickhouse: give one");
	if (o->base.from_ms >= o->base.to_ms)
		return ng_usage_fail("query", "--from must be before --to");
	int modes =
	    (o->aggregate && !o->bidir) + o->bidir + (o->pairs != NULL) + (o->interval_ms != 0);
	if (modes > 1)
		return ng_usage_fail("query", "-A, -B, --pairs and --interval do not combine "
		                              "(except -B with -A KEYS)");
	if (modes && o->nstats && !o->interval_ms)
		return ng_usage_fail("query", "-s does not combine with -A, -B or --pairs");
	if (o->filter_file) {
		if (optind < argc)
			return ng_usage_fail("query",
			                     "a filter in --filter-file and on the command "
			                     "line: give one");
		return read_filter_file(o);
	}
	o->filter_text = join_args(argc, argv, optind);
	if (!o->filter_text) {
		fprintf(stderr, "nagare query: out of memory\n");
		return 1;
	}
	return 0;
}

/* After a result: the summary on stderr for CSV and NDJSON (the table
 * and JSON writers include it), corrupt segments, write errors. */
static int finish(const query_opts *o, ng_query_result *res, int rc)
{
	if (!o->quiet && (o->fmt == NG_FMT_CSV || o->fmt == NG_FMT_NDJSON))
		ng_output_summary(stderr, res);
	if (res->scan.segments_damaged)
		fprintf(stderr,
		        "nagare query: %llu damaged segment(s) skipped, none of their rows "
		        "counted (see above; `nagare fsck` moves them aside)\n",
		        (unsigned long long)res->scan.segments_damaged);
	if (res->scan.errors > res->scan.segments_damaged)
		fprintf(stderr, "nagare query: %llu unreadable segment(s) skipped (see above)\n",
		        (unsigned long long)(res->scan.errors - res->scan.segments_damaged));
	if (rc || fflush(stdout)) {
		perror("nagare query: writing the output");
		return 1;
	}
	return 0;
}

static ng_output_opts out_opts(const query_opts *o)
{
	return (ng_output_opts){
	    .fmt = o->fmt, .header = o->header, .summary = !o->quiet, .filter = o->filter_text};
}

static int cmp_first_seen(const void *a, const void *b)
{
	const ng_agg_row *x = a, *y = b;
	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	return memcmp(x->key, y->key, sizeof x->key);
}

/* --resolve: the CLI waits longer than a page (it was asked for) */
#define RESOLVE_BUDGET_MS 2000
#define RESOLVE_MAX 1000

/* --resolve: `doc` (the answer, len bytes) on stdout with the host names
 * of res's addresses: a JSON document gains "names"; a table is followed
 * by "Host names:" lines, which go to stderr after CSV and NDJSON.
 * Returns 0, or 1 when the resolver cannot start. */
static int with_names(const query_opts *o, const ng_query *q, const ng_query_result *res, char *doc,
                      size_t len)
{
	char err[256];
	const char *srv = getenv("NAGARE_PTR");
	/* NAGARE_PTR=off keeps the pages from resolving; --resolve asks */
	ng_ptr *p = ng_ptr_new(srv && *srv && strcmp(srv, "off") ? srv : "system", err, sizeof err);
	if (!p) {
		fwrite(doc, 1, len, stdout);
		fprintf(stderr, "nagare query: --resolve: %s\n", err);
		return 1;
	}
	uint8_t(*addrs)[16] = malloc(RESOLVE_MAX * sizeof *addrs);
	char(*names)[NG_PTR_NAME_MAX] = malloc(RESOLVE_MAX * sizeof *names);
	size_t n = addrs && names ? ng_ptr_addresses(q, res, addrs, RESOLVE_MAX) : 0;
	size_t named = ng_ptr_resolve(p, (const uint8_t(*)[16])addrs, n, RESOLVE_BUDGET_MS, names);
	ng_ptr_free(p);
	if (o->fmt == NG_FMT_JSON) {
		while (len && (doc[len - 1] == '\n' || doc[len - 1] == ' '))
			len--;
		if (len && doc[len - 1] == '}')
			len--;
		fwrite(doc, 1, len, stdout);
		fputc(',', stdout);
		ng_ptr_put_json(stdout, (const uint8_t(*)[16])addrs, names, n);
		fputs("}\n", stdout);
	} else {
		fwrite(doc, 1, len, stdout);
		FILE *f = o->fmt == NG_FMT_TABLE ? stdout : stderr;
		fprintf(f, "\nHost names (%zu of %zu addresses):\n", named, n);
		for (size_t i = 0; i < n; i++) {
			char a[NG_ADDR_STRLEN];
			if (names[i][0])
				fprintf(f, "  %-39s %s\n", ng_addr_format(addrs[i], a), names[i]);
		}
	}
	free(addrs);
	free(names);
	return 0;
}

/* kind: 's' top-N, 'A' aggregate, 'l' listing */
static int run_one(const query_opts *o, ng_query *q, int kind)
{
	ng_query_result res;
	char err[NG_CH_ERR_MAX + 512];
	if (ng_backend_run(&o->be, q, &res, err, sizeof err)) {
		fprintf(stderr, "nagare query: %s\n", err);
		return 1;
	}
	ng_output_opts oo = out_opts(o);
	int rc;
	char *doc = NULL;
	size_t len = 0;
	FILE *out = o->resolve ? open_memstream(&doc, &len) : stdout;
	if (!out) {
		fprintf(stderr, "nagare query: out of memory\n");
		ng_query_result_free(&res);
		return 1;
	}
	if (kind == 'A') {
		/* nfdump -A lists records in time order unless told otherwise */
		if (!o->order_given && res.nrows)
			qsort(res.rows, res.nrows, sizeof *res.rows, cmp_first_seen);
		rc = ng_write_agg(out, q, &res, &oo);
	} else if (kind == 's') {
		rc = ng_write_top(out, q, &res, &oo);
	} else if (o->fmt == NG_FMT_NDJSON) {
		rc = ng_json_write_flows(out, res.flows, res.nflows); /* the sink's records */
	} else {
		rc = ng_write_list(out, q, &res, &oo);
	}
	if (o->resolve) {
		fclose(out);
		if (with_names(o, q, &res, doc, len) && !rc)
			rc = 1;
		free(doc);
	}
	rc = finish(o, &res, rc);
	ng_query_result_free(&res);
	return rc;
}

static int run_series(const query_opts *o, ng_query *q)
{
	ng_series s;
	char err[512];
	if (ng_series_run_on(&o->be, q, o->interval_ms, &s, err, sizeof err)) {
		fprintf(stderr, "nagare query: %s\n", err);
		return 1;
	}
	ng_output_opts oo = out_opts(o);
	int rc = finish(o, &s.res, ng_write_series(stdout, q, &s, &oo));
	ng_series_free(&s);
	return rc;
}

static int run_pairs(const query_opts *o, ng_query *q)
{
	ng_pairs p;
	char err[512];
	if (ng_pairs_run_on(&o->be, q, &p, err, sizeof err)) {
		fprintf(stderr, "nagare query: %s\n", err);
		return 1;
	}
	ng_output_opts oo = out_opts(o);
	int rc = finish(o, &p.res, ng_write_pairs(stdout, q, &p, &oo));
	ng_pairs_free(&p);
	return rc;
}

static int run_bidir(const query_opts *o, ng_query *q)
{
	ng_bidir b;
	char err[512];
	if (ng_bidir_run_on(&o->be, q, &b, err, sizeof err)) {
		fprintf(stderr, "nagare query: %s\n", err);
		return 1;
	}
	ng_output_opts oo = out_opts(o);
	int rc = finish(o, &b.res, ng_write_bidir(stdout, q, &b, &oo));
	ng_bidir_free(&b);
	return rc;
}

/* -s KEY[/ORDER] into q's keys and order.  Returns 0 or a usage error. */
static int stat_keys(const char *stat, ng_query *q)
{
	char spec[256], err[512];
	snprintf(spec, sizeof spec, "%s", stat);
	char *slash = strchr(spec, '/');
	/* "srcip4/24" is a prefix, not an order */
	if (slash && !ng_query_parse_order(slash + 1, &q->order))
		slash = NULL;
	else if (slash)
		*slash = 0;
	if (ng_query_parse_keys(q, spec, err, sizeof err)) {
		if (strchr(stat, '/') && !slash)
			return ng_usage_fail(
			    "query",
			    "unknown order in -s %s (flows, packets, bytes, pps, bps "
			    "or bpp)",
			    stat);
		return ng_usage_fail("query", "%s", err);
	}
	return 0;
}

/* The largest ClickHouse answer read (a listing of every flow: about 400
 * bytes a flow in RowBinary). */
#define CH_REPLY_MAX ((size_t)1 << 30)

/* Where the queries run (o->be): ClickHouse when --clickhouse is given,
 * or clickhouse.url is configured and no --store; else the store, with
 * one snapshot that every table of this command reads.  Returns 0, 1 (a
 * runtime error, said) or 2 (a usage error, said). */
static int open_backend(query_opts *o)
{
	char err[NG_CH_ERR_MAX + 512];
	const char *path = o->config ? o->config : getenv("NAGARE_CONFIG");
	if (path && *path && ng_config_load(path, &o->cfg, err, sizeof err) < 0) {
		fprintf(stderr, "nagare query: %s\n", err);
		return 1;
	}
	ng_ch_conn conn = {0};
	int r =
	    o->store_given ? 0 : ng_cli_ch_conn("query", o->clickhouse, &o->cfg.clickhouse, &conn);
	if (r < 0)
		return 2;
	if (r > 0) {
		conn.reply_max = CH_REPLY_MAX;
		if (!(o->be.ch = ng_ch_open(&conn, err, sizeof err)) ||
		    ng_ch_detect(o->be.ch, &o->be.sv, err, sizeof err) < 0) {
			fprintf(stderr, "nagare query: %s\n", err);
			return 1;
		}
		return 0;
	}
	if (!(o->store = ng_cli_store("query", o->store, false, o->store_buf, sizeof o->store_buf)))
		return 2;
	o->be.store = o->store;
	if (!(o->base.snap = ng_store_snapshot_take(o->store, o->base.from_ms, o->base.to_ms))) {
		if (errno == ENOENT)
			fprintf(stderr,
			        "nagare query: %s is not a flow store (no %s/flows directory)\n",
			        o->store, o->store);
		else
			perror("nagare query");
		return 1;
	}
	return 0;
}

int ng_cmd_query(int argc, char **argv)
{
	/* `nagare query --counters …` is `nagare counters …` (sFlow counter
	 * samples are a time series of their own, not flows) */
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--counters"))
			return ng_cmd_counters(argc, argv);
	query_opts o = {0};
	int rc = parse_args(argc, argv, &o);
	if (rc)
		return rc < 0 ? 0 : rc;

	char err[1024];
	size_t col;
	ng_filter *filter = ng_filter_parse(o.filter_text, err, sizeof err, &col);
	if (!filter) {
		if (strchr(o.filter_text, '\n')) /* a filter file: the line is in err */
			fprintf(stderr, "nagare query: bad filter: %s\n", err);
		else
			fprintf(stderr, "nagare query: bad filter at column %zu: %s\n", col + 1,
			        err);
		free(o.filter_text);
		return 2;
	}
	o.base.filter = filter;
	if ((rc = open_backend(&o))) {
		ng_ch_close(o.be.ch);
		ng_config_free(&o.cfg);
		ng_filter_free(filter);
		free(o.filter_text);
		return rc;
	}

	rc = 0;
	ng_query q = o.base;
	q.limit = o.limit < 0 ? 10 : (size_t)o.limit;
	if (o.interval_ms) {
		if (o.nstats == 0)
			rc = run_series(&o, &q);
		for (size_t i = 0; i < o.nstats && rc == 0; i++) {
			q = o.base;
			q.limit = o.limit < 0 ? 10 : (size_t)o.limit;
			if ((rc = stat_keys(o.stats[i], &q)))
				break;
			if (i && o.fmt == NG_FMT_TABLE)
				putchar('\n');
			rc = run_series(&o, &q);
		}
	} else if (o.pairs) {
		if (ng_pairs_parse(&q, o.pairs, err, sizeof err))
			rc = ng_usage_fail("query", "%s", err);
		else
			rc = run_pairs(&o, &q);
	} else if (o.bidir) {
		if (o.aggregate && ng_query_parse_keys(&q, o.aggregate, err, sizeof err))
			rc = ng_usage_fail("query", "%s", err);
		else
			rc = run_bidir(&o, &q);
	} else if (o.aggregate) {
		q.limit = o.limit < 0 ? 0 : (size_t)o.limit;
		if (ng_query_parse_keys(&q, o.aggregate, err, sizeof err))
			rc = ng_usage_fail("query", "%s", err);
		else
			rc = run_one(&o, &q, 'A');
	} else if (o.nstats == 0) {
		q.limit = o.limit < 0 ? 0 : (size_t)o.limit;
		rc = run_one(&o, &q, 'l');
	}
	for (size_t i = 0; !o.interval_ms && i < o.nstats && rc == 0; i++) {
		q = o.base;
		q.limit = o.limit < 0 ? 10 : (size_t)o.limit;
		if ((rc = stat_keys(o.stats[i], &q)))
			break;
		if (i && o.fmt == NG_FMT_TABLE)
			putchar('\n');
		rc = run_one(&o, &q, 's');
	}
	ng_store_snapshot_free(o.base.snap);
	ng_ch_close(o.be.ch);
	ng_config_free(&o.cfg);
	ng_filter_free(filter);
	free(o.filter_text);
	return rc;
}
