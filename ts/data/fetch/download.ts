// `storemap data fetch`'s HTTP: requests with their errors as messages that name the source and
// URL, and one file's download (resumed, verified, renamed into place), with the notes about
// what a source's folder holds besides.
import { createHash, type Hash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';

import type { z } from 'zod';
import type { Ctx, FetchedFile, FetchSource, FileSpec, Plan } from './plan.ts';
import { zipProblem } from './zip-shape.ts';

// ---------------------------------------------------------------------------------------------
// HTTP helpers

/**
 * GET with a watchdog: the request is given up when no answer comes within the stall time, or
 * when its body sends nothing for as long (a server that accepts and never answers would
 * otherwise hold a fetch for Node's five minutes, twice, without a word).
 */
export function request(ctx: Pick<Ctx, 'fetch'> & { config: { stallMs: number } }, url: string, headers: Record<string, string> = {}): Promise<Response> {
  const stallMs = ctx.config.stallMs;
  const controller = new AbortController();
  const stalled = (what: string) => () => controller.abort(new Error(`${what} for ${stallMs / 1000} s (STOREMAP_FETCH_STALL_MS)`));
  const timer = setTimeout(stalled('no answer'), stallMs).unref();
  return ctx
    .fetch(url, { headers: { 'user-agent': 'storemap-data-fetch', ...headers }, signal: controller.signal })
    .then((res) => {
      clearTimeout(timer);
      if (!res.body) return res;
      // The body's watchdog runs only while a read waits on the network: time the caller
      // spends elsewhere (hashing a resumed part of gigabytes first, writing to a slow disk) is
      // not the server's silence. highWaterMark 0: nothing is read before the caller asks.
      const reader = res.body.getReader();
      let idle: ReturnType<typeof setTimeout> | undefined;
      const watched = new ReadableStream<Uint8Array>(
        {
          async pull(c) {
            idle = setTimeout(stalled('no data'), stallMs).unref();
            try {
              const { done, value } = await reader.read();
              if (done) c.close();
              else c.enqueue(value);
            } catch (e) {
              c.error(e);
            } finally {
              clearTimeout(idle);
            }
          },
          cancel(reason) {
            clearTimeout(idle);
            return reader.cancel(reason);
          },
        },
        { highWaterMark: 0 },
      );
      return new Response(watched, { status: res.status, statusText: res.statusText, headers: res.headers });
    })
    .catch((e: unknown) => {
      clearTimeout(timer);
      throw new Error(`GET ${url} failed: ${causeMessage(e)}`);
    });
}

export async function jsonBody(res: Response, url: string, source: FetchSource): Promise<unknown> {
  if (!res.ok) throw await httpError(res, url, source);
  const text = await res.text();
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`${source}: ${url} did not answer with JSON`);
  }
}

export function parseWith<T>(schema: z.ZodType<T>, value: unknown, url: string, source: FetchSource, what: string): T {
  const r = schema.safeParse(value);
  if (!r.success) {
    const i = r.error.issues[0];
    throw new Error(`${source}: ${url} is not ${what} (${i.path.join('.') || 'top level'}: ${i.message})`);
  }
  return r.data;
}

export async function httpError(res: Response, url: string, source: FetchSource): Promise<Error> {
  await res.body?.cancel().catch(() => {});
  if (source === 'fsq' && (res.status === 401 || res.status === 403)) {
    return new Error(
      `fsq: Hugging Face refused access (HTTP ${res.status}) to ${url}: check STOREMAP_FSQ_TOKEN and that its account accepted the dataset's terms`,
    );
  }
  return new Error(`${source}: GET ${url} answered HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`);
}

/** A failed `fetch`'s message with its cause ("fetch failed: getaddrinfo ENOTFOUND host"):
 * undici puts what went wrong in `cause` and says only "fetch failed" itself. */
export function causeMessage(e: unknown): string {
  if (e instanceof Error) {
    const cause = (e as { cause?: unknown }).cause;
    return cause instanceof Error ? `${e.message}: ${cause.message}` : e.message;
  }
  return String(e);
}

export function encodePath(p: string): string {
  return p.split('/').map(encodeURIComponent).join('/');
}

export function fileName(url: string): string {
  const name = decodeURIComponent(path.posix.basename(new URL(url).pathname));
  if (!name || name === '.' || name === '..' || /[/\\]/.test(name)) throw new Error(`no usable file name in ${url}`);
  return name;
}

export function formatBytes(n: number): string {
  if (n < 1000) return `${n} B`;
  const units = ['kB', 'MB', 'GB', 'TB'];
  let v = n;
  let u = -1;
  while (v >= 1000 && u < units.length - 1) {
    v /= 1000;
    u++;
  }
  return `${v.toFixed(1)} ${units[u]}`;
}

