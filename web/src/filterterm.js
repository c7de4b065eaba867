// The nfdump filter term of a clicked value (docs/query.md "Filter"), and
// the filter and Flow explorer link that a click on an aggregate makes.
// Pure functions (no DOM): tests/web/filterterm.mjs runs them in node, and
// tests/e2e/test_filterterm.sh has nagare's filter parser accept every
// term they can produce (FIELD_EXAMPLES).

// A string value as one filter word: bare when it is a plain word, else
// in double quotes; null when it cannot be written (a double quote in it:
// the filter's quoted words have no escape).
function word(v) {
  const s = String(v);
  if (s === '' || s.includes('"') || /[\n\r]/.test(s)) return null;
  return /^[A-Za-z0-9_.:-]+$/.test(s) && !/^(and|or|not)$/i.test(s) ? s : `"${s}"`;
}
const int = (v) => (/^\d+$/.test(String(v)) ? String(v) : null);
// an address, or an address prefix as the API writes prefix keys (10.0.0.0/24)
const addr = (side) => (v) => {
  const s = String(v);
  if (!/^[0-9A-Fa-f:.]+(\/\d{1,3})?$/.test(s) || s === '') return null;
  return s.includes('/') ? `${side} net ${s}` : `${side} ip ${s}`;
};
const num = (kw) => (v) => (int(v) === null ? null : `${kw} ${int(v)}`);
const str = (kw) => (v) => (word(v) === null ? null : `${kw} ${word(v)}`);
// name fields: equality (without "=" a name matches by substring)
const name = (kw) => (v) => (word(v) === null ? null : `${kw} = ${word(v)}`);

// either side (the API's "provider", "boundary", "connectivity" keys,
// docs/query.md): the input or the output interface's value
const either = (a, b) => (v) => (word(v) === null ? null : `(${a} = ${word(v)} or ${b} = ${word(v)})`);

// field (as the API names a key: its short name or its name) → term maker
const TERMS = {
  srcip: addr('src'), dstip: addr('dst'), src_addr: addr('src'), dst_addr: addr('dst'),
  srcport: num('src port'), dstport: num('dst port'), src_port: num('src port'), dst_port: num('dst port'),
  proto: num('proto'), protocol: num('proto'),
  srcas: num('src as'), dstas: num('dst as'), src_as: num('src as'), dst_as: num('dst as'),
  exporter: (v) => (addr('')(v) && !String(v).includes('/') ? `exporter ${v}` : null),
  if: num('if'), inif: num('in if'), outif: num('out if'), in_if: num('in if'), out_if: num('out if'),
  srccountry: str('src country'), dstcountry: str('dst country'),
  src_country: str('src country'), dst_country: str('dst country'),
  srccontinent: str('src continent'), dstcontinent: str('dst continent'),
  srcasname: name('src asname'), dstasname: name('dst asname'),
  src_as_name: name('src asname'), dst_as_name: name('dst asname'),
  service: name('service'), application: name('application'), app: name('application'),
  exportername: name('exportername'), exporter_name: name('exportername'),
  inifname: name('inifname'), outifname: name('outifname'),
  in_if_name: name('inifname'), out_if_name: name('outifname'),
  tos: num('tos'), srcmask: num('src mask'), dstmask: num('dst mask'),
  srcvlan: num('src vlan'), dstvlan: num('dst vlan'),
  // classification (docs/configuration.md "Classification")
  inifprovider: name('inifprovider'), outifprovider: name('outifprovider'),
  in_if_provider: name('inifprovider'), out_if_provider: name('outifprovider'),
  inifboundary: name('inifboundary'), outifboundary: name('outifboundary'),
  inifconnectivity: name('inifconnectivity'), outifconnectivity: name('outifconnectivity'),
  provider: either('inifprovider', 'outifprovider'), boundary: either('inifboundary', 'outifboundary'),
  connectivity: either('inifconnectivity', 'outifconnectivity'),
  exportergroup: name('exportergroup'), exportersite: name('exportersite'),
};

// Which fields have a term (for the pages and the tests).
export const TERM_FIELDS = Object.keys(TERMS);

