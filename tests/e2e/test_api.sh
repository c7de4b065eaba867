#!/usr/bin/env bash
# test_api.sh — the HTTP API (docs/api.md) against `nagare query`.
#
# A real-traffic capture (make_traffic.sh: TCP, UDP, ICMP over IPv4 and
# IPv6) is exported by softflowd (NetFlow v9) to `nagare collect --http`;
# then every endpoint's JSON must equal `nagare query --format json` for
# the same query (rows and totals), bad input must get a 4xx JSON error,
# and `nagare serve` bound to 0.0.0.0 must require the token (401 without;
# one is made and printed when none is given).
#
# NG_BIN: the nagare binary (default build/nagare).  Needs root (capture)
# and runs in a private network namespace when unshare allows it.
# Exit 77: skipped.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export NG_BIN=${NG_BIN:-$here/../../build/nagare}

if [ "$(id -u)" != 0 ]; then
	echo "test_api: skipped: needs root to capture packets (sudo scripts/test)"
	exit 77
fi
for tool in softflowd tcpdump python3 curl; do
	command -v "$tool" >/dev/null ||
		{ echo "test_api: $tool not installed: run scripts/setup" >&2; exit 1; }
done
if [ -z "${NG_E2E_NETNS:-}" ] && unshare -n true 2>/dev/null; then
	NG_E2E_NETNS=1 exec unshare -n -- bash "$0" "$@"
fi
[ "${NG_E2E_NETNS:-}" = 1 ] && ip link set lo up

work=$(mktemp -d /tmp/test_api.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	if [ "${keep:-0}" = 1 ]; then echo "test_api: work dir kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
keep=1 # until the end: a failure leaves the logs


# ---- the comparison, run against collect (--live) and serve -------------
read -r -d '' compare_py <<'PY' || true
import argparse, json, subprocess, sys, time, urllib.parse, urllib.request, urllib.error

ap = argparse.ArgumentParser()
ap.add_argument("--bin"); ap.add_argument("--store"); ap.add_argument("--url")
ap.add_argument("--live", action="store_true"); ap.add_argument("--pcap")
a = ap.parse_args()
now = int(time.time())
FROM, TO = str(now - 86400), str(now + 3600)   # epoch seconds, both sides
fails = 0

def check(cond, what):
    global fails
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        fails += 1

def api(path, **params):
    q = {"from": FROM, "to": TO}
    q.update(params)
    u = a.url + path + "?" + urllib.parse.urlencode(q)
    try:
        with urllib.request.urlopen(u) as r:
            return r.status, r.read().decode(), r.headers
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(), e.headers

def cli(*args, filt=""):
    cmd = [a.bin, "query", "--store", a.store, "--from", FROM, "--to", TO, *args]
    if filt:
        cmd.append(filt)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr}")
    return r.stdout

def norm(doc):
    doc = json.loads(doc) if isinstance(doc, str) else doc
    doc.get("summary", {}).pop("elapsed_s", None)
    return doc

def same(path, params, args, filt="", what=""):
    st, body, _ = api(path, **params, **({"filter": filt} if filt else {}))
    if st != 200:
        check(False, f"{what}: HTTP {st}: {body[:200]}")
        return None
    x, y = norm(body), norm(cli(*args, "--format", "json", filt=filt))
    check(x == y and len(x["rows"]) > 0,
          f"{what}: API = nagare query ({len(x['rows'])} rows, {x['summary']['flows']} flows)")
    if x != y:
        print("  API:", json.dumps(x)[:600]); print("  CLI:", json.dumps(y)[:600])
    return x

# top-N by several fields, orders, and a filter
same("api/v1/top", {"field": "srcip", "order": "bytes", "limit": 10}, ["-s", "srcip/bytes", "-n", "10"], what="top srcip/bytes")
same("api/v1/top", {"field": "dstport", "order": "packets", "limit": 5}, ["-s", "dstport/packets", "-n", "5"], what="top dstport/packets")
same("api/v1/top", {"field": "proto"}, ["-s", "proto", "-n", "10"], what="top proto")
same("api/v1/top", {"field": "ip", "order": "flows", "limit": 3}, ["-s", "ip", "-n", "3"], what="top ip (either side)")
same("api/v1/top", {"field": "conv", "order": "bytes", "limit": 20}, ["-s", "conv/bytes", "-n", "20"], filt="proto tcp and not port 22", what="top conv/bytes with a filter")
same("api/v1/top", {"field": "srcip,dstport", "limit": 7}, ["-s", "srcip,dstport", "-n", "7"], filt="inet6 or proto udp", what="top srcip,dstport with a filter")
# time series and pairs
same("api/v1/series", {"interval": "1m", "field": "proto", "limit": 5}, ["--interval", "1m", "-s", "proto", "-n", "5"], what="series 1m by proto")
same("api/v1/series", {"interval": "30s", "limit": 5}, ["--interval", "30s", "-n", "5"], what="series 30s totals")
# series views (one call): bidirectional = the reverse direction, keys and
# filter turned to the other side; previous = the same range a day earlier
def views(params, args, filt):
    st, body, _ = api("api/v1/series", **params, filter=filt)
    return st, (json.loads(body) if st == 200 else {"error": body})
