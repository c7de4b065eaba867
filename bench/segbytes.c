/*
 * segbytes.c — the segment encoder's output for a fixed set of rows, so
 * that two builds can be shown to write the same bytes (a refactor of the
 * encoder must not change a segment).
 *
 * Writes to stdout, one after the other, the images of a few segments
 * encoded from pseudo-random rows (a fixed seed): sizes from 1 row to 5
 * blocks, zstd levels 1 (the writer's) and 3 (compaction's, rollups'), the
 * whole field table and a subset of it, from records and (as the writer
 * gives them) from columns.  The rows are shaped so that every
 * encoding occurs: CONST (unset fields), PLAIN (ports, MACs, mixed v4/v6
 * addresses), DELTA (flow_start), DIFF (flow_end, time_received,
 * bytes_raw), V4 (nearly unique IPv4 addresses), DICT (cities, one-string
 * columns), RANK (heavy-tailed IPv4 addresses and AS numbers) and MAP (AS
 * names by AS number), plus a MAP that fails (a key with two names) and
 * stays DICT.  On stderr: each image's size and its columns' encodings.
 *
 * Not built by CMake: bench/segbytes compiles it against a source tree
 * and a build of it (only the public interface of store/segment.h is
 * used, so an older tree compiles too) and prints the SHA-256 of stdout.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/field.h"
#include "core/flow.h"
#include "core/strtab.h"
#include "store/segment.h"

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

/* xorshift64*: the same sequence on every build */
static uint64_t next(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dULL;
}

/* A heavy-tailed pick below 2^bits: log-uniform (a range of 2^k for k
 * uniform below bits), so that a few values carry many rows. */
static uint32_t skewed(unsigned bits)
{
	unsigned k = (unsigned)(next() % bits);
	return (uint32_t)(next() & ((UINT64_C(1) << k) - 1));
}

static void v4(uint8_t a[16], uint32_t ip)
{
	memset(a, 0, 10);
	a[10] = a[11] = 0xff;
	a[12] = (uint8_t)(ip >> 24), a[13] = (uint8_t)(ip >> 16);
	a[14] = (uint8_t)(ip >> 8), a[15] = (uint8_t)ip;
}

static uint32_t str_of(const char *prefix, uint32_t i)
{
	char s[64];
	int len = snprintf(s, sizeof s, "%s %u", prefix, i);
	return ng_intern(s, (size_t)len);
}

/* Fills rows[0..n) (flow_start ascending); `variant` varies them. */
static void make_rows(ng_flow *rows, size_t n, int variant)
{
	memset(rows, 0, n * sizeof *rows);
	uint64_t t = 1796040000000ULL + (uint64_t)variant * 7919;
	for (size_t i = 0; i < n; i++) {
		ng_flow *f = &rows[i];
		t += next() % 40;
		f->flow_start = t;
		f->flow_end = t + next() % 60000;
		f->time_received = f->flow_end + 1000 + next() % 3;
		f->packets = 1 + next() % 100;
		f->bytes = f->packets * (40 + next() % 1460);
		f->bytes_raw = f->bytes;
		f->packets_raw = variant == 2 ? f->packets / 2 : f->packets;
		v4(f->exporter, 0xc0000201u + (uint32_t)(next() % 3));
		v4(f->src_addr, 0x0a000000u + skewed(16)); /* RANK */
		v4(f->dst_addr, (uint32_t)next());         /* nearly unique: V4 */
		if (next() % 5 == 0) {                     /* mixed v4/v6: PLAIN */
			f->next_hop[0] = 0x20, f->next_hop[1] = 0x01;
			f->next_hop[15] = (uint8_t)next();
		} else {
			v4(f->next_hop, 0x0a0000fe);
		}
		f->observation_domain = 7;
		f->sampling_rate = 1;
		f->in_if = 1 + (uint32_t)(next() % 4);
		f->out_if = 1 + (uint32_t)(next() % 4);
		f->src_as = 64512 + skewed(12); /* RANK (u32) */
		f->dst_as = 64512 + (uint32_t)(next() % 50);
		f->src_port = (uint16_t)(1024 + next() % 60000);
		f->dst_port = (uint16_t)(next() % 2 ? 443 : 53);
		f->src_mac[0] = 2, f->src_mac[5] = (uint8_t)(next() % 7);
		f->protocol = next() % 3 ? 6 : 17;
		f->tcp_flags = (uint8_t)next();
		f->ip_version = 4;
		f->flow_version = 10;
		f->src_country = str_of("country", (uint32_t)(next() % 20));
		f->src_city = str_of("city", (uint32_t)(next() % 5000)); /* DICT */
		f->service = str_of("svc", f->dst_port);
		f->exporter_name = str_of("router", 1);   /* DICT of one string */
		f->src_as_name = str_of("AS", f->src_as); /* MAP on a RANK key */
		/* MAP on a hashed key; a second name for one key in variant 1:
		 * DICT */
		f->dst_as_name = str_of(variant == 1 && i == n / 2 ? "other AS" : "AS", f->dst_as);
		f->in_if_name = str_of("if", f->in_if);
	}
}