// ---------------------------------------------------------------------------------------------
// Downloading one file

async function sizeOf(file: string): Promise<number | undefined> {
  try {
    const s = await stat(file);
    return s.isFile() ? s.size : undefined;
  } catch {
    return undefined;
  }
}

async function hashInto(file: string, hash: Hash): Promise<void> {
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
}

async function hashFile(file: string, alg: 'md5' | 'sha256'): Promise<string> {
  const h = createHash(alg);
  await hashInto(file, h);
  return h.digest('hex');
}

/** `Content-Range: bytes <start>-<end>/<total|*>` */
export function contentRange(v: string | null): { start: number; total?: number } | undefined {
  const m = /^bytes\s+(\d+)-(\d+)\/(\d+|\*)$/i.exec(v?.trim() ?? '');
  if (!m) return undefined;
  return { start: Number(m[1]), total: m[3] === '*' ? undefined : Number(m[3]) };
}

function contentLength(res: Response): number | undefined {
  const v = res.headers.get('content-length');
  return v !== null && /^\d+$/.test(v.trim()) ? Number(v) : undefined;
}

function progressMeter(ctx: Ctx, label: string, total: number | undefined) {
  const p = ctx.opts.progress;
  if (!p?.isTTY) return { update: () => {}, done: () => {} };
  let last = 0;
  const draw = (n: number) =>
    p.write(`\r\x1b[K${label}  ${formatBytes(n)}${total ? ` / ${formatBytes(total)}  ${Math.floor((n / total) * 100)}%` : ''}`);
  return {
    update(n: number) {
      const now = Date.now();
      if (now - last >= 200) {
        last = now;
        draw(n);
      }
    },
    done: () => p.write('\r\x1b[K'),
  };
}

const ALG_NAME = { md5: 'MD5', sha256: 'SHA-256' } as const;

/**
 * What a `.part` was downloaded from, kept beside it (hidden, so no importer reads it): the URL,
 * and the validator the server gave, sent back as `If-Range` so that a file replaced on the
 * server since comes whole (200) instead of being appended to the old part.
 */
interface PartInfo {
  url: string;
  etag?: string;
  lastModified?: string;
}

async function readPartInfo(file: string): Promise<PartInfo | undefined> {
  try {
    const v = JSON.parse(await readFile(file, 'utf8')) as PartInfo;
    return typeof v?.url === 'string' ? v : undefined;
  } catch {
    return undefined;
  }
}

/** One file's download: where it goes, its part and the part's note, and how it is named in
 * messages. */
interface Job {
  spec: FileSpec;
  part: string;
  info: string;
  label: string;
}

/** What a response to a (range) request lets the download do. */
type Answer =
  /** Write the body from `from` (0: the whole file), `total` bytes in all when known. */
  | { kind: 'write'; res: Response; from: number; total?: number; partInfo?: PartInfo }
  /** The part was already the whole file, proved by its checksum. */
  | { kind: 'complete' }
  /** Drop the part and ask for the whole file. */
  | { kind: 'restart' };

export async function downloadFile(ctx: Ctx, spec: FileSpec): Promise<FetchedFile> {
  const { dest } = spec;
  const job: Job = { spec, part: `${dest}.part`, info: path.join(path.dirname(dest), `.${path.basename(dest)}.part-info`), label: `${spec.source}: ${path.basename(dest)}` };
  await mkdir(path.dirname(dest), { recursive: true });
  const kept = await keptIfCurrent(ctx, job);
  if (kept) return kept;

  let { offset, partInfo } = await resumePoint(ctx, job);
  // At most: a range request, a restart from zero, and one more restart after a resumed
  // download turned out wrong (a part left from an older version of the file).
  for (let attempt = 0; attempt < 4; attempt++) {
    const answer = await ask(ctx, job, offset, partInfo);
    if (answer.kind === 'complete') {
      await finishPart(job);
      ctx.log(`${job.label}: the partial file was already complete (${formatBytes(offset)}, ${ALG_NAME[spec.checksum!.alg]} verified)`);
      return result(job, offset, 'resumed');
    }
    if (answer.kind === 'restart') {
      await discardPart(job);
      offset = 0;
      continue;
    }
    partInfo = answer.partInfo ?? partInfo;
    const { written, digest } = await receive(ctx, job, answer);
    const wrong = mismatch(spec, written, digest) ?? (spec.zip ? await zipProblem(job.part) : undefined);
    if (wrong) {
      await discardPart(job);
      if (answer.from > 0) {
        // The part may have been the start of an older version of the file: once more, whole.
        ctx.log(`${job.label}: ${wrong} after resuming; starting again from zero`);
        offset = 0;
        partInfo = undefined;
        continue;
      }
      throw new Error(`${job.label}: ${wrong}; the download was removed`);
    }
    await finishPart(job);
    const how = spec.checksum
      ? `${ALG_NAME[spec.checksum.alg]} verified`
      : [answer.total !== undefined || spec.size !== undefined ? 'size verified' : 'no size or checksum published', ...(spec.zip ? ['zip structure checked'] : [])].join(', ');
    ctx.log(`${job.label}: done, ${formatBytes(written)}, ${how}`);
    return result(job, written, answer.from > 0 ? 'resumed' : 'downloaded');
  }
  throw new Error(`${job.label}: the server would neither resume nor restart ${spec.url}`);
}

