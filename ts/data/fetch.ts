/**
 * `storemap data fetch`: downloads the four publishers' current files into a data folder's
 * `sources/<source>/`, resumably and verified, over plain HTTP(S) with Node's global `fetch`.
 *
 * Where each publisher's files are, and how "current" is found (the sources these rules were
 * taken from):
 *
 * - **OpenStreetMap, Geofabrik extracts.** Geofabrik publishes a machine-readable index of
 *   every extract, `<mirror>/index-v1.json` (and the same without geometries,
 *   `index-v1-nogeom.json`): a GeoJSON FeatureCollection whose features' properties carry `id`,
 *   `parent` (the next larger extract), `iso3166-1:alpha2` (an array of country codes) and
 *   `urls.pbf` (e.g. `https://download.geofabrik.de/europe/switzerland-latest.osm.pbf`,
 *   `.../north-america/us-latest.osm.pbf`). Next to every extract is `<extract>.md5`, one line
 *   `<hex>  <file name>`. Cited: Geofabrik's technical notes,
 *   https://download.geofabrik.de/technical.html (how extracts are cut and laid out); the
 *   index and its fields as described at
 *   https://schemas.apis.io/schemas/geofabrik/geofabrik-extract-index/ (a third-party
 *   description of `index-v1.json`, which also names `index-v1-nogeom.json`); the `.md5`
 *   sidecars as the `geofabrik-downloader` (PyPI) and `go-geofabrik` clients verify them. We
 *   read the geometry-free
 *   index first and fall back to `index-v1.json` (a mirror may carry only that one), then pick
 *   the feature whose `iso3166-1:alpha2` names the country, preferring an extract of that
 *   country alone (not "dach" or "alps"), then the shallowest one in the `parent` chain (the
 *   country, not one of its states). A 404 for the `.md5` means "no checksum": logged, not
 *   fatal.
 * - **AllThePlaces.** `GET <base>/runs/latest.json` returns the latest run's metadata, whose
 *   `output_url` is the run's `output.zip` (every spider's GeoJSON). Cited: AllThePlaces
 *   `API.md` (https://github.com/alltheplaces/alltheplaces/blob/master/API.md). The zip is
 *   downloaded as published to `sources/atp/output.zip`; it carries no checksum, so the check is
 *   the byte count against `Content-Length`.
 * - **Overture Maps places.** The latest release is named by the `latest` field of the Overture
 *   STAC catalog, https://stac.overturemaps.org/catalog.json (the docs' "Accessing the Overture
 *   Catalog", https://docs.overturemaps.org/ ; `releases.json` and the other older discovery
 *   files are deprecated per https://github.com/OvertureMaps/data). The data sits in the public
 *   bucket `s3://overturemaps-us-west-2/release/<release>/theme=places/type=place/`, readable
 *   anonymously over HTTPS at `https://overturemaps-us-west-2.s3.us-west-2.amazonaws.com`.
 *   **What we chose, and why:** the `overturemaps` CLI cuts a bbox out of those files by
 *   reading Parquet row groups over S3, which needs a Parquet reader; without one, the honest
 *   plain-HTTPS download is the whole release's places files (a handful of GeoParquet files,
 *   several GB for the world). We list them with one S3 `ListObjectsV2` request
 *   (`<base>/?list-type=2&prefix=release/<R>/theme=places/type=place/`, XML, followed through
 *   `NextContinuationToken`) and download every `.parquet` object, checking each one's size
 *   against the listing. Places are published worldwide only, so `--country` does not narrow
 *   this download (the import keeps every country it is given; queries filter by country).
 *   `--overture-release R` pins a release (Overture removes old releases after a few months).
 *   The files keep the bucket's hive layout below the release,
 *   `sources/overture/theme=places/type=place/*.parquet` (the importer reads subfolders).
 * - **Foursquare OS Places.** Published on Hugging Face as the gated dataset
 *   `foursquare/fsq-os-places`, files at `release/dt=YYYY-MM-DD/places/parquet/*.parquet`
 *   (https://huggingface.co/datasets/foursquare/fsq-os-places). Gated means an access token of
 *   an account that accepted the terms; without `STOREMAP_FSQ_TOKEN` the source is skipped with
 *   a message. Files are listed with the Hub's tree API,
 *   `GET <api>/tree/main/<path>` (paginated through `Link: <…>; rel="next"`; each file entry has
 *   `path`, `size` and, for LFS files, `lfs.oid` = the SHA-256 of the content), as
 *   `huggingface_hub`'s `HfApi.list_repo_tree` does; the latest release is the greatest
 *   `release/dt=…` folder unless `--fsq-release` names one. Files come from
 *   `<base>/<path>` (`/resolve/main/…`, which redirects to the CDN), with
 *   `Authorization: Bearer <token>`, and are verified against `lfs.oid` (SHA-256).
 *
 * Every file is streamed to `<file>.part` and renamed into place only when complete and
 * verified. A `.part` left by an interrupted run is resumed with `Range: bytes=<size>-` (plus
 * `If-Range` with the ETag or Last-Modified the server gave when the part was started, kept in
 * a hidden `.<file>.part-info` with the URL; a part started from another URL, such as last
 * week's AllThePlaces run, is dropped): 206 appends, 200 starts again from zero, 416 accepts
 * the part only if a published checksum verifies it (else starts again). A resumed file that
 * then fails its size or checksum check is downloaded once more from zero. A file already in
 * place whose published checksum matches is kept without downloading it again.
 */
