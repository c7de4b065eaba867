// Visualize: any stored field (several at once) over time, as Akvorado's
// console does: top N + "other", stacked areas, lines, small multiples,
// a Sankey or a table; bits/s, packets/s, flows/s or bytes; the reverse
// direction mirrored below the axis; the same range a day or a week
// earlier as a dashed line; min, average, max, 95th percentile and total
// per series under the graph.
//
// One API call draws the page: GET /api/v1/series with the dimensions as
// its comma list of fields, and bidirectional=1 / previous=1d|1w asking
// for the reverse direction and the previous period in the same answer
// (the Sankey: one GET /api/v1/pairs of the first two dimensions).  The
// per-series statistics are computed here, from the answer's buckets.
// Over an absolute range, switching the graph type (stacked, lines,
// small multiples, table) draws again from the same answer: the one
// call is not asked again (seriesOf).
import { api, apiUrl } from '../api.js';
import { baseParams, intervalFor, isLive, setState, VIS_DEFAULTS } from '../state.js';
import { card, chart, table, NO_FLOWS } from '../ui.js';
import { esc, num, orderOf, protoName } from '../format.js';
import { palette, OTHER } from '../theme.js';

export const GRAPHS = [['stacked', 'stacked areas'], ['lines', 'lines'], ['multiples', 'small multiples'], ['sankey', 'Sankey'], ['table', 'table']];
// The page's units: a rate per second over each bucket, or bytes a bucket.
export const VUNITS = [['bps', 'bits/s'], ['pps', 'packets/s'], ['fps', 'flows/s'], ['bytes', 'bytes']];
const SUFFIX = { bps: 'b/s', pps: ' pkts/s', fps: ' flows/s', bytes: 'B' };
const TOTAL_OF = { bps: 'bytes', bytes: 'bytes', pps: 'packets', fps: 'flows' };
const NS = [3, 5, 10, 15, 20, 30, 50];
const PREVS = [['', 'none'], ['1d', 'a day earlier'], ['1w', 'a week earlier']];

const inV = (v, unit) => num(v) + SUFFIX[unit];
// The value of a bucket row in unit over iv seconds.
function value(r, unit, iv) {
  switch (unit) {
    case 'pps': return r.packets / iv;
    case 'fps': return r.flows / iv;
    case 'bytes': return r.bytes;
    default: return (r.bytes * 8) / iv;
  }
}

let fieldList = null; // GET /api/v1/fields, once a page load
async function fields() {
  if (!fieldList) {
    const d = await api('fields');
    // a dimension is any stored field but the measures and the times
    fieldList = d.fields.filter((f) => f.type !== 'time' && !/^(bytes|packets)(_raw)?$|^l2_bytes$/.test(f.name))
      .map((f) => ({ key: f.short || f.name, doc: f.doc }));
  }
  return fieldList;
}

// The page's state from the URL, bounded (a hand-edited URL cannot ask
// for more than the selectors offer).
export function visState(s) {
  const dims = String(s.dims ?? VIS_DEFAULTS.dims).split(',').map((x) => x.trim()).filter(Boolean).slice(0, 4);
  const n = NS.includes(Number(s.n)) ? Number(s.n) : 10;
  const graph = GRAPHS.some(([g]) => g === s.graph) ? s.graph : VIS_DEFAULTS.graph;
  const vunit = VUNITS.some(([u]) => u === s.vunit) ? s.vunit : VIS_DEFAULTS.vunit;
  const prev = s.prev === '1d' || s.prev === '1w' ? s.prev : '';
  return { dims, n, graph, vunit, bidir: s.bidir === '1', prev, sother: s.sother === '1' };
}

// A series key ("6,443") with protocols named when a dimension is proto.
function keyLabel(dims, k) {
  if (k === 'other' || k === 'total') return k;
  if (k === '') return '(none)';
  const parts = k.split(',');
  return parts.length === dims.length
    ? parts.map((p, i) => (dims[i] === 'proto' ? protoName(p) : p === '' ? '(none)' : p)).join(' · ')
    : k;
}