function result(job: Job, bytes: number, status: FetchedFile['status']): FetchedFile {
  const { spec } = job;
  return { source: spec.source, url: spec.url, path: spec.dest, bytes, check: spec.checksum?.alg ?? 'size', status };
}

async function discardPart(job: Job): Promise<void> {
  await rm(job.part, { force: true });
  await rm(job.info, { force: true });
}

async function finishPart(job: Job): Promise<void> {
  await rename(job.part, job.spec.dest);
  await rm(job.info, { force: true });
}

/** The file already in place, kept when its published checksum proves it current. */
async function keptIfCurrent(ctx: Ctx, job: Job): Promise<FetchedFile | undefined> {
  const { checksum, size, dest } = job.spec;
  const existing = await sizeOf(dest);
  if (!checksum || existing === undefined || (size !== undefined && existing !== size)) return undefined;
  if ((await hashFile(dest, checksum.alg)) !== checksum.hex) return undefined;
  ctx.log(`${job.label}: up to date (${formatBytes(existing)}, ${ALG_NAME[checksum.alg]} verified)`);
  return result(job, existing, 'up-to-date');
}

/** Where a `.part` left by an earlier run lets this one continue (0: from the start). */
async function resumePoint(ctx: Ctx, job: Job): Promise<{ offset: number; partInfo?: PartInfo }> {
  const offset = (await sizeOf(job.part)) ?? 0;
  if (offset === 0) return { offset };
  const partInfo = await readPartInfo(job.info);
  let why: string | undefined;
  if (partInfo && partInfo.url !== job.spec.url) why = `the partial file came from ${partInfo.url}, not the current ${job.spec.url}`;
  else if (job.spec.size !== undefined && offset > job.spec.size) why = 'the partial file is larger than the published size';
  if (!why) return { offset, partInfo };
  ctx.log(`${job.label}: ${why}; starting again`);
  await discardPart(job);
  return { offset: 0 };
}

/** Asks for the file from `offset` (with `If-Range`, so a file changed since the part began
 * comes whole) and reads what the answer allows. */
async function ask(ctx: Ctx, job: Job, offset: number, partInfo: PartInfo | undefined): Promise<Answer> {
  const { spec, label } = job;
  const headers: Record<string, string> = { ...spec.headers, 'accept-encoding': 'identity' };
  if (offset > 0) {
    headers.range = `bytes=${offset}-`;
    const validator = partInfo?.etag && !partInfo.etag.startsWith('W/') ? partInfo.etag : partInfo?.lastModified;
    if (validator) headers['if-range'] = validator;
  }
  const res = await request(ctx, spec.url, headers);
  if (res.status === 416 && offset > 0) {
    await res.body?.cancel();
    const { checksum, size } = spec;
    if (checksum && (size === undefined || offset === size) && (await hashFile(job.part, checksum.alg)) === checksum.hex) return { kind: 'complete' };
    ctx.log(`${label}: the server has nothing past byte ${offset} (HTTP 416) and no checksum confirms the partial file; starting again`);
    return { kind: 'restart' };
  }
  if (res.status === 206 && offset > 0) {
    const range = contentRange(res.headers.get('content-range'));
    if (!range || range.start !== offset) {
      await res.body?.cancel();
      ctx.log(`${label}: the server answered the range request with another range (${res.headers.get('content-range')}); starting again`);
      return { kind: 'restart' };
    }
    const length = contentLength(res);
    return { kind: 'write', res, from: offset, total: range.total ?? (length !== undefined ? offset + length : undefined) };
  }
  if (res.status === 200) {
    if (offset > 0) {
      ctx.log(`${label}: the server sent the whole file (HTTP 200) to the range request: it changed since the partial download, or it does not resume; starting again from zero`);
    }
    const started: PartInfo = { url: spec.url, etag: res.headers.get('etag') ?? undefined, lastModified: res.headers.get('last-modified') ?? undefined };
    await writeFile(job.info, JSON.stringify(started));
    return { kind: 'write', res, from: 0, total: contentLength(res), partInfo: started };
  }
  throw await httpError(res, spec.url, spec.source);
}

