/*
 * test_net_listener.c — the UDP listener on loopback: bind forms, both
 * families, IPv4 on "0.0.0.0" and on a dual "::" socket, batches, source
 * addresses and ports as the sender's own socket reports them.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/addr.h"
#include "core/timefmt.h"
#include "net/listener.h"

static ng_listener *open_one(const char *spec)
{
	char err[256] = "";
	const char *specs[] = {spec};
	ng_listener *l = ng_listener_open(specs, 1, err, sizeof err);
	if (!l)
		print_message("open %s: %s\n", spec, err);
	return l;
}

/* Sends `len` bytes from a fresh socket of `family` bound to `src` to
 * dst:port; returns the sender's source port. */
static uint16_t send_from(int family, const char *src, const char *dst, uint16_t port,
                          const void *data, size_t len, int count)
{
	int fd = socket(family, SOCK_DGRAM, 0);
	assert_true(fd >= 0);
	struct sockaddr_storage a = {0}, d = {0};
	socklen_t sl;
	if (family == AF_INET) {
		struct sockaddr_in *s = (void *)&a, *t = (void *)&d;
		s->sin_family = t->sin_family = AF_INET;
		assert_int_equal(inet_pton(AF_INET, src, &s->sin_addr), 1);
		assert_int_equal(inet_pton(AF_INET, dst, &t->sin_addr), 1);
		t->sin_port = htons(port);
		sl = sizeof *s;
	} else {
		struct sockaddr_in6 *s = (void *)&a, *t = (void *)&d;
		s->sin6_family = t->sin6_family = AF_INET6;
		assert_int_equal(inet_pton(AF_INET6, src, &s->sin6_addr), 1);
		assert_int_equal(inet_pton(AF_INET6, dst, &t->sin6_addr), 1);
		t->sin6_port = htons(port);
		sl = sizeof *s;
	}
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sl), 0);
	for (int i = 0; i < count; i++)
		assert_int_equal(sendto(fd, data, len, 0, (struct sockaddr *)&d, sl), (ssize_t)len);
	struct sockaddr_storage me;
	socklen_t ml = sizeof me;
	getsockname(fd, (struct sockaddr *)&me, &ml);
	close(fd);
	return ntohs(family == AF_INET ? ((struct sockaddr_in *)&me)->sin_port
	                               : ((struct sockaddr_in6 *)&me)->sin6_port);
}

/* Receives until `want` datagrams arrived or 2 s passed. */
static int recv_all(ng_listener *l, const ng_datagram **dgs, int want)
{
	int got = 0;
	for (int tries = 0; tries < 20 && got < want; tries++) {
		int r = ng_listener_recv(l, 100, dgs);
		assert_true(r >= 0);
		got += r;
		if (r)
			return r;
	}
	return got;
}

static void check_one(const char *listen, int family, const char *src, const char *dst,
                      const char *want_exporter)
{
	ng_listener *l = open_one(listen);
	assert_non_null(l);
	assert_int_equal(ng_listener_count(l), 1);
	uint16_t port = ng_listener_port(l, 0);
	assert_true(port > 0);
	static const uint8_t payload[] = {0x00, 0x0a, 0x00, 0x10, 1, 2, 3, 4, 5, 6, 7, 8, 9};
	uint64_t before = ng_now_ms();
	uint16_t sport = send_from(family, src, dst, port, payload, sizeof payload, 1);
	const ng_datagram *dgs;
	int n = recv_all(l, &dgs, 1);
	assert_int_equal(n, 1);
	assert_int_equal(dgs[0].len, sizeof payload);
	assert_memory_equal(dgs[0].data, payload, sizeof payload);
	char buf[NG_ADDR_STRLEN];
	assert_string_equal(ng_addr_format(dgs[0].exporter, buf), want_exporter);
	assert_int_equal(dgs[0].exporter_port, sport);
	assert_true(dgs[0].time_received >= before && dgs[0].time_received <= ng_now_ms());
	ng_listener_stats st;
	ng_listener_get_stats(l, &st);
	assert_int_equal(st.datagrams, 1);
	assert_int_equal(st.bytes, sizeof payload);
	assert_int_equal(st.drops, 0);
	ng_listener_close(l);
}

static void test_ipv4_loopback(void **state)
{
	(void)state;
	check_one("127.0.0.1:0", AF_INET, "127.0.0.1", "127.0.0.1", "127.0.0.1");
}

static void test_ipv6_loopback(void **state)
{
	(void)state;
	check_one("[::1]:0", AF_INET6, "::1", "::1", "::1");
}

/* "0.0.0.0" must receive IPv4 (a known failure of another collector). */
static void test_any_v4(void **state)
{
	(void)state;
	check_one("0.0.0.0:0", AF_INET, "127.0.0.1", "127.0.0.1", "127.0.0.1");
}

