// 100 m de-duplication throughput: storemap's clustering (Rust, through the addon) beside
// reference implementations that share none of its code, on the same points:
//  - PostGIS ST_ClusterDBSCAN(eps := 100 m, minpoints := 1), when a PostgreSQL with PostGIS
//    can be reached (`--install-postgis` installs Debian's package and starts the cluster);
//  - a brute-force grid baseline in JavaScript: 100 m grid buckets, every pair in
//    neighbouring buckets compared, union-find (the same semantics as DBSCAN with minpoints 1).
// Ours and the grid baseline run in one benchmark.js suite; PostGIS in the same run.
//
//   node --import tsx bench/cluster.ts [--points 200000] [--install-postgis]
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Benchmark from 'benchmark';
import { testingAddon } from '../ts/native.ts';
import { median, writeSection } from './results.ts';

const native = testingAddon();

const args = process.argv.slice(2);
const N_TARGET = Number(args[args.indexOf('--points') + 1] || 200_000);

// ---- the points: one chain's stores across the Chicago metro area, 40% in dense downtowns
// but never two within 120 m (as in reality: closer than that, two storefronts of one chain are
// one), each seen by one to four sources with metre-level noise, as the pipeline sees them.
function rng(seed: number) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = rng(42);
const gauss = () => Math.sqrt(-2 * Math.log(Math.max(rand(), 1e-12))) * Math.cos(2 * Math.PI * rand());
const M_PER_DEG = 111_195;
const KX = M_PER_DEG * Math.cos((41.88 * Math.PI) / 180);
const downtowns = Array.from({ length: 12 }, () => [41.88 + (gauss() * 20_000) / M_PER_DEG, -87.63 + (gauss() * 20_000) / KX]);
const taken = new Map<string, [number, number][]>();
const lat: number[] = [];
const lng: number[] = [];
const source: number[] = [];
while (lat.length < N_TARGET) {
  const [cLat, cLng] = rand() < 0.4 ? downtowns[Math.floor(rand() * downtowns.length)] : [41.88, -87.63];
  const spread = cLat === 41.88 ? 40_000 : 2_500;
  const sLat = cLat + (gauss() * spread) / M_PER_DEG;
  const sLng = cLng + (gauss() * spread) / KX;
  const gx = Math.floor((sLng * KX) / 120);
  const gy = Math.floor((sLat * M_PER_DEG) / 120);
  let near = false;
  for (let dx = -1; dx <= 1 && !near; dx++)
    for (let dy = -1; dy <= 1 && !near; dy++)
      near = (taken.get(`${gx + dx},${gy + dy}`) ?? []).some(([a, b]) => Math.hypot((a - sLat) * M_PER_DEG, (b - sLng) * KX) < 120);
  if (near) continue;
  taken.set(`${gx},${gy}`, [...(taken.get(`${gx},${gy}`) ?? []), [sLat, sLng]]);
  for (let s = 0; s < 4; s++) {
    if (rand() < 0.55) {
      lat.push(sLat + (gauss() * 8) / M_PER_DEG);
      lng.push(sLng + (gauss() * 8) / KX);
      source.push(s);
    }
  }
}
const n = lat.length;
const latA = Float64Array.from(lat);
const lngA = Float64Array.from(lng);
const srcA = Uint8Array.from(source);

// ---- the grid baseline (no storemap code)
function gridCluster(): number {
  const parent = new Int32Array(n).map((_, i) => i);
  const find = (x: number): number => {
    while (parent[x] !== x) x = parent[x] = parent[parent[x]];
    return x;
  };
  const kx = M_PER_DEG * Math.cos((41.88 * Math.PI) / 180);
  const cell = new Map<number, number[]>();
  const cx = new Int32Array(n);
  const cy = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    cx[i] = Math.floor((lngA[i] * kx) / 100);
    cy[i] = Math.floor((latA[i] * M_PER_DEG) / 100);
    const key = cx[i] * 1_000_003 + cy[i];
    const b = cell.get(key);
    if (b) b.push(i);
    else cell.set(key, [i]);
  }
  const R = 6_371_008.8;
  for (let i = 0; i < n; i++) {
    for (let dx = -1; dx <= 1; dx++) {
      for (let dy = -1; dy <= 1; dy++) {
        const b = cell.get((cx[i] + dx) * 1_000_003 + cy[i] + dy);
        if (!b) continue;
        for (const j of b) {
          if (j <= i) continue;
          const p1 = (latA[i] * Math.PI) / 180;
          const p2 = (latA[j] * Math.PI) / 180;
          const a = Math.sin((p2 - p1) / 2) ** 2 + Math.cos(p1) * Math.cos(p2) * Math.sin((((lngA[j] - lngA[i]) * Math.PI) / 180) / 2) ** 2;
          if (2 * R * Math.asin(Math.sqrt(a)) <= 100) parent[find(i)] = find(j);
        }
      }
    }
  }
  let roots = 0;
  for (let i = 0; i < n; i++) if (find(i) === i) roots++;
  return roots;
}

