// dashboards.mjs — browser tests of the web dashboards (web/) with
// playwright-core driving Debian's chromium (headless).
//
//   node tests/web/dashboards.mjs --url http://127.0.0.1:PORT/ --bin NAGARE \
//        --store STORE --out DIR
//
// Against a store of known flows (tests/web/fixture.sh): every page loads
// without a console error; the totals and top rows shown equal
// `nagare query --format json` for the same range; the Sankey and the
// world map draw something; a bad filter shows its error and column; a
// copied URL reopens the same view.  Screenshots of every page, at laptop
// and phone widths, go to DIR.  Exit 0: all passed; 1: a check failed.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as h from './harness.mjs';
import { FROM, TO, RANGE, check, inked, axisOverlaps, cells, shot } from './harness.mjs';

h.init('dashboards.mjs');
const { args } = h;
const base = h.base;
const cli = (...a) => h.cli(a);
const browser = await h.launch();
const open = (rel, o) => h.open(browser, rel, o);
const ready = (page) => h.ready(page, { timeout: 15000 });

// Protocols by name (IANA), as a user reads them.
const PROTO = { 1: 'ICMP', 6: 'TCP', 17: 'UDP', 41: 'IPv6', 47: 'GRE', 50: 'ESP', 58: 'ICMPv6', 89: 'OSPF', 132: 'SCTP' };
const protoLabel = (v) => PROTO[v] ? `${PROTO[v]} (${v})` : String(v);


const sum = cli('-s', 'proto', '-n', '1').summary;
console.log(`fixture: ${sum.flows} flows, ${sum.packets} packets, ${sum.bytes} bytes in [${FROM}, ${TO})`);
check(sum.flows > 0, 'the fixture store holds flows');

const PAGES = ['/', '/top', '/flows', '/geo', '/as', '/exporters', '/explorer'];
// Every page at both widths: no console error or unhandled rejection, no
// error box anywhere (panels too), every chart drawn (the store has data
// for each), the time axis labels apart at phone width.
for (const p of PAGES) {
  for (const [w, ht, tag] of [[1366, 900, 'laptop'], [390, 844, 'phone']]) {
    const { page, ctx, errors, outside } = await open(`${p}?${RANGE}`, { width: w, height: ht });
    const name = (p === '/' ? 'overview' : p.slice(1)) + '-' + tag;
    await shot(page, name);
    check(errors.length === 0, `${name}: no console error`, errors.join('\n  '));
    check(outside.length === 0, `${name}: no request leaves the machine`, outside.join(' '));
    const alert = await page.$$eval('.error', (es) => es.map((e) => e.textContent).join(' | '));
    check(alert === '', `${name}: no error box`, alert);
    const charts = await page.$$eval('#page .chart', (cs) => cs.map((c) => '#' + c.id));
    for (const c of charts) {
      const ink = await inked(page, c);
      check(ink > 300, `${name}: chart ${c} drawn (${ink} px inked)`);
    }
    const empty = await page.$$eval('#page .empty', (es) => es.map((e) => e.textContent.trim().slice(0, 80)));
    check(empty.length === 0, `${name}: no empty-state message`, empty.join(' | '));
    if (tag === 'phone') {
      const wide = await page.evaluate(() => document.documentElement.scrollWidth);
      check(wide <= w + 1, `${name}: fits the phone width (${wide} px)`);
      for (const c of charts) {
        const over = await axisOverlaps(page, c);
        if (over !== null) check(over.length === 0, `${name}: ${c} time axis labels apart`, over.join(' '));
      }
    }
    await ctx.close();
  }
}

