// POST /api/v1/location-map at its limits on a real server: the per-key rate limit, request
// bodies (Content-Type, the size limit, gzip and deflate), the request time limit, the native
// pool when full, and a panic inside the addon.
import test from 'ava';
import { gzipSync, deflateSync, deflateRawSync } from 'node:zlib';
import { postMap, request } from '../helpers/http.ts';
import { MCD, assertError, balance, ok, server, usageRows, type ErrorBody } from '../helpers/location-map.ts';

// ------------------------------------------------------------------ rate limit

test('rate limit: the 4th quick request gets 429 RATE_LIMITED with Retry-After; other keys are unaffected', async (t) => {
  let clock = Date.UTC(2026, 10, 2);
  // Refusals are written only at shutdown here, so the test sees both states.
  const s = await server(t, { env: { STOREMAP_RATE_LIMIT: '1', STOREMAP_RATE_BURST: '3', STOREMAP_USAGE_FLUSH_MS: '86400000' }, now: () => clock });
  const other = await s.keys.create({ plan: 'enterprise' });
  for (const remaining of [2, 1, 0]) {
    const res = await ok(t, s, { brand: 'Tesla' });
    t.is(res.header('x-ratelimit-limit'), '3');
    t.is(res.header('x-ratelimit-remaining'), String(remaining));
  }
  const before = (await balance(s, s.keyId));
  const limited = await postMap(s.base, s.key, { brand: 'Tesla' });
  assertError(t, limited, 429, 'RATE_LIMITED');
  t.true(Number(limited.header('retry-after')) >= 1, `Retry-After ${limited.header('retry-after')}`);
  t.regex(limited.header('retry-after'), /^\d+$/);
  t.is(limited.header('x-ratelimit-remaining'), '0');
  t.is(limited.header('x-ratelimit-limit'), '3');
  t.is((await balance(s, s.keyId)), before, 'a 429 is not charged');

  const res = await ok(t, s, { brand: 'Tesla' }, other.key);
  t.is(res.header('x-ratelimit-remaining'), '2', 'another key has its own bucket');

  clock += 1000; // one token back
  await ok(t, s, { brand: 'Tesla' });
  assertError(t, await postMap(s.base, s.key, { brand: 'Tesla' }), 429, 'RATE_LIMITED');
  // Refusals are counted without a row each: none is written yet, the report counts them.
  const rows = () => usageRows(s, s.keyId);
  t.deepEqual(
    (await rows()).map((r) => [r.status, r.credits > 0, r.requests]),
    [200, 200, 200, 200].map((st) => [st, true, 1]),
  );
  clock += 1000; // the usage report is rate-limited with the key too
  const report = await request(s.base, { method: 'GET', path: '/api/v1/usage', headers: { 'x-api-key': s.key } });
  t.is(report.status, 200);
  t.deepEqual(report.json<{ by_status: Record<string, number> }>().by_status, { '200': 4, '429': 2 });
  // At shutdown they are written as one row that stands for both.
  await s.stop();
  t.deepEqual(
    (await rows()).map((r) => [r.status, r.credits > 0, r.requests]),
    [...[200, 200, 200, 200].map((st) => [st, true, 1]), [429, false, 2]],
  );
});

// ------------------------------------------------------------------ request bodies: Content-Type, body limits

test('Content-Type parameters and case are accepted: application/json; charset=utf-8, Application/JSON', async (t) => {
  const s = await server(t);
  for (const type of ['application/json; charset=utf-8', 'Application/JSON', 'application/json;charset=UTF-8']) {
    const res = await postMap(s.base, s.key, { brand: 'Tesla' }, { headers: { 'content-type': type } });
    t.is(res.status, 200, `${type}: ${res.text.slice(0, 200)}`);
  }
});

