/*
 * status.c — `nagare status --store DIR [--format table|json]`: what the
 * collector has seen, per exporter and observation domain, from
 * DIR/state/exporters.json (written by `nagare collect` every
 * --stats-interval and at exit), and what the store holds on disk.
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/store_path.h"
#include "cli/usage.h"
#include "core/addr.h"
#include "core/json.h"
#include "core/timefmt.h"
#include "store/exporters.h"
#include "store/store.h"

static const char status_help[] =
    "usage: nagare status [--store DIR] [--format table|json]\n"
    "\n"
    "Shows per exporter and observation domain the datagrams (packets), flow\n"
    "records, lost datagrams or records (sequence gaps), template misses and\n"
    "decode errors the collector counted, when each exporter was last heard\n"
    "from, and the segments and bytes the store holds.\n"
    "\n"
    "  -s, --store DIR       flow store (default: $NAGARE_STORE,\n"
    "                        else /var/lib/nagare (the service's), else\n"
    "                        ~/.local/share/nagare)\n"
    "  -f, --format FORMAT   table (default) or json\n"
    "  -h, --help            this help\n";

/* ---- exporter and interface names ------------------------------------ */

/* DIR/state/interfaces.tsv (written by collect: exporter, ifIndex or "-"
 * for the exporter's own name, name, description, source) as a table. */
static void print_interfaces(const char *dir)
{
	char path[4096], line[1024];
	snprintf(path, sizeof path, "%s/state/interfaces.tsv", dir);
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	bool head = false;
	while (fgets(line, sizeof line, f)) {
		char *fld[5] = {0}, *p = line;
		if (line[0] == '#')
			continue;
		line[strcspn(line, "\n")] = 0;
		for (int i = 0; i < 5 && p; i++) {
			fld[i] = p;
			p = strchr(p, '\t');
			if (p)
				*p++ = 0;
		}
		if (!fld[4])
			continue;
		if (!head) {
			printf("\n%-39s %8s %-24s %-32s %s\n", "EXPORTER", "IFINDEX", "NAME",
			       "DESCRIPTION", "FROM");
			head = true;
		}
		printf("%-39s %8s %-24s %-32s %s\n", fld[0], fld[1], fld[2], fld[3], fld[4]);
	}
	fclose(f);
}

/* ---- store totals ----------------------------------------------------- */

static uint64_t walk_segments, walk_bytes;

static int count_segment(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	(void)ftw;
	size_t n = strlen(path);
	if (type == FTW_F && n > 4 && !strcmp(path + n - 4, ".seg")) {
		walk_segments++;
		walk_bytes += (uint64_t)sb->st_size;
	}
	return 0;
}

/* Counts DIR/flows' segments and their bytes; an absent flows directory
 * is an empty store. */
static void store_totals(const char *dir, uint64_t *segments, uint64_t *bytes)
{
	char flows[4096];
	snprintf(flows, sizeof flows, "%s/flows", dir);
	walk_segments = walk_bytes = 0;
	nftw(flows, count_segment, 16, FTW_PHYS);
	*segments = walk_segments;
	*bytes = walk_bytes;
}

/* ---- table ------------------------------------------------------------ */

static const char *ago(uint64_t ms, uint64_t now, char *buf, size_t len)
{
	if (!ms)
		return "never";
	char t[40];
	ng_time_format(ms, t);
	uint64_t s = now > ms ? (now - ms) / 1000 : 0;
	if (s < 120)
		snprintf(buf, len, "%s (%" PRIu64 "s ago)", t, s);
	else if (s < 7200)
		snprintf(buf, len, "%s (%" PRIu64 "m ago)", t, s / 60);
	else
		snprintf(buf, len, "%s (%" PRIu64 "h ago)", t, s / 3600);
	return buf;
}

static void print_errors(const ng_exporter_stats *s)
{
	if (!ng_exporter_errors_total(s))
		return;
	printf("    errors:");
	for (int i = 0; i < NG_DERR_COUNT; i++)
		if (s->errors[i])
			printf(" %s %" PRIu64, ng_decode_error_name(i), s->errors[i]);
	putchar('\n');
}

/* Exporter restarts, on a line under the row when any. */
static void print_restarts(const ng_exporter_stats *s)
{
	if (s->restarts)
		printf("    restarts: %" PRIu64 " (uptime or sequence number went back; data of "
		       "templates announced before each was held until announced again)\n",
		       s->restarts);
}

