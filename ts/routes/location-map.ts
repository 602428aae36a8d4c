// POST /api/v1/location-map: a brand's (or up to five tickers') storefronts as JSON, CSV,
// GeoJSON or a map image. Steps, in order: key, rate limit (http/charged.ts), body,
// validation, plan, brand resolution, query or render, then charge and response (charged.ts
// again). Every request with a valid key writes exactly one usage row.
import type { Request } from 'restify';
import { legendHeader } from '../api/headers.ts';
import { ApiError } from '../api/errors.ts';
import { affordable, chargedRoute, planRules, runInline, runNative, usageFormat, type ChargedWork, type WorkContext } from '../http/charged.ts';
import { readJsonBody, refuseQueryString } from '../http/body.ts';
import { invalidRequest, LocationMapRequest, parseBody, type LocationMapRequest as Req } from '../api/schemas.ts';
import { poolCount, query, querySync, render, type QueryRequest, type RefusalReason, type RenderRequest } from '../native.ts';
import { resolveName, suggestionsFor } from '../services/directory.ts';
import { ImageCache } from '../services/image-cache.ts';
import { FORMATS, isImageFormat, type Format, type ImageFormat } from '../api/prices.ts';
import type { PLAN_RULES } from '../api/plans.ts';
import type { ApiKey } from '../services/keys.ts';
import { addonFilters } from '../http/location-filters.ts';
import type { ApiDeps } from '../http/context.ts';
import type { Handlers } from '../http/mount.ts';
import { contentTypeFor, pathOf } from '../api/operations.ts';

/** The path usage rows record for this operation. */
const ENDPOINT = pathOf('locationMap');

/** Each format's Content-Type, as the operation documents it (a format it lacks fails at start). */
const CONTENT_TYPES = Object.fromEntries(FORMATS.map((f) => [f, contentTypeFor('locationMap', f)])) as Record<Format, string>;