vf = "proto tcp and src port > 1024"
st, d = views({"interval": "1m", "field": "dstport", "limit": 5, "bidirectional": 1}, [], vf)
fwd = json.loads(cli("--interval", "1m", "-s", "dstport", "-n", "5", "--format", "json", filt=vf))
rev = json.loads(cli("--interval", "1m", "-s", "srcport", "-n", "5", "--format", "json", filt="proto tcp and dst port > 1024"))
check(st == 200 and d["rows"] == fwd["rows"] and d["reverse"]["rows"] == rev["rows"] and len(rev["rows"]) > 0
      and d["reverse"]["keys"] == ["srcport"] and d["reverse"]["bytes"] == rev["summary"]["bytes"] > 0,
      f"series bidirectional=1: rows = nagare query, reverse = -s srcport 'proto tcp and dst port > 1024' ({len(rev['rows'])} rows)")
import datetime
def shift(t, s):
    x = datetime.datetime.strptime(t[:19], "%Y-%m-%dT%H:%M:%S") + datetime.timedelta(seconds=s)
    return x.strftime("%Y-%m-%dT%H:%M:%S") + t[19:]
st, body, _ = api("api/v1/series", interval="1m", limit=3, field="proto", previous="1d",
                  **{"from": str(int(FROM) + 86400), "to": str(int(TO) + 86400)})
d = json.loads(body) if st == 200 else {}
tot = json.loads(cli("--interval", "1m", "--format", "json"))
want = [{"time": shift(r["time"], 86400), **{k: r[k] for k in ("flows", "packets", "bytes", "bps", "pps")}} for r in tot["rows"]]
check(st == 200 and d["previous"]["rows"] == want and len(want) > 0 and d["previous"]["offset_s"] == 86400
      and d["previous"]["flows"] == tot["summary"]["flows"] and d["rows"] == [],
      f"series previous=1d a day ahead: previous = nagare query --interval 1m over the range, times + 1 d ({len(want)} rows)")
same("api/v1/pairs", {"src": "srcip", "dst": "dstip", "limit": 3}, ["--pairs", "srcip,dstip", "-n", "3"], what="pairs srcip→dstip")
same("api/v1/pairs", {"src": "srcip", "dst": "dstport", "limit": 20, "order": "bytes"}, ["--pairs", "srcip,dstport", "-n", "20", "-O", "bytes"], what="pairs srcip→dstport by bytes")

# a 3-stage Sankey (pairs?fields=): summed here from every aggregated
# record of nagare query -A over the same three fields: each stage's
# nodes a top N by bytes, the rest folded into its "other", the links
# between consecutive stages, every stage adding up to the totals
def sankey_check(fields, n, filt=""):
    st, body, _ = api("api/v1/pairs", fields=",".join(fields), limit=n, order="bytes", **({"filter": filt} if filt else {}))
    if st != 200:
        check(False, f"sankey {fields}: HTTP {st}: {body[:200]}")
        return
    d = json.loads(body)
    agg = json.loads(cli("-A", ",".join(fields), "--format", "json", filt=filt))["rows"]
    ok = len(d["stages"]) == len(fields)
    kept = []
    for j, f in enumerate(fields):
        tot = {}
        for r in agg:
            tot[r[f]] = tot.get(r[f], 0) + r["bytes"]
        nodes = [x for x in d["stages"][j]["nodes"] if not x["other"]]
        keys = [x["key"] for x in nodes]
        rest = [v for k, v in tot.items() if k not in keys]
        ok &= len(nodes) == min(n, len(tot)) and all(x["bytes"] == tot[x["key"]] for x in nodes)
        ok &= not rest or max(rest) <= min(x["bytes"] for x in nodes)   # a top N
        ok &= sum(x["bytes"] for x in d["stages"][j]["nodes"]) == sum(tot.values())
        kept.append(set(keys))
    want = {}
    for r in agg:
        ks = [r[f] if r[f] in kept[j] else None for j, f in enumerate(fields)]
        for j in range(len(fields) - 1):
            w = want.setdefault((j, ks[j], ks[j + 1]), [0, 0, 0])
            w[0] += r["flows"]; w[1] += r["packets"]; w[2] += r["bytes"]
    got = {(l["stage"], None if l["source_other"] else l["source"], None if l["target_other"] else l["target"]):
           [l["flows"], l["packets"], l["bytes"]] for l in d["rows"]}
    ok &= got == want and len(got) == len(d["rows"])
    check(ok, f"sankey {'→'.join(fields)} top {n}{' with ' + filt if filt else ''}: {len(d['rows'])} links = summed from nagare query -A")
    if not ok:
        print("  API:", json.dumps(d)[:800]); print("  want:", sorted(want.items(), key=str)[:20])

