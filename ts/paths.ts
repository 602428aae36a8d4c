// Where the project's own files are, wherever the process was started from.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** The project's small tables kept in git (tickers, categories, misspellings). */
export const TABLES_DIR = path.join(ROOT, 'data');
/** The pipeline binary, copied here by `npm install` (scripts/build.sh). */
export const INGEST_BIN = path.join(ROOT, 'native', 'bin', 'storemap-ingest');
/** Where `serve` writes the demo keys it makes for the synthetic dataset (mode 0600). */
export const DEMO_KEYS_FILE = 'demo-keys.txt';
/** The API version: the package's. */
export const API_VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
