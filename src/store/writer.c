/*
 * writer.c — appending flow records to a store (see store.h).
 *
 * Records are copied into a buffer (append: a memcpy under a mutex) made of
 * fixed chunks of 2^15 rows drawn from a pool; a flush takes the chunks
 * out under the mutex, so appends go on while it encodes and writes, and
 * gives them back to the pool when done.  Nothing is ever copied to grow
 * the buffer, and after the first flushes no memory is touched for the
 * first time (a first touch costs ~20 µs a page on a paravirtualized
 * guest: it was most of the receive thread's time).  A flush sorts the rows by flow_start (an LSD radix sort
 * of (key, index) pairs), cuts them into runs of one UTC hour of flow_start
 * (so a segment in directory YYYY/MM/DD/HH only holds rows whose flow_start
 * lies in that hour, which lets a scan skip whole hour directories by name)
 * and writes each run as a segment:
 *
 *   write DIR/flows/Y/M/D/H/<start>-<end>-<seq>.seg.<pid>.tmp
 *   fsync(file), renameat2(tmp, final, RENAME_NOREPLACE), fsync(hour dir)
 *
 * so a segment is whole or absent; readers ignore names ending in ".tmp".
 * <start>/<end> are the first and last row's flow_start in ms; <seq> counts
 * the writer's segments and steps on a name collision.
 */
#include "store/store.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/log.h"
#include "core/timefmt.h"
#include "store/segment.h"

/* flush at 256 Ki buffered rows: every buffer of a flush (rows, sort
 * arrays, gathered columns) scales with it, and memory touched for the first
 * time is what costs most here; compaction merges small segments later */
#define DUE_ROWS (1u << 18)
#define DUE_MS 5000u            /* or five seconds after the first one */
#define MAX_SEGMENT_ROWS (1u << 20)
#define MAX_BUFFERED (4u << 20) /* while flushes fail: refuse rather than grow */
#define RETRY_MS 1000u                /* after a failed flush, due again this much later */
#define HOUR_MS UINT64_C(3600000)
#define CHUNK_SHIFT 15
#define CHUNK_ROWS ((size_t)1 << CHUNK_SHIFT)
#define MAX_CHUNKS (MAX_BUFFERED / CHUNK_ROWS)
/* chunks kept in the pool for reuse: what 1 M rec/s needs (a buffer
 * filling while another is flushed) with room to spare; more are freed */
#define POOL_KEEP MAX_CHUNKS
#define BUF_ROWS (2 * DUE_ROWS) /* sort arrays: allocated once at this size */
#define HUGE_ALIGN ((size_t)2 << 20)

struct ng_store_writer {
	char *dir;
	pthread_mutex_t mu;       /* guards chunk, nchunks, n, pool, first_ms, st */
	pthread_mutex_t flush_mu; /* one flush at a time */
	ng_flow *chunk[MAX_CHUNKS]; /* row i is chunk[i >> CHUNK_SHIFT][i % CHUNK_ROWS] */
	size_t nchunks, n;
	ng_flow *pool[POOL_KEEP];   /* free chunks */
	size_t npool;
	uint64_t first_ms;        /* wall clock of the first buffered row */
	uint64_t retry_ms;        /* after a failed flush: not due before this */
	ng_store_writer_stats st;
	/* used by the flushing thread only (under flush_mu) */
	ng_flow *fchunk[MAX_CHUNKS]; /* the chunks being flushed */
	size_t nfchunks;
	const ng_flow **ptrs;        /* the rows being flushed, in flow_start order */
	uint64_t seq;
	ng_seg_encoder *enc;
	uint64_t *keys;
	uint32_t *order, *order_tmp;
	uint64_t *keys_tmp;
	size_t sort_cap;
};

static int mkdir_p(const char *path)
{
	char tmp[4096];
	size_t len = strlen(path);
	if (len >= sizeof tmp) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(tmp, path, len + 1);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, 0755) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(tmp, 0755) && errno != EEXIST)
		return -1;
	return 0;
}

