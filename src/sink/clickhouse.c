/*
 * clickhouse.c — the ClickHouse sink (clickhouse.h, docs/clickhouse.md).
 *
 * A batch is a RowBinary body (ClickHouse docs, "Formats: RowBinary":
 * rows one after the other, each column's value in the order of the
 * INSERT's column list: integers little-endian, FixedString(N) its N
 * bytes, String a LEB128 length and its bytes) for
 *
 *   INSERT INTO DB.flows (c1, …, ck, batch_id) FORMAT RowBinary
 *
 * where c1..ck are the columns some row of the batch holds (the others
 * take their defaults, 0 and '', which is what the store holds for them
 * too), and batch_id is one random 64-bit number for every row of the
 * batch.  Every batch lies in one UTC day of flow_start, hence in one
 * partition, and holds at most 50 000 rows (far below
 * max_insert_block_size, 1 048 576), so ClickHouse writes it as one
 * part: committed whole (renamed in from tmp_) or not at all, even when
 * the server is killed during the insert.
 *
 * The queue is one list in the order batches were closed; each batch is
 * in memory or in a spool file.  The sender sends the head, and only
 * the head: order is kept, and a batch that fails is tried again
 * (backoff from 250 ms doubling to max_backoff_ms) before any later one.
 * While memory holds memory_max_bytes, closed batches go to the spool;
 * past spool_max_bytes the batch being closed is dropped (the oldest
 * are kept), counted and logged.  At stop, what memory holds goes to the
 * spool; at start the spool's files are queued first.
 *
 * No batch twice: every failed attempt is "may have been committed",
 * even a refused connection (see send_batch: libcurl's replay on a fresh
 * connection).  Before sending such a batch again, the sender waits until
 * no query of the batch's id runs on the server and counts its rows
 *
 *   SELECT count() FROM DB.flows WHERE flow_start BETWEEN tmin AND tmax
 *          AND batch_id = ID
 *
 * (the primary key prunes to the batch's time range): all of them —
 * it is there, counted as deduplicated; none — it is sent again.  A
 * spool file is marked attempted (one byte, fdatasync) before its first
 * attempt, so a nagare killed during that insert checks at its next
 * start too.
 *
 * In a cluster (docs/clickhouse.md, "Cluster") the INSERT goes to
 * DB.flows_local of the URL's server (insert: local: all of the above
 * holds as is, on that server), or to DB.flows, the Distributed table,
 * with insert_distributed_sync=1: a 200 means every shard wrote its part.
 * Such a batch is one part per shard, so a failed attempt may leave some
 * of its rows in the cluster: the count through DB.flows sees that, the
 * batch's rows are deleted on every shard (and the shards' rollups
 * recomputed), and it is sent again whole.  The running-query check and
 * the repairs then go to every shard too.
 *
 * Spool file SPOOL/<seq, 16 hex digits>.chb, little-endian:
 *
 *   0   8  magic "NGCHSPL1"
 *   8   8  batch id           16  8  rows
 *   24  8  min flow_start     32  8  max flow_start
 *   40  8  closed at (ms)     48  4  column list length L
 *   52  1  attempted (0/1)    53 11  zero
 *   64  L  the column list ("c1, …, batch_id")
 *   64+L 8 body length B, then B bytes of RowBinary, then 8 bytes:
 *          FNV-1a 64 of the body (core/hash.h)
 *
 * written as SEQ.chb.tmp, fsynced, renamed (core/file.h): a file is whole
 * or absent.  A file that fails its checks is renamed *.damaged, counted
 * (spool_errors) and logged, never sent.
 */
#include "sink/clickhouse.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clickhouse/cluster.h"
#include "core/colset.h"
#include "core/file.h"
#include "core/hash.h"
#include "core/log.h"
#include "core/strtab.h"
#include "core/timefmt.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "RowBinary is little-endian: this encoder copies host-order values"
#endif

#define DAY_MS UINT64_C(86400000)
#define HDR 64
#define MAGIC "NGCHSPL1"
#define LOG_EVERY_MS 60000
#define FAIL_LOG_MS 10000 /* failures are logged at most this often */

typedef struct chb {
	struct chb *next;
	uint64_t seq, id, rows, tmin, tmax, born_ms, day;
	ng_colset cols;
	char *collist;       /* "c1, …, batch_id" */
	uint8_t *data;       /* the body; NULL while it is in the spool only */
	size_t len, cap;     /* body bytes (also when spooled) */
	uint64_t file_bytes; /* spool file size; 0: not spooled */
	bool attempted;      /* an attempt may have been committed: check first */
} chb;

struct ng_ch_sink {
	ng_ch_sink_config cfg;
	char *spool;
	ng_ch_client *cl;
	ng_ch_server sv;
	ng_ch_cluster *cluster; /* cfg.schema.cluster: its servers, once found */
	const char *table;      /* where batches go: flows, or flows_local (insert: local) */
	bool ready;             /* the schema is in place */
	/* the batch being filled: the put thread's, and the sender's to close
	 * when it is old (under enc_mu) */
	pthread_mutex_t enc_mu;
	chb *cur;
	/* the queue, the counters (under mu) */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	chb *head, *tail;
	uint64_t mem_bytes, next_seq;
	ng_sink_stats st;
	bool stop;
	uint64_t drain_until;
	uint64_t logged_ms, drop_logged_ms, unlogged_drops;
	pthread_t th;
};

