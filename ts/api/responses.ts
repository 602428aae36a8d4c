// Response bodies as zod schemas: the routes' return types are inferred from them and the
// OpenAPI document and agent-docs are generated from them, so the three never disagree.
import { z } from 'zod';
import { ERRORS } from './errors.ts';
import { SOURCE_TYPES } from '../config.ts';
import { CONFIDENCE_FLOOR } from '../native.ts';

export const SOURCE_TYPE = z.enum(SOURCE_TYPES);

export const Suggestion = z.object({ brand: z.string(), location_count: z.number().int() }).describe('A close match for an unrecognized name.');

export const ErrorBody = z
  .object({
    error: z.string().describe('What went wrong, for people.'),
    code: z.enum(Object.keys(ERRORS) as [keyof typeof ERRORS, ...(keyof typeof ERRORS)[]]).describe('Stable machine-readable code.'),
    suggestions: z.array(Suggestion).optional().describe('Typo-tolerant close matches (not-found cases).'),
    details: z.array(z.object({ field: z.string(), message: z.string() })).optional().describe('The failing fields (INVALID_REQUEST).'),
  })
  .describe('Every error, on every endpoint, has this shape.');

const nullableText = z.string().nullable();
const brandWikidata = z.string().nullable().describe("The brand's Wikidata id (Q…), as the name-suggestion-index, OpenStreetMap's brand:wikidata and Overture's brand.wikidata carry it; null where none is known.");

export const Location = z
  .object({
    id: z.string().describe('Stable id: loc_ and 16 hex digits; a store keeps it across data refreshes.'),
    brand: z.string().optional().describe('Present when the response covers several brands.'),
    brand_wikidata: brandWikidata,
    name: z.string(),
    lat: z.number(),
    lng: z.number(),
    country: z.string().describe('ISO 3166-1 alpha-2.'),
    state: nullableText.describe('ISO 3166-2 subdivision code without the country (USPS code in the US).'),
    city: nullableText,
    address: nullableText,
    postcode: nullableText,
    phone: nullableText,
    opening_hours: nullableText.describe("OpenStreetMap's opening_hours syntax (e.g. \"Mo-Fr 08:00-20:00; Sa 09:00-18:00\"), in its parser's normal form, from the source that saw the store last among those giving hours (OpenStreetMap, AllThePlaces; a dated source before OpenStreetMap's undated extracts); null where none does."),
    last_updated: z.string().nullable().describe('ISO 8601 time of the last source refresh that saw the store.'),
    source_types: z.array(SOURCE_TYPE).nullable().optional().describe('With include_provenance.'),
    confidence: z.number().nullable().optional().describe('With include_provenance: 0-1.'),
    storefront_type: z.string().nullable().optional().describe('With include_provenance.'),
    alias_sources: z
      .array(z.object({ source_type: SOURCE_TYPE, source_id: z.string() }))
      .nullable()
      .optional()
      .describe('With include_provenance: every source record merged into this store.'),
    last_verified: z.string().nullable().optional().describe('With include_provenance.'),
  })
  .describe('One storefront.');

/** With open_at: the moment as read, and the stores it could not judge. */
const OPEN_AT_MEMBERS = {
  open_at: z.string().optional().describe("With open_at: the moment as read (seconds added; an offset only where one was given)."),
  hours_unknown: z.number().int().min(0).optional().describe('With open_at: stores within the other filters left out because no source gives their opening hours (or the hours do not say).'),
};

export const LocationMapJson = z.object({
  brand: z.string().describe('Canonical name (names joined for several tickers).'),
  region: z.string().describe('The filter as text, e.g. "US / IL / Chicago" or "worldwide"; a state code several countries share, given without a country, stands alone ("13": Tokyo\'s and others\').'),
  count: z.number().int(),
  coverage_confidence: z
    .number()
    .min(0)
    .max(1)
    .nullable()
    .describe(
      'The estimated share of the brand\'s real storefronts within the filters that this response holds, from how the independent sources overlap (capture-recapture; docs/COVERAGE.md). null where it cannot be estimated: fewer than 5 storefronts, a single source, or with open_at (it estimates every storefront, open or not).',
    ),
  ...OPEN_AT_MEMBERS,
  locations: z.array(Location),
});

// ---- nearest stores

const distance = z.number().min(0).describe('Great-circle distance from the point, in metres (to the decimetre).');

export const NearbyLocation = Location.extend({ distance_m: distance }).describe('A storefront near the point.');

export const NearbyJson = z.object({
  brand: z.string().describe('Canonical name (names joined for several tickers; "any brand" without brand or tickers).'),
  region: z.string().describe('The point and radius as text, e.g. "within 5 km of 47.61, -122.33" or "near 47.61, -122.33".'),
  count: z.number().int(),
  ...OPEN_AT_MEMBERS,
  locations: z.array(NearbyLocation).describe('Nearest first; equal distances in a stable order. Each row carries brand unless the request named one brand.'),
});

