/*
 * report.c — the exporter counters of a running collector: snapshots,
 * log lines and STORE/state/exporters.json.
 *
 * The counters live in three places that only the receive thread may
 * read: the decoder (per exporter and observation domain), the listener
 * (datagrams, bytes, kernel drops) and the store writer's statistics.  A
 * snapshot copies them all, adds the counts of earlier runs (the
 * exporters.json this run started from, c->base) and stamps the times.
 * Snapshots go three ways:
 *
 *   every stats interval  logged here, and handed to the flush thread to
 *                         write exporters.json (flush.c), so the fsync
 *                         never holds up the socket reads
 *   once a second         published for the HTTP threads (live.c)
 *   at exit               written by the last thread, twice (collector.c)
 *
 * Every snapshot is bounded: after the merge with earlier runs it keeps
 * the limits.listed_exporters rows with the most records and sums the
 * rest into the others row (ng_exporters_cap), so exporters.json, the API
 * and /metrics stay small whatever the number of sources; the log lists
 * limits.logged_exporters of them and one line for the rest.  Evictions
 * (the decoder's NG_LIMIT_COUNTERS) are logged as they happen, at most
 * one line every 10 s.
 *
 * The file's format and the merge with earlier runs: store/exporters.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "collector/collector_int.h"
#include "collector/doctor.h"
#include "core/addr.h"
#include "core/log.h"
#include "core/timefmt.h"

/* The rows being gathered: room for `cap`, doubled as needed. */
struct gather {
	ng_exporters_file *f;
	size_t cap;
};

/* ng_decoder_foreach_stats callback: appends one exporter's row to the
 * file of `arg` (a row that cannot be allocated is missing from this
 * snapshot only). */
static void add_row(const ng_exporter_stats *s, void *arg)
{
	struct gather *g = arg;
	if (g->f->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 64;
		ng_exporter_stats *n = realloc(g->f->rows, cap * sizeof *n);
		if (!n)
			return; /* counted rows are missing from this write only */
		g->f->rows = n;
		g->cap = cap;
	}
	g->f->rows[g->f->n++] = *s;
}

void ng_coll_snapshot(ng_collector *c, ng_exporters_file *f)
{
	memset(f, 0, sizeof *f);
	struct gather g = {.f = f};
	ng_decoder_foreach_stats(c->dec, add_row, &g);
	ng_listener_get_stats(c->lis, &f->listener);
	ng_store_writer_get_stats(c->w, &f->store);
	f->attribution_dbip = (c->main ? c->main : c)->attribution_dbip;
	if (c->ch || c->ch_closed) { /* ClickHouse (sink/clickhouse.h) */
		f->has_clickhouse = true;
		if (c->ch)
			ng_ch_sink_get_stats(c->ch, &f->clickhouse);
		else
			f->clickhouse = c->ch_final;
	}
	ng_decoder_limit_stats(c->dec, &f->limits);
	f->limits.interfaces_dropped = c->ifs_dropped;
	f->limits.interface_names_refused = c->ifnames_refused;
	if (!c->main)
		ng_coll_workers_merge(c, f); /* their rows, sockets and bounds too */
	f->started_ms = c->started_ms;
	f->updated_ms = ng_now_ms();
	ng_exporters_merge(f, &c->base);
	ng_exporters_cap(f, (size_t)c->limits.listed_exporters);
	for (unsigned w = 0; !c->main && c->nworkers > 1 && w < c->nworkers; w++) {
		ng_listener_stats st;
		uint64_t records;
		ng_coll_workers_stats(c, w, &st, &records);
		f->workers[w] = (ng_worker_stats){records, st.datagrams, st.drops};
		f->nworkers = w + 1;
	}
}

/* One exporter's log line: its counters and the decode errors it had,
 * by name. */
