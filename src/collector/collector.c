/*
 * collector.c — the running collector: its threads, its start and its
 * stop (collector.h).
 *
 * Five kinds of thread (HTTP is a pool), each with what it alone may
 * touch:
 *
 *   receive (the caller)      the listener, the decoder (templates, held
 *   receive.c                 sets, counters: not thread-safe), the flow
 *                             batch, NDJSON, interface names from options
 *                             data; appends to the store writer and the
 *                             counter store; takes counter snapshots
 *   flush                     flushes the store writer and the counter
 *   flush.c                   store (the slow writes: encode, compress,
 *                             fsync, rename); writes exporters.json; with
 *                             enrichment at the flush, enriches columns
 *   enrichment reloader       builds a new table set on SIGHUP or a
 *   enrichment.c, enrich/     replaced file, swaps it into the slot
 *   HTTP (libmicrohttpd)      queries the store directory; copies the
 *   live.c, http/             live counter snapshot
 *   maintenance               compaction, rollups, retention of the
 *   maint.c                   store directory, at low priority
 *
 * What crosses between them, and how:
 *
 *   receive → store writer, counter store   append (a memcpy under the
 *                              writer's mutex); flush takes the buffer out
 *                              under it and writes without (store.h)
 *   receive → flush            flush_wanted, a counter snapshot to write
 *                              (pending): under c->mu, c->cv wakes it
 *   receive → HTTP             the live snapshot: a pointer under
 *                              c->live_mu, copied out by the server
 *   reloader → receive, flush  the table set: the slot's protocol
 *                              (enrich/enrich.h: an epoch the receive
 *                              thread advances, a mutex the flush holds)
 *   signals → receive, reloader   sig_atomic_t flags (signals.c)
 *
 * Nothing else is shared: `cfg` is read-only, the maintenance thread
 * shares only the directory (the store's maintenance lock orders it
 * against `nagare compact`), and the HTTP threads read segments as any
 * reader does.  The receive thread waits on no disk: its appends hold
 * the writer's mutex for a memcpy, and the counter snapshots it takes are
 * written by the flush thread (only interfaces.tsv, small and not synced,
 * is written by the receive thread itself).
 *
 * Start: store writer, counter store, state directory, decoder and its
 * saved templates, earlier counters, enrichment tables, sockets, NDJSON;
 * then the HTTP server, the reloader, the flush and maintenance threads.
 * Stop (SIGTERM/SIGINT): the receive loop drains the sockets; then the
 * threads stop in the order that leaves nobody using what goes next —
 * maintenance (it may be in a merge), HTTP (before the decoder and
 * writers go), reloader (the slot closed first, so a swap does not wait
 * for a receive thread that will enter no more), flush — and the final
 * flush and state saving run in the one thread left (finish).
 */
#include "collector/collector.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector/collector_int.h"
#include "collector/maint.h"
#include "core/log.h"
#include "core/timefmt.h"
#include "net/reuseport.h"

/* The store writer's tap: the rows a flush made durable, to ClickHouse. */
static void to_clickhouse(void *arg, const uint8_t *const *cols, size_t n)
{
	ng_ch_sink_put(arg, cols, n);
}

/* The ClickHouse sink, fed by the store's flush (sink/clickhouse.h).
 * Returns 0, or -1 with the cause on stderr. */
static int open_clickhouse(ng_collector *c)
{
	char err[NG_CH_ERR_MAX + 128];
	c->ch = ng_ch_sink_open(c->cfg->clickhouse, err, sizeof err);
	if (!c->ch) {
		fprintf(stderr, "nagare collect: clickhouse: %s\n", err);
		return -1;
	}
	ng_store_writer_set_tap(c->w, to_clickhouse, c->ch, !c->cfg->no_segments);
	return 0;
}

/* The store writer, the counter store and the state files' paths.
 * Returns 0, or -1 with the cause on stderr. */
