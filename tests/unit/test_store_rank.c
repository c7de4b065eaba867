/*
 * test_store_rank.c — the RANK encoding (segment.c): values numbered by
 * frequency, the numbering itself (rank.h), which columns get it, the
 * bytes of its frames, round trips, and corrupt frames; and MAP, string
 * columns decided by an integer column, whose writer builds on RANK's
 * numbering of the key column.
 *
 * Expected numberings and dictionaries are computed here from the input,
 * by counting and sorting in the simplest way (qsort), not by rank.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "core/field.h"
#include "core/strtab.h"
#include "store/rank.h"
#include "store/segment.h"
#include "test_rng.h"

#define T0 UINT64_C(1764460800000) /* 2025-11-30T00:00:00Z */
enum { N = 3 * NG_SEG_BLOCK_ROWS + 500 };

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static uint64_t rnd(void)
{
	return ts_xorshift64(&rng_state);
}

/* A heavy-tailed draw from 0..n-1: 0 is the most likely. */
static uint32_t skewed(uint32_t n)
{
	double u = (double)(rnd() >> 11) / 9007199254740992.0;
	return (uint32_t)((double)n * u * u * u);
}

static void set_v4(uint8_t a[16], uint32_t v)
{
	memset(a, 0, 10);
	a[10] = a[11] = 0xff;
	a[12] = (uint8_t)(v >> 24), a[13] = (uint8_t)(v >> 16), a[14] = (uint8_t)(v >> 8);
	a[15] = (uint8_t)v;
}

/* ---- the numbering ------------------------------------------------------ */

/* Most frequent first, equal counts in ascending value order. */
static void test_rank_build_order(void **state)
{
	(void)state;
	static const uint32_t v[] = {5, 5, 5, 9, 9, 1, 7, 7, 7, 7, 3, 0xffffffffu, 0};
	enum { n = sizeof v / sizeof *v };
	/* counts: 7:4, 5:3, 9:2, then 0, 1, 3, 0xffffffff once each */
	static const uint32_t dict_want[] = {7, 5, 9, 0, 1, 3, 0xffffffffu};
	static const uint32_t idx_want[n] = {1, 1, 1, 2, 2, 4, 0, 0, 0, 0, 5, 6, 3};
	ng_rank w = {0};
	uint32_t idx[n], dict[n];
	assert_int_equal(ng_rank_build(&w, v, n, n, 0, idx, dict), 7);
	assert_memory_equal(dict, dict_want, sizeof dict_want);
	assert_memory_equal(idx, idx_want, sizeof idx_want);
	/* more distinct values than allowed: not numbered */
	assert_int_equal(ng_rank_build(&w, v, n, 6, 0, idx, dict), 0);
	assert_int_equal(ng_rank_build(&w, v, n, 7, 0, idx, dict), 7);
	ng_rank_free(&w);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The numbering expected for v[0..n): sorting (count desc, value asc)
 * keys built from a sorted copy.  Returns K; dict[j] = value j. */
static size_t expected_dict(const uint32_t *v, size_t n, uint32_t *dict)
{
	uint32_t *s = malloc(n * 4);
	uint64_t *key = malloc(n * 8);
	memcpy(s, v, n * 4);
	for (size_t i = 0; i < n; i++)
		key[i] = s[i];
	qsort(key, n, 8, cmp_u64);
	size_t k = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && key[j] == key[i])
			j++;
		key[k++] = (uint64_t)(n - (j - i)) << 32 | key[i];
		i = j;
	}
	qsort(key, k, 8, cmp_u64);
	for (size_t j = 0; j < k; j++)
		dict[j] = (uint32_t)key[j];
	free(s);
	free(key);
	return k;
}

/* Tables large enough to grow the hash table several times, with many
 * values seen once: the same numbering as counting and sorting. */
