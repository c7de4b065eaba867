#!/usr/bin/env python3
"""snmp.py — the work of test_snmp.sh, inside its network namespace.

  1. veth pairs ng-up0/ng-up0p and ng-lan1/ng-lan1p; snmpd on
     127.0.0.1:PORT with a v2c community, a write community (to set
     ifAlias) and a v3 user (SHA/AES); ifAlias of ng-up0 and ng-lan1 set
     with snmpset.  The expected ifName, ifAlias and speed of lo, ng-up0
     and ng-lan1 are read back with snmpget (ifSpeed, ifHighSpeed: RFC
     2863), the independent source.
  2. v2c: `nagare collect` with enrich.snmp (refresh 2 s); NetFlow v9 from
     127.0.0.1 naming those ifIndexes; once the API's exporters "snmp"
     says they are named, more flows, and softflowd's (-i IDX:ng-up0, live
     capture of frames written into the veth's other end): all carry the
     names, aliases and speeds snmpget reads; then snmpd is stopped: failures and
     timeouts are counted, and flows sent after keep the cached names.
  3. v3 authPriv, with two receive workers: the same with SHA/AES, and
     an exporter 127.0.0.2 whose agent (a second snmpd, engineID of its
     own) is polled with a wrong authentication key: its row says "failing" with net-snmp's
     "Authentication failure" message, which the Exporters page shows
     (Debian's chromium headless), its flows carry no names.
Standard library only; loopback only.
"""
import json
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_util import free_port, render_dom, stop_checked, wait_for  # noqa: E402

NG = sys.argv[1]
WORK = tempfile.mkdtemp(prefix="ng_e2e_snmp.")
COMM, RW = "ng-ro-comm", "ng-rw-comm"
USER, AUTH, PRIV = "nguser", "ng-auth-pass1", "ng-priv-pass1"
IFOID = {"name": "1.3.6.1.2.1.31.1.1.1.1", "alias": "1.3.6.1.2.1.31.1.1.1.18",
         "speed": "1.3.6.1.2.1.2.2.1.5", "high": "1.3.6.1.2.1.31.1.1.1.15"}
ALIASES = {"ng-up0": "Transit: Cogent [1234]", "ng-lan1": "Customer: acme"}
procs = []


def log(msg):
    print(f"test_snmp: {msg}", flush=True)


def fail(msg):
    log("FAILED: " + msg)
    for name in ("collect-v2c.log", "collect-v3.log", "snmpd.log"):
        p = os.path.join(WORK, name)
        if os.path.exists(p):
            print(f"---- {name}\n" + open(p).read()[-4000:])
    sys.exit(1)


def run(*args):
    return subprocess.run(args, capture_output=True, text=True, timeout=30)


# ---- the agent -----------------------------------------------------------------


def make_links():
    for a, b in (("ng-up0", "ng-up0p"), ("ng-lan1", "ng-lan1p")):
        run("ip", "link", "add", a, "type", "veth", "peer", "name", b)
        run("ip", "link", "set", a, "up")
        run("ip", "link", "set", a, "alias", ALIASES[a])  # what an operator does; see below


def start_snmpd(port, engine="nagare-test-1"):
    """snmpd on 127.0.0.1:port.  Its own engineID: net-snmp's manager side
    keeps one USM user per (engineID, user), so two agents that share one
    would share a key (docs/enrichment.md "SNMP")."""
    conf = os.path.join(WORK, f"snmpd-{port}.conf")
    with open(conf, "w") as f:
        f.write(f"rocommunity {COMM} 127.0.0.1\nrwcommunity {RW} 127.0.0.1\n"
                f"engineID {engine}\n"
                f'createUser {USER} SHA "{AUTH}" AES "{PRIV}"\nrouser {USER} priv\n')
    env = dict(os.environ, SNMP_PERSISTENT_DIR=os.path.join(WORK, f"snmp-state-{port}"))
    p = subprocess.Popen(["snmpd", "-f", "-Lf", os.path.join(WORK, "snmpd.log"), "-C", "-c",
                          conf, "-p", os.path.join(WORK, f"snmpd-{port}.pid"),
                          f"udp:127.0.0.1:{port}"], env=env)
    procs.append(p)
    wait_for(lambda: snmpget(port, IFOID["name"] + ".1") is not None, 10, "snmpd answers", p)
    return p