sankey_check(["srcip", "proto", "dstport"], 3)
sankey_check(["proto", "dstip"], 2, filt="not port 22")
sankey_check(["srcport", "exporter", "dstip"], 50)

# raw flows: a page of the listing, CSV, NDJSON
st, body, _ = api("api/v1/flows", limit=10, offset=5)
full = json.loads(cli("-n", "15", "--format", "json"))
page = json.loads(body)
check(st == 200 and page["rows"] == full["rows"][5:15] and len(page["rows"]) == 10,
      f"flows limit=10 offset=5 = rows 5..15 of nagare query -n 15 ({len(page['rows'])} rows)")
check(page["summary"]["flows"] == full["summary"]["flows"], "flows page summary = nagare query's")
st, body, h = api("api/v1/flows", limit=15, format="csv")
check(st == 200 and body == cli("-n", "15", "--format", "csv") and h["Content-Type"].startswith("text/csv")
      and "attachment" in h.get("Content-Disposition", ""), "flows format=csv = nagare query --format csv (download)")
st, body, _ = api("api/v1/flows", limit=15, format="ndjson", filter="proto udp")
check(st == 200 and body == cli("-n", "15", "--format", "ndjson", filt="proto udp") and body.count("\n") > 0,
      f"flows format=ndjson with a filter = nagare query ({body.count(chr(10))} lines)")

# summary: totals of nagare query; packets = the capture's packets
st, body, _ = api("api/v1/summary")
s = json.loads(body)
t = json.loads(cli("-s", "proto", "-n", "1", "--format", "json"))["summary"]
check(st == 200 and (s["flows"], s["packets"], s["bytes"], s["first"], s["last"]) ==
      (t["flows"], t["packets"], t["bytes"], t["first"], t["last"]),
      f"summary = nagare query's totals ({s['flows']} flows, {s['packets']} packets, {s['bytes']} bytes)")
if a.pcap:
    n = int(subprocess.run(["sh", "-c", f"tcpdump -n -r {a.pcap} 2>/dev/null | wc -l"],
                           capture_output=True, text=True).stdout)
    check(s["packets"] == n, f"summary packets = the capture's packets (tcpdump: {n})")
st, body, _ = api("api/v1/summary", filter="proto icmp or proto ipv6-icmp")
t = json.loads(cli("-s", "proto", "-n", "1", "--format", "json", filt="proto icmp or proto ipv6-icmp"))["summary"]
check(st == 200 and json.loads(body)["flows"] == t["flows"] > 0, f"summary with a filter = nagare query ({t['flows']} ICMP flows)")

# exporters
st, body, _ = api("api/v1/exporters")
e = json.loads(body)
recs = sum(x["records"] for x in e["exporters"])
exporter_keys = list(e["exporters"][0]) if e["exporters"] else []
check(st == 200 and recs == s["flows"] and e["exporters"][0]["protocol"] == "NetFlow v9"
      and e["exporters"][0]["health"] in ("ok", "silent") and e["live"] == a.live,
      f"exporters: {len(e['exporters'])} exporter(s), records {recs} = stored flows, live={e['live']}")
if not a.live:
    f = json.load(open(a.store + "/state/exporters.json"))
    def as_api(x):  # a row of the file as the API writes it: only the errors not zero
        return dict(x, errors={k: v for k, v in x["errors"].items() if v})
    check([{k: v for k, v in x.items() if k != "health"} for x in e["exporters"]] == [as_api(x) for x in f["exporters"]],
          f"exporters (serve) = STORE/state/exporters.json, every key ({len(f['exporters'][0])} a row)")
