// `node bin/storemap.js` as a child process: the dataset report over the test dataset, the
// import of the hand-made fixture scene (checked against test/fixtures/expected.json), and
// the failures an operator must see.
import test from 'ava';
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, constants, existsSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DATA_DEFAULTS, loadStore, query, type Store } from '../ts/native.ts';
import { ROOT } from '../ts/paths.ts';
import { SNAPSHOT_FILE } from '../ts/native.ts';
import { AS_OF, CLI, describe, FIXTURE_IMPORT_ARGS, FIXTURES, runCli, tempDataDir } from './helpers/cli.ts';
import { parseCsvObjects } from './helpers/csv.ts';
import { testDataDir, testStore } from './helpers/dataset.ts';

interface ExpectedRow {
  key: string;
  scenario: string;
  brand: string | null;
  branded: boolean;
  country: string;
  status: 'open' | 'closed';
  members: string[];
}
interface Expected {
  rows: ExpectedRow[];
  dropped: { member: string; reason: string }[];
}
interface Loc {
  id: string;
  brand?: string;
  country: string;
  source_types: string[];
  alias_sources: { source_type: string; source_id: string }[];
}

const expected = JSON.parse(readFileSync(path.join(FIXTURES, 'expected.json'), 'utf8')) as Expected;
const openBranded = expected.rows.filter((r) => r.branded && r.status === 'open');
const aliasKey = (l: Loc) => l.alias_sources.map((a) => `${a.source_type}:${a.source_id}`);
const setKey = (members: string[]) => [...members].sort().join(' ');

// ---------------------------------------------------------------------------------------------
// data report