def snmpget(port, oid):
    """The value snmpget reads (v2c), or None: -Oqv prints the value only."""
    r = run("snmpget", "-v2c", "-c", COMM, "-Oqv", "-t", "1", "-r", "0",
            f"127.0.0.1:{port}", oid)
    return r.stdout.strip().strip('"') if r.returncode == 0 else None


def expected(port):
    """ifIndex → {name, alias, speed} as snmpd reports them."""
    out = {}
    for idx in range(1, 16):
        name = snmpget(port, f"{IFOID['name']}.{idx}")
        if not name or name.startswith("No Such"):
            continue
        if name not in ("lo", "ng-up0", "ng-lan1"):
            continue
        alias = snmpget(port, f"{IFOID['alias']}.{idx}")
        speed = int(snmpget(port, f"{IFOID['speed']}.{idx}"))
        high = int(snmpget(port, f"{IFOID['high']}.{idx}"))
        out[idx] = dict(name=name, alias=alias, speed=speed if speed != 4294967295 else high * 10**6)
    return out


def set_aliases(port):
    """net-snmp's ifAlias is its own (writable, kept in its state): set it."""
    for idx in range(1, 16):
        name = snmpget(port, f"{IFOID['name']}.{idx}")
        if name in ALIASES:
            r = run("snmpset", "-v2c", "-c", RW, f"127.0.0.1:{port}",
                    f"{IFOID['alias']}.{idx}", "s", ALIASES[name])
            if r.returncode:
                fail(f"snmpset ifAlias.{idx}: {r.stderr}")


# ---- NetFlow v9 ----------------------------------------------------------------

# (IE, length): src/dst IPv4, ports, protocol, input/output SNMP index,
# bytes, packets, first/last switched (RFC 3954 §8)
FIELDS = [(8, 4), (12, 4), (7, 2), (11, 2), (4, 1), (10, 4), (14, 4), (1, 4), (2, 4), (22, 4),
          (21, 4)]


def v9_datagram(seq, flows):
    """A v9 datagram: template 256 and one data set of `flows`, each
    (sport, in_if, out_if)."""
    up = 600000
    tpl = struct.pack("!HH", 256, len(FIELDS)) + b"".join(struct.pack("!HH", *f) for f in FIELDS)
    tset = struct.pack("!HH", 0, 4 + len(tpl)) + tpl
    recs = b"".join(
        socket.inet_aton("10.1.0.1") + socket.inet_aton("10.2.0.2") +
        struct.pack("!HHBIIIIII", sport, 443, 6, i, o, 1500, 3, up - 2000, up - 1000)
        for sport, i, o in flows)
    pad = (-len(recs)) % 4
    dset = struct.pack("!HH", 256, 4 + len(recs) + pad) + recs + b"\0" * pad
    hdr = struct.pack("!HHIIII", 9, 1 + len(flows), up, int(time.time()), seq, 1)
    return hdr + tset + dset


def send(src, port, seq, flows):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((src, 0))
    s.sendto(v9_datagram(seq, flows), ("127.0.0.1", port))
    s.close()


# ---- softflowd on ng-up0 -------------------------------------------------------------

SF_SRC, SF_DST, SF_FRAMES = "192.0.2.10", "198.51.100.20", 3000


def csum(b):
    """The Internet checksum of b (RFC 1071)."""
    if len(b) % 2:
        b += b"\0"
    t = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    t = (t >> 16) + (t & 0xFFFF)
    return ~(t + (t >> 16)) & 0xFFFF


