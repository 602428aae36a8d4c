// `storemap data refresh` against a running `storemap serve` (child processes, a temporary data
// folder with a tiny synthetic dataset): the refresh builds the same world at a later time
// into a new snapshot (a different --as-of, one source disabled, so the content differs), the
// server swaps to it while requests keep coming, not one of them fails, and the refresh
// stamps brand_summary, which /api/v1/status then reports as fresh. Expected figures come
// from loading each snapshot file in this process.
import test from 'ava';
import path from 'node:path';
import { openDatabase } from '../ts/db/database.ts';
import { loadStoreSync, type Store } from '../ts/native.ts';
import { SNAPSHOT_FILE } from '../ts/native.ts';
import { KeyStore } from '../ts/services/keys.ts';
import { startServe } from './helpers/child.ts';
import { describe, runCli, tempDataDir } from './helpers/cli.ts';
import { postMap, request } from './helpers/http.ts';
import { DAY_MS } from '../ts/time.ts';
import { SqliteLedger } from '../ts/db/sqlite-ledger.ts';

const NO_RATE_LIMIT = { STOREMAP_RATE_LIMIT: '100000', STOREMAP_RATE_BURST: '100000' };
/** Settings pinned so the shell's environment cannot change the builds. */
const PINNED = { STOREMAP_DISABLED_SOURCES: '', STOREMAP_MULTI_SOURCE: 'true' };
const BUILD_AS_OF = '2026-10-01T00:00:00Z';
const REFRESH_AS_OF = '2026-10-20T00:00:00Z';

interface Snap {
  version: string;
  asOf: string;
  /** Directory brands: location_count > 0, by name. */
  brands: Map<string, { ticker: string | null; count: number }>;
}

function snap(store: Store): Snap {
  const info = store.info() as { snapshot_version: string; as_of: string; brands: number };
  const brands = new Map<string, { ticker: string | null; count: number }>();
  for (let i = 0; i < info.brands; i++) {
    const b = store.brand(i)!;
    if (b.locationCount > 0) brands.set(b.name, { ticker: b.ticker ?? null, count: b.locationCount });
  }
  return { version: info.snapshot_version, asOf: info.as_of, brands };
}

interface Seen {
  kind: 'brands' | 'map';
  status: number;
  /** brands: total; map: X-Location-Count. */
  value: number;
  /** map: the distinct last_updated values of the rows. */
  stamps?: string[];
  error?: string;
  /** When the answer arrived (wall clock). */
  at: number;
}