/* ---- batches ---------------------------------------------------------- */

static uint64_t random_id(void)
{
	uint64_t v = 0;
	if (getrandom(&v, sizeof v, 0) != (ssize_t)sizeof v) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		v = ng_fnv1a64(NG_FNV64_INIT, &ts, sizeof ts) ^ (uint64_t)getpid() << 32;
	}
	return v ? v : 1;
}

static void chb_free(chb *b)
{
	if (!b)
		return;
	free(b->collist);
	free(b->data);
	free(b);
}

/* The INSERT column list of a set of fields. */
static char *column_list(ng_colset cols)
{
	size_t len = 16;
	ng_colset left = cols;
	for (int f; (f = ng_colset_pop(&left)) >= 0;)
		len += strlen(ng_fields[f].name) + 2;
	char *s = malloc(len), *p = s;
	if (!s)
		return NULL;
	left = cols;
	for (int f; (f = ng_colset_pop(&left)) >= 0;)
		p += sprintf(p, "%s, ", ng_fields[f].name);
	strcpy(p, "batch_id");
	return s;
}

static chb *chb_new(ng_colset cols, uint64_t day)
{
	chb *b = calloc(1, sizeof *b);
	if (!b || !(b->collist = column_list(cols))) {
		free(b);
		return NULL;
	}
	b->cols = cols;
	b->day = day;
	b->id = random_id();
	b->tmin = UINT64_MAX;
	b->born_ms = ng_now_ms();
	return b;
}

