/*
 * capture.h — export datagrams from files: pcap/pcapng captures (via
 * libpcap) and raw UDP payload files.
 *
 * A capture yields the UDP payload of every IPv4 or IPv6 UDP packet, any
 * port, with the packet's source address as exporter and its capture time
 * as time received.  A file that is not a capture is a raw payload file:
 * one datagram, except that a file of back-to-back IPFIX messages (an
 * RFC 5655 IPFIX file) is split on each message's length field, and a
 * file that is exactly a series of NetFlow v5 packets on their counts.  Raw
 * payloads get the exporter address 0.0.0.0 (so a template file and its
 * data file share state) and the file's modification time.
 */
#ifndef NG_CAPTURE_H
#define NG_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "core/datagram.h"

typedef struct ng_capture_stats {
	uint64_t packets;   /* frames or raw payloads read */
	uint64_t datagrams; /* UDP payloads handed on */
	uint64_t skipped;   /* frames that are not IPv4/IPv6 UDP (or are fragments) */
	uint64_t fragments; /* of those skipped, IP fragments (not reassembled) */
	uint64_t malformed; /* of those skipped, IP/UDP headers that contradict themselves */
	uint64_t truncated; /* UDP payloads cut by the snap length (handed on as cut) */
} ng_capture_stats;

/*
 * Reads `path` and calls `fn` for each export datagram in file order.
 * `fn` returns 0 to go on, non-zero to stop (returned as is).
 * Counts are added to `*st` (which may be NULL), so one ng_capture_stats can
 * sum several files.  Link types: Ethernet (802.1Q/802.1ad tags skipped),
 * Linux cooked v1/v2, raw IP, BSD loopback (NULL/LOOP).
 * Returns 0 when the whole file was read, -1 when it could not be opened or
 * read (or its link type is not one of these), with a message naming the
 * file and the cause in err[errlen].
 */
int ng_capture_read(const char *path, int (*fn)(const ng_datagram *dg, void *arg), void *arg,
                    ng_capture_stats *st, char *err, size_t errlen);

#endif
