// POST /api/v1/overlap on a real server over the test dataset: the pairs of Starbucks and
// McDonald's stores within a distance equal a brute-force pair scan of the two brands'
// location-map rows with this file's own haversine, and so do the counts (per brand, per
// country); then the formats, the price and the refusals.
import test from 'ava';
import type { Location } from './helpers/dataset.ts';
import { request, type HttpResult } from './helpers/http.ts';
import { assertError, balance, okJson, server, usageRows } from './helpers/location-map.ts';
import { parseCsvObjects } from './helpers/csv.ts';
import { boundsProjector, countryFrame, decodePng } from './helpers/png.ts';

const OVERLAP = '/api/v1/overlap';
type Branded = Location & { brand: string };
interface OverlapJson {
  brands: string[];
  distance_m: number;
  region: string;
  pair_count: number;
  stores_with_partner: Record<string, number>;
  by_country: { country: string; pairs: number; stores_with_partner: Record<string, number> }[];
  pairs: { distance_m: number; a: Branded; b: Branded }[];
}

function haversine(lat1: number, lng1: number, lat2: number, lng2: number): number {
  const rad = Math.PI / 180;
  const a = Math.sin(((lat2 - lat1) * rad) / 2) ** 2 + Math.cos(lat1 * rad) * Math.cos(lat2 * rad) * Math.sin(((lng2 - lng1) * rad) / 2) ** 2;
  return 6_371_008.8 * 2 * Math.atan2(Math.sqrt(a), Math.sqrt(1 - a));
}

function post(base: string, key: string | undefined, body: unknown): Promise<HttpResult> {
  return request(base, { path: OVERLAP, body: JSON.stringify(body), headers: { 'content-type': 'application/json', ...(key ? { 'x-api-key': key } : {}) } });
}

const STARBUCKS = 'Starbucks';
const MCD = "McDonald's";

test('the pairs within a distance, and their counts, are the brute-force pair scan of the two brands’ rows', async (t) => {
  const s = await server(t);
  const rowsOf = async (brand: string) => (await okJson(t, s, { brand, format: 'json' })).env.locations;
  const [a, b] = [await rowsOf(STARBUCKS), await rowsOf(MCD)];
  let nonEmpty = 0;
  for (const d of [100, 500, 2_000]) {
    const want: { a: Location; b: Location; d: number }[] = [];
    for (const x of a) for (const y of b) if (haversine(x.lat, x.lng, y.lat, y.lng) <= d) want.push({ a: x, b: y, d: haversine(x.lat, x.lng, y.lat, y.lng) });
    const res = await post(s.base, s.key, { tickers: ['SBUX', 'MCD'], distance_m: d });
    if (want.length === 0) {
      assertError(t, res, 404, 'NOT_FOUND');
      continue;
    }
    nonEmpty++;
    t.is(res.status, 200, res.text.slice(0, 200));
    const body = res.json<OverlapJson>();
    t.deepEqual(body.brands, [STARBUCKS, MCD]);
    t.is(body.distance_m, d);
    t.is(body.pair_count, want.length);
    t.deepEqual(body.pairs.map((p) => `${p.a.id}~${p.b.id}`).sort(), want.map((p) => `${p.a.id}~${p.b.id}`).sort(), `within ${d} m`);
    t.true(body.pairs.every((p) => p.a.brand === STARBUCKS && p.b.brand === MCD));
    for (const p of body.pairs) t.true(Math.abs(p.distance_m - haversine(p.a.lat, p.a.lng, p.b.lat, p.b.lng)) <= 0.051);
    const distinct = (xs: string[]) => new Set(xs).size;
    t.deepEqual(body.stores_with_partner, { [STARBUCKS]: distinct(want.map((p) => p.a.id)), [MCD]: distinct(want.map((p) => p.b.id)) });
    // Per country, by the Starbucks store's country.
    const countries = [...new Set(want.map((p) => p.a.country))];
    t.deepEqual(body.by_country.map((c) => c.country).sort(), countries.sort());
    for (const c of body.by_country) {
      const here = want.filter((p) => p.a.country === c.country);
      t.is(c.pairs, here.length, c.country);
      t.deepEqual(c.stores_with_partner, { [STARBUCKS]: distinct(here.map((p) => p.a.id)), [MCD]: distinct(here.map((p) => p.b.id)) });
    }
    t.true(body.by_country.every((c, i) => i === 0 || body.by_country[i - 1].pairs >= c.pairs), 'most pairs first');
    t.is(res.header('x-location-count'), String(want.length));

    // A country filter: the pairs whose Starbucks is there.
    const top = body.by_country[0].country;
    const only = await post(s.base, s.key, { brands: [STARBUCKS, MCD], distance_m: d, country: top.toLowerCase() });
    t.is(only.status, 200);
    const o = only.json<OverlapJson>();
    t.is(o.region, top);
    t.deepEqual(o.pairs.map((p) => `${p.a.id}~${p.b.id}`).sort(), want.filter((p) => p.a.country === top).map((p) => `${p.a.id}~${p.b.id}`).sort());
  }
  t.true(nonEmpty >= 2, `${nonEmpty} distances had pairs`);
});

