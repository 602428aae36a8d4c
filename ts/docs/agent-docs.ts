// /api/agent-docs: the whole API reference as one flat markdown document, for agents and people.
// Generated from the same OpenAPI document (and so from OPERATIONS and the zod schemas) as
// /api/openapi.yaml: every endpoint, parameter, response field, header and error code.
import { ERRORS, type ErrorCode } from '../api/errors.ts';
import { OPERATIONS, wireType, type Operation } from '../api/operations.ts';
import { DEFAULT_WINDOW_DAYS, MAX_IMAGE_SIDE, MAX_TICKERS, MAX_WINDOW_DAYS } from '../api/schemas.ts';
import { CONFIDENCE_FLOOR, MAX_MARKER_PIXELS } from '../native.ts';
import { PLAN_RULES } from '../api/plans.ts';
import { API_VERSION, ATTRIBUTION_TEXT, AUTH, creditsText, ERROR_CASES, EXAMPLES, PLANS_TEXT, SUMMARY, TITLE } from './descriptions.ts';
import { COMPONENT_PREFIX, type JsonSchema } from './json-schema.ts';
import { errorsByStatus, openApiDocument } from './openapi.ts';

/** The server's own settings, when known: the limits section then states them, not defaults. */
export interface Limits {
  rateLimit: number;
  rateBurst: number;
  freeRateLimit: number;
  freeRateBurst: number;
  maxBodyBytes: number;
  requestTimeoutMs: number;
}

const DEFAULT_LIMITS: Limits = { rateLimit: 20, rateBurst: 40, freeRateLimit: 20, freeRateBurst: 60, maxBodyBytes: 64 * 1024, requestTimeoutMs: 30_000 };

/** Table cells: no pipes or line breaks. */
const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');
const code = (s: unknown) => `\`${typeof s === 'string' ? s : JSON.stringify(s)}\``;

class SchemaText {
  constructor(private readonly components: Record<string, JsonSchema>) {}

  resolve(s: JsonSchema): JsonSchema {
    let out = s;
    while (out.$ref) {
      const { $ref, ...rest } = out;
      out = { ...this.components[String($ref).slice(COMPONENT_PREFIX.length)], ...rest };
    }
    return out;
  }

  /** "string or null", "array of integer", "one of `a`, `b`". */
  type(raw: JsonSchema): string {
    const s = this.resolve(raw);
    if (s.const !== undefined) return code(s.const);
    if (s.enum) return `one of ${s.enum.map(code).join(', ')}`;
    if (s.anyOf) return s.anyOf.map((x: JsonSchema) => this.type(x)).join(' or ');
    const types: string[] = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
    const named = types.map((t) => {
      if (t === 'array' && s.prefixItems) return `array [${s.prefixItems.map((x: JsonSchema) => this.type(x)).join(', ')}]`;
      if (t === 'array' && s.items) return `array of ${this.type(s.items)}`;
      if (t === 'object' && s.additionalProperties && typeof s.additionalProperties === 'object') {
        const v = this.resolve(s.additionalProperties);
        return `object (text keys to ${Object.keys(v).length ? this.type(v) : 'any value'})`;
      }
      if (t === 'string' && s.format) return `string (${s.format})`;
      return t;
    });
    return named.join(' or ') || 'any';
  }

  /** Bounds, lengths and patterns, in words. */
  constraints(raw: JsonSchema): string {
    const s = this.resolve(raw);
    const out: string[] = [];
    const range = (lo: unknown, hi: unknown, unit = '') => {
      if (lo !== undefined && hi !== undefined) out.push(`${lo}-${hi}${unit}`);
      else if (lo !== undefined) out.push(`at least ${lo}${unit}`);
      else if (hi !== undefined) out.push(`at most ${hi}${unit}`);
    };
    if (s.exclusiveMinimum !== undefined) out.push(`greater than ${s.exclusiveMinimum}`);
    range(s.minimum, s.maximum);
    if (s.exclusiveMaximum !== undefined) out.push(`less than ${s.exclusiveMaximum}`);
    range(s.minLength, s.maxLength, ' characters');
    if (s.prefixItems === undefined) range(s.minItems, s.maxItems, ' items');
    if (s.pattern === '\\S') out.push('not blank (surrounding spaces are trimmed)');
    else if (s.pattern && !s.format) out.push(`matches ${code(s.pattern)}`);
    if (s.prefixItems) {
      const parts = s.prefixItems.map((x: JsonSchema) => this.constraints(x)).filter(Boolean);
      if (parts.length) out.push(`items: ${[...new Set(parts)].join('; ')}`);
    } else if (s.items && typeof s.items === 'object') {
      const inner = this.constraints(s.items);
      if (inner) out.push(`each ${inner}`);
    }
    return out.join(', ');
  }

