/*
 * segment.c — the segment file: flow records stored column by column.
 *
 * A segment holds the rows of one flush that fall in one UTC hour of
 * flow_start, sorted by flow_start.  It is written once (to a temporary
 * name, fsynced, renamed: see writer.c) and never changed.  Every field of
 * the table ng_fields[] (src/core/field.c) is a column named by its field
 * name, so the table drives the format: a field added to the table is a new
 * column; a reader gives zeros for a column a segment lacks and ignores a
 * column it does not know.
 *
 * FORMAT (version 1).  All integers are little-endian.
 *
 *   Fixed header, 64 bytes:
 *     offset size  meaning
 *          0    8  magic "NGFLOWSG"
 *          8    2  format version, 1
 *         10    2  C, number of columns (1..1024)
 *         12    4  H, header size in bytes = 64 + 80 × C
 *         16    8  N, number of rows (0..2^28)
 *         24    8  smallest flow_start (ms since the epoch) = first row's
 *         32    8  largest flow_start = last row's
 *         40    8  smallest flow_end
 *         48    8  largest flow_end
 *         56    8  header checksum: 64-bit FNV-1a of bytes [0, H) with
 *                  these 8 bytes taken as zero
 *
 *   Column directory, C entries of 80 bytes, from offset 64:
 *     offset size  meaning
 *          0   32  column name (the field name), NUL-padded, 1..31 chars
 *         32    1  field type when written (enum ng_field_type: 0 u8,
 *                  1 u16, 2 u32, 3 u64, 4 time, 5 address, 6 MAC,
 *                  7 string)
 *         33    1  W, bytes per value: 1, 2, 4, 8 (integers), 16 (address),
 *                  6 (MAC), 4 (string)
 *         34    1  encoding (below)
 *         35    1  reserved, zero
 *         36    2  DIFF: directory index of the reference column; else 0
 *         38    2  reserved, zero
 *         40    8  offset of the column's stored bytes from the file start
 *         48    8  S, stored size in bytes (0 for CONST)
 *         56    8  D, size after zstd decompression (0 for CONST)
 *         64   16  integers: min (8 bytes) then max (8 bytes) of the
 *                  column, a zone map; CONST address/MAC: the value (W
 *                  bytes, zero-padded); V4 (and RANK addresses): the smallest and largest
 *                  IPv4 address as numbers (u32 a << 24 | b << 16 | c << 8
 *                  | d, then 8 zero bytes; both 0 when written by a build
 *                  without it); DICT: K, the dictionary's entry
 *                  count (u32), then L, its size in bytes (u32), then 8
 *                  zero bytes; otherwise zero
 *
 *   Column data follows the directory, columns in directory order.  The
 *   rows are cut into blocks of 16384 (NG_SEG_BLOCK_ROWS; the last block
 *   holds the rest), B = ceil(N / 16384) blocks.  A non-constant column's
 *   S bytes are:
 *         4 × B   the size of each block's zstd frame (u32)
 *         ...     B zstd frames, one per block, in order
 *   Each frame carries the content size and content checksum (XXH64)
 *   flags, so decompression verifies the data; a block decodes on its own,
 *   and a scan works one block at a time with every column of the block in
 *   cache.  D is the sum of the frames' content sizes.
 *
 *   Encodings (applied before zstd):
 *     0 CONST  every row holds the same value: integers min = max = value,
 *              address/MAC in bytes 64.. of the entry; no data (S = D = 0).
 *     1 PLAIN  values of W bytes, byte-plane shuffled per block: byte k of
 *              the block's value i is at k × n + i (n: the block's rows).
 *              D = N × W.  (Counters and ports are small
 *              numbers: the high planes are runs of zeros that zstd folds
 *              to nothing; addresses share prefixes the same way.)
 *     2 DELTA  times (W = 8): value i minus value i-1 (0 before a block's
 *              first row), as a zigzag integer ((d << 1) ^ (d >> 63)), then
 *              shuffled as PLAIN.  flow_start is sorted: small deltas.
 *     3 V4     addresses (W = 16) when every row is IPv4-mapped
 *              (::ffff:a.b.c.d): the 4 IPv4 bytes of each row, shuffled
 *              (4 planes a block).  D = N × 4.
 *     4 DIFF   integers: value i minus row i of the reference column
 *              (entry bytes 36..37), as a zigzag 8-byte integer, shuffled
 *              as PLAIN; D = N × 8.  The reference is an integer column;
 *              following references meets at most 2 DIFF columns
 *              (time_received → flow_end → flow_start).  Used for flow_end (minus flow_start: a
 *              duration), time_received (minus flow_end: the export delay,
 *              often the same for many rows) and the raw counters (minus
 *              the scaled ones: zero when unsampled).
 *     5 DICT   strings (type 7, W = 4).  In memory a string is an ID into
 *              the process's intern table (core/strtab.h), meaningless
 *              elsewhere, so the file holds the strings: the frame table
 *              has 1 + B entries (1 + 0 when K = 1), the first frame is
 *              the dictionary, L bytes of K entries (u8 length 0..255,
 *              then the bytes, no NUL; "" may be an entry), in order of
 *              first use; the B block frames hold each row's entry index
 *              as a u32, shuffled as PLAIN (high planes are zeros).  D =
 *              N × 4, or 0 when K = 1: every row is entry 0.  A reader
 *              interns the K strings and maps indexes to IDs; an index ≥
 *              K is corruption.  A string column whose rows are all ""
 *              is CONST with value 0 (any other CONST value is invalid).
 *     6 RANK   u32 integers (W = 4) and addresses (W = 16) whose rows are
 *              all IPv4-mapped, when many rows repeat a value: the frame
 *              table has 1 + B entries; the first frame is the dictionary,
 *              the K distinct values (2 ≤ K ≤ N) as u32 (IPv4 as a << 24 |
 *              b << 16 | c << 8 | d) in order of row count descending,
 *              equal counts by value ascending, each stored as its
 *              difference from the entry before (mod 2^32, the first from
 *              0), shuffled in 4 planes of K bytes: K = the frame's content
 *              size / 4; the B block frames hold each row's entry index as
 *              DICT's do.  D = N × 4 (block frames only).  The entry keeps
 *              the zone map of its type (integers: min, max; addresses:
 *              the IPv4 range as V4).  See try_rank() and store/rank.h.
 *     7 MAP    strings (type 7, W = 4) that an integer column decides (an
 *              AS name by its AS number): the entry's bytes 36..37 give the
 *              key column (an integer column of W ≤ 4, not DIFF), 64..71 K
 *              and L as DICT's; the frame table has 1 entry, the
 *              dictionary: the K distinct keys (1 ≤ K ≤ N) strictly
 *              ascending as u32, then each key's string as DICT's entries.
 *              D = 0.  A row's key missing from the dictionary is
 *              corruption.  See try_map().
 *
 *   A reader validates the header checksum, that H, every offset and size
 *   lie within the file, that D matches N × W (or N × 4), that a column's
 *   frame sizes add up to S, each frame's content size, and zstd's own
 *   checks; a segment failing any of them is reported and skipped.
 *   Columns of an integer type may be read into a field of another integer
 *   width (widened or truncated); a column whose type class (integer,
 *   address, MAC) disagrees with the field's reads as zeros.
 *
 * The host must be little-endian (x86-64, arm64): values are copied as is.
 */
#include "store/segment.h"

#include "core/bigmem.h"
#include "core/bytes.h"
#include "core/hash.h"
#include "core/strtab.h"
#include "store/keymap.h"
#include "store/radix.h"
#include "store/rank.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
/* for ZSTD_c_literalCompressionMode (index frames, below); a libzstd
 * without it refuses the parameter and the plain settings are used */
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "segment.c assumes a little-endian host"
#endif

static const uint8_t v4_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

