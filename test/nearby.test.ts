// POST /api/v1/nearby on a real server over the test dataset: the nearest stores to seeded
// random points equal a brute-force scan of the same rows, read through location-map and the
// addon's own data query, sorted by this file's haversine (not the service's); then the formats,
// the plan and price rules, and the refusals.
import test from 'ava';
import { querySync } from '../ts/native.ts';
import type { Location } from './helpers/dataset.ts';
import { largestBrand, testStore } from './helpers/dataset.ts';
import { request, type HttpResult } from './helpers/http.ts';
import { assertError, balance, okJson, server, usageRows } from './helpers/location-map.ts';
import { parseCsvObjects } from './helpers/csv.ts';
import { random } from './helpers/random.ts';

const NEARBY = '/api/v1/nearby';
type Near = Location & { distance_m: number; brand?: string };
interface NearJson {
  brand: string;
  region: string;
  count: number;
  locations: Near[];
}

/** Great-circle metres, this file's own (atan2 form, mean Earth radius). */
function haversine(lat1: number, lng1: number, lat2: number, lng2: number): number {
  const rad = Math.PI / 180;
  const dp = (lat2 - lat1) * rad;
  const dl = (lng2 - lng1) * rad;
  const a = Math.sin(dp / 2) ** 2 + Math.cos(lat1 * rad) * Math.cos(lat2 * rad) * Math.sin(dl / 2) ** 2;
  return 6_371_008.8 * 2 * Math.atan2(Math.sqrt(a), Math.sqrt(1 - a));
}

function post(base: string, key: string | undefined, body: unknown): Promise<HttpResult> {
  return request(base, { path: NEARBY, body: JSON.stringify(body), headers: { 'content-type': 'application/json', ...(key ? { 'x-api-key': key } : {}) } });
}

/** The brute-force answer's distances, nearest first. */
function scan(rows: Location[], lat: number, lng: number, limit: number, radiusKm?: number): { id: string; d: number }[] {
  return rows
    .map((l) => ({ id: l.id, d: haversine(lat, lng, l.lat, l.lng) }))
    .filter((x) => radiusKm === undefined || x.d <= radiusKm * 1000)
    .sort((a, b) => a.d - b.d)
    .slice(0, limit);
}

/** The answer against the scan: the same distances in order (to the decimetre the service
 * rounds to), and each row's distance its own position's. Equal distances may come in either
 * order, so the ids are compared where the scan's distances are distinct. */
function sameAsScan(t: import('ava').ExecutionContext, got: Near[], want: { id: string; d: number }[], where: string): void {
  t.is(got.length, want.length, `${where}: count`);
  got.forEach((l, i) => {
    t.true(Math.abs(l.distance_m - want[i].d) <= 0.051, `${where} #${i}: ${l.distance_m} vs ${want[i].d}`);
    const tied = (j: number) => j >= 0 && j < want.length && Math.abs(want[j].d - want[i].d) < 0.2;
    if (!tied(i - 1) && !tied(i + 1)) t.is(l.id, want[i].id, `${where} #${i}`);
  });
}

test('a brand: the nearest stores to random points are the brute-force scan of its location-map rows', async (t) => {
  const s = await server(t);
  const brand = largestBrand();
  const { env } = await okJson(t, s, { brand: brand.name, format: 'json' });
  const rows = env.locations;
  t.true(rows.length > 500, `${brand.name}: ${rows.length} rows`);
  const next = random(7);
  let compared = 0;
  for (let k = 0; k < 24; k++) {
    // Half the points near one of the brand's stores, half anywhere.
    const near = rows[Math.floor(next() * rows.length)];
    const [lat, lng] = k % 2 ? [near.lat + (next() - 0.5) * 0.2, near.lng + (next() - 0.5) * 0.2] : [next() * 160 - 80, next() * 360 - 180];
    for (const [limit, radius] of [[1, undefined], [10, undefined], [500, undefined], [50, 25]] as [number, number | undefined][]) {
      const want = scan(rows, lat, lng, limit, radius);
      const res = await post(s.base, s.key, { brand: brand.name, lat, lng, limit, radius_km: radius });
      const where = `(${lat}, ${lng}) limit ${limit} radius ${radius}`;
      if (want.length === 0) {
        assertError(t, res, 404, 'NOT_FOUND');
        continue;
      }
      t.is(res.status, 200, `${where}: ${res.text.slice(0, 200)}`);
      const body = res.json<NearJson>();
      t.is(body.brand, brand.name);
      t.is(body.count, want.length);
      t.true(body.locations.every((l) => l.brand === undefined), 'one brand asked: no brand per row');
      sameAsScan(t, body.locations, want, where);
      for (const l of body.locations) t.true(Math.abs(haversine(lat, lng, l.lat, l.lng) - l.distance_m) <= 0.051, `${where}: ${l.id}'s own distance`);
      compared += body.locations.length;
    }
  }
  t.true(compared > 3000, `${compared} rows compared`);
});

