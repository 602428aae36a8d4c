// The one door to the Rust addon. The addon reports errors as "CODE: message"; this module
// turns them into NativeError with a `code`, so callers never parse strings.
import { createRequire } from 'node:module';
import path from 'node:path';
import type * as Binding from '../native/index.js';
import { TABLES_DIR } from './paths.ts';

const require = createRequire(import.meta.url);
const binding = require('../native/index.js') as typeof Binding;

export type Store = Binding.Store;
export type QueryRequest = Binding.QueryRequest;
export type QueryResponse = Binding.QueryResponse;
export type BrandInfo = Binding.BrandInfo;
export type Resolved = Binding.Resolved;
export type Renderer = Binding.Renderer;
export type RenderRequest = Binding.RenderRequest;
export type RenderResponse = Binding.RenderResponse;
/** The renderer's bound on one map's marker work, in pixels (its one home is the render crate). */
export const MAX_MARKER_PIXELS: number = binding.MAX_MARKER_PIXELS;

/** Why the addon did no work (`refused` of a response): the enum's values. */
export type RefusalReason = `${Binding.Refusal}`;

export class NativeError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'NativeError';
  }
}

/** Splits the addon's "CODE: message" into a NativeError; anything else is INTERNAL. */
export function toNativeError(e: unknown): NativeError {
  const message = e instanceof Error ? e.message : String(e);
  const m = /^([A-Z][A-Z_]+): ([\s\S]*)$/.exec(message);
  return m ? new NativeError(m[1], m[2]) : new NativeError('INTERNAL', message);
}

async function wrap<T>(p: () => Promise<T> | T): Promise<T> {
  try {
    return await p();
  } catch (e) {
    throw toNativeError(e);
  }
}

export function loadStore(path: string): Promise<Store> {
  return wrap(() => binding.loadStore(path));
}

export function loadStoreSync(path: string): Store {
  try {
    return binding.loadStoreSync(path);
  } catch (e) {
    throw toNativeError(e);
  }
}

export function query(store: Store, req: QueryRequest): Promise<QueryResponse> {
  return wrap(() => store.query(req));
}

/**
 * The map renderer, from the reference folder the data step writes (country and US state
 * shapes, the gazetteer for city labels), the theme table and the label font.
 */
/** DejaVu Sans, from its npm package: broad Unicode coverage for city names worldwide. */
export const LABEL_FONT = require.resolve('dejavu-fonts-ttf/ttf/DejaVuSans.ttf');

export function loadRenderer(referenceDir: string): Renderer {
  try {
    return binding.loadRendererSync({
      countriesGeojson: path.join(referenceDir, 'countries.geojson'),
      usStatesGeojson: path.join(referenceDir, 'us_states.geojson'),
      citiesCsv: path.join(referenceDir, 'cities.csv'),
      font: LABEL_FONT,
      themesJson: path.join(TABLES_DIR, 'themes.json'),
    });
  } catch (e) {
    throw toNativeError(e);
  }
}

export function render(renderer: Renderer, store: Store, req: RenderRequest): Promise<RenderResponse> {
  return wrap(() => renderer.render(store, req));
}

/** Test hook (needs STOREMAP_TEST_HOOKS=1): a panic inside the addon. */
export function panicForTest(onPool: boolean): Promise<unknown> {
  return wrap(() => binding.panicForTest(onPool));
}
