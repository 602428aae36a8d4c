// Credit leases on the PostgreSQL ledger (STOREMAP_CREDIT_LEASE): a node takes a block of a
// key's credits off the key's row and spends it with charges that lock only the lease's row.
// What must hold: the balance counts leased credits as the key's, every credit spent is on a
// usage row, a lease is given back when its node is done with it, and a node that stops (or
// dies) holding one keeps the credits from the others only until it expires, never lets more
// be spent than was put on the key, and cannot spend it after it was taken back.
import path from 'node:path';
import test from 'ava';
import type pg from 'pg';
import { openPostgres } from '../ts/db/postgres.ts';
import { PgLedger } from '../ts/db/pg-ledger.ts';
import type { ChargeRequest } from '../ts/db/ledger.ts';
import { KeyStore } from '../ts/services/keys.ts';
import { snapshotDir, startServe } from './helpers/child.ts';
import { oneCreditBrand } from './helpers/dataset.ts';
import { postMap } from './helpers/http.ts';
import { startPostgres } from './helpers/postgres.ts';

const ENTRY = { endpoint: 'location-map', status: 200, format: 'json' };
const charge = (keyId: string, at: number): ChargeRequest => ({ keyId, cost: 1, unlimited: false, entry: ENTRY, at });

/** Waits (bounded) until `holds()`: a lease is taken in the background after a charge shows
 * the key can hold one. */
async function until(holds: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 1_000; i++) {
    if (await holds()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`never: ${what}`);
}

interface Ledger {
  credits: number;
  leases: { held: number; spent: number }[];
  usage: { status: number; n: number; credits: number }[];
}

async function ledgerOf(pool: pg.Pool, keyId: string): Promise<Ledger> {
  // One statement, so the key's row and its leases are read as of one moment.
  const key = (
    await pool.query<{ credits: string; leases: number; held: { held: number; spent: number }[] | null }>(
      `SELECT a.credits, a.leases, (SELECT json_agg(json_build_object('held', l.held, 'spent', l.spent) ORDER BY l.id) FROM credit_leases l WHERE l.key_id = a.id) AS held
         FROM api_keys a WHERE a.id = $1`,
      [keyId],
    )
  ).rows[0];
  const credits = Number(key.credits);
  const leases = key.held ?? [];
  // The key's count of leases out is what a charge reads to skip the lease table.
  if (key.leases !== leases.length) throw new Error(`api_keys.leases says ${key.leases}, the key has ${leases.length} leases`);
  const usage = (await pool.query<{ status: number; n: string; credits: string }>('SELECT status, count(*) AS n, sum(credits) AS credits FROM usage WHERE key_id = $1 GROUP BY status ORDER BY status', [keyId])).rows.map((r) => ({
    status: r.status,
    n: Number(r.n),
    credits: Number(r.credits),
  }));
  return { credits, leases, usage };
}

test('a lease is taken once the key can hold one, spent on its own row, counted in the balance, and given back at close', async (t) => {
  const db = await startPostgres(t);
  const pool = await openPostgres(db.url, { poolSize: 4 });
  t.teardown(() => pool.end());
  const clock = 1_800_000_000_000;
  const node = new PgLedger(await openPostgres(db.url, { poolSize: 4 }), { leaseCredits: 100, leaseTtlMs: 60_000, now: () => clock });
  const { record } = await new KeyStore(node).create({ plan: 'enterprise', credits: 1_000 });

  t.like(await node.charge(charge(record.id, clock)), { ok: true, charged: 1, remaining: 999 });
  await until(() => node.leasesHeld() === 1, 'the node holds a lease');
  t.deepEqual((await ledgerOf(pool, record.id)).leases, [{ held: 100, spent: 0 }]);
  for (let i = 1; i <= 10; i++) t.like(await node.charge(charge(record.id, clock)), { ok: true, charged: 1, remaining: 999 - i });

  const mid = await ledgerOf(pool, record.id);
  t.is(mid.credits, 1_000 - 1 - 100, 'the lease came off the key row; its spends did not touch it');
  t.deepEqual(mid.leases, [{ held: 100, spent: 10 }]);
  t.deepEqual(mid.usage, [{ status: 200, n: 11, credits: 11 }]);
  t.is(await node.balance(record.id), 989, 'the balance counts the unspent lease');
  t.is((await node.keyById(record.id))?.credits, 989);

  await node.close();
  const after = await ledgerOf(pool, record.id);
  t.is(after.credits, 989, 'closing gave the 90 unspent credits back');
  t.deepEqual(after.leases, []);
});

