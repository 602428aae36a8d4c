// What a second probe of the service found (issue 29, 2026-11-30), each fixed and held here on a
// real server over 127.0.0.1 reading the test dataset: query names every object inherits, a
// state named without a country, spreadsheet formulas in CSV cells, HEAD and a CORS preflight,
// the brand summary's five rows, a focus map outside the country filter, Unicode forms in the
// directory and the city filter, ticker shapes on autocomplete, brands only maps draw, a body
// in another charset, and an unknown city's 400 naming its field.
import test from 'ava';
import { parseCsvObjects } from './helpers/csv.ts';
import { testDataDir, testStore } from './helpers/dataset.ts';
import { request, postMap } from './helpers/http.ts';
import { assertError, balance, MCD, okJson, server, type ErrorBody } from './helpers/location-map.ts';
import { headerText } from '../ts/api/headers.ts';
import path from 'node:path';
import { loadRenderer, NativeError, renderSync, type RenderRequest } from '../ts/native.ts';

const get = (base: string, path: string, headers: Record<string, string> = {}) => request(base, { method: 'GET', path, headers });

/** The fields a 400's details name. */
const fields = (e: ErrorBody) => (e.details as { field: string }[] | undefined)?.map((d) => d.field);

/** The test dataset's brands, as the addon reads them. */
function brands() {
  const store = testStore();
  const out = [];
  for (let i = 0; ; i++) {
    const b = store.brand(i);
    if (!b) return out;
    out.push({ ...b, index: i });
  }
}

test('query parameters named like the members every object inherits are unknown parameters, not a 500', async (t) => {
  const s = await server(t);
  for (const name of ['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__']) {
    for (const path of [`/api/v1/brands?${name}=1`, `/api/v1/brands/search?q=star&${name}=1`, `/api/v1/changes?brand=Starbucks&since=2026-01-01&${name}=1`]) {
      const r = await get(s.base, path, { 'x-api-key': s.key });
      const e = assertError(t, r, 400, 'INVALID_REQUEST');
      t.deepEqual(fields(e), [name], path);
    }
  }
  // Twice over, it is still one unknown parameter (a list), not a replaced prototype.
  const twice = await get(s.base, '/api/v1/brands?__proto__=a&__proto__=b');
  t.deepEqual(fields(assertError(t, twice, 400, 'INVALID_REQUEST')), ['__proto__']);
});

test("a state without a country means the US state, not the same code in another country", async (t) => {
  const s = await server(t);
  const all = (await okJson(t, s, { brand: MCD })).env.locations;
  // A code McDonald's has rows under both in the US and in another country (Brazil's MS, PA, SC
  // beside Mississippi, Pennsylvania, South Carolina ...): the USPS names are written here.
  const usps: Record<string, string> = { MS: 'Mississippi', PA: 'Pennsylvania', SC: 'South Carolina', MT: 'Montana', GA: 'Georgia', WA: 'Washington', AL: 'Alabama', MA: 'Massachusetts', CA: 'California', TX: 'Texas', NY: 'New York', FL: 'Florida', IL: 'Illinois', OH: 'Ohio', AZ: 'Arizona', CO: 'Colorado' };
  const shared = Object.keys(usps).find((code) => all.some((l) => l.country === 'US' && l.state === code) && all.some((l) => l.country !== 'US' && l.state === code));
  if (!shared) throw new Error(`the test data has no state code of ${Object.keys(usps).join(', ')} in the US and elsewhere`);
  const expected = all.filter((l) => l.country === 'US' && l.state === shared).length;
  for (const state of [shared, shared.toLowerCase(), usps[shared]]) {
    const got = (await okJson(t, s, { brand: MCD, state })).env;
    t.is(got.count, expected, state);
    t.true(got.locations.every((l) => l.country === 'US'), state);
    t.is(got.region, `US / ${shared}`);
  }
  // A subdivision only one country has, by its name, narrows to that country; a code several
  // countries' rows carry matches in each of them. The first of Germany's big states with rows
  // (ISO 3166-2's codes and English names, written here).
  const german: Record<string, string> = { BY: 'Bavaria', NW: 'North Rhine-Westphalia', BW: 'Baden-Württemberg', NI: 'Lower Saxony' };
  const land = Object.keys(german).find((code) => all.some((l) => l.country === 'DE' && l.state === code));
  if (!land) throw new Error(`the test data has no McDonald's in ${Object.values(german).join(', ')}`);
  const inLand = all.filter((l) => l.country === 'DE' && l.state === land);
  const byName = (await okJson(t, s, { brand: MCD, state: german[land] })).env;
  t.is(byName.count, inLand.length);
  t.is(byName.region, `DE / ${land}`);
  t.is((await okJson(t, s, { brand: MCD, state: land })).env.count, all.filter((l) => l.state === land).length);
  // With a country, that country's subdivision.
  const other = all.find((l) => l.country !== 'US' && l.state === shared)!.country;
  const there = (await okJson(t, s, { brand: MCD, country: other, state: shared })).env;
  t.is(there.count, all.filter((l) => l.country === other && l.state === shared).length);
});

