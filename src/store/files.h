/*
 * files.h — durable writes of the store's files (internal to src/store):
 * the writer's segments, compaction's merged segments and markers, and
 * rollups all go to disk the same way (write whole, fsync, then rename
 * and fsync the directory).
 */
#ifndef NG_STORE_FILES_H
#define NG_STORE_FILES_H

#include <stddef.h>

/* Writes len bytes of p to fd, retrying short writes and EINTR.  Returns
 * 0, or -1 with errno set. */
int ng_write_all(int fd, const void *p, size_t len);

/* Creates (or truncates) `path` with mode 0644, writes len bytes of p and
 * fsyncs it.  Returns 0, or -1 with errno set (the file may be left
 * partial: callers write under a temporary name). */
int ng_write_file_sync(const char *path, const void *p, size_t len);

/* fsyncs directory `path` (a rename or unlink in it made durable).
 * Returns 0, or -1 with errno set. */
int ng_fsync_dir(const char *path);

#endif
