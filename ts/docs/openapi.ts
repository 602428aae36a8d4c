// The OpenAPI 3.1 document, generated from OPERATIONS (operations.ts), the error registry and
// the zod schemas, so the published contract cannot drift from what the routes validate and send.
// It is written for contract testers as much as for readers: response schemas are exactly what
// the server sends (nullable fields, no extra properties, integers), media types carry the
// charset the server sends, and headers present only sometimes are not marked required.
import { stringify } from 'yaml';
import { ERRORS, type ErrorCode } from '../api/errors.ts';
import { OPERATIONS, wireType, type Content, type HeaderDoc, type Operation } from '../api/operations.ts';
import { API_VERSION, ATTRIBUTION_TEXT, AUTH, creditsText, ERROR_CASES, EXAMPLES, SUMMARY, TAGS, TITLE } from './descriptions.ts';
import { buildSchemas, COMPONENT_PREFIX, inlineSchema, type JsonSchema, type SchemaSet } from './json-schema.ts';

export const SECURITY_SCHEME = 'ApiKey';

/** The media type as the server sends it: JSON and text with their charset. */
/** Schemas for content operations.ts lists without one. */
const CONTENT_SCHEMAS: Record<string, JsonSchema> = {
  'application/geo+json': { $ref: `${COMPONENT_PREFIX}LocationMapGeoJson` },
  // This document itself: contract testers parse YAML, so say what it parses to.
  'application/yaml': { type: 'object', required: ['openapi', 'info', 'paths'], properties: { openapi: { type: 'string', pattern: '^3\\.1\\.' } } },
};

function content(c: Content, schemas: SchemaSet): JsonSchema {
  if ('schema' in c) return { schema: schemas.refOf(c.schema) ?? inlineSchema(c.schema, 'output') };
  if (CONTENT_SCHEMAS[c.type]) return { schema: { ...CONTENT_SCHEMAS[c.type], description: c.description } };
  // Binary bodies have no JSON Schema (OpenAPI 3.1 section 4.8.14.3): the media type says it all.
  if (c.format === 'binary') return {};
  return { schema: { type: 'string', description: c.description } };
}

const HEADER_TYPES = { string: { type: 'string' }, integer: { type: 'integer' }, number: { type: 'number' }, boolean: { type: 'boolean' } } as const;

function headers(list: HeaderDoc[], required = true): Record<string, JsonSchema> {
  return Object.fromEntries(
    list.map((h) => [h.name, { description: h.description, required: required && h.required, schema: HEADER_TYPES[h.schema] }]),
  );
}

const RETRY_AFTER: HeaderDoc = { name: 'Retry-After', description: 'Seconds to wait before the next request.', schema: 'integer', required: true };

/** Rate-limit headers go out as soon as the key is checked, so every later error carries them
 * too (never required: a 401 comes before). */
function errorHeaders(op: Operation, status: number): Record<string, JsonSchema> | undefined {
  if (status === 401) return undefined;
  const rate = op.success.headers.filter((h) => h.name.startsWith('X-RateLimit-'));
  const out = headers(rate, false);
  if (status === 429) Object.assign(out, headers([RETRY_AFTER]));
  return Object.keys(out).length ? out : undefined;
}

/** Codes grouped by HTTP status, in status order. */
export function errorsByStatus(codes: readonly ErrorCode[]): [number, ErrorCode[]][] {
  const groups = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = ERRORS[code].status;
    groups.set(status, [...(groups.get(status) ?? []), code]);
  }
  return [...groups].sort((a, b) => a[0] - b[0]);
}

function errorResponses(op: Operation): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = {};
  for (const [status, codes] of errorsByStatus(op.errors)) {
    const schema = { allOf: [{ $ref: `${COMPONENT_PREFIX}ErrorBody` }, { properties: { code: { enum: codes } } }] };
    out[String(status)] = {
      description: codes.map((c) => `\`${c}\`: ${ERROR_CASES[c]}`).join(' '),
      ...(errorHeaders(op, status) ? { headers: errorHeaders(op, status) } : {}),
      content: { [wireType('application/json')]: { schema } },
    };
  }
  return out;
}

