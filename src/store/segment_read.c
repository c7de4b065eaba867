/*
 * segment_read.c — the segment reader: a segment file in, the values of
 * the columns a scan asks for out, one block of NG_SEG_BLOCK_ROWS rows at
 * a time (the bytes: segment.c).
 *
 * Opening reads the fixed header, then the whole header (fixed part and
 * directory), and validates it (ng_seg_parse_header, segment.c) before
 * anything else: a caller skips a bad segment before any of its rows.  A
 * column is loaded on first use, once per open (load_column): its stored
 * bytes in one pread, its frame table checked against S, its dictionary
 * decompressed and interned (DICT, MAP) or summed back (RANK).  A block is
 * then one zstd frame decompressed into r->raw (inflate_frame, which
 * checks the content size; zstd checks the content checksum; or the
 * query cache's copy of it, taken by reference: r->in) and its
 * planes turned into values of the field asked for:
 *
 *   ng_seg_read_block        the whole block (decode_planes; DELTA and
 *                            DIFF are undone as the planes are transposed)
 *   ng_seg_read_block_rows   only the rows a filter kept, picked from the
 *                            planes (pick_planes; DELTA decodes the block)
 *   ng_seg_read_block_codes  a RANK column's indexes and its dictionary,
 *                            for a filter that tests each value once
 *
 * A DIFF column needs its reference's block first, which may be DIFF too
 * (at most NG_SEG_MAX_DIFF_DEPTH deep, checked at open): r->ref keeps one
 * block per level, and ng_seg_read_block leaves the last 8-byte integer
 * block it decoded in r->ref[0], since a scan reads flow_start just
 * before flow_end.
 *
 * A column is read as the field asked for: an integer column of another
 * width is widened or truncated; a column of another type class, like a
 * column the segment lacks, reads as zeros.  Corruption the header cannot
 * show (a frame's checksum, an index beyond its dictionary, a key missing
 * from MAP's) fails that block with a message naming column and block.
 *
 * This runs on every query, on each worker of a parallel scan (a reader is
 * one thread's), so the per-row loops stay in this file next to their
 * callers (entries_of is inlined with `map` a constant), and what they
 * share with the encoder is static inline in segment_int.h.  Buffers are
 * kept from one open to the next.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <zstd.h>

#include "core/bigmem.h"
#include "core/bytes.h"
#include "core/strtab.h"
#include "store/keymap.h"
#include "store/segment.h"
#include "store/framecache.h"
#include "store/segment_int.h"
#include "store/shuffle.h"

/* ---- opening and closing --------------------------------------------- */

/* segment.h: a reader that holds nothing (fd -1). */
void ng_seg_reader_init(ng_seg_reader *r)
{
	memset(r, 0, sizeof *r);
	r->fd = -1;
}

/* Reads exactly len bytes at offset off of fd into buf, retrying short
 * reads and EINTR.  Returns 0, or -1 on an error or at end of file. */
static int read_at(int fd, void *buf, size_t len, uint64_t off)
{
	uint8_t *p = buf;
	while (len) {
		ssize_t k = pread(fd, p, len, (off_t)off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p += k;
		len -= (size_t)k;
		off += (uint64_t)k;
	}
	return 0;
}

/* segment.h: opens `path` and hands the descriptor to ng_seg_open_fd. */
int ng_seg_open(ng_seg_reader *r, const char *path, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ng_seg_close(r);
		ng_seg_errf(err, errlen, "cannot open: %s", strerror(errno));
		return -1;
	}
	return ng_seg_open_fd(r, fd, err, errlen);
}

/* The field whose full name is exactly `name` (short names are not
 * column names), or NULL.  Looked for from ng_fields[*next] on, wrapping
 * round, and *next set past the one found: the encoder writes columns in
 * field order, so each column of a segment is found at the first compare
 * (ng_field_by_name's case-insensitive walk of the whole table, twice a
 * field, was 11 us of the 20 us open of a 67-column header here). */
static const ng_field *field_named(const char *name, size_t *next)
{
	for (size_t n = 0; n < NG_FIELD_COUNT; n++) {
		const size_t k = (*next + n) % NG_FIELD_COUNT;
		if (!strcmp(ng_fields[k].name, name)) {
			*next = k + 1;
			return &ng_fields[k];
		}
	}
	return NULL;
}

/* segment.h.  Reads the fixed header first, to learn the header's size
 * (bounded by NG_SEG_MAX_COLUMNS entries, and by the file), then the
 * whole header into r->zbuf, parses it, and maps field IDs to columns.
 * Columns are not read here: load_column does, on first use. */
