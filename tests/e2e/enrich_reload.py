#!/usr/bin/env python3
"""enrich_reload.py — reload of the enrichment tables under load.

A sender streams NetFlow v5 (30 records a datagram, ~6000 records/s) from
81.2.69.142 (GeoIP2-City-Test: GB, London; GeoLite2-Country-Test: GB, no
city) to `nagare collect --geoip-db WORK/geo.mmdb` while the test

  1. replaces geo.mmdb by the Country database (rename; no signal: the
     collector must notice the new inode/mtime),
  2. replaces it back by the City database and sends SIGHUP.

Records carry their phase in the source port (1xxxx before any swap, 2xxxx
after the first reload was logged, 3xxxx after the second; the background
stream, whose records straddle the swaps, uses 5xxxx).  Checks: every
record sent is stored and in the NDJSON (sent = stored), records of phase
1 and 3 say London, of phase 2 no city (and still GB).

Before the stream, the same exporter address sends Cisco's NetFlow v9
interface table (telegraf corpus netflow_v9_options__message.bin: ifIndex 1
Te0/0/0, 2 Te0/0/1 per tshark); the v5 records' input 1 / output 2 must be
named so from phase 2 on, and `nagare status` must list them.

`--store` runs the same without --json: the store's flush enriches then
(docs/enrichment.md), so a record gets the tables in force when its
segment is written, and records buffered across a swap may carry either
set.  Checked through `nagare query`: sent = stored, every record GB,
phase 3 London, phases 2 and 3 with the interface names, and at least one
record of phase 1 or 2 without a city (written between the two swaps).
"""
import json, os, shutil, signal, socket, struct, subprocess, sys, tempfile, threading, time

BIN = os.environ.get("NG_BIN", "build/nagare")
MMDB = os.path.join(os.environ.get("NG_TESTDATA", "../shared/testdata"), "mmdb")
CITY = os.path.join(MMDB, "GeoIP2-City-Test.mmdb")
COUNTRY = os.path.join(MMDB, "GeoLite2-Country-Test.mmdb")
SRC, DST = bytes([81, 2, 69, 142]), bytes([89, 160, 20, 130])


class Sender:
    def __init__(self, port):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.dest = ("127.0.0.1", port)
        self.seq = 0
        self.sent = 0
        self.lock = threading.Lock()

    def send(self, base_port, n=30):
        with self.lock:
            now = time.time()
            hdr = struct.pack("!HHIIIIBBH", 5, n, 100000, int(now), 0, self.seq, 0, 0, 0)
            recs = b""
            for i in range(n):
                sport = base_port + (self.sent + i) % 10000
                recs += SRC + DST + bytes(4) + struct.pack(
                    "!HHIIIIHHBBBBHHBBH", 1, 2, 3, 300, 99000, 99500, sport, 443,
                    0, 0x18, 6, 0, 0, 0, 24, 24, 0)
            self.sock.sendto(hdr + recs, self.dest)
            self.seq += n
            self.sent += n


def wait_log(path, text, count, seconds=20):
    end = time.time() + seconds
    while time.time() < end:
        with open(path) as f:
            if f.read().count(text) >= count:
                return
        time.sleep(0.05)
    sys.exit(f"enrich_reload: '{text}' x{count} not logged in {seconds} s:\n" + open(path).read())


def replace(src, dst):
    shutil.copyfile(src, dst + ".new")
    os.rename(dst + ".new", dst)


