/* file.c — durable whole-file writes (see file.h). */
#include "core/file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int ng_write_all(int fd, const void *p, size_t len)
{
	const uint8_t *b = p;
	while (len) {
		ssize_t k = write(fd, b, len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			if (k == 0)
				errno = EIO;
			return -1;
		}
		b += k;
		len -= (size_t)k;
	}
	return 0;
}

int ng_write_file_sync(const char *path, const void *p, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	int rc = ng_write_all(fd, p, len) || fsync(fd) ? -1 : 0;
	int e = errno;
	if (close(fd) != 0 && rc == 0) {
		rc = -1;
		e = errno;
	}
	errno = e;
	return rc;
}

int ng_replace_file(const char *path, const void *p, size_t len)
{
	char tmp[PATH_MAX];
	if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (ng_write_file_sync(tmp, p, len) == 0 && rename(tmp, path) == 0)
		return 0;
	int e = errno;
	unlink(tmp);
	errno = e;
	return -1;
}