/* Room for `more` bytes in b's body. */
static int reserve(chb *b, size_t more)
{
	if (b->len + more <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : 1u << 20;
	while (cap < b->len + more)
		cap *= 2;
	uint8_t *d = realloc(b->data, cap);
	if (!d)
		return -1;
	b->data = d;
	b->cap = cap;
	return 0;
}

/* The largest row of a set of columns in RowBinary. */
static size_t row_max(ng_colset cols)
{
	size_t m = 8;
	ng_colset left = cols;
	for (int f; (f = ng_colset_pop(&left)) >= 0;)
		m += ng_fields[f].type == NG_FT_STR ? 2 + NG_STR_MAX : ng_fields[f].size;
	return m;
}

/* ---- the spool -------------------------------------------------------- */

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static void spool_path(const ng_ch_sink *s, uint64_t seq, const char *ext, char *out, size_t len)
{
	snprintf(out, len, "%s/%016" PRIx64 ".chb%s", s->spool, seq, ext);
}

/* Writes b (in memory) to its spool file.  Returns 0 or -1 (logged). */
static int spool_write(ng_ch_sink *s, chb *b)
{
	size_t L = strlen(b->collist);
	size_t total = HDR + L + 8 + b->len + 8;
	uint8_t *img = malloc(total);
	if (!img) {
		ng_error("clickhouse: out of memory spooling a batch of %" PRIu64 " rows", b->rows);
		return -1;
	}
	memset(img, 0, HDR);
	memcpy(img, MAGIC, 8);
	put64(img + 8, b->id);
	put64(img + 16, b->rows);
	put64(img + 24, b->tmin);
	put64(img + 32, b->tmax);
	put64(img + 40, b->born_ms);
	uint32_t l32 = (uint32_t)L;
	memcpy(img + 48, &l32, 4);
	img[52] = b->attempted;
	memcpy(img + HDR, b->collist, L);
	put64(img + HDR + L, b->len);
	memcpy(img + HDR + L + 8, b->data, b->len);
	put64(img + HDR + L + 8 + b->len, ng_fnv1a64(NG_FNV64_INIT, b->data, b->len));
	char path[4096];
	spool_path(s, b->seq, "", path, sizeof path);
	int rc = ng_replace_file(path, img, total);
	free(img);
	if (rc < 0) {
		ng_error("clickhouse: cannot write spool file %s: %s", path, strerror(errno));
		return -1;
	}
	b->file_bytes = total;
	return 0;
}

/* Moves a spool file that fails its checks aside (*.damaged). */
static void spool_damaged(ng_ch_sink *s, uint64_t seq, const char *why)
{
	char a[4096], d[4200];
	spool_path(s, seq, "", a, sizeof a);
	snprintf(d, sizeof d, "%s.damaged", a);
	ng_error("clickhouse: spool file %s: %s; moved to %s, not sent", a, why, d);
	rename(a, d);
}

/* Reads the whole of a spool file into *img (malloc'd). */
static int slurp(const char *path, uint8_t **img, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) < 0 || st.st_size < HDR || st.st_size > (off_t)(1ull << 34)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	*len = (size_t)st.st_size;
	*img = malloc(*len);
	size_t got = 0;
	while (*img && got < *len) {
		ssize_t k = read(fd, *img + got, *len - got);
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	close(fd);
	if (!*img || got != *len) {
		free(*img);
		*img = NULL;
		errno = EIO;
		return -1;
	}
	return 0;
}

/* Checks a spool image; fills the batch's header fields, and its body
 * when `body`.  Returns NULL, or what is wrong. */
static const char *spool_parse(const uint8_t *img, size_t len, chb *b, bool body)
{
	if (len < HDR + 16 || memcmp(img, MAGIC, 8))
		return "not a spool file (magic)";
	uint32_t L;
	memcpy(&L, img + 48, 4);
	if (L == 0 || L > 65536 || (size_t)L > len - HDR - 16)
		return "bad column list length";
	uint64_t B = get64(img + HDR + L);
	if (B != len - HDR - L - 16)
		return "bad body length (truncated?)";
	b->id = get64(img + 8);
	b->rows = get64(img + 16);
	b->tmin = get64(img + 24);
	b->tmax = get64(img + 32);
	b->born_ms = get64(img + 40);
	b->attempted = img[52] != 0;
	b->len = (size_t)B;
	for (uint32_t i = 0; i < L; i++) {
		uint8_t ch = img[HDR + i];
		if (!(ch == ',' || ch == ' ' || ch == '_' || (ch >= 'a' && ch <= 'z') ||
		      (ch >= '0' && ch <= '9')))
			return "bad column list";
	}
	const uint8_t *data = img + HDR + L + 8;
	if (get64(data + B) != ng_fnv1a64(NG_FNV64_INIT, data, B))
		return "checksum mismatch";
	if (!b->collist && !(b->collist = strndup((const char *)img + HDR, L)))
		return "out of memory";
	if (body) {
		free(b->data);
		if (!(b->data = malloc(B ? B : 1)))
			return "out of memory";
		memcpy(b->data, data, B);
		b->cap = B;
	}
	return NULL;
}

/* Marks the spool file of b attempted, durably, before it is sent. */
static int spool_mark(ng_ch_sink *s, chb *b)
{
	char path[4096];
	spool_path(s, b->seq, "", path, sizeof path);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	const uint8_t one = 1;
	int rc = pwrite(fd, &one, 1, 52) == 1 && fdatasync(fd) == 0 ? 0 : -1;
	close(fd);
	return rc;
}

static int by_seq(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* At open: queues the spool's files in order.  Returns 0 or -1. */
static int spool_load(ng_ch_sink *s, char *err, size_t errlen)
{
	DIR *d = opendir(s->spool);
	if (!d) {
		snprintf(err, errlen, "cannot read spool directory %s: %s", s->spool,
		         strerror(errno));
		return -1;
	}
	uint64_t *seqs = NULL;
	size_t n = 0, cap = 0;
	for (struct dirent *e; (e = readdir(d));) {
		const char *nm = e->d_name;
		size_t l = strlen(nm);
		if (l == 20 && !strcmp(nm + 16, ".chb")) {
			char *end;
			uint64_t seq = strtoull(nm, &end, 16);
			if (end != nm + 16)
				continue;
			if (n == cap) {
				cap = cap ? cap * 2 : 64;
				uint64_t *ns = realloc(seqs, cap * sizeof *ns);
				if (!ns)
					break;
				seqs = ns;
			}
			seqs[n++] = seq;
		} else if (l > 8 && !strcmp(nm + l - 8, ".chb.tmp")) {
			char p[4096];
			snprintf(p, sizeof p, "%s/%s", s->spool, nm);
			unlink(p); /* a write a crash cut short: never renamed in */
		}
	}
	closedir(d);
	if (n)
		qsort(seqs, n, sizeof *seqs, by_seq);
	uint64_t rows = 0;
	for (size_t i = 0; i < n; i++) {
		char path[4096];
		spool_path(s, seqs[i], "", path, sizeof path);
		uint8_t *img;
		size_t len;
		chb *b = calloc(1, sizeof *b);
		if (!b)
			break;
		const char *why = NULL;
		if (slurp(path, &img, &len) < 0)
			why = strerror(errno);
		else {
			why = spool_parse(img, len, b, false);
			free(img);
		}
		if (why) {
			s->st.spool_errors++;
			spool_damaged(s, seqs[i], why);
			chb_free(b);
			continue;
		}
		b->seq = seqs[i];
		b->file_bytes = len;
		s->st.spool_bytes += len;
		s->st.spool_files++;
		rows += b->rows;
		s->st.queued_rows += b->rows;
		if (s->tail)
			s->tail->next = b;
		else
			s->head = b;
		s->tail = b;
		s->next_seq = b->seq + 1;
	}
	free(seqs);
	if (n)
		ng_info("clickhouse: %" PRIu64 " spooled batches (%" PRIu64 " rows, %" PRIu64
		        " bytes) from %s are sent first",
		        s->st.spool_files, rows, s->st.spool_bytes, s->spool);
	return 0;
}

/* ---- the queue -------------------------------------------------------- */

/* Queues a closed batch (under mu): memory, else the spool, else dropped. */
static void enqueue(ng_ch_sink *s, chb *b)
{
	b->seq = s->next_seq++;
	if (!b->rows) {
		chb_free(b);
		return;
	}
	if (s->mem_bytes + b->len > s->cfg.memory_max_bytes) {
		if (s->st.spool_bytes + b->len + HDR + 4096 > s->cfg.spool_max_bytes ||
		    spool_write(s, b) < 0) {
			bool full =
			    s->st.spool_bytes + b->len + HDR + 4096 > s->cfg.spool_max_bytes;
			if (!full)
				s->st.spool_errors++;
			s->st.dropped_rows += b->rows;
			s->st.dropped_batches++;
			s->unlogged_drops += b->rows;
			uint64_t now = ng_now_ms();
			if (now - s->drop_logged_ms >= LOG_EVERY_MS) {
				ng_error(
				    "clickhouse: %s: %" PRIu64 " rows dropped since the last such "
				    "line (%" PRIu64 " in all; clickhouse.spool_max is %" PRIu64
				    " bytes)",
				    full ? "the spool is full" : "the spool cannot be written",
				    s->unlogged_drops, s->st.dropped_rows, s->cfg.spool_max_bytes);
				s->drop_logged_ms = now;
				s->unlogged_drops = 0;
			}
			chb_free(b);
			return;
		}
		free(b->data);
		b->data = NULL;
		b->cap = 0;
		s->st.spooled_batches++;
		s->st.spool_bytes += b->file_bytes;
		s->st.spool_files++;
	} else {
		s->mem_bytes += b->len;
	}
	s->st.queued_rows += b->rows;
	if (s->tail)
		s->tail->next = b;
	else
		s->head = b;
	s->tail = b;
	pthread_cond_signal(&s->cv);
}

/* Closes the current batch (under enc_mu). */
static void close_cur(ng_ch_sink *s)
{
	chb *b = s->cur;
	s->cur = NULL;
	if (!b)
		return;
	pthread_mutex_lock(&s->mu);
	enqueue(s, b);
	pthread_mutex_unlock(&s->mu);
}

/* ---- encoding --------------------------------------------------------- */

/* A column of the batch and where this call's values are. */
typedef struct plan {
	const uint8_t *src; /* NULL: zeros */
	uint8_t size;
	bool str;
} plan;

void ng_ch_sink_put(ng_ch_sink *s, const uint8_t *const *cols, size_t n)
{
	if (!n)
		return;
	ng_colset have = {{0}};
	for (size_t f = 0; f < NG_FIELD_COUNT; f++)
		if (cols[f])
			ng_colset_add(&have, (int)f);
	uint64_t first = 0; /* a NULL column: every row's flow_start is 0 */
	if (cols[NG_F_FLOW_START])
		memcpy(&first, cols[NG_F_FLOW_START], 8);
	const uint64_t day = first / DAY_MS;
	pthread_mutex_lock(&s->enc_mu);
	if (s->cur && (s->cur->day != day || !ng_colset_subset(have, s->cur->cols)))
		close_cur(s);
	size_t r = 0;
	while (r < n) {
		if (!s->cur && !(s->cur = chb_new(have, day))) {
			pthread_mutex_lock(&s->mu);
			s->st.dropped_rows += n - r;
			pthread_mutex_unlock(&s->mu);
			ng_error("clickhouse: out of memory: %zu rows dropped", n - r);
			break;
		}
		chb *b = s->cur;
		plan p[NG_FIELD_COUNT];
		size_t np = 0;
		ng_colset left = b->cols;
		for (int f; (f = ng_colset_pop(&left)) >= 0;)
			p[np++] =
			    (plan){cols[f], ng_fields[f].size, ng_fields[f].type == NG_FT_STR};
		const size_t rmax = row_max(b->cols);
		size_t take = n - r;
		if (take > s->cfg.batch_rows - b->rows)
			take = s->cfg.batch_rows - b->rows;
		if (take > 1024) /* room is taken for the longest rows: 1024 at a time */
			take = 1024;
		if (reserve(b, take * rmax) < 0) {
			pthread_mutex_lock(&s->mu);
			s->st.dropped_rows += n - r;
			pthread_mutex_unlock(&s->mu);
			ng_error("clickhouse: out of memory: %zu rows dropped", n - r);
			break;
		}
		uint8_t *o = b->data + b->len;
		const uint64_t *fs = (const uint64_t *)(const void *)cols[NG_F_FLOW_START];
		for (size_t i = r; i < r + take; i++) {
			for (size_t k = 0; k < np; k++) {
				const plan *c = &p[k];
				if (c->str) {
					uint32_t id = 0;
					if (c->src)
						memcpy(&id, c->src + i * 4, 4);
					size_t l = id ? ng_str_len(id) : 0;
					if (l <
					    0x80) { /* NG_STR_MAX 255: one or two LEB128 bytes */
						*o++ = (uint8_t)l;
					} else {
						*o++ = (uint8_t)(l | 0x80);
						*o++ = (uint8_t)(l >> 7);
					}
					if (l) {
						memcpy(o, ng_str(id), l);
						o += l;
					}
				} else if (c->src) {
					/* fixed sizes: each copy is one move, not a call */
					const uint8_t *v = c->src + i * c->size;
					switch (c->size) {
					case 1: *o = *v; break;
					case 2: memcpy(o, v, 2); break;
					case 4: memcpy(o, v, 4); break;
					case 8: memcpy(o, v, 8); break;
					case 16: memcpy(o, v, 16); break;
					default: memcpy(o, v, c->size); break;
					}
					o += c->size;
				} else {
					memset(o, 0, c->size);
					o += c->size;
				}
			}
			memcpy(o, &b->id, 8);
			o += 8;
			uint64_t t = 0;
			if (fs)
				memcpy(&t, fs + i, 8);
			b->tmin = t < b->tmin ? t : b->tmin;
			b->tmax = t > b->tmax ? t : b->tmax;
		}
		b->len = (size_t)(o - b->data);
		b->rows += take;
		r += take;
		if (b->rows >= s->cfg.batch_rows)
			close_cur(s);
	}
	if (s->cur && ng_now_ms() - s->cur->born_ms >= s->cfg.batch_ms)
		close_cur(s);
	pthread_mutex_unlock(&s->enc_mu);
}

/* ---- sending ---------------------------------------------------------- */

/* Detects the server and creates or upgrades the schema: on every server
 * of the cluster when there is one (found at the first call). */
static int make_ready(ng_ch_sink *s, char *err, size_t errlen)
{
	if (s->ready)
		return 0;
	if (ng_ch_detect(s->cl, &s->sv, err, errlen) < 0)
		return -1;
	int v;
	const ng_ch_schema_opts *o = &s->cfg.schema;
	if (o->cluster) {
		if (!s->cluster &&
		    !(s->cluster = ng_ch_cluster_open(&s->cfg.conn, o->cluster, s->cfg.nodes,
		                                      s->cfg.nnodes, err, errlen)))
			return -1;
		if (s->cfg.insert_local && s->cluster->self == (size_t)-1) {
			snprintf(
			    err, errlen,
			    "clickhouse.insert: local: %s is not a server of cluster %s, so it "
			    "has no local table to insert into: give one of its servers' URLs",
			    ng_ch_base_url(s->cl), o->cluster);
			return -1;
		}
		v = ng_ch_cluster_init(s->cluster, o, err, errlen);
	} else {
		v = ng_ch_schema_init(s->cl, &s->sv, o, err, errlen);
	}
	if (v < 0)
		return -1;
	pthread_mutex_lock(&s->mu);
	s->st.schema_version = (uint64_t)v;
	pthread_mutex_unlock(&s->mu);
	s->ready = true;
	return 0;
}

/* Whether a batch's checks and repairs (running queries, a rollup
 * repair, a partial batch's deletion) go to every shard, each on its first
 * replica: with the Distributed insert, whose batches span shards.  Else
 * (one server, insert: local) they run on the URL's server alone.
 * Retention goes to every shard in either insert mode. */
static bool per_shard(const ng_ch_sink *s)
{
	return s->cluster && !s->cfg.insert_local;
}

/* The rows of batch b already in DB.flows (through the Distributed table
 * in a cluster: every shard must answer), or -1 with the cause. */
static int64_t count_batch(ng_ch_sink *s, const chb *b, char *err, size_t errlen)
{
	char q[512], out[32];
	snprintf(q, sizeof q,
	         "SELECT count() FROM %s.%s WHERE flow_start >= %" PRIu64
	         " AND flow_start <= %" PRIu64 " AND batch_id = %" PRIu64,
	         ng_ch_database(s->cl), s->table, b->tmin, b->tmax, b->id);
	if (ng_ch_query(s->cl, q, out, sizeof out, err, errlen) < 0)
		return -1;
	char *end;
	unsigned long long v = strtoull(out, &end, 10);
	if (end == out || *end) {
		snprintf(err, errlen, "ClickHouse: count() answered '%.20s'", out);
		return -1;
	}
	return (int64_t)v;
}

/* Whether a query of batch b's id still runs: on the URL's server, and
 * with the Distributed insert on every server (the shards' parts of it
 * run there under initial_query_id).  Returns 0 (none), 1, or -1. */
static int batch_running(ng_ch_sink *s, const chb *b, char *err, size_t errlen)
{
	char q[256], out[32];
	snprintf(q, sizeof q,
	         "SELECT count() FROM system.processes WHERE query_id = 'nagare-%016" PRIx64
	         "' OR initial_query_id = 'nagare-%016" PRIx64 "'",
	         b->id, b->id);
	size_t n = per_shard(s) ? s->cluster->n : 1;
	for (size_t i = 0; i < n; i++) {
		ng_ch_client *c = per_shard(s) ? s->cluster->node[i].c : s->cl;
		if (ng_ch_query(c, q, out, sizeof out, err, errlen) < 0)
			return -1;
		if (strcmp(out, "0")) {
			snprintf(err, errlen,
			         "batch %016" PRIx64 ": an earlier insert still runs at %s", b->id,
			         ng_ch_base_url(c));
			return 1;
		}
	}
	return 0;
}

/* The rollups' repair over batch b's buckets (ng_ch_rollup_repair) where
 * its rows went: each shard, or the URL's server.  Returns 0 or -1. */
static int repair(ng_ch_sink *s, const chb *b, char *err, size_t errlen)
{
	if (!per_shard(s))
		return ng_ch_rollup_repair(s->cl, &s->cfg.schema, b->tmin, b->tmax, err, errlen);
	for (size_t i = 0; i < s->cluster->n; i++)
		if (ng_ch_cluster_first_replica(s->cluster, i) &&
		    ng_ch_rollup_repair(s->cluster->node[i].c, &s->cfg.schema, b->tmin, b->tmax,
		                        err, errlen) < 0)
			return -1;
	return 0;
}

enum { SENT, DUPLICATE, FAILED, DAMAGED };

/* One attempt at the head batch b (sender thread, mu not held). */
static int send_batch(ng_ch_sink *s, chb *b, char *err, size_t errlen)
{
	if (make_ready(s, err, errlen) < 0)
		return FAILED;
	if (!b->data) {
		char path[4096];
		spool_path(s, b->seq, "", path, sizeof path);
		uint8_t *img;
		size_t len;
		const char *why = NULL;
		if (slurp(path, &img, &len) < 0)
			why = strerror(errno);
		else {
			why = spool_parse(img, len, b, true);
			free(img);
		}
		if (why) {
			spool_damaged(s, b->seq, why);
			return DAMAGED;
		}
	}
	if (b->attempted) {
		/* an earlier attempt still running on the server (the client
		 * timed out, not the server) may commit after the count: wait
		 * until it is over; once over it cannot run again */
		if (batch_running(s, b, err, errlen))
			return FAILED;
		int64_t have = count_batch(s, b, err, errlen);
		if (have < 0)
			return FAILED;
		if ((uint64_t)have == b->rows) {
			/* in flows: the rollups may or may not hold it (a server
			 * stopped between the parts): recomputed from flows over
			 * its buckets, else tried again */
			if (repair(s, b, err, errlen) < 0)
				return FAILED;
			return DUPLICATE;
		}
		if (have && per_shard(s)) {
			/* through the Distributed table a batch is one part per
			 * shard: some shards took theirs, another failed.  Its rows
			 * are taken out again on every shard (and the rollups
			 * recomputed), then it is sent whole */
			ng_warn("clickhouse: batch %016" PRIx64 " has %" PRId64 " of its %" PRIu64
			        " rows in the cluster (a shard failed): deleting them to send it "
			        "again whole",
			        b->id, have, b->rows);
			for (size_t i = 0; i < s->cluster->n; i++)
				if (ng_ch_cluster_first_replica(s->cluster, i) &&
				    ng_ch_batch_delete(s->cluster->node[i].c, &s->cfg.schema, b->id,
				                       b->tmin, b->tmax, err, errlen) < 0)
					return FAILED;
			have = count_batch(s, b, err, errlen);
			if (have != 0) {
				if (have > 0)
					snprintf(err, errlen,
					         "batch %016" PRIx64 ": %" PRId64
					         " rows left after deletion",
					         b->id, have);
				return FAILED;
			}
		} else if (have) {
			/* not reached: a batch is one part (see the top).  Sending
			 * again would double what is there; it is left, counted as
			 * a duplicate and logged */
			ng_error("clickhouse: batch %016" PRIx64 " has %" PRId64 " of its %" PRIu64
			         " rows in ClickHouse: not sent again",
			         b->id, have, b->rows);
			return DUPLICATE;
		}
	}
	if (b->file_bytes && !b->attempted && spool_mark(s, b) < 0) {
		snprintf(err, errlen, "cannot mark spool file of batch %016" PRIx64 ": %s", b->id,
		         strerror(errno));
		return FAILED;
	}
	b->attempted = true;
	size_t ql = strlen(b->collist) + 128;
	char *q = malloc(ql);
	if (!q) {
		snprintf(err, errlen, "out of memory");
		return FAILED;
	}
	snprintf(q, ql, "INSERT INTO %s.%s (%s) FORMAT RowBinary", ng_ch_database(s->cl), s->table,
	         b->collist);
	/* the batch's own query id: while an earlier attempt still runs on
	 * the server (a client time-out), ClickHouse refuses this one (code
	 * 216, QUERY_WITH_SAME_ID_IS_ALREADY_RUNNING) and the count is taken
	 * again at the next attempt */
	char qid[40];
	snprintf(qid, sizeof qid, "nagare-%016" PRIx64, b->id);
	ng_ch_reply r;
	int rc = ng_ch_exec(s->cl, q, b->data, b->len, qid, &r);
	free(q);
	if (rc == 0) {
		ng_ch_reply_free(&r);
		return SENT;
	}
	snprintf(err, errlen, "%s", r.err);
	/* Every failed insert stays "attempted", even a refused connection:
	 * libcurl sends a request again on a fresh connection when the
	 * reused one turns out dead, so "could not connect" may follow a
	 * first send that a stopping server took in and committed (seen
	 * here: a SIGTERM'd 18.16 commits, closes without an answer, and the
	 * retry's connect is refused).  The check costs one count. */
	pthread_mutex_lock(&s->mu);
	s->st.ambiguous += r.outcome != NG_CH_NOT_SENT;
	pthread_mutex_unlock(&s->mu);
	if (r.outcome == NG_CH_NOT_SENT)
		s->ready = false; /* the server may come back another version */
	/* 16 NO_SUCH_COLUMN_IN_TABLE, 60 UNKNOWN_TABLE, 81 UNKNOWN_DATABASE:
	 * the schema went away or is older: init again */
	if (r.exception == 16 || r.exception == 60 || r.exception == 81)
		s->ready = false;
	ng_ch_reply_free(&r);
	return FAILED;
}

/* Pops the head (under mu) after it was sent or found there. */
static void pop_head(ng_ch_sink *s)
{
	chb *b = s->head;
	s->head = b->next;
	if (!s->head)
		s->tail = NULL;
	s->st.queued_rows -= b->rows;
	if (b->file_bytes) {
		char path[4096];
		spool_path(s, b->seq, "", path, sizeof path);
		unlink(path);
		s->st.spool_bytes -= b->file_bytes;
		s->st.spool_files--;
	} else {
		s->mem_bytes -= b->len;
	}
	chb_free(b);
}

static void wait_ms(ng_ch_sink *s, uint64_t ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)(ms / 1000);
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(&s->cv, &s->mu, &ts);
}

/* Where the server has no TTL: drops old partitions once an hour. */
static void retention(ng_ch_sink *s, uint64_t *next)
{
	uint64_t now = ng_now_ms();
	if (now < *next || !s->ready || s->sv.ttl ||
	    (!s->cfg.schema.retention_days && !s->cfg.schema.rollup_retention_days))
		return;
	*next = now + 3600000;
	char err[NG_CH_ERR_MAX];
	/* in a cluster, on every shard (its first replica) */
	size_t n = s->cluster ? s->cluster->n : 1;
	for (size_t i = 0; i < n; i++) {
		if (s->cluster && !ng_ch_cluster_first_replica(s->cluster, i))
			continue;
		ng_ch_client *c = s->cluster ? s->cluster->node[i].c : s->cl;
		if (ng_ch_drop_old(c, &s->cfg.schema, now, err, sizeof err) < 0)
			ng_warn("clickhouse: retention: %s", err);
	}
}

static void *sender_main(void *arg)
{
	ng_ch_sink *s = arg;
	uint64_t backoff = 0, next_try = 0, next_retention = 0;
	char err[NG_CH_ERR_MAX];
	pthread_mutex_lock(&s->mu);
	for (;;) {
		const uint64_t now = ng_now_ms();
		/* stopping: send what waits for up to drain_ms, unless ClickHouse
		 * is failing already (the spool keeps it for the next start) */
		if (s->stop && (!s->head || now >= s->drain_until || backoff))
			break;
		pthread_mutex_unlock(&s->mu);
		if (!s->stop && pthread_mutex_trylock(&s->enc_mu) == 0) {
			if (s->cur && now - s->cur->born_ms >= s->cfg.batch_ms)
				close_cur(s);
			pthread_mutex_unlock(&s->enc_mu);
		}
		retention(s, &next_retention);
		pthread_mutex_lock(&s->mu);
		s->st.lag_ms = s->head ? now - s->head->born_ms : 0;
		if (!s->head || now < next_try) {
			uint64_t w = !s->head ? 250 : next_try - now;
			wait_ms(s, w < 250 ? w : 250);
			continue;
		}
		chb *b = s->head;
		pthread_mutex_unlock(&s->mu);
		const bool replay = b->file_bytes != 0;
		int rc = send_batch(s, b, err, sizeof err);
		pthread_mutex_lock(&s->mu);
		if (rc == FAILED) {
			s->st.failures++;
			s->st.retries++;
			s->st.connected = 0;
			backoff = backoff ? backoff * 2 : 250;
			if (backoff > s->cfg.max_backoff_ms)
				backoff = s->cfg.max_backoff_ms;
			next_try = ng_now_ms() + backoff;
			if (ng_now_ms() - s->logged_ms >= FAIL_LOG_MS) {
				ng_warn("clickhouse: %s; %" PRIu64 " rows wait (%" PRIu64
				        " spooled batches, %" PRIu64 " bytes), retrying",
				        err, s->st.queued_rows, s->st.spool_files,
				        s->st.spool_bytes);
				s->logged_ms = ng_now_ms();
			}
			continue;
		}
		if (rc == SENT) {
			s->st.rows_sent += b->rows;
			s->st.batches_sent++;
			s->st.bytes_sent += b->len;
			s->st.replayed_batches += replay;
		} else if (rc == DUPLICATE) {
			s->st.deduplicated++;
		} else {
			s->st.spool_errors++;
			s->st.dropped_rows += b->rows;
			s->st.dropped_batches++;
			s->st.spool_bytes -= b->file_bytes; /* moved aside: not ours any more */
			s->st.spool_files--;
			b->file_bytes = 0;
			s->mem_bytes += b->len; /* pop_head takes it off again */
		}
		if (!s->st.connected && s->logged_ms) {
			ng_info("clickhouse: %s reachable again; %" PRIu64 " rows wait",
			        ng_ch_base_url(s->cl), s->st.queued_rows - b->rows);
			s->logged_ms = 0;
		}
		s->st.connected = 1;
		backoff = 0;
		next_try = 0;
		pop_head(s);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

/* ---- open and close --------------------------------------------------- */

static int mkdirs(const char *path)
{
	char p[4096];
	snprintf(p, sizeof p, "%s", path);
	for (char *q = p + 1; *q; q++)
		if (*q == '/') {
			*q = 0;
			if (mkdir(p, 0755) < 0 && errno != EEXIST)
				return -1;
			*q = '/';
		}
	return mkdir(p, 0755) < 0 && errno != EEXIST ? -1 : 0;
}

ng_ch_sink *ng_ch_sink_open(const ng_ch_sink_config *cfg, char *err, size_t errlen)
{
	ng_ch_sink *s = calloc(1, sizeof *s);
	if (!s || !(s->spool = strdup(cfg->spool_dir))) {
		snprintf(err, errlen, "out of memory");
		free(s);
		return NULL;
	}
	s->cfg = *cfg;
	if (!s->cfg.spool_max_bytes)
		s->cfg.spool_max_bytes = 1ull << 30;
	if (!s->cfg.memory_max_bytes)
		s->cfg.memory_max_bytes = 64ull << 20;
	if (!s->cfg.batch_rows)
		s->cfg.batch_rows = 50000;
	if (!s->cfg.batch_ms)
		s->cfg.batch_ms = 3000;
	if (!s->cfg.max_backoff_ms)
		s->cfg.max_backoff_ms = 10000;
	pthread_mutex_init(&s->mu, NULL);
	pthread_mutex_init(&s->enc_mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	if (mkdirs(s->spool) < 0) {
		snprintf(err, errlen, "cannot create spool directory %s: %s", s->spool,
		         strerror(errno));
		goto fail;
	}
	/* through the Distributed table: synchronously, so that the insert's
	 * 200 means every shard has its rows (ClickHouse docs, settings:
	 * insert_distributed_sync; 18.16 has it); else a 200 would only mean
	 * the rows wait in the server's queue for the other shards */
	ng_ch_conn conn = cfg->conn;
	if (cfg->schema.cluster && !cfg->insert_local)
		conn.settings = "insert_distributed_sync=1";
	s->table = cfg->schema.cluster && cfg->insert_local ? "flows_local" : "flows";
	if (!(s->cl = ng_ch_open(&conn, err, errlen)) || spool_load(s, err, errlen) < 0)
		goto fail;
	char why[NG_CH_ERR_MAX];
	if (make_ready(s, why, sizeof why) < 0) {
		ng_warn("clickhouse: %s; rows wait in memory and in %s (at most %" PRIu64
		        " bytes) until it answers",
		        why, s->spool, s->cfg.spool_max_bytes);
	} else {
		if (s->cluster)
			ng_info("clickhouse: writing to cluster %s (%u shards, %zu servers) %s %s, "
			        "database %s (server %s, schema version %d)",
			        s->cluster->name, s->cluster->shards, s->cluster->n,
			        s->cfg.insert_local ? "into the local table of" : "through",
			        ng_ch_base_url(s->cl), ng_ch_database(s->cl), s->sv.version,
			        NG_CH_SCHEMA_VERSION);
		else
			ng_info(
			    "clickhouse: writing to %s, database %s (server %s, schema version %d)",
			    ng_ch_base_url(s->cl), ng_ch_database(s->cl), s->sv.version,
			    NG_CH_SCHEMA_VERSION);
		s->st.connected = 1;
	}
	if (pthread_create(&s->th, NULL, sender_main, s) != 0) {
		snprintf(err, errlen, "cannot start the ClickHouse sender thread");
		goto fail;
	}
	return s;
fail:
	ng_ch_cluster_free(s->cluster);
	ng_ch_close(s->cl);
	for (chb *b = s->head, *n; b; b = n) {
		n = b->next;
		chb_free(b);
	}
	pthread_mutex_destroy(&s->mu);
	pthread_mutex_destroy(&s->enc_mu);
	pthread_cond_destroy(&s->cv);
	free(s->spool);
	free(s);
	return NULL;
}

void ng_ch_sink_get_stats(ng_ch_sink *s, ng_sink_stats *st)
{
	pthread_mutex_lock(&s->mu);
	*st = s->st;
	if (s->head)
		st->lag_ms = ng_now_ms() - s->head->born_ms;
	pthread_mutex_unlock(&s->mu);
}

int ng_ch_sink_close(ng_ch_sink *s, unsigned drain_ms, ng_sink_stats *final)
{
	if (!s)
		return 0;
	pthread_mutex_lock(&s->enc_mu);
	close_cur(s);
	pthread_mutex_unlock(&s->enc_mu);
	pthread_mutex_lock(&s->mu);
	s->stop = true;
	s->drain_until = ng_now_ms() + drain_ms;
	pthread_cond_signal(&s->cv);
	pthread_mutex_unlock(&s->mu);
	pthread_join(s->th, NULL);
	uint64_t kept = 0, kept_rows = 0, lost_before = s->st.dropped_rows;
	for (chb *b = s->head, *n; b; b = n) {
		n = b->next;
		if (b->data && !b->file_bytes) {
			if (s->st.spool_bytes + b->len + HDR + 4096 > s->cfg.spool_max_bytes ||
			    spool_write(s, b) < 0) {
				s->st.dropped_rows += b->rows;
				s->st.dropped_batches++;
			} else {
				kept++;
				kept_rows += b->rows;
				s->st.spool_bytes += b->file_bytes;
			}
		}
		chb_free(b);
	}
	if (kept)
		ng_info("clickhouse: %" PRIu64 " batches (%" PRIu64
		        " rows) not yet sent are in %s: "
		        "the next start sends them",
		        kept, kept_rows, s->spool);
	int rc = 0;
	if (s->st.dropped_rows > lost_before) {
		ng_error("clickhouse: %" PRIu64 " rows not sent could not be spooled: lost",
		         s->st.dropped_rows - lost_before);
		rc = -1;
	}
	if (s->st.dropped_rows)
		rc = -1;
	ng_info("clickhouse: %" PRIu64 " rows in %" PRIu64 " batches sent, %" PRIu64
	        " retries, %" PRIu64 " found already inserted, %" PRIu64 " rows dropped",
	        s->st.rows_sent, s->st.batches_sent, s->st.retries, s->st.deduplicated,
	        s->st.dropped_rows);
	s->st.lag_ms = 0;
	s->st.queued_rows = 0; /* what is left is in the spool, for the next start */
	if (final)
		*final = s->st;
	ng_ch_cluster_free(s->cluster);
	ng_ch_close(s->cl);
	pthread_mutex_destroy(&s->mu);
	pthread_mutex_destroy(&s->enc_mu);
	pthread_cond_destroy(&s->cv);
	free(s->spool);
	free(s);
	return rc;
}
