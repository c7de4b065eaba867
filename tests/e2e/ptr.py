#!/usr/bin/env python3
"""ptr.py — the work of test_ptr.sh, inside its network namespace.

  1. dnsmasq on 127.0.0.1:PORT with PTR records for 10.0.2.1 and
     10.0.2.2 (10.0.2.3 has none); dig -x reads them back: the reference.
  2. `nagare collect` stores NetFlow v5 flows from those three sources.
  3. `nagare serve --ptr 127.0.0.1:PORT`: /api/v1/top?field=srcip&resolve=1
     names the two, not the third; `nagare query -s srcip --resolve` with
     NAGARE_PTR does too; without --ptr the API says resolve "off".
  4. `nagare serve --ptr` pointed at a UDP port that never answers: with
     resolve_ms=300 the answer comes within the budget (its time minus
     the same request's without resolve=1 under 300 ms + 250 ms slack),
     the addresses without names.
  The Overview page (Debian's chromium headless) shows "address (name)"
  in its top sources for the two, the Flow explorer in its rows.
Standard library only; loopback only.
"""
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_util import (free_port, render_dom, stop_checked, v5_header, v5_record,  # noqa: E402
                      wait_for)

NG = sys.argv[1]
WORK = tempfile.mkdtemp(prefix="ng_e2e_ptr.")
ZONE = {"10.0.2.1": "host-a.test.lan", "10.0.2.2": "mail.test.lan"}
SOURCES = ["10.0.2.1", "10.0.2.2", "10.0.2.3"]
procs = []


def log(msg):
    print(f"test_ptr: {msg}", flush=True)


def fail(msg):
    log("FAILED: " + msg)
    for name in ("collect.log", "serve.log", "dnsmasq.log"):
        p = os.path.join(WORK, name)
        if os.path.exists(p):
            print(f"---- {name}\n" + open(p).read()[-4000:])
    sys.exit(1)


def rev(a):
    return ".".join(reversed(a.split("."))) + ".in-addr.arpa"


def start_dnsmasq(port):
    args = ["dnsmasq", "-k", "--conf-file=/dev/null", "--no-resolv", "--no-hosts",
            "--listen-address=127.0.0.1", "--bind-interfaces", f"--port={port}", "--user=root",
            "--local-ttl=600", f"--pid-file={WORK}/dnsmasq.pid", "--log-facility=-"]
    args += [f"--ptr-record={rev(a)},{n}" for a, n in ZONE.items()]
    p = subprocess.Popen(args, stdout=open(f"{WORK}/dnsmasq.log", "w"), stderr=subprocess.STDOUT)
    procs.append(p)
    wait_for(lambda: dig(port, "10.0.2.1") is not None, 10, "dnsmasq answers", p)


def dig(port, addr):
    r = subprocess.run(["dig", "@127.0.0.1", "-p", str(port), "-x", addr, "+short", "+time=1",
                        "+tries=1"], capture_output=True, text=True)
    return r.stdout.strip().rstrip(".") if r.returncode == 0 else None


def store_flows():
    fport = free_port()
    store = f"{WORK}/store"
    p = subprocess.Popen([NG, "collect", "--store", store, "--listen", f"127.0.0.1:{fport}",
                          "--no-http", "--workers", "1"],
                         stdout=open(f"{WORK}/collect.log", "w"), stderr=subprocess.STDOUT)
    procs.append(p)
    wait_for(lambda: "listening on" in open(f"{WORK}/collect.log").read(), 60, "collect", p)
    now = int(time.time())
    recs = [v5_record(socket.inet_aton(a), socket.inet_aton("192.0.2.9"), 0, 1, 2, 10,
                      1000 * (k + 1), 1000, 2000, 1234, 443, 0x18, 6)
            for k, a in enumerate(SOURCES)]
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(v5_header(len(recs), 5000, now) + b"".join(recs), ("127.0.0.1", fport))
    time.sleep(0.5)
    if stop_checked(p, signal.SIGTERM, 30):
        fail("nagare exited non-zero (a sanitizer report or an error: see its log)")
    return store


def serve(store, *extra):
    hport = free_port(socket.SOCK_STREAM)
    p = subprocess.Popen([NG, "serve", "--store", store, "--http", f"127.0.0.1:{hport}", *extra],
                         stdout=open(f"{WORK}/serve.log", "a"), stderr=subprocess.STDOUT)
    procs.append(p)
    wait_for(lambda: get(hport, "/api/v1/fields") is not None, 60, "serve", p)
    return p, hport


def get(hport, path):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{hport}{path}", timeout=10) as r:
            return json.load(r)
    except OSError:
        return None


def timed(hport, path):
    t = time.monotonic()
    d = get(hport, path)
    return d, time.monotonic() - t


