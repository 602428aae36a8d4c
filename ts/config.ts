// Configuration from the environment, validated once at boot so a bad setting stops the
// process at start instead of failing the first request.
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { DEFAULT_DATA_DIR } from './paths.ts';
import { DATA_DEFAULTS, SOURCE_KINDS } from './native.ts';
import { trustedProxies } from './http/client-address.ts';
import { BUSY_DEADLINE_MS, CONNECT_DEADLINE_MS } from './db/ledger.ts';

/** libuv's threads, on which the addon's calls run: Node's UV_THREADPOOL_SIZE, 4 unless set. */
export const POOL_THREADS = Math.max(1, Math.floor(Number(process.env.UV_THREADPOOL_SIZE)) || 4);

/** The sources, as the addon names them (the core crate is their one home). */
export const SOURCE_TYPES = SOURCE_KINDS;

/** A number written out in decimal: `z.coerce.number()` would read an empty value (`PORT=`) as
 * 0 and take `0x10` or `1e3`, so a typo set a timeout to "never" or a cache to nothing. Text
 * that is not a decimal number stays text, which the number schema then refuses by name. */
const DECIMAL = /^-?\d+(\.\d+)?$/;
/** Whether text is a number written out in decimal (surrounding spaces aside): the one rule for
 * numbers in the environment and on the command line. */
export const isDecimalText = (v: string) => DECIMAL.test(v.trim());
// Only for a value that is not a number: zod applies a schema's own message to its checks
// too, and "PORT=70000" read "expected a decimal number" instead of the range it is outside.
const DECIMAL_ONLY = {
  error: (issue: { code: string; expected?: string }) => (issue.code !== 'invalid_type' ? undefined : issue.expected === 'int' ? 'expected a whole number' : 'expected a decimal number'),
};
const decimal = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (typeof v === 'string' && isDecimalText(v) ? Number(v.trim()) : v), schema);

const csv = z
  .string()
  .transform((s) => s.split(',').map((x) => x.trim()).filter(Boolean));

