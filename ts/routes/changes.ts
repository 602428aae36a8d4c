// GET /api/v1/changes: a brand's stores opened and closed since a date, from the data folder's
// change feed. The request's life (key, rate, charge, usage row, timeout, hang-up) is
// http/charged.ts's; here: the query, the plan, the brand, and the priced work.
import type { Request } from 'restify';
import { affordable, chargedRoute, planRules, runNative, usageFormat, type ChargedWork, type WorkContext } from '../http/charged.ts';
import { givenFormat, parseQuery } from '../http/query.ts';
import { ChangesQuery, invalidRequest } from '../api/schemas.ts';
import { contentTypeFor, pathOf } from '../api/operations.ts';
import { changes, DATA_FORMATS, type DataFormat } from '../native.ts';
import { resolveBrands } from '../services/directory.ts';
import { addonFilters } from '../http/location-filters.ts';
import type { ApiDeps } from '../http/context.ts';
import type { Handlers } from '../http/mount.ts';

const ENDPOINT = pathOf('changes');
const CONTENT_TYPES = Object.fromEntries(DATA_FORMATS.map((f) => [f, contentTypeFor('changes', f)])) as Record<DataFormat, string>;

export function handlers(deps: ApiDeps): Handlers {
  return { changes: [chargedRoute(deps, ENDPOINT, (req, ctx) => changeFeed(req, deps, ctx))] };
}

async function changeFeed(req: Request, deps: ApiDeps, ctx: WorkContext): Promise<ChargedWork> {
  ctx.recordFormat(usageFormat(givenFormat(req), DATA_FORMATS));
  const q = parseQuery(ChangesQuery, req);
  // Nothing has changed since a moment still to come (after the clock and after the serving
  // snapshot's date, which a world built ahead may pass the clock by): a mistake, not an empty
  // answer to charge.
  if (Date.parse(q.since) > Math.max(deps.now(), Date.parse(deps.store.info.as_of))) {
    throw invalidRequest('query', [{ field: 'since', message: 'is in the future' }]);
  }
  const format = q.format;
  const rules = planRules(deps, ctx.key, format, 'The change feed');

  const store = deps.store.current;
  const { brands, label } = resolveBrands(store, [q.brand], false, addonFilters(deps, q).country, 'in_history');
  // The balance now, as rows: the charge checks it again atomically after the work.
  const maxRows = await affordable(deps, ctx.key, rules, format);
  const request = {
    brand: brands[0],
    since: Math.floor(Date.parse(q.since) / 1000),
    ...addonFilters(deps, q),
    format,
    includeProvenance: q.include_provenance === 'true',
    includeHours: q.include_hours === 'true',
    brandLabel: label,
    maxRows,
  };
  const started = performance.now();
  const out = await runNative(deps, ctx, (timeBudgetMs) => changes(store, { ...request, timeBudgetMs }));
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
    headers: {
      'X-Opened-Count': String(out.opened),
      'X-Closed-Count': String(out.closed),
      'X-Changes-Since': out.since ?? undefined,
      'X-Changes-Until': out.until ?? undefined,
    },
  };
}
