#!/usr/bin/env python3
"""tests/fault/crash.py — kill -9 and failing disks at random points, then
check the store, in the manner of SQLite's crash tests.

    python3 tests/fault/crash.py --nagare build/nagare --shim build/fault_shim.so
    NG_FAULT_ITERATIONS=200 NG_FAULT_SEED=7 python3 tests/fault/crash.py ...

Each iteration picks a phase and a random point in it, seeded (the seed is
printed; NG_FAULT_SEED repeats a run), and checks what must hold after:

  ingest     `nagare collect` receives a NetFlow v5 stream and is killed
             (SIGKILL) after a random time, so mostly mid-append and now
             and then mid-flush (fsync, rename).  Then: every flow sent
             more than one flush interval (5 s) plus a margin before the
             kill is stored, none twice, the store opens and every query
             shape agrees; a new collector appends to the same store.
  compact    `nagare compact --settle 0` on a copy of a store of many small
             segments over past hours, killed at a random point of its run
             (merge, rollup writing, unlinking the replaced segments).
             Then: the same flows as before, none twice, whatever the
             query shape (raw listing, top-N, rollup-answered series); a
             second compaction finishes and changes nothing either.
  retention  `nagare collect --retention 2h` on such a copy, whose
             maintenance thread (every 1 s here) removes the hours older
             than two hours and compacts the rest, killed at a random
             point.  Then: every hour is whole or gone, hours within
             the age are whole, none twice.
  enospc/eio a collector under tests/fault/fault_shim.so, whose file writes
             under the store fail with ENOSPC (or fsync with EIO) for a
             random stretch of seconds while a stream comes in.  Then,
             after SIGTERM: the collector exited cleanly, every flow the
             exporter counters say were received is stored or counted as
             dropped by the store (stored + dropped = received), none
             twice, and flows sent after the fault cleared are stored.

Every check is on the flows' own identities: the generator numbers each
flow (its source address is 10.0.0.0 + id), so "none twice" is a count
of distinct ids against the count of flows, and "lost" is a set
difference.  Findings (what failed, with the seed and the iteration) are
printed; the exit status is 1 when there is any.  The iteration count
and the findings are printed at the end.  Standard library only;
loopback only.
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
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import e2e_util as U  # noqa: E402  (tests/e2e/e2e_util.py)

FLUSH_S = 5.0  # the store writer's flush interval (store/writer.c DUE_MS)
MARGIN_S = 2.0  # flush thread wake-up (0.25 s), sort, encode, fsync
HOUR_MS = 3600 * 1000
UPTIME_MS = 8 * HOUR_MS  # the exporter's sysUptime in every header
REC_PER_DGRAM = 30


def log(msg):
    print(f"crash: {msg}", flush=True)


# ---- the exporter --------------------------------------------------------


def v5_datagram(seq, ids, age_ms, now_s):
    """A NetFlow v5 export packet (Cisco's v5 format: a 24-byte header,
    48-byte records) holding flows numbered `ids`, flow i ended
    age_ms(i, now_s * 1000) milliseconds before the export time now_s.  Flow id i: source 10.0.0.0 + i,
    packets 1 + i % 7, bytes 100 + i % 1000, destination port 53 or 443."""
    recs = []
    for i in ids:
        last = UPTIME_MS - age_ms(i, now_s * 1000)
        recs.append(U.v5_record(0x0A000000 | i, 0xC0000201, 0, 1, 2, 1 + i % 7, 100 + i % 1000,
                                last - 100, last, 1024 + i % 50000, 53 if i % 3 else 443, 0x18,
                                17 if i % 3 else 6, src_mask=24, dst_mask=24))
    return U.v5_header(len(ids), UPTIME_MS, now_s, 0, seq) + b"".join(recs)


class Exporter:
    """Sends numbered flows to the collector at `port` and remembers when
    each datagram went (monotonic seconds)."""

    def __init__(self, port, first_id=1):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.addr = ("127.0.0.1", port)
        self.next_id = first_id
        self.seq = 0
        self.sent = []  # (monotonic time, first id, count)

    def send(self, n, age_ms=lambda i, now: 1000):
        ids = list(range(self.next_id, self.next_id + n))
        self.next_id += n
        d = v5_datagram(self.seq, ids, age_ms, int(time.time()))
        self.seq += n
        self.sock.sendto(d, self.addr)
        self.sent.append((time.monotonic(), ids[0], n))

    def stream(self, seconds, rate_dgrams=400, age_ms=lambda i, now: 1000, until=None):
        """Sends for `seconds` at rate_dgrams datagrams a second (or until
        until() is true)."""
        t0 = time.monotonic()
        k = 0
        while time.monotonic() - t0 < seconds and not (until and until()):
            self.send(REC_PER_DGRAM, age_ms)
            k += 1
            delay = t0 + k / rate_dgrams - time.monotonic()
            if delay > 0:
                time.sleep(delay)

    def ids_sent_before(self, t):
        out = set()
        for when, first, n in self.sent:
            if when < t:
                out.update(range(first, first + n))
        return out

    def all_ids(self):
        return self.ids_sent_before(float("inf"))


# ---- the collector and the store -----------------------------------------


def start_collector(nagare, store, port, extra=(), env=None):
    p = subprocess.Popen(
        [nagare, "collect", "--store", store, "--listen", f"127.0.0.1:{port}", "--no-http",
         "--stats-interval", "1", *extra],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    # ready when its socket is bound: a datagram to a closed port is
    # refused (ICMP), to a bound one accepted
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    probe.connect(("127.0.0.1", port))
    for _ in range(200):
        if p.poll() is not None:
            raise RuntimeError(f"collector exited: {p.stderr.read().decode(errors='replace')}")
        try:
            probe.send(b"\0")  # a datagram of no protocol: counted as an error, not a flow
            time.sleep(0.02)
            probe.send(b"\0")
            break
        except ConnectionRefusedError:
            time.sleep(0.05)
    probe.close()
    return p


def stored_ids(nagare, store):
    """The ids of the flows in the store, as a list (repeats kept), and the
    listing's summary."""
    r = U.query(nagare, store, "-q", fmt="csv", timeout=300)
    if r.returncode != 0:
        raise RuntimeError(f"listing exited {r.returncode}: {r.stderr.strip()}")
    lines = r.stdout.splitlines()
    if not lines:  # an empty store: no header either
        return []
    col = lines[0].split(",").index("src_addr")
    ids = []
    for line in lines[1:]:
        a = line.split(",")[col].split(".")
        ids.append((int(a[1]) << 16) | (int(a[2]) << 8) | int(a[3]))
    return ids


