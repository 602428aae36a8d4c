// A node's resident memory (issue 29): where it goes, and what a serving node holds.
//  1. The breakdown: one process loads the parts in the order `serve` does (the runtime and the
//     service's modules, the snapshot, the renderer's atlas, the nearby index built by a first
//     nearby query, the overlap index by a first overlap) and reads its RSS after each, once
//     jemalloc's background thread has returned what loading freed (2 s).
//  2. `storemap serve` itself on the same data (with the Node flags `npm start` uses, then with
//     Node's defaults): RSS settled after start, after a first request
//     of each endpoint, and after 8 s of json and 8 s of png load (autocannon, loopback), and its
//     peak (VmHWM).
//
//   node --import tsx bench/memory.ts [--data-dir data/generated/bench/scale-0.1]
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { ROOT, serveNodeFlags } from '../ts/paths.ts';
import { SNAPSHOT_FILE } from '../ts/native.ts';
import { freePort, stop } from './http-peers.ts';
import { writeSection } from './results.ts';

const args = process.argv.slice(2);
const dataDir = args.includes('--data-dir') ? path.resolve(args[args.indexOf('--data-dir') + 1]) : path.join(ROOT, 'data', 'generated', 'bench', 'scale-0.1');
const SETTLE_MS = 2_000;
// The bench data folders share one reference folder beside them; a data folder may have its own.
const referenceDir = [path.join(path.dirname(dataDir), 'reference'), path.join(dataDir, 'reference')].find((d) => existsSync(path.join(d, 'countries.geojson')));
if (!referenceDir) throw new Error(`no countries.geojson beside or inside ${dataDir}`);
const mib = (kb: number) => Math.round(kb / 1024);

/** VmRSS and VmHWM of a process, in KiB. */
function rssOf(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rss: field('VmRSS'), hwm: field('VmHWM') };
}

// ---- 1. the breakdown, in a child that loads the parts one by one
const steps = `
import { loadRenderer, loadStoreSync, nearbySync, overlap } from ${JSON.stringify(path.join(ROOT, 'ts/native.ts'))};
import ${JSON.stringify(path.join(ROOT, 'ts/server.ts'))};
import { readFileSync } from 'node:fs';
const rss = () => Number(/VmRSS:\\s+(\\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1]);
const settle = () => new Promise((r) => setTimeout(r, ${SETTLE_MS}));
const out = [];
await settle(); out.push(['Node, the service modules (through tsx here; serve runs a bundle, about 28 MiB less) and the addon', rss()]);
const store = loadStoreSync(${JSON.stringify(path.join(dataDir, SNAPSHOT_FILE))});
await settle(); out.push(['the snapshot', rss()]);
const renderer = loadRenderer(${JSON.stringify(referenceDir)});
await renderer.healthCheck();
await settle(); out.push(["the renderer's atlas (shapes at nine levels of detail, labels, font)", rss()]);
nearbySync(store, { brands: [], lat: 40.75, lng: -73.99, limit: 10, format: 'json', brandLabel: 'any brand' });
await settle(); out.push(['the nearby index (built by the first nearby query)', rss()]);
const sb = store.resolve('Starbucks').brand, mc = store.resolve("McDonald's").brand;
await overlap(store, { brands: [sb, mc], distanceM: 500, format: 'json' });
await settle(); out.push(['the overlap index (built by the first overlap query)', rss()]);
console.log(JSON.stringify(out));
`;
const dir = mkdtempSync(path.join(os.tmpdir(), 'storemap-memory-'));
const breakdown = await new Promise<[string, number][]>((resolve, reject) => {
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', steps], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  let text = '';
  child.stdout.on('data', (c: Buffer) => (text += c.toString()));
  child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(text.trim().split('\n').pop()!) as [string, number][]) : reject(new Error(`breakdown exited ${code}`))));
});
let prev = 0;
const rows = breakdown.map(([what, kb]) => {
  const row = `| ${what} | ${mib(kb - prev)} | ${mib(kb)} |`;
  prev = kb;
  return row;
});
console.log(rows.join('\n'));

