/*
 * snapshot.h — the inside of a store snapshot (internal to src/store):
 * what the scan (scan.c) walks instead of the directory tree.  The
 * public half (take, free, the damaged list) is in store.h.
 */
#ifndef NG_STORE_SNAPSHOT_H
#define NG_STORE_SNAPSHOT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/store.h"
#include "store/verdict.h"

/* What is known of a segment of the snapshot: nothing yet, checked whole
 * (every column: ng_seg_check), or damaged (skipped by every scan). */
enum { NG_SNAP_UNKNOWN = 0, NG_SNAP_WHOLE = 1, NG_SNAP_DAMAGED = 2 };

typedef struct ng_snap_seg {
	uint64_t a, b; /* first and last row's flow_start, from the name */
	int fd;        /* held open since the listing, or -1: opened by path */
	_Atomic int state;
	char *path;         /* DIR/flows/YYYY/MM/DD/HH/<name>, owned */
	char *why;          /* damaged: what the check found, owned (set once) */
	ng_verdict verdict; /* the hour's `checked` file said, when listed (verdict.c):
	                     * a scan matches it against an fstat of the file */
} ng_snap_seg;

typedef struct ng_snap_hour {
	uint64_t t0, t1;   /* the hour's span [t0, t1) in ms */
	size_t first, n;   /* its segments: seg[first .. first + n) */
	uint64_t replaced; /* segments a compacted one of the listing replaces */
} ng_snap_hour;

struct ng_store_snapshot {
	uint64_t from, to; /* the range it was taken for */
	ng_snap_seg *seg;  /* in hour order, then name order */
	size_t nseg, segcap;
	ng_snap_hour *hour;
	size_t nhour, hourcap;
	size_t fds; /* descriptors held (against the process's budget) */
	bool oom;
};

/* Marks segment e of a snapshot damaged for `why`.  Returns true when
 * this call marked it (the caller reports it: once per snapshot), false
 * when it was already. */
bool ng_snap_mark_damaged(ng_snap_seg *e, const char *why);

#endif
