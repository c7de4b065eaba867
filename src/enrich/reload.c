/*
 * reload.c — swapping enrichment table sets under a running receive thread,
 * and the thread that rebuilds them on SIGHUP or when a file changes
 * (see enrich.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "core/thread.h"
#include "core/log.h"
#include "enrich/enrich.h"

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

void ng_enrich_swap(ng_enrich_slot *s, ng_enricher *n)
{
	pthread_mutex_lock(&s->hold); /* a flush enriching with `old` ends first */
	ng_enricher *old = atomic_exchange(&s->cur, n);
	pthread_mutex_unlock(&s->hold);
	if (!old)
		return;
	/* A batch that took `old` began before the exchange; the receive
	 * thread leaves it (epoch + 1) before it can enter again and see `n`. */
	uint64_t e0 = atomic_load(&s->epoch);
	while (atomic_load(&s->epoch) == e0 && !atomic_load(&s->closed))
		sleep_ms(1);
	ng_enricher_free(old);
}

/* ---- the reloader thread ---------------------------------------------- */

struct stamp {
	bool ok;
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	off_t size;
};

struct ng_reloader {
	ng_enrich_slot *slot;
	ng_enrich_build_fn build;
	void *arg;
	volatile sig_atomic_t *hup;
	pthread_t thr;
	atomic_bool stop;
	_Atomic uint64_t done, failed;
	char *paths[NG_ENRICH_MAX_FILES];
	struct stamp stamps[NG_ENRICH_MAX_FILES];
	size_t npaths;
};

static void take_stamp(const char *path, struct stamp *s)
{
	struct stat st;
	memset(s, 0, sizeof *s);
	if (stat(path, &st) < 0)
		return;
	*s = (struct stamp){true, st.st_dev, st.st_ino, st.st_mtim, st.st_size};
}

static bool same_stamp(const struct stamp *a, const struct stamp *b)
{
	return a->ok == b->ok && a->dev == b->dev && a->ino == b->ino &&
	       a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec &&
	       a->size == b->size;
}

/* Remembers the files of the current set and how they look now. */
static void watch_current(struct ng_reloader *r)
{
	for (size_t i = 0; i < r->npaths; i++)
		free(r->paths[i]);
	r->npaths = 0;
	ng_enricher *e = atomic_load(&r->slot->cur); /* only this thread swaps */
	if (!e)
		return;
	const char *p[NG_ENRICH_MAX_FILES];
	size_t n = ng_enricher_files(e, p);
	for (size_t i = 0; i < n; i++) {
		if (!(r->paths[r->npaths] = strdup(p[i])))
			continue;
		take_stamp(p[i], &r->stamps[r->npaths++]);
	}
}

static bool files_changed(struct ng_reloader *r)
{
	bool changed = false;
	for (size_t i = 0; i < r->npaths; i++) {
		struct stamp s;
		take_stamp(r->paths[i], &s);
		if (!same_stamp(&s, &r->stamps[i])) {
			ng_info("enrichment: %s changed", r->paths[i]);
			r->stamps[i] = s; /* a failed build is not retried until it changes again */
			changed = true;
		}
	}
	return changed;
}

static void reload(struct ng_reloader *r, const char *why)
{
	char err[512] = "";
	ng_enricher *n = r->build(r->arg, err, sizeof err);
	if (!n) {
		atomic_fetch_add(&r->failed, 1);
		ng_error("enrichment reload (%s) failed, keeping the current tables: %s", why, err);
		return;
	}
	char d[1024];
	ng_info("enrichment reloaded (%s): %s", why, ng_enricher_describe(n, d, sizeof d));
	ng_enrich_swap(r->slot, n);
	atomic_fetch_add(&r->done, 1);
	watch_current(r);
}

static void *reloader_main(void *arg)
{
	struct ng_reloader *r = arg;
	watch_current(r);
	unsigned tick = 0;
	while (!atomic_load(&r->stop)) {
		sleep_ms(100);
		if (r->hup && *r->hup) {
			*r->hup = 0;
			reload(r, "SIGHUP");
		} else if (++tick % 10 == 0 && files_changed(r)) {
			/* Let a writer finish replacing the file before reading it. */
			sleep_ms(200);
			files_changed(r);
			reload(r, "file changed");
		}
	}
	for (size_t i = 0; i < r->npaths; i++)
		free(r->paths[i]);
	return NULL;
}

ng_reloader *ng_reloader_start(ng_enrich_slot *slot, ng_enrich_build_fn fn, void *arg,
                               volatile sig_atomic_t *hup)
{
	struct ng_reloader *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	r->slot = slot;
	r->build = fn;
	r->arg = arg;
	r->hup = hup;
	/* The stop signals must reach the receive thread, not this one. */
	int rc = ng_thread_create(&r->thr, reloader_main, r);
	if (rc) {
		free(r);
		return NULL;
	}
	return r;
}

void ng_reloader_stop(ng_reloader *r)
{
	if (!r)
		return;
	atomic_store(&r->stop, true);
	pthread_join(r->thr, NULL);
	free(r);
}

uint64_t ng_reloader_done(const ng_reloader *r)
{
	return atomic_load(&r->done);
}
uint64_t ng_reloader_failed(const ng_reloader *r)
{
	return atomic_load(&r->failed);
}
