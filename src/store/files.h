/*
 * files.h — durable writes of the store's files (internal to src/store):
 * the writer's segments, compaction's merged segments and markers, and
 * rollups all go to disk the same way (write whole, fsync, then rename
 * and fsync the directory).  A segment goes through ng_seg_publish(),
 * which adds its naming and the no-replace rename.
 */
#ifndef NG_STORE_FILES_H
#define NG_STORE_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/file.h" /* ng_write_all, ng_write_file_sync, ng_replace_file */

/* Creates directory `path` and any missing parents, mode 0755 (mkdir -p);
 * an existing directory is fine.  Returns 0, or -1 with errno set
 * (ENAMETOOLONG past 4095 bytes). */
int ng_mkdir_p(const char *path);

/* fsyncs directory `path` (a rename or unlink in it made durable).
 * Returns 0, or -1 with errno set. */
int ng_fsync_dir(const char *path);

/* Renames tried past the first when the name is taken, at most. */
#define NG_SEG_PUBLISH_TRIES 1000

/* What ng_seg_publish() is asked to write, and what it tells back. */
typedef struct ng_seg_pub {
	const char *dir;     /* the hour directory, which exists */
	uint64_t start, end; /* first and last row's flow_start (ms): the name */
	uint64_t seq;        /* in: the first <seq> to try; out: one past the last tried */
	const char *tmp_tag; /* the temporary is <start>-<end>-<seq>.seg.<tmp_tag>.tmp */
	bool drop_cache;     /* hand the file's page cache back once it is on disk */
	/* Compaction's marker: called with the final path before each rename
	 * (0 to go on; -1 with a message in p->err gives up), and after each
	 * rename that failed, to take back what before_rename made.  NULL:
	 * none. */
	int (*before_rename)(struct ng_seg_pub *p, const char *final, void *arg);
	void (*rename_failed)(struct ng_seg_pub *p, const char *final, void *arg);
	void *arg;
	char path[4200]; /* out: the segment's final path */
	char err[8704];  /* out: what failed; after a success, a warning or "" */
} ng_seg_pub;

/*
 * Writes the len bytes of img as segment p->dir/<start>-<end>-<seq>.seg,
 * whole or not at all: under the temporary name first, fsynced, then
 * renamed without replacing (renameat2 RENAME_NOREPLACE: a name taken
 * steps <seq>, up to NG_SEG_PUBLISH_TRIES times), then the directory
 * fsynced.  Returns 0 (p->path the segment; p->err a warning when the
 * directory's fsync failed, else ""), or -1 with the reason in p->err and
 * no file left behind.  Details above its definition (files.c).
 */
int ng_seg_publish(ng_seg_pub *p, const void *img, size_t len);

#endif
