#!/usr/bin/env python3
"""exporters.py — real exporters into `nagare collect`, checked against tshark.

The proof that nagare stores what routers send: a capture of real loopback
traffic (make_traffic.sh: TCP, UDP, ICMP over IPv4 and IPv6) is turned into
flow exports by real exporters from Debian's packages,

    softflowd -r PCAP -v 5          NetFlow v5 (IPv4 only: v5 has no IPv6)
    softflowd -r PCAP -v 9          NetFlow v9
    softflowd -r PCAP -v 10         IPFIX
    pmacctd, nfprobe_version: 9     NetFlow v9
    pmacctd, nfprobe_version: 10    IPFIX

each sent over UDP on loopback to a fresh `nagare collect --store DIR`
(once more softflowd v9 sent over IPv6, to collect listening on [::1]).  After
a clean SIGTERM, `nagare query --format ndjson` lists the stored flows, which
are summed per 5-tuple (src, dst, sport, dport, proto) and compared with
tshark's reading of the traffic capture:

  - every 5-tuple tshark sees is stored, and no other;
  - per 5-tuple, IP bytes (IPv4 total length; IPv6 payload length + 40) and
    packets are exactly equal;
  - per 5-tuple, the earliest flow_start and the latest flow_end lie within
    1 s of the first and last packet of that 5-tuple, hence inside the
    capture's time window.  The capture's timestamps are first moved back
    (NG_E2E_SHIFT, default 3600 s, editcap -t) so that a collector that
    stamped flows with its own clock, or got the exporter's uptime
    arithmetic wrong (softflowd reading a file sends FIRST_SWITCHED values
    "above" sysUptime, i.e. negative offsets), is caught.
    Every record's own flow_start <= flow_end lie inside the capture's window
    ± 1 s too.  (1 s: NetFlow v9's header carries whole UNIX seconds, so a
    v9 collector's absolute times are up to 1 s early, RFC 3954 §5.1.)
  - flow_version is the protocol the exporter spoke.

ICMP has no ports.  Both exporters put type and code in the destination
port field (type × 256 + code; softflowd v9/IPFIX in ICMP_TYPE, IE 32/139),
and nagare may keep them there or in icmp_type/icmp_code.  Both sides are
normalised to (src port 0, dst port type × 256 + code): tshark from
icmp.type/icmp.code (icmpv6.*), nagare from icmp_type/icmp_code when set,
else from dst_port.

The export datagrams themselves are captured too (tcpdump on lo), and
`nagare decode` of that capture must give the same records as collect
stored (every field but time_received).

Standard library only.  Needs root (packet capture); run through
test_exporters.sh, which puts it in a private network namespace.
"""
import argparse
import collections
import datetime
import ipaddress
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

from e2e_util import free_port, stop_checked, udp_bound, wait_for  # tests/e2e/e2e_util.py

HERE = os.path.dirname(os.path.abspath(__file__))
# NetFlow v9's header has whole UNIX seconds (RFC 3954 §5.1), so absolute
# times derived from it are up to 1 s early; a few ms more for rounding.
TIME_SLACK_MS = 1010

CONFIGS = [
    # name, exporter, export version, carries IPv6, collector address
    ("softflowd-v5", "softflowd", 5, False, "127.0.0.1"),
    ("softflowd-v9", "softflowd", 9, True, "127.0.0.1"),
    ("softflowd-ipfix", "softflowd", 10, True, "127.0.0.1"),
    ("pmacctd-v9", "pmacctd", 9, True, "127.0.0.1"),
    ("pmacctd-ipfix", "pmacctd", 10, True, "127.0.0.1"),
    # the export itself over IPv6: collect listening on [::1]
    ("softflowd-v9-to-ipv6", "softflowd", 9, True, "::1"),
]


def log(msg):
    print(msg, flush=True)


def run(cmd, **kw):
    """Runs cmd, returns CompletedProcess; raises with its output on failure."""
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}\n{r.stderr}{r.stdout}")
    return r


def norm_addr(s):
    a = ipaddress.ip_address(s)
    if a.version == 6 and a.ipv4_mapped:
        a = a.ipv4_mapped
    return str(a)


def flow_key(src, dst, proto, sport, dport):
    return (norm_addr(src), norm_addr(dst), int(proto), int(sport), int(dport))


def fmt_key(k):
    src, dst, proto, sport, dport = k
    name = {1: "icmp", 6: "tcp", 17: "udp", 58: "icmp6"}.get(proto, str(proto))
    if proto in (1, 58):
        return f"{name} {src} -> {dst} type {dport >> 8} code {dport & 255}"
    return f"{name} {src}:{sport} -> {dst}:{dport}"


