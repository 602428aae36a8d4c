// Bounds concurrent heavy native calls: at most `size` are handed to the addon at once (by
// default twice libuv's threads, so that a thread never waits for this JS thread to hand it the
// next call: those beyond the threads wait in libuv's queue, their deadlines running from the
// call, and there a hang-up no longer drops them), at most `queue` wait here; past that a
// request is refused at once instead of piling up.
//
// Fair share: each owner (an API key) may hold at most `ownerShare` of the running slots and of
// the queue, and a freed slot goes to the next owner in turn, not to the longest queue. One key
// flooding the service fills its own share and gets 503s while every other key's requests keep
// being admitted, each starting on the next thread to free after the calls already handed to
// libuv. A task waiting here whose request is abandoned (its client hung up, its time ran out)
// is taken out of the queue at once and never starts.
import { ApiError } from '../api/errors.ts';

/**
 * A request's "no one wants this any more" (its time ran out, its client hung up). A plain
 * flag with one listener rather than an AbortController: every keyed request makes one, and an
 * EventTarget costs several times more than the pool hop it guards.
 */
export class Cancel {
  #reason: unknown;
  #listener: (() => void) | undefined;
  get cancelled(): boolean {
    return this.#reason !== undefined;
  }
  get reason(): unknown {
    return this.#reason;
  }
  cancel(reason: unknown): void {
    if (this.#reason !== undefined) return;
    this.#reason = reason;
    const l = this.#listener;
    this.#listener = undefined;
    l?.();
  }
  /** One listener at a time (the pool's); set undefined to remove it. */
  set onCancel(fn: (() => void) | undefined) {
    this.#listener = fn;
  }
}

export interface PoolTicket {
  /** Who the work is for; tasks without an owner share one anonymous owner. */
  owner?: string;
  /** Cancelled when the request no longer wants the work: a waiting task is dropped. */
  cancel?: Cancel;
}

interface Waiter {
  start: () => void;
}

interface Owner {
  running: number;
  waiting: Waiter[];
}

/** The error a task that was dropped from the queue rejects with: the cancel's reason. */
function abandoned(cancel: Cancel): unknown {
  return cancel.reason ?? new ApiError('TIMEOUT');
}

export class NativePool {
  #running = 0;
  #waiting = 0;
  readonly #owners = new Map<string, Owner>();
  /** Owners with waiting tasks, in turn order. */
  readonly #turns: string[] = [];

  constructor(
    readonly size: number,
    readonly queue: number,
    /** The part of the slots and of the queue one owner may hold (0-1). */
    readonly ownerShare = 0.5,
  ) {}

  /** Slots one owner may run at once. */
  get ownerSlots(): number {
    return Math.max(1, Math.floor(this.size * this.ownerShare));
  }

  /** Tasks one owner may have waiting. */
  get ownerQueue(): number {
    return Math.max(1, Math.floor(this.queue * this.ownerShare));
  }

  get depth(): { running: number; waiting: number } {
    return { running: this.#running, waiting: this.#waiting };
  }

  async run<T>(task: () => Promise<T>, ticket: PoolTicket = {}): Promise<T> {
    const { cancel } = ticket;
    if (cancel?.cancelled) throw abandoned(cancel);
    const name = ticket.owner ?? '';
    const owner = this.#owners.get(name) ?? { running: 0, waiting: [] };
    this.#owners.set(name, owner);
    if (this.#running < this.size && owner.running < this.ownerSlots && owner.waiting.length === 0) {
      this.#running++;
      owner.running++;
    } else {
      if (this.#waiting >= this.queue || owner.waiting.length >= this.ownerQueue) {
        this.#forget(name, owner);
        throw new ApiError('SERVICE_BUSY', undefined, { headers: { 'Retry-After': '1' } });
      }
      await new Promise<void>((resolve, reject) => {
        const waiter: Waiter = {
          start: () => {
            if (cancel) cancel.onCancel = undefined;
            resolve();
          },
        };
        const drop = () => {
          const i = owner.waiting.indexOf(waiter);
          if (i < 0) return;
          owner.waiting.splice(i, 1);
          this.#waiting--;
          if (owner.waiting.length === 0) this.#turns.splice(this.#turns.indexOf(name), 1);
          this.#forget(name, owner);
          reject(abandoned(cancel!));
        };
        if (cancel) cancel.onCancel = drop;
        if (owner.waiting.length === 0) this.#turns.push(name);
        owner.waiting.push(waiter);
        this.#waiting++;
      });
    }
    try {
      return await task();
    } finally {
      this.#running--;
      owner.running--;
      this.#forget(name, owner);
      this.#dispatch();
    }
  }

  /** Hands free slots to waiting tasks, one owner after another. */
  #dispatch(): void {
    let passes = this.#turns.length;
    while (this.#running < this.size && passes > 0) {
      const name = this.#turns.shift()!;
      const owner = this.#owners.get(name)!;
      if (owner.running >= this.ownerSlots) {
        // At its share: it waits for one of its own to finish; the next owner goes.
        this.#turns.push(name);
        passes--;
        continue;
      }
      const next = owner.waiting.shift()!;
      this.#waiting--;
      this.#running++;
      owner.running++;
      if (owner.waiting.length > 0) this.#turns.push(name);
      passes = this.#turns.length;
      next.start();
    }
  }

  #forget(name: string, owner: Owner): void {
    if (owner.running === 0 && owner.waiting.length === 0) this.#owners.delete(name);
  }
}
