/*
 * scan.c — reading a store: the segments overlapping a time range.
 *
 * A planner (the calling thread) walks the segments of a snapshot in
 * time order (snapshot.c: the hour directories listed once, every segment
 * in range held open, so a scan reads either the old segments or the
 * compacted one, never both and never neither; the scan takes its own
 * when not given one).  Each segment then goes to a reader: the calling
 * thread itself, in order (ng_scan_opts.fn), or a pool of workers through
 * a bounded queue (fn_par), which read through a dup of the snapshot's
 * descriptor.  Unlinking an open segment does not disturb its reader.
 *
 * Damaged data counts for nothing, decided per segment, never per block:
 * nothing of a segment is passed on before all of it that the scan
 * decodes has decoded whole (read_segment).  Its header and every
 * column's frame table are checked first (segment_check.c; a few bytes a
 * column), then its blocks are read into buffers of their own and the
 * batches kept, and passed on only once the last block read whole; a
 * block that fails makes the segment damaged, skipped with all its rows,
 * reported once per snapshot and remembered there, so every later scan
 * of the command skips it too.  (Before, a frame failing in the second
 * block came after the first block's 16 384 rows were counted.)
 * Columns the scan does not decode are judged by the segment's verdict
 * (verdict.c, its hour's `checked` file, matched against an fstat of the
 * file): "ok" skips them, "damaged" skips the segment unread, and a
 * segment with no verdict for this version of its file is checked whole
 * (every column) first and its verdict recorded, so every shape skips
 * the same damaged segments; NG_SEGMENT_CHECK=all checks every segment
 * whole whatever its verdict (docs/security.md: the costs).  A segment
 * read through its rollup is judged the same way before the rollup is
 * read, and a damaged rollup is passed over for the segment's rows,
 * which give the same answer.
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

#include "core/bigmem.h"
#include "core/log.h"
#include "store/segment.h"
#include "store/snapshot.h"
#include "store/verdict.h"

#define QUEUE_CAP 64 /* segments queued ahead of the workers */
/* gather(): a block that keeps at most 1/FEW_ROWS of its rows has only
 * theirs decoded (picking a row's bytes from the planes costs several
 * times what a whole block's decode costs a row) */
#define FEW_ROWS 8
/* A segment of at most this many blocks (2^20 rows: compaction's largest)
 * is read into blocks of its own before any row of it is passed on
 * (read_segment), within BUFFER_BYTES of decoded blocks a worker. */
#define MAX_BUFFERED_BLOCKS 64
#define BUFFER_BYTES ((size_t)64 << 20)
/* Decoded blocks (col_buf) are cut, in the order they are first needed,
 * from one region a worker of ARENA_BYTES on huge pages (core/bigmem.h):
 * a segment buffered whole gives each of its blocks buffers of its own,
 * megabytes that the scan's first segment touches for the first time,
 * and with malloc that was a page fault every 4 KiB (a listing of 1000
 * flows from two 2^18-row segments: 4 600 faults, 10 of its 70 ms CPU).
 * Blocks past the region are malloc'd.  Under ASan the region is
 * poisoned but for the blocks cut, with a gap between them. */
#define ARENA_BYTES BUFFER_BYTES
#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/asan_interface.h>
#define ARENA_GAP 64
#else
#define ASAN_POISON_MEMORY_REGION(p, n) ((void)(p), (void)(n))
#define ASAN_UNPOISON_MEMORY_REGION(p, n) ((void)(p), (void)(n))
#define ARENA_GAP 0
#endif

typedef struct job {
	uint64_t a, b; /* flow_start range from the name */
	uint64_t ord;  /* position in scan order (ng_column_batch.segment) */
	size_t idx;    /* the segment in the snapshot */
} job;

typedef struct scan scan;

