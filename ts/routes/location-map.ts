// POST /api/v1/location-map: a brand's (or up to five tickers') storefronts as JSON, CSV or
// GeoJSON. Steps, in order: key, rate limit, body, validation, plan, brand resolution, query,
// charge, response. Every request with a valid key writes exactly one usage row.
import type { Request, Response } from 'restify';
import { ApiError, toApiError } from '../errors.ts';
import { sendError } from '../http/errors.ts';
import { requireKey, takeRate } from '../http/auth.ts';
import { ATTRIBUTION, headerText } from '../http/headers.ts';
import { readJsonBody } from '../http/body.ts';
import { issueDetails, LocationMapRequest, type LocationMapRequest as Req } from '../http/schemas.ts';
import { NativeError, query, render, type RefusalReason, type RenderRequest } from '../native.ts';
import { suggestionsFor } from '../services/directory.ts';
import { ImageCache } from '../services/image-cache.ts';
import { Cancel } from '../services/native-pool.ts';
import { affordableRows, creditsFor, FORMATS, isImageFormat, LOW_CREDIT_THRESHOLD, type Format, type ImageFormat } from '../services/credits.ts';
import { PLAN_RULES, type ApiKey } from '../services/keys.ts';
import type { ApiDeps } from '../http/context.ts';
import type { Handlers } from '../http/mount.ts';
import { contentTypeFor, pathOf } from '../http/operations.ts';

/** The path usage rows record for this operation. */
const ENDPOINT = pathOf('locationMap');

/** Each format's Content-Type, as the operation documents it (a format it lacks fails at start). */
const CONTENT_TYPES = Object.fromEntries(FORMATS.map((f) => [f, contentTypeFor('locationMap', f)])) as Record<Format, string>;

export function handlers(deps: ApiDeps): Handlers {
  // restify tells a promise-returning step from a callback one by being an async function.
  return {
    locationMap: [
      async (req: Request, res: Response) => {
        await handle(req, res, deps);
      },
    ],
  };
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
  if (e.code === 'TIMEOUT') return new ApiError('TIMEOUT');
  return e;
}

/** "ff00ff" and "#FF00FF" are one colour, and one image-cache entry. */
function hex(c: string | undefined): string | undefined {
  return c === undefined ? undefined : `#${c.replace(/^#/, '').toUpperCase()}`;
}

/** The addon's render request: every image option, defaults applied, spellings normalized so
 * that equal requests share an image-cache key. */
