/*
 * test_store_counters.c — the counter-sample store: samples written are
 * read back whole, by time range, split by UTC hour; a damaged file is
 * skipped and counted; an absent store is -1.  The file format: files are
 * written in version 2, byte for byte as counters.c documents it, and
 * files of version 1 (the structs as x86-64 held them in memory) are
 * still read; another version or record size is skipped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/bytes.h"
#include "store/counters.h"

struct got {
	ng_counter_sample s[64];
	size_t n;
};

static int take(const ng_counter_sample *s, size_t n, void *arg)
{
	struct got *g = arg;
	for (size_t i = 0; i < n && g->n < 64; i++)
		g->s[g->n++] = s[i];
	return 0;
}

static char *tmpstore(void)
{
	static char dir[64];
	snprintf(dir, sizeof dir, "/tmp/ng_ctr_test_XXXXXX");
	assert_non_null(mkdtemp(dir));
	return dir;
}

static void test_round_trip(void **state)
{
	(void)state;
	char *dir = tmpstore(), err[256];
	ng_counter_store *w = ng_counter_store_open(dir, err, sizeof err);
	assert_non_null(w);
	ng_counter_sample s[3];
	memset(s, 0, sizeof s);
	/* 2026-11-30T12:59:59.000Z, 13:00:01, 13:30:00 */
	uint64_t t0 = 1796043599000ULL;
	for (int i = 0; i < 3; i++) {
		s[i].time_received = t0 + (i == 0 ? 0 : i == 1 ? 2000 : 1801000);
		s[i].agent[10] = s[i].agent[11] = 0xff;
		s[i].agent[15] = 7;
		s[i].if_index = 10 + (uint32_t)i;
		s[i].parts = NG_CTR_IF;
		s[i].in_octets = 1000000ULL * (uint64_t)(i + 1);
		s[i].if_speed = 1000000000ULL;
	}
	/* appended out of order: the store sorts by time */
	assert_int_equal(ng_counter_store_append(w, &s[2], 1), 0);
	assert_int_equal(ng_counter_store_append(w, s, 2), 0);
	assert_int_equal(ng_counter_store_close(w), 0);

	char path[256];
	snprintf(path, sizeof path, "%s/counters/2026/11/30/12", dir);
	assert_int_equal(access(path, F_OK), 0);
	snprintf(path, sizeof path, "%s/counters/2026/11/30/13", dir);
	assert_int_equal(access(path, F_OK), 0);

	struct got g = {0};
	uint64_t errs = 0;
	assert_int_equal(ng_counter_scan(dir, 0, UINT64_MAX, take, &g, &errs), 0);
	assert_int_equal(g.n, 3);
	assert_int_equal(errs, 0);
	assert_int_equal(g.s[0].if_index, 10);
	assert_int_equal(g.s[1].if_index, 11);
	assert_int_equal(g.s[2].in_octets, 3000000);
	assert_memory_equal(&g.s[1], &s[1], sizeof s[1]);

	/* [13:00:00, 13:30:00): only the second sample */
	memset(&g, 0, sizeof g);
	assert_int_equal(ng_counter_scan(dir, t0 + 1000, t0 + 1801000, take, &g, &errs), 0);
	assert_int_equal(g.n, 1);
	assert_int_equal(g.s[0].if_index, 11);

	/* a damaged file is skipped and counted, the others still read */
	char bad[300];
	snprintf(bad, sizeof bad, "%s/counters/2026/11/30/13/1796043600000-1796043600000-99.ctr",
	         dir);
	FILE *f = fopen(bad, "wb");
	assert_non_null(f);
	fputs("garbage", f);
	fclose(f);
	memset(&g, 0, sizeof g);
	assert_int_equal(ng_counter_scan(dir, 0, UINT64_MAX, take, &g, &errs), 0);
	assert_int_equal(g.n, 3);
	assert_int_equal(errs, 1);

	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_absent(void **state)
{
	(void)state;
	struct got g = {0};
	assert_int_equal(ng_counter_scan("/nonexistent/ng", 0, UINT64_MAX, take, &g, NULL), -1);
}

/* ---- the file format ---------------------------------------------------- */

/* A sample whose every byte is set (so that each field is checked), at
 * time t. */
