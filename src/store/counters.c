/*
 * counters.c — the counter-sample store: sFlow interface and host
 * counters, as the collector decoded them (ng_counter_sample,
 * decode/decoder.h), in one file per flush and UTC hour:
 *
 *   STORE/counters/YYYY/MM/DD/HH/<first_ms>-<last_ms>-<seq>.ctr
 *
 * <first_ms>, <last_ms>: the first and last sample's time_received, so a
 * scan skips a file outside its range without opening it.  A file is
 * written to <name>.tmp, fsynced, renamed and its directory fsynced: whole
 * or absent.  Counter samples are few (one per interface every 20-30 s),
 * so they are not compressed.
 *
 * FORMAT, version 2.  All integers little-endian; a float is its IEEE 754
 * binary32 bits as a u32.
 *
 *   Header, 32 bytes:
 *     offset size  meaning
 *          0    8  magic "NGCOUNTS"
 *          8    2  format version, 2
 *         10    2  R, bytes per record: 312
 *         12    4  N, records (at most 2^24)
 *         16    8  time_received of the first record (ms since the epoch)
 *         24    8  time_received of the last record
 *
 *   N records of R bytes follow, in time_received order, each the fields
 *   of ng_counter_sample in this order (a reader of version 2 rejects
 *   another R; a field added is a new version):
 *     offset size  field
 *          0    8  time_received (ms since the epoch, collector clock)
 *          8   16  exporter (datagram source, IPv4-mapped)
 *         24   16  agent (agent address of the datagram, IPv4-mapped)
 *         40    4  sub_agent
 *         44    4  source_type (0 ifIndex, 1 VLAN, 2 entity)
 *         48    4  source_index
 *         52    4  seq (sample sequence number)
 *         56    4  uptime_ms
 *         60    4  parts (enum ng_counter_part bits: which groups below
 *                  the sample carried)
 *         64    4  if_index        68    4  if_type
 *         72    8  if_speed (bits per second)
 *         80    4  if_direction    84    4  if_status
 *         88    8  in_octets       96    8  out_octets
 *        104   24  in_ucast, in_mcast, in_bcast, in_discards, in_errors,
 *                  in_unknown (u32 each)
 *        128   24  out_ucast, out_mcast, out_bcast, out_discards,
 *                  out_errors, promisc (u32 each)
 *        152   52  eth[13] (u32 each: dot3Stats, decoder.h)
 *        204   12  load_one, load_five, load_fifteen (floats)
 *        216   24  cpu_num, cpu_speed_mhz, host_uptime_s, cpu_user_ms,
 *                  cpu_system_ms, cpu_idle_ms (u32 each)
 *        240   64  mem_total, mem_free, disk_total, disk_free,
 *                  disk_bytes_read, disk_bytes_written, net_bytes_in,
 *                  net_bytes_out (u64 each)
 *        304    8  net_pkts_in, net_pkts_out (u32 each)
 *
 * Version 1 (written until this format was defined; read, never
 * written): magic "NGCTR001", u32 R at 8, u32 N at 12, first and last
 * times at 16 and 24, in host order, then N structs as they were in
 * memory.  Only x86-64 hosts wrote it, where that is little-endian and
 * the struct has no padding: R = 312 and the records are byte for byte
 * those of version 2, so one decoder reads both.  A file of another magic,
 * version or R, or shorter than its N records, is skipped (counted as an
 * error).
 *
 * The record's layout is the list CTR_RECORD below: the writer and the
 * reader both walk it, each element copied with core/bytes.h, so the
 * file does not depend on the host's byte order or struct layout.
 */
#include "store/counters.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/bytes.h"
#include "store/files.h"

#define MAGIC "NGCOUNTS"
#define MAGIC_V1 "NGCTR001"
#define VERSION 2
#define HDR_SIZE 32
#define MAX_RECORDS (1u << 24)
#define HOUR_MS 3600000ULL

/* The fields of a record in file order, with their element counts (arrays:
 * addresses are 16 bytes, eth 13 u32s).  Each element is stored as a
 * little-endian integer of its size (1, 2, 4 or 8 bytes). */