static void msg(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void msg(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (err && errlen)
		vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static uint64_t header_checksum(const uint8_t *img, size_t hsize)
{
	static const uint8_t zero[8];
	uint64_t h = ng_fnv1a64(NG_FNV64_INIT, img, 56);
	h = ng_fnv1a64(h, zero, 8);
	return ng_fnv1a64(h, img + 64, hsize - 64);
}

void ng_seg_reseal(uint8_t *img)
{
	ng_put_le64(img + 56, header_checksum(img, ng_get_le32(img + 12)));
}

static bool is_int_type(unsigned t)
{
	return t <= NG_FT_TIME;
}

/* ---- byte-plane shuffle ----------------------------------------------- */

/* Transposes an 8×8 byte matrix held as 8 little-endian words: byte j of
 * word k moves to byte k of word j (three rounds of swapping 1-, 2- and
 * 4-byte blocks between word pairs), all in registers. */
#define SWAP_BLOCKS(x, y, sh, m)                                                                   \
	do {                                                                                       \
		uint64_t t_ = (((x) >> (sh)) ^ (y)) & (m);                                         \
		(y) ^= t_;                                                                         \
		(x) ^= t_ << (sh);                                                                 \
	} while (0)

static inline __attribute__((always_inline)) void transpose8(uint64_t a[8])
{
	const uint64_t m1 = UINT64_C(0x00FF00FF00FF00FF), m2 = UINT64_C(0x0000FFFF0000FFFF),
	               m4 = UINT64_C(0x00000000FFFFFFFF);
	uint64_t a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3], a4 = a[4], a5 = a[5], a6 = a[6],
	         a7 = a[7];
	SWAP_BLOCKS(a0, a1, 8, m1);
	SWAP_BLOCKS(a2, a3, 8, m1);
	SWAP_BLOCKS(a4, a5, 8, m1);
	SWAP_BLOCKS(a6, a7, 8, m1);
	SWAP_BLOCKS(a0, a2, 16, m2);
	SWAP_BLOCKS(a1, a3, 16, m2);
	SWAP_BLOCKS(a4, a6, 16, m2);
	SWAP_BLOCKS(a5, a7, 16, m2);
	SWAP_BLOCKS(a0, a4, 32, m4);
	SWAP_BLOCKS(a1, a5, 32, m4);
	SWAP_BLOCKS(a2, a6, 32, m4);
	SWAP_BLOCKS(a3, a7, 32, m4);
	a[0] = a0, a[1] = a1, a[2] = a2, a[3] = a3, a[4] = a4, a[5] = a5, a[6] = a6, a[7] = a7;
}

/* out[k*n + i] = byte k of in[i*w]: each plane holds one byte of every
 * value, so the constant high bytes of small numbers form long runs. */
static void shuffle(uint8_t *out, const uint8_t *in, size_t n, unsigned w)
{
	if (w == 1) {
		memcpy(out, in, n);
		return;
	}
	size_t i0 = 0;
	if (w == 8) { /* 8 values at a time through a register transpose */
		for (; i0 + 8 <= n; i0 += 8) {
			uint64_t a[8];
			memcpy(a, in + i0 * 8, 64);
			transpose8(a);
			for (unsigned k = 0; k < 8; k++)
				memcpy(out + (size_t)k * n + i0, &a[k], 8);
		}
	}
	if (w == 4) { /* one pass: each value's bytes to the four planes */
		uint8_t *o0 = out, *o1 = out + n, *o2 = out + 2 * n, *o3 = out + 3 * n;
		for (size_t i = 0; i < n; i++) {
			uint32_t v;
			memcpy(&v, in + i * 4, 4);
			o0[i] = (uint8_t)v;
			o1[i] = (uint8_t)(v >> 8);
			o2[i] = (uint8_t)(v >> 16);
			o3[i] = (uint8_t)(v >> 24);
		}
		return;
	}
	if (w == 2) {
		uint8_t *o0 = out, *o1 = out + n;
		for (size_t i = 0; i < n; i++) {
			uint16_t v;
			memcpy(&v, in + i * 2, 2);
			o0[i] = (uint8_t)v;
			o1[i] = (uint8_t)(v >> 8);
		}
		return;
	}
	for (unsigned k = 0; k < w; k++) {
		uint8_t *o = out + (size_t)k * n;
		const uint8_t *s = in + k;
		for (size_t i = i0; i < n; i++)
			o[i] = s[i * w];
	}
}

/* shuffle() of n DICT entry indexes, all below k: the planes no index
 * reaches (all of them above the first when k <= 256, the top two when
 * k <= 65536) are zeroed without reading the indexes for them. */
static void shuffle_index(uint8_t *out, const uint32_t *idx, size_t n, size_t k)
{
	if (k > 65536) {
		shuffle(out, (const uint8_t *)idx, n, 4);
		return;
	}
	if (k <= 256) {
		for (size_t i = 0; i < n; i++)
			out[i] = (uint8_t)idx[i];
		memset(out + n, 0, 3 * n);
		return;
	}
	uint8_t *o1 = out + n;
	for (size_t i = 0; i < n; i++) {
		out[i] = (uint8_t)idx[i];
		o1[i] = (uint8_t)(idx[i] >> 8);
	}
	memset(out + 2 * n, 0, 2 * n);
}

/* The inverse of shuffle(). */
static void unshuffle(uint8_t *out, const uint8_t *in, size_t n, unsigned w)
{
	if (w == 1) {
		memcpy(out, in, n);
		return;
	}
	size_t i0 = 0;
	if (w == 8) {
		for (; i0 + 8 <= n; i0 += 8) {
			uint64_t a[8];
			for (unsigned k = 0; k < 8; k++)
				memcpy(&a[k], in + (size_t)k * n + i0, 8);
			transpose8(a);
			memcpy(out + i0 * 8, a, 64);
		}
	}
	if (w == 4) { /* one pass: each value from the four planes (ports,
		       * string indexes); the byte scatter below is 4× slower */
		const uint8_t *p0 = in, *p1 = in + n, *p2 = in + 2 * n, *p3 = in + 3 * n;
		for (size_t i = 0; i < n; i++) {
			uint32_t v = (uint32_t)p0[i] | (uint32_t)p1[i] << 8 |
			             (uint32_t)p2[i] << 16 | (uint32_t)p3[i] << 24;
			memcpy(out + i * 4, &v, 4);
		}
		return;
	}
	if (w == 2) {
		const uint8_t *p0 = in, *p1 = in + n;
		for (size_t i = 0; i < n; i++) {
			uint16_t v = (uint16_t)(p0[i] | p1[i] << 8);
			memcpy(out + i * 2, &v, 2);
		}
		return;
	}
	for (unsigned k = 0; k < w; k++) {
		const uint8_t *s = in + (size_t)k * n;
		uint8_t *o = out + k;
		for (size_t i = i0; i < n; i++)
			o[i * w] = s[i];
	}
}

/* ---- encoder ---------------------------------------------------------- */

/* DICT: a string ID's entry, valid when gen is the current column's. */
struct dslot {
	uint32_t gen, idx;
};

/* MAP: a key column's RANK numbering, kept for the string column it
 * decides (try_rank → try_map): every row's number and each number's
 * value.  ci = the column it belongs to in the segment being encoded, -1:
 * none. */
struct keyrank {
	int ci;
	size_t k;
	uint32_t *idx, *val;
	size_t icap, vcap;
};

enum { NKEYS = 4 }; /* key columns of map_cols[] */

struct ng_seg_encoder {
	ZSTD_CCtx *cctx;
	/* DICT index frames: fewer match searches, literals still Huffman
	 * coded (or NULL: cctx).  The rows' entry indexes are close to
	 * independent draws, which only entropy coding shrinks: on bench data
	 * this is ~1.5x faster than level 1 at about the same size */
	ZSTD_CCtx *icctx;
	uint8_t *cols; /* all columns gathered: field f at col_off[f] × n */
	size_t colcap;
	uint8_t *tmp; /* one transformed column */
	size_t tmpcap;
	uint64_t *z; /* zigzag deltas or differences of one column */
	size_t zcap;
	uint8_t *out; /* the segment image */
	size_t outcap;
	uint32_t *didx; /* DICT, RANK: every row's dictionary index */
	size_t didxcap;
	uint32_t *dnew; /* DICT: the string ID of each entry; RANK: its value */
	size_t dnewcap;
	uint32_t *rv; /* RANK: the column's values as u32 */
	size_t rvcap;
	ng_rank rank;  /* RANK: work space */
	size_t rank_k; /* RANK: entries of the column chosen last */
	/* DICT: string ID → (generation, index): indexed by the ID itself
	 * (IDs are dense, below ng_strtab_count()); an entry counts only when
	 * it carries the current column's generation, so nothing is cleared */
	struct dslot *dmap;
	size_t dmapcap;
	uint32_t dgen;
	uint8_t *dict; /* DICT, RANK, MAP: the dictionary's bytes */
	size_t dictcap;
	ng_keymap kmap;         /* MAP: each key's string ID */
	uint64_t *mkey, *mkey2; /* MAP: the keys, sorted (radix.h) */
	uint32_t *mid, *mid2;   /* MAP: their string IDs */
	size_t mcap[4];         /* bytes of the four arrays above */
	size_t map_k, map_len;  /* MAP: entries and bytes of the column chosen last */
	struct keyrank keyr[NKEYS];
	const ng_field *fields; /* the columns of the segment being encoded */
	size_t nfields;
	size_t col_off[NG_SEG_MAX_COLUMNS];      /* byte offset of a column per row */
	const uint8_t *colv[NG_SEG_MAX_COLUMNS]; /* each column's n values, or NULL: all zero */
	size_t row_width;                        /* sum of field sizes */
};

/* The compression context for DICT index frames: the fast strategy with
 * a large step over unmatched input (targetLength 64) and Huffman-coded
 * literals forced on (a fast-strategy target length alone turns them
 * off).  NULL when this libzstd does not take the parameters. */
static ZSTD_CCtx *index_cctx(void)
{
	ZSTD_CCtx *c = ZSTD_createCCtx();
	if (!c)
		return NULL;
	if (ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 1)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_targetLength, 64)) ||
	    ZSTD_isError(
	        ZSTD_CCtx_setParameter(c, ZSTD_c_literalCompressionMode, ZSTD_ps_enable)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 1))) {
		ZSTD_freeCCtx(c);
		return NULL;
	}
	return c;
}

ng_seg_encoder *ng_seg_encoder_new(int level)
{
	ng_seg_encoder *e = calloc(1, sizeof *e);
	if (!e)
		return NULL;
	e->cctx = ZSTD_createCCtx();
	if (!e->cctx) {
		free(e);
		return NULL;
	}
	ZSTD_CCtx_setParameter(e->cctx, ZSTD_c_compressionLevel, level);
	ZSTD_CCtx_setParameter(e->cctx, ZSTD_c_checksumFlag, 1);
	ZSTD_CCtx_setParameter(e->cctx, ZSTD_c_contentSizeFlag, 1);
	e->icctx = index_cctx();
	return e;
}

void ng_seg_encoder_free(ng_seg_encoder *e)
{
	if (!e)
		return;
	ZSTD_freeCCtx(e->cctx);
	ZSTD_freeCCtx(e->icctx);
	free(e->cols);
	free(e->tmp);
	free(e->z);
	free(e->out);
	free(e->didx);
	free(e->dnew);
	free(e->dmap);
	free(e->dict);
	free(e->rv);
	ng_rank_free(&e->rank);
	ng_keymap_free(&e->kmap);
	free(e->mkey);
	free(e->mkey2);
	free(e->mid);
	free(e->mid2);
	for (int i = 0; i < NKEYS; i++) {
		free(e->keyr[i].idx);
		free(e->keyr[i].val);
	}
	free(e);
}

/* Asks for transparent huge pages on the 2 MiB-aligned part of a big
 * buffer (the gathered columns: hundreds of MB): a first touch of a page
 * costs ~20 µs on a paravirtualized guest; one huge page replaces 512. */
static void advise_huge(void *p, size_t len)
{
#ifdef MADV_HUGEPAGE
	const uintptr_t H = (uintptr_t)2 << 20;
	uintptr_t a = ((uintptr_t)p + H - 1) & ~(H - 1), b = ((uintptr_t)p + len) & ~(H - 1);
	if (b > a)
		madvise((void *)a, b - a, MADV_HUGEPAGE); /* advice: failure is harmless */
#else
	(void)p;
	(void)len;
#endif
}

static int reserve(uint8_t **buf, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap : 4096;
	while (c < need)
		c *= 2;
	uint8_t *p = realloc(*buf, c);
	if (!p)
		return -1;
	*buf = p;
	*cap = c;
	advise_huge(p, c);
	return 0;
}

