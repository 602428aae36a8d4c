// Lingering on the PostgreSQL ledger (STOREMAP_LEDGER_LINGER_MS): a node holds its next batch of
// charges back until eight have gathered or the linger has run out, so that each call carries
// more; a charge after a quiet spell goes at once; closing sends what waits. Which charges went
// in one call is read from PostgreSQL itself: the usage rows one call wrote share the xmin of
// its transaction. Every linger in these tests that must not run out is a minute long, so a
// loaded machine cannot make one run out early; the one that must is checked from below only.
// The quiet spell is read on the ledger's clock, frozen here unless a test moves it.
import test from 'ava';
import type pg from 'pg';
import type { ChargeRequest, ChargeResult } from '../ts/db/ledger.ts';
import { LINGER_FILL } from '../ts/db/linger.ts';
import { PgLedger } from '../ts/db/pg-ledger.ts';
import { openPostgres } from '../ts/db/postgres.ts';
import { KeyStore } from '../ts/services/keys.ts';
import { startPostgres } from './helpers/postgres.ts';

const MINUTE = 60_000;
const ENTRY = { endpoint: 'location-map', status: 200, format: 'json' };
const one = (keyId: string, at: number): ChargeRequest => ({ keyId, cost: 1, unlimited: false, entry: ENTRY, at });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What `p` came to within `ms`, or 'waiting'. */
function within<T>(p: Promise<T>, ms: number): Promise<T | 'waiting'> {
  return Promise.race([p, sleep(ms).then(() => 'waiting' as const)]);
}

/** The key's usage rows in the order of their `at`, each with the transaction that wrote it. */
async function writtenBy(pool: pg.Pool, keyId: string): Promise<{ at: number; tx: string }[]> {
  const r = await pool.query<{ at: string; tx: string }>('SELECT at, xmin::text AS tx FROM usage WHERE key_id = $1 ORDER BY at', [keyId]);
  return r.rows.map((row) => ({ at: Number(row.at), tx: row.tx }));
}

async function setUp(t: import('ava').ExecutionContext, opts: ConstructorParameters<typeof PgLedger>[1]) {
  const db = await startPostgres(t);
  // Four: a test may hold two in transactions of its own and still read.
  const reader = await openPostgres(db.url, { poolSize: 4 });
  t.teardown(() => reader.end());
  const node = new PgLedger(await openPostgres(db.url, { poolSize: 4 }), opts);
  return { reader, node };
}

test('after a quiet spell a charge goes at once; the next ones wait until eight have gathered and go in one transaction', async (t) => {
  let clock = 1_800_000_000_000;
  const { reader, node } = await setUp(t, { lingerMs: MINUTE, now: () => clock });
  t.teardown(() => node.close());
  const { record } = await new KeyStore(node).create({ plan: 'enterprise', credits: 100 });

  t.like(await within(node.charge(one(record.id, 0)), 10_000), { ok: true, remaining: 99 }, 'nothing was sent for a minute: it goes at once');

  const held: Promise<ChargeResult>[] = [];
  for (let i = 1; i < LINGER_FILL; i++) held.push(node.charge(one(record.id, i)));
  // A round trip to PostgreSQL and more, in which a batch that was not held would be back.
  await reader.query('SELECT 1');
  t.is(await within(Promise.race(held), 300), 'waiting', `${LINGER_FILL - 1} charges wait for the ${LINGER_FILL}th`);
  held.push(node.charge(one(record.id, LINGER_FILL)));
  const results = await Promise.all(held);
  t.deepEqual(results.map((r) => r.ok && r.remaining).sort((a, b) => Number(b) - Number(a)), Array.from({ length: LINGER_FILL }, (_, i) => 98 - i));

  const rows = await writtenBy(reader, record.id);
  t.is(rows.length, LINGER_FILL + 1);
  t.is(new Set(rows.slice(1).map((r) => r.tx)).size, 1, 'the eight in one transaction');
  t.not(rows[0].tx, rows[1].tx);

  // A minute and a millisecond later nothing has been sent for longer than the linger.
  clock += MINUTE + 1;
  t.like(await within(node.charge(one(record.id, 100)), 10_000), { ok: true, remaining: 90 });
});

