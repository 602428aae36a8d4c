// POST /api/v1/location-map's brand resolution on a real server: tickers, aliases and case
// to the canonical brand, typos with suggestions, several tickers in one request, and
// non-ASCII brand and city names in bodies and headers.
import test from 'ava';
import { creditsFor } from '../../ts/api/prices.ts';
import { parseCsv } from '../helpers/csv.ts';
import { postMap } from '../helpers/http.ts';
import { MCD, assertDataHeaders, assertError, balance, ids, ok, okJson, server, sortedUnique, usageRows } from '../helpers/location-map.ts';

// ------------------------------------------------------------------ brand resolution

test('ticker, aliases and case resolve to the canonical brand, echoed in body and X-Brand', async (t) => {
  const s = await server(t);
  const canonical = (await okJson(t, s, { brand: MCD })).env;
  for (const name of ['MCD', 'mcd', 'mcdonalds', 'Mc Donalds', "MCDONALD'S"]) {
    const { res, env } = await okJson(t, s, { brand: name });
    t.is(env.brand, MCD, name);
    t.is(res.header('x-brand'), MCD, name);
    t.deepEqual(ids(env.locations), ids(canonical.locations), name);
  }
  const csv = await ok(t, s, { brand: 'MCD', format: 'csv' });
  t.true(parseCsv(csv.text.replace(/\r?\n$/, '')).slice(1).every((r) => r[0] === MCD), 'csv brand column carries the canonical name');
});

test('a typo gets 404 NOT_FOUND with suggestions; a known brand with no matching rows gets 404; neither is charged', async (t) => {
  const s = await server(t, { credits: 500 });
  const starbucks = await ok(t, s, { brand: 'Starbucks' });
  const starbucksCount = Number(starbucks.header('x-location-count'));
  const before = (await balance(s, s.keyId));

  const typo = assertError(t, await postMap(s.base, s.key, { brand: 'Starbuks' }), 404, 'NOT_FOUND');
  t.true(Array.isArray(typo.suggestions) && typo.suggestions.length >= 1);
  t.deepEqual(typo.suggestions![0], { brand: 'Starbucks', location_count: starbucksCount });
  for (const sug of typo.suggestions!) {
    t.deepEqual(Object.keys(sug).sort(), ['brand', 'location_count']);
    t.true(typeof sug.brand === 'string' && Number.isInteger(sug.location_count));
  }

  const all = (await okJson(t, s, { brand: MCD })).env.locations;
  const empty = ['AQ', 'GL', 'VA', 'NR'].find((c) => !all.some((l) => l.country === c))!;
  t.truthy(empty, 'a country without McDonald’s rows');
  const none = assertError(t, await postMap(s.base, s.key, { brand: MCD, country: empty }), 404, 'NOT_FOUND');
  t.true(none.suggestions === undefined || Array.isArray(none.suggestions));
  assertError(t, await postMap(s.base, s.key, { brand: MCD, city: 'No Such City Anywhere' }), 404, 'NOT_FOUND');

  // The two successful requests were charged; the 404s were not.
  const afterOks = before - creditsFor(all.length, 'json');
  t.is((await balance(s, s.keyId)), afterOks);
  const rows = (await usageRows(s, s.keyId));
  t.deepEqual(
    rows.filter((r) => r.status === 404).map((r) => r.credits),
    [0, 0, 0],
  );
});

test('tickers: two companies in one response, both names in the label, rows of both', async (t) => {
  const s = await server(t);
  const mcd = (await okJson(t, s, { brand: MCD })).env;
  const sbux = (await okJson(t, s, { brand: 'Starbucks' })).env;
  const { res, env } = await okJson(t, s, { tickers: ['MCD', 'SBUX'] });
  t.deepEqual(env.brand.split(', '), [MCD, 'Starbucks']);
  t.is(res.header('x-brand'), env.brand);
  t.is(env.count, mcd.count + sbux.count);
  t.deepEqual(sortedUnique(ids(env.locations)), sortedUnique([...ids(mcd.locations), ...ids(sbux.locations)]));
  const mcdIds = new Set(ids(mcd.locations));
  for (const l of env.locations) t.is(l.brand, mcdIds.has(l.id) ? MCD : 'Starbucks', `row ${l.id} names its brand`);
  assertDataHeaders(t, res, s, { count: env.count, brand: env.brand });
  t.is(Number(res.header('x-credits-charged')), creditsFor(env.count, 'json'));

  const csv = await ok(t, s, { tickers: ['MCD', 'SBUX'], format: 'csv' });
  const rows = parseCsv(csv.text.replace(/\r?\n$/, '')).slice(1);
  t.is(rows.length, env.count);
  t.deepEqual(sortedUnique(rows.map((r) => r[0])), [MCD, 'Starbucks']);
});

