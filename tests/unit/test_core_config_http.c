/*
 * test_core_config_http.c — the HTTP keys of the configuration file
 * (docs/configuration.md, docs/security.md "HTTP"): http_allowed_hosts as
 * a string or a list (joined with commas), the three limits, and their
 * errors with file and line.
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

/* Loads `yaml` from a temporary file into *c; returns ng_config_load's
 * result, the message in err[512]. */
static int load(const char *yaml, ng_config *c, char *err)
{
	char path[] = "/tmp/test_config_http_XXXXXX";
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
	assert_int_equal(load("collect:\n  store: /s\n  http_allowed_hosts: [nagare.lan, "
	                      "Dash.Example]\n  http_max_connections: 100\n"
	                      "  http_max_per_client: 8\n  http_idle_timeout: 30\n",
	                      &c, err),
	                 0);
	assert_string_equal(c.http_allowed_hosts, "nagare.lan,Dash.Example");
	assert_int_equal(c.http_max_connections, 100);
	assert_int_equal(c.http_max_per_client, 8);
	assert_int_equal(c.http_idle_timeout, 30);
	ng_config_free(&c);
	assert_int_equal(load("collect:\n  http_allowed_hosts: nagare.lan\n", &c, err), 0);
	assert_string_equal(c.http_allowed_hosts, "nagare.lan");
	assert_int_equal(c.http_max_connections, 0); /* not given: the server's default */
	ng_config_free(&c);
}

static void test_errors(void **state)
{
	(void)state;
	static const struct {
		const char *yaml, *want;
	} bad[] = {
	    {"collect:\n  http_max_connections: 0\n",
	     ":2: http_max_connections: give a whole number, 1 to 10000"},
	    {"collect:\n  http_max_per_client: 10001\n",
	     ":2: http_max_per_client: give a whole number, 1 to 10000"},
	    {"collect:\n  http_idle_timeout: -1\n",
	     ":2: http_idle_timeout: give a whole number, 1 to 3600"},
	    {"collect:\n  http_allowed_hosts: \"a b\"\n",
	     ":2: http_allowed_hosts: give host names, one an item"},
	    {"collect:\n  http_allowed: x\n", "unknown key 'http_allowed'"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ng_config c;
		char err[512] = "";
		assert_int_equal(load(bad[i].yaml, &c, err), -1);
		if (!strstr(err, bad[i].want))
			fail_msg("'%s': got '%s', want '%s'", bad[i].yaml, err, bad[i].want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_keys),
	    cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
