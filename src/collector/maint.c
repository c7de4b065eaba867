/*
 * maint.c — the collector's maintenance thread (maint.h).
 *
 * Compaction, rollups and retention run here, never on the flush thread:
 * a merge holds the CPU for seconds and a flush must not wait behind it.
 * One maintenance call runs at a time on a store: this single thread, and
 * the store's maintenance lock against `nagare compact` in another
 * process.
 *
 * The thread touches nothing of the collector's: only the store
 * directory, through store.h (which publishes every change by rename, so
 * the flush thread writing new segments and readers scanning old ones go
 * on beside it), and its own ng_maint, whose `stop` flag the stopping
 * thread sets under `mu` (`cv` wakes it).  A round is retention, then
 * compaction (one merge at a time, a stop checked between), then rollups
 * (a few segments at a time); stopping waits for the merge in progress
 * only.
 */
#include "collector/maint.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/thread.h"
#include "core/log.h"
#include "core/timefmt.h"
#include "store/store.h"

#define MAINT_MAX_MERGES 8
#define MAINT_MAX_ROLLUPS 16 /* segments a round (≈ 0.2 s each at 2^18 rows) */

struct ng_maint {
	ng_maint_config cfg;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv; /* CLOCK_MONOTONIC */
	bool stop;
};

static bool stopping(ng_maint *m)
{
	pthread_mutex_lock(&m->mu);
	bool s = m->stop;
	pthread_mutex_unlock(&m->mu);
	return s;
}

/* Sleeps `ms` or until asked to stop; returns true when asked to stop. */
static bool wait_or_stop(ng_maint *m, uint64_t ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += (time_t)(ms / 1000);
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&m->mu);
	while (!m->stop && pthread_cond_timedwait(&m->cv, &m->mu, &ts) != ETIMEDOUT)
		;
	bool s = m->stop;
	pthread_mutex_unlock(&m->mu);
	return s;
}

/* Adds one maintenance call's counts to a round's. */
static void add_stats(ng_store_maint_stats *a, const ng_store_maint_stats *b)
{
	a->segments_in += b->segments_in;
	a->segments_out += b->segments_out;
	a->rows += b->rows;
	a->segments_deleted += b->segments_deleted;
	a->segments_future += b->segments_future;
	a->bytes_deleted += b->bytes_deleted;
	a->errors += b->errors;
	a->segments_rolled += b->segments_rolled;
	a->rollups_written += b->rollups_written;
	a->rollup_rows += b->rollup_rows;
	a->temporaries_removed += b->temporaries_removed;
	a->damaged += b->damaged;
	a->damaged_new += b->damaged_new;
}

/* Merges one group at a time so a stop request waits for one merge only. */
static void compact(ng_maint *m)
{
	ng_store_maint_stats st = {0};
	for (int i = 0; i < MAINT_MAX_MERGES && !stopping(m); i++) {
		ng_store_maint_stats one = {0};
		if (ng_store_compact(m->cfg.store_dir, ng_now_ms(), NG_MAINT_SETTLE_MS, 1, &one) <
		    0) {
			ng_warn("compaction: %s is not a store", m->cfg.store_dir);
			return;
		}
		add_stats(&st, &one);
		if (!one.segments_out || one.errors)
			break; /* nothing left, or a failure the store logged */
	}
	if (st.segments_in)
		ng_info("compaction: %" PRIu64 " segments merged into %" PRIu64 " (%" PRIu64
		        " rows)",
		        st.segments_in, st.segments_out, st.rows);
	if (st.errors)
		ng_warn("compaction: %" PRIu64 " errors (logged above); old segments kept",
		        st.errors);
	if (st.damaged_new) /* the rest were logged by an earlier run */
		ng_warn("compaction: %" PRIu64 " damaged segments left alone (%" PRIu64
		        " found now, logged above): run `nagare fsck --store %s`",
		        st.damaged, st.damaged_new, m->cfg.store_dir);
}

/* Rollups of the settled segments, a few at a time (each is read whole),
 * every round: the store skips the small segments compaction is about to
 * merge, so a compaction backlog (a high flow rate) does not hold back
 * the rollups of the others. */
