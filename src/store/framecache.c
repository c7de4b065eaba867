/*
 * framecache.c — see framecache.h.
 *
 * A chained hash table of NBUCKETS heads over entries that also sit on
 * one LRU list (most recent at the head).  Each entry is one allocation:
 * the node and the frame's bytes after it.  Everything is under one
 * mutex; allocation and freeing are done outside it.
 *
 * An entry counts its pins (readers holding its bytes, acquire).  Evicting
 * a pinned entry takes it out of the table and the LRU list (and out of
 * `bytes`) at once, but marks it `gone` instead of freeing it: the last
 * release frees it.  So the bound holds for the table, and what pinned
 * evicted entries add is at most one frame per reader.
 */
#include "store/framecache.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"

#define NBUCKETS (1u << 16)

struct entry {
	struct entry *chain;       /* next in the bucket */
	struct entry *prev, *next; /* LRU list */
	unsigned pins;             /* readers holding data (acquire) */
	bool gone;                 /* evicted while pinned: the last release frees */
	ng_frame_key key;
	unsigned char data[];
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct entry **buckets; /* NBUCKETS, allocated at the first configure */
static struct entry *lru_head, *lru_tail;
static ng_frame_cache_stats st;

static uint32_t bucket_of(const ng_frame_key *k)
{
	uint64_t h = ng_fnv1a64(NG_FNV64_INIT, k, sizeof *k);
	return (uint32_t)(h ^ h >> 32) & (NBUCKETS - 1);
}

static bool same(const ng_frame_key *a, const ng_frame_key *b)
{
	return a->ino == b->ino && a->frame == b->frame && a->column == b->column &&
	       a->hsum == b->hsum && a->dev == b->dev && a->size == b->size &&
	       a->mtime_ns == b->mtime_ns && a->len == b->len;
}

/* Under mu: the entry of k and where its bucket's link to it is, or NULL. */
static struct entry *find(const ng_frame_key *k, struct entry ***link)
{
	struct entry **l = &buckets[bucket_of(k)];
	for (struct entry *e = *l; e; l = &e->chain, e = e->chain)
		if (same(&e->key, k)) {
			if (link)
				*link = l;
			return e;
		}
	return NULL;
}

static void lru_unlink(struct entry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		lru_head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		lru_tail = e->prev;
	e->prev = e->next = NULL;
}

static void lru_push(struct entry *e)
{
	e->prev = NULL;
	e->next = lru_head;
	if (lru_head)
		lru_head->prev = e;
	lru_head = e;
	if (!lru_tail)
		lru_tail = e;
}

/* Under mu: takes the least recently used entries out until `bytes` is
 * at most `bound`; returns them as a list (through ->chain) to free. */
static struct entry *evict_to(uint64_t bound)
{
	struct entry *out = NULL;
	while (lru_tail && st.bytes > bound) {
		struct entry *e = lru_tail, **link = NULL;
		find(&e->key, &link);
		*link = e->chain;
		lru_unlink(e);
		st.bytes -= e->key.len;
		st.entries--;
		st.evictions++;
		if (e->pins) { /* its readers still hold it */
			e->gone = true;
			e->chain = NULL;
			continue;
		}
		e->chain = out;
		out = e;
	}
	return out;
}

static void free_list(struct entry *e)
{
	while (e) {
		struct entry *n = e->chain;
		free(e);
		e = n;
	}
}

int ng_frame_cache_configure(uint64_t max_bytes)
{
	struct entry **fresh = NULL;
	if (max_bytes) {
		pthread_mutex_lock(&mu);
		bool have = buckets != NULL;
		pthread_mutex_unlock(&mu);
		if (!have && !(fresh = calloc(NBUCKETS, sizeof *fresh)))
			return -1;
	}
	pthread_mutex_lock(&mu);
	if (fresh && !buckets)
		buckets = fresh, fresh = NULL;
	st.max_bytes = buckets ? max_bytes : 0;
	struct entry *gone = buckets ? evict_to(max_bytes) : NULL;
	pthread_mutex_unlock(&mu);
	free(fresh);
	free_list(gone);
	return 0;
}

bool ng_frame_cache_on(void)
{
	pthread_mutex_lock(&mu);
	bool on = st.max_bytes > 0;
	pthread_mutex_unlock(&mu);
	return on;
}

const void *ng_frame_cache_acquire(const ng_frame_key *k, ng_frame_pin *pin)
{
	pthread_mutex_lock(&mu);
	struct entry *e = st.max_bytes ? find(k, NULL) : NULL;
	if (e) {
		lru_unlink(e);
		lru_push(e);
		e->pins++;
		st.hits++;
	} else {
		st.misses++;
	}
	pthread_mutex_unlock(&mu);
	pin->entry = e;
	return e ? e->data : NULL;
}

void ng_frame_cache_release(ng_frame_pin *pin)
{
	struct entry *e = pin->entry;
	if (!e)
		return;
	pin->entry = NULL;
	pthread_mutex_lock(&mu);
	bool last = --e->pins == 0 && e->gone;
	pthread_mutex_unlock(&mu);
	if (last)
		free(e);
}

bool ng_frame_cache_get(const ng_frame_key *k, void *out)
{
	pthread_mutex_lock(&mu);
	struct entry *e = st.max_bytes ? find(k, NULL) : NULL;
	if (e) {
		lru_unlink(e);
		lru_push(e);
		memcpy(out, e->data, k->len);
		st.hits++;
	} else {
		st.misses++;
	}
	pthread_mutex_unlock(&mu);
	return e != NULL;
}

void ng_frame_cache_put(const ng_frame_key *k, const void *data)
{
	pthread_mutex_lock(&mu);
	uint64_t bound = st.max_bytes;
	pthread_mutex_unlock(&mu);
	if (!bound || k->len > bound / 8)
		return;
	struct entry *e = malloc(sizeof *e + k->len);
	if (!e)
		return;
	e->key = *k;
	e->pins = 0;
	e->gone = false;
	memcpy(e->data, data, k->len);
	pthread_mutex_lock(&mu);
	struct entry *gone = NULL;
	if (!st.max_bytes || find(k, NULL)) {
		gone = e; /* turned off meanwhile, or another thread put it */
		e->chain = NULL;
	} else {
		struct entry **b = &buckets[bucket_of(k)];
		e->chain = *b;
		*b = e;
		lru_push(e);
		st.bytes += k->len;
		st.entries++;
		st.inserts++;
		gone = evict_to(st.max_bytes);
	}
	pthread_mutex_unlock(&mu);
	free_list(gone);
}

void ng_frame_cache_get_stats(ng_frame_cache_stats *out)
{
	pthread_mutex_lock(&mu);
	*out = st;
	pthread_mutex_unlock(&mu);
}
