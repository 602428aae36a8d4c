// The public brand endpoints on a real server (127.0.0.1, its own SQLite file, the real addon
// over the test dataset): GET /api/v1/brands (the directory: paging, sorting, the substring
// filter, bounds), /api/v1/brands/summary (live count, top countries, the sample) and
// /api/v1/brands/search (autocomplete ranking, tickers, not-found). Expected values come from
// the test dataset's Store (brand(i) for every i, and the brand's own json rows), never from
// another response of the endpoint under test.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { ERRORS } from '../ts/api/errors.ts';
import { querySync } from '../ts/native.ts';
import { TABLES_DIR } from '../ts/paths.ts';
import { parseCsvObjects } from './helpers/csv.ts';
import { testStore, type Location } from './helpers/dataset.ts';
import { request, type HttpResult } from './helpers/http.ts';
import { startServer } from './helpers/server.ts';

// ------------------------------------------------------------------ fixtures and helpers

const NO_RATE_LIMIT = { STOREMAP_RATE_LIMIT: '100000', STOREMAP_RATE_BURST: '100000' };
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const LOCATION_FIELDS = ['id', 'brand_wikidata', 'name', 'lat', 'lng', 'country', 'state', 'city', 'address', 'postcode', 'phone', 'opening_hours', 'last_updated'].sort();
const MCD = "McDonald's";
/** data/tickers.csv, the table the build reads tickers, parents and ids from: what the
 * directory must say of each listed brand, read here without the service. */
const TICKERS = new Map(parseCsvObjects(readFileSync(path.join(TABLES_DIR, 'tickers.csv'), 'utf8')).map((r) => [r.ticker, { wikidata: r.wikidata, company: r.company }]));

interface Entry {
  brand: string;
  brand_wikidata: string | null;
  ticker: string | null;
  company: string | null;
  location_count: number;
}
interface Page {
  total: number;
  limit: number;
  offset: number;
  count: number;
  brands: Entry[];
}
interface Summary {
  brand: string;
  brand_wikidata: string | null;
  ticker: string | null;
  company: string | null;
  matched_by: string;
  location_count: number;
  country_count: number;
  top_countries: { country: string; location_count: number }[];
  sample: Location[];
  snapshot_version: string;
}
interface SearchBody {
  query: string;
  count: number;
  results: (Entry & { match: 'ticker' | 'exact' | 'prefix' | 'substring' })[];
}
interface ErrorBody {
  error: string;
  code: string;
  suggestions?: { brand: string; location_count: number }[];
  details?: { field: string; message: string }[];
}

interface StoreBrand {
  index: number;
  name: string;
  lower: string;
  wikidata: string | null;
  ticker: string | null;
  company: string | null;
  count: number;
}

/** A name as the documented filter compares it: Unicode compatibility form (NFKC), lower case,
 * and the dot a Turkish capital İ leaves when lowered (U+0307 after i) dropped. */
const fold = (s: string) => s.normalize('NFKC').toLowerCase().replaceAll('i\u0307', 'i');

/** Every brand of the test dataset with at least one storefront the data formats serve. */
const storeBrands: StoreBrand[] = (() => {
  const store = testStore();
  const out: StoreBrand[] = [];
  for (let i = 0; ; i++) {
    const b = store.brand(i);
    if (!b) break;
    if (b.locationCount > 0) out.push({ index: i, name: b.name, lower: fold(b.name), wikidata: b.wikidata ?? null, ticker: b.ticker ?? null, company: b.company ?? null, count: b.locationCount });
  }
  return out;
})();
const byName = new Map(storeBrands.map((b) => [b.name, b]));

/** The documented order: the Unicode root collation at base strength (case and accents
 * folded), then the exact name so the order is total (UTF-16 code units). */
