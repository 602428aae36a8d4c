// The history's `from`/`to` texts as instants: each against the ISO 8601 instant Date.parse
// reads for the same calendar day (the platform's own calendar, not ours).
import test from 'ava';
import { historyBound, HistoryQuery } from '../../ts/api/schemas.ts';

const s = (iso: string) => Date.parse(iso) / 1000;

test('months, quarters, dates and timestamps cover their own instants', (t) => {
  t.deepEqual(historyBound('2026-07'), { start: s('2026-07-01T00:00:00Z'), end: s('2026-08-01T00:00:00Z') });
  t.deepEqual(historyBound('2026-12'), { start: s('2026-12-01T00:00:00Z'), end: s('2027-01-01T00:00:00Z') });
  t.deepEqual(historyBound('2026-Q3'), { start: s('2026-07-01T00:00:00Z'), end: s('2026-10-01T00:00:00Z') });
  t.deepEqual(historyBound('2026-q4'), { start: s('2026-10-01T00:00:00Z'), end: s('2027-01-01T00:00:00Z') });
  t.deepEqual(historyBound('2024-02-29'), { start: s('2024-02-29T00:00:00Z'), end: s('2024-03-01T00:00:00Z') });
  t.deepEqual(historyBound('2026-11-01T02:00:00+02:00'), { start: s('2026-11-01T00:00:00Z'), end: s('2026-11-01T00:00:01Z') });
  // Years before 100 are those years, not 1900 and after.
  t.deepEqual(historyBound('0050-01'), { start: s('0050-01-01T00:00:00Z'), end: s('0050-02-01T00:00:00Z') });
  t.deepEqual(historyBound('0099-Q4'), { start: s('0099-10-01T00:00:00Z'), end: s('0100-01-01T00:00:00Z') });
});

test('the query refuses a from after to and bounds that are no period, naming the field', (t) => {
  const fields = (q: Record<string, string>) => {
    const r = HistoryQuery.safeParse(q);
    return r.success ? [] : r.error.issues.map((i) => i.path.join('.'));
  };
  t.deepEqual(fields({ brand: 'x', from: '2026-Q3', to: '2026-09' }), []);
  t.deepEqual(fields({ brand: 'x', from: '2026-10', to: '2026-Q3' }), ['from']);
  t.deepEqual(fields({ brand: 'x', from: '2026-09-30T23:59:59Z', to: '2026-09-30' }), []);
  for (const bad of ['2026-13', '2026-Q5', '2026-7', 'Q3-2026', '2026-02-30', 'soon', '']) t.true(fields({ brand: 'x', from: bad }).includes('from'), bad);
  t.true(fields({ brand: 'x', interval: 'week' }).includes('interval'));
});