static void busy_sample(ng_counter_sample *s, uint64_t t, unsigned seed)
{
	uint8_t *b = (uint8_t *)s;
	for (size_t i = 0; i < sizeof *s; i++)
		b[i] = (uint8_t)(i * 37 + seed * 101 + 1);
	s->time_received = t;
}

static void put_f32(uint8_t *p, float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	ng_put_le32(p, u);
}

/* Sample s as the 312-byte record of the format, field by field at the
 * offsets counters.c documents (not through its code). */
static void doc_record(uint8_t r[312], const ng_counter_sample *s)
{
	ng_put_le64(r + 0, s->time_received);
	memcpy(r + 8, s->exporter, 16);
	memcpy(r + 24, s->agent, 16);
	ng_put_le32(r + 40, s->sub_agent);
	ng_put_le32(r + 44, s->source_type);
	ng_put_le32(r + 48, s->source_index);
	ng_put_le32(r + 52, s->seq);
	ng_put_le32(r + 56, s->uptime_ms);
	ng_put_le32(r + 60, s->parts);
	ng_put_le32(r + 64, s->if_index);
	ng_put_le32(r + 68, s->if_type);
	ng_put_le64(r + 72, s->if_speed);
	ng_put_le32(r + 80, s->if_direction);
	ng_put_le32(r + 84, s->if_status);
	ng_put_le64(r + 88, s->in_octets);
	ng_put_le64(r + 96, s->out_octets);
	const uint32_t in[6] = {s->in_ucast,    s->in_mcast,  s->in_bcast,
	                        s->in_discards, s->in_errors, s->in_unknown};
	const uint32_t out[6] = {s->out_ucast,    s->out_mcast,  s->out_bcast,
	                         s->out_discards, s->out_errors, s->promisc};
	for (int i = 0; i < 6; i++) {
		ng_put_le32(r + 104 + 4 * i, in[i]);
		ng_put_le32(r + 128 + 4 * i, out[i]);
	}
	for (int i = 0; i < 13; i++)
		ng_put_le32(r + 152 + 4 * i, s->eth[i]);
	put_f32(r + 204, s->load_one);
	put_f32(r + 208, s->load_five);
	put_f32(r + 212, s->load_fifteen);
	const uint32_t host[6] = {s->cpu_num,     s->cpu_speed_mhz, s->host_uptime_s,
	                          s->cpu_user_ms, s->cpu_system_ms, s->cpu_idle_ms};
	for (int i = 0; i < 6; i++)
		ng_put_le32(r + 216 + 4 * i, host[i]);
	const uint64_t big[8] = {s->mem_total,    s->mem_free,        s->disk_total,
	                         s->disk_free,    s->disk_bytes_read, s->disk_bytes_written,
	                         s->net_bytes_in, s->net_bytes_out};
	for (int i = 0; i < 8; i++)
		ng_put_le64(r + 240 + 8 * i, big[i]);
	ng_put_le32(r + 304, s->net_pkts_in);
	ng_put_le32(r + 308, s->net_pkts_out);
}

/* Writes a counter file of n samples by hand: the header of `version`
 * (1: magic NGCTR001 and a u32 record size; 2 and later: NGCOUNTS, u16
 * version, u16 record size), record size rs, then the records. */
static void write_by_hand(const char *path, int version, uint32_t rs, const ng_counter_sample *s,
                          size_t n)
{
	uint8_t hdr[32] = {0}, r[312];
	memcpy(hdr, version == 1 ? "NGCTR001" : "NGCOUNTS", 8);
	if (version == 1) {
		ng_put_le32(hdr + 8, rs);
	} else {
		ng_put_le16(hdr + 8, (uint16_t)version);
		ng_put_le16(hdr + 10, (uint16_t)rs);
	}
	ng_put_le32(hdr + 12, (uint32_t)n);
	ng_put_le64(hdr + 16, s[0].time_received);
	ng_put_le64(hdr + 24, s[n - 1].time_received);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(hdr, 1, 32, f), 32);
	for (size_t i = 0; i < n; i++) {
		doc_record(r, &s[i]);
		assert_int_equal(fwrite(r, 1, 312, f), 312);
	}
	fclose(f);
}