int ng_seg_open_fd(ng_seg_reader *r, int fd, char *err, size_t errlen)
{
	ng_seg_close(r);
	r->fd = fd;
	struct stat st;
	if (r->fd < 0 || fstat(r->fd, &st)) {
		ng_seg_errf(err, errlen, "cannot open: %s", strerror(errno));
		goto fail;
	}
	r->file_size = (uint64_t)st.st_size;
	r->dev = (uint64_t)st.st_dev;
	r->ino = (uint64_t)st.st_ino;
	r->mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec;
	uint8_t fixed[NG_SEG_FIXED_SIZE];
	if (r->file_size < NG_SEG_FIXED_SIZE || read_at(r->fd, fixed, sizeof fixed, 0)) {
		ng_seg_errf(err, errlen, "truncated: %llu bytes, shorter than the 64-byte header",
		            (unsigned long long)r->file_size);
		goto fail;
	}
	uint32_t hsize = ng_get_le32(fixed + 12);
	r->hsum = ng_get_le64(fixed + 56); /* the header checksum */
	if (memcmp(fixed, NG_SEG_MAGIC, 8) || hsize < NG_SEG_FIXED_SIZE || hsize > r->file_size ||
	    hsize > NG_SEG_FIXED_SIZE + NG_SEG_ENTRY_SIZE * NG_SEG_MAX_COLUMNS) {
		/* let the parser name the fault */
		ng_seg_parse_header(fixed, sizeof fixed, r->file_size, &r->h, err, errlen);
		if (!memcmp(fixed, NG_SEG_MAGIC, 8))
			ng_seg_errf(err, errlen,
			            "header size %u beyond the file (%llu bytes): truncated?",
			            hsize, (unsigned long long)r->file_size);
		goto fail;
	}
	if (ng_seg_reserve((uint8_t **)&r->zbuf, &r->zcap, hsize) ||
	    read_at(r->fd, r->zbuf, hsize, 0)) {
		ng_seg_errf(err, errlen, "cannot read the %u-byte header", hsize);
		goto fail;
	}
	if (ng_seg_parse_header(r->zbuf, hsize, r->file_size, &r->h, err, errlen))
		goto fail;
	r->gen++;
	if (r->h.ncols > r->cbcap) {
		ng_seg_colbuf *cb = realloc(r->cb, r->h.ncols * sizeof *cb);
		if (!cb) {
			ng_seg_errf(err, errlen, "out of memory");
			goto fail;
		}
		memset(cb + r->cbcap, 0, (r->h.ncols - r->cbcap) * sizeof *cb);
		r->cb = cb;
		r->cbcap = r->h.ncols;
	}
	for (uint32_t i = 0; i < r->h.ncols; i++)
		r->cb[i].is_ref = false;
	for (uint32_t i = 0; i < r->h.ncols; i++) /* ref < ncols: checked by the parser */
		if (r->h.cols[i].encoding == NG_ENC_DIFF || r->h.cols[i].encoding == NG_ENC_MAP)
			r->cb[r->h.cols[i].ref].is_ref = true;
	for (size_t f = 0; f < NG_FIELD_COUNT; f++)
		r->col_of_field[f] = -1;
	size_t next = 0;
	for (uint32_t i = 0; i < r->h.ncols; i++) {
		const ng_field *f = field_named(r->h.cols[i].name, &next);
		if (f && r->col_of_field[f->id] < 0)
			r->col_of_field[f->id] = (int)i;
	}
	return 0;
fail:
	ng_seg_close(r);
	return -1;
}

/* segment.h: the descriptor and the parsed header go; buffers stay. */
void ng_seg_close(ng_seg_reader *r)
{
	ng_frame_cache_release(&r->pin);
	r->in = NULL;
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	free(r->h.cols);
	memset(&r->h, 0, sizeof r->h);
}

/* segment.h: ng_seg_close, then every buffer, the zstd context too. */
void ng_seg_reader_free(ng_seg_reader *r)
{
	ng_seg_close(r);
	free(r->zbuf);
	free(r->raw);
	free(r->vals);
	for (int d = 0; d < NG_SEG_MAX_DIFF_DEPTH; d++)
		free(r->ref[d].v);
	for (size_t i = 0; i < r->cbcap; i++) {
		free(r->cb[i].z);
		free(r->cb[i].frame_off);
		free(r->cb[i].dict);
		free(r->cb[i].dictv);
		ng_keymap_free(&r->cb[i].kmap);
	}
	free(r->cb);
	ZSTD_freeDCtx(r->dctx);
	ng_seg_reader_init(r);
}

/* segment.h: B = ceil(N / NG_SEG_BLOCK_ROWS). */
size_t ng_seg_blocks(const ng_seg_reader *r)
{
	return (size_t)((r->h.rows + NG_SEG_BLOCK_ROWS - 1) / NG_SEG_BLOCK_ROWS);
}

/* segment.h: NG_SEG_BLOCK_ROWS, fewer in the last block, 0 beyond. */
size_t ng_seg_block_rows(const ng_seg_reader *r, size_t b)
{
	uint64_t lo = (uint64_t)b * NG_SEG_BLOCK_ROWS;
	if (lo >= r->h.rows)
		return 0;
	return r->h.rows - lo < NG_SEG_BLOCK_ROWS ? (size_t)(r->h.rows - lo) : NG_SEG_BLOCK_ROWS;
}

/* ---- a column, loaded once per open ---------------------------------- */

/* ng_seg_reserve() for a reader's column buffers, which a scan fills with pread
 * (a column's stored bytes: up to a few MiB): from 512 KiB on, whole huge
 * pages (2 MiB-aligned, a multiple of 2 MiB), of which the first touch
 * costs what one 4 KiB page's does (2/3 of a filtered scan's page faults
 * were these copies).  From 128 KiB on saved ~500 more faults of ~1900
 * on bench/query's filtered scan, but a reader of every column (a
 * listing, compaction) would then hold ~3x its columns' bytes (16 of 64
 * columns of 128 KiB..2 MiB: +24 MB), against +9 MB from 512 KiB.
 * Contents are not kept. */
static int reserve_big(uint8_t **buf, size_t *cap, size_t need)
{
	const size_t big = (size_t)512 << 10, huge = (size_t)2 << 20;
	if (need <= *cap)
		return 0;
	if (need < big)
		return ng_seg_reserve(buf, cap, need);
	size_t c = (need + huge - 1) / huge * huge;
	uint8_t *p = ng_alloc_big(c);
	if (!p)
		return -1;
	free(*buf);
	*buf = p;
	*cap = c;
	return 0;
}

/* Zstd frames of a column: one per block, plus the dictionary (DICT,
 * RANK), whose index frames are absent when it holds one string. */
static size_t column_frames(const ng_seg_reader *r, const ng_seg_column *c)
{
	if (c->encoding == NG_ENC_MAP)
		return 1;
	if (c->encoding != NG_ENC_DICT && c->encoding != NG_ENC_RANK)
		return ng_seg_blocks(r);
	return 1 + (c->decoded ? ng_seg_blocks(r) : 0);
}

/* Below: load_column's dictionaries need it, and it loads the column. */
static int inflate_frame(ng_seg_reader *r, uint32_t idx, size_t fr, size_t want, char *err,
                         size_t errlen);

/* Interns the k strings (u8 length, bytes) that fill p[0..len) of column
 * c's dictionary: ids[i] = the process-wide ID of string i.  Returns 0, or
 * -1 when they overrun or fall short of the len bytes. */
static int intern_strings(const ng_seg_column *c, const uint8_t *p, size_t len, uint32_t k,
                          uint32_t *ids, char *err, size_t errlen)
{
	const uint8_t *end = p + len;
	for (uint32_t i = 0; i < k; i++) {
		if (p >= end || p[0] > end - p - 1) {
			ng_seg_errf(err, errlen,
			            "column %s: dictionary entry %u beyond its %zu bytes", c->name,
			            i, len);
			return -1;
		}
		ids[i] = ng_intern((const char *)p + 1, p[0]);
		p += 1 + p[0];
	}
	if (p != end) {
		ng_seg_errf(err, errlen, "column %s: %zu bytes after the dictionary", c->name,
		            (size_t)(end - p));
		return -1;
	}
	return 0;
}

