/*
 * scan.c — reading a store: the segments overlapping a time range.
 *
 * The walk goes DIR/flows/YYYY/MM/DD/HH in time order and skips a whole
 * year, month, day or hour directory when its span misses [from, to): the
 * writer puts a segment in the hour directory of its rows' flow_start, and
 * every row of a segment lies in that hour (writer.c), so this is exact.
 * Within an hour, a file named <start>-<end>-<seq>.seg is skipped unopened
 * when [start, end] misses the range; otherwise its header is read and
 * checked again, then only the requested columns are decoded.  Rows are
 * sorted by flow_start, so the rows in range are one slice of each column.
 */
#include "store/store.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "core/log.h"
#include "store/segment.h"

typedef struct scan_ctx {
	uint64_t from, to, columns;
	int (*fn)(const ng_column_batch *b, void *arg);
	bool (*want)(const ng_segment_info *s, void *arg);
	void *arg;
	ng_scan_stats *st;
	ng_seg_reader rd;
	void *col[NG_FIELD_COUNT];
	size_t colcap[NG_FIELD_COUNT];
} scan_ctx;

typedef struct dir_entry {
	uint64_t a, b, c; /* numeric parts: unit value, or start/end/seq of a file */
	char name[256];
} dir_entry;

static int cmp_entry(const void *x, const void *y)
{
	const dir_entry *p = x, *q = y;
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

/* Parses "<start>-<end>-<seq>.seg"; anything else (".tmp" files, editor
 * droppings) is not a segment. */
static bool parse_seg_name(const char *s, dir_entry *e)
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

/* Lists a directory's entries that are numbers (level < 4) or segment
 * files (level 4), sorted.  Returns the count, *out malloc'ed; -1 when
 * the directory cannot be read. */
static long list_dir(const char *path, int level, dir_entry **out)
{
	DIR *d = opendir(path);
	if (!d)
		return -1;
	size_t n = 0, cap = 0;
	dir_entry *v = NULL;
	struct dirent *de;
	while ((de = readdir(d))) {
		dir_entry e = {0};
		if (strlen(de->d_name) >= sizeof e.name)
			continue;
		if (level < 4) {
			if (!all_digits(de->d_name, 4))
				continue;
			e.a = strtoull(de->d_name, NULL, 10);
		} else if (!parse_seg_name(de->d_name, &e)) {
			continue;
		}
		strcpy(e.name, de->d_name);
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			dir_entry *p = realloc(v, cap * sizeof *p);
			if (!p) {
				free(v);
				closedir(d);
				return -1;
			}
			v = p;
		}
		v[n++] = e;
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof *v, cmp_entry);
	*out = v;
	return (long)n;
}

/* The span [*t0, *t1) in ms of the directory for year/month/day/hour
 * `parts[0..level]`, or false when the numbers are not a valid date. */
static bool dir_span(const unsigned parts[4], int level, uint64_t *t0, uint64_t *t1)
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

static void report(scan_ctx *c, const char *path, const char *why)
{
	c->st->errors++;
	ng_warn("store: skipping segment %s: %s", path, why);
}

/* Index of the first row in flow_start[0..n) at or after t. */
static size_t lower_bound(const uint64_t *v, size_t n, uint64_t t)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid] < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Decodes the requested columns of block b and passes rows [lo, hi) on. */
static int scan_block(scan_ctx *c, const char *path, size_t b, size_t lo, size_t hi,
		      uint64_t cols, bool *bad)
{
	char err[256];
	ng_column_batch batch = {.n = hi - lo};
	for (size_t f = 0; f < NG_FIELD_COUNT; f++) {
		if (!(cols & NG_COL(f)))
			continue;
		if (f != NG_F_FLOW_START &&
		    ng_seg_read_block(&c->rd, &ng_fields[f], b, c->col[f], err, sizeof err)) {
			report(c, path, err);
			*bad = true;
			return 0;
		}
		batch.col[f] = (const uint8_t *)c->col[f] + lo * ng_fields[f].size;
	}
	c->st->rows_scanned += batch.n;
	return c->fn(&batch, c->arg);
}

/*
 * Reads one segment block by block (NG_SEG_BLOCK_ROWS rows: the columns of
 * a block stay in cache while the callback works on them).  flow_start is
 * decoded first; it is sorted, so the rows in range are one slice of each
 * block, and blocks wholly after the range end the segment.
 */
