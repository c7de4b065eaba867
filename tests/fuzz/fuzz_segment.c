/*
 * fuzz_segment.c — libFuzzer target for the segment reader (segment.c)
 * and its whole-segment check (segment_check.c).
 *
 * A segment's header carries a checksum and its column data are zstd
 * frames with content checksums, so raw bytes would stop at the first
 * check.  The input instead describes a segment, which this target
 * writes as a valid file, checksums and all:
 *
 *   byte 0        mode: even = a described segment, odd = rows round trip
 *   described:    bytes 1..2 the row count N (1 or 2 blocks), then one
 *                 directory entry's type, width, encoding, reference and
 *                 16 bytes of zone map/dictionary sizes for a second
 *                 column beside a constant flow_start; its frames (the
 *                 count and decompressed sizes the entry implies) are
 *                 filled with the rest of the input, repeated, and
 *                 compressed.  Every field is read whole and by kept
 *                 rows: the plane, DELTA, DIFF, V4, DICT, RANK and MAP
 *                 decoders meet arbitrary data behind valid frames.  For
 *                 MAP the first column is a constant src_as (zone map
 *                 bytes 8..11) instead, the key the reference may name.
 *   round trip:   rows built from the input (values drawn from it, so
 *                 they repeat: RANK and DICT columns occur) are encoded
 *                 by ng_seg_encode and read back, also twice through
 *                 the query cache (the second time by reference); any
 *                 difference aborts.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include "core/field.h"
#include "core/strtab.h"
#include "store/framecache.h"
#include "store/segment.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void put(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Opens img[0..len) from a memory file; NULL on failure to open. */
static ng_seg_reader *open_image(const uint8_t *img, size_t len, ng_seg_reader *r)
{
	int fd = memfd_create("seg", 0);
	if (fd < 0)
		return NULL;
	if (write(fd, img, len) != (ssize_t)len) {
		close(fd);
		return NULL;
	}
	char err[256];
	ng_seg_reader_init(r);
	if (ng_seg_open_fd(r, fd, err, sizeof err)) {
		ng_seg_reader_free(r);
		return NULL;
	}
	return r;
}

/* Checks the segment whole (segment_check.c: frame tables, every column
 * of every block, columns of no field of the table too), then reads every
 * field of every block whole and, every third row, by rows. */
static void read_all(ng_seg_reader *r)
{
	static uint8_t out[NG_SEG_BLOCK_ROWS * 16];
	static uint32_t sel[NG_SEG_BLOCK_ROWS];
	char err[256];
	ng_seg_check(r, NULL, err, sizeof err);
	ng_seg_check_frames(r, err, sizeof err);
	for (size_t b = 0; b < ng_seg_blocks(r); b++) {
		size_t n = ng_seg_block_rows(r, b), k = 0;
		for (size_t i = 0; i < n; i += 3)
			sel[k++] = (uint32_t)i;
		for (size_t f = 0; f < NG_FIELD_COUNT; f++) {
			ng_seg_read_block(r, &ng_fields[f], b, out, err, sizeof err);
			ng_seg_read_block_rows(r, &ng_fields[f], b, 0, sel, k, out, err,
			                       sizeof err);
		}
	}
}

/* Stored bytes per row of an entry, as the reader expects them. */
static size_t stored_width(uint8_t enc, uint8_t width)
{
	return enc == NG_ENC_V4 || enc == NG_ENC_DICT || enc == NG_ENC_RANK ? 4
	       : enc == NG_ENC_DIFF                                         ? 8
	                                                                    : width;
}