else:
    check(e["listener"]["datagrams"] == sum(x["packets"] for x in e["exporters"]) > 0,
          f"exporters: listener datagrams = exporters' packets ({e['listener']['datagrams']})")
st, body, _ = api("api/v1/counters")
check(st == 200 and json.loads(body)["total"] == 0, "counters: none (NetFlow sends no counter samples)")
st, body, _ = api("api/v1/fields")
names = [f["name"] for f in json.loads(body)["fields"]]
check(st == 200 and "src_addr" in names and "bytes" in names, f"fields: {len(names)} fields")
words = [k["word"] for k in json.loads(body).get("filter", [])]
check({"proto", "src", "dst", "port", "host", "exporter", "anomaly"} <= set(words)
      and [k["word"] for k in json.loads(body)["filter"] if k["sided"]] == ["host", "ip", "net", "port", "as", "mask", "vlan", "mac"],
      f"fields: the filter's {len(words)} keywords, the sided ones host … mac")

# complete: the values of -s FIELD -n 0 whose text starts with the prefix
def complete_check(field, prefix, limit):
    st, body, _ = api("api/v1/complete", field=field, prefix=prefix, limit=limit)
    d = json.loads(body)
    every = json.loads(cli("-s", field, "-n", "0", "--format", "json"))
    k = every["query"]["keys"][0]
    want = [r for r in every["rows"] if str(r[k]).lower().startswith(prefix.lower())]
    key = lambda r: (str(r[k]), r["flows"], r["bytes"])
    check(st == 200 and len(want) > 0 and [key(r) for r in d["rows"]] == [key(r) for r in want[:limit]]
          and d["summary"]["groups"] == len(want) and d["query"]["prefix"] == prefix,
          f"complete {field} '{prefix}': {len(d.get('rows', []))} of the {len(want)} values of -s {field} -n 0 that start with it")
# the traffic's ports are ephemeral (32768-60999): take the prefix from the
# busiest destination port, so that it always has at least one value
_busiest = json.loads(cli("-s", "dstport", "-n", "1", "--format", "json"))
complete_check("dstport", str(_busiest["rows"][0][_busiest["query"]["keys"][0]])[:1], 3)
complete_check("srcip", "127.", 10)
complete_check("dstip", ":", 5)  # ::1 beside 127.0.0.1: the generic table
complete_check("proto", "1", 10)

# bad input: 4xx with a JSON error
def bad(params, path, code, word, what):
    st, body, _ = api(path, **params)
    try:
        err = json.loads(body)
    except ValueError:
        err = {}
    ok = st == code and word in err.get("error", "") and (st != 400 or "hint" in err or "column" in err)
    check(ok, f"{what} → {st} {err.get('error', body)[:90]!r}")
    return err
err = bad({"filter": "src port http"}, "api/v1/top", 400, "bad filter", "bad filter")
check(err.get("column") == 10, f"bad filter: column {err.get('column')} (the word after 'port')")
bad({"filter": "host 1.2.3"}, "api/v1/flows", 400, "bad filter", "bad address in a filter")
bad({"from": "yesterday-ish"}, "api/v1/top", 400, "bad 'from'", "bad time")
bad({"to": "2026-13-45"}, "api/v1/summary", 400, "bad 'to'", "bad to time")
bad({"from": str(now - 90 * 86400)}, "api/v1/top", 400, "time range too long", "90-day range")
bad({"from": TO, "to": FROM}, "api/v1/top", 400, "before", "from after to")
err = bad({"field": "nosuchfield"}, "api/v1/top", 400, "unknown group-by field", "unknown field")
check("srcip" in err.get("valid", []) and "dst_port" in err.get("valid", []), "unknown field: the valid fields are listed")
bad({"src": "srcip", "dst": "bogus"}, "api/v1/pairs", 400, "bogus", "unknown pairs field")
bad({"fields": "srcip"}, "api/v1/pairs", 400, "two or three", "a one-stage Sankey")
bad({"fields": "srcip,proto,dstip,dstport"}, "api/v1/pairs", 400, "two or three", "a four-stage Sankey")
bad({"fields": "ip,dstip"}, "api/v1/pairs", 400, "one-sided", "an either-side stage")
bad({"fields": "srcip,dstip", "limit": 51}, "api/v1/pairs", 400, "bad 'limit'", "a Sankey of 51 nodes a stage")
bad({"limit": "100000"}, "api/v1/flows", 400, "bad 'limit'", "limit over 10000")
bad({"limit": "-3"}, "api/v1/top", 400, "bad 'limit'", "negative limit")
bad({"order": "loudness"}, "api/v1/top", 400, "unknown order", "unknown order")
bad({"interval": "1ms"}, "api/v1/series", 400, "interval", "bad interval")
bad({"format": "xml"}, "api/v1/flows", 400, "format", "bad format")
bad({"previous": "2d"}, "api/v1/series", 400, "bad 'previous'", "previous other than 1d/1w")
bad({"previous": "1d", "interval": "7m"}, "api/v1/series", 400, "whole number of intervals", "previous not a multiple of the interval")
bad({"bidirectional": "yes"}, "api/v1/series", 400, "bad 'bidirectional'", "bidirectional not 0/1")
bad({"interval": "1m", "limit": "50", "bidirectional": "1"}, "api/v1/series", 400, "too many points", "bidirectional doubles the points (1500 × 51 fits alone)")
bad({"interval": "1s", "from": str(now - 30 * 86400)}, "api/v1/series", 400, "too many points", "series with millions of points")
bad({"field": "dstport", "prefix": "1" * 65}, "api/v1/complete", 400, "too long", "a completion prefix of 65 bytes")
bad({"field": "dstport", "limit": 101}, "api/v1/complete", 400, "bad 'limit'", "a completion of 101 values")
bad({"prefix": "4"}, "api/v1/complete", 400, "missing 'field'", "a completion without a field")
bad({}, "api/v1/nothing", 404, "unknown endpoint", "unknown endpoint")
req = urllib.request.Request(a.url + "api/v1/top", data=b"x=1", method="POST")
try:
    urllib.request.urlopen(req); code, allow = 200, ""
