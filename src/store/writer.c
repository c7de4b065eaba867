/*
 * writer.c — appending flow records to a store (see store.h).
 *
 * The buffer is a list of column chunks (chunk.h) drawn from a pool:
 * append transposes the records of the fields that hold a value into the
 * last chunk's columns (under a mutex); a flush takes the list out under
 * the mutex, so appends go on while it encodes and writes, and gives the
 * chunks back to the pool.  Nothing is copied to grow the buffer, and
 * after the first flushes no memory is touched for the first time (a first
 * touch costs ~20 µs a page on a paravirtualized guest).
 *
 * A flush sorts the rows by flow_start (an LSD radix sort of (key, row)
 * pairs over the flow_start column), cuts them into runs of one UTC hour
 * of flow_start (so a segment in directory YYYY/MM/DD/HH only holds rows
 * whose flow_start lies in that hour, which lets a scan skip whole hour
 * directories by name), permutes each column that holds a value into
 * flow_start order (columns no row set are stored as constants without
 * being touched; a column holding one value is filled with it, not read
 * row by row) and writes each run as a segment:
 *
 *   write DIR/flows/Y/M/D/H/<start>-<end>-<seq>.seg.<pid>.tmp
 *   fsync(file), renameat2(tmp, final, RENAME_NOREPLACE), fsync(hour dir)
 *
 * (ng_seg_publish, files.c) so a segment is whole or absent; readers
 * ignore names ending in ".tmp".
 * <start>/<end> are the first and last row's flow_start in ms; <seq> counts
 * the writer's segments and steps on a name collision.
 *
 * One flush call writes at most NG_FLUSH_MAX_HOURS hours (store.h), so it
 * ends in bounded time whatever the rows' times: before this bound, rows
 * dated anywhere from 1970 to 2106 made one segment for each hour they
 * touched (141 507 files, 13 minutes of fsyncs for 100 000 junk
 * datagrams) while the rows behind them waited.  When a group of rows
 * spans more hours than are left, the hours nearest the wall clock are
 * written (the current hour, where live traffic is, comes first) and the
 * others go back to the front of the buffer (keep_for_retry), due again
 * at once, counted in stats.deferred and logged once a minute.  The
 * collector's time window (collector/timecheck.c) keeps its records
 * within 169 hours of the clock by default, far below the bound.
 */
#include "store/store.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/bigmem.h"
#include "core/log.h"
#include "core/timefmt.h"
#include "store/chunk.h"
#include "store/files.h"
#include "store/radix.h"
#include "store/segment.h"

/* flush at 256 Ki buffered rows (16 chunks): the sort arrays and permuted
 * columns of a flush scale with it; compaction merges small segments */
#define DUE_ROWS (1u << 18)
#define DUE_MS 5000u /* or five seconds after the first one */
#define MAX_SEGMENT_ROWS (1u << 20)
#define MAX_BUFFERED (4u << 20) /* while flushes fail: refuse rather than grow */
#define RETRY_MS 1000u          /* after a failed flush, due again this much later */
#define HOUR_MS UINT64_C(3600000)
#define DEFER_LOG_MS 60000u   /* deferrals are logged at most this often */
#define POOL_WINDOW_MS 60000u /* the chunk pool's peak is kept this long (put_chunks) */
/* chunks in a buffer: full ones, except after a failed flush (the kept
 * rows' last chunk may be part full), hence room for twice as many */
#define MAX_CHUNKS (2 * MAX_BUFFERED / NG_CHUNK_ROWS)
#define BUF_ROWS (2 * DUE_ROWS)                 /* sort arrays: allocated once at this size */
#define FLUSH_CHUNKS (DUE_ROWS / NG_CHUNK_ROWS) /* a flush writes this many at a time */

/* Row r of chunk k as one 32-bit index: the sort's unit. */
#define ROW_ID(k, r) ((uint32_t)((k) << NG_CHUNK_SHIFT | (r)))
#define ROW_CHUNK(id) ((id) >> NG_CHUNK_SHIFT)
#define ROW_IN(id) ((id) & (NG_CHUNK_ROWS - 1))
_Static_assert(MAX_CHUNKS *NG_CHUNK_ROWS <= UINT32_MAX, "row ids fit 32 bits");

