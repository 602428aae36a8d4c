// How the synthetic build uses the cores (issue 33): the scale-0.1 build pinned to one core and
// to two (taskset), each phase's time and speed-up, and what the phases' measured parallel
// shares make of 16 cores by Amdahl's law (an expectation, not a measurement: the parallel
// steps deal brands to one thread per core, so the biggest brand bounds a step's time).
//
//   node --import tsx bench/cores.ts [--runs 3]
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { prepareReference } from '../ts/data/reference.ts';
import { INGEST_BIN, ROOT, TABLES_DIR } from '../ts/paths.ts';
import { median, writeSection } from './results.ts';

const args = process.argv.slice(2);
const RUNS = args.includes('--runs') ? Number(args[args.indexOf('--runs') + 1]) : 3;
const base = path.join(ROOT, 'data', 'generated', 'bench');
const reference = path.join(base, 'reference');
mkdirSync(base, { recursive: true });
await prepareReference(reference);
const dir = path.join(base, 'cores-build');

function build(cpus: string): { wall: number; phases: Record<string, number> } {
  rmSync(dir, { recursive: true, force: true });
  const t0 = performance.now();
  const r = spawnSync('taskset', ['-c', cpus, INGEST_BIN, 'build', '--data-dir', dir, '--reference', reference, '--tables', TABLES_DIR, '--scale', '0.1', '--seed', '1', '--as-of', '2026-11-01T00:00:00Z'], {
    encoding: 'utf8',
    maxBuffer: 1 << 26,
  });
  if (r.status !== 0) throw new Error(`build failed: ${r.stderr}`);
  return { wall: (performance.now() - t0) / 1000, phases: (JSON.parse(r.stdout) as { seconds: Record<string, number> }).seconds };
}

// Alternating, so that a slow spell of the machine falls on both.
const runs: Record<string, { wall: number; phases: Record<string, number> }[]> = { '0': [], '0,1': [] };
for (let i = 0; i < RUNS; i++) for (const cpus of Object.keys(runs)) runs[cpus].push(build(cpus));
rmSync(dir, { recursive: true, force: true });

const med = (cpus: string, phase?: string) => median(runs[cpus].map((r) => (phase ? (r.phases[phase] ?? 0) : r.wall)));
// A source's own import time beside the others' overlaps "import sources": left out of the table.
const phases = Object.keys(runs['0'][0].phases).filter((p) => med('0', p) >= 0.3 && !p.endsWith('(alongside the others)'));
/** The parallel share p from the two-core speed-up s: 1/s = (1 - p) + p/2. */
const share = (s: number) => Math.min(1, Math.max(0, 2 * (1 - 1 / s)));
const at = (p: number, n: number) => 1 / (1 - p + p / n);
const rows = phases.map((p) => {
  const [one, two] = [med('0', p), med('0,1', p)];
  const s = one / two;
  return `| ${p} | ${one.toFixed(1)} | ${two.toFixed(1)} | ${s.toFixed(2)}x | ${(share(s) * 100).toFixed(0)} % | ${at(share(s), 16).toFixed(1)}x |`;
});
const [w1, w2] = [med('0'), med('0,1')];
const pAll = share(w1 / w2);
console.error(`cores: 1 core ${w1.toFixed(1)} s, 2 cores ${w2.toFixed(1)} s (${(w1 / w2).toFixed(2)}x)`);

writeSection(
  'cores',
  `## The build on one core and on two (\`bench/cores.ts\`)

\`node --import tsx bench/cores.ts\`: \`storemap-ingest build --scale 0.1 --seed 1\` under \`taskset -c 0\` and \`taskset -c 0,1\`, ${RUNS} runs each,
alternating, medians. Phases under 0.3 s on one core are left out. The last two columns are Amdahl's law from the measured two-core
speed-up (parallel share p from 1/s = (1 − p) + p/2), an expectation for 16 cores, not a measurement.

| phase | 1 core, s | 2 cores, s | speed-up | parallel share | expected at 16 cores |
|---|---:|---:|---:|---:|---:|
${rows.join('\n')}
| **whole build** | **${w1.toFixed(1)}** | **${w2.toFixed(1)}** | **${(w1 / w2).toFixed(2)}x** | ${(pAll * 100).toFixed(0)} % | ${at(pAll, 16).toFixed(1)}x |

The parallel steps (generating each brand's world, matching rows to brands, reconciling each brand) deal brands to one thread per core,
each taking the next brand, and hand their results on in brand order as soon as they and those before them are done; the border index
(a quarter-degree grid, 0.4 s) is built beside the tables' loading. The four sources are imported at once, each on a thread of its
own and joined in a fixed order (the snapshot is the same byte for byte; \`crates/ingest/tests/world/determinism.rs\`); OpenStreetMap's
GeoJSON sequence is read in 1 MiB spans of whole lines and AllThePlaces' spider files one per task, parsed on every core while what is
already parsed is kept in file order on the calling thread. The thread that packs reconciled rows into the snapshot interns their
text by foldhash, the snapshot's bytes go to the file from a thread of their own, and a generation batch's brands are written as each
is rendered. History: before 2026-11-27 the imports ran one after another (the whole build 1.62x); in the morning of 2026-11-27 the
build took 36.5 s on one core and 19.7 s on two (1.86x), most of the parallel work being an R-tree's country lookups; with the grid
(afternoon) 13.3 and 8.4 s (1.57x), what stayed serial weighing more; the streaming imports, the faster interning and the write
thread (evening) took the serial parts down. What bounds the cores now: the writes of the generated files in rank order and the
rows' packing into the snapshot on one thread (each beside the parallel work, no longer between it), the snapshot's sort and string
relayout (one thread, about 0.3 s), and the biggest brands, each one thread's work.`,
);