static void rollup(ng_maint *m)
{
	ng_store_maint_stats st = {0};
	for (int i = 0; i < MAINT_MAX_ROLLUPS && !stopping(m); i++) {
		ng_store_maint_stats one = {0};
		if (ng_store_rollup(m->cfg.store_dir, ng_now_ms(), NG_MAINT_SETTLE_MS, 1, false,
		                    &one) < 0)
			return;
		add_stats(&st, &one);
		if (!one.segments_rolled || one.errors)
			break;
	}
	if (st.segments_rolled)
		ng_info("rollups: %" PRIu64 " segments rolled up into %" PRIu64 " files (%" PRIu64
		        " rows)",
		        st.segments_rolled, st.rollups_written, st.rollup_rows);
	if (st.errors)
		ng_warn("rollups: %" PRIu64 " errors (logged above)", st.errors);
	if (st.damaged_new) /* the rest were logged by an earlier run */
		ng_warn("rollups: %" PRIu64 " damaged segments given no rollup (%" PRIu64
		        " found now, logged above)",
		        st.damaged, st.damaged_new);
}

/* stopping() as a callback for the store (ng_store_retention_until). */
static bool stop_asked(void *arg)
{
	return stopping(arg);
}

static void retention(ng_maint *m)
{
	if (!m->cfg.retention_ms && !m->cfg.max_bytes)
		return;
	ng_store_maint_stats st = {0};
	if (ng_store_retention_until(m->cfg.store_dir, m->cfg.retention_ms, m->cfg.max_bytes,
	                             ng_now_ms(), &st, stop_asked, m) < 0) {
		ng_warn("retention: %s is not a store", m->cfg.store_dir);
		return;
	}
	if (st.segments_deleted)
		ng_info("retention: deleted %" PRIu64 " segments (%" PRIu64
		        " bytes); store now %" PRIu64 " bytes",
		        st.segments_deleted, st.bytes_deleted, st.bytes_total);
	if (st.segments_future)
		ng_warn("retention: %" PRIu64 " of them were dated more than 2 days ahead of the "
		        "clock (written before the time window, collect.max_future, or by a clock "
		        "gone wrong)",
		        st.segments_future);
	if (st.errors)
		ng_warn("retention: %" PRIu64 " errors (logged above)", st.errors);
	if (st.damaged_new) /* the rest were logged by an earlier run */
		ng_warn("retention: %" PRIu64 " damaged segments kept (%" PRIu64
		        " found now, logged above): run `nagare fsck --store %s`",
		        st.damaged, st.damaged_new, m->cfg.store_dir);
}

static void *maint_main(void *arg)
{
	ng_maint *m = arg;
	/* Linux: nice applies to the calling thread when given its tid */
	if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 10) != 0)
		ng_debug("maintenance thread: cannot lower its priority");
	uint64_t wait = m->cfg.first_ms;
	while (!wait_or_stop(m, wait)) {
		/* retention first: what it deletes is neither merged nor rolled
		 * up (a store scattered over 1970..2106 before the time window
		 * took 14 rollup files and their fsyncs a junk segment) */
		retention(m);
		if (!stopping(m))
			compact(m);
		if (!stopping(m))
			rollup(m);
		wait = m->cfg.interval_ms;
	}
	return NULL;
}

ng_maint *ng_maint_start(const ng_maint_config *cfg)
{
	ng_maint *m = calloc(1, sizeof *m);
	if (!m)
		return NULL;
	m->cfg = *cfg;
	if (!m->cfg.interval_ms)
		m->cfg.interval_ms = 60000;
	if (!m->cfg.first_ms)
		m->cfg.first_ms = m->cfg.interval_ms;
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&m->cv, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&m->mu, NULL);
	int rc = ng_thread_create(&m->thread, maint_main, m);
	if (rc != 0) {
		pthread_cond_destroy(&m->cv);
		pthread_mutex_destroy(&m->mu);
		free(m);
		return NULL;
	}
	return m;
}

void ng_maint_stop(ng_maint *m)
{
	if (!m)
		return;
	pthread_mutex_lock(&m->mu);
	m->stop = true;
	pthread_cond_signal(&m->cv);
	pthread_mutex_unlock(&m->mu);
	pthread_join(m->thread, NULL);
	pthread_cond_destroy(&m->cv);
	pthread_mutex_destroy(&m->mu);
	free(m);
}
