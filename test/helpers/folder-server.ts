// A real server on 127.0.0.1 over a data folder a test built (its snapshot, and its history for
// the change feed and the store-count history), with a fresh SQLite ledger and one key.
import type { ExecutionContext } from 'ava';
import path from 'node:path';
import { loadConfig } from '../../ts/config.ts';
import { openDatabase } from '../../ts/db/database.ts';
import { SqliteLedger } from '../../ts/db/sqlite-ledger.ts';
import { loadStoreSync, SNAPSHOT_FILE } from '../../ts/native.ts';
import { closeServer, createServer, listen } from '../../ts/server.ts';
import { KeyStore } from '../../ts/services/keys.ts';
import { StoreHolder } from '../../ts/store-holder.ts';
import { tempDataDir } from './cli.ts';
import { NO_RATE_LIMIT } from './location-map.ts';

export interface FolderServer {
  base: string;
  keys: KeyStore;
  /** An enterprise key's secret and id. */
  key: string;
  keyId: string;
}

export async function serveFolder(t: ExecutionContext, dir: string, credits: number, name: string): Promise<FolderServer> {
  const dbPath = path.join(await tempDataDir(t), 'storemap.db');
  const config = loadConfig({ ...process.env, ...NO_RATE_LIMIT, STOREMAP_DATA_DIR: dir, STOREMAP_DB: dbPath, PORT: '0' });
  const db = openDatabase(dbPath);
  const store = new StoreHolder(loadStoreSync(path.join(dir, SNAPSHOT_FILE)));
  const server = createServer({ config, store, db, log: () => {} });
  const base = await listen(server, '127.0.0.1', 0);
  t.teardown(async () => {
    await closeServer(server);
    db.close();
  });
  const keys = new KeyStore(new SqliteLedger(db));
  const k = await keys.create({ plan: 'enterprise', credits, name });
  return { base, keys, key: k.key, keyId: k.record.id };
}
