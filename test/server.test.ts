// The HTTP service on a real socket (127.0.0.1, a free port): /healthz over the test dataset,
// a snapshot swap through StoreHolder.reload without a restart, and config validation.
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../ts/config.ts';
import { pgLedgerOptions } from '../ts/db/pg-ledger.ts';
import { openDatabase } from '../ts/db/database.ts';
import { query } from '../ts/native.ts';
import { createServer, listen } from '../ts/server.ts';
import { StoreHolder } from '../ts/store-holder.ts';
import { importFixtures, tempDataDir } from './helpers/cli.ts';
import { testDataDir, testStore } from './helpers/dataset.ts';

interface Health {
  status: string;
  snapshot_version: string;
  rows: number;
  synthetic: boolean;
}

async function getHealth(base: string): Promise<{ status: number; type: string | null; body: Health }> {
  const res = await fetch(`${base}/healthz`, { headers: { connection: 'close' } });
  return { status: res.status, type: res.headers.get('content-type'), body: (await res.json()) as Health };
}

test('/healthz reports the loaded snapshot, and follows StoreHolder.reload without a restart', async (t) => {
  const config = loadConfig({ ...process.env, STOREMAP_DATA_DIR: testDataDir(), PORT: '0' });
  t.is(config.port, 0);
  const first = testStore();
  const holder = new StoreHolder(first);
  const dbDir = mkdtempSync(path.join(os.tmpdir(), 'storemap-db-'));
  const db = openDatabase(path.join(dbDir, 'storemap.db'));
  t.teardown(() => {
    db.close();
    rmSync(dbDir, { recursive: true, force: true });
  });
  const server = createServer({ config, store: holder, db, log: () => {} });
  const base = await listen(server, '127.0.0.1', config.port);
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  t.regex(base, /^http:\/\/127\.0\.0\.1:\d+$/);
  t.not(base, 'http://127.0.0.1:0');

  const info1 = first.info();
  const h1 = await getHealth(base);
  t.is(h1.status, 200);
  t.regex(h1.type ?? '', /application\/json/);
  t.is(h1.body.status, 'ok');
  t.is(h1.body.snapshot_version, info1.snapshot_version);
  t.is(h1.body.rows, info1.rows);
  t.is(h1.body.synthetic, info1.synthetic);

  // A second snapshot: the fixture scene, imported with the CLI.
  const dir = await tempDataDir(t, { reference: true });
  const next = await holder.reload(await importFixtures(dir));
  t.is(holder.current, next);
  const info2 = next.info();
  t.not(info2.snapshot_version, info1.snapshot_version);

  const h2 = await getHealth(base);
  t.is(h2.status, 200);
  t.is(h2.body.snapshot_version, info2.snapshot_version);
  t.is(h2.body.rows, info2.rows);
  t.is(h2.body.synthetic, info2.synthetic);
  t.not(h2.body.rows, h1.body.rows);

  // The replaced Store stays valid for whoever still holds it.
  const old = await query(first, { brands: [0], format: 'json', verifiedOnly: true });
  t.is(old.count, first.brand(0)!.locationCount);
});

test('loadConfig rejects PORT=70000, naming the variable', (t) => {
  const err = t.throws(() => loadConfig({ STOREMAP_DATA_DIR: testDataDir(), PORT: '70000' }));
  t.regex(err?.message ?? '', /\bPORT\b/);
  t.is(loadConfig({ STOREMAP_DATA_DIR: testDataDir(), PORT: '65535' }).port, 65535);
});

test('loadConfig: STOREMAP_LEDGER_LINGER_MS is off by default, taken up to a second, refused past it or when not a whole number, naming the variable', (t) => {
  const env = { STOREMAP_DATA_DIR: testDataDir() };
  t.is(loadConfig(env).ledgerLingerMs, 0);
  t.is(loadConfig({ ...env, STOREMAP_LEDGER_LINGER_MS: '15' }).ledgerLingerMs, 15);
  t.is(loadConfig({ ...env, STOREMAP_LEDGER_LINGER_MS: '1000' }).ledgerLingerMs, 1000);
  for (const bad of ['1001', '-1', '2.5', 'soon']) t.regex(t.throws(() => loadConfig({ ...env, STOREMAP_LEDGER_LINGER_MS: bad }))?.message ?? '', /STOREMAP_LEDGER_LINGER_MS/, bad);
  // Not as long as a request may run: its held charge would be dropped at the deadline.
  t.regex(t.throws(() => loadConfig({ ...env, STOREMAP_LEDGER_LINGER_MS: '500', STOREMAP_REQUEST_TIMEOUT_MS: '500' }))?.message ?? '', /STOREMAP_LEDGER_LINGER_MS.*STOREMAP_REQUEST_TIMEOUT_MS/);
  // What a node's PostgreSQL ledger is given (storemap serve and the test servers build it so).
  t.is(pgLedgerOptions(loadConfig({ ...env, STOREMAP_LEDGER_LINGER_MS: '15' })).lingerMs, 15);
});

test('loadConfig rejects STOREMAP_DISABLED_SOURCES=foo, naming the variable', (t) => {
  const err = t.throws(() => loadConfig({ STOREMAP_DATA_DIR: testDataDir(), STOREMAP_DISABLED_SOURCES: 'foo' }));
  t.regex(err?.message ?? '', /STOREMAP_DISABLED_SOURCES/);
  t.deepEqual(loadConfig({ STOREMAP_DATA_DIR: testDataDir(), STOREMAP_DISABLED_SOURCES: 'osm, atp' }).disabledSources, ['osm', 'atp']);
});