test('a CSV cell a spreadsheet would run as a formula is written as text; phone numbers stay numbers', async (t) => {
  const s = await server(t);
  const brand = brands().find((b) => b.locationCount > 0 && /^[=+\-@]/.test(b.name));
  if (!brand) throw new Error('the test dataset has no brand whose name starts with =, +, - or @');
  const csv = await postMap(s.base, s.key, { brand: brand.name, format: 'csv' });
  t.is(csv.status, 200, csv.text.slice(0, 200));
  const rows = parseCsvObjects(csv.text);
  const data = (await okJson(t, s, { brand: brand.name })).env.locations;
  t.is(rows.length, data.length);
  t.true(rows.length > 0);
  for (const [i, r] of rows.entries()) {
    t.is(r.brand, `'${brand.name}`);
    const name = data[i].name ?? '';
    t.is(r.name, /^[=+\-@]/.test(name) ? `'${name}` : name);
    // E.164 numbers begin with + and are digits: a number, not a formula.
    if (data[i].phone) t.is(r.phone, data[i].phone);
  }
  t.true(data.some((l) => l.phone?.startsWith('+')), 'some phone number starts with +');
});

test('HEAD answers where GET is free, a charged GET refuses it, and the status endpoint answers a CORS preflight', async (t) => {
  const s = await server(t);
  const keyed = { 'x-api-key': s.key };
  for (const [path, headers] of [['/api/v1/status'], ['/api/v1/brands?limit=2'], ['/api/v1/brands/search?q=star'], ['/llms.txt'], ['/api/openapi.yaml'], ['/api/v1/usage', keyed]] as const) {
    const g = await request(s.base, { method: 'GET', path, headers });
    const h = await request(s.base, { method: 'HEAD', path, headers });
    t.is(h.status, 200, path);
    t.is(h.raw.length, 0, path);
    t.is(h.header('content-type'), g.header('content-type'), path);
    // The length the GET's body has (the usage report's counts may have moved by the GET, and
    // the status report may have been computed again in between).
    if (!['/api/v1/usage', '/api/v1/status'].includes(path)) t.is(h.header('content-length'), String(g.raw.length), `${path}: a HEAD carries the body's length`);
    else t.regex(h.header('content-length'), /^[1-9]\d*$/, path);
  }
  const before = await balance(s, s.keyId);
  const charged = await request(s.base, { method: 'HEAD', path: '/api/v1/changes?brand=Starbucks&since=2026-01-01', headers: { 'x-api-key': s.key } });
  t.is(charged.status, 405);
  t.is(await balance(s, s.keyId), before);
  // An error's body carries its length too, whoever wrote it: a refusal of the API's own, and
  // restify's 404 in the contract's shape.
  for (const [path, status] of [['/api/v1/brands?limit=0', 400], ['/api/v1/nowhere', 404]] as const) {
    const e = await request(s.base, { method: 'GET', path });
    t.is(e.status, status, path);
    t.is(e.header('content-type'), 'application/json; charset=utf-8', path);
    t.is(e.header('content-length'), String(e.raw.length), path);
    t.truthy(e.json<{ code: string }>().code, path);
  }
  const pre = await request(s.base, { method: 'OPTIONS', path: '/api/v1/status', headers: { origin: 'https://example.com', 'access-control-request-method': 'GET' } });
  t.is(pre.status, 204);
  t.is(pre.header('access-control-allow-origin'), '*');
  t.regex(pre.header('access-control-allow-methods'), /\bGET\b/);
});

test("a brand summary's sample is five rows: all five in a one-country brand's country, one from each of five countries", async (t) => {
  const s = await server(t);
  const store = testStore();
  const all = brands().filter((b) => b.locationCount >= 5);
  const one = all.find((b) => store.countryCounts(b.index).length === 1 && b.name === store.resolve(b.name)?.name);
  const many = all.find((b) => store.countryCounts(b.index).length >= 5 && b.name === store.resolve(b.name)?.name);
  if (!one || !many) throw new Error('the test dataset lacks a one-country or a five-country brand with five rows');
  const sum1 = (await get(s.base, `/api/v1/brands/summary?brand=${encodeURIComponent(one.name)}`)).json();
  t.is(sum1.sample.length, 5);
  t.true(sum1.sample.every((l: { country: string }) => l.country === store.countryCounts(one.index)[0].country));
  t.is(new Set(sum1.sample.map((l: { id: string }) => l.id)).size, 5);
  const sum5 = (await get(s.base, `/api/v1/brands/summary?brand=${encodeURIComponent(many.name)}`)).json();
  t.is(sum5.sample.length, 5);
  t.deepEqual(
    sum5.sample.map((l: { country: string }) => l.country),
    store
      .countryCounts(many.index)
      .slice(0, 5)
      .map((c) => c.country),
  );
});

