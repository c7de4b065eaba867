// nagare dashboards: a page per path, shared controls (time range,
// filter, unit) kept in the URL.
import './style.css';
import { getState, setState, go, isLive } from './state.js';
import { disposeCharts, errorBox } from './ui.js';
import { esc } from './format.js';
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

function renderControls(s) {
  const preset = PRESETS.find(([v]) => v === s.from && isLive(s));
  document.getElementById('controls').innerHTML = `
  <form id="ctl" autocomplete="off">
    <label class="range">Range
      <select id="preset">${PRESETS.map(([v, t]) => `<option value="${v}" ${preset && preset[0] === v ? 'selected' : ''}>last ${t}</option>`).join('')}
        <option value="abs" ${preset ? '' : 'selected'}>absolute…</option></select></label>
    <span id="abs" class="${preset ? 'hidden' : ''}">
      <label>from (UTC) <input type="datetime-local" id="from" value="${esc(toLocal(s.from))}"></label>
      <label>to <input type="datetime-local" id="to" value="${esc(toLocal(s.to))}"></label>
      <span class="raw">${preset ? '' : esc(s.from) + ' → ' + esc(s.to)}</span>
    </span>
    <label>Unit <select id="unit">${['bps', 'bytes', 'packets', 'flows'].map((u) =>
      `<option value="${u}" ${s.unit === u ? 'selected' : ''}>${u === 'bps' ? 'bits/s' : u}</option>`).join('')}</select></label>
    <div class="filter-row">
      <input id="filter" type="text" spellcheck="false" placeholder="nfdump filter, e.g. proto tcp and dst port 443" value="${esc(s.filter)}">
      <button type="submit">Apply</button>
    </div>
    <div id="filter-error" class="filter-error" role="alert"></div>
    <span id="live" class="live">${isLive(s) ? '● live: refreshes every 30 s' : ''}</span>
  </form>`;
  const f = document.getElementById('ctl');
  f.addEventListener('submit', (e) => { e.preventDefault(); setState({ filter: document.getElementById('filter').value.trim(), offset: '' }); });
  document.getElementById('unit').addEventListener('change', (e) => setState({ unit: e.target.value }));
  document.getElementById('preset').addEventListener('change', (e) => {
    if (e.target.value === 'abs') {
      document.getElementById('abs').classList.remove('hidden');
      const now = new Date(), then = new Date(now - 3600e3);
      document.getElementById('from').value = then.toISOString().slice(0, 16);
      document.getElementById('to').value = now.toISOString().slice(0, 16);
    } else setState({ from: e.target.value, to: 'now' });
  });
  for (const id of ['from', 'to'])
    document.getElementById(id).addEventListener('change', () => {
      const a = fromLocal(document.getElementById('from').value), b = fromLocal(document.getElementById('to').value);
      if (a && b) setState({ from: a, to: b });
    });
}

// A bad filter: the API's message, and a caret under its column.
export function showFilterError(e) {
  const box = document.getElementById('filter-error');
  if (!box) return;
  if (!e) { box.innerHTML = ''; return; }
  const col = e.column || 1;
  box.innerHTML = `<pre class="caret">${esc(e.filter ?? '')}\n${' '.repeat(Math.max(0, col - 1))}^</pre><div>${esc(e.message)}</div>${e.hint ? `<div class="hint">${esc(e.hint)}</div>` : ''}`;
}

let timer = null, gen = 0;
async function render() {
  const s = getState();
  const p = page();
  document.title = 'nagare · ' + p.title;
  renderNav();
  renderControls(s);
  disposeCharts();
  const el = document.getElementById('page');
  const my = ++gen;
  el.innerHTML = '<div class="loading">loading…</div>';
  el.dataset.page = p.path;
  el.dataset.ready = '0';
  try {
    await p.render(el, s, { fresh: () => my === gen, filterError: showFilterError });
  } catch (e) {
    if (my !== gen) return;
    if (e.column) { showFilterError(e); el.innerHTML = '<div class="empty">Fix the filter above to see the data.</div>'; }
    else el.innerHTML = errorBox(e);
  }
  if (my === gen) el.dataset.ready = '1';
  clearTimeout(timer);
  if (isLive(s)) timer = setTimeout(() => { if (my === gen && !document.hidden) render(); }, 30000);
}

document.addEventListener('click', (e) => {
  const a = e.target.closest('a[data-path]');
  if (a && !e.ctrlKey && !e.metaKey && e.button === 0) { e.preventDefault(); go(a.dataset.path); }
});
window.addEventListener('popstate', render);
window.addEventListener('ng-state', render);
render();
