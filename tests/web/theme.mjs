// theme.mjs — accessibility and polish (issue 20 part 9): the dark theme
// (the system's prefers-color-scheme, and the header's toggle kept in
// localStorage), the colour-blind-safe series palette, keyboard
// navigation, every page at 1280 px and on a tablet (820 px).
//
//   node tests/web/theme.mjs --url http://127.0.0.1:PORT/ --bin NAGARE \
//        --store STORE --out DIR
//
// Checks: with prefers-color-scheme dark every page is dark (the page's
// colours, charts on a transparent background, still inked), its text
// and muted text have a contrast of 4.5:1 or more on the page and on the
// cards (WCAG 2.1 AA, computed here from the computed styles); the toggle
// goes auto → light → dark, is kept over a reload, and redraws the
// charts; the series take Okabe & Ito's colours in order, and their
// first six stay apart (CIELAB ΔE ≥ 10) under simulated protanopia,
// deuteranopia and tritanopia (Machado et al. 2009), further apart than
// ECharts' default palette under the first two; the keyboard alone: the skip link, "/" to the
// filter, Escape closing the views menu, Tab to a table row and Enter
// filtering on it (nagare query agrees); no page overflows sideways at
// 1280 and 820 px.  No console error.  Screenshots DIR/theme-*.png.
import * as h from './harness.mjs';
import { RANGE, check } from './harness.mjs';

h.init('theme.mjs');
const browser = await h.launch();
const PAGES = ['/', '/top', '/flows', '/geo', '/as', '/exporters', '/visualize', '/explorer'];
const nameOf = (p) => (p === '/' ? 'overview' : p.slice(1));

// WCAG 2.1 relative luminance and contrast of CSS rgb() colours
const rgb = (s) => (s.match(/[\d.]+/g) || []).slice(0, 3).map(Number);
const lum = (c) => { const [r, g, b] = c.map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; }); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
const contrast = (a, b) => { const [x, y] = [lum(rgb(a)), lum(rgb(b))].sort((m, n) => n - m); return (x + 0.05) / (y + 0.05); };

// ---- dark by the system's preference: every page ----------------------
for (const p of PAGES) {
  const { page, ctx, errors } = await h.open(browser, `${p}?${RANGE}`, { colorScheme: 'dark' });
  const name = nameOf(p);
  const st = await page.evaluate(() => {
    const cs = (el) => getComputedStyle(el);
    const probe = document.createElement('span');
    probe.className = 'muted';
    document.querySelector('.card, #page').appendChild(probe);
    const card = document.querySelector('.card') || document.body;
    const r = { theme: document.documentElement.dataset.theme, bg: cs(document.body).backgroundColor, fg: cs(document.body).color,
      muted: cs(probe).color, card: cs(card).backgroundColor };
    probe.remove();
    return r;
  });
  const c1 = contrast(st.fg, st.bg), c2 = contrast(st.muted, st.bg), c3 = contrast(st.muted, st.card);
  check(st.theme === 'dark' && lum(rgb(st.bg)) < 0.02, `dark ${name}: the system's dark scheme gives a dark page (${st.bg})`);
  check(c1 >= 4.5 && c2 >= 4.5 && c3 >= 4.5, `dark ${name}: contrast text ${c1.toFixed(1)}, muted ${c2.toFixed(1)} (on cards ${c3.toFixed(1)}) ≥ 4.5`);
  const charts = await page.$$eval('#page .chart', (cs) => cs.map((c) => '#' + c.id).filter((x) => x !== '#'));
  for (const c of charts.slice(0, 3)) {
    const ink = await h.inked(page, c);
    const corner = await page.$eval(c, (e) => { const cv = e.querySelector('canvas'); return cv ? cv.getContext('2d').getImageData(1, 1, 1, 1).data[3] : 0; });
    check(ink > 300 && corner === 0, `dark ${name}: chart ${c} drawn (${ink} px) on a transparent background`);
  }
  await h.shot(page, `theme-dark-${name}`);
  check(errors.length === 0, `dark ${name}: no console error`, errors.join('\n'));
  await ctx.close();
}

