// Foursquare OS Places from its Hugging Face copy: the newest (or a named) release's places
// files, checked against their SHA-256, and a warning when that copy is stale.
import path from 'node:path';
import { DAY_MS } from '../../time.ts';
import { z } from 'zod';
import type { Ctx, Plan } from './plan.ts';
import { encodePath, formatBytes, jsonBody, parseWith, request } from './download.ts';

/** A release date, the `dt=` folder's name. */
export const FSQ_RELEASE = /^\d{4}-\d{2}-\d{2}$/;
/** A newest Hugging Face release older than this is stale: Foursquare publishes monthly. */
export const FSQ_STALE_DAYS = 60;

const HfTree = z.array(
  z.object({
    type: z.string(),
    path: z.string(),
    size: z.number().optional(),
    lfs: z.object({ oid: z.string(), size: z.number().optional() }).optional(),
  }),
);
type HfEntry = z.infer<typeof HfTree>[number];

export async function planFsq(ctx: Ctx, out: string): Promise<Plan> {
  const token = ctx.config.fsqToken;
  if (!token) {
    return {
      skip:
        'STOREMAP_FSQ_TOKEN is not set. Foursquare OS Places is a gated Hugging Face dataset: accept its terms at ' +
        'https://huggingface.co/datasets/foursquare/fsq-os-places, create an access token, and set STOREMAP_FSQ_TOKEN to it',
    };
  }
  const headers = { authorization: `Bearer ${token}` };
  let dt = ctx.opts.fsqRelease;
  if (!dt) {
    const dates = (await listHf(ctx, 'release', headers))
      .filter((e) => e.type === 'directory')
      .map((e) => /^release\/dt=(\d{4}-\d{2}-\d{2})$/.exec(e.path)?.[1])
      .filter((d): d is string => d !== undefined)
      .sort();
    dt = dates.at(-1);
    if (!dt) throw new Error(`fsq: no release/dt=YYYY-MM-DD folder in ${ctx.config.fsqApi}/tree/main/release`);
    ctx.log(`fsq: latest release dt=${dt}`);
    const days = Math.floor((ctx.now() - Date.parse(`${dt}T00:00:00Z`)) / DAY_MS);
    if (days > FSQ_STALE_DAYS) {
      ctx.warn(
        `fsq: the newest release on Hugging Face (dt=${dt}) is ${days} days old. Foursquare now publishes OS Places first through its Places Portal (an Iceberg catalog, with a Portal token); export a current release to Parquet and import it with \`storemap data import --fsq\` (see the README)`,
      );
    }
  }
  const dir = `release/dt=${dt}/places/parquet`;
  const files = (await listHf(ctx, dir, headers)).filter((e) => e.type === 'file' && e.path.endsWith('.parquet'));
  if (files.length === 0) throw new Error(`fsq: no .parquet files in ${dir} of ${ctx.config.fsqApi}`);
  ctx.log(`fsq: release dt=${dt}: ${files.length} places file(s), ${formatBytes(files.reduce((n, f) => n + (f.lfs?.size ?? f.size ?? 0), 0))} (worldwide)`);
  return {
    files: files.map((f) => {
      const url = `${ctx.config.fsqBase}/${encodePath(f.path)}`;
      const sha = f.lfs?.oid.toLowerCase();
      const size = f.lfs?.size ?? f.size;
      return {
        source: 'fsq' as const,
        url,
        dest: path.join(out, path.posix.basename(f.path)),
        headers,
        checksum: sha && /^[0-9a-f]{64}$/.test(sha) ? { alg: 'sha256' as const, hex: sha, from: `the Hugging Face file listing (lfs.oid of ${f.path})` } : undefined,
        size,
        sizeFrom: size === undefined ? undefined : 'the Hugging Face file listing',
      };
    }),
  };
}

/** One folder of the dataset through the Hub's tree API, following `Link: <…>; rel="next"`. */
async function listHf(ctx: Ctx, dir: string, headers: Record<string, string>): Promise<HfEntry[]> {
  const entries: HfEntry[] = [];
  let url: string | undefined = `${ctx.config.fsqApi}/tree/main/${encodePath(dir)}`;
  for (let page = 0; url && page < 10_000; page++) {
    const res = await request(ctx, url, headers);
    entries.push(...parseWith(HfTree, await jsonBody(res, url, 'fsq'), url, 'fsq', 'a Hugging Face tree listing'));
    const next = /<([^>]+)>\s*;\s*rel="?next"?/.exec(res.headers.get('link') ?? '')?.[1];
    url = next ? new URL(next, url).href : undefined;
  }
  return entries;
}
