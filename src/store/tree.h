/*
 * tree.h — the store's directory tree (internal to src/store): listing
 * DIR/flows/YYYY/MM/DD/HH in time order, segment file names, and the
 * compaction markers that say which segments a compacted one replaces.
 */
#ifndef NG_STORE_TREE_H
#define NG_STORE_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ng_dir_entry {
	uint64_t a, b, c; /* numeric parts: unit value, or start/end/seq of a file */
	bool marker;      /* "<segment name>.replaces" (level 4) */
	bool replaced;    /* named by the marker of a present segment */
	char name[256];
} ng_dir_entry;

#define NG_MARKER_SUFFIX ".replaces"

/* Compacted segments are numbered from here (<seq> of their name): a
 * reader looks for the marker of such a segment by its path, not only in
 * the listing (which may miss a file created while it is read). */
#define NG_COMPACT_SEQ UINT64_C(1000000000000)

/* Compaction merges runs of two or more segments of an hour that each
 * hold fewer rows than this.  A writer's full flush (2^18 rows, at high
 * rates) is not small: rewriting every row once more would cost a core
 * at a million flows a second for 4× fewer files. */
#define NG_COMPACT_SMALL_ROWS (1u << 18)

/* What kind of temporary the file `name` (a name in an hour directory, no
 * path) is.  Every file the store writes is written under a name ending
 * in ".tmp", synced, then renamed to its final name, so a name ending in
 * ".tmp" is never whole data: readers, fsck and maintenance skip it, and
 * one left by a crash (kill -9 mid-write) is garbage to remove.  Which
 * process wrote it says when it may be removed:
 *   NG_TMP_NONE   not a temporary (the name does not end in ".tmp");
 *   NG_TMP_ROLLUP a rollup being written, "<segment>.r-<set>-<level>.tmp"
 *                 (rollup.c; any name with ".r-"): removed with its
 *                 segment's orphaned rollups;
 *   NG_TMP_MAINT  compaction's merged segment "<segment>.c.tmp" or its
 *                 marker "<segment>.replaces.tmp" (maint.c): made only
 *                 under the maintenance lock, so stale whenever the lock
 *                 is held;
 *   NG_TMP_WRITER any other, e.g. a writer's flush "<segment>.<pid>.tmp"
 *                 (writer.c): another process may be writing it, so stale
 *                 only once old. */
typedef enum ng_tmp_kind {
	NG_TMP_NONE,
	NG_TMP_ROLLUP,
	NG_TMP_MAINT,
	NG_TMP_WRITER,
} ng_tmp_kind;

ng_tmp_kind ng_tree_temporary(const char *name);

/* Lists a directory's entries that are numbers (level < 4) or segment
 * files and markers (level 4), sorted by (a, b, c, name).  At level 4,
 * sets `replaced` on every segment named in the marker of a listed
 * compacted segment (read before returning: a caller then opens the
 * segments, so one unlinked after the marker was removed is found
 * missing, never read twice).  Returns the count with *out malloc'ed (free it), or -1
 * when the directory cannot be read. */
long ng_tree_list(const char *path, int level, ng_dir_entry **out);

/* The span [*t0, *t1) in ms of the directory year/month/day/hour
 * parts[0..level], or false when the numbers are not a valid date. */
bool ng_tree_dir_span(const unsigned parts[4], int level, uint64_t *t0, uint64_t *t1);

/* Writes STORE/flows (the root of the hour tree of store `dir`) into
 * root[0..len).  Returns 0 when it is a directory, -1 when it is not (no
 * store, nothing flushed yet) or the name does not fit. */
int ng_tree_root(const char *dir, char *root, size_t len);

/* Calls fn(path, t0, t1, arg) for every hour directory below root
 * (DIR/flows) whose span meets [from, to), in time order; stops when fn
 * returns non-zero and returns that value; 0 otherwise. */
int ng_tree_hours(const char *root, uint64_t from, uint64_t to,
                  int (*fn)(const char *path, uint64_t t0, uint64_t t1, void *arg), void *arg);

/* Reads marker `path` (segment names one a line) and calls fn for each
 * name.  Returns 0, or -1 when it cannot be read. */
int ng_tree_read_marker(const char *path, void (*fn)(const char *name, void *arg), void *arg);

#endif
