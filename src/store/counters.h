/*
 * counters.h — the counter-sample store: sFlow interface and host counters
 * as a time series per agent, sub-agent and data source (docs/sflow.md).
 *
 *   STORE/counters/YYYY/MM/DD/HH/<first_ms>-<last_ms>-<seq>.ctr
 *
 * A file holds the samples of one flush that fall in its UTC hour, in a
 * little-endian, versioned format: a 32-byte header (magic "NGCOUNTS",
 * version 2, record size, count, first and last time_received) then one
 * 312-byte record per sample (byte by byte at the top of counters.c, and
 * in docs/store-format.md).  Files of version 1 (magic "NGCTR001", the
 * structs as they were in memory on x86-64) are still read.  Files are
 * written to a temporary name, fsynced and renamed: whole or absent.  A
 * file this build cannot read is skipped (counted as an error).  Counter
 * samples are few (one per interface every 20-30 s), so records are not
 * compressed.
 */
#ifndef NG_STORE_COUNTERS_H
#define NG_STORE_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

#include "decode/decoder.h"

typedef struct ng_counter_store ng_counter_store;

/* Opens (creating when absent) STORE/counters for appending.  NULL with a
 * message in err[errlen] when the directory cannot be created. */
ng_counter_store *ng_counter_store_open(const char *dir, char *err, size_t errlen);

/* Copies `n` samples into the buffer (no I/O); thread-safe against flush.
 * Returns 0, or -1 when out of memory (the samples are not taken). */
int ng_counter_store_append(ng_counter_store *w, const ng_counter_sample *s, size_t n);

/* Writes the buffered samples (one file per UTC hour).  Returns 0, or -1
 * with the samples kept for a retry. */
int ng_counter_store_flush(ng_counter_store *w);

/* Samples written since open. */
uint64_t ng_counter_store_written(const ng_counter_store *w);

/* Flushes and frees; returns the flush's result.  NULL is a no-op. */
int ng_counter_store_close(ng_counter_store *w);

/*
 * Calls `fn` with the samples of every file under STORE/counters whose
 * time range overlaps [from_ms, to_ms), in file name order (not sorted
 * across files: callers sort).  Samples outside the range are filtered
 * out.  Returns 0, fn's non-zero value, or -1 when STORE/counters is
 * absent.  `*errors` (may be NULL) counts unreadable files.
 */
int ng_counter_scan(const char *dir, uint64_t from_ms, uint64_t to_ms,
                    int (*fn)(const ng_counter_sample *s, size_t n, void *arg), void *arg,
                    uint64_t *errors);

#endif