static void log_row(const ng_exporter_stats *s)
{
	char a[NG_ADDR_STRLEN], errs[512] = "";
	size_t off = 0;
	for (int i = 0; i < NG_DERR_COUNT && off < sizeof errs; i++)
		if (s->errors[i])
			off += (size_t)snprintf(errs + off, sizeof errs - off, " %s=%" PRIu64,
			                        ng_decode_error_name(i), s->errors[i]);
	ng_info("exporter %s domain %" PRIu32 " %s: packets %" PRIu64 " records %" PRIu64
	        " lost %" PRIu64 " template_misses %" PRIu64 " errors %" PRIu64 "%s",
	        ng_addr_format(s->exporter, a), s->domain, ng_protocol_name(s->version), s->packets,
	        s->records, s->lost, s->template_misses, ng_exporter_errors_total(s), errs);
}

/* Index of the others row of `f`, or f->n. */
static size_t others_row(const ng_exporters_file *f)
{
	for (size_t i = 0; i < f->n; i++)
		if (ng_exporter_is_others(&f->rows[i]))
			return i;
	return f->n;
}

/* The line of the exporters not listed one by one: the rows order[from..]
 * (the snapshot's others row among them) summed. */
static void log_rest(const ng_exporters_file *f, const size_t *order, size_t from)
{
	ng_exporter_stats sum;
	memset(&sum, 0, sizeof sum);
	size_t rows = 0;
	for (size_t i = from; i < f->n; i++) {
		const ng_exporter_stats *s = &f->rows[order[i]];
		ng_exporter_stats_add(&sum, s);
		rows += !ng_exporter_is_others(s);
	}
	ng_info("%zu other exporter rows%s: packets %" PRIu64 " records %" PRIu64 " lost %" PRIu64
	        " template_misses %" PRIu64 " errors %" PRIu64
	        " (limits.logged_exporters; every row: nagare status, /api/v1/exporters)",
	        rows, others_row(f) < f->n ? " and those summed as others" : "", sum.packets,
	        sum.records, sum.lost, sum.template_misses, ng_exporter_errors_total(&sum));
}

/* Most records first (an index sort: the rows stay in place). */
static int by_records(const void *a, const void *b, void *arg)
{
	const ng_exporter_stats *r = arg;
	const ng_exporter_stats *x = &r[*(const size_t *)a], *y = &r[*(const size_t *)b];
	bool ox = ng_exporter_is_others(x), oy = ng_exporter_is_others(y);
	if (ox != oy)
		return ox ? 1 : -1;
	return x->records == y->records ? 0 : x->records > y->records ? -1 : 1;
}

void ng_coll_log_counters(const ng_exporters_file *f, size_t max)
{
	ng_info("received %" PRIu64 " datagrams (%" PRIu64 " bytes), kernel drops %" PRIu64
	        "; this run stored %" PRIu64 " rows in %" PRIu64 " segments, dropped %" PRIu64
	        " rows the store could not take",
	        f->listener.datagrams, f->listener.bytes, f->listener.drops, f->store.rows,
	        f->store.segments, f->store.dropped);
	size_t *order = malloc((f->n ? f->n : 1) * sizeof *order);
	if (!order)
		return;
	for (size_t i = 0; i < f->n; i++)
		order[i] = i;
	qsort_r(order, f->n, sizeof *order, by_records, f->rows);
	size_t listed = 0;
	for (; listed < f->n && listed < max && !ng_exporter_is_others(&f->rows[order[listed]]);
	     listed++)
		log_row(&f->rows[order[listed]]);
	if (listed < f->n)
		log_rest(f, order, listed);
	free(order);
}

/* Sum of the eviction counters of `l`. */
static uint64_t evictions(const ng_limit_stats *l)
{
	uint64_t n = 0;
	for (int i = 0; i < NG_LC_COUNT; i++)
		if (!ng_limit_counters[i].gauge)
			n += ng_limit_stat(l, i);
	return n;
}

