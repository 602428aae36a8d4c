// The served snapshot file, replaced under a running watcher: a damaged file is refused by its
// checksum and the current snapshot keeps serving; a file replaced again while a reload runs
// is loaded after it. The first load is held by a gate the test opens, so the second change
// lands inside the reload by construction, not by timing.
import test from 'ava';
import { copyFileSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadStore, loadStoreSync, type Store, SNAPSHOT_FILE } from '../ts/native.ts';
import { StoreHolder, watchSnapshot } from '../ts/store-holder.ts';
import { testSnapshotPath } from './helpers/dataset.ts';

function tempDir(t: import('ava').ExecutionContext): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'storemap-reload-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Replaces `file` as a refresh does: a new file renamed over it. */
function replace(file: string, bytes: Buffer): void {
  const tmp = `${file}.next`;
  writeFileSync(tmp, bytes);
  renameSync(tmp, file);
}

async function until(ok: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    if (ok()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`never: ${what}`);
}

test('a snapshot with one flipped byte fails to load, naming the checksum', async (t) => {
  const dir = tempDir(t);
  const bytes = readFileSync(testSnapshotPath());
  bytes[Math.floor(bytes.length / 2)] ^= 0x10;
  const file = path.join(dir, SNAPSHOT_FILE);
  writeFileSync(file, bytes);
  const err = await t.throwsAsync(loadStore(file));
  t.regex(err!.message, /checksum mismatch/);
  t.throws(() => loadStoreSync(file), { message: /checksum mismatch/ });
});

test('a damaged replacement is refused and the current snapshot keeps serving; a change during a reload is loaded after it', async (t) => {
  const dir = tempDir(t);
  const file = path.join(dir, SNAPSHOT_FILE);
  copyFileSync(testSnapshotPath(), file);
  const good = readFileSync(file);
  const holder = new StoreHolder(loadStoreSync(file));
  const served = holder.current;

  const logs: string[] = [];
  const loads: string[] = [];
  let gate: (() => void) | undefined;
  // The first reload waits for the test; later ones load at once.
  const load = async (p: string): Promise<Store> => {
    loads.push(p);
    if (loads.length === 2) await new Promise<void>((r) => (gate = r));
    return loadStore(p);
  };
  const stop = watchSnapshot(holder, file, (l) => logs.push(l), 10, load);
  t.teardown(stop);

  // 1. Damaged: refused by its checksum, the old snapshot stays.
  const damaged = Buffer.from(good);
  damaged[damaged.length - 3] ^= 1;
  replace(file, damaged);
  await until(() => logs.length === 1, 'the damaged file was tried');
  t.regex(logs[0]!, /reload failed, still serving .*checksum mismatch/);
  t.is(holder.current, served);

  // 2. A good file; its reload is held at the gate while the file is replaced once more.
  replace(file, good);
  await until(() => gate !== undefined, 'the second reload started');
  replace(file, good);
  gate!();
  // The change that landed during the held reload is loaded after it.
  await until(() => loads.length === 3 && logs.length === 3, 'the third load');
  t.deepEqual(logs.slice(1).map((l) => l.split(':')[0]), ['snapshot reloaded', 'snapshot reloaded']);
  t.not(holder.current, served);
});
