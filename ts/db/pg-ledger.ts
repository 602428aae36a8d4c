// The ledger's operations on PostgreSQL. A charge locks the key's row (SELECT ... FOR UPDATE
// inside charge_many), so charges on one key from every node queue on that row and each sees
// the balance the one before it left: a balance of N credits admits exactly N one-credit
// requests however many nodes race, and never goes below zero (the column's CHECK would refuse
// it anyway). Charges on different keys do not wait for each other.
import type pg from 'pg';
import { MAX_CHARGE_BATCH, planCharge, WriteCancelled, type WaitingCharge, type LedgerHealth, type BrandStamp, type ChargeRequest, type ChargeResult, type KeyRow, type KeyTableRow, keyRowOf, type LedgerOps, type RateBuckets, type RateLease, type UsageBatchRow, type UsageEntry, type UsageGroup } from './ledger.ts';
import { DAY_MS } from '../time.ts';
import { inTransaction, pingPostgres, withClient } from './postgres.ts';

const INSERT_USAGE = 'INSERT INTO usage (key_id, at, endpoint, status, format, credits, requests) VALUES ($1, $2, $3, $4, $5, $6, $7)';

/**
 * Charges as one call of `charge_many` (migration 4): each key's row locked, `planCharge`'s rule
 * carried out (revoked: nothing taken, a 401 row; unlimited: nothing taken; short: nothing
 * taken, a 402 row; else the cost taken), the usage row written, and the key as the lock found
 * it returned, from which `planCharge` makes each caller's answer. The rule is written twice,
 * there and in `planCharge`, because the point is to decide inside the database;
 * test/ledger.test.ts runs every branch on both stores and holds each to `planCharge`. An
 * unknown key locks nothing, so writes nothing. Named, so each connection plans it once.
 */
const CHARGE_MANY = 'SELECT o_i, o_credits, o_revoked FROM charge_many($1, $2, $3, $4, $5, $6, $7)';

/** Batches out at once per node; the charges that arrive meanwhile wait and go together. One:
 * bench/ledger-nodes.ts measured one node at 3,084 charged req/s with one (92 % of SQLite) and
 * 2,723 with two, whose batches were smaller; again once small queries ran inline (the node's
 * main thread lighter): 3,631 with one, 3,187 with two. The price: a call that waits on a key's row lock
 * (another node's batch on the same key, a top-up) holds this node's other charges for as long;
 * those locks are held only while a call or a key update runs. */
const BATCHES_IN_FLIGHT = 1;
export class PgLedger implements LedgerOps {
  readonly kind = 'postgres';
  readonly rateBuckets: RateBuckets;
  constructor(private readonly pool: pg.Pool) {
    this.rateBuckets = {
      lease: async (bucket, rate, burst, want, giveBack, at): Promise<RateLease> => {
        const r = await pool.query<{ granted: number; left_tokens: number }>('SELECT granted, left_tokens FROM rate_lease($1, $2, $3, $4, $5, $6)', [bucket, rate, burst, want, giveBack, at]);
        return { granted: r.rows[0].granted, left: r.rows[0].left_tokens };
      },
    };
  }

  ping(): Promise<LedgerHealth> {
    return pingPostgres(this.pool);
  }

  close(): Promise<void> {
    return this.pool.end();
  }


  private readonly waiting: WaitingCharge[] = [];
  private inFlight = 0;

