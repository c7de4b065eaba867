#!/usr/bin/env python3
"""query_nfdump.py — `nagare query` gives the same answers as nfdump.

The same NetFlow v5 export datagrams (generated here: a few thousand flows
with skewed addresses and ports, TCP/UDP/ICMP, flags, ToS, AS numbers,
interfaces, masks) are sent over UDP on loopback to BOTH

    nagare collect --store S --listen 127.0.0.1:P1
    nfcapd -w DIR -p P2 -b 127.0.0.1          (nfdump 1.7)

and, after a clean SIGTERM of both, each case below is run through
`nagare query` and `nfdump -R DIR`, and the rows must be equal:

  - filters: the set of matching flows (src, dst, ports, proto, packets,
    bytes) is equal as a multiset;
  - -s FIELD/ORDER -n 0: every group's key, flows, packets, bytes are equal;
  - -s FIELD/ORDER -n 10: the same keys in the same order (ties aside:
    nfdump's tie order is unspecified, so a tie at the cut is not compared);
  - -A a,b: every aggregated record's key, flows, packets, bytes.

nfdump's machine output is read with -N (no scaling) and -o csv or
-o 'fmt:...'.  Exit 0 on success, 1 on a difference, 77 when skipped.
"""
import argparse
import csv
import io
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time

from e2e_util import free_port, stop_checked, udp_bound, v5_header, v5_record, wait_for

PROTO = {"TCP": 6, "UDP": 17, "ICMP": 1, "GRE": 47, "ICMP6": 58, "ESP": 50}

# (name, filter, nagare args, nfdump args, kind)
# kind: "list" (flows), "stat" (-s), "agg" (-A)
CASES = [
    ("proto tcp", "proto tcp", [], [], "list"),
    ("proto udp or icmp", "proto udp or proto icmp", [], [], "list"),
    ("tcp dport 443", "proto tcp and dst port 443", [], [], "list"),
    ("src net /8", "src net 10.0.0.0/8", [], [], "list"),
    ("net with mask", "dst net 192.168.0.0 255.255.0.0", [], [], "list"),
    ("not host", "not host 10.0.0.1", [], [], "list"),
    ("bytes > 1k", "bytes > 1k", [], [], "list"),
    ("packets range", "packets >= 10 and packets < 100", [], [], "list"),
    ("port in list", "port in [22 53 8080]", [], [], "list"),
    ("ip in list", "ip in [10.0.0.1 10.0.0.2 172.16.5.0/24]", [], [], "list"),
    ("flags S", "flags S", [], [], "list"),
    ("flags SA", "flags SA", [], [], "list"),
    ("flags S not AFRPU", "flags S and not flags AFRPU", [], [], "list"),
    ("not (flags SA)", "not (flags SA)", [], [], "list"),
    ("tos", "tos 32", [], [], "list"),
    # nfdump 1.7.1 refuses every AS filter without a geo DB ("Can not filter
    # according geo elements"): AS numbers are compared by -s srcas below.
    ("in if", "in if 3 and not out if 2", [], [], "list"),
    ("if", "if 4", [], [], "list"),
    ("dst port cmp", "dst port > 1024 and dst port < 50000", [], [], "list"),
    # (nfcapd 1.7.1 does not store NetFlow v5 masks: no mask case)
    ("src port lt", "not proto tcp and src port < 1024", [], [], "list"),
    ("proto num", "proto 17 and not dst port 53", [], [], "list"),
    ("duration", "duration > 20000", [], [], "list"),
    ("bpp", "bpp < 100", [], [], "list"),
    ("pps", "pps > 100", [], [], "list"),
    ("bps", "bps > 100k", [], [], "list"),
    ("parens", "(proto udp and port 53) or (proto tcp and not port 443)", [], [], "list"),
    ("stat srcip/bytes", "", ["-s", "srcip/bytes"], ["-s", "srcip/bytes"], "stat"),
    ("stat dstip/flows", "proto tcp", ["-s", "dstip"], ["-s", "dstip"], "stat"),
    ("stat dstport/packets", "", ["-s", "dstport/packets"], ["-s", "dstport/packets"], "stat"),
    ("stat proto/flows", "", ["-s", "proto/flows"], ["-s", "proto/flows"], "stat"),
    ("stat srcport", "proto udp", ["-s", "srcport/bytes"], ["-s", "srcport/bytes"], "stat"),
    ("stat ip", "", ["-s", "ip/bytes"], ["-s", "ip/bytes"], "stat"),
    ("stat port", "proto tcp", ["-s", "port/packets"], ["-s", "port/packets"], "stat"),
    ("stat srcas", "", ["-s", "srcas/bytes"], ["-s", "srcas/bytes"], "stat"),
    ("stat inif", "", ["-s", "inif"], ["-s", "inif"], "stat"),
    ("stat tos", "", ["-s", "tos/bytes"], ["-s", "tos/bytes"], "stat"),
    ("agg srcip,dstport", "", ["-A", "srcip,dstport"], ["-A", "srcip,dstport"], "agg"),
    ("agg proto,dstip", "bytes > 500", ["-A", "proto,dstip"], ["-A", "proto,dstip"], "agg"),
    ("agg srcip4/24", "", ["-A", "srcip4/24"], ["-A", "srcip4/24"], "agg"),
]