const ROOT_BASE = new Intl.Collator('und', { sensitivity: 'base' });
function nameOrder(a: { lower: string; name: string }, b: { lower: string; name: string }): number {
  return ROOT_BASE.compare(a.name, b.name) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

/** A name's first letter with case and accents taken off by Unicode decomposition: an
 * independent check of the folding (Š → s, É → e, Ö → o). */
const baseInitial = (name: string) => name.normalize('NFD').replace(/[\u0300-\u036f]/g, '').toLowerCase()[0] ?? '';
const expectedByCount = [...storeBrands].sort((a, b) => b.count - a.count || nameOrder(a, b));
const expectedByName = [...storeBrands].sort(nameOrder);
const entryOf = (b: StoreBrand): Entry => ({ brand: b.name, brand_wikidata: b.wikidata, ticker: b.ticker, company: b.company, location_count: b.count });

/** A brand's rows as the data formats serve them, straight from the addon. */
function brandRows(index: number): Location[] {
  const r = querySync(testStore(), { brands: [index], format: 'json', verifiedOnly: true });
  return (JSON.parse(r.body.toString()) as { locations: Location[] }).locations;
}

function get(base: string, path: string, headers: Record<string, string> = {}): Promise<HttpResult> {
  return request(base, { method: 'GET', path, headers });
}

async function okJson<T>(t: ExecutionContext, base: string, path: string, headers: Record<string, string> = {}): Promise<T> {
  const res = await get(base, path, headers);
  t.is(res.status, 200, `${path} -> ${res.status}: ${res.text.slice(0, 300)}`);
  t.regex(res.header('content-type'), /^application\/json/, path);
  return res.json<T>();
}

function assertError(t: ExecutionContext, res: HttpResult, status: number, code: keyof typeof ERRORS, where: string): ErrorBody {
  t.is(res.status, status, `${where}: expected ${status} ${code}, got ${res.status}: ${res.text.slice(0, 300)}`);
  t.regex(res.header('content-type'), /^application\/json/, where);
  const body = res.json<ErrorBody>();
  t.is(body.code, code, where);
  t.is(typeof body.error, 'string', where);
  t.true(body.error.length > 0, where);
  return body;
}

/** 400 INVALID_REQUEST whose details name `field` (as the field, or in the message). */
function assertInvalid(t: ExecutionContext, res: HttpResult, field: string, where: string): void {
  const body = assertError(t, res, 400, 'INVALID_REQUEST', where);
  t.true(Array.isArray(body.details) && body.details.length > 0, `${where}: details ${JSON.stringify(body.details)}`);
  const named = (body.details ?? []).some((d) => d.field === field || d.message.includes(field));
  t.true(named, `${where}: details do not name ${field}: ${JSON.stringify(body.details)}`);
}

function assertSuggestions(t: ExecutionContext, body: ErrorBody, where: string): void {
  t.true(Array.isArray(body.suggestions), `${where}: suggestions is an array: ${JSON.stringify(body)}`);
  for (const s of body.suggestions ?? []) {
    t.deepEqual(Object.keys(s).sort(), ['brand', 'location_count'], where);
    t.true(typeof s.brand === 'string' && s.brand.length > 0, where);
    t.true(Number.isInteger(s.location_count) && s.location_count >= 0, where);
  }
}

function assertLocation(t: ExecutionContext, l: Location, where: string): void {
  t.deepEqual(Object.keys(l).sort(), LOCATION_FIELDS, `${where} fields`);
  t.regex(l.id, /^loc_[0-9a-f]{16}$/, `${where}.id`);
  t.true(typeof l.name === 'string' && l.name.length > 0, `${where}.name`);
  t.true(typeof l.lat === 'number' && l.lat >= -90 && l.lat <= 90, `${where}.lat ${l.lat}`);
  t.true(typeof l.lng === 'number' && l.lng >= -180 && l.lng <= 180, `${where}.lng ${l.lng}`);
  t.regex(l.country, /^[A-Z]{2}$/, `${where}.country`);
  for (const k of ['state', 'city', 'address', 'postcode', 'phone', 'opening_hours'] as const) {
    t.true(l[k] === null || typeof l[k] === 'string', `${where}.${k} is ${JSON.stringify(l[k])}`);
  }
  t.regex(l.last_updated ?? '', ISO_TIME, `${where}.last_updated`);
}

const server = (t: ExecutionContext) => startServer(t, { env: NO_RATE_LIMIT });

// ------------------------------------------------------------------ GET /api/v1/brands

test('brands: the default page is limit 50, offset 0, sorted by count (ties by name), total = every brand with a storefront', async (t) => {
  const s = await server(t);
  const page = await okJson<Page>(t, s.base, '/api/v1/brands');
  t.deepEqual(Object.keys(page).sort(), ['brands', 'count', 'limit', 'offset', 'total']);
  t.true(storeBrands.length > 50, 'the dataset has more than one page of brands');
  t.is(page.total, storeBrands.length, 'total = brands with location_count > 0 (counted with testStore().brand(i))');
  t.is(page.limit, 50);
  t.is(page.offset, 0);
  t.is(page.count, 50);
  t.is(page.brands.length, 50);
  for (const [i, e] of page.brands.entries()) {
    t.deepEqual(Object.keys(e).sort(), ['brand', 'brand_wikidata', 'company', 'location_count', 'ticker'], `brands[${i}]`);
    const b = byName.get(e.brand);
    t.truthy(b, `brands[${i}] ${e.brand} is a brand of the dataset with storefronts`);
    if (b) t.deepEqual(e, entryOf(b), `brands[${i}] matches the store's brand info`);
  }
  for (let i = 1; i < page.brands.length; i++) {
    const a = page.brands[i - 1];
    const b = page.brands[i];
    t.true(a.location_count >= b.location_count, `location_count non-increasing at ${i}: ${a.location_count} then ${b.location_count}`);
    if (a.location_count === b.location_count) {
      t.true(nameOrder({ lower: a.brand.toLowerCase(), name: a.brand }, { lower: b.brand.toLowerCase(), name: b.brand }) < 0, `tie at ${i} ordered by name: ${a.brand}, ${b.brand}`);
    }
  }
  t.deepEqual(page.brands, expectedByCount.slice(0, 50).map(entryOf), 'the first page is the 50 brands with the most storefronts');
  t.is(page.brands[0].location_count, Math.max(...storeBrands.map((b) => b.count)));
});

test('brands: q is a case-insensitive substring filter; total is the number of matching brands', async (t) => {
  const s = await server(t);
  for (const q of ['bur', 'MART', 'Coffee', "'s", 'x']) {
    const needle = fold(q);
    const expected = expectedByCount.filter((b) => b.lower.includes(needle));
    t.true(expected.length > 0 && expected.length <= 500, `${q}: a usable filter (${expected.length} brands)`);
    const page = await okJson<Page>(t, s.base, `/api/v1/brands?q=${encodeURIComponent(q)}&limit=500`);
    t.is(page.total, expected.length, `${q}: total`);
    t.is(page.count, expected.length, `${q}: count`);
    t.true(page.brands.every((e) => fold(e.brand).includes(needle)), `${q}: every result contains it`);
    t.deepEqual(page.brands, expected.map(entryOf), `${q}: exactly the matching brands, by count`);
    // The same filter in another case gives the same page.
    const other = await okJson<Page>(t, s.base, `/api/v1/brands?q=${encodeURIComponent(q === q.toUpperCase() ? q.toLowerCase() : q.toUpperCase())}&limit=500`);
    t.deepEqual(other, page, `${q}: case does not matter`);
  }
  const none = await okJson<Page>(t, s.base, '/api/v1/brands?q=zzqqxxjj');
  t.deepEqual(none, { total: 0, limit: 50, offset: 0, count: 0, brands: [] });
});

test('brands: sort=name is the root collation (case and accents folded), over the whole directory, page by page', async (t) => {
  const s = await server(t);
  const all: Entry[] = [];
  let total = -1;
  for (let offset = 0; offset < storeBrands.length; offset += 500) {
    const page = await okJson<Page>(t, s.base, `/api/v1/brands?sort=name&limit=500&offset=${offset}`);
    total = page.total;
    t.is(page.offset, offset);
    t.is(page.limit, 500);
    t.is(page.count, page.brands.length);
    all.push(...page.brands);
  }
  t.is(total, storeBrands.length);
  t.is(all.length, storeBrands.length, 'the pages together hold every brand once');
  t.is(new Set(all.map((e) => e.brand)).size, all.length, 'no brand twice');
  t.deepEqual(all, expectedByName.map(entryOf));
  // Accents fold: among names starting with a Latin letter, the accent-free initials never go
  // back (so "Škoda" is among the S names, not after "z"), and some accented initial is there.
  const latin = all.map((e) => e.brand).filter((n) => /^[a-z]$/.test(baseInitial(n)));
  const back = latin.filter((n, i) => i > 0 && baseInitial(latin[i - 1]!) > baseInitial(n));
  t.deepEqual(back, [], 'initials in order once accents are folded');
  t.true(
    latin.some((n) => /^[^\x00-\x7f]/.test(n)),
    'the directory has a name starting with an accented Latin letter',
  );
  // Case really is ignored: some lower-case name sits between capitalised ones.
  const firstLower = all.findIndex((e) => /^[a-z]/.test(e.brand));
  t.true(firstLower >= 0, 'the directory has a name starting in lower case');
  t.true(all.slice(firstLower + 1).some((e) => /^[A-Z]/.test(e.brand)), 'capitalised names follow a lower-case one');
});

test('brands: limit/offset paging is consistent: consecutive pages concatenated equal one big page', async (t) => {
  const s = await server(t);
  for (const [sort, q] of [['count', ''], ['name', ''], ['count', 'a']] as const) {
    const qs = `sort=${sort}${q ? `&q=${q}` : ''}`;
    const big = await okJson<Page>(t, s.base, `/api/v1/brands?${qs}&limit=91&offset=13`);
    t.is(big.count, 91);
    const pieces: Entry[] = [];
    for (let offset = 13; offset < 13 + 91; offset += 7) {
      const p = await okJson<Page>(t, s.base, `/api/v1/brands?${qs}&limit=7&offset=${offset}`);
      t.is(p.total, big.total, `${qs} offset ${offset}: same total`);
      pieces.push(...p.brands);
    }
    t.deepEqual(pieces, big.brands, `${qs}: 13 pages of 7 = one page of 91`);
  }
  // The last page is short, and past the end is empty with the same total.
  const n = storeBrands.length;
  const last = await okJson<Page>(t, s.base, `/api/v1/brands?limit=10&offset=${n - 3}`);
  t.is(last.count, 3);
  t.deepEqual(last.brands, expectedByCount.slice(n - 3).map(entryOf));
  const past = await okJson<Page>(t, s.base, `/api/v1/brands?limit=10&offset=${n + 5}`);
  t.deepEqual(past, { total: n, limit: 10, offset: n + 5, count: 0, brands: [] });
  // The bounds themselves are accepted.
  t.is((await okJson<Page>(t, s.base, '/api/v1/brands?limit=1')).count, 1);
  t.is((await okJson<Page>(t, s.base, '/api/v1/brands?limit=500')).count, 500);
});

test('brands: out-of-range or malformed limit, offset, sort, q and unknown parameters are 400 INVALID_REQUEST with details', async (t) => {
  const s = await server(t);
  const cases: [string, string][] = [
    ['limit=0', 'limit'],
    ['limit=501', 'limit'],
    ['limit=-1', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=2.5', 'limit'],
    ['limit=', 'limit'],
    ['offset=-1', 'offset'],
    ['offset=abc', 'offset'],
    ['sort=bogus', 'sort'],
    ['sort=COUNT', 'sort'],
    ['q=', 'q'],
    ['limit=5&limit=6', 'limit'],
    ['foo=1', 'foo'],
    ['Limit=5', 'Limit'],
  ];
  for (const [qs, field] of cases) assertInvalid(t, await get(s.base, `/api/v1/brands?${qs}`), field, `GET /api/v1/brands?${qs}`);
  // Several bad fields: every one is listed.
  const res = await get(s.base, '/api/v1/brands?limit=0&offset=-1&sort=bogus');
  const body = assertError(t, res, 400, 'INVALID_REQUEST', 'three bad fields');
  t.deepEqual((body.details ?? []).map((d) => d.field).sort(), ['limit', 'offset', 'sort']);
});

test('brands: limit and offset are decimal integers: hex, exponents and empty values are 400, not coerced', async (t) => {
  const s = await server(t);
  for (const [qs, field] of [
    ['limit=0x10', 'limit'],
    ['limit=1e1', 'limit'],
    ['offset=0x10', 'offset'],
    ['offset=', 'offset'],
  ]) {
    assertInvalid(t, await get(s.base, `/api/v1/brands?${qs}`), field, `GET /api/v1/brands?${qs}`);
  }
});

test('brands: an unknown query parameter is named as the field in details (a GET has no body)', async (t) => {
  const s = await server(t);
  for (const p of ['/api/v1/brands?foo=1', '/api/v1/brands/search?q=star&foo=1', '/api/v1/brands/summary?brand=MCD&foo=1']) {
    const body = assertError(t, await get(s.base, p), 400, 'INVALID_REQUEST', p);
    t.deepEqual(
      (body.details ?? []).map((d) => d.field),
      ['foo'],
      `${p}: details ${JSON.stringify(body.details)}`,
    );
  }
});

test('brand endpoints are free: no key needed; with a key, the balance is unchanged and no usage row is written', async (t) => {
  const s = await server(t);
  const k = await s.keys.create({ plan: 'enterprise', credits: 100, name: 'free check' });
  const trial = await s.keys.create({ plan: 'trial' });
  const trialBalance = (await s.keys.get(trial.record.id))!.credits;
  const paths = ['/api/v1/brands', '/api/v1/brands?q=star&sort=name', '/api/v1/brands/summary?brand=MCD', '/api/v1/brands/search?q=star'];
  for (const p of paths) {
    await okJson(t, s.base, p);
    await okJson(t, s.base, p, { 'x-api-key': k.key });
    await okJson(t, s.base, p, { 'x-api-key': trial.key });
    await okJson(t, s.base, p, { 'x-api-key': 'sm_live_' + '0'.repeat(24) }); // an unknown key does not matter either
  }
  t.is((await s.keys.get(k.record.id))!.credits, 100, 'enterprise balance unchanged');
  t.is((await s.keys.get(trial.record.id))!.credits, trialBalance, 'trial balance unchanged');
  const [rows] = await s.query<{ n: number | string }>('SELECT COUNT(*) AS n FROM usage');
  t.is(Number(rows.n), 0, 'no usage rows');
});

// ------------------------------------------------------------------ GET /api/v1/brands/summary

test('summary: name, alias, misspelling, other-script name and ticker resolve to the canonical brand with its live figures', async (t) => {
  const s = await server(t);
  const store = testStore();
  const version = (store.info() as { snapshot_version: string }).snapshot_version;
  const cases: [string, string | null][] = [
    ['Starbucks', 'name'],
    ['starbucks', 'name'],
    [MCD, 'name'],
    ['Mc Donalds', 'variant'],
    ['macdonalds', null], // a listed misspelling
    ['マクドナルド', null], // McDonald's in katakana
    ['MCD', 'ticker'],
    ['SBUX', 'ticker'],
    ['home depot', 'variant'],
  ];
  for (const [q, by] of cases) {
    const resolved = store.resolve(q);
    t.truthy(resolved, `${q} resolves in the store`);
    if (!resolved) continue;
    const info = store.brand(resolved.brand)!;
    const body = await okJson<Summary>(t, s.base, `/api/v1/brands/summary?brand=${encodeURIComponent(q)}`);
    t.deepEqual(Object.keys(body).sort(), ['brand', 'brand_wikidata', 'company', 'country_count', 'location_count', 'matched_by', 'sample', 'snapshot_version', 'ticker', 'top_countries'], q);
    t.is(body.brand, info.name, `${q}: canonical name`);
    t.is(body.brand_wikidata, info.wikidata ?? null, `${q}: brand_wikidata`);
    t.is(body.ticker, info.ticker ?? null, `${q}: ticker`);
    t.is(body.company, info.company ?? null, `${q}: company`);
    t.is(body.matched_by, by ?? resolved.by, `${q}: matched_by`);
    t.true(['name', 'variant', 'alt_name', 'ticker'].includes(body.matched_by), `${q}: matched_by ${body.matched_by}`);
    t.is(body.location_count, info.locationCount, `${q}: location_count = testStore().brand(i).locationCount`);
    t.is(body.snapshot_version, version, q);
  }
  const mcd = await okJson<Summary>(t, s.base, '/api/v1/brands/summary?brand=MCD');
  t.is(mcd.brand, MCD, 'a ticker is answered with the canonical brand, not the ticker');
  t.is(mcd.ticker, 'MCD');
  t.is(mcd.matched_by, 'ticker');
  const listed = TICKERS.get('MCD')!;
  t.like(mcd, { brand_wikidata: listed.wikidata, company: listed.company }, 'as data/tickers.csv lists it');
});

/** Tickers of data/tickers.csv that are also the name of one of their company's other brands
 * (GAP: Gap Inc., primary brand Old Navy, portfolio Gap), with the portfolio brand's name. */
const OWN_NAME_TICKERS = parseCsvObjects(readFileSync(path.join(TABLES_DIR, 'tickers.csv'), 'utf8')).flatMap((r) =>
  r.portfolio
    .split('|')
    .filter((name) => fold(name) === fold(r.ticker))
    .map((name) => ({ ticker: r.ticker, primary: r.brand, name })),
);

test('a ticker that is also the name of its company\'s other brand: the name asks for that brand, the ticker field for the primary one, search puts the name\'s brand first', async (t) => {
  const s = await server(t);
  t.true(OWN_NAME_TICKERS.length >= 1, 'data/tickers.csv has such a ticker (GAP)');
  for (const { ticker, primary, name } of OWN_NAME_TICKERS) {
    const own = byName.get(name);
    const main = byName.get(primary);
    t.truthy(own && main, `${name} and ${primary} both have storefronts in the test dataset`);
    if (!own || !main) continue;
    // Where the company's brand is the smaller, the rule for namesakes alone would give the ticker.
    t.true(own.count < main.count, `${name} (${own.count}) is smaller than ${primary} (${main.count}), so the case is tested`);
    for (const q of [name, name.toLowerCase(), ticker]) {
      const body = await okJson<Summary>(t, s.base, `/api/v1/brands/summary?brand=${encodeURIComponent(q)}`);
      t.like(body, { brand: name, matched_by: 'name', location_count: own.count }, `summary ${q}`);
      const search = await okJson<SearchBody>(t, s.base, `/api/v1/brands/search?q=${encodeURIComponent(q)}`);
      t.is(search.results[0]?.brand, name, `search ${q}: the brand it resolves to first`);
      t.true(search.results.some((r) => r.brand === primary && r.match === 'ticker'), `search ${q}: ${primary} still offered as the ticker's brand`);
      // First even where the ranking alone would cut it off.
      const one = await okJson<SearchBody>(t, s.base, `/api/v1/brands/search?q=${encodeURIComponent(q)}&limit=1`);
      t.deepEqual(one.results.map((r) => r.brand), [name], `search ${q}, limit 1`);
    }
    const { key } = await s.keys.create({ plan: 'enterprise', credits: 100, name: 'ticker field' });
    const map = await request(s.base, { method: 'POST', path: '/api/v1/location-map', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify({ tickers: [ticker], format: 'json' }) });
    t.is(map.status, 200, map.text.slice(0, 300));
    t.is(map.json<{ brand: string }>().brand, primary, `tickers: [${ticker}] is the primary brand`);
  }
});

test('summary: location_count, country_count and top_countries agree with the brand\'s own rows; the sample is real rows from distinct top countries', async (t) => {
  const s = await server(t);
  const store = testStore();
  // A big brand (more than five countries) and a small one (two countries).
  const big = store.resolve('MCD')!.brand;
  const small = storeBrands.find((b) => b.count >= 3 && new Set(brandRows(b.index).map((l) => l.country)).size === 2);
  t.truthy(small, 'a brand present in exactly two countries');
  for (const index of [big, small!.index]) {
    const info = store.brand(index)!;
    const rows = brandRows(index);
    const byCountry = new Map<string, number>();
    for (const l of rows) byCountry.set(l.country, (byCountry.get(l.country) ?? 0) + 1);
    const ranked = [...byCountry].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));

    const body = await okJson<Summary>(t, s.base, `/api/v1/brands/summary?brand=${encodeURIComponent(info.name)}`);
    const w = info.name;
    t.is(body.location_count, rows.length, `${w}: location_count = the brand's json rows`);
    t.is(body.country_count, byCountry.size, `${w}: country_count = distinct countries of its rows`);
    t.is(body.top_countries.length, Math.min(5, byCountry.size), `${w}: up to five top countries`);
    for (let i = 1; i < body.top_countries.length; i++) {
      t.true(body.top_countries[i - 1].location_count >= body.top_countries[i].location_count, `${w}: top_countries sorted, most first`);
    }
    for (const c of body.top_countries) {
      t.deepEqual(Object.keys(c).sort(), ['country', 'location_count'], w);
      t.is(c.location_count, byCountry.get(c.country) ?? -1, `${w}: ${c.country} count = its rows there`);
    }
    // They are the top five: no country left out has more storefronts than the smallest kept.
    const kept = new Set(body.top_countries.map((c) => c.country));
    const minKept = Math.min(...body.top_countries.map((c) => c.location_count));
    t.true(ranked.every(([c, n]) => kept.has(c) || n <= minKept), `${w}: no omitted country outranks a kept one`);
    t.deepEqual(body.top_countries.map((c) => c.location_count), ranked.slice(0, 5).map(([, n]) => n), `${w}: the five largest counts`);
    const sum = body.top_countries.reduce((a, c) => a + c.location_count, 0);
    t.true(sum <= body.location_count, `${w}: top countries sum ${sum} <= location_count ${body.location_count}`);

    // The contract's 5-row sample: one row from each top country, then the rest handed out one
    // at a time, biggest country first, to countries with rows left.
    const quota = body.top_countries.map(() => 1);
    for (let left = 5 - quota.length; left > 0; ) {
      const before = left;
      body.top_countries.forEach((c, i) => {
        if (left > 0 && quota[i] < c.location_count) {
          quota[i]++;
          left--;
        }
      });
      if (left === before) break;
    }
    t.is(body.sample.length, Math.min(5, sum), `${w}: a sample of five, or every row of a smaller brand`);
    const sampleCountries = body.sample.map((l) => l.country);
    t.deepEqual(
      body.top_countries.map((c) => sampleCountries.filter((x) => x === c.country).length),
      quota,
      `${w}: sample rows per top country`,
    );
    t.is(new Set(body.sample.map((l) => l.id)).size, body.sample.length, `${w}: sample rows are distinct`);
    const rowById = new Map(rows.map((l) => [l.id, l]));
    for (const [i, l] of body.sample.entries()) {
      assertLocation(t, l, `${w} sample[${i}]`);
      t.deepEqual(l, rowById.get(l.id), `${w} sample[${i}] is one of the brand's served rows, unchanged`);
    }
  }
});

