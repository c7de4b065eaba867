// sankey.mjs — browser tests of the Flows page's Sankey and of the
// click-through of every page (issue 20 parts 3 and 7), with
// playwright-core driving Debian's chromium (headless).
//
//   node tests/web/sankey.mjs --url http://127.0.0.1:PORT/ --bin NAGARE \
//        --store STORE --out DIR
//
// Against the fixture's store (tests/web/fixture.sh: 2 M flowgen flows of
// the last hour, softflowd, v5): the 3-stage API answer equals `nagare
// query` top-Ns and pairs; the page draws N nodes a stage with "other"
// hidden (the edges then fill the height) and shown by its toggle; no two
// labels' boxes overlap at 1366 and 390 px, a truncated one has its full
// text in the tooltip; a click on a node, an edge, a bar, a series or a
// table row of every page makes a filter the API accepts (the page shows
// data), and the "flows" links open the explorer on as many flows as the
// aggregate.  No console errors.  Screenshots DIR/sankey-*.png.
// Exit 0: all passed; 1: a check failed.
import path from 'node:path';
import * as h from './harness.mjs';
import { RANGE, FROM, TO, check } from './harness.mjs';

h.init('sankey.mjs');
const { args } = h;
const base = h.base;
const N = 10;
const cli = (...a) => h.cli(a);
const flowsOf = (filter) => cli('-s', 'proto', '-n', '1', ...(filter ? [filter] : [])).summary.flows;

async function api(rel) {
  const r = await fetch(base + rel);
  return { status: r.status, body: await r.json() };
}

const browser = await h.launch();
const open = (rel, o) => h.open(browser, rel, { settle: 900, ...o });
const ready = (page) => h.ready(page, { settle: 900 });

// The page shows data: no error box, no filter error, some table row or chart.
async function showsData(page) {
  return page.evaluate(() => {
    const p = document.getElementById('page');
    const fe = document.getElementById('filter-error');
    return !p.querySelector('.error') && !(fe && fe.textContent.trim()) && !p.querySelector('[data-no-flows]') &&
      (p.querySelectorAll('tbody tr').length > 0 || p.querySelectorAll('canvas, svg').length > 0);
  });
}
const filterOf = (page) => new URL(page.url()).searchParams.get('filter') || '';

// The Sankey's layout as drawn: nodes (name, depth, box in page
// pixels), edges (source, target, page midpoint, width), the labels'
// boxes (SVG text), the chart's box.
async function sankey(page) {
  await page.$eval('#sankey', (e) => e.scrollIntoView({ block: 'center' }));
  return page.$eval('#sankey', (e) => {
    const c = e._ngChart, box = e.getBoundingClientRect();
    const s = c.getModel().getSeriesByIndex(0), data = s.getData();
    const li = s.layoutInfo || { x: 8, y: 8, height: box.height - 16 };
    const nodes = [];
    for (let i = 0; i < data.count(); i++) {
      const l = data.getItemLayout(i);
      nodes.push({ name: data.getName(i), depth: data.getItemModel(i).get('depth'), x: box.left + li.x + l.x, y: box.top + li.y + l.y, dx: l.dx, dy: l.dy });
    }
    const edges = s.getGraph().edges.map((ed) => {
      const a = ed.node1.getLayout(), b = ed.node2.getLayout(), l = ed.getLayout();
      const x1 = a.x + a.dx, y1 = a.y + l.sy + l.dy / 2, x2 = b.x, y2 = b.y + l.ty + l.dy / 2;
      return { source: ed.node1.id, target: ed.node2.id, dy: l.dy, mx: box.left + li.x + (x1 + x2) / 2, my: box.top + li.y + (y1 + y2) / 2 };
    });
    const labels = [...e.querySelectorAll('svg text')].filter((t) => t.textContent.trim() && getComputedStyle(t).display !== 'none' && t.getAttribute('opacity') !== '0')
      .map((t) => { const r = t.getBoundingClientRect(); return { text: t.textContent, l: r.left, r: r.right, t: r.top, b: r.bottom }; })
      .filter((r) => r.r > r.l);
    return { nodes, edges, labels, box: { l: box.left, r: box.right, t: box.top, b: box.bottom }, height: li.height };
  });
}

