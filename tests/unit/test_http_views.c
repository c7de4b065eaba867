/*
 * test_http_views.c — saved views (http/views.c): the file parser and
 * writer, the POST body parser, the bounds (docs/api.md "Saved views").
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

#include "http/views.h"

static void test_file_roundtrip(void **st)
{
	(void)st;
	const char text[] = "nagare-views/1\nbusy hour\t/?v=1&from=-1h&tz=utc\n\n"
	                    "dns (udp)\t/top?v=1&field=dstport&filter=proto%20udp\n";
	ng_views v;
	char err[128] = "";
	assert_int_equal(ng_views_parse(text, sizeof text - 1, &v, err, sizeof err), 0);
	assert_int_equal(v.n, 2);
	assert_string_equal(v.v[0].name, "busy hour");
	assert_string_equal(v.v[1].state, "/top?v=1&field=dstport&filter=proto%20udp");
	char dir[] = "/tmp/ng-views-XXXXXX", path[64];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/views.txt", dir);
	assert_int_equal(ng_views_save(path, &v, err, sizeof err), 0);
	ng_views w;
	assert_int_equal(ng_views_load(path, &w, err, sizeof err), 0);
	assert_int_equal(w.n, 2);
	assert_string_equal(w.v[1].name, "dns (udp)");
	assert_string_equal(w.v[0].state, "/?v=1&from=-1h&tz=utc");
	/* the file is the text, byte for byte but the empty line */
	FILE *f = fopen(path, "rb");
	char back[256];
	size_t n = fread(back, 1, sizeof back, f);
	fclose(f);
	assert_int_equal(n, sizeof text - 2);
	ng_views_free(&v);
	ng_views_free(&w);
	unlink(path);
	rmdir(dir);
	/* a missing file is no views */
	assert_int_equal(ng_views_load("/nonexistent/views.txt", &w, err, sizeof err), 0);
	assert_int_equal(w.n, 0);
}

static void bad_file(const char *text, const char *why)
{
	ng_views v;
	char err[128] = "";
	assert_int_equal(ng_views_parse(text, strlen(text), &v, err, sizeof err), -1);
	if (!strstr(err, why))
		fail_msg("'%s': message '%s' lacks '%s'", text, err, why);
	ng_views_free(&v);
}

static void test_file_damaged(void **st)
{
	(void)st;
	bad_file("", "line 1: empty");
	bad_file("nagare-views/2\n", "line 1: not a nagare-views/1");
	bad_file("nagare-views/1\nname /x\n", "line 2: no tab");
	bad_file("nagare-views/1\na\t/x\na\t/y\n", "line 3: duplicate");
	bad_file("nagare-views/1\n a\t/x\n", "line 2: bad name");
	bad_file("nagare-views/1\na/b\t/x\n", "line 2: bad name");
	bad_file("nagare-views/1\na\tx\n", "line 2: bad state");
	bad_file("nagare-views/1\na\t/x y\n", "line 2: bad state");
	/* 257 views */
	char *big = malloc(300 * 16), *p = big;
	p += sprintf(p, "nagare-views/1\n");
	for (int i = 0; i < 257; i++)
		p += sprintf(p, "v%d\t/\n", i);
	bad_file(big, "line 258: more than 256");
	big[strlen(big) - strlen("v256\t/\n")] = 0;
	ng_views v;
	char err[64];
	assert_int_equal(ng_views_parse(big, strlen(big), &v, err, sizeof err), 0);
	assert_int_equal(v.n, 256);
	ng_views_free(&v);
	free(big);
}

static unsigned body(const char *b, char *name, char **state, char *err)
{
	return ng_views_body(b, strlen(b), name, state, err, 256);
}

static void test_body(void **st)
{
	(void)st;
	char name[NG_VIEW_NAME_MAX + 1], err[256], *state;
	assert_int_equal(
	    body(" {\"state\" : \"\\/geo?v=1\\u0026x=1\", \"extra\":\"\", \"name\":\"My view\"}\n",
	         name, &state, err),
	    0);
	assert_string_equal(name, "My view");
	assert_string_equal(state, "/geo?v=1&x=1");
	free(state);
	assert_int_equal(body("{\"name\":\"a\"}", name, &state, err), 400);
	assert_non_null(strstr(err, "needs both"));
	assert_int_equal(body("{\"name\":\"a\",\"state\":\"/\"", name, &state, err), 400);
	assert_int_equal(body("{\"name\":\"a\",\"state\":\"/\"} x", name, &state, err), 400);
	assert_int_equal(body("{\"name\":1,\"state\":\"/\"}", name, &state, err), 400);
	assert_int_equal(body("{\"name\":\"a\\tb\",\"state\":\"/\"}", name, &state, err), 400);
	assert_non_null(strstr(err, "bad view name"));
	assert_int_equal(body("{\"name\":\"caf\\u00e9\",\"state\":\"/\"}", name, &state, err), 400);
	assert_int_equal(body("{\"name\":\"a\",\"state\":\"no-slash\"}", name, &state, err), 400);
	assert_non_null(strstr(err, "bad state"));
	/* bounds: a 64-byte name is fine, 65 is not; a 4096-byte state is fine, 4097 is 413 */
	char b[NG_VIEWS_BODY_MAX + 64];
	snprintf(b, sizeof b, "{\"name\":\"%064d\",\"state\":\"/\"}", 0);
	assert_int_equal(body(b, name, &state, err), 0);
	free(state);
	snprintf(b, sizeof b, "{\"name\":\"%065d\",\"state\":\"/\"}", 0);
	assert_int_equal(body(b, name, &state, err), 400);
	for (int len = 4096; len <= 4097; len++) {
		int n = snprintf(b, sizeof b, "{\"name\":\"s\",\"state\":\"/");
		memset(b + n, 'x', (size_t)len - 1);
		strcpy(b + n + len - 1, "\"}");
		unsigned rc = body(b, name, &state, err);
		assert_int_equal(rc, len == 4096 ? 0 : 413);
		if (!rc) {
			assert_int_equal(strlen(state), 4096);
			free(state);
		}
	}
	memset(b, ' ', NG_VIEWS_BODY_MAX + 1);
	assert_int_equal(ng_views_body(b, NG_VIEWS_BODY_MAX + 1, name, &state, err, sizeof err),
	                 413);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_file_roundtrip),
	    cmocka_unit_test(test_file_damaged),
	    cmocka_unit_test(test_body),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
