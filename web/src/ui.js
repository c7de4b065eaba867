// Shared pieces: cards, tables, charts, messages.
import * as echarts from 'echarts/core';
import { LineChart, BarChart, SankeyChart, MapChart } from 'echarts/charts';
import { GridComponent, TooltipComponent, LegendComponent, VisualMapComponent, TitleComponent, BrushComponent } from 'echarts/components';
import { CanvasRenderer, SVGRenderer } from 'echarts/renderers';
import { esc, inUnit, num, metric, traffic } from './format.js';
import { api } from './api.js';
import { getState, setState, isoSec } from './state.js';
import { flowsLink } from './clicks.js';
import { isDark, palette, OTHER } from './theme.js';

echarts.use([LineChart, BarChart, SankeyChart, MapChart, GridComponent, TooltipComponent,
  LegendComponent, VisualMapComponent, TitleComponent, BrushComponent, CanvasRenderer, SVGRenderer]);
export { echarts };

const charts = new Set();
// Resizes once a frame at most, only charts still on the page; a chart
// caught mid-update (ECharts' map can throw then) is redrawn next frame.
let resizing = 0;
window.addEventListener('resize', () => {
  cancelAnimationFrame(resizing);
  resizing = requestAnimationFrame(() => charts.forEach((c) => {
    if (c.isDisposed() || !c.getDom().isConnected) return;
    try { c.resize(); } catch { requestAnimationFrame(() => { try { c.resize(); } catch { /* next resize */ } }); }
  }));
});

// Disposes the charts (`detached`: only those no longer on the page).
// A full re-render disposes them a tick later: it may be running inside
// one of their own event handlers (a click-through on a series, at
// mouseup), and ECharts' other mouseup handlers (the brush's) must not
// find their chart gone under them.
export function disposeCharts({ detached = false } = {}) {
  for (const c of charts) {
    if (detached && !c.isDisposed() && c.getDom().isConnected) continue;
    charts.delete(c);
    if (detached) c.dispose();
    else setTimeout(() => { if (!c.isDisposed()) c.dispose(); }, 0);
  }
}

// An ECharts instance on element `el` with option `opt`, in the page's
// theme (theme.js: ECharts' dark theme on a transparent background when
// dark) and with the colour-blind-safe palette unless opt.color says
// otherwise.  A time axis
// is drawn in the state's time zone (tz=utc: UTC, else the browser's),
// and dragging across it selects a span that becomes the page's range.
// `renderer` 'svg' draws the labels as SVG text (the Sankey: the browser
// tests measure them).
export function chart(el, opt, { renderer = 'canvas' } = {}) {
  const timeAxis = opt.xAxis && opt.xAxis.type === 'time';
  // a time axis: about one label per 100 px, so none overlap at 390 px
  if (timeAxis && opt.xAxis.splitNumber === undefined)
    opt.xAxis.splitNumber = Math.max(2, Math.floor(el.clientWidth / 100));
  if (timeAxis) {
    opt.useUTC = getState().tz === 'utc';
    opt.brush = { xAxisIndex: 'all', brushType: 'lineX', brushMode: 'single', transformable: false,
      brushStyle: { color: 'rgba(59,130,196,0.18)', borderColor: '#3b82c4', borderWidth: 1 }, throttleType: 'debounce' };
  }
  if (!opt.color) opt.color = palette();
  if (opt.backgroundColor === undefined) opt.backgroundColor = 'transparent';
  const c = echarts.init(el, isDark() ? 'dark' : null, { renderer });
  c.setOption(opt);
  if (timeAxis) zoomable(c);
  el._ngChart = c; // for the browser tests (tests/web)
  charts.add(c);
  return c;
}

