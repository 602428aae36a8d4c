// The request schemas: the single source of request types, of validation and (later) of the
// OpenAPI document. Unknown fields are rejected: a misspelt filter ("contry") silently ignored
// would return the wrong data and charge for it.
import { z } from 'zod';
import { ApiError } from './errors.ts';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { DATA_DEFAULTS, DATA_FORMATS, HISTORY_INTERVALS, RENDER_DEFAULTS, STOREFRONT_KINDS } from '../native.ts';
import { TABLES_DIR } from '../paths.ts';
import { FORMATS } from './prices.ts';

/** The image themes: the keys of data/themes.json, which the renderer draws from. */
export const STYLES = Object.keys(JSON.parse(readFileSync(path.join(TABLES_DIR, 'themes.json'), 'utf8')) as Record<string, unknown>) as [string, ...string[]];
export const STOREFRONT_TYPES = STOREFRONT_KINDS;
export const MAX_IMAGE_SIDE = RENDER_DEFAULTS.maxSide;
export const MAX_TICKERS = 5;
/** The usage report's window: its longest, and its length when only `to` is given. */
export const MAX_WINDOW_DAYS = 366;
export const DEFAULT_WINDOW_DAYS = 30;

const hexColor = z.string().regex(/^#?[0-9a-fA-F]{6}$/, 'a 6-digit hex colour such as #1D4ED8');
const latitude = z.number().min(-90).max(90);
const longitude = z.number().min(-180).max(180);
const text = (max: number) => z.string().trim().min(1).max(max);
/** How a brand name is read in the country a request asks in: one wording for every schema. */
const NAMESAKE_RULE =
  'Asked in one country (country, or the country a state names; on a map, focus_country), a name whose brand has no storefront there is read as its namesake that has the most (Woolworths in AU is "Woolworths (Australia)"), echoed in X-Brand; a name given with its qualifier, and a ticker, are the brand they name.';
/** The rule as the change feed and the store-count history read it: a past counts. */
const NAMESAKE_RULE_IN_HISTORY = `${NAMESAKE_RULE} Here a brand that had storefronts in that country within the history the service keeps is still that brand (its closures there are its own).`;

/** ISO 8601 date and time, seconds and fraction optional, offset optional; each field in its
 * range (the published schema's pattern, so a client's validator refuses what the server does,
 * but for a day past its month's end). */
const ISO_DATE_TIME = /^(\d{4})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):([0-5]\d)(?::([0-5]\d)(?:\.\d{1,9})?)?(?:Z|z|[+-](?:[01]\d|2[0-3]):[0-5]\d)?$/;

/** The day exists in its month (2026-02-30 does not). */
function isCalendarDay(s: string): boolean {
  const m = ISO_DATE_TIME.exec(s);
  if (!m) return true; // the pattern's own message says what is wrong
  const [y, mo, d] = [1, 2, 3].map((i) => Number(m[i]));
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0-99 as 1900-1999.
  const day = new Date(0);
  day.setUTCFullYear(y!, mo! - 1, d!);
  return day.getUTCDate() === d;
}

/** `open_at`, on location-map and nearby. */
const OPEN_AT = z
  .string()
  .max(40)
  .regex(ISO_DATE_TIME, 'an ISO 8601 date and time, such as 2026-12-01T12:00 (each store\'s own time) or 2026-12-01T12:00:00+01:00 (one instant)')
  .refine(isCalendarDay, 'is not a day of its month')
  .optional()
  .describe(
    "Only stores open at this moment by their opening_hours. Without an offset (2026-12-01T12:00) it is each store's own wall-clock time; with one (Z, +09:00) it is one instant, read in each store's time zone (from its coordinates, daylight saving included). Stores without hours are left out and counted in hours_unknown (and X-Hours-Unknown).",
  );

