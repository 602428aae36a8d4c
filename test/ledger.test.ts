// The ledger's operations, the same cases on both stores: SQLite (one file, several
// connections standing in for several processes) and PostgreSQL (a throwaway cluster on
// 127.0.0.1, several pools standing in for several nodes). Exact admission when they race on
// one key, never a negative balance, one usage row per charge, the rules for revoked,
// unlimited and unknown keys, batched refusals, pruning. Expected values are counted from what
// the test sent.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import pg from 'pg';
import { openDatabase } from '../ts/db/database.ts';
import { planCharge, type LedgerOps, type UsageGroup } from '../ts/db/ledger.ts';
import { DAY_MS } from '../ts/time.ts';
import { PgLedger, type PgLedgerOptions } from '../ts/db/pg-ledger.ts';
import { openPostgres } from '../ts/db/postgres.ts';
import { SqliteLedger } from '../ts/db/sqlite-ledger.ts';
import { KeyStore } from '../ts/services/keys.ts';
import { startPostgres } from './helpers/postgres.ts';

const ENTRY = { endpoint: '/api/v1/location-map', status: 200, format: 'png' };

interface Store {
  /** One ledger per node, all on the same data. */
  ledgers: LedgerOps[];
  addKey(id: string, credits: number, revoked?: boolean): Promise<void>;
  /** Per status: rows, credits and requests of a key's usage, read straight from the table. */
  usage(keyId: string): Promise<{ status: number; rows: number; credits: number; requests: number }[]>;
  rowCount(): Promise<number>;
  /** brand_summary's rows, by brand. */
  stamps(): Promise<{ brand: string; ticker: string | null; location_count: number; snapshot_version: string }[]>;
}

const USAGE_SQL = 'SELECT status, count(*) AS n, sum(credits) AS credits, sum(requests) AS requests FROM usage WHERE key_id = $1 GROUP BY status ORDER BY status';
const ADD_KEY = "INSERT INTO api_keys (id, key_hash, prefix, plan, credits, created_at, revoked_at) VALUES ($1, $2, 'sm_live_0000', 'standard', $3, 0, $4)";
const STAMPS_SQL = 'SELECT brand, ticker, location_count, snapshot_version FROM brand_summary ORDER BY brand';
type UsageRow = { status: number; n: number | string; credits: number | string; requests: number | string };
const usageOf = (rows: UsageRow[]) => rows.map((r) => ({ status: r.status, rows: Number(r.n), credits: Number(r.credits), requests: Number(r.requests) }));

/** A ledger on PostgreSQL per node, each with these options. */
function postgresStore(opts: PgLedgerOptions = {}) {
  return async (t: ExecutionContext, nodes: number): Promise<Store> => {
    const server = await startPostgres(t);
    const pools: pg.Pool[] = [];
    for (let i = 0; i < nodes; i++) pools.push(await openPostgres(server.url, { poolSize: 10 }));
    t.teardown(() => Promise.all(pools.map((p) => p.end())).then(() => undefined));
    return {
      ledgers: pools.map((p) => new PgLedger(p, opts)),
      async addKey(id, credits, revoked) {
        await pools[0].query(ADD_KEY, [id, Buffer.from(id), credits, revoked ? 1 : null]);
      },
      async usage(keyId) {
        return usageOf((await pools[0].query<UsageRow>(USAGE_SQL, [keyId])).rows);
      },
      async rowCount() {
        return Number((await pools[0].query<{ n: string }>('SELECT count(*) AS n FROM usage')).rows[0].n);
      },
      async stamps() {
        return (await pools[0].query(STAMPS_SQL)).rows;
      },
    };
  };
}

