/*
 * scan.c — reading a store: the segments overlapping a time range.
 *
 * A planner (the calling thread) walks the hour directories in time order
 * (tree.c).  For each hour it lists the segments, drops those a compacted
 * segment replaces, and opens every one in range before any is read: if
 * one vanished meanwhile (compaction or retention unlinked it), it lists
 * again, so a scan reads either the old segments or the compacted one,
 * never both and never neither.  The open descriptors then go to the
 * readers: the calling thread itself, in order (ng_scan_opts.fn), or a
 * pool of workers through a bounded queue (fn_par).  Unlinking an open
 * segment does not disturb its reader.
 *
 * The walk goes DIR/flows/YYYY/MM/DD/HH in time order and skips a whole
 * year, month, day or hour directory when its span misses [from, to): the
 * writer puts a segment in the hour directory of its rows' flow_start, and
 * every row of a segment lies in that hour (writer.c), so this is exact.
 * Within an hour, a file named <start>-<end>-<seq>.seg is skipped unopened
 * when [start, end] misses the range; otherwise its header is read and
 * checked again, then only the requested columns are decoded.  Rows are
 * sorted by flow_start, so the rows in range are one slice of each column.
 * With a select callback (a filter), a block's filter columns are decoded
 * first and its other columns only when some row passes (late
 * materialization): when few pass, only their values are decoded from
 * the block's byte planes (ng_seg_read_block_rows); otherwise the block
 * is decoded into one scratch block and the passing rows gathered from it.
 * A filter column that nothing after the filter reads (select_codes) and
 * that the segment stores RANK is given as dictionary codes: the filter
 * tests each distinct value once, and no row's value is materialized.
 */
#include "store/store.h"

#include <assert.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "core/log.h"
#include "store/segment.h"
#include "store/tree.h"

typedef struct dir_entry {
	uint64_t a, b, c; /* numeric parts: unit value, or start/end/seq of a file */
	char name[256];
} dir_entry;

#define QUEUE_CAP 64      /* segments opened ahead of the workers */
#define MAX_OPEN_HOUR 768 /* descriptors held for one hour; later ones open lazily */
#define LIST_TRIES 4
/* gather(): a block that keeps at most 1/FEW_ROWS of its rows has only
 * theirs decoded (picking a row's bytes from the planes costs several
 * times what a whole block's decode costs a row) */
#define FEW_ROWS 8

typedef struct job {
	int fd;        /* -1: open by path when run */
	uint64_t a, b; /* flow_start range from the name */
	uint64_t ord;  /* position in scan order (ng_column_batch.segment) */
	bool rollup;   /* fd is the segment's rollup (ng_scan_opts.rollup) */
	char path[4096];
} job;

typedef struct scan scan;

typedef struct worker {
	scan *s;
	unsigned idx;
	ng_seg_reader rd;
	void *col[NG_FIELD_COUNT];      /* one decoded block per column */
	void *gcol[NG_FIELD_COUNT];     /* select: the kept rows, gathered */
	uint32_t *sel, *pos;            /* select: kept rows' indexes in the batch, segment */
	void *scratch;                  /* select: one decoded block of any column */
	ng_batch_codes codes;           /* select: the columns given as codes */
	uint32_t *code[NG_FIELD_COUNT]; /* select: one block's codes of a column */
	ng_colset counted;              /* columns counted in bytes_read for this segment */
	uint64_t seg;                   /* ordinal of the segment being read */
	uint64_t prev;                  /* last flow_start seen in it (order check) */
	ng_colset cols;                 /* columns to decode: the scan's, and the
	                                 * flow counts when reading a rollup */
	bool rollup;                    /* the segment is read through its rollup */
	ng_scan_stats st;
	pthread_t th;
} worker;