// Drag to zoom: the brush always on (lineX); a span of at least a few
// pixels, let go, sets the page's absolute range (whole seconds) and the
// whole page follows; a click without a drag does nothing.
function zoomable(c) {
  c.dispatchAction({ type: 'takeGlobalCursor', key: 'brush', brushOption: { brushType: 'lineX', brushMode: 'single' } });
  c.on('brushEnd', (e) => {
    const a = e.areas && e.areas[0];
    const r = a && (a.coordRange || (a.coordRanges && a.coordRanges[0]));
    if (!r || !(r[1] > r[0])) return;
    const [p0, p1] = a.range || [0, 100];
    if (Math.abs(p1 - p0) < 4) return;
    c.dispatchAction({ type: 'brush', areas: [] });
    setState({ from: isoSec(r[0]), to: isoSec(r[1]), offset: '' });
  });
}

export function h(html) {
  const t = document.createElement('template');
  t.innerHTML = html.trim();
  return t.content.firstElementChild;
}

export function card(title, body = '', cls = '') {
  return `<section class="card ${cls}"><h2>${esc(title)}</h2>${body}</section>`;
}

// An error box with what to do.
export function errorBox(e) {
  return `<div class="error" role="alert"><strong>${esc(e.message)}</strong>${e.hint ? `<div class="hint">${esc(e.hint)}</div>` : ''}</div>`;
}

// An empty result: main.js fills it in (fillEmpty) once it knows whether
// the store has flows at all (then the range or the filter is why) and
// where the collector listens.
export const NO_FLOWS = '<div class="empty" data-no-flows><strong>No flows in this time range.</strong></div>';

// Does the store hold flows, where does the collector listen: the
// exporters answer ({store.rows, exporters, listen?}); in `serve` before
// a collector wrote its counters, the last 30 days' summary instead.
async function storeInfo() {
  try { return await api('exporters'); } catch { /* serve without exporters.json */ }
  try {
    const sum = await api('summary', { from: '-30d', to: 'now' });
    return { store: { rows: sum.flows }, exporters: [] };
  } catch { return null; }
}

// The text of every NO_FLOWS under `root` for state `s` (asks the API
// only when there is one).
export async function fillEmpty(root, s) {
  const boxes = root.querySelectorAll('[data-no-flows]');
  if (!boxes.length) return;
  const info = await storeInfo();
  const hasFlows = info && ((info.store && info.store.rows > 0) || (info.exporters && info.exporters.length > 0));
  let html;
  if (hasFlows || !info) {
    html = s.filter
      ? `<strong>No flows match this filter in this range.</strong><div>Loosen the filter <code>${esc(s.filter)}</code> or widen the time range.</div>`
      : '<strong>No flows in this time range.</strong><div>Widen the time range: the store has flows at other times.</div>';
  } else {
    html = `<strong>No flows yet.</strong><div>Point an exporter (NetFlow v5/v9, IPFIX, sFlow) at ${listenText(info)} of the collector,
    e.g. <code>softflowd -i eth0 -n COLLECTOR:PORT -v 9</code>.</div>`;
  }
  boxes.forEach((b) => { b.innerHTML = html; });
}

// Where the collector listens: the exporters answer's "listen" (as given
// to --listen: "127.0.0.1:2055" is UDP, "tcp://…", "sctp://…"); without
// it (nagare serve) the option that sets it.
export function listenText(info) {
  const l = info && Array.isArray(info.listen) ? info.listen : [];
  const one = (a) => `<code>${esc(/^[a-z]+:\/\//.test(a) ? a : 'udp ' + a)}</code>`;
  return l.length ? l.map(one).join(', ') : 'the port given to <code>nagare collect --listen</code> (default <code>udp/2055</code>)';
}

// A table of rows: cols = [{key, title, num, text(row) | html(row)}]:
// a cell is html(row) as markup, else text(row) escaped, else row[key].
// opts.term(row): the row's filter term (filterterm.js; null: none): the
// row is clickable (clicks.js wireClicks adds the term to the filter) and
// a last cell links to the Flow explorer on its flows over opts.range
// ({from, to, filter}: clicks.js rangeOf).
export function table(rows, cols, cls = '', opts = {}) {
  const go = typeof opts.term === 'function' && opts.range;
  const head = cols.map((c) => `<th class="${c.num ? 'num' : ''}">${esc(c.title)}</th>`).join('') + (go ? '<th></th>' : '');
  const body = rows.map((r) => {
    const t = go ? opts.term(r) : null;
    const attrs = t ? ` class="clickable" tabindex="0" data-term="${esc(t)}" title="${esc('click: filter on ' + t)}"` : '';
    return `<tr${attrs}>` + cols.map((c) => {
      const v = c.html ? c.html(r) : esc(c.text ? c.text(r) : r[c.key]);
      return `<td class="${c.num ? 'num' : ''}">${v}</td>`;
    }).join('') + (go ? `<td class="go">${t ? flowsLink(opts.range, t) : ''}</td>` : '') + '</tr>';
  }).join('');
  return `<div class="table-wrap"><table class="data ${cls}"><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table></div>`;
}

