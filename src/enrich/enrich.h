/*
 * enrich.h — enrichment of flow records at ingest (docs/enrichment.md).
 *
 * An ng_enricher is one immutable "table set" built from the configuration:
 * GeoIP and ASN databases (MaxMind format), named networks with the
 * built-in address classes, the services database, exporter and interface
 * names.  ng_enricher_apply fills the enrichment fields of a batch of
 * records in place (flow.h: src_country … dst_net_site, and src_as/dst_as
 * when the exporter sent none).
 *
 * Reload without stopping ingest: a new table set is built aside (on the
 * reloader's thread), then published through an ng_enrich_slot.  The
 * receive thread brackets each batch with ng_enrich_enter/leave; the swap
 * frees the old set only after the receive thread has left a batch begun
 * before the swap (an epoch counter), so no record is lost or half-done.
 * The store's flush thread, which enriches the columns it writes when no
 * output needs enriched records sooner, holds the set under the slot's
 * mutex instead (ng_enrich_hold/release); the swap takes it to publish.
 */
#ifndef NG_ENRICH_H
#define NG_ENRICH_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/colset.h"
#include "core/config.h"
#include "core/field.h"
#include "core/flow.h"

typedef struct ng_enricher ng_enricher;

typedef struct ng_enrich_stats {
	uint64_t records;          /* records enriched */
	uint64_t cache_hits;       /* address lookups answered by the cache */
	uint64_t cache_misses;     /* … that went to the databases and tries */
	uint64_t lookup_errors;    /* libmaxminddb lookup failures (no enrichment) */
	size_t geo_recs, asn_recs; /* distinct data records in the databases */
	uint64_t class_evals;      /* classification rules evaluated (classify.h: once per
	                            * exporter and per interface and names) */
	uint64_t class_resets;     /* classification caches emptied when full */
} ng_enrich_stats;

/* Builds a table set from `c` (paths, language, networks, exporters).
 * A database that cannot be opened, or is corrupt, fails the build with
 * "PATH: what is wrong" in err, unless c->geoip_optional: then the problem
 * is logged as a warning and the set is built without that database.
 * Returns NULL on failure. */
ng_enricher *ng_enricher_build(const ng_config *c, char *err, size_t errlen);
void ng_enricher_free(ng_enricher *e);

/* Fills the enrichment fields of flows[0..n).  Uses the set's lookup cache:
 * one thread at a time per set. */
void ng_enricher_apply(ng_enricher *e, ng_flow *flows, size_t n);

/* n records' fields wherever they lie: field f of record i at
 * at[f] + i * step[f] bytes.  Rows of ng_flow (ng_enrich_view_rows), or
 * the columns of the store's flush (step = the field's size), where the
 * enrichment columns are written once, in their final order, instead of
 * being copied out of every record and then sorted (docs/enrichment.md). */
typedef struct ng_enrich_view {
	size_t n;
	uint8_t *at[NG_FIELD_COUNT];
	size_t step[NG_FIELD_COUNT];
} ng_enrich_view;

/* The view of flows[0..n) (the records stay owned by the caller). */
void ng_enrich_view_rows(ng_enrich_view *v, ng_flow *flows, size_t n);

/* The fields ng_enricher_apply_view reads or writes with this set:
 * addresses and AS numbers, and the fields the set can give (a database
 * without cities writes no city).  A view needs only these. */
ng_colset ng_enricher_fields(const ng_enricher *e);

/* Those of ng_enricher_fields(e) that ng_enricher_apply_view writes in
 * every row of a view without reading them first (the answers of the
 * databases, networks, services and classification rules): a view's
 * column for one of them need not be zeroed before (the store's
 * ng_store_cols_get_whole). */
ng_colset ng_enricher_fields_whole(const ng_enricher *e);

/* ng_enricher_apply on a view; the fields of ng_enricher_fields(e) must
 * be in it.  Same rules: one thread at a time per set. */
void ng_enricher_apply_view(ng_enricher *e, const ng_enrich_view *v);

/* One line describing the set (databases, their record counts and the
 * memory and build time of their lookup tables, networks, exporters) into
 * buf; returns buf.  Logged at every build (start, reload). */
