/*
 * segment.h — one immutable columnar segment file (internal to src/store).
 *
 * The byte-by-byte format is at the top of segment.c and in
 * docs/store-format.md.  An encoder (segment_encode.c, segment_choose.c)
 * turns flow records into a segment image in memory; a reader
 * (segment_read.c) opens a file, validates its header, and decodes columns
 * on request.  Neither is thread-safe: one per thread.
 */
#ifndef NG_SEGMENT_H
#define NG_SEGMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/colset.h"
#include "core/field.h"
#include "core/flow.h"
#include "store/framecache.h"
#include "store/keymap.h"

#define NG_SEG_MAGIC "NGFLOWSG"
#define NG_SEG_VERSION 1
#define NG_SEG_FIXED_SIZE 64 /* fixed part of the header */
#define NG_SEG_ENTRY_SIZE 80 /* one column directory entry */
#define NG_SEG_NAME_MAX 31   /* longest column name */
#define NG_SEG_MAX_COLUMNS 1024
#define NG_SEG_MAX_ROWS (UINT64_C(1) << 28)
#define NG_SEG_BLOCK_ROWS 16384 /* rows per zstd frame of a column */
#define NG_SEG_MAX_DIFF_DEPTH 2 /* DIFF of a DIFF of a non-DIFF column at most */

/* Column encodings (directory entry byte 34). */
enum ng_seg_encoding {
	NG_ENC_CONST = 0, /* every row holds one value, kept in the entry */
	NG_ENC_PLAIN = 1, /* byte-plane shuffled values, zstd */
	NG_ENC_DELTA = 2, /* zigzag deltas from the previous row, shuffled, zstd */
	NG_ENC_V4 = 3,    /* IPv4-mapped addresses as 4 bytes, shuffled, zstd */
	NG_ENC_DIFF = 4,  /* zigzag differences from another column, shuffled, zstd */
	NG_ENC_DICT = 5,  /* strings: a dictionary frame + u32 indexes, shuffled, zstd */
	NG_ENC_RANK = 6,  /* u32s, IPv4: a frame of values by frequency + u32 indexes */
	NG_ENC_MAP = 7,   /* strings decided by a u32 column: a frame of (key, string) */
};

typedef struct ng_seg_column {
	char name[NG_SEG_NAME_MAX + 1];
	uint8_t type;       /* enum ng_field_type when written */
	uint8_t width;      /* bytes per value (1, 2, 4, 8, 6 or 16) */
	uint8_t encoding;   /* enum ng_seg_encoding */
	uint16_t ref;       /* DIFF: directory index of the reference column */
	uint64_t offset;    /* of the stored bytes, from the start of the file */
	uint64_t stored;    /* bytes in the file */
	uint64_t decoded;   /* bytes after zstd decompression */
	uint8_t minmax[16]; /* integers: min (LE u64) then max; CONST addr/mac: the value;
	                     * DICT: entries (u32), dictionary bytes (u32) */
} ng_seg_column;

typedef struct ng_seg_header {
	uint16_t version;
	uint32_t ncols;
	uint32_t header_size; /* fixed part + directory */
	uint64_t rows;
	uint64_t start_min, start_max; /* flow_start of the first and last row */
	uint64_t end_min, end_max;     /* flow_end range */
	ng_seg_column *cols;           /* ncols entries, owned */
} ng_seg_header;

/* Recomputes and stores the header checksum of a segment image whose
 * directory was edited in place (tests).  `img` holds at least the header. */
void ng_seg_reseal(uint8_t *img);

/* ---- encoding --------------------------------------------------------- */

typedef struct ng_seg_encoder ng_seg_encoder;

/* zstd `level` 1..19 (1: fastest). Returns NULL when out of memory. */
ng_seg_encoder *ng_seg_encoder_new(int level);
void ng_seg_encoder_free(ng_seg_encoder *e);

/*
 * Encodes rows[order[0]], …, rows[order[n-1]] (already in flow_start order)
 * as one segment with a column for every field of ng_fields.  On success
 * returns 0 and sets *img and *len to the image, owned by the encoder and valid
 * until its next call.  Returns -1 when out of memory or a zstd error, with
 * a message in err[errlen].  1 ≤ n ≤ NG_SEG_MAX_ROWS.
 */
int ng_seg_encode(ng_seg_encoder *e, const ng_flow *rows, const uint32_t *order, size_t n,
                  const uint8_t **img, size_t *len, char *err, size_t errlen);

/* order[0..n) = the indexes of rows[0..n) in flow_start order (ties in
 * index order): the `order` ng_seg_encode wants for rows not yet sorted. */
