// POST /api/v1/location-map and the key's account on a real server: plan gating (trial and
// standard keys get images only), trial expiry, a revoked key, the credits charged and left,
// internal keys, X-Credits-Low, and the usage rows every request writes.
import test from 'ava';
import { creditsFor, type Format } from '../../ts/api/prices.ts';
import type { Plan } from '../../ts/api/plans.ts';
import { DAY_MS } from '../../ts/time.ts';
import { largestBrand } from '../helpers/dataset.ts';
import { postMap } from '../helpers/http.ts';
import { MCD, assertError, balance, ok, server, usageRows } from '../helpers/location-map.ts';

// ------------------------------------------------------------------ plans

test('trial and standard keys: data formats (and format omitted) get 403 DATA_ACCESS_FORBIDDEN and are not charged; images are served and charged', async (t) => {
  const s = await server(t);
  for (const plan of ['trial', 'standard'] as Plan[]) {
    const k = await s.keys.create({ plan });
    const before = k.record.credits;
    t.true(before > 0);
    for (const format of ['json', 'csv', 'geojson', undefined]) {
      const body = format ? { brand: MCD, format } : { brand: MCD };
      assertError(t, await postMap(s.base, k.key, body), 403, 'DATA_ACCESS_FORBIDDEN');
    }
    const charged: number[] = [];
    for (const format of ['png', 'jpeg'] as const) {
      const res = await postMap(s.base, k.key, { brand: MCD, format, width: 200, height: 150 });
      t.is(res.status, 200, `${plan} ${format}: ${res.text.slice(0, 200)}`);
      t.is(res.header('content-type'), `image/${format}`);
      t.is(Number(res.header('x-credits-charged')), creditsFor(Number(res.header('x-location-count')), format));
      charged.push(Number(res.header('x-credits-charged')));
    }
    t.is((await balance(s, k.record.id)), before - charged[0] - charged[1], `${plan}: only the images were charged`);
    t.deepEqual(
      (await usageRows(s, k.record.id)).map((r) => [r.status, r.format, r.credits]),
      [
        [403, 'json', 0],
        [403, 'csv', 0],
        [403, 'geojson', 0],
        [403, 'json', 0],
        [200, 'png', charged[0]],
        [200, 'jpeg', charged[1]],
      ],
    );
  }
});

test('a trial key expires after 5 days: 402 TRIAL_EXPIRED, by the server clock', async (t) => {
  let clock = Date.UTC(2026, 10, 2, 12, 0, 0);
  const s = await server(t, { now: () => clock });
  const trial = await s.keys.create({ plan: 'trial' });
  t.is(trial.record.expiresAt, clock + 5 * DAY_MS);

  const check = async (expired: boolean) => {
    for (const format of ['png', 'jpeg', 'json'] as const) {
      const res = await postMap(s.base, trial.key, { brand: MCD, format, width: 100, height: 100 });
      if (expired) assertError(t, res, 402, 'TRIAL_EXPIRED');
      else if (format === 'json') assertError(t, res, 403, 'DATA_ACCESS_FORBIDDEN');
      else t.is(res.status, 200, `${format} before expiry`);
    }
  };
  await check(false);
  clock += 4 * DAY_MS;
  await check(false);
  clock = trial.record.expiresAt! - 1;
  await check(false);
  clock = trial.record.expiresAt!;
  await check(true);
  clock += DAY_MS;
  await check(true);
  const rows = (await usageRows(s, trial.record.id));
  t.is(rows.length, 15);
  t.deepEqual(
    rows.slice(9).map((r) => r.status),
    [402, 402, 402, 402, 402, 402],
  );
  const spent = rows.reduce((n, r) => n + r.credits, 0);
  t.true(rows.slice(9).every((r) => r.credits === 0), 'nothing charged once expired');
  t.is(rows.filter((r) => r.credits > 0).length, 6, 'the six images before expiry were charged');
  t.is((await balance(s, trial.record.id)), 50 - spent);
});