def summary(doc):
    return doc.get("summary", doc)


def shapes(nagare, store):
    """Totals (flows, bytes) of several query shapes of the whole store:
    a listing's summary, top-N by source address (every group), a
    rollup-answered top-N by protocol, a 5-minute series, and an -A
    aggregation; with the segments each reports skipped."""
    out = {}
    for name, args in (
        ("top srcip", ("-s", "srcip", "-n", "0")),
        ("top proto", ("-s", "proto", "-n", "0")),
        ("series 5m", ("--interval", "5m")),
        ("aggregate dstport", ("-A", "dstport", "-n", "0")),
    ):
        s = summary(U.query_json(nagare, store, *args))
        out[name] = (s.get("flows"), s.get("bytes"), s.get("segments_skipped", 0))
    return out


class Findings:
    def __init__(self, seed):
        self.seed = seed
        self.items = []

    def check(self, ok, it, phase, what):
        if not ok:
            self.items.append(f"iteration {it} ({phase}, seed {self.seed}): {what}")
            log(f"FINDING iteration {it} ({phase}): {what}")
        return ok


def check_store(f, it, phase, nagare, store, want_ids=None, need_ids=(), allowed_ids=None):
    """The checks every phase ends with: the listing's ids have no repeat;
    every id of need_ids is there; no id outside allowed_ids; when want_ids
    is given, exactly those; every query shape gives the listing's totals
    and skips no segment."""
    ids = stored_ids(nagare, store)
    got = set(ids)
    f.check(len(ids) == len(got), it, phase, f"{len(ids) - len(got)} flows stored twice")
    missing = set(need_ids) - got
    f.check(not missing, it, phase, f"{len(missing)} acknowledged flows lost (e.g. {sorted(missing)[:3]})")
    if allowed_ids is not None:
        extra = got - set(allowed_ids)
        f.check(not extra, it, phase, f"{len(extra)} flows never sent (e.g. {sorted(extra)[:3]})")
    if want_ids is not None:
        f.check(got == set(want_ids), it, phase,
                f"stored {len(got)} distinct flows, expected {len(set(want_ids))}")
    want_bytes = sum(100 + i % 1000 for i in ids)
    for name, (flows, nbytes, skipped) in shapes(nagare, store).items():
        f.check((flows, nbytes) == (len(ids), want_bytes), it, phase,
                f"{name}: {flows} flows {nbytes} bytes, the listing {len(ids)} flows {want_bytes} bytes")
        f.check(skipped == 0, it, phase, f"{name}: {skipped} segments skipped (damaged)")
    tmps = temporaries(store)
    if tmps:
        log(f"iteration {it} ({phase}): {len(tmps)} temporary files left (e.g. {tmps[0]})")
    return got


