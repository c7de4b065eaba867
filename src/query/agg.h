/*
 * agg.h — the hash tables a group-by aggregates into (internal to
 * src/query; agg.c has the design).
 *
 *   ng_agg_table  any composite key (≤ NG_QUERY_KEY_MAX bytes, zero-padded
 *                 to whole words): open addressing with linear probing over
 *                 8-byte slots (row index, a tag from the hash), the rows
 *                 (key and values) dense beside.  Every group ends here.
 *   ng_agg32      one IPv4 address (or any u32) key: open addressing with
 *                 linear probing over 8-byte slots (key, dense index), the
 *                 values dense beside; 2^17 slots fit in 1 MB of cache.
 *   ng_agg64      a key of ≤ 8 bytes (one field or several packed), the
 *                 same scheme over 16-byte slots.
 *   ng_aggdirect  one key of ≤ 16 bits (ports, protocol, ToS, masks): a
 *                 direct array indexed by the key, no hashing at all.
 *
 * The three specialised tables take the matching rows of a batch as an
 * index list and the keys already extracted per listed row, so the inner
 * loops have no branch on the key's type; a worker folds them into its
 * generic table at the end (groupby.c).  None is thread-safe: one set per
 * scan worker.
 */
#ifndef NG_QUERY_AGG_H
#define NG_QUERY_AGG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/bigmem.h"
#include "query/query.h"

/* ---- the generic table ---------------------------------------------------- */

typedef struct ng_agg_slot {
	uint32_t idx; /* row index + 1; 0 empty */
	uint32_t tag; /* high half of the key's hash */
} ng_agg_slot;

typedef struct ng_agg_table {
	ng_agg_row *rows; /* dense, in insertion order */
	size_t n, rows_cap;
	ng_agg_slot *slots; /* 8 bytes a slot: a large table still fits in cache */
	uint64_t *hashes;   /* per row, to rehash without rereading keys */
	size_t mask;        /* slots - 1 (a power of two minus one) */
	size_t kwords;      /* key length in 8-byte words; set before the first get */
} ng_agg_table;

/* Doubles t's slots (or makes the first 1024) and re-inserts every row
 * by its kept hash.  Returns 0, or -1 when out of memory (t unchanged). */
int ng_agg_table_grow(ng_agg_table *t);

