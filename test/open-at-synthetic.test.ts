// open_at on the default synthetic dataset, through the addon: the generated sources write hours
// as OpenStreetMap and AllThePlaces do (crates/ingest/src/world/hours.rs), so the stores open at
// a moment are a subset of a brand's rows, fewer at night, and every open row's hours admit that
// moment by opening_hours.js (another evaluator than the server's).
import test from 'ava';
import OpeningHours from 'opening_hours';
import { query } from '../ts/native.ts';
import { testStore } from './helpers/dataset.ts';

interface Row {
  id: string;
  country: string;
  opening_hours: string | null;
}

async function rows(brand: string, openAt?: string): Promise<{ rows: Row[]; unknown?: number | null; coverage?: number | null }> {
  const store = testStore();
  const b = store.resolve(brand)!;
  const r = await query(store, { brands: [b.brand], country: 'US', format: 'json', verifiedOnly: true, openAt });
  return { rows: (JSON.parse(r.body.toString()) as { locations: Row[] }).locations, unknown: r.hoursUnknown, coverage: r.coverageConfidence };
}

const openByJs = (hours: string, local: Date) => new OpeningHours(hours, null, { mode: 0, tag_key: 'opening_hours', map_value: false, warnings_severity: 4, locale: 'en' }).getState(local);

for (const brand of ['Shell', 'Walgreens', 'Starbucks']) {
  test(`${brand} in the US: the stores open at local noon and at 03:30 are those whose hours say so`, async (t) => {
    const all = await rows(brand);
    const withHours = all.rows.filter((r) => r.opening_hours !== null);
    t.true(withHours.length > 0, `${brand} has rows with hours`);
    const counts: number[] = [];
    for (const [at, local] of [
      ['2026-12-01T12:00', new Date(2026, 11, 1, 12, 0)],
      ['2026-12-01T03:30', new Date(2026, 11, 1, 3, 30)],
    ] as const) {
      const open = await rows(brand, at);
      const want = withHours.filter((r) => openByJs(r.opening_hours!, local)).map((r) => r.id).sort();
      t.deepEqual(open.rows.map((r) => r.id).sort(), want, `${brand} at ${at}`);
      t.is(open.unknown, all.rows.length - withHours.length, 'rows without hours counted');
      counts.push(open.rows.length);
    }
    t.true(counts[0]! >= counts[1]!, `no more open at night than at noon: ${counts.join(' vs ')}`);
  });
}

test('with open_at no coverage is estimated: the estimate counts every storefront, open or not', async (t) => {
  const all = await rows('Shell');
  t.is(typeof all.coverage, 'number', 'Shell in the US has a coverage estimate');
  t.is((await rows('Shell', '2026-12-01T03:30')).coverage ?? null, null, 'none with open_at');
});