test('summary: an unknown brand is 404 NOT_FOUND with a suggestions array; a missing or empty brand is 400', async (t) => {
  const s = await server(t);
  const store = testStore();
  const unknown = assertError(t, await get(s.base, '/api/v1/brands/summary?brand=zzzzqqq'), 404, 'NOT_FOUND', 'zzzzqqq');
  assertSuggestions(t, unknown, 'zzzzqqq');
  t.is(store.resolve('Starbuks'), null, 'the typo does not resolve');
  const typo = assertError(t, await get(s.base, '/api/v1/brands/summary?brand=Starbuks'), 404, 'NOT_FOUND', 'Starbuks');
  assertSuggestions(t, typo, 'Starbuks');
  const sbux = store.brand(store.resolve('Starbucks')!.brand)!;
  t.deepEqual(typo.suggestions?.[0], { brand: 'Starbucks', location_count: sbux.locationCount }, 'the close match first, with its live count');
  assertInvalid(t, await get(s.base, '/api/v1/brands/summary'), 'brand', 'no brand');
  assertInvalid(t, await get(s.base, '/api/v1/brands/summary?brand='), 'brand', 'empty brand');
  assertInvalid(t, await get(s.base, '/api/v1/brands/summary?brand=%20%20'), 'brand', 'blank brand');
  assertInvalid(t, await get(s.base, '/api/v1/brands/summary?brand=MCD&brand=SBUX'), 'brand', 'two brands');
  assertInvalid(t, await get(s.base, `/api/v1/brands/summary?brand=${'a'.repeat(201)}`), 'brand', 'a 201-character brand');
});

