/*
 * test_enrich_reload.c — swapping table sets under a thread that applies
 * them (the receive thread's enter / apply / leave), as SIGHUP does: every
 * batch is enriched whole by one set (all its records agree), the sets
 * alternate as published, and no set is freed while in use (run under
 * AddressSanitizer: build-…-san).  Also: the reloader thread rebuilds on
 * *hup and when a watched file is replaced, and a replaced database's
 * flat lookup tables (src/enrich/geoflat.c) are rebuilt from the new file.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/addr.h"
#include "core/strtab.h"
#include "enrich/enrich.h"

/* Two sets that name 10.1.2.3 differently. */
static ng_enricher *make(const char *name)
{
	ng_config c = {0};
	ng_cfg_network n = {.name = (char *)name};
	assert_true(ng_prefix_parse("10.1.0.0/16", n.net, &n.plen));
	c.nets = &n;
	c.nnets = 1;
	c.no_services = true;
	char err[256];
	ng_enricher *e = ng_enricher_build(&c, err, sizeof err);
	assert_non_null(e);
	return e;
}

struct worker {
	ng_enrich_slot *slot;
	atomic_bool stop;
	uint64_t batches, mixed;
	uint32_t seen_a, seen_b;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	ng_flow f[64];
	uint32_t a = ng_intern_cstr("set-a"), b = ng_intern_cstr("set-b");
	while (!atomic_load(&w->stop)) {
		memset(f, 0, sizeof f);
		for (int i = 0; i < 64; i++)
			ng_addr_parse("10.1.2.3", f[i].src_addr);
		ng_enricher *e = ng_enrich_enter(w->slot);
		if (e)
			ng_enricher_apply(e, f, 64);
		ng_enrich_leave(w->slot);
		for (int i = 1; i < 64; i++)
			if (f[i].src_net != f[0].src_net)
				w->mixed++;
		w->seen_a += f[0].src_net == a;
		w->seen_b += f[0].src_net == b;
		w->batches++;
	}
	return NULL;
}

static void test_swap_under_load(void **state)
{
	(void)state;
	ng_enrich_slot slot;
	memset(&slot, 0, sizeof slot);
	pthread_mutex_init(&slot.hold, NULL);
	atomic_store(&slot.cur, make("set-a"));
	struct worker w = {.slot = &slot};
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, work, &w), 0);
	for (int i = 0; i < 40; i++) {
		usleep(2000);
		ng_enrich_swap(&slot, make(i % 2 ? "set-a" : "set-b"));
	}
	usleep(2000);
	atomic_store(&w.stop, true);
	pthread_join(t, NULL);
	atomic_store(&slot.closed, true);
	ng_enricher_free(atomic_exchange(&slot.cur, NULL));
	pthread_mutex_destroy(&slot.hold);
	print_message("  %" PRIu64 " batches, set-a %u, set-b %u\n", w.batches, w.seen_a, w.seen_b);
	assert_int_equal(w.mixed, 0);
	assert_true(w.seen_a > 0 && w.seen_b > 0);
	assert_int_equal(w.seen_a + w.seen_b, w.batches);
}

static int builds;
static ng_enricher *rebuild(void *arg, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	builds++;
	ng_config c = {0};
	c.path = arg; /* watched */
	c.no_services = true;
	return ng_enricher_build(&c, err, errlen);
}

static void test_reloader(void **state)
{
	(void)state;
	char path[] = "/tmp/ng_enrich_reload_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	ng_enrich_slot slot;
	memset(&slot, 0, sizeof slot);
	pthread_mutex_init(&slot.hold, NULL);
	char err[64];
	atomic_store(&slot.cur, rebuild(path, err, sizeof err));
	builds = 0;
	static volatile sig_atomic_t hup;
	ng_reloader *r = ng_reloader_start(&slot, rebuild, path, &hup);
	assert_non_null(r);
	hup = 1;
	for (int i = 0; i < 100 && ng_reloader_done(r) < 1; i++) {
		usleep(20000);
		ng_enrich_leave(&slot); /* the receive thread's idle tick */
	}
	assert_int_equal(ng_reloader_done(r), 1);
	char tmp[64];
	snprintf(tmp, sizeof tmp, "%s.new", path);
	FILE *f = fopen(tmp, "w");
	fputs("enrich: {}\n", f);
	fclose(f);
	assert_int_equal(rename(tmp, path), 0); /* a new inode: noticed in ~1 s */
	for (int i = 0; i < 150 && ng_reloader_done(r) < 2; i++) {
		usleep(20000);
		ng_enrich_leave(&slot);
	}
	assert_int_equal(ng_reloader_done(r), 2);
	atomic_store(&slot.closed, true);
	ng_reloader_stop(r);
	ng_enricher_free(atomic_exchange(&slot.cur, NULL));
	pthread_mutex_destroy(&slot.hold);
	unlink(path);
}