def softflowd_flows(port, up):
    """softflowd captures on ng-up0 with -i IDX:ng-up0 (its exported
    input and output interface: IDX, the ifIndex snmpd gives ng-up0) and
    exports NetFlow v9 to 127.0.0.1:port; SF_FRAMES UDP frames from
    SF_SRC to SF_DST written into the veth's other end (AF_PACKET) arrive
    on ng-up0.  Enough of them that libpcap's ring hands them over; then
    `softflowctl expire-all` exports what is left.  Returns (bytes, flows)
    softflowd counted (softflowctl statistics)."""
    ctl, pid = os.path.join(WORK, "softflowd.ctl"), os.path.join(WORK, "softflowd.pid")
    run("ip", "link", "set", "ng-up0p", "up")  # the other end, where the frames go in
    p = subprocess.Popen(["softflowd", "-d", "-i", f"{up}:ng-up0", "-n", f"127.0.0.1:{port}",
                          "-v", "9", "-t", "maxlife=1", "-t", "expint=1", "-c", ctl, "-p", pid,
                          # only the test's frames: the kernel's own IPv6
                          # (MLD, router solicitations) on the new link
                          # would be counted and exported too
                          f"src host {SF_SRC}"],
                         stdout=open(os.path.join(WORK, "softflowd.log"), "w"),
                         stderr=subprocess.STDOUT)
    procs.append(p)
    wait_for(lambda: os.path.exists(ctl), 10, "softflowd's control socket", p)
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind(("ng-up0p", 0))
    for i in range(SF_FRAMES):
        payload = b"x" * 100
        udp = struct.pack("!HHHH", 40000 + i % 3, 53, 8 + len(payload), 0) + payload
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), i & 0xFFFF, 0, 64, 17, 0,
                         socket.inet_aton(SF_SRC), socket.inet_aton(SF_DST))
        ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
        s.send(b"\x02\0\0\0\0\x01\x02\0\0\0\0\x02\x08\0" + ip + udp)
    s.close()
    time.sleep(3)
    run("softflowctl", "-c", ctl, "expire-all")
    time.sleep(2)
    st = run("softflowctl", "-c", ctl, "statistics").stdout
    stop_checked(p, signal.SIGTERM, 10)
    m = re.search(r"Packets processed: (\d+)", st), re.search(r"Flows exported: (\d+)", st)
    if not all(m):
        fail(f"softflowctl statistics: {st}")
    # what softflowd saw (libpcap may drop some of the burst): its
    # packets of 128 bytes of IP each, and its flows
    return int(m[0].group(1)) * 128, int(m[1].group(1))


def check_softflowd(store, up, want, sent):
    """The flows softflowd exported carry ng-up0's name, alias and speed as
    snmpd reports them; their count and bytes are softflowd's (sent)."""
    r = run(NG, "query", "--store", store, "-o", "ndjson", f"src ip {SF_SRC}")
    flows = [json.loads(l) for l in r.stdout.splitlines() if l.strip()]
    if not flows:
        fail(f"no flow of softflowd's stored: {r.stderr}")
    w = want[up]
    for f in flows:
        for side in ("in", "out"):
            got = (f[f"{side}_if"], f[f"{side}_if_name"], f[f"{side}_if_desc"],
                   f[f"{side}_if_speed"])
            if got != (up, w["name"], w["alias"], w["speed"]):
                fail(f"softflowd's flow {side}_if: stored {got}, snmpd says "
                     f"{(up, w['name'], w['alias'], w['speed'])}")
    octets = sum(f["bytes"] for f in flows)
    if (octets, len(flows)) != sent:
        fail(f"softflowd's flows: {len(flows)} stored with {octets} bytes, softflowd says "
             f"{sent[1]} exported of {sent[0]} bytes")
    log(f"softflowd -i {up}:ng-up0: {len(flows)} flows, {octets} bytes (softflowd's count) carry "
        f"{w['name']!r}, {w['alias']!r}, {w['speed']} b/s as snmpd reports")


# ---- the collector --------------------------------------------------------------


def api(hport):
    with urllib.request.urlopen(f"http://127.0.0.1:{hport}/api/v1/exporters", timeout=5) as r:
        return json.load(r)


