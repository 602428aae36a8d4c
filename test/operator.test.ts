// What an operator's probe of the command line found (2026-11-30), each fixed and held here by
// running `node bin/storemap.js` as an operator would: a refresh reads again what the last
// import read (region included) and opens the ledger before it swaps anything, stopping a
// command stops the pipeline under it, and bad values (empty numbers, impossible dates, empty
// paths, key names with control characters, balances past 2^53) stop with a message naming them.
import test, { type ExecutionContext } from 'ava';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { AS_OF, CLI, describe, FIXTURE_IMPORT_ARGS, runCli, tempDataDir } from './helpers/cli.ts';
import { testDataDir } from './helpers/dataset.ts';
import { ROOT } from '../ts/paths.ts';

const REAL = 'test/fixtures/real';
const sha = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

test('data refresh reads again what the last import read, its country included', async (t) => {
  const dir = await tempDataDir(t, { reference: true });
  const env = { STOREMAP_DATA_DIR: dir, STOREMAP_DB: path.join(dir, 'ledger.db') };
  // Zugerland (Switzerland) and Boulder (the US): with --country CH only the Swiss rows stay.
  const args = ['--osm', `${REAL}/osm/zugerland.osm.pbf`, '--overture', `${REAL}/overture/boulder_places_2026-04-15.0.parquet`];
  // A synthetic world's truth left in the folder scores nothing of a real import.
  mkdirSync(path.join(dir, 'sources'), { recursive: true });
  for (const f of ['truth.csv', 'truth-brands.csv']) copyFileSync(path.join(testDataDir(), 'sources', f), path.join(dir, 'sources', f));
  const countries = async () => {
    const r = await runCli(['data', 'report', '--json'], env);
    t.is(r.code, 0, describe(r));
    const report = JSON.parse(r.stdout) as { countries: number; synthetic: boolean; dedup: unknown; realism?: unknown[] };
    t.false(report.synthetic);
    t.is(report.dedup, null);
    t.deepEqual(report.realism ?? [], []);
    return report.countries;
  };
  const all = await runCli(['data', 'import', ...args, '--as-of', AS_OF], env);
  t.is(all.code, 0, describe(all));
  t.is(await countries(), 2, 'Switzerland and the US');
  // Written as the pipeline reads it (trimmed, upper case): the record holds the plain code.
  const swiss = await runCli(['data', 'import', ...args, '--country', ' ch ', '--as-of', AS_OF], env);
  t.is(swiss.code, 0, describe(swiss));
  t.is(await countries(), 1);
  const record = JSON.parse(readFileSync(path.join(dir, 'import.json'), 'utf8'));
  t.deepEqual(record, { osm: path.join(ROOT, REAL, 'osm/zugerland.osm.pbf'), overture: path.join(ROOT, REAL, 'overture/boulder_places_2026-04-15.0.parquet'), countries: ['CH'] });
  // No ledger yet (a mistyped STOREMAP_DB looks the same): refused, and none is created.
  const noLedger = await runCli(['data', 'refresh', '--as-of', '2026-11-08T00:00:00Z'], env);
  t.is(noLedger.code, 1, describe(noLedger));
  t.regex(noLedger.stderr, /no ledger at .*ledger\.db \(STOREMAP_DB\)/);
  t.false(existsSync(env.STOREMAP_DB));
  const ledger = await runCli(['keys', 'create', '--plan', 'standard', '--name', 'operator'], env);
  t.is(ledger.code, 0, describe(ledger));
  const refresh = await runCli(['data', 'refresh', '--as-of', '2026-11-08T00:00:00Z'], env);
  t.is(refresh.code, 0, describe(refresh));
  t.regex(refresh.stdout, /brand_summary stamped/);
  t.is(await countries(), 1, 'the refresh kept the import to Switzerland');
  // An earlier time would cut the change history back to it: refused before anything is read,
  // the snapshot left as it is, unless the operator asks for it.
  const served = sha(path.join(dir, 'snapshot.smap'));
  const earlier = await runCli(['data', 'refresh', '--as-of', AS_OF], env);
  t.is(earlier.code, 1, describe(earlier));
  t.regex(earlier.stderr, /is earlier than the snapshot served now \(2026-11-08T00:00:00Z\).*--rewrite-history/);
  t.is(sha(path.join(dir, 'snapshot.smap')), served);
  const rewritten = await runCli(['data', 'refresh', '--as-of', AS_OF, '--rewrite-history'], env);
  t.is(rewritten.code, 0, describe(rewritten));
  t.not(sha(path.join(dir, 'snapshot.smap')), served);
});