test('body limit (2048 bytes): declared, chunked and decompressed sizes; gzip, x-gzip and deflate (zlib or bare) accepted; unknown encodings 415', async (t) => {
  const s = await server(t, { env: { STOREMAP_MAX_BODY_BYTES: '2048' } });
  const padded = (size: number) => {
    const base = JSON.stringify({ brand: 'Tesla' });
    return base.slice(0, -1) + ' '.repeat(size - base.length) + '}';
  };
  t.is(Buffer.byteLength(padded(3000)), 3000);
  const send = (body: Buffer | string | Buffer[], headers: Record<string, string> = {}) =>
    request(s.base, { path: '/api/v1/location-map', headers: { 'content-type': 'application/json', 'x-api-key': s.key, ...headers }, body });

  assertError(t, await send(padded(3000)), 413, 'PAYLOAD_TOO_LARGE');
  t.is((await send(padded(2048))).status, 200, 'exactly the limit is accepted');
  assertError(t, await send(padded(2049)), 413, 'PAYLOAD_TOO_LARGE');
  // No Content-Length: counted while reading.
  const chunks = [Buffer.from(padded(3000).slice(0, 1500)), Buffer.from(padded(3000).slice(1500))];
  assertError(t, await send(chunks), 413, 'PAYLOAD_TOO_LARGE');
  t.is((await send([Buffer.from(padded(1000).slice(0, 500)), Buffer.from(padded(1000).slice(500))])).status, 200);

  // A gzip body small on the wire but past the limit once decompressed.
  const bomb = gzipSync(padded(100_000));
  t.true(bomb.length < 2048, `compressed ${bomb.length} bytes`);
  assertError(t, await send(bomb, { 'content-encoding': 'gzip' }), 413, 'PAYLOAD_TOO_LARGE');
  assertError(t, await send(deflateSync(padded(100_000)), { 'content-encoding': 'deflate' }), 413, 'PAYLOAD_TOO_LARGE');

  const plain = await send(JSON.stringify({ brand: 'Tesla', format: 'csv' }));
  t.is(plain.status, 200);
  const gz = await send(gzipSync(padded(1500)), { 'content-encoding': 'gzip' });
  t.is(gz.status, 200, gz.text.slice(0, 200));
  const gzCsv = await send(gzipSync(JSON.stringify({ brand: 'Tesla', format: 'csv' })), { 'content-encoding': 'gzip' });
  t.is(gzCsv.text, plain.text, 'a gzip body gives the same answer');
  const df = await send(deflateSync(JSON.stringify({ brand: 'Tesla', format: 'csv' })), { 'content-encoding': 'deflate' });
  t.is(df.text, plain.text);
  // Bare deflate data under "deflate" (.NET's DeflateStream, Go's compress/flate write it), in
  // one chunk and split inside its first two bytes; x-gzip is gzip (RFC 9110 §8.4.1.3).
  const raw = deflateRawSync(JSON.stringify({ brand: 'Tesla', format: 'csv' }));
  t.is((await send(raw, { 'content-encoding': 'deflate' })).text, plain.text, 'a bare deflate body gives the same answer');
  t.is((await send([raw.subarray(0, 1), raw.subarray(1)], { 'content-encoding': 'deflate' })).text, plain.text);
  t.is((await send(gzipSync(JSON.stringify({ brand: 'Tesla', format: 'csv' })), { 'content-encoding': 'x-gzip' })).text, plain.text);
  assertError(t, await send(deflateRawSync(padded(100_000)), { 'content-encoding': 'deflate' }), 413, 'PAYLOAD_TOO_LARGE');
  assertError(t, await send(Buffer.from([0x78]), { 'content-encoding': 'deflate' }), 400, 'INVALID_JSON');
  assertError(t, await send(Buffer.alloc(0), { 'content-encoding': 'deflate' }), 400, 'INVALID_JSON');
  assertError(t, await send(Buffer.from('not deflate either'), { 'content-encoding': 'deflate' }), 400, 'INVALID_JSON');

  assertError(t, await send(JSON.stringify({ brand: 'Tesla' }), { 'content-encoding': 'br' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
  assertError(t, await send(Buffer.from('not gzip at all'), { 'content-encoding': 'gzip' }), 400, 'INVALID_JSON');
  // Still serving.
  t.is((await send(JSON.stringify({ brand: 'Tesla' }))).status, 200);
});

// ------------------------------------------------------------------ time limits, pool, panic

test('a task past STOREMAP_REQUEST_TIMEOUT_MS gets 503 TIMEOUT at the deadline', async (t) => {
  const s = await server(t, { env: { STOREMAP_TEST_HOOKS: '1', STOREMAP_REQUEST_TIMEOUT_MS: '200' } });
  const started = performance.now();
  const res = await request(s.base, { path: '/api/v1/__test/slow?ms=8000' });
  const elapsed = performance.now() - started;
  assertError(t, res, 503, 'TIMEOUT');
  // Wide apart on purpose: under CI load the event loop can lag by a second or two.
  t.true(elapsed >= 190 && elapsed < 6000, `answered after ${Math.round(elapsed)} ms, at the 200 ms deadline rather than after the 8 s task`);
  const fast = await request(s.base, { path: '/api/v1/__test/slow?ms=20' });
  t.is(fast.status, 200);
  t.deepEqual(fast.json(), { slept_ms: 20 });
});

test('location-map behind a full pool: 503 SERVICE_BUSY, and a queued request past its deadline 503 TIMEOUT; neither is charged', async (t) => {
  const s = await server(t, {
    credits: 100,
    // Every data query on the pool (a small one otherwise runs inline: test/inline-query.test.ts).
    env: { STOREMAP_TEST_HOOKS: '1', STOREMAP_NATIVE_CONCURRENCY: '1', STOREMAP_NATIVE_QUEUE: '1', STOREMAP_REQUEST_TIMEOUT_MS: '3000', STOREMAP_INLINE_MAX_ROWS: '0' },
  });
  // The deadline is long enough that a loaded machine never reaches it before the pool turns
  // the first request away (TIMEOUT instead of SERVICE_BUSY), and short enough to wait out.
  // Tasks that hold the pool until the test opens their gate, and the pool's state read from
  // the server: no step depends on how fast a loaded machine is.
  const open = (gate: string) => request(s.base, { path: `/api/v1/__test/open?gate=${gate}` });
  const poolIs = async (running: number, waiting: number) => {
    for (let i = 0; i < 400; i++) {
      const d = (await request(s.base, { method: 'GET', path: '/api/v1/__test/pool' })).json<{ running: number; waiting: number }>();
      if (d.running === running && d.waiting === waiting) return;
      await new Promise((r) => setTimeout(r, 25));
    }
    t.fail(`the pool never had ${running} running and ${waiting} waiting`);
  };
  // Busy: one task runs, one waits; the map request finds no room.
  const a = request(s.base, { path: '/api/v1/__test/slow?gate=a' });
  await poolIs(1, 0);
  const b = request(s.base, { path: '/api/v1/__test/slow?gate=b' });
  await poolIs(1, 1);
  assertError(t, await postMap(s.base, s.key, { brand: MCD }), 503, 'SERVICE_BUSY');
  await open('a');
  await poolIs(1, 0); // b took a's slot
  await open('b');
  await Promise.all([a, b]);
  await poolIs(0, 0);

  // Timeout: one task holds the pool; the map request waits in the queue past its 3 s
  // deadline and is answered then, with the pool still held; its query runs (uncharged) once
  // the pool frees.
  const c = request(s.base, { path: '/api/v1/__test/slow?gate=c' });
  await poolIs(1, 0);
  const timedOut = await postMap(s.base, s.key, { brand: MCD, format: 'csv' });
  assertError(t, timedOut, 503, 'TIMEOUT');
  // Answered at the deadline, not when the pool freed: the pool is still held.
  const held = (await request(s.base, { method: 'GET', path: '/api/v1/__test/pool' })).json<{ running: number }>();
  t.is(held.running, 1, 'the timed-out request was answered while the pool was still held');
  await open('c');
  await c;
  await poolIs(0, 0);
  // A barrier: the pool is FIFO with one slot, so once a new map request gets its 200, the
  // queued (timed-out) query has run and finished. Under load the slow task may still hold
  // the pool a little longer: retry while the pool says it is busy.
  let res = await postMap(s.base, s.key, { brand: MCD });
  let retries = 0;
  while (res.status === 503 && res.json<ErrorBody>().code === 'SERVICE_BUSY' && retries < 20) {
    retries++;
    await new Promise((r) => setTimeout(r, 250));
    res = await postMap(s.base, s.key, { brand: MCD });
  }
  t.is(res.status, 200, res.text.slice(0, 200));
  const charged = Number(res.header('x-credits-charged'));
  t.is(res.header('x-credits-remaining'), String(100 - charged), 'the timed-out request was not charged');
  t.is((await balance(s, s.keyId)), 100 - charged);
  t.deepEqual(
    (await usageRows(s, s.keyId)).map((r) => [r.status, r.format, r.credits]),
    [[503, 'json', 0], [503, 'csv', 0], ...Array(retries).fill([503, 'json', 0]), [200, 'json', charged]],
  );
});

test('a panic inside the addon is 500 INTERNAL as JSON, and the server keeps serving', async (t) => {
  const s = await server(t, { env: { STOREMAP_TEST_HOOKS: '1' } });
  for (let i = 0; i < 2; i++) {
    const res = await request(s.base, { path: '/api/v1/__test/panic' });
    assertError(t, res, 500, 'INTERNAL');
    t.deepEqual(Object.keys(res.json()).sort(), ['code', 'error']);
    await ok(t, s, { brand: MCD });
  }
});
