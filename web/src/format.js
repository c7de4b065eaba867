// Numbers for people: 1.23 k, 4.5 M; bytes as kB/MB (SI); rates per second.
//
// One formatting API: every formatter takes the value first and, at most,
// one options object ({digits}, {unit}, {unit, secs}).  A second argument
// of any other kind (the index .map passes, the row a table passes) has no
// option in it and changes nothing, so a formatter handed to a callback
// cannot be given a precision by accident (issue 20: a row as
// toPrecision's argument was an error box).  Tables call them explicitly
// (ui.js table(): a column's text(row)).
const SI = ['', 'k', 'M', 'G', 'T', 'P', 'E'];

// The significant digits of options `o` (1..21, default 3).
function digitsOf(o) {
  const d = o && typeof o === 'object' ? o.digits : undefined;
  return Number.isInteger(d) && d >= 1 && d <= 21 ? d : 3;
}

// v with an SI prefix: 999, 1.23 k, 45.6 M; '–' for no number.
export function num(v, o) {
  if (typeof v !== 'number' || Number.isNaN(v)) return '–';
  const digits = digitsOf(o);
  const a = Math.abs(v);
  if (a < 1000) return Number.isInteger(v) ? String(v) : v.toPrecision(digits).replace(/\.?0+$/, '');
  let i = 0, x = a;
  while (x >= 1000 && i < SI.length - 1) { x /= 1000; i++; }
  return (v < 0 ? '-' : '') + x.toPrecision(digits) + ' ' + SI[i];
}

export const UNITS = ['bps', 'bytes', 'packets', 'flows'];
export const unitLabel = { bps: 'bits/s', bytes: 'bytes', packets: 'packets', flows: 'flows' };
const unitOf = (o) => (o && typeof o === 'object' && UNITS.includes(o.unit) ? o.unit : 'bytes');

// The value of a row ({flows, packets, bytes}) in options.unit; bits/s
// averages over options.secs (the range or the interval, seconds).
export function metric(row, o) {
  const secs = o && typeof o === 'object' ? o.secs : 0;
  switch (unitOf(o)) {
    case 'bps': return secs > 0 ? (row.bytes * 8) / secs : 0;
    case 'packets': return row.packets;
    case 'flows': return row.flows;
    default: return row.bytes;
  }
}

// v, already in options.unit, with the unit's suffix: 1.2 Mb/s, 3.4 kB.
export function inUnit(v, o) {
  switch (unitOf(o)) {
    case 'bps': return num(v) + 'b/s';
    case 'bytes': return num(v) + 'B';
    case 'packets': return num(v) + ' pkts';
    default: return num(v);
  }
}

// A row's traffic in options.unit over options.secs, formatted.
export const traffic = (row, o) => inUnit(metric(row, o), o);

// The API's order for a unit (bits/s ranks by bytes).
export function orderOf(unit) {
  return unit === 'bps' ? 'bytes' : unit;
}

export function esc(s) {
  return String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
}

// IANA protocol numbers of the usual suspects: "TCP (6)".
const PROTO = { 1: 'ICMP', 2: 'IGMP', 4: 'IPIP', 6: 'TCP', 17: 'UDP', 41: 'IPv6', 47: 'GRE', 50: 'ESP', 51: 'AH', 58: 'ICMPv6', 89: 'OSPF', 103: 'PIM', 112: 'VRRP', 132: 'SCTP' };
export function protoName(v) {
  if (v === '' || v === null || v === undefined) return '(unknown)';
  const n = Number(v);
  if (!Number.isInteger(n)) return String(v); // already a name
  return PROTO[n] ? `${PROTO[n]} (${n})` : String(n);
}

// TCP flags as nfdump shows them: CWR ECE URG ACK PSH RST SYN FIN, a
// letter when set and '.' when not ("...AP.SF"); '' for none known.
export function tcpFlags(v) {
  const n = Number(v);
  if (v === '' || v === null || v === undefined || !Number.isInteger(n)) return '';
  return 'CEUAPRSF'.split('').map((c, i) => (n & (0x80 >> i) ? c : '.')).join('');
}

// A time (ms since the epoch, or an ISO 8601 string) as
// "2026-12-02 15:04:05" in options.tz: 'utc', else the browser's zone;
// with options.ms, milliseconds too ("15:04:05.123"); '' for none.
export function timeText(v, o) {
  const ms = typeof v === 'number' ? v : Date.parse(v);
  if (v === '' || v === null || v === undefined || Number.isNaN(ms)) return '';
  const utc = o && typeof o === 'object' && o.tz === 'utc';
  const d = new Date(ms);
  const p = (n) => String(n).padStart(2, '0');
  const [Y, M, D, h, m, s] = utc
    ? [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate(), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds()]
    : [d.getFullYear(), d.getMonth() + 1, d.getDate(), d.getHours(), d.getMinutes(), d.getSeconds()];
  const ms3 = o && typeof o === 'object' && o.ms ? '.' + String(((ms % 1000) + 1000) % 1000).padStart(3, '0') : '';
  return `${Y}-${p(M)}-${p(D)} ${p(h)}:${p(m)}:${p(s)}${ms3}`;
}

// The name of zone options.tz: "UTC", or the browser's ("Asia/Tokyo").
export function zoneName(o) {
  if (o && typeof o === 'object' && o.tz === 'utc') return 'UTC';
  try { return Intl.DateTimeFormat().resolvedOptions().timeZone || 'local'; } catch { return 'local'; }
}
