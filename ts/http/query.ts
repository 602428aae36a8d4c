// Query strings validated by their zod schema, the same way bodies are: every failing field
// in `details`, unknown parameters rejected.
import type { Request } from 'restify';
import type { z } from 'zod';
import { ApiError } from '../errors.ts';
import { issueDetails } from './schemas.ts';

export function parseQuery<S extends z.ZodType>(schema: S, req: Request): z.infer<S> {
  const params = new URL(req.url ?? '/', 'http://localhost').searchParams;
  const raw: Record<string, string | string[]> = {};
  for (const key of new Set(params.keys())) {
    const all = params.getAll(key);
    // A repeated parameter stays a list, which every scalar field then rejects.
    raw[key] = all.length === 1 ? all[0] : all;
  }
  // Numbers in a query string are plain decimal integers: coercion alone would also take
  // "0x10", "1e1" or an empty value.
  const loose = Object.entries(raw)
    .filter(([k, v]) => typeof v === 'string' && isNumberField(schema, k) && !/^-?\d{1,15}$/.test(v))
    .map(([k]) => ({ field: k, message: 'expected a decimal integer' }));
  if (loose.length) throw new ApiError('INVALID_REQUEST', `Invalid query: ${loose.map((d) => `${d.field}: ${d.message}`).join('; ')}.`, { details: loose });
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const details = issueDetails(parsed.error, '(query)');
    throw new ApiError('INVALID_REQUEST', `Invalid query: ${details.map((d) => `${d.field}: ${d.message}`).join('; ')}.`, { details });
  }
  return parsed.data;
}

/** Whether the object schema's field `key` is a number (under any default or optional). */
function isNumberField(schema: z.ZodType, key: string): boolean {
  let field = (schema as unknown as { shape?: Record<string, z.ZodType> }).shape?.[key] as { _zod: { def: { type: string; innerType?: unknown } } } | undefined;
  while (field && (field._zod.def.type === 'default' || field._zod.def.type === 'optional')) {
    field = field._zod.def.innerType as typeof field;
  }
  return field?._zod.def.type === 'number';
}