def temporaries(store):
    return [os.path.join(d, n) for d, _, ns in os.walk(store) for n in ns if n.endswith(".tmp")]


# ---- the phases ------------------------------------------------------------


def phase_ingest(f, it, rnd, a, work):
    store = os.path.join(work, f"ingest-{it}")
    port = U.free_port()
    p = start_collector(a.nagare, store, port)
    ex = Exporter(port)
    kill_after = rnd.uniform(0.5, 12.0)
    t0 = time.monotonic()
    ex.stream(kill_after, rate_dgrams=rnd.choice((100, 300, 600)))
    os.kill(p.pid, signal.SIGKILL)
    t_kill = time.monotonic()
    p.wait()
    need = ex.ids_sent_before(t_kill - FLUSH_S - MARGIN_S)
    log(f"iteration {it}: ingest killed after {t_kill - t0:.2f} s, {len(ex.all_ids())} flows sent, "
        f"{len(need)} acknowledged")
    check_store(f, it, "ingest", a.nagare, store, need_ids=need, allowed_ids=ex.all_ids())
    # the store takes a new collector after the crash
    port = U.free_port()
    p = start_collector(a.nagare, store, port)
    before = ex.all_ids()
    ex.addr = ("127.0.0.1", port)
    ex.stream(0.5, rate_dgrams=200)
    rc = U.stop(p)
    f.check(rc == 0, it, "ingest", f"restarted collector exited {rc}")
    got = check_store(f, it, "ingest (restarted)", a.nagare, store,
                      need_ids=ex.all_ids() - before, allowed_ids=ex.all_ids())
    del got
    shutil.rmtree(store, ignore_errors=True)


def make_master(a, work):
    """A store of many small segments over the four hours before the
    current one: six collector runs, each SIGTERMed (a flush each), of
    flows spread over those hours.  Returns (path, ids, seconds a full
    compaction of a copy takes)."""
    store = os.path.join(work, "master")
    ex = Exporter(0)
    now_ms = int(time.time() * 1000)
    # ages that put flow i in one of the four previous whole hours
    base = now_ms - now_ms % HOUR_MS

    def age(i, export_ms):
        end = base - (i % 4) * HOUR_MS - 1000 - (i * 7919) % (HOUR_MS - 2000)
        return export_ms - end

    for _ in range(6):
        port = U.free_port()
        p = start_collector(a.nagare, store, port)
        ex.addr = ("127.0.0.1", port)
        ex.stream(0.6, rate_dgrams=500, age_ms=age)
        time.sleep(0.3)
        if U.stop(p) != 0:
            raise RuntimeError("master store: collector did not stop cleanly")
    ids = ex.all_ids()
    trial = os.path.join(work, "master-trial")
    shutil.copytree(store, trial, symlinks=True)
    t0 = time.monotonic()
    subprocess.run([a.nagare, "compact", "--store", trial, "--settle", "0"], check=True,
                   capture_output=True, timeout=300)
    took = time.monotonic() - t0
    shutil.rmtree(trial)
    nseg = sum(n.endswith(".seg") for _, _, ns in os.walk(store) for n in ns)
    log(f"master store: {len(ids)} flows in {nseg} segments; a compaction takes {took:.2f} s")
    return store, ids, base, took


