/*
 * flush.c — the flush thread: the collector's slow writes.
 *
 * Every 250 ms, or at once when the receive thread says a flush is due,
 * this thread asks the store writer whether one is (2^18 rows buffered,
 * or the oldest appended 5 s ago) and flushes: the writer takes its whole
 * buffer out
 * under its mutex and then sorts, encodes, compresses, fsyncs and renames
 * without it (store.h), so the receive thread's appends never wait for
 * the disk.  With enrichment at the flush, the writer's derive function
 * (enrichment.c) runs here, on each segment's rows.  Every 5 s it flushes
 * the sFlow counter samples the same way (store/counters.h).
 *
 * It also writes STORE/state/exporters.json: the receive thread, which
 * alone may read the decoder's counters, copies them into a snapshot and
 * hands it over in `pending`; the file (with its fsync) is written here.
 * A newer snapshot replaces one not yet written.  The template state
 * (STORE/state/templates, templates.W of worker W) goes the same way:
 * each receive worker copies its decoder's state into an image when it
 * changed, this thread writes it (ng_coll_save_templates), so that no
 * receive thread waits for an fsync.
 *
 * What crosses, under c->mu (with c->cv to wake the thread):
 * flush_wanted and pending from the receive thread, each worker's
 * tpl_img (in its own collector, under worker 0's mu), flusher_stop from
 * the stopping thread.  The writer and counter store are touched
 * through their own locks only.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collector/collector_int.h"
#include "core/hash.h"
#include "core/thread.h"
#include "core/log.h"
#include "core/timefmt.h"

/* Writes the template image worker x handed over (ng_coll_save_templates),
 * if any, to its file; x's image is taken under c->mu (c: worker 0). */
static void write_templates(ng_collector *c, ng_collector *x)
{
	pthread_mutex_lock(&c->mu);
	uint8_t *tpl = x->tpl_img;
	size_t tpl_len = x->tpl_len;
	x->tpl_img = NULL;
	pthread_mutex_unlock(&c->mu);
	if (!tpl)
		return;
	if (ng_decoder_write_state(x->tpl_path, tpl, tpl_len) < 0)
		ng_error("cannot save templates to %s: %s", x->tpl_path, strerror(errno));
	free(tpl);
}

static void *flush_main(void *arg)
{
	ng_collector *c = arg;
	uint64_t last_err_log = 0, next_counters = ng_now_ms() + 5000;
	pthread_mutex_lock(&c->mu);
	while (!c->flusher_stop) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 250 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		if (!c->flush_wanted) /* a wake-up sent while flushing is not lost */
			pthread_cond_timedwait(&c->cv, &c->mu, &ts);
		c->flush_wanted = false;
		atomic_store(&c->flush_beat_ms, ng_now_ms()); /* the watchdog's (service.c) */
		if (c->flusher_stop)
			break;
		ng_exporters_file *counters = c->pending;
		c->pending = NULL;
		pthread_mutex_unlock(&c->mu);
		for (unsigned w = 0; w < c->nworkers && (!w || c->workers); w++)
			write_templates(c, w ? &c->workers[w - 1].c : c);
		if (counters) {
			ng_coll_save_counters(c->exp_path, counters);
			ng_exporters_free(counters);
			free(counters);
		}
		uint64_t now = ng_now_ms();
		if (ng_store_writer_due(c->w, now) && ng_store_writer_flush(c->w) < 0 &&
		    now - last_err_log >= 60000) {
			/* the writer logs each failure's cause; rows stay buffered */
			ng_warn("store flush failed; rows are kept and retried");
			last_err_log = now;
		}
		if (now >= next_counters) {
			/* samples stay buffered on failure; the store logs why */
			ng_counter_store_flush(c->cs);
			next_counters = now + 5000;
		}
		pthread_mutex_lock(&c->mu);
	}
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

/* The stop signals are blocked in the thread, so they always interrupt
 * the receive thread's wait. */
int ng_coll_flusher_start(ng_collector *c)
{
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->cv, NULL);
	return ng_thread_create(&c->flusher, flush_main, c);
}

void ng_coll_flusher_stop(ng_collector *c)
{
	pthread_mutex_lock(&c->mu);
	c->flusher_stop = true;
	pthread_cond_signal(&c->cv);
	pthread_mutex_unlock(&c->mu);
	pthread_join(c->flusher, NULL);
	if (c->pending) { /* superseded by the final write */
		ng_exporters_free(c->pending);
		free(c->pending);
		c->pending = NULL;
	}
	for (unsigned w = 0; w < c->nworkers && (!w || c->workers); w++) { /* superseded too */
		ng_collector *x = w ? &c->workers[w - 1].c : c;
		free(x->tpl_img);
		x->tpl_img = NULL;
	}
	pthread_cond_destroy(&c->cv);
	pthread_mutex_destroy(&c->mu);
}

void ng_coll_flush_now(ng_collector *c)
{
	pthread_mutex_lock(&c->mu);
	c->flush_wanted = true;
	pthread_cond_signal(&c->cv);
	pthread_mutex_unlock(&c->mu);
}

void ng_coll_flusher_save(ng_collector *c, ng_exporters_file *f)
{
	pthread_mutex_lock(&c->mu);
	ng_exporters_file *old = c->pending;
	c->pending = f;
	pthread_cond_signal(&c->cv);
	pthread_mutex_unlock(&c->mu);
	if (old) { /* the flush thread is behind: the newer snapshot wins */
		ng_exporters_free(old);
		free(old);
	}
}

void ng_coll_save_templates(ng_collector *c, uint64_t now)
{
	if (now < c->tpl_next_ms)
		return;
	c->tpl_next_ms = now + NG_TEMPLATE_SAVE_MS;
	uint8_t *img;
	size_t len;
	if (ng_decoder_save_mem(c->dec, &img, &len) != 0)
		return; /* out of memory: the next round or the stop writes it */
	/* the restart marks (last in the image) move with every datagram:
	 * written with the rest, they are no reason to write it */
	const uint64_t h = ng_fnv1a64(NG_FNV64_INIT, img, ng_decoder_state_stable_len(img, len));
	if (h == c->tpl_hash) {
		free(img);
		return;
	}
	c->tpl_hash = h;
	/* a worker past the first hands its image to the same flush thread,
	 * for its own file: no receive thread waits on a disk */
	ng_collector *m = c->main ? c->main : c;
	pthread_mutex_lock(&m->mu);
	uint8_t *old = c->tpl_img;
	c->tpl_img = img;
	c->tpl_len = len;
	pthread_cond_signal(&m->cv);
	pthread_mutex_unlock(&m->mu);
	free(old); /* the flush thread is behind: the newer image wins */
}