const STORES: Record<string, (t: ExecutionContext, nodes: number) => Promise<Store>> = {
  async sqlite(t, nodes) {
    const dir = await mkdtemp(path.join(tmpdir(), 'storemap-ledger-'));
    const file = path.join(dir, 'ledger.db');
    const dbs = Array.from({ length: nodes }, () => openDatabase(file));
    t.teardown(async () => {
      for (const db of dbs) db.close();
      await rm(dir, { recursive: true, force: true });
    });
    const sqlite = (sql: string) => sql.replace(/\$\d+/g, '?');
    return {
      ledgers: dbs.map((db) => new SqliteLedger(db)),
      async addKey(id, credits, revoked) {
        dbs[0].prepare(sqlite(ADD_KEY)).run(id, Buffer.from(id), credits, revoked ? 1 : null);
      },
      async usage(keyId) {
        return usageOf(dbs[0].prepare<[string], UsageRow>(sqlite(USAGE_SQL)).all(keyId));
      },
      async rowCount() {
        return (dbs[0].prepare('SELECT count(*) AS n FROM usage').get() as { n: number }).n;
      },
      async stamps() {
        return dbs[0].prepare(STAMPS_SQL).all() as Awaited<ReturnType<Store['stamps']>>;
      },
    };
  },
  postgres: postgresStore(),
  // Every case again with each node holding its batches back for more (STOREMAP_LEDGER_LINGER_MS):
  // what lingering changes is when a charge is written, never what it decides.
  'postgres, lingering': postgresStore({ lingerMs: 20 }),
};

