/*
 * segment_int.h — what the files of the segment code share, and nothing
 * outside them may use (the rest of src/store goes through segment.h).
 *
 *   segment.c         the format: header, directory, checksum, parsing
 *   segment_encode.c  the encoder: rows → columns → frames → an image
 *   segment_choose.c  which encoding each column gets (and the trial
 *                     builds of RANK and MAP that decide it)
 *   segment_read.c    the reader: open, load columns, decode blocks
 *   shuffle.c         the byte planes both sides use (shuffle.h)
 *
 * The helpers below are called per row (load_uint, the zigzag pair) or
 * per block (reserve, stored_width) from more than one of these files, so
 * they are static inline here rather than functions of one file: a call
 * per row across translation units would cost the encoder and the reader
 * their inner loops.  The encoder's state is here too because the encode
 * and the choose files both work on it.
 */
#ifndef NG_SEGMENT_INT_H
#define NG_SEGMENT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "core/bytes.h"
#include "core/field.h"
#include "store/keymap.h"
#include "store/rank.h"
#include "store/segment.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the segment code assumes a little-endian host (values are copied as they are)"
#endif

/* Bytes 0..11 of an IPv4-mapped address (::ffff:a.b.c.d), which the V4
 * and RANK encodings leave out.  Here, not extern: copies of it per row
 * compile to immediate stores. */
static const uint8_t ng_seg_v4_prefix[12]
    __attribute__((unused)) = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

/* Formats a message into err[errlen] (nothing when err is NULL or errlen
 * 0): the one way the segment code reports a fault to its caller. */
void ng_seg_errf(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* True for the integer field types (u8..u64 and time), the ones with a
 * zone map and the ones DIFF and MAP may refer to. */
static inline bool ng_seg_is_int(unsigned type)
{
	return type <= NG_FT_TIME;
}

/* The unsigned integer of w bytes (1, 2, 4 or 8) at p, little-endian. */
static inline uint64_t ng_seg_load_uint(const uint8_t *p, unsigned w)
{
	switch (w) {
	case 1: return *p;
	case 2: return ng_get_le16(p);
	case 4: return ng_get_le32(p);
	default: return ng_get_le64(p);
	}
}

/* A signed difference (mod 2^64) as an unsigned number whose size follows
 * its magnitude: 0, -1, 1, -2 … → 0, 1, 2, 3 … (DELTA and DIFF store
 * differences so, then byte planes make the zero high bytes runs). */
static inline uint64_t ng_seg_zigzag(uint64_t d)
{
	return (d << 1) ^ (uint64_t)((int64_t)d >> 63);
}

/* The inverse of ng_seg_zigzag(). */
static inline uint64_t ng_seg_unzigzag(uint64_t z)
{
	return (z >> 1) ^ (0 - (z & 1));
}

/* Bytes a value of column c takes before zstd: 4 for V4 and the index
 * frames of DICT and RANK, 8 for DIFF, else the column's width.  D, the
 * entry's decoded size, is N times this (parse_entry checks it). */
static inline unsigned ng_seg_stored_width(const ng_seg_column *c)
{
	if (c->encoding == NG_ENC_V4 || c->encoding == NG_ENC_DICT || c->encoding == NG_ENC_RANK)
		return 4;
	return c->encoding == NG_ENC_DIFF ? 8 : c->width;
}

/* Asks for transparent huge pages on the 2 MiB-aligned part of a big
 * buffer (the gathered columns: hundreds of MB): a first touch of a page
 * costs ~20 µs on a paravirtualized guest; one huge page replaces 512. */
static inline void ng_seg_advise_huge(void *p, size_t len)
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

/* Makes *buf (of *cap bytes, owned by the caller; NULL and 0 at first)
 * hold at least `need` bytes, doubling from 4 KiB: encoder and reader keep
 * their buffers from one segment to the next, so after the first few
 * this is one comparison.  Contents are kept.  Returns 0, or -1 when out
 * of memory (*buf and *cap unchanged). */
static inline int ng_seg_reserve(uint8_t **buf, size_t *cap, size_t need)
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
	ng_seg_advise_huge(p, c);
	return 0;
}

/* ---- the encoder's state (segment_encode.c, segment_choose.c) ----------- */

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

enum { NKEYS = 12 }; /* MAP (key, string) column pairs (segment_choose.c: map_cols[]) */

struct ng_seg_encoder {
	struct ZSTD_CCtx_s *cctx;
	/* DICT index frames: fewer match searches, literals still Huffman
	 * coded (or NULL: cctx).  The rows' entry indexes are close to
	 * independent draws, which only entropy coding shrinks: on bench data
	 * this is ~1.5x faster than level 1 at about the same size */
	struct ZSTD_CCtx_s *icctx;
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

/* The position in e->fields of field `id` when it is an integer field
 * (the only kind DIFF and MAP refer to, and flow_start's), or -1. */
static inline int ng_seg_int_column(const ng_seg_encoder *e, int id)
{
	for (size_t i = 0; id >= 0 && i < e->nfields; i++)
		if ((int)e->fields[i].id == id && ng_seg_is_int(e->fields[i].type))
			return (int)i;
	return -1;
}

/*
 * Chooses the encoding of column ci (e->fields[ci], its n values at
 * e->colv[ci]) from all its rows (segment_choose.c), and fills bytes
 * 64..79 of its directory entry `ent` (zone map, constant or IPv4 range).
 * Returns an enum ng_seg_encoding; *ref = the reference column of DIFF or
 * the key column of MAP (positions in e->fields).  RANK leaves its
 * numbering in e->didx and dictionary in e->dict (e->rank_k entries), MAP
 * its dictionary in e->dict (e->map_k entries, e->map_len bytes); DICT's
 * is built by the encoder.  Never fails: out of memory keeps a plainer
 * encoding.
 */
unsigned ng_seg_choose_encoding(ng_seg_encoder *e, size_t ci, size_t n, uint8_t *ent, int *ref);

#endif
