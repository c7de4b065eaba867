/*
 * segment_encode.c — the segment encoder: flow records in, the image of
 * a segment file out (its bytes: segment.c).
 *
 * An encode is four steps, in memory; the caller then writes the image
 * (ng_seg_publish, files.c):
 *
 *  1. gather (ng_seg_encode_fields: compaction, rollups): the records, in
 *     flow_start order through `order`, are copied field by field into an
 *     array per column.  The writer holds its rows as columns already and
 *     starts at step 2 (ng_seg_encode_cols), NULL for a column no row set.
 *  2. choose, per column: ng_seg_choose_encoding (segment_choose.c) looks
 *     at every row, fills the zone map of the directory entry, and builds
 *     RANK's and MAP's dictionaries when it picks them; DICT's is built
 *     here (build_dict).
 *  3. transform and compress, per column and block of NG_SEG_BLOCK_ROWS
 *     rows (transform_block, put_frame): the block's values in the
 *     encoding (zigzagged deltas or differences, dictionary indexes, the
 *     four bytes of IPv4) as byte planes (shuffle.h), then a zstd frame
 *     of its own; the frames' sizes go to the column's frame table, and a
 *     dictionary is one more frame ahead of the blocks.
 *  4. the fixed header: rows, the time ranges (flow_start's first and last
 *     rows, flow_end's zone map) and the checksum (ng_seg_encode_cols).
 *
 * Two zstd contexts: one at the level asked for (1 for the writer, 3 for
 * compaction and rollups), and one for blocks whose bytes are close to
 * independent draws (DICT indexes, narrow integers' planes, IPv4 bytes),
 * which skips most of the match search and still Huffman-codes literals
 * (index_cctx, entropy_only).
 *
 * This runs on every flush, on the collector's flush thread.  The encoder
 * keeps every buffer from one segment to the next (the image, the gathered
 * columns on huge pages, the dictionaries), so a steady stream of flushes
 * allocates nothing; the image it returns is valid until its next call.
 * The same rows and the same libzstd give the same bytes: bench/segbytes
 * compares two builds' output.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/bytes.h"
#include "core/strtab.h"
#include "store/segment.h"
#include "store/segment_int.h"
#include "store/shuffle.h"
/* for ZSTD_c_literalCompressionMode (index frames, below); a libzstd
 * without it refuses the parameter and the plain settings are used */
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

/* ---- the encoder and its buffers --------------------------------------- */

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

/* segment.h.  Both contexts write frames with their content size and
 * checksum (XXH64), which the reader relies on. */
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

/* segment.h: the encoder and every buffer it kept. */
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

/* ---- step 1: records to columns ----------------------------------------- */

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

/* Gathers every field of rows[order[0..n)] into its column of e->cols
 * (field f at e->col_off[f] × n), 256 rows at a time. */
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

/* ---- DICT: the dictionary of a string column ---------------------------- */

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
	if (ng_seg_reserve((uint8_t **)&e->didx, &e->didxcap, n * 4) ||
	    ng_seg_reserve((uint8_t **)&e->dnew, &e->dnewcap, n * 4) ||
	    dict_map(e, (size_t)LIMIT + 1))
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
	if (ng_seg_reserve(&e->dict, &e->dictcap, bytes))
		return 0;
	size_t pos = 0;
	for (size_t j = 0; j < k; j++) {
		if (j + 8 < k) /* the entries are scattered: fetch ahead */
			ng_str_prefetch(e->dnew[j + 8]);
		size_t len = ng_str_len(e->dnew[j]);
		e->dict[pos] = (uint8_t)len;
		memcpy(e->dict + pos + 1, ng_str(e->dnew[j]), len);
		pos += 1 + len;
	}
	*dlen = pos;
	return k;
}

/* ---- steps 3 and 4: blocks, frames, the image ---------------------------- */

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
	case NG_ENC_RANK: ng_shuffle_index(e->tmp, e->didx + lo, m, dk); return m * 4;
	case NG_ENC_DIFF: {
		const ng_field *rf = &e->fields[ref];
		const uint8_t *rc = e->colv[ref] + lo * rf->size;
		for (size_t i = 0; i < m; i++)
			e->z[i] = ng_seg_zigzag(ng_seg_load_uint(col + i * w, w) -
			                        ng_seg_load_uint(rc + i * rf->size, rf->size));
		ng_shuffle(e->tmp, (const uint8_t *)e->z, m, 8);
		return m * 8;
	}
	case NG_ENC_DELTA: {
		uint64_t prev = 0; /* each block starts from zero: blocks decode alone */
		for (size_t i = 0; i < m; i++) {
			uint64_t v = ng_get_le64(col + i * 8);
			e->z[i] = ng_seg_zigzag(v - prev);
			prev = v;
		}
		ng_shuffle(e->tmp, (const uint8_t *)e->z, m, 8);
		return m * 8;
	}
	case NG_ENC_V4:
		for (size_t i = 0; i < m; i++)
			for (unsigned k = 0; k < 4; k++)
				e->tmp[k * m + i] = col[i * 16 + 12 + k];
		return m * 4;
	default: ng_shuffle(e->tmp, col, m, w); return m * w;
	}
}

/* Appends one zstd frame of src[0..raw) at e->out[*pos], its size at
 * e->out[table]. */