for (const [kind, open] of Object.entries(STORES)) {
  test(`${kind}: three nodes racing 180 one-credit charges on a key with 100 credits: exactly 100 admitted, balance 0, one usage row each`, async (t) => {
    const s = await open(t, 3);
    await s.addKey('key_race', 100);
    const attempts = s.ledgers.flatMap((l) => Array.from({ length: 60 }, (_, i) => l.charge({ keyId: 'key_race', cost: 1, unlimited: false, entry: ENTRY, at: 1_000 + i })));
    const results = await Promise.all(attempts);
    t.is(results.filter((r) => r.ok).length, 100);
    t.is(await s.ledgers[1].balance('key_race'), 0);
    // Each admitted charge saw the balance the one before it left: 99, 98, ... 0, each once.
    const remaining = results.flatMap((r) => (r.ok ? [r.remaining] : [])).sort((a, b) => a - b);
    t.deepEqual(remaining, Array.from({ length: 100 }, (_, i) => i));
    t.deepEqual(await s.usage('key_race'), [
      { status: 200, rows: 100, credits: 100, requests: 100 },
      { status: 402, rows: 80, credits: 0, requests: 80 },
    ]);
  });

  test(`${kind}: a cost above the balance takes nothing; the balance never goes below zero`, async (t) => {
    const s = await open(t, 2);
    await s.addKey('key_three', 10);
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => s.ledgers[i % 2].charge({ keyId: 'key_three', cost: 3, unlimited: false, entry: ENTRY, at: i })));
    t.is(results.filter((r) => r.ok).length, 3, '3 x 3 credits fit in 10');
    t.is(await s.ledgers[0].balance('key_three'), 1);
    for (const r of results.filter((x) => !x.ok)) t.deepEqual(r, { ok: false, balance: 1 });
    t.deepEqual(await s.usage('key_three'), [
      { status: 200, rows: 3, credits: 9, requests: 3 },
      { status: 402, rows: 5, credits: 0, requests: 5 },
    ]);
  });

  // PostgreSQL decides a charge inside one SQL statement, SQLite through planCharge itself: every
  // branch of the rule, on every store, must do what planCharge says.
  test(`${kind}: every branch of the charge rule (balance, cost, revoked, unlimited, unknown key) does what planCharge says`, async (t) => {
    const s = await open(t, 1);
    const [l] = s.ledgers;
    let n = 0;
    for (const credits of [0, 1, 2, 5]) {
      for (const cost of [1, 2, 3]) {
        for (const revoked of [false, true]) {
          for (const unlimited of [false, true]) {
            const keyId = `key_grid_${n++}`;
            await s.addKey(keyId, credits, revoked);
            const req = { keyId, cost, unlimited, entry: { ...ENTRY, status: 206 }, at: n };
            const plan = planCharge({ credits, revoked }, req);
            const what = JSON.stringify({ credits, cost, revoked, unlimited });
            t.deepEqual(await l.charge(req), plan.result, what);
            t.is(await l.balance(keyId), credits - plan.debit, what);
            t.deepEqual(await s.usage(keyId), [{ status: plan.usage!.status!, rows: 1, credits: plan.usage!.credits, requests: 1 }], what);
          }
        }
      }
    }
    const unknown = { keyId: 'key_grid_nobody', cost: 1, unlimited: false, entry: ENTRY, at: 0 };
    t.deepEqual(await l.charge(unknown), planCharge(null, unknown).result);
    t.deepEqual(await s.usage('key_grid_nobody'), []);
  });

  test(`${kind}: a revoked key pays nothing and is recorded as 401; an unlimited key is charged 0; an unknown key writes no row`, async (t) => {
    const s = await open(t, 1);
    await s.addKey('key_revoked', 50, true);
    await s.addKey('key_internal', 7);
    const [l] = s.ledgers;
    t.deepEqual(await l.charge({ keyId: 'key_revoked', cost: 2, unlimited: false, entry: ENTRY, at: 5 }), { ok: false, balance: 50, revoked: true });
    t.is(await l.balance('key_revoked'), 50);
    t.deepEqual(await s.usage('key_revoked'), [{ status: 401, rows: 1, credits: 0, requests: 1 }]);
    t.deepEqual(await l.charge({ keyId: 'key_internal', cost: 8, unlimited: true, entry: ENTRY, at: 6 }), { ok: true, charged: 0, remaining: 7 });
    t.is(await l.balance('key_internal'), 7);
    t.deepEqual(await s.usage('key_internal'), [{ status: 200, rows: 1, credits: 0, requests: 1 }]);
    t.deepEqual(await l.charge({ keyId: 'key_nobody', cost: 1, unlimited: false, entry: ENTRY, at: 7 }), { ok: false, balance: 0, revoked: true });
    t.deepEqual(await s.usage('key_nobody'), []);
  });

  test(`${kind}: a charge whose request was answered meanwhile writes nothing`, async (t) => {
    const s = await open(t, 1);
    await s.addKey('key_gone', 5);
    await t.throwsAsync(s.ledgers[0].charge({ keyId: 'key_gone', cost: 1, unlimited: false, entry: ENTRY, at: 1 }, () => true), { message: /answered/ });
    t.is(await s.ledgers[0].balance('key_gone'), 5);
    t.deepEqual(await s.usage('key_gone'), []);
  });

  // On PostgreSQL charges that arrive together go to the database together (group commit): the
  // ones whose requests were answered meanwhile must drop out of the batch, and every other one
  // must see the balance the one before it left.
  test(`${kind}: forty balances asked at once come back each for its own key; an unknown key reads 0`, async (t) => {
    const s = await open(t, 1);
    const credits: Record<string, number> = { key_b1: 5, key_b2: 7, key_b3: 0 };
    for (const [id, n] of Object.entries(credits)) await s.addKey(id, n);
    const ids = Array.from({ length: 40 }, (_, i) => ['key_b1', 'key_b2', 'key_none', 'key_b3', 'key_b2'][i % 5]);
    t.deepEqual(await Promise.all(ids.map((id) => s.ledgers[0].balance(id))), ids.map((id) => credits[id] ?? 0));
  });

  test(`${kind}: forty charges sent at once, every third answered meanwhile: those write nothing, the rest are charged exactly`, async (t) => {
    const s = await open(t, 1);
    await s.addKey('key_many', 18);
    await s.addKey('key_side', 3);
    const sent = Array.from({ length: 40 }, (_, i) => {
      const keyId = i % 5 === 4 ? 'key_side' : 'key_many';
      return s.ledgers[0].charge({ keyId, cost: 1, unlimited: false, entry: ENTRY, at: i }, () => i % 3 === 0).then(
        (r) => ({ i, keyId, r }),
        (e: Error) => ({ i, keyId, e: e.message }),
      );
    });
    const out = await Promise.all(sent);
    for (const o of out) {
      if (o.i % 3 === 0) t.regex('e' in o ? o.e : 'charged', /answered/, `charge ${o.i}`);
      else t.false('e' in o, `charge ${o.i}`);
    }
    const results = (key: string) => out.flatMap((o) => (o.keyId === key && 'r' in o ? [o.r] : []));
    const paid = (key: string) => results(key).flatMap((r) => (r.ok ? [r.remaining] : [])).sort((a, b) => b - a);
    // key_many: 21 charges not cancelled on 18 credits: 18 paid, each seeing one credit fewer, 3 refused.
    t.is(results('key_many').length, 21);
    t.deepEqual(paid('key_many'), Array.from({ length: 18 }, (_, k) => 17 - k));
    t.is(await s.ledgers[0].balance('key_many'), 0);
    // key_side: 5 not cancelled on 3 credits.
    t.deepEqual(paid('key_side'), [2, 1, 0]);
    t.is(results('key_side').length, 5);
    t.deepEqual(await s.usage('key_many'), [
      { status: 200, rows: 18, credits: 18, requests: 18 },
      { status: 402, rows: 3, credits: 0, requests: 3 },
    ]);
    t.deepEqual(await s.usage('key_side'), [
      { status: 200, rows: 3, credits: 3, requests: 3 },
      { status: 402, rows: 2, credits: 0, requests: 2 },
    ]);
  });

  test(`${kind}: refusals are written as rows standing for their count, in one write; pruning deletes only rows before the cut, in batches`, async (t) => {
    const s = await open(t, 1);
    await s.addKey('key_busy', 5);
    await s.addKey('key_other', 5);
    const refused = { endpoint: '/api/v1/location-map', status: 429, format: 'json' };
    await s.ledgers[0].recordMany([
      { keyId: 'key_busy', entry: refused, at: 10, n: 37 },
      { keyId: 'key_other', entry: refused, at: 10, n: 2 },
    ]);
    await s.ledgers[0].record('key_busy', { endpoint: '/api/v1/location-map', status: 404, format: 'json' }, 11);
    t.is(await s.ledgers[0].balance('key_busy'), 5);
    t.deepEqual(await s.usage('key_busy'), [
      { status: 404, rows: 1, credits: 0, requests: 1 },
      { status: 429, rows: 1, credits: 0, requests: 37 },
    ]);
    for (let i = 0; i < 7; i++) await s.ledgers[0].record('key_other', refused, 100 + i);
    // Rows at 10, 10, 11 and 100..106: those before 104 go, at most 3 at a time.
    t.is(await s.ledgers[0].pruneUsage(104, 3), 3);
    t.is(await s.ledgers[0].pruneUsage(104, 3), 3);
    t.is(await s.ledgers[0].pruneUsage(104, 3), 1);
    t.is(await s.ledgers[0].pruneUsage(104, 3), 0);
    t.is(await s.rowCount(), 3);
  });

  test(`${kind}: usage read back by day, status and format: raw rows for part of a window, the rollup for whole days, both equal to what was written`, async (t) => {
    const s = await open(t, 1);
    await s.addKey('key_days', 100);
    await s.addKey('key_else', 100);
    const [l] = s.ledgers;
    const day0 = 20_400;
    // at (ms), status, format, credits taken (a charge) or none (a record), requests.
    const writes: { at: number; status: number | null; format: string | null; cost: number; n: number }[] = [
      { at: day0 * DAY_MS + 1_000, status: 200, format: 'json', cost: 2, n: 1 },
      { at: day0 * DAY_MS + 2_000, status: 200, format: 'json', cost: 1, n: 1 },
      { at: day0 * DAY_MS + 3_000, status: 404, format: 'png', cost: 0, n: 1 },
      { at: (day0 + 1) * DAY_MS + 5, status: 429, format: 'json', cost: 0, n: 12 },
      { at: (day0 + 1) * DAY_MS + 6, status: null, format: null, cost: 0, n: 1 },
      { at: (day0 + 2) * DAY_MS - 1, status: 200, format: 'csv', cost: 8, n: 1 },
    ];
    for (const w of writes) {
      const entry = { endpoint: '/api/v1/location-map', status: w.status, format: w.format };
      if (w.cost > 0) t.true((await l.charge({ keyId: 'key_days', cost: w.cost, unlimited: false, entry, at: w.at })).ok);
      else await l.record('key_days', entry, w.at, w.n);
    }
    await l.record('key_else', ENTRY, day0 * DAY_MS + 7);
    const expect = (keep: (w: (typeof writes)[number]) => boolean): UsageGroup[] => {
      const m = new Map<string, UsageGroup>();
      for (const w of writes.filter(keep)) {
        const g = { day: Math.floor(w.at / DAY_MS), status: w.status, format: w.format, n: 0, credits: 0 };
        const k = JSON.stringify([g.day, g.status, g.format]);
        const e = m.get(k) ?? g;
        e.n += w.n;
        e.credits += w.cost;
        m.set(k, e);
      }
      return sorted([...m.values()]);
    };
    const sorted = (gs: UsageGroup[]) => [...gs].sort((a, b) => JSON.stringify([a.day, a.status, a.format]).localeCompare(JSON.stringify([b.day, b.status, b.format])));
    t.deepEqual(sorted(await l.dailyUsage('key_days', day0, day0 + 1)), expect((w) => w.at < (day0 + 2) * DAY_MS));
    t.deepEqual(sorted(await l.dailyUsage('key_days', day0 + 1, day0 + 1)), expect((w) => Math.floor(w.at / DAY_MS) === day0 + 1));
    const from = day0 * DAY_MS + 1_500;
    const to = (day0 + 1) * DAY_MS + 6;
    t.deepEqual(sorted(await l.rawUsage('key_days', from, to)), expect((w) => w.at >= from && w.at < to), '[from, to): the row at `to` is not in it');
    t.deepEqual(await l.rawUsage('key_days', 0, day0 * DAY_MS), []);
  });

  test(`${kind}: a refresh's brand stamps replace the last refresh's; the newest stamp time is read back`, async (t) => {
    const s = await open(t, 1);
    const [l] = s.ledgers;
    t.is(await l.brandSummaryStampedAt(), null, 'null before the first refresh');
    await l.stampBrandSummary(
      [
        { brand: "McDonald's", ticker: 'MCD', locationCount: 900 },
        { brand: 'Żabka', ticker: null, locationCount: 31 },
      ],
      'v1',
      1_000,
    );
    t.is(await l.brandSummaryStampedAt(), 1_000);
    const many = Array.from({ length: 2_500 }, (_, i) => ({ brand: `Brand ${String(i).padStart(4, '0')}`, ticker: null, locationCount: i + 1 }));
    await l.stampBrandSummary(many, 'v2', 2_000);
    t.is(await l.brandSummaryStampedAt(), 2_000);
    const rows = await s.stamps();
    t.is(rows.length, 2_500, 'the brands of the last refresh only');
    t.deepEqual(rows[0], { brand: 'Brand 0000', ticker: null, location_count: 1, snapshot_version: 'v2' });
    t.deepEqual(rows[2_499], { brand: 'Brand 2499', ticker: null, location_count: 2_500, snapshot_version: 'v2' });
  });

  test(`${kind}: keys: added, found by hash and id, listed oldest first, revoked once, topped up; every such change moves the keys version other nodes see`, async (t) => {
    const s = await open(t, 2);
    const [a, b] = s.ledgers;
    const row = (id: string, createdAt: number) => ({
      id,
      keyHash: Buffer.from(`hash of ${id}`),
      prefix: 'sm_live_abcd',
      name: id === 'key_one' ? 'first' : null,
      plan: 'enterprise',
      credits: 40,
      createdAt,
      expiresAt: id === 'key_one' ? createdAt + 5 : null,
      revokedAt: null,
    });
    const v0 = await b.keysVersion();
    await a.insertKey(row('key_two', 2_000));
    const v1 = await b.keysVersion();
    t.not(v1, v0, 'a key added on node A moves the version node B reads');
    await a.insertKey(row('key_one', 1_000));
    t.deepEqual(await b.keyByHash(Buffer.from('hash of key_one')), row('key_one', 1_000));
    t.deepEqual(await b.keyById('key_two'), row('key_two', 2_000));
    t.is(await b.keyById('key_none'), null);
    t.is(await b.keyByHash(Buffer.from('no such hash')), null);
    t.deepEqual(
      (await b.listKeys()).map((k) => k.id),
      ['key_one', 'key_two'],
    );
    const v2 = await b.keysVersion();
    t.true(await a.revokeKey('key_one', 3_000));
    t.false(await a.revokeKey('key_one', 4_000), 'revoked once');
    t.false(await a.revokeKey('key_none', 4_000));
    t.is((await b.keyById('key_one'))?.revokedAt, 3_000);
    const v3 = await b.keysVersion();
    t.not(v3, v2, 'a revocation moves it');
    t.true(await a.topUpKey('key_two', 60));
    t.false(await a.topUpKey('key_none', 60));
    const revoked = (await b.keyById('key_one'))?.credits;
    t.false(await a.topUpKey('key_one', 60), 'a revoked key is not topped up');
    t.is((await b.keyById('key_one'))?.credits, revoked);
    t.is(await b.balance('key_two'), 100);
    t.not(await b.keysVersion(), v3, 'a top-up moves it');
  });
}

