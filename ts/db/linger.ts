// Holding a batch of ledger writes back a moment so that it goes out fuller: group commit across
// time, as Kafka's `linger.ms` and PostgreSQL's own `commit_delay` do. A call to PostgreSQL costs
// it about 100 µs of CPU whatever it carries, and a charge in it about 30 µs more
// (bench/RESULTS.md, "Several nodes on one PostgreSQL ledger"). One node batches what arrives
// while its last call is out; three nodes sharing the same traffic each see a third of it in
// that time, so they make three times the calls. Lingering gives each node's batch time to
// fill, which costs every charge that waits up to the linger in latency: off by default
// (STOREMAP_LEDGER_LINGER_MS), and docs/DEPLOYMENT.md says when it pays.

/** Charges a batch holds when it stops waiting: where one node's batches stood at 1,500
 * requests a second (8.4 a call), and where a call's fixed cost is under a third of it. */
export const LINGER_FILL = 8;

export class Linger {
  #timer: NodeJS.Timeout | undefined;
  /** The linger ran out: the waiting batch goes at the next chance, full or not. */
  #due = false;
  /** When the last batch went, on the ledger's clock. */
  #lastSent = -Infinity;
  #ms: number;

  /**
   * @param ms longest a charge waits for others to join it (0: never)
   * @param now the ledger's clock
   * @param send asked to send when the linger runs out
   */
  constructor(
    ms: number,
    private readonly now: () => number,
    private readonly send: () => void,
  ) {
    this.#ms = ms;
  }

  /** Whether a batch of `waiting` charges waits for more. It does not when lingering is off,
   * when it is full, when its linger ran out, or after a quiet spell: a charge that finds no
   * batch sent within the last linger goes at once, so a node with little traffic answers as
   * fast as without lingering. The first charge held arms the timer that ends the wait. */
  holds(waiting: number): boolean {
    if (this.#ms === 0 || this.#due || waiting >= LINGER_FILL || this.now() - this.#lastSent > this.#ms) return false;
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      this.#due = true;
      this.send();
    }, this.#ms);
    return true;
  }

  /** A batch went: the next one waits afresh. */
  sent(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#due = false;
    this.#lastSent = this.now();
  }

  /** No more waiting (the ledger is closing): a batch held now goes at once. */
  stop(): void {
    this.#ms = 0;
    if (this.#timer === undefined) return;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.send();
  }
}