function overlaps(labels) {
  const bad = [];
  for (let i = 0; i < labels.length; i++)
    for (let j = i + 1; j < labels.length; j++) {
      const a = labels[i], b = labels[j];
      if (a.l < b.r - 0.5 && b.l < a.r - 0.5 && a.t < b.b - 0.5 && b.t < a.b - 0.5) bad.push(`"${a.text}"/"${b.text}"`);
    }
  return bad;
}
const outside = (sk) => sk.labels.filter((x) => x.l < sk.box.l - 1 || x.r > sk.box.r + 1 || x.t < sk.box.t - 1 || x.b > sk.box.b + 1).map((x) => x.text);
const isOther = (name) => name.endsWith('|\u0000other');
const perDepth = (nodes) => nodes.reduce((a, x) => { a[x.depth] = (a[x.depth] || 0) + 1; return a; }, {});

const STAGES = ['srcas', 'exporter', 'dstas'];
const sum = cli('-s', 'proto', '-n', '1').summary;
console.log(`fixture: ${sum.flows} flows in [${FROM}, ${TO})`);

// ---- the API: one call, three stages, equal to nagare query -----------
{
  const { status, body: d } = await api(`/api/v1/pairs?${RANGE}&fields=${STAGES.join(',')}&limit=${N}&order=bytes`);
  check(status === 200 && d.stages.length === 3, `api: 3-stage pairs answers (${status})`);
  STAGES.forEach((f, j) => {
    const top = cli('-s', `${f}/bytes`, '-n', String(N)).rows;
    const nodes = d.stages[j].nodes.filter((x) => !x.other);
    check(JSON.stringify(nodes.map((x) => [String(x.key), x.bytes, x.flows])) === JSON.stringify(top.map((r) => [String(r[f]), r.bytes, r.flows])),
      `api: stage ${f}: ${nodes.length} nodes = nagare query -s ${f}/bytes -n ${N}`);
    const all = d.stages[j].nodes.reduce((a, x) => a + x.bytes, 0);
    check(all === sum.bytes, `api: stage ${f} adds up to the range's bytes (${all} = ${sum.bytes})`);
  });
  // a link between two top nodes = that pair's total (nagare query --pairs)
  const pairs = cli('--pairs', 'srcas,exporter', '-n', '100000', '-O', 'bytes').rows;
  const l = d.rows.find((r) => r.stage === 0 && !r.source_other && !r.target_other);
  const p = pairs.find((r) => String(r.source) === String(l.source) && String(r.target) === String(l.target));
  check(p && p.bytes === l.bytes && p.flows === l.flows, `api: link ${l.source} → ${l.target} = nagare query --pairs srcas,exporter (${l.bytes} bytes)`);
  const two = await api(`/api/v1/pairs?${RANGE}&src=srcas&dst=dstas&limit=5`);
  check(two.status === 200 && two.body.rows.length >= 5 && 'source' in two.body.rows[0] && !two.body.stages, 'api: the src/dst form answers as before');
}

