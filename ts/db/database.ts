// SQLite through better-sqlite3: WAL so readers never block the writer, a short busy timeout
// plus retries off the event loop so two server processes sharing one file wait for each other
// without freezing either, and numbered migrations applied at start.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';
import { isBusy } from './faults.ts';
import { DAY_MS } from '../time.ts';
import { BUSY_DEADLINE_MS, WriteCancelled } from './ledger.ts';

export type DB = BetterSqlite3.Database;

/** Append-only: a released migration is never edited, only followed by a new one. */
export const MIGRATIONS: { version: number; sql: string }[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE api_keys (
        id          TEXT PRIMARY KEY,
        key_hash    BLOB NOT NULL UNIQUE,
        prefix      TEXT NOT NULL,
        name        TEXT,
        plan        TEXT NOT NULL CHECK (plan IN ('trial', 'standard', 'enterprise', 'internal')),
        credits     INTEGER NOT NULL CHECK (credits >= 0),
        created_at  INTEGER NOT NULL,
        expires_at  INTEGER,
        revoked_at  INTEGER
      );
      CREATE TABLE usage (
        id        INTEGER PRIMARY KEY,
        key_id    TEXT NOT NULL REFERENCES api_keys(id),
        at        INTEGER NOT NULL,
        endpoint  TEXT NOT NULL,
        status    INTEGER,
        format    TEXT,
        credits   INTEGER NOT NULL DEFAULT 0
      );
      CREATE INDEX usage_by_key_time ON usage(key_id, at);
    `,
  },
  {
    // Written by `storemap data refresh`: one row per brand with its count at that refresh.
    // The status endpoint reports the newest stamp (null until the first refresh after this
    // migration).
    version: 2,
    sql: `
      CREATE TABLE brand_summary (
        brand            TEXT PRIMARY KEY,
        ticker           TEXT,
        location_count   INTEGER NOT NULL,
        snapshot_version TEXT NOT NULL,
        refreshed_at     INTEGER NOT NULL
      );
    `,
  },
  {
    // Usage rolled up by key, UTC day, status and format, kept by a trigger so every writer
    // (the service, a second process, an operator's script) keeps it right. A year's report
    // reads a few thousand rollup rows instead of grouping every request. A missing status is
    // stored as -1 and a missing format as '' (NULLs never collide in a primary key).
    version: 3,
    sql: `
      CREATE TABLE usage_daily (
        key_id   TEXT NOT NULL,
        day      INTEGER NOT NULL,
        status   INTEGER NOT NULL,
        format   TEXT NOT NULL,
        requests INTEGER NOT NULL,
        credits  INTEGER NOT NULL,
        PRIMARY KEY (key_id, day, status, format)
      ) WITHOUT ROWID;
      INSERT INTO usage_daily
        SELECT key_id, at / ${DAY_MS}, COALESCE(status, -1), COALESCE(format, ''), COUNT(*), SUM(credits)
          FROM usage GROUP BY 1, 2, 3, 4;
      CREATE TRIGGER usage_rollup AFTER INSERT ON usage BEGIN
        INSERT INTO usage_daily (key_id, day, status, format, requests, credits)
          VALUES (NEW.key_id, NEW.at / ${DAY_MS}, COALESCE(NEW.status, -1), COALESCE(NEW.format, ''), 1, NEW.credits)
          ON CONFLICT (key_id, day, status, format)
          DO UPDATE SET requests = requests + 1, credits = credits + excluded.credits;
      END;
    `,
  },
  {
    // One usage row may stand for several requests: refused ones (429) are counted in memory
    // and written as one row per key each second, so a flood of them costs the ledger almost
    // nothing. The rollup adds the row's count.
    version: 4,
    sql: `
      ALTER TABLE usage ADD COLUMN requests INTEGER NOT NULL DEFAULT 1 CHECK (requests >= 1);
      DROP TRIGGER usage_rollup;
      CREATE TRIGGER usage_rollup AFTER INSERT ON usage BEGIN
        INSERT INTO usage_daily (key_id, day, status, format, requests, credits)
          VALUES (NEW.key_id, NEW.at / ${DAY_MS}, COALESCE(NEW.status, -1), COALESCE(NEW.format, ''), NEW.requests, NEW.credits)
          ON CONFLICT (key_id, day, status, format)
          DO UPDATE SET requests = requests + excluded.requests, credits = credits + excluded.credits;
      END;
    `,
  },
];

/**
 * better-sqlite3 in the build that fits the running Node. On Node 22 and later, release 13: a
 * Node-API prebuild that needs no compiler, and the one that survives Node 24, where release
 * 12's Statement destructor trips a CHECK in node::RemoveEnvironmentCleanupHook and aborts
 * the process during garbage collection (Node 24 changed node::ObjectWrap; 13 moved off it).
 * On Node 20, which release 13's prebuild does not support (it segfaults), release 12, built
 * for that Node by `npm install`. The two have one API.
 */
const Database: typeof BetterSqlite3 = createRequire(import.meta.url)(
  Number(process.versions.node.split('.')[0]) >= 22 ? 'better-sqlite3-napi' : 'better-sqlite3',
);

/**
 * How long one statement may wait for another process's write lock, synchronously: better-
 * sqlite3 blocks the event loop for that long, so it is kept short and the wait goes on in
 * `retryBusy`, between which other requests run.
 */
export const BUSY_WAIT_MS = 20;


/**
 * Runs `write` (one transaction) until it gets the lock, yielding to the event loop between
 * tries; past `BUSY_DEADLINE_MS` the busy error is thrown for the caller to answer 503. Before
 * each try `cancelled` is asked: a request answered meanwhile (a timeout) writes nothing.
 */
export async function retryBusy<T>(write: () => T, now: () => number = Date.now, cancelled: () => boolean = () => false, deadlineMs = BUSY_DEADLINE_MS): Promise<T> {
  const end = now() + deadlineMs;
  for (let pause = 5; ; pause = Math.min(pause * 2, 50)) {
    if (cancelled()) throw new WriteCancelled('the request was answered while it waited for the ledger');
    try {
      return write();
    } catch (e) {
      if (!isBusy(e) || now() >= end) throw e;
    }
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}

/** Opens a database file with the same build, without the service's settings (for tests). */
export function openRaw(file: string, options?: BetterSqlite3.Options): DB {
  return new Database(file, options);
}

export function openDatabase(file: string): DB {
  mkdirSync(path.dirname(file), { recursive: true });
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma(`busy_timeout = ${BUSY_WAIT_MS}`);
  db.pragma('foreign_keys = ON');
  migrate(db);
  return db;
}

function migrate(db: DB): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)');
  for (const m of MIGRATIONS) {
    // IMMEDIATE takes the write lock first, so two processes starting together apply each
    // migration once.
    db.transaction(() => {
      if (db.prepare('SELECT 1 FROM schema_migrations WHERE version = ?').get(m.version)) return;
      db.exec(m.sql);
      db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(m.version, Date.now());
    }).immediate();
  }
}