static ng_enricher *rebuild_geo(void *arg, char *err, size_t errlen)
{
	ng_config c = {0};
	c.geoip_db = arg; /* watched */
	c.no_services = true;
	return ng_enricher_build(&c, err, errlen);
}

static void copy_file(const char *from, const char *to)
{
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	assert_non_null(in);
	assert_non_null(out);
	char buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, in)) > 0)
		assert_int_equal(fwrite(buf, 1, n, out), n);
	fclose(in);
	assert_int_equal(fclose(out), 0);
}

/* City of 81.2.69.142 (GeoIP2-City-Test.source.json: ::81.2.69.142/127
 * London) by the slot's current set, and its description. */
static const char *city_now(ng_enrich_slot *slot, char *desc, size_t len)
{
	ng_flow f = {0};
	assert_true(ng_addr_parse("81.2.69.142", f.src_addr));
	ng_enricher *e = ng_enrich_enter(slot);
	ng_enricher_apply(e, &f, 1);
	ng_enricher_describe(e, desc, len);
	ng_enrich_leave(slot);
	return ng_str(f.src_city);
}

static void test_reload_rebuilds_flat(void **state)
{
	(void)state;
	const char *td = getenv("NG_TESTDATA");
	char country[512], city[512];
	snprintf(country, sizeof country, "%s/mmdb/GeoLite2-Country-Test.mmdb", td ? td : ".");
	snprintf(city, sizeof city, "%s/mmdb/GeoIP2-City-Test.mmdb", td ? td : ".");
	if (!td || access(country, R_OK) || access(city, R_OK)) {
		print_message("NG_TESTDATA/mmdb absent: skipped\n");
		skip();
	}
	char path[] = "/tmp/ng_enrich_geo_XXXXXX", tmp[64], desc[1024];
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	copy_file(country, path);
	ng_enrich_slot slot;
	memset(&slot, 0, sizeof slot);
	pthread_mutex_init(&slot.hold, NULL);
	char err[512];
	atomic_store(&slot.cur, rebuild_geo(path, err, sizeof err));
	assert_non_null(atomic_load(&slot.cur));
	assert_string_equal(city_now(&slot, desc, sizeof desc), ""); /* a country database */
	assert_non_null(strstr(desc, "lookup tables"));
	static volatile sig_atomic_t hup;
	ng_reloader *r = ng_reloader_start(&slot, rebuild_geo, path, &hup);
	assert_non_null(r);
	usleep(500000); /* the thread first notes the files' identities: then replace */
	snprintf(tmp, sizeof tmp, "%s.new", path);
	copy_file(city, tmp);
	assert_int_equal(rename(tmp, path), 0); /* replaced: rebuilt on the reloader thread */
	for (int i = 0; i < 250 && ng_reloader_done(r) < 1; i++) {
		usleep(20000);
		ng_enrich_leave(&slot);
	}
	assert_int_equal(ng_reloader_done(r), 1);
	assert_string_equal(city_now(&slot, desc, sizeof desc), "London");
	print_message("  after the reload: %s\n", desc);
	assert_non_null(strstr(desc, "lookup tables"));
	atomic_store(&slot.closed, true);
	ng_reloader_stop(r);
	ng_enricher_free(atomic_exchange(&slot.cur, NULL));
	pthread_mutex_destroy(&slot.hold);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_swap_under_load),
	    cmocka_unit_test(test_reloader),
	    cmocka_unit_test(test_reload_rebuilds_flat),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
