/*
 * fsck.c — checking every file of a store, and moving the damaged ones
 * aside (`nagare fsck`, src/cli/fsck.c).
 *
 * Every segment (<start>-<end>-<seq>.seg) and every rollup
 * (<segment>.r-<set>-<level>) of every hour directory is opened and
 * checked whole (ng_seg_check, segment_check.c: the header, the frame
 * tables, every block of every column decompressed and its checksum
 * verified, dictionary indexes, flow_start order).  What fails is moved,
 * never deleted, into the store's quarantine folder under its own
 * relative path:
 *
 *   STORE/flows/2026/11/30/12/X.seg  →  STORE/quarantine/flows/2026/11/30/12/X.seg
 *
 * (a name already taken there gets ".1", ".2", … appended).  A damaged
 * segment goes with its rollups, good or not: they summarise rows that
 * are no longer counted, and a query must not count from a rollup what
 * it no longer counts from the rows.  A damaged rollup alone goes alone:
 * its segment is whole, queries read its rows meanwhile (scan.c), and
 * maintenance writes the rollup again.  Temporaries and compaction
 * markers are not data and are left to maintenance.
 *
 * The maintenance lock is held throughout, so compaction, rollups and
 * retention do not rewrite an hour while it is checked.  A collector may
 * go on writing: its segments appear whole, by rename, and scans that
 * hold a moved file open go on reading it (a rename does not disturb an
 * open descriptor).  A rename within the store is atomic: after a crash a
 * file is in one place or the other.
 */
#include "store/store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/files.h"
#include "store/segment.h"
#include "store/tree.h"
#include "store/verdict.h"

#define ROLLUP_MARK ".seg.r-" /* in a rollup's name, after its segment's */

typedef struct fsck_ctx {
	const char *dir;
	const ng_fsck_opts *o;
	ng_fsck_stats *st;
	ng_seg_reader rd;
} fsck_ctx;

/* strcmp for qsort over an array of names. */
static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names of hour directory `path`'s entries, sorted (malloc'ed, each
 * too).  Returns the count, or -1 when it cannot be read. */
static long list_names(const char *path, char ***out)
{
	DIR *d = opendir(path);
	if (!d)
		return -1;
	char **v = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			char **nv = realloc(v, (cap = cap ? 2 * cap : 64) * sizeof *nv);
			if (!nv)
				break;
			v = nv;
		}
		if (!(v[n] = strdup(e->d_name)))
			break;
		n++;
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof *v, cmp_name);
	*out = v;
	return (long)n;
}

static void free_names(char **v, long n)
{
	for (long i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* What kind of file `name` is: 1 a segment, 2 a rollup, 0 anything else
 * (temporaries, markers). */
static int kind_of(const char *name)
{
	size_t len = strlen(name);
	if (ng_tree_temporary(name) != NG_TMP_NONE)
		return 0;
	if (strstr(name, ROLLUP_MARK))
		return 2;
	return len > 4 && !strcmp(name + len - 4, ".seg") ? 1 : 0;
}

/* Checks file `path` whole.  Returns true when it is, false with the
 * reason in why[len].  A segment (not a rollup) has what was found
 * recorded in its hour's `checked` file (verdict.c), for the version
 * read. */
static bool whole(fsck_ctx *c, const char *path, bool segment, char *why, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, len, "cannot open: %s", strerror(errno));
		return false;
	}
	struct stat sb;
	const bool have_st = segment && fstat(fd, &sb) == 0;
	int rc = ng_seg_open_fd(&c->rd, fd, why, len); /* owns fd */
	if (rc == 0) {
		rc = ng_seg_check(&c->rd, NULL, why, len);
		ng_seg_close(&c->rd);
	}
	if (have_st)
		ng_verdict_record(path, &sb, rc ? NG_VERDICT_DAMAGED : NG_VERDICT_OK);
	return rc == 0;
}

/* Moves `path` (inside c->dir) to the same relative path under
 * c->dir/quarantine; the destination into to[len].  Returns 0, or -1
 * with errno set. */