test('any brand: the nearest stores of every brand, each row with its brand', async (t) => {
  const s = await server(t);
  const store = testStore();
  // Every data row of the dataset, read with the addon's own data query, brand by brand.
  const rows: (Location & { brandName: string })[] = [];
  for (let i = 0; store.brand(i); i++) {
    const b = store.brand(i)!;
    if (b.locationCount === 0) continue;
    const out = querySync(store, { brands: [i], format: 'json', verifiedOnly: true });
    for (const l of (JSON.parse(out.body.toString('utf8')) as { locations: Location[] }).locations) rows.push({ ...l, brandName: b.name });
  }
  const byId = new Map(rows.map((l) => [l.id, l]));
  const next = random(11);
  for (let k = 0; k < 8; k++) {
    const near = rows[Math.floor(next() * rows.length)];
    const lat = near.lat + (next() - 0.5) * 0.05;
    const lng = near.lng + (next() - 0.5) * 0.05;
    const res = await post(s.base, s.key, { lat, lng, limit: 100 });
    t.is(res.status, 200, res.text.slice(0, 200));
    const body = res.json<NearJson>();
    t.is(body.brand, 'any brand');
    sameAsScan(t, body.locations, scan(rows, lat, lng, 100), `any brand near (${lat}, ${lng})`);
    for (const l of body.locations) t.is(l.brand, byId.get(l.id)?.brandName, `${l.id}'s brand`);
  }
});

test('formats, tickers, the price and the usage row', async (t) => {
  const s = await server(t);
  const brand = largestBrand();
  const { env } = await okJson(t, s, { brand: brand.name, format: 'json', country: 'US' });
  const at = env.locations[0];
  const before = await balance(s, s.keyId);

  const json = await post(s.base, s.key, { brand: brand.name, lat: at.lat, lng: at.lng, limit: 20 });
  t.is(json.status, 200);
  const body = json.json<NearJson>();
  t.is(body.locations[0].id, at.id, 'the store at the point itself comes first');
  t.is(body.locations[0].distance_m, 0);
  t.is(json.header('x-location-count'), '20');
  t.is(json.header('x-credits-charged'), '1', 'up to 500 rows cost 1 credit (the contract’s tier)');
  t.is(await balance(s, s.keyId), before - 1);
  t.like((await usageRows(s, s.keyId)).at(-1), { endpoint: NEARBY, status: 200, format: 'json', credits: 1 });

  const csv = await post(s.base, s.key, { brand: brand.name, lat: at.lat, lng: at.lng, limit: 20, format: 'csv' });
  t.regex(csv.header('content-type'), /^text\/csv/);
  const csvRows = parseCsvObjects(csv.text);
  t.deepEqual(
    csvRows.map((r) => Number(r.distance_m)),
    body.locations.map((l) => l.distance_m),
  );
  const geo = await post(s.base, s.key, { brand: brand.name, lat: at.lat, lng: at.lng, limit: 20, format: 'geojson' });
  t.regex(geo.header('content-type'), /^application\/geo\+json/);
  const features = geo.json<{ features: { id: string; geometry: { coordinates: [number, number] }; properties: { distance_m: number } }[] }>().features;
  t.deepEqual(
    features.map((f) => [f.id, f.properties.distance_m]),
    body.locations.map((l) => [l.id, l.distance_m]),
  );
  t.deepEqual(features[0].geometry.coordinates, [at.lng, at.lat]);

  // Two tickers: rows of both companies, each named, nearest first.
  const store = testStore();
  const tickers = ['SBUX', 'MCD'];
  const two = await post(s.base, s.key, { tickers, lat: 40.75, lng: -73.99, limit: 50 });
  t.is(two.status, 200);
  const b = two.json<NearJson>();
  t.is(b.brand, tickers.map((x) => store.resolve(x)!.name).join(', '));
  const names = new Set(b.locations.map((l) => l.brand));
  t.deepEqual([...names].sort(), tickers.map((x) => store.resolve(x)!.name).sort());
  t.true(b.locations.every((l, i) => i === 0 || b.locations[i - 1].distance_m <= l.distance_m));
});