def main():
    dport = free_port()
    start_dnsmasq(dport)
    ref = {a: dig(dport, a) for a in SOURCES}
    log(f"dig -x: {ref}")
    if ref != {"10.0.2.1": "host-a.test.lan", "10.0.2.2": "mail.test.lan", "10.0.2.3": ""}:
        fail(f"dnsmasq does not serve the zone written: {ref}")
    want = {a: n for a, n in ref.items() if n}
    store = store_flows()
    top = "/api/v1/top?field=srcip&from=-1d&limit=10"

    p, hport = serve(store)
    d = get(hport, top + "&resolve=1")
    if not d or d.get("resolve") != "off" or d.get("names") != {}:
        fail(f"without --ptr resolve=1 should say off: {d}")
    if sorted(r["srcip"] for r in d["rows"]) != SOURCES:
        fail(f"top talkers: {d['rows']}")
    if stop_checked(p):
        fail("nagare exited non-zero (a sanitizer report or an error: see its log)")

    p, hport = serve(store, "--ptr", f"127.0.0.1:{dport}")
    d, secs = timed(hport, top + "&resolve=1")
    log(f"API top talkers names ({secs:.2f} s): {d.get('names')}")
    if d.get("resolve") != "on" or d.get("names") != want:
        fail(f"API names {d.get('names')}, dig says {want}")
    fl = get(hport, "/api/v1/flows?from=-1d&resolve=1")
    log(f"API flows names: {fl.get('names')}")
    if fl.get("names") != want or len(fl.get("rows", [])) != 3:
        fail(f"API flows resolve=1: {fl}")
    # ... and the dashboards show them: the Overview's top sources
    dom = render_dom(f"http://127.0.0.1:{hport}/")
    if dom is None:
        log("chromium missing: the Overview's names not checked")
    else:
        shown = {a: n for a, n in want.items() if f"{a} ({n})" in dom}
        log(f"the Overview's top sources show {shown}")
        if shown != want:
            fail(f"the Overview shows names {shown}, dig says {want}")
        if "10.0.2.3 (" in dom:
            fail("the Overview names 10.0.2.3, which has no PTR record")
        # ... and the Flow explorer's addresses
        dom = render_dom(f"http://127.0.0.1:{hport}/explorer")
        shown = {a: n for a, n in want.items() if f"{a} ({n})" in dom}
        log(f"the Flow explorer shows {shown}")
        if shown != want or "10.0.2.3 (" in dom:
            fail(f"the Flow explorer shows names {shown}, dig says {want}")
    rs = d.get("resolver", {})
    log(f"resolver: {rs}")
    if rs.get("addresses") != 3 or rs.get("named") != 2 or rs.get("lookups") != 3:
        fail(f"resolver counts: {rs} (3 addresses, 2 named, 3 lookups)")
    if stop_checked(p):
        fail("nagare exited non-zero (a sanitizer report or an error: see its log)")

    r = subprocess.run([NG, "query", "--store", store, "-s", "srcip", "--resolve", "-o", "json"],
                       capture_output=True, text=True, timeout=30,
                       env=dict(os.environ, NAGARE_PTR=f"127.0.0.1:{dport}"))
    if r.returncode:
        fail(f"nagare query --resolve: {r.stderr}")
    q = json.loads(r.stdout)
    log(f"nagare query --resolve names: {q.get('names')}")
    if q.get("names") != want:
        fail(f"query --resolve names {q.get('names')}, dig says {want}")
    r = subprocess.run([NG, "query", "--store", store, "-s", "srcip", "--resolve"],
                       capture_output=True, text=True, timeout=30,
                       env=dict(os.environ, NAGARE_PTR=f"127.0.0.1:{dport}"))
    if "host-a.test.lan" not in r.stdout or "mail.test.lan" not in r.stdout:
        fail(f"query --resolve table lacks the names:\n{r.stdout}")

    # a DNS server that never answers: a bound UDP port nobody reads from
    drop = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    drop.bind(("127.0.0.1", 0))
    p, hport = serve(store, "--ptr", f"127.0.0.1:{drop.getsockname()[1]}")
    _, base = timed(hport, top)
    d, secs = timed(hport, top + "&resolve=1&resolve_ms=300")
    log(f"dropping server: {secs:.2f} s with resolve=1&resolve_ms=300, {base:.2f} s without; "
        f"names {d.get('names')}")
    if d.get("names") != {} or len(d["rows"]) != 3 or d["resolver"]["named"] != 0:
        fail(f"a silent server gave names or lost rows: {d}")
    if secs - base > 0.3 + 0.25:
        fail(f"a silent server kept the answer {secs:.2f} s (budget 0.3 s)")
    d, secs = timed(hport, top + "&resolve=1&resolve_ms=300")  # queued lookups still pending
    if secs - base > 0.3 + 0.25:
        fail(f"second request: {secs:.2f} s (budget 0.3 s)")
    if stop_checked(p):
        fail("nagare exited non-zero (a sanitizer report or an error: see its log)")
    log("passed")


try:
    main()
finally:
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()
    if not os.environ.get("KEEP"):
        subprocess.run(["rm", "-rf", WORK])
