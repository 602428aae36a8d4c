// A name read in a country, as the change feed and the store-count history read it: a chain
// whose last store in a country closed is still that chain there, not its namesake, and a
// namesake that closed its last store there is the one asked about. The data folder is two
// imports of AllThePlaces spider files written here in the exporter's format (as
// test/open-at.test.ts writes one): South Africa's Woolworths (the name-suggestion-index's bare
// "Woolworths") with a store in Sydney at the first import and none at the second;
// "Woolworths (Australia)" with two supermarkets in Australia and then three, one in Auckland
// at the second import only and one in Port Moresby (Papua New Guinea) at the first only. The expected answers are
// the fixture's own: which store closed, which opened, and when.
import test, { type ExecutionContext } from 'ava';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, runCli, tempDataDir } from './helpers/cli.ts';
import { serveFolder, type FolderServer } from './helpers/folder-server.ts';
import { postMap, request } from './helpers/http.ts';

const FIRST = '2026-06-01T00:00:00Z';
const SECOND = '2026-11-01T00:00:00Z';
const ZA = 'Q8033997'; // Woolworths, South Africa's: "Woolworths" in the index
const AU = 'Q3249145'; // Woolworths (Australia)

interface Store {
  ref: string;
  wikidata: string;
  name: string;
  shop: string;
  lat: number;
  lng: number;
}
const CAPE_TOWN: Store = { ref: 'za-cape-town', wikidata: ZA, name: 'Woolworths', shop: 'clothes', lat: -33.9249, lng: 18.4241 };
const JOHANNESBURG: Store = { ref: 'za-johannesburg', wikidata: ZA, name: 'Woolworths', shop: 'clothes', lat: -26.2041, lng: 28.0473 };
const SYDNEY_ZA: Store = { ref: 'za-sydney', wikidata: ZA, name: 'Woolworths', shop: 'clothes', lat: -33.8688, lng: 151.2093 };
const MELBOURNE: Store = { ref: 'au-melbourne', wikidata: AU, name: 'Woolworths', shop: 'supermarket', lat: -37.8136, lng: 144.9631 };
const BRISBANE: Store = { ref: 'au-brisbane', wikidata: AU, name: 'Woolworths', shop: 'supermarket', lat: -27.4698, lng: 153.0251 };
const PERTH: Store = { ref: 'au-perth', wikidata: AU, name: 'Woolworths', shop: 'supermarket', lat: -31.9505, lng: 115.8605 };
const AUCKLAND: Store = { ref: 'au-auckland', wikidata: AU, name: 'Woolworths', shop: 'supermarket', lat: -36.8485, lng: 174.7633 };
const PORT_MORESBY: Store = { ref: 'au-port-moresby', wikidata: AU, name: 'Woolworths', shop: 'supermarket', lat: -9.4438, lng: 147.1803 };

/** One run of each spider, as AllThePlaces' exporter writes it (see test/fixtures/real/atp). */
function writeRun(dir: string, asOf: string, stores: Store[]): void {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir);
  for (const [spider, wikidata] of [
    ['woolworths_za', ZA],
    ['woolworths_au', AU],
  ]) {
    const features = stores
      .filter((s) => s.wikidata === wikidata)
      .map((s) => ({
        type: 'Feature',
        id: `fixture-${s.ref}`,
        properties: { ref: s.ref, '@spider': spider, shop: s.shop, name: s.name, brand: s.name, 'brand:wikidata': s.wikidata },
        geometry: { type: 'Point', coordinates: [s.lng, s.lat] },
      }));
    const run = { '@spider': spider, 'spider:collection_time': asOf.replace('Z', ''), 'spider:lineage': 'S_ATP_BRANDS' };
    writeFileSync(path.join(dir, `${spider}.geojson`), JSON.stringify({ type: 'FeatureCollection', dataset_attributes: run, features }));
  }
}

async function world(t: ExecutionContext): Promise<FolderServer> {
  const dir = await tempDataDir(t, { reference: true });
  const atp = path.join(dir, 'atp-input');
  const runs: [string, Store[]][] = [
    [FIRST, [CAPE_TOWN, JOHANNESBURG, SYDNEY_ZA, MELBOURNE, BRISBANE, PORT_MORESBY]],
    [SECOND, [CAPE_TOWN, JOHANNESBURG, MELBOURNE, BRISBANE, PERTH, AUCKLAND]],
  ];
  for (const [asOf, stores] of runs) {
    writeRun(atp, asOf, stores);
    const r = await runCli(['data', 'import', '--atp', atp, '--as-of', asOf], { STOREMAP_DATA_DIR: dir });
    if (r.code !== 0) throw new Error(`import as of ${asOf} failed: ${describe(r)}`);
  }
  return serveFolder(t, dir, 1_000_000, 'namesake history test');
}

interface Row {
  name: string;
  lat: number;
  lng: number;
  country: string;
}
interface ChangesDoc {
  brand: string;
  opened: Row[];
  closed: Row[];
}
interface HistoryDoc {
  brand: string;
  series: { period: string; stores: number; opened: number; closed: number }[];
}

