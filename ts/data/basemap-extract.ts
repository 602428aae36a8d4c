/**
 * `storemap basemap extract`: a region of a PMTiles archive written as an archive of its own,
 * reading only the byte ranges it needs, as the `pmtiles extract` tool does: an operator gets a
 * country out of the Protomaps daily planet build (about 120 GB) with a few hundred HTTP range
 * requests instead of downloading it. The format (which ranges, the directories, the new
 * archive) is the render crate's `tiles::extract`, through the addon's `BasemapExtract`; this
 * module only reads: `Range: bytes=a-b` requests with Node's `fetch` and data fetch's watchdog
 * (every answer must be 206 with the asked range; the archive must not change under us: the
 * first answer's strong ETag is sent as `If-Match` on the rest, and every answer must carry the
 * first one's ETag and size), or positioned reads of a local file.
 */
import { rmSync } from 'node:fs';
import { open, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import { BasemapExtract, type ExtractSummary } from '../native.ts';
import { causeMessage, contentRange, request } from './fetch/download.ts';

/** Range requests in flight at once. */
const CONCURRENCY = 4;
/** The spec keeps the header and the root directory within the first 16 KiB. */
const HEAD_BYTES = 16_384;

export interface ExtractOptions {
  /** An http(s) URL or a file path. */
  from: string;
  out: string;
  /** [west, south, east, north] */
  bbox: [number, number, number, number];
  minZoom: number;
  maxZoom: number;
  /** How long a request may wait for an answer, or for its next bytes (STOREMAP_FETCH_STALL_MS). */
  stallMs: number;
}

export interface ExtractResult extends ExtractSummary {
  /** Bytes read from the source, and requests made (files: reads). */
  bytesRead: number;
  requests: number;
  /** The source's size, when known. */
  sourceBytes?: number;
}

interface Source {
  read(offset: number, length: number): Promise<Buffer>;
  size(): number | undefined;
  close(): Promise<void>;
  requests: number;
  bytes: number;
}

/** Reads ranges of an http(s) archive; refuses a server that ignores ranges or an archive that
 * changes while it is read. Every answer must carry the first one's ETag and size: a server (or
 * a cache in front of it) that ignores `If-Match` still cannot mix two versions of the file. */
function httpSource(url: string, stallMs: number): Source {
  let first: { etag: string | null; total: number | undefined } | undefined;
  const http = { fetch: globalThis.fetch, config: { stallMs } };
  const changed = (how: string) => new Error(`${url} changed while it was read (${how}): run the extract again`);
  const get = async (offset: number, length: number, retried: boolean): Promise<Buffer> => {
    const headers: Record<string, string> = { 'user-agent': 'storemap-basemap-extract', range: `bytes=${offset}-${offset + length - 1}` };
    // If-Match compares strongly (RFC 9110 §13.1.1): a weak validator never matches there, so
    // only a strong one is sent; either is compared below.
    if (first?.etag && !first.etag.startsWith('W/')) headers['if-match'] = first.etag;
    const res = await request(http, url, headers);
    src.requests++;
    if (res.status === 412) {
      await res.body?.cancel();
      throw changed('its ETag moved');
    }
    if (res.status === 416) {
      await res.body?.cancel();
      const size = Number(/\/(\d+)$/.exec(res.headers.get('content-range') ?? '')?.[1] ?? NaN);
      // Asked past the end: the head's 16 KiB of a smaller file, asked once more for what it has.
      if (offset === 0 && !retried && size > 0 && size < length) return get(0, size, true);
      throw new Error(`${url}: answered 416 to bytes ${offset}-${offset + length - 1}${size === 0 ? ' (the file is empty)' : ''}: not a PMTiles archive that can be read`);
    }
    if (res.status !== 206) {
      await res.body?.cancel();
      throw new Error(`${url}: answered ${res.status} to a range request; the server must support HTTP range requests (206 Partial Content)`);
    }
    const range = contentRange(res.headers.get('content-range'));
    if (!range || range.start !== offset) {
      await res.body?.cancel();
      throw new Error(`${url}: answered ${JSON.stringify(res.headers.get('content-range'))} to a request for bytes ${offset}-${offset + length - 1}`);
    }
    const etag = res.headers.get('etag');
    const { total } = range;
    if (first === undefined) first = { etag, total };
    else if (etag !== first.etag || total !== first.total) {
      await res.body?.cancel();
      throw changed(etag !== first.etag ? `its ETag was ${first.etag}, now ${etag}` : `its size was ${first.total} bytes, now ${total}`);
    }
    // A body that stalls or breaks off names the URL as a request that got no answer does.
    const body = Buffer.from(
      await res.arrayBuffer().catch((e: unknown) => {
        throw new Error(`GET ${url} failed: ${causeMessage(e)}`);
      }),
    );
    src.bytes += body.length;
    // The last range of a file shorter than the head asked for ends early; any other short
    // answer is an error (the state machine checks lengths too).
    return body;
  };
  const src: Source = {
    requests: 0,
    bytes: 0,
    size: () => first?.total,
    close: async () => {},
    read: (offset, length) => get(offset, length, false),
  };
  return src;
}

async function fileSource(file: string): Promise<Source> {
  // Looked at before it is opened: opening a FIFO waits for a writer, for ever.
  const st = await stat(file);
  if (!st.isFile()) throw new Error(`${file} is not a regular file (a folder, a pipe or a device)`);
  const fh = await open(file, 'r');
  const size = st.size;
  const src: Source = {
    requests: 0,
    bytes: 0,
    size: () => size,
    close: () => fh.close(),
    async read(offset, length) {
      const n = Math.max(0, Math.min(length, size - offset));
      const buf = Buffer.alloc(n);
      const { bytesRead } = await fh.read(buf, 0, n, offset);
      src.requests++;
      src.bytes += bytesRead;
      return buf.subarray(0, bytesRead);
    },
  };
  return src;
}

/** Reads every range, at most CONCURRENCY at once, in order. */
async function readAll(src: Source, ranges: { offset: number; length: number }[]): Promise<Buffer[]> {
  const out: Buffer[] = new Array(ranges.length);
  let next = 0;
  const worker = async () => {
    while (next < ranges.length) {
      const i = next++;
      out[i] = await src.read(ranges[i].offset, ranges[i].length);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, ranges.length) }, worker));
  return out;
}

