// nagare dashboards: a page per path, shared controls (time range,
// filter, unit) kept in the URL.
import './style.css';
import { getState, setState, go, isLive, rangeMs, isoSec, stateString, openState } from './state.js';
import { api } from './api.js';
import { disposeCharts, errorBox, fillEmpty } from './ui.js';
import { esc, UNITS, unitLabel, timeText, zoneName } from './format.js';
import overview from './pages/overview.js';
import topn from './pages/topn.js';
import flows from './pages/flows.js';
import geo from './pages/geo.js';
import as from './pages/as.js';
import exporters from './pages/exporters.js';
import explorer from './pages/explorer.js';
import visualize from './pages/visualize.js';
import { wireFilterBox, markError, rememberFilter } from './filterbox.js';
import { wireTheme } from './theme.js';

const PAGES = [
  { path: '/', title: 'Overview', render: overview },
  { path: '/top', title: 'Top-N', render: topn },
  { path: '/flows', title: 'Flows', render: flows },
  { path: '/geo', title: 'Geo', render: geo },
  { path: '/as', title: 'AS traffic', render: as },
  { path: '/exporters', title: 'Exporters', render: exporters },
  { path: '/visualize', title: 'Visualize', render: visualize },
  { path: '/explorer', title: 'Flow explorer', render: explorer },
];
const PRESETS = [['-15m', '15 min'], ['-1h', '1 hour'], ['-6h', '6 hours'], ['-1d', '24 hours'], ['-7d', '7 days']];

function page() {
  return PAGES.find((p) => p.path === location.pathname) || PAGES[0];
}

function renderNav() {
  const cur = page();
  document.getElementById('nav').innerHTML = PAGES.map((p) =>
    `<a href="${p.path}" data-path="${p.path}" class="${p === cur ? 'active' : ''}">${p.title}</a>`).join('');
}

// An absolute time (ms) ↔ the value of <input type=datetime-local>, in
// the zone of the state (tz=utc: UTC, else the browser's).
function toInput(ms, tz) {
  if (!Number.isFinite(ms)) return '';
  return timeText(ms, { tz }).replace(' ', 'T').slice(0, 16);
}
function fromInput(v, tz) {
  if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d/.test(v)) return NaN;
  return tz === 'utc' ? Date.parse(v.slice(0, 16) + ':00Z') : new Date(v.slice(0, 16) + ':00').getTime();
}