const near = (r: Row, s: Store) => Math.abs(r.lat - s.lat) < 0.01 && Math.abs(r.lng - s.lng) < 0.01;

test('a chain whose last store in a country closed keeps its name there in the change feed and the history; a map reads the namesake', async (t) => {
  const s = await world(t);
  const get = (endpoint: string, params: Record<string, string>) =>
    request(s.base, { method: 'GET', path: `/api/v1/${endpoint}?${new URLSearchParams(params)}`, headers: { 'x-api-key': s.key } });

  // Now: South Africa's Woolworths has no storefront in Australia, the Australian one three.
  const map = await postMap(s.base, s.key, { brand: 'Woolworths', country: 'AU', format: 'json' });
  t.is(map.status, 200, map.text);
  t.is(map.headers['x-brand'], 'Woolworths (Australia)', 'a listing of what is there now reads the namesake');
  t.is(map.json<{ count: number }>().count, 3);

  // The feed in Australia since the first import: the Sydney store's closure, under its own name.
  const feed = await get('changes', { brand: 'Woolworths', country: 'AU', since: FIRST });
  t.is(feed.status, 200, feed.text);
  t.is(feed.headers['x-brand'], 'Woolworths');
  const changes = feed.json<ChangesDoc>();
  t.is(changes.brand, 'Woolworths');
  t.is(changes.opened.length, 0);
  t.is(changes.closed.length, 1);
  t.true(near(changes.closed[0], SYDNEY_ZA), JSON.stringify(changes.closed[0]));
  t.is(feed.headers['x-closed-count'], '1');

  // Asked by its qualified name, the Australian chain's feed is its Perth opening.
  const theirs = await get('changes', { brand: 'Woolworths (Australia)', country: 'AU', since: FIRST });
  t.is(theirs.status, 200, theirs.text);
  const opened = theirs.json<ChangesDoc>();
  t.is(opened.brand, 'Woolworths (Australia)');
  t.deepEqual([opened.opened.length, opened.closed.length], [1, 0]);
  t.true(near(opened.opened[0], PERTH));

  // The store-count history: one store in Australia in the first import's quarter, none at the
  // second's, and the closure in the period it happened.
  const hist = await get('history', { brand: 'Woolworths', country: 'AU', interval: 'quarter' });
  t.is(hist.status, 200, hist.text);
  t.is(hist.headers['x-brand'], 'Woolworths');
  const series = hist.json<HistoryDoc>().series;
  t.is(series.find((p) => p.period === '2026-Q2')?.stores, 1, JSON.stringify(series));
  t.is(series.at(-1)?.stores, 0, JSON.stringify(series));
  t.is(
    series.reduce((n, p) => n + p.closed, 0),
    1,
  );

  // Where only the namesake trades now (Auckland opened at the second import), the feed is
  // the namesake's, as a map's rows are.
  const nz = await get('changes', { brand: 'Woolworths', country: 'NZ', since: FIRST });
  t.is(nz.status, 200, nz.text);
  t.is(nz.headers['x-brand'], 'Woolworths (Australia)');
  const nzChanges = nz.json<ChangesDoc>();
  t.deepEqual([nzChanges.opened.length, nzChanges.closed.length], [1, 0]);
  t.true(near(nzChanges.opened[0], AUCKLAND));
  const nzHist = await get('history', { brand: 'Woolworths', country: 'NZ', interval: 'quarter' });
  t.is(nzHist.status, 200, nzHist.text);
  t.is(nzHist.headers['x-brand'], 'Woolworths (Australia)');
  t.is(nzHist.json<HistoryDoc>().series.at(-1)?.stores, 1);

  // Where the namesake closed its last store and the bare brand never traded (Port Moresby), the feed
  // is the namesake's closure, though neither has a storefront there now; a map there has
  // nothing to read a namesake by.
  const pg = await get('changes', { brand: 'Woolworths', country: 'PG', since: FIRST });
  t.is(pg.status, 200, pg.text);
  t.is(pg.headers['x-brand'], 'Woolworths (Australia)');
  const pgChanges = pg.json<ChangesDoc>();
  t.deepEqual([pgChanges.opened.length, pgChanges.closed.length], [0, 1]);
  t.true(near(pgChanges.closed[0], PORT_MORESBY));
  const pgHist = await get('history', { brand: 'Woolworths', country: 'PG', interval: 'quarter' });
  t.is(pgHist.status, 200, pgHist.text);
  t.is(pgHist.headers['x-brand'], 'Woolworths (Australia)');
  t.is(pgHist.json<HistoryDoc>().series.find((p) => p.period === '2026-Q2')?.stores, 1);
  const pgMap = await postMap(s.base, s.key, { brand: 'Woolworths', country: 'PG', format: 'json' });
  t.is(pgMap.status, 404, pgMap.text);
  t.regex(pgMap.json<{ error: string }>().error, /of Woolworths match/, 'nothing there now: the name is the bare brand');
});
