// GET /api/v1/status: health for monitoring. Always 200 while the process can answer; a
// failing subsystem shows as "degraded" in the body. The checks (a real render through the
// addon, a database read, the refresh stamp) run at most every 30 seconds; between, the last
// result is served, as the contract's edge cache would.
import type { Request, Response } from 'restify';
import type { z } from 'zod';
import type { Status } from '../api/responses.ts';
import { API_VERSION } from '../paths.ts';
import { POOL_THREADS } from '../config.ts';
import { freshness } from '../services/brand-summary.ts';
import type { ApiDeps } from '../http/context.ts';
import type { Handlers } from '../http/mount.ts';
import { sendJson } from '../http/send-json.ts';

export const STATUS_CACHE_MS = 30_000;
/** A renderer check slower than this counts as down. */
const RENDER_CHECK_TIMEOUT_MS = 5_000;

type StatusBody = z.infer<typeof Status>;

async function rendererCheck(deps: ApiDeps): Promise<StatusBody['renderer']> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  if (!deps.renderer) return { ok: false, elapsed_ms: 0, detail: { error: 'no renderer is loaded on this server' } };
  let timer: NodeJS.Timeout | undefined;
  try {
    const health = await Promise.race([
      deps.renderer.healthCheck(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${RENDER_CHECK_TIMEOUT_MS} ms`)), RENDER_CHECK_TIMEOUT_MS);
      }),
    ]);
    const pool = deps.pool.depth;
    return {
      ok: health.pngBytes > 0,
      elapsed_ms: elapsed(),
      detail: {
        ...health,
        pool_threads: POOL_THREADS,
        running: pool.running,
        queue_depth: pool.waiting,
        // Answers written but not yet taken by slow clients, and readers cut off for taking
        // nothing (STOREMAP_SLOW_READER_*).
        pending_response_bytes: deps.pending.bytes,
        slow_readers_cut_off: deps.pending.stalled,
        // The street-map archive (STOREMAP_BASEMAP): why it is not used, or what it holds and
        // the tiles read, skipped and cached. Its trouble leaves the renderer up: maps fall back
        // to Natural Earth.
        basemap: deps.renderer.basemapStatus() ?? null,
      },
    };
  } catch (e) {
    return { ok: false, elapsed_ms: elapsed(), detail: { error: e instanceof Error ? e.message : String(e) } };
  } finally {
    clearTimeout(timer);
  }
}

async function check(deps: ApiDeps): Promise<Omit<StatusBody, 'elapsed_ms'>> {
  const now = deps.now();
  let apiOk = true;
  let brandSummary: StatusBody['data']['brand_summary'] = { last_refreshed_at: null, stale: null };
  try {
    brandSummary = await freshness(deps.ledger, now);
  } catch (e) {
    apiOk = false;
    deps.log(`status: database check failed: ${e instanceof Error ? e.message : String(e)}`);
  }
  const [renderer, health] = await Promise.all([rendererCheck(deps), deps.ledger.ping()]);
  const database: StatusBody['database'] = health.ok
    ? { ok: true, kind: deps.ledger.kind, latency_ms: health.latencyMs }
    : { ok: false, kind: deps.ledger.kind, latency_ms: null, error: health.error };
  return {
    status: apiOk && renderer.ok && database.ok ? 'ok' : 'degraded',
    timestamp: new Date(now).toISOString(),
    api: { ok: apiOk, version: API_VERSION },
    renderer,
    database,
    data: { brand_summary: brandSummary, snapshot_version: deps.store.version, rows: deps.store.info.rows, changes_since: deps.store.info.changes_since ?? null },
    flags: { use_multi_source_import: deps.config.multiSource, disabled_sources: deps.config.disabledSources },
  };
}

export function handlers(deps: ApiDeps): Handlers {
  let cached: { at: number; body: Promise<Omit<StatusBody, 'elapsed_ms'>> } | undefined;
  const status = async (_req: Request, res: Response) => {
    const started = performance.now();
    const now = deps.now();
    // Concurrent requests share one check: the cached value is the promise.
    if (!cached || now - cached.at >= STATUS_CACHE_MS) cached = { at: now, body: check(deps) };
    let body: StatusBody;
    try {
      body = { ...(await cached.body), elapsed_ms: 0 };
    } catch (e) {
      // Never a 5xx from the status endpoint.
      cached = undefined;
      body = {
        status: 'degraded',
        elapsed_ms: 0,
        timestamp: new Date(now).toISOString(),
        api: { ok: false, version: API_VERSION },
        renderer: { ok: false, elapsed_ms: 0, detail: { error: e instanceof Error ? e.message : String(e) } },
        database: { ok: false, kind: deps.ledger.kind, latency_ms: null, error: 'not checked' },
        data: { brand_summary: { last_refreshed_at: null, stale: null }, snapshot_version: deps.store.version, rows: 0, changes_since: null },
        flags: { use_multi_source_import: deps.config.multiSource, disabled_sources: deps.config.disabledSources },
      };
    }
    body.elapsed_ms = Math.round(performance.now() - started);
    res.header('cache-control', `public, max-age=${STATUS_CACHE_MS / 1000}`);
    res.header('access-control-allow-origin', '*');
    sendJson(res, 200, body);
  };
  return { status: [status] };
}