#define CTR_RECORD(X)                                                                              \
	X(time_received, 1)                                                                        \
	X(exporter, 16)                                                                            \
	X(agent, 16)                                                                               \
	X(sub_agent, 1)                                                                            \
	X(source_type, 1)                                                                          \
	X(source_index, 1)                                                                         \
	X(seq, 1)                                                                                  \
	X(uptime_ms, 1)                                                                            \
	X(parts, 1)                                                                                \
	X(if_index, 1)                                                                             \
	X(if_type, 1)                                                                              \
	X(if_speed, 1)                                                                             \
	X(if_direction, 1)                                                                         \
	X(if_status, 1)                                                                            \
	X(in_octets, 1)                                                                            \
	X(out_octets, 1)                                                                           \
	X(in_ucast, 1)                                                                             \
	X(in_mcast, 1)                                                                             \
	X(in_bcast, 1)                                                                             \
	X(in_discards, 1)                                                                          \
	X(in_errors, 1)                                                                            \
	X(in_unknown, 1)                                                                           \
	X(out_ucast, 1)                                                                            \
	X(out_mcast, 1)                                                                            \
	X(out_bcast, 1)                                                                            \
	X(out_discards, 1)                                                                         \
	X(out_errors, 1)                                                                           \
	X(promisc, 1)                                                                              \
	X(eth, 13)                                                                                 \
	X(load_one, 1)                                                                             \
	X(load_five, 1)                                                                            \
	X(load_fifteen, 1)                                                                         \
	X(cpu_num, 1)                                                                              \
	X(cpu_speed_mhz, 1)                                                                        \
	X(host_uptime_s, 1)                                                                        \
	X(cpu_user_ms, 1)                                                                          \
	X(cpu_system_ms, 1)                                                                        \
	X(cpu_idle_ms, 1)                                                                          \
	X(mem_total, 1)                                                                            \
	X(mem_free, 1)                                                                             \
	X(disk_total, 1)                                                                           \
	X(disk_free, 1)                                                                            \
	X(disk_bytes_read, 1)                                                                      \
	X(disk_bytes_written, 1)                                                                   \
	X(net_bytes_in, 1)                                                                         \
	X(net_bytes_out, 1)                                                                        \
	X(net_pkts_in, 1)                                                                          \
	X(net_pkts_out, 1)

#define CTR_SIZEOF(f) sizeof(((ng_counter_sample *)0)->f)

/* One field of the record: where it is in the struct, its element size
 * (1, 2, 4 or 8) and count. */
struct ctr_field {
	uint16_t off;
	uint8_t size, count;
};

#define CTR_FIELD(f, n) {offsetof(ng_counter_sample, f), CTR_SIZEOF(f) / (n), (n)},
static const struct ctr_field ctr_fields[] = {CTR_RECORD(CTR_FIELD)};
#undef CTR_FIELD

#define CTR_BYTES(f, n) +CTR_SIZEOF(f)
enum { RECORD_SIZE = 0 CTR_RECORD(CTR_BYTES) };
#undef CTR_BYTES

_Static_assert(RECORD_SIZE == 312, "the counter record of format version 2 is 312 bytes: a "
                                   "field changed in ng_counter_sample needs a new version");
_Static_assert(sizeof(ng_counter_sample) == RECORD_SIZE,
               "a field of ng_counter_sample is missing from CTR_RECORD (a new version)");

/* Stores sample s as a record at p[0..RECORD_SIZE). */
static void put_record(uint8_t *p, const ng_counter_sample *s)
{
	for (size_t i = 0; i < sizeof ctr_fields / sizeof ctr_fields[0]; i++) {
		const struct ctr_field *f = &ctr_fields[i];
		const uint8_t *v = (const uint8_t *)s + f->off;
		for (unsigned k = 0; k < f->count; k++, v += f->size, p += f->size) {
			uint16_t u16;
			uint32_t u32;
			uint64_t u64;
			switch (f->size) {
			case 1: *p = *v; break;
			case 2: memcpy(&u16, v, 2), ng_put_le16(p, u16); break;
			case 4: memcpy(&u32, v, 4), ng_put_le32(p, u32); break;
			default: memcpy(&u64, v, 8), ng_put_le64(p, u64); break;
			}
		}
	}
}

/* The inverse of put_record: the record at p[0..RECORD_SIZE) into *s. */
static void get_record(ng_counter_sample *s, const uint8_t *p)
{
	memset(s, 0, sizeof *s);
	for (size_t i = 0; i < sizeof ctr_fields / sizeof ctr_fields[0]; i++) {
		const struct ctr_field *f = &ctr_fields[i];
		uint8_t *v = (uint8_t *)s + f->off;
		for (unsigned k = 0; k < f->count; k++, v += f->size, p += f->size) {
			uint16_t u16;
			uint32_t u32;
			uint64_t u64;
			switch (f->size) {
			case 1: *v = *p; break;
			case 2: u16 = ng_get_le16(p), memcpy(v, &u16, 2); break;
			case 4: u32 = ng_get_le32(p), memcpy(v, &u32, 4); break;
			default: u64 = ng_get_le64(p), memcpy(v, &u64, 8); break;
			}
		}
	}
}