import { createHash, type Hash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { z } from 'zod';

export const FETCH_SOURCES = ['osm', 'overture', 'atp', 'fsq'] as const;
export type FetchSource = (typeof FETCH_SOURCES)[number];

// ---------------------------------------------------------------------------------------------
// Configuration: every base URL from the environment, checked once at the command's start.

const baseUrl = z
  .string()
  .trim()
  .pipe(z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }))
  .transform((u) => u.replace(/\/+$/, ''));

export const FetchEnvSchema = z.object({
  /** Geofabrik or a mirror of it (serves index-v1.json and the extracts). */
  STOREMAP_OSM_MIRROR: baseUrl.default('https://download.geofabrik.de'),
  /** AllThePlaces' data site (serves runs/latest.json). */
  STOREMAP_ATP_BASE: baseUrl.default('https://data.alltheplaces.xyz'),
  /** The Overture release bucket over HTTPS (S3 ListObjectsV2 and the objects). */
  STOREMAP_OVERTURE_BASE: baseUrl.default('https://overturemaps-us-west-2.s3.us-west-2.amazonaws.com'),
  /** The Overture STAC root catalog; its `latest` names the current release. */
  STOREMAP_OVERTURE_STAC: baseUrl.default('https://stac.overturemaps.org/catalog.json'),
  /** Where the Foursquare OS Places files are downloaded from (`<base>/<path in the dataset>`). */
  STOREMAP_FSQ_BASE: baseUrl.default('https://huggingface.co/datasets/foursquare/fsq-os-places/resolve/main'),
  /** The Hugging Face API for the same dataset (`<api>/tree/main/<path>` lists files). */
  STOREMAP_FSQ_API: baseUrl.default('https://huggingface.co/api/datasets/foursquare/fsq-os-places'),
  /** The operator's Hugging Face access token; without it Foursquare is skipped. */
  STOREMAP_FSQ_TOKEN: z
    .string()
    .trim()
    .optional()
    .transform((v) => v || undefined),
});

export interface FetchConfig {
  osmMirror: string;
  atpBase: string;
  overtureBase: string;
  overtureStac: string;
  fsqBase: string;
  fsqApi: string;
  fsqToken?: string;
}

