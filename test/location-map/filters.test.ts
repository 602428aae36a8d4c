// POST /api/v1/location-map's filters on a real server: country, state, city, postcode,
// storefront_type, an AND of two, radius_km around a city, and states outside the US by
// ISO 3166-2 code or subdivision name.
import test from 'ava';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { creditsFor } from '../../ts/api/prices.ts';
import { parseCsv } from '../helpers/csv.ts';
import { testDataDir, type Location } from '../helpers/dataset.ts';
import { postMap } from '../helpers/http.ts';
import { MCD, assertDataHeaders, ids, okJson, server, union } from '../helpers/location-map.ts';

// ------------------------------------------------------------------ filters

/** The gazetteer's centre for a city name: the most populous city of that name. */
function cityCentre(name: string): { lat: number; lng: number } | null {
  const lower = name.toLowerCase();
  const text = readFileSync(path.join(testDataDir(), 'reference', 'cities.csv'), 'utf8');
  let best: { lat: number; lng: number; population: number } | null = null;
  for (const line of text.split('\n')) {
    if (!line.toLowerCase().includes(lower)) continue;
    const [row] = parseCsv(line);
    const [, cname, , , population, lat, lng] = row;
    if (cname.toLowerCase() !== lower) continue;
    if (!best || Number(population) >= best.population) best = { lat: Number(lat), lng: Number(lng), population: Number(population) };
  }
  return best;
}

function haversineKm(lat1: number, lng1: number, lat2: number, lng2: number): number {
  const rad = (d: number) => (d * Math.PI) / 180;
  const dp = rad(lat2 - lat1);
  const dl = rad(lng2 - lng1);
  const a = Math.sin(dp / 2) ** 2 + Math.cos(rad(lat1)) * Math.cos(rad(lat2)) * Math.sin(dl / 2) ** 2;
  return 2 * 6371.0088 * Math.asin(Math.min(1, Math.sqrt(a)));
}

function mostCommon(values: (string | null | undefined)[]): string {
  const m = new Map<string, number>();
  for (const v of values) if (v) m.set(v, (m.get(v) ?? 0) + 1);
  const best = [...m.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0];
  if (!best) throw new Error('no value to pick');
  return best[0];
}

