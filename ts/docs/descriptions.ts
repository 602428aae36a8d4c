// The prose the generated documents share: what the service is, when each error code happens,
// the tags, and example requests. Everything else in the documents comes from OPERATIONS and the
// zod schemas; the `satisfies` clauses make the compiler ask for an entry for every new code or
// tag.
import type { ErrorCode } from '../api/errors.ts';
import type { Operation } from '../api/operations.ts';
import { LOW_CREDIT_THRESHOLD, tiersText } from '../api/prices.ts';
import { DEFAULT_CONFIG } from '../config.ts';
import { PLAN_RULES } from '../api/plans.ts';

export const TITLE = 'storemap';

export { API_VERSION } from '../paths.ts';

export const SUMMARY =
  "A store-location data API: give it a brand name, alias or stock ticker (or up to five tickers) and get that brand's storefronts as JSON, CSV or GeoJSON, or drawn on a map image (PNG, JPEG); plus a public brand directory, per-key usage and a status endpoint.";

/** When each error code is returned (the registry in errors.ts has the message it carries). */
export const ERROR_CASES = {
  INVALID_JSON: 'The request body is not valid JSON in UTF-8: bytes that are not UTF-8, or an escape that leaves half a surrogate pair ("\\ud800"), are refused too.',
  INVALID_REQUEST: 'A field or query parameter is missing, of the wrong type, out of range, unknown, or breaks a rule between fields (`details` lists every failing field); a POST with a query string (its fields go in the JSON body); an HTTP/1.1 request without a Host header; or a map whose markers would cover more pixels than the work limit.',
  UNAUTHORIZED: 'No x-api-key header, or an unknown, malformed or revoked key.',
  INSUFFICIENT_CREDITS: "The key's balance is below the cost of the request; it is known before any work, so nothing is drawn, serialized or charged. A key with less than 1 credit is refused before the request's work is even counted: nothing costs less.",
  TRIAL_EXPIRED: `A trial key more than ${PLAN_RULES.trial.trialDays} days old.`,
  DATA_ACCESS_FORBIDDEN: 'A trial or standard key asked for json, csv or geojson (json is the default format); such keys must request png or jpeg where the endpoint draws maps. Nearby and the change feed answer data formats only, so they need an enterprise or internal key.',
  NOT_FOUND: 'No brand or ticker matches (with `suggestions` of close names), no location matches the filters, or the path does not exist.',
  METHOD_NOT_ALLOWED: 'The path exists but not with this method (the Allow header lists the methods it has).',
  PAYLOAD_TOO_LARGE: `The request body is over the size limit (${DEFAULT_CONFIG.maxBodyBytes / 1024} KiB by default), counted after gzip or deflate decoding.`,
  UNSUPPORTED_MEDIA_TYPE: 'The body is not sent as application/json, or has a Content-Encoding other than gzip or deflate.',
  HEADERS_TOO_LARGE: "The request's headers are over Node's limit (16 KiB); the connection is closed after the answer.",
  RATE_LIMITED: "Over the key's request rate (on the free endpoints: the client address's); retry after the seconds in Retry-After.",
  INTERNAL: 'A bug on the server; the service keeps serving.',
  NOT_IMPLEMENTED: 'A feature this server cannot provide: map images on a server without the renderer, or the change feed on a data folder that keeps no history yet.',
  TIMEOUT: `The request ran past the time limit (${DEFAULT_CONFIG.requestTimeoutMs / 1000} seconds by default) and was stopped; it is not charged.`,
  SERVICE_BUSY: 'The query pool and its queue are full, or this key already holds its fair share of them, or too many answers wait for slow clients, or the ledger is busy or cannot be written; nothing was charged. Retry after the Retry-After seconds.',
} as const satisfies Record<ErrorCode, string>;

export const TAGS = {
  Locations: "A brand's storefronts, as data or as a map.",
  Brands: 'The brand directory, brand summaries and autocomplete. Public and free.',
  Account: "The calling key's own usage.",
  Service: 'Health and status for monitoring.',
  Documentation: 'This reference, in the forms people and agents read.',
} as const satisfies Record<Operation['tag'], string>;

const TRIAL = PLAN_RULES.trial;

export const AUTH = `Keyed endpoints take the API key in the \`x-api-key\` header: \`sm_live_\` followed by 24 hexadecimal characters. Keys stay server-side. Trial and standard keys get map images only; data formats (json, csv, geojson) need an enterprise or internal key. Trial keys last ${TRIAL.trialDays} days, start with ${TRIAL.defaultCredits} credits and get at most ${TRIAL.maxLocations} locations per request.`;

