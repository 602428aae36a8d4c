// POST /api/v1/location-map on a real server (127.0.0.1, its own SQLite file, the real addon
// over the test dataset): response shapes of every format, headers, filters, brand
// resolution, plan gating, trial expiry, credits and usage, rate limits, body limits,
// timeouts, the native pool, a panic in the addon, and restify's own 404/405.
import test, { type ExecutionContext } from 'ava';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync, deflateSync } from 'node:zlib';
import { ERRORS } from '../ts/errors.ts';
import { ATTRIBUTION } from '../ts/http/headers.ts';
import { SOURCE_TYPES } from '../ts/config.ts';
import { baseCredits, creditsFor, type Format } from '../ts/services/credits.ts';
import type { Plan } from '../ts/services/keys.ts';
import { check as checkGeoJson } from '@placemarkio/check-geojson';
import { parse as csvParse } from 'csv-parse/sync';
import { parseCsv } from './helpers/csv.ts';
import { testDataDir, testStore, largestBrand, type Location } from './helpers/dataset.ts';
import { geojsonProblems, type FeatureCollection } from './helpers/geojson.ts';
import { postMap, request, type HttpResult } from './helpers/http.ts';
import { startServer, type TestServer } from './helpers/server.ts';
import { snapshotDir, startServe, type ChildServer } from './helpers/child.ts';
import { openDatabase } from '../ts/db/database.ts';
import { query } from '../ts/native.ts';
import { KeyStore } from '../ts/services/keys.ts';
import { DAY_MS } from '../ts/time.ts';

// ------------------------------------------------------------------ fixtures and helpers

const LOCATION_FIELDS = ['id', 'name', 'lat', 'lng', 'country', 'state', 'city', 'address', 'postcode', 'phone', 'last_updated'] as const;
const PROVENANCE_FIELDS = ['source_types', 'confidence', 'storefront_type', 'alias_sources', 'last_verified'] as const;
const CSV_HEADER = 'brand,name,lat,lng,country,state,city,postcode,address,phone,last_updated';
const GEO_PROPERTIES = ['brand', 'name', 'address', 'city', 'state', 'country', 'postcode', 'phone', 'last_updated'] as const;
const STOREFRONT_TYPES = ['full_retail', 'small_format', 'pickup', 'studio', 'other'];
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
/** High enough that the rate limiter never interferes with a test that is not about it. */
const NO_RATE_LIMIT = { STOREMAP_RATE_LIMIT: '100000', STOREMAP_RATE_BURST: '100000' };


interface Envelope {
  brand: string;
  region: string;
  count: number;
  locations: Location[];
}

interface ErrorBody {
  error: string;
  code: string;
  suggestions?: { brand: string; location_count: number }[];
  details?: unknown;
}

type Server = TestServer & { key: string; keyId: string };

async function server(t: ExecutionContext, opts: { env?: Record<string, string>; now?: () => number; credits?: number } = {}): Promise<Server> {
  const s = await startServer(t, { env: { ...NO_RATE_LIMIT, ...opts.env }, now: opts.now });
  const k = s.keys.create({ plan: 'enterprise', credits: opts.credits ?? 1_000_000, name: 'test enterprise' });
  return { ...s, key: k.key, keyId: k.record.id };
}

function balance(s: TestServer, keyId: string): number {
  return s.keys.get(keyId)!.credits;
}

function usageRows(s: TestServer, keyId: string): { status: number | null; format: string | null; credits: number; endpoint: string }[] {
  return s.db.prepare('SELECT status, format, credits, endpoint FROM usage WHERE key_id = ? ORDER BY id').all(keyId) as never;
}

/** Asserts an error response: status, code from the registry, JSON body with a string error. */
function assertError(t: ExecutionContext, res: HttpResult, status: number, code: keyof typeof ERRORS): ErrorBody {
  t.is(res.status, status, `expected ${status} ${code}, got ${res.status}: ${res.text.slice(0, 300)}`);
  t.regex(res.header('content-type'), /^application\/json/);
  const body = res.json<ErrorBody>();
  t.is(body.code, code);
  t.is(ERRORS[code].status as number, status);
  t.is(typeof body.error, 'string');
  t.true(body.error.length > 0);
  t.is(res.header('x-credits-charged'), '', 'an error carries no X-Credits-Charged');
  return body;
}

async function ok(t: ExecutionContext, s: Server, body: Record<string, unknown>, key = s.key): Promise<HttpResult> {
  const res = await postMap(s.base, key, body);
  t.is(res.status, 200, `${JSON.stringify(body)} -> ${res.status}: ${res.text.slice(0, 300)}`);
  return res;
}

async function okJson(t: ExecutionContext, s: Server, body: Record<string, unknown>, key = s.key): Promise<{ res: HttpResult; env: Envelope }> {
  const res = await ok(t, s, body, key);
  return { res, env: res.json<Envelope>() };
}

const ids = (ls: { id: string }[]) => ls.map((l) => l.id);
const sortedUnique = (xs: string[]) => [...new Set(xs)].sort();
const union = (ls: Location[]) => sortedUnique(ls.flatMap((l) => l.source_types ?? []));


/** Checks every header a 200 of this endpoint must carry. */
function assertDataHeaders(t: ExecutionContext, res: HttpResult, s: TestServer, expect: { count: number; brand: string; region?: string; sources?: string[] }): void {
  // X-Attribution: all four sources, alphabetical, whatever contributed.
  const attribution = res.header('x-attribution');
  t.is(attribution, ATTRIBUTION);
  const parts = attribution.split('; ');
  t.is(parts.length, 4);
  t.deepEqual([...parts].sort((a, b) => a.localeCompare(b)), parts, 'X-Attribution is alphabetical');
  for (const [i, re] of [/AllThePlaces/, /Foursquare/, /OpenStreetMap/, /Overture/].entries()) t.regex(parts[i], re);

  // X-Data-Sources: alphabetical, a non-empty subset of the four source codes.
  const sources = res.header('x-data-sources').split(',');
  t.deepEqual(sources, sortedUnique(sources), 'X-Data-Sources is alphabetical without duplicates');
  t.true(sources.length >= 1 && sources.every((x) => (SOURCE_TYPES as readonly string[]).includes(x)), `X-Data-Sources ${sources}`);
  if (expect.sources) t.deepEqual(sources, expect.sources, 'X-Data-Sources is the union of the rows’ source_types');

  t.is(res.header('x-location-count'), String(expect.count));
  t.is(res.header('x-brand'), expect.brand);
  t.true(res.header('x-region').length > 0);
  if (expect.region !== undefined) t.is(res.header('x-region'), expect.region);
  t.regex(res.header('x-credits-charged'), /^\d+$/);
  t.regex(res.header('x-credits-remaining'), /^\d+$/);
  t.regex(res.header('x-render-time'), /^\d+ms$/);
  t.is(res.header('x-cached'), 'false');
  t.is(res.header('x-ratelimit-limit'), String(s.config.rateBurst));
  t.regex(res.header('x-ratelimit-remaining'), /^\d+$/);
  t.true(Number(res.header('x-ratelimit-remaining')) <= s.config.rateBurst);
  t.regex(res.header('x-ratelimit-reset'), /^\d+$/);
  t.is(res.header('x-trial-cap-applied'), '', 'no trial cap on an enterprise key');
}

