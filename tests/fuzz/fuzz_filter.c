/*
 * fuzz_filter.c — libFuzzer target for the filter compiler (query/filter.h):
 * the text of `nagare query FILTER`, of a filter file and of the HTTP
 * API's filter parameter.
 *
 * The input, up to its first NUL, is parsed as a filter.  A text that
 * does not parse must say why (a message) and where: a column within the
 * text (0 to its length, the length being "at the end").  Parsing again
 * without a message buffer must fail at the same column.
 *
 * A text that parses is evaluated over a fixed batch of 32 rows (every
 * field set, addresses IPv4 and IPv6, interned strings), and the answers
 * are checked against each other, aborting on any difference:
 *
 *   - the batch evaluated as values (ng_filter_eval) and row by row
 *     (ng_filter_match_flow);
 *   - the batch with every column of ng_filter_code_columns() given as
 *     dictionary codes (ng_batch_codes), twice with one context (the
 *     answers cached per dictionary) and once with the dictionary in the
 *     reverse order under a new stamp (the cache must not be reused);
 *   - a batch of the first 5 rows before the whole batch in one context
 *     (its scratch vectors grow);
 *   - zone-map pruning: for the zone map of the whole batch, of each half
 *     and of each row alone, ng_filter_may_match must not be false where
 *     a row of those rows passes.
 *
 * Leaks are the sanitizer's to report.  No seeds in the tree: run.sh
 * passes the keyword dictionary fuzz_filter.dict, from which libFuzzer
 * builds filters quickly enough.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/field.h"
#include "core/strtab.h"
#include "query/filter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { N = 32 };

static ng_flow rows[N];
static uint8_t cols[NG_FIELD_COUNT][N * 16]; /* column f: rows' values of f */
static bool ready;

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* The fixed rows: small values that filters name (ports 0..99, protocols
 * 1/6/17/58, AS 0..2, ...) mixed with large ones, 3 of 4 addresses
 * IPv4-mapped, strings of a few words. */
static void make_rows(void)
{
	static const char *words[] = {"",  "JP",    "US",   "Google LLC", "eu",
	                              "x", "Tokyo", "http", "lan",        "office"};
	for (int i = 0; i < N; i++) {
		uint8_t *r = (uint8_t *)&rows[i];
		for (int f = 0; f < NG_FIELD_COUNT; f++) {
			const ng_field *fd = &ng_fields[f];
			uint8_t *p = r + fd->offset;
			if (fd->type == NG_FT_ADDR) {
				memset(p, 0, 16);
				if (rnd() % 4) {
					p[10] = p[11] = 0xff;
					p[12] = rnd() % 2 ? 10 : 192;
					p[13] = (uint8_t)(rnd() % 3);
					p[14] = (uint8_t)(rnd() % 3);
					p[15] = (uint8_t)rnd();
				} else {
					p[0] = 0x20, p[1] = 0x01, p[2] = 0x0d, p[3] = 0xb8;
					p[15] = (uint8_t)rnd();
				}
			} else if (fd->type == NG_FT_MAC) {
				for (int j = 0; j < 6; j++)
					p[j] = (uint8_t)(rnd() % 3);
			} else if (fd->type == NG_FT_STR) {
				uint32_t id = ng_intern_cstr(words[rnd() % 10]);
				memcpy(p, &id, 4);
			} else {
				uint64_t v = rnd();
				v = rnd() % 4 == 0 ? v : rnd() % 2 ? v % 3 : v % 100;
				memcpy(p, &v, fd->size); /* little-endian: the low bytes */
			}
		}
		ng_flow *fl = &rows[i];
		fl->flow_end = fl->flow_start + (i % 5 ? rnd() % 10000 : 0);
		fl->protocol = (uint8_t)(i % 7 == 0 ? 1 : i % 11 == 0 ? 58 : i % 3 ? 6 : 17);
		fl->direction = (uint8_t)(rnd() % 2);
	}
	for (int f = 0; f < NG_FIELD_COUNT; f++)
		for (int i = 0; i < N; i++)
			memcpy(cols[f] + i * ng_fields[f].size,
			       (const uint8_t *)&rows[i] + ng_fields[f].offset, ng_fields[f].size);
}

/* The batch of rows [0, n) as values. */
static void values(ng_column_batch *b, size_t n)
{
	memset(b, 0, sizeof *b);
	b->n = n;
	for (int f = 0; f < NG_FIELD_COUNT; f++)
		b->col[f] = cols[f];
}

/* Dictionary codes for the columns of `mask`: each distinct value once,
 * in order of first appearance or (reverse) the opposite order. */