// ------------------------------------------------------------------ GET /api/v1/brands/search

const RANK = { ticker: 0, exact: 1, prefix: 2, substring: 3 } as const;

test('search: ranked ticker, exact, prefix, then substring matches, most storefronts first within a rank; the complete list when it fits', async (t) => {
  const s = await server(t);
  for (const q of ['star', 'Bur', 'mart']) {
    const needle = fold(q);
    const body = await okJson<SearchBody>(t, s.base, `/api/v1/brands/search?q=${encodeURIComponent(q)}&limit=50`);
    t.deepEqual(Object.keys(body).sort(), ['count', 'query', 'results'], q);
    t.is(body.query, q);
    t.is(body.count, body.results.length, q);
    const contains = storeBrands.filter((b) => b.lower.includes(needle) || b.ticker === q.toUpperCase());
    t.is(body.results.length, Math.min(50, contains.length), `${q}: every match when there are at most 50 (${contains.length})`);
    for (const [i, r] of body.results.entries()) {
      t.deepEqual(Object.keys(r).sort(), ['brand', 'brand_wikidata', 'company', 'location_count', 'match', 'ticker'], `${q} results[${i}]`);
      const b = byName.get(r.brand)!;
      t.truthy(b, `${q}: ${r.brand} is a directory brand`);
      if (!b) continue;
      t.deepEqual({ brand: r.brand, brand_wikidata: r.brand_wikidata, ticker: r.ticker, company: r.company, location_count: r.location_count }, entryOf(b), `${q}: ${r.brand} live figures`);
      const lower = fold(r.brand);
      if (r.match === 'exact') t.is(lower, needle, `${q}: ${r.brand} exact`);
      else if (r.match === 'prefix') t.true(lower.startsWith(needle) && lower !== needle, `${q}: ${r.brand} prefix`);
      else if (r.match === 'substring') t.true(lower.includes(needle) && !lower.startsWith(needle), `${q}: ${r.brand} substring`);
      else t.is(r.ticker, q.toUpperCase(), `${q}: ${r.brand} ticker`);
    }
    for (let i = 1; i < body.results.length; i++) {
      const a = body.results[i - 1];
      const b = body.results[i];
      t.true(RANK[a.match] <= RANK[b.match], `${q}: ${a.match} ${a.brand} before ${b.match} ${b.brand}`);
      if (a.match === b.match) t.true(a.location_count >= b.location_count, `${q}: within ${a.match}, most storefronts first (${a.brand}, ${b.brand})`);
    }
    const prefixes = body.results.filter((r) => r.match === 'prefix').length;
    const substrings = body.results.filter((r) => r.match === 'substring').length;
    t.true(prefixes > 0 && substrings > 0, `${q}: both prefix (${prefixes}) and substring (${substrings}) matches, so the order is tested`);
    t.is(prefixes, contains.filter((b) => b.lower.startsWith(needle) && b.lower !== needle).length, `${q}: every prefix match`);
  }
});