def snmp_row(hport, exporter):
    for r in api(hport).get("snmp", []):
        if r["exporter"] == exporter:
            return r
    return None


def collect(name, config, workers=1):
    fport, hport = free_port(), free_port(socket.SOCK_STREAM)
    cfg = os.path.join(WORK, name + ".yaml")
    with open(cfg, "w") as f:
        f.write(config)
    store = os.path.join(WORK, "store-" + name)
    logf = open(os.path.join(WORK, f"collect-{name}.log"), "w")
    p = subprocess.Popen([NG, "collect", "--store", store, "--listen", f"127.0.0.1:{fport}",
                          "--http", f"127.0.0.1:{hport}", "--config", cfg, "--workers", str(workers)],
                         stdout=logf, stderr=subprocess.STDOUT)
    procs.append(p)
    wait_for(lambda: api_ok(hport), 60, "the collector's API", p)
    return p, fport, hport, store


def api_ok(hport):
    try:
        api(hport)
        return True
    except OSError:
        return False


def stored(store, sport):
    r = run(NG, "query", "--store", store, "-o", "ndjson", f"src port {sport}")
    if r.returncode:
        fail(f"nagare query: {r.stderr}")
    return [json.loads(l) for l in r.stdout.splitlines() if l.strip()]


def check_flows(store, sport, want, pairs, named=True):
    flows = stored(store, sport)
    if len(flows) != len(pairs):
        fail(f"src port {sport}: {len(flows)} flows stored, want {len(pairs)}")
    for f in flows:
        for side in ("in", "out"):
            idx = f[f"{side}_if"]
            w = want[idx] if named else dict(name="", alias="", speed=0)
            got = (f[f"{side}_if_name"], f[f"{side}_if_desc"], f[f"{side}_if_speed"])
            if got != (w["name"], w["alias"], w["speed"]):
                fail(f"src port {sport} {side}_if {idx}: stored {got}, snmpd says "
                     f"{(w['name'], w['alias'], w['speed'])}")
    log(f"src port {sport}: {len(flows)} flows carry " +
        ("the names, aliases and speeds snmpd reports" if named else "no names (as they must)"))


