// nagare dashboards: a page per path, shared controls (time range,
// filter, unit) kept in the URL.
import './style.css';
import { getState, setState, go, isLive } from './state.js';
import { disposeCharts, errorBox, fillEmpty } from './ui.js';
import { esc, UNITS, unitLabel } from './format.js';
import overview from './pages/overview.js';
import topn from './pages/topn.js';
import flows from './pages/flows.js';
import geo from './pages/geo.js';
import as from './pages/as.js';
import exporters from './pages/exporters.js';
import explorer from './pages/explorer.js';

const PAGES = [
  { path: '/', title: 'Overview', render: overview },
  { path: '/top', title: 'Top-N', render: topn },
  { path: '/flows', title: 'Flows', render: flows },
  { path: '/geo', title: 'Geo', render: geo },
  { path: '/as', title: 'AS traffic', render: as },
  { path: '/exporters', title: 'Exporters', render: exporters },
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

// ISO "2026-11-30T12:00:00Z" ↔ the value of <input type=datetime-local> (UTC).
const toLocal = (v) => /^\d{4}-\d\d-\d\dT\d\d:\d\d/.test(v) ? v.slice(0, 16) : '';
const fromLocal = (v) => v ? v + ':00Z' : '';

// The controls are built once and then only brought up to date with the
// state (syncControls): a refresh or a change elsewhere leaves a filter
// being typed, and the keyboard focus, where they are.
function buildControls() {
  document.getElementById('controls').innerHTML = `
  <form id="ctl" autocomplete="off">
    <label class="range">Range
      <select id="preset">${PRESETS.map(([v, t]) => `<option value="${v}">last ${t}</option>`).join('')}
        <option value="abs">absolute…</option></select></label>
    <span id="abs">
      <label>from (UTC) <input type="datetime-local" id="from"></label>
      <label>to <input type="datetime-local" id="to"></label>
      <span class="raw" id="raw-range"></span>
    </span>
    <label>Unit <select id="unit">${UNITS.map((u) => `<option value="${u}">${unitLabel[u]}</option>`).join('')}</select></label>
    <div class="filter-row">
      <input id="filter" type="text" spellcheck="false" placeholder="nfdump filter, e.g. proto tcp and dst port 443">
      <button type="submit">Apply</button>
    </div>
    <div id="filter-error" class="filter-error" role="alert"></div>
    <span id="live" class="live"></span>
  </form>`;
  const f = document.getElementById('ctl');
  f.addEventListener('submit', (e) => { e.preventDefault(); setState({ filter: document.getElementById('filter').value.trim(), offset: '' }); });
  document.getElementById('unit').addEventListener('change', (e) => setState({ unit: e.target.value }));
  document.getElementById('preset').addEventListener('change', (e) => {
    if (e.target.value === 'abs') {
      // the range on screen, made absolute and applied at once
      const now = new Date(), then = new Date(now - 3600e3);
      setState({ from: then.toISOString().slice(0, 16) + ':00Z', to: now.toISOString().slice(0, 16) + ':00Z', offset: '' });
    } else setState({ from: e.target.value, to: 'now', offset: '' });
  });
  for (const id of ['from', 'to'])
    document.getElementById(id).addEventListener('change', () => {
      const a = fromLocal(document.getElementById('from').value), b = fromLocal(document.getElementById('to').value);
      if (a && b) setState({ from: a, to: b, offset: '' });
    });
}

let shown = null; // the state the controls show
function syncControls(s) {
  if (!document.getElementById('ctl')) buildControls();
  const preset = PRESETS.find(([v]) => v === s.from && isLive(s));
  const set = (id, prop, v) => { const e = document.getElementById(id); if (e[prop] !== v) e[prop] = v; };
  set('preset', 'value', preset ? preset[0] : 'abs');
  document.getElementById('abs').classList.toggle('hidden', !!preset);
  set('from', 'value', toLocal(s.from));
  set('to', 'value', toLocal(s.to));
  set('raw-range', 'textContent', preset ? '' : s.from + ' → ' + s.to);
  set('unit', 'value', s.unit);
  // the filter box: only when the applied filter changed (back button, a
  // click on a chart), never over what is being typed
  if (!shown || shown.filter !== s.filter) set('filter', 'value', s.filter);
  set('live', 'textContent', isLive(s) ? '● live: refreshes every 30 s' : '');
  shown = s;
}

// A bad filter: the API's message (its first line: the filter and caret
// lines after it are drawn here), and one caret under its column.
export function showFilterError(e) {
  const box = document.getElementById('filter-error');
  if (!box) return;
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
  if (isLive(s)) timer = setTimeout(() => { if (my === gen) refreshNow(); }, 30000);
}

// The live refresh (also the event ng-refresh, for the browser tests).
function refreshNow() {
  if (!document.hidden) render({ refresh: true });
}
window.addEventListener('ng-refresh', refreshNow);

document.addEventListener('click', (e) => {
  const a = e.target.closest('a[data-path]');
  if (a && !e.ctrlKey && !e.metaKey && e.button === 0) { e.preventDefault(); go(a.dataset.path); }
});
window.addEventListener('popstate', () => render());
window.addEventListener('ng-state', () => render());
render();
