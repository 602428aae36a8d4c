// POST /api/v1/location-map: a brand's (or up to five tickers') storefronts as JSON, CSV or
// GeoJSON. Steps, in order: key, rate limit, body, validation, plan, brand resolution, query,
// charge, response. Every request with a valid key writes exactly one usage row.
import type { Request, Response, Server } from 'restify';
import { ApiError, sendError, toApiError } from '../http/errors.ts';
import { requireKey, takeRate } from '../http/auth.ts';
import { ATTRIBUTION, headerText } from '../http/headers.ts';
import { readJsonBody } from '../http/body.ts';
import { issueDetails, LocationMapRequest, type LocationMapRequest as Req } from '../http/schemas.ts';
import { NativeError, query, render, type QueryResponse, type RenderRequest } from '../native.ts';
import { suggestionsFor } from '../services/directory.ts';
import { ImageCache, type CachedImage } from '../services/image-cache.ts';
import { creditsFor, FORMATS, IMAGE_FORMATS, LOW_CREDIT_THRESHOLD, type Format } from '../services/credits.ts';
import { PLAN_RULES, type ApiKey } from '../services/keys.ts';
import type { ApiDeps } from '../server.ts';

export const ENDPOINT = '/api/v1/location-map';

const CONTENT_TYPES = {
  json: 'application/json; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
  geojson: 'application/geo+json',
  png: 'image/png',
  jpeg: 'image/jpeg',
} as const;

export function mount(server: Server, deps: ApiDeps): void {
  server.post({ name: 'locationMap', path: ENDPOINT }, async (req: Request, res: Response) => {
    await handle(req, res, deps);
  });
}

/** The format a usage row records: a known one (json when none is given), else `invalid`. */
export function usageFormat(format: unknown): Format | 'invalid' {
  if (format === undefined) return 'json';
  return typeof format === 'string' && (FORMATS as readonly string[]).includes(format) ? (format as Format) : 'invalid';
}

/** Errors from the addon, as API errors. */
function fromNative(e: unknown): unknown {
  if (!(e instanceof NativeError)) return e;
  if (e.code === 'INVALID_REQUEST' || e.code === 'UNKNOWN_CITY') return new ApiError('INVALID_REQUEST', e.message);
  return e;
}

/** "ff00ff" and "#FF00FF" are one colour, and one image-cache entry. */
function hex(c: string | undefined): string | undefined {
  return c === undefined ? undefined : `#${c.replace(/^#/, '').toUpperCase()}`;
}

/** The addon's render request: every image option, defaults applied, spellings normalized so
 * that equal requests share an image-cache key. */
function renderRequest(r: Req, filters: Omit<RenderRequest['query'], 'format' | 'verifiedOnly'>): RenderRequest {
  return {
    // Images draw every reconciled row, community-map rows included.
    query: { ...filters, format: 'json', verifiedOnly: false },
    format: r.format,
    width: r.width,
    height: r.height,
    scale: r.scale,
    dpi: r.dpi,
    style: r.style,
    bounds: r.bounds,
    center: r.center,
    zoom: r.zoom,
    markerRadius: r.marker_radius,
    markerColor: hex(r.marker_color),
    markerColors: r.marker_colors?.map((c) => hex(c)!),
    heatmap: r.heatmap,
    legend: r.include_legend,
    focus: r.focus_country
      ? {
          country: r.focus_country === 'auto' ? 'auto' : r.focus_country.toUpperCase(),
          mainlandOnly: r.mainland_only,
          conus: r.conus,
          regions: r.regions,
          fillColor: hex(r.fill_color),
          outlineColor: hex(r.outline_color),
          outlineWidth: r.outline_width,
          background: r.background === 'transparent' ? undefined : hex(r.background),
        }
      : undefined,
  };
}

