// POST /api/v1/overlap: for two to five brands or tickers, the pairs of their stores of
// different brands within a distance, with counts. The request's life (key, rate, charge, usage
// row, timeout, hang-up) is http/charged.ts's; here: the body, the plan, the brands, the work.
import type { Request } from 'restify';
import { legendHeader } from '../api/headers.ts';
import { ApiError } from '../api/errors.ts';
import { affordable, chargedRoute, planRules, runNative, usageFormat, type ChargedWork, type WorkContext } from '../http/charged.ts';
import { readJsonBody, refuseQueryString } from '../http/body.ts';
import { contentTypeFor, pathOf } from '../api/operations.ts';
import { invalidRequest, OVERLAP_MAP_FIELDS, OverlapRequest, parseBody } from '../api/schemas.ts';
import { overlap, renderOverlap, type RenderResponse } from '../native.ts';
import { FORMATS, isImageFormat, type Format } from '../api/prices.ts';
import { resolveBrands } from '../services/directory.ts';
import type { ApiDeps } from '../http/context.ts';
import type { Handlers } from '../http/mount.ts';

const ENDPOINT = pathOf('overlap');
const CONTENT_TYPES = Object.fromEntries(FORMATS.map((f) => [f, contentTypeFor('overlap', f)])) as Record<Format, string>;

export function handlers(deps: ApiDeps): Handlers {
  return { overlap: [chargedRoute(deps, ENDPOINT, (req, ctx) => pairs(req, deps, ctx))] };
}

async function pairs(req: Request, deps: ApiDeps, ctx: WorkContext): Promise<ChargedWork> {
  const raw = await readJsonBody(req, deps.config.maxBodyBytes);
  ctx.recordFormat(usageFormat((raw as { format?: unknown } | null)?.format, FORMATS));
  refuseQueryString(req);
  const r = parseBody(OverlapRequest, raw);
  const format = r.format as Format;
  ctx.recordFormat(format);
  const rules = planRules(deps, ctx.key, format);
  // Overlap is a data plan's question, whatever its answer's format.
  if (!rules.dataFormats) throw new ApiError('DATA_ACCESS_FORBIDDEN', 'Overlap needs an enterprise or internal key, for maps too.');
  const image = isImageFormat(format);
  const mapOnly = image ? [] : OVERLAP_MAP_FIELDS.filter((f) => (raw as Record<string, unknown>)[f] !== undefined);
  if (mapOnly.length) throw invalidRequest('request', mapOnly.map((field) => ({ field, message: `applies to maps only (format png or jpeg), not to ${format}` })));
  if (image && !deps.renderer) throw new ApiError('NOT_IMPLEMENTED', 'Map images (png, jpeg) are not available on this server.');

  const store = deps.store.current;
  const field = r.tickers ? 'tickers' : 'brands';
  const names = r.tickers ?? r.brands!;
  const { brands, label } = resolveBrands(store, names, r.tickers !== undefined, r.country);
  if (brands.length < names.length) {
    const message = 'two of the names are one company';
    throw new ApiError('INVALID_REQUEST', `Invalid request: ${field}: ${message}.`, { details: [{ field, message }] });
  }
  const maxRows = await affordable(deps, ctx.key, rules, format);
  const started = performance.now();
  const out = await runNative(deps, ctx, (timeBudgetMs) =>
    image
      ? renderOverlap(deps.renderer!, store, {
          brands,
          distanceM: r.distance_m,
          country: r.country,
          format,
          width: r.width,
          height: r.height,
          style: r.style,
          markerRadius: r.marker_radius,
          markerColors: r.marker_colors?.map((c) => `#${c.replace(/^#/, '')}`),
          legend: r.include_legend,
          maxRows,
          timeBudgetMs,
        })
      : overlap(store, { brands, distanceM: r.distance_m, country: r.country, format, includeProvenance: r.include_provenance, maxRows, timeBudgetMs }),
  );
  if (out.count === 0 && !out.refused) throw new ApiError('NOT_FOUND', `No stores of ${label} are within ${r.distance_m} m of each other (${out.region}).`, { suggestions: [] });
  return {
    body: out.body,
    count: out.count,
    format,
    refused: out.refused as ChargedWork['refused'],
    contentType: CONTENT_TYPES[format],
    sources: out.sources,
    brand: label,
    region: out.region,
    ms: performance.now() - started,
    headers: { 'X-Legend': legendHeader(image && r.include_legend, image ? (out as RenderResponse).legendOmitted : undefined) },
    ...(image ? { basemapAttribution: (out as RenderResponse).basemapAttribution, basemapWarning: (out as RenderResponse).basemapWarning } : {}),
  };
}
