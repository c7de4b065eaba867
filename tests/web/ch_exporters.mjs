// ch_exporters.mjs — the Exporters page of `nagare serve --clickhouse`
// (API exporters' "source": "clickhouse"), run by
// tests/e2e/test_clickhouse_dash.sh with the records clickhouse-client
// counted per exporter:
//
//   node ch_exporters.mjs --url URL --out DIR --from ISO --to ISO \
//        --want '{"127.0.1.1": 8400, ...}' --names '{"127.0.1.1": "lab-a"}'
//
// Checks: the page draws without a page or console error, its exporters
// table lists exactly the exporters counted, in the order of their
// records (most first), each with its records as the page formats them
// (num(): "8.40 k") and its configured name, and the interface table is
// drawn from ClickHouse's flows.
import * as h from './harness.mjs';

h.init('ch_exporters.mjs', ['url', 'out', 'from', 'to', 'want', 'names']);
const want = JSON.parse(h.args.want), names = JSON.parse(h.args.names);
// web/src/format.js num() for counts of 1000 and more: three digits
const fmt = (v) => v < 1000 ? String(v) : (v / 1000).toPrecision(3) + ' k';
const browser = await h.launch();
const range = `from=${encodeURIComponent(h.args.from)}&to=${encodeURIComponent(h.args.to)}`;
const { page, errors } = await h.open(browser, `/exporters?${range}`);
const heads = await page.$$eval('.exporters-table thead th', (ths) => ths.map((th) => th.textContent.trim()));
const col = (t) => heads.indexOf(t);
const ex = await h.cells(page, '.exporters-table');
const recs = col('records') < 0 ? [] : await h.cells(page, '.exporters-table', col('records'));
const nm = col('name') < 0 ? [] : await h.cells(page, '.exporters-table', col('name'));
const order = Object.keys(want).sort((a, b) => want[b] - want[a] || (a < b ? -1 : 1));
h.check(errors.length === 0, 'the page draws without errors', errors.join('\n'));
h.check(JSON.stringify(ex) === JSON.stringify(order), `the exporters counted, most records first (${ex})`, `want ${order}`);
h.check(ex.every((e, i) => recs[i] === fmt(want[e])), `their records as clickhouse-client counts them (${recs})`, JSON.stringify(want));
h.check(Object.entries(names).every(([e, n]) => nm[ex.indexOf(e)] === n), `their names (${nm})`, JSON.stringify(names));
const ifs = await h.cells(page, '.if-table');
h.check(ifs.length > 0, `the interfaces table drawn (${ifs.length} rows)`);
await h.shot(page, 'ch-exporters');
await h.finish(browser, 'ch_exporters');
