// Graceful shutdown of the real `storemap serve` process: on SIGTERM a request in flight
// still completes, new connections are refused, the process exits 0 and the database is
// closed cleanly (SQLite folds the WAL back in and removes it on the last close).
import { fork } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { openRaw } from '../ts/db/database.ts';
import { testDataDir } from './helpers/dataset.ts';
import { SNAPSHOT_FILE } from '../ts/native.ts';

const ROOT = path.resolve(import.meta.dirname, '..');

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

test('SIGTERM lets the request in flight finish, then exits 0 with the database closed', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'storemap-shutdown-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  copyFileSync(path.join(testDataDir(), SNAPSHOT_FILE), path.join(dir, SNAPSHOT_FILE));
  const port = await freePort();
  const db = path.join(dir, 'storemap.db');
  const child = fork(path.join(ROOT, 'bin', 'storemap.js'), ['serve'], {
    env: { ...process.env, STOREMAP_DATA_DIR: dir, STOREMAP_DB: db, PORT: String(port), STOREMAP_TEST_HOOKS: '1' },
    stdio: 'pipe',
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${base}/healthz`)).ok) break;
    } catch {
      if (i > 300) throw new Error('server never came up');
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  t.true(existsSync(`${db}-wal`), 'the database runs in WAL mode while serving');

  const inFlight = fetch(`${base}/api/v1/__test/slow?ms=1500`, { method: 'POST' });
  await new Promise((r) => setTimeout(r, 300));
  child.kill('SIGTERM');
  const res = await inFlight;
  t.is(res.status, 200);
  t.deepEqual(await res.json(), { slept_ms: 1500 });
  t.is(await exited, 0);
  await t.throwsAsync(fetch(`${base}/healthz`), undefined, 'nothing listens after the exit');
  t.false(existsSync(`${db}-wal`), 'the WAL was folded in by a clean close');
  const check = openRaw(db, { readonly: true });
  t.is(check.pragma('integrity_check', { simple: true }), 'ok');
  check.close();
});