struct ng_store_writer {
	char *dir;
	pthread_mutex_t mu;          /* guards chunk, nchunks, n, pool, first_ms, st */
	pthread_mutex_t flush_mu;    /* one flush at a time */
	ng_chunk *chunk[MAX_CHUNKS]; /* the buffer; appends go to the last */
	size_t nchunks, n;
	ng_chunk *pool[MAX_CHUNKS]; /* free chunks, kept for reuse */
	size_t npool;
	/* chunks handed out of the pool and not back yet, and the most of them
	 * at once in this POOL_WINDOW_MS window and the one before: the pool
	 * keeps what that peak needs and frees the rest, so a burst (a flush
	 * that fell behind) raises RSS for two windows at most */
	size_t out, peak, peak_prev;
	uint64_t window_ms, pool_window_ms;
	uint64_t first_ms; /* wall clock of the first buffered row */
	uint64_t retry_ms; /* after a failed flush: not due before this */
	ng_store_writer_stats st;
	/* used by the flushing thread only (under flush_mu) */
	ng_chunk *fchunk[MAX_CHUNKS]; /* the chunks being flushed */
	size_t nfchunks;
	ng_colset fmask;               /* columns written in some of them */
	ng_colset fconst;              /* ... of which these hold one value */
	uint8_t *pcol[NG_FIELD_COUNT]; /* a run's column in flow_start order */
	size_t pcap[NG_FIELD_COUNT];   /* its capacity in rows */
	uint64_t seq;
	ng_seg_encoder *enc;
	uint64_t *keys, *keys_tmp;
	uint32_t *order, *order_tmp; /* row ids */
	uint32_t *inv;               /* row id -> its position in order */
	size_t inv_cap;
	size_t sort_cap;
	ng_store_derive_fn derive; /* and its argument: ng_store_writer_set_derive */
	void *derive_arg;
	ng_store_tap_fn tap; /* and its argument: ng_store_writer_set_tap */
	void *tap_arg;
	bool no_segments;         /* the tap only: no segment is written */
	uint64_t defer_logged_ms; /* when a deferral was last logged */
	uint64_t defer_unlogged;  /* rows deferred since */
};

/* The rows [a, a + n) of w->order being written: their columns, as handed
 * to the encoder (NULL: no row holds the field). */
struct ng_store_cols {
	ng_store_writer *w;
	const uint8_t **cols;
	size_t n;
};

ng_store_writer *ng_store_writer_open(const char *dir, char *err, size_t errlen)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/flows", dir);
	if (ng_mkdir_p(path)) {
		snprintf(err, errlen, "cannot create store directory %s: %s", path,
		         strerror(errno));
		return NULL;
	}
	if (access(path, W_OK)) {
		snprintf(err, errlen, "store directory %s is not writable: %s", path,
		         strerror(errno));
		return NULL;
	}
	snprintf(path, sizeof path, "%s/state", dir);
	if (ng_mkdir_p(path)) {
		snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
		return NULL;
	}
	ng_store_writer *w = calloc(1, sizeof *w);
	if (!w || !(w->dir = strdup(dir)) || !(w->enc = ng_seg_encoder_new(1))) {
		snprintf(err, errlen, "out of memory opening store %s", dir);
		if (w)
			free(w->dir);
		free(w);
		return NULL;
	}
	pthread_mutex_init(&w->mu, NULL);
	pthread_mutex_init(&w->flush_mu, NULL);
	w->pool_window_ms = POOL_WINDOW_MS;
	return w;
}

/* A chunk from the pool, or a new one; NULL when out of memory.  Under w->mu. */
static ng_chunk *get_chunk(ng_store_writer *w)
{
	ng_chunk *c = w->npool ? w->pool[--w->npool] : ng_chunk_new();
	if (c) {
		ng_chunk_reset(c);
		if (++w->out > w->peak)
			w->peak = w->out;
	}
	return c;
}

/* Gives chunks back to the pool, which keeps as many as the most in use
 * at once over the last one to two POOL_WINDOW_MS and frees the others
 * (their memory goes back to the kernel: chunk.c maps it).  Under w->mu. */
static void put_chunks(ng_store_writer *w, ng_chunk **ch, size_t k)
{
	const uint64_t now = ng_now_ms();
	if (now >= w->window_ms + w->pool_window_ms || now < w->window_ms) {
		w->peak_prev = w->peak;
		w->peak = w->out;
		w->window_ms = now;
	}
	const size_t keep = w->peak > w->peak_prev ? w->peak : w->peak_prev;
	for (size_t i = 0; i < k; i++) {
		w->out--;
		if (w->npool < MAX_CHUNKS && w->out + w->npool < keep) {
			w->pool[w->npool++] = ch[i];
		} else {
			ng_chunk_free(ch[i]);
			w->st.chunks_freed++;
		}
		ch[i] = NULL;
	}
	/* and what the pool held past that peak (a burst's chunks) */
	while (w->npool && w->out + w->npool > keep) {
		ng_chunk_free(w->pool[--w->npool]);
		w->st.chunks_freed++;
	}
}

/* Room for n more rows in the buffer's chunks, taking every chunk they
 * need first (so rows are taken whole or not at all).  Under w->mu. */
static int make_room(ng_store_writer *w, size_t n)
{
	size_t room = w->nchunks ? NG_CHUNK_ROWS - w->chunk[w->nchunks - 1]->n : 0;
	while (room < n) {
		if (w->nchunks == MAX_CHUNKS)
			return -1;
		ng_chunk *c = get_chunk(w);
		if (!c)
			return -1;
		w->chunk[w->nchunks++] = c;
		room += NG_CHUNK_ROWS;
	}
	return 0;
}

