/*
 * reuseport.h — one exporter, one worker: the classic BPF program that
 * picks, among the SO_REUSEPORT sockets of one UDP address, the one of
 * the worker that owns the datagram's source address.
 *
 * Every datagram of one exporter address reaches the same worker, so a
 * worker's decoder (templates, sequence numbers, held sets) needs no
 * lock.  The choice is a function of the address alone, not of the source
 * port: an exporter that sends from several ports (a router's line cards,
 * a restarted softflowd) still lands on one worker.  The same function in
 * user space (ng_reuseport_worker) tells at start which worker gets the
 * templates saved for an exporter.
 */
#ifndef NG_REUSEPORT_H
#define NG_REUSEPORT_H

#include <stdint.h>

/* Workers at most: the kernel's reuseport group holds up to 65535
 * sockets, the collector is not meant for more threads than this. */
#define NG_REUSEPORT_MAX 64

/* The worker in [0, n) of the exporter at `addr` (16 bytes, IPv4-mapped
 * for IPv4, as in ng_datagram.exporter): exactly what the kernel program of
 * ng_reuseport_attach returns for a datagram from it.  n >= 1. */
uint32_t ng_reuseport_worker(const uint8_t addr[16], uint32_t n);

/* Attaches the program (SO_ATTACH_REUSEPORT_CBPF) to the reuseport group
 * of UDP socket `fd`, for `n` sockets: the group's socket i (in the order
 * they were bound) gets the datagrams of the exporters whose
 * ng_reuseport_worker is i.  Returns 0, or -1 with errno set. */
int ng_reuseport_attach(int fd, uint32_t n);

#endif