except urllib.error.HTTPError as e:
    code, allow = e.code, e.headers.get("Allow", "")
check(code == 405 and allow == "GET, HEAD", f"POST → {code}, Allow: {allow}")
req = urllib.request.Request(a.url + "api/v1/top?" + "filter=" + "x" * 40000)
try:
    urllib.request.urlopen(req); code = 200
except urllib.error.HTTPError as e:
    code = e.code
check(code in (413, 414, 431), f"a 40 kB URL → {code}")

# /metrics after all this
with urllib.request.urlopen(a.url + "metrics") as r:
    m = r.read().decode()
cnt = [l for l in m.splitlines() if l.startswith("nagare_query_duration_seconds_count ")]
check(cnt and int(cnt[0].split()[1]) >= 15, f"metrics: {cnt[0] if cnt else 'no query count'}")
check(f'nagare_exporter_records_total{{exporter="127.0.0.1",domain="0"}} {recs}' in m,
      "metrics: per-exporter records = the exporters endpoint")
check("nagare_store_segments " in m and "nagare_socket_drops_total " in m, "metrics: store segments, socket drops")
derived = {"exporter", "domain", "version", "protocol", "errors_total", "health"}
counters = [k for k in exporter_keys if k not in derived and not k.endswith("_ms")]
missing = [k for k in counters if f"# TYPE nagare_exporter_{k}" not in m]
check(counters and not missing, f"metrics: every counter of the exporters endpoint ({len(counters)}), missing {missing}")
with urllib.request.urlopen(a.url) as r:
    page = r.read().decode()
check("dashboards were not built" in page or "<script" in page, "/ serves the dashboards or says how to build them")
sys.exit(1 if fails else 0)
PY

echo "test_api: NG_BIN=$NG_BIN work=$work${NG_E2E_NETNS:+ (private network namespace)}"
"$here/make_traffic.sh" "$work/traffic.pcap" >"$work/make_traffic.log" 2>&1

# wait_url LOG: the URL collect/serve printed (_http.sh)
. "$here/_http.sh"

udp=29000
store=$work/store
"$NG_BIN" collect --store "$store" --listen 127.0.0.1:$udp --http 127.0.0.1:0 \
	--stats-interval 1 >"$work/collect.log" 2>&1 &
pids+=($!)
curl_url=$(wait_url "$work/collect.log")
softflowd -r "$work/traffic.pcap" -n 127.0.0.1:$udp -v 9 -T full -6 >"$work/softflowd.log" 2>&1

# Wait for the flows to be stored (segments are flushed within 5 s).
python3 - "$curl_url" <<'PY'
import json, sys, time, urllib.request
url = sys.argv[1]
for _ in range(150):
    e = json.load(urllib.request.urlopen(url + "api/v1/exporters"))
    recs = sum(x["records"] for x in e["exporters"])
    s = json.load(urllib.request.urlopen(url + "api/v1/summary"))
    if recs and s["flows"] == recs:
        sys.exit(0)
    time.sleep(0.2)