const ours = () => new Set(native.clusterPoints(latA, lngA, srcA, 100)).size;

// ---- PostGIS, if reachable
function psql(sql: string): string {
  return execFileSync('su', ['postgres', '-c', `psql -X -q -t -A -d storemap_bench -c "${sql.replace(/"/g, '\\"')}"`], { encoding: 'utf8' }).trim();
}
function postgis(): { ms: number[]; clusters: number } | string {
  if (args.includes('--install-postgis')) {
    spawnSync('apt-get', ['install', '-y', '-qq', 'postgresql-15-postgis-3'], { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    spawnSync('pg_ctlcluster', ['15', 'main', 'start'], { stdio: 'inherit' });
  }
  const ok = spawnSync('su', ['postgres', '-c', 'psql -X -q -t -c "select 1"'], { encoding: 'utf8' });
  if (ok.status !== 0) return 'PostgreSQL not reachable (run with --install-postgis as root)';
  spawnSync('su', ['postgres', '-c', 'dropdb --if-exists storemap_bench && createdb storemap_bench'], { stdio: 'inherit' });
  try {
    psql('CREATE EXTENSION IF NOT EXISTS postgis');
  } catch {
    return 'PostGIS extension not installed (run with --install-postgis as root)';
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'storemap-bench-'));
  const csv = path.join(dir, 'points.csv');
  writeFileSync(csv, Array.from({ length: n }, (_, i) => `${lngA[i]},${latA[i]}`).join('\n'));
  spawnSync('chmod', ['-R', 'a+rX', dir]);
  psql('CREATE TABLE raw (lng float8, lat float8)');
  psql(`COPY raw FROM '${csv}' WITH (FORMAT csv)`);
  // Metres in UTM zone 16N (Chicago's); transformed once, outside the timing.
  psql('CREATE TABLE pts AS SELECT ST_Transform(ST_SetSRID(ST_MakePoint(lng, lat), 4326), 32616) AS g FROM raw');
  const ms: number[] = [];
  let clusters = 0;
  for (let k = 0; k < 3; k++) {
    const t = process.hrtime.bigint();
    clusters = Number(psql('SELECT count(DISTINCT c) FROM (SELECT ST_ClusterDBSCAN(g, eps := 100, minpoints := 1) OVER () AS c FROM pts) s'));
    ms.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  rmSync(dir, { recursive: true, force: true });
  spawnSync('su', ['postgres', '-c', 'dropdb --if-exists storemap_bench']);
  return { ms, clusters };
}

console.log(`${n} points`);
const rows: string[] = [];
const suite = new Benchmark.Suite();
let oursHz = 0;
let gridHz = 0;
suite
  .add('storemap anchor clustering (Rust via the addon)', () => ours(), { minSamples: 5 })
  .add('grid + union-find baseline (JavaScript)', () => gridCluster(), { minSamples: 5 })
  .on('cycle', (e: Benchmark.Event) => {
    const b = e.target as unknown as Benchmark;
    const ms = 1000 / (b.hz ?? 1);
    console.log(String(b));
    if (b.name?.startsWith('storemap')) oursHz = b.hz ?? 0;
    else gridHz = b.hz ?? 0;
    rows.push(`| ${b.name} | ${ms.toFixed(1)} ms ±${b.stats.rme.toFixed(1)}% | ${((n * (b.hz ?? 0)) / 1e6).toFixed(2)} M points/s |`);
  })
  .run({ async: false });

const pg = postgis();
let pgLine: string;
let pgRatio = '';
if (typeof pg === 'string') {
  pgLine = `| PostGIS ST_ClusterDBSCAN | not measured: ${pg} | |`;
} else {
  const m = median(pg.ms);
  pgLine = `| PostGIS 3 ST_ClusterDBSCAN(eps 100 m, minpoints 1), psql round trip | ${m.toFixed(0)} ms (median of ${pg.ms.length}) | ${(n / m / 1000).toFixed(2)} M points/s |`;
  pgRatio = `- storemap is **${((m / 1000) * oursHz).toFixed(1)}×** PostGIS ST_ClusterDBSCAN (${pg.clusters} DBSCAN clusters vs ${ours()} anchor clusters: DBSCAN chains points transitively, ours does not).`;
  console.log(`PostGIS: ${pg.ms.map((x) => x.toFixed(0)).join(', ')} ms`);
}
writeSection(
  'cluster',
  `## 100 m clustering throughput

\`node --import tsx bench/cluster.ts --points ${N_TARGET}${args.includes('--install-postgis') ? ' --install-postgis' : ''}\` — ${n} points: one chain's stores over the Chicago metro area (40% in twelve dense downtowns, never two within 120 m), each seen by 1–4 sources with 8 m noise.

| implementation | time per run | throughput |
|---|---|---|
${rows.join('\n')}
${pgLine}

- storemap is **${(oursHz / gridHz).toFixed(1)}×** the brute-force grid baseline.
${pgRatio}`,
);
