// Shared pieces: cards, tables, charts, messages.
import * as echarts from 'echarts/core';
import { LineChart, BarChart, SankeyChart, MapChart } from 'echarts/charts';
import { GridComponent, TooltipComponent, LegendComponent, VisualMapComponent, TitleComponent } from 'echarts/components';
import { CanvasRenderer } from 'echarts/renderers';
import { esc, fmtUnit, human } from './format.js';

echarts.use([LineChart, BarChart, SankeyChart, MapChart, GridComponent, TooltipComponent,
  LegendComponent, VisualMapComponent, TitleComponent, CanvasRenderer]);
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

export function disposeCharts() {
  charts.forEach((c) => c.dispose());
  charts.clear();
}

// An ECharts instance on element `el` with option `opt`.
export function chart(el, opt) {
  const c = echarts.init(el, null, { renderer: 'canvas' });
  c.setOption(opt);
  el._ngChart = c; // for the browser tests (tests/web)
  charts.add(c);
  return c;
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

export const NO_FLOWS = `<div class="empty"><strong>No flows in this time range.</strong>
<div>No flows yet? Point an exporter (NetFlow v5/v9, IPFIX) at <code>udp/2055</code> or sFlow at
<code>udp/6343</code> of the collector, e.g. <code>softflowd -i eth0 -n COLLECTOR:2055 -v 9</code>.
Otherwise widen the time range or loosen the filter.</div></div>`;

// A table of rows: cols = [{key, title, num, fmt}]
export function table(rows, cols, cls = '') {
  const head = cols.map((c) => `<th class="${c.num ? 'num' : ''}">${esc(c.title)}</th>`).join('');
  const body = rows.map((r) => '<tr>' + cols.map((c) => {
    const v = c.fmt ? c.fmt(r[c.key], r) : r[c.key];
    return `<td class="${c.num ? 'num' : ''}">${c.raw ? v : esc(v)}</td>`;
  }).join('') + '</tr>').join('');
  return `<div class="table-wrap"><table class="data ${cls}"><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table></div>`;
}

export function valueCols(unit, secs) {
  return [
    { key: 'bytes', title: unit === 'bps' ? 'bits/s' : 'bytes', num: true,
      fmt: (v) => unit === 'bps' ? fmtUnit((v * 8) / secs, 'bps') : human(v) + 'B' },
    { key: 'packets', title: 'packets', num: true, fmt: (v) => human(v) },
    { key: 'flows', title: 'flows', num: true, fmt: (v) => human(v) },
  ];
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
  const val = (r) => unit === 'bps' ? (r.bytes * 8) / iv : unit === 'packets' ? r.packets : unit === 'flows' ? r.flows : r.bytes;
  const by = new Map(keys.map((k) => [k, new Map()]));
  for (const r of doc.rows) by.get(r.key).set(Date.parse(r.time), val(r));
  return {
    tooltip: { trigger: 'axis', valueFormatter: (v) => fmtUnit(v, unit) },
    legend: { type: 'scroll', top: 0 },
    grid: { left: 60, right: 16, top: 36, bottom: 28 },
    xAxis: { type: 'time' },
    yAxis: { type: 'value', axisLabel: { formatter: (v) => human(v) } },
    series: keys.map((k) => ({
      name: name(k), type: 'line', stack: stack ? 'all' : undefined, areaStyle: stack ? {} : undefined,
      showSymbol: false, sampling: 'lttb', data: times.map((t) => [t, by.get(k).get(t) || 0]),
    })),
  };
}

// Horizontal bar chart of top rows labelled by label(r).
export function barOption(rows, label, unit, secs) {
  const v = rows.map((r) => unit === 'bps' ? (r.bytes * 8) / secs : unit === 'packets' ? r.packets : unit === 'flows' ? r.flows : r.bytes);
  return {
    tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' }, valueFormatter: (x) => fmtUnit(x, unit) },
    grid: { left: 8, right: 24, top: 8, bottom: 8, containLabel: true },
    xAxis: { type: 'value', axisLabel: { formatter: (x) => human(x) } },
    yAxis: { type: 'category', inverse: true, data: rows.map(label), axisLabel: { width: 160, overflow: 'truncate' } },
    series: [{ type: 'bar', data: v, itemStyle: { color: '#3b82c4' } }],
  };
}
