/*
 * framecache.h — decompressed column blocks kept between queries, for the
 * processes that answer many (`nagare serve`, `nagare collect --http`).
 *
 * A query over the last hour reads the same segments as the one before
 * it, and most of its time is zstd inflating their columns' blocks
 * (bench/query: two thirds of a filtered top-N's CPU).  The cache keeps
 * inflated frames, bounded in bytes, least recently used evicted first,
 * so that a dashboard refresh decodes only what is new.
 *
 * A frame is known by the file it came from and its place in it: device,
 * inode, size, modification time (ns) and header checksum of the segment
 * (bytes 56-63 of its header, docs/store-format.md), the column's
 * directory index, the frame's index and its content size.  Segments are
 * never changed once published (a compaction, a retention or a fsck
 * quarantine writes or moves whole files), so a key cannot name other
 * bytes than when it was filled; a new file at the same path or inode
 * differs in checksum, size or time.  Only frames that inflated whole,
 * with their content size and checksum verified by zstd, are kept.
 *
 * A reader takes a held frame by reference (ng_frame_cache_acquire): the
 * entry is pinned, and stays valid, until ng_frame_cache_release, even
 * when it is evicted meanwhile (it then leaves the table at once and is
 * freed by the last release).  Copying each frame out cost a warm
 * dashboard query a sixth of its CPU (memmove in bench/api's profile).
 *
 * Off (0 bytes) unless ng_frame_cache_configure sets a size: the CLI's
 * one-shot queries do not pay for it.  Thread-safe (one mutex).
 */
#ifndef NG_STORE_FRAMECACHE_H
#define NG_STORE_FRAMECACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What names one frame (see above). */
typedef struct ng_frame_key {
	uint64_t dev, ino, size, mtime_ns, hsum; /* the segment file */
	uint32_t column, frame;                  /* directory index, frame index */
	uint64_t len;                            /* inflated bytes */
} ng_frame_key;

typedef struct ng_frame_cache_stats {
	uint64_t hits, misses, inserts, evictions;
	uint64_t bytes, entries; /* held now (frames' bytes, not the table's) */
	uint64_t max_bytes;      /* the bound; 0: off */
} ng_frame_cache_stats;

/* Sets the bound in bytes (0: off, and empties the cache); frames over
 * the new bound are evicted.  Returns 0, or -1 when the table cannot be
 * allocated (the cache stays off). */
int ng_frame_cache_configure(uint64_t max_bytes);

/* True when the cache is on (a quick check before building a key). */
bool ng_frame_cache_on(void);

/* A held frame taken by reference: what ng_frame_cache_release gives
 * back.  Zeroed: holds nothing. */
typedef struct ng_frame_pin {
	void *entry;
} ng_frame_pin;

/* The k->len bytes of the frame named by k, pinned in *pin until
 * ng_frame_cache_release(pin), or NULL (a miss, counted) when it is not
 * held.  The bytes are the cache's: read them only.  *pin must hold
 * nothing (released) on entry. */
const void *ng_frame_cache_acquire(const ng_frame_key *k, ng_frame_pin *pin);

/* Gives back the frame *pin holds (none: no-op) and zeroes *pin; an
 * entry evicted while pinned is freed by its last release. */
void ng_frame_cache_release(ng_frame_pin *pin);

/* Copies the frame named by k (k->len bytes) into out and returns true,
 * or returns false (a miss, counted) when it is not held. */
bool ng_frame_cache_get(const ng_frame_key *k, void *out);

/* Keeps a copy of the k->len bytes at data under k (no-op when off, when
 * the frame is larger than an eighth of the bound, or when out of
 * memory; a key held already is left as it is). */
void ng_frame_cache_put(const ng_frame_key *k, const void *data);

/* The counters (for /metrics and `nagare status`). */
void ng_frame_cache_get_stats(ng_frame_cache_stats *st);

#endif