/** Signals that stop an extract: its tile data, gigabytes for a country, is removed first. */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

export async function extractBasemap(o: ExtractOptions): Promise<ExtractResult> {
  const src = /^https?:\/\//i.test(o.from) ? httpSource(o.from, o.stallMs) : await fileSource(o.from);
  const dataPath = `${o.out}.tiles.part`;
  // The archive itself is written by `finish`, synchronously: a signal is handled after it,
  // when its own temporary file is renamed or gone.
  const stop = (signal: NodeJS.Signals) => {
    rmSync(dataPath, { force: true });
    process.exit(128 + os.constants.signals[signal]);
  };
  for (const s of STOP_SIGNALS) process.once(s, stop);
  try {
    const head = await src.read(0, HEAD_BYTES);
    const ex = new BasemapExtract(head, o.bbox, o.minZoom, o.maxZoom, dataPath);
    for (let want = ex.ranges(); want.length > 0; want = ex.ranges()) ex.feed(await readAll(src, want));
    const summary = ex.finish(o.out);
    return { ...summary, bytesRead: src.bytes, requests: src.requests, sourceBytes: src.size() };
  } finally {
    for (const s of STOP_SIGNALS) process.off(s, stop);
    await src.close();
    await rm(dataPath, { force: true });
  }
}

/** `--bbox S,W,N,E` (the API's `bounds` order) as [west, south, east, north]. */
export function parseBbox(value: string): [number, number, number, number] {
  const fields = value.split(',').map((v) => v.trim());
  // Number('') is 0: an empty field would be the equator or the prime meridian.
  const parts = fields.map((v) => (v === '' ? NaN : Number(v)));
  if (parts.length !== 4 || parts.some((v) => !Number.isFinite(v))) throw new Error(`--bbox must be S,W,N,E in degrees, not "${value}"`);
  const [s, w, n, e] = parts;
  if (s < -90 || n > 90 || s > n || w < -180 || w > 180 || e < -180 || e > 180) throw new Error(`--bbox ${value}: south must be at most north, latitudes within ±90, longitudes within ±180`);
  return [w, s, e, n];
}