test('data report --json describes the test dataset', async (t) => {
  const r = await runCli(['data', 'report', '--json'], { STOREMAP_DATA_DIR: testDataDir() });
  t.is(r.code, 0, describe(r));
  let report: Record<string, any>;
  try {
    report = JSON.parse(r.stdout);
  } catch {
    return t.fail(`stdout is not one JSON object: ${describe(r)}`);
  }
  const store = testStore();
  const info = store.info() as { rows: number; brands: number; snapshot_version: string; rows_by_source: Record<string, number> };

  t.is(typeof report.snapshot_version, 'string');
  t.is(report.snapshot_version, info.snapshot_version);
  t.is(report.pool_points, info.rows, 'pool_points = the loaded store\'s info().rows');
  t.true(Number.isInteger(report.verified_rows) && report.verified_rows > 0);
  t.true(report.verified_rows <= report.pool_points, 'verified_rows <= pool_points');

  // Brand figures, recomputed from the store's brand records.
  let verified = 0;
  let withRows = 0;
  let withVerified = 0;
  const brandsWithRows: number[] = [];
  for (let i = 0; i < info.brands; i++) {
    const b = store.brand(i)!;
    verified += b.locationCount;
    if (b.poolCount > 0) {
      withRows++;
      brandsWithRows.push(i);
    }
    if (b.locationCount > 0) withVerified++;
  }
  t.is(report.verified_rows, verified, 'verified_rows = sum of the brands\' locationCount');
  t.is(report.brands, withRows, 'brands = brands with at least one row');
  t.is(report.brands_with_verified_rows, withVerified);
  t.true(report.brands_with_verified_rows <= report.brands);

  // countries: distinct countries over every pool row.
  const all = JSON.parse((await query(store, { brands: brandsWithRows, format: 'json', verifiedOnly: false })).body.toString()) as { locations: Loc[] };
  t.is(all.locations.length, report.pool_points);
  t.is(report.countries, new Set(all.locations.map((l) => l.country)).size);

  const tickers = parseCsvObjects(readFileSync(path.join(ROOT, 'data', 'tickers.csv'), 'utf8'));
  t.is(report.tickers, tickers.length, 'tickers = rows in data/tickers.csv');

  t.deepEqual(Object.keys(report.rows_by_source).sort(), ['atp', 'fsq', 'osm', 'overture']);
  for (const [k, v] of Object.entries(report.rows_by_source)) t.true(Number.isInteger(v) && (v as number) > 0, `rows_by_source.${k} = ${v}`);
  t.deepEqual(report.rows_by_source, info.rows_by_source);

  for (const k of ['precision', 'recall']) {
    const v = report.dedup?.[k];
    t.is(typeof v, 'number', `dedup.${k}`);
    t.true(v >= 0.99 && v <= 1, `dedup.${k} = ${v}`);
  }

  // coverage_confidence scored against truth-brands.csv: every brand x country pair of the 500
  // brands with the most true open stores is either scored or answered null.
  const truth = parseCsvObjects(readFileSync(path.join(testDataDir(), 'sources', 'truth-brands.csv'), 'utf8'));
  const open = new Map<string, { total: number; countries: number }>();
  for (const r of truth) {
    if (Number(r.open) <= 0) continue;
    const e = open.get(r.brand) ?? { total: 0, countries: 0 };
    open.set(r.brand, { total: e.total + Number(r.open), countries: e.countries + 1 });
  }
  const names = new Set(Array.from({ length: info.brands }, (_, i) => store.brand(i)!.name));
  const top = [...open.entries()].sort((a, b) => b[1].total - a[1].total || (a[0] < b[0] ? -1 : 1)).slice(0, 500);
  const c = report.coverage;
  t.is(c.pairs + c.not_estimated, top.filter(([b]) => names.has(b)).reduce((n, [, e]) => n + e.countries, 0));
  t.true(c.pairs > 0);
  t.is(c.calibration.length, 10);
  t.is(c.calibration.reduce((n: number, b: { pairs: number }) => n + b.pairs, 0), c.pairs);
  t.true(c.spearman > 0 && c.spearman <= 1, `spearman ${c.spearman}`);
  t.true(c.mean_absolute_error >= 0 && c.mean_absolute_error < 1);

  // realism: the 100 biggest chains by true open stores, each against its listed size, or, where
  // no one lists it, in the countries data/footprints.csv counts only (recomputed here from
  // truth-brands.csv and the store's verified rows).
  const scale = (store.info() as { scale?: number }).scale ?? 1;
  const realism = report.realism as { brand: string; true_open: number; verified: number; real: number | null; published_only: boolean }[];
  t.deepEqual(
    realism.map((l) => l.brand),
    [...open.entries()]
      .sort((a, b) => b[1].total - a[1].total || (a[0] < b[0] ? -1 : 1))
      .slice(0, 100)
      .map(([b]) => b),
  );
  const index = new Map(Array.from({ length: info.brands }, (_, i) => [store.brand(i)!.name, i]));
  let compared = 0;
  for (const line of realism.filter((l) => l.published_only)) {
    const rows = truth.filter((r) => r.brand === line.brand && r.published !== '');
    t.true(rows.length > 0 && truth.every((r) => r.brand !== line.brand || r.real === ''), `${line.brand}: published-only without a listed size`);
    const countries = new Set(rows.map((r) => r.country));
    t.is(line.true_open, rows.reduce((n, r) => n + Number(r.open), 0), `${line.brand}: true open in its published countries`);
    t.is(line.real, rows.reduce((n, r) => n + Number(r.published), 0) * scale, `${line.brand}: real`);
    const verifiedRows = JSON.parse((await query(store, { brands: [index.get(line.brand)!], format: 'json', verifiedOnly: true })).body.toString()) as { locations: Loc[] };
    t.is(line.verified, verifiedRows.locations.filter((l) => countries.has(l.country)).length, `${line.brand}: verified in its published countries`);
    compared++;
  }
  t.true(compared > 0, 'a chain of unlisted size among the 100 biggest');
  const listed = realism.find((l) => !l.published_only && l.real !== null)!;
  t.is(listed.true_open, open.get(listed.brand)!.total);

  // land: the test folder carries the reference borders, so every row is measured from the
  // coast; the world places its stores on land, and pins stray by metres.
  t.is(report.land.rows, report.pool_points);
  t.is(report.land.beyond_10_km, 0, JSON.stringify(report.land));
  t.true(report.land.share_beyond_2_km <= 0.005, JSON.stringify(report.land));

  // ticker_countries: each ticker's served top three, recounted from its verified rows.
  const lines = report.ticker_countries as { ticker: string; brand: string; served: [string, number][] }[];
  t.is(lines.length, tickers.length);
  const mcd = lines.find((l) => l.ticker === 'MCD')!;
  const mcdRows = JSON.parse((await query(store, { brands: [index.get(mcd.brand)!], format: 'json', verifiedOnly: true })).body.toString()) as { locations: Loc[] };
  const byCountry = new Map<string, number>();
  for (const l of mcdRows.locations) byCountry.set(l.country, (byCountry.get(l.country) ?? 0) + 1);
  const top3 = [...byCountry.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 3);
  t.deepEqual(mcd.served, top3);

  // home_markets: the brands without counts against their homes; each one listed as missing
  // its home is served first somewhere else, recounted from its verified rows.
  const homes = report.home_markets as { brands: number; home_first: number; home_not_first: [string, string, [string, number][]][] };
  t.true(Number.isInteger(homes.brands) && homes.home_first <= homes.brands, JSON.stringify(homes));
  t.is(homes.home_not_first.length, Math.min(10, homes.brands - homes.home_first));
  for (const [brand, home, served] of homes.home_not_first) {
    const rows = JSON.parse((await query(store, { brands: [index.get(brand)!], format: 'json', verifiedOnly: true })).body.toString()) as { locations: Loc[] };
    const counts = new Map<string, number>();
    for (const l of rows.locations) counts.set(l.country, (counts.get(l.country) ?? 0) + 1);
    const first = [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0];
    t.deepEqual(served[0], first, brand);
    t.not(first[0], home, brand);
  }
});

