/*
 * agg.c — the aggregation tables (see agg.h).
 *
 * A group-by adds every matching row to the group of its key: flows +1
 * (or a rollup row's flow count), packets and bytes summed, first = the
 * least flow_start, last = the greatest flow_end.  Each scan worker keeps
 * its own tables, merged after the scan (scan.c), so none takes a lock.
 *
 * The generic table takes any key: the key fields' bytes concatenated and
 * zero-padded to whole 64-bit words (so equality and hashing go a word at
 * a time, ng_hash_words), open addressing with linear probing at a load
 * factor of at most 1/2.  A slot is 8 bytes, the row's index and the high
 * half of its hash: a probe compares the tag and reads the row's key only
 * when it matches, and a table of millions of groups keeps its slots in a
 * few MB.  Rows are dense in insertion order, with each row's hash beside
 * them so that growing re-inserts without hashing a key again.  Rows are
 * ng_agg_row, the result's own type: the top N are copied out as they are.
 *
 * The common keys have tables of their own, because on a 20 M-flow day
 * the generic table's cost is its cache misses and its key building:
 *
 *   ng_agg32      one IPv4 address: the key and the dense index in one
 *                 8-byte slot, no key bytes to compare;
 *   ng_agg64      any key of ≤ 8 bytes, one word: a 16-byte slot;
 *   ng_aggdirect  a key of ≤ 16 bits: an array of 65536 groups, no
 *                 hashing and no probing.
 *
 * ng_agg32_add and ng_agg64_add make room for the whole batch first, then
 * run a software pipeline over it: while row m is probed, the slot of
 * row m + 32 is being fetched and the values of row m - 32 are added, so
 * the cache misses of a table larger than L1 overlap instead of coming
 * one after another.  The two are the same algorithm over two slot
 * layouts (a u32 key packs into its slot, a u64 key does not), written
 * out twice rather than as a macro template.  What a worker has in them
 * is folded into its generic table at the end (groupby.c), in the
 * generic table's key layout, so the answer does not depend on the path.
 */
#include "query/agg.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "core/bigmem.h"

/* ---- the generic table ---------------------------------------------------- */

int ng_agg_table_grow(ng_agg_table *t)
{
	size_t cap = t->mask ? (t->mask + 1) * 2 : 1024;
	ng_agg_slot *s = ng_calloc_big(cap, sizeof *s);
	if (!s)
		return -1;
	for (size_t r = 0; r < t->n; r++) {
		size_t i = t->hashes[r] & (cap - 1);
		while (s[i].idx)
			i = (i + 1) & (cap - 1);
		s[i] = (ng_agg_slot){(uint32_t)(r + 1), (uint32_t)(t->hashes[r] >> 32)};
	}
	free(t->slots);
	t->slots = s;
	t->mask = cap - 1;
	return 0;
}

int ng_agg_table_merge(ng_agg_table *dst, const ng_agg_table *src)
{
	assert(dst->kwords == src->kwords);
	for (size_t i = 0; i < src->n; i++) {
		const ng_agg_row *s = &src->rows[i];
		ng_agg_row *r =
		    ng_agg_table_get(dst, (const uint64_t *)(const void *)s->key, src->hashes[i]);
		if (!r)
			return -1;
		ng_agg_row_add(r, s->flows, s->packets, s->bytes, s->first, s->last);
	}
	return 0;
}

void ng_agg_table_free(ng_agg_table *t)
{
	free(t->rows);
	free(t->slots);
	free(t->hashes);
	*t = (ng_agg_table){.kwords = t->kwords};
}

/* ---- ng_agg32: one IPv4 address ------------------------------------------- */

/* The home slot of u32 key k: Fibonacci hashing (the golden-ratio
 * multiply's high bits), which spreads consecutive addresses. */
static inline size_t slot_of(const ng_agg32 *t, uint32_t k)
{
	return (size_t)(((uint64_t)k * UINT64_C(0x9E3779B97F4A7C15)) >> t->shift);
}

/* Doubles the slots (or makes the first 4096) and re-inserts every key,
 * prefetching slots ahead (each is a cache miss in a large table). */
static int grow_slots(ng_agg32 *t)
{
	size_t cap = t->slots ? (t->mask + 1) * 2 : 4096;
	uint64_t *s = ng_calloc_big(cap, sizeof *s);
	if (!s)
		return -1;
	free(t->slots);
	t->slots = s;
	t->mask = cap - 1;
	t->shift = 64 - (unsigned)__builtin_ctzll(cap);
	enum { AHEAD = 16 };
	for (size_t i = 0; i < t->n; i++) {
		if (i + AHEAD < t->n)
			__builtin_prefetch(&s[slot_of(t, t->keys[i + AHEAD])], 1);
		size_t p = slot_of(t, t->keys[i]);
		while (s[p])
			p = (p + 1) & t->mask;
		s[p] = (uint64_t)t->keys[i] << 32 | (uint64_t)(i + 1);
	}
	return 0;
}