// Buckets × series: {times, series: [{key, name, values, total}]} with
// zero where the API has no point (a burst draws as a spike).
function grid(rows, from, to, iv, unit, dims, keyOrder) {
  const step = iv * 1000;
  const t0 = Math.floor(Date.parse(from) / step) * step, t1 = Date.parse(to);
  const times = [];
  for (let t = t0; t < t1 && times.length < 5000; t += step) times.push(t);
  const index = new Map(times.map((t, i) => [t, i]));
  const keys = keyOrder || [...new Set(rows.map((r) => r.key ?? 'total'))];
  const by = new Map(keys.map((k) => [k, { key: k, name: keyLabel(dims, k), values: new Array(times.length).fill(0), total: 0 }]));
  for (const r of rows) {
    const s = by.get(r.key ?? 'total'), i = index.get(Date.parse(r.time));
    if (!s || i === undefined) continue;
    s.values[i] += value(r, unit, iv);
    s.total += r[TOTAL_OF[unit]];
  }
  return { times, series: keys.map((k) => by.get(k)) };
}

// min, average, max, 95th percentile (nearest rank) of a series' buckets
// (zeros included), and its total (bytes, packets or flows).
export function stats(values, total) {
  if (!values.length) return { min: 0, avg: 0, max: 0, p95: 0, total };
  const v = [...values].sort((a, b) => a - b);
  const sum = v.reduce((a, b) => a + b, 0);
  const rank = Math.max(1, Math.ceil(0.95 * v.length));
  return { min: v[0], avg: sum / v.length, max: v[v.length - 1], p95: v[rank - 1], total };
}

function toolbar(st, all) {
  const sk = st.graph === 'sankey';
  const opt = (list, cur) => list.map(([v, t]) => `<option value="${v}" ${v === cur ? 'selected' : ''}>${esc(t)}</option>`).join('');
  const chips = st.dims.map((d, i) => `<span class="chip">${esc(d)}<button type="button" class="chip-x" data-i="${i}" aria-label="remove ${esc(d)}">×</button></span>`).join('');
  return `
  <div class="toolbar vis-toolbar">
    <span class="dims" id="dims" data-dims="${esc(st.dims.join(','))}">Dimensions ${chips}
      <select id="add-dim" aria-label="add a dimension"><option value="">+ add…</option>${all.filter((f) => !st.dims.includes(f.key)).map((f) => `<option value="${esc(f.key)}" title="${esc(f.doc)}">${esc(f.key)}</option>`).join('')}</select></span>
    <label>Top <select id="vis-n">${opt(NS.map((x) => [String(x), String(x)]), String(st.n))}</select> + other</label>
    <label>Graph <select id="graph">${opt(GRAPHS, st.graph)}</select></label>
    <label>Unit <select id="vunit">${opt(VUNITS, st.vunit)}
      <option value="pct" disabled title="nagare stores no interface speed yet (no ifSpeed from SNMP or the exporters): a percentage would be made up">% of if speed (n/a)</option></select></label>
    <label title="${sk ? 'a time-series view: not for the Sankey' : 'the other direction (src and dst swapped in the dimensions and the filter), drawn below the axis'}"><input type="checkbox" id="bidir" ${st.bidir ? 'checked' : ''} ${sk ? 'disabled' : ''}> bidirectional</label>
    <label title="${sk ? 'a time-series view: not for the Sankey' : 'the total of the same range a day or a week earlier, dashed'}">Previous period <select id="prev" ${sk ? 'disabled' : ''}>${opt(PREVS, st.prev)}</select></label>
  </div>`;
}

function wire(el, st) {
  const dims = (d) => setState({ dims: d.join(',') || 'proto' });
  el.querySelectorAll('.chip-x').forEach((b) => b.addEventListener('click', () => dims(st.dims.filter((_, i) => i !== Number(b.dataset.i)))));
  el.querySelector('#add-dim').addEventListener('change', (e) => e.target.value && dims([...st.dims, e.target.value]));
  el.querySelector('#vis-n').addEventListener('change', (e) => setState({ n: e.target.value }));
  el.querySelector('#graph').addEventListener('change', (e) => setState({ graph: e.target.value }));
  el.querySelector('#vunit').addEventListener('change', (e) => setState({ vunit: e.target.value }));
  el.querySelector('#bidir').addEventListener('change', (e) => setState({ bidir: e.target.checked ? '1' : '' }));
  el.querySelector('#prev').addEventListener('change', (e) => setState({ prev: e.target.value }));
}

