#!/usr/bin/env python3
"""v5gen.py HOST PORT — send a known set of NetFlow v5 flows (public
addresses) over UDP, so the browser tests have countries and ASes.

The addresses come from the MaxMind test databases of the shared test data
(GeoLite2-Country-Test / GeoLite2-ASN-Test .source.json): GB, SE, US, CN,
PH, and Telstra / AT&T ASes.  Flow i of FLOWS is sent `n` times with the
byte and packet counts given; times are "now" (the last minute).  NetFlow
v5 layout: Cisco's "NetFlow Export Datagram Format", version 5 (24-byte
header, 48-byte records, at most 30 a datagram).
"""
import socket
import struct
import sys
import time

# (src, dst, sport, dport, proto, packets, bytes, n)
FLOWS = [
    ("81.2.69.142", "10.1.0.1", 443, 50001, 6, 100, 150000, 4),     # GB
    ("89.160.20.115", "10.1.0.2", 443, 50002, 6, 50, 70000, 3),     # SE
    ("216.160.83.58", "10.1.0.3", 53, 50003, 17, 2, 300, 5),        # US
    ("111.235.160.10", "10.1.0.1", 80, 50004, 6, 30, 40000, 2),     # CN
    ("202.196.224.5", "10.1.0.4", 8080, 50005, 6, 10, 9000, 1),     # PH
    ("1.128.0.7", "10.1.0.2", 443, 50006, 6, 20, 25000, 2),         # AS1221 Telstra
    ("12.81.92.10", "10.1.0.3", 22, 50007, 6, 40, 5000, 1),         # AS7018 AT&T
    ("10.1.0.1", "81.2.69.142", 50001, 443, 6, 60, 6000, 4),        # replies
    ("10.1.0.2", "89.160.20.115", 50002, 443, 6, 30, 3000, 3),
]


def main():
    host, port = sys.argv[1], int(sys.argv[2])
    now = time.time()
    uptime = 3_600_000  # ms since the "router" booted
    recs = []
    for src, dst, sp, dp, proto, pkts, octets, n in FLOWS:
        for k in range(n):
            first = uptime - 50_000 + k * 1000
            recs.append(struct.pack(
                "!4s4s4sHHIIIIHHBBBBHHBBH",
                socket.inet_aton(src), socket.inet_aton(dst), socket.inet_aton("0.0.0.0"),
                1, 2, pkts, octets, first, first + 5000, sp, dp, 0,
                0x18 if proto == 6 else 0, proto, 0, 0, 0, 24, 24, 0))
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    seq = 0
    for i in range(0, len(recs), 30):
        chunk = recs[i:i + 30]
        hdr = struct.pack("!HHIIIIBBH", 5, len(chunk), uptime, int(now),
                          int((now % 1) * 1e9), seq, 0, 0, 0)
        s.sendto(hdr + b"".join(chunk), (host, port))
        seq += len(chunk)
    print(f"v5gen: {len(recs)} flows in {(len(recs) + 29) // 30} datagrams to {host}:{port}")


main()
