// The single executable (`npm run release`), as an operator on a locked-down server runs it: copied
// alone into an empty folder, started with no Node, npm, npx or cargo on PATH and a fresh HOME.
// It builds the default dataset and serves; a key its own `keys create` made gets JSON, a PNG,
// nearby stores and the playground; it survives kill -9; it imports the real publisher samples.
// Its cache folder: two processes unpacking at once, a damaged file in it, a damaged asset in the
// executable, a home that cannot be written.
//
// scripts/test.sh builds the release and runs this suite with STOREMAP_RELEASE_EXE (the file)
// and STOREMAP_RELEASE_STAGE (the release's stage folder: its manifest and compressed assets).
import test, { type ExecutionContext } from 'ava';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PNG } from 'pngjs';
import { startServe } from '../helpers/child.ts';
import { startPostgres } from '../helpers/postgres.ts';
import { ROOT } from '../../ts/paths.ts';
import { DATA_DEFAULTS } from '../../ts/native.ts';
import type { Manifest } from '../../ts/release/unpack.ts';

test.serial.before(() => {
  if (!process.env.STOREMAP_RELEASE_EXE || !existsSync(process.env.STOREMAP_RELEASE_EXE)) {
    throw new Error('STOREMAP_RELEASE_EXE must name the executable `npm run release` wrote (scripts/test.sh sets it)');
  }
});
const EXE = () => process.env.STOREMAP_RELEASE_EXE!;
const STAGE = () => process.env.STOREMAP_RELEASE_STAGE ?? path.join(ROOT, 'target', 'release-stage');
const VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
// The publishers' real sample files (copies of ../shared/realdata, committed: see its README).
const REAL = path.join(ROOT, 'test', 'fixtures', 'real');

interface Sandbox {
  dir: string;
  /** The executable, copied alone into an empty folder. */
  exe: string;
  work: string;
  env: NodeJS.ProcessEnv;
  /** The cache folder's parent for this HOME. */
  cache: string;
}

