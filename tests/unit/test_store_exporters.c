/*
 * test_store_exporters.c — the exporter counters list (NG_EXPORTER_COUNTERS)
 * and the exporter state file (store/exporters.c): save → load → merge of
 * every counter, damaged files, files of older versions.
 *
 * The rows are filled, and the results checked, by walking the list, so a
 * counter added to it is covered here without a change: written, read back,
 * merged as its kind says.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/addr.h"
#include "store/exporters.h"

static char dir[64], path[128];

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/ng_test_exporters_XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/exporters.json", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	return rmdir(dir);
}

/* Writes `text` as the state file. */
static void write_file(const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* A row whose every counter is set, each to its own value derived from
 * `seed`: COUNTER and GAUGE seed·100 + id, times around 1.7e12 ms, SOURCE
 * a named source other than "none", each error its own count. */
static ng_exporter_stats full_row(const char *addr, uint32_t domain, uint8_t version, uint64_t seed)
{
	ng_exporter_stats s;
	memset(&s, 0, sizeof s);
	assert_true(ng_addr_parse(addr, s.exporter));
	s.domain = domain;
	s.version = version;
	for (int id = 0; id < NG_XC_COUNT; id++) {
		switch (ng_exporter_counters[id].kind) {
		case NG_XK_COUNTER:
		case NG_XK_GAUGE: ng_exporter_counter_set(&s, id, seed * 100 + (uint64_t)id); break;
		case NG_XK_TIME_MIN:
		case NG_XK_TIME_MAX:
			ng_exporter_counter_set(
			    &s, id, UINT64_C(1700000000000) + seed * 1000 + (uint64_t)id);
			break;
		case NG_XK_SOURCE:
			ng_exporter_counter_set(
			    &s, id, 1 + (seed + (uint64_t)id) % (NG_SAMPLING_SOURCE_COUNT - 1));
			break;
		case NG_XK_ERRORS:
			for (int e = 0; e < NG_DERR_COUNT; e++)
				s.errors[e] = seed * 1000 + (uint64_t)e;
			break;
		}
	}
	return s;
}

/* Every entry of the list is usable as a JSON key and a metric name, has a
 * one-line doc (a /metrics HELP text), and a field of its kind's type. */
static void test_list(void **state)
{
	(void)state;
	static const char *const taken[] = {"exporter", "domain", "version", "protocol", "health"};
	for (int id = 0; id < NG_XC_COUNT; id++) {
		const ng_exporter_counter *c = &ng_exporter_counters[id];
		assert_true(c->name[0] != 0);
		assert_int_equal(strspn(c->name, "abcdefghijklmnopqrstuvwxyz_"), strlen(c->name));
		assert_true(c->doc && c->doc[0] && !strpbrk(c->doc, "\\\n\r"));
		for (size_t k = 0; k < sizeof taken / sizeof taken[0]; k++)
			assert_string_not_equal(c->name, taken[k]);
		for (int j = 0; j < id; j++)
			assert_string_not_equal(c->name, ng_exporter_counters[j].name);
		assert_true(c->offset >= offsetof(ng_exporter_stats, version) + 1);
		assert_true(c->offset + c->size <= sizeof(ng_exporter_stats));
		size_t want = c->kind == NG_XK_ERRORS   ? sizeof(uint64_t) * NG_DERR_COUNT
		              : c->kind == NG_XK_GAUGE  ? sizeof(uint32_t)
		              : c->kind == NG_XK_SOURCE ? sizeof(uint8_t)
		                                        : sizeof(uint64_t);
		assert_int_equal(c->size, want);
		if (id) /* in the struct's order, no overlap */
			assert_true(c->offset >= ng_exporter_counters[id - 1].offset +
			                             ng_exporter_counters[id - 1].size);
	}
	/* get and set by the list are the named fields */
	ng_exporter_stats s = full_row("192.0.2.1", 0, 9, 3);
	assert_int_equal(ng_exporter_counter_get(&s, NG_XC_packets), s.packets);
	assert_int_equal(ng_exporter_counter_get(&s, NG_XC_sampling_rate), s.sampling_rate);
	assert_int_equal(ng_exporter_counter_get(&s, NG_XC_sampling_source), s.sampling_source);
	assert_int_equal(ng_exporter_counter_get(&s, NG_XC_last_seen), s.last_seen);
	uint64_t t = 0;
	for (int e = 0; e < NG_DERR_COUNT; e++)
		t += s.errors[e];
	assert_int_equal(ng_exporter_counter_get(&s, NG_XC_errors), t);
	assert_int_equal(ng_exporter_errors_total(&s), t);
	ng_exporter_counter_set(&s, NG_XC_sampling_rate, UINT64_C(0x100000002));
	assert_int_equal(s.sampling_rate, 2); /* cut to the field's width */
}

/* Save, then load: every counter of every row comes back as it was, and
 * the file carries every counter's key. */
static void test_round_trip(void **state)
{
	(void)state;
	ng_exporter_stats rows[3] = {full_row("192.0.2.9", 0, 9, 1),
	                             full_row("2001:db8::1", 7, 10, 2),
	                             full_row("198.51.100.4", 3, 0x50, 3)};
	rows[2].first_seen = 0; /* never: written as "" */
	ng_exporters_file f = {.rows = rows, .n = 3, .started_ms = 11, .updated_ms = 22};
	f.listener = (ng_listener_stats){
	    .datagrams = 1, .bytes = 2, .drops = 3, .truncated = 4, .errors = 5};
	f.store = (ng_store_writer_stats){
	    .rows = 6, .segments = 7, .bytes = 8, .errors = 9, .dropped = 10};
	f.nworkers = 2; /* collect --workers 2 */
	f.workers[0] = (ng_worker_stats){.records = 31, .datagrams = 32, .drops = 33};
	f.workers[1] = (ng_worker_stats){.records = 41, .datagrams = 42, .drops = 43};
	assert_int_equal(ng_exporters_save(path, &f), 0);
	char tmp[160];
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	assert_int_not_equal(access(tmp, F_OK), 0); /* renamed, nothing left behind */

	ng_exporters_file g;
	char err[256] = "";
	assert_int_equal(ng_exporters_load(path, &g, err, sizeof err), 0);
	assert_int_equal(g.n, 3);
	for (size_t i = 0; i < 3; i++)
		assert_memory_equal(&g.rows[i], &rows[i], sizeof rows[i]);
	assert_memory_equal(&g.listener, &f.listener, sizeof f.listener);
	assert_memory_equal(&g.store, &f.store, sizeof f.store);
	assert_int_equal(g.started_ms, 11);
	assert_int_equal(g.updated_ms, 22);
	assert_int_equal(g.nworkers, 2);
	assert_memory_equal(g.workers, f.workers, 2 * sizeof f.workers[0]);
	ng_exporters_free(&g);
	assert_null(g.rows);

	/* every key of the list, written as its kind says */
	FILE *fp = fopen(path, "r");
	static char text[1 << 16];
	size_t n = fread(text, 1, sizeof text - 1, fp);
	fclose(fp);
	text[n] = 0;
	for (int id = 0; id < NG_XC_COUNT; id++) {
		const ng_exporter_counter *c = &ng_exporter_counters[id];
		char key[96];
		snprintf(key, sizeof key, "\"%s\":", c->name);
		assert_non_null(strstr(text, key));
		if (c->kind == NG_XK_TIME_MIN || c->kind == NG_XK_TIME_MAX)
			snprintf(key, sizeof key, "\"%s_ms\":", c->name);
		else if (c->kind == NG_XK_ERRORS)
			snprintf(key, sizeof key, "\"%s_total\":", c->name);
		assert_non_null(strstr(text, key));
	}
	assert_non_null(strstr(text, "\"first_seen\":\"\",\"first_seen_ms\":0,"));
	assert_non_null(strstr(text, "\"protocol\":\"sFlow v5\""));
	assert_null(strstr(text, "unsupported"));
}

/* What ng_exporter_stats_add makes of d + s for counter `id`. */
static void check_added(const ng_exporter_stats *sum, const ng_exporter_stats *d,
                        const ng_exporter_stats *s, int id, bool last_from_s)
{
	uint64_t a = ng_exporter_counter_get(d, id), b = ng_exporter_counter_get(s, id);
	uint64_t got = ng_exporter_counter_get(sum, id);
	switch (ng_exporter_counters[id].kind) {
	case NG_XK_COUNTER: assert_int_equal(got, a + b); break;
	case NG_XK_ERRORS:
		for (int e = 0; e < NG_DERR_COUNT; e++)
			assert_int_equal(sum->errors[e], d->errors[e] + s->errors[e]);
		break;
	case NG_XK_TIME_MIN: assert_int_equal(got, !a ? b : !b ? a : a < b ? a : b); break;
	case NG_XK_TIME_MAX: assert_int_equal(got, a > b ? a : b); break;
	case NG_XK_GAUGE:
	case NG_XK_SOURCE: assert_int_equal(got, last_from_s ? b : a); break;
	}
}

/* ng_exporter_stats_add (the decoder's totals): counters add up, times
 * widen, last values stay. */
static void test_stats_add(void **state)
{
	(void)state;
	ng_exporter_stats d = full_row("192.0.2.1", 0, 9, 4), s = full_row("192.0.2.2", 1, 10, 7);
	ng_exporter_stats sum = d;
	ng_exporter_stats_add(&sum, &s);
	for (int id = 0; id < NG_XC_COUNT; id++)
		check_added(&sum, &d, &s, id, false);
	assert_int_equal(sum.domain, 0);
	assert_int_equal(sum.version, 9);
	/* a zero time is "never": it does not win the minimum */
	ng_exporter_stats z;
	memset(&z, 0, sizeof z);
	ng_exporter_stats_add(&z, &s);
	for (int id = 0; id < NG_XC_COUNT; id++)
		if (ng_exporter_counters[id].kind != NG_XK_GAUGE &&
		    ng_exporter_counters[id].kind != NG_XK_SOURCE)
			assert_int_equal(ng_exporter_counter_get(&z, id),
			                 ng_exporter_counter_get(&s, id));
}

/* Merging an earlier run into this one, row by row and kind by kind. */
static void test_merge(void **state)
{
	(void)state;
	ng_exporter_stats base_rows[2] = {full_row("192.0.2.9", 0, 9, 5),
	                                  full_row("2001:db8::1", 7, 10, 6)};
	ng_exporters_file base = {.rows = base_rows, .n = 2, .started_ms = 100};
	base.listener.datagrams = 30;
	base.listener.drops = 5;

	/* this run: the first row again (with its own reading), a new row */
	ng_exporter_stats now[2] = {full_row("192.0.2.9", 0, 9, 8),
	                            full_row("203.0.113.5", 0, 5, 9)};
	ng_exporters_file f = {.rows = malloc(sizeof now), .n = 2, .started_ms = 200};
	memcpy(f.rows, now, sizeof now);
	f.listener.datagrams = 4;
	assert_int_equal(ng_exporters_merge(&f, &base), 0);
	assert_int_equal(f.n, 3);
	for (int id = 0; id < NG_XC_COUNT; id++)
		check_added(&f.rows[0], &now[0], &base_rows[0], id, false);
	assert_memory_equal(&f.rows[1], &now[1], sizeof now[1]);       /* not in base */
	assert_memory_equal(&f.rows[2], &base_rows[1], sizeof now[1]); /* only in base */
	assert_int_equal(f.listener.datagrams, 34);
	assert_int_equal(f.listener.drops, 5);
	assert_int_equal(f.started_ms, 100);
	ng_exporters_free(&f);

	/* a row that has seen no rate (and no protocol) yet takes the earlier
	 * run's reading, and its version when that run was seen later */
	ng_exporter_stats fresh = full_row("192.0.2.9", 0, 0, 1);
	for (int id = 0; id < NG_XC_COUNT; id++)
		if (ng_exporter_counters[id].kind == NG_XK_GAUGE)
			ng_exporter_counter_set(&fresh, id, 0);
	fresh.last_seen = 1;
	f = (ng_exporters_file){.rows = malloc(sizeof fresh), .n = 1};
	f.rows[0] = fresh;
	assert_int_equal(ng_exporters_merge(&f, &base), 0);
	for (int id = 0; id < NG_XC_COUNT; id++)
		check_added(&f.rows[0], &fresh, &base_rows[0], id, true);
	assert_int_equal(f.rows[0].version, 9);
	ng_exporters_free(&f);
}

/* A file of an older nagare: without the keys of later counters (they read
 * 0), with "unsupported" (removed), an unknown error name, an unknown
 * sampling source (read as "none"), keys in another order. */
static void test_old_file(void **state)
{
	(void)state;
	write_file(
	    "{\"format\":\"nagare-exporters/1\",\"updated_ms\":5,\"exporters\":[\n"
	    "{\"version\":9,\"domain\":3,\"exporter\":\"192.0.2.1\",\"packets\":10,"
	    "\"records\":300,\"unsupported\":12,\"errors\":{\"set_overrun\":2,"
	    "\"no_such_error\":9},\"errors_total\":11,\"first_seen_ms\":1000,"
	    "\"sampling_rate\":64,\"sampling_source\":\"telepathy\",\"future\":[1,{\"a\":null}]}\n"
	    "]}\n");
	ng_exporters_file g;
	char err[256] = "";
	assert_int_equal(ng_exporters_load(path, &g, err, sizeof err), 0);
	assert_int_equal(g.n, 1);
	const ng_exporter_stats *s = &g.rows[0];
	assert_int_equal(s->version, 9);
	assert_int_equal(s->domain, 3);
	assert_int_equal(s->packets, 10);
	assert_int_equal(s->records, 300);
	assert_int_equal(s->errors[NG_DERR_SET_OVERRUN], 2);
	assert_int_equal(ng_exporter_errors_total(s), 2);
	assert_int_equal(s->first_seen, 1000);
	assert_int_equal(s->sampling_rate, 64);
	assert_int_equal(s->sampling_source, NG_SAMPLING_NONE);
	assert_int_equal(s->options_records + s->held + s->lost_samples + s->counter_samples +
	                     s->discards + s->last_seen,
	                 0);
	assert_int_equal(g.updated_ms, 5);
	ng_exporters_free(&g);
}

/* A damaged file is refused whole, with the path, what is wrong and the
 * byte offset (from 0); a missing one is ENOENT. */
static void test_damaged(void **state)
{
	(void)state;
	ng_exporters_file g;
	char err[256];
	assert_int_equal(ng_exporters_load("/nonexistent/exporters.json", &g, err, sizeof err), -1);
	assert_int_equal(errno, ENOENT);

	write_file("{\"exporters\":[{\"exporter\":\"192.0.2.1\",\"packets\":-4}]}");
	assert_int_equal(ng_exporters_load(path, &g, err, sizeof err), -1);
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(err, path));
	/* the '-' is at offset 48, counted from 0 */
	assert_non_null(
	    strstr(err, "not an exporter state file: expected an unsigned integer at byte 48"));

	static const struct {
		const char *text, *why;
	} bad[] = {
	    {"", "expected an object"},
	    {"[]", "expected an object"},
	    {"{\"exporters\":[{\"exporter\":\"nowhere\"}]}", "exporter is not an address"},
	    {"{\"exporters\":[{\"packets\":99999999999999999999}]}", "integer out of range"},
	    {"{\"exporters\":[{\"errors\":{\"set_overrun\":\"x\"}}]}",
	     "expected an unsigned integer"},
	    {"{\"exporters\":[{\"sampling_source\":4}]}", "expected a string"},
	    {"{\"exporters\":[{\"exporter\":\"192.0.2.1}]}", "unterminated string"},
	    {"{\"exporters\":[{}] x", "expected ',' or '}'"},
	    {"{\"exporters\":[]} {}", "text after the object"},
	    {"{\"x\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
	     "]]}",
	     "nested too deeply"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_int_equal(
		    ng_exporters_parse(bad[i].text, strlen(bad[i].text), "t", &g, err, sizeof err),
		    -1);
		assert_int_equal(errno, EINVAL);
		if (!strstr(err, bad[i].why))
			fail_msg("input %zu: %s", i, err);
		assert_null(g.rows);
	}

	/* every cut of a good file: refused (never half-read), or whole */
	ng_exporter_stats rows[2] = {full_row("192.0.2.9", 0, 9, 1),
	                             full_row("2001:db8::1", 7, 10, 2)};
	ng_exporters_file f = {.rows = rows, .n = 2, .started_ms = 1, .updated_ms = 2};
	assert_int_equal(ng_exporters_save(path, &f), 0);
	FILE *fp = fopen(path, "r");
	static char text[1 << 16];
	size_t n = fread(text, 1, sizeof text, fp);
	fclose(fp);
	size_t whole = n;
	while (whole && text[whole - 1] == '\n')
		whole--;
	for (size_t len = 0; len < n; len++) {
		int rc = ng_exporters_parse(text, len, "t", &g, err, sizeof err);
		if (len < whole) {
			assert_int_equal(rc, -1);
			assert_non_null(strstr(err, "t: not an exporter state file: "));
		} else {
			assert_int_equal(rc, 0);
			assert_int_equal(g.n, 2);
			ng_exporters_free(&g);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_list),
	    cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
	    cmocka_unit_test(test_stats_add),
	    cmocka_unit_test(test_merge),
	    cmocka_unit_test_setup_teardown(test_old_file, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_damaged, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
