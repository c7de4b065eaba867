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
 * The file's format and the merge with earlier runs: store/exporters.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "collector/collector_int.h"
#include "core/addr.h"
#include "core/log.h"
#include "core/timefmt.h"

/* ng_decoder_foreach_stats callback: appends one exporter's row to the
 * file `arg` (a row that cannot be allocated is missing from this
 * snapshot only). */
static void add_row(const ng_exporter_stats *s, void *arg)
{
	ng_exporters_file *f = arg;
	ng_exporter_stats *n = realloc(f->rows, (f->n + 1) * sizeof *n);
	if (!n)
		return; /* counted rows are missing from this write only */
	f->rows = n;
	f->rows[f->n++] = *s;
}

void ng_coll_snapshot(ng_collector *c, ng_exporters_file *f)
{
	memset(f, 0, sizeof *f);
	ng_decoder_foreach_stats(c->dec, add_row, f);
	ng_listener_get_stats(c->lis, &f->listener);
	ng_store_writer_get_stats(c->w, &f->store);
	f->started_ms = c->started_ms;
	f->updated_ms = ng_now_ms();
	ng_exporters_merge(f, &c->base);
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

void ng_coll_log_counters(const ng_exporters_file *f)
{
	ng_info("received %" PRIu64 " datagrams (%" PRIu64 " bytes), kernel drops %" PRIu64
	        "; this run stored %" PRIu64 " rows in %" PRIu64 " segments, dropped %" PRIu64
	        " rows the store could not take",
	        f->listener.datagrams, f->listener.bytes, f->listener.drops, f->store.rows,
	        f->store.segments, f->store.dropped);
	for (size_t i = 0; i < f->n; i++)
		log_row(&f->rows[i]);
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
	ng_coll_log_counters(f);
	ng_coll_flusher_save(c, f);
}