const EnvSchema = z.object({
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: decimal(z.number(DECIMAL_ONLY).int().min(0).max(65535).default(8080)),
  STOREMAP_DATA_DIR: z.string().min(1).default(DEFAULT_DATA_DIR),
  STOREMAP_DB: z.string().min(1).optional(),
  /** A PostgreSQL ledger shared by several nodes (postgres://…); without it, the SQLite file. */
  STOREMAP_DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'a postgres:// or postgresql:// URL')
    .optional(),
  /** Connections each node keeps to PostgreSQL at most. */
  STOREMAP_DATABASE_POOL: decimal(z.number(DECIMAL_ONLY).int().min(1).max(1000).default(10)),
  /** How long opening the PostgreSQL ledger waits for its first connection (TCP and the
   * server's answer): an address that accepts and never answers held a start or a migration
   * without a word. */
  STOREMAP_DATABASE_CONNECT_TIMEOUT_MS: decimal(z.number(DECIMAL_ONLY).int().min(100).max(600_000).default(CONNECT_DEADLINE_MS)),
  /** On PostgreSQL: credits a node takes off a key's row at a time and spends locally (a credit
   * lease), for keys whose balance holds at least that many; 0 charges every request on the
   * key's row. DEPLOYMENT.md says what it bounds. */
  STOREMAP_CREDIT_LEASE: decimal(z.number(DECIMAL_ONLY).int().min(0).max(1e9).default(0)),
  /** A lease lives this long after its last spend: the longest that a node killed while holding
   * one keeps its unspent credits from the other nodes. */
  STOREMAP_CREDIT_LEASE_TTL_MS: decimal(z.number(DECIMAL_ONLY).int().min(100).max(3_600_000).default(10_000)),
  /** On PostgreSQL: longest a charge waits for others to join its batch, so that each call to
   * the ledger carries more (0: it goes as soon as the node's last call is back).
   * DEPLOYMENT.md says when it pays. */
  STOREMAP_LEDGER_LINGER_MS: decimal(z.number(DECIMAL_ONLY).int().min(0).max(1_000).default(0)),
  /** Sources left out of the next build or refresh. */
  STOREMAP_DISABLED_SOURCES: csv.pipe(z.array(z.enum(SOURCE_TYPES))).default([]),
  /** Off: the legacy single-source import, rows without provenance. */
  STOREMAP_MULTI_SOURCE: z.enum(['true', 'false']).default('true').transform((v) => v === 'true'),
  /** Snapshots each build's id history keeps: how far back GET /api/v1/changes reaches (the
   * pipeline keeps 60, a year of weekly refreshes, when unset). */
  STOREMAP_HISTORY_SNAPSHOTS: decimal(z.number(DECIMAL_ONLY).int().min(1).max(10_000).optional()),
  /** Worker threads a data build runs on (storemap-ingest reads it from the environment; the
   * cores when unset): checked here too, so that `serve`, which builds on first start and on
   * refresh, refuses a bad value at start. */
  STOREMAP_THREADS: z
    .string()
    .optional()
    // Empty is unset, as the pipeline reads it; the message is the pipeline's own.
    .refine((v) => v === undefined || v.trim() === '' || (/^\d+$/.test(v.trim()) && Number(v) >= 1 && Number(v) <= DATA_DEFAULTS.maxBuildThreads), {
      message: `a whole number of threads from 1 to ${DATA_DEFAULTS.maxBuildThreads}`,
    }),
  /** Scale of the dataset `npm start` builds on first start. */
  STOREMAP_DEFAULT_SCALE: decimal(z.number(DECIMAL_ONLY).positive().max(4).default(0.1)),
  /** Per-key token bucket: sustained requests per second, and the burst allowed. */
  STOREMAP_RATE_LIMIT: decimal(z.number(DECIMAL_ONLY).positive().max(1e6).default(20)),
  STOREMAP_RATE_BURST: decimal(z.number(DECIMAL_ONLY).int().min(1).max(1e6).default(40)),
  /** Request bodies larger than this (after decompression) get 413. */
  STOREMAP_MAX_BODY_BYTES: decimal(z.number(DECIMAL_ONLY).int().min(1024).max(16 * 2 ** 20).default(64 * 1024)),
  /** A request still running after this gets 503 TIMEOUT and is not charged. */
  STOREMAP_REQUEST_TIMEOUT_MS: decimal(z.number(DECIMAL_ONLY).int().min(10).max(600_000).default(30_000)),
  /** SQLite ledger: how long a charge waits for another process's write lock before 503. */
  STOREMAP_LEDGER_BUSY_MS: decimal(z.number(DECIMAL_ONLY).int().min(10).max(600_000).default(BUSY_DEADLINE_MS)),
  /** Heavy native calls admitted at once, and waiting. Twice libuv's threads: one key's fair
   * share (half) then keeps every thread busy, and a thread that finishes a render finds the
   * next one queued instead of waiting for the busy JS thread to hand it on (with as many as the
   * threads, one key had 2 renders going and a 2-core server drew a fifth fewer images a second). */
  STOREMAP_NATIVE_CONCURRENCY: decimal(z.number(DECIMAL_ONLY).int().min(1).max(64).default(Math.min(64, 2 * POOL_THREADS))),
  STOREMAP_NATIVE_QUEUE: decimal(z.number(DECIMAL_ONLY).int().min(0).max(100_000).default(256)),
  /** The part of the native slots and of the queue one key may hold (fair share). */
  STOREMAP_NATIVE_KEY_SHARE: decimal(z.number(DECIMAL_ONLY).min(0.01).max(1).default(0.5)),
  /** A data query whose brands' reconciled rows add up to at most this runs on the JS thread
   * at once instead of on the native pool: the addon scans a brand's range and serializes what
   * matches, so 5,000 rows bound it to about a millisecond (bench/inline-query.ts), about what
   * the pool's hand-off to a libuv thread and back costs the JS thread. Larger brands, and
   * every image, go to the pool, whose fair share keeps one key from holding it. 0: always the
   * pool. */
  STOREMAP_INLINE_MAX_ROWS: decimal(z.number(DECIMAL_ONLY).int().min(0).max(1_000_000).default(5000)),
  /** On PostgreSQL: how long a node trusts its cached keys before it reads the keys version
   * again (a revoked key is refused at its next charge regardless), and a key's balance as its
   * last charge left it, which prices the next request before its work. */
  STOREMAP_KEYS_RECHECK_MS: decimal(z.number(DECIMAL_ONLY).int().min(0).max(60_000).default(1000)),
  /** Refused (429) requests are counted in memory and written as one row per key this often. */
  STOREMAP_USAGE_FLUSH_MS: decimal(z.number(DECIMAL_ONLY).int().min(10).max(86_400_000).default(1000)),
  /** Free endpoints (directory, search, summary, status, docs): per client address. */
  /** Addresses or CIDR blocks of the load balancers in front: from them, and only from them,
   * X-Forwarded-For names the client the free endpoints' per-address limit counts. */
  STOREMAP_TRUSTED_PROXIES: csv
    .superRefine((entries, ctx) => {
      try {
        trustedProxies(entries);
      } catch (e) {
        ctx.addIssue({ code: 'custom', message: (e as Error).message });
      }
    })
    .default([]),
  STOREMAP_FREE_RATE_LIMIT: decimal(z.number(DECIMAL_ONLY).positive().max(1e6).default(20)),
  STOREMAP_FREE_RATE_BURST: decimal(z.number(DECIMAL_ONLY).int().min(1).max(1e6).default(60)),
  /** Bytes of response bodies written but not yet taken by slow clients; past it, heavy
   * requests get 503 SERVICE_BUSY until the clients catch up. Bounds memory. */
  STOREMAP_MAX_PENDING_RESPONSE_BYTES: decimal(z.number(DECIMAL_ONLY).int().min(1).max(2 ** 40).default(256 * 2 ** 20)),
  /** Node's server limits: time to receive a request's headers, and the whole request. */
  /** A client must take its answer within STOREMAP_SLOW_READER_GRACE_MS (0: never checked) plus
   * its size at STOREMAP_SLOW_READER_BYTES_PER_S, or its connection is cut. */
  STOREMAP_SLOW_READER_GRACE_MS: decimal(z.number(DECIMAL_ONLY).int().min(0).max(3_600_000).default(10_000)),
  STOREMAP_SLOW_READER_BYTES_PER_S: decimal(z.number(DECIMAL_ONLY).int().min(1).max(2 ** 34).default(65_536)),
  STOREMAP_HEADERS_TIMEOUT_MS: decimal(z.number(DECIMAL_ONLY).int().min(100).max(600_000).default(10_000)),
  STOREMAP_RECEIVE_TIMEOUT_MS: decimal(z.number(DECIMAL_ONLY).int().min(100).max(600_000).default(30_000)),
  /** An idle keep-alive connection is closed after this. */
  STOREMAP_KEEP_ALIVE_TIMEOUT_MS: decimal(z.number(DECIMAL_ONLY).int().min(100).max(600_000).default(5_000)),
  /** A connection with no bytes moving either way for this long is closed (0: never). */
  STOREMAP_IDLE_TIMEOUT_MS: decimal(z.number(DECIMAL_ONLY).int().min(0).max(3_600_000).default(120_000)),
  /** Open connections at most; more are refused by the server. */
  STOREMAP_MAX_CONNECTIONS: decimal(z.number(DECIMAL_ONLY).int().min(1).max(1e6).default(4096)),
  /** Bytes of encoded map images kept for repeated requests; 0 turns the cache off. */
  STOREMAP_IMAGE_CACHE_BYTES: decimal(z.number(DECIMAL_ONLY).int().min(0).max(2 ** 32).default(64 * 2 ** 20)),
  /** A PMTiles archive of vector tiles (Protomaps basemap or OpenMapTiles schema): city and
   * street views are drawn from it, the Natural Earth map elsewhere. */
  STOREMAP_BASEMAP: z.string().min(1).optional(),
  /** Megabytes of decoded basemap tiles kept in memory. */
  STOREMAP_BASEMAP_CACHE_MB: decimal(z.number(DECIMAL_ONLY).int().min(1).max(65_536).default(64)),
  /** Megabytes of the Natural Earth map's drawn cells kept for the next map at the same zoom
   * (0: every map's background is drawn afresh). */
  STOREMAP_MAP_CELL_CACHE_MB: decimal(z.number(DECIMAL_ONLY).int().min(0).max(65_536).default(32)),
  /** Mounts test-only routes (a panic inside the addon, a slow task). Never in production. */
  STOREMAP_TEST_HOOKS: z.enum(['0', '1']).default('0'),
});