test('search: a ticker query returns its brand first, as a ticker match', async (t) => {
  const s = await server(t);
  // T (AT&T) and DG are also substrings of many other names: the ticker still comes first.
  for (const q of ['MCD', 'SBUX', 'T', 'DG']) {
    const owner = storeBrands.find((b) => b.ticker === q);
    t.truthy(owner, `${q} is a ticker of a directory brand`);
    if (!owner) continue;
    const body = await okJson<SearchBody>(t, s.base, `/api/v1/brands/search?q=${q}`);
    t.true(body.count >= 1, q);
    t.deepEqual(body.results[0], { ...entryOf(owner), match: 'ticker' }, `${q}: ticker match first`);
    t.is(body.results[0].ticker, q);
    t.is(body.results.filter((r) => r.brand === owner.name).length, 1, `${q}: the brand once`);
  }
  t.true((await okJson<SearchBody>(t, s.base, '/api/v1/brands/search?q=T&limit=50')).count > 1, 'T matches more than its ticker');
});

test('search: results never exceed limit (default 10); a misspelling the resolver knows is offered as an exact match', async (t) => {
  const s = await server(t);
  const many = storeBrands.filter((b) => b.lower.includes('a')).length;
  t.true(many > 50);
  const def = await okJson<SearchBody>(t, s.base, '/api/v1/brands/search?q=a');
  t.is(def.count, 10);
  t.is(def.results.length, 10);
  for (const limit of [1, 3, 50]) {
    const body = await okJson<SearchBody>(t, s.base, `/api/v1/brands/search?q=a&limit=${limit}`);
    t.is(body.results.length, limit, `limit ${limit}`);
    t.is(body.count, limit);
  }
  // Resolution knows "macdonalds"; no directory name contains it.
  t.false(storeBrands.some((b) => b.lower.includes('macdonalds')));
  const mcd = testStore().brand(testStore().resolve('macdonalds')!.brand)!;
  const body = await okJson<SearchBody>(t, s.base, '/api/v1/brands/search?q=macdonalds');
  t.deepEqual(body.results[0], { brand: mcd.name, brand_wikidata: mcd.wikidata ?? null, ticker: mcd.ticker ?? null, company: mcd.company ?? null, location_count: mcd.locationCount, match: 'exact' });
  const one = await okJson<SearchBody>(t, s.base, '/api/v1/brands/search?q=macdonalds&limit=1');
  t.is(one.results.length, 1);
});