def main():
    store_mode = "--store" in sys.argv[1:]
    work = tempfile.mkdtemp(prefix="ng_e2e_reload.")
    geo = os.path.join(work, "geo.mmdb")
    shutil.copyfile(CITY, geo)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    log = os.path.join(work, "collect.log")
    nd = os.path.join(work, "flows.ndjson")
    json_out = [] if store_mode else ["--json", nd]
    coll = subprocess.Popen([BIN, "collect", "--store", os.path.join(work, "store"),
                             "--listen", f"127.0.0.1:{port}", "--geoip-db", geo] + json_out,
                            stdout=open(log, "w"), stderr=subprocess.STDOUT)
    try:
        wait_log(log, "listening on", 1)
        snd = Sender(port)
        opts = os.path.join(os.path.dirname(MMDB), "captures", "telegraf_bin",
                            "netflow_v9_options__message.bin")
        snd.sock.sendto(open(opts, "rb").read(), snd.dest)
        stop = threading.Event()

        def background():
            while not stop.is_set():
                snd.send(50000, 10)
                time.sleep(0.005)

        bg = threading.Thread(target=background)
        bg.start()

        def phase(base, seconds):
            end = time.time() + seconds
            while time.time() < end:
                snd.send(base)
                time.sleep(0.005)

        phase(10000, 2)
        replace(COUNTRY, geo)          # 1: noticed by the file poll
        wait_log(log, "enrichment reloaded", 1)
        # store mode: longer than a flush interval (5 s), so that some
        # segment is written between the swaps
        phase(20000, 6 if store_mode else 2)
        replace(CITY, geo)             # 2: and a SIGHUP
        coll.send_signal(signal.SIGHUP)
        wait_log(log, "enrichment reloaded", 2)
        time.sleep(1.5)                # the poll may reload once more (same file)
        phase(30000, 2)
        stop.set()
        bg.join()
        time.sleep(1)
        coll.send_signal(signal.SIGTERM)
        if coll.wait(30) != 0:
            sys.exit("enrich_reload: collect exit status %d\n%s" % (coll.returncode, open(log).read()))
    finally:
        if coll.poll() is None:
            coll.kill()

    if store_mode:
        return check_store(work, log, snd)
    flows = [json.loads(l) for l in open(nd)]
    bad = {}
    count = {}
    for f in flows:
        ph = f["src_port"] // 10000
        count[ph] = count.get(ph, 0) + 1
        want_city = {1: "London", 2: "", 3: "London"}.get(ph)
        if f["src_country"] != "GB" or (want_city is not None and f["src_city"] != want_city):
            bad[ph] = bad.get(ph, 0) + 1
        if ph in (2, 3) and (f["in_if_name"], f["out_if_name"]) != ("Te0/0/0", "Te0/0/1"):
            bad["ifname"] = bad.get("ifname", 0) + 1
    q = subprocess.run([BIN, "query", "--store", os.path.join(work, "store"), "-o", "csv",
                        "-s", "proto"], capture_output=True, text=True)
    stored = sum(int(l.split(",")[3]) for l in q.stdout.splitlines()[1:] if l.count(",") > 3)
    print(open(log).read())
    st = subprocess.run([BIN, "status", "--store", os.path.join(work, "store")],
                        capture_output=True, text=True).stdout
    print(st)
    if "Te0/0/0" not in st or "TenGigabitEthernet0/0/1" not in st:
        sys.exit("enrich_reload: nagare status does not list the interfaces")
    print(f"sent {snd.sent}, NDJSON {len(flows)}, stored {stored}; per phase {count}; wrong {bad}")
    if len(flows) != snd.sent or stored != snd.sent:
        sys.exit("enrich_reload: records lost (sent != stored)")
    if bad or not all(count.get(p) for p in (1, 2, 3, 5)):
        sys.exit("enrich_reload: records carry the wrong table's values")
    shutil.rmtree(work)
    print("enrich_reload: OK")


def check_store(work, log, snd):
    """The store-mode checks (see the module's docstring)."""
    q = subprocess.run([BIN, "query", "--store", os.path.join(work, "store"), "-o", "ndjson"],
                       capture_output=True, text=True)
    flows = [json.loads(l) for l in q.stdout.splitlines() if l.startswith("{")]
    print(open(log).read())
    count, bad, cityless = {}, {}, 0
    for f in flows:
        ph = f["src_port"] // 10000
        count[ph] = count.get(ph, 0) + 1
        if f["src_country"] != "GB" or (ph == 3 and f["src_city"] != "London"):
            bad[ph] = bad.get(ph, 0) + 1
        if ph in (2, 3) and (f["in_if_name"], f["out_if_name"]) != ("Te0/0/0", "Te0/0/1"):
            bad["ifname"] = bad.get("ifname", 0) + 1
        cityless += ph in (1, 2) and f["src_city"] == ""
    print(f"store mode: sent {snd.sent}, stored {len(flows)}; per phase {count}; "
          f"phases 1-2 without a city {cityless}; wrong {bad}")
    if len(flows) != snd.sent:
        sys.exit("enrich_reload: records lost (sent != stored)")
    if bad or not all(count.get(p) for p in (1, 2, 3, 5)) or not cityless:
        sys.exit("enrich_reload: records carry the wrong table's values")
    shutil.rmtree(work)
    print("enrich_reload --store: OK")


main()
