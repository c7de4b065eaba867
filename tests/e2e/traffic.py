#!/usr/bin/env python3
"""traffic.py — generate a small, known mix of loopback traffic.

Run by make_traffic.sh while tcpdump captures lo.  Everything goes to
127.0.0.1 or ::1 only, is bounded (a few seconds, a few hundred packets) and
every UDP datagram has a listener, so no ICMP error (whose quoted header
would carry a second set of addresses) is produced.

  TCP  over IPv4 and IPv6: connections with different request and reply
       sizes, from an empty connection up to 200 kB (several segments);
  UDP  over IPv4 and IPv6: datagrams of several sizes, some answered;
  ICMP echo over IPv4 and ICMPv6 echo over IPv6 (ping, ping -6).

Prints one line per piece of traffic to stderr.  Standard library only.
"""
import socket
import subprocess
import sys
import threading
import time

TCP_SIZES = [(0, 0), (1, 1), (100, 1000), (1400, 20), (5000, 5000), (70000, 200000)]
UDP_SIZES = [1, 64, 512, 1472, 8000]


def log(msg):
    print(f"traffic: {msg}", file=sys.stderr, flush=True)


def recv_exact(s, n):
    got = 0
    while got < n:
        chunk = s.recv(min(65536, n - got))
        if not chunk:
            break
        got += len(chunk)
    return got


def tcp_server(sock, plans):
    """Accepts len(plans) connections; for each reads the request and sends
    the reply size of its plan, then closes."""
    for req, rep in plans:
        conn, _ = sock.accept()
        with conn:
            recv_exact(conn, req)
            if rep:
                conn.sendall(b"r" * rep)
            conn.shutdown(socket.SHUT_WR)
            while conn.recv(65536):
                pass


def tcp_round(family, host):
    srv = socket.socket(family, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((host, 0))
    srv.listen(8)
    port = srv.getsockname()[1]
    t = threading.Thread(target=tcp_server, args=(srv, TCP_SIZES), daemon=True)
    t.start()
    for req, rep in TCP_SIZES:
        c = socket.create_connection((host, port))
        with c:
            if req:
                c.sendall(b"q" * req)
            c.shutdown(socket.SHUT_WR)
            got = recv_exact(c, rep)
            while c.recv(65536):
                pass
        log(f"tcp {host} -> port {port}: sent {req}, received {got}")
        time.sleep(0.15)
    t.join(timeout=5)
    srv.close()


def udp_round(family, host):
    srv = socket.socket(family, socket.SOCK_DGRAM)
    srv.bind((host, 0))
    cli = socket.socket(family, socket.SOCK_DGRAM)
    cli.bind((host, 0))
    dst = srv.getsockname()[:2]
    for i, size in enumerate(UDP_SIZES):
        cli.sendto(b"u" * size, dst)
        data, peer = srv.recvfrom(65536)
        if i % 2 == 0:  # every other datagram is answered
            srv.sendto(b"a" * (size // 2 + 1), peer)
            cli.recvfrom(65536)
        time.sleep(0.05)
    log(f"udp {host}: {len(UDP_SIZES)} datagrams from port "
        f"{cli.getsockname()[1]} to port {dst[1]}")
    # a second, one-way flow from another source port
    cli2 = socket.socket(family, socket.SOCK_DGRAM)
    cli2.bind((host, 0))
    for size in (10, 20, 30):
        cli2.sendto(b"v" * size, dst)
        srv.recvfrom(65536)
    for s in (srv, cli, cli2):
        s.close()


def ping(args):
    r = subprocess.run(["ping", "-n", "-q", "-c", "3", "-i", "0.2"] + args,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log(f"ping {' '.join(args)}: exit {r.returncode}")
    if r.returncode != 0:
        sys.stderr.write(r.stdout)
        sys.exit(1)


def main():
    tcp_round(socket.AF_INET, "127.0.0.1")
    udp_round(socket.AF_INET, "127.0.0.1")
    ping(["127.0.0.1"])
    tcp_round(socket.AF_INET6, "::1")
    udp_round(socket.AF_INET6, "::1")
    ping(["-6", "::1"])


if __name__ == "__main__":
    main()
