// visualize.mjs — browser tests of the Visualize page (web/src/pages/
// visualize.js) with playwright-core driving Debian's chromium.
//
//   node tests/web/visualize.mjs --url http://127.0.0.1:PORT/ --bin NAGARE \
//        --store STORE --out DIR
//
// Against the fixture of run.sh (fixture.sh: 2 M flowgen flows of the
// last hour, softflowd, NetFlow v5), to which this adds 100 k flowgen
// flows of a day earlier (for the previous-period overlay).  Each graph
// type draws (inked canvas, legend = N + other, small multiples = N +
// other charts, Sankey edges, table rows); the statistics table's totals
// equal /api/v1/top's bytes for the same keys and range, and "other" the
// rest of /api/v1/summary's; bidirectional draws negative values whose
// totals are /api/v1/top of the reverse field; the previous period is a
// dashed line whose total is /api/v1/summary a day earlier; "% of
// interface speed" is offered disabled; the state survives a reload; no
// console error or unhandled rejection.  Screenshots (visualize-*.png) at
// 1366 and 390 px go to DIR.  Exit 0: all passed; 1: a check failed.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import * as h from './harness.mjs';
import { check, inked, axisOverlaps } from './harness.mjs';

h.init('visualize.mjs');
const { args } = h;
const base = h.base;

// The last 70 minutes, absolute (minutes): the page and the API calls
// here ask for the same range.
const minute = (ms) => new Date(Math.floor(ms / 60e3) * 60e3).toISOString().slice(0, 19) + 'Z';
const now = Date.now();
const FROM = minute(now - 70 * 60e3), TO = minute(now + 60e3);
const RANGE = `from=${encodeURIComponent(FROM)}&to=${encodeURIComponent(TO)}`;

// An API answer; `once`: kept for the next ask of the same query (the
// store of the range does not change while the pages are checked).
const kept = new Map();
async function get(endpoint, params, { once = false } = {}) {
  const u = `${base}/api/v1/${endpoint}?` + new URLSearchParams({ from: FROM, to: TO, ...params });
  if (once && kept.has(u)) return kept.get(u);
  const d = await (await fetch(u)).json();
  if (once) kept.set(u, d);
  return d;
}

// A day earlier: flows for the previous period (flowgen to the
// collector's UDP port, NG_WEB_UDP as in fixture.sh).
const gen = process.env.NG_FLOWGEN || path.join(path.dirname(args.bin), 'bench/flowgen');
const dayAgo = Math.floor(now / 1000) - 86400 - 3600;
if (existsSync(gen)) {
  const count = async () => (await get('summary', { from: new Date((dayAgo - 60) * 1000).toISOString(), to: new Date((dayAgo + 7200) * 1000).toISOString() })).flows;
  const before = await count(), want = before + 100000;
  execFileSync(gen, ['--records', '100000', '--rate', '100000', '--port', process.env.NG_WEB_UDP || '29055',
    '--exporters', '4', '--start', String(dayAgo), '--hours', '1']);
  let got = before;
  for (let i = 0; i < 100 && got < want; i++) {
    await new Promise((r) => setTimeout(r, 200));
    got = await count();
  }
  check(got === want, `flows of a day earlier stored (${got - before} of 100000)`);
} else check(false, `${gen} missing: cmake --build BUILD --target flowgen`);

const browser = await h.launch();

// Opens the Visualize page with query `q` and waits for it; keeps the
// page's /api/v1/series answer (the one call the graph is drawn from).
async function open(q, { width = 1366, height = 900 } = {}) {
  const calls = [];
  let series = null;
  const v = await h.open(browser, `/visualize?${RANGE}&${q}`, {
    width, height, settle: 800, init: (page) => page.on('response', async (r) => {
      const u = new URL(r.url());
      if (!u.pathname.startsWith('/api/v1/') || u.pathname === '/api/v1/fields') return;
      calls.push(u.pathname + u.search);
      if (u.pathname === '/api/v1/series') series = await r.json().catch(() => null);
    }),
  });
  return { ...v, calls, series: () => series };
}

// The chart's legend names and, per series, its smallest value.
const chartInfo = (page, sel) => page.$eval(sel, (e) => {
  const o = e._ngChart.getOption();
  return {
    legend: o.legend[0].data, series: o.series.map((s) => ({ name: s.name, dashed: s.lineStyle && s.lineStyle.type === 'dashed',
      min: Math.min(...s.data.map((p) => p[1])), max: Math.max(...s.data.map((p) => p[1])) })),
  };
});
// The statistics table: name and the exact total of each row.
const statRows = (page) => page.$$eval('.vis-stats tbody tr', (trs) => trs.map((tr) => ({
  name: tr.children[0].textContent.trim(), total: Number(tr.querySelector('[data-total]').dataset.total),
  cells: [...tr.children].slice(1, 5).map((td) => td.textContent.trim()) })));

const shot = (page, name) => h.shot(page, `visualize-${name}`);
const N = 5;

