/*
 * keymap.h — a map of u32 keys to u32 values (internal to src/store): the
 * MAP encoding of segment.c, where a string column is a function of an
 * integer column (an AS name of its AS number).  The writer puts every
 * row's (key, string ID) and learns whether each key has one string; the
 * reader maps each row's key to its dictionary entry.
 *
 * Open addressing with linear probing, at most half full, doubled as it
 * fills: a segment's few thousand AS numbers stay in the first-level
 * cache.
 */
#ifndef NG_KEYMAP_H
#define NG_KEYMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Zero it before the first use; ng_keymap_free releases it. */
typedef struct ng_keymap {
	uint64_t *slots; /* 0 empty, else (value + 1) << 32 | key */
	size_t cap;      /* slots allocated */
	unsigned bits;   /* 2^bits slots in use */
	size_t k;        /* keys held */
} ng_keymap;

/* Fibonacci hashing: the top `bits` bits of key × 2^32/φ (also the hash
 * of rank.c's table of values). */
static inline size_t ng_keymap_slot(uint32_t key, unsigned bits)
{
	return (size_t)((key * UINT32_C(0x9E3779B1)) >> (32 - bits));
}

/* Empties m, with room for about `hint` keys before it first grows.
 * Returns 0, or -1 when out of memory. */
int ng_keymap_reset(ng_keymap *m, size_t hint);

/* Puts key → value (value < 2^32 - 1).  Returns 1 when the key is new, 0
 * when it is there with this value, -1 when it is there with another
 * (the value is not replaced), -2 when out of memory. */
int ng_keymap_put(ng_keymap *m, uint32_t key, uint32_t value);

/* The value of key into *value; false when the key is absent. */
static inline bool ng_keymap_get(const ng_keymap *m, uint32_t key, uint32_t *value)
{
	const size_t mask = ((size_t)1 << m->bits) - 1;
	for (size_t h = ng_keymap_slot(key, m->bits);; h = (h + 1) & mask) {
		const uint64_t s = m->slots[h];
		if (!s)
			return false;
		if ((uint32_t)s == key) {
			*value = (uint32_t)(s >> 32) - 1;
			return true;
		}
	}
}

/* The m->k entries into keys[] and values[] (room for m->k each), in slot
 * order. */
void ng_keymap_entries(const ng_keymap *m, uint32_t *keys, uint32_t *values);

void ng_keymap_free(ng_keymap *m);

#endif
