/*
 * test_store_strings.c — string columns (NG_FT_STR) in a segment: a
 * dictionary of the distinct strings plus per-row indexes; the reader
 * interns the dictionary back into process-wide IDs.
 *
 * The columns are test columns laid over u32 fields of ng_flow (written
 * with ng_seg_encode_fields), so the test does not depend on which string
 * fields the table holds.  The reference is the strings put in.
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
#include "store/segment.h"
#include "test_rng.h"

#define T0 UINT64_C(1764460800000)

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
	return ts_xorshift64(&rng);
}

/* flow_start, flow_end, and three string columns over src_as, dst_as and
 * in_if: varied, constant non-empty, always empty. */
static const ng_field table[] = {
    {NG_F_FLOW_START, "flow_start", NULL, 0, NG_FT_TIME, offsetof(ng_flow, flow_start), 8, ""},
    {NG_F_FLOW_END, "flow_end", NULL, 0, NG_FT_TIME, offsetof(ng_flow, flow_end), 8, ""},
    {NG_F_SRC_AS, "t_name", NULL, 0, NG_FT_STR, offsetof(ng_flow, src_as), 4, ""},
    {NG_F_DST_AS, "t_country", NULL, 0, NG_FT_STR, offsetof(ng_flow, dst_as), 4, ""},
    {NG_F_IN_IF, "t_empty", NULL, 0, NG_FT_STR, offsetof(ng_flow, in_if), 4, ""},
};
#define NT (sizeof table / sizeof table[0])

/* A random printable string of 1..255 bytes. */
static size_t random_text(char *buf)
{
	size_t len = 1 + rnd() % 255;
	for (size_t i = 0; i < len; i++)
		buf[i] = (char)('!' + rnd() % 90);
	return len;
}

