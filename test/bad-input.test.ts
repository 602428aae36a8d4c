// Malformed requests to POST /api/v1/location-map on a real server, with a valid enterprise
// key unless a row says otherwise. Every row must get a 4xx with the contract's JSON error
// body ({error: string, code} from the registry) and never a 5xx; rows whose answer is
// certain assert the exact status and code (and, for 400 INVALID_REQUEST, the failing field).
// Afterwards nothing has been charged and the server still answers a normal request.
import test from 'ava';
import { ERRORS, type ErrorCode } from '../ts/api/errors.ts';
import { request } from './helpers/http.ts';
import { startServer } from './helpers/server.ts';

const MCD = "McDonald's";
type Expect = [number, ErrorCode];

interface Row {
  name: string;
  /** An object is sent as JSON; a string or Buffer as is. */
  body: unknown;
  /** Replaces the default headers; undefined removes one. */
  headers?: Record<string, string | undefined>;
  /** The exact answer, or the answers allowed when more than one is defensible. */
  expect: Expect | Expect[];
  /** For 400 INVALID_REQUEST: a field the details must name. */
  field?: string;
  /** A query string after the endpoint's path. */
  query?: string;
}

const bad = (field: string, value: unknown, extra: Record<string, unknown> = {}): Row => ({
  name: `${field}: ${JSON.stringify(value)?.slice(0, 40)}${Object.keys(extra).length ? ` with ${JSON.stringify(extra)}` : ''}`,
  body: { brand: MCD, ...extra, [field]: value },
  expect: [400, 'INVALID_REQUEST'],
  field,
});
const INVALID_JSON: Expect = [400, 'INVALID_JSON'];
const INVALID_REQUEST: Expect = [400, 'INVALID_REQUEST'];
const json = (name: string, body: string | Buffer, expect: Expect | Expect[] = INVALID_JSON): Row => ({ name, body, expect });

