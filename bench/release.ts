// The single executable (`npm run release`), as an operator meets it:
//  1. its size, by part (Node, the bundled service, each compressed asset group);
//  2. from an empty folder and an empty cache to the first answer (unpack, the default dataset
//     built at scale 0.1, the server up), and a restart on the same folder;
//  3. the request path against the checkout on the same Node 24: a charged JSON request and an
//     uncached PNG, autocannon, servers one at a time.
//
//   npm run release && STOREMAP_BENCH_SERVER_CPUS=1 taskset -c 0 node --import tsx bench/release.ts [--dist dist] [--stage target/release-stage]
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { openDatabase } from '../ts/db/database.ts';
import { SqliteLedger } from '../ts/db/sqlite-ledger.ts';
import { loadStoreSync, SNAPSHOT_FILE } from '../ts/native.ts';
import { API_VERSION, ROOT } from '../ts/paths.ts';
import type { Manifest } from '../ts/release/unpack.ts';
import { KeyStore } from '../ts/services/keys.ts';
import { cannon, freePort, waitFor } from './http-peers.ts';
import { pickBrandCountry } from './pick.ts';
import { writeSection } from './results.ts';

const { values: opts } = parseArgs({ options: { dist: { type: 'string' }, stage: { type: 'string' } } });
const dist = path.resolve(opts.dist ?? path.join(ROOT, 'dist'));
const stage = path.resolve(opts.stage ?? path.join(ROOT, 'target', 'release-stage'));
const exe = path.join(dist, `storemap-${API_VERSION}-linux-x64`);
const manifest = JSON.parse(readFileSync(path.join(stage, 'manifest.json'), 'utf8')) as Manifest;
const sizes = JSON.parse(readFileSync(path.join(stage, 'sizes.json'), 'utf8')) as { node: number; bundle: number; executable: number };
const MiB = (n: number) => (n / 2 ** 20).toFixed(1);

// ---- 1. size by part
const group = (p: string) =>
  p.startsWith('reference/') ? 'reference data (synthetic world)' : p === 'native/bin/storemap-ingest' ? 'pipeline binary' : p.endsWith('.node') && p.startsWith('native/') ? 'addon' : p.includes('better-sqlite3') ? 'better-sqlite3' : p.includes('dejavu') ? 'label font' : p.startsWith('data/') ? 'tables (data/)' : 'other';
const parts = new Map<string, { raw: number; packed: number }>();
manifest.files.forEach((f, i) => {
  const g = parts.get(group(f.path)) ?? { raw: 0, packed: 0 };
  g.raw += f.size;
  g.packed += statSync(path.join(stage, 'assets', `${i}.br`)).size;
  parts.set(group(f.path), g);
});
const sizeRows = [
  `| Node ${manifest.node} | ${MiB(sizes.node)} | ${MiB(sizes.node)} |`,
  `| the service, bundled (esbuild, minified) | ${MiB(sizes.bundle)} | ${MiB(sizes.bundle)} |`,
  ...[...parts].sort((a, b) => b[1].packed - a[1].packed).map(([name, g]) => `| ${name} | ${MiB(g.raw)} | ${MiB(g.packed)} |`),
  `| **the executable** | | **${MiB(sizes.executable)}** |`,
];

// ---- 2. first start and restart
const sandbox = mkdtempSync(path.join(os.tmpdir(), 'storemap-bench-release-'));
const home = path.join(sandbox, 'home');
const work = path.join(sandbox, 'work');
mkdirSync(home);
mkdirSync(work);
copyFileSync(exe, path.join(work, 'storemap'));
const exeEnv = { HOME: home, PATH: '/nonexistent', TMPDIR: sandbox, STOREMAP_RATE_LIMIT: '1000000', STOREMAP_RATE_BURST: '1000000' };

/** With STOREMAP_BENCH_SERVER_CPUS (say `1`), the server runs on those cores alone (taskset),
 * away from autocannon: on two cores the load generator otherwise takes turns with it. */
function serve(command: string[], env: Record<string, string>, port: number, cwd: string): ChildProcess {
  const cpus = process.env.STOREMAP_BENCH_SERVER_CPUS;
  const argv = [...(cpus ? ['/usr/bin/taskset', '-c', cpus] : []), ...command, 'serve'];
  return spawn(argv[0]!, argv.slice(1), { cwd, env: { ...env, PORT: String(port), HOST: '127.0.0.1' }, stdio: 'ignore' });
}
async function timedStart(command: string[], env: Record<string, string>, cwd: string): Promise<{ child: ChildProcess; port: number; ms: number }> {
  const port = await freePort();
  const t0 = performance.now();
  const child = serve(command, env, port, cwd);
  await waitFor(`http://127.0.0.1:${port}/healthz`);
  return { child, port, ms: performance.now() - t0 };
}
function stop(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}
const versionMs = (env: Record<string, string>) => {
  const t0 = performance.now();
  execFileSync(path.join(work, 'storemap'), ['--version'], { cwd: work, env, stdio: 'ignore' });
  return performance.now() - t0;
};
const unpackMs = versionMs(exeEnv);
const warmVersionMs = versionMs(exeEnv);
rmSync(path.join(home, '.cache'), { recursive: true, force: true });
const first = await timedStart([path.join(work, 'storemap')], exeEnv, work);
await stop(first.child, 'SIGKILL');
const restart = await timedStart([path.join(work, 'storemap')], exeEnv, work);
await stop(restart.child);

