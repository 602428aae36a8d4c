// The data pipeline at full size: build time and peak memory (generate + import + reconcile +
// snapshot), the dataset's figures with de-duplication scored against the ground truth, and
// the snapshot's load time and resident size in a fresh process.
//
//   node --import tsx bench/pipeline.ts [--scales 0.1,1]
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { prepareReference } from '../ts/data/reference.ts';
import { INGEST_BIN, ROOT, TABLES_DIR } from '../ts/paths.ts';
import { median, writeSection } from './results.ts';
import { SNAPSHOT_FILE } from '../ts/native.ts';

const args = process.argv.slice(2);
const scales = (args[args.indexOf('--scales') + 1] && args.includes('--scales') ? args[args.indexOf('--scales') + 1] : '0.1,1').split(',').map(Number);
const base = path.join(ROOT, 'data', 'generated', 'bench');
const reference = path.join(base, 'reference');
mkdirSync(base, { recursive: true });
await prepareReference(reference);

interface Build {
  wallS: number;
  maxRssGiB: number;
  phases: Record<string, number>;
  rows: number;
}

function build(scale: number, dir: string): Build {
  // GNU time reports the peak resident set of the whole build.
  const r = spawnSync(
    '/usr/bin/time',
    ['-v', INGEST_BIN, 'build', '--data-dir', dir, '--reference', reference, '--tables', TABLES_DIR, '--scale', String(scale), '--seed', '1', '--as-of', '2026-11-01T00:00:00Z'],
    { encoding: 'utf8', maxBuffer: 1 << 26 },
  );
  if (r.status !== 0) throw new Error(`build failed: ${r.stderr}`);
  const field = (name: string) => r.stderr.split('\n').find((l) => l.includes(name))?.split(/:\s+/).pop() ?? '';
  const wall = field('Elapsed (wall clock) time').split(':').map(Number);
  const wallS = wall.reduce((acc, x) => acc * 60 + x, 0);
  const summary = JSON.parse(r.stdout) as { seconds: Record<string, number>; rows: number };
  return { wallS, maxRssGiB: Number(field('Maximum resident set size')) / 2 ** 20, phases: summary.seconds, rows: summary.rows };
}

/** Loads the snapshot in a fresh Node process: milliseconds and resident growth. */
function load(snapshot: string): { ms: number; rssGiB: number } {
  const script = `
    const n = require(${JSON.stringify(path.join(ROOT, 'native', 'index.js'))});
    const before = process.memoryUsage().rss;
    const t = process.hrtime.bigint();
    const s = n.loadStoreSync(${JSON.stringify(snapshot)});
    const ms = Number(process.hrtime.bigint() - t) / 1e6;
    console.log(JSON.stringify({ ms, rss: process.memoryUsage().rss - before, rows: s.info().rows }));`;
  const out = JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' })) as { ms: number; rss: number };
  return { ms: out.ms, rssGiB: out.rss / 2 ** 30 };
}

const sections: string[] = [];
for (const scale of scales) {
  const dir = path.join(base, `scale-${scale}`);
  // A fresh build into an empty directory, then the same build again over it: a refresh,
  // which also reads the previous snapshot to keep its stores' ids and records the history.
  rmSync(dir, { recursive: true, force: true });
  console.log(`scale ${scale}: building into ${dir}`);
  const b = build(scale, dir);
  console.log(`scale ${scale}: rebuilding over the previous snapshot`);
  const refresh = build(scale, dir);
  const report = JSON.parse(execFileSync(INGEST_BIN, ['report', '--data-dir', dir], { encoding: 'utf8' })) as Record<string, unknown> & {
    dedup: { precision: number; recall: number } | null;
  };
  const snapshot = path.join(dir, SNAPSHOT_FILE);
  const loads = [1, 2, 3].map(() => load(snapshot));
  const loadMs = median(loads.map((l) => l.ms));
  const rss = median(loads.map((l) => l.rssGiB));
  console.log({ scale, ...b, refresh, loadMs, rss, report });
  const phases = Object.entries(b.phases)
    .map(([k, v]) => `${k} ${v.toFixed(1)} s`)
    .join(', ');
  sections.push(`### Scale ${scale}

| measure | value | target |
|---|---|---|
| build wall time (generate + import + reconcile + snapshot) | ${b.wallS.toFixed(1)} s | ${scale >= 1 ? '≤ 300 s' : scale >= 0.1 ? '≤ 30 s' : '—'} |
| build peak RSS | ${b.maxRssGiB.toFixed(2)} GiB | ${scale >= 1 ? '≤ 8 GiB' : '—'} |
| refresh over the previous snapshot: wall time, peak RSS | ${refresh.wallS.toFixed(1)} s, ${refresh.maxRssGiB.toFixed(2)} GiB | ${scale >= 1 ? '≤ 300 s, ≤ 8 GiB' : '—'} |
| snapshot file | ${(statSync(snapshot).size / 2 ** 20).toFixed(0)} MiB | |
| snapshot load (median of 3 fresh processes) | ${loadMs.toFixed(0)} ms | ${scale >= 1 ? '≤ 2000 ms' : '—'} |
| resident growth after load | ${rss.toFixed(2)} GiB | ${scale >= 1 ? '≤ 1.5 GiB' : '—'} |
| de-duplication precision (pairwise, vs ground truth) | ${report.dedup?.precision.toFixed(4)} | ≥ 0.995 |
| de-duplication recall | ${report.dedup?.recall.toFixed(4)} | ≥ 0.99 |
| pool points | ${report.pool_points} | ≈ ${Math.round(6_900_000 * scale)} |
| verified rows (confidence ≥ 0.6, not community-only) | ${report.verified_rows} | ≈ ${Math.round(2_000_000 * scale)} |
| brands with verified rows | ${report.brands_with_verified_rows} | ≈ 6,600 at scale 1 |
| countries | ${report.countries} | ≥ 240 at scale 1 |
| tickers | ${report.tickers} | 145 |

Phases: ${phases}.`);
}
writeSection(
  'pipeline',
  `## Data pipeline

\`node --import tsx bench/pipeline.ts --scales ${scales.join(',')}\` (runs \`native/bin/storemap-ingest build --seed 1 --as-of 2026-11-01T00:00:00Z\` under GNU time, into an empty directory and then again over that build; phases are the first build's, the dataset figures the second's).

${sections.join('\n\n')}`,
);
