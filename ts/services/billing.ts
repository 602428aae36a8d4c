// Charging and usage. A charge checks the balance, takes the credits and writes the request's
// usage row in one IMMEDIATE transaction, so concurrent requests (in one process or several
// sharing the database file) can never spend the same credits twice or drive a balance below
// zero. Every location-map request made with a valid key writes exactly one usage row (reading
// the free usage report writes none: the report is about the billable API).
import { retryBusy, type DB } from '../db/database.ts';
import { PLAN_RULES, type ApiKey } from './keys.ts';

export interface UsageEntry {
  endpoint: string;
  status: number | null;
  format: string | null;
}

export type ChargeResult = { ok: true; charged: number; remaining: number } | { ok: false; balance: number; revoked?: true };

export class Billing {
  readonly #insertUsage;
  readonly #balance;
  readonly #state;
  readonly #debit;
  constructor(
    private readonly db: DB,
    private readonly now: () => number = Date.now,
  ) {
    this.#insertUsage = db.prepare('INSERT INTO usage (key_id, at, endpoint, status, format, credits) VALUES (?, ?, ?, ?, ?, ?)');
    this.#balance = db.prepare<[string], { credits: number }>('SELECT credits FROM api_keys WHERE id = ?');
    this.#state = db.prepare<[string], { credits: number; revoked_at: number | null }>('SELECT credits, revoked_at FROM api_keys WHERE id = ?');
    this.#debit = db.prepare('UPDATE api_keys SET credits = credits - ? WHERE id = ? AND credits >= ?');
  }

  /** Takes `cost` credits and records the usage row with `entry.status`; on a short balance
   * nothing is taken and the row is recorded as 402. Internal keys are never debited: they are
   * charged 0. While another process holds the write lock it waits without blocking the event
   * loop, up to a second, then throws the busy error (an answer of 503, nothing charged). */
  charge(key: ApiKey, cost: number, entry: UsageEntry, cancelled?: () => boolean): Promise<ChargeResult> {
    return retryBusy(() => this.#chargeNow(key, cost, entry), this.now, cancelled);
  }

  #chargeNow(key: ApiKey, cost: number, entry: UsageEntry): ChargeResult {
    return this.db
      .transaction((): ChargeResult => {
        // The key is read again inside the transaction: one revoked while its request ran
        // pays nothing (the request is recorded as the 401 it gets).
        const state = this.#state.get(key.id);
        if (!state || state.revoked_at !== null) {
          this.#insertUsage.run(key.id, this.now(), entry.endpoint, 401, entry.format, 0);
          return { ok: false, balance: state?.credits ?? 0, revoked: true };
        }
        const balance = state.credits;
        if (PLAN_RULES[key.plan].unlimited) {
          this.#insertUsage.run(key.id, this.now(), entry.endpoint, entry.status, entry.format, 0);
          return { ok: true, charged: 0, remaining: balance };
        }
        if (balance < cost || this.#debit.run(cost, key.id, cost).changes !== 1) {
          this.#insertUsage.run(key.id, this.now(), entry.endpoint, 402, entry.format, 0);
          return { ok: false, balance };
        }
        this.#insertUsage.run(key.id, this.now(), entry.endpoint, entry.status, entry.format, cost);
        return { ok: true, charged: cost, remaining: balance - cost };
      })
      .immediate();
  }

  /** A request that charged nothing (an error, a free endpoint); waits for a busy lock as
   * `charge` does. */
  record(key: ApiKey, entry: UsageEntry): Promise<void> {
    return retryBusy(() => {
      this.#insertUsage.run(key.id, this.now(), entry.endpoint, entry.status, entry.format, 0);
    }, this.now);
  }

  balance(key: ApiKey): number {
    return this.#balance.get(key.id)?.credits ?? 0;
  }
}
