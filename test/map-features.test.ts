// Map image features over HTTP on a real server (127.0.0.1, real SQLite, the real addon over
// the test dataset), checked on decoded pixels: focus maps (transparency, background, fill,
// JPEG over white, "auto", markers placed with our own Albers projection), their 400s,
// heatmaps, the legend, city labels, and the image cache with its credits.
//
// Expected pixels are derived independently: positions from the rows the image draws, which
// are the JSON locations the same server returns for the same query plus the community-only
// rows JSON leaves out (the contract draws those on images), read through the addon from the
// same snapshot and checked against the JSON and the image's X-Location-Count; projected with
// our own Web Mercator (test/helpers/png.ts); colours from data/themes.json and the contract's
// defaults.
import test, { type ExecutionContext } from 'ava';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../ts/paths.ts';
import { creditsFor } from '../ts/api/prices.ts';
import { testDataDir, testStore, type Location } from './helpers/dataset.ts';
import { query } from '../ts/native.ts';
import {
  boundsProjector,
  countryFrame,
  centerZoomProjector,
  countIn,
  decodeJpeg,
  decodePng,
  fmt,
  hex,
  near,
  pixel,
  type Box,
  type Image,
  type Projector,
  type RGB,
} from './helpers/png.ts';
import { startServer, type TestServer } from './helpers/server.ts';
import { balance as keyBalance } from './helpers/location-map.ts';

const NO_RATE_LIMIT = { STOREMAP_RATE_LIMIT: '100000', STOREMAP_RATE_BURST: '100000' };
const W = 300;
const H = 200;

interface Theme {
  water: string;
  land: string;
  border: string;
  marker: string;
  marker_stroke: string;
  text: string;
  panel: string;
}
const THEMES = JSON.parse(readFileSync(path.join(ROOT, 'data', 'themes.json'), 'utf8')) as Record<string, Theme>;
const LIGHT = THEMES.light;
const DARK = THEMES.dark;

// Contract defaults for focus maps and the multi-company palette.
const FOCUS_FILL = '#E5E7EB';
const PALETTE = ['#2563EB', '#DC2626', '#16A34A', '#D97706', '#7C3AED'];

type S = TestServer & { key: string; keyId: string };

async function server(t: ExecutionContext, env: Record<string, string> = {}, credits = 100_000): Promise<S> {
  const s = await startServer(t, { env: { ...NO_RATE_LIMIT, ...env } });
  const k = await s.keys.create({ plan: 'enterprise', credits });
  return { ...s, key: k.key, keyId: k.record.id };
}

async function post(s: S, body: unknown) {
  const res = await fetch(`${s.base}/api/v1/location-map`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': s.key },
    body: JSON.stringify(body),
  });
  return { res, bytes: Buffer.from(await res.arrayBuffer()) };
}

async function okPost(t: ExecutionContext, s: S, body: Record<string, unknown>) {
  const r = await post(s, body);
  t.is(r.res.status, 200, `${JSON.stringify(body)} -> ${r.res.status}: ${r.bytes.toString().slice(0, 300)}`);
  return r;
}

async function png(t: ExecutionContext, s: S, body: Record<string, unknown>): Promise<{ img: Image; bytes: Buffer; count: number }> {
  const { res, bytes } = await okPost(t, s, { format: 'png', width: W, height: H, ...body });
  t.is(res.headers.get('content-type'), 'image/png');
  return { img: decodePng(bytes), bytes, count: Number(res.headers.get('x-location-count')) };
}

/**
 * Every row an image of `filters` draws: its brands' reconciled rows there, community-only
 * ones included, read through the addon from the snapshot the server serves (`undefined` for a
 * name it does not know).
 */
async function drawnRows(filters: Record<string, unknown>): Promise<Location[] | undefined> {
  const store = testStore();
  const names = (filters.tickers as string[] | undefined) ?? [filters.brand as string];
  const brands = names.map((n) => store.resolve(n)?.brand);
  if (brands.some((b) => b === undefined)) return undefined;
  const r = await query(store, {
    brands: [...new Set(brands as number[])],
    format: 'json',
    verifiedOnly: false,
    country: filters.country as string | undefined,
    state: filters.state as string | undefined,
  });
  return (JSON.parse(r.body.toString()) as { locations: Location[] }).locations;
}

/** The rows the image of a query draws, checked: the JSON locations are all among them, and
 * the image counts exactly them. */
async function locations(t: ExecutionContext, s: S, filters: Record<string, unknown>, imageCount: number): Promise<Location[]> {
  const { bytes } = await okPost(t, s, filters);
  const env = JSON.parse(bytes.toString()) as { count: number; locations: Location[] };
  t.is(env.locations.length, env.count);
  const drawn = (await drawnRows(filters)) ?? [];
  const ids = new Set(drawn.map((l) => l.id));
  t.true(env.locations.every((l) => ids.has(l.id)), 'every JSON location is drawn');
  t.is(imageCount, drawn.length, `the image of ${JSON.stringify(filters)} draws ${imageCount} rows, the snapshot holds ${drawn.length}`);
  return drawn;
}

/** US-listed tickers in data/tickers.csv's order: the brands a test picks its query from. */
const US_TICKERS = readFileSync(path.join(ROOT, 'data', 'tickers.csv'), 'utf8')
  .split('\n')
  .slice(1)
  .map((line) => line.split(','))
  .filter((f) => f[1] === 'NYSE' || f[1] === 'NASDAQ')
  .map((f) => f[0]);

/**
 * The rows an image of a query draws when they `fit` the test: the query is served (JSON 200)
 * and its image counts exactly the rows [drawnRows] reads. Which brand has rows that fit
 * depends on the generated world, so a test picks its query with this rather than naming one.
 */
async function agrees(s: S, q: Record<string, unknown>, fit: (locs: Location[]) => boolean): Promise<Location[] | undefined> {
  const json = await post(s, q);
  if (json.res.status !== 200) return undefined;
  const drawn = await drawnRows(q);
  if (!drawn || !fit(drawn)) return undefined;
  const image = await post(s, { ...q, format: 'png', width: W, height: H });
  return Number(image.res.headers.get('x-location-count')) === drawn.length ? drawn : undefined;
}

