// API keys: "sm_live_" + 24 hex characters, shown once at creation, stored only as SHA-256,
// compared in constant time. Plans decide formats, trial length and caps.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { KeyRow, LedgerOps } from '../db/ledger.ts';
import { DAY_MS } from '../time.ts';
import { MAX_BALANCE, PLAN_RULES, type Plan } from '../api/plans.ts';

export const KEY_PATTERN = /^sm_live_[0-9a-f]{24}$/;

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

const toKey = (r: KeyRow): ApiKey => ({
  id: r.id,
  prefix: r.prefix,
  name: r.name,
  plan: r.plan as Plan,
  credits: r.credits,
  createdAt: r.createdAt,
  expiresAt: r.expiresAt,
  revokedAt: r.revokedAt,
});

const hash = (key: string) => createHash('sha256').update(key, 'utf8').digest();

/**
 * Authenticated keys, kept while the ledger's keys version is what it was when they were read
 * (it moves when a key is added, revoked or topped up, by this process or another): every
 * keyed request checked its key with a SHA-256 and a query (a twentieth of the request's time).
 * Only good keys are kept, at most `MAX_CACHED_KEYS`. The charge reads the key again in its
 * atomic step whatever this says.
 */
const MAX_CACHED_KEYS = 10_000;

/** The longest key name. */
export const MAX_KEY_NAME = 200;

/** A key's name is a label people read in `keys list` and logs: printable text of at most
 * MAX_KEY_NAME characters, no control characters (a tab or newline forged whole rows of the
 * list; escape sequences restyled the terminal). */
export function checkKeyName(name: string): void {
  if (name.trim() === '') throw new RangeError('the name is empty');
  if ([...name].length > MAX_KEY_NAME) throw new RangeError(`the name is longer than ${MAX_KEY_NAME} characters`);
  if (/[\p{Cc}\p{Cf}\u2028\u2029]/u.test(name)) throw new RangeError('the name holds a control character (tab, newline, escape …)');
  // Node reads command-line bytes that are not UTF-8 as U+FFFD: the name the operator typed is
  // lost, and a list of keys would show question marks.
  if (name.includes('\uFFFD')) throw new RangeError('the name holds U+FFFD, the mark of bytes that were not UTF-8');
}

export class KeyStore {
  #stamp = '';
  /** When the keys version was last read (this store's clock). */
  #checkedAt = -Infinity;
  readonly #cache = new Map<string, ApiKey>();
  /**
   * `recheckMs`: how long the cached keys are trusted before the keys version is read again.
   * 0 reads it on every authentication (SQLite: a pragma on the local file). On PostgreSQL it
   * is a round trip, so a node reads it at most this often (STOREMAP_KEYS_RECHECK_MS): a key
   * revoked on another node still passes authentication here for up to that long, but not
   * its next charge, which reads the key again in its own transaction.
   */
  constructor(
    private readonly ledger: LedgerOps,
    private readonly now: () => number = Date.now,
    private readonly recheckMs = 0,
  ) {}

  async create(opts: { plan: Plan; credits?: number; name?: string }): Promise<{ key: string; record: ApiKey }> {
    const rules = PLAN_RULES[opts.plan];
    const credits = opts.credits ?? rules.defaultCredits;
    if (!Number.isSafeInteger(credits) || credits < 0) throw new RangeError('credits must be a whole number >= 0');
    if (opts.name !== undefined) checkKeyName(opts.name);
    const key = `sm_live_${randomBytes(12).toString('hex')}`;
    const id = `key_${randomBytes(6).toString('hex')}`;
    const created = this.now();
    const expires = rules.trialDays ? created + rules.trialDays * DAY_MS : null;
    await this.ledger.insertKey({ id, keyHash: hash(key), prefix: key.slice(0, 12), name: opts.name ?? null, plan: opts.plan, credits, createdAt: created, expiresAt: expires, revokedAt: null });
    return { key, record: (await this.get(id))! };
  }

  /** The key's record, or null for a missing, malformed, unknown or revoked key. */
  async authenticate(presented: string | undefined): Promise<ApiKey | null> {
    if (typeof presented !== 'string' || !KEY_PATTERN.test(presented)) return null;
    const t = this.now();
    if (this.recheckMs === 0 || t - this.#checkedAt >= this.recheckMs) {
      const stamp = await this.ledger.keysVersion();
      this.#checkedAt = t;
      if (stamp !== this.#stamp) {
        this.#stamp = stamp;
        this.#cache.clear();
      }
    }
    const known = this.#cache.get(presented);
    if (known) return known;
    const found = await this.#lookup(presented);
    if (found) {
      if (this.#cache.size >= MAX_CACHED_KEYS) this.#cache.clear();
      this.#cache.set(presented, found);
    }
    return found;
  }

  async #lookup(presented: string): Promise<ApiKey | null> {
    const h = hash(presented);
    const row = await this.ledger.keyByHash(h);
    // The lookup is by hash; the constant-time comparison keeps the final check free of
    // timing differences whatever the index does.
    if (!row || !timingSafeEqual(row.keyHash, h) || row.revokedAt !== null) return null;
    return toKey(row);
  }

  async get(id: string): Promise<ApiKey | null> {
    const r = await this.ledger.keyById(id);
    return r ? toKey(r) : null;
  }

  async list(): Promise<ApiKey[]> {
    return (await this.ledger.listKeys()).map(toKey);
  }

  async revoke(id: string): Promise<boolean> {
    const done = await this.ledger.revokeKey(id, this.now());
    // This store's own change is seen at once, whatever the recheck window.
    this.#checkedAt = -Infinity;
    return done;
  }

  async topUp(id: string, credits: number): Promise<ApiKey | null> {
    if (!Number.isSafeInteger(credits) || credits <= 0) throw new RangeError('credits must be a whole number > 0');
    const done = await this.ledger.topUpKey(id, credits);
    this.#checkedAt = -Infinity;
    if (done) return this.get(id);
    const key = await this.get(id);
    // A revoked key is never charged again: credits added to it could not be spent.
    if (key && key.revokedAt !== null) throw new RangeError(`key ${id} is revoked: credits added to it could never be spent`);
    if (key) throw new RangeError(`a balance of ${key.credits} + ${credits} would pass the most a key may hold (${MAX_BALANCE})`);
    return null;
  }

  isExpired(k: ApiKey): boolean {
    return k.expiresAt !== null && this.now() >= k.expiresAt;
  }
}