/* Flows outside the time window, on a line under the row when any. */
static void print_time_implausible(const ng_exporter_stats *s)
{
	if (s->time_implausible)
		printf("    time_implausible: %" PRIu64 " flows with times outside the window "
		       "(kept flagged or rejected, docs/security.md)\n",
		       s->time_implausible);
}

/* The columns after EXPORTER, DOMAIN and VERSION: a chosen few of the
 * exporter counters (NG_EXPORTER_COUNTERS), read through the list.  ERRORS
 * is their sum (by name on the line below a row that has any). */
static const struct column {
	const char *head;
	int width;
	enum ng_exporter_counter_id id;
} columns[] = {
    {"PACKETS", 12, NG_XC_packets},         {"RECORDS", 12, NG_XC_records}, {"LOST", 9, NG_XC_lost},
    {"TPL_MISS", 9, NG_XC_template_misses}, {"ERRORS", 8, NG_XC_errors},
};

/* sFlow's own counters, on a line under the agent's row when any is not 0. */
static const struct sflow_counter {
	const char *label;
	enum ng_exporter_counter_id id;
} sflow_counters[] = {
    {"counter samples", NG_XC_counter_samples},
    {"lost samples", NG_XC_lost_samples},
    {"discards", NG_XC_discards},
};

/* The decoder's checks of values that cannot be right (decode/plausible.h,
 * docs/fields.md "anomalies"), on a line under the row when any is not 0. */
static const struct sflow_counter value_counters[] = {
    {"sampling_fixed", NG_XC_sampling_fixed},
    {"sampling_rejected", NG_XC_sampling_rejected},
    {"time_after_export", NG_XC_time_after_export},
    {"time_before_boot", NG_XC_time_before_boot},
    {"bytes_below_headers", NG_XC_bytes_below_headers},
    {"packets_zero", NG_XC_packets_zero},
};

/* What an exporter does that nagare handles but the user may want to know
 * (docs/exporters.md). */
static const struct sflow_counter quirk_counters[] = {
    {"packets_concatenated", NG_XC_packets_concatenated},
    {"sampler_other_domain", NG_XC_sampler_other_domain},
    {"sampler_unmatched", NG_XC_sampler_unmatched},
    {"lists_skipped", NG_XC_lists_skipped},
    {"apps_unnamed", NG_XC_apps_unnamed},
};

#define NCOLUMNS (sizeof columns / sizeof columns[0])
#define NSFLOW (sizeof sflow_counters / sizeof sflow_counters[0])
#define NVALUES (sizeof value_counters / sizeof value_counters[0])
#define NQUIRKS (sizeof quirk_counters / sizeof quirk_counters[0])

static void print_sflow(const ng_exporter_stats *s)
{
	bool any = false;
	for (size_t k = 0; k < NSFLOW; k++)
		any |= ng_exporter_counter_get(s, sflow_counters[k].id) != 0;
	if (!any)
		return;
	printf("    sFlow:");
	for (size_t k = 0; k < NSFLOW; k++)
		printf("%s %s %" PRIu64, k ? "," : "", sflow_counters[k].label,
		       ng_exporter_counter_get(s, sflow_counters[k].id));
	putchar('\n');
}

/* Counters of t (n entries) that are not 0, as one line "LEAD a 1, b 2";
 * nothing when all are 0. */
static void print_nonzero(const ng_exporter_stats *s, const struct sflow_counter *t, size_t n,
                          const char *lead)
{
	bool any = false;
	for (size_t k = 0; k < n; k++) {
		uint64_t v = ng_exporter_counter_get(s, t[k].id);
		if (!v)
			continue;
		printf("%s %s %" PRIu64, any ? "," : lead, t[k].label, v);
		any = true;
	}
	if (any)
		putchar('\n');
}

/* The flows flagged for values that cannot be right, and the vendors'
 * ways that were handled (docs/exporters.md), those not 0. */
static void print_values(const ng_exporter_stats *s)
{
	print_nonzero(s, value_counters, NVALUES,
	              "    implausible values (flagged, docs/fields.md):");
	print_nonzero(s, quirk_counters, NQUIRKS, "    exporter quirks (docs/exporters.md):");
}

/* The decoder's bounds: what it held at the last report, and every
 * eviction counter that is not 0 (NG_LIMIT_COUNTERS). */