/* reserve() for a reader's column buffers, which a scan fills with pread
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
		return reserve(buf, cap, need);
	size_t c = (need + huge - 1) / huge * huge;
	uint8_t *p = ng_alloc_big(c);
	if (!p)
		return -1;
	free(*buf);
	*buf = p;
	*cap = c;
	return 0;
}

/* Copies one field of rows[order[lo..hi)] (rows[lo..hi) without an order)
 * into its column: blocks of rows keep the source rows in cache while
 * every field is gathered. */
static void gather_field(uint8_t *col, const ng_field *f, const ng_flow *rows,
                         const uint32_t *order, size_t lo, size_t hi)
{
	const size_t sz = f->size, off = f->offset;
	for (size_t i = lo; i < hi; i++) {
		const uint8_t *src = (const uint8_t *)&rows[order ? order[i] : i] + off;
		switch (sz) {
		case 1: col[i] = *src; break;
		case 2: memcpy(col + i * 2, src, 2); break;
		case 4: memcpy(col + i * 4, src, 4); break;
		case 8: memcpy(col + i * 8, src, 8); break;
		case 16: memcpy(col + i * 16, src, 16); break;
		default: memcpy(col + i * sz, src, sz); break;
		}
	}
}

static void gather(ng_seg_encoder *e, const ng_flow *rows, const uint32_t *order, size_t n)
{
	enum { BLOCK = 256 };
	for (size_t lo = 0; lo < n; lo += BLOCK) {
		size_t hi = lo + BLOCK < n ? lo + BLOCK : n;
		/* rows in flow_start order are scattered in memory: fetch the
		 * next block's rows while this one is gathered */
		for (size_t i = hi; order && i < hi + BLOCK && i < n; i++) {
			const char *r = (const char *)&rows[order[i]];
			__builtin_prefetch(r);
			__builtin_prefetch(r + 64);
			__builtin_prefetch(r + 128);
		}
		for (size_t f = 0; f < e->nfields; f++)
			gather_field(e->cols + e->col_off[f] * n, &e->fields[f], rows, order, lo,
			             hi);
	}
}

static uint64_t load_uint(const uint8_t *p, unsigned w)
{
	switch (w) {
	case 1: return *p;
	case 2: return ng_get_le16(p);
	case 4: return ng_get_le32(p);
	default: return ng_get_le64(p);
	}
}

static bool all_equal(const uint8_t *col, size_t n, unsigned w)
{
	if (w == 16) { /* addresses: two words a row, no call per row */
		uint64_t a = ng_get_le64(col), b = ng_get_le64(col + 8), d = 0;
		for (size_t i = 1; i < n && !d; i++)
			d = (ng_get_le64(col + i * 16) ^ a) | (ng_get_le64(col + i * 16 + 8) ^ b);
		return !d;
	}
	for (size_t i = 1; i < n; i++)
		if (memcmp(col, col + i * w, w))
			return false;
	return true;
}

static bool all_v4(const uint8_t *col, size_t n)
{
	const uint64_t a = ng_get_le64(v4_prefix);
	const uint32_t b = ng_get_le32(v4_prefix + 8);
	for (size_t i = 0; i < n; i++)
		if (ng_get_le64(col + i * 16) != a || ng_get_le32(col + i * 16 + 8) != b)
			return false;
	return true;
}

/* Min and max of an unsigned column of n values of w bytes: one loop per
 * width, so the compiler keeps it branch-free (and vectorizes it). */
static void min_max(const uint8_t *col, size_t n, unsigned w, uint64_t *mn, uint64_t *mx)
{
/* four independent minima and maxima: without SSE4's unsigned min/max the
 * loop is scalar, and one pair of accumulators chains every row's cmov */
#define MIN_MAX(T)                                                                                 \
	do {                                                                                       \
		T lo[4] = {(T) ~(T)0, (T) ~(T)0, (T) ~(T)0, (T) ~(T)0}, hi[4] = {0, 0, 0, 0};      \
		size_t i = 0;                                                                      \
		for (; i + 4 <= n; i += 4)                                                         \
			for (size_t j = 0; j < 4; j++) {                                           \
				T v;                                                               \
				memcpy(&v, col + (i + j) * sizeof(T), sizeof(T));                  \
				lo[j] = v < lo[j] ? v : lo[j];                                     \
				hi[j] = v > hi[j] ? v : hi[j];                                     \
			}                                                                          \
		for (; i < n; i++) {                                                               \
			T v;                                                                       \
			memcpy(&v, col + i * sizeof(T), sizeof(T));                                \
			lo[0] = v < lo[0] ? v : lo[0];                                             \
			hi[0] = v > hi[0] ? v : hi[0];                                             \
		}                                                                                  \
		for (size_t j = 1; j < 4; j++) {                                                   \
			lo[0] = lo[j] < lo[0] ? lo[j] : lo[0];                                     \
			hi[0] = hi[j] > hi[0] ? hi[j] : hi[0];                                     \
		}                                                                                  \
		*mn = lo[0];                                                                       \
		*mx = hi[0];                                                                       \
	} while (0)
	switch (w) {
	case 1: MIN_MAX(uint8_t); break;
	case 2: MIN_MAX(uint16_t); break;
	case 4: MIN_MAX(uint32_t); break;
	default: MIN_MAX(uint64_t); break;
	}
#undef MIN_MAX
}

/* True when two unsigned columns hold the same numbers row by row. */
static bool same_values(const uint8_t *a, unsigned wa, const uint8_t *b, unsigned wb, size_t n)
{
	if (wa == 8 && wb == 8) {
		uint64_t d = 0;
		for (size_t i = 0; i < n; i++)
			d |= ng_get_le64(a + i * 8) ^ ng_get_le64(b + i * 8);
		return !d;
	}
	for (size_t i = 0; i < n; i++)
		if (load_uint(a + i * wa, wa) != load_uint(b + i * wb, wb))
			return false;
	return true;
}

/* The column a field is stored as a difference from (DIFF), or -1.  Flow
 * end and receive times sit close to the start: their differences are a
 * few bytes, where their own deltas, once rows are in flow_start order,
 * are not.  Raw counters equal the scaled ones when unsampled. */
static int diff_ref(enum ng_field_id f)
{
	switch (f) {
	case NG_F_FLOW_END: return NG_F_FLOW_START;
	case NG_F_TIME_RECEIVED: return NG_F_FLOW_END;
	case NG_F_BYTES_RAW: return NG_F_BYTES;
	case NG_F_PACKETS_RAW: return NG_F_PACKETS;
	default: return -1;
	}
}

/* MAP: the integer field whose value decides string field f's, when one
 * usually does (an AS number its AS name, an interface index its name);
 * whether it does in a segment is checked on every row (try_map). */
static const struct {
	enum ng_field_id key, name;
} map_cols[NKEYS] = {
    {NG_F_SRC_AS, NG_F_SRC_AS_NAME},
    {NG_F_DST_AS, NG_F_DST_AS_NAME},
    {NG_F_IN_IF, NG_F_IN_IF_NAME},
    {NG_F_OUT_IF, NG_F_OUT_IF_NAME},
};

static int map_key(enum ng_field_id f)
{
	for (int i = 0; i < NKEYS; i++)
		if (map_cols[i].name == f)
			return (int)map_cols[i].key;
	return -1;
}

/* The keyrank slot (map_cols entry) of a key column of map_key(), or -1. */
static int key_slot(enum ng_field_id f)
{
	for (int i = 0; i < NKEYS; i++)
		if (map_cols[i].key == f)
			return i;
	return -1;
}

/* Table position of field `id` in the encoder's table, or -1. */
static int pos_of(const ng_seg_encoder *e, int id)
{
	for (size_t i = 0; id >= 0 && i < e->nfields; i++)
		if ((int)e->fields[i].id == id && is_int_type(e->fields[i].type))
			return (int)i;
	return -1;
}

static uint64_t zigzag(uint64_t d)
{
	return (d << 1) ^ (uint64_t)((int64_t)d >> 63);
}
static uint64_t unzigzag(uint64_t z)
{
	return (z >> 1) ^ (0 - (z & 1));
}

/* Significant bits of zigzag(d): about what zstd keeps of a difference. */
static unsigned zbits(uint64_t d)
{
	uint64_t z = zigzag(d);
	return z ? 64 - (unsigned)__builtin_clzll(z) : 0;
}

/* For a time column with a reference: true when its differences from the
 * reference (DIFF) are smaller than its deltas from the previous row
 * (DELTA), judged on every 16th row.  Flow end minus start is the flow's
 * duration: DIFF.  Receive time minus flow end is the export delay, small
 * for most exporters; but where flows are replayed or exported long after
 * they end, receive times in flow_start order are a smoother sequence. */
static bool diff_smaller(const uint8_t *col, const uint8_t *rc, unsigned rw, size_t n)
{
	uint64_t diff = 0, delta = 0;
	for (size_t i = 16; i < n; i += 16) {
		uint64_t v = ng_get_le64(col + i * 8);
		diff += zbits(v - load_uint(rc + i * rw, rw));
		delta += zbits(v - ng_get_le64(col + (i - 1) * 8));
	}
	return diff <= delta;
}

/* Columns of fewer rows keep their plain encoding: a dictionary frame of
 * its own costs more than it saves on a few hundred rows. */
#define RANK_MIN_ROWS 1024
/* ...nor do columns with at most this many distinct values among every
 * RANK_SAMPLE_STEP-th row (exporters, observation domains, interfaces:
 * on bench/query's flows RANK saved them 0.03 bytes a flow together, for
 * ~15 ns a row), nor those where most of the sample is distinct
 * (ng_rank_worth) */
#define RANK_SAMPLE_STEP 16
#define RANK_MIN_VARIED 256

/*
 * Tries the RANK encoding on column ci (u32 integers, or IPv4-mapped
 * addresses as IPv4 numbers): numbers its distinct values by frequency
 * (rank.h) into e->didx, and puts the dictionary's bytes in e->dict: the
 * K values, each as its difference from the one before (mod 2^32),
 * shuffled in 4 planes.  True when at most n/2 of the n values are
 * distinct, so that most rows repeat a value; flow data's addresses and
 * AS numbers are heavy-tailed, and their indexes plus the dictionary come
 * out smaller than the values (bench/query's flows: addresses 3.5 → 2.4
 * bytes a row, AS numbers 1.3 → 0.8).  False otherwise, or when out of
 * memory: the column keeps its plain encoding.
 */
