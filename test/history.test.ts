// GET /api/v1/history on a real server over a real data folder: the synthetic world built with
// the CLI as of three dates a quarter apart. Each period's count must equal location-map's own
// count on the snapshot in force at its end (each snapshot file kept as it was built and read
// with location-map's query), and its openings and closings the differences of consecutive
// snapshots' ids. Then CSV, the month step, a ticker, the plan and the price, every refusal, and
// the playground's chart of it in a real browser.
import test, { type ExecutionContext } from 'ava';
import { mkdirSync } from 'node:fs';
import { copyFile, cp, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { historySync, loadStoreSync, NativeError, querySync, SNAPSHOT_FILE, type Store } from '../ts/native.ts';
import { describe, runCli, tempDataDir } from './helpers/cli.ts';
import { parseCsvObjects } from './helpers/csv.ts';
import type { Location } from './helpers/dataset.ts';
import { request, type HttpResult } from './helpers/http.ts';
import { assertError } from './helpers/location-map.ts';
import { serveFolder, type FolderServer } from './helpers/folder-server.ts';
import { ARTIFACTS, browser, fill } from './helpers/browser.ts';

/** Three builds a quarter apart, from the synthetic world's survey date on (before it the world
 * stands still): 2026-Q4, 2027-Q1 and Q2. */
const BUILDS = ['2026-11-01T00:00:00Z', '2027-02-01T00:00:00Z', '2027-05-01T00:00:00Z'];
const QUARTERS = ['2026-Q4', '2027-Q1', '2027-Q2'];
const PINNED = { STOREMAP_DISABLED_SOURCES: '', STOREMAP_MULTI_SOURCE: 'true' };
const HISTORY = '/api/v1/history';

interface Point {
  period: string;
  start: string;
  end: string;
  stores: number;
  opened: number;
  closed: number;
}
interface Series {
  brand: string;
  brand_wikidata: string | null;
  ticker: string | null;
  company: string | null;
  region: string;
  interval: string;
  begins: string;
  until: string;
  series: Point[];
}

/** A brand's data-row ids in a snapshot, as location-map's query serves them. */
function idsOf(store: Store, name: string, country?: string): Set<string> {
  const found = store.resolve(name)!;
  const out = querySync(store, { brands: [found.brand], country, format: 'json', verifiedOnly: true });
  if (out.count === 0) return new Set();
  return new Set((JSON.parse(out.body.toString('utf8')) as { locations: Location[] }).locations.map((l) => l.id));
}

/** The country most of a brand's data rows are in. */
function topCountry(store: Store, name: string): string {
  const out = querySync(store, { brands: [store.resolve(name)!.brand], format: 'json', verifiedOnly: true });
  const counts = new Map<string, number>();
  for (const l of (JSON.parse(out.body.toString('utf8')) as { locations: Location[] }).locations) counts.set(l.country, (counts.get(l.country) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1])[0][0];
}

const minus = (a: Set<string>, b: Set<string>) => [...a].filter((x) => !b.has(x)).length;

interface World {
  dir: string;
  /** Each build's snapshot, as built. */
  snaps: Store[];
  /** The listed brand with the most changes over the builds. */
  brand: string;
  ticker: string;
}

let world: Promise<World> | undefined;

function buildWorld(t: ExecutionContext): Promise<World> {
  world ??= (async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'storemap-history-'));
    const reference = await tempDataDir(t, { reference: true });
    await cp(path.join(reference, 'reference'), path.join(dir, 'reference'), { recursive: true });
    const snaps: Store[] = [];
    for (const [i, asOf] of BUILDS.entries()) {
      const r = await runCli(['data', 'build', '--scale', '0.002', '--seed', '5', '--as-of', asOf], { STOREMAP_DATA_DIR: dir, ...PINNED });
      if (r.code !== 0) throw new Error(describe(r));
      const kept = path.join(dir, `as-built-${i}.smap`);
      await copyFile(path.join(dir, SNAPSHOT_FILE), kept);
      snaps.push(loadStoreSync(kept));
    }
    const now = snaps[2];
    let best: { brand: string; ticker: string; changes: number } | undefined;
    for (let i = 0; now.brand(i); i++) {
      const b = now.brand(i)!;
      if (!b.ticker) continue;
      const sets = snaps.map((s) => idsOf(s, b.name));
      const changes = minus(sets[1], sets[0]) + minus(sets[0], sets[1]) + minus(sets[2], sets[1]) + minus(sets[1], sets[2]);
      if (!best || changes > best.changes) best = { brand: b.name, ticker: b.ticker, changes };
    }
    if (!best || best.changes === 0) throw new Error('no listed brand changed over the builds');
    return { dir, snaps, brand: best.brand, ticker: best.ticker };
  })();
  return world;
}

