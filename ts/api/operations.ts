// Every operation of the API in one list: method, path, auth, the zod schemas of its input
// and output, its response headers and the error codes it can return. The routes validate
// with these schemas, and the OpenAPI document and agent-docs are generated from this list,
// so there is no second hand-written description to drift.
import type { z } from 'zod';
import { ATTRIBUTION } from './headers.ts';
import { CONFIDENCE_FLOOR, DATA_DEFAULTS, RENDER_DEFAULTS } from '../native.ts';
import { LOW_CREDIT_THRESHOLD, tiersText } from './prices.ts';
import { MAX_BALANCE, PLAN_RULES } from './plans.ts';
import type { ErrorCode } from './errors.ts';
import { BrandSummary, BrandsPage, ChangesGeoJson, ChangesJson, Health, HistoryJson, LocationMapJson, NearbyGeoJson, NearbyJson, OverlapGeoJson, OverlapJson, SearchResults, Status, Usage } from './responses.ts';
import { BrandsQuery, ChangesQuery, HistoryQuery, LocationMapRequest, NearbyRequest, OverlapRequest, SearchQuery, SummaryQuery, UsageQuery } from './schemas.ts';

/** How every CSV answer writes a cell a spreadsheet would run (crates/core/src/format/csv.rs). */
const CSV_FORMULAS =
  'A text cell a spreadsheet would take for a formula (its first character =, +, -, @, a tab or a carriage return, unless it is a signed number such as an E.164 phone number) is written with a leading apostrophe, so that it opens as text; JSON and GeoJSON carry the text as it is.';

/** A response header: its name, what it means, and whether every success carries it. */
export interface HeaderDoc {
  name: string;
  description: string;
  schema: 'string' | 'integer' | 'number' | 'boolean';
  required: boolean;
}

/**
 * One success response: a JSON schema, or opaque content of a media type (text, images).
 * `answers` names the request's `format` value this content is the answer to, where the
 * operation has one: the route sends that media type, so the two cannot disagree.
 */
export type Content = ({ type: string; schema: z.ZodType } | { type: string; format: 'binary' | 'text'; description: string }) & { answers?: string };

/** Every operation's id: the route modules hand their handlers in under these names. */
export type OperationId =
  | 'locationMap'
  | 'changes'
  | 'history'
  | 'nearby'
  | 'overlap'
  | 'listBrands'
  | 'brandSummary'
  | 'searchBrands'
  | 'usage'
  | 'status'
  | 'health'
  | 'openapi'
  | 'agentDocs'
  | 'llms'
  | 'home'
  | 'playground'
  | 'playgroundScript'
  | 'attribution';

export interface Operation {
  id: OperationId;
  method: 'get' | 'post';
  path: string;
  tag: 'Locations' | 'Brands' | 'Account' | 'Service' | 'Documentation';
  summary: string;
  description: string;
  /** Needs the x-api-key header. */
  auth: boolean;
  query?: z.ZodObject;
  body?: z.ZodType;
  success: { status: number; description: string; content: Content[]; headers: HeaderDoc[] };
  errors: ErrorCode[];
}

const RATE_HEADERS: HeaderDoc[] = [
  { name: 'X-RateLimit-Limit', description: 'The burst: requests that may be made at once from full (the token bucket\'s size). The bucket refills at the sustained rate, 20 a second by default (STOREMAP_RATE_LIMIT; on the free endpoints STOREMAP_FREE_RATE_LIMIT per client address).', schema: 'integer', required: true },
  { name: 'X-RateLimit-Remaining', description: 'Requests left in the current burst.', schema: 'integer', required: true },
  { name: 'X-RateLimit-Reset', description: 'Seconds until the burst is full again.', schema: 'integer', required: true },
];