function parameters(op: Operation): JsonSchema[] | undefined {
  if (!op.query) return undefined;
  const schema = inlineSchema(op.query, 'input');
  const required = new Set<string>(schema.required ?? []);
  return Object.entries(schema.properties as Record<string, JsonSchema>).map(([name, prop]) => {
    const { description, ...rest } = prop;
    return { name, in: 'query', required: required.has(name), ...(description ? { description } : {}), schema: rest };
  });
}

function operation(op: Operation, schemas: SchemaSet): JsonSchema {
  const examples = EXAMPLES[op.id];
  const out: JsonSchema = {
    operationId: op.id,
    tags: [op.tag],
    summary: op.summary,
    description: op.description,
  };
  if (op.auth) out.security = [{ [SECURITY_SCHEME]: [] }];
  const params = parameters(op);
  if (params) {
    if (examples) {
      for (const p of params) {
        const values = examples.filter((e) => p.name in e.value);
        if (values.length) p.examples = Object.fromEntries(values.map((e, i) => [`example${i + 1}`, { summary: e.summary, value: e.value[p.name] }]));
      }
    }
    out.parameters = params;
  }
  if (op.body) {
    const media: JsonSchema = { schema: schemas.refOf(op.body) ?? inlineSchema(op.body, 'input') };
    if (examples) media.examples = Object.fromEntries(examples.map((e, i) => [`example${i + 1}`, { summary: e.summary, value: e.value }]));
    out.requestBody = { required: true, description: 'A JSON object; unknown fields are rejected.', content: { 'application/json': media } };
  }
  const success: JsonSchema = { description: op.success.description };
  if (op.success.headers.length) success.headers = headers(op.success.headers);
  success.content = Object.fromEntries(op.success.content.map((c) => [wireType(c.type), content(c, schemas)]));
  out.responses = { [String(op.success.status)]: success, ...errorResponses(op) };
  return out;
}

export function openApiDocument(operations: Operation[] = OPERATIONS): JsonSchema {
  const schemas = buildSchemas(operations.flatMap((o) => (o.body ? [o.body] : [])));
  const paths: Record<string, JsonSchema> = {};
  for (const op of operations) (paths[op.path] ??= {})[op.method] = operation(op, schemas);
  const tags = [...new Set(operations.map((o) => o.tag))].map((name) => ({ name, description: TAGS[name] }));
  return {
    openapi: '3.1.0',
    info: {
      title: TITLE,
      version: API_VERSION,
      summary: SUMMARY,
      description: [AUTH, creditsText(), ATTRIBUTION_TEXT, 'Every error is JSON `{error, code}` (plus `suggestions` or `details`); the codes are listed under each response and in /api/agent-docs. A method a path does not have, HEAD on a charged endpoint included, is answered 405 `METHOD_NOT_ALLOWED` with an Allow header listing the methods it has.'].join('\n\n'),
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: '/', description: 'This server.' }],
    externalDocs: { description: 'The same reference as one markdown document.', url: '/api/agent-docs' },
    tags,
    paths,
    components: {
      schemas: schemas.components,
      securitySchemes: {
        [SECURITY_SCHEME]: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'An API key: sm_live_ and 24 hex digits.' },
      },
    },
  };
}

export function openApiYaml(operations: Operation[] = OPERATIONS): string {
  // No anchors or aliases, and strings a YAML 1.1 reader would take for something else (a
  // timestamp such as 2026-11-01T00:00:00Z, yes/no) quoted: many OpenAPI tools still read 1.1.
  return stringify(openApiDocument(operations), { version: '1.1', aliasDuplicateObjects: false, lineWidth: 0 });
}