test('a revoked key gets 401 UNAUTHORIZED and leaves no usage row', async (t) => {
  const s = await server(t);
  const k = await s.keys.create({ plan: 'enterprise', credits: 100 });
  const first = await ok(t, s, { brand: 'Tesla' }, k.key);
  t.true((await s.keys.revoke(k.record.id)));
  assertError(t, await postMap(s.base, k.key, { brand: 'Tesla' }), 401, 'UNAUTHORIZED');
  t.is((await usageRows(s, k.record.id)).length, 1);
  t.is((await balance(s, k.record.id)), 100 - Number(first.header('x-credits-charged')));
});

// ------------------------------------------------------------------ credits

test('X-Credits-Charged is creditsFor(count, format) and X-Credits-Remaining falls by exactly the charge', async (t) => {
  const initial = 10_000;
  const s = await server(t, { credits: initial });
  const big = largestBrand();
  const requests: Record<string, unknown>[] = [
    { brand: MCD },
    { brand: big.name, format: 'csv' },
    { brand: MCD, country: 'US', format: 'geojson' },
    { tickers: ['MCD', 'SBUX', '3382.T'] },
    { brand: 'Starbucks', format: 'csv', storefront_type: 'pickup' },
    { tickers: ['MCD', 'SBUX', 'SHEL', 'CHPT', '3382.T'], format: 'geojson' },
    { brand: 'Tesla' },
  ];
  let remaining = initial;
  let sum = 0;
  const counts: number[] = [];
  for (const body of requests) {
    const res = await ok(t, s, body);
    const count = Number(res.header('x-location-count'));
    const charged = Number(res.header('x-credits-charged'));
    counts.push(count);
    t.is(charged, creditsFor(count, (body.format as Format) ?? 'json'), JSON.stringify(body));
    t.is(Number(res.header('x-credits-remaining')), remaining - charged, JSON.stringify(body));
    remaining -= charged;
    sum += charged;
    t.is(res.header('x-credits-low'), '');
  }
  t.true(counts.some((n) => n <= 500) && counts.some((n) => n > 500), `sizes on both sides of 500: ${counts}`);
  t.is((await balance(s, s.keyId)), initial - sum);
  t.deepEqual(
    (await usageRows(s, s.keyId)).map((r) => r.credits),
    counts.map((n, i) => creditsFor(n, (requests[i].format as Format) ?? 'json')),
  );
});

test('402 INSUFFICIENT_CREDITS when the balance is below the cost; the balance is left unchanged', async (t) => {
  const s = await server(t, { credits: 1 });
  const big = largestBrand();
  t.true(big.locationCount > 500, 'the largest brand costs 2');
  assertError(t, await postMap(s.base, s.key, { brand: big.name }), 402, 'INSUFFICIENT_CREDITS');
  t.is((await balance(s, s.keyId)), 1);
  // The contract's tiers: up to 500 locations cost 1 credit.
  const small = largestBrand(500).name;
  const res = await ok(t, s, { brand: small });
  t.is(res.header('x-credits-charged'), '1');
  t.is(res.header('x-credits-remaining'), '0');
  t.is(res.header('x-credits-low'), 'true');
  assertError(t, await postMap(s.base, s.key, { brand: small }), 402, 'INSUFFICIENT_CREDITS');
  t.is((await balance(s, s.keyId)), 0);
  t.deepEqual(
    (await usageRows(s, s.keyId)).map((r) => [r.status, r.credits]),
    [
      [402, 0],
      [200, 1],
      [402, 0],
    ],
  );
});