test("sqlite: the charges of one event-loop turn wait together for another process's write lock, then commit in arrival order; one that fails inside the batch fails alone", async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'storemap-ledger-'));
  const file = path.join(dir, 'ledger.db');
  const db = openDatabase(file);
  const other = openDatabase(file);
  t.teardown(async () => {
    db.close();
    other.close();
    await rm(dir, { recursive: true, force: true });
  });
  db.prepare("INSERT INTO api_keys (id, key_hash, prefix, plan, credits, created_at, revoked_at) VALUES (?, ?, 'sm_live_0000', 'standard', ?, 0, NULL)").run('key_a', Buffer.from('key_a'), 10);
  // A frozen clock: the batch waits for the lock for as long as the test holds it.
  const ledger = new SqliteLedger(db, () => 0);
  // The gate: another connection (another process, in production) holds the write lock.
  other.exec('BEGIN IMMEDIATE');
  // The third charge's usage row cannot be written (its format is not a value SQLite binds):
  // its debit is undone and the other three are charged.
  const formats: unknown[] = ['json', 'png', { not: 'bindable' }, 'csv'];
  const costs = [1, 2, 3, 1];
  const sent = costs.map((cost, i) =>
    ledger.charge({ keyId: 'key_a', cost, unlimited: false, entry: { ...ENTRY, format: formats[i] as string }, at: i }).then(
      (r) => (r.ok ? { remaining: r.remaining } : { refused: true }),
      (e: Error) => ({ failed: e instanceof Error }),
    ),
  );
  // The batch was scheduled before this turn's own immediate: by now it has tried once and
  // found the lock held.
  await new Promise((resolve) => setImmediate(resolve));
  t.is((other.prepare('SELECT count(*) AS n FROM usage').get() as { n: number }).n, 0, 'nothing written while the lock is held');
  other.exec('COMMIT');
  t.deepEqual(await Promise.all(sent), [{ remaining: 9 }, { remaining: 7 }, { failed: true }, { remaining: 6 }]);
  t.is(await ledger.balance('key_a'), 6);
  t.deepEqual(
    db.prepare('SELECT at, format, credits FROM usage ORDER BY at').all(),
    [
      { at: 0, format: 'json', credits: 1 },
      { at: 1, format: 'png', credits: 2 },
      { at: 3, format: 'csv', credits: 1 },
    ],
  );
});