test('every filter, and an AND of two, returns exactly the subset computed from the unfiltered response', async (t) => {
  const s = await server(t);
  const all = (await okJson(t, s, { brand: MCD, include_provenance: true })).env.locations;
  const ci = (a: string | null, b: string) => a !== null && a.toLowerCase() === b.toLowerCase();

  const country = mostCommon(all.map((l) => l.country));
  const usStates = all.filter((l) => l.country === 'US').map((l) => l.state);
  const state = mostCommon(usStates);
  const city = mostCommon(all.map((l) => l.city));
  const postcode = mostCommon(all.map((l) => l.postcode));
  const sft = 'small_format';
  const andCountry = mostCommon(all.filter((l) => l.storefront_type === sft).map((l) => l.country));
  // A city with one location: its sources are one row's, rarely all four.
  const perCity = new Map<string, number>();
  for (const l of all) if (l.city) perCity.set(l.city, (perCity.get(l.city) ?? 0) + 1);
  // (ASCII-named, so X-Region carries it as is rather than percent-encoded)
  // The one with the fewest sources, so that X-Data-Sources is seen naming fewer than four.
  const sourcesIn = (c: string) => all.find((l) => l.city === c)?.source_types?.length ?? 4;
  const lone = [...perCity.entries()]
    .filter(([c, n]) => n === 1 && c !== city && /^[ -~]+$/.test(c))
    .map(([c]) => c)
    .sort((a, b) => sourcesIn(a) - sourcesIn(b) || a.localeCompare(b))[0];
  if (lone === undefined) throw new Error('no city with a single location');

  const cases: { name: string; filter: Record<string, unknown>; expect: Location[]; region: string }[] = [
    { name: 'country', filter: { country: country.toLowerCase() }, expect: all.filter((l) => l.country === country), region: country },
    // Without a country, a US state's code means the US state (the contract: "USPS two-letter
    // for the US"), not the same code in another country.
    { name: 'state', filter: { state }, expect: all.filter((l) => l.country === 'US' && ci(l.state, state)), region: `US / ${state}` },
    { name: 'city (case-insensitive)', filter: { city: city.toUpperCase() }, expect: all.filter((l) => ci(l.city, city)), region: city.toUpperCase() },
    {
      name: 'postcode',
      filter: { postcode },
      expect: all.filter((l) => l.postcode !== null && l.postcode.replace(/\s/g, '').toLowerCase() === postcode.replace(/\s/g, '').toLowerCase()),
      region: postcode,
    },
    { name: 'storefront_type', filter: { storefront_type: sft }, expect: all.filter((l) => l.storefront_type === sft), region: 'worldwide' },
    { name: 'storefront_type pickup', filter: { storefront_type: 'pickup' }, expect: all.filter((l) => l.storefront_type === 'pickup'), region: 'worldwide' },
    {
      name: 'country AND storefront_type',
      filter: { country: andCountry, storefront_type: sft },
      expect: all.filter((l) => l.country === andCountry && l.storefront_type === sft),
      region: andCountry,
    },
    {
      name: 'country AND state',
      filter: { country: 'US', state },
      expect: all.filter((l) => l.country === 'US' && ci(l.state, state)),
      region: `US / ${state}`,
    },
    { name: 'city with one location', filter: { city: lone }, expect: all.filter((l) => ci(l.city, lone)), region: lone },
  ];
  for (const c of cases) {
    t.true(c.expect.length > 0 && c.expect.length < all.length, `${c.name}: the expected subset is a non-empty strict subset (${c.expect.length})`);
    const { res, env } = await okJson(t, s, { brand: MCD, include_provenance: true, ...c.filter });
    t.deepEqual(ids(env.locations), ids(c.expect), `${c.name}: ${JSON.stringify(c.filter)}`);
    t.is(env.count, c.expect.length, c.name);
    t.is(env.region, c.region, `${c.name}: region`);
    assertDataHeaders(t, res, s, { count: c.expect.length, brand: MCD, region: c.region, sources: union(c.expect) });
    t.is(Number(res.header('x-credits-charged')), creditsFor(c.expect.length, 'json'));
  }
  // Some filtered subset draws on fewer than all four sources, so X-Data-Sources is really
  // compared with the rows' union, not with a constant.
  t.true(cases.some((c) => union(c.expect).length < 4), 'a filtered subset with fewer than four sources');
  // The AND is narrower than either filter alone.
  t.true(cases[6].expect.length < cases[0].expect.length || andCountry !== country);
  t.true(cases[6].expect.length < cases[4].expect.length);

  // radius_km with city: rows within the radius of the gazetteer's centre for that city.
  const radius = 100;
  let best: { city: string; inside: Location[]; centre: { lat: number; lng: number } } | null = null;
  for (const name of ['New York City', 'London', 'Tokyo', 'Los Angeles', 'Paris', 'Chicago', 'Berlin', 'Sydney']) {
    const centre = cityCentre(name);
    if (!centre) continue;
    const inside = all.filter((l) => haversineKm(centre.lat, centre.lng, l.lat, l.lng) <= radius);
    if (!best || inside.length > best.inside.length) best = { city: name, inside, centre };
  }
  t.truthy(best);
  const { city: rcity, centre } = best!;
  t.true(best!.inside.length >= 2, `at least two ${MCD} within ${radius} km of ${rcity}`);
  const { res, env } = await okJson(t, s, { brand: MCD, include_provenance: true, city: rcity, radius_km: radius });
  const got = new Set(ids(env.locations));
  for (const l of all) {
    const d = haversineKm(centre.lat, centre.lng, l.lat, l.lng);
    if (Math.abs(d - radius) < 0.1) continue; // too close to the edge to call
    t.is(got.has(l.id), d < radius, `${l.id} at ${d.toFixed(2)} km from ${rcity}`);
  }
  t.deepEqual(ids(env.locations), ids(all.filter((l) => got.has(l.id))), 'radius rows keep the unfiltered order');
  t.is(env.region, `${rcity} +${radius} km`);
  assertDataHeaders(t, res, s, { count: env.count, brand: MCD, region: env.region, sources: union(env.locations) });
});