test('data refresh of a synthetic build ages the same world: the snapshot a build of that time makes, the history goes on, and the report scores the refresh', async (t) => {
  const build = (dir: string, asOf: string) => runCli(['data', 'build', '--scale', '0.002', '--seed', '5', '--as-of', asOf], { STOREMAP_DATA_DIR: dir });
  const LATER = '2026-11-15T00:00:00Z';
  const dir = await tempDataDir(t, { reference: true });
  const env = { STOREMAP_DATA_DIR: dir, STOREMAP_DB: path.join(dir, 'ledger.db') };
  const first = await build(dir, AS_OF);
  t.is(first.code, 0, describe(first));
  t.is((await runCli(['keys', 'create', '--plan', 'standard', '--name', 'operator'], env)).code, 0);
  const refresh = await runCli(['data', 'refresh', '--as-of', LATER], env);
  t.is(refresh.code, 0, describe(refresh));
  t.regex(refresh.stderr, /the synthetic world of scale 0\.002, seed 5/);
  t.regex(refresh.stdout, /brand_summary stamped/);
  // What to expect, made another way: the same two builds by hand in another folder.
  const other = await tempDataDir(t, { reference: true });
  for (const asOf of [AS_OF, LATER]) {
    const r = await build(other, asOf);
    t.is(r.code, 0, describe(r));
  }
  t.is(sha(path.join(dir, 'snapshot.smap')), sha(path.join(other, 'snapshot.smap')), 'the refresh is the build of the same world at the new time');
  const r = await runCli(['data', 'report', '--json'], env);
  t.is(r.code, 0, describe(r));
  const report = JSON.parse(r.stdout) as { synthetic: boolean; as_of: string; dedup: unknown; changes: unknown; truth_not_used: unknown };
  t.true(report.synthetic, 'still the synthetic world');
  t.is(report.as_of, LATER);
  t.not(report.dedup, null);
  t.not(report.changes, null, "the refresh's openings and closures are scored: the history went on");
  t.is(report.truth_not_used, null);
});