const AXIS = { hideOverlap: true };
// The colour-blind-safe palette of every chart (theme.js: Okabe-Ito
// first); "other" is grey.  A reverse series has its forward series'
// colour.
function colors(keys) {
  const m = new Map(), pal = palette();
  keys.filter((k) => k !== 'other').forEach((k, i) => m.set(k, pal[i % pal.length]));
  m.set('other', OTHER);
  return m;
}
const PREV_STYLE = { type: 'dashed', width: 1.5, color: '#6b7785' };

// The time chart of the forward series (stacked or not), the reverse
// below the axis and the previous total dashed.
function timeOption(g, rev, prev, st, stack, color) {
  const line = (s, group, sign) => ({
    name: s.name, color: color.get(s.key), type: 'line', stack: stack ? group : undefined, areaStyle: stack ? { opacity: 0.7 } : undefined,
    showSymbol: false, sampling: 'lttb', emphasis: { focus: 'series' },
    data: g.times.map((t, i) => [t, sign * s.values[i]]),
  });
  const series = g.series.map((s) => line(s, 'fwd', 1));
  if (rev) series.push(...rev.series.map((s) => ({ ...line(s, 'rev', -1), name: '↺ ' + s.name })));
  if (prev) series.push({ name: prev.name, type: 'line', showSymbol: false, lineStyle: PREV_STYLE, itemStyle: { color: PREV_STYLE.color }, z: 5,
    data: g.times.map((t, i) => [t, prev.values[i]]) });
  return {
    tooltip: { trigger: 'axis', confine: true, valueFormatter: (v) => inV(Math.abs(v), st.vunit) },
    legend: { type: 'scroll', top: 0, data: series.map((s) => s.name) },
    grid: { left: 8, right: 16, top: 34, bottom: 8, containLabel: true },
    // the first and last time labels inside the grid: never under the
    // y axis' labels nor past the right edge (a phone's 390 px)
    xAxis: { type: 'time', axisLabel: { ...AXIS, alignMinLabel: 'left', alignMaxLabel: 'right' } },
    yAxis: { type: 'value', axisLabel: { ...AXIS, formatter: (v) => num(Math.abs(v)) + (v < 0 ? ' ↺' : '') } },
    series,
  };
}

// One small chart per series (the reverse mirrored in it), each on its
// own scale (with "other" on a common one the small series read flat),
// symmetric around 0 with the reverse.
function drawMultiples(box, g, rev, prev, st) {
  box.innerHTML = g.series.map((s, i) => `<div class="multiple"><div class="multiple-title" title="${esc(s.name)}">${esc(s.name)}</div><div class="chart small" data-i="${i}"></div></div>`).join('');
  g.series.forEach((s, i) => {
    const r = rev && rev.series.find((x) => x.key === s.key);
    const one = { times: g.times, series: [s] };
    const opt = timeOption(one, r ? { series: [r] } : null, prev, st, false, colors(g.series.map((x) => x.key)));
    opt.legend = { show: false };
    opt.grid.top = 8;
    opt.yAxis.splitNumber = 3; // 150 px: a few labels, not ten
    if (rev) {
      const max = Math.max(1, ...s.values, ...(r ? r.values : []));
      opt.yAxis.max = max;
      opt.yAxis.min = -max;
    }
    chart(box.querySelector(`[data-i="${i}"]`), opt);
  });
}

