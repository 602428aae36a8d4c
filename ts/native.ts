// The one door to the Rust addon. The addon's errors are data: a JS error whose `code` is the
// service's error code; this module hands them on as NativeError, so callers never parse text.
// Its requests take the string enums' values as plain strings ('json', 'png', 'full_retail').
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type * as Binding from '../native/index.js';
import type * as TestingBinding from '../native/testing/index.js';
import { TABLES_DIR } from './paths.ts';

const require = createRequire(import.meta.url);
const binding = require('../native/index.js') as typeof Binding;

/** A string enum's values as a union of string literals. */
type Values<E extends string> = `${E}`;

export type Store = Binding.Store;
export type DataFormat = Values<Binding.DataFormat>;
export type StorefrontKind = Values<Binding.StorefrontKind>;
export type ImageKind = Values<Binding.ImageKind>;
export type QueryRequest = Omit<Binding.QueryRequest, 'format' | 'storefrontType'> & { format: DataFormat; storefrontType?: StorefrontKind };
export type QueryResponse = Binding.QueryResponse;
export type ChangesRequest = Omit<Binding.ChangesRequest, 'format' | 'storefrontType'> & { format: DataFormat; storefrontType?: StorefrontKind };
export type ChangesResponse = Binding.ChangesResponse;
export type HistoryInterval = Values<Binding.HistoryInterval>;
export type HistoryRequest = Omit<Binding.HistoryRequest, 'interval' | 'storefrontType'> & { interval: HistoryInterval; storefrontType?: StorefrontKind };
export type HistoryResponse = Binding.HistoryResponse;
export type NearbyRequest = Omit<Binding.NearbyRequest, 'format'> & { format: DataFormat };
export type OverlapRequest = Omit<Binding.OverlapRequest, 'format'> & { format: DataFormat };
export type OverlapRenderRequest = Omit<Binding.OverlapRenderRequest, 'format'> & { format: ImageKind };
export type BrandInfo = Binding.BrandInfo;
export type Resolved = Binding.Resolved;
export type SnapshotInfo = Binding.SnapshotInfo;
export type Renderer = Binding.Renderer;
export type RenderRequest = Omit<Binding.RenderRequest, 'query' | 'format'> & { query: QueryRequest; format: ImageKind };
export type RenderResponse = Binding.RenderResponse;
export type BasemapInfo = Binding.BasemapInfo;
export type BasemapStatus = Binding.BasemapStatus;
/** The renderer's defaults and bounds (the image side, marker radius, JPEG quality, focus-map
 * colours, the bound on one map's marker work): their one home is the render crate. */
export const RENDER_DEFAULTS: Binding.RenderDefaults = binding.renderDefaults();
/** The renderer's bound on one map's marker work, in pixels. */
export const MAX_MARKER_PIXELS: number = RENDER_DEFAULTS.maxMarkerPixels;

/** A string enum's values at run time, in declaration order: the addon exports each enum as an
 * object (TypeScript sees a const enum, which has no value of its own). */
function values<E extends string>(name: 'DataFormat' | 'ImageKind' | 'StorefrontKind' | 'SourceKind' | 'NativeCode' | 'HistoryInterval'): [Values<E>, ...Values<E>[]] {
  const e = (binding as unknown as Record<string, Record<string, string>>)[name];
  return Object.values(e) as unknown as [Values<E>, ...Values<E>[]];
}
/** The data formats, image formats and storefront types: the addon's string enums. */
export const DATA_FORMATS = values<Binding.DataFormat>('DataFormat');
export const IMAGE_FORMATS = values<Binding.ImageKind>('ImageKind');
export const STOREFRONT_KINDS = values<Binding.StorefrontKind>('StorefrontKind');
/** The steps of a store-count series (GET /api/v1/history). */
export const HISTORY_INTERVALS = values<Binding.HistoryInterval>('HistoryInterval');
/** The sources a row can come from (\`source_types\`, X-Data-Sources, disabled sources). */
export const SOURCE_KINDS = values<Binding.SourceKind>('SourceKind');
export type SourceKind = Values<Binding.SourceKind>;

/** The data's fixed rules and names (the confidence floor, the snapshot's file names): their one
 * home is the core crate. */
export const DATA_DEFAULTS: Binding.DataDefaults = binding.dataDefaults();
/** The serving snapshot's file name in a data folder. */
export const SNAPSHOT_FILE = DATA_DEFAULTS.snapshotFile;
/** The snapshot a build replaced, kept for \`storemap data rollback\`. */
export const PREVIOUS_SNAPSHOT_FILE = DATA_DEFAULTS.previousSnapshotFile;
/** Data formats serve rows with at least this confidence. */
export const CONFIDENCE_FLOOR = DATA_DEFAULTS.confidenceFloor;

/** Why the addon did no work (`refused` of a response): the enum's values. */
export type RefusalReason = Values<Binding.Refusal>;