// ---- the page at 1366 px: N nodes a stage, other hidden, fills the height
let firstNode = null;
{
  const { page, ctx, errors } = await open(`/flows?${RANGE}`);
  const sk = await sankey(page);
  const per = perDepth(sk.nodes);
  check(per[0] === N && per[1] === N && per[2] === N && !sk.nodes.some((x) => isOther(x.name)),
    `flows: 3 stages of ${N} nodes, no "other" by default (${JSON.stringify(per)})`);
  const used = [0, 1, 2].map((j) => { const ns = sk.nodes.filter((x) => x.depth === j); return ns.reduce((a, x) => a + x.dy, 0) + 8 * (ns.length - 1); });
  const fill = Math.max(...used) / sk.height;
  check(fill > 0.97, `flows: with other hidden the tallest stage fills the height (${(fill * 100).toFixed(1)} %)`);
  const thin = sk.edges.filter((x) => x.dy < 0.5).length;
  check(sk.edges.length > 0, `flows: ${sk.edges.length} edges drawn, ${thin} thinner than half a pixel`);
  const over = overlaps(sk.labels);
  check(sk.labels.length >= N && over.length === 0, `flows 1366 px: ${sk.labels.length} labels, none overlapping`, over.join(' '));
  check(outside(sk).length === 0, 'flows 1366 px: every label inside the chart', outside(sk).join(' '));
  const title = await page.$eval('#page h2', (h) => h.textContent);
  check(/other \(\d+ % of bytes\) hidden/.test(title), `flows: the title says other is hidden ("${title}")`);
  await page.screenshot({ path: path.join(args.out, 'sankey-3stage-laptop.png'), fullPage: true });

  // the toggle shows other at every stage
  await page.click('#other');
  await ready(page);
  const sk2 = await sankey(page);
  const others = sk2.nodes.filter((x) => isOther(x.name)).map((x) => x.depth).sort();
  check(new URL(page.url()).searchParams.get('other') === '1' && others.join() === '0,1,2', `flows: "show other" adds other to each stage (${others})`);
  const over2 = overlaps(sk2.labels);
  check(over2.length === 0, `flows with other: ${sk2.labels.length} labels, none overlapping`, over2.join(' '));
  await page.screenshot({ path: path.join(args.out, 'sankey-other-laptop.png'), fullPage: true });
  await page.click('#other');
  await ready(page);
  check(!(await sankey(page)).nodes.some((x) => isOther(x.name)), 'flows: unticked, other is hidden again');

  // a click on a node: its term
  const n0 = sk.nodes.filter((x) => x.depth === 0).sort((a, b) => b.dy - a.dy)[0];
  firstNode = n0.name.split('|')[1];
  await page.mouse.click(n0.x + n0.dx / 2, n0.y + n0.dy / 2);
  await ready(page);
  check(filterOf(page) === `src as ${firstNode}`, `flows: a click on node AS ${firstNode} filters "${filterOf(page)}"`);
  check(await showsData(page), 'flows: the filtered Sankey shows data');
  const sk3 = await sankey(page);
  const per3 = perDepth(sk3.nodes);
  check(per3[0] === 1 && per3[1] >= 1, `flows: filtered on one source AS, stage 1 has one node (${JSON.stringify(per3)})`);
  check(errors.length === 0, 'flows: no console errors', errors.join('\n'));
  await ctx.close();
}

// a click on an edge: both ends' terms; the edges table's flows link opens the explorer on the edge's flows
{
  const { page, ctx } = await open(`/flows?${RANGE}`);
  const sk = await sankey(page);
  const e = sk.edges.filter((x) => x.source.startsWith('0|')).sort((a, b) => b.dy - a.dy)[0];
  await page.mouse.move(e.mx, e.my);
  await page.waitForTimeout(300);
  await page.mouse.click(e.mx, e.my);
  await ready(page);
  const want = `src as ${e.source.split('|')[1]} and exporter ${e.target.split('|')[1]}`;
  check(filterOf(page) === want, `flows: a click on the edge ${e.source} → ${e.target} filters "${filterOf(page)}"`, `want "${want}"`);
  check(await showsData(page), 'flows: the edge-filtered page shows data');
  await ctx.close();
}
{
  const { page, ctx } = await open(`/flows?${RANGE}`);
  const row = await page.$eval('.pairs-table tbody tr[data-term]', (tr) => ({ term: tr.dataset.term, flows: tr.children[5].textContent }));
  const d = (await api(`/api/v1/pairs?${RANGE}&fields=${STAGES.join(',')}&limit=${N}&order=bytes`)).body;
  const first = d.rows.filter((r) => !r.source_other && !r.target_other)[0];
  await page.click('.pairs-table tbody tr[data-term] a.flows-link');
  await ready(page);
  const u = new URL(page.url());
  const count = Number((await page.$eval('#flow-count', (x) => x.title)));
  check(u.pathname === '/explorer' && u.searchParams.get('filter') === row.term && count === first.flows && count === flowsOf(row.term),
    `flows → explorer: "${row.term}": ${count} flows = the edge's ${first.flows} = nagare query`);
  await page.screenshot({ path: path.join(args.out, 'sankey-explorer-laptop.png'), fullPage: true });
  await ctx.close();
}

