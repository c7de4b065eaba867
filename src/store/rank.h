/*
 * rank.h — a column's distinct values numbered by how often they occur
 * (internal to src/store: the RANK encoding of segment.c).
 *
 * Flow data is heavy-tailed: a few addresses and AS numbers carry most
 * rows.  Stored as is, a value's bytes are coded one byte plane at a time
 * and every row pays about the width of the value; numbered most frequent
 * first, the frequent values become small numbers whose high planes are
 * mostly zero, and the column costs close to its entropy plus one copy of
 * each distinct value.
 */
#ifndef NG_RANK_H
#define NG_RANK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Work space of ng_rank_build, reused from one column to the next.
 * Zero it before the first use; ng_rank_free releases it. */
typedef struct ng_rank {
	uint64_t *slots; /* hash table: 0 empty, else (id + 1) << 32 | value */
	size_t nslots;
	uint32_t *count, *value; /* per value in order of first use */
	uint64_t *key, *key2;    /* sort keys: (max count - count) << 32 | value */
	uint32_t *id, *id2;      /* the value each key belongs to */
	size_t cap;              /* entries of the five arrays above */
} ng_rank;

/*
 * Numbers the distinct values of v[0..n) from the most frequent (0) to
 * the least, values of equal count in ascending order: idx[i] = the
 * number of v[i], dict[j] = the value numbered j.  idx has room for n
 * entries, dict for max_k.  Returns K, the number of distinct values
 * (1 ≤ K ≤ max_k); 0 when there are more than max_k, which makes the
 * numbering not worth its dictionary (idx and dict are then undefined);
 * -1 when out of memory.  expect_k is about how many distinct values to
 * expect (0: unknown): the hash table starts with room for them instead
 * of growing to it, doubling from a few thousand slots (an address column
 * of 62 000 values in 139 000 rows: 16 → 14 ns a row).  Cost: one hash
 * probe per row (a table of 2 to 4 slots per value) and a radix sort of
 * the K values.
 */
long ng_rank_build(ng_rank *w, const uint32_t *v, size_t n, size_t max_k, size_t expect_k,
                   uint32_t *idx, uint32_t *dict);

/* True when numbering v[0..n) looks worth it, judged on the sample v[0],
 * v[step], v[2 × step], …: more than min_k distinct values in it, and at
 * most 3/4 of its rows distinct.  A column of a few values (exporters,
 * interfaces) gains little (zstd's Huffman coding of its byte planes is
 * close to its entropy already); one of nearly unique values (addresses
 * with random host parts) would fill ng_rank_build's table only to be
 * refused.  Both cost a pass over the rows; this asks first, at 1/step
 * of the price.  *sample_k = the distinct values of the sample, when
 * true.  False when out of memory. */
bool ng_rank_worth(ng_rank *w, const uint32_t *v, size_t n, size_t step, size_t min_k,
                   size_t *sample_k);

void ng_rank_free(ng_rank *w);

#endif
