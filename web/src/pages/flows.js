// Flows: a Sankey of two or three stages (e.g. source AS → exporter →
// destination AS), the top N values of each stage and the rest of each
// as "other" (hidden unless asked for), in one API call
// (/api/v1/pairs?fields=...); a click on a node or an edge adds it to the
// filter, the links table opens the Flow explorer on an edge's flows.
import { api } from '../api.js';
import { baseParams, setState } from '../state.js';
import { card, chart, table, valueCols, NO_FLOWS } from '../ui.js';
import { orderOf, inUnit, metric, esc, protoName } from '../format.js';
import { termFor } from '../filterterm.js';
import { addTerm, rangeOf, wireClicks } from '../clicks.js';
import { cssVar } from '../theme.js';

// The fields a stage can be, with their titles.
export const STAGE_FIELDS = [
  ['srcas', 'source AS'], ['dstas', 'destination AS'], ['exporter', 'exporter'],
  ['inif', 'input interface'], ['outif', 'output interface'], ['srccountry', 'source country'],
  ['dstcountry', 'destination country'], ['service', 'service'], ['proto', 'protocol'],
  ['srcport', 'source port'], ['dstport', 'destination port'], ['srcip', 'source address'],
  ['dstip', 'destination address'],
];
export const PRESETS = [
  ['srcas,exporter,dstas', 'source AS → exporter → destination AS'],
  ['srcas,inif,dstas', 'source AS → input interface → destination AS'],
  ['srccountry,service', 'source country → service'],
  ['srccountry,exporter,dstcountry', 'source country → exporter → destination country'],
  ['srcip,dstip', 'source address → destination address'],
  ['proto,dstport', 'protocol → destination port'],
];
// the dimensions of the two-stage page before stages= (old links)
const DIMS = {
  address: 'srcip,dstip', as: 'srcas,dstas', country: 'srccountry,dstcountry',
  port: 'srcport,dstport', exporter: 'exporter,dstip', interface: 'inif,outif',
};
const TITLE = Object.fromEntries(STAGE_FIELDS);

// The stages of state s: 2 or 3 known fields.
export function stagesOf(s) {
  const want = (s.stages || DIMS[s.dim] || PRESETS[0][0]).split(',').filter((f) => TITLE[f]);
  return want.length >= 2 && want.length <= 3 ? want : PRESETS[0][0].split(',');
}

// How a value of a field reads on the page.
function display(field, key, other) {
  if (other) return 'other';
  if (key === '' || key === null || key === undefined) return '(unknown)';
  if (field === 'proto') return protoName(key);
  if (field === 'srcas' || field === 'dstas') return Number(key) === 0 ? 'AS 0 (private/unknown)' : 'AS ' + key;
  if (field === 'inif' || field === 'outif') return (field === 'inif' ? 'in ' : 'out ') + key;
  return String(key);
}

export default async function flows(el, s, ctx) {
  const stages = stagesOf(s);
  const n = Math.min(Math.max(parseInt(s.n, 10) || 10, 1), 50);
  const showOther = s.other === '1';
  const d = await api('pairs', { ...baseParams(s), fields: stages.join(','), limit: n, order: orderOf(s.unit) });
  if (!ctx.fresh()) return;
  const secs = Math.max(1, (Date.parse(d.query.to) - Date.parse(d.query.from)) / 1000);
  const val = (r) => metric(r, { unit: s.unit, secs });
  const id = (j, key, other) => `${j}|${other ? '\u0000other' : key}`;
  const nodeInfo = new Map(); // id → {stage, key, other, text}
  d.stages.forEach((st, j) => st.nodes.forEach((nd) =>
    nodeInfo.set(id(j, nd.key, nd.other), { stage: j, key: nd.key, other: nd.other, text: display(stages[j], nd.key, nd.other), row: nd })));
  const shown = d.rows.filter((r) => val(r) > 0 && (showOther || (!r.source_other && !r.target_other)));
  const links = shown.map((r) => ({ source: id(r.stage, r.source, r.source_other), target: id(r.stage + 1, r.target, r.target_other), value: val(r), row: r }));
  const used = new Set(links.flatMap((l) => [l.source, l.target]));
  const nodes = [...nodeInfo.entries()].filter(([k]) => used.has(k)).map(([k, v]) => ({ name: k, depth: v.stage }));
  // the share of the traffic in "other" nodes, said in the title
  const total = d.stages[0].nodes.reduce((a, x) => a + val(x), 0);
  const otherShare = Math.max(0, ...d.stages.map((st) => st.nodes.filter((x) => x.other).reduce((a, x) => a + val(x), 0))) / (total || 1);
  const linkTerm = (r) => [r.source_other ? null : termFor(stages[r.stage], r.source), r.target_other ? null : termFor(stages[r.stage + 1], r.target)].filter((t) => t).join(' and ') || null;
  const opt = (v, t, sel) => `<option value="${esc(v)}" ${sel ? 'selected' : ''}>${esc(t)}</option>`;
  const stageSel = (j) => `<label>${j + 1}. <select id="stage${j}" class="stage">${j === 2 ? opt('', '(none)', stages.length === 2) : ''}${STAGE_FIELDS.map(([f, t]) => opt(f, t, stages[j] === f)).join('')}</select></label>`;
  const unitText = s.unit === 'bps' ? 'bits/s' : s.unit;
  el.innerHTML = `
  <div class="toolbar">
    <label>Stages <select id="stages-preset">${PRESETS.map(([v, t]) => opt(v, t, v === stages.join(','))).join('')}${PRESETS.some(([v]) => v === stages.join(',')) ? '' : opt('', 'custom', true)}</select></label>
    ${[0, 1, 2].map(stageSel).join('')}
    <label>Top per stage <select id="n">${[5, 10, 20, 50].map((x) => `<option ${x === n ? 'selected' : ''}>${x}</option>`).join('')}</select></label>
    <label class="check"><input type="checkbox" id="other" ${showOther ? 'checked' : ''}> show "other"</label>
  </div>
  ${links.length === 0 ? (d.rows.length ? '<div class="empty">Every flow is in "other": tick <b>show "other"</b>, or choose stages with fewer values.</div>' : NO_FLOWS)
    : card(`${stages.map((f) => TITLE[f]).join(' → ')}: top ${n} a stage by ${unitText}${showOther ? ', the rest as other' : otherShare > 0.005 ? `; other (${(otherShare * 100).toFixed(0)} % of ${unitText}) hidden` : ''}`,
      '<div class="chart sankey" id="sankey"></div><p class="muted">Click a node or an edge to filter on it; hover for the full name.</p>') +
    card(`Top ${n} edges of each stage`, table(shown.filter((r, i) => shown.findIndex((x) => x.stage === r.stage) + n > i), [
      { key: 'stage', title: 'stage', text: (r) => `${TITLE[stages[r.stage]]} → ${TITLE[stages[r.stage + 1]]}` },
      { key: 'source', title: 'from', text: (r) => display(stages[r.stage], r.source, r.source_other) },
      { key: 'target', title: 'to', text: (r) => display(stages[r.stage + 1], r.target, r.target_other) },
      ...valueCols(s.unit, secs)], 'pairs-table', { term: linkTerm, range: rangeOf(d, s) }))}`;
  wireClicks(el, s);
  el.querySelector('#stages-preset').addEventListener('change', (e) => e.target.value && setState({ stages: e.target.value, dim: '' }));
  el.querySelectorAll('.stage').forEach((x) => x.addEventListener('change', () => {
    const v = [0, 1, 2].map((j) => el.querySelector('#stage' + j).value).filter((f) => f);
    setState({ stages: v.join(','), dim: '' });
  }));
  el.querySelector('#n').addEventListener('change', (e) => setState({ n: e.target.value }));
  el.querySelector('#other').addEventListener('change', (e) => setState({ other: e.target.checked ? '1' : '' }));
  if (!links.length) return;
  const box = el.querySelector('#sankey');
  const option = sankeyOption(box.clientWidth, stages.length, nodes, links, nodeInfo, s.unit);
  const c = chart(box, option, { renderer: 'svg' });
  thinLabels(c, option);
  c.on('click', (p) => {
    if (p.dataType === 'node') {
      const v = nodeInfo.get(p.data.name);
      if (v && !v.other) addTerm(s, termFor(stages[v.stage], v.key));
    } else if (p.dataType === 'edge') addTerm(s, linkTerm(p.data.row));
  });
}

