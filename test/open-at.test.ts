// open_at as a client sees it: the Zugerland mall's real OpenStreetMap and AllThePlaces files,
// and beside them one AllThePlaces spider file written here in the exporter's format with
// 7-Eleven stores in Tokyo and Zurich (two time zones, one of them with summer time), imported
// as an operator does and served on 127.0.0.1. The expected answers come from another
// implementation: opening_hours.js (the evaluator OSM's editors use) reads each served row's
// hours at the store's wall-clock time, and that clock is Intl's (ICU's time-zone data) in the
// zone the fixture put the store in, not the server's lookup.
import test, { type ExecutionContext } from 'ava';
import OpeningHours from 'opening_hours';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../ts/paths.ts';
import { AS_OF, describe, runCli, tempDataDir } from './helpers/cli.ts';
import { serveFolder, type FolderServer } from './helpers/folder-server.ts';
import { parseCsvObjects } from './helpers/csv.ts';
import { postMap, request, type HttpResult } from './helpers/http.ts';
import { DATA_DEFAULTS } from '../ts/native.ts';

const REAL = path.join(ROOT, 'test', 'fixtures', 'real');

/** The spider's stores: where, in which zone, and their hours (none for one). */
const STORES = [
  { ref: 'tokyo-shinjuku', lat: 35.6895, lng: 139.6917, zone: 'Asia/Tokyo', hours: '24/7' },
  { ref: 'tokyo-minato', lat: 35.6586, lng: 139.7454, zone: 'Asia/Tokyo', hours: 'Mo-Su 07:00-23:00' },
  { ref: 'tokyo-sumida', lat: 35.71, lng: 139.8107, zone: 'Asia/Tokyo', hours: undefined },
  { ref: 'zurich-hb', lat: 47.3769, lng: 8.5417, zone: 'Europe/Zurich', hours: 'Mo-Sa 08:00-20:00' },
  { ref: 'zurich-bellevue', lat: 47.3667, lng: 8.55, zone: 'Europe/Zurich', hours: 'Mo-Fr 06:00-22:00; Sa,Su 08:00-20:00' },
  { ref: 'zurich-oerlikon', lat: 47.4111, lng: 8.5446, zone: 'Europe/Zurich', hours: 'Mo-Fr 07:00-12:00,13:30-19:00' },
];
const TOKYO = { lat: 35.6895, lng: 139.6917 };

/** One spider run as AllThePlaces' exporter writes it (see test/fixtures/real/atp). */
function writeSpider(dir: string): void {
  const features = STORES.map((s) => ({
    type: 'Feature',
    id: `fixture-${s.ref}`,
    properties: { ref: s.ref, '@spider': 'seven_eleven_fixture', shop: 'convenience', name: '7-Eleven', brand: '7-Eleven', 'brand:wikidata': 'Q259340', ...(s.hours ? { opening_hours: s.hours } : {}) },
    geometry: { type: 'Point', coordinates: [s.lng, s.lat] },
  }));
  const run = { '@spider': 'seven_eleven_fixture', 'spider:collection_time': '2026-10-30T06:00:00', 'spider:lineage': 'S_ATP_BRANDS' };
  writeFileSync(path.join(dir, 'seven_eleven_fixture.geojson'), JSON.stringify({ type: 'FeatureCollection', dataset_attributes: run, features }));
}

interface Row {
  id: string;
  name: string;
  lat: number;
  lng: number;
  country: string;
  opening_hours: string | null;
}
interface Doc {
  count: number;
  open_at?: string;
  hours_unknown?: number;
  locations: Row[];
}
type Wall = { y: number; mo: number; d: number; h: number; mi: number };

const nearby = (s: FolderServer, extra: Record<string, unknown>) =>
  request(s.base, {
    method: 'POST',
    path: '/api/v1/nearby',
    headers: { 'content-type': 'application/json', 'x-api-key': s.key },
    body: JSON.stringify({ ...TOKYO, brand: '7-Eleven', radius_km: 50, limit: 100, ...extra }),
  });