/* "[::]" and ":PORT" take both families; IPv4 arrives IPv4-mapped. */
static void test_dual_stack(void **state)
{
	(void)state;
	check_one("[::]:0", AF_INET, "127.0.0.1", "127.0.0.1", "127.0.0.1");
	check_one("[::]:0", AF_INET6, "::1", "::1", "::1");
	check_one(":0", AF_INET, "127.0.0.1", "127.0.0.1", "127.0.0.1");
	check_one("0", AF_INET6, "::1", "::1", "::1");
}

/* 100 datagrams arrive as a full batch of 64, then the other 36. */
static void test_batches(void **state)
{
	(void)state;
	ng_listener *l = open_one("127.0.0.1:0");
	assert_non_null(l);
	uint8_t payload[1400];
	memset(payload, 0x5a, sizeof payload);
	send_from(AF_INET, "127.0.0.1", "127.0.0.1", ng_listener_port(l, 0), payload,
	          sizeof payload, 100);
	const ng_datagram *dgs;
	int total = 0, first = -1;
	for (int tries = 0; tries < 20 && total < 100; tries++) {
		int r = ng_listener_recv(l, 100, &dgs);
		assert_true(r >= 0 && r <= NG_LISTEN_BATCH);
		if (first < 0 && r)
			first = r;
		for (int i = 0; i < r; i++)
			assert_int_equal(dgs[i].len, sizeof payload);
		total += r;
	}
	assert_int_equal(first, NG_LISTEN_BATCH);
	assert_int_equal(total, 100);
	ng_listener_close(l);
}

static void test_two_sockets(void **state)
{
	(void)state;
	char err[256];
	const char *specs[] = {"127.0.0.1:0", "[::1]:0"};
	ng_listener *l = ng_listener_open(specs, 2, err, sizeof err);
	assert_non_null(l);
	assert_int_equal(ng_listener_count(l), 2);
	char name[64];
	assert_non_null(strstr(ng_listener_name(l, 1, name, sizeof name), "[::1]:"));
	send_from(AF_INET6, "::1", "::1", ng_listener_port(l, 1), "xy", 2, 1);
	send_from(AF_INET, "127.0.0.1", "127.0.0.1", ng_listener_port(l, 0), "abc", 3, 1);
	const ng_datagram *dgs;
	int total = 0;
	size_t bytes = 0;
	for (int tries = 0; tries < 20 && total < 2; tries++) {
		int r = ng_listener_recv(l, 100, &dgs);
		for (int i = 0; i < r; i++)
			bytes += dgs[i].len;
		total += r;
	}
	assert_int_equal(total, 2);
	assert_int_equal(bytes, 5);
	ng_listener_close(l);
}