test('postgres: a node reads the keys version at most once per recheck window; a key revoked on another node is refused after it, and at its next charge at once', async (t) => {
  const server = await startPostgres(t);
  const pools = [await openPostgres(server.url, { poolSize: 2 }), await openPostgres(server.url, { poolSize: 2 })];
  t.teardown(() => Promise.all(pools.map((p) => p.end())).then(() => undefined));
  const [a, b] = pools.map((p) => new PgLedger(p));
  let versionReads = 0;
  const counted: LedgerOps = Object.assign(Object.create(b) as PgLedger, {
    keysVersion: () => {
      versionReads++;
      return b.keysVersion();
    },
  });
  let clock = 1_000_000;
  const nodeA = new KeyStore(a, () => clock);
  const nodeB = new KeyStore(counted, () => clock, 1_000);
  const { key, record } = await nodeA.create({ plan: 'enterprise', credits: 10 });
  for (let i = 0; i < 100; i++) t.is((await nodeB.authenticate(key))?.id, record.id);
  t.is(versionReads, 1, 'one version read for 100 authentications within the window');

  t.true(await nodeA.revoke(record.id));
  clock += 999;
  t.is((await nodeB.authenticate(key))?.id, record.id, 'still trusted within the window');
  const charge = await b.charge({ keyId: record.id, cost: 1, unlimited: false, entry: { endpoint: 'location-map', status: 200, format: 'json' }, at: clock });
  t.deepEqual(charge, { ok: false, balance: 10, revoked: true }, 'but its charge reads the key again and refuses it');
  clock += 1;
  t.is(await nodeB.authenticate(key), null, 'refused once the window is over');
  t.is(versionReads, 2);
});