// Bytes (or bits/s over `secs`), packets and flows columns.
export function valueCols(unit, secs) {
  return [
    { key: 'bytes', title: unit === 'bps' ? 'bits/s' : 'bytes', num: true,
      text: (r) => traffic(r, { unit: unit === 'bps' ? 'bps' : 'bytes', secs }) },
    { key: 'packets', title: 'packets', num: true, text: (r) => num(r.packets) },
    { key: 'flows', title: 'flows', num: true, text: (r) => num(r.flows) },
  ];
}

// Axis labels that never overlap (ECharts drops the ones that would).
const AXIS_LABEL = { hideOverlap: true };

// The keys of a series answer in the order seriesOption draws them (a
// chart click's seriesIndex → its key).
export function seriesKeys(doc) {
  return [...new Set(doc.rows.map((r) => r.key))];
}

// Stacked area chart of series rows ({time, key, flows, packets, bytes}).
export function seriesOption(doc, unit, { stack = true, label = null } = {}) {
  const iv = doc.query.interval_s || 60;
  const name = (k) => k === '' ? '(none)' : (label ? label(k) : k);
  const keys = [...new Set(doc.rows.map((r) => r.key))];
  // Every interval of the range, zero where the API has no point, so a
  // burst in one interval draws as a spike, not as nothing.
  const step = iv * 1000;
  const t0 = Math.floor(Date.parse(doc.query.from) / step) * step, t1 = Date.parse(doc.query.to);
  const times = [];
  for (let t = t0; t < t1 && times.length < 5000; t += step) times.push(t);
  const val = (r) => metric(r, { unit, secs: iv });
  const by = new Map(keys.map((k) => [k, new Map()]));
  for (const r of doc.rows) by.get(r.key).set(Date.parse(r.time), val(r));
  return {
    tooltip: { trigger: 'axis', valueFormatter: (v) => inUnit(v, { unit }) },
    legend: { type: 'scroll', top: 0 },
    grid: { left: 60, right: 16, top: 36, bottom: 28 },
    // the axis is the range asked, exactly (a zoom's span, end to end)
    xAxis: { type: 'time', min: Date.parse(doc.query.from), max: t1, axisLabel: { ...AXIS_LABEL, showMinLabel: false, showMaxLabel: false } },
    yAxis: { type: 'value', axisLabel: { ...AXIS_LABEL, formatter: (v) => num(v) } },
    series: keys.map((k) => ({
      name: name(k), type: 'line', stack: stack ? 'all' : undefined, areaStyle: stack ? {} : undefined,
      ...(k === 'other' ? { color: OTHER } : {}), // grey, as on Visualize
      showSymbol: false, sampling: 'lttb', triggerLineEvent: true, data: times.map((t) => [t, by.get(k).get(t) || 0]),
    })),
  };
}

// Horizontal bar chart of top rows labelled by label(r).
export function barOption(rows, label, unit, secs) {
  const v = rows.map((r) => metric(r, { unit, secs }));
  return {
    tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' }, valueFormatter: (x) => inUnit(x, { unit }) },
    grid: { left: 8, right: 24, top: 8, bottom: 8, containLabel: true },
    xAxis: { type: 'value', axisLabel: { ...AXIS_LABEL, formatter: (x) => num(x) } },
    yAxis: { type: 'category', inverse: true, data: rows.map(label), axisLabel: { width: 160, overflow: 'truncate' } },
    series: [{ type: 'bar', data: v, itemStyle: { color: palette()[0] } }],
  };
}
