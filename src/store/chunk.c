/*
 * chunk.c — a column chunk (see chunk.h).
 */
#include "store/chunk.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

_Static_assert(sizeof(ng_flow) % 8 == 0, "ng_flow is read as 8-byte words");

enum { WORDS = sizeof(ng_flow) / 8, BLOCK = 64 };

/* Bytes of one row across all columns. */
static size_t row_width(void)
{
	size_t w = 0;
	for (size_t f = 0; f < NG_FIELD_COUNT; f++)
		w += ng_fields[f].size;
	return w;
}

/* A chunk's storage is mapped, not malloc'ed: ng_chunk_free gives it back
 * to the kernel at once (glibc would keep a freed block of this size in
 * its heap, raising its mmap threshold), so the writer's pool trimming
 * (writer.c) lowers RSS.  Pages are only touched as columns are used;
 * transparent huge pages are asked for, as ng_alloc_big does. */
ng_chunk *ng_chunk_new(void)
{
	ng_chunk *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	const size_t len = row_width() * NG_CHUNK_ROWS;
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		free(c);
		return NULL;
	}
#ifdef MADV_HUGEPAGE
	madvise(p, len, MADV_HUGEPAGE); /* advice only */
#endif
	c->data = p;
	return c;
}

void ng_chunk_free(ng_chunk *c)
{
	if (!c)
		return;
	munmap(c->data, row_width() * NG_CHUNK_ROWS);
	free(c);
}

void ng_chunk_reset(ng_chunk *c)
{
	c->n = 0;
	c->mask = (ng_colset){{0}};
	c->used = 0;
	memset(c->filled, 0, sizeof c->filled);
	memset(c->col, 0, sizeof c->col);
}

/* Column f's storage, placed after the columns already in use: the
 * columns an exporter fills sit together at the start of `data`, and the
 * pages beyond them are never touched. */
static uint8_t *col_of(ng_chunk *c, size_t f)
{
	if (!c->col[f]) {
		c->col[f] = c->data + c->used;
		c->used += ng_fields[f].size * NG_CHUNK_ROWS;
	}
	return c->col[f];
}

/* The fields that are non-zero in some record of records[0..n): the
 * records OR-ed together word by word, then each field's bytes. */
static ng_colset present(const ng_flow *records, size_t n)
{
	/* word by word from the records themselves: a copy of each whole
	 * record first compiled to a `rep movsq`, half of this function */
	uint64_t acc[WORDS] = {0};
	const uint8_t *rec = (const uint8_t *)records;
	for (size_t i = 0; i < n; i++, rec += sizeof(ng_flow))
		for (size_t k = 0; k < WORDS; k++) {
			uint64_t w;
			memcpy(&w, rec + 8 * k, 8);
			acc[k] |= w;
		}
	const uint8_t *b = (const uint8_t *)acc;
	ng_colset mask = {{0}};
	for (size_t f = 0; f < NG_FIELD_COUNT; f++) {
		const uint8_t *p = b + ng_fields[f].offset;
		for (size_t k = 0; k < ng_fields[f].size; k++)
			if (p[k]) {
				ng_colset_add(&mask, f);
				break;
			}
	}
	return mask;
}

/* col[at + i] = field (off, w) of records[i], for i < k. */
static void transpose(uint8_t *col, size_t at, const ng_flow *records, size_t k, size_t off,
                      size_t w)
{
	const uint8_t *src = (const uint8_t *)records + off;
	uint8_t *dst = col + at * w;
	switch (w) {
	case 1:
		for (size_t i = 0; i < k; i++)
			dst[i] = src[i * sizeof(ng_flow)];
		break;
	case 2:
		for (size_t i = 0; i < k; i++)
			memcpy(dst + i * 2, src + i * sizeof(ng_flow), 2);
		break;
	case 4:
		for (size_t i = 0; i < k; i++)
			memcpy(dst + i * 4, src + i * sizeof(ng_flow), 4);
		break;
	case 8:
		for (size_t i = 0; i < k; i++)
			memcpy(dst + i * 8, src + i * sizeof(ng_flow), 8);
		break;
	case 16:
		for (size_t i = 0; i < k; i++)
			memcpy(dst + i * 16, src + i * sizeof(ng_flow), 16);
		break;
	default:
		for (size_t i = 0; i < k; i++)
			memcpy(dst + i * w, src + i * sizeof(ng_flow), w);
		break;
	}
}

/* Writes the implicit zeros of column f up to row `to`. */
static void fill_zeros(ng_chunk *c, size_t f, size_t to)
{
	size_t w = ng_fields[f].size;
	uint8_t *col = col_of(c, f);
	if (c->filled[f] < to)
		memset(col + c->filled[f] * w, 0, (to - c->filled[f]) * w);
	c->filled[f] = (uint32_t)to;
}

size_t ng_chunk_put(ng_chunk *c, const ng_flow *records, size_t n)
{
	size_t room = NG_CHUNK_ROWS - c->n;
	n = n < room ? n : room;
	/* blocks of rows that stay in L1 while every present field is
	 * copied out of them */
	for (size_t lo = 0; lo < n; lo += BLOCK) {
		size_t k = n - lo < BLOCK ? n - lo : BLOCK;
		ng_colset m = present(records + lo, k);
		ng_colset left = m;
		for (int f; (f = ng_colset_pop(&left)) >= 0;) {
			fill_zeros(c, f, c->n);
			transpose(c->col[f], c->n, records + lo, k, ng_fields[f].offset,
			          ng_fields[f].size);
			c->filled[f] = (uint32_t)(c->n + k);
		}
		c->mask = ng_colset_union(c->mask, m);
		c->n += k;
	}
	return n;
}

void ng_chunk_pad(ng_chunk *c, ng_colset mask)
{
	ng_colset left = mask;
	for (int f; (f = ng_colset_pop(&left)) >= 0;)
		fill_zeros(c, f, c->n);
	c->mask = ng_colset_union(c->mask, mask);
}

int ng_chunk_copy_row(ng_chunk *dst, const ng_chunk *src, size_t r, ng_colset mask)
{
	if (dst->n >= NG_CHUNK_ROWS)
		return -1;
	ng_colset left = mask;
	for (int f; (f = ng_colset_pop(&left)) >= 0;) {
		size_t w = ng_fields[f].size;
		fill_zeros(dst, f, dst->n);
		memcpy(dst->col[f] + dst->n * w, src->col[f] + r * w, w);
		dst->filled[f] = (uint32_t)(dst->n + 1);
	}
	dst->mask = ng_colset_union(dst->mask, mask);
	dst->n++;
	return 0;
}
