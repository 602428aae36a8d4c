// One GeoParquet file of a worldwide release cut to an area by HTTP range requests, as
// `overturemaps download --bbox` and DuckDB read Overture: the footer from the end of the file,
// then only the row groups whose bbox statistics meet the area (the addon's GeoParquetCut
// decides which, and writes the file of just those). A country costs its row groups, not the
// release. Resumable like a whole download: the ranges go one after another to
// `<file>.ranges.part` (its own name: a whole download's `.part` of the same file must never be
// continued from it), with what they were cut from (URL, ETag, ranges) in a hidden
// `.ranges-info`; a run that finds
// the same plan appends where the part ends. Every range is asked with `If-Match` on the ETag
// the first answer gave, so a file replaced on the server mid-way is refused, not spliced.
import { createWriteStream } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { GeoParquetCut, PARQUET_TAIL_BYTES, parquetFooterLength, type ByteRange } from '../../native.ts';
import { contentRange, formatBytes, httpError, request } from './download.ts';
import type { Area, Ctx, FetchedFile, FileSpec } from './plan.ts';

/** What a cut file was made from, kept beside it so that next week's run can tell it is current. */
interface CutInfo {
  url: string;
  etag?: string;
  size: number;
  area: Area['boxes'];
}

/** What a `.part` of ranges was started from: a resumed part must continue the same plan. */
interface PartInfo extends CutInfo {
  ranges: ByteRange[];
}

async function readJson<T>(file: string): Promise<T | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The notes and part a cut of `dest` keeps: removed when the file is downloaded whole instead,
 * so that no later run takes the whole file for a current cut or continues a part of ranges. */
export async function forgetCut(dest: string): Promise<void> {
  const dir = path.dirname(dest);
  const name = path.basename(dest);
  for (const f of [`${dest}.ranges.part`, path.join(dir, `.${name}.ranges-info`), path.join(dir, `.${name}.cut-info`)]) await rm(f, { force: true });
}

/**
 * Cuts `spec` (whose size the listing gave) to `area` into `spec.dest`; `undefined` when the file
 * cannot be cut (no bbox statistics, a server without ranges): the caller downloads it whole.
 */
