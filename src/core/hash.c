/*
 * hash.c — FNV-1a and the byte hash of hash.h.
 */
#include "core/hash.h"

#include <stdint.h>

uint64_t ng_fnv1a64(uint64_t h, const void *p, size_t len)
{
	const uint8_t *s = p;
	for (size_t i = 0; i < len; i++) {
		h ^= s[i];
		h *= UINT64_C(0x100000001b3);
	}
	return h;
}

uint64_t ng_hash_bytes(const void *p, size_t n, uint64_t seed)
{
	uint64_t h = ng_fnv1a64(NG_FNV64_INIT ^ seed, p, n);
	h ^= h >> 33;
	h *= UINT64_C(0xff51afd7ed558ccd);
	h ^= h >> 33;
	return h;
}