struct ng_counter_store {
	char *dir; /* STORE/counters */
	pthread_mutex_t mu;
	ng_counter_batch buf;
	uint64_t written;
	unsigned seq;
	pthread_mutex_t flush_mu;
};

ng_counter_store *ng_counter_store_open(const char *dir, char *err, size_t errlen)
{
	ng_counter_store *w = calloc(1, sizeof *w);
	size_t n = strlen(dir) + 16;
	if (!w || !(w->dir = malloc(n))) {
		free(w);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	snprintf(w->dir, n, "%s/counters", dir);
	if (ng_mkdir_p(w->dir)) {
		snprintf(err, errlen, "%s: %s", w->dir, strerror(errno));
		free(w->dir);
		free(w);
		return NULL;
	}
	pthread_mutex_init(&w->mu, NULL);
	pthread_mutex_init(&w->flush_mu, NULL);
	return w;
}

int ng_counter_store_append(ng_counter_store *w, const ng_counter_sample *s, size_t n)
{
	if (!n)
		return 0;
	pthread_mutex_lock(&w->mu);
	ng_counter_batch *b = &w->buf;
	if (b->n + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->n + n)
			cap *= 2;
		ng_counter_sample *p = realloc(b->s, cap * sizeof *p);
		if (!p) {
			pthread_mutex_unlock(&w->mu);
			return -1;
		}
		b->s = p;
		b->cap = cap;
	}
	memcpy(b->s + b->n, s, n * sizeof *s);
	b->n += n;
	pthread_mutex_unlock(&w->mu);
	return 0;
}

static int cmp_time(const void *a, const void *b)
{
	const ng_counter_sample *x = a, *y = b;
	return x->time_received < y->time_received ? -1 : x->time_received > y->time_received;
}

/* Writes s[0..n) (all in one UTC hour, time order) as one file, in
 * format version 2.  Returns 0, or -1 with nothing left behind. */
static int write_file(ng_counter_store *w, const ng_counter_sample *s, size_t n)
{
	time_t t = (time_t)(s[0].time_received / 1000);
	struct tm tm;
	gmtime_r(&t, &tm);
	char hdir[4096], path[4200];
	snprintf(hdir, sizeof hdir, "%s/%04d/%02d/%02d/%02d", w->dir, tm.tm_year + 1900,
	         tm.tm_mon + 1, tm.tm_mday, tm.tm_hour);
	if (ng_mkdir_p(hdir))
		return -1;
	snprintf(path, sizeof path, "%s/%llu-%llu-%u.ctr", hdir,
	         (unsigned long long)s[0].time_received, (unsigned long long)s[n - 1].time_received,
	         w->seq++);
	size_t len = HDR_SIZE + n * RECORD_SIZE;
	uint8_t *img = malloc(len);
	if (!img)
		return -1;
	memcpy(img, MAGIC, 8);
	ng_put_le16(img + 8, VERSION);
	ng_put_le16(img + 10, RECORD_SIZE);
	ng_put_le32(img + 12, (uint32_t)n);
	ng_put_le64(img + 16, s[0].time_received);
	ng_put_le64(img + 24, s[n - 1].time_received);
	for (size_t i = 0; i < n; i++)
		put_record(img + HDR_SIZE + i * RECORD_SIZE, &s[i]);
	int rc = ng_replace_file(path, img, len);
	free(img);
	if (rc)
		return -1;
	ng_fsync_dir(hdir);
	return 0;
}

int ng_counter_store_flush(ng_counter_store *w)
{
	pthread_mutex_lock(&w->flush_mu);
	pthread_mutex_lock(&w->mu);
	ng_counter_batch b = w->buf;
	memset(&w->buf, 0, sizeof w->buf);
	pthread_mutex_unlock(&w->mu);
	int rc = 0;
	if (b.n) {
		qsort(b.s, b.n, sizeof *b.s, cmp_time);
		size_t i = 0;
		while (i < b.n) {
			uint64_t hour = b.s[i].time_received / HOUR_MS;
			size_t j = i + 1;
			while (j < b.n && b.s[j].time_received / HOUR_MS == hour)
				j++;
			if (write_file(w, b.s + i, j - i)) {
				rc = -1;
				/* keep what was not written for a retry */
				ng_counter_store_append(w, b.s + i, b.n - i);
				break;
			}
			w->written += j - i;
			i = j;
		}
	}
	free(b.s);
	pthread_mutex_unlock(&w->flush_mu);
	return rc;
}

