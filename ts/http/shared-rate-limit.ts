// A key's rate limit across every node on one PostgreSQL ledger: one token bucket per key in
// the database (rate_buckets, migration 3), which nodes lease from a few tokens at a time.
//
// Why leases: asking the shared bucket on every request would put a database round trip in
// front of every answer, refusals included. A node instead takes `leaseSize` tokens at once
// (a tenth of a second of the key's rate) and spends them locally, so at most one request in
// `leaseSize` of a busy key waits for the database. A lease the node has not spent within
// LEASE_TTL_MS is given back in its next lease, so tokens do not stay stuck on a node the
// balancer stopped sending that key to. When the bucket is empty the node refuses locally until
// the next token is due: a flood of refused requests costs no database work at all.
//
// Error bound (docs/DEPLOYMENT.md): nothing is admitted that the shared bucket did not grant,
// so over any window a key gets at most burst + rate × window, plus the tokens nodes leased
// before the window and spend in it: at most N × leaseSize (N nodes). It can get less by the
// tokens leased but not yet spent on other nodes: again at most N × leaseSize, and only until
// the lease expires. At the default 20 req/s (lease size 2) on 3 nodes that is ±6 requests
// over any window, 3 % of a 10-second window's 240.
import type { RateBuckets } from '../db/ledger.ts';
import type { KeyLimiter, RateDecision } from './rate-limit.ts';

/** A lease covers this much of the key's rate: one database round trip per this long of a
 * key's traffic at full rate, per node. */
const LEASE_SECONDS = 0.1;
/** Unspent leased tokens go back to the shared bucket after this long. */
export const LEASE_TTL_MS = 1_000;
/** Keys whose lease state a node keeps; past it, idle keys are dropped (their unspent tokens are
 * lost, which only ever admits less). */
const MAX_HELD = 10_000;

interface Held {
  /** Leased tokens not spent yet. */
  tokens: number;
  /** When the lease expires (this node's clock). */
  expires: number;
  /** The shared bucket after the last lease, for the X-RateLimit-* headers. */
  shared: number;
  /** Refused locally until then: the shared bucket had no whole token. */
  emptyUntil: number;
  /** The lease on its way, which concurrent requests of the key wait for. */
  pending?: Promise<void>;
}

export class SharedRateLimiter implements KeyLimiter {
  readonly #held = new Map<string, Held>();
  readonly leaseSize: number;
  constructor(
    private readonly buckets: RateBuckets,
    readonly rate: number,
    readonly burst: number,
    private readonly now: () => number = Date.now,
    /** Tokens per lease; tests set it, the service derives it from the rate. */
    leaseSize?: number,
  ) {
    this.leaseSize = leaseSize ?? Math.max(1, Math.min(burst, Math.ceil(rate * LEASE_SECONDS)));
  }

  async take(key: string): Promise<RateDecision> {
    for (;;) {
      const t = this.now();
      const h = this.#get(key, t);
      if (h.tokens >= 1 && t < h.expires) {
        h.tokens -= 1;
        return this.#decision(true, h, 0);
      }
      if (t < h.emptyUntil) return this.#decision(false, h, Math.max(1, Math.ceil((h.emptyUntil - t) / 1000)));
      // One lease at a time per key on this node; the others wait for it and look again.
      if (!h.pending) h.pending = this.#lease(key, h, t).finally(() => (h.pending = undefined));
      await h.pending;
    }
  }

  async #lease(key: string, h: Held, t: number): Promise<void> {
    // Whatever is left of an expired lease goes back with this one.
    const giveBack = t >= h.expires ? h.tokens : 0;
    const lease = await this.buckets.lease(key, this.rate, this.burst, this.leaseSize, giveBack, t);
    const at = this.now();
    if (giveBack > 0) h.tokens = 0;
    h.tokens += lease.granted;
    h.expires = at + LEASE_TTL_MS;
    h.shared = lease.left;
    h.emptyUntil = lease.granted === 0 ? at + ((1 - lease.left) / this.rate) * 1000 : 0;
  }

  #get(key: string, t: number): Held {
    let h = this.#held.get(key);
    if (!h) {
      if (this.#held.size >= MAX_HELD) this.#sweep(t);
      h = { tokens: 0, expires: 0, shared: this.burst, emptyUntil: 0 };
      this.#held.set(key, h);
    }
    return h;
  }

  #sweep(t: number): void {
    for (const [k, h] of this.#held) if (!h.pending && t >= h.expires && t >= h.emptyUntil) this.#held.delete(k);
  }

  #decision(allowed: boolean, h: Held, retryAfterS: number): RateDecision {
    const have = h.tokens + h.shared;
    return {
      allowed,
      limit: this.burst,
      remaining: Math.max(0, Math.floor(have)),
      resetS: Math.max(0, Math.ceil((this.burst - have) / this.rate)),
      retryAfterS,
    };
  }
}