async function handle(req: Request, res: Response, deps: ApiDeps): Promise<void> {
  const ctx: { key?: ApiKey; format: string | null; recorded: boolean; done: boolean } = { format: null, recorded: false, done: false };
  const timer = setTimeout(() => {
    if (ctx.done) return;
    ctx.done = true;
    // Nothing may escape from a timer: fail() answers whatever the ledger does.
    void fail(new ApiError('TIMEOUT'));
  }, deps.config.requestTimeoutMs);

  /** Records the failed request (when a key is known) and answers it. A ledger that cannot
   * record it turns the answer into that fault's 503; it never throws. */
  async function fail(err: ApiError): Promise<void> {
    if (ctx.key && !ctx.recorded) {
      ctx.recorded = true;
      try {
        await deps.billing.record(ctx.key, { endpoint: ENDPOINT, status: err.status, format: ctx.format });
      } catch (e) {
        err = toApiError(e, deps.log);
      }
    }
    if (!res.headersSent) sendError(res, err);
  }

  try {
    const key = requireKey(deps, req, res);
    // From here on every answer, errors included, is recorded against the key.
    ctx.key = key;
    takeRate(deps, key, res);

    const raw = await readJsonBody(req, deps.config.maxBodyBytes);
    // The format is recorded in usage even when the rest of the body is invalid: one of the
    // known formats, or `invalid` (a client's string never reaches the ledger).
    ctx.format = usageFormat((raw as { format?: unknown } | null)?.format);
    const parsed = LocationMapRequest.safeParse(raw);
    if (!parsed.success) {
      const details = issueDetails(parsed.error);
      throw new ApiError('INVALID_REQUEST', `Invalid request: ${details.map((d) => `${d.field}: ${d.message}`).join('; ')}.`, { details });
    }
    const r = parsed.data;
    ctx.format = r.format;

    if (deps.keys.isExpired(key)) throw new ApiError('TRIAL_EXPIRED');
    const rules = PLAN_RULES[key.plan];
    const image = (IMAGE_FORMATS as readonly string[]).includes(r.format);
    if (!image && !rules.dataFormats) throw new ApiError('DATA_ACCESS_FORBIDDEN');
    if (image && !deps.renderer) throw new ApiError('NOT_IMPLEMENTED', 'Map images (png, jpeg) are not available on this server.');
    const format = r.format as keyof typeof CONTENT_TYPES;

    const store = deps.store.current;
    const brands: number[] = [];
    const names: string[] = [];
    // One company per brand: two spellings of one company ("MCD", "McDonald's") merge, and
    // its colour is the one given with its first spelling.
    const colors: (string | undefined)[] = [];
    (r.tickers ?? [r.brand!]).forEach((name, i) => {
      const found = store.resolve(name);
      if (!found) {
        throw new ApiError('NOT_FOUND', `No brand or ticker matches "${name}".`, { suggestions: suggestionsFor(store, name) });
      }
      if (!brands.includes(found.brand)) {
        brands.push(found.brand);
        names.push(found.name);
        colors.push(r.marker_colors?.[i]);
      }
    });
    // Colours run out only at the end (marker_colors shorter than tickers); the renderer's
    // palette fills in past them.
    if (r.marker_colors) r.marker_colors = colors.filter((c) => c !== undefined);
    const label = names.join(', ');

    const filters = {
      brands,
      country: r.country,
      state: r.state,
      city: r.city,
      postcode: r.postcode,
      radiusKm: r.radius_km,
      storefrontType: r.storefront_type,
      limit: rules.maxLocations,
    };
    const started = performance.now();
    let cached = false;
    let out: QueryResponse | CachedImage;
    if (image) {
      const request = renderRequest(r, filters);
      const cacheKey = ImageCache.key([deps.store.version, request]);
      const hit = deps.images.get(cacheKey);
      cached = hit !== undefined;
      out =
        hit ??
        (await deps.pool.run(() => render(deps.renderer!, store, request)).catch((e: unknown) => {
          throw fromNative(e);
        }));
      if (!cached && out.count > 0) deps.images.set(cacheKey, out);
    } else {
      out = await deps.pool
        .run(() => query(store, { ...filters, format, includeProvenance: r.include_provenance, verifiedOnly: true, brandLabel: label }))
        .catch((e: unknown) => {
          throw fromNative(e);
        });
    }
    const renderMs = performance.now() - started;
    if (out.count === 0) throw new ApiError('NOT_FOUND', `No locations of ${label} match these filters.`, { suggestions: [] });

    if (ctx.done) return; // timed out meanwhile: nothing is charged
    const cost = creditsFor(out.count, format);
    let charge;
    try {
      charge = await deps.billing.charge(key, cost, { endpoint: ENDPOINT, status: 200, format }, () => ctx.done);
    } finally {
      // Charged and recorded, or (the ledger failed) nothing written at all: either way no
      // second row for this request.
      ctx.recorded = true;
    }
    if (ctx.done) return; // timed out while waiting for the ledger: answered already
    if (!charge.ok && charge.revoked) throw new ApiError('UNAUTHORIZED', 'The key was revoked while the request ran; nothing was charged.');
    if (!charge.ok) throw new ApiError('INSUFFICIENT_CREDITS', `This request costs ${cost} credits; the key has ${charge.balance}.`);
    ctx.done = true;

    res.header('X-Attribution', ATTRIBUTION);
    res.header('X-Data-Sources', out.sources.join(','));
    res.header('X-Location-Count', String(out.count));
    res.header('X-Brand', headerText(label));
    res.header('X-Region', headerText(out.region));
    res.header('X-Credits-Charged', String(charge.charged));
    res.header('X-Credits-Remaining', String(charge.remaining));
    if (!rules.unlimited && charge.remaining < LOW_CREDIT_THRESHOLD) res.header('X-Credits-Low', 'true');
    res.header('X-Render-Time', `${Math.round(renderMs)}ms`);
    res.header('X-Cached', String(cached));
    if (out.total > out.count) {
      res.header('X-Trial-Cap-Applied', 'true');
      res.header('X-Total-Available', String(out.total));
    }
    res.status(200);
    res.header('content-type', CONTENT_TYPES[format]);
    res.end(out.body);
  } catch (e) {
    if (ctx.done) return; // the timeout already answered (a cancelled charge ends here too)
    ctx.done = true;
    await fail(toApiError(e, deps.log));
  } finally {
    clearTimeout(timer);
  }
}
