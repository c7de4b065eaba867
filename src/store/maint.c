/*
 * maint.c — store maintenance run by the collector: compaction of small
 * segments and retention by age and size (see store.h for the protocol
 * that keeps readers exact while these run).
 *
 * Compaction of segments OLD1..OLDk of one hour directory into NEW:
 *
 *   1. write NEW.seg.c.tmp (all rows, merged in flow_start order), fsync
 *   2. write NEW.seg.replaces.tmp (the old names, one a line), fsync,
 *      rename to NEW.seg.replaces, fsync the directory
 *   3. rename NEW.seg.c.tmp to NEW.seg (no replace), fsync the directory
 *
 * (1 to 3: ng_seg_publish, files.c, with the marker as its before_rename)
 *   4. unlink OLD1..OLDk, fsync the directory
 *   5. unlink NEW.seg.replaces
 *
 * NEW's <seq> is ≥ NG_COMPACT_SEQ, so a reader knows to look for its
 * marker.  A crash before 3 leaves a marker without its segment: readers
 * ignore it, the next call removes it.  A crash after 3 leaves NEW and
 * its marker: readers skip the old segments the marker names, the next
 * call finishes 4 and 5.  Only one maintenance call runs at a time.
 *
 * Damaged segments (segment_check.c) are never merged into good ones and
 * never deleted: compaction reads every column of the segments it merges
 * and leaves out any that fails (the others are merged without it), and
 * retention reads the header of each segment it is about to delete and
 * leaves a damaged one in place.  Both log it and count it in
 * ng_store_maint_stats.damaged; `nagare fsck` moves such files aside.
 */
#include "store/store.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/log.h"
#include "store/files.h"
#include "store/segment.h"
#include "store/tree.h"
#include "store/verdict.h"

#define SMALL_ROWS NG_COMPACT_SMALL_ROWS
/* rows of a compacted segment, at most: the merge holds them as records
 * (≈ 330 bytes each, ≈ 350 MB at this size) */
#define GROUP_ROWS (1u << 20)
#define RMDIR_AFTER_MS (2 * UINT64_C(3600000)) /* empty hour dirs older than this go */

int ng_store_maint_lock(const char *dir)
{
	char state[4096], path[4200];
	if (!ng_store_state_dir(dir, state, sizeof state))
		return -1;
	snprintf(path, sizeof path, "%s/maint.lock", state);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	while (flock(fd, LOCK_EX) && errno == EINTR)
		;
	return fd;
}

void ng_store_maint_unlock(int fd)
{
	if (fd >= 0)
		close(fd); /* releases the flock */
}

/* ---- finishing an interrupted compaction -------------------------------- */

typedef struct unlink_ctx {
	const char *dir;
	unsigned n;
} unlink_ctx;

static void unlink_named(const char *name, void *arg)
{
	unlink_ctx *u = arg;
	char p[4096];
	if (strchr(name, '/') || (size_t)snprintf(p, sizeof p, "%s/%s", u->dir, name) >= sizeof p)
		return;
	ng_rollup_unlink(p); /* a rollup never outlives its segment */
	if (unlink(p) == 0)
		u->n++;
}

/* Completes (segment present) or drops (absent) every marker of hour
 * directory `path`, so that afterwards no marker is left. */
static void finish_pending(const char *path)
{
	ng_dir_entry *v = NULL;
	long n = ng_tree_list(path, 4, &v);
	bool changed = false;
	for (long i = 0; i < n; i++) {
		if (!v[i].marker)
			continue;
		char mp[4096], sp[4096];
		snprintf(mp, sizeof mp, "%s/%s", path, v[i].name);
		snprintf(sp, sizeof sp, "%.*s", (int)(strlen(mp) - strlen(NG_MARKER_SUFFIX)), mp);
		struct stat st;
		if (stat(sp, &st) == 0) {
			unlink_ctx u = {path, 0};
			ng_tree_read_marker(mp, unlink_named, &u);
			ng_fsync_dir(path);
		}
		unlink(mp);
		changed = true;
	}
	if (changed)
		ng_fsync_dir(path);
	free(v);
}

/* ---- temporaries left by a crash ---------------------------------------- */

/* A writer's temporary ("<segment>.<pid>.tmp") exists for the seconds a
 * flush takes; one this much older than now is left by a crash. */