function doc(r: HttpResult): Doc {
  return r.json<Doc>();
}

/** What opening_hours.js says of `hours` at this wall-clock time (its fields, read as local). */
function openByJs(hours: string, wall: Wall): boolean {
  const oh = new OpeningHours(hours, null, { mode: 0, tag_key: 'opening_hours', map_value: false, warnings_severity: 4, locale: 'en' });
  return oh.getState(new Date(wall.y, wall.mo - 1, wall.d, wall.h, wall.mi));
}

/** The wall clock in `zone` at an instant, by Intl. */
function wallAt(instant: string, zone: string): Wall {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit' })
      .formatToParts(new Date(instant))
      .map((p) => [p.type, Number(p.value)]),
  );
  return { y: parts.year!, mo: parts.month!, d: parts.day!, h: parts.hour!, mi: parts.minute! };
}

function wallOf(local: string): Wall {
  const [date, time] = local.split('T');
  const [y, mo, d] = date!.split('-').map(Number);
  const [h, mi] = time!.split(':').map(Number);
  return { y: y!, mo: mo!, d: d!, h: h!, mi: mi! };
}

/** The fixture's zone of a served row (the store nearest it). */
function zoneOf(row: Row): string {
  return STORES.reduce((a, b) => (Math.hypot(b.lat - row.lat, b.lng - row.lng) < Math.hypot(a.lat - row.lat, a.lng - row.lng) ? b : a)).zone;
}

/** The ids expected open, and the rows without hours, with each row's wall clock from `wall`. */
function expected(rows: Row[], wall: (r: Row) => Wall) {
  const withHours = rows.filter((r) => r.opening_hours !== null);
  return { open: withHours.filter((r) => openByJs(r.opening_hours!, wall(r))).map((r) => r.id).sort(), unknown: rows.length - withHours.length };
}

const ids = (r: HttpResult) => (r.status === 404 ? [] : doc(r).locations.map((l) => l.id).sort());

/** Every row of a brand, without open_at: what the expectations are computed over. */
async function rowsOf(s: FolderServer, brand: string): Promise<Row[]> {
  const r = await postMap(s.base, s.key, { brand, format: 'json' });
  if (r.status !== 200) throw new Error(`${brand}: ${r.status} ${r.text}`);
  return doc(r).locations;
}

/** Local times: each store's own clock, in both zones; fewer open at night, the 24/7 store always. */
async function localTimes(t: ExecutionContext, s: FolderServer) {
  const rows = await rowsOf(s, '7-Eleven');
  t.is(rows.length, STORES.length, 'every fixture store served');
  const counts: Record<string, number> = {};
  // Tuesday noon, Tuesday 03:30, Sunday noon, Tuesday 12:45 (the Oerlikon store's lunch break).
  for (const local of ['2026-12-01T12:00', '2026-12-01T03:30', '2026-12-06T12:00', '2026-12-01T12:45']) {
    const r = await postMap(s.base, s.key, { brand: '7-Eleven', format: 'json', open_at: local });
    const want = expected(rows, () => wallOf(local));
    t.is(r.status, 200, `${local}: ${r.text}`);
    t.deepEqual(ids(r), want.open, local);
    t.is(doc(r).hours_unknown, want.unknown, `${local}: rows without hours`);
    t.is(r.header('x-hours-unknown'), String(want.unknown));
    t.is(doc(r).open_at, `${local}:00`, 'the moment echoed with seconds');
    counts[local] = doc(r).count;
  }
  t.true(counts['2026-12-01T12:00']! > counts['2026-12-01T03:30']!, `fewer open at night: ${JSON.stringify(counts)}`);
  const allDay = rows.find((r) => r.opening_hours === '24/7')!;
  for (const local of ['2026-12-01T12:00', '2026-12-01T03:30']) {
    const r = await postMap(s.base, s.key, { brand: '7-Eleven', format: 'json', open_at: local });
    t.true(ids(r).includes(allDay.id), `the 24/7 store is open at ${local}`);
  }
  // The real mall: Denner's row carries the publishers' hours; the same check on it.
  const denner = await rowsOf(s, 'Denner');
  t.true(denner.some((r) => r.opening_hours !== null), 'Denner has hours');
  for (const local of ['2026-12-01T12:00', '2026-12-01T03:30']) {
    const r = await postMap(s.base, s.key, { brand: 'Denner', format: 'json', open_at: local });
    t.deepEqual(ids(r), expected(denner, () => wallOf(local)).open, `Denner at ${local}`);
  }
}