int ng_store_writer_append(ng_store_writer *w, const ng_flow *flows, size_t n)
{
	if (!n)
		return 0;
	pthread_mutex_lock(&w->mu);
	if (w->n + n > MAX_BUFFERED || make_room(w, n)) {
		w->st.dropped += n;
		pthread_mutex_unlock(&w->mu);
		return -1;
	}
	if (w->n == 0)
		w->first_ms = ng_now_ms();
	bool crossed = w->n < DUE_ROWS && w->n + n >= DUE_ROWS;
	w->n += n;
	/* the first chunk with room: the last, or (only after make_room
	 * added chunks) the one before */
	size_t k = w->nchunks - 1;
	while (k > 0 && w->chunk[k - 1]->n < NG_CHUNK_ROWS)
		k--;
	while (n) {
		size_t took = ng_chunk_put(w->chunk[k++], flows, n);
		flows += took;
		n -= took;
	}
	pthread_mutex_unlock(&w->mu);
	return crossed ? 1 : 0;
}

bool ng_store_writer_due(const ng_store_writer *w, uint64_t now_ms)
{
	ng_store_writer *mw = (ng_store_writer *)w; /* the mutex is not part of the value */
	pthread_mutex_lock(&mw->mu);
	bool due =
	    (w->n >= DUE_ROWS || (w->n && now_ms >= w->first_ms + DUE_MS)) && now_ms >= w->retry_ms;
	pthread_mutex_unlock(&mw->mu);
	return due;
}

void ng_store_writer_set_pool_window(ng_store_writer *w, uint64_t ms)
{
	pthread_mutex_lock(&w->mu);
	w->pool_window_ms = ms;
	pthread_mutex_unlock(&w->mu);
}

void ng_store_writer_get_stats(const ng_store_writer *w, ng_store_writer_stats *st)
{
	ng_store_writer *mw = (ng_store_writer *)w;
	pthread_mutex_lock(&mw->mu);
	*st = w->st;
	pthread_mutex_unlock(&mw->mu);
}

/* ---- sorting by flow_start --------------------------------------------- */

static int sort_reserve(ng_store_writer *w, size_t n)
{
	if (n <= w->sort_cap)
		return 0;
	if (n > 4096 && n < BUF_ROWS)
		n = BUF_ROWS; /* once, at the usual size: not again for each flush */
	free(w->keys);
	free(w->keys_tmp);
	free(w->order);
	free(w->order_tmp);
	w->keys = ng_alloc_big(n * 8);
	w->keys_tmp = ng_alloc_big(n * 8);
	w->order = ng_alloc_big(n * 4);
	w->order_tmp = ng_alloc_big(n * 4);
	if (!w->keys || !w->keys_tmp || !w->order || !w->order_tmp) {
		w->sort_cap = 0;
		return -1;
	}
	w->sort_cap = n;
	return 0;
}

/* The flow_start of a row being flushed. */
static uint64_t row_start(const ng_store_writer *w, uint32_t id)
{
	uint64_t v;
	memcpy(&v, w->fchunk[ROW_CHUNK(id)]->col[NG_F_FLOW_START] + ROW_IN(id) * 8, 8);
	return v;
}

/* Radix digits: the fewest passes of at most MAX_DIGIT bits that cover
 * `bits`, each as narrow as that allows (a flush's flow_start range of a
 * minute is 16 bits: 2 passes of 8 bits, 256 buckets being written at a
 * time rather than 2048, which the caches hold). */
#define MAX_DIGIT NG_RADIX_MAX_DIGIT
static unsigned digit_bits(unsigned bits)
{
	unsigned passes = (bits + MAX_DIGIT - 1) / MAX_DIGIT;
	return passes ? (bits + passes - 1) / passes : 1;
}

/* One stable counting pass over n 64-bit values on bits [shift, shift + d)
 * from `in` to `out`. */
static void radix_pass(const uint64_t *in, uint64_t *out, size_t n, unsigned shift, unsigned d)
{
	size_t count[1u << MAX_DIGIT];
	const uint64_t mask = (UINT64_C(1) << d) - 1;
	ng_radix_offsets(in, n, shift, mask, count);
	for (size_t i = 0; i < n; i++)
		out[count[(in[i] >> shift) & mask]++] = in[i];
}

/* Sorts keys (and order along) when the range does not fit 32 bits:
 * (key, id) pairs in two arrays, 11-bit digits. */
static void sort_wide(ng_store_writer *w, size_t n, uint64_t range)
{
	uint32_t *ord = w->order, *ord2 = w->order_tmp;
	uint64_t *key = w->keys, *key2 = w->keys_tmp;
	ng_radix_sort_pairs(&key, &ord, &key2, &ord2, n, range);
	if (ord != w->order)
		memcpy(w->order, ord, n * 4);
}

