/* files.c — durable writes of the store's files (see files.h). */
#include "store/files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
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
	close(fd);
	errno = e;
	return rc;
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
