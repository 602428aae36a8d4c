// SQLite through better-sqlite3: WAL so readers never block the writer, a busy timeout so two
// server processes sharing one file wait for each other instead of failing, and numbered
// migrations applied at start.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';

export type DB = Database.Database;

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
];

export function openDatabase(file: string): DB {
  mkdirSync(path.dirname(file), { recursive: true });
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 15000');
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