/* Decompresses a DICT column's dictionary and interns its strings:
 * cb->dict[i] = the process-wide ID of entry i. */
static int load_dict(ng_seg_reader *r, uint32_t idx, char *err, size_t errlen)
{
	const ng_seg_column *c = &r->h.cols[idx];
	ng_seg_colbuf *cb = &r->cb[idx];
	uint32_t k = ng_get_le32(c->minmax), dlen = ng_get_le32(c->minmax + 4);
	if (ng_seg_reserve((uint8_t **)&cb->dict, &cb->dictcap, (size_t)k * 4)) {
		ng_seg_errf(err, errlen, "out of memory for column %s", c->name);
		return -1;
	}
	if (inflate_frame(r, idx, 0, dlen, err, errlen))
		return -1;
	cb->entries = k;
	return intern_strings(c, r->in, dlen, k, cb->dict, err, errlen);
}

/* Decompresses a RANK column's dictionary: cb->dict[j] = the value of
 * entry j, undoing the differences.  K is the frame's content size / 4,
 * at least 2 and at most the segment's rows. */
static int load_ranks(ng_seg_reader *r, uint32_t idx, char *err, size_t errlen)
{
	const ng_seg_column *c = &r->h.cols[idx];
	ng_seg_colbuf *cb = &r->cb[idx];
	const uint8_t *frame = cb->z + cb->frame_off[0];
	unsigned long long fcs =
	    ZSTD_getFrameContentSize(frame, (size_t)(cb->frame_off[1] - cb->frame_off[0]));
	if (fcs == ZSTD_CONTENTSIZE_UNKNOWN || fcs == ZSTD_CONTENTSIZE_ERROR || fcs % 4 ||
	    fcs < 8 || fcs / 4 > r->h.rows) {
		ng_seg_errf(err, errlen,
		            "column %s: bad value dictionary (%lld bytes for %llu rows)", c->name,
		            (long long)fcs, (unsigned long long)r->h.rows);
		return -1;
	}
	const size_t k = (size_t)(fcs / 4);
	if (ng_seg_reserve((uint8_t **)&cb->dict, &cb->dictcap, k * 4)) {
		ng_seg_errf(err, errlen, "out of memory for column %s", c->name);
		return -1;
	}
	if (inflate_frame(r, idx, 0, k * 4, err, errlen))
		return -1;
	ng_unshuffle((uint8_t *)cb->dict, r->in, k, 4);
	for (size_t j = 1; j < k; j++) /* the differences summed */
		cb->dict[j] += cb->dict[j - 1];
	cb->entries = (uint32_t)k;
	static _Atomic uint64_t loads; /* stamps: one per dictionary loaded */
	cb->stamp = ++loads;
	return 0;
}

/* Decompresses a MAP column's dictionary: cb->dict[j] = the process-wide
 * ID of entry j's string, cb->kmap = each key's entry.  Keys must ascend
 * strictly (so none repeats). */
static int load_map(ng_seg_reader *r, uint32_t idx, char *err, size_t errlen)
{
	const ng_seg_column *c = &r->h.cols[idx];
	ng_seg_colbuf *cb = &r->cb[idx];
	const uint32_t k = ng_get_le32(c->minmax), dlen = ng_get_le32(c->minmax + 4);
	if (ng_seg_reserve((uint8_t **)&cb->dict, &cb->dictcap, (size_t)k * 4) ||
	    ng_keymap_reset(&cb->kmap, k)) {
		ng_seg_errf(err, errlen, "out of memory for column %s", c->name);
		return -1;
	}
	if (inflate_frame(r, idx, 0, dlen, err, errlen))
		return -1;
	const uint8_t *keys = r->in;
	for (uint32_t j = 0; j < k; j++) {
		uint32_t key = ng_get_le32(keys + 4 * (size_t)j);
		if (j && key <= ng_get_le32(keys + 4 * (size_t)(j - 1))) {
			ng_seg_errf(err, errlen, "column %s: key %u of entry %u does not ascend",
			            c->name, key, j);
			return -1;
		}
		if (ng_keymap_put(&cb->kmap, key, j) < -1) {
			ng_seg_errf(err, errlen, "out of memory for column %s", c->name);
			return -1;
		}
	}
	if (intern_strings(c, keys + 4 * (size_t)k, dlen - 4 * (size_t)k, k, cb->dict, err, errlen))
		return -1;
	cb->entries = k;
	return 0;
}

/* Reads column idx's stored bytes and its frame table, once per open. */
static int load_column(ng_seg_reader *r, uint32_t idx, char *err, size_t errlen)
{
	ng_seg_colbuf *cb = &r->cb[idx];
	if (cb->gen == r->gen)
		return 0;
	const ng_seg_column *c = &r->h.cols[idx];
	const size_t nb = column_frames(r, c);
	if (c->stored < 4 * (uint64_t)nb) {
		ng_seg_errf(err, errlen, "column %s: frame table truncated", c->name);
		return -1;
	}
	if (reserve_big(&cb->z, &cb->zcap, c->stored ? c->stored : 1) ||
	    ng_seg_reserve((uint8_t **)&cb->frame_off, &cb->offcap, (nb + 1) * 8)) {
		ng_seg_errf(err, errlen, "out of memory for column %s", c->name);
		return -1;
	}
	if (read_at(r->fd, cb->z, c->stored, c->offset)) {
		ng_seg_errf(err, errlen, "column %s: read error or file shrank", c->name);
		return -1;
	}
	uint64_t off = 4 * (uint64_t)nb;
	for (size_t b = 0; b < nb; b++) {
		cb->frame_off[b] = off;
		off += ng_get_le32(cb->z + 4 * b);
		if (off > c->stored)
			break;
	}
	cb->frame_off[nb] = off;
	if (off != c->stored) {
		ng_seg_errf(err, errlen, "column %s: frame sizes add up to %llu, not %llu", c->name,
		            (unsigned long long)off, (unsigned long long)c->stored);
		return -1;
	}
	cb->gen = r->gen;
	if ((c->encoding == NG_ENC_DICT && load_dict(r, idx, err, errlen)) ||
	    (c->encoding == NG_ENC_RANK && load_ranks(r, idx, err, errlen)) ||
	    (c->encoding == NG_ENC_MAP && load_map(r, idx, err, errlen))) {
		cb->gen = 0;
		return -1;
	}
	return 0;
}

