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

#include "core/hash.h"
#include "core/log.h"
#include "store/files.h"
#include "store/segment.h"
#include "store/tree.h"

#define C(f) NG_F_##f

/* Narrow sets, so that a set's groups are few: a query uses the first
 * set (in this order) holding every field it groups or filters on.  Sets
 * whose groups are many (AS pairs; destination ports, where every
 * ephemeral port is a group) have hourly rollups only: at 5 minutes they
 * would cost more disk than they save time.  Addresses have top rollups
 * only (store.h): an hour's distinct addresses are a large part of its
 * flows. */
#define BOTH ((1u << NG_ROLLUP_NLEVELS) - 1)
#define HOURLY 1u
const ng_rollup_set ng_rollup_sets[NG_ROLLUP_NSETS] = {
    {"geo",
     NG_COLSET(C(SRC_COUNTRY), C(DST_COUNTRY), C(SRC_CONTINENT), C(DST_CONTINENT), C(PROTOCOL),
               C(IP_VERSION)),
     BOTH, false},
    {"net",
     NG_COLSET(C(SRC_NET), C(DST_NET), C(SRC_NET_ROLE), C(DST_NET_ROLE), C(SRC_NET_SITE),
               C(DST_NET_SITE), C(PROTOCOL), C(IP_VERSION)),
     BOTH, false},
    {"srcas", NG_COLSET(C(SRC_AS), C(SRC_AS_NAME), C(AS_SOURCE), C(PROTOCOL), C(IP_VERSION)), BOTH,
     false},
    {"dstas", NG_COLSET(C(DST_AS), C(DST_AS_NAME), C(AS_SOURCE), C(PROTOCOL), C(IP_VERSION)), BOTH,
     false},
    {"if",
     NG_COLSET(C(EXPORTER), C(EXPORTER_NAME), C(OBSERVATION_DOMAIN), C(IN_IF), C(OUT_IF),
               C(IN_IF_NAME), C(OUT_IF_NAME), C(PROTOCOL), C(IP_VERSION), C(DIRECTION),
               C(SAMPLING_RATE), C(SAMPLING_SOURCE), C(FLOW_VERSION), C(SAMPLE_KIND), C(SERVICE)),
     BOTH, false},
    /* pairs (Sankey): source and destination AS together */
    {"as",
     NG_COLSET(C(SRC_AS), C(DST_AS), C(SRC_AS_NAME), C(DST_AS_NAME), C(AS_SOURCE), C(PROTOCOL),
               C(IP_VERSION)),
     HOURLY, false},
    {"port", NG_COLSET(C(DST_PORT), C(SERVICE), C(PROTOCOL), C(IP_VERSION)), HOURLY, false},
    /* the largest groups of one address (store.h "Top rollups") */
    {"srctop", NG_COLSET(C(SRC_ADDR), C(IP_VERSION)), HOURLY, true},
    {"dsttop", NG_COLSET(C(DST_ADDR), C(IP_VERSION)), HOURLY, true},
};
_Static_assert(NG_ROLLUP_NLEVELS == 2 && HOURLY == 1u << 0, "level 0 is the hour");

const uint64_t ng_rollup_levels_ms[NG_ROLLUP_NLEVELS] = {3600000, 300000};
static const char *const level_name[NG_ROLLUP_NLEVELS] = {"1h", "5m"};

/* The columns every rollup holds besides its set's fields. */
static const ng_colset measures =
    NG_COLSET(C(FLOW_START), C(FLOW_END), C(BYTES), C(PACKETS), NG_ROLLUP_FLOWS);

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

int ng_rollup_pick(ng_colset columns)
{
	for (unsigned s = 0; s < NG_ROLLUP_NSETS; s++)
		if (!ng_rollup_sets[s].top && ng_colset_subset(columns, ng_rollup_sets[s].dims))
			return (int)s;
	return -1;
}

