/*
 * test_core_limits.c — `limits:` in the configuration file (core/limits.h,
 * core/config.c): every key of NG_LIMITS is read, sizes take K/M/G, 0 and
 * unknown keys are refused with the file's line, what is not given is 0
 * until ng_limits_fill gives the defaults, and docs/nagare.yaml (which
 * lists every limit at its default) loads to exactly the defaults.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/config.h"
#include "core/limits.h"

static char path[64];

static int load(const char *yaml, ng_config *c, char *err, size_t errlen)
{
	snprintf(path, sizeof path, "/tmp/ng-limits-%d.yaml", (int)getpid());
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(yaml, f);
	fclose(f);
	int rc = ng_config_load(path, c, err, errlen);
	unlink(path);
	return rc;
}

static void test_limits_read(void **state)
{
	(void)state;
	ng_config c;
	char err[512];
	assert_int_equal(load("limits:\n  exporters: 5\n  held_bytes: 2M\n"
	                      "  template_bytes_per_domain: 64K\n  template_bytes: 1G\n",
	                      &c, err, sizeof err),
	                 0);
	assert_int_equal(c.limits.exporters, 5);
	assert_int_equal(c.limits.held_bytes, 2u << 20);
	assert_int_equal(c.limits.template_bytes_per_domain, 64u << 10);
	assert_int_equal(c.limits.template_bytes, 1u << 30);
	assert_int_equal(c.limits.domains, 0); /* not given */
	ng_limits_fill(&c.limits);
	assert_int_equal(c.limits.domains, 20000);
	assert_int_equal(c.limits.exporters, 5);
	ng_config_free(&c);
}

static void test_limits_refused(void **state)
{
	(void)state;
	ng_config c;
	char err[512];
	assert_int_equal(load("limits:\n  exporters: 0\n", &c, err, sizeof err), -1);
	assert_non_null(strstr(err, ":2: limits: exporters: 0 is no limit"));
	assert_int_equal(load("limits:\n  held_bytes: 5X\n", &c, err, sizeof err), -1);
	assert_non_null(strstr(err, "held_bytes: expected a positive size"));
	assert_int_equal(load("limits:\n  exporter: 5\n", &c, err, sizeof err), -1);
	assert_non_null(strstr(err, "limits: unknown key 'exporter' (exporters, domains"));
	assert_int_equal(load("limits:\n  domains: -3\n", &c, err, sizeof err), -1);
}

/* docs/nagare.yaml gives every limit, at its default. */
static void test_limits_example_file(void **state)
{
	(void)state;
	char doc[4096];
	snprintf(doc, sizeof doc, "%s", __FILE__);
	char *slash = strstr(doc, "tests/unit/");
	if (!slash)
		skip();
	strcpy(slash, "docs/nagare.yaml");
	ng_config c;
	char err[512];
	assert_int_equal(ng_config_load(doc, &c, err, sizeof err), 0);
	for (int i = 0; i < NG_LIMIT_COUNT; i++) {
		uint64_t v;
		memcpy(&v, (char *)&c.limits + ng_limit_infos[i].offset, sizeof v);
		if (v != ng_limit_infos[i].def)
			fail_msg("docs/nagare.yaml: limits.%s is %llu, the default is %llu",
			         ng_limit_infos[i].key, (unsigned long long)v,
			         (unsigned long long)ng_limit_infos[i].def);
	}
	ng_config_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_limits_read),
	    cmocka_unit_test(test_limits_refused),
	    cmocka_unit_test(test_limits_example_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