export const NearbyGeoJson = z
  .object({
    type: z.literal('FeatureCollection'),
    ...OPEN_AT_MEMBERS,
    features: z.array(
      z.object({
        type: z.literal('Feature'),
        id: z.string().describe('The location id (loc_ and 16 hex digits).'),
        geometry: z.object({ type: z.literal('Point'), coordinates: z.tuple([z.number().describe('Longitude.'), z.number().describe('Latitude.')]).describe('[lng, lat].') }),
        properties: Location.omit({ id: true, lat: true, lng: true }).extend({ brand: z.string().describe('Canonical brand name.'), distance_m: distance }),
      }),
    ),
  })
  .describe('format geojson: the stores as Point features, nearest first, distance_m among their properties.');

// ---- overlap

const perBrand = z.record(z.string(), z.number().int()).describe("Each brand's stores with at least one store of another of the brands within the distance.");
const branded = Location.extend({ brand: z.string().describe('Canonical brand name.') });

export const OverlapJson = z.object({
  brands: z.array(z.string()).describe('Canonical names, in the order asked.'),
  distance_m: z.number(),
  region: z.string().describe('The country filter, or "worldwide".'),
  pair_count: z.number().int(),
  stores_with_partner: perBrand,
  by_country: z
    .array(z.object({ country: z.string(), pairs: z.number().int(), stores_with_partner: perBrand }))
    .describe("By the first store's country; most pairs first, ties by code."),
  pairs: z
    .array(z.object({ distance_m: distance, a: branded.describe('The store of the brand named earlier.'), b: branded }))
    .describe('Every pair once: by brand pair in the order asked, then by the first store, then nearest first.'),
});

export const OverlapGeoJson = z
  .object({
    type: z.literal('FeatureCollection'),
    features: z.array(
      z.object({
        type: z.literal('Feature'),
        geometry: z.object({ type: z.literal('LineString'), coordinates: z.array(z.array(z.number()).length(2)).length(2).describe('[[lng, lat] of a, [lng, lat] of b].') }),
        properties: z.object({
          distance_m: distance,
          a_id: z.string(),
          a_brand: z.string(),
          a_name: z.string(),
          b_id: z.string(),
          b_brand: z.string(),
          b_name: z.string(),
        }),
      }),
    ),
  })
  .describe('format geojson: one LineString per pair, from the first store to the second.');

// ---- the change feed

const seen = (what: string) => z.string().describe(`ISO 8601: ${what}`);

export const OpenedLocation = Location.extend({ first_seen: seen('the as-of of the refresh from which the store has been served without a break.') }).describe(
  'A store served now that the snapshot in force at `since` did not serve, as served now.',
);

export const ClosedLocation = Location.extend({ last_seen: seen('the as-of of the last refresh that served the store.') }).describe(
  'A store the snapshot in force at `since` served and the serving one does not, as it was last served.',
);

export const ChangesJson = z.object({
  brand: z.string().describe('Canonical name.'),
  region: z.string().describe('The filter as text, e.g. "US / IL / Chicago" or "worldwide".'),
  since: seen('the as-of of the snapshot in force at the requested `since` (the last refresh at or before it).'),
  until: seen('the as-of of the serving snapshot.'),
  opened_count: z.number().int(),
  closed_count: z.number().int(),
  opened: z.array(OpenedLocation),
  closed: z.array(ClosedLocation),
});

export const HistoryPeriod = z
  .object({
    period: z.string().describe('The month (2026-07) or quarter (2026-Q3).'),
    start: z.string().describe('ISO 8601: its first instant (UTC).'),
    end: z.string().describe('ISO 8601: the first instant after it.'),
    stores: z.number().int().describe("Stores served at the period's end: by the last snapshot dated before it (for the period still running, the serving one)."),
    opened: z.number().int().describe('Stores the snapshots dated within the period added (the oldest snapshot kept is the base, not openings).'),
    closed: z.number().int().describe('Stores the snapshots dated within the period removed.'),
  })
  .describe("One period of a brand's store counts.");

export const HistoryJson = z.object({
  brand: z.string().describe('Canonical name.'),
  brand_wikidata: brandWikidata,
  ticker: z.string().nullable().describe("The brand's stock ticker, null when it has none."),
  company: z.string().nullable().describe("The listed company the ticker is (the brand's parent), where the brand has a ticker."),
  region: z.string().describe('The filter as text, e.g. "US / TX" or "worldwide".'),
  interval: z.enum(['month', 'quarter']),
  begins: z.string().describe('ISO 8601 as-of of the oldest snapshot the history keeps: the first period counts the changes from then.'),
  until: z.string().describe('ISO 8601 as-of of the serving snapshot.'),
  series: z.array(HistoryPeriod).describe('The periods, oldest first.'),
});

/** A change as a GeoJSON Point feature: the row's fields (less id, lat, lng) as properties. */
const changeProperties = Location.omit({ id: true, lat: true, lng: true }).extend({
  brand: z.string().describe('Canonical brand name.'),
  change: z.enum(['opened', 'closed']),
  first_seen: OpenedLocation.shape.first_seen.optional().describe('Opened stores: ISO 8601, served without a break since.'),
  last_seen: ClosedLocation.shape.last_seen.optional().describe('Closed stores: ISO 8601, last served.'),
});

