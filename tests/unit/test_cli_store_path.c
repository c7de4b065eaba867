/*
 * test_cli_store_path.c — the default flow store (cli/store_path.h):
 * $NAGARE_STORE first; then the service's directory, only when this user
 * can use it (writable for collect, flows/ readable for the readers);
 * then $XDG_DATA_HOME/nagare (absolute only) or ~/.local/share/nagare;
 * --store given wins over all of them.
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

#include "cli/store_path.h"

static char root[64], service[128];

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof root, "/tmp/ng-storepath-%d", (int)getpid());
	snprintf(service, sizeof service, "%s/var-lib-nagare", root);
	mkdir(root, 0755);
	unsetenv("NAGARE_STORE");
	unsetenv("XDG_DATA_HOME");
	setenv("HOME", "/home/alice", 1);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char flows[160];
	snprintf(flows, sizeof flows, "%s/flows", service);
	rmdir(flows);
	rmdir(service);
	rmdir(root);
	return 0;
}

static const char *pick(bool write, const char **why)
{
	static char buf[4096];
	return ng_cli_store_default(service, write, buf, sizeof buf, why);
}

static void test_per_user_when_no_service(void **state)
{
	(void)state;
	const char *why;
	assert_string_equal(pick(true, &why), "/home/alice/.local/share/nagare");
	assert_string_equal(why, "the per-user data directory");
	setenv("XDG_DATA_HOME", "/data/alice", 1);
	assert_string_equal(pick(false, &why), "/data/alice/nagare");
	setenv("XDG_DATA_HOME", "relative/dir", 1); /* ignored, as the spec says */
	assert_string_equal(pick(false, &why), "/home/alice/.local/share/nagare");
	unsetenv("XDG_DATA_HOME");
	unsetenv("HOME");
	assert_null(pick(false, &why));
	setenv("HOME", "/home/alice", 1);
}

static void test_service_when_usable(void **state)
{
	(void)state;
	const char *why;
	assert_int_equal(mkdir(service, 0755), 0);
	/* collect can write it; a reader needs flows/ */
	assert_string_equal(pick(true, &why), service);
	assert_string_equal(why, "the service's store");
	assert_string_equal(pick(false, &why), "/home/alice/.local/share/nagare");
	char flows[160];
	snprintf(flows, sizeof flows, "%s/flows", service);
	assert_int_equal(mkdir(flows, 0755), 0);
	assert_string_equal(pick(false, &why), service);
}

static void test_env_first_and_given_wins(void **state)
{
	(void)state;
	const char *why;
	setenv("NAGARE_STORE", "/srv/flows", 1);
	assert_string_equal(pick(false, &why), "/srv/flows");
	assert_string_equal(why, "$NAGARE_STORE");
	char buf[64];
	assert_string_equal(ng_cli_store("query", "st", false, buf, sizeof buf), "st");
	assert_string_equal(ng_cli_store("query", NULL, false, buf, sizeof buf), "/srv/flows");
	/* a path that does not fit is refused, not cut */
	char tiny[8];
	assert_null(ng_cli_store("query", NULL, false, tiny, sizeof tiny));
	unsetenv("NAGARE_STORE");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_per_user_when_no_service),
	    cmocka_unit_test(test_service_when_usable),
	    cmocka_unit_test(test_env_first_and_given_wins),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
