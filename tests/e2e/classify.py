#!/usr/bin/env python3
"""classify.py — classification rules end to end (docs/configuration.md
"Classification"; issue 19 part 3).

`nagare collect --config` with the interfaces of one exporter described
as operators write them ("Transit: Cogent [174]", "IX: DE-CIX",
"Customer: acme", ...), rules that turn the descriptions into boundary,
connectivity and provider, and a configured sampling rate of 100 for the
exporter (whose NetFlow v5 header says none).  The test sends 3000 v5
records with random input and output interfaces and byte counts, computes
from what it sent (not from nagare) the flows and bytes per provider, and
checks `nagare query -s provider` (a flow counted under its input and its
output interface's provider, as -s ip), `-s inifprovider`, `-s
exportersite` and the filter `inifboundary = external`, and that every
record says sampling_source config, rate 100; then the Top-N page of
`nagare serve` (Debian's chromium headless) lists the providers, also
with the filter "inifboundary = external" (traffic by provider, external
only).
"""
import collections, json, os, random, re, shutil, socket, struct, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_util as u

BIN = os.environ.get("NG_BIN", "build/nagare")
IFS = {1: ("et-0/0/1", "Transit: Cogent [174]"), 2: ("et-0/0/2", "IX: DE-CIX"),
       3: ("ae3", "Customer: acme"), 4: ("et-0/0/4", "PNI: Google [15169]"),
       5: ("et-0/0/5", "Transit: Arelion Sweden AB [1299]"), 6: ("irb.10", "core uplink")}
PROVIDER = {1: "Cogent", 2: "DE-CIX", 3: "acme", 4: "Google", 5: "Arelion Sweden AB", 6: ""}
CONFIG = """
enrich:
  services: false
  exporters:
    - address: 127.0.0.1
      name: edge1-fra
      interfaces:
%s
  classify:
    - match: {exporter_name: '^edge[0-9]+-([a-z]+)$'}
      set: {group: edge, site: '\\1'}
    - match: {interface_description: '^Transit: ([^[]*[^[ ]) *\\[([0-9]+)\\]'}
      set: {boundary: external, connectivity: transit, provider: '\\1'}
    - match: {interface_description: '^IX: (.+)$'}
      set: {boundary: external, connectivity: ix, provider: '\\1'}
    - match: {interface_description: '^PNI: ([^[]*[^[ ])'}
      set: {boundary: external, connectivity: pni, provider: '\\1'}
    - match: {interface_description: '^Customer: (.+)$'}
      set: {boundary: external, connectivity: customer, provider: '\\1'}
    - match: {interface_name: '.'}
      set: {boundary: internal}
  sampling:
    - {exporter: 127.0.0.0/8, rate: 100}
""" % "\n".join(f'        - {{index: {i}, name: "{n}", description: "{d}"}}' for i, (n, d) in IFS.items())
fails = 0


def check(cond, what):
    global fails
    print(("ok: " if cond else "FAIL: ") + what)
    fails += not cond


def rows(*args):
    d = u.query_json(BIN, store, *args, "-n", "100")
    return d["rows"]


