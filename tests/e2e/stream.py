#!/usr/bin/env python3
"""stream.py — IPFIX over TCP and SCTP into `nagare collect`, from libfixbuf.

The exporter is tests/e2e/fixbuf_export.c, built on Debian's libfixbuf (the
library of CERT's YAF): an implementation nagare shares no code with.  Each
session is captured on loopback (tcpdump) and decoded by tshark
(`-d tcp.port==PORT,cflow`, `-d sctp.port==PORT,cflow`); the records nagare
stored must be exactly the records tshark reads in the same session
(source, destination, ports, protocol, octets, packets, as a multiset), and
match the totals the exporter reports.  Then, over TCP:

  - 200 exporters at once (fixbuf_export opens 200 sessions before it
    sends a record): every record of every session stored, 200 connections
    accepted, none refused;
  - one connection sends half an IPFIX message and stalls: the records of
    a libfixbuf session sent meanwhile reach the NDJSON output within 2 s,
    and the stalled connection is counted as cut when it closes.

SCTP is skipped, saying so, where the kernel has none (no /proc/net/sctp
and socket(AF_INET, SOCK_STREAM, IPPROTO_SCTP) fails: `modprobe sctp`).

Standard library only.  Needs root (packet capture); run through
test_stream.sh, which puts it in a private network namespace.
"""
import argparse
import collections
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

from e2e_util import free_port, stop_checked, wait_for  # tests/e2e/e2e_util.py

IPPROTO_SCTP = 132
TSHARK_FIELDS = ["cflow.srcaddr", "cflow.dstaddr", "cflow.srcport", "cflow.dstport",
                 "cflow.protocol", "cflow.octets", "cflow.packets"]


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {r.returncode}: {r.stderr.strip()[:2000]}")
    return r


def have_sctp():
    try:
        socket.socket(socket.AF_INET, socket.SOCK_STREAM, IPPROTO_SCTP).close()
        return True
    except OSError as e:
        print(f"stream: SCTP skipped: this kernel has no SCTP ({e}; no /proc/net/sctp: "
              "'modprobe sctp' loads it)")
        return False


def tcp_listening(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        return True
    except OSError:
        return False


class Collector:
    """`nagare collect` on the given --listen addresses, a fresh store."""

    def __init__(self, nagare, work, name, listen, json_out=False):
        self.nagare, self.store = nagare, os.path.join(work, name)
        self.log = os.path.join(work, name + ".log")
        self.json = os.path.join(work, name + ".ndjson") if json_out else None
        cmd = [nagare, "collect", "--store", self.store, "--stats-interval", "1"]
        for a in listen:
            cmd += ["--listen", a]
        if self.json:
            cmd += ["--json", self.json]
        self.p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=open(self.log, "w"))
        wait_for(lambda: "listening on" in open(self.log).read(), 20, "collect start", self.p)

    def stop(self):
        stop_checked(self.p)

    def records(self):
        q = run([self.nagare, "query", "--store", self.store, "--format", "ndjson", "-q"])
        return [json.loads(l) for l in q.stdout.splitlines() if l.strip()]

    def listener(self):
        with open(os.path.join(self.store, "state", "exporters.json")) as f:
            for line in f:
                if line.startswith('"listener":'):
                    return json.loads(line[len('"listener":'):].rstrip().rstrip(","))
        raise RuntimeError("no listener counters in exporters.json")


def fixbuf(exporter, transport, port, records, sessions=1, domain=1):
    out = run([exporter, transport, "127.0.0.1", str(port), str(records), str(sessions),
               str(domain)]).stdout
    # "sent R records, B octets, P packets"
    w = out.split()
    return int(w[1]), int(w[3]), int(w[5])


def key(src, dst, sport, dport, proto, octets, packets):
    return (src, dst, int(sport), int(dport), int(proto), int(octets), int(packets))


def tshark_records(pcap, transport, port):
    """The data records tshark decodes in the capture, as keys."""
    cmd = ["tshark", "-n", "-r", pcap, "-d", f"{transport}.port=={port},cflow",
           "-T", "fields", "-E", "separator=\t", "-E", "occurrence=a", "-E", "aggregator=,"]
    for f in TSHARK_FIELDS:
        cmd += ["-e", f]
    recs = collections.Counter()
    for line in run(cmd).stdout.splitlines():
        cols = [c.split(",") if c else [] for c in line.split("\t")]
        if not cols or not cols[0]:
            continue
        if len({len(c) for c in cols}) != 1:
            raise RuntimeError(f"tshark: fields of unequal counts in a frame: {line[:300]}")
        for vals in zip(*cols):
            recs[key(*vals)] += 1
    return recs