/* When column ci keys a MAP column (map_cols) that holds some string,
 * keeps the numbering just built (e->didx, e->dnew) for it; a copy, as
 * the next column reuses them.  Out of memory keeps nothing: try_map then
 * hashes. */
static void keep_rank(ng_seg_encoder *e, size_t ci, size_t n)
{
	const int ks = key_slot(e->fields[ci].id);
	if (ks < 0)
		return;
	size_t nc = 0; /* the name column: all "" (no data) is CONST, no MAP */
	while (nc < e->nfields && e->fields[nc].id != map_cols[ks].name)
		nc++;
	if (nc == e->nfields || !e->colv[nc])
		return;
	struct keyrank *kr = &e->keyr[ks];
	if (reserve((uint8_t **)&kr->idx, &kr->icap, n * 4) ||
	    reserve((uint8_t **)&kr->val, &kr->vcap, e->rank_k * 4))
		return;
	memcpy(kr->idx, e->didx, n * 4);
	memcpy(kr->val, e->dnew, e->rank_k * 4);
	kr->k = e->rank_k;
	kr->ci = (int)ci;
}

static bool try_rank(ng_seg_encoder *e, size_t ci, size_t n)
{
	const uint8_t *col = e->colv[ci];
	if (n < RANK_MIN_ROWS || reserve((uint8_t **)&e->rv, &e->rvcap, n * 4) ||
	    reserve((uint8_t **)&e->didx, &e->didxcap, n * 4) ||
	    reserve((uint8_t **)&e->dnew, &e->dnewcap, n / 2 * 4))
		return false;
	if (e->fields[ci].type == NG_FT_ADDR)
		for (size_t i = 0; i < n; i++)
			e->rv[i] = __builtin_bswap32(ng_get_le32(col + i * 16 + 12));
	else
		memcpy(e->rv, col, n * 4);
	size_t sample_k;
	if (!ng_rank_worth(&e->rank, e->rv, n, RANK_SAMPLE_STEP, RANK_MIN_VARIED, &sample_k))
		return false;
	/* a heavy-tailed column's distinct values: about 10× its 1/16
	 * sample's (an address column of bench/ingest: 5 800 → 62 000); the
	 * table sized for 12× is a quarter full, with few collisions */
	long k = ng_rank_build(&e->rank, e->rv, n, n / 2, 12 * sample_k, e->didx, e->dnew);
	if (k < 2 || reserve(&e->dict, &e->dictcap, (size_t)k * 4))
		return false;
	uint32_t prev = 0;
	for (size_t j = 0; j < (size_t)k; j++) {
		e->rv[j] = e->dnew[j] - prev;
		prev = e->dnew[j];
	}
	shuffle(e->dict, (const uint8_t *)e->rv, (size_t)k, 4);
	e->rank_k = (size_t)k;
	keep_rank(e, ci, n);
	return true;
}

/* Room for k entries in the four MAP arrays.  Returns 0 or -1. */
static int map_reserve(ng_seg_encoder *e, size_t k)
{
	if (reserve((uint8_t **)&e->mkey, &e->mcap[0], k * 8) ||
	    reserve((uint8_t **)&e->mkey2, &e->mcap[1], k * 8) ||
	    reserve((uint8_t **)&e->mid, &e->mcap[2], k * 4) ||
	    reserve((uint8_t **)&e->mid2, &e->mcap[3], k * 4))
		return -1;
	return 0;
}

/* MAP pairs from the key column's RANK numbering (kr, kept by try_rank):
 * each row checks its string against its key's entry of a table of K, in
 * the first-level cache, indexed by the number the row already has.
 * Returns the K pairs (e->mid2 keys, e->mid IDs), or 0 when a key has two
 * strings or out of memory. */
static size_t map_pairs_ranked(ng_seg_encoder *e, const uint8_t *col, size_t n,
                               const struct keyrank *kr, uint32_t limit)
{
	const uint32_t NONE = UINT32_MAX;
	if (map_reserve(e, kr->k))
		return 0;
	uint32_t *tab = e->mid;
	for (size_t j = 0; j < kr->k; j++)
		tab[j] = NONE;
	for (size_t i = 0; i < n; i++) {
		uint32_t id = ng_get_le32(col + i * 4), *t = &tab[kr->idx[i]];
		id = id < limit ? id : 0;
		if (*t != id) {
			if (*t != NONE)
				return 0;
			*t = id;
		}
	}
	memcpy(e->mid2, kr->val, kr->k * 4);
	return kr->k;
}

/* MAP pairs without a numbering of the keys (kv NULL: all zero): a hash
 * table of the keys.  Returns K as map_pairs_ranked. */
static size_t map_pairs_hashed(ng_seg_encoder *e, const uint8_t *col, const uint8_t *kv, size_t n,
                               uint32_t limit)
{
	if (ng_keymap_reset(&e->kmap, 1024))
		return 0;
	uint32_t last_key = 0, last_id = UINT32_MAX; /* runs of one key skip the table */
	for (size_t i = 0; i < n; i++) {
		uint32_t key = kv ? ng_get_le32(kv + i * 4) : 0, id = ng_get_le32(col + i * 4);
		id = id < limit ? id : 0;
		if (key == last_key && id == last_id)
			continue;
		if (ng_keymap_put(&e->kmap, key, id) < 0)
			return 0;
		last_key = key, last_id = id;
	}
	if (map_reserve(e, e->kmap.k))
		return 0;
	ng_keymap_entries(&e->kmap, e->mid2, e->mid);
	return e->kmap.k;
}

/*
 * MAP: when every row of string column ci whose key (u32 column kc) is the
 * same has the same string, builds the dictionary in e->dict: the K
 * distinct keys in ascending order as u32, then each key's string (u8
 * length, bytes) in the same order; e->map_k = K, e->map_len = its bytes.
 * A column of AS names is then one copy of each AS's name instead of an
 * index per row (bench/ingest-enrich: 1.45 → 0.21 bytes a row, and the
 * dearest string columns to encode).  False when some key has two strings
 * (a database reloaded within the segment, interface names from two
 * exporters), or when out of memory: the column stays DICT.  IDs not given
 * out yet are "" as in build_dict().
 */
static bool try_map(ng_seg_encoder *e, size_t ci, size_t n, size_t kc)
{
	const int ks = key_slot(e->fields[kc].id);
	const struct keyrank *kr = ks >= 0 && e->keyr[ks].ci == (int)kc ? &e->keyr[ks] : NULL;
	const uint32_t limit = ng_strtab_count(); /* IDs given out: as build_dict() */
	const size_t k = kr ? map_pairs_ranked(e, e->colv[ci], n, kr, limit)
	                    : map_pairs_hashed(e, e->colv[ci], e->colv[kc], n, limit);
	if (!k)
		return false;
	uint64_t top = 0;
	for (size_t j = 0; j < k; j++) {
		e->mkey[j] = e->mid2[j];
		top = e->mkey[j] > top ? e->mkey[j] : top;
	}
	uint64_t *key = e->mkey, *key2 = e->mkey2;
	uint32_t *id = e->mid, *id2 = e->mid2;
	ng_radix_sort_pairs(&key, &id, &key2, &id2, k, top);
	size_t bytes = 4 * k;
	for (size_t j = 0; j < k; j++)
		bytes += 1 + ng_str_len(id[j]);
	if (reserve(&e->dict, &e->dictcap, bytes))
		return false;
	size_t pos = 4 * k;
	for (size_t j = 0; j < k; j++) {
		size_t len = ng_str_len(id[j]);
		ng_put_le32(e->dict + 4 * j, (uint32_t)key[j]);
		e->dict[pos] = (uint8_t)len;
		memcpy(e->dict + pos + 1, ng_str(id[j]), len);
		pos += 1 + len;
	}
	e->map_k = k;
	e->map_len = pos;
	return true;
}

/* Chooses column f's encoding from all its n rows, filling the zone map
 * or constant in `ent`.  *ref is the reference column for DIFF. */
static unsigned choose_encoding(ng_seg_encoder *e, size_t ci, size_t n, uint8_t *ent, int *ref)
{
	const ng_field *f = &e->fields[ci];
	const uint8_t *col = e->colv[ci];
	const unsigned w = f->size;
	*ref = is_int_type(f->type) ? pos_of(e, diff_ref(f->id)) : -1;
	if (*ref >= 0 && !e->colv[*ref])
		*ref = -1; /* an all-zero reference: the column is its own best form */
	if (!col)          /* all zero: the zone map and constant stay zero */
		return NG_ENC_CONST;
	if (is_int_type(f->type)) {
		uint64_t mn, mx;
		min_max(col, n, w, &mn, &mx);
		ng_put_le64(ent + 64, mn);
		ng_put_le64(ent + 72, mx);
		if (mn == mx)
			return NG_ENC_CONST;
	} else if (f->type == NG_FT_STR) {
		/* CONST only for "" (ID 0): an ID means nothing in another
		 * process, so any other string goes to the dictionary */
		static const uint8_t zero4[4];
		if (all_equal(col, n, w) && !memcmp(col, zero4, 4))
			return NG_ENC_CONST;
		*ref = pos_of(e, map_key(f->id));
		if (*ref >= 0 && e->fields[*ref].size == 4 && try_map(e, ci, n, (size_t)*ref))
			return NG_ENC_MAP;
		return NG_ENC_DICT;
	} else if (all_equal(col, n, w)) {
		memcpy(ent + 64, col, w);
		return NG_ENC_CONST;
	}
	if (*ref >= 0) {
		/* times: when the differences are the smaller; counters: only
		 * when equal to the reference (unsampled): differences all zero */
		const ng_field *rf = &e->fields[*ref];
		const uint8_t *rc = e->colv[*ref];
		if (f->type == NG_FT_TIME)
			return diff_smaller(col, rc, rf->size, n) ? NG_ENC_DIFF : NG_ENC_DELTA;
		if (same_values(col, w, rc, rf->size, n))
			return NG_ENC_DIFF;
	}
	if (f->type == NG_FT_TIME)
		return NG_ENC_DELTA;
	if (f->type == NG_FT_ADDR && all_v4(col, n)) {
		/* zone map: the IPv4 range, as numbers (a.b.c.d = a << 24 | …) */
		uint32_t mn = UINT32_MAX, mx = 0;
		for (size_t i = 0; i < n; i++) {
			uint32_t v = __builtin_bswap32(ng_get_le32(col + i * 16 + 12));
			mn = v < mn ? v : mn;
			mx = v > mx ? v : mx;
		}
		ng_put_le32(ent + 64, mn);
		ng_put_le32(ent + 68, mx);
		return try_rank(e, ci, n) ? NG_ENC_RANK : NG_ENC_V4;
	}
	if (is_int_type(f->type) && w == 4 && try_rank(e, ci, n))
		return NG_ENC_RANK;
	return NG_ENC_PLAIN;
}

