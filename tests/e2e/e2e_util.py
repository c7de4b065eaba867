"""e2e_util.py — what the Python end-to-end and fault tests share: loopback
ports, waiting for a condition, stopping a process, NetFlow v5 datagrams
and running `nagare query`.

Imported by tests/e2e/exporters.py (and sflow.sh through it),
query_nfdump.py, timeflood.py and tests/fault/crash.py (which puts
tests/e2e on sys.path).  Standard library only; loopback only.
"""
import json
import signal
import socket
import struct
import subprocess
import time


# ---- processes and ports -------------------------------------------------------


def free_port(kind=socket.SOCK_DGRAM):
    """A free port on 127.0.0.1 for sockets of `kind` (SOCK_DGRAM or
    SOCK_STREAM): port 0 bound, read back and released."""
    s = socket.socket(socket.AF_INET, kind)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def udp_bound(port):
    """True when some UDP socket (IPv4 or IPv6) of this host is bound to
    `port` (/proc/net/udp, udp6)."""
    want = f":{port:04X}"
    for path in ("/proc/net/udp", "/proc/net/udp6"):
        try:
            with open(path) as f:
                for line in f.readlines()[1:]:
                    if line.split()[1].endswith(want):
                        return True
        except OSError:
            pass
    return False


def tcp_open(port, host="127.0.0.1"):
    """True when a TCP connection to host:port is accepted."""
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def wait_for(cond, seconds, what, proc=None):
    """Polls cond() every 50 ms for up to `seconds`; RuntimeError naming
    `what` on timeout, or as soon as `proc` (a Popen) has exited."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if cond():
            return
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{what}: process exited ({proc.returncode})")
        time.sleep(0.05)
    raise RuntimeError(f"{what}: not after {seconds} s")


def stop(p, sig=signal.SIGTERM, seconds=30):
    """Sends `sig` to the Popen `p` (unless it has exited) and waits up to
    `seconds`: its exit status, or None when it did not exit in time (it
    is then killed with SIGKILL and reaped)."""
    if p.poll() is None:
        p.send_signal(sig)
        try:
            p.wait(seconds)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            return None
    return p.returncode


def stop_checked(p, sig=signal.SIGTERM, seconds=30):
    """stop(), but a RuntimeError when `p` did not exit within `seconds`."""
    rc = stop(p, sig, seconds)
    if rc is None:
        raise RuntimeError(f"{p.args[0]} did not stop within {seconds} s of signal {sig}")
    return rc


# ---- NetFlow v5 ----------------------------------------------------------------


def v5_header(count, uptime_ms, unix_secs, nsecs=0, seq=0):
    """Cisco's NetFlow v5 header (24 bytes): version 5, `count` records,
    sysUptime, unix_secs, unix_nsecs, flow_sequence; engine type and id
    and the sampling interval 0."""
    return struct.pack("!HHIIIIBBH", 5, count, uptime_ms, unix_secs, nsecs, seq, 0, 0, 0)


def v5_record(src, dst, nexthop, inif, outif, pkts, octets, first, last, sport, dport, flags,
              proto, tos=0, src_as=0, dst_as=0, src_mask=0, dst_mask=0):
    """One NetFlow v5 record (48 bytes).  src, dst, nexthop: IPv4
    addresses as 4 bytes or an int; first, last: sysUptime in ms at the
    flow's first and last packet."""
    def addr(a):
        return struct.pack("!I", a) if isinstance(a, int) else a

    return (addr(src) + addr(dst) + addr(nexthop) +
            struct.pack("!HHIIIIHHBBBBHHBBH", inif, outif, pkts, octets, first, last, sport,
                        dport, 0, flags, proto, tos, src_as, dst_as, src_mask, dst_mask, 0))


# ---- nagare query --------------------------------------------------------------


def query(nagare, store, *args, fmt="json", timeout=120):
    """Runs `nagare query --store STORE --format FMT ARGS`: the
    CompletedProcess (stdout and stderr as text)."""
    return subprocess.run([nagare, "query", "--store", store, "--format", fmt, *args],
                          capture_output=True, text=True, timeout=timeout)


def query_json(nagare, store, *args, timeout=120):
    """nagare query's JSON document (--format json); RuntimeError with its
    stderr when it exits non-zero."""
    r = query(nagare, store, *args, timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError(f"query {' '.join(args)} exited {r.returncode}: {r.stderr.strip()}")
    return json.loads(r.stdout)


def render_dom(url, budget_ms=8000, timeout=120):
    """The DOM of the dashboard page at `url` once its scripts have run
    (Debian's chromium headless, --dump-dom, `budget_ms` of virtual time),
    or None when chromium is not installed (the caller says so)."""
    import shutil
    if not shutil.which("chromium"):
        return None
    return subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu",
                           f"--virtual-time-budget={budget_ms}", "--dump-dom", url],
                          capture_output=True, text=True, timeout=timeout).stdout
