// The ledger's operations on PostgreSQL. A charge locks the key's row (SELECT ... FOR UPDATE
// inside charge_many), so charges on one key from every node queue on that row and each sees
// the balance the one before it left: a balance of N credits admits exactly N one-credit
// requests however many nodes race, and never goes below zero (the column's CHECK would refuse
// it anyway). Charges on different keys do not wait for each other. With credit leases on
// (STOREMAP_CREDIT_LEASE), a key that holds many credits is charged from a block this node took
// off its row instead (charge_leased: the lease's row is locked, this node's alone).
import type pg from 'pg';
import { MAX_CHARGE_BATCH, planCharge, WriteCancelled, type WaitingCharge, type LedgerHealth, type BrandStamp, type ChargeRequest, type ChargeResult, type KeyRow, type KeyTableRow, keyRowOf, type LedgerOps, type RateBuckets, type RateLease, type UsageBatchRow, type UsageEntry, type UsageGroup } from './ledger.ts';
import { DAY_MS } from '../time.ts';
import { Linger, type Lingering } from './linger.ts';
import { inTransaction, pingPostgres, withClient } from './postgres.ts';
import { MAX_BALANCE } from '../api/plans.ts';

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
const CHARGE_MANY = 'SELECT o_i, o_credits, o_revoked, o_leased FROM charge_many($1, $2, $3, $4, $5, $6, $7)';
const CHARGE_LEASED = 'SELECT o_i, o_ok, o_balance FROM charge_leased($1, $2, $3, $4, $5, $6, $7, $8)';
/** api_keys' columns, a key's credits counted as its balance: the row's and its leases' unspent. */
const LEASED_BALANCE = 'credits + CASE WHEN leases > 0 THEN leased_credits(id) ELSE 0 END';
const KEY_COLUMNS = `id, key_hash, prefix, name, plan, ${LEASED_BALANCE} AS credits, created_at, expires_at, revoked_at`;

/** Batches out at once per node; the charges that arrive meanwhile wait and go together. One:
 * bench/ledger-nodes.ts measured one node at 3,084 charged req/s with one (92 % of SQLite) and
 * 2,723 with two, whose batches were smaller; again once small queries ran inline (the node's
 * main thread lighter): 3,631 with one, 3,187 with two. The price: a call that waits on a key's row lock
 * (another node's batch on the same key, a top-up) holds this node's other charges for as long;
 * those locks are held only while a call or a key update runs. */
const BATCHES_IN_FLIGHT = 1;
/** Balances kept at most (one small entry per key seen); past it they are all let go. */
const MAX_KEPT_BALANCES = 100_000;
export interface PgLedgerOptions {
  /** Credits a lease takes (0 or absent: no leases are taken). */
  leaseCredits?: number;
  /** How long a lease lives after its last spend. */
  leaseTtlMs?: number;
  /** How long a key's balance, as this node's last charge or read left it, answers `balance`
   * without a round trip (0 or absent: every call reads it). */
  balanceTtlMs?: number;
  /** Longest a charge waits for company, from when it came (0 or absent: a batch goes as soon
   * as no batch is out). See linger.ts. */
  lingerMs?: number;
  /** The clock leases, balances and lingering (each charge's wait, the quiet spells) are timed
   * on (the node's, as the charges' `at`). */
  now?: () => number;
}

/** A lease this node holds: `left` is what it may still spend, the charges out counted. */
interface HeldLease {
  id: string;
  keyId: string;
  left: number;
  /** Spent from until then on this node's clock: a margin before the lease's expiry, which
   * the database checks again. */
  until: number;
  lastUsed: number;
  /** Charges out on it. */
  out: number;
  /** Taking no more charges: given back once `out` is 0. */
  retired?: boolean;
  /** Called when a retired lease's give-back is done (or failed). */
  onReturned?: () => void;
}

/** A charge waiting for a call, since when (lingering counts from then). */
interface PgWaiting extends WaitingCharge, Lingering {}

interface LeasedCharge extends PgWaiting {
  lease: HeldLease;
}

/** The options a node's configuration gives its ledger (`storemap serve`, and the test servers). */
export function pgLedgerOptions(c: { creditLease: number; creditLeaseTtlMs: number; keysRecheckMs: number; ledgerLingerMs: number }): PgLedgerOptions {
  return { leaseCredits: c.creditLease, leaseTtlMs: c.creditLeaseTtlMs, balanceTtlMs: c.keysRecheckMs, lingerMs: c.ledgerLingerMs };
}