/** The environment, validated, as the names the service reads. */
export const ConfigSchema = EnvSchema.superRefine((c, ctx) => {
  // A charge held for company past its request's deadline would be dropped, its request 503.
  if (c.STOREMAP_LEDGER_LINGER_MS >= c.STOREMAP_REQUEST_TIMEOUT_MS) {
    ctx.addIssue({ code: 'custom', path: ['STOREMAP_LEDGER_LINGER_MS'], message: `must be below STOREMAP_REQUEST_TIMEOUT_MS (${c.STOREMAP_REQUEST_TIMEOUT_MS})` });
  }
}).transform((c) => {
  const dataDir = path.resolve(c.STOREMAP_DATA_DIR);
  return {
    host: c.HOST,
    port: c.PORT,
    dataDir,
    dbPath: path.resolve(c.STOREMAP_DB ?? path.join(dataDir, 'storemap.db')),
    databaseUrl: c.STOREMAP_DATABASE_URL,
    databasePool: c.STOREMAP_DATABASE_POOL,
    databaseConnectTimeoutMs: c.STOREMAP_DATABASE_CONNECT_TIMEOUT_MS,
    creditLease: c.STOREMAP_CREDIT_LEASE,
    creditLeaseTtlMs: c.STOREMAP_CREDIT_LEASE_TTL_MS,
    ledgerLingerMs: c.STOREMAP_LEDGER_LINGER_MS,
    disabledSources: c.STOREMAP_DISABLED_SOURCES,
    multiSource: c.STOREMAP_MULTI_SOURCE,
    defaultScale: c.STOREMAP_DEFAULT_SCALE,
    historySnapshots: c.STOREMAP_HISTORY_SNAPSHOTS,
    rateLimit: c.STOREMAP_RATE_LIMIT,
    rateBurst: c.STOREMAP_RATE_BURST,
    maxBodyBytes: c.STOREMAP_MAX_BODY_BYTES,
    requestTimeoutMs: c.STOREMAP_REQUEST_TIMEOUT_MS,
    ledgerBusyMs: c.STOREMAP_LEDGER_BUSY_MS,
    nativeConcurrency: c.STOREMAP_NATIVE_CONCURRENCY,
    nativeQueue: c.STOREMAP_NATIVE_QUEUE,
    nativeKeyShare: c.STOREMAP_NATIVE_KEY_SHARE,
    inlineMaxRows: c.STOREMAP_INLINE_MAX_ROWS,
    usageFlushMs: c.STOREMAP_USAGE_FLUSH_MS,
    keysRecheckMs: c.STOREMAP_KEYS_RECHECK_MS,
    freeRateLimit: c.STOREMAP_FREE_RATE_LIMIT,
    freeRateBurst: c.STOREMAP_FREE_RATE_BURST,
    maxPendingResponseBytes: c.STOREMAP_MAX_PENDING_RESPONSE_BYTES,
    headersTimeoutMs: c.STOREMAP_HEADERS_TIMEOUT_MS,
    receiveTimeoutMs: c.STOREMAP_RECEIVE_TIMEOUT_MS,
    keepAliveTimeoutMs: c.STOREMAP_KEEP_ALIVE_TIMEOUT_MS,
    idleTimeoutMs: c.STOREMAP_IDLE_TIMEOUT_MS,
    maxConnections: c.STOREMAP_MAX_CONNECTIONS,
    imageCacheBytes: c.STOREMAP_IMAGE_CACHE_BYTES,
    trustedProxies: c.STOREMAP_TRUSTED_PROXIES,
    slowReaderGraceMs: c.STOREMAP_SLOW_READER_GRACE_MS,
    slowReaderBytesPerS: c.STOREMAP_SLOW_READER_BYTES_PER_S,
    basemap: c.STOREMAP_BASEMAP === undefined ? undefined : { path: path.resolve(c.STOREMAP_BASEMAP), cacheBytes: c.STOREMAP_BASEMAP_CACHE_MB * 2 ** 20 },
    mapCellBytes: c.STOREMAP_MAP_CELL_CACHE_MB * 2 ** 20,
    testHooks: c.STOREMAP_TEST_HOOKS === '1',
  };
});