static int open_store(ng_collector *c)
{
	const char *store = c->cfg->store;
	char err[512], state[PATH_MAX - 32];
	c->w = ng_store_writer_open(store, err, sizeof err);
	if (!c->w) {
		fprintf(stderr, "nagare collect: %s\n", err);
		return -1;
	}
	c->cs = ng_counter_store_open(store, err, sizeof err);
	if (!c->cs) {
		fprintf(stderr, "nagare collect: %s\n", err);
		return -1;
	}
	if (!ng_store_state_dir(store, state, sizeof state)) {
		fprintf(stderr, "nagare collect: cannot create %s/state: %s\n", store,
		        strerror(errno));
		return -1;
	}
	if (c->cfg->clickhouse && open_clickhouse(c) < 0)
		return -1;
	snprintf(c->tpl_path, sizeof c->tpl_path, "%s/templates", state);
	snprintf(c->exp_path, sizeof c->exp_path, "%s/exporters.json", state);
	snprintf(c->ifs_path, sizeof c->ifs_path, "%s/interfaces.tsv", state);
	return 0;
}

/* The saved templates, within the limits; what did not fit is logged. */
static void load_templates(ng_collector *c)
{
	if (ng_coll_load_templates_of(c->dec, c->tpl_path, 0, c->nworkers) < 0)
		return;
	ng_limit_stats l;
	ng_decoder_limit_stats(c->dec, &l);
	if (l.templates_evicted)
		ng_warn("template state %s: %" PRIu64
		        " templates not loaded, past limits.templates, "
		        "templates_per_domain, template_bytes or domains (the %" PRIu64
		        " most recently used were)",
		        c->tpl_path, l.templates_evicted, l.templates);
	c->lim_logged = l;
}

/* The sockets of every worker (net/listener.h) and the workers past the
 * first.  Returns 0, or -1 with the cause on stderr. */
static int open_listeners(ng_collector *c)
{
	const ng_collector_config *cfg = c->cfg;
	char err[512];
	ng_listener *lis[NG_REUSEPORT_MAX];
	if (ng_listener_open_workers(cfg->listen, cfg->nlisten, c->nworkers, lis, err, sizeof err) <
	    0) {
		fprintf(stderr, "nagare collect: %s\n", err);
		return -1;
	}
	c->lis = lis[0];
	if (ng_coll_workers_open(c, lis) < 0) {
		for (unsigned w = 1; w < c->nworkers; w++)
			ng_listener_close(lis[w]);
		fprintf(stderr, "nagare collect: out of memory\n");
		return -1;
	}
	return 0;
}

/* Everything the receive loop needs, in the order a failure is best
 * reported.  Returns 0, or -1 with the cause on stderr (close_all frees
 * what was made). */
static int open_all(ng_collector *c)
{
	const ng_collector_config *cfg = c->cfg;
	char err[512];
	if (open_store(c) < 0)
		return -1;
	ng_coll_doctor(cfg);
	c->limits = cfg->config->limits;
	ng_limits_fill(&c->limits);
	c->wlimits = ng_coll_worker_limits(&c->limits, c->nworkers);
	if (cfg->options_names && !(c->ifs = ng_iftab_new((size_t)c->wlimits.interfaces,
	                                                  (size_t)c->wlimits.interface_names))) {
		fprintf(stderr, "nagare collect: out of memory\n");
		return -1;
	}
	/* SNMP interface names (enrich/snmp.h), with the options data's */
	if (c->ifs && cfg->config && !(c->snmp = ng_snmp_start(cfg->config, err, sizeof err)) &&
	    err[0]) {
		fprintf(stderr, "nagare collect: %s\n", err);
		return -1;
	}
	if (c->snmp)
		ng_iftab_watch(c->ifs, ng_snmp_polled, c->snmp);
	ng_decoder_config dc = {.limits = c->wlimits};
	c->dec = ng_decoder_new(&dc);
	if (!c->dec) {
		fprintf(stderr, "nagare collect: out of memory\n");
		return -1;
	}
	load_templates(c);
	if (ng_exporters_load(c->exp_path, &c->base, err, sizeof err) < 0 && errno != ENOENT)
		ng_warn("%s; counters start from zero", err);
	/* a file of an unbounded nagare may hold tens of thousands of rows,
	 * merged into every snapshot: keep it to the rows listed */
	ng_exporters_cap(&c->base, (size_t)c->limits.listed_exporters);
	if (ng_coll_enrich_open(c) < 0)
		return -1;
	if (open_listeners(c) < 0)
		return -1;
	if (cfg->json) {
		c->json_name = strcmp(cfg->json, "-") ? cfg->json : "stdout";
		c->json = strcmp(cfg->json, "-") ? fopen(cfg->json, "a") : stdout;
		if (!c->json) {
			fprintf(stderr, "nagare collect: cannot write %s: %s\n", cfg->json,
			        strerror(errno));
			return -1;
		}
	}
	ng_coll_enrich_place(c);
	return 0;
}