void ng_seg_order_by_start(const ng_flow *rows, uint32_t *order, size_t n);

/* As ng_seg_encode with a column for each of fields[0..nfields) instead of
 * the whole table (tests, rollups): each entry names a column and where its
 * value sits in ng_flow (offset, size, type).  The table must hold
 * flow_start; 1 ≤ nfields ≤ NG_SEG_MAX_COLUMNS. */
int ng_seg_encode_fields(ng_seg_encoder *e, const ng_field *fields, size_t nfields,
                         const ng_flow *rows, const uint32_t *order, size_t n, const uint8_t **img,
                         size_t *len, char *err, size_t errlen);

/* As ng_seg_encode_fields with the rows given column by column: cols[f]
 * holds the n values of fields[f] (fields[f].size bytes each, in
 * flow_start order), or is NULL when every value is zero (the column is
 * stored as a constant without being read).  Only read. */
int ng_seg_encode_cols(ng_seg_encoder *e, const ng_field *fields, size_t nfields,
                       const uint8_t *const *cols, size_t n, const uint8_t **img, size_t *len,
                       char *err, size_t errlen);

/* ---- reading ---------------------------------------------------------- */

/* A column's stored bytes, loaded once per segment on first use. */
typedef struct ng_seg_colbuf {
	uint8_t *z;
	size_t zcap;
	uint64_t *frame_off; /* offset of each block's frame in z; one more at the end */
	size_t offcap;
	uint64_t gen;   /* the reader's open count when loaded; 0: never */
	uint32_t *dict; /* DICT: process-wide string ID of each entry; RANK: value */
	size_t dictcap;
	uint32_t entries; /* DICT, RANK: K, the dictionary's entries */
	uint64_t stamp;   /* RANK: differs for every dictionary a process loads */
	uint8_t *dictv;   /* RANK: the entries as values of a field (read_block_codes) */
	size_t dictvcap;
	uint64_t vstamp; /* the dictionary dictv holds (stamp), 0: none */
	unsigned vsize;  /* and the field width it was made for */
	ng_keymap kmap;  /* MAP: each key's entry (dict[entry] = its string ID) */
	bool is_ref;     /* a DIFF or MAP column of the segment refers to this one (set at open) */
} ng_seg_colbuf;

typedef struct ng_seg_reader {
	int fd;
	uint64_t file_size;
	ng_seg_header h;
	int col_of_field[NG_FIELD_COUNT]; /* directory index, -1 when absent */
	uint64_t gen;                     /* bumped by each open */
	ng_seg_colbuf *cb;                /* per directory index */
	size_t cbcap;
	void *zbuf; /* the header */
	size_t zcap;
	void *raw; /* one decompressed block */
	size_t rawcap;
	/* the frame inflate_frame gave last: raw, or the query cache's own
	 * copy, pinned in `pin` until the next frame or ng_seg_close */
	const uint8_t *in;
	ng_frame_pin pin;
	uint32_t *vals; /* RANK: one block's values (NG_SEG_BLOCK_ROWS) */
	/* a block of a DIFF column's reference, per level of the DIFF chain
	 * (time_received → flow_end → flow_start), and what it holds */
	struct ng_seg_refbuf {
		uint64_t *v;
		uint32_t idx;
		size_t block;
		uint64_t gen;
	} ref[NG_SEG_MAX_DIFF_DEPTH];
	void *dctx; /* ZSTD_DCtx */
	/* the open file, for the frame cache's keys (framecache.h) */
	uint64_t dev, ino, mtime_ns, hsum;
	/* set after ng_seg_reader_init: never use the frame cache (the
	 * checks, compaction, rollups: they read the file's own bytes, and
	 * what they read is not what queries read next) */
	bool no_cache;
} ng_seg_reader;

/* Zeroes a reader; call once before the first ng_seg_open. */
void ng_seg_reader_init(ng_seg_reader *r);

/* Opens `path` and validates its header (magic, version, checksum, every
 * column's offset and size against the file size).  Returns 0, or -1 with
 * a message in err[errlen]; the reader is closed again on failure. */
int ng_seg_open(ng_seg_reader *r, const char *path, char *err, size_t errlen);

/* As ng_seg_open on a descriptor opened for reading, which the reader
 * owns from then on (closed by ng_seg_close, also on failure). */
int ng_seg_open_fd(ng_seg_reader *r, int fd, char *err, size_t errlen);

/* Parses and validates a header from memory (the first `len` bytes of a
 * file of `file_size` bytes).  Returns 0 or -1 with a message. */