export type Config = z.output<typeof ConfigSchema>;

/** Every setting's default, as the documents quote them. */
export const DEFAULT_CONFIG: Config = ConfigSchema.parse({});

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = ConfigSchema.safeParse(env);
  const issues = parsed.success ? [] : parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
  // Checked here, on the environment's value only (DEFAULT_CONFIG, parsed from nothing, must
  // not look at the disk): a file there gave ENOTDIR from the first write, deep in a build; a
  // folder that is not there yet is made by the first build.
  if (parsed.success && existsSync(parsed.data.dataDir) && !statSync(parsed.data.dataDir).isDirectory()) issues.push('  STOREMAP_DATA_DIR: a file, not a folder');
  if (!parsed.success || issues.length) throw new Error(`invalid configuration:\n${issues.join('\n')}`);
  return parsed.data;
}

// ---- `storemap data fetch`: every publisher's base URL from the environment, checked once at
// the command's start.

const baseUrl = z
  .string()
  .trim()
  .pipe(z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }))
  .transform((u) => u.replace(/\/+$/, ''));

export const FetchEnvSchema = z.object({
  /** Geofabrik or a mirror of it (serves index-v1.json and the extracts). */
  STOREMAP_OSM_MIRROR: baseUrl.default('https://download.geofabrik.de'),
  /** AllThePlaces' data site (serves runs/latest.json). */
  STOREMAP_ATP_BASE: baseUrl.default('https://data.alltheplaces.xyz'),
  /** The Overture release bucket over HTTPS (S3 ListObjectsV2 and the objects). */
  STOREMAP_OVERTURE_BASE: baseUrl.default('https://overturemaps-us-west-2.s3.us-west-2.amazonaws.com'),
  /** The Overture STAC root catalog; its `latest` names the current release. */
  STOREMAP_OVERTURE_STAC: baseUrl.default('https://stac.overturemaps.org/catalog.json'),
  /** Where the Foursquare OS Places files are downloaded from (`<base>/<path in the dataset>`). */
  STOREMAP_FSQ_BASE: baseUrl.default('https://huggingface.co/datasets/foursquare/fsq-os-places/resolve/main'),
  /** The Hugging Face API for the same dataset (`<api>/tree/main/<path>` lists files). */
  STOREMAP_FSQ_API: baseUrl.default('https://huggingface.co/api/datasets/foursquare/fsq-os-places'),
  /** How long a download may wait for an answer, or for its next bytes, before it gives up
   * (and can be resumed by running it again); Node's fetch would wait five minutes each. */
  STOREMAP_FETCH_STALL_MS: decimal(z.number(DECIMAL_ONLY).int().min(100).max(3_600_000)).default(60_000),
  /** The operator's Hugging Face access token; without it Foursquare is skipped. */
  STOREMAP_FSQ_TOKEN: z
    .string()
    .trim()
    .optional()
    .transform((v) => v || undefined),
});