// ---- the toggle, kept in localStorage ---------------------------------
{
  const { page, ctx, errors } = await h.open(browser, `/?${RANGE}`, { colorScheme: 'light' });
  const theme = () => page.evaluate(() => ({ t: document.documentElement.dataset.theme, kept: localStorage.getItem('nagare.theme'), b: document.getElementById('theme-toggle').textContent }));
  const t0 = await theme();
  check(t0.t === 'light' && /auto/.test(t0.b), `toggle: a light system, auto: light (${JSON.stringify(t0)})`);
  const chart0 = await page.$eval('#by-proto', (e) => { window._c0 = e._ngChart; return true; });
  await page.click('#theme-toggle');
  const t1 = await theme();
  await page.click('#theme-toggle');
  await h.ready(page);
  const t2 = await theme();
  const redrawn = await page.$eval('#by-proto', (e) => e._ngChart !== window._c0 && !e._ngChart.isDisposed());
  check(chart0 && t1.t === 'light' && t1.kept === 'light' && t2.t === 'dark' && t2.kept === 'dark' && redrawn,
    `toggle: auto → light → dark, kept in localStorage, the charts redrawn (${t1.b} → ${t2.b})`);
  await page.reload();
  await h.ready(page);
  const t3 = await theme();
  check(t3.t === 'dark' && /dark/.test(t3.b), 'toggle: dark kept over a reload on a light system');
  await h.shot(page, 'theme-toggled-dark-overview');
  await page.click('#theme-toggle');
  await h.ready(page);
  check((await theme()).t === 'light' && (await theme()).kept === 'auto', 'toggle: back to auto: the system\'s light');
  check(errors.length === 0, 'toggle: no console error', errors.join('\n'));

  // ---- the series palette ----
  const cols = await page.$eval('#by-proto', (e) => {
    const c = e._ngChart, n = c.getOption().series.length;
    return [...Array(n).keys()].map((i) => { const m = c.getModel().getSeriesByIndex(i), st = m.getData().getVisual('style'); return [m.name, st.stroke || st.fill]; });
  });
  const OKABE_ITO = ['#0072b2', '#e69f00', '#009e73', '#cc79a7', '#56b4e9', '#d55e00', '#f0e442', '#000000'];
  const named = cols.filter(([n]) => n !== 'other'), other = cols.find(([n]) => n === 'other');
  check(named.length >= 3 && named.every(([, c], i) => c.toLowerCase() === OKABE_ITO[i]) && (!other || other[1].toLowerCase() === '#a0a7b0'),
    `palette: the protocol series are Okabe-Ito's colours in order, other grey (${cols.map((x) => x.join(' ')).join(', ')})`);
  await ctx.close();
}

