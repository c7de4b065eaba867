/*
 * segment.c — the segment file: flow records stored column by column.
 * This file is the format (below, byte by byte) and the code that checks
 * it: the header checksum and the parsing of the header and the column
 * directory.  docs/store-format.md is the long reference (why each
 * encoding exists, what it saves, how the store around it works); the two
 * describe the same bytes, and a change to one is a change to the other.
 * The encoder is segment_encode.c (which encoding a column gets:
 * segment_choose.c), the reader segment_read.c, the byte planes
 * shuffle.c; segment_int.h is what they share.
 *
 * A segment holds the rows of one flush that fall in one UTC hour of
 * flow_start, sorted by flow_start.  It is written once (to a temporary
 * name, fsynced, renamed: ng_seg_publish() in files.c) and never changed.
 * Every field of
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
 *         36    2  DIFF: directory index of the reference column; MAP:
 *                  of the key column; else 0
 *         38    2  reserved, zero
 *         40    8  offset of the column's stored bytes from the file start
 *         48    8  S, stored size in bytes (0 for CONST)
 *         56    8  D, size after zstd decompression (0 for CONST)
 *         64   16  integers: min (8 bytes) then max (8 bytes) of the
 *                  column, a zone map; CONST address/MAC: the value (W
 *                  bytes, zero-padded); V4 (and RANK addresses): the
 *                  smallest and largest IPv4 address as numbers (u32
 *                  a << 24 | b << 16 | c << 8 | d, then 8 zero bytes;
 *                  both 0 when written by a build without it); DICT and
 *                  MAP: K, the dictionary's entry count (u32), then L,
 *                  its size in bytes (u32), then 8 zero bytes; otherwise
 *                  zero
 *
 *   Column data follows the directory, columns in directory order.  The
 *   rows are cut into blocks of 16384 (NG_SEG_BLOCK_ROWS; the last block
 *   holds the rest), B = ceil(N / 16384) blocks.  A non-constant column's
 *   S bytes are (DICT, RANK and MAP add a dictionary frame ahead of the
 *   blocks, below):
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
 *              the IPv4 range as V4).  See segment_choose.c and store/rank.h.
 *     7 MAP    strings (type 7, W = 4) that an integer column decides (an
 *              AS name by its AS number): the entry's bytes 36..37 give the
 *              key column (an integer column of W ≤ 4, not DIFF), 64..71 K
 *              and L as DICT's; the frame table has 1 entry, the
 *              dictionary: the K distinct keys (1 ≤ K ≤ N) strictly
 *              ascending as u32, then each key's string as DICT's entries.
 *              D = 0.  A row's key missing from the dictionary is
 *              corruption.  See segment_choose.c.
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

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/bytes.h"
#include "core/hash.h"
#include "core/strtab.h"
#include "store/segment_int.h"

/* segment_int.h: err[errlen] = the message, when there is room for one. */
void ng_seg_errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (err && errlen)
		vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* The header checksum of image img whose header (fixed part and
 * directory) is hsize bytes: FNV-1a 64 of bytes [0, hsize) with the
 * checksum's own 8 bytes (56..63) taken as zero. */
static uint64_t header_checksum(const uint8_t *img, size_t hsize)
{
	static const uint8_t zero[8];
	uint64_t h = ng_fnv1a64(NG_FNV64_INIT, img, 56);
	h = ng_fnv1a64(h, zero, 8);
	return ng_fnv1a64(h, img + 64, hsize - 64);
}

/* segment.h: the checksum of a header edited in place (tests). */
void ng_seg_reseal(uint8_t *img)
{
	ng_put_le64(img + 56, header_checksum(img, ng_get_le32(img + 12)));
}

/* True when w bytes a value is a width a column of field type `type` can
 * have (any width up to 16 for a type this build does not know). */
static bool width_fits_type(unsigned type, unsigned w)
{
	if (ng_seg_is_int(type))
		return w == 1 || w == 2 || w == 4 || w == 8;
	if (type == NG_FT_ADDR)
		return w == 16;
	if (type == NG_FT_MAC)
		return w == 6;
	if (type == NG_FT_STR)
		return w == 4;
	return w >= 1 && w <= 16; /* a type from a later version */
}

/* Fills c from the 80-byte directory entry at p and validates it against
 * the header and the file size: name, width for the type, the encoding's
 * own fields, data inside the file, D = N × stored width.  Returns 0, or
 * -1 with a message.  References to other columns (DIFF, MAP) are checked
 * by the caller, once every entry is parsed. */