test('search: an unknown ticker-shaped query is 404 NOT_FOUND with suggestions; other unknown text is 200 with no results; q is required', async (t) => {
  const s = await server(t);
  t.is(testStore().resolve('ZZZQ'), null);
  t.false(storeBrands.some((b) => b.lower.includes('zzzq')));
  const nf = assertError(t, await get(s.base, '/api/v1/brands/search?q=ZZZQ'), 404, 'NOT_FOUND', 'ZZZQ');
  assertSuggestions(t, nf, 'ZZZQ');
  t.true((nf.suggestions ?? []).length > 0, 'ZZZQ: at least one similar canonical name');

  for (const q of ['zzzzqqq xx', 'zzzq']) {
    const body = await okJson<SearchBody>(t, s.base, `/api/v1/brands/search?q=${encodeURIComponent(q)}`);
    t.deepEqual(body, { query: q, count: 0, results: [] }, q);
  }

  assertInvalid(t, await get(s.base, '/api/v1/brands/search'), 'q', 'no q');
  assertInvalid(t, await get(s.base, '/api/v1/brands/search?q='), 'q', 'empty q');
  assertInvalid(t, await get(s.base, '/api/v1/brands/search?q=a&limit=0'), 'limit', 'limit 0');
  assertInvalid(t, await get(s.base, '/api/v1/brands/search?q=a&limit=51'), 'limit', 'limit 51');
  assertInvalid(t, await get(s.base, '/api/v1/brands/search?q=a&limit=x'), 'limit', 'limit x');
  assertInvalid(t, await get(s.base, `/api/v1/brands/search?q=${'a'.repeat(101)}`), 'q', 'a 101-character q');
});