int ng_seg_parse_header(const uint8_t *p, size_t len, uint64_t file_size, ng_seg_header *h,
                        char *err, size_t errlen);

/* Number of blocks (zstd frames per column) of the open segment, and the
 * rows of block b (NG_SEG_BLOCK_ROWS, the last one fewer). */
size_t ng_seg_blocks(const ng_seg_reader *r);
size_t ng_seg_block_rows(const ng_seg_reader *r, size_t b);

/* Decodes block b of field f's column into out[block_rows × f->size];
 * otherwise as ng_seg_read_column. */
int ng_seg_read_block(ng_seg_reader *r, const ng_field *f, size_t b, void *out, char *err,
                      size_t errlen);

/* Decodes rows lo + sel[m] (m < k; sel ascending, lo + sel[m] < the
 * block's rows) of block b of field f's column into out[k × f->size],
 * as ng_seg_read_block would give them: for the rows a filter kept, whose
 * values are picked from the block's byte planes without turning the
 * whole block into values (a DELTA column is decoded whole).  Returns 0,
 * or -1 with a message as ng_seg_read_block. */
int ng_seg_read_block_rows(ng_seg_reader *r, const ng_field *f, size_t b, size_t lo,
                           const uint32_t *sel, size_t k, void *out, char *err, size_t errlen);

/* Block b of field f's column as dictionary codes, when the segment holds
 * it RANK-encoded (so that a filter tests each distinct value once):
 * codes[i] = the entry of the block's row i (< *k; room for the block's
 * rows), *values = the K entries as values of field f (its type and
 * size, as ng_seg_read_block would give them), owned by the reader and
 * valid until its next open; *stamp differs for every dictionary this
 * process loads.  Returns 1; 0 when the column is absent, of another type
 * or not RANK (nothing written: read its values instead); -1 with a
 * message on corrupt data or when out of memory. */
int ng_seg_read_block_codes(ng_seg_reader *r, const ng_field *f, size_t b, uint32_t *codes,
                            const void **values, uint32_t *k, uint64_t *stamp, char *err,
                            size_t errlen);

/* Directory index of the column named `name`, or -1. */
int ng_seg_find_column(const ng_seg_reader *r, const char *name);

/* Decodes block b of directory entry `idx` as values of f's type and size
 * (f->id is not used): for columns outside the field table (tests). */
int ng_seg_read_entry(ng_seg_reader *r, uint32_t idx, const ng_field *f, size_t b, void *out,
                      char *err, size_t errlen);

/* Decodes field `f`'s column into out[h.rows × f->size].  A column the
 * segment lacks (or holds with an incompatible type) reads as zeros.
 * Returns 0, or -1 with a message on corrupt data or a read error. */
int ng_seg_read_column(ng_seg_reader *r, const ng_field *f, void *out, char *err, size_t errlen);

/* Decodes the fields of `columns` (of the table: ng_colset_all() for
 * every one) of every row of the open segment into out[0..h.rows) as
 * records, the other fields zero, through colbuf (room for h.rows × 16
 * bytes).  Returns 0, or -1 with a message as ng_seg_read_column. */
int ng_seg_read_rows(ng_seg_reader *r, ng_colset columns, ng_flow *out, uint8_t *colbuf, char *err,
                     size_t errlen);

/* ---- checking a segment whole (segment_check.c) ---------------------- */

/* Checks every stored column's frame table of the open segment: its
 * frame sizes add up to the column's stored size.  One small pread per
 * column; no decompression.  Returns 0, or -1 with a message. */
int ng_seg_check_frames(const ng_seg_reader *r, char *err, size_t errlen);

/* Checks block b of directory entry idx (read as field f, out: room for
 * the block's values) for ng_seg_check: what reading it could find wrong,
 * at the least cost.  Returns 0, or -1 with a message. */
int ng_seg_check_block(ng_seg_reader *r, uint32_t idx, const ng_field *f, size_t b, void *out,
                       char *err, size_t errlen);

/* Checks the open segment whole before anything of it is used: the frame
 * tables (ng_seg_check_frames), then every block of every column, or of
 * the columns of fields `only` when not NULL, decoded as a scan would
 * (zstd content size and checksum, dictionary indexes, MAP keys) with
 * flow_start in order and within the header's range.  Returns 0 when the
 * segment is whole, or -1 with a message naming column and block. */
int ng_seg_check(ng_seg_reader *r, const ng_colset *only, char *err, size_t errlen);

/* Closes the file; keeps buffers for the next ng_seg_open. */
void ng_seg_close(ng_seg_reader *r);

/* Frees buffers too. */
void ng_seg_reader_free(ng_seg_reader *r);

#endif
