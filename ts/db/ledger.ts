// The ledger's operations, as both stores provide them: SQLite (ts/db/database.ts, one node, the
// default) and PostgreSQL (ts/db/pg-ledger.ts, several nodes on one database). Each operation
// that decides something (a charge) is one atomic step in its store; the services build the
// rules (plans, prices, the refusal counting) on top, the same over either.

/** A usage row's request: what was asked and how it was answered. */
export interface UsageEntry {
  endpoint: string;
  status: number | null;
  format: string | null;
}

export type ChargeResult = { ok: true; charged: number; remaining: number } | { ok: false; balance: number; revoked?: true };

/** One `charge`: the key, what to take, and the row to write with it. */
export interface ChargeRequest {
  keyId: string;
  cost: number;
  /** Internal keys: nothing is taken, the row records 0. */
  unlimited: boolean;
  entry: UsageEntry;
  at: number;
}

/** Usage rows that took nothing, written together: each `n` requests of one key. */
export interface UsageBatchRow {
  keyId: string;
  entry: UsageEntry;
  at: number;
  n: number;
}

/** The store's health, for the status endpoint: a round trip's time, or why it failed. */
export type LedgerHealth = { ok: true; latencyMs: number } | { ok: false; error: string };

export interface LedgerOps {
  /** Which store this is, as the status endpoint reports it. */
  readonly kind: 'sqlite' | 'postgres';
  /** One round trip to the store; never throws. */
  ping(): Promise<LedgerHealth>;
  /** Releases the store (the file, or the pool's connections). */
  close(): Promise<void>;
  /**
   * Reads the key and its balance, takes `cost` when the balance covers it and the key is not
   * revoked, and writes the request's usage row (its status, or 402 for a short balance, or
   * 401 for a key revoked meanwhile, with the credits taken), all in one atomic step: racing
   * charges on one key, from any number of processes, never take more than the balance.
   * `cancelled` is asked before the step starts (and before each retry of a busy store): a
   * request answered meanwhile writes nothing (`WriteCancelled`).
   */
  charge(req: ChargeRequest, cancelled?: () => boolean): Promise<ChargeResult>;
  /** A usage row that took nothing; `requests` > 1 for a batch of counted refusals. */
  record(keyId: string, entry: UsageEntry, at: number, requests?: number): Promise<void>;
  /** Several such rows in one atomic write: all of them or none. */
  recordMany(rows: UsageBatchRow[]): Promise<void>;
  /** Deletes at most `limit` raw usage rows older than `before`, oldest first; returns how many. */
  pruneUsage(before: number, limit: number): Promise<number>;
  /** The key's balance now (0 for an unknown key). */
  balance(keyId: string): Promise<number>;
  /** A key's raw usage rows of [from, to) (milliseconds), grouped by UTC day, status, format. */
  rawUsage(keyId: string, from: number, to: number): Promise<UsageGroup[]>;
  /** A key's rollup rows of days [firstDay, lastDay] (days since the epoch). */
  dailyUsage(keyId: string, firstDay: number, lastDay: number): Promise<UsageGroup[]>;
  /** Replaces the brand_summary stamps with these brands' counts from one refresh. */
  stampBrandSummary(rows: BrandStamp[], snapshotVersion: string, at: number): Promise<void>;
  /** The newest brand_summary stamp (milliseconds), or null before the first refresh. */
  brandSummaryStampedAt(): Promise<number | null>;
  insertKey(row: KeyRow): Promise<void>;
  keyByHash(hash: Buffer): Promise<KeyRow | null>;
  keyById(id: string): Promise<KeyRow | null>;
  /** Every key, oldest first. */
  listKeys(): Promise<KeyRow[]>;
  /** False when the key is unknown or revoked already. */
  revokeKey(id: string, at: number): Promise<boolean>;
  /** Adds credits; false when there is no such key, it is revoked, or the balance would pass
   * MAX_BALANCE. */
  topUpKey(id: string, credits: number): Promise<boolean>;
  /**
   * A token that changes whenever a key is added, revoked or topped up, by this process or
   * any other: authenticated keys are cached while it stays the same.
   */
  keysVersion(): Promise<string>;
  /**
   * The cluster's rate-limit buckets, where several nodes share this store (PostgreSQL); absent
   * on SQLite, whose one node keeps its buckets in memory.
   */
  readonly rateBuckets?: RateBuckets;
}

