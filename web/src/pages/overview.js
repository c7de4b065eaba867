// Overview: totals and rates, traffic over time by protocol and service,
// top 5 sources, destinations, countries, ASes, exporter health.
import { api } from '../api.js';
import { baseParams, intervalFor } from '../state.js';
import { card, chart, seriesOption, seriesKeys, table, NO_FLOWS, errorBox, listenText } from '../ui.js';
import { num, inUnit, traffic, orderOf, esc, protoName, timeText, zoneName } from '../format.js';
import { healthBadge } from './exporters.js';
import { rowTerm, termFor } from '../filterterm.js';
import { addTerm, rangeOf, wireClicks } from '../clicks.js';

const TOPS = [
  ['Top sources', 'srcip'], ['Top destinations', 'dstip'],
  ['Top source countries', 'srccountry'], ['Top source ASes', 'srcas,srcasname'],
];

export default async function overview(el, s, ctx) {
  const p = baseParams(s);
  const sum = await api('summary', p);
  if (!ctx.fresh()) return;
  const secs = (sum.to_ms - sum.from_ms) / 1000;
  const iv = intervalFor(sum.to_ms - sum.from_ms);
  el.innerHTML = `
  <div class="kpis">
    <div class="kpi"><span>bytes</span><b id="total-bytes" data-value="${sum.bytes}">${inUnit(sum.bytes, { unit: 'bytes' })}</b><small>${inUnit(sum.bps, { unit: 'bps' })}</small></div>
    <div class="kpi"><span>packets</span><b id="total-packets" data-value="${sum.packets}">${num(sum.packets)}</b><small>${num(sum.pps)} pkts/s</small></div>
    <div class="kpi"><span>flows</span><b id="total-flows" data-value="${sum.flows}">${num(sum.flows)}</b><small>${num(sum.fps)} flows/s</small></div>
    <div class="kpi"><span>range</span><b class="small" id="range-from">${esc(timeText(sum.from_ms, { tz: s.tz }))}</b><small>to <span id="range-to">${esc(timeText(sum.to_ms, { tz: s.tz }))}</span> ${esc(zoneName({ tz: s.tz }))}</small></div>
  </div>
  ${sum.flows === 0 ? NO_FLOWS : ''}
  <div class="grid2">
    ${card('Traffic by protocol', '<div class="chart" id="by-proto"></div>')}
    ${card('Traffic by service', '<div class="chart" id="by-service"></div>')}
  </div>
  <div class="grid4">${TOPS.map(([t, f]) => card(t, '<div class="top5" data-field="' + f + '">…</div>')).join('')}</div>
  ${card('Exporter health', '<div id="health">…</div>')}`;
  wireClicks(el, s);
  const unit = s.unit;
  const seriesClick = (field, d) => (q) => addTerm(s, termFor(field, seriesKeys(d)[q.seriesIndex]));
  const jobs = [
    api('series', { ...p, interval: iv + 's', field: 'proto', limit: 5, order: orderOf(unit) })
      .then((d) => chart(el.querySelector('#by-proto'), seriesOption(d, unit, { label: protoName })).on('click', seriesClick('proto', d))),
    api('series', { ...p, interval: iv + 's', field: 'service', limit: 6, order: orderOf(unit) })
      .then((d) => chart(el.querySelector('#by-service'), seriesOption(d, unit)).on('click', seriesClick('service', d))),
    ...TOPS.map(([, f]) => api('top', { ...p, field: f, limit: 5, order: orderOf(unit), resolve: 1 }).then((d) => {
      const keys = d.query.keys;
      el.querySelector(`.top5[data-field="${f}"]`).innerHTML = d.rows.length ? table(d.rows, [
        { key: keys[0], title: keys[0], text: (r) => topLabel(r, keys, d.names) },
        { key: 'bytes', title: unit === 'bps' ? 'bits/s' : unit, num: true, text: (r) => traffic(r, { unit, secs }) },
      ], 'compact', { term: (r) => rowTerm(keys, r), range: rangeOf(d, s) }) : '<div class="muted">none</div>';
    })),
    api('exporters').then((x) => {
      const n = x.exporters.length, bad = x.exporters.filter((e) => e.health !== 'ok');
      el.querySelector('#health').innerHTML = n === 0
        ? `<div class="empty">No exporter has sent anything yet: point one at ${listenText(x)}.</div>`
        : `<p><b>${n}</b> exporter(s), <b class="${bad.length ? 'warn' : 'ok'}">${n - bad.length} ok</b>${bad.length ? `, ${bad.length} need a look (<a href="/exporters" data-path="/exporters">details</a>)` : ''};
           datagrams ${num(x.listener.datagrams)}, socket drops ${num(x.listener.drops)}, ${x.live ? 'live' : 'from the last run (' + esc(timeText(x.updated_ms || x.updated, { tz: s.tz }) || x.updated) + ')'}.</p>` +
          table(x.exporters, [
            { key: 'exporter', title: 'exporter' }, { key: 'protocol', title: 'protocol' },
            { key: 'records', title: 'records', num: true, text: (r) => num(r.records) },
            { key: 'lost', title: 'lost', num: true, text: (r) => num(r.lost) },
            { key: 'health', title: 'health', html: (r) => healthBadge(r.health) },
          ], 'compact', { term: (r) => termFor('exporter', r.exporter), range: { from: sum.from, to: sum.to, filter: s.filter } });
    }).catch((e) => { el.querySelector('#health').innerHTML = errorBox(e); }),
  ];
  await Promise.all(jobs);
}

// A top row's label: the key and its name (AS 15169 GOOGLE, or an
// address's host name from the API's "names"), "(unknown)" for none, AS 0
// as private/unknown.
function topLabel(r, keys, names) {
  const v = r[keys[0]];
  if (keys[1] && r[keys[1]]) return `${v} ${r[keys[1]]}`;
  if (names && names[v]) return `${v} (${names[v]})`; // host name (resolve=1)
  if (v === '') return '(unknown)';
  return keys[0] === 'srcas' && Number(v) === 0 ? '0 (private/unknown)' : String(v);
}
