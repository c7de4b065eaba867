/*
 * test_core_config_clickhouse.c — the clickhouse: section of the
 * configuration file (docs/configuration.md, docs/clickhouse.md): every
 * key read into ng_cfg_clickhouse, sizes and durations parsed, and each
 * bad value refused with the file's line and what to give.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"

static int load(const char *yaml, ng_config *c, char *err)
{
	char path[] = "/tmp/test_config_ch_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, yaml, strlen(yaml)), (ssize_t)strlen(yaml));
	close(fd);
	int rc = ng_config_load(path, c, err, 512);
	unlink(path);
	return rc;
}

static void test_keys(void **state)
{
	(void)state;
	ng_config c;
	char err[512] = "";
	assert_int_equal(load("clickhouse:\n  url: http://ch1:8123/flows\n  database: other\n"
	                      "  user: nagare\n  password: s3cret\n  ca_file: /ca.pem\n"
	                      "  cert_file: /c.pem\n  key_file: /k.pem\n  timeout: 45s\n"
	                      "  spool_max: 2G\n  batch_rows: 20000\n  retention: 30d\n"
	                      "  rollup_retention: 400d\n  compression: gzip\n  store: true\n",
	                      &c, err),
	                 0);
	const ng_cfg_clickhouse *h = &c.clickhouse;
	assert_string_equal(h->url, "http://ch1:8123/flows");
	assert_string_equal(h->database, "other");
	assert_string_equal(h->user, "nagare");
	assert_string_equal(h->password, "s3cret");
	assert_string_equal(h->ca_file, "/ca.pem");
	assert_string_equal(h->cert_file, "/c.pem");
	assert_string_equal(h->key_file, "/k.pem");
	assert_int_equal(h->timeout_ms, 45000);
	assert_int_equal(h->spool_max, 2ull << 30);
	assert_int_equal(h->batch_rows, 20000);
	assert_int_equal(h->retention_ms, 30ull * 86400000);
	assert_int_equal(h->rollup_retention_ms, 400ull * 86400000);
	assert_true(h->gzip);
	assert_true(h->store_set && h->store_too);
	assert_null(h->cluster);
	assert_false(h->insert_local);
	assert_int_equal(h->nnodes, 0);
	ng_config_free(&c);
}

/* The cluster's keys (docs/clickhouse.md, "Cluster"): a list or one URL
 * for nodes. */
static void test_cluster(void **state)
{
	(void)state;
	ng_config c;
	char err[512] = "";
	assert_int_equal(load("clickhouse:\n  url: http://ch1:8123/nagare\n  cluster: two_shards\n"
	                      "  insert: local\n  replicated: true\n"
	                      "  nodes: [http://ch1:8123, http://ch2:8124]\n",
	                      &c, err),
	                 0);
	const ng_cfg_clickhouse *h = &c.clickhouse;
	assert_string_equal(h->cluster, "two_shards");
	assert_true(h->insert_local);
	assert_true(h->replicated);
	assert_int_equal(h->nnodes, 2);
	assert_string_equal(h->nodes[0], "http://ch1:8123");
	assert_string_equal(h->nodes[1], "http://ch2:8124");
	ng_config_free(&c);
	assert_int_equal(
	    load("clickhouse:\n  insert: distributed\n  nodes: http://ch3:8123\n", &c, err), 0);
	assert_false(c.clickhouse.insert_local);
	assert_int_equal(c.clickhouse.nnodes, 1);
	assert_string_equal(c.clickhouse.nodes[0], "http://ch3:8123");
	ng_config_free(&c);
}

static void test_errors(void **state)
{
	(void)state;
	static const struct {
		const char *yaml, *want;
	} bad[] = {
	    {"clickhouse:\n  urll: x\n", ":2: clickhouse: unknown key 'urll' (url, database"},
	    {"clickhouse:\n  spool_max: lots\n", ":2: clickhouse: spool_max: give a size"},
	    {"clickhouse:\n  batch_rows: 0\n",
	     ":2: clickhouse: batch_rows: give rows, 1 to 1000000"},
	    {"clickhouse:\n  timeout: soon\n",
	     ":2: clickhouse: timeout: give a duration such as 30s"},
	    {"clickhouse:\n  compression: lz4\n", ":2: clickhouse: compression: give none or gzip"},
	    {"clickhouse:\n  store: maybe\n", ":2: clickhouse: store: give true or false"},
	    {"clickhouse:\n  insert: sideways\n",
	     ":2: clickhouse: insert: give distributed or local"},
	    {"clickhouse:\n  nodes: {a: b}\n", ":2: clickhouse: nodes"},
	    {"clickhous:\n  url: x\n",
	     "unknown section 'clickhous' (collect, enrich, limits, clickhouse)"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ng_config c;
		char err[512] = "";
		assert_int_equal(load(bad[i].yaml, &c, err), -1);
		if (!strstr(err, bad[i].want))
			fail_msg("%s: got '%s', want '%s'", bad[i].yaml, err, bad[i].want);
		ng_config_free(&c);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_keys),
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_cluster),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
