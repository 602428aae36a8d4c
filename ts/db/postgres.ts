// PostgreSQL through `pg`, for several storemap nodes sharing one ledger: a pool per node,
// numbered migrations applied at start under an advisory lock, so N nodes starting together
// migrate once and none serves before the schema is whole. The tables are the SQLite ledger's
// (ts/db/database.ts), in PostgreSQL's types; the daily usage rollup is kept by a trigger
// here too, so every writer keeps it right.
import pg from 'pg';
import { DAY_MS } from '../time.ts';

/** The key every node takes before migrating: any fixed number no other code uses. */
export const MIGRATION_LOCK = 0x5354_4d50; // "STMP"

/** Append-only: a released migration is never edited, only followed by a new one. */
export const PG_MIGRATIONS: { version: number; sql: string }[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE api_keys (
        id          TEXT PRIMARY KEY,
        key_hash    BYTEA NOT NULL UNIQUE,
        prefix      TEXT NOT NULL,
        name        TEXT,
        plan        TEXT NOT NULL CHECK (plan IN ('trial', 'standard', 'enterprise', 'internal')),
        credits     BIGINT NOT NULL CHECK (credits >= 0),
        created_at  BIGINT NOT NULL,
        expires_at  BIGINT,
        revoked_at  BIGINT
      );
      CREATE TABLE usage (
        id        BIGSERIAL PRIMARY KEY,
        key_id    TEXT NOT NULL REFERENCES api_keys(id),
        at        BIGINT NOT NULL,
        endpoint  TEXT NOT NULL,
        status    INTEGER,
        format    TEXT,
        credits   BIGINT NOT NULL DEFAULT 0,
        requests  INTEGER NOT NULL DEFAULT 1 CHECK (requests >= 1)
      );
      CREATE INDEX usage_by_key_time ON usage (key_id, at);
      CREATE INDEX usage_by_time ON usage (at);
      CREATE TABLE brand_summary (
        brand            TEXT PRIMARY KEY,
        ticker           TEXT,
        location_count   INTEGER NOT NULL,
        snapshot_version TEXT NOT NULL,
        refreshed_at     BIGINT NOT NULL
      );
      -- Usage by key, UTC day, status and format: a year's report reads a few thousand rows.
      -- A missing status is -1 and a missing format '' (NULLs never collide in a key).
      CREATE TABLE usage_daily (
        key_id   TEXT NOT NULL,
        day      BIGINT NOT NULL,
        status   INTEGER NOT NULL,
        format   TEXT NOT NULL,
        requests BIGINT NOT NULL,
        credits  BIGINT NOT NULL,
        PRIMARY KEY (key_id, day, status, format)
      );
      CREATE FUNCTION usage_rollup() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO usage_daily (key_id, day, status, format, requests, credits)
          VALUES (NEW.key_id, NEW.at / ${DAY_MS}, COALESCE(NEW.status, -1), COALESCE(NEW.format, ''), NEW.requests, NEW.credits)
          ON CONFLICT (key_id, day, status, format)
          DO UPDATE SET requests = usage_daily.requests + EXCLUDED.requests, credits = usage_daily.credits + EXCLUDED.credits;
        RETURN NULL;
      END;
      $$;
      CREATE TRIGGER usage_rollup AFTER INSERT ON usage FOR EACH ROW EXECUTE FUNCTION usage_rollup();
    `,
  },
  {
    // Nodes cache authenticated keys while keys_version stays put: a statement that adds a key,
    // revokes one or tops one up moves it. A charge's debit does not (it would empty every
    // node's cache on every request); charges read the key again in their own transaction. A
    // sequence, not a row: its increments never wait for another transaction's lock.
    version: 2,
    sql: `
      CREATE SEQUENCE keys_version;
      CREATE FUNCTION keys_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM nextval('keys_version');
        RETURN NULL;
      END;
      $$;
      CREATE TRIGGER keys_added AFTER INSERT OR DELETE ON api_keys FOR EACH STATEMENT EXECUTE FUNCTION keys_changed();
      CREATE TRIGGER keys_changed AFTER UPDATE OF revoked_at, plan, expires_at, key_hash ON api_keys FOR EACH STATEMENT EXECUTE FUNCTION keys_changed();
    `,
  },
  {
    // One token bucket per key for the whole cluster (ts/http/shared-rate-limit.ts). Nodes do
    // not ask it per request: rate_lease hands a node a few tokens at a time, taking back the
    // ones an earlier lease left unspent. The row lock orders leases on one key from every
    // node. Time is the asking node's clock (p_at_ms, the clock every other rule of the node
    // reads), never moved backwards: a node whose clock runs ahead by d can bring the refill
    // forward by rate × d once, and the others then refill nothing until they catch up.
    version: 3,
    sql: `
      CREATE TABLE rate_buckets (
        bucket  TEXT PRIMARY KEY,
        tokens  DOUBLE PRECISION NOT NULL CHECK (tokens >= 0),
        at_ms   DOUBLE PRECISION NOT NULL
      );
      CREATE FUNCTION rate_lease(p_bucket TEXT, p_rate DOUBLE PRECISION, p_burst DOUBLE PRECISION, p_want INTEGER, p_back DOUBLE PRECISION,
                                 p_at_ms DOUBLE PRECISION, OUT granted INTEGER, OUT left_tokens DOUBLE PRECISION)
      LANGUAGE plpgsql AS $$
      DECLARE
        was DOUBLE PRECISION;
        was_at DOUBLE PRECISION;
        t DOUBLE PRECISION;
        have DOUBLE PRECISION;
      BEGIN
        INSERT INTO rate_buckets (bucket, tokens, at_ms) VALUES (p_bucket, p_burst, p_at_ms)
          ON CONFLICT (bucket) DO NOTHING;
        SELECT b.tokens, b.at_ms INTO was, was_at FROM rate_buckets b WHERE b.bucket = p_bucket FOR UPDATE;
        t := greatest(was_at, p_at_ms);
        have := least(p_burst, was + greatest(p_back, 0) + (t - was_at) / 1000 * p_rate);
        granted := greatest(0, least(p_want, floor(have)))::INTEGER;
        left_tokens := have - granted;
        UPDATE rate_buckets SET tokens = left_tokens, at_ms = t WHERE bucket = p_bucket;
      END;
      $$;
    `,
  },
  {
    // A batch of charges in one call (ts/db/pg-ledger.ts gathers the charges that arrive while
    // the node's previous batches are out): each carried out as planCharge (ts/db/ledger.ts)
    // says, in the order they came for one key, keys taken in id order so that two batches
    // never wait for each other's locks in a circle. Returns, for each charge whose key exists,
    // the key as its lock found it. A request whose charge is out waits for it (ts/http/
    // charged.ts), so a lock held elsewhere fails the call after lock_timeout instead of
    // holding it (and the node's next batch) for good.
    version: 4,
    sql: `
      CREATE FUNCTION charge_many(p_keys TEXT[], p_costs BIGINT[], p_unlimited BOOLEAN[], p_at BIGINT[], p_endpoint TEXT[], p_status INTEGER[], p_format TEXT[])
      RETURNS TABLE (o_i INTEGER, o_credits BIGINT, o_revoked BOOLEAN)
      LANGUAGE plpgsql SET lock_timeout = '5s' AS $$
      DECLARE
        k INTEGER;
        have BIGINT;
        gone BOOLEAN;
        take BIGINT;
        st INTEGER;
      BEGIN
        FOR k IN SELECT s FROM generate_subscripts(p_keys, 1) AS s ORDER BY p_keys[s], s LOOP
          SELECT a.credits, a.revoked_at IS NOT NULL INTO have, gone FROM api_keys a WHERE a.id = p_keys[k] FOR UPDATE;
          CONTINUE WHEN NOT FOUND;
          take := CASE WHEN gone OR p_unlimited[k] OR have < p_costs[k] THEN 0 ELSE p_costs[k] END;
          st := CASE WHEN gone THEN 401 WHEN p_unlimited[k] THEN p_status[k] WHEN have < p_costs[k] THEN 402 ELSE p_status[k] END;
          IF take > 0 THEN
            UPDATE api_keys a SET credits = a.credits - take WHERE a.id = p_keys[k];
          END IF;
          INSERT INTO usage (key_id, at, endpoint, status, format, credits, requests) VALUES (p_keys[k], p_at[k], p_endpoint[k], st, p_format[k], take, 1);
          o_i := k; o_credits := have; o_revoked := gone;
          RETURN NEXT;
        END LOOP;
      END;
      $$;
    `,
  },
];

export interface PgLedgerOptions {
  /** Connections this node keeps at most. */
  poolSize: number;
}

/** A pool on the ledger, migrated: the schema is current when this resolves. */
export async function openPostgres(url: string, opts: PgLedgerOptions): Promise<pg.Pool> {
  const pool = new pg.Pool({ connectionString: url, max: opts.poolSize });
  // An idle client's error (the server restarted) must not bring the process down; the next
  // query on a fresh client reports it.
  pool.on('error', () => {});
  try {
    await migrate(pool);
  } catch (e) {
    await pool.end();
    throw e;
  }
  return pool;
}

/** Runs `work` on one pooled connection, after `before` (which may throw to give up) once the
 * connection is had: waiting for one is where a request can run out of time. The connection goes
 * back to the pool either way, or is discarded if it broke (or `work` called `discard`). */
export async function withClient<T>(pool: pg.Pool, work: (client: pg.PoolClient, discard: (e: Error) => void) => Promise<T>, before?: () => void): Promise<T> {
  const client = await pool.connect();
  // A checked-out client has lost the pool's error listener: a connection the server drops
  // between two queries (a restart) would emit 'error' with nobody listening, and that ends
  // the process. Kept here instead, and such a client is discarded.
  let broken: Error | undefined;
  const discard = (e: Error) => (broken ??= e);
  client.on('error', discard);
  try {
    before?.();
    return await work(client, discard);
  } finally {
    client.off('error', discard);
    client.release(broken);
  }
}

/** Runs `work` in one transaction on one pooled connection: committed if it returns, rolled
 * back if it throws (the error is rethrown). */
export function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>, before?: () => void): Promise<T> {
  return withClient(
    pool,
    async (client, discard) => {
      await client.query('BEGIN');
      try {
        const out = await work(client);
        await client.query('COMMIT');
        return out;
      } catch (e) {
        await client.query('ROLLBACK').catch(discard);
        throw e;
      }
    },
    before,
  );
}

/**
 * Applies the migrations this ledger lacks, in one transaction holding the migration lock: a
 * node that starts while another migrates waits for it, then finds nothing to do. Returns the
 * versions this call applied.
 */
export function migrate(pool: pg.Pool): Promise<number[]> {
  return inTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())');
    const done = new Set((await client.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version));
    const applied: number[] = [];
    for (const m of PG_MIGRATIONS) {
      if (done.has(m.version)) continue;
      await client.query(m.sql);
      await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [m.version]);
      applied.push(m.version);
    }
    return applied;
  });
}

/** One round trip to the ledger, for the status endpoint: its latency, or why it failed. */
export async function pingPostgres(pool: pg.Pool): Promise<{ ok: true; latencyMs: number } | { ok: false; error: string }> {
  const started = performance.now();
  try {
    await pool.query('SELECT 1');
    return { ok: true, latencyMs: Math.round(performance.now() - started) };
  } catch (e) {
    return { ok: false, error: e instanceof Error ? e.message : String(e) };
  }
}