// ---- each graph type, at both widths -------------------------------------
// The time-series graphs of one width share a page: the first is opened,
// the others chosen in its Graph selector, drawn from the same answer
// (an absolute range: not asked again); the Sankey is opened on its own.
for (const [w, ht, tag] of [[1366, 900, 'laptop'], [390, 844, 'phone']]) {
  // at 390 px the graphs whose layout changes with the width
  let v = null;
  for (const graph of tag === 'laptop' ? ['stacked', 'lines', 'multiples', 'table', 'sankey'] : ['stacked', 'multiples', 'sankey']) {
    const dims = graph === 'sankey' ? 'srcas,dstas' : 'dstport';
    const switched = v !== null && graph !== 'sankey';
    if (switched) {
      v.calls.length = 0;
      await v.page.selectOption('#graph', graph);
      await h.ready(v.page, { settle: 800 });
    } else {
      if (v) await v.ctx.close();
      v = await open(`dims=${dims}&n=${N}&graph=${graph}&vunit=bytes`, { width: w, height: ht });
    }
    const { page } = v;
    const name = `${graph}-${tag}`;
    await shot(page, name);
    check(v.errors.length === 0, `${name}: no console error`, v.errors.join('\n  '));
    check(await page.$$eval('.error', (e) => e.length) === 0, `${name}: no error box`);
    const data = v.calls.filter((c) => !c.startsWith('/api/v1/exporters') && !c.startsWith('/api/v1/summary'));
    if (switched) check(data.length === 0 && new URL(page.url()).searchParams.get('graph') === graph, `${name}: chosen in the Graph selector, drawn from the same answer (${data.length} more API calls)`);
    else check(data.length === 1, `${name}: one API call draws it (${data.map((c) => c.split('?')[0]).join(', ')})`);
    if (graph === 'stacked' || graph === 'lines') {
      check(await inked(page, '#vis-chart') > 2000, `${name}: the chart is drawn`);
      const info = await chartInfo(page, '#vis-chart');
      check(info.legend.length === N + 1 && info.legend[N] === 'other', `${name}: legend = top ${N} + other (${info.legend.join(' | ')})`);
      if (tag === 'phone') {
        const over = await axisOverlaps(page, '#vis-chart');
        check(over.length === 0, `${name}: time axis labels apart at 390 px`, over.join(' '));
      }
    } else if (graph === 'multiples') {
      const n = await page.$$eval('.multiple', (e) => e.length);
      check(n === N + 1, `${name}: ${n} small charts = top ${N} + other`);
      check(await inked(page, '.multiple:last-child') > 300, `${name}: the last small chart (other) is drawn`);
    } else if (graph === 'table') {
      const heads = await page.$$eval('.vis-data thead th', (t) => t.map((x) => x.textContent));
      const rows = await page.$$eval('.vis-data tbody tr', (t) => t.length);
      check(heads.length === N + 2 && heads[N + 1] === 'other' && rows >= 60, `${name}: ${rows} buckets × (time + ${heads.length - 1} series)`);
    } else {
      check(await inked(page, '#vis-sankey') > 2000, `${name}: the Sankey is drawn`);
      const edges = await page.$$eval('.vis-edges tbody tr', (t) => t.length);
      const pairs = await get('pairs', { src: 'srcas', dst: 'dstas', limit: N, order: 'bytes' }, { once: true });
      check(edges === pairs.rows.length && edges > 1, `${name}: ${edges} edges = /api/v1/pairs srcas → dstas`);
      const nodes = await page.$eval('#vis-sankey', (e) => e._ngChart.getOption().series[0].data.map((x) => x.name));
      check(nodes.length > 2 && !nodes.some((x) => /other/.test(x)), `${name}: "other" hidden by default (${nodes.length} nodes)`);
    }
    if (graph !== 'sankey') {
      // the statistics: totals = /api/v1/top over the same range
      const rows = await statRows(page);
      const top = await get('top', { field: 'dstport', limit: N, order: 'bytes' }, { once: true });
      const sum = await get('summary', {}, { once: true });
      const tops = rows.slice(0, N).map((r) => r.total), want = top.rows.map((r) => r.bytes);
      check(JSON.stringify(tops) === JSON.stringify(want), `${name}: series totals = /api/v1/top dstport bytes (${want.join(', ')})`, JSON.stringify(tops));
      const rest = sum.bytes - want.reduce((a, b) => a + b, 0);
      check(rows[N] && rows[N].name === 'other' && rows[N].total === rest, `${name}: other's total = summary − top (${rest} bytes)`, JSON.stringify(rows[N]));
      const keys = rows.slice(0, N).map((r) => r.name), wantKeys = top.rows.map((r) => String(r.dstport));
      check(JSON.stringify(keys) === JSON.stringify(wantKeys), `${name}: series = top keys (${wantKeys.join(', ')})`, JSON.stringify(keys));
      // min ≤ average ≤ max, 95th percentile ≤ max, from the API's buckets
      const d = v.series();
      const iv = d.query.interval_s;
      const first = d.rows.filter((r) => r.key === wantKeys[0]).map((r) => r.bytes);
      check(first.length > 0 && rows[0].cells[2] !== '–', `${name}: ${wantKeys[0]}: ${first.length} buckets of ${iv} s (min ${rows[0].cells[0]}, avg ${rows[0].cells[1]}, max ${rows[0].cells[2]}, p95 ${rows[0].cells[3]})`);
    }
  }
  await v.ctx.close();
}