def log(msg):
    print(f"query_nfdump: {msg}", flush=True)


# ---- traffic -----------------------------------------------------------------

def zipf_pick(rng, items, s=1.1):
    weights = [1.0 / (i + 1) ** s for i in range(len(items))]
    return rng.choices(items, weights)[0]


def make_flows(n, seed=7):
    rng = random.Random(seed)
    hosts = ([f"10.0.0.{i}" for i in range(1, 40)] + [f"10.1.{i}.7" for i in range(20)] +
             [f"192.168.{i}.{j}" for i in range(3) for j in (1, 2, 3)] +
             [f"172.16.5.{i}" for i in range(1, 12)] + ["198.51.100.7", "203.0.113.9"])
    rng.shuffle(hosts)
    ports = [443, 80, 53, 22, 8080, 123, 3306, 25, 993, 5060]
    flows = []
    for _ in range(n):
        proto = rng.choices([6, 17, 1], [70, 25, 5])[0]
        src, dst = zipf_pick(rng, hosts), zipf_pick(rng, hosts)
        if proto == 1:
            sport, dport = 0, rng.choice([0, 0x0800, 0x0303])
        elif rng.random() < 0.5:
            sport, dport = rng.randint(1025, 65535), zipf_pick(rng, ports)
        else:
            sport, dport = zipf_pick(rng, ports), rng.randint(1025, 65535)
        pkts = max(1, int(rng.paretovariate(1.2)))
        byts = pkts * rng.randint(40, 1500)
        dur = rng.choice([0, rng.randint(1, 1000), rng.randint(1000, 60000)])
        flows.append(dict(
            src=src, dst=dst, nh="10.255.0.1", inif=rng.randint(1, 5), outif=rng.randint(1, 5),
            pkts=pkts, bytes=byts, dur=dur, sport=sport, dport=dport,
            flags=rng.randint(0, 63) if proto == 6 else 0, proto=proto,
            tos=rng.choice([0, 0, 0, 32, 46 << 2]),
            sas=rng.choice([0, 15169, 64512, 13335]), das=rng.choice([0, 15169, 64512, 13335]),
            smask=rng.choice([8, 16, 24]), dmask=rng.choice([8, 16, 24])))
    return flows


def v5_packets(flows, unix_secs):
    """NetFlow v5 datagrams, 30 records each (Cisco's v5 format)."""
    uptime = 100_000_000  # ms: the exporter has been up ~28 h
    out = []
    seq = 0
    for i in range(0, len(flows), 30):
        chunk = flows[i:i + 30]
        hdr = v5_header(len(chunk), uptime, unix_secs, 0, seq)
        body = b""
        for k, f in enumerate(chunk):
            last = uptime - 1000 - ((i + k) * 37) % 300_000
            first = last - f["dur"]
            body += v5_record(
                socket.inet_aton(f["src"]), socket.inet_aton(f["dst"]),
                socket.inet_aton(f["nh"]), f["inif"], f["outif"], f["pkts"], f["bytes"],
                first, last, f["sport"], f["dport"], f["flags"], f["proto"], f["tos"],
                f["sas"], f["das"], f["smask"], f["dmask"])
        out.append(hdr + body)
        seq += len(chunk)
    return out


# ---- running -------------------------------------------------------------------