/** Streams the answer's body onto the part (hashing the whole file when a checksum is
 * published), with a progress line on a terminal. */
async function receive(ctx: Ctx, job: Job, answer: Extract<Answer, { kind: 'write' }>): Promise<{ written: number; digest?: string }> {
  const { spec, label, part } = job;
  const { res, from, total } = answer;
  ctx.log(
    from > 0
      ? `${label}: resuming at ${formatBytes(from)}${total !== undefined ? ` of ${formatBytes(total)}` : ''} from ${spec.url}`
      : `${label}: downloading${total !== undefined ? ` ${formatBytes(total)}` : ''} from ${spec.url}`,
  );
  const hash = spec.checksum ? createHash(spec.checksum.alg) : undefined;
  if (hash && from > 0) await hashInto(part, hash);
  const meter = progressMeter(ctx, label, total);
  let written = from;
  const count = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      hash?.update(chunk);
      written += chunk.length;
      meter.update(written);
      cb(null, chunk);
    },
  });
  const body = res.body ? Readable.fromWeb(res.body as unknown as NodeReadableStream<Uint8Array>) : Readable.from([]);
  try {
    await pipeline(body, count, createWriteStream(part, { flags: from > 0 ? 'a' : 'w' }));
  } catch (e) {
    meter.done();
    throw new Error(`${label}: download interrupted at ${formatBytes(written)} (${causeMessage(e)}); run the command again to resume it`);
  }
  meter.done();
  if (total !== undefined && written !== total) {
    throw new Error(`${label}: the connection ended at ${written} of ${total} bytes; run the command again to resume it`);
  }
  return { written, digest: hash?.digest('hex') };
}

/** Why a complete download is not the published file, if it is not. */
function mismatch(spec: FileSpec, written: number, digest: string | undefined): string | undefined {
  if (spec.size !== undefined && written !== spec.size) return `got ${written} bytes but ${spec.sizeFrom ?? 'the publisher'} says ${spec.size}`;
  const { checksum } = spec;
  if (checksum && digest !== checksum.hex) return `${ALG_NAME[checksum.alg]} checksum mismatch: the download hashes to ${digest} but ${checksum.from} says ${checksum.hex}`;
  return undefined;
}

/**
 * The importers read every file of their format in a source folder, so files this run did not
 * write (an older release, or files copied there) would be imported too: say so, delete nothing.
 */
export async function noteForeignFiles(ctx: Ctx, source: FetchSource, dir: string, files: FileSpec[]): Promise<void> {
  const ours = new Set(files.map((f) => path.relative(dir, f.dest)));
  const other: string[] = [];
  const walk = async (sub: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(path.join(dir, sub), { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      // Hidden files and partial downloads are not importer inputs.
      if (e.name.startsWith('.') || e.name.endsWith('.part')) continue;
      const rel = path.join(sub, e.name);
      if (e.isDirectory()) await walk(rel);
      else if (!ours.has(rel)) other.push(rel);
    }
  };
  await walk('');
  other.sort();
  if (other.length === 0) return;
  const shown = other.slice(0, 5).join(', ') + (other.length > 5 ? `, … (${other.length} in all)` : '');
  ctx.log(`${source}: note: ${dir} also holds files this fetch did not write (${shown}); the importer reads the whole folder, so remove them if they are from an older release or were copied there`);
}

/** Removes the files of a layout this fetch replaced (AllThePlaces' combined zip once its groups
 * are fetched, or the groups' zips once a combined one is; an older Overture release's files),
 * after every new file is in place, with the hidden notes kept beside them. */
export async function removeSuperseded(ctx: Ctx, source: FetchSource, dir: string, plan: Exclude<Plan, { skip: string }>): Promise<void> {
  const ours = new Set(plan.files.map((f) => path.relative(dir, f.dest)));
  let names = plan.supersedes ?? [];
  if (plan.supersedesGroups) {
    const present = await readdir(dir).catch(() => [] as string[]);
    names = present.filter((n) => n.endsWith('.zip') && !ours.has(n));
  }
  for (const name of names.filter((n) => !ours.has(n))) {
    const file = path.join(dir, name);
    if (await rm(file).then(() => true, () => false)) {
      await rm(path.join(path.dirname(file), `.${path.basename(file)}.cut-info`), { force: true });
      const by = plan.files.map((f) => path.basename(f.dest));
      ctx.log(`${source}: removed ${name}, replaced by ${by.length > 3 ? `${by.slice(0, 3).join(', ')}, … (${by.length} files)` : by.join(', ')} (importing both would count every store twice)`);
    }
  }
}