export async function cutFile(ctx: Ctx, spec: FileSpec & { size: number }, area: Area): Promise<FetchedFile | undefined> {
  const { dest, url, size } = spec;
  const label = `${spec.source}: ${path.basename(dest)}`;
  const part = `${dest}.ranges.part`;
  const partInfoFile = path.join(path.dirname(dest), `.${path.basename(dest)}.ranges-info`);
  const cutInfoFile = path.join(path.dirname(dest), `.${path.basename(dest)}.cut-info`);
  await mkdir(path.dirname(dest), { recursive: true });
  let requests = 0;
  let bytesRead = 0;
  let etag: string | undefined;

  /** Bytes [offset, offset + length) as a 206 stream, checked to start where asked. */
  const ranged = async (offset: number, length: number): Promise<Response> => {
    const headers: Record<string, string> = { range: `bytes=${offset}-${offset + length - 1}`, 'accept-encoding': 'identity' };
    if (etag) headers['if-match'] = etag;
    const res = await request(ctx, url, headers);
    requests++;
    if (res.status === 412) {
      await res.body?.cancel();
      throw new Error(`${label}: ${url} changed on the server while it was read (its ETag moved); run the command again`);
    }
    if (res.status !== 206) {
      if (res.status === 200) return res;
      throw await httpError(res, url, spec.source);
    }
    if (contentRange(res.headers.get('content-range'))?.start !== offset) {
      await res.body?.cancel();
      throw new Error(`${label}: asked for bytes from ${offset}, ${url} answered ${res.headers.get('content-range')}`);
    }
    return res;
  };
  const readBytes = async (offset: number, length: number): Promise<Buffer | undefined> => {
    const res = await ranged(offset, length);
    if (res.status === 200) {
      await res.body?.cancel();
      return undefined;
    }
    etag ??= res.headers.get('etag') ?? undefined;
    const body = Buffer.from(await res.arrayBuffer());
    bytesRead += body.length;
    if (body.length !== length) throw new Error(`${label}: asked for ${length} bytes at ${offset}, got ${body.length}`);
    return body;
  };

  // The footer: one read from the end, and a second when it is larger than that.
  const first = Math.min(PARQUET_TAIL_BYTES, size);
  let tail = await readBytes(size - first, first);
  if (!tail) {
    ctx.warn(`${label}: ${url} does not answer range requests (HTTP 200), so it cannot be cut to ${area.label}; downloading it whole`);
    return undefined;
  }
  // The addon's refusal (INVALID_SOURCE: not Parquet, a damaged footer) names no file: this does.
  const named = <T>(step: () => T): T => {
    try {
      return step();
    } catch (e) {
      throw new Error(`${label}: ${url}: ${e instanceof Error ? e.message : String(e)}`);
    }
  };
  const need = named(() => parquetFooterLength(tail!, size));
  if (need > tail.length) {
    const more = await readBytes(size - need, need - tail.length);
    tail = Buffer.concat([more!, tail]);
  }
  const cut = named(() => new GeoParquetCut(tail!, size, area.boxes));
  if (!cut.filterable) {
    ctx.warn(`${label}: the file has no bbox column statistics to cut by, so all of it is downloaded (${formatBytes(size)})`);
    return undefined;
  }
  const plan = cut.summary();
  const ranges = cut.ranges();
  const result = (status: FetchedFile['status'], bytes: number): FetchedFile => ({
    source: spec.source,
    url,
    path: dest,
    bytes,
    check: 'ranges',
    status,
    cut: { bytesRead, fileSize: size, requests, rowGroups: plan.rowGroups, keptRowGroups: plan.keptRowGroups, rows: plan.keptRows },
  });
  const want: CutInfo = { url, etag, size, area: area.boxes };

  // Cut from this very file for this area before: nothing to read but the footer.
  const done = await readJson<CutInfo>(cutInfoFile);
  const existing = await stat(dest).catch(() => undefined);
  if (existing?.isFile() && done && same(done, want)) {
    ctx.log(`${label}: up to date (cut to ${area.label} from the same file)`);
    return result('up-to-date', existing.size);
  }

  let offset = (await stat(part).catch(() => undefined))?.size ?? 0;
  const partInfo = offset > 0 ? await readJson<PartInfo>(partInfoFile) : undefined;
  if (offset > 0 && !(partInfo && same(partInfo, { ...want, ranges }))) {
    ctx.log(`${label}: the partial file was cut from another version of the file or for another area; starting again`);
    offset = 0;
  }
  const total = ranges.reduce((n, r) => n + r.length, 0);
  if (offset > total) offset = 0;
  if (offset === 0) {
    await writeFile(part, '');
    await writeFile(partInfoFile, JSON.stringify({ ...want, ranges } satisfies PartInfo));
  }
  const resumedAt = offset;
  ctx.log(
    `${label}: ${plan.keptRowGroups} of ${plan.rowGroups} row groups meet ${area.label}: reading ${formatBytes(total)} of ${formatBytes(size)}` +
      (resumedAt > 0 ? `, resuming at ${formatBytes(resumedAt)}` : ''),
  );

  // The ranges, one after another, from where the part ends.
  let before = 0;
  for (const r of ranges) {
    const from = Math.max(offset - before, 0);
    before += r.length;
    if (from >= r.length) continue;
    const res = await ranged(r.offset + from, r.length - from);
    if (res.status === 200) {
      await res.body?.cancel();
      throw new Error(`${label}: ${url} stopped answering range requests; run the command again`);
    }
    let got = 0;
    const body = Readable.fromWeb(res.body as unknown as NodeReadableStream<Uint8Array>);
    body.on('data', (c: Buffer) => (got += c.length));
    try {
      await pipeline(body, createWriteStream(part, { flags: 'a' }));
    } catch (e) {
      throw new Error(`${label}: interrupted after ${formatBytes(offset + got)} of ${formatBytes(total)} (${e instanceof Error ? e.message : String(e)}); run the command again to resume it`);
    }
    bytesRead += got;
    offset += got;
    if (got !== r.length - from) {
      throw new Error(`${label}: the connection ended at ${formatBytes(offset)} of ${formatBytes(total)}; run the command again to resume it`);
    }
  }

  const tmp = `${dest}.cut-tmp`;
  try {
    cut.write(part, tmp);
  } catch (e) {
    await rm(tmp, { force: true });
    await rm(part, { force: true });
    await rm(partInfoFile, { force: true });
    throw new Error(`${label}: the ranges read do not make a file (${e instanceof Error ? e.message : String(e)}); they were removed, run the command again`);
  }
  await rename(tmp, dest);
  await writeFile(cutInfoFile, JSON.stringify(want));
  // This run's part, and any a whole download of the file left.
  for (const f of [part, partInfoFile, `${dest}.part`, path.join(path.dirname(dest), `.${path.basename(dest)}.part-info`)]) await rm(f, { force: true });
  const bytes = (await stat(dest)).size;
  ctx.log(`${label}: done, ${plan.keptRows} rows in ${formatBytes(bytes)}, ${formatBytes(bytesRead)} read in ${requests} requests`);
  return result(resumedAt > 0 ? 'resumed' : 'downloaded', bytes);
}
