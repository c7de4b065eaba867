/*
 * test_http_server.c — the HTTP layer without the network beyond
 * loopback: the loopback rule, the constant-time token comparison, the
 * token rules at start (made when wanted and absent, 16 characters at
 * least), the Host rule of guard.c, the embedded-asset hook
 * (assets.h) and the fallback page, method limits, over a raw socket.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "http/assets.h"
#include "http/http.h"
#include "http/http_int.h"

static void test_loopback_rule(void **state)
{
	(void)state;
	assert_true(ng_http_is_loopback("127.0.0.1:8080"));
	assert_true(ng_http_is_loopback("127.0.0.2:8080"));
	assert_true(ng_http_is_loopback("[::1]:8080"));
	assert_true(ng_http_is_loopback("localhost:8080"));
	assert_false(ng_http_is_loopback("0.0.0.0:8080"));
	assert_false(ng_http_is_loopback("[::]:8080"));
	assert_false(ng_http_is_loopback("10.200.0.1:8080"));
	assert_false(ng_http_is_loopback("[::ffff:10.0.0.1]:80"));
	assert_false(ng_http_is_loopback("garbage"));
}

static void test_token_equal(void **state)
{
	(void)state;
	assert_true(ng_http_token_equal("s3cret", "s3cret"));
	assert_false(ng_http_token_equal("s3cre", "s3cret"));
	assert_false(ng_http_token_equal("s3cretX", "s3cret"));
	assert_false(ng_http_token_equal("", "s3cret"));
	assert_false(ng_http_token_equal("S3cret", "s3cret"));
	assert_true(ng_http_token_equal("", ""));
}

/* The start rules of the token: off loopback one is made when none is
 * given, "auto" makes one anywhere, a short one or one a cookie cannot
 * carry is refused. */
static void test_token_rules(void **state)
{
	(void)state;
	char err[512] = "";
	bool gen = false;
	ng_http_config c = {.store_dir = "/nonexistent", .listen = "0.0.0.0:0"};
	ng_http_server *s = ng_http_start(&c, err, sizeof err);
	assert_non_null(s);
	const char *t = ng_http_token(s, &gen);
	assert_true(gen);
	assert_int_equal(strlen(t), 32);
	assert_int_equal(strspn(t, "0123456789abcdef"), 32);
	char first[33];
	strcpy(first, t);
	ng_http_stop(s);
	c.listen = "127.0.0.1:0";
	c.token = "auto";
	assert_non_null(s = ng_http_start(&c, err, sizeof err));
	assert_true(ng_http_token(s, &gen) && gen);
	assert_string_not_equal(ng_http_token(s, NULL), first); /* 128 random bits each */
	ng_http_stop(s);
	c.token = NULL;
	assert_non_null(s = ng_http_start(&c, err, sizeof err)); /* loopback: none needed */
	assert_null(ng_http_token(s, &gen));
	ng_http_stop(s);
	c.token = "fifteen-chars-x";
	assert_null(ng_http_start(&c, err, sizeof err));
	assert_non_null(strstr(err, "is 15 characters long: give at least 16"));
	c.token = "sixteen-chars-xy";
	assert_non_null(s = ng_http_start(&c, err, sizeof err));
	assert_false(ng_http_token(s, &gen) && gen);
	ng_http_stop(s);
	c.token = "has space and is long";
	assert_null(ng_http_start(&c, err, sizeof err));
	assert_non_null(strstr(err, "may not contain spaces"));
	c.token = NULL;
	c.listen = "1.2.3:80";
	assert_null(ng_http_start(&c, err, sizeof err));
	assert_non_null(strstr(err, "bad HTTP address '1.2.3:80'"));
	c.listen = "127.0.0.1:0";
	c.limits.allowed_hosts = "ok.example,http://bad.example";
	assert_null(ng_http_start(&c, err, sizeof err));
	assert_non_null(strstr(err, "allowed HTTP host 'http://bad.example'"));
}

/* The Host values guard.c takes for loopback. */
static void test_host_rule(void **state)
{
	(void)state;
	static const char *yes[] = {"localhost",           "LOCALHOST:8080", "localhost.",
	                            "a.b.localhost:1",     "127.0.0.1",      "127.0.0.1:8080",
	                            "127.255.0.9:65535",   "[::1]",          "[::1]:8080",
	                            "[0:0:0:0:0:0:0:1]:80"};
	static const char *no[] = {"evil.example",
	                           "evil.example:8080",
	                           "localhost.evil.example",
	                           "127.0.0.1.evil.example",
	                           "evillocalhost",
	                           "10.0.0.1:80",
	                           "[::2]:80",
	                           "::1",
	                           "127.0.0.1:80x",
	                           "127.0.0.1:",
	                           "[::1",
	                           "[::1]x",
	                           "",
	                           "localhost:123456",
	                           "127.0.0.1:80:80"};
	for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
		if (!ng_http_host_is_loopback(yes[i]))
			fail_msg("'%s' should be loopback", yes[i]);
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
		if (ng_http_host_is_loopback(no[i]))
			fail_msg("'%s' should not be loopback", no[i]);
}

