/*
 * test_store_publish.c — ng_seg_publish (store/files.c): a segment
 * appears whole under <start>-<end>-<seq>.seg or not at all; a name taken
 * steps <seq> without replacing anything; compaction's hooks run around
 * each rename (the marker exists, and the temporary is whole, before the
 * segment can appear); a failure leaves no file behind.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "store/files.h"
#include "test_store_helpers.h"

static const char image[] = "a segment image, 37 bytes of it here";

/* The bytes of file dir/name into buf[len]; their count, -1 when absent. */
static long slurp(const char *dir, const char *name, char *buf, size_t len)
{
	char p[4200];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	FILE *f = fopen(p, "rb");
	if (!f)
		return -1;
	long n = (long)fread(buf, 1, len, f);
	fclose(f);
	return n;
}

static void put(const char *dir, const char *name, const char *text)
{
	char p[4200];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	FILE *f = fopen(p, "wb");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_publish_whole(void **state)
{
	(void)state;
	char *dir = ts_make_store("pub");
	ng_seg_pub p = {.dir = dir, .start = 100, .end = 200, .seq = 5, .tmp_tag = "42"};
	assert_int_equal(ng_seg_publish(&p, image, sizeof image), 0);
	assert_string_equal(p.err, "");
	assert_int_equal(p.seq, 6); /* one past the one taken */
	char want[4200], buf[128];
	snprintf(want, sizeof want, "%s/100-200-5.seg", dir);
	assert_string_equal(p.path, want);
	assert_int_equal(slurp(dir, "100-200-5.seg", buf, sizeof buf), (long)sizeof image);
	assert_memory_equal(buf, image, sizeof image);
	assert_int_equal(ts_count_files(dir, "*.tmp"), 0);
	assert_int_equal(ts_count_files(dir, "*"), 3); /* dir, the segment, its verdict */
	/* the verdict: "ok" for the version published (verdict.c) */
	struct stat sb;
	assert_int_equal(stat(want, &sb), 0);
	char line[256], expect[256];
	snprintf(expect, sizeof expect, "100-200-5.seg %llu %llu %llu ok\n",
	         (unsigned long long)sb.st_ino, (unsigned long long)sb.st_size,
	         (unsigned long long)sb.st_mtim.tv_sec * 1000000000ull +
	             (unsigned long long)sb.st_mtim.tv_nsec);
	assert_int_equal(slurp(dir, "checked", line, sizeof line), (long)strlen(expect));
	line[strlen(expect)] = 0;
	assert_string_equal(line, expect);
	ts_rm_rf(dir);
	free(dir);
}

/* What the hooks saw, in order. */
struct seen {
	const char *dir;
	char calls[8][64];
	int n;
	int fail_at; /* before_rename call that fails, -1: none */
};

static int before(ng_seg_pub *p, const char *final, void *arg)
{
	struct seen *s = arg;
	char buf[128];
	/* the temporary, under the first seq's name, is whole already */
	assert_int_equal(slurp(s->dir, "1-2-7.seg.c.tmp", buf, sizeof buf), (long)sizeof image);
	snprintf(s->calls[s->n], sizeof s->calls[0], "before %s", strrchr(final, '/') + 1);
	if (s->n++ == s->fail_at) {
		snprintf(p->err, sizeof p->err, "hook says no");
		return -1;
	}
	return 0;
}

static void failed(ng_seg_pub *p, const char *final, void *arg)
{
	struct seen *s = arg;
	(void)p;
	snprintf(s->calls[s->n++], sizeof s->calls[0], "failed %s", strrchr(final, '/') + 1);
}

static void test_publish_steps_past_taken_names(void **state)
{
	(void)state;
	char *dir = ts_make_store("pub");
	put(dir, "1-2-7.seg", "old seven");
	put(dir, "1-2-8.seg", "old eight");
	struct seen s = {.dir = dir, .fail_at = -1};
	ng_seg_pub p = {.dir = dir,
	                .start = 1,
	                .end = 2,
	                .seq = 7,
	                .tmp_tag = "c",
	                .before_rename = before,
	                .rename_failed = failed,
	                .arg = &s};
	assert_int_equal(ng_seg_publish(&p, image, sizeof image), 0);
	assert_int_equal(s.n, 5);
	assert_string_equal(s.calls[0], "before 1-2-7.seg");
	assert_string_equal(s.calls[1], "failed 1-2-7.seg");
	assert_string_equal(s.calls[2], "before 1-2-8.seg");
	assert_string_equal(s.calls[3], "failed 1-2-8.seg");
	assert_string_equal(s.calls[4], "before 1-2-9.seg");
	assert_int_equal(p.seq, 10);
	char buf[128];
	assert_int_equal(slurp(dir, "1-2-7.seg", buf, sizeof buf), 9); /* not replaced */
	assert_memory_equal(buf, "old seven", 9);
	assert_int_equal(slurp(dir, "1-2-9.seg", buf, sizeof buf), (long)sizeof image);
	assert_int_equal(ts_count_files(dir, "*.tmp"), 0);
	ts_rm_rf(dir);
	free(dir);
}

static void test_publish_failures_leave_nothing(void **state)
{
	(void)state;
	char *dir = ts_make_store("pub");
	/* the hook refuses the second name */
	put(dir, "1-2-7.seg", "old seven");
	struct seen s = {.dir = dir, .fail_at = 2};
	ng_seg_pub p = {.dir = dir,
	                .start = 1,
	                .end = 2,
	                .seq = 7,
	                .tmp_tag = "c",
	                .before_rename = before,
	                .rename_failed = failed,
	                .arg = &s};
	assert_int_equal(ng_seg_publish(&p, image, sizeof image), -1);
	assert_string_equal(p.err, "hook says no");
	assert_int_equal(ts_count_files(dir, "*.tmp"), 0);
	assert_int_equal(ts_count_files(dir, "*.seg"), 1); /* the old one only */

	/* a directory that is not there: cannot create the temporary */
	char gone[4200];
	snprintf(gone, sizeof gone, "%s/no/such/hour", dir);
	ng_seg_pub q = {.dir = gone, .start = 1, .end = 2, .seq = 0, .tmp_tag = "1"};
	assert_int_equal(ng_seg_publish(&q, image, sizeof image), -1);
	assert_non_null(strstr(q.err, "cannot create"));
	assert_int_equal(q.seq, 0); /* no rename tried */
	ts_rm_rf(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_publish_whole),
	    cmocka_unit_test(test_publish_steps_past_taken_names),
	    cmocka_unit_test(test_publish_failures_leave_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