// The controls are built once and then only brought up to date with the
// state (syncControls): a refresh or a change elsewhere leaves a filter
// being typed, and the keyboard focus, where they are.
function buildControls() {
  document.getElementById('controls').innerHTML = `
  <form id="ctl" autocomplete="off">
    <span class="range-nav">
      <button type="button" id="step-back" title="back by the range's width" aria-label="step back">◀</button>
      <label class="range">Range
        <select id="preset">${PRESETS.map(([v, t]) => `<option value="${v}">last ${t}</option>`).join('')}
          <option value="abs">absolute…</option></select></label>
      <button type="button" id="step-fwd" title="forward by the range's width" aria-label="step forward">▶</button>
    </span>
    <span id="abs">
      <label><span id="from-label">from</span> <input type="datetime-local" id="from"></label>
      <label><span id="to-label">to</span> <input type="datetime-local" id="to"></label>
      <button type="button" id="abs-apply">Set range</button>
    </span>
    <label>Unit <select id="unit">${UNITS.map((u) => `<option value="${u}">${unitLabel[u]}</option>`).join('')}</select></label>
    <label>Time zone <select id="tz"><option value="browser">browser (${esc(zoneName({ tz: 'browser' }))})</option><option value="utc">UTC</option></select></label>
    <span class="refresh"><button type="button" id="refresh-toggle" aria-pressed="true"></button> <span id="live" class="live" aria-live="off"></span></span>
    <details id="views-menu" class="views-menu"><summary>Views</summary>
      <div class="views-pop">
        <ul id="views-list"><li class="muted">loading…</li></ul>
        <div class="views-save"><input id="view-name" type="text" maxlength="64" placeholder="name of this view" spellcheck="false">
          <button type="button" id="view-save">Save</button></div>
        <div id="views-msg" class="muted" role="status"></div>
      </div></details>
    <div class="filter-row">
      <div class="filter-wrap">
        <div id="filter-mark" class="filter-mark" aria-hidden="true" hidden></div>
        <input id="filter" type="text" spellcheck="false" autocomplete="off" aria-label="filter" aria-describedby="filter-error" placeholder="nfdump filter, e.g. proto tcp and dst port 443 (/ to focus; ↓ for completions)">
        <ul id="filter-list" class="filter-list" role="listbox" aria-label="completions" hidden></ul>
      </div>
      <button type="submit">Apply</button>
    </div>
    <div id="filter-error" class="filter-error" role="alert"></div>
  </form>`;
  const $ = (id) => document.getElementById(id);
  wireFilterBox();
  $('ctl').addEventListener('submit', (e) => { e.preventDefault(); setState({ filter: $('filter').value.trim(), offset: '' }); });
  $('unit').addEventListener('change', (e) => setState({ unit: e.target.value }));
  $('tz').addEventListener('change', (e) => setState({ tz: e.target.value }));
  $('refresh-toggle').addEventListener('click', () => setState({ refresh: getState().refresh === 'off' ? 'on' : 'off' }));
  $('preset').addEventListener('change', (e) => {
    if (e.target.value === 'abs') {
      // the range on screen, made absolute and applied at once
      const [a, b] = rangeMs(getState());
      setState({ from: isoSec(Math.floor(a / 60e3) * 60e3), to: isoSec(Math.ceil(b / 60e3) * 60e3), offset: '' });
    } else setState({ from: e.target.value, to: 'now', offset: '' });
  });
  const applyAbs = () => {
    const tz = getState().tz, a = fromInput($('from').value, tz), b = fromInput($('to').value, tz);
    if (a < b) setState({ from: isoSec(a), to: isoSec(b), offset: '' });
  };
  for (const id of ['from', 'to']) $(id).addEventListener('change', applyAbs);
  $('abs-apply').addEventListener('click', applyAbs);
  $('step-back').addEventListener('click', () => step(-1));
  $('step-fwd').addEventListener('click', () => step(1));
  $('views-menu').addEventListener('toggle', () => { if ($('views-menu').open) loadViews(); });
  $('view-save').addEventListener('click', saveView);
  $('view-name').addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); saveView(); } });
}

// Step back (-1) or forward (+1) by the range's own width: the range
// becomes absolute.
function step(dir) {
  const [a, b] = rangeMs(getState());
  const w = b - a;
  if (!(w > 0)) return;
  setState({ from: isoSec(a + dir * w), to: isoSec(b + dir * w), offset: '' });
}

// ---- saved views (GET/POST /api/v1/views, DELETE /api/v1/views/NAME) ----
let views = [];
async function loadViews() {
  const list = document.getElementById('views-list');
  try {
    views = (await api('views')).views;
    list.innerHTML = views.length ? views.map((v, i) => `<li><button type="button" class="view-open" data-i="${i}" title="${esc(v.state)}">${esc(v.name)}</button><button type="button" class="view-del" data-i="${i}" aria-label="delete ${esc(v.name)}" title="delete">✕</button></li>`).join('')
      : '<li class="muted">no saved views yet</li>';
  } catch (e) { list.innerHTML = `<li class="filter-error">${esc(e.message)}</li>`; }
}
document.addEventListener('click', async (e) => {
  const menu = document.getElementById('views-menu');
  if (menu && menu.open && !menu.contains(e.target)) menu.open = false; // a click elsewhere closes it
  const b = e.target.closest('.view-open, .view-del');
  if (!b) return;
  const v = views[Number(b.dataset.i)];
  if (!v) return;
  if (b.classList.contains('view-open')) {
    document.getElementById('views-menu').open = false;
    shown = null; // the filter box takes the view's filter
    openState(v.state);
  } else {
    await viewsCall('DELETE', '/api/v1/views/' + encodeURIComponent(v.name), null, `deleted “${v.name}”`);
  }
});
async function saveView() {
  const name = document.getElementById('view-name').value.trim();
  if (!name) { document.getElementById('views-msg').textContent = 'give the view a name'; return; }
  if (await viewsCall('POST', '/api/v1/views', { name, state: stateString() }, `saved “${name}”`))
    document.getElementById('view-name').value = '';
}
async function viewsCall(method, url, body, ok) {
  const msg = document.getElementById('views-msg');
  try {
    const r = await fetch(url, { method, credentials: 'same-origin', headers: body ? { 'Content-Type': 'application/json' } : {}, body: body ? JSON.stringify(body) : undefined });
    const j = await r.json().catch(() => null);
    if (!r.ok) { msg.textContent = (j && j.error) || 'HTTP ' + r.status; return false; }
    await loadViews();
    msg.textContent = ok;
    return true;
  } catch (e) { msg.textContent = e.message; return false; }
}

