// A real storemap server on 127.0.0.1 (a free port) over the test dataset, with its own
// SQLite file in a temp folder; closed and removed when the test ends.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ExecutionContext } from 'ava';
import { loadConfig, type Config } from '../../ts/config.ts';
import { openDatabase, type DB } from '../../ts/db/database.ts';
import { loadRenderer } from '../../ts/native.ts';
import { createServer, listen } from '../../ts/server.ts';
import { KeyStore } from '../../ts/services/keys.ts';
import { StoreHolder } from '../../ts/store-holder.ts';
import { Subdivisions } from '../../ts/services/subdivisions.ts';
import { testDataDir, testStore } from './dataset.ts';
import { UNTHROTTLED } from './child.ts';
import { SqliteLedger } from '../../ts/db/sqlite-ledger.ts';

export interface TestServer {
  base: string;
  config: Config;
  db: DB;
  dbPath: string;
  keys: KeyStore;
  store: StoreHolder;
  /** Closes the server as a shutdown does (refusals counted in memory are written); the
   * database stays open for the test to read. */
  stop(): Promise<void>;
}

export async function startServer(
  t: ExecutionContext,
  opts: { env?: Record<string, string>; now?: () => number; dbPath?: string; renderer?: boolean } = {},
): Promise<TestServer> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'storemap-server-'));
  const dbPath = opts.dbPath ?? path.join(dir, 'storemap.db');
  const config = loadConfig({ ...process.env, ...UNTHROTTLED, STOREMAP_DATA_DIR: testDataDir(), STOREMAP_DB: dbPath, PORT: '0', ...opts.env });
  const db = openDatabase(dbPath);
  const store = new StoreHolder(testStore());
  // Off only to test a server that cannot draw (the status endpoint's degraded case).
  const renderer = opts.renderer === false ? undefined : loadRenderer(path.join(testDataDir(), 'reference'));
  const subdivisions = Subdivisions.fromCsv(path.join(testDataDir(), 'reference', 'subdivisions.csv'));
  const server = createServer({ config, store, db, renderer, subdivisions, now: opts.now, log: () => {} });
  const base = await listen(server, '127.0.0.1', 0);
  let stopped: Promise<void> | undefined;
  const stop = () => (stopped ??= new Promise<void>((resolve) => server.close(() => resolve())));
  t.teardown(async () => {
    await stop();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { base, config, db, dbPath, keys: new KeyStore(new SqliteLedger(db), opts.now), store, stop };
}
