// A data query on a small brand runs on the JS thread at once (STOREMAP_INLINE_MAX_ROWS), one
// on a larger brand on the native pool: shown on a real server whose every pool slot a gated
// test task holds (the test waits for the pool states the server reports, never for time).
// Either way the answer is the same bytes.
import test from 'ava';
import { postMap, type HttpResult } from './helpers/http.ts';
import { poolCountOf } from './helpers/dataset.ts';
import { holdSlot, open, waitForPool } from './helpers/pool.ts';
import { startServer } from './helpers/server.ts';

test('with every pool slot held, a brand under the line is answered at once and a brand over it waits for a slot', async (t) => {
  const small = 'Tesla';
  const large = 'Starbucks';
  t.true(poolCountOf(small) < poolCountOf(large), `${small} ${poolCountOf(small)}, ${large} ${poolCountOf(large)}`);
  // The line between the two brands.
  const s = await startServer(t, { env: { STOREMAP_TEST_HOOKS: '1', STOREMAP_NATIVE_CONCURRENCY: '1', STOREMAP_INLINE_MAX_ROWS: String(poolCountOf(small)) } });
  const k = await s.keys.create({ plan: 'enterprise', credits: 1000 });
  const holder = holdSlot(s, 'inline-hold');
  await waitForPool(s, (d) => d.running === 1);

  const answered = await postMap(s.base, k.key, { brand: small, format: 'json' });
  t.is(answered.status, 200, answered.text);
  const j = answered.json();
  t.true(j.count > 0);
  t.is(j.locations.length, j.count);

  const waiting = postMap(s.base, k.key, { brand: large, format: 'json' });
  await waitForPool(s, (d) => d.running === 1 && d.waiting === 1);
  await open(s, 'inline-hold');
  await holder;
  const late = await waiting;
  t.is(late.status, 200, late.text);
  t.true(late.json().count > 0);
});

test('json, csv and geojson: the same bytes inline as on the native pool, and the same charge', async (t) => {
  const inline = await startServer(t);
  const pooled = await startServer(t, { env: { STOREMAP_INLINE_MAX_ROWS: '0' } });
  t.true(poolCountOf('Starbucks') <= inline.config.inlineMaxRows, 'the default line puts the test brand inline');
  const ki = await inline.keys.create({ plan: 'enterprise', credits: 1000 });
  const kp = await pooled.keys.create({ plan: 'enterprise', credits: 1000 });
  for (const body of [
    { brand: 'Starbucks', format: 'json' },
    { brand: 'Starbucks', format: 'csv', country: 'US' },
    { brand: 'Starbucks', format: 'geojson', include_provenance: true },
  ]) {
    const [a, b]: HttpResult[] = [await postMap(inline.base, ki.key, body), await postMap(pooled.base, kp.key, body)];
    t.is(a.status, 200, a.text);
    t.is(b.status, 200, b.text);
    t.true(a.raw.equals(b.raw), `${body.format}: the bodies differ`);
    for (const h of ['content-type', 'x-location-count', 'x-credits-charged', 'x-credits-remaining', 'x-region', 'x-data-sources']) t.is(a.header(h), b.header(h), `${body.format}: ${h}`);
  }
});
