// Map images over HTTP: png and jpeg decoded with real decoders; size, dpi, theme colours,
// the trial marker cap, credits at twice the base, bounds that never filter the data, and
// JSON errors (never an image) for bad image requests.
import test from 'ava';
import jpeg from 'jpeg-js';
import { PNG } from 'pngjs';
import { creditsFor } from '../ts/api/prices.ts';
import { startServer, type TestServer } from './helpers/server.ts';

const NO_RATE_LIMIT = { STOREMAP_RATE_LIMIT: '100000', STOREMAP_RATE_BURST: '100000' };

async function post(s: TestServer, key: string, body: unknown) {
  const res = await fetch(`${s.base}/api/v1/location-map`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify(body),
  });
  return { res, bytes: Buffer.from(await res.arrayBuffer()) };
}

/** pixels per metre from the PNG's pHYs chunk */
function pngPpm(b: Buffer): number | null {
  const i = b.indexOf('pHYs');
  return i < 0 ? null : b.readUInt32BE(i + 4);
}

test('png: decodes at the default 1200 x 800 with 96 dpi; twice the base credits; community rows drawn', async (t) => {
  const s = await startServer(t, { env: NO_RATE_LIMIT });
  const key = (await s.keys.create({ plan: 'enterprise', credits: 1000 })).key;
  const { res, bytes } = await post(s, key, { brand: 'starbucks', format: 'png' });
  t.is(res.status, 200);
  t.is(res.headers.get('content-type'), 'image/png');
  const img = PNG.sync.read(bytes);
  t.is(img.width, 1200);
  t.is(img.height, 800);
  t.is(pngPpm(bytes), Math.round(96 / 0.0254));
  const count = Number(res.headers.get('x-location-count'));
  t.is(Number(res.headers.get('x-credits-charged')), creditsFor(count, 'png'));
  const json = await post(s, key, { brand: 'starbucks' });
  t.true(count >= Number(json.res.headers.get('x-location-count')), 'images draw community-only and low-confidence rows too');
  t.regex(res.headers.get('x-render-time') ?? '', /^\d+ms$/);
});

test('maps carry X-Coverage-Confidence: the markers drawn over the same estimate, so at least the data answer\'s figure, scaled by the counts', async (t) => {
  const s = await startServer(t, { env: NO_RATE_LIMIT });
  const key = (await s.keys.create({ plan: 'enterprise', credits: 10_000 })).key;
  for (const brand of ['starbucks', "McDonald's"]) {
    const png = await post(s, key, { brand, format: 'png', country: 'US' });
    const json = await post(s, key, { brand, country: 'US' });
    t.is(png.res.status, 200);
    const drawn = Number(png.res.headers.get('x-location-count'));
    const served = Number(json.res.headers.get('x-location-count'));
    const map = Number(png.res.headers.get('x-coverage-confidence'));
    const data = (JSON.parse(json.bytes.toString()) as { coverage_confidence: number }).coverage_confidence;
    t.true(map > 0 && map <= 1, `${brand}: ${map}`);
    t.true(map >= data, `${brand}: the map's ${map} against the data's ${data}`);
    // One estimate N under both: map = drawn / N and data = served / N, each rounded to three
    // decimals (±0.0005), so map = data × drawn / served within that rounding.
    const ratio = drawn / served;
    if (map < 1) t.true(Math.abs(map - data * ratio) <= 0.0005 * (1 + ratio) + 1e-9, `${brand}: ${map} against ${data} × ${drawn} / ${served}`);
  }
});

test('jpeg: decodes, scale multiplies the pixels, dpi is in the JFIF header', async (t) => {
  const s = await startServer(t, { env: NO_RATE_LIMIT });
  const key = (await s.keys.create({ plan: 'enterprise', credits: 1000 })).key;
  const { res, bytes } = await post(s, key, { brand: 'mcdonalds', format: 'jpeg', width: 300, height: 200, scale: 2, dpi: 300 });
  t.is(res.status, 200);
  t.is(res.headers.get('content-type'), 'image/jpeg');
  const img = jpeg.decode(bytes, { useTArray: true });
  t.is(img.width, 600);
  t.is(img.height, 400);
  const app0 = bytes.indexOf('JFIF\0');
  t.true(app0 > 0);
  t.is(bytes[app0 + 7], 1, 'density in dots per inch');
  t.is(bytes.readUInt16BE(app0 + 8), 300);
});

