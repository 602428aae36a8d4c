// A real storemap server on 127.0.0.1 (a free port) over the test dataset, with its own
// SQLite file in a temp folder; closed and removed when the test ends. In the test script's
// PostgreSQL pass (STOREMAP_TEST_POSTGRES_URL set) its ledger is instead a fresh database on
// that server, so the same HTTP suites prove both stores.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { loadConfig, type Config } from '../../ts/config.ts';
import { openDatabase, type DB } from '../../ts/db/database.ts';
import { loadRenderer } from '../../ts/native.ts';
import { closeServer, createServer, listen } from '../../ts/server.ts';
import { KeyStore } from '../../ts/services/keys.ts';
import { StoreHolder } from '../../ts/store-holder.ts';
import { Subdivisions } from '../../ts/services/subdivisions.ts';
import { testDataDir, testStore } from './dataset.ts';
import { UNTHROTTLED } from './child.ts';
import { SqliteLedger } from '../../ts/db/sqlite-ledger.ts';
import pg from 'pg';
import type { LedgerOps } from '../../ts/db/ledger.ts';
import { PgLedger, pgLedgerOptions } from '../../ts/db/pg-ledger.ts';
import { openPostgres } from '../../ts/db/postgres.ts';

/** The PostgreSQL server of the test script's second pass, or undefined (SQLite). */
export const TEST_POSTGRES_URL = process.env.STOREMAP_TEST_POSTGRES_URL || undefined;

/** A test of SQLite itself (its file, several processes on it): skipped in the PostgreSQL pass,
 * whose own suites (test/ledger.test.ts, test/cluster.test.ts) cover the same ground there. */
export const sqliteOnly = TEST_POSTGRES_URL ? test.skip : test;

export interface TestServer {
  base: string;
  config: Config;
  /** The SQLite database: for tests of SQLite itself (it throws in the PostgreSQL pass). */
  db: DB;
  dbPath: string;
  ledger: LedgerOps;
  /** The PostgreSQL ledger's own database, when the ledger is PostgreSQL. */
  postgresUrl?: string;
  /** Rows of a query on the ledger's tables, on either store (`?` placeholders). */
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  keys: KeyStore;
  store: StoreHolder;
  /** Closes the server as a shutdown does (refusals counted in memory are written); the
   * database stays open for the test to read. */
  stop(): Promise<void>;
}

export async function startServer(
  t: ExecutionContext,
  opts: { env?: Record<string, string>; now?: () => number; dbPath?: string; renderer?: boolean; log?: (line: string) => void; postgresUrl?: string } = {},
): Promise<TestServer> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'storemap-server-'));
  // Removed last (teardowns run in reverse order), and registered before anything below can
  // throw: a test of a server that refuses to start (probe.test.ts) left its folder behind.
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const dbPath = opts.dbPath ?? path.join(dir, 'storemap.db');
  // Suites revoke a key through their own KeyStore and expect the server to see it at once:
  // the PostgreSQL pass turns the keys recheck window off, and with it the kept balances
  // (test/ledger.test.ts tests both).
  // `postgresUrl`: a PostgreSQL ledger whichever pass this is (a test of PostgreSQL itself).
  const postgresUrl = opts.postgresUrl ?? TEST_POSTGRES_URL;
  const recheck = postgresUrl ? { STOREMAP_KEYS_RECHECK_MS: '0' } : {};
  // Idle keep-alive connections are kept for the server's life (a test that is about them sets
  // its own): fetch keeps a connection about as long as the server's 5 s default, by a
  // timer of its own in this same process, so a test that waited that long between two
  // requests (its own work queued behind other tests' renders on a loaded machine) could send
  // the second on a connection the server was closing, and fail with "fetch failed" (seen once
  // in CI, map-features › legend). Stopping the server closes them.
  const keepAlive = { STOREMAP_KEEP_ALIVE_TIMEOUT_MS: '600000' };
  const config = loadConfig({ ...process.env, ...UNTHROTTLED, ...recheck, ...keepAlive, STOREMAP_DATA_DIR: testDataDir(), STOREMAP_DB: dbPath, PORT: '0', ...opts.env });
  const ledger = postgresUrl ? await freshPostgres(t, postgresUrl, config) : undefined;
  const db = ledger ? undefined : openDatabase(dbPath);
  const store = new StoreHolder(testStore());
  // Off only to test a server that cannot draw (the status endpoint's degraded case).
  const renderer = opts.renderer === false ? undefined : loadRenderer(path.join(testDataDir(), 'reference'), config.basemap, config.mapCellBytes);
  const subdivisions = Subdivisions.fromCsv(path.join(testDataDir(), 'reference', 'subdivisions.csv'));
  const server = createServer({ config, store, db, ledger: ledger?.ledger, renderer, subdivisions, now: opts.now, log: opts.log ?? (() => {}) });
  const base = await listen(server, '127.0.0.1', 0);
  let stopped: Promise<void> | undefined;
  const stop = () => (stopped ??= closeServer(server));
  t.teardown(async () => {
    await stop();
    db?.close();
  });
  const ops: LedgerOps = ledger?.ledger ?? new SqliteLedger(db!);
  const query = async <T,>(sql: string, params: unknown[] = []): Promise<T[]> => {
    if (db) {
      const stmt = db.prepare(sql);
      if (!stmt.reader) {
        stmt.run(...params);
        return [];
      }
      return stmt.all(...params) as T[];
    }
    let i = 0;
    return (await ledger!.pool.query(sql.replace(/\?/g, () => `$${++i}`), params)).rows as T[];
  };
  return {
    base,
    config,
    // In the PostgreSQL pass, any use of it says which test does not belong there.
    db: db ?? (new Proxy({}, { get: () => { throw new Error('this test reads SQLite itself: it has no place in the PostgreSQL pass'); } }) as DB),
    dbPath,
    ledger: ops,
    postgresUrl: ledger?.url,
    query,
    keys: new KeyStore(ops, opts.now),
    store,
    stop,
  };
}

/** A new, migrated database on the test PostgreSQL server, dropped when the test ends. */
async function freshPostgres(t: ExecutionContext, url: string, config: Config): Promise<{ ledger: PgLedger; pool: pg.Pool; url: string }> {
  const name = `t_${randomBytes(8).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const target = new URL(url);
  target.pathname = `/${name}`;
  const pool = await openPostgres(target.toString(), { poolSize: 10 });
  // Registered before the server's teardown, so it runs after it (ava runs them last first).
  t.teardown(async () => {
    await pool.end();
    const drop = new pg.Client({ connectionString: url });
    await drop.connect();
    await drop.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).finally(() => drop.end());
  });
  return { ledger: new PgLedger(pool, pgLedgerOptions(config)), pool, url: target.toString() };
}
