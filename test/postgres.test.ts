// The PostgreSQL ledger's schema on a real server (a throwaway cluster on 127.0.0.1): nodes
// that start together migrate once, the daily rollup trigger keeps usage_daily equal to the
// raw rows, and a ping reports an outage instead of throwing.
import test, { type ExecutionContext } from 'ava';
import pg from 'pg';
import { MIGRATION_LOCK, PG_MIGRATIONS, migrate, openPostgres, pingPostgres } from '../ts/db/postgres.ts';
import { DAY_MS } from '../ts/time.ts';
import { startPostgres } from './helpers/postgres.ts';
import { startServer, type TestServer } from './helpers/server.ts';

test('three nodes starting together migrate once: every version applied by exactly one, then nothing left', async (t) => {
  const db = await startPostgres(t);
  const pools = [1, 2, 3].map(() => new pg.Pool({ connectionString: db.url, max: 2 }));
  t.teardown(() => Promise.all(pools.map((p) => p.end())).then(() => undefined));
  // A fourth connection holds the migration lock until all three are waiting on it, so they
  // really do race (none can finish before the others have started).
  const holder = new pg.Client({ connectionString: db.url });
  await holder.connect();
  t.teardown(() => holder.end());
  await holder.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
  const runs = pools.map((p) => migrate(p));
  for (;;) {
    const waiting = await holder.query<{ n: string }>("SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted");
    if (Number(waiting.rows[0].n) === 3) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  await holder.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
  const applied = await Promise.all(runs);
  const all = PG_MIGRATIONS.map((m) => m.version);
  t.deepEqual(applied.flat().sort((a, b) => a - b), all, 'each version applied once across the three');
  t.is(applied.filter((a) => a.length > 0).length, 1, 'one node did the work');
  const rows = await holder.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
  t.deepEqual(rows.rows.map((r) => r.version), all);
  t.deepEqual(await migrate(pools[0]), [], 'a later start finds nothing to do');
  const tables = await holder.query<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1");
  t.deepEqual(tables.rows.map((r) => r.table_name), ['api_keys', 'brand_summary', 'credit_leases', 'rate_buckets', 'schema_migrations', 'usage', 'usage_daily']);
});

test('the rollup trigger keeps usage_daily equal to the raw rows grouped by key, day, status and format', async (t) => {
  const db = await startPostgres(t);
  const pool = await openPostgres(db.url, { poolSize: 4 });
  t.teardown(() => pool.end());
  for (const id of ['key_a', 'key_b']) {
    await pool.query("INSERT INTO api_keys (id, key_hash, prefix, plan, credits, created_at) VALUES ($1, $2, 'sm_live_0000', 'enterprise', 100, 0)", [id, Buffer.from(id)]);
  }
  const day0 = 20_000 * DAY_MS;
  // key, at, status, format, credits, requests: two days, a null status and format, a row
  // standing for several refused requests.
  const rows: [string, number, number | null, string | null, number, number][] = [
    ['key_a', day0 + 5, 200, 'json', 1, 1],
    ['key_a', day0 + 60_000, 200, 'json', 2, 1],
    ['key_a', day0 + DAY_MS - 1, 402, 'png', 0, 1],
    ['key_a', day0 + DAY_MS, 200, 'json', 8, 1],
    ['key_a', day0 + 7, 429, 'json', 0, 37],
    ['key_b', day0 + 9, null, null, 0, 1],
    ['key_b', day0 + 10, null, null, 0, 1],
  ];
  // Concurrent inserts of the same group must add up, not lose an update.
  await Promise.all(rows.map((r) => pool.query('INSERT INTO usage (key_id, at, endpoint, status, format, credits, requests) VALUES ($1, $2, $3, $4, $5, $6, $7)', [r[0], r[1], '/api/v1/location-map', ...r.slice(2)])));
  const expected = new Map<string, { requests: number; credits: number }>();
  for (const [key, at, status, format, credits, requests] of rows) {
    const k = [key, Math.floor(at / DAY_MS), status ?? -1, format ?? ''].join('|');
    const e = expected.get(k) ?? { requests: 0, credits: 0 };
    expected.set(k, { requests: e.requests + requests, credits: e.credits + credits });
  }
  const got = await pool.query<{ key_id: string; day: string; status: number; format: string; requests: string; credits: string }>('SELECT * FROM usage_daily');
  const byKey = (entries: [string, { requests: number; credits: number }][]) => entries.sort(([a], [b]) => a.localeCompare(b));
  t.deepEqual(
    byKey(got.rows.map((r) => [[r.key_id, Number(r.day), r.status, r.format].join('|'), { requests: Number(r.requests), credits: Number(r.credits) }])),
    byKey([...expected]),
  );
});

test('a ping reports the latency, and reports an outage as data instead of throwing', async (t) => {
  const db = await startPostgres(t);
  const pool = await openPostgres(db.url, { poolSize: 2 });
  t.teardown(() => pool.end());
  const up = await pingPostgres(pool);
  t.true(up.ok && Number.isInteger(up.latencyMs) && up.latencyMs >= 0, JSON.stringify(up));
  await db.stop();
  const down = await pingPostgres(pool);
  t.false(down.ok);
  t.true(!down.ok && down.error.length > 0);
});

test('a ledger that cannot be reached fails at start, naming why, and leaves no pool open', async (t) => {
  const db = await startPostgres(t);
  await db.stop();
  const err = await t.throwsAsync(openPostgres(db.url, { poolSize: 1 }));
  t.regex(err?.message ?? '', /ECONNREFUSED|connect/i);
});

/** A key of 100 credits, and another transaction holding its row (the gate the next two tests
 * release). */
async function keyRowHeld(t: ExecutionContext, s: TestServer) {
  const { key, record } = await s.keys.create({ plan: 'enterprise', credits: 100 });
  const blocker = new pg.Client({ connectionString: s.postgresUrl });
  await blocker.connect();
  t.teardown(() => blocker.end());
  await blocker.query('BEGIN');
  await blocker.query('SELECT credits FROM api_keys WHERE id = $1 FOR UPDATE', [record.id]);
  return { key, record, blocker };
}

/** A charged JSON request of a few rows. */
const smallRequest = (s: TestServer, key: string) =>
  fetch(`${s.base}/api/v1/location-map`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ brand: 'starbucks', country: 'US', state: 'TX', format: 'json' }),
  });