/*
 * Allocates `bytes` for a big buffer (rows, sort arrays), 2 MiB aligned and
 * advised for transparent huge pages: a first touch of a page costs ~20 µs
 * on a paravirtualized guest, and one 2 MiB page replaces 512 of them.
 * Pages are only touched when used.  Returns NULL when out of memory; free
 * with free().
 */
static void *alloc_big(size_t bytes)
{
	size_t len = (bytes + HUGE_ALIGN - 1) / HUGE_ALIGN * HUGE_ALIGN;
	void *p = aligned_alloc(HUGE_ALIGN, len ? len : HUGE_ALIGN);
#ifdef MADV_HUGEPAGE
	if (p)
		madvise(p, len, MADV_HUGEPAGE); /* advice only: failure is harmless */
#endif
	return p;
}

/*
 * Copies `len` bytes (a multiple of 8: whole ng_flow records) into the row
 * buffer with non-temporal stores where the CPU has them.  The buffer is far
 * bigger than any cache and is read back only by the next flush, so an
 * ordinary copy would first read every destination line from memory (a
 * read for ownership) and then evict the line: twice the memory traffic.
 * The caller's unlock of w->mu orders the stores for the flushing thread
 * after the sfence.
 */
static void copy_rows(void *dst, const void *src, size_t len)
{
#if defined(__SSE2__) && defined(__x86_64__)
	uint8_t *d = dst;
	const uint8_t *s = src;
	if (len < 256 || (len & 7) || ((uintptr_t)d & 7)) {
		memcpy(dst, src, len);
		return;
	}
	if ((uintptr_t)d & 15) { /* ng_flow is 8 (mod 16) bytes: align to 16 */
		long long v;
		memcpy(&v, s, 8);
		_mm_stream_si64((long long *)d, v);
		d += 8, s += 8, len -= 8;
	}
	for (; len >= 64; d += 64, s += 64, len -= 64) {
		__m128i a = _mm_loadu_si128((const __m128i *)s);
		__m128i b = _mm_loadu_si128((const __m128i *)(s + 16));
		__m128i c = _mm_loadu_si128((const __m128i *)(s + 32));
		__m128i e = _mm_loadu_si128((const __m128i *)(s + 48));
		_mm_stream_si128((__m128i *)d, a);
		_mm_stream_si128((__m128i *)(d + 16), b);
		_mm_stream_si128((__m128i *)(d + 32), c);
		_mm_stream_si128((__m128i *)(d + 48), e);
	}
	for (; len >= 8; d += 8, s += 8, len -= 8) {
		long long v;
		memcpy(&v, s, 8);
		_mm_stream_si64((long long *)d, v);
	}
	_mm_sfence();
#else
	memcpy(dst, src, len);
#endif
}

ng_store_writer *ng_store_writer_open(const char *dir, char *err, size_t errlen)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/flows", dir);
	if (mkdir_p(path)) {
		snprintf(err, errlen, "cannot create store directory %s: %s", path, strerror(errno));
		return NULL;
	}
	if (access(path, W_OK)) {
		snprintf(err, errlen, "store directory %s is not writable: %s", path,
			 strerror(errno));
		return NULL;
	}
	snprintf(path, sizeof path, "%s/state", dir);
	if (mkdir_p(path)) {
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
	return w;
}

/* A chunk from the pool, or a new one; NULL when out of memory.  Under w->mu. */
static ng_flow *get_chunk(ng_store_writer *w)
{
	if (w->npool)
		return w->pool[--w->npool];
	return alloc_big(CHUNK_ROWS * sizeof(ng_flow));
}

/* Gives chunks back to the pool (freeing what it cannot keep).  Under w->mu. */
static void put_chunks(ng_store_writer *w, ng_flow **ch, size_t k)
{
	for (size_t i = 0; i < k; i++) {
		if (w->npool < POOL_KEEP)
			w->pool[w->npool++] = ch[i];
		else
			free(ch[i]);
		ch[i] = NULL;
	}
}

