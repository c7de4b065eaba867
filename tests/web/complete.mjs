// complete.mjs — the filter box that helps (issue 20 part 6): completion
// of keywords, field names and values from the data, recent filters, a
// bad filter's column marked in the box; and GET /api/v1/complete.
//
//   node tests/web/complete.mjs --url http://127.0.0.1:PORT/ --bin NAGARE \
//        --store STORE --out DIR
//
// Against the fixture's store (tests/web/fixture.sh: 2 M flowgen flows of
// the last hour, softflowd, v5 with countries and AS names):
//   - the API: for countries, AS names, AS numbers, exporters and
//     addresses, /api/v1/complete?field=F&prefix=P lists the values of
//     `nagare query -s F -n 0` that start with P, in its order, with its
//     flows, at most `limit`; `groups` counts them; an empty prefix is the
//     top-N; its bounds answer 400; its time beside /api/v1/top's;
//   - every keyword /api/v1/fields lists is one nagare's parser knows
//     (`nagare query` says "expected …" after it, never "unknown filter
//     keyword"), and a word it does not list is unknown;
//   - the page: typing `src country = X` lists exactly those values;
//     ↓ and Enter take one, Tab takes a keyword (`pro` → proto), the
//     protocol names follow, Escape closes the list, Enter applies: the
//     URL's filter and the page's top rows are nagare query's for it;
//     the filter comes back as a recent one in a fresh page; `src asname`
//     and `exporter` complete from the data too; a bad filter underlines
//     the word at the parser's column in the box, with the message.
// No console error.  Screenshots DIR/complete-*.png.  Exit 0: passed.
import * as h from './harness.mjs';
import { FROM, TO, RANGE, check, cells, shot } from './harness.mjs';
import { grammar, context, staticItems } from '../../web/src/complete.js';

h.init('complete.mjs');
const base = h.base;
const cli = (...a) => h.cli(a);
const api = async (rel) => {
  const t0 = performance.now();
  const r = await fetch(base + rel);
  return { status: r.status, body: await r.json(), ms: performance.now() - t0 };
};
const q = (o) => new URLSearchParams({ from: FROM, to: TO, ...o }).toString();

// nagare query's values of field f, in its order (flows), that start with p
function expected(f, p, n = 10) {
  const d = cli('-s', f, '-n', '0');
  const k = d.query.keys[0];
  const all = d.rows.filter((r) => String(r[k]).toLowerCase().startsWith(p.toLowerCase()));
  return { rows: all.slice(0, n).map((r) => [String(r[k]), r.flows]), count: all.length, top: d.rows, key: k };
}
// the same values and flows, ties (equal flows) in any order
const same = (got, want) => JSON.stringify(got.map((x) => x[1])) === JSON.stringify(want.map((x) => x[1])) &&
  got.every(([v, fl]) => want.some(([w, g]) => w === v && g === fl));
// the prefix of the top values' first `len` characters with the most matches
function busiest(rows, key, len) {
  const by = new Map();
  for (const r of rows) {
    const v = String(r[key]);
    if (v.length >= len) by.set(v.slice(0, len), (by.get(v.slice(0, len)) || 0) + 1);
  }
  return [...by.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] || '';
}

const sum = cli('-s', 'proto', '-n', '1').summary;
console.log(`fixture: ${sum.flows} flows in [${FROM}, ${TO})`);

