// GET /api/v1/history: a brand's (or a ticker's) stores at the end of each month or quarter,
// with the openings and closings within it, from the data folder's change feed. The request's
// life (key, rate, charge, usage row, timeout, hang-up) is http/charged.ts's; here: the query,
// the plan, the brand, and the priced work. Priced like a data request of as many rows as
// periods: a series of a few years is the smallest tier.
import type { Request } from 'restify';
import { ApiError } from '../api/errors.ts';
import { affordable, chargedRoute, planRules, runNative, usageFormat, type ChargedWork, type WorkContext } from '../http/charged.ts';
import { givenFormat, parseQuery } from '../http/query.ts';
import { HISTORY_FORMATS, historyBound, HistoryQuery } from '../api/schemas.ts';
import type { HistoryJson } from '../api/responses.ts';
import { contentTypeFor, pathOf } from '../api/operations.ts';
import { history, type HistoryResponse, type Store } from '../native.ts';
import { directoryEntryOf, resolveBrands, suggestionsFor } from '../services/directory.ts';
import { addonFilters } from '../http/location-filters.ts';
import type { ApiDeps } from '../http/context.ts';
import type { Handlers } from '../http/mount.ts';
import type { z } from 'zod';

const ENDPOINT = pathOf('history');
type HistoryFormat = (typeof HISTORY_FORMATS)[number];
const CONTENT_TYPES = Object.fromEntries(HISTORY_FORMATS.map((f) => [f, contentTypeFor('history', f)])) as Record<HistoryFormat, string>;
/** The CSV's columns: a period's fields, in HistoryPeriod's order. */
export const HISTORY_CSV_COLUMNS = ['period', 'start', 'end', 'stores', 'opened', 'closed'] as const;

export function handlers(deps: ApiDeps): Handlers {
  return { history: [chargedRoute(deps, ENDPOINT, (req, ctx) => series(req, deps, ctx))] };
}

/** The brand a query names: by name, alias or ticker, or by `ticker` only (a ticker even where
 * it is also a brand's name, "BP"; a name there is not a ticker: 404 with what it resembles). */
function brandOf(store: Store, q: HistoryQuery, country: string | undefined): { brand: number; label: string } {
  if (q.brand) {
    const { brands, label } = resolveBrands(store, [q.brand], false, country, 'in_history');
    return { brand: brands[0], label };
  }
  const ticker = q.ticker!;
  const found = store.resolveTicker(ticker);
  if (!found) throw new ApiError('NOT_FOUND', `No ticker matches "${ticker}".`, { suggestions: suggestionsFor(store, ticker) });
  return { brand: found.brand, label: found.name };
}

function csvOf(out: HistoryResponse): Buffer {
  const lines = [HISTORY_CSV_COLUMNS.join(','), ...out.series.map((p) => HISTORY_CSV_COLUMNS.map((c) => String(p[c])).join(','))];
  return Buffer.from(lines.join('\r\n') + '\r\n', 'utf8');
}

async function series(req: Request, deps: ApiDeps, ctx: WorkContext): Promise<ChargedWork> {
  ctx.recordFormat(usageFormat(givenFormat(req), HISTORY_FORMATS));
  const q = parseQuery(HistoryQuery, req);
  const format = q.format;
  const rules = planRules(deps, ctx.key, format, 'The store-count history');

  const store = deps.store.current;
  const { brand, label } = brandOf(store, q, addonFilters(deps, q).country);
  const maxRows = await affordable(deps, ctx.key, rules, format);
  const request = {
    brand,
    interval: q.interval,
    from: q.from === undefined ? undefined : historyBound(q.from).start,
    to: q.to === undefined ? undefined : historyBound(q.to).end - 1,
    ...addonFilters(deps, q),
    maxRows,
  };
  const started = performance.now();
  const out = await runNative(deps, ctx, (timeBudgetMs) => history(store, { ...request, timeBudgetMs }));
  const entry = directoryEntryOf(store.brand(brand)!);
  let body: Buffer = Buffer.alloc(0);
  if (!out.refused) {
    const doc: z.input<typeof HistoryJson> = {
      brand: label,
      brand_wikidata: entry.brand_wikidata,
      ticker: entry.ticker,
      company: entry.company,
      region: out.region,
      interval: q.interval,
      begins: out.begins,
      until: out.until,
      series: out.series,
    };
    body = format === 'csv' ? csvOf(out) : Buffer.from(JSON.stringify(doc), 'utf8');
  }
  return {
    body,
    count: out.count,
    format,
    refused: out.refused as ChargedWork['refused'],
    contentType: CONTENT_TYPES[format],
    sources: [],
    brand: label,
    region: out.region,
    ms: performance.now() - started,
    headers: { 'X-History-Begins': out.begins, 'X-History-Until': out.until },
  };
}