static void test_rank_build_large(void **state)
{
	(void)state;
	enum { M = 200000 };
	uint32_t *v = malloc(M * 4), *idx = malloc(M * 4), *dict = malloc(M * 4),
	         *want = malloc(M * 4);
	for (size_t i = 0; i < M; i++)
		v[i] = skewed(60000) * 2654435761u; /* spread over 32 bits */
	ng_rank w = {0};
	long k = ng_rank_build(&w, v, M, M / 2, 0, idx, dict);
	size_t kw = expected_dict(v, M, want);
	assert_int_equal(k, kw);
	assert_memory_equal(dict, want, kw * 4);
	for (size_t i = 0; i < M; i++)
		assert_int_equal(dict[idx[i]], v[i]);
	size_t sk;
	assert_true(ng_rank_worth(&w, v, M, 16, 256, &sk));
	/* a table sized from the sample up front numbers the rows the same */
	uint32_t *idx2 = malloc(M * 4), *dict2 = malloc(M * 4);
	assert_int_equal(ng_rank_build(&w, v, M, M / 2, 12 * sk, idx2, dict2), k);
	assert_memory_equal(idx2, idx, M * 4);
	assert_memory_equal(dict2, dict, (size_t)k * 4);
	free(idx2), free(dict2);
	assert_false(ng_rank_worth(&w, v, M, 16, (size_t)kw, &sk));
	for (size_t i = 0; i < M; i++)
		v[i] = (uint32_t)(i % 300);
	assert_true(ng_rank_worth(&w, v, M, 1, 256, &sk));
	assert_int_equal(sk, 300); /* the sample's distinct values */
	assert_false(ng_rank_worth(&w, v, M, 1, 300, &sk));
	assert_false(ng_rank_worth(&w, v, M, 16, 256, &sk)); /* i % 300 every 16th: 75 values */
	/* nearly unique: 7 of 8 sampled values distinct, more than 3/4 */
	for (size_t i = 0; i < M; i++)
		v[i] = (uint32_t)(i % 8 ? i : 0);
	assert_false(ng_rank_worth(&w, v, M, 1, 256, &sk));
	for (size_t i = 0; i < M; i++) /* 5 of 8 distinct: under 3/4 */
		v[i] = (uint32_t)(i % 8 < 5 ? i : 0);
	assert_true(ng_rank_worth(&w, v, M, 1, 256, &sk));
	ng_rank_free(&w);
	free(v), free(idx), free(dict), free(want);
}

/* ---- segments ------------------------------------------------------------ */

/* The interned string "<prefix><v>". */
static uint32_t name_of(const char *prefix, uint32_t v)
{
	char s[64];
	snprintf(s, sizeof s, "%s%u", prefix, v);
	return ng_intern_cstr(s);
}

/* Rows whose src_addr and src_as are heavy-tailed (RANK), dst_addr and
 * dst_as nearly all distinct (V4, PLAIN), in_if of 12 values (too few
 * for RANK), sorted by flow_start; the AS and interface names, an
 * interface's provider (classification) and description are a function
 * of the numbers (MAP). */
static ng_flow *make_rows(uint32_t *order)
{
	ng_flow *r = calloc(N, sizeof *r);
	for (size_t i = 0; i < N; i++) {
		r[i].flow_start = T0 + rnd() % 3600000;
		r[i].flow_end = r[i].flow_start + rnd() % 60000;
		r[i].ip_version = 4;
		set_v4(r[i].src_addr, 0x0a000000u + skewed(20000) * 7919u);
		set_v4(r[i].dst_addr, (uint32_t)rnd());
		r[i].src_as = 64512 + skewed(3000) * 13;
		r[i].dst_as = (uint32_t)rnd();
		r[i].in_if = 1 + (uint32_t)(rnd() % 12);
		r[i].src_as_name = name_of("Network ", r[i].src_as);
		r[i].dst_as_name = name_of("Other ", r[i].dst_as);
		r[i].in_if_name = name_of("ge-0/0/", r[i].in_if);
		/* classification by interface (4 providers over 12 indexes),
		 * and a description of an out_if that has no name column */
		r[i].in_if_provider = name_of("Provider ", r[i].in_if % 4);
		r[i].out_if = 1 + (uint32_t)(i % 6);
		r[i].out_if_desc = name_of("Customer: c", r[i].out_if);
		r[i].src_port = (uint16_t)rnd();
		r[i].bytes = rnd() % 100000;
		order[i] = (uint32_t)i;
	}
	ng_seg_order_by_start(r, order, N);
	return r;
}