/* Frame b of column idx (exactly `want` bytes) at r->in: decompressed
 * into r->raw, or the query cache's copy, pinned until the next call (or
 * ng_seg_close): what r->in points at is valid until then. */
static int inflate_frame(ng_seg_reader *r, uint32_t idx, size_t b, size_t want, char *err,
                         size_t errlen)
{
	const ng_seg_column *c = &r->h.cols[idx];
	ng_frame_cache_release(&r->pin);
	r->in = NULL;
	/* a frame another query inflated already (framecache.h): then the
	 * column's stored bytes are not even read (callers that use the
	 * column's buffers load it themselves) */
	const bool cache = !r->no_cache && ng_frame_cache_on();
	const ng_frame_key key = {.dev = r->dev,
	                          .ino = r->ino,
	                          .size = r->file_size,
	                          .mtime_ns = r->mtime_ns,
	                          .hsum = r->hsum,
	                          .column = idx,
	                          .frame = (uint32_t)b,
	                          .len = want};
	/* one block's buffer, at least a 16-byte column's block */
	if (ng_seg_reserve((uint8_t **)&r->raw, &r->rawcap,
	                   want > NG_SEG_BLOCK_ROWS * 16 ? want : NG_SEG_BLOCK_ROWS * 16)) {
		ng_seg_errf(err, errlen, "out of memory");
		return -1;
	}
	if (cache && (r->in = ng_frame_cache_acquire(&key, &r->pin)))
		return 0;
	if (load_column(r, idx, err, errlen))
		return -1;
	if (!r->dctx && !(r->dctx = ZSTD_createDCtx())) {
		ng_seg_errf(err, errlen, "out of memory");
		return -1;
	}
	const ng_seg_colbuf *cb = &r->cb[idx];
	const uint8_t *frame = cb->z + cb->frame_off[b];
	size_t fsize = (size_t)(cb->frame_off[b + 1] - cb->frame_off[b]);
	unsigned long long fcs = ZSTD_getFrameContentSize(frame, fsize);
	if (fcs != want) {
		ng_seg_errf(err, errlen,
		            "column %s block %zu: zstd frame content size %lld, expected %zu",
		            c->name, b, (long long)fcs, want);
		return -1;
	}
	size_t z = ZSTD_decompressDCtx(r->dctx, r->raw, want, frame, fsize);
	if (ZSTD_isError(z) || z != want) {
		ng_seg_errf(err, errlen, "column %s block %zu: %s", c->name, b,
		            ZSTD_isError(z) ? ZSTD_getErrorName(z) : "short zstd frame");
		return -1;
	}
	if (cache)
		ng_frame_cache_put(&key, r->raw);
	r->in = r->raw;
	return 0;
}

/* ---- planes to values ------------------------------------------------ */

/* Stores integer v in w bytes (truncating: a narrower field). */
static void store_uint(uint8_t *p, unsigned w, uint64_t v)
{
	switch (w) {
	case 1: *p = (uint8_t)v; break;
	case 2: ng_put_le16(p, (uint16_t)v); break;
	case 4: ng_put_le32(p, (uint32_t)v); break;
	default: ng_put_le64(p, v); break;
	}
}

/* True when column c can be read as field f: both integers (of any
 * widths), or the same type and width.  Otherwise f reads as zeros. */
static bool compatible(const ng_field *f, const ng_seg_column *c)
{
	if (ng_seg_is_int(f->type))
		return ng_seg_is_int(c->type);
	return c->type == f->type && c->width == f->size;
}

/* n values of field f from CONST column c's value (entry bytes 64..):
 * an integer stored in f's width, or the address or MAC as it is. */
static void fill_const(const ng_field *f, const ng_seg_column *c, uint8_t *out, size_t n)
{
	if (ng_seg_is_int(f->type)) {
		uint64_t v = ng_get_le64(c->minmax);
		for (size_t i = 0; i < n; i++)
			store_uint(out + i * f->size, f->size, v);
	} else {
		for (size_t i = 0; i < n; i++)
			memcpy(out + i * f->size, c->minmax, f->size);
	}
}

#ifdef __SSE2__
/* V4 planes p0..p3 (n rows) to IPv4-mapped addresses at out, 16 rows at a
 * time in SSE2 registers (baseline on x86-64): ~3.5× the scalar loop, and
 * every query on an address column of an IPv4 network decodes it.
 * Returns the rows done (a multiple of 16; the caller does the rest). */
static size_t v4_expand16(const uint8_t *p0, size_t n, uint8_t *out)
{
	const uint8_t *p1 = p0 + n, *p2 = p1 + n, *p3 = p2 + n;
	const __m128i mid = _mm_set1_epi32((int)UINT32_C(0xffff0000)), zero = _mm_setzero_si128();
	size_t i = 0;
	for (; i + 16 <= n; i += 16) {
		__m128i a = _mm_loadu_si128((const __m128i *)(const void *)(p0 + i));
		__m128i b = _mm_loadu_si128((const __m128i *)(const void *)(p1 + i));
		__m128i c = _mm_loadu_si128((const __m128i *)(const void *)(p2 + i));
		__m128i d = _mm_loadu_si128((const __m128i *)(const void *)(p3 + i));
		__m128i ab0 = _mm_unpacklo_epi8(a, b), ab1 = _mm_unpackhi_epi8(a, b);
		__m128i cd0 = _mm_unpacklo_epi8(c, d), cd1 = _mm_unpackhi_epi8(c, d);
		const __m128i v[4] = {_mm_unpacklo_epi16(ab0, cd0), _mm_unpackhi_epi16(ab0, cd0),
		                      _mm_unpacklo_epi16(ab1, cd1), _mm_unpackhi_epi16(ab1, cd1)};
		__m128i *o = (__m128i *)(void *)(out + i * 16);
		for (int q = 0; q < 4; q++) { /* 4 addresses: 8 zero bytes, 00 00 ff ff, v */
			__m128i h0 = _mm_unpacklo_epi32(mid, v[q]),
			        h1 = _mm_unpackhi_epi32(mid, v[q]);
			_mm_storeu_si128(o + 4 * q, _mm_unpacklo_epi64(zero, h0));
			_mm_storeu_si128(o + 4 * q + 1, _mm_unpackhi_epi64(zero, h0));
			_mm_storeu_si128(o + 4 * q + 2, _mm_unpacklo_epi64(zero, h1));
			_mm_storeu_si128(o + 4 * q + 3, _mm_unpackhi_epi64(zero, h1));
		}
	}
	return i;
}
#else
/* Without SSE2 the caller's scalar loop does every row. */
static size_t v4_expand16(const uint8_t *p0, size_t n, uint8_t *out)
{
	(void)p0, (void)n, (void)out;
	return 0;
}
#endif