# ---------------------------------------------------------------- tshark side

TSHARK_FIELDS = [
    "frame.time_epoch", "ip.src", "ip.dst", "ipv6.src", "ipv6.dst",
    "ip.proto", "ipv6.nxt", "ip.len", "ipv6.plen",
    "tcp.srcport", "tcp.dstport", "udp.srcport", "udp.dstport",
    "icmp.type", "icmp.code", "icmpv6.type", "icmpv6.code",
]


def tshark_flows(pcap):
    """Per 5-tuple [bytes, packets, first ms, last ms] from tshark."""
    cmd = ["tshark", "-n", "-r", pcap, "-T", "fields", "-E", "separator=\t",
           "-E", "occurrence=f"]
    for f in TSHARK_FIELDS:
        cmd += ["-e", f]
    out = run(cmd).stdout
    flows = {}
    for line in out.splitlines():
        v = dict(zip(TSHARK_FIELDS, line.split("\t")))
        t_ms = round(float(v["frame.time_epoch"]) * 1000)
        if v["ip.src"]:
            src, dst, proto, nbytes = v["ip.src"], v["ip.dst"], v["ip.proto"], int(v["ip.len"])
        elif v["ipv6.src"]:
            src, dst, proto = v["ipv6.src"], v["ipv6.dst"], v["ipv6.nxt"]
            nbytes = int(v["ipv6.plen"]) + 40  # fixed header + payload
        else:
            continue  # not IP: not a flow
        proto = int(proto)
        sport = v["tcp.srcport"] or v["udp.srcport"] or "0"
        dport = v["tcp.dstport"] or v["udp.dstport"] or "0"
        if proto == 1:
            sport, dport = 0, int(v["icmp.type"]) * 256 + int(v["icmp.code"])
        elif proto == 58:
            sport, dport = 0, int(v["icmpv6.type"]) * 256 + int(v["icmpv6.code"])
        k = flow_key(src, dst, proto, sport, dport)
        f = flows.setdefault(k, [0, 0, t_ms, t_ms])
        f[0] += nbytes
        f[1] += 1
        f[2] = min(f[2], t_ms)
        f[3] = max(f[3], t_ms)
    return flows


# ---------------------------------------------------------------- nagare side

def parse_time_ms(v):
    if isinstance(v, (int, float)):
        return int(v)
    d = datetime.datetime.fromisoformat(v.replace("Z", "+00:00"))
    if d.tzinfo is None:
        d = d.replace(tzinfo=datetime.timezone.utc)
    return round(d.timestamp() * 1000)


def record_key(r):
    proto = int(r["protocol"])
    sport, dport = int(r.get("src_port", 0)), int(r.get("dst_port", 0))
    if proto in (1, 58):
        t, c = int(r.get("icmp_type", 0)), int(r.get("icmp_code", 0))
        sport, dport = 0, (t * 256 + c) if (t or c) else dport
    return flow_key(r["src_addr"], r["dst_addr"], proto, sport, dport)


def nagare_flows(records):
    flows = {}
    for r in records:
        k = record_key(r)
        s, e = parse_time_ms(r["flow_start"]), parse_time_ms(r["flow_end"])
        f = flows.setdefault(k, [0, 0, s, e])
        f[0] += int(r["bytes"])
        f[1] += int(r["packets"])
        f[2] = min(f[2], s)
        f[3] = max(f[3], e)
    return flows


def read_ndjson(text, what):
    out = []
    for i, line in enumerate(text.splitlines()):
        if line.strip():
            try:
                out.append(json.loads(line))
            except ValueError as e:
                raise RuntimeError(f"{what}: line {i + 1} is not JSON ({e}): {line[:200]}")
    return out


# ---------------------------------------------------------------- comparing

def ms_str(ms):
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc) \
        .strftime("%H:%M:%S.%f")[:-3]


