// The ledger's operations on SQLite. A charge is one IMMEDIATE transaction (the write lock is
// taken before the key is read, so no other connection or process writes in between); a write
// that finds another process holding the lock waits off the event loop (`retryBusy`).
import { retryBusy, type DB } from './database.ts';
import { DAY_MS } from '../time.ts';
import { planCharge, type LedgerHealth, type BrandStamp, type ChargeRequest, type ChargeResult, type KeyRow, type KeyTableRow, keyRowOf, type LedgerOps, type UsageBatchRow, type UsageEntry, type UsageGroup } from './ledger.ts';

/** Key writes through each connection: SQLite's data_version moves only for other connections' commits. */
const keyWrites = new WeakMap<DB, { n: number }>();
function writesOf(db: DB): { n: number } {
  let w = keyWrites.get(db);
  if (!w) keyWrites.set(db, (w = { n: 0 }));
  return w;
}

export class SqliteLedger implements LedgerOps {
  readonly kind = 'sqlite';
  readonly #insertUsage;
  readonly #state;
  readonly #debit;
  readonly #prune;
  readonly #raw;
  readonly #daily;
  readonly #stampedAt;
  readonly #keyByHash;
  readonly #keyById;
  readonly #dataVersion;
  constructor(
    private readonly db: DB,
    private readonly now: () => number = Date.now,
  ) {
    this.#insertUsage = db.prepare('INSERT INTO usage (key_id, at, endpoint, status, format, credits, requests) VALUES (?, ?, ?, ?, ?, ?, ?)');
    this.#state = db.prepare<[string], { credits: number; revoked_at: number | null }>('SELECT credits, revoked_at FROM api_keys WHERE id = ?');
    this.#debit = db.prepare('UPDATE api_keys SET credits = credits - ? WHERE id = ? AND credits >= ?');
    // Oldest first by rowid, which follows time: the scan stops after one batch of old rows.
    this.#prune = db.prepare('DELETE FROM usage WHERE id IN (SELECT id FROM usage WHERE at < ? ORDER BY id LIMIT ?)');
    this.#raw = db.prepare<[string, number, number], UsageGroup>(
      `SELECT at / ${DAY_MS} AS day, status, format, SUM(requests) AS n, SUM(credits) AS credits
         FROM usage WHERE key_id = ? AND at >= ? AND at < ?
        GROUP BY day, status, format`,
    );
    this.#daily = db.prepare<[string, number, number], UsageGroup>(
      `SELECT day, NULLIF(status, -1) AS status, NULLIF(format, '') AS format, requests AS n, credits
         FROM usage_daily WHERE key_id = ? AND day >= ? AND day <= ?`,
    );
    this.#stampedAt = db.prepare<[], { at: number | null }>('SELECT MAX(refreshed_at) AS at FROM brand_summary');
    this.#keyByHash = db.prepare<[Buffer], KeyTableRow>('SELECT * FROM api_keys WHERE key_hash = ?');
    this.#keyById = db.prepare<[string], KeyTableRow>('SELECT * FROM api_keys WHERE id = ?');
    this.#dataVersion = db.prepare<[], number>('PRAGMA data_version').pluck();
  }

  charge(req: ChargeRequest, cancelled?: () => boolean): Promise<ChargeResult> {
    return retryBusy(() => this.#chargeNow(req), this.now, cancelled);
  }

  #chargeNow(req: ChargeRequest): ChargeResult {
    return this.db
      .transaction((): ChargeResult => {
        const state = this.#state.get(req.keyId);
        const plan = planCharge(state ? { credits: state.credits, revoked: state.revoked_at !== null } : null, req);
        if (plan.debit > 0 && this.#debit.run(plan.debit, req.keyId, plan.debit).changes !== 1) throw new Error(`the debit of key ${req.keyId} found no balance to take`);
        if (plan.usage) this.#insertUsage.run(req.keyId, req.at, req.entry.endpoint, plan.usage.status, req.entry.format, plan.usage.credits, 1);
        return plan.result;
      })
      .immediate();
  }

  record(keyId: string, entry: UsageEntry, at: number, requests = 1): Promise<void> {
    return retryBusy(() => {
      this.#insertUsage.run(keyId, at, entry.endpoint, entry.status, entry.format, 0, requests);
    }, this.now);
  }

  recordMany(rows: UsageBatchRow[]): Promise<void> {
    return retryBusy(
      () =>
        this.db.transaction(() => {
          for (const r of rows) this.#insertUsage.run(r.keyId, r.at, r.entry.endpoint, r.entry.status, r.entry.format, 0, r.n);
        })(),
      this.now,
    );
  }

  pruneUsage(before: number, limit: number): Promise<number> {
    return retryBusy(() => this.#prune.run(before, limit).changes, this.now);
  }

  async balance(keyId: string): Promise<number> {
    return this.#state.get(keyId)?.credits ?? 0;
  }

  async rawUsage(keyId: string, from: number, to: number): Promise<UsageGroup[]> {
    return this.#raw.all(keyId, from, to);
  }

  async dailyUsage(keyId: string, firstDay: number, lastDay: number): Promise<UsageGroup[]> {
    return this.#daily.all(keyId, firstDay, lastDay);
  }

  stampBrandSummary(rows: BrandStamp[], snapshotVersion: string, at: number): Promise<void> {
    const insert = this.db.prepare('INSERT INTO brand_summary (brand, ticker, location_count, snapshot_version, refreshed_at) VALUES (?, ?, ?, ?, ?)');
    return retryBusy(
      () =>
        this.db
          .transaction(() => {
            // Brands gone from the new snapshot must not keep an old count.
            this.db.prepare('DELETE FROM brand_summary').run();
            for (const r of rows) insert.run(r.brand, r.ticker, r.locationCount, snapshotVersion, at);
          })
          .immediate(),
      this.now,
    );
  }

  async brandSummaryStampedAt(): Promise<number | null> {
    return this.#stampedAt.get()?.at ?? null;
  }

  async insertKey(r: KeyRow): Promise<void> {
    writesOf(this.db).n++;
    this.db
      .prepare('INSERT INTO api_keys (id, key_hash, prefix, name, plan, credits, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
      .run(r.id, r.keyHash, r.prefix, r.name, r.plan, r.credits, r.createdAt, r.expiresAt);
  }

  async keyByHash(hash: Buffer): Promise<KeyRow | null> {
    const r = this.#keyByHash.get(hash);
    return r ? keyRowOf(r) : null;
  }

  async keyById(id: string): Promise<KeyRow | null> {
    const r = this.#keyById.get(id);
    return r ? keyRowOf(r) : null;
  }

  async listKeys(): Promise<KeyRow[]> {
    return this.db.prepare<[], KeyTableRow>('SELECT * FROM api_keys ORDER BY created_at, id').all().map(keyRowOf);
  }

  async revokeKey(id: string, at: number): Promise<boolean> {
    writesOf(this.db).n++;
    return this.db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(at, id).changes === 1;
  }

  async topUpKey(id: string, credits: number): Promise<boolean> {
    writesOf(this.db).n++;
    return this.db.prepare('UPDATE api_keys SET credits = credits + ? WHERE id = ?').run(credits, id).changes === 1;
  }

  async keysVersion(): Promise<string> {
    // Any other connection's commit moves data_version (a charge too: the cache is then read
    // again, which is cheap); this connection's own key writes are counted.
    return `${this.#dataVersion.get() as number}:${writesOf(this.db).n}`;
  }

  async ping(): Promise<LedgerHealth> {
    const started = performance.now();
    try {
      this.db.prepare('SELECT 1').get();
      return { ok: true, latencyMs: Math.round(performance.now() - started) };
    } catch (e) {
      return { ok: false, error: e instanceof Error ? e.message : String(e) };
    }
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
