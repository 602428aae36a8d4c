// Query strings validated by their zod schema, the same way bodies are: every failing field
// in `details`, unknown parameters rejected.
import type { Request } from 'restify';
import type { z } from 'zod';
import { ApiError } from './errors.ts';
import { issueDetails } from './schemas.ts';

export function parseQuery<S extends z.ZodType>(schema: S, req: Request): z.infer<S> {
  const params = new URL(req.url ?? '/', 'http://localhost').searchParams;
  const raw: Record<string, string | string[]> = {};
  for (const key of new Set(params.keys())) {
    const all = params.getAll(key);
    // A repeated parameter stays a list, which every scalar field then rejects.
    raw[key] = all.length === 1 ? all[0] : all;
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const details = issueDetails(parsed.error);
    throw new ApiError('INVALID_REQUEST', `Invalid query: ${details.map((d) => `${d.field}: ${d.message}`).join('; ')}.`, { details });
  }
  return parsed.data;
}
