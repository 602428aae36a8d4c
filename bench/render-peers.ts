// The peers of bench/render.ts: the same map drawn from JavaScript with @napi-rs/canvas (Skia)
// and as an SVG rasterized by @resvg/resvg-js. Everything that does not depend on the request
// being drawn is done once, untimed, and handed to the peers for free:
//  - the auto-fit camera (crates/render/src/camera.rs `Camera::new(Viewport::Auto, ..)` with
//    render.rs's whole-pixel corner, replicated below);
//  - the country rings (antimeridian-crossing rings unwrapped and repeated one world over, as
//    basemap.rs does) projected to image pixels, culled to the view by bounding box, sub-pixel
//    rings dropped, thinned at 0.5 px and then Douglas-Peucker-simplified at 0.7 px — the
//    renderer's own error bound, which it meets with the coarsest precomputed level under it,
//    so the peers never get more points than we draw; the big lakes (the reference's
//    lakes.geojson, which ours fills with the water colour over the land) likewise; the US state
//    lines when the renderer draws them (zoom ≥ 3);
//  - the markers projected to image pixels and culled as ours are.
// Not drawn by the peers: the city labels our renderer adds (more work on our side).
// Timed per request: canvas — water rect, one Path2D of every land ring (even-odd fill), one of
// every lake ring (even-odd, the water colour), the state lines (0.5 px, border colour at alpha 150), the borders (0.6 px), one arc fill + stroke
// per marker, PNG encode; resvg — building the SVG text from the projected coordinates,
// parsing it, rendering, PNG encode.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createCanvas, Path2D, type Canvas, type SKRSContext2D } from '@napi-rs/canvas';
import { Resvg } from '@resvg/resvg-js';
import { TABLES_DIR } from '../ts/paths.ts';

/** Web Mercator's latitude limit (camera.rs MAX_LAT). */
const MAX_LAT = 85.05112877980659;

/** World pixel coordinates at zoom 0 (0..256), as camera.rs `world`. */
export function world(lat: number, lng: number): [number, number] {
  const phi = (Math.min(Math.max(lat, -MAX_LAT), MAX_LAT) * Math.PI) / 180;
  const x = ((lng + 180) / 360) * 256;
  const y = ((1 - Math.log(Math.tan(phi) + 1 / Math.cos(phi)) / Math.PI) / 2) * 256;
  return [x, y];
}

export interface Camera {
  zoom: number;
  left: number;
  top: number;
  width: number;
  height: number;
  scale: number;
}

const camK = (c: Camera) => 2 ** c.zoom * c.scale;

function centred(cx0: number, cy0: number, zoom: number, width: number, height: number, scale: number): Camera {
  const k = 2 ** zoom * scale;
  return { zoom, left: cx0 * k - width / 2, top: cy0 * k - height / 2, width, height, scale };
}

/** camera.rs `Camera::new(Viewport::Auto, points, width, height, scale)`; points are [lat, lng]. */
export function autoCamera(lat: ArrayLike<number>, lng: ArrayLike<number>, width: number, height: number, scale: number): Camera {
  if (lat.length === 0) {
    const [x, y] = world(20, 0);
    return centred(x, y, 0, width, height, scale);
  }
  let [x0, y0, x1, y1] = [Infinity, Infinity, -Infinity, -Infinity];
  for (let i = 0; i < lat.length; i++) {
    const [x, y] = world(lat[i], lng[i]);
    x0 = Math.min(x0, x);
    x1 = Math.max(x1, x);
    y0 = Math.min(y0, y);
    y1 = Math.max(y1, y);
  }
  const pad = 0.08 * Math.min(width, height);
  const bw = Math.max(x1 - x0, 1e-9);
  const bh = Math.max(y1 - y0, 1e-9);
  const availW = Math.max(width - 2 * pad, 1) / scale;
  const availH = Math.max(height - 2 * pad, 1) / scale;
  const fitted = Math.min(Math.max(Math.log2(Math.min(availW / bw, availH / bh)), 0), 14);
  // Down to a whole step of AUTO_ZOOM_STEP, its corner on whole pixels (render.rs `mercator_camera`).
  const zoom = Math.floor(fitted / AUTO_ZOOM_STEP) * AUTO_ZOOM_STEP;
  const cam = centred((x0 + x1) / 2, (y0 + y1) / 2, zoom, width, height, scale);
  return { ...cam, left: Math.round(cam.left), top: Math.round(cam.top) };
}

