// `storemap db migrate --to postgres://…` on a real SQLite ledger of 100,000 usage rows and a
// throwaway PostgreSQL: everything arrives (keys and balances, raw rows, rollups that outlived
// their pruned raw rows, brand stamps), the same usage report comes out of both, the copied keys
// authenticate, and a second run into the now non-empty ledger is refused.
import { execFile } from 'node:child_process';
import net from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import { openDatabase } from '../ts/db/database.ts';
import { openPostgres } from '../ts/db/postgres.ts';
import { PgLedger } from '../ts/db/pg-ledger.ts';
import { SqliteLedger } from '../ts/db/sqlite-ledger.ts';
import { KeyStore } from '../ts/services/keys.ts';
import { UsageReports } from '../ts/services/usage.ts';
import { DAY_MS } from '../ts/time.ts';
import { CLI } from './helpers/cli.ts';
import { startPostgres } from './helpers/postgres.ts';

const run = promisify(execFile);

test('db migrate copies 100,000 usage rows, keys, rollups and stamps into PostgreSQL, checked; the same reports come out; a second run is refused', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'storemap-migrate-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'storemap.db');
  const db = openDatabase(file);
  const sqlite = new SqliteLedger(db);
  const keys = new KeyStore(sqlite, () => 0);
  const a = await keys.create({ plan: 'enterprise', credits: 5_000, name: 'a' });
  const b = await keys.create({ plan: 'trial' });
  const c = await keys.create({ plan: 'standard', credits: 7 });
  await keys.revoke(c.record.id);
  await keys.topUp(b.record.id, 25);
  // 100,000 rows over 400 days for two keys, with statuses, formats, credits and batched refusals.
  const day0 = 20_000;
  const insert = db.prepare('INSERT INTO usage (key_id, at, endpoint, status, format, credits, requests) VALUES (?, ?, ?, ?, ?, ?, ?)');
  const statuses = [200, 200, 200, 402, 404, 429, null];
  const formats = ['json', 'png', 'csv', null];
  db.transaction(() => {
    for (let i = 0; i < 100_000; i++) {
      const status = statuses[i % statuses.length];
      insert.run(i % 3 === 0 ? b.record.id : a.record.id, (day0 + (i % 400)) * DAY_MS + (i % 86_000) * 1_000, '/api/v1/location-map', status, formats[i % 4], status === 200 ? 1 + (i % 8) : 0, status === 429 ? 5 : 1);
    }
  })();
  // Raw rows of the first 30 days pruned, as the server does after a year: their rollups stay.
  db.prepare('DELETE FROM usage WHERE at < ?').run((day0 + 30) * DAY_MS);
  const stamp = db.prepare('INSERT INTO brand_summary (brand, ticker, location_count, snapshot_version, refreshed_at) VALUES (?, ?, ?, ?, ?)');
  for (let i = 0; i < 50; i++) stamp.run(`Brand ${i}`, i % 5 === 0 ? `T${i}` : null, 10 + i, 'v7', 1_000_000 + i);
  const expected = db
    .prepare(
      `SELECT (SELECT count(*) FROM api_keys) AS keys, (SELECT sum(credits) FROM api_keys) AS credits, (SELECT count(*) FROM usage) AS rows,
              (SELECT sum(requests) FROM usage) AS requests, (SELECT sum(credits) FROM usage) AS charged, (SELECT count(*) FROM usage_daily) AS daily,
              (SELECT sum(requests) FROM usage_daily) AS daily_requests, (SELECT count(*) FROM brand_summary) AS stamps`,
    )
    .get() as Record<string, number>;
  t.true(expected.daily_requests > expected.requests, 'the rollups hold days whose raw rows were pruned');

  const pg = await startPostgres(t);
  const env = { ...process.env, STOREMAP_DB: file, STOREMAP_DATA_DIR: dir };
  const first = await run(process.execPath, [CLI, 'db', 'migrate', '--to', pg.url], { env });
  t.regex(first.stdout, /both ledgers agree/);

  const pool = await openPostgres(pg.url, { poolSize: 4 });
  t.teardown(() => pool.end());
  const got = (
    await pool.query(
      `SELECT (SELECT count(*) FROM api_keys) AS keys, (SELECT sum(credits) FROM api_keys) AS credits, (SELECT count(*) FROM usage) AS rows,
              (SELECT sum(requests) FROM usage) AS requests, (SELECT sum(credits) FROM usage) AS charged, (SELECT count(*) FROM usage_daily) AS daily,
              (SELECT sum(requests) FROM usage_daily) AS daily_requests, (SELECT count(*) FROM brand_summary) AS stamps`,
    )
  ).rows[0] as Record<string, string>;
  t.deepEqual(Object.fromEntries(Object.entries(got).map(([k, v]) => [k, Number(v)])), expected);

  // The same report, over a window with pruned days, whole days and partial days, from both.
  const pgLedger = new PgLedger(pool);
  const from = (day0 + 10) * DAY_MS + 3_600_000;
  const to = (day0 + 370) * DAY_MS + 7_200_000;
  for (const id of [a.record.id, b.record.id]) {
    t.deepEqual(await new UsageReports(pgLedger).report(id, from, to), await new UsageReports(sqlite).report(id, from, to), id);
  }
  // The copied keys authenticate with their balances and states; new usage rows get new ids.
  const pgKeys = new KeyStore(pgLedger);
  t.like(await pgKeys.authenticate(a.key), { id: a.record.id, credits: 5_000, plan: 'enterprise' });
  t.like(await pgKeys.authenticate(b.key), { id: b.record.id, credits: 75 });
  t.is(await pgKeys.authenticate(c.key), null, 'revoked stays revoked');
  await pgLedger.record(a.record.id, { endpoint: '/api/v1/location-map', status: 200, format: 'json' }, Date.now());
  t.is(Number((await pool.query('SELECT count(*) AS n FROM usage')).rows[0].n), expected.rows + 1);

  const second = await t.throwsAsync(run(process.execPath, [CLI, 'db', 'migrate', '--to', pg.url], { env }));
  t.regex(String((second as { stderr?: string })?.stderr), /not empty/);
  db.close();
});