test('charges left over from a full batch wait out their linger from when they came, not afresh', async (t) => {
  let clock = 1_800_000_000_000;
  const { reader, node } = await setUp(t, { lingerMs: MINUTE, now: () => clock });
  t.teardown(() => node.close());
  const { record } = await new KeyStore(node).create({ plan: 'enterprise', credits: 1_000 });
  t.like(await node.charge(one(record.id, 0)), { ok: true });
  // More than one call carries (MAX_CHARGE_BATCH, 128): the first 128 go at once, being more
  // than eight; the last two came with them, and wait for company until their linger is out.
  const many = Array.from({ length: 130 }, (_, i) => node.charge(one(record.id, 1 + i)));
  t.is((await Promise.all(many.slice(0, 128))).filter((r) => r.ok).length, 128);
  t.is(await within(Promise.race(many.slice(128)), 300), 'waiting', 'two are fewer than eight, and came a moment ago');
  // A minute later on the clock, a charge finds the two have waited their linger: all three go.
  clock += MINUTE;
  const last = node.charge(one(record.id, 200));
  t.not(await within(Promise.all([...many.slice(128), last]), 10_000), 'waiting');
  const rows = await writtenBy(reader, record.id);
  t.is(rows.length, 132);
  t.is(new Set(rows.slice(1, 129).map((r) => r.tx)).size, 1, 'the 128 in one call');
  t.is(new Set(rows.slice(129).map((r) => r.tx)).size, 1, 'the two left over with the last, in one call');
});

// Serial: its calls wait on the test's own row locks, under the functions' 5 s lock_timeout, so it
// runs before the file's other tests start their clusters.
test.serial("a lease's refused spends keep the time they came: they do not linger afresh on the key's row", async (t) => {
  let clock = 1_800_000_000_000;
  const { reader, node } = await setUp(t, { lingerMs: MINUTE, leaseCredits: 100, leaseTtlMs: 10 * MINUTE, now: () => clock });
  t.teardown(() => node.close());
  const keys = new KeyStore(node);
  const a = (await keys.create({ plan: 'enterprise', credits: 1_000 })).record;
  const b = (await keys.create({ plan: 'enterprise', credits: 10 })).record;
  t.like(await node.charge(one(a.id, 0)), { ok: true });
  for (let i = 0; i < 1_000 && node.leasesHeld() === 0; i++) await sleep(10);
  t.is(node.leasesHeld(), 1, 'the node took a lease on a');
  t.like(await within(node.charge(one(a.id, 1)), 10_000), { ok: true }, 'the first spend from the lease goes at once');

  // Each call is held on a row lock of the test's own, so that the order is the test's: first
  // the lease's row, where the spends will find their lease expired.
  const blocked = async (n: number) => {
    for (let i = 0; i < 1_000; i++) {
      const r = await reader.query<{ n: string }>("SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock'");
      if (Number(r.rows[0].n) >= n) return;
      await sleep(10);
    }
    throw new Error(`${n} calls never waited on a lock`);
  };
  const leaseLock = await reader.connect();
  const rowLock = await reader.connect();
  t.teardown(() => {
    leaseLock.release();
    rowLock.release();
  });
  await leaseLock.query('BEGIN');
  await leaseLock.query('UPDATE credit_leases SET expires_ms = 0 WHERE key_id = $1', [a.id]);
  const spends = [2, 3, 4].map((at) => node.charge(one(a.id, at)));
  t.is(await within(Promise.race(spends), 300), 'waiting', 'three spends wait for company');
  // A minute on: a fourth spend finds them waited out, and the four go, to wait on the lease.
  clock += MINUTE + 1;
  spends.push(node.charge(one(a.id, 5)));
  await blocked(1);
  // Then a charge on b's row, the first in a minute: it goes at once, and waits on b's row.
  await rowLock.query('BEGIN');
  await rowLock.query('SELECT 1 FROM api_keys WHERE id = $1 FOR UPDATE', [b.id]);
  const onB = node.charge(one(b.id, 6));
  await blocked(2);
  // The lease's call comes back refused while b's call is out: the four are a's row's now.
  await leaseLock.query('COMMIT');
  for (let i = 0; i < 1_000 && node.leasesHeld() > 0; i++) await sleep(10);
  t.is(node.leasesHeld(), 0, 'the refusal dropped the lease');
  // b's call comes back; a batch went just now, but the four came a minute ago: they go.
  await rowLock.query('COMMIT');
  t.like(await onB, { ok: true });
  const out = await within(Promise.all(spends), 10_000);
  t.not(out, 'waiting', 'the refused spends did not wait out another minute');
  t.true((await Promise.all(spends)).every((r) => r.ok), "charged on a's row");
  const rows = (await writtenBy(reader, a.id)).filter((r) => r.at >= 2);
  t.deepEqual(
    rows.map((r) => r.at),
    [2, 3, 4, 5],
  );
  t.is(new Set(rows.map((r) => r.tx)).size, 1, 'in one call');
});

