#!/usr/bin/env bash
# test_views.sh — saved views (docs/api.md "Saved views") against
# `nagare serve`: save, list, replace, delete; the file in the store's
# state directory; the bounds (name, state, body, 256 views) and their
# 400/413/409 answers; the security rules for writing requests (a
# cross-origin or cross-site POST or DELETE is 403, a POST that is not
# application/json 415, no token 401 when one is required).
#
# NG_BIN: the nagare binary (default build/nagare).  Loopback only.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export NG_BIN=${NG_BIN:-$here/../../build/nagare}
work=$(mktemp -d /tmp/test_views.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/store"

# wait_url LOG: the URL collect/serve printed (_http.sh)
. "$here/_http.sh"

"$NG_BIN" serve --store "$work/store" --http 127.0.0.1:0 >"$work/serve.log" 2>&1 &
pids+=($!)
url=$(wait_url "$work/serve.log")

python3 - "$url" "$work/store" <<'PY'
import http.client, json, os, sys, urllib.parse
url, store = sys.argv[1], sys.argv[2]
u = urllib.parse.urlparse(url)
fails = 0
def check(cond, what):
    global fails
    print(("ok: " if cond else "FAIL: ") + what)
    fails += not cond
def req(method, path, body=None, headers=None, raw=None):
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    h = {"Content-Type": "application/json"} if body is not None else {}
    h.update(headers or {})
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    c.request(method, path, body=data, headers=h)
    r = c.getresponse()
    global last_headers
    last_headers = r.headers
    b = r.read()
    c.close()
    try:
        return r.status, json.loads(b)
    except ValueError:
        return r.status, b
self_origin = f"http://{u.hostname}:{u.port}"
st, b = req("GET", "/api/v1/views")
check(st == 200 and b == {"format": "nagare-views/1", "max": 256, "views": []}, f"an empty list ({st} {b})")
st, b = req("POST", "/api/v1/views", {"name": "busy hour", "state": "/?v=1&from=-6h&tz=utc"}, {"Origin": self_origin, "Sec-Fetch-Site": "same-origin"})
check(st == 201 and [v["name"] for v in b["views"]] == ["busy hour"], f"save a view: 201 ({st} {b})")
st, b = req("POST", "/api/v1/views", {"name": "dns", "state": "/top?v=1&field=dstport&filter=proto%20udp"})
st, b = req("POST", "/api/v1/views", {"name": "busy hour", "state": "/?v=1&from=-1d"})
check(st == 200 and b["views"] == [{"name": "busy hour", "state": "/?v=1&from=-1d"},
      {"name": "dns", "state": "/top?v=1&field=dstport&filter=proto%20udp"}], f"same name replaces: 200 ({st} {b})")
path = os.path.join(store, "state", "views.txt")
text = open(path).read()
check(text == "nagare-views/1\nbusy hour\t/?v=1&from=-1d\ndns\t/top?v=1&field=dstport&filter=proto%20udp\n",
      f"the file in the state directory: {text!r}")
check(not os.path.exists(path + ".tmp"), "no temporary file left")
st, b = req("DELETE", "/api/v1/views/busy%20hour")
check(st == 200 and [v["name"] for v in b["views"]] == ["dns"], f"delete: 200 ({st} {b})")
st, b = req("DELETE", "/api/v1/views/busy%20hour")
check(st == 404, f"delete again: 404 ({st})")
# bounds
for body, want, what in [
    ({"name": "x" * 65, "state": "/"}, 400, "a 65-byte name"),
    ({"name": "a/b", "state": "/"}, 400, "a name with '/'"),
    ({"name": "", "state": "/"}, 400, "an empty name"),
    ({"name": "ok", "state": "http://evil.example/"}, 400, "a state not a path"),
    ({"name": "ok", "state": "/" + "x" * 4096}, 413, "a 4097-byte state"),
    ({"name": "ok"}, 400, "no state"),
]:
    st, b = req("POST", "/api/v1/views", body)
    check(st == want and "error" in b, f"{what}: {want} ({st} {b.get('error') if isinstance(b, dict) else b})")
st, b = req("POST", "/api/v1/views", raw=b"{" + b" " * 20000 + b"}", headers={"Content-Type": "application/json"})
check(st == 413, f"a 20 kB body: 413 ({st})")
st, b = req("POST", "/api/v1/views", raw=b"not json", headers={"Content-Type": "application/json"})
check(st == 400, f"not JSON: 400 ({st})")
st, b = req("GET", "/api/v1/views")
n = len(b["views"])
for i in range(256 - n):
    st, _ = req("POST", "/api/v1/views", {"name": f"v{i}", "state": f"/?v=1&n={i}"})
    if st != 201:
        break
check(st == 201, f"256 views fit (last {st})")
st, b = req("POST", "/api/v1/views", {"name": "one too many", "state": "/"})
check(st == 409 and "256" in b["error"], f"the 257th: 409 ({st} {b})")
st, b = req("GET", "/api/v1/views")
check(len(b["views"]) == 256, f"the list holds 256 ({len(b['views'])})")
# security: writing requests must be same-origin (guard.c), JSON (no form)
for method, rpath, hdrs, want, what in [
    ("POST", "/api/v1/views", {"Origin": "http://evil.example"}, 403, "a cross-origin POST"),
    ("POST", "/api/v1/views", {"Origin": "null"}, 403, "a POST from Origin null"),
    ("POST", "/api/v1/views", {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate"}, 403, "a cross-site form POST"),
    ("DELETE", "/api/v1/views/dns", {"Origin": "http://evil.example"}, 403, "a cross-origin DELETE"),
    ("POST", "/api/v1/views", {"Content-Type": "application/x-www-form-urlencoded"}, 415, "a form-encoded POST"),
    ("POST", "/api/v1/views", {"Content-Type": "text/plain"}, 415, "a text/plain POST"),
    ("PUT", "/api/v1/views", {}, 405, "PUT"),
    ("POST", "/api/v1/top", {}, 405, "POST elsewhere"),
]:
    st, b = req(method, rpath, {"name": "dns", "state": "/evil"} if method != "DELETE" else None, hdrs)
    check(st == want, f"{what}: {want} ({st})")
    if method == "PUT":
        check(last_headers.get("Allow") == "GET, HEAD, POST", f"PUT: Allow: GET, HEAD, POST ({last_headers.get('Allow')})")
st, b = req("GET", "/api/v1/views")
dns = [v for v in b["views"] if v["name"] == "dns"]
check(dns and dns[0]["state"] == "/top?v=1&field=dstport&filter=proto%20udp", "the refused requests changed nothing")
# a damaged file: an error, not an empty list that a save would overwrite
open(path, "w").write("garbage\n")
st, b = req("GET", "/api/v1/views")
check(st == 500 and "damaged" in b["error"], f"a damaged file: 500 ({st} {b})")
st, b = req("POST", "/api/v1/views", {"name": "x", "state": "/"})
check(st == 500 and open(path).read() == "garbage\n", "a save does not overwrite a damaged file")
sys.exit(1 if fails else 0)
PY

# With a token: writing needs it too.
kill -TERM "${pids[0]}"; wait "${pids[0]}" || true; pids=()
rm -f "$work/store/state/views.txt"
NAGARE_HTTP_TOKEN=s3cret-T0ken-0123 "$NG_BIN" serve --store "$work/store" --http 127.0.0.1:0 \
	>"$work/serve-token.log" 2>&1 &
pids+=($!)
url=$(wait_url "$work/serve-token.log")
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
	-d '{"name":"a","state":"/"}' "${url}api/v1/views")
[ "$code" = 401 ] || { echo "test_views: FAIL: POST without the token: $code, not 401" >&2; exit 1; }
echo "ok: POST without the token: 401"
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer s3cret-T0ken-0123' \
	-H 'Content-Type: application/json' -d '{"name":"a","state":"/"}' "${url}api/v1/views")
[ "$code" = 201 ] || { echo "test_views: FAIL: POST with the token: $code, not 201" >&2; exit 1; }
echo "ok: POST with the token: 201"
kill -TERM "${pids[0]}"; wait "${pids[0]}" || true; pids=()

# serve stops on SIGTERM whichever of its threads the signal reaches (it
# took it with a handler and pause(): a signal delivered to a server
# thread left the main thread paused, and serve running, for ever)
for i in $(seq 20); do
	"$NG_BIN" serve --store "$work/store" --http 127.0.0.1:0 >"$work/stop.log" 2>&1 &
	p=$!
	u=$(wait_url "$work/stop.log")
	curl -s -o /dev/null "${u}api/v1/fields" &
	kill -TERM "$p"
	for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
	if kill -0 "$p" 2>/dev/null; then
		kill -KILL "$p"
		echo "test_views: FAIL: serve still running 5 s after SIGTERM (round $i)" >&2
		exit 1
	fi
	wait "$p" || true
	wait || true
done
echo "ok: serve stops on SIGTERM (20 rounds, a request in flight)"
echo "test_views: all passed"