int ng_rollup_top_set(enum ng_field_id f)
{
	ng_colset dims = ng_colset_of(f);
	ng_colset_add(&dims, NG_F_IP_VERSION);
	for (unsigned s = 0; s < NG_ROLLUP_NSETS; s++)
		if (ng_rollup_sets[s].top && ng_colset_equal(ng_rollup_sets[s].dims, dims))
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

#define KEY_WORDS 16 /* the widest set's fields (≤ 128 bytes) */

/* ---- building ------------------------------------------------------------- */

/*
 * A grouper sums rows (in flow_start order) per (bucket, the set's
 * fields).  Rows come bucket after bucket, so its hash table holds one
 * bucket's groups and is cleared at the next: it stays small and in
 * cache.  Were the rows not in order, a bucket would only be split into
 * two groups of rows, whose sums a query adds up all the same.
 */
typedef struct grouper {
	struct {
		uint16_t off;
		uint8_t size;
	} dim[NG_FIELD_COUNT]; /* the set's fields in ng_flow */
	size_t ndim, kw;       /* kw: key words */
	uint64_t level;        /* bucket, ms */
	ng_flow *out;          /* the groups, bucket after bucket */
	uint64_t *keys;        /* kw words per group */
	size_t n, cap;
	size_t base;     /* first group of the current bucket */
	uint64_t bucket; /* the current bucket's start */
	uint32_t *slot;  /* current bucket: group - base + 1; 0 empty */
	size_t mask;
} grouper;

static int grouper_init(grouper *g, ng_colset dims, uint64_t level_ms)
{
	memset(g, 0, sizeof *g);
	size_t kb = 0;
	ng_colset left = dims;
	for (int f; (f = ng_colset_pop(&left)) >= 0;) {
		g->dim[g->ndim].off = ng_fields[f].offset;
		g->dim[g->ndim++].size = ng_fields[f].size;
		kb += ng_fields[f].size;
	}
	g->kw = kb ? (kb + 7) / 8 : 1;
	g->level = level_ms;
	g->bucket = UINT64_MAX;
	g->mask = 1023;
	g->slot = calloc(g->mask + 1, sizeof *g->slot);
	return g->slot ? 0 : -1;
}

static void grouper_free(grouper *g)
{
	free(g->out);
	free(g->keys);
	free(g->slot);
}

/* Puts group i (of the current bucket) in the table. */
static void slot_put(grouper *g, size_t i)
{
	size_t h = ng_hash_words(g->keys + i * g->kw, g->kw) & g->mask;
	while (g->slot[h])
		h = (h + 1) & g->mask;
	g->slot[h] = (uint32_t)(i - g->base + 1);
}

/* Room for one more group: arrays and a table at most half full. */
static int grouper_room(grouper *g)
{
	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 4096;
		ng_flow *o = realloc(g->out, cap * sizeof *o);
		if (o)
			g->out = o;
		uint64_t *k = realloc(g->keys, cap * g->kw * sizeof *k);
		if (k)
			g->keys = k;
		if (!o || !k)
			return -1;
		g->cap = cap;
	}
	if ((g->n - g->base + 1) * 2 > g->mask + 1) {
		size_t slots = (g->mask + 1) * 2;
		uint32_t *s = calloc(slots, sizeof *s);
		if (!s)
			return -1;
		free(g->slot);
		g->slot = s;
		g->mask = slots - 1;
		for (size_t i = g->base; i < g->n; i++)
			slot_put(g, i);
	}
	return 0;
}

/* Start of the bucket of g's level that time t (ms) falls in. */
static uint64_t bucket_of(const grouper *g, uint64_t t)
{
	return t - t % g->level;
}

/* Adds row r, which sums `flows` flows, to its group.  Returns 0 or -1
 * when out of memory. */
