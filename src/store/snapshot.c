/*
 * snapshot.c — one set of segments for everything a command or an API
 * request reads.
 *
 * A query with several tables (`nagare query -s srcip -s dstport`), a
 * time series (a top query, then the series of its top keys), a group-by
 * cut into rollup pieces (plan.c): each used to list the store's hour
 * directories again, and while the collector flushed, each saw another
 * set of segments, so two tables of one command could show different
 * totals.  A snapshot lists the hours of a time range once: every scan
 * given it (ng_scan_opts.snap, ng_query.snap) reads exactly its segments.
 *
 *   - A segment the writer renames in later is not in the listing: not
 *     seen.
 *   - A segment compaction or retention unlinks later is still read:
 *     the snapshot opens every segment when it lists it and holds the
 *     descriptor (Linux keeps an unlinked file's data while one is open),
 *     and each scan reads through a dup of it.  An hour is listed again
 *     when a segment vanished between the listing and its open, as the
 *     scan always did (scan.c), so the set is the old segments or the
 *     compacted one, never both, never neither.
 *   - Descriptors are bounded: a process holds at most half its open-file
 *     limit in snapshots (the soft limit is raised to the hard one, at
 *     most 65 536, on the first snapshot).  Segments past that are kept
 *     by name and opened when read; one that vanished meanwhile is
 *     counted (segments_vanished) and warned about, never read twice.
 *   - Rollups are not held: a scan opens a segment's rollup by name when
 *     its plan reads one, and reads the held segment's rows when the
 *     rollup is gone or damaged.  The answer is the same either way
 *     (plan.c), so they need no snapshot of their own.
 *
 * The snapshot also remembers what the scans learned of its segments:
 * checked whole, or damaged and why (ng_snap_mark_damaged).  A segment
 * is checked once per snapshot and a damaged one reported once, and
 * every table of the command skips the same damaged set.  Across
 * commands, the verdicts of each hour's `checked` file (verdict.c) are
 * read once per hour listed and kept with its segments (ng_snap_seg.
 * verdict), for the scan to match against the file it reads.
 */
#include "store/snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "store/tree.h"

#define LIST_TRIES 4
#define FD_CEILING 65536 /* the soft limit is raised to at most this */

static _Atomic long held_fds; /* by every snapshot of the process */
static long fd_budget;        /* half the open-file limit */
static pthread_once_t budget_once = PTHREAD_ONCE_INIT;

/* Raises the soft open-file limit toward the hard one (at most
 * FD_CEILING) and sets the snapshots' budget to half of it. */
static void set_budget(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl)) {
		fd_budget = 256;
		return;
	}
	rlim_t want =
	    rl.rlim_max == RLIM_INFINITY || rl.rlim_max > FD_CEILING ? FD_CEILING : rl.rlim_max;
	if (rl.rlim_cur < want) {
		rl.rlim_cur = want;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			getrlimit(RLIMIT_NOFILE, &rl);
	}
	fd_budget = rl.rlim_cur == RLIM_INFINITY ? FD_CEILING / 2 : (long)(rl.rlim_cur / 2);
}

/* A descriptor of the budget, or false when it is spent. */
static bool take_fd(void)
{
	if (atomic_fetch_add(&held_fds, 1) < fd_budget)
		return true;
	atomic_fetch_sub(&held_fds, 1);
	return false;
}

typedef struct take_ctx {
	ng_store_snapshot *s;
} take_ctx;

/* Closes and forgets segments [from, nseg) of s (an hour listed again). */
static void drop_from(ng_store_snapshot *s, size_t from)
{
	for (size_t i = from; i < s->nseg; i++) {
		if (s->seg[i].fd >= 0) {
			close(s->seg[i].fd);
			s->fds--;
			atomic_fetch_sub(&held_fds, 1);
		}
		free(s->seg[i].path);
	}
	s->nseg = from;
}

/* Appends segment `name` of hour directory `path`, opened when it meets
 * the snapshot's range and the budget allows.  Returns 0, 1 when it
 * vanished before the open, -1 when out of memory. */
static int add_segment(ng_store_snapshot *s, const char *path, const ng_dir_entry *e,
                       const ng_verdict_table *vt)
{
	if (s->nseg == s->segcap) {
		size_t cap = s->segcap ? 2 * s->segcap : 64;
		ng_snap_seg *v = realloc(s->seg, cap * sizeof *v);
		if (!v)
			return -1;
		s->seg = v;
		s->segcap = cap;
	}
	ng_snap_seg *g = &s->seg[s->nseg];
	memset(g, 0, sizeof *g);
	g->a = e->a;
	g->b = e->b;
	g->fd = -1;
	g->verdict = ng_verdict_find(vt, e->name);
	size_t len = strlen(path) + 1 + strlen(e->name) + 1;
	if (!(g->path = malloc(len)))
		return -1;
	snprintf(g->path, len, "%s/%s", path, e->name);
	s->nseg++;
	if (e->b < s->from || e->a >= s->to || e->a > e->b || !take_fd())
		return 0;
	g->fd = open(g->path, O_RDONLY | O_CLOEXEC);
	if (g->fd >= 0) {
		s->fds++;
		return 0;
	}
	atomic_fetch_sub(&held_fds, 1);
	return errno == ENOENT ? 1 : 0; /* another error: reported when read */
}