export interface FetchConfig {
  osmMirror: string;
  atpBase: string;
  overtureBase: string;
  overtureStac: string;
  fsqBase: string;
  fsqApi: string;
  fsqToken?: string;
  stallMs: number;
}

/** STOREMAP_FETCH_STALL_MS alone, for `basemap extract`, which reads none of the publishers'
 * addresses (a mistyped one must not stop it). */
export function fetchStallMs(env: NodeJS.ProcessEnv = process.env): number {
  const parsed = FetchEnvSchema.pick({ STOREMAP_FETCH_STALL_MS: true }).safeParse(env);
  if (!parsed.success) throw new Error(`invalid configuration:\n${parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`).join('\n')}`);
  return parsed.data.STOREMAP_FETCH_STALL_MS;
}

export function loadFetchConfig(env: NodeJS.ProcessEnv = process.env): FetchConfig {
  const parsed = FetchEnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`invalid configuration:\n${lines.join('\n')}`);
  }
  const c = parsed.data;
  return {
    osmMirror: c.STOREMAP_OSM_MIRROR,
    atpBase: c.STOREMAP_ATP_BASE,
    overtureBase: c.STOREMAP_OVERTURE_BASE,
    overtureStac: c.STOREMAP_OVERTURE_STAC,
    fsqBase: c.STOREMAP_FSQ_BASE,
    fsqApi: c.STOREMAP_FSQ_API,
    fsqToken: c.STOREMAP_FSQ_TOKEN,
    stallMs: c.STOREMAP_FETCH_STALL_MS,
  };
}
