// Graceful shutdown of the real `storemap serve` process: on SIGTERM a request in flight
// still completes, new connections are refused, the process exits 0 and the database is
// closed cleanly (SQLite folds the WAL back in and removes it on the last close).
import { existsSync } from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { openRaw } from '../ts/db/database.ts';
import { snapshotDir, startServe } from './helpers/child.ts';

test('SIGTERM lets the request in flight finish, then exits 0 with the database closed', async (t) => {
  const dir = await snapshotDir(t);
  const db = path.join(dir, 'storemap.db');
  const srv = await startServe(t, { dataDir: dir, dbPath: db, env: { STOREMAP_TEST_HOOKS: '1' } });
  t.true(existsSync(`${db}-wal`), 'the database runs in WAL mode while serving');

  const inFlight = fetch(`${srv.base}/api/v1/__test/slow?ms=1500`, { method: 'POST' });
  // SIGTERM only once the server holds the request (its task is running), not after a guess
  // at how long that takes.
  for (;;) {
    const depth = (await (await fetch(`${srv.base}/api/v1/__test/pool`)).json()) as { running: number };
    if (depth.running === 1) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  srv.child.kill('SIGTERM');
  const res = await inFlight;
  t.is(res.status, 200);
  t.deepEqual(await res.json(), { slept_ms: 1500 });
  t.is((await srv.exited).code, 0);
  await t.throwsAsync(fetch(`${srv.base}/healthz`), undefined, 'nothing listens after the exit');
  t.false(existsSync(`${db}-wal`), 'the WAL was folded in by a clean close');
  const check = openRaw(db, { readonly: true });
  t.is(check.pragma('integrity_check', { simple: true }), 'ok');
  check.close();
});