async function drawSankey(el, st, s, ctx) {
  const [src, dst] = st.dims;
  const d = await api('pairs', { ...baseParams(s), src, dst, limit: st.n, order: orderOf(TOTAL_OF[st.vunit]) });
  if (!ctx.fresh()) return;
  const secs = Math.max(1, (Date.parse(d.query.to) - Date.parse(d.query.from)) / 1000);
  const v = (r) => (st.vunit === 'bytes' ? r.bytes : value(r, st.vunit, secs));
  const name = (x) => (x === '' ? '(none)' : String(x));
  // "other" (the edges past the top N) is most of the bytes with many
  // keys: hidden unless asked for (sother=1), as the table still lists it
  const shown = d.rows.filter((r) => st.sother || (r.source !== 'other' && r.target !== 'other'));
  const links = shown.filter((r) => v(r) > 0).map((r) => ({ source: name(r.source), target: '→ ' + name(r.target), value: v(r) }));
  const nodes = [...new Set(links.flatMap((l) => [l.source, l.target]))].map((x) => ({ name: x }));
  el.querySelector('#vis-body').innerHTML = links.length === 0 ? NO_FLOWS
    : card(`${esc(src)} → ${esc(dst)}, top ${st.n} edges by ${esc(VUNITS.find(([u]) => u === st.vunit)[1])}${st.vunit === 'bytes' ? '' : ' (average over the range)'}`,
      `<label class="muted"><input type="checkbox" id="sother" ${st.sother ? 'checked' : ''}> show "other" (the rest, ${esc(num(d.rows.filter((r) => r.source === 'other').reduce((a, r) => a + r.bytes, 0)))}B)</label><div class="chart sankey" id="vis-sankey"></div>`) +
      card('Edges', table(d.rows, [{ key: 'source', title: src, text: (r) => name(r.source) }, { key: 'target', title: dst, text: (r) => name(r.target) },
        { key: 'v', title: VUNITS.find(([u]) => u === st.vunit)[1], num: true, text: (r) => inV(v(r), st.vunit) },
        ...(st.vunit === 'bytes' ? [] : [{ key: 'bytes', title: 'bytes', num: true, text: (r) => num(r.bytes) + 'B' }])], 'vis-edges'));
  const so = el.querySelector('#sother');
  if (so) so.addEventListener('change', (e) => setState({ sother: e.target.checked ? '1' : '' }));
  if (links.length)
    chart(el.querySelector('#vis-sankey'), {
      tooltip: { trigger: 'item', confine: true, valueFormatter: (x) => inV(x, st.vunit) },
      series: [{ type: 'sankey', data: nodes, links, emphasis: { focus: 'adjacency' }, nodeGap: 8, left: 8, right: 130,
        label: { width: 120, overflow: 'truncate' }, lineStyle: { color: 'gradient', opacity: 0.45 } }],
    });
}

// The statistics table: a row a series (forward, reverse, previous).
function statsTable(rows, st) {
  const f = (k) => (r) => inV(r[k], st.vunit);
  return table(rows, [
    { key: 'name', title: 'series', html: (r) => `<span class="swatch" style="background:${r.color || '#999'}"></span>${esc(r.name)}` },
    { key: 'min', title: 'min', num: true, text: f('min') }, { key: 'avg', title: 'average', num: true, text: f('avg') },
    { key: 'max', title: 'max', num: true, text: f('max') }, { key: 'p95', title: '95th pct', num: true, text: f('p95') },
    { key: 'total', title: 'total ' + TOTAL_OF[st.vunit], num: true, html: (r) => `<span data-total="${r.total}">${esc(num(r.total) + (TOTAL_OF[st.vunit] === 'bytes' ? 'B' : ''))}</span>` },
  ], 'vis-stats');
}

// The data as a table: a row a bucket, a column a series.
function dataTable(g, st) {
  const cols = [{ key: 't', title: 'time (UTC)', text: (r) => new Date(r.t).toISOString().slice(0, 16).replace('T', ' ') },
    ...g.series.map((s, j) => ({ key: 's' + j, title: s.name, num: true, text: (r) => inV(r.v[j], st.vunit) }))];
  const rows = g.times.map((t, i) => ({ t, v: g.series.map((s) => s.values[i]) }));
  return table(rows, cols, 'vis-data');
}

// The last series answer and its API URL, kept for an absolute range
// only (one ending at "now" moves, and is always asked again): the same
// URL (the graph type is not in it) gets the same answer.
let lastSeries = { url: '', d: null };
async function seriesOf(params, s) {
  const url = apiUrl('series', params);
  if (!isLive(s) && lastSeries.url === url) return lastSeries.d;
  const d = await api('series', params);
  lastSeries = { url: isLive(s) ? '' : url, d };
  return d;
}

