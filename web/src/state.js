// The view's state lives in the URL (path = page, query = time range,
// filter, unit, dimensions), so a link reopens the same view.
const DEFAULTS = { from: '-1h', to: 'now', filter: '', unit: 'bytes', n: '10' };

export function getState() {
  const q = new URLSearchParams(location.search);
  const s = { ...DEFAULTS };
  for (const [k, v] of q) s[k] = v;
  return s;
}

// Sets keys (undefined/'' removes them; defaults are left out of the URL).
export function setState(patch, { replace = false } = {}) {
  const q = new URLSearchParams(location.search);
  for (const [k, v] of Object.entries(patch)) {
    if (v === undefined || v === null || v === '' || DEFAULTS[k] === v) q.delete(k);
    else q.set(k, v);
  }
  const url = location.pathname + (q.toString() ? '?' + q : '');
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  window.dispatchEvent(new Event('ng-state'));
}

// The state every page shares; the rest (n, field, dim, side, offset)
// is one page's and stays behind when going to another.
export const SHARED = ['from', 'to', 'filter', 'unit'];

export function go(path) {
  const q = new URLSearchParams(location.search), keep = new URLSearchParams();
  if (path === location.pathname) return;
  for (const k of SHARED) if (q.has(k)) keep.set(k, q.get(k));
  history.pushState(null, '', path + (keep.toString() ? '?' + keep : ''));
  window.dispatchEvent(new Event('ng-state'));
}

// A range whose end is "now" moves with time: the page refreshes itself.
export function isLive(s) {
  return s.to === 'now' || s.to === '' || s.to === undefined;
}

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
