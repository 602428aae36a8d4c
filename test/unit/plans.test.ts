// The one list of plans (ts/api/plans.ts) against the ledgers' schemas, whose migrations are
// append-only and so spell the names out: a real SQLite file migrated as the server does must
// take a key of every plan and refuse any other name; PostgreSQL's migration must check the
// same names.
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PLAN_RULES, PLANS } from '../../ts/api/plans.ts';
import { openDatabase } from '../../ts/db/database.ts';
import { PG_MIGRATIONS } from '../../ts/db/postgres.ts';

test('every plan has its rules, and a SQLite ledger takes a key of each plan and refuses another name', (t) => {
  t.deepEqual(Object.keys(PLAN_RULES).sort(), [...PLANS].sort());
  const dir = mkdtempSync(path.join(tmpdir(), 'storemap-plans-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const db = openDatabase(path.join(dir, 'ledger.db'));
  t.teardown(() => db.close());
  const insert = db.prepare('INSERT INTO api_keys (id, key_hash, prefix, plan, credits, created_at) VALUES (?, ?, ?, ?, 0, 0)');
  PLANS.forEach((plan, i) => t.notThrows(() => insert.run(`k${i}`, Buffer.from([i]), 'sm_live_', plan), plan));
  // better-sqlite3's errors are not Errors of this realm: read the code.
  let code: unknown;
  try {
    insert.run('kx', Buffer.from([99]), 'sm_live_', 'platinum');
  } catch (e) {
    code = (e as { code?: unknown }).code;
  }
  t.is(code, 'SQLITE_CONSTRAINT_CHECK');
});

test("PostgreSQL's schema checks the same plan names", (t) => {
  const check = PG_MIGRATIONS.map((m) => /plan\s+TEXT NOT NULL CHECK \(plan IN \(([^)]*)\)\)/.exec(m.sql)).find((m) => m !== null);
  t.truthy(check, 'a migration creates the plan column with its check');
  const names = check![1].split(',').map((s) => s.trim().replace(/^'|'$/g, ''));
  t.deepEqual(names.sort(), [...PLANS].sort());
});
