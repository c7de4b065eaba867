/*
 * verdict.c — a segment's verdict, kept across commands.
 *
 * A query decodes only the columns it reads, so a byte flipped in a
 * column it does not read (tcp_flags, say) went unseen: a listing
 * skipped the segment as damaged while `-s srcip` counted it.  Checking
 * every column of every segment on every query (NG_SEGMENT_CHECK=all)
 * made the shapes agree at 3.7x the query's cost.  Segments are
 * immutable once published (files.c), so a segment need be checked whole
 * only once per version of its file; what was found is kept here:
 *
 *   DIR/flows/YYYY/MM/DD/HH/checked, one line a verdict:
 *       <name> <st_ino> <st_size> <st_mtim in ns> ok|damaged
 *
 * appended (O_APPEND, one write() of < 100 bytes a line) by whoever
 * learned it: ng_seg_publish (the writer and compaction encoded the bytes
 * they published: "ok"), `nagare fsck` and any scan that checked a
 * segment whole ("ok" or "damaged"), any scan that found damage while
 * reading ("damaged").  The last line of a name wins.
 *
 * Why a verdict never changes an answer, only what it costs:
 *   - A line counts only for the version of the file it names: inode,
 *     size and mtime (ns) must match an fstat of the descriptor being
 *     read.  A file rewritten, truncated, or written in place (which sets
 *     its mtime) is unknown again and checked whole.
 *   - A lost line (a crash before the page cache reached the disk, a
 *     store the process cannot write, a line compaction's rewrite raced
 *     with) makes the segment unknown: checked whole again.
 *   - A torn line does not parse (exactly five fields, digits, "ok" or
 *     "damaged"), nor does the line appended after it, which it runs
 *     into: both are skipped, costing a check.
 *   - An "ok" only lets a scan skip checking the columns it does not
 *     read: the frame tables of every column, and every block it decodes,
 *     are still checked, and damage found there is recorded "damaged".
 *     Bit rot under an "ok" (mtime unchanged) is thus found by the next
 *     scan that decodes the damaged column, or by `nagare fsck`, which
 *     always checks whole.
 *
 * Its size is bounded by compaction, which rewrites it with the live
 * segments' lines when it holds more than twice as many (ng_verdict_tidy),
 * and retention removes it with the hour's last segment.  No listing,
 * sweep or fsck takes it for a segment, a rollup or a temporary (its name
 * is none of theirs: tree.c, maint.c, rollup.c, fsck.c).
 */
#include "store/verdict.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"
#include "store/files.h"

#define MAX_FILE (64u << 20) /* a verdict file past this is not read */
#define TIDY_SLACK 64        /* lines past 2 × live before a rewrite */

struct ng_verdict_entry {
	char *name; /* owned (strdup) */
	size_t line;
	ng_verdict v;
};

static atomic_flag warned = ATOMIC_FLAG_INIT;