const ROWS: Row[] = [
  // ---- wrong types, one field at a time
  bad('brand', 5),
  bad('brand', null),
  bad('brand', [MCD]),
  bad('brand', { name: MCD }),
  { name: 'tickers: a string', body: { tickers: 'MCD' }, expect: INVALID_REQUEST, field: 'tickers' },
  { name: 'tickers: [5]', body: { tickers: [5] }, expect: INVALID_REQUEST, field: 'tickers' },
  { name: 'tickers: ["MCD", null]', body: { tickers: ['MCD', null] }, expect: INVALID_REQUEST, field: 'tickers' },
  bad('country', 1),
  bad('state', true),
  bad('city', 42),
  bad('postcode', 12345),
  bad('radius_km', '10', { city: 'London' }),
  bad('format', 1),
  bad('storefront_type', 3),
  bad('include_provenance', 'true'),
  bad('include_provenance', 1),
  bad('style', 1),
  bad('width', '1200'),
  bad('height', 1.5),
  bad('scale', '2'),
  bad('dpi', '300'),
  bad('marker_color', 0xff0000),
  { name: 'marker_colors: a string', body: { tickers: ['MCD'], marker_colors: '#ff0000' }, expect: INVALID_REQUEST, field: 'marker_colors' },
  bad('marker_radius', '5'),
  bad('bounds', '40,-75,41,-73'),
  bad('center', { lat: 40, lng: -74 }, { zoom: 5 }),
  bad('zoom', '3', { center: [40, -74] }),
  bad('focus_country', 1),
  bad('mainland_only', 'yes', { focus_country: 'US' }),
  bad('conus', 1, { focus_country: 'US' }),
  bad('regions', 'CA', { focus_country: 'US' }),
  bad('fill_color', 123),
  bad('outline_color', true),
  bad('outline_width', '2'),
  bad('background', 0),
  bad('heatmap', 'false'),
  bad('include_legend', 1),

  // ---- out of range
  bad('width', 4097),
  bad('height', 0),
  bad('width', -0),
  // eslint-disable-next-line no-loss-of-precision -- the point: a number JSON cannot hold
  bad('width', 1e400),
  bad('scale', 5),
  bad('scale', 0),
  { name: 'width 2000 with scale 3', body: { brand: MCD, width: 2000, scale: 3 }, expect: INVALID_REQUEST, field: 'width' },
  { name: 'height 1500 with scale 3', body: { brand: MCD, height: 1500, scale: 3 }, expect: INVALID_REQUEST, field: 'height' },
  bad('zoom', 19, { center: [40, -74] }),
  bad('zoom', -1, { center: [40, -74] }),
  bad('zoom', 1.5, { center: [40, -74] }),
  bad('dpi', 50),
  bad('dpi', 601),
  bad('radius_km', -1, { city: 'London' }),
  bad('radius_km', 0, { city: 'London' }),
  bad('radius_km', 20_001, { city: 'London' }),
  bad('marker_radius', 0),
  bad('marker_radius', 65),
  bad('outline_width', 21),
  bad('bounds', [91, 0, 92, 10]),
  bad('center', [40, 181], { zoom: 4 }),
  bad('brand', 'x'.repeat(10_000)),
  bad('city', 'y'.repeat(10_000)),
  bad('postcode', '1'.repeat(21)),
  bad('state', ''),
  bad('city', '   '),

  // ---- rules between fields
  { name: 'radius_km without city', body: { brand: MCD, radius_km: 10 }, expect: INVALID_REQUEST, field: 'radius_km' },
  { name: 'radius_km around a city nobody knows', body: { brand: MCD, city: 'Qqzzyx Nowhere', radius_km: 10 }, expect: INVALID_REQUEST },
  { name: '6 tickers', body: { tickers: ['MCD', 'SBUX', 'SHEL', 'CHPT', 'YUM', 'DG'] }, expect: INVALID_REQUEST, field: 'tickers' },
  { name: 'empty tickers', body: { tickers: [] }, expect: INVALID_REQUEST, field: 'tickers' },
  { name: 'tickers: [""]', body: { tickers: [''] }, expect: INVALID_REQUEST, field: 'tickers' },
  { name: 'brand and tickers together', body: { brand: MCD, tickers: ['SBUX'] }, expect: INVALID_REQUEST, field: 'tickers' },
  { name: 'neither brand nor tickers', body: {}, expect: INVALID_REQUEST, field: 'brand' },
  { name: 'filters but no brand', body: { country: 'US', format: 'csv' }, expect: INVALID_REQUEST, field: 'brand' },
  { name: 'unknown field (misspelt filter)', body: { brand: MCD, contry: 'US' }, expect: INVALID_REQUEST, field: 'contry' },
  { name: 'unknown field __proto__', body: `{"brand":"${MCD}","__proto__":{"admin":true}}`, expect: INVALID_REQUEST },
  bad('marker_color', '#12345'),
  bad('marker_color', 'red'),
  bad('marker_color', '#GGGGGG'),
  bad('marker_color', '#1234567'),
  bad('fill_color', '##123456'),
  bad('background', '#12'),
  bad('background', 'none'),
  { name: 'marker_colors without tickers', body: { brand: MCD, marker_colors: ['#112233'] }, expect: INVALID_REQUEST, field: 'marker_colors' },
  { name: 'more marker_colors than tickers', body: { tickers: ['MCD'], marker_colors: ['#112233', '#445566'] }, expect: INVALID_REQUEST, field: 'marker_colors' },
  bad('bounds', [40, -75, 41]),
  bad('bounds', [40, -75, 41, -73, 0]),
  { name: 'bounds south above north', body: { brand: MCD, bounds: [50, 0, 40, 10] }, expect: INVALID_REQUEST, field: 'bounds' },
  { name: 'center without zoom', body: { brand: MCD, center: [40, -74] }, expect: INVALID_REQUEST, field: 'zoom' },
  { name: 'zoom without center', body: { brand: MCD, zoom: 5 }, expect: INVALID_REQUEST, field: 'center' },
  bad('country', 'USA'),
  bad('country', 'U1'),
  bad('country', ''),
  bad('focus_country', 'USA'),
  bad('focus_country', 'automatic'),
  { name: 'conus with focus_country FR', body: { brand: MCD, conus: true, focus_country: 'FR' }, expect: INVALID_REQUEST, field: 'conus' },
  { name: 'mainland_only without focus_country', body: { brand: MCD, mainland_only: true }, expect: INVALID_REQUEST, field: 'focus_country' },
  bad('format', 'xml'),
  bad('format', 'PNG'),
  bad('format', ''),
  bad('storefront_type', 'FULL_RETAIL'),
  bad('style', 'neon'),
  // One meridian twice: no width (a zero-height box was refused already).
  bad('bounds', [40, 10, 50, 10], { format: 'png' }),
  bad('bounds', [40, 180, 50, -180], { format: 'png' }),

  // ---- a query string on a POST: its fields go in the body (?format=csv was ignored, and charged)
  { name: 'format in the query string', body: { brand: MCD }, query: 'format=csv', expect: INVALID_REQUEST, field: 'format' },
  { name: 'the key in the query string', body: { brand: MCD }, query: 'api_key=x&api_key=y', expect: INVALID_REQUEST, field: 'api_key' },

  // ---- malformed JSON
  json('truncated', `{"brand": "McDon`),
  json('trailing comma', `{"brand":"${MCD}",}`),
  json('NaN', `{"brand":"${MCD}","width":NaN}`),
  json('Infinity', `{"brand":"${MCD}","width":Infinity}`),
  json('single quotes', `{'brand':'Tesla'}`),
  json('unquoted key', `{brand:"Tesla"}`),
  json('a comment', `{/* c */"brand":"Tesla"}`),
  json('two documents', `{"brand":"Tesla"}{"brand":"BP"}`),
  json('empty body', ''),
  json('whitespace only', ' \n\t '),
  json('invalid UTF-8 bytes in place of a value', Buffer.concat([Buffer.from('{"brand":'), Buffer.from([0xff, 0xfe]), Buffer.from('}')])),
  // Inside a string too: read as U+FFFD, "star\xffbucks" was Starbucks, and charged.
  json('invalid UTF-8 bytes inside a string', Buffer.concat([Buffer.from('{"brand":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')])),
  json('an invalid byte inside a brand name', Buffer.concat([Buffer.from('{"brand":"Star'), Buffer.from([0xff]), Buffer.from('bucks"}')])),
  json('an overlong UTF-8 encoding', Buffer.concat([Buffer.from('{"brand":"'), Buffer.from([0xc0, 0xaf]), Buffer.from('Starbucks"}')])),
  json('an encoded surrogate (CESU-8)', Buffer.concat([Buffer.from('{"brand":"Starbucks'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')])),
  json('a body cut inside a character', Buffer.concat([Buffer.from('{"brand":"Starbucks"}'), Buffer.from([0xe2, 0x82])])),
  json('unclosed deep nesting', '['.repeat(50_000)),
  json('a bare number', '42', INVALID_REQUEST),
  json('an array', `["${MCD}"]`, INVALID_REQUEST),
  json('null', 'null', INVALID_REQUEST),
  json('true', 'true', INVALID_REQUEST),
  json('a JSON string', `"${MCD}"`, INVALID_REQUEST),
  json('deep array nesting (30k levels)', '['.repeat(30_000) + ']'.repeat(30_000), [INVALID_REQUEST, INVALID_JSON]),
  json('deep object nesting (10k levels)', '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000), [INVALID_REQUEST, INVALID_JSON]),
  // RFC 8259 lets a parser ignore a BOM or reject it; either way this body's brand is invalid.
  json('a UTF-8 BOM before an invalid body', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"brand":5}')]), [INVALID_JSON, INVALID_REQUEST]),
  { name: 'duplicate keys, the last one invalid', body: `{"brand":"${MCD}","brand":5}`, expect: INVALID_REQUEST, field: 'brand' },

  // ---- strings that are JSON-valid but no brand
  { name: 'brand of only spaces', body: { brand: '     ' }, expect: INVALID_REQUEST, field: 'brand' },
  { name: 'empty brand', body: { brand: '' }, expect: INVALID_REQUEST, field: 'brand' },
  { name: 'brand of control characters and emoji', body: { brand: '\u0000\u0001🍔\uffff' }, expect: [[404, 'NOT_FOUND'], INVALID_REQUEST] },
  { name: 'brand: a lone surrogate', body: '{"brand":"Star\\ud800bucks"}', expect: INVALID_JSON },
  { name: 'a lone low surrogate in a key', body: '{"brand":"Starbucks","\\udc00":1}', expect: INVALID_JSON },
  { name: 'a lone surrogate deep in an array', body: `{"brand":"Starbucks","tickers":${'['.repeat(40)}"\\uDBFF"${']'.repeat(40)}}`, expect: INVALID_JSON },
  // A pair is one character (🍔), whole text: no brand, not a malformed body.
  { name: 'brand: an escaped surrogate pair', body: '{"brand":"\\ud83c\\udf54"}', expect: [404, 'NOT_FOUND'] },
  { name: 'brand: zero-width space', body: { brand: '\u200b' }, expect: [[404, 'NOT_FOUND'], INVALID_REQUEST] },
  { name: 'brand: right-to-left override text', body: { brand: '\u202eslanoDcM' }, expect: [[404, 'NOT_FOUND'], INVALID_REQUEST] },
  { name: 'an unknown ticker among tickers', body: { tickers: ['MCD', 'ZZZZZZ'] }, expect: [404, 'NOT_FOUND'] },
  { name: 'a well-formed country with no data (ZZ)', body: { brand: MCD, country: 'ZZ' }, expect: [[404, 'NOT_FOUND'], INVALID_REQUEST] },

  // ---- headers
  { name: 'content-type text/plain', body: { brand: MCD }, headers: { 'content-type': 'text/plain' }, expect: [415, 'UNSUPPORTED_MEDIA_TYPE'] },
  { name: 'no content-type', body: { brand: MCD }, headers: { 'content-type': undefined }, expect: [415, 'UNSUPPORTED_MEDIA_TYPE'] },
  { name: 'a form body', body: `brand=${MCD}`, headers: { 'content-type': 'application/x-www-form-urlencoded' }, expect: [415, 'UNSUPPORTED_MEDIA_TYPE'] },
  { name: 'content-type application/jsonx', body: { brand: MCD }, headers: { 'content-type': 'application/jsonx' }, expect: [415, 'UNSUPPORTED_MEDIA_TYPE'] },
  { name: 'content-encoding gzip on a plain body', body: { brand: MCD }, headers: { 'content-encoding': 'gzip' }, expect: INVALID_JSON },
  { name: 'content-encoding br', body: { brand: MCD }, headers: { 'content-encoding': 'br' }, expect: [415, 'UNSUPPORTED_MEDIA_TYPE'] },
  { name: 'a body past the 64 KiB default limit', body: `{"brand":"${'a'.repeat(70_000)}"}`, expect: [413, 'PAYLOAD_TOO_LARGE'] },
  { name: 'no x-api-key', body: { brand: MCD }, headers: { 'x-api-key': undefined }, expect: [401, 'UNAUTHORIZED'] },
  { name: 'a malformed key', body: { brand: MCD }, headers: { 'x-api-key': 'abc' }, expect: [401, 'UNAUTHORIZED'] },
  { name: 'an unknown well-formed key', body: { brand: MCD }, headers: { 'x-api-key': 'sm_live_ffffffffffffffffffffffff' }, expect: [401, 'UNAUTHORIZED'] },
];

test(`${ROWS.length} malformed requests: each a 4xx with a registered code, exact where predictable; nothing charged; the server lives on`, async (t) => {
  t.true(ROWS.length >= 60);
  const s = await startServer(t, { env: { STOREMAP_RATE_LIMIT: '100000', STOREMAP_RATE_BURST: '100000' } });
  const { key, record } = await s.keys.create({ plan: 'enterprise', credits: 10_000 });
  const upperKey = key.replace(/[a-f]/g, (c) => c.toUpperCase());
  const rows: Row[] = [
    ...ROWS,
    { name: 'the valid key in upper case', body: { brand: MCD }, headers: { 'x-api-key': upperKey }, expect: [401, 'UNAUTHORIZED'] },
  ];
  t.not(upperKey, key);

  const problems: string[] = [];
  let withKey = 0;
  for (const row of rows) {
    const headers: Record<string, string | undefined> = { 'content-type': 'application/json', 'x-api-key': key, ...row.headers };
    const body = typeof row.body === 'string' || Buffer.isBuffer(row.body) ? row.body : JSON.stringify(row.body);
    if (headers['x-api-key'] === key) withKey++;
    let res;
    try {
      res = await request(s.base, { path: `/api/v1/location-map${row.query ? `?${row.query}` : ''}`, headers, body });
    } catch (e) {
      problems.push(`${row.name}: no response (${(e as Error).message})`);
      continue;
    }
    const where = `${row.name}: ${res.status} ${res.text.slice(0, 160)}`;
    if (res.status < 400 || res.status > 499) {
      problems.push(`${where} — not a 4xx`);
      continue;
    }
    if (!/^application\/json/.test(res.header('content-type'))) problems.push(`${where} — content-type ${res.header('content-type')}`);
    let err: { error?: unknown; code?: unknown; details?: { field: string; message: string }[] };
    try {
      err = res.json();
    } catch {
      problems.push(`${where} — body is not JSON`);
      continue;
    }
    if (typeof err.error !== 'string' || err.error.length === 0) problems.push(`${where} — error is not a non-empty string`);
    const code = err.code as ErrorCode;
    if (typeof code !== 'string' || !(code in ERRORS)) {
      problems.push(`${where} — code ${JSON.stringify(code)} is not in the registry`);
      continue;
    }
    if (ERRORS[code].status !== res.status) problems.push(`${where} — ${code} is registered as ${ERRORS[code].status}`);
    const allowed = (Array.isArray(row.expect[0]) ? row.expect : [row.expect]) as Expect[];
    if (!allowed.some(([st, c]) => st === res.status && c === code)) {
      problems.push(`${where} — expected ${allowed.map((a) => a.join(' ')).join(' or ')}`);
    }
    if (row.field && code === 'INVALID_REQUEST') {
      const details = Array.isArray(err.details) ? err.details : [];
      const named = details.some((d) => d.field === row.field || d.field.startsWith(`${row.field}.`) || d.message.includes(row.field!));
      if (!named) problems.push(`${where} — details do not name ${row.field}: ${JSON.stringify(err.details)}`);
    }
  }
  t.deepEqual(problems, []);

  // No 4xx costs anything, and each request made with the valid key left one usage row.
  t.is((await s.keys.get(record.id))!.credits, 10_000);
  const usage = s.db.prepare('SELECT status, credits FROM usage WHERE key_id = ?').all(record.id) as { status: number; credits: number }[];
  t.is(usage.length, withKey);
  t.true(usage.every((u) => u.status >= 400 && u.status < 500 && u.credits === 0));

  // Still serving.
  const res = await request(s.base, { path: '/api/v1/location-map', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify({ brand: MCD }) });
  t.is(res.status, 200);
  t.is(res.json<{ brand: string }>().brand, MCD);
});