typedef struct worker {
	scan *s;
	unsigned idx;
	ng_seg_reader rd;
	void *col[NG_FIELD_COUNT];  /* the block being read, per column */
	void *gcol[NG_FIELD_COUNT]; /* select: its kept rows, gathered */
	uint32_t *sel, *pos;        /* select: kept rows' indexes in the batch, segment */
	/* the blocks col, gcol and pos point into: one per block of the
	 * segment while buffering, else [0] for every block; kept for the
	 * next segment, held bytes counted against BUFFER_BYTES */
	void *colb[NG_FIELD_COUNT][MAX_BUFFERED_BLOCKS];
	void *gcolb[NG_FIELD_COUNT][MAX_BUFFERED_BLOCKS];
	uint32_t *posb[MAX_BUFFERED_BLOCKS];
	size_t gcap[NG_FIELD_COUNT][MAX_BUFFERED_BLOCKS]; /* rows gcolb holds room for */
	size_t pcap[MAX_BUFFERED_BLOCKS];                 /* and posb */
	size_t held;
	uint8_t *arena; /* ARENA_BYTES, made on first use, or NULL */
	size_t arena_used;
	bool no_arena;  /* it could not be made: blocks are malloc'd */
	bool buffering; /* batches are kept in pend[] until the segment is read */
	bool over;      /* buffering would pass BUFFER_BYTES */
	ng_column_batch pend[MAX_BUFFERED_BLOCKS];
	size_t npend;
	void *scratch;                  /* select: one decoded block of any column */
	ng_batch_codes codes;           /* select: the columns given as codes */
	uint32_t *code[NG_FIELD_COUNT]; /* select: one block's codes of a column */
	ng_colset counted;              /* columns counted in bytes_read for this segment */
	uint64_t seg;                   /* ordinal of the segment being read */
	ng_snap_seg *cur;               /* and its entry in the snapshot */
	uint64_t prev;                  /* last flow_start seen in it (order check) */
	ng_colset cols;                 /* columns to decode: the scan's, and the
	                                 * flow counts when reading a rollup */
	ng_colset check;                /* cols and select's: checked when not buffering */
	bool rollup;                    /* the segment is read through its rollup */
	struct stat segst;              /* fstat of the segment being read (cur) */
	bool have_st;                   /* segst is of it */
	int verdict;                    /* what its `checked` file says of it (verdict.c) */
	ng_scan_stats st;
	pthread_t th;
} worker;