int ng_store_writer_append(ng_store_writer *w, const ng_flow *flows, size_t n)
{
	if (!n)
		return 0;
	pthread_mutex_lock(&w->mu);
	if (w->n + n > MAX_BUFFERED) {
		w->st.dropped += n;
		pthread_mutex_unlock(&w->mu);
		return -1;
	}
	/* every chunk the rows need first, so they are taken whole or not */
	size_t need = (w->n + n + CHUNK_ROWS - 1) >> CHUNK_SHIFT;
	while (w->nchunks < need) {
		ng_flow *c = get_chunk(w);
		if (!c) {
			w->st.dropped += n;
			pthread_mutex_unlock(&w->mu);
			return -1;
		}
		w->chunk[w->nchunks++] = c;
	}
	if (w->n == 0)
		w->first_ms = ng_now_ms();
	bool crossed = w->n < DUE_ROWS && w->n + n >= DUE_ROWS;
	while (n) {
		size_t at = w->n & (CHUNK_ROWS - 1), k = CHUNK_ROWS - at;
		k = k < n ? k : n;
		copy_rows(&w->chunk[w->n >> CHUNK_SHIFT][at], flows, k * sizeof *flows);
		w->n += k;
		flows += k;
		n -= k;
	}
	pthread_mutex_unlock(&w->mu);
	return crossed ? 1 : 0;
}

bool ng_store_writer_due(const ng_store_writer *w, uint64_t now_ms)
{
	ng_store_writer *mw = (ng_store_writer *)w; /* the mutex is not part of the value */
	pthread_mutex_lock(&mw->mu);
	bool due = (w->n >= DUE_ROWS || (w->n && now_ms >= w->first_ms + DUE_MS)) &&
		   now_ms >= w->retry_ms;
	pthread_mutex_unlock(&mw->mu);
	return due;
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
	free(w->ptrs);
	w->keys = alloc_big(n * 8);
	w->keys_tmp = alloc_big(n * 8);
	w->order = alloc_big(n * 4);
	w->order_tmp = alloc_big(n * 4);
	w->ptrs = alloc_big(n * sizeof *w->ptrs);
	if (!w->keys || !w->keys_tmp || !w->order || !w->order_tmp || !w->ptrs) {
		w->sort_cap = 0;
		return -1;
	}
	w->sort_cap = n;
	return 0;
}

/* Row i of the chunks being flushed. */
static const ng_flow *frow(const ng_store_writer *w, size_t i)
{
	return &w->fchunk[i >> CHUNK_SHIFT][i & (CHUNK_ROWS - 1)];
}

/*
 * Fills w->ptrs with the rows being flushed (n) in flow_start order
 * (stable).  LSD radix sort on flow_start - min in 11-bit digits: only as
 * many passes as the range needs (an hour of ms is 22 bits: 2 passes);
 * rows that are already sorted cost one check.
 */
static void sort_rows(ng_store_writer *w, size_t n)
{
	uint64_t mn = UINT64_MAX, mx = 0;
	bool sorted = true;
	for (size_t i = 0; i < n; i++) {
		uint64_t k = frow(w, i)->flow_start;
		w->order[i] = (uint32_t)i;
		w->keys[i] = k;
		if (i && k < w->keys[i - 1])
			sorted = false;
		mn = k < mn ? k : mn;
		mx = k > mx ? k : mx;
	}
	if (sorted) {
		for (size_t i = 0; i < n; i++)
			w->ptrs[i] = frow(w, i);
		return;
	}
	for (size_t i = 0; i < n; i++)
		w->keys[i] -= mn;
	uint64_t range = mx - mn;
	uint32_t *ord = w->order, *ord2 = w->order_tmp;
	uint64_t *key = w->keys, *key2 = w->keys_tmp;
	for (unsigned shift = 0; shift < 64 && (range >> shift); shift += 11) {
		size_t count[2048] = {0};
		for (size_t i = 0; i < n; i++)
			count[(key[i] >> shift) & 2047]++;
		size_t sum = 0;
		for (size_t d = 0; d < 2048; d++) {
			size_t c = count[d];
			count[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++) {
			size_t at = count[(key[i] >> shift) & 2047]++;
			key2[at] = key[i];
			ord2[at] = ord[i];
		}
		uint32_t *to = ord;
		ord = ord2;
		ord2 = to;
		uint64_t *tk = key;
		key = key2;
		key2 = tk;
	}
	for (size_t i = 0; i < n; i++)
		w->ptrs[i] = frow(w, ord[i]);
}

/* ---- writing one segment ------------------------------------------------ */

static int fsync_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int rc = fsync(fd);
	close(fd);
	return rc;
}