test('formats, price and usage row', async (t) => {
  const s = await server(t);
  const json = (await post(s.base, s.key, { tickers: ['SBUX', 'MCD'], distance_m: 500 })).json<OverlapJson>();
  const n = json.pair_count;
  t.true(n > 0 && n <= 500, `${n} pairs`);
  const before = await balance(s, s.keyId);
  const csv = await post(s.base, s.key, { tickers: ['SBUX', 'MCD'], distance_m: 500, format: 'csv' });
  t.regex(csv.header('content-type'), /^text\/csv/);
  const rows = parseCsvObjects(csv.text);
  t.is(rows.length, n);
  t.deepEqual(Object.keys(rows[0]).slice(0, 3), ['distance_m', 'a_brand', 'a_name']);
  t.deepEqual(
    rows.map((r) => `${r.a_lat},${r.a_lng}~${r.b_lat},${r.b_lng}`).sort(),
    json.pairs.map((p) => `${p.a.lat},${p.a.lng}~${p.b.lat},${p.b.lng}`).sort(),
  );
  t.is(csv.header('x-credits-charged'), '1', 'up to 500 pairs cost 1 credit');
  t.is(await balance(s, s.keyId), before - 1);
  t.like((await usageRows(s, s.keyId)).at(-1), { endpoint: OVERLAP, status: 200, format: 'csv', credits: 1 });

  const geo = await post(s.base, s.key, { tickers: ['SBUX', 'MCD'], distance_m: 500, format: 'geojson' });
  t.regex(geo.header('content-type'), /^application\/geo\+json/);
  const features = geo.json<{ features: { geometry: { type: string; coordinates: [number, number][] }; properties: { a_id: string; b_id: string; distance_m: number } }[] }>().features;
  t.is(features.length, n);
  const byPair = new Map(json.pairs.map((p) => [`${p.a.id}~${p.b.id}`, p]));
  for (const f of features) {
    const p = byPair.get(`${f.properties.a_id}~${f.properties.b_id}`)!;
    t.is(f.geometry.type, 'LineString');
    t.deepEqual(f.geometry.coordinates, [
      [p.a.lng, p.a.lat],
      [p.b.lng, p.b.lat],
    ]);
    t.is(f.properties.distance_m, p.distance_m);
  }
});

test('refusals: no key, image plans, bad bodies, one company twice, unknown names, no pairs, a balance too small', async (t) => {
  const s = await server(t);
  assertError(t, await post(s.base, undefined, { tickers: ['SBUX', 'MCD'] }), 401, 'UNAUTHORIZED');
  for (const plan of ['standard', 'trial'] as const) {
    const k = await s.keys.create({ plan, credits: 100 });
    assertError(t, await post(s.base, k.key, { tickers: ['SBUX', 'MCD'] }), 403, 'DATA_ACCESS_FORBIDDEN');
  }
  for (const [body, field] of [
    [{ tickers: ['SBUX'] }, 'tickers'],
    [{ tickers: ['A', 'B', 'C', 'D', 'E', 'F'] }, 'tickers'],
    [{}, 'brands'],
    [{ brands: [STARBUCKS, MCD], tickers: ['SBUX', 'MCD'] }, 'tickers'],
    [{ tickers: ['SBUX', 'MCD'], distance_m: 0 }, 'distance_m'],
    [{ tickers: ['SBUX', 'MCD'], distance_m: 5_001 }, 'distance_m'],
    [{ tickers: ['SBUX', 'MCD'], format: 'svg' }, 'format'],
    [{ tickers: ['SBUX', 'MCD'], country: 'USA' }, 'country'],
    [{ brands: [STARBUCKS, 'starbucks'] }, 'brands'],
    [{ tickers: ['SBUX', 'MCD'], within: 5 }, 'within'],
  ] as [Record<string, unknown>, string][]) {
    const err = assertError(t, await post(s.base, s.key, body), 400, 'INVALID_REQUEST');
    t.true(((err.details ?? []) as { field: string }[]).some((d) => d.field === field), `${JSON.stringify(body)}: ${JSON.stringify(err.details)}`);
  }
  const unknown = assertError(t, await post(s.base, s.key, { brands: [STARBUCKS, 'Zzqx Nonexistent Coffee'] }), 404, 'NOT_FOUND');
  t.true(Array.isArray(unknown.suggestions));
  const before = await balance(s, s.keyId);
  // No stores in Antarctica: no pairs, 404, free.
  assertError(t, await post(s.base, s.key, { tickers: ['SBUX', 'MCD'], country: 'AQ' }), 404, 'NOT_FOUND');
  t.is(await balance(s, s.keyId), before);
  const poor = await s.keys.create({ plan: 'enterprise', credits: 0 });
  assertError(t, await post(s.base, poor.key, { tickers: ['SBUX', 'MCD'], distance_m: 2_000 }), 402, 'INSUFFICIENT_CREDITS');
});

