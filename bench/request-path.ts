// The keyed request path, end to end, and what a flood from one key does to another key.
//  1. A ~145-row json location-map request to `storemap serve` beside bare node:http returning
//     the same precomputed body (autocannon, 20 connections, 10 s each, one process each).
//  2. Where the server's main thread spends its time on that load: a V8 CPU profile of the
//     server (--cpu-prof), its samples summed by the package or module that was running.
//  3. Fair share: one key floods with 32 connections of uncached map renders while another
//     key sends small json requests one after another; the second key's p50/p99 latency and
//     refusals: as served (the small query on the JS thread), and with every query on the
//     native pool (STOREMAP_INLINE_MAX_ROWS=0) with the pool's fair share on
//     (STOREMAP_NATIVE_KEY_SHARE=0.5) and off (1). The flood runs in a process of its own.
//
//   node --import tsx bench/request-path.ts [--data-dir data/generated/bench/scale-0.1]
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../ts/db/database.ts';
import { loadStoreSync, poolCount, querySync, SNAPSHOT_FILE } from '../ts/native.ts';
import { ROOT } from '../ts/paths.ts';
import { KeyStore } from '../ts/services/keys.ts';
import { cannon, cannonApart, freePort, startBare, startStoremap, stop } from './http-peers.ts';
import { writeSection } from './results.ts';
import { SqliteLedger } from '../ts/db/sqlite-ledger.ts';
import { pickBrandCountry } from './pick.ts';
import { DEFAULT_CONFIG } from '../ts/config.ts';

const args = process.argv.slice(2);
const dataDir = args.includes('--data-dir') ? path.resolve(args[args.indexOf('--data-dir') + 1]) : path.join(ROOT, 'data', 'generated', 'bench', 'scale-0.1');
const snapshot = path.join(dataDir, SNAPSHOT_FILE);
if (!existsSync(snapshot)) throw new Error(`${snapshot} is missing: build it with  STOREMAP_DATA_DIR=${dataDir} node bin/storemap.js data build --scale 0.1 --seed 1`);
const store = loadStoreSync(snapshot);
const info = store.info() as { rows: number; brands: number; scale: number | null };


const tmp = mkdtempSync(path.join(os.tmpdir(), 'storemap-bench-path-'));
const dbPath = path.join(tmp, 'bench.db');
const db = openDatabase(dbPath);
const keys = new KeyStore(new SqliteLedger(db));
const key = (await keys.create({ plan: 'internal', name: 'bench' })).key;
const flooder = (await keys.create({ plan: 'internal', name: 'flood' })).key;
db.close();
const target = pickBrandCountry(store, 145);
const body = JSON.stringify({ brand: target.brand, country: target.country });
const precomputed = querySync(store, { brands: [store.resolve(target.brand)!.brand], format: 'json', verifiedOnly: true, country: target.country }).body;
const env = { STOREMAP_DATA_DIR: dataDir, STOREMAP_DB: dbPath };
const post = { method: 'POST' as const, headers: { 'content-type': 'application/json', 'x-api-key': key }, body };