test('every listed brand in the directory carries its Wikidata id, its ticker and its company as data/tickers.csv lists them', async (t) => {
  const s = await server(t);
  const brands: Entry[] = [];
  for (let offset = 0; ; offset += 500) {
    const page = await okJson<Page>(t, s.base, `/api/v1/brands?limit=500&offset=${offset}&sort=name`);
    brands.push(...page.brands);
    if (brands.length >= page.total || page.brands.length === 0) break;
  }
  const listed = brands.filter((b) => b.ticker !== null);
  t.true(listed.length >= 20, `${listed.length} directory brands with a ticker`);
  for (const b of listed) {
    const row = TICKERS.get(b.ticker!);
    t.truthy(row, `${b.ticker} is in data/tickers.csv`);
    t.is(b.company, row?.company ?? null, `${b.brand}: company`);
    t.is(b.brand_wikidata, row?.wikidata ?? null, `${b.brand}: brand_wikidata`);
  }
  // A brand without a ticker still has its Wikidata id where the catalog knows one, and no company.
  const unlisted = brands.filter((b) => b.ticker === null);
  t.true(unlisted.every((b) => b.company === null));
  t.true(unlisted.filter((b) => b.brand_wikidata !== null).every((b) => /^Q\d+$/.test(b.brand_wikidata!)));
  t.true(unlisted.some((b) => b.brand_wikidata !== null), 'unlisted brands carry ids too');
});