test('themes paint different backgrounds over open ocean', async (t) => {
  const s = await startServer(t, { env: NO_RATE_LIMIT });
  const key = (await s.keys.create({ plan: 'enterprise', credits: 1000 })).key;
  const corner = async (style: string) => {
    const { res, bytes } = await post(s, key, { brand: 'starbucks', format: 'png', style, width: 64, height: 64, center: [0, -140], zoom: 4 });
    t.is(res.status, 200, style);
    const img = PNG.sync.read(bytes);
    return [img.data[0], img.data[1], img.data[2]].join(',');
  };
  const colours = await Promise.all(['light', 'dark', 'voyager', 'pitchbook', 'slate', 'warm'].map(corner));
  t.is(new Set(colours).size, 6, `six distinct water colours: ${colours.join(' | ')}`);
});

test('bounds never filter the data: count and credits are those of the whole result', async (t) => {
  const s = await startServer(t, { env: NO_RATE_LIMIT });
  const key = (await s.keys.create({ plan: 'enterprise', credits: 1000 })).key;
  const whole = await post(s, key, { brand: 'starbucks', format: 'png', width: 200, height: 200 });
  const boxed = await post(s, key, { brand: 'starbucks', format: 'png', width: 200, height: 200, bounds: [-1, -1, 1, 1] });
  t.is(boxed.res.status, 200);
  t.is(boxed.res.headers.get('x-location-count'), whole.res.headers.get('x-location-count'));
  t.is(boxed.res.headers.get('x-credits-charged'), whole.res.headers.get('x-credits-charged'));
  // Every longitude, -180 to 180, is a box (one meridian twice, 10 to 10, is not: bad-input).
  const world = await post(s, key, { brand: 'starbucks', format: 'png', width: 200, height: 200, bounds: [-60, -180, 70, 180] });
  t.is(world.res.status, 200);
  t.is(world.res.headers.get('x-location-count'), whole.res.headers.get('x-location-count'));
});

test('a body in UTF-8 behind a byte order mark is read; non-ASCII names arrive whole', async (t) => {
  const s = await startServer(t, { env: NO_RATE_LIMIT });
  const key = (await s.keys.create({ plan: 'enterprise', credits: 1000 })).key;
  const send = (body: Buffer) => fetch(`${s.base}/api/v1/location-map`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: new Uint8Array(body) });
  const plain = await send(Buffer.from(JSON.stringify({ brand: 'starbucks', format: 'csv' })));
  const bom = await send(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify({ brand: 'starbucks', format: 'csv' }))]));
  t.is(bom.status, 200);
  t.is(await bom.text(), await plain.text());
  // McDonald's in katakana, as raw UTF-8 and as escaped UTF-16 (a pair-free name either way).
  const raw = await send(Buffer.from('{"brand":"マクドナルド","format":"csv"}', 'utf8'));
  const escaped = await send(Buffer.from(JSON.stringify({ brand: 'マクドナルド', format: 'csv' }).replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)));
  t.is(raw.status, 200);
  t.is(escaped.status, 200);
  t.is(raw.headers.get('x-location-count'), escaped.headers.get('x-location-count'));
});

test('trial keys get at most 50 markers, with the cap headers', async (t) => {
  const s = await startServer(t, { env: NO_RATE_LIMIT });
  const key = (await s.keys.create({ plan: 'trial' })).key;
  const { res } = await post(s, key, { brand: 'starbucks', format: 'png', width: 200, height: 200 });
  t.is(res.status, 200);
  const count = Number(res.headers.get('x-location-count'));
  t.true(count <= 50);
  const total = Number(res.headers.get('x-total-available') ?? count);
  if (total > 50) {
    t.is(res.headers.get('x-trial-cap-applied'), 'true');
    t.is(count, 50);
  } else {
    t.fail('the test brand should have more than 50 locations for this test to mean anything');
  }
  t.is(Number(res.headers.get('x-credits-charged')), creditsFor(count, 'png'));
});

test('bad image requests get JSON errors, never an image', async (t) => {
  const s = await startServer(t, { env: NO_RATE_LIMIT });
  const key = (await s.keys.create({ plan: 'enterprise', credits: 1000 })).key;
  for (const body of [
    { brand: 'starbucks', format: 'png', width: 4097 },
    { brand: 'starbucks', format: 'png', width: 2000, scale: 3 },
    { brand: 'starbucks', format: 'jpeg', zoom: 19, center: [0, 0] },
    { brand: 'starbucks', format: 'png', style: 'neon' },
    { brand: 'starbucks', format: 'png', marker_color: 'red' },
  ]) {
    const { res, bytes } = await post(s, key, body);
    t.is(res.status, 400, JSON.stringify(body));
    t.regex(res.headers.get('content-type') ?? '', /application\/json/);
    t.is(JSON.parse(bytes.toString()).code, 'INVALID_REQUEST');
  }
});
