#!/usr/bin/env python3
"""timeflood.py — a junk flood with dates from 1970 to 2106, good flows mixed in.

The hostile sender of issue 21 (docs/security.md, "Time-hostile input"):
100 000 NetFlow v5 datagrams, each a valid header (version 5, count 2)
followed by random bytes, so that they decode into 200 000 flows whose
times lie anywhere from 1970 to 2106, sent from 127.0.0.1; mixed in, from
127.0.0.2, 1 000 datagrams of 10 good flows each, timed now.  Before the
time window, the collector wrote one segment per hour the junk touched
(141 507 files, 13 minutes of fsyncs) while the good flows waited.

The sender knows which flows are implausible: all the junk ones.  A junk
header's unix_secs is drawn outside [now - 60 d, now + 60 d] and a v5
record's times lie within 2^31 ms (24.9 days) of its header's time, so
every junk flow is more than 35 days from its receive time, far outside
the default window (7 days back, 1 hour ahead); every good flow is inside.

Checked, against a fresh `nagare collect` (keep mode, the default):

  - every good flow is stored within one flush interval (5 s) + 3 s of the
    last one sent (nagare query, summary.flows of exporter 127.0.0.2);
  - the segment count is bounded: at most 16 segments in at most 3 hour
    directories for the whole run;
  - `nagare query` (all time, -s srcip) and GET /metrics answer in under
    2 s, during the flood and while it is being flushed;
  - time_implausible of exporter 127.0.0.1 equals the junk flows sent
    (200 000) exactly, 0 for 127.0.0.2, with no datagram lost;
  - the junk flows are stored, flagged: `anomaly time` counts 200 000,
    `not anomaly time` the good ones, and a flagged flow's orig_start is
    its decoded time while flow_start is its time_received.

Then with --implausible-time reject (a shorter flood: 20 000 datagrams):
none of the junk is stored, all good flows are, and time_implausible
counts every junk flow.

On a collector without the window (main before it) the first run fails:
the good flows are not stored in time, and the segments grow by the
thousand; the collector is then killed (SIGKILL: its final flush would
take minutes).

Standard library only.  Run through test_timeflood.sh (a private network
namespace when unshare allows it).  Under 60 s.
"""
import argparse
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

from e2e_util import free_port, query, v5_header, v5_record

JUNK_ADDR, GOOD_ADDR = "127.0.0.1", "127.0.0.2"
FLUSH_S = 5.0      # the writer's flush interval (store/writer.c DUE_MS)
MARGIN_S = 3.0
QUICK_S = 2.0      # a query or /metrics during the flood, at most
GOOD_EVERY = 100   # one good datagram after this many junk ones
GOOD_PER = 10      # flows in a good datagram
RATE = 25000       # datagrams a second (paced: loopback loses none)
DAY_S = 86400


def log(msg):
    print(f"timeflood: {msg}", flush=True)


def fail(msg):
    raise AssertionError(msg)


def junk_datagram(rng, now_s):
    while True:
        secs = rng.getrandbits(32)
        if abs(secs - now_s) > 60 * DAY_S:
            break
    hdr = v5_header(2, rng.getrandbits(32), secs, rng.getrandbits(32), rng.getrandbits(32))
    return hdr + rng.randbytes(96)


def good_datagram(i, uptime_ms, seq):
    now = time.time()
    hdr = v5_header(GOOD_PER, uptime_ms, int(now), int((now % 1) * 1e9), seq)
    recs = b""
    for k in range(GOOD_PER):
        n = i * GOOD_PER + k
        src = bytes([10, 99, (n >> 8) & 255, n & 255])
        first, last = uptime_ms - 2000, uptime_ms - 1000
        recs += v5_record(src, bytes([192, 0, 2, 1]), bytes(4), 1, 2, 3, 300, first, last,
                          40000 + k, 443, 0x18, 6, src_mask=24, dst_mask=24)
    return hdr + recs