/** The first of `candidates` that [agrees]. */
async function agreeing(s: S, candidates: Record<string, unknown>[], fit: (locs: Location[]) => boolean): Promise<Record<string, unknown>> {
  for (const q of candidates) if (await agrees(s, q, fit)) return q;
  throw new Error(`none of ${candidates.length} queries has rows that fit and an image that draws exactly them`);
}

/** Candidate queries: each US-listed brand (`first` ahead of the rest) with `filters`. */
const byBrand = (filters: Record<string, unknown>, first: string[] = []) =>
  [...new Set([...first, ...US_TICKERS])].map((brand) => ({ brand, ...filters }));

/** The key's balance, read straight from the ledger's table. */
function balance(s: S): Promise<number> {
  return keyBalance(s, s.keyId);
}

/** Straight-alpha colour distance test that also requires an opaque pixel. */
const opaqueNear = (p: ArrayLike<number>, c: RGB, tol: number) => p[3] === 255 && near(p, c, tol);

// ------------------------------------------------------------------ focus maps

const FL_CVS = { brand: 'CVS', country: 'US', state: 'FL' };

test('focus png: transparent corners, the default fill in the middle of the contiguous US, a custom fill, a background colour', async (t) => {
  const s = await server(t);
  const base = { ...FL_CVS, focus_country: 'US', conus: true };
  const { img } = await png(t, s, base);
  const corners: [number, number][] = [
    [0, 0],
    [W - 1, 0],
    [0, H - 1],
    [W - 1, H - 1],
  ];
  for (const [x, y] of corners) t.is(pixel(img, x, y)[3], 0, `corner (${x}, ${y}) is transparent: ${fmt(pixel(img, x, y))}`);
  // The middle of the 48 states is Kansas/Nebraska: the markers are all in Florida.
  const mid = pixel(img, W / 2, H / 2);
  t.true(opaqueNear(mid, hex(FOCUS_FILL), 1), `centre ${fmt(mid)} is the default fill ${FOCUS_FILL}`);

  const custom = (await png(t, s, { ...base, fill_color: '#336699' })).img;
  t.true(opaqueNear(pixel(custom, W / 2, H / 2), hex('#336699'), 1), `centre with fill_color #336699: ${fmt(pixel(custom, W / 2, H / 2))}`);
  t.is(pixel(custom, 0, 0)[3], 0);

  const bg = (await png(t, s, { ...base, background: '#112233' })).img;
  for (const [x, y] of corners) t.deepEqual(pixel(bg, x, y), [0x11, 0x22, 0x33, 255], `corner (${x}, ${y}) with background #112233`);
  t.true(opaqueNear(pixel(bg, W / 2, H / 2), hex(FOCUS_FILL), 1));
});

test('focus jpeg: transparent areas fall back to white, the fill stays', async (t) => {
  const s = await server(t);
  const { res, bytes } = await okPost(t, s, { ...FL_CVS, format: 'jpeg', width: W, height: H, focus_country: 'US', conus: true });
  t.is(res.headers.get('content-type'), 'image/jpeg');
  const img = decodeJpeg(bytes);
  t.is(img.width, W);
  for (const [x, y] of [
    [0, 0],
    [W - 1, 0],
    [0, H - 1],
    [W - 1, H - 1],
    [2, H / 2],
  ] as [number, number][]) {
    const p = pixel(img, x, y);
    t.true(p[0] >= 245 && p[1] >= 245 && p[2] >= 245, `(${x}, ${y}) is white: ${fmt(p)}`);
  }
  t.true(near(pixel(img, W / 2, H / 2), hex(FOCUS_FILL), 6), `centre ${fmt(pixel(img, W / 2, H / 2))} is the fill`);
});

test("focus_country 'auto' on a US-only result draws the same image as 'US'", async (t) => {
  const s = await server(t);
  for (const extra of [{}, { conus: true }]) {
    const auto = await png(t, s, { ...FL_CVS, focus_country: 'auto', ...extra });
    const us = await png(t, s, { ...FL_CVS, focus_country: 'US', ...extra });
    t.true(auto.bytes.equals(us.bytes), `auto and US differ with ${JSON.stringify(extra)}`);
    // and not the same as some other country's focus map, so the comparison means something
    const ca = await png(t, s, { brand: 'MCD', focus_country: 'CA', ...extra, conus: undefined });
    t.false(ca.bytes.equals(us.bytes));
  }
});