/* True when the keys a and b of `words` words are equal. */
static inline bool ng_agg_key_equal(const uint64_t *a, const uint64_t *b, size_t words)
{
	for (size_t i = 0; i < words; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

/* The row for key k (t->kwords words, zero-padded) whose hash is h
 * (ng_hash_words of k), created with zero counts and first at its maximum
 * when new.  NULL when out of memory (t stays valid).  The row belongs to
 * t and moves when t grows: use it before the next get.  Called per row
 * of a batch (groupby.c), hence inline here. */
static inline ng_agg_row *ng_agg_table_get(ng_agg_table *t, const uint64_t *k, uint64_t h)
{
	if ((t->n + 1) * 2 > t->mask + 1 && ng_agg_table_grow(t))
		return NULL;
	size_t i = h & t->mask;
	uint32_t tag = (uint32_t)(h >> 32);
	for (;; i = (i + 1) & t->mask) {
		ng_agg_slot s = t->slots[i];
		if (!s.idx)
			break;
		ng_agg_row *r = &t->rows[s.idx - 1];
		if (s.tag == tag &&
		    ng_agg_key_equal((const uint64_t *)(void *)r->key, k, t->kwords))
			return r;
	}
	if (t->n == t->rows_cap) {
		size_t cap = t->rows_cap ? t->rows_cap * 2 : 1024;
		ng_agg_row *nr =
		    ng_realloc_big(t->rows, t->rows_cap * sizeof *nr, cap * sizeof *nr);
		if (!nr)
			return NULL;
		t->rows = nr;
		uint64_t *nh =
		    ng_realloc_big(t->hashes, t->rows_cap * sizeof *nh, cap * sizeof *nh);
		if (!nh)
			return NULL;
		t->hashes = nh;
		t->rows_cap = cap;
	}
	ng_agg_row *r = &t->rows[t->n];
	memset(r, 0, sizeof *r);
	memcpy(r->key, k, t->kwords * 8);
	r->first = UINT64_MAX;
	t->hashes[t->n] = h;
	t->slots[i] = (ng_agg_slot){(uint32_t)++t->n, tag};
	return r;
}

/* Adds one group's values into row r: counts summed, first/last widened. */
static inline void ng_agg_row_add(ng_agg_row *r, uint64_t flows, uint64_t packets, uint64_t bytes,
                                  uint64_t first, uint64_t last)
{
	r->flows += flows;
	r->packets += packets;
	r->bytes += bytes;
	r->first = first < r->first ? first : r->first;
	r->last = last > r->last ? last : r->last;
}

/* Adds every group of src into dst (same kwords).  Returns 0, or -1 when
 * out of memory (dst stays valid, partly merged). */
int ng_agg_table_merge(ng_agg_table *dst, const ng_agg_table *src);

/* Frees t's arrays and empties it (kwords kept). */
void ng_agg_table_free(ng_agg_table *t);

/* ---- the specialised tables ---------------------------------------------- */

typedef struct ng_agg_vals {
	uint64_t flows, packets, bytes;
	uint64_t first, last; /* min flow_start, max flow_end (ms) */
} ng_agg_vals;

/* The rows to add: row idx[m] of the columns, for m < n. */
typedef struct ng_agg_in {
	const uint64_t *start, *end, *packets, *bytes;
	const uint64_t *flows; /* flows a row sums (a rollup's); NULL: one each */
	const uint32_t *idx;
	size_t n;
} ng_agg_in;

typedef struct ng_agg32 {
	uint64_t *slots; /* (key << 32) | (dense index + 1); 0: empty */
	size_t mask;     /* slot count - 1 */
	unsigned shift;  /* 64 - log2(slot count) */
	uint32_t *keys;  /* dense, in insertion order */
	ng_agg_vals *v;
	size_t n, cap;
} ng_agg32;

/* Adds row idx[m] under key[m] for every m < in->n.  Returns 0, or -1
 * when out of memory (the table stays valid, the batch partly added). */
int ng_agg32_add(ng_agg32 *t, const uint32_t *key, const ng_agg_in *in);
void ng_agg32_free(ng_agg32 *t);

/* Adds every group of src into dst (values summed, first/last widened).
 * Returns 0, or -1 when out of memory (dst stays valid, partly merged). */
int ng_agg32_merge(ng_agg32 *dst, const ng_agg32 *src);

/* One composite key of ≤ 8 bytes (srcas,dstas; proto,dstport; an AS),
 * its bytes as one word: open addressing over 16-byte slots holding the
 * key and its dense index. */
typedef struct ng_agg64_slot {
	uint64_t key;
	uint64_t idx; /* dense index + 1; 0: empty */
} ng_agg64_slot;

typedef struct ng_agg64 {
	ng_agg64_slot *slots;
	size_t mask;
	unsigned shift;
	uint64_t *keys; /* dense, in insertion order */
	ng_agg_vals *v;
	size_t n, cap;
} ng_agg64;

/* As ng_agg32_add with 64-bit keys. */
int ng_agg64_add(ng_agg64 *t, const uint64_t *key, const ng_agg_in *in);
void ng_agg64_free(ng_agg64 *t);

typedef struct ng_aggdirect {
	ng_agg_vals *v; /* 65536 entries once used; flows == 0: unused */
} ng_aggdirect;

/* As ng_agg32_add with keys < 65536.  Returns 0 or -1 (out of memory). */
int ng_aggdirect_add(ng_aggdirect *d, const uint16_t *key, const ng_agg_in *in);
void ng_aggdirect_free(ng_aggdirect *d);

/* Adds src's groups into dst key by key (values summed, first/last
 * widened) and frees src's table; when dst has none it takes src's. */
void ng_aggdirect_merge(ng_aggdirect *dst, ng_aggdirect *src);

#endif
