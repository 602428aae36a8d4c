// POST /api/v1/location-map, the data formats on a real server (127.0.0.1, its own SQLite
// file, the real addon over the test dataset): the JSON envelope and rows, CSV, GeoJSON,
// include_provenance, every header of a 200, and the confidence floor on served rows.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { check as checkGeoJson } from '@placemarkio/check-geojson';
import { parse as csvParse } from 'csv-parse/sync';
import { query } from '../../ts/native.ts';
import { creditsFor } from '../../ts/api/prices.ts';
import { TABLES_DIR } from '../../ts/paths.ts';
import { parseCsv, parseCsvObjects } from '../helpers/csv.ts';
import { testStore, largestBrand, type Location } from '../helpers/dataset.ts';
import { geojsonProblems, type FeatureCollection } from '../helpers/geojson.ts';
import {
  CSV_HEADER,
  GEO_PROPERTIES,
  LOCATION_FIELDS,
  MCD,
  PROVENANCE_FIELDS,
  assertDataHeaders,
  assertLocation,
  assertProvenance,
  ids,
  ok,
  okJson,
  server,
  sortedUnique,
  union,
  type Envelope,
} from '../helpers/location-map.ts';

test('json: the envelope and every location have exactly the documented fields', async (t) => {
  const s = await server(t);
  const { res, env } = await okJson(t, s, { brand: MCD });
  t.is(res.header('content-type'), 'application/json; charset=utf-8');
  t.deepEqual(Object.keys(env).sort(), ['brand', 'count', 'coverage_confidence', 'locations', 'region']);
  t.is(env.brand, MCD);
  t.is(env.region, 'worldwide');
  t.is(env.count, env.locations.length);
  t.is(env.count, testStore().brand(testStore().resolve(MCD)!.brand)!.locationCount);
  t.true(env.count > 100);
  assertDataHeaders(t, res, s, { count: env.count, brand: MCD, region: env.region });
  for (const [i, l] of env.locations.entries()) {
    t.deepEqual(Object.keys(l).sort(), [...LOCATION_FIELDS].sort(), `locations[${i}] keys`);
    assertLocation(t, l, `locations[${i}]`);
  }
  t.is(new Set(ids(env.locations)).size, env.count, 'ids are unique');
  // Stable ids: the same request returns the same ids.
  const again = await okJson(t, s, { brand: MCD });
  t.deepEqual(ids(again.env.locations), ids(env.locations));
});

test('csv: exact header, text/csv; charset=utf-8, one row per location, values equal to the JSON', async (t) => {
  const s = await server(t);
  const { env } = await okJson(t, s, { brand: MCD });
  const res = await ok(t, s, { brand: MCD, format: 'csv' });
  t.is(res.header('content-type'), 'text/csv; charset=utf-8');
  t.is(res.text.split(/\r?\n/)[0], CSV_HEADER);
  const [header, ...rows] = parseCsv(res.text.replace(/\r?\n$/, ''));
  t.deepEqual(header, CSV_HEADER.split(','));
  // An independent RFC 4180 parser (csv-parse, strict about quotes and column counts) reads
  // the same records.
  t.deepEqual(csvParse(res.text, { relax_quotes: false, relax_column_count: false }), [header, ...rows]);
  t.is(rows.length, Number(res.header('x-location-count')));
  t.is(rows.length, env.count);
  assertDataHeaders(t, res, s, { count: env.count, brand: MCD, region: 'worldwide' });
  const orNull = (v: string) => (v === '' ? null : v);
  for (const [i, r] of rows.entries()) {
    t.is(r.length, 11, `row ${i + 1} has 11 fields`);
    const l = env.locations[i];
    const o = Object.fromEntries(header.map((h, c) => [h, r[c]]));
    t.is(o.brand, MCD);
    t.is(o.name, l.name);
    t.is(Number(o.lat), l.lat, `row ${i + 1} lat`);
    t.is(Number(o.lng), l.lng, `row ${i + 1} lng`);
    t.is(o.country, l.country);
    for (const k of ['state', 'city', 'postcode', 'address', 'phone'] as const) t.is(orNull(o[k]), l[k], `row ${i + 1} ${k}`);
    t.is(o.last_updated, l.last_updated ?? "");
  }
});