#define STALE_TMP_MS (10 * 60 * 1000)

/* Removes the temporaries of hour directory `path` that no process can
 * still be writing: those made only under the maintenance lock, which
 * the caller holds when `locked` (a merged segment "<segment>.c.tmp" and
 * its marker "<segment>.replaces.tmp"; rollups' own are drop_orphans'),
 * and any other "*.tmp" (a writer's) last changed STALE_TMP_MS or more
 * before now_ms.  A kill -9 mid-flush or mid-merge leaves them; nothing
 * reads them (readers skip names ending in ".tmp"), but they hold disk
 * and keep retention from removing the hour's directory.  Counted in
 * st->temporaries_removed; an unlink that fails is left for next time. */
static void sweep_temporaries(const char *path, uint64_t now_ms, bool locked,
                              ng_store_maint_stats *st)
{
	DIR *d = opendir(path);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		ng_tmp_kind kind = ng_tree_temporary(e->d_name);
		if (kind == NG_TMP_NONE || kind == NG_TMP_ROLLUP)
			continue; /* not a temporary, or a rollup's */
		char p[4400];
		struct stat sb;
		snprintf(p, sizeof p, "%s/%s", path, e->d_name);
		if (lstat(p, &sb) || !S_ISREG(sb.st_mode))
			continue;
		bool maint = kind == NG_TMP_MAINT;
		uint64_t mtime =
		    (uint64_t)sb.st_mtim.tv_sec * 1000 + (uint64_t)sb.st_mtim.tv_nsec / 1000000;
		if (!(maint && locked) && mtime + STALE_TMP_MS > now_ms)
			continue;
		if (unlink(p) == 0) {
			st->temporaries_removed++;
			ng_info("store: removed %s, a temporary left by an interrupted %s", p,
			        maint ? "compaction" : "flush");
		}
	}
	closedir(d);
}

/* ---- compaction ----------------------------------------------------------- */

typedef struct cand {
	char name[256];
	uint64_t rows;
} cand;

/* Appends the rows of segment `path` to rows[*n..] (all fields of the
 * table).  Returns 0; -2 when it is damaged (counted, logged: not
 * merged); -1 when it vanished, is not small any more, or has columns
 * this build does not know (they would be lost). */
static int load_rows(ng_seg_reader *rd, const char *path, ng_flow *rows, size_t *n, size_t cap,
                     uint8_t *colbuf, ng_store_maint_stats *st)
{
	char err[256];
	struct stat sb;
	if (ng_seg_open(rd, path, err, sizeof err)) {
		if (stat(path, &sb))
			return -1; /* vanished */
		ng_store_leave_damaged(st, "compaction", path, err);
		return -2;
	}
	size_t known = 0;
	for (size_t f = 0; f < NG_FIELD_COUNT; f++)
		known += rd->col_of_field[f] >= 0;
	if (known != rd->h.ncols) {
		ng_seg_close(rd);
		return -1; /* written by a newer build: leave it alone */
	}
	size_t m = (size_t)rd->h.rows;
	if (m >= SMALL_ROWS || *n + m > cap) {
		ng_seg_close(rd);
		return -1;
	}
	/* every column decoded: a damaged one fails here, before any row
	 * of it can go into the merged segment */
	if (ng_seg_check_frames(rd, err, sizeof err) ||
	    ng_seg_read_rows(rd, ng_colset_all(), rows + *n, colbuf, err, sizeof err)) {
		ng_seg_close(rd);
		ng_store_leave_damaged(st, "compaction", path, err);
		return -2;
	}
	ng_seg_close(rd);
	*n += m;
	return 0;
}

typedef struct compact_ctx {
	uint64_t now, settle;
	unsigned max_groups, groups;
	bool locked; /* the maintenance lock is held */
	ng_store_maint_stats *st;
	ng_seg_reader rd;
	ng_seg_encoder *enc;
} compact_ctx;

/* Reads segments g[0..*k) of hour directory `path` (rows in total) into
 * rows[], and sets order[] to their flow_start order.  A damaged one is
 * left out of the group (g[] and *k shrink: the marker names only those
 * merged).  Returns the rows read, or 0 when one of them cannot be read
 * (it may have vanished; the next call tries again) or fewer than two
 * are left. */