let shown = null; // the state the controls show
function syncControls(s) {
  if (!document.getElementById('ctl')) buildControls();
  const preset = PRESETS.find(([v]) => v === s.from && isLive(s));
  const set = (id, prop, v) => { const e = document.getElementById(id); if (e[prop] !== v) e[prop] = v; };
  set('preset', 'value', preset ? preset[0] : 'abs');
  document.getElementById('abs').classList.toggle('hidden', !!preset);
  const [a, b] = rangeMs(s);
  if (!preset) { set('from', 'value', toInput(a, s.tz)); set('to', 'value', toInput(b, s.tz)); }
  const zone = zoneName({ tz: s.tz });
  set('from-label', 'textContent', `from (${zone})`);
  set('to-label', 'textContent', `to (${zone})`);
  set('unit', 'value', s.unit);
  set('tz', 'value', s.tz);
  // Visualize has its own units (rates per second): the shared one hides
  document.getElementById('unit').parentElement.classList.toggle('hidden', page().path === '/visualize');
  // the filter box: only when the applied filter changed (back button, a
  // click on a chart), never over what is being typed
  if (!shown || shown.filter !== s.filter) set('filter', 'value', s.filter);
  set('refresh-toggle', 'textContent', s.refresh === 'off' ? '▶ auto-refresh off' : '❚❚ auto-refresh on');
  document.getElementById('refresh-toggle').setAttribute('aria-pressed', String(s.refresh !== 'off'));
  shown = s;
  refreshText();
}

// The refresh state, redrawn every second: "live: next in 23 s · last
// 15:04:05", "paused: absolute range", "off".
let nextAt = 0, lastAt = 0;
function refreshText() {
  const e = document.getElementById('live');
  if (!e || !shown) return;
  const last = lastAt ? ' · last refreshed ' + timeText(lastAt, { tz: shown.tz }).slice(11) : '';
  let t, st;
  if (!isLive(shown)) { t = 'paused: absolute range'; st = 'paused'; }
  else if (shown.refresh === 'off') { t = 'off'; st = 'off'; }
  else { t = `● live: next in ${Math.max(0, Math.ceil((nextAt - Date.now()) / 1000))} s`; st = 'on'; }
  if (e.textContent !== t + last) e.textContent = t + last;
  e.dataset.state = st;
}
setInterval(refreshText, 1000);

// A bad filter: the API's message (its first line: the filter and caret
// lines after it are drawn here), and one caret under its column.
export function showFilterError(e) {
  const box = document.getElementById('filter-error');
  if (!box) return;
  markError(e);
  if (!e) { box.innerHTML = ''; return; }
  const col = e.column || 1;
  const msg = String(e.message).split('\n')[0];
  box.innerHTML = `<pre class="caret">${esc(e.filter ?? '')}\n${' '.repeat(Math.max(0, col - 1))}^</pre><div>${esc(msg)}</div>${e.hint ? `<div class="hint">${esc(e.hint)}</div>` : ''}`;
}