test('geojson: application/geo+json, a valid FeatureCollection, [lng, lat] equal to the JSON swapped, exact properties', async (t) => {
  const s = await server(t);
  const { env } = await okJson(t, s, { brand: MCD });
  const res = await ok(t, s, { brand: MCD, format: 'geojson' });
  t.is(res.header('content-type'), 'application/geo+json');
  const doc = res.json<FeatureCollection>();
  t.deepEqual(geojsonProblems(doc, GEO_PROPERTIES), []);
  // An independent RFC 7946 validator throws on any invalid member.
  t.notThrows(() => checkGeoJson(res.text));
  t.is(doc.features.length, Number(res.header('x-location-count')));
  t.is(doc.features.length, env.count);
  assertDataHeaders(t, res, s, { count: env.count, brand: MCD, region: 'worldwide' });
  const byId = new Map(env.locations.map((l) => [l.id, l]));
  for (const [i, f] of doc.features.entries()) {
    const l = byId.get(String(f.id)) ?? env.locations[i];
    t.deepEqual(f.geometry.coordinates, [l.lng, l.lat], `feature ${i} coordinates`);
    t.is(f.properties.brand, MCD);
    for (const k of ['name', 'address', 'city', 'state', 'country', 'postcode', 'phone', 'opening_hours', 'last_updated'] as const) {
      t.is(f.properties[k], l[k], `feature ${i} ${k}`);
    }
  }
});

test('include_provenance adds exactly the five fields to json and geojson rows, and nothing to csv', async (t) => {
  const s = await server(t);
  const plain = (await okJson(t, s, { brand: MCD })).env;
  const { res, env } = await okJson(t, s, { brand: MCD, include_provenance: true });
  t.deepEqual(Object.keys(env).sort(), ['brand', 'count', 'coverage_confidence', 'locations', 'region']);
  t.deepEqual(ids(env.locations), ids(plain.locations));
  for (const [i, l] of env.locations.entries()) {
    t.deepEqual(Object.keys(l).sort(), [...LOCATION_FIELDS, ...PROVENANCE_FIELDS].sort(), `locations[${i}] keys`);
    assertProvenance(t, l, `locations[${i}]`);
    const base = Object.fromEntries(LOCATION_FIELDS.map((k) => [k, l[k]]));
    t.deepEqual(base, plain.locations[i] as unknown as Record<string, unknown>, `locations[${i}] other fields unchanged`);
  }
  assertDataHeaders(t, res, s, { count: env.count, brand: MCD, sources: union(env.locations) });

  const geo = (await ok(t, s, { brand: MCD, format: 'geojson', include_provenance: true })).json<FeatureCollection>();
  t.deepEqual(geojsonProblems(geo, [...GEO_PROPERTIES, ...PROVENANCE_FIELDS]), []);
  const byId = new Map(env.locations.map((l) => [l.id, l]));
  for (const [i, f] of geo.features.entries()) {
    assertProvenance(t, f.properties as Partial<Location>, `features[${i}].properties`);
    const l = byId.get(String(f.id));
    t.truthy(l, `feature ${f.id} is a JSON row`);
    for (const k of PROVENANCE_FIELDS) t.deepEqual(f.properties[k], l?.[k], `feature ${i} ${k} equals the JSON's`);
  }

  const csvPlain = await ok(t, s, { brand: MCD, format: 'csv' });
  const csvProv = await ok(t, s, { brand: MCD, format: 'csv', include_provenance: true });
  t.is(csvProv.text, csvPlain.text, 'csv is identical with include_provenance');
  t.is(csvProv.text.split(/\r?\n/)[0], CSV_HEADER);
});

test('every header of a 200, in all three formats', async (t) => {
  const s = await server(t);
  for (const format of ['json', 'csv', 'geojson'] as const) {
    const res = await ok(t, s, { brand: 'MCD', format, country: 'US', include_provenance: true });
    const count = Number(res.header('x-location-count'));
    let sources: string[] | undefined;
    let region: string | undefined;
    if (format === 'json') {
      const env = res.json<Envelope>();
      t.is(env.count, count);
      sources = union(env.locations);
      region = env.region;
      t.is(region, 'US');
    } else if (format === 'geojson') {
      const doc = res.json<FeatureCollection>();
      sources = sortedUnique(doc.features.flatMap((f) => f.properties.source_types as string[]));
    }
    assertDataHeaders(t, res, s, { count, brand: MCD, sources, region: region ?? 'US' });
    t.is(Number(res.header('x-credits-charged')), creditsFor(count, format));
  }
});

