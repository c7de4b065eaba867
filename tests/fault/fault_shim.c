/*
 * fault_shim.c — write failures on demand, for tests/fault/crash.py.
 *
 * An LD_PRELOAD library that makes the file writes of a process fail the
 * way a full or failing disk makes them fail, while a flag file exists:
 *
 *   NG_FAULT_DIR    only descriptors whose path starts with this prefix
 *                   (the store directory) fail; others are untouched
 *   NG_FAULT_FLAG   path of the flag file: faults are on while it exists,
 *                   so a test turns them on and off while the process runs
 *   NG_FAULT_ERRNO  "ENOSPC" (default) or "EIO": what write(2) fails with
 *   NG_FAULT_OPS    which calls fail, a comma list of "create" (open or
 *                   openat with O_CREAT: ENOSPC), "write" (write, pwrite,
 *                   writev) and "fsync" (fsync, fdatasync: EIO); default
 *                   all three
 *
 * Interposed: write, pwrite, writev, fsync, fdatasync, and open/openat
 * with O_CREAT under NG_FAULT_DIR (a full disk refuses new files too).
 * Calls made inside glibc (stdio's own write) do not go through the PLT
 * and are not interposed; fsync after them is.  Each interposed call
 * costs a stat of the flag file and, when it exists, a readlink of the
 * descriptor: test use only, never linked into nagare.
 *
 * Faults make the call fail without doing anything, with errno set, as
 * write(2) does on ENOSPC before any byte is written and fsync(2) on EIO.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

/* The real function `name`, found once (RTLD_NEXT). */
#define REAL(type, name, args)                                                                     \
	static type(*real) args;                                                                   \
	if (!real)                                                                                 \
		real = (type(*) args)dlsym(RTLD_NEXT, name);

/* The errno a fault sets: NG_FAULT_ERRNO, ENOSPC unless it says EIO. */
static int fault_errno(void)
{
	const char *e = getenv("NG_FAULT_ERRNO");
	return e && !strcmp(e, "EIO") ? EIO : ENOSPC;
}

/* True when NG_FAULT_OPS (default: all) names operation `op`. */
static bool op_faults(const char *op)
{
	const char *ops = getenv("NG_FAULT_OPS");
	return !ops || strstr(ops, op);
}

/* True when faults are on (the flag file exists) and `path` is under
 * NG_FAULT_DIR. */
static bool path_faults(const char *path)
{
	const char *dir = getenv("NG_FAULT_DIR"), *flag = getenv("NG_FAULT_FLAG");
	struct stat st;
	if (!dir || !flag || !path || stat(flag, &st))
		return false;
	return !strncmp(path, dir, strlen(dir));
}

/* True when faults are on and descriptor fd names a file under
 * NG_FAULT_DIR (by /proc/self/fd). */
static bool fd_faults(int fd)
{
	const char *flag = getenv("NG_FAULT_FLAG");
	struct stat st;
	if (!flag || stat(flag, &st))
		return false;
	char link[64], path[4096];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof path - 1);
	if (n <= 0)
		return false;
	path[n] = 0;
	return path_faults(path);
}

ssize_t write(int fd, const void *buf, size_t n)
{
	REAL(ssize_t, "write", (int, const void *, size_t));
	if (op_faults("write") && fd_faults(fd)) {
		errno = fault_errno();
		return -1;
	}
	return real(fd, buf, n);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	REAL(ssize_t, "pwrite", (int, const void *, size_t, off_t));
	if (op_faults("write") && fd_faults(fd)) {
		errno = fault_errno();
		return -1;
	}
	return real(fd, buf, n, off);
}

ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	REAL(ssize_t, "writev", (int, const struct iovec *, int));
	if (op_faults("write") && fd_faults(fd)) {
		errno = fault_errno();
		return -1;
	}
	return real(fd, iov, cnt);
}

int fsync(int fd)
{
	REAL(int, "fsync", (int));
	if (op_faults("fsync") && fd_faults(fd)) {
		errno = EIO; /* what a failed writeback reports */
		return -1;
	}
	return real(fd);
}

int fdatasync(int fd)
{
	REAL(int, "fdatasync", (int));
	if (op_faults("fsync") && fd_faults(fd)) {
		errno = EIO;
		return -1;
	}
	return real(fd);
}

/* An absolute form of `path` relative to dirfd (AT_FDCWD or a directory
 * descriptor) into buf[len]; false when it cannot be told. */
static bool absolute(int dirfd, const char *path, char *buf, size_t len)
{
	if (path[0] == '/')
		return snprintf(buf, len, "%s", path) < (int)len;
	char base[4096];
	if (dirfd == AT_FDCWD) {
		if (!getcwd(base, sizeof base))
			return false;
	} else {
		char link[64];
		snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
		ssize_t n = readlink(link, base, sizeof base - 1);
		if (n <= 0)
			return false;
		base[n] = 0;
	}
	return snprintf(buf, len, "%s/%s", base, path) < (int)len;
}

int openat(int dirfd, const char *path, int flags, ...)
{
	REAL(int, "openat", (int, const char *, int, ...));
	mode_t mode = 0;
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
		char abs[8192];
		if (op_faults("create") && absolute(dirfd, path, abs, sizeof abs) &&
		    path_faults(abs)) {
			errno = ENOSPC;
			return -1;
		}
	}
	return real(dirfd, path, flags, mode);
}

int open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	return openat(AT_FDCWD, path, flags, mode);
}