function renderRequest(r: Req, format: ImageFormat, filters: Omit<RenderRequest['query'], 'format' | 'verifiedOnly' | 'timeBudgetMs' | 'maxRows'>): RenderRequest {
  return {
    // Images draw every reconciled row, community-map rows included.
    query: { ...filters, format: 'json', verifiedOnly: false },
    format,
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

/** Why a request ended without its answer being written: its client hung up first. */
export const CLIENT_GONE_STATUS = 499;

/** The request's state shared by its steps, its timer and its client's hang-up. */
interface Ctx {
  key?: ApiKey;
  format: Format | 'invalid' | null;
  /** Its usage row is written (or, the ledger failing, given up). */
  recorded: boolean;
  /** Answered, timed out, or its client gone: nothing more may be written or charged. */
  done: boolean;
}

/**
 * One keyed request, in the contract's order: key → rate → body → validation → plan → price →
 * work → charge → respond. The price is known before the work: the addon counts the rows,
 * refuses (no serializing, no drawing) when the balance cannot pay for them, and gives up at
 * the request's deadline. Exactly one usage row per request with a valid key, written by
 * `finish` or by the charge; refusals for the rate limit are counted, not written one by one.
 */
async function handle(req: Request, res: Response, deps: ApiDeps): Promise<void> {
  const ctx: Ctx = { format: null, recorded: false, done: false };
  // Cancelled when nobody wants the work any more: a waiting task leaves the queue at once.
  const cancel = new Cancel();
  const deadline = performance.now() + deps.config.requestTimeoutMs;

  /** Writes the request's one usage row (unless written) and the answer, if there is still
   * someone to answer. A ledger that cannot record turns the answer into its 503; never throws. */
  async function finish(err: ApiError | null, status: number): Promise<void> {
    if (ctx.key && !ctx.recorded) {
      ctx.recorded = true;
      const entry = { endpoint: ENDPOINT, status, format: ctx.format };
      if (err?.code === 'RATE_LIMITED') deps.billing.countRejected(ctx.key, entry);
      else {
        try {
          await deps.billing.record(ctx.key, entry);
        } catch (e) {
          if (err) err = toApiError(e, deps.log);
        }
      }
    }
    if (err && !res.headersSent && !res.destroyed) sendError(res, err);
  }

  // The timeout's or the hang-up's finish: the handler returns only once it has answered, or
  // restify, seeing a handler end without an answer, sends one of its own (a 500).
  let ending: Promise<void> | undefined;
  const timer = setTimeout(() => {
    if (ctx.done) return;
    ctx.done = true;
    const err = new ApiError('TIMEOUT');
    cancel.cancel(err);
    // Nothing may escape from a timer: finish() answers whatever the ledger does.
    ending = finish(err, err.status);
  }, deps.config.requestTimeoutMs);
  // A client that hangs up before its answer is written: recorded as 499, never charged.
  const gone = () => {
    if (ctx.done) return;
    ctx.done = true;
    cancel.cancel(new ApiError('TIMEOUT', 'The client went away.'));
    ending = finish(null, CLIENT_GONE_STATUS);
  };
  res.once('close', gone);

  try {
    const key = await requireKey(deps, req, res);
    // From here on every answer, errors included, is recorded against the key.
    ctx.key = key;
    await takeRate(deps, key, res);

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
    const format = r.format as Format;
    ctx.format = format;

    const plan = planOf(deps, key, r);
    const out = await work(deps, key, r, plan, { cancel, deadline });
    if (out.refused === 'deadline') throw new ApiError('TIMEOUT');
    if (out.count === 0) throw new ApiError('NOT_FOUND', `No locations of ${plan.label} match these filters.`, { suggestions: [] });
    const cost = creditsFor(out.count, format);
    if (out.refused === 'credits') {
      throw new ApiError('INSUFFICIENT_CREDITS', `This request costs ${cost} credits; the key has ${await deps.billing.balance(key)}. Nothing was drawn or charged.`);
    }

    if (ctx.done) return; // timed out or hung up meanwhile: answered and recorded already
    let charge;
    try {
      // The charge is refused (nothing written) if the request ends while it waits for the
      // ledger; its first try runs in this same tick, so a hang-up seen before it pays nothing.
      charge = await deps.billing.charge(key, cost, { endpoint: ENDPOINT, status: 200, format }, () => ctx.done);
    } finally {
      // Charged and recorded, or (the ledger failed) nothing written at all: either way no
      // second row for this request.
      ctx.recorded = true;
    }
    if (ctx.done) return;
    if (!charge.ok && charge.revoked) throw new ApiError('UNAUTHORIZED', 'The key was revoked while the request ran; nothing was charged.');
    if (!charge.ok) throw new ApiError('INSUFFICIENT_CREDITS', `This request costs ${cost} credits; the key has ${charge.balance}.`);
    ctx.done = true;

    res.header('X-Attribution', ATTRIBUTION);
    res.header('X-Data-Sources', out.sources.join(','));
    res.header('X-Location-Count', String(out.count));
    res.header('X-Brand', headerText(plan.label));
    res.header('X-Region', headerText(out.region));
    res.header('X-Credits-Charged', String(charge.charged));
    res.header('X-Credits-Remaining', String(charge.remaining));
    if (!plan.rules.unlimited && charge.remaining < LOW_CREDIT_THRESHOLD) res.header('X-Credits-Low', 'true');
    res.header('X-Render-Time', `${Math.round(out.ms)}ms`);
    res.header('X-Cached', String(out.cached));
    if (typeof out.coverageConfidence === 'number') res.header('X-Coverage-Confidence', String(out.coverageConfidence));
    if (out.total > out.count) {
      res.header('X-Trial-Cap-Applied', 'true');
      res.header('X-Total-Available', String(out.total));
    }
    res.status(200);
    res.header('content-type', CONTENT_TYPES[format]);
    deps.pending.track(res, out.body.length);
    res.end(out.body);
  } catch (e) {
    if (ctx.done) return; // the timeout or the hang-up already ended it (a cancelled charge ends here too)
    ctx.done = true;
    const err = toApiError(e, deps.log);
    await finish(err, err.status);
  } finally {
    clearTimeout(timer);
    res.off('close', gone);
    await ending;
  }
}

/** What the key may ask for, and the request's brands resolved. */
interface Plan {
  rules: (typeof PLAN_RULES)[keyof typeof PLAN_RULES];
  image: boolean;
  brands: number[];
  label: string;
}

function planOf(deps: ApiDeps, key: ApiKey, r: Req): Plan {
  if (deps.keys.isExpired(key)) throw new ApiError('TRIAL_EXPIRED');
  const rules = PLAN_RULES[key.plan];
  const image = isImageFormat(r.format as Format);
  if (!image && !rules.dataFormats) throw new ApiError('DATA_ACCESS_FORBIDDEN');
  if (image && !deps.renderer) throw new ApiError('NOT_IMPLEMENTED', 'Map images (png, jpeg) are not available on this server.');
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
  return { rules, image, brands, label: names.join(', ') };
}

interface WorkOut {
  body: Buffer;
  count: number;
  total: number;
  sources: string[];
  region: string;
  /** The estimated share of the brand's storefronts within the filters that the answer holds
   * (images: the markers drawn, community-only ones included); null: too few storefronts or
   * one source. */
  coverageConfidence?: number | null;
  refused?: RefusalReason;
  cached: boolean;
  ms: number;
}

/** The heavy step, priced: the addon stops before serializing or drawing when the key's
 * balance cannot pay (`refused: "credits"`), and at the deadline. Runs in the key's share of
 * the native pool; refused when slow clients already hold too many unsent bytes. */
async function work(deps: ApiDeps, key: ApiKey, r: Req, plan: Plan, when: { cancel: Cancel; deadline: number }): Promise<WorkOut> {
  const format = r.format as Format;
  const store = deps.store.current;
  const filters = {
    brands: plan.brands,
    country: r.country,
    // A subdivision's name or code, as the data's code ("Bavaria" → "BY").
    state: r.state !== undefined && deps.subdivisions ? deps.subdivisions.code(r.state, r.country) : r.state,
    city: r.city,
    postcode: r.postcode,
    radiusKm: r.radius_km,
    storefrontType: r.storefront_type,
    limit: plan.rules.maxLocations,
  };
  // The balance now, as rows: the charge checks it again atomically after the work.
  const maxRows = plan.rules.unlimited ? undefined : affordableRows(await deps.billing.balance(key), format);
  const ticket = { owner: key.id, cancel: when.cancel };
  /** The time left when the task starts: work that starts late never starts. */
  const budget = () => {
    const left = Math.floor(when.deadline - performance.now());
    if (left <= 0) throw new ApiError('TIMEOUT');
    return left;
  };
  const started = performance.now();
  if (isImageFormat(format)) {
    // The cache key leaves out the caller's balance and time: one picture for every caller.
    const request = renderRequest(r, format, filters);
    const cacheKey = ImageCache.key([deps.store.version, request]);
    const hit = deps.images.get(cacheKey);
    if (hit) return { ...hit, cached: true, ms: performance.now() - started };
    deps.pending.admit();
    const out = await deps.pool
      .run(() => render(deps.renderer!, store, { ...request, query: { ...request.query, maxRows, timeBudgetMs: budget() } }), ticket)
      .catch((e: unknown) => {
        throw fromNative(e);
      });
    if (out.count > 0 && !out.refused) deps.images.set(cacheKey, out);
    return { ...out, refused: out.refused as RefusalReason | undefined, cached: false, ms: performance.now() - started };
  }
  deps.pending.admit();
  const out = await deps.pool
    .run(() => query(store, { ...filters, maxRows, format, includeProvenance: r.include_provenance, verifiedOnly: true, brandLabel: plan.label, timeBudgetMs: budget() }), ticket)
    .catch((e: unknown) => {
      throw fromNative(e);
    });
  return { ...out, refused: out.refused as RefusalReason | undefined, cached: false, ms: performance.now() - started };
}
