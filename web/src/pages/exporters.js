// Exporters & interfaces: every exporter's counters and health, the
// interfaces with names and traffic in/out, sFlow counter samples.
import { api } from '../api.js';
import { baseParams } from '../state.js';
import { card, table, errorBox, listenText } from '../ui.js';
import { num, inUnit, traffic, esc, timeText } from '../format.js';
import { termFor } from '../filterterm.js';
import { rangeOf, wireClicks } from '../clicks.js';

export default async function exportersPage(el, s, ctx) {
  const p = baseParams(s);
  let x = null, xerr = null;
  try { x = await api('exporters'); } catch (e) { xerr = e; }
  const [inif, outif, ctr] = await Promise.all([
    api('top', { ...p, field: 'exporter,inif,inifname,inifdesc,inifspeed', limit: 50, order: 'bytes' }),
    api('top', { ...p, field: 'exporter,outif,outifname,outifdesc,outifspeed', limit: 50, order: 'bytes' }),
    api('counters', { ...p, limit: 1000 }).catch(() => null),
  ]);
  if (!ctx.fresh()) return;
  const secs = Math.max(1, (Date.parse(inif.query.to) - Date.parse(inif.query.from)) / 1000);
  const up = x && x.started_ms ? Math.max(1, ((x.updated_ms || Date.now()) - x.started_ms) / 1000) : 0;
  // in and out per (exporter, ifindex)
  const ifs = new Map();
  const add = (d, dir) => {
    const [e, i, n, de, sp] = d.query.keys;
    for (const r of d.rows) {
      const k = r[e] + '/' + r[i];
      const o = ifs.get(k) || { exporter: r[e], ifindex: r[i], name: '', desc: '', speed: 0, in: 0, out: 0 };
      o.name = o.name || r[n];
      o.desc = o.desc || r[de];
      o.speed = o.speed || r[sp];
      o[dir] += r.bytes;
      ifs.set(k, o);
    }
  };
  add(inif, 'in');
  add(outif, 'out');
  const bytesOrBits = (v) => traffic({ bytes: v }, { unit: s.unit === 'bps' ? 'bps' : 'bytes', secs });
  const last = new Map();
  if (ctr) for (const c of ctr.samples) last.set(c.agent + '/' + c.if_index, c);
  el.innerHTML = `
  ${xerr ? errorBox(xerr) : x.source === 'clickhouse' ? card('Exporters', clickhouseExporters(x, s, inif)) : card('Exporters', `<p class="muted">${x.live ? 'live counters of this collector' : 'counters from the collector\'s last run, written ' + esc(timeText(x.updated_ms || x.updated, { tz: s.tz }) || x.updated)} · datagrams ${num(x.listener.datagrams)} · socket drops <b class="${x.listener.drops ? 'warn' : ''}">${num(x.listener.drops)}</b> · stored rows ${num(x.store.rows)}</p>` +
    (x.exporters.length === 0 ? '<div class="empty">No exporter has sent anything yet: point one at ${listenText(x)}.</div>' :
      table(x.exporters, [
        { key: 'exporter', title: 'exporter' }, { key: 'protocol', title: 'protocol' }, { key: 'domain', title: 'domain', num: true },
        { key: 'packets', title: 'datagrams/s', num: true, text: (r) => up ? num(r.packets / up) : '–' },
        { key: 'records', title: 'records', num: true, text: (r) => num(r.records) },
        { key: 'lost', title: 'seq. loss', num: true, text: (r) => num(r.lost) },
        { key: 'templates', title: 'templates', num: true, text: (r) => num(r.templates) },
        { key: 'template_misses', title: 'template misses', num: true, text: (r) => num(r.template_misses) },
        { key: 'restarts', title: 'restarts', num: true, html: (r) => r.restarts ? `<span title="exporter restarts seen: data of the templates announced before was held until announced again" class="warn">${num(r.restarts)}</span>` : '0' },
        { key: 'sampling_rate', title: 'sampling', num: true, text: (r) => `1:${r.sampling_rate || 1} (${r.sampling_source})` },
        { key: 'notes', title: 'values / quirks', html: notesCell },
        { key: 'errors_total', title: 'decode errors', num: true, html: (r) => r.errors_total ? `<span title="${esc(JSON.stringify(r.errors))}" class="warn">${num(r.errors_total)}</span>` : '0' },
        { key: 'last_seen', title: 'last seen', text: (r) => timeText(r.last_seen_ms || r.last_seen, { tz: s.tz }) || r.last_seen },
        { key: 'health', title: 'health', html: (r) => healthBadge(r.health) },
      ], 'exporters-table', { term: (r) => termFor('exporter', r.exporter), range: rangeOf(inif, s) })))}
  ${card('Interfaces', ifs.size === 0 ? '<div class="empty">No interface traffic in this range.</div>' : table([...ifs.values()].sort((a, b) => b.in + b.out - a.in - a.out), [
    { key: 'exporter', title: 'exporter' }, { key: 'ifindex', title: 'ifIndex', num: true }, { key: 'name', title: 'name' },
    { key: 'desc', title: 'description' },
    { key: 'speed', title: 'speed', num: true, text: (r) => r.speed ? inUnit(r.speed, { unit: 'bps' }) : '–' },
    { key: 'in', title: 'in', num: true, text: (r) => bytesOrBits(r.in) },
    { key: 'out', title: 'out', num: true, text: (r) => bytesOrBits(r.out) },
  ], 'if-table', { term: (r) => [termFor('exporter', r.exporter), termFor('if', r.ifindex)].filter((t) => t).join(' and ') || null, range: rangeOf(inif, s) }))}
  ${x && x.snmp && x.snmp.length ? card('SNMP interface polling', snmpTable(x.snmp, s) +
    (x.snmp_exporters_dropped ? `<p class="warn">${num(x.snmp_exporters_dropped)} interfaces of exporters past enrich.snmp.max_exporters were not polled</p>` : '')) : ''}
  ${last.size ? card('sFlow interface counters (latest sample)', table([...last.values()], [
    { key: 'agent', title: 'agent' }, { key: 'if_index', title: 'ifIndex', num: true },
    { key: 'if_speed', title: 'speed', num: true, text: (r) => inUnit(r.if_speed, { unit: 'bps' }) },
    { key: 'in_octets', title: 'in octets', num: true, text: (r) => num(r.in_octets) },
    { key: 'out_octets', title: 'out octets', num: true, text: (r) => num(r.out_octets) },
    { key: 'in_errors', title: 'in errors', num: true }, { key: 'out_errors', title: 'out errors', num: true },
    { key: 'in_discards', title: 'in discards', num: true }, { key: 'out_discards', title: 'out discards', num: true },
    { key: 'time', title: 'time', text: (r) => timeText(r.time, { tz: s.tz }) || r.time },
  ], 'counters-table')) : ''}`;
  wireClicks(el, s);
}