test('a focus map of a country outside the country filter is a 400, charged nothing', async (t) => {
  const s = await server(t);
    const before = await balance(s, s.keyId);
  const r = await postMap(s.base, s.key, { brand: 'Starbucks', format: 'png', focus_country: 'FR', country: 'US' });
  t.deepEqual(fields(assertError(t, r, 400, 'INVALID_REQUEST')), ['focus_country']);
  t.is(await balance(s, s.keyId), before);
  // The same country either way, or the one a US focus map draws as an inset, is a map.
  t.is((await postMap(s.base, s.key, { brand: 'Starbucks', format: 'png', focus_country: 'us', country: 'US', width: 300, height: 200 })).status, 200);
  t.true([200, 404].includes((await postMap(s.base, s.key, { brand: 'Starbucks', format: 'png', focus_country: 'US', country: 'PR', width: 300, height: 200 })).status));
  // A country the state names counts as the filter's.
  const texas = await postMap(s.base, s.key, { brand: 'Starbucks', format: 'png', focus_country: 'CA', state: 'Texas' });
  t.deepEqual(fields(assertError(t, texas, 400, 'INVALID_REQUEST')), ['focus_country']);
});

test("focus-map options the renderer refuses name their field, on the pool and on the calling thread", async (t) => {
  const s = await server(t);
  const before = await balance(s, s.keyId);
  // "XX" is shaped like a country code, so only the renderer, which has the borders, knows it
  // is none; an unknown US state likewise.
  const cases: [Record<string, unknown>, string][] = [
    [{ focus_country: 'XX' }, 'focus_country'],
    [{ focus_country: 'US', regions: ['ZZ'] }, 'regions'],
  ];
  for (const [extra, field] of cases) {
    const r = await postMap(s.base, s.key, { brand: 'Starbucks', format: 'png', width: 300, height: 200, ...extra });
    const e = assertError(t, r, 400, 'INVALID_REQUEST');
    t.deepEqual(fields(e), [field], JSON.stringify(extra));
    t.regex(e.error, new RegExp(`^Invalid request: ${field}: `));
  }
  t.is(await balance(s, s.keyId), before, 'charged nothing');
  // The addon's synchronous call carries the field too.
  const renderer = loadRenderer(path.join(testDataDir(), 'reference'));
  const store = testStore();
  const starbucks = brands().find((b) => b.name === 'Starbucks')!.index;
  const req: RenderRequest = { query: { brands: [starbucks], format: 'json', verifiedOnly: false }, format: 'png', width: 300, height: 200, scale: 1, dpi: 96, style: 'light', focus: { country: 'XX' } };
  const err = t.throws(() => renderSync(renderer, store, req));
  t.true(err instanceof NativeError);
  t.like(err as NativeError, { code: 'INVALID_REQUEST', field: 'focus_country' });
});

test('X-Legend says whether the legend asked for is drawn, or left out of too small an image', async (t) => {
  const s = await server(t);
  const tickers = ['MCD', 'SBUX', 'YUM', 'DPZ', 'CMG'];
  const map = (extra: Record<string, unknown>) => postMap(s.base, s.key, { tickers, format: 'png', ...extra });
  t.is((await map({ include_legend: true, width: 800, height: 500 })).header('x-legend'), 'drawn');
  const small = await map({ include_legend: true, width: 300, height: 200, scale: 4 });
  t.is(small.status, 200);
  t.is(small.header('x-legend'), 'omitted');
  t.is((await map({ width: 800, height: 500 })).header('x-legend'), '', 'not asked for: no header');
  // An overlap map says the same.
  const overlap = (extra: Record<string, unknown>) =>
    request(s.base, { method: 'POST', path: '/api/v1/overlap', headers: { 'x-api-key': s.key, 'content-type': 'application/json' }, body: JSON.stringify({ tickers: ['SBUX', 'MCD'], distance_m: 500, format: 'png', ...extra }) });
  const drawn = await overlap({ include_legend: true, width: 800, height: 500 });
  t.is(drawn.status, 200, drawn.text.slice(0, 200));
  t.is(drawn.header('x-legend'), 'drawn');
  t.is((await overlap({ width: 800, height: 500 })).header('x-legend'), '');
});