uint64_t ng_counter_store_written(const ng_counter_store *w)
{
	return w->written;
}

int ng_counter_store_close(ng_counter_store *w)
{
	if (!w)
		return 0;
	int rc = ng_counter_store_flush(w);
	pthread_mutex_destroy(&w->mu);
	pthread_mutex_destroy(&w->flush_mu);
	free(w->buf.s);
	free(w->dir);
	free(w);
	return rc;
}

/* ---- reading ---- */

struct scan {
	uint64_t from, to;
	int (*fn)(const ng_counter_sample *s, size_t n, void *arg);
	void *arg;
	uint64_t *errors;
};

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The record count of a counter file's header (either version; see the
 * top), or -1 when the header is not one this build reads. */
static long parse_header(const uint8_t *hdr)
{
	uint32_t rs, cnt;
	if (!memcmp(hdr, MAGIC_V1, 8)) {
		rs = ng_get_le32(hdr + 8);
	} else if (!memcmp(hdr, MAGIC, 8) && ng_get_le16(hdr + 8) == VERSION) {
		rs = ng_get_le16(hdr + 10);
	} else {
		return -1;
	}
	cnt = ng_get_le32(hdr + 12);
	return rs == RECORD_SIZE && cnt <= MAX_RECORDS ? (long)cnt : -1;
}

/* Passes the samples of counter file `path` that lie in the scan's range
 * to its callback (a file whose name puts it outside is not opened).
 * Returns the callback's value, or 0; an unreadable file is counted and
 * reported on stderr, and the scan goes on. */
static int scan_file(struct scan *sc, const char *path)
{
	unsigned long long first, last;
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (sscanf(base, "%llu-%llu-", &first, &last) != 2)
		return 0;
	if (last < sc->from || first >= sc->to)
		return 0; /* outside the range: not opened */
	FILE *f = fopen(path, "rb");
	uint8_t hdr[HDR_SIZE], *raw = NULL;
	ng_counter_sample *s = NULL;
	long cnt;
	if (!f || fread(hdr, 1, HDR_SIZE, f) != HDR_SIZE || (cnt = parse_header(hdr)) < 0)
		goto bad;
	raw = malloc((size_t)cnt * RECORD_SIZE + 1);
	s = malloc((size_t)cnt * sizeof *s + 1);
	if (!raw || !s || fread(raw, RECORD_SIZE, (size_t)cnt, f) != (size_t)cnt)
		goto bad;
	fclose(f);
	size_t k = 0;
	for (size_t i = 0; i < (size_t)cnt; i++) {
		get_record(&s[k], raw + i * RECORD_SIZE);
		if (s[k].time_received >= sc->from && s[k].time_received < sc->to)
			k++;
	}
	free(raw);
	int rc = k ? sc->fn(s, k, sc->arg) : 0;
	free(s);
	return rc;
bad:
	if (f)
		fclose(f);
	free(raw);
	free(s);
	if (sc->errors)
		(*sc->errors)++;
	fprintf(stderr, "nagare: %s: not a readable counter file, skipped\n", path);
	return 0;
}

/* Walks `dir` in name order (YYYY/MM/DD/HH sort as text). */
static int scan_dir(struct scan *sc, const char *dir, int depth)
{
	DIR *d = opendir(dir);
	if (!d)
		return depth ? 0 : -1;
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		size_t len = strlen(e->d_name);
		if (depth == 4 && (len < 4 || strcmp(e->d_name + len - 4, ".ctr")))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 32;
			char **p = realloc(names, cap * sizeof *p);
			if (!p)
				break;
			names = p;
		}
		names[n++] = strdup(e->d_name);
	}
	closedir(d);
	if (n) /* qsort(NULL, 0) is undefined (C17 7.22.5) */
		qsort(names, n, sizeof *names, cmp_name);
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		char path[4096];
		int len = snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		if (!rc && (len < 0 || (size_t)len >= sizeof path))
			rc = -1; /* a path longer than PATH_MAX cannot be opened */
		else if (!rc)
			rc = depth == 4 ? scan_file(sc, path) : scan_dir(sc, path, depth + 1);
		free(names[i]);
	}
	free(names);
	return rc;
}

int ng_counter_scan(const char *dir, uint64_t from_ms, uint64_t to_ms,
                    int (*fn)(const ng_counter_sample *s, size_t n, void *arg), void *arg,
                    uint64_t *errors)
{
	char root[4096];
	snprintf(root, sizeof root, "%s/counters", dir);
	struct scan sc = {from_ms, to_ms, fn, arg, errors};
	return scan_dir(&sc, root, 0);
}