test('a focus map without a country filter is a map of the focus country: its count, region and price are that country\'s', async (t) => {
  const s = await server(t);
  // Canada: a country whose composite map carries no territory (a US one may carry Puerto Rico).
  const world = await okPost(t, s, { brand: 'Starbucks', format: 'png', width: W, height: H });
  const ca = await okPost(t, s, { brand: 'Starbucks', format: 'png', width: W, height: H, country: 'CA' });
  const focus = await okPost(t, s, { brand: 'Starbucks', format: 'png', width: W, height: H, focus_country: 'CA' });
  const worldCount = Number(world.res.headers.get('x-location-count'));
  const caCount = Number(ca.res.headers.get('x-location-count'));
  t.true(worldCount > caCount, `Starbucks has stores outside Canada in the test data (${worldCount} against ${caCount})`);
  t.is(Number(focus.res.headers.get('x-location-count')), caCount);
  t.is(focus.res.headers.get('x-region'), 'CA');
  t.is(Number(focus.res.headers.get('x-credits-charged')), creditsFor(caCount, 'png'));
  // "auto" is the country most of the brand's stores are in, counted here from the JSON.
  const rows = JSON.parse((await okPost(t, s, { brand: 'Starbucks', format: 'json' })).bytes.toString()) as { locations: Location[] };
  const byCountry = new Map<string, number>();
  for (const l of rows.locations) byCountry.set(l.country, (byCountry.get(l.country) ?? 0) + 1);
  const top = [...byCountry].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]![0];
  const auto = await okPost(t, s, { brand: 'Starbucks', format: 'png', width: W, height: H, focus_country: 'auto' });
  t.is(auto.res.headers.get('x-region'), top);
  // Nothing on the image border, at the extreme sizes and aspects, markers and insets included.
  for (const [w, h] of [[256, 256], [4096, 1024], [1024, 4096], [400, 1200]]) {
    const { img } = await png(t, s, { brand: 'Starbucks', focus_country: 'US', width: w, height: h, marker_radius: 8 });
    let touched = 0;
    for (let x = 0; x < w; x++) for (const y of [0, h - 1]) if (pixel(img, x, y)[3] !== 0) touched++;
    for (let y = 0; y < h; y++) for (const x of [0, w - 1]) if (pixel(img, x, y)[3] !== 0) touched++;
    t.is(touched, 0, `${w}x${h}: ${touched} border pixels drawn`);
  }
  // A focus country where the brand has no stores (CVS in Canada, as its data answer says):
  // nothing to draw.
  t.is((await post(s, { brand: FL_CVS.brand, country: 'CA', format: 'json' })).res.status, 404);
  const none = await post(s, { brand: FL_CVS.brand, format: 'png', width: W, height: H, focus_country: 'CA' });
  t.is(none.res.status, 404);
  // A filter in another country (Florida is the US's) leaves a focus map nothing by its own
  // terms: refused before any work.
  const elsewhere = await post(s, { brand: FL_CVS.brand, state: 'FL', format: 'png', width: W, height: H, focus_country: 'CA' });
  t.is(elsewhere.res.status, 400);
});

test('a US focus map without a country filter carries Puerto Rico: counted, priced and drawn in an inset; conus and an explicit country leave it out', async (t) => {
  const s = await server(t);
  // McDonald's trades in Puerto Rico, and the test data places a few there.
  const brand = "McDonald's";
  const us = (await png(t, s, { brand, country: 'US' })).count;
  const pr = (await png(t, s, { brand, country: 'PR' })).count;
  t.true(us > 0 && pr > 0, `the test data has ${brand} in the US (${us}) and Puerto Rico (${pr})`);
  const before = (await balance(s));
  const composite = await png(t, s, { brand, focus_country: 'US' });
  t.is(composite.count, us + pr, 'the lower 48, Alaska, Hawaii and Puerto Rico');
  t.is(before - (await balance(s)), creditsFor(us + pr, 'png'), 'priced by that count');
  t.is((await png(t, s, { brand, focus_country: 'US', conus: true })).count, us, 'conus: the contiguous states only');
  t.is((await png(t, s, { brand, focus_country: 'US', mainland_only: true })).count, us);
  t.is((await png(t, s, { brand, country: 'US', focus_country: 'US' })).count, us, 'an explicit country filter stands');
  const konbini = '7-Eleven';
  t.is((await png(t, s, { brand: konbini, focus_country: 'auto' })).count, (await png(t, s, { brand: konbini, focus_country: 'JP' })).count, "auto: 7-Eleven's majority country is Japan, no territory");
});

test('bad focus requests: 400 INVALID_REQUEST as JSON, nothing charged', async (t) => {
  const s = await server(t);
  const img = { brand: 'MCD', format: 'png', width: W, height: H };
  const cases: Record<string, unknown>[] = [
    { ...img, focus_country: 'ZZ' },
    { ...img, focus_country: 'CA', regions: ['ON'] },
    { ...img, focus_country: 'US', regions: ['CA', 'XX'] },
    { ...img, background: '#112233' },
    { ...img, focus_country: 'CA', conus: true },
    { ...img, country: 'GB', focus_country: 'auto', conus: true },
    { ...img, country: 'GB', focus_country: 'auto', regions: ['NY'] },
    { ...img, format: 'jpeg', focus_country: 'ZZ' },
  ];
  const before = (await balance(s));
  for (const body of cases) {
    const { res, bytes } = await post(s, body);
    t.is(res.status, 400, `${JSON.stringify(body)} -> ${res.status}: ${bytes.toString().slice(0, 200)}`);
    t.regex(res.headers.get('content-type') ?? '', /^application\/json/);
    const parsed = JSON.parse(bytes.toString());
    t.is(parsed.code, 'INVALID_REQUEST', JSON.stringify(body));
    t.is(res.headers.get('x-credits-charged'), null);
  }
  t.is((await balance(s)), before, 'no credits charged for any of them');
  // The same key can still draw valid focus maps (the errors above are about the options).
  await png(t, s, { brand: 'MCD', focus_country: 'US', regions: ['CA', 'NY'] });
  t.true((await balance(s)) < before);
});

// Albers equal-area conic on the unit sphere (Snyder, "Map Projections", eq. 14-1 to 14-4),
// y northwards.
function albers(phi1: number, phi2: number, lng0: number): (lat: number, lng: number) => [number, number] {
  const r = Math.PI / 180;
  const n = (Math.sin(phi1 * r) + Math.sin(phi2 * r)) / 2;
  const c = Math.cos(phi1 * r) ** 2 + 2 * n * Math.sin(phi1 * r);
  return (lat, lng) => {
    const rho = Math.sqrt(c - 2 * n * Math.sin(lat * r)) / n;
    const theta = n * (lng - lng0) * r;
    return [rho * Math.sin(theta), -rho * Math.cos(theta)];
  };
}

