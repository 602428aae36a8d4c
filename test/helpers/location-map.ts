// Shared by the POST /api/v1/location-map suites (test/location-map/): the response fields
// and headers the endpoint promises, an in-process server with an enterprise key, checks of
// an error body, a 200's headers, a location row and its provenance, and a `storemap serve`
// child with a key for what must run in a separate process.
import path from 'node:path';
import type { ExecutionContext } from 'ava';
import { SOURCE_TYPES } from '../../ts/config.ts';
import { openDatabase } from '../../ts/db/database.ts';
import { ERRORS } from '../../ts/api/errors.ts';
import { ATTRIBUTION } from '../../ts/api/headers.ts';
import { KeyStore } from '../../ts/services/keys.ts';
import { snapshotDir, startServe, type ChildServer } from './child.ts';
import type { Location } from './dataset.ts';
import { postMap, request, type HttpResult } from './http.ts';
import { startServer, type TestServer } from './server.ts';
import { SqliteLedger } from '../../ts/db/sqlite-ledger.ts';

export const LOCATION_FIELDS = ['id', 'brand_wikidata', 'name', 'lat', 'lng', 'country', 'state', 'city', 'address', 'postcode', 'phone', 'opening_hours', 'last_updated'] as const;
export const PROVENANCE_FIELDS = ['source_types', 'confidence', 'storefront_type', 'alias_sources', 'last_verified'] as const;
export const CSV_HEADER = 'brand,name,lat,lng,country,state,city,postcode,address,phone,last_updated';
export const GEO_PROPERTIES = ['brand', 'brand_wikidata', 'name', 'address', 'city', 'state', 'country', 'postcode', 'phone', 'opening_hours', 'last_updated'] as const;
const STOREFRONT_TYPES = ['full_retail', 'small_format', 'pickup', 'studio', 'other'];
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
/** High enough that the rate limiter never interferes with a test that is not about it. */
export const NO_RATE_LIMIT = { STOREMAP_RATE_LIMIT: '100000', STOREMAP_RATE_BURST: '100000' };


export interface Envelope {
  brand: string;
  region: string;
  count: number;
  locations: Location[];
}

export interface ErrorBody {
  error: string;
  code: string;
  suggestions?: { brand: string; location_count: number }[];
  details?: unknown;
}

type Server = TestServer & { key: string; keyId: string };

export async function server(t: ExecutionContext, opts: { env?: Record<string, string>; now?: () => number; credits?: number } = {}): Promise<Server> {
  const s = await startServer(t, { env: { ...NO_RATE_LIMIT, ...opts.env }, now: opts.now });
  const k = await s.keys.create({ plan: 'enterprise', credits: opts.credits ?? 1_000_000, name: 'test enterprise' });
  return { ...s, key: k.key, keyId: k.record.id };
}

/** The key's balance, read straight from the ledger's table (either store). */
export async function balance(s: TestServer, keyId: string): Promise<number> {
  const [row] = await s.query<{ credits: number | string }>('SELECT credits FROM api_keys WHERE id = ?', [keyId]);
  return Number(row.credits);
}

export interface UsageRow {
  status: number | null;
  format: string | null;
  credits: number;
  endpoint: string;
  requests: number;
}

/** The key's usage rows in the order they were written (either store; PostgreSQL's BIGINTs as numbers). */
export async function usageRows(s: TestServer, keyId: string): Promise<UsageRow[]> {
  const rows = await s.query<UsageRow>('SELECT status, format, credits, endpoint, requests FROM usage WHERE key_id = ? ORDER BY id', [keyId]);
  return rows.map((r) => ({ ...r, credits: Number(r.credits), requests: Number(r.requests) }));
}

/** Asserts an error response: status, code from the registry, JSON body with a string error. */
export function assertError(t: ExecutionContext, res: HttpResult, status: number, code: keyof typeof ERRORS): ErrorBody {
  t.is(res.status, status, `expected ${status} ${code}, got ${res.status}: ${res.text.slice(0, 300)}`);
  t.regex(res.header('content-type'), /^application\/json/);
  const body = res.json<ErrorBody>();
  t.is(body.code, code);
  t.is(ERRORS[code].status as number, status);
  t.is(typeof body.error, 'string');
  t.true(body.error.length > 0);
  t.is(res.header('x-credits-charged'), '', 'an error carries no X-Credits-Charged');
  return body;
}

export async function ok(t: ExecutionContext, s: Server, body: Record<string, unknown>, key = s.key): Promise<HttpResult> {
  const res = await postMap(s.base, key, body);
  t.is(res.status, 200, `${JSON.stringify(body)} -> ${res.status}: ${res.text.slice(0, 300)}`);
  return res;
}

export async function okJson(t: ExecutionContext, s: Server, body: Record<string, unknown>, key = s.key): Promise<{ res: HttpResult; env: Envelope }> {
  const res = await ok(t, s, body, key);
  return { res, env: res.json<Envelope>() };
}

export const ids = (ls: { id: string }[]) => ls.map((l) => l.id);
export const sortedUnique = (xs: string[]) => [...new Set(xs)].sort();
export const union = (ls: Location[]) => sortedUnique(ls.flatMap((l) => l.source_types ?? []));