static int quarantine(fsck_ctx *c, const char *path, char *to, size_t len)
{
	size_t dl = strlen(c->dir);
	const char *rel = path + dl + 1;
	char qdir[4200];
	const char *slash = strrchr(rel, '/');
	if ((size_t)snprintf(qdir, sizeof qdir, "%s/quarantine/%.*s", c->dir,
	                     (int)(slash ? slash - rel : 0), rel) >= sizeof qdir) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (ng_mkdir_p(qdir))
		return -1;
	struct stat sb;
	for (unsigned i = 0;; i++) {
		int k = i ? snprintf(to, len, "%s/quarantine/%s.%u", c->dir, rel, i)
		          : snprintf(to, len, "%s/quarantine/%s", c->dir, rel);
		if (k < 0 || (size_t)k >= len) {
			errno = ENAMETOOLONG;
			return -1;
		}
		if (stat(to, &sb) && errno == ENOENT)
			break;
		if (i > 1000) {
			errno = EEXIST;
			return -1;
		}
	}
	if (rename(path, to))
		return -1;
	ng_fsync_dir(qdir);
	return 0;
}

/* A damaged file found (why), moved aside unless a dry run; reported. */
static void found(fsck_ctx *c, const char *path, const char *why, bool rollup, bool with_segment)
{
	char to[4400] = "";
	const char *dest = NULL;
	if (!c->o->dry_run) {
		if (quarantine(c, path, to, sizeof to)) {
			c->st->move_errors++;
			snprintf(to, sizeof to, "cannot move: %s", strerror(errno));
		} else {
			c->st->moved++;
			dest = to;
		}
	}
	if (rollup && !with_segment)
		c->st->damaged_rollups++;
	else if (!rollup)
		c->st->damaged_segments++;
	if (c->o->fn)
		c->o->fn(path, why, dest, (dest || c->o->dry_run) ? NULL : to, c->o->arg);
}

/* Checks the files of one hour directory (ng_tree_hours callback). */
static int fsck_hour(const char *path, uint64_t t0, uint64_t t1, void *arg)
{
	fsck_ctx *c = arg;
	(void)t0, (void)t1;
	char **v = NULL;
	long n = list_names(path, &v);
	if (n < 0) {
		c->st->unreadable++;
		return 0;
	}
	for (long i = 0; i < n; i++) {
		const int kind = kind_of(v[i]);
		char fp[4400], why[256];
		if (!kind || !v[i][0])
			continue;
		snprintf(fp, sizeof fp, "%s/%s", path, v[i]);
		if (kind == 1)
			c->st->segments++;
		else
			c->st->rollups++;
		if (whole(c, fp, kind == 1, why, sizeof why))
			continue;
		found(c, fp, why, kind == 2, false);
		if (kind != 1)
			continue;
		/* its rollups go with it: "<name>.r-…" sort right after it */
		size_t nl = strlen(v[i]);
		for (long j = i + 1; j < n && !strncmp(v[j], v[i], nl); j++) {
			if (kind_of(v[j]) != 2 || strncmp(v[j] + nl, ".r-", 3))
				continue;
			char rp[4400];
			snprintf(rp, sizeof rp, "%s/%s", path, v[j]);
			c->st->rollups++;
			c->st->rollups_with_segment++;
			found(c, rp, "its segment is damaged", true, true);
			v[j][0] = 0; /* done: not checked again */
		}
	}
	free_names(v, n);
	return 0;
}

int ng_store_fsck(const char *dir, const ng_fsck_opts *o, ng_fsck_stats *st)
{
	char root[4096];
	memset(st, 0, sizeof *st);
	if (ng_tree_root(dir, root, sizeof root))
		return -1;
	fsck_ctx c = {.dir = dir, .o = o, .st = st};
	ng_seg_reader_init(&c.rd);
	c.rd.no_cache = true; /* framecache.h: the file's own bytes */
	int lock = ng_store_maint_lock(dir);
	ng_tree_hours(root, 0, UINT64_MAX, fsck_hour, &c);
	ng_store_maint_unlock(lock);
	ng_seg_reader_free(&c.rd);
	return 0;
}

/* nftw state of ng_store_quarantined: one walk at a time per process is
 * enough for `status` and the API (guarded by the caller's thread). */
static _Thread_local uint64_t q_files, q_bytes;

static int count_file(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	(void)path, (void)ftw;
	if (type == FTW_F) {
		q_files++;
		q_bytes += (uint64_t)sb->st_size;
	}
	return 0;
}

uint64_t ng_store_quarantined(const char *dir, uint64_t *bytes)
{
	char q[4200];
	q_files = q_bytes = 0;
	if ((size_t)snprintf(q, sizeof q, "%s/quarantine", dir) < sizeof q)
		nftw(q, count_file, 16, FTW_PHYS);
	if (bytes)
		*bytes = q_bytes;
	return q_files;
}