test('duplicate tickers count once; five tickers are accepted', async (t) => {
  const s = await server(t);
  const mcd = (await okJson(t, s, { brand: MCD })).env;
  const { res, env } = await okJson(t, s, { tickers: ['MCD', 'mcdonalds', "McDonald's"] });
  t.is(env.brand, MCD);
  t.deepEqual(ids(env.locations), ids(mcd.locations), 'no row twice');
  t.is(Number(res.header('x-credits-charged')), creditsFor(mcd.count, 'json'));
  const five = await okJson(t, s, { tickers: ['MCD', 'SBUX', 'SHEL', 'CHPT', '3382.T'], format: 'json' });
  t.is(five.env.brand.split(', ').length, 5);
  t.is(new Set(ids(five.env.locations)).size, five.env.count);
  t.is(Number(five.res.header('x-credits-charged')), creditsFor(five.env.count, 'json'));
});

test('non-ASCII brand and city names: UTF-8 bodies, percent-encoded X-Brand and X-Region', async (t) => {
  const s = await server(t);
  const brand = 'Chloé';
  const { res, env } = await okJson(t, s, { brand });
  t.is(env.brand, brand);
  t.is(res.header('x-brand'), 'Chlo%C3%A9');
  t.is(decodeURIComponent(res.header('x-brand')), brand);
  const csv = await ok(t, s, { brand: 'chloé', format: 'csv' });
  t.true(parseCsv(csv.text.replace(/\r?\n$/, '')).slice(1).every((r) => r[0] === brand));
  t.is(Number(csv.header('x-location-count')), env.count);

  // A city with a non-ASCII letter that has an upper case (São Paulo, Düsseldorf), the one
  // McDonald's has most rows in.
  const all = (await okJson(t, s, { brand: MCD })).env.locations;
  const counts = new Map<string, number>();
  for (const l of all) if (l.city && /[^\x00-\x7f]/.test(l.city) && l.city.toUpperCase() !== l.city) counts.set(l.city, (counts.get(l.city) ?? 0) + 1);
  const city = [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]?.[0];
  if (!city) return t.fail('the test dataset should have a McDonald\'s row in a city with a non-ASCII letter');
  const inCity = all.filter((l) => l.city?.toLowerCase() === city.toLowerCase());
  t.true(inCity.length > 0);
  const r = await okJson(t, s, { brand: MCD, city: city.toUpperCase() });
  t.deepEqual(ids(r.env.locations), ids(inCity));
  t.regex(r.res.header('x-region'), /^[\x20-\x7e]+$/);
  t.is(decodeURIComponent(r.res.header('x-region')), r.env.region);
});

test('a name asked for in a country where its brand has no storefront is the namesake the name-suggestion-index tells apart by country: Woolworths in Australia, Coop in Switzerland', async (t) => {
  const s = await server(t);
  // The index names South Africa's chain "Woolworths" and Australia's "Woolworths (Australia)";
  // the Netherlands' Coop answers to "Coop" as an alternative name, Switzerland's is "Coop
  // (Schweiz)"; Target and Kmart are "(USA)", "(Australia)" and "(Oceania)".
  for (const [name, country, expected] of [
    ['Woolworths', 'AU', 'Woolworths (Australia)'],
    ['woolworths', 'au', 'Woolworths (Australia)'],
    ['Coop', 'CH', 'Coop (Schweiz)'],
    ['Coop', 'SE', 'Coop (Sverige)'],
    ['Coop', 'NL', 'Coop (Nederland)'],
    ['Target', 'AU', 'Target (Australia)'],
    ['Target', 'US', 'Target (USA)'],
    ['Kmart', 'US', 'Kmart (USA)'],
    // Names too short for a search by prefix find their namesakes too.
    ['OK', 'DK', 'OK (Danmark)'],
    ['OK', 'NL', 'OK (Nederland)'],
  ] as const) {
    const { res, env } = await okJson(t, s, { brand: name, country });
    t.is(env.brand, expected, `${name} in ${country}`);
    t.is(res.header('x-brand'), expected, `${name} in ${country}`);
    t.true(env.locations.length > 0 && env.locations.every((l) => l.country === country.toUpperCase()), `${name} in ${country}`);
    // The same rows as asking for the namesake by its own name.
    t.deepEqual(ids(env.locations), ids((await okJson(t, s, { brand: expected, country })).env.locations), `${name} in ${country}`);
  }
  // Without a country, or in a country no namesake trades in, the name is the brand it names.
  t.is((await okJson(t, s, { brand: 'Woolworths' })).env.brand, 'Woolworths');
  assertError(t, await postMap(s.base, s.key, { brand: 'Woolworths', country: 'FR' }), 404, 'NOT_FOUND');
  // A state names its country ("New South Wales" is Australia's), and so does a focus map.
  t.is((await okJson(t, s, { brand: 'Woolworths', state: 'New South Wales' })).env.brand, 'Woolworths (Australia)');
  const focus = await ok(t, s, { brand: 'Woolworths', focus_country: 'AU', format: 'png' });
  t.is(focus.header('x-brand'), 'Woolworths (Australia)');
  // A name asked for with its qualifier is that brand wherever it is asked: nothing of it in
  // Australia.
  assertError(t, await postMap(s.base, s.key, { brand: 'Target (USA)', country: 'AU' }), 404, 'NOT_FOUND');
  // A ticker is the company it lists, whatever the country: Target Corporation's TGT is Target
  // (USA), which has no store in Australia, though "Target" asked for there is Australia's.
  assertError(t, await postMap(s.base, s.key, { tickers: ['TGT'], country: 'AU' }), 404, 'NOT_FOUND');
});