def nagare_keys(records):
    return collections.Counter(
        key(r["src_addr"], r["dst_addr"], r["src_port"], r["dst_port"], r["protocol"],
            r["bytes"], r["packets"]) for r in records)


def check_session(args, work, transport):
    """One libfixbuf session over `transport`, captured; nagare = tshark."""
    port = free_port(socket.SOCK_STREAM)
    pcap = os.path.join(work, f"{transport}.pcap")
    tlog = os.path.join(work, f"tcpdump-{transport}.log")
    cap = subprocess.Popen(["tcpdump", "-i", "lo", "-n", "-U", "-Z", "root", "-s", "0",
                            "-w", pcap, f"{transport} port {port}"],
                           stdout=subprocess.DEVNULL, stderr=open(tlog, "w"))
    wait_for(lambda: "listening on" in open(tlog).read(), 10, "tcpdump start", cap)
    c = Collector(args.bin, work, transport, [f"{transport}://127.0.0.1:{port}"])
    n, octets, packets = fixbuf(args.exporter, transport, port, 500)
    time.sleep(1)
    c.stop()
    time.sleep(0.5)
    cap.send_signal(signal.SIGINT)
    cap.wait(10)
    got = c.records()
    theirs = tshark_records(pcap, transport, port)
    ours = nagare_keys(got)
    assert sum(theirs.values()) == n == 500, f"tshark read {sum(theirs.values())} of {n} records"
    assert ours == theirs, (f"nagare and tshark differ: only nagare {list((ours - theirs).items())[:5]}"
                            f", only tshark {list((theirs - ours).items())[:5]}")
    assert sum(r["bytes"] for r in got) == octets and sum(r["packets"] for r in got) == packets
    assert all(r["flow_version"] == 10 and r["observation_domain"] == 1 for r in got)
    lis = c.listener()
    assert lis["conns_accepted"] == 1 and lis["conns_bad"] == 0 and lis["conns_cut"] == 0, lis
    print(f"stream: {transport}: {n} records from libfixbuf, nagare = tshark "
          f"({octets} octets, {packets} packets)")


def check_concurrent(args, work, sessions=200, records=50):
    port = free_port(socket.SOCK_STREAM)
    c = Collector(args.bin, work, "concurrent", [f"tcp://127.0.0.1:{port}"])
    n, octets, packets = fixbuf(args.exporter, "tcp", port, records, sessions)
    time.sleep(1)
    c.stop()
    got = c.records()
    srcs = collections.Counter(r["src_addr"] for r in got)
    assert len(got) == n == sessions * records, f"stored {len(got)} of {n}"
    assert len(srcs) == sessions and set(srcs.values()) == {records}, srcs.most_common(3)
    assert sum(r["bytes"] for r in got) == octets and sum(r["packets"] for r in got) == packets
    lis = c.listener()
    assert lis["conns_accepted"] == sessions, lis
    assert lis["conns_refused"] == lis["conns_refused_source"] == lis["conns_cut"] == 0, lis
    print(f"stream: {sessions} concurrent TCP exporters: {n} records stored, "
          f"{sessions} connections, none refused")


def check_stall(args, work):
    port = free_port(socket.SOCK_STREAM)
    c = Collector(args.bin, work, "stall", [f"tcp://127.0.0.1:{port}"], json_out=True)
    slow = socket.create_connection(("127.0.0.1", port))
    # an IPFIX header announcing 1000 bytes (RFC 7011 §3.1), then 484 of the rest
    slow.sendall(struct.pack("!HHIII", 10, 1000, int(time.time()), 0, 99) + b"\0" * 484)
    time.sleep(0.3)
    t0 = time.time()
    n, _, _ = fixbuf(args.exporter, "tcp", port, 100)
    lines = lambda: sum(1 for l in open(c.json) if l.strip()) if os.path.exists(c.json) else 0
    wait_for(lambda: lines() >= n, 2, "the other session's records while one stalls", c.p)
    took = time.time() - t0
    slow.close()
    time.sleep(0.5)
    c.stop()
    lis = c.listener()
    assert lis["conns_accepted"] == 2 and lis["conns_cut"] == 1, lis
    assert len(c.records()) == n
    print(f"stream: a connection stalled within a message; {n} records of another session "
          f"stored in {took:.2f} s; the stalled one counted as cut at its close")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--exporter", required=True)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="ng-stream-")
    try:
        check_session(args, work, "tcp")
        if have_sctp():
            check_session(args, work, "sctp")
        check_concurrent(args, work)
        check_stall(args, work)
    except (AssertionError, RuntimeError) as e:
        print(f"stream: FAILED: {e} (work dir {work})", file=sys.stderr)
        args.keep = True
        return 1
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print("stream: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