function assertLocation(t: ExecutionContext, l: Location, where: string): void {
  t.is(typeof l.id, 'string', `${where}.id`);
  t.true(l.id.length > 0, `${where}.id`);
  t.is(typeof l.name, 'string', `${where}.name`);
  t.true(typeof l.lat === 'number' && l.lat >= -90 && l.lat <= 90, `${where}.lat ${l.lat}`);
  t.true(typeof l.lng === 'number' && l.lng >= -180 && l.lng <= 180, `${where}.lng ${l.lng}`);
  t.regex(l.country, /^[A-Z]{2}$/, `${where}.country`);
  for (const k of ['state', 'city', 'address', 'postcode', 'phone'] as const) {
    t.true(l[k] === null || typeof l[k] === 'string', `${where}.${k} is ${JSON.stringify(l[k])}`);
  }
  t.regex(l.last_updated ?? "", ISO_TIME, `${where}.last_updated`);
}

function assertProvenance(t: ExecutionContext, p: Partial<Location>, where: string): void {
  // This dataset went through the multi-source pipeline: no nulls.
  t.true(Array.isArray(p.source_types) && p.source_types.length > 0, `${where}.source_types`);
  t.deepEqual(p.source_types, sortedUnique(p.source_types ?? []), `${where}.source_types sorted, unique`);
  t.true(p.source_types!.every((x) => (SOURCE_TYPES as readonly string[]).includes(x)), `${where}.source_types ${p.source_types}`);
  t.true(typeof p.confidence === 'number' && p.confidence >= 0 && p.confidence <= 1, `${where}.confidence ${p.confidence}`);
  t.true(STOREFRONT_TYPES.includes(p.storefront_type as string), `${where}.storefront_type ${p.storefront_type}`);
  t.true(Array.isArray(p.alias_sources) && p.alias_sources.length > 0, `${where}.alias_sources`);
  for (const a of p.alias_sources ?? []) {
    t.deepEqual(Object.keys(a).sort(), ['source_id', 'source_type']);
    t.true((SOURCE_TYPES as readonly string[]).includes(a.source_type) && typeof a.source_id === 'string' && a.source_id.length > 0);
  }
  t.deepEqual(sortedUnique((p.alias_sources ?? []).map((a) => a.source_type)), p.source_types, `${where}: alias_sources cover exactly source_types`);
  t.regex(p.last_verified ?? '', ISO_TIME, `${where}.last_verified`);
}

const MCD = "McDonald's";

// ------------------------------------------------------------------ formats

test('json: the envelope and every location have exactly the documented fields', async (t) => {
  const s = await server(t);
  const { res, env } = await okJson(t, s, { brand: MCD });
  t.is(res.header('content-type'), 'application/json; charset=utf-8');
  t.deepEqual(Object.keys(env).sort(), ['brand', 'count', 'locations', 'region']);
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
    for (const k of ['name', 'address', 'city', 'state', 'country', 'postcode', 'phone', 'last_updated'] as const) {
      t.is(f.properties[k], l[k], `feature ${i} ${k}`);
    }
  }
});