class Collector:
    def __init__(self, args, work, name, extra):
        self.bin = args.bin
        self.store = os.path.join(work, name)
        self.port = free_port(socket.SOCK_DGRAM)
        self.http_port = free_port(socket.SOCK_STREAM)
        self.log = open(os.path.join(work, name + ".log"), "w")
        self.p = subprocess.Popen(
            [self.bin, "collect", "--store", self.store, "--listen", f"127.0.0.1:{self.port}",
             "--http", f"127.0.0.1:{self.http_port}", "--stats-interval", "1"] + extra,
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self.p.poll() is not None:
                fail(f"nagare collect exited {self.p.returncode}:\n" + self.tail())
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.http_port}/healthz", timeout=1)
                return
            except OSError:
                time.sleep(0.05)
        fail("nagare collect did not answer /healthz within 15 s")

    def tail(self):
        self.log.flush()
        return open(self.log.name).read()[-3000:]

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(30)
            except subprocess.TimeoutExpired:
                self.kill()
                fail("nagare collect did not stop within 30 s of SIGTERM")
        if self.p.returncode != 0:
            fail(f"nagare collect exited {self.p.returncode}:\n" + self.tail())

    def count(self, flt):
        """Flows stored that match the filter (summary.flows), and seconds taken."""
        t = time.monotonic()
        r = query(self.bin, self.store, "-s", "exporter", flt, timeout=60)
        took = time.monotonic() - t
        if r.returncode != 0:
            if "no such" in r.stderr.lower() or "not a store" in r.stderr.lower():
                return 0, took
            fail(f"nagare query '{flt}' exited {r.returncode}: {r.stderr}")
        return json.loads(r.stdout)["summary"]["flows"], took

    def timed_query(self):
        t = time.monotonic()
        r = subprocess.run([self.bin, "query", "--store", self.store, "-s", "srcip", "-n", "5"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        return time.monotonic() - t, r.returncode

    def timed_metrics(self):
        t = time.monotonic()
        with urllib.request.urlopen(f"http://127.0.0.1:{self.http_port}/metrics",
                                    timeout=120) as r:
            body = r.read().decode()
        return time.monotonic() - t, body

    def segments(self):
        segs, hours = 0, set()
        for d, _, files in os.walk(os.path.join(self.store, "flows")):
            n = sum(f.endswith(".seg") for f in files)
            segs += n
            if n:
                hours.add(os.path.relpath(d, self.store))
        return segs, hours

    def exporters(self):
        r = subprocess.run([self.bin, "status", "--store", self.store, "--format", "json"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=30)
        if r.returncode != 0:
            fail(f"nagare status exited {r.returncode}: {r.stderr}")
        return json.loads(r.stdout)


def flood(c, junk, seed, probes):
    """Sends junk and good datagrams, paced; runs the probes (a list of
    (at_fraction, fn)) on a thread at those points.  Returns (junk flows,
    good flows, time the last good one was sent)."""
    rng = random.Random(seed)
    now_s = int(time.time())
    js = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    js.bind((JUNK_ADDR, 0))
    gs = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    gs.bind((GOOD_ADDR, 0))
    dest = ("127.0.0.1", c.port)
    pending = sorted(probes)
    threads = []
    t0 = time.monotonic()
    good = 0
    last_good = t0
    for i in range(junk):
        js.sendto(junk_datagram(rng, now_s), dest)
        if i % GOOD_EVERY == GOOD_EVERY - 1:
            gs.sendto(good_datagram(good // GOOD_PER, int((time.monotonic() - t0) * 1000) + 5000,
                                    good // GOOD_PER * GOOD_PER), dest)
            good += GOOD_PER
            last_good = time.monotonic()
        while pending and i >= pending[0][0] * junk:
            th = threading.Thread(target=pending.pop(0)[1], daemon=True)
            th.start()
            threads.append(th)
        ahead = (i + 1) / RATE - (time.monotonic() - t0)
        if ahead > 0.002:
            time.sleep(ahead)
    log(f"sent {junk} junk datagrams ({2 * junk} flows) and {good // GOOD_PER} good ones "
        f"({good} flows) in {time.monotonic() - t0:.1f} s")
    return 2 * junk, good, last_good, threads


def probe(c, results, what):
    def run():
        q, rc = c.timed_query()
        m, body = c.timed_metrics()
        results.append((what, q, rc, m))
        log(f"{what}: nagare query -s srcip {q:.2f} s (exit {rc}), /metrics {m:.2f} s")
    return run


def wait_good(c, good, last_good, deadline_s):
    """Polls until every good flow is stored; returns seconds after the
    last good one was sent, or fails at the deadline."""
    stored = 0
    while True:
        stored, _ = c.count(f"exporter {GOOD_ADDR}")
        after = time.monotonic() - last_good
        if stored >= good:
            return after
        if after > deadline_s:
            segs, hours = c.segments()
            fail(f"{stored} of {good} good flows stored {after:.1f} s after the last was sent "
                 f"(bound {deadline_s:.0f} s); the store holds {segs} segments in "
                 f"{len(hours)} hour directories")
        time.sleep(0.2)


def implausible_counts(c, want):
    """time_implausible per exporter from nagare status, once it shows
    `want` for the junk exporter (exporters.json is written every second)."""
    deadline = time.monotonic() + 6
    while True:
        st = c.exporters().get("state") or {}
        rows = {r["exporter"]: r for r in st.get("exporters", [])}
        junk = rows.get(JUNK_ADDR, {})
        if junk.get("time_implausible") == want or time.monotonic() > deadline:
            return st, rows
        time.sleep(0.25)


def check_counts(c, junk_flows, good, junk_sent):
    st, rows = implausible_counts(c, junk_flows)
    j, g = rows.get(JUNK_ADDR), rows.get(GOOD_ADDR)
    if not j or not g:
        fail(f"nagare status lists no row for {JUNK_ADDR} or {GOOD_ADDR}: {sorted(rows)}")
    drops = st.get("listener", {}).get("drops")
    if j.get("packets") != junk_sent or drops:
        fail(f"datagrams lost: {j.get('packets')} of {junk_sent} junk datagrams received, "
             f"kernel drops {drops}: the exact count cannot be checked")
    if j.get("time_implausible") != junk_flows:
        fail(f"time_implausible of {JUNK_ADDR} is {j.get('time_implausible')}, "
             f"sent {junk_flows} implausible flows")
    if g.get("time_implausible") != 0 or g.get("records") != good:
        fail(f"{GOOD_ADDR}: time_implausible {g.get('time_implausible')} (want 0), records "
             f"{g.get('records')} (want {good})")
    log(f"time_implausible: {JUNK_ADDR} {junk_flows} (= sent), {GOOD_ADDR} 0")


def check_quick(results):
    if len(results) < 2:
        fail(f"only {len(results)} of the query and /metrics probes finished")
    for what, q, rc, m in results:
        if rc != 0 or q > QUICK_S or m > QUICK_S:
            fail(f"{what}: nagare query took {q:.2f} s (exit {rc}), /metrics {m:.2f} s: "
                 f"bound {QUICK_S} s")


def check_segments(c):
    segs, hours = c.segments()
    log(f"store: {segs} segments in {len(hours)} hour directories")
    if segs > 16 or len(hours) > 3:
        fail(f"{segs} segments in {len(hours)} hour directories: bound 16 in 3")


def run_keep(args, work):
    c = Collector(args, work, "keep", [])
    try:
        results = []
        junk_flows, good, last_good, threads = flood(
            c, args.junk, 21, [(0.5, probe(c, results, "during the flood"))])
        # while the flood's rows are flushed (the first flush is due 5 s
        # after the first row): a query and /metrics again
        time.sleep(1.5)
        threads.append(threading.Thread(target=probe(c, results, "while flushing"), daemon=True))
        threads[-1].start()
        after = wait_good(c, good, last_good, FLUSH_S + MARGIN_S)
        log(f"all {good} good flows stored {after:.1f} s after the last was sent")
        for th in threads:
            th.join(120)
        check_quick(results)
        check_segments(c)
        check_counts(c, junk_flows, good, args.junk)
        flagged, _ = c.count("anomaly time")
        sound, _ = c.count("not anomaly time")
        junk_stored, _ = c.count(f"exporter {JUNK_ADDR}")
        if flagged != junk_flows or junk_stored != junk_flows or sound != good:
            fail(f"stored: {flagged} flagged (want {junk_flows}), {junk_stored} from "
                 f"{JUNK_ADDR}, {sound} not flagged (want {good})")
        r = subprocess.run([args.bin, "query", "--store", c.store, "-n", "1", "--format",
                            "ndjson", "-q", "anomaly time"], stdout=subprocess.PIPE, text=True)
        rec = json.loads(r.stdout.splitlines()[0])
        if rec["flow_start"] != rec["time_received"] or rec["orig_start"] == rec["flow_start"] \
                or not rec["anomalies"] & 1:
            fail(f"a flagged flow: {rec}")
        log(f"keep: {flagged} flagged flows stored at their receive time (e.g. orig_start "
            f"{rec['orig_start']}, flow_start {rec['flow_start']}), {sound} good ones")
        c.stop()
    finally:
        c.kill()


def run_reject(args, work):
    c = Collector(args, work, "reject", ["--implausible-time", "reject"])
    try:
        junk = max(args.junk // 5, 1000)
        junk_flows, good, last_good, _ = flood(c, junk, 7, [])
        after = wait_good(c, good, last_good, FLUSH_S + MARGIN_S)
        check_counts(c, junk_flows, good, junk)
        junk_stored, _ = c.count(f"exporter {JUNK_ADDR}")
        total, _ = c.count("any")
        if junk_stored != 0 or total != good:
            fail(f"reject: {junk_stored} junk flows stored (want 0), {total} in all "
                 f"(want {good})")
        log(f"reject: no junk stored, {good} good flows stored {after:.1f} s after the last")
        c.stop()
    finally:
        c.kill()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--junk", type=int, default=100000, help="junk datagrams")
    ap.add_argument("--keep-work", action="store_true")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="ng_timeflood_")
    t = time.monotonic()
    try:
        run_keep(args, work)
        run_reject(args, work)
    except AssertionError as e:
        log(f"FAIL: {e}")
        log(f"work directory kept: {work}")
        return 1
    log(f"ok in {time.monotonic() - t:.1f} s")
    if not args.keep_work:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