// Overview: the totals are the store's.
{
  const { page, ctx } = await open(`/?${RANGE}`);
  for (const k of ['bytes', 'packets', 'flows']) {
    const v = Number(await page.getAttribute(`#total-${k}`, 'data-value'));
    check(v === sum[k], `overview: total ${k} ${v} = nagare query's ${sum[k]}`);
  }
  const top = cli('-s', 'srcip/bytes', '-n', '5');
  const shown = await cells(page, '.top5[data-field="srcip"]');
  check(JSON.stringify(shown) === JSON.stringify(top.rows.map((r) => r.srcip)), 'overview: top 5 sources = nagare query -s srcip/bytes -n 5', `${shown} vs ${top.rows.map((r) => r.srcip)}`);
  check(await inked(page, '#by-proto') > 500, 'overview: traffic by protocol chart drawn');
  await ctx.close();
}

// Top-N: the table is nagare query's top N, for several fields and units.
for (const [field, unit, key] of [['srcip', 'bytes', 'srcip'], ['dstport', 'packets', 'dstport'], ['proto', 'flows', 'proto'], ['conv', 'bytes', null]]) {
  const { page, ctx } = await open(`/top?${RANGE}&field=${field}&unit=${unit}`);
  const exp = cli('-s', `${field}/${unit}`, '-n', '10');
  const shown = await cells(page, '.top-table');
  const want = exp.rows.map((r) => key === 'proto' ? protoLabel(r.proto) : key ? String(r[key]) : exp.query.keys.map((k) => r[k] === '' ? '(unknown)' : k === 'proto' ? protoLabel(r[k]) : r[k]).join(' ↔ '));
  check(JSON.stringify(shown) === JSON.stringify(want), `top: ${field} by ${unit}: ${shown.length} rows = nagare query -s ${field}/${unit} -n 10`, `${shown} vs ${want}`);
  check(await inked(page, '#bars') > 300, `top: ${field} bar chart drawn`);
  await ctx.close();
}

// Flows: the Sankey draws (its stages, other, labels and clicks: sankey.mjs).
{
  const { page, ctx } = await open(`/flows?${RANGE}&stages=srcip,dstip`);
  const ink = await page.$$eval('#sankey svg path', (p) => p.length);
  check(ink > 10, `flows: the Sankey is drawn (${ink} paths)`);
  await page.selectOption('#stages-preset', 'proto,dstport');
  await ready(page);
  check(new URL(page.url()).searchParams.get('stages') === 'proto,dstport', 'flows: the preset protocol → destination port is applied');
  await shot(page, 'flows-port-laptop');
  await ctx.close();
}

// Pixels of the canvases under `sel` clearly blue (the map's shading).
async function blue(page, sel) {
  return page.evaluate((sel) => {
    let n = 0;
    for (const c of document.querySelectorAll(sel + ' canvas')) {
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      for (let i = 0; i < d.length; i += 4) if (d[i + 3] > 200 && d[i + 2] > d[i] + 60) n++;
    }
    return n;
  }, sel);
}

// Geo: the world map is drawn and shaded, its table is nagare query's
// countries, a click on a country filters on it.
{
  const { page, ctx } = await open(`/geo?${RANGE}`);
  const ink = await inked(page, '#map');
  check(ink > 20000, `geo: the world map is drawn (${ink} px inked)`);
  const exp = cli('-s', 'srccountry/bytes', '-n', '300');
  const known = exp.rows.filter((r) => r.srccountry);
  const codes = await cells(page, '.geo-table');
  check(JSON.stringify(codes) === JSON.stringify(exp.rows.map((r) => r.srccountry)), `geo: countries table = nagare query -s srccountry/bytes (${codes.filter(Boolean)})`);
  if (known.length) {
    const shaded = await blue(page, '#map');
    check(shaded > 500, `geo: ${known.length} countries shaded (${shaded} px)`);
    // Great Britain's centre on the map, clicked: the filter gets it.
    const gb = known.find((r) => r.srccountry === 'GB');
    if (gb) {
      const xy = await page.$eval('#map', (e) => e._ngChart.convertToPixel({ seriesIndex: 0 }, [-1.5, 52.5]));
      const box = await page.$eval('#map', (e) => { const r = e.getBoundingClientRect(); return [r.x, r.y]; });
      await page.mouse.click(box[0] + xy[0], box[1] + xy[1]);
      await ready(page);
      const f = await page.$eval('#filter', (e) => e.value);
      const codes2 = await cells(page, '.geo-table');
      check(f === 'src country GB' && JSON.stringify(codes2) === '["GB"]', `geo: a click on Great Britain filters "${f}" → ${codes2}`);
      await shot(page, 'geo-clicked-gb-laptop');
      // a second country replaces the first (AND of two would match nothing)
      const us = await page.$eval('#map', (e) => e._ngChart.convertToPixel({ seriesIndex: 0 }, [-98, 39]));
      await page.mouse.click(box[0] + us[0], box[1] + us[1]);
      await ready(page);
      const f2 = await page.$eval('#filter', (e) => e.value);
      check(f2 === 'src country US', `geo: a second click, on the United States, replaces it: "${f2}"`);
    }
  } else console.log('geo: no country in the fixture (no test databases): shading not checked');
  await ctx.close();
}