/** An instant is read on each store's clock: two zones, and across Zurich's change to summer time. */
async function instants(t: ExecutionContext, s: FolderServer) {
  const rows = await rowsOf(s, '7-Eleven');
  // 06:30 UTC is 07:30 in Zurich on the Saturday before the change (29 March 2026) and 08:30 on
  // the Monday after; Tokyo keeps 15:30. 11:00 UTC on a December Tuesday is noon in Zurich and
  // 20:00 in Tokyo; 23:30 UTC is 00:30 in Zurich and 08:30 in Tokyo.
  for (const instant of ['2026-03-28T06:30:00Z', '2026-03-30T06:30:00Z', '2026-12-01T11:00:00Z', '2026-12-01T23:30:00Z', '2026-12-01T20:00:00+09:00']) {
    const want = expected(rows, (r) => wallAt(instant, zoneOf(r)));
    const r = await postMap(s.base, s.key, { brand: '7-Eleven', format: 'json', open_at: instant });
    t.deepEqual(ids(r), want.open, instant);
  }
  const zurich = rows.filter((r) => zoneOf(r) === 'Europe/Zurich');
  const before = expected(zurich, (r) => wallAt('2026-03-28T06:30:00Z', zoneOf(r))).open;
  const after = expected(zurich, (r) => wallAt('2026-03-30T06:30:00Z', zoneOf(r))).open;
  t.notDeepEqual(before, after, 'the fixture tells the change apart');
  // The same instant written in two offsets is one answer.
  const a = await postMap(s.base, s.key, { brand: '7-Eleven', format: 'json', open_at: '2026-12-01T11:00:00Z' });
  const b = await postMap(s.base, s.key, { brand: '7-Eleven', format: 'json', open_at: '2026-12-01T20:00:00+09:00' });
  t.deepEqual(ids(a), ids(b));
}

/** Nearby with open_at: the nearest open ones, the unknown ones passed over counted. */
async function nearest(t: ExecutionContext, s: FolderServer) {
  const all = doc(await nearby(s, {})).locations;
  t.is(all.length, STORES.filter((x) => x.zone === 'Asia/Tokyo').length, 'the Tokyo stores');
  for (const local of ['2026-12-01T12:00', '2026-12-01T03:30']) {
    const r = await nearby(s, { open_at: local });
    const want = expected(all, () => wallOf(local));
    t.is(r.status, 200, r.text);
    t.deepEqual(ids(r), want.open, local);
    t.is(doc(r).hours_unknown, want.unknown);
  }
  // Asked for one, it is the nearest open one: the 24/7 store at the point itself.
  const one = doc(await nearby(s, { open_at: '2026-12-01T03:30', limit: 1 }));
  t.is(one.locations[0]?.opening_hours, '24/7');
}