// ---- 390 px: labels apart, cut with the full text in the tooltip -------
{
  const { page, ctx, errors } = await open(`/flows?${RANGE}&stages=srccountry,exporter,dstcountry`, { width: 390, height: 844 });
  let sk = await sankey(page);
  let over = overlaps(sk.labels);
  check(sk.labels.length > 0 && over.length === 0 && outside(sk).length === 0, `flows 390 px, countries: ${sk.labels.length} labels apart and inside`, over.concat(outside(sk)).join(' '));
  await page.screenshot({ path: path.join(args.out, 'sankey-country-phone.png'), fullPage: true });
  await page.goto(`${base}/flows?${RANGE}&stages=srcip,exporter,dstip`);
  await ready(page);
  sk = await sankey(page);
  over = overlaps(sk.labels);
  check(sk.labels.length > 0 && over.length === 0 && outside(sk).length === 0, `flows 390 px, address → exporter → address: ${sk.labels.length} labels apart and inside`, over.concat(outside(sk)).join(' '));
  const cut = sk.labels.find((x) => x.text.endsWith('…'));
  if (cut) {
    // its node: beside it (a label is right of its node, or left in the last column), level with it
    const node = sk.nodes.find((x) => Math.abs(x.y + x.dy / 2 - (cut.t + cut.b) / 2) < 3 &&
      (Math.abs(cut.l - (x.x + x.dx)) < 12 || Math.abs(cut.r - x.x) < 12));
    if (node) {
      await page.mouse.move(node.x + node.dx / 2, node.y + node.dy / 2);
      await page.waitForTimeout(400);
      // ECharts' tooltip: the chart's div that is not its SVG's
      const tip = await page.evaluate(() => [...document.querySelectorAll('#sankey > div')].filter((d) => !d.querySelector('svg') && d.style.display !== 'none').map((d) => d.textContent).join(' '));
      const full = node.name.split('|')[1];
      check(tip.includes(full) && !cut.text.includes(full), `flows 390 px: label "${cut.text}" cut, the tooltip has "${full}"`, tip);
    } else check(false, `flows 390 px: the node of cut label "${cut.text}" found`);
  } else check(false, 'flows 390 px: three stages of addresses have a label cut');
  await page.screenshot({ path: path.join(args.out, 'sankey-address-phone.png'), fullPage: true });
  await page.setViewportSize({ width: 1366, height: 900 });
  await page.evaluate(() => window.dispatchEvent(new Event('ng-refresh')));
  await ready(page);
  sk = await sankey(page);
  over = overlaps(sk.labels);
  check(over.length === 0 && outside(sk).length === 0, `flows 1366 px, address → exporter → address: ${sk.labels.length} labels apart and inside`, over.concat(outside(sk)).join(' '));
  await page.screenshot({ path: path.join(args.out, 'sankey-address-laptop.png'), fullPage: true });
  // two stages from the stage selectors: the third set to none; a preset
  await page.selectOption('#stage2', '');
  await ready(page);
  const per = perDepth((await sankey(page)).nodes);
  check(new URL(page.url()).searchParams.get('stages') === 'srcip,exporter' && Object.keys(per).length === 2, `flows: the third stage set to none: two stages (${JSON.stringify(per)})`);
  await page.selectOption('#stages-preset', 'proto,dstport');
  await ready(page);
  const sk5 = await sankey(page);
  check(new URL(page.url()).searchParams.get('stages') === 'proto,dstport' && sk5.labels.some((x) => /^(TCP|UDP) \(\d+\)$/.test(x.text)) && overlaps(sk5.labels).length === 0,
    `flows: preset protocol → destination port (${sk5.labels.slice(0, 4).map((x) => x.text)})`, `${page.url()} ${overlaps(sk5.labels)}`);
  check(errors.length === 0, 'flows 390 px: no console errors', errors.join('\n'));
  await ctx.close();
}