export class PgLedger implements LedgerOps {
  readonly kind = 'postgres';
  readonly rateBuckets: RateBuckets;
  private readonly leaseCredits: number;
  private readonly leaseTtlMs: number;
  private readonly now: () => number;
  /** Leases held, by key. */
  private readonly leases = new Map<string, HeldLease>();
  /** Keys a lease is being taken for. */
  private readonly taking = new Set<string>();
  private readonly leaseSweep: NodeJS.Timeout | undefined;
  private closed = false;

  private readonly balanceTtlMs: number;
  /** Balances as this node last saw them: a charge's answer, or a read's (and when). */
  private readonly balances = new Map<string, { credits: number; at: number }>();

  constructor(
    private readonly pool: pg.Pool,
    opts: PgLedgerOptions = {},
  ) {
    this.leaseCredits = opts.leaseCredits ?? 0;
    this.leaseTtlMs = opts.leaseTtlMs ?? 10_000;
    this.balanceTtlMs = opts.balanceTtlMs ?? 0;
    this.now = opts.now ?? Date.now;
    this.lingerMs = opts.lingerMs ?? 0;
    this.linger = new Linger(this.lingerMs, this.now, () => this.sendBatch());
    this.leasedLinger = new Linger(this.lingerMs, this.now, () => this.sendLeased());
    // A lease no request used for a while goes back, so other nodes can spend its credits.
    if (this.leaseCredits > 0) this.leaseSweep = setInterval(() => this.returnIdleLeases(), Math.max(10, this.idleMs() / 2)).unref();
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

  /** Gives back every lease held (after the charges out on them), then closes the pool. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.leaseSweep);
    this.linger.stop();
    this.leasedLinger.stop();
    while (this.inFlight > 0 || this.leasedOut) await new Promise((r) => setTimeout(r, 5));
    for (const l of [...this.leases.values(), ...this.retiring]) void this.giveBack(l).catch(() => {});
    this.retiring.clear();
    while (this.leaseCalls.size > 0) await Promise.allSettled([...this.leaseCalls]);
    // Charges that waited for those give-backs go to the key's rows before the pool ends.
    while (this.deferred > 0 || this.inFlight > 0) await new Promise((r) => setTimeout(r, 5));
    await this.pool.end();
  }

  /** The leases this node holds now (one a key at most). */
  leasesHeld(): number {
    return this.leases.size;
  }

  /** A lease unused this long goes back: a fifth of its life, at most a second. */
  private idleMs(): number {
    return Math.min(1000, this.leaseTtlMs / 5);
  }

  private returnIdleLeases(): void {
    const now = this.now();
    for (const l of this.leases.values()) if (l.out === 0 && (now - l.lastUsed > this.idleMs() || now >= l.until)) void this.giveBack(l).catch(() => {});
  }

  /** Drops a lease this node holds and gives its unspent credits back to the key's row (a
   * lease reclaimed meanwhile gives nothing). Failing (no ledger), it expires instead. */
  private async giveBack(l: HeldLease): Promise<void> {
    if (this.leases.get(l.keyId) === l) this.leases.delete(l.keyId);
    this.markReturning(l);
    try {
      await this.tracked(this.pool.query('SELECT lease_return($1)', [l.id]));
    } finally {
      l.onReturned?.();
    }
  }

  /** Lease calls out (takes and give-backs), which closing waits for before it ends the pool. */
  private readonly leaseCalls = new Set<Promise<unknown>>();
  private tracked<T>(p: Promise<T>): Promise<T> {
    const settled = p.then(
      () => {},
      () => {},
    );
    this.leaseCalls.add(settled);
    void settled.then(() => this.leaseCalls.delete(settled));
    return p;
  }

  /** No more charges go to this lease; it goes back once those out on it are in. */
  private retire(l: HeldLease): void {
    if (this.leases.get(l.keyId) === l) this.leases.delete(l.keyId);
    if (l.retired) return;
    l.retired = true;
    this.markReturning(l);
    if (l.out === 0) void this.giveBack(l).catch(() => {});
    else this.retiring.add(l);
  }

  /** From now until the lease's unspent credits are back on the key's row, charges the row gets
   * wait for them (retired, idle, expired or closing alike). A spent-out lease gives nothing
   * back: nothing to wait for. */
  private markReturning(l: HeldLease): void {
    if (l.onReturned || l.left <= 0) return;
    const returned = new Promise<void>((resolve) => (l.onReturned = resolve));
    this.returning.set(l.keyId, returned);
    void returned.then(() => {
      if (this.returning.get(l.keyId) === returned) this.returning.delete(l.keyId);
    });
  }

  /** A charge on a lease is in (spent, refused, cancelled or failed): a spent-out lease is
   * retired, and a retired one goes back with its last charge. */
  private settle(l: HeldLease): void {
    l.out--;
    if (l.left === 0 && !l.retired) this.retire(l);
    else if (l.retired && l.out === 0 && this.retiring.delete(l)) void this.giveBack(l).catch(() => {});
  }

  /** Retired leases with charges still out (closing gives them back too). */
  private readonly retiring = new Set<HeldLease>();
  /** By key, the give-back of a lease retired and not yet back on the key's row. */
  private readonly returning = new Map<string, Promise<void>>();
  /** Charges waiting for such a give-back (closing waits for them). */
  private deferred = 0;

  /** Takes a lease for a key whose balance just showed it can hold one, unless one is held or
   * on its way; a lease refused or failed leaves the key on its row. */
  private takeLease(keyId: string): void {
    if (this.closed || this.leases.has(keyId) || this.taking.has(keyId)) return;
    this.taking.add(keyId);
    const at = this.now();
    this.tracked(this.pool.query<{ o_lease: string | null }>('SELECT o_lease FROM lease_take($1, $2, $3, $4)', [keyId, this.leaseCredits, at, this.leaseTtlMs]))
      .then(
        (r) => {
          const id = r.rows[0]?.o_lease;
          if (id == null) return;
          const lease: HeldLease = { id, keyId, left: this.leaseCredits, until: at + this.leaseTtlMs - this.leaseMargin(), lastUsed: at, out: 0 };
          if (this.closed) void this.giveBack(lease).catch(() => {});
          else this.leases.set(keyId, lease);
        },
        () => {},
      )
      .finally(() => this.taking.delete(keyId));
  }

  /** How long before its expiry a lease stops being spent here: a spend on its way when the
   * lease expires is refused by the database and goes to the key's row, so this only saves
   * that detour. A spend may linger before it goes, so the linger is added (up to half the
   * lease's life). */
  private leaseMargin(): number {
    return Math.min(this.leaseTtlMs / 2, Math.min(500, this.leaseTtlMs / 4) + this.lingerMs);
  }

  private readonly waiting: PgWaiting[] = [];
  private inFlight = 0;
  private readonly lingerMs: number;
  /** Holds the key rows' next batch back for more charges, and the leases' (when on). */
  private readonly linger: Linger;
  private readonly leasedLinger: Linger;

  /** A charge in one round trip, shared with the charges that arrive while this node's batches
   * are out (group commit): under load a call carries many, so each costs PostgreSQL and the
   * node a fraction of a statement; alone it goes at once (lingering, when on, may hold it for
   * company: linger.ts). A key's row is locked only while the call runs, never across round
   * trips (it was five, BEGIN, SELECT … FOR UPDATE, UPDATE, INSERT, COMMIT, which queued a hot
   * key's charges behind the network). */
  charge(req: ChargeRequest, cancelled: () => boolean = () => false): Promise<ChargeResult> {
    return new Promise((resolve, reject) => {
      const since = this.now();
      const lease = this.leaseFor(req);
      if (lease) {
        lease.left -= req.cost;
        lease.out++;
        this.leasedWaiting.push({ req, cancelled, resolve, reject, since, lease });
        this.sendLeased();
        return;
      }
      const charge = { req, cancelled, resolve, reject, since };
      // A lease too small for this charge was just retired (or one still goes back): its
      // unspent credits are the key's, so the row is charged once they are on it. Charged at
      // once, a key whose row and lease together can pay would be refused.
      const returning = this.returning.get(req.keyId);
      if (returning) {
        this.deferred++;
        void returning.then(() => {
          this.deferred--;
          this.waiting.push(charge);
          this.sendBatch();
        });
        return;
      }
      this.waiting.push(charge);
      this.sendBatch();
    });
  }

  /** The lease this charge is spent from, if this node holds a live one that covers it. A
   * lease that cannot cover it goes back once its charges are in (a new one is taken when the
   * key's row shows it can hold one). */
  private leaseFor(req: ChargeRequest): HeldLease | undefined {
    if (this.leaseCredits === 0 || req.unlimited) return undefined;
    const l = this.leases.get(req.keyId);
    if (!l) return undefined;
    const now = this.now();
    if (l.left >= req.cost && now < l.until) {
      l.lastUsed = now;
      return l;
    }
    this.retire(l);
    return undefined;
  }

  private readonly leasedWaiting: LeasedCharge[] = [];
  private leasedOut = false;

  /** The charges spent from leases, as one call of charge_leased, one call out at a time: a
   * charge the database refuses (the lease expired, was given back, or its key revoked) goes to
   * the key's row as any other, and the lease is dropped. */
  private sendLeased(): void {
    if (this.leasedOut || this.leasedWaiting.length === 0 || !this.leasedLinger.go(this.leasedWaiting)) return;
    this.leasedOut = true;
    let batch: LeasedCharge[] = [];
    const take = () => {
      for (const w of this.leasedWaiting.splice(0, MAX_CHARGE_BATCH)) {
        if (w.cancelled()) {
          w.lease.left += w.req.cost;
          this.settle(w.lease);
          w.reject(new WriteCancelled('the request was answered while it waited for the ledger'));
        } else batch.push(w);
      }
      // By key (the order charge_many takes keys in), then by the usage rollup row each charge
      // writes (day, status, format), so that two nodes' batches on one key, which no key lock
      // orders, take those rows in one order and never wait for each other in a circle.
      batch.sort((a, b) => compareText(a.req.keyId, b.req.keyId) || rollupOrder(a.req, b.req) || Number(a.lease.id) - Number(b.lease.id));
    };
    const sentAt = this.now();
    const sentTopUps = this.topUps;
    withClient(
      this.pool,
      async (client) => {
        if (batch.length === 0) return;
        const col = <T>(f: (w: LeasedCharge) => T) => batch.map(f);
        const values = [col((w) => w.lease.id), col((w) => w.req.cost), col((w) => w.req.at), sentAt, this.leaseTtlMs, col((w) => w.req.entry.endpoint), col((w) => w.req.entry.status), col((w) => w.req.entry.format)];
        const r = await client.query<{ o_i: number; o_ok: boolean; o_balance: string | null }>({ name: 'storemap_charge_leased', text: CHARGE_LEASED, values });
        const done = new Map(r.rows.map((row) => [row.o_i - 1, row]));
        batch.forEach((w, i) => {
          const row = done.get(i);
          if (row?.o_ok) {
            w.lease.until = Math.max(w.lease.until, sentAt + this.leaseTtlMs - this.leaseMargin());
            this.sawBalance(w.req.keyId, Number(row.o_balance), sentAt, sentTopUps);
            w.resolve({ ok: true, charged: w.req.cost, remaining: Number(row.o_balance) });
          } else {
            // Refused: this lease is done here, and the charge goes to the key's row.
            w.lease.left = 0;
            this.waiting.push(w);
          }
          this.settle(w.lease);
        });
        // A refused spend keeps the time it came: its linger counts from then, not afresh.
        this.sendBatch();
      },
      take,
    )
      .catch((e: unknown) => {
        // Whether the call's spends were written is not known here: the leases keep them
        // counted as spent (the database has the truth, and gives back what is left).
        const failed = batch.length > 0 ? batch : this.leasedWaiting.splice(0, MAX_CHARGE_BATCH);
        for (const w of failed) {
          this.settle(w.lease);
          w.reject(e);
        }
      })
      .finally(() => {
        batch = [];
        this.leasedOut = false;
        this.sendLeased();
      });
  }


  /** The waiting charges on the key rows, as one call of charge_many. */
  private sendBatch(): void {
    if (this.inFlight >= BATCHES_IN_FLIGHT || this.waiting.length === 0 || !this.linger.go(this.waiting)) return;
    this.inFlight++;
    let batch: PgWaiting[] = [];
    // Taken once a connection is had (waiting for one is where a request can run out of
    // time): a charge whose request was answered meanwhile is dropped, and writes nothing.
    const take = () => {
      for (const w of this.waiting.splice(0, MAX_CHARGE_BATCH)) {
        if (w.cancelled()) w.reject(new WriteCancelled('the request was answered while it waited for the ledger'));
        else batch.push(w);
      }
    };
    const sentAt = this.now();
    const sentTopUps = this.topUps;
    withClient(
      this.pool,
      async (client) => {
        if (batch.length === 0) return;
        const col = <T>(f: (r: ChargeRequest) => T) => batch.map((w) => f(w.req));
        const values = [col((r) => r.keyId), col((r) => r.cost), col((r) => r.unlimited), col((r) => r.at), col((r) => r.entry.endpoint), col((r) => r.entry.status), col((r) => r.entry.format)];
        const r = await client.query<{ o_i: number; o_credits: string; o_revoked: boolean; o_leased: string }>({ name: 'storemap_charge_many', text: CHARGE_MANY, values });
        const found = new Map(r.rows.map((row) => [row.o_i - 1, row]));
        batch.forEach((w, i) => {
          const row = found.get(i);
          const result = planCharge(row ? { credits: Number(row.o_credits), revoked: row.o_revoked } : null, w.req).result;
          if (result.ok && row) {
            // The balance after the charge counts what the key's leases hold unspent; a refusal
            // says what the key's row could pay (credits leased to other nodes cannot pay it).
            const leased = Number(row.o_leased);
            if (this.leaseCredits > 0 && !w.req.unlimited && result.remaining >= this.leaseCredits) this.takeLease(w.req.keyId);
            result.remaining += leased;
          }
          // A refusal's balance leaves out credits leased to other nodes: read afresh next time.
          if (row && result.ok) this.sawBalance(w.req.keyId, result.remaining, sentAt, sentTopUps);
          else this.balances.delete(w.req.keyId);
          w.resolve(result);
        });
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
    const seen = this.balances.get(keyId);
    if (seen && this.now() - seen.at < this.balanceTtlMs) return Promise.resolve(seen.credits);
    return new Promise((resolve, reject) => {
      this.balancesWaiting.push({ keyId, resolve, reject });
      this.readBalances();
    });
  }

  /** Keeps a balance this node saw, as of `at` (when the statement that saw it was sent): what
   * other nodes spend after it is not in it, so it may be high for up to `balanceTtlMs` (a
   * request then does its work and its charge refuses it, 402, nothing taken). Low it is only
   * after a top-up made on another node, and for as long (STOREMAP_KEYS_RECHECK_MS, the time
   * other key changes take to reach a node); a top-up made here is seen at once. */
  private sawBalance(keyId: string, credits: number, at: number, topUpsWhenSent: number): void {
    if (this.balanceTtlMs === 0) return;
    const had = this.balances.get(keyId);
    if (had && had.at > at) return;
    // A top-up on this node since the statement was sent: what it saw may predate it.
    if (topUpsWhenSent !== this.topUps) return;
    if (this.balances.size >= MAX_KEPT_BALANCES && !had) this.balances.clear();
    this.balances.set(keyId, { credits, at });
  }

  private readBalances(): void {
    if (this.balancesOut || this.balancesWaiting.length === 0) return;
    this.balancesOut = true;
    const batch = this.balancesWaiting.splice(0, MAX_CHARGE_BATCH);
    const ids = [...new Set(batch.map((w) => w.keyId))];
    const sentAt = this.now();
    const sentTopUps = this.topUps;
    this.pool
      .query<{ id: string; credits: string }>(`SELECT id, ${LEASED_BALANCE} AS credits FROM api_keys WHERE id = ANY($1::text[])`, [ids])
      .then(
        (r) => {
          const found = new Map(r.rows.map((row) => [row.id, Number(row.credits)]));
          for (const [id, credits] of found) this.sawBalance(id, credits, sentAt, sentTopUps);
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
    const r = await this.pool.query<KeyTableRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE key_hash = $1`, [hash]);
    return r.rows.length > 0 ? keyRowOf(r.rows[0]) : null;
  }

  async keyById(id: string): Promise<KeyRow | null> {
    const r = await this.pool.query<KeyTableRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = $1`, [id]);
    return r.rows.length > 0 ? keyRowOf(r.rows[0]) : null;
  }

  async listKeys(): Promise<KeyRow[]> {
    return (await this.pool.query<KeyTableRow>(`SELECT ${KEY_COLUMNS} FROM api_keys ORDER BY created_at, id`)).rows.map(keyRowOf);
  }

  async revokeKey(id: string, at: number): Promise<boolean> {
    return ((await this.pool.query('UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL', [at, id])).rowCount ?? 0) === 1;
  }

  async topUpKey(id: string, credits: number): Promise<boolean> {
    // A balance seen by a statement sent before the top-up committed must not be kept after it.
    const changed = await this.topUp(id, credits);
    this.topUps++;
    this.balances.delete(id);
    return changed;
  }

  /** Top-ups this node has made: a balance seen by a statement sent before the last is not kept. */
  private topUps = 0;

  private topUp(id: string, credits: number): Promise<boolean> {
    // A top-up moves keys_version by hand: the trigger leaves credit changes out (charges).
    return inTransaction(this.pool, async (client) => {
      const changed = (await client.query(`UPDATE api_keys SET credits = credits + $1 WHERE id = $2 AND revoked_at IS NULL AND ${LEASED_BALANCE} + $1 <= ${MAX_BALANCE}`, [credits, id])).rowCount === 1;
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

const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The order of the usage_daily rows two charges write: day, status, format (as the rollup
 * keys them: a missing status is -1, a missing format ''). */
function rollupOrder(a: ChargeRequest, b: ChargeRequest): number {
  return Math.floor(a.at / DAY_MS) - Math.floor(b.at / DAY_MS) || (a.entry.status ?? -1) - (b.entry.status ?? -1) || compareText(a.entry.format ?? '', b.entry.format ?? '');
}