static int grouper_add(grouper *g, const ng_flow *r, uint64_t flows)
{
	uint64_t b = bucket_of(g, r->flow_start), k[KEY_WORDS] = {0};
	if (b != g->bucket) {
		memset(g->slot, 0, (g->mask + 1) * sizeof *g->slot);
		g->base = g->n;
		g->bucket = b;
	}
	uint8_t *p = (uint8_t *)k;
	for (size_t j = 0; j < g->ndim; j++) {
		memcpy(p, (const uint8_t *)r + g->dim[j].off, g->dim[j].size);
		p += g->dim[j].size;
	}
	const size_t kw = g->kw;
	size_t h = ng_hash_words(k, kw) & g->mask;
	for (;; h = (h + 1) & g->mask) {
		uint32_t s = g->slot[h];
		if (!s)
			break;
		ng_flow *o = &g->out[g->base + s - 1];
		if (!memcmp(g->keys + (g->base + s - 1) * kw, k, kw * sizeof *k)) {
			o->flow_start =
			    r->flow_start < o->flow_start ? r->flow_start : o->flow_start;
			o->flow_end = r->flow_end > o->flow_end ? r->flow_end : o->flow_end;
			o->bytes += r->bytes;
			o->packets += r->packets;
			o->bytes_raw += flows; /* NG_ROLLUP_FLOWS */
			return 0;
		}
	}
	if (grouper_room(g))
		return -1;
	ng_flow *o = &g->out[g->n];
	memset(o, 0, sizeof *o);
	for (size_t j = 0; j < g->ndim; j++)
		memcpy((uint8_t *)o + g->dim[j].off, (const uint8_t *)r + g->dim[j].off,
		       g->dim[j].size);
	o->flow_start = r->flow_start;
	o->flow_end = r->flow_end;
	o->bytes = r->bytes;
	o->packets = r->packets;
	o->bytes_raw = flows;
	memcpy(g->keys + g->n * kw, k, kw * sizeof *k);
	g->n++;
	slot_put(g, g->n - 1);
	return 0;
}
_Static_assert(NG_ROLLUP_FLOWS == NG_F_BYTES_RAW, "grouper_add counts flows in bytes_raw");
_Static_assert(KEY_WORDS * 8 >= 64, "a set's fields fit a key");

/* Sums rows[0..n) into g: raw rows (one flow each) or, `summed`, rows of
 * a finer rollup (their flow counts).  Returns 0 or -1. */
static int group_rows(grouper *g, const ng_flow *rows, size_t n, bool summed)
{
	for (size_t i = 0; i < n; i++)
		if (grouper_add(g, &rows[i], summed ? rows[i].bytes_raw : 1))
			return -1;
	return 0;
}

typedef struct build_ctx {
	ng_seg_encoder *enc;
	ng_seg_reader rd;
	ng_flow *rows;
	size_t cap;
	uint8_t *colbuf;
	uint64_t limit, done; /* segments to roll up in this call (0: all), done so far */
	uint64_t now, settle;
	bool merging_too; /* also small segments compaction will merge */
	ng_store_maint_stats *st;
} build_ctx;

/* Writes rows[0..n) (groups) as rollup `set` to `path` (sorted by
 * flow_start, as every segment). */
static int write_rollup(build_ctx *c, const char *path, unsigned set, const ng_flow *rows, size_t n)
{
	const ng_colset cols = ng_colset_union(ng_rollup_sets[set].dims, measures);
	ng_field fields[NG_FIELD_COUNT];
	size_t nf = 0;
	ng_colset left = cols;
	for (int f; (f = ng_colset_pop(&left)) >= 0;)
		fields[nf++] = ng_fields[f];
	int rc = -1;
	uint32_t *order = malloc((n ? n : 1) * sizeof *order);
	if (!order)
		goto out;
	ng_seg_order_by_start(rows, order, n);
	const uint8_t *img;
	size_t len;
	char err[256];
	if (ng_seg_encode_fields(c->enc, fields, nf, rows, order, n, &img, &len, err, sizeof err)) {
		ng_error("store: rollup %s: %s", path, err);
		goto out;
	}
	if (ng_replace_file(path, img, len)) {
		ng_error("store: rollup: cannot write %s: %s", path, strerror(errno));
		goto out;
	}
	c->st->rollups_written++;
	c->st->rollup_rows += n;
	rc = 0;
out:
	if (rc)
		c->st->errors++;
	free(order);
	return rc;
}

/* ---- top rollups ------------------------------------------------------ */

/* Measure m of a group: 0 flows, 1 packets, 2 bytes. */
static uint64_t measure(const ng_flow *r, unsigned m)
{
	return m == 0 ? r->bytes_raw : m == 1 ? r->packets : r->bytes;
}

typedef struct by_measure {
	const ng_flow *g;
	unsigned m;
} by_measure;

/* Largest measure first. */
static int cmp_desc(const void *a, const void *b, void *arg)
{
	const by_measure *c = arg;
	uint64_t x = measure(&c->g[*(const uint32_t *)a], c->m);
	uint64_t y = measure(&c->g[*(const uint32_t *)b], c->m);
	return x < y ? 1 : x > y ? -1 : 0;
}

