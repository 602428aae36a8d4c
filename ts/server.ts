// The HTTP service. createServer takes everything it needs as arguments (config, database,
// snapshot, clock); nothing is global, so tests build as many servers as they like.
import { trustedProxies } from './http/client-address.ts';
import restify from 'restify';
import type { Config } from './config.ts';
import type { DB } from './db/database.ts';
import { ApiError, errorBody, ERRORS, type ErrorCode } from './api/errors.ts';
import type { ApiDeps } from './http/context.ts';
import { sendError } from './http/errors.ts';
import { jsonRoute } from './http/json-route.ts';
import { jsonHeaders } from './http/send-json.ts';
import { mountOperations } from './http/mount.ts';
import { RateLimiter } from './http/rate-limit.ts';
import { SharedRateLimiter } from './http/shared-rate-limit.ts';
import * as locationMap from './routes/location-map.ts';
import * as changeFeed from './routes/changes.ts';
import * as storeHistory from './routes/history.ts';
import * as nearby from './routes/nearby.ts';
import * as overlap from './routes/overlap.ts';
import * as playground from './routes/playground.ts';
import * as testHooks from './routes/test-hooks.ts';
import { Billing } from './services/billing.ts';
import { SqliteLedger } from './db/sqlite-ledger.ts';
import type { LedgerOps } from './db/ledger.ts';
import { KeyStore } from './services/keys.ts';
import { ImageCache } from './services/image-cache.ts';
import { NativePool } from './services/native-pool.ts';
import { PendingResponses } from './http/pending-responses.ts';
import { UsageReports } from './services/usage.ts';
import * as docs from './routes/docs.ts';
import * as brands from './routes/brands.ts';
import * as status from './routes/status.ts';
import * as usage from './routes/usage.ts';
import type { Renderer } from './native.ts';
import type { StoreHolder } from './store-holder.ts';
import type { Subdivisions } from './services/subdivisions.ts';

export interface Deps {
  config: Config;
  store: StoreHolder;
  /** The ledger's store; without it, `db` (an SQLite database) is the ledger. */
  ledger?: LedgerOps;
  db?: DB;
  /** Draws png/jpeg maps; without it image formats answer 501. */
  renderer?: Renderer;
  /** Subdivision names for the `state` filter; without it, codes only. */
  subdivisions?: Subdivisions;
  /** The clock every time-dependent rule reads (trial expiry, rate limits, usage times). */
  now?: () => number;
  log?: (line: string) => void;
}

export function createServer(deps: Deps): restify.Server {
  const now = deps.now ?? Date.now;
  const ledger: LedgerOps | undefined = deps.ledger ?? (deps.db ? new SqliteLedger(deps.db, now, deps.config.ledgerBusyMs) : undefined);
  if (!ledger) throw new Error('createServer needs a ledger or a database');
  const api: ApiDeps = {
    config: deps.config,
    store: deps.store,
    renderer: deps.renderer,
    subdivisions: deps.subdivisions,
    // SQLite's keys version is a pragma on the local file, read per request; PostgreSQL's is a
    // round trip, read at most every keysRecheckMs.
    keys: new KeyStore(ledger, now, ledger.kind === 'postgres' ? deps.config.keysRecheckMs : 0),
    billing: new Billing(ledger, now, deps.config.usageFlushMs),
    // One bucket per key for the whole cluster when nodes share the ledger.
    limiter: ledger.rateBuckets
      ? new SharedRateLimiter(ledger.rateBuckets, deps.config.rateLimit, deps.config.rateBurst, now)
      : new RateLimiter(deps.config.rateLimit, deps.config.rateBurst, now),
    pool: new NativePool(deps.config.nativeConcurrency, deps.config.nativeQueue, deps.config.nativeKeyShare),
    freeLimiter: new RateLimiter(deps.config.freeRateLimit, deps.config.freeRateBurst, now),
    proxies: deps.config.trustedProxies.length ? trustedProxies(deps.config.trustedProxies) : undefined,
    pending: new PendingResponses({
      limit: deps.config.maxPendingResponseBytes,
      keyShare: deps.config.nativeKeyShare,
      graceMs: deps.config.slowReaderGraceMs,
      minBytesPerS: deps.config.slowReaderBytesPerS,
    }),
    images: new ImageCache(deps.config.imageCacheBytes),
    usage: new UsageReports(ledger),
    ledger,
    now,
    log: deps.log ?? ((line) => console.error(line)),
  };
  const server = restify.createServer({ name: 'storemap', handleUncaughtExceptions: false });
  applyServerLimits(server, deps.config);
  // HTTP/1.1 needs a Host header (RFC 9112 §3.2). Node refuses one without it itself, with an
  // empty body (its requireHostHeader): here it gets the contract's error instead.
  (server.server as { requireHostHeader?: boolean }).requireHostHeader = false;
  server.pre((req, res, next) => {
    if (req.httpVersion !== '1.1' || req.headers.host !== undefined) return next();
    res.header('connection', 'close');
    sendError(res, new ApiError('INVALID_REQUEST', 'An HTTP/1.1 request needs a Host header.'));
    return next(false);
  });
  const health = jsonRoute(api, () => {
    const info = deps.store.info;
    return { status: 'ok', snapshot_version: info.snapshot_version, rows: info.rows, synthetic: info.synthetic };
  });
  mountOperations(server, { health: [health] }, locationMap.handlers(api), changeFeed.handlers(api), storeHistory.handlers(api), nearby.handlers(api), overlap.handlers(api), brands.handlers(api), usage.handlers(api), status.handlers(api), docs.handlers(api), playground.handlers(api));
  // Test-only paths are not operations: they are mounted by hand, and only when asked for.
  if (deps.config.testHooks) testHooks.mount(server, api);

  // restify's own 404/405 bodies, in the contract's error shape. They go out through
  // res.sendRaw so restify knows the response is answered (writing it any other way makes
  // restify send its own body as well, which throws and brings the process down).
  const answer = (code: 'NOT_FOUND' | 'METHOD_NOT_ALLOWED', message?: string) => (_req: restify.Request, res: restify.Response, _err: unknown, cb: () => void) => {
    const e = new ApiError(code, message);
    // Sent raw, as every other error is: restify's JSON formatter would send plain
    // `application/json`, without the charset.
    const body = JSON.stringify(errorBody(e));
    res.sendRaw(e.status, body, jsonHeaders(body));
    cb();
  };
  server.on('NotFound', answer('NOT_FOUND', 'No such endpoint.'));
  server.on('MethodNotAllowed', answer('METHOD_NOT_ALLOWED'));
  keepLedger(server, api);
  return server;
}