/*
 * Fills w->order with the ids of the n rows being flushed in flow_start
 * order (stable).  LSD radix sort on flow_start - min: only as many
 * passes as the range needs (an hour of ms is 22 bits: 2 passes); rows
 * that are already sorted cost one check.  A range below 2^32 (always,
 * but for clocks gone wild) sorts (key << 32 | id) as one 64-bit value:
 * one array moved a pass, not two.
 */
static void sort_rows(ng_store_writer *w)
{
	uint64_t mn = UINT64_MAX, mx = 0;
	bool sorted = true;
	size_t n = 0;
	for (size_t k = 0; k < w->nfchunks; k++) {
		const ng_chunk *c = w->fchunk[k];
		const uint8_t *col = c->col[NG_F_FLOW_START];
		for (size_t r = 0; r < c->n; r++, n++) {
			uint64_t v;
			memcpy(&v, col + r * 8, 8);
			w->order[n] = ROW_ID(k, r);
			w->keys[n] = v;
			if (n && v < w->keys[n - 1])
				sorted = false;
			mn = v < mn ? v : mn;
			mx = v > mx ? v : mx;
		}
	}
	if (sorted)
		return;
	uint64_t range = mx - mn;
	if (range >> 32) {
		for (size_t i = 0; i < n; i++)
			w->keys[i] -= mn;
		sort_wide(w, n, range);
		return;
	}
	uint64_t *v = w->keys, *v2 = w->keys_tmp;
	for (size_t i = 0; i < n; i++)
		v[i] = (v[i] - mn) << 32 | w->order[i];
	unsigned bits = 64 - (unsigned)__builtin_clzll(range); /* range > 0: not sorted */
	unsigned d = digit_bits(bits);
	for (unsigned shift = 0; shift < bits; shift += d) {
		radix_pass(v, v2, n, 32 + shift, d);
		uint64_t *t = v;
		v = v2;
		v2 = t;
	}
	for (size_t i = 0; i < n; i++)
		w->order[i] = (uint32_t)v[i];
}

/* ---- writing segments --------------------------------------------------- */

/* Writes one encoded image as a segment of the hour of `start`
 * (ng_seg_publish: whole or absent).  Returns 0, or -1 (logged). */
static int write_segment(ng_store_writer *w, const uint8_t *img, size_t len, uint64_t start,
                         uint64_t end)
{
	time_t secs = (time_t)(start / 1000);
	struct tm tm;
	gmtime_r(&secs, &tm);
	char hdir[4096], tag[24];
	snprintf(hdir, sizeof hdir, "%s/flows/%04d/%02d/%02d/%02d", w->dir, tm.tm_year + 1900,
	         tm.tm_mon + 1, tm.tm_mday, tm.tm_hour);
	if (ng_mkdir_p(hdir)) {
		ng_error("store: cannot create %s: %s", hdir, strerror(errno));
		return -1;
	}
	snprintf(tag, sizeof tag, "%ld", (long)getpid());
	/* the file is on disk: hand its page-cache pages back now, so the
	 * next segment's write reuses them.  Fresh pages cost ~2.6 ms a MB
	 * here (a paravirtualized guest pays for every page it touches for
	 * the first time) against ~0.4 for reused ones (drop_cache) */
	ng_seg_pub p = {.dir = hdir,
	                .start = start,
	                .end = end,
	                .seq = w->seq,
	                .tmp_tag = tag,
	                .drop_cache = true};
	int rc = ng_seg_publish(&p, img, len);
	w->seq = p.seq;
	if (rc) {
		ng_error("store: %s", p.err);
		return -1;
	}
	if (p.err[0])
		ng_warn("store: %s", p.err);
	return 0;
}

/* buf (room for *cap rows of `size` bytes), or in its place a buffer on
 * huge pages with room for `rows` (at least BUF_ROWS; contents not kept).
 * Out of memory: NULL, *cap 0; so *cap ≥ rows says it worked. */
static void *grow_rows(void *buf, size_t *cap, size_t rows, size_t size)
{
	if (rows <= *cap)
		return buf;
	size_t c = rows < BUF_ROWS ? BUF_ROWS : rows;
	free(buf);
	void *p = ng_alloc_big(c * size);
	*cap = p ? c : 0;
	return p;
}

/* True when column f holds one value in every row being flushed (a
 * fixed field of the exporter: IP version, masks, sampling rate ...).
 * Reads each column once, in order: a memcmp of the column against
 * itself one value on finds any change. */
