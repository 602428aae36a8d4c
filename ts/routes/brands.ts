// The public brand endpoints: the directory, a brand's summary and autocomplete. Free, no key.
import type { Server } from 'restify';
import type { z } from 'zod';
import { ApiError } from '../http/errors.ts';
import { jsonRoute } from '../http/json-route.ts';
import { parseQuery } from '../http/query.ts';
import type { BrandSummary, BrandsPage, SearchResults } from '../http/responses.ts';
import { BrandsQuery, SearchQuery, SummaryQuery } from '../http/schemas.ts';
import { directoryOf, suggestionsFor } from '../services/directory.ts';
import type { ApiDeps } from '../server.ts';

/** 1-5 capital letters, as typed: what a stock ticker looks like. */
const TICKER_SHAPED = /^[A-Z]{1,5}$/;

export function mount(server: Server, deps: ApiDeps): void {
  server.get('/api/v1/brands', jsonRoute(deps, (req): z.infer<typeof BrandsPage> => {
    const q = parseQuery(BrandsQuery, req);
    const page = directoryOf(deps.store.current).page(q.q, q.sort, q.limit, q.offset);
    return { total: page.total, limit: q.limit, offset: q.offset, count: page.brands.length, brands: page.brands };
  }));

  server.get('/api/v1/brands/summary', jsonRoute(deps, (req): z.infer<typeof BrandSummary> => {
    const q = parseQuery(SummaryQuery, req);
    const store = deps.store.current;
    const found = store.resolve(q.brand);
    if (!found) throw new ApiError('NOT_FOUND', `No brand or ticker matches "${q.brand}".`, { suggestions: suggestionsFor(store, q.brand) });
    const info = store.brand(found.brand)!;
    const countries = store.countryCounts(found.brand);
    const top = countries.slice(0, 5);
    // One storefront from each of the top countries, so the sample shows the brand's reach.
    const sample = top.flatMap((c) => {
      const r = store.querySync({ brands: [found.brand], format: 'json', verifiedOnly: true, country: c.country, limit: 1 });
      return (JSON.parse(r.body.toString()) as { locations: unknown[] }).locations;
    });
    return {
      brand: info.name,
      ticker: info.ticker ?? null,
      matched_by: found.by as z.infer<typeof BrandSummary>['matched_by'],
      location_count: info.locationCount,
      country_count: countries.length,
      top_countries: top.map((c) => ({ country: c.country, location_count: c.locationCount })),
      sample: sample as z.infer<typeof BrandSummary>['sample'],
      snapshot_version: deps.store.version,
    };
  }));

  server.get('/api/v1/brands/search', jsonRoute(deps, (req): z.infer<typeof SearchResults> => {
    const q = parseQuery(SearchQuery, req);
    const store = deps.store.current;
    const results = directoryOf(store).search(q.q, q.limit);
    // A name the directory does not contain but resolution knows (a misspelling, a local
    // name): offered as an exact match.
    if (results.length < q.limit) {
      const found = store.resolve(q.q);
      if (found && !results.some((r) => r.brand === found.name)) {
        const b = store.brand(found.brand)!;
        if (b.locationCount > 0) results.unshift({ brand: b.name, ticker: b.ticker ?? null, location_count: b.locationCount, match: 'exact' });
      }
    }
    if (results.length === 0 && TICKER_SHAPED.test(q.q)) {
      throw new ApiError('NOT_FOUND', `No brand or ticker matches "${q.q}".`, { suggestions: suggestionsFor(store, q.q) });
    }
    return { query: q.q, count: results.length, results };
  }));
}
