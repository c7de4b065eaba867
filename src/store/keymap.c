/*
 * keymap.c — u32 keys to u32 values, open addressing (keymap.h).
 */
#include "store/keymap.h"

#include <stdlib.h>
#include <string.h>

enum { MIN_BITS = 10 };

/* Makes room for 2^bits slots, all empty.  Returns 0 or -1. */
static int clear(ng_keymap *m, unsigned bits)
{
	const size_t n = (size_t)1 << bits;
	if (n > m->cap) {
		uint64_t *s = realloc(m->slots, n * sizeof *s);
		if (!s)
			return -1;
		m->slots = s;
		m->cap = n;
	}
	memset(m->slots, 0, n * sizeof *m->slots);
	m->bits = bits;
	m->k = 0;
	return 0;
}

int ng_keymap_reset(ng_keymap *m, size_t hint)
{
	unsigned bits = MIN_BITS;
	while (((size_t)1 << bits) < 2 * hint && bits < 31)
		bits++;
	return clear(m, bits);
}

/* Puts slot value s (not in m) in its place. */
static void insert(ng_keymap *m, uint64_t s)
{
	const size_t mask = ((size_t)1 << m->bits) - 1;
	size_t h = ng_keymap_slot((uint32_t)s, m->bits);
	while (m->slots[h])
		h = (h + 1) & mask;
	m->slots[h] = s;
	m->k++;
}

/* Doubles the table, putting its entries back.  Returns 0 or -1. */
static int grow(ng_keymap *m)
{
	const size_t old = (size_t)1 << m->bits;
	uint64_t *keep = malloc(old * sizeof *keep);
	if (!keep)
		return -1;
	memcpy(keep, m->slots, old * sizeof *keep);
	if (clear(m, m->bits + 1)) {
		free(keep);
		return -1;
	}
	for (size_t i = 0; i < old; i++)
		if (keep[i])
			insert(m, keep[i]);
	free(keep);
	return 0;
}

int ng_keymap_put(ng_keymap *m, uint32_t key, uint32_t value)
{
	const size_t mask = ((size_t)1 << m->bits) - 1;
	const uint64_t want = (uint64_t)(value + 1) << 32 | key;
	for (size_t h = ng_keymap_slot(key, m->bits);; h = (h + 1) & mask) {
		const uint64_t s = m->slots[h];
		if (s == want)
			return 0;
		if (s && (uint32_t)s == key)
			return -1;
		if (!s)
			break;
	}
	if (2 * (m->k + 1) > ((size_t)1 << m->bits) && grow(m))
		return -2;
	insert(m, want);
	return 1;
}

void ng_keymap_entries(const ng_keymap *m, uint32_t *keys, uint32_t *values)
{
	size_t j = 0;
	for (size_t i = 0; i < ((size_t)1 << m->bits); i++)
		if (m->slots[i]) {
			keys[j] = (uint32_t)m->slots[i];
			values[j++] = (uint32_t)(m->slots[i] >> 32) - 1;
		}
}

void ng_keymap_free(ng_keymap *m)
{
	free(m->slots);
	memset(m, 0, sizeof *m);
}