/* Fills e->tmp with rows [lo, hi) of column f in encoding `enc`, before
 * compression.  Returns the byte count. */
static size_t transform_block(ng_seg_encoder *e, size_t ci, unsigned enc, int ref, size_t lo,
                              size_t hi, size_t dk)
{
	const ng_field *f = &e->fields[ci];
	const unsigned w = f->size;
	const uint8_t *col = e->colv[ci] + lo * w;
	const size_t m = hi - lo;
	switch (enc) {
	case NG_ENC_DICT:
	case NG_ENC_RANK: shuffle_index(e->tmp, e->didx + lo, m, dk); return m * 4;
	case NG_ENC_DIFF: {
		const ng_field *rf = &e->fields[ref];
		const uint8_t *rc = e->colv[ref] + lo * rf->size;
		for (size_t i = 0; i < m; i++)
			e->z[i] = zigzag(load_uint(col + i * w, w) -
			                 load_uint(rc + i * rf->size, rf->size));
		shuffle(e->tmp, (const uint8_t *)e->z, m, 8);
		return m * 8;
	}
	case NG_ENC_DELTA: {
		uint64_t prev = 0; /* each block starts from zero: blocks decode alone */
		for (size_t i = 0; i < m; i++) {
			uint64_t v = ng_get_le64(col + i * 8);
			e->z[i] = zigzag(v - prev);
			prev = v;
		}
		shuffle(e->tmp, (const uint8_t *)e->z, m, 8);
		return m * 8;
	}
	case NG_ENC_V4:
		for (size_t i = 0; i < m; i++)
			for (unsigned k = 0; k < 4; k++)
				e->tmp[k * m + i] = col[i * 16 + 12 + k];
		return m * 4;
	default: shuffle(e->tmp, col, m, w); return m * w;
	}
}

/*
 * Builds the dictionary of string column ci: e->didx[i] = the entry of
 * row i, e->dict = the entries (u8 length, bytes), in order of first use.
 * Returns the entry count K, or 0 when out of memory; *dlen = dict bytes.
 */
/* Makes e->dmap index every ID below `ids` and starts a new generation.
 * Returns 0 or -1 when out of memory.  calloc: the pages of IDs a column
 * never holds are never touched. */
static int dict_map(ng_seg_encoder *e, size_t ids)
{
	if (ids > e->dmapcap) {
		size_t cap = e->dmapcap ? e->dmapcap : 4096;
		while (cap < ids)
			cap *= 2;
		free(e->dmap);
		e->dmap = calloc(cap, sizeof *e->dmap);
		e->dmapcap = e->dmap ? cap : 0;
		e->dgen = 0;
		if (!e->dmap)
			return -1;
	}
	if (++e->dgen == 0) { /* wrapped: old stamps would look current */
		memset(e->dmap, 0, e->dmapcap * sizeof *e->dmap);
		e->dgen = 1;
	}
	return 0;
}

/*
 * Builds the dictionary of string column ci: e->didx[i] = the entry of
 * row i, e->dict = the entries (u8 length, bytes), in order of first use.
 * Returns the entry count K, or 0 when out of memory; *dlen = dict bytes.
 * String IDs map to entries through a table indexed by the ID: one load a
 * row, no hashing.  An ID not given out yet (ng_strtab_count(), at most
 * 2^24) cannot have been interned: it is stored as "" (which ng_str would
 * show it as).  The strings are copied after the rows are numbered, all
 * in a row: each is a cache miss or two in the string table, waited for
 * together then.
 */
static size_t build_dict(ng_seg_encoder *e, size_t ci, size_t n, size_t *dlen)
{
	const uint8_t *col = e->colv[ci];
	/* every ID a row holds was interned before its row was appended */
	const uint32_t LIMIT = ng_strtab_count();
	if (reserve((uint8_t **)&e->didx, &e->didxcap, n * 4) ||
	    reserve((uint8_t **)&e->dnew, &e->dnewcap, n * 4) || dict_map(e, (size_t)LIMIT + 1))
		return 0;
	const uint32_t gen = e->dgen;
	size_t k = 0, bytes = 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t id = ng_get_le32(col + i * 4);
		struct dslot *d = &e->dmap[id < LIMIT ? id : 0];
		if (d->gen != gen) {
			e->dnew[k] = id < LIMIT ? id : 0;
			*d = (struct dslot){gen, (uint32_t)k++};
		}
		e->didx[i] = d->idx;
	}
	for (size_t j = 0; j < k; j++)
		bytes += 1 + ng_str_len(e->dnew[j]);
	if (reserve(&e->dict, &e->dictcap, bytes))
		return 0;
	size_t pos = 0;
	for (size_t j = 0; j < k; j++) {
		size_t len = ng_str_len(e->dnew[j]);
		e->dict[pos] = (uint8_t)len;
		memcpy(e->dict + pos + 1, ng_str(e->dnew[j]), len);
		pos += 1 + len;
	}
	*dlen = pos;
	return k;
}

/* Appends one zstd frame of src[0..raw) at e->out[*pos], its size at
 * e->out[table]. */
static int put_frame(ng_seg_encoder *e, ZSTD_CCtx *cctx, const ng_field *f, const void *src,
                     size_t raw, size_t table, size_t *pos, char *err, size_t errlen)
{
	size_t bound = ZSTD_compressBound(raw);
	if (reserve(&e->out, &e->outcap, *pos + bound)) {
		msg(err, errlen, "out of memory encoding column %s", f->name);
		return -1;
	}
	size_t z = ZSTD_compress2(cctx, e->out + *pos, bound, src, raw);
	if (ZSTD_isError(z)) {
		msg(err, errlen, "zstd compression of column %s: %s", f->name,
		    ZSTD_getErrorName(z));
		return -1;
	}
	ng_put_le32(e->out + table, (uint32_t)z);
	*pos += z;
	return 0;
}

/* True for block frames whose bytes are close to independent draws, which
 * only entropy coding shrinks (the index context): DICT indexes, and the
 * byte planes of narrow integers (flags, protocols, interface numbers,
 * ports) and IPv4 addresses.  Wider integers, times and differences have
 * runs that match finding pays for, and so do RANK indexes: the frequent
 * values' small numbers recur in runs (bench/query's AS numbers: 0.76
 * bytes a row with matches, 0.86 without). */
static bool entropy_only(const ng_field *f, unsigned enc)
{
	return enc == NG_ENC_DICT || enc == NG_ENC_V4 || (enc == NG_ENC_PLAIN && f->size <= 4);
}

/* Writes column ci's directory entry into `ent` and its data at the end of
 * the image (e->out[*len..]): the table of frame sizes, then (DICT, RANK) the
 * dictionary frame, then one zstd frame per block of NG_SEG_BLOCK_ROWS
 * rows (none for a DICT column of one entry). */
static int encode_column(ng_seg_encoder *e, size_t ci, size_t n, uint8_t *ent, size_t *len,
                         char *err, size_t errlen)
{
	const ng_field *f = &e->fields[ci];
	memset(ent, 0, NG_SEG_ENTRY_SIZE);
	memcpy(ent, f->name, strlen(f->name) < NG_SEG_NAME_MAX ? strlen(f->name) : NG_SEG_NAME_MAX);
	ent[32] = (uint8_t)f->type;
	ent[33] = (uint8_t)f->size;
	ng_put_le64(ent + 40, *len);
	int ref;
	unsigned enc = choose_encoding(e, ci, n, ent, &ref);
	ent[34] = (uint8_t)enc;
	if (enc == NG_ENC_CONST)
		return 0;
	if (enc == NG_ENC_DIFF || enc == NG_ENC_MAP)
		ng_put_le16(ent + 36, (uint16_t)ref);
	const size_t B = NG_SEG_BLOCK_ROWS;
	size_t nb = (n + B - 1) / B, extra = 0, dlen = 0, dk = 0;
	if (enc == NG_ENC_DICT) {
		if (!(dk = build_dict(e, ci, n, &dlen))) {
			msg(err, errlen, "out of memory encoding column %s (%zu rows)", f->name, n);
			return -1;
		}
		ng_put_le32(ent + 64, (uint32_t)dk);
		ng_put_le32(ent + 68, (uint32_t)dlen);
		extra = 1;
		if (dk == 1)
			nb = 0; /* one string: every row is entry 0 */
	} else if (enc == NG_ENC_RANK) {
		dk = e->rank_k; /* try_rank() built it */
		dlen = dk * 4;
		extra = 1;
	} else if (enc == NG_ENC_MAP) {
		dk = e->map_k; /* try_map() built it: no block frames */
		dlen = e->map_len;
		ng_put_le32(ent + 64, (uint32_t)dk);
		ng_put_le32(ent + 68, (uint32_t)dlen);
		extra = 1;
		nb = 0;
	}
	size_t start = *len, pos = *len + 4 * (nb + extra), raw_total = 0;
	if (reserve(&e->out, &e->outcap, pos)) {
		msg(err, errlen, "out of memory encoding column %s (%zu rows)", f->name, n);
		return -1;
	}
	if (extra && put_frame(e, e->cctx, f, e->dict, dlen, start, &pos, err, errlen))
		return -1;
	ZSTD_CCtx *bctx = entropy_only(f, enc) && e->icctx ? e->icctx : e->cctx;
	for (size_t b = 0; b < nb; b++) {
		size_t lo = b * B, hi = lo + B < n ? lo + B : n;
		size_t raw = transform_block(e, ci, enc, ref, lo, hi, dk);
		if (put_frame(e, bctx, f, e->tmp, raw, start + 4 * (b + extra), &pos, err, errlen))
			return -1;
		raw_total += raw;
	}
	ng_put_le64(ent + 48, pos - start);
	ng_put_le64(ent + 56, raw_total);
	*len = pos;
	return 0;
}

