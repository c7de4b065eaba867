/*
 * radix.c — LSD radix sorting of 64-bit keys (radix.h).
 */
#include "store/radix.h"

#include <string.h>

void ng_radix_offsets(const uint64_t *in, size_t n, unsigned shift, uint64_t mask, size_t *count)
{
	memset(count, 0, (mask + 1) * sizeof *count);
	for (size_t i = 0; i < n; i++)
		count[(in[i] >> shift) & mask]++;
	size_t sum = 0;
	for (size_t v = 0; v <= mask; v++) {
		size_t c = count[v];
		count[v] = sum;
		sum += c;
	}
}

void ng_radix_sort_pairs(uint64_t **key, uint32_t **id, uint64_t **key2, uint32_t **id2, size_t n,
                         uint64_t top)
{
	const uint64_t mask = (UINT64_C(1) << NG_RADIX_MAX_DIGIT) - 1;
	for (unsigned shift = 0; shift < 64 && (top >> shift); shift += NG_RADIX_MAX_DIGIT) {
		size_t count[1u << NG_RADIX_MAX_DIGIT];
		const uint64_t *k = *key;
		const uint32_t *d = *id;
		uint64_t *k2 = *key2;
		uint32_t *d2 = *id2;
		ng_radix_offsets(k, n, shift, mask, count);
		for (size_t i = 0; i < n; i++) {
			size_t at = count[(k[i] >> shift) & mask]++;
			k2[at] = k[i];
			d2[at] = d[i];
		}
		uint64_t *tk = *key;
		*key = *key2, *key2 = tk;
		uint32_t *td = *id;
		*id = *id2, *id2 = td;
	}
}