export default async function visualize(el, s, ctx) {
  const st = visState(s);
  const all = await fields();
  if (!ctx.fresh()) return;
  el.innerHTML = toolbar(st, all) + '<div id="vis-body"><div class="loading">loading…</div></div>';
  wire(el, st);
  if (st.graph === 'sankey') {
    if (st.dims.length < 2) {
      el.querySelector('#vis-body').innerHTML = '<div class="empty"><strong>A Sankey needs two dimensions.</strong><div>Add a second dimension (e.g. dstas after srcas): its edges go from the first to the second.</div></div>';
      return;
    }
    return drawSankey(el, st, s, ctx);
  }
  const range = (Date.parse(s.to === 'now' || !s.to ? new Date() : s.to) || Date.now()) - (Date.parse(s.from) || 0);
  const iv = intervalFor(/^-/.test(s.from) ? rangeOf(s.from) : range);
  const d = await seriesOf({ ...baseParams(s), interval: iv + 's', field: st.dims.join(','), limit: st.n,
    order: orderOf(TOTAL_OF[st.vunit]), bidirectional: st.bidir ? 1 : '', previous: st.prev }, s);
  if (!ctx.fresh()) return;
  const body = el.querySelector('#vis-body');
  if (!d.rows.length && !(d.reverse && d.reverse.rows.length)) { body.innerHTML = NO_FLOWS; return; }
  const ivs = d.query.interval_s;
  // the series as the API ranked them: by the total of the order's
  // counter over the range (a bucket's rows hold only the series present
  // in it), "other" last
  const order = (rows) => {
    const tot = new Map(), c = TOTAL_OF[st.vunit];
    for (const r of rows) tot.set(r.key, (tot.get(r.key) || 0) + r[c]);
    const k = [...tot.keys()].filter((x) => x !== 'other').sort((a, b) => tot.get(b) - tot.get(a) || (a < b ? -1 : 1));
    return tot.has('other') ? [...k, 'other'] : k;
  };
  const g = grid(d.rows, d.query.from, d.query.to, ivs, st.vunit, st.dims, order(d.rows));
  const rev = d.reverse ? grid(d.reverse.rows, d.query.from, d.query.to, ivs, st.vunit, d.reverse.keys, order(d.reverse.rows)) : null;
  const prevG = d.previous ? grid(d.previous.rows, d.query.from, d.query.to, ivs, st.vunit, [], ['total']) : null;
  const prev = prevG ? { ...prevG.series[0], name: `total ${st.prev === '1w' ? 'a week' : 'a day'} earlier` } : null;
  const title = `${esc(st.dims.join(', '))}: top ${st.n} + other by ${esc(VUNITS.find(([u]) => u === st.vunit)[1])}, ${ivs} s buckets` +
    (rev ? `; below the axis: the reverse (${esc(d.reverse.keys.join(', '))}, filter src/dst swapped)` : '');
  const graphHtml = st.graph === 'table' ? dataTable(g, st)
    : st.graph === 'multiples' ? '<div class="multiples" id="vis-multiples"></div>' : '<div class="chart tall" id="vis-chart"></div>';
  body.innerHTML = card(title, graphHtml, 'vis-graph') + card('Per series: over the buckets of the range', '<div id="vis-stats"></div>');
  // forward keys first, then the reverse's own keys not among them
  const color = colors([...g.series.map((x) => x.key), ...(rev ? rev.series.map((x) => x.key).filter((k) => !g.series.some((x) => x.key === k)) : [])]);
  const colorOf = (k) => color.get(k);
  if (st.graph === 'stacked' || st.graph === 'lines')
    chart(body.querySelector('#vis-chart'), timeOption(g, rev, prev, st, st.graph === 'stacked', color));
  else if (st.graph === 'multiples') drawMultiples(body.querySelector('#vis-multiples'), g, rev, prev, st);
  const rows = [
    ...g.series.map((x, i) => ({ name: x.name, key: x.key, color: colorOf(x.key), ...stats(x.values, x.total) })),
    ...(rev ? rev.series.map((x) => ({ name: '↺ ' + x.name, key: x.key, color: colorOf(x.key), ...stats(x.values, x.total) })) : []),
    ...(prev ? [{ name: prev.name, key: 'previous', color: PREV_STYLE.color, ...stats(prev.values, prev.total) }] : []),
  ];
  body.querySelector('#vis-stats').innerHTML = statsTable(rows, st);
}

// "-15m", "-1h", "-2d" as ms.
function rangeOf(rel) {
  const m = /^-(\d+)([smhdw])$/.exec(rel);
  if (!m) return 3600e3;
  return Number(m[1]) * { s: 1e3, m: 60e3, h: 3600e3, d: 86400e3, w: 7 * 86400e3 }[m[2]];
}