/* A group with no row yet: first at its maximum so any row's start is less. */
static const ng_agg_vals EMPTY = {0, 0, 0, UINT64_MAX, 0};

/* Doubles (or makes the first 1024 of) a table's dense arrays: keys of
 * ksz bytes and their values, *cap entries each.  Returns 0 or -1 (both
 * kept as they were). */
static int grow_dense_arrays(void **keys, size_t ksz, ng_agg_vals **v, size_t *cap)
{
	size_t n = *cap ? *cap * 2 : 1024;
	void *k = ng_realloc_big(*keys, *cap * ksz, n * ksz);
	if (!k)
		return -1;
	*keys = k;
	ng_agg_vals *nv = ng_realloc_big(*v, *cap * sizeof *nv, n * sizeof *nv);
	if (!nv)
		return -1;
	*v = nv;
	*cap = n;
	return 0;
}

/* grow_dense_arrays for t's keys and values.  Returns 0 or -1. */
static int grow_dense(ng_agg32 *t)
{
	void *k = t->keys;
	int rc = grow_dense_arrays(&k, sizeof *t->keys, &t->v, &t->cap);
	t->keys = k;
	return rc;
}

/* Adds row i of the batch `in` into group v. */
static inline void add_row(ng_agg_vals *v, const ng_agg_in *in, size_t i)
{
	uint64_t s = in->start[i], e = in->end[i];
	v->flows += in->flows ? in->flows[i] : 1;
	v->packets += in->packets[i];
	v->bytes += in->bytes[i];
	v->first = s < v->first ? s : v->first;
	v->last = e > v->last ? e : v->last;
}

/* Adds group v into d: counts summed, first/last widened. */
static inline void merge_vals(ng_agg_vals *d, const ng_agg_vals *v)
{
	d->flows += v->flows;
	d->packets += v->packets;
	d->bytes += v->bytes;
	d->first = v->first < d->first ? v->first : d->first;
	d->last = v->last > d->last ? v->last : d->last;
}

int ng_agg32_add(ng_agg32 *t, const uint32_t *key, const ng_agg_in *in)
{
	const size_t n = in->n;
	/* room for the whole batch first (load factor ≤ 1/2), so the loop
	 * below never rehashes */
	while (!t->slots || (t->n + n) * 2 > t->mask + 1)
		if (grow_slots(t))
			return -1;
	while (t->n + n > t->cap)
		if (grow_dense(t))
			return -1;
	/* a software pipeline: the slot of row m + AHEAD is prefetched, row
	 * m is probed and its values prefetched, row m - AHEAD is added */
	enum { AHEAD = 32 };
	uint32_t vi[AHEAD];
	uint64_t *slots = t->slots;
	ng_agg_vals *vals = t->v;
	for (size_t m = 0; m < n + AHEAD; m++) {
		/* first the row whose ring entry the probe below reuses */
		if (m >= AHEAD)
			add_row(&vals[vi[(m - AHEAD) % AHEAD]], in, in->idx[m - AHEAD]);
		if (m + AHEAD < n)
			__builtin_prefetch(&slots[slot_of(t, key[m + AHEAD])]);
		if (m < n) {
			const uint32_t k = key[m];
			size_t p = slot_of(t, k);
			uint64_t s;
			while ((s = slots[p]) && (uint32_t)(s >> 32) != k)
				p = (p + 1) & t->mask;
			if (!s) {
				t->keys[t->n] = k;
				vals[t->n] = EMPTY;
				s = (uint64_t)k << 32 | (uint64_t)++t->n;
				slots[p] = s;
			}
			vi[m % AHEAD] = (uint32_t)s - 1;
			/* a 40-byte record may straddle two cache lines */
			__builtin_prefetch(&vals[(uint32_t)s - 1], 1);
			__builtin_prefetch((const char *)&vals[(uint32_t)s - 1] + 39, 1);
		}
	}
	return 0;
}

int ng_agg32_merge(ng_agg32 *dst, const ng_agg32 *src)
{
	while (!dst->slots || (dst->n + src->n) * 2 > dst->mask + 1)
		if (grow_slots(dst))
			return -1;
	while (dst->n + src->n > dst->cap)
		if (grow_dense(dst))
			return -1;
	enum { AHEAD = 16 };
	for (size_t i = 0; i < src->n; i++) {
		if (i + AHEAD < src->n)
			__builtin_prefetch(&dst->slots[slot_of(dst, src->keys[i + AHEAD])]);
		const uint32_t k = src->keys[i];
		size_t p = slot_of(dst, k);
		uint64_t s;
		while ((s = dst->slots[p]) && (uint32_t)(s >> 32) != k)
			p = (p + 1) & dst->mask;
		if (!s) {
			dst->keys[dst->n] = k;
			dst->v[dst->n] = EMPTY;
			s = (uint64_t)k << 32 | (uint64_t)++dst->n;
			dst->slots[p] = s;
		}
		merge_vals(&dst->v[(uint32_t)s - 1], &src->v[i]);
	}
	return 0;
}