test.after.always(async () => {
  if (world) await rm((await world).dir, { recursive: true, force: true });
});

type Srv = FolderServer;

const serve = (t: ExecutionContext, w: World) => serveFolder(t, w.dir, 1_000, 'history test');

function get(s: Srv, params: Record<string, string>, key = s.key): Promise<HttpResult> {
  return request(s.base, { method: 'GET', path: `${HISTORY}?${new URLSearchParams(params).toString()}`, headers: key ? { 'x-api-key': key } : {} });
}

/** What the kept snapshots say, quarter by quarter: location-map's count on the snapshot of each
 * quarter, and the ids each added and removed against the one before (none for the first:
 * the history begins there). */
function expected(w: World, country?: string): Omit<Point, 'start' | 'end'>[] {
  const sets = w.snaps.map((s) => idsOf(s, w.brand, country));
  return sets.map((set, i) => ({
    period: QUARTERS[i],
    stores: set.size,
    opened: i === 0 ? 0 : minus(set, sets[i - 1]),
    closed: i === 0 ? 0 : minus(sets[i - 1], set),
  }));
}

test("each quarter's count is location-map's count on that quarter's snapshot, its openings and closings their differences", async (t) => {
  t.timeout(240_000);
  const w = await buildWorld(t);
  const s = await serve(t, w);

  const res = await get(s, { brand: w.brand });
  t.is(res.status, 200, res.text.slice(0, 300));
  t.regex(res.header('content-type'), /^application\/json/);
  const doc = res.json<Series>();
  t.like(doc, { brand: w.brand, ticker: w.ticker, region: 'worldwide', interval: 'quarter', begins: BUILDS[0], until: BUILDS[2] });
  t.deepEqual(
    doc.series.map(({ start: _s, end: _e, ...p }) => p),
    expected(w),
  );
  t.deepEqual(
    doc.series.map((p) => [p.start, p.end]),
    [
      ['2026-10-01T00:00:00Z', '2027-01-01T00:00:00Z'],
      ['2027-01-01T00:00:00Z', '2027-04-01T00:00:00Z'],
      ['2027-04-01T00:00:00Z', '2027-07-01T00:00:00Z'],
    ],
  );
  t.true(doc.series.some((p) => p.opened + p.closed > 0));
  // Priced like a data request of three rows: the smallest tier.
  t.is(res.header('x-location-count'), '3');
  t.is(res.header('x-credits-charged'), '1');
  t.is(res.header('x-history-begins'), BUILDS[0]);
  t.is(res.header('x-history-until'), BUILDS[2]);
  t.is(res.header('cache-control'), 'private, no-store');

  // The ticker names the same brand; a country filter counts that country's stores only.
  const byTicker = await get(s, { ticker: w.ticker.toLowerCase() });
  t.is(byTicker.status, 200);
  t.deepEqual(byTicker.json<Series>().series, doc.series);
  const c = topCountry(w.snaps[2], w.brand);
  const filtered = await get(s, { brand: w.brand, country: c.toLowerCase() });
  t.is(filtered.status, 200);
  t.is(filtered.json<Series>().region, c);
  t.deepEqual(
    filtered.json<Series>().series.map(({ start: _s, end: _e, ...p }) => p),
    expected(w, c),
  );
});