test("postgres: a node answers a key's balance from its last charge within the recheck window, sees its own top-up at once and another node's after the window, and a charge still refuses what the balance cannot pay", async (t) => {
  const server = await startPostgres(t);
  const pools = [await openPostgres(server.url, { poolSize: 2 }), await openPostgres(server.url, { poolSize: 2 })];
  t.teardown(() => Promise.all(pools.map((p) => p.end())).then(() => undefined));
  let clock = 1_000_000;
  const a = new PgLedger(pools[0], { balanceTtlMs: 1_000, now: () => clock });
  const b = new PgLedger(pools[1]);
  const { record } = await new KeyStore(b).create({ plan: 'enterprise', credits: 10 });
  const one = (at: number) => ({ keyId: record.id, cost: 1, unlimited: false, entry: { endpoint: 'location-map', status: 200, format: 'json' }, at });

  t.like(await a.charge(one(clock)), { ok: true, remaining: 9 });
  // B spends 5 meanwhile: A's balance is as its charge left it until the window is over.
  for (let i = 0; i < 5; i++) t.like(await b.charge(one(clock)), { ok: true });
  t.is(await a.balance(record.id), 9, 'kept');
  t.is(await b.balance(record.id), 4, 'read');
  clock += 1_000;
  t.is(await a.balance(record.id), 4, 'read again once the window is over');

  // A top-up on B reaches A after the window; one on A at once.
  t.true(await b.topUpKey(record.id, 10));
  t.is(await a.balance(record.id), 4, 'not yet');
  clock += 1_000;
  t.is(await a.balance(record.id), 14);
  t.true(await a.topUpKey(record.id, 1));
  t.is(await a.balance(record.id), 15, 'its own top-up at once');

  // A kept balance never lets a charge take more than the key holds.
  t.like(await a.charge(one(clock)), { ok: true, remaining: 14 });
  for (let i = 0; i < 14; i++) t.like(await b.charge(one(clock)), { ok: true });
  t.is(await a.balance(record.id), 14, 'kept, and high: B spent it all');
  t.like(await a.charge(one(clock)), { ok: false, balance: 0 });
  t.is(await a.balance(record.id), 0, 'a refusal is not kept: read afresh');
});