test('a charge bigger than what the lease holds waits for the lease to go back, and the row pays it with the credits the lease held', async (t) => {
  const db = await startPostgres(t);
  const pool = await openPostgres(db.url, { poolSize: 4 });
  t.teardown(() => pool.end());
  const clock = 1_800_000_000_000;
  const node = new PgLedger(await openPostgres(db.url, { poolSize: 4 }), { leaseCredits: 100, leaseTtlMs: 60_000, now: () => clock });
  t.teardown(() => node.close());
  const { record } = await new KeyStore(node).create({ plan: 'enterprise', credits: 200 });
  const costing = (cost: number): ChargeRequest => ({ ...charge(record.id, clock), cost });

  t.like(await node.charge(costing(1)), { ok: true, remaining: 199 });
  await until(() => node.leasesHeld() === 1, 'the node holds a lease');
  t.is((await ledgerOf(pool, record.id)).credits, 99, 'the row: 200 - 1 - the lease of 100');
  // 70 credits spent from the lease, and while that charge is out, 120 more: more than the
  // lease's 30 left and than the row's 99, not than the key's 129. The lease is retired with a
  // charge still out on it, so its 30 go back only when that charge is in.
  const [spent, big] = await Promise.all([node.charge(costing(70)), node.charge(costing(120))]);
  t.like(spent, { ok: true, charged: 70 });
  t.like(big, { ok: true, charged: 120, remaining: 9 });
  const after = await ledgerOf(pool, record.id);
  t.is(after.credits, 9, 'the lease went back and the row paid the charge');
  t.deepEqual(after.leases, []);
  t.deepEqual(after.usage, [{ status: 200, n: 3, credits: 191 }]);
  // And a charge the whole key cannot pay is still refused, the balance untouched.
  t.like(await node.charge(costing(10)), { ok: false });
  t.is((await ledgerOf(pool, record.id)).credits, 9);
});

test('a node stops holding 1,000 credits of a 1,050-credit key: the other spends the rest once the lease expires, 1,050 in all, and the stopped node cannot spend its lease afterwards', async (t) => {
  const db = await startPostgres(t);
  const pool = await openPostgres(db.url, { poolSize: 4 });
  t.teardown(() => pool.end());
  const t0 = 1_800_000_000_000;
  const clockA = t0;
  let clockB = t0;
  const a = new PgLedger(await openPostgres(db.url, { poolSize: 2 }), { leaseCredits: 1_000, leaseTtlMs: 5_000, now: () => clockA });
  const b = new PgLedger(await openPostgres(db.url, { poolSize: 2 }), { leaseCredits: 1_000, leaseTtlMs: 5_000, now: () => clockB });
  t.teardown(() => b.close());
  const { record } = await new KeyStore(b).create({ plan: 'enterprise', credits: 1_050 });

  let spent = 0;
  if ((await a.charge(charge(record.id, clockA))).ok) spent++;
  await until(() => a.leasesHeld() === 1, 'A holds a lease');
  for (let i = 0; i < 9; i++) if ((await a.charge(charge(record.id, clockA))).ok) spent++;
  t.is(spent, 10);
  t.deepEqual((await ledgerOf(pool, record.id)).leases, [{ held: 1_000, spent: 9 }]);
  // From here A says nothing more (as if its process stopped): its lease is live until t0 + 5 s.

  let refusedWhileLeased = 0;
  for (let i = 0; i < 60; i++) {
    const r = await b.charge(charge(record.id, clockB));
    if (r.ok) spent++;
    else refusedWhileLeased++;
  }
  t.is(spent, 10 + 49, 'B spent what the key row held');
  t.is(refusedWhileLeased, 11, 'and was refused while the rest was leased to A');
  t.is(await b.balance(record.id), 991, 'the balance still counts the leased credits');

  clockB = t0 + 5_001; // A's lease has expired on B's clock
  let refusedAfter = 0;
  for (let i = 0; i < 1_000; i++) {
    const r = await b.charge(charge(record.id, clockB));
    if (r.ok) spent++;
    else refusedAfter++;
  }
  t.is(spent, 1_050, 'B spent the 991 the expired lease held unspent');
  t.is(refusedAfter, 9);

  // A comes back believing its lease alive (its clock has not moved): the database refuses the
  // spend, and the key's row has nothing left.
  const late = await a.charge(charge(record.id, clockA));
  t.false(late.ok);
  await a.close();

  const end = await ledgerOf(pool, record.id);
  t.is(end.credits, 0);
  t.deepEqual(end.leases, []);
  t.deepEqual(end.usage, [
    { status: 200, n: 1_050, credits: 1_050 },
    { status: 402, n: 11 + 9 + 1, credits: 0 },
  ]);
});