def main():
    t0 = time.monotonic()
    make_links()
    aport = free_port()
    agent = start_snmpd(aport)
    set_aliases(aport)
    want = expected(aport)
    by = {w["name"]: i for i, w in want.items()}
    if set(by) != {"lo", "ng-up0", "ng-lan1"} or not all(want[by[n]]["alias"] == a
                                                       for n, a in ALIASES.items()):
        fail(f"snmpd's ifTable is not the one set up: {want}")
    log(f"snmpget: {want}")
    lo, up, lan = by["lo"], by["ng-up0"], by["ng-lan1"]
    pairs = [(up, lan), (lan, up), (lo, up)]
    poll = "  snmp: {refresh: 2, timeout: 300, retries: 0}\n"

    # ---- v2c
    p, fport, hport, store = collect("v2c", f"""enrich:
{poll}  exporters:
    - address: 127.0.0.1
      snmp: {{port: {aport}, version: 2c, community: {COMM}}}
""")
    flows = lambda sport: [(sport, i, o) for i, o in pairs]
    seq = 0

    def named(hp, ex, n):
        r = snmp_row(hp, ex)
        return r is not None and r["interfaces_named"] >= n

    deadline = time.monotonic() + 10
    while not named(hport, "127.0.0.1", 3):
        if time.monotonic() > deadline:
            fail(f"v2c: interfaces not named: {snmp_row(hport, '127.0.0.1')}")
        send("127.0.0.1", fport, seq, flows(1000))
        seq += 1
        time.sleep(0.3)
    time.sleep(1.5)  # the receive thread takes the poller's answers once a second
    send("127.0.0.1", fport, seq, flows(2000))
    seq += 1
    sf_sent = softflowd_flows(fport, up)  # a real exporter's flows on ng-up0
    stop_checked(agent, signal.SIGTERM, 10)
    wait_for(lambda: (snmp_row(hport, "127.0.0.1") or {}).get("failures", 0) >= 1, 10,
             "v2c: a failure counted after snmpd stopped", p)
    row = snmp_row(hport, "127.0.0.1")
    log(f"v2c, snmpd stopped: {row}")
    if row["state"] != "failing" or row["timeouts"] < 1 or not row["last_error"]:
        fail(f"v2c: after snmpd stopped the row should be failing with a timeout: {row}")
    send("127.0.0.1", fport, seq, flows(3000))
    time.sleep(0.5)
    if stop_checked(p, signal.SIGTERM, 30):
        fail("nagare exited non-zero (a sanitizer report or an error: see its log)")
    check_flows(store, 2000, want, pairs)
    check_flows(store, 3000, want, pairs)  # the cached names, agent gone
    check_softflowd(store, up, want, sf_sent)

    # ---- v3 authPriv, and a wrong key
    agent = start_snmpd(aport)
    set_aliases(aport)
    bport = free_port()  # the agent of 127.0.0.2, where the key is wrong
    agent2 = start_snmpd(bport, "nagare-test-2")
    p, fport, hport, store = collect("v3", f"""enrich:
{poll}  exporters:
    - address: 127.0.0.1
      snmp: {{port: {aport}, version: 3, user: {USER}, auth_protocol: SHA,
              auth_key: {AUTH}, priv_protocol: AES, priv_key: {PRIV}}}
    - address: 127.0.0.2
      snmp: {{agent: 127.0.0.1, port: {bport}, version: 3, user: {USER},
              auth_protocol: SHA, auth_key: wrong-auth-key, priv_protocol: AES,
              priv_key: {PRIV}}}
""", workers=2)
    deadline = time.monotonic() + 15
    while not (named(hport, "127.0.0.1", 3) and
               (snmp_row(hport, "127.0.0.2") or {}).get("failures", 0) >= 1):
        if time.monotonic() > deadline:
            fail(f"v3: {api(hport).get('snmp')}")
        send("127.0.0.1", fport, seq, flows(4000))
        send("127.0.0.2", fport, seq, flows(5000))
        seq += 1
        time.sleep(0.3)
    time.sleep(1.5)
    send("127.0.0.1", fport, seq, flows(6000))
    send("127.0.0.2", fport, seq, flows(7000))
    bad = snmp_row(hport, "127.0.0.2")
    good = snmp_row(hport, "127.0.0.1")
    log(f"v3 good key: {good}")
    log(f"v3 wrong key: {bad}")
    if good["state"] != "ok" or good["failures"]:
        fail(f"v3: the right key fails: {good}")
    if bad["state"] != "failing" or "Authentication failure" not in bad["last_error"]:
        fail(f"v3: a wrong key should show net-snmp's authentication failure: {bad}")
    # ... and the Exporters page says so (Debian's chromium headless)
    dom = render_dom(f"http://127.0.0.1:{hport}/exporters")
    if dom is None:
        log("chromium missing: the Exporters page not checked")
    else:
        errs = re.findall(r'<span class="snmp-error warn">([^<]*)</span>', dom)
        log(f"the Exporters page's SNMP errors: {errs}")
        if len(errs) != 1 or "Authentication failure" not in errs[0]:
            fail(f"the Exporters page should show one SNMP error, the wrong key's: {errs}")
    time.sleep(0.5)
    if stop_checked(p, signal.SIGTERM, 30):
        fail("nagare exited non-zero (a sanitizer report or an error: see its log)")
    stop_checked(agent, signal.SIGTERM, 10)
    stop_checked(agent2, signal.SIGTERM, 10)
    check_flows(store, 6000, want, pairs)
    check_flows(store, 7000, want, pairs, named=False)
    log(f"passed in {time.monotonic() - t0:.1f} s")


try:
    main()
finally:
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()
    if not os.environ.get("KEEP"):
        subprocess.run(["rm", "-rf", WORK])