/** Every data format carries the open stores; GeoJSON and JSON the count of unknown ones. */
async function formats(t: ExecutionContext, s: FolderServer) {
  const rows = await rowsOf(s, '7-Eleven');
  const local = '2026-12-01T03:30';
  const want = expected(rows, () => wallOf(local));
  const geo = await postMap(s.base, s.key, { brand: '7-Eleven', format: 'geojson', open_at: local });
  const fc = geo.json<{ open_at: string; hours_unknown: number; features: { id: string }[] }>();
  t.deepEqual([fc.features.map((f) => f.id).sort(), fc.hours_unknown, fc.open_at], [want.open, want.unknown, `${local}:00`]);
  const csv = await postMap(s.base, s.key, { brand: '7-Eleven', format: 'csv', open_at: local });
  t.is(csv.text.trim().split('\n').length, want.open.length + 1, 'header and the open stores');
  t.is(csv.header('x-hours-unknown'), String(want.unknown));
  // include_hours: CSV gains opening_hours after the contract's eleven columns, each row's the
  // JSON row's; without it the eleven stay as they are.
  const json = doc(await postMap(s.base, s.key, { brand: '7-Eleven', format: 'json' })).locations;
  const withHours = await postMap(s.base, s.key, { brand: '7-Eleven', format: 'csv', include_hours: true });
  const records = parseCsvObjects(withHours.text);
  t.deepEqual(Object.keys(records[0]!), [...DATA_DEFAULTS.csvColumns, 'opening_hours']);
  t.deepEqual(records.map((r) => r.opening_hours).sort(), json.map((l) => l.opening_hours ?? '').sort());
  t.deepEqual(Object.keys(parseCsvObjects((await postMap(s.base, s.key, { brand: '7-Eleven', format: 'csv' })).text)[0]!), [...DATA_DEFAULTS.csvColumns]);
  const near = parseCsvObjects((await nearby(s, { format: 'csv', include_hours: true })).text);
  t.deepEqual(Object.keys(near[0]!), [...DATA_DEFAULTS.csvColumns, 'opening_hours', 'distance_m']);
  t.true(near.some((r) => r.opening_hours === '24/7'));
  // Without open_at nothing is said about hours.
  const plain = await postMap(s.base, s.key, { brand: '7-Eleven', format: 'json' });
  t.is(doc(plain).hours_unknown, undefined);
  t.is(plain.header('x-hours-unknown'), '');
  // No store open: 404, saying how many could not be told.
  const none = await postMap(s.base, s.key, { brand: '7-Eleven', format: 'json', open_at: '2026-12-01T03:30', country: 'CH' });
  t.is(none.status, 404, none.text);
  t.regex(none.text, /open at 2026-12-01T03:30 \(0 without known opening hours\)/);
}

/** Bad open_at values are refused with the field named, before any charge. */
async function badValues(t: ExecutionContext, s: FolderServer) {
  const before = (await s.keys.get(s.keyId))?.credits;
  for (const bad of ['garbage', '2026-12-01', '2026-02-30T12:00', '2026-12-01T24:00', '2026-12-01 12:00', '2026-12-01T12:00+25:00', 12, '12:00']) {
    for (const r of [await nearby(s, { open_at: bad }), await postMap(s.base, s.key, { brand: '7-Eleven', format: 'json', open_at: bad })]) {
      t.is(r.status, 400, `${String(bad)}: ${r.text}`);
      const body = r.json<{ code: string; details?: { field: string }[] }>();
      t.is(body.code, 'INVALID_REQUEST');
      t.deepEqual(body.details?.map((d) => d.field), ['open_at'], String(bad));
    }
  }
  t.is((await s.keys.get(s.keyId))?.credits, before, 'nothing charged');
}

// One import and one server for every part: the import is the slow part.
test('open_at: local times and instants in two zones, across summer time, nearby, every format, bad values', async (t) => {
  const dir = await tempDataDir(t, { reference: true });
  const atp = path.join(dir, 'atp-input');
  mkdirSync(atp);
  copyFileSync(path.join(REAL, 'atp', 'output.zip'), path.join(atp, 'output.zip'));
  writeSpider(atp);
  const r = await runCli(['data', 'import', '--osm', path.join(REAL, 'osm', 'zugerland.osm.pbf'), '--atp', atp, '--as-of', AS_OF], { STOREMAP_DATA_DIR: dir });
  t.is(r.code, 0, describe(r));
  const s = await serveFolder(t, dir, 1_000_000, 'open_at test');
  await localTimes(t, s);
  await instants(t, s);
  await nearest(t, s);
  await formats(t, s);
  await badValues(t, s);
});