test('focus map markers land where an Albers projection of the contiguous US puts them', async (t) => {
  const s = await server(t);
  // No outline: the drawn shape's extent is the fill's, to within a pixel.
  // A chain in the 48 states whose rows are all verified (JSON and image agree). At test
  // scale only small chains have no community-only row anywhere in the country.
  const lower48 = (l: Location) => l.lng >= -126 && l.lng <= -66 && l.lat >= 24 && l.lat <= 50;
  const q = await agreeing(s, byBrand({ country: 'US' }, ['DKS']), (locs) => locs.length >= 5 && locs.every(lower48));
  const { img, count } = await png(t, s, { ...q, focus_country: 'US', conus: true, outline_width: 0, marker_color: '#FF00FF' });
  const locs = await locations(t, s, q, count);
  t.true(locs.length > 0);

  // The contiguous US from the reference shapes: the US polygons inside the lower 48's box.
  const geo = JSON.parse(readFileSync(path.join(testDataDir(), 'reference', 'countries.geojson'), 'utf8')) as {
    features: { properties: { iso_a2: string }; geometry: { type: string; coordinates: number[][][][] } }[];
  };
  const us = geo.features.find((f) => f.properties.iso_a2 === 'US')!;
  t.is(us.geometry.type, 'MultiPolygon');
  // USGS Albers for the US: standard parallels 29.5 and 45.5 N, central meridian 96 W.
  const proj = albers(29.5, 45.5, -96);
  let [px0, py0, px1, py1] = [Infinity, Infinity, -Infinity, -Infinity];
  for (const poly of us.geometry.coordinates) {
    const outer = poly[0];
    const inside = outer.every(([lng, lat]) => lng >= -126 && lng <= -66 && lat >= 24 && lat <= 50);
    if (!inside) continue;
    for (const ring of poly) {
      for (const [lng, lat] of ring) {
        const [x, y] = proj(lat, lng);
        px0 = Math.min(px0, x);
        px1 = Math.max(px1, x);
        py0 = Math.min(py0, y);
        py1 = Math.max(py1, y);
      }
    }
  }
  // The drawn extent: every pixel in the fill colour, whatever its coverage (straight alpha),
  // so markers near the coast do not widen it.
  let [ix0, iy0, ix1, iy1] = [Infinity, Infinity, -Infinity, -Infinity];
  const fill = hex(FOCUS_FILL);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const p = pixel(img, x, y);
      if (p[3] === 0 || !near(p, fill, 3)) continue;
      ix0 = Math.min(ix0, x);
      ix1 = Math.max(ix1, x + 1);
      iy0 = Math.min(iy0, y);
      iy1 = Math.max(iy1, y + 1);
    }
  }
  const kx = (ix1 - ix0) / (px1 - px0);
  const ky = (iy1 - iy0) / (py1 - py0);
  t.true(Math.abs(kx / ky - 1) < 0.03, `one scale for both axes (an equal-area conic, aspect kept): ${kx} vs ${ky}`);
  t.true(ix0 >= 0 && iy0 >= 0 && ix1 <= W && iy1 <= H && (ix1 - ix0 > W * 0.8 || iy1 - iy0 > H * 0.8), `the shape fills the image: ${[ix0, iy0, ix1, iy1]}`);
  // The shape's extremes include islets far under a pixel (Key West's neighbours, Point
  // Roberts' rocks) that leave no visible pixel: the visible extent falls short of the
  // projected one by up to a pixel or so at such ends. The axis that fills the image is the
  // one whose scale is not underestimated, and the shape is centred.
  const k = Math.max(kx, ky);
  const at = (lat: number, lng: number): [number, number] => {
    const [x, y] = proj(lat, lng);
    return [W / 2 + (x - (px0 + px1) / 2) * k, H / 2 - (y - (py0 + py1) / 2) * k];
  };
  const magenta = hex('#FF00FF');
  let probed = 0;
  for (const l of locs) {
    const [x, y] = at(l.lat, l.lng);
    const hits = countIn(img, { x0: x - 2, y0: y - 2, x1: x + 3, y1: y + 3 }, (p) => opaqueNear(p, magenta, 2));
    t.true(hits > 0, `a marker for ${l.city} (${l.lat}, ${l.lng}) near pixel (${x.toFixed(1)}, ${y.toFixed(1)})`);
    // The marker (radius 5) covers its centre and 2.5 px around it, except where a later
    // marker's white stroke (radius 5.6) cuts through: probes that far from every other
    // location must be magenta. A prediction more than a pixel or two off fails them.
    const probes: [number, number][] = [[0, 0], [-2.5, 0], [2.5, 0], [0, -2.5], [0, 2.5]];
    for (const [dx, dy] of probes) {
      const [px, py] = [x + dx, y + dy];
      if (locs.some((o) => o !== l && Math.hypot(at(o.lat, o.lng)[0] - px, at(o.lat, o.lng)[1] - py) < 7)) continue;
      probed++;
      t.true(opaqueNear(pixel(img, px, py), magenta, 2), `the marker for ${l.city} is centred at pixel (${x.toFixed(1)}, ${y.toFixed(1)}): ${fmt(pixel(img, px, py))} at (${px.toFixed(1)}, ${py.toFixed(1)})`);
    }
  }
  t.true(probed >= 10, `${probed} probes of marker centres`);
  // and nowhere far from them
  const far = countIn(img, { x0: 0, y0: 0, x1: W, y1: H }, (p, x, y) => {
    if (!opaqueNear(p, magenta, 2)) return false;
    return locs.every((l) => {
      const [mx, my] = at(l.lat, l.lng);
      return Math.hypot(mx - x, my - y) > 12;
    });
  });
  t.is(far, 0, 'magenta pixels only around the projected locations');
});

// ------------------------------------------------------------------ heatmap

