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
 * Not thread-safe: one thread receives.
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

typedef struct ng_listener_stats {
	uint64_t datagrams; /* received */
	uint64_t bytes;     /* payload bytes received */
	uint64_t drops;     /* dropped by the kernel before we read them (SO_RXQ_OVFL) */
	uint64_t truncated; /* longer than NG_LISTEN_DGRAM_MAX (MSG_TRUNC), dropped */
	uint64_t errors;    /* recvmmsg failures other than EAGAIN/EINTR */
} ng_listener_stats;

/*
 * Opens and binds a socket per address in specs[0..n):
 *   "0.0.0.0:2055", "192.0.2.1:2055"   IPv4 only
 *   "[::]:2055"                         IPv6 and IPv4 (IPv4-mapped, IPV6_V6ONLY=0)
 *   "[2001:db8::1]:2055"                that IPv6 address only
 *   ":2055" or "2055"                   every address, both families
 * Port 0 asks the kernel for a free port (see ng_listener_port).
 * n == 0 binds the default ports on "::" (both families), each falling back
 * to 0.0.0.0 when the host has no IPv6.  Each socket asks for a
 * NG_LISTEN_RCVBUF receive buffer (SO_RCVBUFFORCE, else SO_RCVBUF) and a
 * warning names net.core.rmem_max when less was granted.
 * Returns NULL with a message naming the address and the cause in
 * err[errlen] when an address is malformed or cannot be bound.
 */
ng_listener *ng_listener_open(const char *const *specs, size_t n, char *err, size_t errlen);

void ng_listener_close(ng_listener *l);

/* Number of sockets, and socket i's bound address as text ("[::]:2055",
 * "127.0.0.1:40000") into buf[len]; returns buf. */
size_t ng_listener_count(const ng_listener *l);
char *ng_listener_name(const ng_listener *l, size_t i, char *buf, size_t len);

/* Socket i's bound port (the kernel's choice when 0 was asked). */
uint16_t ng_listener_port(const ng_listener *l, size_t i);

/* Receive buffer the kernel granted socket i, bytes (the usable half of
 * what getsockopt(SO_RCVBUF) reports, socket(7)). */
size_t ng_listener_rcvbuf(const ng_listener *l, size_t i);

/*
 * Waits up to `timeout_ms` (-1: forever, 0: not at all) for datagrams on
 * any socket and reads up to NG_LISTEN_BATCH of them.  Sets *out to an
 * array of the datagrams read, owned by the listener and valid until the
 * next call.  Returns the number read (0 on timeout or when a signal
 * interrupted the wait), or -1 on a failure of the wait itself (errno set).
 */
int ng_listener_recv(ng_listener *l, int timeout_ms, const ng_datagram **out);

/* Totals over every socket since open. */
void ng_listener_get_stats(const ng_listener *l, ng_listener_stats *st);

#endif