static int scan_segment(scan_ctx *c, const char *path, const dir_entry *e)
{
	c->st->segments_total++;
	if (e->b < c->from || e->a >= c->to || e->a > e->b) {
		c->st->segments_skipped++;
		return 0;
	}
	if (c->want && !c->want(&(ng_segment_info){path, e->a, e->b}, c->arg)) {
		c->st->segments_skipped++;
		return 0;
	}
	char err[256];
	if (ng_seg_open(&c->rd, path, err, sizeof err)) {
		report(c, path, err);
		return 0;
	}
	const ng_seg_header *h = &c->rd.h;
	if (h->rows == 0 || h->start_max < c->from || h->start_min >= c->to) {
		c->st->segments_skipped++;
		ng_seg_close(&c->rd);
		return 0;
	}
	uint64_t cols = c->columns | NG_COL(NG_F_FLOW_START);
	for (size_t f = 0; f < NG_FIELD_COUNT; f++) {
		if (!(cols & NG_COL(f)) || c->col[f])
			continue;
		if (!(c->col[f] = malloc(NG_SEG_BLOCK_ROWS * ng_fields[f].size))) {
			report(c, path, "out of memory");
			ng_seg_close(&c->rd);
			return 0;
		}
	}
	c->st->bytes_read += h->header_size;
	for (size_t f = 0; f < NG_FIELD_COUNT; f++) {
		int idx = c->rd.col_of_field[f];
		if ((cols & NG_COL(f)) && idx >= 0)
			c->st->bytes_read += h->cols[idx].stored;
	}
	const size_t nb = ng_seg_blocks(&c->rd);
	uint64_t *start = c->col[NG_F_FLOW_START], prev = 0;
	int rc = 0;
	bool bad = false;
	for (size_t b = 0; b < nb && rc == 0 && !bad; b++) {
		size_t n = ng_seg_block_rows(&c->rd, b);
		if (ng_seg_read_block(&c->rd, &ng_fields[NG_F_FLOW_START], b, start, err,
				      sizeof err)) {
			report(c, path, err);
			bad = true;
			break;
		}
		for (size_t i = 0; i < n; i++) {
			if (start[i] < prev) {
				report(c, path, "rows not in flow_start order");
				bad = true;
				break;
			}
			prev = start[i];
		}
		if (bad || start[0] >= c->to)
			break;
		size_t lo = lower_bound(start, n, c->from), hi = lower_bound(start, n, c->to);
		if (lo < hi)
			rc = scan_block(c, path, b, lo, hi, cols, &bad);
	}
	if (!bad)
		c->st->segments_read++;
	ng_seg_close(&c->rd);
	return rc;
}

/* Walks one level of the hour tree below `path`. */
static int walk(scan_ctx *c, const char *path, int level, unsigned parts[4])
{
	dir_entry *v = NULL;
	long n = list_dir(path, level, &v);
	if (n < 0)
		return 0; /* vanished or unreadable: nothing there */
	int rc = 0;
	for (long i = 0; i < n && rc == 0; i++) {
		char sub[4096];
		if ((size_t)snprintf(sub, sizeof sub, "%s/%s", path, v[i].name) >= sizeof sub)
			continue;
		if (level == 4) {
			rc = scan_segment(c, sub, &v[i]);
			continue;
		}
		parts[level] = (unsigned)(v[i].a > 100000 ? 100000 : v[i].a);
		uint64_t t0, t1;
		if (!dir_span(parts, level, &t0, &t1))
			continue;
		if (t1 <= c->from || t0 >= c->to)
			continue;
		rc = walk(c, sub, level + 1, parts);
	}
	free(v);
	return rc;
}

int ng_store_scan_opts(const char *dir, const ng_scan_opts *o, ng_scan_stats *st)
{
	ng_scan_stats local;
	if (!st)
		st = &local;
	memset(st, 0, sizeof *st);
	char path[4096];
	struct stat sb;
	if ((size_t)snprintf(path, sizeof path, "%s/flows", dir) >= sizeof path ||
	    stat(path, &sb) || !S_ISDIR(sb.st_mode))
		return -1;
	scan_ctx c = {.from = o->from_ms, .to = o->to_ms, .columns = o->columns, .fn = o->fn,
		      .want = o->want, .arg = o->arg, .st = st};
	ng_seg_reader_init(&c.rd);
	unsigned parts[4] = {0};
	int rc = c.from < c.to ? walk(&c, path, 0, parts) : 0;
	ng_seg_reader_free(&c.rd);
	for (size_t f = 0; f < NG_FIELD_COUNT; f++)
		free(c.col[f]);
	return rc;
}

int ng_store_scan(const char *dir, uint64_t from_ms, uint64_t to_ms, uint64_t columns,
		  int (*fn)(const ng_column_batch *b, void *arg), void *arg, ng_scan_stats *st)
{
	ng_scan_opts o = {.from_ms = from_ms, .to_ms = to_ms, .columns = columns, .fn = fn,
			  .arg = arg};
	return ng_store_scan_opts(dir, &o, st);
}