/* out[i] = the running sum of ng_seg_unzigzag(value i) of the n 8-byte values
 * whose planes are `in` (DELTA), or refv[i] + ng_seg_unzigzag(value i) (DIFF,
 * refv set).  The values are undone as the planes are transposed, 8 at a
 * time in registers: one pass over the block instead of two. */
static void undo_delta_diff(const uint8_t *in, size_t n, const uint64_t *refv, uint8_t *out)
{
	uint64_t prev = 0;
	size_t i0 = 0;
	for (; i0 + 8 <= n; i0 += 8) {
		uint64_t a[8];
		for (unsigned k = 0; k < 8; k++)
			memcpy(&a[k], in + (size_t)k * n + i0, 8);
		ng_transpose8(a);
		if (refv)
			for (unsigned k = 0; k < 8; k++)
				a[k] = refv[i0 + k] + ng_seg_unzigzag(a[k]);
		else
			for (unsigned k = 0; k < 8; k++)
				a[k] = prev += ng_seg_unzigzag(a[k]);
		memcpy(out + i0 * 8, a, 64);
	}
	for (size_t i = i0; i < n; i++) {
		uint64_t z = 0;
		for (unsigned k = 0; k < 8; k++)
			z |= (uint64_t)in[(size_t)k * n + i] << (8 * k);
		ng_put_le64(out + i * 8,
		            refv ? refv[i] + ng_seg_unzigzag(z) : (prev += ng_seg_unzigzag(z)));
	}
}

/* Turns the n decompressed rows of planes at r->in into field values at
 * `out` (DIFF: plus the reference values `refv`). */
static void decode_planes(const ng_seg_reader *r, const ng_field *f, const ng_seg_column *c,
                          size_t n, const uint64_t *refv, uint8_t *out)
{
	const uint8_t *in = r->in;
	if (c->encoding == NG_ENC_V4) {
		const uint8_t *p0 = in, *p1 = in + n, *p2 = in + 2 * n, *p3 = in + 3 * n;
		const uint64_t lo = 0;
		const uint32_t mid = UINT32_C(0xffff0000); /* bytes 8..11: 00 00 ff ff */
		for (size_t i = v4_expand16(p0, n, out); i < n; i++) {
			uint8_t *o = out + i * 16;
			uint32_t v = (uint32_t)p0[i] | (uint32_t)p1[i] << 8 |
			             (uint32_t)p2[i] << 16 | (uint32_t)p3[i] << 24;
			memcpy(o, &lo, 8);
			memcpy(o + 8, &mid, 4);
			memcpy(o + 12, &v, 4);
		}
		return;
	}
	if (c->width == f->size && c->encoding == NG_ENC_PLAIN) {
		ng_unshuffle(out, in, n, c->width);
		return;
	}
	if (f->size == 8 && c->encoding != NG_ENC_PLAIN) { /* DELTA, DIFF */
		undo_delta_diff(in, n, c->encoding == NG_ENC_DIFF ? refv : NULL, out);
		return;
	}
	/* integer width change (a field widened or narrowed since) */
	uint64_t prev = 0;
	unsigned sw = ng_seg_stored_width(c);
	for (size_t i = 0; i < n; i++) {
		uint64_t v = 0;
		for (unsigned k = 0; k < sw; k++)
			v |= (uint64_t)in[(size_t)k * n + i] << (8 * k);
		if (c->encoding == NG_ENC_DELTA)
			v = prev += ng_seg_unzigzag(v);
		else if (c->encoding == NG_ENC_DIFF)
			v = refv[i] + ng_seg_unzigzag(v);
		store_uint(out + i * f->size, f->size, v);
	}
}

/* ---- dictionary indexes (DICT, RANK), keys (MAP), references (DIFF) -- */

/* True when the n bytes at p are all zero (vectorizes: an OR of words). */
static bool all_zero(const uint8_t *p, size_t n)
{
	uint8_t acc = 0;
	for (size_t i = 0; i < n; i++)
		acc |= p[i];
	return acc == 0;
}

/* Rows lo + sel[m] (m < k; sel NULL: rows lo + m) of block b of DICT or
 * RANK column idx: the rows' entry indexes (map false), or the
 * dictionary's IDs (DICT) or values (RANK) of those entries (map true).
 * Each row's index is read from its four planes (an index ≥ K is
 * corruption).  Inlined with `map` a constant: no branch on it per row. */
