// `npm run release`: storemap as one executable file (Node's single executable applications:
// Node 24 with the service bundled by esbuild and its native parts and data as compressed
// assets), and SHA256SUMS over dist/. The addon and the pipeline binary must be built first
// (`npm install` builds them).
//
//   node --import tsx scripts/release.ts [--out DIR] [--node PATH]
//
// The stage folder (target/release-stage, or $STOREMAP_RELEASE_STAGE) keeps the bundle, the
// compressed assets and the manifest beside the executable for inspection and for the tests.
// For comparing builds: STOREMAP_RELEASE_MINIFY=0 bundles unminified (readable stack traces),
// STOREMAP_RELEASE_CODE_CACHE=0 leaves V8's code cache out of the blob.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { brotliCompressSync, constants as zlib } from 'node:zlib';
import { build } from 'esbuild';
import { prepareReference } from '../ts/data/reference.ts';
import { DATA_DEFAULTS } from '../ts/native.ts';
import { API_VERSION, PLATFORM_PACKAGE, ROOT, serveNodeFlags } from '../ts/paths.ts';
import { buildDigest, MANIFEST_ASSET, type Manifest, type ManifestFile } from '../ts/release/unpack.ts';
import { compilePlaygroundScript, PLAYGROUND_SCRIPT } from '../ts/routes/playground.ts';

/** The Node the executable embeds: the current LTS, as CI's Node matrix installs it. */
export const EMBEDDED_NODE = '24.21.0';
/** postject's sentinel: Node's own, the same in every release that supports SEA. */
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

const { values: opts } = parseArgs({ options: { out: { type: 'string' }, node: { type: 'string' } } });
const outDir = path.resolve(opts.out ?? path.join(ROOT, 'dist'));
const stage = path.resolve(process.env.STOREMAP_RELEASE_STAGE ?? path.join(ROOT, 'target', 'release-stage'));
const started = Date.now();
const log = (s: string) => console.error(`release: ${s} (${((Date.now() - started) / 1000).toFixed(1)} s)`);

/** Files of the checkout the service reads at run time, relative to the root. */
function checkoutFiles(): string[] {
  const files = ['package.json', 'native/package.json', 'native/index.js', 'native/storemap.linux-x64-gnu.node', 'native/bin/storemap-ingest'];
  for (const f of readdirSync(path.join(ROOT, 'data'))) if (statSync(path.join(ROOT, 'data', f)).isFile()) files.push(`data/${f}`);
  files.push('web/playground.html');
  // better-sqlite3 13: its JavaScript and its Node-API prebuild for this platform.
  const sqlite = 'node_modules/better-sqlite3-napi';
  files.push(`${sqlite}/package.json`, `${sqlite}/prebuilds/linux-x64.node`);
  for (const dir of ['lib', 'lib/methods']) {
    for (const f of readdirSync(path.join(ROOT, sqlite, dir))) if (f.endsWith('.js')) files.push(`${sqlite}/${dir}/${f}`);
  }
  files.push('node_modules/dejavu-fonts-ttf/package.json', 'node_modules/dejavu-fonts-ttf/ttf/DejaVuSans.ttf');
  for (const f of files) {
    if (!existsSync(path.join(ROOT, f))) throw new Error(`${f} is missing: run \`npm install\` first (it builds the addon and the pipeline)`);
  }
  return files;
}

function nodeBinary(): string {
  if (opts.node) return opts.node;
  return execFileSync('bash', [path.join(ROOT, 'scripts', 'install-node.sh'), EMBEDDED_NODE], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
}

function commit(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: ROOT, encoding: 'utf8' }).trim();
    return dirty ? `${head}-dirty` : head;
  } catch {
    return 'unknown';
  }
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

rmSync(stage, { recursive: true, force: true });
const tree = path.join(stage, 'tree');
const assetsDir = path.join(stage, 'assets');
mkdirSync(tree, { recursive: true });
mkdirSync(assetsDir, { recursive: true });

// 1. The release tree: the checkout's run-time files, the reference data the npm packages would
// give, and the playground script compiled (a release has no esbuild).
for (const f of checkoutFiles()) {
  mkdirSync(path.dirname(path.join(tree, f)), { recursive: true });
  copyFileSync(path.join(ROOT, f), path.join(tree, f));
}
await prepareReference(path.join(tree, 'reference'));
writeFileSync(path.join(tree, 'web', PLAYGROUND_SCRIPT), compilePlaygroundScript());
log('release tree staged');