  /** One row per field, nested objects and arrays of objects flattened as a.b and a[].b. */
  fields(raw: JsonSchema, prefix = ''): { path: string; type: string; required: boolean; description: string }[] {
    const s = this.resolve(raw);
    const required = new Set<string>(s.required ?? []);
    const rows: { path: string; type: string; required: boolean; description: string }[] = [];
    for (const [name, propRaw] of Object.entries((s.properties ?? {}) as Record<string, JsonSchema>)) {
      const prop = this.resolve(propRaw);
      const path = `${prefix}${name}`;
      const inner = this.objectInside(prop);
      rows.push({ path, type: this.type(prop), required: required.has(name), description: prop.description ?? '' });
      if (inner) rows.push(...this.fields(inner.schema, `${path}${inner.array ? '[]' : ''}.`));
    }
    return rows;
  }

  /** The object schema a field holds directly or as array items (or null), if any. */
  private objectInside(prop: JsonSchema): { schema: JsonSchema; array: boolean } | undefined {
    const options = prop.anyOf ? prop.anyOf.map((x: JsonSchema) => this.resolve(x)) : [prop];
    for (const o of options) {
      const types = Array.isArray(o.type) ? o.type : [o.type];
      if (types.includes('object') && o.properties) return { schema: o, array: false };
      if (types.includes('array') && o.items && !o.prefixItems) {
        const item = this.resolve(o.items);
        if (item.properties) return { schema: item, array: true };
      }
    }
    return undefined;
  }
}