def main():
    global store
    work = tempfile.mkdtemp(prefix="test_classify.")
    store = os.path.join(work, "store")
    cfg = os.path.join(work, "nagare.yaml")
    open(cfg, "w").write(CONFIG)
    env = dict(os.environ, NAGARE_DATA_DIR="none")
    port = u.free_port()
    log = open(os.path.join(work, "collect.log"), "w+")
    p = subprocess.Popen([BIN, "collect", "--config", cfg, "--store", store, "--listen",
                          f"127.0.0.1:{port}", "--no-http", "--workers", "1"],
                         stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        u.wait_for(lambda: u.udp_bound(port), 30, "the collector listening", p)
        rnd = random.Random(19)
        sent = []
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        now = time.time()
        seq = 0
        for d in range(100):
            recs = b""
            for i in range(30):
                inif, outif = rnd.choice(list(IFS)), rnd.choice(list(IFS))
                octets, pkts = rnd.randint(100, 1500000), rnd.randint(1, 1000)
                octets = max(octets, pkts * 40)
                sent.append((inif, outif, octets))
                recs += u.v5_record(0x0a000001 + i, 0xc6336401, 0, inif, outif, pkts, octets,
                                    99000, 99500, 1024 + i, 443, 0x18, 6)
            sock.sendto(u.v5_header(30, 100000, int(now), 0, seq) + recs, ("127.0.0.1", port))
            seq += 30
            time.sleep(0.002)

        def stored():
            try:
                return sum(r["flows"] for r in rows("-s", "proto"))
            except Exception:
                return 0
        u.wait_for(lambda: stored() >= len(sent), 60, f"{len(sent)} flows stored", p)
        check(stored() == len(sent), f"{stored()} flows stored of {len(sent)} sent")

        # expected, from what was sent: a flow under its input and its output provider
        exp_b, exp_f = collections.Counter(), collections.Counter()
        in_b, ext_b = collections.Counter(), 0
        for inif, outif, octets in sent:
            for side in (inif, outif):
                exp_b[PROVIDER[side]] += octets * 100
                exp_f[PROVIDER[side]] += 1
            in_b[PROVIDER[inif]] += octets * 100
            ext_b += octets * 100 if inif != 6 else 0
        got = {r["provider"] if "provider" in r else r["key"]: r for r in rows("-s", "provider/bytes")}
        print("nagare query -s provider/bytes:")
        for k, r in sorted(got.items(), key=lambda kv: -kv[1]["bytes"]):
            print(f"  {k!r:24} flows {r['flows']:5}  bytes {r['bytes']:13}   sent: flows "
                  f"{exp_f[k]:5} bytes {exp_b[k]:13}")
        for k in exp_b:
            check(k in got and got[k]["bytes"] == exp_b[k] and got[k]["flows"] == exp_f[k],
                  f"provider {k!r}: bytes {got.get(k, {}).get('bytes')} = {exp_b[k]}, flows "
                  f"{got.get(k, {}).get('flows')} = {exp_f[k]}")
        gi = {r.get("inifprovider", r.get("in_if_provider", r.get("key"))): r["bytes"]
              for r in rows("-s", "inifprovider/bytes")}
        check(all(gi.get(k) == v for k, v in in_b.items()), f"-s inifprovider: {gi} = {dict(in_b)}")
        ext = sum(r["bytes"] for r in rows("-s", "proto/bytes", "inifboundary = external"))
        check(ext == ext_b, f"filter inifboundary = external: {ext} bytes = {ext_b}")
        # pairs: input provider -> output provider, bytes per edge
        pair_b = collections.Counter()
        for inif, outif, octets in sent:
            pair_b[(PROVIDER[inif], PROVIDER[outif])] += octets * 100
        pr = u.query_json(BIN, store, "--pairs", "inifprovider,outifprovider", "-O", "bytes",
                          "-n", "100")
        edges = {}
        for r in pr["rows"]:
            k = (r["source"], r["target"])
            edges[k] = r["bytes"]
        check(all(edges.get(k) == v for k, v in pair_b.items()) and len(edges) >= len(pair_b),
              f"--pairs inifprovider,outifprovider: {len(edges)} edges, bytes as sent "
              f"(e.g. Cogent -> acme {edges.get(('Cogent', 'acme'))} = {pair_b[('Cogent', 'acme')]})")
        if fails:
            print(json.dumps(pr["rows"][:3]))
        site = rows("-s", "exportersite")
        check(len(site) == 1 and list(site[0].values())[0] == "fra" or
              any(v == "fra" for v in site[0].values()), f"-s exportersite: {site}")
        src = rows("-s", "sampling_source")
        check(len(src) == 1 and src[0]["flows"] == len(sent), f"-s sampling_source: {src}")
        one = u.query(BIN, store, "-n", "1", fmt="ndjson").stdout.splitlines()
        f = json.loads(one[0])
        check(f["sampling_rate"] == 100 and f["sampling_source"] in (5, "config") and
              f["bytes"] == f["bytes_raw"] * 100,
              f"a record: rate {f['sampling_rate']}, source {f['sampling_source']}, bytes "
              f"{f['bytes']} = 100 x {f['bytes_raw']}")
        check(f["exporter_group"] == "edge", f"exporter_group {f['exporter_group']!r}")

        # the dashboards: Top-N "providers" lists them (Debian's chromium
        # headless on `nagare serve`), and "external only" as a filter
        hport = u.free_port(socket.SOCK_STREAM)
        slog = open(os.path.join(work, "serve.log"), "w+")
        sp = subprocess.Popen([BIN, "serve", "--store", store, "--http", f"127.0.0.1:{hport}"],
                              stdout=slog, stderr=subprocess.STDOUT, env=env)
        try:
            u.wait_for(lambda: u.tcp_open(hport), 30, "nagare serve", sp)
            names = sorted(v for v in PROVIDER.values() if v)
            # the internal interface (irb.10) has no provider: "(unknown)"
            # unfiltered, gone with the filter
            for q, want, unknown in (
                    ("field=provider", names, True),
                    ("field=inifprovider&filter=inifboundary+%3D+external", names, False)):
                dom = u.render_dom(f"http://127.0.0.1:{hport}/top?from=-1d&{q}")
                if dom is None:
                    print("chromium missing: the Top-N page not checked")
                    break
                table = re.search(r'<table class="[^"]*top-table.*?</table>', dom, re.S)
                cells = re.findall(r"<td[^>]*>([^<]*)</td>", table.group(0)) if table else []
                shown = sorted(c for c in cells if c in names)
                ok = ('class="error"' not in dom and shown == want and
                      ("(unknown)" in cells) == unknown)
                check(ok, f"Top-N /top?{q}: providers {shown} (want {want}), "
                      f"{'with' if '(unknown)' in cells else 'without'} (unknown)")
                if not ok:
                    main = re.search(r"<main.*?</main>", dom, re.S)
                    print(re.sub(r"\s+", " ", main.group(0) if main else dom)[:3000])
        finally:
            u.stop(sp)
    finally:
        u.stop(p)
        if fails:
            print(open(log.name).read()[-3000:])
        shutil.rmtree(work, ignore_errors=True)
    print("test_classify: " + ("ok" if not fails else f"{fails} failures"))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