static inline __attribute__((always_inline)) int
entries_of(ng_seg_reader *r, uint32_t idx, size_t b, size_t lo, const uint32_t *sel, size_t k,
           uint32_t *out, bool map, char *err, size_t errlen)
{
	const ng_seg_column *c = &r->h.cols[idx];
	const size_t n = ng_seg_block_rows(r, b);
	if (load_column(r, idx, err, errlen))
		return -1;
	const uint32_t *dict = r->cb[idx].dict, entries = r->cb[idx].entries;
	if (!c->decoded) {
		for (size_t m = 0; m < k; m++)
			out[m] = map ? dict[0] : 0;
		return 0;
	}
	if (inflate_frame(r, idx, b + 1, n * 4, err, errlen))
		return -1;
	const uint8_t *p0 = r->in, *p1 = p0 + n, *p2 = p1 + n, *p3 = p2 + n;
	uint32_t bad = 0;
	if (!sel && entries <= 65536 && all_zero(p2, 2 * n)) {
		/* a whole block of indexes below 2^16 (the usual case): once
		 * the two high planes are known to be zeros, the low two alone
		 * make the index; no branch in the loop */
		for (size_t m = 0; m < k; m++) {
			uint32_t e = (uint32_t)p0[lo + m] | (uint32_t)p1[lo + m] << 8;
			bad |= e >= entries;
			out[m] = map ? dict[e < entries ? e : 0] : e;
		}
	} else {
		for (size_t m = 0; m < k; m++) {
			size_t i = lo + (sel ? sel[m] : m);
			uint32_t e = (uint32_t)p0[i] | (uint32_t)p1[i] << 8 |
			             (uint32_t)p2[i] << 16 | (uint32_t)p3[i] << 24;
			bad |= e >= entries;
			out[m] = map ? dict[e < entries ? e : 0] : e;
		}
	}
	if (bad) {
		ng_seg_errf(err, errlen,
		            "column %s block %zu: dictionary index beyond its %u entries", c->name,
		            b, entries);
		return -1;
	}
	return 0;
}

/* entries_of, mapped: the rows' string IDs (DICT) or values (RANK). */
static int dict_ids(ng_seg_reader *r, uint32_t idx, size_t b, size_t lo, const uint32_t *sel,
                    size_t k, uint32_t *out, char *err, size_t errlen)
{
	return entries_of(r, idx, b, lo, sel, k, out, true, err, errlen);
}

/* The k values v[] of a RANK column (IPv4 addresses as numbers when
 * `addr`) as values of field f into out[k × f->size]: IPv4-mapped
 * addresses, or integers of f's width. */
static void rank_to_field(bool addr, const ng_field *f, const uint32_t *v, size_t k, uint8_t *out)
{
	if (addr) {
		for (size_t m = 0; m < k; m++) {
			uint32_t be = __builtin_bswap32(v[m]);
			memcpy(out + m * 16, ng_seg_v4_prefix, 12);
			memcpy(out + m * 16 + 12, &be, 4);
		}
	} else {
		for (size_t m = 0; m < k; m++)
			store_uint(out + m * f->size, f->size, v[m]);
	}
}

/* Rows lo + sel[m] (m < k; sel NULL: rows lo + m) of block b of RANK
 * column idx into out[k × f->size]: the entries' values as IPv4-mapped
 * addresses (an address column) or as integers of f's width. */
static int rank_values(ng_seg_reader *r, uint32_t idx, const ng_field *f, size_t b, size_t lo,
                       const uint32_t *sel, size_t k, uint8_t *out, char *err, size_t errlen)
{
	const bool addr = r->h.cols[idx].type == NG_FT_ADDR, direct = !addr && f->size == 4;
	if (!direct && !r->vals && !(r->vals = malloc(NG_SEG_BLOCK_ROWS * 4))) {
		ng_seg_errf(err, errlen, "out of memory");
		return -1;
	}
	uint32_t *v = direct ? (uint32_t *)(void *)out : r->vals;
	if (dict_ids(r, idx, b, lo, sel, k, v, err, errlen))
		return -1;
	if (!direct)
		rank_to_field(addr, f, v, k, out);
	return 0;
}

/* A DIFF reference's or a MAP key's block is decoded as u64 values. */
static const ng_field u64_field = {.type = NG_FT_U64, .size = 8};

/* Below: a reference block is a block of its own column (recursion). */
static int read_entry_block(ng_seg_reader *r, uint32_t idx, const ng_field *f, size_t b, void *out,
                            int depth, char *err, size_t errlen);

/* Block b of column idx as u64 values, decoded (at `depth` in a DIFF
 * chain) into r->ref[slot] unless that holds them already.  Returns
 * them, or NULL with a message. */
static const uint64_t *u64_block(ng_seg_reader *r, uint32_t idx, size_t b, int slot, int depth,
                                 char *err, size_t errlen)
{
	struct ng_seg_refbuf *rb = &r->ref[slot];
	if (rb->gen == r->gen && rb->idx == idx && rb->block == b)
		return rb->v;
	if (!rb->v && !(rb->v = malloc(NG_SEG_BLOCK_ROWS * 8))) {
		ng_seg_errf(err, errlen, "out of memory for column %s", r->h.cols[idx].name);
		return NULL;
	}
	rb->gen = 0;
	if (read_entry_block(r, idx, &u64_field, b, rb->v, depth, err, errlen))
		return NULL;
	rb->gen = r->gen;
	rb->idx = idx;
	rb->block = b;
	return rb->v;
}

/* Block b of the reference column of DIFF column c (at `depth` in its
 * chain), kept in r->ref[depth].  Returns the values, or NULL with a
 * message. */
static const uint64_t *ref_block(ng_seg_reader *r, const ng_seg_column *c, size_t b, int depth,
                                 char *err, size_t errlen)
{
	/* chains are at most NG_SEG_MAX_DIFF_DEPTH long (checked at open) */
	return u64_block(r, c->ref, b, depth, depth + 1, err, errlen);
}

/* Rows lo + sel[m] (m < k; sel NULL: rows lo + m) of block b of MAP
 * column idx (at `depth`, 0: no DIFF chain reaches a MAP column) into
 * out[k]: the string ID of each row's key.  A key the dictionary lacks is
 * corruption. */
static int map_rows(ng_seg_reader *r, uint32_t idx, size_t b, size_t lo, const uint32_t *sel,
                    size_t k, uint32_t *out, int depth, char *err, size_t errlen)
{
	const ng_seg_column *c = &r->h.cols[idx];
	if (load_column(r, idx, err, errlen))
		return -1;
	const uint64_t *keys = ref_block(r, c, b, depth, err, errlen);
	if (!keys)
		return -1;
	const ng_seg_colbuf *cb = &r->cb[idx];
	uint64_t last = UINT64_MAX; /* rows of one key in a row: one lookup */
	uint32_t j = 0;
	for (size_t m = 0; m < k; m++) {
		const uint64_t key = keys[lo + (sel ? sel[m] : m)];
		if (key != last &&
		    (key > UINT32_MAX || !ng_keymap_get(&cb->kmap, (uint32_t)key, &j))) {
			ng_seg_errf(err, errlen,
			            "column %s block %zu: key %llu not in its dictionary", c->name,
			            b, (unsigned long long)key);
			return -1;
		}
		last = key;
		out[m] = cb->dict[j];
	}
	return 0;
}