// ---- click-through on every page ------------------------------------
// A row: its term becomes the filter, the page then shows data and the
// API accepts it; its flows link opens the explorer on nagare query's count.
const ROWS = [
  ['/', '.top5[data-field="srcip"] tbody tr[data-term]', /^src ip \S+$/],
  ['/', '.top5[data-field="srcas,srcasname"] tbody tr[data-term]', /^src as \d+$/],
  ['/', '#health tbody tr[data-term]', /^exporter \S+$/],
  ['/top?field=dstport', '.top-table tbody tr[data-term]', /^dst port \d+$/],
  ['/top?field=conv', '.top-table tbody tr[data-term]', /^src ip \S+ and dst ip \S+$/],
  ['/geo', '.geo-table tbody tr[data-term]', /^src country [A-Z]{2}$/],
  ['/as', '.as-table tbody tr[data-term]', /^src as \d+$/],
  ['/exporters', '.exporters-table tbody tr[data-term]', /^exporter \S+$/],
  ['/exporters', '.if-table tbody tr[data-term]', /^exporter \S+ and if \d+$/],
  ['/flows', '.pairs-table tbody tr[data-term]', /^src as \d+ and exporter \S+$/],
];
for (const [p, sel, re] of ROWS) {
  const { page, ctx, errors } = await open(p + (p.includes('?') ? '&' : '?') + RANGE);
  const term = await page.$eval(sel, (tr) => tr.dataset.term).catch(() => null);
  if (!term) { check(false, `${p}: a clickable row ${sel}`); await ctx.close(); continue; }
  await page.click(sel + ' td:first-child');
  await ready(page);
  const f = filterOf(page);
  const acc = await api(`/api/v1/summary?${RANGE}&filter=${encodeURIComponent(f)}`);
  check(f === term && re.test(f) && acc.status === 200 && acc.body.flows > 0 && await showsData(page),
    `${p}: a click on a row filters "${f}" (${acc.body.flows} flows), the page shows data`);
  const href = await page.$eval(sel + ' a.flows-link', (a) => a.getAttribute('href')).catch(() => null);
  if (href) {
    await page.click(sel + ' a.flows-link');
    await ready(page);
    const count = Number(await page.$eval('#flow-count', (x) => x.title));
    const rows = await page.$$eval('.flow-table tbody tr', (t) => t.length);
    check(new URL(page.url()).pathname === '/explorer' && count === flowsOf(new URL(page.url()).searchParams.get('filter')) && rows > 0,
      `${p}: its flows link opens the explorer on ${count} flows = nagare query`);
  } else check(false, `${p}: a flows link in the row`);
  check(errors.length === 0, `${p}: no console errors`, errors.join('\n'));
  if (p === '/top?field=dstport') await page.screenshot({ path: path.join(args.out, 'sankey-click-explorer-laptop.png'), fullPage: true });
  await ctx.close();
}

// a bar (Top-N), a series (AS over time), the map (Geo)
{
  const { page, ctx, errors } = await open(`/top?${RANGE}&field=srcport`);
  const top = cli('-s', 'srcport/bytes', '-n', '10').rows;
  const pt = await page.$eval('#bars', (e) => {
    const c = e._ngChart, v = c.getOption().series[0].data[0], r = e.getBoundingClientRect();
    const [x, y] = c.convertToPixel({ seriesIndex: 0 }, [v / 2, 0]);
    return [r.left + x, r.top + y];
  });
  await page.mouse.click(pt[0], pt[1]);
  await ready(page);
  check(filterOf(page) === `src port ${top[0].srcport}` && await showsData(page), `top: a click on the first bar filters "${filterOf(page)}"`);
  check(errors.length === 0, 'top: no console errors', errors.join('\n'));
  await ctx.close();
}
{
  const { page, ctx, errors } = await open(`/as?from=-1h`);
  const pt = await page.$eval('#as-series', (e) => {
    const c = e._ngChart, s = c.getOption().series[0], r = e.getBoundingClientRect();
    let best = 0;
    s.data.forEach((d, i) => { if (d[1] > s.data[best][1]) best = i; });
    const [x, y] = c.convertToPixel({ seriesIndex: 0 }, [s.data[best][0], s.data[best][1] / 2]);
    return [r.left + x, r.top + y, s.name];
  });
  await page.mouse.click(pt[0], pt[1]);
  await ready(page);
  check(filterOf(page) === `src as ${pt[2]}` && await showsData(page), `as: a click on series AS ${pt[2]} filters "${filterOf(page)}"`);
  check(errors.length === 0, 'as: no console errors', errors.join('\n'));
  await ctx.close();
}

await h.finish(browser, 'sankey');
