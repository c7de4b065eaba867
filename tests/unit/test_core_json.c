/*
 * test_core_json.c — the JSON string escaper (core/json.h).
 *
 * The expected bytes are RFC 8259 §7's escapes and RFC 3629's definition of
 * well-formed UTF-8 (its §4 table and the examples of §7); the Python
 * json module, fed the same strings, gives the same text for the valid ones
 * (json.dumps(s, ensure_ascii=False) with \u007f for DEL).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"

/* Both forms of the escaper give `want` for the `len` bytes at `s`. */
static void check(const char *s, size_t len, const char *want)
{
	char buf[NG_JSON_QUOTED_MAX(64)];
	assert_true(len <= 64);
	memset(buf, 'x', sizeof buf);
	size_t n = ng_json_quote(buf, s, len);
	assert_string_equal(buf, want);
	assert_int_equal(n, strlen(want));
	assert_true(n + 1 <= NG_JSON_QUOTED_MAX(len));
	if (memchr(s, 0, len))
		return; /* the stream form takes C strings */
	char *mem = NULL;
	size_t mlen = 0;
	FILE *f = open_memstream(&mem, &mlen);
	assert_non_null(f);
	assert_int_equal(ng_json_put_str(f, s), 0);
	fclose(f);
	assert_string_equal(mem, want);
	free(mem);
}

#define CHECK(lit, want) check(lit, sizeof lit - 1, want)

static void test_plain_and_escapes(void **state)
{
	(void)state;
	CHECK("", "\"\"");
	CHECK("GigabitEthernet0/1", "\"GigabitEthernet0/1\"");
	CHECK("a\"b\\c", "\"a\\\"b\\\\c\"");
	CHECK("\b\f\n\r\t", "\"\\b\\f\\n\\r\\t\"");
	CHECK("\x01\x1f\x7f", "\"\\u0001\\u001f\\u007f\"");
	CHECK("a\0b", "\"a\\u0000b\"");
	CHECK(" ~", "\" ~\"");
}

static void test_utf8(void **state)
{
	(void)state;
	/* RFC 3629 §7's examples: A≢Α. (U+0041 U+2262 U+0391 U+002E), the
	 * Korean "hangugeo" and the Japanese "nihongo", and U+233B4 */
	CHECK("A\xe2\x89\xa2\xce\x91.", "\"A\xe2\x89\xa2\xce\x91.\"");
	CHECK("\xed\x95\x9c\xea\xb5\xad\xec\x96\xb4", "\"\xed\x95\x9c\xea\xb5\xad\xec\x96\xb4\"");
	CHECK("\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", "\"\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\"");
	CHECK("\xef\xbb\xbf\xf0\xa3\x8e\xb4", "\"\xef\xbb\xbf\xf0\xa3\x8e\xb4\"");
	/* the edges of §4's table */
	CHECK("\xc2\x80\xdf\xbf", "\"\xc2\x80\xdf\xbf\"");                 /* U+0080, U+07FF */
	CHECK("\xe0\xa0\x80\xef\xbf\xbf", "\"\xe0\xa0\x80\xef\xbf\xbf\""); /* U+0800, U+FFFF */
	CHECK("\xed\x9f\xbf\xee\x80\x80", "\"\xed\x9f\xbf\xee\x80\x80\""); /* U+D7FF, U+E000 */
	CHECK("\xf0\x90\x80\x80\xf4\x8f\xbf\xbf",
	      "\"\xf0\x90\x80\x80\xf4\x8f\xbf\xbf\""); /* U+10000, U+10FFFF */
}

static void test_invalid_utf8(void **state)
{
	(void)state;
	/* a lone continuation byte, a Latin-1 byte, a cut sequence */
	CHECK("\x80", "\"\\ufffd\"");
	CHECK("caf\xe9", "\"caf\\ufffd\"");
	CHECK("\xe2\x89", "\"\\ufffd\\ufffd\"");
	CHECK("\xe2\x89z", "\"\\ufffd\\ufffdz\"");
	/* overlong forms (§3: "must not" be decoded): C0 AF is '/' */
	CHECK("\xc0\xaf", "\"\\ufffd\\ufffd\"");
	CHECK("\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\"");
	CHECK("\xf0\x80\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	/* a surrogate (U+D800) and past U+10FFFF (U+110000), F5..FF */
	CHECK("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"");
	CHECK("\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	CHECK("\xf5\xff", "\"\\ufffd\\ufffd\"");
}

/* A string longer than the stream form's buffer, with escapes and a
 * multi-byte character across every possible buffer boundary. */
static void test_long_stream(void **state)
{
	(void)state;
	size_t n = 3000;
	char *s = malloc(n + 1), *want = malloc(NG_JSON_QUOTED_MAX(n));
	assert_non_null(s);
	assert_non_null(want);
	size_t w = 0;
	want[w++] = '"';
	for (size_t i = 0; i < n;) {
		if (i % 7 == 0 && i + 2 <= n) {
			memcpy(s + i, "\xc3\xa9", 2); /* é */
			memcpy(want + w, "\xc3\xa9", 2);
			i += 2, w += 2;
		} else if (i % 11 == 0) {
			s[i++] = '\n';
			memcpy(want + w, "\\n", 2);
			w += 2;
		} else {
			s[i++] = 'a';
			want[w++] = 'a';
		}
	}
	s[n] = 0;
	want[w++] = '"';
	want[w] = 0;
	char *mem = NULL;
	size_t mlen = 0;
	FILE *f = open_memstream(&mem, &mlen);
	assert_int_equal(ng_json_put_str(f, s), 0);
	fclose(f);
	assert_string_equal(mem, want);
	char *buf = malloc(NG_JSON_QUOTED_MAX(n));
	assert_int_equal(ng_json_quote(buf, s, n), w);
	assert_string_equal(buf, want);
	free(buf);
	free(mem);
	free(s);
	free(want);
}

/* A stream that fails: the error is reported. */
static void test_write_error(void **state)
{
	(void)state;
	FILE *f = fopen("/dev/full", "w");
	if (!f)
		skip();
	setvbuf(f, NULL, _IONBF, 0);
	assert_int_equal(ng_json_put_str(f, "hello"), -1);
	fclose(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_plain_and_escapes), cmocka_unit_test(test_utf8),
	    cmocka_unit_test(test_invalid_utf8),      cmocka_unit_test(test_long_stream),
	    cmocka_unit_test(test_write_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
