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

// ---------------------------------------------------------------------------------------------
// HTTP helpers

export function request(ctx: Ctx, url: string, headers: Record<string, string> = {}): Promise<Response> {
  return ctx.fetch(url, { headers: { 'user-agent': 'storemap-data-fetch', ...headers } }).catch((e: unknown) => {
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

function causeMessage(e: unknown): string {
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
function contentRange(v: string | null): { start: number; total?: number } | undefined {
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

export async function downloadFile(ctx: Ctx, spec: FileSpec): Promise<FetchedFile> {
  const { dest, checksum } = spec;
  const part = `${dest}.part`;
  const info = path.join(path.dirname(dest), `.${path.basename(dest)}.part-info`);
  const label = `${spec.source}: ${path.basename(dest)}`;
  const check: FetchedFile['check'] = checksum?.alg ?? 'size';
  const result = (bytes: number, status: FetchedFile['status']): FetchedFile => ({ source: spec.source, url: spec.url, path: dest, bytes, check, status });
  const discard = async () => {
    await rm(part, { force: true });
    await rm(info, { force: true });
  };
  const finish = async () => {
    await rename(part, dest);
    await rm(info, { force: true });
  };
  await mkdir(path.dirname(dest), { recursive: true });

  // Already in place and provably the published file: keep it.
  const existing = await sizeOf(dest);
  if (checksum && existing !== undefined && (spec.size === undefined || existing === spec.size)) {
    if ((await hashFile(dest, checksum.alg)) === checksum.hex) {
      ctx.log(`${label}: up to date (${formatBytes(existing)}, ${ALG_NAME[checksum.alg]} verified)`);
      return result(existing, 'up-to-date');
    }
  }

  let offset = (await sizeOf(part)) ?? 0;
  let partInfo = offset > 0 ? await readPartInfo(info) : undefined;
  if (offset > 0 && partInfo && partInfo.url !== spec.url) {
    ctx.log(`${label}: the partial file came from ${partInfo.url}, not the current ${spec.url}; starting again`);
    await discard();
    offset = 0;
  } else if (spec.size !== undefined && offset > spec.size) {
    ctx.log(`${label}: the partial file is larger than the published size; starting again`);
    await discard();
    offset = 0;
  }

  // At most: a range request, a restart from zero, and one more restart after a resumed
  // download turned out wrong (a part left from an older version of the file).
  for (let attempt = 0; attempt < 4; attempt++) {
    const headers: Record<string, string> = { ...spec.headers, 'accept-encoding': 'identity' };
    if (offset > 0) {
      headers.range = `bytes=${offset}-`;
      const validator = partInfo?.etag && !partInfo.etag.startsWith('W/') ? partInfo.etag : partInfo?.lastModified;
      if (validator) headers['if-range'] = validator;
    }
    const res = await request(ctx, spec.url, headers);

    let total: number | undefined;
    if (res.status === 416 && offset > 0) {
      await res.body?.cancel();
      if (checksum && (spec.size === undefined || offset === spec.size) && (await hashFile(part, checksum.alg)) === checksum.hex) {
        await finish();
        ctx.log(`${label}: the partial file was already complete (${formatBytes(offset)}, ${ALG_NAME[checksum.alg]} verified)`);
        return result(offset, 'resumed');
      }
      ctx.log(`${label}: the server has nothing past byte ${offset} (HTTP 416) and no checksum confirms the partial file; starting again`);
      await discard();
      offset = 0;
      continue;
    } else if (res.status === 206 && offset > 0) {
      const range = contentRange(res.headers.get('content-range'));
      if (!range || range.start !== offset) {
        await res.body?.cancel();
        ctx.log(`${label}: the server answered the range request with another range (${res.headers.get('content-range')}); starting again`);
        await discard();
        offset = 0;
        continue;
      }
      const length = contentLength(res);
      total = range.total ?? (length !== undefined ? offset + length : undefined);
    } else if (res.status === 200) {
      if (offset > 0) {
        ctx.log(`${label}: the server sent the whole file (HTTP 200) to the range request: it changed since the partial download, or it does not resume; starting again from zero`);
      }
      offset = 0;
      total = contentLength(res);
      partInfo = { url: spec.url, etag: res.headers.get('etag') ?? undefined, lastModified: res.headers.get('last-modified') ?? undefined };
      await writeFile(info, JSON.stringify(partInfo));
    } else {
      throw await httpError(res, spec.url, spec.source);
    }

    const resumedAt = offset;
    ctx.log(
      resumedAt > 0
        ? `${label}: resuming at ${formatBytes(resumedAt)}${total !== undefined ? ` of ${formatBytes(total)}` : ''} from ${spec.url}`
        : `${label}: downloading${total !== undefined ? ` ${formatBytes(total)}` : ''} from ${spec.url}`,
    );
    const hash = checksum ? createHash(checksum.alg) : undefined;
    if (hash && resumedAt > 0) await hashInto(part, hash);
    const meter = progressMeter(ctx, label, total);
    let written = resumedAt;
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
      await pipeline(body, count, createWriteStream(part, { flags: resumedAt > 0 ? 'a' : 'w' }));
    } catch (e) {
      meter.done();
      throw new Error(`${label}: download interrupted at ${formatBytes(written)} (${causeMessage(e)}); run the command again to resume it`);
    }
    meter.done();

    if (total !== undefined && written !== total) {
      throw new Error(`${label}: the connection ended at ${written} of ${total} bytes; run the command again to resume it`);
    }
    let wrong: string | undefined;
    if (spec.size !== undefined && written !== spec.size) {
      wrong = `got ${written} bytes but ${spec.sizeFrom ?? 'the publisher'} says ${spec.size}`;
    } else if (checksum) {
      const got = hash!.digest('hex');
      if (got !== checksum.hex) wrong = `${ALG_NAME[checksum.alg]} checksum mismatch: the download hashes to ${got} but ${checksum.from} says ${checksum.hex}`;
    }
    if (wrong) {
      await discard();
      if (resumedAt > 0) {
        // The part may have been the start of an older version of the file: once more, whole.
        ctx.log(`${label}: ${wrong} after resuming; starting again from zero`);
        offset = 0;
        partInfo = undefined;
        continue;
      }
      throw new Error(`${label}: ${wrong}; the download was removed`);
    }
    await finish();
    const how = checksum ? `${ALG_NAME[checksum.alg]} verified` : total !== undefined || spec.size !== undefined ? 'size verified' : 'no size or checksum published';
    ctx.log(`${label}: done, ${formatBytes(written)}, ${how}`);
    return result(written, resumedAt > 0 ? 'resumed' : 'downloaded');
  }
  throw new Error(`${label}: the server would neither resume nor restart ${spec.url}`);
}

/**
 * The importers read every file of their format in a source folder, so files this run did not
 * write (an older release, a synthetic build) would be imported too: say so, delete nothing.
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
  ctx.log(`${source}: note: ${dir} also holds files this fetch did not write (${shown}); the importer reads the whole folder, so remove them if they are from an older release or a synthetic build`);
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