test('a charge held alone goes when its linger runs out', async (t) => {
  const linger = 300;
  // A frozen clock: however long the first call takes, the second charge does not find a quiet
  // spell (which would send it at once). The wait itself is a timer.
  const clock = 1_800_000_000_000;
  const { reader, node } = await setUp(t, { lingerMs: linger, now: () => clock });
  t.teardown(() => node.close());
  const { record } = await new KeyStore(node).create({ plan: 'enterprise', credits: 10 });
  t.like(await node.charge(one(record.id, 0)), { ok: true, remaining: 9 });
  const started = performance.now();
  t.like(await node.charge(one(record.id, 1)), { ok: true, remaining: 8 });
  // Timers never fire early by more than the clock's rounding; late is the machine's business.
  t.true(performance.now() - started >= linger - 5, `waited ${Math.round(performance.now() - started)} ms`);
  const rows = await writtenBy(reader, record.id);
  t.is(new Set(rows.map((r) => r.tx)).size, 2);
});

test('closing sends what waits, except a charge whose request was answered meanwhile, which writes nothing', async (t) => {
  const clock = 1_800_000_000_000;
  const { reader, node } = await setUp(t, { lingerMs: MINUTE, now: () => clock });
  const { record } = await new KeyStore(node).create({ plan: 'enterprise', credits: 10 });
  t.like(await node.charge(one(record.id, 0)), { ok: true, remaining: 9 });

  let answered = false;
  const gone = node.charge(one(record.id, 1), () => answered).then(
    () => 'charged',
    (e: Error) => e.message,
  );
  const kept = node.charge(one(record.id, 2));
  await reader.query('SELECT 1');
  answered = true;
  await node.close();
  t.like(await kept, { ok: true, remaining: 8 });
  t.regex(await gone, /answered/);
  t.deepEqual(
    (await writtenBy(reader, record.id)).map((r) => r.at),
    [0, 2],
  );
  const balance = await reader.query<{ credits: string }>('SELECT credits FROM api_keys WHERE id = $1', [record.id]);
  t.is(Number(balance.rows[0].credits), 8);
});

test('charges spent from a credit lease linger the same way: eight in one call of charge_leased', async (t) => {
  const clock = 1_800_000_000_000;
  const { reader, node } = await setUp(t, { lingerMs: MINUTE, leaseCredits: 100, leaseTtlMs: 10 * MINUTE, now: () => clock });
  t.teardown(() => node.close());
  const { record } = await new KeyStore(node).create({ plan: 'enterprise', credits: 1_000 });
  t.like(await node.charge(one(record.id, 0)), { ok: true, remaining: 999 });
  for (let i = 0; i < 1_000 && node.leasesHeld() === 0; i++) await sleep(10);
  t.is(node.leasesHeld(), 1, 'the node took a lease');
  // The first spend from the lease finds no leased batch sent before: at once.
  t.like(await within(node.charge(one(record.id, 1)), 10_000), { ok: true, remaining: 998 });

  const held: Promise<ChargeResult>[] = [];
  for (let i = 0; i < LINGER_FILL - 1; i++) held.push(node.charge(one(record.id, 10 + i)));
  await reader.query('SELECT 1');
  t.is(await within(Promise.race(held), 300), 'waiting');
  held.push(node.charge(one(record.id, 10 + LINGER_FILL - 1)));
  t.true((await Promise.all(held)).every((r) => r.ok));
  const rows = (await writtenBy(reader, record.id)).filter((r) => r.at >= 10);
  t.is(rows.length, LINGER_FILL);
  t.is(new Set(rows.map((r) => r.tx)).size, 1);
  const leases = await reader.query<{ spent: string }>('SELECT spent FROM credit_leases WHERE key_id = $1', [record.id]);
  t.deepEqual(
    leases.rows.map((r) => Number(r.spent)),
    [1 + LINGER_FILL],
  );
});