const INCLUDE_HOURS_TEXT = `csv: adds ${DATA_DEFAULTS.csvHoursColumn} as a twelfth column after last_updated (the contract's CSV has eleven). JSON and GeoJSON rows always carry it.`;
const INCLUDE_HOURS = z.boolean().optional().describe(INCLUDE_HOURS_TEXT);

/** The location filters, shared by location-map's body and the change feed's query. */
const LOCATION_FILTERS = {
  country: z.string().regex(/^[A-Za-z]{2}$/, 'an ISO 3166-1 alpha-2 code').optional().describe('ISO 3166-1 alpha-2 country filter.'),
  state: text(100).optional().describe('A first-level subdivision: its ISO 3166-2 code without the country ("IL", "BY", "NSW", "13" for Tokyo) or its English name ("Bavaria"), case- and accent-insensitive; without `country`, US states first.'),
  city: text(200).optional().describe('Case-insensitive exact match on the city, by its own name or the English one (München or Munich, in Germany); with radius_km, the centre.'),
  postcode: text(20).optional().describe('Postcode filter (case and spaces ignored).'),
  radius_km: z.number().positive().max(20_000).optional().describe('Radius around the city centre, in km. Requires city.'),
  storefront_type: z.enum(STOREFRONT_TYPES).optional().describe('Only this kind of storefront.'),
};

