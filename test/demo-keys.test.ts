// `storemap serve` makes demo keys only for the demo: on the synthetic default dataset, once,
// into a file only its owner can read; a server of imported data makes none.
import test from 'ava';
import { cp } from 'node:fs/promises';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { DEMO_KEYS_FILE } from '../ts/paths.ts';
import { startServe, snapshotDir } from './helpers/child.ts';
import { importFixtures, tempDataDir } from './helpers/cli.ts';
import { testDataDir } from './helpers/dataset.ts';

const KEY = /sm_live_[0-9a-f]{24}/g;

test.serial('the synthetic default: two demo keys, printed once and kept in a 0600 file', async (t) => {
  const dataDir = await snapshotDir(t);
  await cp(path.join(testDataDir(), 'reference'), path.join(dataDir, 'reference'), { recursive: true });
  const dbPath = path.join(dataDir, 'storemap.db');
  const first = await startServe(t, { dataDir, dbPath });
  const printed = first.output().match(KEY) ?? [];
  t.is(printed.length, 2, first.output());
  const file = path.join(dataDir, DEMO_KEYS_FILE);
  t.is(statSync(file).mode & 0o777, 0o600);
  t.deepEqual(readFileSync(file, 'utf8').match(KEY), printed);
  for (const key of printed) {
    const res = await fetch(`${first.base}/api/v1/usage`, { headers: { 'x-api-key': key } });
    t.is(res.status, 200, 'the printed key works');
  }
  await first.stop();
  // A second start on the same database prints nothing new.
  const second = await startServe(t, { dataDir, dbPath });
  t.deepEqual(second.output().match(KEY), null);
  await second.stop();
});

test.serial('an imported dataset: no keys made, no file, a hint to create one', async (t) => {
  const dataDir = await tempDataDir(t, { reference: true });
  await importFixtures(dataDir);
  const s = await startServe(t, { dataDir, dbPath: path.join(dataDir, 'storemap.db') });
  t.deepEqual(s.output().match(KEY), null, s.output());
  t.regex(s.output(), /storemap keys create/);
  t.false(existsSync(path.join(dataDir, DEMO_KEYS_FILE)));
  await s.stop();
});