/** Every code an error from the addon carries (the addon's `NativeCode` string enum). */
export type NativeCode = Values<Binding.NativeCode>;
const NATIVE_CODES: readonly string[] = values<Binding.NativeCode>('NativeCode');

export class NativeError extends Error {
  constructor(
    readonly code: NativeCode,
    message: string,
    /** The request field at fault, where the addon names one (`focus_country`, `regions`). */
    readonly field?: string,
  ) {
    super(message);
    this.name = 'NativeError';
  }
}

/** napi's own codes (an argument of the wrong type: 'InvalidArg', 'StringExpected') are
 * PascalCase. */
const NAPI_CODE = /^[A-Z][a-z]+(?:[A-Z][a-z]*)*$/;

/** The addon's error as a NativeError: its own code; a value napi could not convert is the
 * request's mistake (INVALID_REQUEST); anything else is INTERNAL. */
export function toNativeError(e: unknown): NativeError {
  if (e instanceof NativeError) return e;
  const message = e instanceof Error ? e.message : String(e);
  const code = (e as { code?: unknown } | null)?.code;
  const field = (e as { field?: unknown } | null)?.field;
  if (typeof code === 'string' && NATIVE_CODES.includes(code)) return new NativeError(code as NativeCode, message, typeof field === 'string' ? field : undefined);
  if (typeof code === 'string' && NAPI_CODE.test(code) && code !== 'GenericFailure') return new NativeError('INVALID_REQUEST', message);
  return new NativeError('INTERNAL', message);
}

async function wrap<T>(p: () => Promise<T> | T): Promise<T> {
  try {
    return await p();
  } catch (e) {
    throw toNativeError(e);
  }
}

function wrapSync<T>(f: () => T): T {
  try {
    return f();
  } catch (e) {
    throw toNativeError(e);
  }
}

export function loadStore(path: string): Promise<Store> {
  return wrap(() => binding.loadStore(path));
}

export function loadStoreSync(path: string): Store {
  return wrapSync(() => binding.loadStoreSync(path));
}

/** Which world a snapshot file was built from (synthetic, scale, seed), without loading it. */
export function snapshotWorld(path: string): Binding.SnapshotWorld {
  return wrapSync(() => binding.snapshotWorldSync(path));
}

export function query(store: Store, req: QueryRequest): Promise<QueryResponse> {
  // The string enums' values are the strings the addon takes.
  return wrap(() => store.query(req as Binding.QueryRequest));
}

const poolCounts = new WeakMap<Store, Map<number, number>>();

/** A brand's reconciled rows (what a query scans), asked of the snapshot once per brand. */
export function poolCount(store: Store, brand: number): number {
  let counts = poolCounts.get(store);
  if (!counts) poolCounts.set(store, (counts = new Map()));
  let n = counts.get(brand);
  if (n === undefined) counts.set(brand, (n = store.brand(brand)?.poolCount ?? 0));
  return n;
}

export function querySync(store: Store, req: QueryRequest): QueryResponse {
  return wrapSync(() => store.querySync(req as Binding.QueryRequest));
}

/** A brand's stores opened and closed since a date (the data folder's change feed). */
export function changes(store: Store, req: ChangesRequest): Promise<ChangesResponse> {
  return wrap(() => store.changes(req as Binding.ChangesRequest));
}

export function changesSync(store: Store, req: ChangesRequest): ChangesResponse {
  return wrapSync(() => store.changesSync(req as Binding.ChangesRequest));
}

/** A brand's store counts by month or quarter (the data folder's change feed). */
export function history(store: Store, req: HistoryRequest): Promise<HistoryResponse> {
  return wrap(() => store.history(req as Binding.HistoryRequest));
}

export function historySync(store: Store, req: HistoryRequest): HistoryResponse {
  return wrapSync(() => store.historySync(req as Binding.HistoryRequest));
}

/** The stores nearest a point, nearest first. */
export function nearby(store: Store, req: NearbyRequest): Promise<QueryResponse> {
  return wrap(() => store.nearby(req as Binding.NearbyRequest));
}

/** Pairs of stores of different brands within a distance. */
export function overlap(store: Store, req: OverlapRequest): Promise<QueryResponse> {
  return wrap(() => store.overlap(req as Binding.OverlapRequest));
}

/** An overlap map: each pair a line between its two stores. */
export function renderOverlap(renderer: Renderer, store: Store, req: OverlapRenderRequest): Promise<RenderResponse> {
  return wrap(() => renderer.renderOverlap(store, req as Binding.OverlapRenderRequest));
}

export function nearbySync(store: Store, req: NearbyRequest): QueryResponse {
  return wrapSync(() => store.nearbySync(req as Binding.NearbyRequest));
}

/** DejaVu Sans, from its npm package: broad Unicode coverage for city names worldwide. */
export const LABEL_FONT = require.resolve('dejavu-fonts-ttf/ttf/DejaVuSans.ttf');

/** Where city and street views are drawn from: a PMTiles archive of vector tiles. */
export interface BasemapOptions {
  path: string;
  cacheBytes: number;
}