/* The start's log line: the sockets, the store, the NDJSON output. */
/* Logs the addresses and the store; the same words go in status (len
 * bytes), for systemd's STATUS= (service.c). */
static void announce(const ng_collector *c, char *status, size_t len)
{
	char names[1024] = "";
	size_t off = 0;
	for (size_t i = 0; i < ng_listener_count(c->lis) && off < sizeof names; i++) {
		char n[64];
		ng_listener_name(c->lis, i, n, sizeof n);
		/* UDP sockets are named "ADDR:PORT", TCP/SCTP "tcp://ADDR:PORT" */
		off += (size_t)snprintf(names + off, sizeof names - off, "%s%s%s", i ? ", " : "",
		                        strstr(n, "://") ? "" : "udp ", n);
	}
	snprintf(status, len, "listening on %s; %s %s%s%s%s", names,
	         c->cfg->no_segments ? "flows to ClickHouse, state in" : "storing flows in",
	         c->cfg->store, c->ch && !c->cfg->no_segments ? " and ClickHouse" : "",
	         c->json ? "; NDJSON to " : "", c->json ? c->json_name : "");
	ng_info("%s", status);
}

/* Frees what open_all made; the writers are closed (flushed) here only
 * on a failed start, finish() closes them otherwise. */
static void close_all(ng_collector *c)
{
	if (c->w)
		ng_store_writer_close(c->w);
	if (c->ch)
		ng_ch_sink_close(c->ch, 0, NULL);
	ng_counter_store_close(c->cs);
	if (c->json && c->json != stdout)
		fclose(c->json);
	else if (c->json)
		fflush(c->json);
	ng_coll_workers_close(c);
	ng_listener_close(c->lis);
	ng_decoder_free(c->dec);
	ng_exporters_free(&c->base);
	ng_flow_batch_free(&c->batch);
	ng_counter_batch_free(&c->counters);
	ng_enricher_free(atomic_exchange(&c->enrich.cur, NULL));
	pthread_mutex_destroy(&c->enrich.hold);
	ng_snmp_stop(c->snmp);
	c->snmp = NULL;
	ng_iftab_free(c->ifs);
}

/* What may have been lost this run, logged; returns 1 when anything was,
 * else 0.  After the final flush, in the one thread left. */
static int finish_losses(ng_collector *c)
{
	int rc = 0;
	if (ng_counter_store_close(c->cs) < 0) {
		ng_error("final flush of sFlow counter samples failed: they are lost");
		rc = 1;
	}
	c->cs = NULL;
	if (c->counters_lost) {
		ng_error("%" PRIu64 " sFlow counter samples were dropped for lack of memory",
		         c->counters_lost);
		rc = 1;
	}
	if (ng_decoder_save(c->dec, c->tpl_path) < 0) {
		ng_error("cannot save templates to %s: %s", c->tpl_path, strerror(errno));
		rc = 1;
	}
	if (c->append_lost) {
		ng_error("%" PRIu64 " flow records were dropped: the store could not take them",
		         c->append_lost);
		rc = 1;
	}
	return rc;
}

/* Final flush, template and counter state (the flush thread has
 * stopped: everything here runs in the one remaining thread).
 * Returns the exit status. */