/** Checks every header a 200 of this endpoint must carry. */
export function assertDataHeaders(t: ExecutionContext, res: HttpResult, s: TestServer, expect: { count: number; brand: string; region?: string; sources?: string[] }): void {
  // X-Attribution: all four sources, alphabetical, whatever contributed.
  const attribution = res.header('x-attribution');
  t.is(attribution, ATTRIBUTION);
  const parts = attribution.split('; ');
  t.is(parts.length, 4);
  t.deepEqual([...parts].sort((a, b) => a.localeCompare(b)), parts, 'X-Attribution is alphabetical');
  for (const [i, re] of [/AllThePlaces/, /Foursquare/, /OpenStreetMap/, /Overture/].entries()) t.regex(parts[i], re);

  // X-Data-Sources: alphabetical, a non-empty subset of the four source codes.
  const sources = res.header('x-data-sources').split(',');
  t.deepEqual(sources, sortedUnique(sources), 'X-Data-Sources is alphabetical without duplicates');
  t.true(sources.length >= 1 && sources.every((x) => (SOURCE_TYPES as readonly string[]).includes(x)), `X-Data-Sources ${sources}`);
  if (expect.sources) t.deepEqual(sources, expect.sources, 'X-Data-Sources is the union of the rows’ source_types');

  t.is(res.header('x-location-count'), String(expect.count));
  t.is(res.header('x-brand'), expect.brand);
  t.true(res.header('x-region').length > 0);
  if (expect.region !== undefined) t.is(res.header('x-region'), expect.region);
  t.regex(res.header('x-credits-charged'), /^\d+$/);
  t.regex(res.header('x-credits-remaining'), /^\d+$/);
  t.regex(res.header('x-render-time'), /^\d+ms$/);
  t.is(res.header('x-cached'), 'false');
  t.is(res.header('x-ratelimit-limit'), String(s.config.rateBurst));
  t.regex(res.header('x-ratelimit-remaining'), /^\d+$/);
  t.true(Number(res.header('x-ratelimit-remaining')) <= s.config.rateBurst);
  t.regex(res.header('x-ratelimit-reset'), /^\d+$/);
  t.is(res.header('x-trial-cap-applied'), '', 'no trial cap on an enterprise key');
}

export function assertLocation(t: ExecutionContext, l: Location, where: string): void {
  t.is(typeof l.id, 'string', `${where}.id`);
  t.true(l.id.length > 0, `${where}.id`);
  t.is(typeof l.name, 'string', `${where}.name`);
  t.true(typeof l.lat === 'number' && l.lat >= -90 && l.lat <= 90, `${where}.lat ${l.lat}`);
  t.true(typeof l.lng === 'number' && l.lng >= -180 && l.lng <= 180, `${where}.lng ${l.lng}`);
  t.regex(l.country, /^[A-Z]{2}$/, `${where}.country`);
  for (const k of ['state', 'city', 'address', 'postcode', 'phone', 'opening_hours'] as const) {
    t.true(l[k] === null || typeof l[k] === 'string', `${where}.${k} is ${JSON.stringify(l[k])}`);
  }
  t.regex(l.last_updated ?? "", ISO_TIME, `${where}.last_updated`);
}

export function assertProvenance(t: ExecutionContext, p: Partial<Location>, where: string): void {
  // This dataset went through the multi-source pipeline: no nulls.
  t.true(Array.isArray(p.source_types) && p.source_types.length > 0, `${where}.source_types`);
  t.deepEqual(p.source_types, sortedUnique(p.source_types ?? []), `${where}.source_types sorted, unique`);
  t.true(p.source_types!.every((x) => (SOURCE_TYPES as readonly string[]).includes(x)), `${where}.source_types ${p.source_types}`);
  t.true(typeof p.confidence === 'number' && p.confidence >= 0 && p.confidence <= 1, `${where}.confidence ${p.confidence}`);
  t.true(STOREFRONT_TYPES.includes(p.storefront_type as string), `${where}.storefront_type ${p.storefront_type}`);
  t.true(Array.isArray(p.alias_sources) && p.alias_sources.length > 0, `${where}.alias_sources`);
  for (const a of p.alias_sources ?? []) {
    t.deepEqual(Object.keys(a).sort(), ['source_id', 'source_type']);
    t.true((SOURCE_TYPES as readonly string[]).includes(a.source_type) && typeof a.source_id === 'string' && a.source_id.length > 0);
  }
  t.deepEqual(sortedUnique((p.alias_sources ?? []).map((a) => a.source_type)), p.source_types, `${where}: alias_sources cover exactly source_types`);
  t.regex(p.last_verified ?? '', ISO_TIME, `${where}.last_verified`);
}

export const MCD = "McDonald's";

// `node bin/storemap.js serve` in a child process: if a request crashes the server, the
// failure is reported in the test instead of killing the test runner.

export async function childWithKey(t: ExecutionContext, env: Record<string, string> = {}): Promise<{ srv: ChildServer; key: string; dbPath: string }> {
  const dataDir = await snapshotDir(t);
  const dbPath = path.join(dataDir, 'storemap.db');
  const db = openDatabase(dbPath);
  const key = (await new KeyStore(new SqliteLedger(db)).create({ plan: 'enterprise', credits: 10_000 })).key;
  db.close();
  const srv = await startServe(t, { dataDir, dbPath, env: { ...NO_RATE_LIMIT, ...env } });
  return { srv, key, dbPath };
}

/** After a request: is the server process still up and answering? */
export async function stillServing(srv: ChildServer): Promise<boolean> {
  await new Promise((r) => setTimeout(r, 150));
  if (!srv.alive()) return false;
  try {
    return (await request(srv.base, { method: 'GET', path: '/healthz', timeoutMs: 5_000 })).status === 200;
  } catch {
    return false;
  }
}

/** The child's last lines of output, without deprecation noise or API keys: for a failure message. */
export const lastLines = (text: string) => text.split('\n').filter((l) => !/DEP0111|trace-deprecation|sm_live_/.test(l)).slice(-12).join('\n');
