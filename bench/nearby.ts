// POST /api/v1/nearby's work: the 10 stores of a brand nearest a point, answered by the addon
// (an R-tree per brand over 3-D points on the sphere, built once, then the JSON body written
// in Rust), beside two JS peers over the same rows as JS objects: geokdbush (Vladimir
// Agafonkin's k-d tree nearest-neighbour search on the sphere, over kdbush) plus
// JSON.stringify of the rows it finds, and a brute-force haversine scan. Then the addon's p50
// and p95 per call, for one brand and for any brand, measured call by call.
//
//   node --import tsx bench/nearby.ts [--data-dir data/generated/bench/scale-1]
import { existsSync } from 'node:fs';
import path from 'node:path';
import Benchmark from 'benchmark';
import KDBush from 'kdbush';
import { around } from 'geokdbush';
import { loadStoreSync, nearbySync, querySync, SNAPSHOT_FILE, type Store } from '../ts/native.ts';
import { ROOT } from '../ts/paths.ts';
import { median, writeSection } from './results.ts';

const args = process.argv.slice(2);
const dataDir = args.includes('--data-dir') ? path.resolve(args[args.indexOf('--data-dir') + 1]) : path.join(ROOT, 'data', 'generated', 'bench', 'scale-1');
const snapshot = path.join(dataDir, SNAPSHOT_FILE);
if (!existsSync(snapshot)) throw new Error(`${snapshot} is missing: build it with STOREMAP_DATA_DIR=${dataDir} node bin/storemap.js data build --scale 1 --seed 1 --as-of 2026-11-01T00:00:00Z (or pass --data-dir)`);

const store: Store = loadStoreSync(snapshot);
const info = store.info() as { rows: number; scale: number | null };
const N = 10;
const brand = store.resolve('Starbucks') ?? store.resolve('SBUX');
if (!brand) throw new Error('no Starbucks in this snapshot');

interface Row {
  id: string;
  name: string;
  lat: number;
  lng: number;
  [k: string]: unknown;
}
const rows = (JSON.parse(querySync(store, { brands: [brand.brand], format: 'json', verifiedOnly: true }).body.toString()) as { locations: Row[] }).locations;
console.error(`${brand.name}: ${rows.length} verified rows; snapshot ${info.rows} rows, scale ${info.scale}`);

// Query points: near the brand's stores (within about 30 km), seeded.
let seed = 12345;
const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
const points = Array.from({ length: 2000 }, () => {
  const r = rows[Math.floor(rand() * rows.length)];
  return { lat: r.lat + (rand() - 0.5) * 0.5, lng: r.lng + (rand() - 0.5) * 0.5 };
});

const request = (p: { lat: number; lng: number }, brands: number[]) => ({ brands, lat: p.lat, lng: p.lng, limit: N, format: 'json' as const, brandLabel: brand.name });

// The first call builds the brand's tree (and the any-brand one): timed on their own.
let t0 = performance.now();
nearbySync(store, request(points[0], [brand.brand]));
const brandTreeMs = performance.now() - t0;
t0 = performance.now();
nearbySync(store, request(points[0], []));
const allTreeMs = performance.now() - t0;

// ---- the peers' data: the same rows as JS objects, a k-d tree over them.
const kd = new KDBush(rows.length);
for (const r of rows) kd.add(r.lng, r.lat);
kd.finish();

function haversine(lat1: number, lng1: number, lat2: number, lng2: number): number {
  const rad = Math.PI / 180;
  const a = Math.sin(((lat2 - lat1) * rad) / 2) ** 2 + Math.cos(lat1 * rad) * Math.cos(lat2 * rad) * Math.sin(((lng2 - lng1) * rad) / 2) ** 2;
  return 6_371_008.8 * 2 * Math.atan2(Math.sqrt(a), Math.sqrt(1 - a));
}

/** The brute force: every row's distance, the N smallest kept in a small sorted list. */
function scan(p: { lat: number; lng: number }): string {
  const best: { i: number; d: number }[] = [];
  for (let i = 0; i < rows.length; i++) {
    const d = haversine(p.lat, p.lng, rows[i].lat, rows[i].lng);
    if (best.length < N || d < best[best.length - 1].d) {
      best.push({ i, d });
      best.sort((a, b) => a.d - b.d);
      if (best.length > N) best.pop();
    }
  }
  return JSON.stringify({ locations: best.map((b) => ({ ...rows[b.i], distance_m: Math.round(b.d * 10) / 10 })) });
}

// Each does one query's whole work: search and a JSON body.
let k = 0;
const next = () => points[k++ % points.length];
const suite = new Benchmark.Suite();
const hz: Record<string, number> = {};
suite
  .add('storemap addon (R-tree, Rust JSON)', () => nearbySync(store, request(next(), [brand.brand])).body.length)
  .add('geokdbush + JSON.stringify', () => {
    const p = next();
    const ids = around(kd, p.lng, p.lat, N);
    return JSON.stringify({ locations: ids.map((i) => ({ ...rows[i], distance_m: Math.round(haversine(p.lat, p.lng, rows[i].lat, rows[i].lng) * 10) / 10 })) }).length;
  })
  .add('brute-force haversine scan + JSON.stringify', () => scan(next()).length)
  .on('cycle', (e: Benchmark.Event) => {
    const b = e.target as Benchmark.Target & { name: string; hz: number };
    hz[b.name] = b.hz;
    console.error(String(e.target));
  })
  .run({ async: false });

/** p50 and p95 of single calls, in ms. */
function timed(brands: number[]): { p50: number; p95: number } {
  const ms: number[] = [];
  for (let i = 0; i < points.length; i++) {
    const s = performance.now();
    nearbySync(store, request(points[i], brands));
    ms.push(performance.now() - s);
  }
  ms.sort((a, b) => a - b);
  return { p50: median(ms), p95: ms[Math.floor(ms.length * 0.95)] };
}
const one = timed([brand.brand]);
const any = timed([]);

const fmt = (x: number) => x.toFixed(3);
const rowsOf = Object.entries(hz).map(([name, v]) => `| ${name} | ${Math.round(v).toLocaleString('en-US')} | ${fmt(1000 / v)} |`);
writeSection(
  'nearby',
  `## POST /api/v1/nearby: the ${N} nearest stores

\`node --import tsx bench/nearby.ts\` — the scale-${info.scale} snapshot (${info.rows.toLocaleString('en-US')} rows), ${brand.name} (${rows.length.toLocaleString('en-US')} data rows), ${points.length} seeded points within about 30 km of its stores; each call returns the ${N} nearest as a JSON body.

| one query, search and JSON body (benchmark.js, same run) | calls/s | ms per call |
|---|---|---|
${rowsOf.join('\n')}

| the addon, call by call | p50 | p95 | target |
|---|---|---|---|
| ${brand.name}, N = ${N} | ${fmt(one.p50)} ms | ${fmt(one.p95)} ms | p50 ≤ 2 ms |
| any brand, N = ${N} | ${fmt(any.p50)} ms | ${fmt(any.p95)} ms | |

Each tree is built by the first request that needs it: ${brand.name}'s took ${brandTreeMs.toFixed(1)} ms, the any-brand tree over every data row ${allTreeMs.toFixed(0)} ms (once per snapshot). The HTTP step around it is location-map's (\`charged.ts\`), measured in the sections above.`,
);
console.error(`p50 ${fmt(one.p50)} ms (brand), ${fmt(any.p50)} ms (any brand)`);