static void print_limits(const ng_limit_stats *l)
{
	printf("state held: %" PRIu64 " exporters, %" PRIu64 " domains, %" PRIu64
	       " templates (%" PRIu64 " bytes), %" PRIu64 " bytes of held data sets\n",
	       l->exporters, l->domains, l->templates, l->template_bytes, l->held_bytes);
	bool any = false;
	for (int i = 0; i < NG_LC_COUNT; i++) {
		uint64_t v = ng_limit_stat(l, i);
		if (ng_limit_counters[i].gauge || !v)
			continue;
		printf("%s %s %" PRIu64,
		       any ? "," : "limits reached (least recently seen dropped):",
		       ng_limit_counters[i].name, v);
		any = true;
	}
	if (any)
		printf("\n  (raise them under limits: in the configuration; docs/security.md)\n");
}

/* One line per exporter and domain (then its errors and sFlow lines), and
 * the collector's own counters. */
static void print_table(const ng_exporters_file *f)
{
	uint64_t now = ng_now_ms();
	printf("%-39s %10s %-10s", "EXPORTER", "DOMAIN", "VERSION");
	for (size_t k = 0; k < NCOLUMNS; k++)
		printf(" %*s", columns[k].width, columns[k].head);
	printf("  %s\n", "LAST SEEN");
	for (size_t i = 0; i < f->n; i++) {
		const ng_exporter_stats *s = &f->rows[i];
		char a[NG_ADDR_STRLEN], seen[80];
		if (ng_exporter_is_others(s))
			printf("%-39s %10s %-10s", "(others: not listed, or evicted)", "all",
			       "others");
		else
			printf("%-39s %10" PRIu32 " %-10s", ng_addr_format(s->exporter, a),
			       s->domain, ng_protocol_name(s->version));
		for (size_t k = 0; k < NCOLUMNS; k++)
			printf(" %*" PRIu64, columns[k].width,
			       ng_exporter_counter_get(s, columns[k].id));
		printf("  %s\n", ago(s->last_seen, now, seen, sizeof seen));
		print_errors(s);
		print_time_implausible(s);
		print_values(s);
		print_restarts(s);
		print_sflow(s);
	}
	printf("\nsockets: %" PRIu64 " datagrams received, %" PRIu64 " dropped by the kernel",
	       f->listener.datagrams, f->listener.drops);
	if (f->listener.drops)
		printf(" (raise net.core.rmem_max, or the collector is short of CPU)");
	putchar('\n');
	for (unsigned w = 0; f->nworkers > 1 && w < f->nworkers && w < NG_EXPORTERS_WORKERS_MAX;
	     w++)
		printf("  worker %u: %" PRIu64 " records, %" PRIu64 " datagrams, %" PRIu64
		       " dropped by the kernel\n",
		       w, f->workers[w].records, f->workers[w].datagrams, f->workers[w].drops);
	if (f->listener.conns_accepted)
		printf("TCP/SCTP: %" PRIu64 " connections, refused %" PRIu64 " (limit) %" PRIu64
		       " (per source), closed %" PRIu64 " idle, %" PRIu64 " bad framing, %" PRIu64
		       " cut within a message\n",
		       f->listener.conns_accepted, f->listener.conns_refused,
		       f->listener.conns_refused_source, f->listener.conns_idle,
		       f->listener.conns_bad, f->listener.conns_cut);
	print_limits(&f->limits);
	if (f->store.dropped)
		printf("store: %" PRIu64 " flow records dropped: the store could not take them "
		       "(flushes fell behind or failed; see the collector's log)\n",
		       f->store.dropped);
	if (f->has_clickhouse) {
		const ng_sink_stats *h = &f->clickhouse;
		printf("clickhouse: %" PRIu64 " rows in %" PRIu64 " batches sent, %" PRIu64
		       " rows waiting (%" PRIu64 " batches, %" PRIu64
		       " bytes spooled), lag %" PRIu64 " ms, %" PRIu64 " retries, %" PRIu64
		       " failures (%" PRIu64 " ambiguous, %" PRIu64
		       " batches found already inserted), %" PRIu64
		       " rows dropped (spool full), schema version %" PRIu64 ", %s\n",
		       h->rows_sent, h->batches_sent, h->queued_rows, h->spool_files,
		       h->spool_bytes, h->lag_ms, h->retries, h->failures, h->ambiguous,
		       h->deduplicated, h->dropped_rows, h->schema_version,
		       h->connected ? "connected" : "not reachable at the last attempt");
	}
	char t1[80], t2[80];
	printf("counters updated %s, counting since %s\n", ago(f->updated_ms, now, t1, sizeof t1),
	       ago(f->started_ms, now, t2, sizeof t2));
}

