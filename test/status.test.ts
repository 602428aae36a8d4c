// GET /api/v1/status on a real server (127.0.0.1, its own SQLite file, the real addon and
// renderer, an injectable clock): the headers, every field of the contract with its type, a
// real render behind renderer.ok, the brand_summary freshness (null on a fresh database,
// stale after 40 days), the 30-second cache, the configuration flags, and degradation (no
// renderer, a broken database) reported in a 200 body.
import test, { type ExecutionContext } from 'ava';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../ts/paths.ts';
import { buildCommand, testStore } from './helpers/dataset.ts';
import { request, type HttpResult } from './helpers/http.ts';
import { startServer, type TestServer } from './helpers/server.ts';
import { DAY_MS } from '../ts/time.ts';
import type { z } from 'zod';
import type { Status } from '../ts/api/responses.ts';

// ------------------------------------------------------------------ fixtures and helpers

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const SNAPSHOT = testStore().info() as { snapshot_version: string; rows: number };

/** The status body as the published schema describes it. */
type StatusBody = z.infer<typeof Status>;

interface Clocked {
  base: string;
  db: TestServer['db'];
  clock: { now: number };
}

const START = Date.UTC(2026, 10, 20, 12, 0, 0);

async function server(t: ExecutionContext, env: Record<string, string> = {}): Promise<Clocked & TestServer> {
  const clock = { now: START };
  // The flags' defaults stated here, so an exported variable in the shell cannot change them.
  const s = await startServer(t, { env: { STOREMAP_DISABLED_SOURCES: '', STOREMAP_MULTI_SOURCE: 'true', ...env }, now: () => clock.now });
  return { ...s, clock };
}

/** A real server with no renderer loaded. */
async function serverWithoutRenderer(t: ExecutionContext): Promise<Clocked> {
  const clock = { now: START };
  const s = await startServer(t, { now: () => clock.now, renderer: false });
  return { base: s.base, db: s.db, clock };
}

function getStatus(base: string, headers: Record<string, string> = {}): Promise<HttpResult> {
  return request(base, { method: 'GET', path: '/api/v1/status', headers });
}

/** 200, the contract's headers, and every field with its type. */
async function status(t: ExecutionContext, base: string, headers: Record<string, string> = {}): Promise<StatusBody> {
  const res = await getStatus(base, headers);
  t.is(res.status, 200, `status -> ${res.status}: ${res.text.slice(0, 300)}`);
  t.regex(res.header('content-type'), /^application\/json/);
  t.is(res.header('cache-control'), 'public, max-age=30');
  t.is(res.header('access-control-allow-origin'), '*');
  const b = res.json<StatusBody>();
  assertShape(t, b);
  return b;
}

function assertShape(t: ExecutionContext, b: StatusBody): void {
  t.true(b.status === 'ok' || b.status === 'degraded', `status ${b.status}`);
  t.true(Number.isInteger(b.elapsed_ms) && b.elapsed_ms >= 0, `elapsed_ms ${b.elapsed_ms}`);
  t.regex(b.timestamp, ISO_TIME);
  t.is(typeof b.api?.ok, 'boolean');
  t.true(typeof b.api?.version === 'string' && b.api.version.length > 0);
  t.is(typeof b.renderer?.ok, 'boolean');
  t.true(Number.isInteger(b.renderer?.elapsed_ms) && b.renderer.elapsed_ms >= 0, `renderer.elapsed_ms ${b.renderer?.elapsed_ms}`);
  t.true(typeof b.renderer?.detail === 'object' && b.renderer.detail !== null && !Array.isArray(b.renderer.detail), 'renderer.detail is an object');
  const bs = b.data?.brand_summary;
  t.truthy(bs, 'data.brand_summary');
  t.true(bs.last_refreshed_at === null || (typeof bs.last_refreshed_at === 'string' && ISO_TIME.test(bs.last_refreshed_at)), `last_refreshed_at ${bs.last_refreshed_at}`);
  t.true(bs.stale === null || typeof bs.stale === 'boolean', `stale ${bs.stale}`);
  t.is(bs.stale === null, bs.last_refreshed_at === null, 'stale is null exactly while last_refreshed_at is null');
  t.is(typeof b.flags?.use_multi_source_import, 'boolean');
  t.true(Array.isArray(b.flags?.disabled_sources));
  t.is(typeof b.database?.ok, 'boolean');
  t.true(b.database?.kind === 'sqlite' || b.database?.kind === 'postgres', `database.kind ${b.database?.kind}`);
  t.true(b.database.ok ? Number.isInteger(b.database.latency_ms) && (b.database.latency_ms ?? -1) >= 0 : b.database.latency_ms === null, `database ${JSON.stringify(b.database)}`);
  // ok exactly when every subsystem is.
  t.is(b.status, b.api.ok && b.renderer.ok && b.database.ok ? 'ok' : 'degraded', 'degraded if any subsystem is down');
}