static void write_file(const char *path, const uint8_t *img, size_t len)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(img, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void test_string_round_trip(void **state)
{
	(void)state;
	enum { N = 40000, DISTINCT = 700 }; /* three blocks */
	static char texts[DISTINCT][256];
	static uint32_t ids[DISTINCT];
	for (size_t i = 0; i < DISTINCT; i++) {
		size_t len = i == 0 ? 0 : random_text(texts[i]);
		texts[i][len] = 0;
		ids[i] = ng_intern(texts[i], len);
	}
	ng_flow *rows = calloc(N, sizeof *rows);
	uint32_t jp = ng_intern_cstr("JP");
	for (size_t i = 0; i < N; i++) {
		rows[i].flow_start = T0 + i;
		rows[i].flow_end = T0 + i + 10;
		rows[i].src_as = ids[rnd() % DISTINCT]; /* includes "" */
		rows[i].dst_as = jp;
		rows[i].in_if = 0;
	}
	ng_seg_encoder *e = ng_seg_encoder_new(1);
	const uint8_t *img;
	size_t len;
	char err[256];
	if (ng_seg_encode_fields(e, table, NT, rows, NULL, N, &img, &len, err, sizeof err))
		fail_msg("encode: %s", err);
	/* the file holds the strings themselves, not this process's IDs:
	 * decompress t_name's dictionary frame (the first after its frame
	 * table of 1 + 3 entries) and find a string there */
	const uint8_t *ent = img + NG_SEG_FIXED_SIZE + 2 * NG_SEG_ENTRY_SIZE;
	uint64_t off;
	uint32_t fsz, dlen;
	memcpy(&off, ent + 40, 8);
	memcpy(&fsz, img + off, 4);
	memcpy(&dlen, ent + 68, 4);
	char *dict = malloc(dlen);
	assert_int_equal(ZSTD_decompress(dict, dlen, img + off + 4 * 4, fsz), dlen);
	assert_non_null(memmem(dict, dlen, texts[7], strlen(texts[7])));
	free(dict);

	char path[] = "/tmp/ng_test_strings_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	write_file(path, img, len);

	ng_seg_reader r;
	ng_seg_reader_init(&r);
	assert_int_equal(ng_seg_open(&r, path, err, sizeof err), 0);
	int cn = ng_seg_find_column(&r, "t_name"), cc = ng_seg_find_column(&r, "t_country"),
	    ce = ng_seg_find_column(&r, "t_empty");
	assert_true(cn >= 0 && cc >= 0 && ce >= 0);
	assert_int_equal(r.h.cols[cn].encoding, NG_ENC_DICT);
	assert_int_equal(r.h.cols[cc].encoding, NG_ENC_DICT);
	assert_int_equal(r.h.cols[cc].decoded, 0); /* one entry: no index frames */
	assert_int_equal(r.h.cols[ce].encoding, NG_ENC_CONST);
	uint32_t got[NG_SEG_BLOCK_ROWS];
	for (int c = 0; c < 3; c++) {
		int idx = c == 0 ? cn : c == 1 ? cc : ce;
		size_t row = 0;
		for (size_t b = 0; b < ng_seg_blocks(&r); b++) {
			assert_int_equal(ng_seg_read_entry(&r, (uint32_t)idx, &table[2 + c], b, got,
			                                   err, sizeof err),
			                 0);
			for (size_t i = 0; i < ng_seg_block_rows(&r, b); i++, row++) {
				uint32_t want = c == 0 ? rows[row].src_as : c == 1 ? jp : 0;
				if (strcmp(ng_str(got[i]), ng_str(want)))
					fail_msg("column %d row %zu: '%s', want '%s'", c, row,
					         ng_str(got[i]), ng_str(want));
			}
		}
		assert_int_equal(row, N);
	}
	ng_seg_reader_free(&r);

	/* a corrupt dictionary index is an error, not a wild read: rewrite
	 * t_name's entry count as 1 so that every index ≥ 1 is out of range */
	uint8_t *bad = malloc(len);
	memcpy(bad, img, len);
	uint8_t *bent = bad + NG_SEG_FIXED_SIZE + (size_t)cn * NG_SEG_ENTRY_SIZE;
	uint32_t one = 1;
	memcpy(bent + 64, &one, 4);
	ng_seg_reseal(bad);
	write_file(path, bad, len);
	ng_seg_reader_init(&r);
	if (ng_seg_open(&r, path, err, sizeof err) == 0) {
		assert_int_not_equal(
		    ng_seg_read_entry(&r, (uint32_t)cn, &table[2], 0, got, err, sizeof err), 0);
	}
	ng_seg_reader_free(&r);
	free(bad);
	unlink(path);
	ng_seg_encoder_free(e);
	free(rows);
}

/*
 * The index frames hold each row's entry as a u32 split into byte planes
 * (segment.c, DICT): for columns of 3, 700 and 70000 distinct strings
 * (one, two and three planes in use) the first block's frame decompresses
 * to plane k byte i = byte k of row i's entry, entries numbered in order
 * of first use (computed here from the input), the unused planes zero;
 * and every row reads back as its string.
 */
static void test_index_planes(void **state)
{
	(void)state;
	enum { N = 100000, B = NG_SEG_BLOCK_ROWS };
	static const size_t distinct[] = {3, 700, 70000};
	uint32_t *entry = malloc(N * sizeof *entry); /* row → expected entry */
	uint32_t *first = calloc(N, sizeof *first);  /* string index → entry + 1 */
	ng_flow *rows = calloc(N, sizeof *rows);
	uint8_t *plane = malloc(B * 4);
	assert_true(entry && first && rows && plane);
	for (size_t c = 0; c < 3; c++) {
		const size_t k = distinct[c];
		uint32_t *ids = malloc(k * sizeof *ids);
		assert_non_null(ids);
		for (size_t j = 0; j < k; j++) {
			char txt[48];
			int len = snprintf(txt, sizeof txt, "planes-%zu-%zu", c, j);
			ids[j] = ng_intern(txt, (size_t)len);
			assert_int_not_equal(ids[j], 0);
		}
		memset(first, 0, N * sizeof *first);
		uint32_t next = 0;
		for (size_t i = 0; i < N; i++) {
			/* every string used (the first k rows), then at random */
			size_t j = i < k ? (i * 7919) % k : rnd() % k;
			rows[i].flow_start = T0 + i;
			rows[i].flow_end = T0 + i;
			rows[i].src_as = ids[j];
			if (!first[j])
				first[j] = ++next;
			entry[i] = first[j] - 1;
		}
		assert_int_equal(next, k);
		ng_seg_encoder *e = ng_seg_encoder_new(1);
		assert_non_null(e);
		const uint8_t *img;
		size_t len;
		char err[256];
		if (ng_seg_encode_fields(e, table, NT, rows, NULL, N, &img, &len, err, sizeof err))
			fail_msg("encode: %s", err);
		const uint8_t *ent = img + NG_SEG_FIXED_SIZE + 2 * NG_SEG_ENTRY_SIZE;
		assert_int_equal(ent[34], NG_ENC_DICT);
		uint32_t kk;
		memcpy(&kk, ent + 64, 4);
		assert_int_equal(kk, k);
		/* frame table: dictionary, then one frame per block */
		uint64_t off;
		uint32_t fdict, fblock;
		memcpy(&off, ent + 40, 8);
		memcpy(&fdict, img + off, 4);
		memcpy(&fblock, img + off + 4, 4);
		const size_t nb = (N + B - 1) / B;
		const uint8_t *frame = img + off + 4 * (1 + nb) + fdict;
		assert_int_equal(ZSTD_decompress(plane, B * 4, frame, fblock), B * 4);
		for (size_t i = 0; i < B; i++)
			for (unsigned p = 0; p < 4; p++)
				if (plane[p * B + i] != (uint8_t)(entry[i] >> (8 * p)))
					fail_msg("%zu strings: row %zu plane %u holds %u, want %u",
					         k, i, p, plane[p * B + i],
					         (uint8_t)(entry[i] >> (8 * p)));

		char path[] = "/tmp/ng_test_planes_XXXXXX";
		int fd = mkstemp(path);
		assert_true(fd >= 0);
		close(fd);
		write_file(path, img, len);
		ng_seg_reader r;
		ng_seg_reader_init(&r);
		assert_int_equal(ng_seg_open(&r, path, err, sizeof err), 0);
		int cn = ng_seg_find_column(&r, "t_name");
		assert_true(cn >= 0);
		uint32_t *got = malloc(B * sizeof *got);
		assert_non_null(got);
		size_t row = 0;
		for (size_t b = 0; b < ng_seg_blocks(&r); b++) {
			assert_int_equal(
			    ng_seg_read_entry(&r, (uint32_t)cn, &table[2], b, got, err, sizeof err),
			    0);
			for (size_t i = 0; i < ng_seg_block_rows(&r, b); i++, row++)
				if (got[i] != rows[row].src_as) /* same process: same IDs */
					fail_msg("%zu strings: row %zu reads '%s', want '%s'", k,
					         row, ng_str(got[i]), ng_str(rows[row].src_as));
		}
		assert_int_equal(row, N);
		free(got);
		ng_seg_reader_free(&r);
		unlink(path);
		ng_seg_encoder_free(e);
		free(ids);
	}
	free(entry);
	free(first);
	free(rows);
	free(plane);
}

/*
 * ng_str_len (a dense array of length bytes, core/strtab.c) agrees with
 * the string's own length for 10 000 strings of 1..255 bytes, across
 * several of the table's 4096-ID chunks; 0 for ID 0, an ID not given out
 * yet and one past the table; a string longer than NG_STR_MAX is cut to
 * it in both.  ng_str_prefetch of any of them is harmless.
 */
static void test_strtab_lengths(void **state)
{
	(void)state;
	enum { N = 10000 };
	static uint32_t id[N];
	static size_t len[N];
	char buf[300];
	for (size_t i = 0; i < N; i++) {
		len[i] = random_text(buf);
		snprintf(buf, 9, "%08zx", i); /* distinct: the first 8 bytes */
		if (len[i] < 8)
			len[i] = 8;
		buf[8] = len[i] > 8 ? '#' : buf[8];
		id[i] = ng_intern(buf, len[i]);
		assert_true(id[i] != 0);
	}
	for (size_t i = 0; i < N; i++) {
		ng_str_prefetch(id[i]);
		assert_int_equal(ng_str_len(id[i]), len[i]);
		assert_int_equal(strlen(ng_str(id[i])), len[i]);
	}
	assert_int_equal(ng_str_len(0), 0);
	assert_int_equal(ng_str_len(ng_strtab_count()), 0);
	assert_int_equal(ng_str_len(ng_strtab_count() + 5000), 0);
	assert_int_equal(ng_str_len(UINT32_MAX), 0);
	ng_str_prefetch(0);
	ng_str_prefetch(UINT32_MAX);
	memset(buf, 'x', sizeof buf);
	uint32_t big = ng_intern(buf, sizeof buf);
	assert_int_equal(ng_str_len(big), NG_STR_MAX);
	assert_int_equal(strlen(ng_str(big)), NG_STR_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_string_round_trip),
	    cmocka_unit_test(test_index_planes),
	    cmocka_unit_test(test_strtab_lengths),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