export const LocationMapRequest = z
  .strictObject({
    brand: text(200).optional().describe(`Brand name, alias or stock ticker (case-insensitive). Required unless tickers is given. ${NAMESAKE_RULE}`),
    tickers: z.array(text(20)).min(1).max(MAX_TICKERS).optional().describe('Up to five tickers, used instead of brand: one marker colour per company.'),
    ...LOCATION_FILTERS,
    format: z.enum(FORMATS).default('json').describe('Response format.'),
    include_provenance: z.boolean().optional().describe('Adds source_types, confidence, storefront_type, alias_sources and last_verified (json, geojson).'),
    include_hours: INCLUDE_HOURS,
    open_at: OPEN_AT,
    style: z.enum(STYLES).default(RENDER_DEFAULTS.style).describe('Image theme.'),
    width: z.number().int().min(1).max(MAX_IMAGE_SIDE).default(1200).describe('Image width in pixels (before scale).'),
    height: z.number().int().min(1).max(MAX_IMAGE_SIDE).default(800).describe('Image height in pixels (before scale).'),
    scale: z.number().int().min(1).max(4).default(1).describe(`Pixel multiplier for print output; width x scale and height x scale must stay within ${MAX_IMAGE_SIDE}.`),
    dpi: z.number().int().min(72).max(600).default(RENDER_DEFAULTS.dpi).describe('Resolution written into the image metadata.'),
    marker_color: hexColor.optional().describe('Marker colour; the theme default otherwise.'),
    marker_colors: z.array(hexColor).min(1).max(MAX_TICKERS).optional().describe('One marker colour per ticker.'),
    marker_radius: z.number().min(0.5).max(64).optional().describe(`Marker radius in pixels at scale 1, from 0.5 (default ${RENDER_DEFAULTS.markerRadius}); drawn at least one image pixel in radius, its rim (the theme's) at most a third of it.`),
    bounds: z.tuple([latitude, longitude, latitude, longitude]).optional().describe('Explicit viewport [south, west, north, east]: south below north; west above east crosses the antimeridian, and -180 to 180 is every longitude (one meridian twice is refused). Does not filter data.'),
    center: z.tuple([latitude, longitude]).optional().describe('Viewport centre [lat, lng]; use with zoom.'),
    zoom: z.number().int().min(0).max(18).optional().describe('Viewport zoom, 0-18; use with center.'),
    focus_country: z.string().regex(/^([A-Za-z]{2}|auto)$/, 'an ISO 3166-1 alpha-2 code or "auto"').optional().describe('Draw this country as a filled shape with no basemap, and only its stores (without `country`, the focus country is the filter; "auto": the country most matching stores are in). Far-flung parts are framed insets along the bottom left (the US: Alaska at 0.35 scale and Hawaii, and Puerto Rico when the map has stores there: without `country`, a US focus map counts, prices and draws Puerto Rico\'s stores too).'),
    mainland_only: z.boolean().optional().describe('Focus map: the mainland alone, without insets for far-flung islands and territories.'),
    conus: z.boolean().optional().describe('Focus map of the US: the 48 contiguous states, without the Alaska, Hawaii and Puerto Rico insets.'),
    regions: z.array(text(10)).max(100).optional().describe('Focus map: admin-1 codes to outline.'),
    fill_color: hexColor.default(RENDER_DEFAULTS.focusFill).describe('Focus-map fill.'),
    outline_color: hexColor.default(RENDER_DEFAULTS.focusOutline).describe('Focus-map outline.'),
    outline_width: z.number().min(0).max(20).default(RENDER_DEFAULTS.focusOutlineWidth).describe('Focus-map outline width.'),
    background: z.union([hexColor, z.literal('transparent')]).optional().describe('Focus-map background; transparent in PNG only (JPEG falls back to white).'),
    heatmap: z.boolean().optional().describe('Heatmap rendering.'),
    include_legend: z.boolean().optional().describe('Legend for multi-company maps.'),
  })
  .superRefine((r, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    if (!r.brand && !r.tickers) issue('brand', 'brand is required unless tickers is given');
    if (r.brand && r.tickers) issue('tickers', 'give brand or tickers, not both');
    if (r.radius_km !== undefined && !r.city) issue('radius_km', 'radius_km requires city');
    if (r.width * r.scale > MAX_IMAGE_SIDE) issue('width', `width x scale must be at most ${MAX_IMAGE_SIDE}`);
    if (r.height * r.scale > MAX_IMAGE_SIDE) issue('height', `height x scale must be at most ${MAX_IMAGE_SIDE}`);
    if ((r.center === undefined) !== (r.zoom === undefined)) issue(r.center ? 'zoom' : 'center', 'center and zoom go together');
    if (r.bounds && r.bounds[0] >= r.bounds[2]) issue('bounds', 'south must be below north');
    // West above east crosses the antimeridian; one meridian twice is no width at all (and
    // read as crossing, the whole world): -180 to 180 is the one way to ask for every longitude.
    if (r.bounds && (r.bounds[1] - r.bounds[3]) % 360 === 0 && !(r.bounds[1] === -180 && r.bounds[3] === 180)) issue('bounds', 'west and east must be different meridians (-180 to 180 for the whole world)');
    if (r.marker_colors && (!r.tickers || r.marker_colors.length > r.tickers.length)) issue('marker_colors', 'one colour per ticker, and only with tickers');
    if ((r.mainland_only || r.conus || r.regions) && !r.focus_country) issue('focus_country', 'mainland_only, conus and regions need focus_country');
    if (r.conus && r.focus_country && !['us', 'auto'].includes(r.focus_country.toLowerCase())) issue('conus', 'conus applies to the US only');
    if (r.background && !r.focus_country) issue('background', 'background applies to focus maps (focus_country)');
    // background 'transparent' with jpeg is allowed: the contract says JPEG falls back to white.
  });

export type LocationMapRequest = z.infer<typeof LocationMapRequest>;