test('refusals: no key, image plans, bad bodies, unknown brands, nothing within the radius, a balance too small', async (t) => {
  const s = await server(t);
  const brand = largestBrand().name;
  assertError(t, await post(s.base, undefined, { brand, lat: 0, lng: 0 }), 401, 'UNAUTHORIZED');
  for (const plan of ['standard', 'trial'] as const) {
    const k = await s.keys.create({ plan, credits: 100 });
    assertError(t, await post(s.base, k.key, { brand, lat: 0, lng: 0 }), 403, 'DATA_ACCESS_FORBIDDEN');
  }
  for (const [body, field] of [
    [{ brand, lat: 91, lng: 0 }, 'lat'],
    [{ brand, lat: 0, lng: -180.5 }, 'lng'],
    [{ brand, lng: 0 }, 'lat'],
    [{ brand, lat: 0, lng: 0, limit: 0 }, 'limit'],
    [{ brand, lat: 0, lng: 0, limit: 501 }, 'limit'],
    [{ brand, lat: 0, lng: 0, limit: 2.5 }, 'limit'],
    [{ brand, lat: 0, lng: 0, radius_km: 0 }, 'radius_km'],
    [{ brand, lat: 0, lng: 0, format: 'png' }, 'format'],
    [{ brand, tickers: ['MCD'], lat: 0, lng: 0 }, 'tickers'],
    [{ brand, lat: '0', lng: 0 }, 'lat'],
    [{ brand, lat: 0, lng: 0, near: 'me' }, 'near'],
  ] as [Record<string, unknown>, string][]) {
    const err = assertError(t, await post(s.base, s.key, body), 400, 'INVALID_REQUEST');
    t.true(((err.details ?? []) as { field: string }[]).some((d) => d.field === field), `${JSON.stringify(body)}: ${JSON.stringify(err.details)}`);
  }
  const unknown = assertError(t, await post(s.base, s.key, { brand: 'Zzqx Nonexistent Coffee', lat: 0, lng: 0 }), 404, 'NOT_FOUND');
  t.true(Array.isArray(unknown.suggestions));
  const before = await balance(s, s.keyId);
  // The middle of the South Pacific: nothing within a kilometre; 404 and free.
  assertError(t, await post(s.base, s.key, { brand, lat: -48.87, lng: -123.39, radius_km: 1 }), 404, 'NOT_FOUND');
  t.is(await balance(s, s.keyId), before);
  const poor = await s.keys.create({ plan: 'enterprise', credits: 0 });
  assertError(t, await post(s.base, poor.key, { brand, lat: 0, lng: 0 }), 402, 'INSUFFICIENT_CREDITS');
});

test('a name is read in the country the point is in: Woolworths beside Sydney is Australia\'s', async (t) => {
  const s = await server(t);
  // The Australian chain's stores, as location-map serves them by its own name.
  const { env } = await okJson(t, s, { brand: 'Woolworths (Australia)', country: 'AU' });
  const at = env.locations[0];
  const asked = await post(s.base, s.key, { brand: 'Woolworths', lat: at.lat, lng: at.lng, limit: 5 });
  t.is(asked.status, 200);
  t.is(asked.header('x-brand'), 'Woolworths (Australia)');
  const full = await post(s.base, s.key, { brand: 'Woolworths (Australia)', lat: at.lat, lng: at.lng, limit: 5 });
  t.deepEqual(
    asked.json<NearJson>().locations.map((l) => l.id),
    full.json<NearJson>().locations.map((l) => l.id),
  );
  t.is(asked.json<NearJson>().locations[0].id, at.id);
  // A territory is its own country, as the rows code it: "First Bank" in Puerto Rico (PR, not
  // the US) is the Puerto Rican bank, not Taiwan's First Bank nor a mainland namesake.
  const pr = (await okJson(t, s, { brand: 'First Bank (Puerto Rico)', country: 'PR' })).env.locations[0];
  const bank = await post(s.base, s.key, { brand: 'First Bank', lat: pr.lat, lng: pr.lng, limit: 1 });
  t.is(bank.status, 200);
  t.is(bank.header('x-brand'), 'First Bank (Puerto Rico)');
  t.is(bank.json<NearJson>().locations[0].id, pr.id);
  // At sea, in no country, the name is the brand it names.
  const sea = await post(s.base, s.key, { brand: 'Woolworths', lat: -40, lng: 160, limit: 1 });
  t.is(sea.status, 200);
  t.is(sea.header('x-brand'), 'Woolworths');
});