/** An empty folder with the executable alone in it, a fresh HOME and a PATH with no tools. */
function sandbox(t: ExecutionContext, exe = EXE()): Sandbox {
  const dir = mkdtempSync(path.join(tmpdir(), 'storemap-release-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const work = path.join(dir, 'work');
  const home = path.join(dir, 'home');
  const bin = path.join(dir, 'empty-bin');
  for (const d of [work, home, bin, path.join(dir, 'tmp')]) mkdirSync(d);
  copyFileSync(exe, path.join(work, 'storemap'));
  chmodSync(path.join(work, 'storemap'), 0o755); // as the install steps say: chmod +x
  const env = { HOME: home, PATH: bin, TMPDIR: path.join(dir, 'tmp'), LANG: 'C.UTF-8' };
  return { dir, exe: path.join(work, 'storemap'), work, env, cache: path.join(home, '.cache', 'storemap') };
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}
function run(sb: Pick<Sandbox, 'exe' | 'work' | 'env'>, args: string[], env: Record<string, string> = {}, timeoutMs = 300_000): Promise<Run> {
  return new Promise((resolve) => {
    execFile(sb.exe, args, { cwd: sb.work, env: { ...sb.env, ...env }, timeout: timeoutMs, maxBuffer: 64 * 2 ** 20 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}
const show = (r: Run) => `exit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;

function manifest(): Manifest {
  return JSON.parse(readFileSync(path.join(STAGE(), 'manifest.json'), 'utf8')) as Manifest;
}

async function post(base: string, route: string, key: string, body: unknown): Promise<Response> {
  return fetch(`${base}${route}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify(body) });
}

test.serial('the file is listed in SHA256SUMS with its digest, and is at most 200 MB', (t) => {
  const dist = path.dirname(EXE());
  const sums = readFileSync(path.join(dist, 'SHA256SUMS'), 'utf8');
  const digest = createHash('sha256').update(readFileSync(EXE())).digest('hex');
  t.true(sums.split('\n').includes(`${digest}  ${path.basename(EXE())}`), sums);
  t.true(readFileSync(EXE()).length <= 200 * 2 ** 20);
});

test.serial('copied alone into an empty folder with no Node or cargo on PATH, it serves JSON, PNG, nearby and the playground, survives kill -9, and imports the real samples', async (t) => {
  const sb = sandbox(t);
  t.deepEqual(readdirSync(sb.work), ['storemap']);
  t.deepEqual(readdirSync(sb.env.PATH!), [], 'nothing on PATH');

  const version = await run(sb, ['--version']);
  t.is(version.code, 0, show(version));
  // Nothing on stderr: a code cache made under other V8 flags than the run's is rejected with a
  // warning at every start (and the bundle compiled afresh).
  t.is(version.stderr, '', show(version));
  t.regex(version.stdout.trim(), new RegExp(`^storemap ${VERSION.replace(/\./g, '\\.')} \\(commit [0-9a-f]{12}(-dirty)?; snapshot format ${DATA_DEFAULTS.snapshotFormat}; Node v24\\.\\d+\\.\\d+ \\(embedded\\)\\)$`));

  // The default data folder is ./storemap-data where it is started.
  const dataDir = path.join(sb.work, 'storemap-data');
  const dbPath = path.join(dataDir, 'storemap.db');
  const serve = () => startServe(t, { dataDir, dbPath, command: [sb.exe], cwd: sb.work, baseEnv: sb.env });
  let server = await serve();
  t.true(existsSync(path.join(dataDir, 'snapshot.smap')), 'the default dataset was built in ./storemap-data');

  const created = await run(sb, ['keys', 'create', '--plan', 'enterprise', '--credits', '100000'], { STOREMAP_DATA_DIR: dataDir });
  t.is(created.code, 0, show(created));
  const key = created.stdout.trim();
  t.regex(key, /^sm_live_[0-9a-f]+$/);

  const json = await post(server.base, '/api/v1/location-map', key, { brand: "McDonald's", format: 'json' });
  t.is(json.status, 200);
  const env = (await json.json()) as { count: number; locations: { lat: number; lng: number }[] };
  t.true(env.count > 0 && env.locations.length === env.count);

  const png = await post(server.base, '/api/v1/location-map', key, { brand: "McDonald's", format: 'png', width: 400, height: 300 });
  t.is(png.status, 200);
  t.is(png.headers.get('content-type'), 'image/png');
  const image = PNG.sync.read(Buffer.from(await png.arrayBuffer()));
  t.deepEqual([image.width, image.height], [400, 300]);
  const colours = new Set<number>();
  for (let i = 0; i < image.data.length; i += 4) colours.add(image.data.readUInt32BE(i));
  t.true(colours.size > 10, `a drawn map, not a blank image (${colours.size} colours)`);

  const here = env.locations[0]!;
  const near = await post(server.base, '/api/v1/nearby', key, { brand: "McDonald's", lat: here.lat, lng: here.lng, limit: 3 });
  t.is(near.status, 200);
  const nearest = (await near.json()) as { locations: { distance_m: number }[] };
  t.is(nearest.locations.length, 3);
  t.true(nearest.locations[0]!.distance_m < 1, 'the nearest store to a store is itself');

  const page = await fetch(`${server.base}/playground`);
  t.is(page.status, 200);
  t.regex(await page.text(), /<form/);
  const script = await fetch(`${server.base}/playground.js`);
  t.is(script.status, 200);
  t.regex(await script.text(), /fetch\(/, 'the compiled playground script');

  // kill -9, then a new process on the same folder serves the same key at once.
  server.child.kill('SIGKILL');
  await server.exited;
  server = await serve();
  const again = await post(server.base, '/api/v1/location-map', key, { brand: "McDonald's", format: 'json' });
  t.is(again.status, 200);
  t.is(((await again.json()) as { count: number }).count, env.count);
  await server.stop();

  // The real publisher samples, imported by the executable into a folder of their own.
  const imported = path.join(sb.dir, 'imported');
  const r = await run(
    sb,
    ['data', 'import', '--osm', path.join(REAL, 'osm', 'zugerland.osm.pbf'), '--atp', path.join(REAL, 'atp', 'output.zip'), '--overture', path.join(REAL, 'overture', 'boulder_places_2026-04-15.0.parquet'), '--as-of', '2026-11-01T00:00:00Z'],
    { STOREMAP_DATA_DIR: imported },
  );
  t.is(r.code, 0, show(r));
  const rows = Number(/snapshot\.smap: (\d+) rows/.exec(r.stdout)?.[1]);
  t.true(rows > 0, show(r));
  const report = await run(sb, ['data', 'report', '--json'], { STOREMAP_DATA_DIR: imported });
  t.is(report.code, 0, show(report));
  t.deepEqual(Object.keys((JSON.parse(report.stdout) as { sources: Record<string, unknown> }).sources).sort(), ['atp', 'osm', 'overture']);
});

test.serial('two executables starting at once on one empty cache both run, and leave one whole folder', async (t) => {
  const sb = sandbox(t);
  const [a, b] = await Promise.all([run(sb, ['--version']), run(sb, ['--version'])]);
  t.is(a.code, 0, show(a));
  t.is(b.code, 0, show(b));
  t.is(a.stdout, b.stdout);
  const m = manifest();
  t.deepEqual(readdirSync(sb.cache), [`${m.version}-${m.build}`], 'one folder, no half-written copy left');
  const root = path.join(sb.cache, readdirSync(sb.cache)[0]!);
  for (const f of m.files) {
    t.is(createHash('sha256').update(readFileSync(path.join(root, f.path))).digest('hex'), f.sha256, f.path);
  }
});

test.serial('a cache file with one byte flipped: a clear error naming it and the folder to delete; deleting it mends', async (t) => {
  const sb = sandbox(t);
  t.is((await run(sb, ['--version'])).code, 0);
  const m = manifest();
  const root = path.join(sb.cache, `${m.version}-${m.build}`);
  const file = path.join(root, 'data', 'themes.json');
  const bytes = readFileSync(file);
  bytes[bytes.length >> 1] ^= 0x01;
  writeFileSync(file, bytes);
  const r = await run(sb, ['--version']);
  t.is(r.code, 1, show(r));
  t.true(r.stderr.includes(file), show(r));
  t.regex(r.stderr, new RegExp(`delete ${root.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} and start storemap again`));
  t.notRegex(r.stderr, /\n\s+at /, 'no stack trace');
  rmSync(root, { recursive: true });
  const mended = await run(sb, ['--version']);
  t.is(mended.code, 0, show(mended));
});

test.serial('a damaged asset inside the executable: a clear error naming the file and SHA256SUMS, nothing unpacked', async (t) => {
  const m = manifest();
  const i = m.files.findIndex((f) => f.path === 'data/themes.json');
  const packed = readFileSync(path.join(STAGE(), 'assets', `${i}.br`));
  const exe = readFileSync(EXE());
  const at = exe.indexOf(packed);
  t.true(at > 0, 'the compressed asset is in the file');
  exe[at + (packed.length >> 1)] ^= 0x40;
  const dir = mkdtempSync(path.join(tmpdir(), 'storemap-damaged-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const damaged = path.join(dir, 'storemap');
  writeFileSync(damaged, exe, { mode: 0o755 });
  const sb = sandbox(t, damaged);
  const r = await run(sb, ['--version']);
  t.is(r.code, 1, show(r));
  t.regex(r.stderr, /the executable is damaged: its embedded file data\/themes\.json cannot be unpacked/);
  t.regex(r.stderr, /SHA256SUMS/);
  t.deepEqual(existsSync(sb.cache) ? readdirSync(sb.cache) : [], [], 'no cache folder left behind');
});

test.serial('a home that cannot be written: the cache goes to a private temporary folder, with a warning', async (t) => {
  const sb = sandbox(t);
  // A file where the home folder should be: nothing can be made under it, even as root.
  const home = path.join(sb.dir, 'home-is-a-file');
  writeFileSync(home, '');
  const r = await run(sb, ['--version'], { HOME: home });
  t.is(r.code, 0, show(r));
  t.regex(r.stderr, /cannot be written; unpacking into .*storemap-\d+ instead/);
  const uid = process.getuid!();
  const m = manifest();
  t.true(existsSync(path.join(sb.env.TMPDIR!, `storemap-${uid}`, `${m.version}-${m.build}`, 'native', 'bin', 'storemap-ingest')));
});

test.serial('the npm tarballs install in an empty project without a compiler (a cargo that fails if called) and serve on Node 24', async (t) => {
  const dist = path.dirname(EXE());
  const tarballs = readdirSync(dist).filter((f) => f.endsWith('.tgz'));
  const platform = tarballs.find((f) => f.startsWith('storemap-native-linux-x64-gnu-'));
  const main = tarballs.find((f) => f === `storemap-${VERSION}.tgz`);
  t.truthy(platform, tarballs.join(', '));
  t.truthy(main, tarballs.join(', '));
  const dir = mkdtempSync(path.join(tmpdir(), 'storemap-npm-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const project = path.join(dir, 'project');
  const traps = path.join(dir, 'traps');
  const marker = path.join(dir, 'compiler-called');
  mkdirSync(project);
  mkdirSync(traps);
  writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'uses-storemap', private: true }));
  // Every compiler an install could reach for: each records that it was called, and fails.
  for (const tool of ['cargo', 'rustc', 'cc', 'gcc', 'c++', 'g++', 'make', 'node-gyp']) {
    writeFileSync(path.join(traps, tool), `#!/bin/sh\necho "${tool} $*" >> "${marker}"\nexit 1\n`, { mode: 0o755 });
  }
  const node24 = await new Promise<string>((resolve, reject) =>
    execFile('bash', [path.join(ROOT, 'scripts', 'install-node.sh'), '24.21.0'], (e, out) => (e ? reject(e) : resolve(out.trim()))),
  );
  // npm is the machine's; the Node it runs on is 24's (first on PATH after the traps).
  const { STOREMAP_DATA_DIR: _unset, ...inherited } = process.env;
  const env = { ...inherited, PATH: `${traps}:${path.dirname(node24)}:${process.env.PATH}`, npm_config_nodedir: '' };
  const install = await new Promise<Run>((resolve) =>
    execFile('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', path.join(dist, platform!), path.join(dist, main!)], { cwd: project, env, maxBuffer: 64 * 2 ** 20 }, (e, stdout, stderr) =>
      resolve({ code: e ? (typeof e.code === 'number' ? e.code : -1) : 0, stdout, stderr }),
    ),
  );
  t.is(install.code, 0, show(install));
  t.false(existsSync(marker), existsSync(marker) ? readFileSync(marker, 'utf8') : '');

  const bin = path.join(project, 'node_modules', 'storemap', 'bin', 'storemap.cjs');
  const sb = { exe: node24, work: project, env };
  const version = await run(sb, [bin, '--version']);
  t.is(version.code, 0, show(version));
  t.regex(version.stdout, new RegExp(`^storemap ${VERSION.replace(/\./g, '\\.')} \\(commit [0-9a-f]{12}.*; Node v24\\.`));
  // The pipeline binary from the platform package builds a small world; the addon serves it.
  const built = await run(sb, [bin, 'data', 'build', '--scale', '0.005', '--seed', '3']);
  t.is(built.code, 0, show(built));
  // Installed, the data folder is ./storemap-data where it runs, not inside node_modules.
  const dataDir = path.join(project, 'storemap-data');
  t.true(existsSync(path.join(dataDir, 'snapshot.smap')), built.stderr);
  const server = await startServe(t, { dataDir, dbPath: path.join(dataDir, 'storemap.db'), command: [node24, bin], cwd: project, baseEnv: sb.env });
  const brands = await fetch(`${server.base}/api/v1/brands?limit=1`);
  t.is(brands.status, 200);
  t.true(((await brands.json()) as { total: number }).total > 0);
  await server.stop();
});

test.serial('the ledger on PostgreSQL (STOREMAP_DATABASE_URL): its own keys create, then a charged request debits the key there', async (t) => {
  const pg = await startPostgres(t);
  const sb = sandbox(t);
  const dataDir = path.join(sb.work, 'storemap-data');
  const env = { STOREMAP_DATABASE_URL: pg.url, STOREMAP_DEFAULT_SCALE: '0.01', STOREMAP_KEYS_RECHECK_MS: '0' };
  const server = await startServe(t, { dataDir, dbPath: path.join(dataDir, 'unused.db'), command: [sb.exe], cwd: sb.work, baseEnv: { ...sb.env, ...env } });
  const created = await run(sb, ['keys', 'create', '--plan', 'enterprise', '--credits', '1000'], { ...env, STOREMAP_DATA_DIR: dataDir });
  t.is(created.code, 0, show(created));
  const key = created.stdout.trim();
  const res = await post(server.base, '/api/v1/location-map', key, { brand: "McDonald's", format: 'json' });
  t.is(res.status, 200);
  const charged = Number(res.headers.get('x-credits-charged'));
  t.true(charged > 0);
  await res.arrayBuffer();
  const list = await run(sb, ['keys', 'list'], { ...env, STOREMAP_DATA_DIR: dataDir });
  t.is(list.code, 0, show(list));
  const row = list.stdout.split('\n').find((l) => l.includes('demo') === false && l.includes('enterprise'))!;
  t.is(Number(row.split('\t')[3]), 1000 - charged, list.stdout);
  t.false(existsSync(path.join(dataDir, 'unused.db')), 'no SQLite ledger beside PostgreSQL');
});
