// format.mjs — web/src/format.js on its own (node, no browser): a
// formatter handed extra arguments (an index from .map, a row from a
// table) formats the value as without them (issue 20: a row became
// toPrecision's argument: "toPrecision() argument must be between 1 and
// 100" on every page with an exporter of 1000 records or more).
//   node tests/web/format.mjs      exit 0: all passed
import assert from 'node:assert/strict';
import { num, inUnit, metric, traffic, protoName, tcpFlags, timeText, zoneName } from '../../web/src/format.js';

const row = { exporter: '192.0.2.1', records: 123456, bytes: 2000, packets: 3, flows: 1 };
assert.equal(num(123456), '123 k');
assert.equal(num(123456, row), '123 k');            // a row is no options
assert.equal([1234, 5678].map(num).join(), '1.23 k,5.68 k'); // nor an index
assert.equal(num(123456, { digits: 5 }), '123.46 k');
assert.equal(num(123456, { digits: 500 }), '123 k'); // out of range: the default
assert.equal(num(999), '999');
assert.equal(num(0.5), '0.5');
assert.equal(num(undefined), '–');
assert.equal(num('12'), '–');
assert.equal(inUnit(1.5e6, { unit: 'bps' }), '1.50 Mb/s');
assert.equal(inUnit(1.5e6, row), '1.50 MB');        // no unit in a row: bytes
assert.equal(metric(row, { unit: 'bps', secs: 8 }), 2000);
assert.equal(traffic(row, { unit: 'packets' }), '3 pkts');
assert.equal(protoName(6), 'TCP (6)');
assert.equal(protoName('17'), 'UDP (17)');
assert.equal(protoName(253), '253');
assert.equal(tcpFlags(0x1b), '...AP.SF');
assert.equal(tcpFlags(0xc2), 'CE....S.');
assert.equal(tcpFlags(''), '');
// times: UTC by choice, with ms on demand; an index or a row is no option
assert.equal(timeText('2026-12-02T15:12:43.477Z', { tz: 'utc' }), '2026-12-02 15:12:43');
assert.equal(timeText(Date.UTC(2026, 11, 2, 23, 59, 59, 7), { tz: 'utc', ms: true }), '2026-12-02 23:59:59.007');
assert.equal(timeText(''), '');
assert.equal(timeText('not a time', { tz: 'utc' }), '');
assert.equal(zoneName({ tz: 'utc' }), 'UTC');
console.log('format: PASS');