/* Reads the first or last value of an 8-byte column that may be NULL. */
static uint64_t col64(const uint8_t *col, size_t i)
{
	return col ? ng_get_le64(col + i * 8) : 0;
}

int ng_seg_encode_cols(ng_seg_encoder *e, const ng_field *fields, size_t nfields,
                       const uint8_t *const *cols, size_t n, const uint8_t **img, size_t *len,
                       char *err, size_t errlen)
{
	if (n == 0 || n > NG_SEG_MAX_ROWS) {
		msg(err, errlen, "segment row count %zu out of range", n);
		return -1;
	}
	e->fields = fields;
	e->nfields = nfields;
	int ps = pos_of(e, NG_F_FLOW_START), pe = pos_of(e, NG_F_FLOW_END);
	if (nfields == 0 || nfields > NG_SEG_MAX_COLUMNS || ps < 0) {
		msg(err, errlen, "bad column list (%zu columns, flow_start required)", nfields);
		return -1;
	}
	const size_t hsize = NG_SEG_FIXED_SIZE + NG_SEG_ENTRY_SIZE * nfields;
	if (reserve(&e->out, &e->outcap, hsize + 4 * (n / NG_SEG_BLOCK_ROWS + 1)) ||
	    reserve(&e->tmp, &e->tmpcap, NG_SEG_BLOCK_ROWS * 16) ||
	    reserve((uint8_t **)&e->z, &e->zcap, NG_SEG_BLOCK_ROWS * 8)) {
		msg(err, errlen, "out of memory encoding a segment of %zu rows", n);
		return -1;
	}
	for (size_t f = 0; f < nfields; f++)
		e->colv[f] = cols[f];
	for (int i = 0; i < NKEYS; i++)
		e->keyr[i].ci = -1; /* numberings of the last segment's columns */

	size_t pos = hsize;
	for (size_t f = 0; f < nfields; f++) {
		/* encode_column may move e->out: address the entry by offset */
		uint8_t ent[NG_SEG_ENTRY_SIZE];
		if (encode_column(e, f, n, ent, &pos, err, errlen))
			return -1;
		memcpy(e->out + NG_SEG_FIXED_SIZE + f * NG_SEG_ENTRY_SIZE, ent, sizeof ent);
	}

	uint8_t *h = e->out;
	memset(h, 0, NG_SEG_FIXED_SIZE);
	memcpy(h, NG_SEG_MAGIC, 8);
	ng_put_le16(h + 8, NG_SEG_VERSION);
	ng_put_le16(h + 10, (uint16_t)nfields);
	ng_put_le32(h + 12, (uint32_t)hsize);
	ng_put_le64(h + 16, n);
	const uint8_t *start = e->colv[ps];
	ng_put_le64(h + 24, col64(start, 0));
	ng_put_le64(h + 32, col64(start, n - 1));
	if (pe >= 0) {
		const uint8_t *ent_end = h + NG_SEG_FIXED_SIZE + (size_t)pe * NG_SEG_ENTRY_SIZE;
		ng_put_le64(h + 40, ng_get_le64(ent_end + 64));
		ng_put_le64(h + 48, ng_get_le64(ent_end + 72));
	} else {
		ng_put_le64(h + 40, col64(start, 0));
		ng_put_le64(h + 48, col64(start, n - 1));
	}
	ng_seg_reseal(h);
	*img = e->out;
	*len = pos;
	return 0;
}

int ng_seg_encode_fields(ng_seg_encoder *e, const ng_field *fields, size_t nfields,
                         const ng_flow *rows, const uint32_t *order, size_t n, const uint8_t **img,
                         size_t *len, char *err, size_t errlen)
{
	if (n == 0 || n > NG_SEG_MAX_ROWS || nfields == 0 || nfields > NG_SEG_MAX_COLUMNS) {
		msg(err, errlen, "segment of %zu rows and %zu columns out of range", n, nfields);
		return -1;
	}
	e->fields = fields;
	e->nfields = nfields;
	e->row_width = 0;
	for (size_t f = 0; f < nfields; f++) {
		e->col_off[f] = e->row_width;
		e->row_width += fields[f].size;
	}
	if (reserve(&e->cols, &e->colcap, e->row_width * n)) {
		msg(err, errlen, "out of memory encoding a segment of %zu rows", n);
		return -1;
	}
	gather(e, rows, order, n);
	const uint8_t *cols[NG_SEG_MAX_COLUMNS];
	for (size_t f = 0; f < nfields; f++)
		cols[f] = e->cols + e->col_off[f] * n;
	return ng_seg_encode_cols(e, fields, nfields, cols, n, img, len, err, errlen);
}

static int cmp_start(const void *a, const void *b, void *arg)
{
	const ng_flow *rows = arg;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	if (rows[i].flow_start != rows[j].flow_start)
		return rows[i].flow_start < rows[j].flow_start ? -1 : 1;
	return i < j ? -1 : i > j;
}

void ng_seg_order_by_start(const ng_flow *rows, uint32_t *order, size_t n)
{
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, n, sizeof *order, cmp_start, (void *)rows);
}

int ng_seg_encode(ng_seg_encoder *e, const ng_flow *rows, const uint32_t *order, size_t n,
                  const uint8_t **img, size_t *len, char *err, size_t errlen)
{
	return ng_seg_encode_fields(e, ng_fields, NG_FIELD_COUNT, rows, order, n, img, len, err,
	                            errlen);
}

/* ---- reader ----------------------------------------------------------- */

void ng_seg_reader_init(ng_seg_reader *r)
{
	memset(r, 0, sizeof *r);
	r->fd = -1;
}

static unsigned stored_width(const ng_seg_column *c)
{
	if (c->encoding == NG_ENC_V4 || c->encoding == NG_ENC_DICT || c->encoding == NG_ENC_RANK)
		return 4;
	return c->encoding == NG_ENC_DIFF ? 8 : c->width;
}

static bool width_fits_type(unsigned type, unsigned w)
{
	if (is_int_type(type))
		return w == 1 || w == 2 || w == 4 || w == 8;
	if (type == NG_FT_ADDR)
		return w == 16;
	if (type == NG_FT_MAC)
		return w == 6;
	if (type == NG_FT_STR)
		return w == 4;
	return w >= 1 && w <= 16; /* a type from a later version */
}

/* Validates one directory entry against the header and the file size. */
static int parse_entry(const uint8_t *p, const ng_seg_header *h, uint64_t file_size,
                       ng_seg_column *c, char *err, size_t errlen)
{
	memcpy(c->name, p, 32);
	if (c->name[NG_SEG_NAME_MAX] != 0 || c->name[0] == 0) {
		msg(err, errlen, "bad column name in the directory");
		return -1;
	}
	c->type = p[32];
	c->width = p[33];
	c->encoding = p[34];
	c->ref = ng_get_le16(p + 36);
	c->offset = ng_get_le64(p + 40);
	c->stored = ng_get_le64(p + 48);
	c->decoded = ng_get_le64(p + 56);
	memcpy(c->minmax, p + 64, 16);
	if (!width_fits_type(c->type, c->width)) {
		msg(err, errlen, "column %s: width %u impossible for type %u", c->name, c->width,
		    c->type);
		return -1;
	}
	if (c->encoding == NG_ENC_CONST) {
		static const uint8_t zero4[4];
		if (c->stored || c->decoded || c->width > 16 ||
		    (c->type == NG_FT_STR && memcmp(c->minmax, zero4, 4))) {
			msg(err, errlen, "column %s: constant column with data", c->name);
			return -1;
		}
		return 0;
	}
	if (c->encoding == NG_ENC_DICT) {
		uint32_t k = ng_get_le32(c->minmax), dlen = ng_get_le32(c->minmax + 4);
		if (c->type != NG_FT_STR || k == 0 || (uint64_t)k > h->rows || dlen < k ||
		    dlen > (uint64_t)k * (NG_STR_MAX + 1) || (c->decoded == 0 && k != 1)) {
			msg(err, errlen, "column %s: bad dictionary (%u entries, %u bytes)",
			    c->name, k, dlen);
			return -1;
		}
		if (c->decoded == 0)
			goto range; /* one entry: no index frames */
	}
	if (c->encoding == NG_ENC_MAP) {
		uint32_t k = ng_get_le32(c->minmax), dlen = ng_get_le32(c->minmax + 4);
		if (c->type != NG_FT_STR || k == 0 || (uint64_t)k > h->rows ||
		    dlen < 5 * (uint64_t)k || dlen > (uint64_t)k * (4 + 1 + NG_STR_MAX) ||
		    c->decoded || c->ref >= h->ncols) {
			msg(err, errlen, "column %s: bad key dictionary (%u entries, %u bytes)",
			    c->name, k, dlen);
			return -1;
		}
		goto range;
	}
	if (c->encoding > NG_ENC_RANK || (c->encoding == NG_ENC_DICT && c->type != NG_FT_STR) ||
	    (c->encoding == NG_ENC_RANK &&
	     !(is_int_type(c->type) ? c->width == 4 : c->type == NG_FT_ADDR)) ||
	    (c->encoding == NG_ENC_DELTA && c->width != 8) ||
	    (c->encoding == NG_ENC_V4 && c->width != 16) ||
	    (c->encoding == NG_ENC_DIFF && (!is_int_type(c->type) || c->ref >= h->ncols))) {
		msg(err, errlen, "column %s: unknown encoding %u for width %u", c->name,
		    c->encoding, c->width);
		return -1;
	}
range:
	if (c->decoded == 0 &&
	    !((c->encoding == NG_ENC_DICT || c->encoding == NG_ENC_MAP) && h->rows)) {
		msg(err, errlen, "column %s: no data", c->name);
		return -1;
	}
	if (c->offset < h->header_size || c->offset > file_size ||
	    c->stored > file_size - c->offset) {
		msg(err, errlen,
		    "column %s: data at %llu+%llu outside the file (%llu bytes): truncated?",
		    c->name, (unsigned long long)c->offset, (unsigned long long)c->stored,
		    (unsigned long long)file_size);
		return -1;
	}
	if (c->decoded && c->decoded != h->rows * stored_width(c)) {
		msg(err, errlen, "column %s: decoded size %llu, expected %llu", c->name,
		    (unsigned long long)c->decoded,
		    (unsigned long long)(h->rows * stored_width(c)));
		return -1;
	}
	return 0;
}