export function loadFetchConfig(env: NodeJS.ProcessEnv = process.env): FetchConfig {
  const parsed = FetchEnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`invalid configuration:\n${lines.join('\n')}`);
  }
  const c = parsed.data;
  return {
    osmMirror: c.STOREMAP_OSM_MIRROR,
    atpBase: c.STOREMAP_ATP_BASE,
    overtureBase: c.STOREMAP_OVERTURE_BASE,
    overtureStac: c.STOREMAP_OVERTURE_STAC,
    fsqBase: c.STOREMAP_FSQ_BASE,
    fsqApi: c.STOREMAP_FSQ_API,
    fsqToken: c.STOREMAP_FSQ_TOKEN,
  };
}

// ---------------------------------------------------------------------------------------------
// Arguments

/** A two-letter ISO 3166-1 code, upper-cased; anything else throws. */
export function parseCountry(value: string): string {
  const v = value.trim();
  if (!/^[A-Za-z]{2}$/.test(v)) throw new Error(`--country must be a two-letter ISO 3166-1 code such as CH or US, not "${value}"`);
  return v.toUpperCase();
}

/** A comma-separated list (or an array) of source names, de-duplicated, in the given order. */
export function parseSources(value: string | readonly string[]): FetchSource[] {
  const names = (typeof value === 'string' ? value.split(',') : value).map((s) => s.trim().toLowerCase()).filter(Boolean);
  if (names.length === 0) throw new Error(`--sources is empty: give some of ${FETCH_SOURCES.join(', ')}`);
  for (const n of names) {
    if (!(FETCH_SOURCES as readonly string[]).includes(n)) throw new Error(`unknown source "${n}": the sources are ${FETCH_SOURCES.join(', ')}`);
  }
  return [...new Set(names)] as FetchSource[];
}

const OVERTURE_RELEASE = /^\d{4}-\d{2}-\d{2}\.\d+$/;
const FSQ_RELEASE = /^\d{4}-\d{2}-\d{2}$/;
/** A newest Hugging Face release older than this is stale: Foursquare publishes monthly. */
export const FSQ_STALE_DAYS = 60;

// ---------------------------------------------------------------------------------------------
// The run

export interface FetchOptions {
  /** ISO 3166-1 alpha-2; picks the OpenStreetMap extract (the other three publish worldwide files). */
  country: string;
  /** Default: all four. */
  sources?: string | readonly string[];
  /** The `sources` folder; each source goes to `<outDir>/<source>/`. */
  outDir: string;
  config: FetchConfig;
  /** Overture release such as `2026-04-15.0`; default: the STAC catalog's `latest`. */
  overtureRelease?: string;
  /** Foursquare release date such as `2026-03-12` (the `dt=` folder); default: the newest. */
  fsqRelease?: string;
  /** One line per event (file started, finished, skipped, notes). */
  log?: (line: string) => void;
  /** With `isTTY`, a live progress line per file is written here (with `\r`). */
  progress?: { isTTY: boolean; write: (s: string) => void };
  /** Defaults to the global `fetch`. */
  fetch?: typeof globalThis.fetch;
  /** The clock a release's age is read against. */
  now?: () => number;
}

export interface FetchedFile {
  source: FetchSource;
  url: string;
  path: string;
  bytes: number;
  /** What the file was checked against. */
  check: 'md5' | 'sha256' | 'size';
  /** `resumed`: continued from a `.part`; `up-to-date`: already in place and its checksum matched. */
  status: 'downloaded' | 'resumed' | 'up-to-date';
}

export interface FetchSummary {
  country: string;
  files: FetchedFile[];
  skipped: { source: FetchSource; reason: string }[];
  /** Sources that could not be planned or fetched; the others were fetched all the same. */
  failed: { source: FetchSource; reason: string }[];
  /** What the operator should know (a stale release). */
  warnings: string[];
}

/** Thrown after every source was tried when any failed: the message is each failure's, one a
 * line; `summary` holds what was fetched. */
export class FetchFailed extends Error {
  constructor(readonly summary: FetchSummary) {
    super(summary.failed.map((f) => f.reason).join('\n'));
  }
}

