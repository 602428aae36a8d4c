// coverage_confidence against the synthetic world's ground truth: `storemap data report` scores
// what a JSON request for one brand in one country is told (the estimated share of the
// storefronts it holds) against what it truly holds (its verified rows over the generator's
// open stores there), for the 500 brands with the most true stores in each of their countries.
//
//   node --import tsx bench/coverage.ts [--data-dir data/generated/bench/scale-0.1]
// The dataset is built first when missing (scale 0.1, seed 1, as the other benchmarks use).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { datasetReport } from '../ts/data/ingest.ts';
import { SNAPSHOT_FILE } from '../ts/native.ts';
import { ROOT } from '../ts/paths.ts';
import { writeSection } from './results.ts';

interface Bin {
  from: number;
  to: number;
  pairs: number;
  mean_predicted: number;
  mean_observed: number;
}
interface Score {
  pairs: number;
  not_estimated: number;
  spearman: number;
  mean_absolute_error: number;
  bias: number;
  calibration: Bin[];
}

const args = process.argv.slice(2);
const dataDir = args.includes('--data-dir') ? path.resolve(args[args.indexOf('--data-dir') + 1]) : path.join(ROOT, 'data', 'generated', 'bench', 'scale-0.1');
const build = ['bin/storemap.js', 'data', 'build', '--scale', '0.1', '--seed', '1', '--as-of', '2026-11-01T00:00:00Z'];
if (!existsSync(path.join(dataDir, SNAPSHOT_FILE))) {
  const r = spawnSync(process.execPath, build, { cwd: ROOT, stdio: 'inherit', env: { ...process.env, STOREMAP_DATA_DIR: dataDir } });
  if (r.status !== 0) throw new Error('the dataset build failed');
}
const report = (await datasetReport(dataDir)) as { coverage?: Score; snapshot_version: string; scale?: number };
const s = report.coverage;
if (!s) throw new Error(`${dataDir} has no ground truth (sources/truth-brands.csv): coverage can only be scored on a synthetic world`);

const f = (x: number, d = 3) => x.toFixed(d);
const verdict = (ok: boolean) => (ok ? 'met' : '**missed**');
const lines = [
  '## coverage_confidence against the ground truth',
  '',
  `\`node --import tsx bench/coverage.ts\` — \`storemap data report\` on \`${path.relative(ROOT, dataDir)}\` (snapshot ${report.snapshot_version}; built by \`STOREMAP_DATA_DIR=${path.relative(ROOT, dataDir)} node ${build.join(' ')}\` when missing). For the 500 brands with the most true open stores, in each country they have open stores in: the coverage_confidence a JSON request with that country filter gets, against the true recall (verified rows over the generator's open stores there, capped at 1).`,
  '',
  '| measure | value | target |',
  '|---|---|---|',
  `| brand × country pairs scored | ${s.pairs} | |`,
  `| pairs answered null (under 5 storefronts, or one source) | ${s.not_estimated} | |`,
  `| Spearman rank correlation, predicted vs true recall | ${f(s.spearman)} | ≥ 0.8: ${verdict(s.spearman >= 0.8)} |`,
  `| mean absolute error | ${f(s.mean_absolute_error)} | ≤ 0.08: ${verdict(s.mean_absolute_error <= 0.08)} |`,
  `| bias (mean predicted − mean true) | ${f(s.bias)} | |`,
  '',
  'Calibration, by predicted decile:',
  '',
  '| predicted | pairs | mean predicted | mean true recall |',
  '|---|---|---|---|',
  ...s.calibration.map((b) => `| ${f(b.from, 1)}–${f(b.to, 1)} | ${b.pairs} | ${b.pairs ? f(b.mean_predicted) : '—'} | ${b.pairs ? f(b.mean_observed) : '—'} |`),
];
writeSection('coverage', lines.join('\n'));
console.log(lines.join('\n'));
