#!/usr/bin/env python3
"""http_hardening.py — the HTTP server against a hostile page and hostile
clients (docs/security.md "HTTP"), driving the real `nagare serve` over
loopback with raw sockets (so every header is exactly what is sent):

  Host       a request for Host evil.example (DNS rebinding) is refused
             with 421, loopback names and literals and --http-allowed-host
             names are answered; refusals counted in /metrics
  Origin     a cross-origin POST (or GET) is refused with 403; same-origin
             passes; Sec-Fetch-Site cross-site refused but for navigation
  idle       64, then 200 idle or header-trickling connections from
             127.0.0.1 do not keep /healthz nor an API request from
             answering within 2 s
  per client the 33rd connection of one address (127.0.0.2) closes that
             address's oldest idle one; other addresses are not touched
  total      with 256 open from 127.0.0.2-9, one more from 127.0.0.10
             closes the oldest idle of all, and /healthz still answers
  time-out   a client trickling a header byte every 0.5 s is closed once
             idle past --http-idle-timeout
  tokens     a 9-character token is refused at start; 'auto' and an
             address off loopback without a token make one and print it;
             ?token= answers 303 to the URL without it and a cookie that
             is not the token, the cookie works, the token as cookie does
             not, and a restart ends the session
  /metrics   the store is not walked per request: a segment added shows
             only once the cached figures are refreshed (10 s)

usage: http_hardening.py NAGARE_BIN
Prints "ok: ..." per check, "FAIL: ..." for each failure; exit 1 on any.
"""
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import e2e_util  # tests/e2e/e2e_util.py

BIN = sys.argv[1]
work = tempfile.mkdtemp(prefix="http_hardening.")
store = os.path.join(work, "store")
os.makedirs(os.path.join(store, "flows"))
fails = []
procs = []


def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what, flush=True)
    if not cond:
        fails.append(what)
    return cond


def start(name, args, store_dir=store, env_extra=None):
    """Starts `nagare serve`; returns (proc, port or None, log text)."""
    log = os.path.join(work, name + ".log")
    env = {k: v for k, v in os.environ.items() if not k.startswith("NAGARE_")}
    env.update(env_extra or {})
    argv = [BIN, "serve", "--store", store_dir] + args
    if "--http" not in args:
        argv += ["--http", "127.0.0.1:0"]
    with open(log, "w") as f:
        p = subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT, env=env)
    procs.append(p)
    deadline = time.time() + 10
    while time.time() < deadline:
        text = open(log).read()
        m = re.search(r"dashboards and API at http://[^/]*:(\d+)/", text)
        if m:
            time.sleep(0.1)  # the token line follows the URL line
            return p, int(m.group(1)), open(log).read()
        if p.poll() is not None:
            return p, None, text
        time.sleep(0.05)
    return p, None, open(log).read()


def stop(p):
    e2e_util.stop(p, seconds=10)


def connect(port, src="127.0.0.1", timeout=3.0):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.bind((src, 0))
    s.connect(("127.0.0.1", port))
    return s


def request(port, path, headers=None, method="GET", src="127.0.0.1", host="default"):
    """One request on a new connection: (status, headers, body, seconds).
    status is None when the server closed or timed out without answering."""
    t0 = time.time()
    h = {} if headers is None else dict(headers)
    lines = [f"{method} {path} HTTP/1.1"]
    if host == "default":
        host = f"127.0.0.1:{port}"
    if host is not None:
        lines.append(f"Host: {host}")
    lines += [f"{k}: {v}" for k, v in h.items()] + ["Connection: close", "", ""]
    try:
        s = connect(port, src)
        s.sendall("\r\n".join(lines).encode())
        data = b""
        while True:
            b = s.recv(65536)
            if not b:
                break
            data += b
        s.close()
    except OSError:
        return None, {}, b"", time.time() - t0
    head, _, body = data.partition(b"\r\n\r\n")
    m = re.match(rb"HTTP/1\.[01] (\d+)", head)
    if not m:
        return None, {}, body, time.time() - t0
    hdrs = {}
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.decode("latin-1").partition(":")
        hdrs.setdefault(k.strip().lower(), []).append(v.strip())
    return int(m.group(1)), hdrs, body, time.time() - t0


def closed(s, wait):
    """True when the server ended the connection within `wait` seconds."""
    s.settimeout(wait)
    try:
        return s.recv(1) == b""
    except socket.timeout:
        return False
    except OSError:
        return True