/** One file to download, with what the publisher says about it. */
interface FileSpec {
  source: FetchSource;
  url: string;
  dest: string;
  headers?: Record<string, string>;
  /** Expected content checksum (lower-case hex) and where it was published. */
  checksum?: { alg: 'md5' | 'sha256'; hex: string; from: string };
  /** Expected size in bytes, from a listing. */
  size?: number;
  /** Where `size` came from, for messages. */
  sizeFrom?: string;
}

interface Ctx {
  opts: FetchOptions;
  config: FetchConfig;
  fetch: typeof globalThis.fetch;
  log: (line: string) => void;
  /** A warning for the summary (and the log). */
  warn: (line: string) => void;
  now: () => number;
}

/** A source's files; `supersedes` names files of an older layout this fetch replaces (removed
 * once every file is in place), `supersedesGroups` the per-group zips of AllThePlaces. */
type Plan = { files: FileSpec[]; supersedes?: string[]; supersedesGroups?: boolean } | { skip: string };

/**
 * Finds each source's current files (small metadata requests first, so a bad country, release
 * or token fails before any large download), then downloads them one at a time.
 */
export async function fetchSources(opts: FetchOptions): Promise<FetchSummary> {
  const country = parseCountry(opts.country);
  const sources = parseSources(opts.sources ?? FETCH_SOURCES);
  if (opts.overtureRelease !== undefined && !OVERTURE_RELEASE.test(opts.overtureRelease)) {
    throw new Error(`--overture-release must look like 2026-04-15.0, not "${opts.overtureRelease}"`);
  }
  const fsqRelease = opts.fsqRelease?.replace(/^dt=/, '');
  if (fsqRelease !== undefined && !FSQ_RELEASE.test(fsqRelease)) {
    throw new Error(`--fsq-release must be a release date such as 2026-03-12, not "${opts.fsqRelease}"`);
  }
  const ctx: Ctx = {
    opts: { ...opts, fsqRelease },
    config: opts.config,
    fetch: opts.fetch ?? globalThis.fetch,
    log: opts.log ?? (() => {}),
    warn: () => {},
    now: opts.now ?? Date.now,
  };

  const summary: FetchSummary = { country, files: [], skipped: [], failed: [], warnings: [] };
  ctx.warn = (line) => {
    summary.warnings.push(line);
    ctx.log(`warning: ${line}`);
  };
  // Every source is planned first (small metadata requests, so a bad country, release or token
  // shows before any large download), each on its own: one publisher's outage or change of
  // layout is reported and the others are fetched all the same.
  // Reported once, at the end, by the error that lists every failure.
  const fail = (source: FetchSource, e: unknown) => summary.failed.push({ source, reason: e instanceof Error ? e.message : String(e) });
  const plans = new Map<FetchSource, Plan>();
  for (const s of sources) {
    const out = path.join(opts.outDir, s);
    try {
      if (s === 'osm') plans.set(s, await planOsm(ctx, country, out));
      else if (s === 'atp') plans.set(s, await planAtp(ctx, out));
      else if (s === 'overture') plans.set(s, await planOverture(ctx, out));
      else plans.set(s, await planFsq(ctx, out));
    } catch (e) {
      fail(s, e);
    }
  }
  for (const [source, plan] of plans) {
    if ('skip' in plan) {
      ctx.log(`${source}: skipped: ${plan.skip}`);
      summary.skipped.push({ source, reason: plan.skip });
      continue;
    }
    try {
      for (const spec of plan.files) summary.files.push(await downloadFile(ctx, spec));
      await removeSuperseded(ctx, source, path.join(opts.outDir, source), plan);
      await noteForeignFiles(ctx, source, path.join(opts.outDir, source), plan.files);
    } catch (e) {
      fail(source, e);
    }
  }
  if (summary.failed.length) throw new FetchFailed(summary);
  return summary;
}

/** Removes the files of a layout this fetch replaced (AllThePlaces' combined zip once its groups
 * are fetched, or the groups' zips once a combined one is), after every new file is in place. */
