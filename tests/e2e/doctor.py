#!/usr/bin/env python3
"""doctor.py — `nagare doctor` checked against independent readings.

  1. This machine: each kernel setting doctor prints is the value
     `sysctl -n` reads; one below what nagare needs is a `warn` line, and
     the lines printed for /etc/sysctl.d/60-nagare.conf are exactly the
     settings that are low, with nagare's values (the ElastiFlow guide's
     net.core.rmem_max=67108864, netdev_max_backlog=4096,
     udp_rmem_min=131072).
  2. A fake proc/sys tree (--proc-root) holding those values: every sysctl
     line `ok`, no lines to add; with udp_mem too small for one 64 MiB
     socket it proposes 16384 pages (64 MiB / 4 KiB).
  3. A UDP port held by another program (this script): `fail`, naming the
     program and its pid, exit status 1.
  4. A store whose collector hit limits.exporters (a configuration of 2
     exporters, 3 sending from 127.0.0.2-4): a `warn` naming
     exporters_evicted with the count `nagare status --format json` gives;
     a file in DIR/quarantine: a `warn`.
  5. A MaxMind test database (../shared/testdata/mmdb): its type and build
     date as the file's own metadata says (read here with a decoder of the
     MaxMind DB format's metadata map, maxmind.github.io/MaxMind-DB/).

Usage: doctor.py --bin NAGARE.  Exit 0 when every check passes.
"""
import argparse
import datetime
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_util import free_port, stop_checked, v5_header, v5_record, wait_for  # noqa: E402

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)
    return ok


def doctor(nagare, *args):
    r = subprocess.run([nagare, "doctor", "--no-http", *args], capture_output=True, text=True,
                       timeout=60)
    return r.returncode, r.stdout


def line_of(out, check_name):
    """The finding line of `check_name` ("sysctl net.core.rmem_max")."""
    for line in out.splitlines():
        m = re.match(r"^(ok|warn|fail)\s+" + re.escape(check_name) + r": (.*)$", line)
        if m:
            return m.group(1), m.group(2)
    return None, None


def file_lines(out):
    """The lines doctor proposes for /etc/sysctl.d/60-nagare.conf."""
    if "To tune the kernel" not in out:
        return []
    tail = out.split("(no reboot needed):\n\n", 1)[1]
    return [l for l in tail.split("\n\n", 1)[0].splitlines() if l.strip()]


WANT = {"net.core.rmem_max": 67108864, "net.core.netdev_max_backlog": 4096,
        "net.ipv4.udp_rmem_min": 131072}


def this_machine(nagare, work):
    port = free_port()
    rc, out = doctor(nagare, "--store", os.path.join(work, "s1"), "--listen",
                     f"127.0.0.1:{port}")
    check(rc == 0, f"this machine: exit 0 (nothing fails) ({rc})")
    expect = []
    for key, want in WANT.items():
        cur = int(subprocess.run(["sysctl", "-n", key], capture_output=True, text=True,
                                 check=True).stdout)
        level, what = line_of(out, "sysctl " + key)
        check(what is not None and what.startswith(f"{cur}"),
              f"{key}: doctor reads {what and what.split()[0]}, sysctl -n {cur}")
        check(level == ("ok" if cur >= want else "warn"),
              f"{key}: {level} ({cur} against {want})")
        if cur < want:
            expect.append(f"{key} = {want}")
    got = [l for l in file_lines(out) if not l.startswith("net.ipv4.udp_mem")]
    check(got == expect, f"the lines to add are exactly the low ones: {got} == {expect}")
    print("  (" + "; ".join(expect or ["this kernel is tuned"]) + ")")


def fake_root(work, values, udp_mem):
    root = os.path.join(work, "root")
    shutil.rmtree(root, ignore_errors=True)
    for key, v in values.items():
        p = os.path.join(root, "proc", "sys", *key.split("."))
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(f"{v}\n")
    p = os.path.join(root, "proc", "sys", "net", "ipv4", "udp_mem")
    with open(p, "w") as f:
        f.write(udp_mem + "\n")
    return root


def tuned(nagare, work):
    port = free_port()
    root = fake_root(work, WANT, "100000 200000 300000")
    rc, out = doctor(nagare, "--proc-root", root, "--listen", f"127.0.0.1:{port}")
    for key in list(WANT) + ["net.ipv4.udp_mem"]:
        level, what = line_of(out, "sysctl " + key)
        check(level == "ok", f"tuned root: {key} ok ({level}: {what})")
    check(file_lines(out) == [], "tuned root: no lines to add")
    root = fake_root(work, WANT, "10 20 30")
    rc, out = doctor(nagare, "--proc-root", root, "--listen", f"127.0.0.1:{port}")
    level, what = line_of(out, "sysctl net.ipv4.udp_mem")
    check(level == "warn", f"udp_mem 10 20 30: warn ({level}: {what})")
    page = os.sysconf("SC_PAGE_SIZE")
    need = (64 << 20) // page
    check(file_lines(out) == [f"net.ipv4.udp_mem = 10 {need} {need}"],
          f"udp_mem: proposes 10 {need} {need} ({file_lines(out)})")


def port_held(nagare):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    rc, out = doctor(nagare, "--listen", f"127.0.0.1:{port}")
    level, what = line_of(out, f"port udp 127.0.0.1:{port}")
    comm = open("/proc/self/comm").read().strip()
    check(level == "fail" and what == f"in use by {comm} (pid {os.getpid()})",
          f"a held port: fail naming {comm} (pid {os.getpid()}) ({level}: {what})")
    check(rc == 1, f"a failed check: exit 1 ({rc})")
    s.close()


