// Street maps (issue 28): a 1200 x 800 map at zoom 15 with 200 markers over Monaco, drawn from
// the committed OpenMapTiles archive (crates/render/tests/data/tiles/monaco-openmaptiles.pmtiles),
// in one process, in this order of cases:
//  - ours, the Natural Earth map of the same view (the baseline the issue measures against);
//  - ours, the street map with warm caches (decoded tiles and drawn cells kept from the previous
//    call: the same view again, as a store locator asks);
//  - ours, the street map cold (the archive opened anew: directories, tiles and cells read,
//    decoded and drawn);
//  - ours, warm, panned: each call 37 pixels east of the last, so a column of cells is new
//    every 14 calls (what a map being dragged costs);
//  - the peer, @napi-rs/canvas (Skia): the same drawing operations our renderer would fill (the
//    tiles read, decoded, sorted, projected, culled and thinned for it, untimed: only Skia's
//    stroking, filling, the markers and its PNG encode are timed), the markers as arcs.
// Our maps also carry the place labels and the credit; the peer's do not (more work on our
// side). Zoom 17 (the archive's zoom-14 tiles stretched four times) is measured too.
//
//   bash scripts/build.sh --testing && node --import tsx bench/streets.ts
import path from 'node:path';
import { createCanvas, Path2D } from '@napi-rs/canvas';
import { LABEL_FONT, testingAddon } from '../ts/native.ts';
import { ROOT, TABLES_DIR } from '../ts/paths.ts';
import { median, writeSection } from './results.ts';

interface PeerOp {
  color: string;
  alpha: number;
  width?: number;
  dash?: number[];
  round: boolean;
  commands: Float64Array;
}
interface StreetBench {
  render(lat: number, lng: number, zoom: number, w: number, h: number, mlat: Float64Array, mlng: Float64Array, style: string, streets: boolean, cold: boolean): Buffer;
  ops(lat: number, lng: number, zoom: number, w: number, h: number, style: string): PeerOp[];
}
const addon = testingAddon() as unknown as { StreetBench: new (countries: string, font: string, themes: string, archive: string) => StreetBench };

const DATA = path.join(ROOT, 'crates/render/tests/data');
const ARCHIVE = path.join(DATA, 'tiles/monaco-openmaptiles.pmtiles');
const bench = new addon.StreetBench(path.join(DATA, 'countries.geojson'), LABEL_FONT, path.join(TABLES_DIR, 'themes.json'), ARCHIVE);
const THEMES = (await import(path.join(TABLES_DIR, 'themes.json'), { with: { type: 'json' } })).default as Record<string, Record<string, string>>;

const [W, H, STYLE] = [1200, 800, 'voyager'];
const [LAT, LNG] = [43.7366, 7.4214];
const RUNS = Number(process.env.STOREMAP_BENCH_RUNS ?? 40);

/** 200 markers inside the view (a fixed LCG, so every run draws the same). */
function markers(zoom: number): { lat: Float64Array; lng: Float64Array; px: Float64Array } {
  let s = 12345n;
  const next = () => {
    s = (s * 6364136223846793005n + 1442695040888963407n) & 0xffffffffffffffffn;
    return Number(s >> 11n) / 2 ** 53;
  };
  const span = W / (256 * 2 ** zoom);
  const lat = new Float64Array(200);
  const lng = new Float64Array(200);
  const px = new Float64Array(400);
  const world = (la: number, ln: number) => {
    const phi = (la * Math.PI) / 180;
    return [((ln + 180) / 360) * 256, ((1 - Math.log(Math.tan(phi) + 1 / Math.cos(phi)) / Math.PI) / 2) * 256];
  };
  const [cx, cy] = world(LAT, LNG);
  const k = 2 ** zoom;
  for (let i = 0; i < 200; i++) {
    lng[i] = LNG + (next() - 0.5) * span * 360 * 0.9;
    lat[i] = LAT + (next() - 0.5) * span * 360 * 0.5 * Math.cos((LAT * Math.PI) / 180);
    const [x, y] = world(lat[i], lng[i]);
    px[2 * i] = (x - cx) * k + W / 2;
    px[2 * i + 1] = (y - cy) * k + H / 2;
  }
  return { lat, lng, px };
}

function time(fn: () => unknown): number[] {
  for (let i = 0; i < 3; i++) fn();
  const xs: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    fn();
    xs.push(performance.now() - t);
  }
  return xs;
}

