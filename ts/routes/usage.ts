// GET /api/v1/usage: the calling key's own usage, never another's. Free; rate-limited per key
// like every keyed endpoint.
import type { z } from 'zod';
import { ApiError } from '../api/errors.ts';
import { parseQuery } from '../http/query.ts';
import type { Usage } from '../api/responses.ts';
import { DEFAULT_WINDOW_DAYS, MAX_WINDOW_DAYS, UsageQuery } from '../api/schemas.ts';
import { DAY_MS } from '../time.ts';
import type { ApiDeps } from '../http/context.ts';
import { jsonRoute } from '../http/json-route.ts';
import { requireKey, takeRate } from '../http/auth.ts';
import type { Handlers } from '../http/mount.ts';

export function handlers(deps: ApiDeps): Handlers {
  const usage = jsonRoute(deps, async (req, res): Promise<z.infer<typeof Usage>> => {
    const key = await requireKey(deps, req, res);
    await takeRate(deps, key, res);

    const q = parseQuery(UsageQuery, req);
    const to = q.to ? Date.parse(q.to) : deps.now();
    const from = q.from ? Date.parse(q.from) : to - DEFAULT_WINDOW_DAYS * DAY_MS;
    const bad = (field: string, message: string) =>
      new ApiError('INVALID_REQUEST', `Invalid query: ${field}: ${message}.`, { details: [{ field, message }] });
    if (from > to) throw bad('from', 'from must not be after to');
    if (to - from > MAX_WINDOW_DAYS * DAY_MS) throw bad('from', `the window is at most ${MAX_WINDOW_DAYS} days`);
    return deps.usage.report(key.id, from, to, deps.billing.pendingRejected(key.id));
  });
  return { usage: [usage] };
}