test('include_provenance adds exactly the five fields to json and geojson rows, and nothing to csv', async (t) => {
  const s = await server(t);
  const plain = (await okJson(t, s, { brand: MCD })).env;
  const { res, env } = await okJson(t, s, { brand: MCD, include_provenance: true });
  t.deepEqual(Object.keys(env).sort(), ['brand', 'count', 'locations', 'region']);
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

// ------------------------------------------------------------------ filters

/** The gazetteer's centre for a city name: the most populous city of that name. */
function cityCentre(name: string): { lat: number; lng: number } | null {
  const lower = name.toLowerCase();
  const text = readFileSync(path.join(testDataDir(), 'reference', 'cities.csv'), 'utf8');
  let best: { lat: number; lng: number; population: number } | null = null;
  for (const line of text.split('\n')) {
    if (!line.toLowerCase().includes(lower)) continue;
    const [row] = parseCsv(line);
    const [, cname, , , population, lat, lng] = row;
    if (cname.toLowerCase() !== lower) continue;
    if (!best || Number(population) >= best.population) best = { lat: Number(lat), lng: Number(lng), population: Number(population) };
  }
  return best;
}

function haversineKm(lat1: number, lng1: number, lat2: number, lng2: number): number {
  const rad = (d: number) => (d * Math.PI) / 180;
  const dp = rad(lat2 - lat1);
  const dl = rad(lng2 - lng1);
  const a = Math.sin(dp / 2) ** 2 + Math.cos(rad(lat1)) * Math.cos(rad(lat2)) * Math.sin(dl / 2) ** 2;
  return 2 * 6371.0088 * Math.asin(Math.min(1, Math.sqrt(a)));
}

function mostCommon(values: (string | null | undefined)[]): string {
  const m = new Map<string, number>();
  for (const v of values) if (v) m.set(v, (m.get(v) ?? 0) + 1);
  const best = [...m.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0];
  if (!best) throw new Error('no value to pick');
  return best[0];
}

test('every filter, and an AND of two, returns exactly the subset computed from the unfiltered response', async (t) => {
  const s = await server(t);
  const all = (await okJson(t, s, { brand: MCD, include_provenance: true })).env.locations;
  const ci = (a: string | null, b: string) => a !== null && a.toLowerCase() === b.toLowerCase();

  const country = mostCommon(all.map((l) => l.country));
  const usStates = all.filter((l) => l.country === 'US').map((l) => l.state);
  const state = mostCommon(usStates);
  const city = mostCommon(all.map((l) => l.city));
  const postcode = mostCommon(all.map((l) => l.postcode));
  const sft = 'small_format';
  const andCountry = mostCommon(all.filter((l) => l.storefront_type === sft).map((l) => l.country));
  // A city with one location: its sources are one row's, rarely all four.
  const perCity = new Map<string, number>();
  for (const l of all) if (l.city) perCity.set(l.city, (perCity.get(l.city) ?? 0) + 1);
  // (ASCII-named, so X-Region carries it as is rather than percent-encoded)
  // The one with the fewest sources, so that X-Data-Sources is seen naming fewer than four.
  const sourcesIn = (c: string) => all.find((l) => l.city === c)?.source_types?.length ?? 4;
  const lone = [...perCity.entries()]
    .filter(([c, n]) => n === 1 && c !== city && /^[ -~]+$/.test(c))
    .map(([c]) => c)
    .sort((a, b) => sourcesIn(a) - sourcesIn(b) || a.localeCompare(b))[0];
  if (lone === undefined) throw new Error('no city with a single location');

  const cases: { name: string; filter: Record<string, unknown>; expect: Location[]; region: string }[] = [
    { name: 'country', filter: { country: country.toLowerCase() }, expect: all.filter((l) => l.country === country), region: country },
    { name: 'state', filter: { state }, expect: all.filter((l) => ci(l.state, state)), region: state },
    { name: 'city (case-insensitive)', filter: { city: city.toUpperCase() }, expect: all.filter((l) => ci(l.city, city)), region: city.toUpperCase() },
    {
      name: 'postcode',
      filter: { postcode },
      expect: all.filter((l) => l.postcode !== null && l.postcode.replace(/\s/g, '').toLowerCase() === postcode.replace(/\s/g, '').toLowerCase()),
      region: postcode,
    },
    { name: 'storefront_type', filter: { storefront_type: sft }, expect: all.filter((l) => l.storefront_type === sft), region: 'worldwide' },
    { name: 'storefront_type pickup', filter: { storefront_type: 'pickup' }, expect: all.filter((l) => l.storefront_type === 'pickup'), region: 'worldwide' },
    {
      name: 'country AND storefront_type',
      filter: { country: andCountry, storefront_type: sft },
      expect: all.filter((l) => l.country === andCountry && l.storefront_type === sft),
      region: andCountry,
    },
    {
      name: 'country AND state',
      filter: { country: 'US', state },
      expect: all.filter((l) => l.country === 'US' && ci(l.state, state)),
      region: `US / ${state}`,
    },
    { name: 'city with one location', filter: { city: lone }, expect: all.filter((l) => ci(l.city, lone)), region: lone },
  ];
  for (const c of cases) {
    t.true(c.expect.length > 0 && c.expect.length < all.length, `${c.name}: the expected subset is a non-empty strict subset (${c.expect.length})`);
    const { res, env } = await okJson(t, s, { brand: MCD, include_provenance: true, ...c.filter });
    t.deepEqual(ids(env.locations), ids(c.expect), `${c.name}: ${JSON.stringify(c.filter)}`);
    t.is(env.count, c.expect.length, c.name);
    t.is(env.region, c.region, `${c.name}: region`);
    assertDataHeaders(t, res, s, { count: c.expect.length, brand: MCD, region: c.region, sources: union(c.expect) });
    t.is(Number(res.header('x-credits-charged')), creditsFor(c.expect.length, 'json'));
  }
  // Some filtered subset draws on fewer than all four sources, so X-Data-Sources is really
  // compared with the rows' union, not with a constant.
  t.true(cases.some((c) => union(c.expect).length < 4), 'a filtered subset with fewer than four sources');
  // The AND is narrower than either filter alone.
  t.true(cases[6].expect.length < cases[0].expect.length || andCountry !== country);
  t.true(cases[6].expect.length < cases[4].expect.length);

  // radius_km with city: rows within the radius of the gazetteer's centre for that city.
  const radius = 100;
  let best: { city: string; inside: Location[]; centre: { lat: number; lng: number } } | null = null;
  for (const name of ['New York City', 'London', 'Tokyo', 'Los Angeles', 'Paris', 'Chicago', 'Berlin', 'Sydney']) {
    const centre = cityCentre(name);
    if (!centre) continue;
    const inside = all.filter((l) => haversineKm(centre.lat, centre.lng, l.lat, l.lng) <= radius);
    if (!best || inside.length > best.inside.length) best = { city: name, inside, centre };
  }
  t.truthy(best);
  const { city: rcity, centre } = best!;
  t.true(best!.inside.length >= 2, `at least two ${MCD} within ${radius} km of ${rcity}`);
  const { res, env } = await okJson(t, s, { brand: MCD, include_provenance: true, city: rcity, radius_km: radius });
  const got = new Set(ids(env.locations));
  for (const l of all) {
    const d = haversineKm(centre.lat, centre.lng, l.lat, l.lng);
    if (Math.abs(d - radius) < 0.1) continue; // too close to the edge to call
    t.is(got.has(l.id), d < radius, `${l.id} at ${d.toFixed(2)} km from ${rcity}`);
  }
  t.deepEqual(ids(env.locations), ids(all.filter((l) => got.has(l.id))), 'radius rows keep the unfiltered order');
  t.is(env.region, `${rcity} +${radius} km`);
  assertDataHeaders(t, res, s, { count: env.count, brand: MCD, region: env.region, sources: union(env.locations) });
});

// ------------------------------------------------------------------ brand resolution

test('ticker, aliases and case resolve to the canonical brand, echoed in body and X-Brand', async (t) => {
  const s = await server(t);
  const canonical = (await okJson(t, s, { brand: MCD })).env;
  for (const name of ['MCD', 'mcd', 'mcdonalds', 'Mc Donalds', "MCDONALD'S"]) {
    const { res, env } = await okJson(t, s, { brand: name });
    t.is(env.brand, MCD, name);
    t.is(res.header('x-brand'), MCD, name);
    t.deepEqual(ids(env.locations), ids(canonical.locations), name);
  }
  const csv = await ok(t, s, { brand: 'MCD', format: 'csv' });
  t.true(parseCsv(csv.text.replace(/\r?\n$/, '')).slice(1).every((r) => r[0] === MCD), 'csv brand column carries the canonical name');
});

test('a typo gets 404 NOT_FOUND with suggestions; a known brand with no matching rows gets 404; neither is charged', async (t) => {
  const s = await server(t, { credits: 500 });
  const starbucks = await ok(t, s, { brand: 'Starbucks' });
  const starbucksCount = Number(starbucks.header('x-location-count'));
  const before = balance(s, s.keyId);

  const typo = assertError(t, await postMap(s.base, s.key, { brand: 'Starbuks' }), 404, 'NOT_FOUND');
  t.true(Array.isArray(typo.suggestions) && typo.suggestions.length >= 1);
  t.deepEqual(typo.suggestions![0], { brand: 'Starbucks', location_count: starbucksCount });
  for (const sug of typo.suggestions!) {
    t.deepEqual(Object.keys(sug).sort(), ['brand', 'location_count']);
    t.true(typeof sug.brand === 'string' && Number.isInteger(sug.location_count));
  }

  const all = (await okJson(t, s, { brand: MCD })).env.locations;
  const empty = ['AQ', 'GL', 'VA', 'NR'].find((c) => !all.some((l) => l.country === c))!;
  t.truthy(empty, 'a country without McDonald’s rows');
  const none = assertError(t, await postMap(s.base, s.key, { brand: MCD, country: empty }), 404, 'NOT_FOUND');
  t.true(none.suggestions === undefined || Array.isArray(none.suggestions));
  assertError(t, await postMap(s.base, s.key, { brand: MCD, city: 'No Such City Anywhere' }), 404, 'NOT_FOUND');

  // The two successful requests were charged; the 404s were not.
  const afterOks = before - creditsFor(all.length, 'json');
  t.is(balance(s, s.keyId), afterOks);
  const rows = usageRows(s, s.keyId);
  t.deepEqual(
    rows.filter((r) => r.status === 404).map((r) => r.credits),
    [0, 0, 0],
  );
});

test('tickers: two companies in one response, both names in the label, rows of both', async (t) => {
  const s = await server(t);
  const mcd = (await okJson(t, s, { brand: MCD })).env;
  const sbux = (await okJson(t, s, { brand: 'Starbucks' })).env;
  const { res, env } = await okJson(t, s, { tickers: ['MCD', 'SBUX'] });
  t.deepEqual(env.brand.split(', '), [MCD, 'Starbucks']);
  t.is(res.header('x-brand'), env.brand);
  t.is(env.count, mcd.count + sbux.count);
  t.deepEqual(sortedUnique(ids(env.locations)), sortedUnique([...ids(mcd.locations), ...ids(sbux.locations)]));
  const mcdIds = new Set(ids(mcd.locations));
  for (const l of env.locations) t.is(l.brand, mcdIds.has(l.id) ? MCD : 'Starbucks', `row ${l.id} names its brand`);
  assertDataHeaders(t, res, s, { count: env.count, brand: env.brand });
  t.is(Number(res.header('x-credits-charged')), creditsFor(env.count, 'json'));

  const csv = await ok(t, s, { tickers: ['MCD', 'SBUX'], format: 'csv' });
  const rows = parseCsv(csv.text.replace(/\r?\n$/, '')).slice(1);
  t.is(rows.length, env.count);
  t.deepEqual(sortedUnique(rows.map((r) => r[0])), [MCD, 'Starbucks']);
});

test('duplicate tickers count once; five tickers are accepted', async (t) => {
  const s = await server(t);
  const mcd = (await okJson(t, s, { brand: MCD })).env;
  const { res, env } = await okJson(t, s, { tickers: ['MCD', 'mcdonalds', "McDonald's"] });
  t.is(env.brand, MCD);
  t.deepEqual(ids(env.locations), ids(mcd.locations), 'no row twice');
  t.is(Number(res.header('x-credits-charged')), creditsFor(mcd.count, 'json'));
  const five = await okJson(t, s, { tickers: ['MCD', 'SBUX', 'SHEL', 'CHPT', '3382.T'], format: 'json' });
  t.is(five.env.brand.split(', ').length, 5);
  t.is(new Set(ids(five.env.locations)).size, five.env.count);
  t.is(Number(five.res.header('x-credits-charged')), creditsFor(five.env.count, 'json'));
});

test('non-ASCII brand and city names: UTF-8 bodies, percent-encoded X-Brand and X-Region', async (t) => {
  const s = await server(t);
  const brand = 'Chloé';
  const { res, env } = await okJson(t, s, { brand });
  t.is(env.brand, brand);
  t.is(res.header('x-brand'), 'Chlo%C3%A9');
  t.is(decodeURIComponent(res.header('x-brand')), brand);
  const csv = await ok(t, s, { brand: 'chloé', format: 'csv' });
  t.true(parseCsv(csv.text.replace(/\r?\n$/, '')).slice(1).every((r) => r[0] === brand));
  t.is(Number(csv.header('x-location-count')), env.count);

  const all = (await okJson(t, s, { brand: MCD })).env.locations;
  const city = 'São Paulo';
  const inCity = all.filter((l) => l.city?.toLowerCase() === city.toLowerCase());
  t.true(inCity.length > 0);
  const r = await okJson(t, s, { brand: MCD, city: 'SÃO PAULO' });
  t.deepEqual(ids(r.env.locations), ids(inCity));
  t.regex(r.res.header('x-region'), /^[\x20-\x7e]+$/);
  t.is(decodeURIComponent(r.res.header('x-region')), r.env.region);
});

test('a revoked key gets 401 UNAUTHORIZED and leaves no usage row', async (t) => {
  const s = await server(t);
  const k = s.keys.create({ plan: 'enterprise', credits: 100 });
  const first = await ok(t, s, { brand: 'Tesla' }, k.key);
  t.true(s.keys.revoke(k.record.id));
  assertError(t, await postMap(s.base, k.key, { brand: 'Tesla' }), 401, 'UNAUTHORIZED');
  t.is(usageRows(s, k.record.id).length, 1);
  t.is(balance(s, k.record.id), 100 - Number(first.header('x-credits-charged')));
});

test('Content-Type parameters and case are accepted: application/json; charset=utf-8, Application/JSON', async (t) => {
  const s = await server(t);
  for (const type of ['application/json; charset=utf-8', 'Application/JSON', 'application/json;charset=UTF-8']) {
    const res = await postMap(s.base, s.key, { brand: 'Tesla' }, { headers: { 'content-type': type } });
    t.is(res.status, 200, `${type}: ${res.text.slice(0, 200)}`);
  }
});

// ------------------------------------------------------------------ plans

test('trial and standard keys: data formats (and format omitted) get 403 DATA_ACCESS_FORBIDDEN and are not charged; images are served and charged', async (t) => {
  const s = await server(t);
  for (const plan of ['trial', 'standard'] as Plan[]) {
    const k = s.keys.create({ plan });
    const before = k.record.credits;
    t.true(before > 0);
    for (const format of ['json', 'csv', 'geojson', undefined]) {
      const body = format ? { brand: MCD, format } : { brand: MCD };
      assertError(t, await postMap(s.base, k.key, body), 403, 'DATA_ACCESS_FORBIDDEN');
    }
    const charged: number[] = [];
    for (const format of ['png', 'jpeg'] as const) {
      const res = await postMap(s.base, k.key, { brand: MCD, format, width: 200, height: 150 });
      t.is(res.status, 200, `${plan} ${format}: ${res.text.slice(0, 200)}`);
      t.is(res.header('content-type'), `image/${format}`);
      t.is(Number(res.header('x-credits-charged')), creditsFor(Number(res.header('x-location-count')), format));
      charged.push(Number(res.header('x-credits-charged')));
    }
    t.is(balance(s, k.record.id), before - charged[0] - charged[1], `${plan}: only the images were charged`);
    t.deepEqual(
      usageRows(s, k.record.id).map((r) => [r.status, r.format, r.credits]),
      [
        [403, 'json', 0],
        [403, 'csv', 0],
        [403, 'geojson', 0],
        [403, 'json', 0],
        [200, 'png', charged[0]],
        [200, 'jpeg', charged[1]],
      ],
    );
  }
});

test('a trial key expires after 5 days: 402 TRIAL_EXPIRED, by the server clock', async (t) => {
  let clock = Date.UTC(2026, 10, 2, 12, 0, 0);
  const s = await server(t, { now: () => clock });
  const trial = s.keys.create({ plan: 'trial' });
  t.is(trial.record.expiresAt, clock + 5 * DAY_MS);

  const check = async (expired: boolean) => {
    for (const format of ['png', 'jpeg', 'json'] as const) {
      const res = await postMap(s.base, trial.key, { brand: MCD, format, width: 100, height: 100 });
      if (expired) assertError(t, res, 402, 'TRIAL_EXPIRED');
      else if (format === 'json') assertError(t, res, 403, 'DATA_ACCESS_FORBIDDEN');
      else t.is(res.status, 200, `${format} before expiry`);
    }
  };
  await check(false);
  clock += 4 * DAY_MS;
  await check(false);
  clock = trial.record.expiresAt! - 1;
  await check(false);
  clock = trial.record.expiresAt!;
  await check(true);
  clock += DAY_MS;
  await check(true);
  const rows = usageRows(s, trial.record.id);
  t.is(rows.length, 15);
  t.deepEqual(
    rows.slice(9).map((r) => r.status),
    [402, 402, 402, 402, 402, 402],
  );
  const spent = rows.reduce((n, r) => n + r.credits, 0);
  t.true(rows.slice(9).every((r) => r.credits === 0), 'nothing charged once expired');
  t.is(rows.filter((r) => r.credits > 0).length, 6, 'the six images before expiry were charged');
  t.is(balance(s, trial.record.id), 50 - spent);
});

// ------------------------------------------------------------------ credits

test('credit tiers: baseCredits breakpoints and the 2x image multiplier', (t) => {
  const expected: [number, number][] = [
    [0, 1],
    [1, 1],
    [500, 1],
    [501, 2],
    [2000, 2],
    [2001, 3],
    [5000, 3],
    [5001, 5],
    [10000, 5],
    [10001, 8],
    [43000, 8],
  ];
  for (const [n, c] of expected) {
    t.is(baseCredits(n), c, `baseCredits(${n})`);
    for (const f of ['json', 'csv', 'geojson'] as Format[]) t.is(creditsFor(n, f), c, `creditsFor(${n}, ${f})`);
    for (const f of ['png', 'jpeg'] as Format[]) t.is(creditsFor(n, f), 2 * c, `creditsFor(${n}, ${f})`);
  }
  t.throws(() => baseCredits(-1), { instanceOf: RangeError });
  t.throws(() => baseCredits(1.5), { instanceOf: RangeError });
});

test('X-Credits-Charged is creditsFor(count, format) and X-Credits-Remaining falls by exactly the charge', async (t) => {
  const initial = 10_000;
  const s = await server(t, { credits: initial });
  const big = largestBrand();
  const requests: Record<string, unknown>[] = [
    { brand: MCD },
    { brand: big.name, format: 'csv' },
    { brand: MCD, country: 'US', format: 'geojson' },
    { tickers: ['MCD', 'SBUX', '3382.T'] },
    { brand: 'Starbucks', format: 'csv', storefront_type: 'pickup' },
    { tickers: ['MCD', 'SBUX', 'SHEL', 'CHPT', '3382.T'], format: 'geojson' },
    { brand: 'Tesla' },
  ];
  let remaining = initial;
  let sum = 0;
  const counts: number[] = [];
  for (const body of requests) {
    const res = await ok(t, s, body);
    const count = Number(res.header('x-location-count'));
    const charged = Number(res.header('x-credits-charged'));
    counts.push(count);
    t.is(charged, creditsFor(count, (body.format as Format) ?? 'json'), JSON.stringify(body));
    t.is(Number(res.header('x-credits-remaining')), remaining - charged, JSON.stringify(body));
    remaining -= charged;
    sum += charged;
    t.is(res.header('x-credits-low'), '');
  }
  t.true(counts.some((n) => n <= 500) && counts.some((n) => n > 500), `sizes on both sides of 500: ${counts}`);
  t.is(balance(s, s.keyId), initial - sum);
  t.deepEqual(
    usageRows(s, s.keyId).map((r) => r.credits),
    counts.map((n, i) => creditsFor(n, (requests[i].format as Format) ?? 'json')),
  );
});

test('402 INSUFFICIENT_CREDITS when the balance is below the cost; the balance is left unchanged', async (t) => {
  const s = await server(t, { credits: 1 });
  const big = largestBrand();
  t.true(big.locationCount > 500, 'the largest brand costs 2');
  assertError(t, await postMap(s.base, s.key, { brand: big.name }), 402, 'INSUFFICIENT_CREDITS');
  t.is(balance(s, s.keyId), 1);
  const res = await ok(t, s, { brand: MCD });
  t.is(res.header('x-credits-charged'), '1');
  t.is(res.header('x-credits-remaining'), '0');
  t.is(res.header('x-credits-low'), 'true');
  assertError(t, await postMap(s.base, s.key, { brand: MCD }), 402, 'INSUFFICIENT_CREDITS');
  t.is(balance(s, s.keyId), 0);
  t.deepEqual(
    usageRows(s, s.keyId).map((r) => [r.status, r.credits]),
    [
      [402, 0],
      [200, 1],
      [402, 0],
    ],
  );
});

test('internal keys are charged 0 and their balance never moves', async (t) => {
  const s = await server(t);
  const internal = s.keys.create({ plan: 'internal', credits: 100 });
  const big = largestBrand();
  for (const body of [{ brand: big.name }, { brand: MCD, format: 'csv' }, { brand: MCD, format: 'geojson' }]) {
    const res = await ok(t, s, body, internal.key);
    t.is(res.header('x-credits-charged'), '0');
    t.is(res.header('x-credits-remaining'), '100');
    t.is(res.header('x-credits-low'), '');
  }
  t.is(balance(s, internal.record.id), 100);
  t.deepEqual(
    usageRows(s, internal.record.id).map((r) => [r.status, r.credits]),
    [
      [200, 0],
      [200, 0],
      [200, 0],
    ],
  );
});

test('X-Credits-Low: true appears exactly when the remaining balance is below 50', async (t) => {
  const s = await server(t, { credits: 53 });
  const big = largestBrand();
  const steps: [Record<string, unknown>, number][] = [
    [{ brand: MCD }, 52],
    [{ brand: big.name }, 50],
    [{ brand: MCD }, 49],
    [{ brand: big.name }, 47],
  ];
  for (const [body, remaining] of steps) {
    const res = await ok(t, s, body);
    t.is(res.header('x-credits-remaining'), String(remaining));
    t.is(res.header('x-credits-low'), remaining < 50 ? 'true' : '', `remaining ${remaining}`);
  }
});

// ------------------------------------------------------------------ usage

test('usage: one row per request with a valid key (status, format, credits), none for an unknown key', async (t) => {
  const s = await server(t, { credits: 1000 });
  const standard = s.keys.create({ plan: 'standard' });
  const broke = s.keys.create({ plan: 'enterprise', credits: 0 });
  const unknown = 'sm_live_' + '0123456789abcdef01234567';
  const charged: number[] = [];

  const r200 = await ok(t, s, { brand: MCD, format: 'csv' });
  charged.push(Number(r200.header('x-credits-charged')));
  const r200b = await ok(t, s, { brand: MCD });
  charged.push(Number(r200b.header('x-credits-charged')));
  assertError(t, await postMap(s.base, s.key, { brand: MCD, format: 'geojson', width: 0 }), 400, 'INVALID_REQUEST');
  assertError(t, await postMap(s.base, s.key, { brand: MCD, zoom: 3 }), 400, 'INVALID_REQUEST');
  assertError(t, await postMap(s.base, standard.key, { brand: MCD }), 403, 'DATA_ACCESS_FORBIDDEN');
  assertError(t, await postMap(s.base, s.key, { brand: 'Starbuks', format: 'csv' }), 404, 'NOT_FOUND');
  assertError(t, await postMap(s.base, broke.key, { brand: MCD, format: 'geojson' }), 402, 'INSUFFICIENT_CREDITS');
  assertError(t, await postMap(s.base, unknown, { brand: MCD }), 401, 'UNAUTHORIZED');
  assertError(t, await postMap(s.base, undefined, { brand: MCD }), 401, 'UNAUTHORIZED');

  const row = (r: { status: number | null; format: string | null; credits: number; endpoint: string }) => [r.status, r.format, r.credits, r.endpoint];
  const E = '/api/v1/location-map';
  t.deepEqual(usageRows(s, s.keyId).map(row), [
    [200, 'csv', charged[0], E],
    [200, 'json', charged[1], E],
    [400, 'geojson', 0, E],
    [400, 'json', 0, E],
    [404, 'csv', 0, E],
  ]);
  t.deepEqual(usageRows(s, standard.record.id).map(row), [[403, 'json', 0, E]]);
  t.deepEqual(usageRows(s, broke.record.id).map(row), [[402, 'geojson', 0, E]]);
  const total = s.db.prepare('SELECT COUNT(*) AS n, SUM(credits) AS c FROM usage').get() as { n: number; c: number };
  t.is(total.n, 7, 'no row for the unknown or missing key');
  t.is(total.c, charged[0] + charged[1]);
  t.is(balance(s, s.keyId), 1000 - total.c);
});

// ------------------------------------------------------------------ rate limit

test('rate limit: the 4th quick request gets 429 RATE_LIMITED with Retry-After; other keys are unaffected', async (t) => {
  let clock = Date.UTC(2026, 10, 2);
  // Refusals are written only at shutdown here, so the test sees both states.
  const s = await server(t, { env: { STOREMAP_RATE_LIMIT: '1', STOREMAP_RATE_BURST: '3', STOREMAP_USAGE_FLUSH_MS: '86400000' }, now: () => clock });
  const other = s.keys.create({ plan: 'enterprise' });
  for (const remaining of [2, 1, 0]) {
    const res = await ok(t, s, { brand: 'Tesla' });
    t.is(res.header('x-ratelimit-limit'), '3');
    t.is(res.header('x-ratelimit-remaining'), String(remaining));
  }
  const before = balance(s, s.keyId);
  const limited = await postMap(s.base, s.key, { brand: 'Tesla' });
  assertError(t, limited, 429, 'RATE_LIMITED');
  t.true(Number(limited.header('retry-after')) >= 1, `Retry-After ${limited.header('retry-after')}`);
  t.regex(limited.header('retry-after'), /^\d+$/);
  t.is(limited.header('x-ratelimit-remaining'), '0');
  t.is(limited.header('x-ratelimit-limit'), '3');
  t.is(balance(s, s.keyId), before, 'a 429 is not charged');

  const res = await ok(t, s, { brand: 'Tesla' }, other.key);
  t.is(res.header('x-ratelimit-remaining'), '2', 'another key has its own bucket');

  clock += 1000; // one token back
  await ok(t, s, { brand: 'Tesla' });
  assertError(t, await postMap(s.base, s.key, { brand: 'Tesla' }), 429, 'RATE_LIMITED');
  // Refusals are counted without a row each: none is written yet, the report counts them.
  const rows = () => s.db.prepare('SELECT status, credits, requests FROM usage WHERE key_id = ? ORDER BY id').all(s.keyId) as { status: number; credits: number; requests: number }[];
  t.deepEqual(
    rows().map((r) => [r.status, r.credits > 0, r.requests]),
    [200, 200, 200, 200].map((st) => [st, true, 1]),
  );
  clock += 1000; // the usage report is rate-limited with the key too
  const report = await request(s.base, { method: 'GET', path: '/api/v1/usage', headers: { 'x-api-key': s.key } });
  t.is(report.status, 200);
  t.deepEqual(report.json<{ by_status: Record<string, number> }>().by_status, { '200': 4, '429': 2 });
  // At shutdown they are written as one row that stands for both.
  await s.stop();
  t.deepEqual(
    rows().map((r) => [r.status, r.credits > 0, r.requests]),
    [...[200, 200, 200, 200].map((st) => [st, true, 1]), [429, false, 2]],
  );
});

// ------------------------------------------------------------------ body limits

test('body limit (2048 bytes): declared, chunked and decompressed sizes; gzip and deflate accepted; unknown encodings 415', async (t) => {
  const s = await server(t, { env: { STOREMAP_MAX_BODY_BYTES: '2048' } });
  const padded = (size: number) => {
    const base = JSON.stringify({ brand: 'Tesla' });
    return base.slice(0, -1) + ' '.repeat(size - base.length) + '}';
  };
  t.is(Buffer.byteLength(padded(3000)), 3000);
  const send = (body: Buffer | string | Buffer[], headers: Record<string, string> = {}) =>
    request(s.base, { path: '/api/v1/location-map', headers: { 'content-type': 'application/json', 'x-api-key': s.key, ...headers }, body });

  assertError(t, await send(padded(3000)), 413, 'PAYLOAD_TOO_LARGE');
  t.is((await send(padded(2048))).status, 200, 'exactly the limit is accepted');
  assertError(t, await send(padded(2049)), 413, 'PAYLOAD_TOO_LARGE');
  // No Content-Length: counted while reading.
  const chunks = [Buffer.from(padded(3000).slice(0, 1500)), Buffer.from(padded(3000).slice(1500))];
  assertError(t, await send(chunks), 413, 'PAYLOAD_TOO_LARGE');
  t.is((await send([Buffer.from(padded(1000).slice(0, 500)), Buffer.from(padded(1000).slice(500))])).status, 200);

  // A gzip body small on the wire but past the limit once decompressed.
  const bomb = gzipSync(padded(100_000));
  t.true(bomb.length < 2048, `compressed ${bomb.length} bytes`);
  assertError(t, await send(bomb, { 'content-encoding': 'gzip' }), 413, 'PAYLOAD_TOO_LARGE');
  assertError(t, await send(deflateSync(padded(100_000)), { 'content-encoding': 'deflate' }), 413, 'PAYLOAD_TOO_LARGE');

  const plain = await send(JSON.stringify({ brand: 'Tesla', format: 'csv' }));
  t.is(plain.status, 200);
  const gz = await send(gzipSync(padded(1500)), { 'content-encoding': 'gzip' });
  t.is(gz.status, 200, gz.text.slice(0, 200));
  const gzCsv = await send(gzipSync(JSON.stringify({ brand: 'Tesla', format: 'csv' })), { 'content-encoding': 'gzip' });
  t.is(gzCsv.text, plain.text, 'a gzip body gives the same answer');
  const df = await send(deflateSync(JSON.stringify({ brand: 'Tesla', format: 'csv' })), { 'content-encoding': 'deflate' });
  t.is(df.text, plain.text);

  assertError(t, await send(JSON.stringify({ brand: 'Tesla' }), { 'content-encoding': 'br' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
  assertError(t, await send(Buffer.from('not gzip at all'), { 'content-encoding': 'gzip' }), 400, 'INVALID_JSON');
  // Still serving.
  t.is((await send(JSON.stringify({ brand: 'Tesla' }))).status, 200);
});

// ------------------------------------------------------------------ time limits, pool, panic

test('a task past STOREMAP_REQUEST_TIMEOUT_MS gets 503 TIMEOUT at the deadline', async (t) => {
  const s = await server(t, { env: { STOREMAP_TEST_HOOKS: '1', STOREMAP_REQUEST_TIMEOUT_MS: '200' } });
  const started = performance.now();
  const res = await request(s.base, { path: '/api/v1/__test/slow?ms=8000' });
  const elapsed = performance.now() - started;
  assertError(t, res, 503, 'TIMEOUT');
  // Wide apart on purpose: under CI load the event loop can lag by a second or two.
  t.true(elapsed >= 190 && elapsed < 6000, `answered after ${Math.round(elapsed)} ms, at the 200 ms deadline rather than after the 8 s task`);
  const fast = await request(s.base, { path: '/api/v1/__test/slow?ms=20' });
  t.is(fast.status, 200);
  t.deepEqual(fast.json(), { slept_ms: 20 });
});

test('location-map behind a full pool: 503 SERVICE_BUSY, and a queued request past its deadline 503 TIMEOUT; neither is charged', async (t) => {
  const s = await server(t, {
    credits: 100,
    env: { STOREMAP_TEST_HOOKS: '1', STOREMAP_NATIVE_CONCURRENCY: '1', STOREMAP_NATIVE_QUEUE: '1', STOREMAP_REQUEST_TIMEOUT_MS: '300' },
  });
  // Tasks that hold the pool until the test opens their gate, and the pool's state read from
  // the server: no step depends on how fast a loaded machine is.
  const open = (gate: string) => request(s.base, { path: `/api/v1/__test/open?gate=${gate}` });
  const poolIs = async (running: number, waiting: number) => {
    for (let i = 0; i < 400; i++) {
      const d = (await request(s.base, { method: 'GET', path: '/api/v1/__test/pool' })).json<{ running: number; waiting: number }>();
      if (d.running === running && d.waiting === waiting) return;
      await new Promise((r) => setTimeout(r, 25));
    }
    t.fail(`the pool never had ${running} running and ${waiting} waiting`);
  };
  // Busy: one task runs, one waits; the map request finds no room.
  const a = request(s.base, { path: '/api/v1/__test/slow?gate=a' });
  await poolIs(1, 0);
  const b = request(s.base, { path: '/api/v1/__test/slow?gate=b' });
  await poolIs(1, 1);
  assertError(t, await postMap(s.base, s.key, { brand: MCD }), 503, 'SERVICE_BUSY');
  await open('a');
  await poolIs(1, 0); // b took a's slot
  await open('b');
  await Promise.all([a, b]);
  await poolIs(0, 0);

  // Timeout: one task holds the pool; the map request waits in the queue past its 300 ms
  // deadline and is answered then, with the pool still held; its query runs (uncharged) once
  // the pool frees.
  const c = request(s.base, { path: '/api/v1/__test/slow?gate=c' });
  await poolIs(1, 0);
  const timedOut = await postMap(s.base, s.key, { brand: MCD, format: 'csv' });
  assertError(t, timedOut, 503, 'TIMEOUT');
  // Answered at the deadline, not when the pool freed: the pool is still held.
  const held = (await request(s.base, { method: 'GET', path: '/api/v1/__test/pool' })).json<{ running: number }>();
  t.is(held.running, 1, 'the timed-out request was answered while the pool was still held');
  await open('c');
  await c;
  await poolIs(0, 0);
  // A barrier: the pool is FIFO with one slot, so once a new map request gets its 200, the
  // queued (timed-out) query has run and finished. Under load the slow task may still hold
  // the pool a little longer: retry while the pool says it is busy.
  let res = await postMap(s.base, s.key, { brand: MCD });
  let retries = 0;
  while (res.status === 503 && res.json<ErrorBody>().code === 'SERVICE_BUSY' && retries < 20) {
    retries++;
    await new Promise((r) => setTimeout(r, 250));
    res = await postMap(s.base, s.key, { brand: MCD });
  }
  t.is(res.status, 200, res.text.slice(0, 200));
  const charged = Number(res.header('x-credits-charged'));
  t.is(res.header('x-credits-remaining'), String(100 - charged), 'the timed-out request was not charged');
  t.is(balance(s, s.keyId), 100 - charged);
  t.deepEqual(
    usageRows(s, s.keyId).map((r) => [r.status, r.format, r.credits]),
    [[503, 'json', 0], [503, 'csv', 0], ...Array(retries).fill([503, 'json', 0]), [200, 'json', charged]],
  );
});

test('a panic inside the addon is 500 INTERNAL as JSON, and the server keeps serving', async (t) => {
  const s = await server(t, { env: { STOREMAP_TEST_HOOKS: '1' } });
  for (let i = 0; i < 2; i++) {
    const res = await request(s.base, { path: '/api/v1/__test/panic' });
    assertError(t, res, 500, 'INTERNAL');
    t.deepEqual(Object.keys(res.json()).sort(), ['code', 'error']);
    await ok(t, s, { brand: MCD });
  }
});

// ------------------------------------------------------------------ in a child process
// What follows runs against `node bin/storemap.js serve` in a child process: if a request
// crashes the server, the failure is reported here instead of killing the test runner.

async function childWithKey(t: ExecutionContext, env: Record<string, string> = {}): Promise<{ srv: ChildServer; key: string; dbPath: string }> {
  const dataDir = await snapshotDir(t);
  const dbPath = path.join(dataDir, 'storemap.db');
  const db = openDatabase(dbPath);
  const key = new KeyStore(db).create({ plan: 'enterprise', credits: 10_000 }).key;
  db.close();
  const srv = await startServe(t, { dataDir, dbPath, env: { ...NO_RATE_LIMIT, ...env } });
  return { srv, key, dbPath };
}

/** After a request: is the server process still up and answering? */
async function stillServing(srv: ChildServer): Promise<boolean> {
  await new Promise((r) => setTimeout(r, 150));
  if (!srv.alive()) return false;
  try {
    return (await request(srv.base, { method: 'GET', path: '/healthz', timeoutMs: 5_000 })).status === 200;
  } catch {
    return false;
  }
}

const lastLines = (text: string) => text.split('\n').filter((l) => !/DEP0111|trace-deprecation|sm_live_/.test(l)).slice(-12).join('\n');

test('routing errors: unknown paths 404 NOT_FOUND, other methods 405 METHOD_NOT_ALLOWED, as JSON, and the server survives them', async (t) => {
  const cases: [string, string, number, keyof typeof ERRORS][][] = [
    [
      ['GET', '/api/v1/nope', 404, 'NOT_FOUND'],
      ['POST', '/api/v1/location-maps', 404, 'NOT_FOUND'],
      ['GET', '/favicon.ico', 404, 'NOT_FOUND'],
      ['POST', '/api/v1/__test/panic', 404, 'NOT_FOUND'], // no test hooks without STOREMAP_TEST_HOOKS=1
    ],
    [
      ['GET', '/api/v1/location-map', 405, 'METHOD_NOT_ALLOWED'],
      ['PUT', '/api/v1/location-map', 405, 'METHOD_NOT_ALLOWED'],
      ['DELETE', '/api/v1/location-map', 405, 'METHOD_NOT_ALLOWED'],
    ],
  ];
  // Two servers side by side, one per kind, so one crash does not hide the other kind.
  await Promise.all(
    cases.map(async (group) => {
      const { srv, key, dbPath } = await childWithKey(t);
      for (const [method, p, status, code] of group) {
        const res = await request(srv.base, { method, path: p, headers: { 'x-api-key': key } });
        const body = assertError(t, res, status, code);
        t.deepEqual(Object.keys(body).sort(), ['code', 'error'], `${method} ${p}`);
        const up = await stillServing(srv);
        t.true(up, `the server process died after ${method} ${p} (${srv.alive() ? 'not answering, still exiting' : `exit ${JSON.stringify(await srv.exited)}`}):\n${lastLines(srv.output())}`);
        if (!up) return;
      }
      const res = await postMap(srv.base, key, { brand: MCD });
      t.is(res.status, 200);
      const db = openDatabase(dbPath);
      t.is((db.prepare("SELECT COUNT(*) AS n FROM usage WHERE status IN (404, 405)").get() as { n: number }).n, 0, 'routing errors write no usage');
      db.close();
    }),
  );
});

test('the native pool: with 1 running and 1 waiting, a third concurrent call gets 503 SERVICE_BUSY, and the server lives on', async (t) => {
  const { srv, key } = await childWithKey(t, {
    STOREMAP_TEST_HOOKS: '1',
    STOREMAP_NATIVE_CONCURRENCY: '1',
    STOREMAP_NATIVE_QUEUE: '1',
    STOREMAP_REQUEST_TIMEOUT_MS: '2500',
  });
  const slow = () => request(srv.base, { path: '/api/v1/__test/slow?ms=700' });
  const first = slow();
  await new Promise((r) => setTimeout(r, 150));
  const second = slow();
  await new Promise((r) => setTimeout(r, 150));
  const third = await slow();
  t.is((await first).status, 200);
  t.is((await second).status, 200);
  assertError(t, third, 503, 'SERVICE_BUSY');
  // The refused call must leave nothing behind: once its time limit has passed too, the
  // server still answers.
  await new Promise((r) => setTimeout(r, 2700));
  t.true(await stillServing(srv), `the server process died after the refused call:\n${lastLines(srv.output())}`);
  if (srv.alive()) t.is((await postMap(srv.base, key, { brand: MCD })).status, 200);
});

// ------------------------------------------------------------------ subdivisions

test('state outside the US: the ISO 3166-2 code or the subdivision\'s name, case- and accent-insensitive', async (t) => {
  const s = await server(t);
  // McDonald's in a French region (ISO 3166-2:FR codes and names; the first the generated test
  // data has stores in) and Île-de-France (IDF).
  const regions: [string, string][] = [
    ['OCC', 'Occitanie'],
    ['NOR', 'Normandie'],
    ['ARA', 'Auvergne-Rhône-Alpes'],
    ['NAQ', 'Nouvelle-Aquitaine'],
    ['BRE', 'Bretagne'],
  ];
  const fr = (await okJson(t, s, { brand: "McDonald's", country: 'FR' })).env.locations;
  const region = regions.find(([code]) => fr.some((l) => l.state === code));
  if (!region) throw new Error(`the test data has McDonald's in none of ${regions.map(([c]) => c).join(', ')}`);
  const [code, name] = region;
  const byCode = await okJson(t, s, { brand: "McDonald's", country: 'FR', state: code });
  t.is(byCode.env.count, fr.filter((l) => l.state === code).length);
  t.true(byCode.env.locations.every((l) => l.state === code));
  for (const state of [code.toLowerCase(), name, name.toUpperCase(), name.normalize('NFD').replace(/\p{M}/gu, '')]) {
    const same = await okJson(t, s, { brand: "McDonald's", country: 'FR', state });
    t.is(same.env.count, byCode.env.count, state);
  }
  const idf = await okJson(t, s, { brand: "McDonald's", country: 'FR', state: 'IDF' });
  for (const state of ['Île-de-France', 'ile de france', 'ILE-DE-FRANCE']) {
    t.is((await okJson(t, s, { brand: "McDonald's", country: 'FR', state })).env.count, idf.env.count, state);
  }
  // No country given: a US state's name still means the US state.
  const il = await okJson(t, s, { brand: "McDonald's", state: 'IL' });
  t.is((await okJson(t, s, { brand: "McDonald's", state: 'Illinois' })).env.count, il.env.count);
  // A subdivision of another country matches nothing in this one.
  const none = await postMap(s.base, s.key, { brand: "McDonald's", country: 'FR', state: 'Bavaria' });
  t.is(none.status, 404);
});