def compare(expected, got, records, version):
    """Returns a list of (key, problem) pairs; empty when all is right."""
    problems = []
    for k in sorted(set(expected) | set(got)):
        e, g = expected.get(k), got.get(k)
        if g is None:
            problems.append((k, f"missing: tshark {e[0]} B {e[1]} pkts"))
            continue
        if e is None:
            problems.append((k, f"extra: nagare {g[0]} B {g[1]} pkts, tshark none"))
            continue
        if (e[0], e[1]) != (g[0], g[1]):
            problems.append((k, f"counts: tshark {e[0]} B {e[1]} pkts, nagare {g[0]} B {g[1]} pkts"))
        if abs(g[2] - e[2]) > TIME_SLACK_MS or abs(g[3] - e[3]) > TIME_SLACK_MS or g[2] > g[3]:
            problems.append((k, f"times: tshark {ms_str(e[2])}..{ms_str(e[3])}, "
                                f"nagare {ms_str(g[2])}..{ms_str(g[3])} "
                                f"(start off by {(g[2] - e[2]) / 1000:+.3f} s, "
                                f"end {(g[3] - e[3]) / 1000:+.3f} s)"))
    # Every record on its own: start <= end, both inside the capture's window.
    first = min(v[2] for v in expected.values()) - TIME_SLACK_MS
    last = max(v[3] for v in expected.values()) + TIME_SLACK_MS
    for r in records:
        s, e = parse_time_ms(r["flow_start"]), parse_time_ms(r["flow_end"])
        if not (first <= s <= e <= last):
            problems.append((record_key(r), f"record outside the capture window "
                             f"{ms_str(first)}..{ms_str(last)} (±1 s): "
                             f"{r['flow_start']}..{r['flow_end']}"))
    versions = collections.Counter(int(r.get("flow_version", 0)) for r in records)
    if set(versions) != {version}:
        problems.append((None, f"flow_version: expected {version}, stored {dict(versions)}"))
    return problems


def report(problems, limit=60):
    w = max((len(fmt_key(k)) for k, _ in problems if k), default=10)
    for k, p in problems[:limit]:
        log(f"    {fmt_key(k) if k else '':<{w}}  {p}")
    if len(problems) > limit:
        log(f"    ... and {len(problems) - limit} more")


def compare_decode(collected, decoded):
    """Multiset comparison of records, every field but time_received."""
    def canon(r):
        return json.dumps({k: v for k, v in r.items() if k != "time_received"}, sort_keys=True)
    a, b = collections.Counter(map(canon, collected)), collections.Counter(map(canon, decoded))
    problems = []
    for rec in sorted((a - b).elements()):
        problems.append(f"stored by collect, not given by decode: {rec}")
    for rec in sorted((b - a).elements()):
        problems.append(f"given by decode, not stored by collect: {rec}")
    return problems


# ---------------------------------------------------------------- processes

def start_capture(path, port, logpath):
    err = open(logpath, "w")
    p = subprocess.Popen(["tcpdump", "-i", "lo", "-n", "-U", "-Z", "root", "-s", "0",
                          "-w", path, f"udp and dst port {port}"],
                         stdout=subprocess.DEVNULL, stderr=err)
    wait_for(lambda: "listening on" in open(logpath).read(), 10, "tcpdump start", p)
    return p


def hostport(addr, port):
    return f"[{addr}]:{port}" if ":" in addr else f"{addr}:{port}"


def run_exporter(exporter, version, pcap, dest, work):
    logpath = os.path.join(work, "exporter.log")
    if exporter == "softflowd":
        # -r: read the file, export every flow at its end and exit (no -c:
        # softflowd 1.1.0 given a control socket with -r waits on it
        # forever).  -T full: one flow per 5-tuple.
        cmd = ["softflowd", "-r", pcap, "-n", dest, "-v", str(version),
               "-T", "full", "-6"]
        if version == 5:
            cmd.remove("-6")
    else:
        conf = os.path.join(work, "pmacctd.conf")
        with open(conf, "w") as f:
            f.write(f"""! pmacctd reads the capture, then exits; on exit the nfprobe
! plugin expires and sends every flow it holds.
daemonize: false
pcap_savefile: {pcap}
aggregate: src_host, dst_host, src_port, dst_port, proto
plugins: nfprobe
nfprobe_receiver: {dest}
nfprobe_version: {version}
""")
        cmd = ["pmacctd", "-f", conf]
    with open(logpath, "w") as out:
        r = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, timeout=120)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}\n{open(logpath).read()}")


