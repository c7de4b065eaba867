/*
 * rollup.c — per-segment rollups: the flows of a segment summed per time
 * bucket over a few fields, written beside it by the maintenance thread
 * and read by the query engine in place of the segment when a query's
 * fields, filter and interval allow (store.h "Rollups").
 *
 * A rollup of segment X is the file X.r-<set>-<level>, a segment of the
 * same format whose rows are the groups of X's rows with equal (bucket of
 * flow_start, the set's fields): flow_start is the group's earliest
 * flow_start (so it lies in the bucket and time-range slicing of the scan
 * works unchanged), flow_end its latest flow_end, bytes and packets the
 * sums, and the NG_ROLLUP_FLOWS column the number of flows.  Every
 * aggregate the query engine computes (flows, packets, bytes, first,
 * last, hence pps/bps/bpp) is the same over these rows as over X's.
 *
 * Segments never change once written, so a rollup stays exact as long as
 * its segment exists: it is written under a temporary name, fsynced and
 * renamed in; it goes before its segment when compaction or retention
 * unlinks that; an orphan (a crash between the two unlinks) is removed by
 * the next pass.  A segment without its rollup is read raw: a query's
 * answer never depends on whether this pass has run.
 */
#include "store/store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/log.h"
#include "store/segment.h"
#include "store/tree.h"

#define C(f) NG_COL(NG_F_##f)

/* Narrow sets, so that a set's groups are few: a query uses the first
 * set (in this order) holding every field it groups or filters on.  Sets
 * whose groups are many (AS pairs; destination ports, where every
 * ephemeral port is a group) have hourly rollups only: at 5 minutes they
 * would cost more disk than they save time.  Addresses have none: an
 * hour's distinct addresses are a large part of its flows. */
#define BOTH ((1u << NG_ROLLUP_NLEVELS) - 1)
#define HOURLY 1u
const ng_rollup_set ng_rollup_sets[NG_ROLLUP_NSETS] = {
    {"geo",
     C(SRC_COUNTRY) | C(DST_COUNTRY) | C(SRC_CONTINENT) | C(DST_CONTINENT) | C(PROTOCOL) |
         C(IP_VERSION),
     BOTH},
    {"net",
     C(SRC_NET) | C(DST_NET) | C(SRC_NET_ROLE) | C(DST_NET_ROLE) | C(SRC_NET_SITE) |
         C(DST_NET_SITE) | C(PROTOCOL) | C(IP_VERSION),
     BOTH},
    {"srcas", C(SRC_AS) | C(SRC_AS_NAME) | C(AS_SOURCE) | C(PROTOCOL) | C(IP_VERSION), BOTH},
    {"dstas", C(DST_AS) | C(DST_AS_NAME) | C(AS_SOURCE) | C(PROTOCOL) | C(IP_VERSION), BOTH},
    {"if",
     C(EXPORTER) | C(EXPORTER_NAME) | C(OBSERVATION_DOMAIN) | C(IN_IF) | C(OUT_IF) | C(IN_IF_NAME) |
         C(OUT_IF_NAME) | C(PROTOCOL) | C(IP_VERSION) | C(DIRECTION) | C(SAMPLING_RATE) |
         C(SAMPLING_SOURCE) | C(FLOW_VERSION) | C(SAMPLE_KIND) | C(SERVICE),
     BOTH},
    /* pairs (Sankey): source and destination AS together */
    {"as",
     C(SRC_AS) | C(DST_AS) | C(SRC_AS_NAME) | C(DST_AS_NAME) | C(AS_SOURCE) | C(PROTOCOL) |
         C(IP_VERSION),
     HOURLY},
    {"port", C(DST_PORT) | C(SERVICE) | C(PROTOCOL) | C(IP_VERSION), HOURLY},
};
_Static_assert(NG_ROLLUP_NLEVELS == 2 && HOURLY == 1u << 0, "level 0 is the hour");

const uint64_t ng_rollup_levels_ms[NG_ROLLUP_NLEVELS] = {3600000, 300000};
static const char *const level_name[NG_ROLLUP_NLEVELS] = {"1h", "5m"};

/* The columns every rollup holds besides its set's fields. */
#define MEASURES (C(FLOW_START) | C(FLOW_END) | C(BYTES) | C(PACKETS) | NG_COL(NG_ROLLUP_FLOWS))

#define SUFFIX_PREFIX ".r-"

int ng_rollup_suffix(unsigned set, unsigned level, char *buf, size_t len)
{
	if (set >= NG_ROLLUP_NSETS || level >= NG_ROLLUP_NLEVELS ||
	    !(ng_rollup_sets[set].levels & 1u << level))
		return -1;
	int k =
	    snprintf(buf, len, SUFFIX_PREFIX "%s-%s", ng_rollup_sets[set].name, level_name[level]);
	return k < 0 || (size_t)k >= len ? -1 : 0;
}