def limits_hit(nagare, work):
    store = os.path.join(work, "store")
    conf = os.path.join(work, "nagare.yaml")
    with open(conf, "w") as f:
        f.write("limits:\n  exporters: 2\n")
    port = free_port()
    log = open(os.path.join(work, "collect.log"), "w")
    p = subprocess.Popen([nagare, "collect", "--store", store, "--config", conf, "--no-http",
                          "--listen", f"127.0.0.1:{port}", "--stats-interval", "1"],
                         stdout=log, stderr=subprocess.STDOUT)
    wait_for(lambda: os.path.exists(os.path.join(store, "state", "interfaces.tsv")), 20,
             "collector ready", p)
    now = int(time.time())
    for i, src in enumerate(["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.2"]):
        d = v5_header(1, 100000, now, 0, i) + v5_record(
            0x0a000001, 0x0a000002, 0, 1, 2, 1, 100, 90000, 95000, 1000, 80, 0x10, 6)
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind((src, 0))
        s.sendto(d, ("127.0.0.1", port))
        s.close()
        time.sleep(0.1)
    time.sleep(1.5)
    check(stop_checked(p) == 0, "collector stopped cleanly")
    st = json.loads(subprocess.run([nagare, "status", "--store", store, "--format", "json"],
                                   capture_output=True, text=True, check=True).stdout)
    evicted = st["state"]["limits"]["exporters_evicted"]
    os.makedirs(os.path.join(store, "quarantine"), exist_ok=True)
    with open(os.path.join(store, "quarantine", "x.seg"), "wb") as f:
        f.write(b"\0" * 100)
    rc, out = doctor(nagare, "--store", store, "--listen", f"127.0.0.1:{port}")
    level, what = line_of(out, "limit exporters_evicted")
    check(evicted >= 1 and level == "warn" and what is not None and
          what.startswith(f"{evicted}:"),
          f"limits hit: warn exporters_evicted {evicted} as status says ({level}: {what})")
    level, what = line_of(out, "quarantine")
    check(level == "warn" and what.startswith("1 damaged files (100 bytes)"),
          f"quarantine: warn, 1 file of 100 bytes ({level}: {what})")
    level, what = line_of(out, "kernel drops")
    check(level == "ok", f"kernel drops: ok ({level}: {what})")


def mmdb_metadata(path):
    """The metadata map of a MaxMind DB file (MaxMind DB format 2.0,
    "Metadata"): strings, unsigned ints, maps and arrays, enough for
    database_type and build_epoch; pointers are skipped."""
    data = open(path, "rb").read()
    at = data.rfind(b"\xab\xcd\xefMaxMind.com") + 14

    def value(o):
        ctrl = data[o]
        o += 1
        t = ctrl >> 5
        if t == 1:  # a pointer (some test databases' languages): not followed
            return None, o + ((ctrl >> 3) & 3) + 1
        if t == 0:
            t = 7 + data[o]
            o += 1
        size = ctrl & 0x1F
        if size == 29:
            size, o = 29 + data[o], o + 1
        elif size == 30:
            size, o = 285 + int.from_bytes(data[o:o + 2], "big"), o + 2
        elif size == 31:
            size, o = 65821 + int.from_bytes(data[o:o + 3], "big"), o + 3
        if t == 2:
            return data[o:o + size].decode(), o + size
        if t in (5, 6, 9, 10):
            return int.from_bytes(data[o:o + size], "big"), o + size
        if t == 7:
            m = {}
            for _ in range(size):
                k, o = value(o)
                m[k], o = value(o)
            return m, o
        if t == 11:
            v = []
            for _ in range(size):
                x, o = value(o)
                v.append(x)
            return v, o
        if t == 14:
            return bool(size), o
        return None, o + size

    return value(at)[0]


def database(nagare, work, testdata):
    db = os.path.join(testdata, "mmdb", "GeoIP2-City-Test.mmdb")
    if not os.path.exists(db):
        print("skip database: no " + db)
        return
    conf = os.path.join(work, "db.yaml")
    with open(conf, "w") as f:
        f.write(f"enrich:\n  geoip_db: {db}\n")
    md = mmdb_metadata(db)
    built = datetime.datetime.fromtimestamp(md["build_epoch"], datetime.timezone.utc)
    rc, out = doctor(nagare, "--config", conf, "--listen", f"127.0.0.1:{free_port()}")
    level, what = line_of(out, "database geoip")
    days = (int(time.time()) - md["build_epoch"]) // 86400
    want = f"{db}: {md['database_type']}, built {built:%Y-%m-%d} ({days} days ago)"
    check(what == want, f"database: {what!r} == {want!r}")
    check(level == ("warn" if days > 60 else "ok"), f"database age {days} days: {level}")
    with open(conf, "w") as f:
        f.write(f"enrich:\n  geoip_db: {work}/missing.mmdb\n")
    rc, out = doctor(nagare, "--config", conf, "--listen", f"127.0.0.1:{free_port()}")
    level, what = line_of(out, "database geoip")
    check(level == "fail" and rc == 1, f"a missing database: fail, exit 1 ({level}, {rc})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--testdata", default=os.environ.get("NG_TESTDATA", ""))
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="ng_doctor_")
    try:
        this_machine(a.bin, work)
        tuned(a.bin, work)
        port_held(a.bin)
        limits_hit(a.bin, work)
        database(a.bin, work, a.testdata)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"doctor: {len(failures)} failures")
    return 1 if failures else 0


sys.exit(main())
