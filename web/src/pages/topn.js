// Top-N: sources, destinations, ports, protocols, conversations,
// interfaces: a bar chart and a table, by bytes, packets or flows.
import { api } from '../api.js';
import { baseParams, setState } from '../state.js';
import { card, chart, barOption, table, valueCols, NO_FLOWS } from '../ui.js';
import { orderOf, esc, protoName } from '../format.js';
import { rowTerm } from '../filterterm.js';
import { addTerm, rangeOf, wireClicks } from '../clicks.js';

export const FIELDS = [
  ['srcip', 'sources'], ['dstip', 'destinations'], ['srcport', 'source ports'],
  ['dstport', 'destination ports'], ['proto', 'protocols'], ['conv', 'conversations'],
  ['inif', 'input interfaces'], ['outif', 'output interfaces'], ['srcas', 'source ASes'],
  ['dstas', 'destination ASes'], ['service', 'services'], ['exporter', 'exporters'],
  // classification (docs/configuration.md): either interface, or one side
  ['provider', 'providers'], ['inifprovider', 'input providers'],
  ['outifprovider', 'output providers'], ['connectivity', 'connectivity'],
];

export default async function topn(el, s, ctx) {
  const field = s.field && FIELDS.some(([f]) => f === s.field) ? s.field : 'srcip';
  const n = Math.min(Math.max(parseInt(s.n, 10) || 10, 1), 100);
  // resolve=1: host names of the addresses when the server has --ptr (docs/api.md)
  const d = await api('top', { ...baseParams(s), field, limit: n, order: orderOf(s.unit), resolve: 1 });
  if (!ctx.fresh()) return;
  const secs = Math.max(1, (Date.parse(d.query.to) - Date.parse(d.query.from)) / 1000);
  const keys = d.query.keys;
  const named = (v) => (d.names && d.names[v] ? `${v} (${d.names[v]})` : v);
  const label = (r) => keys.map((k) => r[k] === '' ? '(unknown)' : k === 'proto' ? protoName(r[k]) : named(r[k])).join(' ↔ ');
  el.innerHTML = `
  <div class="toolbar">
    <label>Top <select id="n">${[5, 10, 20, 50, 100].map((x) => `<option ${x === n ? 'selected' : ''}>${x}</option>`).join('')}</select></label>
    <span class="tabs">${FIELDS.map(([f, t]) => `<button class="tab ${f === field ? 'active' : ''}" data-field="${f}">${t}</button>`).join('')}</span>
  </div>
  ${d.rows.length === 0 ? NO_FLOWS : `
  ${card(`Top ${n} ${esc(FIELDS.find(([f]) => f === field)[1])} by ${esc(s.unit === 'bps' ? 'bits/s' : s.unit)}`, '<div class="chart tall" id="bars"></div>')}
  ${card('Table', table(d.rows.map((r) => ({ ...r, label: label(r) })), [{ key: 'label', title: keys.join(' ↔ ') }, ...valueCols(s.unit, secs)], 'top-table', { term: (r) => rowTerm(keys, r), range: rangeOf(d, s) }))}`}`;
  wireClicks(el, s);
  el.querySelectorAll('.tab').forEach((b) => b.addEventListener('click', () => setState({ field: b.dataset.field })));
  el.querySelector('#n').addEventListener('change', (e) => setState({ n: e.target.value }));
  if (d.rows.length)
    chart(el.querySelector('#bars'), barOption(d.rows, label, s.unit, secs))
      .on('click', (p) => addTerm(s, rowTerm(keys, d.rows[p.dataIndex])));
}
