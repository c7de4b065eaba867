// The filter box's completion (issue 20 part 6), the part without a DOM:
// where the cursor stands in the filter grammar (docs/query.md "Filter";
// src/query/filter_parse.c and filter_terms.c), and what may be typed
// there.  tests/web/complete.mjs runs these functions in node too.
//
// The lexer is filter_parse.c's (ng_flt_next): words of letters, digits
// and . : / _ - +; "quoted" or 'quoted' words; ( ) [ ] , && || ! and the
// operators = == != < > <= >= ~.  A small state machine over the tokens
// before the cursor says what the next word is:
//
//   term    the start of a term (at the start, after and / or / not /
//           "(" ...): the parser's keywords (GET /api/v1/fields "filter",
//           straight from its tables), the field names, "not";
//   side    after src / dst: the words taking a side (host, port, as …)
//           and the fields that have a src_/dst_ pair (country, asname …);
//   value   after a term's keyword or field (and an operator): a value of
//           that field from the data (GET /api/v1/complete), or the
//           keyword's few words (proto tcp, flowdir ingress …);
//   after   after a whole term: and, or, and not.
//
// It is a guide, not the parser: where it cannot tell (an unknown word,
// a list) it offers what usually follows, and the server's parser still
// has the last word on Apply.

const WORD = /[A-Za-z0-9.:/_\-+]/;
const OPS = ['==', '!=', '<=', '>=', '=', '<', '>', '~'];
const OP_WORDS = ['eq', 'ne', 'lt', 'gt', 'le', 'ge'];

// Tokens of text: [{t: kind, v: text, s: start, e: end}], kinds word,
// quoted (v without the quotes; open: no closing quote), op, punct.
export function tokens(text) {
  const out = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (/\s/.test(c)) { i++; continue; }
    if (c === '#') { while (i < text.length && text[i] !== '\n') i++; continue; }
    if (c === '"' || c === "'") {
      const j = text.indexOf(c, i + 1);
      const e = j < 0 ? text.length : j + 1;
      out.push({ t: 'quoted', v: text.slice(i + 1, j < 0 ? text.length : j), s: i, e, open: j < 0 });
      i = e;
      continue;
    }
    if (WORD.test(c)) {
      let j = i;
      while (j < text.length && WORD.test(text[j])) j++;
      out.push({ t: 'word', v: text.slice(i, j), s: i, e: j });
      i = j;
      continue;
    }
    const two = text.slice(i, i + 2);
    if (two === '&&' || two === '||') { out.push({ t: 'punct', v: two, s: i, e: i + 2 }); i += 2; continue; }
    const op = OPS.find((o) => text.startsWith(o, i));
    if (op) { out.push({ t: 'op', v: op, s: i, e: i + op.length }); i += op.length; continue; }
    out.push({ t: 'punct', v: c, s: i, e: i + 1 });
    i++;
  }
  return out;
}

// Keywords of the filter (filter_terms.c) whose value the data can
// complete: keyword (after an optional side) → the field asked of
// /api/v1/complete for src, dst and either side.
const SIDE_VALUES = {
  host: ['srcip', 'dstip', 'ip'], ip: ['srcip', 'dstip', 'ip'],
  port: ['srcport', 'dstport', 'port'], as: ['srcas,srcasname', 'dstas,dstasname', 'as'],
  vlan: ['srcvlan', 'dstvlan', 'vlan'], mask: ['srcmask', 'dstmask', 'mask'],
};
// keywords with a fixed set of words after them
const FIXED = {
  proto: ['tcp', 'udp', 'icmp', 'icmp6', 'gre', 'esp', 'ah', 'ospf', 'pim', 'sctp', 'igmp'],
  flowdir: ['ingress', 'egress'],
  anomaly: ['time', 'sampling', 'counters', 'export_time', 'any'],
};
// keywords that are a whole term alone
const ALONE = new Set(['any', 'inet', 'ipv4', 'inet6', 'ipv6']);