async function removeSuperseded(ctx: Ctx, source: FetchSource, dir: string, plan: { files: FileSpec[]; supersedes?: string[]; supersedesGroups?: boolean }): Promise<void> {
  const ours = new Set(plan.files.map((f) => path.basename(f.dest)));
  let names = plan.supersedes ?? [];
  if (plan.supersedesGroups) {
    const present = await readdir(dir).catch(() => [] as string[]);
    names = present.filter((n) => n.endsWith('.zip') && !ours.has(n));
  }
  for (const name of names.filter((n) => !ours.has(n))) {
    const file = path.join(dir, name);
    if (await rm(file).then(() => true, () => false)) ctx.log(`${source}: removed ${name}, replaced by ${[...ours].join(', ')} (importing both would count every store twice)`);
  }
}

// ---------------------------------------------------------------------------------------------
// OpenStreetMap (Geofabrik)

const GeofabrikIndex = z.object({
  features: z.array(
    z.object({
      properties: z.object({
        id: z.string(),
        parent: z.string().optional(),
        'iso3166-1:alpha2': z.array(z.string()).optional(),
        urls: z.object({ pbf: z.string().optional() }).optional(),
      }),
    }),
  ),
});
type GeofabrikExtract = z.infer<typeof GeofabrikIndex>['features'][number]['properties'];

/**
 * The extracts for a country, best first: among the features listing it in `iso3166-1:alpha2`
 * and having a PBF, those covering the fewest countries (Switzerland, not "dach"), then the
 * shallowest in the `parent` chain (the country, not a region of it), then by id.
 */
export function rankExtracts(extracts: GeofabrikExtract[], country: string): GeofabrikExtract[] {
  const byId = new Map(extracts.map((e) => [e.id, e]));
  const depth = (e: GeofabrikExtract) => {
    let d = 0;
    const seen = new Set<string>();
    for (let p = e.parent; p && byId.has(p) && !seen.has(p); p = byId.get(p)!.parent) {
      seen.add(p);
      d++;
    }
    return d;
  };
  const codes = (e: GeofabrikExtract) => (e['iso3166-1:alpha2'] ?? []).map((c) => c.toUpperCase());
  return extracts
    .filter((e) => e.urls?.pbf && codes(e).includes(country))
    .sort((a, b) => codes(a).length - codes(b).length || depth(a) - depth(b) || a.id.localeCompare(b.id));
}

async function planOsm(ctx: Ctx, country: string, out: string): Promise<Plan> {
  const mirror = ctx.config.osmMirror;
  let indexUrl = `${mirror}/index-v1-nogeom.json`;
  let res = await request(ctx, indexUrl);
  if (res.status === 404) {
    await res.body?.cancel();
    indexUrl = `${mirror}/index-v1.json`;
    res = await request(ctx, indexUrl);
  }
  const index = parseWith(GeofabrikIndex, await jsonBody(res, indexUrl, 'osm'), indexUrl, 'osm', 'a Geofabrik index (GeoJSON FeatureCollection)');
  const extracts = index.features.map((f) => f.properties);
  const [pick, ...others] = rankExtracts(extracts, country);
  if (!pick) throw new Error(`osm: Geofabrik has no extract for country ${country} (no feature of ${indexUrl} lists it in iso3166-1:alpha2)`);
  const url = onMirror(new URL(pick.urls!.pbf!, indexUrl).href, mirror);
  const also = others.length ? ` (also listing ${country}: ${others.map((e) => e.id).join(', ')})` : '';
  ctx.log(`osm: ${country} is Geofabrik extract "${pick.id}"${also}: ${url}`);

  const md5Url = `${url}.md5`;
  const md5Res = await request(ctx, md5Url);
  let checksum: FileSpec['checksum'];
  if (md5Res.status === 404) {
    await md5Res.body?.cancel();
    ctx.log(`osm: no checksum published (${md5Url}: HTTP 404); the download is checked against Content-Length only`);
  } else {
    if (!md5Res.ok) throw await httpError(md5Res, md5Url, 'osm');
    const text = await md5Res.text();
    const m = /^\s*([0-9a-fA-F]{32})(?:\s|$)/.exec(text);
    if (!m) throw new Error(`osm: ${md5Url} is not an MD5 checksum file ("<hex>  <file name>")`);
    checksum = { alg: 'md5', hex: m[1].toLowerCase(), from: md5Url };
  }
  return { files: [{ source: 'osm', url, dest: path.join(out, fileName(url)), checksum }] };
}