// ---- the API ----------------------------------------------------------
const cases = [];
for (const [field, len] of [['src_country', 1], ['src_as_name', 1], ['srcas', 1], ['exporter', 9], ['srcip', 4]]) {
  const all = expected(field, '', 0);
  const p = busiest(all.top.filter((r) => String(r[all.key]) !== ''), all.key, len);
  cases.push([field, p]);
}
for (const [field, p] of cases) {
  const want = expected(field, p);
  const { status, body: d, ms } = await api(`/api/v1/complete?${q({ field, prefix: p, limit: 10 })}`);
  const got = status === 200 ? d.rows.map((r) => [String(r[d.query.keys[0]]), r.flows]) : [];
  check(status === 200 && want.rows.length > 0 && same(got, want.rows),
    `api: complete ${field} "${p}": ${got.length} values = nagare query -s ${field} starting with "${p}" (${got.slice(0, 4).map((x) => x[0]).join(', ')}…)`,
    `${JSON.stringify(got)} vs ${JSON.stringify(want.rows)}`);
  check(d.summary && d.summary.groups === want.count && d.query.prefix === p,
    `api: complete ${field} "${p}": groups ${d.summary && d.summary.groups} = the ${want.count} that match; query.prefix echoed`);
  // the peers: the same field's top-N (which the top rollups may answer
  // for addresses), and the top-N over the rows (a filter true for every
  // flow here: the rows are read, as for a prefix)
  const top = await api(`/api/v1/top?${q({ field, limit: 10 })}`);
  const rows = await api(`/api/v1/top?${q({ field, limit: 10, filter: 'not proto 255' })}`);
  const sc = (x) => (x.body.summary.elapsed_s * 1000).toFixed(0);
  console.log(`time: complete ${field} "${p}" ${ms.toFixed(0)} ms (scan ${sc({ body: d })} ms); top ${field} ${top.ms.toFixed(0)} ms (scan ${sc(top)} ms, ${top.body.summary.segments_rollup} segments through rollups); top with a filter (no top rollups) ${rows.ms.toFixed(0)} ms (scan ${sc(rows)} ms); ${sum.flows} flows`);
  check(d.summary.elapsed_s <= 0.05 + 2 * rows.body.summary.elapsed_s, `api: complete ${field} costs what a top-N with a filter (no top rollups) does (${sc({ body: d })} ms vs ${sc(rows)} ms)`);
}
{
  const want = expected('src_country', '');
  const { body: d } = await api(`/api/v1/complete?${q({ field: 'src_country' })}`);
  const k = (x) => x.query.keys[0];
  check(same(d.rows.map((r) => [String(r[k(d)]), r.flows]), want.rows), `api: an empty prefix is the top 10 (${d.rows.length} values)`);
  const lower = cases[0][1].toLowerCase();
  const { body: dl } = await api(`/api/v1/complete?${q({ field: 'src_country', prefix: lower })}`);
  check(same(dl.rows.map((r) => [String(r[k(dl)]), r.flows]), expected('src_country', cases[0][1]).rows), `api: the prefix "${lower}" matches without regard to case`);
  for (const [o, why] of [[{ field: 'src_country', prefix: 'x'.repeat(65) }, 'too long'], [{ field: 'src_country', limit: 101 }, 'limit'],
    [{ prefix: 'D' }, 'missing'], [{ field: 'nosuch' }, 'unknown']]) {
    const r = await api(`/api/v1/complete?${q(o)}`);
    check(r.status === 400 && r.body.error, `api: ${why}: 400 "${r.body.error}"`);
  }
}

// ---- every keyword the fields answer lists, the parser knows ----------
{
  const { body: f } = await api('/api/v1/fields');
  const words = (f.filter || []).map((k) => k.word);
  const unknown = [];
  for (const w of words) {
    let msg = '';
    try { cli('-n', '1', '-q', w); } catch (e) { msg = String(e.stderr || e.message); }
    if (/unknown filter keyword/.test(msg)) unknown.push(w);
  }
  check(words.length >= 30 && unknown.length === 0 && ['proto', 'src', 'port', 'host', 'exporter', 'flags', 'anomaly'].every((w) => words.includes(w)),
    `fields: ${words.length} filter keywords, each known to nagare's parser`, unknown.join(' '));
  let msg = '';
  try { cli('-n', '1', '-q', 'bogusword'); } catch (e) { msg = String(e.stderr || e.message); }
  check(/unknown filter keyword/.test(msg) && !words.includes('bogusword'), 'fields: a word not listed is unknown to the parser');
}

// ---- where the cursor stands (web/src/complete.js, over the real fields)
{
  const { body: f } = await api('/api/v1/fields');
  const g = grammar(f);
  const at = (t) => { const c = context(g, t); return [c.kind, c.field || (c.fixed ? c.fixed[0] : ''), c.partial].join('|'); };
  const want = {
    '': 'term||', 'pro': 'term||pro', 'src ': 'side||', 'src country = D': 'value|src_country|D',
    'dst asname GOO': 'value|dst_as_name|GOO', 'country J': 'value|src_country|J', 'proto ': 'value|tcp|',
    'proto tcp ': 'after||', 'proto tcp and not (dst p': 'side||p', 'exporter 127.0': 'value|exporter|127.0',
    'in if ': 'value|inif|', 'out if 3': 'value|outif|3', 'src as 15': 'value|srcas,srcasname|15', 'port 4': 'value|port|4',
    'inifname "eth': 'value|inifname|eth', 'flags S': 'value||S', 'net 10.': 'value||10.', 'bytes > 1': 'value||1',
  };
  const bad = Object.entries(want).filter(([t, w]) => at(t) !== w).map(([t, w]) => `"${t}": ${at(t)} ≠ ${w}`);
  check(bad.length === 0, `complete.js: the context of ${Object.keys(want).length} texts (term, side, value and its field, after)`, bad.join('; '));
  const items = staticItems(g, context(g, 'src '));
  check(['host', 'port', 'as', 'country', 'asname'].every((w) => items.some((x) => x.text === w)), `complete.js: after src: ${items.map((x) => x.text).slice(0, 8).join(', ')}…`);
}