// What the fields answer offers (GET /api/v1/fields): names and short
// names by lower case, the parser's keywords, the src_/dst_ stems.
export function grammar(doc) {
  const byName = new Map();
  for (const f of doc.fields || []) {
    byName.set(f.name.toLowerCase(), f);
    if (f.short) byName.set(f.short.toLowerCase(), f);
  }
  const keywords = (doc.filter || []).map((k) => ({ word: k.word, doc: k.doc, sided: !!k.sided }));
  const kw = new Set(keywords.map((k) => k.word.toLowerCase()));
  // "src X" for field src_X (or short srcX) whose partner dst_X exists
  const stems = new Map();
  for (const f of doc.fields || []) {
    const m = /^src_(.+)$/.exec(f.name);
    if (m && byName.has('dst_' + m[1])) stems.set(m[1], f);
    const s = f.short && /^src(.+)$/.exec(f.short);
    if (s && f.short !== 'srcip' && byName.has('dst' + s[1])) stems.set(s[1], f);
  }
  // the short spelling where both are there (asname, not as_name)
  for (const k of [...stems.keys()]) if (k.includes('_') && stems.has(k.replace(/_/g, ''))) stems.delete(k);
  const sided = new Set(keywords.filter((k) => k.sided).map((k) => k.word.toLowerCase()));
  return { byName, keywords, kw, stems, sided };
}

// The field of the data a value is asked for: side 'src', 'dst' or ''.
function sideField(g, word, side) {
  const w = word.toLowerCase();
  if (SIDE_VALUES[w]) return { field: SIDE_VALUES[w][side === 'src' ? 0 : side === 'dst' ? 1 : 2] };
  if (g.sided.has(w)) return { field: undefined }; // net, mac: no values to offer
  const stem = w.replace(/-/g, '_');
  const f = g.stems.get(stem) || g.stems.get(stem.replace(/_/g, ''));
  if (f) {
    const name = side === 'dst' ? (f.name.startsWith('src_') ? 'dst_' + f.name.slice(4) : 'dst' + f.short.slice(3)) : f.name;
    const field = g.byName.get(name.toLowerCase()) || f;
    return { field: field.name, type: field.type };
  }
  return null;
}

// Where `cursor` stands in `text` (see the opening comment):
// {kind: 'term'|'side'|'value'|'after'|'inout', start, partial, field,
//  type, fixed, quoted, side}.  `start`: where the word being typed
// begins (what a completion replaces, up to the cursor).
export function context(g, text, cursor = text.length) {
  const all = tokens(text.slice(0, cursor));
  let part = all.length ? all[all.length - 1] : null;
  // the word being typed: a word or a quote touching the cursor
  if (part && !((part.t === 'word' || (part.t === 'quoted' && part.open)) && part.e === cursor)) part = null;
  const toks = part ? all.slice(0, -1) : all;
  let st = { kind: 'term' };
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i], w = t.t === 'word' ? t.v.toLowerCase() : null;
    switch (st.kind) {
      case 'term':
        if (w === 'not' || t.v === '!' || t.v === '(') st = { kind: 'term' };
        else if (w === 'src' || w === 'dst') st = { kind: 'side', side: w };
        else if (w === 'in' || w === 'out') st = { kind: 'inout', side: w };
        else if (w && ALONE.has(w)) st = { kind: 'after' };
        else if (w && FIXED[w]) st = { kind: 'value', fixed: FIXED[w], key: w };
        else if (w === 'exporter') st = { kind: 'value', field: 'exporter' };
        else if (w === 'if') st = { kind: 'value', field: 'if' };
        else if (w === 'router' || w === 'next' || w === 'mpls' || w === 'prev') st = { kind: 'word2', key: w };
        else if (w && SIDE_VALUES[w]) st = { kind: 'value', ...sideField(g, w, '') };
        // a keyword taking a number or letters (bytes, flags, dscp …):
        // nothing from the data ("flags 27" is not tcp_flags = 27)
        else if (w && g.kw.has(w)) st = { kind: 'value' };
        else if (w && g.byName.has(w.replace(/-/g, '_'))) {
          const f = g.byName.get(w.replace(/-/g, '_'));
          st = { kind: 'value', field: f.short || f.name, type: f.type };
        } else if (w && sideField(g, w, '')) st = { kind: 'value', ...sideField(g, w, '') };
        else st = { kind: 'value' }; // a keyword taking a number (bytes, flags …)
        break;
      case 'side': {
        const sf = w ? sideField(g, w, st.side) : null;
        st = sf ? { kind: 'value', ...sf } : { kind: 'value' };
        break;
      }
      case 'inout':
        if (w === 'if') st = { kind: 'value', field: st.side === 'in' ? 'inif' : 'outif' };
        else if (w === 'src' || w === 'dst') st = { kind: 'side', side: w };
        else st = { kind: 'value' };
        break;
      case 'word2': // router ip, next ip, mpls label …
        st = { kind: 'value', field: st.key === 'router' ? 'exporter' : st.key === 'next' ? 'nexthop' : undefined };
        break;
      case 'value':
        if (!st.op && (t.t === 'op' || (w && OP_WORDS.includes(w)))) st = { ...st, op: true };
        else if (w === 'in' && !st.op) st = { ...st, list: true };
        else if (t.v === '[') st = { kind: 'list' };
        else st = { kind: 'after' };
        break;
      case 'list':
        if (t.v === ']') st = { kind: 'after' };
        break;
      default: // after
        if (w === 'and' || w === 'or' || t.v === '&&' || t.v === '||') st = { kind: 'term' };
        else if (t.v === ')') st = { kind: 'after' };
        else st = { kind: 'after' };
    }
  }
  const start = part ? part.s : cursor;
  return { ...st, start, partial: part ? part.v : '', quoted: !!(part && part.t === 'quoted') };
}