static int write_all(int fd, const uint8_t *p, size_t len)
{
	while (len) {
		ssize_t k = write(fd, p, len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p += k;
		len -= (size_t)k;
	}
	return 0;
}

/* Writes one encoded image as a segment of the hour of `start`. */
static int write_segment(ng_store_writer *w, const uint8_t *img, size_t len, uint64_t start,
			 uint64_t end)
{
	time_t secs = (time_t)(start / 1000);
	struct tm tm;
	gmtime_r(&secs, &tm);
	char hdir[4096], tmp[4200], final[4200];
	snprintf(hdir, sizeof hdir, "%s/flows/%04d/%02d/%02d/%02d", w->dir, tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour);
	if (mkdir_p(hdir)) {
		ng_error("store: cannot create %s: %s", hdir, strerror(errno));
		return -1;
	}
	snprintf(tmp, sizeof tmp, "%s/%llu-%llu-%llu.seg.%ld.tmp", hdir, (unsigned long long)start,
		 (unsigned long long)end, (unsigned long long)w->seq, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		ng_error("store: cannot create %s: %s", tmp, strerror(errno));
		return -1;
	}
	if (write_all(fd, img, len) || fsync(fd)) {
		ng_error("store: cannot write %s: %s", tmp, strerror(errno));
		close(fd);
		unlink(tmp);
		return -1;
	}
	close(fd);
	for (int tries = 0;; tries++) {
		snprintf(final, sizeof final, "%s/%llu-%llu-%llu.seg", hdir,
			 (unsigned long long)start, (unsigned long long)end,
			 (unsigned long long)w->seq++);
		if (renameat2(AT_FDCWD, tmp, AT_FDCWD, final, RENAME_NOREPLACE) == 0)
			break;
		if (errno == EEXIST && tries < 1000)
			continue;
		ng_error("store: cannot rename %s to %s: %s", tmp, final, strerror(errno));
		unlink(tmp);
		return -1;
	}
	if (fsync_dir(hdir))
		ng_warn("store: fsync of directory %s: %s", hdir, strerror(errno));
	return 0;
}

/* Encodes and writes *w->ptrs[lo..hi) (one hour) as segments of at most
 * MAX_SEGMENT_ROWS, adding to *done the rows made durable.  Returns 0 or -1. */
static int write_run(ng_store_writer *w, size_t lo, size_t hi, size_t *done, uint64_t *segments,
		     uint64_t *bytes)
{
	for (size_t a = lo; a < hi; a += MAX_SEGMENT_ROWS) {
		size_t b = hi - a > MAX_SEGMENT_ROWS ? a + MAX_SEGMENT_ROWS : hi;
		const uint8_t *img;
		size_t len;
		char err[256];
		if (ng_seg_encode_ptrs(w->enc, ng_fields, NG_FIELD_COUNT, w->ptrs + a, b - a, &img,
				       &len, err, sizeof err)) {
			ng_error("store: %s", err);
			return -1;
		}
		if (write_segment(w, img, len, w->ptrs[a]->flow_start, w->ptrs[b - 1]->flow_start))
			return -1;
		*done += b - a;
		*segments += 1;
		*bytes += len;
	}
	return 0;
}

/* Writes the n rows being flushed in flow_start order, one hour at a time.
 * *done is the number of rows made durable: the first *done of w->ptrs. */
static int write_rows(ng_store_writer *w, size_t n, size_t *done, uint64_t *segments,
		      uint64_t *bytes)
{
	*done = 0;
	if (sort_reserve(w, n)) {
		ng_error("store: out of memory sorting %zu rows", n);
		return -1;
	}
	sort_rows(w, n);
	size_t lo = 0;
	while (lo < n) {
		uint64_t hour = w->ptrs[lo]->flow_start / HOUR_MS;
		size_t hi = lo + 1;
		while (hi < n && w->ptrs[hi]->flow_start / HOUR_MS == hour)
			hi++;
		if (write_run(w, lo, hi, done, segments, bytes))
			return -1;
		lo = hi;
	}
	return 0;
}

/* After a failed flush: the rows not yet durable, *w->ptrs[done..n),
 * followed by those appended meanwhile, become the buffer again (under
 * w->mu; fresh chunks, the old ones go back to the pool). */
static void keep_for_retry(ng_store_writer *w, size_t n, size_t done)
{
	size_t left = n - done, total = left + w->n;
	size_t k = (total + CHUNK_ROWS - 1) >> CHUNK_SHIFT;
	ng_flow *ch[MAX_CHUNKS];
	size_t got = 0;
	while (got < k && (ch[got] = get_chunk(w)))
		got++;
	if (got < k) {
		ng_error("store: out of memory keeping %zu rows for a retry: dropped", left);
		w->st.dropped += left;
		put_chunks(w, ch, got);
		put_chunks(w, w->fchunk, w->nfchunks);
		return;
	}
	for (size_t i = 0; i < total; i++) {
		const ng_flow *r = i < left ? w->ptrs[done + i] : &w->chunk[(i - left) >> CHUNK_SHIFT]
							   [(i - left) & (CHUNK_ROWS - 1)];
		ch[i >> CHUNK_SHIFT][i & (CHUNK_ROWS - 1)] = *r;
	}
	put_chunks(w, w->fchunk, w->nfchunks);
	put_chunks(w, w->chunk, w->nchunks);
	memcpy(w->chunk, ch, k * sizeof *ch);
	w->nchunks = k;
	w->n = total;
}

int ng_store_writer_flush(ng_store_writer *w)
{
	pthread_mutex_lock(&w->flush_mu);
	pthread_mutex_lock(&w->mu);
	size_t n = w->n;
	uint64_t first_ms = w->first_ms;
	w->nfchunks = w->nchunks;
	memcpy(w->fchunk, w->chunk, w->nchunks * sizeof *w->chunk);
	memset(w->chunk, 0, w->nchunks * sizeof *w->chunk);
	w->nchunks = 0;
	w->n = 0;
	pthread_mutex_unlock(&w->mu);

	int rc = 0;
	size_t done = 0;
	uint64_t segments = 0, bytes = 0;
	if (n)
		rc = write_rows(w, n, &done, &segments, &bytes);

	pthread_mutex_lock(&w->mu);
	w->st.rows += done;
	w->st.segments += segments;
	w->st.bytes += bytes;
	if (rc == 0) {
		put_chunks(w, w->fchunk, w->nfchunks);
	} else {
		w->st.errors++;
		w->retry_ms = ng_now_ms() + RETRY_MS;
		w->first_ms = first_ms; /* the kept rows are the oldest */
		keep_for_retry(w, n, done);
	}
	w->nfchunks = 0;
	pthread_mutex_unlock(&w->mu);
	pthread_mutex_unlock(&w->flush_mu);
	return rc;
}

int ng_store_writer_close(ng_store_writer *w)
{
	if (!w)
		return 0;
	int rc = ng_store_writer_flush(w);
	pthread_mutex_destroy(&w->mu);
	pthread_mutex_destroy(&w->flush_mu);
	for (size_t i = 0; i < w->nchunks; i++)
		free(w->chunk[i]);
	for (size_t i = 0; i < w->npool; i++)
		free(w->pool[i]);
	free(w->keys);
	free(w->keys_tmp);
	free(w->order);
	free(w->order_tmp);
	free(w->ptrs);
	ng_seg_encoder_free(w->enc);
	free(w->dir);
	free(w);
	return rc;
}

char *ng_store_state_dir(const char *dir, char *buf, size_t len)
{
	if ((size_t)snprintf(buf, len, "%s/state", dir) >= len)
		return NULL;
	if (mkdir_p(buf))
		return NULL;
	return buf;
}