// One example value a field's key takes in the API's answers, to make
// each kind of term the pages can produce (tests: each must parse).
export const FIELD_EXAMPLES = {
  srcip: ['192.0.2.1', '2001:db8::1', '10.1.0.0/16'], dstip: ['198.51.100.7'],
  src_addr: ['192.0.2.1'], dst_addr: ['2001:db8::2'],
  srcport: [443], dstport: [0], src_port: [53], dst_port: [8080], proto: [6], protocol: [17],
  srcas: [15169], dstas: ['0'], src_as: [64512], dst_as: [13335], exporter: ['127.0.1.1', '::1'],
  if: [2], inif: [3], outif: [0], in_if: [7], out_if: [8], srccountry: ['DE'], dstcountry: ['GB'],
  src_country: ['JP'], dst_country: ['US'], srccontinent: ['EU'], dstcontinent: ['NA'],
  srcasname: ['GOOGLE', 'Cloudflare, Inc.'], dstasname: ['AMAZON-02'],
  src_as_name: ['OVH SAS'], dst_as_name: ['or'], service: ['https', 'ms-sql-s'],
  application: ['dns'], app: ['quic'], exportername: ['edge-1 (Paris)'], exporter_name: ['core1'],
  inifname: ['eth0'], outifname: ['GigabitEthernet0/0/1'], in_if_name: ['xe-0/0/0.0'],
  out_if_name: ['Port-channel 12'], tos: [184], srcmask: [24], dstmask: [0], srcvlan: [10], dstvlan: [4094],
  inifprovider: ['Cogent'], outifprovider: ['Arelion Sweden AB'], in_if_provider: ['DE-CIX'],
  out_if_provider: ['acme'], inifboundary: ['external'], outifboundary: ['internal'],
  inifconnectivity: ['transit'], outifconnectivity: ['ix'], provider: ['Google', 'Hurricane Electric'],
  boundary: ['external'], connectivity: ['pni'], exportergroup: ['edge'], exportersite: ['fra'],
};

// The term that selects `value` of `field`, or null: "other", unknown
// ('' or null), a field without a term, a value the filter cannot write.
export function termFor(field, value) {
  if (value === null || value === undefined || value === '' || value === 'other') return null;
  const f = TERMS[field];
  return f ? f(value) : null;
}

// The term of a row whose keys are `keys` (e.g. ['srcas', 'srcasname']:
// the number suffices, a name only when it is alone; ['srcip', 'dstip']:
// both, ANDed); null when no key has a term.
export function rowTerm(keys, row) {
  const names = /name$/;
  const parts = [];
  for (const k of keys) {
    if (names.test(k) && keys.some((o) => o !== k && !names.test(o))) continue;
    const t = termFor(k, row[k]);
    if (t) parts.push(t);
  }
  return parts.length ? parts.join(' and ') : null;
}

// The top-level conjuncts of filter text f (split at "and" / "&&"
// outside parentheses and quotes), or null when f holds a top-level "or"
// or a comment (then it is one unit, to be put in parentheses).
function conjuncts(f) {
  if (f.includes('#')) return null;
  const parts = [];
  let depth = 0, quoted = false, start = 0;
  for (let i = 0; i < f.length; i++) {
    const c = f[i], rest = f.slice(i);
    if (c === '"') quoted = !quoted;
    if (quoted) continue;
    if (c === '(') depth++;
    else if (c === ')') depth--;
    if (depth !== 0) continue;
    const edge = i === 0 || /[\s)]/.test(f[i - 1]);
    if (rest.startsWith('||') || (edge && /^or(?=[\s(!])/i.test(rest))) return null;
    const m = rest.startsWith('&&') ? ['&&'] : edge ? /^and(?=[\s(!])/i.exec(rest) : null;
    if (m) {
      parts.push(f.slice(start, i).trim());
      start = i + m[0].length;
      i = start - 1;
    }
  }
  parts.push(f.slice(start).trim());
  return parts.filter((x) => x);
}

// The part of a simple term before its value ("src as" of "src as 15169",
// "src asname =" of 'src asname = "X"'); null for anything else.
function keyword(t) {
  const m = /^([a-z_ -]+?=?)\s+("[^"]*"|[^\s()"]+)$/i.exec(t);
  return m && !/\b(and|or|not)\b/i.test(m[1]) ? m[1].trim() : null;
}

// The filter f narrowed by term (one or more simple terms ANDed): each
// of term's parts replaces a top-level part of f on the same field and
// side (a flow has one source AS: "src as 1 and src as 2" would match
// nothing) or is ANDed to it; f in parentheses when it holds a top-level
// "or".  The term alone when f is empty.
export function withTerm(f, term) {
  f = (f || '').trim();
  if (!term) return f;
  if (!f) return term;
  let parts = conjuncts(f);
  // a comment runs to the end of its line: the parenthesis goes below it
  if (!parts) parts = [f.includes('#') ? `(${f}\n)` : `(${f})`];
  for (const t of conjuncts(term) || [term]) {
    const kw = keyword(t);
    const i = kw === null ? -1 : parts.findIndex((p) => keyword(p) === kw);
    if (i >= 0) parts[i] = t;
    else if (!parts.includes(t)) parts.push(t);
  }
  return parts.join(' and ');
}

// The Flow explorer's path on the flows behind an aggregate: the range
// (absolute: the one the aggregate was computed over) and the filter
// narrowed by term.
export function explorerHref({ from, to, filter }, term) {
  const q = new URLSearchParams();
  if (from) q.set('from', from);
  if (to) q.set('to', to);
  const f = withTerm(filter, term);
  if (f) q.set('filter', f);
  return '/explorer' + (q.toString() ? '?' + q : '');
}