// AS traffic: the top source ASes and their names are nagare query's.
{
  const { page, ctx } = await open(`/as?${RANGE}`);
  const exp = cli('-s', 'srcas,srcasname/bytes', '-n', '10');
  const as = await page.$$eval('.as-table', (t) => [...t[0].querySelectorAll('tbody tr')].map((tr) => tr.children[0].textContent + ' ' + tr.children[1].textContent));
  const want = exp.rows.map((r) => `${r.srcas} ${r.srcasname || (Number(r.srcas) === 0 ? '(none: private or unknown)' : '')}`);
  check(JSON.stringify(as) === JSON.stringify(want), `as: top source ASes with names = nagare query -s srcas,srcasname/bytes (${as.slice(0, 3).join('; ')})`, `${as} vs ${want}`);
  check(await inked(page, '#as-series') > 500, 'as: traffic over time per AS drawn');
  await ctx.close();
}

// Exporters: the fixture's exporters (softflowd and v5gen on 127.0.0.1,
// flowgen's 16 on 127.0.1.x), records over 1000 formatted.
{
  const { page, ctx } = await open(`/exporters?${RANGE}`);
  const ex = await cells(page, '.exporters-table');
  const gen = ex.filter((e) => /^127\.0\.1\.\d+$/.test(e));
  check(ex.includes('127.0.0.1') && gen.length === (sum.flows > 1e6 ? 16 : 0), `exporters: 127.0.0.1 and ${gen.length} flowgen exporters listed (${ex.length} rows)`);
  // every exporter counter a user acts on has its column: restarts (issue 18)
  const heads = await page.$$eval('.exporters-table thead th', (ths) => ths.map((th) => th.textContent.trim()));
  const ri = heads.indexOf('restarts'), rec = heads.indexOf('records');
  const rs = ri < 0 ? [] : await cells(page, '.exporters-table', ri);
  check(ri >= 0 && rs[ex.indexOf('127.0.0.1')] === '0', `exporters: a restarts column, 0 for the fixture's softflowd (${heads.join(', ')}: ${rs})`);
  // the implausible-value and vendor-quirk counters (issue 18): one column,
  // "–" for an exporter with none, else "name N" lines
  const qi = heads.indexOf('values / quirks');
  const qs = qi < 0 ? [] : await cells(page, '.exporters-table', qi);
  check(qi >= 0 && qs.length === ex.length && qs.every((q) => q === '–' || /^([a-z ]+ [\d.,]+ ?[kMG]?\s*)+$/.test(q)), `exporters: a values / quirks column, "–" or counters (${qs.slice(0, 3)})`);
  const recs = rec < 0 ? [] : await cells(page, '.exporters-table', rec);
  check(recs.some((v) => / [kM]$/.test(v)), `exporters: records in thousands shown as such (${recs.slice(0, 4)})`);
  await ctx.close();
}