/* A bound row (store.h "Top rollups") of the bucket starting at
 * `bucket`, nothing left out yet; `addr`: the offset of the set's
 * address in ng_flow. */
static ng_flow bound_row(uint64_t bucket, size_t addr)
{
	ng_flow b = {.flow_start = bucket, .flow_end = bucket, .ip_version = NG_ROLLUP_MARK};
	((uint8_t *)&b)[addr + 15] = 1;
	return b;
}

/* Appends to out[*nout] the top rollup rows of the n groups g[] of the
 * bucket starting at `bucket` (store.h "Top rollups"): the groups among
 * the NG_ROLLUP_TOP_K largest by some measure, the rest row when a group
 * is left out, and the bound row.  `addr` is the offset of the set's
 * address in ng_flow; keep[] and idx[] have room for n. */
static void top_bucket(const ng_flow *g, size_t n, uint64_t bucket, size_t addr, bool *keep,
                       uint32_t *idx, ng_flow *out, size_t *nout)
{
	memset(keep, n > NG_ROLLUP_TOP_K ? 0 : 1, n);
	for (unsigned m = 0; m < 3 && n > NG_ROLLUP_TOP_K; m++) {
		for (size_t i = 0; i < n; i++)
			idx[i] = (uint32_t)i;
		by_measure by = {g, m};
		qsort_r(idx, n, sizeof *idx, cmp_desc, &by);
		for (size_t i = 0; i < NG_ROLLUP_TOP_K; i++)
			keep[idx[i]] = true;
	}
	ng_flow rest = {.flow_start = UINT64_MAX, .ip_version = NG_ROLLUP_MARK};
	ng_flow bound = bound_row(bucket, addr);
	for (size_t i = 0; i < n; i++) {
		const ng_flow *r = &g[i];
		if (keep[i]) {
			out[(*nout)++] = *r;
			continue;
		}
		rest.bytes_raw += r->bytes_raw;
		rest.packets += r->packets;
		rest.bytes += r->bytes;
		rest.flow_start = r->flow_start < rest.flow_start ? r->flow_start : rest.flow_start;
		rest.flow_end = r->flow_end > rest.flow_end ? r->flow_end : rest.flow_end;
		bound.bytes_raw = r->bytes_raw > bound.bytes_raw ? r->bytes_raw : bound.bytes_raw;
		bound.packets = r->packets > bound.packets ? r->packets : bound.packets;
		bound.bytes = r->bytes > bound.bytes ? r->bytes : bound.bytes;
	}
	if (rest.bytes_raw)
		out[(*nout)++] = rest;
	out[(*nout)++] = bound;
}

/* The rows of top rollup `set` from g's groups (bucket after bucket) into
 * *rows (malloc'ed; *n of them).  Returns 0 or -1 when out of memory.
 * When the groups cannot be told from the markers (a flow carries the
 * marker's ip_version) or a bucket comes twice (rows out of flow_start
 * order), the rollup is two bound rows: a query reading it finds it
 * unusable and reads the rows, and maintenance does not try again. */
static int top_rows(const grouper *g, unsigned set, ng_flow **rows, size_t *n)
{
	size_t addr = 0;
	const ng_colset dims = ng_rollup_sets[set].dims;
	ng_colset left = dims;
	for (int f; (f = ng_colset_pop(&left)) >= 0;)
		if (ng_fields[f].type == NG_FT_ADDR)
			addr = ng_fields[f].offset;
	size_t nb = 0; /* buckets */
	for (size_t i = 0; i < g->n; i++)
		nb += i == 0 ||
		      bucket_of(g, g->out[i].flow_start) != bucket_of(g, g->out[i - 1].flow_start);
	size_t cap = g->n < 3 * NG_ROLLUP_TOP_K * nb ? g->n : 3 * NG_ROLLUP_TOP_K * nb;
	ng_flow *out = malloc((cap + 2 * nb + 1) * sizeof *out);
	bool *keep = malloc(g->n + 1);
	uint32_t *idx = malloc((g->n + 1) * sizeof *idx);
	int rc = out && keep && idx ? 0 : -1;
	*n = 0;
	uint64_t last = 0;
	for (size_t i = 0, j; rc == 0 && i < g->n; i = j) {
		uint64_t b = bucket_of(g, g->out[i].flow_start);
		for (j = i; j < g->n && bucket_of(g, g->out[j].flow_start) == b; j++)
			if (g->out[j].ip_version == NG_ROLLUP_MARK)
				rc = 1;
		if (i && b <= last)
			rc = 1;
		last = b;
		if (rc == 0)
			top_bucket(g->out + i, j - i, b, addr, keep, idx, out, n);
	}
	free(keep);
	free(idx);
	if (rc > 0 && out) {
		out[0] = out[1] = bound_row(bucket_of(g, g->out[0].flow_start), addr);
		*n = 2;
		rc = 0;
	}
	if (rc)
		free(out);
	*rows = rc ? NULL : out;
	return rc;
}

