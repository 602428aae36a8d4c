// Credits under concurrency: many charged requests at once against one key, in one server
// process and in two processes sharing one SQLite file. The balance must end at exactly
// initial - sum(X-Credits-Charged), never go negative, admit exactly as many requests as it
// can pay for, and every request must leave exactly one usage row.
import test, { type ExecutionContext } from 'ava';
import http from 'node:http';
import path from 'node:path';
import { openDatabase } from '../ts/db/database.ts';
import { creditsFor, type Format } from '../ts/api/prices.ts';
import { KeyStore } from '../ts/services/keys.ts';
import { snapshotDir, startServe } from './helpers/child.ts';
import { largestBrand } from './helpers/dataset.ts';
import { postMap, pooled, type HttpResult } from './helpers/http.ts';
import { sqliteOnly, startServer } from './helpers/server.ts';
import { SqliteLedger } from '../ts/db/sqlite-ledger.ts';

const NO_RATE_LIMIT = { STOREMAP_RATE_LIMIT: '100000', STOREMAP_RATE_BURST: '100000' };


/** A mix of sizes (1 and 2 credits) and formats; small bodies so 2,000 stay quick. */
function bodies(): Record<string, unknown>[] {
  return [
    { brand: 'Tesla', format: 'csv' },
    { brand: "McDonald's", country: 'US', format: 'csv' },
    { brand: largestBrand().name, format: 'csv' },
    { brand: 'Starbucks', storefront_type: 'pickup' },
    { brand: 'BP', format: 'geojson', country: 'GB' },
    { brand: largestBrand().name, country: 'US', format: 'csv', include_provenance: true },
  ];
}

interface Outcome {
  status: number;
  code?: string;
  count: number;
  charged: number;
  remaining: number;
  format: Format;
}

async function send(base: string, key: string, body: Record<string, unknown>, agent: http.Agent): Promise<Outcome> {
  const res: HttpResult = await postMap(base, key, body, { agent, headers: { connection: 'keep-alive' }, timeoutMs: 30_000 });
  const o: Outcome = {
    status: res.status,
    count: Number(res.header('x-location-count') || NaN),
    charged: Number(res.header('x-credits-charged') || NaN),
    remaining: Number(res.header('x-credits-remaining') || NaN),
    format: ((body.format as Format) ?? 'json') as Format,
  };
  if (res.status !== 200) o.code = res.json<{ code: string }>().code;
  return o;
}

function agent(t: ExecutionContext, sockets: number): http.Agent {
  const a = new http.Agent({ keepAlive: true, maxSockets: sockets });
  t.teardown(() => a.destroy());
  return a;
}

/**
 * The balance invariants over a set of 200 responses: each charge is the calculator's, no
 * remaining balance is negative, and the charges form one serial history: ordered by the
 * balance left, each response's remaining + charged is the previous one's remaining (the
 * first's is the initial balance). Two requests that saw the same balance would break it.
 */
function assertSerialCharges(t: ExecutionContext, oks: Outcome[], initial: number): number {
  const wrongCharge = oks.filter((o) => o.charged !== creditsFor(o.count, o.format));
  t.deepEqual(wrongCharge, [], 'X-Credits-Charged is creditsFor(X-Location-Count, format)');
  t.true(oks.every((o) => Number.isInteger(o.remaining) && o.remaining >= 0), 'no negative balance');
  const chain = [...oks].sort((a, b) => b.remaining - a.remaining);
  let expected = initial;
  const breaks: string[] = [];
  for (const o of chain) {
    if (o.remaining + o.charged !== expected) breaks.push(`remaining ${o.remaining} + charged ${o.charged} != ${expected}`);
    expected = o.remaining;
  }
  t.deepEqual(breaks.slice(0, 5), [], 'the charges form one serial history');
  return oks.reduce((s, o) => s + o.charged, 0);
}

test('2,000 charged requests over 50 keep-alive connections against one key: exact balance, one usage row each, no 5xx', async (t) => {
  const s = await startServer(t, { env: NO_RATE_LIMIT });
  const initial = 1_000_000;
  const { key, record } = await s.keys.create({ plan: 'enterprise', credits: initial });
  const mix = bodies();
  const a = agent(t, 50);
  const N = 2_000;
  const started = performance.now();
  const out = await pooled(N, 50, (i) => send(s.base, key, mix[i % mix.length], a));
  t.log(`${N} requests in ${Math.round(performance.now() - started)} ms`);

  t.deepEqual(out.filter((o) => o.status >= 500), [], 'no 5xx');
  t.deepEqual([...new Set(out.map((o) => o.status))], [200], 'all paid for');
  const oks = out.filter((o) => o.status === 200);
  const sum = assertSerialCharges(t, oks, initial);
  t.true(oks.some((o) => o.charged === 1) && oks.some((o) => o.charged === 2));
  t.is((await s.keys.get(record.id))!.credits, initial - sum);
  const [usage] = await s.query<{ n: number | string; c: number | string }>('SELECT COUNT(*) AS n, SUM(credits) AS c FROM usage WHERE key_id = ?', [record.id]);
  t.is(Number(usage.n), N);
  t.is(Number(usage.c), sum);
});