async function timeAsync(fn: () => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < 3; i++) await fn();
  const xs: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    await fn();
    xs.push(performance.now() - t);
  }
  return xs;
}

/** The peer's Path2D for each operation, made once (untimed), as our side gets its geometry. */
function peerPaths(ops: PeerOp[]): { op: PeerOp; path: Path2D }[] {
  return ops.map((op) => {
    const p = new Path2D();
    const c = op.commands;
    for (let i = 0; i < c.length; i += 3) {
      if (c[i] === 0) p.moveTo(c[i + 1], c[i + 2]);
      else if (c[i] === 1) p.lineTo(c[i + 1], c[i + 2]);
      else p.closePath();
    }
    return { op, path: p };
  });
}

async function peer(zoom: number): Promise<number[]> {
  const m = markers(zoom);
  const paths = peerPaths(bench.ops(LAT, LNG, zoom, W, H, STYLE));
  const theme = THEMES[STYLE];
  const canvas = createCanvas(W, H);
  const ctx = canvas.getContext('2d');
  return timeAsync(async () => {
    ctx.globalAlpha = 1;
    ctx.fillStyle = theme.land;
    ctx.fillRect(0, 0, W, H);
    for (const { op, path } of paths) {
      ctx.globalAlpha = op.alpha / 255;
      if (op.width === undefined) {
        ctx.fillStyle = op.color;
        ctx.fill(path, 'nonzero');
      } else {
        ctx.strokeStyle = op.color;
        ctx.lineWidth = op.width;
        ctx.lineCap = op.round ? 'round' : 'butt';
        ctx.lineJoin = op.round ? 'round' : 'bevel';
        ctx.setLineDash(op.dash ?? []);
        ctx.stroke(path);
      }
    }
    ctx.globalAlpha = 1;
    ctx.setLineDash([]);
    ctx.fillStyle = theme.marker;
    ctx.strokeStyle = theme.marker_stroke;
    ctx.lineWidth = 1.2;
    for (let i = 0; i < m.px.length; i += 2) {
      ctx.beginPath();
      ctx.arc(m.px[i], m.px[i + 1], 5, 0, 2 * Math.PI);
      ctx.fill();
      ctx.stroke();
    }
    return canvas.encode('png');
  });
}

const fmt = (x: number) => x.toFixed(1);
const rows: string[] = [];
const lines: string[] = [];
for (const zoom of [15, 17]) {
  const m = markers(zoom);
  const draw = (streets: boolean, cold: boolean, lng = LNG) => bench.render(LAT, lng, zoom, W, H, m.lat, m.lng, STYLE, streets, cold);
  const ne = median(time(() => draw(false, false)));
  const warm = median(time(() => draw(true, false)));
  const cold = median(time(() => draw(true, true)));
  let step = 0;
  const degPerPx = 360 / (256 * 2 ** zoom);
  const pan = median(time(() => draw(true, false, LNG + ++step * 37 * degPerPx)));
  const skia = median(await peer(zoom));
  console.log(`zoom ${zoom}: natural earth ${fmt(ne)} ms, street map warm ${fmt(warm)}, cold ${fmt(cold)}, panning ${fmt(pan)}; @napi-rs/canvas ${fmt(skia)} ms`);
  rows.push(`| ${zoom} | ${fmt(ne)} | ${fmt(warm)} (${(warm / ne).toFixed(1)}x) | ${fmt(cold)} | ${fmt(pan)} | ${fmt(skia)} | ${(skia / warm).toFixed(1)}x warm, ${(skia / cold).toFixed(1)}x cold |`);
  lines.push(`zoom ${zoom}`);
}

writeSection(
  'streets',
  `## Street maps (\`bench/streets.ts\`)

\`bash scripts/build.sh --testing && node --import tsx bench/streets.ts\`: a ${W} x ${H} map with 200 markers over Monaco, drawn from
tilemaker's OpenMapTiles archive of OpenStreetMap's Monaco (193 kB, zooms 0-14), style ${STYLE}, p50 of ${RUNS} calls in one process on the
calling thread (our render uses its two band threads and, cold, two cell threads). Peer: @napi-rs/canvas (Skia) stroking and filling our
exact drawing operations (handed over untimed), 200 arcs, PNG encode.

| zoom | Natural Earth map, ms | street map warm, ms (x Natural Earth) | cold, ms | panning 37 px a call, ms | @napi-rs/canvas, ms | ours faster by |
|---|---|---|---|---|---|---|
${rows.join('\n')}
`,
);
