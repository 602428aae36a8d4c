// The service under abuse, on a real server: price before work, a bound on what one request
// may cost, work nobody waits for never started, clients that hang up, one key flooding the
// native pool, floods on the free endpoints. Ordering is controlled, never raced: slow test
// tasks hold the pool until the test opens their gate, and the test waits for the states the
// server reports (`/api/v1/__test/pool`).
import test from 'ava';
import http from 'node:http';
import { postMap, request } from './helpers/http.ts';
import { startServer, type TestServer } from './helpers/server.ts';
import { holdSlot, open, poolDepth, waitForPool } from './helpers/pool.ts';
import { poolCountOf } from './helpers/dataset.ts';
import { openDatabase } from '../ts/db/database.ts';
import { KeyStore } from '../ts/services/keys.ts';
import { SqliteLedger } from '../ts/db/sqlite-ledger.ts';

// Every data query on the native pool, which these tests hold and fill with JSON requests (a
// small one otherwise runs inline: test/inline-query.test.ts).
const HOOKS = { STOREMAP_TEST_HOOKS: '1', STOREMAP_INLINE_MAX_ROWS: '0' };


const usage = (s: TestServer, keyId: string) =>
  s.db.prepare('SELECT status, credits, requests FROM usage WHERE key_id = ? ORDER BY id').all(keyId) as { status: number; credits: number; requests: number }[];

const balance = (s: TestServer, keyId: string) => (s.db.prepare('SELECT credits FROM api_keys WHERE id = ?').get(keyId) as { credits: number }).credits;


test('price before work: a key that cannot pay gets 402 and no map is drawn (the next caller is not served from a cache)', async (t) => {
  const s = await startServer(t);
  const poor = await s.keys.create({ plan: 'standard', credits: 1 });
  const rich = await s.keys.create({ plan: 'standard', credits: 1000 });
  const body = { brand: '7-Eleven', format: 'png', width: 640, height: 400 };
  // 779 rows: the 501-2,000 tier (2 credits), twice for an image (the contract's prices).
  t.true(poolCountOf('7-Eleven') > 500 && poolCountOf('7-Eleven') <= 2000);
  const refused = await postMap(s.base, poor.key, body);
  t.is(refused.status, 402, refused.text);
  t.is(refused.json().code, 'INSUFFICIENT_CREDITS');
  t.regex(refused.json().error, /costs 4 credits; the key has 1/);
  t.is(balance(s, poor.record.id), 1);
  t.deepEqual(usage(s, poor.record.id), [{ status: 402, credits: 0, requests: 1 }]);
  // Had the first request drawn its map, the image cache would hold it now.
  const paid = await postMap(s.base, rich.key, body);
  t.is(paid.status, 200);
  t.is(paid.header('x-cached'), 'false');
  t.is(paid.header('x-credits-charged'), '4');
});

test('a request beyond the work bound is 400 naming the limit, whatever the balance, and is not charged', async (t) => {
  const s = await startServer(t);
  const k = await s.keys.create({ plan: 'enterprise', credits: 10_000 });
  // A marker of radius 64 at scale 4 covers a 524 px square (2 x (256 + 4.8), rounded up,
  // plus 2 px of rim): 2^28 px of marker work is 977 markers. Two big brands pass that.
  const markers = poolCountOf('7-Eleven') + poolCountOf('Shell');
  t.true(markers > Math.floor(2 ** 28 / 524 ** 2), `${markers} markers`);
  const res = await postMap(s.base, k.key, { tickers: ['3382.T', 'SHEL'], format: 'png', width: 1024, height: 1024, scale: 4, marker_radius: 64 });
  t.is(res.status, 400, res.text);
  t.is(res.json().code, 'INVALID_REQUEST');
  t.regex(res.json().error, /268435456/);
  t.regex(res.json().error, /marker_radius/);
  t.is(balance(s, k.record.id), 10_000);
});

test('a request whose time runs out while it waits for the pool is answered 503 TIMEOUT and leaves the queue: its work never starts', async (t) => {
  // The limit is long enough that the queued request is seen waiting before it runs out on a
  // loaded machine (timers fire before I/O after a stall), and short enough to wait out.
  const s = await startServer(t, { env: { ...HOOKS, STOREMAP_NATIVE_CONCURRENCY: '1', STOREMAP_REQUEST_TIMEOUT_MS: '3000' } });
  const k = await s.keys.create({ plan: 'enterprise', credits: 100 });
  const holder = holdSlot(s, 'hold-timeout');
  await waitForPool(s, (d) => d.running === 1);
  const queued = postMap(s.base, k.key, { brand: 'Starbucks', format: 'json' });
  await waitForPool(s, (d) => d.waiting === 1);
  const res = await queued;
  t.is(res.status, 503);
  t.is(res.json().code, 'TIMEOUT');
  // The slot is still held: the timed-out request is gone from the queue, not waiting to run.
  t.deepEqual(await poolDepth(s), { running: 1, waiting: 0 });
  await open(s, 'hold-timeout');
  await holder; // timed out itself meanwhile; its slot is freed when its task ends
  await waitForPool(s, (d) => d.running === 0);
  t.is(balance(s, k.record.id), 100);
  t.deepEqual(usage(s, k.record.id), [{ status: 503, credits: 0, requests: 1 }]);
});

