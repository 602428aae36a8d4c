// Bytes of response bodies handed to Node but not yet taken by their clients. A slow reader
// keeps its whole body in memory until it has read it; past the limit, new heavy requests are
// refused (503 SERVICE_BUSY, Retry-After) until readers catch up, so 64 or 6,400 slow clients
// cost at most the limit, not their number times the body size.
import type { Response } from 'restify';
import { ApiError } from '../errors.ts';

export class PendingResponses {
  #bytes = 0;
  constructor(readonly limit: number) {}

  get bytes(): number {
    return this.#bytes;
  }

  /** Throws 503 when the bodies in flight already fill the budget. */
  admit(): void {
    if (this.#bytes >= this.limit) {
      throw new ApiError('SERVICE_BUSY', 'Too many responses are waiting for slow clients; retry shortly.', { headers: { 'Retry-After': '1' } });
    }
  }

  /** Counts `bytes` until the response is done with them (sent, or its client gone). */
  track(res: Response, bytes: number): void {
    this.#bytes += bytes;
    res.once('close', () => {
      this.#bytes -= bytes;
    });
  }
}
