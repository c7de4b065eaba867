/*
 * damaged.c — the damaged segments a process has found, remembered so
 * that each is logged once per process, and so that /metrics can say how
 * many are still in the store.
 *
 * A long-running process (the collector with its maintenance thread,
 * `nagare serve`) meets the same damaged segment again and again: every
 * compaction and retention run leaves it alone, every API request's
 * snapshot skips it.  Each used to log it every time, one line per
 * segment per run or per request, without end.  Now the first find of a
 * path in the process logs it; later ones only count (the snapshot's and
 * the maintenance run's own counters, which every answer reports).  A
 * `nagare query` or `nagare compact` command is one process: it still
 * reports every damaged segment it meets, once.
 *
 * At most NG_DAMAGED_SEEN paths are remembered (a hostile disk full of
 * damaged files cannot grow the set); past that a find is logged each
 * time, as before, (the paths are in the counters regardless).  Thread-safe (one
 * mutex: damaged segments are rare).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/hash.h"
#include "core/log.h"
#include "store/store.h"

struct seen {
	char *path;
	uint64_t h;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct seen set[NG_DAMAGED_SEEN];
static size_t nset;

bool ng_store_damaged_note(const char *path)
{
	const uint64_t h = ng_fnv1a64(NG_FNV64_INIT, path, strlen(path));
	bool first = true;
	pthread_mutex_lock(&mu);
	for (size_t i = 0; i < nset && first; i++)
		if (set[i].h == h && !strcmp(set[i].path, path))
			first = false;
	if (first && nset < NG_DAMAGED_SEEN && (set[nset].path = strdup(path)))
		set[nset++].h = h;
	pthread_mutex_unlock(&mu);
	return first;
}

uint64_t ng_store_damaged_present(void)
{
	uint64_t n = 0;
	pthread_mutex_lock(&mu);
	for (size_t i = 0; i < nset;) {
		struct stat st;
		if (stat(set[i].path, &st) == 0) {
			n++;
			i++;
			continue;
		}
		free(set[i].path); /* moved aside or removed: forgotten */
		set[i] = set[--nset];
	}
	pthread_mutex_unlock(&mu);
	return n;
}

void ng_store_leave_damaged(ng_store_maint_stats *st, const char *what, const char *path,
                            const char *err)
{
	st->damaged++;
	if (!ng_store_damaged_note(path))
		return;
	st->damaged_new++;
	ng_warn("store: %s: leaving damaged segment %s alone: %s (`nagare fsck` moves it aside)",
	        what, path, err);
}
