/*
 * strtab.c — the process-wide table of interned strings (see strtab.h).
 *
 * Layout: IDs index a two-level array of entry pointers (chunks of 4096
 * entries, allocated as needed and never moved), so readers find a string
 * without a lock.  Each entry is one allocation holding the length and the
 * bytes.  A chained hash on the string maps back to the ID for interning;
 * the hash is only touched under the mutex.  The lengths are also kept
 * in a second two-level array of bytes, dense by ID: a segment's
 * dictionary (store/segment_encode.c) sizes tens of thousands of strings
 * of random IDs, and one byte each from a few cache lines is much cheaper
 * than an entry each.
 */
#include "core/strtab.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_BITS 12
#define CHUNK (1u << CHUNK_BITS)
#define MAX_IDS (1u << 24)
#define NCHUNKS (MAX_IDS / CHUNK)

struct entry {
	struct entry *next; /* hash chain */
	uint32_t hash;
	uint32_t id;
	uint16_t len;
	char s[];
};

static struct entry *_Atomic *chunks[NCHUNKS];
static uint8_t *lens[NCHUNKS]; /* NG_STR_MAX fits a byte */
_Static_assert(NG_STR_MAX <= UINT8_MAX, "lengths are bytes");
static _Atomic uint32_t next_id = 1;
static _Atomic uint64_t overflows;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry **buckets;
static size_t nbuckets;

static uint32_t fnv1a(const char *s, size_t len)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)s[i]) * 16777619u;
	return h;
}

/* Cuts `len` to NG_STR_MAX without splitting a UTF-8 sequence. */
static size_t clamp_len(const char *s, size_t len)
{
	if (len <= NG_STR_MAX)
		return len;
	len = NG_STR_MAX;
	while (len && ((uint8_t)s[len] & 0xc0) == 0x80)
		len--;
	return len;
}

static struct entry *find(const char *s, size_t len, uint32_t h)
{
	if (!buckets)
		return NULL;
	for (struct entry *e = buckets[h & (nbuckets - 1)]; e; e = e->next)
		if (e->hash == h && e->len == len && !memcmp(e->s, s, len))
			return e;
	return NULL;
}

static bool grow(void)
{
	size_t nb = nbuckets ? nbuckets * 2 : 1024;
	struct entry **b = calloc(nb, sizeof *b);
	if (!b)
		return false;
	for (size_t i = 0; i < nbuckets; i++) {
		for (struct entry *e = buckets[i], *next; e; e = next) {
			next = e->next;
			e->next = b[e->hash & (nb - 1)];
			b[e->hash & (nb - 1)] = e;
		}
	}
	free(buckets);
	buckets = b;
	nbuckets = nb;
	return true;
}

static uint32_t add(const char *s, size_t len, uint32_t h)
{
	uint32_t id = atomic_load(&next_id);
	if (id >= MAX_IDS)
		return 0;
	if (atomic_load(&next_id) >= nbuckets && !grow())
		return 0;
	struct entry *_Atomic *chunk = chunks[id >> CHUNK_BITS];
	if (!chunk) {
		uint8_t *l = calloc(CHUNK, 1);
		chunk = calloc(CHUNK, sizeof *chunk);
		if (!chunk || !l) {
			free(l);
			free((void *)chunk);
			return 0;
		}
		/* both published before any ID of the chunk is given out */
		lens[id >> CHUNK_BITS] = l;
		chunks[id >> CHUNK_BITS] = chunk;
	}
	struct entry *e = malloc(sizeof *e + len + 1);
	if (!e)
		return 0;
	e->hash = h;
	e->id = id;
	e->len = (uint16_t)len;
	memcpy(e->s, s, len);
	e->s[len] = 0;
	e->next = buckets[h & (nbuckets - 1)];
	buckets[h & (nbuckets - 1)] = e;
	lens[id >> CHUNK_BITS][id & (CHUNK - 1)] = (uint8_t)len;
	atomic_store_explicit(&chunk[id & (CHUNK - 1)], e, memory_order_release);
	atomic_store(&next_id, id + 1);
	return id;
}

uint32_t ng_intern(const char *s, size_t len)
{
	len = clamp_len(s, len);
	if (!len)
		return 0;
	uint32_t h = fnv1a(s, len);
	pthread_mutex_lock(&lock);
	struct entry *e = find(s, len, h);
	uint32_t id = e ? e->id : add(s, len, h);
	pthread_mutex_unlock(&lock);
	if (!id)
		atomic_fetch_add(&overflows, 1);
	return id;
}

uint32_t ng_intern_cstr(const char *s)
{
	return ng_intern(s, strlen(s));
}

uint32_t ng_str_lookup(const char *s, size_t len)
{
	len = clamp_len(s, len);
	if (!len)
		return 0;
	uint32_t h = fnv1a(s, len);
	pthread_mutex_lock(&lock);
	struct entry *e = find(s, len, h);
	uint32_t id = e ? e->id : UINT32_MAX;
	pthread_mutex_unlock(&lock);
	return id;
}

static const struct entry *entry_of(uint32_t id)
{
	if (!id || id >= MAX_IDS)
		return NULL;
	struct entry *_Atomic *chunk = chunks[id >> CHUNK_BITS];
	if (!chunk)
		return NULL;
	return atomic_load_explicit(&chunk[id & (CHUNK - 1)], memory_order_acquire);
}

const char *ng_str(uint32_t id)
{
	const struct entry *e = entry_of(id);
	return e ? e->s : "";
}

size_t ng_str_len(uint32_t id)
{
	/* an ID reaches a caller only after ng_intern() returned it (through
	 * the interning mutex and the hand-over of the record that holds it),
	 * so its length byte and chunk are visible: no atomic needed */
	if (!id || id >= MAX_IDS)
		return 0;
	const uint8_t *l = lens[id >> CHUNK_BITS];
	return l ? l[id & (CHUNK - 1)] : 0;
}

void ng_str_prefetch(uint32_t id)
{
	const struct entry *e = entry_of(id);
	if (e)
		__builtin_prefetch(e->s);
}

uint32_t ng_strtab_count(void)
{
	return atomic_load(&next_id);
}

uint64_t ng_strtab_overflows(void)
{
	return atomic_load(&overflows);
}
