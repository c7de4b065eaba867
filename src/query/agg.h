/*
 * agg.h — specialised aggregation tables for the executor's common keys
 * (internal to src/query; query.c folds them into its generic table at
 * the end).
 *
 *   ng_agg32      one IPv4 address (or any u32) key: open addressing with
 *                 linear probing over 8-byte slots (key, dense index), the
 *                 values dense beside; 2^17 slots fit in 1 MB of cache.
 *   ng_agg64      a key of ≤ 8 bytes (one field or several packed), the
 *                 same scheme over 16-byte slots.
 *   ng_aggdirect  one key of ≤ 16 bits (ports, protocol, ToS, masks): a
 *                 direct array indexed by the key, no hashing at all.
 *
 * Both take the matching rows of a batch as an index list and the keys
 * already extracted per listed row, so the inner loops have no branch on
 * the key's type.  Neither is thread-safe: one per scan worker.
 */
#ifndef NG_QUERY_AGG_H
#define NG_QUERY_AGG_H

#include <stddef.h>
#include <stdint.h>

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