/* ---- whole blocks ---------------------------------------------------- */

/* Decodes block b of directory entry idx as values of f's type and size;
 * `depth` is the level in a DIFF chain (0 for the column asked for). */
static int read_entry_block(ng_seg_reader *r, uint32_t idx, const ng_field *f, size_t b, void *out,
                            int depth, char *err, size_t errlen)
{
	const ng_seg_column *c = &r->h.cols[idx];
	const size_t n = ng_seg_block_rows(r, b);
	if (c->encoding == NG_ENC_CONST) {
		fill_const(f, c, out, n);
		return 0;
	}
	const uint64_t *refv = NULL;
	if (c->encoding == NG_ENC_DIFF && !(refv = ref_block(r, c, b, depth, err, errlen)))
		return -1;
	if (c->encoding == NG_ENC_DICT) /* compatible(): a 4-byte string field */
		return dict_ids(r, idx, b, 0, NULL, n, out, err, errlen);
	if (c->encoding == NG_ENC_RANK)
		return rank_values(r, idx, f, b, 0, NULL, n, out, err, errlen);
	if (c->encoding == NG_ENC_MAP)
		return map_rows(r, idx, b, 0, NULL, n, out, depth, err, errlen);
	if (inflate_frame(r, idx, b, n * ng_seg_stored_width(c), err, errlen))
		return -1;
	decode_planes(r, f, c, n, refv, out);
	return 0;
}

/* segment.h: a linear search of the directory (tests, rollups). */
int ng_seg_find_column(const ng_seg_reader *r, const char *name)
{
	for (uint32_t i = 0; i < r->h.ncols; i++)
		if (!strcmp(r->h.cols[i].name, name))
			return (int)i;
	return -1;
}

/* segment.h.  As ng_seg_read_block by directory index, without keeping
 * the block as a DIFF reference. */
int ng_seg_read_entry(ng_seg_reader *r, uint32_t idx, const ng_field *f, size_t b, void *out,
                      char *err, size_t errlen)
{
	if (b >= ng_seg_blocks(r) || idx >= r->h.ncols) {
		ng_seg_errf(err, errlen, "block %zu or column %u beyond the segment", b, idx);
		return -1;
	}
	if (!compatible(f, &r->h.cols[idx])) {
		memset(out, 0, ng_seg_block_rows(r, b) * f->size);
		return 0;
	}
	return read_entry_block(r, idx, f, b, out, 0, err, errlen);
}

/* segment.h.  PLAIN, DIFF and V4 frames are only decompressed (zstd checks
 * their content size and checksum; any bytes are then valid planes);
 * the others are decoded whole: a DELTA block's values (flow_start's are
 * checked by the caller), a dictionary's indexes and keys. */
int ng_seg_check_block(ng_seg_reader *r, uint32_t idx, const ng_field *f, size_t b, void *out,
                       char *err, size_t errlen)
{
	const ng_seg_column *c = &r->h.cols[idx];
	const bool no_cache = r->no_cache;
	r->no_cache = true; /* a check reads the file's own bytes */
	int rc =
	    c->encoding == NG_ENC_PLAIN || c->encoding == NG_ENC_DIFF || c->encoding == NG_ENC_V4
	        ? inflate_frame(r, idx, b, ng_seg_block_rows(r, b) * ng_seg_stored_width(c), err,
	                        errlen)
	        : ng_seg_read_entry(r, idx, f, b, out, err, errlen);
	r->no_cache = no_cache;
	return rc;
}

/* segment.h.  A column the segment lacks, or holds with another type,
 * reads as zeros. */
int ng_seg_read_block(ng_seg_reader *r, const ng_field *f, size_t b, void *out, char *err,
                      size_t errlen)
{
	int idx = r->col_of_field[f->id];
	if (b >= ng_seg_blocks(r)) {
		ng_seg_errf(err, errlen, "block %zu beyond the segment", b);
		return -1;
	}
	if (idx < 0 || !compatible(f, &r->h.cols[idx])) {
		memset(out, 0, ng_seg_block_rows(r, b) * f->size);
		return 0;
	}
	if (read_entry_block(r, (uint32_t)idx, f, b, out, 0, err, errlen))
		return -1;
	/* A 64-bit integer column just decoded is what a DIFF column that
	 * refers to it needs next (flow_end after flow_start): keep a copy
	 * rather than decode it twice.  Only of a column some DIFF or MAP
	 * column refers to: copying every 8-byte column (bytes, packets)
	 * was a tenth of a warm query's time. */
	struct ng_seg_refbuf *rb = &r->ref[0];
	if (ng_seg_is_int(f->type) && f->size == 8 && r->cb[idx].is_ref &&
	    (rb->v || (rb->v = malloc(NG_SEG_BLOCK_ROWS * 8)))) {
		memcpy(rb->v, out, ng_seg_block_rows(r, b) * 8);
		rb->gen = r->gen;
		rb->idx = (uint32_t)idx;
		rb->block = b;
	}
	return 0;
}

/* segment.h: ng_seg_read_block for every block, one after the other. */
int ng_seg_read_column(ng_seg_reader *r, const ng_field *f, void *out, char *err, size_t errlen)
{
	const size_t nb = ng_seg_blocks(r);
	for (size_t b = 0; b < nb; b++)
		if (ng_seg_read_block(r, f, b, (uint8_t *)out + b * NG_SEG_BLOCK_ROWS * f->size,
		                      err, errlen))
			return -1;
	return 0;
}

/* segment.h.  Column by column through colbuf, each copied into the
 * records' field (compaction reads whole segments so). */
int ng_seg_read_rows(ng_seg_reader *r, ng_colset columns, ng_flow *out, uint8_t *colbuf, char *err,
                     size_t errlen)
{
	assert(ng_colset_subset(columns, ng_colset_all()));
	const size_t n = (size_t)r->h.rows;
	memset(out, 0, n * sizeof *out);
	ng_colset left = columns;
	for (int f; (f = ng_colset_pop(&left)) >= 0;) {
		const ng_field *fd = &ng_fields[f];
		if (ng_seg_read_column(r, fd, colbuf, err, errlen))
			return -1;
		for (size_t i = 0; i < n; i++)
			memcpy((uint8_t *)&out[i] + fd->offset, colbuf + i * fd->size, fd->size);
	}
	return 0;
}

