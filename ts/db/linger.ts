// Holding a batch of ledger writes back a moment so that it goes out fuller: group commit across
// time, as Kafka's `linger.ms` and PostgreSQL's own `commit_delay` do. A call to PostgreSQL costs
// it about 100 µs of CPU whatever it carries, and each charge in it about 30 µs more (one client
// calling charge_many in a loop, the backend's CPU per call: 108-154 µs with one charge, 754-788
// with twenty; 2026-11-27). A node batches what arrives while its last call is out, which under
// traffic spread evenly at a moderate rate is nearly nothing (1.0-1.2 charges a call at 1,500
// requests a second, bench/RESULTS.md), so PostgreSQL pays the fixed part for nearly every
// request, and more nodes sharing the traffic make it rarer still. Lingering gives each node's
// batch time to fill, which costs every charge that waits up to the linger in latency: off by
// default (STOREMAP_LEDGER_LINGER_MS), and docs/DEPLOYMENT.md says when it pays.

/** Charges a batch holds when it stops waiting: with eight, a call's fixed cost is under a third
 * of what the call costs PostgreSQL. */
export const LINGER_FILL = 8;

/** A charge waiting in a batch: when it came, on the ledger's clock. */
export interface Lingering {
  since: number;
}

export class Linger {
  #timer: NodeJS.Timeout | undefined;
  /** The linger ran out: the waiting batch goes at the next chance, full or not. */
  #due = false;
  /** When the last batch went, on the ledger's clock. */
  #lastSent = -Infinity;
  /** When the armed timer runs out, on the timer's own clock (a test may freeze the ledger's). */
  #deadline = Infinity;
  #ms: number;

  /**
   * @param ms longest a charge waits for company, from when it came (0: never)
   * @param now the ledger's clock, for the charges' waits and the quiet spell (a held batch's
   *   wait ends on a timer)
   * @param send asked to send when the linger runs out
   */
  constructor(
    ms: number,
    private readonly now: () => number,
    private readonly send: () => void,
  ) {
    this.#ms = ms;
  }

  /** Whether the `waiting` batch, free to go, goes now; if it does, the next batch waits afresh.
   * It goes when lingering is off, when it is full, when its oldest charge has waited the
   * linger (a charge that waited for a call out, or was left over from a full batch, or was
   * refused by its lease, has been waiting since it came), when its timer ran out, or after a
   * quiet spell: a charge that finds no batch sent within the last linger goes at once, so a
   * node with little traffic answers as fast as without lingering. A batch held arms the timer
   * that ends its oldest charge's wait, earlier if an older charge joins it (one refused by its
   * lease, or deferred), and never more than the linger ahead (a clock set back would otherwise
   * hold it for as long as the clock went back). */
  go(waiting: readonly Lingering[]): boolean {
    const now = this.now();
    if (this.#ms === 0 || this.#due || waiting.length >= LINGER_FILL || now - this.#lastSent > this.#ms) return this.#goes(now);
    // Under LINGER_FILL charges, so finding the oldest is a few steps (charges are queued
    // nearly, not exactly, in order: a refused or deferred one joins late).
    const oldest = waiting.reduce((m, w) => Math.min(m, w.since), Infinity);
    if (now - oldest >= this.#ms) return this.#goes(now);
    const delay = Math.min(this.#ms, oldest + this.#ms - now);
    if (this.#timer !== undefined && performance.now() + delay >= this.#deadline) return false;
    this.#disarm();
    this.#deadline = performance.now() + delay;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#deadline = Infinity;
      this.#due = true;
      this.send();
    }, delay);
    return false;
  }

  /** A batch goes: the next one waits afresh. */
  #goes(now: number): true {
    this.#disarm();
    this.#due = false;
    this.#lastSent = now;
    return true;
  }

  #disarm(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#deadline = Infinity;
  }

  /** No more waiting (the ledger is closing): a batch held now goes at once. */
  stop(): void {
    this.#ms = 0;
    if (this.#timer === undefined) return;
    this.#disarm();
    this.send();
  }
}