test('heatmap: density colours at the densest cluster, the basemap untouched far from every location', async (t) => {
  const s = await server(t);
  // A chain with enough stores in New York State for New York City to hold a cluster.
  const q = await agreeing(s, byBrand({ country: 'US', state: 'NY' }, ['CVS']), (locs) => locs.length >= 10);
  const bounds: [number, number, number, number] = [39, -80, 44.5, -71];
  const heat = await png(t, s, { ...q, bounds, heatmap: true });
  const plain = await png(t, s, { ...q, bounds });
  t.is(heat.count, plain.count);
  const locs = await locations(t, s, q, heat.count);
  const at: Projector = boundsProjector(bounds, W, H);
  const pts = locs.map((l) => at(l.lat, l.lng));

  // The densest cluster: the location with the most others within 24 px.
  let best = pts[0];
  let bestN = -1;
  for (const p of pts) {
    const n = pts.filter((q) => Math.hypot(q[0] - p[0], q[1] - p[1]) <= 24).length;
    if (n > bestN) [best, bestN] = [p, n];
  }
  t.true(bestN >= 3, `a cluster of ${bestN} locations`);
  t.true(best[0] >= 0 && best[0] < W && best[1] >= 0 && best[1] < H, `the cluster ${fmt(best)} is in view`);
  // City labels are drawn over the heatmap, and a big city's label can sit on the very pixel:
  // the most saturated pixel within 6 px of the cluster stands for it.
  const saturation = (p: number[]) => Math.max(p[0], p[1], p[2]) - Math.min(p[0], p[1], p[2]);
  let hp = pixel(heat.img, best[0], best[1]);
  let hpAt = best;
  for (let dy = -6; dy <= 6; dy++) {
    for (let dx = -6; dx <= 6; dx++) {
      const q: [number, number] = [Math.min(W - 1, Math.max(0, best[0] + dx)), Math.min(H - 1, Math.max(0, best[1] + dy))];
      const p = pixel(heat.img, q[0], q[1]);
      if (saturation(p) > saturation(hp)) [hp, hpAt] = [p, q];
    }
  }
  // The light basemap is greys only (water, land, border, text); the ramp is saturated.
  for (const c of [LIGHT.water, LIGHT.land, LIGHT.border, LIGHT.text]) t.false(near(hp, hex(c), 12), `heat pixel ${fmt(hp)} vs basemap ${c}`);
  t.true(Math.max(hp[0], hp[1], hp[2]) - Math.min(hp[0], hp[1], hp[2]) > 40, `heat pixel ${fmt(hp)} is a ramp colour`);
  t.notDeepEqual(hp, pixel(plain.img, hpAt[0], hpAt[1]));

  // No markers on a heatmap; markers on the plain map.
  const marker = hex(LIGHT.marker);
  const all: Box = { x0: 0, y0: 0, x1: W, y1: H };
  t.is(countIn(heat.img, all, (p) => near(p, marker, 3)), 0, 'no marker pixels on the heatmap');
  t.true(countIn(plain.img, all, (p) => near(p, marker, 3)) > 20, 'marker pixels on the plain map');

  // Far from every location (80 px or more) the two images are identical.
  let far = 0;
  const diffs: string[] = [];
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      if (pts.some(([px, py]) => Math.hypot(px - (x + 0.5), py - (y + 0.5)) < 80)) continue;
      far++;
      const a = pixel(heat.img, x, y);
      const b = pixel(plain.img, x, y);
      if (a.some((v, i) => v !== b[i]) && diffs.length < 5) diffs.push(`(${x}, ${y}): heat ${fmt(a)} plain ${fmt(b)}`);
    }
  }
  t.true(far > 2000, `${far} far pixels to compare`);
  t.deepEqual(diffs, [], 'far pixels are untouched by the heatmap');
});

// ------------------------------------------------------------------ legend

// Two chains in Florida only; the viewport puts Florida at the right and the open Gulf of
// Mexico (north of Yucatan, west of Cuba) at the lower left, close enough that a chain's
// stores in two Florida metros are markers apart.
const LEGEND_Q = { tickers: ['CVS', 'CMG'], country: 'US', state: 'FL' };
const LEGEND_BOUNDS: [number, number, number, number] = [23.2, -91, 31.2, -79.5];
/** Where the legend goes: the lower-left corner (12 px margin), generously. */
const LOWER_LEFT: Box = { x0: 0, y0: H - 80, x1: 170, y1: H };

test('legend: swatches in the marker_colors and the panel colour in the lower left; none of them there without the legend', async (t) => {
  const s = await server(t);
  const colours = ['#FF00FF', '#00FFFF'];
  // Two chains in Florida, each with a few stores, whose images draw exactly their JSON rows.
  // Two chains in Florida whose images draw exactly their JSON rows, each with a store well
  // clear of the other's markers, so that both colours show.
  const at = boundsProjector(LEGEND_BOUNDS, W, H);
  const clear = (mine: Location[], theirs: Location[]) =>
    mine.some((l) => theirs.every((o) => Math.hypot(at(l.lat, l.lng)[0] - at(o.lat, o.lng)[0], at(l.lat, l.lng)[1] - at(o.lat, o.lng)[1]) > 14));
  const seen: { brand: string; locs: Location[] }[] = [];
  let pair: string[] | undefined;
  for (const q of byBrand({ country: 'US', state: 'FL' }, LEGEND_Q.tickers)) {
    const locs = await agrees(s, q, (l) => l.length >= 2);
    if (!locs) continue;
    const other = seen.find((o) => clear(o.locs, locs) && clear(locs, o.locs));
    if (other) {
      pair = [other.brand, q.brand];
      break;
    }
    seen.push({ brand: q.brand, locs });
  }
  if (!pair) throw new Error(`no two of ${seen.length} chains in Florida stand clear of each other`);
  const legendQ = { ...LEGEND_Q, tickers: pair };
  const withLegend = await png(t, s, { ...legendQ, bounds: LEGEND_BOUNDS, marker_colors: colours, include_legend: true });
  const without = await png(t, s, { ...legendQ, bounds: LEGEND_BOUNDS, marker_colors: colours });
  const locs = await locations(t, s, legendQ, without.count);
  const reach = 5 + 1.2 + 2; // default marker radius, its stroke, anti-aliasing
  const inRegion = locs.filter((l) => {
    const [x, y] = at(l.lat, l.lng);
    return x > LOWER_LEFT.x0 - reach && x < LOWER_LEFT.x1 + reach && y > LOWER_LEFT.y0 - reach && y < LOWER_LEFT.y1 + reach;
  });
  t.deepEqual(inRegion, [], 'no location projects into the lower-left region');
  t.true(locs.some((l) => {
    const [x, y] = at(l.lat, l.lng);
    return x >= 0 && x < W && y >= 0 && y < H;
  }), 'some markers are in view');

  const panel = hex(LIGHT.panel);
  for (const c of colours) {
    t.true(countIn(withLegend.img, LOWER_LEFT, (p) => near(p, hex(c), 2)) >= 20, `legend swatch ${c}`);
    t.is(countIn(without.img, LOWER_LEFT, (p) => near(p, hex(c), 2)), 0, `no ${c} in the lower left without a legend`);
    t.true(countIn(without.img, { x0: 0, y0: 0, x1: W, y1: H }, (p) => near(p, hex(c), 2)) >= 20, `${c} markers elsewhere on the map`);
  }
  // The panel: the theme's panel colour at alpha 240 over open water stays within 2 of it;
  // the water itself is 11 darker.
  t.true(countIn(withLegend.img, LOWER_LEFT, (p) => near(p, panel, 2)) >= 2000, 'panel-coloured pixels in the lower left');
  t.is(countIn(without.img, LOWER_LEFT, (p) => near(p, panel, 2)), 0, 'no panel colour there without the legend');
  const area = (LOWER_LEFT.x1 - LOWER_LEFT.x0) * (LOWER_LEFT.y1 - LOWER_LEFT.y0);
  t.true(countIn(without.img, LOWER_LEFT, (p) => near(p, hex(LIGHT.water), 1)) > 0.99 * area, 'the lower left without a legend is water');
  t.true(countIn(withLegend.img, LOWER_LEFT, (p) => near(p, hex(LIGHT.water), 1)) < 0.6 * area, 'the legend covers much of it');
  // The legend sits 12 px in from the left and bottom edges: nothing of it in the margin.
  const margin = (p: ArrayLike<number>) => near(p, panel, 2) || colours.some((c) => near(p, hex(c), 2));
  t.is(countIn(withLegend.img, { x0: 0, y0: H - 80, x1: 11, y1: H }, margin), 0, 'left margin');
  t.is(countIn(withLegend.img, { x0: 0, y0: H - 11, x1: 170, y1: H }, margin), 0, 'bottom margin');
});

