// The Rust addon through ts/native.ts, against the deterministic test dataset
// (data/generated/test-data, scale 0.02, seed 7). Expectations are derived independently:
// filtered queries are compared with the subset computed here from the unfiltered JSON,
// tickers and misspellings come from the project's CSV tables, radius centres from the
// gazetteer in the dataset's reference folder.
import test, { type ExecutionContext } from 'ava';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { loadRenderer, NativeError, type NativeCode, panicForTest, query, querySync, render, testingAddon, toNativeError, type QueryRequest, type QueryResponse, type StorefrontKind } from '../ts/native.ts';
import { ROOT } from '../ts/paths.ts';
import { parseCsv, parseCsvObjects } from './helpers/csv.ts';
import { testDataDir, testStore, type Location as Loc } from './helpers/dataset.ts';


// ---------------------------------------------------------------------------------------------
// Shapes and helpers

interface Envelope {
  brand: string;
  region: string;
  count: number;
  locations: Loc[];
}
interface Feature {
  type: string;
  id: string;
  geometry: { type: string; coordinates: number[] };
  properties: Record<string, unknown>;
}
interface FeatureCollection {
  type: string;
  features: Feature[];
}

const PROVENANCE_FIELDS = ['source_types', 'confidence', 'storefront_type', 'alias_sources', 'last_verified'];
const STOREFRONT_TYPES: StorefrontKind[] = ['full_retail', 'small_format', 'pickup', 'studio', 'other'];
const CSV_HEADER = 'brand,name,lat,lng,country,state,city,postcode,address,phone,last_updated';
const FLOOR = 0.6;

type Req = Partial<QueryRequest> & { brands: number[] };

function request(req: Req): QueryRequest {
  return { format: 'json', verifiedOnly: true, ...req };
}

async function run(req: Req): Promise<QueryResponse> {
  return query(testStore(), request(req));
}

async function json(req: Req): Promise<{ res: QueryResponse; body: Envelope }> {
  const res = await run({ ...req, format: 'json' });
  return { res, body: JSON.parse(res.body.toString('utf8')) as Envelope };
}

async function rows(req: Req): Promise<Loc[]> {
  return (await json(req)).body.locations;
}

const ids = (ls: Loc[]) => ls.map((l) => l.id);
const lower = (s: string | null | undefined) => (s == null ? null : s.toLowerCase());
const postcodeKey = (s: string) => s.replace(/\s+/g, '').toLowerCase();
const communityOnly = (l: Loc) => Array.isArray(l.source_types) && l.source_types.length === 1 && l.source_types[0] === 'osm';

/** The most frequent non-null value of `key` among `ls`, with its count. */
function mostCommon<T>(ls: Loc[], key: (l: Loc) => T | null | undefined): [T, number] | undefined {
  const m = new Map<T, number>();
  for (const l of ls) {
    const v = key(l);
    if (v != null) m.set(v, (m.get(v) ?? 0) + 1);
  }
  return [...m].sort((a, b) => b[1] - a[1])[0];
}

/** Asserts that a NativeError with `code` was raised. */
async function rejectsWith(t: ExecutionContext, p: Promise<unknown>, code: NativeCode, what: string) {
  const err = await t.throwsAsync(p, undefined, `${what}: expected a rejection with code ${code}`);
  t.true(err instanceof NativeError, `${what}: expected a NativeError, got ${err?.name}`);
  t.is((err as NativeError | undefined)?.code, code, `${what}: ${err?.message}`);
}

const EARTH_RADIUS_M = 6_371_008.8;
function haversineM(lat1: number, lng1: number, lat2: number, lng2: number): number {
  const rad = Math.PI / 180;
  const dp = (lat2 - lat1) * rad;
  const dl = (lng2 - lng1) * rad;
  const a = Math.sin(dp / 2) ** 2 + Math.cos(lat1 * rad) * Math.cos(lat2 * rad) * Math.sin(dl / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(a)));
}

function readTable(file: string): Record<string, string>[] {
  return parseCsvObjects(readFileSync(path.join(ROOT, 'data', file), 'utf8'));
}

// The large brand: the most verified rows among the first 50 indices, counted by querying.
let bigBrandPromise: Promise<{ index: number; name: string; verified: Loc[] }> | undefined;
function bigBrand() {
  bigBrandPromise ??= (async () => {
    let best = { index: -1, name: '', verified: [] as Loc[] };
    for (let i = 0; i < 50; i++) {
      const ls = await rows({ brands: [i], includeProvenance: true });
      if (ls.length > best.verified.length) best = { index: i, name: testStore().brand(i)!.name, verified: ls };
    }
    if (best.index < 0) throw new Error('no brand among the first 50 has verified rows');
    return best;
  })();
  return bigBrandPromise;
}

