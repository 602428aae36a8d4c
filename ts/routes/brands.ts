// The public brand endpoints: the directory, a brand's summary and autocomplete. Free, no key.
import type { z } from 'zod';
import { ApiError } from '../api/errors.ts';
import { jsonRoute } from '../http/json-route.ts';
import { limitFreeEndpoint } from '../http/free-limit.ts';
import { parseQuery } from '../http/query.ts';
import type { BrandSummary, BrandsPage, SearchResults } from '../api/responses.ts';
import { BrandsQuery, SearchQuery, SummaryQuery } from '../api/schemas.ts';
import { directoryEntryOf, directoryOf, suggestionsFor } from '../services/directory.ts';
import type { ApiDeps } from '../http/context.ts';
import type { Handlers } from '../http/mount.ts';
import { query, type Store } from '../native.ts';

/** What a stock ticker looks like, as typed, in the forms data/tickers.csv holds: 1-5 capital
 * letters or a Tokyo code's four digits, a share class (`HM-B`, `BRK.B`) and an exchange
 * (`3382.T`, `ITX.MC`, `CTC-A.TO`). */
const TICKER_SHAPED = /^(?:[A-Z]{1,5}|\d{4})(?:-[A-Z])?(?:\.[A-Z]{1,2})?$/;

/** The contract's "5-row sample" of a brand summary. */
const SAMPLE_ROWS = 5;

type Summary = Omit<z.infer<typeof BrandSummary>, 'matched_by'>;

/**
 * Brand summaries, made off the event loop (the country counts and the five sample rows are
 * one native task on the pool, in the caller's address's share) and kept per snapshot: a
 * brand's summary is made once per snapshot, however often it is asked for, and a new
 * snapshot starts a new set.
 */
class Summaries {
  #store: Store | undefined;
  #made = new Map<number, Promise<Summary>>();

  get(deps: ApiDeps, store: Store, brand: number, address: string | undefined): Promise<Summary> {
    if (store !== this.#store) {
      this.#store = store;
      this.#made = new Map();
    }
    let made = this.#made.get(brand);
    if (!made) {
      made = deps.pool.run(() => make(deps, store, brand), { owner: `address:${address ?? 'unknown'}` });
      this.#made.set(brand, made);
      // A failure (a busy pool) is not kept: the next caller tries again.
      made.catch(() => this.#made.get(brand) === made && this.#made.delete(brand));
    }
    return made;
  }
}

async function make(deps: ApiDeps, store: Store, brand: number): Promise<Summary> {
  const info = store.brand(brand)!;
  const countries = store.countryCounts(brand);
  const top = countries.slice(0, SAMPLE_ROWS);
  // Storefronts from each of the top countries, so the sample shows the brand's reach: one
  // each, then the rest of the five handed out in turn, biggest country first, to countries
  // with stores left (a one-country brand's five are all there).
  const quota = top.map(() => 1);
  for (let left = SAMPLE_ROWS - top.length, moved = true; left > 0 && moved; ) {
    moved = false;
    for (let i = 0; i < top.length && left > 0; i++) {
      if (quota[i] < top[i].locationCount) {
        quota[i]++;
        left--;
        moved = true;
      }
    }
  }
  const rows = await Promise.all(top.map((c, i) => query(store, { brands: [brand], format: 'json', verifiedOnly: true, country: c.country, limit: quota[i] })));
  const sample = rows.flatMap((r) => (JSON.parse(r.body.toString()) as { locations: unknown[] }).locations);
  const { brand: name, brand_wikidata, ticker, company, location_count } = directoryEntryOf(info);
  return {
    brand: name,
    brand_wikidata,
    ticker,
    company,
    location_count,
    country_count: countries.length,
    top_countries: top.map((c) => ({ country: c.country, location_count: c.locationCount })),
    sample: sample as Summary['sample'],
    snapshot_version: store.info().snapshot_version,
  };
}

export function handlers(deps: ApiDeps): Handlers {
  const summaries = new Summaries();
  const free = limitFreeEndpoint(deps);
  const listBrands = jsonRoute(deps, (req): z.infer<typeof BrandsPage> => {
    const q = parseQuery(BrandsQuery, req);
    const page = directoryOf(deps.store.current).page(q.q, q.sort, q.limit, q.offset);
    return { total: page.total, limit: q.limit, offset: q.offset, count: page.brands.length, brands: page.brands };
  });

  const brandSummary = jsonRoute(deps, async (req): Promise<z.infer<typeof BrandSummary>> => {
    const q = parseQuery(SummaryQuery, req);
    const store = deps.store.current;
    const found = store.resolve(q.brand);
    if (!found) throw new ApiError('NOT_FOUND', `No brand or ticker matches "${q.brand}".`, { suggestions: suggestionsFor(store, q.brand) });
    const summary = await summaries.get(deps, store, found.brand, req.socket.remoteAddress);
    return { ...summary, matched_by: found.by as z.infer<typeof BrandSummary>['matched_by'] };
  });

  const searchBrands = jsonRoute(deps, (req): z.infer<typeof SearchResults> => {
    const q = parseQuery(SearchQuery, req);
    const store = deps.store.current;
    const found = store.resolve(q.q);
    // The brand the text resolves to, where the brand field would take it, comes first: "Gap"
    // is Gap Inc.'s ticker, whose primary brand is Old Navy, and the name of its brand Gap. It
    // is looked for one place past the limit, where the ranking may have put it.
    const results = directoryOf(store).search(q.q, q.limit + 1);
    const at = found ? results.findIndex((r) => r.brand === found.name) : -1;
    if (at > 0) results.unshift(...results.splice(at, 1));
    results.length = Math.min(results.length, q.limit);
    // A name the directory does not contain but resolution knows (a misspelling, a local
    // name): offered as an exact match.
    if (results.length < q.limit) {
      const b = found && store.brand(found.brand)!;
      // A brand with no storefront the data formats serve (location_count 0) is offered too when
      // it was asked for by its name or ticker: it is recognized, and its maps draw the community
      // map's storefronts. (By an alternative name it would put an empty brand first in a list
      // of partial matches: "mart" is one of 愛買's names.)
      const named = found?.by === 'name' || found?.by === 'variant' || found?.by === 'ticker';
      if (found && b && (b.locationCount > 0 || named) && !results.some((r) => r.brand === found.name)) {
        results.unshift({ ...directoryEntryOf(b), match: 'exact' });
      }
    }
    if (results.length === 0 && TICKER_SHAPED.test(q.q)) {
      throw new ApiError('NOT_FOUND', `No brand or ticker matches "${q.q}".`, { suggestions: suggestionsFor(store, q.q) });
    }
    return { query: q.q, count: results.length, results };
  });
  return { listBrands: [free, listBrands], brandSummary: [free, brandSummary], searchBrands: [free, searchBrands] };
}
