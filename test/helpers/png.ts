// Decoded images and pixel arithmetic for the map tests: real PNG and JPEG decoders, colour
// comparison with a tolerance, and an independent Web Mercator (256-px world at zoom 0) to
// say where a lat/lng must land in a map image.
import jpeg from 'jpeg-js';
import { PNG } from 'pngjs';

export type RGBA = [number, number, number, number];
export type RGB = [number, number, number];

export interface Image {
  width: number;
  height: number;
  /** RGBA, 4 bytes a pixel, straight (not premultiplied) alpha. */
  data: Uint8Array;
}

export function decodePng(bytes: Buffer): Image {
  const img = PNG.sync.read(bytes);
  return { width: img.width, height: img.height, data: img.data };
}

export function decodeJpeg(bytes: Buffer): Image {
  const img = jpeg.decode(bytes, { useTArray: true, formatAsRGBA: true });
  return { width: img.width, height: img.height, data: img.data };
}

/** "#1F2937" -> [31, 41, 55] */
export function hex(s: string): RGB {
  const h = s.replace(/^#/, '');
  if (!/^[0-9a-fA-F]{6}$/.test(h)) throw new Error(`not a hex colour: ${s}`);
  const v = parseInt(h, 16);
  return [(v >> 16) & 255, (v >> 8) & 255, v & 255];
}

export function pixel(img: Image, x: number, y: number): RGBA {
  const xi = Math.floor(x);
  const yi = Math.floor(y);
  if (xi < 0 || yi < 0 || xi >= img.width || yi >= img.height) throw new Error(`pixel (${x}, ${y}) is outside ${img.width}x${img.height}`);
  const i = (yi * img.width + xi) * 4;
  return [img.data[i], img.data[i + 1], img.data[i + 2], img.data[i + 3]];
}

/** Every colour channel within `tol` of `c` (alpha ignored). */
export function near(p: ArrayLike<number>, c: RGB, tol: number): boolean {
  return Math.abs(p[0] - c[0]) <= tol && Math.abs(p[1] - c[1]) <= tol && Math.abs(p[2] - c[2]) <= tol;
}

export interface Box {
  x0: number;
  y0: number;
  /** exclusive */
  x1: number;
  /** exclusive */
  y1: number;
}

/** Pixels of `box` (clipped to the image) for which `pred` holds. */
export function countIn(img: Image, box: Box, pred: (p: RGBA, x: number, y: number) => boolean): number {
  let n = 0;
  for (let y = Math.max(0, Math.floor(box.y0)); y < Math.min(img.height, Math.ceil(box.y1)); y++) {
    for (let x = Math.max(0, Math.floor(box.x0)); x < Math.min(img.width, Math.ceil(box.x1)); x++) {
      if (pred(pixel(img, x, y), x, y)) n++;
    }
  }
  return n;
}

export const fmt = (p: ArrayLike<number>) => `(${Array.from(p).join(',')})`;

// ------------------------------------------------------------------ Web Mercator

const MAX_LAT = 85.05112877980659;

/** Zoom-0 world pixels (the world is 256 px wide). */
export function world(lat: number, lng: number): [number, number] {
  const phi = (Math.max(-MAX_LAT, Math.min(MAX_LAT, lat)) * Math.PI) / 180;
  const x = ((lng + 180) / 360) * 256;
  const y = ((1 - Math.log(Math.tan(phi) + 1 / Math.cos(phi)) / Math.PI) / 2) * 256;
  return [x, y];
}

/** lat/lng -> image pixel (continuous: pixel i covers [i, i + 1)). */
export type Projector = (lat: number, lng: number) => [number, number];

function centred(cx: number, cy: number, k: number, width: number, height: number): Projector {
  return (lat, lng) => {
    const [x, y] = world(lat, lng);
    return [(x - cx) * k + width / 2, (y - cy) * k + height / 2];
  };
}

/** A [south, west, north, east] box fitted to the image, aspect kept, centred. */
export function boundsProjector([s, w, n, e]: [number, number, number, number], width: number, height: number): Projector {
  const [x0, y0] = world(n, w);
  const [x1, y1] = world(s, e);
  const k = Math.min(width / (x1 - x0), height / (y1 - y0));
  return centred((x0 + x1) / 2, (y0 + y1) / 2, k, width, height);
}

/** A country's frame as README's "Framing" describes it: its box with 5 % of its height and
 * width added on each side. */
export function countryFrame([s, w, n, e]: [number, number, number, number]): [number, number, number, number] {
  const [dy, dx] = [(n - s) * 0.05, (e - w) * 0.05];
  return [s - dy, w - dx, n + dy, e + dx];
}

/** [lat, lng] in the middle of the image at an integer zoom. */
export function centerZoomProjector([lat, lng]: [number, number], zoom: number, width: number, height: number): Projector {
  const [cx, cy] = world(lat, lng);
  return centred(cx, cy, 2 ** zoom, width, height);
}