static void test_bad_specs(void **state)
{
	(void)state;
	static const struct {
		const char *spec, *msg;
	} bad[] = {
	    {"::1:2055", "brackets"},
	    {"127.0.0.1:99999", "not a port"},
	    {"localhost:2055", "not an IPv4 address"},
	    {"[::1]2055", "expected [IPV6]:PORT"},
	    {"[zz]:2055", "not an IPv6 address"},
	    {"127.0.0.1:", "not a port"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char err[256] = "";
		const char *specs[] = {bad[i].spec};
		assert_null(ng_listener_open(specs, 1, err, sizeof err));
		assert_non_null(strstr(err, bad[i].msg));
		assert_non_null(strstr(err, bad[i].spec));
	}
}

static void test_port_in_use(void **state)
{
	(void)state;
	ng_listener *a = open_one("127.0.0.1:0");
	assert_non_null(a);
	char spec[64], err[256] = "";
	snprintf(spec, sizeof spec, "127.0.0.1:%u", ng_listener_port(a, 0));
	const char *specs[] = {spec};
	assert_null(ng_listener_open(specs, 1, err, sizeof err));
	assert_non_null(strstr(err, "Address already in use"));
	ng_listener_close(a);
}

/* The granted buffer is the 64 MiB asked, or what net.core.rmem_max
 * allows when SO_RCVBUFFORCE is not permitted. */
static void test_rcvbuf(void **state)
{
	(void)state;
	ng_listener *l = open_one("127.0.0.1:0");
	assert_non_null(l);
	long rmax = 0;
	FILE *f = fopen("/proc/sys/net/core/rmem_max", "r");
	if (f) {
		assert_int_equal(fscanf(f, "%ld", &rmax), 1);
		fclose(f);
	}
	size_t got = ng_listener_rcvbuf(l, 0);
	if (geteuid() == 0)
		assert_int_equal(got, NG_LISTEN_RCVBUF);
	else
		assert_true(got >= (size_t)rmax || got >= NG_LISTEN_RCVBUF);
	ng_listener_close(l);
}

/*
 * Overflow the receive buffer (about 2600 × 60000 bytes into a 64 MiB
 * buffer, which the kernel doubles to 128 MiB for bookkeeping, less when not root) without reading:
 * every datagram sent is either received or counted as a kernel drop by SO_RXQ_OVFL.
 */
static void test_drops_counted(void **state)
{
	(void)state;
	ng_listener *l = open_one("127.0.0.1:0");
	assert_non_null(l);
	static uint8_t payload[60000];
	const int sent = 2600;
	send_from(AF_INET, "127.0.0.1", "127.0.0.1", ng_listener_port(l, 0), payload,
	          sizeof payload, sent);
	const ng_datagram *dgs;
	int r;
	while ((r = ng_listener_recv(l, 50, &dgs)) > 0)
		;
	/* The kernel attaches the drop count to datagrams queued after the
	 * drops, so one more datagram brings the news. */
	send_from(AF_INET, "127.0.0.1", "127.0.0.1", ng_listener_port(l, 0), payload, 1, 1);
	assert_int_equal(recv_all(l, &dgs, 1), 1);
	ng_listener_stats st;
	ng_listener_get_stats(l, &st);
	assert_true(st.drops > 0);
	assert_int_equal(st.datagrams + st.drops, (uint64_t)sent + 1);
	ng_listener_close(l);
}

/*
 * Without CAP_NET_ADMIN (a user namespace of our own) SO_RCVBUFFORCE is
 * refused and the kernel caps SO_RCVBUF at net.core.rmem_max: the granted
 * size is rmem_max (as /proc reads it), and the warning names its value
 * and the sysctl that raises it.
 */
static void test_rcvbuf_warning_unprivileged(void **state)
{
	(void)state;
	char log[] = "/tmp/ng_test_listener_log_XXXXXX";
	int lfd = mkstemp(log);
	assert_true(lfd >= 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (unshare(CLONE_NEWUSER | CLONE_NEWNET) < 0)
			_exit(77);
		dup2(lfd, 2);
		long rmax = -1;
		FILE *f = fopen("/proc/sys/net/core/rmem_max", "r");
		if (!f || fscanf(f, "%ld", &rmax) != 1)
			_exit(3);
		fclose(f);
		if (rmax >= (long)NG_LISTEN_RCVBUF)
			_exit(78); /* nothing to warn about on this host */
		fprintf(stderr, "rmem_max=%ld\n", rmax);
		ng_listener *l = open_one("0.0.0.0:0");
		if (!l)
			_exit(4);
		if (ng_listener_rcvbuf(l, 0) != (size_t)rmax)
			_exit(5);
		ng_listener_close(l);
		_exit(0);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	char out[2048] = "";
	ssize_t n = pread(lfd, out, sizeof out - 1, 0);
	close(lfd);
	unlink(log);
	if (WEXITSTATUS(status) == 77 || WEXITSTATUS(status) == 78) {
		print_message("skipped: no user namespace, or rmem_max already 64 MiB\n");
		skip();
	}
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_true(n > 0);
	long rmax = 0;
	assert_int_equal(sscanf(out, "rmem_max=%ld", &rmax), 1);
	char want[128];
	snprintf(want, sizeof want, "net.core.rmem_max is %ld;", rmax);
	assert_non_null(strstr(out, want));
	assert_non_null(strstr(out, "sysctl -w net.core.rmem_max=67108864"));
}

/*
 * The default ports, in a network namespace of our own so the test never
 * collides with a collector on this machine: four dual-stack sockets.
 */
static void test_defaults_in_netns(void **state)
{
	(void)state;
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (unshare(CLONE_NEWNET) < 0)
			_exit(77);
		char err[256];
		ng_listener *l = ng_listener_open(NULL, 0, err, sizeof err);
		if (!l || ng_listener_count(l) != 4)
			_exit(1);
		static const char *want[] = {"[::]:2055", "[::]:4739", "[::]:6343", "[::]:9995"};
		for (size_t i = 0; i < 4; i++) {
			char name[64];
			if (strcmp(ng_listener_name(l, i, name, sizeof name), want[i]))
				_exit(2 + (int)i);
		}
		ng_listener_close(l);
		_exit(0);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77) {
		print_message("skipped: unshare(CLONE_NEWNET) not permitted\n");
		skip();
	}
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ipv4_loopback),
	    cmocka_unit_test(test_ipv6_loopback),
	    cmocka_unit_test(test_any_v4),
	    cmocka_unit_test(test_dual_stack),
	    cmocka_unit_test(test_batches),
	    cmocka_unit_test(test_two_sockets),
	    cmocka_unit_test(test_bad_specs),
	    cmocka_unit_test(test_port_in_use),
	    cmocka_unit_test(test_rcvbuf),
	    cmocka_unit_test(test_drops_counted),
	    cmocka_unit_test(test_rcvbuf_warning_unprivileged),
	    cmocka_unit_test(test_defaults_in_netns),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