/* Prints the encodings of image img[0..len) of n rows to stderr.
 * Returns 0 or 1 when it does not parse. */
static int report(const char *what, size_t n, const uint8_t *img, size_t len)
{
	char err[256];
	ng_seg_header h;
	if (ng_seg_parse_header(img, len, len, &h, err, sizeof err)) {
		fprintf(stderr, "%s: %s\n", what, err);
		return 1;
	}
	unsigned count[8] = {0};
	for (uint32_t i = 0; i < h.ncols; i++)
		count[h.cols[i].encoding & 7]++;
	fprintf(stderr,
	        "%-28s %8zu rows %9zu bytes  CONST %u PLAIN %u DELTA %u V4 %u DIFF %u "
	        "DICT %u RANK %u MAP %u\n",
	        what, n, len, count[0], count[1], count[2], count[3], count[4], count[5], count[6],
	        count[7]);
	free(h.cols);
	return 0;
}

/* Encodes rows[0..n) with columns fields[0..nfields) and writes the image
 * (ng_seg_encode_fields).  Returns 0 or 1 on failure. */
static int emit(ng_seg_encoder *e, const char *what, const ng_field *fields, size_t nfields,
                const ng_flow *rows, size_t n)
{
	uint32_t *order = malloc(n * sizeof *order);
	const uint8_t *img;
	size_t len;
	char err[256];
	if (!order)
		return 1;
	ng_seg_order_by_start(rows, order, n);
	int rc =
	    ng_seg_encode_fields(e, fields, nfields, rows, order, n, &img, &len, err, sizeof err);
	free(order);
	if (rc) {
		fprintf(stderr, "%s: %s\n", what, err);
		return 1;
	}
	fwrite(img, 1, len, stdout);
	return report(what, n, img, len);
}

/* As the writer does: the rows as columns, NULL for a column no row sets
 * (ng_seg_encode_cols).  Returns 0 or 1 on failure. */
static int emit_cols(ng_seg_encoder *e, const char *what, const ng_flow *rows, size_t n)
{
	uint32_t *order = malloc(n * sizeof *order);
	uint8_t *buf = malloc(n * sizeof *rows);
	const uint8_t *cols[NG_FIELD_COUNT], *img;
	size_t len, at = 0;
	char err[256];
	if (!order || !buf)
		return 1;
	ng_seg_order_by_start(rows, order, n);
	for (size_t f = 0; f < NG_FIELD_COUNT; f++) {
		const ng_field *fd = &ng_fields[f];
		uint8_t *col = buf + at, any = 0;
		for (size_t i = 0; i < n; i++) {
			memcpy(col + i * fd->size, (const uint8_t *)&rows[order[i]] + fd->offset,
			       fd->size);
			for (size_t k = 0; k < fd->size; k++)
				any |= col[i * fd->size + k];
		}
		cols[f] = any ? col : NULL;
		at += n * fd->size;
	}
	int rc =
	    ng_seg_encode_cols(e, ng_fields, NG_FIELD_COUNT, cols, n, &img, &len, err, sizeof err);
	free(order);
	if (rc) {
		free(buf);
		fprintf(stderr, "%s: %s\n", what, err);
		return 1;
	}
	fwrite(img, 1, len, stdout);
	rc = report(what, n, img, len);
	free(buf);
	return rc;
}

int main(void)
{
	static const size_t sizes[] = {1, 777, 20000, 70001};
	const size_t max = 70001;
	ng_flow *rows = malloc(max * sizeof *rows);
	ng_field sub[8];
	size_t nsub = 0;
	static const enum ng_field_id pick[] = {NG_F_FLOW_START, NG_F_FLOW_END, NG_F_BYTES,
	                                        NG_F_SRC_ADDR,   NG_F_SRC_AS,   NG_F_SRC_AS_NAME,
	                                        NG_F_PROTOCOL};
	for (size_t i = 0; i < sizeof pick / sizeof pick[0]; i++)
		for (size_t f = 0; f < NG_FIELD_COUNT; f++)
			if (ng_fields[f].id == pick[i])
				sub[nsub++] = ng_fields[f];
	int bad = 0;
	for (int level = 1; level <= 3; level += 2) {
		ng_seg_encoder *e = ng_seg_encoder_new(level);
		if (!rows || !e)
			return 1;
		for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
			for (int variant = 0; variant < 3; variant++) {
				char what[64];
				make_rows(rows, sizes[s], variant);
				snprintf(what, sizeof what, "level %d variant %d all", level,
				         variant);
				bad |= emit(e, what, ng_fields, NG_FIELD_COUNT, rows, sizes[s]);
				snprintf(what, sizeof what, "level %d variant %d subset", level,
				         variant);
				bad |= emit(e, what, sub, nsub, rows, sizes[s]);
				snprintf(what, sizeof what, "level %d variant %d columns", level,
				         variant);
				bad |= emit_cols(e, what, rows, sizes[s]);
			}
		ng_seg_encoder_free(e);
	}
	free(rows);
	return bad;
}
