/**
 * `storemap data fetch`: downloads the four publishers' current files into a data folder's
 * `downloads/<source>/` (not the synthetic world's `sources/`), resumably and verified, over
 * plain HTTP(S) with Node's global `fetch`.
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
 *   downloaded as published to `downloads/atp/output.zip`; it carries no checksum, so the checks
 *   are the byte count against `Content-Length` (and the listing's `size_bytes`) and the zip's
 *   own end records (`fetch/zip-shape.ts`: an error page or a file cut short does not pass).
 * - **Overture Maps places.** The latest release is named by the `latest` field of the Overture
 *   STAC catalog, https://stac.overturemaps.org/catalog.json (the docs' "Accessing the Overture
 *   Catalog", https://docs.overturemaps.org/ ; `releases.json` and the other older discovery
 *   files are deprecated per https://github.com/OvertureMaps/data). The data sits in the public
 *   bucket `s3://overturemaps-us-west-2/release/<release>/theme=places/type=place/`, readable
 *   anonymously over HTTPS at `https://overturemaps-us-west-2.s3.us-west-2.amazonaws.com`.
 *   **What we chose, and why:** the files are listed with one S3 `ListObjectsV2` request
 *   (`<base>/?list-type=2&prefix=release/<R>/theme=places/type=place/`, XML, followed through
 *   `NextContinuationToken`). With an area (`--country`, `--bbox`) each file is cut by range
 *   requests (`fetch/cut.ts`): its footer, then only the row groups whose `bbox` column
 *   statistics meet the country's boxes (GeoParquet 1.1's `covering`, which Overture writes so
 *   that readers can do exactly this; overturemaps-py and DuckDB read the release the same way),
 *   written as a GeoParquet file of those row groups. A file without the statistics is
 *   downloaded whole with a warning, as is every file with `--overture-worldwide`, its size
 *   checked against the listing. A cut keeps row groups by their boxes, not by borders, so it
 *   holds some rows of neighbours; the import's `--country` drops them.
 *   `--overture-release R` pins a release (Overture removes a release about 60 days after it appears).
 *   The files keep the bucket's hive layout below the release,
 *   `downloads/overture/theme=places/type=place/*.parquet` (the importer reads subfolders).
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
import path from 'node:path';
import { planAtp } from './fetch/atp.ts';
import { cutFile, forgetCut } from './fetch/cut.ts';
import { noteForeignFiles, downloadFile, removeSuperseded } from './fetch/download.ts';
import { FSQ_RELEASE, planFsq } from './fetch/fsq.ts';
import { planOsm } from './fetch/geofabrik.ts';
import { OVERTURE_RELEASE, planOverture } from './fetch/overture.ts';
import { FETCH_SOURCES, type Area, type Ctx, type FetchedFile, type FetchOptions, type FetchSource, type Plan } from './fetch/plan.ts';

export { FETCH_SOURCES, type Area, type FetchedFile, type FetchOptions, type FetchSource } from './fetch/plan.ts';
export { formatBytes } from './fetch/download.ts';
export { rankExtracts } from './fetch/geofabrik.ts';
export { FSQ_STALE_DAYS } from './fetch/fsq.ts';
export { FetchEnvSchema, loadFetchConfig, type FetchConfig } from '../config.ts';

// ---------------------------------------------------------------------------------------------
// Arguments

/** A two-letter ISO 3166-1 code, upper-cased; anything else throws. */
export function parseCountry(value: string): string {
  const v = value.trim();
  if (!/^[A-Za-z]{2}$/.test(v)) throw new Error(`--country must be a two-letter ISO 3166-1 code such as CH or US, not "${value}"`);
  return v.toUpperCase();
}

/** Whether `YYYY-MM-DD` is a day the calendar has (2026-13-01 and 2026-02-30 are not): a
 * release named that way would be looked for in the publisher's listing and not found. */
function isCalendarDate(ymd: string): boolean {
  const d = new Date(`${ymd}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === ymd;
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

/** Our borders are Natural Earth's, which leave out small islands and simplify coasts: a
 * country's boxes are widened by this much (degrees) so a cut keeps the stores along them. */
export const COUNTRY_MARGIN_DEG = 0.25;

/** A country's area for cutting Overture: each of its polygons' boxes, widened. */
export function countryArea(code: string, boxes: number[][] | null): Area {
  if (!boxes || boxes.length === 0) throw new Error(`no country ${code} in the reference borders`);
  const m = COUNTRY_MARGIN_DEG;
  return {
    label: code,
    boxes: boxes.map(([w, s, e, n]) => [Math.max(w - m, -180), Math.max(s - m, -90), Math.min(e + m, 180), Math.min(n + m, 90)]),
  };
}

export interface FetchSummary {
  country?: string;
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

/**
 * Finds each source's current files (small metadata requests first, so a bad country, release
 * or token fails before any large download), then downloads them one at a time.
 */
export async function fetchSources(opts: FetchOptions): Promise<FetchSummary> {
  const country = opts.country === undefined ? undefined : parseCountry(opts.country);
  const sources = parseSources(opts.sources ?? FETCH_SOURCES);
  if (country === undefined && sources.includes('osm')) {
    throw new Error('OpenStreetMap is published per country: give --country, or leave osm out of --sources');
  }
  if (opts.overtureRelease !== undefined && !OVERTURE_RELEASE.test(opts.overtureRelease)) {
    throw new Error(`--overture-release must look like 2026-04-15.0, not "${opts.overtureRelease}"`);
  }
  if (opts.overtureRelease !== undefined && !isCalendarDate(opts.overtureRelease.slice(0, 10))) {
    throw new Error(`--overture-release: ${opts.overtureRelease.slice(0, 10)} is no date (a release is named for the day it came out, such as 2026-04-15.0)`);
  }
  const fsqRelease = opts.fsqRelease?.replace(/^dt=/, '');
  if (fsqRelease !== undefined && (!FSQ_RELEASE.test(fsqRelease) || !isCalendarDate(fsqRelease))) {
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
      if (s === 'osm') plans.set(s, await planOsm(ctx, country!, out));
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
      for (const spec of plan.files) {
        const cut = spec.cut && spec.size !== undefined ? await cutFile(ctx, { ...spec, size: spec.size }, spec.cut) : undefined;
        if (!cut) await forgetCut(spec.dest);
        summary.files.push(cut ?? (await downloadFile(ctx, spec)));
      }
      await removeSuperseded(ctx, source, path.join(opts.outDir, source), plan);
      await noteForeignFiles(ctx, source, path.join(opts.outDir, source), plan.files);
    } catch (e) {
      fail(source, e);
    }
  }
  if (summary.failed.length) throw new FetchFailed(summary);
  return summary;
}