static int put_frame(ng_seg_encoder *e, ZSTD_CCtx *cctx, const ng_field *f, const void *src,
                     size_t raw, size_t table, size_t *pos, char *err, size_t errlen)
{
	size_t bound = ZSTD_compressBound(raw);
	if (ng_seg_reserve(&e->out, &e->outcap, *pos + bound)) {
		ng_seg_errf(err, errlen, "out of memory encoding column %s", f->name);
		return -1;
	}
	size_t z = ZSTD_compress2(cctx, e->out + *pos, bound, src, raw);
	if (ZSTD_isError(z)) {
		ng_seg_errf(err, errlen, "zstd compression of column %s: %s", f->name,
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
	unsigned enc = ng_seg_choose_encoding(e, ci, n, ent, &ref);
	ent[34] = (uint8_t)enc;
	if (enc == NG_ENC_CONST)
		return 0;
	if (enc == NG_ENC_DIFF || enc == NG_ENC_MAP)
		ng_put_le16(ent + 36, (uint16_t)ref);
	const size_t B = NG_SEG_BLOCK_ROWS;
	size_t nb = (n + B - 1) / B, extra = 0, dlen = 0, dk = 0;
	if (enc == NG_ENC_DICT) {
		if (!(dk = build_dict(e, ci, n, &dlen))) {
			ng_seg_errf(err, errlen, "out of memory encoding column %s (%zu rows)",
			            f->name, n);
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
	if (ng_seg_reserve(&e->out, &e->outcap, pos)) {
		ng_seg_errf(err, errlen, "out of memory encoding column %s (%zu rows)", f->name, n);
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

/* segment.h.  Steps 2 to 4: every column's entry and data after the
 * header, then the fixed header over them, then the checksum. */
int ng_seg_encode_cols(ng_seg_encoder *e, const ng_field *fields, size_t nfields,
                       const uint8_t *const *cols, size_t n, const uint8_t **img, size_t *len,
                       char *err, size_t errlen)
{
	if (n == 0 || n > NG_SEG_MAX_ROWS) {
		ng_seg_errf(err, errlen, "segment row count %zu out of range", n);
		return -1;
	}
	e->fields = fields;
	e->nfields = nfields;
	int ps = ng_seg_int_column(e, NG_F_FLOW_START), pe = ng_seg_int_column(e, NG_F_FLOW_END);
	if (nfields == 0 || nfields > NG_SEG_MAX_COLUMNS || ps < 0) {
		ng_seg_errf(err, errlen, "bad column list (%zu columns, flow_start required)",
		            nfields);
		return -1;
	}
	const size_t hsize = NG_SEG_FIXED_SIZE + NG_SEG_ENTRY_SIZE * nfields;
	if (ng_seg_reserve(&e->out, &e->outcap, hsize + 4 * (n / NG_SEG_BLOCK_ROWS + 1)) ||
	    ng_seg_reserve(&e->tmp, &e->tmpcap, NG_SEG_BLOCK_ROWS * 16) ||
	    ng_seg_reserve((uint8_t **)&e->z, &e->zcap, NG_SEG_BLOCK_ROWS * 8)) {
		ng_seg_errf(err, errlen, "out of memory encoding a segment of %zu rows", n);
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

/* segment.h.  Step 1 (gather) into e->cols, then ng_seg_encode_cols. */
int ng_seg_encode_fields(ng_seg_encoder *e, const ng_field *fields, size_t nfields,
                         const ng_flow *rows, const uint32_t *order, size_t n, const uint8_t **img,
                         size_t *len, char *err, size_t errlen)
{
	if (n == 0 || n > NG_SEG_MAX_ROWS || nfields == 0 || nfields > NG_SEG_MAX_COLUMNS) {
		ng_seg_errf(err, errlen, "segment of %zu rows and %zu columns out of range", n,
		            nfields);
		return -1;
	}
	e->fields = fields;
	e->nfields = nfields;
	e->row_width = 0;
	for (size_t f = 0; f < nfields; f++) {
		e->col_off[f] = e->row_width;
		e->row_width += fields[f].size;
	}
	if (ng_seg_reserve(&e->cols, &e->colcap, e->row_width * n)) {
		ng_seg_errf(err, errlen, "out of memory encoding a segment of %zu rows", n);
		return -1;
	}
	gather(e, rows, order, n);
	const uint8_t *cols[NG_SEG_MAX_COLUMNS];
	for (size_t f = 0; f < nfields; f++)
		cols[f] = e->cols + e->col_off[f] * n;
	return ng_seg_encode_cols(e, fields, nfields, cols, n, img, len, err, errlen);
}

/* qsort_r order of row indexes: by the rows' flow_start, then by index
 * (so that the order is the same whatever qsort does with ties). */
static int cmp_start(const void *a, const void *b, void *arg)
{
	const ng_flow *rows = arg;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	if (rows[i].flow_start != rows[j].flow_start)
		return rows[i].flow_start < rows[j].flow_start ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* segment.h: order[] sorted by flow_start, ties by index. */
void ng_seg_order_by_start(const ng_flow *rows, uint32_t *order, size_t n)
{
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, n, sizeof *order, cmp_start, (void *)rows);
}

/* segment.h: ng_seg_encode_fields with the whole field table. */
int ng_seg_encode(ng_seg_encoder *e, const ng_flow *rows, const uint32_t *order, size_t n,
                  const uint8_t **img, size_t *len, char *err, size_t errlen)
{
	return ng_seg_encode_fields(e, ng_fields, NG_FIELD_COUNT, rows, order, n, img, len, err,
	                            errlen);
}