void ng_agg32_free(ng_agg32 *t)
{
	free(t->slots);
	free(t->keys);
	free(t->v);
	memset(t, 0, sizeof *t);
}

/* ---- ng_agg64: a key of ≤ 8 bytes ---------------------------------------- */

/* The home slot of key k (see slot_of). */
static inline size_t slot64_of(const ng_agg64 *t, uint64_t k)
{
	k ^= k >> 29; /* packed fields: mix the high bytes into the kept bits */
	return (size_t)((k * UINT64_C(0x9E3779B97F4A7C15)) >> t->shift);
}

/* As grow_slots for an ng_agg64. */
static int grow_slots64(ng_agg64 *t)
{
	size_t cap = t->slots ? (t->mask + 1) * 2 : 4096;
	ng_agg64_slot *s = ng_calloc_big(cap, sizeof *s);
	if (!s)
		return -1;
	free(t->slots);
	t->slots = s;
	t->mask = cap - 1;
	t->shift = 64 - (unsigned)__builtin_ctzll(cap);
	for (size_t i = 0; i < t->n; i++) {
		size_t p = slot64_of(t, t->keys[i]);
		while (s[p].idx)
			p = (p + 1) & t->mask;
		s[p] = (ng_agg64_slot){t->keys[i], i + 1};
	}
	return 0;
}

/* As grow_dense for an ng_agg64. */
static int grow_dense64(ng_agg64 *t)
{
	void *k = t->keys;
	int rc = grow_dense_arrays(&k, sizeof *t->keys, &t->v, &t->cap);
	t->keys = k;
	return rc;
}

/* The dense index of key k, added when new (room made by the caller). */
static inline size_t find64(ng_agg64 *t, uint64_t k)
{
	size_t p = slot64_of(t, k);
	for (;; p = (p + 1) & t->mask) {
		const ng_agg64_slot *s = &t->slots[p];
		if (s->idx && s->key == k)
			return s->idx - 1;
		if (!s->idx)
			break;
	}
	t->keys[t->n] = k;
	t->v[t->n] = EMPTY;
	t->slots[p] = (ng_agg64_slot){k, ++t->n};
	return t->n - 1;
}

int ng_agg64_add(ng_agg64 *t, const uint64_t *key, const ng_agg_in *in)
{
	const size_t n = in->n;
	while (!t->slots || (t->n + n) * 2 > t->mask + 1)
		if (grow_slots64(t))
			return -1;
	while (t->n + n > t->cap)
		if (grow_dense64(t))
			return -1;
	/* the same pipeline as ng_agg32_add */
	enum { AHEAD = 32 };
	uint32_t vi[AHEAD];
	for (size_t m = 0; m < n + AHEAD; m++) {
		if (m >= AHEAD)
			add_row(&t->v[vi[(m - AHEAD) % AHEAD]], in, in->idx[m - AHEAD]);
		if (m + AHEAD < n)
			__builtin_prefetch(&t->slots[slot64_of(t, key[m + AHEAD])]);
		if (m < n) {
			size_t d = find64(t, key[m]);
			vi[m % AHEAD] = (uint32_t)d;
			__builtin_prefetch(&t->v[d], 1);
			__builtin_prefetch((const char *)&t->v[d] + 39, 1);
		}
	}
	return 0;
}

void ng_agg64_free(ng_agg64 *t)
{
	free(t->slots);
	free(t->keys);
	free(t->v);
	memset(t, 0, sizeof *t);
}

/* ---- ng_aggdirect: a key of ≤ 16 bits ------------------------------------ */

int ng_aggdirect_add(ng_aggdirect *d, const uint16_t *key, const ng_agg_in *in)
{
	if (!d->v) {
		/* 2.5 MiB, every byte written below: on huge pages that is 2
		 * first-touch faults instead of 640 (~20 µs each on a
		 * paravirtualized guest, a tenth of a filtered scan's time) */
		if (!(d->v = ng_alloc_big(65536 * sizeof *d->v)))
			return -1;
		for (size_t i = 0; i < 65536; i++)
			d->v[i] = EMPTY;
	}
	for (size_t m = 0; m < in->n; m++)
		add_row(&d->v[key[m]], in, in->idx[m]);
	return 0;
}

void ng_aggdirect_free(ng_aggdirect *d)
{
	free(d->v);
	d->v = NULL;
}

void ng_aggdirect_merge(ng_aggdirect *dst, ng_aggdirect *src)
{
	if (!src->v)
		return;
	if (!dst->v) {
		dst->v = src->v;
		src->v = NULL;
		return;
	}
	for (size_t k = 0; k < 65536; k++) /* unused entries are EMPTY: no test */
		merge_vals(&dst->v[k], &src->v[k]);
	ng_aggdirect_free(src);
}
