// GET /api/v1/changes on a real server over a real data folder: the synthetic world built as of
// one date, then the same world a year older (stores opened and closed in between), with the
// CLI. What the feed says opened and closed must equal the difference of what the two snapshots
// serve, read with location-map's own query on each snapshot file; opened rows must be the rows
// location-map serves now, closed ones the rows the old snapshot served. Then the plan and the
// price rules, and every refusal.
import test, { type ExecutionContext } from 'ava';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { changesSync, loadStoreSync, NativeError, PREVIOUS_SNAPSHOT_FILE, querySync, SNAPSHOT_FILE, type Store } from '../ts/native.ts';
import { describe, runCli, tempDataDir } from './helpers/cli.ts';
import { parseCsvObjects } from './helpers/csv.ts';
import type { Location } from './helpers/dataset.ts';
import { postMap, request, type HttpResult } from './helpers/http.ts';
import { assertError } from './helpers/location-map.ts';
import { serveFolder, type FolderServer } from './helpers/folder-server.ts';

const THEN = '2026-11-01T00:00:00Z';
const NOW = '2027-11-01T00:00:00Z';
const PINNED = { STOREMAP_DISABLED_SOURCES: '', STOREMAP_MULTI_SOURCE: 'true' };
const CHANGES = '/api/v1/changes';

type Opened = Location & { first_seen: string };
type Closed = Location & { last_seen: string };
interface Feed {
  brand: string;
  region: string;
  since: string;
  until: string;
  opened_count: number;
  closed_count: number;
  opened: Opened[];
  closed: Closed[];
}

/** A brand's data rows in a snapshot, by id, as location-map's query serves them. */
function rowsOf(store: Store, name: string, country?: string): Map<string, Location> {
  const found = store.resolve(name);
  if (!found) return new Map();
  const out = querySync(store, { brands: [found.brand], country, format: 'json', verifiedOnly: true });
  if (out.count === 0) return new Map();
  const rows = (JSON.parse(out.body.toString('utf8')) as { locations: Location[] }).locations;
  return new Map(rows.map((l) => [l.id, l]));
}

const minus = <T>(a: Map<string, T>, b: Map<string, T>) => [...a.keys()].filter((k) => !b.has(k)).sort();

interface World {
  dir: string;
  then: Store;
  now: Store;
  /** The brand with the most changes that both opened and closed stores. */
  brand: string;
  opened: string[];
  closed: string[];
}

let world: Promise<World> | undefined;

/** The two builds, once for the whole file (each test gets its own server and keys). */
function buildWorld(t: ExecutionContext): Promise<World> {
  world ??= (async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'storemap-changes-'));
    const reference = await tempDataDir(t, { reference: true });
    await cp(path.join(reference, 'reference'), path.join(dir, 'reference'), { recursive: true });
    for (const asOf of [THEN, NOW]) {
      const r = await runCli(['data', 'build', '--scale', '0.002', '--seed', '5', '--as-of', asOf], { STOREMAP_DATA_DIR: dir, ...PINNED });
      if (r.code !== 0) throw new Error(describe(r));
    }
    const then = loadStoreSync(path.join(dir, PREVIOUS_SNAPSHOT_FILE));
    const now = loadStoreSync(path.join(dir, SNAPSHOT_FILE));
    let best: Omit<World, 'dir' | 'then' | 'now'> | undefined;
    for (let i = 0; now.brand(i); i++) {
      const name = now.brand(i)!.name;
      const a = rowsOf(then, name);
      const b = rowsOf(now, name);
      const opened = minus(b, a);
      const closed = minus(a, b);
      if (opened.length && closed.length && (!best || opened.length + closed.length > best.opened.length + best.closed.length)) best = { brand: name, opened, closed };
    }
    if (!best) throw new Error('no brand both opened and closed a store over the year');
    return { dir, then, now, ...best };
  })();
  return world;
}

test.after.always(async () => {
  if (world) await rm((await world).dir, { recursive: true, force: true });
});

type Srv = FolderServer;

const serve = (t: ExecutionContext, w: World, credits = 1_000_000) => serveFolder(t, w.dir, credits, 'changes test');

function get(s: Srv, query: string, key = s.key): Promise<HttpResult> {
  return request(s.base, { method: 'GET', path: `${CHANGES}?${query}`, headers: key ? { 'x-api-key': key } : {} });
}

const q = (params: Record<string, string>) => new URLSearchParams(params).toString();

/** The fields a 400 names. */
const fields = (body: { details?: unknown }) => ((body.details ?? []) as { field: string }[]).map((d) => d.field);