// CIELAB ΔE (CIE76) of the closest pair of colours `cs` seen with a
// dichromacy (Machado, Oliveira & Fernandes 2009, severity 1, linear RGB)
const MACHADO = {
  protanopia: [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
  deuteranopia: [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]],
  tritanopia: [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]],
};
const lin = (v) => (v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
function lab(rgbLin) {
  const [r, g, b] = rgbLin.map((v) => Math.min(1, Math.max(0, v)));
  const X = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047, Y = 0.2126 * r + 0.7152 * g + 0.0722 * b, Z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
  const f = (t) => (t > 216 / 24389 ? Math.cbrt(t) : (24389 / 27 * t + 16) / 116);
  return [116 * f(Y) - 16, 500 * (f(X) - f(Y)), 200 * (f(Y) - f(Z))];
}
function closest(cs, m) {
  const labs = cs.map((hex) => {
    const v = [1, 3, 5].map((i) => lin(parseInt(hex.slice(i, i + 2), 16) / 255));
    return lab(m ? m.map((row) => row[0] * v[0] + row[1] * v[1] + row[2] * v[2]) : v);
  });
  let best = Infinity;
  for (let i = 0; i < labs.length; i++)
    for (let j = i + 1; j < labs.length; j++) best = Math.min(best, Math.hypot(...labs[i].map((x, k) => x - labs[j][k])));
  return best;
}
{
  const ours = ['#0072b2', '#e69f00', '#009e73', '#cc79a7', '#56b4e9', '#d55e00'];
  const echartsDefault = ['#5470c6', '#91cc75', '#fac858', '#ee6666', '#73c0de', '#3ba272'];
  for (const [k, m] of Object.entries(MACHADO)) {
    const a = closest(ours, m), b = closest(echartsDefault, m);
    // Okabe-Ito is made for the red-green deficiencies (nearly all
    // colour-blind people); tritanopia (blue-yellow, rare): apart, not better
    check(a >= 10 && (k === 'tritanopia' || a > b), `palette: the first 6 under ${k}: closest pair ΔE ${a.toFixed(1)} ≥ 10 (ECharts' default palette: ${b.toFixed(1)})`);
  }
}

// ---- the keyboard alone ------------------------------------------------
{
  const { page, ctx, errors } = await h.open(browser, `/top?${RANGE}&field=dstport`);
  await page.keyboard.press('Tab');
  const first = await page.evaluate(() => document.activeElement.className);
  await page.keyboard.press('Enter');
  const landed = await page.evaluate(() => document.activeElement.id);
  check(first === 'skip' && landed === 'page', `keyboard: the first Tab reaches the skip link, Enter goes to the page (${first} → #${landed})`);
  await page.keyboard.press('/');
  check(await page.evaluate(() => document.activeElement.id) === 'filter', 'keyboard: "/" puts the focus in the filter box');
  await page.focus('#views-menu summary');
  await page.keyboard.press('Enter');
  const opened = await page.$eval('#views-menu', (d) => d.open);
  await page.keyboard.press('Escape');
  check(opened && !(await page.$eval('#views-menu', (d) => d.open)) && await page.evaluate(() => document.activeElement.tagName) === 'SUMMARY',
    'keyboard: Enter opens the views menu, Escape closes it and the focus stays on it');
  // Tab from the page's start to the first row of the table, Enter
  await page.focus('#page');
  let term = null;
  for (let i = 0; i < 80 && !term; i++) {
    await page.keyboard.press('Tab');
    term = await page.evaluate(() => document.activeElement.matches('tr[data-term]') ? document.activeElement.dataset.term : null);
  }
  const ring = await page.evaluate(() => { const cs = getComputedStyle(document.activeElement); return `${cs.outlineStyle} ${cs.outlineWidth}`; });
  check(term && !/^none/.test(ring), `keyboard: the focused row shows a focus ring (outline ${ring})`);
  await page.keyboard.press('Enter');
  await h.ready(page);
  const f = new URL(page.url()).searchParams.get('filter');
  const top = h.cli(['-s', 'dstport/bytes', '-n', '1']).rows[0];
  check(term === `dst port ${top.dstport}` && f === term, `keyboard: Tab to the first row, Enter: filter "${f}" (nagare query's top port ${top.dstport})`);
  check(errors.length === 0, 'keyboard: no console error', errors.join('\n'));
  await ctx.close();
}

// ---- 1280 px and a tablet (820 × 1180) --------------------------------
for (const [w, ht, tag, scheme] of [[1280, 800, '1280', 'light'], [820, 1180, 'tablet', 'dark']]) {
  for (const p of PAGES) {
    const { page, ctx, errors } = await h.open(browser, `${p}?${RANGE}`, { width: w, height: ht, colorScheme: scheme });
    const wide = await page.evaluate(() => document.documentElement.scrollWidth);
    const alert = await page.$$eval('.error', (es) => es.length);
    check(wide <= w + 1 && alert === 0 && errors.length === 0, `${tag} ${nameOf(p)}: fits ${w} px (${wide}), no error`, errors.join('\n'));
    if (['/', '/top', '/visualize', '/exporters'].includes(p)) await h.shot(page, `theme-${tag}-${nameOf(p)}`);
    await ctx.close();
  }
}

await h.finish(browser, 'theme', `; screenshots in ${h.args.out}`);