def phase_compact(f, it, rnd, a, work, master):
    src, ids, _, took = master
    store = os.path.join(work, f"compact-{it}")
    shutil.copytree(src, store, symlinks=True)
    p = subprocess.Popen([a.nagare, "compact", "--store", store, "--settle", "0"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    delay = rnd.uniform(0, took * 1.1)
    time.sleep(delay)
    os.kill(p.pid, signal.SIGKILL)
    rc = p.wait()
    log(f"iteration {it}: compaction killed at {delay:.3f} s of {took:.2f} s "
        f"({'mid-run' if rc == -signal.SIGKILL else 'after it ended'})")
    check_store(f, it, "compact", a.nagare, store, want_ids=ids)
    r = subprocess.run([a.nagare, "compact", "--store", store, "--settle", "0"],
                       capture_output=True, text=True, timeout=300)
    f.check(r.returncode == 0, it, "compact", f"the compaction after exited {r.returncode}: {r.stderr.strip()}")
    check_store(f, it, "compact (again)", a.nagare, store, want_ids=ids)
    left = temporaries(store)
    f.check(not left, it, "compact", f"{len(left)} temporaries of the killed run left after the next (e.g. {left[:1]})")
    shutil.rmtree(store, ignore_errors=True)


def hour_of(i, base):
    return base - (i % 4) * HOUR_MS  # the hour start after which flow i ends (see make_master)


def phase_retention(f, it, rnd, a, work, master):
    src, ids, base, took = master
    store = os.path.join(work, f"retention-{it}")
    shutil.copytree(src, store, symlinks=True)
    port = U.free_port()
    # flows of the hours base-1h .. base-4h (ending in them); retention 2h
    # removes the hours that ended more than two hours ago
    p = start_collector(a.nagare, store, port, ("--retention", "2h", "--maint-interval", "1s"))
    delay = rnd.uniform(0.9, 1.5 + took * 1.5)
    time.sleep(delay)
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    log(f"iteration {it}: collector with retention killed at {delay:.2f} s")
    got = check_store(f, it, "retention", a.nagare, store, allowed_ids=ids)
    by_hour = {}
    for i in ids:
        by_hour.setdefault(hour_of(i, base), set()).add(i)
    now_ms = time.time() * 1000
    for h, members in sorted(by_hour.items()):
        kept = members & got
        f.check(not kept or kept == members, it, "retention",
                f"hour {time.strftime('%H:00', time.gmtime(h / 1000 - 3600))}: {len(kept)} of {len(members)} flows")
        if h > now_ms - 2 * HOUR_MS + 60_000:  # well inside the age: must stay
            f.check(kept == members, it, "retention", f"an hour within the age lost {len(members - kept)} flows")
    shutil.rmtree(store, ignore_errors=True)


def status_json(nagare, store):
    r = subprocess.run([nagare, "status", "--store", store, "--format", "json"],
                       capture_output=True, text=True, timeout=60)
    return json.loads(r.stdout) if r.returncode == 0 else None


def phase_disk(f, it, rnd, a, work, err):
    store = os.path.join(work, f"{err.lower()}-{it}")
    flag = os.path.join(work, f"fault-flag-{it}")
    ops = rnd.choice(("create,write,fsync", "write", "fsync"))
    env = dict(os.environ, LD_PRELOAD=a.shim, NG_FAULT_DIR=store, NG_FAULT_FLAG=flag, NG_FAULT_ERRNO=err,
               NG_FAULT_OPS=ops)
    port = U.free_port()
    p = start_collector(a.nagare, store, port, env=env)
    ex = Exporter(port)
    ex.stream(rnd.uniform(0.5, 3.0), rate_dgrams=300)
    open(flag, "w").close()
    fault_s = rnd.uniform(1.0, 8.0)
    ex.stream(fault_s, rate_dgrams=300)
    os.unlink(flag)
    cleared = time.monotonic()
    ex.stream(FLUSH_S + MARGIN_S + 0.5, rate_dgrams=300)
    after = ex.ids_sent_before(float("inf")) - ex.ids_sent_before(cleared + FLUSH_S + MARGIN_S)
    rc = U.stop(p)
    stderr = p.stderr.read().decode(errors="replace")
    log(f"iteration {it}: {err} on {ops} for {fault_s:.1f} s; collector exited {rc}; "
        f"{sum(1 for l in stderr.splitlines() if 'store' in l)} store log lines")
    f.check(rc == 0, it, err, f"collector exited {rc}")
    got = check_store(f, it, err, a.nagare, store, allowed_ids=ex.all_ids())
    f.check(after <= got, it, err, f"{len(after - got)} flows sent after the fault cleared not stored")
    st = status_json(a.nagare, store)
    if f.check(st is not None, it, err, "nagare status failed"):
        state = st.get("state", st)
        received = sum(e.get("records", 0) for e in state.get("exporters", []))
        dropped = (state.get("store") or {}).get("dropped", 0)
        f.check(len(got) + dropped == received, it, err,
                f"stored {len(got)} + dropped {dropped} != received {received}")
    shutil.rmtree(store, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nagare", required=True)
    ap.add_argument("--shim", help="tests/fault/fault_shim.so (the disk phases need it)")
    ap.add_argument("--iterations", type=int, default=int(os.environ.get("NG_FAULT_ITERATIONS", "10")))
    ap.add_argument("--seed", type=int, default=int(os.environ.get("NG_FAULT_SEED", "0")) or None)
    ap.add_argument("--phases", default="ingest,compact,retention,enospc,eio")
    ap.add_argument("--work", help="parent of the working directory")
    a = ap.parse_args()
    a.nagare = os.path.abspath(a.nagare)
    seed = a.seed or random.SystemRandom().randrange(1, 1 << 31)
    rnd = random.Random(seed)
    phases = a.phases.split(",")
    if not a.shim or not os.path.exists(a.shim):
        phases = [p for p in phases if p not in ("enospc", "eio")]
        log("no shim: the disk phases are left out")
    else:
        a.shim = os.path.abspath(a.shim)
    work = tempfile.mkdtemp(prefix="nagare-fault-", dir=a.work)
    log(f"seed {seed} (NG_FAULT_SEED={seed} repeats it), {a.iterations} iterations of {','.join(phases)}, in {work}")
    f = Findings(seed)
    t0 = time.monotonic()
    master = None
    try:
        for it in range(1, a.iterations + 1):
            phase = phases[(it - 1) % len(phases)] if it <= len(phases) else rnd.choice(phases)
            if phase in ("compact", "retention") and master is None:
                master = make_master(a, work)
            try:
                if phase == "ingest":
                    phase_ingest(f, it, rnd, a, work)
                elif phase == "compact":
                    phase_compact(f, it, rnd, a, work, master)
                elif phase == "retention":
                    phase_retention(f, it, rnd, a, work, master)
                else:
                    phase_disk(f, it, rnd, a, work, phase.upper())
            except Exception as e:  # a crash of the check itself is a finding too
                f.check(False, it, phase, f"{type(e).__name__}: {e}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    log(f"{a.iterations} iterations in {time.monotonic() - t0:.0f} s, seed {seed}: "
        f"{len(f.items)} findings")
    for item in f.items:
        print(f"  {item}")
    return 1 if f.items else 0


if __name__ == "__main__":
    sys.exit(main())
