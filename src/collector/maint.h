/*
 * maint.h — the collector's store maintenance thread: compaction of small
 * segments, rollups, and retention by age and size (store/store.h,
 * ng_store_compact, ng_store_rollup and ng_store_retention), on a thread
 * of its own at low priority so a merge (1–2 s for 2^20 rows) never
 * delays a flush.
 */
#ifndef NG_COLLECTOR_MAINT_H
#define NG_COLLECTOR_MAINT_H

#include <stdint.h>

/* Hours that ended less than this ago (ms) are left to the writer: late
 * flows keep arriving for them.  `nagare compact --settle` defaults to it. */
#define NG_MAINT_SETTLE_MS (10 * 60000)

typedef struct ng_maint ng_maint;

typedef struct ng_maint_config {
	const char *store_dir; /* borrowed; must outlive the thread */
	uint64_t retention_ms; /* delete segments older than this; 0: keep */
	uint64_t max_bytes;    /* delete the oldest above this size; 0: no limit */
	uint64_t interval_ms;  /* between runs; 0: 60 000 */
	uint64_t first_ms;     /* before the first run; 0: interval_ms */
} ng_maint_config;

/* Starts the thread (nice +10, stop signals blocked).  Each run compacts
 * hours that ended ≥ 10 min ago, one merge at a time (at most 8 a run,
 * checking for a stop between merges), writes the rollups of up to 16
 * settled segments, then applies retention when set, and logs what it
 * did.  Returns NULL when the thread cannot start. */
ng_maint *ng_maint_start(const ng_maint_config *cfg);

/* Asks the thread to stop, waits for the merge in progress (if any) to
 * end, joins and frees.  NULL is a no-op. */
void ng_maint_stop(ng_maint *m);

#endif