int ng_seg_parse_header(const uint8_t *p, size_t len, uint64_t file_size, ng_seg_header *h,
                        char *err, size_t errlen)
{
	memset(h, 0, sizeof *h);
	if (len < NG_SEG_FIXED_SIZE || memcmp(p, NG_SEG_MAGIC, 8)) {
		msg(err, errlen, "not a segment (bad magic or shorter than 64 bytes)");
		return -1;
	}
	h->version = ng_get_le16(p + 8);
	h->ncols = ng_get_le16(p + 10);
	h->header_size = ng_get_le32(p + 12);
	h->rows = ng_get_le64(p + 16);
	h->start_min = ng_get_le64(p + 24);
	h->start_max = ng_get_le64(p + 32);
	h->end_min = ng_get_le64(p + 40);
	h->end_max = ng_get_le64(p + 48);
	if (h->version != NG_SEG_VERSION) {
		msg(err, errlen, "segment format version %u, this build reads %u", h->version,
		    NG_SEG_VERSION);
		return -1;
	}
	if (h->ncols == 0 || h->ncols > NG_SEG_MAX_COLUMNS ||
	    h->header_size != NG_SEG_FIXED_SIZE + NG_SEG_ENTRY_SIZE * h->ncols ||
	    h->header_size > file_size || h->header_size > len) {
		msg(err, errlen, "header size %u for %u columns, file %llu bytes: truncated?",
		    h->header_size, h->ncols, (unsigned long long)file_size);
		return -1;
	}
	if (ng_get_le64(p + 56) != header_checksum(p, h->header_size)) {
		msg(err, errlen, "header checksum mismatch");
		return -1;
	}
	if (h->rows > NG_SEG_MAX_ROWS || h->start_min > h->start_max) {
		msg(err, errlen, "implausible row count %llu or time range",
		    (unsigned long long)h->rows);
		return -1;
	}
	h->cols = calloc(h->ncols, sizeof *h->cols);
	if (!h->cols) {
		msg(err, errlen, "out of memory");
		return -1;
	}
	for (uint32_t i = 0; i < h->ncols; i++) {
		if (parse_entry(p + NG_SEG_FIXED_SIZE + (size_t)i * NG_SEG_ENTRY_SIZE, h, file_size,
		                &h->cols[i], err, errlen))
			goto bad;
	}
	/* a DIFF column refers to an integer column that is not itself DIFF:
	 * decoding never goes more than one level deep */
	for (uint32_t i = 0; i < h->ncols; i++) {
		const ng_seg_column *c = &h->cols[i];
		if (c->encoding != NG_ENC_DIFF)
			continue;
		/* follow the chain: integer columns, no more than
		 * NG_SEG_MAX_DIFF_DEPTH DIFF links (so no cycle either) */
		uint32_t at = i;
		int depth = 0;
		while (h->cols[at].encoding == NG_ENC_DIFF) {
			uint32_t ref = h->cols[at].ref;
			if (++depth > NG_SEG_MAX_DIFF_DEPTH || ref == at ||
			    !is_int_type(h->cols[ref].type)) {
				msg(err, errlen, "column %s: bad reference column %u", c->name,
				    c->ref);
				goto bad;
			}
			at = ref;
		}
	}
	/* a MAP column's keys are an integer column of at most 32 bits that is
	 * not DIFF: decoding them goes no deeper */
	for (uint32_t i = 0; i < h->ncols; i++) {
		const ng_seg_column *c = &h->cols[i];
		if (c->encoding != NG_ENC_MAP)
			continue;
		const ng_seg_column *k = &h->cols[c->ref]; /* c->ref < ncols: parse_entry */
		if (!is_int_type(k->type) || k->width > 4 || k->encoding == NG_ENC_DIFF) {
			msg(err, errlen, "column %s: bad key column %u", c->name, c->ref);
			goto bad;
		}
	}
	return 0;
bad:
	free(h->cols);
	h->cols = NULL;
	return -1;
}

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

int ng_seg_open(ng_seg_reader *r, const char *path, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ng_seg_close(r);
		msg(err, errlen, "cannot open: %s", strerror(errno));
		return -1;
	}
	return ng_seg_open_fd(r, fd, err, errlen);
}

int ng_seg_open_fd(ng_seg_reader *r, int fd, char *err, size_t errlen)
{
	ng_seg_close(r);
	r->fd = fd;
	struct stat st;
	if (r->fd < 0 || fstat(r->fd, &st)) {
		msg(err, errlen, "cannot open: %s", strerror(errno));
		goto fail;
	}
	r->file_size = (uint64_t)st.st_size;
	uint8_t fixed[NG_SEG_FIXED_SIZE];
	if (r->file_size < NG_SEG_FIXED_SIZE || read_at(r->fd, fixed, sizeof fixed, 0)) {
		msg(err, errlen, "truncated: %llu bytes, shorter than the 64-byte header",
		    (unsigned long long)r->file_size);
		goto fail;
	}
	uint32_t hsize = ng_get_le32(fixed + 12);
	if (memcmp(fixed, NG_SEG_MAGIC, 8) || hsize < NG_SEG_FIXED_SIZE || hsize > r->file_size ||
	    hsize > NG_SEG_FIXED_SIZE + NG_SEG_ENTRY_SIZE * NG_SEG_MAX_COLUMNS) {
		/* let the parser name the fault */
		ng_seg_parse_header(fixed, sizeof fixed, r->file_size, &r->h, err, errlen);
		if (!memcmp(fixed, NG_SEG_MAGIC, 8))
			msg(err, errlen, "header size %u beyond the file (%llu bytes): truncated?",
			    hsize, (unsigned long long)r->file_size);
		goto fail;
	}
	if (reserve((uint8_t **)&r->zbuf, &r->zcap, hsize) || read_at(r->fd, r->zbuf, hsize, 0)) {
		msg(err, errlen, "cannot read the %u-byte header", hsize);
		goto fail;
	}
	if (ng_seg_parse_header(r->zbuf, hsize, r->file_size, &r->h, err, errlen))
		goto fail;
	r->gen++;
	if (r->h.ncols > r->cbcap) {
		ng_seg_colbuf *cb = realloc(r->cb, r->h.ncols * sizeof *cb);
		if (!cb) {
			msg(err, errlen, "out of memory");
			goto fail;
		}
		memset(cb + r->cbcap, 0, (r->h.ncols - r->cbcap) * sizeof *cb);
		r->cb = cb;
		r->cbcap = r->h.ncols;
	}
	for (size_t f = 0; f < NG_FIELD_COUNT; f++)
		r->col_of_field[f] = -1;
	for (uint32_t i = 0; i < r->h.ncols; i++) {
		const ng_field *f = ng_field_by_name(r->h.cols[i].name);
		/* match the full name only: short names are not column names */
		if (f && !strcmp(f->name, r->h.cols[i].name) && r->col_of_field[f->id] < 0)
			r->col_of_field[f->id] = (int)i;
	}
	return 0;
fail:
	ng_seg_close(r);
	return -1;
}

int ng_seg_read_rows(ng_seg_reader *r, uint64_t columns, ng_flow *out, uint8_t *colbuf, char *err,
                     size_t errlen)
{
	const size_t n = (size_t)r->h.rows;
	memset(out, 0, n * sizeof *out);
	for (size_t f = 0; f < NG_FIELD_COUNT; f++) {
		if (!(columns >> f & 1))
			continue;
		const ng_field *fd = &ng_fields[f];
		if (ng_seg_read_column(r, fd, colbuf, err, errlen))
			return -1;
		for (size_t i = 0; i < n; i++)
			memcpy((uint8_t *)&out[i] + fd->offset, colbuf + i * fd->size, fd->size);
	}
	return 0;
}

void ng_seg_close(ng_seg_reader *r)
{
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	free(r->h.cols);
	memset(&r->h, 0, sizeof r->h);
}

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

static bool compatible(const ng_field *f, const ng_seg_column *c)
{
	if (is_int_type(f->type))
		return is_int_type(c->type);
	return c->type == f->type && c->width == f->size;
}

