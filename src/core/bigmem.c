/* bigmem.c — big buffers on transparent huge pages (see bigmem.h). */
#include "core/bigmem.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define HUGE_ALIGN ((size_t)2 << 20)

void *ng_alloc_big(size_t bytes)
{
	size_t len = (bytes + HUGE_ALIGN - 1) / HUGE_ALIGN * HUGE_ALIGN;
	void *p = aligned_alloc(HUGE_ALIGN, len ? len : HUGE_ALIGN);
#ifdef MADV_HUGEPAGE
	if (p)
		madvise(p, len, MADV_HUGEPAGE); /* advice only */
#endif
	return p;
}

void *ng_calloc_big(size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		return NULL;
	if (n * size < HUGE_ALIGN)
		return calloc(n, size);
	void *p = ng_alloc_big(n * size);
	if (p)
		memset(p, 0, n * size);
	return p;
}

void *ng_realloc_big(void *p, size_t old_bytes, size_t new_bytes)
{
	if (new_bytes < HUGE_ALIGN)
		return realloc(p, new_bytes);
	void *q = ng_alloc_big(new_bytes);
	if (!q)
		return NULL;
	if (p)
		memcpy(q, p, old_bytes < new_bytes ? old_bytes : new_bytes);
	free(p);
	return q;
}