// ---- bidirectional and the previous period ---------------------------------
for (const [w, ht, tag] of [[1366, 900, 'laptop'], [390, 844, 'phone']]) {
  const v = await open(`dims=srcas&n=${N}&bidir=1&prev=1d&vunit=bps`, { width: w, height: ht });
  const { page } = v;
  await shot(page, `bidir-previous-${tag}`);
  check(v.errors.length === 0, `bidir ${tag}: no console error`, v.errors.join('\n  '));
  const data = v.calls.filter((c) => c.startsWith('/api/v1/series'));
  check(data.length === 1 && /bidirectional=1/.test(data[0]) && /previous=1d/.test(data[0]), `bidir ${tag}: one series call with bidirectional=1 and previous=1d`, data.join(' '));
  const info = await chartInfo(page, '#vis-chart');
  const rev = info.series.filter((s) => s.name.startsWith('↺ '));
  check(rev.length === N + 1 && rev.every((s) => s.max <= 0) && rev.some((s) => s.min < 0), `bidir ${tag}: ${rev.length} reverse series below the axis (negative)`);
  const fwd = info.series.filter((s) => !s.name.startsWith('↺ ') && !s.dashed);
  check(fwd.length === N + 1 && fwd.every((s) => s.min >= 0) && fwd.some((s) => s.max > 0), `bidir ${tag}: ${fwd.length} forward series above it`);
  const prev = info.series.filter((s) => s.dashed);
  check(prev.length === 1 && prev[0].max > 0 && /day earlier/.test(prev[0].name), `bidir ${tag}: the previous period: one dashed line (${prev[0] && prev[0].name}, max ${prev[0] && prev[0].max})`);
  if (tag === 'laptop') {
    const rows = await statRows(page);
    const topd = await get('top', { field: 'dstas', limit: N, order: 'bytes' });
    const r = rows.filter((x) => x.name.startsWith('↺ ')).slice(0, N);
    check(JSON.stringify(r.map((x) => x.total)) === JSON.stringify(topd.rows.map((x) => x.bytes)),
      `bidir: reverse totals = /api/v1/top dstas bytes (the reverse of srcas)`, JSON.stringify(r.map((x) => [x.name, x.total])));
    const shift = (t) => new Date(Date.parse(t) - 86400e3).toISOString();
    const psum = await get('summary', { from: shift(FROM), to: shift(TO) });
    const p = rows.find((x) => /day earlier/.test(x.name));
    check(p && p.total === psum.bytes && psum.bytes > 0, `previous: its total = /api/v1/summary a day earlier (${psum.bytes} bytes)`, JSON.stringify(p));
    // % of interface speed: offered, disabled, saying why
    const pct = await page.$eval('#vunit option[value="pct"]', (o) => ({ disabled: o.disabled, title: o.title }));
    check(pct.disabled && /interface speed/.test(pct.title), `% of interface speed: disabled ("${pct.title.slice(0, 60)}…")`);
    // the state is the URL: a reload shows the same view; a dimension added
    await page.reload();
    await page.waitForSelector('#page[data-ready="1"]');
    const st = await page.evaluate(() => ({ dims: document.querySelector('#dims').dataset.dims, bidir: document.querySelector('#bidir').checked, prev: document.querySelector('#prev').value }));
    check(st.dims === 'srcas' && st.bidir && st.prev === '1d', `reload: the same view (${JSON.stringify(st)})`);
    await page.selectOption('#add-dim', 'proto');
    await page.waitForFunction(() => document.querySelector('#page').dataset.ready === '1' && document.querySelector('#dims')?.dataset.dims === 'srcas,proto', null, { timeout: 20000 });
    check(new URL(page.url()).searchParams.get('dims') === 'srcas,proto', `add a dimension: the URL says dims=srcas,proto`);
    check(v.errors.length === 0, 'bidir: no console error after the interactions', v.errors.join('\n  '));
  }
  await v.ctx.close();
}

// ---- a bad parameter: the page shows the API's 400 ------------------------
{
  const v = await open('dims=nosuchfield&n=5');
  const msg = await page$text(v.page, '.error');
  check(/unknown group-by field/.test(msg), `unknown dimension: the API's error shown (${msg.slice(0, 60)})`);
  await v.ctx.close();
}
async function page$text(page, sel) {
  const e = await page.$(sel);
  return e ? (await e.textContent()) : '';
}

await h.finish(browser, 'visualize', `; screenshots in ${args.out}`);
