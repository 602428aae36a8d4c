// POST /api/v1/overlap: for two to five brands or tickers, the pairs of their stores of
// different brands within a distance, with counts. The request's life (key, rate, charge, usage
// row, timeout, hang-up) is http/charged.ts's; here: the body, the plan, the brands, the work.
import type { Request } from 'restify';
import { ApiError } from '../errors.ts';
import { chargedRoute, dataUsageFormat, planRules, runNative, type ChargedWork, type WorkContext } from '../http/charged.ts';
import { readJsonBody } from '../http/body.ts';
import { ATTRIBUTION, headerText } from '../http/headers.ts';
import { contentTypeFor, pathOf } from '../http/operations.ts';
import { OverlapRequest, parseBody } from '../http/schemas.ts';
import { DATA_FORMATS, overlap, type DataFormat } from '../native.ts';
import { affordableRows } from '../services/credits.ts';
import { resolveBrands } from '../services/directory.ts';
import type { ApiDeps } from '../http/context.ts';
import type { Handlers } from '../http/mount.ts';

const ENDPOINT = pathOf('overlap');
const CONTENT_TYPES = Object.fromEntries(DATA_FORMATS.map((f) => [f, contentTypeFor('overlap', f)])) as Record<DataFormat, string>;

export function handlers(deps: ApiDeps): Handlers {
  return { overlap: [chargedRoute(deps, ENDPOINT, (req, ctx) => pairs(req, deps, ctx))] };
}

async function pairs(req: Request, deps: ApiDeps, ctx: WorkContext): Promise<ChargedWork> {
  const raw = await readJsonBody(req, deps.config.maxBodyBytes);
  ctx.recordFormat(dataUsageFormat((raw as { format?: unknown } | null)?.format));
  const r = parseBody(OverlapRequest, raw);
  const format = r.format;
  ctx.recordFormat(format);
  const rules = planRules(deps, ctx.key, format);

  const store = deps.store.current;
  const field = r.tickers ? 'tickers' : 'brands';
  const names = r.tickers ?? r.brands!;
  const { brands, label } = resolveBrands(store, names);
  if (brands.length < names.length) {
    const message = 'two of the names are one company';
    throw new ApiError('INVALID_REQUEST', `Invalid request: ${field}: ${message}.`, { details: [{ field, message }] });
  }
  const maxRows = rules.unlimited ? undefined : affordableRows(await deps.billing.balance(ctx.key), format);
  const started = performance.now();
  const out = await runNative(deps, ctx, (timeBudgetMs) =>
    overlap(store, { brands, distanceM: r.distance_m, country: r.country, format, includeProvenance: r.include_provenance, maxRows, timeBudgetMs }),
  );
  if (out.count === 0 && !out.refused) throw new ApiError('NOT_FOUND', `No stores of ${label} are within ${r.distance_m} m of each other (${out.region}).`, { suggestions: [] });
  return {
    body: out.body,
    count: out.count,
    format,
    refused: out.refused as ChargedWork['refused'],
    contentType: CONTENT_TYPES[format],
    headers: {
      'X-Attribution': ATTRIBUTION,
      'X-Data-Sources': out.sources.join(','),
      'X-Location-Count': String(out.count),
      'X-Brand': headerText(label),
      'X-Region': headerText(out.region),
      'X-Render-Time': `${Math.round(performance.now() - started)}ms`,
    },
  };
}
