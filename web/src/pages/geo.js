// Geo: a world map shaded by traffic (source or destination country) and
// a table of countries; a click on a country adds it to the filter.
import { feature } from 'topojson-client';
import world from 'world-atlas/countries-110m.json';
import countries from 'i18n-iso-countries';
import en from 'i18n-iso-countries/langs/en.json';
import { api } from '../api.js';
import { baseParams, setState } from '../state.js';
import { card, chart, echarts, table, valueCols, NO_FLOWS } from '../ui.js';
import { orderOf, inUnit, metric } from '../format.js';
import { termFor } from '../filterterm.js';
import { rangeOf, wireClicks } from '../clicks.js';
import { cssVar, isDark } from '../theme.js';

countries.registerLocale(en);
let registered = false;
function registerWorld() {
  if (registered) return;
  // world-atlas names countries by ISO 3166-1 numeric id: the map's
  // region names become alpha-2 codes, as the store's country fields.
  const geo = feature(world, world.objects.countries);
  // Antarctica is all border and no traffic; rings across the 180th
  // meridian (Russia, Fiji) would draw a line across the map: their
  // western points move east by 360°.
  geo.features = geo.features.filter((f) => f.id !== '010');
  for (const f of geo.features) {
    const polys = f.geometry.type === 'Polygon' ? [f.geometry.coordinates] : f.geometry.coordinates;
    for (const poly of polys)
      for (const ring of poly) {
        const lons = ring.map((p) => p[0]);
        if (Math.max(...lons) - Math.min(...lons) > 180)
          for (const p of ring) if (p[0] < 0) p[0] += 360;
      }
  }
  for (const f of geo.features) {
    const a2 = f.id ? countries.numericToAlpha2(f.id) : undefined;
    f.properties = { name: a2 || f.properties.name || String(f.id) };
  }
  echarts.registerMap('world', geo);
  registered = true;
}

export default async function geoPage(el, s, ctx) {
  const side = s.side === 'dst' ? 'dst' : 'src';
  const field = side + 'country';
  const d = await api('top', { ...baseParams(s), field, limit: 300, order: orderOf(s.unit) });
  if (!ctx.fresh()) return;
  registerWorld();
  const secs = Math.max(1, (Date.parse(d.query.to) - Date.parse(d.query.from)) / 1000);
  const val = (r) => metric(r, { unit: s.unit, secs });
  const rows = d.rows.map((r) => ({ ...r, code: r[field] || '', name: r[field] ? (countries.getName(r[field], 'en') || r[field]) : '(unknown: private or unlisted address)' }));
  const known = rows.filter((r) => r.code);
  const max = Math.max(1, ...known.map(val));
  el.innerHTML = `
  <div class="toolbar">
    <label>Side <select id="side"><option value="src" ${side === 'src' ? 'selected' : ''}>source country</option><option value="dst" ${side === 'dst' ? 'selected' : ''}>destination country</option></select></label>
    <span class="muted">Click a country to filter on it.</span>
  </div>
  ${rows.length === 0 ? NO_FLOWS : ''}
  ${known.length === 0 && rows.length ? '<div class="empty">No flow has a known country: country needs a GeoIP database (docs/enrichment.md), and private addresses have none.</div>' : ''}
  ${card(`Traffic by ${side === 'src' ? 'source' : 'destination'} country`, '<div class="chart map" id="map"></div>')}
  ${rows.length ? card('Countries', table(rows, [{ key: 'code', title: 'code' }, { key: 'name', title: 'country' }, ...valueCols(s.unit, secs)], 'geo-table', { term: (r) => termFor(field, r.code), range: rangeOf(d, s) })) : ''}`;
  wireClicks(el, s);
  el.querySelector('#side').addEventListener('change', (e) => setState({ side: e.target.value }));
  const c = chart(el.querySelector('#map'), {
    tooltip: { trigger: 'item', formatter: (p) => `${countries.getName(p.name, 'en') || p.name}: ${Number.isFinite(p.value) ? inUnit(p.value, { unit: s.unit }) : 'no traffic'}` },
    visualMap: { min: 0, max, left: 8, bottom: 8, calculable: true, formatter: (v) => inUnit(v, { unit: s.unit }), inRange: { color: isDark() ? ['#1e3a8a', '#93c5fd'] : ['#dbeafe', '#1d4ed8'] } },
    series: [{ type: 'map', map: 'world', roam: true, emphasis: { label: { show: false } },
      itemStyle: { areaColor: cssVar('--map-land') || '#eef0f3', borderColor: cssVar('--map-border') || '#9aa3ad' },
      data: known.map((r) => ({ name: r.code, value: val(r) })) }],
  });
  c.on('click', (p) => {
    if (!p.name) return;
    setState({ filter: withCountry(s.filter, `${side} country ${p.name}`), offset: '' });
  });
}

// The filter `f` narrowed to one country `term` ("src country GB"): a
// country a click added before is replaced, not ANDed with the new one
// (two countries ANDed match nothing).
export function withCountry(f, term) {
  const one = /^(?:src|dst) country [A-Z]{2}$/;
  const tail = /^\((.*)\) and (?:src|dst) country [A-Z]{2}$/;
  f = (f || '').trim();
  if (!f || one.test(f)) return term;
  const m = tail.exec(f);
  return `(${m ? m[1] : f}) and ${term}`;
}