export function creditsText(): string {
  return `Successful requests to the five charged endpoints (location-map, nearby, overlap, changes and history) are charged by the rows in the answer (locations, stores, pairs of stores, changes, periods): ${tiersText()}; map images cost twice that. A key with less than 1 credit is refused at once. Internal keys are never debited. Responses carry X-Credits-Low: true when the balance falls below ${LOW_CREDIT_THRESHOLD}. Brand directory, summaries, search, usage and status cost nothing.`;
}

export const PLANS_TEXT = Object.entries(PLAN_RULES)
  .map(
    ([plan, r]) =>
      `${plan}: ${r.dataFormats ? 'every format' : 'png and jpeg only'}${r.unlimited ? ', never debited' : `, ${r.defaultCredits.toLocaleString('en-US')} credits to start`}${r.trialDays ? `, ${r.trialDays} days` : ''}${r.maxLocations ? `, at most ${r.maxLocations} locations per request` : ''}`,
  )
  .join('; ');

export const ATTRIBUTION_TEXT =
  'Every location-map response carries X-Attribution naming the four data sources and their licences; the full notices are at /ATTRIBUTION.txt. The shipped dataset is synthetic: real brands, tickers, cities and borders, invented store positions, addresses and phone numbers.';

/** Example requests, by operation id: a JSON body, or query parameters. They use brands every
 * dataset the service builds contains, so they also serve as working requests for contract tests. */
export const EXAMPLES: Record<string, { summary: string; value: Record<string, unknown> }[]> = {
  locationMap: [
    { summary: 'Every US Starbucks as JSON, with provenance', value: { brand: 'Starbucks', country: 'US', include_provenance: true } },
    { summary: 'Starbucks in California as CSV', value: { brand: 'starbucks', country: 'US', state: 'CA', format: 'csv' } },
    { summary: "McDonald's in the US as GeoJSON", value: { brand: "McDonald's", country: 'US', format: 'geojson' } },
    { summary: 'Two tickers on one PNG map, one colour each', value: { tickers: ['SBUX', 'MCD'], format: 'png', width: 800, height: 500, marker_colors: ['#00704A', '#DA291C'] } },
    { summary: 'A JPEG focus map of the contiguous US', value: { brand: 'Starbucks', format: 'jpeg', style: 'dark', focus_country: 'US', conus: true, width: 600, height: 400 } },
    { summary: 'US Shell stations open at 03:30, each at its own local time', value: { brand: 'Shell', country: 'US', open_at: '2026-12-01T03:30' } },
  ],
  nearby: [
    { summary: 'The 10 Starbucks nearest Pike Place Market', value: { brand: 'Starbucks', lat: 47.6097, lng: -122.3422 } },
    { summary: 'Any store within 500 m, as GeoJSON', value: { lat: 48.8566, lng: 2.3522, radius_km: 0.5, limit: 50, format: 'geojson' } },
    { summary: 'The 10 Starbucks nearest Pike Place Market open at 7 a.m. Seattle time', value: { brand: 'Starbucks', lat: 47.6097, lng: -122.3422, open_at: '2026-12-01T07:00:00-08:00' } },
  ],
  overlap: [
    { summary: "Starbucks with a McDonald's within 200 m, in the US", value: { tickers: ['SBUX', 'MCD'], distance_m: 200, country: 'US' } },
  ],
  changes: [{ summary: 'US Starbucks opened and closed since the start of November 2026', value: { brand: 'Starbucks', since: '2026-11-01', country: 'US' } }],
  history: [
    { summary: "Starbucks' US store count by quarter, with openings and closings", value: { brand: 'Starbucks', country: 'US', interval: 'quarter' } },
    { summary: 'By ticker, month by month, as CSV', value: { ticker: 'SBUX', interval: 'month', format: 'csv' } },
  ],
  listBrands: [{ summary: 'Brands containing "coffee", A-Z', value: { q: 'coffee', sort: 'name', limit: 20 } }],
  brandSummary: [{ summary: 'A ticker resolves to its brand', value: { brand: 'SBUX' } }],
  searchBrands: [{ summary: 'Autocomplete "star"', value: { q: 'star', limit: 5 } }],
  usage: [{ summary: 'November 2026', value: { from: '2026-11-01T00:00:00Z', to: '2026-12-01T00:00:00Z' } }],
};