// A selector for the page's focused control (its id, or a Top-N tab's
// field), to give the focus back after the page is rebuilt; '' for none.
function focusKey(el) {
  const a = document.activeElement;
  if (!a || !el.contains(a)) return '';
  if (a.id) return '#' + CSS.escape(a.id);
  return a.dataset.field ? `[data-field="${CSS.escape(a.dataset.field)}"]` : '';
}

const REFRESH_MS = 30000;
let timer = null, gen = 0;
// Renders the page for the URL's state.  `refresh`: the live timer's
// re-render: the old page stays on screen until the new one is there.
async function render({ refresh = false } = {}) {
  const s = getState();
  const p = page();
  document.title = 'nagare · ' + p.title;
  renderNav();
  syncControls(s);
  const el = document.getElementById('page');
  const focused = focusKey(el);
  const my = ++gen;
  if (!refresh || el.dataset.page !== p.path) {
    disposeCharts();
    el.innerHTML = '<div class="loading">loading…</div>';
  }
  el.dataset.page = p.path;
  el.dataset.ready = '0';
  el.dataset.gen = String(my);
  showFilterError(null);
  try {
    await p.render(el, s, { fresh: () => my === gen, filterError: showFilterError });
    if (my === gen) await fillEmpty(el, s);
    if (my === gen && s.filter) rememberFilter(s.filter); // the API took it
  } catch (e) {
    if (my !== gen) return;
    if (e.column) { showFilterError(e); el.innerHTML = '<div class="empty">Fix the filter above to see the data.</div>'; }
    else el.innerHTML = errorBox(e);
  }
  if (my !== gen) return;
  disposeCharts({ detached: true });
  // a page's own control (Top N, dimension, side) keeps the focus
  if (focused) { const f = el.querySelector(focused); if (f) f.focus(); }
  el.dataset.ready = '1';
  clearTimeout(timer);
  lastAt = Date.now();
  nextAt = 0;
  if (isLive(s) && s.refresh !== 'off') {
    nextAt = lastAt + REFRESH_MS;
    timer = setTimeout(() => { if (my === gen) refreshNow(); }, REFRESH_MS);
  }
  refreshText();
}

// The live refresh (also the event ng-refresh, for the browser tests).
function refreshNow() {
  if (!document.hidden) render({ refresh: true });
}
window.addEventListener('ng-refresh', refreshNow);

document.addEventListener('click', (e) => {
  if (e.target.closest('a.skip')) { e.preventDefault(); document.getElementById('page').focus(); return; }
  const a = e.target.closest('a[data-path]');
  if (a && !e.ctrlKey && !e.metaKey && e.button === 0) { e.preventDefault(); go(a.dataset.path); }
});
window.addEventListener('popstate', () => render());
// a theme change redraws the charts in the new colours
window.addEventListener('ng-theme', () => render({ refresh: true }));
// Keyboard: "/" puts the focus in the filter box (when not typing
// elsewhere); Escape closes the views menu.
document.addEventListener('keydown', (e) => {
  const t = e.target;
  const typing = t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));
  if (e.key === '/' && !typing && !e.ctrlKey && !e.metaKey && !e.altKey) {
    e.preventDefault();
    document.getElementById('filter').focus();
  } else if (e.key === 'Escape') {
    const m = document.getElementById('views-menu');
    if (m && m.open) { m.open = false; m.querySelector('summary').focus(); }
  }
});
wireTheme();
window.addEventListener('ng-state', () => render());
render();

// What the enrichment data's licences ask to be shown where its results
// are (DB-IP Lite: CC BY 4.0, "IP Geolocation by DB-IP" with a link):
// /api/v1/fields' attribution, once a page load (docs/enrichment.md).
api('fields').then((d) => {
  const a = (d && d.attribution) || [];
  document.getElementById('attribution').innerHTML = a.map((x) =>
    `<a href="${esc(x.url)}" rel="noopener" target="_blank">${esc(x.text)}</a> (${esc(x.licence)})`).join(' · ');
}).catch(() => {});