/* Reads the columns rollups need of segment `seg` into c->rows, after
 * checking the segment whole: a rollup answers for its segment's rows,
 * so a damaged segment (which every scan skips) gets none, or queries
 * answered from rollups would count what queries of the rows do not.
 * Returns the row count, or -1 (logged; damaged: counted) when it cannot
 * be read. */
static long load_rows(build_ctx *c, const char *seg)
{
	char err[256];
	struct stat sb;
	if (ng_seg_open(&c->rd, seg, err, sizeof err)) {
		if (stat(seg, &sb) == 0) {
			ng_store_leave_damaged(c->st, "rollup", seg, err);
		}
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
	ng_colset need = ng_colset_minus(measures, ng_colset_of(NG_ROLLUP_FLOWS));
	for (unsigned s = 0; s < NG_ROLLUP_NSETS; s++)
		need = ng_colset_union(need, ng_rollup_sets[s].dims);
	/* the columns read below are checked by decoding them; the rest here */
	const ng_colset rest = ng_colset_minus(ng_colset_all(), need);
	if (ng_seg_check(&c->rd, &rest, err, sizeof err) ||
	    ng_seg_read_rows(&c->rd, need, c->rows, c->colbuf, err, sizeof err)) {
		ng_store_leave_damaged(c->st, "rollup", seg, err);
		ng_seg_close(&c->rd);
		return -1;
	}
	ng_seg_close(&c->rd);
	return (long)n;
}

/* Path of rollup (set, level) of `seg` into p[len]; false when the set
 * has no such level. */
static bool rollup_path(const char *seg, unsigned set, unsigned level, char *p, size_t len)
{
	char suf[32];
	return ng_rollup_suffix(set, level, suf, sizeof suf) == 0 &&
	       (size_t)snprintf(p, len, "%s%s", seg, suf) < len;
}

/* Writes rollup `set` from the groups of g: all of them, or a top
 * rollup's rows.  Returns 0 when written. */
static int write_set(build_ctx *c, const char *path, unsigned set, const grouper *g)
{
	if (!ng_rollup_sets[set].top)
		return write_rollup(c, path, set, g->out, g->n);
	ng_flow *rows;
	size_t n;
	if (top_rows(g, set, &rows, &n)) {
		ng_error("store: rollup: out of memory for %s", path);
		c->st->errors++;
		return -1;
	}
	int rc = write_rollup(c, path, set, rows, n);
	free(rows);
	return rc;
}

/* Writes the rollups of `set` that segment `seg` lacks, from its rows
 * (loaded on first need: *n == -2 until then).  The finest level is
 * summed from the rows, each coarser one from the level below it.
 * Returns true when it wrote one. */
static bool roll_set(build_ctx *c, const char *seg, unsigned set, long *n)
{
	bool missing[NG_ROLLUP_NLEVELS], any = false, wrote = false;
	char path[NG_ROLLUP_NLEVELS][4200];
	int finest = -1;
	for (unsigned l = 0; l < NG_ROLLUP_NLEVELS; l++) {
		struct stat st;
		missing[l] = false;
		if (!rollup_path(seg, set, l, path[l], sizeof path[l]))
			continue;
		finest = (int)l; /* levels go coarsest first */
		missing[l] = stat(path[l], &st) != 0;
		any |= missing[l];
	}
	if (!any)
		return false;
	if (*n == -2 && (*n = load_rows(c, seg)) < 0) {
		c->st->errors += errno != ENOENT;
		return false;
	}
	if (*n == 0)
		return false;
	/* from the finest level up: each from the one below */
	grouper below = {0};
	bool have_below = false;
	for (int l = finest; l >= 0; l--) {
		if (!(ng_rollup_sets[set].levels & 1u << l))
			continue;
		grouper g;
		if (grouper_init(&g, ng_rollup_sets[set].dims, ng_rollup_levels_ms[l]) ||
		    (have_below ? group_rows(&g, below.out, below.n, true)
		                : group_rows(&g, c->rows, (size_t)*n, false))) {
			ng_error("store: rollup: out of memory for %s", seg);
			c->st->errors++;
			grouper_free(&g);
			break;
		}
		if (missing[l] && write_set(c, path[l], set, &g) == 0)
			wrote = true;
		if (have_below)
			grouper_free(&below);
		below = g;
		have_below = true;
	}
	if (have_below)
		grouper_free(&below);
	return wrote;
}

/* Writes the rollups segment `seg` lacks. */
static void roll_segment(build_ctx *c, const char *seg)
{
	long n = -2;
	bool wrote = false;
	for (unsigned s = 0; s < NG_ROLLUP_NSETS && n != -1; s++)
		wrote |= roll_set(c, seg, s, &n);
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
		if (ng_tree_temporary(e->d_name) != NG_TMP_NONE || stat(sp, &st)) {
			snprintf(sp, sizeof sp, "%s/%s", path, e->d_name);
			unlink(sp);
		}
	}
	closedir(d);
}

