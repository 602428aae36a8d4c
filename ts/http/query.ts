// Query strings validated by their zod schema, the same way bodies are: every failing field
// in `details`, unknown parameters rejected.
import type { Request } from 'restify';
import type { z } from 'zod';
import { invalidRequest, issueDetails } from '../api/schemas.ts';

export function parseQuery<S extends z.ZodType>(schema: S, req: Request): z.infer<S> {
  const params = new URL(req.url ?? '/', 'http://localhost').searchParams;
  // No prototype: `__proto__` is then a parameter like any other (refused as unknown), not the
  // object's prototype.
  const raw: Record<string, string | string[]> = Object.create(null);
  for (const key of new Set(params.keys())) {
    const all = params.getAll(key);
    // A repeated parameter stays a list, which every scalar field then rejects.
    raw[key] = all.length === 1 ? all[0] : all;
  }
  // Numbers in a query string are written out: coercion alone would also take "0x10", " " or
  // an empty value. Integers are plain decimal integers ("1e1" is refused); other numbers are
  // JSON numbers ("2.5", "5e-3").
  const loose = Object.entries(raw).flatMap(([k, v]) => {
    const kind = numberKind(schema, k);
    if (typeof v !== 'string' || !kind || NUMBER_TEXT[kind].test(v)) return [];
    return [{ field: k, message: kind === 'integer' ? 'expected a decimal integer' : 'expected a decimal number' }];
  });
  if (loose.length) throw invalidRequest('query', loose);
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw invalidRequest('query', issueDetails(parsed.error, '(query)'));
  return parsed.data;
}

const NUMBER_TEXT = { integer: /^-?\d{1,15}$/, number: /^-?\d{1,15}(\.\d{1,17})?([eE][-+]?\d{1,3})?$/ };

/** Whether the object schema's field `key` is an integer or another number (under any default
 * or optional), or neither. */
function numberKind(schema: z.ZodType, key: string): keyof typeof NUMBER_TEXT | undefined {
  const shape = (schema as unknown as { shape?: Record<string, z.ZodType> }).shape;
  // The shape's own fields only: `constructor` or `toString` in a query string are unknown
  // parameters, not the members every object inherits.
  if (!shape || !Object.hasOwn(shape, key)) return undefined;
  let field = shape[key] as { _zod: { def: { type: string; innerType?: unknown } }; isInt?: boolean } | undefined;
  while (field && (field._zod.def.type === 'default' || field._zod.def.type === 'optional')) {
    field = field._zod.def.innerType as typeof field;
  }
  if (field?._zod.def.type !== 'number') return undefined;
  return field.isInt ? 'integer' : 'number';
}

/** The query's format parameter as given, before validation (a repeated one is invalid). */
export function givenFormat(req: Request): unknown {
  const given = new URL(req.url ?? '/', 'http://localhost').searchParams.getAll('format');
  return given.length > 1 ? given : given[0];
}