static size_t read_group(compact_ctx *c, const char *path, cand *g, size_t *k, size_t rows,
                         ng_flow *buf, uint32_t *order, uint8_t *colbuf)
{
	size_t n = 0, kept = 0;
	for (size_t i = 0; i < *k; i++) {
		char sp[4200];
		snprintf(sp, sizeof sp, "%s/%s", path, g[i].name);
		int rc = load_rows(&c->rd, sp, buf, &n, rows, colbuf, c->st);
		if (rc == -1)
			return 0;
		if (rc == 0)
			g[kept++] = g[i];
	}
	*k = kept;
	if (kept < 2)
		return 0;
	ng_seg_order_by_start(buf, order, n);
	return n;
}

/* The marker of a compaction, which ng_seg_publish() writes under the
 * segment's final name just before the rename (step 2 at the top). */
typedef struct marker {
	const char *text; /* the old segments' names, one a line */
	size_t len;
	char path[4300]; /* <final>.replaces, once written */
} marker;

/* ng_seg_pub.before_rename: the marker for `final`, fsynced and renamed
 * into place, the directory fsynced, before the segment may appear. */
static int put_marker(ng_seg_pub *p, const char *final, void *arg)
{
	marker *m = arg;
	snprintf(m->path, sizeof m->path, "%s%s", final, NG_MARKER_SUFFIX);
	if (ng_replace_file(m->path, m->text, m->len)) {
		snprintf(p->err, sizeof p->err, "cannot write %s: %s", m->path, strerror(errno));
		return -1;
	}
	ng_fsync_dir(p->dir);
	return 0;
}

/* ng_seg_pub.rename_failed: the name was not ours, nor is its marker. */
static void drop_marker(ng_seg_pub *p, const char *final, void *arg)
{
	(void)p, (void) final;
	unlink(((marker *)arg)->path);
}

/* Steps 1 to 5 at the top for the image of the merged segment, whose rows'
 * flow_start run from `first` to `last`: published with its marker, then
 * the old segments g[0..k) of `path` (and their rollups) unlinked and the
 * marker removed.  Returns 0, or -1 (logged) with the old segments kept. */
static int replace_group(const char *path, const cand *g, size_t k, const uint8_t *img, size_t len,
                         uint64_t first, uint64_t last, uint64_t seq)
{
	char *text = malloc(k * 257 + 1);
	if (!text) {
		ng_error("store: compaction: out of memory");
		return -1;
	}
	marker m = {.text = text};
	for (size_t i = 0; i < k; i++)
		m.len += (size_t)sprintf(text + m.len, "%s\n", g[i].name);
	ng_seg_pub p = {.dir = path,
	                .start = first,
	                .end = last,
	                .seq = seq,
	                .tmp_tag = "c",
	                .before_rename = put_marker,
	                .rename_failed = drop_marker,
	                .arg = &m};
	int rc = ng_seg_publish(&p, img, len);
	free(text);
	if (rc) {
		ng_error("store: compaction: %s", p.err);
		return -1;
	}
	/* p.err may warn of the directory's fsync: the unlinks below are
	 * fsynced again, which makes the rename durable with them */
	for (size_t i = 0; i < k; i++) {
		char sp[4200];
		snprintf(sp, sizeof sp, "%s/%s", path, g[i].name);
		ng_rollup_unlink(sp);
		unlink(sp);
	}
	ng_fsync_dir(path);
	unlink(m.path);
	return 0;
}

/* Merges segments g[0..k) (rows in total) of hour directory `path` into
 * one, named with seq `next_seq` or the next free one.  Returns 0, or -1
 * (counted in c->st->errors) with the old segments left as they were. */