test('data refresh swaps the snapshot under load with no failed request, and stamps brand_summary', async (t) => {
  t.timeout(150_000);
  const dir = await tempDataDir(t, { reference: true });
  const dbPath = path.join(dir, 'storemap.db');
  const build = await runCli(['data', 'build', '--scale', '0.002', '--seed', '3', '--as-of', BUILD_AS_OF], { STOREMAP_DATA_DIR: dir, ...PINNED });
  t.is(build.code, 0, describe(build));
  if (build.code !== 0) return;

  const before = snap(loadStoreSync(path.join(dir, SNAPSHOT_FILE)));
  t.is(before.asOf, BUILD_AS_OF);
  // The brand the location-map loop asks for: the one with the most storefronts.
  const [brand] = [...before.brands].sort((a, b) => b[1].count - a[1].count)[0];

  const db = openDatabase(dbPath);
  const { key } = await new KeyStore(new SqliteLedger(db)).create({ plan: 'enterprise', credits: 1_000_000, name: 'refresh test' });
  t.is((db.prepare('SELECT COUNT(*) AS n FROM brand_summary').get() as { n: number }).n, 0, 'no refresh has run yet');
  db.close();

  const srv = await startServe(t, { dataDir: dir, dbPath, env: { ...NO_RATE_LIMIT, ...PINNED } });
  const health = async () => (await request(srv.base, { method: 'GET', path: '/healthz', timeoutMs: 5_000 })).json<{ snapshot_version: string }>();
  t.is((await health()).snapshot_version, before.version);
  const firstFeed = await request(srv.base, { method: 'GET', path: `/api/v1/changes?brand=${encodeURIComponent(brand)}&since=${BUILD_AS_OF}`, headers: { 'x-api-key': key } });
  t.like(firstFeed.json<{ since: string; until: string }>(), { since: BUILD_AS_OF, until: BUILD_AS_OF }, 'the build started the history');

  // Requests in a loop, one brands and one location-map at a time, until told to stop.
  const seen: Seen[] = [];
  let stop = false;
  const loop = async (kind: Seen['kind']) => {
    while (!stop) {
      try {
        if (kind === 'brands') {
          const res = await request(srv.base, { method: 'GET', path: '/api/v1/brands?limit=5' });
          seen.push({ kind, status: res.status, value: res.status === 200 ? res.json<{ total: number }>().total : -1, error: res.status === 200 ? undefined : res.text.slice(0, 200), at: Date.now() });
        } else {
          const res = await postMap(srv.base, key, { brand, format: 'json' });
          const ok = res.status === 200;
          const rows = ok ? res.json<{ locations: { last_updated: string }[] }>().locations : [];
          seen.push({
            kind,
            status: res.status,
            value: Number(res.header('x-location-count')),
            stamps: [...new Set(rows.map((l) => l.last_updated))],
            error: ok ? undefined : res.text.slice(0, 200),
            at: Date.now(),
          });
        }
      } catch (e) {
        seen.push({ kind, status: 0, value: -1, error: e instanceof Error ? e.message : String(e), at: Date.now() });
      }
      await new Promise((r) => setTimeout(r, 15));
    }
  };
  const loops = Promise.all([loop('brands'), loop('map')]);

  let after: Snap | undefined;
  let swappedAt = -1;
  let refreshStart = 0;
  let refreshEnd = 0;
  try {
    await new Promise((r) => setTimeout(r, 300));
    refreshStart = Date.now();
    const refresh = await runCli(['data', 'refresh', '--as-of', REFRESH_AS_OF], { STOREMAP_DATA_DIR: dir, STOREMAP_DB: dbPath, ...PINNED, STOREMAP_DISABLED_SOURCES: 'fsq' });
    refreshEnd = Date.now();
    t.is(refresh.code, 0, describe(refresh));
    if (refresh.code !== 0) return;

    after = snap(loadStoreSync(path.join(dir, SNAPSHOT_FILE)));
    t.is(after.asOf, REFRESH_AS_OF);
    t.not(after.version, before.version, 'the refreshed snapshot differs');
    t.not(after.brands.size, before.brands.size, 'with fsq left out, the directory has a different number of brands');

    // The server notices the new file and swaps (bounded wait).
    const deadline = Date.now() + 20_000;
    let version = before.version;
    while (Date.now() < deadline) {
      version = (await health()).snapshot_version;
      if (version === after.version) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    t.is(version, after.version, `the server swapped to the new snapshot within 20 s:\n${srv.output().slice(-2000)}`);
    swappedAt = seen.length;
    // Keep the load on for a moment after the swap.
    await new Promise((r) => setTimeout(r, 1_000));
  } finally {
    stop = true;
    await loops;
  }
  if (!after) return;

  // Not one request failed, before, during or after the swap.
  const failed = seen.filter((s) => s.status !== 200);
  t.deepEqual(failed, [], `${failed.length} of ${seen.length} requests failed`);
  const brandsSeen = seen.filter((s) => s.kind === 'brands');
  const mapsSeen = seen.filter((s) => s.kind === 'map');
  t.true(brandsSeen.length >= 10 && mapsSeen.length >= 10, `the loop ran throughout (${brandsSeen.length} brands, ${mapsSeen.length} location-map requests)`);
  t.true(swappedAt > 0 && seen.length > swappedAt, 'requests were answered both before and after the swap');
  const during = seen.filter((s) => s.at >= refreshStart && s.at <= refreshEnd);
  t.true(during.some((s) => s.kind === 'brands') && during.some((s) => s.kind === 'map'), `requests were answered while the refresh ran (${during.length})`);
  t.log(`${brandsSeen.length} brands and ${mapsSeen.length} location-map requests, ${during.length} during the ${refreshEnd - refreshStart} ms refresh, ${seen.length - swappedAt} after the swap was seen`);

  // Every answer came from one snapshot or the other, the old first, then the new.
  const totals = brandsSeen.map((s) => s.value);
  t.true(totals.every((v) => v === before.brands.size || v === after!.brands.size), `directory totals ${[...new Set(totals)]} are ${before.brands.size} or ${after.brands.size}`);
  t.is(totals[0], before.brands.size, 'the first directory page came from the old snapshot');
  t.is(totals.at(-1), after.brands.size, 'the last one from the new snapshot (the directory is rebuilt for it)');
  const firstNew = totals.indexOf(after.brands.size);
  t.true(totals.slice(firstNew).every((v) => v === after!.brands.size), 'never back to the old snapshot after the swap');
  const oldCount = before.brands.get(brand)!.count;
  const newCount = after.brands.get(brand)?.count;
  for (const m of mapsSeen) {
    t.deepEqual(m.stamps!.length, 1, 'one snapshot per response');
    const stamp = m.stamps![0];
    t.true(stamp === BUILD_AS_OF || stamp === REFRESH_AS_OF, `last_updated ${stamp}`);
    t.is(m.value, stamp === BUILD_AS_OF ? oldCount : (newCount ?? -1), `X-Location-Count matches the snapshot the rows came from (${stamp})`);
  }
  t.is(mapsSeen.at(-1)!.stamps![0], REFRESH_AS_OF, 'location-map serves the new snapshot after the swap');

  // brand_summary: one row per directory brand of the new snapshot, stamped by this refresh.
  const check = openDatabase(dbPath);
  const rows = check.prepare('SELECT brand, ticker, location_count, snapshot_version, refreshed_at FROM brand_summary').all() as {
    brand: string;
    ticker: string | null;
    location_count: number;
    snapshot_version: string;
    refreshed_at: number | null;
  }[];
  check.close();
  t.is(rows.length, after.brands.size, 'a row per brand with storefronts');
  const mismatched = rows.filter((r) => {
    const b = after!.brands.get(r.brand);
    return !b || b.count !== r.location_count || b.ticker !== r.ticker || r.snapshot_version !== after!.version;
  });
  t.deepEqual(mismatched.slice(0, 5), [], `${mismatched.length} brand_summary rows disagree with the new snapshot`);
  const stamps = [...new Set(rows.map((r) => r.refreshed_at))];
  t.is(stamps.length, 1, 'one stamp for the whole refresh');
  const stampedAt = stamps[0]!;
  t.true(typeof stampedAt === 'number' && stampedAt >= refreshStart && stampedAt <= refreshEnd, `refreshed_at ${stampedAt} within the refresh [${refreshStart}, ${refreshEnd}]`);

  // The status endpoint (first asked now, so nothing cached) reports the refresh as fresh.
  const res = await request(srv.base, { method: 'GET', path: '/api/v1/status' });
  t.is(res.status, 200);
  const status = res.json<{ status: string; data: { brand_summary: { last_refreshed_at: string | null; stale: boolean | null }; snapshot_version: string } }>();
  t.not(status.data.brand_summary.last_refreshed_at, null);
  t.is(status.data.brand_summary.last_refreshed_at, new Date(stampedAt).toISOString());
  t.is(status.data.brand_summary.stale, false);
  t.true(Date.now() - stampedAt < 40 * DAY_MS);
  t.is(status.data.snapshot_version, after.version);
  t.is(status.status, 'ok');
  // The swapped-in snapshot brought its folder's change feed with it. A refresh of a synthetic
  // build is the same world later, so the history goes on from the build: the feed runs from
  // the build's time to the refresh's.
  t.is((status.data as { changes_since?: string | null }).changes_since, BUILD_AS_OF);
  const feed = await request(srv.base, { method: 'GET', path: `/api/v1/changes?brand=${encodeURIComponent(brand)}&since=${BUILD_AS_OF}`, headers: { 'x-api-key': key } });
  t.is(feed.status, 200, feed.text.slice(0, 300));
  t.like(feed.json<{ since: string; until: string }>(), { since: BUILD_AS_OF, until: REFRESH_AS_OF });

  // The brand summary endpoint answers from the new snapshot too.
  const sum = await request(srv.base, { method: 'GET', path: `/api/v1/brands/summary?brand=${encodeURIComponent(brand)}` });
  t.is(sum.status, 200);
  t.like(sum.json(), { brand, location_count: newCount, snapshot_version: after.version });
  t.true(srv.alive(), 'the server is still running');
});