test('internal keys are charged 0, their balance never moves, and they report 2^53 - 1 credits left', async (t) => {
  const s = await server(t);
  const internal = await s.keys.create({ plan: 'internal', credits: 100 });
  const big = largestBrand();
  for (const body of [{ brand: big.name }, { brand: MCD, format: 'csv' }, { brand: MCD, format: 'geojson' }]) {
    const res = await ok(t, s, body, internal.key);
    t.is(res.header('x-credits-charged'), '0');
    // Not the stored 100: a client that budgets by this header must not see an end.
    t.is(res.header('x-credits-remaining'), '9007199254740991');
    t.is(res.header('x-credits-low'), '');
  }
  t.is((await balance(s, internal.record.id)), 100);
  t.deepEqual(
    (await usageRows(s, internal.record.id)).map((r) => [r.status, r.credits]),
    [
      [200, 0],
      [200, 0],
      [200, 0],
    ],
  );
});

test('X-Credits-Low: true appears exactly when the remaining balance is below 50', async (t) => {
  const s = await server(t, { credits: 53 });
  const big = largestBrand();
  const small = largestBrand(500).name;
  const steps: [Record<string, unknown>, number][] = [
    [{ brand: small }, 52],
    [{ brand: big.name }, 50],
    [{ brand: small }, 49],
    [{ brand: big.name }, 47],
  ];
  for (const [body, remaining] of steps) {
    const res = await ok(t, s, body);
    t.is(res.header('x-credits-remaining'), String(remaining));
    t.is(res.header('x-credits-low'), remaining < 50 ? 'true' : '', `remaining ${remaining}`);
  }
});

// ------------------------------------------------------------------ usage

test('usage: one row per request with a valid key (status, format, credits), none for an unknown key', async (t) => {
  const s = await server(t, { credits: 1000 });
  const standard = await s.keys.create({ plan: 'standard' });
  const broke = await s.keys.create({ plan: 'enterprise', credits: 0 });
  const unknown = 'sm_live_' + '0123456789abcdef01234567';
  const charged: number[] = [];

  const r200 = await ok(t, s, { brand: MCD, format: 'csv' });
  charged.push(Number(r200.header('x-credits-charged')));
  const r200b = await ok(t, s, { brand: MCD });
  charged.push(Number(r200b.header('x-credits-charged')));
  assertError(t, await postMap(s.base, s.key, { brand: MCD, format: 'geojson', width: 0 }), 400, 'INVALID_REQUEST');
  assertError(t, await postMap(s.base, s.key, { brand: MCD, zoom: 3 }), 400, 'INVALID_REQUEST');
  assertError(t, await postMap(s.base, standard.key, { brand: MCD }), 403, 'DATA_ACCESS_FORBIDDEN');
  assertError(t, await postMap(s.base, s.key, { brand: 'Starbuks', format: 'csv' }), 404, 'NOT_FOUND');
  assertError(t, await postMap(s.base, broke.key, { brand: MCD, format: 'geojson' }), 402, 'INSUFFICIENT_CREDITS');
  assertError(t, await postMap(s.base, unknown, { brand: MCD }), 401, 'UNAUTHORIZED');
  assertError(t, await postMap(s.base, undefined, { brand: MCD }), 401, 'UNAUTHORIZED');

  const row = (r: { status: number | null; format: string | null; credits: number; endpoint: string }) => [r.status, r.format, r.credits, r.endpoint];
  const E = '/api/v1/location-map';
  t.deepEqual((await usageRows(s, s.keyId)).map(row), [
    [200, 'csv', charged[0], E],
    [200, 'json', charged[1], E],
    [400, 'geojson', 0, E],
    [400, 'json', 0, E],
    [404, 'csv', 0, E],
  ]);
  t.deepEqual((await usageRows(s, standard.record.id)).map(row), [[403, 'json', 0, E]]);
  t.deepEqual((await usageRows(s, broke.record.id)).map(row), [[402, 'geojson', 0, E]]);
  const [counted] = await s.query<{ n: number | string; c: number | string }>('SELECT COUNT(*) AS n, SUM(credits) AS c FROM usage');
  const total = { n: Number(counted.n), c: Number(counted.c) };
  t.is(total.n, 7, 'no row for the unknown or missing key');
  t.is(total.c, charged[0] + charged[1]);
  t.is((await balance(s, s.keyId)), 1000 - total.c);
});
