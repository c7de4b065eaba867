/*
 * colset.h — a set of fields (of columns): the columns a scan decodes, a
 * filter reads, a chunk has written, a rollup groups on, an enrichment
 * table set fills.
 *
 * A set holds field ids (enum ng_field_id) below NG_COLSET_BITS: bit f of
 * word f / 64 stands for field f.  It is a struct of NG_COLSET_WORDS
 * 64-bit words, and it is a value, like the uint64_t it replaces: it is
 * assigned, returned (ng_filter_columns), compared and written as a
 * constant in a static table (the rollup sets) with no allocation, no
 * owner and no length beside it.  A pointer to a bitmap sized at run
 * time would need all three, and each caller would have to keep the
 * bitmap alive as long as the set; a fixed size also lets the compiler
 * unroll every operation below into four word operations (two 16-byte
 * vector ones where it can), with no loop left.
 *
 * What it costs: a set is 32 bytes instead of 8.  Functions called once a
 * query, a segment or a flush (ng_store_scan, ng_filter_columns,
 * ng_rollup_pick, ng_enricher_fields) take and return sets by value; the
 * operations are static inline, so within a function a set lives in
 * registers or on the stack, never behind a call.  No per-row work reads
 * a set: the hot paths test or OR them once per block of rows (the
 * writer's chunk once per 64 records, the scan once per block of 16384
 * rows, the query once per scan), and visit a set's members by taking
 * them from a copy (ng_colset_pop): a count-trailing-zeros and a `w &= w
 * - 1` a member, as over a uint64_t, and a test for each empty word
 * before it; no loop runs over all 256 bits.
 *
 * Why 256: the table held 64 fields when sets were 64-bit masks, and the
 * issues ahead add a few dozen (exporter restarts and value flags, the
 * MPLS label stack, application names, interface descriptions and
 * speeds, classification columns).  256 is room for those several times
 * over at four words; a bigger table is a change of NG_COLSET_BITS (and
 * of NG_COLSET, which writes the four words out).  The static assertion
 * below stops a table that outgrows it at compile time.
 *
 * Nothing of a set reaches the disk: segments and rollups name their
 * columns (store/segment.c), so a set's layout can change freely.
 */
#ifndef NG_COLSET_H
#define NG_COLSET_H

#include <stdbool.h>
#include <stdint.h>

#include "core/field.h"

#define NG_COLSET_BITS 256
#define NG_COLSET_WORDS (NG_COLSET_BITS / 64)

_Static_assert(NG_FIELD_COUNT <= NG_COLSET_BITS, "a set of fields (ng_colset) holds them all");

typedef struct ng_colset {
	uint64_t w[NG_COLSET_WORDS]; /* bit f % 64 of w[f / 64]: field f */
} ng_colset;

/*
 * A constant set of up to 32 fields (enum ng_field_id constants), as a
 * braced initializer: for static tables and declarations, or, cast, as
 * a compound literal in an expression:
 *
 *   static const ng_colset measures = NG_COLSET(NG_F_BYTES, NG_F_PACKETS);
 *   ng_scan_opts o = {.columns = NG_COLSET(NG_F_BYTES)};
 *   s = ng_colset_union(s, (ng_colset)NG_COLSET(NG_F_SRC_AS, NG_F_DST_AS));
 *
 * Each word is a constant expression over the arguments, padded to 32
 * with an id no word holds; a 33rd argument does not compile (a negative
 * array size) rather than being dropped.
 */
#define NG_COLSET(...)                                                                             \
	{                                                                                          \
		NG_COLSET_WORDS_(__VA_ARGS__, NG_COLSET_PAD_)                                      \
	}
_Static_assert(NG_COLSET_WORDS == 4, "NG_COLSET writes four words");

/* The macros behind NG_COLSET: NG_COLSET_WORDS_ the four words of the
 * padded arguments, NG_COLSET_W32_ word i of the first 32 (and the 33rd
 * a pad), NG_COLSET_B_ field f's bit in word i (0 when f is in another
 * word), NG_COLSET_NONE_ an id in no word. */
#define NG_COLSET_NONE_ 0xffffffffu
#define NG_COLSET_B_(i, f)                                                                         \
	((unsigned)(f) / 64 == (i) ? UINT64_C(1) << ((unsigned)(f) % 64) : UINT64_C(0))
#define NG_COLSET_PAD8_                                                                            \
	NG_COLSET_NONE_, NG_COLSET_NONE_, NG_COLSET_NONE_, NG_COLSET_NONE_, NG_COLSET_NONE_,       \
	    NG_COLSET_NONE_, NG_COLSET_NONE_, NG_COLSET_NONE_
#define NG_COLSET_PAD_                                                                             \
	NG_COLSET_PAD8_, NG_COLSET_PAD8_, NG_COLSET_PAD8_, NG_COLSET_PAD8_, NG_COLSET_NONE_
#define NG_COLSET_WORDS_(...)                                                                      \
	{                                                                                          \
		NG_COLSET_W32_(0, __VA_ARGS__), NG_COLSET_W32_(1, __VA_ARGS__),                    \
		    NG_COLSET_W32_(2, __VA_ARGS__), NG_COLSET_W32_(3, __VA_ARGS__)                 \
	}
