// Bounds concurrent heavy native calls: at most `size` run at once (the libuv pool has four
// threads, and a fifth call would only queue there, out of sight), at most `queue` wait; past
// that a request is refused at once instead of piling up.
import { ApiError } from '../http/errors.ts';

export class NativePool {
  #running = 0;
  readonly #waiting: (() => void)[] = [];
  constructor(
    readonly size: number,
    readonly queue: number,
  ) {}

  get depth(): { running: number; waiting: number } {
    return { running: this.#running, waiting: this.#waiting.length };
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#running >= this.size) {
      if (this.#waiting.length >= this.queue) throw new ApiError('SERVICE_BUSY');
      // The finishing task hands its slot straight over, so no newcomer can slip in between.
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    } else {
      this.#running++;
    }
    try {
      return await task();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#running--;
    }
  }
}
