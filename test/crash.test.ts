// A server killed with SIGKILL in the middle of charged load, then started again on the same
// database file: the ledger is exact. Every credit taken has its usage row, every answered
// request has its row, no row is half written, and the rollups agree with the rows.
import test from 'ava';
import path from 'node:path';
import { openDatabase } from '../ts/db/database.ts';
import { KeyStore } from '../ts/services/keys.ts';
import { snapshotDir, startServe } from './helpers/child.ts';
import { SqliteLedger } from '../ts/db/sqlite-ledger.ts';

const NO_RATE_LIMIT = { STOREMAP_RATE_LIMIT: '1000000', STOREMAP_RATE_BURST: '1000000' };
const BODIES = [
  { brand: 'Starbucks', format: 'json' },
  { brand: 'Tesla', format: 'csv' },
  { brand: "McDonald's", format: 'geojson', country: 'US' },
];

test('kill -9 under charged load, restart: balance + charges = top-ups, one usage row per answered request', async (t) => {
  const dataDir = await snapshotDir(t);
  const dbPath = path.join(dataDir, 'crash.db');
  const initial = 1_000_000;
  const setup = openDatabase(dbPath);
  const { key, record } = await new KeyStore(new SqliteLedger(setup)).create({ plan: 'enterprise', credits: initial, name: 'crash' });
  setup.close();

  const server = await startServe(t, { dataDir, dbPath, env: NO_RATE_LIMIT });
  const answered: number[] = []; // X-Credits-Charged of every 200 the client received
  let sent = 0;
  let failed = 0;
  let killed = false;
  // Eight clients in a loop until the kill; the kill comes after 300 answers, with requests in
  // flight on every client.
  const client = async (c: number) => {
    for (let i = 0; !killed && i < 10_000; i++) {
      sent++;
      try {
        const res = await fetch(`${server.base}/api/v1/location-map`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': key },
          body: JSON.stringify(BODIES[(c + i) % BODIES.length]),
        });
        await res.arrayBuffer();
        if (res.status === 200) answered.push(Number(res.headers.get('x-credits-charged')));
        else failed++;
      } catch {
        failed++; // cut off by the kill
      }
      if (answered.length >= 300 && !killed) {
        killed = true;
        server.child.kill('SIGKILL');
      }
    }
  };
  await Promise.all(Array.from({ length: 8 }, (_, c) => client(c)));
  const exit = await server.exited;
  t.is(exit.signal, 'SIGKILL');
  t.true(answered.length >= 300);

  // Started again on the same file: it opens, migrates nothing, serves.
  const again = await startServe(t, { dataDir, dbPath, env: NO_RATE_LIMIT });
  const res = await fetch(`${again.base}/api/v1/location-map`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify(BODIES[0]) });
  t.is(res.status, 200);
  const after = Number(res.headers.get('x-credits-charged'));
  await again.stop();

  const db = openDatabase(dbPath);
  t.teardown(() => db.close());
  t.is((db.prepare('PRAGMA integrity_check').get() as { integrity_check: string }).integrity_check, 'ok');
  const balance = (db.prepare('SELECT credits FROM api_keys WHERE id = ?').get(record.id) as { credits: number }).credits;
  const rows = db.prepare('SELECT status, credits, requests FROM usage WHERE key_id = ?').all(record.id) as { status: number; credits: number; requests: number }[];
  const charged = rows.reduce((s, r) => s + r.credits, 0);
  // Exact: every credit that left the balance is on a usage row, and no more.
  t.is(balance + charged, initial);
  // Every answer the clients got is recorded; a request charged as the process died may have
  // its row without its client having read the answer, never the other way round.
  const ok = rows.filter((r) => r.status === 200);
  t.true(ok.length >= answered.length + 1, `${ok.length} rows of 200, ${answered.length + 1} answers received`);
  t.true(rows.length <= sent + 1, `${rows.length} rows for ${sent + 1} requests sent`);
  // Each charged row took what its answer said such a request costs.
  const costs = new Set([...answered, after]);
  t.true(ok.every((r) => costs.has(r.credits)), `row charges ${[...new Set(ok.map((r) => r.credits))]} against answered ${[...costs]}`);
  // The rollups, kept by a trigger in the same transactions, agree with the rows.
  const rollup = db.prepare('SELECT SUM(requests) AS n, SUM(credits) AS c FROM usage_daily WHERE key_id = ?').get(record.id) as { n: number; c: number };
  t.deepEqual(rollup, { n: rows.reduce((s, r) => s + r.requests, 0), c: charged });
  t.log(`${sent} sent, ${answered.length} answered before the kill, ${failed} cut off; ${rows.length} usage rows, ${charged} credits`);
});
