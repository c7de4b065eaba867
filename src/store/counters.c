/*
 * counters.c — the counter-sample store (format in counters.h).
 */
#include "store/counters.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAGIC "NGCTR001"
#define HDR_SIZE 32
#define HOUR_MS 3600000ULL

struct ng_counter_store {
	char *dir; /* STORE/counters */
	pthread_mutex_t mu;
	ng_counter_batch buf;
	uint64_t written;
	unsigned seq;
	pthread_mutex_t flush_mu;
};

static int mkdir_p(const char *path)
{
	char tmp[4096];
	size_t n = strlen(path);
	if (n >= sizeof tmp)
		return -1;
	memcpy(tmp, path, n + 1);
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

ng_counter_store *ng_counter_store_open(const char *dir, char *err, size_t errlen)
{
	ng_counter_store *w = calloc(1, sizeof *w);
	size_t n = strlen(dir) + 16;
	if (!w || !(w->dir = malloc(n))) {
		free(w);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	snprintf(w->dir, n, "%s/counters", dir);
	if (mkdir_p(w->dir)) {
		snprintf(err, errlen, "%s: %s", w->dir, strerror(errno));
		free(w->dir);
		free(w);
		return NULL;
	}
	pthread_mutex_init(&w->mu, NULL);
	pthread_mutex_init(&w->flush_mu, NULL);
	return w;
}

int ng_counter_store_append(ng_counter_store *w, const ng_counter_sample *s, size_t n)
{
	if (!n)
		return 0;
	pthread_mutex_lock(&w->mu);
	ng_counter_batch *b = &w->buf;
	if (b->n + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->n + n)
			cap *= 2;
		ng_counter_sample *p = realloc(b->s, cap * sizeof *p);
		if (!p) {
			pthread_mutex_unlock(&w->mu);
			return -1;
		}
		b->s = p;
		b->cap = cap;
	}
	memcpy(b->s + b->n, s, n * sizeof *s);
	b->n += n;
	pthread_mutex_unlock(&w->mu);
	return 0;
}

static int cmp_time(const void *a, const void *b)
{
	const ng_counter_sample *x = a, *y = b;
	return x->time_received < y->time_received ? -1 : x->time_received > y->time_received;
}

/* Writes s[0..n) (all in one UTC hour) as one file. */
static int write_file(ng_counter_store *w, const ng_counter_sample *s, size_t n)
{
	time_t t = (time_t)(s[0].time_received / 1000);
	struct tm tm;
	gmtime_r(&t, &tm);
	char hdir[4096], path[4200], tmp[4300];
	snprintf(hdir, sizeof hdir, "%s/%04d/%02d/%02d/%02d", w->dir, tm.tm_year + 1900,
	         tm.tm_mon + 1, tm.tm_mday, tm.tm_hour);
	if (mkdir_p(hdir))
		return -1;
	snprintf(path, sizeof path, "%s/%llu-%llu-%u.ctr", hdir,
	         (unsigned long long)s[0].time_received, (unsigned long long)s[n - 1].time_received,
	         w->seq++);
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -1;
	uint8_t hdr[HDR_SIZE];
	uint32_t rs = sizeof *s, cnt = (uint32_t)n;
	memcpy(hdr, MAGIC, 8);
	memcpy(hdr + 8, &rs, 4);
	memcpy(hdr + 12, &cnt, 4);
	memcpy(hdr + 16, &s[0].time_received, 8);
	memcpy(hdr + 24, &s[n - 1].time_received, 8);
	size_t body = n * sizeof *s;
	int ok = write(fd, hdr, HDR_SIZE) == HDR_SIZE && write(fd, s, body) == (ssize_t)body &&
	         fsync(fd) == 0;
	ok = close(fd) == 0 && ok;
	if (!ok || rename(tmp, path)) {
		unlink(tmp);
		return -1;
	}
	int dfd = open(hdir, O_RDONLY | O_DIRECTORY);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	return 0;
}

int ng_counter_store_flush(ng_counter_store *w)
{
	pthread_mutex_lock(&w->flush_mu);
	pthread_mutex_lock(&w->mu);
	ng_counter_batch b = w->buf;
	memset(&w->buf, 0, sizeof w->buf);
	pthread_mutex_unlock(&w->mu);
	int rc = 0;
	if (b.n) {
		qsort(b.s, b.n, sizeof *b.s, cmp_time);
		size_t i = 0;
		while (i < b.n) {
			uint64_t hour = b.s[i].time_received / HOUR_MS;
			size_t j = i + 1;
			while (j < b.n && b.s[j].time_received / HOUR_MS == hour)
				j++;
			if (write_file(w, b.s + i, j - i)) {
				rc = -1;
				/* keep what was not written for a retry */
				ng_counter_store_append(w, b.s + i, b.n - i);
				break;
			}
			w->written += j - i;
			i = j;
		}
	}
	free(b.s);
	pthread_mutex_unlock(&w->flush_mu);
	return rc;
}

uint64_t ng_counter_store_written(const ng_counter_store *w)
{
	return w->written;
}

int ng_counter_store_close(ng_counter_store *w)
{
	if (!w)
		return 0;
	int rc = ng_counter_store_flush(w);
	pthread_mutex_destroy(&w->mu);
	pthread_mutex_destroy(&w->flush_mu);
	free(w->buf.s);
	free(w->dir);
	free(w);
	return rc;
}

/* ---- reading ---- */

struct scan {
	uint64_t from, to;
	int (*fn)(const ng_counter_sample *s, size_t n, void *arg);
	void *arg;
	uint64_t *errors;
};

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int scan_file(struct scan *sc, const char *path)
{
	unsigned long long first, last;
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (sscanf(base, "%llu-%llu-", &first, &last) != 2)
		return 0;
	if (last < sc->from || first >= sc->to)
		return 0; /* outside the range: not opened */
	FILE *f = fopen(path, "rb");
	uint8_t hdr[HDR_SIZE];
	uint32_t rs, cnt;
	if (!f || fread(hdr, 1, HDR_SIZE, f) != HDR_SIZE || memcmp(hdr, MAGIC, 8))
		goto bad;
	memcpy(&rs, hdr + 8, 4);
	memcpy(&cnt, hdr + 12, 4);
	if (rs != sizeof(ng_counter_sample) || cnt > 1u << 24)
		goto bad;
	ng_counter_sample *s = malloc((size_t)cnt * rs + 1);
	if (!s || fread(s, rs, cnt, f) != cnt) {
		free(s);
		goto bad;
	}
	fclose(f);
	size_t k = 0;
	for (size_t i = 0; i < cnt; i++)
		if (s[i].time_received >= sc->from && s[i].time_received < sc->to)
			s[k++] = s[i];
	int rc = k ? sc->fn(s, k, sc->arg) : 0;
	free(s);
	return rc;
bad:
	if (f)
		fclose(f);
	if (sc->errors)
		(*sc->errors)++;
	fprintf(stderr, "nagare: %s: not a readable counter file, skipped\n", path);
	return 0;
}

/* Walks `dir` in name order (YYYY/MM/DD/HH sort as text). */
static int scan_dir(struct scan *sc, const char *dir, int depth)
{
	DIR *d = opendir(dir);
	if (!d)
		return depth ? 0 : -1;
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		size_t len = strlen(e->d_name);
		if (depth == 4 && (len < 4 || strcmp(e->d_name + len - 4, ".ctr")))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 32;
			char **p = realloc(names, cap * sizeof *p);
			if (!p)
				break;
			names = p;
		}
		names[n++] = strdup(e->d_name);
	}
	closedir(d);
	if (n) /* qsort(NULL, 0) is undefined (C17 7.22.5) */
		qsort(names, n, sizeof *names, cmp_name);
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		char path[4096];
		int len = snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		if (!rc && (len < 0 || (size_t)len >= sizeof path))
			rc = -1; /* a path longer than PATH_MAX cannot be opened */
		else if (!rc)
			rc = depth == 4 ? scan_file(sc, path) : scan_dir(sc, path, depth + 1);
		free(names[i]);
	}
	free(names);
	return rc;
}

int ng_counter_scan(const char *dir, uint64_t from_ms, uint64_t to_ms,
                    int (*fn)(const ng_counter_sample *s, size_t n, void *arg), void *arg,
                    uint64_t *errors)
{
	char root[4096];
	snprintf(root, sizeof root, "%s/counters", dir);
	struct scan sc = {from_ms, to_ms, fn, arg, errors};
	return scan_dir(&sc, root, 0);
}
