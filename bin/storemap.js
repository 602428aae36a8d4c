#!/usr/bin/env node
// The `storemap` command. The service is TypeScript, bundled by esbuild into one JavaScript file
// under node_modules/.cache/storemap/ the first time it runs and again whenever a file under ts/
// changes, then run as plain JavaScript: still no compile step between `npm install` and
// `npm start`, and no TypeScript loader in a serving process (tsx's loader thread and modules
// held about 30 MB of every node). Where the bundle cannot be built (a read-only checkout), tsx
// runs the sources as before.
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const sources = path.join(root, 'ts');

/** Every source file's path, size and modification time: the bundle is current while this is. */
function fingerprint() {
  const parts = [];
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else {
        const s = statSync(p);
        parts.push(`${path.relative(sources, p)}:${s.size}:${s.mtimeMs}`);
      }
    }
  };
  walk(sources);
  return parts.join('\n');
}

/** The bundle's path, built first when the sources changed since. */
async function bundle() {
  const dir = path.join(root, 'node_modules', '.cache', 'storemap');
  const out = path.join(dir, 'cli.mjs');
  const stamp = path.join(dir, 'cli.fingerprint');
  const now = fingerprint();
  try {
    if (readFileSync(stamp, 'utf8') === now) return out;
  } catch {
    // not built yet
  }
  const { build } = await import('esbuild');
  mkdirSync(dir, { recursive: true });
  // Written aside and renamed: two commands starting at once each build their own, and neither
  // ever runs a half-written file.
  const tmp = `${out}.${process.pid}.tmp`;
  await build({
    entryPoints: [path.join(sources, 'cli.ts')],
    outfile: tmp,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // The packages stay in node_modules (found from the bundle's folder, inside it).
    packages: 'external',
    // Every module's `import.meta.url` becomes a file in ts/: paths are reckoned from there
    // (the root, native/, data/) exactly as when each module runs from its own file.
    define: { 'import.meta.url': 'globalThis.__storemapModuleUrl' },
    keepNames: true,
    logLevel: 'warning',
  });
  renameSync(tmp, out);
  writeFileSync(`${stamp}.${process.pid}.tmp`, now);
  renameSync(`${stamp}.${process.pid}.tmp`, stamp);
  return out;
}

let file;
try {
  file = await bundle();
} catch (e) {
  console.error(`storemap: could not bundle ts/ (${e instanceof Error ? e.message : e}); running the sources through tsx`);
}
let main;
if (file) {
  globalThis.__storemapModuleUrl = pathToFileURL(path.join(sources, 'cli.ts')).href;
  ({ main } = await import(pathToFileURL(file).href));
} else {
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import('../ts/cli.ts'));
}
await main(process.argv);
