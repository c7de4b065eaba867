/*
 * shuffle.h — byte planes: the layout a segment stores a block of
 * fixed-width values in before zstd compresses it (internal to src/store;
 * the encoder writes it, the reader undoes it).
 *
 * A block of n values of w bytes becomes w planes of n bytes: byte k of
 * value i is at k × n + i.  The high bytes of small numbers (counters,
 * ports, zigzagged differences, dictionary indexes) are zeros, and the
 * first bytes of addresses of one network are equal, so whole planes are
 * runs that zstd folds to almost nothing, where the values side by side
 * would interleave them with the varying low bytes.  (Blosc and Parquet's
 * BYTE_STREAM_SPLIT do the same for the same reason.)
 *
 * The planes are in memory order of little-endian values: plane 0 is the
 * low byte.  The 8-byte case goes through a transpose of 8 × 8 bytes in
 * registers (ng_transpose8), which the reader also uses to undo DELTA and
 * DIFF in the same pass; 2- and 4-byte values go one value a step, their
 * bytes to the planes; other widths (MACs, addresses) one plane at a time.
 */
#ifndef NG_STORE_SHUFFLE_H
#define NG_STORE_SHUFFLE_H

#include <stddef.h>
#include <stdint.h>

/* Transposes an 8×8 byte matrix held as 8 little-endian words: byte j of
 * word k moves to byte k of word j (three rounds of swapping 1-, 2- and
 * 4-byte blocks between word pairs), all in registers. */
#define NG_SWAP_BLOCKS(x, y, sh, m)                                                                \
	do {                                                                                       \
		uint64_t t_ = (((x) >> (sh)) ^ (y)) & (m);                                         \
		(y) ^= t_;                                                                         \
		(x) ^= t_ << (sh);                                                                 \
	} while (0)

static inline __attribute__((always_inline)) void ng_transpose8(uint64_t a[8])
{
	const uint64_t m1 = UINT64_C(0x00FF00FF00FF00FF), m2 = UINT64_C(0x0000FFFF0000FFFF),
	               m4 = UINT64_C(0x00000000FFFFFFFF);
	uint64_t a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3], a4 = a[4], a5 = a[5], a6 = a[6],
	         a7 = a[7];
	NG_SWAP_BLOCKS(a0, a1, 8, m1);
	NG_SWAP_BLOCKS(a2, a3, 8, m1);
	NG_SWAP_BLOCKS(a4, a5, 8, m1);
	NG_SWAP_BLOCKS(a6, a7, 8, m1);
	NG_SWAP_BLOCKS(a0, a2, 16, m2);
	NG_SWAP_BLOCKS(a1, a3, 16, m2);
	NG_SWAP_BLOCKS(a4, a6, 16, m2);
	NG_SWAP_BLOCKS(a5, a7, 16, m2);
	NG_SWAP_BLOCKS(a0, a4, 32, m4);
	NG_SWAP_BLOCKS(a1, a5, 32, m4);
	NG_SWAP_BLOCKS(a2, a6, 32, m4);
	NG_SWAP_BLOCKS(a3, a7, 32, m4);
	a[0] = a0, a[1] = a1, a[2] = a2, a[3] = a3, a[4] = a4, a[5] = a5, a[6] = a6, a[7] = a7;
}

/* out[k*n + i] = byte k of value i of in[0..n*w): the n values of w bytes
 * (1..16) as w planes of n bytes.  out and in do not overlap. */
void ng_shuffle(uint8_t *out, const uint8_t *in, size_t n, unsigned w);

/* ng_shuffle() of n u32 dictionary indexes (DICT, RANK), all below k: the
 * planes no index reaches are zeroed without reading the indexes for
 * them.  out holds 4 × n bytes. */
void ng_shuffle_index(uint8_t *out, const uint32_t *idx, size_t n, size_t k);

/* The inverse of ng_shuffle(): n values of w bytes from their w planes. */
void ng_unshuffle(uint8_t *out, const uint8_t *in, size_t n, unsigned w);

#endif
