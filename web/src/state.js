// The view's state lives in the URL (path = page, query = time range,
// filter, unit, dimensions, time zone, auto-refresh), so a link reopens
// the same view and a saved view (the Views menu) is that URL.
//
// The format is versioned (docs/dashboards.md "URL format"): `v=1` marks
// this one; a URL without `v` (before versions, the same keys) is read as
// version 0 and upgraded; a later version's keys that this one does not
// know are kept in the URL, untouched.
export const STATE_VERSION = 1;
const DEFAULTS = { from: '-1h', to: 'now', filter: '', unit: 'bytes', n: '10', tz: 'browser', refresh: 'on' };

// Upgrades a version-0 (unversioned) query: the keys were the same, only
// `tz` (UTC then, for the absolute inputs) and `refresh` are new; an
// absolute range of version 0 stays as it was (ISO with Z or epoch).
function upgrade(q) {
  const v = parseInt(q.get('v') || '0', 10) || 0;
  if (v === 0 && q.has('unit') && !['bps', 'bytes', 'packets', 'flows'].includes(q.get('unit'))) q.delete('unit');
  return q;
}

export function getState() {
  const q = upgrade(new URLSearchParams(location.search));
  const s = { ...DEFAULTS };
  for (const [k, v] of q) s[k] = v;
  s.v = String(STATE_VERSION);
  if (s.tz !== 'utc') s.tz = 'browser';
  if (s.refresh !== 'off') s.refresh = 'on';
  return s;
}

// The query with `v` first and defaults left out.
function versioned(q) {
  const out = new URLSearchParams({ v: String(STATE_VERSION) });
  for (const [k, v] of q) if (k !== 'v') out.set(k, v);
  return out;
}

// Sets keys (undefined/'' removes them; defaults are left out of the URL).
export function setState(patch, { replace = false } = {}) {
  const q = upgrade(new URLSearchParams(location.search));
  for (const [k, v] of Object.entries(patch)) {
    if (v === undefined || v === null || v === '' || DEFAULTS[k] === v || VIS_DEFAULTS[k] === v) q.delete(k);
    else q.set(k, v);
  }
  const url = location.pathname + '?' + versioned(q);
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  window.dispatchEvent(new Event('ng-state'));
}

// The Visualize page's keys (pages/visualize.js), left out of the URL at
// these values: dims (comma list of fields), graph (stacked, lines,
// multiples, sankey, table), vunit (bps, pps, fps, bytes), bidir (1:
// the reverse direction too), prev (1d, 1w: the previous period), sother
// (1: the Sankey shows "other"); and n (top N), as Top-N and Flows use it.
export const VIS_DEFAULTS = { dims: 'proto', graph: 'stacked', vunit: 'bps', bidir: '', prev: '', sother: '' };

// The state every page shares; the rest (n, field, dim, side, offset)
// is one page's and stays behind when going to another.
export const SHARED = ['from', 'to', 'filter', 'unit', 'tz', 'refresh'];

export function go(path) {
  const q = new URLSearchParams(location.search), keep = new URLSearchParams();
  if (path === location.pathname) return;
  for (const k of SHARED) if (q.has(k)) keep.set(k, q.get(k));
  history.pushState(null, '', path + '?' + versioned(keep));
  window.dispatchEvent(new Event('ng-state'));
}

// The whole state as one string: the URL's path and query, versioned
// (what a saved view holds).
export function stateString() {
  if (/^\?v=1(&|$)/.test(location.search)) return location.pathname + location.search; // as it is
  return location.pathname + '?' + versioned(upgrade(new URLSearchParams(location.search)));
}

// Opens a state string (a saved view): only a path of this origin.
export function openState(str) {
  if (typeof str !== 'string' || !str.startsWith('/') || str.startsWith('//')) return false;
  history.pushState(null, '', str);
  window.dispatchEvent(new Event('ng-state'));
  return true;
}

// A range whose end is "now" moves with time: the page refreshes itself.
export function isLive(s) {
  return s.to === 'now' || s.to === '' || s.to === undefined;
}

// A time of the API's syntax ("now", "-15m", "-1d", ISO 8601, epoch
// seconds) in ms since the epoch, `now` the reference; NaN when unknown.
export function timeMs(v, now = Date.now()) {
  if (v === undefined || v === '' || v === 'now') return now;
  const rel = /^-(\d+)([smhdw])$/.exec(v);
  if (rel) return now - Number(rel[1]) * { s: 1e3, m: 60e3, h: 3600e3, d: 86400e3, w: 604800e3 }[rel[2]];
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  return Date.parse(v);
}

// The range of state s in ms: [from, to].
export function rangeMs(s, now = Date.now()) {
  return [timeMs(s.from, now), timeMs(s.to, now)];
}

// ms → the URL's absolute form, whole seconds: "2026-12-02T15:04:05Z".
export const isoSec = (ms) => new Date(Math.round(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');

// Parameters every query endpoint takes.
export function baseParams(s) {
  return { from: s.from, to: s.to, filter: s.filter };
}

// A chart interval of about 60-120 points over the range.
export function intervalFor(rangeMs) {
  const steps = [30, 60, 300, 900, 3600, 6 * 3600, 86400];
  const want = rangeMs / 1000 / 80;
  for (const s of steps) if (s >= want) return s;
  return 86400;
}