static int merge_group(compact_ctx *c, const char *path, cand *g, size_t k, uint64_t rows,
                       uint64_t next_seq)
{
	const size_t k0 = k;
	ng_flow *buf = malloc((size_t)rows * sizeof *buf);
	uint32_t *order = malloc((size_t)rows * sizeof *order);
	uint8_t *colbuf = malloc((size_t)SMALL_ROWS * 16 + NG_SEG_BLOCK_ROWS * 16);
	const uint8_t *img;
	size_t n = 0, len;
	char err[256];
	int rc = -1;
	if (!buf || !order || !colbuf)
		ng_error("store: compaction: out of memory for %llu rows",
		         (unsigned long long)rows);
	else if (!(n = read_group(c, path, g, &k, (size_t)rows, buf, order, colbuf)))
		; /* vanished or unreadable: try again next time */
	else if (ng_seg_encode(c->enc, buf, order, n, &img, &len, err, sizeof err))
		ng_error("store: compaction: %s", err);
	else
		rc = replace_group(path, g, k, img, len, buf[order[0]].flow_start,
		                   buf[order[n - 1]].flow_start, next_seq);
	if (rc == 0) {
		c->st->segments_in += k;
		c->st->segments_out++;
		c->st->rows += n;
	} else if (k == k0) {
		c->st->errors++; /* not for a group left too small by damaged ones */
	}
	free(buf);
	free(order);
	free(colbuf);
	return rc;
}

/* Bounds hour `path`'s verdict file (verdict.c) to its live segments:
 * rewritten when it holds more than twice their lines.  Under the
 * maintenance lock (one rewriter at a time). */
static void tidy_verdicts(const char *path)
{
	ng_dir_entry *v = NULL;
	long n = ng_tree_list(path, 4, &v);
	const char **live = n > 0 ? malloc((size_t)n * sizeof *live) : NULL;
	size_t k = 0;
	for (long i = 0; live && i < n; i++)
		if (!v[i].marker)
			live[k++] = v[i].name;
	if (live || n == 0)
		ng_verdict_tidy(path, live, k);
	free(live);
	free(v);
}

static int compact_hour(const char *path, uint64_t t0, uint64_t t1, void *arg)
{
	compact_ctx *c = arg;
	(void)t0;
	if (c->settle && t1 + c->settle > c->now)
		return 0;
	if (c->max_groups && c->groups >= c->max_groups)
		return 1;
	finish_pending(path);
	sweep_temporaries(path, c->now, c->locked, c->st);
	ng_dir_entry *v = NULL;
	long n = ng_tree_list(path, 4, &v);
	if (n < 2) {
		free(v);
		if (c->locked)
			tidy_verdicts(path);
		return 0;
	}
	cand *g = malloc((size_t)n * sizeof *g);
	size_t k = 0;
	uint64_t rows = 0, next_seq = NG_COMPACT_SEQ;
	for (long i = 0; i < n; i++)
		if (!v[i].marker && v[i].c >= next_seq)
			next_seq = v[i].c + 1;
	for (long i = 0; g && i <= n; i++) {
		uint64_t r = 0;
		bool small = false;
		if (i < n && !v[i].marker && !v[i].replaced) {
			char sp[4200], err[256];
			snprintf(sp, sizeof sp, "%s/%s", path, v[i].name);
			struct stat sb;
			if (ng_seg_open(&c->rd, sp, err, sizeof err) == 0) {
				r = c->rd.h.rows;
				small = r < SMALL_ROWS;
				ng_seg_close(&c->rd);
			} else if (stat(sp, &sb) == 0) {
				ng_store_leave_damaged(c->st, "compaction", sp, err);
			}
		}
		if (i < n && v[i].marker)
			continue;
		/* close the group at a segment that is not small, at the end,
		 * or when it would grow past GROUP_ROWS */
		if (!small || rows + r > GROUP_ROWS) {
			if (k >= 2 && (!c->max_groups || c->groups < c->max_groups)) {
				if (merge_group(c, path, g, k, rows, next_seq++) == 0)
					c->groups++;
			}
			k = 0;
			rows = 0;
		}
		if (small) {
			snprintf(g[k].name, sizeof g[k].name, "%s", v[i].name);
			g[k++].rows = r;
			rows += r;
		}
	}
	free(g);
	free(v);
	if (c->locked)
		tidy_verdicts(path);
	return 0;
}