// 2. The service as one CommonJS script (SEA runs CommonJS). `import.meta.url` is each module's
// own URL in a checkout; in the bundle it is a file under the unpacked root (sea-main sets it;
// npm-main, for the npm package, sets it from the bundle's place).
async function bundleEntry(entry: string, outfile: string): Promise<void> {
  const built = await build({
    entryPoints: [path.join(ROOT, 'ts', 'release', entry)],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node22',
    minify: process.env.STOREMAP_RELEASE_MINIFY !== '0',
    keepNames: true,
    legalComments: 'none',
    define: { 'import.meta.url': 'globalThis.__storemapModuleUrl' },
    // Optional parts the code loads only when present: pg's libpq binding, esbuild and tsx (a
    // checkout's), and restify's DTrace probes.
    external: ['pg-native', 'esbuild', 'tsx', 'dtrace-provider'],
    logLevel: 'warning',
    metafile: true,
  });
  log(`${entry}: ${(statSync(outfile).size / 2 ** 20).toFixed(1)} MiB from ${Object.keys(built.metafile.inputs).length} modules`);
}
const bundle = path.join(stage, 'storemap.cjs');
await bundleEntry('sea-main.ts', bundle);

// 3. Each file a compressed asset, with its digest in the manifest.
const files: ManifestFile[] = [];
let raw = 0;
let packed = 0;
function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}
for (const abs of walk(tree).sort()) {
  const rel = path.relative(tree, abs).split(path.sep).join('/');
  const bytes = readFileSync(abs);
  const asset = `files/${files.length}`;
  const compressed = brotliCompressSync(bytes, {
    params: { [zlib.BROTLI_PARAM_QUALITY]: 6, [zlib.BROTLI_PARAM_LGWIN]: 24, [zlib.BROTLI_PARAM_SIZE_HINT]: bytes.length },
  });
  writeFileSync(path.join(assetsDir, `${files.length}.br`), compressed);
  raw += bytes.length;
  packed += compressed.length;
  files.push({ path: rel, asset, size: bytes.length, sha256: sha256(bytes), mode: rel === 'native/bin/storemap-ingest' ? 0o755 : 0o644 });
}
const manifest: Manifest = {
  version: API_VERSION,
  commit: commit(),
  node: `v${EMBEDDED_NODE}`,
  snapshotFormat: DATA_DEFAULTS.snapshotFormat,
  build: buildDigest(files),
  files,
};
writeFileSync(path.join(stage, MANIFEST_ASSET), JSON.stringify(manifest, null, 1));
log(`${files.length} files, ${(raw / 2 ** 20).toFixed(1)} MiB -> ${(packed / 2 ** 20).toFixed(1)} MiB compressed`);

// 4. The SEA blob, made by the embedded Node itself (the code cache must be its V8's).
const node = nodeBinary();
const assets: Record<string, string> = { [MANIFEST_ASSET]: path.join(stage, MANIFEST_ASSET) };
files.forEach((f, i) => (assets[f.asset] = path.join(assetsDir, `${i}.br`)));
const blob = path.join(stage, 'sea.blob');
// The Node flags `npm start` gives serve (V8's young generation held to 16 MiB, its old generation
// let grow to 64 MiB before a full collection: see bench/memory.ts),
// given to every run of the executable as the checkout gives them to serve.
const execArgv = serveNodeFlags();
writeFileSync(
  path.join(stage, 'sea-config.json'),
  JSON.stringify({ main: bundle, output: blob, disableExperimentalSEAWarning: true, useCodeCache: process.env.STOREMAP_RELEASE_CODE_CACHE !== '0', execArgv, assets }, null, 1),
);
// V8 takes a code cache only from an isolate whose flags hash as its own do, so the blob is made
// under the flags every run of the executable starts with (otherwise each start warns "Code
// cache data rejected" and compiles the bundle afresh).
execFileSync(node, [...execArgv, '--experimental-sea-config', path.join(stage, 'sea-config.json')], { stdio: ['ignore', 'ignore', 'inherit'] });
log(`SEA blob ${(statSync(blob).size / 2 ** 20).toFixed(1)} MiB`);