// Explorer: the count, a page of flows, a bad filter's error and column.
{
  const { page, ctx, errors } = await open(`/explorer?${RANGE}`);
  const count = await page.textContent('#flow-count');
  check(count.replace(/\D/g, '') === String(sum.flows), `explorer: "${count}" = ${sum.flows} flows`);
  const rows = await cells(page, '.flow-table');
  check(rows.length === Math.min(50, sum.flows), `explorer: a page of ${rows.length} flows`);
  const heads = await page.$$eval('.flow-table thead th', (ths) => ths.map((th) => th.textContent.trim()));
  const protos = await cells(page, '.flow-table', heads.indexOf('proto'));
  const flags = await cells(page, '.flow-table', heads.indexOf('flags'));
  check(protos.every((v) => /^[A-Za-z]/.test(v)) || protos.every((v) => /\(\d+\)$/.test(v)), `explorer: protocols by name (${[...new Set(protos)].slice(0, 4)})`);
  check(flags.every((v) => /^[.CEUAPRSF]{8}$|^$/.test(v)), `explorer: TCP flags as letters (${[...new Set(flags)].slice(0, 4)})`);
  const csv = await page.getAttribute('a.button:text("CSV")', 'href');
  const r = await fetch(base + csv);
  const body = await r.text();
  const want = Math.min(sum.flows, 10000);
  check(r.ok && body.split('\n').filter(Boolean).length === want + 1, `explorer: the CSV download holds ${want} flows and a header`);
  await page.fill('#filter', 'proto udp');
  await page.click('button[type=submit]');
  await ready(page);
  const udp = cli('-s', 'proto', '-n', '1', 'proto udp').summary.flows;
  const c2 = await page.textContent('#flow-count');
  check(c2.replace(/\D/g, '') === String(udp) && page.url().includes('filter=proto+udp'), `explorer: filter "proto udp": "${c2}" = nagare query's ${udp}`);
  await page.fill('#filter', 'src port http');
  await page.click('button[type=submit]');
  await ready(page);
  const err = await page.textContent('#filter-error');
  check(/bad filter at column \d+/.test(err) && err.split('^').length === 2, `explorer: a bad filter shows its error and one caret: ${err.replace(/\s+/g, ' ').slice(0, 120)}`);
  const caretCol = await page.$eval('#filter-error pre', (e) => e.textContent.split('\n')[1].indexOf('^') + 1).catch(() => 0);
  check(caretCol === 10, `explorer: the caret under column 10 ('http') (${caretCol})`);
  await shot(page, 'explorer-bad-filter-laptop');
  const real = errors.filter((e) => !/status of 400/.test(e));
  check(real.length === 0, 'explorer: no console error but the 400 of the bad filter', real.join(' '));
  await ctx.close();
}

// Explorer over a live range: page 2 and the downloads are of the range
// on screen (pinned), not of a later "now".
{
  const { page, ctx } = await open('/explorer?from=-1h');
  const csv = new URL(base + await page.getAttribute('a.button:text("CSV")', 'href'));
  const nd = new URL(base + await page.getAttribute('a.button:text("NDJSON")', 'href'));
  const abs = (v) => /^\d{4}-\d\d-\d\dT/.test(v || '');
  check(abs(csv.searchParams.get('from')) && abs(csv.searchParams.get('to')) && abs(nd.searchParams.get('to')),
    `explorer: downloads pinned to the range shown (${csv.searchParams.get('from')} → ${csv.searchParams.get('to')})`);
  const first = await cells(page, '.flow-table');
  await page.click('#next');
  await ready(page);
  const u = new URL(page.url());
  check(u.searchParams.get('from') === csv.searchParams.get('from') && u.searchParams.get('to') === csv.searchParams.get('to') && u.searchParams.get('offset') === '50',
    `explorer: page 2 keeps the range of page 1 (${u.search})`);
  const second = await cells(page, '.flow-table');
  check(second.length === 50 && second.join() !== first.join(), 'explorer: page 2 is another 50 flows');
  await ctx.close();
}

