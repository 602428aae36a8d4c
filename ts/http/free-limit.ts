// The free endpoints (directory, search, summary, status, docs) need no key, so their limit is
// per client address: a token bucket like the keyed one, answered 429 with the same headers.
// Keyed endpoints have their own per-key limit; /healthz stays free of any (load balancers
// poll it).
import type { Request, Response } from 'restify';
import type { ApiDeps } from '../server.ts';
import { ApiError, sendError } from './errors.ts';

/** Paths that carry a key (their own limit) or must always answer. */
const UNLIMITED = ['/healthz', '/api/v1/location-map', '/api/v1/usage', '/api/v1/__test/'];

export function limitFreeEndpoints(deps: ApiDeps) {
  return (req: Request, res: Response, next: (ok?: false) => void) => {
    const path = req.path();
    if (UNLIMITED.some((p) => path === p || (p.endsWith('/') && path.startsWith(p)))) return next();
    const rate = deps.freeLimiter.take(req.socket.remoteAddress ?? 'unknown');
    res.header('X-RateLimit-Limit', String(rate.limit));
    res.header('X-RateLimit-Remaining', String(rate.remaining));
    res.header('X-RateLimit-Reset', String(rate.resetS));
    if (rate.allowed) return next();
    sendError(res, new ApiError('RATE_LIMITED', 'Too many requests from this address; retry after the time in Retry-After.', { headers: { 'Retry-After': String(rate.retryAfterS) } }));
    return next(false);
  };
}