static void codes(ng_batch_codes *bc, uint8_t dict[][N * 16], uint32_t code[][N], ng_colset mask,
                  bool reverse, uint64_t stamp)
{
	memset(bc, 0, sizeof *bc);
	for (int f = 0; f < NG_FIELD_COUNT; f++) {
		if (!ng_colset_has(mask, f))
			continue;
		const unsigned sz = ng_fields[f].size;
		uint32_t k = 0;
		for (int i = 0; i < N; i++) {
			uint32_t j = 0;
			while (j < k && memcmp(dict[f] + j * sz, cols[f] + i * sz, sz))
				j++;
			if (j == k)
				memcpy(dict[f] + k++ * sz, cols[f] + i * sz, sz);
			code[f][i] = j;
		}
		if (reverse) {
			uint8_t tmp[16];
			for (uint32_t a = 0, z = k - 1; a < z; a++, z--) {
				memcpy(tmp, dict[f] + a * sz, sz);
				memcpy(dict[f] + a * sz, dict[f] + z * sz, sz);
				memcpy(dict[f] + z * sz, tmp, sz);
			}
			for (int i = 0; i < N; i++)
				code[f][i] = k - 1 - code[f][i];
		}
		bc->code[f] = code[f];
		bc->dict[f] = dict[f];
		bc->k[f] = k;
		bc->stamp[f] = stamp;
	}
}

/* The exact zone map of rows [a, b): min/max of every integer column,
 * and of every address column whose rows are all IPv4 (as numbers). */
static void zone_map(ng_zone_map *z, int a, int b)
{
	static const uint8_t v4pre[12] = {[10] = 0xff, [11] = 0xff};
	memset(z, 0, sizeof *z);
	z->rows = (uint64_t)(b - a);
	for (int f = 0; f < NG_FIELD_COUNT; f++) {
		const ng_field *fd = &ng_fields[f];
		if (fd->type == NG_FT_MAC || fd->type == NG_FT_STR)
			continue;
		uint64_t lo = UINT64_MAX, hi = 0;
		bool v4 = true;
		for (int i = a; i < b; i++) {
			uint64_t v;
			if (fd->type == NG_FT_ADDR) {
				const uint8_t *p = ng_field_ptr(fd, &rows[i]);
				v4 = v4 && !memcmp(p, v4pre, 12);
				v = (uint64_t)p[12] << 24 | (uint64_t)p[13] << 16 |
				    (uint64_t)p[14] << 8 | p[15];
			} else {
				v = ng_field_get_uint(fd, &rows[i]);
			}
			lo = v < lo ? v : lo;
			hi = v > hi ? v : hi;
		}
		z->min[f] = lo;
		z->max[f] = hi;
		if (fd->type == NG_FT_ADDR)
			z->v4[f] = v4;
		else
			z->known[f] = true;
	}
}

/* Aborts unless some row of [a, b) passing means the zone map of [a, b)
 * may match. */
static void check_prune(const ng_filter *f, const uint8_t *match, int a, int b)
{
	bool any = false;
	for (int i = a; i < b; i++)
		any = any || match[i];
	ng_zone_map z;
	zone_map(&z, a, b);
	if (any && !ng_filter_may_match(f, &z))
		abort();
}

static void check_parsed(ng_filter *f)
{
	static uint8_t dict[NG_FIELD_COUNT][N * 16];
	static uint32_t code[NG_FIELD_COUNT][N];
	const ng_colset cc = ng_filter_code_columns(f);
	if (!ng_colset_subset(cc, ng_filter_columns(f)))
		abort();
	ng_column_batch b;
	uint8_t match[N], m2[N];
	values(&b, N);
	size_t n = ng_filter_eval(f, &b, match);
	if (n == (size_t)-1)
		return; /* out of memory */
	size_t cnt = 0;
	for (int i = 0; i < N; i++) {
		cnt += match[i];
		if (match[i] > 1 || match[i] != ng_filter_match_flow(f, &rows[i]))
			abort();
	}
	if (cnt != n)
		abort();

	ng_filter_ctx *c = ng_filter_ctx_new(f);
	if (!c)
		return;
	values(&b, 5);
	if (ng_filter_eval_ctx(f, c, &b, m2) != (size_t)-1 && memcmp(m2, match, 5))
		abort();
	ng_batch_codes bc;
	values(&b, N);
	b.codes = &bc;
	for (int round = 0; round < 3; round++) {
		codes(&bc, dict, code, cc, round == 2, round == 2 ? 2 : 1);
		size_t r = ng_filter_eval_ctx(f, c, &b, m2);
		if (r != (size_t)-1 && (r != n || memcmp(m2, match, N)))
			abort();
	}
	ng_filter_ctx_free(c);

	check_prune(f, match, 0, N);
	check_prune(f, match, 0, N / 2);
	check_prune(f, match, N / 2, N);
	for (int i = 0; i < N; i++)
		check_prune(f, match, i, i + 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!ready) {
		make_rows();
		ready = true;
	}
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	const size_t len = strlen(text);

	char err[512];
	size_t col = SIZE_MAX;
	err[0] = 0;
	ng_filter *f = ng_filter_parse(text, err, sizeof err, &col);
	size_t col2 = SIZE_MAX;
	ng_filter *g = ng_filter_parse(text, NULL, 0, &col2);
	if (!f != !g)
		abort();
	if (!f) {
		if (!err[0] || col > len || col2 != col)
			abort();
	} else {
		check_parsed(f);
	}
	ng_filter_free(f);
	ng_filter_free(g);
	free(text);
	return 0;
}
