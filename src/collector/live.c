/*
 * live.c — the dashboards and API of a running collector, and the live
 * counters they show.
 *
 * The HTTP server (http/http.h) runs on libmicrohttpd's threads, started
 * here with the stop signals blocked.  Queries read the store directory
 * as any reader does (store.h: segments appear whole, by rename), so they
 * need nothing from the collector.  The exporter counters do: they live
 * in the decoder, which only the receive thread may read.  So once a
 * second the receive thread publishes a snapshot (report.c) into c->live,
 * swapping the pointer under c->live_mu, and the server
 * (/api/v1/exporters, /metrics) copies the rows out under the same mutex
 * (live_exporters).  Neither
 * side holds the mutex longer than a pointer swap or a memcpy.
 *
 * The server stops before the decoder and writers go (collector.c), so
 * no request is in progress when they do.
 *
 * With ClickHouse alone (collect --clickhouse URL, no store: the store
 * directory holds only state), the flow queries go to ClickHouse over
 * the sink's connection settings (http.h ng_http_config.clickhouse);
 * the exporter counters stay the live ones.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector/collector_int.h"
#include "core/thread.h"
#include "core/log.h"

void ng_coll_publish_live(ng_collector *c)
{
	if (!c->http)
		return;
	ng_exporters_file *f = malloc(sizeof *f);
	if (!f)
		return;
	ng_coll_snapshot(c, f);
	pthread_mutex_lock(&c->live_mu);
	ng_exporters_file *old = c->live;
	c->live = f;
	pthread_mutex_unlock(&c->live_mu);
	if (old) {
		ng_exporters_free(old);
		free(old);
	}
}

/* ng_http_exporters_fn, on a server thread: a copy of the last published
 * snapshot into *out (rows malloc'd, freed by the server).  Returns -1
 * before the first snapshot or when out of memory. */
static int live_exporters(void *arg, ng_http_exporters *out, char *err, size_t errlen)
{
	ng_collector *c = arg;
	int rc = -1;
	pthread_mutex_lock(&c->live_mu);
	const ng_exporters_file *f = c->live;
	if (!f) {
		snprintf(err, errlen, "the collector is starting: no counters yet");
	} else if ((out->rows = malloc((f->n ? f->n : 1) * sizeof *out->rows))) {
		if (f->n) /* rows is NULL before any exporter: memcpy(…, NULL, 0) is UB */
			memcpy(out->rows, f->rows, f->n * sizeof *out->rows);
		out->n = f->n;
		out->listener = f->listener;
		out->store = f->store;
		out->has_clickhouse = f->has_clickhouse;
		out->clickhouse = f->clickhouse;
		out->limits = f->limits;
		out->nworkers = f->nworkers;
		memcpy(out->workers, f->workers, sizeof out->workers);
		out->started_ms = f->started_ms;
		out->updated_ms = f->updated_ms;
		out->live = true;
		rc = 0;
	} else {
		snprintf(err, errlen, "out of memory");
	}
	pthread_mutex_unlock(&c->live_mu);
	return rc;
}

/* ng_http_config.snmp_json, on a server thread: the poller's agents. */
static void live_snmp(void *arg, FILE *f)
{
	ng_snmp_put_json(arg, f);
}

/* The server's threads are created with the stop signals (and SIGHUP)
 * blocked.  The default address being taken only warns: the collector
 * runs on without HTTP. */
/* Whether the enrichment tables at start use DB-IP data (the
 * dashboards' attribution, enrich.h ng_enricher_dbip). */
static bool live_dbip(ng_collector *c)
{
	ng_enricher *e = ng_enrich_hold(&c->enrich);
	bool dbip = e && ng_enricher_dbip(e);
	ng_enrich_release(&c->enrich);
	return dbip;
}

int ng_coll_http_start(ng_collector *c)
{
	const ng_collector_config *cfg = c->cfg;
	pthread_mutex_init(&c->live_mu, NULL);
	c->attribution_dbip = live_dbip(c); /* also for exporters.json: serve's */
	if (!cfg->http)
		return 0;
	const char *token = cfg->http_token, *addr = cfg->http_listen;
	/* where flows come in, for the API: --listen, else the default ports */
	enum { NDEF = sizeof ng_listen_default_ports / sizeof *ng_listen_default_ports };
	char defs[NDEF][8];
	const char *dv[NDEF];
	for (size_t i = 0; i < NDEF; i++) {
		snprintf(defs[i], sizeof defs[i], ":%u", (unsigned)ng_listen_default_ports[i]);
		dv[i] = defs[i];
	}
	ng_http_config hc = {.store_dir = cfg->store,
	                     .flow_listen = cfg->nlisten ? cfg->listen : dv,
	                     .nflow_listen = cfg->nlisten ? cfg->nlisten : NDEF,
	                     .listen = addr ? addr : "127.0.0.1:8080",
	                     .token = token,
	                     .exporters = live_exporters,
	                     .exporters_arg = c,
	                     .snmp_json = c->snmp ? live_snmp : NULL,
	                     .snmp_arg = c->snmp,
	                     .limits = cfg->http_limits,
	                     .metrics_exporters = (size_t)c->limits.metrics_exporters,
	                     .attribution_dbip = c->attribution_dbip};
	/* ClickHouse alone (no segment written): the flow queries read
	 * ClickHouse, over the sink's connection settings; with the store
	 * too, the store stays their source (docs/clickhouse.md "Queries") */
	if (cfg->clickhouse && cfg->no_segments)
		hc.clickhouse = &cfg->clickhouse->conn;
	sigset_t old;
	ng_signals_block(&old); /* for the server's threads (core/thread.h) */
	char err[512];
	c->http = ng_http_start(&hc, err, sizeof err);
	ng_signals_restore(&old);
	if (!c->http && addr) {
		fprintf(stderr, "nagare collect: %s\n", err);
		return -1;
	}
	if (!c->http) {
		ng_warn("%s; running without the dashboards (--http ADDR:PORT to choose "
		        "another address, --no-http to silence this)",
		        err);
		return 0;
	}
	ng_coll_publish_live(c);
	ng_http_announce(c->http, NULL);
	return 0;
}

void ng_coll_http_stop(ng_collector *c)
{
	ng_http_stop(c->http);
	c->http = NULL;
	if (c->live) {
		ng_exporters_free(c->live);
		free(c->live);
		c->live = NULL;
	}
}