def open_idle(port, n, src="127.0.0.1", trickle_every=2):
    """n connections that send nothing, or (every trickle_every-th) half a
    request header."""
    socks = []
    for i in range(n):
        try:
            s = connect(port, src)
            if trickle_every and i % trickle_every == 1:
                s.sendall(b"GET /api/v1/fields HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            socks.append(s)
        except OSError:
            break
    return socks


def close_all(socks):
    for s in socks:
        s.close()


def metric(port, name):
    st, _, body, _ = request(port, "/metrics")
    if st != 200:
        return None
    m = re.search(rb"^" + re.escape(name.encode()) + rb" (\S+)$", body, re.M)
    return float(m.group(1)) if m else None


def host_checks(port):
    """Host and Origin: returns the (host, origin) refusals sent."""
    nh = no = 0
    for host, want in [
        ("evil.example", 421),
        (f"evil.example:{port}", 421),
        (f"localhost.evil.example:{port}", 421),
        (f"127.0.0.1.evil.example:{port}", 421),
        (f"127.0.0.1:{port}", 200),
        (f"localhost:{port}", 200),
        (f"dash.localhost:{port}", 200),
        (f"[::1]:{port}", 200),
        ("127.3.2.1", 200),
        (f"nagare.lan:{port}", 421),  # not allowed here
    ]:
        st, _, body, _ = request(port, "/api/v1/fields", host=host)
        nh += want == 421
        extra = " (the JSON names the Host)" if want == 421 and b"Host" in body else ""
        check(st == want, f"Host {host!r}: {want} (got {st}){extra}")
    st, _, _, _ = request(port, "/api/v1/fields", host=None)
    check(st == 400, f"HTTP/1.1 without Host: 400 ({st})")
    nh += 1
    o_self = f"http://127.0.0.1:{port}"
    for method, hdrs, want in [
        ("POST", {"Origin": "http://evil.example"}, 403),
        ("POST", {"Origin": "null"}, 403),
        ("GET", {"Origin": "http://evil.example"}, 403),
        ("POST", {"Origin": o_self, "Sec-Fetch-Site": "same-site"}, 403),
        ("GET", {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors"}, 403),
        ("POST", {"Origin": o_self}, 405),  # same origin: on to the method check
        ("GET", {"Origin": o_self, "Sec-Fetch-Site": "same-origin"}, 200),
        ("GET", {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate"}, 200),
    ]:
        st, _, body, _ = request(port, "/api/v1/fields", hdrs, method)
        no += want == 403
        check(st == want, f"{method} with {hdrs}: {want} (got {st} {body[:60]!r})")
    return nh, no


def allowed_checks():
    p, port, log = start("allowed", ["--http-allowed-host", "nagare.lan"])
    if not check(port is not None, "serve --http-allowed-host nagare.lan starts"):
        print(log)
        return
    for host, want in [(f"nagare.lan:{port}", 200), (f"NAGARE.LAN:{port}", 200),
                       (f"127.0.0.1:{port}", 200), ("evil.example", 421),
                       ("nagare.lan.evil.example", 421)]:
        st, _, _, _ = request(port, "/api/v1/fields", host=host)
        check(st == want, f"allowed nagare.lan: Host {host!r}: {want} (got {st})")
    st, _, _, _ = request(port, "/api/v1/fields", {"Origin": "http://nagare.lan:8080"})
    check(st == 200, f"allowed nagare.lan: Origin http://nagare.lan:8080: 200 (got {st})")
    stop(p)


def answers(port, what, src="127.0.0.1"):
    for path in ["/healthz", "/api/v1/fields"]:
        st, _, _, dt = request(port, path, src=src)
        check(st == 200 and dt < 2, f"{what}: {path} answers 200 within 2 s (got {st} in {dt:.2f} s)")


def idle_checks(port):
    for n in (64, 200):
        socks = open_idle(port, n)
        check(len(socks) == n, f"{n} idle/trickling connections opened from 127.0.0.1 ({len(socks)})")
        answers(port, f"{n} idle connections open")
        close_all(socks)
    time.sleep(0.3)


def per_client_checks(port):
    a = open_idle(port, 32, "127.0.0.2", 0)
    time.sleep(0.2)
    check(not any(closed(s, 0.01) for s in a), "32 idle connections from 127.0.0.2 all stay open")
    extra = open_idle(port, 1, "127.0.0.2", 0)
    check(len(extra) == 1 and closed(a[0], 1.0),
          "the 33rd from 127.0.0.2 closes 127.0.0.2's oldest idle connection")
    check(extra and not closed(extra[0], 0.2) and not any(closed(s, 0.01) for s in a[1:]),
          "the 33rd and the other 31 stay open")
    b = open_idle(port, 8, "127.0.0.3", 0)
    time.sleep(0.2)
    check(not any(closed(s, 0.01) for s in a[1:] + extra),
          "8 from 127.0.0.3 do not touch 127.0.0.2's connections")
    close_all(a + extra + b)
    time.sleep(0.3)


def total_checks(port):
    socks = []
    for i in range(2, 10):
        socks += open_idle(port, 32, f"127.0.0.{i}", 0)
        time.sleep(0.02)
    check(len(socks) == 256, f"256 idle connections opened from 127.0.0.2-9 ({len(socks)})")
    time.sleep(0.2)
    check(not any(closed(s, 0.005) for s in socks), "all 256 stay open")
    one = open_idle(port, 1, "127.0.0.10", 0)
    check(one and not closed(one[0], 0.3) and closed(socks[0], 1.0),
          "one more from 127.0.0.10 is served and closes the oldest idle connection of all")
    answers(port, "256 connections open", src="127.0.0.11")
    n = metric(port, "nagare_http_connections")
    check(n is not None and n <= 256, f"nagare_http_connections stays at most 256 ({n})")
    close_all(socks + one)
    time.sleep(0.3)


def timeout_checks():
    p, port, log = start("timeout", ["--http-idle-timeout", "2"])
    if not check(port is not None, "serve --http-idle-timeout 2 starts"):
        print(log)
        stop(p)
        return
    quiet = open_idle(port, 1, trickle_every=0)[0]
    slow = connect(port)
    slow.sendall(b"GET /healthz HTTP/1.1\r\n")
    t0 = time.time()
    while time.time() - t0 < 3:  # a header byte every 0.5 s: never idle to libmicrohttpd
        slow.sendall(b"X")
        time.sleep(0.5)
    check(closed(quiet, 2.0), "a silent connection is closed after the 2 s idle time-out")
    request(port, "/healthz")  # the next connection sweeps the table
    check(closed(slow, 1.0), "a connection trickling its header is closed past the idle time-out")
    stop(p)


def token_checks():
    p, port, log = start("short", ["--http-token", "short1234"])
    time.sleep(0.3)
    check(port is None and p.poll() not in (None, 0) and "at least 16" in log,
          f"a 9-character token is refused at start ({log.strip()[-120:]!r})")
    stop(p)
    p, port, log = start("auto", ["--http-token", "auto"])
    m = re.search(r"HTTP token \(made at start[^:]*\): ([0-9a-f]{32})", log)
    check(port is not None and m is not None, "--http-token auto makes a 32-hex-digit token and prints it")
    if port and m:
        st, _, _, _ = request(port, "/api/v1/fields")
        check(st == 401, f"... without it: 401 ({st})")
        st, _, _, _ = request(port, "/api/v1/fields", {"Authorization": "Bearer " + m.group(1)})
        check(st == 200, f"... with it: 200 ({st})")
    stop(p)
    p, port, log = start("wild", ["--http", "0.0.0.0:0"])
    m = re.search(r"HTTP token \(made at start[^:]*\): ([0-9a-f]{32}) -- open (\S+)", log)
    check(port is not None and m is not None and "?token=" in m.group(2),
          f"on 0.0.0.0 without a token one is made and printed with the URL to open ({log.strip()[-160:]!r})")
    if port and m:
        st, _, _, _ = request(port, "/api/v1/fields", {"Authorization": "Bearer " + m.group(1)})
        check(st == 200, f"... and it lets a client in ({st})")
    stop(p)

    tok = "0123456789abcdefXYZ"
    p, port, log = start("token", ["--http-token", tok])
    if not check(port is not None, "serve with a 19-character token starts"):
        print(log)
        return
    st, h, _, _ = request(port, "/api/v1/fields?token=" + tok + "&x=a%20b")
    loc = h.get("location", [""])[0]
    cookie = h.get("set-cookie", [""])[0]
    check(st == 303 and loc == "/api/v1/fields?x=a%20b",
          f"?token= answers 303 to the same URL without the token ({st}, Location {loc!r})")
    m = re.match(r"nagare_session=([^;]+);", cookie)
    check(m is not None and tok not in cookie and "HttpOnly" in cookie and "SameSite=Strict" in cookie,
          f"... and sets an HttpOnly SameSite cookie that does not hold the token ({cookie!r})")
    val = m.group(1) if m else "none"
    st, _, _, _ = request(port, "/api/v1/fields", {"Cookie": "nagare_session=" + val})
    check(st == 200, f"the session cookie lets the browser in ({st})")
    other = val[:-1] + ("1" if val.endswith("0") else "0")
    for c in ["nagare_session=" + tok, "nagare_token=" + tok, "nagare_session=" + other]:
        st, _, _, _ = request(port, "/api/v1/fields", {"Cookie": c})
        check(st == 401, f"cookie {c[:24]}...: 401 ({st})")
    st, _, _, _ = request(port, "/api/v1/fields?token=wrong-wrong-wrong")
    check(st == 401, f"a wrong ?token=: 401 ({st})")
    st, _, _, _ = request(port, "/api/v1/fields", {"Authorization": "Bearer " + tok})
    check(st == 200, f"the bearer token: 200 ({st})")
    st, _, _, _ = request(port, "/healthz")
    check(st == 200, f"/healthz needs no token ({st})")
    stop(p)
    p, port, log = start("token2", ["--http-token", tok])
    st, _, _, _ = request(port, "/api/v1/fields", {"Cookie": "nagare_session=" + val})
    check(st == 401, f"after a restart the old session cookie: 401 ({st})")
    stop(p)


def seg(path, size):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(b"\0" * size)


def main():
    mstore = os.path.join(work, "mstore")
    seg(os.path.join(mstore, "flows", "2026", "a.seg"), 100)
    pm, mport, log = start("metrics", [], store_dir=mstore)
    t_metrics = time.time()
    if check(mport is not None, "serve (metrics store) starts"):
        check(metric(mport, "nagare_store_segments") == 1, "/metrics: 1 segment")
        seg(os.path.join(mstore, "flows", "2026", "b.seg"), 50)
        n = metric(mport, "nagare_store_segments")
        check(n == 1, f"/metrics right after a segment is added: still 1, no walk per request ({n})")

    p, port, log = start("main", [])
    if check(port is not None, "serve starts"):
        nh, no = host_checks(port)
        for reason, n in [("host", nh), ("origin", no)]:
            v = metric(port, f'nagare_http_refused_total{{reason="{reason}"}}')
            check(v == n, f"nagare_http_refused_total{{reason={reason!r}}} = {n} ({v})")
        stop(p)
        log = open(os.path.join(work, "main.log")).read()
        check("DNS rebinding?" in log, "the Host refusals are logged")
    # each part on a server of its own: what one part leaves open cannot
    # make the next one pass or fail
    for name, part in [("idle", idle_checks), ("perclient", per_client_checks),
                       ("total", total_checks)]:
        p, port, log = start(name, [])
        if check(port is not None, f"serve ({name}) starts"):
            part(port)
            if name == "total":
                v = metric(port, "nagare_http_connections_evicted_total")
                check(v is not None and v >= 2, f"evictions counted ({v})")
            stop(p)
            log = open(os.path.join(work, name + ".log")).read()
            n = len(log.splitlines())
            if name != "idle":
                check("closed the one idle longest" in log, f"{name}: the evictions are logged")
            check(n < 12, f"{name}: the log stays short, rate-limited ({n} lines)")

    allowed_checks()
    timeout_checks()
    token_checks()

    if mport:
        time.sleep(max(0, 10.5 - (time.time() - t_metrics)))
        metric(mport, "nagare_store_segments")  # wakes the walker, answers the old figure
        time.sleep(0.5)
        n = metric(mport, "nagare_store_segments")
        check(n == 2, f"/metrics after 10 s: the new segment is counted ({n})")
        check(metric(mport, "nagare_store_bytes") == 150, "... and its bytes")
    stop(pm)


try:
    main()
finally:
    for p in procs:
        stop(p)
    if fails:
        print(f"http_hardening: {len(fails)} FAILED; logs in {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
        print("http_hardening: PASS")
sys.exit(1 if fails else 0)