// ---------------------------------------------------------------------------------------------
// data import of the fixture scene: one import into a fresh folder, shared by the tests below

let importDir: string | undefined;
let imported: Promise<{ store: Store; stdout: string; stderr: string }> | undefined;
function fixtureImport() {
  imported ??= (async () => {
    importDir = await mkdtemp(path.join(tmpdir(), 'storemap-cli-import-'));
    const r = await runCli(FIXTURE_IMPORT_ARGS, { STOREMAP_DATA_DIR: importDir });
    if (r.code !== 0) throw new Error(`storemap data import failed: ${describe(r)}`);
    return { store: await loadStore(path.join(importDir, SNAPSHOT_FILE)), stdout: r.stdout, stderr: r.stderr };
  })();
  return imported;
}
test.after.always(async () => {
  if (importDir) await rm(importDir, { recursive: true, force: true });
});

async function allRows(store: Store): Promise<Loc[]> {
  const brands: number[] = [];
  for (let i = 0; i < store.info().brands; i++) if (store.brand(i)!.poolCount > 0) brands.push(i);
  if (brands.length === 0) return [];
  const res = await query(store, { brands, format: 'json', verifiedOnly: false, includeProvenance: true, brandLabel: 'all' });
  const locs = (JSON.parse(res.body.toString()) as { locations: Loc[] }).locations;
  // One brand: the writer leaves out the per-row brand.
  if (brands.length === 1) for (const l of locs) l.brand = store.brand(brands[0])!.name;
  return locs;
}