static void described(const uint8_t *in, size_t size)
{
	/* the input read cyclically: short inputs describe a segment too
	 * (libFuzzer starts with inputs of a few bytes) */
	uint8_t d[22];
	if (size == 0)
		return;
	for (size_t i = 0; i < sizeof d; i++)
		d[i] = in[i % size];
	const size_t rows = 1 + (size_t)(d[0] | d[1] << 8) % (NG_SEG_BLOCK_ROWS + 4096);
	const uint8_t type = d[2] % 8, width = d[3] % 17, enc = d[4] % 8, ref = d[5] % 3;
	const uint8_t *minmax = d + 6, *fill = size > 22 ? in + 22 : in;
	const size_t nfill = size > 22 ? size - 22 : size,
	             blocks = (rows + NG_SEG_BLOCK_ROWS - 1) / NG_SEG_BLOCK_ROWS;
	const bool map = enc == NG_ENC_MAP, dict = enc == NG_ENC_DICT || enc == NG_ENC_RANK || map;
	const size_t nframes = map ? 1 : blocks + dict;
	const size_t hsize = NG_SEG_FIXED_SIZE + 2 * NG_SEG_ENTRY_SIZE;
	size_t cap = hsize + 4 * nframes + nframes * 64 + ZSTD_compressBound(rows * 16 + 65536);
	uint8_t *img = calloc(1, cap), *raw = malloc(rows * 16 + 65536);
	if (!img || !raw)
		goto out;
	/* entry 0: flow_start, constant */
	uint8_t *e0 = img + NG_SEG_FIXED_SIZE, *e1 = e0 + NG_SEG_ENTRY_SIZE;
	if (map) {
		memcpy(e0, "src_as", 6);
		e0[32] = NG_FT_U32, e0[33] = 4, e0[34] = NG_ENC_CONST;
		put(e0 + 64, minmax[8] | minmax[9] << 8 | (uint32_t)minmax[10] << 16, 8);
	} else {
		memcpy(e0, "flow_start", 10);
		e0[32] = NG_FT_TIME, e0[33] = 8, e0[34] = NG_ENC_CONST;
		put(e0 + 64, 1000, 8), put(e0 + 72, 1000, 8);
	}
	put(e0 + 40, hsize, 8);
	/* entry 1: the described column, named after a field of its type */
	static const char *const name_of_type[8] = {"protocol", "src_port",   "src_as",
	                                            "bytes",    "flow_end",   "src_addr",
	                                            "src_mac",  "src_country"};
	memcpy(e1, name_of_type[type], strlen(name_of_type[type]));
	e1[32] = type, e1[33] = width, e1[34] = enc;
	put(e1 + 36, ref, 2);
	memcpy(e1 + 64, minmax, 16);
	size_t pos = hsize + 4 * nframes, rawtotal = 0;
	for (size_t fr = 0; fr < nframes; fr++) {
		size_t want;
		if (dict && fr == 0)
			want = enc != NG_ENC_RANK ? (minmax[4] | minmax[5] << 8)
			                          : 4 * (1 + minmax[0] % 64);
		else {
			size_t b = fr - dict, lo = b * NG_SEG_BLOCK_ROWS;
			want = (rows - lo < NG_SEG_BLOCK_ROWS ? rows - lo : NG_SEG_BLOCK_ROWS) *
			       stored_width(enc, width);
			rawtotal += want;
		}
		for (size_t i = 0; i < want; i++)
			raw[i] = fill[i % nfill];
		size_t z = ZSTD_compress(img + pos, cap - pos, raw, want, 1);
		if (ZSTD_isError(z))
			goto out;
		put(img + hsize + 4 * fr, z, 4);
		pos += z;
	}
	put(e1 + 40, hsize, 8);
	put(e1 + 48, pos - hsize, 8);
	put(e1 + 56, rawtotal, 8);
	memcpy(img, NG_SEG_MAGIC, 8);
	put(img + 8, NG_SEG_VERSION, 2);
	put(img + 10, 2, 2);
	put(img + 12, hsize, 4);
	put(img + 16, rows, 8);
	put(img + 24, 1000, 8), put(img + 32, 1000, 8);
	put(img + 40, 1000, 8), put(img + 48, 1000, 8);
	ng_seg_reseal(img);
	ng_seg_reader r;
	if (open_image(img, pos, &r)) {
		read_all(&r);
		ng_seg_reader_free(&r);
	}
out:
	free(img);
	free(raw);
}

static void round_trip(const uint8_t *d, size_t size)
{
	if (size < 3)
		return;
	const size_t n = 1 + (size_t)(d[0] | d[1] << 8) % 2048; /* RANK from 1024 */
	ng_flow *rows = calloc(n, sizeof *rows), *back = calloc(n, sizeof *back);
	uint32_t *order = malloc(n * 4);
	uint8_t *colbuf = malloc(n * 16);
	ng_seg_encoder *e = ng_seg_encoder_new(1);
	if (!rows || !back || !order || !colbuf || !e)
		goto out;
	/* value j of field f in row i: 8 input bytes from a position the
	 * input picks, so that few distinct values repeat */
	for (size_t i = 0; i < n; i++) {
		for (size_t f = 0; f < NG_FIELD_COUNT; f++) {
			const ng_field *fd = &ng_fields[f];
			uint8_t *p = (uint8_t *)&rows[i] + fd->offset;
			size_t at = d[(i * 31 + f * 7) % size] % (size - 2);
			for (size_t k = 0; k < fd->size; k++)
				p[k] = d[(at + k) % size];
			if (fd->type == NG_FT_STR) {
				char s[2] = {(char)('a' + p[0] % 8), 0};
				uint32_t id = p[1] & 1 ? ng_intern(s, 1) : 0;
				memcpy(p, &id, 4);
			} else if (fd->type == NG_FT_ADDR && (p[0] & 1)) { /* IPv4-mapped */
				memset(p, 0, 10);
				p[10] = p[11] = 0xff;
			}
		}
		order[i] = (uint32_t)i;
	}
	ng_seg_order_by_start(rows, order, n);
	const uint8_t *img;
	size_t len;
	char err[256];
	if (ng_seg_encode(e, rows, order, n, &img, &len, err, sizeof err))
		goto out;
	ng_seg_reader r;
	if (!open_image(img, len, &r))
		abort(); /* what the encoder writes must open */
	/* without the query cache, then twice through it (framecache.h):
	 * the first fills it, the second takes every frame by reference */
	for (int pass = 0; pass < 3; pass++) {
		if (pass == 1 && ng_frame_cache_configure(64u << 20))
			break;
		if (ng_seg_read_rows(&r, ng_colset_all(), back, colbuf, err, sizeof err))
			abort();
		for (size_t i = 0; i < n; i++)
			for (size_t f = 0; f < NG_FIELD_COUNT; f++) {
				const ng_field *fd = &ng_fields[f];
				if (memcmp((uint8_t *)&back[i] + fd->offset,
				           (uint8_t *)&rows[order[i]] + fd->offset, fd->size))
					abort();
			}
	}
	read_all(&r);
	ng_frame_cache_configure(0); /* the next input starts with none */
	ng_seg_reader_free(&r);
out:
	ng_seg_encoder_free(e);
	free(rows);
	free(back);
	free(order);
	free(colbuf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (data[0] & 1)
		round_trip(data + 1, size - 1);
	else
		described(data + 1, size - 1);
	return 0;
}