char *ng_enricher_describe(const ng_enricher *e, char *buf, size_t len);
void ng_enricher_get_stats(const ng_enricher *e, ng_enrich_stats *s);

/* Files the set was built from (configuration file and every file of the
 * databases' lists): up to NG_ENRICH_MAX_FILES paths into paths[];
 * returns how many.  For replacement checks. */
#define NG_ENRICH_MAX_FILES 5
size_t ng_enricher_files(const ng_enricher *e, const char *paths[NG_ENRICH_MAX_FILES]);

/* True when the set uses DB-IP data (the default databases, or any file
 * named so: enrich_int.h ng_geodb_is_dbip), whose licence (CC BY 4.0) asks
 * for "IP Geolocation by DB-IP" linking to https://db-ip.com where its
 * results are shown: the dashboards show it (docs/enrichment.md). */
bool ng_enricher_dbip(const ng_enricher *e);

/* Opens the MaxMind-format database at `path` (MMDB_open, no walk) and
 * reads its metadata: the build time (metadata build_epoch, seconds since
 * 1970) into *built and its database_type ("GeoLite2-City",
 * "DBIP-City-Lite", …) into type[typelen].  For `nagare doctor`.  Returns
 * 0, or -1 with the cause in err[errlen] (missing, unreadable, not a
 * MaxMind DB). */
int ng_geodb_probe(const char *path, uint64_t *built, char *type, size_t typelen, char *err,
                   size_t errlen);

/* ---- publishing a table set to the receive thread --------------------- */

typedef struct ng_enrich_slot {
	_Atomic(ng_enricher *) cur;
	_Atomic uint64_t epoch; /* batches left */
	atomic_bool closed;     /* the receive thread will enter no more */
	pthread_mutex_t hold;   /* held by the store's flush while it enriches */
} ng_enrich_slot;

/* Flush thread (the store enriching its columns): the current set (may be
 * NULL), kept from being swapped out until ng_enrich_release.  The slot's
 * `hold` must have been initialised (pthread_mutex_init). */
static inline ng_enricher *ng_enrich_hold(ng_enrich_slot *s)
{
	pthread_mutex_lock(&s->hold);
	return atomic_load(&s->cur);
}
static inline void ng_enrich_release(ng_enrich_slot *s)
{
	pthread_mutex_unlock(&s->hold);
}

/* Receive thread: the set to apply to this batch (may be NULL). */
static inline ng_enricher *ng_enrich_enter(ng_enrich_slot *s)
{
	return atomic_load(&s->cur);
}
/* Receive thread: done with the set taken by enter (also call it when idle,
 * so a pending swap is not held up). */
static inline void ng_enrich_leave(ng_enrich_slot *s)
{
	atomic_fetch_add(&s->epoch, 1);
}

/* Publishes `n` and frees the previous set once nothing uses it (waits for
 * a flush holding it, then for the receive thread's next ng_enrich_leave,
 * or for `closed`). */
void ng_enrich_swap(ng_enrich_slot *s, ng_enricher *n);

/* ---- reloading -------------------------------------------------------- */

/* Builds a fresh set (reading the configuration again); NULL + err when
 * it cannot. */
typedef ng_enricher *(*ng_enrich_build_fn)(void *arg, char *err, size_t errlen);

typedef struct ng_reloader ng_reloader;

/* Starts a thread that rebuilds the set and swaps it into `slot` when
 * *hup becomes non-zero (it is reset; a SIGHUP handler sets it), or when a
 * file the current set was built from changes (device, inode or mtime,
 * checked once a second).  A failed build keeps the current set, logs why
 * and is retried only when the files change again or on the next SIGHUP. */
ng_reloader *ng_reloader_start(ng_enrich_slot *slot, ng_enrich_build_fn fn, void *arg,
                               volatile sig_atomic_t *hup);
/* Stops and joins the thread. */
void ng_reloader_stop(ng_reloader *r);
/* Reloads done, and failed. */
uint64_t ng_reloader_done(const ng_reloader *r);
uint64_t ng_reloader_failed(const ng_reloader *r);

#endif
