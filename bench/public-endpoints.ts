// The free endpoints' speed over the scale-1 snapshot: the brand directory with a filter,
// autocomplete as someone types, and a usage report over a year of 100K usage rows. The real
// server runs in this process on 127.0.0.1; times are request round trips on loopback
// (an upper bound on the server side), and the handlers' own time is measured beside them.
//
//   node --import tsx bench/public-endpoints.ts [--data-dir data/generated/bench/scale-1]
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../ts/config.ts';
import { openDatabase } from '../ts/db/database.ts';
import { loadStoreSync, SNAPSHOT_FILE } from '../ts/native.ts';
import { ROOT } from '../ts/paths.ts';
import { createServer, listen } from '../ts/server.ts';
import { directoryOf } from '../ts/services/directory.ts';
import { KeyStore } from '../ts/services/keys.ts';
import { UsageReports } from '../ts/services/usage.ts';
import { SqliteLedger } from '../ts/db/sqlite-ledger.ts';
import { DAY_MS } from '../ts/time.ts';
import { StoreHolder } from '../ts/store-holder.ts';
import { median, writeSection } from './results.ts';

const args = process.argv.slice(2);
const dataDir = args.includes('--data-dir') ? path.resolve(args[args.indexOf('--data-dir') + 1]) : path.join(ROOT, 'data', 'generated', 'bench', 'scale-1');
const snapshot = path.join(dataDir, SNAPSHOT_FILE);
if (!existsSync(snapshot)) throw new Error(`${snapshot} is missing: run bench/pipeline.ts first (or pass --data-dir)`);

const tmp = mkdtempSync(path.join(os.tmpdir(), 'storemap-bench-public-'));
const db = openDatabase(path.join(tmp, 'bench.db'));
const store = new StoreHolder(loadStoreSync(snapshot));
const config = loadConfig({ ...process.env, STOREMAP_DATA_DIR: dataDir, STOREMAP_DB: path.join(tmp, 'bench.db'), STOREMAP_RATE_LIMIT: '1000000', STOREMAP_RATE_BURST: '1000000', STOREMAP_FREE_RATE_LIMIT: '1000000', STOREMAP_FREE_RATE_BURST: '1000000' });
const server = createServer({ config, store, db, log: () => {} });
const base = await listen(server, '127.0.0.1', 0);