// ---- 3. the request path: the executable against the checkout, both on Node 24
const dataDir = path.join(work, 'storemap-data');
const store = loadStoreSync(path.join(dataDir, SNAPSHOT_FILE));
const target = pickBrandCountry(store, 128);
const db = openDatabase(path.join(dataDir, 'storemap.db'));
const key = (await new KeyStore(new SqliteLedger(db)).create({ plan: 'internal', name: 'bench' })).key;
db.close();
const node24 = execFileSync('bash', [path.join(ROOT, 'scripts', 'install-node.sh'), manifest.node.slice(1)], { encoding: 'utf8' }).trim();
const checkoutEnv = { ...process.env, STOREMAP_DATA_DIR: dataDir, STOREMAP_RATE_LIMIT: '1000000', STOREMAP_RATE_BURST: '1000000', STOREMAP_IMAGE_CACHE_BYTES: '0' } as Record<string, string>;
const bodies = {
  json: JSON.stringify({ brand: target.brand, country: target.country }),
  png: JSON.stringify({ brand: target.brand, country: target.country, format: 'png', width: 800, height: 600 }),
};
const rows: string[] = [];
const servers = [
  ['checkout, Node 24', [node24, path.join(ROOT, 'bin', 'storemap.js')], checkoutEnv],
  ['single executable', [path.join(work, 'storemap')], { ...exeEnv, STOREMAP_DATA_DIR: dataDir, STOREMAP_IMAGE_CACHE_BYTES: '0' }],
] as const;
// Three rounds in mirrored order (A B B A A B), so that a slower minute of the machine, or
// going first, does not fall on one of them only: run to run, a rate here moves by 15 %.
const sums = new Map<string, { json: number; png: number; n: number }>();
for (const [name, command, env] of [...servers, ...servers.slice().reverse(), ...servers]) {
  const s = await timedStart([...command], env as Record<string, string>, work);
  const cells: string[] = [];
  for (const kind of ['json', 'png'] as const) {
    const r = await cannon(`http://127.0.0.1:${s.port}/api/v1/location-map`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: bodies[kind],
      connections: kind === 'json' ? 20 : 8,
      duration: 8,
    });
    if (r.non2xx > 0) throw new Error(`${name} ${kind}: ${r.non2xx} answers were not 2xx`);
    cells.push(`${Math.round(r.requests.average)} req/s, p99 ${r.latency.p99} ms`);
    const sum = sums.get(name) ?? { json: 0, png: 0, n: 0 };
    sum[kind] += r.requests.average;
    sums.set(name, sum);
  }
  sums.get(name)!.n += 1;
  await stop(s.child);
  rows.push(`| ${name} | ${cells.join(' | ')} |`);
}
rmSync(sandbox, { recursive: true, force: true });
for (const [name, s] of sums) rows.push(`| **${name}, mean of ${s.n}** | **${Math.round(s.json / s.n)} req/s** | **${Math.round(s.png / s.n)} req/s** |`);

writeSection(
  'release',
  `## The single executable

\`npm run release && STOREMAP_BENCH_SERVER_CPUS=1 taskset -c 0 node --import tsx bench/release.ts\` (dist/storemap-${API_VERSION}-linux-x64, ${os.cpus().length} cores).

Size by part (assets brotli-compressed, quality 6: quality 9 saves 2 MiB more and takes 90 s instead of about 10):

| part | unpacked MiB | in the file MiB |
| --- | ---: | ---: |
${sizeRows.join('\n')}

Target: at most 200 MB.

| start | seconds | target |
| --- | ---: | ---: |
| \`--version\` on an empty cache (unpack and check every file) | ${(unpackMs / 1000).toFixed(2)} | |
| \`--version\` on a warm cache (check every file) | ${(warmVersionMs / 1000).toFixed(2)} | |
| empty folder, empty cache → first answer (unpack, default dataset at scale 0.1 built, listening) | ${(first.ms / 1000).toFixed(1)} | ≤ 120 |
| restart after kill -9 → first answer | ${(restart.ms / 1000).toFixed(2)} | ≤ 5 |

The request path (${target.brand} in ${target.country}, ${target.count} rows; image cache off; three rounds in mirrored order (run to run, a rate moves by about 15 % on this machine);${process.env.STOREMAP_BENCH_SERVER_CPUS ? ` the server on core ${process.env.STOREMAP_BENCH_SERVER_CPUS} (taskset), autocannon on the other;` : ''} autocannon 8 s, JSON at 20 connections, an 800×600 PNG at 8):

| server | JSON location-map | PNG location-map |
| --- | --- | --- |
${rows.join('\n')}`,
);
console.log('bench/RESULTS.md: release section written');