static void test_format_version1_read(void **state)
{
	(void)state;
	char *dir = tmpstore(), hour[256], path[400];
	uint64_t t0 = 1796043599000ULL; /* 2026-11-30T12:59:59Z */
	ng_counter_sample s[3];
	for (unsigned i = 0; i < 3; i++)
		busy_sample(&s[i], t0 + i * 100, i);
#if defined(__x86_64__)
	/* version 1 was the struct in memory: on x86-64, the same bytes */
	uint8_t r[312];
	doc_record(r, &s[1]);
	assert_int_equal(sizeof s[1], 312);
	assert_memory_equal(r, &s[1], 312);
#endif
	snprintf(hour, sizeof hour, "%s/counters/2026/11/30/12", dir);
	char cmd[400];
	snprintf(cmd, sizeof cmd, "mkdir -p %s", hour);
	assert_int_equal(system(cmd), 0);
	snprintf(path, sizeof path, "%s/%llu-%llu-0.ctr", hour, (unsigned long long)t0,
	         (unsigned long long)(t0 + 200));
	write_by_hand(path, 1, 312, s, 3);

	struct got g = {0};
	uint64_t errs = 0;
	assert_int_equal(ng_counter_scan(dir, 0, UINT64_MAX, take, &g, &errs), 0);
	assert_int_equal(errs, 0);
	assert_int_equal(g.n, 3);
	for (int i = 0; i < 3; i++)
		assert_memory_equal(&g.s[i], &s[i], sizeof s[i]);

	/* a version 1 file of another record size, and a version this build
	 * does not know, are skipped and counted */
	snprintf(path, sizeof path, "%s/%llu-%llu-1.ctr", hour, (unsigned long long)t0,
	         (unsigned long long)t0);
	write_by_hand(path, 1, 320, s, 1);
	snprintf(path, sizeof path, "%s/%llu-%llu-2.ctr", hour, (unsigned long long)t0,
	         (unsigned long long)t0);
	write_by_hand(path, 3, 312, s, 1);
	memset(&g, 0, sizeof g);
	assert_int_equal(ng_counter_scan(dir, 0, UINT64_MAX, take, &g, &errs), 0);
	assert_int_equal(errs, 2);
	assert_int_equal(g.n, 3);

	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_format_version2_written(void **state)
{
	(void)state;
	char *dir = tmpstore(), err[256];
	uint64_t t0 = 1796043600000ULL; /* 2026-11-30T13:00:00Z */
	ng_counter_sample s[2];
	busy_sample(&s[0], t0, 7);
	busy_sample(&s[1], t0 + 5000, 8);
	ng_counter_store *w = ng_counter_store_open(dir, err, sizeof err);
	assert_non_null(w);
	assert_int_equal(ng_counter_store_append(w, s, 2), 0);
	assert_int_equal(ng_counter_store_close(w), 0);

	/* the file, byte for byte */
	char path[400];
	snprintf(path, sizeof path, "%s/counters/2026/11/30/13/%llu-%llu-0.ctr", dir,
	         (unsigned long long)t0, (unsigned long long)(t0 + 5000));
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	uint8_t file[32 + 2 * 312 + 1], want[312];
	assert_int_equal(fread(file, 1, sizeof file, f), 32 + 2 * 312);
	fclose(f);
	assert_memory_equal(file, "NGCOUNTS", 8);
	assert_int_equal(ng_get_le16(file + 8), 2);
	assert_int_equal(ng_get_le16(file + 10), 312);
	assert_int_equal(ng_get_le32(file + 12), 2);
	assert_int_equal(ng_get_le64(file + 16), t0);
	assert_int_equal(ng_get_le64(file + 24), t0 + 5000);
	for (int i = 0; i < 2; i++) {
		doc_record(want, &s[i]);
		assert_memory_equal(file + 32 + 312 * i, want, 312);
	}

	/* and read back */
	struct got g = {0};
	uint64_t errs = 0;
	assert_int_equal(ng_counter_scan(dir, 0, UINT64_MAX, take, &g, &errs), 0);
	assert_int_equal(errs, 0);
	assert_int_equal(g.n, 2);
	assert_memory_equal(&g.s[0], &s[0], sizeof s[0]);
	assert_memory_equal(&g.s[1], &s[1], sizeof s[1]);

	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_absent),
	    cmocka_unit_test(test_format_version1_read),
	    cmocka_unit_test(test_format_version2_written),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