test('a balance sized for exactly 7 requests admits exactly 7 of 40 concurrent ones; the rest get 402 and the balance ends at 0', async (t) => {
  const s = await startServer(t, { env: NO_RATE_LIMIT });
  const { key, record } = await s.keys.create({ plan: 'enterprise', credits: 7 });
  const body = { brand: 'Tesla', format: 'csv' }; // 1 credit
  const a = agent(t, 40);
  const out = await Promise.all(Array.from({ length: 40 }, () => send(s.base, key, body, a)));
  const oks = out.filter((o) => o.status === 200);
  t.is(oks.length, 7);
  t.deepEqual(
    out.filter((o) => o.status !== 200).map((o) => `${o.status} ${o.code}`),
    Array(33).fill('402 INSUFFICIENT_CREDITS'),
  );
  t.deepEqual(oks.map((o) => o.remaining).sort((x, y) => x - y), [0, 1, 2, 3, 4, 5, 6]);
  assertSerialCharges(t, oks, 7);
  t.is((await s.keys.get(record.id))!.credits, 0);
  const usage = (await s.query<{ status: number; credits: number | string }>('SELECT status, credits FROM usage WHERE key_id = ?', [record.id])).map((u) => ({ status: u.status, credits: Number(u.credits) }));
  t.is(usage.length, 40);
  t.is(usage.filter((u) => u.status === 200 && u.credits === 1).length, 7);
  t.is(usage.filter((u) => u.status === 402 && u.credits === 0).length, 33);
});

sqliteOnly('two server processes sharing one database file: 1,000 requests each at once, one balance, one usage row each; exact admission across both', async (t) => {
  const dataDir = await snapshotDir(t);
  const dbPath = path.join(dataDir, 'shared.db');
  const initial = 1_000_000;
  const setup = openDatabase(dbPath);
  const keys = new KeyStore(new SqliteLedger(setup));
  const big = await keys.create({ plan: 'enterprise', credits: initial, name: 'shared' });
  setup.close();

  // A second of waiting for the other process's write lock (the default) is a loaded 2-core
  // machine's scheduling away: this test is about exactness, not that deadline (ledger-faults).
  const env = { ...NO_RATE_LIMIT, STOREMAP_LEDGER_BUSY_MS: '10000' };
  const [one, two] = await Promise.all([
    startServe(t, { dataDir, dbPath, env }),
    startServe(t, { dataDir, dbPath, env }),
  ]);
  t.not(one.base, two.base);
  const mix = bodies();
  const a = agent(t, 50);
  const N = 1_000;
  const started = performance.now();
  const [r1, r2] = await Promise.all([
    pooled(N, 25, (i) => send(one.base, big.key, mix[i % mix.length], a)),
    pooled(N, 25, (i) => send(two.base, big.key, mix[(i + 3) % mix.length], a)),
  ]);
  t.log(`${2 * N} requests over two processes in ${Math.round(performance.now() - started)} ms`);
  const out = [...r1, ...r2];
  t.deepEqual(out.filter((o) => o.status >= 500), [], 'no 5xx');
  t.deepEqual([...new Set(out.map((o) => o.status))], [200]);
  const sum = assertSerialCharges(t, out, initial);

  // Exact admission across the two processes: 25 credits, 60 one-credit requests at once.
  const db = openDatabase(dbPath);
  t.teardown(() => db.close());
  const small = await new KeyStore(new SqliteLedger(db)).create({ plan: 'enterprise', credits: 25, name: 'small' });
  const body = { brand: 'Tesla', format: 'csv' };
  const race = await Promise.all(Array.from({ length: 60 }, (_, i) => send(i % 2 ? one.base : two.base, small.key, body, a)));
  const raceOks = race.filter((o) => o.status === 200);
  t.is(raceOks.length, 25);
  t.deepEqual([...new Set(race.filter((o) => o.status !== 200).map((o) => `${o.status} ${o.code}`))], ['402 INSUFFICIENT_CREDITS']);
  assertSerialCharges(t, raceOks, 25);

  // Both processes stop on SIGTERM.
  const [e1, e2] = await Promise.all([one.stop(), two.stop()]);
  t.deepEqual(e1, { code: 0, signal: null }, one.output().slice(-500));
  t.deepEqual(e2, { code: 0, signal: null }, two.output().slice(-500));

  const balance = (id: string) => (db.prepare('SELECT credits FROM api_keys WHERE id = ?').get(id) as { credits: number }).credits;
  t.is(balance(big.record.id), initial - sum);
  t.is(balance(small.record.id), 0);
  const usage = (id: string) => db.prepare('SELECT COUNT(*) AS n, COALESCE(SUM(credits), 0) AS c FROM usage WHERE key_id = ?').get(id) as { n: number; c: number };
  t.deepEqual(usage(big.record.id), { n: 2 * N, c: sum });
  t.deepEqual(usage(small.record.id), { n: 60, c: 25 });
  t.is((db.prepare('PRAGMA integrity_check').get() as { integrity_check: string }).integrity_check, 'ok');
  t.is((db.prepare('SELECT COUNT(*) AS n FROM api_keys').get() as { n: number }).n, 2, 'no demo keys: the file already had keys');
});