test('the feed lists what the two snapshots differ by: opened rows as location-map serves them now, closed ones as they were last served', async (t) => {
  t.timeout(180_000);
  const w = await buildWorld(t);
  const s = await serve(t, w);

  const res = await get(s, q({ brand: w.brand, since: THEN }));
  t.is(res.status, 200, res.text.slice(0, 300));
  t.regex(res.header('content-type'), /^application\/json/);
  const feed = res.json<Feed>();
  t.is(feed.brand, w.brand);
  t.is(feed.region, 'worldwide');
  t.is(feed.since, THEN);
  t.is(feed.until, NOW);
  t.deepEqual(feed.opened.map((l) => l.id).sort(), w.opened);
  t.deepEqual(feed.closed.map((l) => l.id).sort(), w.closed);
  t.is(feed.opened_count, w.opened.length);
  t.is(feed.closed_count, w.closed.length);

  // Opened rows: exactly location-map's rows over HTTP, plus first_seen (served since NOW).
  const map = await postMap(s.base, s.key, { brand: w.brand, format: 'json' });
  t.is(map.status, 200);
  const served = new Map(map.json<{ locations: Location[] }>().locations.map((l) => [l.id, l]));
  for (const { first_seen, ...row } of feed.opened) {
    t.deepEqual(row, served.get(row.id), `opened ${row.id}`);
    t.is(first_seen, NOW);
  }
  // Closed rows: the rows the old snapshot served, plus last_seen (last served at THEN).
  const before = rowsOf(w.then, w.brand);
  for (const { last_seen, ...row } of feed.closed) {
    t.deepEqual(row, before.get(row.id), `closed ${row.id}`);
    t.is(last_seen, THEN);
  }

  // Headers: the counts, the dates, the price of a data request of that many rows.
  const count = w.opened.length + w.closed.length;
  t.true(count <= 500, 'a brand of a scale-0.002 world changes fewer than 500 stores a year');
  t.is(res.header('x-location-count'), String(count));
  t.is(res.header('x-opened-count'), String(w.opened.length));
  t.is(res.header('x-closed-count'), String(w.closed.length));
  t.is(res.header('x-changes-since'), THEN);
  t.is(res.header('x-changes-until'), NOW);
  t.is(decodeURIComponent(res.header('x-brand')), w.brand, 'X-Brand: the name, percent-encoded where not ASCII');
  // The contract's smallest tier: up to 500 rows cost 1 credit.
  t.is(res.header('x-credits-charged'), '1');
  t.is(res.header('cache-control'), 'private, no-store');

  // A date between the two refreshes reads the earlier one; one after the last, no changes.
  const mid = (await get(s, q({ brand: w.brand, since: '2027-05-01' }))).json<Feed>();
  t.is(mid.since, THEN);
  t.is(mid.opened_count + mid.closed_count, count);
  const last = await get(s, q({ brand: w.brand, since: NOW }));
  t.is(last.status, 200);
  t.like(last.json<Feed>(), { since: NOW, until: NOW, opened_count: 0, closed_count: 0, opened: [], closed: [] });
  t.is(last.header('x-credits-charged'), '1', 'an answer with no changes costs the smallest tier');
  // After the serving snapshot and the clock: a mistake, refused and not charged.
  const later = await get(s, q({ brand: w.brand, since: '2028-01-01T00:00:00Z' }));
  t.is(later.status, 400);
  t.is(later.header('x-credits-charged'), '');
});

test('the feed in CSV and GeoJSON, and under a country filter', async (t) => {
  t.timeout(180_000);
  const w = await buildWorld(t);
  const s = await serve(t, w);

  const csv = await get(s, q({ brand: w.brand, since: THEN, format: 'csv' }));
  t.is(csv.status, 200);
  t.regex(csv.header('content-type'), /^text\/csv/);
  const rows = parseCsvObjects(csv.text);
  t.deepEqual(Object.keys(rows[0]).slice(-2), ['change', 'seen']);
  t.deepEqual(rows.filter((r) => r.change === 'opened').map((r) => r.seen), w.opened.map(() => NOW));
  t.deepEqual(rows.filter((r) => r.change === 'closed').map((r) => r.seen), w.closed.map(() => THEN));
  t.is(rows.length, w.opened.length + w.closed.length);
  // include_hours=true: opening_hours between the eleven columns and change, seen; the same rows.
  const hours = parseCsvObjects((await get(s, q({ brand: w.brand, since: THEN, format: 'csv', include_hours: 'true' }))).text);
  t.deepEqual(Object.keys(hours[0]).slice(-3), ['opening_hours', 'change', 'seen']);
  t.deepEqual(hours.map((r) => `${r.change} ${r.lat},${r.lng}`), rows.map((r) => `${r.change} ${r.lat},${r.lng}`));

  const geo = await get(s, q({ brand: w.brand, since: THEN, format: 'geojson' }));
  t.is(geo.status, 200);
  t.regex(geo.header('content-type'), /^application\/geo\+json/);
  const doc = geo.json<{ type: string; since: string; until: string; features: { id: string; geometry: { coordinates: [number, number] }; properties: Record<string, unknown> }[] }>();
  t.like(doc, { type: 'FeatureCollection', since: THEN, until: NOW });
  t.deepEqual(doc.features.filter((f) => f.properties.change === 'opened').map((f) => f.id).sort(), w.opened);
  t.deepEqual(doc.features.filter((f) => f.properties.change === 'closed').map((f) => f.id).sort(), w.closed);
  const now = rowsOf(w.now, w.brand);
  for (const f of doc.features.filter((x) => x.properties.change === 'opened')) {
    const row = now.get(f.id)!;
    t.deepEqual(f.geometry.coordinates, [row.lng, row.lat], 'GeoJSON is [lng, lat]');
    t.is(f.properties.first_seen, NOW);
  }

  // A country filter: the differences of the two snapshots' answers under the same filter.
  const country = (now.get(w.opened[0]) ?? rowsOf(w.then, w.brand).get(w.closed[0]))!.country;
  const filtered = await get(s, q({ brand: w.brand, since: THEN, country: country.toLowerCase() }));
  t.is(filtered.status, 200);
  const f = filtered.json<Feed>();
  t.is(f.region, country);
  t.deepEqual(f.opened.map((l) => l.id).sort(), minus(rowsOf(w.now, w.brand, country), rowsOf(w.then, w.brand, country)));
  t.deepEqual(f.closed.map((l) => l.id).sort(), minus(rowsOf(w.then, w.brand, country), rowsOf(w.now, w.brand, country)));
  t.true(f.opened.length + f.closed.length > 0);

  // A name is read in the filter's country as location-map reads it: Coop in Switzerland is
  // Coop (Schweiz), not the Netherlands' Coop, which has no store there (this small world has
  // at least one of these namesakes).
  const namesakes = [
    ['Coop', 'CH', 'Coop (Schweiz)'],
    ['Woolworths', 'AU', 'Woolworths (Australia)'],
    ['Coop', 'SE', 'Coop (Sverige)'],
  ].filter(([, country, namesake]) => rowsOf(w.now, namesake, country).size > 0);
  t.true(namesakes.length > 0, 'a namesake with stores in this world');
  for (const [name, country, namesake] of namesakes) {
    const feed = await get(s, q({ brand: name, since: THEN, country }));
    t.is(feed.status, 200);
    t.is(decodeURIComponent(feed.header('x-brand')), namesake);
  }
});

