// API keys: "sm_live_" + 24 hex characters, shown once at creation, stored only as SHA-256,
// compared in constant time. Plans decide formats, trial length and caps.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { DB } from '../db/database.ts';
import { DAY_MS } from '../time.ts';

export const PLANS = ['trial', 'standard', 'enterprise', 'internal'] as const;
export type Plan = (typeof PLANS)[number];

export const KEY_PATTERN = /^sm_live_[0-9a-f]{24}$/;

export const PLAN_RULES: Record<Plan, { dataFormats: boolean; unlimited: boolean; defaultCredits: number; trialDays?: number; maxLocations?: number }> = {
  trial: { dataFormats: false, unlimited: false, defaultCredits: 50, trialDays: 5, maxLocations: 50 },
  standard: { dataFormats: false, unlimited: false, defaultCredits: 1_000 },
  enterprise: { dataFormats: true, unlimited: false, defaultCredits: 10_000 },
  internal: { dataFormats: true, unlimited: true, defaultCredits: 0 },
};

export interface ApiKey {
  id: string;
  prefix: string;
  name: string | null;
  plan: Plan;
  /** The balance when the key was read (authentication may answer from its cache); the
   * ledger's balance now is `Billing.balance`. */
  credits: number;
  createdAt: number;
  expiresAt: number | null;
  revokedAt: number | null;
}

interface Row {
  id: string;
  key_hash: Buffer;
  prefix: string;
  name: string | null;
  plan: Plan;
  credits: number;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
}

const toKey = (r: Row): ApiKey => ({
  id: r.id,
  prefix: r.prefix,
  name: r.name,
  plan: r.plan,
  credits: r.credits,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  revokedAt: r.revoked_at,
});

const hash = (key: string) => createHash('sha256').update(key, 'utf8').digest();

/**
 * Authenticated keys, kept while the key table cannot have changed: every keyed request
 * checked its key with a SHA-256 and a query (a twentieth of the request's time). An entry is
 * good while the database's `data_version` (which moves when any other connection commits)
 * and this connection's own key-write count are both what they were when it was read; a
 * revocation, top-up or new key anywhere drops every entry. Only good keys are kept, at most
 * `MAX_CACHED_KEYS`. The charge reads the key again in its transaction whatever this says.
 */
const MAX_CACHED_KEYS = 10_000;
interface KeyCache {
  /** Key writes through this connection (data_version does not count a connection's own). */
  writes: number;
  stamp: string;
  keys: Map<string, ApiKey>;
}
const caches = new WeakMap<DB, KeyCache>();
function cacheOf(db: DB): KeyCache {
  let c = caches.get(db);
  if (!c) caches.set(db, (c = { writes: 0, stamp: '', keys: new Map() }));
  return c;
}

export class KeyStore {
  readonly #byHash;
  readonly #byId;
  constructor(
    private readonly db: DB,
    private readonly now: () => number = Date.now,
  ) {
    this.#byHash = db.prepare<[Buffer], Row>('SELECT * FROM api_keys WHERE key_hash = ?');
    this.#byId = db.prepare<[string], Row>('SELECT * FROM api_keys WHERE id = ?');
    this.#dataVersion = db.prepare<[], { data_version: number }>('PRAGMA data_version').pluck();
  }

  readonly #dataVersion;

  /** Drops every cached key: called after any write to the key table through this connection. */
  #wrote(): void {
    cacheOf(this.db).writes++;
  }

  create(opts: { plan: Plan; credits?: number; name?: string }): { key: string; record: ApiKey } {
    const rules = PLAN_RULES[opts.plan];
    const credits = opts.credits ?? rules.defaultCredits;
    if (!Number.isSafeInteger(credits) || credits < 0) throw new RangeError('credits must be a whole number >= 0');
    const key = `sm_live_${randomBytes(12).toString('hex')}`;
    const id = `key_${randomBytes(6).toString('hex')}`;
    const created = this.now();
    const expires = rules.trialDays ? created + rules.trialDays * DAY_MS : null;
    this.db
      .prepare('INSERT INTO api_keys (id, key_hash, prefix, name, plan, credits, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
      .run(id, hash(key), key.slice(0, 12), opts.name ?? null, opts.plan, credits, created, expires);
    return { key, record: this.get(id)! };
  }

  /** The key's record, or null for a missing, malformed, unknown or revoked key. */
  authenticate(presented: string | undefined): ApiKey | null {
    if (typeof presented !== 'string' || !KEY_PATTERN.test(presented)) return null;
    const cache = cacheOf(this.db);
    const stamp = `${this.#dataVersion.get() as unknown as number}:${cache.writes}`;
    if (stamp !== cache.stamp) {
      cache.stamp = stamp;
      cache.keys.clear();
    }
    const known = cache.keys.get(presented);
    if (known) return known;
    const found = this.#lookup(presented);
    if (found) {
      if (cache.keys.size >= MAX_CACHED_KEYS) cache.keys.clear();
      cache.keys.set(presented, found);
    }
    return found;
  }

  #lookup(presented: string): ApiKey | null {
    const h = hash(presented);
    const row = this.#byHash.get(h);
    // The lookup is by hash; the constant-time comparison keeps the final check free of
    // timing differences whatever the index does.
    if (!row || !timingSafeEqual(row.key_hash, h) || row.revoked_at !== null) return null;
    return toKey(row);
  }

  get(id: string): ApiKey | null {
    const r = this.#byId.get(id);
    return r ? toKey(r) : null;
  }

  list(): ApiKey[] {
    return this.db.prepare<[], Row>('SELECT * FROM api_keys ORDER BY created_at, id').all().map(toKey);
  }

  revoke(id: string): boolean {
    this.#wrote();
    return this.db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(this.now(), id).changes === 1;
  }

  topUp(id: string, credits: number): ApiKey | null {
    if (!Number.isSafeInteger(credits) || credits <= 0) throw new RangeError('credits must be a whole number > 0');
    this.#wrote();
    const changed = this.db.prepare('UPDATE api_keys SET credits = credits + ? WHERE id = ?').run(credits, id).changes;
    return changed ? this.get(id) : null;
  }

  isExpired(k: ApiKey): boolean {
    return k.expiresAt !== null && this.now() >= k.expiresAt;
  }
}