/* ---- the rows a filter kept ------------------------------------------ */

/* Rows lo + sel[m] (m < k) of the planes of one block at r->in (n rows;
 * PLAIN, V4 or DIFF, whose reference block is refv) into out[m × f->size]:
 * each kept row's bytes are picked from the planes, without turning the
 * whole block into values. */
static void pick_planes(const ng_seg_reader *r, const ng_field *f, const ng_seg_column *c, size_t n,
                        const uint64_t *refv, size_t lo, const uint32_t *sel, size_t k,
                        uint8_t *out)
{
	const uint8_t *in = r->in;
	if (c->encoding == NG_ENC_V4) {
		for (size_t m = 0; m < k; m++) {
			size_t i = lo + sel[m];
			uint8_t *o = out + m * 16;
			memcpy(o, ng_seg_v4_prefix, 12);
			o[12] = in[i], o[13] = in[n + i], o[14] = in[2 * n + i],
			o[15] = in[3 * n + i];
		}
		return;
	}
	if (c->encoding == NG_ENC_PLAIN && c->width == f->size) { /* byte k from plane k */
		for (unsigned p = 0; p < c->width; p++) {
			const uint8_t *plane = in + (size_t)p * n + lo;
			for (size_t m = 0; m < k; m++)
				out[m * c->width + p] = plane[sel[m]];
		}
		return;
	}
	/* integers: DIFF, or PLAIN of another width than the field's */
	const unsigned sw = ng_seg_stored_width(c);
	for (size_t m = 0; m < k; m++) {
		size_t i = lo + sel[m];
		uint64_t v = 0;
		for (unsigned p = 0; p < sw; p++)
			v |= (uint64_t)in[(size_t)p * n + i] << (8 * p);
		if (c->encoding == NG_ENC_DIFF)
			v = refv[i] + ng_seg_unzigzag(v);
		store_uint(out + m * f->size, f->size, v);
	}
}

/* DELTA rows lo + sel[m] of block b of column idx: a value depends on
 * every one before it, so the block is decoded whole, into r->ref[0]
 * (where a DIFF column that refers to it, flow_end, finds it next). */
static int pick_delta(ng_seg_reader *r, uint32_t idx, const ng_field *f, size_t b, size_t lo,
                      const uint32_t *sel, size_t k, uint8_t *out, char *err, size_t errlen)
{
	const uint64_t *v = u64_block(r, idx, b, 0, 0, err, errlen);
	if (!v)
		return -1;
	for (size_t m = 0; m < k; m++)
		store_uint(out + m * f->size, f->size, v[lo + sel[m]]);
	return 0;
}

/* segment.h.  Each encoding its own way: CONST fills, DELTA decodes the
 * whole block, the dictionary encodings map the kept rows' indexes, the
 * others pick the rows' bytes from the planes. */
int ng_seg_read_block_rows(ng_seg_reader *r, const ng_field *f, size_t b, size_t lo,
                           const uint32_t *sel, size_t k, void *out, char *err, size_t errlen)
{
	int idx = r->col_of_field[f->id];
	if (b >= ng_seg_blocks(r)) {
		ng_seg_errf(err, errlen, "block %zu beyond the segment", b);
		return -1;
	}
	if (idx < 0 || !compatible(f, &r->h.cols[idx])) {
		memset(out, 0, k * f->size);
		return 0;
	}
	const ng_seg_column *c = &r->h.cols[idx];
	const size_t n = ng_seg_block_rows(r, b);
	const uint64_t *refv = NULL;
	switch (c->encoding) {
	case NG_ENC_CONST: fill_const(f, c, out, k); return 0;
	case NG_ENC_DELTA: return pick_delta(r, (uint32_t)idx, f, b, lo, sel, k, out, err, errlen);
	case NG_ENC_DICT: return dict_ids(r, (uint32_t)idx, b, lo, sel, k, out, err, errlen);
	case NG_ENC_RANK: return rank_values(r, (uint32_t)idx, f, b, lo, sel, k, out, err, errlen);
	case NG_ENC_MAP: return map_rows(r, (uint32_t)idx, b, lo, sel, k, out, 0, err, errlen);
	case NG_ENC_DIFF:
		if (!(refv = ref_block(r, c, b, 0, err, errlen)))
			return -1;
		break;
	default: break;
	}
	if (inflate_frame(r, (uint32_t)idx, b, n * ng_seg_stored_width(c), err, errlen))
		return -1;
	pick_planes(r, f, c, n, refv, lo, sel, k, out);
	return 0;
}

/* ---- dictionary codes ------------------------------------------------ */

int ng_seg_read_block_codes(ng_seg_reader *r, const ng_field *f, size_t b, uint32_t *codes,
                            const void **values, uint32_t *k, uint64_t *stamp, char *err,
                            size_t errlen)
{
	int idx = r->col_of_field[f->id];
	if (b >= ng_seg_blocks(r) || idx < 0 || !compatible(f, &r->h.cols[idx]) ||
	    r->h.cols[idx].encoding != NG_ENC_RANK)
		return 0;
	if (entries_of(r, (uint32_t)idx, b, 0, NULL, ng_seg_block_rows(r, b), codes, false, err,
	               errlen))
		return -1;
	ng_seg_colbuf *cb = &r->cb[idx];
	const bool addr = r->h.cols[idx].type == NG_FT_ADDR;
	if (!addr && f->size == 4) {
		*values = cb->dict; /* u32 integers: the entries as they are */
	} else {
		/* converted once per dictionary and field width */
		if (cb->vstamp != cb->stamp || cb->vsize != f->size) {
			if (ng_seg_reserve(&cb->dictv, &cb->dictvcap,
			                   (size_t)cb->entries * f->size)) {
				ng_seg_errf(err, errlen, "out of memory for column %s",
				            r->h.cols[idx].name);
				return -1;
			}
			rank_to_field(addr, f, cb->dict, cb->entries, cb->dictv);
			cb->vstamp = cb->stamp;
			cb->vsize = f->size;
		}
		*values = cb->dictv;
	}
	*k = cb->entries;
	*stamp = cb->stamp;
	return 1;
}
