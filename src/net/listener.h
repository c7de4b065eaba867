/*
 * listener.h — UDP sockets that receive export datagrams in batches.
 *
 * One listener owns every socket of a collector (one per --listen address)
 * and one epoll set over them.  Datagrams are read with recvmmsg(2), many
 * per system call, into buffers the listener owns; each batch carries one
 * receive time (one clock read per batch) and IPv4-mapped source addresses.
 * Kernel drops (a full receive buffer) are counted per socket from the
 * SO_RXQ_OVFL control message (socket(7)).
 *
 * IPFIX over TCP and SCTP (tcp:// and sctp:// addresses) share the epoll
 * set: listening sockets and connections are non-blocking, read only when
 * epoll says so, and a connection hands out each whole IPFIX message
 * (net/reasm.h) as one ng_datagram with its session id, so a slow or
 * stalled peer holds up nobody.
 *
 * Not thread-safe: one thread receives on a listener.  Several receive
 * threads each have their own (ng_listener_open_workers).
 */
#ifndef NG_LISTENER_H
#define NG_LISTENER_H

#include <stddef.h>
#include <stdint.h>

#include "core/datagram.h"

/* Datagrams read per ng_listener_recv call at most, and the largest
 * datagram kept whole (the UDP maximum). */
#define NG_LISTEN_BATCH 64
#define NG_LISTEN_DGRAM_MAX 65535

/* Receive buffer asked of the kernel for each socket, bytes. */
#define NG_LISTEN_RCVBUF (64u << 20)

/* The default ports: NetFlow (2055, 9995), IPFIX (4739, RFC 7011 §10.3),
 * sFlow (6343). */
extern const uint16_t ng_listen_default_ports[4];

typedef struct ng_listener ng_listener;

/*
 * IPFIX over TCP and SCTP (RFC 7011 §10.2, §10.4): the bounds on the
 * connections of every tcp:// and sctp:// address together.  A
 * connection past `conns`, or past `conns_per_source` from one address,
 * is accepted and closed at once (counted); one quiet for `idle_ms` (a
 * half-open peer, or one that stalls in the middle of a message) is
 * closed.  Each connection holds at most one message (65535 bytes).
 */
typedef struct ng_stream_limits {
	unsigned conns;            /* open at once, all sources (default 1024) */
	unsigned conns_per_source; /* open at once from one address (default 256) */
	uint64_t idle_ms;          /* closed after this long without a byte (default 15 min) */
} ng_stream_limits;

#define NG_STREAM_CONNS 1024
#define NG_STREAM_CONNS_PER_SOURCE 256
#define NG_STREAM_IDLE_MS (15 * 60 * 1000)

/* A TCP connection or SCTP association that ended: its session id (as
 * in ng_datagram.session) and peer address (IPv4-mapped). */
typedef struct ng_session_end {
	uint32_t session;
	uint8_t exporter[16];
} ng_session_end;

/*
 * The listener's counters, listed once: X(field, "doc").  Each is a
 * uint64_t of ng_listener_stats, a key of "listener":{…} in
 * exporters.json and the API (store/exporters.c), a /metrics counter
 * nagare_listener_<field>_total, and summed over the runs of a store.
 */
#define NG_LISTENER_COUNTERS(X)                                                                    \
	X(datagrams, "datagrams received (TCP/SCTP: whole IPFIX messages)")                        \
	X(bytes, "payload bytes received")                                                         \
	X(drops, "datagrams dropped by the kernel before they were read (SO_RXQ_OVFL)")            \
	X(truncated, "datagrams longer than 65535 bytes (MSG_TRUNC), dropped")                     \
	X(errors, "recvmmsg, recv and accept failures other than EAGAIN and EINTR")                \
	X(conns_accepted, "TCP/SCTP connections taken on")                                         \
	X(conns_refused, "TCP/SCTP connections closed at once: the connection limit was reached")  \
	X(conns_refused_source,                                                                    \
	  "TCP/SCTP connections closed at once: the limit per source address was reached")         \
	X(conns_idle, "TCP/SCTP connections closed after the idle time-out without a byte")        \
	X(conns_bad, "TCP/SCTP connections closed: a message header not IPFIX, or Length < 16")    \
	X(conns_cut, "TCP/SCTP connections the peer closed within a message (its bytes lost)")

typedef struct ng_listener_stats {
#define X(field, doc) uint64_t field;
	NG_LISTENER_COUNTERS(X)
#undef X
} ng_listener_stats;