def one_config(args, name, exporter, version, v6, coll_addr, pcap, expected_all, top):
    work = os.path.join(top, name)
    os.makedirs(work)
    store = os.path.join(work, "store")
    port = free_port()
    expected = {k: v for k, v in expected_all.items() if v6 or ":" not in k[0]}

    cap = start_capture(os.path.join(work, "export.pcap"), port,
                        os.path.join(work, "tcpdump.log"))
    collect_log = open(os.path.join(work, "collect.log"), "w")
    # two receive workers (collect --workers): the exporter's datagrams
    # must all reach one of them, its templates with its data
    collector = subprocess.Popen([args.bin, "collect", "--store", store,
                                  "--listen", hostport(coll_addr, port),
                                  "--workers", "2"],
                                 stdout=collect_log, stderr=subprocess.STDOUT)
    try:
        wait_for(lambda: udp_bound(port), 15, "nagare collect listening", collector)
        run_exporter(exporter, version, pcap, hostport(coll_addr, port), work)
        time.sleep(1.0)  # let the last datagrams arrive
    finally:
        rc = stop_checked(collector)
        stop_checked(cap, signal.SIGINT)
    collect_log.close()
    if rc != 0:
        raise RuntimeError(f"nagare collect exited {rc} after SIGTERM:\n"
                           + open(collect_log.name).read()[-3000:])

    q = run([args.bin, "query", "--store", store, "--format", "ndjson", "-q"])
    records = read_ndjson(q.stdout, "nagare query --format ndjson")
    got = nagare_flows(records)
    problems = compare(expected, got, records, version)
    exporters = {norm_addr(r["exporter"]) for r in records}
    if records and exporters != {coll_addr}:
        problems.append((None, f"exporter: expected {coll_addr}, stored {sorted(exporters)}"))

    dec = run([args.bin, "decode", "-q", os.path.join(work, "export.pcap")])
    decoded = read_ndjson(dec.stdout, "nagare decode")
    dproblems = compare_decode(records, decoded)

    status = subprocess.run([args.bin, "status", "--store", store],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    # one export process that never restarts: no restart may be seen
    # (decode/restart.c; nagare status prints "restarts:" when one was)
    if "restarts:" in status.stdout:
        problems.append((None, "a restart was counted for an exporter that did not restart"))

    ok = not problems and not dproblems
    log(f"  {name}: {len(records)} records stored, {len(got)} 5-tuples; tshark "
        f"{len(expected)} 5-tuples"
        + ("" if v6 else " (IPv4 only: NetFlow v5 cannot carry IPv6)")
        + f"; decode of the export capture: {len(decoded)} records")
    if problems:
        log(f"  {name}: FAIL, collect vs tshark:")
        report(problems)
    if dproblems:
        log(f"  {name}: FAIL, decode vs collect:")
        for p in dproblems[:20]:
            log(f"    {p}")
    if not ok:
        log(f"  nagare status:\n" + "\n".join("    " + l for l in status.stdout.splitlines()))
        log(f"  collect log (tail):\n" + "\n".join(
            "    " + l for l in open(collect_log.name).read().splitlines()[-15:]))
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.environ.get("NG_BIN"), help="nagare binary")
    ap.add_argument("--pcap", help="use this traffic capture instead of making one")
    ap.add_argument("--only", help="comma list of configurations to run")
    ap.add_argument("--keep", action="store_true", default=bool(os.environ.get("NG_E2E_KEEP")),
                    help="keep the work directory")
    args = ap.parse_args()
    if not args.bin or not os.access(args.bin, os.X_OK):
        sys.exit(f"exporters.py: no nagare binary (--bin or NG_BIN): {args.bin}")
    args.bin = os.path.abspath(args.bin)

    top = tempfile.mkdtemp(prefix="ng-e2e-")
    ok = False
    try:
        pcap = os.path.join(top, "traffic.pcap")
        raw = args.pcap or os.path.join(top, "traffic-raw.pcap")
        if not args.pcap:
            run([os.path.join(HERE, "make_traffic.sh"), raw])
        shift = int(os.environ.get("NG_E2E_SHIFT", "3600"))
        run(["editcap", "-t", str(-shift), raw, pcap])
        expected = tshark_flows(pcap)
        first = min(v[2] for v in expected.values())
        last = max(v[3] for v in expected.values())
        log(f"traffic: {sum(v[1] for v in expected.values())} packets, {len(expected)} "
            f"5-tuples, {ms_str(first)}..{ms_str(last)} UTC (moved back {shift} s)")
        protos = collections.Counter((":" in k[0], k[2]) for k in expected)
        for need in ((False, 6), (False, 17), (False, 1), (True, 6), (True, 17), (True, 58)):
            if need not in protos:
                raise RuntimeError(f"the capture lacks {need}: traffic generation failed")

        results = {}
        only = set(args.only.split(",")) if args.only else None
        for name, exporter, version, v6, collector in CONFIGS:
            if only and name not in only:
                continue
            try:
                results[name] = one_config(args, name, exporter, version, v6, collector,
                                           pcap, expected, top)
            except Exception as e:  # one configuration's failure must not hide the others
                log(f"  {name}: FAIL: {e}")
                results[name] = False
        log("")
        for name, r in results.items():
            log(f"  {'PASS' if r else 'FAIL'}  {name}")
        ok = bool(results) and all(results.values())
    finally:
        if ok and not args.keep:
            shutil.rmtree(top, ignore_errors=True)
        else:
            log(f"work directory kept: {top}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