export const NearbyRequest = z
  .strictObject({
    brand: text(200).optional().describe('Brand name, alias or stock ticker (case-insensitive), read in the country the point is in: a name whose brand has no storefront there is its namesake that has the most (Woolworths beside Sydney is "Woolworths (Australia)"), echoed in X-Brand. Without brand and tickers: stores of any brand.'),
    tickers: z.array(text(20)).min(1).max(MAX_TICKERS).optional().describe('Up to five tickers, used instead of brand: the nearest stores of any of them.'),
    lat: latitude.describe('Latitude of the point, WGS 84 degrees.'),
    lng: longitude.describe('Longitude of the point, WGS 84 degrees.'),
    limit: z.number().int().min(1).max(DATA_DEFAULTS.nearbyMaxLimit).default(DATA_DEFAULTS.nearbyDefaultLimit).describe(`Stores to return at most, nearest first (1-${DATA_DEFAULTS.nearbyMaxLimit}).`),
    radius_km: z.number().positive().max(20_040).optional().describe('Only stores within this great-circle distance, in km.'),
    open_at: OPEN_AT.describe(`${OPEN_AT.description} The ${DATA_DEFAULTS.nearbyOpenScan} nearest stores of each brand asked for are looked at (of any brand: the ${DATA_DEFAULTS.nearbyOpenScan} nearest stores).`),
    format: z.enum(DATA_FORMATS).default('json').describe('Response format.'),
    include_provenance: z.boolean().optional().describe('Adds source_types, confidence, storefront_type, alias_sources and last_verified (json, geojson).'),
    include_hours: INCLUDE_HOURS,
  })
  .superRefine((r, ctx) => {
    if (r.brand && r.tickers) ctx.addIssue({ code: 'custom', path: ['tickers'], message: 'give brand or tickers, not both' });
  });

export type NearbyRequest = z.infer<typeof NearbyRequest>;

const { overlapMinBrands, overlapMaxBrands, overlapDefaultDistanceM, overlapMaxDistanceM } = DATA_DEFAULTS;

export const OverlapRequest = z
  .strictObject({
    brands: z.array(text(200)).min(overlapMinBrands).max(overlapMaxBrands).optional().describe(`${overlapMinBrands} to ${overlapMaxBrands} brand names or aliases (any case), of different companies; with country, each read as location-map's brand is. Give brands or tickers.`),
    tickers: z.array(text(20)).min(overlapMinBrands).max(overlapMaxBrands).optional().describe(`${overlapMinBrands} to ${overlapMaxBrands} stock tickers, used instead of brands.`),
    distance_m: z.number().positive().max(overlapMaxDistanceM).default(overlapDefaultDistanceM).describe(`Pairs of stores at most this far apart (great circle), in metres, up to ${overlapMaxDistanceM}.`),
    country: LOCATION_FILTERS.country.describe('ISO 3166-1 alpha-2: pairs whose first store (of the brand named earlier) is in this country.'),
    format: z.enum(FORMATS).default('json').describe('Response format: the pairs as data, or a map (png, jpeg) of the paired stores with a line between the two stores of each pair.'),
    include_provenance: z.boolean().optional().describe('Adds source_types, confidence, storefront_type, alias_sources and last_verified to both stores of each pair (json).'),
    width: LocationMapRequest.shape.width,
    height: LocationMapRequest.shape.height,
    style: LocationMapRequest.shape.style,
    marker_colors: z.array(hexColor).min(1).max(overlapMaxBrands).optional().describe('Map: one marker colour per brand or ticker, in order; the company palette otherwise.'),
    marker_radius: LocationMapRequest.shape.marker_radius,
    include_legend: z.boolean().optional().describe("Map: a legend of each brand's colour, name and paired stores."),
  })
  .superRefine((r, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    if (!r.brands && !r.tickers) issue('brands', 'brands or tickers is required');
    if (r.brands && r.tickers) issue('tickers', 'give brands or tickers, not both');
    const names = (r.brands ?? r.tickers ?? []).length;
    if (r.marker_colors && names && r.marker_colors.length > names) issue('marker_colors', `one colour per brand or ticker: ${r.marker_colors.length} given for ${names}`);
  });

/** The overlap fields that shape a map, refused with a data format (they would be ignored). */
export const OVERLAP_MAP_FIELDS = ['width', 'height', 'style', 'marker_colors', 'marker_radius', 'include_legend'] as const;

export type OverlapRequest = z.infer<typeof OverlapRequest>;