// A charge that has gone to the ledger decides its request (ts/http/charged.ts): the request's
// deadline passing while the charge waits on the key's row lock must not answer and record it
// a second time beside the row the charge writes. The gate: another transaction holds the
// key's row until the charge is seen waiting on it, and for 2.5 s more, past the 2 s deadline
// (charge_many's lock_timeout, 5 s, is longer).
test("a charge held on its key's row past the request's deadline settles the request: one answer, one usage row, charged once", async (t) => {
  const db = await startPostgres(t);
  const s = await startServer(t, { postgresUrl: db.url, env: { STOREMAP_REQUEST_TIMEOUT_MS: '2000' } });
  // Warm (the pool's connections, the query) on a key of its own, so that the request reaches
  // its charge well within its deadline on a loaded machine.
  const warm = await s.keys.create({ plan: 'enterprise', credits: 100 });
  t.is((await smallRequest(s, warm.key)).status, 200);
  const { key, record, blocker } = await keyRowHeld(t, s);
  const pending = smallRequest(s, key);
  let early: string | undefined;
  void pending.then(async (r) => (early = `${r.status} ${await r.clone().text()}`));
  for (let seen = false; !seen; ) {
    if (early) return t.fail(`the request ended before its charge waited on the lock: ${early}`);
    // Asked on another connection: within the blocker's transaction the view would not change.
    const w = await s.query<{ n: string }>("SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%FROM charge_many%'");
    seen = Number(w[0].n) === 1;
    if (!seen) await new Promise((r) => setTimeout(r, 20));
  }
  await new Promise((r) => setTimeout(r, 2500));
  await blocker.query('COMMIT');
  const res = await pending;
  const body = (await res.json()) as { count?: number; code?: string };
  t.is(res.status, 200, JSON.stringify(body));
  const charged = Number(res.headers.get('x-credits-charged'));
  t.true(charged > 0);
  const rows = await s.query<{ status: number; credits: string }>('SELECT status, credits FROM usage WHERE key_id = ?', [record.id]);
  t.deepEqual(rows.map((r) => [r.status, Number(r.credits)]), [[200, charged]], 'one usage row, the charge\'s');
  t.is((await s.keys.get(record.id))!.credits, 100 - charged);
});

test("a charge that waits longer than charge_many's lock_timeout for its key's row: 503 SERVICE_BUSY, nothing charged or written", async (t) => {
  const db = await startPostgres(t);
  const s = await startServer(t, { postgresUrl: db.url });
  const { key, record, blocker } = await keyRowHeld(t, s);
  // Held until the answer is in: the server's own lock_timeout decides when that is.
  const res = await smallRequest(s, key);
  await blocker.query('ROLLBACK');
  const body = (await res.json()) as { code?: string };
  t.is(res.status, 503, JSON.stringify(body));
  t.is(body.code, 'SERVICE_BUSY');
  t.is(res.headers.get('retry-after'), '1');
  t.deepEqual(await s.query('SELECT status FROM usage WHERE key_id = ?', [record.id]), []);
  t.is((await s.keys.get(record.id))!.credits, 100);
});