static void note_missing(const char *path, void *arg)
{
	struct stat st;
	if (stat(path, &st))
		*(bool *)arg = true;
}

/* True when some rollup of segment `seg` is not written. */
static bool lacks_rollup(const char *seg)
{
	bool missing = false;
	each_rollup(seg, note_missing, &missing);
	return missing;
}

/* Whether entry i of hour directory `path` is a segment below
 * NG_COMPACT_SMALL_ROWS rows, read from its header on first need
 * (small[i]: -1 not known yet, else 0 or 1). */
static bool is_small(build_ctx *c, const char *path, const ng_dir_entry *v, signed char *small,
                     long i)
{
	if (small[i] < 0) {
		char sp[4200], err[256];
		snprintf(sp, sizeof sp, "%s/%s", path, v[i].name);
		small[i] = 0;
		if (ng_seg_open(&c->rd, sp, err, sizeof err) == 0) {
			small[i] = c->rd.h.rows < NG_COMPACT_SMALL_ROWS;
			ng_seg_close(&c->rd);
		}
	}
	return small[i];
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
	signed char *small = malloc(n > 0 ? (size_t)n : 1);
	if (!small) {
		free(v);
		return 0;
	}
	memset(small, -1, n > 0 ? (size_t)n : 1);
	for (long i = 0; i < n && !(c->limit && c->done >= c->limit); i++) {
		if (v[i].marker || v[i].replaced)
			continue;
		char sp[4200];
		snprintf(sp, sizeof sp, "%s/%s", path, v[i].name);
		if (!lacks_rollup(sp))
			continue; /* the common case once settled: no header read */
		/* a small segment beside another is about to be merged by
		 * compaction: its rollups would go with it */
		long prev = i - 1, next = i + 1;
		while (prev >= 0 && (v[prev].marker || v[prev].replaced))
			prev--;
		while (next < n && (v[next].marker || v[next].replaced))
			next++;
		if (!c->merging_too && is_small(c, path, v, small, i) &&
		    ((prev >= 0 && is_small(c, path, v, small, prev)) ||
		     (next < n && is_small(c, path, v, small, next))))
			continue;
		uint64_t before = c->st->segments_rolled;
		roll_segment(c, sp);
		c->done += c->st->segments_rolled > before;
	}
	free(small);
	free(v);
	return c->limit && c->done >= c->limit;
}

int ng_store_rollup(const char *dir, uint64_t now_ms, uint64_t settle_ms, unsigned max_segments,
                    bool merging_too, ng_store_maint_stats *st)
{
	char root[4096];
	ng_store_maint_stats local = {0};
	if (!st)
		st = &local;
	if (ng_tree_root(dir, root, sizeof root))
		return -1;
	build_ctx c = {.limit = max_segments,
	               .now = now_ms,
	               .settle = settle_ms,
	               .merging_too = merging_too,
	               .st = st};
	ng_seg_reader_init(&c.rd);
	c.rd.no_cache = true; /* framecache.h: background reads */
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