test('months carry the quarter count between builds; CSV says what JSON says', async (t) => {
  t.timeout(240_000);
  const w = await buildWorld(t);
  const s = await serve(t, w);
  const quarters = expected(w);

  const res = await get(s, { brand: w.brand, interval: 'month', from: '2026-11', to: '2027-05-31' });
  t.is(res.status, 200, res.text);
  const months = res.json<Series>().series;
  t.deepEqual(
    months.map((p) => p.period),
    ['2026-11', '2026-12', '2027-01', '2027-02', '2027-03', '2027-04', '2027-05'],
  );
  // A month without a build keeps the count of the build before it and has no changes.
  const built = new Map([
    ['2026-11', 0],
    ['2027-02', 1],
    ['2027-05', 2],
  ]);
  let last = quarters[0];
  for (const p of months) {
    const i = built.get(p.period);
    if (i !== undefined) last = quarters[i];
    t.deepEqual([p.stores, p.opened, p.closed], [last.stores, i === undefined ? 0 : last.opened, i === undefined ? 0 : last.closed], p.period);
  }
  // A quarter label as the range.
  const q3 = (await get(s, { brand: w.brand, from: '2027-Q1', to: '2027-q1' })).json<Series>();
  t.deepEqual(
    q3.series.map((p) => p.period),
    ['2027-Q1'],
  );

  const csv = await get(s, { brand: w.brand, format: 'csv' });
  t.is(csv.status, 200);
  t.regex(csv.header('content-type'), /^text\/csv/);
  const rows = parseCsvObjects(csv.text);
  t.deepEqual(Object.keys(rows[0]), ['period', 'start', 'end', 'stores', 'opened', 'closed']);
  t.deepEqual(
    rows.map((r) => [r.period, Number(r.stores), Number(r.opened), Number(r.closed)]),
    quarters.map((p) => [p.period, p.stores, p.opened, p.closed]),
  );
});

test('history refuses: no key, image plans, ranges outside the history, bad fields, unknown brands and tickers, a balance too small', async (t) => {
  t.timeout(240_000);
  const w = await buildWorld(t);
  const s = await serve(t, w);
  const fields = (body: { details?: unknown }) => ((body.details ?? []) as { field: string }[]).map((d) => d.field);

  assertError(t, await get(s, { brand: w.brand }, ''), 401, 'UNAUTHORIZED');
  for (const plan of ['standard', 'trial'] as const) {
    const k = await s.keys.create({ plan, credits: 100 });
    assertError(t, await get(s, { brand: w.brand }, k.key), 403, 'DATA_ACCESS_FORBIDDEN');
  }
  // Before the history and after the serving snapshot: named, with where the history begins.
  const early = assertError(t, await get(s, { brand: w.brand, from: '2026-Q3' }), 400, 'INVALID_REQUEST');
  t.deepEqual(fields(early), ['from']);
  t.true(early.error.includes(BUILDS[0]) && early.error.includes('2026-Q4'), early.error);
  const late = assertError(t, await get(s, { brand: w.brand, to: '2027-07' }), 400, 'INVALID_REQUEST');
  t.deepEqual(fields(late), ['to']);
  t.true(late.error.includes(BUILDS[2]), late.error);
  // A bound alone on the wrong side of the reach is named itself, not the default of the other.
  const toEarly = assertError(t, await get(s, { brand: w.brand, to: '2026-09' }), 400, 'INVALID_REQUEST');
  t.deepEqual(fields(toEarly), ['to']);
  t.true(toEarly.error.includes(BUILDS[0]), toEarly.error);
  const fromLate = assertError(t, await get(s, { brand: w.brand, from: '2027-Q3' }), 400, 'INVALID_REQUEST');
  t.deepEqual(fields(fromLate), ['from']);
  t.true(fromLate.error.includes(BUILDS[2]), fromLate.error);

  for (const [params, field] of [
    [{ brand: w.brand, interval: 'week' }, 'interval'],
    [{ brand: w.brand, from: 'last year' }, 'from'],
    [{ brand: w.brand, to: '2026-13' }, 'to'],
    [{ brand: w.brand, from: '2027-Q2', to: '2027-Q1' }, 'from'],
    [{ brand: w.brand, from: '2027-02-02', to: '2027-02-01' }, 'from'],
    [{ brand: w.brand, format: 'geojson' }, 'format'],
    [{ brand: w.brand, format: 'png' }, 'format'],
    [{ brand: w.brand, radius_km: '5' }, 'radius_km'],
    [{ brand: w.brand, ticker: w.ticker }, 'ticker'],
    [{ brand: w.brand, contry: 'US' }, 'contry'],
    [{}, 'brand'],
  ] as [Record<string, string>, string][]) {
    const body = assertError(t, await get(s, params), 400, 'INVALID_REQUEST');
    t.true(fields(body).includes(field), `${JSON.stringify(params)}: ${JSON.stringify(body.details)}`);
  }
  assertError(t, await get(s, { brand: 'Zzqx Nonexistent Coffee' }), 404, 'NOT_FOUND');
  // `ticker` takes tickers only: the brand's name there is not one.
  assertError(t, await get(s, { ticker: w.brand.slice(0, 20) }), 404, 'NOT_FOUND');

  const poor = await s.keys.create({ plan: 'enterprise', credits: 0 });
  assertError(t, await get(s, { brand: w.brand }, poor.key), 402, 'INSUFFICIENT_CREDITS');
  t.is((await s.keys.get(poor.record.id))!.credits, 0);
});

