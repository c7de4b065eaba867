/*
 * verdict.h — what is known of a segment file across commands (internal
 * to src/store): the hour directory's `checked` file, which says of a
 * version of a segment (its name, inode, size and mtime) that it was
 * found whole ("ok") or damaged.  The design, the format and why a lost
 * or stale line never changes an answer are above verdict.c's code and
 * in docs/store-format.md.
 */
#ifndef NG_STORE_VERDICT_H
#define NG_STORE_VERDICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* The file's name in an hour directory DIR/flows/YYYY/MM/DD/HH. */
#define NG_VERDICT_FILE "checked"

/* A verdict: none (never checked, or the file changed since), the
 * segment whole, or damaged. */
enum { NG_VERDICT_NONE = 0, NG_VERDICT_OK = 1, NG_VERDICT_DAMAGED = 2 };

/* One version of a segment file and what was found of it. */
typedef struct ng_verdict {
	uint64_t ino, size, mtime_ns; /* st_ino, st_size, st_mtim in ns */
	int state;                    /* NG_VERDICT_* */
} ng_verdict;

/* An hour's verdicts: the last line of each name, sorted by name. */
typedef struct ng_verdict_table {
	struct ng_verdict_entry *v; /* malloc'ed, owned */
	size_t n;
	size_t lines; /* valid lines read (the file's size in verdicts) */
} ng_verdict_table;

/* Reads hour directory `hourdir`'s verdict file into *t (zeroed first).
 * Returns 0; -1 when there is none or it cannot be read (ENOENT,
 * EISDIR, ...) or is out of memory, with *t empty: every segment of the
 * hour is then unknown, which costs a check, never an answer.  Lines
 * that do not parse (a torn append) are skipped.  Free with
 * ng_verdict_table_free. */
int ng_verdict_load(const char *hourdir, ng_verdict_table *t);

/* Frees t's entries; t is empty again. */
void ng_verdict_table_free(ng_verdict_table *t);

/* The verdict recorded last for segment file `name` in t, or one with
 * state NG_VERDICT_NONE. */
ng_verdict ng_verdict_find(const ng_verdict_table *t, const char *name);

/* What v says of the file whose fstat is sb: v->state when v is of this
 * version of it (same inode, size and mtime to the ns), else
 * NG_VERDICT_NONE (rewritten, touched, or another file by the name). */
int ng_verdict_of(const ng_verdict *v, const struct stat *sb);

/* Appends "<name> <ino> <size> <mtime_ns> ok|damaged\n" (state
 * NG_VERDICT_OK or NG_VERDICT_DAMAGED) for segment `seg_path`
 * (HOURDIR/<name>), of the version whose fstat is sb, to HOURDIR's
 * verdict file: created 0644 when missing, O_APPEND, one write().  No
 * fsync: a line lost in a crash costs a check.  A store it cannot write
 * (EACCES, EROFS, ...) is not an error: the verdict is not kept (one
 * warning a process) and the next command checks again. */
void ng_verdict_record(const char *seg_path, const struct stat *sb, int state);

/* As ng_verdict_record for the file open on fd (fstat'ed here); nothing
 * when fstat fails. */
void ng_verdict_record_fd(const char *seg_path, int fd, int state);

/* Bounds hour directory `hourdir`'s verdict file: when it holds more
 * than twice as many lines as the nlive names of `live` (the segments
 * present, in any order: sorted here, in place) plus a slack, it is rewritten (temporary, fsync,
 * rename) with the last line of each live name only.  Returns the
 * lines dropped, 0 when nothing was rewritten or on a failure (left as
 * it was).  A line appended meanwhile may be lost: a re-check. */
size_t ng_verdict_tidy(const char *hourdir, const char **live, size_t nlive);

/* Removes hour directory `hourdir`'s verdict file when it is the only
 * entry left there (the hour's segments are gone: retention, before its
 * rmdir).  Returns true when it removed it. */
bool ng_verdict_drop_if_alone(const char *hourdir);

#endif
