// Per-key token buckets: `rate` requests a second on average, bursts up to `burst`.
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the bucket is full again. */
  resetS: number;
  /** Seconds until the next request would be allowed (0 when allowed). */
  retryAfterS: number;
}

/** A key's limit: in this process (RateLimiter) or shared by the cluster (SharedRateLimiter). */
export interface KeyLimiter {
  take(key: string): RateDecision | Promise<RateDecision>;
}

/** Buckets kept before full ones are dropped (a full bucket is the same as none). */
const MAX_BUCKETS = 10_000;

export class RateLimiter implements KeyLimiter {
  readonly #buckets = new Map<string, { tokens: number; at: number }>();
  constructor(
    readonly rate: number,
    readonly burst: number,
    private readonly now: () => number = Date.now,
  ) {}

  take(key: string): RateDecision {
    const t = this.now();
    if (this.#buckets.size >= MAX_BUCKETS) this.#sweep(t);
    const b = this.#buckets.get(key) ?? { tokens: this.burst, at: t };
    b.tokens = Math.min(this.burst, b.tokens + ((t - b.at) / 1000) * this.rate);
    b.at = t;
    const allowed = b.tokens >= 1;
    if (allowed) b.tokens -= 1;
    this.#buckets.set(key, b);
    return {
      allowed,
      limit: this.burst,
      remaining: Math.floor(b.tokens),
      resetS: Math.ceil((this.burst - b.tokens) / this.rate),
      retryAfterS: allowed ? 0 : Math.max(1, Math.ceil((1 - b.tokens) / this.rate)),
    };
  }

  /** Drops buckets that have refilled: a flood of distinct addresses cannot grow the map
   * past what its refill time allows. */
  #sweep(t: number): void {
    for (const [k, b] of this.#buckets) {
      if (b.tokens + ((t - b.at) / 1000) * this.rate >= this.burst) this.#buckets.delete(k);
    }
  }
}