test('the directory and the city filter take any Unicode form of a name, and the dotted capital I', async (t) => {
  const s = await server(t);
  const list = brands().filter((b) => b.locationCount > 0);
  const accented = list.find((b) => /[\u00c0-\u017f]/.test(b.name) && b.name.normalize('NFD') !== b.name);
  if (!accented) throw new Error('the test dataset has no brand with a precomposed accent');
  const nfc = (await get(s.base, `/api/v1/brands?q=${encodeURIComponent(accented.name)}`)).json();
  const nfd = (await get(s.base, `/api/v1/brands?q=${encodeURIComponent(accented.name.normalize('NFD'))}`)).json();
  t.true(nfc.total > 0);
  t.is(nfd.total, nfc.total);
  const search = (await get(s.base, `/api/v1/brands/search?q=${encodeURIComponent(accented.name.normalize('NFD'))}`)).json();
  t.true(search.results.some((r: { brand: string }) => r.brand === accented.name), accented.name);
  const dotted = list.find((b) => b.name.includes('İ'));
  if (!dotted) throw new Error('the test dataset has no brand with a dotted capital I');
  const plain = dotted.name.replace(/İ/g, 'i').toLowerCase();
  const found = (await get(s.base, `/api/v1/brands?q=${encodeURIComponent(plain)}`)).json();
  t.true(found.brands.some((b: { brand: string }) => b.brand === dotted.name), `${plain} finds ${dotted.name}`);
  // A city with an accent, sent decomposed.
  const all = (await okJson(t, s, { brand: MCD })).env.locations;
  const city = all.map((l) => l.city).find((c): c is string => !!c && c.normalize('NFD') !== c);
  if (!city) throw new Error("the test dataset has no McDonald's city with an accent");
  const composed = (await okJson(t, s, { brand: MCD, city })).env.count;
  t.is((await okJson(t, s, { brand: MCD, city: city.normalize('NFD') })).env.count, composed);
  // A ticker typed in fullwidth forms, as a Japanese keyboard sends it.
  const fullwidth = (await okJson(t, s, { brand: 'ＭＣＤ' })).env;
  t.is(fullwidth.brand, MCD);
  t.is(fullwidth.count, all.length);
});

test('autocomplete: every ticker form is ticker-shaped, and a brand only maps draw is recognized', async (t) => {
  const s = await server(t);
  for (const q of ['9999.T', 'HM-Z.ST', 'QQQQ.MC', 'ZZZ-A.TO']) {
    const r = await get(s.base, `/api/v1/brands/search?q=${encodeURIComponent(q)}`);
    t.true(Array.isArray(assertError(t, r, 404, 'NOT_FOUND').suggestions), q);
  }
  const store = testStore();
  const imageOnly = brands().find((b) => b.locationCount === 0 && b.poolCount > 0 && /^[A-Za-z][A-Za-z ]+$/.test(b.name) && store.resolve(b.name)?.brand === b.index);
  if (!imageOnly) throw new Error('the test dataset has no brand whose rows only maps draw');
  const r = (await get(s.base, `/api/v1/brands/search?q=${encodeURIComponent(imageOnly.name)}`)).json();
  const hit = r.results.find((x: { brand: string }) => x.brand === imageOnly.name);
  t.truthy(hit, imageOnly.name);
  t.is(hit.location_count, 0);
});

test('header text decodes back to the text, a percent sign included', (t) => {
  for (const s of ['% Arabica', 'Café Amazon', '100% Pure, 東京', 'plain', '%25 already']) {
    const h = headerText(s);
    t.regex(h, /^[\x20-\x7e]*$/);
    t.is(decodeURIComponent(h), s);
  }
  t.is(headerText('plain text'), 'plain text');
});

test('a body declared in another charset is a 415; an unknown city around which to search names the city field', async (t) => {
  const s = await server(t);
  const body = JSON.stringify({ brand: 'Starbucks' });
  const latin = await request(s.base, { method: 'POST', path: '/api/v1/location-map', headers: { 'content-type': 'application/json; charset=iso-8859-1', 'x-api-key': s.key }, body });
  t.regex(assertError(t, latin, 415, 'UNSUPPORTED_MEDIA_TYPE').error, /iso-8859-1/);
  const utf8 = await request(s.base, { method: 'POST', path: '/api/v1/location-map', headers: { 'content-type': 'application/json; charset=UTF-8', 'x-api-key': s.key }, body });
  t.is(utf8.status, 200);
  const city = await postMap(s.base, s.key, { brand: 'Starbucks', city: 'Qzxwvtown Nowhere', radius_km: 5 });
  t.deepEqual(fields(assertError(t, city, 400, 'INVALID_REQUEST')), ['city']);
});