/** zod issues as the `details` of a 400: one entry per failing field. */
export function issueDetails(error: z.ZodError, whole = '(body)'): { field: string; message: string }[] {
  return error.issues.flatMap((i) =>
    // An unknown field is reported under its own name, not under the object holding it.
    i.code === 'unrecognized_keys'
      ? i.keys.map((k) => ({ field: [...i.path, k].join('.'), message: 'unknown field' }))
      : [{ field: i.path.join('.') || whole, message: i.message }],
  );
}

/** Failing fields named in a 400 at most: a body of 6,400 unknown fields gets an answer of a
 * few KB, not one longer than itself. */
export const MAX_DETAILS = 20;

/** INVALID_REQUEST naming the first MAX_DETAILS failing fields, in the message and in
 * `details`, and how many more there are. */
export function invalidRequest(what: 'request' | 'query', details: { field: string; message: string }[]): ApiError {
  const shown = details.slice(0, MAX_DETAILS);
  const more = details.length > shown.length ? `; and ${details.length - shown.length} more` : '';
  return new ApiError('INVALID_REQUEST', `Invalid ${what}: ${shown.map((d) => `${d.field}: ${d.message}`).join('; ')}${more}.`, { details: shown });
}

/** A request body checked against its schema: the parsed value, or INVALID_REQUEST naming the
 * failing fields in `details`. */
export function parseBody<S extends z.ZodType>(schema: S, raw: unknown): z.infer<S> {
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  throw invalidRequest('request', issueDetails(parsed.error));
}

// ---- query strings of the GET endpoints (values arrive as text; numbers are coerced).

const queryInt = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

export const BrandsQuery = z.strictObject({
  q: text(200).optional().describe('Case-insensitive substring of the brand name.'),
  limit: queryInt(1, 500).default(50).describe('Results per page, 1-500.'),
  offset: queryInt(0, 10_000_000).default(0).describe('Entries to skip.'),
  sort: z.enum(['count', 'name']).default('count').describe('count: most storefronts first (ties by name); name: A-Z in the Unicode root collation (CLDR), case and accents folded (Škoda among the S names).'),
});

export const SummaryQuery = z.strictObject({
  brand: text(200).describe('Brand name, alias or stock ticker.'),
});

export const SearchQuery = z.strictObject({
  q: text(100).describe('What has been typed so far: part of a brand name, or a ticker.'),
  limit: queryInt(1, 50).default(10).describe('Results, 1-50.'),
});

const isoTime = z.iso.datetime({ offset: true }).describe('ISO 8601 timestamp, e.g. 2026-11-01T00:00:00Z.');

export const UsageQuery = z.strictObject({
  from: isoTime.optional().describe(`Window start (default: ${DEFAULT_WINDOW_DAYS} days before \`to\`).`),
  to: isoTime.optional().describe('Window end (default: now).'),
});

export const ChangesQuery = z
  .strictObject({
    brand: text(200).describe(`Brand name, alias or stock ticker (case-insensitive). ${NAMESAKE_RULE_IN_HISTORY}`),
    since: z
      .union([z.iso.datetime({ offset: true }), z.iso.date()])
      .describe('The date to compare with: the snapshot in force then (the last refresh at or before it) against the serving one. An ISO 8601 timestamp or a date (midnight UTC); at most as old as the oldest snapshot the service keeps (the status endpoint\'s data.changes_since), and not after both the serving snapshot and the clock (400: nothing can have changed since then).'),
    ...LOCATION_FILTERS,
    radius_km: z.coerce.number().positive().max(20_000).optional().describe('Radius around the city centre, in km. Requires city.'),
    format: z.enum(DATA_FORMATS).default('json').describe('Response format.'),
    include_provenance: z.enum(['true', 'false']).optional().describe('true adds source_types, confidence, storefront_type, alias_sources and last_verified to each row (json, geojson).'),
    include_hours: z.enum(['true', 'false']).optional().describe(`true: ${INCLUDE_HOURS_TEXT}`),
  })
  .superRefine((r, ctx) => {
    if (r.radius_km !== undefined && !r.city) ctx.addIssue({ code: 'custom', path: ['radius_km'], message: 'radius_km requires city' });
  });

