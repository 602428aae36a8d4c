// Map rendering speed: the same scenes drawn three ways, in one process —
//  - ours: crates/render through the addon (`render(renderer, store, req)`, libuv pool);
//  - @napi-rs/canvas (Skia): the same basemap polygons and markers drawn from JS, PNG encode;
//  - the same map as SVG text rasterized by @resvg/resvg-js, PNG encode.
// The peers get the camera, the projected, culled and thinned land and the projected markers
// for free (see bench/render-peers.ts); only their drawing and encoding is timed.
// Then the encode floor (PNG of an untouched buffer of the same size with our encoder, when the
// addon has `encodeBlankPng`), and HTTP on loopback with the image cache off: images per second
// for a 1K-marker light map while a probe GETs /healthz every 20 ms, beside the addon alone and
// bare node:http around the same call (bench/bare-render-server.ts), each in a process of its
// own. The load generator is wrk where installed (`apt-get install wrk`: it leaves a 2-core
// server its cores), else autocannon.
//
//   node --import tsx bench/render.ts [--data-dir data/generated/bench/scale-1]
import { fork, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { cannonApartCpu } from './http-peers.ts';
import { hasWrk, wrk, type LoadOptions, type LoadResult } from './wrk.ts';
import Benchmark from 'benchmark';
import { PNG } from 'pngjs';
import { openDatabase } from '../ts/db/database.ts';
import { loadRenderer, loadStoreSync, querySync, render, testingAddon, type RenderRequest, SNAPSHOT_FILE } from '../ts/native.ts';
import { ROOT, serveNodeFlags } from '../ts/paths.ts';
import { KeyStore } from '../ts/services/keys.ts';
import { canvasFor, drawCanvas, drawResvg, encodeCanvasOnly, loadRings, loadTheme, prepareScene, resvgPixels, type LandMode, type PeerScene } from './render-peers.ts';
import { median, writeSection } from './results.ts';
import { SqliteLedger } from '../ts/db/sqlite-ledger.ts';

const args = process.argv.slice(2);
const dataDir = args.includes('--data-dir') ? path.resolve(args[args.indexOf('--data-dir') + 1]) : path.join(ROOT, 'data', 'generated', 'bench', 'scale-1');
const snapshot = path.join(dataDir, SNAPSHOT_FILE);
if (!existsSync(snapshot)) throw new Error(`${snapshot} is missing: run bench/pipeline.ts first (or pass --data-dir)`);
// The bench data folders share one reference folder beside them; a data folder may have its own.
const referenceDir = [path.join(path.dirname(dataDir), 'reference'), path.join(dataDir, 'reference')].find((d) => existsSync(path.join(d, 'countries.geojson')));
if (!referenceDir) throw new Error(`no countries.geojson beside or inside ${dataDir}`);
const imageDir = path.join(os.tmpdir(), 'storemap-render-bench');
mkdirSync(imageDir, { recursive: true });

const binding = testingAddon() as unknown as Record<string, unknown>;

const t0 = performance.now();
const store = loadStoreSync(snapshot);
const renderer = loadRenderer(referenceDir);
// The same renderer keeping no basemap cells: every map's background drawn afresh, as the first
// map at a zoom is (STOREMAP_MAP_CELL_CACHE_MB=0).
const coldRenderer = loadRenderer(referenceDir, undefined, 0);
const info = store.info() as { rows: number; brands: number; scale: number | null };
console.log(`snapshot ${info.rows} rows, ${info.brands} brands; reference ${path.relative(ROOT, referenceDir)}; loaded in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
const loadAtStart = os.loadavg().map((x) => x.toFixed(2)).join(' ');
console.log(`load average ${loadAtStart} on ${os.cpus().length} cores`);

// ---- brands: pool counts closest to 1K, 10K and 43K (images draw every pool row)
function closestBrand(target: number, ok: (i: number) => boolean = () => true): number {
  let best = -1;
  for (let i = 0; i < info.brands; i++) {
    if (!ok(i)) continue;
    if (best < 0 || Math.abs(store.brand(i)!.poolCount - target) < Math.abs(store.brand(best)!.poolCount - target)) best = i;
  }
  return best;
}
interface Markers {
  brand: number;
  name: string;
  lat: Float64Array;
  lng: Float64Array;
}
function markersOf(brand: number, country?: string): Markers {
  const body = JSON.parse(querySync(store, { brands: [brand], format: 'json', verifiedOnly: false, country }).body.toString()) as { locations: { lat: number; lng: number }[] };
  return {
    brand,
    name: store.brand(brand)!.name,
    lat: Float64Array.from(body.locations, (l) => l.lat),
    lng: Float64Array.from(body.locations, (l) => l.lng),
  };
}
// The HTTP run asks for the 1K brand by name, so it must resolve back to itself.
const b1k = closestBrand(1_000, (i) => store.resolve(store.brand(i)!.name)?.brand === i);
const b10k = closestBrand(10_000);
const b43k = closestBrand(43_000);
const m1k = markersOf(b1k);
const m10k = markersOf(b10k);
const m43k = markersOf(b43k);
// The focus map: US stores of the brand whose US pool count is closest to 10K.
let bUs = b10k;
let usBest = Infinity;
for (let i = 0; i < info.brands; i++) {
  if (store.brand(i)!.poolCount < 8_000) continue;
  const n = querySync(store, { brands: [i], format: 'json', verifiedOnly: false, country: 'US', limit: 0 }).total;
  if (Math.abs(n - 10_000) < Math.abs(usBest - 10_000)) [bUs, usBest] = [i, n];
}
const mUs = markersOf(bUs, 'US');
// The issue's independent scene: the contiguous US, three brands (about 5,270 markers there), a
// fixed frame. Home improvement and a grocer whose US counts at scale 1 sum closest to it.
const CONUS: [number, number, number, number] = [24.4, -125.0, 49.4, -66.9];
const threeUs = ['Home Depot', "Lowe's", "Trader Joe's"].map((n) => store.resolve(n)?.brand).filter((b): b is number => b !== undefined).map((b) => markersOf(b, 'US'));
for (const m of [m1k, m10k, m43k, mUs, ...threeUs]) console.log(`brand ${m.name}: ${m.lat.length} markers (pool ${store.brand(m.brand)!.poolCount})`);

// ---- the peers' untimed setup
const land = loadRings(path.join(referenceDir, 'countries.geojson'));
// A reference written before format 5 has no lakes, and ours draws none then either.
const lakesFile = path.join(referenceDir, 'lakes.geojson');
const lakes = existsSync(lakesFile) ? loadRings(lakesFile) : [];
const states = loadRings(path.join(referenceDir, 'us_states.geojson'));
const theme = loadTheme('light');

// ---- scenes
interface Scene {
  id: string;
  label: string;
  m: Markers;
  /** More brands on the same map, each a group of its own (the company palette). */
  also?: Markers[];
  /** [south, west, north, east]: the view, instead of fitting the markers. */
  bounds?: [number, number, number, number];
  width: number;
  height: number;
  /** Fields the renderer may not know yet (heatmap, focus): skipped when ignored. */
  extra?: Record<string, unknown>;
  country?: string;
  peers: boolean;
  /** resvg timed over this many runs instead of a benchmark.js cycle (very slow cases). */
  resvgRuns?: number;
  calls: number;
}
const scenes: Scene[] = [
  { id: '1k', label: '1K markers, 1200 × 800', m: m1k, width: 1200, height: 800, peers: true, calls: 40 },
  { id: '10k', label: '10K markers, 1200 × 800', m: m10k, width: 1200, height: 800, peers: true, calls: 40 },
  { id: '43k', label: '43K markers, 1200 × 800', m: m43k, width: 1200, height: 800, peers: true, calls: 40 },
  { id: '4096', label: '10K markers, 4096 × 4096', m: m10k, width: 4096, height: 4096, peers: true, resvgRuns: 3, calls: 30 },
  ...(threeUs.length === 3
    ? [
        {
          id: 'conus3',
          label: `3 brands over the contiguous US, ${threeUs.reduce((n, m) => n + m.lat.length, 0)} markers, 1200 × 800`,
          m: threeUs[0],
          also: threeUs.slice(1),
          bounds: CONUS,
          country: 'US',
          width: 1200,
          height: 800,
          peers: true,
          calls: 40,
        },
      ]
    : []),
  { id: 'heatmap', label: 'heatmap, 10K points, 1200 × 800', m: m10k, width: 1200, height: 800, extra: { heatmap: true }, peers: false, calls: 40 },
  { id: 'focus', label: `focus map US (CONUS), ${mUs.lat.length} US markers, 1200 × 800`, m: mUs, country: 'US', width: 1200, height: 800, extra: { focus: { country: 'US', conus: true } }, peers: false, calls: 40 },
];

function requestOf(s: Scene, withExtra = true): RenderRequest {
  const base: RenderRequest = {
    query: { brands: [s.m.brand, ...(s.also ?? []).map((m) => m.brand)], format: 'json', verifiedOnly: false, country: s.country },
    ...(s.bounds ? { bounds: s.bounds } : {}),
    format: 'png',
    width: s.width,
    height: s.height,
    scale: 1,
    dpi: 96,
    style: 'light',
  };
  return (withExtra && s.extra ? { ...base, ...s.extra } : base) as RenderRequest;
}

const ms = (t: bigint) => Number(process.hrtime.bigint() - t) / 1e6;

/** Process CPU time (every thread: main, libuv pool, the renderer's band threads), in ms. */
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** p50 wall time over `calls` sequential awaited renders, and the CPU time they took each. */
async function oursP50(req: RenderRequest, calls: number, r = renderer): Promise<{ p50: number; cpu: number }> {
  for (let i = 0; i < 3; i++) await render(r, store, req);
  const xs: number[] = [];
  const c0 = cpuMs();
  for (let i = 0; i < calls; i++) {
    const t = process.hrtime.bigint();
    await render(r, store, req);
    xs.push(ms(t));
  }
  return { p50: median(xs), cpu: (cpuMs() - c0) / calls };
}

/** Mean wall and CPU time of a peer over a few sequential runs. */
async function peerRuns(fn: () => unknown, runs: number): Promise<{ wall: number[]; cpu: number }> {
  const wall: number[] = [];
  const c0 = cpuMs();
  for (let i = 0; i < runs; i++) {
    const t = process.hrtime.bigint();
    await fn();
    wall.push(ms(t));
  }
  return { wall, cpu: (cpuMs() - c0) / runs };
}

interface Entry {
  name: string;
  fn: () => unknown;
  defer: boolean;
}
/** One benchmark.js suite; returns each entry's mean in ms and its relative margin of error. */
function suite(entries: Entry[]): Promise<Record<string, { mean: number; rme: number; samples: number }>> {
  return new Promise((resolve) => {
    const out: Record<string, { mean: number; rme: number; samples: number }> = {};
    const s = new Benchmark.Suite();
    for (const e of entries) {
      s.add(e.name, {
        defer: e.defer,
        maxTime: 3,
        minSamples: 5,
        fn: e.defer ? (d: { resolve: () => void }) => void (e.fn() as Promise<unknown>).then(() => d.resolve()) : e.fn,
      });
    }
    s.on('cycle', (ev: Benchmark.Event) => {
      const b = ev.target as unknown as Benchmark;
      console.log(`  ${String(b)}`);
      out[b.name!] = { mean: b.stats.mean * 1000, rme: b.stats.rme, samples: b.stats.sample.length };
    })
      .on('complete', () => resolve(out))
      .run({ async: true });
  });
}

/** Share of pixels whose largest RGB difference is over 64, and the mean absolute difference. */
function compare(a: Uint8Array, b: Uint8Array): { differing: number; meanAbs: number } {
  let differing = 0;
  let sum = 0;
  const n = a.length / 4;
  for (let i = 0; i < a.length; i += 4) {
    const d = Math.max(Math.abs(a[i] - b[i]), Math.abs(a[i + 1] - b[i + 1]), Math.abs(a[i + 2] - b[i + 2]));
    if (d > 64) differing++;
    sum += Math.abs(a[i] - b[i]) + Math.abs(a[i + 1] - b[i + 1]) + Math.abs(a[i + 2] - b[i + 2]);
  }
  return { differing: differing / n, meanAbs: sum / (3 * n) };
}

// ---- the encode floor (our PNG encoder on an untouched white RGB buffer), when the addon has it
const encodeBlankPng = typeof binding.encodeBlankPng === 'function' ? (binding.encodeBlankPng as (w: number, h: number) => unknown) : null;
const floors = new Map<string, number>();
async function floorOf(w: number, h: number): Promise<number | null> {
  if (!encodeBlankPng) return null;
  const k = `${w}x${h}`;
  if (!floors.has(k)) {
    for (let i = 0; i < 3; i++) await encodeBlankPng(w, h);
    const xs: number[] = [];
    for (let i = 0; i < 30; i++) {
      const t = process.hrtime.bigint();
      await encodeBlankPng(w, h);
      xs.push(ms(t));
    }
    floors.set(k, median(xs));
  }
  return floors.get(k)!;
}
if (!encodeBlankPng) console.log('floor: pending (the addon has no encodeBlankPng yet)');

// ---- the canvas land path: Skia is handed whichever of SVG path text or moveTo/lineTo calls is
// faster here (the peer's choice, made untimed).
async function pickLandMode(s: PeerScene): Promise<LandMode> {
  const cp = canvasFor(s);
  const time = async (mode: LandMode) => {
    for (let i = 0; i < 3; i++) await drawCanvas(cp, s, mode);
    const xs: number[] = [];
    for (let i = 0; i < 10; i++) {
      const t = process.hrtime.bigint();
      await drawCanvas(cp, s, mode);
      xs.push(ms(t));
    }
    return median(xs);
  };
  const [a, b] = [await time('path-data'), await time('calls')];
  console.log(`  canvas land path: SVG path text ${a.toFixed(1)} ms, moveTo/lineTo ${b.toFixed(1)} ms`);
  return a <= b ? 'path-data' : 'calls';
}

interface SceneResult {
  s: Scene;
  skipped?: string;
  drawn?: number;
  p50?: number;
  cpu?: number;
  coldP50?: number;
  coldCpu?: number;
  mean?: number;
  canvasCpu?: number;
  resvgCpu?: number;
  rme?: number;
  floor?: number | null;
  canvas?: number;
  resvg?: number;
  resvgNote?: string;
  canvasEncodeOnly?: number;
  landPoints?: number;
  lakePoints?: number;
  statePoints?: number;
  bytes?: [number, number, number];
  vsCanvas?: { differing: number; meanAbs: number };
  vsResvg?: { differing: number; meanAbs: number };
}
const results: SceneResult[] = [];
let landMode: LandMode | null = null;

for (const s of scenes) {
  console.log(`\n== ${s.label} (${s.m.name})`);
  const req = requestOf(s);
  let first;
  if (s.extra) {
    // Fields the renderer does not know are ignored by the addon's object conversion, or refused.
    let plain;
    try {
      first = await render(renderer, store, req);
      plain = await render(renderer, store, requestOf(s, false));
    } catch (e) {
      const msg = e instanceof Error ? e.message : String(e);
      const skipped = /unknown|unexpected|unrecognized|not (yet )?(supported|implemented|available)/i.test(msg) ? `skipped: not supported by this build (${msg})` : `failed: ${msg}`;
      console.log(`  ${skipped}`);
      results.push({ s, skipped });
      continue;
    }
    if (first.body.equals(plain.body)) {
      console.log('  skipped: not supported by this build (same image as the plain map)');
      results.push({ s, skipped: 'skipped: not supported by this build (same image as the plain map)' });
      continue;
    }
  } else {
    first = await render(renderer, store, req);
  }
  writeFileSync(path.join(imageDir, `ours-${s.id}.png`), first.body);
  const r: SceneResult = { s, drawn: first.count, floor: await floorOf(s.width, s.height) };
  const o = await oursP50(req, s.calls);
  r.p50 = o.p50;
  r.cpu = o.cpu;
  console.log(`  ours p50 ${r.p50.toFixed(2)} ms over ${s.calls} sequential calls, ${r.cpu.toFixed(1)} ms CPU each${r.floor ? `; floor ${r.floor.toFixed(2)} ms` : ''}`);
  const cold = await oursP50(req, Math.min(s.calls, 20), coldRenderer);
  [r.coldP50, r.coldCpu] = [cold.p50, cold.cpu];
  console.log(`  ours keeping no basemap cells: p50 ${cold.p50.toFixed(2)} ms, ${cold.cpu.toFixed(1)} ms CPU each`);

  const entries: Entry[] = [{ name: 'ours', fn: () => render(renderer, store, req), defer: true }];
  let ps: PeerScene | null = null;
  if (s.peers) {
    ps = prepareScene(land, lakes, states, [s.m, ...(s.also ?? [])], s.width, s.height, theme, s.bounds);
    r.landPoints = ps.landPoints;
    r.lakePoints = ps.lakePoints;
    r.statePoints = ps.statePoints;
    console.log(`  peers: ${ps.rings.length} land rings, ${ps.landPoints} points; ${ps.lakes.length} lake rings, ${ps.lakePoints} points; ${ps.states.length} state rings, ${ps.statePoints} points; ${ps.markers.length / 2} markers`);
    landMode ??= await pickLandMode(ps);
    const cp = canvasFor(ps);
    const scene = ps;
    const mode = landMode;
    const canvasPng = await drawCanvas(cp, scene, mode);
    const resvgPng = drawResvg(scene);
    writeFileSync(path.join(imageDir, `canvas-${s.id}.png`), canvasPng);
    writeFileSync(path.join(imageDir, `resvg-${s.id}.png`), resvgPng);
    r.bytes = [first.body.length, canvasPng.length, resvgPng.length];
    // Same picture? Decoded pixels of ours against each peer (untimed).
    const oursPx = PNG.sync.read(first.body).data;
    r.vsCanvas = compare(oursPx, PNG.sync.read(canvasPng).data);
    r.vsResvg = compare(oursPx, resvgPixels(scene));
    console.log(
      `  pixels differing (max channel Δ > 64): canvas ${(r.vsCanvas.differing * 100).toFixed(2)}%, resvg ${(r.vsResvg.differing * 100).toFixed(2)}%; PNG bytes ours ${r.bytes[0]}, canvas ${r.bytes[1]}, resvg ${r.bytes[2]}`,
    );
    // CPU per image of each peer (sequential runs; resvg's at 4096 come from its timed runs).
    r.canvasCpu = (await peerRuns(() => drawCanvas(cp, scene, mode), 5)).cpu;
    if (!s.resvgRuns) r.resvgCpu = (await peerRuns(() => drawResvg(scene), 3)).cpu;
    entries.push({ name: 'canvas', fn: () => drawCanvas(cp, scene, mode), defer: true });
    if (!s.resvgRuns) entries.push({ name: 'resvg', fn: () => drawResvg(scene), defer: false });
    // Skia's own encode of a finished canvas, for context.
    const xs: number[] = [];
    for (let i = 0; i < 10; i++) {
      const t = process.hrtime.bigint();
      await encodeCanvasOnly(cp);
      xs.push(ms(t));
    }
    r.canvasEncodeOnly = median(xs);
  }
  const b = await suite(entries);
  r.mean = b.ours.mean;
  r.rme = b.ours.rme;
  r.canvas = b.canvas?.mean;
  r.resvg = b.resvg?.mean;
  if (s.resvgRuns && ps) {
    const scene = ps;
    const { wall: xs, cpu } = await peerRuns(() => drawResvg(scene), s.resvgRuns);
    r.resvgCpu = cpu;
    r.resvg = xs.reduce((a, x) => a + x, 0) / xs.length;
    r.resvgNote = `mean of ${s.resvgRuns} timed runs`;
    console.log(`  resvg ${xs.map((x) => x.toFixed(0)).join(', ')} ms`);
  }
  results.push(r);
}

// ---- beside the floor (and in its place on builds without it): ours on an open-ocean view
// (south Pacific, no land, every marker culled), i.e. the query, a uniform fill and the encode
// of a uniform picture.
const ocean: { size: string; p50: number; bytes: number }[] = [];
for (const [w, h, zoom] of [
  [1200, 800, 6],
  [4096, 4096, 8],
] as const) {
  const req: RenderRequest = { ...requestOf(scenes[0], false), width: w, height: h, center: [-45, -120], zoom };
  const bytes = (await render(renderer, store, req)).body.length;
  const { p50 } = await oursP50(req, 30);
  ocean.push({ size: `${w} × ${h}`, p50, bytes });
  console.log(`open-ocean view ${w} × ${h}: p50 ${p50.toFixed(2)} ms, ${bytes} bytes`);
}

// ---- HTTP: the real server, image cache off; autocannon POSTs 1K-marker PNGs while a probe in a
// worker thread of this process GETs /healthz every 20 ms (its own event loop, so autocannon's
// work on the main thread does not inflate the probe's numbers).
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = http.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}
async function waitFor(url: string, gone: () => boolean): Promise<void> {
  for (let i = 0; i < 600 && !gone(); i++) {
    try {
      await fetch(url);
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(gone() ? 'the server exited before answering' : `${url} never answered`);
}
const PROBE = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const get = () => new Promise((resolve) => {
  const t = process.hrtime.bigint();
  http.get({ host: '127.0.0.1', port: workerData.port, path: '/healthz', agent }, (res) => {
    res.resume();
    res.on('end', () => resolve({ ms: Number(process.hrtime.bigint() - t) / 1e6, ok: res.statusCode === 200 }));
  }).on('error', () => resolve({ ms: Number(process.hrtime.bigint() - t) / 1e6, ok: false }));
});
(async () => {
  const end = Date.now() + workerData.durationMs;
  const ms = [];
  let bad = 0;
  while (Date.now() < end) {
    const r = await get();
    ms.push(r.ms);
    if (!r.ok) bad++;
    await new Promise((r) => setTimeout(r, workerData.intervalMs));
  }
  parentPort.postMessage({ ms, bad });
})();
`;
function probe(port: number, durationMs: number): Promise<{ ms: number[]; bad: number }> {
  return new Promise((resolve, reject) => {
    const w = new Worker(PROBE, { eval: true, workerData: { port, durationMs, intervalMs: 20 } });
    w.once('message', (m: { ms: number[]; bad: number }) => {
      void w.terminate();
      resolve(m);
    });
    w.once('error', reject);
  });
}
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};

console.log('\n== HTTP');
/** bench/bare-render-server.ts in a process of its own, with the server's Node flags. */
function forkBareRender(port: number): ChildProcess {
  return fork(path.join(ROOT, 'bench', 'bare-render-server.ts'), [String(port), snapshot, referenceDir!], { execArgv: [...serveNodeFlags(), '--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
}
// The addon's own rate on these cores for the HTTP run's image: 8 renders in flight (as the HTTP
// run's 8 connections), for 5 s, in a fresh process with the server's Node flags (this one holds
// the peers' scenes and images: its own loop drew fewer a second than the server), before the
// server starts (its snapshot load would compete).
const [addonRate, addonCpu] = await (async () => {
  const alone = forkBareRender(0);
  let timer: NodeJS.Timeout | undefined;
  try {
    const r = await new Promise<{ rate: number; cpu: number }>((resolve, reject) => {
      timer = setTimeout(() => reject(new Error("the addon's own run took over 2 minutes")), 120_000);
      alone.once('message', (m: { rate: number; cpu: number }) => resolve(m));
      alone.once('exit', (code) => reject(new Error(`the addon's own run exited with ${code}`)));
      alone.send({ req: requestOf(scenes[0], false), alone: { inFlight: 8, ms: 5_000 } });
    });
    return [r.rate, r.cpu];
  } finally {
    clearTimeout(timer);
    alone.kill('SIGTERM');
  }
})();
console.log(`addon alone, 8 in flight: ${addonRate.toFixed(0)} images/s, ${addonCpu.toFixed(1)} ms CPU each`);
const tmp = mkdtempSync(path.join(os.tmpdir(), 'storemap-bench-render-'));
const dbPath = path.join(tmp, 'bench.db');
const db = openDatabase(dbPath);
const key = (await new KeyStore(new SqliteLedger(db)).create({ plan: 'internal', name: 'bench' })).key;
db.close();
const port = await freePort();
const env = {
  ...process.env,
  STOREMAP_DATA_DIR: dataDir,
  STOREMAP_DB: dbPath,
  STOREMAP_RATE_LIMIT: '1000000',
  STOREMAP_RATE_BURST: '1000000',
  STOREMAP_IMAGE_CACHE_BYTES: '0',
  PORT: String(port),
};
const serverLog = path.join(tmp, 'server.log');
const logFd = openSync(serverLog, 'w');
// With the Node flags `npm start` gives it.
const child: ChildProcess = fork(path.join(ROOT, 'bin', 'storemap.js'), ['serve'], { env, execArgv: serveNodeFlags(), stdio: ['ignore', logFd, logFd, 'ipc'] });
let exited = false;
child.once('exit', () => (exited = true));
interface HttpResult {
  body: string;
  /** The load generator: wrk where installed, else autocannon. */
  generator: string;
  /** bench/bare-render-server.ts under the same load: images/s and its CPU per image. */
  bare: { rps: number; cpu: number | null } | null;
  /** The server process's CPU per image, ms. */
  serverCpu: number | null;
  /** Cores the load generator (autocannon's process, and the probe in this one) used meanwhile. */
  clientCores: number;
  bytes: number;
  count: string | null;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  idle: { p50: number; p99: number; max: number; n: number };
  loaded: { p50: number; p99: number; max: number; n: number; bad: number };
}
/** CPU time a process has used, ms (Linux /proc; null elsewhere). */
function processCpuMs(pid: number | undefined): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    // utime and stime, fields 14 and 15 of stat, in clock ticks of 10 ms.
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

const WRK = hasWrk();
/** One load run: wrk where installed (a small share of a core), else autocannon in a process
 * of its own (about 0.9 of a core at these rates, taken from the server on 2 cores). */
async function load(url: string, o: LoadOptions): Promise<LoadResult> {
  if (WRK) return wrk(url, o);
  const { result, cpuMs } = await cannonApartCpu(url, { ...o, method: o.method as 'POST' });
  return { rps: result.requests.average, ok: result['2xx'], p50: result.latency.p50, p99: result.latency.p99, bad: result.non2xx + result.errors + result.timeouts, cpuMs };
}
/** The bare node:http peer (bench/bare-render-server.ts) drawing `req` for every POST, under the
 * same load as the service: images/s and its CPU per image. */
async function bareRun(o: Omit<LoadOptions, 'duration'>, req: RenderRequest): Promise<{ rps: number; cpu: number | null }> {
  const barePort = await freePort();
  const bare = forkBareRender(barePort);
  try {
    await new Promise<void>((resolve, reject) => {
      bare.once('message', () => resolve());
      bare.once('exit', (code) => reject(new Error(`exited with ${code}`)));
      bare.send({ req });
    });
    const url = `http://127.0.0.1:${barePort}/`;
    await load(url, { ...o, duration: 3 });
    const c0 = processCpuMs(bare.pid);
    const r = await load(url, { ...o, duration: 10 });
    const c1 = processCpuMs(bare.pid);
    if (r.bad > 0) throw new Error(`${r.bad} failed answers`);
    return { rps: r.rps, cpu: c0 === null || c1 === null ? null : (c1 - c0) / r.ok };
  } finally {
    bare.kill('SIGTERM');
  }
}

let httpResult: HttpResult | null = null;
let httpError = '';
try {
  await waitFor(`http://127.0.0.1:${port}/healthz`, () => exited);
  const url = `http://127.0.0.1:${port}/api/v1/location-map`;
  const body = JSON.stringify({ brand: m1k.name, format: 'png' });
  const headers = { 'content-type': 'application/json', 'x-api-key': key };
  const check = await fetch(url, { method: 'POST', headers, body });
  const png = Buffer.from(await check.arrayBuffer());
  if (check.status !== 200 || check.headers.get('content-type') !== 'image/png') throw new Error(`POST ${body}: ${check.status} ${png.toString().slice(0, 300)}`);
  const count = check.headers.get('x-location-count');
  console.log(`POST ${body}: 200, ${png.length} bytes, ${count} markers, X-Render-Time ${check.headers.get('x-render-time')}`);
  const idle = await probe(port, 3_000);
  const opts = { method: 'POST', headers, body, connections: 8 };
  // Warm first (the server's JIT, the pool's threads): the first seconds of load run slower.
  await load(url, { ...opts, duration: 3 });
  const [server0, client0, wall0] = [processCpuMs(child.pid), cpuMs(), performance.now()];
  // The load in a process of its own (reading 300 KB answers on this process's event loop
  // cost the server's measurement too, in a busier machine), the probe in this one.
  const [run, loaded] = await Promise.all([load(url, { ...opts, duration: 10 }), probe(port, 10_000)]);
  const [server1, client1, wall1] = [processCpuMs(child.pid), cpuMs(), performance.now()];
  const st = (xs: number[]) => ({ p50: median(xs), p99: pct(xs, 99), max: Math.max(...xs), n: xs.length });
  child.kill('SIGTERM');
  const bare = await bareRun(opts, requestOf(scenes[0], false)).catch((e: unknown) => {
    console.log(`bare node:http peer not measured: ${e instanceof Error ? e.message : String(e)}`);
    return null;
  });
  httpResult = {
    body,
    bytes: png.length,
    count,
    generator: WRK ? 'wrk' : 'autocannon',
    rps: run.rps,
    serverCpu: server0 === null || server1 === null || run.ok === 0 ? null : (server1 - server0) / run.ok,
    clientCores: (client1 - client0 + run.cpuMs) / (wall1 - wall0),
    p50: run.p50,
    p99: run.p99,
    non2xx: run.bad,
    bare,
    idle: st(idle.ms),
    loaded: { ...st(loaded.ms), bad: loaded.bad },
  };
  console.log(httpResult);
} catch (e) {
  const tail = readFileSync(serverLog, 'utf8').trim().split('\n').slice(-6).join(' | ');
  httpError = `${e instanceof Error ? e.message : String(e)}${tail ? ` — server log: ${tail}` : ''}`;
  console.log(`HTTP not measured: ${httpError}`);
} finally {
  child.kill('SIGTERM');
  closeSync(logFd);
  rmSync(tmp, { recursive: true, force: true });
}

// ---- RESULTS.md
const f1 = (x: number | undefined | null) => (x === undefined || x === null ? '–' : x < 10 ? x.toFixed(2) : x < 100 ? x.toFixed(1) : x.toFixed(0));
const times = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? '–' : `**${(a / b).toFixed(1)}×**`);
const pctf = (x: number) => `${(x * 100).toFixed(2)}%`;
const mark = (ok: boolean) => (ok ? '✅' : '❌');

const sceneRows = results.map((r) => {
  if (r.skipped) return `| ${r.s.label} | ${r.skipped} | | | | | | | | | | |`;
  const floorCell = r.floor ? `${f1(r.floor)} ms` : 'pending';
  const multiple = r.floor ? `${(r.p50! / r.floor).toFixed(1)}×` : 'pending';
  const resvg = r.resvg === undefined ? '–' : `${f1(r.resvg)} ms${r.resvgNote ? ` (${r.resvgNote})` : ''}`;
  return `| ${r.s.label} | ${r.drawn} | ${f1(r.p50)} ms | ${f1(r.mean)} ms ±${r.rme!.toFixed(1)}% | ${f1(r.cpu)} ms | ${floorCell} | ${multiple} | ${r.canvas === undefined ? '–' : `${f1(r.canvas)} ms`} | ${resvg} | ${times(r.canvas, r.mean)} | ${times(r.resvg, r.mean)} | ${f1(r.coldP50)} / ${f1(r.coldCpu)} ms |`;
});
const checkRows = results
  .filter((r) => r.vsCanvas)
  .map(
    (r) =>
      `| ${r.s.label} | ${r.landPoints} / ${r.lakePoints} / ${r.statePoints} | ${r.bytes!.join(' / ')} | ${f1(r.canvasCpu)} / ${f1(r.resvgCpu)} ms | ${f1(r.canvasEncodeOnly)} ms | ${pctf(r.vsCanvas!.differing)} (mean Δ ${r.vsCanvas!.meanAbs.toFixed(2)}) | ${pctf(r.vsResvg!.differing)} (mean Δ ${r.vsResvg!.meanAbs.toFixed(2)}) |`,
  );
const by = (id: string) => results.find((r) => r.s.id === id)!;
const r10 = by('10k');
const r4096 = by('4096');
const cpuRatio = (r: SceneResult) => Math.min(r.canvasCpu!, r.resvgCpu!) / r.cpu!;
const targets = [
  ...results
    .filter((r) => r.canvasCpu !== undefined && r.resvgCpu !== undefined)
    .map((r) => `| ${r.s.label}: CPU per image ≥ 8× the faster of canvas and resvg | ${cpuRatio(r).toFixed(1)}× (keeping no cells: ${(Math.min(r.canvasCpu!, r.resvgCpu!) / r.coldCpu!).toFixed(1)}×) | ${mark(cpuRatio(r) >= 8)} |`),
  ...results
    .filter((r) => r.s.width === 1200 && r.s.height === 800 && r.floor && r.drawn! <= 10_000)
    .map((r) => `| ${r.s.label}: p50 ≤ 3× the encode floor | ${(r.p50! / r.floor!).toFixed(1)}× | ${mark(r.p50! / r.floor! <= 3)} |`),
  httpResult
    ? `| HTTP, image cache off, 8 connections: images/s ≥ 80 % of the addon's rate (8 in flight, same cores) | ${httpResult.rps.toFixed(0)} of ${addonRate.toFixed(0)}: ${((httpResult.rps / addonRate) * 100).toFixed(0)} % | ${mark(httpResult.rps >= 0.8 * addonRate)} |`
    : '| HTTP: images/s ≥ 80 % of the addon\'s rate | not measured | ⏳ |',
  httpResult?.serverCpu
    ? `| HTTP, the same on the server's share of the cores: the addon's CPU per image ≥ 80 % of the server's (the load generator runs on the same ${os.cpus().length} cores) | ${f1(addonCpu)} / ${f1(httpResult.serverCpu)} ms: ${((addonCpu / httpResult.serverCpu) * 100).toFixed(0)} % | ${mark(addonCpu >= 0.8 * httpResult.serverCpu)} |`
    : '| HTTP: CPU per image against the addon\'s | not measured | ⏳ |',
  `| 10K, 1200 × 800: ours p50 ≤ 20 ms | ${f1(r10.p50)} ms | ${mark(r10.p50! <= 20)} |`,
  `| 10K, 1200 × 800: ≥ 3× faster than @napi-rs/canvas | ${(r10.canvas! / r10.mean!).toFixed(1)}× (per CPU ms: ${(r10.canvasCpu! / r10.cpu!).toFixed(1)}×) | ${mark(r10.canvas! / r10.mean! >= 3)} |`,
  `| 10K, 1200 × 800: ≥ 8× faster than resvg-js | ${(r10.resvg! / r10.mean!).toFixed(1)}× (per CPU ms: ${(r10.resvgCpu! / r10.cpu!).toFixed(1)}×) | ${mark(r10.resvg! / r10.mean! >= 8)} |`,
  `| 4096 × 4096: ours p50 ≤ 300 ms | ${f1(r4096.p50)} ms | ${mark(r4096.p50! <= 300)} |`,
  `| render time as a multiple of the encode floor (10K, 1200 × 800) | ${r10.floor ? `${(r10.p50! / r10.floor).toFixed(1)}×` : 'floor: pending'} | report |`,
  httpResult
    ? `| HTTP: GET /healthz p99 < 50 ms while renders saturate the pool | ${f1(httpResult.loaded.p99)} ms | ${mark(httpResult.loaded.p99 < 50)} |`
    : '| HTTP: GET /healthz p99 < 50 ms while renders saturate the pool | not measured | ⏳ |',
  httpResult
    ? `| HTTP: no non-2xx answers or errors | ${httpResult.non2xx} (+ ${httpResult.loaded.bad} failed probes) | ${mark(httpResult.non2xx === 0 && httpResult.loaded.bad === 0)} |`
    : '| HTTP: no non-2xx answers or errors | not measured | ⏳ |',
];

const command = `node --import tsx bench/render.ts${args.includes('--data-dir') ? ` --data-dir ${path.relative(ROOT, dataDir)}` : ''}`;
writeSection(
  'render',
  `## Map rendering

\`${command}\` — snapshot of ${info.rows} rows (scale ${info.scale}), basemap \`${path.relative(ROOT, path.join(referenceDir, 'countries.geojson'))}\`; light theme, PNG, scale 1, auto-fit viewport. Brands: ${m1k.name} (${m1k.lat.length} markers), ${m10k.name} (${m10k.lat.length}), ${m43k.name} (${m43k.lat.length}): the pool counts closest to 1K, 10K and 43K (images draw every pool row); focus map: ${mUs.name}'s ${mUs.lat.length} US rows.

Ours: \`render(renderer, store, req)\` through the addon (libuv pool; the query, camera, basemap, city labels, markers and PNG encode all inside the timing). @napi-rs/canvas: water rect, one Path2D of every land ring (${landMode === 'calls' ? 'moveTo/lineTo calls' : 'SVG path text'}, the faster of the two here) filled even-odd, the big lakes filled with the water colour, US state lines when ours draws them (zoom ≥ 3), borders stroked 0.6 px, one arc fill + stroke per marker, \`canvas.encode('png')\` on an opaque canvas reused across calls. resvg-js: the SVG text (the land path, the lakes, state lines, one \`<circle>\` per marker) built per call, then \`new Resvg(svg, { font: { loadSystemFonts: false } }).render().asPng()\`. Untimed and given to both peers: the auto-fit camera (camera.rs replicated), the land, lake and state rings projected, culled to the view, sub-pixel rings dropped, thinned at 0.5 px then Douglas-Peucker-simplified at 0.7 px (ours meets that error bound with the coarsest precomputed level under it, so the peers never draw more points), the markers projected. The peers draw no city labels (ours does). Ours draws each image in two horizontal bands on two threads (render.rs \`bands_for\`), so its wall time uses both cores while canvas and resvg draw on one: the CPU column says what an image costs in CPU, which is what bounds throughput. The Natural Earth background (water, land, borders, state lines) is copied from 256-pixel cells drawn once per zoom, scale and theme and kept (\`STOREMAP_MAP_CELL_CACHE_MB\`): the sequential calls find them drawn, as every map after the first at a zoom does; the last column is the same renderer keeping none, i.e. what the first map at a new zoom costs. Ours p50 over ${scenes[0].calls} sequential awaited calls (30 at 4096); means from one benchmark.js suite per scene (maxTime 3 s, ≥ 5 samples). Floor: our PNG encoder on an untouched white RGB buffer of the same size (\`encodeBlankPng\`${encodeBlankPng ? '' : ', not in this build yet'}).

| scene | markers | ours p50 | ours mean | ours CPU / image | encode floor | p50 / floor | canvas mean | resvg mean | vs canvas | vs resvg | ours keeping no cells: p50 / CPU |
|---|---|---|---|---|---|---|---|---|---|---|---|
${sceneRows.join('\n')}

${encodeBlankPng ? 'Beside the floor' : 'Until the floor lands, for scale'}: ours on an open-ocean view (south Pacific: no land, every marker culled; the query, a uniform fill and the PNG of a uniform picture) — ${ocean.map((o) => `${o.size}: p50 ${f1(o.p50)} ms (${o.bytes} bytes)`).join('; ')}.

Same picture, checked (decoded pixels of ours against each peer; a pixel differs when a channel is off by more than 64; ours also carries city labels, which the peers do not draw):

| scene | peers' land / lake / state-line points | PNG bytes ours / canvas / resvg | CPU / image canvas / resvg | Skia encode alone | pixels differing vs canvas | vs resvg |
|---|---|---|---|---|---|---|
${checkRows.join('\n')}

Load average (1, 5, 15 min) at the start ${loadAtStart}, at the end ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}: anything else running on the ${os.cpus().length} cores shows here.

### HTTP on loopback (${os.cpus().length} cores, image cache off: \`STOREMAP_IMAGE_CACHE_BYTES=0\`)

${
  httpResult
    ? `${httpResult.generator === 'wrk' ? 'wrk (one thread; Debian\'s `wrk` package)' : 'autocannon (a process of its own; install wrk for a load generator that leaves the server its cores)'}, 8 connections, 10 s after 3 s of warm-up, POST \`${httpResult.body}\` (${httpResult.count} markers, ${httpResult.bytes}-byte PNG), internal key. Meanwhile a probe in a worker thread of the bench process GETs \`/healthz\` (keep-alive) every 20 ms.

| measure | value |
|---|---|
| images/s | ${httpResult.rps.toFixed(0)} |
| the server's CPU per image (the whole process: HTTP, key, ledger, render) | ${f1(httpResult.serverCpu)} ms, against ${f1(addonCpu)} ms for the addon alone (8 in flight in a fresh process with the same Node flags, ${addonRate.toFixed(0)} images/s) |
| cores the load generator took meanwhile (${httpResult.generator}, and the probe) | ${httpResult.clientCores.toFixed(2)} of ${os.cpus().length} |
| bare node:http around the same render call (bench/bare-render-server.ts: body parsed, render, PNG written; no router, key, validation, ledger or headers), same load | ${httpResult.bare ? `${httpResult.bare.rps.toFixed(0)} images/s, ${f1(httpResult.bare.cpu)} ms CPU an image${httpResult.bare.cpu ? ` (the addon alone ${((addonCpu / httpResult.bare.cpu) * 100).toFixed(0)} % of it${httpResult.serverCpu ? `; the service ${f1(httpResult.serverCpu - httpResult.bare.cpu)} ms more` : ''})` : ''}` : 'not measured'} |
| image latency p50 / p99 | ${f1(httpResult.p50)} ms / ${f1(httpResult.p99)} ms |
| non-2xx + errors + timeouts | ${httpResult.non2xx} |
| /healthz idle (3 s, ${httpResult.idle.n} GETs) p50 / p99 / max | ${f1(httpResult.idle.p50)} / ${f1(httpResult.idle.p99)} / ${f1(httpResult.idle.max)} ms |
| /healthz under load (${httpResult.loaded.n} GETs) p50 / p99 / max | ${f1(httpResult.loaded.p50)} / ${f1(httpResult.loaded.p99)} / ${f1(httpResult.loaded.max)} ms |`
    : `Not measured: ${httpError.replace(/\|/g, '/')}`
}

### Targets

| target | measured | |
|---|---|---|
${targets.join('\n')}`,
);
console.log(`\nimages in ${imageDir}`);
process.exit(0);