// ---- 1. storemap beside bare node:http
const [p1, p2] = [await freePort(), await freePort()];
const ours = await startStoremap(p1, env);
const bare = await startBare(p2, precomputed);
const oursRun = await cannon(`http://127.0.0.1:${p1}/api/v1/location-map`, post);
const bareRun = await cannon(`http://127.0.0.1:${p2}/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
await stop(ours);
await stop(bare);

// ---- 2. where the time goes: a CPU profile of the server under the same load
const profDir = path.join(tmp, 'prof');
const p3 = await freePort();
const profiled = await startStoremap(p3, env, ['--cpu-prof', `--cpu-prof-dir=${profDir}`]);
await cannon(`http://127.0.0.1:${p3}/api/v1/location-map`, post);
await stop(profiled);

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
/** `storemap serve` runs ts/ as one esbuild bundle (bin/storemap.js), which marks where each
 * module's code starts with a `// ts/…` line: a frame in it belongs to the module above it. */
const BUNDLE = path.join(ROOT, 'node_modules', '.cache', 'storemap', 'cli.mjs');
const moduleStarts: [number, string][] = existsSync(BUNDLE)
  ? readFileSync(BUNDLE, 'utf8')
      .split('\n')
      .flatMap((line, i): [number, string][] => {
        const m = /^\/\/ (ts\/\S+\.ts)$/.exec(line);
        return m ? [[i, m[1]]] : [];
      })
  : [];
function bundledModule(line: number): string | undefined {
  let found: string | undefined;
  for (const [start, name] of moduleStarts) {
    if (start > line) break;
    found = name;
  }
  return found;
}
/** The bucket of a frame: a package, one of our modules, or V8's own states. */
function bucket(url: string, fn: string, line: number): string | undefined {
  if (fn === '(idle)' || fn === '(garbage collector)' || fn === '(program)') return fn;
  if (url.endsWith('/.cache/storemap/cli.mjs')) return bundledModule(line) ?? 'ts (bundle)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1] === 'better-sqlite3-napi' ? 'better-sqlite3' : pkg[1];
  const ours = /\/(ts\/[^?]+)/.exec(url);
  if (ours) return ours[1];
  if (url.startsWith('node:')) return `node (${url.slice(5).split('/')[0]})`;
  return undefined;
}
const file = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'))!;
const profile = JSON.parse(readFileSync(path.join(profDir, file), 'utf8')) as { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
/** A sample's bucket: its own frame's, else (native code, builtins) the nearest caller's. */
function sampleBucket(id: number): string {
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const n = byId.get(at)!;
    const b = bucket(n.callFrame.url, n.callFrame.functionName, n.callFrame.lineNumber);
    if (b) return b;
  }
  return 'other';
}
const totals = new Map<string, number>();
let all = 0;
profile.samples.forEach((id, i) => {
  const dt = profile.timeDeltas[i] ?? 0;
  all += dt;
  totals.set(sampleBucket(id), (totals.get(sampleBucket(id)) ?? 0) + dt);
});
const topBuckets = [...totals].sort((a, b) => b[1] - a[1]).slice(0, 12);
const profileRows = topBuckets.map(([name, us]) => `| ${name} | ${((us / all) * 100).toFixed(1)}% |`);

// ---- 3. a flood from one key, another key's latency
const heavy = pickBrandCountry(store, 3000);
const flood = { brand: heavy.brand, country: heavy.country, format: 'png', width: 1200, height: 800 };
async function floodRun(share: string, inlineMaxRows?: string): Promise<{ p50: number; p99: number; refused: number; n: number; floodRps: number }> {
  const port = await freePort();
  const server = await startStoremap(port, { ...env, STOREMAP_NATIVE_KEY_SHARE: share, STOREMAP_IMAGE_CACHE_BYTES: '0', ...(inlineMaxRows === undefined ? {} : { STOREMAP_INLINE_MAX_ROWS: inlineMaxRows }) });
  const base = `http://127.0.0.1:${port}/api/v1/location-map`;
  // In a process of its own: the other key's requests are timed here, and reading 200 images a
  // second in this process's event loop would time that loop, not the server (it did: a p50 of
  // 155 ms here against 1-6 ms from curl under the same flood).
  const flooding = cannonApart(base, { connections: 32, duration: 10, method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': flooder }, body: JSON.stringify(flood) });
  await new Promise((r) => setTimeout(r, 1000)); // the flood fills the pool first
  const latencies: number[] = [];
  let refused = 0;
  const end = performance.now() + 8000;
  while (performance.now() < end) {
    const t0 = performance.now();
    const res = await fetch(base, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body });
    await res.arrayBuffer();
    if (res.status === 200) latencies.push(performance.now() - t0);
    else refused++;
  }
  const floodResult = await flooding;
  await stop(server);
  latencies.sort((a, b) => a - b);
  const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN;
  return { p50: q(0.5), p99: q(0.99), refused, n: latencies.length, floodRps: floodResult.requests.average };
}
const served = await floodRun('0.5');
const fair = await floodRun('0.5', '0');
const unfair = await floodRun('1', '0');
rmSync(tmp, { recursive: true, force: true });

const ratio = (oursRun.requests.average / bareRun.requests.average) * 100;
const floodRow = (name: string, r: Awaited<ReturnType<typeof floodRun>>) =>
  `| ${name} | ${r.n} | ${r.p50.toFixed(1)} ms | ${r.p99.toFixed(1)} ms | ${r.refused} | ${r.floodRps.toFixed(0)} |`;
writeSection(
  'request-path',
  `## The keyed request path, and a flood from one key

\`node --import tsx bench/request-path.ts --data-dir ${path.relative(ROOT, dataDir)}\` — snapshot of ${info.rows} rows (scale ${info.scale}).

### storemap beside bare node:http (autocannon, 20 connections, 10 s each)

A ${precomputed.length}-byte, ${target.count}-row json request (\`${body}\`), internal key: key check, rate limit, body, validation, plan, price, query (${poolCount(store, store.resolve(target.brand)!.brand) <= DEFAULT_CONFIG.inlineMaxRows ? `on the JS thread: ${target.brand} has ${poolCount(store, store.resolve(target.brand)!.brand)} reconciled rows, at most \`STOREMAP_INLINE_MAX_ROWS\`` : 'on the native pool'}), charge and usage row (SQLite, the charges of one event-loop turn in one transaction). The bare server is \`node:http\` returning the same precomputed body.

| server | requests/s | p50 | p99 | non-2xx |
|---|---|---|---|---|
| storemap | ${oursRun.requests.average.toFixed(0)} | ${oursRun.latency.p50} ms | ${oursRun.latency.p99} ms | ${oursRun.non2xx + oursRun.errors} |
| bare node:http | ${bareRun.requests.average.toFixed(0)} | ${bareRun.latency.p50} ms | ${bareRun.latency.p99} ms | ${bareRun.non2xx} |

storemap serves **${ratio.toFixed(0)}%** of the bare server's request rate.

### Where the server's main thread spends that time (V8 CPU profile, ${(all / 1e6).toFixed(1)} s sampled under the same load)

Samples summed by the package or module running; native code (SQLite, the addon's calls) counts to its JS caller.

| where | share |
|---|---|
${profileRows.join('\n')}

### A flood from one key (32 connections of uncached ${flood.width}x${flood.height} PNG maps of ${heavy.brand} in ${heavy.country}, ${heavy.count} markers) while another key sends the json request above, one at a time, for 8 s

| the other key's query | other key's answered requests | p50 | p99 | other key refused | flood requests/s |
|---|---|---|---|---|---|
${floodRow('as served: the json query on the JS thread, the flood on the pool with its fair share', served)}
${floodRow('every query on the pool (STOREMAP_INLINE_MAX_ROWS=0), fair share (one key holds at most half the slots and queue)', fair)}
${floodRow('every query on the pool, no fair share (STOREMAP_NATIVE_KEY_SHARE=1)', unfair)}

The flood runs in an autocannon process of its own, the other key's requests in the benchmark's: before 2026-11-27 both ran in one process, where reading some 200 flood images a second delayed every other answer's reading by as long as a flood request took (a p50 of 155 ms, while curl under the same flood was answered in 1-6 ms). With or without the share, the pool hands a freed slot to the next key in turn, so the other key's query starts at the next free slot; the share bounds how much of the slots and the queue one key may hold (past it, that key's requests get 503).`,
);
process.exit(0);
