// Where the project's own files are, wherever the process was started from: the checkout, or,
// in the single executable, the cache folder its files were unpacked into (ts/release/).
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** What the single executable says about itself before the service loads. */
export interface ReleaseInfo {
  /** The cache folder its files were unpacked into, laid out as a checkout. */
  root: string;
  version: string;
  commit: string;
  snapshotFormat: number;
  /** The embedded Node. */
  node: string;
}

/** Set when running from the single executable; undefined in a checkout or an npm install. */
export const RELEASE: ReleaseInfo | undefined = (globalThis as { __storemapRelease?: ReleaseInfo }).__storemapRelease;

export const ROOT = RELEASE?.root ?? path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** The project's small tables kept in git (tickers, categories, misspellings). */
export const TABLES_DIR = path.join(ROOT, 'data');
/** The napi-rs platform package the prebuilt npm package takes its native parts from. */
export const PLATFORM_PACKAGE = '@storemap/native-linux-x64-gnu';
/**
 * The pipeline binary: copied into native/bin by `npm install` in a checkout (scripts/build.sh)
 * and unpacked there by the executable; in the prebuilt npm package, the platform package's.
 */
export const INGEST_BIN = ((): string => {
  const local = path.join(ROOT, 'native', 'bin', 'storemap-ingest');
  if (existsSync(local)) return local;
  try {
    return createRequire(path.join(ROOT, 'package.json')).resolve(`${PLATFORM_PACKAGE}/bin/storemap-ingest`);
  } catch {
    return local; // missing everywhere: the pipeline's caller says how to build it
  }
})();
/**
 * The reference data made at release time from the npm packages (which a release does not
 * carry): a data folder's reference is copied from here when it exists.
 */
export const PREBUILT_REFERENCE_DIR = path.join(ROOT, 'reference');
/** Installed rather than checked out: the executable, or the npm package (its entry point says). */
const INSTALLED = RELEASE !== undefined || (globalThis as { __storemapPackage?: boolean }).__storemapPackage === true;
/** Where the dataset lives unless STOREMAP_DATA_DIR says: beside the checkout's other generated
 * files, or, installed, `./storemap-data` where it is started (never inside node_modules or the
 * cache folder). */
export const DEFAULT_DATA_DIR = INSTALLED ? path.resolve('storemap-data') : path.join(ROOT, 'data', 'generated');
/** Where `serve` writes the demo keys it makes for the synthetic dataset (mode 0600). */
export const DEMO_KEYS_FILE = 'demo-keys.txt';
const PACKAGE = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string; gitHead?: string };
/** The Node flags `npm start` gives serve (package.json's start script); the single executable
 * is built to run with the same (scripts/release.ts). Read when asked, never at start-up. */
export function serveNodeFlags(): string[] {
  const start = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts?: { start?: string } }).scripts?.start ?? '';
  return start.split(/\s+/).filter((w) => w.startsWith('--'));
}
/** The API version: the package's. */
export const API_VERSION = PACKAGE.version;
/** The commit a prebuilt npm package was made from (npm's `gitHead`); a checkout asks git. */
export const PACKAGE_COMMIT: string | undefined = PACKAGE.gitHead;
