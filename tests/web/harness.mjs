// harness.mjs — what the browser tests of tests/web share: their
// arguments, the fixture's range, check(), `nagare query`, Chromium
// (playwright-core driving Debian's chromium, headless), a page opened
// with its console errors, page errors and off-machine requests
// collected, waiting for a page to be drawn, inked pixels, time-axis
// label overlaps, screenshots.
//
//   import * as h from './harness.mjs';
//   h.init('sankey.mjs', ['url', 'bin', 'store', 'out']);
//   const browser = await h.launch();
//   const { page, ctx, errors } = await h.open(browser, `/flows?${h.RANGE}`);
//   h.check(cond, 'what', 'detail shown when it fails');
//   ...
//   await h.finish(browser, 'sankey');     // prints PASS / FAILED, exits
//
// Each test file is its own process: the state here (arguments, the
// count of failures) is that test's.
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, '../../web/package.json'));
const { chromium } = require('playwright-core');

// --url URL --bin NAGARE --store DIR --out DIR (any order)
export const args = Object.fromEntries(process.argv.slice(2).reduce((a, v, i, all) => (i % 2 ? a : [...a, [v.replace(/^--/, ''), all[i + 1]]]), []));
export let base = '';

// Checks that the arguments `need` are given (else exit 2 with the
// usage of `name`), makes the screenshot directory.
export function init(name, need = ['url', 'bin', 'store', 'out']) {
  for (const k of need)
    if (!args[k]) { console.error(`usage: ${name} --url URL --bin NAGARE --store DIR --out DIR (missing --${k})`); process.exit(2); }
  base = (args.url || '').replace(/\/$/, '');
  if (args.out) mkdirSync(args.out, { recursive: true });
}

// An absolute range around the fixture (a day before now to an hour
// after): the same for the CLI and the pages.
const now = Date.now();
export const FROM = new Date(now - 86400e3).toISOString().slice(0, 19) + 'Z';
export const TO = new Date(now + 3600e3).toISOString().slice(0, 19) + 'Z';
export const RANGE = `from=${encodeURIComponent(FROM)}&to=${encodeURIComponent(TO)}`;

let fails = 0, prefix = '';
// A prefix for every check's line ("time: ").
export function label(p) { prefix = p; }
export function check(cond, what, detail) {
  console.log((cond ? 'ok: ' : 'FAIL: ') + prefix + what + (detail && !cond ? `\n  ${detail}` : ''));
  if (!cond) fails++;
  return !!cond;
}
export const failures = () => fails;

// `nagare query --format json` over the store, [from, to) (default the
// fixture's range), its words after the range.
export function cli(a, { from = FROM, to = TO } = {}) {
  const out = execFileSync(args.bin, ['query', '--store', args.store, '--from', from, '--to', to, ...a, '--format', 'json'], { encoding: 'utf8', maxBuffer: 1 << 28 });
  return JSON.parse(out);
}

export function launch() {
  return chromium.launch({
    executablePath: process.env.NG_CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

// Collects page's console errors, page errors (errors) and requests
// that leave the machine (outside).
export function watch(page, errors = [], outside = []) {
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e.stack || e)));
  page.on('request', (r) => { if (!r.url().startsWith(base) && !r.url().startsWith('data:')) outside.push(r.url()); });
  return { errors, outside };
}

// Waits until the page is drawn (#page data-ready=1), then `settle` ms
// for the charts' animations.
export async function ready(page, { settle = 700, timeout = 20000 } = {}) {
  await page.waitForSelector('#page[data-ready="1"]', { timeout });
  if (settle) await page.waitForTimeout(settle);
}

// Opens base + rel in a fresh context ({width, height}, and any other
// context option: timezoneId, colorScheme …), waits for it (unless
// wait: false).  `init(page)` runs before the page loads (listeners).
export async function open(browser, rel, { width = 1366, height = 900, wait = true, settle, init: before, ...opts } = {}) {
  const ctx = await browser.newContext({ viewport: { width, height }, ...opts });
  const page = await ctx.newPage();
  const { errors, outside } = watch(page);
  if (before) await before(page);
  await page.goto(base + rel);
  if (wait) await ready(page, settle === undefined ? {} : { settle });
  return { page, ctx, errors, outside };
}

// Pixels of the canvases (and SVG charts) under `sel` that are not
// background (white, or a dark page's near-black).
export async function inked(page, sel) {
  return page.evaluate(async (sel) => {
    let n = 0;
    const count = (c) => {
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      for (let i = 0; i < d.length; i += 4) {
        if (d[i + 3] === 0) continue;
        const light = d[i] >= 235 && d[i + 1] >= 235 && d[i + 2] >= 235;
        if (!light) n++;
      }
    };
    for (const c of document.querySelectorAll(sel + ' canvas')) count(c);
    // an SVG chart (the Sankey): drawn onto a canvas first
    for (const s of document.querySelectorAll(sel + ' svg')) {
      const img = new Image();
      img.src = 'data:image/svg+xml;charset=utf-8,' + encodeURIComponent(new XMLSerializer().serializeToString(s));
      await img.decode();
      const c = document.createElement('canvas');
      c.width = s.clientWidth;
      c.height = s.clientHeight;
      c.getContext('2d').drawImage(img, 0, 0);
      count(c);
    }
    return n;
  }, sel);
}

// Overlapping label pairs of the time axis of the chart at `sel` (null:
// no time axis): ECharts' drawn text elements, their screen boxes.
export async function axisOverlaps(page, sel) {
  return page.$eval(sel, (e) => {
    const c = e._ngChart;
    const opt = c && c.getOption();
    if (!opt || !opt.xAxis || !opt.xAxis.some((a) => a.type === 'time')) return null;
    const h = e.clientHeight, boxes = [];
    for (const el of c.getZr().storage.getDisplayList()) {
      if (!(el.type === 'text' || el.type === 'tspan') || el.ignore || el.invisible || !el.style || !el.style.text) continue;
      const r = el.getBoundingRect().clone();
      r.applyTransform(el.getComputedTransform());
      if (r.y > h - 30 && r.width > 0) boxes.push([r.x, r.x + r.width, el.style.text, r.y, r.y + r.height]);
    }
    boxes.sort((a, b) => a[0] - b[0]);
    if (boxes.length < 2) return [`only ${boxes.length} time label(s) found`];
    // two labels overlap when their boxes do, across and down (the value
    // axis' "0" sits beside the first time label, a row higher)
    const bad = [];
    for (let i = 0; i < boxes.length; i++)
      for (let j = i + 1; j < boxes.length && boxes[j][0] < boxes[i][1]; j++)
        if (boxes[j][3] < boxes[i][4] && boxes[i][3] < boxes[j][4]) bad.push(`${boxes[i][2]}/${boxes[j][2]}`);
    return bad;
  });
}

// The cells of column `col` of the table at `sel`.
export const cells = (page, sel, col = 0) => page.$$eval(`${sel} tbody tr`, (trs, col) => trs.map((tr) => tr.children[col].textContent.trim()), col);

// A screenshot into the --out directory (name.png; full page unless told).
export function shot(page, name, { fullPage = true } = {}) {
  return page.screenshot({ path: path.join(args.out, name + '.png'), fullPage });
}

// Closes the browser, prints the verdict of test `name`, exits 0 (all
// passed) or 1.
export async function finish(browser, name, extra = '') {
  if (browser) await browser.close();
  console.log(fails ? `${name}: ${fails} check(s) FAILED${extra}` : `${name}: PASS${extra}`);
  process.exit(fails ? 1 : 0);
}