static bool constant_column(const ng_store_writer *w, size_t f)
{
	const size_t sz = ng_fields[f].size;
	const uint8_t *first = NULL;
	for (size_t k = 0; k < w->nfchunks; k++) {
		const ng_chunk *c = w->fchunk[k];
		if (!c->n)
			continue;
		if (first && memcmp(first, c->col[f], sz))
			return false;
		first = first ? first : c->col[f];
		if (memcmp(c->col[f], c->col[f] + sz, (c->n - 1) * sz))
			return false;
	}
	return true;
}

/* dst[0..m) = m copies of the sz-byte value v, by doubling. */
static void fill_value(uint8_t *dst, const uint8_t *v, size_t sz, size_t m)
{
	if (!m)
		return;
	memcpy(dst, v, sz);
	for (size_t have = 1; have < m; have *= 2)
		memcpy(dst + have * sz, dst, (have < m - have ? have : m - have) * sz);
}

/* w->inv[id] = the position of row id in w->order, for the n rows being
 * flushed.  Returns 0 or -1 when out of memory. */
static int invert_order(ng_store_writer *w, size_t n)
{
	size_t ids = w->nfchunks << NG_CHUNK_SHIFT;
	w->inv = grow_rows(w->inv, &w->inv_cap, ids, sizeof *w->inv);
	if (w->inv_cap < ids)
		return -1;
	for (size_t i = 0; i < n; i++)
		w->inv[w->order[i]] = (uint32_t)i;
	return 0;
}

/*
 * Column f of the rows at positions [lo, lo + m) of w->order into
 * w->pcol[f], in that order.  Returns 0 or -1 when out of memory.
 *
 * A scatter: each chunk's column is read in order and each value written
 * to its row's place (w->inv).  The reads are what must not be random:
 * the chunks were written up to a flush interval ago and have left the
 * core's caches, while the m values written fit in them (a gather in
 * flow_start order waited for memory on every row, even prefetched: ~2x
 * slower).  A column that holds one value is filled without being read.
 */
static int permute(ng_store_writer *w, size_t f, bool constant, size_t lo, size_t m)
{
	const size_t sz = ng_fields[f].size;
	w->pcol[f] = grow_rows(w->pcol[f], &w->pcap[f], m, sz);
	if (w->pcap[f] < m)
		return -1;
	uint8_t *dst = w->pcol[f];
	if (constant) {
		for (size_t k = 0; k < w->nfchunks; k++)
			if (w->fchunk[k]->n) {
				fill_value(dst, w->fchunk[k]->col[f], sz, m);
				break;
			}
		return 0;
	}
	for (size_t k = 0; k < w->nfchunks; k++) {
		const uint8_t *src = w->fchunk[k]->col[f];
		const uint32_t *pos = w->inv + (k << NG_CHUNK_SHIFT);
		const size_t rows = w->fchunk[k]->n;
		/* p - lo wraps for rows of other runs: one unsigned compare */
#define SCATTER(W)                                                                                 \
	do {                                                                                       \
		for (size_t r = 0; r < rows; r++) {                                                \
			size_t p = pos[r] - lo;                                                    \
			if (p < m)                                                                 \
				memcpy(dst + p * (W), src + r * (W), (W));                         \
		}                                                                                  \
	} while (0)
		switch (sz) {
		case 1: SCATTER(1); break;
		case 2: SCATTER(2); break;
		case 4: SCATTER(4); break;
		case 8: SCATTER(8); break;
		case 16: SCATTER(16); break;
		default: SCATTER(sz); break;
		}
#undef SCATTER
	}
	return 0;
}

void ng_store_writer_set_tap(ng_store_writer *w, ng_store_tap_fn fn, void *arg, bool segments)
{
	w->tap = fn;
	w->tap_arg = arg;
	w->no_segments = fn && !segments;
}

void ng_store_writer_set_derive(ng_store_writer *w, ng_store_derive_fn fn, void *arg)
{
	w->derive = fn;
	w->derive_arg = arg;
}

size_t ng_store_cols_rows(const ng_store_cols *c)
{
	return c->n;
}

/* Column f of c: its permuted rows, or room for them, zeroed or not. */
static uint8_t *cols_get(ng_store_cols *c, enum ng_field_id f, bool zero)
{
	ng_store_writer *w = c->w;
	if (c->cols[f]) /* permuted into w->pcol[f] by write_run */
		return w->pcol[f];
	const size_t sz = ng_fields[f].size;
	w->pcol[f] = grow_rows(w->pcol[f], &w->pcap[f], c->n, sz);
	if (w->pcap[f] < c->n)
		return NULL;
	if (zero)
		memset(w->pcol[f], 0, c->n * sz);
#ifdef __SANITIZE_ADDRESS__
	else
		memset(w->pcol[f], 0xA5, c->n * sz);
#endif
	c->cols[f] = w->pcol[f];
	return w->pcol[f];
}

uint8_t *ng_store_cols_get(ng_store_cols *c, enum ng_field_id f)
{
	return cols_get(c, f, true);
}

