// Real publisher files (test/fixtures/real, see its README) through `storemap data import`, as an
// operator runs it: the stores two sources see come out as one corroborated row, every row read
// is accounted for in `data report`, a region keeps its stores only, a failed or empty import
// never replaces the serving snapshot, and `data rollback` brings the previous one back.
// Serial: each test runs several whole imports, and two cores run them faster one at a time.
import test from 'ava';
import { copyFileSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { loadStore, query } from '../ts/native.ts';
import { ROOT } from '../ts/paths.ts';
import { PREVIOUS_SNAPSHOT_FILE, SNAPSHOT_FILE } from '../ts/native.ts';
import { AS_OF, describe, runCli, tempDataDir } from './helpers/cli.ts';

const REAL = path.join(ROOT, 'test', 'fixtures', 'real');
const PBF = path.join(REAL, 'osm', 'zugerland.osm.pbf');
const SEQ = path.join(REAL, 'osm', 'zugerland_poi.geojsonseq');
const ATP_ZIP = path.join(REAL, 'atp', 'output.zip');
const OVERTURE = path.join(REAL, 'overture', 'boulder_places_2026-04-15.0.parquet');
const FSQ_PARTIAL = path.join(REAL, 'fsq', 'partial-columns.parquet');

interface SourceImport {
  files: number;
  files_empty: number;
  rows_read: number;
  rows_kept: number;
  skipped: Record<string, number>;
  rows_corroborated: number;
  rows_with_hours: number;
  hours_invalid: number;
}
interface Report {
  pool_points: number;
  rows_by_source: Record<string, number>;
  sources: Record<string, SourceImport>;
  region: string | null;
}
interface Loc {
  id: string;
  name: string;
  lat: number;
  lng: number;
  country: string;
  source_types: string[];
  alias_sources: { source_type: string; source_id: string }[];
  opening_hours: string | null;
}

async function report(dir: string): Promise<Report> {
  const r = await runCli(['data', 'report', '--json'], { STOREMAP_DATA_DIR: dir });
  if (r.code !== 0) throw new Error(describe(r));
  return JSON.parse(r.stdout) as Report;
}

async function rowsOf(dir: string, brand: string): Promise<Loc[]> {
  const store = await loadStore(path.join(dir, SNAPSHOT_FILE));
  const resolved = store.resolve(brand);
  if (!resolved) return [];
  const res = await query(store, { brands: [resolved.brand], format: 'json', verifiedOnly: false, includeProvenance: true });
  return (JSON.parse(res.body.toString()) as { locations: Loc[] }).locations;
}

/** The OSM export's opening_hours of a brand's object, read from the file. */
function osmHours(brand: string): string | undefined {
  for (const line of readFileSync(SEQ, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const p = (JSON.parse(line.replace(/^\x1e/, '')) as { properties: Record<string, unknown> }).properties;
    if (p.brand === brand && typeof p.opening_hours === 'string') return p.opening_hours;
  }
  return undefined;
}

/** Where the OSM export puts a brand's store in the mall (its first coordinate). */
function osmPoint(brand: string): [number, number] {
  for (const line of readFileSync(SEQ, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const f = JSON.parse(line.replace(/^\x1e/, '')) as { properties: Record<string, unknown>; geometry: { coordinates: unknown } };
    if (f.properties.brand !== brand) continue;
    let c: unknown = f.geometry.coordinates;
    while (Array.isArray(c) && Array.isArray(c[0])) c = c[0];
    return c as [number, number];
  }
  throw new Error(`${brand} is not in the export`);
}

const distanceM = (a: [number, number], b: [number, number]) => {
  const r = 6371008.8;
  const rad = Math.PI / 180;
  const dLat = (b[1] - a[1]) * rad;
  const dLng = (b[0] - a[0]) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a[1] * rad) * Math.cos(b[1] * rad) * Math.sin(dLng / 2) ** 2;
  return 2 * r * Math.asin(Math.sqrt(h));
};

test.serial('OSM areas and ATP points of the same store become one row that both sources corroborate', async (t) => {
  const dir = await tempDataDir(t, { reference: true });
  const r = await runCli(['data', 'import', '--osm', PBF, '--atp', ATP_ZIP, '--as-of', AS_OF], { STOREMAP_DATA_DIR: dir });
  t.is(r.code, 0, describe(r));
  // The table an operator reads at the end names every source and reason.
  t.regex(r.stderr, /source\s+files\s+empty\s+failed\s+read\s+kept\s+corroborated\s+hours\s+bad hours/);
  t.regex(r.stdout, /snapshot\.smap: \d+ rows/);

  for (const brand of ['Denner', 'MediaMarkt', 'Tchibo']) {
    const rows = await rowsOf(dir, brand);
    const mall = osmPoint(brand);
    const here = rows.filter((l) => distanceM([l.lng, l.lat], mall) < 200);
    t.is(here.length, 1, `${brand}: one row at the mall, got ${JSON.stringify(here)}`);
    t.deepEqual([...here[0]!.source_types].sort(), ['atp', 'osm'], `${brand}: seen by both sources`);
    t.is(here[0]!.country, 'CH');
    // Hours where a source gives them: the row carries a value in OSM's syntax (normal form).
    if (osmHours(brand) !== undefined) t.regex(here[0]!.opening_hours ?? '', /^(Mo|Tu|We|Th|Fr|Sa|Su|24\/7|PH|[A-Z][a-z]{2} \d)/, `${brand}: ${here[0]!.opening_hours}`);
  }

  const rep = await report(dir);
  for (const s of ['osm', 'atp'] as const) {
    const x = rep.sources[s]!;
    const skipped = Object.values(x.skipped).reduce((a, b) => a + b, 0);
    t.is(x.rows_read, x.rows_kept + skipped, `${s}: every row read is kept or skipped for a reason`);
    t.true(x.rows_corroborated >= 3, `${s}: the three shared stores`);
    // Opening hours read from the publishers' own values (the crate's tests hold each row's).
    t.true(x.rows_with_hours > 0 && x.rows_with_hours + x.hours_invalid <= x.rows_read, `${s}: ${x.rows_with_hours} rows with hours, ${x.hours_invalid} dropped`);
  }
  t.is(rep.sources.atp!.files_empty, 1, 'the 0-byte spider');
  t.is(rep.sources.osm!.skipped.duplicate_id ?? 0, 0, 'a PBF holds each object once');
});

test.serial('the PBF and its osmium export give the same snapshot rows', async (t) => {
  const [a, b] = [await tempDataDir(t, { reference: true }), await tempDataDir(t, { reference: true })];
  for (const [dir, file] of [
    [a, PBF],
    [b, SEQ],
  ] as const) {
    const r = await runCli(['data', 'import', '--osm', file, '--as-of', AS_OF], { STOREMAP_DATA_DIR: dir });
    t.is(r.code, 0, describe(r));
  }
  const ids = async (dir: string) => {
    const store = await loadStore(path.join(dir, SNAPSHOT_FILE));
    const brands = [...Array(store.info().brands).keys()].filter((i) => store.brand(i)!.poolCount > 0);
    const res = await query(store, { brands, format: 'json', verifiedOnly: false, includeProvenance: true, brandLabel: 'all' });
    return (JSON.parse(res.body.toString()) as { locations: Loc[] }).locations.map((l) => l.alias_sources.map((s) => `${s.source_type}:${s.source_id}`).join(' ')).sort();
  };
  const fromPbf = await ids(a);
  t.true(fromPbf.length >= 25, `${fromPbf.length} rows`);
  t.deepEqual(fromPbf, await ids(b));
  // osmium wrote each closed way twice into the export; the report counts the second copies.
  const seqReport = await report(b);
  const lines = readFileSync(SEQ, 'utf8').split('\n').filter((l) => l.trim());
  const distinct = new Set(lines.map((l) => {
    const p = (JSON.parse(l.replace(/^\x1e/, '')) as { properties: Record<string, unknown> }).properties;
    return `${p['@type']}/${p['@id']}`;
  }));
  t.is(seqReport.sources.osm!.skipped.duplicate_id, lines.length - distinct.size);
});

test.serial('--country keeps that country only; --bbox a box; a bad region is refused before any work', async (t) => {
  const dir = await tempDataDir(t, { reference: true });
  const r = await runCli(['data', 'import', '--osm', PBF, '--overture', OVERTURE, '--country', 'CH', '--as-of', AS_OF], { STOREMAP_DATA_DIR: dir });
  t.is(r.code, 0, describe(r));
  const rep = await report(dir);
  t.is(rep.region, 'CH');
  // The Overture file is Boulder, Colorado: all of it is outside Switzerland.
  t.is(rep.sources.overture!.rows_kept, 0);
  t.is(rep.sources.overture!.skipped.out_of_region, rep.sources.overture!.rows_read);
  t.true(rep.sources.osm!.rows_kept > 0);

  const boulder = await tempDataDir(t, { reference: true });
  const b = await runCli(['data', 'import', '--osm', PBF, '--overture', OVERTURE, '--bbox', '39.9,-105.4,40.1,-105.2', '--as-of', AS_OF], { STOREMAP_DATA_DIR: boulder });
  t.is(b.code, 0, describe(b));
  const brep = await report(boulder);
  t.is(brep.sources.osm!.rows_kept, 0, 'every OSM place is outside the box');
  t.true((brep.sources.osm!.skipped.out_of_region ?? 0) > 0);
  t.true(brep.sources.overture!.rows_kept > 0);

  for (const args of [['--country', 'XX'], ['--country', 'Swiss'], ['--bbox', '40,-105,39,-104'], ['--bbox', '1,2,3']]) {
    const bad = await runCli(['data', 'import', '--osm', PBF, ...args], { STOREMAP_DATA_DIR: dir });
    t.not(bad.code, 0, `${args.join(' ')} is refused`);
    t.regex(bad.stderr, args[0] === '--country' ? /--country/ : /--bbox/);
  }
});

test.serial('a failed or empty import keeps the serving snapshot; rollback brings back the previous one', async (t) => {
  const dir = await tempDataDir(t, { reference: true });
  const snap = path.join(dir, SNAPSHOT_FILE);
  const prev = path.join(dir, PREVIOUS_SNAPSHOT_FILE);
  t.is((await runCli(['data', 'import', '--osm', PBF, '--as-of', AS_OF], { STOREMAP_DATA_DIR: dir })).code, 0);
  const first = readFileSync(snap);

  // The partial Foursquare file: fails naming the columns it lacks; nothing is replaced.
  const fsq = await runCli(['data', 'import', '--fsq', FSQ_PARTIAL], { STOREMAP_DATA_DIR: dir });
  t.not(fsq.code, 0);
  t.regex(fsq.stderr, /latitude/);
  t.regex(fsq.stderr, /longitude/);
  t.regex(fsq.stderr, /partial-columns\.parquet/);
  t.true(readFileSync(snap).equals(first));

  // Stores that are all outside the region: no rows, so no snapshot.
  const empty = await runCli(['data', 'import', '--osm', PBF, '--country', 'US', '--as-of', AS_OF], { STOREMAP_DATA_DIR: dir });
  t.not(empty.code, 0);
  t.regex(empty.stderr, /kept no rows/);
  t.true(readFileSync(snap).equals(first));

  // A second good import keeps the first as the previous snapshot.
  t.is((await runCli(['data', 'import', '--osm', PBF, '--atp', ATP_ZIP, '--as-of', AS_OF], { STOREMAP_DATA_DIR: dir })).code, 0);
  const second = readFileSync(snap);
  t.false(second.equals(first));
  t.true(readFileSync(prev).equals(first));

  const back = await runCli(['data', 'rollback'], { STOREMAP_DATA_DIR: dir });
  t.is(back.code, 0, describe(back));
  t.true(readFileSync(snap).equals(first), 'the previous snapshot serves again');
  t.true(readFileSync(prev).equals(second), 'and the rolled-back one is kept, so a second rollback undoes it');
  t.is(statSync(snap).nlink, 1, 'no file is left linked to the serving one');
  t.is((await runCli(['data', 'rollback'], { STOREMAP_DATA_DIR: dir })).code, 0);
  t.true(readFileSync(snap).equals(second));

  const none = await tempDataDir(t);
  const nothing = await runCli(['data', 'rollback'], { STOREMAP_DATA_DIR: none });
  t.not(nothing.code, 0);
  t.regex(nothing.stderr, /no previous snapshot/);
});

test.serial("a release part left beside its replacement: the second copy of each record is skipped as duplicate_id, not kept or served twice", async (t) => {
  const dir = await tempDataDir(t, { reference: true });
  const folder = path.join(dir, 'overture-parts');
  mkdirSync(folder);
  copyFileSync(OVERTURE, path.join(folder, 'part-0.parquet'));
  const once = await runCli(['data', 'import', '--overture', folder, '--as-of', AS_OF], { STOREMAP_DATA_DIR: dir });
  t.is(once.code, 0, describe(once));
  const single = (await report(dir)).sources.overture!;
  copyFileSync(OVERTURE, path.join(folder, 'part-1.parquet'));
  const twice = await runCli(['data', 'import', '--overture', folder, '--as-of', AS_OF], { STOREMAP_DATA_DIR: dir });
  t.is(twice.code, 0, describe(twice));
  const doubled = (await report(dir)).sources.overture!;
  t.is(doubled.rows_read, 2 * single.rows_read);
  t.is(doubled.rows_kept, single.rows_kept, 'each record kept once');
  t.is(doubled.skipped.duplicate_id, single.rows_kept, 'the second copies, as skipped');
  t.is(doubled.rows_read, doubled.rows_kept + Object.values(doubled.skipped).reduce((a, b) => a + b, 0), 'every row read is kept or skipped for a reason');
  // The snapshot's own count of skipped rows (every reason but closed) has them too.
  const info = (await loadStore(path.join(dir, SNAPSHOT_FILE))).info() as { skipped_by_source: Record<string, number> };
  const skipped = Object.entries(doubled.skipped).filter(([reason]) => reason !== 'closed').reduce((a, [, n]) => a + n, 0);
  t.is(info.skipped_by_source.overture, skipped);
});
