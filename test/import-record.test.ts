// The import record (`import.json`) a command killed with -9 leaves staged: it was killed after
// its pipeline swapped the snapshot in but before it wrote the record, and the next refresh read
// the older import's files again. The next reader settles a dead command's stage by the age of
// the snapshot served, on real files with their times set here.
import test, { type ExecutionContext } from 'ava';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readImportRecord } from '../ts/data/ingest.ts';

const OLD = { osm: '/srv/osm/old.osm.pbf', countries: ['CH'] };
const NEW = { osm: '/srv/osm/new.osm.pbf', countries: ['LI'] };

/** A pid no process has: a child's, once it has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => child.on('exit', resolve));
  return child.pid!;
}

function folder(t: ExecutionContext): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'storemap-record-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(path.join(dir, 'import.json'), JSON.stringify(OLD));
  writeFileSync(path.join(dir, 'snapshot.smap'), 'a snapshot');
  return dir;
}

/** A stage written at `stagedAt` by `pid`, and the snapshot written at `snapshotAt` (seconds). */
function stage(dir: string, pid: number, record: unknown, stagedAt: number, snapshotAt: number): string {
  const file = path.join(dir, `import.staged.${pid}.json`);
  writeFileSync(file, JSON.stringify(record));
  utimesSync(file, stagedAt, stagedAt);
  utimesSync(path.join(dir, 'snapshot.smap'), snapshotAt, snapshotAt);
  return file;
}

test("a dead command's record is the folder's when the snapshot was written after it was staged, and dropped when not", async (t) => {
  const pid = await deadPid();
  const done = folder(t);
  stage(done, pid, NEW, 1_000_000, 1_000_060);
  t.deepEqual(readImportRecord(done), NEW, 'its pipeline swapped the snapshot in');
  t.deepEqual(readdirSync(done).sort(), ['import.json', 'snapshot.smap']);

  const failed = folder(t);
  stage(failed, pid, NEW, 1_000_060, 1_000_000);
  t.deepEqual(readImportRecord(failed), OLD, 'its pipeline never got that far');
  t.deepEqual(readdirSync(failed).sort(), ['import.json', 'snapshot.smap']);

  // A build or a merge stages "no record": its snapshot is no import's.
  const built = folder(t);
  stage(built, pid, null, 1_000_000, 1_000_060);
  t.is(readImportRecord(built), undefined);
  t.false(existsSync(path.join(built, 'import.json')));
});

test("a running command's stage is its own; stages of dead commands are settled oldest first", async (t) => {
  const dir = folder(t);
  const running = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)']);
  t.teardown(() => running.kill());
  const live = stage(dir, running.pid!, NEW, 1_000_000, 1_000_060);
  t.deepEqual(readImportRecord(dir), OLD);
  t.true(existsSync(live), 'left to the command that wrote it');
  rmSync(live);

  // Two dead commands' stages older than the snapshot: the later one was the last to start.
  const [a, b] = [await deadPid(), await deadPid()];
  stage(dir, a, NEW, 1_000_010, 1_000_060);
  stage(dir, b, { ...NEW, countries: ['AT'] }, 1_000_020, 1_000_060);
  t.deepEqual(readImportRecord(dir), { ...NEW, countries: ['AT'] });
  t.deepEqual(JSON.parse(readFileSync(path.join(dir, 'import.json'), 'utf8')), { ...NEW, countries: ['AT'] });
  t.deepEqual(readdirSync(dir).sort(), ['import.json', 'snapshot.smap']);
});