#define NG_COLSET_W32_(i, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15,    \
                       a16, a17, a18, a19, a20, a21, a22, a23, a24, a25, a26, a27, a28, a29, a30,  \
                       a31, over, ...)                                                             \
	(NG_COLSET_B_(i, a0) | NG_COLSET_B_(i, a1) | NG_COLSET_B_(i, a2) | NG_COLSET_B_(i, a3) |   \
	 NG_COLSET_B_(i, a4) | NG_COLSET_B_(i, a5) | NG_COLSET_B_(i, a6) | NG_COLSET_B_(i, a7) |   \
	 NG_COLSET_B_(i, a8) | NG_COLSET_B_(i, a9) | NG_COLSET_B_(i, a10) | NG_COLSET_B_(i, a11) | \
	 NG_COLSET_B_(i, a12) | NG_COLSET_B_(i, a13) | NG_COLSET_B_(i, a14) |                      \
	 NG_COLSET_B_(i, a15) | NG_COLSET_B_(i, a16) | NG_COLSET_B_(i, a17) |                      \
	 NG_COLSET_B_(i, a18) | NG_COLSET_B_(i, a19) | NG_COLSET_B_(i, a20) |                      \
	 NG_COLSET_B_(i, a21) | NG_COLSET_B_(i, a22) | NG_COLSET_B_(i, a23) |                      \
	 NG_COLSET_B_(i, a24) | NG_COLSET_B_(i, a25) | NG_COLSET_B_(i, a26) |                      \
	 NG_COLSET_B_(i, a27) | NG_COLSET_B_(i, a28) | NG_COLSET_B_(i, a29) |                      \
	 NG_COLSET_B_(i, a30) | NG_COLSET_B_(i, a31) |                                             \
	 0 * sizeof(char[(unsigned)(over) == NG_COLSET_NONE_ ? 1 : -1]))

/* The set of field f alone (f < NG_COLSET_BITS). */
static inline ng_colset ng_colset_of(unsigned f)
{
	ng_colset s = {{0}};
	s.w[f / 64] = UINT64_C(1) << (f % 64);
	return s;
}

/* Every field of the table: ids 0 .. NG_FIELD_COUNT - 1. */
static inline ng_colset ng_colset_all(void)
{
	ng_colset s;
	for (unsigned i = 0; i < NG_COLSET_WORDS; i++) {
		unsigned lo = 64 * i;
		s.w[i] = NG_FIELD_COUNT >= lo + 64 ? UINT64_MAX
		         : NG_FIELD_COUNT > lo     ? (UINT64_C(1) << (NG_FIELD_COUNT - lo)) - 1
		                                   : 0;
	}
	return s;
}

/* Adds field f (< NG_COLSET_BITS) to *s. */
static inline void ng_colset_add(ng_colset *s, unsigned f)
{
	s->w[f / 64] |= UINT64_C(1) << (f % 64);
}

/* True when field f (< NG_COLSET_BITS) is in s. */
static inline bool ng_colset_has(ng_colset s, unsigned f)
{
	return s.w[f / 64] >> (f % 64) & 1;
}

/* a ∪ b: the fields in either. */
static inline ng_colset ng_colset_union(ng_colset a, ng_colset b)
{
	for (unsigned i = 0; i < NG_COLSET_WORDS; i++)
		a.w[i] |= b.w[i];
	return a;
}

/* a ∩ b: the fields in both. */
static inline ng_colset ng_colset_intersect(ng_colset a, ng_colset b)
{
	for (unsigned i = 0; i < NG_COLSET_WORDS; i++)
		a.w[i] &= b.w[i];
	return a;
}

/* a − b: the fields of a not in b. */
static inline ng_colset ng_colset_minus(ng_colset a, ng_colset b)
{
	for (unsigned i = 0; i < NG_COLSET_WORDS; i++)
		a.w[i] &= ~b.w[i];
	return a;
}

/* True when s holds no field. */
static inline bool ng_colset_empty(ng_colset s)
{
	uint64_t any = 0;
	for (unsigned i = 0; i < NG_COLSET_WORDS; i++)
		any |= s.w[i];
	return any == 0;
}

/* True when every field of a is in b (a ⊆ b). */
static inline bool ng_colset_subset(ng_colset a, ng_colset b)
{
	return ng_colset_empty(ng_colset_minus(a, b));
}

/* True when a and b hold the same fields. */
static inline bool ng_colset_equal(ng_colset a, ng_colset b)
{
	uint64_t diff = 0;
	for (unsigned i = 0; i < NG_COLSET_WORDS; i++)
		diff |= a.w[i] ^ b.w[i];
	return diff == 0;
}

/*
 * Removes the smallest field from *s and returns it, or -1 when *s is
 * empty.  Visits a set's members in order, on a copy:
 *
 *   ng_colset left = s;
 *   for (int f; (f = ng_colset_pop(&left)) >= 0;)
 *
 * One count-trailing-zeros and one `w &= w - 1` a member, as over a
 * uint64_t, plus a test per empty word before it.
 */
static inline int ng_colset_pop(ng_colset *s)
{
	/* each word is written back whether or not it held the member (an
	 * empty word stays 0), so that every access is at a constant index
	 * once unrolled and a local set stays in registers */
#pragma GCC unroll 4
	for (unsigned i = 0; i < NG_COLSET_WORDS; i++) {
		uint64_t w = s->w[i];
		s->w[i] = w & (w - 1);
		if (w)
			return (int)(64 * i + (unsigned)__builtin_ctzll(w));
	}
	return -1;
}

#endif