function stampBrandSummary(db: TestServer['db'], at: number, brand = "McDonald's"): void {
  db.prepare(
    `INSERT INTO brand_summary (brand, ticker, location_count, snapshot_version, refreshed_at) VALUES (?, NULL, 1, ?, ?)
     ON CONFLICT(brand) DO UPDATE SET refreshed_at = excluded.refreshed_at`,
  ).run(brand, SNAPSHOT.snapshot_version, at);
}

// ------------------------------------------------------------------ tests

test('200 with the contract headers and every field; a real render behind renderer.ok; fresh database: never refreshed', async (t) => {
  const s = await server(t);
  const b = await status(t, s.base);
  t.is(b.status, 'ok');
  t.is(b.timestamp, new Date(START).toISOString(), 'timestamp is the server clock');
  t.true(b.api.ok);
  t.is(b.api.version, VERSION, 'api.version is the package version');
  t.true(b.renderer.ok);
  t.true(typeof b.renderer.detail.pngBytes === 'number' && b.renderer.detail.pngBytes > 0, `a real PNG was rendered: ${JSON.stringify(b.renderer.detail)}`);
  t.deepEqual(b.data.brand_summary, { last_refreshed_at: null, stale: null }, 'null until the first refresh');
  t.is(b.data.snapshot_version, SNAPSHOT.snapshot_version);
  t.is(b.data.rows, SNAPSHOT.rows);
  // The test dataset is one build, as of the date its build command gives: the feed reaches
  // back to it.
  t.is(b.data.changes_since, /--as-of (\S+)/.exec(buildCommand('x'))![1]);
  t.deepEqual(b.flags, { use_multi_source_import: true, disabled_sources: [] });
  t.deepEqual(Object.keys(b).sort(), ['api', 'data', 'database', 'elapsed_ms', 'flags', 'renderer', 'status', 'timestamp']);
  t.like(b.database, { ok: true, kind: 'sqlite' });

  // Public: a key changes nothing and leaves no usage row; a browser origin gets CORS.
  const k = await s.keys.create({ plan: 'trial' });
  const withKey = await status(t, s.base, { 'x-api-key': k.key, origin: 'https://example.com' });
  t.is(withKey.status, 'ok');
  t.is((s.db.prepare('SELECT COUNT(*) AS n FROM usage').get() as { n: number }).n, 0);
});

test('stale: a refresh stamped 41 days before the clock is stale, 39 days is not; the newest stamp counts', async (t) => {
  const a = await server(t);
  stampBrandSummary(a.db, START - 41 * DAY_MS);
  const old = await status(t, a.base);
  t.deepEqual(old.data.brand_summary, { last_refreshed_at: new Date(START - 41 * DAY_MS).toISOString(), stale: true });
  t.is(old.status, 'ok', 'stale data is not a subsystem failure');

  // A new server (the status is cached for 30 s).
  const b = await server(t);
  stampBrandSummary(b.db, START - 39 * DAY_MS);
  const fresh = await status(t, b.base);
  t.deepEqual(fresh.data.brand_summary, { last_refreshed_at: new Date(START - 39 * DAY_MS).toISOString(), stale: false });

  // Several rows: the newest stamp is reported.
  const c = await server(t);
  stampBrandSummary(c.db, START - 50 * DAY_MS, 'A');
  stampBrandSummary(c.db, START - 2 * DAY_MS, 'B');
  stampBrandSummary(c.db, START - 45 * DAY_MS, 'C');
  const mixed = await status(t, c.base);
  t.deepEqual(mixed.data.brand_summary, { last_refreshed_at: new Date(START - 2 * DAY_MS).toISOString(), stale: false });

  // Staleness follows the clock: the 39-day-old stamp is stale two days later (past the cache).
  b.clock.now += 2 * DAY_MS;
  const later = await status(t, b.base);
  t.deepEqual(later.data.brand_summary, { last_refreshed_at: new Date(START - 39 * DAY_MS).toISOString(), stale: true });
});