// ---- the page -----------------------------------------------------------
const browser = await h.launch();
const items = (page, kind) => page.$$eval(`#filter-list li[data-i]${kind ? `[data-kind="${kind}"]` : ''}`, (ls) => ls.map((l) => l.querySelector('.c-text').textContent));
const listShown = (page) => page.$eval('#filter-list', (l) => !l.hidden);
async function typed(page, text, kind) {
  await page.keyboard.type(text, { delay: 15 });
  await page.waitForFunction((k) => document.querySelectorAll(`#filter-list li[data-i]${k ? `[data-kind="${k}"]` : ''}`).length > 0, kind, { timeout: 10000 }).catch(() => {});
  await page.waitForTimeout(300); // a later answer for the same text
}
const value = (page) => page.$eval('#filter', (e) => e.value);

{
  const { page, ctx, errors } = await h.open(browser, `/top?${RANGE}`);
  const [, cc] = cases[0];
  const want = expected('src_country', cc);
  await page.focus('#filter');
  await typed(page, `src country = ${cc}`, 'value');
  const vals = await items(page, 'value');
  const wantVals = want.rows.map((x) => x[0]);
  check(vals.length === wantVals.length && vals.every((v) => wantVals.includes(v)) && vals.length > 0,
    `page: "src country = ${cc}" lists ${vals.join(', ')} = nagare query -s src_country's`, `${vals} vs ${wantVals}`);
  await shot(page, 'complete-country-laptop', { fullPage: false });
  await page.keyboard.press('ArrowDown');
  const act = await page.$eval('#filter-list li.active .c-text', (e) => e.textContent).catch(() => '');
  await page.keyboard.press('Enter');
  check(act === vals[0] && await value(page) === `src country = ${vals[0]} ` && new URL(page.url()).searchParams.get('filter') === null,
    `page: ↓ Enter takes "${act}" into the box, nothing applied yet ("${await value(page)}")`);
  await page.waitForFunction(() => [...document.querySelectorAll('#filter-list li[data-i]')].some((l) => l.textContent.startsWith('and')), null, { timeout: 5000 }).catch(() => {});
  const after = await items(page);
  check(after.includes('and') && after.includes('or'), `page: after a whole term, and / or offered (${after.join(', ')})`);
  await typed(page, 'and pro', 'keyword');
  const kws = await items(page, 'keyword');
  check(kws.includes('proto'), `page: "pro" at a term's start offers the keyword proto (${kws.join(', ')})`);
  await page.keyboard.press('Tab');
  check(await value(page) === `src country = ${vals[0]} and proto ` && await page.evaluate(() => document.activeElement.id) === 'filter',
    `page: Tab takes proto, the focus stays in the box ("${await value(page)}")`);
  await typed(page, 'u', 'value');
  const pr = await items(page, 'value');
  check(pr.includes('udp'), `page: after proto, protocol names (${pr.join(', ')})`);
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  const f = `src country = ${vals[0]} and proto udp`;
  check(await value(page) === f + ' ', `page: "${f}" built from the list`);
  await page.waitForTimeout(300);
  await page.keyboard.press('Escape');
  check(!(await listShown(page)), 'page: Escape closes the list');
  await page.keyboard.press('Enter');
  await h.ready(page);
  const applied = new URL(page.url()).searchParams.get('filter');
  const rows = await cells(page, '.top-table');
  const exp = cli('-s', 'srcip/bytes', '-n', '10', f).rows.map((r) => r.srcip);
  check(applied === f && JSON.stringify(rows) === JSON.stringify(exp), `page: Enter applies "${applied}": the top sources are nagare query's (${rows.length} rows)`, `${rows} vs ${exp}`);
  await shot(page, 'complete-applied-laptop', { fullPage: false });

  // a bad filter: its word underlined in the box, the message under it
  await page.fill('#filter', 'src port http and proto tcp');
  await page.keyboard.press('Escape');
  await page.click('button[type=submit]');
  await h.ready(page);
  const mk = await page.evaluate(() => {
    const m = document.querySelector('#filter-mark');
    const w = m.querySelector('mark');
    return { hidden: m.hidden, word: w && w.textContent, before: w ? m.textContent.indexOf(w.textContent) : -1,
      invalid: document.getElementById('filter').hasAttribute('aria-invalid'), msg: document.getElementById('filter-error').textContent };
  });
  check(!mk.hidden && mk.word === 'http' && mk.before === 9 && mk.invalid && /column 10/.test(mk.msg) && /port number/.test(mk.msg),
    `page: a bad filter: "${mk.word}" underlined at column ${mk.before + 1} in the box, "${mk.msg.replace(/\s+/g, ' ').slice(0, 70)}"`, JSON.stringify(mk));
  // the underline sits under the word: the mark's box and the text's agree
  const geo = await page.evaluate(() => {
    const i = document.getElementById('filter'), m = document.querySelector('#filter-mark mark');
    const c = document.createElement('canvas').getContext('2d');
    c.font = getComputedStyle(i).font;
    const x = i.getBoundingClientRect().left + parseFloat(getComputedStyle(i).paddingLeft) + parseFloat(getComputedStyle(i).borderLeftWidth) + c.measureText('src port ').width;
    return { mark: m.getBoundingClientRect().left, text: x };
  });
  check(Math.abs(geo.mark - geo.text) < 2, `page: the underline starts under "http" (${geo.mark.toFixed(1)} px vs ${geo.text.toFixed(1)} px)`);
  await shot(page, 'complete-bad-filter-laptop', { fullPage: false });
  await page.focus('#filter');
  await page.keyboard.press('End');
  await page.keyboard.type(' x');
  check(await page.$eval('#filter-mark', (m) => m.hidden), 'page: once edited, the mark goes');
  const real = errors.filter((e) => !/status of 400/.test(e));
  check(real.length === 0, 'page: no console error but the bad filter\'s 400', real.join('\n'));

  // another page of the same browser: the filter applied is a recent one
  const p2 = await ctx.newPage();
  h.watch(p2, errors);
  await p2.goto(`${base}/geo?${RANGE}`);
  await h.ready(p2);
  await p2.focus('#filter');
  await p2.waitForFunction(() => document.querySelectorAll('#filter-list li[data-kind="recent"]').length > 0, null, { timeout: 5000 }).catch(() => {});
  const rec = await items(p2, 'recent');
  check(rec[0] === f && !rec.includes('src port http and proto tcp'), `recent: a fresh page offers "${rec[0]}" first (the bad one is not kept)`, rec.join(' | '));
  await shot(p2, 'complete-recent-laptop', { fullPage: false });
  await p2.keyboard.press('ArrowDown');
  await p2.keyboard.press('Enter');
  check(await value(p2) === f, 'recent: ↓ Enter puts it back whole');
  await ctx.close();
}

// AS names and exporters from the data, at phone width too
for (const [w, text, field, p] of [[1366, 'src asname ', 'src_as_name', cases[1][1]], [390, 'exporter ', 'exporter', cases[3][1]]]) {
  const { page, ctx, errors } = await h.open(browser, `/top?${RANGE}`, { width: w, height: 844 });
  await page.focus('#filter');
  await typed(page, text + p, 'value');
  const vals = await items(page, 'value');
  const want = expected(field, p).rows.map((x) => x[0]);
  const shown = vals.map((v) => v);
  check(shown.length === want.length && shown.every((v) => want.includes(v)), `page ${w} px: "${text}${p}" lists ${shown.length} values = nagare query -s ${field}'s (${shown.slice(0, 3).join(', ')})`, `${shown} vs ${want}`);
  const wide = await page.evaluate(() => document.documentElement.scrollWidth);
  check(wide <= w + 1, `page ${w} px: the list fits (${wide} px)`);
  await shot(page, `complete-${field}-${w}`, { fullPage: false });
  check(errors.length === 0, `page ${w} px: no console error`, errors.join('\n'));
  await ctx.close();
}

await h.finish(browser, 'complete', `; screenshots in ${h.args.out}`);
