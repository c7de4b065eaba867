/*
 * chunk.h — a column chunk: up to NG_CHUNK_ROWS flow records held column by
 * column, the store writer's buffer.
 *
 * Appending transposes records into columns while they are still in the
 * caches, and only for the fields that hold a value: an exporter fills a
 * score of ng_flow's fields, and a column no record of the chunk set
 * is never written, read or sorted (the segment stores it as a constant).
 * A flush then sorts and encodes columns, never 328-byte rows.
 *
 * Column f of a chunk holds valid values for rows [0, filled[f]); rows
 * beyond that are zero by definition (written lazily by ng_chunk_pad or the
 * next append that carries a value for f).  `mask` holds field f when
 * column f has been written at all.
 *
 * Not thread-safe: the writer serializes access.
 */
#ifndef NG_CHUNK_H
#define NG_CHUNK_H

#include <stddef.h>
#include <stdint.h>

#include "core/colset.h"
#include "core/field.h"
#include "core/flow.h"

#define NG_CHUNK_SHIFT 14
#define NG_CHUNK_ROWS ((size_t)1 << NG_CHUNK_SHIFT) /* = NG_SEG_BLOCK_ROWS */

typedef struct ng_chunk {
	size_t n;                        /* rows held */
	ng_colset mask;                  /* the columns written */
	uint32_t filled[NG_FIELD_COUNT]; /* rows of column f with their values */
	uint8_t *col[NG_FIELD_COUNT];    /* NG_CHUNK_ROWS × ng_fields[f].size bytes,
	                                  * NULL until the column is first written */
	uint8_t *data;                   /* one allocation for every column ... */
	size_t used;                     /* ... of which the first `used` bytes hold them */
} ng_chunk;

/* A new, empty chunk (about 5.4 MB reserved, 2 MiB aligned and advised
 * for transparent huge pages; pages are touched only when written), or
 * NULL when out of memory.  Free with ng_chunk_free. */
ng_chunk *ng_chunk_new(void);
void ng_chunk_free(ng_chunk *c);

/* Empties the chunk for reuse (its memory stays: no page is touched for
 * the first time again). */
void ng_chunk_reset(ng_chunk *c);

/* Appends records[0..n) up to the chunk's room; returns how many it took
 * (0 when full).  The records are only read. */
size_t ng_chunk_put(ng_chunk *c, const ng_flow *records, size_t n);

/* Makes every column of `mask` hold its values for all n rows (writing the
 * zeros that were implicit), so a flush can read them directly. */
void ng_chunk_pad(ng_chunk *c, ng_colset mask);

/* Copies row `r` of `src` (padded for `mask`) to the end of `dst`, for the
 * columns of `mask`.  Returns 0, or -1 when dst is full. */
int ng_chunk_copy_row(ng_chunk *dst, const ng_chunk *src, size_t r, ng_colset mask);

#endif