/* ---- json ------------------------------------------------------------- */

/* Re-emits the state file (already checked by the loader) inside an
 * object that adds the store totals.  The file is copied as it is, not
 * written again from the rows loaded: `state` is what is on disk, keys of
 * another nagare version included (docs/cli.md). */
static int print_json(const char *state_path, const char *dir, uint64_t segs, uint64_t bytes)
{
	fputs("{\"store\":{\"path\":", stdout);
	ng_json_put_str(stdout, dir);
	uint64_t qbytes, qfiles = ng_store_quarantined(dir, &qbytes);
	printf(",\"segments\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"quarantined\":%" PRIu64
	       ",\"quarantined_bytes\":%" PRIu64 "},\"state\":",
	       segs, bytes, qfiles, qbytes);
	FILE *fp = state_path ? fopen(state_path, "r") : NULL;
	if (!fp) {
		printf("null}\n");
		return 0;
	}
	char buf[8192];
	size_t n, last = 0;
	char tail[8192];
	/* copy all but trailing whitespace */
	while ((n = fread(buf, 1, sizeof buf, fp)) > 0) {
		if (last)
			fwrite(tail, 1, last, stdout);
		memcpy(tail, buf, n);
		last = n;
	}
	while (last && (tail[last - 1] == '\n' || tail[last - 1] == ' '))
		last--;
	fwrite(tail, 1, last, stdout);
	fclose(fp);
	printf("}\n");
	return 0;
}

int ng_cmd_status(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"store", required_argument, NULL, 's'},
	    {"format", required_argument, NULL, 'f'},
	    {"help", no_argument, NULL, 'h'},
	    {0, 0, 0, 0},
	};
	const char *dir = NULL, *format = "table";
	int c;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":s:f:h", opts, NULL)) != -1) {
		switch (c) {
		case 's': dir = optarg; break;
		case 'f': format = optarg; break;
		case 'h': fputs(status_help, stdout); return 0;
		default: return ng_usage_error("status", c, argv);
		}
	}
	if (optind < argc)
		return ng_usage_fail("status", "unexpected argument '%s'", argv[optind]);
	char dbuf[4096];
	if (!(dir = ng_cli_store("status", dir, false, dbuf, sizeof dbuf)))
		return 2;
	bool json = !strcmp(format, "json");
	if (!json && strcmp(format, "table"))
		return ng_usage_fail("status", "--format '%s': use table or json", format);
	struct stat sb;
	if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
		fprintf(stderr, "nagare status: %s: %s\n", dir,
		        errno ? strerror(errno) : "not a directory");
		return 1;
	}
	uint64_t segs, bytes;
	store_totals(dir, &segs, &bytes);
	char path[4096], err[512];
	snprintf(path, sizeof path, "%s/state/exporters.json", dir);
	ng_exporters_file f;
	bool have = ng_exporters_load(path, &f, err, sizeof err) == 0;
	if (!have && errno != ENOENT) {
		fprintf(stderr, "nagare status: %s\n", err);
		return 1;
	}
	if (json) {
		print_json(have ? path : NULL, dir, segs, bytes);
	} else {
		if (!have || !f.n)
			printf("no exporter has sent anything to this store yet: point an exporter "
			       "at udp/2055 (NetFlow), 4739 (IPFIX) or 6343 (sFlow) of a running "
			       "'nagare collect --store %s'\n",
			       dir);
		else
			print_table(&f);
		printf("store %s: %" PRIu64 " segments, %" PRIu64 " bytes on disk\n", dir, segs,
		       bytes);
		uint64_t qbytes, qfiles = ng_store_quarantined(dir, &qbytes);
		if (qfiles)
			printf("damaged: %" PRIu64 " files (%" PRIu64 " bytes) in %s/quarantine, "
			       "moved there by `nagare fsck`\n",
			       qfiles, qbytes, dir);
		print_interfaces(dir);
	}
	if (have)
		ng_exporters_free(&f);
	return 0;
}
