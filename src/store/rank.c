/*
 * rank.c — numbering a column's distinct values by frequency (rank.h).
 *
 * One pass over the rows puts each value in an open-addressing hash table
 * (linear probing, at most half full), which gives it a provisional number
 * in order of first use and counts its rows.  The K distinct values are
 * then sorted by (count descending, value ascending) with an LSD radix
 * sort, and a last pass over the rows replaces each provisional number by
 * the final one.  Ascending values among equal counts (most of the
 * dictionary: the values seen once or twice) make the dictionary's
 * differences from one entry to the next small.
 */
#include "store/rank.h"

#include "store/keymap.h"
#include "store/radix.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static int grow(void **p, size_t size)
{
	void *q = realloc(*p, size);
	if (!q)
		return -1;
	*p = q;
	return 0;
}

static int reserve(ng_rank *w, size_t max_k, size_t nslots)
{
	if (max_k > w->cap) {
		if (grow((void **)&w->count, max_k * 4) || grow((void **)&w->value, max_k * 4) ||
		    grow((void **)&w->key, max_k * 8) || grow((void **)&w->key2, max_k * 8) ||
		    grow((void **)&w->id, max_k * 4) || grow((void **)&w->id2, max_k * 4))
			return -1;
		w->cap = max_k;
	}
	if (nslots > w->nslots) {
		if (grow((void **)&w->slots, nslots * 8))
			return -1;
		w->nslots = nslots;
	}
	return 0;
}

/* Empties the table and sizes it at 2^bits slots, then puts back the
 * first k values (ids 0..k-1). */
static void rehash(ng_rank *w, unsigned bits, size_t k)
{
	const size_t mask = ((size_t)1 << bits) - 1;
	memset(w->slots, 0, (mask + 1) * 8);
	for (size_t j = 0; j < k; j++) {
		size_t h = ng_keymap_slot(w->value[j], bits);
		while (w->slots[h])
			h = (h + 1) & mask;
		w->slots[h] = (uint64_t)(j + 1) << 32 | w->value[j];
	}
}

/* Gives each row its provisional number (idx) and counts the values.
 * The table starts with room for expect_k values (at least 2^11) and
 * doubles at half full: a column of a few thousand AS numbers keeps it in
 * the first-level cache, and clearing it costs what the values need, not
 * what max_k allows.  Returns K, or 0 when more than max_k values are
 * distinct. */
static size_t number_rows(ng_rank *w, const uint32_t *v, size_t n, size_t max_k, unsigned max_bits,
                          size_t expect_k, uint32_t *idx)
{
	unsigned bits = 12;
	while (bits < max_bits && ((size_t)1 << bits) < 2 * expect_k)
		bits++;
	bits = bits < max_bits ? bits : max_bits;
	size_t mask = ((size_t)1 << bits) - 1, k = 0;
	rehash(w, bits, 0);
	for (size_t i = 0; i < n; i++) {
		const uint32_t x = v[i];
		size_t h = ng_keymap_slot(x, bits);
		for (;;) {
			uint64_t s = w->slots[h];
			if ((uint32_t)s == x && s) {
				uint32_t id = (uint32_t)(s >> 32) - 1;
				w->count[id]++;
				idx[i] = id;
				break;
			}
			if (s) {
				h = (h + 1) & mask;
				continue;
			}
			if (k == max_k)
				return 0;
			w->slots[h] = (uint64_t)(k + 1) << 32 | x;
			w->value[k] = x;
			w->count[k] = 1;
			idx[i] = (uint32_t)k++;
			if (2 * k > mask && bits < max_bits) {
				rehash(w, ++bits, k);
				mask = mask * 2 + 1;
			}
			break;
		}
	}
	return k;
}

bool ng_rank_worth(ng_rank *w, const uint32_t *v, size_t n, size_t step, size_t min_k,
                   size_t *sample_k)
{
	const size_t sample = (n + step - 1) / step, max_k = sample / 4 * 3;
	unsigned bits = 1;
	while (((size_t)1 << bits) < 2 * (max_k + 1))
		bits++;
	if (n == 0 || bits > 32 || reserve(w, max_k + 1, (size_t)1 << bits))
		return false;
	const size_t mask = ((size_t)1 << bits) - 1;
	memset(w->slots, 0, (mask + 1) * 8);
	size_t k = 0;
	for (size_t i = 0; i < n; i += step) {
		size_t h = ng_keymap_slot(v[i], bits);
		while (w->slots[h] && (uint32_t)w->slots[h] != v[i])
			h = (h + 1) & mask;
		if (!w->slots[h]) {
			if (++k > max_k)
				return false;
			w->slots[h] = (uint64_t)k << 32 | v[i];
		}
	}
	*sample_k = k;
	return k > min_k;
}

long ng_rank_build(ng_rank *w, const uint32_t *v, size_t n, size_t max_k, size_t expect_k,
                   uint32_t *idx, uint32_t *dict)
{
	if (n == 0 || max_k == 0)
		return 0;
	max_k = max_k < n ? max_k : n;
	unsigned bits = 1;
	while (((size_t)1 << bits) < 2 * max_k)
		bits++;
	if (bits > 32 || reserve(w, max_k, (size_t)1 << bits))
		return -1;
	size_t k = number_rows(w, v, n, max_k, bits, expect_k, idx);
	if (!k)
		return 0;
	uint32_t maxc = 0;
	for (size_t j = 0; j < k; j++)
		maxc = w->count[j] > maxc ? w->count[j] : maxc;
	for (size_t j = 0; j < k; j++) {
		w->key[j] = (uint64_t)(maxc - w->count[j]) << 32 | w->value[j];
		w->id[j] = (uint32_t)j;
	}
	ng_radix_sort_pairs(&w->key, &w->id, &w->key2, &w->id2, k,
	                    (uint64_t)maxc << 32 | UINT32_MAX);
	uint32_t *rank = w->count; /* the counts are in the keys now */
	for (size_t j = 0; j < k; j++) {
		rank[w->id[j]] = (uint32_t)j;
		dict[j] = (uint32_t)w->key[j];
	}
	for (size_t i = 0; i < n; i++)
		idx[i] = rank[idx[i]];
	return (long)k;
}

void ng_rank_free(ng_rank *w)
{
	free(w->slots);
	free(w->count);
	free(w->value);
	free(w->key);
	free(w->key2);
	free(w->id);
	free(w->id2);
	memset(w, 0, sizeof *w);
}
