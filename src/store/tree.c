/*
 * tree.c — listing the store's hour tree (see tree.h).
 */
#include "store/tree.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static int cmp_entry(const void *x, const void *y)
{
	const ng_dir_entry *p = x, *q = y;
	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	if (p->b != q->b)
		return p->b < q->b ? -1 : 1;
	if (p->c != q->c)
		return p->c < q->c ? -1 : 1;
	return strcmp(p->name, q->name);
}

static bool all_digits(const char *s, size_t max)
{
	size_t n = 0;
	for (; s[n]; n++)
		if (!isdigit((unsigned char)s[n]) || n >= max)
			return false;
	return n > 0;
}

/* True when `name` ends in `suffix`. */
static bool ends_with(const char *name, const char *suffix)
{
	size_t n = strlen(name), k = strlen(suffix);
	return n >= k && !strcmp(name + n - k, suffix);
}

ng_tmp_kind ng_tree_temporary(const char *name)
{
	if (!ends_with(name, ".tmp"))
		return NG_TMP_NONE;
	if (strstr(name, ".r-"))
		return NG_TMP_ROLLUP;
	if (ends_with(name, ".seg.c.tmp") || ends_with(name, NG_MARKER_SUFFIX ".tmp"))
		return NG_TMP_MAINT;
	return NG_TMP_WRITER;
}

/* Parses "<start>-<end>-<seq>.seg"; anything else (".tmp" files, editor
 * droppings) is not a segment. */
static bool parse_seg_name(const char *s, ng_dir_entry *e)
{
	unsigned long long a, b, c;
	int used = 0;
	if (sscanf(s, "%20llu-%20llu-%20llu.seg%n", &a, &b, &c, &used) != 3 || s[used] != 0 ||
	    !isdigit((unsigned char)s[0]))
		return false;
	e->a = a;
	e->b = b;
	e->c = c;
	return true;
}

/* A marker "<segment name>.replaces": e gets the segment's numbers. */
static bool parse_marker_name(const char *s, ng_dir_entry *e)
{
	size_t len = strlen(s), sl = strlen(NG_MARKER_SUFFIX);
	char seg[256];
	if (len <= sl || len >= sizeof seg || strcmp(s + len - sl, NG_MARKER_SUFFIX))
		return false;
	memcpy(seg, s, len - sl);
	seg[len - sl] = 0;
	return parse_seg_name(seg, e);
}

static int push(ng_dir_entry **v, size_t *n, size_t *cap, const ng_dir_entry *e)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		ng_dir_entry *p = realloc(*v, c * sizeof *p);
		if (!p)
			return -1;
		*v = p;
		*cap = c;
	}
	(*v)[(*n)++] = *e;
	return 0;
}

static int cmp_name(const void *x, const void *y)
{
	return strcmp(((const ng_dir_entry *)x)->name, ((const ng_dir_entry *)y)->name);
}

typedef struct mark_ctx {
	ng_dir_entry *byname; /* the segments, sorted by name */
	size_t n;
} mark_ctx;

static void mark_one(const char *name, void *arg)
{
	mark_ctx *m = arg;
	ng_dir_entry key;
	if (strlen(name) >= sizeof key.name)
		return;
	strcpy(key.name, name);
	ng_dir_entry *e = bsearch(&key, m->byname, m->n, sizeof key, cmp_name);
	if (e)
		e->replaced = true;
}

/* Sets `replaced` on the segments named by the markers of the compacted
 * segments (v sorted by name on entry).  The marker is opened by path
 * whether or not the listing showed it. */
static void apply_markers(const char *path, ng_dir_entry *v, size_t n)
{
	mark_ctx m = {v, n};
	for (size_t i = 0; i < n; i++) {
		if (v[i].marker || v[i].c < NG_COMPACT_SEQ)
			continue;
		char mp[4096];
		if ((size_t)snprintf(mp, sizeof mp, "%s/%s%s", path, v[i].name, NG_MARKER_SUFFIX) <
		    sizeof mp)
			ng_tree_read_marker(mp, mark_one, &m);
	}
}