/** Node's own answers to requests it cannot parse (malformed, headers too large), in the
 * contract's error shape instead of an empty body. */
const CLIENT_ERRORS: Record<string, [number, string, ErrorCode, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', 'HEADERS_TOO_LARGE', ERRORS.HEADERS_TOO_LARGE.message],
};

/** Node's own limits on the listening server: slow senders, idle sockets, connection count. */
function applyServerLimits(server: restify.Server, config: Config): void {
  const http = server.server;
  http.on('clientError', (err: NodeJS.ErrnoException, socket: import('node:stream').Duplex) => {
    // A reset or a socket already written to gets nothing more.
    if (err.code === 'ECONNRESET' || !socket.writable || (socket as { _httpMessage?: unknown })._httpMessage) return void socket.destroy();
    const [status, reason, code, message] = CLIENT_ERRORS[err.code ?? ''] ?? [400, 'Bad Request', 'INVALID_REQUEST', 'The request is not valid HTTP.'];
    const body = JSON.stringify({ error: message, code });
    const headers = jsonHeaders(body);
    socket.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: ${headers['content-type']}\r\nContent-Length: ${headers['content-length']}\r\nConnection: close\r\n\r\n${body}`);
  });
  http.headersTimeout = config.headersTimeoutMs;
  http.requestTimeout = config.receiveTimeoutMs;
  http.keepAliveTimeout = config.keepAliveTimeoutMs;
  http.maxConnections = config.maxConnections;
  http.setTimeout(config.idleTimeoutMs);
}

/** How often raw usage rows past their keeping time are deleted. */
export const PRUNE_EVERY_MS = 3_600_000;

/** The ledger's upkeep while the server listens: old raw usage rows pruned at start and every
 * hour; refused requests still counted in memory written when it closes. */
function keepLedger(server: restify.Server, api: ApiDeps): void {
  const prune = () =>
    void api.billing.pruneUsage().then(
      (n) => n > 0 && api.log(`usage: pruned ${n} raw rows past the keeping time (rollups kept)`),
      (e: unknown) => api.log(`usage: pruning failed, retried in an hour: ${e instanceof Error ? e.message : String(e)}`),
    );
  let timer: NodeJS.Timeout | undefined;
  server.server.once('listening', () => {
    prune();
    timer = setInterval(prune, PRUNE_EVERY_MS).unref();
  });
  server.server.once('close', () => {
    clearInterval(timer);
    flushes.set(
      server,
      api.billing.flushRejected().catch((e: unknown) => api.log(`usage: refused requests not written: ${e instanceof Error ? e.message : String(e)}`)),
    );
  });
}

/** Each closed server's last write of counted refusals (a round trip on PostgreSQL). */
const flushes = new WeakMap<restify.Server, Promise<void>>();

/** Stops accepting, lets in-flight requests finish, and resolves once the refusals they
 * counted are in the ledger: then the ledger can be closed. */
export function closeServer(server: restify.Server): Promise<void> {
  return new Promise<void>((resolve) => server.close(() => resolve())).then(() => flushes.get(server));
}

/** Listens, and resolves with the bound address (port 0 picks a free port). */
export function listen(server: restify.Server, host: string, port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server.url));
  });
}