struct scan {
	const ng_scan_opts *o;
	uint64_t from, to;
	ng_colset columns;
	ng_scan_stats st; /* the planner's counts */
	ng_store_snapshot *snap;
	uint64_t nseg; /* segments handed out so far (job.ord) */
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

/* Segment `path` cannot be read (not a fault of its bytes: out of
 * memory, an open error): counted, reported, skipped. */
static void unreadable(worker *w, const char *path, const char *why)
{
	w->st.errors++;
	ng_warn("store: skipping segment %s: %s", path, why);
}

static void damaged(worker *w, ng_snap_seg *e, const char *why);

/* What the segment (or rollup) being read holds is damaged (`why`):
 * counted and reported as damaged() says, or, for a rollup, counted and
 * reported as such (its segment's rows are read instead). */
static void report(worker *w, const char *path, const char *why)
{
	if (w->rollup) {
		w->st.rollups_damaged++;
		ng_warn("store: damaged rollup %s: %s (its segment's rows are read instead)", path,
		        why);
	} else if (w->cur) {
		damaged(w, w->cur, why);
	} else {
		unreadable(w, path, why);
	}
}

/* Segment e (w->cur) is damaged (`why`): counted, and reported when
 * this is the first scan of its snapshot to find it and the process has
 * not reported it before (damaged.c: a server's every request skips it
 * again).  The first scan of its snapshot to find it also records it
 * "damaged" in its hour's `checked` file, unless that said so. */
static void damaged(worker *w, ng_snap_seg *e, const char *why)
{
	w->st.errors++;
	w->st.segments_damaged++;
	if (!ng_snap_mark_damaged(e, why))
		return;
	if (ng_store_damaged_note(e->path))
		ng_warn("store: skipping damaged segment %s: %s (none of its rows is counted; "
		        "`nagare fsck` moves it aside)",
		        e->path, why);
	if (w->have_st && w->verdict != NG_VERDICT_DAMAGED)
		ng_verdict_record(e->path, &w->segst, NG_VERDICT_DAMAGED);
}

/* NG_SEGMENT_CHECK=all: every segment is checked whole (every block of
 * every column, ng_seg_check) before it is read, once per snapshot,
 * whatever its `checked` file says (verdicts are still recorded).  By
 * default only a segment with no verdict for its file is (once: then
 * "ok" or "damaged" is recorded, verdict.c), so that damage in a column
 * a query does not read takes the segment out of every query; "all"
 * costs a decode of every column on every command: 3.7x the query time
 * on the benchmark store (docs/security.md). */
static bool check_all(void)
{
	const char *e = getenv("NG_SEGMENT_CHECK"); /* once a segment: nothing beside it */
	return e && !strcmp(e, "all");
}

/* Before any block of the open segment (or rollup) is read: a segment
 * recorded "ok" for this version of its file, and a rollup, have their
 * frame tables checked (every column: a few bytes each); any other
 * segment (no verdict, or check_all()) is checked whole, once per
 * snapshot, and the verdict recorded.  False (counted, reported,
 * recorded) when damaged. */
static bool checked_first(worker *w, const char *path)
{
	char err[256];
	ng_snap_seg *e = w->rollup ? NULL : w->cur;
	if (e && atomic_load(&e->state) == NG_SNAP_WHOLE)
		return true;
	const bool whole = e && (w->verdict != NG_VERDICT_OK || check_all());
	if ((whole ? ng_seg_check(&w->rd, NULL, err, sizeof err)
	           : ng_seg_check_frames(&w->rd, err, sizeof err))) {
		report(w, path, err);
		return false;
	}
	if (whole) {
		atomic_store(&e->state, NG_SNAP_WHOLE);
		if (w->have_st && w->verdict != NG_VERDICT_OK)
			ng_verdict_record(e->path, &w->segst, NG_VERDICT_OK);
	}
	return true;
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

/* A block of `bytes` cut from the worker's region (ARENA_BYTES), or
 * malloc'd when the region is full or cannot be made.  NULL when out of
 * memory.  free_blocks gives them back. */
static void *cut_block(worker *w, size_t bytes)
{
	if (!w->arena && !w->no_arena) {
		if ((w->arena = ng_alloc_big(ARENA_BYTES)))
			ASAN_POISON_MEMORY_REGION(w->arena, ARENA_BYTES);
		else
			w->no_arena = true;
	}
	if (!w->arena || ARENA_BYTES - w->arena_used < bytes + ARENA_GAP)
		return malloc(bytes);
	void *p = w->arena + w->arena_used;
	w->arena_used += bytes + ARENA_GAP;
	ASAN_UNPOISON_MEMORY_REGION(p, bytes);
	return p;
}

/* True when block p was cut from w's region. */
static bool in_arena(const worker *w, const void *p)
{
	const uintptr_t a = (uintptr_t)w->arena, q = (uintptr_t)p;
	return w->arena && q >= a && q < a + ARENA_BYTES;
}

/* Frees the worker's decoded blocks and their region. */
static void free_blocks(worker *w)
{
	for (size_t f = 0; f < NG_FIELD_COUNT; f++)
		for (size_t b = 0; b < MAX_BUFFERED_BLOCKS; b++)
			if (!in_arena(w, w->colb[f][b]))
				free(w->colb[f][b]);
	if (w->arena)
		ASAN_UNPOISON_MEMORY_REGION(w->arena, ARENA_BYTES);
	free(w->arena);
}

/* *slot, a block of `bytes` made when absent (cut_block); NULL when out
 * of memory or, buffering, when it would pass BUFFER_BYTES (w->over
 * set). */
static void *block_of(worker *w, void **slot, size_t bytes)
{
	if (*slot)
		return *slot;
	if (w->buffering && w->held + bytes > BUFFER_BYTES) {
		w->over = true;
		return NULL;
	}
	if ((*slot = cut_block(w, bytes)))
		w->held += bytes;
	return *slot;
}

/* *slot holding room for `rows` values of `size` bytes (*cap rows now),
 * grown when short; NULL when out of memory or, buffering, when it would
 * pass BUFFER_BYTES (w->over set). */
static void *rows_of(worker *w, void **slot, size_t *cap, size_t rows, size_t size)
{
	if (*slot && *cap >= rows)
		return *slot;
	if (w->buffering && w->held + (rows - *cap) * size > BUFFER_BYTES) {
		w->over = true;
		return NULL;
	}
	void *p = realloc(*slot, rows * size);
	if (!p)
		return NULL;
	w->held += (rows - *cap) * size;
	*cap = rows;
	return *slot = p;
}

/* The buffer of block b of field f, made on first use, and w->col[f]
 * pointed at it: while buffering each block has its own, else one serves
 * every block.  Only what a block decodes gets one, so late
 * materialization keeps its savings in memory too.  NULL when out of
 * memory or, buffering, of BUFFER_BYTES. */
static void *col_buf(worker *w, size_t f, size_t b)
{
	const size_t k = w->buffering ? b : 0;
	return w->col[f] = block_of(w, &w->colb[f][k], NG_SEG_BLOCK_ROWS * ng_fields[f].size);
}

/* The buffer of the n kept rows of block b of field f (select), as
 * col_buf, sized to them: w->gcol[f]. */
static void *kept_buf(worker *w, size_t f, size_t b, size_t n)
{
	const size_t k = w->buffering ? b : 0;
	return w->gcol[f] = rows_of(w, &w->gcolb[f][k], &w->gcap[f][k], n, ng_fields[f].size);
}

/* The n kept rows' positions of block b (select), as kept_buf. */
static uint32_t *pos_buf(worker *w, size_t b, size_t n)
{
	const size_t k = w->buffering ? b : 0;
	return w->pos = rows_of(w, (void **)&w->posb[k], &w->pcap[k], n, 4);
}

/* Decodes block b of field f into out (w->col[f], or the scratch block).
 * flow_start is checked to be in order.  Returns 0, or -1 (reported) on
 * corrupt data. */
static int read_col(worker *w, const char *path, size_t b, size_t f, void *out)
{
	char err[256];
	if (!out) { /* col_buf failed */
		if (!w->over)
			unreadable(w, path, "out of memory");
		return -1;
	}
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
		if (read_col(w, path, b, f, col_buf(w, (size_t)f, b)))
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
			unreadable(w, path, "out of memory");
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
		if (!kept_buf(w, (size_t)f, b, k)) {
			if (!w->over)
				unreadable(w, path, "out of memory");
			return -1;
		}
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
	if (!pos_buf(w, b, k)) {
		if (!w->over)
			unreadable(w, path, "out of memory");
		return -1;
	}
	for (size_t m = 0; m < k; m++)
		w->pos[m] = (uint32_t)(batch->row0 + sel[m]);
	batch->pos = w->pos;
	batch->n = k;
	return 0;
}

/* Passes the batch on, with the rows' flow counts when from a rollup;
 * while buffering, keeps it for pass_pending. */
static int deliver(worker *w, ng_column_batch *batch)
{
	scan *s = w->s;
	batch->flows = w->rollup ? batch->col[NG_ROLLUP_FLOWS] : NULL;
	if (w->buffering) {
		assert(w->npend < MAX_BUFFERED_BLOCKS);
		w->pend[w->npend++] = *batch;
		return 0;
	}
	if (s->parallel)
		return s->o->fn_par(batch, w->idx, s->o->arg);
	return s->o->fn(batch, s->o->arg);
}

/* The batches kept while the segment was read, passed on in order. */
static int pass_pending(worker *w)
{
	w->buffering = false;
	int rc = 0;
	for (size_t i = 0; i < w->npend && rc == 0; i++)
		rc = deliver(w, &w->pend[i]);
	w->npend = 0;
	return rc;
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

/* The worker's selection buffers (the kept rows' indexes, one scratch
 * block of any column), made on first need.  False when out of memory. */
static bool select_buffers(worker *w)
{
	if (!w->sel) {
		w->sel = malloc(NG_SEG_BLOCK_ROWS * sizeof *w->sel);
		size_t widest = 0;
		for (size_t f = 0; f < NG_FIELD_COUNT; f++)
			widest = ng_fields[f].size > widest ? ng_fields[f].size : widest;
		w->scratch = malloc(NG_SEG_BLOCK_ROWS * widest);
	}
	return w->sel && w->scratch;
}

/* The blocks of the open segment with rows in range, one after the other
 * (col_buf gives each the buffers it decodes into).  flow_start is sorted, so the rows
 * in range are one slice of each block, and a block wholly after the
 * range ends the segment.  A segment wholly inside the range needs no
 * flow_start to find them: with select it is decoded only for the
 * blocks that keep a row.  Returns the callbacks' value; *bad when a
 * block could not be read (reported). */
static int read_blocks(worker *w, const char *path, bool *bad)
{
	scan *s = w->s;
	const ng_seg_header *h = &w->rd.h;
	const bool select = s->o->select != NULL;
	const bool inside = h->start_min >= s->from && h->start_max < s->to;
	const size_t nb = ng_seg_blocks(&w->rd);
	w->counted = (ng_colset){{0}};
	w->prev = 0;
	int rc = 0;
	for (size_t b = 0; b < nb && rc == 0 && !*bad && !stopped(s); b++) {
		if (select && !select_buffers(w)) {
			unreadable(w, path, "out of memory");
			*bad = true;
			break;
		}
		size_t n = ng_seg_block_rows(&w->rd, b), lo = 0, hi = n;
		ng_colset have = {{0}};
		if (!inside || !select) {
			const uint64_t *start = col_buf(w, NG_F_FLOW_START, b);
			if (read_col(w, path, b, NG_F_FLOW_START, (void *)start)) {
				*bad = true;
				break;
			}
			have = ng_colset_of(NG_F_FLOW_START);
			if (start[0] >= s->to)
				break;
			lo = lower_bound(start, n, s->from);
			hi = lower_bound(start, n, s->to);
		}
		if (lo < hi)
			rc = scan_block(w, path, b, lo, hi, &have, bad);
	}
	return rc;
}

/* Reads the rows of one open segment, deciding first whether it counts:
 * nothing of a damaged segment is passed on.  Its frame tables are
 * checked before any block (checked_first); then its blocks are read
 * into buffers of their own and the batches kept (buffering), and passed
 * on only once every block read whole; a failing block makes the
 * segment damaged with nothing of it passed on.  A segment too large to
 * buffer (more than MAX_BUFFERED_BLOCKS blocks, or BUFFER_BYTES of
 * decoded blocks) is checked on the columns the scan reads first
 * (decoded twice) and then read block by block, each block passed on as
 * it is read (its columns stay in cache while the callback works on
 * them).  *damaged_seg: nothing was passed on because of damage. */
static int read_segment(worker *w, const char *path, bool *damaged_seg)
{
	scan *s = w->s;
	const ng_seg_header *h = &w->rd.h;
	char err[256];
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
	if (!checked_first(w, path)) {
		*damaged_seg = true;
		return 0;
	}
	w->st.bytes_read += h->header_size;
	const ng_scan_stats before = w->st;
	const bool whole = !w->rollup && atomic_load(&w->cur->state) == NG_SNAP_WHOLE;
	w->buffering = !whole && ng_seg_blocks(&w->rd) <= MAX_BUFFERED_BLOCKS;
	w->over = false;
	w->npend = 0;
	bool bad = false;
	int rc = read_blocks(w, path, &bad);
	if (w->buffering && w->over) {
		/* too large to hold: check what the scan reads, then stream */
		w->st = before;
		w->buffering = false;
		w->npend = 0;
		bad = false;
		w->check = ng_colset_union(w->cols, s->o->select_columns);
		if (ng_seg_check(&w->rd, &w->check, err, sizeof err)) {
			report(w, path, err);
			*damaged_seg = true;
			return 0;
		}
		rc = read_blocks(w, path, &bad);
	}
	if (bad) {
		w->buffering = false;
		w->npend = 0;
		*damaged_seg = true;
		return 0;
	}
	if (w->buffering && rc == 0)
		rc = pass_pending(w);
	w->buffering = false;
	w->npend = 0;
	w->st.segments_read++;
	w->st.segments_rollup += w->rollup;
	return rc;
}

/* A descriptor of segment e: a dup of the one its snapshot holds, or
 * opened by name.  -1 when it vanished (counted: the snapshot kept it by
 * name only) or cannot be opened (reported). */
static int open_seg(worker *w, const ng_snap_seg *e)
{
	int fd =
	    e->fd >= 0 ? fcntl(e->fd, F_DUPFD_CLOEXEC, 0) : open(e->path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	if (errno == ENOENT) {
		w->st.segments_vanished++;
		ng_warn("store: segment %s was removed before it was read (compaction or "
		        "retention; it was past the snapshot's descriptors)",
		        e->path);
	} else {
		unreadable(w, e->path, strerror(errno));
	}
	return -1;
}

/* A descriptor of segment e (open_seg), with its fstat in w->segst and
 * what its hour's `checked` file says of this version of it in
 * w->verdict.  -1 when it cannot be read, or when it was recorded
 * damaged (then counted and reported as damaged(), unless check_all()
 * asks to check it again). */
static int open_checked(worker *w, ng_snap_seg *e)
{
	int fd = open_seg(w, e);
	if (fd < 0)
		return -1;
	w->have_st = fstat(fd, &w->segst) == 0;
	w->verdict = w->have_st ? ng_verdict_of(&e->verdict, &w->segst) : NG_VERDICT_NONE;
	if (w->verdict == NG_VERDICT_DAMAGED && !check_all()) {
		close(fd);
		damaged(w, e, "found damaged by an earlier check (its hour's `checked` file)");
		return -1;
	}
	return fd;
}

/* Whether the rollup may answer for segment e, open as fd (closed here):
 * recorded ok, this version of the file was checked whole (or written by
 * nagare's encoder) when it was recorded, and its header and frame tables
 * need no second look (a header read, its checksum and a read per column:
 * most of a short rollup query's time); otherwise it is checked now
 * (checked_first).  False when it is damaged (counted, reported). */
static bool rollup_may_answer(worker *w, ng_snap_seg *e, int fd)
{
	char err[256];
	if (w->verdict == NG_VERDICT_OK && !check_all()) {
		close(fd);
		return true;
	}
	if (ng_seg_open_fd(&w->rd, fd, err, sizeof err)) {
		damaged(w, e, err);
		return false;
	}
	const bool whole = checked_first(w, e->path);
	ng_seg_close(&w->rd);
	return whole;
}

/* Reads segment e through its rollup (ng_scan_opts.rollup) when it has
 * one: the segment's verdict first (recorded ok: not opened; damaged:
 * counts for nothing, read either way; none: checked whole and
 * recorded, checked_first), then the rollup whole.  Returns true when done so (*rc: the callbacks'
 * value), false to read the segment's rows instead: no rollup, or a damaged one. */
static bool read_rollup(worker *w, ng_snap_seg *e, int *rc)
{
	scan *s = w->s;
	char rp[4200], err[256];
	if ((size_t)snprintf(rp, sizeof rp, "%s%s", e->path, s->o->rollup) >= sizeof rp)
		return false;
	int rfd = open(rp, O_RDONLY | O_CLOEXEC);
	if (rfd < 0)
		return false;
	if (atomic_load(&e->state) != NG_SNAP_WHOLE) {
		int fd = open_checked(w, e);
		if (fd < 0) {
			close(rfd);
			return true; /* vanished or damaged: neither is read */
		}
		if (!rollup_may_answer(w, e, fd)) {
			close(rfd);
			return true;
		}
	}
	if (ng_seg_open_fd(&w->rd, rfd, err, sizeof err)) {
		w->st.rollups_damaged++;
		ng_warn("store: damaged rollup %s: %s (its segment's rows are read instead)", rp,
		        err);
		return false;
	}
	w->rollup = true;
	w->cols = ng_colset_union(s->columns, ng_colset_of(NG_ROLLUP_FLOWS));
	bool bad = false;
	*rc = read_segment(w, rp, &bad);
	ng_seg_close(&w->rd);
	return !bad;
}

/* Runs one job on worker w: a segment known damaged is counted and
 * skipped; otherwise read through its rollup when the scan asks for one
 * and it has one, else opened, checked whole and read. */
static int run_job(worker *w, job *j)
{
	scan *s = w->s;
	ng_snap_seg *e = &s->snap->seg[j->idx];
	char err[256];
	if (!s->parallel && s->o->want &&
	    !s->o->want(&(ng_segment_info){e->path, j->a, j->b}, s->o->arg)) {
		w->st.segments_skipped++;
		return 0;
	}
	if (atomic_load(&e->state) == NG_SNAP_DAMAGED) {
		w->st.errors++;
		w->st.segments_damaged++;
		return 0;
	}
	w->seg = j->ord;
	w->cur = e;
	w->rollup = false;
	w->have_st = false;
	w->verdict = NG_VERDICT_NONE;
	int rc = 0;
	if (s->o->rollup && read_rollup(w, e, &rc))
		return rc;
	int fd = open_checked(w, e);
	if (fd < 0)
		return 0;
	if (ng_seg_open_fd(&w->rd, fd, err, sizeof err)) {
		damaged(w, e, err);
		return 0;
	}
	w->rollup = false;
	w->cols = s->columns;
	bool bad = false;
	rc = read_segment(w, e->path, &bad);
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
		if (stopped(s))
			continue;
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
		return stopped(s) ? 0 : run_job(&s->w[0], &copy);
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

/* Hands the snapshot's segments in range to the readers, in time order
 * (hour, then name); counts the others in the planner's stats. */
static void plan(scan *s)
{
	const ng_store_snapshot *sn = s->snap;
	for (size_t h = 0; h < sn->nhour && !stopped(s); h++) {
		const ng_snap_hour *hr = &sn->hour[h];
		if (hr->t1 <= s->from || hr->t0 >= s->to)
			continue;
		s->st.segments_replaced += hr->replaced;
		for (size_t i = hr->first; i < hr->first + hr->n; i++) {
			const ng_snap_seg *e = &sn->seg[i];
			s->st.segments_total++;
			if (e->b < s->from || e->a >= s->to || e->a > e->b) {
				s->st.segments_skipped++;
				continue;
			}
			job j = {.a = e->a, .b = e->b, .ord = s->nseg++, .idx = i};
			int rc = submit(s, &j);
			if (rc)
				set_rc(s, rc);
		}
	}
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
	a->segments_damaged += b->segments_damaged;
	a->segments_vanished += b->segments_vanished;
	a->rollups_damaged += b->rollups_damaged;
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
	ng_store_snapshot *own = NULL;
	if (!o->snap && !(own = ng_store_snapshot_take(dir, o->from_ms, o->to_ms)))
		return -1;
	scan s = {.o = o, .from = o->from_ms, .to = o->to_ms, .snap = o->snap ? o->snap : own};
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
		ng_store_snapshot_free(own);
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
	if (s.from < s.to)
		plan(&s);
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
		free_blocks(&s.w[i]);
		for (size_t f = 0; f < NG_FIELD_COUNT; f++) {
			for (size_t b = 0; b < MAX_BUFFERED_BLOCKS; b++)
				free(s.w[i].gcolb[f][b]);
			free(s.w[i].code[f]);
		}
		for (size_t b = 0; b < MAX_BUFFERED_BLOCKS; b++)
			free(s.w[i].posb[b]);
		free(s.w[i].sel);
		free(s.w[i].scratch);
	}
	st->threads = s.parallel ? started : 1;
	pthread_mutex_destroy(&s.mu);
	pthread_cond_destroy(&s.nonempty);
	pthread_cond_destroy(&s.nonfull);
	free(s.w);
	free(s.q);
	ng_store_snapshot_free(own);
	return s.rc;
}

int ng_store_scan(const char *dir, uint64_t from_ms, uint64_t to_ms, ng_colset columns,
                  int (*fn)(const ng_column_batch *b, void *arg), void *arg, ng_scan_stats *st)
{
	ng_scan_opts o = {
	    .from_ms = from_ms, .to_ms = to_ms, .columns = columns, .fn = fn, .arg = arg};
	return ng_store_scan_opts(dir, &o, st);
}
