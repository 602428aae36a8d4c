// Where the project's own files are, wherever the process was started from.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** The project's small tables kept in git (tickers, categories, misspellings). */
export const TABLES_DIR = path.join(ROOT, 'data');
/** The pipeline binary, copied here by `npm install` (scripts/build.sh). */
export const INGEST_BIN = path.join(ROOT, 'native', 'bin', 'storemap-ingest');
/** The serving snapshot's file name inside the data folder. */
export const SNAPSHOT_FILE = 'snapshot.smap';
/** The snapshot a build replaced, kept for `storemap data rollback` (written by the pipeline,
 * `PREVIOUS_SNAPSHOT_FILE` in crates/ingest/src/pipeline.rs). */
export const PREVIOUS_SNAPSHOT_FILE = 'snapshot.prev.smap';
/** Where `serve` writes the demo keys it makes for the synthetic dataset (mode 0600). */
export const DEMO_KEYS_FILE = 'demo-keys.txt';
/** The API version: the package's. */
export const API_VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
