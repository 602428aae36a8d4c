// Bytes of response bodies made but not yet taken by their clients (from the moment the work
// ends: a body waiting for its charge is in memory too). A slow reader keeps its whole body in
// memory until it has read it; past the limit, new heavy requests are refused (503
// SERVICE_BUSY, Retry-After) until readers catch up, at arrival and again as their work starts
// (requests that arrive together all pass the first check before any answer exists), so 64 or
// 6,400 slow clients cost at most the limit and the answers being made, not their number times
// the body size. One key may hold only its share of the limit (STOREMAP_NATIVE_KEY_SHARE, as
// of the native pool): sixteen sockets of one key that never read cannot fill it for everyone.
// And a reader too slow to take its answer within a grace period plus its size at a floor rate
// is cut off, so periodic tiny reads cannot hold the memory past the idle timeout either.
import type { Response } from 'restify';
import { ApiError } from '../api/errors.ts';

export interface PendingLimits {
  /** Bytes waiting, all keys together. */
  limit: number;
  /** The part of it one key may hold. */
  keyShare: number;
  /** An answer must be taken within graceMs plus its size at minBytesPerS (graceMs 0: never
   * checked). */
  graceMs: number;
  minBytesPerS: number;
}

export class PendingResponses {
  #bytes = 0;
  readonly #byKey = new Map<string, number>();
  /** Per socket, the releases of the answers counted on it that are not done yet. */
  readonly #onSocket = new WeakMap<import('node:net').Socket, Set<() => void>>();
  /** Readers cut off for making no progress, since start. */
  stalled = 0;
  constructor(readonly limits: PendingLimits) {}

  get bytes(): number {
    return this.#bytes;
  }

  get limit(): number {
    return this.limits.limit;
  }

  /** Throws 503 when the bodies in flight already fill the budget, or this key's share of it. */
  admit(owner?: string): void {
    if (this.#bytes >= this.limits.limit) {
      throw new ApiError('SERVICE_BUSY', 'Too many responses are waiting for slow clients; retry shortly.', { headers: { 'Retry-After': '1' } });
    }
    if (owner !== undefined && (this.#byKey.get(owner) ?? 0) >= this.limits.limit * this.limits.keyShare) {
      throw new ApiError('SERVICE_BUSY', "This key's answers already waiting for its clients to read them fill its share; read them, then retry.", { headers: { 'Retry-After': '1' } });
    }
  }

  /** Counts `bytes` for `owner` until the response is done with them (sent, or its client gone);
   * cuts the connection off when its client stops reading. */
  track(res: Response, bytes: number, owner?: string): void {
    this.#bytes += bytes;
    if (owner !== undefined) this.#byKey.set(owner, (this.#byKey.get(owner) ?? 0) + bytes);
    // A reader must take its answer at `minBytesPerS` after a grace period, or its connection is
    // cut: the deadline is per answer, so a pipelined answer waiting behind a stalled one is cut
    // with it (Node writes one body as one chunk, so progress inside it is not visible; the
    // deadline needs none).
    const socket = (res as unknown as { req?: { socket?: import('node:net').Socket } }).req?.socket ?? res.socket;
    const { graceMs, minBytesPerS } = this.limits;
    const watch =
      socket && graceMs > 0
        ? setTimeout(
            () => {
              if (res.writableFinished || socket.destroyed) return;
              this.stalled++;
              socket.destroy();
            },
            graceMs + (bytes / minBytesPerS) * 1000,
          )
        : undefined;
    watch?.unref();
    let done = false;
    const release = () => {
      if (done) return;
      done = true;
      clearTimeout(watch);
      this.#onSocket.get(socket!)?.delete(release);
      this.#bytes -= bytes;
      if (owner === undefined) return;
      const left = (this.#byKey.get(owner) ?? 0) - bytes;
      if (left > 0) this.#byKey.set(owner, left);
      else this.#byKey.delete(owner);
    };
    res.once('close', release);
    // Node 20 emits no 'close' for a pipelined answer still queued behind another when the
    // socket goes (cut off here, or closed by its client): its bytes go with the socket, or they
    // would hold the key's share and the budget for ever.
    if (socket) {
      let pending = this.#onSocket.get(socket);
      if (!pending) {
        const set = new Set<() => void>();
        pending = set;
        this.#onSocket.set(socket, set);
        socket.once('close', () => {
          for (const r of [...set]) r();
        });
      }
      pending.add(release);
    }
    // The client may have gone while the work or the charge ran: both 'close' events have
    // fired already, and nothing would ever release these bytes.
    if (res.destroyed || socket?.destroyed) release();
  }
}