test('db migrate to an address that accepts and never answers gives up after STOREMAP_DATABASE_CONNECT_TIMEOUT_MS, naming --to without its password; a refused one says it is --to', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'storemap-migrate-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'storemap.db');
  await new KeyStore(new SqliteLedger(openDatabase(file)), () => 0).create({ plan: 'trial' });
  // Accepts, reads, never writes: a PostgreSQL behind a dead proxy.
  const sockets = new Set<net.Socket>();
  const silent = net.createServer((s) => void sockets.add(s.on('error', () => {})));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    if (silent.listening) silent.close();
  });
  const { port } = silent.address() as net.AddressInfo;
  const env = { ...process.env, STOREMAP_DB: file, STOREMAP_DATA_DIR: dir, STOREMAP_DATABASE_CONNECT_TIMEOUT_MS: '300' };
  const hung = await t.throwsAsync(run(process.execPath, [CLI, 'db', 'migrate', '--to', `postgres://admin:S3cr3tPW@127.0.0.1:${port}/ledger`], { env, timeout: 60_000 }));
  const stderr = String((hung as unknown as { stderr: string }).stderr);
  t.is((hung as unknown as { code: number }).code, 1, stderr);
  t.regex(stderr, new RegExp(`the PostgreSQL ledger at postgres://admin:\\*\\*\\*@127\\.0\\.0\\.1:${port}/ledger \\(--to\\): no answer from PostgreSQL within 0\\.3 s`));
  t.false(stderr.includes('S3cr3tPW'));
  t.true(sockets.size > 0, 'the command did connect');
  // Nothing listens on the port any more.
  silent.close();
  for (const s of sockets) s.destroy();
  await new Promise((resolve) => setImmediate(resolve));
  const refused = await t.throwsAsync(run(process.execPath, [CLI, 'db', 'migrate', '--to', `postgres://admin:S3cr3tPW@127.0.0.1:${port}/ledger`], { env, timeout: 60_000 }));
  const why = String((refused as unknown as { stderr: string }).stderr);
  t.regex(why, /\(--to\): connect ECONNREFUSED/);
  t.false(why.includes('S3cr3tPW'));
});
