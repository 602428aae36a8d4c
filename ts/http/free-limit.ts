// The free endpoints (directory, search, summary, docs) need no key, so their limit is per
// client address (http/client-address.ts: behind trusted proxies, X-Forwarded-For; an IPv6
// client by its /64): a token bucket like the keyed one, answered 429 with the same headers.
// It is the first handler of each free route (not a server-wide step, which every keyed
// request would pay for too); keyed endpoints have their own per-key limit. /healthz has none
// (load balancers poll it), and neither has the status endpoint: the contract has it always
// answered, and its body is computed at most every 30 seconds, so a flood costs little.
import type { Request, Response } from 'restify';
import type { ApiDeps } from './context.ts';
import { ApiError } from '../api/errors.ts';
import { sendError } from './errors.ts';
import { clientKey } from './client-address.ts';

export function limitFreeEndpoint(deps: ApiDeps) {
  return (req: Request, res: Response, next: (ok?: false) => void) => {
    const rate = deps.freeLimiter.take(clientKey(req, deps.proxies));
    res.header('X-RateLimit-Limit', String(rate.limit));
    res.header('X-RateLimit-Remaining', String(rate.remaining));
    res.header('X-RateLimit-Reset', String(rate.resetS));
    if (rate.allowed) return next();
    sendError(res, new ApiError('RATE_LIMITED', 'Too many requests from this address; retry after the time in Retry-After.', { headers: { 'Retry-After': String(rate.retryAfterS) } }));
    return next(false);
  };
}
