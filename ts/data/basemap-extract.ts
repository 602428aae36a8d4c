/**
 * `storemap basemap extract`: a region of a PMTiles archive written as an archive of its own,
 * reading only the byte ranges it needs, as the `pmtiles extract` tool does: an operator gets a
 * country out of the Protomaps daily planet build (about 120 GB) with a few hundred HTTP range
 * requests instead of downloading it. The format (which ranges, the directories, the new
 * archive) is the render crate's `tiles::extract`, through the addon's `BasemapExtract`; this
 * module only reads: `Range: bytes=a-b` requests with Node's `fetch` (every answer must be 206
 * with the asked length; the archive must not change under us: the first answer's ETag is sent
 * as `If-Match` on the rest), or positioned reads of a local file.
 */
import { open, rm, stat } from 'node:fs/promises';
import { BasemapExtract, type ExtractSummary } from '../native.ts';
import { causeMessage } from './fetch/download.ts';

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
 * changes while it is read. */
function httpSource(url: string): Source {
  let etag: string | null | undefined;
  let total: number | undefined;
  const src: Source = {
    requests: 0,
    bytes: 0,
    size: () => total,
    close: async () => {},
    async read(offset, length) {
      const headers: Record<string, string> = { range: `bytes=${offset}-${offset + length - 1}` };
      if (etag) headers['if-match'] = etag;
      const res = await fetch(url, { headers }).catch((e: unknown) => {
        throw new Error(`GET ${url} failed: ${causeMessage(e)}`);
      });
      src.requests++;
      if (res.status === 412) throw new Error(`${url} changed while it was read (its ETag moved): run the extract again`);
      if (res.status === 416) {
        // Asked past the end: the header's first 16 KiB of a smaller file.
        const m = /\/(\d+)$/.exec(res.headers.get('content-range') ?? '');
        if (m && offset === 0) return src.read(0, Number(m[1]));
      }
      if (res.status !== 206) {
        await res.body?.cancel();
        throw new Error(`${url}: answered ${res.status} to a range request; the server must support HTTP range requests (206 Partial Content)`);
      }
      if (etag === undefined) etag = res.headers.get('etag');
      const m = /\/(\d+)$/.exec(res.headers.get('content-range') ?? '');
      if (m) total = Number(m[1]);
      const body = Buffer.from(await res.arrayBuffer());
      src.bytes += body.length;
      // The last range of a file shorter than the head asked for ends early; any other short
      // answer is an error (the state machine checks lengths too).
      return body;
    },
  };
  return src;
}

async function fileSource(file: string): Promise<Source> {
  const fh = await open(file, 'r');
  const size = (await stat(file)).size;
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

export async function extractBasemap(o: ExtractOptions): Promise<ExtractResult> {
  const src = /^https?:\/\//i.test(o.from) ? httpSource(o.from) : await fileSource(o.from);
  const dataPath = `${o.out}.tiles.part`;
  try {
    const head = await src.read(0, HEAD_BYTES);
    const ex = new BasemapExtract(head, o.bbox, o.minZoom, o.maxZoom, dataPath);
    for (let want = ex.ranges(); want.length > 0; want = ex.ranges()) ex.feed(await readAll(src, want));
    const summary = ex.finish(o.out);
    return { ...summary, bytesRead: src.bytes, requests: src.requests, sourceBytes: src.size() };
  } finally {
    await src.close();
    await rm(dataPath, { force: true });
  }
}

/** `--bbox S,W,N,E` (the API's `bounds` order) as [west, south, east, north]. */
export function parseBbox(value: string): [number, number, number, number] {
  const parts = value.split(',').map((v) => Number(v.trim()));
  if (parts.length !== 4 || parts.some((v) => !Number.isFinite(v))) throw new Error(`--bbox must be S,W,N,E in degrees, not "${value}"`);
  const [s, w, n, e] = parts;
  if (s < -90 || n > 90 || s > n || w < -180 || w > 180 || e < -180 || e > 180) throw new Error(`--bbox ${value}: south must be at most north, latitudes within ±90, longitudes within ±180`);
  return [w, s, e, n];
}