/* The segment image of rows in `order` (*len bytes; the caller's). */
static uint8_t *encode_image(const ng_flow *rows, const uint32_t *order, size_t *len)
{
	ng_seg_encoder *e = ng_seg_encoder_new(1);
	const uint8_t *p;
	char err[256];
	if (ng_seg_encode(e, rows, order, N, &p, len, err, sizeof err))
		fail_msg("encode: %s", err);
	uint8_t *img = malloc(*len);
	memcpy(img, p, *len);
	ng_seg_encoder_free(e);
	return img;
}

/* make_rows(), and the segment image they encode to (*len bytes): the
 * rows, their order and the image are the caller's to free. */
static uint8_t *rows_image(ng_flow **rows, uint32_t **order, size_t *len)
{
	*order = malloc(N * 4);
	*rows = make_rows(*order);
	return encode_image(*rows, *order, len);
}

static void write_file(const char *path, const void *p, size_t len)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, len, f), len);
	fclose(f);
}

/* img[0..len) in a new file named after the template `path` (XXXXXX). */
static void write_temp(char *path, const uint8_t *img, size_t len)
{
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	write_file(path, img, len);
}

static uint32_t get32le(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t get64le(const uint8_t *p)
{
	return get32le(p) | (uint64_t)get32le(p + 4) << 32;
}

/* Directory entry of column `name` in an image. */
static uint8_t *entry_of(uint8_t *img, const char *name)
{
	uint16_t ncols = (uint16_t)(img[10] | img[11] << 8);
	for (uint16_t c = 0; c < ncols; c++) {
		uint8_t *ent = img + NG_SEG_FIXED_SIZE + (size_t)c * NG_SEG_ENTRY_SIZE;
		if (!strcmp((const char *)ent, name))
			return ent;
	}
	fail_msg("no column %s", name);
	return NULL;
}

/* Frames of the column at `ent`: the dictionary, then (not MAP) one per
 * block. */
static size_t frames_of(const uint8_t *ent)
{
	return ent[34] == NG_ENC_MAP ? 1 : 1 + (N + NG_SEG_BLOCK_ROWS - 1) / NG_SEG_BLOCK_ROWS;
}

/* The decompressed frame `fr` of the column at `ent` into out[cap].
 * Returns its size. */
static size_t frame(const uint8_t *img, const uint8_t *ent, size_t fr, uint8_t *out, size_t cap)
{
	const uint8_t *col = img + get64le(ent + 40);
	size_t off = 4 * frames_of(ent);
	for (size_t j = 0; j < fr; j++)
		off += get32le(col + 4 * j);
	size_t z = ZSTD_decompress(out, cap, col + off, get32le(col + 4 * fr));
	assert_false(ZSTD_isError(z));
	return z;
}

/*
 * src_addr and src_as are RANK, the others keep their encodings; the
 * dictionary frame holds the distinct values (IPv4 as numbers) most
 * frequent first, as differences from the previous entry in 4 byte
 * planes; the first block's index frame holds each row's number in 4
 * planes; every row reads back as written.
 */
static void test_rank_segment(void **state)
{
	(void)state;
	uint32_t *order;
	ng_flow *rows;
	size_t len;
	uint8_t *img = rows_image(&rows, &order, &len);

	assert_int_equal(entry_of(img, "src_addr")[34], NG_ENC_RANK);
	assert_int_equal(entry_of(img, "src_as")[34], NG_ENC_RANK);
	assert_int_equal(entry_of(img, "dst_addr")[34], NG_ENC_V4);
	assert_int_equal(entry_of(img, "dst_as")[34], NG_ENC_PLAIN);
	assert_int_equal(entry_of(img, "in_if")[34], NG_ENC_PLAIN);

	static const char *const names[] = {"src_addr", "src_as"};
	uint32_t *v = malloc(N * 4), *want = malloc(N * 4);
	uint8_t *raw = malloc(N * 4);
	for (size_t c = 0; c < 2; c++) {
		for (size_t i = 0; i < N; i++) {
			const ng_flow *r = &rows[order[i]];
			v[i] = c == 0 ? (uint32_t)r->src_addr[12] << 24 |
			                    (uint32_t)r->src_addr[13] << 16 |
			                    (uint32_t)r->src_addr[14] << 8 | r->src_addr[15]
			              : r->src_as;
		}
		size_t k = expected_dict(v, N, want);
		const uint8_t *ent = entry_of(img, names[c]);
		assert_int_equal(get64le(ent + 56), (uint64_t)N * 4); /* D: the index frames */
		assert_int_equal(frame(img, ent, 0, raw, N * 4), k * 4);
		uint32_t prev = 0;
		for (size_t j = 0; j < k; j++) {
			uint32_t d = (uint32_t)raw[j] | (uint32_t)raw[k + j] << 8 |
			             (uint32_t)raw[2 * k + j] << 16 |
			             (uint32_t)raw[3 * k + j] << 24;
			prev += d;
			if (prev != want[j])
				fail_msg("%s entry %zu: %u, want %u", names[c], j, prev, want[j]);
		}
		const size_t B = NG_SEG_BLOCK_ROWS;
		assert_int_equal(frame(img, ent, 1, raw, N * 4), B * 4);
		for (size_t i = 0; i < B; i++) {
			uint32_t x = (uint32_t)raw[i] | (uint32_t)raw[B + i] << 8 |
			             (uint32_t)raw[2 * B + i] << 16 |
			             (uint32_t)raw[3 * B + i] << 24;
			assert_true(x < k);
			assert_int_equal(want[x], v[i]);
		}
	}

	char path[] = "/tmp/ng_test_rank_XXXXXX";
	write_temp(path, img, len);
	ng_seg_reader rd;
	ng_seg_reader_init(&rd);
	char err[256];
	assert_int_equal(ng_seg_open(&rd, path, err, sizeof err), 0);
	ng_flow *back = calloc(N, sizeof *back);
	uint8_t *colbuf = malloc((size_t)N * 16);
	assert_int_equal(ng_seg_read_rows(&rd, ng_colset_all(), back, colbuf, err, sizeof err), 0);
	for (size_t i = 0; i < N; i++)
		if (memcmp(&back[i], &rows[order[i]], sizeof back[i]))
			fail_msg("row %zu differs", i);
	ng_seg_reader_free(&rd);
	unlink(path);
	free(back), free(colbuf), free(v), free(want), free(raw), free(img), free(rows),
	    free(order);
}

/*
 * The image with frame `fr` of the column at entry `name` replaced by a
 * zstd frame of raw[0..rlen): the frame table, the column's stored size
 * and the later columns' offsets follow; the header is resealed.
 * Returns the new length.
 */
static size_t replace_frame(const uint8_t *img, size_t len, uint8_t *out, const char *name,
                            size_t fr, const void *raw, size_t rlen)
{
	memcpy(out, img, len);
	uint8_t *ent = entry_of(out, name);
	const uint64_t off = get64le(ent + 40), stored = get64le(ent + 48);
	const uint8_t *col = img + off;
	size_t at = 4 * frames_of(ent);
	for (size_t j = 0; j < fr; j++)
		at += get32le(col + 4 * j);
	const size_t old = get32le(col + 4 * fr);
	uint8_t *z = malloc(ZSTD_compressBound(rlen));
	size_t zl = ZSTD_compress(z, ZSTD_compressBound(rlen), raw, rlen, 1);
	assert_false(ZSTD_isError(zl));
	/* new column: table, frames before, the new frame, frames after */
	uint8_t *c = out + off;
	memcpy(c, col, at);
	c[4 * fr] = (uint8_t)zl, c[4 * fr + 1] = (uint8_t)(zl >> 8);
	c[4 * fr + 2] = (uint8_t)(zl >> 16), c[4 * fr + 3] = (uint8_t)(zl >> 24);
	memcpy(c + at, z, zl);
	memcpy(c + at + zl, col + at + old, stored - at - old);
	memcpy(c + stored - old + zl, img + off + stored, len - off - stored);
	const int64_t delta = (int64_t)zl - (int64_t)old;
	uint16_t ncols = (uint16_t)(out[10] | out[11] << 8);
	for (uint16_t k = 0; k < ncols; k++) {
		uint8_t *e2 = out + NG_SEG_FIXED_SIZE + (size_t)k * NG_SEG_ENTRY_SIZE;
		uint64_t o = get64le(e2 + 40), v = e2 == ent ? stored + (uint64_t)delta : o;
		if (e2 == ent) {
			for (int b = 0; b < 8; b++)
				e2[48 + b] = (uint8_t)(v >> (8 * b));
		} else if (o > off && get64le(e2 + 48)) {
			o += (uint64_t)delta;
			for (int b = 0; b < 8; b++)
				e2[40 + b] = (uint8_t)(o >> (8 * b));
		}
	}
	ng_seg_reseal(out);
	free(z);
	return len + (size_t)delta;
}

/* Opens the image as a file and reads field `f` whole: the error, or ""
 * when it read. */
static void read_image(const uint8_t *img, size_t len, const ng_field *f, char *err, size_t errlen)
{
	char path[] = "/tmp/ng_test_rank_XXXXXX";
	write_temp(path, img, len);
	ng_seg_reader rd;
	ng_seg_reader_init(&rd);
	err[0] = 0;
	uint8_t *out = malloc((size_t)N * 16);
	if (ng_seg_open(&rd, path, err, errlen) == 0 &&
	    ng_seg_read_column(&rd, f, out, err, errlen) == 0)
		err[0] = 0;
	free(out);
	ng_seg_reader_free(&rd);
	unlink(path);
}

/* A corrupt RANK column is an error naming it, never a wild read: an
 * index beyond the dictionary, a dictionary whose size is not whole
 * entries, one of more entries than rows; RANK on a 2-byte column. */
static void test_rank_corrupt(void **state)
{
	(void)state;
	uint32_t *order;
	ng_flow *rows;
	size_t len;
	uint8_t *img = rows_image(&rows, &order, &len), *bad = malloc(len + (8u << 20));
	const ng_field *src_as = &ng_fields[NG_F_SRC_AS];
	char err[256];
	read_image(img, len, src_as, err, sizeof err);
	assert_string_equal(err, "");

	const size_t B = NG_SEG_BLOCK_ROWS;
	uint8_t *raw = calloc((size_t)N * 4 + 8, 1);
	size_t k = frame(img, entry_of(img, "src_as"), 0, raw, N * 4) / 4;
	/* block 0, row 5: index K */
	frame(img, entry_of(img, "src_as"), 1, raw, N * 4);
	raw[5] = (uint8_t)k, raw[B + 5] = (uint8_t)(k >> 8), raw[2 * B + 5] = (uint8_t)(k >> 16);
	size_t bl = replace_frame(img, len, bad, "src_as", 1, raw, B * 4);
	read_image(bad, bl, src_as, err, sizeof err);
	assert_non_null(strstr(err, "src_as"));
	assert_non_null(strstr(err, "dictionary index"));

	/* a dictionary of 6 bytes */
	bl = replace_frame(img, len, bad, "src_as", 0, raw, 6);
	read_image(bad, bl, src_as, err, sizeof err);
	assert_non_null(strstr(err, "bad value dictionary"));
	/* a dictionary of more entries than rows */
	memset(raw, 0, (size_t)N * 4 + 8);
	bl = replace_frame(img, len, bad, "src_as", 0, raw, (size_t)N * 4 + 4);
	read_image(bad, bl, src_as, err, sizeof err);
	assert_non_null(strstr(err, "bad value dictionary"));

	/* RANK is for 4-byte integers and addresses only */
	memcpy(bad, img, len);
	entry_of(bad, "src_port")[34] = NG_ENC_RANK;
	ng_seg_reseal(bad);
	read_image(bad, len, &ng_fields[NG_F_SRC_PORT], err, sizeof err);
	assert_non_null(strstr(err, "unknown encoding"));

	free(raw), free(bad), free(img), free(rows), free(order);
}

/* ---- MAP ------------------------------------------------------------------ */

/* Directory index of the column at `ent`. */
static unsigned index_of(const uint8_t *img, const uint8_t *ent)
{
	return (unsigned)((size_t)(ent - img - NG_SEG_FIXED_SIZE) / NG_SEG_ENTRY_SIZE);
}

static uint32_t name_field(const ng_flow *r, enum ng_field_id f)
{
	switch (f) {
	case NG_F_SRC_AS_NAME: return r->src_as_name;
	case NG_F_DST_AS_NAME: return r->dst_as_name;
	case NG_F_IN_IF_PROVIDER: return r->in_if_provider;
	case NG_F_OUT_IF_DESC: return r->out_if_desc;
	default: return r->in_if_name;
	}
}

static uint32_t key_field(const ng_flow *r, enum ng_field_id f)
{
	switch (f) {
	case NG_F_SRC_AS_NAME: return r->src_as;
	case NG_F_DST_AS_NAME: return r->dst_as;
	case NG_F_OUT_IF_DESC: return r->out_if;
	default: return r->in_if;
	}
}

/* The name columns are MAP with their number's column as the key (src_as
 * through its RANK numbering, dst_as and in_if through the hash); the
 * dictionary frame holds the distinct keys ascending, then each key's
 * string; rows picked from a block read back as written; one row giving
 * an AS a second name makes the column DICT, which reads back too. */
static void test_map_segment(void **state)
{
	(void)state;
	uint32_t *order;
	ng_flow *rows;
	size_t len;
	uint8_t *img = rows_image(&rows, &order, &len);
	static const struct {
		enum ng_field_id f;
		const char *name, *key;
	} cols[] = {{NG_F_SRC_AS_NAME, "src_as_name", "src_as"},
	            {NG_F_DST_AS_NAME, "dst_as_name", "dst_as"},
	            {NG_F_IN_IF_NAME, "in_if_name", "in_if"},
	            {NG_F_IN_IF_PROVIDER, "in_if_provider", "in_if"},
	            {NG_F_OUT_IF_DESC, "out_if_desc", "out_if"}};
	const size_t NC = sizeof cols / sizeof cols[0];
	uint64_t *pairs = malloc(N * 8);
	uint8_t *raw = malloc((size_t)N * 300);
	for (size_t c = 0; c < NC; c++) {
		const uint8_t *ent = entry_of(img, cols[c].name);
		assert_int_equal(ent[34], NG_ENC_MAP);
		assert_int_equal(ent[36] | ent[37] << 8, index_of(img, entry_of(img, cols[c].key)));
		assert_int_equal(get64le(ent + 56), 0); /* no block frames */
		/* expected: (key, ID) pairs, sorted, unique */
		for (size_t i = 0; i < N; i++)
			pairs[i] = (uint64_t)key_field(&rows[i], cols[c].f) << 32 |
			           name_field(&rows[i], cols[c].f);
		qsort(pairs, N, 8, cmp_u64);
		size_t k = 0;
		for (size_t i = 0; i < N; i++)
			if (i == 0 || pairs[i] != pairs[k - 1])
				pairs[k++] = pairs[i];
		assert_int_equal(get32le(ent + 64), k);
		size_t dlen = frame(img, ent, 0, raw, (size_t)N * 300);
		assert_int_equal(get32le(ent + 68), dlen);
		const uint8_t *s = raw + 4 * k;
		for (size_t j = 0; j < k; j++) {
			assert_int_equal(get32le(raw + 4 * j), pairs[j] >> 32);
			const char *want = ng_str((uint32_t)pairs[j]);
			assert_int_equal(s[0], strlen(want));
			assert_memory_equal(s + 1, want, s[0]);
			s += 1 + s[0];
		}
		assert_ptr_equal(s, raw + dlen);
	}

	char path[] = "/tmp/ng_test_map_XXXXXX";
	write_temp(path, img, len);
	ng_seg_reader rd;
	ng_seg_reader_init(&rd);
	char err[256];
	assert_int_equal(ng_seg_open(&rd, path, err, sizeof err), 0);
	static const uint32_t sel[] = {0, 3, 7, 100, 4000};
	uint32_t ids[5];
	const size_t B = NG_SEG_BLOCK_ROWS, lo = 10;
	for (size_t c = 0; c < NC; c++) {
		assert_int_equal(ng_seg_read_block_rows(&rd, &ng_fields[cols[c].f], 1, lo, sel, 5,
		                                        ids, err, sizeof err),
		                 0);
		for (size_t m = 0; m < 5; m++)
			assert_int_equal(ids[m],
			                 name_field(&rows[order[B + lo + sel[m]]], cols[c].f));
	}
	ng_seg_reader_free(&rd);
	unlink(path);

	/* src_as of row 0 under a second name in another row: DICT */
	size_t other = 1;
	while (rows[order[other]].src_as != rows[order[0]].src_as)
		other++;
	rows[order[other]].src_as_name = ng_intern_cstr("renamed");
	free(img);
	img = encode_image(rows, order, &len);
	assert_int_equal(entry_of(img, "src_as_name")[34], NG_ENC_DICT);
	strcpy(path, "/tmp/ng_test_map_XXXXXX");
	write_temp(path, img, len);
	ng_seg_reader_init(&rd);
	assert_int_equal(ng_seg_open(&rd, path, err, sizeof err), 0);
	uint32_t *all = malloc(N * 4);
	assert_int_equal(
	    ng_seg_read_column(&rd, &ng_fields[NG_F_SRC_AS_NAME], all, err, sizeof err), 0);
	for (size_t i = 0; i < N; i++)
		assert_int_equal(all[i], rows[order[i]].src_as_name);
	ng_seg_reader_free(&rd);
	unlink(path);
	free(all), free(pairs), free(raw), free(img), free(rows), free(order);
}

/* A corrupt MAP column is an error naming it: keys out of order, a row's
 * key missing from the dictionary, no entries, a key column that is not
 * an integer. */
static void test_map_corrupt(void **state)
{
	(void)state;
	uint32_t *order;
	ng_flow *rows;
	size_t len;
	uint8_t *img = rows_image(&rows, &order, &len), *bad = malloc(len + (8u << 20));
	const ng_field *f = &ng_fields[NG_F_SRC_AS_NAME];
	char err[256];
	read_image(img, len, f, err, sizeof err);
	assert_string_equal(err, "");

	uint8_t *raw = malloc((size_t)N * 300), *ent = entry_of(img, "src_as_name");
	const size_t k = get32le(ent + 64), dlen = frame(img, ent, 0, raw, (size_t)N * 300);
	uint8_t key[4];
	/* the first two keys swapped */
	memcpy(key, raw, 4), memcpy(raw, raw + 4, 4), memcpy(raw + 4, key, 4);
	size_t bl = replace_frame(img, len, bad, "src_as_name", 0, raw, dlen);
	read_image(bad, bl, f, err, sizeof err);
	assert_non_null(strstr(err, "src_as_name"));
	assert_non_null(strstr(err, "does not ascend"));
	memcpy(raw + 4, raw, 4), memcpy(raw, key, 4);

	/* the last key one more: its rows' key is missing */
	const uint32_t last = get32le(raw + 4 * (k - 1));
	raw[4 * (k - 1)] = (uint8_t)(last + 1), raw[4 * (k - 1) + 1] = (uint8_t)((last + 1) >> 8);
	raw[4 * (k - 1) + 2] = (uint8_t)((last + 1) >> 16);
	raw[4 * (k - 1) + 3] = (uint8_t)((last + 1) >> 24);
	bl = replace_frame(img, len, bad, "src_as_name", 0, raw, dlen);
	read_image(bad, bl, f, err, sizeof err);
	char want[64];
	snprintf(want, sizeof want, "key %u not in its dictionary", last);
	assert_non_null(strstr(err, want));

	/* no entries */
	memcpy(bad, img, len);
	memset(entry_of(bad, "src_as_name") + 64, 0, 4);
	ng_seg_reseal(bad);
	read_image(bad, len, f, err, sizeof err);
	assert_non_null(strstr(err, "bad key dictionary"));

	/* keyed by a string column */
	memcpy(bad, img, len);
	const unsigned sc = index_of(bad, entry_of(bad, "exporter_name"));
	entry_of(bad, "src_as_name")[36] = (uint8_t)sc;
	entry_of(bad, "src_as_name")[37] = (uint8_t)(sc >> 8);
	ng_seg_reseal(bad);
	read_image(bad, len, f, err, sizeof err);
	assert_non_null(strstr(err, "bad key column"));

	free(raw), free(bad), free(img), free(rows), free(order);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rank_build_order), cmocka_unit_test(test_rank_build_large),
	    cmocka_unit_test(test_rank_segment),     cmocka_unit_test(test_rank_corrupt),
	    cmocka_unit_test(test_map_segment),      cmocka_unit_test(test_map_corrupt),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