/* Parses a decimal uint64 of exactly s[0..len), or false. */
static bool parse_u64(const char *s, size_t len, uint64_t *out)
{
	if (len == 0 || len > 20)
		return false;
	uint64_t v = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		uint64_t d = (uint64_t)(s[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

/* Parses one line (without its newline) into e->v with e->name pointing
 * into the line (NUL-terminated there); false when it is not exactly
 * "<name> <ino> <size> <mtime_ns> ok|damaged". */
static bool parse_line(char *l, struct ng_verdict_entry *e)
{
	char *f[6];
	size_t len[6], n = 0;
	for (char *p = l; *p && n < 6;) {
		char *sp = strchr(p, ' ');
		f[n] = p;
		len[n++] = sp ? (size_t)(sp - p) : strlen(p);
		if (!sp)
			break;
		p = sp + 1;
	}
	if (n != 5 || len[0] == 0)
		return false;
	if (!parse_u64(f[1], len[1], &e->v.ino) || !parse_u64(f[2], len[2], &e->v.size) ||
	    !parse_u64(f[3], len[3], &e->v.mtime_ns))
		return false;
	if (len[4] == 2 && !strncmp(f[4], "ok", 2))
		e->v.state = NG_VERDICT_OK;
	else if (len[4] == 7 && !strncmp(f[4], "damaged", 7))
		e->v.state = NG_VERDICT_DAMAGED;
	else
		return false;
	f[0][len[0]] = 0;
	e->name = f[0];
	return true;
}

/* By name, then by line: the last line of a name last. */
static int cmp_entry(const void *a, const void *b)
{
	const struct ng_verdict_entry *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : (x->line > y->line) - (x->line < y->line);
}

/* The whole of file `path` (NUL-terminated, malloc'ed), or NULL. */
static char *read_text(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat sb;
	char *text = NULL;
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && (uint64_t)sb.st_size <= MAX_FILE &&
	    (text = malloc((size_t)sb.st_size + 1))) {
		ssize_t k = pread(fd, text, (size_t)sb.st_size, 0);
		*len = k > 0 ? (size_t)k : 0;
		text[*len] = 0;
	}
	close(fd);
	return text;
}

int ng_verdict_load(const char *hourdir, ng_verdict_table *t)
{
	memset(t, 0, sizeof *t);
	char path[4200];
	size_t len = 0;
	snprintf(path, sizeof path, "%s/" NG_VERDICT_FILE, hourdir);
	char *text = read_text(path, &len);
	if (!text)
		return -1;
	size_t cap = 0;
	for (char *l = text; l < text + len;) {
		char *nl = memchr(l, '\n', (size_t)(text + len - l));
		if (!nl)
			break; /* a torn last line */
		*nl = 0;
		struct ng_verdict_entry e = {.line = t->lines};
		if (parse_line(l, &e)) {
			if (t->n == cap) {
				cap = cap ? 2 * cap : 64;
				struct ng_verdict_entry *v = realloc(t->v, cap * sizeof *v);
				if (!v)
					break;
				t->v = v;
			}
			if (!(e.name = strdup(e.name)))
				break;
			t->v[t->n++] = e;
			t->lines++;
		}
		l = nl + 1;
	}
	free(text);
	if (t->n)
		qsort(t->v, t->n, sizeof *t->v, cmp_entry);
	size_t k = 0; /* keep the last line of each name */
	for (size_t i = 0; i < t->n; i++) {
		if (i + 1 < t->n && !strcmp(t->v[i].name, t->v[i + 1].name)) {
			free(t->v[i].name);
			continue;
		}
		t->v[k++] = t->v[i];
	}
	t->n = k;
	return 0;
}

void ng_verdict_table_free(ng_verdict_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i].name);
	free(t->v);
	memset(t, 0, sizeof *t);
}

ng_verdict ng_verdict_find(const ng_verdict_table *t, const char *name)
{
	size_t lo = 0, hi = t ? t->n : 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(t->v[mid].name, name);
		if (c == 0)
			return t->v[mid].v;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (ng_verdict){0};
}

static uint64_t mtime_ns(const struct stat *sb)
{
	return (uint64_t)sb->st_mtim.tv_sec * 1000000000u + (uint64_t)sb->st_mtim.tv_nsec;
}

int ng_verdict_of(const ng_verdict *v, const struct stat *sb)
{
	if (v->state == NG_VERDICT_NONE || v->ino != (uint64_t)sb->st_ino ||
	    v->size != (uint64_t)sb->st_size || v->mtime_ns != mtime_ns(sb))
		return NG_VERDICT_NONE;
	return v->state;
}

