/*
 * bigmem.h — allocations of big buffers backed by transparent huge pages.
 *
 * On a paravirtualized guest the first touch of a 4 KiB page costs about
 * 20 µs; a table of tens of megabytes then spends more time in page
 * faults than in its own work.  One 2 MiB page replaces 512 of them.
 */
#ifndef NG_BIGMEM_H
#define NG_BIGMEM_H

#include <stddef.h>

/* Allocates `bytes`, rounded up to and aligned on 2 MiB and advised for
 * transparent huge pages (MADV_HUGEPAGE); pages are only touched when
 * used.  Returns NULL when out of memory; free with free(). */
void *ng_alloc_big(size_t bytes);

/* calloc(n, size) through ng_alloc_big when the buffer is 2 MiB or more,
 * plain calloc otherwise.  NULL when out of memory or n × size overflows;
 * free with free(). */
void *ng_calloc_big(size_t n, size_t size);

/* Grows p (old_bytes of data, from malloc or these functions) to
 * new_bytes, keeping its contents, through ng_alloc_big when new_bytes is
 * 2 MiB or more.  Returns the new buffer (p is freed), or NULL when out of
 * memory (p untouched). */
void *ng_realloc_big(void *p, size_t old_bytes, size_t new_bytes);

#endif