/** A PBF URL on Geofabrik's own host, moved to the configured mirror (same path). */
function onMirror(url: string, mirror: string): string {
  if (url.startsWith(`${mirror}/`)) return url;
  const u = new URL(url);
  if (u.hostname === 'download.geofabrik.de' && new URL(mirror).hostname !== u.hostname) return `${mirror}${u.pathname}`;
  return url;
}

// ---------------------------------------------------------------------------------------------
// AllThePlaces

/** A run as `runs/latest.json` described it before AllThePlaces grouped its runs, and as
 * `runs/<group>/latest.json` still does: one combined zip. */
const AtpRun = z.object({
  run_id: z.string().optional(),
  output_url: z.string().min(1),
  size_bytes: z.number().optional(),
});

/** `runs/latest.json` since the grouped runs (AllThePlaces' design doc
 * docs/superpowers/specs/2026-04-11-grouped-spider-runs-design.md): no combined zip, a `groups`
 * array with one zip per group. */
const AtpGroups = z.object({
  updated_at: z.string().optional(),
  groups: z.array(
    z.object({
      name: z.string(),
      zip_url: z.string().min(1).optional(),
      size_bytes: z.number().optional(),
      last_run_id: z.string().optional(),
      last_run_time: z.string().optional(),
    }),
  ),
});

/** Groups whose spiders are not storefronts: street addresses, government registers, and
 * infrastructure (masts, chargers, post boxes). Every other group, `brands` and `aggregators`
 * and any added later, is fetched. */
const ATP_SKIPPED_GROUPS = new Set(['addresses', 'government', 'infrastructure']);

/** The combined zip of the runs before grouping, and the groups' zips: a fetch removes the
 * layout it did not write, or the importer would read every store twice. */
const ATP_COMBINED = 'output.zip';

async function planAtp(ctx: Ctx, out: string): Promise<Plan> {
  const latestUrl = `${ctx.config.atpBase}/runs/latest.json`;
  const latest = await jsonBody(await request(ctx, latestUrl), latestUrl, 'atp');
  const grouped = AtpGroups.safeParse(latest);
  if (grouped.success) {
    const groups = grouped.data.groups.filter((g) => !ATP_SKIPPED_GROUPS.has(g.name) && g.zip_url);
    if (groups.length === 0) throw new Error(`atp: ${latestUrl} lists no storefront group with a zip_url (groups: ${grouped.data.groups.map((g) => g.name).join(', ') || 'none'})`);
    for (const g of grouped.data.groups.filter((g) => ATP_SKIPPED_GROUPS.has(g.name))) ctx.log(`atp: group ${g.name} skipped (not storefronts)`);
    const files = groups.map((g): FileSpec => {
      if (!/^[a-z0-9_-]+$/i.test(g.name)) throw new Error(`atp: ${latestUrl} names a group "${g.name}", which is not a plain name`);
      const url = new URL(g.zip_url!, latestUrl).href;
      ctx.log(`atp: group ${g.name}, run ${g.last_run_id ?? '(no run id)'}: ${url}`);
      return { source: 'atp', url, dest: path.join(out, `${g.name}.zip`), size: g.size_bytes, sizeFrom: latestUrl };
    });
    return { files, supersedes: [ATP_COMBINED] };
  }
  const combined = AtpRun.safeParse(latest);
  if (combined.success) {
    const url = new URL(combined.data.output_url, latestUrl).href;
    ctx.log(`atp: latest run ${combined.data.run_id ?? '(no run_id)'}: ${url}`);
    return { files: [{ source: 'atp', url, dest: path.join(out, ATP_COMBINED), size: combined.data.size_bytes, sizeFrom: latestUrl }], supersedesGroups: true };
  }
  // Neither shape: the brands group's own run metadata (the old shape, its zip brands.zip).
  const brandsUrl = `${ctx.config.atpBase}/runs/brands/latest.json`;
  ctx.log(`atp: ${latestUrl} has neither groups nor an output_url; trying ${brandsUrl}`);
  const run = parseWith(AtpRun, await jsonBody(await request(ctx, brandsUrl), brandsUrl, 'atp'), brandsUrl, 'atp', 'run metadata with an output_url');
  const url = new URL(run.output_url, brandsUrl).href;
  ctx.log(`atp: brands run ${run.run_id ?? '(no run_id)'}: ${url}`);
  return { files: [{ source: 'atp', url, dest: path.join(out, 'brands.zip'), size: run.size_bytes, sizeFrom: brandsUrl }], supersedes: [ATP_COMBINED] };
}

