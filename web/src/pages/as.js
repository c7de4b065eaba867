// AS traffic: top source and destination ASes with their names, and
// traffic over time per AS.
import { api } from '../api.js';
import { baseParams, intervalFor, setState } from '../state.js';
import { card, chart, seriesOption, seriesKeys, table, valueCols, NO_FLOWS } from '../ui.js';
import { orderOf } from '../format.js';
import { rowTerm, termFor } from '../filterterm.js';
import { addTerm, rangeOf, wireClicks } from '../clicks.js';

export default async function asPage(el, s, ctx) {
  const side = s.side === 'dst' ? 'dst' : 'src';
  const p = { ...baseParams(s), order: orderOf(s.unit) };
  const [src, dst] = await Promise.all([
    api('top', { ...p, field: 'srcas,srcasname', limit: 10 }),
    api('top', { ...p, field: 'dstas,dstasname', limit: 10 }),
  ]);
  if (!ctx.fresh()) return;
  const secs = Math.max(1, (Date.parse(src.query.to) - Date.parse(src.query.from)) / 1000);
  const iv = intervalFor(secs * 1000);
  const tbl = (d) => {
    const [k, n] = d.query.keys;
    return d.rows.length ? table(d.rows.map((r) => ({ ...r, as: r[k], name: r[n] || (Number(r[k]) === 0 ? '(none: private or unknown)' : '') })),
      [{ key: 'as', title: 'AS' }, { key: 'name', title: 'name' }, ...valueCols(s.unit, secs)], 'as-table', { term: (r) => rowTerm([k], r), range: rangeOf(d, s) }) : NO_FLOWS;
  };
  el.innerHTML = `
  <div class="grid2">${card('Top source ASes', tbl(src))}${card('Top destination ASes', tbl(dst))}</div>
  <div class="toolbar"><label>Over time by <select id="side"><option value="src" ${side === 'src' ? 'selected' : ''}>source AS</option><option value="dst" ${side === 'dst' ? 'selected' : ''}>destination AS</option></select></label></div>
  ${card(`Traffic over time per ${side === 'src' ? 'source' : 'destination'} AS`, '<div class="chart" id="as-series"></div>')}`;
  wireClicks(el, s);
  el.querySelector('#side').addEventListener('change', (e) => setState({ side: e.target.value }));
  const d = await api('series', { ...p, interval: iv + 's', field: side + 'as', limit: 6 });
  if (!ctx.fresh()) return;
  chart(el.querySelector('#as-series'), seriesOption(d, s.unit)).on('click', (q) => addTerm(s, termFor(side + 'as', seriesKeys(d)[q.seriesIndex])));
}