test('a client that hangs up before its answer is written is recorded as 499 and not charged', async (t) => {
  const s = await startServer(t, { env: { ...HOOKS, STOREMAP_NATIVE_CONCURRENCY: '1' } });
  const k = await s.keys.create({ plan: 'enterprise', credits: 100 });
  const holder = holdSlot(s, 'hold-499');
  await waitForPool(s, (d) => d.running === 1);
  // A raw request the test can cut off once the server has it queued.
  const req = http.request(`${s.base}/api/v1/location-map`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': k.key } });
  req.on('error', () => {});
  req.end(JSON.stringify({ brand: 'Starbucks', format: 'json' }));
  await waitForPool(s, (d) => d.waiting === 1);
  req.destroy();
  // The server sees the hang-up and drops the queued work.
  await waitForPool(s, (d) => d.waiting === 0);
  await open(s, 'hold-499');
  await holder;
  t.deepEqual(usage(s, k.record.id), [{ status: 499, credits: 0, requests: 1 }]);
  t.is(balance(s, k.record.id), 100);
  // The usage report counts it as an error.
  const report = await request(s.base, { method: 'GET', path: '/api/v1/usage', headers: { 'x-api-key': k.key } });
  t.is(report.json().by_status['499'], 1);
  t.is(report.json().summary.error_count, 1);
});

test('fair share: one key holds at most half the pool and half the queue; another key is served meanwhile', async (t) => {
  const s = await startServer(t, { env: { ...HOOKS, STOREMAP_NATIVE_CONCURRENCY: '4', STOREMAP_NATIVE_QUEUE: '4' } });
  const flooder = await s.keys.create({ plan: 'enterprise', credits: 1000 });
  const other = await s.keys.create({ plan: 'enterprise', credits: 1000 });
  // The flooder's tasks: two run (half of 4 slots), two wait (half of a queue of 4)...
  const gates = ['fair-a', 'fair-b', 'fair-c', 'fair-d'];
  const held = gates.map((g) => holdSlot(s, g, flooder.record.id));
  await waitForPool(s, (d) => d.running === 2 && d.waiting === 2);
  // ...and the fifth is refused at once, although two slots are free.
  const refused = await holdSlot(s, 'fair-e', flooder.record.id);
  t.is(refused.status, 503);
  t.is(refused.json().code, 'SERVICE_BUSY');
  // Another key's real request takes a free slot and completes while the flood holds on.
  for (let i = 0; i < 3; i++) {
    const res = await postMap(s.base, other.key, { brand: 'Starbucks', format: 'json' });
    t.is(res.status, 200, res.text);
  }
  t.deepEqual(await poolDepth(s), { running: 2, waiting: 2 });
  // A real location-map request of the flooder's own key waits behind its share: refused.
  const own = await postMap(s.base, flooder.key, { brand: 'Starbucks', format: 'json' });
  t.is(own.status, 503);
  t.is(own.json().code, 'SERVICE_BUSY');
  t.is(own.header('retry-after'), '1');
  for (const g of gates) await open(s, g);
  for (const h of held) t.is((await h).status, 200);
});

test('free endpoints: a token bucket per client address; /healthz and keyed endpoints are not counted', async (t) => {
  const s = await startServer(t, { env: { STOREMAP_FREE_RATE_LIMIT: '0.001', STOREMAP_FREE_RATE_BURST: '3' } });
  const k = await s.keys.create({ plan: 'enterprise', credits: 100 });
  const paths = ['/api/v1/brands?limit=1', '/api/v1/brands/search?q=star', '/api/v1/brands/summary?brand=Starbucks'];
  for (const [i, p] of paths.entries()) {
    const res = await request(s.base, { method: 'GET', path: p });
    t.is(res.status, 200, `${p}: ${res.text}`);
    t.is(res.header('x-ratelimit-remaining'), String(2 - i));
  }
  const limited = await request(s.base, { method: 'GET', path: '/api/v1/brands?limit=1' });
  t.is(limited.status, 429);
  t.is(limited.json().code, 'RATE_LIMITED');
  t.true(Number(limited.header('retry-after')) >= 1);
  t.is((await request(s.base, { method: 'GET', path: '/api/openapi.yaml' })).status, 429, 'the docs share the bucket');
  t.is((await request(s.base, { method: 'GET', path: '/healthz' })).status, 200);
  t.is((await postMap(s.base, k.key, { brand: 'Starbucks', format: 'json' })).status, 200);
});

test('authenticated keys are cached, but a key revoked or topped up through another connection is seen at the next request', async (t) => {
  const s = await startServer(t);
  const k = await s.keys.create({ plan: 'standard', credits: 0 });
  const body = { brand: 'Tesla', format: 'png', width: 256, height: 256 };
  // Cached as valid with no credits: 402.
  t.is((await postMap(s.base, k.key, body)).status, 402);
  // Another connection (another process, the CLI) tops the key up, then revokes it.
  const other = openDatabase(s.dbPath);
  t.teardown(() => other.close());
  await new KeyStore(new SqliteLedger(other)).topUp(k.record.id, 100);
  t.is((await postMap(s.base, k.key, body)).status, 200);
  await new KeyStore(new SqliteLedger(other)).revoke(k.record.id);
  const revoked = await postMap(s.base, k.key, body);
  t.is(revoked.status, 401);
  t.is(revoked.json().code, 'UNAUTHORIZED');
  const usage = await request(s.base, { method: 'GET', path: '/api/v1/usage', headers: { 'x-api-key': k.key } });
  t.is(usage.status, 401);
});