export function handlers(deps: ApiDeps): Handlers {
  return { locationMap: [chargedRoute(deps, ENDPOINT, (req, ctx) => locationMap(req, deps, ctx))] };
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

/** The body read and checked, its plan, the priced work, and the answer's headers. */
async function locationMap(req: Request, deps: ApiDeps, ctx: WorkContext): Promise<ChargedWork> {
  const raw = await readJsonBody(req, deps.config.maxBodyBytes);
  // The format is recorded in usage even when the rest of the body is invalid.
  ctx.recordFormat(usageFormat((raw as { format?: unknown } | null)?.format, FORMATS));
  refuseQueryString(req);
  const r = parseBody(LocationMapRequest, raw);
  const format = r.format as Format;
  ctx.recordFormat(format);

  const plan = planOf(deps, ctx.key, r);
  const out = await work(deps, ctx, r, plan);
  if (out.count === 0 && !out.refused) throw new ApiError('NOT_FOUND', `No locations of ${plan.label} match these filters${openAtNote(r.open_at, out.hoursUnknown)}.`, { suggestions: [] });
  return {
    body: out.body,
    count: out.count,
    format,
    refused: out.refused,
    contentType: CONTENT_TYPES[format],
    sources: out.sources,
    brand: plan.label,
    region: out.region,
    ms: out.ms,
    basemapAttribution: out.basemapAttribution,
    basemapWarning: out.basemapWarning,
    headers: {
      'X-Cached': String(out.cached),
      'X-Coverage-Confidence': typeof out.coverageConfidence === 'number' ? String(out.coverageConfidence) : undefined,
      'X-Hours-Unknown': typeof out.hoursUnknown === 'number' ? String(out.hoursUnknown) : undefined,
      'X-Legend': legendHeader(r.include_legend && isImageFormat(format), out.legendOmitted),
      ...(out.total > out.count ? { 'X-Trial-Cap-Applied': 'true', 'X-Total-Available': String(out.total) } : {}),
    },
  };
}

/** With open_at, the "none open" answer says how many stores could not be told (where the
 * answer counts them: data formats). */
export function openAtNote(openAt: string | undefined, unknown: number | null | undefined): string {
  if (openAt === undefined) return '';
  return typeof unknown === 'number' ? ` open at ${openAt} (${unknown} without known opening hours)` : ` open at ${openAt}`;
}

/** What the key may ask for, and the request's brands resolved. */
interface Plan {
  rules: (typeof PLAN_RULES)[keyof typeof PLAN_RULES];
  image: boolean;
  brands: number[];
  label: string;
}

/** Countries a focus map draws besides its own (as insets), so a `country` filter naming one
 * of them still leaves stores to draw. */
const FOCUS_ALSO_DRAWS: Record<string, string[]> = { US: ['PR'] };

function planOf(deps: ApiDeps, key: ApiKey, r: Req): Plan {
  // A focus map draws only its country's stores: with a `country` filter elsewhere it would be
  // an empty outline, priced on the filter's stores.
  const focus = r.focus_country?.toUpperCase();
  // The filter's country, as given or as the state names it ("Texas" is the US's).
  const filterCountry = addonFilters(deps, r).country?.toUpperCase();
  const country = focus && focus !== 'AUTO' ? filterCountry : undefined;
  // The country a brand's name is read in: the filter's, else the focus map's.
  const askedIn = filterCountry ?? (focus && focus !== 'AUTO' ? focus : undefined);
  if (focus && country && country !== focus && !FOCUS_ALSO_DRAWS[focus]?.includes(country)) {
    throw invalidRequest('request', [{ field: 'focus_country', message: `a focus map of ${focus} draws only the stores there, and country ${country} leaves none: give the same country, or one of them` }]);
  }
  const rules = planRules(deps, key, r.format as Format);
  const image = isImageFormat(r.format as Format);
  if (image && !deps.renderer) throw new ApiError('NOT_IMPLEMENTED', 'Map images (png, jpeg) are not available on this server.');
  const store = deps.store.current;
  const brands: number[] = [];
  const names: string[] = [];
  // One company per brand: two spellings of one company ("MCD", "McDonald's") merge, and
  // its colour is the one given with its first spelling.
  const colors: (string | undefined)[] = [];
  (r.tickers ?? [r.brand!]).forEach((name, i) => {
    const found = resolveName(store, name, r.tickers !== undefined, askedIn);
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
  /** With open_at (data formats): stores left out because their hours are unknown. */
  hoursUnknown?: number | null;
  refused?: RefusalReason;
  cached: boolean;
  ms: number;
  basemapAttribution?: string | null;
  basemapWarning?: string | null;
  /** Images: the legend asked for is left out (too small an image for it). */
  legendOmitted?: boolean;
}

/** The heavy step, priced: the addon stops before serializing or drawing when the key's
 * balance cannot pay (`refused: "credits"`), and at the deadline. Runs in the key's share of
 * the native pool; refused when slow clients already hold too many unsent bytes. */
async function work(deps: ApiDeps, ctx: WorkContext, r: Req, plan: Plan): Promise<WorkOut> {
  const { key } = ctx;
  const format = r.format as Format;
  const store = deps.store.current;
  const filters = {
    brands: plan.brands,
    ...addonFilters(deps, r),
    openAt: r.open_at,
    limit: plan.rules.maxLocations,
  };
  // The balance now, as rows: the charge checks it again atomically after the work.
  const maxRows = await affordable(deps, key, plan.rules, format);
  const started = performance.now();
  if (isImageFormat(format)) {
    // The cache key leaves out the caller's balance and time: one picture for every caller.
    const request = renderRequest(r, format, filters);
    const cacheKey = ImageCache.key([deps.store.version, request]);
    const hit = deps.images.get(cacheKey);
    if (hit) return { ...hit, basemapWarning: undefined, cached: true, ms: performance.now() - started };
    const out = await runNative(deps, ctx, (timeBudgetMs) => render(deps.renderer!, store, { ...request, query: { ...request.query, maxRows, timeBudgetMs } }));
    if (out.count > 0 && !out.refused) deps.images.set(cacheKey, out);
    return { ...out, refused: out.refused as RefusalReason | undefined, cached: false, ms: performance.now() - started };
  }
  const request = (timeBudgetMs: number): QueryRequest => ({ ...filters, maxRows, format, includeProvenance: r.include_provenance, includeHours: r.include_hours, verifiedOnly: true, brandLabel: plan.label, timeBudgetMs });
  const out =
    plan.brands.reduce((n, b) => n + poolCount(store, b), 0) <= deps.config.inlineMaxRows
      ? runInline(deps, ctx, (timeBudgetMs) => querySync(store, request(timeBudgetMs)))
      : await runNative(deps, ctx, (timeBudgetMs) => query(store, request(timeBudgetMs)));
  return { ...out, refused: out.refused as RefusalReason | undefined, cached: false, ms: performance.now() - started };
}