  /** A charge in one round trip, shared with the charges that arrive while this node's batches
   * are out (group commit): under load a call carries many, so each costs PostgreSQL and the
   * node a fraction of a statement; alone it goes at once. A key's row is locked only while the
   * call runs, never across round trips (it was five, BEGIN, SELECT … FOR UPDATE, UPDATE,
   * INSERT, COMMIT, which queued a hot key's charges behind the network). */
  charge(req: ChargeRequest, cancelled: () => boolean = () => false): Promise<ChargeResult> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ req, cancelled, resolve, reject });
      this.sendBatch();
    });
  }

  private sendBatch(): void {
    if (this.inFlight >= BATCHES_IN_FLIGHT || this.waiting.length === 0) return;
    this.inFlight++;
    let batch: WaitingCharge[] = [];
    // Taken once a connection is had (waiting for one is where a request can run out of
    // time): a charge whose request was answered meanwhile is dropped, and writes nothing.
    const take = () => {
      for (const w of this.waiting.splice(0, MAX_CHARGE_BATCH)) {
        if (w.cancelled()) w.reject(new WriteCancelled('the request was answered while it waited for the ledger'));
        else batch.push(w);
      }
    };
    withClient(
      this.pool,
      async (client) => {
        if (batch.length === 0) return;
        const col = <T>(f: (r: ChargeRequest) => T) => batch.map((w) => f(w.req));
        const values = [col((r) => r.keyId), col((r) => r.cost), col((r) => r.unlimited), col((r) => r.at), col((r) => r.entry.endpoint), col((r) => r.entry.status), col((r) => r.entry.format)];
        const r = await client.query<{ o_i: number; o_credits: string; o_revoked: boolean }>({ name: 'storemap_charge_many', text: CHARGE_MANY, values });
        const found = new Map(r.rows.map((row) => [row.o_i - 1, { credits: Number(row.o_credits), revoked: row.o_revoked }]));
        batch.forEach((w, i) => w.resolve(planCharge(found.get(i) ?? null, w.req).result));
      },
      take,
    )
      .catch((e: unknown) => {
        for (const w of batch) w.reject(e);
        // A failure before the batch was taken (no connection) fails the charges that were
        // waiting then, as a lone charge's would.
        if (batch.length === 0) for (const w of this.waiting.splice(0, MAX_CHARGE_BATCH)) w.reject(e);
      })
      .finally(() => {
        batch = [];
        this.inFlight--;
        this.sendBatch();
      });
  }

  async record(keyId: string, entry: UsageEntry, at: number, requests = 1): Promise<void> {
    await this.pool.query(INSERT_USAGE, [keyId, at, entry.endpoint, entry.status, entry.format, 0, requests]);
  }

  async recordMany(rows: UsageBatchRow[]): Promise<void> {
    if (rows.length === 0) return;
    await inTransaction(this.pool, async (client) => {
      for (const r of rows) await client.query(INSERT_USAGE, [r.keyId, r.at, r.entry.endpoint, r.entry.status, r.entry.format, 0, r.n]);
    });
  }

  async pruneUsage(before: number, limit: number): Promise<number> {
    const r = await this.pool.query('DELETE FROM usage WHERE id IN (SELECT id FROM usage WHERE at < $1 ORDER BY id LIMIT $2)', [before, limit]);
    return r.rowCount ?? 0;
  }

  private readonly balancesWaiting: { keyId: string; resolve: (n: number) => void; reject: (e: unknown) => void }[] = [];
  private balancesOut = false;

  /** A key's balance (0 for an unknown key), read as charges are written: the reads that arrive
   * while this node's previous read is out go together in the next, one statement. Every
   * charged request reads its key's balance before its work (price before work), so one read a
   * request was a second round trip beside its share of a charge batch. A read only informs:
   * the charge checks the balance again as it debits. */
  balance(keyId: string): Promise<number> {
    return new Promise((resolve, reject) => {
      this.balancesWaiting.push({ keyId, resolve, reject });
      this.readBalances();
    });
  }

  private readBalances(): void {
    if (this.balancesOut || this.balancesWaiting.length === 0) return;
    this.balancesOut = true;
    const batch = this.balancesWaiting.splice(0, MAX_CHARGE_BATCH);
    const ids = [...new Set(batch.map((w) => w.keyId))];
    this.pool
      .query<{ id: string; credits: string }>('SELECT id, credits FROM api_keys WHERE id = ANY($1::text[])', [ids])
      .then(
        (r) => {
          const found = new Map(r.rows.map((row) => [row.id, Number(row.credits)]));
          for (const w of batch) w.resolve(found.get(w.keyId) ?? 0);
        },
        (e: unknown) => {
          for (const w of batch) w.reject(e);
        },
      )
      .finally(() => {
        this.balancesOut = false;
        this.readBalances();
      });
  }

  async rawUsage(keyId: string, from: number, to: number): Promise<UsageGroup[]> {
    const r = await this.pool.query<GroupRow>(
      `SELECT at / ${DAY_MS} AS day, status, format, SUM(requests) AS n, SUM(credits) AS credits
         FROM usage WHERE key_id = $1 AND at >= $2 AND at < $3
        GROUP BY 1, 2, 3`,
      [keyId, from, to],
    );
    return r.rows.map(group);
  }

  async dailyUsage(keyId: string, firstDay: number, lastDay: number): Promise<UsageGroup[]> {
    const r = await this.pool.query<GroupRow>(
      `SELECT day, NULLIF(status, -1) AS status, NULLIF(format, '') AS format, requests AS n, credits
         FROM usage_daily WHERE key_id = $1 AND day >= $2 AND day <= $3`,
      [keyId, firstDay, lastDay],
    );
    return r.rows.map(group);
  }

  async stampBrandSummary(rows: BrandStamp[], snapshotVersion: string, at: number): Promise<void> {
    await inTransaction(this.pool, async (client) => {
      // Brands gone from the new snapshot must not keep an old count.
      await client.query('DELETE FROM brand_summary');
      // In chunks of one statement each: a refresh stamps thousands of brands.
      for (let i = 0; i < rows.length; i += 1000) {
        const chunk = rows.slice(i, i + 1000);
        await client.query(
          `INSERT INTO brand_summary (brand, ticker, location_count, snapshot_version, refreshed_at)
           SELECT b, t, c, $4, $5 FROM unnest($1::text[], $2::text[], $3::int[]) AS x(b, t, c)`,
          [chunk.map((r) => r.brand), chunk.map((r) => r.ticker), chunk.map((r) => r.locationCount), snapshotVersion, at],
        );
      }
    });
  }

  async brandSummaryStampedAt(): Promise<number | null> {
    const r = await this.pool.query<{ at: string | null }>('SELECT MAX(refreshed_at) AS at FROM brand_summary');
    return r.rows[0]?.at == null ? null : Number(r.rows[0].at);
  }

  async insertKey(r: KeyRow): Promise<void> {
    await this.pool.query('INSERT INTO api_keys (id, key_hash, prefix, name, plan, credits, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)', [
      r.id,
      r.keyHash,
      r.prefix,
      r.name,
      r.plan,
      r.credits,
      r.createdAt,
      r.expiresAt,
    ]);
  }

  async keyByHash(hash: Buffer): Promise<KeyRow | null> {
    const r = await this.pool.query<KeyTableRow>('SELECT * FROM api_keys WHERE key_hash = $1', [hash]);
    return r.rows.length > 0 ? keyRowOf(r.rows[0]) : null;
  }

  async keyById(id: string): Promise<KeyRow | null> {
    const r = await this.pool.query<KeyTableRow>('SELECT * FROM api_keys WHERE id = $1', [id]);
    return r.rows.length > 0 ? keyRowOf(r.rows[0]) : null;
  }

  async listKeys(): Promise<KeyRow[]> {
    return (await this.pool.query<KeyTableRow>('SELECT * FROM api_keys ORDER BY created_at, id')).rows.map(keyRowOf);
  }

  async revokeKey(id: string, at: number): Promise<boolean> {
    return ((await this.pool.query('UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL', [at, id])).rowCount ?? 0) === 1;
  }

  async topUpKey(id: string, credits: number): Promise<boolean> {
    // A top-up moves keys_version by hand: the trigger leaves credit changes out (charges).
    return inTransaction(this.pool, async (client) => {
      const changed = (await client.query('UPDATE api_keys SET credits = credits + $1 WHERE id = $2', [credits, id])).rowCount === 1;
      if (changed) await client.query("SELECT nextval('keys_version')");
      return changed;
    });
  }

  async keysVersion(): Promise<string> {
    const r = await this.pool.query<{ last_value: string; is_called: boolean }>('SELECT last_value, is_called FROM keys_version');
    return `${r.rows[0].last_value}:${r.rows[0].is_called}`;
  }
}

/** PostgreSQL returns BIGINT and SUM as strings (they may exceed a double); ours fit. */
interface GroupRow {
  day: string;
  status: number | null;
  format: string | null;
  n: string;
  credits: string;
}

const group = (r: GroupRow): UsageGroup => ({ day: Number(r.day), status: r.status, format: r.format, n: Number(r.n), credits: Number(r.credits) });
