// The two steps every keyed endpoint starts with: the x-api-key header to a key (401 without
// one), then the key's rate limit (the X-RateLimit-* headers on every answer, 429 over it).
// Every answer to a keyed request, errors included, is one key's own: an edge cache in front
// (the contract puts one there) must neither store it nor hand it to another key.
import type { Request, Response } from 'restify';
import type { ApiDeps } from './context.ts';
import type { ApiKey } from '../services/keys.ts';
import { ApiError } from '../api/errors.ts';

/** `Cache-Control` and `Vary` of every keyed answer. */
export const KEYED_CACHE_HEADERS = { 'Cache-Control': 'private, no-store', Vary: 'x-api-key' } as const;

export async function requireKey(deps: ApiDeps, req: Request, res: Response): Promise<ApiKey> {
  for (const [k, v] of Object.entries(KEYED_CACHE_HEADERS)) res.header(k, v);
  const key = await deps.keys.authenticate(req.header('x-api-key'));
  if (!key) throw new ApiError('UNAUTHORIZED');
  return key;
}

export async function takeRate(deps: ApiDeps, key: ApiKey, res: Response): Promise<void> {
  const rate = await deps.limiter.take(key.id);
  res.header('X-RateLimit-Limit', String(rate.limit));
  res.header('X-RateLimit-Remaining', String(rate.remaining));
  res.header('X-RateLimit-Reset', String(rate.resetS));
  if (!rate.allowed) throw new ApiError('RATE_LIMITED', undefined, { headers: { 'Retry-After': String(rate.retryAfterS) } });
}