uint8_t *ng_store_cols_get_whole(ng_store_cols *c, enum ng_field_id f)
{
	return cols_get(c, f, false);
}

/* Encodes and writes rows order[lo..hi) (one hour) as segments of at most
 * MAX_SEGMENT_ROWS, adding to *done the rows made durable.  Returns 0 or -1. */
static int write_run(ng_store_writer *w, size_t lo, size_t hi, size_t *done, uint64_t *segments,
                     uint64_t *bytes)
{
	for (size_t a = lo; a < hi; a += MAX_SEGMENT_ROWS) {
		size_t b = hi - a > MAX_SEGMENT_ROWS ? a + MAX_SEGMENT_ROWS : hi;
		const uint8_t *cols[NG_FIELD_COUNT] = {0};
		ng_colset left = w->fmask;
		for (int f; (f = ng_colset_pop(&left)) >= 0;) {
			if (permute(w, f, ng_colset_has(w->fconst, f), a, b - a)) {
				ng_error("store: out of memory sorting %zu rows", b - a);
				return -1;
			}
			cols[f] = w->pcol[f];
		}
		ng_store_cols sc = {w, cols, b - a};
		if (w->derive && w->derive(w->derive_arg, &sc)) {
			ng_error("store: out of memory deriving columns of %zu rows", b - a);
			return -1;
		}
		if (w->no_segments) { /* collect with ClickHouse alone */
			w->tap(w->tap_arg, cols, b - a);
			*done += b - a;
			continue;
		}
		const uint8_t *img;
		size_t len;
		char err[256];
		if (ng_seg_encode_cols(w->enc, ng_fields, NG_FIELD_COUNT, cols, b - a, &img, &len,
		                       err, sizeof err)) {
			ng_error("store: %s", err);
			return -1;
		}
		if (write_segment(w, img, len, row_start(w, w->order[a]),
		                  row_start(w, w->order[b - 1])))
			return -1;
		if (w->tap) /* durable now: a retry will not hand these rows again */
			w->tap(w->tap_arg, cols, b - a);
		*done += b - a;
		*segments += 1;
		*bytes += len;
	}
	return 0;
}

/* The hour of w->order[i]'s flow_start. */
static uint64_t hour_at(const ng_store_writer *w, size_t i)
{
	return row_start(w, w->order[i]) / HOUR_MS;
}

/* One hour's rows, w->order[lo..hi), and its distance from the clock. */
typedef struct hour_run {
	uint64_t dist; /* hours from the wall clock's */
	size_t lo, hi;
} hour_run;

static int by_dist(const void *a, const void *b)
{
	const hour_run *x = a, *y = b;
	return x->dist != y->dist ? (x->dist < y->dist ? -1 : 1) : (x->lo < y->lo ? -1 : 1);
}

static int by_lo(const void *a, const void *b)
{
	const hour_run *x = a, *y = b;
	return x->lo < y->lo ? -1 : 1;
}

/*
 * Of the n sorted rows of w->order, chooses those of at most `max` hours
 * to write now: all when they span no more (one compare: they are
 * sorted), else the `max` hours nearest the wall clock.  Their rows are
 * moved to the front of w->order, still in flow_start order, the others
 * after them; returns how many are in front.  Out of memory: the first
 * `max` hours in time order (still bounded).
 */
static size_t choose_hours(ng_store_writer *w, size_t n, size_t max)
{
	if (!n || hour_at(w, n - 1) - hour_at(w, 0) < max)
		return n;
	size_t runs = 0;
	for (size_t i = 0; i < n; i++)
		runs += i == 0 || hour_at(w, i) != hour_at(w, i - 1);
	if (runs <= max)
		return n;
	hour_run *r = malloc(runs * sizeof *r);
	const uint64_t now = ng_now_ms() / HOUR_MS;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (i == 0 || hour_at(w, i) != hour_at(w, i - 1)) {
			if (k == max && !r)
				return i; /* no memory: the first max hours */
			if (r) {
				uint64_t h = hour_at(w, i);
				r[k] = (hour_run){h > now ? h - now : now - h, i, n};
			}
			if (r && k)
				r[k - 1].hi = i;
			k++;
		}
	qsort(r, runs, sizeof *r, by_dist);
	qsort(r, max, sizeof *r, by_lo);
	qsort(r + max, runs - max, sizeof *r, by_lo);
	size_t at = 0;
	for (size_t j = 0; j < runs; j++) {
		memcpy(w->order_tmp + at, w->order + r[j].lo, (r[j].hi - r[j].lo) * 4);
		at += r[j].hi - r[j].lo;
	}
	size_t front = 0;
	for (size_t j = 0; j < max; j++)
		front += r[j].hi - r[j].lo;
	free(r);
	uint32_t *t = w->order;
	w->order = w->order_tmp;
	w->order_tmp = t;
	return front;
}