sys.exit(f"flows never all stored: exporters say {recs}, summary {s['flows']}")
PY

python3 -c "$compare_py" --bin "$NG_BIN" --store "$store" --url "$curl_url" \
	--live --pcap "$work/traffic.pcap"

# The collector stops; `nagare serve` answers from the same store and
# the exporters.json the collector left.
kill -TERM "${pids[0]}"
wait "${pids[0]}" || { echo "test_api: collect exited $?" >&2; exit 1; }
pids=()
"$NG_BIN" serve --store "$store" --http 127.0.0.1:0 >"$work/serve.log" 2>&1 &
pids+=($!)
url=$(wait_url "$work/serve.log")
python3 -c "$compare_py" --bin "$NG_BIN" --store "$store" --url "$url"
kill -TERM "${pids[0]}"; wait "${pids[0]}" || true; pids=()

# Off loopback: no token given, one is made and printed; with one, 401
# without it.
NAGARE_HTTP_TOKEN= "$NG_BIN" serve --store "$store" --http 0.0.0.0:0 >"$work/made.log" 2>&1 &
pids+=($!)
wait_url "$work/made.log" >/dev/null
sleep 0.2
grep -Eq "HTTP token \(made at start.*: [0-9a-f]{32} -- open http://" "$work/made.log" ||
	{ echo "test_api: FAIL: no token made and printed off loopback:" >&2; cat "$work/made.log" >&2; exit 1; }
echo "ok: serve on 0.0.0.0 without a token makes one: $(grep -o 'HTTP token (made at start[^)]*)' "$work/made.log")"
kill -TERM "${pids[0]}"; wait "${pids[0]}" || true; pids=()
NAGARE_HTTP_TOKEN=s3cret-T0ken-0123 "$NG_BIN" serve --store "$store" --http 0.0.0.0:0 \
	>"$work/serve-token.log" 2>&1 &
pids+=($!)
url=$(wait_url "$work/serve-token.log")
url=${url/0.0.0.0/127.0.0.1}
python3 - "$url" <<'PY'
import base64, json, sys, urllib.request, urllib.error
url = sys.argv[1]
class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *a, **k):
        return None
opener = urllib.request.build_opener(NoRedirect)
def get(path, headers={}):
    req = urllib.request.Request(url + path, headers=headers)
    try:
        with opener.open(req) as r:
            return r.status, r.read(), r.headers
    except urllib.error.HTTPError as e:
        return e.code, e.read(), e.headers
def check(cond, what):
    if not cond:
        sys.exit("FAIL: " + what)
    print("ok:", what)
st, body, _ = get("api/v1/summary")
check(st == 401 and "token" in json.loads(body)["error"], f"no token → 401 JSON error ({st} {body[:80]!r})")
st, body, _ = get("api/v1/summary", {"Authorization": "Bearer wrong"})
check(st == 401, "wrong bearer token → 401")
st, body, _ = get("api/v1/summary", {"Authorization": "Bearer s3cret-T0ken-0123-and-more"})
check(st == 401, "token with a suffix → 401")
st, body, _ = get("api/v1/summary", {"Authorization": "Bearer s3cret-T0ken-0123"})
check(st == 200 and "flows" in json.loads(body), "bearer token → 200")
b = base64.b64encode(b"admin:s3cret-T0ken-0123").decode()
st, body, _ = get("api/v1/fields", {"Authorization": "Basic " + b})
check(st == 200, "basic auth with the token as password → 200")
st, body, _ = get("metrics")
check(st == 401, "/metrics needs the token too")
st, body, h = get("api/v1/summary?token=s3cret-T0ken-0123")
cookie = h.get("Set-Cookie", "")
check(st == 303 and h.get("Location") == "/api/v1/summary" and
      cookie.startswith("nagare_session=") and "HttpOnly" in cookie and "s3cret" not in cookie,
      "?token= → 303 to the URL without it, and an HttpOnly session cookie (not the token)")
st, body, _ = get("api/v1/summary", {"Cookie": cookie.split(";")[0]})
check(st == 200, "the cookie alone → 200")
st, body, _ = get("healthz")
check(st == 200, "/healthz open without a token")
PY
kill -TERM "${pids[0]}"; wait "${pids[0]}" || true; pids=()
keep=0
echo "test_api: PASS"
