// The single executable's entry point (scripts/release.ts bundles it with the service into one
// CommonJS script that Node runs from the executable). It unpacks the native parts into the cache
// folder before anything that reads ROOT is loaded, says where the service's files are, then
// hands the command line to the same CLI as `node bin/storemap.js`.
import { getAsset } from 'node:sea';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { cacheBase, MANIFEST_ASSET, unpack, UnpackError, type Manifest } from './unpack.ts';
import type { ReleaseInfo } from '../paths.ts';

function prepare(): ReleaseInfo {
  const manifest = JSON.parse(getAsset(MANIFEST_ASSET, 'utf8')) as Manifest;
  const base = cacheBase();
  if (base.warning) console.error(base.warning);
  const root = unpack(manifest, (key) => Buffer.from(getAsset(key)), base.dir);
  return { root, version: manifest.version, commit: manifest.commit, snapshotFormat: manifest.snapshotFormat, node: process.version };
}

let release: ReleaseInfo;
try {
  release = prepare();
} catch (e) {
  console.error(e instanceof UnpackError ? e.message : `storemap: cannot unpack the executable: ${(e as Error).message}`);
  process.exit(1);
}
const globals = globalThis as { __storemapRelease?: ReleaseInfo; __storemapModuleUrl?: string };
globals.__storemapRelease = release;
// The bundle's `import.meta.url` (esbuild's define): a file under the root, as each module's
// own URL is in a checkout, so `createRequire` finds the addon and better-sqlite3 beside it.
globals.__storemapModuleUrl = pathToFileURL(path.join(release.root, 'ts', 'storemap.cjs')).href;

// Loaded only now: the service's modules read ROOT when they are evaluated.
void import('../cli.ts').then(({ main }) => main(process.argv));
