// The credit calculator on its own (ts/api/prices.ts): the tier breakpoints of
// baseCredits and creditsFor's 2x multiplier for images.
import test from 'ava';
import { baseCredits, creditsFor, type Format } from '../../ts/api/prices.ts';

test('credit tiers: baseCredits breakpoints and the 2x image multiplier', (t) => {
  const expected: [number, number][] = [
    [0, 1],
    [1, 1],
    [500, 1],
    [501, 2],
    [2000, 2],
    [2001, 3],
    [5000, 3],
    [5001, 5],
    [10000, 5],
    [10001, 8],
    [43000, 8],
  ];
  for (const [n, c] of expected) {
    t.is(baseCredits(n), c, `baseCredits(${n})`);
    for (const f of ['json', 'csv', 'geojson'] as Format[]) t.is(creditsFor(n, f), c, `creditsFor(${n}, ${f})`);
    for (const f of ['png', 'jpeg'] as Format[]) t.is(creditsFor(n, f), 2 * c, `creditsFor(${n}, ${f})`);
  }
  t.throws(() => baseCredits(-1), { instanceOf: RangeError });
  t.throws(() => baseCredits(1.5), { instanceOf: RangeError });
});
