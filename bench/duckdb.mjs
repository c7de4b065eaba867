// bench/duckdb.mjs — DuckDB's column of bench/query: the same flows (the
// TSV bench/flowgen wrote) loaded into a native DuckDB table in memory,
// then each query of bench/query run in this one process: one warm-up,
// then the median of RUNS timed runs, query time only (the result fully
// read), as DuckDB answers a dashboard that keeps it open.
//
//   node bench/duckdb.mjs SPEC.json
//
// SPEC.json: {"tsv": FILE, "threads": 2, "runs": 3,
//             "queries": [{"name": ..., "sql": ...}, ...]}
// Prints one JSON object on stdout: {"version", "threads", "load_s",
// "rows", "queries": [{"name", "median_s", "times_s", "rows": [[...]]}]}
// (rows: the last run's answer, at most 50 rows, numbers as strings).
//
// DuckDB is the npm package @duckdb/node-api, installed by scripts/setup
// into bench/data (the version pinned in bench/data/package.json).
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, 'data', 'package.json'));
let duckdb;
try {
  duckdb = require('@duckdb/node-api');
} catch (e) {
  console.error('bench/duckdb: @duckdb/node-api is not installed in bench/data (run scripts/setup)');
  process.exit(2);
}

const spec = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const threads = String(spec.threads ?? 2);
const runs = spec.runs ?? 3;

// The columns of bench/flowgen's TSV (flowgen.c tsv_line), as ClickHouse's
// table in bench/query has them.
const COLUMNS = {
  time: 'TIMESTAMP', start_ms: 'USMALLINT', duration_ms: 'UINTEGER', exporter: 'UINTEGER',
  src: 'UINTEGER', dst: 'UINTEGER', nexthop: 'UINTEGER', in_if: 'USMALLINT',
  out_if: 'USMALLINT', packets: 'UBIGINT', bytes: 'UBIGINT', sport: 'USMALLINT',
  dport: 'USMALLINT', flags: 'UTINYINT', proto: 'UTINYINT', tos: 'UTINYINT',
  src_as: 'UINTEGER', dst_as: 'UINTEGER', src_mask: 'UTINYINT', dst_mask: 'UTINYINT',
};

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

const db = await duckdb.DuckDBInstance.create(':memory:', { threads });
const con = await db.connect();
const version = (await con.runAndReadAll('SELECT version()')).getRows()[0][0];
const cols = Object.entries(COLUMNS).map(([k, t]) => `'${k}': '${t}'`).join(', ');
let t0 = performance.now();
await con.run(
  `CREATE TABLE flows AS SELECT * FROM read_csv('${spec.tsv.replace(/'/g, "''")}', ` +
    `delim = '\t', header = false, columns = {${cols}}) ORDER BY time`,
);
const loadS = (performance.now() - t0) / 1000;
const nrows = (await con.runAndReadAll('SELECT count(*) FROM flows')).getRows()[0][0];

const out = [];
for (const q of spec.queries) {
  const times = [];
  let rows = [];
  for (let i = 0; i <= runs; i++) {
    t0 = performance.now();
    const r = await con.runAndReadAll(q.sql);
    rows = r.getRows();
    const dt = (performance.now() - t0) / 1000;
    if (i) times.push(dt);
  }
  out.push({
    name: q.name,
    median_s: median(times),
    times_s: times,
    rows: rows.slice(0, 50).map((r) => r.map((v) => String(v))),
    nrows: rows.length,
  });
}
console.log(JSON.stringify({ version, threads: Number(threads), load_s: loadS,
  rows: String(nrows), queries: out }));