test('data refresh opens the ledger before it replaces the snapshot', async (t) => {
  const dir = await tempDataDir(t, { reference: true });
  const env = { STOREMAP_DATA_DIR: dir, STOREMAP_DB: path.join(dir, 'ledger.db') };
  // The extract in the folder a refresh without a record would read too, so that only the order
  // of the steps decides what happens.
  const osm = path.join(dir, 'sources', 'osm');
  mkdirSync(osm, { recursive: true });
  copyFileSync(path.join(ROOT, REAL, 'osm/zugerland.osm.pbf'), path.join(osm, 'zugerland.osm.pbf'));
  // Fetched files in sources/ (where `data fetch` put them until it filled downloads/) and no
  // import recorded: a refresh would read last week's files again, so it asks for an import.
  const stale = await runCli(['data', 'refresh'], env);
  t.is(stale.code, 1, describe(stale));
  t.regex(stale.stderr, /holds files no synthetic build wrote .* import them once with `storemap data import/);
  const osmOnly = await runCli(['data', 'import', '--osm', osm, '--as-of', AS_OF], env);
  t.is(osmOnly.code, 0, describe(osmOnly));
  // Every row is the community map's: said at the import, not found later by a user.
  t.regex(osmOnly.stderr, /warning: none of the \d+ rows is served as data .*the community map's alone.*\(Overture, Foursquare, AllThePlaces\)/);
  // Overture alone is not the community map: the warning says why, and names the others.
  const overtureOnly = await runCli(['data', 'import', '--overture', `${REAL}/overture/boulder_places_2026-04-15.0.parquet`, '--as-of', AS_OF], { STOREMAP_DATA_DIR: await tempDataDir(t, { reference: true }) });
  t.is(overtureOnly.code, 0, describe(overtureOnly));
  t.regex(overtureOnly.stderr, /none of the \d+ rows is served as data .*below the confidence floor .*\(OpenStreetMap, Foursquare, AllThePlaces\)/);
  t.notRegex(overtureOnly.stderr, /community map/);
  // The fixture scene's four sources corroborate one another: no warning.
  const scene = await runCli(FIXTURE_IMPORT_ARGS, { STOREMAP_DATA_DIR: await tempDataDir(t, { reference: true }) });
  t.is(scene.code, 0, describe(scene));
  t.notRegex(scene.stderr, /none of the \d+ rows is served/);
  const before = sha(path.join(dir, 'snapshot.smap'));
  // Nothing listens on port 1 of this machine.
  const r = await runCli(['data', 'refresh', '--as-of', '2026-11-08T00:00:00Z'], { ...env, STOREMAP_DATABASE_URL: 'postgres://storemap@127.0.0.1:1/storemap' });
  t.not(r.code, 0, describe(r));
  t.is(sha(path.join(dir, 'snapshot.smap')), before, 'the snapshot is the one before');
});

/** Processes whose command line names `dir`. */
function processesOf(dir: string): string[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(dir);
      } catch {
        return false;
      }
    });
}

/** `storemap data build` into a new folder, once its pipeline says it is running; `err()` is
 * everything written to its stderr so far (the pipeline's too). */
async function runningBuild(t: ExecutionContext): Promise<{ dir: string; child: ChildProcessWithoutNullStreams; err: () => string }> {
  const dir = await tempDataDir(t, { reference: true });
  const child = spawn(process.execPath, [CLI, 'data', 'build', '--scale', '0.05', '--seed', '12', '--as-of', AS_OF], { cwd: ROOT, env: { ...process.env, STOREMAP_DATA_DIR: dir } });
  child.stdin.end();
  let err = '';
  // The gate: the pipeline's first phase line says it is running.
  await new Promise<void>((resolve, reject) => {
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      err += d;
      if (/load reference: /.test(err)) resolve();
    });
    child.on('exit', () => reject(new Error(`the build ended before it was stopped:\n${err}`)));
  });
  return { dir, child, err: () => err };
}

test('stopping a build stops the pipeline under it: nothing runs on, nothing is replaced', async (t) => {
  const { dir, child, err } = await runningBuild(t);
  child.kill('SIGTERM');
  const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
  t.is(code, 128 + 15, 'a process a signal stopped exits 128 + its number (SIGTERM: 143)');
  t.regex(err(), /stopped by SIGTERM/);
  t.deepEqual(processesOf(dir), [], 'no process is left with the data folder on its command line');
  t.false(existsSync(path.join(dir, 'snapshot.smap')));
});

test('a command killed with -9 takes its pipeline with it: it does not run on to replace the snapshot', async (t) => {
  const { dir, child, err } = await runningBuild(t);
  t.is(processesOf(dir).filter((p) => Number(p) !== child.pid).length, 1, 'one pipeline process runs under the command');
  child.kill('SIGKILL');
  // The pipeline's stderr is the command's, still read here: it says why it stopped, then ends.
  await new Promise<void>((resolve) => child.stderr.on('end', resolve));
  t.regex(err(), /the command that started it has stopped; stopping too/);
  t.deepEqual(processesOf(dir), [], 'no process is left with the data folder on its command line');
  t.false(existsSync(path.join(dir, 'snapshot.smap')), 'nothing replaced');
});

test('serve builds no synthetic world into a folder that held real data and lost its snapshot; a synthetic first start cut short starts again', async (t) => {
  for (const kept of ['import.json', 'snapshot.prev.smap']) {
    const dir = await tempDataDir(t, { reference: true });
    // A previous snapshot that cannot be read cannot say it is the synthetic world's.
    writeFileSync(path.join(dir, kept), kept === 'import.json' ? '{"osm":"/srv/osm/planet.osm.pbf","countries":[]}\n' : 'a snapshot');
    const before = readdirSync(dir).sort();
    // PORT 0: were it served, it would listen anywhere free, and the test would time out.
    const r = await runCli(['serve'], { STOREMAP_DATA_DIR: dir, STOREMAP_DB: path.join(dir, 'ledger.db'), PORT: '0' }, 60_000);
    t.is(r.code, 1, `${kept}: ${describe(r)}`);
    t.regex(r.stderr, new RegExp(`has no snapshot\\.smap but holds a real dataset's records \\(${kept.replace('.', '\\.')}\\)`), kept);
    if (kept === 'snapshot.prev.smap') t.regex(r.stderr, /storemap data rollback/);
    t.notRegex(r.stderr, /building the synthetic default/, kept);
    t.deepEqual(readdirSync(dir).sort(), before, `${kept}: nothing written, nothing removed`);
  }
  // What a synthetic first start leaves when it is stopped (its history is written before its
  // snapshot): the next start builds again.
  const dir = await tempDataDir(t, { reference: true });
  mkdirSync(path.join(dir, 'history'));
  const child = spawn(process.execPath, [CLI, 'serve'], { cwd: ROOT, env: { ...process.env, STOREMAP_DATA_DIR: dir, STOREMAP_DB: path.join(dir, 'ledger.db'), PORT: '0', STOREMAP_DEFAULT_SCALE: '0.001' } });
  let err = '';
  const building = await new Promise<boolean>((resolve) => {
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      err += d;
      if (/building the synthetic default/.test(err)) resolve(true);
    });
    child.on('exit', () => resolve(false));
  });
  if (building) {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.on('close', resolve));
  }
  t.true(building, err);
});

