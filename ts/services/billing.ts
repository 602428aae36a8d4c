// Charging and usage, over either store (LedgerOps: SQLite for one node, PostgreSQL for
// several). A charge checks the balance, takes the credits and writes the request's usage row
// in one atomic step of the store, so concurrent requests (in one process or several) can never
// spend the same credits twice or drive a balance below zero. Every location-map request made
// with a valid key writes exactly one usage row (reading the free usage report writes none: the
// report is about the billable API).
import type { ChargeResult, LedgerOps, UsageEntry } from '../db/ledger.ts';
import { PLAN_RULES } from '../api/plans.ts';
import type { ApiKey } from './keys.ts';
import { MAX_WINDOW_DAYS } from '../api/schemas.ts';
import { DAY_MS } from '../time.ts';

/** Raw usage rows are kept this long (the longest report window plus its partial first day);
 * the daily rollups, which reports read for whole days, are kept for good. */
export const RAW_USAGE_KEEP_MS = (MAX_WINDOW_DAYS + 1) * DAY_MS;
/** Rows one pruning transaction deletes: short enough never to hold the write lock long. */
const PRUNE_BATCH = 5000;

export type { ChargeResult, UsageEntry };

export class Billing {
  /** Refused requests not yet written: key id → entry and count. */
  readonly #rejected = new Map<string, { entry: UsageEntry; at: number; n: number }>();
  #flushTimer: NodeJS.Timeout | undefined;
  constructor(
    private readonly ledger: LedgerOps,
    private readonly now: () => number = Date.now,
    /** Refused requests are written at most this often (one row per key with their count). */
    private readonly flushMs = 1000,
  ) {}

  /**
   * A refused request (429): counted in memory, written with the others of its key as one
   * row within `flushMs`; reports count them meanwhile from memory (`pendingRejected`). A flood
   * of refusals costs no write each; a crash loses at most a second of their count (they were
   * never charged).
   */
  countRejected(key: ApiKey, entry: UsageEntry): void {
    const pending = this.#rejected.get(key.id);
    if (pending) pending.n++;
    else this.#rejected.set(key.id, { entry, at: this.now(), n: 1 });
    this.#flushTimer ??= setTimeout(() => void this.flushRejected().catch(() => {}), this.flushMs).unref();
  }

  /** The refusals of a key counted but not yet written, as usage groups. */
  pendingRejected(keyId: string): { at: number; status: number | null; format: string | null; n: number }[] {
    const r = this.#rejected.get(keyId);
    return r ? [{ at: r.at, status: r.entry.status, format: r.entry.format, n: r.n }] : [];
  }

  /** Writes the counted refusals (also at shutdown). A busy ledger keeps them for the next try. */
  async flushRejected(): Promise<void> {
    clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    if (this.#rejected.size === 0) return;
    const batch = [...this.#rejected];
    this.#rejected.clear();
    try {
      await this.ledger.recordMany(batch.map(([keyId, r]) => ({ keyId, entry: r.entry, at: r.at, n: r.n })));
    } catch (e) {
      // Kept, not lost: merged back, written with the next flush.
      for (const [keyId, r] of batch) {
        const now = this.#rejected.get(keyId);
        if (now) now.n += r.n;
        else this.#rejected.set(keyId, r);
      }
      this.#flushTimer ??= setTimeout(() => void this.flushRejected().catch(() => {}), this.flushMs).unref();
      throw e;
    }
  }

  /**
   * Deletes raw usage rows older than `RAW_USAGE_KEEP_MS`, in small transactions with the
   * event loop free between them; the rollups keep their counts. Returns the rows deleted.
   */
  async pruneUsage(): Promise<number> {
    const before = Math.floor((this.now() - RAW_USAGE_KEEP_MS) / DAY_MS) * DAY_MS;
    let deleted = 0;
    for (;;) {
      const n = await this.ledger.pruneUsage(before, PRUNE_BATCH);
      deleted += n;
      if (n < PRUNE_BATCH) return deleted;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** Takes `cost` credits and records the usage row with `entry.status`; on a short balance
   * nothing is taken and the row is recorded as 402. Internal keys are never debited: they are
   * charged 0. A busy store is waited for without blocking the event loop, up to a second,
   * then the busy error is thrown (an answer of 503, nothing charged); `cancelled` is asked
   * before each try. */
  charge(key: ApiKey, cost: number, entry: UsageEntry, cancelled?: () => boolean): Promise<ChargeResult> {
    return this.ledger.charge({ keyId: key.id, cost, unlimited: PLAN_RULES[key.plan].unlimited, entry, at: this.now() }, cancelled);
  }

  /** A request that charged nothing (an error, a free endpoint). */
  record(key: ApiKey, entry: UsageEntry): Promise<void> {
    return this.ledger.record(key.id, entry, this.now());
  }

  balance(key: ApiKey): Promise<number> {
    return this.ledger.balance(key.id);
  }
}