/** What a node gets from the shared bucket: tokens to spend, and what the bucket holds after. */
export interface RateLease {
  granted: number;
  /** Tokens left in the shared bucket (fractional). */
  left: number;
}

export interface RateBuckets {
  /**
   * Refills `bucket` (`rate` tokens a second up to `burst`) up to time `at` (milliseconds, the
   * asking node's clock; a bucket's time never goes back), adds back `giveBack` unspent tokens
   * of an expired lease, and takes up to `want` whole tokens, in one atomic step.
   */
  lease(bucket: string, rate: number, burst: number, want: number, giveBack: number, at: number): Promise<RateLease>;
}

/** An API key as the ledger stores it: the key itself only as its SHA-256. */
export interface KeyRow {
  id: string;
  keyHash: Buffer;
  prefix: string;
  name: string | null;
  plan: string;
  credits: number;
  createdAt: number;
  expiresAt: number | null;
  revokedAt: number | null;
}

/** api_keys as either store returns it: SQLite's integers as numbers, PostgreSQL's BIGINTs as
 * strings (they may exceed a double; ours fit). */
export interface KeyTableRow {
  id: string;
  key_hash: Buffer;
  prefix: string;
  name: string | null;
  plan: string;
  credits: number | string;
  created_at: number | string;
  expires_at: number | string | null;
  revoked_at: number | string | null;
}

/** A table row as the ledger's `KeyRow`. */
export const keyRowOf = (r: KeyTableRow): KeyRow => ({
  id: r.id,
  keyHash: r.key_hash,
  prefix: r.prefix,
  name: r.name,
  plan: r.plan,
  credits: Number(r.credits),
  createdAt: Number(r.created_at),
  expiresAt: r.expires_at === null ? null : Number(r.expires_at),
  revokedAt: r.revoked_at === null ? null : Number(r.revoked_at),
});

/** Usage of one UTC day, status and format: `n` requests, `credits` charged. */
export interface UsageGroup {
  day: number;
  status: number | null;
  format: string | null;
  n: number;
  credits: number;
}

/** One brand's count at a refresh. */
export interface BrandStamp {
  brand: string;
  ticker: string | null;
  locationCount: number;
}

/** Thrown by a ledger when the caller no longer wants the write (its request was answered). */
export class WriteCancelled extends Error {}

/** How long a request waits for the SQLite ledger's write lock in all before it is answered
 * 503 (STOREMAP_LEDGER_BUSY_MS). Here, with no imports, so the config can name it without
 * loading SQLite. */
export const BUSY_DEADLINE_MS = 1000;

/** How long opening a PostgreSQL ledger waits for its first connection, by default
 * (STOREMAP_DATABASE_CONNECT_TIMEOUT_MS). */
export const CONNECT_DEADLINE_MS = 10_000;

/** A charge waiting for its batch (both stores commit the charges that arrive together in one
 * write: group commit). */
export interface WaitingCharge {
  req: ChargeRequest;
  cancelled: () => boolean;
  resolve: (r: ChargeResult) => void;
  reject: (e: unknown) => void;
}

/** At most this many charges in one batch. */
export const MAX_CHARGE_BATCH = 128;

/** A key's row as a charge reads it (locked), or null for an unknown key. */
export interface KeyState {
  credits: number;
  revoked: boolean;
}

/** What one charge does to the store: the credits to take and the usage row to write. */
export interface ChargePlan {
  debit: number;
  /** The usage row's status and credits; none for an unknown key (there is no key to own it). */
  usage: { status: number | null; credits: number } | null;
  result: ChargeResult;
}

/** The one rule of a charge, for both stores to carry out inside their atomic step: a key
 * revoked while its request ran pays nothing and is recorded as the 401 it gets; an unlimited
 * key is charged 0; a balance below the cost takes nothing and is recorded as 402. */
export function planCharge(state: KeyState | null, req: ChargeRequest): ChargePlan {
  if (!state || state.revoked) {
    return { debit: 0, usage: state ? { status: 401, credits: 0 } : null, result: { ok: false, balance: state?.credits ?? 0, revoked: true } };
  }
  if (req.unlimited) return { debit: 0, usage: { status: req.entry.status, credits: 0 }, result: { ok: true, charged: 0, remaining: state.credits } };
  if (state.credits < req.cost) return { debit: 0, usage: { status: 402, credits: 0 }, result: { ok: false, balance: state.credits } };
  return { debit: req.cost, usage: { status: req.entry.status, credits: req.cost }, result: { ok: true, charged: req.cost, remaining: state.credits - req.cost } };
}
