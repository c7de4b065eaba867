/*
 * file.h — durable whole-file writes, one way for every layer: the store's
 * segments, markers, rollups and counters, the decoder's template state,
 * the HTTP server's saved views.  A file that must never be seen half
 * written is written under `PATH.tmp`, fsynced, then renamed over PATH
 * (rename(2) replaces atomically: a reader or a crash sees the old file
 * or the new one, POSIX.1-2017 rename()).
 */
#ifndef NG_CORE_FILE_H
#define NG_CORE_FILE_H

#include <stddef.h>

/* Writes len bytes of p to fd, retrying short writes and EINTR.  Returns
 * 0, or -1 with errno set (EIO for a write that wrote nothing). */
int ng_write_all(int fd, const void *p, size_t len);

/* Creates (or truncates) `path` with mode 0644, writes len bytes of p and
 * fsyncs it.  Returns 0, or -1 with errno set (the file may be left
 * partial: callers write under a temporary name, or use ng_replace_file). */
int ng_write_file_sync(const char *path, const void *p, size_t len);

/* Replaces `path` with len bytes of p: written to `path`.tmp, fsynced,
 * renamed over `path`.  Returns 0; or -1 with errno set, `path` as it
 * was and the temporary removed (ENAMETOOLONG when `path` + ".tmp" does
 * not fit PATH_MAX).  The directory is not fsynced: a caller that needs
 * the rename itself durable calls fsync on the directory after. */
int ng_replace_file(const char *path, const void *p, size_t len);

#endif
