// POST /api/v1/nearby: the stores nearest a point, of a brand, of up to five tickers or of any
// brand. The request's life (key, rate, charge, usage row, timeout, hang-up) is
// http/charged.ts's; here: the body, the plan, the brands, and the priced work.
import * as countryCoder from '@rapideditor/country-coder';
import type { Request } from 'restify';
import { ApiError } from '../api/errors.ts';
import { affordable, chargedRoute, planRules, runNative, usageFormat, type ChargedWork, type WorkContext } from '../http/charged.ts';
import { readJsonBody, refuseQueryString } from '../http/body.ts';
import { contentTypeFor, pathOf } from '../api/operations.ts';
import { NearbyRequest, parseBody } from '../api/schemas.ts';
import { DATA_FORMATS, nearby, type DataFormat } from '../native.ts';
import { resolveBrands } from '../services/directory.ts';
import type { ApiDeps } from '../http/context.ts';
import type { Handlers } from '../http/mount.ts';
import { openAtNote } from './location-map.ts';

const ENDPOINT = pathOf('nearby');
const CONTENT_TYPES = Object.fromEntries(DATA_FORMATS.map((f) => [f, contentTypeFor('nearby', f)])) as Record<DataFormat, string>;
/** The document's brand when the request names none. */
const ANY_BRAND = 'any brand';

export function handlers(deps: ApiDeps): Handlers {
  return { nearby: [chargedRoute(deps, ENDPOINT, (req, ctx) => nearest(req, deps, ctx))] };
}

/** The country or territory a point is in, as the snapshot's rows code it (Puerto Rico is PR,
 * Hong Kong HK, not their sovereigns'); none at sea. country-coder's borders are in memory
 * already: the reference data's preparation (data/reference.ts, which the CLI loads) reads
 * them. */
function countryAt(lat: number, lng: number): string | undefined {
  return countryCoder.iso1A2Code([lng, lat], { level: 'territory' }) ?? undefined;
}

async function nearest(req: Request, deps: ApiDeps, ctx: WorkContext): Promise<ChargedWork> {
  const raw = await readJsonBody(req, deps.config.maxBodyBytes);
  ctx.recordFormat(usageFormat((raw as { format?: unknown } | null)?.format, DATA_FORMATS));
  refuseQueryString(req);
  const r = parseBody(NearbyRequest, raw);
  const format = r.format;
  ctx.recordFormat(format);
  const rules = planRules(deps, ctx.key, format, 'Nearby');

  const store = deps.store.current;
  const names = r.tickers ?? (r.brand ? [r.brand] : []);
  // A name is read in the country the point is in, as the other endpoints read it in the
  // country asked for: "Woolworths" beside Sydney is Australia's.
  const { brands, label } = names.length ? resolveBrands(store, names, r.tickers !== undefined, countryAt(r.lat, r.lng)) : { brands: [], label: ANY_BRAND };
  // The balance now, as rows: the charge checks it again atomically after the work.
  const maxRows = await affordable(deps, ctx.key, rules, format);
  const started = performance.now();
  const out = await runNative(deps, ctx, (timeBudgetMs) =>
    nearby(store, { brands, lat: r.lat, lng: r.lng, limit: r.limit, radiusKm: r.radius_km, openAt: r.open_at, format, includeProvenance: r.include_provenance, includeHours: r.include_hours, brandLabel: label, maxRows, timeBudgetMs }),
  );
  if (out.count === 0 && !out.refused) throw new ApiError('NOT_FOUND', `No stores of ${label} ${out.region}${openAtNote(r.open_at, out.hoursUnknown)}.`, { suggestions: [] });
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
    headers: { 'X-Hours-Unknown': typeof out.hoursUnknown === 'number' ? String(out.hoursUnknown) : undefined },
  };
}