/* Writes the n rows being flushed in flow_start order, one hour at a time,
 * at most *hours hours of them (choose_hours; *hours goes down by those
 * written).  *done is the number of rows made durable: the first *done of
 * w->order; on success the rows after them are those left for later. */
static int write_rows(ng_store_writer *w, size_t n, size_t *done, uint64_t *segments,
                      uint64_t *bytes, size_t *hours)
{
	*done = 0;
	if (sort_reserve(w, n)) {
		ng_error("store: out of memory sorting %zu rows", n);
		return -1;
	}
	w->fmask = (ng_colset){{0}};
	for (size_t k = 0; k < w->nfchunks; k++)
		w->fmask = ng_colset_union(w->fmask, w->fchunk[k]->mask);
	const ng_colset pad = ng_colset_union(w->fmask, ng_colset_of(NG_F_FLOW_START));
	for (size_t k = 0; k < w->nfchunks; k++)
		ng_chunk_pad(w->fchunk[k], pad);
	sort_rows(w);
	size_t now_n = choose_hours(w, n, *hours);
	if (invert_order(w, n)) {
		ng_error("store: out of memory sorting %zu rows", n);
		return -1;
	}
	w->fconst = (ng_colset){{0}};
	ng_colset left = w->fmask;
	for (int f; (f = ng_colset_pop(&left)) >= 0;)
		if (constant_column(w, f))
			ng_colset_add(&w->fconst, f);
	size_t lo = 0;
	while (lo < now_n) {
		uint64_t hour = hour_at(w, lo);
		size_t hi = lo + 1;
		while (hi < now_n && hour_at(w, hi) == hour)
			hi++;
		if (write_run(w, lo, hi, done, segments, bytes))
			return -1;
		(*hours)--;
		lo = hi;
	}
	return 0;
}

/* After a failed flush: the rows not yet durable go back to the front of
 * the buffer, before the chunks appended meanwhile (under w->mu).  When
 * none was written the flushed chunks go back as they are (w->order may
 * not even be filled: the sort arrays can be what failed); otherwise the
 * rows order[done..n) are copied into new chunks and the flushed chunks
 * return to the pool.  Rows that cannot be kept are counted as dropped. */
static void keep_for_retry(ng_store_writer *w, size_t n, size_t done)
{
	ng_chunk *ch[MAX_CHUNKS];
	size_t k = 0, left = n - done;
	if (done == 0) {
		k = w->nfchunks;
		memcpy(ch, w->fchunk, k * sizeof *ch);
		w->nfchunks = 0;
	}
	size_t need = done == 0 ? k : (left + NG_CHUNK_ROWS - 1) / NG_CHUNK_ROWS;
	if (need + w->nchunks > MAX_CHUNKS) {
		/* not reached: MAX_BUFFERED bounds the chunks far below this */
		ng_error("store: no room to keep %zu rows for a retry: dropped", left);
		w->st.dropped += left;
		put_chunks(w, ch, k);
		put_chunks(w, w->fchunk, w->nfchunks);
		return;
	}
	while (k < need && (ch[k] = get_chunk(w)))
		k++;
	if (k < need) {
		ng_error("store: out of memory keeping %zu rows for a retry: dropped", left);
		w->st.dropped += left;
		put_chunks(w, ch, k);
		put_chunks(w, w->fchunk, w->nfchunks);
		return;
	}
	if (done) {
		ng_colset mask = ng_colset_union(w->fmask, ng_colset_of(NG_F_FLOW_START));
		for (size_t i = 0; i < left; i++) {
			uint32_t id = w->order[done + i];
			ng_chunk_copy_row(ch[i / NG_CHUNK_ROWS], w->fchunk[ROW_CHUNK(id)],
			                  ROW_IN(id), mask);
		}
		put_chunks(w, w->fchunk, w->nfchunks);
	}
	memmove(w->chunk + k, w->chunk, w->nchunks * sizeof *w->chunk);
	memcpy(w->chunk, ch, k * sizeof *ch);
	w->nchunks += k;
	w->n += left;
}

/* Takes up to FLUSH_CHUNKS chunks from the front of the buffer into
 * w->fchunk; returns their row count.  Under w->mu. */
static size_t take_group(ng_store_writer *w, size_t max_chunks)
{
	size_t k = w->nchunks < max_chunks ? w->nchunks : max_chunks, n = 0;
	for (size_t i = 0; i < k; i++)
		n += w->chunk[i]->n;
	memcpy(w->fchunk, w->chunk, k * sizeof *w->chunk);
	memmove(w->chunk, w->chunk + k, (w->nchunks - k) * sizeof *w->chunk);
	w->nchunks -= k;
	w->nfchunks = k;
	w->n -= n;
	if (w->n) /* what stays arrived after what was taken: its age starts now,
	           * not with the taken rows' (no tiny segment right after) */
		w->first_ms = ng_now_ms();
	return n;
}