int ng_rollup_pick(uint64_t columns)
{
	for (unsigned s = 0; s < NG_ROLLUP_NSETS; s++)
		if (!(columns & ~ng_rollup_sets[s].dims))
			return (int)s;
	return -1;
}

/* Calls fn(path) for every rollup file name of segment `seg`. */
static void each_rollup(const char *seg, void (*fn)(const char *path, void *arg), void *arg)
{
	for (unsigned s = 0; s < NG_ROLLUP_NSETS; s++)
		for (unsigned l = 0; l < NG_ROLLUP_NLEVELS; l++) {
			char suf[32], p[4200];
			if (ng_rollup_suffix(s, l, suf, sizeof suf) == 0 &&
			    (size_t)snprintf(p, sizeof p, "%s%s", seg, suf) < sizeof p)
				fn(p, arg);
		}
}

static void unlink_one(const char *path, void *arg)
{
	(void)arg;
	unlink(path);
}

void ng_rollup_unlink(const char *seg)
{
	each_rollup(seg, unlink_one, NULL);
}

static void add_size(const char *path, void *arg)
{
	struct stat st;
	if (stat(path, &st) == 0)
		*(uint64_t *)arg += (uint64_t)st.st_size;
}

uint64_t ng_rollup_bytes(const char *seg)
{
	uint64_t n = 0;
	each_rollup(seg, add_size, &n);
	return n;
}

/* ---- building ------------------------------------------------------------- */

#define KEY_WORDS 16 /* bucket + the widest set's fields (≤ 120 bytes) */

typedef struct group_table {
	uint64_t *keys; /* cap × kw words */
	ng_flow *out;   /* the groups, as rollup rows */
	uint32_t *slot; /* mask + 1 entries: group index + 1, 0 empty */
	size_t n, cap, mask, kw;
} group_table;

static uint64_t hash_words(const uint64_t *k, size_t kw)
{
	uint64_t h = UINT64_C(0x9e3779b97f4a7c15);
	for (size_t i = 0; i < kw; i++) {
		h ^= k[i];
		h *= UINT64_C(0xff51afd7ed558ccd);
		h ^= h >> 32;
	}
	return h;
}

/* Sizes the table for at most `rows` groups. */
static int table_init(group_table *t, size_t rows, size_t kw)
{
	size_t slots = 16;
	while (slots < rows * 2)
		slots *= 2;
	memset(t, 0, sizeof *t);
	t->kw = kw;
	t->cap = rows;
	t->mask = slots - 1;
	t->keys = malloc(rows * kw * sizeof *t->keys);
	t->out = malloc(rows * sizeof *t->out);
	t->slot = calloc(slots, sizeof *t->slot);
	return t->keys && t->out && t->slot ? 0 : -1;
}

static void table_free(group_table *t)
{
	free(t->keys);
	free(t->out);
	free(t->slot);
}

/* The key of row r: its bucket, then the set's fields in table order. */
static void make_key(const ng_flow *r, uint64_t dims, uint64_t level_ms, uint64_t *k, size_t kw)
{
	memset(k, 0, kw * sizeof *k);
	k[0] = r->flow_start - r->flow_start % level_ms;
	uint8_t *p = (uint8_t *)(k + 1);
	for (size_t f = 0; f < NG_FIELD_COUNT; f++)
		if (dims & NG_COL(f)) {
			memcpy(p, (const uint8_t *)r + ng_fields[f].offset, ng_fields[f].size);
			p += ng_fields[f].size;
		}
}

/* Adds row r to its group (rows ≤ t->cap, so there is always room). */
static void add_row(group_table *t, const ng_flow *r, uint64_t dims, uint64_t level_ms)
{
	uint64_t k[KEY_WORDS];
	make_key(r, dims, level_ms, k, t->kw);
	for (size_t h = hash_words(k, t->kw) & t->mask;; h = (h + 1) & t->mask) {
		uint32_t s = t->slot[h];
		if (!s) {
			ng_flow *g = &t->out[t->n];
			memset(g, 0, sizeof *g);
			for (size_t f = 0; f < NG_FIELD_COUNT; f++)
				if (dims & NG_COL(f))
					memcpy((uint8_t *)g + ng_fields[f].offset,
					       (const uint8_t *)r + ng_fields[f].offset,
					       ng_fields[f].size);
			g->flow_start = r->flow_start;
			g->flow_end = r->flow_end;
			g->bytes = r->bytes;
			g->packets = r->packets;
			g->bytes_raw = 1; /* NG_ROLLUP_FLOWS */
			memcpy(t->keys + t->n * t->kw, k, t->kw * sizeof *k);
			t->slot[h] = (uint32_t)++t->n;
			return;
		}
		if (!memcmp(t->keys + (s - 1) * t->kw, k, t->kw * sizeof *k)) {
			ng_flow *g = &t->out[s - 1];
			g->flow_start =
			    r->flow_start < g->flow_start ? r->flow_start : g->flow_start;
			g->flow_end = r->flow_end > g->flow_end ? r->flow_end : g->flow_end;
			g->bytes += r->bytes;
			g->packets += r->packets;
			g->bytes_raw++;
			return;
		}
	}
}
_Static_assert(NG_ROLLUP_FLOWS == NG_F_BYTES_RAW, "add_row counts flows in bytes_raw");