// The exporters of `nagare serve --clickhouse` (API exporters'
// "source": "clickhouse", docs/clickhouse.md "Dashboards"): what
// ClickHouse's tables hold (flows stored, last seen, interface names);
// the collectors' own counters (datagrams, templates, loss, errors) are
// null there and not shown.
function clickhouseExporters(x, s, inif) {
  const head = '<p class="muted">exporters in ClickHouse: records are the flows stored; each collector\'s own counters (datagrams, templates, loss, errors) are in its dashboards and <code>nagare status</code></p>';
  if (x.exporters.length === 0) return head + '<div class="empty">ClickHouse holds no flows yet.</div>';
  return head + table(x.exporters, [
    { key: 'exporter', title: 'exporter' }, { key: 'exporter_name', title: 'name' },
    { key: 'protocol', title: 'protocol' }, { key: 'domain', title: 'domain', num: true },
    { key: 'records', title: 'records', num: true, text: (r) => num(r.records) },
    { key: 'flow_bytes', title: 'bytes', num: true, text: (r) => inUnit(r.flow_bytes, { unit: 'bytes' }) },
    { key: 'sampling_rate', title: 'sampling', num: true, text: (r) => `1:${r.sampling_rate || 1} (${r.sampling_source})` },
    { key: 'interfaces', title: 'interfaces named', num: true, text: (r) => `${num(r.interfaces.filter((i) => i.name).length)} of ${num(r.interfaces.length)}` },
    { key: 'last_seen', title: 'last seen', text: (r) => r.last_seen_ms ? timeText(r.last_seen_ms, { tz: s.tz }) : '–' },
    { key: 'health', title: 'health', html: (r) => healthBadge(r.health) },
  ], 'exporters-table', { term: (r) => termFor('exporter', r.exporter), range: rangeOf(inif, s) });
}

// The SNMP poller's agents (API exporters' "snmp", docs/api.md): polls,
// failures and timeouts, and the last error in full where it failed.
export function snmpTable(rows, s) {
  return table(rows, [
    { key: 'exporter', title: 'exporter' }, { key: 'agent', title: 'agent' }, { key: 'version', title: 'version' },
    { key: 'interfaces_named', title: 'interfaces named', num: true, text: (r) => `${num(r.interfaces_named)} of ${num(r.interfaces)}` },
    { key: 'polls', title: 'requests', num: true, text: (r) => num(r.polls) },
    { key: 'failures', title: 'failures', num: true, html: (r) => r.failures ? `<span class="warn">${num(r.failures)}</span>` : '0' },
    { key: 'timeouts', title: 'timeouts', num: true, html: (r) => r.timeouts ? `<span class="warn">${num(r.timeouts)}</span>` : '0' },
    { key: 'last_ok_ms', title: 'last reply', text: (r) => r.last_ok_ms ? timeText(r.last_ok_ms, { tz: s.tz }) : '–' },
    { key: 'state', title: 'state', html: (r) => `<span class="badge ${r.state === 'ok' ? 'ok' : r.state === 'failing' ? 'degraded' : 'silent'}">${esc(r.state)}</span>` +
      (r.state === 'failing' ? ` <span class="snmp-error warn">${esc(r.last_error)}</span>` : '') },
  ], 'snmp-table');
}

// Per-exporter counters of implausible values (flagged in the records,
// docs/fields.md) and of vendor ways handled (docs/exporters.md): the
// API's counter names, shown when not 0.
const NOTE_COUNTERS = [
  ['sampling_fixed', 'warn'], ['sampling_rejected', 'warn'], ['time_after_export', 'warn'],
  ['time_before_boot', 'warn'], ['bytes_below_headers', 'warn'], ['packets_zero', 'warn'],
  ['packets_concatenated', ''], ['sampler_other_domain', ''], ['sampler_unmatched', 'warn'],
  ['lists_skipped', ''], ['apps_unnamed', ''],
];

// The non-zero NOTE_COUNTERS of exporter row r as HTML ("–" when none).
export function notesCell(r) {
  const parts = NOTE_COUNTERS.filter(([k]) => r[k]).map(([k, cls]) =>
    `<span class="${cls}" title="${esc(k)}">${esc(k.replace(/_/g, ' '))} ${num(r[k])}</span>`);
  return parts.length ? parts.join('<br>') : '–';
}

// The health of an exporter as a coloured badge (ok, degraded, silent).
export function healthBadge(h) {
  return `<span class="badge ${esc(h)}">${esc(h)}</span>`;
}