/* Logs rows left for a later flush, at most once a minute (under w->mu). */
static void log_deferred(ng_store_writer *w, size_t rows)
{
	uint64_t now = ng_now_ms();
	w->defer_unlogged += rows;
	if (w->defer_logged_ms && now - w->defer_logged_ms < DEFER_LOG_MS)
		return;
	ng_warn("store: flow times span more than %u hours: the %u nearest the clock were "
	        "written, %" PRIu64 " rows of the others wait for the next flush (counted in "
	        "store.deferred; collect.max_past and max_future bound the collector's)",
	        NG_FLUSH_MAX_HOURS, NG_FLUSH_MAX_HOURS, w->defer_unlogged);
	w->defer_logged_ms = now;
	w->defer_unlogged = 0;
}

/* Writes one group of chunks, at most *hours hours of it; on failure
 * keeps its rows for a retry, and the rows of hours left over for the
 * next flush. */
static int flush_group(ng_store_writer *w, size_t max_chunks, size_t *hours)
{
	pthread_mutex_lock(&w->mu);
	uint64_t first_ms = w->first_ms;
	size_t n = take_group(w, max_chunks);
	pthread_mutex_unlock(&w->mu);

	int rc = 0;
	size_t done = 0;
	uint64_t segments = 0, bytes = 0;
	if (n)
		rc = write_rows(w, n, &done, &segments, &bytes, hours);

	pthread_mutex_lock(&w->mu);
	w->st.rows += done;
	w->st.segments += segments;
	w->st.bytes += bytes;
	if (rc == 0 && done == n) {
		put_chunks(w, w->fchunk, w->nfchunks);
	} else if (rc == 0) { /* hours left over: due again at once */
		w->st.deferred += n - done;
		log_deferred(w, n - done);
		w->first_ms = 0; /* due at the next look */
		keep_for_retry(w, n, done);
	} else {
		w->st.errors++;
		w->retry_ms = ng_now_ms() + RETRY_MS;
		w->first_ms = first_ms; /* the kept rows are the oldest */
		keep_for_retry(w, n, done);
	}
	w->nfchunks = 0;
	pthread_mutex_unlock(&w->mu);
	return rc;
}

/*
 * Writes what the buffer holds when called, FLUSH_CHUNKS chunks (2^18 rows)
 * at a time: a flush that fell behind never builds bigger sort arrays and
 * columns than the usual ones (memory touched for the first time is what
 * made a late flush later still), and segments keep their usual size.
 * Rows appended meanwhile wait for the next call, and so do the rows of
 * hours past NG_FLUSH_MAX_HOURS, counted over all the groups of the call.
 */
int ng_store_writer_flush(ng_store_writer *w)
{
	pthread_mutex_lock(&w->flush_mu);
	pthread_mutex_lock(&w->mu);
	size_t left = w->nchunks;
	pthread_mutex_unlock(&w->mu);
	int rc = 0;
	size_t hours = NG_FLUSH_MAX_HOURS;
	do {
		size_t k = left < FLUSH_CHUNKS ? left : FLUSH_CHUNKS;
		rc = flush_group(w, k, &hours);
		left -= k;
	} while (rc == 0 && left && hours);
	if (rc == 0 && left) { /* stopped at the bound: what is left is due now */
		pthread_mutex_lock(&w->mu);
		w->first_ms = 0;
		pthread_mutex_unlock(&w->mu);
	}
	pthread_mutex_unlock(&w->flush_mu);
	return rc;
}

int ng_store_writer_close(ng_store_writer *w)
{
	if (!w)
		return 0;
	/* every row, however many hours: each flush writes at least one */
	int rc;
	size_t left;
	do {
		rc = ng_store_writer_flush(w);
		pthread_mutex_lock(&w->mu);
		left = w->n;
		pthread_mutex_unlock(&w->mu);
	} while (rc == 0 && left);
	pthread_mutex_destroy(&w->mu);
	pthread_mutex_destroy(&w->flush_mu);
	for (size_t i = 0; i < w->nchunks; i++)
		ng_chunk_free(w->chunk[i]);
	for (size_t i = 0; i < w->npool; i++)
		ng_chunk_free(w->pool[i]);
	for (size_t f = 0; f < NG_FIELD_COUNT; f++)
		free(w->pcol[f]);
	free(w->keys);
	free(w->keys_tmp);
	free(w->order);
	free(w->order_tmp);
	free(w->inv);
	ng_seg_encoder_free(w->enc);
	free(w->dir);
	free(w);
	return rc;
}

char *ng_store_state_dir(const char *dir, char *buf, size_t len)
{
	if ((size_t)snprintf(buf, len, "%s/state", dir) >= len)
		return NULL;
	if (ng_mkdir_p(buf))
		return NULL;
	return buf;
}