test('a data folder without a history: history is not available there', async (t) => {
  t.timeout(240_000);
  const w = await buildWorld(t);
  const bare = await tempDataDir(t);
  await copyFile(path.join(w.dir, SNAPSHOT_FILE), path.join(bare, SNAPSHOT_FILE));
  const store = loadStoreSync(path.join(bare, SNAPSHOT_FILE));
  const err = t.throws(() => historySync(store, { brand: store.resolve(w.brand)!.brand, interval: 'quarter' }));
  t.true(err instanceof NativeError);
  t.is((err as NativeError).code, 'NOT_IMPLEMENTED');
});

test("the playground draws the series: a point per quarter at its count, titled with its numbers, and the curl command is the GET sent", async (t) => {
  t.timeout(240_000);
  const w = await buildWorld(t);
  const s = await serve(t, w);
  const quarters = expected(w);
  const b = await browser(t);
  const page = await b.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${s.base}/playground`, { waitUntil: 'networkidle0' });
  await page.type('#api-key', s.key);
  await page.select('#endpoint', 'history');
  await fill(page, '#f-ticker', w.ticker);
  await page.click('#send');
  await page.waitForSelector('#history-chart', { timeout: 60_000 });
  const drawn = await page.$eval('#history-chart', (svg) => ({
    titles: [...svg.querySelectorAll('circle.point title')].map((e) => e.textContent ?? ''),
    ys: [...svg.querySelectorAll('circle.point')].map((e) => Number(e.getAttribute('cy'))),
    line: (svg.querySelector('polyline')?.getAttribute('points') ?? '').split(' ').length,
  }));
  t.is(drawn.line, quarters.length);
  t.deepEqual(
    drawn.titles,
    quarters.map((p) => `${p.period}: ${p.stores.toLocaleString('en-US')} stores, ${p.opened} opened, ${p.closed} closed`),
  );
  // Higher counts sit higher on the page (smaller y), in the series' own order.
  for (let i = 0; i < quarters.length; i++) {
    for (let j = 0; j < quarters.length; j++) {
      if (quarters[i].stores > quarters[j].stores) t.true(drawn.ys[i] < drawn.ys[j], `${quarters[i].period} above ${quarters[j].period}`);
    }
  }
  const curl = await page.$eval('#curl', (e) => e.textContent ?? '');
  t.true(curl.startsWith(`curl -s '${s.base}/api/v1/history?ticker=${encodeURIComponent(w.ticker)}'`), curl);
  t.regex(await page.$eval('#status', (e) => e.textContent ?? ''), /^200 OK/);
  t.deepEqual(errors, []);
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, 'playground-history.png'), fullPage: true });
});