/** camera.rs `Camera::new(Viewport::Bounds([south, west, north, east]), ..)` (the box fits,
 * no padding, zoom at most 18) with render.rs's whole-pixel corner. */
export function boundsCamera([s, w, n, e]: [number, number, number, number], width: number, height: number, scale: number): Camera {
  const [x0, y0] = world(n, w);
  const [x1, y1] = world(s, e);
  const bw = Math.max(x1 - x0, 1e-9);
  const bh = Math.max(y1 - y0, 1e-9);
  const zoom = Math.min(Math.max(Math.log2(Math.min(width / scale / bw, height / scale / bh)), 0), 18);
  const cam = centred((x0 + x1) / 2, (y0 + y1) / 2, zoom, width, height, scale);
  return { ...cam, left: Math.round(cam.left), top: Math.round(cam.top) };
}

/** camera.rs `AUTO_ZOOM_STEP`. */
const AUTO_ZOOM_STEP = 1 / 16;

/** One country ring in zoom-0 world pixels, x,y interleaved, with its bounding box. */
interface WorldRing {
  pts: Float64Array;
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

/**
 * Every polygon ring of a GeoJSON file of Polygon/MultiPolygon features, in world pixels. A ring
 * crossing the antimeridian gets continuous longitudes, and a copy one world-width over when it
 * runs past an edge (basemap.rs `Layer::from_shapes`).
 */
export function loadRings(geojson: string): WorldRing[] {
  const fc = JSON.parse(readFileSync(geojson, 'utf8')) as {
    features: { geometry: { type: string; coordinates: unknown } | null }[];
  };
  const rings: WorldRing[] = [];
  for (const f of fc.features) {
    const g = f.geometry;
    if (!g) continue;
    const polys = g.type === 'Polygon' ? [g.coordinates as number[][][]] : g.type === 'MultiPolygon' ? (g.coordinates as number[][][][]) : [];
    for (const poly of polys) {
      for (const ring of poly) {
        if (ring.length < 3) continue;
        const pts = new Float64Array(ring.length * 2);
        let [x0, y0, x1, y1] = [Infinity, Infinity, -Infinity, -Infinity];
        let shift = 0;
        ring.forEach(([lng, lat], i) => {
          if (i > 0) {
            const d = lng - ring[i - 1][0];
            if (d > 180) shift -= 360;
            else if (d < -180) shift += 360;
          }
          const [x, y] = world(lat, lng + shift);
          pts[2 * i] = x;
          pts[2 * i + 1] = y;
          x0 = Math.min(x0, x);
          y0 = Math.min(y0, y);
          x1 = Math.max(x1, x);
          y1 = Math.max(y1, y);
        });
        rings.push({ pts, x0, y0, x1, y1 });
        for (const dx of [x1 > 256 ? -256 : null, x0 < 0 ? 256 : null]) {
          if (dx === null) continue;
          const moved = pts.map((v, i) => (i % 2 === 0 ? v + dx : v));
          rings.push({ pts: moved, x0: x0 + dx, y0, x1: x1 + dx, y1 });
        }
      }
    }
  }
  return rings;
}

/** Douglas-Peucker over x,y-interleaved points: indices kept within `tol` of the original. */
function simplify(p: number[], tol: number): number[] {
  const n = p.length / 2;
  if (n < 4) return p;
  const keep = new Uint8Array(n);
  keep[0] = keep[n - 1] = 1;
  const stack: [number, number][] = [[0, n - 1]];
  const tol2 = tol * tol;
  while (stack.length) {
    const [a, b] = stack.pop()!;
    if (b <= a + 1) continue;
    const [ax, ay, bx, by] = [p[2 * a], p[2 * a + 1], p[2 * b], p[2 * b + 1]];
    const [dx, dy] = [bx - ax, by - ay];
    const len2 = dx * dx + dy * dy;
    let worst = 0;
    let at = a;
    for (let i = a + 1; i < b; i++) {
      const [px, py] = [p[2 * i], p[2 * i + 1]];
      let d2: number;
      if (len2 === 0) d2 = (px - ax) ** 2 + (py - ay) ** 2;
      else {
        const t = Math.min(Math.max(((px - ax) * dx + (py - ay) * dy) / len2, 0), 1);
        d2 = (px - ax - t * dx) ** 2 + (py - ay - t * dy) ** 2;
      }
      if (d2 > worst) [worst, at] = [d2, i];
    }
    if (worst > tol2) {
      keep[at] = 1;
      stack.push([a, at], [at, b]);
    }
  }
  const out: number[] = [];
  for (let i = 0; i < n; i++) if (keep[i]) out.push(p[2 * i], p[2 * i + 1]);
  return out;
}

/** The rings in view, in image pixels: culled, sub-pixel rings dropped, thinned, simplified. */
function project(rings: WorldRing[], cam: Camera): { rings: Float64Array[]; points: number } {
  const k = camK(cam);
  const [vx0, vy0, vx1, vy1] = [cam.left / k, cam.top / k, (cam.left + cam.width) / k, (cam.top + cam.height) / k];
  const minSide = 0.8 / k;
  const out: Float64Array[] = [];
  let points = 0;
  for (const r of rings) {
    if (r.x1 < vx0 || r.x0 > vx1 || r.y1 < vy0 || r.y0 > vy1) continue;
    if (r.x1 - r.x0 < minSide && r.y1 - r.y0 < minSide) continue;
    const n = r.pts.length / 2;
    const thin: number[] = [];
    let lx = 0;
    let ly = 0;
    for (let i = 0; i < n; i++) {
      const x = r.pts[2 * i] * k - cam.left;
      const y = r.pts[2 * i + 1] * k - cam.top;
      if (i === 0 || i === n - 1 || Math.hypot(x - lx, y - ly) >= 0.5) {
        thin.push(x, y);
        lx = x;
        ly = y;
      }
    }
    const kept = simplify(thin, 0.7).map((v) => Math.round(v * 100) / 100);
    if (kept.length < 6) continue;
    out.push(Float64Array.from(kept));
    points += kept.length / 2;
  }
  return { rings: out, points };
}

export interface Theme {
  water: string;
  land: string;
  border: string;
  marker: string;
  marker_stroke: string;
}

export function loadTheme(style: string): Theme {
  const themes = JSON.parse(readFileSync(path.join(TABLES_DIR, 'themes.json'), 'utf8')) as Record<string, Theme>;
  return themes[style];
}

/** A scene ready for the peers: everything in image pixels. */
export interface PeerScene {
  width: number;
  height: number;
  theme: Theme;
  /** Land rings, image pixels, x,y interleaved, rounded to 0.01 px. */
  rings: Float64Array[];
  /** Lake rings, image pixels, as the land's: filled with the water colour over the land. */
  lakes: Float64Array[];
  /** US state rings when the renderer draws state lines (zoom ≥ 3), else none. */
  states: Float64Array[];
  landPoints: number;
  lakePoints: number;
  statePoints: number;
  /** Marker centres, image pixels, x,y interleaved: every group's, in drawing order. */
  markers: Float64Array;
  /** Each group's fill and its markers' end in `markers` (x,y pairs counted as two), in order. */
  groups: { fill: string; end: number }[];
  radius: number;
  stroke: number;
}

/** basemap.rs STATE_LINES_MIN_ZOOM. */
const STATE_LINES_MIN_ZOOM = 3;

/** render.rs `COMPANY_PALETTE`: a multi-company map's colours when the request gives none. */
const COMPANY_PALETTE = ['#2563EB', '#DC2626', '#16A34A', '#D97706', '#7C3AED'];

/** Everything a peer may reuse for one request, computed once for the camera of its markers.
 * Several groups (one per company) take the company palette, one the theme's marker colour;
 * `bounds` [south, west, north, east] frames the view, else it fits the markers. */
export function prepareScene(
  land: WorldRing[],
  lakes: WorldRing[],
  states: WorldRing[],
  groupsIn: { lat: ArrayLike<number>; lng: ArrayLike<number> }[],
  width: number,
  height: number,
  theme: Theme,
  bounds?: [number, number, number, number],
): PeerScene {
  const scale = 1;
  const lat = groupsIn.flatMap((g) => Array.from(g.lat));
  const lng = groupsIn.flatMap((g) => Array.from(g.lng));
  const cam = bounds ? boundsCamera(bounds, width, height, scale) : autoCamera(lat, lng, width, height, scale);
  const k = camK(cam);
  const l = project(land, cam);
  const lk = project(lakes, cam);
  const st = cam.zoom >= STATE_LINES_MIN_ZOOM ? project(states, cam) : { rings: [], points: 0 };
  // Markers outside the view plus the marker sprite's reach are culled, as render.rs does.
  const radius = 5 * scale;
  const stroke = 1.2 * scale;
  const reach = Math.ceil(2 * (radius + stroke)) + 2;
  const m: number[] = [];
  const groups = groupsIn.map((g, gi) => {
    for (let i = 0; i < g.lat.length; i++) {
      const [wx, wy] = world(g.lat[i], g.lng[i]);
      const x = wx * k - cam.left;
      const y = wy * k - cam.top;
      if (x < -reach || y < -reach || x > width + reach || y > height + reach) continue;
      m.push(Math.round(x * 100) / 100, Math.round(y * 100) / 100);
    }
    return { fill: groupsIn.length > 1 ? COMPANY_PALETTE[gi % COMPANY_PALETTE.length] : theme.marker, end: m.length };
  });
  return { width, height, theme, rings: l.rings, lakes: lk.rings, states: st.rings, landPoints: l.points, lakePoints: lk.points, statePoints: st.points, markers: Float64Array.from(m), groups, radius, stroke };
}

/** SVG path data of rings, as the per-request work of a peer builds it. */
function pathData(rings: Float64Array[], close: boolean): string {
  const parts: string[] = [];
  for (const r of rings) {
    let d = `M${r[0]} ${r[1]}`;
    for (let i = 2; i < r.length; i += 2) d += `L${r[i]} ${r[i + 1]}`;
    parts.push(close ? d + 'Z' : d);
  }
  return parts.join('');
}

/** The state lines' colour: the theme's border at alpha 150 (basemap.rs). */
function stateColor(t: Theme): string {
  const n = parseInt(t.border.slice(1), 16);
  return `rgba(${n >> 16}, ${(n >> 8) & 255}, ${n & 255}, ${(150 / 255).toFixed(4)})`;
}

// ---- @napi-rs/canvas (Skia)

export interface CanvasPeer {
  canvas: Canvas;
  ctx: SKRSContext2D;
}

/** One opaque canvas per scene, reused across requests (allocation is not timed). */
export function canvasFor(s: PeerScene): CanvasPeer {
  const canvas = createCanvas(s.width, s.height);
  const ctx = canvas.getContext('2d', { alpha: false });
  return { canvas, ctx };
}

/** How the land path is handed to Skia: SVG path text (one call) or moveTo/lineTo calls. */
export type LandMode = 'path-data' | 'calls';

function canvasPath(rings: Float64Array[], mode: LandMode, close: boolean): Path2D {
  if (mode === 'path-data') return new Path2D(pathData(rings, close));
  const p = new Path2D();
  for (const r of rings) {
    p.moveTo(r[0], r[1]);
    for (let i = 2; i < r.length; i += 2) p.lineTo(r[i], r[i + 1]);
    if (close) p.closePath();
  }
  return p;
}

export function drawCanvas(p: CanvasPeer, s: PeerScene, mode: LandMode): Promise<Buffer> {
  const { canvas, ctx } = p;
  ctx.fillStyle = s.theme.water;
  ctx.fillRect(0, 0, s.width, s.height);
  const land = canvasPath(s.rings, mode, true);
  ctx.fillStyle = s.theme.land;
  ctx.fill(land, 'evenodd');
  if (s.lakes.length) {
    ctx.fillStyle = s.theme.water;
    ctx.fill(canvasPath(s.lakes, mode, true), 'evenodd');
  }
  if (s.states.length) {
    ctx.strokeStyle = stateColor(s.theme);
    ctx.lineWidth = 0.5;
    ctx.stroke(canvasPath(s.states, mode, true));
  }
  ctx.strokeStyle = s.theme.border;
  ctx.lineWidth = 0.6;
  ctx.stroke(land);
  ctx.strokeStyle = s.theme.marker_stroke;
  ctx.lineWidth = s.stroke;
  const m = s.markers;
  let i = 0;
  for (const g of s.groups) {
    ctx.fillStyle = g.fill;
    for (; i < g.end; i += 2) {
      ctx.beginPath();
      ctx.arc(m[i], m[i + 1], s.radius, 0, 2 * Math.PI);
      ctx.fill();
      ctx.stroke();
    }
  }
  return canvas.encode('png', { resolution: 96 });
}

/** Skia's PNG encode of the canvas as it stands (the peer's own encode floor). */
export function encodeCanvasOnly(p: CanvasPeer): Promise<Buffer> {
  return p.canvas.encode('png', { resolution: 96 });
}

// ---- SVG + @resvg/resvg-js

export function svgText(s: PeerScene): string {
  const t = s.theme;
  // The land path once, used for the fill and again for the borders over the state lines.
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="${s.width}" height="${s.height}" viewBox="0 0 ${s.width} ${s.height}">`,
    `<defs><path id="land" d="${pathData(s.rings, true)}"/></defs>`,
    `<rect width="${s.width}" height="${s.height}" fill="${t.water}"/>`,
    `<use xlink:href="#land" fill="${t.land}" fill-rule="evenodd"/>`,
  ];
  if (s.lakes.length) parts.push(`<path d="${pathData(s.lakes, true)}" fill="${t.water}" fill-rule="evenodd"/>`);
  if (s.states.length) parts.push(`<path d="${pathData(s.states, true)}" fill="none" stroke="${t.border}" stroke-opacity="${(150 / 255).toFixed(4)}" stroke-width="0.5"/>`);
  parts.push(`<use xlink:href="#land" fill="none" stroke="${t.border}" stroke-width="0.6"/>`);
  const m = s.markers;
  let i = 0;
  for (const g of s.groups) {
    parts.push(`<g fill="${g.fill}" stroke="${t.marker_stroke}" stroke-width="${s.stroke}">`);
    for (; i < g.end; i += 2) parts.push(`<circle cx="${m[i]}" cy="${m[i + 1]}" r="${s.radius}"/>`);
    parts.push('</g>');
  }
  parts.push('</svg>');
  return parts.join('');
}

/** No system font scan: the map has no text, and the scan would dominate small renders. */
const RESVG_OPTS = { font: { loadSystemFonts: false }, dpi: 96 } as const;

export function drawResvg(s: PeerScene): Buffer {
  return new Resvg(svgText(s), RESVG_OPTS).render().asPng();
}

/** The raw RGBA pixels of the resvg rendering (for the agreement check, untimed). */
export function resvgPixels(s: PeerScene): Buffer {
  return new Resvg(svgText(s), RESVG_OPTS).render().pixels;
}
