// Numbers for people: 1.23 k, 4.5 M; bytes as kB/MB (SI); rates per second.
const SI = ['', 'k', 'M', 'G', 'T', 'P', 'E'];

export function human(v, digits = 3) {
  if (v === null || v === undefined || Number.isNaN(v)) return '–';
  const a = Math.abs(v);
  if (a < 1000) return Number.isInteger(v) ? String(v) : v.toPrecision(digits).replace(/\.?0+$/, '');
  let i = 0, x = a;
  while (x >= 1000 && i < SI.length - 1) { x /= 1000; i++; }
  return (v < 0 ? '-' : '') + x.toPrecision(digits) + ' ' + SI[i];
}

export const unitLabel = { bps: 'bits/s', bytes: 'bytes', packets: 'packets', flows: 'flows' };

// The value of a row ({flows, packets, bytes}) in the chosen unit; bits/s
// averages over `secs` (the range or the interval).
export function metric(row, unit, secs) {
  switch (unit) {
    case 'bps': return secs > 0 ? (row.bytes * 8) / secs : 0;
    case 'packets': return row.packets;
    case 'flows': return row.flows;
    default: return row.bytes;
  }
}

export function fmtUnit(v, unit) {
  switch (unit) {
    case 'bps': return human(v) + 'b/s';
    case 'bytes': return human(v) + 'B';
    case 'packets': return human(v) + ' pkts';
    default: return human(v);
  }
}

// The API's order for a unit (bits/s ranks by bytes).
export function orderOf(unit) {
  return unit === 'bps' ? 'bytes' : unit;
}

export function esc(s) {
  return String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
}

// IANA protocol numbers of the usual suspects, for legends.
const PROTO = { 1: 'ICMP', 2: 'IGMP', 6: 'TCP', 17: 'UDP', 41: 'IPv6', 47: 'GRE', 50: 'ESP', 51: 'AH', 58: 'ICMPv6', 89: 'OSPF', 132: 'SCTP' };
export function protoName(v) {
  return PROTO[v] ? `${PROTO[v]} (${v})` : String(v);
}
