// filterterm.mjs — web/src/filterterm.js on its own (node, no browser):
// the filter term of each field's value, the filter a click makes, the
// Flow explorer link; with --bin NAGARE, every term the pages can make
// (each field of FIELD_EXAMPLES, each example value, and a click ANDed to
// a filter) is accepted by nagare's filter parser (`nagare query` over an
// empty store: a bad filter exits 2 with the parser's message).
//   node tests/web/filterterm.mjs [--bin build/nagare]     exit 0: passed
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { termFor, rowTerm, withTerm, explorerHref, TERM_FIELDS, FIELD_EXAMPLES } from '../../web/src/filterterm.js';

// the term of each kind of field (docs/query.md "Filter")
assert.equal(termFor('srcas', 15169), 'src as 15169');
assert.equal(termFor('dstport', 443), 'dst port 443');
assert.equal(termFor('exporter', '10.0.0.1'), 'exporter 10.0.0.1');
assert.equal(termFor('srccountry', 'DE'), 'src country DE');
assert.equal(termFor('srcip', '2001:db8::1'), 'src ip 2001:db8::1');
assert.equal(termFor('dstip', '10.1.0.0/16'), 'dst net 10.1.0.0/16');
assert.equal(termFor('proto', 6), 'proto 6');
assert.equal(termFor('inif', 3), 'in if 3');
assert.equal(termFor('outif', 0), 'out if 0');
assert.equal(termFor('service', 'https'), 'service = https');
assert.equal(termFor('srcasname', 'Cloudflare, Inc.'), 'src asname = "Cloudflare, Inc."');
assert.equal(termFor('dstasname', 'or'), 'dst asname = "or"'); // a keyword is quoted
assert.equal(termFor('inifprovider', 'Cogent'), 'inifprovider = Cogent');
assert.equal(termFor('provider', 'DE-CIX'), '(inifprovider = DE-CIX or outifprovider = DE-CIX)');
assert.equal(termFor('boundary', 'external'), '(inifboundary = external or outifboundary = external)');
// no term: other, unknown, a field without one, a value the filter cannot hold
for (const [f, v] of [['srcas', 'other'], ['srcas', ''], ['srcip', null], ['bytes', 5], ['srcas', 'x'],
  ['exporter', '10.0.0.0/8'], ['service', 'a"b'], ['srcip', '1.2.3.4 or any']])
  assert.equal(termFor(f, v), null, `${f} ${v}`);
assert.equal(rowTerm(['srcas', 'srcasname'], { srcas: 15169, srcasname: 'GOOGLE' }), 'src as 15169');
assert.equal(rowTerm(['srcip', 'dstip'], { srcip: '10.0.0.1', dstip: '10.0.0.2' }), 'src ip 10.0.0.1 and dst ip 10.0.0.2');
assert.equal(rowTerm(['srcas'], { srcas: 'other' }), null);

// a click narrows the filter: ANDed, the same field's term replaced
// (a flow has one source AS: two ANDed would match nothing), an "or"
// kept whole in parentheses, a comment closed below its line
assert.equal(withTerm('', 'src as 1'), 'src as 1');
assert.equal(withTerm('proto tcp', 'dst port 443'), 'proto tcp and dst port 443');
assert.equal(withTerm('proto tcp and dst port 443', 'dst port 443'), 'proto tcp and dst port 443');
assert.equal(withTerm('src as 1 and proto 6', 'src as 2'), 'src as 2 and proto 6');
assert.equal(withTerm('src country DE', 'src country GB'), 'src country GB');
assert.equal(withTerm('proto tcp or proto udp', 'src as 3'), '(proto tcp or proto udp) and src as 3');
assert.equal(withTerm('(a or b) and src as 1', 'src as 5'), '(a or b) and src as 5');
assert.equal(withTerm('not src as 1', 'src as 2'), 'not src as 1 and src as 2');
assert.equal(withTerm('src ip 1.2.3.4', 'src ip 1.2.3.5 and dst ip 5.6.7.8'), 'src ip 1.2.3.5 and dst ip 5.6.7.8');
assert.equal(withTerm('proto tcp # web', 'src as 1'), '(proto tcp # web\n) and src as 1');
assert.equal(withTerm('src asname = "A and B"', 'src asname = C'), 'src asname = C');
assert.equal(withTerm('proto tcp', null), 'proto tcp');

const href = explorerHref({ from: '2026-12-02T10:00:00.000Z', to: '2026-12-02T11:00:00.000Z', filter: 'proto tcp' }, 'src as 1');
const u = new URL(href, 'http://x');
assert.equal(u.pathname, '/explorer');
assert.equal(u.searchParams.get('filter'), 'proto tcp and src as 1');
assert.equal(u.searchParams.get('from'), '2026-12-02T10:00:00.000Z');

// every field of the module has examples, every example a term
for (const f of TERM_FIELDS) {
  assert.ok(FIELD_EXAMPLES[f] && FIELD_EXAMPLES[f].length, `examples of ${f}`);
  for (const v of FIELD_EXAMPLES[f]) assert.ok(termFor(f, v), `a term for ${f} ${v}`);
}

// nagare's parser accepts every term, alone and as a click ANDs it
const bi = process.argv.indexOf('--bin');
if (bi > 0) {
  const bin = process.argv[bi + 1];
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ng-filterterm-'));
  mkdirSync(path.join(dir, 'flows'), { recursive: true });
  const filters = [];
  for (const f of TERM_FIELDS)
    for (const v of FIELD_EXAMPLES[f]) {
      const t = termFor(f, v);
      filters.push(t, withTerm('proto tcp or proto udp', t), withTerm('proto tcp # comment', t), withTerm(t, t));
    }
  let bad = 0;
  try {
    for (const flt of filters) {
      try {
        execFileSync(bin, ['query', '--store', dir, '-s', 'proto', '-n', '1', flt], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      } catch (e) {
        bad++;
        console.error(`filterterm: FAIL: nagare rejects ${JSON.stringify(flt)}: ${String(e.stderr).split('\n')[0]}`);
      }
    }
  } finally { rmSync(dir, { recursive: true, force: true }); }
  assert.equal(bad, 0, `${bad} of ${filters.length} terms rejected by nagare's filter parser`);
  console.log(`filterterm: nagare accepts all ${filters.length} filters made of ${TERM_FIELDS.length} fields' terms`);
}
console.log('filterterm: PASS');