long ng_tree_list(const char *path, int level, ng_dir_entry **out)
{
	DIR *d = opendir(path);
	if (!d)
		return -1;
	size_t n = 0, cap = 0;
	ng_dir_entry *v = NULL;
	struct dirent *de;
	bool compacted = false;
	while ((de = readdir(d))) {
		ng_dir_entry e = {0};
		if (strlen(de->d_name) >= sizeof e.name)
			continue;
		if (level < 4) {
			if (!all_digits(de->d_name, 4))
				continue;
			e.a = strtoull(de->d_name, NULL, 10);
		} else if (!parse_seg_name(de->d_name, &e)) {
			if (!parse_marker_name(de->d_name, &e))
				continue;
			e.marker = true;
		}
		if (level == 4 && !e.marker && e.c >= NG_COMPACT_SEQ)
			compacted = true;
		strcpy(e.name, de->d_name);
		if (push(&v, &n, &cap, &e)) {
			free(v);
			closedir(d);
			return -1;
		}
	}
	closedir(d);
	if (compacted) {
		qsort(v, n, sizeof *v, cmp_name);
		apply_markers(path, v, n);
	}
	if (n)
		qsort(v, n, sizeof *v, cmp_entry);
	*out = v;
	return (long)n;
}

int ng_tree_read_marker(const char *path, void (*fn)(const char *name, void *arg), void *arg)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	char line[512];
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\r\n")] = 0;
		if (*line)
			fn(line, arg);
	}
	fclose(f);
	return 0;
}

bool ng_tree_dir_span(const unsigned parts[4], int level, uint64_t *t0, uint64_t *t1)
{
	struct tm tm = {0};
	tm.tm_year = (int)parts[0] - 1900;
	tm.tm_mon = level >= 1 ? (int)parts[1] - 1 : 0;
	tm.tm_mday = level >= 2 ? (int)parts[2] : 1;
	tm.tm_hour = level >= 3 ? (int)parts[3] : 0;
	if (parts[0] < 1970 || tm.tm_mon < 0 || tm.tm_mon > 11 || tm.tm_mday < 1 ||
	    tm.tm_mday > 31 || tm.tm_hour > 23)
		return false;
	time_t a = timegm(&tm);
	switch (level) {
	case 0: tm.tm_year++; break;
	case 1: tm.tm_mon++; break;
	case 2: tm.tm_mday++; break;
	default: tm.tm_hour++; break;
	}
	time_t b = timegm(&tm);
	if (a < 0 || b <= a)
		return false;
	*t0 = (uint64_t)a * 1000;
	*t1 = (uint64_t)b * 1000;
	return true;
}

static int walk(const char *path, int level, unsigned parts[4], uint64_t from, uint64_t to,
                int (*fn)(const char *, uint64_t, uint64_t, void *), void *arg)
{
	ng_dir_entry *v = NULL;
	long n = ng_tree_list(path, level, &v);
	if (n < 0)
		return 0; /* vanished or unreadable: nothing there */
	int rc = 0;
	for (long i = 0; i < n && rc == 0; i++) {
		char sub[4096];
		if ((size_t)snprintf(sub, sizeof sub, "%s/%s", path, v[i].name) >= sizeof sub)
			continue;
		parts[level] = (unsigned)(v[i].a > 100000 ? 100000 : v[i].a);
		uint64_t t0, t1;
		if (!ng_tree_dir_span(parts, level, &t0, &t1) || t1 <= from || t0 >= to)
			continue;
		rc = level == 3 ? fn(sub, t0, t1, arg)
		                : walk(sub, level + 1, parts, from, to, fn, arg);
	}
	free(v);
	return rc;
}

int ng_tree_hours(const char *root, uint64_t from, uint64_t to,
                  int (*fn)(const char *path, uint64_t t0, uint64_t t1, void *arg), void *arg)
{
	unsigned parts[4] = {0};
	return from < to ? walk(root, 0, parts, from, to, fn, arg) : 0;
}

int ng_tree_root(const char *dir, char *root, size_t len)
{
	struct stat sb;
	if ((size_t)snprintf(root, len, "%s/flows", dir) >= len || stat(root, &sb) ||
	    !S_ISDIR(sb.st_mode))
		return -1;
	return 0;
}