static int cmp_start(const void *a, const void *b, void *arg)
{
	const ng_flow *rows = arg;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	if (rows[i].flow_start != rows[j].flow_start)
		return rows[i].flow_start < rows[j].flow_start ? -1 : 1;
	return i < j ? -1 : i > j;
}

static int write_file(const char *path, const void *p, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	const uint8_t *b = p;
	while (len) {
		ssize_t k = write(fd, b, len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			close(fd);
			return -1;
		}
		b += k;
		len -= (size_t)k;
	}
	int rc = fsync(fd);
	close(fd);
	return rc;
}

typedef struct build_ctx {
	ng_seg_encoder *enc;
	ng_seg_reader rd;
	ng_flow *rows;
	size_t cap;
	uint8_t *colbuf;
	size_t colcap;
	uint64_t limit, done; /* segments to roll up in this call (0: all), done so far */
	uint64_t now, settle;
	ng_store_maint_stats *st;
} build_ctx;

/* Writes rollup (set, level) of the n rows to `path`. */
static int write_rollup(build_ctx *c, const char *path, unsigned set, unsigned level, size_t n)
{
	const uint64_t dims = ng_rollup_sets[set].dims, cols = dims | MEASURES;
	size_t kb = 0;
	ng_field fields[NG_FIELD_COUNT];
	size_t nf = 0;
	for (size_t f = 0; f < NG_FIELD_COUNT; f++) {
		if (dims & NG_COL(f))
			kb += ng_fields[f].size;
		if (cols & NG_COL(f))
			fields[nf++] = ng_fields[f];
	}
	group_table t;
	uint32_t *order = NULL;
	int rc = -1;
	if (table_init(&t, n, 1 + (kb + 7) / 8))
		goto out;
	for (size_t i = 0; i < n; i++)
		add_row(&t, &c->rows[i], dims, ng_rollup_levels_ms[level]);
	if (!(order = malloc(t.n * sizeof *order)))
		goto out;
	for (size_t i = 0; i < t.n; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, t.n, sizeof *order, cmp_start, t.out);
	const uint8_t *img;
	size_t len;
	char err[256], tmp[4300];
	if (ng_seg_encode_fields(c->enc, fields, nf, t.out, order, t.n, &img, &len, err,
	                         sizeof err)) {
		ng_error("store: rollup %s: %s", path, err);
		goto out;
	}
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	if (write_file(tmp, img, len) || rename(tmp, path)) {
		ng_error("store: rollup: cannot write %s: %s", path, strerror(errno));
		unlink(tmp);
		goto out;
	}
	c->st->rollups_written++;
	c->st->rollup_rows += t.n;
	rc = 0;
out:
	if (rc)
		c->st->errors++;
	free(order);
	table_free(&t);
	return rc;
}

/* Reads the columns rollups need of segment `seg` into c->rows.  Returns
 * the row count, or -1 (logged) when it cannot be read. */
static long load_rows(build_ctx *c, const char *seg)
{
	char err[256];
	if (ng_seg_open(&c->rd, seg, err, sizeof err)) {
		if (errno != ENOENT)
			ng_warn("store: rollup: %s: %s", seg, err);
		return -1;
	}
	size_t n = (size_t)c->rd.h.rows;
	if (n > c->cap) {
		ng_flow *r = realloc(c->rows, n * sizeof *r);
		uint8_t *b = realloc(c->colbuf, n * 16);
		if (r)
			c->rows = r;
		if (b)
			c->colbuf = b;
		if (!r || !b) {
			ng_seg_close(&c->rd);
			ng_error("store: rollup: out of memory for %zu rows", n);
			return -1;
		}
		c->cap = n;
	}
	uint64_t need = MEASURES & ~NG_COL(NG_ROLLUP_FLOWS);
	for (unsigned s = 0; s < NG_ROLLUP_NSETS; s++)
		need |= ng_rollup_sets[s].dims;
	memset(c->rows, 0, n * sizeof *c->rows);
	for (size_t f = 0; f < NG_FIELD_COUNT; f++) {
		if (!(need & NG_COL(f)))
			continue;
		const ng_field *fd = &ng_fields[f];
		if (ng_seg_read_column(&c->rd, fd, c->colbuf, err, sizeof err)) {
			ng_warn("store: rollup: %s: %s", seg, err);
			ng_seg_close(&c->rd);
			return -1;
		}
		for (size_t i = 0; i < n; i++)
			memcpy((uint8_t *)&c->rows[i] + fd->offset, c->colbuf + i * fd->size,
			       fd->size);
	}
	ng_seg_close(&c->rd);
	return (long)n;
}