// A value as one filter word: bare when it is a plain word, else quoted
// (null: it holds a double quote, which no filter word can).
export function asWord(v) {
  const s = String(v);
  if (s.includes('"')) return null;
  return /^[A-Za-z0-9.:/_\-+]+$/.test(s) && !/^(and|or|not)$/i.test(s) ? s : `"${s}"`;
}

const starts = (x, p) => x.toLowerCase().startsWith(p.toLowerCase());

// The suggestions that need no data for context c: [{text, insert, kind,
// doc}]; the words of the grammar whose start is c.partial.
export function staticItems(g, c) {
  const p = c.partial;
  const items = [];
  const add = (text, kind, doc = '') => { if (starts(text, p) && !items.some((x) => x.text === text)) items.push({ text, insert: text, kind, doc }); };
  if (c.kind === 'term') {
    for (const k of g.keywords) add(k.word, 'keyword', k.doc);
    add('not', 'keyword', 'not TERM: the flows the term does not match');
    if (p) for (const [name, f] of g.byName) add(name, 'field', `${f.type}: ${f.doc || ''}`);
  } else if (c.kind === 'side') {
    for (const k of g.keywords) if (k.sided) add(k.word, 'keyword', k.doc);
    for (const [stem, f] of g.stems) add(stem, 'field', `${c.side}_${stem}: ${f.doc || ''}`);
  } else if (c.kind === 'inout') {
    add('if', 'keyword', `${c.side} if N: the ${c.side === 'in' ? 'input' : 'output'} interface index`);
  } else if (c.kind === 'value' && c.fixed) {
    for (const w of c.fixed) add(w, 'value');
  } else if (c.kind === 'after') {
    add('and', 'keyword', 'both terms');
    add('or', 'keyword', 'either term');
    if (!p) add('and not', 'keyword', 'the first term but not the second');
  }
  return items;
}

// Recent filters (the browser's localStorage: the last RECENT_MAX
// applied, newest first, each at most RECENT_LEN characters).
export const RECENT_MAX = 10, RECENT_LEN = 500, RECENT_KEY = 'nagare.recentFilters';
export function recentAdd(list, f) {
  f = (f || '').trim();
  if (!f || f.length > RECENT_LEN) return list;
  return [f, ...list.filter((x) => x !== f)].slice(0, RECENT_MAX);
}
