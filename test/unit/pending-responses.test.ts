// The unsent-bytes ledger on a real HTTP server on loopback: an answer's bytes come back when
// its client goes, however it goes, so that neither a key's share nor the server's budget is
// held by sockets that are gone; and work that waited in the native pool while its key's share
// filled is refused as it starts.
import test from 'ava';
import http from 'node:http';
import net from 'node:net';
import type { Response } from 'restify';
import type { ApiError } from '../../ts/api/errors.ts';
import { runNative, type WorkContext } from '../../ts/http/charged.ts';
import type { ApiDeps } from '../../ts/http/context.ts';
import { PendingResponses } from '../../ts/http/pending-responses.ts';
import { Cancel, NativePool } from '../../ts/services/native-pool.ts';

async function serve(t: import('ava').ExecutionContext, handler: http.RequestListener): Promise<number> {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return (server.address() as net.AddressInfo).port;
}

/** Waits until `ok` holds, for at most `ms` (the bytes come back on an event, not at once). */
async function until(ms: number, ok: () => boolean): Promise<boolean> {
  const end = Date.now() + ms;
  while (!ok() && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
  return ok();
}

test('an answer whose client left while it was being made gives its bytes back at once', async (t) => {
  const pending = new PendingResponses({ limit: 10_000, keyShare: 0.5, graceMs: 0, minBytesPerS: 1 });
  let got!: () => void;
  const received = new Promise<void>((r) => (got = r));
  let tracked!: () => void;
  const done = new Promise<void>((r) => (tracked = r));
  const port = await serve(t, (req, res) => {
    got();
    // The work ends after the client has gone: both 'close' events are past.
    req.socket.once('close', () => {
      pending.track(res as unknown as Response, 4_000, 'k');
      tracked();
    });
  });
  const client = net.connect(port, '127.0.0.1', () => client.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
  await received;
  client.destroy();
  await done;
  t.is(pending.bytes, 0);
  t.notThrows(() => {
    for (let i = 0; i < 3; i++) pending.admit('k');
  });
});

test('pipelined answers on a reader that stops reading come back when it is cut off, the queued ones too', async (t) => {
  // Cut off 50 ms after an answer is handed over, whatever its size.
  const pending = new PendingResponses({ limit: 64 * 2 ** 20, keyShare: 0.5, graceMs: 50, minBytesPerS: 2 ** 40 });
  const body = Buffer.alloc(4 * 2 ** 20, 'x');
  let answered = 0;
  const port = await serve(t, (_req, res) => {
    pending.track(res as unknown as Response, body.length, 'k');
    answered++;
    res.end(body);
  });
  const client = new net.Socket();
  client.setNoDelay(true);
  await new Promise<void>((r) => client.connect(port, '127.0.0.1', r));
  t.teardown(() => client.destroy());
  client.pause();
  // Four requests in one write; the client never reads an answer.
  client.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(4));
  t.true(await until(5_000, () => answered >= 1), 'the first answer was made');
  t.true(await until(5_000, () => pending.stalled >= 1), 'the reader was cut off');
  t.true(await until(5_000, () => pending.bytes === 0), `${pending.bytes} bytes still counted after the cut`);
});

test("work queued before a key's share filled is refused as it starts, not made and held", async (t) => {
  // One slot per key; the key's share of the budget is 500 bytes.
  const pending = new PendingResponses({ limit: 1_000, keyShare: 0.5, graceMs: 0, minBytesPerS: 1 });
  const pool = new NativePool(2, 16, 0.5);
  const deps = { pending, pool } as unknown as ApiDeps;
  const ctx = { key: { id: 'k' }, cancel: new Cancel(), deadline: performance.now() + 60_000 } as unknown as WorkContext;
  // The key's slot held by work the test releases; a second request arrives while the share is
  // empty, so it passes the check at arrival and waits for the slot.
  let release!: () => void;
  const first = runNative(deps, ctx, () => new Promise<string>((r) => (release = () => r('first'))));
  let ran = false;
  const second = runNative(deps, ctx, async () => {
    ran = true;
    return 'second';
  });
  t.deepEqual(pool.depth, { running: 1, waiting: 1 });
  // Meanwhile an earlier answer of the key's, 600 bytes, waits for a client that does not read:
  // the share is full.
  let answer!: http.ServerResponse;
  const port = await serve(t, (_req, res) => {
    answer = res;
    pending.track(res as unknown as Response, 600, 'k');
    res.writeHead(200);
    res.flushHeaders();
  });
  const client = net.connect(port, '127.0.0.1', () => client.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
  t.teardown(() => client.destroy());
  t.true(await until(5_000, () => pending.bytes === 600));
  release();
  t.is(await first, 'first');
  const refused = await t.throwsAsync(second);
  t.is((refused as ApiError).code, 'SERVICE_BUSY');
  t.false(ran, 'the queued work never ran');
  // Another key is admitted: only this key's share is full.
  t.is(await runNative(deps, { ...ctx, key: { id: 'other' } } as unknown as WorkContext, async () => 'other'), 'other');
  answer.end();
  t.true(await until(5_000, () => pending.bytes === 0));
});
