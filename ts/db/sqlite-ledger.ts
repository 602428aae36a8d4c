// The ledger's operations on SQLite. Charges are written in IMMEDIATE transactions (the write
// lock is taken before a key is read, so no other connection or process writes in between),
// the charges that arrive within one turn of the event loop in one transaction (group commit);
// a write that finds another process holding the lock waits off the event loop (`retryBusy`).
import { retryBusy, type DB } from './database.ts';
import { isBusy } from './faults.ts';
import { DAY_MS } from '../time.ts';
import { BUSY_DEADLINE_MS, MAX_CHARGE_BATCH, planCharge, WriteCancelled, type WaitingCharge, type LedgerHealth, type BrandStamp, type ChargeRequest, type ChargeResult, type KeyRow, type KeyTableRow, keyRowOf, type LedgerOps, type UsageBatchRow, type UsageEntry, type UsageGroup } from './ledger.ts';
import { MAX_BALANCE } from '../api/plans.ts';

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
  readonly #chargeMany;
  readonly #chargeOne;
  readonly #waiting: WaitingCharge[] = [];
  /** A flush is due at the event loop's next check phase. */
  #scheduled = false;
  /** A batch is being written, or waits for another process's write lock. */
  #flushing = false;
  constructor(
    private readonly db: DB,
    private readonly now: () => number = Date.now,
    /** How long a write waits for another process's lock before it fails busy (503). */
    private readonly busyMs = BUSY_DEADLINE_MS,
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
    const one = (req: ChargeRequest): ChargeResult => {
      const state = this.#state.get(req.keyId);
      const plan = planCharge(state ? { credits: state.credits, revoked: state.revoked_at !== null } : null, req);
      if (plan.debit > 0 && this.#debit.run(plan.debit, req.keyId, plan.debit).changes !== 1) throw new Error(`the debit of key ${req.keyId} found no balance to take`);
      if (plan.usage) this.#insertUsage.run(req.keyId, req.at, req.entry.endpoint, plan.usage.status, req.entry.format, plan.usage.credits, 1);
      return plan.result;
    };
    this.#chargeMany = db.transaction((batch: WaitingCharge[]) => batch.map((w) => one(w.req)));
    this.#chargeOne = db.transaction(one);
  }

  /** The batch in one transaction. Should a charge throw, the transaction is rolled back whole
   * and each charge is written again in a transaction of its own, once: the one that throws
   * fails alone (a savepoint per charge would do the same at the cost of two more statements
   * for every charge). Nothing here throws once a charge has committed, so the caller's retry
   * of a busy batch never writes a charge twice. */
  #write(batch: WaitingCharge[]): ({ ok: true; result: ChargeResult } | { ok: false; err: unknown })[] {
    try {
      return this.#chargeMany.immediate(batch).map((result) => ({ ok: true, result }));
    } catch (e) {
      if (isBusy(e) || batch.length === 1) throw e;
    }
    return batch.map((w) => {
      try {
        return { ok: true, result: this.#chargeOne.immediate(w.req) };
      } catch (err) {
        return { ok: false, err };
      }
    });
  }

  /** Group commit: the charges that arrive before the event loop's next check phase go in one
   * transaction, in arrival order, each answered with the balance after its own debit, once
   * that transaction has committed. A transaction's fixed cost (the write lock, the WAL frames
   * of the pages it touched, the commit) is paid once per batch instead of once per charge:
   * bench/request-path.ts measures what it gives. One batch at a time, so a key's charges
   * commit in the order they came. `cancelled` is asked as the batch is written (and before
   * each retry while another process holds the lock): a charge whose request ended meanwhile
   * drops out and writes nothing. */
  charge(req: ChargeRequest, cancelled: () => boolean = () => false): Promise<ChargeResult> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ req, cancelled, resolve, reject });
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#scheduled || this.#flushing || this.#waiting.length === 0) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      void this.#flush();
    });
  }

  /** `write` retried while another process holds the lock, for at most `busyMs`. */
  #retry<T>(write: () => T): Promise<T> {
    return retryBusy(write, this.now, undefined, this.busyMs);
  }

  async #flush(): Promise<void> {
    this.#flushing = true;
    let batch = this.#waiting.splice(0, MAX_CHARGE_BATCH);
    try {
      await this.#retry(() => {
        batch = batch.filter((w) => {
          if (!w.cancelled()) return true;
          w.reject(new WriteCancelled('the request was answered while it waited for the ledger'));
          return false;
        });
        if (batch.length === 0) return;
        const outcomes = this.#write(batch);
        batch.forEach((w, i) => {
          const o = outcomes[i];
          if (o.ok) w.resolve(o.result);
          else w.reject(o.err);
        });
        batch = [];
      });
    } catch (e) {
      // Not written (another process held the lock past the deadline, or the commit failed).
      for (const w of batch) w.reject(e);
    } finally {
      this.#flushing = false;
      this.#schedule();
    }
  }

  record(keyId: string, entry: UsageEntry, at: number, requests = 1): Promise<void> {
    return this.#retry(() => {
      this.#insertUsage.run(keyId, at, entry.endpoint, entry.status, entry.format, 0, requests);
    });
  }

  recordMany(rows: UsageBatchRow[]): Promise<void> {
    return this.#retry(
      () =>
        this.db.transaction(() => {
          for (const r of rows) this.#insertUsage.run(r.keyId, r.at, r.entry.endpoint, r.entry.status, r.entry.format, 0, r.n);
        })(),
    );
  }

  pruneUsage(before: number, limit: number): Promise<number> {
    return this.#retry(() => this.#prune.run(before, limit).changes);
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
    return this.#retry(
      () =>
        this.db
          .transaction(() => {
            // Brands gone from the new snapshot must not keep an old count.
            this.db.prepare('DELETE FROM brand_summary').run();
            for (const r of rows) insert.run(r.brand, r.ticker, r.locationCount, snapshotVersion, at);
          })
          .immediate(),
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
    return this.db.prepare(`UPDATE api_keys SET credits = credits + ? WHERE id = ? AND revoked_at IS NULL AND credits + ? <= ${MAX_BALANCE}`).run(credits, id, credits).changes === 1;
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