/**
 * The map renderer, from the reference folder the data step writes (country and US state
 * shapes, the gazetteer for city labels), the theme table, the label font and, when given, a
 * basemap archive. An archive that cannot be opened does not stop it: `basemapStatus()` says
 * why, and the Natural Earth map is drawn.
 */
export function loadRenderer(referenceDir: string, basemap?: BasemapOptions, mapCellBytes?: number): Renderer {
  return wrapSync(() =>
    binding.loadRendererSync({
      countriesGeojson: path.join(referenceDir, 'countries.geojson'),
      usStatesGeojson: path.join(referenceDir, 'us_states.geojson'),
      // Reference data of format 4 and older has none: its maps draw the lakes as land.
      lakesGeojson: existsSync(path.join(referenceDir, 'lakes.geojson')) ? path.join(referenceDir, 'lakes.geojson') : undefined,
      citiesCsv: path.join(referenceDir, 'cities.csv'),
      font: LABEL_FONT,
      themesJson: path.join(TABLES_DIR, 'themes.json'),
      basemap: basemap?.path,
      basemapCacheBytes: basemap?.cacheBytes,
      mapCellBytes,
    }),
  );
}

export type ExtractSummary = Binding.ExtractSummary;
export interface ByteRange {
  offset: number;
  length: number;
}

/** A region cut out of a PMTiles archive by byte ranges (`storemap basemap extract`): the
 * addon's state machine, its errors as NativeError (INVALID_BASEMAP). */
export class BasemapExtract {
  private readonly inner: Binding.BasemapExtract;
  constructor(head: Buffer, bbox: [number, number, number, number], minZoom: number, maxZoom: number, dataPath: string) {
    this.inner = wrapSync(() => new binding.BasemapExtract(head, bbox, minZoom, maxZoom, dataPath));
  }
  /** The ranges to read next; none when it is time to finish. */
  ranges(): ByteRange[] {
    return this.inner.ranges();
  }
  feed(chunks: Buffer[]): void {
    wrapSync(() => this.inner.feed(chunks));
  }
  get bytesAsked(): number {
    return this.inner.bytesAsked;
  }
  finish(out: string): ExtractSummary {
    return wrapSync(() => this.inner.finish(out));
  }
}

export type CutSummary = Binding.CutSummary;
/** The first read from the end of a Parquet file. */
export const PARQUET_TAIL_BYTES: number = binding.PARQUET_TAIL_BYTES;

/** How many bytes at the end of a Parquet file hold its footer, from its last bytes;
 * INVALID_SOURCE when they are not a Parquet footer. */
export function parquetFooterLength(tail: Buffer, fileSize: number): number {
  return wrapSync(() => binding.parquetFooterLength(tail, fileSize));
}

/** An area cut out of a GeoParquet file by byte ranges (`data fetch` of Overture by country):
 * the row groups whose bbox statistics meet the boxes [west, south, east, north]. */
export class GeoParquetCut {
  private readonly inner: Binding.GeoParquetCut;
  constructor(tail: Buffer, fileSize: number, boxes: [number, number, number, number][]) {
    this.inner = wrapSync(() => new binding.GeoParquetCut(tail, fileSize, boxes));
  }
  /** False when the file has no bbox statistics: the cut would keep it whole. */
  get filterable(): boolean {
    return this.inner.filterable;
  }
  ranges(): ByteRange[] {
    return this.inner.ranges();
  }
  summary(): CutSummary {
    return this.inner.summary();
  }
  /** `rangesFile` holds the ranges' bytes one after another. */
  write(rangesFile: string, out: string): CutSummary {
    return wrapSync(() => this.inner.write(rangesFile, out));
  }
}

/** What a basemap archive holds (`storemap basemap info`); INVALID_BASEMAP when it is not one. */
export function basemapInfo(file: string): BasemapInfo {
  return wrapSync(() => binding.basemapInfo(file));
}

export function render(renderer: Renderer, store: Store, req: RenderRequest): Promise<RenderResponse> {
  return wrap(() => renderer.render(store, req as Binding.RenderRequest));
}

export function renderSync(renderer: Renderer, store: Store, req: RenderRequest): RenderResponse {
  return wrapSync(() => renderer.renderSync(store, req as Binding.RenderRequest));
}

/**
 * The addon's test variant (`bash scripts/build.sh --testing` builds it into native/testing/):
 * the bench- and test-only exports (`clusterPoints`, `encodeBlankPng`, `panicForTest`), which
 * a production build does not have. Loaded on first use only.
 */
export function testingAddon(): typeof TestingBinding {
  return require('../native/testing/index.js') as typeof TestingBinding;
}

/** Test hook (the test variant, and STOREMAP_TEST_HOOKS=1): a panic inside the addon. */
export function panicForTest(onPool: boolean): Promise<unknown> {
  return wrap(() => testingAddon().panicForTest(onPool));
}