test('bad values stop the command with a message naming them', async (t) => {
  const dir = await tempDataDir(t, { reference: true });
  const env = { STOREMAP_DATA_DIR: dir, STOREMAP_DB: path.join(dir, 'ledger.db') };
  const refused = async (args: string[], extra: Record<string, string>, pattern: RegExp) => {
    const r = await runCli(args, { ...env, ...extra });
    t.is(r.code, 1, `${args.join(' ')}: ${describe(r)}`);
    t.regex(r.stderr, pattern, args.join(' '));
  };
  // Empty or hexadecimal numbers in the environment are not 0 or 16.
  await refused(['keys', 'list'], { STOREMAP_IDLE_TIMEOUT_MS: '' }, /STOREMAP_IDLE_TIMEOUT_MS: expected a decimal number/);
  await refused(['keys', 'list'], { PORT: ' ' }, /PORT: expected a decimal number/);
  await refused(['keys', 'list'], { STOREMAP_IMAGE_CACHE_BYTES: '0x10' }, /STOREMAP_IMAGE_CACHE_BYTES: expected a decimal number/);
  // A number out of range says its range, not that it is no number.
  await refused(['keys', 'list'], { PORT: '70000' }, /PORT: .*<=65535/);
  await refused(['keys', 'list'], { STOREMAP_DEFAULT_SCALE: '5' }, /STOREMAP_DEFAULT_SCALE: .*<=4/);
  await refused(['keys', 'list'], { STOREMAP_LEDGER_LINGER_MS: '1.5' }, /STOREMAP_LEDGER_LINGER_MS: expected a whole number/);
  // The build's threads are checked at start too (serve builds on first start and on refresh).
  for (const threads of ['0', '1025', 'many']) await refused(['keys', 'list'], { STOREMAP_THREADS: threads }, /STOREMAP_THREADS: a whole number of threads from 1 to 1024/);
  // Days a month does not have, and an empty time, are not rolled over or taken for now.
  await refused(['data', 'build', '--scale', '0.01', '--as-of', '2026-02-30T00:00:00Z'], {}, /--as-of: not an ISO 8601 time: 2026-02-30/);
  await refused(['data', 'import', '--osm', `${REAL}/osm/zugerland.osm.pbf`, '--as-of', '2026-04-31'], {}, /--as-of: not an ISO 8601 time: 2026-04-31/);
  await refused(['data', 'build', '--scale', '0.01', '--as-of', ''], {}, /--as-of needs a time/);
  // A mistyped year, far ahead of the clock, would lock every later import out.
  await refused(['data', 'build', '--scale', '0.01', '--as-of', '9999-01-01T00:00:00Z'], {}, /--as-of: 9999-01-01T00:00:00Z is more than a year after this machine's clock/);
  const twoYears = new Date(Date.now() + 2 * 366 * 86_400_000).toISOString().slice(0, 10);
  await refused(['data', 'import', '--osm', `${REAL}/osm/zugerland.osm.pbf`, '--as-of', twoYears], {}, /more than a year after this machine's clock/);
  await refused(['data', 'import', '--osm', `${REAL}/osm/zugerland.osm.pbf`, '--bbox', ''], {}, /--bbox needs four numbers/);
  // An empty path is not the current folder.
  await refused(['data', 'build', '--scale', '0.01', '--as-of', AS_OF, '--shard', '1/2', '--part', ''], {}, /--part needs a path/);
  await refused(['data', 'merge', path.join(dir, 'p1'), '--out', ''], {}, /--out needs a path/);
  await refused(['data', 'merge', path.join(dir, 'p1'), '--out', path.join(ROOT, 'package.json')], {}, /--out: .*package\.json is a file: give the data folder/);
  t.false(existsSync(path.join(ROOT, 'part.json')));
  // Key names are labels: printable, not too long; credits are decimal whole numbers.
  await refused(['keys', 'create', '--plan', 'enterprise', '--name', 'a\nkey_00000000dead\tinternal'], {}, /control character/);
  // What Node makes of a name typed in a terminal that is not UTF-8 ("caf\xe9" in Latin-1).
  await refused(['keys', 'create', '--plan', 'enterprise', '--name', 'caf\uFFFD'], {}, /U\+FFFD, the mark of bytes that were not UTF-8/);
  await refused(['keys', 'create', '--plan', 'enterprise', '--name', 'x'.repeat(201)], {}, /longer than 200/);
  await refused(['keys', 'create', '--plan', 'enterprise', '--credits', ''], {}, /decimal number/);
  await refused(['keys', 'create', '--plan', 'enterprise', '--credits', '0x20'], {}, /decimal number/);
  // A mistyped ledger path is not a new, empty ledger.
  const typo = path.join(dir, 'typo', 'ledger.db');
  await refused(['keys', 'list'], { STOREMAP_DB: typo }, /no ledger at .*typo\/ledger\.db/);
  t.false(existsSync(path.dirname(typo)));
  // A data folder that is a file, one with no dataset yet, and an import record edited wrong.
  await refused(['keys', 'list'], { STOREMAP_DATA_DIR: path.join(ROOT, 'package.json') }, /STOREMAP_DATA_DIR: a file, not a folder/);
  await refused(['data', 'report'], {}, /no dataset in .* \(STOREMAP_DATA_DIR\): `storemap data build` or `data import` makes one/);
  for (const [record, why] of [
    ['{"osm":"/srv/ch.osm.pbf","countries":"CH"}', /countries: /],
    ['{"osm":123,"countries":[]}', /osm: /],
    ['{"countries":[]}', /names no source/],
    ['{"osm":"/srv/ch.osm.pbf","countries":["CHE"]}', /countries\.0: a two-letter ISO 3166-1 code/],
  ] as const) {
    writeFileSync(path.join(dir, 'import.json'), record);
    await refused(['data', 'refresh'], {}, why);
  }
  rmSync(path.join(dir, 'import.json'));
  // A ledger that cannot be opened is named with the setting to fix.
  const notLedger = path.join(dir, 'not-a-ledger.db');
  writeFileSync(notLedger, 'x'.repeat(4096));
  await refused(['keys', 'list'], { STOREMAP_DB: notLedger }, /the ledger at .*not-a-ledger\.db \(STOREMAP_DB\): file is not a database/);
  await refused(['keys', 'list'], { STOREMAP_DATABASE_URL: 'postgres://storemap:secret@127.0.0.1:1/storemap' }, /the PostgreSQL ledger at postgres:\/\/storemap:\*\*\*@127\.0\.0\.1:1\/storemap \(STOREMAP_DATABASE_URL\): .*ECONNREFUSED/);
  // A balance stays below 2^53, where it is exact.
  const created = await runCli(['keys', 'create', '--plan', 'enterprise', '--credits', String(Number.MAX_SAFE_INTEGER - 1), '--name', 'rich'], env);
  t.is(created.code, 0, describe(created));
  const id = (await runCli(['keys', 'list'], env)).stdout.split('\t')[0];
  await refused(['keys', 'topup', id, '2'], {}, /would pass the most a key may hold \(9007199254740991\)/);
  t.is((await runCli(['keys', 'list'], env)).stdout.split('\t')[3], String(Number.MAX_SAFE_INTEGER - 1));
  const topped = await runCli(['keys', 'topup', id, '1'], env);
  t.is(topped.code, 0, describe(topped));
  t.regex(topped.stdout, /9007199254740991 credits/);
  // A revoked key is never charged again: a top-up would be credits nobody can spend.
  t.is((await runCli(['keys', 'revoke', id], env)).code, 0);
  await refused(['keys', 'topup', id, '1'], {}, /is revoked/);
});