export type ChangesQuery = z.infer<typeof ChangesQuery>;

/** The formats GET /api/v1/history answers in: a table of periods has no geometry. */
export const HISTORY_FORMATS = ['json', 'csv'] as const satisfies readonly (typeof DATA_FORMATS)[number][];

const MONTH_LABEL = /^(\d{4})-(0[1-9]|1[0-2])$/;
const QUARTER_LABEL = /^(\d{4})-[Qq]([1-4])$/;

/**
 * The instants a history bound covers, [start, end) in unix seconds: a month (`2026-07`), a
 * quarter (`2026-Q3`), a date (that day, UTC) or a timestamp (that second). `from` reads its
 * start, `to` its last second, each then standing for the period of the series holding it.
 */
export function historyBound(text: string): { start: number; end: number } {
  // setUTCFullYear, not Date.UTC: that reads the years 0-99 as 1900-1999.
  const utc = (y: number, m: number) => new Date(0).setUTCFullYear(y, m - 1, 1) / 1000;
  let m = MONTH_LABEL.exec(text);
  if (m) return { start: utc(+m[1], +m[2]), end: utc(+m[1], +m[2] + 1) };
  m = QUARTER_LABEL.exec(text);
  if (m) return { start: utc(+m[1], 3 * +m[2] - 2), end: utc(+m[1], 3 * +m[2] + 1) };
  const start = Math.floor(Date.parse(text) / 1000);
  return { start, end: start + (text.length === 10 ? 86_400 : 1) };
}

const historyBoundText = (which: string) =>
  z
    .union([z.string().regex(MONTH_LABEL), z.string().regex(QUARTER_LABEL), z.iso.date(), z.iso.datetime({ offset: true })], {
      error: 'a month (2026-07), a quarter (2026-Q3), a date or an ISO 8601 timestamp',
    })
    .optional()
    .describe(`The ${which} period: a month (2026-07), a quarter (2026-Q3), or a date or ISO 8601 timestamp within it; ${which === 'first' ? 'default the period of the oldest snapshot kept (the status endpoint\'s data.changes_since; earlier is 400)' : 'default the period of the serving snapshot (later is 400)'}.`);

export const HistoryQuery = z
  .strictObject({
    brand: text(200).optional().describe(`Brand name, alias or stock ticker (case-insensitive). Give brand or ticker. ${NAMESAKE_RULE_IN_HISTORY}`),
    ticker: text(20).optional().describe("A stock ticker (case-insensitive): its company's brand. Give brand or ticker."),
    ...LOCATION_FILTERS,
    radius_km: z.coerce.number().positive().max(20_000).optional().describe('Radius around the city centre, in km. Requires city.'),
    interval: z.enum(HISTORY_INTERVALS).default('quarter').describe('Calendar months or quarters (UTC).'),
    from: historyBoundText('first'),
    to: historyBoundText('last'),
    format: z.enum(HISTORY_FORMATS).default('json').describe('Response format.'),
  })
  .superRefine((r, ctx) => {
    if (!r.brand && !r.ticker) ctx.addIssue({ code: 'custom', path: ['brand'], message: 'brand or ticker is required' });
    if (r.brand && r.ticker) ctx.addIssue({ code: 'custom', path: ['ticker'], message: 'give brand or ticker, not both' });
    if (r.radius_km !== undefined && !r.city) ctx.addIssue({ code: 'custom', path: ['radius_km'], message: 'radius_km requires city' });
    if (r.from && r.to && historyBound(r.from).start >= historyBound(r.to).end) ctx.addIssue({ code: 'custom', path: ['from'], message: 'is after to' });
  });

export type HistoryQuery = z.infer<typeof HistoryQuery>;
export type BrandsQuery = z.infer<typeof BrandsQuery>;
export type SearchQuery = z.infer<typeof SearchQuery>;
export type UsageQuery = z.infer<typeof UsageQuery>;
