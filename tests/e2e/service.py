"""service.py — nagare collect as systemd runs it, without systemd: a
datagram socket of this test stands for $NOTIFY_SOCKET (sd_notify(3)), a
file for the journal's stream ($JOURNAL_STREAM), and nothing says where
the store is (no --store, no $NAGARE_STORE: the per-user default).

Checks, in order:
  - READY=1 comes once the port is bound, with STATUS= naming the store;
  - WATCHDOG=1 comes about once a second with WATCHDOG_USEC=2 s;
  - SIGHUP (the unit's ExecReload) gives RELOADING=1 and then READY=1;
  - SIGTERM gives STOPPING=1 and exit status 0;
  - every log line carries a journal priority (<6>info, <4>warn) and no
    timestamp, and the first line says which store was chosen and why;
  - `nagare query -s srcip` with no --store finds the flow sent.

Usage: service.py --bin NAGARE.  Loopback only; standard library only.
"""
import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_util as eu  # noqa: E402


def recv_until(sock, want, seconds):
    """Notifications read until one contains `want`: the list of them."""
    got = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            msg = sock.recv(4096).decode()
        except socket.timeout:
            break
        got.append(msg)
        if want in msg.split("\n") or any(line.startswith(want) for line in msg.split("\n")):
            return got
    raise RuntimeError(f"no {want!r} within {seconds} s; got {got!r}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="ng-service-")
    home = os.path.join(tmp, "home")
    os.mkdir(home)
    # the per-user default, unless the service's store is there and this
    # user may write it (root after test_package.sh installed the package)
    service = "/var/lib/nagare"
    if os.access(service, os.W_OK | os.X_OK):
        store, why = service, "the service's store"
    else:
        store, why = os.path.join(home, ".local/share/nagare"), "the per-user data directory"
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(os.path.join(tmp, "notify"))
    cfg = os.path.join(tmp, "nagare.yaml")
    with open(cfg, "w") as f:
        f.write("# every default\n")
    log_path = os.path.join(tmp, "journal")
    log = open(log_path, "w")
    st = os.fstat(log.fileno())
    env = {k: v for k, v in os.environ.items()
           if k not in ("NAGARE_STORE", "XDG_DATA_HOME", "NAGARE_CONFIG")}
    env.update(HOME=home, NOTIFY_SOCKET=os.path.join(tmp, "notify"),
               WATCHDOG_USEC="2000000", JOURNAL_STREAM=f"{st.st_dev}:{st.st_ino}")
    port = eu.free_port()
    p = subprocess.Popen([a.bin, "collect", "--config", cfg, "--listen", f"127.0.0.1:{port}",
                          "--no-http"], stderr=log, env=env)
    try:
        ready = recv_until(notify, "READY=1", 20)[-1]
        assert eu.udp_bound(port), "READY=1 before the port was bound"
        assert f"STATUS=listening on udp 127.0.0.1:{port}; storing flows in {store}" in ready, ready
        t0 = time.monotonic()
        recv_until(notify, "WATCHDOG=1", 3)
        recv_until(notify, "WATCHDOG=1", 3)
        print(f"service: READY=1, then two WATCHDOG=1 in {time.monotonic() - t0:.1f} s")
        now = int(time.time())
        dg = eu.v5_header(1, 100000, now) + eu.v5_record(
            bytes([192, 0, 2, 77]), bytes([198, 51, 100, 9]), 0, 1, 2, 3, 4500, 99000,
            99900, 40000, 443, 0x12, 6)
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.sendto(dg, ("127.0.0.1", port))
        p.send_signal(signal.SIGHUP)
        got = recv_until(notify, "RELOADING=1", 5)
        got = recv_until(notify, "READY=1", 10)
        print("service: SIGHUP gave RELOADING=1 then READY=1")
        p.send_signal(signal.SIGTERM)
        recv_until(notify, "STOPPING=1", 10)
        rc = p.wait(30)
        assert rc == 0, f"exit status {rc}"
        print("service: SIGTERM gave STOPPING=1, exit 0")
    finally:
        eu.stop(p, signal.SIGKILL, 5)
    log.close()
    lines = open(log_path).read().splitlines()
    want0 = f"nagare collect: store {store} (default: {why})"
    # the store line (printed, not logged) among the first, before the
    # listening line; every other line a log line with a journal priority
    assert want0 in lines[:5], f"no {want0!r} among the first lines: {lines[:5]!r}"
    for line in lines:
        if line == want0:
            continue
        assert line[:3] in ("<3>", "<4>", "<6>", "<7>"), f"no journal priority: {line!r}"
    assert any(line.startswith("<6>info: listening on udp") for line in lines), lines
    print(f"service: {len(lines) - 1} log lines, each with a journal priority")
    q = subprocess.run([a.bin, "query", "-s", "srcip", "--format", "csv"], env=env,
                       capture_output=True, text=True, timeout=60)
    assert q.returncode == 0, q.stderr
    assert q.stderr.startswith(f"nagare query: store {store} (default:"), q.stderr
    assert "192.0.2.77" in q.stdout and "4500" in q.stdout, q.stdout
    print("service: `nagare query -s srcip` with no --store found 192.0.2.77, 4500 bytes")
    print("service: ok")


if __name__ == "__main__":
    main()
