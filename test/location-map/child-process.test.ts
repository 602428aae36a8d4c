// POST /api/v1/location-map against `node bin/storemap.js serve` in a child process: if a
// request crashes the server, the failure is reported here instead of killing the test
// runner. Restify's own 404 and 405, and the native pool refusing a third concurrent call.
import test from 'ava';
import { ERRORS } from '../../ts/api/errors.ts';
import { openDatabase } from '../../ts/db/database.ts';
import { postMap, request } from '../helpers/http.ts';
import { MCD, assertError, childWithKey, lastLines, stillServing } from '../helpers/location-map.ts';
import { holdSlot, open, waitForPool } from '../helpers/pool.ts';

/** The request time limit of the pool test's server: far longer than its steps take. */
const TIME_LIMIT_MS = 6_000;

test('routing errors: unknown paths 404 NOT_FOUND, other methods 405 METHOD_NOT_ALLOWED, as JSON, and the server survives them', async (t) => {
  const cases: [string, string, number, keyof typeof ERRORS][][] = [
    [
      ['GET', '/api/v1/nope', 404, 'NOT_FOUND'],
      ['POST', '/api/v1/location-maps', 404, 'NOT_FOUND'],
      ['GET', '/favicon.ico', 404, 'NOT_FOUND'],
      ['POST', '/api/v1/__test/panic', 404, 'NOT_FOUND'], // no test hooks without STOREMAP_TEST_HOOKS=1
    ],
    [
      ['GET', '/api/v1/location-map', 405, 'METHOD_NOT_ALLOWED'],
      ['PUT', '/api/v1/location-map', 405, 'METHOD_NOT_ALLOWED'],
      ['DELETE', '/api/v1/location-map', 405, 'METHOD_NOT_ALLOWED'],
    ],
  ];
  // Two servers side by side, one per kind, so one crash does not hide the other kind.
  await Promise.all(
    cases.map(async (group) => {
      const { srv, key, dbPath } = await childWithKey(t);
      for (const [method, p, status, code] of group) {
        const res = await request(srv.base, { method, path: p, headers: { 'x-api-key': key } });
        const body = assertError(t, res, status, code);
        t.deepEqual(Object.keys(body).sort(), ['code', 'error'], `${method} ${p}`);
        t.is(res.header('content-type'), 'application/json; charset=utf-8', `${method} ${p}: as every other error`);
        t.is(res.header('content-length'), String(res.raw.length), `${method} ${p}: its length`);
        const up = await stillServing(srv);
        t.true(up, `the server process died after ${method} ${p} (${srv.alive() ? 'not answering, still exiting' : `exit ${JSON.stringify(await srv.exited)}`}):\n${lastLines(srv.output())}`);
        if (!up) return;
      }
      const res = await postMap(srv.base, key, { brand: MCD });
      t.is(res.status, 200);
      const db = openDatabase(dbPath);
      t.is((db.prepare("SELECT COUNT(*) AS n FROM usage WHERE status IN (404, 405)").get() as { n: number }).n, 0, 'routing errors write no usage');
      db.close();
    }),
  );
});

test('the native pool: with 1 running and 1 waiting, a third concurrent call gets 503 SERVICE_BUSY, and the server lives on', async (t) => {
  const { srv, key } = await childWithKey(t, {
    STOREMAP_TEST_HOOKS: '1',
    STOREMAP_NATIVE_CONCURRENCY: '1',
    STOREMAP_NATIVE_QUEUE: '1',
    STOREMAP_REQUEST_TIMEOUT_MS: String(TIME_LIMIT_MS),
  });
  // Slow tasks that hold the pool until the test opens their gate, and the pool's state read
  // from the server: no step depends on how fast a loaded machine is.
  const first = holdSlot(srv, 'cp-first');
  await waitForPool(srv, (d) => d.running === 1 && d.waiting === 0);
  const second = holdSlot(srv, 'cp-second');
  await waitForPool(srv, (d) => d.running === 1 && d.waiting === 1);
  assertError(t, await holdSlot(srv, 'cp-third'), 503, 'SERVICE_BUSY');
  await open(srv, 'cp-first');
  await waitForPool(srv, (d) => d.running === 1 && d.waiting === 0); // the second took the slot
  await open(srv, 'cp-second');
  t.is((await first).status, 200);
  t.is((await second).status, 200);
  // The refused call must leave nothing behind: once its time limit has passed too, the
  // server still answers.
  await new Promise((r) => setTimeout(r, TIME_LIMIT_MS + 200));
  t.true(await stillServing(srv), `the server process died after the refused call:\n${lastLines(srv.output())}`);
  if (srv.alive()) t.is((await postMap(srv.base, key, { brand: MCD })).status, 200);
});