test('data formats serve only rows at or above the 0.6 confidence floor and never community-only rows (largest brand)', async (t) => {
  const s = await server(t);
  const big = largestBrand();
  const { res, env } = await okJson(t, s, { brand: big.name, include_provenance: true });
  t.is(env.count, big.locationCount);
  assertDataHeaders(t, res, s, { count: env.count, brand: big.name, sources: union(env.locations) });
  for (const [i, l] of env.locations.entries()) {
    assertProvenance(t, l, `locations[${i}]`);
    t.true(l.confidence! >= 0.6, `locations[${i}] confidence ${l.confidence}`);
    t.notDeepEqual(l.source_types, ['osm'], `locations[${i}] is community-only`);
  }
  // The pool behind it does hold such rows (else this test could not fail): none is served,
  // and every row that passes is.
  const pool = JSON.parse(
    (await query(testStore(), { brands: [big.index], format: 'json', verifiedOnly: false, includeProvenance: true })).body.toString('utf8'),
  ) as Envelope;
  const excluded = pool.locations.filter((l) => l.confidence! < 0.6 || (l.source_types?.length === 1 && l.source_types[0] === 'osm'));
  t.true(excluded.some((l) => l.confidence! < 0.6), 'the pool has rows below the floor');
  t.true(excluded.some((l) => l.source_types?.join() === 'osm'), 'the pool has community-only rows');
  const served = new Set(ids(env.locations));
  t.deepEqual(excluded.filter((l) => served.has(l.id)).map((l) => l.id), []);
  t.deepEqual(sortedUnique(ids(env.locations)), sortedUnique(ids(pool.locations.filter((l) => !excluded.includes(l)))));
});

test('coverage_confidence: the same figure in the JSON envelope, the GeoJSON collection and the CSV header, in [0, 1]; null and no header for a brand too small to estimate', async (t) => {
  const s = await server(t);
  const { res, env } = await okJson(t, s, { brand: MCD });
  const c = (env as Envelope & { coverage_confidence: number | null }).coverage_confidence;
  t.is(typeof c, 'number');
  t.true(c! > 0 && c! <= 1, `${c}`);
  t.is(res.header('x-coverage-confidence'), String(c));
  const geo = (await ok(t, s, { brand: MCD, format: 'geojson' })).json<{ coverage_confidence: number | null }>();
  t.is(geo.coverage_confidence, c);
  t.is((await ok(t, s, { brand: MCD, format: 'csv' })).header('x-coverage-confidence'), String(c));
  // Filters narrow what is estimated: a country's figure is its own.
  const us = await okJson(t, s, { brand: MCD, country: 'US' });
  t.is(us.res.header('x-coverage-confidence'), String((us.env as Envelope & { coverage_confidence: number | null }).coverage_confidence));
  // A brand with fewer than 5 storefronts in all (community-only ones included) cannot be estimated.
  const store = testStore();
  let small: string | undefined;
  for (let i = 0; small === undefined; i++) {
    const b = store.brand(i);
    if (!b) break;
    if (b.locationCount >= 1 && b.poolCount <= 4) small = b.name;
  }
  t.truthy(small, 'the test dataset has a brand of 1 to 4 storefronts in all');
  const tiny = await okJson(t, s, { brand: small! });
  t.is((tiny.env as Envelope & { coverage_confidence: number | null }).coverage_confidence, null);
  t.is(tiny.res.header('x-coverage-confidence'), '');
});

test("json and geojson: every row names its brand's Wikidata id, each brand its own in an answer of several, as data/tickers.csv lists them", async (t) => {
  const s = await server(t);
  const listed = new Map(parseCsvObjects(readFileSync(path.join(TABLES_DIR, 'tickers.csv'), 'utf8')).map((r) => [r.ticker, r]));
  const [mcd, sbux] = [listed.get('MCD')!, listed.get('SBUX')!];
  const { env } = await okJson(t, s, { tickers: ['MCD', 'SBUX'] });
  const byBrand = new Map<string, Set<string | null>>();
  for (const l of env.locations) byBrand.set(l.brand!, (byBrand.get(l.brand!) ?? new Set()).add(l.brand_wikidata));
  t.deepEqual([...(byBrand.get(mcd.brand) ?? [])], [mcd.wikidata]);
  t.deepEqual([...(byBrand.get(sbux.brand) ?? [])], [sbux.wikidata]);
  const geo = JSON.parse((await ok(t, s, { brand: MCD, format: 'geojson' })).text) as FeatureCollection;
  t.true(geo.features.length > 100);
  t.true(geo.features.every((f) => (f.properties as { brand_wikidata?: string }).brand_wikidata === mcd.wikidata));
});