test('legend: without marker_colors the companies get the palette in ticker order', async (t) => {
  const s = await server(t);
  const a = await png(t, s, { ...LEGEND_Q, bounds: LEGEND_BOUNDS, include_legend: true });
  const [first, second] = [hex(PALETTE[0]), hex(PALETTE[1])];
  t.true(countIn(a.img, LOWER_LEFT, (p) => near(p, first, 2)) >= 20, `swatch ${PALETTE[0]}`);
  t.true(countIn(a.img, LOWER_LEFT, (p) => near(p, second, 2)) >= 20, `swatch ${PALETTE[1]}`);
  // One row per company, in ticker order: the first ticker's swatch is above the second's.
  const meanY = (img: Image, c: RGB) => {
    let sum = 0;
    let n = 0;
    countIn(img, LOWER_LEFT, (p, _x, y) => {
      if (near(p, c, 2)) {
        sum += y;
        n++;
      }
      return false;
    });
    return sum / n;
  };
  t.true(meanY(a.img, first) < meanY(a.img, second), 'rows in ticker order, first colour on top');
});

test('marker_colors follow the tickers when two tickers name the same company', async (t) => {
  const s = await server(t);
  const view = { country: 'US', state: 'FL', bounds: LEGEND_BOUNDS, include_legend: true };
  // MCD and McDonald's are one company: Starbucks, the third ticker, keeps the third colour.
  const dup = await png(t, s, { ...view, tickers: ['MCD', "McDonald's", 'SBUX'], marker_colors: ['#FF00FF', '#FF00FF', '#00FFFF'] });
  const plain = await png(t, s, { ...view, tickers: ['MCD', 'SBUX'], marker_colors: ['#FF00FF', '#00FFFF'] });
  t.is(dup.count, plain.count, 'the company is counted once');
  const all: Box = { x0: 0, y0: 0, x1: W, y1: H };
  const cyan = countIn(dup.img, all, (p) => near(p, hex('#00FFFF'), 2));
  t.true(cyan >= 20, `Starbucks (the third ticker) drawn in its colour #00FFFF: ${cyan} pixels`);
  t.true(dup.bytes.equals(plain.bytes), 'the same companies in the same colours: the same image');
});

// ------------------------------------------------------------------ city labels

function city(name: string, country: string): { lat: number; lng: number; population: number } {
  const lines = readFileSync(path.join(testDataDir(), 'reference', 'cities.csv'), 'utf8').split('\n');
  const header = lines[0].split(',');
  const [ni, ci, pi, lai, lni] = ['name', 'country', 'population', 'lat', 'lng'].map((h) => header.indexOf(h));
  let best: { lat: number; lng: number; population: number } | undefined;
  for (const line of lines) {
    if (!line.includes(`,${name},${country},`)) continue;
    const f = line.split(',');
    if (f[ni] !== name || f[ci] !== country) continue;
    const c = { lat: Number(f[lai]), lng: Number(f[lni]), population: Number(f[pi]) };
    if (!best || c.population > best.population) best = c;
  }
  if (!best) throw new Error(`${name}, ${country} is not in cities.csv`);
  return best;
}