// ---------------------------------------------------------------------------------------------
// Overture

const StacRoot = z.object({ latest: z.string() });

async function planOverture(ctx: Ctx, out: string): Promise<Plan> {
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
    throw new Error(`overture: no places files under ${base}/${prefix}: is ${release} a published release? (Overture removes old releases after a few months)`);
  }
  const total = objects.reduce((n, o) => n + o.size, 0);
  ctx.log(`overture: release ${release}: ${objects.length} places file(s), ${formatBytes(total)} (worldwide; --country does not narrow Overture)`);
  return {
    files: objects.map((o) => ({
      source: 'overture' as const,
      url: `${base}/${encodePath(o.key)}`,
      // The hive folders below the release, as published: theme=places/type=place/<file>.
      dest: path.join(out, ...o.key.slice(`release/${release}/`.length).split('/')),
      size: o.size,
      sizeFrom: 'the bucket listing',
    })),
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

// ---------------------------------------------------------------------------------------------
// Foursquare OS Places (Hugging Face)

const HfTree = z.array(
  z.object({
    type: z.string(),
    path: z.string(),
    size: z.number().optional(),
    lfs: z.object({ oid: z.string(), size: z.number().optional() }).optional(),
  }),
);
type HfEntry = z.infer<typeof HfTree>[number];

async function planFsq(ctx: Ctx, out: string): Promise<Plan> {
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
    const days = Math.floor((ctx.now() - Date.parse(`${dt}T00:00:00Z`)) / 86_400_000);
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

// ---------------------------------------------------------------------------------------------
// HTTP helpers

function request(ctx: Ctx, url: string, headers: Record<string, string> = {}): Promise<Response> {
  return ctx.fetch(url, { headers: { 'user-agent': 'storemap-data-fetch', ...headers } }).catch((e: unknown) => {
    throw new Error(`GET ${url} failed: ${causeMessage(e)}`);
  });
}

async function jsonBody(res: Response, url: string, source: FetchSource): Promise<unknown> {
  if (!res.ok) throw await httpError(res, url, source);
  const text = await res.text();
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`${source}: ${url} did not answer with JSON`);
  }
}

function parseWith<T>(schema: z.ZodType<T>, value: unknown, url: string, source: FetchSource, what: string): T {
  const r = schema.safeParse(value);
  if (!r.success) {
    const i = r.error.issues[0];
    throw new Error(`${source}: ${url} is not ${what} (${i.path.join('.') || 'top level'}: ${i.message})`);
  }
  return r.data;
}

async function httpError(res: Response, url: string, source: FetchSource): Promise<Error> {
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

function encodePath(p: string): string {
  return p.split('/').map(encodeURIComponent).join('/');
}

function fileName(url: string): string {
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

async function downloadFile(ctx: Ctx, spec: FileSpec): Promise<FetchedFile> {
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
async function noteForeignFiles(ctx: Ctx, source: FetchSource, dir: string, files: FileSpec[]): Promise<void> {
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
