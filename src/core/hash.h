/*
 * hash.h — the hash functions of nagare, one of each kind.
 *
 *   - ng_fnv1a64: 64-bit FNV-1a (Fowler, Noll, Vo; IETF draft
 *     draft-eastlake-fnv, offset basis 0xcbf29ce484222325, prime
 *     0x100000001b3), byte at a time, continuable.  The checksum of nagare's
 *     own files (the segment header, the decoder's template state file): its
 *     value is part of those formats and must never change.
 *   - ng_hash_bytes: FNV-1a then a multiply-xorshift finalizer (half of
 *     murmur3's fmix64), for hash tables keyed by a few bytes (exporter
 *     addresses): the finalizer makes the low bits, which pick the bucket,
 *     depend on every input byte.
 *   - ng_hash_words: one multiply a 64-bit word, then murmur3's finalizer,
 *     for tables keyed by whole words (aggregation keys, rollup groups,
 *     sFlow sequence sources), where FNV's byte loop costs more than the rest
 *     of the work (measured in decode/sflow.c: ~40 % of a sample's decode).
 *
 * None is meant to resist an adversary choosing keys; tables that hold what
 * strangers send bound their size instead (decode/decoder.c).
 */
#ifndef NG_HASH_H
#define NG_HASH_H

#include <stddef.h>
#include <stdint.h>

#define NG_FNV64_INIT UINT64_C(0xcbf29ce484222325)

/* 64-bit FNV-1a over `len` bytes at `p`, continuing from `h` (start with
 * NG_FNV64_INIT).  `p` may be NULL when `len` is 0. */
uint64_t ng_fnv1a64(uint64_t h, const void *p, size_t len);

/* Hash of `n` bytes for a hash table: FNV-1a seeded with `seed` (so two
 * tables over the same keys can use unrelated hashes), then a mix. */
uint64_t ng_hash_bytes(const void *p, size_t n, uint64_t seed);

/* Hash of `words` 64-bit words for a hash table: one multiply a word, then
 * the second half of murmur3's fmix64 so that every key bit reaches the low
 * bits that pick the slot (a multiply alone leaves the low bits blind to an
 * IPv4 address's last bytes, which sit in the high half of their word). */
static inline uint64_t ng_hash_words(const uint64_t *k, size_t words)
{
	uint64_t h = UINT64_C(0x9E3779B97F4A7C15);
	for (size_t i = 0; i < words; i++)
		h = (h ^ k[i]) * UINT64_C(0xff51afd7ed558ccd);
	h ^= h >> 33;
	h *= UINT64_C(0xc4ceb9fe1a85ec53);
	h ^= h >> 33;
	return h;
}

#endif