/* Writes the rollups segment `seg` lacks. */
static void roll_segment(build_ctx *c, const char *seg)
{
	long n = -2;
	bool wrote = false;
	for (unsigned s = 0; s < NG_ROLLUP_NSETS; s++)
		for (unsigned l = 0; l < NG_ROLLUP_NLEVELS; l++) {
			char suf[32], p[4200];
			struct stat st;
			if (ng_rollup_suffix(s, l, suf, sizeof suf) ||
			    (size_t)snprintf(p, sizeof p, "%s%s", seg, suf) >= sizeof p ||
			    stat(p, &st) == 0)
				continue;
			if (n == -2 && (n = load_rows(c, seg)) < 0) {
				c->st->errors += errno != ENOENT;
				return;
			}
			if (n > 0 && write_rollup(c, p, s, l, (size_t)n) == 0)
				wrote = true;
		}
	if (wrote)
		c->st->segments_rolled++;
}

/* True when `name` is a rollup file (or its temporary) of a segment. */
static bool rollup_name(const char *name, char *seg, size_t len)
{
	const char *p = strstr(name, ".seg" SUFFIX_PREFIX);
	if (!p || (size_t)(p - name) + 4 >= len)
		return false;
	memcpy(seg, name, (size_t)(p - name) + 4);
	seg[p - name + 4] = 0;
	return true;
}

/* Removes rollups (and temporaries) whose segment is gone. */
static void drop_orphans(const char *path)
{
	DIR *d = opendir(path);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		char seg[256], sp[4400];
		struct stat st;
		if (!rollup_name(e->d_name, seg, sizeof seg))
			continue;
		snprintf(sp, sizeof sp, "%s/%s", path, seg);
		size_t len = strlen(e->d_name);
		bool tmp = len > 4 && !strcmp(e->d_name + len - 4, ".tmp");
		if (tmp || stat(sp, &st)) {
			snprintf(sp, sizeof sp, "%s/%s", path, e->d_name);
			unlink(sp);
		}
	}
	closedir(d);
}

static int roll_hour(const char *path, uint64_t t0, uint64_t t1, void *arg)
{
	build_ctx *c = arg;
	(void)t0;
	if (c->settle && t1 + c->settle > c->now)
		return 0;
	drop_orphans(path);
	ng_dir_entry *v = NULL;
	long n = ng_tree_list(path, 4, &v);
	for (long i = 0; i < n && !(c->limit && c->done >= c->limit); i++) {
		if (v[i].marker || v[i].replaced)
			continue;
		char sp[4200];
		snprintf(sp, sizeof sp, "%s/%s", path, v[i].name);
		uint64_t before = c->st->segments_rolled;
		roll_segment(c, sp);
		c->done += c->st->segments_rolled > before;
	}
	free(v);
	return c->limit && c->done >= c->limit;
}

int ng_store_rollup(const char *dir, uint64_t now_ms, uint64_t settle_ms, unsigned max_segments,
                    ng_store_maint_stats *st)
{
	char root[4096];
	struct stat sb;
	ng_store_maint_stats local = {0};
	if (!st)
		st = &local;
	if ((size_t)snprintf(root, sizeof root, "%s/flows", dir) >= sizeof root ||
	    stat(root, &sb) || !S_ISDIR(sb.st_mode))
		return -1;
	build_ctx c = {.limit = max_segments, .now = now_ms, .settle = settle_ms, .st = st};
	ng_seg_reader_init(&c.rd);
	if (!(c.enc = ng_seg_encoder_new(3))) {
		st->errors++;
		return 0;
	}
	int lock = ng_store_maint_lock(dir);
	ng_tree_hours(root, 0, UINT64_MAX, roll_hour, &c);
	ng_store_maint_unlock(lock);
	ng_seg_reader_free(&c.rd);
	ng_seg_encoder_free(c.enc);
	free(c.rows);
	free(c.colbuf);
	return 0;
}