test('city labels: text in the theme text colour just right of a large city', async (t) => {
  const s = await server(t);
  const chicago = city('Chicago', 'US');
  t.true(chicago.population >= 100_000);
  const zoom = 9;
  // Markers in Florida only: nothing of the data near Chicago.
  const fl = await agreeing(s, byBrand({ country: 'US', state: 'FL' }, [FL_CVS.brand]), (locs) => locs.length > 0);
  const light = await png(t, s, { ...fl, center: [chicago.lat, chicago.lng], zoom });
  const dark = await png(t, s, { ...fl, center: [chicago.lat, chicago.lng], zoom, style: 'dark' });
  const locs = await locations(t, s, fl, light.count);
  const at = centerZoomProjector([chicago.lat, chicago.lng], zoom, W, H);
  t.true(locs.every((l) => at(l.lat, l.lng)[1] > H + 20), 'the markers are off the map');
  const [cx, cy] = at(chicago.lat, chicago.lng);
  t.true(Math.abs(cx - W / 2) < 1e-6 && Math.abs(cy - H / 2) < 1e-6);

  // The label's text: starts a few pixels right of the city, 12 px type on a baseline a few
  // pixels below it.
  const textBox: Box = { x0: cx + 4, y0: cy - 7, x1: cx + 45, y1: cy + 5 };
  const darkText = (p: ArrayLike<number>) => p[0] < 100 && p[1] < 100 && p[2] < 100;
  const lightText = (p: ArrayLike<number>) => p[0] > 180 && p[1] > 180 && p[2] > 180;
  const nLightMap = countIn(light.img, textBox, darkText);
  t.true(nLightMap >= 15, `${nLightMap} dark text pixels right of Chicago on the light map`);
  const exact = countIn(light.img, textBox, (p) => near(p, hex(LIGHT.text), 8));
  t.true(exact >= 5, `${exact} pixels of the light text colour ${LIGHT.text}`);
  const nDarkMap = countIn(dark.img, textBox, lightText);
  t.true(nDarkMap >= 15, `${nDarkMap} light text pixels right of Chicago on the dark map`);
  t.true(countIn(dark.img, textBox, (p) => near(p, hex(DARK.text), 8)) >= 5, `pixels of the dark theme's text colour ${DARK.text}`);
  // The dark pixels are the label's, not the ground's: the mirror box left of the city (where
  // Chicago's label does not go) has fewer. (A 'no dark pixels on the dark map' check would
  // mean nothing: the dark theme's land, #1E293B, is itself darker than 100 in every channel.)
  t.true(countIn(light.img, { x0: cx - 45, y0: cy - 7, x1: cx - 4, y1: cy + 5 }, darkText) < nLightMap);
});

test('city labels need room: none on a 64 x 64 or 120 x 120 map, where one name would cover a twentieth of it, one on 200 x 150', async (t) => {
  const s = await server(t);
  const chicago = city('Chicago', 'US');
  const zoom = 9;
  const fl = await agreeing(s, byBrand({ country: 'US', state: 'FL' }, [FL_CVS.brand]), (locs) => locs.length > 0);
  // Chicago 4 px from the left edge, half way down: its label (about 50 px of text to its
  // right) fits inside even the smallest of these maps. Web Mercator at zoom 9 is 2^17 / 360
  // pixels a degree of longitude.
  const pxPerDegree = 2 ** 17 / 360;
  const shot = async (width: number, height: number) => {
    const center = [chicago.lat, chicago.lng + (width / 2 - 4) / pxPerDegree];
    const { img } = await png(t, s, { ...fl, center, zoom, width, height });
    const at = centerZoomProjector(center as [number, number], zoom, width, height);
    const [cx, cy] = at(chicago.lat, chicago.lng);
    t.true(Math.abs(cx - 4) < 0.01 && Math.abs(cy - height / 2) < 0.01);
    // Dark pixels (the label's text and dot: nothing else on the light map is this dark).
    return countIn(img, { x0: 0, y0: 0, x1: width, y1: height }, (p) => p[0] < 100 && p[1] < 100 && p[2] < 100);
  };
  const [tiny, small, fits] = await Promise.all([shot(64, 64), shot(120, 120), shot(200, 150)]);
  t.is(tiny, 0, 'no label on 64 x 64');
  t.is(small, 0, 'no label on 120 x 120');
  t.true(fits >= 15, `${fits} dark pixels on 200 x 150: Chicago's label`);
});

test('US state lines from zoom 3: the Colorado-Kansas line (102.05 W) at zoom 6 and 3, none at zoom 2', async (t) => {
  const s = await server(t);
  // Markers in Florida only; no city of 100,000 near the line.
  const centre: [number, number] = [39, -102.0517];
  const shot = async (zoom: number) => (await png(t, s, { ...FL_CVS, center: centre, zoom })).img;
  const [z2, z3, z6] = await Promise.all([shot(2), shot(3), shot(6)]);
  const land = hex(LIGHT.land);
  const at6 = centerZoomProjector(centre, 6, W, H);
  const [lx] = at6(39, -102.0517);
  // 37 N to 40 N the line is the Colorado-Kansas border, a meridian: one vertical line.
  const [, yTop] = at6(39.9, -102.0517);
  const [, yBottom] = at6(37.1, -102.0517);
  let rows = 0;
  for (let y = Math.max(0, Math.ceil(yTop)); y < Math.min(H, Math.floor(yBottom)); y++) {
    rows++;
    const line = [-2, -1, 0, 1].map((dx) => pixel(z6, lx + dx, y));
    t.true(line.some((p) => !near(p, land, 4)), `row ${y}: a state line near x=${lx.toFixed(1)}: ${line.map(fmt).join(' ')}`);
    t.true(near(pixel(z6, lx - 12, y), land, 0) && near(pixel(z6, lx + 12, y), land, 0), `row ${y}: land on either side`);
  }
  t.true(rows > 100, `${rows} rows of the line checked`);
  // The state corners around the centre at zoom 3 and 2 (a 24-px box of plain land at zoom 2).
  const box: Box = { x0: W / 2 - 12, y0: H / 2 - 12, x1: W / 2 + 12, y1: H / 2 + 12 };
  t.true(countIn(z3, box, (p) => !near(p, land, 4)) > 10, 'state lines at zoom 3');
  t.is(countIn(z2, box, (p) => !near(p, land, 0)), 0, 'no state lines at zoom 2');
});

// ------------------------------------------------------------------ image cache