test('data report into a pipe nobody reads (`| head` gone) exits 0 without an EPIPE trace', async (t) => {
  // A FIFO whose only reader is closed before the CLI starts: its first write fails with EPIPE
  // whatever the timing, as `storemap data report | head -1` does once head has exited.
  const dir = await mkdtemp(path.join(tmpdir(), 'storemap-epipe-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const fifo = path.join(dir, 'out');
  execFileSync('mkfifo', [fifo]);
  const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
  const writer = openSync(fifo, constants.O_WRONLY);
  closeSync(reader);
  const child = spawn(process.execPath, [CLI, 'data', 'report'], {
    cwd: ROOT,
    env: { ...process.env, STOREMAP_DATA_DIR: testDataDir() },
    stdio: ['ignore', writer, 'pipe'],
  });
  closeSync(writer);
  let stderr = '';
  if (!child.stderr) throw new Error('spawn gave no stderr pipe');
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  t.is(code, 0, stderr);
  t.false(/EPIPE|Unhandled/.test(stderr), stderr);
});

test('data import: exits 0 and keeps exactly the open branded rows of expected.json', async (t) => {
  const { store, stdout } = await fixtureImport();
  t.regex(stdout, /snapshot\.smap: \d+ rows/);
  const info = store.info() as { rows: number; as_of: string; synthetic: boolean };
  t.is(info.rows, openBranded.length, `expected.json has ${openBranded.length} open branded rows (closed and unbranded excluded)`);
  t.is(info.as_of, AS_OF);
  t.false(info.synthetic);
});

test("data import: McDonald's rows carry exactly expected.json's members as alias_sources", async (t) => {
  const { store } = await fixtureImport();
  const mcd = store.resolve("McDonald's");
  if (!mcd) return t.fail("McDonald's does not resolve in the imported snapshot");
  t.is(mcd.name, "McDonald's");
  const res = await query(store, { brands: [mcd.brand], format: 'json', verifiedOnly: false, includeProvenance: true });
  const locs = (JSON.parse(res.body.toString()) as { locations: Loc[] }).locations;
  const got = locs.map((l) => setKey(aliasKey(l))).sort();
  const want = openBranded
    .filter((r) => r.brand === "McDonald's")
    .map((r) => setKey(r.members))
    .sort();
  t.true(want.length > 0);
  t.deepEqual(got, want);
});

test('data import: the scenario 1 store (OSM + ATP + Overture) is one row with all three sources', async (t) => {
  const { store } = await fixtureImport();
  const s1 = expected.rows.find((r) => r.scenario === '1');
  if (!s1) return t.fail('expected.json has no scenario 1 row');
  const locs = await allRows(store);
  const holding = locs.filter((l) => aliasKey(l).some((m) => s1.members.includes(m)));
  t.is(holding.length, 1, `scenario 1 members spread over ${holding.length} rows`);
  const row = holding[0];
  if (!row) return;
  for (const s of ['atp', 'osm', 'overture']) t.true(row.source_types.includes(s), `source_types ${JSON.stringify(row.source_types)} lacks ${s}`);
  t.is(setKey(aliasKey(row)), setKey(s1.members));
});

test('data import: every open branded row once, with its brand, members and country; the rest nowhere', async (t) => {
  const { store } = await fixtureImport();
  const locs = await allRows(store);
  const byMembers = new Map(locs.map((l) => [setKey(aliasKey(l)), l]));
  for (const r of openBranded) {
    const l = byMembers.get(setKey(r.members));
    if (!l) {
      t.fail(`${r.key}: no row has exactly the members ${r.members.join(', ')}`);
      continue;
    }
    t.is(l.brand, r.brand!, `${r.key} brand`);
    t.is(l.country, r.country, `${r.key} country`);
  }
  const served = new Set(locs.flatMap(aliasKey));
  const absent = [
    ...expected.rows.filter((r) => !(r.branded && r.status === 'open')).flatMap((r) => r.members),
    ...expected.dropped.map((d) => d.member),
  ];
  t.deepEqual(
    absent.filter((m) => served.has(m)),
    [],
    'closed, unbranded and dropped members must not be served',
  );
});

// ---------------------------------------------------------------------------------------------
// Failures

test('data import in two shards, merged with data merge, is the one-process import byte for byte', async (t) => {
  const { stdout } = await fixtureImport();
  t.regex(stdout, /rows/);
  const dir = await tempDataDir(t, { reference: true });
  for (const k of [1, 2]) {
    const r = await runCli([...FIXTURE_IMPORT_ARGS, '--shard', `${k}/2`, '--part', path.join(dir, 'parts', String(k))], { STOREMAP_DATA_DIR: dir });
    t.is(r.code, 0, describe(r));
    t.regex(r.stdout, new RegExp(`shard ${k}/2, \\d+ brands, \\d+ rows`), describe(r));
    t.false(existsSync(path.join(dir, SNAPSHOT_FILE)), 'a shard writes a part, not a snapshot');
  }
  const parts = [2, 1].map((k) => path.join(dir, 'parts', String(k)));
  // Only one of the two: refused by name, nothing written.
  const half = await runCli(['data', 'merge', parts[0]!, '--out', dir], { STOREMAP_DATA_DIR: dir });
  t.not(half.code, 0, describe(half));
  t.regex(half.stderr, /missing shard 1\/2/, describe(half));
  t.false(existsSync(path.join(dir, SNAPSHOT_FILE)));
  const r = await runCli(['data', 'merge', ...parts, '--out', path.join(dir, SNAPSHOT_FILE)], { STOREMAP_DATA_DIR: dir });
  t.is(r.code, 0, describe(r));
  t.true(readFileSync(path.join(dir, SNAPSHOT_FILE)).equals(readFileSync(path.join(importDir!, SNAPSHOT_FILE))), 'the merged snapshot is the one-process import');
});

test('data build and merge refuse a shard without its part, a merge into another file name and a scale above 10', async (t) => {
  const dir = await tempDataDir(t, { reference: true });
  for (const [args, said] of [
    [['data', 'build', '--shard', '1/2'], /--shard and --part go together/],
    [['data', 'build', '--shard', '1/2', '--part', path.join(dir, 'part')], /--shard needs --as-of/],
    [['data', 'build', '--shard', 'half', '--part', dir], /not K\/N/],
    [['data', 'merge', dir, '--out', path.join(dir, 'other.smap')], /snapshot\.smap, not other\.smap/],
    [['data', 'build', '--scale', '11'], /--scale must be in \(0, 10\]/],
  ] as const) {
    const r = await runCli([...args], { STOREMAP_DATA_DIR: dir });
    t.not(r.code, 0, describe(r));
    t.regex(r.stderr, said, describe(r));
  }
  t.false(existsSync(path.join(dir, SNAPSHOT_FILE)));
});

test('STOREMAP_THREADS: a bad value is refused before any work; 1 thread and 5 build the same snapshot byte for byte', async (t) => {
  const bad = await tempDataDir(t, { reference: true });
  for (const value of ['many', '0', '-2', '1.5', '99999']) {
    const r = await runCli(['data', 'build', '--scale', '0.01', '--seed', '3', '--as-of', AS_OF], { STOREMAP_DATA_DIR: bad, STOREMAP_THREADS: value });
    t.not(r.code, 0, describe(r));
    // Refused at the command's start (config.ts), in the words the pipeline uses for itself.
    t.regex(r.stderr, /STOREMAP_THREADS: a whole number of threads from 1 to 1024/, describe(r));
  }
  t.false(existsSync(path.join(bad, SNAPSHOT_FILE)), 'nothing built');
  const built: Buffer[] = [];
  for (const threads of ['1', '5']) {
    const dir = await tempDataDir(t, { reference: true });
    const r = await runCli(['data', 'build', '--scale', '0.01', '--seed', '3', '--as-of', AS_OF], { STOREMAP_DATA_DIR: dir, STOREMAP_THREADS: threads });
    t.is(r.code, 0, describe(r));
    built.push(readFileSync(path.join(dir, SNAPSHOT_FILE)));
  }
  t.true(built[0]!.length > 10_000, 'a real snapshot');
  t.true(built[0]!.equals(built[1]!), 'the same snapshot on 1 thread and on 5');
});

test('data import with no source exits non-zero and says what is missing', async (t) => {
  const dir = await tempDataDir(t);
  const r = await runCli(['data', 'import'], { STOREMAP_DATA_DIR: dir });
  t.not(r.code, 0, describe(r));
  t.regex(r.stderr, /--osm|--overture|--fsq|--atp/, describe(r));
  t.false(existsSync(path.join(dir, SNAPSHOT_FILE)));
});

test('data build --scale 0 exits non-zero without building', async (t) => {
  const dir = await tempDataDir(t);
  const r = await runCli(['data', 'build', '--scale', '0'], { STOREMAP_DATA_DIR: dir });
  t.not(r.code, 0, describe(r));
  t.regex(r.stderr, /scale/, describe(r));
  t.false(existsSync(path.join(dir, SNAPSHOT_FILE)), 'no snapshot may be written');
});

test('data import of a malformed source exits non-zero and names the file', async (t) => {
  const dir = await tempDataDir(t, { reference: true });
  const file = 'test/fixtures/malformed/atp_not_json.geojson';
  const r = await runCli(['data', 'import', '--atp', file, '--as-of', AS_OF], { STOREMAP_DATA_DIR: dir });
  t.not(r.code, 0, describe(r));
  t.true(r.stderr.includes('atp_not_json.geojson'), `stderr should name the file: ${describe(r)}`);
  t.false(existsSync(path.join(dir, SNAPSHOT_FILE)), 'no snapshot may be written');
});

/** A copy of the test snapshot whose header names another format (bytes 8-11, little-endian). */
async function snapshotOfFormat(t: import('ava').ExecutionContext, format: number): Promise<string> {
  const dir = await tempDataDir(t);
  const bytes = readFileSync(path.join(testDataDir(), SNAPSHOT_FILE));
  t.is(bytes.toString('latin1', 0, 8), 'STOREMAP', 'the header this test patches');
  bytes.writeUInt32LE(format, 8);
  writeFileSync(path.join(dir, SNAPSHOT_FILE), bytes);
  return dir;
}

test('--version prints the version, the commit, the snapshot format and the Node', async (t) => {
  const r = await runCli(['--version'], {});
  t.is(r.code, 0, describe(r));
  const version = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  const head = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
  t.is(r.stdout.trim(), `storemap ${version} (commit ${head}; snapshot format ${DATA_DEFAULTS.snapshotFormat}; Node ${process.version})`);
});

test('serve on a data folder from a newer storemap refuses, and says which storemap or folder to use', async (t) => {
  const dir = await snapshotOfFormat(t, DATA_DEFAULTS.snapshotFormat + 1);
  const r = await runCli(['serve'], { STOREMAP_DATA_DIR: dir, PORT: '0' });
  t.is(r.code, 1, describe(r));
  t.regex(r.stderr, new RegExp(`has snapshot format ${DATA_DEFAULTS.snapshotFormat + 1}, written by a newer storemap`));
  t.regex(r.stderr, /Run the newer storemap on this data folder/);
  t.notRegex(r.stdout, /listening/);
});

test('serve on a snapshot older than this storemap reads says which command rebuilds it', async (t) => {
  const dir = await snapshotOfFormat(t, DATA_DEFAULTS.oldestSnapshotFormat - 1);
  const r = await runCli(['serve'], { STOREMAP_DATA_DIR: dir, PORT: '0' });
  t.is(r.code, 1, describe(r));
  t.regex(r.stderr, /no longer reads/);
  t.regex(r.stderr, /`storemap data build` for the synthetic world, `storemap data refresh` for imported sources/);
});
