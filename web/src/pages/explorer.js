// Flow explorer: the flows matching the filter, a page at a time, and
// CSV / NDJSON downloads of the same query.  A range relative to "now"
// is resolved once (the summary's from/to): the page shown, the next
// page and the downloads are all of that one absolute range.
import { api, apiUrl } from '../api.js';
import { baseParams, setState } from '../state.js';
import { card, table, NO_FLOWS } from '../ui.js';
import { num, protoName, tcpFlags, timeText } from '../format.js';

const PAGE = 50;
const NUM = ['packets', 'bytes', 'src_port', 'dst_port'];
const COLS = [['flow_start', 'start'], ['exporter', 'exporter'], ['protocol', 'proto'], ['src_addr', 'src'], ['src_port', 'sport'],
  ['dst_addr', 'dst'], ['dst_port', 'dport'], ['packets', 'packets'], ['bytes', 'bytes'], ['tcp_flags', 'flags'],
  ['src_country', 'src cc'], ['dst_country', 'dst cc'], ['src_as', 'src AS'], ['dst_as', 'dst AS']];
const TEXT = { protocol: (r) => protoName(r.protocol), tcp_flags: (r) => tcpFlags(r.tcp_flags) };

export default async function explorer(el, s, ctx) {
  const offset = Math.max(0, parseInt(s.offset, 10) || 0);
  const sum = await api('summary', baseParams(s));
  if (!ctx.fresh()) return;
  // the range on screen, absolute
  const p = { ...baseParams(s), from: sum.from, to: sum.to };
  // resolve=1: host names of the addresses when the server has --ptr (docs/api.md)
  const d = await api('flows', { ...p, limit: PAGE, offset, resolve: 1 });
  if (!ctx.fresh()) return;
  const total = sum.flows;
  const named = (k) => (r) => (d.names && d.names[r[k]] ? `${r[k]} (${d.names[r[k]]})` : r[k]);
  const text = {
    ...TEXT, src_addr: named('src_addr'), dst_addr: named('dst_addr'),
    flow_start: (r) => timeText(r.flow_start, { tz: s.tz, ms: true }) || r.flow_start,
  };
  el.innerHTML = `
  <div class="toolbar">
    <span id="flow-count" title="${total}">${total.toLocaleString('en-US')} flows match</span>
    <a class="button" download href="${apiUrl('flows', { ...p, format: 'csv', limit: 10000 })}">CSV</a>
    <a class="button" download href="${apiUrl('flows', { ...p, format: 'ndjson', limit: 10000 })}">NDJSON</a>
    <span class="pager">
      <button id="prev" ${offset === 0 ? 'disabled' : ''}>‹ prev</button>
      <span id="page-info">${total ? offset + 1 : 0}–${offset + d.rows.length} of ${num(total)}</span>
      <button id="next" ${offset + PAGE >= total ? 'disabled' : ''}>next ›</button>
    </span>
  </div>
  ${d.rows.length === 0 ? NO_FLOWS : card('Flows', table(d.rows, COLS.map(([k, t]) => ({ key: k, title: t, num: NUM.includes(k), text: text[k] })), 'flow-table'))}
  <p class="muted">Downloads hold at most 10 000 flows; for more use <code>nagare query</code>.</p>`;
  // paging pins the range: page 2 is of the same flows as page 1
  const to = (o) => setState({ from: sum.from, to: sum.to, offset: o ? String(o) : '' });
  el.querySelector('#prev').addEventListener('click', () => to(Math.max(0, offset - PAGE)));
  el.querySelector('#next').addEventListener('click', () => to(offset + PAGE));
}