// Hides the labels that would overlap in a column: after the layout
// (setOption lays out at once), biggest nodes first, a label is kept when
// no kept label of its column is within a line's height; the others'
// names stay in the tooltip.
const LINE = 15; // px: a 12 px label's line
function thinLabels(c, option) {
  const data = c.getModel().getSeriesByIndex(0).getData();
  const all = [];
  for (let i = 0; i < data.count(); i++) {
    const l = data.getItemLayout(i);
    if (l) all.push({ name: data.getName(i), x: Math.round(l.x), mid: l.y + l.dy / 2, dy: l.dy });
  }
  all.sort((a, b) => b.dy - a.dy);
  const kept = [], hide = new Set();
  for (const n of all) {
    if (kept.some((k) => k.x === n.x && Math.abs(k.mid - n.mid) < LINE)) hide.add(n.name);
    else kept.push(n);
  }
  if (!hide.size) return;
  const sr = option.series[0];
  sr.data = sr.data.map((d) => (hide.has(d.name) ? { ...d, label: { ...d.label, show: false } } : d));
  c.setOption({ series: [{ data: sr.data }] });
}

// The Sankey's option: columns at fixed depths; a label is cut to the
// room beside its node (the first column's to the right, the last's to
// the left, a middle one's to the right, half the gap: no two columns'
// labels meet),
// the full text always in the tooltip (thinLabels hides the labels that
// would overlap in a column).
function sankeyOption(width, nstages, nodes, links, info, unit) {
  const nodeWidth = 14, side = 8;
  const gap = (width - 2 * side - nodeWidth) / (nstages - 1) - nodeWidth;
  const room = Math.max(40, Math.floor(nstages === 3 ? gap / 2 - 10 : gap / 2 - 10));
  const first = Math.max(40, Math.floor(nstages === 3 ? gap - 16 : room));
  const text = (name) => (info.get(name) || {}).text || name;
  return {
    tooltip: {
      trigger: 'item', confine: true,
      formatter: (p) => p.dataType === 'edge'
        ? `${esc(text(p.data.source))} → ${esc(text(p.data.target))}<br><b>${esc(inUnit(p.data.value, { unit }))}</b>`
        : `${esc(text(p.name))}<br><b>${esc(inUnit(p.value, { unit }))}</b>`,
    },
    series: [{
      type: 'sankey', data: nodes.map((x) => ({
        ...x, label: {
          position: x.depth === nstages - 1 ? 'left' : 'right',
          width: x.depth === 0 ? first : room, overflow: 'truncate', ellipsis: '…',
        },
      })), links, emphasis: { focus: 'adjacency' }, nodeGap: 8, nodeWidth, nodeAlign: 'justify',
      left: side, right: side, top: 8, bottom: 8, layoutIterations: 32, draggable: false,
      label: { formatter: (p) => text(p.name), fontSize: 12, textBorderColor: cssVar('--card') || '#fff', textBorderWidth: 2 },
      lineStyle: { color: 'gradient', opacity: 0.45 },
    }],
  };
}