test('the overlap map: a PNG of the paired stores in each brand’s colour, priced as an image of that many pairs', async (t) => {
  const s = await server(t);
  const json = (await post(s.base, s.key, { tickers: ['SBUX', 'MCD'], distance_m: 500 })).json<OverlapJson>();
  const before = await balance(s, s.keyId);
  const res = await post(s.base, s.key, { tickers: ['SBUX', 'MCD'], distance_m: 500, format: 'png', width: 640, height: 400, marker_colors: ['#FF0000', '0000FF'], include_legend: true });
  t.is(res.status, 200, res.text.slice(0, 200));
  t.regex(res.header('content-type'), /^image\/png/);
  t.is(res.header('x-location-count'), String(json.pair_count));
  t.is(res.header('x-credits-charged'), '2', 'up to 500 pairs cost 1 credit, and a map twice that');
  t.is(await balance(s, s.keyId), before - 2);
  const img = decodePng(res.raw);
  t.deepEqual([img.width, img.height], [640, 400]);
  let red = 0;
  let blue = 0;
  for (let i = 0; i < img.data.length; i += 4) {
    const [r, g, b] = [img.data[i], img.data[i + 1], img.data[i + 2]];
    if (r === 255 && g === 0 && b === 0) red++;
    if (r === 0 && g === 0 && b === 255) blue++;
  }
  // The two stores of a pair are at most 500 m apart, less than a pixel on a map this size:
  // McDonald's markers (drawn last) cover Starbucks' ones; the legend shows both colours.
  t.true(blue > 20, `McDonald's markers drawn: ${blue} blue pixels`);
  t.true(red > 0, `Starbucks in the legend: ${red} red pixels`);
  const standard = await s.keys.create({ plan: 'standard', credits: 100 });
  assertError(t, await post(s.base, standard.key, { tickers: ['SBUX', 'MCD'], format: 'png' }), 403, 'DATA_ACCESS_FORBIDDEN');
});

test('an overlap map filtered to a country frames its mainland, not just its pairs', async (t) => {
  // The contiguous US by its published extremes (Key West to the Northwest Angle, Cape Alava to
  // West Quoddy Head, and the margin README's Framing adds): each pair's marker must be drawn where a map of that box puts it, to
  // within the few pixels the box and the Natural Earth shape differ by.
  const s = await server(t);
  const [W, H] = [800, 500];
  const json = (await post(s.base, s.key, { tickers: ['SBUX', 'MCD'], distance_m: 500, country: 'US' })).json<OverlapJson>();
  t.true(json.pairs.length > 0);
  const res = await post(s.base, s.key, { tickers: ['SBUX', 'MCD'], distance_m: 500, country: 'US', format: 'png', width: W, height: H, marker_colors: ['#FF0000', '#0000FF'] });
  t.is(res.status, 200, res.text.slice(0, 200));
  const img = decodePng(res.raw);
  const project = boundsProjector(countryFrame([24.5, -124.7, 49.4, -66.9]), W, H);
  const marked = (x: number, y: number) => {
    for (let dy = -4; dy <= 4; dy++) {
      for (let dx = -4; dx <= 4; dx++) {
        const [px, py] = [Math.round(x) + dx, Math.round(y) + dy];
        if (px < 0 || py < 0 || px >= W || py >= H) continue;
        const i = (py * W + px) * 4;
        // Red or blue (a city's label dot may sit on McDonald's small inner marker).
        const [r, g, b] = [img.data[i], img.data[i + 1], img.data[i + 2]];
        if (g < 90 && ((r > 200 && b < 90) || (b > 200 && r < 90))) return true;
      }
    }
    return false;
  };
  // Each pair's markers (Starbucks red, McDonald's blue inside) at its stores on the contiguous
  // US.
  const conus = json.pairs.filter((p) => p.b.lat > 24 && p.b.lat < 50 && p.b.lng > -125 && p.b.lng < -66).slice(0, 30);
  t.true(conus.length > 0);
  for (const p of conus) {
    const [x, y] = project(p.b.lat, p.b.lng);
    t.true(marked(x, y), `${p.b.lat}, ${p.b.lng} at (${x.toFixed(1)}, ${y.toFixed(1)})`);
  }
});
