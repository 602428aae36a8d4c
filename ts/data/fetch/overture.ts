// Overture Maps places: every places file of a release, listed from the bucket.
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { Ctx, Plan } from './plan.ts';
import { encodePath, formatBytes, httpError, jsonBody, parseWith, request } from './download.ts';

/** A release name, such as 2026-04-15.0. */
export const OVERTURE_RELEASE = /^\d{4}-\d{2}-\d{2}\.\d+$/;

const StacRoot = z.object({ latest: z.string() });

export async function planOverture(ctx: Ctx, out: string): Promise<Plan> {
  let release = ctx.opts.overtureRelease;
  if (!release) {
    const stac = ctx.config.overtureStac;
    release = parseWith(StacRoot, await jsonBody(await request(ctx, stac), stac, 'overture'), stac, 'overture', 'a STAC catalog with a `latest` release').latest;
    if (!OVERTURE_RELEASE.test(release)) throw new Error(`overture: ${stac} names "${release}" as the latest release, which is not a release name`);
    ctx.log(`overture: latest release ${release} (from ${stac})`);
  }
  const base = ctx.config.overtureBase;
  const prefix = `release/${release}/theme=places/type=place/`;
  const objects = (await listS3(ctx, base, prefix)).filter(
    (o) => o.key.startsWith(prefix) && o.key.endsWith('.parquet') && !o.key.split('/').some((seg) => seg === '..' || seg === '.' || seg === ''),
  );
  if (objects.length === 0) {
    throw new Error(`overture: no places files under ${base}/${prefix}: is ${release} a published release? (Overture removes a release about 60 days after it appears)`);
  }
  const total = objects.reduce((n, o) => n + o.size, 0);
  const area = ctx.opts.area;
  // The folder is this fetch's own: Parquet files in it that the release does not list are an
  // older release's, removed once the new ones are in place.
  const own = path.join(out, 'theme=places', 'type=place');
  const listed = new Set(objects.map((o) => path.posix.basename(o.key)));
  const older = (await readdir(own).catch(() => [] as string[])).filter((n) => n.endsWith('.parquet') && !listed.has(n));
  ctx.log(
    `overture: release ${release}: ${objects.length} places file(s), ${formatBytes(total)} worldwide` +
      (area ? `; each is cut to ${area.label} by range requests` : ''),
  );
  return {
    files: objects.map((o) => ({
      ...(area ? { cut: area } : {}),
      source: 'overture' as const,
      url: `${base}/${encodePath(o.key)}`,
      // The hive folders below the release, as published: theme=places/type=place/<file>.
      dest: path.join(out, ...o.key.slice(`release/${release}/`.length).split('/')),
      size: o.size,
      sizeFrom: 'the bucket listing',
    })),
    supersedes: older.map((n) => path.join('theme=places', 'type=place', n)),
  };
}

/** Every object under `prefix`, through S3 ListObjectsV2 (XML), following continuation tokens. */
async function listS3(ctx: Ctx, base: string, prefix: string): Promise<{ key: string; size: number }[]> {
  const objects: { key: string; size: number }[] = [];
  let token: string | undefined;
  for (let page = 0; page < 10_000; page++) {
    const url = `${base}/?list-type=2&prefix=${encodeURIComponent(prefix)}${token ? `&continuation-token=${encodeURIComponent(token)}` : ''}`;
    const res = await request(ctx, url);
    if (!res.ok) throw await httpError(res, url, 'overture');
    const xml = await res.text();
    if (!/<ListBucketResult[\s>]/.test(xml)) throw new Error(`overture: ${url} did not answer with an S3 ListBucketResult`);
    for (const m of xml.matchAll(/<Contents>([\s\S]*?)<\/Contents>/g)) {
      const key = xmlField(m[1], 'Key');
      const size = Number(xmlField(m[1], 'Size'));
      if (key === undefined || !Number.isSafeInteger(size) || size < 0) throw new Error(`overture: unreadable <Contents> entry in ${url}`);
      objects.push({ key, size });
    }
    if (xmlField(xml, 'IsTruncated') !== 'true') return objects;
    token = xmlField(xml, 'NextContinuationToken');
    if (!token) throw new Error(`overture: ${url} is truncated but gives no NextContinuationToken`);
  }
  throw new Error(`overture: the listing of ${base}/${prefix} never ends`);
}

function xmlField(xml: string, tag: string): string | undefined {
  const m = new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`).exec(xml);
  if (!m) return undefined;
  return m[1].replace(/&(lt|gt|quot|apos|amp|#\d+|#x[0-9a-fA-F]+);/g, (_, e: string) => {
    if (e[0] === '#') return String.fromCodePoint(e[1] === 'x' ? parseInt(e.slice(2), 16) : Number(e.slice(1)));
    return ({ lt: '<', gt: '>', quot: '"', apos: "'", amp: '&' } as Record<string, string>)[e];
  });
}
