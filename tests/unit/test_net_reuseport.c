/*
 * test_net_reuseport.c — the workers' listeners (ng_listener_open_workers):
 * every datagram of one source address reaches one worker, whatever its
 * source port, and that worker is the one ng_reuseport_worker names (the
 * function the collector uses to hand saved templates to their worker).
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "core/addr.h"
#include "e2e_util.h"
#include "net/listener.h"
#include "net/reuseport.h"

/* The worker whose listener holds the next datagram, -1 when none does
 * (each listener polled without waiting); its source into src. */
static int who_got(ng_listener **l, unsigned n, uint8_t src[16])
{
	for (unsigned w = 0; w < n; w++) {
		const ng_datagram *dgs;
		int got = ng_listener_recv(l[w], 0, &dgs);
		assert_true(got >= 0);
		if (got > 0) {
			assert_int_equal(got, 1);
			memcpy(src, dgs[0].exporter, 16);
			return (int)w;
		}
	}
	return -1;
}

/* `n` workers on 127.0.0.1: 40 source addresses (127.0.0.1-127.0.0.40),
 * each sending 4 datagrams from 4 fresh source ports. */
static void check_workers(unsigned n)
{
	char err[256] = "";
	const char *spec[] = {"127.0.0.1:0"};
	ng_listener *l[NG_REUSEPORT_MAX];
	assert_int_equal(ng_listener_open_workers(spec, 1, n, l, err, sizeof err), 0);
	for (unsigned w = 1; w < n; w++)
		assert_int_equal(ng_listener_port(l[w], 0), ng_listener_port(l[0], 0));
	unsigned per[NG_REUSEPORT_MAX] = {0};
	for (uint32_t a = 1; a <= 40; a++) {
		int first = -1;
		for (int k = 0; k < 4; k++) {
			eu_send_udp(0x7f000000u | a, ng_listener_port(l[0], 0), "x", 1);
			uint8_t src[16];
			int w = -1;
			for (int tries = 0; tries < 100 && w < 0; tries++) {
				w = who_got(l, n, src);
				if (w < 0)
					eu_sleep_ms(1);
			}
			assert_true(w >= 0);
			uint8_t want[16], v4[4] = {127, 0, 0, (uint8_t)a};
			ng_addr_from_v4(want, v4);
			assert_memory_equal(src, want, 16);
			assert_int_equal((uint32_t)w, ng_reuseport_worker(src, n));
			if (first < 0)
				first = w;
			assert_int_equal(w, first); /* the address, not the port */
		}
		per[first]++;
	}
	for (unsigned w = 0; w < n; w++) {
		assert_true(per[w] > 0); /* 40 addresses spread over every worker */
		ng_listener_close(l[w]);
	}
}

static void test_two_workers(void **state)
{
	(void)state;
	check_workers(2);
}

static void test_three_workers(void **state)
{
	(void)state;
	check_workers(3);
}

/* One worker is the plain listener: no SO_REUSEPORT, so a second
 * collector on the same port fails as before instead of sharing it. */
static void test_one_worker_exclusive(void **state)
{
	(void)state;
	char err[256] = "";
	const char *spec[] = {"127.0.0.1:0"};
	ng_listener *a, *b;
	assert_int_equal(ng_listener_open_workers(spec, 1, 1, &a, err, sizeof err), 0);
	char again[64];
	snprintf(again, sizeof again, "127.0.0.1:%u", ng_listener_port(a, 0));
	const char *spec2[] = {again};
	assert_int_equal(ng_listener_open_workers(spec2, 1, 1, &b, err, sizeof err), -1);
	assert_non_null(strstr(err, "Address already in use"));
	ng_listener_close(a);
}

/* The mirror's values, fixed: a change of the hash must change both the
 * program and this (saved templates follow it). */
static void test_mirror(void **state)
{
	(void)state;
	uint8_t a[16], b[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 1}, v4[4] = {192, 0, 2, 1};
	ng_addr_from_v4(a, v4);
	assert_int_equal(ng_reuseport_worker(a, 1), 0);
	uint32_t h = 0xc0000201u * 0x9E3779B1u;
	h ^= h >> 16;
	assert_int_equal(ng_reuseport_worker(a, 7), h % 7);
	uint32_t w = 0x20010db8u ^ 1u;
	h = w * 0x9E3779B1u;
	h ^= h >> 16;
	assert_int_equal(ng_reuseport_worker(b, 5), h % 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_two_workers),
	    cmocka_unit_test(test_three_workers),
	    cmocka_unit_test(test_one_worker_exclusive),
	    cmocka_unit_test(test_mirror),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