test('the 30-second cache: within 30 s the same answer (same timestamp), after 31 s a new one', async (t) => {
  const s = await server(t);
  const first = await status(t, s.base);
  t.deepEqual(first.data.brand_summary, { last_refreshed_at: null, stale: null });

  // A refresh lands, but within the cache period the old answer is served.
  stampBrandSummary(s.db, START - DAY_MS);
  s.clock.now = START + 29_000;
  const cached = await status(t, s.base);
  t.is(cached.timestamp, first.timestamp, 'same timestamp within 30 s');
  t.deepEqual(cached.data.brand_summary, first.data.brand_summary, 'same body within 30 s');

  s.clock.now = START + 31_000;
  const next = await status(t, s.base);
  t.is(next.timestamp, new Date(START + 31_000).toISOString(), 'a new timestamp after 31 s');
  t.not(next.timestamp, first.timestamp);
  t.deepEqual(next.data.brand_summary, { last_refreshed_at: new Date(START - DAY_MS).toISOString(), stale: false }, 'and fresh data');

  // The new answer is itself cached from its own time.
  s.clock.now = START + 31_000 + 20_000;
  t.is((await status(t, s.base)).timestamp, next.timestamp);
  s.clock.now = START + 31_000 + 31_000;
  t.is((await status(t, s.base)).timestamp, new Date(START + 62_000).toISOString());
});

test('without a renderer: still 200, status degraded, renderer.ok false, the API itself ok', async (t) => {
  const s = await serverWithoutRenderer(t);
  const b = await status(t, s.base);
  t.is(b.status, 'degraded');
  t.false(b.renderer.ok);
  t.true(b.api.ok);
  t.is(b.data.snapshot_version, SNAPSHOT.snapshot_version);
  t.deepEqual(b.data.brand_summary, { last_refreshed_at: null, stale: null });
});

test('a broken database: still 200, status degraded, api.ok false', async (t) => {
  const s = await server(t);
  s.db.exec('DROP TABLE brand_summary');
  const b = await status(t, s.base);
  t.is(b.status, 'degraded');
  t.false(b.api.ok);
  t.true(b.renderer.ok, 'the renderer is fine');
});

test('flags reflect STOREMAP_DISABLED_SOURCES and STOREMAP_MULTI_SOURCE', async (t) => {
  const cases: [Record<string, string>, { use_multi_source_import: boolean; disabled_sources: string[] }][] = [
    [{ STOREMAP_DISABLED_SOURCES: 'fsq,atp', STOREMAP_MULTI_SOURCE: 'false' }, { use_multi_source_import: false, disabled_sources: ['atp', 'fsq'] }],
    [{ STOREMAP_DISABLED_SOURCES: 'osm', STOREMAP_MULTI_SOURCE: 'true' }, { use_multi_source_import: true, disabled_sources: ['osm'] }],
    [{ STOREMAP_DISABLED_SOURCES: '', STOREMAP_MULTI_SOURCE: 'false' }, { use_multi_source_import: false, disabled_sources: [] }],
  ];
  for (const [env, expected] of cases) {
    const s = await server(t, env);
    const b = await status(t, s.base);
    t.is(b.flags.use_multi_source_import, expected.use_multi_source_import, JSON.stringify(env));
    t.deepEqual([...b.flags.disabled_sources].sort(), expected.disabled_sources, JSON.stringify(env));
    t.is(b.status, 'ok', JSON.stringify(env));
  }
});