// ------------------------------------------------------------------ subdivisions

test('state outside the US: the ISO 3166-2 code or the subdivision\'s name, case- and accent-insensitive', async (t) => {
  const s = await server(t);
  // McDonald's in a French region (ISO 3166-2:FR codes and names; the first the generated test
  // data has stores in) and Île-de-France (IDF).
  const regions: [string, string][] = [
    ['OCC', 'Occitanie'],
    ['NOR', 'Normandie'],
    ['ARA', 'Auvergne-Rhône-Alpes'],
    ['NAQ', 'Nouvelle-Aquitaine'],
    ['BRE', 'Bretagne'],
  ];
  const fr = (await okJson(t, s, { brand: "McDonald's", country: 'FR' })).env.locations;
  const region = regions.find(([code]) => fr.some((l) => l.state === code));
  if (!region) throw new Error(`the test data has McDonald's in none of ${regions.map(([c]) => c).join(', ')}`);
  const [code, name] = region;
  const byCode = await okJson(t, s, { brand: "McDonald's", country: 'FR', state: code });
  t.is(byCode.env.count, fr.filter((l) => l.state === code).length);
  t.true(byCode.env.locations.every((l) => l.state === code));
  for (const state of [code.toLowerCase(), name, name.toUpperCase(), name.normalize('NFD').replace(/\p{M}/gu, '')]) {
    const same = await okJson(t, s, { brand: "McDonald's", country: 'FR', state });
    t.is(same.env.count, byCode.env.count, state);
  }
  const idf = await okJson(t, s, { brand: "McDonald's", country: 'FR', state: 'IDF' });
  for (const state of ['Île-de-France', 'ile de france', 'ILE-DE-FRANCE']) {
    t.is((await okJson(t, s, { brand: "McDonald's", country: 'FR', state })).env.count, idf.env.count, state);
  }
  // No country given: a US state's name still means the US state.
  const il = await okJson(t, s, { brand: "McDonald's", state: 'IL' });
  t.is((await okJson(t, s, { brand: "McDonald's", state: 'Illinois' })).env.count, il.env.count);
  // A subdivision of another country matches nothing in this one.
  const none = await postMap(s.base, s.key, { brand: "McDonald's", country: 'FR', state: 'Bavaria' });
  t.is(none.status, 404);
});

test('a city is named as its own country names it, and found by that name or the English one', async (t) => {
  const s = await server(t);
  // As the postal services and the cities' own signs write them; GeoNames' English names.
  for (const [brand, local, english, country] of [
    ['Lidl', 'München', 'Munich', 'DE'],
    ['Lidl', 'Wien', 'Vienna', 'AT'],
  ] as const) {
    const all = (await okJson(t, s, { brand, country })).env.locations;
    t.false(all.some((l) => l.city === english), `no ${brand} address in ${country} says ${english}`);
    const there = all.filter((l) => l.city === local);
    t.true(there.length > 0, `the test data has ${brand} in ${local}`);
    for (const city of [local, english, english.toUpperCase(), local.toLowerCase()]) {
      t.deepEqual(ids((await okJson(t, s, { brand, city })).env.locations), ids(there), city);
    }
    // A radius around the English name is around the city's own centre.
    const near = await okJson(t, s, { brand, city: english, radius_km: 15 });
    t.deepEqual(ids(near.env.locations), ids((await okJson(t, s, { brand, city: local, radius_km: 15 })).env.locations));
    t.true(near.env.locations.length >= there.length);
  }
});