/* One request over a fresh connection; returns the whole answer
 * (malloc'd, NUL-terminated). */
static char *request(uint16_t port, const char *req)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
	assert_int_equal(write(fd, req, strlen(req)), (ssize_t)strlen(req));
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	ssize_t k;
	while ((k = read(fd, buf + n, cap - n - 1)) > 0)
		n += (size_t)k;
	buf[n] = 0;
	close(fd);
	return buf;
}

static const unsigned char index_html[] = "<html>dashboards</html>";
static const unsigned char app_js[] = "console.log(1)";
static const ng_asset assets[] = {
    {"/index.html", "text/html; charset=utf-8", index_html, sizeof index_html - 1},
    {"/assets/app.js", "text/javascript", app_js, sizeof app_js - 1},
};

static void test_serves_assets(void **state)
{
	(void)state;
	char dir[] = "/tmp/test_http_XXXXXX", flows[64];
	assert_non_null(mkdtemp(dir));
	snprintf(flows, sizeof flows, "%s/flows", dir);
	assert_int_equal(mkdir(flows, 0755), 0);
	char err[512];
	ng_http_config c = {.store_dir = dir, .listen = "127.0.0.1:0"};

	/* without the web build: a page saying how to build the dashboards */
	ng_http_set_assets(NULL, 0);
	ng_http_server *s = ng_http_start(&c, err, sizeof err);
	assert_non_null(s);
	char *r = request(ng_http_port(s), "GET / HTTP/1.0\r\n\r\n");
	assert_non_null(strstr(r, " 200 "));
	assert_non_null(strstr(r, "dashboards were not built"));
	free(r);
	ng_http_stop(s);

	ng_http_set_assets(assets, 2);
	s = ng_http_start(&c, err, sizeof err);
	assert_non_null(s);
	uint16_t port = ng_http_port(s);
	char url[64];
	snprintf(url, sizeof url, "http://127.0.0.1:%u/", port);
	assert_string_equal(ng_http_url(s, err, sizeof err), url);
	r = request(port, "GET / HTTP/1.0\r\n\r\n");
	assert_non_null(strstr(r, "Content-Type: text/html; charset=utf-8"));
	assert_non_null(strstr(r, "\r\n\r\n<html>dashboards</html>"));
	free(r);
	r = request(port, "GET /assets/app.js HTTP/1.0\r\n\r\n");
	assert_non_null(strstr(r, "Content-Type: text/javascript"));
	assert_non_null(strstr(r, "\r\n\r\nconsole.log(1)"));
	free(r);
	/* a client-side route gets the index page; a missing file a 404 */
	r = request(port, "GET /geo HTTP/1.0\r\n\r\n");
	assert_non_null(strstr(r, "<html>dashboards</html>"));
	free(r);
	r = request(port, "GET /assets/missing.css HTTP/1.0\r\n\r\n");
	assert_non_null(strstr(r, " 404 "));
	assert_non_null(strstr(r, "{\"error\":\"not found\""));
	free(r);
	/* read-only */
	r = request(port, "DELETE /api/v1/flows HTTP/1.0\r\n\r\n");
	assert_non_null(strstr(r, " 405 "));
	assert_non_null(strstr(r, "Allow: GET, HEAD"));
	free(r);
	r = request(port, "GET /api/v1/top HTTP/1.0\r\nContent-Length: 5\r\n\r\nhello");
	assert_non_null(strstr(r, " 413 "));
	free(r);
	/* an empty store: an empty top list, zero totals */
	r = request(port, "GET /api/v1/top?field=proto&from=0&to=86400 HTTP/1.0\r\n\r\n");
	assert_non_null(strstr(r, " 200 "));
	assert_non_null(strstr(r, "\"rows\":[\n]"));
	free(r);
	r = request(port, "GET /api/v1/exporters HTTP/1.0\r\n\r\n");
	assert_non_null(strstr(r, " 503 ")); /* no provider given */
	free(r);
	ng_http_stop(s);
	ng_http_set_assets(NULL, 0);
	rmdir(flows);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_loopback_rule), cmocka_unit_test(test_token_equal),
	    cmocka_unit_test(test_token_rules),   cmocka_unit_test(test_host_rule),
	    cmocka_unit_test(test_serves_assets),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