test('image cache: repeats are hits with identical bytes and full charges; aliases share; options miss; data formats never cached', async (t) => {
  const s = await server(t, {}, 10_000);
  const body = { brand: 'MCD', format: 'png', width: W, height: H };
  const call = async (b: Record<string, unknown>) => {
    const before = (await balance(s));
    const { res, bytes } = await okPost(t, s, b);
    const charged = Number(res.headers.get('x-credits-charged'));
    const count = Number(res.headers.get('x-location-count'));
    t.is(charged, creditsFor(count, b.format as 'png'), 'charged the price of the result');
    t.is((await balance(s)), before - charged, 'the balance goes down by the charge');
    t.is(Number(res.headers.get('x-credits-remaining')), before - charged);
    return { cached: res.headers.get('x-cached'), bytes, charged, count };
  };
  const first = await call(body);
  t.is(first.cached, 'false');
  t.true(first.charged > 0);
  const second = await call(body);
  t.is(second.cached, 'true');
  t.true(second.bytes.equals(first.bytes));
  t.is(second.charged, first.charged);
  t.is(second.count, first.count);
  const third = await call(body);
  t.is(third.cached, 'true');
  t.true(third.bytes.equals(first.bytes));

  // Another spelling of the same brand, and the defaults written out: the same entry.
  for (const b of [
    { ...body, brand: "McDonald's" },
    { ...body, brand: 'mcdonalds' },
    { ...body, style: 'light', scale: 1, dpi: 96 },
  ]) {
    const r = await call(b);
    t.is(r.cached, 'true', JSON.stringify(b));
    t.true(r.bytes.equals(first.bytes), JSON.stringify(b));
  }

  // Different options: a miss, a different picture; then a hit of its own.
  const dark = await call({ ...body, style: 'dark' });
  t.is(dark.cached, 'false');
  t.false(dark.bytes.equals(first.bytes));
  t.is((await call({ ...body, style: 'dark' })).cached, 'true');
  const jpegFirst = await call({ ...body, format: 'jpeg' });
  t.is(jpegFirst.cached, 'false', 'jpeg is not the png entry');
  t.is((await call({ ...body, brand: 'McDonald\'s', format: 'jpeg' })).cached, 'true');
  const otherBrand = await call({ ...body, brand: 'starbucks' });
  t.is(otherBrand.cached, 'false');

  // Data formats are never cached.
  for (const format of ['json', 'json', 'csv', 'csv']) {
    const r = await call({ brand: 'MCD', format });
    t.is(r.cached, 'false', format);
  }
});

test('image cache off (STOREMAP_IMAGE_CACHE_BYTES=0): every image is rendered and charged', async (t) => {
  const s = await server(t, { STOREMAP_IMAGE_CACHE_BYTES: '0' }, 10_000);
  const body = { brand: 'MCD', format: 'png', width: W, height: H };
  const seen: Buffer[] = [];
  for (let i = 0; i < 3; i++) {
    const before = (await balance(s));
    const { res, bytes } = await okPost(t, s, body);
    t.is(res.headers.get('x-cached'), 'false', `request ${i + 1}`);
    const charged = Number(res.headers.get('x-credits-charged'));
    t.is(charged, creditsFor(Number(res.headers.get('x-location-count')), 'png'));
    t.is((await balance(s)), before - charged);
    seen.push(bytes);
  }
  t.true(seen[1].equals(seen[0]) && seen[2].equals(seen[0]), 'rendering is deterministic');
});

test('image cache: a cached image still costs its credits (402 when the key cannot pay); trial caps survive a hit', async (t) => {
  const s = await server(t, {}, 3);
  const body = { brand: 'MCD', country: 'US', format: 'png', width: W, height: H };
  const first = await okPost(t, s, body);
  const cost = creditsFor(Number(first.res.headers.get('x-location-count')), 'png');
  t.true(cost <= 3 && 2 * cost > 3, 'the key can pay once, not twice');
  t.is((await balance(s)), 3 - cost);
  const again = await post(s, body);
  t.is(again.res.status, 402);
  t.is(JSON.parse(again.bytes.toString()).code, 'INSUFFICIENT_CREDITS');
  t.is(again.res.headers.get('x-credits-charged'), null);
  t.is((await balance(s)), 3 - cost, 'nothing charged, nothing served');

  const trial = { ...s, key: (await s.keys.create({ plan: 'trial' })).key };
  const a = await okPost(t, trial, body);
  const b = await okPost(t, trial, body);
  t.is(a.res.headers.get('x-cached'), 'false', 'the trial cap is part of the request: not the enterprise entry');
  t.is(b.res.headers.get('x-cached'), 'true');
  t.true(b.bytes.equals(a.bytes));
  for (const h of ['x-location-count', 'x-trial-cap-applied', 'x-total-available', 'x-credits-charged']) t.is(b.res.headers.get(h), a.res.headers.get(h), h);
  t.is(a.res.headers.get('x-trial-cap-applied'), 'true');
  t.true(Number(a.res.headers.get('x-location-count')) <= 50);
});

test('a country filter alone frames the country’s mainland; a state filter still fits its markers', async (t) => {
  // The contiguous US by its published extremes (Key West to the Northwest Angle, Cape Alava to
  // West Quoddy Head, and the margin README's Framing adds): every store the JSON answer lists there must be drawn where a map of that
  // box puts it, to within the few pixels the box and the Natural Earth shape differ by.
  const s = await server(t);
  const [w, h] = [800, 500];
  const q = { brand: 'Starbucks', country: 'US' };
  const { img } = await png(t, s, { ...q, width: w, height: h, marker_color: '#0000FF' });
  const { bytes } = await okPost(t, s, { ...q, format: 'json' });
  const locs = (JSON.parse(bytes.toString()) as { locations: Location[] }).locations.filter((l) => l.lat > 24 && l.lat < 50 && l.lng > -125 && l.lng < -66);
  t.true(locs.length > 20);
  const project = boundsProjector(countryFrame([24.5, -124.7, 49.4, -66.9]), w, h);
  const blue = hex('#0000FF');
  for (const l of locs.slice(0, 40)) {
    const [x, y] = project(l.lat, l.lng);
    const box = { x0: x - 4, y0: y - 4, x1: x + 5, y1: y + 5 };
    t.true(countIn(img, box, (p) => near(p, blue, 8)) > 0, `${l.lat}, ${l.lng} at (${x.toFixed(1)}, ${y.toFixed(1)})`);
  }
  // A state: fitted to its stores, so far closer in than the whole country.
  const ca = await png(t, s, { ...q, state: 'CA', width: w, height: h, marker_color: '#0000FF' });
  t.notDeepEqual(ca.bytes, (await png(t, s, { ...q, width: w, height: h, marker_color: '#0000FF' })).bytes);
});
