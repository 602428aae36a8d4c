// The ledger's operations on a real PostgreSQL server (a throwaway cluster on 127.0.0.1), with
// several pools standing in for several storemap nodes: exact admission when they race on one
// key, never a negative balance, one usage row per charge, and the rules for revoked and
// unlimited keys. Expected values are counted from what the test sent.
import test from 'ava';
import pg from 'pg';
import { openPostgres } from '../ts/db/postgres.ts';
import { PgLedger } from '../ts/db/pg-ledger.ts';
import { startPostgres } from './helpers/postgres.ts';

const ENTRY = { endpoint: '/api/v1/location-map', status: 200, format: 'png' };

async function requestsOf(pool: pg.Pool, keyId: string): Promise<Record<string, number>> {
  const r = await pool.query<{ status: number; requests: string }>('SELECT status, sum(requests) AS requests FROM usage WHERE key_id = $1 GROUP BY status', [keyId]);
  return Object.fromEntries(r.rows.map((x) => [String(x.status), Number(x.requests)]));
}

async function withKeys(t: import('ava').ExecutionContext, keys: { id: string; credits: number; revoked?: boolean }[], nodes = 1) {
  const db = await startPostgres(t);
  const pools: pg.Pool[] = [];
  for (let i = 0; i < nodes; i++) pools.push(await openPostgres(db.url, { poolSize: 10 }));
  t.teardown(() => Promise.all(pools.map((p) => p.end())).then(() => undefined));
  for (const k of keys) {
    await pools[0].query("INSERT INTO api_keys (id, key_hash, prefix, plan, credits, created_at, revoked_at) VALUES ($1, $2, 'sm_live_0000', 'standard', $3, 0, $4)", [
      k.id,
      Buffer.from(k.id),
      k.credits,
      k.revoked ? 1 : null,
    ]);
  }
  const usage = async (keyId: string) =>
    (await pools[0].query<{ status: number; credits: string; n: string }>('SELECT status, sum(credits) AS credits, count(*) AS n FROM usage WHERE key_id = $1 GROUP BY status ORDER BY status', [keyId])).rows.map((r) => ({
      status: r.status,
      credits: Number(r.credits),
      n: Number(r.n),
    }));
  return { ledgers: pools.map((p) => new PgLedger(p)), usage, pool: pools[0] };
}

test('three nodes racing 180 one-credit charges on a key with 100 credits: exactly 100 admitted, balance 0, one usage row each', async (t) => {
  const { ledgers, usage } = await withKeys(t, [{ id: 'key_race', credits: 100 }], 3);
  const attempts = ledgers.flatMap((l) => Array.from({ length: 60 }, (_, i) => l.charge({ keyId: 'key_race', cost: 1, unlimited: false, entry: ENTRY, at: 1_000 + i })));
  const results = await Promise.all(attempts);
  const admitted = results.filter((r) => r.ok).length;
  t.is(admitted, 100);
  t.is(results.filter((r) => !r.ok && !('revoked' in r && r.revoked)).length, 80);
  t.is(await ledgers[1].balance('key_race'), 0);
  // Each admitted charge saw the balance the one before it left: 99, 98, ... 0, each once.
  const remaining = results.flatMap((r) => (r.ok ? [r.remaining] : [])).sort((a, b) => a - b);
  t.deepEqual(remaining, Array.from({ length: 100 }, (_, i) => i));
  t.deepEqual(await usage('key_race'), [
    { status: 200, credits: 100, n: 100 },
    { status: 402, credits: 0, n: 80 },
  ]);
});

test('a cost above the balance takes nothing; the balance never goes below zero', async (t) => {
  const { ledgers, usage } = await withKeys(t, [{ id: 'key_three', credits: 10 }], 2);
  const results = await Promise.all(Array.from({ length: 8 }, (_, i) => ledgers[i % 2].charge({ keyId: 'key_three', cost: 3, unlimited: false, entry: ENTRY, at: i })));
  t.is(results.filter((r) => r.ok).length, 3, '3 x 3 credits fit in 10');
  t.is(await ledgers[0].balance('key_three'), 1);
  for (const r of results.filter((x) => !x.ok)) t.deepEqual(r, { ok: false, balance: 1 });
  t.deepEqual(await usage('key_three'), [
    { status: 200, credits: 9, n: 3 },
    { status: 402, credits: 0, n: 5 },
  ]);
});

test('a revoked key pays nothing and is recorded as 401; an unlimited key is charged 0; an unknown key writes no row', async (t) => {
  const { ledgers, usage } = await withKeys(t, [
    { id: 'key_revoked', credits: 50, revoked: true },
    { id: 'key_internal', credits: 7 },
  ]);
  const [l] = ledgers;
  t.deepEqual(await l.charge({ keyId: 'key_revoked', cost: 2, unlimited: false, entry: ENTRY, at: 5 }), { ok: false, balance: 50, revoked: true });
  t.is(await l.balance('key_revoked'), 50);
  t.deepEqual(await usage('key_revoked'), [{ status: 401, credits: 0, n: 1 }]);
  t.deepEqual(await l.charge({ keyId: 'key_internal', cost: 8, unlimited: true, entry: ENTRY, at: 6 }), { ok: true, charged: 0, remaining: 7 });
  t.is(await l.balance('key_internal'), 7);
  t.deepEqual(await usage('key_internal'), [{ status: 200, credits: 0, n: 1 }]);
  t.deepEqual(await l.charge({ keyId: 'key_nobody', cost: 1, unlimited: false, entry: ENTRY, at: 7 }), { ok: false, balance: 0, revoked: true });
  t.deepEqual(await usage('key_nobody'), []);
});

test('record writes a row that takes nothing, standing for as many requests as it says', async (t) => {
  const { ledgers, usage, pool } = await withKeys(t, [{ id: 'key_busy', credits: 5 }]);
  await ledgers[0].record('key_busy', { endpoint: '/api/v1/location-map', status: 429, format: 'json' }, 10, 37);
  await ledgers[0].record('key_busy', { endpoint: '/api/v1/location-map', status: 404, format: 'json' }, 11);
  t.is(await ledgers[0].balance('key_busy'), 5);
  t.deepEqual(await usage('key_busy'), [
    { status: 404, credits: 0, n: 1 },
    { status: 429, credits: 0, n: 1 },
  ]);
  t.deepEqual(await requestsOf(pool, 'key_busy'), { 404: 1, 429: 37 });
});