/** Every charged answer's headers: what it holds, and what it cost. */
const CHARGED_HEADERS: HeaderDoc[] = [
  {
    name: 'X-Attribution',
    description: `Always all four sources, alphabetical: "${ATTRIBUTION}". A map image drawn over a street basemap's tiles adds "; basemap: " and the tiles' attribution (non-ASCII text percent-encoded).`,
    schema: 'string',
    required: true,
  },
  { name: 'X-Data-Sources', description: 'Comma-separated sources that contributed the returned rows, alphabetical.', schema: 'string', required: true },
  { name: 'X-Brand', description: 'Canonical brand name (a ticker is echoed as its brand). Non-ASCII text, and %, percent-encoded UTF-8: decodeURIComponent gives the name.', schema: 'string', required: true },
  { name: 'X-Region', description: 'The filter as text. Non-ASCII text, and %, percent-encoded UTF-8: decodeURIComponent gives the text.', schema: 'string', required: true },
  { name: 'X-Credits-Charged', description: 'Credits this request cost.', schema: 'integer', required: true },
  { name: 'X-Credits-Remaining', description: `Credits left on the key. An internal key, which is never debited, reports ${MAX_BALANCE} (2^53 − 1, the most a balance can hold).`, schema: 'integer', required: true },
  { name: 'X-Credits-Low', description: `true when the balance is below ${LOW_CREDIT_THRESHOLD} credits (absent otherwise).`, schema: 'boolean', required: false },
  { name: 'X-Render-Time', description: 'Server time spent on the query or render, e.g. "12ms".', schema: 'string', required: true },
];

const LEGEND_HEADER: HeaderDoc = {
  name: 'X-Legend',
  description: `With include_legend on an image: "drawn", or "omitted" when it is not: the image is too small for it (the legend would cover more than ${Math.round(RENDER_DEFAULTS.maxLegendShare * 100)} % of it, or not fit), or the server has no label font. It goes in the first corner clear of a focus map's insets: lower left, lower right, upper left, upper right.`,
  schema: 'string',
  required: false,
};

const LOCATION_MAP_HEADERS: HeaderDoc[] = [
  { name: 'X-Location-Count', description: 'Locations in the response, which is what is priced. For images, the storefronts the map is of: bounds and a view do not filter them, so some may lie outside the picture; a trial key\'s map, the markers drawn (at most 50).', schema: 'integer', required: true },
  ...CHARGED_HEADERS,
  { name: 'X-Cached', description: 'true when the image came from the image cache (still charged).', schema: 'boolean', required: true },
  LEGEND_HEADER,
  { name: 'X-Coverage-Confidence', description: 'coverage_confidence: the estimated share of the storefronts within the filters that the response holds (for images, the markers drawn), in [0, 1]; absent where it cannot be estimated.', schema: 'number', required: false },
  { name: 'X-Hours-Unknown', description: 'With open_at (data formats): stores within the other filters left out because their opening hours are unknown.', schema: 'integer', required: false },
  { name: 'X-Trial-Cap-Applied', description: `true when a trial key got only ${PLAN_RULES.trial.maxLocations} of the locations, spread evenly over them (not the southernmost ones).`, schema: 'boolean', required: false },
  { name: 'X-Total-Available', description: 'Locations before the trial cap.', schema: 'integer', required: false },
  ...RATE_HEADERS,
];

const NEARBY_HEADERS: HeaderDoc[] = [
  { name: 'X-Location-Count', description: 'Stores in the response.', schema: 'integer', required: true },
  { name: 'X-Hours-Unknown', description: 'With open_at: stores passed over, nearer than the farthest returned (of the nearest looked at), because their opening hours are unknown.', schema: 'integer', required: false },
  ...CHARGED_HEADERS,
  ...RATE_HEADERS,
];

const OVERLAP_HEADERS: HeaderDoc[] = [
  { name: 'X-Location-Count', description: 'Pairs in the response, or drawn on the map (what the price is reckoned on).', schema: 'integer', required: true },
  LEGEND_HEADER,
  ...CHARGED_HEADERS,
  ...RATE_HEADERS,
];