struct scan {
	const ng_scan_opts *o;
	uint64_t from, to;
	ng_colset columns;
	ng_scan_stats st; /* the planner's counts */
	uint64_t nseg;    /* segments handed out so far (job.ord) */
	bool parallel;
	unsigned nw;
	worker *w;
	pthread_mutex_t mu;
	pthread_cond_t nonempty, nonfull;
	job *q; /* ring of QUEUE_CAP jobs */
	size_t qhead, qn;
	bool done;
	int rc; /* first non-zero callback value */
};

unsigned ng_store_scan_threads(unsigned n)
{
	if (!n) {
		const char *e = getenv("NG_SCAN_THREADS");
		long v = e ? strtol(e, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
		n = v > 0 ? (unsigned)(v > NG_SCAN_MAX_THREADS ? NG_SCAN_MAX_THREADS : v) : 1;
	}
	return n > NG_SCAN_MAX_THREADS ? NG_SCAN_MAX_THREADS : n;
}

static bool stopped(scan *s)
{
	return __atomic_load_n(&s->rc, __ATOMIC_RELAXED) != 0;
}

static void set_rc(scan *s, int rc)
{
	int zero = 0;
	__atomic_compare_exchange_n(&s->rc, &zero, rc, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

static void report(worker *w, const char *path, const char *why)
{
	w->st.errors++;
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

/* The IPv4 range of an address column, when every row is IPv4-mapped. */
static void v4_range(const ng_seg_column *c, ng_zone_map *z, size_t f)
{
	static const uint8_t pre[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	uint32_t mn, mx;
	if (c->type != NG_FT_ADDR || c->width != 16)
		return;
	if (c->encoding == NG_ENC_CONST && !memcmp(c->minmax, pre, 12)) {
		memcpy(&mn, c->minmax + 12, 4);
		mn = mx = __builtin_bswap32(mn);
	} else if (c->encoding == NG_ENC_V4 || c->encoding == NG_ENC_RANK) {
		memcpy(&mn, c->minmax, 4);
		memcpy(&mx, c->minmax + 4, 4);
		if (mx == 0) /* written before the range was kept */
			return;
	} else {
		return;
	}
	z->v4[f] = true;
	z->min[f] = mn;
	z->max[f] = mx;
}

/* The zone maps of the open segment (see store.h). */
static void zone_map(const ng_seg_reader *rd, ng_zone_map *z)
{
	z->rows = rd->h.rows;
	for (size_t f = 0; f < NG_FIELD_COUNT; f++) {
		const ng_field *fd = &ng_fields[f];
		int idx = rd->col_of_field[f];
		z->known[f] = z->v4[f] = false;
		z->min[f] = 0;
		z->max[f] = UINT64_MAX;
		if (fd->type == NG_FT_ADDR && idx >= 0)
			v4_range(&rd->h.cols[idx], z, f);
		if (fd->type > NG_FT_TIME)
			continue;
		if (idx < 0) { /* reads as zeros */
			z->known[f] = true;
			z->max[f] = 0;
			continue;
		}
		const ng_seg_column *c = &rd->h.cols[idx];
		if (c->type > NG_FT_TIME || c->width > fd->size)
			continue; /* zeros, or truncated: no bound */
		memcpy(&z->min[f], c->minmax, 8);
		memcpy(&z->max[f], c->minmax + 8, 8);
		z->known[f] = true;
	}
}

/* Counts column f's stored bytes in bytes_read when the segment first
 * uses it. */
static void count_col(worker *w, size_t f)
{
	if (ng_colset_has(w->counted, f))
		return;
	int idx = w->rd.col_of_field[f];
	ng_colset_add(&w->counted, f);
	if (idx >= 0)
		w->st.bytes_read += w->rd.h.cols[idx].stored;
}

/* After n values of field f were decoded into out: counts the column
 * (count_col) and, for flow_start, checks them to be in order (from the
 * last value seen in this segment).  Returns 0, or -1 (reported). */
static int decoded(worker *w, const char *path, size_t f, const void *out, size_t n)
{
	count_col(w, f);
	if (f != NG_F_FLOW_START)
		return 0;
	const uint64_t *start = out;
	for (size_t i = 0; i < n; i++) {
		if (start[i] < w->prev) {
			report(w, path, "rows not in flow_start order");
			return -1;
		}
		w->prev = start[i];
	}
	return 0;
}

/* Decodes block b of field f into out (w->col[f], or the scratch block).
 * flow_start is checked to be in order.  Returns 0, or -1 (reported) on
 * corrupt data. */
static int read_col(worker *w, const char *path, size_t b, size_t f, void *out)
{
	char err[256];
	if (ng_seg_read_block(&w->rd, &ng_fields[f], b, out, err, sizeof err)) {
		report(w, path, err);
		return -1;
	}
	return decoded(w, path, f, out, ng_seg_block_rows(&w->rd, b));
}

/* Decodes the columns of `want` that *have lacks into the worker's block
 * buffers.  Returns 0 or -1 (reported). */
static int read_cols(worker *w, const char *path, size_t b, ng_colset want, ng_colset *have)
{
	const ng_colset need = ng_colset_minus(want, *have);
	ng_colset left = need;
	for (int f; (f = ng_colset_pop(&left)) >= 0;) {
		if (read_col(w, path, b, f, w->col[f]))
			return -1;
		ng_colset_add(have, f);
	}
	return 0;
}

/* Of the columns `want` (ng_scan_opts.select_codes), reads as codes those
 * the segment stores RANK, into w->codes; sets their bits in *coded.  The
 * others are left to be read as values.  Returns 0 or -1 (reported). */
static int read_codes(worker *w, const char *path, size_t b, ng_colset want, ng_colset *coded)
{
	char err[256];
	for (size_t f = 0; f < NG_FIELD_COUNT; f++) {
		w->codes.code[f] = NULL;
		if (!ng_colset_has(want, f))
			continue;
		if (!w->code[f] && !(w->code[f] = malloc(NG_SEG_BLOCK_ROWS * 4))) {
			report(w, path, "out of memory");
			return -1;
		}
		const void *values;
		uint32_t k;
		uint64_t stamp;
		int rc = ng_seg_read_block_codes(&w->rd, &ng_fields[f], b, w->code[f], &values, &k,
		                                 &stamp, err, sizeof err);
		if (rc < 0) {
			report(w, path, err);
			return -1;
		}
		if (rc == 0)
			continue;
		count_col(w, f);
		w->codes.code[f] = w->code[f];
		w->codes.dict[f] = values;
		w->codes.k[f] = k;
		w->codes.stamp[f] = stamp;
		ng_colset_add(coded, f);
	}
	return 0;
}

/* Points batch at rows [lo, ...) of the decoded columns in `cols`. */
static void point_batch(worker *w, ng_column_batch *batch, ng_colset cols, size_t lo)
{
	ng_colset left = cols;
	for (int f; (f = ng_colset_pop(&left)) >= 0;)
		batch->col[f] = (const uint8_t *)w->col[f] + lo * ng_fields[f].size;
}

/* out[m] = in[sel[m]] for m < k, values of sz bytes. */
static void pick(uint8_t *out, const uint8_t *in, const uint32_t *sel, size_t k, size_t sz)
{
	switch (sz) { /* constant sizes: the copies compile to single moves */
	case 1:
		for (size_t m = 0; m < k; m++)
			out[m] = in[sel[m]];
		break;
	case 2:
		for (size_t m = 0; m < k; m++)
			memcpy(out + m * 2, in + (size_t)sel[m] * 2, 2);
		break;
	case 4:
		for (size_t m = 0; m < k; m++)
			memcpy(out + m * 4, in + (size_t)sel[m] * 4, 4);
		break;
	case 8:
		for (size_t m = 0; m < k; m++)
			memcpy(out + m * 8, in + (size_t)sel[m] * 8, 8);
		break;
	case 16:
		for (size_t m = 0; m < k; m++)
			memcpy(out + m * 16, in + (size_t)sel[m] * 16, 16);
		break;
	default:
		for (size_t m = 0; m < k; m++)
			memcpy(out + m * sz, in + (size_t)sel[m] * sz, sz);
	}
}

/* Rows lo + w->sel[0..k) of block b of field f, decoded straight into
 * its gather buffer.  flow_start's kept rows are checked to be in order,
 * as read_col checks a whole block's: they are the rows delivered (a
 * block is sliced by time only after a whole decode, which read_col
 * checks).  Returns 0 or -1 (reported). */
static int read_rows(worker *w, const char *path, size_t b, size_t f, size_t lo, size_t k)
{
	char err[256];
	if (ng_seg_read_block_rows(&w->rd, &ng_fields[f], b, lo, w->sel, k, w->gcol[f], err,
	                           sizeof err)) {
		report(w, path, err);
		return -1;
	}
	return decoded(w, path, f, w->gcol[f], k);
}

/* The kept rows sel[0..k) of block b (rows [lo, ...) are the batch's) of
 * each column of `cols` into the worker's gather buffers, the batch
 * pointed at them.  A column not decoded yet: when few rows are kept
 * (≤ 1/FEW_ROWS of the block), only theirs are decoded, picked from the
 * block's byte planes (flow_start, a DELTA column, is decoded whole but
 * not copied); otherwise the block is decoded into one scratch block,
 * reused for every column, and the rows picked from it.
 * Returns 0 or -1 (reported). */
static int gather(worker *w, const char *path, size_t b, size_t lo, ng_column_batch *batch,
                  ng_colset cols, ng_colset have, size_t k)
{
	const uint32_t *sel = w->sel;
	const bool few = k <= ng_seg_block_rows(&w->rd, b) / FEW_ROWS;
	ng_colset left = cols;
	for (int f; (f = ng_colset_pop(&left)) >= 0;) {
		const size_t sz = ng_fields[f].size;
		const uint8_t *in = w->col[f];
		batch->col[f] = w->gcol[f];
		if (!ng_colset_has(have, f) && few) {
			if (read_rows(w, path, b, f, lo, k))
				return -1;
			continue;
		}
		if (!ng_colset_has(have, f)) {
			if (read_col(w, path, b, f, w->scratch))
				return -1;
			in = w->scratch;
		}
		pick(w->gcol[f], in + lo * sz, sel, k, sz);
	}
	for (size_t m = 0; m < k; m++)
		w->pos[m] = (uint32_t)(batch->row0 + sel[m]);
	batch->pos = w->pos;
	batch->n = k;
	return 0;
}

/* Passes the batch on, with the rows' flow counts when from a rollup. */
static int deliver(worker *w, ng_column_batch *batch)
{
	scan *s = w->s;
	batch->flows = w->rollup ? batch->col[NG_ROLLUP_FLOWS] : NULL;
	if (s->parallel)
		return s->o->fn_par(batch, w->idx, s->o->arg);
	return s->o->fn(batch, s->o->arg);
}

/* Rows [lo, hi) of block b are in the time range (the columns in *have
 * are decoded already).  Without select: decodes the requested columns
 * and passes the rows on.  With select: decodes the select columns, asks
 * which rows to keep, and only when some are decodes the other columns
 * and passes the kept rows on (late materialization: a rare filter reads
 * little more than its own columns). */
static int scan_block(worker *w, const char *path, size_t b, size_t lo, size_t hi, ng_colset *have,
                      bool *bad)
{
	scan *s = w->s;
	const ng_colset cols = w->cols;
	ng_column_batch batch = {
	    .n = hi - lo, .segment = w->seg, .row0 = (uint64_t)b * NG_SEG_BLOCK_ROWS + lo};
	w->st.rows_scanned += batch.n;
	w->st.blocks_scanned++;
	size_t k = batch.n;
	if (s->o->select) {
		const ng_colset sc = s->o->select_columns;
		const ng_colset codes = s->o->select_codes;
		ng_colset coded = {{0}};
		if ((!ng_colset_empty(codes) &&
		     read_codes(w, path, b, ng_colset_minus(ng_colset_intersect(codes, sc), *have),
		                &coded)) ||
		    read_cols(w, path, b, ng_colset_minus(sc, coded), have)) {
			*bad = true;
			return 0;
		}
		point_batch(w, &batch, ng_colset_minus(sc, coded), lo);
		if (!ng_colset_empty(coded)) {
			ng_colset left = coded;
			for (int f; (f = ng_colset_pop(&left)) >= 0;)
				w->codes.code[f] += lo;
			batch.codes = &w->codes;
			w->st.blocks_coded++;
		}
		int rc = s->o->select(&batch, s->parallel ? w->idx : 0, s->o->arg, w->sel, &k);
		batch.codes = NULL; /* fn gets values only */
		if (rc || k == 0)
			return rc;
	}
	w->st.blocks_decoded++;
	if (k < batch.n) {
		if (gather(w, path, b, lo, &batch, cols, *have, k)) {
			*bad = true;
			return 0;
		}
		return deliver(w, &batch);
	}
	if (read_cols(w, path, b, cols, have)) {
		*bad = true;
		return 0;
	}
	point_batch(w, &batch, cols, lo);
	return deliver(w, &batch);
}

/* The worker's block buffers for the columns of `cols` (and the gather
 * buffers when selecting).  Returns false when out of memory. */
static bool alloc_buffers(worker *w, ng_colset cols, bool select)
{
	ng_colset left = cols;
	for (int f; (f = ng_colset_pop(&left)) >= 0;) {
		size_t sz = NG_SEG_BLOCK_ROWS * ng_fields[f].size;
		if (!w->col[f] && !(w->col[f] = malloc(sz)))
			return false;
		if (select && !w->gcol[f] && !(w->gcol[f] = malloc(sz)))
			return false;
	}
	if (select && !w->sel) {
		w->sel = malloc(NG_SEG_BLOCK_ROWS * sizeof *w->sel);
		w->pos = malloc(NG_SEG_BLOCK_ROWS * sizeof *w->pos);
		size_t widest = 0;
		for (size_t f = 0; f < NG_FIELD_COUNT; f++)
			widest = ng_fields[f].size > widest ? ng_fields[f].size : widest;
		w->scratch = malloc(NG_SEG_BLOCK_ROWS * widest);
	}
	return !select || (w->sel && w->pos && w->scratch);
}

/* Reads the rows of one open segment block by block (the columns of a
 * block stay in cache while the callback works on them).  flow_start is
 * sorted, so the rows in range are one slice of each block, and a block
 * wholly after the range ends the segment.  A segment wholly inside the
 * range needs no flow_start to find them: with select it is decoded only
 * for the blocks that keep a row. */
static int read_segment(worker *w, const char *path)
{
	scan *s = w->s;
	const ng_seg_header *h = &w->rd.h;
	if (h->rows == 0 || h->start_max < s->from || h->start_min >= s->to) {
		w->st.segments_skipped++;
		return 0;
	}
	if (s->o->may_match) {
		ng_zone_map z;
		zone_map(&w->rd, &z);
		if (!s->o->may_match(&z, s->o->arg)) {
			w->st.segments_skipped++;
			w->st.segments_pruned++;
			return 0;
		}
	}
	const bool select = s->o->select != NULL;
	if (!alloc_buffers(w, select ? ng_colset_union(w->cols, s->o->select_columns) : w->cols,
	                   select)) {
		report(w, path, "out of memory");
		return 0;
	}
	w->st.bytes_read += h->header_size;
	w->counted = (ng_colset){{0}};
	w->prev = 0;
	const bool inside = h->start_min >= s->from && h->start_max < s->to;
	const size_t nb = ng_seg_blocks(&w->rd);
	const uint64_t *start = w->col[NG_F_FLOW_START];
	int rc = 0;
	bool bad = false;
	for (size_t b = 0; b < nb && rc == 0 && !bad && !stopped(s); b++) {
		size_t n = ng_seg_block_rows(&w->rd, b), lo = 0, hi = n;
		ng_colset have = {{0}};
		if (!inside || !select) {
			if (read_col(w, path, b, NG_F_FLOW_START, w->col[NG_F_FLOW_START])) {
				bad = true;
				break;
			}
			have = ng_colset_of(NG_F_FLOW_START);
			if (start[0] >= s->to)
				break;
			lo = lower_bound(start, n, s->from);
			hi = lower_bound(start, n, s->to);
		}
		if (lo < hi)
			rc = scan_block(w, path, b, lo, hi, &have, &bad);
	}
	if (!bad) {
		w->st.segments_read++;
		w->st.segments_rollup += w->rollup;
	}
	return rc;
}

/* Opens segment `path`, or its rollup when the scan reads rollups and it
 * has one (*rollup set then).  Returns the descriptor or -1 (errno). */
static int open_job(const scan *s, const char *path, bool *rollup)
{
	*rollup = false;
	if (s->o->rollup) {
		char rp[4200];
		if ((size_t)snprintf(rp, sizeof rp, "%s%s", path, s->o->rollup) < sizeof rp) {
			int fd = open(rp, O_RDONLY | O_CLOEXEC);
			if (fd >= 0) {
				*rollup = true;
				return fd;
			}
		}
	}
	return open(path, O_RDONLY | O_CLOEXEC);
}

/* Runs one job on worker w: open (a descriptor already held, or the path),
 * check, read.  A segment that vanished before it was opened (retention)
 * is skipped silently. */
static int run_job(worker *w, job *j)
{
	scan *s = w->s;
	char err[256];
	if (!s->parallel && s->o->want &&
	    !s->o->want(&(ng_segment_info){j->path, j->a, j->b}, s->o->arg)) {
		if (j->fd >= 0)
			close(j->fd);
		w->st.segments_skipped++;
		return 0;
	}
	int fd = j->fd;
	bool rollup = j->rollup;
	if (fd < 0)
		fd = open_job(s, j->path, &rollup);
	if (fd < 0) {
		if (errno != ENOENT)
			report(w, j->path, strerror(errno));
		return 0;
	}
	if (ng_seg_open_fd(&w->rd, fd, err, sizeof err)) {
		report(w, j->path, err);
		return 0;
	}
	w->seg = j->ord;
	w->rollup = rollup;
	w->cols = rollup ? ng_colset_union(s->columns, ng_colset_of(NG_ROLLUP_FLOWS)) : s->columns;
	int rc = read_segment(w, j->path);
	ng_seg_close(&w->rd);
	return rc;
}

static void *worker_main(void *arg)
{
	worker *w = arg;
	scan *s = w->s;
	job j;
	for (;;) {
		pthread_mutex_lock(&s->mu);
		while (!s->qn && !s->done)
			pthread_cond_wait(&s->nonempty, &s->mu);
		if (!s->qn) {
			pthread_mutex_unlock(&s->mu);
			return NULL;
		}
		j = s->q[s->qhead];
		s->qhead = (s->qhead + 1) % QUEUE_CAP;
		s->qn--;
		pthread_cond_signal(&s->nonfull);
		pthread_mutex_unlock(&s->mu);
		if (stopped(s)) {
			if (j.fd >= 0)
				close(j.fd);
			continue;
		}
		int rc = run_job(w, &j);
		if (rc)
			set_rc(s, rc);
	}
}

/* Hands a job to the workers (parallel) or runs it here (serial). */
static int submit(scan *s, const job *j)
{
	if (!s->parallel) {
		job copy = *j;
		return stopped(s) ? (copy.fd >= 0 ? close(copy.fd) : 0, 0)
		                  : run_job(&s->w[0], &copy);
	}
	pthread_mutex_lock(&s->mu);
	while (s->qn == QUEUE_CAP)
		pthread_cond_wait(&s->nonfull, &s->mu);
	s->q[(s->qhead + s->qn) % QUEUE_CAP] = *j;
	s->qn++;
	pthread_cond_signal(&s->nonempty);
	pthread_mutex_unlock(&s->mu);
	return 0;
}

/* Lists an hour directory and opens the segments in range: all of them,
 * or none when one vanished (the listing is then repeated).  jobs[] gets
 * *njobs entries; counts go to the planner's stats. */
static int plan_hour(scan *s, const char *path, job **jobs, size_t *njobs)
{
	ng_dir_entry *v = NULL;
	for (int attempt = 0;; attempt++) {
		free(v);
		v = NULL;
		long n = ng_tree_list(path, 4, &v);
		if (n < 0)
			return 0; /* vanished: nothing there */
		job *jv = realloc(*jobs, ((size_t)n + 1) * sizeof *jv);
		if (!jv) {
			free(v);
			return -1;
		}
		*jobs = jv;
		size_t nj = 0, total = 0, skipped = 0, replaced = 0;
		bool vanished = false;
		for (long i = 0; i < n; i++) {
			const ng_dir_entry *e = &v[i];
			if (e->marker)
				continue;
			if (e->replaced) {
				replaced++;
				continue;
			}
			total++;
			if (e->b < s->from || e->a >= s->to || e->a > e->b) {
				skipped++;
				continue;
			}
			job *j = &jv[nj];
			if ((size_t)snprintf(j->path, sizeof j->path, "%s/%s", path, e->name) >=
			    sizeof j->path)
				continue;
			j->a = e->a;
			j->b = e->b;
			j->fd = -1;
			j->rollup = false;
			if (nj < MAX_OPEN_HOUR) {
				j->fd = open_job(s, j->path, &j->rollup);
				if (j->fd < 0 && errno == ENOENT) {
					vanished = true;
					if (attempt + 1 < LIST_TRIES)
						break;
					continue; /* still vanishing: skip it */
				}
			}
			nj++;
		}
		if (vanished && attempt + 1 < LIST_TRIES) {
			for (size_t k = 0; k < nj; k++)
				if (jv[k].fd >= 0)
					close(jv[k].fd);
			continue;
		}
		s->st.segments_total += total;
		s->st.segments_skipped += skipped;
		s->st.segments_replaced += replaced;
		*njobs = nj;
		free(v);
		return 0;
	}
}

typedef struct hour_arg {
	scan *s;
	job *jobs;
} hour_arg;

static int on_hour(const char *path, uint64_t t0, uint64_t t1, void *arg)
{
	hour_arg *h = arg;
	scan *s = h->s;
	(void)t0;
	(void)t1;
	size_t nj = 0;
	if (stopped(s))
		return 1;
	if (plan_hour(s, path, &h->jobs, &nj)) {
		s->st.errors++;
		ng_warn("store: out of memory listing %s", path);
		return 0;
	}
	for (size_t k = 0; k < nj; k++) {
		h->jobs[k].ord = s->nseg++;
		int rc = submit(s, &h->jobs[k]);
		if (rc)
			set_rc(s, rc);
	}
	return 0;
}

void ng_scan_stats_add(ng_scan_stats *a, const ng_scan_stats *b)
{
	a->segments_total += b->segments_total;
	a->segments_skipped += b->segments_skipped;
	a->segments_read += b->segments_read;
	a->rows_scanned += b->rows_scanned;
	a->bytes_read += b->bytes_read;
	a->errors += b->errors;
	a->segments_pruned += b->segments_pruned;
	a->segments_replaced += b->segments_replaced;
	a->blocks_scanned += b->blocks_scanned;
	a->blocks_decoded += b->blocks_decoded;
	a->segments_rollup += b->segments_rollup;
	a->blocks_coded += b->blocks_coded;
	a->threads = b->threads > a->threads ? b->threads : a->threads;
}

int ng_store_scan_opts(const char *dir, const ng_scan_opts *o, ng_scan_stats *st)
{
	assert(ng_colset_subset(ng_colset_union(o->columns, o->select_columns), ng_colset_all()) &&
	       ng_colset_subset(o->select_codes, o->select_columns));
	ng_scan_stats local;
	if (!st)
		st = &local;
	memset(st, 0, sizeof *st);
	char path[4096];
	struct stat sb;
	if ((size_t)snprintf(path, sizeof path, "%s/flows", dir) >= sizeof path ||
	    stat(path, &sb) || !S_ISDIR(sb.st_mode))
		return -1;
	scan s = {.o = o, .from = o->from_ms, .to = o->to_ms};
	s.columns = ng_colset_union(o->columns, ng_colset_of(NG_F_FLOW_START));
	if (o->select)
		s.columns =
		    ng_colset_union(s.columns, ng_colset_minus(o->select_columns, o->select_codes));
	s.parallel = o->fn_par && !o->fn && !o->want;
	s.nw = s.parallel ? ng_store_scan_threads(o->threads) : 1;
	s.w = calloc(s.nw, sizeof *s.w);
	s.q = s.parallel ? calloc(QUEUE_CAP, sizeof *s.q) : NULL;
	if (!s.w || (s.parallel && !s.q)) {
		free(s.w);
		free(s.q);
		return -1;
	}
	pthread_mutex_init(&s.mu, NULL);
	pthread_cond_init(&s.nonempty, NULL);
	pthread_cond_init(&s.nonfull, NULL);
	unsigned started = 0;
	for (unsigned i = 0; i < s.nw; i++) {
		s.w[i].s = &s;
		s.w[i].idx = i;
		ng_seg_reader_init(&s.w[i].rd);
	}
	if (s.parallel)
		for (; started < s.nw; started++)
			if (pthread_create(&s.w[started].th, NULL, worker_main, &s.w[started]))
				break;
	if (s.parallel && !started) {
		/* no thread: run the jobs here, as worker 0 */
		s.parallel = false;
		s.nw = 1;
	}
	hour_arg h = {&s, NULL};
	ng_tree_hours(path, s.from, s.to, on_hour, &h);
	free(h.jobs);
	if (s.parallel) {
		pthread_mutex_lock(&s.mu);
		s.done = true;
		pthread_cond_broadcast(&s.nonempty);
		pthread_mutex_unlock(&s.mu);
		for (unsigned i = 0; i < started; i++)
			pthread_join(s.w[i].th, NULL);
	}
	*st = s.st;
	for (unsigned i = 0; i < s.nw; i++) {
		ng_scan_stats_add(st, &s.w[i].st);
		ng_seg_reader_free(&s.w[i].rd);
		for (size_t f = 0; f < NG_FIELD_COUNT; f++) {
			free(s.w[i].col[f]);
			free(s.w[i].gcol[f]);
			free(s.w[i].code[f]);
		}
		free(s.w[i].sel);
		free(s.w[i].pos);
		free(s.w[i].scratch);
	}
	st->threads = s.parallel ? started : 1;
	pthread_mutex_destroy(&s.mu);
	pthread_cond_destroy(&s.nonempty);
	pthread_cond_destroy(&s.nonfull);
	free(s.w);
	free(s.q);
	return s.rc;
}

int ng_store_scan(const char *dir, uint64_t from_ms, uint64_t to_ms, ng_colset columns,
                  int (*fn)(const ng_column_batch *b, void *arg), void *arg, ng_scan_stats *st)
{
	ng_scan_opts o = {
	    .from_ms = from_ms, .to_ms = to_ms, .columns = columns, .fn = fn, .arg = arg};
	return ng_store_scan_opts(dir, &o, st);
}