// Empty results: a filter matching nothing says so, not "point an exporter".
{
  const { page, ctx } = await open(`/top?${RANGE}&filter=${encodeURIComponent('proto 253')}`);
  const msg = await page.textContent('#page');
  check(/No flows match this filter in this range/.test(msg) && !/udp\/2055|No flows yet/.test(msg), `empty: "${msg.trim().replace(/\s+/g, ' ').slice(0, 90)}"`);
  await ctx.close();
}

// A store with no flows at all: only then the page says to point an
// exporter at the collector, at the addresses `nagare collect` listens on
// (its /api/v1/exporters "listen"); `nagare serve` names --listen.
async function emptyStore(cmd, extra, want, name) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ng-web-empty.'));
  mkdirSync(path.join(dir, 'store', 'flows'), { recursive: true });
  const srv = spawn(args.bin, [cmd, '--store', path.join(dir, 'store'), '--http', '127.0.0.1:0', ...extra], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  const url = await new Promise((res) => {
    const t = setTimeout(() => res(null), 10000);
    const on = (b) => { log += b; const m = /http:\/\/127\.0\.0\.1:\d+\//.exec(log); if (m) { clearTimeout(t); res(m[0]); } };
    srv.stdout.on('data', on); srv.stderr.on('data', on);
  });
  check(url !== null, `empty store: nagare ${cmd} answers (${url})`, log);
  if (url) {
    const ctx = await browser.newContext({ viewport: { width: 1366, height: 900 } });
    const page = await ctx.newPage();
    await page.goto(url + 'top');
    await ready(page);
    const msg = (await page.textContent('#page')).replace(/\s+/g, ' ');
    const at = msg.indexOf('No flows');
    check(/No flows yet/.test(msg) && want.test(msg), `empty store, nagare ${cmd}: "${msg.slice(at, at + 110)}"`);
    await page.screenshot({ path: path.join(args.out, name + '.png'), fullPage: true });
    await ctx.close();
  }
  srv.kill();
  await new Promise((res) => srv.exitCode !== null ? res() : srv.on('exit', res));
  rmSync(dir, { recursive: true, force: true });
}
await emptyStore('serve', [], /nagare collect --listen/, 'top-empty-serve-laptop');
await emptyStore('collect', ['--listen', '127.0.0.1:29056', '--listen', '127.0.0.1:29343'], /127\.0\.0\.1:29056.*127\.0\.0\.1:29343/, 'top-empty-collect-laptop');

// The 30-s live refresh keeps the controls: a filter being typed and the
// keyboard focus survive it; a dropdown change keeps focus too.
{
  const { page, ctx, errors } = await open('/top?from=-1h');
  await page.focus('#filter');
  await page.keyboard.type('proto tc');
  const before = await page.$eval('#page', (e) => e.dataset.gen);
  await page.evaluate(() => window.dispatchEvent(new Event('ng-refresh')));
  const again = await page.waitForFunction((g) => document.querySelector('#page').dataset.gen !== g && document.querySelector('#page').dataset.ready === '1', before, { timeout: 15000 }).then(() => true, () => false);
  check(again, 'refresh: the live refresh re-rendered the page');
  const st = await page.evaluate(() => ({ v: document.getElementById('filter').value, f: document.activeElement.id }));
  check(st.v === 'proto tc' && st.f === 'filter', `refresh: the typed filter and focus kept (${JSON.stringify(st)})`);
  await page.focus('#unit');
  await page.selectOption('#unit', 'packets');
  await ready(page);
  const f2 = await page.evaluate(() => document.activeElement.id);
  check(f2 === 'unit' && page.url().includes('unit=packets'), `controls: a unit change keeps focus on it (${f2})`);
  await page.focus('#n');
  await page.selectOption('#n', '20');
  await ready(page);
  const f3 = await page.evaluate(() => document.activeElement.id);
  check(f3 === 'n', `top: a Top-N change keeps focus on it (${f3})`);
  await page.focus('.tab[data-field="dstport"]');
  await page.keyboard.press('Enter');
  await ready(page);
  const f4 = await page.evaluate(() => document.activeElement.dataset.field || document.activeElement.tagName);
  check(f4 === 'dstport' && page.url().includes('field=dstport'), `top: a tab chosen by keyboard keeps focus (${f4})`);
  check(errors.length === 0, 'refresh: no console error', errors.join(' '));
  await ctx.close();
}

// The last hour at phone width: the time axis labels (every 5 min or so)
// stay apart.
{
  const { page, ctx } = await open('/?from=-1h', { width: 390, height: 844 });
  for (const c of ['#by-proto', '#by-service']) {
    const over = await axisOverlaps(page, c);
    check(over !== null && over.length === 0, `overview, last hour, 390 px: ${c} time axis labels apart`, over && over.join(' '));
  }
  await shot(page, 'overview-live-phone');
  await ctx.close();
}

// One page's parameters do not follow to the next.
{
  const { page, ctx } = await open(`/top?${RANGE}&n=50&field=dstport`);
  await page.click('nav a[data-path="/flows"]');
  await ready(page);
  const u = new URL(page.url());
  check(!u.searchParams.has('n') && !u.searchParams.has('field') && u.searchParams.get('from') === FROM, `nav: Top-N's n and field stay behind (${u.search})`);
  await page.selectOption('#stages-preset', 'proto,dstport');
  await ready(page);
  await page.click('nav a[data-path="/geo"]');
  await ready(page);
  check(!new URL(page.url()).searchParams.has('stages'), `nav: Flows' stages stay behind (${new URL(page.url()).search})`);
  await ctx.close();
}

// An absolute range chosen is applied: the URL and the query follow.
{
  const { page, ctx } = await open('/top');
  await page.selectOption('#preset', 'abs');
  await ready(page);
  const u = new URL(page.url());
  const abs = (v) => /^\d{4}-\d\d-\d\dT\d\d:\d\d/.test(v || '');
  check(abs(u.searchParams.get('from')) && abs(u.searchParams.get('to')), `range: "absolute…" applies a range (${u.search})`);
  const live = await page.textContent('#live');
  check(!/live/.test(live), 'range: an absolute range is not live');
  await ctx.close();
}

// A copied URL reopens the same view.
{
  const { page, ctx } = await open(`/top?${RANGE}`);
  await page.click('.tab[data-field="dstport"]');
  await ready(page);
  await page.selectOption('#unit', 'packets');
  await ready(page);
  await page.fill('#filter', 'proto tcp');
  await page.click('button[type=submit]');
  await ready(page);
  const url = page.url();
  const before = await cells(page, '.top-table', 1);
  const keys = await cells(page, '.top-table', 0);
  await ctx.close();
  const again = await open(url.replace(base, ''));
  const after = await cells(again.page, '.top-table', 1);
  const active = await again.page.textContent('.tab.active');
  const unit = await again.page.$eval('#unit', (e) => e.value);
  const filt = await again.page.$eval('#filter', (e) => e.value);
  check(JSON.stringify(before) === JSON.stringify(after) && active === 'destination ports' && unit === 'packets' && filt === 'proto tcp',
    `shared URL reopens the view (${url.replace(base, '')})`);
  const exp = cli('-s', 'dstport/packets', '-n', '10', 'proto tcp');
  check(JSON.stringify(keys) === JSON.stringify(exp.rows.map((r) => String(r.dstport))), 'shared view = nagare query -s dstport/packets "proto tcp"', `${keys}`);
  await shot(again.page, 'top-shared-url-laptop');
  await again.ctx.close();
}

await h.finish(browser, 'dashboards', `; screenshots in ${args.out}`);
