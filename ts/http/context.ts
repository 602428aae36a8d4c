// What every route and HTTP step gets: the services built once per server by createServer.
// Its own module, so routes and steps need not import the server that mounts them.
import type { BlockList } from 'node:net';
import type { Config } from '../config.ts';
import type { LedgerOps } from '../db/ledger.ts';
import type { Renderer } from '../native.ts';
import type { Billing } from '../services/billing.ts';
import type { ImageCache } from '../services/image-cache.ts';
import type { KeyStore } from '../services/keys.ts';
import type { NativePool } from '../services/native-pool.ts';
import type { PendingResponses } from './pending-responses.ts';
import type { Subdivisions } from '../services/subdivisions.ts';
import type { UsageReports } from '../services/usage.ts';
import type { StoreHolder } from '../store-holder.ts';
import type { KeyLimiter, RateLimiter } from './rate-limit.ts';

export interface ApiDeps {
  config: Config;
  store: StoreHolder;
  renderer?: Renderer;
  subdivisions?: Subdivisions;
  keys: KeyStore;
  billing: Billing;
  /** Per key: in memory on one node, shared through the ledger on several. */
  limiter: KeyLimiter;
  pool: NativePool;
  /** Per client address, for the free endpoints. */
  freeLimiter: RateLimiter;
  /** The trusted load balancers (STOREMAP_TRUSTED_PROXIES), when there are any. */
  proxies?: BlockList;
  pending: PendingResponses;
  images: ImageCache;
  usage: UsageReports;
  /** The ledger's store (SQLite today; PostgreSQL behind the same operations). */
  ledger: LedgerOps;
  now: () => number;
  log: (line: string) => void;
}
