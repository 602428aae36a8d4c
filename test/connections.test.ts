// Connection-level limits on a real server process: 64 clients that read their large answers
// slowly keep what the server holds bounded (and it answers everyone else meanwhile);
// a silent connection is closed after STOREMAP_IDLE_TIMEOUT_MS; connections past
// STOREMAP_MAX_CONNECTIONS are refused.
import test from 'ava';
import net from 'node:net';
import path from 'node:path';
import { openDatabase } from '../ts/db/database.ts';
import { KeyStore } from '../ts/services/keys.ts';
import { snapshotDir, startServe } from './helpers/child.ts';
import { startServer } from './helpers/server.ts';
import { SqliteLedger } from '../ts/db/sqlite-ledger.ts';

/** A raw HTTP request on its own socket; resolves when the first bytes of the answer arrive,
 * then reads nothing more until `drain` is called. */
function slowClient(port: number, body: string, key: string): Promise<{ first: Buffer; drain: () => Promise<number> }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.on('error', reject);
    // Counted and awaited from the start: a short answer (a 503) comes whole with the server's
    // FIN in the first read, and the socket may end and close before `drain` is called.
    let n = 0;
    const closed = new Promise<number>((done) => socket.once('close', () => done(n)));
    socket.on('data', (d: Buffer) => {
      n += d.length;
      if (n !== d.length) return;
      socket.pause();
      resolve({
        first: d,
        drain: () => {
          socket.resume();
          return closed;
        },
      });
    });
    socket.write(
      `POST /api/v1/location-map HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nx-api-key: ${key}\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  });
}

async function setup(t: import('ava').ExecutionContext, env: Record<string, string> = {}) {
  const dataDir = await snapshotDir(t);
  const dbPath = path.join(dataDir, 'conn.db');
  const db = openDatabase(dbPath);
  const { key } = await new KeyStore(new SqliteLedger(db)).create({ plan: 'enterprise', credits: 1_000_000 });
  db.close();
  const server = await startServe(t, { dataDir, dbPath, env: { STOREMAP_RATE_LIMIT: '1000000', STOREMAP_RATE_BURST: '1000000', ...env } });
  return { server, key, port: Number(new URL(server.base).port) };
}

test('64 slow readers of large answers: the memory the server keeps alive stays bounded and other clients are served meanwhile', async (t) => {
  const budget = 8 * 2 ** 20;
  const { server, key, port } = await setup(t, { STOREMAP_MAX_PENDING_RESPONSE_BYTES: String(budget), STOREMAP_TEST_HOOKS: '1' });
  /** What the server keeps alive: its memory after a full collection. */
  const memory = async () => (await (await fetch(`${server.base}/api/v1/__test/memory`)).json()) as { external: number; heapUsed: number; rss: number; pending_response_bytes: number };
  // The largest answer the test data has: five companies' storefronts with provenance.
  const body = JSON.stringify({ tickers: ['3382.T', 'SHEL', 'MCD', 'CHPT', 'SBUX'], format: 'geojson', include_provenance: true });
  const probe = await fetch(`${server.base}/api/v1/location-map`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body });
  const size = (await probe.arrayBuffer()).byteLength;
  t.true(size > 1_000_000, `a ${size}-byte answer`);
  // Warmed up first: 64 of the same answers read at once, so the baseline holds what a busy
  // server keeps (caches, pools), not the start's.
  for (let round = 0; round < 2; round++) {
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        const r = await fetch(`${server.base}/api/v1/location-map`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body });
        await r.arrayBuffer();
      }),
    );
  }
  const before = await memory();

  const clients = await Promise.all(Array.from({ length: 64 }, () => slowClient(port, body, key)));
  const statuses = clients.map((c) => Number(/^HTTP\/1\.1 (\d+)/.exec(c.first.toString('latin1'))![1]));
  const during = await memory();
  // Served meanwhile: the health check and a small request.
  t.is((await fetch(`${server.base}/healthz`)).status, 200);
  const small = await fetch(`${server.base}/api/v1/location-map`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify({ brand: 'Tesla', format: 'csv' }) });
  t.true([200, 503].includes(small.status));
  await small.arrayBuffer();

  const mib = (n: number) => Math.round(n / 2 ** 20);
  const growth = during.external + during.heapUsed - (before.external + before.heapUsed);
  t.log(
    `64 x ${size} bytes = ${mib(64 * size)} MiB of answers; kept alive: ${mib(growth)} MiB more (buffers ${mib(before.external)} -> ${mib(during.external)} MiB, heap ${mib(before.heapUsed)} -> ${mib(during.heapUsed)} MiB; RSS ${mib(before.rss)} -> ${mib(during.rss)} MiB); ${mib(during.pending_response_bytes)} MiB counted unsent; statuses ${JSON.stringify(countBy(statuses))}`,
  );
  // Unbounded, the bodies alone would be 64 x size; the server keeps at most the budget of
  // unsent bytes beyond what the kernel's socket buffers took (on loopback a send buffer grows
  // to 4 MiB and takes whole answers), plus working memory. Measured after a full collection:
  // resident memory also holds answers already sent and not yet collected, and what the
  // allocator keeps, neither of which the budget is about (and which made a bound on it hold or
  // fail with the garbage collector's timing).
  // The budget, and at most twice a key's running slots' answers past it (half of the pool's 8).
  const held = budget + 2 * 4 * size;
  t.true(during.pending_response_bytes <= held, `${during.pending_response_bytes} bytes counted unsent`);
  t.true(growth < held + 16 * 2 ** 20, `the server keeps ${growth} bytes more alive for ${64 * size} bytes of answers`);
  t.true(statuses.every((s) => s === 200 || s === 503), JSON.stringify(countBy(statuses)));

  // Once the readers read, every 200 arrives whole.
  const read = await Promise.all(clients.map((c) => c.drain()));
  read.forEach((n, i) => statuses[i] === 200 && t.true(n > size, `client ${i} read ${n} bytes`));
});

function countBy(xs: number[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const x of xs) out[x] = (out[x] ?? 0) + 1;
  return out;
}

test('a silent connection is closed after STOREMAP_IDLE_TIMEOUT_MS; connections past STOREMAP_MAX_CONNECTIONS are refused', async (t) => {
  // In this process: no start-up health checks hold a pooled connection of their own.
  const server = await startServer(t, { env: { STOREMAP_IDLE_TIMEOUT_MS: '300', STOREMAP_MAX_CONNECTIONS: '2', STOREMAP_KEEP_ALIVE_TIMEOUT_MS: '60000' } });
  const port = Number(new URL(server.base).port);
  const open = () =>
    new Promise<net.Socket>((resolve, reject) => {
      const s = net.connect(port, '127.0.0.1', () => resolve(s));
      s.once('error', reject);
    });
  /** Resolves when the server ends the connection (a reset counts). */
  const closed = (s: net.Socket) =>
    new Promise<void>((resolve) => {
      s.on('error', () => {});
      if (s.destroyed) resolve();
      else s.once('close', () => resolve());
    });
  /** One keep-alive request on `s`: the status line, or null when the server ends the
   * connection instead of answering. */
  const ask = (s: net.Socket) =>
    new Promise<string | null>((resolve) => {
      s.once('data', (d: Buffer) => resolve(d.toString('latin1').split('\r\n')[0]!));
      void closed(s).then(() => resolve(null));
      s.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    });
  // A client that connects and says nothing is closed by the server (the test waits for it).
  const silent = await open();
  await closed(silent);
  /** A connection the server has accepted and answered on (retried while the server still
   * counts the silent one it closed). */
  const accepted = async () => {
    for (let i = 0; i < 300; i++) {
      const s = await open();
      if ((await ask(s)) === 'HTTP/1.1 200 OK') return s;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('no connection was accepted');
  };
  // Two connections, answered and kept alive; a third is ended without an answer.
  const [a, b] = [await accepted(), await accepted()];
  const c = await open();
  let answered = false;
  c.on('data', () => (answered = true));
  const ended = closed(c);
  c.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  await ended;
  t.false(answered, 'the third connection got no answer');
  t.false(a.destroyed || b.destroyed, 'the two accepted connections are still open');
  a.destroy();
  b.destroy();
});