static int parse_entry(const uint8_t *p, const ng_seg_header *h, uint64_t file_size,
                       ng_seg_column *c, char *err, size_t errlen)
{
	memcpy(c->name, p, 32);
	if (c->name[NG_SEG_NAME_MAX] != 0 || c->name[0] == 0) {
		ng_seg_errf(err, errlen, "bad column name in the directory");
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
		ng_seg_errf(err, errlen, "column %s: width %u impossible for type %u", c->name,
		            c->width, c->type);
		return -1;
	}
	if (c->encoding == NG_ENC_CONST) {
		static const uint8_t zero4[4];
		if (c->stored || c->decoded || c->width > 16 ||
		    (c->type == NG_FT_STR && memcmp(c->minmax, zero4, 4))) {
			ng_seg_errf(err, errlen, "column %s: constant column with data", c->name);
			return -1;
		}
		return 0;
	}
	if (c->encoding == NG_ENC_DICT) {
		uint32_t k = ng_get_le32(c->minmax), dlen = ng_get_le32(c->minmax + 4);
		if (c->type != NG_FT_STR || k == 0 || (uint64_t)k > h->rows || dlen < k ||
		    dlen > (uint64_t)k * (NG_STR_MAX + 1) || (c->decoded == 0 && k != 1)) {
			ng_seg_errf(err, errlen, "column %s: bad dictionary (%u entries, %u bytes)",
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
			ng_seg_errf(err, errlen,
			            "column %s: bad key dictionary (%u entries, %u bytes)", c->name,
			            k, dlen);
			return -1;
		}
		goto range;
	}
	if (c->encoding > NG_ENC_RANK || (c->encoding == NG_ENC_DICT && c->type != NG_FT_STR) ||
	    (c->encoding == NG_ENC_RANK &&
	     !(ng_seg_is_int(c->type) ? c->width == 4 : c->type == NG_FT_ADDR)) ||
	    (c->encoding == NG_ENC_DELTA && c->width != 8) ||
	    (c->encoding == NG_ENC_V4 && c->width != 16) ||
	    (c->encoding == NG_ENC_DIFF && (!ng_seg_is_int(c->type) || c->ref >= h->ncols))) {
		ng_seg_errf(err, errlen, "column %s: unknown encoding %u for width %u", c->name,
		            c->encoding, c->width);
		return -1;
	}
range:
	if (c->decoded == 0 &&
	    !((c->encoding == NG_ENC_DICT || c->encoding == NG_ENC_MAP) && h->rows)) {
		ng_seg_errf(err, errlen, "column %s: no data", c->name);
		return -1;
	}
	if (c->offset < h->header_size || c->offset > file_size ||
	    c->stored > file_size - c->offset) {
		ng_seg_errf(
		    err, errlen,
		    "column %s: data at %llu+%llu outside the file (%llu bytes): truncated?",
		    c->name, (unsigned long long)c->offset, (unsigned long long)c->stored,
		    (unsigned long long)file_size);
		return -1;
	}
	if (c->decoded && c->decoded != h->rows * ng_seg_stored_width(c)) {
		ng_seg_errf(err, errlen, "column %s: decoded size %llu, expected %llu", c->name,
		            (unsigned long long)c->decoded,
		            (unsigned long long)(h->rows * ng_seg_stored_width(c)));
		return -1;
	}
	return 0;
}

/* segment.h.  Parses the fixed header, checks it (version, sizes, the
 * checksum, plausible rows and times), then every directory entry and the
 * references between entries.  h->cols is allocated here: the caller
 * frees it (ng_seg_close), also after a failure, which leaves it NULL. */
int ng_seg_parse_header(const uint8_t *p, size_t len, uint64_t file_size, ng_seg_header *h,
                        char *err, size_t errlen)
{
	memset(h, 0, sizeof *h);
	if (len < NG_SEG_FIXED_SIZE || memcmp(p, NG_SEG_MAGIC, 8)) {
		ng_seg_errf(err, errlen, "not a segment (bad magic or shorter than 64 bytes)");
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
		ng_seg_errf(err, errlen, "segment format version %u, this build reads %u",
		            h->version, NG_SEG_VERSION);
		return -1;
	}
	if (h->ncols == 0 || h->ncols > NG_SEG_MAX_COLUMNS ||
	    h->header_size != NG_SEG_FIXED_SIZE + NG_SEG_ENTRY_SIZE * h->ncols ||
	    h->header_size > file_size || h->header_size > len) {
		ng_seg_errf(err, errlen,
		            "header size %u for %u columns, file %llu bytes: truncated?",
		            h->header_size, h->ncols, (unsigned long long)file_size);
		return -1;
	}
	if (ng_get_le64(p + 56) != header_checksum(p, h->header_size)) {
		ng_seg_errf(err, errlen, "header checksum mismatch");
		return -1;
	}
	if (h->rows > NG_SEG_MAX_ROWS || h->start_min > h->start_max) {
		ng_seg_errf(err, errlen, "implausible row count %llu or time range",
		            (unsigned long long)h->rows);
		return -1;
	}
	h->cols = calloc(h->ncols, sizeof *h->cols);
	if (!h->cols) {
		ng_seg_errf(err, errlen, "out of memory");
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
			    !ng_seg_is_int(h->cols[ref].type)) {
				ng_seg_errf(err, errlen, "column %s: bad reference column %u",
				            c->name, c->ref);
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
		if (!ng_seg_is_int(k->type) || k->width > 4 || k->encoding == NG_ENC_DIFF) {
			ng_seg_errf(err, errlen, "column %s: bad key column %u", c->name, c->ref);
			goto bad;
		}
	}
	return 0;
bad:
	free(h->cols);
	h->cols = NULL;
	return -1;
}
