// Where a data query stops being small enough to run on the JS thread (`STOREMAP_INLINE_MAX_ROWS`,
// ts/config.ts). For brands of growing size, one JSON query of all their served rows:
// its time run synchronously (all of it on the JS thread), and on the native pool, as the
// JS thread's own time per call (event-loop utilization: the hand-off, the promise, the
// response object) and as the wall time of the round trip. Queries one at a time on an
// otherwise idle process, so each figure is the call's own.
//
//   node --import tsx bench/inline-query.ts [--data-dir DIR]
import { existsSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { DEFAULT_CONFIG } from '../ts/config.ts';
import { loadStoreSync, poolCount, query, querySync, SNAPSHOT_FILE, type QueryRequest, type Store } from '../ts/native.ts';
import { ROOT } from '../ts/paths.ts';
import { median, writeSection } from './results.ts';

const args = process.argv.slice(2);
const opt = (name: string): string | undefined => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const dataDir = path.resolve(opt('--data-dir') ?? path.join(ROOT, 'data', 'generated', 'bench', 'scale-0.1'));
const snapshot = path.join(dataDir, SNAPSHOT_FILE);
if (!existsSync(snapshot)) throw new Error(`${snapshot} is missing: build it with storemap data build --scale 0.1`);
const store: Store = loadStoreSync(snapshot);
const info = store.info() as { rows: number; brands: number };

// The brand nearest each size, by the rows a query scans.
const TARGETS = [250, 1000, 2500, 5000, 10000, 25000];
const sizes: { index: number; name: string; pool: number }[] = [];
for (let i = 0; i < info.brands; i++) {
  const b = store.brand(i);
  if (b) sizes.push({ index: i, name: b.name, pool: poolCount(store, i) });
}
const picked = TARGETS.map((t) => sizes.reduce((best, b) => (Math.abs(b.pool - t) < Math.abs(best.pool - t) ? b : best)));

const request = (b: { index: number; name: string }): QueryRequest => ({ brands: [b.index], format: 'json', verifiedOnly: true, brandLabel: b.name, timeBudgetMs: 10_000 });

const rows: string[] = [];
for (const b of picked) {
  const req = request(b);
  const served = querySync(store, req).count;
  // Enough calls for about half a second of each, at least 20.
  const once = performance.now();
  querySync(store, req);
  const n = Math.max(20, Math.min(2000, Math.round(500 / Math.max(0.01, performance.now() - once))));
  const sync: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    querySync(store, req);
    sync.push(performance.now() - t);
  }
  const wall: number[] = [];
  const elu0 = performance.eventLoopUtilization();
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await query(store, req);
    wall.push(performance.now() - t);
  }
  const elu = performance.eventLoopUtilization(elu0);
  const jsPerCall = elu.active / n;
  rows.push(`| ${b.name} | ${b.pool} | ${served} | ${median(sync).toFixed(3)} | ${jsPerCall.toFixed(3)} | ${median(wall).toFixed(3)} | ${b.pool <= DEFAULT_CONFIG.inlineMaxRows ? 'inline' : 'pool'} |`);
  console.log(rows[rows.length - 1]);
}

writeSection(
  'inline-query',
  `## A data query on the JS thread or on the native pool

\`node --import tsx bench/inline-query.ts\` — snapshot \`${path.relative(ROOT, dataDir)}\` of ${info.rows} rows. For the brand nearest each size (rows the query scans: its reconciled rows), one JSON query of every served row, called one at a time in an otherwise idle process: synchronously (\`querySync\`, all of it on the JS thread), and on the native pool (\`query\`), as the JS thread's own time per call (event-loop utilization: the hand-off, the promise, the response object) and as the round trip's wall time. location-map runs a data query inline when its brands' rows add up to at most ${DEFAULT_CONFIG.inlineMaxRows.toLocaleString('en')} (\`STOREMAP_INLINE_MAX_ROWS\`, ts/config.ts): there the whole query costs the JS thread about what the pool's hand-off alone costs it under load, and a longer one would hold other requests back.

| brand | rows scanned | rows served | inline, ms | pooled: JS thread, ms | pooled: round trip, ms | location-map runs it |
|---|---|---|---|---|---|---|
${rows.join('\n')}
`,
);