const CHANGES_HEADERS: HeaderDoc[] = [
  { name: 'X-Location-Count', description: 'Rows in the response: opened plus closed stores (what the price is reckoned on).', schema: 'integer', required: true },
  { name: 'X-Opened-Count', description: 'Stores opened.', schema: 'integer', required: true },
  { name: 'X-Closed-Count', description: 'Stores closed.', schema: 'integer', required: true },
  { name: 'X-Changes-Since', description: 'ISO 8601 as-of of the snapshot in force at the requested since.', schema: 'string', required: true },
  { name: 'X-Changes-Until', description: 'ISO 8601 as-of of the serving snapshot.', schema: 'string', required: true },
  ...CHARGED_HEADERS,
  ...RATE_HEADERS,
];

const HISTORY_HEADERS: HeaderDoc[] = [
  { name: 'X-Location-Count', description: 'Periods in the response (what the price is reckoned on).', schema: 'integer', required: true },
  { name: 'X-History-Begins', description: 'ISO 8601 as-of of the oldest snapshot the history keeps.', schema: 'string', required: true },
  { name: 'X-History-Until', description: 'ISO 8601 as-of of the serving snapshot.', schema: 'string', required: true },
  ...CHARGED_HEADERS,
  ...RATE_HEADERS,
];

const DECLARED: Operation[] = [
  {
    id: 'locationMap',
    method: 'post',
    path: '/api/v1/location-map',
    tag: 'Locations',
    summary: "A brand's storefronts as JSON, CSV, GeoJSON or a map image",
    description:
      `Every storefront of one brand (name, alias or ticker) or up to five tickers, filtered by country, state, city, postcode, radius and storefront type (filters combine with AND), in one response without pagination. Data formats serve rows with confidence at least ${CONFIDENCE_FLOOR} and need an enterprise or internal key; images (png, jpeg) draw every reconciled row and are open to every plan at twice the credits. Credits by result count: ${tiersText()}; charged only on success.`,
    auth: true,
    body: LocationMapRequest,
    success: {
      status: 200,
      description: 'The locations, in the requested format.',
      content: [
        { answers: 'json', type: 'application/json', schema: LocationMapJson },
        { answers: 'csv', type: 'text/csv', format: 'text', description: `RFC 4180 CSV: ${DATA_DEFAULTS.csvColumns.join(',')} (and ${DATA_DEFAULTS.csvHoursColumn} with include_hours). ${CSV_FORMULAS}` },
        { answers: 'geojson', type: 'application/geo+json', format: 'text', description: 'A GeoJSON FeatureCollection of Points ([lng, lat]) with the JSON fields as properties, and coverage_confidence (with open_at, also open_at and hours_unknown) as foreign members of the collection.' },
        { answers: 'png', type: 'image/png', format: 'binary', description: 'A map image (DPI in pHYs).' },
        { answers: 'jpeg', type: 'image/jpeg', format: 'binary', description: 'A map image (DPI in the JFIF header).' },
      ],
      headers: LOCATION_MAP_HEADERS,
    },
    errors: [
      'INVALID_JSON',
      'INVALID_REQUEST',
      'UNAUTHORIZED',
      'INSUFFICIENT_CREDITS',
      'TRIAL_EXPIRED',
      'DATA_ACCESS_FORBIDDEN',
      'NOT_FOUND',
      'PAYLOAD_TOO_LARGE',
      'UNSUPPORTED_MEDIA_TYPE',
      'RATE_LIMITED',
      'INTERNAL',
      'NOT_IMPLEMENTED',
      'TIMEOUT',
      'SERVICE_BUSY',
    ],
  },
  {
    id: 'overlap',
    method: 'post',
    path: '/api/v1/overlap',
    tag: 'Locations',
    summary: 'Where two to five chains sit close to each other',
    description: `For ${DATA_DEFAULTS.overlapMinBrands} to ${DATA_DEFAULTS.overlapMaxBrands} brands or tickers: every pair of their storefronts of different brands within distance_m (default ${DATA_DEFAULTS.overlapDefaultDistanceM} m, at most ${DATA_DEFAULTS.overlapMaxDistanceM}), with, per brand, how many of its stores have such a partner, overall and per country ("how many Starbucks have a Dunkin' within 200 m?"). Rows are data rows (confidence at least ${CONFIDENCE_FLOOR}); needs an enterprise or internal key. Credits by pairs, like location-map by rows: ${tiersText('pairs')}; maps cost twice that; no pair is 404 and costs nothing; more than ${DATA_DEFAULTS.overlapMaxPairs.toLocaleString('en-US')} pairs is 400 (narrow it with country or a shorter distance).`,
    auth: true,
    body: OverlapRequest,
    success: {
      status: 200,
      description: 'The pairs and their counts, in the requested format.',
      content: [
        { answers: 'json', type: 'application/json', schema: OverlapJson },
        { answers: 'csv', type: 'text/csv', format: 'text', description: `RFC 4180 CSV, one line per pair: distance_m, then ${DATA_DEFAULTS.csvColumns.map((c) => `a_${c}`).join(',')}, then the same with b_. ${CSV_FORMULAS}` },
        { answers: 'geojson', type: 'application/geo+json', schema: OverlapGeoJson },
        { answers: 'png', type: 'image/png', format: 'binary', description: "A map of the paired stores, each brand in its colour, a line between the two stores of each pair." },
        { answers: 'jpeg', type: 'image/jpeg', format: 'binary', description: 'The same map as a JPEG.' },
      ],
      headers: OVERLAP_HEADERS,
    },
    errors: ['INVALID_JSON', 'INVALID_REQUEST', 'UNAUTHORIZED', 'INSUFFICIENT_CREDITS', 'TRIAL_EXPIRED', 'DATA_ACCESS_FORBIDDEN', 'NOT_FOUND', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'RATE_LIMITED', 'INTERNAL', 'NOT_IMPLEMENTED', 'TIMEOUT', 'SERVICE_BUSY'],
  },
  {
    id: 'changes',
    method: 'get',
    path: '/api/v1/changes',
    tag: 'Locations',
    summary: "A brand's stores opened and closed since a date",
    description:
      `The change feed: the stores of one brand (name, alias or ticker) under location-map's filters that opened (served now, not then) and closed (served then, not now) between the snapshot in force at \`since\` and the serving one, each row as location-map's plus when it was first or last seen. Rows are data rows (confidence at least ${CONFIDENCE_FLOOR}); stores keep their ids across refreshes, so a refresh that only moves a store reports no change. Closures show with the sources' lag (docs/CHANGES.md). Needs an enterprise or internal key. Credits by opened plus closed rows, like a data request of that size: ${tiersText('rows')}; an answer with no changes costs the smallest tier.`,
    auth: true,
    query: ChangesQuery,
    success: {
      status: 200,
      description: 'The changes, in the requested format.',
      content: [
        { answers: 'json', type: 'application/json', schema: ChangesJson },
        { answers: 'csv', type: 'text/csv', format: 'text', description: `RFC 4180 CSV: ${DATA_DEFAULTS.csvColumns.join(',')} (and ${DATA_DEFAULTS.csvHoursColumn} with include_hours=true),change,seen; change is opened or closed, seen the first or last time seen (ISO 8601); opened rows first. ${CSV_FORMULAS}` },
        { answers: 'geojson', type: 'application/geo+json', schema: ChangesGeoJson },
      ],
      headers: CHANGES_HEADERS,
    },
    errors: ['INVALID_REQUEST', 'UNAUTHORIZED', 'INSUFFICIENT_CREDITS', 'TRIAL_EXPIRED', 'DATA_ACCESS_FORBIDDEN', 'NOT_FOUND', 'RATE_LIMITED', 'INTERNAL', 'NOT_IMPLEMENTED', 'TIMEOUT', 'SERVICE_BUSY'],
  },
  {
    id: 'history',
    method: 'get',
    path: '/api/v1/history',
    tag: 'Locations',
    summary: "A brand's store count by month or quarter, with openings and closings",
    description:
      `Store counts over time for one brand (name, alias or ticker; or \`ticker\` alone) under location-map's filters: for each calendar month or quarter (UTC) from \`from\` to \`to\`, the stores served at its end (by the last snapshot dated before it) and the stores the snapshots dated within it opened and closed, from the same history as the change feed (ids survive refreshes, so a store that only moved is no change, and each store counts where it is now, or was last served). Rows are data rows (confidence at least ${CONFIDENCE_FLOOR}). The oldest snapshot kept is where the history begins (the status endpoint's data.changes_since): its period counts the changes after it, and a range before it is 400. Needs an enterprise or internal key. Credits by periods, like a data request of that many rows: ${tiersText('periods')}.`,
    auth: true,
    query: HistoryQuery,
    success: {
      status: 200,
      description: 'The series, in the requested format.',
      content: [
        { answers: 'json', type: 'application/json', schema: HistoryJson },
        { answers: 'csv', type: 'text/csv', format: 'text', description: 'RFC 4180 CSV: period,start,end,stores,opened,closed; oldest first.' },
      ],
      headers: HISTORY_HEADERS,
    },
    errors: ['INVALID_REQUEST', 'UNAUTHORIZED', 'INSUFFICIENT_CREDITS', 'TRIAL_EXPIRED', 'DATA_ACCESS_FORBIDDEN', 'NOT_FOUND', 'RATE_LIMITED', 'INTERNAL', 'NOT_IMPLEMENTED', 'TIMEOUT', 'SERVICE_BUSY'],
  },
  {
    id: 'nearby',
    method: 'post',
    path: '/api/v1/nearby',
    tag: 'Locations',
    summary: 'The stores nearest a point',
    description: `The nearest storefronts of one brand (name, alias or ticker), of up to five tickers, or of any brand to a point, nearest first, each row as location-map's plus distance_m (great-circle metres); within radius_km when given. Rows are data rows (confidence at least ${CONFIDENCE_FLOOR}); needs an enterprise or internal key. Credits by result count, like location-map: ${tiersText()}; no store within the radius is 404 and costs nothing.`,
    auth: true,
    body: NearbyRequest,
    success: {
      status: 200,
      description: 'The stores, nearest first, in the requested format.',
      content: [
        { answers: 'json', type: 'application/json', schema: NearbyJson },
        { answers: 'csv', type: 'text/csv', format: 'text', description: `RFC 4180 CSV: ${DATA_DEFAULTS.csvColumns.join(',')} (and ${DATA_DEFAULTS.csvHoursColumn} with include_hours),distance_m; nearest first. ${CSV_FORMULAS}` },
        { answers: 'geojson', type: 'application/geo+json', schema: NearbyGeoJson },
      ],
      headers: NEARBY_HEADERS,
    },
    errors: ['INVALID_JSON', 'INVALID_REQUEST', 'UNAUTHORIZED', 'INSUFFICIENT_CREDITS', 'TRIAL_EXPIRED', 'DATA_ACCESS_FORBIDDEN', 'NOT_FOUND', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'RATE_LIMITED', 'INTERNAL', 'TIMEOUT', 'SERVICE_BUSY'],
  },
  {
    id: 'listBrands',
    method: 'get',
    path: '/api/v1/brands',
    tag: 'Brands',
    summary: 'The brand directory, searchable and paged',
    description: 'Brands with at least one storefront the data formats serve. Public and free.',
    auth: false,
    query: BrandsQuery,
    success: { status: 200, description: 'One page of the directory.', content: [{ type: 'application/json', schema: BrandsPage }], headers: [] },
    errors: ['INVALID_REQUEST', 'RATE_LIMITED', 'INTERNAL'],
  },
  {
    id: 'brandSummary',
    method: 'get',
    path: '/api/v1/brands/summary',
    tag: 'Brands',
    summary: "A brand's live location count and a five-row sample",
    description: 'Resolves names, aliases and tickers like location-map. Public and free.',
    auth: false,
    query: SummaryQuery,
    success: { status: 200, description: 'The summary.', content: [{ type: 'application/json', schema: BrandSummary }], headers: [] },
    errors: ['INVALID_REQUEST', 'NOT_FOUND', 'RATE_LIMITED', 'INTERNAL'],
  },
  {
    id: 'searchBrands',
    method: 'get',
    path: '/api/v1/brands/search',
    tag: 'Brands',
    summary: 'Autocomplete over brand names and tickers',
    description:
      'Ranked matches: the exact ticker, the exact name, names starting with the query, then names containing it; ties by location count. A ticker-shaped query (1-5 capital letters) that matches nothing answers 404 NOT_FOUND with similar canonical names. Public and free.',
    auth: false,
    query: SearchQuery,
    success: { status: 200, description: 'The matches.', content: [{ type: 'application/json', schema: SearchResults }], headers: [] },
    errors: ['INVALID_REQUEST', 'NOT_FOUND', 'RATE_LIMITED', 'INTERNAL'],
  },
  {
    id: 'usage',
    method: 'get',
    path: '/api/v1/usage',
    tag: 'Account',
    summary: "This key's usage: requests, errors and credits by status, format and day",
    description: 'Only the calling key is ever reported. The window is at most 366 days. Costs no credits.',
    auth: true,
    query: UsageQuery,
    success: { status: 200, description: 'The usage report.', content: [{ type: 'application/json', schema: Usage }], headers: RATE_HEADERS },
    errors: ['INVALID_REQUEST', 'UNAUTHORIZED', 'RATE_LIMITED', 'INTERNAL'],
  },
  {
    id: 'status',
    method: 'get',
    path: '/api/v1/status',
    tag: 'Service',
    summary: 'Service health for monitoring',
    description:
      'Always 200 while the service can answer; a failing subsystem shows as status "degraded" in the body. Computed at most every 30 seconds (Cache-Control: public, max-age=30). CORS open.',
    auth: false,
    success: {
      status: 200,
      description: 'The status.',
      content: [{ type: 'application/json', schema: Status }],
      headers: [
        { name: 'Cache-Control', description: 'public, max-age=30', schema: 'string', required: true },
        { name: 'Access-Control-Allow-Origin', description: '*', schema: 'string', required: true },
      ],
    },
    // No per-address limit: the contract has it always answered (http/free-limit.ts).
    errors: [],
  },
  {
    id: 'health',
    method: 'get',
    path: '/healthz',
    tag: 'Service',
    summary: 'Liveness probe',
    description: 'Answers as soon as the snapshot is loaded.',
    auth: false,
    success: { status: 200, description: 'Alive.', content: [{ type: 'application/json', schema: Health }], headers: [] },
    errors: [],
  },
  // ---- documentation: generated once from this list at start (ts/docs/), public and free.
  {
    id: 'openapi',
    method: 'get',
    path: '/api/openapi.yaml',
    tag: 'Documentation',
    summary: 'This API as an OpenAPI 3.1 document',
    description: 'Every operation, parameter, response schema, header and error code, generated from the same list the routes are built from.',
    auth: false,
    success: { status: 200, description: 'The OpenAPI document.', content: [{ type: 'application/yaml', format: 'text', description: 'OpenAPI 3.1 in YAML.' }], headers: [] },
    errors: ['RATE_LIMITED'],
  },
  {
    id: 'agentDocs',
    method: 'get',
    path: '/api/agent-docs',
    tag: 'Documentation',
    summary: 'The whole API reference as one flat markdown document',
    description: 'For agents and people: every endpoint, parameter (type, default, constraints), response field, header and error code, with auth, credits and limits.',
    auth: false,
    success: { status: 200, description: 'The reference.', content: [{ type: 'text/markdown', format: 'text', description: 'CommonMark.' }], headers: [] },
    errors: ['RATE_LIMITED'],
  },
  {
    id: 'llms',
    method: 'get',
    path: '/llms.txt',
    tag: 'Documentation',
    summary: 'Discovery file for language models (the llms.txt convention)',
    description: 'The service name, a summary and links to the reference, the OpenAPI document, the licence notices, the status and the brand directory.',
    auth: false,
    success: { status: 200, description: 'The llms.txt file.', content: [{ type: 'text/plain', format: 'text', description: 'Markdown following https://llmstxt.org.' }], headers: [] },
    errors: ['RATE_LIMITED'],
  },
  {
    id: 'home',
    method: 'get',
    path: '/',
    tag: 'Documentation',
    summary: 'The playground (the same page as /playground)',
    description: 'A browser page to try the API: see /playground.',
    auth: false,
    success: { status: 200, description: 'The page.', content: [{ type: 'text/html', format: 'text', description: 'HTML.' }], headers: [
        { name: 'Content-Security-Policy', description: 'Nothing is loaded from another origin.', schema: 'string', required: true },
        { name: 'Cache-Control', description: 'public, max-age=300', schema: 'string', required: true },
      ] },
    errors: ['RATE_LIMITED'],
  },
  {
    id: 'playground',
    method: 'get',
    path: '/playground',
    tag: 'Documentation',
    summary: 'A browser playground for location-map, nearby and overlap',
    description: 'One static page: a form for every field of the request (built from this document\'s schemas), brand autocomplete, an API key kept in the tab\'s session storage only, the answer as an image, a table or text, the curl command for it and the response headers. No external resources.',
    auth: false,
    success: { status: 200, description: 'The page.', content: [{ type: 'text/html', format: 'text', description: 'HTML.' }], headers: [
        { name: 'Content-Security-Policy', description: 'Nothing is loaded from another origin.', schema: 'string', required: true },
        { name: 'Cache-Control', description: 'public, max-age=300', schema: 'string', required: true },
      ] },
    errors: ['RATE_LIMITED'],
  },
  {
    id: 'playgroundScript',
    method: 'get',
    path: '/playground.js',
    tag: 'Documentation',
    summary: "The playground page's script",
    description: 'Compiled from web/playground.ts when the server starts.',
    auth: false,
    success: { status: 200, description: 'The script.', content: [{ type: 'text/javascript', format: 'text', description: 'JavaScript.' }], headers: [
        { name: 'Content-Security-Policy', description: 'Nothing is loaded from another origin.', schema: 'string', required: true },
        { name: 'Cache-Control', description: 'public, max-age=300', schema: 'string', required: true },
      ] },
    errors: ['RATE_LIMITED'],
  },
  {
    id: 'attribution',
    method: 'get',
    path: '/ATTRIBUTION.txt',
    tag: 'Documentation',
    summary: 'Full licence notices for the data',
    description: 'The licences of the four data sources (OpenStreetMap, Overture Maps, Foursquare Open Source Places, AllThePlaces) and of the reference data the default dataset is built from.',
    auth: false,
    success: { status: 200, description: 'The notices.', content: [{ type: 'text/plain', format: 'text', description: 'Plain text.' }], headers: [] },
    errors: ['RATE_LIMITED'],
  },
];