async function timeGets(urls: string[], headers: Record<string, string> = {}): Promise<{ p50: number; p99: number; n: number }> {
  const ms: number[] = [];
  for (const url of urls) {
    const t = performance.now();
    const res = await fetch(base + url, { headers });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${url}: ${res.status}`);
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  return { p50: median(ms), p99: ms[Math.floor(ms.length * 0.99)], n: ms.length };
}

function timeCalls(n: number, fn: (i: number) => unknown): number {
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    fn(i);
    ms.push(performance.now() - t);
  }
  return median(ms);
}

// ---- the directory: built once per snapshot (timed on its own), then filtered per request.
const t0 = performance.now();
const directory = directoryOf(store.current);
const buildMs = performance.now() - t0;
const entries = directory.byCount.length;
const filters = ['mc', 'burger', 'a', 'e', 'bank', 'star', 'shell', 'pharm', 'zzz', 'café', 'mart', 'pizza'];
const brandUrls = Array.from({ length: 600 }, (_, i) => `/api/v1/brands?q=${encodeURIComponent(filters[i % filters.length])}&limit=50&sort=${i % 2 ? 'name' : 'count'}`);
await timeGets(brandUrls.slice(0, 50)); // warm-up
const brands = await timeGets(brandUrls);
const brandsHandler = timeCalls(600, (i) => directory.page(filters[i % filters.length], i % 2 ? 'name' : 'count', 50, 0));

// ---- autocomplete: every prefix of some brand names and tickers, as typed.
const typed = ['Starbucks', 'McDonald', 'Seven', 'Walgreens', 'Carrefour', 'Burger King', 'Subway', 'MCD', 'SBUX', 'WMT'];
const prefixes = typed.flatMap((w) => Array.from({ length: w.length }, (_, i) => w.slice(0, i + 1)));
const searchUrls = Array.from({ length: 600 }, (_, i) => `/api/v1/brands/search?q=${encodeURIComponent(prefixes[i % prefixes.length])}`);
const searchOk = searchUrls.filter((u) => !/q=[A-Z]{1,5}$/.test(u) || directory.search(decodeURIComponent(u.split('q=')[1]), 10).length > 0);
await timeGets(searchOk.slice(0, 50));
const search = await timeGets(searchOk);
const searchHandler = timeCalls(600, (i) => directory.search(prefixes[i % prefixes.length], 10));

// ---- usage: 100K rows over 366 days for one key (and as many for another, which the report
// must skip), then the year's report.
const keys = new KeyStore(new SqliteLedger(db));
const key = await keys.create({ plan: 'enterprise', credits: 1_000_000, name: 'bench' });
const other = await keys.create({ plan: 'enterprise', credits: 1_000_000, name: 'other' });
const now = Date.now();
const insert = db.prepare('INSERT INTO usage (key_id, at, endpoint, status, format, credits) VALUES (?, ?, ?, ?, ?, ?)');
const statuses = [200, 200, 200, 200, 200, 200, 404, 402, 400, 429, null];
const formats = ['json', 'png', 'csv', 'jpeg', 'geojson', null];
db.transaction(() => {
  for (let i = 0; i < 100_000; i++) {
    const at = now - Math.floor((i / 100_000) * 365.9 * DAY_MS);
    for (const k of [key.record.id, other.record.id]) insert.run(k, at, '/api/v1/location-map', statuses[i % statuses.length], formats[i % formats.length], 1 + (i % 8));
  }
})();
const from = new Date(now - 366 * DAY_MS + 60_000).toISOString();
const usageUrl = `/api/v1/usage?from=${encodeURIComponent(from)}&to=${encodeURIComponent(new Date(now).toISOString())}`;
const auth = { 'x-api-key': key.key };
await timeGets([usageUrl, usageUrl], auth);
const usage = await timeGets(Array(30).fill(usageUrl), auth);
const reports = new UsageReports(new SqliteLedger(db));
const usageTimes: number[] = [];
for (let i = 0; i < 30; i++) {
  const t = performance.now();
  await reports.report(key.record.id, Date.parse(from), now);
  usageTimes.push(performance.now() - t);
}
const usageHandler = median(usageTimes);
const sample = (await (await fetch(base + usageUrl, { headers: auth })).json()) as { summary: { total_requests: number } };
if (sample.summary.total_requests !== 100_000) throw new Error(`usage counted ${sample.summary.total_requests} rows, not 100000`);

server.close();
db.close();
rmSync(tmp, { recursive: true, force: true });

const mark = (v: number, target: number) => (v <= target ? '✓' : '✗');
writeSection(
  'public-endpoints',
  `## Free endpoints: directory, autocomplete, usage

\`node --import tsx bench/public-endpoints.ts --data-dir ${path.relative(ROOT, dataDir)}\` — the real server in-process on 127.0.0.1; round trips over loopback (sequential), and the handler's work alone.

| request | round-trip p50 | round-trip p99 | handler p50 | target (server side) |
|---|---|---|---|---|
| \`GET /api/v1/brands?q=…\` (${entries} brands; 12 filters, both sorts; ${brands.n} requests) | ${brands.p50.toFixed(2)} ms | ${brands.p99.toFixed(2)} ms | ${brandsHandler.toFixed(3)} ms | ≤ 2 ms ${mark(brands.p50, 2)} |
| \`GET /api/v1/brands/search?q=…\` (every prefix of 10 names and tickers as typed; ${search.n} requests) | ${search.p50.toFixed(2)} ms | ${search.p99.toFixed(2)} ms | ${searchHandler.toFixed(3)} ms | ≤ 2 ms ${mark(search.p50, 2)} |
| \`GET /api/v1/usage\` over 366 days, 100K rows for the key (plus 100K of another key) | ${usage.p50.toFixed(1)} ms | ${usage.p99.toFixed(1)} ms | ${usageHandler.toFixed(1)} ms | ≤ 50 ms ${mark(usage.p50, 50)} |

The directory is built once per snapshot, on its first use: ${buildMs.toFixed(0)} ms for this one.`,
);
console.log(`brands p50 ${brands.p50.toFixed(2)} ms, search p50 ${search.p50.toFixed(2)} ms, usage p50 ${usage.p50.toFixed(1)} ms`);
process.exit(0);