/*
 * Opens and binds a socket per address in specs[0..n):
 *   "0.0.0.0:2055", "192.0.2.1:2055"   IPv4 only
 *   "[::]:2055"                         IPv6 and IPv4 (IPv4-mapped, IPV6_V6ONLY=0)
 *   "[2001:db8::1]:2055"                that IPv6 address only
 *   ":2055" or "2055"                   every address, both families
 *   "udp://" + any of these             the same (UDP)
 *   "tcp://" + any of these             IPFIX over TCP (RFC 7011 §10.4)
 *   "sctp://" + any of these            IPFIX over SCTP (§10.2), one-to-one
 *                                       sockets; fails with a message saying
 *                                       so when the kernel has no SCTP
 * Port 0 asks the kernel for a free port (see ng_listener_port).
 * n == 0 binds the default ports on "::" (both families), each falling back
 * to 0.0.0.0 when the host has no IPv6.  Each socket asks for a
 * NG_LISTEN_RCVBUF receive buffer (SO_RCVBUFFORCE, else SO_RCVBUF) and a
 * warning names net.core.rmem_max when less was granted.
 * Returns NULL with a message naming the address and the cause in
 * err[errlen] when an address is malformed or cannot be bound.
 */
ng_listener *ng_listener_open(const char *const *specs, size_t n, char *err, size_t errlen);

/*
 * The listeners of `workers` receive threads over the same addresses
 * (specs and n as ng_listener_open), into out[0..workers): out[0] has
 * every address; each other one has a socket on every UDP address (and
 * no TCP/SCTP: streams stay with the first).  With more than one worker
 * the UDP sockets of an address form a SO_REUSEPORT group whose program
 * (net/reuseport.h) sends every datagram of one source address to the
 * same worker: worker w gets those whose ng_reuseport_worker(src,
 * workers) is w.  Port 0 is the kernel's choice for the first and the
 * same port for the others.  Each listener is then used by one thread.
 * Returns 0, or -1 with the cause in err (nothing left open).
 * workers: 1 to NG_REUSEPORT_MAX; 1 is ng_listener_open.
 */
int ng_listener_open_workers(const char *const *specs, size_t n, unsigned workers,
                             ng_listener **out, char *err, size_t errlen);
void ng_listener_close(ng_listener *l);

/* Number of sockets, and socket i's bound address as text ("[::]:2055",
 * "127.0.0.1:40000") into buf[len]; returns buf. */
size_t ng_listener_count(const ng_listener *l);
char *ng_listener_name(const ng_listener *l, size_t i, char *buf, size_t len);

/* Socket i's bound port (the kernel's choice when 0 was asked). */
uint16_t ng_listener_port(const ng_listener *l, size_t i);

/* Receive buffer the kernel granted socket i, bytes (the usable half of
 * what getsockopt(SO_RCVBUF) reports, socket(7)).  A TCP/SCTP listening
 * socket reports NG_LISTEN_RCVBUF: the kernel sizes each connection's
 * buffer itself, and a stream is never dropped (its peer waits). */
size_t ng_listener_rcvbuf(const ng_listener *l, size_t i);

/*
 * Waits up to `timeout_ms` (-1: forever, 0: not at all) for datagrams on
 * any socket and reads up to NG_LISTEN_BATCH of them.  Sets *out to an
 * array of the datagrams read, owned by the listener and valid until the
 * next call.  Returns the number read (0 on timeout or when a signal
 * interrupted the wait), or -1 on a failure of the wait itself (errno set).
 */
int ng_listener_recv(ng_listener *l, int timeout_ms, const ng_datagram **out);

/* Replaces the bounds on TCP/SCTP connections (0 fields: the default);
 * the connections open keep going. */
void ng_listener_set_stream_limits(ng_listener *l, const ng_stream_limits *lim);

/* The sessions that ended during the last ng_listener_recv call (closed
 * by the peer, for a bound, or for bad framing), after every message of
 * theirs that call returned: *out points to `n` of them, owned by the
 * listener and valid until the next call.  The collector hands each to
 * ng_decoder_session_end, after decoding that call's datagrams. */
size_t ng_listener_ended(const ng_listener *l, const ng_session_end **out);

/* TCP/SCTP connections open now. */
size_t ng_listener_conns(const ng_listener *l);

/* Totals over every socket since open. */
void ng_listener_get_stats(const ng_listener *l, ng_listener_stats *st);

#endif