static int finish(ng_collector *c)
{
	ng_exporters_file f;
	ng_coll_snapshot(c, &f);
	ng_coll_save_counters(c->exp_path, &f); /* first: counters survive a failing disk */
	ng_exporters_free(&f);
	int rc = 0;
	/* every row, however many hours they span (each flush writes at most
	 * NG_FLUSH_MAX_HOURS): ClickHouse gets them through the tap before it
	 * closes */
	ng_store_writer_stats ws;
	uint64_t before;
	do {
		ng_store_writer_get_stats(c->w, &ws);
		before = ws.rows;
		if (ng_store_writer_flush(c->w) < 0) {
			ng_error("final store flush failed: the records received since the last "
			         "segment are lost");
			rc = 1;
			break;
		}
		ng_store_writer_get_stats(c->w, &ws);
	} while (ws.rows != before);
	if (c->ch) { /* after the flush, which hands it the last rows */
		if (ng_ch_sink_close(c->ch, 10000, &c->ch_final) < 0)
			rc = 1; /* logged */
		c->ch = NULL;
		c->ch_closed = true;
		/* rows a failed flush kept go to segments at the close, not to
		 * the closed sink */
		ng_store_writer_set_tap(c->w, NULL, NULL, true);
	}
	ng_coll_log_enrichment(c); /* after the flush: it may enrich (enrich_columns) */
	ng_coll_snapshot(c, &f);   /* again, with the final store counts */
	ng_coll_log_counters(&f, (size_t)c->limits.logged_exporters);
	ng_coll_log_workers(c); /* the workers have stopped: their final counts */
	ng_coll_save_counters(c->exp_path, &f);
	ng_exporters_free(&f);
	ng_store_writer_close(c->w);
	c->w = NULL;
	if (finish_losses(c))
		rc = 1;
	if (ng_coll_workers_save(c) < 0)
		rc = 1;
	return rc;
}

/* Starts the maintenance thread (NULL, warned, when it cannot start). */
static ng_maint *start_maint(const ng_collector_config *cfg)
{
	ng_maint_config mc = {.store_dir = cfg->store,
	                      .retention_ms = cfg->retention_ms,
	                      .max_bytes = cfg->max_bytes,
	                      .interval_ms = cfg->maint_interval_ms};
	ng_maint *maint = ng_maint_start(&mc);
	if (!maint)
		ng_warn("cannot start the maintenance thread: no compaction or retention");
	return maint;
}

int ng_collector_run(const ng_collector_config *cfg)
{
	assert(cfg && cfg->store && cfg->config && cfg->stats_interval >= 1);
	assert(!cfg->max_past_ms ||
	       (cfg->max_past_ms >= 60000 && cfg->max_past_ms <= NG_COLL_MAX_PAST_LIMIT_MS &&
	        cfg->max_future_ms <= NG_COLL_MAX_FUTURE_LIMIT_MS));
	assert(cfg->listen || !cfg->nlisten);
	assert(cfg->workers <= NG_REUSEPORT_MAX && (cfg->workers <= 1 || !cfg->json));
	ng_collector c = {
	    .cfg = cfg, .started_ms = ng_now_ms(), .nworkers = cfg->workers ? cfg->workers : 1};
	c.tc.past = cfg->max_past_ms ? cfg->max_past_ms : NG_COLL_MAX_PAST_MS;
	c.tc.future = cfg->max_past_ms ? cfg->max_future_ms : NG_COLL_MAX_FUTURE_MS;
	pthread_mutex_init(&c.enrich.hold, NULL);
	ng_coll_signals_install();
	if (open_all(&c) < 0) {
		close_all(&c);
		return 1;
	}
	char status[1100];
	announce(&c, status, sizeof status);
	if (ng_coll_http_start(&c) < 0) {
		close_all(&c);
		return 1;
	}
	ng_coll_reloader_start(&c);
	if (ng_coll_flusher_start(&c) != 0) {
		fprintf(stderr, "nagare collect: cannot start the flush thread\n");
		ng_coll_http_stop(&c);
		atomic_store(&c.enrich.closed, true);
		ng_reloader_stop(c.reloader);
		close_all(&c);
		return 1;
	}
	ng_maint *maint = start_maint(cfg);
	int rc = ng_coll_workers_start(&c) < 0 ? 1 : 0;
	if (!rc) {
		ng_coll_service_ready(&c, status);
		rc = ng_coll_receive_loop(&c) < 0 ? 1 : 0;
	} else {
		ng_coll_stop_requested = 1; /* the workers started stop too */
	}
	ng_coll_service_stopping();
	ng_coll_workers_join(&c);    /* they drain their sockets */
	ng_coll_save_interfaces(&c); /* every worker's, now final */
	ng_maint_stop(maint);        /* waits for a merge in progress */
	ng_coll_http_stop(&c);       /* before the decoder and writers go */
	atomic_store(&c.enrich.closed, true);
	ng_reloader_stop(c.reloader);
	ng_coll_flusher_stop(&c);
	ng_info("stopping: flushing the store, saving templates and counters");
	if (finish(&c))
		rc = 1;
	close_all(&c);
	return rc;
}