// 5. Node with the blob injected (postject), into dist/.
mkdirSync(outDir, { recursive: true });
const exe = path.join(outDir, `storemap-${API_VERSION}-linux-x64`);
rmSync(exe, { force: true });
copyFileSync(node, `${exe}.tmp`);
chmodSync(`${exe}.tmp`, 0o755);
const injected = spawnSync(process.execPath, [path.join(ROOT, 'node_modules', 'postject', 'dist', 'cli.js'), `${exe}.tmp`, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', SEA_FUSE], {
  stdio: ['ignore', 'ignore', 'pipe'],
  encoding: 'utf8',
});
// LIEF, inside postject, warns for each of the Node binary's note sections it cannot name
// ("Can't find string offset for section name '.note.100'"): about its reading of the file,
// not the blob it writes (the release suite runs the result). Everything else it says is shown.
const said = (injected.stderr ?? '').split('\n').filter((l) => l !== '' && !/^warning: Can't find string offset for section name '\.note[^']*'$/.test(l));
if (said.length > 0) process.stderr.write(`${said.join('\n')}\n`);
if (injected.status !== 0) throw new Error(`postject failed (${injected.error?.message ?? `exit ${injected.status ?? injected.signal}`})`);
execFileSync('mv', [`${exe}.tmp`, exe]);
log(`${path.relative(ROOT, exe)}: ${(statSync(exe).size / 2 ** 20).toFixed(1)} MiB (Node ${(statSync(node).size / 2 ** 20).toFixed(1)} MiB)`);

// 6. The prebuilt npm packages: storemap (the service bundled, its tables and reference data)
// and the napi-rs-style platform package with the addon and the pipeline binary, which npm
// installs as an optional dependency. Installing them runs no compiler: better-sqlite3 13 ships
// a Node-API prebuild (so the package wants Node 22 or later), everything else is JavaScript.
const PLATFORM_FILES: Record<string, string> = { 'native/storemap.linux-x64-gnu.node': 'storemap.linux-x64-gnu.node', 'native/bin/storemap-ingest': 'bin/storemap-ingest' };
const npmStage = path.join(stage, 'npm');
const platformDir = path.join(npmStage, 'platform');
const mainDir = path.join(npmStage, 'storemap');
const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { description: string; license: string; dependencies: Record<string, string> };
const sqliteVersion = (JSON.parse(readFileSync(path.join(ROOT, 'node_modules', 'better-sqlite3-napi', 'package.json'), 'utf8')) as { version: string }).version;
for (const f of files) {
  if (f.path.startsWith('node_modules/')) continue;
  const dest = PLATFORM_FILES[f.path] ? path.join(platformDir, PLATFORM_FILES[f.path]!) : path.join(mainDir, f.path);
  mkdirSync(path.dirname(dest), { recursive: true });
  copyFileSync(path.join(tree, f.path), dest);
  chmodSync(dest, f.mode);
}
const platformName = PLATFORM_PACKAGE;
writeFileSync(
  path.join(platformDir, 'package.json'),
  JSON.stringify({ name: platformName, version: API_VERSION, description: `storemap's addon and pipeline binary for linux-x64-gnu`, license: pkg.license, os: ['linux'], cpu: ['x64'], libc: ['glibc'], main: 'storemap.linux-x64-gnu.node', files: Object.values(PLATFORM_FILES) }, null, 2),
);
await bundleEntry('npm-main.ts', path.join(mainDir, 'bin', 'storemap.cjs'));
// The root package.json's version and description, for API_VERSION and `npm view`.
writeFileSync(
  path.join(mainDir, 'package.json'),
  JSON.stringify(
    {
      name: 'storemap',
      version: API_VERSION,
      description: pkg.description,
      license: pkg.license,
      type: 'module',
      bin: { storemap: 'bin/storemap.cjs' },
      engines: { node: '>=22' },
      dependencies: { 'better-sqlite3-napi': `npm:better-sqlite3@${sqliteVersion}`, 'dejavu-fonts-ttf': pkg.dependencies['dejavu-fonts-ttf'] },
      optionalDependencies: { [platformName]: API_VERSION },
      gitHead: manifest.commit,
    },
    null,
    2,
  ),
);
copyFileSync(path.join(ROOT, 'README.md'), path.join(mainDir, 'README.md'));
for (const dir of [platformDir, mainDir]) {
  execFileSync('npm', ['pack', '--pack-destination', outDir, '--loglevel=error'], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
}
log('npm packages packed');

// 7. SHA256SUMS over everything in dist/, as `sha256sum -c` reads it.
const sums = readdirSync(outDir)
  .filter((f) => f !== 'SHA256SUMS' && statSync(path.join(outDir, f)).isFile())
  .sort()
  .map((f) => `${sha256(readFileSync(path.join(outDir, f)))}  ${f}\n`)
  .join('');
writeFileSync(path.join(outDir, 'SHA256SUMS'), sums);
// A breakdown for bench/RESULTS.md: the executable's size by part.
const breakdown = { node: statSync(node).size, bundle: statSync(bundle).size, files: files.length, raw, packed, executable: statSync(exe).size };
writeFileSync(path.join(stage, 'sizes.json'), JSON.stringify(breakdown, null, 1));
log(`done: ${outDir}`);