function table(head: string[], rows: string[][]): string {
  return [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`)].join('\n');
}

function endpoint(op: Operation, spec: JsonSchema, text: SchemaText): string {
  const o = spec.paths[op.path][op.method] as JsonSchema;
  const lines: string[] = [`### ${op.method.toUpperCase()} ${op.path}`, '', `**${op.summary}.** ${op.description}`, ''];
  lines.push(`- Operation id: \`${op.id}\`; tag: ${op.tag}.`);
  lines.push(op.auth ? '- Auth: `x-api-key` header required.' : '- Auth: none (public).');
  lines.push('');

  if (o.parameters) {
    lines.push('#### Query parameters', '');
    lines.push(
      table(
        ['name', 'required', 'type', 'default', 'constraints', 'description'],
        o.parameters.map((p: JsonSchema) => [
          `\`${p.name}\``,
          p.required ? 'yes' : 'no',
          text.type(p.schema),
          p.schema.default === undefined ? '' : code(p.schema.default),
          text.constraints(p.schema),
          p.description ?? '',
        ]),
      ),
      '',
      'Unknown parameters are rejected with 400 `INVALID_REQUEST`.',
      '',
    );
  }

  if (o.requestBody) {
    const media = o.requestBody.content['application/json'];
    const body = text.resolve(media.schema);
    const required = new Set<string>(body.required ?? []);
    lines.push('#### Request body (`application/json`)', '');
    lines.push(
      table(
        ['field', 'type', 'default', 'constraints', 'description'],
        Object.entries(body.properties as Record<string, JsonSchema>).map(([name, p]) => [
          `\`${name}\`${required.has(name) ? ' (required)' : ''}`,
          text.type(p),
          p.default === undefined ? '' : code(p.default),
          text.constraints(p),
          p.description ?? '',
        ]),
      ),
      '',
    );
    if (body.description) lines.push(`Rules between fields: ${body.description}`, '');
  }

  const examples = EXAMPLES[op.id];
  if (examples) {
    lines.push('#### Examples', '');
    for (const e of examples) {
      if (op.body) {
        lines.push(`${e.summary}:`, '', '```sh', `curl -s $BASE${op.path} -H 'content-type: application/json' -H "x-api-key: $API_KEY" \\`, `  -d '${JSON.stringify(e.value).replace(/'/g, "'\\''")}'`, '```', '');
      } else {
        const qs = new URLSearchParams(Object.entries(e.value).map(([k, v]) => [k, String(v)])).toString();
        lines.push(`${e.summary}: \`GET ${op.path}?${qs}\`${op.auth ? ' with `x-api-key`' : ''}`, '');
      }
    }
  }

  const success = o.responses[String(op.success.status)];
  lines.push(`#### Response ${op.success.status}`, '', success.description, '');
  lines.push(table(['content type', 'body'], op.success.content.map((c) => [`\`${wireType(c.type)}\``, 'schema' in c ? (c.schema.description ?? 'JSON; fields below.') : c.description])), '');
  for (const [type, media] of Object.entries(success.content as Record<string, JsonSchema>)) {
    if (!media.schema || !text.resolve(media.schema).properties) continue;
    lines.push(`Fields of \`${type}\`:`, '');
    lines.push(
      table(
        ['field', 'type', 'always present', 'description'],
        text.fields(media.schema).map((f) => [`\`${f.path}\``, f.type, f.required ? 'yes' : 'no', f.description]),
      ),
      '',
    );
  }
  if (success.headers) {
    lines.push('Response headers:', '');
    lines.push(
      table(
        ['header', 'type', 'always present', 'description'],
        Object.entries(success.headers as Record<string, JsonSchema>).map(([name, h]) => [`\`${name}\``, h.schema.type, h.required ? 'yes' : 'no', h.description]),
      ),
      '',
    );
  }

  if (op.errors.length) {
    lines.push('#### Errors', '');
    lines.push(table(['status', 'code', 'when'], errorsByStatus(op.errors).flatMap(([status, codes]) => codes.map((c) => [String(status), `\`${c}\``, ERROR_CASES[c]]))), '');
  } else {
    lines.push('#### Errors', '', 'None of its own: it answers 200 while the service runs.', '');
  }
  return lines.join('\n');
}

export function agentDocs(operations: Operation[] = OPERATIONS, limits: Limits = DEFAULT_LIMITS): string {
  const spec = openApiDocument(operations);
  const text = new SchemaText(spec.components.schemas);
  const out: string[] = [];
  out.push(`# ${TITLE} API reference`, '', `> ${SUMMARY}`, '');
  out.push(
    `API version ${API_VERSION} (paths under \`/api/v1\`). Every path below is relative to the server's base address ($BASE). ` +
      'This document is generated from the same operation list as the OpenAPI 3.1 document at `/api/openapi.yaml`; the licence notices of the data are at `/ATTRIBUTION.txt`.',
    '',
  );

  out.push('## Endpoints at a glance', '');
  out.push(table(['method', 'path', 'auth', 'summary'], operations.map((op) => [op.method.toUpperCase(), `\`${op.path}\``, op.auth ? 'x-api-key' : 'public', op.summary])), '');

  out.push('## Authentication', '', AUTH, '', `Plans: ${PLANS_TEXT}.`, '');
  out.push('## Credits', '', creditsText(), '');
  out.push('## Limits', '');
  out.push(
    table(
      ['limit', 'value'],
      [
        ['Requests per key (keyed endpoints)', `${limits.rateLimit} per second sustained, bursts of ${limits.rateBurst}; over it: 429 \`RATE_LIMITED\` with Retry-After`],
        ['Requests per client address (free endpoints: brands, docs; not status or /healthz)', `${limits.freeRateLimit} per second sustained, bursts of ${limits.freeRateBurst}; over it: 429 \`RATE_LIMITED\` with Retry-After`],
        ['Marker work per map', `${MAX_MARKER_PIXELS.toLocaleString('en-US')} px: markers x the square each covers (radius 5 at scale 1: 225 px; radius 64 at scale 4: 274,576 px); over it: 400 \`INVALID_REQUEST\` before anything is drawn or charged`],
        ['Request body', `${limits.maxBodyBytes.toLocaleString('en-US')} bytes, after gzip or deflate decoding (deflate as zlib or bare deflate data); over it: 413 \`PAYLOAD_TOO_LARGE\``],
        ['Time per request', `${limits.requestTimeoutMs / 1000} seconds; then 503 \`TIMEOUT\`, not charged`],
        ['Tickers per request', String(MAX_TICKERS)],
        ['Image side', `${MAX_IMAGE_SIDE} px, after \`scale\``],
        ['Locations per response', `all matches, no pagination (trial keys: the first ${PLAN_RULES.trial.maxLocations})`],
        ['Confidence floor of the data formats', `${CONFIDENCE_FLOOR}, fixed; rows seen only by OpenStreetMap are drawn on maps but not served as data`],
        ['Brand directory page', '1-500 entries, default 50'],
        ['Usage window', `at most ${MAX_WINDOW_DAYS} days, default ${DEFAULT_WINDOW_DAYS}`],
      ],
    ),
    '',
  );

  out.push('## Errors', '');
  out.push('Every error, on every endpoint, is a JSON object (`application/json; charset=utf-8`):', '');
  out.push(
    table(
      ['field', 'type', 'always present', 'description'],
      text.fields({ $ref: `${COMPONENT_PREFIX}ErrorBody` }).map((f) => [`\`${f.path}\``, f.path === 'code' ? 'string (a code below)' : f.type, f.required ? 'yes' : 'no', f.description]),
    ),
    '',
  );
  out.push(
    table(
      ['status', 'code', 'message', 'when'],
      (Object.keys(ERRORS) as ErrorCode[]).map((c) => [String(ERRORS[c].status), `\`${c}\``, ERRORS[c].message, ERROR_CASES[c]]),
    ),
    '',
  );

  out.push('## Endpoints', '');
  for (const op of operations) out.push(endpoint(op, spec, text));

  out.push('## Data and attribution', '', ATTRIBUTION_TEXT, '');
  return out.join('\n');
}
