// Flow explorer: the flows matching the filter, a page at a time, and
// CSV / NDJSON downloads of the same query.
import { api, apiUrl } from '../api.js';
import { baseParams, setState } from '../state.js';
import { card, table, NO_FLOWS } from '../ui.js';
import { human } from '../format.js';

const PAGE = 50;
const COLS = [['flow_start', 'start'], ['exporter', 'exporter'], ['protocol', 'proto'], ['src_addr', 'src'], ['src_port', 'sport'],
  ['dst_addr', 'dst'], ['dst_port', 'dport'], ['packets', 'packets'], ['bytes', 'bytes'], ['tcp_flags', 'flags'],
  ['src_country', 'src cc'], ['dst_country', 'dst cc'], ['src_as', 'src AS'], ['dst_as', 'dst AS']];

export default async function explorer(el, s, ctx) {
  const offset = Math.max(0, parseInt(s.offset, 10) || 0);
  const p = baseParams(s);
  const [d, sum] = await Promise.all([api('flows', { ...p, limit: PAGE, offset }), api('summary', p)]);
  if (!ctx.fresh()) return;
  const total = sum.flows;
  el.innerHTML = `
  <div class="toolbar">
    <span id="flow-count">${human(total)} flows match</span>
    <a class="button" download href="${apiUrl('flows', { ...p, format: 'csv', limit: 10000 })}">CSV</a>
    <a class="button" download href="${apiUrl('flows', { ...p, format: 'ndjson', limit: 10000 })}">NDJSON</a>
    <span class="pager">
      <button id="prev" ${offset === 0 ? 'disabled' : ''}>‹ prev</button>
      <span id="page-info">${total ? offset + 1 : 0}–${offset + d.rows.length} of ${human(total)}</span>
      <button id="next" ${offset + PAGE >= total ? 'disabled' : ''}>next ›</button>
    </span>
  </div>
  ${d.rows.length === 0 ? NO_FLOWS : card('Flows', table(d.rows, COLS.map(([k, t]) => ({ key: k, title: t, num: ['packets', 'bytes', 'src_port', 'dst_port'].includes(k) })), 'flow-table'))}
  <p class="muted">Downloads hold at most 10 000 flows; for more use <code>nagare query</code>.</p>`;
  el.querySelector('#prev').addEventListener('click', () => setState({ offset: String(Math.max(0, offset - PAGE)) }));
  el.querySelector('#next').addEventListener('click', () => setState({ offset: String(offset + PAGE) }));
}