export const ChangesGeoJson = z
  .object({
    type: z.literal('FeatureCollection'),
    since: ChangesJson.shape.since,
    until: ChangesJson.shape.until,
    features: z.array(
      z.object({
        type: z.literal('Feature'),
        id: z.string().describe('The location id (loc_ and 16 hex digits).'),
        geometry: z.object({ type: z.literal('Point'), coordinates: z.tuple([z.number().describe('Longitude.'), z.number().describe('Latitude.')]).describe('[lng, lat].') }),
        properties: changeProperties,
      }),
    ),
  })
  .describe('format geojson: the opened stores, then the closed ones, as Point features with `change` in their properties; since and until as foreign members.');

const company = z.string().nullable().describe('The listed company the ticker is (the brand\'s parent), where the brand has a ticker.');

export const DirectoryEntry = z.object({
  brand: z.string(),
  brand_wikidata: brandWikidata,
  ticker: z.string().nullable(),
  company,
  location_count: z.number().int().describe(`Storefronts the data formats serve (confidence at least ${CONFIDENCE_FLOOR}).`),
});

export const BrandsPage = z.object({
  total: z.number().int().describe('All matches.'),
  limit: z.number().int(),
  offset: z.number().int(),
  count: z.number().int().describe('Entries in this page.'),
  brands: z.array(DirectoryEntry),
});

export const BrandSummary = z.object({
  brand: z.string().describe('Canonical name.'),
  brand_wikidata: brandWikidata,
  ticker: z.string().nullable(),
  company,
  matched_by: z.enum(['name', 'variant', 'alt_name', 'ticker']).describe('How the query was recognized.'),
  location_count: z.number().int().describe('Live count of storefronts the data formats serve.'),
  country_count: z.number().int(),
  top_countries: z.array(z.object({ country: z.string(), location_count: z.number().int() })).describe('Up to five, most storefronts first.'),
  sample: z.array(Location).describe('Up to five storefronts, one per country of the top countries first.'),
  snapshot_version: z.string(),
});

export const SearchResults = z.object({
  query: z.string(),
  count: z.number().int(),
  results: z.array(
    DirectoryEntry.extend({
      match: z.enum(['ticker', 'exact', 'prefix', 'substring']).describe('Ranked in this order, then by location_count; the brand the query resolves to as a brand field (summary, location-map) comes first whatever its match.'),
    }),
  ),
});

export const Usage = z.object({
  api_key_id: z.string(),
  billing_model: z.literal('credits'),
  range: z
    .object({ from: z.string(), to: z.string(), days: z.number().int().describe('The window\'s length in days, rounded up.') })
    .describe('The window, from and to both included (to the millisecond).'),
  summary: z.object({
    total_requests: z.number().int(),
    error_count: z.number().int(),
    error_rate_percent: z.number(),
    total_credits_charged: z.number().int(),
  }),
  by_status: z.record(z.string(), z.number().int()).describe('HTTP status (as text) to count; "unknown" where none was recorded.'),
  by_format: z.record(z.string(), z.number().int()).describe('Requested format to count; "unknown" where none was recorded.'),
  by_day: z
    .array(z.object({ date: z.string().describe('YYYY-MM-DD (UTC).'), requests: z.number().int(), errors: z.number().int(), credits: z.number().int() }))
    .describe('Every UTC calendar day the window touches, oldest first: from 2026-11-01T00:00Z to 2026-12-01T00:00Z is 30 days long and touches 31, the last only at its first millisecond.'),
});

export const Status = z.object({
  status: z.enum(['ok', 'degraded']),
  elapsed_ms: z.number().int(),
  timestamp: z.string(),
  api: z.object({ ok: z.boolean(), version: z.string() }),
  renderer: z.object({ ok: z.boolean(), elapsed_ms: z.number().int(), detail: z.record(z.string(), z.unknown()) }),
  database: z
    .object({
      ok: z.boolean(),
      kind: z.enum(['sqlite', 'postgres']).describe('The ledger: one SQLite file, or PostgreSQL shared by several nodes.'),
      latency_ms: z.number().int().nullable().describe('One round trip; null when it failed.'),
      error: z.string().optional().describe('Why the ledger could not be reached.'),
    })
    .describe('The ledger (keys, balances, usage): keyed requests answer 503 while it is down.'),
  data: z.object({
    brand_summary: z.object({ last_refreshed_at: z.string().nullable(), stale: z.boolean().nullable() }),
    snapshot_version: z.string(),
    rows: z.number().int(),
    changes_since: z.string().nullable().describe('The earliest `since` GET /api/v1/changes answers (the as-of of the oldest snapshot kept); null when the data folder keeps no history.'),
  }),
  flags: z.object({ use_multi_source_import: z.boolean(), disabled_sources: z.array(SOURCE_TYPE) }),
});

export const Health = z.object({ status: z.literal('ok'), snapshot_version: z.string(), rows: z.number().int(), synthetic: z.boolean() });