/* One verdict line of `name` for sb into buf[len]; its length, or 0. */
static size_t format_line(char *buf, size_t len, const char *name, const ng_verdict *v)
{
	int k = snprintf(buf, len, "%s %llu %llu %llu %s\n", name, (unsigned long long)v->ino,
	                 (unsigned long long)v->size, (unsigned long long)v->mtime_ns,
	                 v->state == NG_VERDICT_OK ? "ok" : "damaged");
	return k > 0 && (size_t)k < len ? (size_t)k : 0;
}

void ng_verdict_record(const char *seg_path, const struct stat *sb, int state)
{
	const char *slash = strrchr(seg_path, '/');
	if (!slash || state == NG_VERDICT_NONE || strchr(slash + 1, ' ') || strchr(slash + 1, '\n'))
		return;
	char path[4200], line[400];
	if ((size_t)snprintf(path, sizeof path, "%.*s/" NG_VERDICT_FILE, (int)(slash - seg_path),
	                     seg_path) >= sizeof path)
		return;
	ng_verdict v = {(uint64_t)sb->st_ino, (uint64_t)sb->st_size, mtime_ns(sb), state};
	size_t n = format_line(line, sizeof line, slash + 1, &v);
	if (!n)
		return;
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	/* one write(): appends of this size are not interleaved with another
	 * process's; a short one leaves a torn line, which does not parse */
	ssize_t k = fd >= 0 ? write(fd, line, n) : -1;
	int e = errno;
	if (fd >= 0)
		close(fd);
	if (k != (ssize_t)n && !atomic_flag_test_and_set(&warned))
		ng_warn("store: cannot record segment verdicts in %s: %s (segments are checked "
		        "whole by every command until it can)",
		        path, k < 0 ? strerror(e) : "short write");
}

void ng_verdict_record_fd(const char *seg_path, int fd, int state)
{
	struct stat sb;
	if (fd >= 0 && fstat(fd, &sb) == 0)
		ng_verdict_record(seg_path, &sb, state);
}

/* True when `name` is among live[0..n) (sorted by strcmp). */
static bool is_live(const char *name, const char *const *live, size_t n)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(live[mid], name);
		if (c == 0)
			return true;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* Rewrites `hourdir`'s verdict file with t's lines of live names only.
 * Returns the lines dropped, or 0 when it could not (left as it was). */
static size_t rewrite(const char *hourdir, const ng_verdict_table *t, const char *const *live,
                      size_t nlive)
{
	char path[4200];
	char *text = malloc(t->n * 400 + 1);
	if (!text)
		return 0;
	size_t len = 0, kept = 0;
	for (size_t i = 0; i < t->n; i++)
		if (is_live(t->v[i].name, live, nlive)) {
			len += format_line(text + len, 400, t->v[i].name, &t->v[i].v);
			kept++;
		}
	snprintf(path, sizeof path, "%s/" NG_VERDICT_FILE, hourdir);
	size_t dropped = 0;
	if (ng_replace_file(path, text, len) == 0)
		dropped = t->lines - kept;
	free(text);
	return dropped;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

size_t ng_verdict_tidy(const char *hourdir, const char **live, size_t nlive)
{
	ng_verdict_table t;
	if (ng_verdict_load(hourdir, &t))
		return 0;
	if (nlive)
		qsort(live, nlive, sizeof *live, cmp_name);
	size_t dropped = t.lines > 2 * nlive + TIDY_SLACK ? rewrite(hourdir, &t, live, nlive) : 0;
	ng_verdict_table_free(&t);
	return dropped;
}

bool ng_verdict_drop_if_alone(const char *hourdir)
{
	DIR *d = opendir(hourdir);
	if (!d)
		return false;
	bool alone = false, other = false;
	struct dirent *e;
	while ((e = readdir(d)) && !other) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (!strcmp(e->d_name, NG_VERDICT_FILE))
			alone = true;
		else
			other = true;
	}
	closedir(d);
	if (!alone || other)
		return false;
	char path[4200];
	snprintf(path, sizeof path, "%s/" NG_VERDICT_FILE, hourdir);
	return unlink(path) == 0;
}