test('kill -9 of a node holding a lease of 1,000 credits of a 1,050-credit key: the other node spends the rest after the lease expires, and never more than 1,050 in all', async (t) => {
  const db = await startPostgres(t);
  const pool = await openPostgres(db.url, { poolSize: 4 });
  t.teardown(() => pool.end());
  const { key, record } = await new KeyStore(new PgLedger(pool)).create({ plan: 'enterprise', credits: 1_050, name: 'lease crash' });
  const dir = await snapshotDir(t);
  const env = { STOREMAP_DATABASE_URL: db.url, STOREMAP_RATE_LIMIT: '1000000', STOREMAP_RATE_BURST: '1000000', STOREMAP_CREDIT_LEASE: '1000', STOREMAP_CREDIT_LEASE_TTL_MS: '5000' };
  const [a, b] = await Promise.all([1, 2].map(() => startServe(t, { dataDir: dir, dbPath: path.join(dir, 'unused.db'), env })));
  const brand = oneCreditBrand();

  let answered = 0;
  t.is((await postMap(a.base, key, { brand, format: 'json' })).status, 200);
  answered++;
  await until(async () => (await ledgerOf(pool, record.id)).leases.length === 1, 'the node took a lease');
  // The twenty at once: one at a time, a gap of over a second between two (a loaded box) would
  // have A give its idle lease back before the kill.
  const first20 = await Promise.all(Array.from({ length: 20 }, () => postMap(a.base, key, { brand, format: 'json' })));
  answered += first20.filter((r) => r.status === 200).length;
  t.is(answered, 21);
  const held = await ledgerOf(pool, record.id);
  t.is(held.leases.length, 1);
  t.is(held.leases[0].held, 1_000);
  // The lease's row may have been written a moment before the node had it in hand: a charge
  // then went to the key's row. Either way 21 credits left the balance.
  t.is(1_050 - held.credits - held.leases[0].held + held.leases[0].spent, 21, 'spent from the key row and from the lease');
  t.true(held.leases[0].spent >= 19, `the lease paid ${held.leases[0].spent} of the 20 charges after it`);
  a.child.kill('SIGKILL');
  t.is((await a.exited).signal, 'SIGKILL');

  // The survivor, one request at a time, until the key is spent out and holds no lease. The dead
  // node's lease lives 5 s after its last spend: while the survivor is refused, it asks every
  // 100 ms. The bound is generous (a loaded box), since the loop ends on the ledger's state.
  const statuses: number[] = [];
  const deadline = Date.now() + 120_000;
  for (;;) {
    const status = (await postMap(b.base, key, { brand, format: 'json' })).status;
    statuses.push(status);
    if (status === 200) answered++;
    if (status === 402) {
      const l = await ledgerOf(pool, record.id);
      if (l.credits === 0 && l.leases.length === 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    if (Date.now() > deadline) break;
  }
  t.is(answered, 1_050, 'every credit was spent, by the dead node or the survivor, and no more');
  t.deepEqual(new Set(statuses), new Set([200, 402]));
  const end = await ledgerOf(pool, record.id);
  t.is(end.credits, 0);
  t.deepEqual(end.leases, []);
  t.deepEqual(end.usage.find((u) => u.status === 200), { status: 200, n: 1_050, credits: 1_050 });
  t.true(end.usage.every((u) => u.status === 200 || u.credits === 0), 'refusals took nothing');
  const daily = (await pool.query<{ credits: string }>('SELECT sum(credits) AS credits FROM usage_daily WHERE key_id = $1', [record.id])).rows[0];
  t.is(Number(daily.credits), 1_050, 'the rollup agrees');
});