/** The first of the first 50 brands whose verified rows have at least two storefront types. */
async function mixedStorefrontBrand(): Promise<{ index: number; verified: Loc[] } | undefined> {
  for (let i = 0; i < 50; i++) {
    const ls = await rows({ brands: [i], includeProvenance: true });
    if (new Set(ls.map((l) => l.storefront_type)).size >= 2) return { index: i, verified: ls };
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// test/helpers/csv.ts

test('csv parser: plain records, CRLF or LF, optional final line break, empty fields', (t) => {
  t.deepEqual(parseCsv(''), []);
  t.deepEqual(parseCsv('a,b,c\r\n1,2,3\r\n'), [
    ['a', 'b', 'c'],
    ['1', '2', '3'],
  ]);
  t.deepEqual(parseCsv('a,b\n1,2'), [
    ['a', 'b'],
    ['1', '2'],
  ]);
  t.deepEqual(parseCsv(',,\r\nx,,\r\n'), [
    ['', '', ''],
    ['x', '', ''],
  ]);
  t.deepEqual(parseCsv('a,'), [['a', '']]);
  t.deepEqual(parseCsv('\r\n'), [['']]);
  // A lone CR is data, not a line break.
  t.deepEqual(parseCsv('a\rb,c\r\n'), [['a\rb', 'c']]);
});

test('csv parser: quoted commas, doubled quotes, line breaks inside quotes', (t) => {
  t.deepEqual(parseCsv('"Smith, ""Jr""",x\r\n'), [['Smith, "Jr"', 'x']]);
  t.deepEqual(parseCsv('"line1\r\nline2\nline3",2\r\nnext,row\r\n'), [
    ['line1\r\nline2\nline3', '2'],
    ['next', 'row'],
  ]);
  t.deepEqual(parseCsv('"",""""\r\n'), [['', '"']]);
  t.deepEqual(parseCsv('"a,b","c"'), [['a,b', 'c']]);
  t.deepEqual(parseCsv('"""quoted"" start",end,"trailing ""q"""\n'), [['"quoted" start', 'end', 'trailing "q"']]);
  t.deepEqual(parseCsv('x,"",y\n'), [['x', '', 'y']]);
  t.deepEqual(parseCsvObjects('k,v\r\n"a,1","b\nc"\r\n'), [{ k: 'a,1', v: 'b\nc' }]);
});

test('csv parser: rejects malformed input instead of guessing', (t) => {
  t.throws(() => parseCsv('"never closed,1\r\n'), { message: /unterminated/ });
  t.throws(() => parseCsv('ab"c,1\r\n'), { message: /quote inside an unquoted field/ });
  t.throws(() => parseCsv('"ab"c,1\r\n'), { message: /after a closing quote/ });
  t.throws(() => parseCsvObjects('a,b\r\n1\r\n'), { message: /1 fields, the header 2/ });
});

// ---------------------------------------------------------------------------------------------
// Resolution

function resolvedName(name: string): { name: string; by: string; brand: number } | null {
  const r = testStore().resolve(name);
  if (!r) return null;
  // The name reported must be the brand record's own name.
  if (testStore().brand(r.brand)?.name !== r.name) throw new Error(`resolve(${name}) reports ${r.name} but brand(${r.brand}) is ${testStore().brand(r.brand)?.name}`);
  return r;
}

test('resolve: the canonical name in any case', (t) => {
  for (const q of ["McDonald's", "mcdonald's", "MCDONALD'S", "mCdOnAlD's", '  McDonald’s  ']) {
    const r = resolvedName(q);
    t.is(r?.name, "McDonald's", q);
  }
  t.is(resolvedName('STARBUCKS')?.name, 'Starbucks');
  t.is(resolvedName("McDonald's")?.by, 'name');
});

test('resolve: without the apostrophe, with or without spaces, without the leading article', (t) => {
  const cases: [string, string][] = [
    ['mcdonalds', "McDonald's"],
    ['MCDONALDS', "McDonald's"],
    ['Mc Donalds', "McDonald's"],
    ['homedepot', 'The Home Depot'],
    ['HomeDepot', 'The Home Depot'],
    ['home depot', 'The Home Depot'],
    ['the home depot', 'The Home Depot'],
  ];
  for (const [q, name] of cases) t.is(resolvedName(q)?.name, name, `resolve(${JSON.stringify(q)})`);
  t.is(resolvedName('home depot')?.by, 'variant');
});

test('resolve: a CJK alternative name', (t) => {
  const r = resolvedName('マクドナルド');
  t.is(r?.name, "McDonald's");
  t.is(r?.by, 'alt_name');
});

test('resolve: tickers MCD and sbux resolve to the brands data/tickers.csv names', (t) => {
  const tickers = readTable('tickers.csv');
  for (const q of ['MCD', 'sbux', 'Sbux']) {
    const row = tickers.find((r) => r.ticker === q.toUpperCase());
    if (!row) return t.fail(`${q.toUpperCase()} is not in data/tickers.csv`);
    t.true(testStore().isTicker(q), `isTicker(${q})`);
    const r = resolvedName(q);
    const got = r ? `brand ${r.brand} '${r.name}' (by ${r.by}, ${testStore().brand(r.brand)?.locationCount} verified rows)` : 'null';
    t.is(r?.name, row.brand, `resolve(${JSON.stringify(q)}) gave ${got}; data/tickers.csv maps ${row.ticker} to ${row.brand}`);
    t.is(r?.by, 'ticker', `resolve(${JSON.stringify(q)}) should resolve by ticker, gave ${got}`);
  }
});

test('resolve: a portfolio ticker (YUM) resolves to its one primary brand', (t) => {
  const tickers = readTable('tickers.csv');
  const yum = tickers.find((r) => r.ticker === 'YUM');
  if (!yum) return t.fail('YUM is not in data/tickers.csv');
  const portfolio = yum.portfolio.split('|').filter(Boolean);
  t.true(portfolio.length > 0, 'YUM should have a portfolio in data/tickers.csv');
  for (const q of ['YUM', 'yum']) {
    const r = resolvedName(q);
    t.is(r?.name, yum.brand, `resolve(${q})`);
    t.is(r?.by, 'ticker');
  }
  t.is(testStore().brand(resolvedName('YUM')!.brand)?.ticker, 'YUM');
  // The portfolio brands are brands of their own, not aliases of the primary.
  for (const b of portfolio) {
    const r = resolvedName(b);
    if (r) t.not(r.name, yum.brand, `${b} must not resolve to ${yum.brand}`);
  }
});

test('resolve: every curated misspelling in data/misspellings.csv', (t) => {
  const table = readTable('misspellings.csv');
  t.true(table.length > 0);
  const wrong = table
    .map((r) => ({ misspelling: r.misspelling, brand: r.brand, got: resolvedName(r.misspelling) }))
    .filter((r) => r.got?.name !== r.brand)
    .map((r) => `${r.misspelling} -> ${r.got ? `${r.got.name} (${r.got.by})` : 'null'}, expected ${r.brand}`);
  t.deepEqual(wrong, []);
  t.is(resolvedName('chipolte')?.by, 'alt_name');
});

test('resolve: an unknown name resolves to null', (t) => {
  t.is(testStore().resolve('Zqxwv Nonexistent Emporium'), null);
  t.is(testStore().resolve('   '), null);
  t.is(testStore().resolve(''), null);
});

test('suggest: "Starbuks" lists Starbucks first, with its locationCount', async (t) => {
  const s = testStore().suggest('Starbuks');
  t.true(s.length >= 1, 'no suggestions');
  t.is(s[0].name, 'Starbucks');
  const b = testStore().brand(s[0].index);
  t.truthy(b);
  t.is(s[0].locationCount, b!.locationCount);
  t.is(s[0].poolCount, b!.poolCount);
  // ... and that count is what a verified query serves.
  t.is((await run({ brands: [s[0].index] })).count, s[0].locationCount);
});

test('brand(): locationCount and poolCount equal the verified and full query counts (first 50 brands)', async (t) => {
  const wrong: string[] = [];
  for (let i = 0; i < 50; i++) {
    const b = testStore().brand(i)!;
    const verified = (await run({ brands: [i] })).count;
    const pool = (await run({ brands: [i], verifiedOnly: false })).count;
    if (b.locationCount !== verified || b.poolCount !== pool) wrong.push(`${i} ${b.name}: ${b.locationCount}/${b.poolCount} vs queries ${verified}/${pool}`);
  }
  t.deepEqual(wrong, []);
  t.is(testStore().brand(testStore().info().brands), null, 'brand() past the end is null');
});

// ---------------------------------------------------------------------------------------------
// Filters: each compared with the subset of the unfiltered rows computed here

test('filter: country (any case)', async (t) => {
  const big = await bigBrand();
  const [country] = mostCommon(big.verified, (l) => l.country)!;
  const expected = big.verified.filter((l) => l.country === country);
  t.true(expected.length > 0 && expected.length < big.verified.length);
  for (const q of [country, country.toLowerCase()]) {
    const { res, body } = await json({ brands: [big.index], country: q, includeProvenance: true });
    t.deepEqual(body.locations, expected, `country=${q}`);
    t.is(res.count, expected.length);
    t.is(body.count, expected.length);
  }
  t.deepEqual(await rows({ brands: [big.index], country: 'ZZ' }), [], 'an unknown country matches nothing');
});

test('filter: state (case-insensitive)', async (t) => {
  const big = await bigBrand();
  const [state] = mostCommon(big.verified, (l) => (l.country === 'US' ? l.state : null)) ?? mostCommon(big.verified, (l) => l.state)!;
  const expected = big.verified.filter((l) => lower(l.state) === state.toLowerCase());
  t.true(expected.length > 0 && expected.length < big.verified.length);
  for (const q of [state, state.toLowerCase()]) t.deepEqual(await rows({ brands: [big.index], state: q, includeProvenance: true }), expected, `state=${q}`);
});

test('filter: city (case-insensitive, also beyond ASCII)', async (t) => {
  const big = await bigBrand();
  const [city] = mostCommon(big.verified, (l) => l.city)!;
  const expected = big.verified.filter((l) => lower(l.city) === city.toLowerCase());
  t.true(expected.length > 1 && expected.length < big.verified.length);
  for (const q of [city, city.toUpperCase(), city.toLowerCase()]) t.deepEqual(await rows({ brands: [big.index], city: q, includeProvenance: true }), expected, `city=${q}`);

  // A city with a non-ASCII letter whose case changes (e.g. "Tucumán" vs "TUCUMÁN").
  const accented = big.verified.map((l) => l.city).find((c) => c != null && /[À-ÖØ-öø-ÿ]/.test(c) && c.toUpperCase().toLowerCase() === c.toLowerCase() && c.toUpperCase() !== c);
  t.truthy(accented, 'the test dataset should have a city with an accented letter for this brand');
  if (accented) {
    const exp = big.verified.filter((l) => lower(l.city) === accented.toLowerCase());
    t.deepEqual(ids(await rows({ brands: [big.index], city: accented.toUpperCase() })), ids(exp), `city=${accented.toUpperCase()}`);
  }
});

test('filter: postcode (ignores case and spaces)', async (t) => {
  // The biggest brand may trade where postcodes are digits only (India): take the biggest of
  // the first 50 with a postcode of letters and a space (a UK or Canadian one).
  const spaced = (l: Loc) => (l.postcode && /\s/.test(l.postcode) && /[A-Za-z]/.test(l.postcode) ? l.postcode : null);
  let big: { index: number; verified: Loc[] } | undefined;
  for (let i = 0; i < 50; i++) {
    const ls = await rows({ brands: [i], includeProvenance: true });
    if (ls.some(spaced) && ls.length > (big?.verified.length ?? 0)) big = { index: i, verified: ls };
  }
  if (!big) return t.fail('the test dataset should have a brand among the first 50 with a postcode of letters and a space');
  const pick = mostCommon(big.verified, spaced);
  if (!pick) return t.fail('the test dataset should have a postcode with a space and letters (e.g. a UK postcode) for this brand');
  const [postcode] = pick;
  const expected = big.verified.filter((l) => l.postcode != null && postcodeKey(l.postcode) === postcodeKey(postcode));
  t.true(expected.length > 0);
  const variants = [postcode, postcodeKey(postcode), postcode.toLowerCase(), ` ${postcode.toLowerCase().split('').join(' ')} `];
  for (const q of variants) t.deepEqual(await rows({ brands: [big.index], postcode: q, includeProvenance: true }), expected, `postcode=${JSON.stringify(q)}`);

  // A numeric postcode too.
  const zip = mostCommon(big.verified, (l) => (l.postcode && /^\d+$/.test(l.postcode) ? l.postcode : null));
  if (zip) t.deepEqual(ids(await rows({ brands: [big.index], postcode: zip[0] })), ids(big.verified.filter((l) => l.postcode === zip[0])));
});

test('filter: storefront_type (every type, on the large brand and on one with mixed types)', async (t) => {
  const big = await bigBrand();
  const mixed = await mixedStorefrontBrand();
  if (!mixed) return t.fail('no brand among the first 50 has two storefront types');
  for (const b of [big, mixed]) {
    for (const type of STOREFRONT_TYPES) {
      const expected = b.verified.filter((l) => l.storefront_type === type);
      t.deepEqual(ids(await rows({ brands: [b.index], storefrontType: type })), ids(expected), `brand ${b.index} storefrontType=${type}`);
    }
  }
  await rejectsWith(t, run({ brands: [big.index], storefrontType: 'mall' } as unknown as Req), 'INVALID_REQUEST', 'storefrontType=mall');
});

test('filter: two filters combine with AND', async (t) => {
  const big = await bigBrand();
  const [country] = mostCommon(big.verified, (l) => l.country)!;
  const [state] = mostCommon(big.verified.filter((l) => l.country === country), (l) => l.state)!;
  const expected = big.verified.filter((l) => l.country === country && lower(l.state) === state.toLowerCase());
  const byState = big.verified.filter((l) => lower(l.state) === state.toLowerCase());
  t.true(expected.length > 0);
  t.deepEqual(await rows({ brands: [big.index], country: country.toLowerCase(), state: state.toLowerCase(), includeProvenance: true }), expected);
  // A state code that exists in another country must not match when the country is given.
  const other = big.verified.find((l) => l.country !== country && l.state != null);
  if (other?.state) {
    const exp = big.verified.filter((l) => l.country === country && lower(l.state) === lower(other.state));
    t.deepEqual(ids(await rows({ brands: [big.index], country, state: other.state })), ids(exp));
  }
  t.true(byState.length >= expected.length);

  const mixed = await mixedStorefrontBrand();
  if (!mixed) return t.fail('no brand among the first 50 has two storefront types');
  const [c2] = mostCommon(mixed.verified, (l) => l.country)!;
  const minority = mostCommon(
    mixed.verified.filter((l) => l.storefront_type !== 'full_retail'),
    (l) => l.storefront_type,
  )!;
  const exp2 = mixed.verified.filter((l) => l.country === c2 && l.storefront_type === minority[0]);
  t.deepEqual(ids(await rows({ brands: [mixed.index], country: c2, storefrontType: minority[0] as StorefrontKind })), ids(exp2));
});

// The gazetteer the snapshot was built from: name (lower-cased) -> its most populous entry.
let gazetteer: Map<string, { lat: number; lng: number; population: number; tie: boolean }> | undefined;
function gazetteerCentre(city: string) {
  if (!gazetteer) {
    gazetteer = new Map();
    const text = readFileSync(path.join(testDataDir(), 'reference', 'cities.csv'), 'utf8');
    for (const c of parseCsvObjects(text)) {
      const key = c.name.toLowerCase();
      const pop = Number(c.population);
      const cur = gazetteer.get(key);
      if (!cur || pop > cur.population) gazetteer.set(key, { lat: Number(c.lat), lng: Number(c.lng), population: pop, tie: false });
      else if (pop === cur.population) cur.tie = true;
    }
  }
  return gazetteer.get(city.toLowerCase());
}

test('filter: radius_km around a city centre', async (t) => {
  const big = await bigBrand();
  const radiusKm = 50;
  const m = radiusKm * 1000;
  // The city (as named on the brand's rows) with the most rows within the radius of its
  // gazetteer centre (the most populous place of that name; ties are skipped as ambiguous).
  let best: { city: string; centre: { lat: number; lng: number }; within: Loc[] } | undefined;
  for (const city of new Set(big.verified.map((l) => l.city).filter((c): c is string => c != null))) {
    const g = gazetteerCentre(city);
    if (!g || g.tie) continue;
    const within = big.verified.filter((l) => haversineM(g.lat, g.lng, l.lat, l.lng) <= m);
    if (!best || within.length > best.within.length) best = { city, centre: g, within };
  }
  if (!best) return t.fail('no city of the brand is in the gazetteer');
  t.true(best.within.length >= 2, `want a city with several rows within ${radiusKm} km`);
  const { city, centre } = best;
  t.log(`${city}: ${best.within.length} rows within ${radiusKm} km, ${best.within.filter((l) => lower(l.city) !== city.toLowerCase()).length} of them named otherwise`);
  const dist = (l: Loc) => haversineM(centre.lat, centre.lng, l.lat, l.lng);
  // Rows within a metre of the circle are left out of the comparison (float noise).
  const clear = (ls: Loc[]) => ls.filter((l) => Math.abs(dist(l) - m) > 1);

  const got = await rows({ brands: [big.index], city: city.toUpperCase(), radiusKm, includeProvenance: true });
  for (const l of got) t.true(dist(l) <= m + 1, `${l.id} (${l.city}) is ${(dist(l) / 1000).toFixed(2)} km from the ${city} centre, beyond ${radiusKm} km`);
  const gotIds = new Set(ids(got));
  for (const l of big.verified.filter((l) => lower(l.city) === city.toLowerCase() && dist(l) <= m)) {
    t.true(gotIds.has(l.id), `${l.id} is in ${city}, ${(dist(l) / 1000).toFixed(2)} km from the centre, but missing`);
  }
  t.deepEqual(ids(clear(got)), ids(clear(best.within)), `rows within ${radiusKm} km of ${city}`);

  // A smaller radius returns a subset.
  const small = await rows({ brands: [big.index], city, radiusKm: 5 });
  t.true(small.every((l) => gotIds.has(l.id)));
  t.true(small.every((l) => dist(l) <= 5000 + 1));
});

test('filter: radius_km without city is INVALID_REQUEST; unknown city is UNKNOWN_CITY', async (t) => {
  const big = await bigBrand();
  await rejectsWith(t, run({ brands: [big.index], radiusKm: 10 }), 'INVALID_REQUEST', 'radius without city');
  await rejectsWith(t, run({ brands: [big.index], radiusKm: 10, country: 'US' }), 'INVALID_REQUEST', 'radius with country but no city');
  await rejectsWith(t, run({ brands: [big.index], city: 'Qzxwvtown Nowhere', radiusKm: 10 }), 'UNKNOWN_CITY', 'unknown city with radius');
  await rejectsWith(t, run({ brands: [big.index], city: big.verified.find((l) => l.city)!.city!, radiusKm: -1 }), 'INVALID_REQUEST', 'negative radius');
  // Without a radius an unknown city is simply no match.
  t.deepEqual(await rows({ brands: [big.index], city: 'Qzxwvtown Nowhere' }), []);
});

// ---------------------------------------------------------------------------------------------
// Confidence floor and community-only exclusion

async function largestBrands(n: number): Promise<number[]> {
  const counts: [number, number][] = [];
  for (let i = 0; i < 50; i++) counts.push([i, (await run({ brands: [i] })).count]);
  return counts
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([i]) => i);
}

test('verified rows: confidence >= 0.6 and never community-only (the five largest brands)', async (t) => {
  for (const b of await largestBrands(5)) {
    const verified = await rows({ brands: [b], includeProvenance: true });
    t.true(verified.length > 0);
    const bad = verified.filter((l) => typeof l.confidence !== 'number' || l.confidence < FLOOR || communityOnly(l));
    t.deepEqual(
      bad.map((l) => `${l.id} confidence ${l.confidence} sources ${JSON.stringify(l.source_types)}`),
      [],
      `brand ${b} ${testStore().brand(b)?.name}`,
    );
  }
});

test('verifiedOnly:false: a superset that adds community-only and low-confidence rows', async (t) => {
  let found = false;
  for (const b of await largestBrands(5)) {
    const verified = await rows({ brands: [b], includeProvenance: true });
    const all = await rows({ brands: [b], includeProvenance: true, verifiedOnly: false });
    t.true(all.length >= verified.length);
    const allIds = new Set(ids(all));
    t.true(verified.every((l) => allIds.has(l.id)), 'every verified row is in the full set');
    const extra = all.filter((l) => !verified.some((v) => v.id === l.id));
    t.true(extra.every((l) => communityOnly(l) || (l.confidence ?? 0) < FLOOR), 'rows left out are community-only or under the floor');
    // The floor and the exclusion are the whole rule: nothing else is dropped.
    const expected = all.filter((l) => !communityOnly(l) && (l.confidence ?? 0) >= FLOOR);
    const near = (l: Loc) => Math.abs((l.confidence ?? 0) - FLOOR) < 0.0005; // rounded to 3 decimals
    t.deepEqual(ids(verified.filter((l) => !near(l))), ids(expected.filter((l) => !near(l))));
    if (extra.some(communityOnly) && extra.some((l) => (l.confidence ?? 0) < FLOOR)) found = true;
  }
  t.true(found, 'one of the largest brands should have both community-only and low-confidence rows');
});

// ---------------------------------------------------------------------------------------------
// Formats

test('csv: exact header, one record per JSON row, same values', async (t) => {
  const big = await bigBrand();
  const { res: jres, body } = await json({ brands: [big.index] });
  const csv = await run({ brands: [big.index], format: 'csv' });
  const text = csv.body.toString('utf8');
  t.true(text.startsWith(`${CSV_HEADER}\r\n`), `header line: ${JSON.stringify(text.slice(0, 120))}`);
  const [header, ...records] = parseCsv(text);
  t.is(header.join(','), CSV_HEADER);
  t.is(records.length, jres.count);
  t.is(csv.count, jres.count);
  const cols = Object.fromEntries(header.map((h, i) => [h, i]));
  records.forEach((r, k) => {
    const l = body.locations[k];
    t.is(r.length, header.length, `record ${k} has ${r.length} fields`);
    t.is(Number(r[cols.lat]), l.lat, `record ${k} lat`);
    t.is(Number(r[cols.lng]), l.lng, `record ${k} lng`);
    t.is(r[cols.brand], big.name);
    for (const f of ['name', 'country', 'state', 'city', 'postcode', 'address', 'phone', 'last_updated'] as const) {
      t.is(r[cols[f]], l[f] ?? '', `record ${k} ${f}`);
    }
  });
  // Provenance never reaches CSV.
  const withProv = await run({ brands: [big.index], format: 'csv', includeProvenance: true });
  t.true(withProv.body.equals(csv.body), 'CSV with include_provenance must be byte-identical');
});

test('csv: every pool row of every brand round-trips, fields with commas and quotes included', async (t) => {
  const store = testStore();
  const all: number[] = [];
  for (let i = 0; i < store.info().brands; i++) if (store.brand(i)!.poolCount > 0) all.push(i);
  const req: Req = { brands: all, verifiedOnly: false, brandLabel: 'all' };
  const { body } = await json(req);
  const tricky = body.locations.filter((l) => [l.brand, l.name, l.address, l.city, l.state].some((s) => s != null && /[",\r\n]/.test(s)));
  t.true(tricky.length > 0, 'the dataset should hold fields that need quoting');
  const [header, ...records] = parseCsv((await run({ ...req, format: 'csv' })).body.toString('utf8'));
  t.is(header.join(','), CSV_HEADER);
  t.is(records.length, body.locations.length);
  const fields = ['brand', 'name', 'lat', 'lng', 'country', 'state', 'city', 'postcode', 'address', 'phone', 'last_updated'] as const;
  // As the API documents it: a text cell a spreadsheet would run as a formula (first character
  // =, +, -, @, tab or CR, and not a signed number such as a phone number) gets an apostrophe.
  const asText = (v: string) => (/^[=@\t\r]/.test(v) || (/^[+-]/.test(v) && !/^[+-][\d .()\-/]*$/.test(v)) ? `'${v}` : v);
  const expect = (l: Loc) => fields.map((f) => (f === 'lat' || f === 'lng' ? l[f] : f === 'last_updated' ? (l[f] ?? '') : asText(l[f] ?? '')));
  const got = (r: string[]) => r.map((v, c) => (c === 2 || c === 3 ? Number(v) : v));
  const mismatches = records.flatMap((r, k) => (JSON.stringify(got(r)) === JSON.stringify(expect(body.locations[k])) ? [] : [`record ${k}: ${JSON.stringify(r)}`]));
  t.deepEqual(mismatches.slice(0, 5), []);
  t.log(`${records.length} records, ${tricky.length} with commas or quotes, e.g. ${JSON.stringify(tricky[0].city ?? tricky[0].name)}`);
});

test('geojson: a FeatureCollection with [lng, lat] equal to the JSON rows', async (t) => {
  const big = await bigBrand();
  const { body } = await json({ brands: [big.index] });
  const geo = await run({ brands: [big.index], format: 'geojson' });
  const fc = JSON.parse(geo.body.toString('utf8')) as FeatureCollection;
  t.is(fc.type, 'FeatureCollection');
  t.is(fc.features.length, body.locations.length);
  t.is(geo.count, body.locations.length);
  fc.features.forEach((f, k) => {
    const l = body.locations[k];
    t.is(f.type, 'Feature');
    t.is(f.id, l.id);
    t.is(f.geometry.type, 'Point');
    t.deepEqual(f.geometry.coordinates, [l.lng, l.lat], `feature ${k}`);
    t.is(f.properties.brand, big.name);
    t.is(f.properties.name, l.name);
  });
});

test('include_provenance adds exactly the five fields to JSON and GeoJSON', async (t) => {
  const big = await bigBrand();
  const plain = (await json({ brands: [big.index], verifiedOnly: false })).body.locations;
  const prov = (await json({ brands: [big.index], verifiedOnly: false, includeProvenance: true })).body.locations;
  t.is(prov.length, plain.length);
  prov.forEach((p, k) => {
    const base = plain[k] as unknown as Record<string, unknown>;
    const added = Object.keys(p).filter((key) => !(key in base));
    t.deepEqual(added.sort(), [...PROVENANCE_FIELDS].sort(), `row ${k}`);
    t.deepEqual(Object.keys(base).filter((key) => PROVENANCE_FIELDS.includes(key)), [], 'no provenance without the flag');
    const rest = Object.fromEntries(Object.entries(p).filter(([key]) => !PROVENANCE_FIELDS.includes(key)));
    t.deepEqual(rest, base, `row ${k}: the other fields are unchanged`);
  });
  const sample = prov[0];
  t.true(Array.isArray(sample.source_types) && sample.source_types.length > 0);
  t.true(Array.isArray(sample.alias_sources) && sample.alias_sources.length > 0);
  t.true((STOREFRONT_TYPES as string[]).includes(sample.storefront_type!));

  const gPlain = JSON.parse((await run({ brands: [big.index], format: 'geojson' })).body.toString()) as FeatureCollection;
  const gProv = JSON.parse((await run({ brands: [big.index], format: 'geojson', includeProvenance: true })).body.toString()) as FeatureCollection;
  t.is(gProv.features.length, gPlain.features.length);
  gProv.features.forEach((f, k) => {
    const base = gPlain.features[k];
    t.deepEqual(Object.keys(f.properties).filter((key) => !(key in base.properties)).sort(), [...PROVENANCE_FIELDS].sort());
    t.deepEqual(Object.keys(f).sort(), Object.keys(base).sort(), 'provenance goes in properties only');
  });
});

// ---------------------------------------------------------------------------------------------
// limit, errors, sync vs async

test('limit: count is cut, total counts every match', async (t) => {
  const big = await bigBrand();
  const full = await json({ brands: [big.index] });
  const cut = await json({ brands: [big.index], limit: 5 });
  t.true(full.res.count > 5);
  t.is(cut.res.count, 5);
  t.is(cut.body.count, 5);
  t.is(cut.body.locations.length, 5);
  t.is(cut.res.total, full.res.count);
  t.is(full.res.total, full.res.count);
  // The cap samples the whole result, not its first rows (rows are in latitude order): the
  // documented rule takes the rows at positions i·n/5 (docs/COVERAGE.md, trial cap).
  const n = full.body.locations.length;
  t.deepEqual(
    cut.body.locations,
    [0, 1, 2, 3, 4].map((i) => full.body.locations[Math.floor((i * n) / 5)]),
  );
  const lats = cut.body.locations.map((l: { lat: number }) => l.lat);
  const allLats = full.body.locations.map((l: { lat: number }) => l.lat);
  t.true(Math.max(...lats) - Math.min(...lats) > (Math.max(...allLats) - Math.min(...allLats)) / 2);
  const csv = await run({ brands: [big.index], format: 'csv', limit: 5 });
  t.is(parseCsv(csv.body.toString()).length - 1, 5);
  t.is(csv.total, full.res.count);
});

test('errors: an unknown format or brand index is INVALID_REQUEST', async (t) => {
  await rejectsWith(t, run({ brands: [0], format: 'xml' } as unknown as Req), 'INVALID_REQUEST', 'format xml');
  await rejectsWith(t, run({ brands: [999999] }), 'INVALID_REQUEST', 'brands [999999]');
  await rejectsWith(t, run({ brands: [] }), 'INVALID_REQUEST', 'brands []');
  // querySync reports the same codes (through toNativeError).
  const err = t.throws(() => querySync(testStore(), request({ brands: [999999] })));
  t.is(toNativeError(err).code, 'INVALID_REQUEST');
});

test('query and querySync give byte-identical bodies', async (t) => {
  const big = await bigBrand();
  const city = big.verified.find((l) => l.city)!.city!;
  const reqs: Req[] = [
    { brands: [big.index] },
    { brands: [big.index], includeProvenance: true, verifiedOnly: false },
    { brands: [big.index], format: 'csv' },
    { brands: [big.index], format: 'geojson', includeProvenance: true },
    { brands: [big.index], city, format: 'json' },
    { brands: [big.index, 1, 2], limit: 7, format: 'json' },
  ];
  for (const r of reqs) {
    const a = await run(r);
    const s = querySync(testStore(), request(r));
    t.true(Buffer.isBuffer(a.body) && Buffer.isBuffer(s.body));
    t.true(a.body.equals(s.body), `bodies differ for ${JSON.stringify(r)}`);
    t.deepEqual({ ...s, body: null }, { ...a, body: null });
  }
});

// ---------------------------------------------------------------------------------------------
// Panics (serial: they set process.env.STOREMAP_TEST_HOOKS, which the addon reads)

test.serial('panicForTest: a panic becomes INTERNAL and the process lives on', async (t) => {
  const before = (await run({ brands: [0] })).body;
  const old = process.env.STOREMAP_TEST_HOOKS;
  process.env.STOREMAP_TEST_HOOKS = '1';
  try {
    await rejectsWith(t, panicForTest(true), 'INTERNAL', 'panic on the pool');
    // Sync: the raw binding throws on the calling thread.
    const err = t.throws(() => testingAddon().panicForTest(false));
    t.is(toNativeError(err).code, 'INTERNAL', err?.message);
    await rejectsWith(t, panicForTest(false), 'INTERNAL', 'sync panic through the wrapper');
  } finally {
    if (old === undefined) delete process.env.STOREMAP_TEST_HOOKS;
    else process.env.STOREMAP_TEST_HOOKS = old;
  }
  const after = await run({ brands: [0] });
  t.true(after.body.equals(before), 'a normal query still works after the panics');
  t.true(querySync(testStore(), request({ brands: [0] })).body.equals(before));
});

test.serial('panicForTest: refused with FORBIDDEN without STOREMAP_TEST_HOOKS=1', async (t) => {
  const old = process.env.STOREMAP_TEST_HOOKS;
  delete process.env.STOREMAP_TEST_HOOKS;
  try {
    await rejectsWith(t, panicForTest(true), 'FORBIDDEN', 'hooks unset, pool');
    await rejectsWith(t, panicForTest(false), 'FORBIDDEN', 'hooks unset, sync');
    process.env.STOREMAP_TEST_HOOKS = 'true';
    await rejectsWith(t, panicForTest(true), 'FORBIDDEN', 'STOREMAP_TEST_HOOKS=true is not 1');
  } finally {
    if (old === undefined) delete process.env.STOREMAP_TEST_HOOKS;
    else process.env.STOREMAP_TEST_HOOKS = old;
  }
});

// Rust's default panic hook walks the whole stack when RUST_BACKTRACE is set, on through V8's
// generated code; Node 24 aborted there. The addon's own hook prints where, never a trace.
test('panicForTest under RUST_BACKTRACE=full: every panic is INTERNAL, reported with its place and no stack walk', (t) => {
  const script = `
    const addon = require(process.argv[1]);
    const codes = [];
    for (let i = 0; i < 25; i++) {
      try { addon.panicForTest(false); codes.push('none'); } catch (e) { codes.push(e.code); }
    }
    process.stdout.write(JSON.stringify(codes));`;
  const child = spawnSync(process.execPath, ['-e', script, path.join(ROOT, 'native', 'testing', 'index.js')], {
    env: { ...process.env, RUST_BACKTRACE: 'full', STOREMAP_TEST_HOOKS: '1' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  t.is(child.signal, null, child.stderr.slice(-2000));
  t.is(child.status, 0, child.stderr.slice(-2000));
  t.deepEqual(JSON.parse(child.stdout), Array(25).fill('INTERNAL'));
  t.false(child.stderr.includes('stack backtrace'), child.stderr.slice(0, 2000));
  const places = child.stderr.split('\n').filter((l) => /^storemap-native: panicked at native\/src\/testing\.rs:\d+: panic_for_test \(sync\)$/.test(l));
  t.is(places.length, 25, child.stderr.slice(0, 2000));
});

test('a map request whose bounds or center has the wrong length is refused at the binding, not drawn auto-fitted', async (t) => {
  const renderer = loadRenderer(path.join(testDataDir(), 'reference'));
  const store = testStore();
  const brand = store.resolve('Starbucks')!.brand;
  const base = { query: { brands: [brand], format: 'json' as const, verifiedOnly: false }, format: 'png' as const, width: 200, height: 100, scale: 1, dpi: 96, style: 'light' };
  await rejectsWith(t, render(renderer, store, { ...base, bounds: [10, 20, 30] }), 'INVALID_REQUEST', 'three bounds');
  await rejectsWith(t, render(renderer, store, { ...base, center: [10, 20, 30], zoom: 4 }), 'INVALID_REQUEST', 'three-number center');
  const ok = await render(renderer, store, { ...base, bounds: [10, 20, 30, 40] });
  t.true(ok.body.length > 0);
});