/** What Node answers on any path before a route runs (a request whose headers are over its
 * limit): every operation may get it, so each lists it. */
const ANY_REQUEST_ERRORS: ErrorCode[] = ['HEADERS_TOO_LARGE'];

export const OPERATIONS: Operation[] = DECLARED.map((op) => ({ ...op, errors: [...op.errors, ...ANY_REQUEST_ERRORS.filter((c) => !op.errors.includes(c))] }));

/** The Content-Type header a media type is sent with: text and JSON say their charset. */
export function wireType(type: string): string {
  if (type.includes(';')) return type;
  if (type === 'application/json' || type === 'application/yaml' || type.startsWith('text/')) return `${type}; charset=utf-8`;
  return type;
}

/** The Content-Type an operation answers a request `format` with (throws if it lists none). */
export function contentTypeFor(id: OperationId, format: string): string {
  const content = OPERATIONS.find((o) => o.id === id)?.success.content.find((c) => c.answers === format);
  if (!content) throw new Error(`operation ${id} documents no content for format ${format}`);
  return wireType(content.type);
}

/** The operation's path: for code that must name one (tests, logs), never a second literal. */
export function pathOf(id: OperationId): string {
  const op = OPERATIONS.find((o) => o.id === id);
  if (!op) throw new Error(`no operation ${id}`);
  return op.path;
}

/** Whether an operation debits credits: the ones that can answer 402 for too few. */
export function isCharged(op: Operation): boolean {
  return op.errors.includes('INSUFFICIENT_CREDITS');
}