int ng_store_compact(const char *dir, uint64_t now_ms, uint64_t settle_ms, unsigned max_groups,
                     ng_store_maint_stats *st)
{
	char root[4096];
	ng_store_maint_stats local = {0};
	if (!st)
		st = &local;
	if (ng_tree_root(dir, root, sizeof root))
		return -1;
	compact_ctx c = {.now = now_ms, .settle = settle_ms, .max_groups = max_groups, .st = st};
	ng_seg_reader_init(&c.rd);
	c.rd.no_cache = true; /* framecache.h: background reads */
	if (!(c.enc = ng_seg_encoder_new(3))) {
		st->errors++;
		return 0;
	}
	int lock = ng_store_maint_lock(dir);
	c.locked = lock >= 0;
	ng_tree_hours(root, 0, UINT64_MAX, compact_hour, &c);
	ng_store_maint_unlock(lock);
	ng_seg_reader_free(&c.rd);
	ng_seg_encoder_free(c.enc);
	return 0;
}

/* ---- retention ------------------------------------------------------------ */

typedef struct seg_file {
	char *path;           /* malloc'd (141 507 segments of a scattered store
	                       * held as 4 KB paths took 600 MB) */
	uint64_t first, last; /* first and last row's flow_start (ms), from the name */
	uint64_t size;
} seg_file;

typedef struct ret_ctx {
	ng_seg_reader rd;
	seg_file *v;
	size_t n, cap;
	uint64_t total;
	bool oom;
	bool locked; /* the maintenance lock is held */
	uint64_t now;
	ng_store_maint_stats *st;
	bool (*stop)(void *); /* and its argument: asked to stop (NULL: never) */
	void *stop_arg;
	unsigned ops; /* hours listed or segments deleted: stop checked each 256 */
} ret_ctx;

/* True when the caller asks to stop, checked every 256th call. */
static bool ret_stop(ret_ctx *r)
{
	return r->stop && (++r->ops & 255) == 0 && r->stop(r->stop_arg);
}

static int list_hour(const char *path, uint64_t t0, uint64_t t1, void *arg)
{
	ret_ctx *r = arg;
	(void)t0;
	(void)t1;
	if (ret_stop(r))
		return 1;
	finish_pending(path);
	sweep_temporaries(path, r->now, r->locked, r->st);
	ng_dir_entry *v = NULL;
	long n = ng_tree_list(path, 4, &v);
	for (long i = 0; i < n; i++) {
		if (v[i].marker)
			continue;
		if (r->n == r->cap) {
			size_t cap = r->cap ? r->cap * 2 : 256;
			seg_file *p = realloc(r->v, cap * sizeof *p);
			if (!p) {
				r->oom = true;
				break;
			}
			r->v = p;
			r->cap = cap;
		}
		seg_file *s = &r->v[r->n];
		char sp[4200];
		snprintf(sp, sizeof sp, "%s/%s", path, v[i].name);
		struct stat st;
		if (stat(sp, &st))
			continue;
		if (!(s->path = strdup(sp))) {
			r->oom = true;
			break;
		}
		s->first = v[i].a;
		s->last = v[i].b;
		s->size = (uint64_t)st.st_size + ng_rollup_bytes(s->path);
		r->total += s->size;
		r->n++;
	}
	free(v);
	return r->oom;
}

/* Removes the empty directories of hours that ended long enough ago that
 * no writer still puts segments there, or that begin more than
 * NG_STORE_FUTURE_MS ahead (rmdir fails on a non-empty one). */
static int prune_dirs(const char *path, uint64_t t0, uint64_t t1, void *arg)
{
	ret_ctx *r = arg;
	const uint64_t now = r->now;
	if (ret_stop(r))
		return 1;
	bool future = t0 > now + NG_STORE_FUTURE_MS;
	if (!future && t1 + RMDIR_AFTER_MS > now)
		return 0;
	/* the verdict file outlives no segment of its hour (verdict.c) */
	if (rmdir(path) && !(ng_verdict_drop_if_alone(path) && rmdir(path) == 0))
		return 0;
	char p[4096];
	snprintf(p, sizeof p, "%s", path);
	for (int up = 0; up < 3; up++) { /* day, month, year */
		char *slash = strrchr(p, '/');
		if (!slash)
			break;
		*slash = 0;
		if (rmdir(p))
			break;
	}
	return 0;
}

/* Deletes segment s (and its rollup); false when it cannot (logged) or
 * when it is damaged (left alone for nagare fsck, counted in st->damaged). */
