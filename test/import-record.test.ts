// The import record (`import.json`) moves with the snapshot: the pipeline takes the record the
// command wrote (`--record`) right after the snapshot's swap, under the folder's lock, or removes
// it for a build (`--forget-record`). Written by the command after the pipeline returned, a kill
// -9 in between left the record of the import before, and the next refresh read that import's
// files again. Real CLI runs on the fixture scene.
import test from 'ava';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AS_OF, describe, FIXTURE_IMPORT_ARGS, runCli, tempDataDir } from './helpers/cli.ts';
import { ROOT } from '../ts/paths.ts';

/** A pid no process has: a child's, once it has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => child.on('exit', resolve));
  return child.pid!;
}

const pending = (dir: string) => readdirSync(dir).filter((n) => n.startsWith('import.json.'));

test('an import leaves its record and nothing pending; a refused one leaves the record before; a build removes it; records of killed commands are cleared', async (t) => {
  const dir = await tempDataDir(t, { reference: true });
  const env = { STOREMAP_DATA_DIR: dir };
  // Records commands killed before their pipeline took them left (named for this host, and by
  // pid alone as an earlier version named them); one a running command wrote; and one another
  // machine's command wrote on a shared disk, whose pid means nothing here.
  const host = os.hostname().replace(/[^A-Za-z0-9-]/g, '_');
  const deadPidNow = await deadPid();
  // (a `.next.tmp` is what a kill while the pipeline wrote import.json through it leaves)
  for (const name of [`import.json.${host}.${deadPidNow}.next`, `import.json.${deadPidNow}.next`, `import.json.${host}.${deadPidNow}.next.tmp`]) {
    writeFileSync(path.join(dir, name), '{"osm":"/srv/old.osm.pbf","countries":[]}\n');
  }
  // Alive until the teardown kills it, however slowly a loaded machine runs the imports.
  const running = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1 << 30)']);
  t.teardown(() => running.kill());
  const live = path.join(dir, `import.json.${host}.${running.pid}.next`);
  writeFileSync(live, '{"osm":"/srv/other.osm.pbf","countries":[]}\n');
  const elsewhere = path.join(dir, `import.json.${host}-other-machine.${deadPidNow}.next`);
  writeFileSync(elsewhere, '{"osm":"/srv/theirs.osm.pbf","countries":[]}\n');
  const kept = [path.basename(live), path.basename(elsewhere)].sort();

  const first = await runCli(FIXTURE_IMPORT_ARGS, env);
  t.is(first.code, 0, describe(first));
  const record = JSON.parse(readFileSync(path.join(dir, 'import.json'), 'utf8')) as Record<string, unknown>;
  // What the command line named, as absolute paths (FIXTURE_IMPORT_ARGS are relative to ROOT).
  t.is(record.osm, path.join(ROOT, 'test/fixtures/osm/places.geojsonseq'));
  t.is(record.atp, path.join(ROOT, 'test/fixtures/atp'));
  t.deepEqual(pending(dir).sort(), kept, "the killed commands' records are gone; the running one's and another host's kept");

  // Refused by the pipeline (an --as-of before the snapshot served): nothing moves.
  const before = readFileSync(path.join(dir, 'import.json'), 'utf8');
  const refused = await runCli(['data', 'import', '--osm', 'test/fixtures/osm/places.geojsonseq', '--as-of', '2026-10-01T00:00:00Z'], env);
  t.is(refused.code, 1, describe(refused));
  t.regex(refused.stderr, /is earlier than the snapshot served now/);
  t.is(readFileSync(path.join(dir, 'import.json'), 'utf8'), before);
  t.deepEqual(pending(dir).sort(), kept);

  // A build's snapshot is no import's: the record goes with the swap.
  const build = await runCli(['data', 'build', '--scale', '0.001', '--as-of', AS_OF, '--rewrite-history'], env);
  t.is(build.code, 0, describe(build));
  t.false(existsSync(path.join(dir, 'import.json')));
  t.deepEqual(pending(dir).sort(), kept);
});

test('storemap-ingest refuses a --record that is not there before any work, and both record flags at once', async (t) => {
  const dir = await tempDataDir(t, { reference: true });
  const missing = path.join(dir, 'import.json.1.next');
  const r = await runCli([...FIXTURE_IMPORT_ARGS], { STOREMAP_DATA_DIR: dir });
  t.is(r.code, 0, describe(r));
  const bin = path.join(ROOT, 'native', 'bin', 'storemap-ingest');
  const direct = (extra: string[]) =>
    new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(bin, ['build', '--data-dir', dir, '--reference', path.join(dir, 'reference'), '--tables', path.join(ROOT, 'data'), '--scale', '0.001', ...extra]);
      let stderr = '';
      child.stderr.on('data', (b: Buffer) => (stderr += b));
      child.on('exit', (code) => resolve({ code, stderr }));
    });
  const noFile = await direct(['--record', missing]);
  t.not(noFile.code, 0);
  t.regex(noFile.stderr, /--record: no file at .*import\.json\.1\.next/);
  const both = await direct(['--record', missing, '--forget-record']);
  t.not(both.code, 0);
  t.regex(both.stderr, /cannot be used with/);
  t.true(existsSync(path.join(dir, 'import.json')), 'untouched');
});

test('a rollback brings back the record of the snapshot it brings back: two imports, a build, and rollbacks between them', async (t) => {
  const dir = await tempDataDir(t, { reference: true });
  const env = { STOREMAP_DATA_DIR: dir };
  const REAL = 'test/fixtures/real';
  const args = ['--osm', `${REAL}/osm/zugerland.osm.pbf`, '--overture', `${REAL}/overture/boulder_places_2026-04-15.0.parquet`, '--as-of', AS_OF];
  const record = () => (existsSync(path.join(dir, 'import.json')) ? (JSON.parse(readFileSync(path.join(dir, 'import.json'), 'utf8')) as { countries: string[] }) : undefined);
  const ok = async (argv: string[]) => {
    const r = await runCli(argv, env);
    t.is(r.code, 0, describe(r));
  };
  await ok(['data', 'import', ...args]);
  await ok(['data', 'import', ...args, '--country', 'CH']);
  t.deepEqual(record()?.countries, ['CH']);
  await ok(['data', 'rollback']);
  t.deepEqual(record()?.countries, [], 'the first import again: its record');
  await ok(['data', 'rollback']);
  t.deepEqual(record()?.countries, ['CH']);
  // A build's snapshot is no import's; rolled back, the import's record returns; forward again, none.
  await ok(['data', 'build', '--scale', '0.001', '--as-of', AS_OF]);
  t.is(record(), undefined);
  await ok(['data', 'rollback']);
  t.deepEqual(record()?.countries, ['CH']);
  await ok(['data', 'rollback']);
  t.is(record(), undefined);
  t.deepEqual(
    readdirSync(dir).filter((n) => n.startsWith('import.')),
    ['import.prev.json'],
  );
});