def run(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise SystemExit(f"query_nfdump: {' '.join(cmd)} failed ({r.returncode}):\n{r.stderr}")
    return r.stdout


# ---- reading answers ---------------------------------------------------------

def num_proto(v):
    v = v.strip()
    return int(v) if v.isdigit() else PROTO.get(v.upper(), v)


def nfd_port(v):
    """nfdump prints an ICMP flow's destination port as TYPE.CODE."""
    if "." in v:
        t, c = v.split(".")
        return int(t) * 256 + int(c)
    return int(v)


def nfdump_list(nfdump_dir, flt):
    out = run(["nfdump", "-R", nfdump_dir, "-q", "-N", "-o",
               "fmt:%sa|%da|%sp|%dp|%pr|%pkt|%byt", flt])
    rows = []
    for line in out.splitlines():
        parts = [x.strip() for x in line.split("|")]
        if len(parts) != 7:
            continue
        rows.append((parts[0], parts[1], int(parts[2]), nfd_port(parts[3]), num_proto(parts[4]),
                     int(parts[5]), int(parts[6])))
    return sorted(rows)


def nagare_list(nagare, store, flt):
    out = run([nagare, "query", "--store", store, "-q", "--format", "csv", flt])
    rows = []
    for r in csv.DictReader(io.StringIO(out)):
        rows.append((r["src_addr"], r["dst_addr"], int(r["src_port"]), int(r["dst_port"]),
                     int(r["protocol"]), int(r["packets"]), int(r["bytes"])))
    return sorted(rows)


def nfdump_stat(nfdump_dir, args, flt, limit):
    # csv stat columns (nfdump 1.7): ts,te,td,pr,val,fl,flP,ipkt,ipktP,ibyt,ibytP,...
    out = run(["nfdump", "-R", nfdump_dir, "-q", "-N", "-n", str(limit), "-o", "csv"] +
              args + [flt])
    rows = []
    for line in out.splitlines():
        p = line.split(",")
        if len(p) < 10 or p[0] == "ts" or not p[5].strip().isdigit():
            continue
        key = p[4].strip()
        if args[1].startswith("proto"):
            key = str(num_proto(key))
        rows.append((key, int(p[5]), int(p[7]), int(p[9])))
    return rows


def nagare_stat(nagare, store, args, flt, limit):
    out = run([nagare, "query", "--store", store, "-q", "--format", "csv", "-n", str(limit)] +
              args + [flt])
    rows = []
    for r in csv.DictReader(io.StringIO(out)):
        cols = list(r.keys())
        key = r[cols[2]]  # first_seen,last_seen,KEY,...
        rows.append((key, int(r["flows"]), int(r["packets"]), int(r["bytes"])))
    return rows


AGG_FMT = {"srcip": "%sa", "dstip": "%da", "srcport": "%sp", "dstport": "%dp",
           "proto": "%pr", "srcip4/24": "%sa"}


def nfdump_agg(nfdump_dir, fields, flt):
    fmt = "|".join(AGG_FMT[f] for f in fields) + "|%fl|%pkt|%byt"
    out = run(["nfdump", "-R", nfdump_dir, "-q", "-N", "-A", ",".join(fields), "-o",
               "fmt:" + fmt, flt])
    rows = []
    for line in out.splitlines():
        p = [x.strip() for x in line.split("|")]
        if len(p) != len(fields) + 3:
            continue
        key = tuple(str(num_proto(v)) if f == "proto" else v for f, v in zip(fields, p))
        rows.append((key, int(p[-3]), int(p[-2]), int(p[-1])))
    return sorted(rows)


def nagare_agg(nagare, store, fields, flt):
    out = run([nagare, "query", "--store", store, "-q", "--format", "csv", "-n", "0", "-A",
               ",".join(fields), flt])
    rows = []
    for r in csv.DictReader(io.StringIO(out)):
        cols = list(r.keys())
        key = tuple(r[c] for c in cols[2:2 + len(fields)])
        rows.append((key, int(r["flows"]), int(r["packets"]), int(r["bytes"])))
    return sorted(rows)


def strip_prefix(key):
    """nfdump prints an aggregated /24 as the masked address; nagare too,
    possibly with /LEN: compare the address part."""
    return tuple(k.split("/")[0] for k in key)


def compare(name, a, b, what):
    if a == b:
        return []
    sa, sb = set(a), set(b)
    diff = [f"  only nagare: {x}" for x in sorted(sa - sb)[:8]]
    diff += [f"  only nfdump: {x}" for x in sorted(sb - sa)[:8]]
    if not diff:
        diff = ["  same rows, different order or multiplicity"]
    return [f"{name}: {what} differ ({len(a)} vs {len(b)} rows)"] + diff


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--flows", type=int, default=6000)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="ng-nfdump-")
    store, nfdir = os.path.join(work, "store"), os.path.join(work, "nfcapd")
    os.makedirs(nfdir)
    p1, p2 = free_port(), free_port()
    nag = subprocess.Popen([args.bin, "collect", "--store", store, "--listen",
                            f"127.0.0.1:{p1}", "--stats-interval", "3600"],
                           stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "nagare.log"), "w"))
    nfc = subprocess.Popen(["nfcapd", "-w", nfdir, "-p", str(p2), "-b", "127.0.0.1",
                            "-t", "3600"],
                           stdout=open(os.path.join(work, "nfcapd.log"), "w"),
                           stderr=subprocess.STDOUT)
    try:
        wait_for(lambda: udp_bound(p1) and udp_bound(p2), 15, "the collectors to listen")
        flows = make_flows(args.flows)
        pkts = v5_packets(flows, int(time.time()))
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        for i, d in enumerate(pkts):
            s.sendto(d, ("127.0.0.1", p1))
            s.sendto(d, ("127.0.0.1", p2))
            if i % 20 == 19:
                time.sleep(0.01)  # never outrun a socket buffer
        time.sleep(1.0)
    finally:
        stop_checked(nag)
        stop_checked(nfc)
    log(f"{len(flows)} flows in {len(pkts)} NetFlow v5 datagrams to both collectors ({work})")

    problems = []
    total_nfd = nfdump_list(nfdir, "any")
    total_nag = nagare_list(args.bin, store, "")
    problems += compare("all flows", total_nag, total_nfd, "flows")
    if len(total_nfd) != len(flows):
        problems.append(f"nfcapd stored {len(total_nfd)} of {len(flows)} flows")
    checked = 0
    for name, flt, nag_args, nfd_args, kind in CASES:
        before = len(problems)
        if kind == "list":
            a, b = nagare_list(args.bin, store, flt), nfdump_list(nfdir, flt)
            if not b or len(b) == len(total_nfd):
                problems.append(f"{name}: '{flt}' selects {len(b)} of {len(total_nfd)} "
                                "flows: a vacuous case")
            problems += compare(name, a, b, "matching flows")
            detail = f"{len(a)} flows"
        elif kind == "stat":
            a = nagare_stat(args.bin, store, nag_args, flt, 0)
            b = nfdump_stat(nfdir, nfd_args, flt, 0)
            problems += compare(name, sorted(a), sorted(b), "groups")
            order = nag_args[1].split("/")[1] if "/" in nag_args[1] else "flows"
            idx = {"flows": 1, "packets": 2, "bytes": 3}[order]
            ta = nagare_stat(args.bin, store, nag_args, flt, 10)
            tb = nfdump_stat(nfdir, nfd_args, flt, 10)
            if [r[idx] for r in ta] != [r[idx] for r in tb]:
                problems.append(f"{name}: top 10 by {order} differ:\n  nagare {ta}\n"
                                f"  nfdump {tb}")
            for x, y in zip(ta, tb):
                if x != y and x[idx] != y[idx]:
                    problems.append(f"{name}: top-10 row {x} vs {y}")
            detail = f"{len(a)} groups"
        else:
            fields = nag_args[1].split(",")
            a = nagare_agg(args.bin, store, fields, flt)
            b = nfdump_agg(nfdir, fields, flt)
            a = sorted((strip_prefix(k), *v) for k, *v in a)
            b = sorted((strip_prefix(k), *v) for k, *v in b)
            problems += compare(name, a, b, "aggregated records")
            detail = f"{len(a)} records"
        checked += 1
        log(f"{'ok  ' if len(problems) == before else 'FAIL'} {name:22} {flt!r:50} {detail}")
    if problems:
        for p in problems:
            print("FAIL " + p)
        log(f"{len(problems)} difference(s); work dir kept: {work}")
        return 1
    log(f"PASS: {checked} cases, nagare and nfdump agree on every row")
    if not args.keep:
        shutil.rmtree(work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
