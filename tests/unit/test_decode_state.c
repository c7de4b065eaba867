/*
 * test_decode_state.c — the decoder's template state file: a restarted
 * decoder that loads it decodes data sets (and applies option sampling
 * rates) at once; a missing file is no error; a corrupt one is EINVAL and
 * changes nothing.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_decode_helpers.h"

static char path[64];

static int setup(void **state)
{
	(void)state;
	snprintf(path, sizeof path, "/tmp/ng-decode-state-%d", (int)getpid());
	unlink(path);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	return 0;
}

/* v9 template 300 (src, dst, bytes, FLOW_SAMPLER_ID) and options template
 * 301 (scope System; FLOW_SAMPLER_ID, SAMPLING_INTERVAL) with data
 * sampler 3 → 1 in 50; IPFIX template 256 in domain 4. */
static void teach(ng_decoder *d)
{
	ng_flow_batch b = {0};
	struct tb t;
	tb_v9(&t, 3, 1000, 1700000000, 0, 7);
	size_t s = tb_set(&t, 0);
	tb_u16(&t, 300), tb_u16(&t, 4);
	tb_u16(&t, 8), tb_u16(&t, 4), tb_u16(&t, 12), tb_u16(&t, 4);
	tb_u16(&t, 1), tb_u16(&t, 4), tb_u16(&t, 48), tb_u16(&t, 1);
	tb_set_end(&t, s);
	s = tb_set(&t, 1);
	tb_u16(&t, 301), tb_u16(&t, 4), tb_u16(&t, 8);
	tb_u16(&t, 1), tb_u16(&t, 4);
	tb_u16(&t, 48), tb_u16(&t, 1), tb_u16(&t, 34), tb_u16(&t, 4);
	tb_u16(&t, 0); /* padding */
	tb_set_end(&t, s);
	s = tb_set(&t, 301);
	tb_u32(&t, 0), tb_u8(&t, 3), tb_u32(&t, 50);
	tb_set_end(&t, s);
	tb_decode(d, &t, 1, &b);
	tb_ipfix(&t, 1700000000, 0, 4);
	s = tb_set(&t, 2);
	tb_u16(&t, 256), tb_u16(&t, 2);
	tb_u16(&t, 0x8000 | 5), tb_u16(&t, 4), tb_u32(&t, 12345); /* enterprise */
	tb_u16(&t, 8), tb_u16(&t, 4);
	tb_set_end(&t, s);
	tb_ipfix_end(&t);
	tb_decode(d, &t, 1, &b);
	ng_flow_batch_free(&b);
}

/* Data for both templates; returns records decoded. */
static size_t send_data(ng_decoder *d, ng_flow_batch *b)
{
	struct tb t;
	tb_v9(&t, 1, 1000, 1700000000, 1, 7);
	size_t s = tb_set(&t, 300);
	tb_v4(&t, 10, 0, 0, 1), tb_v4(&t, 10, 0, 0, 2), tb_u32(&t, 40), tb_u8(&t, 3);
	tb_set_end(&t, s);
	size_t n = tb_decode(d, &t, 2, b);
	tb_ipfix(&t, 1700000000, 0, 4);
	s = tb_set(&t, 256);
	tb_u32(&t, 0), tb_v4(&t, 10, 0, 0, 9);
	tb_set_end(&t, s);
	tb_ipfix_end(&t);
	return n + tb_decode(d, &t, 2, b);
}

static void test_state_round_trip(void **state)
{
	(void)state;
	ng_decoder *a = ng_decoder_new(NULL);
	teach(a);
	assert_int_equal(ng_decoder_save(a, path), 0);
	assert_int_equal(access(path, F_OK), 0);
	char tmp[80];
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	assert_int_equal(access(tmp, F_OK), -1); /* renamed away */
	ng_decoder_free(a);

	ng_decoder *b = ng_decoder_new(NULL);
	assert_int_equal(ng_decoder_load(b, path), 0);
	ng_flow_batch fl = {0};
	assert_int_equal(send_data(b, &fl), 2);
	assert_int_equal(th_totals(b).template_misses, 0);
	assert_string_equal(th_addr(fl.flows[0].src_addr), "10.0.0.1");
	assert_int_equal(fl.flows[0].sampling_rate, 50);
	assert_int_equal(fl.flows[0].sampling_source, NG_SAMPLING_OPTIONS);
	assert_int_equal(fl.flows[0].bytes, 2000);
	assert_string_equal(th_addr(fl.flows[1].src_addr), "10.0.0.9");
	assert_int_equal(fl.flows[1].observation_domain, 4);
	ng_flow_batch_free(&fl);
	ng_decoder_free(b);
}

static void test_state_missing_and_corrupt(void **state)
{
	(void)state;
	ng_decoder *d = ng_decoder_new(NULL);
	assert_int_equal(ng_decoder_load(d, "/nonexistent/ng-state"), 0);
	ng_decoder *a = ng_decoder_new(NULL);
	teach(a);
	assert_int_equal(ng_decoder_save(a, path), 0);
	ng_decoder_free(a);
	size_t n = 0;
	uint8_t *img = th_read(path, &n);
	assert_non_null(img);
	/* every single-byte corruption and every truncation is refused */
	for (size_t i = 0; i < n; i += 7) {
		FILE *f = fopen(path, "wb");
		img[i] ^= 0x40;
		fwrite(img, 1, n, f);
		fclose(f);
		img[i] ^= 0x40;
		errno = 0;
		assert_int_equal(ng_decoder_load(d, path), -1);
		assert_int_equal(errno, EINVAL);
	}
	for (size_t len = 0; len < n; len += 5) {
		FILE *f = fopen(path, "wb");
		fwrite(img, 1, len, f);
		fclose(f);
		assert_int_equal(ng_decoder_load(d, path), -1);
	}
	/* unchanged: data sets still find no template */
	ng_flow_batch fl = {0};
	assert_int_equal(send_data(d, &fl), 0);
	assert_int_equal(th_totals(d).template_misses, 2);
	free(img);
	ng_flow_batch_free(&fl);
	ng_decoder_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_state_round_trip, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_state_missing_and_corrupt, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
