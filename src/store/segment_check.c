/*
 * segment_check.c — is a segment whole?  The checks that decide, before
 * any row of a segment is counted, whether the segment is counted at all.
 *
 * Opening a segment (segment_read.c) checks its header: magic, version,
 * the header checksum, every column's offset and size within the file.
 * That is all a scan used to know before it read the first block, and a
 * frame found damaged in the second block came after the first block's
 * rows were already counted: a segment reported as skipped still added
 * 16 384 rows to the totals, and queries reading different columns gave
 * different totals.  Two more checks close that:
 *
 *   ng_seg_check_frames  every column's frame table (4 bytes a frame, one
 *                        small pread per stored column): the frame sizes
 *                        must add up to the column's stored size S.
 *                        Cheap; catches a table overwritten or a column
 *                        cut short, whatever columns a query reads.
 *   ng_seg_check         every block of every column (or of the columns
 *                        given) decoded as a scan would decode it: zstd's
 *                        content size and checksum (XXH64) of each frame,
 *                        dictionary indexes below K, MAP keys present,
 *                        flow_start in order and inside the header's
 *                        range.  The cost of reading the columns once
 *                        more; what a scan, fsck and the rollup builder
 *                        run before they count or derive anything.
 *
 * A segment is damaged when any check fails, and then contributes
 * nothing: the decision is the segment's, never a block's, so every
 * query shape that reads it either counts all its rows or none.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/bytes.h"
#include "store/segment.h"
#include "store/segment_int.h"

/* Frames of column c of r: one per block, plus the dictionary frame of
 * DICT and RANK (whose block frames are absent when DICT holds one
 * string), MAP only its dictionary.  As segment_read.c's column_frames. */
static size_t frames_of(const ng_seg_reader *r, const ng_seg_column *c)
{
	if (c->encoding == NG_ENC_MAP)
		return 1;
	if (c->encoding != NG_ENC_DICT && c->encoding != NG_ENC_RANK)
		return ng_seg_blocks(r);
	return 1 + (c->decoded ? ng_seg_blocks(r) : 0);
}

/* segment.h.  One pread of 4 × frames bytes per stored column. */
int ng_seg_check_frames(const ng_seg_reader *r, char *err, size_t errlen)
{
	uint8_t *tab = NULL;
	size_t cap = 0;
	int rc = 0;
	for (uint32_t i = 0; i < r->h.ncols && rc == 0; i++) {
		const ng_seg_column *c = &r->h.cols[i];
		if (c->encoding == NG_ENC_CONST)
			continue;
		const size_t nf = frames_of(r, c);
		const size_t len = 4 * nf;
		if (c->stored < len) {
			ng_seg_errf(err, errlen, "column %s: frame table truncated", c->name);
			rc = -1;
			break;
		}
		if (len > cap) {
			uint8_t *t = realloc(tab, len);
			if (!t) {
				ng_seg_errf(err, errlen, "out of memory");
				rc = -1;
				break;
			}
			tab = t;
			cap = len;
		}
		ssize_t k;
		do
			k = pread(r->fd, tab, len, (off_t)c->offset);
		while (k < 0 && errno == EINTR);
		if (k != (ssize_t)len) {
			ng_seg_errf(err, errlen, "column %s: read error or file shrank", c->name);
			rc = -1;
			break;
		}
		uint64_t sum = len;
		for (size_t f = 0; f < nf; f++)
			sum += ng_get_le32(tab + 4 * f);
		if (sum != c->stored) {
			ng_seg_errf(err, errlen, "column %s: frame sizes add up to %llu, not %llu",
			            c->name, (unsigned long long)sum,
			            (unsigned long long)c->stored);
			rc = -1;
		}
	}
	free(tab);
	return rc;
}

/* The field a column is decoded as: the table's field of its name, when
 * the types agree; otherwise (a column of a later version, or another
 * type) one made up of its own type and width, so that its frames are
 * decompressed and checked all the same.  *f is the storage. */
static const ng_field *field_of(const ng_seg_reader *r, uint32_t idx, ng_field *f)
{
	const ng_seg_column *c = &r->h.cols[idx];
	for (size_t k = 0; k < NG_FIELD_COUNT; k++)
		if (r->col_of_field[k] == (int)idx) {
			const ng_field *t = &ng_fields[k];
			if (ng_seg_is_int(t->type) ? ng_seg_is_int(c->type)
			                           : t->type == c->type && t->size == c->width)
				return t;
			break;
		}
	memset(f, 0, sizeof *f);
	f->id = NG_FIELD_COUNT;
	f->name = c->name;
	f->type = ng_seg_is_int(c->type) ? NG_FT_U64 : (enum ng_field_type)c->type;
	f->size = ng_seg_is_int(c->type) ? 8 : c->width;
	return f;
}

/* flow_start values v[0..n) of block b: in order from *prev, inside the
 * header's [start_min, start_max].  Returns 0 or -1 with a message. */
static int check_starts(const ng_seg_reader *r, const uint64_t *v, size_t n, size_t b,
                        uint64_t *prev, char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		if (v[i] < *prev || v[i] < r->h.start_min || v[i] > r->h.start_max) {
			ng_seg_errf(err, errlen,
			            "column flow_start block %zu row %zu: %llu out of order or "
			            "outside the header's range",
			            b, i, (unsigned long long)v[i]);
			return -1;
		}
		*prev = v[i];
	}
	return 0;
}

/* segment.h.  Column by column (a column's stored bytes are read once),
 * block by block into one scratch block. */
int ng_seg_check(ng_seg_reader *r, const ng_colset *only, char *err, size_t errlen)
{
	if (ng_seg_check_frames(r, err, errlen))
		return -1;
	void *scratch = malloc((size_t)NG_SEG_BLOCK_ROWS * 16);
	if (!scratch) {
		ng_seg_errf(err, errlen, "out of memory");
		return -1;
	}
	const size_t nb = ng_seg_blocks(r);
	int rc = 0;
	for (uint32_t idx = 0; idx < r->h.ncols && rc == 0; idx++) {
		ng_field own;
		const ng_field *f = field_of(r, idx, &own);
		if (only && (f == &own || !ng_colset_has(*only, f->id)))
			continue;
		const bool starts = f->id == NG_F_FLOW_START;
		uint64_t prev = 0;
		for (size_t b = 0; b < nb && rc == 0; b++) {
			rc = starts ? ng_seg_read_entry(r, idx, f, b, scratch, err, errlen)
			            : ng_seg_check_block(r, idx, f, b, scratch, err, errlen);
			if (rc == 0 && starts)
				rc = check_starts(r, scratch, ng_seg_block_rows(r, b), b, &prev,
				                  err, errlen);
		}
	}
	free(scratch);
	return rc;
}