/* Lists hour `path` and opens its segments, all
 * of them or, when one vanished, again (LIST_TRIES times; then without
 * the ones still vanishing), each with its verdict in vt. */
static int hour_segments(ng_store_snapshot *s, const char *path, uint64_t t0, uint64_t t1,
                         const ng_verdict_table *vt)
{
	for (int attempt = 0;; attempt++) {
		ng_dir_entry *v = NULL;
		long n = ng_tree_list(path, 4, &v);
		if (n < 0)
			return 0; /* vanished: nothing there */
		const size_t first = s->nseg;
		uint64_t replaced = 0;
		bool vanished = false;
		for (long i = 0; i < n; i++) {
			if (v[i].marker)
				continue;
			if (v[i].replaced) {
				replaced++;
				continue;
			}
			int rc = add_segment(s, path, &v[i], vt);
			if (rc < 0) {
				free(v);
				s->oom = true;
				return 1;
			}
			if (rc == 1) {
				vanished = true;
				if (attempt + 1 < LIST_TRIES)
					break;
				free(s->seg[--s->nseg].path); /* still vanishing: without it */
			}
		}
		free(v);
		if (vanished && attempt + 1 < LIST_TRIES) {
			drop_from(s, first);
			continue;
		}
		if (s->nhour == s->hourcap) {
			size_t cap = s->hourcap ? 2 * s->hourcap : 32;
			ng_snap_hour *h = realloc(s->hour, cap * sizeof *h);
			if (!h) {
				s->oom = true;
				return 1;
			}
			s->hour = h;
			s->hourcap = cap;
		}
		s->hour[s->nhour++] = (ng_snap_hour){t0, t1, first, s->nseg - first, replaced};
		return 0;
	}
}

/* ng_tree_hours callback: hour `path`'s segments, with the verdicts of
 * its `checked` file (verdict.c), read once for the hour. */
static int on_hour(const char *path, uint64_t t0, uint64_t t1, void *arg)
{
	ng_store_snapshot *s = ((take_ctx *)arg)->s;
	ng_verdict_table vt; /* the hour's verdicts, read once (none: all unknown) */
	ng_verdict_load(path, &vt);
	int rc = hour_segments(s, path, t0, t1, &vt);
	ng_verdict_table_free(&vt);
	return rc;
}

ng_store_snapshot *ng_store_snapshot_take(const char *dir, uint64_t from_ms, uint64_t to_ms)
{
	char root[4096];
	if (ng_tree_root(dir, root, sizeof root)) {
		errno = ENOENT;
		return NULL;
	}
	pthread_once(&budget_once, set_budget);
	ng_store_snapshot *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->from = from_ms;
	s->to = to_ms;
	take_ctx c = {s};
	ng_tree_hours(root, from_ms, to_ms, on_hour, &c);
	if (s->oom) {
		ng_store_snapshot_free(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

void ng_store_snapshot_free(ng_store_snapshot *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nseg; i++)
		free(s->seg[i].why);
	drop_from(s, 0);
	free(s->seg);
	free(s->hour);
	free(s);
}

size_t ng_store_snapshot_segments(const ng_store_snapshot *s)
{
	return s ? s->nseg : 0;
}

bool ng_snap_mark_damaged(ng_snap_seg *e, const char *why)
{
	int was = atomic_exchange(&e->state, NG_SNAP_DAMAGED);
	if (was == NG_SNAP_DAMAGED)
		return false;
	e->why = strdup(why); /* only the call that marked it writes it */
	return true;
}

uint64_t ng_store_snapshot_damaged(const ng_store_snapshot *s, uint64_t from_ms, uint64_t to_ms,
                                   void (*fn)(const char *path, const char *why, void *arg),
                                   void *arg)
{
	uint64_t n = 0;
	for (size_t i = 0; s && i < s->nseg; i++) {
		const ng_snap_seg *e = &s->seg[i];
		if (atomic_load(&e->state) != NG_SNAP_DAMAGED || e->b < from_ms || e->a >= to_ms)
			continue;
		n++;
		if (fn)
			fn(e->path, e->why ? e->why : "damaged", arg);
	}
	return n;
}