static bool delete_seg(seg_file *s, ng_store_maint_stats *st, ret_ctx *r)
{
	char err[256];
	struct stat sb;
	if (ng_seg_open(&r->rd, s->path, err, sizeof err) == 0) {
		ng_seg_close(&r->rd);
	} else if (stat(s->path, &sb) == 0) {
		ng_store_leave_damaged(st, "retention", s->path, err); /* never deleted */
		return false;
	}
	ng_rollup_unlink(s->path);
	if (unlink(s->path) && errno != ENOENT) {
		st->errors++;
		ng_error("store: retention: cannot delete %s: %s", s->path, strerror(errno));
		return false;
	}
	st->segments_deleted++;
	st->bytes_deleted += s->size;
	r->total -= s->size;
	s->size = 0;
	free(s->path);
	s->path = NULL;
	return true;
}

int ng_store_retention(const char *dir, uint64_t max_age_ms, uint64_t max_bytes, uint64_t now_ms,
                       ng_store_maint_stats *st)
{
	return ng_store_retention_until(dir, max_age_ms, max_bytes, now_ms, st, NULL, NULL);
}

int ng_store_retention_until(const char *dir, uint64_t max_age_ms, uint64_t max_bytes,
                             uint64_t now_ms, ng_store_maint_stats *st, bool (*stop)(void *),
                             void *stop_arg)
{
	char root[4096];
	ng_store_maint_stats local = {0};
	if (!st)
		st = &local;
	if (ng_tree_root(dir, root, sizeof root))
		return -1;
	ret_ctx r = {.now = now_ms, .st = st, .stop = stop, .stop_arg = stop_arg};
	ng_seg_reader_init(&r.rd);
	r.rd.no_cache = true; /* framecache.h: background reads */
	int lock = ng_store_maint_lock(dir);
	r.locked = lock >= 0;
	ng_tree_hours(root, 0, UINT64_MAX, list_hour, &r);
	if (r.oom) {
		st->errors++;
		ng_error("store: retention: out of memory listing %s", root);
	}
	/* stopped while listing: the list is partial, its total too */
	const bool listed = !(r.stop && r.stop(r.stop_arg));
	/* segments from the future first: no age rule ever reaches them */
	for (size_t i = r.n; listed && (max_age_ms || max_bytes) && i-- > 0;) {
		if (r.v[i].first <= now_ms + NG_STORE_FUTURE_MS || ret_stop(&r))
			break;
		if (delete_seg(&r.v[i], st, &r))
			st->segments_future++;
	}
	/* r.v is in time order: the oldest first */
	for (size_t i = 0; listed && i < r.n; i++) {
		if (!r.v[i].path)
			continue;
		bool old = max_age_ms && now_ms > max_age_ms && r.v[i].last < now_ms - max_age_ms;
		bool big = max_bytes && r.total > max_bytes;
		if ((!old && !big) || ret_stop(&r))
			break;
		delete_seg(&r.v[i], st, &r);
	}
	st->bytes_total = r.total;
	for (size_t i = 0; i < r.n; i++)
		free(r.v[i].path);
	free(r.v);
	ng_seg_reader_free(&r.rd);
	if (!(r.stop && r.stop(r.stop_arg)))
		ng_tree_hours(root, 0, UINT64_MAX, prune_dirs, &r);
	ng_store_maint_unlock(lock);
	return 0;
}

/* ---- option values ----------------------------------------------------------- */

/* Parses a decimal number followed by one unit letter from `units`
 * (multipliers in mult[]), or none (multiplier 1). */
static bool parse_scaled(const char *s, const char *units, const uint64_t *mult, uint64_t *out)
{
	if (!s || !isdigit((unsigned char)*s))
		return false;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno)
		return false;
	uint64_t m = 1;
	if (*end) {
		const char *u = strchr(units, tolower((unsigned char)*end));
		if (!u || end[1])
			return false;
		m = mult[u - units];
	}
	if (v > UINT64_MAX / m)
		return false;
	*out = (uint64_t)v * m;
	return true;
}

bool ng_parse_size_bytes(const char *s, uint64_t *bytes)
{
	static const uint64_t mult[] = {UINT64_C(1) << 10, UINT64_C(1) << 20, UINT64_C(1) << 30,
	                                UINT64_C(1) << 40};
	return parse_scaled(s, "kmgt", mult, bytes);
}
