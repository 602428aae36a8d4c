// `storemap db migrate --to postgres://…`: an SQLite ledger copied into an empty PostgreSQL
// ledger (keys with their balances, raw usage rows, the daily rollups, the brand stamps) in
// one transaction, then checked by counts and sums on both sides before it commits. The
// rollups are copied, not rebuilt: they keep days whose raw rows were pruned long ago.
import type pg from 'pg';
import type { DB } from './database.ts';
import { inTransaction } from './postgres.ts';

/** What was copied: each table's rows, and the sums that must agree. */
export interface LedgerTotals {
  keys: number;
  credits: number;
  usageRows: number;
  usageRequests: number;
  usageCredits: number;
  dailyRows: number;
  dailyRequests: number;
  dailyCredits: number;
  brandStamps: number;
}

/** Rows a statement inserts at most: one round trip carries this many. */
const BATCH = 10_000;

const TOTALS_SQL = `SELECT
  (SELECT count(*) FROM api_keys) AS keys,
  (SELECT coalesce(sum(credits), 0) FROM api_keys) AS credits,
  (SELECT count(*) FROM usage) AS usage_rows,
  (SELECT coalesce(sum(requests), 0) FROM usage) AS usage_requests,
  (SELECT coalesce(sum(credits), 0) FROM usage) AS usage_credits,
  (SELECT count(*) FROM usage_daily) AS daily_rows,
  (SELECT coalesce(sum(requests), 0) FROM usage_daily) AS daily_requests,
  (SELECT coalesce(sum(credits), 0) FROM usage_daily) AS daily_credits,
  (SELECT count(*) FROM brand_summary) AS brand_stamps`;

type TotalsRow = Record<'keys' | 'credits' | 'usage_rows' | 'usage_requests' | 'usage_credits' | 'daily_rows' | 'daily_requests' | 'daily_credits' | 'brand_stamps', number | string>;

const totalsOf = (r: TotalsRow): LedgerTotals => ({
  keys: Number(r.keys),
  credits: Number(r.credits),
  usageRows: Number(r.usage_rows),
  usageRequests: Number(r.usage_requests),
  usageCredits: Number(r.usage_credits),
  dailyRows: Number(r.daily_rows),
  dailyRequests: Number(r.daily_requests),
  dailyCredits: Number(r.daily_credits),
  brandStamps: Number(r.brand_stamps),
});

export function sqliteTotals(db: DB): LedgerTotals {
  return totalsOf(db.prepare(TOTALS_SQL).get() as TotalsRow);
}

export async function postgresTotals(pool: pg.Pool | pg.PoolClient): Promise<LedgerTotals> {
  return totalsOf((await pool.query<TotalsRow>(TOTALS_SQL)).rows[0]);
}

/** Inserts `rows` in batches, one statement per batch, through unnest of one array per column. */
async function insertBatches(client: pg.PoolClient, sql: string, rows: unknown[][], columns: number): Promise<void> {
  for (let i = 0; i < rows.length; i += BATCH) {
    const chunk = rows.slice(i, i + BATCH);
    await client.query(
      sql,
      Array.from({ length: columns }, (_, c) => chunk.map((r) => r[c])),
    );
  }
}

/**
 * Copies the SQLite ledger `db` into the migrated, empty PostgreSQL ledger behind `pool` and
 * returns the totals both sides agree on. Refuses a target that has any key or usage row
 * (running twice must not double a ledger); on any mismatch nothing is committed.
 */
export async function copyLedger(db: DB, pool: pg.Pool): Promise<LedgerTotals> {
  const source = sqliteTotals(db);
  return inTransaction(pool, async (client) => {
    // Nobody else writes the target while it is filled.
    await client.query('LOCK TABLE api_keys, usage, usage_daily, brand_summary IN EXCLUSIVE MODE');
    const before = await postgresTotals(client);
    if (before.keys > 0 || before.usageRows > 0 || before.dailyRows > 0) {
      throw new Error(`the target ledger is not empty (${before.keys} keys, ${before.usageRows} usage rows): storemap db migrate copies into an empty one only`);
    }
    const keys = db.prepare('SELECT id, key_hash, prefix, name, plan, credits, created_at, expires_at, revoked_at FROM api_keys ORDER BY created_at, id').raw().all() as unknown[][];
    await insertBatches(
      client,
      `INSERT INTO api_keys (id, key_hash, prefix, name, plan, credits, created_at, expires_at, revoked_at)
       SELECT * FROM unnest($1::text[], $2::bytea[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::bigint[], $8::bigint[], $9::bigint[])`,
      keys,
      9,
    );
    // The copied rollups stand as they are: the trigger would add every raw row again.
    await client.query('ALTER TABLE usage DISABLE TRIGGER usage_rollup');
    const usage = db.prepare('SELECT id, key_id, at, endpoint, status, format, credits, requests FROM usage ORDER BY id').raw().all() as unknown[][];
    await insertBatches(
      client,
      `INSERT INTO usage (id, key_id, at, endpoint, status, format, credits, requests)
       SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::text[], $5::int[], $6::text[], $7::bigint[], $8::int[])`,
      usage,
      8,
    );
    await client.query('ALTER TABLE usage ENABLE TRIGGER usage_rollup');
    // New rows continue after the copied ids.
    await client.query("SELECT setval(pg_get_serial_sequence('usage', 'id'), greatest((SELECT max(id) FROM usage), 1))");
    const daily = db.prepare('SELECT key_id, day, status, format, requests, credits FROM usage_daily').raw().all() as unknown[][];
    await insertBatches(
      client,
      `INSERT INTO usage_daily (key_id, day, status, format, requests, credits)
       SELECT * FROM unnest($1::text[], $2::bigint[], $3::int[], $4::text[], $5::bigint[], $6::bigint[])`,
      daily,
      6,
    );
    const stamps = db.prepare('SELECT brand, ticker, location_count, snapshot_version, refreshed_at FROM brand_summary').raw().all() as unknown[][];
    await insertBatches(
      client,
      `INSERT INTO brand_summary (brand, ticker, location_count, snapshot_version, refreshed_at)
       SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::bigint[])`,
      stamps,
      5,
    );
    const after = await postgresTotals(client);
    const differ = (Object.keys(source) as (keyof LedgerTotals)[]).filter((k) => source[k] !== after[k]);
    if (differ.length > 0) {
      throw new Error(`the copy does not add up (${differ.map((k) => `${k}: ${source[k]} in SQLite, ${after[k]} in PostgreSQL`).join('; ')}): nothing was committed`);
    }
    return after;
  });
}