test('the feed refuses: no key, image plans, a date before the history, bad fields, an unknown brand, a balance too small', async (t) => {
  t.timeout(180_000);
  const w = await buildWorld(t);
  const s = await serve(t, w);

  assertError(t, await get(s, q({ brand: w.brand, since: THEN }), ''), 401, 'UNAUTHORIZED');
  for (const plan of ['standard', 'trial'] as const) {
    const k = await s.keys.create({ plan, credits: 100 });
    assertError(t, await get(s, q({ brand: w.brand, since: THEN }), k.key), 403, 'DATA_ACCESS_FORBIDDEN');
  }

  // The history begins at the first build: the error names the date and the field.
  const early = assertError(t, await get(s, q({ brand: w.brand, since: '2026-10-31' })), 400, 'INVALID_REQUEST');
  t.deepEqual(fields(early), ['since']);
  t.true(early.error.includes(THEN), early.error);

  for (const [params, field] of [
    [{ brand: w.brand }, 'since'],
    [{ brand: w.brand, since: 'last week' }, 'since'],
    [{ brand: w.brand, since: THEN, format: 'png' }, 'format'],
    [{ brand: w.brand, since: THEN, radius_km: '5' }, 'radius_km'],
    [{ brand: w.brand, since: THEN, radius_km: '0x5', city: 'Paris' }, 'radius_km'],
    [{ brand: w.brand, since: THEN, contry: 'US' }, 'contry'],
    [{ since: THEN }, 'brand'],
  ] as [Record<string, string>, string][]) {
    const body = assertError(t, await get(s, q(params)), 400, 'INVALID_REQUEST');
    t.true(fields(body).includes(field), `${JSON.stringify(params)}: ${JSON.stringify(body.details)}`);
  }
  const unknown = assertError(t, await get(s, q({ brand: 'Zzqx Nonexistent Coffee', since: THEN })), 404, 'NOT_FOUND');
  t.true(Array.isArray(unknown.suggestions));

  // A key without the credits: refused before anything is written, and not charged.
  const poor = await s.keys.create({ plan: 'enterprise', credits: 0 });
  assertError(t, await get(s, q({ brand: w.brand, since: THEN }), poor.key), 402, 'INSUFFICIENT_CREDITS');
  t.is((await s.keys.get(poor.record.id))!.credits, 0);
});

test('a data folder without a history: the snapshot serves, the feed says it is not available here', async (t) => {
  t.timeout(180_000);
  const w = await buildWorld(t);
  const bare = await tempDataDir(t);
  await cp(path.join(w.dir, SNAPSHOT_FILE), path.join(bare, SNAPSHOT_FILE));
  const store = loadStoreSync(path.join(bare, SNAPSHOT_FILE));
  t.is(store.info().changes_since ?? null, null);
  const found = store.resolve(w.brand)!;
  const err = t.throws(() => changesSync(store, { brand: found.brand, since: Date.parse(THEN) / 1000, format: 'json' }));
  t.true(err instanceof NativeError);
  t.is((err as NativeError).code, 'NOT_IMPLEMENTED');
  t.is(loadStoreSync(path.join(w.dir, SNAPSHOT_FILE)).info().changes_since, THEN);
});
