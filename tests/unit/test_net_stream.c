/*
 * test_net_stream.c — IPFIX over TCP and SCTP in the listener (RFC 7011
 * §10.2, §10.4) on loopback: messages reassembled from pieces of any size,
 * one per datagram with its session id; a connection stalled in the
 * middle of a message delays nobody; the bounds (connections in all and
 * per source, idle time-out) and lost framing close connections and are
 * counted; every close is reported as an ended session.  SCTP runs where
 * the kernel has it; elsewhere the listener must say so.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/bytes.h"
#include "core/timefmt.h"
#include "net/listener.h"

#ifndef IPPROTO_SCTP
#define IPPROTO_SCTP 132
#endif

/* Opens "tcp://127.0.0.1:0" (or sctp) and returns its port in *port. */
static ng_listener *open_stream(const char *scheme, uint16_t *port, char *err, size_t errlen)
{
	char spec[64];
	snprintf(spec, sizeof spec, "%s://127.0.0.1:0", scheme);
	const char *specs[] = {spec};
	ng_listener *l = ng_listener_open(specs, 1, err, errlen);
	if (l)
		*port = ng_listener_port(l, 0);
	return l;
}

static int connect_to(uint16_t port, int proto)
{
	int fd = socket(AF_INET, SOCK_STREAM, proto);
	assert_true(fd >= 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
	return fd;
}

/* An IPFIX message of `len` bytes (>= 16): header, then bytes = `fill`. */
static void message(uint8_t *p, uint16_t len, uint32_t domain, uint8_t fill)
{
	memset(p, fill, len);
	ng_put_be16(p, 10);
	ng_put_be16(p + 2, len);
	ng_put_be32(p + 4, 1700000000u);
	ng_put_be32(p + 8, 0);
	ng_put_be32(p + 12, domain);
}

/* Receives until `want` datagrams came (copied: lens[], domains[]) or
 * 2 s passed; returns how many. */
struct got {
	int n;
	size_t len[64];
	uint32_t domain[64], session[64];
	uint8_t last_byte[64];
};

static void recv_some(ng_listener *l, struct got *g, int want, int max_ms)
{
	uint64_t until = ng_now_ms() + (uint64_t)max_ms;
	while (g->n < want && ng_now_ms() < until) {
		const ng_datagram *dgs;
		int r = ng_listener_recv(l, 20, &dgs);
		assert_true(r >= 0);
		for (int i = 0; i < r && g->n < 64; i++, g->n++) {
			g->len[g->n] = dgs[i].len;
			g->domain[g->n] = ng_get_be32(dgs[i].data + 12);
			g->session[g->n] = dgs[i].session;
			g->last_byte[g->n] = dgs[i].data[dgs[i].len - 1];
		}
	}
}

/* Three messages, the first sent a byte at a time, the next two in one
 * write: three datagrams of one session, bytes intact. */
static void stream_pieces(const char *scheme, int proto)
{
	char err[256] = "";
	uint16_t port = 0;
	ng_listener *l = open_stream(scheme, &port, err, sizeof err);
	assert_non_null(l);
	int fd = connect_to(port, proto);
	uint8_t m[3][300];
	message(m[0], 100, 1, 0xa1);
	message(m[1], 300, 2, 0xa2);
	message(m[2], 16, 3, 0);
	for (int i = 0; i < 100; i++) {
		assert_int_equal(send(fd, m[0] + i, 1, 0), 1);
		if (i % 25 == 0) {
			const ng_datagram *dgs;
			assert_int_equal(ng_listener_recv(l, 20, &dgs), 0); /* accepts, reads */
		}
	}
	uint8_t two[316];
	memcpy(two, m[1], 300);
	memcpy(two + 300, m[2], 16);
	assert_int_equal(send(fd, two, sizeof two, 0), (ssize_t)sizeof two);
	struct got g = {0};
	recv_some(l, &g, 3, 2000);
	assert_int_equal(g.n, 3);
	assert_int_equal(g.len[0], 100);
	assert_int_equal(g.len[1], 300);
	assert_int_equal(g.len[2], 16);
	assert_int_equal(g.domain[0], 1);
	assert_int_equal(g.domain[2], 3);
	assert_int_equal(g.last_byte[0], 0xa1);
	assert_int_equal(g.last_byte[1], 0xa2);
	assert_true(g.session[0] != 0);
	assert_int_equal(g.session[1], g.session[0]);
	assert_int_equal(g.session[2], g.session[0]);
	assert_int_equal(ng_listener_conns(l), 1);
	/* the peer closes: the session ends, nothing is cut */
	close(fd);
	const ng_session_end *e = NULL;
	size_t ne = 0;
	for (int i = 0; i < 50 && !ne; i++) {
		const ng_datagram *dgs;
		assert_int_equal(ng_listener_recv(l, 20, &dgs), 0);
		ne = ng_listener_ended(l, &e);
	}
	assert_int_equal(ne, 1);
	assert_int_equal(e[0].session, g.session[0]);
	assert_int_equal(e[0].exporter[15], 1); /* ::ffff:127.0.0.1 */
	ng_listener_stats st;
	ng_listener_get_stats(l, &st);
	assert_int_equal(st.datagrams, 3);
	assert_int_equal(st.bytes, 416);
	assert_int_equal(st.conns_accepted, 1);
	assert_int_equal(st.conns_cut, 0);
	assert_int_equal(ng_listener_conns(l), 0);
	ng_listener_close(l);
}

static void test_tcp_pieces(void **state)
{
	(void)state;
	stream_pieces("tcp", 0);
}

/* SCTP where the kernel has it; where it has not, the message says so
 * and what to do. */
static void test_sctp(void **state)
{
	(void)state;
	int probe = socket(AF_INET, SOCK_STREAM, IPPROTO_SCTP);
	if (probe < 0) {
		char err[256] = "";
		uint16_t port;
		assert_null(open_stream("sctp", &port, err, sizeof err));
		print_message("no SCTP in this kernel (%s): checked the message only: %s\n",
		              strerror(errno), err);
		assert_non_null(strstr(err, "this kernel has no SCTP"));
		assert_non_null(strstr(err, "modprobe sctp"));
		skip();
	}
	close(probe);
	stream_pieces("sctp", IPPROTO_SCTP);
}

/* One connection sends half a message and stalls; another's messages
 * come through at once, and the stalled one stays open (its peer may
 * yet finish). */
static void test_stall_delays_nobody(void **state)
{
	(void)state;
	char err[256] = "";
	uint16_t port = 0;
	ng_listener *l = open_stream("tcp", &port, err, sizeof err);
	assert_non_null(l);
	int slow = connect_to(port, 0), fast = connect_to(port, 0);
	uint8_t m[1000];
	message(m, 1000, 9, 0x55);
	assert_int_equal(send(slow, m, 500, 0), 500);
	message(m, 1000, 4, 0x44);
	uint64_t t0 = ng_now_ms();
	for (int i = 0; i < 5; i++)
		assert_int_equal(send(fast, m, 1000, 0), 1000);
	struct got g = {0};
	recv_some(l, &g, 5, 2000);
	uint64_t took = ng_now_ms() - t0;
	assert_int_equal(g.n, 5);
	for (int i = 0; i < 5; i++)
		assert_int_equal(g.domain[i], 4);
	assert_true(took < 500);
	assert_int_equal(ng_listener_conns(l), 2);
	/* the slow one finishes its message later: it arrives whole */
	message(m, 1000, 9, 0x55);
	assert_int_equal(send(slow, m + 500, 500, 0), 500);
	recv_some(l, &g, 6, 2000);
	assert_int_equal(g.n, 6);
	assert_int_equal(g.domain[5], 9);
	assert_int_equal(g.len[5], 1000);
	close(slow);
	close(fast);
	ng_listener_close(l);
}

/* Ends of sessions gathered over `ms`. */
static size_t ended_over(ng_listener *l, int ms)
{
	size_t n = 0;
	uint64_t until = ng_now_ms() + (uint64_t)ms;
	while (ng_now_ms() < until) {
		const ng_datagram *dgs;
		const ng_session_end *e;
		ng_listener_recv(l, 20, &dgs);
		n += ng_listener_ended(l, &e);
	}
	return n;
}

/* Lost framing (not version 10; Length below 16), a close within a
 * message, and the idle time-out each close the connection, counted. */
static void test_bad_cut_idle(void **state)
{
	(void)state;
	char err[256] = "";
	uint16_t port = 0;
	ng_listener *l = open_stream("tcp", &port, err, sizeof err);
	assert_non_null(l);
	ng_listener_set_stream_limits(l, &(ng_stream_limits){.idle_ms = 1000});
	uint8_t m[64];
	int v9 = connect_to(port, 0);
	message(m, 40, 1, 0);
	ng_put_be16(m, 9); /* NetFlow v9 has no length to frame it by */
	assert_int_equal(send(v9, m, 40, 0), 40);
	int shortlen = connect_to(port, 0);
	message(m, 40, 1, 0);
	ng_put_be16(m + 2, 15);
	assert_int_equal(send(shortlen, m, 16, 0), 16);
	int cut = connect_to(port, 0);
	message(m, 64, 1, 0);
	assert_int_equal(send(cut, m, 30, 0), 30);
	int quiet = connect_to(port, 0);
	assert_int_equal(ended_over(l, 150), 2); /* the two bad ones */
	close(cut);
	assert_int_equal(ended_over(l, 150), 1);
	ng_listener_stats st;
	ng_listener_get_stats(l, &st);
	assert_int_equal(st.conns_bad, 2);
	assert_int_equal(st.conns_cut, 1);
	assert_int_equal(st.conns_idle, 0);
	assert_int_equal(ended_over(l, 2500), 1); /* quiet: idle past 1 s */
	ng_listener_get_stats(l, &st);
	assert_int_equal(st.conns_idle, 1);
	assert_int_equal(st.datagrams, 0);
	assert_int_equal(ng_listener_conns(l), 0);
	/* the peer sees the close */
	char c;
	assert_int_equal(recv(quiet, &c, 1, 0), 0);
	close(v9);
	close(shortlen);
	close(quiet);
	ng_listener_close(l);
}

/* Past conns_per_source from one address, then past conns in all: the
 * connection is closed at once and counted. */
static void test_conn_limits(void **state)
{
	(void)state;
	char err[256] = "";
	uint16_t port = 0;
	ng_listener *l = open_stream("tcp", &port, err, sizeof err);
	assert_non_null(l);
	ng_listener_set_stream_limits(l, &(ng_stream_limits){.conns = 3, .conns_per_source = 2});
	int fd[4];
	for (int i = 0; i < 3; i++)
		fd[i] = connect_to(port, 0);
	ended_over(l, 100);
	ng_listener_stats st;
	ng_listener_get_stats(l, &st);
	assert_int_equal(st.conns_accepted, 2);
	assert_int_equal(st.conns_refused_source, 1);
	assert_int_equal(ng_listener_conns(l), 2);
	/* from 127.0.0.2: the third in all is taken, the fourth refused */
	for (int i = 0; i < 2; i++) {
		int s = socket(AF_INET, SOCK_STREAM, 0);
		struct sockaddr_in a = {.sin_family = AF_INET};
		a.sin_addr.s_addr = htonl(0x7f000002);
		assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof a), 0);
		a.sin_port = htons(port);
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		assert_int_equal(connect(s, (struct sockaddr *)&a, sizeof a), 0);
		if (i == 0)
			fd[3] = s;
		else {
			ended_over(l, 100);
			close(s);
		}
	}
	ended_over(l, 100);
	ng_listener_get_stats(l, &st);
	assert_int_equal(st.conns_accepted, 3);
	assert_int_equal(st.conns_refused, 1);
	assert_int_equal(ng_listener_conns(l), 3);
	char c;
	assert_int_equal(recv(fd[2], &c, 1, 0), 0); /* the refused one: closed */
	for (int i = 0; i < 4; i++)
		close(fd[i]);
	ng_listener_close(l);
}

/* The scheme forms: udp:// is UDP; names say the transport. */
static void test_schemes(void **state)
{
	(void)state;
	char err[256] = "", name[64];
	const char *specs[] = {"udp://127.0.0.1:0", "tcp://127.0.0.1:0"};
	ng_listener *l = ng_listener_open(specs, 2, err, sizeof err);
	assert_non_null(l);
	assert_int_equal(ng_listener_count(l), 2);
	assert_null(strstr(ng_listener_name(l, 0, name, sizeof name), "://"));
	assert_non_null(strstr(ng_listener_name(l, 1, name, sizeof name), "tcp://127.0.0.1:"));
	ng_listener_close(l);
	const char *bad[] = {"tcp://[::1:4739"};
	assert_null(ng_listener_open(bad, 1, err, sizeof err));
	assert_non_null(strstr(err, "[::1:4739"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_tcp_pieces),          cmocka_unit_test(test_sctp),
	    cmocka_unit_test(test_stall_delays_nobody), cmocka_unit_test(test_bad_cut_idle),
	    cmocka_unit_test(test_conn_limits),         cmocka_unit_test(test_schemes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
