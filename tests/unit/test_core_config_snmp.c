/*
 * test_core_config_snmp.c — the SNMP keys of the configuration file
 * (docs/configuration.md "SNMP"): an exporter's snmp: entry for v2c and
 * v3 (the version following from the keys when not given), enrich.snmp's
 * timing and bounds and its default entry, and the errors with file and
 * line: what each version needs, keys shorter than RFC 3414 §11.2's 8
 * characters, a privacy key without an authentication key, unknown
 * protocols and keys.
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
	char path[] = "/tmp/test_config_snmp_XXXXXX";
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
	int rc = load("enrich:\n"
	              "  snmp:\n"
	              "    refresh: 60\n"
	              "    timeout: 500\n"
	              "    retries: 0\n"
	              "    max_exporters: 3\n"
	              "    max_interfaces: 100\n"
	              "    default: {community: public}\n"
	              "  exporters:\n"
	              "    - address: 192.0.2.1\n"
	              "      snmp: {version: 2c, community: c0mm, port: 1161}\n"
	              "    - address: 192.0.2.2\n"
	              "      snmp:\n"
	              "        agent: 198.51.100.2\n"
	              "        user: nagare\n"
	              "        auth_protocol: SHA-256\n"
	              "        auth_key: authpass1\n"
	              "        priv_protocol: aes\n"
	              "        priv_key: privpass1\n"
	              "    - address: 192.0.2.3\n",
	              &c, err);
	if (rc)
		fail_msg("%s", err);
	assert_int_equal(c.snmp.refresh_s, 60);
	assert_int_equal(c.snmp.timeout_ms, 500);
	assert_int_equal(c.snmp.retries, 0);
	assert_true(c.snmp.retries_set);
	assert_int_equal(c.snmp.max_exporters, 3);
	assert_int_equal(c.snmp.max_interfaces, 100);
	assert_non_null(c.snmp.fallback);
	assert_int_equal(c.snmp.fallback->version, 2); /* a community: v2c */
	assert_int_equal(c.nexps, 3);
	const ng_cfg_snmp *a = c.exps[0].snmp, *b = c.exps[1].snmp;
	assert_non_null(a);
	assert_int_equal(a->version, 2);
	assert_string_equal(a->community, "c0mm");
	assert_int_equal(a->port, 1161);
	assert_null(a->agent);
	assert_non_null(b);
	assert_int_equal(b->version, 3); /* a user: v3 */
	assert_string_equal(b->agent, "198.51.100.2");
	assert_string_equal(b->user, "nagare");
	assert_string_equal(b->auth_proto, "SHA-256");
	assert_string_equal(b->auth_key, "authpass1");
	assert_string_equal(b->priv_proto, "aes");
	assert_string_equal(b->priv_key, "privpass1");
	assert_null(c.exps[2].snmp);
	ng_config_free(&c);
}

static void test_errors(void **state)
{
	(void)state;
	static const struct {
		const char *yaml, *want;
	} bad[] = {
	    {"enrich:\n  exporters:\n    - address: 192.0.2.1\n      snmp: {version: 2c}\n",
	     ":4: snmp: version 2c needs a community"},
	    {"enrich:\n  exporters:\n    - address: 192.0.2.1\n      snmp: {version: 3}\n",
	     ":4: snmp: version 3 needs a user"},
	    {"enrich:\n  exporters:\n    - address: 192.0.2.1\n"
	     "      snmp: {user: u, auth_key: short}\n",
	     "need 8 characters at least (RFC 3414 section 11.2)"},
	    {"enrich:\n  exporters:\n    - address: 192.0.2.1\n"
	     "      snmp: {user: u, priv_key: longenough}\n",
	     "priv_key needs an auth_key"},
	    {"enrich:\n  exporters:\n    - address: 192.0.2.1\n"
	     "      snmp: {user: u, auth_protocol: SHA1, auth_key: longenough}\n",
	     "auth_protocol 'SHA1': give MD5, SHA, SHA-224"},
	    {"enrich:\n  exporters:\n    - address: 192.0.2.1\n"
	     "      snmp: {user: u, priv_protocol: 3DES}\n",
	     "priv_protocol '3DES': give DES or AES"},
	    {"enrich:\n  exporters:\n    - address: 192.0.2.1\n"
	     "      snmp: {community: c, auth_key: longenough}\n",
	     "user, auth_key and priv_key are for version 3"},
	    {"enrich:\n  exporters:\n    - address: 192.0.2.1\n      snmp: {version: 1, community: "
	     "c}\n",
	     "version '1': give 2c or 3"},
	    {"enrich:\n  exporters:\n    - address: 192.0.2.1\n      snmp: {port: 0, community: "
	     "c}\n",
	     "port 0"},
	    {"enrich:\n  exporters:\n    - address: 192.0.2.1\n      snmp: {comunity: c}\n",
	     "snmp: unknown key 'comunity'"},
	    {"enrich:\n  snmp:\n    refresh: 0\n", ":3: snmp: refresh: give a positive value"},
	    {"enrich:\n  snmp:\n    retries: 11\n", "retries: expected a whole number up to 10"},
	    {"enrich:\n  snmp:\n    interval: 5\n", "snmp: unknown key 'interval'"},
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
