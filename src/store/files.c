/* files.c — durable writes of the store's files (see files.h), and the
 * publishing of a segment (below: the order of its steps, and why). */
#include "store/files.h"

#include "store/verdict.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int ng_mkdir_p(const char *path)
{
	char tmp[4096];
	size_t len = strlen(path);
	if (len >= sizeof tmp) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(tmp, path, len + 1);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, 0755) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(tmp, 0755) && errno != EEXIST ? -1 : 0;
}

int ng_fsync_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int rc = fsync(fd);
	int e = errno;
	close(fd);
	errno = e;
	return rc;
}

/*
 * Publishing a segment.  What a reader and a crash may see, and why:
 *
 *  1. The image is written to <start>-<end>-<seq>.seg.<tag>.tmp (created
 *     or truncated, 0644) and fsynced before anything is renamed, so the
 *     name a rename gives it only ever points at complete, durable bytes.
 *     The temporary's name does not parse as a segment's
 *     (<digits>-<digits>-<digits>.seg, tree.c), so listings, scans,
 *     compaction and retention never see it, nor does rollup.c's sweep of
 *     orphans (it takes only names with ".seg.r-").  The tag keeps two
 *     writers apart: the writer's is its pid, compaction's "c" (one
 *     compaction at a time, under the maintenance lock).  Nothing removes
 *     a temporary that a crash left behind.
 *  2. drop_cache (the writer): once fsynced, the file's pages are handed
 *     back (POSIX_FADV_DONTNEED) so that the next segment's write reuses
 *     them; advice only.
 *  3. before_rename (compaction) makes its marker durable under the final
 *     name before the segment can appear under it (maint.c: a reader that
 *     sees the new segment must find what it replaces).
 *  4. renameat2(RENAME_NOREPLACE) to <start>-<end>-<seq>.seg: a segment
 *     never replaces another; a name taken (EEXIST) steps <seq> and tries
 *     again, calling rename_failed first (compaction removes the marker
 *     it wrote for the name it did not get).
 *  5. The directory is fsynced, so that the rename is durable before the
 *     caller goes on (compaction then unlinks what the segment replaces).
 *     A failure there is only a warning: the file is whole either way.
 *  6. Its verdict "ok" is appended to the directory's `checked` file
 *     (verdict.c), for the inode, size and mtime fstat gave before the
 *     close: the bytes are the encoder's, so no query need check it
 *     whole.  Not kept (a read-only file, a crash) costs one check.
 *
 * A failure at 1, 3 or 4 removes the temporary: the call leaves either the
 * segment, whole, or nothing.
 */
int ng_seg_publish(ng_seg_pub *p, const void *img, size_t len)
{
	char tmp[4300];
	p->err[0] = 0;
	p->path[0] = 0;
	if ((size_t)snprintf(tmp, sizeof tmp, "%s/%llu-%llu-%llu.seg.%s.tmp", p->dir,
	                     (unsigned long long)p->start, (unsigned long long)p->end,
	                     (unsigned long long)p->seq, p->tmp_tag) >= sizeof tmp) {
		snprintf(p->err, sizeof p->err, "segment path in %.200s too long", p->dir);
		return -1;
	}
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		snprintf(p->err, sizeof p->err, "cannot create %s: %s", tmp, strerror(errno));
		return -1;
	}
	if (ng_write_all(fd, img, len) || fsync(fd)) {
		snprintf(p->err, sizeof p->err, "cannot write %s: %s", tmp, strerror(errno));
		close(fd);
		unlink(tmp);
		return -1;
	}
	if (p->drop_cache)
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	struct stat sb; /* the version the verdict is of (a rename keeps it) */
	const bool have_st = fstat(fd, &sb) == 0;
	close(fd);
	for (unsigned tries = 0;; tries++) {
		snprintf(p->path, sizeof p->path, "%s/%llu-%llu-%llu.seg", p->dir,
		         (unsigned long long)p->start, (unsigned long long)p->end,
		         (unsigned long long)p->seq++);
		if (p->before_rename && p->before_rename(p, p->path, p->arg)) {
			unlink(tmp);
			return -1;
		}
		if (renameat2(AT_FDCWD, tmp, AT_FDCWD, p->path, RENAME_NOREPLACE) == 0)
			break;
		int e = errno;
		if (p->rename_failed)
			p->rename_failed(p, p->path, p->arg);
		if (e == EEXIST && tries < NG_SEG_PUBLISH_TRIES)
			continue;
		snprintf(p->err, sizeof p->err, "cannot rename %s to %s: %s", tmp, p->path,
		         strerror(e));
		unlink(tmp);
		return -1;
	}
	if (ng_fsync_dir(p->dir))
		snprintf(p->err, sizeof p->err, "fsync of directory %s: %s", p->dir,
		         strerror(errno));
	if (have_st) /* these bytes were encoded here: whole (verdict.c) */
		ng_verdict_record(p->path, &sb, NG_VERDICT_OK);
	return 0;
}
