/*
 * enrichment.c — where a running collector enriches its records, and
 * the reload of the tables.
 *
 * One table set (enrich/enrich.h) is built at start from the
 * configuration and published in the slot c->enrich.  Who applies it
 * depends on the outputs:
 *
 *   storing only (the default)  the store's flush thread, column by
 *                               column, on each segment's rows as it
 *                               writes them (enrich_columns, the writer's
 *                               derive function), holding the slot's
 *                               mutex while it does (ng_enrich_hold)
 *   with NDJSON (--json)        the receive thread, in place, on every
 *                               batch before it is appended and written
 *                               (receive.c: hand_on), between
 *                               ng_enrich_enter and ng_enrich_leave
 *
 * Why the flush: the enrichment columns are then written once, in their
 * final order, rather than copied out of every record into the store's
 * buffer and sorted with the rest (5-12 % less CPU a record, run side by
 * side; docs/enrichment.md), and the receive thread keeps more room for
 * bursts.
 *
 * A reload (SIGHUP, or a file the tables came from replaced) runs on the
 * reloader's thread (enrich/reload.c): it reads the configuration again
 * (rebuild_enricher, through the caller's reload function), builds a new
 * set aside and swaps it into the slot; the swap frees the old set once
 * the flush has released it and the receive thread has left the batch it
 * was in.  Collector settings in the file (store, listen) take effect
 * only at the next start.
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector/collector_int.h"
#include "core/field.h"
#include "core/log.h"

int ng_coll_enrich_open(ng_collector *c)
{
	const ng_collector_config *cfg = c->cfg;
	if (!cfg->enrich)
		return 0;
	char err[512];
	ng_enricher *e = ng_enricher_build(cfg->config, err, sizeof err);
	if (!e) {
		fprintf(stderr, "nagare collect: enrichment: %s\n", err);
		if (!cfg->config->geoip_optional)
			fprintf(stderr, "nagare collect: (--geoip-optional runs on without "
			                "a database that cannot be used)\n");
		return -1;
	}
	char d[1024];
	ng_info("enrichment: %s", ng_enricher_describe(e, d, sizeof d));
	atomic_store(&c->enrich.cur, e);
	return 0;
}

/*
 * The store's derive function (store.h): enriches the rows of a segment
 * about to be written, column by column.  Without an output that needs
 * enriched records as they arrive (NDJSON), enrichment waits for the
 * flush: its columns are then written once, in their final order, rather
 * than copied out of every record into the store's buffer and sorted with
 * the rest (5-12 % less CPU a record with enrichment, run side by side).
 * The rows carry the tables of the segment write: normally within a flush
 * interval (5 s) of their arrival, later when a flush is retried.
 * Returns 0, or -1 when a column cannot be had (out of memory: the flush
 * fails and is retried).
 */
static int enrich_columns(void *arg, ng_store_cols *sc)
{
	ng_collector *c = arg;
	int rc = 0;
	ng_enricher *e = ng_enrich_hold(&c->enrich);
	if (e) {
		ng_enrich_view v = {.n = ng_store_cols_rows(sc)};
		const ng_colset fields = ng_enricher_fields(e), whole = ng_enricher_fields_whole(e);
		ng_colset left = fields;
		for (int f; (f = ng_colset_pop(&left)) >= 0 && !rc;) {
			/* a column the set writes whole need not be zeroed first */
			v.at[f] = ng_colset_has(whole, f) ? ng_store_cols_get_whole(sc, f)
			                                  : ng_store_cols_get(sc, f);
			v.step[f] = ng_fields[f].size;
			rc = v.at[f] ? 0 : -1;
		}
		if (!rc)
			ng_enricher_apply_view(e, &v);
#ifdef __SANITIZE_ADDRESS__
		/* the sanitizer build's poison (ng_store_cols_get_whole) must
		 * be gone from every row: no string ID or AS source is 0xA5... */
		left = rc ? (ng_colset){{0}} : whole;
		for (int f; (f = ng_colset_pop(&left)) >= 0;)
			for (size_t i = 0; i < v.n; i++)
				if (ng_fields[f].size == 4
				        ? !memcmp(v.at[f] + 4 * i, "\xA5\xA5\xA5\xA5", 4)
				        : v.at[f][i * ng_fields[f].size] == 0xA5) {
					ng_error("enrichment: row %zu of %s left unwritten", i,
					         ng_fields[f].name);
					abort();
				}
#endif
	}
	ng_enrich_release(&c->enrich);
	return rc;
}

void ng_coll_enrich_place(ng_collector *c)
{
	if (atomic_load(&c->enrich.cur) && !c->json) {
		c->enrich_at_flush = true;
		ng_store_writer_set_derive(c->w, enrich_columns, c);
	}
}

/* ng_enrich_build_fn, on the reloader's thread: the configuration read
 * again (the caller's reload function: file, environment, flags) and a
 * fresh table set built from it; NULL with the cause in err. */
static ng_enricher *rebuild_enricher(void *arg, char *err, size_t errlen)
{
	ng_collector *c = arg;
	const ng_collector_config *cc = c->cfg;
	ng_coll_service_reloading(false);
	ng_enricher *e = NULL;
	ng_config cfg;
	if (!cc->reload)
		e = ng_enricher_build(cc->config, err, errlen);
	else if (cc->reload(cc->reload_arg, &cfg, err, errlen) == 0) {
		e = ng_enricher_build(&cfg, err, errlen);
		ng_config_free(&cfg);
	}
	ng_coll_service_reloading(true);
	return e;
}

void ng_coll_reloader_start(ng_collector *c)
{
	if (atomic_load(&c->enrich.cur) &&
	    !(c->reloader =
	          ng_reloader_start(&c->enrich, rebuild_enricher, c, &ng_coll_hup_requested)))
		ng_warn("cannot start the enrichment reloader: SIGHUP will not reload");
}

void ng_coll_log_enrichment(ng_collector *c)
{
	ng_enricher *e = ng_enrich_enter(&c->enrich);
	if (e) {
		ng_enrich_stats st;
		ng_enricher_get_stats(e, &st);
		uint64_t probes = st.cache_hits + st.cache_misses;
		ng_info("enrichment: %" PRIu64 " records, %" PRIu64 " address lookups of which "
		        "%.1f %% answered by the cache, %" PRIu64 " lookup errors",
		        st.records, probes,
		        probes ? 100.0 * (double)st.cache_hits / (double)probes : 0.0,
		        st.lookup_errors);
		if (st.class_evals)
			ng_info("enrichment: classification rules evaluated %" PRIu64
			        " times (exporters and interfaces), caches emptied %" PRIu64
			        " times",
			        st.class_evals, st.class_resets);
	}
	ng_enrich_leave(&c->enrich);
}