static void fill_const(const ng_field *f, const ng_seg_column *c, uint8_t *out, size_t n)
{
	if (is_int_type(f->type)) {
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
static size_t v4_expand16(const uint8_t *p0, size_t n, uint8_t *out)
{
	(void)p0, (void)n, (void)out;
	return 0;
}
#endif

/* out[i] = the running sum of unzigzag(value i) of the n 8-byte values
 * whose planes are `in` (DELTA), or refv[i] + unzigzag(value i) (DIFF,
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
		transpose8(a);
		if (refv)
			for (unsigned k = 0; k < 8; k++)
				a[k] = refv[i0 + k] + unzigzag(a[k]);
		else
			for (unsigned k = 0; k < 8; k++)
				a[k] = prev += unzigzag(a[k]);
		memcpy(out + i0 * 8, a, 64);
	}
	for (size_t i = i0; i < n; i++) {
		uint64_t z = 0;
		for (unsigned k = 0; k < 8; k++)
			z |= (uint64_t)in[(size_t)k * n + i] << (8 * k);
		ng_put_le64(out + i * 8, refv ? refv[i] + unzigzag(z) : (prev += unzigzag(z)));
	}
}

/* Turns the n decompressed rows of planes in r->raw into field values at
 * `out` (DIFF: plus the reference values `refv`). */
static void decode_planes(const ng_seg_reader *r, const ng_field *f, const ng_seg_column *c,
                          size_t n, const uint64_t *refv, uint8_t *out)
{
	const uint8_t *in = r->raw;
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
		unshuffle(out, in, n, c->width);
		return;
	}
	if (f->size == 8 && c->encoding != NG_ENC_PLAIN) { /* DELTA, DIFF */
		undo_delta_diff(in, n, c->encoding == NG_ENC_DIFF ? refv : NULL, out);
		return;
	}
	/* integer width change (a field widened or narrowed since) */
	uint64_t prev = 0;
	unsigned sw = stored_width(c);
	for (size_t i = 0; i < n; i++) {
		uint64_t v = 0;
		for (unsigned k = 0; k < sw; k++)
			v |= (uint64_t)in[(size_t)k * n + i] << (8 * k);
		if (c->encoding == NG_ENC_DELTA)
			v = prev += unzigzag(v);
		else if (c->encoding == NG_ENC_DIFF)
			v = refv[i] + unzigzag(v);
		store_uint(out + i * f->size, f->size, v);
	}
}

size_t ng_seg_blocks(const ng_seg_reader *r)
{
	return (size_t)((r->h.rows + NG_SEG_BLOCK_ROWS - 1) / NG_SEG_BLOCK_ROWS);
}

size_t ng_seg_block_rows(const ng_seg_reader *r, size_t b)
{
	uint64_t lo = (uint64_t)b * NG_SEG_BLOCK_ROWS;
	if (lo >= r->h.rows)
		return 0;
	return r->h.rows - lo < NG_SEG_BLOCK_ROWS ? (size_t)(r->h.rows - lo) : NG_SEG_BLOCK_ROWS;
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
			msg(err, errlen, "column %s: dictionary entry %u beyond its %zu bytes",
			    c->name, i, len);
			return -1;
		}
		ids[i] = ng_intern((const char *)p + 1, p[0]);
		p += 1 + p[0];
	}
	if (p != end) {
		msg(err, errlen, "column %s: %zu bytes after the dictionary", c->name,
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
	if (reserve((uint8_t **)&cb->dict, &cb->dictcap, (size_t)k * 4)) {
		msg(err, errlen, "out of memory for column %s", c->name);
		return -1;
	}
	if (inflate_frame(r, idx, 0, dlen, err, errlen))
		return -1;
	cb->entries = k;
	return intern_strings(c, r->raw, dlen, k, cb->dict, err, errlen);
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
		msg(err, errlen, "column %s: bad value dictionary (%lld bytes for %llu rows)",
		    c->name, (long long)fcs, (unsigned long long)r->h.rows);
		return -1;
	}
	const size_t k = (size_t)(fcs / 4);
	if (reserve((uint8_t **)&cb->dict, &cb->dictcap, k * 4)) {
		msg(err, errlen, "out of memory for column %s", c->name);
		return -1;
	}
	if (inflate_frame(r, idx, 0, k * 4, err, errlen))
		return -1;
	unshuffle((uint8_t *)cb->dict, r->raw, k, 4);
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
	if (reserve((uint8_t **)&cb->dict, &cb->dictcap, (size_t)k * 4) ||
	    ng_keymap_reset(&cb->kmap, k)) {
		msg(err, errlen, "out of memory for column %s", c->name);
		return -1;
	}
	if (inflate_frame(r, idx, 0, dlen, err, errlen))
		return -1;
	const uint8_t *keys = r->raw;
	for (uint32_t j = 0; j < k; j++) {
		uint32_t key = ng_get_le32(keys + 4 * (size_t)j);
		if (j && key <= ng_get_le32(keys + 4 * (size_t)(j - 1))) {
			msg(err, errlen, "column %s: key %u of entry %u does not ascend", c->name,
			    key, j);
			return -1;
		}
		if (ng_keymap_put(&cb->kmap, key, j) < -1) {
			msg(err, errlen, "out of memory for column %s", c->name);
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
		msg(err, errlen, "column %s: frame table truncated", c->name);
		return -1;
	}
	if (reserve_big(&cb->z, &cb->zcap, c->stored ? c->stored : 1) ||
	    reserve((uint8_t **)&cb->frame_off, &cb->offcap, (nb + 1) * 8)) {
		msg(err, errlen, "out of memory for column %s", c->name);
		return -1;
	}
	if (read_at(r->fd, cb->z, c->stored, c->offset)) {
		msg(err, errlen, "column %s: read error or file shrank", c->name);
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
		msg(err, errlen, "column %s: frame sizes add up to %llu, not %llu", c->name,
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

/* Decompresses frame b of column idx into r->raw (exactly `want` bytes). */
static int inflate_frame(ng_seg_reader *r, uint32_t idx, size_t b, size_t want, char *err,
                         size_t errlen)
{
	const ng_seg_column *c = &r->h.cols[idx];
	if (load_column(r, idx, err, errlen))
		return -1;
	if (want > NG_SEG_BLOCK_ROWS * 16 && reserve((uint8_t **)&r->raw, &r->rawcap, want)) {
		msg(err, errlen, "out of memory");
		return -1;
	}
	if (!r->dctx && !(r->dctx = ZSTD_createDCtx())) {
		msg(err, errlen, "out of memory");
		return -1;
	}
	if (reserve((uint8_t **)&r->raw, &r->rawcap, NG_SEG_BLOCK_ROWS * 16)) {
		msg(err, errlen, "out of memory");
		return -1;
	}
	const ng_seg_colbuf *cb = &r->cb[idx];
	const uint8_t *frame = cb->z + cb->frame_off[b];
	size_t fsize = (size_t)(cb->frame_off[b + 1] - cb->frame_off[b]);
	unsigned long long fcs = ZSTD_getFrameContentSize(frame, fsize);
	if (fcs != want) {
		msg(err, errlen, "column %s block %zu: zstd frame content size %lld, expected %zu",
		    c->name, b, (long long)fcs, want);
		return -1;
	}
	size_t z = ZSTD_decompressDCtx(r->dctx, r->raw, want, frame, fsize);
	if (ZSTD_isError(z) || z != want) {
		msg(err, errlen, "column %s block %zu: %s", c->name, b,
		    ZSTD_isError(z) ? ZSTD_getErrorName(z) : "short zstd frame");
		return -1;
	}
	return 0;
}

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
	const uint8_t *p0 = r->raw, *p1 = p0 + n, *p2 = p1 + n, *p3 = p2 + n;
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
		msg(err, errlen, "column %s block %zu: dictionary index beyond its %u entries",
		    c->name, b, entries);
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
			memcpy(out + m * 16, v4_prefix, 12);
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
		msg(err, errlen, "out of memory");
		return -1;
	}
	uint32_t *v = direct ? (uint32_t *)(void *)out : r->vals;
	if (dict_ids(r, idx, b, lo, sel, k, v, err, errlen))
		return -1;
	if (!direct)
		rank_to_field(addr, f, v, k, out);
	return 0;
}

static const ng_field u64_field = {.type = NG_FT_U64, .size = 8};

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
		msg(err, errlen, "out of memory for column %s", r->h.cols[idx].name);
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
			msg(err, errlen, "column %s block %zu: key %llu not in its dictionary",
			    c->name, b, (unsigned long long)key);
			return -1;
		}
		last = key;
		out[m] = cb->dict[j];
	}
	return 0;
}

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
	if (inflate_frame(r, idx, b, n * stored_width(c), err, errlen))
		return -1;
	decode_planes(r, f, c, n, refv, out);
	return 0;
}

int ng_seg_find_column(const ng_seg_reader *r, const char *name)
{
	for (uint32_t i = 0; i < r->h.ncols; i++)
		if (!strcmp(r->h.cols[i].name, name))
			return (int)i;
	return -1;
}

int ng_seg_read_entry(ng_seg_reader *r, uint32_t idx, const ng_field *f, size_t b, void *out,
                      char *err, size_t errlen)
{
	if (b >= ng_seg_blocks(r) || idx >= r->h.ncols) {
		msg(err, errlen, "block %zu or column %u beyond the segment", b, idx);
		return -1;
	}
	if (!compatible(f, &r->h.cols[idx])) {
		memset(out, 0, ng_seg_block_rows(r, b) * f->size);
		return 0;
	}
	return read_entry_block(r, idx, f, b, out, 0, err, errlen);
}

int ng_seg_read_block(ng_seg_reader *r, const ng_field *f, size_t b, void *out, char *err,
                      size_t errlen)
{
	int idx = r->col_of_field[f->id];
	if (b >= ng_seg_blocks(r)) {
		msg(err, errlen, "block %zu beyond the segment", b);
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
	 * rather than decode it twice. */
	struct ng_seg_refbuf *rb = &r->ref[0];
	if (is_int_type(f->type) && f->size == 8 &&
	    (rb->v || (rb->v = malloc(NG_SEG_BLOCK_ROWS * 8)))) {
		memcpy(rb->v, out, ng_seg_block_rows(r, b) * 8);
		rb->gen = r->gen;
		rb->idx = (uint32_t)idx;
		rb->block = b;
	}
	return 0;
}

/* Rows lo + sel[m] (m < k) of the planes of one block in r->raw (n rows;
 * PLAIN, V4 or DIFF, whose reference block is refv) into out[m × f->size]:
 * each kept row's bytes are picked from the planes, without turning the
 * whole block into values. */
static void pick_planes(const ng_seg_reader *r, const ng_field *f, const ng_seg_column *c, size_t n,
                        const uint64_t *refv, size_t lo, const uint32_t *sel, size_t k,
                        uint8_t *out)
{
	const uint8_t *in = r->raw;
	if (c->encoding == NG_ENC_V4) {
		for (size_t m = 0; m < k; m++) {
			size_t i = lo + sel[m];
			uint8_t *o = out + m * 16;
			memcpy(o, v4_prefix, 12);
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
	const unsigned sw = stored_width(c);
	for (size_t m = 0; m < k; m++) {
		size_t i = lo + sel[m];
		uint64_t v = 0;
		for (unsigned p = 0; p < sw; p++)
			v |= (uint64_t)in[(size_t)p * n + i] << (8 * p);
		if (c->encoding == NG_ENC_DIFF)
			v = refv[i] + unzigzag(v);
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

int ng_seg_read_block_rows(ng_seg_reader *r, const ng_field *f, size_t b, size_t lo,
                           const uint32_t *sel, size_t k, void *out, char *err, size_t errlen)
{
	int idx = r->col_of_field[f->id];
	if (b >= ng_seg_blocks(r)) {
		msg(err, errlen, "block %zu beyond the segment", b);
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
	if (inflate_frame(r, (uint32_t)idx, b, n * stored_width(c), err, errlen))
		return -1;
	pick_planes(r, f, c, n, refv, lo, sel, k, out);
	return 0;
}

int ng_seg_read_column(ng_seg_reader *r, const ng_field *f, void *out, char *err, size_t errlen)
{
	const size_t nb = ng_seg_blocks(r);
	for (size_t b = 0; b < nb; b++)
		if (ng_seg_read_block(r, f, b, (uint8_t *)out + b * NG_SEG_BLOCK_ROWS * f->size,
		                      err, errlen))
			return -1;
	return 0;
}

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
			if (reserve(&cb->dictv, &cb->dictvcap, (size_t)cb->entries * f->size)) {
				msg(err, errlen, "out of memory for column %s",
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