// ---- 2. storemap serve
const port = await freePort();
const dbPath = path.join(dir, 'memory.db');
const env = { ...process.env, STOREMAP_DATA_DIR: dataDir, STOREMAP_DB: dbPath, PORT: String(port), STOREMAP_RATE_LIMIT: '1000000', STOREMAP_RATE_BURST: '1000000' };
const keyOut = await new Promise<string>((resolve) => {
  const c = spawn(process.execPath, [path.join(ROOT, 'bin/storemap.js'), 'keys', 'create', '--plan', 'internal'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  let t = '';
  c.stdout.on('data', (d: Buffer) => (t += d.toString()));
  c.on('exit', () => resolve(t.trim().split('\n').pop()!));
});
// The Node flags `npm start` gives serve, measured beside Node's defaults.
const startFlags = serveNodeFlags();
/** `storemap serve` started with these Node flags, measured step by step. */
async function measureServe(nodeFlags: string[]): Promise<{ served: [string, number][]; hwm: number }> {
  const server = spawn(process.execPath, [...nodeFlags, path.join(ROOT, 'bin/storemap.js'), 'serve'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve) => server.stdout!.on('data', (d: Buffer) => d.toString().includes('listening') && resolve()));
  const base = `http://127.0.0.1:${port}`;
  const headers = { 'content-type': 'application/json', 'x-api-key': keyOut };
  const served: [string, number][] = [];
  const note = async (what: string) => {
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    served.push([what, rssOf(server.pid!).rss]);
  };
  await note('started');
  await fetch(`${base}/api/v1/location-map`, { method: 'POST', headers, body: JSON.stringify({ brand: 'Starbucks' }) }).then((r) => r.arrayBuffer());
  await fetch(`${base}/api/v1/location-map`, { method: 'POST', headers, body: JSON.stringify({ brand: 'Starbucks', format: 'png', width: 1200, height: 800 }) }).then((r) => r.arrayBuffer());
  await fetch(`${base}/api/v1/nearby`, { method: 'POST', headers, body: JSON.stringify({ lat: 40.75, lng: -73.99 }) }).then((r) => r.arrayBuffer());
  await fetch(`${base}/api/v1/overlap`, { method: 'POST', headers, body: JSON.stringify({ tickers: ['SBUX', 'MCD'], distance_m: 500 }) }).then((r) => r.arrayBuffer());
  await fetch(`${base}/api/v1/changes?brand=Starbucks&since=2026-01-01`, { headers }).then((r) => r.arrayBuffer());
  await fetch(`${base}/api/v1/brands?limit=5`).then((r) => r.arrayBuffer());
  await note('after a first request of each endpoint');
  const load = (body: unknown) =>
    autocannon({ url: `${base}/api/v1/location-map`, method: 'POST', headers, body: JSON.stringify(body), connections: 8, duration: 8 });
  await load({ brand: 'Shell', country: 'DE' });
  await note('after 8 s of json requests (8 connections)');
  await load({ brand: 'Starbucks', format: 'png', width: 1200, height: 800 });
  await note('after 8 s of 1200 x 800 png maps (8 connections)');
  const hwm = rssOf(server.pid!).hwm;
  await stop(server);
  return { served, hwm };
  rmSync(dir, { recursive: true, force: true });
}

const { served, hwm } = await measureServe(startFlags);
const plain = await measureServe([]);
console.log(served.map(([w, kb]) => `${w}: ${mib(kb)} MiB`).join('\n'), `\npeak ${mib(hwm)} MiB`);

writeSection(
  'memory',
  `## A node's resident memory (\`bench/memory.ts\`)

\`node --import tsx bench/memory.ts --data-dir ${path.relative(ROOT, dataDir)}\`: RSS read from /proc, ${SETTLE_MS / 1000} s after each step (jemalloc's
background thread returns what loading freed within a second).

### Where it goes (one process loading the parts in the order \`serve\` does)

| part | MiB | RSS after, MiB |
|---|---|---|
${rows.join('\n')}

### \`storemap serve\` on the same data

Started as \`npm start\` starts it (\`node ${startFlags.join(' ')} bin/storemap.js serve\`), and with Node's defaults. \`--max-semi-space-size=8\` holds V8's young generation to 16 MiB instead of 32: under load a fast request path allocates enough to grow it to its limit, and V8 gives it back only slowly; bench/request-path.ts measured no change in storemap's rate with it (4,725 req/s against 4,720-4,746). \`--initial-old-space-size=64\` lets the old generation grow to 64 MiB before V8 collects it in full: left to itself V8 kept its limit a few MB above the 28 MB live and ran a full mark-compact every 160 ms under a map load (the image buffers' external memory), about 10 % of the main thread; with it, 3 in 10 s instead of 47, and 11 % more images per second in a trial (bench/render.ts measures HTTP with it).

| when | RSS, MiB (npm start's flags) | RSS, MiB (Node's defaults) |
|---|---|---|
${served.map(([w, kb], i) => `| ${w} | ${mib(kb)} | ${mib(plain.served[i][1])} |`).join('\n')}
| peak (VmHWM) | ${mib(hwm)} | ${mib(plain.hwm)} |
`,
);
