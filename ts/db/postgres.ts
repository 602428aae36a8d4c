// PostgreSQL through `pg`, for several storemap nodes sharing one ledger: a pool per node,
// numbered migrations applied at start under an advisory lock, so N nodes starting together
// migrate once and none serves before the schema is whole. The tables are the SQLite ledger's
// (ts/db/database.ts), in PostgreSQL's types; the daily usage rollup is kept by a trigger
// here too, so every writer keeps it right.
import pg from 'pg';
import { DAY_MS } from '../time.ts';
import { CONNECT_DEADLINE_MS } from './ledger.ts';

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
  {
    // Credit leases (ts/db/pg-ledger.ts): a node takes a block of a key's credits off its row in
    // one statement and spends it with charges that lock only the lease's row, its own, so one
    // hot key's charges from several nodes stop queueing on the key's row. A key's balance is
    // its row's credits plus what its leases hold unspent (held - spent): taking a lease, and
    // giving one back, leave the balance as it was; a spend lowers it by exactly the credits on
    // its usage row. A lease lives until expires_ms on the nodes' clock (each spend moves it on);
    // a lease whose node died is given back by the next charge that finds the key short, or the
    // next lease taken on it. A spend and a give-back lock the lease's row, so a lease can never
    // be spent after it was given back: the credits on usage rows never exceed what was put on
    // the key, whatever the clocks say. charge_many now gives back the key's expired leases
    // before it refuses a charge for a short balance, and returns what the leases hold.
    version: 5,
    sql: `
      CREATE TABLE credit_leases (
        id          BIGSERIAL PRIMARY KEY,
        key_id      TEXT NOT NULL REFERENCES api_keys(id),
        held        BIGINT NOT NULL CHECK (held > 0),
        spent       BIGINT NOT NULL DEFAULT 0 CHECK (spent >= 0 AND spent <= held),
        expires_ms  BIGINT NOT NULL
      );
      CREATE INDEX credit_leases_by_key ON credit_leases (key_id);
      -- How many leases a key has out, kept by whoever takes or gives one back (holding the
      -- key's row lock), so that a charge on a key without leases looks at no lease.
      ALTER TABLE api_keys ADD COLUMN leases INTEGER NOT NULL DEFAULT 0 CHECK (leases >= 0);

      -- The credits a key's leases hold unspent (read api_keys.leases first: 0 means none).
      CREATE FUNCTION leased_credits(p_key TEXT) RETURNS BIGINT LANGUAGE sql STABLE AS $$
        SELECT COALESCE(SUM(l.held - l.spent), 0)::BIGINT FROM credit_leases l WHERE l.key_id = p_key;
      $$;

      -- Gives back the key's leases that expired before p_at_ms: their unspent credits return to
      -- the key's row. The caller holds the key's row lock. Returns the credits given back.
      CREATE FUNCTION lease_reclaim(p_key TEXT, p_at_ms BIGINT) RETURNS BIGINT LANGUAGE plpgsql AS $$
      DECLARE
        back BIGINT;
        n INTEGER;
      BEGIN
        -- A lease whose row is locked is being spent, so alive whatever the clocks say: skipped,
        -- never waited for (its spender may be waiting for this key's row in turn).
        WITH gone AS (DELETE FROM credit_leases l WHERE l.id IN (SELECT x.id FROM credit_leases x WHERE x.key_id = p_key AND x.expires_ms < p_at_ms FOR UPDATE SKIP LOCKED)
                      RETURNING l.held - l.spent AS left_over)
          SELECT COALESCE(SUM(left_over), 0), count(*) INTO back, n FROM gone;
        IF n > 0 THEN
          UPDATE api_keys a SET credits = a.credits + back, leases = a.leases - n WHERE a.id = p_key;
        END IF;
        RETURN back;
      END;
      $$;

      -- Takes a lease of p_want credits on a key that is not revoked and has them on its row
      -- (after its expired leases are given back), until p_at_ms + p_ttl_ms. o_lease is null
      -- when it cannot.
      CREATE FUNCTION lease_take(p_key TEXT, p_want BIGINT, p_at_ms BIGINT, p_ttl_ms BIGINT, OUT o_lease BIGINT)
      LANGUAGE plpgsql SET lock_timeout = '5s' AS $$
      DECLARE
        have BIGINT;
        gone BOOLEAN;
        out_now INTEGER;
      BEGIN
        SELECT a.credits, a.revoked_at IS NOT NULL, a.leases INTO have, gone, out_now FROM api_keys a WHERE a.id = p_key FOR NO KEY UPDATE;
        IF NOT FOUND OR gone THEN RETURN; END IF;
        IF out_now > 0 THEN have := have + lease_reclaim(p_key, p_at_ms); END IF;
        IF have < p_want THEN RETURN; END IF;
        UPDATE api_keys a SET credits = a.credits - p_want, leases = a.leases + 1 WHERE a.id = p_key;
        INSERT INTO credit_leases (key_id, held, expires_ms) VALUES (p_key, p_want, p_at_ms + p_ttl_ms) RETURNING id INTO o_lease;
      END;
      $$;

      -- Gives a lease back (its holder is done with it): the unspent credits return to the key.
      -- A lease given back already (reclaimed) gives nothing.
      CREATE FUNCTION lease_return(p_lease BIGINT) RETURNS BIGINT LANGUAGE plpgsql SET lock_timeout = '5s' AS $$
      DECLARE
        k TEXT;
        back BIGINT;
      BEGIN
        SELECT l.key_id INTO k FROM credit_leases l WHERE l.id = p_lease;
        IF NOT FOUND THEN RETURN 0; END IF;
        -- The key's row first, as lease_take and charge_many do before they reclaim leases.
        PERFORM 1 FROM api_keys a WHERE a.id = k FOR NO KEY UPDATE;
        DELETE FROM credit_leases l WHERE l.id = p_lease RETURNING l.held - l.spent INTO back;
        IF NOT FOUND THEN RETURN 0; END IF;
        UPDATE api_keys a SET credits = a.credits + back, leases = a.leases - 1 WHERE a.id = k;
        RETURN back;
      END;
      $$;

      -- A batch of charges, each spent from a lease: taken when the lease is live at p_now_ms
      -- (then it lives p_ttl_ms on from there), holds the cost unspent and its key is not
      -- revoked, with the usage row written; otherwise nothing is written and o_ok is false (the
      -- node charges it on the key's row instead). o_balance: the key's balance after it.
      CREATE FUNCTION charge_leased(p_leases BIGINT[], p_costs BIGINT[], p_at BIGINT[], p_now_ms BIGINT, p_ttl_ms BIGINT,
                                    p_endpoint TEXT[], p_status INTEGER[], p_format TEXT[])
      RETURNS TABLE (o_i INTEGER, o_ok BOOLEAN, o_balance BIGINT)
      LANGUAGE plpgsql SET lock_timeout = '5s' AS $$
      DECLARE
        k INTEGER;
        key TEXT;
        unspent BIGINT;
        have BIGINT;
        out_now INTEGER;
      BEGIN
        -- In the order given: the caller sorts by key, as charge_many takes keys, so the two
        -- lock the rows of several keys in one order and never wait for each other in a circle.
        FOR k IN 1 .. COALESCE(array_length(p_leases, 1), 0) LOOP
          UPDATE credit_leases l SET spent = l.spent + p_costs[k], expires_ms = greatest(l.expires_ms, p_now_ms + p_ttl_ms)
            WHERE l.id = p_leases[k] AND l.spent + p_costs[k] <= l.held AND l.expires_ms >= p_now_ms
              AND EXISTS (SELECT 1 FROM api_keys a WHERE a.id = l.key_id AND a.revoked_at IS NULL)
            RETURNING l.key_id, l.held - l.spent INTO key, unspent;
          o_i := k;
          IF FOUND THEN
            INSERT INTO usage (key_id, at, endpoint, status, format, credits, requests) VALUES (key, p_at[k], p_endpoint[k], p_status[k], p_format[k], p_costs[k], 1);
            o_ok := true;
            SELECT a.credits, a.leases INTO have, out_now FROM api_keys a WHERE a.id = key;
            o_balance := have + CASE WHEN out_now > 1 THEN leased_credits(key) ELSE unspent END;
          ELSE
            o_ok := false;
            o_balance := NULL;
          END IF;
          RETURN NEXT;
        END LOOP;
      END;
      $$;

      -- charge_many (version 4) as before, except that a charge the key's row cannot pay gives
      -- back the key's expired leases first, and each result says what the leases hold. The
      -- key's row is locked FOR NO KEY UPDATE here, in lease_take and in lease_return (it was FOR
      -- UPDATE): they still queue on it, but the key-share lock a leased charge's usage row
      -- takes on it (the foreign key) no longer waits for them.
      DROP FUNCTION charge_many(TEXT[], BIGINT[], BOOLEAN[], BIGINT[], TEXT[], INTEGER[], TEXT[]);
      CREATE FUNCTION charge_many(p_keys TEXT[], p_costs BIGINT[], p_unlimited BOOLEAN[], p_at BIGINT[], p_endpoint TEXT[], p_status INTEGER[], p_format TEXT[])
      RETURNS TABLE (o_i INTEGER, o_credits BIGINT, o_revoked BOOLEAN, o_leased BIGINT)
      LANGUAGE plpgsql SET lock_timeout = '5s' AS $$
      DECLARE
        k INTEGER;
        have BIGINT;
        gone BOOLEAN;
        out_now INTEGER;
        take BIGINT;
        st INTEGER;
      BEGIN
        FOR k IN SELECT s FROM generate_subscripts(p_keys, 1) AS s ORDER BY p_keys[s], s LOOP
          SELECT a.credits, a.revoked_at IS NOT NULL, a.leases INTO have, gone, out_now FROM api_keys a WHERE a.id = p_keys[k] FOR NO KEY UPDATE;
          CONTINUE WHEN NOT FOUND;
          IF out_now > 0 AND NOT gone AND NOT p_unlimited[k] AND have < p_costs[k] THEN
            have := have + lease_reclaim(p_keys[k], p_at[k]);
            SELECT a.leases INTO out_now FROM api_keys a WHERE a.id = p_keys[k];
          END IF;
          take := CASE WHEN gone OR p_unlimited[k] OR have < p_costs[k] THEN 0 ELSE p_costs[k] END;
          st := CASE WHEN gone THEN 401 WHEN p_unlimited[k] THEN p_status[k] WHEN have < p_costs[k] THEN 402 ELSE p_status[k] END;
          IF take > 0 THEN
            UPDATE api_keys a SET credits = a.credits - take WHERE a.id = p_keys[k];
          END IF;
          INSERT INTO usage (key_id, at, endpoint, status, format, credits, requests) VALUES (p_keys[k], p_at[k], p_endpoint[k], st, p_format[k], take, 1);
          o_i := k; o_credits := have; o_revoked := gone; o_leased := CASE WHEN out_now > 0 THEN leased_credits(p_keys[k]) ELSE 0 END;
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
  /** How long the first connection may take (STOREMAP_DATABASE_CONNECT_TIMEOUT_MS). */
  connectTimeoutMs?: number;
}

/** A pool on the ledger, migrated: the schema is current when this resolves. Only the first
 * connection is timed: the migration may wait on another node's, under its advisory lock, and
 * a request's wait for a pooled connection is bounded by the request's own deadline. */
export async function openPostgres(url: string, opts: PgLedgerOptions): Promise<pg.Pool> {
  const pool = new pg.Pool({ connectionString: url, max: opts.poolSize });
  // An idle client's error (the server restarted) must not bring the process down; the next
  // query on a fresh client reports it.
  pool.on('error', () => {});
  const waitMs = opts.connectTimeoutMs ?? CONNECT_DEADLINE_MS;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const connecting = pool.connect();
  let connected = false;
  try {
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer from PostgreSQL within ${waitMs / 1000} s (STOREMAP_DATABASE_CONNECT_TIMEOUT_MS)`)), waitMs);
    });
    const first = await Promise.race([connecting, timedOut]);
    connected = true;
    first.release();
    await migrate(pool);
  } catch (e) {
    // A first connection still trying is dropped if it ever comes, and the pool's end is not
    // waited for: it would wait on that connection until the kernel gives up.
    if (!connected) connecting.then((c) => c.release(true), () => {});
    void pool.end().catch(() => {});
    throw e;
  } finally {
    clearTimeout(timer);
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
