/*
 * radix.h — LSD radix sorting of 64-bit keys (internal to src/store): the
 * order of a flush's rows (writer.c) and of a RANK dictionary (rank.c).
 */
#ifndef NG_RADIX_H
#define NG_RADIX_H

#include <stddef.h>
#include <stdint.h>

/* Widest digit of a pass, bits: 2048 buckets, which the caches hold. */
#define NG_RADIX_MAX_DIGIT 11

/* count[v] = where the first of the n values in[] whose digit (bits
 * [shift, ...) & mask) is v goes in a stable counting pass.  count has
 * mask + 1 entries. */
void ng_radix_offsets(const uint64_t *in, size_t n, unsigned shift, uint64_t mask, size_t *count);

/*
 * Sorts the n pairs (key[i], id[i]) by key, ascending and stable, in
 * passes of NG_RADIX_MAX_DIGIT bits over the digits that `top` (no key
 * exceeds it) reaches.  *key, *id hold the pairs and *key2, *id2 are
 * scratch arrays of n entries each; the passes swap the two, so on return
 * *key and *id point at the sorted pairs (which may be the scratch
 * arrays) and *key2, *id2 at the others.
 */
void ng_radix_sort_pairs(uint64_t **key, uint32_t **id, uint64_t **key2, uint32_t **id2, size_t n,
                         uint64_t top);

#endif
