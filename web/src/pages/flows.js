// Flows: a Sankey of source → destination for the chosen dimension, the
// top-N edges and the rest as "other".
import { api } from '../api.js';
import { baseParams, setState } from '../state.js';
import { card, chart, table, valueCols, NO_FLOWS } from '../ui.js';
import { orderOf, inUnit, metric } from '../format.js';

export const DIMS = {
  address: ['srcip', 'dstip'], as: ['srcas', 'dstas'], country: ['srccountry', 'dstcountry'],
  port: ['srcport', 'dstport'], exporter: ['exporter', 'dstip'], interface: ['inif', 'outif'],
};

export default async function flows(el, s, ctx) {
  const dim = DIMS[s.dim] ? s.dim : 'address';
  const n = Math.min(Math.max(parseInt(s.n, 10) || 10, 1), 50);
  const [src, dst] = DIMS[dim];
  const d = await api('pairs', { ...baseParams(s), src, dst, limit: n, order: orderOf(s.unit) });
  if (!ctx.fresh()) return;
  const secs = Math.max(1, (Date.parse(d.query.to) - Date.parse(d.query.from)) / 1000);
  const val = (r) => metric(r, { unit: s.unit, secs });
  const name = (v) => v === '' ? '(unknown)' : String(v);
  // Sources and destinations are distinct nodes even when one address is
  // both (a Sankey must be acyclic): destinations carry a leading arrow.
  const links = d.rows.filter((r) => val(r) > 0).map((r) => ({ source: name(r.source), target: '→ ' + name(r.target), value: val(r) }));
  const nodes = [...new Set(links.flatMap((l) => [l.source, l.target]))].map((x) => ({ name: x }));
  el.innerHTML = `
  <div class="toolbar">
    <label>Dimension <select id="dim">${Object.entries(DIMS).map(([k, v]) => `<option value="${k}" ${k === dim ? 'selected' : ''}>${k} (${v[0]} → ${v[1]})</option>`).join('')}</select></label>
    <label>Top edges <select id="n">${[5, 10, 20, 50].map((x) => `<option ${x === n ? 'selected' : ''}>${x}</option>`).join('')}</select></label>
  </div>
  ${links.length === 0 ? NO_FLOWS : card(`${src} → ${dst}, top ${n} by ${s.unit === 'bps' ? 'bits/s' : s.unit}${d.rows.some((r) => r.source === 'other') ? ', the rest as other' : ''}`, '<div class="chart sankey" id="sankey"></div>') +
    card('Edges', table(d.rows, [{ key: 'source', title: src, text: (r) => name(r.source) }, { key: 'target', title: dst, text: (r) => name(r.target) }, ...valueCols(s.unit, secs)], 'pairs-table'))}`;
  el.querySelector('#dim').addEventListener('change', (e) => setState({ dim: e.target.value }));
  el.querySelector('#n').addEventListener('change', (e) => setState({ n: e.target.value }));
  if (links.length)
    chart(el.querySelector('#sankey'), {
      tooltip: { trigger: 'item', valueFormatter: (v) => inUnit(v, { unit: s.unit }) },
      series: [{ type: 'sankey', data: nodes, links, emphasis: { focus: 'adjacency' }, nodeGap: 6,
        left: 8, right: 120, label: { formatter: (p) => p.name }, lineStyle: { color: 'gradient', opacity: 0.45 } }],
    });
}
