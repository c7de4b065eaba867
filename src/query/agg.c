/*
 * agg.c — the specialised aggregation tables (see agg.h).
 *
 * ng_agg32_add works in groups of 16 rows: it hashes the 16 keys and
 * prefetches their slots, then probes and prefetches the 16 value records,
 * then updates them, so the cache misses of a table larger than L1 overlap
 * instead of coming one after another.
 */
#include "query/agg.h"

#include <stdlib.h>
#include <string.h>

enum { GROUP = 16 };

static inline size_t slot_of(const ng_agg32 *t, uint32_t k)
{
	return (size_t)(((uint64_t)k * UINT64_C(0x9E3779B97F4A7C15)) >> t->shift);
}

/* Doubles the slots (or makes the first 4096) and re-inserts every key. */
static int grow_slots(ng_agg32 *t)
{
	size_t cap = t->slots ? (t->mask + 1) * 2 : 4096;
	uint64_t *s = calloc(cap, sizeof *s);
	if (!s)
		return -1;
	free(t->slots);
	t->slots = s;
	t->mask = cap - 1;
	t->shift = 64 - (unsigned)__builtin_ctzll(cap);
	for (size_t i = 0; i < t->n; i++) {
		size_t p = slot_of(t, t->keys[i]);
		while (s[p])
			p = (p + 1) & t->mask;
		s[p] = (uint64_t)t->keys[i] << 32 | (uint64_t)(i + 1);
	}
	return 0;
}

static int grow_dense(ng_agg32 *t)
{
	size_t cap = t->cap ? t->cap * 2 : 1024;
	uint32_t *k = realloc(t->keys, cap * sizeof *k);
	if (k)
		t->keys = k;
	ng_agg_vals *v = realloc(t->v, cap * sizeof *v);
	if (v)
		t->v = v;
	if (!k || !v)
		return -1;
	t->cap = cap;
	return 0;
}

static inline void add_row(ng_agg_vals *v, const ng_agg_in *in, size_t i)
{
	uint64_t s = in->start[i], e = in->end[i];
	v->flows++;
	v->packets += in->packets[i];
	v->bytes += in->bytes[i];
	v->first = s < v->first ? s : v->first;
	v->last = e > v->last ? e : v->last;
}

int ng_agg32_add(ng_agg32 *t, const uint32_t *key, const ng_agg_in *in)
{
	for (size_t m0 = 0; m0 < in->n; m0 += GROUP) {
		size_t g = in->n - m0 < GROUP ? in->n - m0 : GROUP;
		/* room for the whole group: load factor ≤ 1/2 */
		while (!t->slots || (t->n + g) * 2 > t->mask + 1)
			if (grow_slots(t))
				return -1;
		while (t->n + g > t->cap)
			if (grow_dense(t))
				return -1;
		size_t pos[GROUP];
		uint32_t vi[GROUP];
		const uint32_t *k = key + m0;
		for (size_t j = 0; j < g; j++) {
			pos[j] = slot_of(t, k[j]);
			__builtin_prefetch(&t->slots[pos[j]]);
		}
		for (size_t j = 0; j < g; j++) {
			size_t p = pos[j];
			uint64_t s;
			while ((s = t->slots[p]) && (uint32_t)(s >> 32) != k[j])
				p = (p + 1) & t->mask;
			if (!s) {
				t->keys[t->n] = k[j];
				t->v[t->n] = (ng_agg_vals){0, 0, 0, UINT64_MAX, 0};
				s = (uint64_t)k[j] << 32 | (uint64_t)++t->n;
				t->slots[p] = s;
			}
			vi[j] = (uint32_t)s - 1;
			__builtin_prefetch(&t->v[vi[j]], 1);
		}
		for (size_t j = 0; j < g; j++)
			add_row(&t->v[vi[j]], in, in->idx[m0 + j]);
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

int ng_aggdirect_add(ng_aggdirect *d, const uint16_t *key, const ng_agg_in *in)
{
	if (!d->v) {
		if (!(d->v = malloc(65536 * sizeof *d->v)))
			return -1;
		for (size_t i = 0; i < 65536; i++)
			d->v[i] = (ng_agg_vals){0, 0, 0, UINT64_MAX, 0};
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