void ng_coll_log_limits(ng_collector *c, uint64_t now)
{
	ng_limit_stats l;
	ng_decoder_limit_stats(c->dec, &l);
	/* state was evicted in the last second: a flood churned the heap,
	 * give its free pages back (glibc keeps them otherwise, and RSS would
	 * follow the flood's peak rather than the limits) */
	uint64_t ev = evictions(&l);
	if (ev != c->lim_trimmed) {
		malloc_trim(0);
		c->lim_trimmed = ev;
	}
	if (now < c->lim_logged_ms + 10000)
		return;
	char msg[768];
	size_t off = 0;
	for (int i = 0; i < NG_LC_COUNT && off < sizeof msg; i++) {
		uint64_t was = ng_limit_stat(&c->lim_logged, i), v = ng_limit_stat(&l, i);
		if (!ng_limit_counters[i].gauge && v > was)
			off += (size_t)snprintf(msg + off, sizeof msg - off, " %s +%" PRIu64,
			                        ng_limit_counters[i].name, v - was);
	}
	if (!off)
		return;
	ng_warn("limits reached, least recently seen state dropped:%s; holding %" PRIu64
	        " exporters, %" PRIu64 " domains, %" PRIu64 " templates (%" PRIu64
	        " bytes), %" PRIu64 " held bytes (docs/security.md, limits: in the "
	        "configuration)",
	        msg, l.exporters, l.domains, l.templates, l.template_bytes, l.held_bytes);
	c->lim_logged = l;
	c->lim_logged_ms = now;
}

void ng_coll_log_restarts(ng_collector *c, uint64_t now)
{
	ng_restart_info last;
	uint64_t n = ng_decoder_restarts(c->dec, &last);
	if (n == c->rs_logged || now < c->rs_logged_ms + 10000)
		return;
	char a[NG_ADDR_STRLEN];
	ng_warn("%" PRIu64 " exporter restart%s seen (uptime or sequence number went back), the "
	        "latest of exporter %s domain %" PRIu32 " %s: data of the templates it had "
	        "announced before is held until it announces them again (restarts in nagare "
	        "status; docs/exporters.md)",
	        n - c->rs_logged, n - c->rs_logged == 1 ? "" : "s",
	        ng_addr_format(last.exporter, a), last.domain, ng_protocol_name(last.version));
	c->rs_logged = n;
	c->rs_logged_ms = now;
}

void ng_coll_save_counters(const char *path, ng_exporters_file *f)
{
	if (ng_exporters_save(path, f) < 0)
		ng_error("cannot write %s: %s", path, strerror(errno));
}

void ng_coll_report(ng_collector *c)
{
	ng_exporters_file *f = malloc(sizeof *f);
	if (!f)
		return;
	ng_coll_snapshot(c, f);
	ng_coll_log_counters(f, (size_t)c->limits.logged_exporters);
	ng_coll_flusher_save(c, f);
	ng_coll_log_workers(c);
}

void ng_coll_log_workers(ng_collector *c)
{
	for (unsigned w = 0; c->nworkers > 1 && w < c->nworkers; w++) {
		ng_listener_stats st;
		uint64_t records;
		ng_coll_workers_stats(c, w, &st, &records);
		ng_info("worker %u: %" PRIu64 " records, %" PRIu64 " datagrams, %" PRIu64
		        " dropped by the kernel",
		        w, records, st.datagrams, st.drops);
	}
}

/* ng_doctor_fn: warnings and failures into the log. */
static void log_finding(ng_doc_level l, const char *check, const char *what, const char *fix,
                        void *arg)
{
	(void)arg;
	if (l == NG_DOC_OK || !strncmp(check, "sysctl ", 7)) /* sysctls: one line, below */
		return;
	ng_warn("doctor: %s: %s%s%s", check, what, fix ? "; " : "", fix ? fix : "");
}

void ng_coll_doctor(const ng_collector_config *cfg)
{
	ng_doctor_opts o = {.store = cfg->store,
	                    .listen = cfg->listen,
	                    .nlisten = cfg->nlisten,
	                    .cfg = cfg->config,
	                    .http = cfg->http_listen,
	                    .http_off = !cfg->http,
	                    .http_token = cfg->http_token && *cfg->http_token,
	                    .clickhouse_off = true};
	char *lines = NULL;
	ng_doctor_run(&o, log_finding, NULL, &lines);
	if (!lines)
		return;
	for (char *p = lines; (p = strchr(p, '\n'));)
		*p = p[1] ? ';' : 0;
	ng_warn("doctor: the kernel's UDP settings are below what nagare needs (bursts may be "
	        "dropped); put these lines in " NG_DOCTOR_SYSCTL_FILE
	        " and run `sysctl --system` (`nagare doctor` says why): %s",
	        lines);
	free(lines);
}
