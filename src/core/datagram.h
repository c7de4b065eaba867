/*
 * datagram.h — one received export datagram, as the receive side (net/:
 * UDP sockets, pcap files) hands it to the decoders (decode/).
 *
 * It lives in core/ because both layers use it and neither may include the
 * other: net/ knows nothing of protocols, decode/ nothing of sockets.
 */
#ifndef NG_DATAGRAM_H
#define NG_DATAGRAM_H

#include <stddef.h>
#include <stdint.h>

/* One export datagram.  `data` (`len` bytes, the UDP payload) is borrowed:
 * valid for the call it is passed to, owned by the receive buffer. */
typedef struct ng_datagram {
	const uint8_t *data;
	size_t len;
	uint8_t exporter[16];   /* source address, IPv4-mapped (RFC 4291 §2.5.5.2) */
	uint16_t exporter_port; /* source UDP port, host order */
	uint64_t time_received; /* collector clock when it arrived, ms since the epoch */
	/* Transport session (RFC 7011 §8: Templates are scoped to it): 0 for
	 * UDP and pcap files, else the id of the TCP/SCTP connection that
	 * carried this message (net/stream.c), unique while it is open. */
	uint32_t session;
} ng_datagram;

#endif
